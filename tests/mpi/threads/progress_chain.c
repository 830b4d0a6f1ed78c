/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress across communicators when what a waiter needs is triggered by traffic on other
 * communicators (companions of progress_deadlock). Processes work in pairs (2k, 2k+1), the
 * even one "A", the odd one "B"; an odd last process only joins the final barrier.
 * - "chain": on B, thread 1 posts MPI_Irecv on comm 1 and a 1 MiB MPI_Isend on comm 2, then
 *   parks without calling MPI; thread 0 sits in MPI_Recv on comm 0. A does MPI_Ssend on comm 1,
 *   receives the 1 MiB message on comm 2 and only then sends on comm 0: B's thread 0 must move
 *   both of the parked thread's operations, on two other communicators, to get its message.
 * - "wait other, send": single-threaded. A starts a 1 MiB MPI_Isend on comm 1, posts MPI_Irecv
 *   on comm 0 and calls MPI_Wait on the receive only; B receives the large message and then
 *   sends on comm 0, so A's wait must also progress the rendezvous on comm 1.
 * - "wait other, receive": single-threaded. A posts a 1 MiB MPI_Irecv on comm 1 and an
 *   MPI_Irecv on comm 0 and waits on the second only; B calls MPI_Send of 1 MiB on comm 1 and
 *   then sends on comm 0.
 * - "wait other, many": as "wait other, send" with the large sends spread over comms 1..3 and
 *   an MPI_Waitany on comm 0's receive alone.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define NCOMMS      4
#define ROUNDS      10
#define LARGE_COUNT (256 * 1024) /* 1 MiB of uint32_t */

static MPI_Comm g_comms[NCOMMS];
static int g_rank;
static pthread_barrier_t g_barrier;

static void barrier_wait(void)
{
    int rc = pthread_barrier_wait(&g_barrier);

    MTEST_CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait: %d", rc);
}

static void check_large(const uint32_t *buf, const MPI_Status *st, int src, int id, int round,
                        const char *what)
{
    int got = -1;

    MPI_Get_count(st, MPI_UINT32_T, &got);
    MTEST_CHECK(got == LARGE_COUNT && st->MPI_SOURCE == src, "%s round %d: status %d/%d", what,
                round, st->MPI_SOURCE, got);
    MTEST_CHECK(mt_verify(buf, LARGE_COUNT, src, id, round) < 0, "%s round %d: wrong contents",
                what, round);
}

static void check_small(uint32_t value, int src, int id, int round, const char *what)
{
    MTEST_CHECK(value == mt_pattern(src, id, round, 0), "%s round %d: got %u", what, round, value);
}

struct chain_arg {
    int id;
    int peer;
    int round;
    uint32_t *buf;
};

static void *chain_thread(void *arg)
{
    struct chain_arg *a = arg;
    MPI_Status st;
    uint32_t v = 0;

    if (a->id == 0) {
        MPI_Recv(&v, 1, MPI_UINT32_T, a->peer, 0, g_comms[0], &st);
        check_small(v, a->peer, 0, a->round, "chain comm 0");
        barrier_wait();
    } else {
        MPI_Request reqs[2];
        MPI_Status sts[2];

        MPI_Irecv(&v, 1, MPI_UINT32_T, a->peer, 0, g_comms[1], &reqs[0]);
        mt_fill(a->buf, LARGE_COUNT, g_rank, 2, a->round);
        MPI_Isend(a->buf, LARGE_COUNT, MPI_UINT32_T, a->peer, 0, g_comms[2], &reqs[1]);
        barrier_wait(); /* parked until thread 0 got its message */
        MPI_Waitall(2, reqs, sts);
        check_small(v, a->peer, 1, a->round, "chain comm 1");
    }
    return NULL;
}

static void chain(int is_a, int peer, int round, uint32_t **bufs)
{
    if (is_a) {
        uint32_t v = mt_pattern(g_rank, 1, round, 0);
        MPI_Status st;

        MPI_Ssend(&v, 1, MPI_UINT32_T, peer, 0, g_comms[1]);
        MPI_Recv(bufs[0], LARGE_COUNT, MPI_UINT32_T, peer, 0, g_comms[2], &st);
        check_large(bufs[0], &st, peer, 2, round, "chain comm 2");
        v = mt_pattern(g_rank, 0, round, 0);
        MPI_Send(&v, 1, MPI_UINT32_T, peer, 0, g_comms[0]);
    } else {
        struct chain_arg args[2] = {{0, peer, round, bufs[0]}, {1, peer, round, bufs[1]}};

        if (pthread_barrier_init(&g_barrier, NULL, 2) != 0) {
            fprintf(stderr, "pthread_barrier_init failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        mt_run(2, chain_thread, args, sizeof(args[0]));
        pthread_barrier_destroy(&g_barrier);
    }
}

enum other_mode { OTHER_SEND, OTHER_RECV, OTHER_MANY };

/* The single-threaded cases: A waits on comm 0 while only comm 1 (..3) can move. */
static void wait_other(enum other_mode mode, int is_a, int peer, int round, uint32_t **bufs)
{
    int nlarge = mode == OTHER_MANY ? 3 : 1;
    MPI_Request large[3], small;
    MPI_Status st;
    uint32_t v = 0;

    if (is_a) {
        int index = -1;

        for (int i = 0; i < nlarge; i++) {
            if (mode == OTHER_RECV) {
                MPI_Irecv(bufs[i], LARGE_COUNT, MPI_UINT32_T, peer, 0, g_comms[1 + i], &large[i]);
            } else {
                mt_fill(bufs[i], LARGE_COUNT, g_rank, 1 + i, round);
                MPI_Isend(bufs[i], LARGE_COUNT, MPI_UINT32_T, peer, 0, g_comms[1 + i], &large[i]);
            }
        }
        MPI_Irecv(&v, 1, MPI_UINT32_T, peer, 0, g_comms[0], &small);
        if (mode == OTHER_MANY) {
            MPI_Waitany(1, &small, &index, &st);
            MTEST_CHECK(index == 0, "MPI_Waitany gave index %d", index);
        } else {
            MPI_Wait(&small, &st);
        }
        check_small(v, peer, 0, round, "wait other comm 0");
        for (int i = 0; i < nlarge; i++) {
            MPI_Wait(&large[i], &st);
            if (mode == OTHER_RECV)
                check_large(bufs[i], &st, peer, 1 + i, round, "wait other large");
        }
    } else {
        for (int i = 0; i < nlarge; i++) {
            if (mode == OTHER_RECV) {
                mt_fill(bufs[i], LARGE_COUNT, g_rank, 1 + i, round);
                MPI_Send(bufs[i], LARGE_COUNT, MPI_UINT32_T, peer, 0, g_comms[1 + i]);
            } else {
                MPI_Recv(bufs[i], LARGE_COUNT, MPI_UINT32_T, peer, 0, g_comms[1 + i], &st);
                check_large(bufs[i], &st, peer, 1 + i, round, "wait other large");
            }
        }
        v = mt_pattern(g_rank, 0, round, 0);
        MPI_Send(&v, 1, MPI_UINT32_T, peer, 0, g_comms[0]);
    }
}

int main(int argc, char **argv)
{
    uint32_t *bufs[3];
    int size, peer, is_a;

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    is_a = g_rank % 2 == 0;
    peer = is_a ? g_rank + 1 : g_rank - 1;
    if (peer >= size)
        peer = MPI_PROC_NULL;

    for (int i = 0; i < 3; i++)
        bufs[i] = mtest_calloc(LARGE_COUNT, sizeof(uint32_t));
    for (int c = 0; c < NCOMMS; c++) {
        if (MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[c]) != MPI_SUCCESS) {
            fprintf(stderr, "set-up failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int round = 0; round < ROUNDS && peer != MPI_PROC_NULL; round++)
        chain(is_a, peer, round, bufs);
    for (int mode = OTHER_SEND; mode <= OTHER_MANY && peer != MPI_PROC_NULL; mode++)
        for (int round = 0; round < ROUNDS; round++)
            wait_other((enum other_mode)mode, is_a, peer, round, bufs);

    MPI_Barrier(MPI_COMM_WORLD);
    for (int c = 0; c < NCOMMS; c++)
        MPI_Comm_free(&g_comms[c]);
    for (int i = 0; i < 3; i++)
        free(bufs[i]);
    return mtest_finalize(0);
}
