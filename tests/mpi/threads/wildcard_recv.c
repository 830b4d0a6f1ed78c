/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receives with MPI_ANY_SOURCE and/or MPI_ANY_TAG in several threads while other threads of
 * the same process send. Half of the threads of each process send numbered messages to every
 * other process; the other half receive a fixed quota each, in three phases: both wildcards
 * (blocking MPI_Recv), MPI_ANY_SOURCE with a tag per receiving thread (sent with MPI_Isend),
 * and MPI_ANY_TAG from each source in turn (MPI_Irecv + MPI_Wait). Every message must arrive
 * exactly once, with a status that matches its contents, and the messages one thread receives
 * from one sender on one tag must come in the order they were sent (non-overtaking).
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define MAX_RANKS    16
#define PER_RECEIVER 12 /* messages per (sender thread, destination) = PER_RECEIVER * receivers */
#define MAX_MSGS     (PER_RECEIVER * MT_MAX_THREADS)
#define HEADER       3 /* source rank, sender thread, sequence number */
#define MAX_LEN      (HEADER + 8)
#define TAG_PHASE2   100
#define TAG_PHASE3   300

enum { PHASE_BOTH_WILD = 1, PHASE_ANY_SOURCE, PHASE_ANY_TAG };

struct thread_arg {
    int id; /* senders are 0..nsenders-1, receivers 0..nreceivers-1 */
    int is_sender;
    int phase;
};

static int g_rank, g_size, g_nsenders, g_nreceivers, g_nmsgs;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char g_seen[MAX_RANKS][MT_MAX_THREADS][MAX_MSGS];

static int message_len(int seq)
{
    return HEADER + seq % (MAX_LEN - HEADER + 1);
}

static void build_message(uint32_t *buf, int sender, int seq)
{
    buf[0] = (uint32_t)g_rank;
    buf[1] = (uint32_t)sender;
    buf[2] = (uint32_t)seq;
    mt_fill(buf + HEADER, message_len(seq) - HEADER, g_rank, sender, seq);
}

static int sender_tag(int phase, int sender, int seq)
{
    if (phase == PHASE_BOTH_WILD)
        return sender + 1;
    if (phase == PHASE_ANY_SOURCE)
        return TAG_PHASE2 + seq % g_nreceivers;
    return TAG_PHASE3 + sender;
}

static void sender_blocking(int id, int phase)
{
    uint32_t buf[MAX_LEN];

    for (int seq = 0; seq < g_nmsgs; seq++) {
        for (int k = 1; k < g_size; k++) {
            int dest = (g_rank + k) % g_size;

            build_message(buf, id, seq);
            MPI_Send(buf, message_len(seq), MPI_UINT32_T, dest, sender_tag(phase, id, seq),
                     MPI_COMM_WORLD);
        }
    }
}

/* All messages of the phase in flight at once, then one MPI_Waitall. */
static void sender_nonblocking(int id, int phase)
{
    int total = g_nmsgs * (g_size - 1);
    uint32_t(*bufs)[MAX_LEN] = mtest_calloc((size_t)total, sizeof(*bufs));
    MPI_Request *reqs = mtest_calloc((size_t)total, sizeof(*reqs));
    int n = 0, rc;

    for (int seq = 0; seq < g_nmsgs; seq++) {
        for (int k = 1; k < g_size; k++, n++) {
            build_message(bufs[n], id, seq);
            MPI_Isend(bufs[n], message_len(seq), MPI_UINT32_T, (g_rank + k) % g_size,
                      sender_tag(phase, id, seq), MPI_COMM_WORLD, &reqs[n]);
        }
    }
    rc = MPI_Waitall(total, reqs, MPI_STATUSES_IGNORE);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Waitall returned %d", rc);
    free(reqs);
    free(bufs);
}

/* Checks one received message against its status and records it. last_seq is this thread's
 * view of the last sequence number seen per (source, sender). */
static void record_message(const uint32_t *buf, const MPI_Status *status, int phase,
                           int (*last_seq)[MT_MAX_THREADS])
{
    int src = (int)buf[0], sender = (int)buf[1], seq = (int)buf[2], count = -1, dup;

    if (src < 0 || src >= g_size || src == g_rank || sender < 0 || sender >= g_nsenders ||
        seq < 0 || seq >= g_nmsgs) {
        MTEST_CHECK(0, "phase %d: bad header %d/%d/%d", phase, src, sender, seq);
        return;
    }
    MTEST_CHECK(status->MPI_SOURCE == src, "phase %d: status source %d, message from %d", phase,
                status->MPI_SOURCE, src);
    MTEST_CHECK(status->MPI_TAG == sender_tag(phase, sender, seq),
                "phase %d: status tag %d, expected %d", phase, status->MPI_TAG,
                sender_tag(phase, sender, seq));
    MPI_Get_count(status, MPI_UINT32_T, &count);
    MTEST_CHECK(count == message_len(seq), "phase %d: count %d, expected %d", phase, count,
                message_len(seq));
    MTEST_CHECK(mt_verify(buf + HEADER, message_len(seq) - HEADER, src, sender, seq) < 0,
                "phase %d: contents of %d/%d/%d wrong", phase, src, sender, seq);
    MTEST_CHECK(seq > last_seq[src][sender], "phase %d: from %d/%d got seq %d after %d", phase, src,
                sender, seq, last_seq[src][sender]);
    last_seq[src][sender] = seq;

    pthread_mutex_lock(&g_lock);
    dup = g_seen[src][sender][seq]++;
    pthread_mutex_unlock(&g_lock);
    MTEST_CHECK(dup == 0, "phase %d: message %d/%d/%d received twice", phase, src, sender, seq);
}

static void receiver_main(int id, int phase)
{
    int last_seq[MAX_RANKS][MT_MAX_THREADS];
    int quota = (g_size - 1) * g_nsenders * g_nmsgs / g_nreceivers;
    uint32_t buf[MAX_LEN];
    MPI_Status status;

    for (int s = 0; s < MAX_RANKS; s++)
        for (int t = 0; t < MT_MAX_THREADS; t++)
            last_seq[s][t] = -1;

    if (phase == PHASE_BOTH_WILD) {
        for (int i = 0; i < quota; i++) {
            MPI_Recv(buf, MAX_LEN, MPI_UINT32_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                     &status);
            record_message(buf, &status, phase, last_seq);
        }
    } else if (phase == PHASE_ANY_SOURCE) {
        for (int i = 0; i < quota; i++) {
            MPI_Recv(buf, MAX_LEN, MPI_UINT32_T, MPI_ANY_SOURCE, TAG_PHASE2 + id, MPI_COMM_WORLD,
                     &status);
            record_message(buf, &status, phase, last_seq);
        }
    } else {
        /* Each source sends nsenders * nmsgs messages here; every receiver takes its share. */
        int per_source = g_nsenders * g_nmsgs / g_nreceivers;

        for (int k = 1; k < g_size; k++) {
            int src = (g_rank + g_size - k) % g_size;

            for (int i = 0; i < per_source; i++) {
                MPI_Request req;

                MPI_Irecv(buf, MAX_LEN, MPI_UINT32_T, src, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, &status);
                record_message(buf, &status, phase, last_seq);
            }
        }
    }
}

static void *thread_main(void *arg)
{
    const struct thread_arg *a = arg;

    if (!a->is_sender)
        receiver_main(a->id, a->phase);
    else if (a->phase == PHASE_ANY_SOURCE)
        sender_nonblocking(a->id, a->phase);
    else
        sender_blocking(a->id, a->phase);
    return NULL;
}

static void check_all_received(int phase)
{
    for (int src = 0; src < g_size; src++) {
        if (src == g_rank)
            continue;
        for (int s = 0; s < g_nsenders; s++) {
            for (int seq = 0; seq < g_nmsgs; seq++) {
                MTEST_CHECK(g_seen[src][s][seq] == 1, "phase %d: message %d/%d/%d seen %d times",
                            phase, src, s, seq, g_seen[src][s][seq]);
            }
        }
    }
    memset(g_seen, 0, sizeof(g_seen));
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];
    int nthreads;

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MTEST_CHECK(g_size >= 2 && g_size <= MAX_RANKS, "needs 2..%d processes", MAX_RANKS);
    if (g_size < 2 || g_size > MAX_RANKS)
        return mtest_finalize(0);

    nthreads = mt_nthreads(4, 2);
    g_nreceivers = nthreads / 2;
    g_nsenders = nthreads - g_nreceivers;
    g_nmsgs = PER_RECEIVER * g_nreceivers;
    for (int phase = PHASE_BOTH_WILD; phase <= PHASE_ANY_TAG; phase++) {
        for (int t = 0; t < nthreads; t++) {
            args[t].is_sender = t < g_nsenders;
            args[t].id = args[t].is_sender ? t : t - g_nsenders;
            args[t].phase = phase;
        }
        mt_run(nthreads, thread_main, args, sizeof(args[0]));
        check_all_received(phase);
        /* Keep the phases apart: a late message of one phase must not meet the next. */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return mtest_finalize(0);
}
