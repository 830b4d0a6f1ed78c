/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A seeded random mix of point-to-point calls from many threads over many communicators, some
 * of them with the mpi_assert_no_any_source / mpi_assert_no_any_tag assertions (given at
 * creation with MPI_Comm_dup_with_info, or with MPI_Comm_set_info on a fresh dup before any
 * traffic), so that a library spreading a communicator's traffic over several channels gets
 * exercised with every matching pattern it must still honour.
 *
 * Thread t of every process owns communicator t (it alone uses it, so it may receive there
 * with MPI_ANY_TAG) and shares four more with the other threads, where its tags are its own.
 * Every round, thread t of each process sends 1..3 messages to thread t of every other
 * process; the schedule (communicator, tag, size, send call, receive call) is a pure function
 * of the seed, the round, the thread and the two ranks, so the receiver knows what comes.
 * Per round and communicator the receiver picks a matching pattern (exact, MPI_ANY_SOURCE,
 * MPI_ANY_TAG, both; wildcards only where no assertion forbids them) and whether it pre-posts
 * MPI_Irecv for those messages before sending (then the sender may use the blocking
 * MPI_Send / MPI_Ssend) or receives them afterwards with MPI_Recv, MPI_Probe or MPI_Iprobe
 * then MPI_Recv, MPI_Mprobe + MPI_Mrecv or MPI_Improbe + MPI_Imrecv (then the sender uses
 * MPI_Isend / MPI_Issend). Requests complete through MPI_Waitall, MPI_Testany or
 * MPI_Waitsome. A message carries (sender, communicator, thread, sequence number, tag, length)
 * and a pattern: the receiver checks the status, the contents and that each (sender,
 * communicator, tag) stream arrives complete and in order. An MPI_Barrier on the owned
 * communicator ends each round, so wildcards never see the next round's messages.
 *
 * MTEST_NTHREADS threads (default 4), MTEST_ROUNDS rounds (default 60), MTEST_SEED (taken
 * from rank 0), MTEST_HINTS=0 to create every communicator without assertions.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define MAX_RANKS  8
#define NSHARED    4 /* communicators shared by all threads */
#define NSLOTS     (1 + NSHARED)
#define NTAGS      4 /* tags per thread and communicator */
#define MAX_MSGS   3 /* per (round, thread, sender, receiver) */
#define HEADER     7
#define LARGE_LEN  (HEADER + 24 * 1024) /* 96 KiB: past the eager limit */
#define NO_ANY_SRC 1
#define NO_ANY_TAG 2

enum match { MATCH_EXACT, MATCH_ANY_SOURCE, MATCH_ANY_TAG, MATCH_BOTH };
enum send_op { OP_SEND, OP_SSEND, OP_ISEND, OP_ISSEND };
enum late_op { LATE_RECV, LATE_PROBE, LATE_IPROBE, LATE_MPROBE, LATE_IMPROBE, LATE_NOPS };
enum completion { DONE_WAITALL, DONE_TESTANY, DONE_WAITSOME };

struct msg {
    int slot; /* 0: the thread's own communicator, 1..NSHARED: a shared one */
    int k;    /* tag index */
    int len;  /* elements, header included */
    int op;   /* enum send_op */
    int late; /* enum late_op */
};

struct recv_class {
    int match; /* enum match */
    int late;  /* received after the sends instead of pre-posted */
};

struct posted {
    uint32_t *buf;
    int slot;
    int src; /* expected source when the pattern names one */
    int tag; /* expected tag when the pattern names one */
};

struct thread_state {
    int id;
    int expect[MAX_RANKS][NSLOTS][NTAGS]; /* next sequence number per incoming stream */
    int sent[MAX_RANKS][NSLOTS][NTAGS];   /* messages sent per outgoing stream */
    long received;
};

static int g_rank, g_size, g_nthreads, g_rounds, g_ncomms;
static uint64_t g_seed;
static MPI_Comm g_comms[MT_MAX_THREADS + NSHARED];
static int g_asserts[MT_MAX_THREADS + NSHARED]; /* NO_ANY_SRC | NO_ANY_TAG */

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

/* The schedule's only source of randomness: a hash of the seed and the coordinates. */
static uint32_t draw(int what, int round, int t, int a, int b, int c)
{
    uint64_t x = mix64(g_seed ^ (uint64_t)what);

    x = mix64(x + (uint64_t)round);
    x = mix64(x + (uint64_t)t);
    x = mix64(x + (uint64_t)a);
    x = mix64(x + (uint64_t)b);
    x = mix64(x + (uint64_t)c);
    return (uint32_t)(x >> 32);
}

static int slot_comm(int t, int slot)
{
    return slot == 0 ? t : g_nthreads + slot - 1;
}

static int slot_tag(int t, int slot, int k)
{
    return slot == 0 ? k : NTAGS + t * NTAGS + k;
}

/* How receiver rcv takes thread t's messages on a slot in a round. */
static void plan_class(int round, int t, int rcv, int slot, struct recv_class *rc)
{
    int asserts = g_asserts[slot_comm(t, slot)];
    int allowed[4], n = 0;

    allowed[n++] = MATCH_EXACT;
    if (!(asserts & NO_ANY_SRC))
        allowed[n++] = MATCH_ANY_SOURCE;
    /* MPI_ANY_TAG would take other threads' messages on a shared communicator */
    if (slot == 0 && !(asserts & NO_ANY_TAG))
        allowed[n++] = MATCH_ANY_TAG;
    if (slot == 0 && asserts == 0)
        allowed[n++] = MATCH_BOTH;
    rc->match = allowed[draw(1, round, t, rcv, slot, 0) % (uint32_t)n];
    rc->late = (int)(draw(2, round, t, rcv, slot, 0) % 2);
}

static int plan_count(int round, int t, int src, int dst)
{
    return 1 + (int)(draw(3, round, t, src, dst, 0) % MAX_MSGS);
}

static void plan_msg(int round, int t, int src, int dst, int i, struct msg *m)
{
    uint32_t r = draw(4, round, t, src, dst, i);
    struct recv_class rc;

    m->slot = (int)(r % NSLOTS);
    m->k = (int)((r >> 4) % NTAGS);
    if ((r >> 8) % 16 == 0)
        m->len = LARGE_LEN;
    else if ((r >> 8) % 4 == 0)
        m->len = HEADER + (int)((r >> 12) % 2000);
    else
        m->len = HEADER + (int)((r >> 12) % 64);
    plan_class(round, t, dst, m->slot, &rc);
    /* a blocking send is safe only towards a receive the peer posts before its own sends */
    m->op = rc.late ? OP_ISEND + (int)((r >> 24) % 2) : (int)((r >> 24) % 4);
    m->late = (int)((r >> 26) % LATE_NOPS);
}

static int pattern_id(int comm, int tag)
{
    return comm * 4096 + tag;
}

static uint32_t *make_message(const struct thread_state *ts, int dst, const struct msg *m)
{
    int comm = slot_comm(ts->id, m->slot), tag = slot_tag(ts->id, m->slot, m->k);
    uint32_t *buf = mtest_calloc((size_t)m->len, sizeof(uint32_t));

    buf[0] = (uint32_t)g_rank;
    buf[1] = (uint32_t)comm;
    buf[2] = (uint32_t)ts->id;
    buf[3] = (uint32_t)ts->sent[dst][m->slot][m->k];
    buf[4] = (uint32_t)tag;
    buf[5] = (uint32_t)m->len;
    buf[6] = (uint32_t)m->k;
    mt_fill(buf + HEADER, m->len - HEADER, g_rank, pattern_id(comm, tag), (int)buf[3]);
    return buf;
}

/* Checks one received message against its status, the receive pattern and its stream. */
static void check_message(struct thread_state *ts, const struct posted *p, const MPI_Status *st,
                          int round)
{
    const uint32_t *b = p->buf;
    int comm = slot_comm(ts->id, p->slot), count = -1, src, k, seq;

    MPI_Get_count(st, MPI_UINT32_T, &count);
    ts->received++;
    if (count < HEADER || (int)b[0] < 0 || (int)b[0] >= g_size || (int)b[0] == g_rank ||
        (int)b[6] < 0 || (int)b[6] >= NTAGS) {
        MTEST_CHECK(0, "thread %d round %d comm %d: bad message (%d elements, source %d)", ts->id,
                    round, comm, count, st->MPI_SOURCE);
        return;
    }
    src = (int)b[0];
    k = (int)b[6];
    seq = (int)b[3];
    MTEST_CHECK(st->MPI_SOURCE == src && st->MPI_TAG == (int)b[4] && count == (int)b[5],
                "thread %d round %d comm %d: status %d/%d/%d, message says %d/%d/%d", ts->id, round,
                comm, st->MPI_SOURCE, st->MPI_TAG, count, src, (int)b[4], (int)b[5]);
    MTEST_CHECK((int)b[1] == comm && (int)b[2] == ts->id &&
                    (int)b[4] == slot_tag(ts->id, p->slot, k),
                "thread %d round %d comm %d: message of comm %u thread %u tag %u", ts->id, round,
                comm, b[1], b[2], b[4]);
    MTEST_CHECK(p->src == MPI_ANY_SOURCE || p->src == src,
                "thread %d round %d comm %d: receive from %d matched a message from %d", ts->id,
                round, comm, p->src, src);
    MTEST_CHECK(p->tag == MPI_ANY_TAG || p->tag == (int)b[4],
                "thread %d round %d comm %d: receive for tag %d matched tag %u", ts->id, round,
                comm, p->tag, b[4]);
    MTEST_CHECK(seq == ts->expect[src][p->slot][k],
                "thread %d round %d: stream (from %d, comm %d, tag %u) got seq %d, expected %d",
                ts->id, round, src, comm, b[4], seq, ts->expect[src][p->slot][k]);
    if (seq >= ts->expect[src][p->slot][k])
        ts->expect[src][p->slot][k] = seq + 1;
    MTEST_CHECK(mt_verify(b + HEADER, count - HEADER, src, pattern_id(comm, (int)b[4]), seq) < 0,
                "thread %d round %d: contents of (from %d, comm %d, tag %u, seq %d) wrong", ts->id,
                round, src, comm, b[4], seq);
}

static void pattern_of(const struct thread_state *ts, int round, int src, const struct msg *m,
                       struct posted *p)
{
    struct recv_class rc;

    plan_class(round, ts->id, g_rank, m->slot, &rc);
    p->slot = m->slot;
    p->src = rc.match == MATCH_EXACT || rc.match == MATCH_ANY_TAG ? src : MPI_ANY_SOURCE;
    p->tag = rc.match == MATCH_EXACT || rc.match == MATCH_ANY_SOURCE
                 ? slot_tag(ts->id, m->slot, m->k)
                 : MPI_ANY_TAG;
    p->buf = NULL;
}

/* One late receive with the scheduled call. */
static void late_receive(struct thread_state *ts, int round, struct posted *p, int op)
{
    MPI_Comm comm = g_comms[slot_comm(ts->id, p->slot)];
    MPI_Status st, probed;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Request req;
    int flag = 0, count = LARGE_LEN;

    switch (op) {
    case LATE_RECV:
        p->buf = mtest_calloc(LARGE_LEN, sizeof(uint32_t));
        MPI_Recv(p->buf, LARGE_LEN, MPI_UINT32_T, p->src, p->tag, comm, &st);
        break;
    case LATE_PROBE:
    case LATE_IPROBE:
        if (op == LATE_PROBE)
            MPI_Probe(p->src, p->tag, comm, &probed);
        while (op == LATE_IPROBE && !flag)
            MPI_Iprobe(p->src, p->tag, comm, &flag, &probed);
        MPI_Get_count(&probed, MPI_UINT32_T, &count);
        if (!MTEST_CHECK(count >= HEADER && count <= LARGE_LEN, "probe: %d elements", count))
            count = LARGE_LEN;
        p->buf = mtest_calloc((size_t)count, sizeof(uint32_t));
        /* only this thread receives this class of messages: the probed one comes next */
        MPI_Recv(p->buf, count, MPI_UINT32_T, probed.MPI_SOURCE, probed.MPI_TAG, comm, &st);
        MTEST_CHECK(st.MPI_SOURCE == probed.MPI_SOURCE && st.MPI_TAG == probed.MPI_TAG,
                    "probed %d/%d, received %d/%d", probed.MPI_SOURCE, probed.MPI_TAG,
                    st.MPI_SOURCE, st.MPI_TAG);
        break;
    default:
        if (op == LATE_MPROBE)
            MPI_Mprobe(p->src, p->tag, comm, &msg, &probed);
        while (op == LATE_IMPROBE && !flag)
            MPI_Improbe(p->src, p->tag, comm, &flag, &msg, &probed);
        MPI_Get_count(&probed, MPI_UINT32_T, &count);
        if (!MTEST_CHECK(count >= HEADER && count <= LARGE_LEN, "mprobe: %d elements", count))
            count = LARGE_LEN;
        p->buf = mtest_calloc((size_t)count, sizeof(uint32_t));
        if (op == LATE_MPROBE) {
            MPI_Mrecv(p->buf, count, MPI_UINT32_T, &msg, &st);
        } else {
            MPI_Imrecv(p->buf, count, MPI_UINT32_T, &msg, &req);
            MPI_Wait(&req, &st);
        }
        MTEST_CHECK(msg == MPI_MESSAGE_NULL, "message handle not reset");
        break;
    }
    check_message(ts, p, &st, round);
}

static void complete_all(int n, MPI_Request *reqs, MPI_Status *sts, int how)
{
    int *idx = mtest_calloc((size_t)n + 1, sizeof(int)), done = 0, rc = MPI_SUCCESS;
    MPI_Status *tmp = mtest_calloc((size_t)n + 1, sizeof(MPI_Status));

    if (how == DONE_WAITALL) {
        rc = MPI_Waitall(n, reqs, sts);
    } else if (how == DONE_TESTANY) {
        while (done < n && rc == MPI_SUCCESS) {
            int index = -1, flag = 0;

            rc = MPI_Testany(n, reqs, &index, &flag, &tmp[0]);
            if (flag && index == MPI_UNDEFINED)
                break;
            if (flag) {
                sts[index] = tmp[0];
                done++;
            }
        }
        MTEST_CHECK(done == n, "MPI_Testany completed %d of %d", done, n);
    } else {
        while (done < n && rc == MPI_SUCCESS) {
            int outcount = 0;

            rc = MPI_Waitsome(n, reqs, &outcount, idx, tmp);
            if (outcount == MPI_UNDEFINED)
                break;
            for (int i = 0; i < outcount; i++)
                sts[idx[i]] = tmp[i];
            done += outcount;
        }
        MTEST_CHECK(done == n, "MPI_Waitsome completed %d of %d", done, n);
    }
    MTEST_CHECK(rc == MPI_SUCCESS, "completion (%d) returned %d", how, rc);
    for (int i = 0; i < n; i++)
        MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "request %d not released", i);
    free(idx);
    free(tmp);
}

static void run_round(struct thread_state *ts, int round)
{
    int t = ts->id, nreq = 0, npost = 0, nsend = 0, rc;
    int cap = (g_size - 1) * MAX_MSGS * 2;
    MPI_Request *reqs = mtest_calloc((size_t)cap, sizeof(MPI_Request));
    MPI_Status *sts = mtest_calloc((size_t)cap, sizeof(MPI_Status));
    struct posted *posted = mtest_calloc((size_t)cap, sizeof(struct posted));
    uint32_t **sbufs = mtest_calloc((size_t)cap, sizeof(uint32_t *));
    struct msg m;

    /* 1. pre-post the receives of the classes taken early, before any blocking send */
    for (int d = 1; d < g_size; d++) {
        int src = (g_rank + g_size - d) % g_size, n = plan_count(round, t, src, g_rank);

        for (int i = 0; i < n; i++) {
            struct recv_class rc_;
            struct posted *p = &posted[npost];

            plan_msg(round, t, src, g_rank, i, &m);
            plan_class(round, t, g_rank, m.slot, &rc_);
            if (rc_.late)
                continue;
            pattern_of(ts, round, src, &m, p);
            p->buf = mtest_calloc(LARGE_LEN, sizeof(uint32_t));
            MPI_Irecv(p->buf, LARGE_LEN, MPI_UINT32_T, p->src, p->tag,
                      g_comms[slot_comm(t, m.slot)], &reqs[nreq++]);
            npost++;
        }
    }
    /* 2. the sends, in schedule order per destination */
    for (int d = 1; d < g_size; d++) {
        int dst = (g_rank + d) % g_size, n = plan_count(round, t, g_rank, dst);

        for (int i = 0; i < n; i++) {
            MPI_Comm comm;
            int tag;

            plan_msg(round, t, g_rank, dst, i, &m);
            comm = g_comms[slot_comm(t, m.slot)];
            tag = slot_tag(t, m.slot, m.k);
            sbufs[nsend] = make_message(ts, dst, &m);
            ts->sent[dst][m.slot][m.k]++;
            switch (m.op) {
            case OP_SEND: MPI_Send(sbufs[nsend], m.len, MPI_UINT32_T, dst, tag, comm); break;
            case OP_SSEND: MPI_Ssend(sbufs[nsend], m.len, MPI_UINT32_T, dst, tag, comm); break;
            case OP_ISEND:
                MPI_Isend(sbufs[nsend], m.len, MPI_UINT32_T, dst, tag, comm, &reqs[nreq++]);
                break;
            default:
                MPI_Issend(sbufs[nsend], m.len, MPI_UINT32_T, dst, tag, comm, &reqs[nreq++]);
                break;
            }
            nsend++;
        }
    }
    /* 3. the late receives, each with its scheduled call */
    for (int d = 1; d < g_size; d++) {
        int src = (g_rank + g_size - d) % g_size, n = plan_count(round, t, src, g_rank);

        for (int i = 0; i < n; i++) {
            struct recv_class rc_;
            struct posted p;

            plan_msg(round, t, src, g_rank, i, &m);
            plan_class(round, t, g_rank, m.slot, &rc_);
            if (!rc_.late)
                continue;
            pattern_of(ts, round, src, &m, &p);
            late_receive(ts, round, &p, m.late);
            free(p.buf);
        }
    }
    /* 4. complete the pre-posted receives (first npost requests) and the nonblocking sends;
     * pre-posted receives are checked in posting order, which is their matching order */
    complete_all(nreq, reqs, sts, (int)(draw(5, round, t, g_rank, 0, 0) % 3));
    for (int i = 0; i < npost; i++) {
        check_message(ts, &posted[i], &sts[i], round);
        free(posted[i].buf);
    }
    for (int i = 0; i < nsend; i++)
        free(sbufs[i]);
    free(reqs);
    free(sts);
    free(posted);
    free(sbufs);
    rc = MPI_Barrier(g_comms[t]);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Barrier on comm %d returned %d", t, rc);
}

static void *thread_main(void *arg)
{
    struct thread_state *ts = arg;
    struct msg m;
    long expected = 0;

    for (int round = 0; round < g_rounds; round++)
        run_round(ts, round);
    /* every stream must be complete: replay the senders' schedules */
    for (int src = 0; src < g_size; src++) {
        int want[NSLOTS][NTAGS] = {{0}};

        for (int round = 0; round < g_rounds && src != g_rank; round++) {
            int n = plan_count(round, ts->id, src, g_rank);

            for (int i = 0; i < n; i++) {
                plan_msg(round, ts->id, src, g_rank, i, &m);
                want[m.slot][m.k]++;
                expected++;
            }
        }
        for (int s = 0; s < NSLOTS; s++)
            for (int k = 0; k < NTAGS; k++)
                MTEST_CHECK(ts->expect[src][s][k] == want[s][k],
                            "thread %d: stream (from %d, slot %d, tag %d) ended at %d of %d",
                            ts->id, src, s, k, ts->expect[src][s][k], want[s][k]);
    }
    MTEST_CHECK(ts->received == expected, "thread %d received %ld messages, expected %ld", ts->id,
                ts->received, expected);
    return NULL;
}

/* Communicator i: assertions by i % 4 (none, source, tag, both); given at creation or with
 * MPI_Comm_set_info on the fresh dup, alternating so that both ways meet every kind. */
static void create_comms(int hints)
{
    for (int i = 0; i < g_ncomms; i++) {
        int kind = i % 4, rc;
        MPI_Info info;

        if (!hints) {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[i]);
            if (rc != MPI_SUCCESS)
                MPI_Abort(MPI_COMM_WORLD, 1);
            g_asserts[i] = 0;
            continue;
        }
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_no_any_source", kind & NO_ANY_SRC ? "true" : "false");
        MPI_Info_set(info, "mpi_assert_no_any_tag", kind & NO_ANY_TAG ? "true" : "false");
        if ((i / 4 + i) % 2 == 0) {
            rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &g_comms[i]);
        } else {
            rc = MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[i]);
            if (rc == MPI_SUCCESS)
                rc = MPI_Comm_set_info(g_comms[i], info);
        }
        MPI_Info_free(&info);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "creating communicator %d failed\n", i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        g_asserts[i] = kind;
    }
}

static int env_int(const char *name, int fallback, int lo, int hi)
{
    const char *s = getenv(name);
    char *end = NULL;
    long v;

    if (s == NULL || *s == '\0')
        return fallback;
    v = strtol(s, &end, 10);
    return *end == '\0' && v >= lo && v <= hi ? (int)v : fallback;
}

int main(int argc, char **argv)
{
    static struct thread_state states[MT_MAX_THREADS];
    unsigned long long seed = 20240611;
    const char *text;

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MTEST_CHECK(g_size >= 2 && g_size <= MAX_RANKS, "needs 2..%d processes", MAX_RANKS);
    if (g_size < 2 || g_size > MAX_RANKS)
        return mtest_finalize(0);

    g_nthreads = mt_nthreads(4, 1);
    g_rounds = env_int("MTEST_ROUNDS", 60, 1, 100000);
    g_ncomms = g_nthreads + NSHARED;
    text = getenv("MTEST_SEED");
    if (text != NULL && *text != '\0')
        seed = strtoull(text, NULL, 0);
    /* rank 0's seed decides, so the schedule is the same everywhere */
    MPI_Bcast(&seed, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    g_seed = seed;
    mtest_debug("seed %llu, %d threads, %d rounds", seed, g_nthreads, g_rounds);
    create_comms(env_int("MTEST_HINTS", 1, 0, 1));

    for (int t = 0; t < g_nthreads; t++)
        states[t].id = t;
    mt_run(g_nthreads, thread_main, states, sizeof(states[0]));

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < g_ncomms; i++)
        MPI_Comm_free(&g_comms[i]);
    if (mtest_error_count() > 0 && g_rank == 0)
        fprintf(stderr, "stress_mix: seed %llu (MTEST_SEED reproduces the schedule)\n", seed);
    return mtest_finalize(0);
}
