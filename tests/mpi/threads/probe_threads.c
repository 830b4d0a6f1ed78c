/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Probing from several threads at once. In the first phase each thread owns one tag: it
 * probes with MPI_ANY_SOURCE on that tag (MPI_Probe or an MPI_Iprobe loop), sizes its buffer
 * from MPI_Get_count and receives exactly the probed message, which is race-free because no
 * other thread receives that tag. In the second phase all threads probe with both wildcards,
 * which is only race-free with matched probes: MPI_Mprobe or an MPI_Improbe loop, then MPI_Mrecv
 * or MPI_Imrecv. Message sizes vary up to past the eager limit; every message must be received
 * exactly once, with the probed size and source, and in order per sender.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define MAX_RANKS  16
#define NMSGS      24 /* per (sending thread, destination) and phase */
#define HEADER     3  /* source rank, sending thread, sequence number */
#define TAG_OWNED  0  /* phase one: tag = TAG_OWNED + thread */
#define TAG_SHARED 100
#define MAX_LEN    (HEADER + 40000) /* elements; past the eager limit */

struct thread_arg {
    int id;
    int phase;
};

static int g_rank, g_size, g_nthreads;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned char g_seen[MAX_RANKS][MT_MAX_THREADS][NMSGS];

static int message_len(int seq)
{
    if (seq % 8 == 5)
        return MAX_LEN;
    return HEADER + (seq * 131) % 700;
}

static int phase_tag(int phase, int thread)
{
    return (phase == 1 ? TAG_OWNED : TAG_SHARED) + thread;
}

/* Starts every message this thread sends in the phase; the caller waits for them. */
static void post_sends(int id, int phase, uint32_t **bufs, MPI_Request *reqs)
{
    int n = 0;

    for (int seq = 0; seq < NMSGS; seq++) {
        for (int k = 1; k < g_size; k++, n++) {
            int len = message_len(seq);

            bufs[n] = mtest_calloc((size_t)len, sizeof(uint32_t));
            bufs[n][0] = (uint32_t)g_rank;
            bufs[n][1] = (uint32_t)id;
            bufs[n][2] = (uint32_t)seq;
            mt_fill(bufs[n] + HEADER, len - HEADER, g_rank, id, seq);
            MPI_Isend(bufs[n], len, MPI_UINT32_T, (g_rank + k) % g_size, phase_tag(phase, id),
                      MPI_COMM_WORLD, &reqs[n]);
        }
    }
}

/* Checks a received message against the probed status and records it once. */
static void check_message(const uint32_t *buf, int count, const MPI_Status *probed, int phase,
                          int (*last_seq)[MT_MAX_THREADS])
{
    int src = (int)buf[0], sender = (int)buf[1], seq = (int)buf[2], dup;

    if (count < HEADER || src < 0 || src >= g_size || src == g_rank || sender < 0 ||
        sender >= g_nthreads || seq < 0 || seq >= NMSGS) {
        MTEST_CHECK(0, "phase %d: bad message (count %d)", phase, count);
        return;
    }
    MTEST_CHECK(probed->MPI_SOURCE == src, "phase %d: probed source %d, message from %d", phase,
                probed->MPI_SOURCE, src);
    MTEST_CHECK(probed->MPI_TAG == phase_tag(phase, sender), "phase %d: probed tag %d", phase,
                probed->MPI_TAG);
    MTEST_CHECK(count == message_len(seq), "phase %d: probed count %d, expected %d", phase, count,
                message_len(seq));
    MTEST_CHECK(mt_verify(buf + HEADER, count - HEADER, src, sender, seq) < 0,
                "phase %d: contents of %d/%d/%d wrong", phase, src, sender, seq);
    MTEST_CHECK(seq > last_seq[src][sender], "phase %d: from %d/%d got seq %d after %d", phase, src,
                sender, seq, last_seq[src][sender]);
    last_seq[src][sender] = seq;
    pthread_mutex_lock(&g_lock);
    dup = g_seen[src][sender][seq]++;
    pthread_mutex_unlock(&g_lock);
    MTEST_CHECK(dup == 0, "phase %d: message %d/%d/%d received twice", phase, src, sender, seq);
}

/* A probe result that cannot be right (foreign tag, bad source, impossible size) is reported,
 * and the message is then received by what the thread knows for sure, so that such a library
 * bug shows up as an error rather than as a hang. */
static int probe_plausible(const MPI_Status *probed, int tag, int count, int i)
{
    int ok = (tag == MPI_ANY_TAG || probed->MPI_TAG == tag) && probed->MPI_SOURCE >= 0 &&
             probed->MPI_SOURCE < g_size && probed->MPI_SOURCE != g_rank && count >= HEADER &&
             count <= MAX_LEN;

    return MTEST_CHECK(ok, "probe %d for tag %d returned source %d tag %d count %d", i, tag,
                       probed->MPI_SOURCE, probed->MPI_TAG, count);
}

/* Phase one: probe (blocking for even threads, polling for odd ones), then a plain receive of
 * exactly the probed message. */
static void receive_owned(int id, int i, int (*last_seq)[MT_MAX_THREADS])
{
    int tag = phase_tag(1, id), count = -1, flag = 0;
    MPI_Status probed, status;
    uint32_t *buf;

    if (id % 2 == 0) {
        MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &probed);
    } else {
        while (!flag)
            MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &probed);
    }
    MPI_Get_count(&probed, MPI_UINT32_T, &count);
    if (!probe_plausible(&probed, tag, count, i)) {
        buf = mtest_calloc(MAX_LEN, sizeof(uint32_t));
        MPI_Recv(buf, MAX_LEN, MPI_UINT32_T, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_UINT32_T, &count);
        check_message(buf, count, &status, 1, last_seq);
        free(buf);
        return;
    }
    buf = mtest_calloc((size_t)count, sizeof(uint32_t));
    MPI_Recv(buf, count, MPI_UINT32_T, probed.MPI_SOURCE, tag, MPI_COMM_WORLD, &status);
    MTEST_CHECK(status.MPI_SOURCE == probed.MPI_SOURCE, "receive after probe: source changed");
    check_message(buf, count, &probed, 1, last_seq);
    free(buf);
}

/* Phase two: matched probe with both wildcards (blocking or polling), then MPI_Mrecv or
 * MPI_Imrecv of that very message. */
static void receive_shared(int id, int i, int (*last_seq)[MT_MAX_THREADS])
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status probed, status;
    int count = -1, flag = 0, capacity, probed_count;
    uint32_t *buf;

    if (id % 2 == 0) {
        MPI_Mprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &msg, &probed);
    } else {
        while (!flag)
            MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &probed);
    }
    MPI_Get_count(&probed, MPI_UINT32_T, &count);
    /* the message handle pins the message, so a bad status only costs a larger buffer */
    capacity = probe_plausible(&probed, MPI_ANY_TAG, count, i) ? count : MAX_LEN;
    buf = mtest_calloc((size_t)capacity, sizeof(uint32_t));
    if (i % 2 == 0) {
        MPI_Mrecv(buf, capacity, MPI_UINT32_T, &msg, &status);
    } else {
        MPI_Request req;

        MPI_Imrecv(buf, capacity, MPI_UINT32_T, &msg, &req);
        MPI_Wait(&req, &status);
    }
    MTEST_CHECK(msg == MPI_MESSAGE_NULL, "message handle not reset after receive");
    MTEST_CHECK(status.MPI_SOURCE == probed.MPI_SOURCE && status.MPI_TAG == probed.MPI_TAG,
                "matched receive got %d/%d, probe said %d/%d", status.MPI_SOURCE, status.MPI_TAG,
                probed.MPI_SOURCE, probed.MPI_TAG);
    probed_count = count;
    MPI_Get_count(&status, MPI_UINT32_T, &count);
    MTEST_CHECK(count == probed_count, "probe said %d elements, received %d", probed_count, count);
    check_message(buf, count, &probed, 2, last_seq);
    free(buf);
}

static void *thread_main(void *arg)
{
    const struct thread_arg *a = arg;
    int total = NMSGS * (g_size - 1), rc;
    int last_seq[MAX_RANKS][MT_MAX_THREADS];
    uint32_t **bufs = mtest_calloc((size_t)total, sizeof(*bufs));
    MPI_Request *reqs = mtest_calloc((size_t)total, sizeof(*reqs));

    for (int s = 0; s < MAX_RANKS; s++)
        for (int t = 0; t < MT_MAX_THREADS; t++)
            last_seq[s][t] = -1;

    post_sends(a->id, a->phase, bufs, reqs);
    /* Each thread receives as many messages as it sent, from anyone in phase two. */
    for (int i = 0; i < total; i++) {
        if (a->phase == 1)
            receive_owned(a->id, i, last_seq);
        else
            receive_shared(a->id, i, last_seq);
    }
    rc = MPI_Waitall(total, reqs, MPI_STATUSES_IGNORE);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Waitall returned %d", rc);
    for (int i = 0; i < total; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    return NULL;
}

static void check_all_received(int phase)
{
    for (int src = 0; src < g_size; src++) {
        for (int t = 0; t < g_nthreads && src != g_rank; t++) {
            for (int seq = 0; seq < NMSGS; seq++) {
                MTEST_CHECK(g_seen[src][t][seq] == 1, "phase %d: message %d/%d/%d seen %d times",
                            phase, src, t, seq, g_seen[src][t][seq]);
            }
        }
    }
    memset(g_seen, 0, sizeof(g_seen));
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MTEST_CHECK(g_size >= 2 && g_size <= MAX_RANKS, "needs 2..%d processes", MAX_RANKS);
    if (g_size < 2 || g_size > MAX_RANKS)
        return mtest_finalize(0);

    g_nthreads = mt_nthreads(4, 1);
    for (int phase = 1; phase <= 2; phase++) {
        for (int t = 0; t < g_nthreads; t++) {
            args[t].id = t;
            args[t].phase = phase;
        }
        mt_run(g_nthreads, thread_main, args, sizeof(args[0]));
        check_all_received(phase);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    return mtest_finalize(0);
}
