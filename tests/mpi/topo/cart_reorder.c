/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Cart_create with reorder = 1 places the processes of a node on one row of the grid. The
 * parent communicator interleaves the nodes (its order is by rank on the node, then by node),
 * so keeping the parent's order would spread every row over several nodes. With N nodes of K
 * processes (mpiexec --ppn K on one host), the grid is N x K and, on Manifold, each row must sit
 * on one node, and MPI_Cart_map must give each process the rank MPI_Cart_create gave it. Any
 * MPI: the grid is a permutation of the parent, and reorder = 0 keeps the parent's order.
 */
#include "mtest.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    MPI_Comm node, perm, cart, plain;
    int wrank, size, local, nlocal, node_id, nnodes = 0, uniform, crank, prank, mapped, flag;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_size(node, &nlocal);
    MPI_Allreduce(&wrank, &node_id, 1, MPI_INT, MPI_MIN, node);
    flag = local == 0;
    MPI_Allreduce(&flag, &nnodes, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&nlocal, &uniform, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    uniform = uniform * nnodes == size;

    /* nodes interleaved: by rank on the node, then by world rank */
    MPI_Comm_split(MPI_COMM_WORLD, 0, local * size + wrank, &perm);
    MPI_Comm_rank(perm, &prank);

    int dims[2] = {uniform ? nnodes : 1, uniform ? size / nnodes : size}, periods[2] = {0, 1};
    MPI_Cart_create(perm, 2, dims, periods, 1, &cart);
    MPI_Cart_map(perm, 2, dims, periods, &mapped);
    MPI_Comm_rank(cart, &crank);

    /* a permutation: every grid rank is held by exactly one process */
    int *ranks = mtest_calloc((size_t)size, sizeof(int));
    int *nodes = mtest_calloc((size_t)size, sizeof(int));
    MPI_Allgather(&crank, 1, MPI_INT, ranks, 1, MPI_INT, perm);
    int *seen = mtest_calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; i++) {
        if (ranks[i] >= 0 && ranks[i] < size)
            seen[ranks[i]]++;
    }
    for (int i = 0; i < size; i++)
        MTEST_CHECK(seen[i] == 1, "grid rank %d is held by %d processes", i, seen[i]);

    MPI_Allgather(&node_id, 1, MPI_INT, nodes, 1, MPI_INT, cart);
    if (mtest_is_manifold()) {
        MTEST_CHECK(mapped == crank, "MPI_Cart_map gave %d, MPI_Cart_create rank %d", mapped,
                    crank);
        for (int r = 0; uniform && r < dims[0]; r++) {
            for (int c = 1; c < dims[1]; c++)
                MTEST_CHECK(nodes[r * dims[1] + c] == nodes[r * dims[1]],
                            "row %d spans nodes %d and %d", r, nodes[r * dims[1]],
                            nodes[r * dims[1] + c]);
        }
        if (wrank == 0)
            mtest_debug("%d nodes, grid %d x %d\n", nnodes, dims[0], dims[1]);
    }

    /* reorder = 0 keeps the parent's order */
    MPI_Cart_create(perm, 2, dims, periods, 0, &plain);
    MPI_Comm_rank(plain, &crank);
    MTEST_CHECK(crank == prank, "reorder = 0 gave rank %d for parent rank %d", crank, prank);

    free(ranks);
    free(nodes);
    free(seen);
    MPI_Comm_free(&plain);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&perm);
    MPI_Comm_free(&node);
    return mtest_finalize(mtest_error_count());
}
