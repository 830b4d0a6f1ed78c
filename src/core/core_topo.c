/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: process topologies as data (see core_topo.h). Cartesian ranks are row-major, the
 * last dimension varying fastest, as the standard requires. MPI_Dims_create searches the
 * factorisations of the free part exhaustively (extents in non-increasing order, pruned by
 * the product), keeping the one with the smallest spread between the largest and smallest
 * extent: the greedy "largest prime to the smallest extent" rule misses cases such as 72 over
 * two dimensions (12x6 instead of 9x8). Among choices of equal spread, which are many once
 * an extent must be 1, the smallest sum of squares wins: 68 over four dimensions is 17x2x2x1,
 * not 17x4x1x1.
 */
#include "core.h"

#include "core_topo.h"
#include "pmi.h"

#include <stdlib.h>
#include <string.h>

static int *copy_ints(const int *src, int n, int *ok_p)
{
    if (n <= 0 || src == NULL)
        return NULL;
    int *dst = mf_malloc(sizeof(int) * (size_t)n, "topology");
    if (dst == NULL) {
        *ok_p = 0;
        return NULL;
    }
    memcpy(dst, src, sizeof(int) * (size_t)n);
    return dst;
}

static mf_topo_t *topo_alloc(int type)
{
    mf_topo_t *topo = mf_calloc(1, sizeof(*topo), "topology");
    if (topo != NULL)
        topo->type = type;
    return topo;
}

mf_status_t mf_topo_cart_new(int ndims, const int *dims, const int *periods, mf_topo_t **topo_p)
{
    mf_topo_t *topo = topo_alloc(MPI_CART);
    if (topo == NULL)
        return MF_ERR_NO_MEMORY;
    int ok = 1;
    topo->ndims = ndims;
    topo->dims = copy_ints(dims, ndims, &ok);
    topo->periods = mf_calloc(ndims > 0 ? (size_t)ndims : 1, sizeof(int), "topology");
    if (!ok || topo->periods == NULL) {
        mf_topo_free(topo);
        return MF_ERR_NO_MEMORY;
    }
    for (int i = 0; i < ndims; i++)
        topo->periods[i] = periods != NULL && periods[i] != 0;
    *topo_p = topo;
    return MF_OK;
}

mf_status_t mf_topo_graph_new(int nnodes, const int *index, const int *edges, mf_topo_t **topo_p)
{
    mf_topo_t *topo = topo_alloc(MPI_GRAPH);
    if (topo == NULL)
        return MF_ERR_NO_MEMORY;
    int ok = 1;
    topo->nnodes = nnodes;
    topo->index = copy_ints(index, nnodes, &ok);
    topo->edges = copy_ints(edges, nnodes > 0 ? index[nnodes - 1] : 0, &ok);
    if (!ok) {
        mf_topo_free(topo);
        return MF_ERR_NO_MEMORY;
    }
    *topo_p = topo;
    return MF_OK;
}

mf_status_t mf_topo_dist_new(int indegree, const int *sources, const int *sw, int outdegree,
                             const int *dests, const int *dw, int weighted, mf_topo_t **topo_p)
{
    mf_topo_t *topo = topo_alloc(MPI_DIST_GRAPH);
    if (topo == NULL)
        return MF_ERR_NO_MEMORY;
    int ok = 1;
    topo->weighted = weighted;
    topo->indegree = indegree;
    topo->outdegree = outdegree;
    topo->sources = copy_ints(sources, indegree, &ok);
    topo->dests = copy_ints(dests, outdegree, &ok);
    if (weighted) {
        topo->sourceweights = copy_ints(sw, indegree, &ok);
        topo->destweights = copy_ints(dw, outdegree, &ok);
    }
    if (!ok) {
        mf_topo_free(topo);
        return MF_ERR_NO_MEMORY;
    }
    *topo_p = topo;
    return MF_OK;
}

mf_status_t mf_topo_dup(const mf_topo_t *topo, mf_topo_t **topo_p)
{
    switch (topo->type) {
    case MPI_CART: return mf_topo_cart_new(topo->ndims, topo->dims, topo->periods, topo_p);
    case MPI_GRAPH: return mf_topo_graph_new(topo->nnodes, topo->index, topo->edges, topo_p);
    default:
        return mf_topo_dist_new(topo->indegree, topo->sources, topo->sourceweights, topo->outdegree,
                                topo->dests, topo->destweights, topo->weighted, topo_p);
    }
}

void mf_topo_free(mf_topo_t *topo)
{
    if (topo == NULL)
        return;
    free(topo->dims);
    free(topo->periods);
    free(topo->index);
    free(topo->edges);
    free(topo->sources);
    free(topo->sourceweights);
    free(topo->dests);
    free(topo->destweights);
    free(topo);
}

int mf_topo_cart_rank(const mf_topo_t *topo, const int *coords)
{
    int rank = 0;
    for (int i = 0; i < topo->ndims; i++)
        rank = rank * topo->dims[i] + coords[i];
    return rank;
}

void mf_topo_cart_coords(const mf_topo_t *topo, int rank, int *coords)
{
    for (int i = topo->ndims - 1; i >= 0; i--) {
        coords[i] = rank % topo->dims[i];
        rank /= topo->dims[i];
    }
}

int mf_topo_dims_product(int ndims, const int *dims)
{
    long long product = 1;
    for (int i = 0; i < ndims; i++) {
        product *= dims[i];
        if (product > 0x7fffffff)
            return -1;
    }
    return (int)product;
}

typedef struct {
    int k;    /* free extents to choose */
    int ndiv; /* divisors of the free part, ascending */
    const int *div;
    int *cur;  /* the choice being built, non-increasing */
    int *best; /* the best complete choice so far */
    int found;
    int spread;      /* best[0] - best[k-1] */
    long long sumsq; /* the sum of the squares of best[] */
} dims_search_t;

/* d^n >= target, without overflow. */
static int pow_reaches(int d, int n, long long target)
{
    long long reach = 1;
    for (int j = 0; j < n && reach < target; j++)
        reach *= d;
    return reach >= target;
}

/* Choose cur[pos..k-1] with product `rest`, each at most cur[pos-1] (pos >= 1); `sumsq` is
 * the sum of the squares of cur[0..pos-1]. */
static void dims_search(dims_search_t *s, int pos, int rest, long long sumsq)
{
    int limit = s->cur[pos - 1];
    if (pos == s->k - 1) {
        if (rest > limit)
            return;
        s->cur[pos] = rest;
        int spread = s->cur[0] - rest;
        sumsq += (long long)rest * rest;
        if (!s->found || spread < s->spread || (spread == s->spread && sumsq < s->sumsq)) {
            s->found = 1;
            s->spread = spread;
            s->sumsq = sumsq;
            memcpy(s->best, s->cur, sizeof(int) * (size_t)s->k);
        }
        return;
    }
    for (int i = s->ndiv - 1; i >= 0; i--) {
        int d = s->div[i];
        if (d > limit || rest % d != 0)
            continue;
        /* d is the largest of the extents left, so d^(k-pos) must reach rest; smaller d
         * cannot either, and they only widen the spread. */
        if (!pow_reaches(d, s->k - pos, rest))
            break;
        if (s->found && s->cur[0] - d > s->spread)
            break;
        /* Whatever follows adds at least d^2 and one more square of an extent >= 1. */
        if (s->found && s->cur[0] - d == s->spread && sumsq + (long long)d * d + 1 >= s->sumsq)
            continue;
        s->cur[pos] = d;
        dims_search(s, pos + 1, rest / d, sumsq + (long long)d * d);
    }
}

static int int_cmp(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

mf_status_t mf_topo_dims_create(int nnodes, int ndims, int *dims)
{
    long long fixed = 1;
    int nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] > 0)
            fixed = fixed * dims[i] > nnodes ? (long long)nnodes + 1 : fixed * dims[i];
        else
            nfree++;
    }
    if (nnodes % fixed != 0)
        return MF_ERR_INVALID;
    if (nfree == 0)
        return nnodes == fixed ? MF_OK : MF_ERR_INVALID;
    int rest = (int)(nnodes / fixed);
    /* An int has at most 1600 divisors. */
    int *buf = mf_malloc(sizeof(int) * (2 * (size_t)nfree + 1600), "dimension search");
    if (buf == NULL)
        return MF_ERR_NO_MEMORY;
    int *div = buf + 2 * nfree, ndiv = 0;
    for (long long d = 1; d * d <= rest; d++) {
        if (rest % d == 0) {
            div[ndiv++] = (int)d;
            if (d * d != rest)
                div[ndiv++] = (int)(rest / d);
        }
    }
    qsort(div, (size_t)ndiv, sizeof(int), int_cmp);
    dims_search_t s = {.k = nfree, .ndiv = ndiv, .div = div, .cur = buf, .best = buf + nfree};
    if (nfree == 1) {
        s.best[0] = rest;
    } else {
        /* The largest extent, ascending from the smallest possible; the smallest extent is at
         * most the k-th root, so once d minus that root reaches the best spread, stop. */
        int root = 1;
        for (int i = 0; i < ndiv && !pow_reaches(div[i], nfree, (long long)rest + 1); i++)
            root = div[i];
        for (int i = 0; i < ndiv; i++) {
            int d = div[i];
            if (!pow_reaches(d, nfree, rest))
                continue;
            if (s.found && d - root > s.spread)
                break;
            s.cur[0] = d;
            dims_search(&s, 1, rest / d, (long long)d * d);
        }
    }
    for (int i = 0, j = 0; i < ndims; i++) {
        if (dims[i] == 0)
            dims[i] = s.best[j++];
    }
    free(buf);
    return MF_OK;
}

/* ---- reordering by node ------------------------------------------------------------------ */

mf_status_t mf_topo_node_order(mf_comm_t *comm, int n, int *order)
{
    for (int i = 0; i < n; i++)
        order[i] = i;
    if (mf_comm_spans_jobs(comm))
        return MF_OK; /* the launcher's node map covers one job */
    int *node_of = mf_malloc(sizeof(int) * (size_t)mf_global.world_size, "node map");
    if (node_of == NULL)
        return MF_ERR_NO_MEMORY;
    if (mf_pmi_get_node_map(node_of, mf_global.world_size) != MF_OK) {
        free(node_of); /* one node or unknown: keep the parent's order */
        return MF_OK;
    }
    /* Group by node, nodes in the order of their first process, stable inside a node: a
     * selection of each node's processes in turn (quadratic, but n is a grid's size and this
     * runs once per constructor). */
    char *placed = mf_calloc((size_t)(n > 0 ? n : 1), 1, "reorder marks");
    if (placed == NULL) {
        free(node_of);
        return MF_ERR_NO_MEMORY;
    }
    int next = 0;
    for (int first = 0; first < n; first++) {
        if (placed[first])
            continue;
        int node = node_of[mf_comm_world_rank(comm, first)];
        for (int i = first; i < n; i++) {
            if (!placed[i] && node_of[mf_comm_world_rank(comm, i)] == node) {
                placed[i] = 1;
                order[next++] = i;
            }
        }
    }
    free(placed);
    free(node_of);
    return MF_OK;
}
