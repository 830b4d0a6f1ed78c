/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every datatype constructor (and its large-count form where one exists) sent from the last
 * rank to rank 0: the receiver takes the message once as plain ints (a different type with the
 * same signature) and checks the ints arrive in type-map order, and once with the same type
 * and checks that exactly the type's bytes changed. Also the size, extent and the envelope's
 * combiner of each type, and MPI_Type_get_contents of a vector.
 */
#include "mtest.h"

#include <string.h>

#define N 64

static int rank, size;

/* The ints of `type` (count 2) in type-map order, computed by packing on the sender. */
static void exchange(MPI_Datatype type, int combiner, const char *what)
{
    int src[N], dst[N], flat[N], expect[N], tsize = 0, n, comb;
    MPI_Count ni, na, nc, nt;
    int peer_send = 0, peer_recv = size - 1, pos = 0;
    MPI_Status status;

    MPI_Type_commit(&type);
    MPI_Type_size(type, &tsize);
    n = 2 * tsize / (int)sizeof(int);
    MPI_Type_get_envelope_c(type, &ni, &na, &nc, &nt, &comb);
    MTEST_CHECK(comb == combiner, "%s: combiner %d, expected %d", what, comb, combiner);
    for (int i = 0; i < N; i++) {
        src[i] = 1000 + i;
    }
    MPI_Pack(src, 2, type, expect, (int)sizeof(expect), &pos, MPI_COMM_SELF);
    MTEST_CHECK(pos == 2 * tsize, "%s: packed %d bytes, size is %d", what, pos, tsize);
    if (rank == peer_recv) {
        MPI_Send(src, 2, type, peer_send, 1, MPI_COMM_WORLD);
        MPI_Send(src, 2, type, peer_send, 2, MPI_COMM_WORLD);
    }
    if (rank == peer_send) {
        int count = -1;

        MPI_Recv(flat, N, MPI_INT, peer_recv, 1, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_INT, &count);
        MTEST_CHECK(count == n, "%s: received %d ints, expected %d", what, count, n);
        for (int i = 0; i < n; i++) {
            if (!MTEST_CHECK(flat[i] == expect[i], "%s: int %d is %d, expected %d", what, i,
                             flat[i], expect[i])) {
                break;
            }
        }
        for (int i = 0; i < N; i++) {
            dst[i] = -1;
        }
        MPI_Recv(dst, 2, type, peer_recv, 2, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, type, &count);
        MTEST_CHECK(count == 2, "%s: MPI_Get_count gave %d items", what, count);
        /* every int now either is -1 or holds its own source value */
        int changed = 0;
        for (int i = 0; i < N; i++) {
            if (dst[i] != -1) {
                changed++;
                MTEST_CHECK(dst[i] == src[i], "%s: int %d is %d", what, i, dst[i]);
            }
        }
        MTEST_CHECK(changed <= n && changed > 0, "%s: %d ints changed", what, changed);
    }
    MPI_Type_free(&type);
}

int main(int argc, char **argv)
{
    MPI_Datatype t, inner;
    MPI_Aint lb, extent;
    int bl[3] = {2, 1, 3}, disp[3] = {5, 0, 9}, sizes[2] = {4, 5}, subs[2] = {2, 3},
        starts[2] = {1, 1};
    MPI_Aint hdisp[3] = {20, 0, 36};

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Type_contiguous(3, MPI_INT, &t);
    exchange(t, MPI_COMBINER_CONTIGUOUS, "contiguous");
    MPI_Type_vector(3, 2, -3, MPI_INT, &t);
    MPI_Type_get_extent(t, &lb, &extent);
    MTEST_CHECK(lb == -6 * (MPI_Aint)sizeof(int) && extent == 8 * (MPI_Aint)sizeof(int),
                "vector with negative stride: lb %ld extent %ld", (long)lb, (long)extent);
    {
        int ints[3] = {0};
        MPI_Aint addrs[1];
        MPI_Datatype types[1];

        MPI_Type_get_contents(t, 3, 0, 1, ints, addrs, types);
        MTEST_CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == -3 && types[0] == MPI_INT,
                    "vector contents %d %d %d", ints[0], ints[1], ints[2]);
    }
    MPI_Type_free(&t);
    MPI_Type_vector(3, 2, 4, MPI_INT, &t);
    exchange(t, MPI_COMBINER_VECTOR, "vector");
    MPI_Type_vector_c(3, 2, 4, MPI_INT, &t);
    exchange(t, MPI_COMBINER_VECTOR, "vector_c");
    MPI_Type_create_hvector(2, 3, 20, MPI_INT, &t);
    exchange(t, MPI_COMBINER_HVECTOR, "hvector");
    MPI_Type_indexed(3, bl, disp, MPI_INT, &t);
    exchange(t, MPI_COMBINER_INDEXED, "indexed");
    MPI_Type_create_hindexed(3, bl, hdisp, MPI_INT, &t);
    exchange(t, MPI_COMBINER_HINDEXED, "hindexed");
    MPI_Type_create_indexed_block(3, 2, disp, MPI_INT, &t);
    exchange(t, MPI_COMBINER_INDEXED_BLOCK, "indexed_block");
    MPI_Type_create_hindexed_block(3, 1, hdisp, MPI_INT, &t);
    exchange(t, MPI_COMBINER_HINDEXED_BLOCK, "hindexed_block");
    {
        MPI_Datatype types[2] = {MPI_INT, MPI_INT};
        int sbl[2] = {1, 2};
        MPI_Aint sdisp[2] = {12, 0};

        MPI_Type_create_struct(2, sbl, sdisp, types, &t);
        exchange(t, MPI_COMBINER_STRUCT, "struct");
    }
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &t);
    MPI_Type_get_extent(t, &lb, &extent);
    MTEST_CHECK(lb == 0 && extent == 20 * (MPI_Aint)sizeof(int), "subarray extent %ld",
                (long)extent);
    exchange(t, MPI_COMBINER_SUBARRAY, "subarray C");
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_FORTRAN, MPI_INT, &t);
    exchange(t, MPI_COMBINER_SUBARRAY, "subarray Fortran");
    {
        int g[2] = {4, 6}, dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, 2}, ps[2] = {2, 1}, dsize = 0;

        MPI_Type_create_darray(2, 1, 2, g, dist, darg, ps, MPI_ORDER_C, MPI_INT, &t);
        MPI_Type_size(t, &dsize);
        MTEST_CHECK(dsize == 12 * (int)sizeof(int), "darray size %d", dsize);
        exchange(t, MPI_COMBINER_DARRAY, "darray");
    }
    MPI_Type_vector(2, 1, 3, MPI_INT, &inner);
    MPI_Type_create_resized(inner, 0, 4 * sizeof(int), &t);
    MPI_Type_free(&inner); /* t keeps what it needs */
    exchange(t, MPI_COMBINER_RESIZED, "resized");
    MPI_Type_contiguous(2, MPI_INT, &inner);
    MPI_Type_dup(inner, &t);
    MPI_Type_free(&inner);
    exchange(t, MPI_COMBINER_DUP, "dup");
    return mtest_finalize(0);
}
