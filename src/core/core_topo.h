/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer interface of process topologies (Cartesian, graph, distributed graph). A topology
 * is plain data hung on the communicator created with it: it is immutable once attached, so
 * queries read it without a lock; MPI_Comm_dup gives the copy its own duplicate and the
 * communicator frees its topology when it is destroyed. Only the distributed-graph constructor
 * needs communication (the edges given anywhere are delivered to both of their ends).
 */
#ifndef MF_CORE_TOPO_H
#define MF_CORE_TOPO_H

#include <mpi.h>

#include "util.h"

typedef struct mf_topo {
    int type; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART: ndims extents and periodic flags (row-major rank order). */
    int ndims;
    int *dims, *periods;
    /* MPI_GRAPH: nnodes, index[nnodes] (cumulative degrees) and edges[index[nnodes-1]]. */
    int nnodes;
    int *index, *edges;
    /* MPI_DIST_GRAPH: this process's neighbours; weights are NULL when unweighted. */
    int weighted;
    int indegree, outdegree;
    int *sources, *sourceweights, *dests, *destweights;
} mf_topo_t;

mf_status_t mf_topo_cart_new(int ndims, const int *dims, const int *periods, mf_topo_t **topo_p);
mf_status_t mf_topo_graph_new(int nnodes, const int *index, const int *edges, mf_topo_t **topo_p);
/* sw/dw: NULL when the graph is unweighted. */
mf_status_t mf_topo_dist_new(int indegree, const int *sources, const int *sw, int outdegree,
                             const int *dests, const int *dw, int weighted, mf_topo_t **topo_p);
mf_status_t mf_topo_dup(const mf_topo_t *topo, mf_topo_t **topo_p);
void mf_topo_free(mf_topo_t *topo);

/* Cartesian helpers: the rank of coordinates already reduced to range, and the reverse. */
int mf_topo_cart_rank(const mf_topo_t *topo, const int *coords);
void mf_topo_cart_coords(const mf_topo_t *topo, int rank, int *coords);
/* Product of the extents (1 for zero dimensions); -1 on overflow of an int. */
int mf_topo_dims_product(int ndims, const int *dims);
/* MPI_Dims_create: fills the zero entries of dims with a balanced factorisation; MF_ERR_INVALID
 * when nnodes is not divisible by the product of the non-zero entries. */
mf_status_t mf_topo_dims_create(int nnodes, int ndims, int *dims);
/* Reordering for MPI_Cart_create/MPI_Cart_map: order[new rank] = the rank in `comm` of the
 * process placed there, for a grid of n <= comm->size processes taken from the first n of comm.
 * Processes on one node get consecutive ranks (nodes in the order of their first process), so
 * row-major neighbours share a node where the node sizes allow. Identity when the node of each
 * process is unknown. Local: every process computes the same order from the launcher's map. */
mf_status_t mf_topo_node_order(struct MPI_ABI_Comm *comm, int n, int *order);

#endif /* MF_CORE_TOPO_H */
