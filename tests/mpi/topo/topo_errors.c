/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Invalid topology calls with MPI_ERRORS_RETURN: queries on a communicator without (the right)
 * topology give MPI_ERR_TOPOLOGY; bad shapes give MPI_ERR_DIMS (negative ndims, non-positive
 * extents) or MPI_ERR_ARG (a grid or graph larger than the communicator, a decreasing index);
 * ranks outside the grid or graph give MPI_ERR_RANK (Cart_coords, Cart_rank in a non-periodic
 * dimension, Graph_neighbors, edges and distributed-graph neighbours); negative room for the
 * results of Graph_get and Graph_neighbors gives MPI_ERR_ARG; the output handle of a
 * failed constructor is MPI_COMM_NULL on Manifold (it was left as it was; MPICH's test suite
 * expects MPI_COMM_NULL); the v and w neighbourhood collectives refuse a NULL array of
 * counts or types (MPI_ERR_ARG). Classes are checked on Manifold; elsewhere a call just has
 * to fail, since implementations choose differently among MPI_ERR_ARG, _RANK and _DIMS. The
 * zero extent and the invalid graph and distributed-graph arguments are checked on Manifold
 * only: MPICH 5.0.2 accepts some of them and crashes on others.
 */
#include "mtest.h"

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are small constant addresses; GCC takes them for
 * zero-sized arrays and warns that the call reads from them. */
#pragma GCC diagnostic ignored "-Wstringop-overread"

static void check(int rc, int expected_class, const char *fname)
{
    if (mtest_is_manifold())
        MTEST_CHECK_ERR(rc, expected_class, fname);
    else
        MTEST_CHECK(rc != MPI_SUCCESS, "%s succeeded on bad input", fname);
}

int main(int argc, char **argv)
{
    int rank, size, rc, v, one = 1;
    MPI_Comm cart, graph, out = MPI_COMM_NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* no topology */
    rc = MPI_Cartdim_get(MPI_COMM_WORLD, &v);
    check(rc, MPI_ERR_TOPOLOGY, "MPI_Cartdim_get");
    rc = MPI_Graphdims_get(MPI_COMM_WORLD, &v, &v);
    check(rc, MPI_ERR_TOPOLOGY, "MPI_Graphdims_get");
    int a, b, c;
    rc = MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &a, &b, &c);
    check(rc, MPI_ERR_TOPOLOGY, "MPI_Dist_graph_neighbors_count");
    rc = MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &a, &b);
    check(rc, MPI_ERR_TOPOLOGY,
          "MPI_Cart_shift: argument comm: needs a Cartesian topology, and it "
          "has none");

    /* bad shapes */
    int dims[2] = {size, 1}, periods[2] = {0, 0};
    rc = MPI_Cart_create(MPI_COMM_WORLD, -1, dims, periods, 0, &out);
    check(rc, MPI_ERR_DIMS, "MPI_Cart_create");
    int zero[2] = {size, 0};
    if (mtest_is_manifold()) {
        rc = MPI_Cart_create(MPI_COMM_WORLD, 2, zero, periods, 0, &out);
        check(rc, MPI_ERR_DIMS, "MPI_Cart_create");
    }
    int big[2] = {size, 2};
    if (mtest_is_manifold())
        out = MPI_COMM_WORLD; /* must come back as MPI_COMM_NULL */
    rc = MPI_Cart_create(MPI_COMM_WORLD, 2, big, periods, 0, &out);
    check(rc, MPI_ERR_ARG, "MPI_Cart_create");
    rc = MPI_Cart_map(MPI_COMM_WORLD, 2, big, periods, &v);
    check(rc, MPI_ERR_ARG, "MPI_Cart_map");
    MTEST_CHECK(out == MPI_COMM_NULL, "a failed MPI_Cart_create changed its output");

    /* a valid grid: size x 1, periodic in neither dimension */
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    rc = MPI_Graph_neighbors_count(cart, 0, &v);
    check(rc, MPI_ERR_TOPOLOGY, "MPI_Graph_neighbors_count");
    rc = MPI_Cart_coords(cart, size, 2, dims);
    check(rc, MPI_ERR_RANK, "MPI_Cart_coords");
    rc = MPI_Cart_coords(cart, -1, 2, dims);
    check(rc, MPI_ERR_RANK, "MPI_Cart_coords");
    int outside[2] = {size, 0};
    rc = MPI_Cart_rank(cart, outside, &v);
    check(rc, MPI_ERR_RANK, "MPI_Cart_rank");
    outside[0] = 0;
    outside[1] = -1;
    rc = MPI_Cart_rank(cart, outside, &v);
    check(rc, MPI_ERR_RANK, "MPI_Cart_rank");
    rc = MPI_Cart_shift(cart, 2, 1, &a, &b);
    check(rc, MPI_ERR_ARG, "MPI_Cart_shift");
    rc = MPI_Cart_shift(cart, 1, 1, &a, &b);
    MTEST_CHECK(rc == MPI_SUCCESS && a == MPI_PROC_NULL && b == MPI_PROC_NULL,
                "shift along an extent of 1: %d %d", a, b);
    /* the v and w neighbourhood collectives with a NULL array of counts or types (4 neighbours
     * on this grid, some MPI_PROC_NULL) */
    int nbuf[8] = {0}, ncounts[4] = {1, 1, 1, 1}, ndispls[4] = {0, 1, 2, 3};
    MPI_Aint nbytes[4] = {0, 4, 8, 12};
    MPI_Datatype ntypes[4] = {MPI_INT, MPI_INT, MPI_INT, MPI_INT};
    rc = MPI_Neighbor_allgatherv(nbuf, 1, MPI_INT, nbuf + 4, NULL, ndispls, MPI_INT, cart);
    check(rc, MPI_ERR_ARG, "MPI_Neighbor_allgatherv");
    rc = MPI_Neighbor_alltoallv(nbuf, NULL, ndispls, MPI_INT, nbuf + 4, ncounts, ndispls, MPI_INT,
                                cart);
    check(rc, MPI_ERR_ARG, "MPI_Neighbor_alltoallv");
    rc = MPI_Neighbor_alltoallw(nbuf, ncounts, nbytes, NULL, nbuf + 4, ncounts, nbytes, ntypes,
                                cart);
    check(rc, MPI_ERR_ARG, "MPI_Neighbor_alltoallw");
    MPI_Comm_free(&cart);

    if (!mtest_is_manifold())
        goto done;

    /* graphs */
    int index[3] = {1, 0, 2}, edges[2] = {0, 0};
    rc = MPI_Graph_create(MPI_COMM_WORLD, 2, index, edges, 0, &out);
    if (size >= 2)
        check(rc, MPI_ERR_ARG, "MPI_Graph_create");
    rc = MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &out);
    check(rc, MPI_ERR_ARG, "MPI_Graph_create");
    int idx1[1] = {1}, bad_edge[1] = {1};
    if (mtest_is_manifold())
        out = MPI_COMM_WORLD;
    rc = MPI_Graph_create(MPI_COMM_WORLD, 1, idx1, bad_edge, 0, &out);
    check(rc, MPI_ERR_RANK, "MPI_Graph_create");
    MTEST_CHECK(out == MPI_COMM_NULL, "a failed MPI_Graph_create changed its output");
    int self_edge[1] = {0};
    MPI_Graph_create(MPI_COMM_WORLD, 1, idx1, self_edge, 0, &graph);
    if (rank == 0) {
        rc = MPI_Graph_neighbors_count(graph, 1, &v);
        check(rc, MPI_ERR_RANK, "MPI_Graph_neighbors_count");
        /* negative room for the results (MPICH: MPI_ERR_ARG too) */
        int got[2];
        rc = MPI_Graph_get(graph, -1, 1, got, got);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Graph_get", "maxindex");
        rc = MPI_Graph_get(graph, 1, -1, got, got);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Graph_get", "maxedges");
        rc = MPI_Graph_neighbors(graph, 0, -1, got);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Graph_neighbors", "maxneighbors");
        rc = MPI_Cart_get(graph, 1, &a, &b, &c);
        /* the message says which topology it has */
        check(rc, MPI_ERR_TOPOLOGY,
              "MPI_Cart_get: argument comm: needs a Cartesian topology, and it has a graph");
        MPI_Comm_free(&graph);
    }

    /* distributed graphs */
    int nb[1] = {size};
    rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, nb, MPI_UNWEIGHTED, 0, NULL,
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out);
    check(rc, MPI_ERR_RANK, "MPI_Dist_graph_create_adjacent");
    rc = MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, nb, MPI_UNWEIGHTED, 0, NULL,
                                        MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &out);
    check(rc, MPI_ERR_ARG, "MPI_Dist_graph_create_adjacent");
    int me = rank, neg = -3;
    rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &one, nb, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                               &out);
    check(rc, MPI_ERR_RANK, "MPI_Dist_graph_create");
    if (mtest_is_manifold())
        out = MPI_COMM_WORLD;
    rc = MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &me, &one, &me, &neg, MPI_INFO_NULL, 0, &out);
    check(rc, MPI_ERR_ARG, "MPI_Dist_graph_create");
    MTEST_CHECK(out == MPI_COMM_NULL, "a failed distributed graph constructor changed its output");

done:
    /* the communicators still work */
    int sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK(sum == size, "allreduce after the errors gives %d", sum);
    return mtest_finalize(mtest_error_count());
}
