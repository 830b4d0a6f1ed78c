/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress across communicators with collectives (companion of progress_deadlock). Even ranks
 * run single-threaded; odd ranks run one thread per communicator.
 * - "reverse order": the even ranks call a blocking collective (barrier, 1 MiB broadcast from
 *   rank 1, allreduce, allgather) on comm 0, 1, ..., N-1 in turn; on odd ranks thread c calls
 *   the one of comm c, the threads entering in the opposite order (N-1 first, each after the
 *   next one has started), so each collective on an odd rank waits behind others.
 * - "parked nonblocking collective" (Figure 9 with collectives): on odd ranks thread 0 starts
 *   MPI_Ibcast of 1 MiB from rank 1 (or MPI_Ibarrier) on comm 0 and parks without calling MPI;
 *   thread 1 calls the blocking collective on comm 1 and only when it has returned does thread
 *   0 wait. Even ranks complete the same nonblocking collective on comm 0 (a blocking one would
 *   not match it), then call the one of comm 1, so the blocking call on comm 1 can only return
 *   if it also progresses comm 0.
 * Runs with 2 or more processes.
 */
#define _POSIX_C_SOURCE 200809L

#include <time.h>

#include "mt_common.h"

#define NCOMMS      6
#define ROUNDS      8
#define LARGE_COUNT (256 * 1024) /* 1 MiB of uint32_t */
#define MAX_RANKS   16

enum coll { COLL_BARRIER, COLL_BCAST, COLL_ALLREDUCE, COLL_ALLGATHER, COLL_COUNT };

static MPI_Comm g_comms[NCOMMS];
static int g_rank, g_size;
static pthread_barrier_t g_barrier;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cond = PTHREAD_COND_INITIALIZER;
static int g_started; /* reverse order: lowest comm index whose thread has started */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* One blocking collective of kind c % COLL_COUNT on comm c, with its result checked. */
static void run_coll(int c, int round, uint32_t *buf)
{
    int kind = c % COLL_COUNT, rc = MPI_SUCCESS;
    uint32_t in, out = 0;

    switch (kind) {
    case COLL_BARRIER: rc = MPI_Barrier(g_comms[c]); break;
    case COLL_BCAST:
        if (g_rank == 1)
            mt_fill(buf, LARGE_COUNT, 1, c, round);
        else
            memset(buf, 0, LARGE_COUNT * sizeof(uint32_t));
        rc = MPI_Bcast(buf, LARGE_COUNT, MPI_UINT32_T, 1, g_comms[c]);
        MTEST_CHECK(mt_verify(buf, LARGE_COUNT, 1, c, round) < 0,
                    "comm %d round %d: broadcast data wrong", c, round);
        break;
    case COLL_ALLREDUCE:
        in = (uint32_t)(g_rank + c + round);
        rc = MPI_Allreduce(&in, &out, 1, MPI_UINT32_T, MPI_SUM, g_comms[c]);
        MTEST_CHECK(out == (uint32_t)(g_size * (g_size - 1) / 2 + g_size * (c + round)),
                    "comm %d round %d: allreduce gave %u", c, round, out);
        break;
    default:
        in = (uint32_t)(g_rank * 1000 + c);
        rc = MPI_Allgather(&in, 1, MPI_UINT32_T, buf, 1, MPI_UINT32_T, g_comms[c]);
        for (int r = 0; r < g_size; r++)
            MTEST_CHECK(buf[r] == (uint32_t)(r * 1000 + c), "comm %d: allgather[%d] = %u", c, r,
                        buf[r]);
        break;
    }
    MTEST_CHECK(rc == MPI_SUCCESS, "collective %d on comm %d returned %d", kind, c, rc);
}

struct reverse_arg {
    int id;
    int round;
    uint32_t *buf;
};

static void *reverse_thread(void *arg)
{
    struct reverse_arg *a = arg;

    /* wait until the thread of the next communicator has started its collective */
    pthread_mutex_lock(&g_lock);
    while (g_started != a->id + 1)
        pthread_cond_wait(&g_cond, &g_lock);
    pthread_mutex_unlock(&g_lock);
    if (a->id < NCOMMS - 1)
        sleep_ms(1); /* let it get into the call */
    pthread_mutex_lock(&g_lock);
    g_started = a->id;
    pthread_cond_broadcast(&g_cond);
    pthread_mutex_unlock(&g_lock);
    run_coll(a->id, a->round, a->buf);
    return NULL;
}

static void reverse_order(int round, uint32_t **bufs)
{
    if (g_rank % 2 == 0) {
        for (int c = 0; c < NCOMMS; c++)
            run_coll(c, round, bufs[c]);
    } else {
        struct reverse_arg args[NCOMMS];

        g_started = NCOMMS;
        for (int c = 0; c < NCOMMS; c++) {
            args[c].id = c;
            args[c].round = round;
            args[c].buf = bufs[c];
        }
        mt_run(NCOMMS, reverse_thread, args, sizeof(args[0]));
    }
}

struct parked_arg {
    int id;
    int round;
    int bcast; /* comm 0 carries a 1 MiB broadcast from rank 1, else a barrier */
    uint32_t *buf;
};

static void barrier_wait(void)
{
    int rc = pthread_barrier_wait(&g_barrier);

    MTEST_CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait: %d", rc);
}

/* The blocking collective of comm 1: a barrier or a small broadcast from rank 0. */
static void second_coll(int round, uint32_t *buf)
{
    int rc;

    if (round % 2 == 0) {
        rc = MPI_Barrier(g_comms[1]);
    } else {
        buf[0] = g_rank == 0 ? (uint32_t)(round * 7) : 0;
        rc = MPI_Bcast(buf, 1, MPI_UINT32_T, 0, g_comms[1]);
        MTEST_CHECK(buf[0] == (uint32_t)(round * 7), "comm 1 broadcast gave %u", buf[0]);
    }
    MTEST_CHECK(rc == MPI_SUCCESS, "collective on comm 1 returned %d", rc);
}

static void *parked_thread(void *arg)
{
    struct parked_arg *a = arg;

    if (a->id == 0) {
        MPI_Request req;
        int rc;

        if (a->bcast) {
            if (g_rank == 1)
                mt_fill(a->buf, LARGE_COUNT, 1, 0, a->round);
            MPI_Ibcast(a->buf, LARGE_COUNT, MPI_UINT32_T, 1, g_comms[0], &req);
        } else {
            MPI_Ibarrier(g_comms[0], &req);
        }
        barrier_wait(); /* parked while thread 1 is in the collective of comm 1 */
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Wait on comm 0 returned %d", rc);
        MTEST_CHECK(!a->bcast || mt_verify(a->buf, LARGE_COUNT, 1, 0, a->round) < 0,
                    "round %d: nonblocking broadcast data wrong", a->round);
    } else {
        second_coll(a->round, a->buf);
        barrier_wait();
    }
    return NULL;
}

static void parked(int round, uint32_t **bufs)
{
    int bcast = (round / 2) % 2 == 0;

    if (g_rank % 2 == 0) {
        MPI_Request req;
        int rc;

        /* nonblocking collectives only match nonblocking ones */
        if (bcast) {
            memset(bufs[0], 0, LARGE_COUNT * sizeof(uint32_t));
            MPI_Ibcast(bufs[0], LARGE_COUNT, MPI_UINT32_T, 1, g_comms[0], &req);
        } else {
            MPI_Ibarrier(g_comms[0], &req);
        }
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        MTEST_CHECK(!bcast || mt_verify(bufs[0], LARGE_COUNT, 1, 0, round) < 0,
                    "round %d: broadcast data wrong", round);
        MTEST_CHECK(rc == MPI_SUCCESS, "collective on comm 0 returned %d", rc);
        second_coll(round, bufs[1]);
    } else {
        struct parked_arg args[2] = {{0, round, bcast, bufs[0]}, {1, round, bcast, bufs[1]}};

        if (pthread_barrier_init(&g_barrier, NULL, 2) != 0) {
            fprintf(stderr, "pthread_barrier_init failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        mt_run(2, parked_thread, args, sizeof(args[0]));
        pthread_barrier_destroy(&g_barrier);
    }
}

int main(int argc, char **argv)
{
    uint32_t *bufs[NCOMMS];

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MTEST_CHECK(g_size >= 2 && g_size <= MAX_RANKS, "needs 2..%d processes", MAX_RANKS);
    if (g_size < 2 || g_size > MAX_RANKS)
        return mtest_finalize(0);

    for (int c = 0; c < NCOMMS; c++) {
        bufs[c] = mtest_calloc(LARGE_COUNT, sizeof(uint32_t));
        if (MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[c]) != MPI_SUCCESS) {
            fprintf(stderr, "set-up failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int round = 0; round < ROUNDS; round++)
        reverse_order(round, bufs);
    for (int round = 0; round < ROUNDS; round++)
        parked(round, bufs);

    for (int c = 0; c < NCOMMS; c++) {
        MPI_Comm_free(&g_comms[c]);
        free(bufs[c]);
    }
    return mtest_finalize(0);
}
