/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbourhood collectives on process topologies, built as schedules (one round: every send
 * and receive at once), so the blocking forms are start + wait and the non-blocking and
 * persistent forms come for free. The neighbour order is the standard's: Cartesian, for each
 * dimension the -1 then the +1 neighbour (MPI_PROC_NULL kept as a slot that moves nothing);
 * graph, the order of MPI_Graph_neighbors; distributed graph, sources and destinations in the
 * order given.
 */
#include "coll.h"

#include "core_topo.h"

#include <stdlib.h>

mf_status_t mf_neighbor_lists(mf_comm_t *comm, int *indeg_p, int **in_p, int *outdeg_p, int **out_p)
{
    const mf_topo_t *t = comm->topo;
    int indeg = 0, outdeg = 0, *in = NULL, *out = NULL;
    if (t == NULL)
        return MF_ERR_INVALID;
    if (t->type == MPI_CART) {
        indeg = outdeg = 2 * t->ndims;
        in = mf_malloc(2 * ((size_t)indeg + 1) * sizeof(int), "neighbour list");
        int *coords = mf_malloc(((size_t)t->ndims + 1) * sizeof(int), "neighbour coordinates");
        if (in == NULL || coords == NULL) {
            free(in);
            free(coords);
            return MF_ERR_NO_MEMORY;
        }
        out = in + indeg;
        mf_topo_cart_coords(t, comm->rank, coords);
        for (int d = 0; d < t->ndims; d++) {
            for (int dir = 0; dir < 2; dir++) {
                int save = coords[d], c = save + (dir == 0 ? -1 : 1), peer = MPI_PROC_NULL;
                if (t->periods[d])
                    c = ((c % t->dims[d]) + t->dims[d]) % t->dims[d];
                if (c >= 0 && c < t->dims[d]) {
                    coords[d] = c;
                    peer = mf_topo_cart_rank(t, coords);
                    coords[d] = save;
                }
                in[2 * d + dir] = peer;
            }
        }
        free(coords);
        for (int k = 0; k < indeg; k++)
            out[k] = in[k];
    } else if (t->type == MPI_GRAPH) {
        int first = comm->rank > 0 ? t->index[comm->rank - 1] : 0;
        indeg = outdeg = t->index[comm->rank] - first;
        in = mf_malloc(2 * ((size_t)indeg + 1) * sizeof(int), "neighbour list");
        if (in == NULL)
            return MF_ERR_NO_MEMORY;
        out = in + indeg;
        for (int k = 0; k < indeg; k++)
            in[k] = out[k] = t->edges[first + k];
    } else {
        indeg = t->indegree;
        outdeg = t->outdegree;
        in = mf_malloc(((size_t)indeg + (size_t)outdeg + 1) * sizeof(int), "neighbour list");
        if (in == NULL)
            return MF_ERR_NO_MEMORY;
        out = in + indeg;
        for (int k = 0; k < indeg; k++)
            in[k] = t->sources[k];
        for (int k = 0; k < outdeg; k++)
            out[k] = t->dests[k];
    }
    *indeg_p = indeg;
    *outdeg_p = outdeg;
    *in_p = in;
    *out_p = out;
    return MF_OK;
}

void mf_nbc_neighbor_alltoallv(mf_sched_t *s, int cart, int indeg, const int *in, int outdeg,
                               const int *out, const void *sbuf, const size_t *slens,
                               const size_t *sdispls, void *rbuf, const size_t *rlens,
                               const size_t *rdispls)
{
    const char *sb = sbuf;
    char *rb = rbuf;
    /* Receives are posted before the sends, and in an order that pairs messages correctly
     * when both Cartesian neighbours of a dimension are one process (a periodic dimension of
     * extent 1 or 2): what a process sends to its -1 neighbour arrives in that neighbour's +1
     * slot, so each dimension receives its +1 slot first, matching the sender's -1 first. */
    for (int k = 0; k < indeg; k++) {
        int slot = cart ? (k ^ 1) : k;
        mf_sched_recv(s, rlens[slot] ? rb + rdispls[slot] : rb, rlens[slot], in[slot]);
    }
    for (int k = 0; k < outdeg; k++)
        mf_sched_send(s, slens[k] ? sb + sdispls[k] : sb, slens[k], out[k]);
}
