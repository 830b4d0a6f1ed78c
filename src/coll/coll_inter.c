/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective layer: collectives on intercommunicators (MPI-4.1 section 6.2.2), written as
 * schedules so the blocking, non-blocking and persistent forms share them (the blocking form
 * runs the schedule and waits, mf_inter_run). Each algorithm mixes steps to the remote group
 * (point-to-point ranks of the intercommunicator) with steps over the local group's private
 * intracommunicator (comm->local_comm), reusing the intracommunicator schedules there; the
 * two groups' rank 0 processes ("leaders") carry whatever crosses between the groups in bulk.
 * Rooted collectives take the root argument as the user passed it: MPI_ROOT at the root,
 * MPI_PROC_NULL at the other processes of its group (they do nothing), the root's rank in the
 * remote group elsewhere. Lengths and displacements are bytes, as in the intracommunicator
 * algorithms; counts of the "all" side describe the remote group.
 */
#include "coll.h"

#include "pt2pt.h"

/* The local half runs over local_comm, then the schedule addresses the remote group again. */
static mf_comm_t *local_on(mf_sched_t *s, mf_comm_t *inter)
{
    mf_sched_barrier(s);
    mf_sched_on(s, inter->local_comm);
    return inter->local_comm;
}

static void remote_on(mf_sched_t *s, mf_comm_t *inter)
{
    mf_sched_barrier(s);
    mf_sched_on(s, inter);
}

void mf_inter_barrier(mf_sched_t *s)
{
    mf_comm_t *inter = mf_sched_comm(s);
    char *token = mf_sched_tmp(s, 2);
    if (token == NULL)
        return;
    /* Everyone of my group has arrived, the leaders tell each other, then each leader releases
     * its group: nobody leaves before every process of both groups has entered. */
    local_on(s, inter);
    mf_nbc_barrier(s);
    remote_on(s, inter);
    if (inter->rank == 0) {
        mf_sched_send(s, token, 1, 0);
        mf_sched_recv(s, token + 1, 1, 0);
    }
    local_on(s, inter);
    mf_nbc_bcast(s, token + 1, 1, 0);
    remote_on(s, inter);
}

void mf_inter_bcast(mf_sched_t *s, void *buf, size_t len, int root)
{
    mf_comm_t *inter = mf_sched_comm(s);
    if (root == MPI_PROC_NULL)
        return;
    if (root == MPI_ROOT) {
        mf_sched_send(s, buf, len, 0);
        mf_sched_barrier(s);
        return;
    }
    if (inter->rank == 0)
        mf_sched_recv(s, buf, len, root);
    local_on(s, inter);
    mf_nbc_bcast(s, buf, len, 0);
    remote_on(s, inter);
}

/* The local group's contributions reduced at its leader (rank order kept); NULL elsewhere. */
static char *reduce_local(mf_sched_t *s, mf_comm_t *inter, const void *sbuf, size_t count,
                          MPI_Datatype dt, size_t extent, MPI_Op op)
{
    char *acc = NULL;
    if (inter->rank == 0 && (acc = mf_sched_tmp(s, count * extent)) == NULL)
        return NULL;
    local_on(s, inter);
    mf_nbc_reduce(s, sbuf, acc, count, dt, extent, op, 0);
    remote_on(s, inter);
    return acc;
}

void mf_inter_reduce(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                     size_t extent, MPI_Op op, int root)
{
    mf_comm_t *inter = mf_sched_comm(s);
    if (root == MPI_PROC_NULL)
        return;
    if (root == MPI_ROOT) {
        mf_sched_recv(s, rbuf, count * extent, 0);
        mf_sched_barrier(s);
        return;
    }
    char *acc = reduce_local(s, inter, sbuf, count, dt, extent, op);
    if (inter->rank == 0 && acc != NULL)
        mf_sched_send(s, acc, count * extent, root);
    mf_sched_barrier(s);
}

void mf_inter_allreduce(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                        size_t extent, MPI_Op op)
{
    mf_comm_t *inter = mf_sched_comm(s);
    size_t len = count * extent;
    /* Each group's result is the other group's reduction: reduce locally, leaders swap,
     * broadcast locally. */
    char *acc = reduce_local(s, inter, sbuf, count, dt, extent, op);
    if (inter->rank == 0 && acc != NULL) {
        mf_sched_send(s, acc, len, 0);
        mf_sched_recv(s, rbuf, len, 0);
    }
    local_on(s, inter);
    mf_nbc_bcast(s, rbuf, len, 0);
    remote_on(s, inter);
}

void mf_inter_gatherv(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf, const size_t *rlens,
                      const size_t *rdispls, int root)
{
    mf_comm_t *inter = mf_sched_comm(s);
    if (root == MPI_PROC_NULL)
        return;
    if (root != MPI_ROOT) {
        mf_sched_send(s, sbuf, slen, root);
    } else {
        for (int i = 0; i < inter->remote_size; i++)
            mf_sched_recv(s, (char *)rbuf + rdispls[i], rlens[i], i);
    }
    mf_sched_barrier(s);
}

void mf_inter_scatterv(mf_sched_t *s, const void *sbuf, const size_t *slens, const size_t *sdispls,
                       void *rbuf, size_t rlen, int root)
{
    mf_comm_t *inter = mf_sched_comm(s);
    if (root == MPI_PROC_NULL)
        return;
    if (root != MPI_ROOT) {
        mf_sched_recv(s, rbuf, rlen, root);
    } else {
        for (int i = 0; i < inter->remote_size; i++)
            mf_sched_send(s, (const char *)sbuf + sdispls[i], slens[i], i);
    }
    mf_sched_barrier(s);
}

void mf_inter_allgather(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf, size_t rlen)
{
    mf_comm_t *inter = mf_sched_comm(s);
    int lsize = inter->size;
    /* Every process of a group sends the same amount (it must match the other group's single
     * receive count), so the leader can gather its group's blocks back to back, swap them with
     * the other leader, and broadcast what it got. */
    size_t *lens = mf_sched_tmp(s, 2 * (size_t)lsize * sizeof(size_t));
    char *mine = inter->rank == 0 ? mf_sched_tmp(s, (size_t)lsize * slen) : NULL;
    if (lens == NULL || (inter->rank == 0 && mine == NULL))
        return;
    for (int i = 0; i < lsize; i++) {
        lens[i] = slen;
        lens[lsize + i] = (size_t)i * slen;
    }
    size_t total = (size_t)inter->remote_size * rlen;
    local_on(s, inter);
    mf_nbc_gatherv(s, sbuf, slen, mine, lens, lens + lsize, 0);
    remote_on(s, inter);
    if (inter->rank == 0) {
        mf_sched_send(s, mine, (size_t)lsize * slen, 0);
        mf_sched_recv(s, rbuf, total, 0);
    }
    local_on(s, inter);
    mf_nbc_bcast(s, rbuf, total, 0);
    remote_on(s, inter);
}

void mf_inter_allgatherv(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf,
                         const size_t *rlens, const size_t *rdispls)
{
    mf_comm_t *inter = mf_sched_comm(s);
    /* The lengths of the other processes of my group are not known here: exchange directly. */
    for (int i = 0; i < inter->remote_size; i++) {
        mf_sched_recv(s, (char *)rbuf + rdispls[i], rlens[i], i);
        mf_sched_send(s, sbuf, slen, i);
    }
    mf_sched_barrier(s);
}

void mf_inter_alltoallv(mf_sched_t *s, const void *sbuf, const size_t *slens, const size_t *sdispls,
                        void *rbuf, const size_t *rlens, const size_t *rdispls)
{
    mf_comm_t *inter = mf_sched_comm(s);
    /* Data only crosses between the groups: no own block, no ordering to respect. */
    for (int i = 0; i < inter->remote_size; i++) {
        mf_sched_recv(s, (char *)rbuf + rdispls[i], rlens[i], i);
        mf_sched_send(s, (const char *)sbuf + sdispls[i], slens[i], i);
    }
    mf_sched_barrier(s);
}

void mf_inter_reduce_scatter(mf_sched_t *s, const void *sbuf, void *rbuf, const size_t *counts,
                             MPI_Datatype dt, size_t extent, MPI_Op op)
{
    mf_comm_t *inter = mf_sched_comm(s);
    int lsize = inter->size;
    size_t *lens = mf_sched_tmp(s, 2 * (size_t)lsize * sizeof(size_t));
    if (lens == NULL)
        return;
    size_t total = 0;
    for (int i = 0; i < lsize; i++) {
        lens[i] = counts[i] * extent;
        lens[lsize + i] = total * extent;
        total += counts[i];
    }
    /* The vector reduced over the other group is scattered over mine: reduce locally, the
     * leaders swap, each scatters what it received. */
    char *acc = reduce_local(s, inter, sbuf, total, dt, extent, op);
    char *theirs = inter->rank == 0 ? mf_sched_tmp(s, total * extent) : NULL;
    if (inter->rank == 0) {
        if (acc == NULL || theirs == NULL)
            return;
        mf_sched_send(s, acc, total * extent, 0);
        mf_sched_recv(s, theirs, total * extent, 0);
    }
    local_on(s, inter);
    mf_nbc_scatterv(s, theirs, lens, lens + lsize, rbuf, lens[inter->local_comm->rank], 0);
    remote_on(s, inter);
}

mf_status_t mf_inter_run(mf_sched_t *s, int *err_class_p)
{
    mf_request_t *req = NULL;
    *err_class_p = MPI_SUCCESS;
    mf_status_t status = mf_sched_request(s, 0, &req);
    if (status != MF_OK)
        return status;
    MPI_Request handle = req;
    mf_request_wait_done(req);
    *err_class_p = mf_request_complete(&handle, MPI_STATUS_IGNORE);
    return MF_OK;
}
