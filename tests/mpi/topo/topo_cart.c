/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Cartesian topologies on every process count: a 2-D grid from MPI_Dims_create, periodic in
 * one dimension, its queries (Topo_test, Cartdim_get, Cart_get, Cart_coords, Cart_rank with
 * periodic wrap), Cart_shift (neighbours and MPI_PROC_NULL at the open edges), a message
 * exchange along the shift, Cart_sub rows and columns, a grid smaller than the communicator
 * (the others get MPI_COMM_NULL), Cart_map, and MPI_Comm_dup keeping the topology.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, size, type, nd;
    MPI_Comm cart, dup, row, col, small;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Topo_test(MPI_COMM_WORLD, &type);
    MTEST_CHECK(type == MPI_UNDEFINED, "MPI_COMM_WORLD has topology %d", type);

    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart);
    MTEST_CHECK(cart != MPI_COMM_NULL, "no Cartesian communicator");
    MPI_Topo_test(cart, &type);
    MTEST_CHECK(type == MPI_CART, "Topo_test gives %d, not MPI_CART", type);
    MPI_Cartdim_get(cart, &nd);
    MTEST_CHECK(nd == 2, "Cartdim_get gives %d", nd);
    int crank, gdims[2], gper[2], coords[2], c2[2];
    MPI_Comm_rank(cart, &crank);
    MPI_Cart_get(cart, 2, gdims, gper, coords);
    MTEST_CHECK(gdims[0] == dims[0] && gdims[1] == dims[1] && gper[0] == 1 && gper[1] == 0,
                "Cart_get gives dims %dx%d periods %d,%d", gdims[0], gdims[1], gper[0], gper[1]);
    MTEST_CHECK(coords[0] == crank / dims[1] && coords[1] == crank % dims[1],
                "rank %d has coordinates (%d,%d)", crank, coords[0], coords[1]);
    for (int r = 0; r < size; r++) {
        int back;
        MPI_Cart_coords(cart, r, 2, c2);
        MPI_Cart_rank(cart, c2, &back);
        MTEST_CHECK(back == r, "Cart_rank(Cart_coords(%d)) = %d", r, back);
    }
    /* periodic wrap in dimension 0 */
    int wrap[2] = {coords[0] - dims[0], coords[1]}, w;
    MPI_Cart_rank(cart, wrap, &w);
    MTEST_CHECK(w == crank, "wrapped coordinates give rank %d, not %d", w, crank);

    int src, dst;
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    int up = ((coords[0] + 1) % dims[0]) * dims[1] + coords[1];
    int down = ((coords[0] - 1 + dims[0]) % dims[0]) * dims[1] + coords[1];
    MTEST_CHECK(src == down && dst == up, "shift dim 0: %d,%d expected %d,%d", src, dst, down, up);
    MPI_Cart_shift(cart, 1, 1, &src, &dst);
    MTEST_CHECK(src == (coords[1] == 0 ? MPI_PROC_NULL : crank - 1), "shift dim 1 source %d", src);
    MTEST_CHECK(dst == (coords[1] == dims[1] - 1 ? MPI_PROC_NULL : crank + 1),
                "shift dim 1 dest %d", dst);
    /* data along the open dimension: MPI_PROC_NULL ends just do nothing */
    int in = -1;
    MPI_Sendrecv(&crank, 1, MPI_INT, dst, 0, &in, 1, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE);
    MTEST_CHECK(in == (src == MPI_PROC_NULL ? -1 : src), "received %d from %d", in, src);

    /* rows (keep dimension 1) and columns (keep dimension 0) */
    MPI_Cart_sub(cart, (int[]){0, 1}, &row);
    MPI_Cart_sub(cart, (int[]){1, 0}, &col);
    int rsize, rrank, csize, crank2, rdims[1], rper[1], rco[1];
    MPI_Comm_size(row, &rsize);
    MPI_Comm_rank(row, &rrank);
    MPI_Comm_size(col, &csize);
    MPI_Comm_rank(col, &crank2);
    MTEST_CHECK(rsize == dims[1] && rrank == coords[1], "row: size %d rank %d", rsize, rrank);
    MTEST_CHECK(csize == dims[0] && crank2 == coords[0], "col: size %d rank %d", csize, crank2);
    MPI_Cart_get(col, 1, rdims, rper, rco);
    MTEST_CHECK(rdims[0] == dims[0] && rper[0] == 1 && rco[0] == coords[0],
                "column Cart_get %d %d %d", rdims[0], rper[0], rco[0]);
    int sum = 0;
    MPI_Allreduce(&crank, &sum, 1, MPI_INT, MPI_SUM, row);
    int first = coords[0] * dims[1];
    MTEST_CHECK(sum == dims[1] * first + dims[1] * (dims[1] - 1) / 2, "row sum %d", sum);
    MPI_Comm none;
    MPI_Cart_sub(cart, (int[]){0, 0}, &none);
    MPI_Cartdim_get(none, &nd);
    int nsize;
    MPI_Comm_size(none, &nsize);
    MTEST_CHECK(nd == 0 && nsize == 1, "empty sub-grid: %d dims, size %d", nd, nsize);
    MPI_Comm_free(&none);

    /* dup keeps the topology */
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &type);
    MTEST_CHECK(type == MPI_CART, "dup has topology %d", type);
    MPI_Cart_get(dup, 2, gdims, gper, c2);
    MTEST_CHECK(gdims[0] == dims[0] && c2[1] == coords[1], "dup's grid differs");
    MPI_Comm_free(&dup);

    /* a 1-D ring over all but the last process */
    int n1 = size > 1 ? size - 1 : 1, p1 = 1, newrank;
    MPI_Cart_map(MPI_COMM_WORLD, 1, &n1, &p1, &newrank);
    MTEST_CHECK(newrank == (rank < n1 ? rank : MPI_UNDEFINED), "Cart_map gives %d", newrank);
    MPI_Cart_create(MPI_COMM_WORLD, 1, &n1, &p1, 0, &small);
    if (rank < n1) {
        MTEST_CHECK(small != MPI_COMM_NULL, "rank %d has no ring", rank);
        if (small != MPI_COMM_NULL) {
            MPI_Cart_shift(small, 0, 2, &src, &dst);
            MTEST_CHECK(dst == (rank + 2) % n1 && src == ((rank - 2) % n1 + n1) % n1,
                        "ring shift by 2: %d,%d", src, dst);
            MPI_Comm_free(&small);
        }
    } else {
        MTEST_CHECK(small == MPI_COMM_NULL, "rank %d outside the ring got a communicator", rank);
    }

    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    MPI_Comm_free(&cart);
    return mtest_finalize(mtest_error_count());
}
