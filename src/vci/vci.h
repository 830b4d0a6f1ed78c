/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VCI layer interface. A VCI (virtual communication interface) is one independent channel to
 * the network: a UCX worker, its endpoints to peers (created lazily on first use), and a lock
 * that serialises the worker. This is the only layer that includes UCX headers; it converts UCX
 * status codes to mf_status_t and reports completions through mf_vci_op_t, which upper layers
 * embed in their request objects.
 *
 * Locking: every function named *_locked must be called with the VCI's lock held (mf_vci_lock).
 * Completion hooks run inside progress with the lock held: they must not take another VCI lock
 * and must not block.
 */
#ifndef MF_VCI_H
#define MF_VCI_H

#include "util.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct mf_vci mf_vci_t;

/* One transport operation in flight. Upper layers embed it (zeroed by mf_vci_op_reset) and
 * poll `done`. On completion the VCI layer fills status/sender_tag/length, then runs
 * `on_complete` (if set, lock held), then stores done = 1 with release order (unless the hook
 * released the op's owner). */
typedef struct mf_vci_op {
    atomic_int done;
    mf_status_t status;
    uint64_t sender_tag; /* receives and probes: the matched message's tag */
    size_t length;       /* receives: bytes delivered (the message length when truncated) */
    void *transport_req; /* in-flight transport request, for cancel; NULL once complete */
    /* Returns 1 when it released the object embedding the op (then `done` is not touched). */
    int (*on_complete)(struct mf_vci_op *op);
} mf_vci_op_t;

static inline void mf_vci_op_reset(mf_vci_op_t *op, int (*on_complete)(mf_vci_op_t *op))
{
    atomic_store_explicit(&op->done, 0, memory_order_relaxed);
    op->status = MF_OK;
    op->sender_tag = 0;
    op->length = 0;
    op->transport_req = NULL;
    op->on_complete = on_complete;
}

static inline int mf_vci_op_is_done(mf_vci_op_t *op)
{
    return atomic_load_explicit(&op->done, memory_order_acquire);
}

/* A message found by a matched probe (mf_vci_tag_mprobe_locked); received with
 * mf_vci_tag_mrecv_locked exactly once. */
typedef struct mf_vci_msg {
    void *transport_msg;
    uint64_t sender_tag;
    size_t length;
} mf_vci_msg_t;

/* Bring up the pool of `nvcis` VCIs (MF_VCI_MAX at most). Only VCI 0 gets a worker now, and its
 * address is published under PMI (the caller fences afterwards); the others get theirs on
 * first use (mf_vci_activate), so start-up costs the same whatever the pool size. How VCIs map
 * onto UCX contexts and workers, and whether each has its own lock, follows the MANIFOLD_VCI_*
 * and MANIFOLD_THREAD_CS tunables (mf_params). local_size (processes of the job on this node)
 * sizes what UCX may take from /dev/shm. */
mf_status_t mf_vci_pool_init(int world_rank, int world_size, int local_rank, int local_size,
                             int nvcis);
/* Stops the progress helper and closes every endpoint: MPI_Finalize, after the PMI fence that
 * ends the job's communication and before another fence (see mf_finalize). */
void mf_vci_pool_close_eps(void);
/* Closes any endpoint still open, destroys the workers and contexts. */
void mf_vci_pool_fini(void);
/* Receive and drop every message of (tag, tag_mask) that has reached a worker: for the library's
 * own messages left unmatched at finalize (UCX warns about unexpected ones when a worker
 * closes). Call after the PMI fence. */
void mf_vci_pool_discard(uint64_t tag, uint64_t tag_mask);

int mf_vci_pool_size(void);
mf_vci_t *mf_vci_get(int index);

/* A VCI lock: a test-and-test-and-set word, biased to the first thread that takes it. While
 * the bias holds, that thread enters with plain stores and loads (no atomic read-modify-write,
 * whose full barrier costs more than the rest of a message's own work); its entry is one half
 * of an asymmetric Dekker protocol whose other half, the heavy one, is a membarrier system call
 * made once by the first other thread that wants the lock, which revokes the bias for good.
 * From then on everyone uses the word. `word` is the lock for everyone but the biased owner;
 * `owner_in` is written only by the owner; `revoked` never goes back to 0. */
typedef struct mf_vci_lock {
    atomic_uintptr_t owner; /* the thread (mf_vci_thread_id) the bias belongs to, 0: none */
    atomic_int word;
    atomic_char owner_in; /* the owner holds the lock through the bias */
    atomic_char revoked;
} mf_vci_lock_t;

/* The start of every VCI, visible so that locking and the index inline into the message path;
 * the rest of the VCI is private to vci.c. The lock is the VCI's own, the one of the VCI owning
 * a shared worker, or the pool's single lock with MANIFOLD_THREAD_CS=global. Uncontended it is
 * one atomic exchange and one store (or, biased, plain stores), where a pthread mutex costs
 * about a hundred instructions per lock/unlock pair. The counters are written under the lock
 * and read racily by tools. */
typedef struct mf_vci_head {
    mf_vci_lock_t *lock;
    int index;
    atomic_uint_fast64_t lock_acquired, lock_contended;
} mf_vci_head_t;

static inline int mf_vci_index(const mf_vci_t *vci)
{
    return ((const mf_vci_head_t *)vci)->index;
}

/* The calling thread, named by the address of a thread-local byte (no call through the PLT). */
extern _Thread_local char mf_vci_thread_anchor __attribute__((tls_model("initial-exec")));

static inline __attribute__((always_inline)) uintptr_t mf_vci_thread_id(void)
{
    return (uintptr_t)&mf_vci_thread_anchor;
}

static inline __attribute__((always_inline)) void mf_vci_count(atomic_uint_fast64_t *counter)
{
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* The owner's entry: announce, then look for a revocation. The compiler barrier keeps the two
 * in order here; the revoker's membarrier orders them on the processor (vci.c). */
static inline __attribute__((always_inline)) int mf_vci_lock_try_biased(mf_vci_lock_t *l)
{
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) != mf_vci_thread_id())
        return 0;
    atomic_store_explicit(&l->owner_in, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    if (MF_LIKELY(!atomic_load_explicit(&l->revoked, memory_order_acquire)))
        return 1;
    atomic_store_explicit(&l->owner_in, 0, memory_order_release);
    return 0;
}

/* The slow entry (vci.c): 1 when acquired; `wait`: spin until it is; `claim`: bias an unclaimed
 * lock to the caller; `contended` (or NULL) counts entries that had to spin. */
int mf_vci_lock_enter(mf_vci_lock_t *l, int wait, int claim, atomic_uint_fast64_t *contended);
int mf_vci_lock_slow(mf_vci_t *vci, int wait); /* mf_vci_lock_enter with the pool's settings */
/* Whether locks may be biased in this process (registers the membarrier the revocation needs). */
int mf_vci_lock_bias_init(void);

static inline __attribute__((always_inline)) void mf_vci_lock_release(mf_vci_lock_t *l)
{
    /* owner_in is the owner's own variable: only it may read it as the way it came in */
    if (atomic_load_explicit(&l->owner, memory_order_relaxed) == mf_vci_thread_id() &&
        atomic_load_explicit(&l->owner_in, memory_order_relaxed))
        atomic_store_explicit(&l->owner_in, 0, memory_order_release);
    else
        atomic_store_explicit(&l->word, 0, memory_order_release);
}

static inline __attribute__((always_inline)) void mf_vci_lock(mf_vci_t *vci)
{
    mf_vci_head_t *h = (mf_vci_head_t *)vci;
    if (MF_UNLIKELY(!mf_vci_lock_try_biased(h->lock)))
        mf_vci_lock_slow(vci, 1);
    mf_vci_count(&h->lock_acquired);
}

static inline __attribute__((always_inline)) void mf_vci_unlock(mf_vci_t *vci)
{
    mf_vci_lock_release(((mf_vci_head_t *)vci)->lock);
}

/* 1 when acquired */
static inline int mf_vci_trylock(mf_vci_t *vci)
{
    mf_vci_head_t *h = (mf_vci_head_t *)vci;
    if (!mf_vci_lock_try_biased(h->lock) && !mf_vci_lock_slow(vci, 0))
        return 0;
    mf_vci_count(&h->lock_acquired);
    return 1;
}

/* Lazy set-up. A VCI is usable towards a peer once it is active (its worker exists) and knows
 * the peer's address for it; VCI 0 learns addresses from PMI by itself, the others from the
 * exchange the communicator layer runs when it maps a communicator to a VCI. */
mf_status_t mf_vci_activate(mf_vci_t *vci);
/* 1 when the VCI is active and knows the address of every listed world rank (NULL: 0..n-1). */
int mf_vci_knows_peers(mf_vci_t *vci, const int *world_ranks, int n);
/* Processes are numbered by the world's ranks, then in the order this process meets those of
 * other jobs (MPI_Comm_connect/accept/spawn); "world rank" in this layer means that number.
 * mf_vci_job_key names this job (all its processes compute the same key; other jobs' keys
 * differ). mf_vci_add_process returns the number of process `rank` of job `job`, adding it with
 * `addr` (its VCI 0 address) when it is new; MF_ERR_EXHAUSTED beyond MF_VCI_DYN_PROCS of them,
 * MF_ERR_INVALID for a rank of this job that does not exist. */
#define MF_VCI_DYN_PROCS 65536
int mf_vci_process_count(void);
uint64_t mf_vci_job_key(void);
mf_status_t mf_vci_add_process(uint64_t job, int rank, const void *addr, size_t len, int *index_p);
void mf_vci_process_id(int index, uint64_t *job_p, int *rank_p);
/* Waits until the endpoints to process `peer` (on every worker) finished connecting and
 * every operation on them completed: MPI_Comm_disconnect, before the last handshake with
 * another job's processes, so that none exits while this one's transport still connects. */
mf_status_t mf_vci_flush_process(int peer);
/* The number of process `rank` of job `job`, or -1 when this process never met it. */
int mf_vci_find_process(uint64_t job, int rank);
/* This process's address for the VCI (activated); valid until finalize. */
void mf_vci_local_address(mf_vci_t *vci, const void **addr_p, size_t *len_p);
mf_status_t mf_vci_set_peer_address(mf_vci_t *vci, int peer, const void *addr, size_t len);

/* Tagged operations. `peer` is a world rank. The op is complete on return when done is set. */
mf_status_t mf_vci_tag_send_locked(mf_vci_t *vci, int peer, const void *buf, size_t len,
                                   uint64_t tag, int synchronous, mf_vci_op_t *op);
/* A standard-mode send that needs no op unless the transport keeps it: MF_OK with *pending_p
 * NULL when the bytes left inside the call (the common case of a short message), else the
 * transport's request in *pending_p, which the caller must bind to an op with
 * mf_vci_send_bind_locked before it releases the lock (the lock keeps the completion from
 * running before then). An error means nothing was sent. `waits`: the caller waits for the
 * send at once (a blocking call), so UCX may pick the protocol that completes soonest here:
 * eager fragments up to 256 KiB instead of a rendezvous from a few KiB. */
mf_status_t mf_vci_tag_send_try_locked(mf_vci_t *vci, int peer, const void *buf, size_t len,
                                       uint64_t tag, int waits, void **pending_p);
/* The op (reset by the caller) that reports the completion of a pending send. */
void mf_vci_send_bind_locked(void *pending, mf_vci_op_t *op);
/* `placed`: NULL, or memory with mf_vci_request_headroom() bytes free in front of it, where the
 * transport keeps its own request for this receive (no allocation of its own); that memory
 * must stay valid until the op completes. */
mf_status_t mf_vci_tag_recv_locked(mf_vci_t *vci, void *buf, size_t len, uint64_t tag,
                                   uint64_t tag_mask, void *placed, mf_vci_op_t *op);
/* The bytes a caller of mf_vci_tag_recv_locked reserves in front of `placed` (a multiple of
 * the cache line; 0 when the transport cannot use such memory). */
size_t mf_vci_request_headroom(void);
/* A message whose bytes the transport packs or unpacks piece by piece through callbacks (a UCX
 * generic datatype), so no full-size copy of a non-contiguous buffer is made. The callbacks
 * run inside the calls below and inside progress, lock held; pieces may come in any order and
 * cover [0, length) of the packed form. The struct must live until the op completes. */
typedef struct mf_vci_packer {
    void (*pack)(void *ctx, size_t offset, void *dst, size_t len);
    void (*unpack)(void *ctx, size_t offset, const void *src, size_t len);
    void *ctx;
    size_t length; /* packed bytes (for a receive: the most that fits) */
    /* instead of the callbacks: `iovcnt` (address, length) pairs laid out as ucp_dt_iov_t,
     * covering the packed form in order; valid until the op completes */
    const void *iov;
    size_t iovcnt;
} mf_vci_packer_t;
/* `waits` as for mf_vci_tag_send_try_locked. */
mf_status_t mf_vci_tag_send_packed_locked(mf_vci_t *vci, int peer, mf_vci_packer_t *pk,
                                          uint64_t tag, int synchronous, int waits,
                                          mf_vci_op_t *op);
mf_status_t mf_vci_tag_recv_packed_locked(mf_vci_t *vci, mf_vci_packer_t *pk, uint64_t tag,
                                          uint64_t tag_mask, mf_vci_op_t *op);
/* Receive a message taken by mf_vci_tag_mprobe_locked through the packer. */
mf_status_t mf_vci_tag_mrecv_packed_locked(mf_vci_t *vci, mf_vci_packer_t *pk, mf_vci_msg_t *msg,
                                           mf_vci_op_t *op);
/* Non-destructive probe; returns 1 and fills tag/length when a matching message is waiting. */
int mf_vci_tag_probe_locked(mf_vci_t *vci, uint64_t tag, uint64_t tag_mask, uint64_t *tag_p,
                            size_t *len_p);
/* Matched probe: removes the message from matching; returns 1 when found. */
int mf_vci_tag_mprobe_locked(mf_vci_t *vci, uint64_t tag, uint64_t tag_mask, mf_vci_msg_t *msg);
mf_status_t mf_vci_tag_mrecv_locked(mf_vci_t *vci, void *buf, size_t len, mf_vci_msg_t *msg,
                                    mf_vci_op_t *op);
/* Ask the transport to cancel a posted receive; completion reports MF_ERR_CANCELED if it was. */
void mf_vci_cancel_locked(mf_vci_t *vci, mf_vci_op_t *op);

/* Progress one VCI: returns the number of events handled. Takes and releases the lock, and
 * marks the VCI as progressed by its own waiters, which the next sweep then skips. */
unsigned mf_vci_progress(mf_vci_t *vci);
unsigned mf_vci_progress_locked(mf_vci_t *vci);
/* Progress every other VCI whose lock is free and that nobody used or progressed for a while
 * (trylock; busy ones are skipped): the global progress the MPI standard requires when a
 * thread waits on one VCI while a message it depends on travels on another. Counted in the
 * per-VCI statistics. */
unsigned mf_vci_progress_others(mf_vci_t *self);
/* Progress every active VCI, waiting for each lock (MANIFOLD_VCI_PROGRESS=all, an ablation). */
unsigned mf_vci_progress_all(void);

/* Asynchronous progress (MANIFOLD_ASYNC_PROGRESS=on, docs/design/vci-progress.md): one helper
 * thread per process progresses the workers while the program computes. It blocks on the
 * workers' event file descriptors, and only while something needs progress: transport requests
 * in flight (counted here, while the helper is enabled) or the upper layers' work, which
 * `work_pending` reports and which they announce with mf_vci_async_kick when they start some.
 * It leaves a worker alone while a thread of the program uses it (the rule of the global
 * sweep) and runs `progress`, the upper layers' own progress (trylock only), every round.
 * Start after the pool is up; stop before anything `progress` touches is torn down. */
extern int mf_vci_async; /* the pool was brought up for a helper (set at pool init) */
mf_status_t mf_vci_async_start(void (*progress)(void), int (*work_pending)(void));
void mf_vci_async_stop(void);
void mf_vci_async_wake(void);
static inline void mf_vci_async_kick(void)
{
    if (MF_UNLIKELY(mf_vci_async))
        mf_vci_async_wake();
}
/* Times the helper woke up (an event, a kick or a timed look), for MPI_T. */
uint64_t mf_vci_async_wakeups(void);

/* Version of the transport library, for MPI_Get_library_version. */
void mf_vci_transport_version(unsigned *major, unsigned *minor, unsigned *release);

/* Per-VCI counters, read without the lock (approximate while traffic runs). A VCI whose
 * transport resources were never created reads as all zeros with active = 0. */
typedef struct mf_vci_stats {
    uint64_t sends, recvs;   /* transport operations issued on the VCI */
    uint64_t lock_acquired;  /* lock acquisitions, including successful trylocks */
    uint64_t lock_contended; /* acquisitions that found the lock held and had to wait */
    uint64_t global_sweeps;  /* sweeps over the other VCIs started by waiters on this one */
    uint64_t request_misses; /* request-cache refills (the cache was empty) */
    int active;              /* the VCI's worker exists */
} mf_vci_stats_t;
/* index < mf_vci_pool_size(). */
void mf_vci_stats_get(int index, mf_vci_stats_t *stats);
/* Count a request-cache refill on the VCI (lock held). */
void mf_vci_count_request_miss_locked(mf_vci_t *vci);

/* What the pool's transport resources amount to right now (MANIFOLD_VCI_SHARING decides how
 * VCIs map onto them). */
typedef struct mf_vci_resources {
    int contexts;  /* UCX contexts */
    int workers;   /* UCX workers created so far */
    int endpoints; /* endpoints created so far, over all workers */
} mf_vci_resources_t;
void mf_vci_resources_get(mf_vci_resources_t *res);

#endif /* MF_VCI_H */
