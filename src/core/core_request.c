/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: request objects. Each VCI owns a cache of free requests and two immutable
 * pre-completed requests (a finished send, a receive from MPI_PROC_NULL), all protected by that
 * VCI's lock, so threads on different VCIs never share a free list. Waiting polls the request's
 * own VCI and, after a run of unsuccessful polls, sweeps the other VCIs once (the global progress
 * the standard requires; see docs/design/progress.md).
 */
#include "core.h"

#include "pt2pt.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

typedef struct request_cache {
    mf_request_t *free_list;
    mf_request_t precomplete;
    mf_request_t proc_null;
    unsigned misses;
} __attribute__((aligned(MF_CACHE_LINE))) request_cache_t;

static request_cache_t *caches;
static int ncaches;
/* MANIFOLD_VCI_REQUEST_CACHE=0 (an ablation): every VCI allocates from caches[0], under this
 * lock besides its own. */
static int shared_cache;
static atomic_int shared_cache_lock;

/* cache_of's answer per VCI index, resolved once (all caches[0] when shared). */
static request_cache_t *cache_for[MF_VCI_MAX];

static inline request_cache_t *cache_of(const mf_vci_t *vci)
{
    return cache_for[mf_vci_index(vci)];
}

static inline void shared_lock(void)
{
    if (!shared_cache)
        return;
    while (atomic_exchange_explicit(&shared_cache_lock, 1, memory_order_acquire) != 0)
        mf_cpu_relax();
}

static inline void shared_unlock(void)
{
    if (shared_cache)
        atomic_store_explicit(&shared_cache_lock, 0, memory_order_release);
}

/* Every chunk ever allocated, freed at finalize; until then a stale handle still points at
 * readable memory marked MF_KIND_FREED. */
typedef struct request_chunk {
    struct request_chunk *next;
} __attribute__((aligned(MF_CACHE_LINE))) request_chunk_t;

/* Each request of a chunk has the transport's headroom in front of it (mf_vci_request_headroom:
 * a receive's UCX request lives there), so a slot is headroom + request. */
static size_t req_headroom, req_stride;

static struct {
    pthread_mutex_t lock;
    request_chunk_t *list;
} chunks = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define CACHE_CHUNK 64

static void builtin_init(mf_request_t *req, mf_req_type_t type, mf_vci_t *vci)
{
    memset(req, 0, sizeof(*req));
    req->kind = MF_KIND_REQUEST;
    req->type = (uint8_t)type;
    req->vci = vci;
    atomic_store_explicit(&req->op.done, 1, memory_order_relaxed);
}

mf_status_t mf_request_pool_init(int nvcis)
{
    caches = mf_aligned_alloc(MF_CACHE_LINE, sizeof(request_cache_t) * (size_t)nvcis);
    if (caches == NULL)
        return MF_ERR_NO_MEMORY;
    memset(caches, 0, sizeof(request_cache_t) * (size_t)nvcis);
    for (int i = 0; i < nvcis; i++) {
        builtin_init(&caches[i].precomplete, MF_REQ_PRECOMPLETE, mf_vci_get(i));
        builtin_init(&caches[i].proc_null, MF_REQ_NULL_PROC, mf_vci_get(i));
    }
    ncaches = nvcis;
    req_headroom = mf_vci_request_headroom();
    req_stride = req_headroom + sizeof(mf_request_t);
    shared_cache = !mf_params.vci_request_cache;
    for (int i = 0; i < nvcis; i++)
        cache_for[i] = shared_cache ? &caches[0] : &caches[i];
    return MF_OK;
}

void mf_request_pool_fini(void)
{
    pthread_mutex_lock(&chunks.lock);
    while (chunks.list != NULL) {
        request_chunk_t *next = chunks.list->next;
        free(chunks.list);
        chunks.list = next;
    }
    pthread_mutex_unlock(&chunks.lock);
    free(caches);
    caches = NULL;
    ncaches = 0;
}

static int cache_refill(request_cache_t *cache, mf_vci_t *vci)
{
    size_t size = sizeof(request_chunk_t) + CACHE_CHUNK * req_stride;
    request_chunk_t *c = mf_aligned_alloc(MF_CACHE_LINE, size);
    if (c == NULL)
        return 0;
    memset(c, 0, size); /* the cold parts start zero (core.h) */
    pthread_mutex_lock(&chunks.lock);
    c->next = chunks.list;
    chunks.list = c;
    pthread_mutex_unlock(&chunks.lock);
    for (int i = 0; i < CACHE_CHUNK; i++) {
        mf_request_t *req =
            (mf_request_t *)((char *)(c + 1) + (size_t)i * req_stride + req_headroom);
        req->kind = MF_KIND_FREED;
        req->next_free = cache->free_list;
        cache->free_list = req;
    }
    cache->misses++;
    mf_vci_count_request_miss_locked(vci);
    return 1;
}

/* The request's reference on its communicator, taken and dropped under the lock of req->vci.
 * Requests on the communicator's home VCI share one reference (comm->home_requests and
 * home_held, protected by that lock), kept while the communicator lives; those on other VCIs
 * (a spread communicator) take their own. */
static inline void comm_ref_locked(mf_request_t *req)
{
    mf_comm_t *comm = req->comm;
    req->home_ref = req->vci == comm->vci;
    if (!req->home_ref) {
        mf_comm_hold(comm);
    } else if (comm->home_requests++ == 0 && !comm->home_held) {
        comm->home_held = 1;
        mf_comm_hold(comm);
    }
}

static atomic_int *persistent_count(mf_request_t *req)
{
    return req->home_ref ? &req->comm->persistent_home : &req->comm->persistent_other;
}

void mf_request_set_persistent(mf_request_t *req)
{
    req->persistent = 1;
    atomic_fetch_add_explicit(persistent_count(req), 1, memory_order_relaxed);
}

static inline void comm_unref_locked(mf_comm_t *comm, int home_ref)
{
    if (!home_ref) {
        mf_comm_release(comm);
    } else if (--comm->home_requests == 0 && comm->home_drop) {
        comm->home_held = 0;
        mf_comm_release(comm);
    }
}

typedef uint64_t block16_t __attribute__((vector_size(16), may_alias));

/* Clear [from, to) of a request with 16-byte stores: a memset of these sizes compiles to
 * `rep stos`, whose start-up costs more than the stores. */
static inline void request_clear(mf_request_t *req, size_t from, size_t to)
{
    block16_t *b = (block16_t *)((char *)req + from);
#pragma GCC unroll 16
    for (size_t i = 0; i < (to - from) / 16; i++)
        b[i] = (block16_t){0, 0};
}

/* The hot part's op and buf_len, and the cold part (core.h), as whole 16-byte blocks. */
#define OP_FROM   offsetof(mf_request_t, op)
#define COLD_FROM offsetof(mf_request_t, cold_flags)
#define COLD_TO   ((offsetof(mf_request_t, joined) + sizeof(void *[2]) + 15) / 16 * 16)
_Static_assert(OP_FROM % 16 == 0 && COLD_FROM % 16 == 0, "16-byte blocks");
_Static_assert(offsetof(mf_request_t, buf_len) + sizeof(size_t) == COLD_FROM,
               "op and buf_len end where the cold part starts");
_Static_assert(COLD_TO <= sizeof(mf_request_t), "the cold part fits");

/* A request from the cache: its cold part is zero already (the invariant of core.h), so only
 * the hot part is written. */
static inline void request_init(mf_request_t *req, mf_vci_t *vci, mf_req_type_t type,
                                mf_comm_t *comm)
{
    req->kind = MF_KIND_REQUEST;
    req->type = (uint8_t)type;
    req->counted = 0;
    req->vci = vci;
    req->comm = comm;
    request_clear(req, OP_FROM, COLD_FROM);
}

void mf_request_init_local(mf_request_t *req, mf_vci_t *vci, mf_req_type_t type, mf_comm_t *comm)
{
    request_clear(req, COLD_FROM, COLD_TO); /* stack memory: no invariant to rely on */
    request_init(req, vci, type, comm);
}

/* The first free request of the VCI's cache (refilled when empty), still on the free list. */
static mf_request_t *cache_head_locked(request_cache_t *cache, mf_vci_t *vci)
{
    if (MF_UNLIKELY(cache->free_list == NULL) && !cache_refill(cache, vci)) {
        mf_log(MF_LOG_ERROR, "request", "cannot allocate a request");
        return NULL;
    }
    return cache->free_list;
}

static inline mf_request_t *take_locked(request_cache_t *cache, mf_request_t *req, mf_vci_t *vci,
                                        mf_req_type_t type, mf_comm_t *comm)
{
    cache->free_list = req->next_free;
    /* The next allocation reads the new head's first line: a window of requests next to the
     * transport's own no longer fits the first-level cache. (A null head is harmless.) */
    __builtin_prefetch(req->next_free, 1);
    request_init(req, vci, type, comm);
    if (comm != NULL)
        comm_ref_locked(req);
    return req;
}

/* An empty cache or the shared-cache ablation. Out of line: inline, the refill's calls made
 * every allocation save and restore registers. */
static __attribute__((noinline, cold)) mf_request_t *alloc_slow(mf_vci_t *vci, mf_req_type_t type,
                                                                mf_comm_t *comm)
{
    request_cache_t *cache = cache_of(vci);
    shared_lock();
    mf_request_t *req = cache_head_locked(cache, vci);
    if (req != NULL)
        take_locked(cache, req, vci, type, comm);
    shared_unlock();
    return req;
}

MF_HOT_PATH mf_request_t *mf_request_alloc_locked(mf_vci_t *vci, mf_req_type_t type,
                                                  mf_comm_t *comm)
{
    if (MF_UNLIKELY(shared_cache)) /* the shared cache is read only under its own lock */
        return alloc_slow(vci, type, comm);
    request_cache_t *cache = cache_of(vci);
    mf_request_t *req = cache->free_list;
    if (MF_UNLIKELY(req == NULL))
        return alloc_slow(vci, type, comm);
    return take_locked(cache, req, vci, type, comm);
}

/* What only buffered sends, derived datatypes, persistent, partitioned and collective requests
 * attach; out of line so that the common release makes no call. Clears the cold part, which
 * the next allocation relies on. */
static __attribute__((noinline)) void release_extras(mf_request_t *req)
{
    if (req->persistent && req->comm != NULL) /* before the reference goes */
        atomic_fetch_sub_explicit(persistent_count(req), 1, memory_order_relaxed);
    if (req->has_int)
        mf_handle_forget(req);
    free(req->bsend_copy);
    mf_dtype_temp_free(req->pack_buf);
    if (req->dtype != NULL)
        mf_dtype_release(req->dtype);
    if (req->sched != NULL)
        mf_sched_free(req->sched);
    request_clear(req, COLD_FROM, COLD_TO);
}

/* A request with nothing in its cold part (core.h): that part is zero, as the cache wants it. */
static inline int request_plain(const mf_request_t *req)
{
    return (req->cold_flags | (uintptr_t)req->dtype | (uintptr_t)req->pack_buf |
            (uintptr_t)req->poll) == 0;
}

static inline void release_plain_locked(mf_request_t *req)
{
    request_cache_t *cache = cache_of(req->vci);
    mf_comm_t *comm = req->comm;
    int home_ref = req->home_ref; /* read before the request goes back to the cache */
    req->kind = MF_KIND_FREED;
    shared_lock();
    req->next_free = cache->free_list;
    cache->free_list = req;
    shared_unlock();
    if (comm != NULL)
        comm_unref_locked(comm, home_ref);
}

void mf_request_release_locked(mf_request_t *req)
{
    if (req->type == MF_REQ_PRECOMPLETE || req->type == MF_REQ_NULL_PROC)
        return;
    if (MF_UNLIKELY(!request_plain(req)))
        release_extras(req);
    release_plain_locked(req);
}

mf_request_t *mf_request_precomplete(mf_vci_t *vci)
{
    return &caches[mf_vci_index(vci)].precomplete;
}

mf_request_t *mf_request_proc_null(mf_vci_t *vci)
{
    return &caches[mf_vci_index(vci)].proc_null;
}

/* An array pass (mf_request_pass_begin/end): one test of many requests, where a poll hook that
 * advances every schedule at once needs to run only for the first of them (each run walks
 * all started schedules: run per request, a Waitany over n collectives cost n^2 per pass). */
static _Thread_local int pass_active, pass_polled;

void mf_request_pass_begin(void)
{
    pass_active = 1;
    pass_polled = 0;
}

void mf_request_pass_end(void)
{
    pass_active = 0;
}

int mf_request_pass_first_poll(void)
{
    if (!pass_active)
        return 1;
    int first = !pass_polled;
    pass_polled = 1;
    return first;
}

int mf_request_is_complete(mf_request_t *req)
{
    if (req->poll != NULL && !mf_vci_op_is_done(&req->op))
        req->poll(req);
    return mf_vci_op_is_done(&req->op);
}

/* How many empty polls a waiting thread makes before it yields the CPU, chosen per thread from
 * how its recent waits ended, since whether spinning or yielding pays depends on where the
 * threads that will send to us run:
 * - something arrived while we spun: the sender runs on another core. Yielding would hand our
 *   core to a thread whose own peer may not be running, so keep spinning (SPIN_LONG polls).
 * - a yield gave the core to another thread (it lasted much longer than a lone yield): the
 *   sender may be that thread, descheduled while we spin, so yield early (SPIN_SHORT polls).
 * `spin_doubt` (0-256) weighs the second outcome against the first. An arrival counts eight times
 * a handover (1/4 against 1/32): where both happen, the sender mostly runs elsewhere and the
 * handovers come from the scheduler's time slices, which spinning on survives; a waiter whose
 * sender shares its core sees no arrival at all. A lone yield (nobody else wanted the core)
 * counts for neither. Other VCIs are swept every MANIFOLD_PROGRESS_SWEEP_POLLS empty polls and
 * before every yield (MPI's progress rule). */
enum { SPIN_SHORT = 4, SPIN_LONG = 1024, DOUBT_MAX = 256, HANDOVER_FACTOR = 4 };
/* initial-exec: read on every poll, so no __tls_get_addr call (a few bytes of static TLS) */
static _Thread_local int spin_doubt __attribute__((tls_model("initial-exec")));
/* The empty polls before a yield that spin_doubt gives, kept beside it so that a poll reads
 * one value. */
static _Thread_local int spin_budget __attribute__((tls_model("initial-exec"))) = SPIN_LONG;

static void doubt_changed(int doubt)
{
    spin_doubt = doubt;
    spin_budget = doubt < DOUBT_MAX / 2 ? SPIN_LONG : SPIN_SHORT;
}
/* The shortest yield seen in this process: the cost of a lone yield on this machine. */
static _Atomic uint64_t lone_yield_ns = UINT64_MAX;

static __attribute__((noinline)) void yield_and_learn(void)
{
    uint64_t start = mf_now_ns();
    sched_yield();
    uint64_t took = mf_now_ns() - start;
    uint64_t lone = atomic_load_explicit(&lone_yield_ns, memory_order_relaxed);
    if (took < lone)
        atomic_store_explicit(&lone_yield_ns, took, memory_order_relaxed);
    else if (took > HANDOVER_FACTOR * lone)
        doubt_changed(spin_doubt + ((DOUBT_MAX - spin_doubt) >> 5));
}

/* Threads that waited (reached idle_polls), each with a count of its idle rounds, so that
 * MPI_Finalize can tell whether another thread is still waiting in a call that can never
 * complete (an erroneous program): it would poll a transport that finalize destroys. Records
 * are never freed; one per thread that ever waited. */
typedef struct waiter {
    atomic_uint rounds;
    struct waiter *next;
} waiter_t;
static _Atomic(waiter_t *) waiters;
static _Thread_local waiter_t *my_waiter;

static void waiter_count(void)
{
    waiter_t *me = my_waiter;
    if (MF_UNLIKELY(me == NULL)) {
        me = mf_calloc(1, sizeof(*me), "waiter record");
        if (me == NULL)
            return;
        me->next = atomic_load(&waiters);
        while (!atomic_compare_exchange_weak(&waiters, &me->next, me))
            ;
        my_waiter = me;
    }
    atomic_fetch_add_explicit(&me->rounds, 1, memory_order_relaxed);
}

int mf_request_other_waiters(int watch_ms)
{
    enum { MAX_WATCHED = 256 };
    waiter_t *seen[MAX_WATCHED];
    unsigned before[MAX_WATCHED];
    int n = 0, busy = 0;
    for (waiter_t *w = atomic_load(&waiters); w != NULL && n < MAX_WATCHED; w = w->next) {
        if (w == my_waiter)
            continue;
        seen[n] = w;
        before[n++] = atomic_load_explicit(&w->rounds, memory_order_relaxed);
    }
    if (n == 0)
        return 0;
    struct timespec pause = {watch_ms / 1000, (long)(watch_ms % 1000) * 1000000L};
    nanosleep(&pause, NULL);
    for (int i = 0; i < n; i++)
        busy += atomic_load_explicit(&seen[i]->rounds, memory_order_relaxed) != before[i];
    return busy;
}

/* A run of empty polls reached a sweep point or the spin budget: sweep the other VCIs, and
 * yield at the budget. Out of line, so that an empty poll is a single test. */
static __attribute__((noinline)) int idle_polls(mf_vci_t *vci, int polls)
{
    waiter_count();
    mf_vci_progress_others(vci);
    if (polls < spin_budget)
        return polls;
    yield_and_learn();
    return 0;
}

/* One poll of a wait. Inlined into mf_request_wait_done's loop, whose registers are then saved
 * once per wait rather than once per poll; the other waits call mf_progress_poke. */
static inline __attribute__((always_inline)) void poke(mf_vci_t *vci, int *polls_p)
{
    mf_sched_progress_all();
    mf_progress_part();
    mf_progress_rma();
    if (MF_UNLIKELY(mf_global.progress_all)) {
        /* MANIFOLD_VCI_PROGRESS=all (an ablation): every VCI, every time. */
        mf_vci_progress(vci);
        mf_vci_progress_all();
        return;
    }
    if (mf_vci_progress(vci) > 0) {
        if (*polls_p > 0)
            doubt_changed(spin_doubt - (spin_doubt >> 2));
        *polls_p = 0;
        return;
    }
    int polls = ++*polls_p;
    if (MF_UNLIKELY(((unsigned)polls & mf_global.sweep_mask) == 0 || polls >= spin_budget))
        *polls_p = idle_polls(vci, polls);
}

/* The progress helper's view of the layers above the transport (mf_vci_async_start): their
 * work outstanding, and one round of their progress. */
int mf_progress_upper_pending(void)
{
    return mf_sched_started() != 0 || atomic_load(&mf_part_waiting) != 0 ||
           atomic_load(&mf_rma_windows) != 0;
}

void mf_progress_upper(void)
{
    mf_sched_progress_all();
    mf_progress_part();
    mf_progress_rma();
}

void mf_progress_poke(mf_vci_t *vci, int *polls_p)
{
    poke(vci, polls_p);
}

/* Calls that only test (MPI_Test*, MPI_Iprobe ...) count their unsuccessful polls per thread,
 * so a program polling in a loop gets the global sweep too. */
static _Thread_local int test_polls __attribute__((tls_model("initial-exec")));

int *mf_progress_test_counter(void)
{
    return &test_polls;
}

void mf_progress_test(mf_vci_t *vci)
{
    mf_progress_poke(vci, &test_polls);
}

void mf_request_wait_done(mf_request_t *req)
{
    int polls = 0;
    if (mf_request_is_complete(req))
        return;
    while (!mf_request_is_complete(req))
        poke(req->vci, &polls);
}

int mf_request_wait_done_unless(mf_request_t *req, int (*give_up)(mf_comm_t *), mf_comm_t *comm)
{
    int polls = 0;
    unsigned pokes = 0;
    while (!mf_request_is_complete(req)) {
        poke(req->vci, &polls);
        if (++pokes % 256 == 0 && !mf_request_is_complete(req) && give_up(comm))
            return 0;
    }
    return 1;
}

mf_status_t mf_request_finish(mf_request_t *req)
{
    mf_request_wait_done(req);
    mf_status_t status = req->op.status;
    if (req->type != MF_REQ_PRECOMPLETE && req->type != MF_REQ_NULL_PROC) {
        mf_vci_t *vci = req->vci; /* the request may be reused once released */
        mf_vci_lock(vci);
        mf_request_release_locked(req);
        mf_vci_unlock(vci);
    }
    return status;
}

static int class_from_status(mf_status_t status)
{
    switch (status) {
    case MF_OK:
    case MF_ERR_CANCELED: return MPI_SUCCESS;
    case MF_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case MF_ERR_PEER_FAILED: return MPI_ERR_PROC_ABORTED;
    case MF_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_OTHER;
    }
}

int mf_request_error(mf_request_t *req)
{
    if (MF_UNLIKELY(req->type == MF_REQ_GREQ))
        return mf_greq_error(req);
    return class_from_status(req->op.status);
}

void mf_request_fill_status(mf_request_t *req, MPI_Status *status)
{
    if (MF_UNLIKELY(req->type == MF_REQ_GREQ)) {
        mf_greq_query(req, status); /* query_fn runs even when the status is ignored */
        return;
    }
    if (status == MPI_STATUS_IGNORE)
        return;
    if (req->persistent && !req->active) {
        mf_status_set_empty(status); /* an inactive persistent request */
        return;
    }
    if (req->persistent && req->peer == MPI_PROC_NULL) {
        if (req->type == MF_REQ_RECV || req->type == MF_REQ_PRECV)
            mf_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, status->MPI_ERROR, 0, 0);
        else
            mf_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, status->MPI_ERROR, 0, 0);
        return;
    }
    switch (req->type) {
    case MF_REQ_RECV: {
        int cancelled = req->op.status == MF_ERR_CANCELED;
        MPI_Count bytes = (MPI_Count)req->op.length;
        if (req->op.status == MF_ERR_TRUNCATE || bytes > (MPI_Count)req->buf_len)
            bytes = (MPI_Count)req->buf_len;
        if (cancelled) {
            status->MPI_SOURCE = MPI_ANY_SOURCE;
            status->MPI_TAG = MPI_ANY_TAG;
            mf_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR, 0, 1);
        } else {
            mf_status_set(status, mf_pt2pt_tag_source(req->op.sender_tag),
                          mf_pt2pt_tag_tag(req->op.sender_tag), status->MPI_ERROR, bytes, 0);
        }
        break;
    }
    case MF_REQ_PRECV:
    case MF_REQ_SENDRECV: /* the receive's source, tag and count */
        mf_status_set(status, req->peer, req->tag, status->MPI_ERROR, (MPI_Count)req->buf_len, 0);
        break;
    case MF_REQ_NULL_PROC:
        mf_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, status->MPI_ERROR, 0, 0);
        break;
    default:
        /* Sends: only the cancelled flag and the count (0) are meaningful. */
        mf_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, status->MPI_ERROR, 0, 0);
        break;
    }
}

void mf_request_unpack(mf_request_t *req)
{
    if (req->type != MF_REQ_RECV || req->dtype == NULL || req->unpacked || req->streamed)
        return;
    req->unpacked = 1;
    /* a truncated message left nothing defined in the copy (the transport does not deliver a
     * message too long for its buffer): the user's buffer stays as it was, as for a predefined
     * type, rather than receive stale bytes of the temporary's last use */
    if (req->op.status != MF_OK)
        return;
    size_t got = req->op.length < req->buf_len ? req->op.length : req->buf_len;
    if (MF_LIKELY(got == req->buf_len && got > 0 && req->op.status == MF_OK))
        mf_dtype_unpack_all(req->dtype, req->dt_count, req->dt_buf, req->pack_buf); /* no range */
    else
        mf_dtype_unpack(req->dtype, req->dt_count, req->dt_buf, req->pack_buf, 0, (MPI_Count)got);
}

static inline void hold_vci(mf_vci_t *vci, mf_vci_t **held_p)
{
    if (*held_p != vci) {
        if (*held_p != NULL)
            mf_vci_unlock(*held_p);
        mf_vci_lock(vci);
        *held_p = vci;
    }
}

/* complete_any for a receive whose only extras are a packed copy to unpack and the type's
 * reference (a small derived receive of the immediate forms, or a staged temporary): clearing
 * just those fields restores the zero cold part, with no call to release_extras. */
static inline int complete_derived_recv(MPI_Request *handle_p, MPI_Status *status,
                                        mf_vci_t **held_p)
{
    mf_request_t *req = *handle_p;
    if (MF_LIKELY(req->op.status == MF_OK && req->op.length == req->buf_len && req->buf_len > 0 &&
                  !req->unpacked))
        mf_dtype_copy_inline(req->dtype, req->dt_count, (uintptr_t)req->dt_buf, req->pack_buf, 1);
    else
        mf_request_unpack(req); /* a short, truncated, cancelled or empty one */
    mf_request_fill_status(req, status);
    int err = mf_request_error(req);
    void *packed = req->pack_buf;
    struct MPI_ABI_Datatype *dt = req->dtype;
    req->dtype = NULL;
    req->dt_buf = NULL;
    req->dt_count = 0;
    req->pack_buf = NULL;
    req->unpacked = 0;
    hold_vci(req->vci, held_p);
    release_plain_locked(req);
    *handle_p = MPI_REQUEST_NULL;
    mf_dtype_temp_free(packed);
    mf_dtype_release(dt);
    return err;
}

/* Complete *handle_p (done, or inactive: an empty status), fill *status, free the request
 * unless it is persistent; the VCI lock taken to release it stays in *held_p for the next
 * request of the same VCI. Returns the error class. */
static __attribute__((noinline)) int complete_any(MPI_Request *handle_p, MPI_Status *status,
                                                  mf_vci_t **held_p)
{
    mf_request_t *req = *handle_p;
    if (req == MPI_REQUEST_NULL || (req->persistent && !req->active)) {
        mf_status_set_empty(status);
        return MPI_SUCCESS;
    }
    if (MF_UNLIKELY(req->kind != MF_KIND_REQUEST)) {
        /* Freed since the call checked its arguments: the same request appeared earlier in the
         * array and completed there (binding_request.c, element_error, names it). */
        mf_status_set_empty(status);
        *handle_p = MPI_REQUEST_NULL;
        return MF_REQUEST_FREED_EARLIER;
    }
    if (req->type == MF_REQ_RECV && req->dtype != NULL &&
        (req->cold_flags | (uintptr_t)req->poll) == 0)
        return complete_derived_recv(handle_p, status, held_p);
    if (req->type == MF_REQ_GREQ) {
        /* The user's callbacks may call MPI: no VCI lock across them. */
        if (*held_p != NULL)
            mf_vci_unlock(*held_p);
        *held_p = NULL;
        int err = mf_greq_query(req, status);
        *handle_p = MPI_REQUEST_NULL;
        return mf_greq_finish(req, err);
    }
    mf_request_unpack(req);
    mf_request_fill_status(req, status);
    int err = mf_request_error(req);
    if (req->persistent) {
        /* release: a thread that finds the request inactive (MPI_Parrived's flag) may then
         * read what its completion delivered */
        __atomic_store_n(&req->active, 0, __ATOMIC_RELEASE);
        return err;
    }
    if (req->type != MF_REQ_PRECOMPLETE && req->type != MF_REQ_NULL_PROC) {
        hold_vci(req->vci, held_p);
        mf_request_release_locked(req);
    }
    *handle_p = MPI_REQUEST_NULL;
    return err;
}

/* complete_any's common cases, inline in the loops: a send that finished inside its call, and
 * a plain send or receive that succeeded and whose status is ignored (nothing to unpack or
 * report; the request goes straight back to the cache). Returns 0 for anything else. */
static inline __attribute__((always_inline)) int
complete_fast(MPI_Request *handle_p, MPI_Status *status, mf_vci_t **held_p)
{
    mf_request_t *req = *handle_p;
    if (req == MPI_REQUEST_NULL || status != MPI_STATUS_IGNORE)
        return 0;
    if (req->type == MF_REQ_PRECOMPLETE) {
        *handle_p = MPI_REQUEST_NULL;
        return 1;
    }
    if ((req->type != MF_REQ_RECV && req->type != MF_REQ_SEND) || req->op.status != MF_OK ||
        !request_plain(req) || MF_UNLIKELY(req->kind != MF_KIND_REQUEST))
        return 0;
    hold_vci(req->vci, held_p);
    release_plain_locked(req);
    *handle_p = MPI_REQUEST_NULL;
    return 1;
}

int mf_request_complete(MPI_Request *handle_p, MPI_Status *status)
{
    mf_vci_t *held = NULL;
    int err = MPI_SUCCESS;
    if (!complete_fast(handle_p, status, &held))
        err = complete_any(handle_p, status, &held);
    if (held != NULL)
        mf_vci_unlock(held);
    return err;
}

/* The communicator of a request the call may complete; NULL for one freed earlier in the
 * same call, whose communicator may be gone. */
static mf_comm_t *request_comm(MPI_Request r)
{
    return r != MPI_REQUEST_NULL && r->kind == MF_KIND_REQUEST ? r->comm : NULL;
}

mf_comm_t *mf_request_hold_failing_comm(MPI_Request r)
{
    /* Only a generalized request fails without an operation status, and its communicator is
     * MPI_COMM_SELF, which is never destroyed: it is held after the completion. */
    mf_comm_t *comm = request_comm(r);
    if (comm == NULL || r->op.status == MF_OK)
        return NULL;
    mf_comm_hold(comm);
    return comm;
}

void mf_request_note_failure(int err, mf_comm_t *comm, mf_comm_t *held, int *failed,
                             mf_comm_t **failed_comm_p)
{
    if (err != MPI_SUCCESS && !*failed) {
        *failed = 1;
        if (held == NULL && comm != NULL)
            mf_comm_hold(comm); /* a generalized request's MPI_COMM_SELF */
        *failed_comm_p = held != NULL ? held : comm;
    } else if (held != NULL) {
        mf_comm_release(held);
    }
}

int mf_request_complete_all(int count, MPI_Request reqs[], MPI_Status statuses[],
                            mf_comm_t **failed_comm_p)
{
    int failed = 0;
    mf_vci_t *held = NULL;
    *failed_comm_p = NULL;
    if (statuses == MPI_STATUSES_IGNORE) {
        for (int i = 0; i < count; i++) {
            if (MF_LIKELY(complete_fast(&reqs[i], MPI_STATUS_IGNORE, &held)))
                continue;
            mf_comm_t *comm = request_comm(reqs[i]);
            mf_comm_t *held_comm = mf_request_hold_failing_comm(reqs[i]);
            int err = complete_any(&reqs[i], MPI_STATUS_IGNORE, &held);
            mf_request_note_failure(err, comm, held_comm, &failed, failed_comm_p);
        }
    } else {
        for (int i = 0; i < count; i++) {
            mf_comm_t *comm = request_comm(reqs[i]);
            mf_comm_t *held_comm = mf_request_hold_failing_comm(reqs[i]);
            int err = complete_any(&reqs[i], &statuses[i], &held);
            statuses[i].MPI_ERROR = err;
            mf_request_note_failure(err, comm, held_comm, &failed, failed_comm_p);
        }
    }
    if (held != NULL)
        mf_vci_unlock(held);
    return failed;
}

/* ---- status ------------------------------------------------------------------------------ */

void mf_status_set(MPI_Status *status, int source, int tag, int error, MPI_Count bytes,
                   int cancelled)
{
    status->MPI_SOURCE = source;
    status->MPI_TAG = tag;
    status->MPI_ERROR = error;
    /* The ABI gives status only int alignment: store the 64-bit count bytewise. */
    memcpy(&status->MPI_internal[0], &bytes, sizeof(bytes));
    status->MPI_internal[2] = cancelled;
}

MPI_Count mf_status_bytes(const MPI_Status *status)
{
    MPI_Count bytes;
    memcpy(&bytes, &status->MPI_internal[0], sizeof(bytes));
    return bytes;
}

int mf_status_cancelled(const MPI_Status *status)
{
    return status->MPI_internal[2];
}

void mf_status_set_empty(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE)
        mf_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, 0, 0);
}
