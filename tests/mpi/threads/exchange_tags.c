/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several threads per process exchange messages around a ring of processes on one
 * communicator, each thread on its own tags, with MPI_Sendrecv, with nonblocking
 * MPI_Isend/MPI_Irecv in both directions completed by MPI_Waitall, and with plain blocking
 * MPI_Send/MPI_Recv passed around the ring. Sizes vary per iteration and now and then cross
 * the eager/rendezvous boundary. Every message is checked element by element, so a message
 * matched to another thread's receive is caught.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define ITERATIONS    200
#define SMALL_MAX     1500 /* elements; varies with the iteration */
#define LARGE_COUNT   (64 * 1024)
#define TAGS_PER_KIND 1000 /* tag = kind * TAGS_PER_KIND + thread */

enum { KIND_SENDRECV, KIND_NB_RIGHT, KIND_NB_LEFT, KIND_RING };

struct thread_arg {
    int id;
    int rank;
    int size;
};

static int message_count(int iteration)
{
    if (iteration % 25 == 7)
        return LARGE_COUNT;
    return (iteration * 37) % SMALL_MAX;
}

static int tag_of(int kind, int id)
{
    return kind * TAGS_PER_KIND + id;
}

static void check_message(const uint32_t *buf, int count, const MPI_Status *status, int src, int id,
                          int seq, const char *what)
{
    int got = -1;
    int bad = mt_verify(buf, count, src, id, seq);

    MTEST_CHECK(bad < 0, "%s: thread %d iteration %d element %d wrong", what, id, seq, bad);
    MTEST_CHECK(status->MPI_SOURCE == src, "%s: source %d, expected %d", what, status->MPI_SOURCE,
                src);
    MPI_Get_count(status, MPI_UINT32_T, &got);
    MTEST_CHECK(got == count, "%s: count %d, expected %d", what, got, count);
}

static void exchange_sendrecv(const struct thread_arg *a, int it, uint32_t *sbuf, uint32_t *rbuf)
{
    int right = (a->rank + 1) % a->size, left = (a->rank + a->size - 1) % a->size;
    int count = message_count(it), tag = tag_of(KIND_SENDRECV, a->id);
    MPI_Status status;
    int rc;

    mt_fill(sbuf, count, a->rank, tag, it);
    rc = MPI_Sendrecv(sbuf, count, MPI_UINT32_T, right, tag, rbuf, count, MPI_UINT32_T, left, tag,
                      MPI_COMM_WORLD, &status);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Sendrecv returned %d", rc);
    check_message(rbuf, count, &status, left, tag, it, "sendrecv");
}

/* Both directions at once: to the right and to the left, nonblocking. */
static void exchange_nonblocking(const struct thread_arg *a, int it, uint32_t *sbuf[2],
                                 uint32_t *rbuf[2])
{
    int right = (a->rank + 1) % a->size, left = (a->rank + a->size - 1) % a->size;
    int count = message_count(ITERATIONS - 1 - it);
    int tag_r = tag_of(KIND_NB_RIGHT, a->id), tag_l = tag_of(KIND_NB_LEFT, a->id);
    MPI_Request reqs[4];
    MPI_Status statuses[4];
    int rc;

    mt_fill(sbuf[0], count, a->rank, tag_r, it);
    mt_fill(sbuf[1], count, a->rank, tag_l, it);
    MPI_Irecv(rbuf[0], count, MPI_UINT32_T, left, tag_r, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(rbuf[1], count, MPI_UINT32_T, right, tag_l, MPI_COMM_WORLD, &reqs[1]);
    MPI_Isend(sbuf[0], count, MPI_UINT32_T, right, tag_r, MPI_COMM_WORLD, &reqs[2]);
    MPI_Isend(sbuf[1], count, MPI_UINT32_T, left, tag_l, MPI_COMM_WORLD, &reqs[3]);
    rc = MPI_Waitall(4, reqs, statuses);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Waitall returned %d", rc);
    check_message(rbuf[0], count, &statuses[0], left, tag_r, it, "nonblocking from left");
    check_message(rbuf[1], count, &statuses[1], right, tag_l, it, "nonblocking from right");
}

/* Rank 0 sends first and the others receive first, so blocking calls cannot deadlock even
 * if MPI_Send waits for the matching receive. */
static void exchange_ring(const struct thread_arg *a, int it, uint32_t *sbuf, uint32_t *rbuf)
{
    int right = (a->rank + 1) % a->size, left = (a->rank + a->size - 1) % a->size;
    int count = message_count(it + 3), tag = tag_of(KIND_RING, a->id);
    MPI_Status status;

    mt_fill(sbuf, count, a->rank, tag, it);
    if (a->rank == 0)
        MPI_Send(sbuf, count, MPI_UINT32_T, right, tag, MPI_COMM_WORLD);
    MPI_Recv(rbuf, count, MPI_UINT32_T, left, tag, MPI_COMM_WORLD, &status);
    if (a->rank != 0)
        MPI_Send(sbuf, count, MPI_UINT32_T, right, tag, MPI_COMM_WORLD);
    check_message(rbuf, count, &status, left, tag, it, "ring");
}

static void *thread_main(void *arg)
{
    const struct thread_arg *a = arg;
    uint32_t *sbuf[2], *rbuf[2];

    for (int i = 0; i < 2; i++) {
        sbuf[i] = mtest_calloc(LARGE_COUNT, sizeof(uint32_t));
        rbuf[i] = mtest_calloc(LARGE_COUNT, sizeof(uint32_t));
    }
    for (int it = 0; it < ITERATIONS; it++) {
        exchange_sendrecv(a, it, sbuf[0], rbuf[0]);
        exchange_nonblocking(a, it, sbuf, rbuf);
        exchange_ring(a, it, sbuf[1], rbuf[1]);
    }
    for (int i = 0; i < 2; i++) {
        free(sbuf[i]);
        free(rbuf[i]);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];
    int rank, size, nthreads;

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    nthreads = mt_nthreads(4, 1);
    for (int t = 0; t < nthreads; t++) {
        args[t].id = t;
        args[t].rank = rank;
        args[t].size = size;
    }
    mt_run(nthreads, thread_main, args, sizeof(args[0]));
    return mtest_finalize(0);
}
