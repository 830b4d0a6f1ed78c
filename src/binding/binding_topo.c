/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: process topologies (MPI-4.1 chapter 8). A Cartesian or graph communicator
 * holds the first processes of the parent, the others get MPI_COMM_NULL, and a distributed
 * graph spans the whole parent. MPI_Cart_create with reorder = 1 (and MPI_Cart_map) groups the
 * processes of a node on consecutive grid ranks; the graph constructors keep the parent's order
 * whatever `reorder` says (the standard allows it). The topology data lives in core_topo.c; this
 * file validates arguments, builds the communicator and answers the queries. A query on a
 * communicator without the right topology is MPI_ERR_TOPOLOGY.
 */
#include "binding.h"

#include "coll.h"
#include "core_topo.h"

#include <stdlib.h>
#include <string.h>

static const char *topo_name(int type)
{
    switch (type) {
    case MPI_CART: return "a Cartesian";
    case MPI_GRAPH: return "a graph";
    default: return "a distributed graph";
    }
}

/* The usual first checks of a query: MPI is initialised, comm is a communicator with a
 * topology of `type`. */
static int check_topo_comm(const char *func, MPI_Comm comm, int type, mf_comm_t **comm_p,
                           mf_topo_t **topo_p)
{
    int rc = mf_check_init_comm(func, comm, comm_p);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_topo_t *topo = (*comm_p)->topo;
    if (topo != NULL && topo->type == type) {
        *topo_p = topo;
        return MPI_SUCCESS;
    }
    return mf_err_raise(*comm_p, mf_err_code(MPI_ERR_TOPOLOGY, func,
                                             "argument comm: needs %s topology, and it has %s",
                                             topo_name(type),
                                             topo == NULL ? "none" : topo_name(topo->type)));
}

/* An array argument of n entries: NULL is only allowed when n is 0. */
static int check_array(const char *func, mf_comm_t *comm, const void *p, int n, const char *arg)
{
    if (n <= 0 || p != NULL)
        return MPI_SUCCESS;
    return mf_err_raise(comm, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL", arg));
}

/* The length of an output array the caller provides (maxindex, maxedges, maxneighbors). */
static int check_room(const char *func, mf_comm_t *comm, int n, const char *arg)
{
    if (n >= 0)
        return MPI_SUCCESS;
    return mf_err_raise(comm, mf_err_code(MPI_ERR_ARG, func, "argument %s=%d is negative", arg, n));
}

/* Cartesian shape arguments (Cart_create, Cart_map): the number of processes it needs. */
static int check_cart_shape(const char *func, mf_comm_t *c, int ndims, const int *dims,
                            const int *periods, int *nprocs_p)
{
    if (ndims < 0)
        return mf_err_raise(
            c, mf_err_code(MPI_ERR_DIMS, func, "argument ndims=%d is negative", ndims));
    int rc = check_array(func, c, dims, ndims, "dims");
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, periods, ndims, "periods");
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return mf_err_raise(c, mf_err_code(MPI_ERR_DIMS, func,
                                               "argument dims[%d]=%d is not positive", i, dims[i]));
    }
    int n = mf_topo_dims_product(ndims, dims);
    if (n < 0 || n > c->size)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                           "argument dims: the grid has more processes than "
                                           "the communicator's %d",
                                           c->size));
    *nprocs_p = n;
    return MPI_SUCCESS;
}

/* Collective over c: a communicator of c's first n processes carrying `topo` (taken over, freed
 * on failure), its rank i being c's process order[i] (NULL: rank i is c's rank i); the others
 * get MPI_COMM_NULL. */
static int build_topo_comm(const char *func, mf_comm_t *c, int n, const int *order, mf_topo_t *topo,
                           MPI_Comm *newcomm)
{
    int *ranks = mf_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1), "topology ranks");
    if (ranks == NULL) {
        mf_topo_free(topo);
        return mf_err_raise(c, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    }
    int my_new_rank = -1;
    for (int i = 0; i < n; i++) {
        int r = order != NULL ? order[i] : i;
        ranks[i] = mf_comm_world_rank(c, r);
        if (r == c->rank)
            my_new_rank = i;
    }
    mf_comm_t *out = NULL;
    mf_status_t status = mf_comm_create_from(c, n, my_new_rank, ranks, &out);
    free(ranks);
    if (status != MF_OK) {
        mf_topo_free(topo);
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    }
    if (out == NULL) {
        mf_topo_free(topo);
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    out->topo = topo;
    *newcomm = out;
    return MPI_SUCCESS;
}

/* The order of a reordered Cartesian grid of n processes (caller frees), or NULL on no memory. */
static int *cart_order(mf_comm_t *c, int n)
{
    int *order = mf_malloc(sizeof(int) * (size_t)(n > 0 ? n : 1), "topology order");
    if (order != NULL && mf_topo_node_order(c, n, order) != MF_OK) {
        free(order);
        order = NULL;
    }
    return order;
}

/* ---- Cartesian --------------------------------------------------------------------------- */

#pragma weak MPI_Cart_create = PMPI_Cart_create
int PMPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                     MPI_Comm *comm_cart)
{
    static const char func[] = "MPI_Cart_create";
    mf_comm_t *c = NULL;
    int n = 0;
    int rc = mf_check_init_comm_arg(func, "comm_old", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra_arg(func, "comm_old", c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, comm_cart, "comm_cart");
    if (rc == MPI_SUCCESS) /* a failed call leaves no stale handle behind */
        *comm_cart = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS)
        rc = check_cart_shape(func, c, ndims, dims, periods, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_topo_t *topo = NULL;
    mf_status_t status = mf_topo_cart_new(ndims, dims, periods, &topo);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot build the topology");
    int *order = NULL;
    if (reorder && (order = cart_order(c, n)) == NULL) {
        mf_topo_free(topo);
        return mf_err_raise(c, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    }
    rc = build_topo_comm(func, c, n, order, topo, comm_cart);
    free(order);
    return rc;
}

#pragma weak MPI_Cart_map = PMPI_Cart_map
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char func[] = "MPI_Cart_map";
    mf_comm_t *c = NULL;
    int n = 0;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra(func, c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newrank, "newrank");
    if (rc == MPI_SUCCESS)
        rc = check_cart_shape(func, c, ndims, dims, periods, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The placement MPI_Cart_create with reorder = 1 makes. */
    int *order = cart_order(c, n);
    if (order == NULL)
        return mf_err_raise(c, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *newrank = MPI_UNDEFINED;
    for (int i = 0; i < n; i++) {
        if (order[i] == c->rank)
            *newrank = i;
    }
    free(order);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cartdim_get = PMPI_Cartdim_get
int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    static const char func[] = "MPI_Cartdim_get";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_CART, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, ndims, "ndims");
    if (rc != MPI_SUCCESS)
        return rc;
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

static int check_maxdims(const char *func, mf_comm_t *c, const mf_topo_t *t, int maxdims)
{
    if (maxdims >= t->ndims)
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                       "argument maxdims=%d is less than the topology's %d "
                                       "dimensions",
                                       maxdims, t->ndims));
}

#pragma weak MPI_Cart_get = PMPI_Cart_get
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    static const char func[] = "MPI_Cart_get";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_CART, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = check_maxdims(func, c, t, maxdims);
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, dims, t->ndims, "dims");
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, periods, t->ndims, "periods");
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, coords, t->ndims, "coords");
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < t->ndims; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
    }
    if (t->ndims > 0)
        mf_topo_cart_coords(t, c->rank, coords);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_rank = PMPI_Cart_rank
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    static const char func[] = "MPI_Cart_rank";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_CART, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, rank, "rank");
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, coords, t->ndims, "coords");
    if (rc != MPI_SUCCESS)
        return rc;
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (t->periods[i])
            x = ((x % d) + d) % d;
        else if (x < 0 || x >= d)
            return mf_err_raise(c, mf_err_code(MPI_ERR_RANK, func,
                                               "argument coords[%d]=%d is outside [0, %d) in a "
                                               "non-periodic dimension",
                                               i, x, d));
        r = r * d + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_coords = PMPI_Cart_coords
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    static const char func[] = "MPI_Cart_coords";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_CART, &c, &t);
    if (rc == MPI_SUCCESS && (rank < 0 || rank >= c->size))
        rc = mf_err_raise(c, mf_err_code(MPI_ERR_RANK, func, "argument rank=%d is outside [0, %d)",
                                         rank, c->size));
    if (rc == MPI_SUCCESS)
        rc = check_maxdims(func, c, t, maxdims);
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, coords, t->ndims, "coords");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_topo_cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_shift = PMPI_Cart_shift
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    static const char func[] = "MPI_Cart_shift";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_CART, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, rank_source, "rank_source");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, rank_dest, "rank_dest");
    if (rc == MPI_SUCCESS && (direction < 0 || direction >= t->ndims))
        rc = mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                         "argument direction=%d is outside [0, ndims=%d)",
                                         direction, t->ndims));
    if (rc != MPI_SUCCESS)
        return rc;
    int *coords = mf_malloc(sizeof(int) * (size_t)t->ndims, "coordinates");
    if (coords == NULL)
        return mf_err_raise(c, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    mf_topo_cart_coords(t, c->rank, coords);
    int d = t->dims[direction], mine = coords[direction];
    int ends[2];
    /* ends[0]: the process `disp` steps back (the source), ends[1]: `disp` steps ahead. */
    for (int k = 0; k < 2; k++) {
        long long x = (long long)mine + (k == 0 ? -(long long)disp : (long long)disp);
        if (t->periods[direction]) {
            x = ((x % d) + d) % d;
        } else if (x < 0 || x >= d) {
            ends[k] = MPI_PROC_NULL;
            continue;
        }
        coords[direction] = (int)x;
        ends[k] = mf_topo_cart_rank(t, coords);
    }
    free(coords);
    *rank_source = ends[0];
    *rank_dest = ends[1];
    return MPI_SUCCESS;
}

#pragma weak MPI_Cart_sub = PMPI_Cart_sub
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Cart_sub";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_CART, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc == MPI_SUCCESS) /* a failed call leaves no stale handle behind */
        *newcomm = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, remain_dims, t->ndims, "remain_dims");
    if (rc != MPI_SUCCESS)
        return rc;
    int nd = t->ndims > 0 ? t->ndims : 1;
    int *buf = mf_malloc(sizeof(int) * 3 * (size_t)nd, "sub-grid");
    if (buf == NULL)
        return mf_err_raise(c, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    int *coords = buf, *dims = buf + nd, *periods = buf + 2 * nd;
    mf_topo_cart_coords(t, c->rank, coords);
    /* The processes sharing the dropped coordinates form one sub-grid; row-major order of the
     * kept coordinates is the parent's rank order, so the parent rank is the key. */
    int color = 0, kept = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            dims[kept] = t->dims[i];
            periods[kept++] = t->periods[i];
        } else {
            color = color * t->dims[i] + coords[i];
        }
    }
    mf_topo_t *sub = NULL;
    mf_comm_t *out = NULL;
    mf_status_t status = mf_topo_cart_new(kept, dims, periods, &sub);
    free(buf);
    if (status == MF_OK)
        status = mf_comm_split(c, color, c->rank, &out);
    if (status != MF_OK) {
        mf_topo_free(sub);
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    }
    out->topo = sub;
    *newcomm = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Dims_create = PMPI_Dims_create
int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char func[] = "MPI_Dims_create";
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (nnodes <= 0)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_ARG, func, "argument nnodes=%d is not positive", nnodes));
    if (ndims < 0)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_DIMS, func, "argument ndims=%d is negative", ndims));
    rc = check_array(func, NULL, dims, ndims, "dims");
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return mf_err_raise(NULL, mf_err_code(MPI_ERR_DIMS, func,
                                                  "argument dims[%d]=%d is negative", i, dims[i]));
    }
    mf_status_t status = mf_topo_dims_create(nnodes, ndims, dims);
    if (status == MF_ERR_INVALID)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_DIMS, func,
                                              "argument dims: nnodes=%d is not the product of "
                                              "the given extents times positive integers",
                                              nnodes));
    if (status != MF_OK)
        return mf_err_from_status(NULL, status, func, "cannot factorise");
    return MPI_SUCCESS;
}

/* ---- graph ------------------------------------------------------------------------------- */

static int check_graph_shape(const char *func, mf_comm_t *c, int nnodes, const int *index,
                             const int *edges)
{
    if (nnodes < 0 || nnodes > c->size)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                           "argument nnodes=%d is outside [0, %d] (the "
                                           "communicator's size)",
                                           nnodes, c->size));
    int rc = check_array(func, c, index, nnodes, "index");
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < nnodes; i++) {
        if (index[i] < (i > 0 ? index[i - 1] : 0))
            return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                               "argument index[%d]=%d is less than the previous "
                                               "entry (or negative)",
                                               i, index[i]));
    }
    int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
    rc = check_array(func, c, edges, nedges, "edges");
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < nedges; i++) {
        if (edges[i] < 0 || edges[i] >= nnodes)
            return mf_err_raise(c, mf_err_code(MPI_ERR_RANK, func,
                                               "argument edges[%d]=%d is not a node of [0, %d)", i,
                                               edges[i], nnodes));
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_create = PMPI_Graph_create
int PMPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder,
                      MPI_Comm *comm_graph)
{
    static const char func[] = "MPI_Graph_create";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm_arg(func, "comm_old", comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra_arg(func, "comm_old", c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, comm_graph, "comm_graph");
    if (rc == MPI_SUCCESS) /* a failed call leaves no stale handle behind */
        *comm_graph = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS)
        rc = check_graph_shape(func, c, nnodes, index, edges);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_topo_t *topo = NULL;
    mf_status_t status = mf_topo_graph_new(nnodes, index, edges, &topo);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot build the topology");
    return build_topo_comm(func, c, nnodes, NULL, topo, comm_graph);
}

#pragma weak MPI_Graph_map = PMPI_Graph_map
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    static const char func[] = "MPI_Graph_map";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra(func, c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newrank, "newrank");
    if (rc == MPI_SUCCESS)
        rc = check_graph_shape(func, c, nnodes, index, edges);
    if (rc != MPI_SUCCESS)
        return rc;
    *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

#pragma weak MPI_Graphdims_get = PMPI_Graphdims_get
int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char func[] = "MPI_Graphdims_get";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_GRAPH, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, nnodes, "nnodes");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, nedges, "nedges");
    if (rc != MPI_SUCCESS)
        return rc;
    *nnodes = t->nnodes;
    *nedges = t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_get = PMPI_Graph_get
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char func[] = "MPI_Graph_get";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_GRAPH, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = check_room(func, c, maxindex, "maxindex");
    if (rc == MPI_SUCCESS)
        rc = check_room(func, c, maxedges, "maxedges");
    if (rc != MPI_SUCCESS)
        return rc;
    int nedges = t->nnodes > 0 ? t->index[t->nnodes - 1] : 0;
    /* As many entries as the caller has room for (the standard's maxindex/maxedges). */
    int ni = maxindex < t->nnodes ? maxindex : t->nnodes;
    int ne = maxedges < nedges ? maxedges : nedges;
    rc = check_array(func, c, index, ni, "index");
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, edges, ne, "edges");
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < ni; i++)
        index[i] = t->index[i];
    for (int i = 0; i < ne; i++)
        edges[i] = t->edges[i];
    return MPI_SUCCESS;
}

static int check_graph_rank(const char *func, mf_comm_t *c, const mf_topo_t *t, int rank)
{
    if (rank >= 0 && rank < t->nnodes)
        return MPI_SUCCESS;
    return mf_err_raise(c,
                        mf_err_code(MPI_ERR_RANK, func, "argument rank=%d is not a node of [0, %d)",
                                    rank, t->nnodes));
}

#pragma weak MPI_Graph_neighbors_count = PMPI_Graph_neighbors_count
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char func[] = "MPI_Graph_neighbors_count";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_GRAPH, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = check_graph_rank(func, c, t, rank);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, nneighbors, "nneighbors");
    if (rc != MPI_SUCCESS)
        return rc;
    *nneighbors = t->index[rank] - (rank > 0 ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

#pragma weak MPI_Graph_neighbors = PMPI_Graph_neighbors
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char func[] = "MPI_Graph_neighbors";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_GRAPH, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = check_graph_rank(func, c, t, rank);
    if (rc == MPI_SUCCESS)
        rc = check_room(func, c, maxneighbors, "maxneighbors");
    if (rc != MPI_SUCCESS)
        return rc;
    int first = rank > 0 ? t->index[rank - 1] : 0;
    int n = t->index[rank] - first;
    if (maxneighbors < n)
        n = maxneighbors;
    rc = check_array(func, c, neighbors, n, "neighbors");
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++)
        neighbors[i] = t->edges[first + i];
    return MPI_SUCCESS;
}

/* ---- distributed graph ------------------------------------------------------------------- */

/* A list of `n` ranks of c with optional weights; *weighted_p: 1 weighted, 0 MPI_UNWEIGHTED. */
static int check_edges(const char *func, mf_comm_t *c, int n, const char *ndesc, const int *ranks,
                       const char *rdesc, const int *weights, const char *wdesc, int *weighted_p)
{
    if (n < 0)
        return mf_err_raise(c,
                            mf_err_code(MPI_ERR_ARG, func, "argument %s=%d is negative", ndesc, n));
    int rc = check_array(func, c, ranks, n, rdesc);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= c->size)
            return mf_err_raise(c, mf_err_code(MPI_ERR_RANK, func,
                                               "argument %s[%d]=%d is outside [0, %d)", rdesc, i,
                                               ranks[i], c->size));
    }
    *weighted_p = weights != MPI_UNWEIGHTED;
    if (weights == MPI_UNWEIGHTED || n == 0)
        return MPI_SUCCESS;
    if (weights == MPI_WEIGHTS_EMPTY)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                           "argument %s is MPI_WEIGHTS_EMPTY but %s=%d", wdesc,
                                           ndesc, n));
    rc = check_array(func, c, weights, n, wdesc);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < n; i++) {
        if (weights[i] < 0)
            return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func, "argument %s[%d]=%d is negative",
                                               wdesc, i, weights[i]));
    }
    return MPI_SUCCESS;
}

static int check_info(const char *func, mf_comm_t *c, MPI_Info info)
{
    if (info == MPI_INFO_NULL || info == MPI_INFO_ENV || mf_info_get_obj(info) != NULL)
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(MPI_ERR_INFO, func,
                                       "argument info: not a valid info "
                                       "object"));
}

#pragma weak MPI_Dist_graph_create_adjacent = PMPI_Dist_graph_create_adjacent
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    static const char func[] = "MPI_Dist_graph_create_adjacent";
    mf_comm_t *c = NULL;
    int win = 0, wout = 0;
    int rc = mf_check_init_comm_arg(func, "comm_old", comm_old, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra_arg(func, "comm_old", c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, comm_dist_graph, "comm_dist_graph");
    if (rc == MPI_SUCCESS) /* a failed call leaves no stale handle behind */
        *comm_dist_graph = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS)
        rc = check_info(func, c, info);
    if (rc == MPI_SUCCESS)
        rc = check_edges(func, c, indegree, "indegree", sources, "sources", sourceweights,
                         "sourceweights", &win);
    if (rc == MPI_SUCCESS)
        rc = check_edges(func, c, outdegree, "outdegree", destinations, "destinations", destweights,
                         "destweights", &wout);
    if (rc == MPI_SUCCESS && win != wout)
        rc = mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                         "arguments sourceweights and destweights: only one "
                                         "of them is MPI_UNWEIGHTED"));
    if (rc != MPI_SUCCESS)
        return rc;
    mf_topo_t *topo = NULL;
    mf_status_t status = mf_topo_dist_new(indegree, sources, sourceweights, outdegree, destinations,
                                          destweights, win, &topo);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot build the topology");
    return build_topo_comm(func, c, c->size, NULL, topo, comm_dist_graph);
}

/* One edge end as exchanged by MPI_Dist_graph_create: `dir` 0 = an outgoing edge of the
 * receiver towards `peer`, 1 = an incoming edge from `peer`. */
typedef struct {
    int dir, peer, weight;
} edge_msg_t;

/* Deliver every edge given here to both of its ends (two all-to-all exchanges: counts, then
 * the edges) and build this process's neighbour lists, ordered by the sender's rank. */
static mf_status_t dist_exchange(mf_comm_t *c, int n, const int *sources, const int *degrees,
                                 const int *dests, const int *weights, int weighted,
                                 mf_topo_t **topo_p)
{
    size_t p = (size_t)c->size;
    mf_status_t status = MF_ERR_NO_MEMORY;
    size_t nedges = 0;
    for (int i = 0; i < n; i++)
        nedges += (size_t)degrees[i];
    int *cnt = mf_calloc(2 * p, sizeof(int), "edge counts");
    size_t *lens = mf_malloc(sizeof(size_t) * 4 * p, "edge exchange");
    edge_msg_t *out = mf_malloc(sizeof(edge_msg_t) * (2 * nedges + 1), "edge exchange");
    edge_msg_t *in = NULL;
    int *lists = NULL;
    if (cnt == NULL || lens == NULL || out == NULL)
        goto out_free;
    size_t *slen = lens, *sdisp = lens + p, *rlen = lens + 2 * p, *rdisp = lens + 3 * p;
    int *scnt = cnt, *rcnt = cnt + p;
    for (int i = 0, e = 0; i < n; i++) {
        for (int j = 0; j < degrees[i]; j++, e++) {
            scnt[sources[i]]++;
            scnt[dests[e]]++;
        }
    }
    for (size_t r = 0; r < p; r++) {
        slen[r] = rlen[r] = sizeof(int);
        sdisp[r] = rdisp[r] = r * sizeof(int);
    }
    status = mf_coll_alltoallv(c, scnt, slen, sdisp, rcnt, rlen, rdisp);
    if (status != MF_OK)
        goto out_free;
    /* Pack the edge ends by destination process. */
    size_t total_in = 0;
    for (size_t r = 0; r < p; r++) {
        sdisp[r] = r == 0 ? 0 : sdisp[r - 1] + slen[r - 1];
        slen[r] = (size_t)scnt[r] * sizeof(edge_msg_t);
        rdisp[r] = total_in * sizeof(edge_msg_t);
        rlen[r] = (size_t)rcnt[r] * sizeof(edge_msg_t);
        total_in += (size_t)rcnt[r];
    }
    for (size_t r = 0; r < p; r++)
        scnt[r] = 0; /* reused as fill positions */
    for (int i = 0, e = 0; i < n; i++) {
        for (int j = 0; j < degrees[i]; j++, e++) {
            int w = weighted ? weights[e] : 1;
            int s = sources[i], d = dests[e];
            edge_msg_t *m = out + sdisp[s] / sizeof(edge_msg_t) + (size_t)scnt[s]++;
            *m = (edge_msg_t){0, d, w};
            m = out + sdisp[d] / sizeof(edge_msg_t) + (size_t)scnt[d]++;
            *m = (edge_msg_t){1, s, w};
        }
    }
    status = MF_ERR_NO_MEMORY;
    in = mf_malloc(sizeof(edge_msg_t) * (total_in + 1), "edge exchange");
    lists = mf_malloc(sizeof(int) * 4 * (total_in + 1), "neighbour lists");
    if (in == NULL || lists == NULL)
        goto out_free;
    status = mf_coll_alltoallv(c, out, slen, sdisp, in, rlen, rdisp);
    if (status != MF_OK)
        goto out_free;
    int *src = lists, *sw = lists + total_in + 1, *dst = lists + 2 * (total_in + 1),
        *dw = lists + 3 * (total_in + 1);
    int nin = 0, nout = 0;
    for (size_t k = 0; k < total_in; k++) {
        if (in[k].dir == 1) {
            src[nin] = in[k].peer;
            sw[nin++] = in[k].weight;
        } else {
            dst[nout] = in[k].peer;
            dw[nout++] = in[k].weight;
        }
    }
    status = mf_topo_dist_new(nin, src, sw, nout, dst, dw, weighted, topo_p);
out_free:
    free(lists);
    free(in);
    free(out);
    free(lens);
    free(cnt);
    return status;
}

#pragma weak MPI_Dist_graph_create = PMPI_Dist_graph_create
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    static const char func[] = "MPI_Dist_graph_create";
    mf_comm_t *c = NULL;
    int weighted = 0, dummy = 0;
    int rc = mf_check_init_comm_arg(func, "comm_old", comm_old, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra_arg(func, "comm_old", c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, comm_dist_graph, "comm_dist_graph");
    if (rc == MPI_SUCCESS) /* a failed call leaves no stale handle behind */
        *comm_dist_graph = MPI_COMM_NULL;
    if (rc == MPI_SUCCESS)
        rc = check_info(func, c, info);
    if (rc == MPI_SUCCESS)
        rc = check_edges(func, c, n, "n", sources, "sources", MPI_UNWEIGHTED, "", &dummy);
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, degrees, n, "degrees");
    if (rc != MPI_SUCCESS)
        return rc;
    long long nedges = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return mf_err_raise(c,
                                mf_err_code(MPI_ERR_ARG, func,
                                            "argument degrees[%d]=%d is negative", i, degrees[i]));
        nedges += degrees[i];
    }
    if (nedges > 0x7fffffff)
        return mf_err_raise(
            c, mf_err_code(MPI_ERR_ARG, func, "argument degrees: more than INT_MAX edges"));
    rc = check_edges(func, c, (int)nedges, "sum of degrees", destinations, "destinations", weights,
                     "weights", &weighted);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_topo_t *topo = NULL;
    mf_status_t status =
        dist_exchange(c, n, sources, degrees, destinations, weights, weighted, &topo);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot exchange the graph's edges");
    return build_topo_comm(func, c, c->size, NULL, topo, comm_dist_graph);
}

#pragma weak MPI_Dist_graph_neighbors_count = PMPI_Dist_graph_neighbors_count
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char func[] = "MPI_Dist_graph_neighbors_count";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_DIST_GRAPH, &c, &t);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, indegree, "indegree");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, outdegree, "outdegree");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, weighted, "weighted");
    if (rc != MPI_SUCCESS)
        return rc;
    *indegree = t->indegree;
    *outdegree = t->outdegree;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}

/* Copy up to `max` neighbours, and their weights when the graph has some and the caller wants
 * them (weights not MPI_UNWEIGHTED). */
static void copy_neighbours(int max, int n, const int *ranks, const int *w, int *out_ranks,
                            int *out_w)
{
    if (max < n)
        n = max;
    for (int i = 0; i < n; i++)
        out_ranks[i] = ranks[i];
    if (w != NULL && out_w != MPI_UNWEIGHTED && out_w != MPI_WEIGHTS_EMPTY && out_w != NULL) {
        for (int i = 0; i < n; i++)
            out_w[i] = w[i];
    }
}

#pragma weak MPI_Dist_graph_neighbors = PMPI_Dist_graph_neighbors
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    static const char func[] = "MPI_Dist_graph_neighbors";
    mf_comm_t *c = NULL;
    mf_topo_t *t = NULL;
    int rc = check_topo_comm(func, comm, MPI_DIST_GRAPH, &c, &t);
    if (rc != MPI_SUCCESS)
        return rc;
    if (maxindegree < t->indegree)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                           "argument maxindegree=%d is less than the indegree %d",
                                           maxindegree, t->indegree));
    if (maxoutdegree < t->outdegree)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                           "argument maxoutdegree=%d is less than the outdegree %d",
                                           maxoutdegree, t->outdegree));
    rc = check_array(func, c, sources, t->indegree, "sources");
    if (rc == MPI_SUCCESS)
        rc = check_array(func, c, destinations, t->outdegree, "destinations");
    /* A weighted graph's weights are asked for unless the caller says MPI_UNWEIGHTED: NULL is no
     * array (it was skipped and the call succeeded). */
    if (rc == MPI_SUCCESS && t->sourceweights != NULL)
        rc = check_array(func, c, sourceweights, t->indegree, "sourceweights");
    if (rc == MPI_SUCCESS && t->destweights != NULL)
        rc = check_array(func, c, destweights, t->outdegree, "destweights");
    if (rc != MPI_SUCCESS)
        return rc;
    copy_neighbours(maxindegree, t->indegree, t->sources, t->sourceweights, sources, sourceweights);
    copy_neighbours(maxoutdegree, t->outdegree, t->dests, t->destweights, destinations,
                    destweights);
    return MPI_SUCCESS;
}

#pragma weak MPI_Topo_test = PMPI_Topo_test
int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    static const char func[] = "MPI_Topo_test";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, status, "status");
    if (rc != MPI_SUCCESS)
        return rc;
    *status = c->topo != NULL ? c->topo->type : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
