/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Each thread communicates on a communicator of its own, created in the main thread before
 * the threads start: even threads get an MPI_Comm_dup of MPI_COMM_WORLD, odd threads an
 * MPI_Comm_split of it with the ranks reversed. All threads use the same tags, so only the
 * communicator keeps their traffic apart. Per iteration a thread does a ring MPI_Sendrecv,
 * then receives one message from every other process with MPI_ANY_SOURCE/MPI_ANY_TAG (safe
 * here because nobody else receives on that communicator), then an MPI_Barrier on its
 * communicator. Contents carry the thread number, so cross-talk is detected.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define ITERATIONS 200
#define MAX_COUNT  300
#define MAX_RANKS  16

struct thread_arg {
    int id;
    MPI_Comm comm;
};

static void ring_exchange(const struct thread_arg *a, int rank, int size, int it)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int count = 1 + (it * 13) % MAX_COUNT, got = -1;
    uint32_t sbuf[MAX_COUNT] = {0}, rbuf[MAX_COUNT];
    MPI_Status status;

    mt_fill(sbuf, count, rank, a->id, it);
    MPI_Sendrecv(sbuf, count, MPI_UINT32_T, right, 0, rbuf, count, MPI_UINT32_T, left, 0, a->comm,
                 &status);
    MPI_Get_count(&status, MPI_UINT32_T, &got);
    MTEST_CHECK(got == count && status.MPI_SOURCE == left && status.MPI_TAG == 0,
                "thread %d: ring status %d/%d/%d", a->id, status.MPI_SOURCE, status.MPI_TAG, got);
    MTEST_CHECK(mt_verify(rbuf, count, left, a->id, it) < 0,
                "thread %d iteration %d: ring message has wrong contents", a->id, it);
}

/* One message from every other process, received with both wildcards. */
static void wildcard_exchange(const struct thread_arg *a, int rank, int size, int it)
{
    uint32_t sbuf[2], rbuf[MAX_RANKS][2];
    MPI_Request reqs[MAX_RANKS];
    MPI_Status statuses[MAX_RANKS];
    int seen[MAX_RANKS] = {0};

    for (int k = 0; k < size - 1; k++)
        MPI_Irecv(rbuf[k], 2, MPI_UINT32_T, MPI_ANY_SOURCE, MPI_ANY_TAG, a->comm, &reqs[k]);
    sbuf[0] = (uint32_t)rank;
    sbuf[1] = mt_pattern(rank, a->id, it, 0);
    for (int k = 1; k < size; k++)
        MPI_Send(sbuf, 2, MPI_UINT32_T, (rank + k) % size, it % 7, a->comm);
    MPI_Waitall(size - 1, reqs, statuses);
    for (int k = 0; k < size - 1; k++) {
        int src = statuses[k].MPI_SOURCE;

        MTEST_CHECK(src >= 0 && src < size && src != rank && (int)rbuf[k][0] == src,
                    "thread %d: wildcard receive from %d carries rank %u", a->id, src, rbuf[k][0]);
        MTEST_CHECK(statuses[k].MPI_TAG == it % 7, "thread %d: tag %d, expected %d", a->id,
                    statuses[k].MPI_TAG, it % 7);
        MTEST_CHECK(rbuf[k][1] == mt_pattern(src, a->id, it, 0),
                    "thread %d iteration %d: message from another thread or iteration", a->id, it);
        if (src >= 0 && src < size)
            seen[src]++;
    }
    for (int r = 0; r < size; r++)
        MTEST_CHECK(seen[r] == (r != rank), "thread %d: %d messages from %d", a->id, seen[r], r);
}

static void *thread_main(void *arg)
{
    const struct thread_arg *a = arg;
    int rank, size;

    MPI_Comm_rank(a->comm, &rank);
    MPI_Comm_size(a->comm, &size);
    for (int it = 0; it < ITERATIONS; it++) {
        ring_exchange(a, rank, size, it);
        wildcard_exchange(a, rank, size, it);
        /* Without it a fast process's next wildcard message could match a slow process's
         * receive of this round when there are more than three processes. */
        MPI_Barrier(a->comm);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];
    int wrank, wsize, nthreads;

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MTEST_CHECK(wsize >= 2 && wsize <= MAX_RANKS, "needs 2..%d processes", MAX_RANKS);
    if (wsize < 2 || wsize > MAX_RANKS)
        return mtest_finalize(0);

    nthreads = mt_nthreads(4, 1);
    for (int t = 0; t < nthreads; t++) {
        int rc, crank = -1;

        args[t].id = t;
        if (t % 2 == 0)
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &args[t].comm);
        else
            rc = MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &args[t].comm);
        MTEST_CHECK(rc == MPI_SUCCESS, "creating the communicator of thread %d failed", t);
        if (rc != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Comm_rank(args[t].comm, &crank);
        MTEST_CHECK(crank == (t % 2 == 0 ? wrank : wsize - 1 - wrank),
                    "thread %d: rank %d in its communicator", t, crank);
    }
    mt_run(nthreads, thread_main, args, sizeof(args[0]));
    for (int t = 0; t < nthreads; t++) {
        MPI_Comm_free(&args[t].comm);
        MTEST_CHECK(args[t].comm == MPI_COMM_NULL, "MPI_Comm_free did not reset the handle");
    }
    return mtest_finalize(0);
}
