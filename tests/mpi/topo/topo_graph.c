/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph topologies: a ring over all processes (each node linked to both neighbours) and a star
 * over all but the last process. Checks Topo_test, Graphdims_get, Graph_get (also with less
 * room than the graph, on Manifold), Graph_neighbors(_count) for every node, Graph_map,
 * MPI_COMM_NULL for processes outside the graph, a message along an edge, and MPI_Comm_dup keeping
 * the graph.
 */
#include "mtest.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size, type;
    MPI_Comm ring, star, dup;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int *index = mtest_calloc((size_t)size, sizeof(int));
    int *edges = mtest_calloc(2 * (size_t)size, sizeof(int));
    for (int i = 0; i < size; i++) {
        index[i] = 2 * (i + 1);
        edges[2 * i] = (i + size - 1) % size;
        edges[2 * i + 1] = (i + 1) % size;
    }
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &ring);
    MPI_Topo_test(ring, &type);
    MTEST_CHECK(type == MPI_GRAPH, "Topo_test gives %d", type);
    int nn, ne;
    MPI_Graphdims_get(ring, &nn, &ne);
    MTEST_CHECK(nn == size && ne == 2 * size, "Graphdims_get: %d nodes %d edges", nn, ne);
    int *gi = mtest_calloc((size_t)size, sizeof(int));
    int *ge = mtest_calloc(2 * (size_t)size, sizeof(int));
    MPI_Graph_get(ring, size, 2 * size, gi, ge);
    for (int i = 0; i < size; i++)
        MTEST_CHECK(gi[i] == index[i], "index[%d]=%d", i, gi[i]);
    for (int i = 0; i < 2 * size; i++)
        MTEST_CHECK(ge[i] == edges[i], "edges[%d]=%d", i, ge[i]);
    if (mtest_is_manifold()) {
        /* less room than the graph: MPICH 5.0.2 refuses, Manifold fills what fits */
        int one[1] = {-7};
        MPI_Graph_get(ring, 1, 1, gi, one);
        MTEST_CHECK(one[0] == edges[0], "Graph_get with room for one edge: %d", one[0]);
    }
    for (int r = 0; r < size; r++) {
        int cnt, nb[2];
        MPI_Graph_neighbors_count(ring, r, &cnt);
        MTEST_CHECK(cnt == 2, "node %d has %d neighbours", r, cnt);
        MPI_Graph_neighbors(ring, r, 2, nb);
        MTEST_CHECK(nb[0] == (r + size - 1) % size && nb[1] == (r + 1) % size,
                    "node %d neighbours %d %d", r, nb[0], nb[1]);
    }
    int in = -1, left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Sendrecv(&rank, 1, MPI_INT, right, 1, &in, 1, MPI_INT, left, 1, ring, MPI_STATUS_IGNORE);
    MTEST_CHECK(in == left, "got %d from the left neighbour %d", in, left);
    MPI_Comm_dup(ring, &dup);
    MPI_Graphdims_get(dup, &nn, &ne);
    MTEST_CHECK(nn == size && ne == 2 * size, "dup: %d nodes %d edges", nn, ne);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&ring);

    /* star: node 0 linked to every other node of the first n */
    int n = size > 1 ? size - 1 : 1;
    for (int i = 0; i < n; i++) {
        index[i] = i == 0 ? n - 1 : (n - 1) + i;
        if (i > 0) {
            edges[i - 1] = i;
            edges[n - 1 + i - 1] = 0;
        }
    }
    int newrank;
    MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &newrank);
    MTEST_CHECK(newrank == (rank < n ? rank : MPI_UNDEFINED), "Graph_map gives %d", newrank);
    MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &star);
    if (rank < n) {
        int cnt;
        MPI_Graph_neighbors_count(star, 0, &cnt);
        MTEST_CHECK(cnt == n - 1, "centre has %d neighbours", cnt);
        if (n > 1) {
            MPI_Graph_neighbors_count(star, n - 1, &cnt);
            MTEST_CHECK(cnt == 1, "leaf has %d neighbours", cnt);
        }
        MPI_Comm_free(&star);
    } else {
        MTEST_CHECK(star == MPI_COMM_NULL, "rank %d outside the star got a communicator", rank);
    }
    free(index);
    free(edges);
    free(gi);
    free(ge);
    return mtest_finalize(mtest_error_count());
}
