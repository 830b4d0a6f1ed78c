/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress across communicators. A library that only progresses the channel of the request
 * being waited on deadlocks on these correct programs; MPI requires global progress.
 * The first scenario is Figure 9 of Zambre et al. ("How I Learned to Stop Worrying about
 * User-Visible Endpoints and Love MPI"): rank 0 calls MPI_Ssend on comm1 then on comm2; on
 * rank 1, thread 0 posts MPI_Irecv on comm1 and thread 1 on comm2, then thread 1 waits while
 * thread 0 is parked, and only afterwards thread 0 waits. Thread 1's wait can only finish if
 * it also progresses comm1, where rank 0's first MPI_Ssend waits for its acknowledgement.
 * Variations: MPI_Issend + MPI_Wait on the sender (and MPI_Isend + MPI_Wait of a message too
 * large to be buffered), three communicators, a blocking MPI_Recv instead of MPI_Wait, a
 * receive posted late (after the message arrived), large messages (rendezvous), and the
 * mirror case where the parked request is a large MPI_Isend whose data the peer can only
 * pull while the sender's other thread sits in MPI_Recv on another communicator. Processes
 * work in pairs (2k, 2k+1); an odd last process only joins the final barrier.
 */
#define _POSIX_C_SOURCE 200809L

#include <time.h>

#include "mt_common.h"

#define MAX_COMMS   3
#define ROUNDS      10
#define SMALL_COUNT 4
#define LARGE_COUNT (256 * 1024) /* 1 MiB of uint32_t */

enum send_mode { SEND_SSEND, SEND_ISSEND_WAIT, SEND_ISEND_WAIT };
enum recv_mode {
    RECV_FIG9,         /* Irecv everywhere, then the waits one thread at a time, last comm first */
    RECV_BLOCKING,     /* last comm: blocking MPI_Recv while the others sit on posted Irecvs */
    RECV_BLOCKING_LATE /* as above, but the Irecvs are posted after the messages arrived */
};

struct scenario {
    const char *name;
    int ncomms;
    int count;
    enum send_mode send;
    enum recv_mode recv;
};

static const struct scenario g_scenarios[] = {
    {"figure 9", 2, SMALL_COUNT, SEND_SSEND, RECV_FIG9},
    {"figure 9 with issend", 2, SMALL_COUNT, SEND_ISSEND_WAIT, RECV_FIG9},
    {"figure 9 three comms", 3, SMALL_COUNT, SEND_SSEND, RECV_FIG9},
    {"figure 9 large", 2, LARGE_COUNT, SEND_SSEND, RECV_FIG9},
    {"figure 9 large isend", 2, LARGE_COUNT, SEND_ISEND_WAIT, RECV_FIG9},
    {"blocking recv", 2, SMALL_COUNT, SEND_SSEND, RECV_BLOCKING},
    {"blocking recv three comms", 3, SMALL_COUNT, SEND_ISSEND_WAIT, RECV_BLOCKING},
    {"blocking recv late post", 2, SMALL_COUNT, SEND_SSEND, RECV_BLOCKING_LATE},
    {"blocking recv large", 2, LARGE_COUNT, SEND_SSEND, RECV_BLOCKING},
};

static MPI_Comm g_comms[MAX_COMMS];
static int g_rank, g_size;
static pthread_barrier_t g_barrier;

struct recv_arg {
    const struct scenario *sc;
    int id; /* receives on g_comms[id] */
    int peer;
    int round;
    uint32_t *buf;
};

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

static void barrier_wait(void)
{
    int rc = pthread_barrier_wait(&g_barrier);

    MTEST_CHECK(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait: %d", rc);
}

static void check_received(const struct recv_arg *a, const MPI_Status *status)
{
    int got = -1;

    MPI_Get_count(status, MPI_UINT32_T, &got);
    MTEST_CHECK(got == a->sc->count && status->MPI_SOURCE == a->peer, "%s: comm %d status %d/%d",
                a->sc->name, a->id, status->MPI_SOURCE, got);
    MTEST_CHECK(mt_verify(a->buf, a->sc->count, a->peer, a->id, a->round) < 0,
                "%s: comm %d round %d wrong contents", a->sc->name, a->id, a->round);
}

static void sender_side(const struct scenario *sc, int peer, int round, uint32_t *buf)
{
    for (int c = 0; c < sc->ncomms; c++) {
        MPI_Request req;

        mt_fill(buf, sc->count, g_rank, c, round);
        if (sc->send == SEND_SSEND) {
            MPI_Ssend(buf, sc->count, MPI_UINT32_T, peer, 0, g_comms[c]);
        } else if (sc->send == SEND_ISSEND_WAIT) {
            MPI_Issend(buf, sc->count, MPI_UINT32_T, peer, 0, g_comms[c], &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            /* a large standard send completes only once the receiver has the data */
            MPI_Isend(buf, sc->count, MPI_UINT32_T, peer, 0, g_comms[c], &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
    }
}

static void *receiver_thread(void *arg)
{
    struct recv_arg *a = arg;
    const struct scenario *sc = a->sc;
    int last = sc->ncomms - 1;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status status;

    if (sc->recv == RECV_FIG9) {
        MPI_Irecv(a->buf, sc->count, MPI_UINT32_T, a->peer, 0, g_comms[a->id], &req);
        barrier_wait();
        /* One waiter at a time, the last communicator first: each waiter must progress the
         * communicators of the parked threads before its own message can even be sent. */
        for (int step = last; step >= 0; step--) {
            if (step == a->id) {
                MPI_Wait(&req, &status);
                check_received(a, &status);
            }
            barrier_wait();
        }
    } else if (a->id == last) {
        MPI_Recv(a->buf, sc->count, MPI_UINT32_T, a->peer, 0, g_comms[a->id], &status);
        check_received(a, &status);
        barrier_wait();
    } else {
        if (sc->recv == RECV_BLOCKING_LATE)
            sleep_ms(5);
        MPI_Irecv(a->buf, sc->count, MPI_UINT32_T, a->peer, 0, g_comms[a->id], &req);
        barrier_wait(); /* parked until the blocking receive of the last comm returned */
        MPI_Wait(&req, &status);
        check_received(a, &status);
    }
    return NULL;
}

static void receiver_side(const struct scenario *sc, int peer, int round, uint32_t **bufs)
{
    struct recv_arg args[MAX_COMMS];
    int rc = pthread_barrier_init(&g_barrier, NULL, (unsigned)sc->ncomms);

    if (rc != 0) {
        fprintf(stderr, "pthread_barrier_init failed: %s\n", strerror(rc));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int c = 0; c < sc->ncomms; c++) {
        args[c].sc = sc;
        args[c].id = c;
        args[c].peer = peer;
        args[c].round = round;
        args[c].buf = bufs[c];
    }
    mt_run(sc->ncomms, receiver_thread, args, sizeof(args[0]));
    pthread_barrier_destroy(&g_barrier);
}

/* The mirror case. Sender process: thread 0 starts a large MPI_Isend on comm 0 and parks;
 * thread 1 sits in MPI_Recv on comm 1. The peer receives comm 0 first and only then sends on
 * comm 1, so thread 1 must move comm 0's data while it waits for comm 1. */
struct mirror_arg {
    int id;
    int peer;
    int round;
    uint32_t *buf;
};

static void *mirror_thread(void *arg)
{
    struct mirror_arg *a = arg;
    MPI_Status status;

    if (a->id == 0) {
        MPI_Request req;

        mt_fill(a->buf, LARGE_COUNT, g_rank, 0, a->round);
        MPI_Isend(a->buf, LARGE_COUNT, MPI_UINT32_T, a->peer, 0, g_comms[0], &req);
        barrier_wait();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(a->buf, 1, MPI_UINT32_T, a->peer, 0, g_comms[1], &status);
        MTEST_CHECK(a->buf[0] == mt_pattern(a->peer, 1, a->round, 0), "mirror: reply wrong");
        barrier_wait();
    }
    return NULL;
}

static void mirror_round(int is_sender, int peer, int round, uint32_t **bufs)
{
    if (is_sender) {
        struct mirror_arg args[2] = {{0, peer, round, bufs[0]}, {1, peer, round, bufs[1]}};

        if (pthread_barrier_init(&g_barrier, NULL, 2) != 0) {
            fprintf(stderr, "pthread_barrier_init failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        mt_run(2, mirror_thread, args, sizeof(args[0]));
        pthread_barrier_destroy(&g_barrier);
    } else {
        MPI_Status status;
        int got = -1;

        MPI_Recv(bufs[0], LARGE_COUNT, MPI_UINT32_T, peer, 0, g_comms[0], &status);
        MPI_Get_count(&status, MPI_UINT32_T, &got);
        MTEST_CHECK(got == LARGE_COUNT && mt_verify(bufs[0], LARGE_COUNT, peer, 0, round) < 0,
                    "mirror round %d: large message wrong", round);
        bufs[1][0] = mt_pattern(g_rank, 1, round, 0);
        MPI_Send(bufs[1], 1, MPI_UINT32_T, peer, 0, g_comms[1]);
    }
}

int main(int argc, char **argv)
{
    uint32_t *bufs[MAX_COMMS];
    int nscenarios = (int)(sizeof(g_scenarios) / sizeof(g_scenarios[0]));
    int peer, is_sender;

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    is_sender = g_rank % 2 == 0;
    peer = is_sender ? g_rank + 1 : g_rank - 1;
    if (peer >= g_size)
        peer = MPI_PROC_NULL;

    for (int c = 0; c < MAX_COMMS; c++) {
        bufs[c] = mtest_calloc(LARGE_COUNT, sizeof(uint32_t));
        if (MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[c]) != MPI_SUCCESS) {
            fprintf(stderr, "set-up failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int s = 0; s < nscenarios && peer != MPI_PROC_NULL; s++) {
        for (int round = 0; round < ROUNDS; round++) {
            if (is_sender)
                sender_side(&g_scenarios[s], peer, round, bufs[0]);
            else
                receiver_side(&g_scenarios[s], peer, round, bufs);
        }
    }
    for (int round = 0; round < ROUNDS && peer != MPI_PROC_NULL; round++)
        mirror_round(is_sender, peer, round, bufs);

    MPI_Barrier(MPI_COMM_WORLD);
    for (int c = 0; c < MAX_COMMS; c++) {
        MPI_Comm_free(&g_comms[c]);
        free(bufs[c]);
    }
    return mtest_finalize(0);
}
