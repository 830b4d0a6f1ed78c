/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Distributed graphs. Adjacent: each process names its ring neighbours with weights (left 10,
 * right 20); the queries give them back, and unweighted graphs say so. General: every edge
 * i -> i+1 and i -> i+2 (mod size) is given by rank 0 alone, then by each source itself, with
 * weights source*100+dest; each process must learn its in- and out-edges with the right
 * weights. MPI_WEIGHTS_EMPTY on a process without edges, dup keeping the graph, Topo_test.
 */
#include "mtest.h"

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are small constant addresses; GCC takes them for
 * zero-sized arrays and warns that the call reads from them. */
#pragma GCC diagnostic ignored "-Wstringop-overread"

#include <stdlib.h>

static int has(const int *v, const int *w, int n, int x, int wx)
{
    for (int i = 0; i < n; i++) {
        if (v[i] == x && (w == NULL || w[i] == wx))
            return 1;
    }
    return 0;
}

/* Each process must have the out-edges rank+1, rank+2 and the in-edges rank-1, rank-2. */
static void check_shifts(MPI_Comm g, int rank, int size, int weighted)
{
    int indeg, outdeg, wflag, type;
    MPI_Topo_test(g, &type);
    MTEST_CHECK(type == MPI_DIST_GRAPH, "Topo_test gives %d", type);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wflag);
    MTEST_CHECK(indeg == 2 && outdeg == 2 && wflag == weighted, "degrees %d %d weighted %d", indeg,
                outdeg, wflag);
    if (indeg != 2 || outdeg != 2)
        return;
    int src[2], sw[2], dst[2], dw[2];
    MPI_Dist_graph_neighbors(g, 2, src, weighted ? sw : MPI_UNWEIGHTED, 2, dst,
                             weighted ? dw : MPI_UNWEIGHTED);
    for (int k = 1; k <= 2; k++) {
        int to = (rank + k) % size, from = (rank - k + 2 * size) % size;
        MTEST_CHECK(has(dst, weighted ? dw : NULL, 2, to, rank * 100 + to),
                    "out-edge to %d missing", to);
        MTEST_CHECK(has(src, weighted ? sw : NULL, 2, from, from * 100 + rank),
                    "in-edge from %d missing", from);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Comm g, dup;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;

    /* adjacent, weighted */
    int nb[2] = {left, right}, wt[2] = {10, 20};
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, wt, 2, nb, wt, MPI_INFO_NULL, 0, &g);
    int indeg, outdeg, wflag, src[2], sw[2], dst[2], dw[2];
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wflag);
    MTEST_CHECK(indeg == 2 && outdeg == 2 && wflag, "adjacent: %d %d %d", indeg, outdeg, wflag);
    MPI_Dist_graph_neighbors(g, 2, src, sw, 2, dst, dw);
    MTEST_CHECK(src[0] == left && src[1] == right && sw[0] == 10 && sw[1] == 20,
                "adjacent sources %d(%d) %d(%d)", src[0], sw[0], src[1], sw[1]);
    MTEST_CHECK(dst[0] == left && dst[1] == right && dw[0] == 10 && dw[1] == 20,
                "adjacent destinations %d(%d) %d(%d)", dst[0], dw[0], dst[1], dw[1]);
    MPI_Comm_dup(g, &dup);
    MPI_Dist_graph_neighbors_count(dup, &indeg, &outdeg, &wflag);
    MTEST_CHECK(indeg == 2 && outdeg == 2 && wflag, "dup: %d %d %d", indeg, outdeg, wflag);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&g);

    /* adjacent, unweighted, only rank 0 has edges (the others pass MPI_WEIGHTS_EMPTY) */
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, rank == 0, &rank, MPI_UNWEIGHTED, rank == 0,
                                   &rank, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wflag);
    MTEST_CHECK(indeg == (rank == 0) && outdeg == (rank == 0) && !wflag, "unweighted: %d %d %d",
                indeg, outdeg, wflag);
    MPI_Comm_free(&g);
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
                                   MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g);
    MPI_Dist_graph_neighbors_count(g, &indeg, &outdeg, &wflag);
    MTEST_CHECK(indeg == 0 && outdeg == 0 && wflag, "empty weighted: %d %d %d", indeg, outdeg,
                wflag);
    MPI_Comm_free(&g);

    /* general, every edge given by rank 0; only meaningful with distinct shifts */
    if (size >= 3) {
        int n = rank == 0 ? size : 0;
        int *sources = mtest_calloc((size_t)size, sizeof(int));
        int *degrees = mtest_calloc((size_t)size, sizeof(int));
        int *dests = mtest_calloc(2 * (size_t)size, sizeof(int));
        int *weights = mtest_calloc(2 * (size_t)size, sizeof(int));
        for (int i = 0; i < size; i++) {
            sources[i] = i;
            degrees[i] = 2;
            for (int k = 1; k <= 2; k++) {
                dests[2 * i + k - 1] = (i + k) % size;
                weights[2 * i + k - 1] = i * 100 + (i + k) % size;
            }
        }
        MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests,
                              n > 0 ? weights : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &g);
        check_shifts(g, rank, size, 1);
        MPI_Comm_free(&g);
        /* each source gives its own edges, unweighted */
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &sources[rank], &degrees[rank], &dests[2 * rank],
                              MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &g);
        check_shifts(g, rank, size, 0);
        MPI_Comm_free(&g);
        free(sources);
        free(degrees);
        free(dests);
        free(weights);
    } else {
        /* a self loop per process */
        int one = 1, w = 5;
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &rank, &one, &rank, &w, MPI_INFO_NULL, 0, &g);
        MPI_Dist_graph_neighbors(g, 1, src, sw, 1, dst, dw);
        MTEST_CHECK(src[0] == rank && dst[0] == rank && sw[0] == 5 && dw[0] == 5,
                    "self loop: %d %d %d %d", src[0], dst[0], sw[0], dw[0]);
        MPI_Comm_free(&g);
    }
    return mtest_finalize(mtest_error_count());
}
