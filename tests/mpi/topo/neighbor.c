/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbourhood collectives: Neighbor_allgather(v) and Neighbor_alltoall(v/w), blocking,
 * non-blocking and persistent (restarted), int and _c, on Cartesian topologies (periodic and
 * not, one and two dimensions, MPI_PROC_NULL neighbours whose slots stay untouched, extents 1
 * and 2 where both neighbours of a dimension are one process), a graph with repeated edges and
 * a weighted distributed graph. Each value carries its sender and the block it was sent from,
 * so the neighbour order and the pairing of repeated edges are checked. A communicator without
 * topology gives MPI_ERR_TOPOLOGY.
 */
#include "mtest.h"

#include <stdlib.h>

#define SENTINEL (-1)

/* in[j]: the in-neighbour of slot j; a2a[j]: the value Neighbor_alltoall delivers there. */
static void check_all(MPI_Comm comm, const char *what, int rank, int indeg, const int *in,
                      int outdeg, const int *a2a)
{
    int n = indeg > outdeg ? indeg : outdeg;
    int *sbuf = malloc(2 * ((size_t)n + 1) * sizeof(int)),
        *rbuf = malloc(2 * ((size_t)n + 1) * sizeof(int));
    int *scnt = malloc(((size_t)n + 1) * sizeof(int)),
        *sdsp = malloc(((size_t)n + 1) * sizeof(int));
    int *rcnt = malloc(((size_t)n + 1) * sizeof(int)),
        *rdsp = malloc(((size_t)n + 1) * sizeof(int));
    MPI_Aint *sw = malloc(((size_t)n + 1) * sizeof(MPI_Aint)),
             *rw = malloc(((size_t)n + 1) * sizeof(MPI_Aint));
    MPI_Count *scc = malloc(((size_t)n + 1) * sizeof(MPI_Count));
    MPI_Datatype *types = malloc(((size_t)n + 1) * sizeof(MPI_Datatype));
    MPI_Request req;
    for (int k = 0; k < n; k++)
        types[k] = MPI_INT;

    /* Neighbor_allgather and its non-blocking and persistent forms. */
    for (int form = 0; form < 3; form++) {
        int me = rank * 100;
        for (int j = 0; j < indeg; j++)
            rbuf[j] = SENTINEL;
        if (form == 0) {
            MPI_Neighbor_allgather(&me, 1, MPI_INT, rbuf, 1, MPI_INT, comm);
        } else if (form == 1) {
            MPI_Ineighbor_allgather(&me, 1, MPI_INT, rbuf, 1, MPI_INT, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Neighbor_allgather_init(&me, 1, MPI_INT, rbuf, 1, MPI_INT, comm, MPI_INFO_NULL,
                                        &req);
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Request_free(&req);
        }
        for (int j = 0; j < indeg; j++) {
            int expect = in[j] == MPI_PROC_NULL ? SENTINEL : in[j] * 100;
            MTEST_CHECK(rbuf[j] == expect, "%s allgather form %d slot %d: %d, expected %d", what,
                        form, j, rbuf[j], expect);
        }
    }

    /* Neighbor_alltoall: int, non-blocking, persistent restarted, _c. */
    for (int form = 0; form < 5; form++) {
        for (int k = 0; k < outdeg; k++)
            sbuf[k] = rank * 100 + k;
        for (int j = 0; j < indeg; j++)
            rbuf[j] = SENTINEL;
        if (form == 0) {
            MPI_Neighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, comm);
        } else if (form == 1) {
            MPI_Ineighbor_alltoall(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (form == 2) {
            MPI_Neighbor_alltoall_init(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, comm, MPI_INFO_NULL,
                                       &req);
            for (int it = 0; it < 2; it++) {
                for (int j = 0; j < indeg; j++)
                    rbuf[j] = SENTINEL;
                MPI_Start(&req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            MPI_Request_free(&req);
        } else if (form == 3) {
            MPI_Neighbor_alltoall_c(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, comm);
        } else {
            MPI_Ineighbor_alltoall_c(sbuf, 1, MPI_INT, rbuf, 1, MPI_INT, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        for (int j = 0; j < indeg; j++)
            MTEST_CHECK(rbuf[j] == a2a[j], "%s alltoall form %d slot %d: %d, expected %d", what,
                        form, j, rbuf[j], a2a[j]);
    }

    /* Neighbor_alltoallv with two items per block, blocks stored in reverse order. */
    for (int k = 0; k < outdeg; k++) {
        scnt[k] = 2;
        sdsp[k] = 2 * (outdeg - 1 - k);
        scc[k] = 2;
        sbuf[sdsp[k]] = sbuf[sdsp[k] + 1] = rank * 100 + k;
    }
    for (int j = 0; j < indeg; j++) {
        rcnt[j] = 2;
        rdsp[j] = 2 * (indeg - 1 - j);
        rbuf[rdsp[j]] = rbuf[rdsp[j] + 1] = SENTINEL;
    }
    MPI_Neighbor_alltoallv(sbuf, scnt, sdsp, MPI_INT, rbuf, rcnt, rdsp, MPI_INT, comm);
    for (int j = 0; j < indeg; j++)
        MTEST_CHECK(rbuf[rdsp[j]] == a2a[j] && rbuf[rdsp[j] + 1] == a2a[j],
                    "%s alltoallv slot %d: %d %d, expected %d", what, j, rbuf[rdsp[j]],
                    rbuf[rdsp[j] + 1], a2a[j]);

    /* Neighbor_alltoallw: byte displacements, reverse order, non-blocking _c form. */
    for (int k = 0; k < outdeg; k++) {
        scc[k] = 1;
        sw[k] = (MPI_Aint)((outdeg - 1 - k) * sizeof(int));
        sbuf[outdeg - 1 - k] = rank * 100 + k;
    }
    MPI_Count *rcc = malloc(((size_t)n + 1) * sizeof(MPI_Count));
    for (int j = 0; j < indeg; j++) {
        rcc[j] = 1;
        rcnt[j] = 1;
        rw[j] = (MPI_Aint)((indeg - 1 - j) * sizeof(int));
        rbuf[indeg - 1 - j] = SENTINEL;
    }
    MPI_Ineighbor_alltoallw_c(sbuf, scc, sw, types, rbuf, rcc, rw, types, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int j = 0; j < indeg; j++)
        MTEST_CHECK(rbuf[indeg - 1 - j] == a2a[j], "%s alltoallw slot %d: %d, expected %d", what, j,
                    rbuf[indeg - 1 - j], a2a[j]);
    for (int k = 0; k < outdeg; k++)
        scnt[k] = 1;
    for (int j = 0; j < indeg; j++)
        rbuf[indeg - 1 - j] = SENTINEL;
    MPI_Neighbor_alltoallw(sbuf, scnt, sw, types, rbuf, rcnt, rw, types, comm);
    for (int j = 0; j < indeg; j++)
        MTEST_CHECK(rbuf[indeg - 1 - j] == a2a[j], "%s alltoallw(int) slot %d: %d", what, j,
                    rbuf[indeg - 1 - j]);

    /* Neighbor_allgatherv into reversed slots. */
    int me = rank * 100;
    for (int j = 0; j < indeg; j++)
        rbuf[rdsp[j] / 2] = SENTINEL;
    for (int j = 0; j < indeg; j++)
        rdsp[j] /= 2, rcnt[j] = 1;
    MPI_Neighbor_allgatherv(&me, 1, MPI_INT, rbuf, rcnt, rdsp, MPI_INT, comm);
    for (int j = 0; j < indeg; j++) {
        int expect = in[j] == MPI_PROC_NULL ? SENTINEL : in[j] * 100;
        MTEST_CHECK(rbuf[rdsp[j]] == expect, "%s allgatherv slot %d: %d, expected %d", what, j,
                    rbuf[rdsp[j]], expect);
    }
    free(rcc);
    free(types);
    free(scc);
    free(rw);
    free(sw);
    free(rdsp);
    free(rcnt);
    free(sdsp);
    free(scnt);
    free(rbuf);
    free(sbuf);
}

static void cart(int rank, int size, int ndims, int *dims, const int *periods, const char *what)
{
    MPI_Comm comm;
    MPI_Dims_create(size, ndims, dims);
    MPI_Cart_create(MPI_COMM_WORLD, ndims, dims, periods, 0, &comm);
    int in[8], a2a[8];
    for (int d = 0; d < ndims; d++) {
        MPI_Cart_shift(comm, d, 1, &in[2 * d], &in[2 * d + 1]);
        /* The -1 neighbour sent its +1 block here, the +1 neighbour its -1 block. */
        a2a[2 * d] = in[2 * d] == MPI_PROC_NULL ? SENTINEL : in[2 * d] * 100 + 2 * d + 1;
        a2a[2 * d + 1] = in[2 * d + 1] == MPI_PROC_NULL ? SENTINEL : in[2 * d + 1] * 100 + 2 * d;
    }
    check_all(comm, what, rank, 2 * ndims, in, 2 * ndims, a2a);
    MPI_Comm_free(&comm);
}

/* Where the j-th in-edge of `me` (from in[j]) was sent from: the position in the sender's
 * out-list of the occurrence with the same rank among the repeated edges. */
static int pair(int me, const int *in, int j, const int *sender_out, int sender_outdeg)
{
    int occ = 0;
    for (int i = 0; i < j; i++)
        occ += in[i] == in[j];
    for (int p = 0; p < sender_outdeg; p++) {
        if (sender_out[p] == me && occ-- == 0)
            return in[j] * 100 + p;
    }
    return -2;
}

static void graph(int rank, int size)
{
    /* Every node: right, left, right again, left again (repeated edges). */
    int *index = malloc((size_t)size * sizeof(int)),
        *edges = malloc(4 * (size_t)size * sizeof(int));
    for (int r = 0; r < size; r++) {
        index[r] = 4 * (r + 1);
        edges[4 * r] = edges[4 * r + 2] = (r + 1) % size;
        edges[4 * r + 1] = edges[4 * r + 3] = (r - 1 + size) % size;
    }
    MPI_Comm comm;
    MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &comm);
    int nn, nb[4], a2a[4];
    MPI_Graph_neighbors_count(comm, rank, &nn);
    MPI_Graph_neighbors(comm, rank, 4, nb);
    for (int j = 0; j < 4; j++)
        a2a[j] = pair(rank, nb, j, &edges[4 * nb[j]], 4);
    check_all(comm, "graph", rank, nn, nb, nn, a2a);
    MPI_Comm_free(&comm);
    free(edges);
    free(index);
}

static void dist_graph(int rank, int size)
{
    /* In from rank-1 and rank+2, out to rank+1 and rank-2, weighted. */
    int src[2] = {(rank - 1 + size) % size, (rank + 2) % size};
    int dst[2] = {(rank + 1) % size, (rank - 2 + 2 * size) % size};
    int sw[2] = {1, 2}, dw[2] = {3, 4};
    MPI_Comm comm;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw, MPI_INFO_NULL, 0, &comm);
    int a2a[2];
    for (int j = 0; j < 2; j++) {
        int s = src[j], sdst[2] = {(s + 1) % size, (s - 2 + 2 * size) % size};
        a2a[j] = pair(rank, src, j, sdst, 2);
    }
    check_all(comm, "dist_graph", rank, 2, src, 2, a2a);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int d1[1] = {0}, p1[1] = {1};
    cart(rank, size, 1, d1, p1, "cart 1d periodic");
    int d1n[1] = {0}, p1n[1] = {0};
    cart(rank, size, 1, d1n, p1n, "cart 1d");
    int d2[2] = {0, 0}, p2[2] = {1, 0};
    cart(rank, size, 2, d2, p2, "cart 2d");
    int d3[3] = {0, 1, 0}, p3[3] = {0, 1, 1};
    cart(rank, size, 3, d3, p3, "cart 3d");
    graph(rank, size);
    dist_graph(rank, size);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int x = 0, y;
    int rc = MPI_Neighbor_allgather(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TOPOLOGY, "MPI_Neighbor_allgather");
    MPI_Request req;
    rc = MPI_Ineighbor_alltoall(&x, 1, MPI_INT, &y, 1, MPI_INT, MPI_COMM_WORLD, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_TOPOLOGY, "MPI_Ineighbor_alltoall");
    return mtest_finalize(errs);
}
