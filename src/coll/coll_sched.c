/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective schedules: the engine behind the non-blocking (MPI_Ibcast ...) and persistent
 * (MPI_Bcast_init ...) collectives. A schedule is a list of steps grouped in rounds; a round
 * first runs its local steps (copies, reductions) in order, then posts its sends and receives
 * on the communicator's internal context, and the next round starts once all of them have
 * completed. Started schedules sit on one process-wide list that every progress loop advances
 * (mf_sched_progress_all), so a collective moves on whichever request the program waits for,
 * which the standard requires: peers may complete outstanding collectives in different orders.
 * Each schedule carries its own tag, derived from a per-communicator sequence number that all
 * members agree on because collectives are started in the same order everywhere. A step may
 * address another communicator than the schedule's (mf_sched_on): intercommunicator collectives
 * mix steps to the remote group with steps over the local group's private communicator.
 */
#include "coll.h"

#include "pt2pt.h"

#include <stdlib.h>
#include <string.h>

typedef enum {
    STEP_SEND,
    STEP_RECV,
    STEP_COPY,
    STEP_REDUCE,
    STEP_PACK,
    STEP_UNPACK,
    STEP_CALL
} step_kind_t;

typedef struct {
    uint8_t kind;
    int round;
    int peer;
    mf_comm_t *comm;  /* whose processes `peer` names, on whose internal context */
    const void *src;  /* send data, copy/reduce input, pack: the user buffer */
    void *dst;        /* receive buffer, copy/reduce output, unpack: the user buffer */
    size_t len;       /* bytes (send, receive, copy, pack, unpack) or items (reduce) */
    MPI_Datatype dt;  /* pack, unpack: a reference held until the schedule is freed */
    MPI_Count count;  /* pack, unpack: items of dt */
    void *packed;     /* pack, unpack: the packed form (len bytes) */
    mf_sched_fn_t fn; /* STEP_CALL, with dst as its argument */
    mf_request_t *req;
} step_t;

struct mf_sched {
    mf_comm_t *comm;
    mf_comm_t *on; /* the communicator new steps address (mf_sched_on) */
    int tag;
    int nsteps, cap, round;
    step_t *steps;
    void **tmps; /* scratch buffers owned by the schedule */
    int ntmps;
    MPI_Datatype dt; /* of the reductions */
    MPI_Op op;
    mf_status_t build_status;
    /* While started: */
    mf_request_t *owner;
    int cur;    /* first step of the running round */
    int posted; /* the running round's operations are posted */
    mf_status_t status;
    struct mf_sched *prev, *next;
};

static struct {
    pthread_mutex_t lock;
    mf_sched_t *head;
    atomic_int count;
} active = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* ---- building ---------------------------------------------------------------------------- */

mf_sched_t *mf_sched_create(mf_comm_t *comm, int seq_tag)
{
    mf_sched_t *s = mf_calloc(1, sizeof(*s), "collective schedule");
    if (s == NULL)
        return NULL;
    s->comm = comm;
    s->on = comm;
    s->tag = seq_tag;
    s->build_status = MF_OK;
    return s;
}

int mf_sched_next_tag(mf_comm_t *comm, int persistent)
{
    /* Bit 23 set keeps these tags apart from the blocking collectives' small ones. */
    const uint32_t nbc = 1u << (MF_PT2PT_TAG_BITS - 1), kind = 1u << (MF_PT2PT_TAG_BITS - 2);
    uint32_t seq = persistent ? comm->nbc_pseq++ : comm->nbc_seq++;
    return (int)(nbc | (persistent ? kind : 0) | (seq & (kind - 1)));
}

static step_t *add_step(mf_sched_t *s, step_kind_t kind)
{
    if (s->build_status != MF_OK)
        return NULL;
    if (s->nsteps == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        step_t *steps = realloc(s->steps, (size_t)cap * sizeof(*steps));
        if (steps == NULL) {
            s->build_status = MF_ERR_NO_MEMORY;
            return NULL;
        }
        s->steps = steps;
        s->cap = cap;
    }
    step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    st->kind = (uint8_t)kind;
    st->round = s->round;
    st->comm = s->on;
    return st;
}

void mf_sched_send(mf_sched_t *s, const void *buf, size_t len, int peer)
{
    step_t *st = add_step(s, STEP_SEND);
    if (st != NULL) {
        st->src = buf;
        st->len = len;
        st->peer = peer;
    }
}

void mf_sched_recv(mf_sched_t *s, void *buf, size_t len, int peer)
{
    step_t *st = add_step(s, STEP_RECV);
    if (st != NULL) {
        st->dst = buf;
        st->len = len;
        st->peer = peer;
    }
}

void mf_sched_copy(mf_sched_t *s, void *dst, const void *src, size_t len)
{
    if (len == 0 || dst == src)
        return;
    step_t *st = add_step(s, STEP_COPY);
    if (st != NULL) {
        st->dst = dst;
        st->src = src;
        st->len = len;
    }
}

void mf_sched_reduce(mf_sched_t *s, const void *in, void *inout, size_t count)
{
    if (count == 0)
        return;
    step_t *st = add_step(s, STEP_REDUCE);
    if (st != NULL) {
        st->src = in;
        st->dst = inout;
        st->len = count;
    }
}

void mf_sched_call(mf_sched_t *s, mf_sched_fn_t fn, void *arg)
{
    step_t *st = add_step(s, STEP_CALL);
    if (st != NULL) {
        st->fn = fn;
        st->dst = arg;
    }
}

void mf_sched_set_op(mf_sched_t *s, MPI_Datatype dt, MPI_Op op)
{
    /* A derived type stays alive while the schedule may reduce on it (MPI_Type_free may come
     * before the operation completes). */
    mf_dtype_retain(dt);
    mf_dtype_release(s->dt);
    s->dt = dt;
    mf_op_retain(op); /* and a user operation (MPI_Op_free may come first too) */
    mf_op_release(s->op);
    s->op = op;
}

static void add_pack_step(mf_sched_t *s, step_kind_t kind, MPI_Datatype dt, MPI_Count count,
                          const void *src, void *dst, void *packed, size_t len)
{
    if (len == 0)
        return;
    step_t *st = add_step(s, kind);
    if (st != NULL) {
        mf_dtype_retain(dt);
        st->dt = dt;
        st->count = count;
        st->src = src;
        st->dst = dst;
        st->packed = packed;
        st->len = len;
    }
}

void mf_sched_pack(mf_sched_t *s, MPI_Datatype dt, MPI_Count count, const void *buf, void *packed,
                   size_t len)
{
    add_pack_step(s, STEP_PACK, dt, count, buf, NULL, packed, len);
}

void mf_sched_unpack(mf_sched_t *s, MPI_Datatype dt, MPI_Count count, void *buf, const void *packed,
                     size_t len)
{
    add_pack_step(s, STEP_UNPACK, dt, count, NULL, buf, (void *)packed, len);
}

void mf_sched_on(mf_sched_t *s, mf_comm_t *comm)
{
    s->on = comm;
}

void mf_sched_barrier(mf_sched_t *s)
{
    /* An empty round is harmless but useless: only open a new one after some step. */
    if (s->nsteps > 0 && s->steps[s->nsteps - 1].round == s->round)
        s->round++;
}

void *mf_sched_tmp(mf_sched_t *s, size_t len)
{
    if (s->build_status != MF_OK)
        return NULL;
    void **tmps = realloc(s->tmps, (size_t)(s->ntmps + 1) * sizeof(*tmps));
    void *p = mf_malloc(len ? len : 1, "collective scratch buffer");
    if (tmps != NULL)
        s->tmps = tmps;
    if (tmps == NULL || p == NULL) {
        free(p);
        s->build_status = MF_ERR_NO_MEMORY;
        return NULL;
    }
    s->tmps[s->ntmps++] = p;
    return p;
}

void mf_sched_adopt(mf_sched_t *s, void *p)
{
    if (p == NULL)
        return;
    void **tmps =
        s->build_status == MF_OK ? realloc(s->tmps, (size_t)(s->ntmps + 1) * sizeof(*tmps)) : NULL;
    if (tmps == NULL) {
        free(p);
        if (s->build_status == MF_OK)
            s->build_status = MF_ERR_NO_MEMORY;
        return;
    }
    s->tmps = tmps;
    s->tmps[s->ntmps++] = p;
}

mf_status_t mf_sched_status(const mf_sched_t *s)
{
    return s->build_status;
}

void mf_sched_free(mf_sched_t *s)
{
    if (s == NULL)
        return;
    for (int i = 0; i < s->ntmps; i++)
        free(s->tmps[i]);
    for (int i = 0; i < s->nsteps; i++)
        if (s->steps[i].kind == STEP_PACK || s->steps[i].kind == STEP_UNPACK)
            mf_dtype_release(s->steps[i].dt);
    mf_dtype_release(s->dt);
    mf_op_release(s->op);
    free(s->tmps);
    free(s->steps);
    free(s);
}

/* ---- running ----------------------------------------------------------------------------- */

static void note_error(mf_sched_t *s, mf_status_t status)
{
    if (status != MF_OK && status != MF_ERR_CANCELED && s->status == MF_OK)
        s->status = status;
}

/* Post the running round: local steps first, in order, then its sends and receives. */
static void post_round(mf_sched_t *s, int end)
{
    for (int i = s->cur; i < end; i++) {
        step_t *st = &s->steps[i];
        if (st->kind == STEP_COPY)
            memmove(st->dst, st->src, st->len);
        else if (st->kind == STEP_REDUCE)
            mf_op_apply(s->op, st->src, st->dst, st->len, s->dt);
        else if (st->kind == STEP_PACK)
            mf_dtype_pack(st->dt, st->count, st->src, st->packed, 0, (MPI_Count)st->len);
        else if (st->kind == STEP_UNPACK)
            mf_dtype_unpack(st->dt, st->count, st->dst, st->packed, 0, (MPI_Count)st->len);
        else if (st->kind == STEP_CALL)
            note_error(s, st->fn(s, st->dst)); /* may append steps: st is stale after it */
    }
    for (int i = s->cur; i < end; i++) {
        step_t *st = &s->steps[i];
        mf_status_t status = MF_OK;
        unsigned ctx = mf_comm_ctx_internal(st->comm);
        st->req = NULL;
        if (st->kind == STEP_SEND) {
            const void *src = st->src;
            size_t len = st->len;
            if (MF_UNLIKELY(s->status != MF_OK)) {
                /* An earlier step failed (the processes passed counts that differ): a message
                 * of another length than the receiver expects passes the error on, where
                 * forwarding the data would let it complete without error. */
                static const char poison;
                src = &poison;
                len = st->len == 0 ? 1 : 0;
            }
            status = mf_pt2pt_isend(src, len, st->peer, s->tag, st->comm, ctx, MF_SEND_STANDARD, 0,
                                    &st->req);
        } else if (st->kind == STEP_RECV)
            status = mf_pt2pt_irecv(st->dst, st->len, st->peer, s->tag, st->comm, ctx, &st->req);
        if (status != MF_OK) {
            st->req = NULL;
            note_error(s, status);
        }
    }
    s->posted = 1;
}

/* Advance one started schedule as far as it goes; 1 when it has finished. Sched lock held. */
static int advance(mf_sched_t *s)
{
    while (s->cur < s->nsteps) {
        int end = s->cur;
        while (end < s->nsteps && s->steps[end].round == s->steps[s->cur].round)
            end++;
        if (!s->posted)
            post_round(s, end);
        int pending = 0;
        for (int i = s->cur; i < end; i++) {
            step_t *st = &s->steps[i];
            if (st->req == NULL)
                continue;
            if (!mf_vci_op_is_done(&st->req->op)) {
                pending = 1;
                continue;
            }
            MPI_Request h = st->req;
            note_error(s, st->req->op.status);
            /* Every step knows the exact length it receives: a shorter message means that the
             * processes passed counts whose sizes differ (a longer one is truncated). A
             * topology's MPI_PROC_NULL neighbour sends nothing. */
            if (st->kind == STEP_RECV && st->peer != MPI_PROC_NULL && st->req->op.length != st->len)
                note_error(s, MF_ERR_TRUNCATE);
            (void)mf_request_complete(&h, MPI_STATUS_IGNORE);
            st->req = NULL;
        }
        if (pending)
            return 0;
        s->cur = end;
        s->posted = 0;
    }
    return 1;
}

static void unlink_active(mf_sched_t *s)
{
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        active.head = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    atomic_fetch_sub_explicit(&active.count, 1, memory_order_relaxed);
}

/* Started schedules whose request nobody will wait for (mf_sched_abandon). */
static atomic_int abandoned;

static void finish(mf_sched_t *s)
{
    mf_request_t *req = s->owner;
    unlink_active(s);
    req->op.status = s->status;
    req->op.length = 0;
    /* Read before `done` is published: from then on the owner may complete and release the
     * request, and its slot may be another request's by the time we looked. (An abandoned
     * request is marked under active.lock, which the caller holds.) */
    int abandoned_req = req->user_freed;
    mf_vci_t *vci = req->vci;
    atomic_store_explicit(&req->op.done, 1, memory_order_release);
    if (MF_UNLIKELY(abandoned_req)) { /* nobody waits for it (mf_sched_abandon) */
        mf_vci_lock(vci);
        mf_request_release_locked(req); /* and the schedule with it */
        mf_vci_unlock(vci);
        atomic_fetch_sub(&abandoned, 1);
    }
}

int mf_sched_abandon(mf_request_t *req, atomic_int *flag)
{
    pthread_mutex_lock(&active.lock);
    int ended = atomic_load_explicit(&req->op.done, memory_order_acquire);
    if (!ended) {
        atomic_store(flag, 1);
        req->user_freed = 1;
        atomic_fetch_add(&abandoned, 1);
    }
    pthread_mutex_unlock(&active.lock);
    return ended;
}

/* Bounded: a peer that never joins the collective (an erroneous program) must not keep this
 * process out of MPI_Finalize for ever. */
#define ABANDONED_WAIT_NS (30ull * 1000 * 1000 * 1000)

void mf_sched_finish_abandoned(void)
{
    uint64_t start = mf_now_ns();
    while (atomic_load(&abandoned) > 0) {
        mf_sched_progress_all();
        mf_vci_progress_all();
        if (mf_now_ns() - start > ABANDONED_WAIT_NS) {
            mf_log(MF_LOG_WARN, "coll",
                   "MPI_Finalize: %d collective operation(s) of failed calls (MPI_Comm_idup) "
                   "still wait for other processes; going on without them",
                   atomic_load(&abandoned));
            return;
        }
    }
}

static __attribute__((noinline)) void progress_started(void)
{
    /* One thread advances all schedules at a time; the others poll their VCIs meanwhile. */
    if (pthread_mutex_trylock(&active.lock) != 0)
        return;
    mf_sched_t *s = active.head;
    while (s != NULL) {
        mf_sched_t *next = s->next;
        if (advance(s))
            finish(s);
        s = next;
    }
    pthread_mutex_unlock(&active.lock);
}

int mf_sched_started(void)
{
    return atomic_load_explicit(&active.count, memory_order_relaxed);
}

/* Every poll of every wait comes here: with no schedule started, one load. */
MF_HOT_PATH void mf_sched_progress_all(void)
{
    if (atomic_load_explicit(&active.count, memory_order_relaxed) != 0)
        progress_started();
}

/* The completion-check hook of a collective request: a collective finishes only when schedules
 * are advanced, and every test of one advances all started schedules (another one may be what a
 * peer needs before it can serve this one). */
static void sched_poll(mf_request_t *req)
{
    (void)req;
    if (mf_request_pass_first_poll()) /* once per test of an array */
        mf_sched_progress_all();
}

mf_status_t mf_sched_start(mf_request_t *req)
{
    mf_sched_t *s = req->sched;
    s->owner = req;
    s->cur = 0;
    s->posted = 0;
    s->status = MF_OK;
    mf_vci_op_reset(&req->op, NULL);
    req->active = 1;
    pthread_mutex_lock(&active.lock);
    s->prev = NULL;
    s->next = active.head;
    if (active.head != NULL)
        active.head->prev = s;
    active.head = s;
    atomic_fetch_add_explicit(&active.count, 1, memory_order_relaxed);
    if (advance(s))
        finish(s);
    pthread_mutex_unlock(&active.lock);
    mf_vci_async_kick();
    return MF_OK;
}

mf_status_t mf_sched_request(mf_sched_t *s, int persistent, mf_request_t **req_p)
{
    mf_status_t status = s->build_status;
    if (status != MF_OK) {
        mf_sched_free(s);
        return status;
    }
    mf_comm_t *comm = s->comm;
    mf_vci_lock(comm->vci);
    mf_request_t *req = mf_request_alloc_locked(comm->vci, MF_REQ_COLL, comm);
    mf_vci_unlock(comm->vci);
    if (req == NULL) {
        mf_sched_free(s);
        return MF_ERR_NO_MEMORY;
    }
    req->sched = s;
    req->poll = sched_poll;
    s->owner = req;
    if (persistent) {
        mf_request_set_persistent(req);
        /* Inactive until MPI_Start; a completed inactive request reads as done. */
        atomic_store_explicit(&req->op.done, 1, memory_order_relaxed);
        *req_p = req;
        return MF_OK;
    }
    status = mf_sched_start(req);
    req->active = 0;
    *req_p = req;
    return status;
}

mf_comm_t *mf_sched_comm(const mf_sched_t *s)
{
    return s->on;
}
