/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point protocol: MPI sends and receives on communicators, mapped onto the VCI's
 * tagged transport. Matching, wildcards and ordering are the transport's tag matching (see
 * pt2pt.h for the tag layout); the transport chooses eager or rendezvous by size, so there is no
 * protocol switch here that could add a cliff. Also buffered sends, persistent requests, probes
 * and cancellation.
 */
#include "pt2pt.h"

#include "coll.h"

#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long a buffered send waits for space held by earlier ones before MPI_ERR_BUFFER. */
#define BSEND_WAIT_NS 1000000000L

static mf_request_t *req_of_op(mf_vci_op_t *op)
{
    return (mf_request_t *)((char *)op - offsetof(mf_request_t, op));
}

/* ---- buffered sends ---------------------------------------------------------------------- */

/* The process's buffer (MPI_Buffer_attach); communicators and sessions have their own
 * (mf_comm_t, mf_session_t), made at their first attach. */
static mf_bsend_pool_t process_pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static size_t bsend_charge(size_t len)
{
    return len + MPI_BSEND_OVERHEAD;
}

static int pool_attached(mf_bsend_pool_t *pool)
{
    pthread_mutex_lock(&pool->lock);
    int attached = pool->attached;
    pthread_mutex_unlock(&pool->lock);
    return attached;
}

/* The buffer a buffered send on comm uses: the communicator's, else its session's, else the
 * process's (MPI-4.1 section 3.6.1). */
static mf_bsend_pool_t *bsend_pool_of(mf_comm_t *comm)
{
    mf_bsend_pool_t *pool = atomic_load_explicit(&comm->bsend_pool, memory_order_acquire);
    if (pool != NULL && pool_attached(pool))
        return pool;
    mf_session_t *s = comm->session;
    if (s != NULL && s->kind == MF_KIND_SESSION) {
        pool = atomic_load_explicit(&s->bsend_pool, memory_order_acquire);
        if (pool != NULL && pool_attached(pool))
            return pool;
    }
    return &process_pool;
}

static mf_status_t bsend_reserve(mf_bsend_pool_t *pool, size_t len)
{
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&pool->lock);
    if (!pool->attached) {
        mf_log(MF_LOG_INFO, "pt2pt", "buffered send of %zu bytes with no buffer attached", len);
        status = MF_ERR_NOT_FOUND;
    } else if (pool->buf != MPI_BUFFER_AUTOMATIC && pool->used + bsend_charge(len) > pool->size) {
        status = MF_ERR_NO_SPACE;
    } else {
        pool->used += bsend_charge(len);
    }
    pthread_mutex_unlock(&pool->lock);
    return status;
}

static void bsend_unreserve(mf_bsend_pool_t *pool, size_t len)
{
    pthread_mutex_lock(&pool->lock);
    pool->used -= bsend_charge(len);
    pthread_mutex_unlock(&pool->lock);
}

static size_t bsend_used(mf_bsend_pool_t *pool)
{
    pthread_mutex_lock(&pool->lock);
    size_t used = pool->used;
    pthread_mutex_unlock(&pool->lock);
    return used;
}

mf_bsend_pool_t *mf_bsend_pool_process(void)
{
    return &process_pool;
}

mf_status_t mf_bsend_pool_attach(mf_bsend_pool_t *pool, void *buf, size_t size)
{
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&pool->lock);
    if (pool->attached) {
        status = MF_ERR_INVALID;
    } else {
        pool->buf = buf;
        pool->size = size;
        pool->used = 0;
        pool->attached = 1;
    }
    pthread_mutex_unlock(&pool->lock);
    return status;
}

void mf_bsend_pool_flush(mf_bsend_pool_t *pool)
{
    /* Every message in the buffer must have been transmitted. */
    int polls = 0;
    while (bsend_used(pool) != 0)
        mf_progress_poke(mf_vci_get(0), &polls);
}

int mf_bsend_pool_idle(mf_bsend_pool_t *pool)
{
    return bsend_used(pool) == 0;
}

mf_status_t mf_bsend_pool_detach(mf_bsend_pool_t *pool, size_t size_max, void **buf_p,
                                 size_t *size_p)
{
    if (!pool_attached(pool))
        return MF_ERR_NOT_FOUND;
    pthread_mutex_lock(&pool->lock);
    size_t size = pool->size;
    pthread_mutex_unlock(&pool->lock);
    if (size > size_max)
        return MF_ERR_OVERFLOW;
    mf_bsend_pool_flush(pool);
    pthread_mutex_lock(&pool->lock);
    *buf_p = pool->buf;
    *size_p = pool->size;
    pool->attached = 0;
    pool->buf = NULL;
    pool->size = 0;
    pthread_mutex_unlock(&pool->lock);
    return MF_OK;
}

/* The VCI of a message: user traffic may be spread (mf_comm_vci_for), the library's own
 * always uses the home VCI. `rank` is the message's source. */
static inline mf_vci_t *msg_vci(mf_comm_t *comm, unsigned ctx, int rank, int tag)
{
    return ctx == mf_comm_ctx_user(comm) ? mf_comm_vci_for(comm, rank, tag) : comm->vci;
}

/* msg_vci, locked (mf_comm_vci_lock_for). */
static inline __attribute__((always_inline)) mf_vci_t *msg_vci_lock(mf_comm_t *comm, unsigned ctx,
                                                                    int rank, int tag)
{
    if (ctx == mf_comm_ctx_user(comm))
        return mf_comm_vci_lock_for(comm, rank, tag);
    mf_vci_lock(comm->vci);
    return comm->vci;
}

/* ---- completion -------------------------------------------------------------------------- */

/* Runs inside progress with the VCI lock held. Library-owned requests (buffered sends) and
 * requests the user already freed are released here; nobody else will look at them. */
static __attribute__((noinline)) int req_release_on_complete(mf_request_t *req)
{
    if (req->internal)
        bsend_unreserve(req->part, req->buf_len); /* a buffered send keeps its pool in `part` */
    if (req->user_freed)
        mf_request_unpack(req); /* nobody will wait for it: the data must land now */
    mf_request_release_locked(req);
    return 1;
}

static int req_on_complete(mf_vci_op_t *op)
{
    mf_request_t *req = req_of_op(op);
    if (req->counted) {
        req->counted = 0;
        req->comm->open_recvs--;
        if (op->status == MF_OK || op->status == MF_ERR_TRUNCATE)
            req->comm->unmatched--;
    }
    if (MF_UNLIKELY(req->internal || req->user_freed))
        return req_release_on_complete(req); /* out of line: the common case saves no registers */
    return 0;
}

/* Issue the send of a request of its own (completed through req_on_complete); `waits` as for
 * mf_pt2pt_isend (streamed sends only: the others here never finish inside the call). The op
 * must be fresh: a new request's is, a restarted persistent one is reset by mf_pt2pt_start. */
static inline __attribute__((always_inline)) mf_status_t
send_issue_locked(mf_request_t *req, const void *buf, size_t len, int dest, int tag, unsigned ctx,
                  int synchronous, int waits)
{
    mf_comm_t *comm = req->comm;
    if (mf_comm_unspread_locked(comm) && ctx == mf_comm_ctx_user(comm))
        comm->unmatched++; /* home VCI lock held */
    req->op.on_complete = req_on_complete;
    /* On an intercommunicator dest is a remote-group rank, and the source field carries our
     * local rank, which is how the remote group names us. */
    int peer = mf_comm_peer_world_rank(comm, dest);
    if (req->streamed)
        return mf_vci_tag_send_packed_locked(req->vci, peer, &req->packer,
                                             mf_pt2pt_tag_make(ctx, comm->tag_rank, tag),
                                             synchronous, waits, &req->op);
    return mf_vci_tag_send_locked(req->vci, peer, buf, len,
                                  mf_pt2pt_tag_make(ctx, comm->tag_rank, tag), synchronous,
                                  &req->op);
}

/* A buffered send: copy the data, send the copy with a library-owned request, done. The
 * attached buffer only accounts for the space (its contents are never used): MF_ERR_NO_SPACE
 * when it stays full, MF_ERR_NOT_FOUND when none is attached, MF_ERR_NO_MEMORY when the copy
 * (or its request) cannot be allocated, with a buffer attached or MPI_BUFFER_AUTOMATIC. */
static mf_status_t bsend_start(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm,
                               unsigned ctx)
{
    mf_bsend_pool_t *pool = bsend_pool_of(comm);
    mf_status_t status = bsend_reserve(pool, len);
    /* Space held by earlier buffered sends comes back as they complete: progress for up to a
     * second before declaring the buffer too small (the standard makes that case an error;
     * waiting longer could hang a program whose receiver needs this sender to go on). */
    if (status == MF_ERR_NO_SPACE && bsend_used(pool) > 0) {
        struct timespec start, now;
        clock_gettime(CLOCK_MONOTONIC, &start);
        int polls = 0;
        do {
            mf_progress_poke(comm->vci, &polls);
            status = bsend_reserve(pool, len);
            clock_gettime(CLOCK_MONOTONIC, &now);
        } while (status == MF_ERR_NO_SPACE && bsend_used(pool) > 0 &&
                 (now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) <
                     BSEND_WAIT_NS);
    }
    if (status != MF_OK)
        return status;
    void *copy = malloc(len > 0 ? len : 1);
    if (copy == NULL) {
        mf_log(MF_LOG_INFO, "pt2pt", "buffered send: no memory for a copy of %zu bytes", len);
        bsend_unreserve(pool, len);
        return MF_ERR_NO_MEMORY;
    }
    memcpy(copy, buf, len);
    mf_vci_t *vci = msg_vci_lock(comm, ctx, comm->rank, tag);
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_SEND, comm);
    if (req == NULL) {
        mf_vci_unlock(vci);
        free(copy);
        bsend_unreserve(pool, len);
        return MF_ERR_NO_MEMORY;
    }
    req->bsend_copy = copy;
    req->buf_len = len;
    req->part = pool; /* cleared with the cold part: `internal` is set below */
    /* Marked internal before issuing: if the send completes inside the call, the completion
     * hook already releases the request and its reservation. */
    req->internal = 1;
    status = send_issue_locked(req, copy, len, dest, tag, ctx, 0, 0);
    if (status != MF_OK) {
        mf_request_release_locked(req); /* frees the copy */
        bsend_unreserve(pool, len);
    }
    mf_vci_unlock(vci);
    return status;
}

/* MPI_PROC_NULL and buffered sends. */
static mf_status_t isend_special(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm,
                                 unsigned ctx, mf_send_mode_t mode, mf_request_t **req_p)
{
    mf_vci_t *vci = msg_vci(comm, ctx, comm->rank, tag);
    if (dest == MPI_PROC_NULL) {
        *req_p = mf_request_precomplete(vci);
        return MF_OK;
    }
    mf_status_t status = bsend_start(buf, len, dest, tag, comm, ctx);
    if (status == MF_OK)
        *req_p = mf_request_precomplete(vci);
    return status;
}

/* A synchronous send never finishes inside the call: a request of its own from the start. */
static mf_status_t isend_sync(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm,
                              unsigned ctx, mf_request_t **req_p)
{
    mf_vci_t *vci = msg_vci_lock(comm, ctx, comm->rank, tag);
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_SEND, comm);
    if (MF_UNLIKELY(req == NULL)) {
        mf_vci_unlock(vci);
        return MF_ERR_NO_MEMORY;
    }
    mf_status_t status = send_issue_locked(req, buf, len, dest, tag, ctx, 1, 0);
    if (status != MF_OK)
        mf_request_release_locked(req);
    mf_vci_unlock(vci);
    if (status == MF_OK)
        *req_p = req;
    return status;
}

mf_request_t *mf_pt2pt_send_pending_locked(mf_vci_t *vci, mf_comm_t *comm, void *pending)
{
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_SEND, comm);
    if (MF_LIKELY(req != NULL)) {
        req->op.on_complete = req_on_complete;
        mf_vci_send_bind_locked(pending, &req->op);
        return req;
    }
    /* No request to be had: finish the send here, so nothing is left for a completion nobody
     * would see. */
    mf_vci_op_t op;
    mf_vci_op_reset(&op, NULL);
    mf_vci_send_bind_locked(pending, &op);
    while (!mf_vci_op_is_done(&op))
        mf_vci_progress_locked(vci);
    return mf_request_precomplete(vci);
}

mf_status_t mf_pt2pt_isend_other(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm,
                                 unsigned ctx, mf_send_mode_t mode, mf_request_t **req_p)
{
    if (dest == MPI_PROC_NULL || mode == MF_SEND_BUFFERED)
        return isend_special(buf, len, dest, tag, comm, ctx, mode, req_p);
    return isend_sync(buf, len, dest, tag, comm, ctx, req_p);
}

/* recv_issue_locked with the op's completion callback `done_cb` (a constant at every call). */
static inline __attribute__((always_inline)) mf_status_t
recv_post_locked(mf_request_t *req, void *buf, size_t len, int source, int tag, unsigned ctx,
                 int placed, int (*done_cb)(mf_vci_op_t *))
{
    uint64_t match, mask;
    mf_comm_t *comm = req->comm;
    if (MF_UNLIKELY(comm->world_tags) && source >= 0)
        source = mf_comm_world_rank(comm, source);
    mf_pt2pt_match(ctx, source == MPI_ANY_SOURCE ? MF_PT2PT_ANY : source,
                   tag == MPI_ANY_TAG ? MF_PT2PT_ANY : tag, &match, &mask);
    req->buf_len = len;
    if (mf_comm_unspread_locked(comm) && ctx == mf_comm_ctx_user(comm)) {
        comm->open_recvs++; /* home VCI lock held */
        req->counted = 1;
    }
    req->op.on_complete = done_cb; /* a fresh op, as for send_issue_locked */
    if (req->streamed)
        return mf_vci_tag_recv_packed_locked(req->vci, &req->packer, match, mask, &req->op);
    /* `placed`: the request has room in front for UCX's own (one from the VCI's cache, or an
     * mf_request_local_t with room enough). */
    return mf_vci_tag_recv_locked(req->vci, buf, len, match, mask, placed ? req : NULL, &req->op);
}

static inline __attribute__((always_inline)) mf_status_t recv_issue_locked(mf_request_t *req,
                                                                           void *buf, size_t len,
                                                                           int source, int tag,
                                                                           unsigned ctx, int placed)
{
    return recv_post_locked(req, buf, len, source, tag, ctx, placed, req_on_complete);
}

/* ---- streamed derived datatypes ---------------------------------------------------------- */

/* The transport's packer callbacks: run under the VCI lock, each on its own request, for any
 * piece of the packed form (rendezvous fragments may come out of order). */
static void stream_pack(void *ctx, size_t offset, void *dst, size_t len)
{
    mf_request_t *req = ctx;
    mf_dtype_pack(req->dtype, req->dt_count, req->dt_buf, dst, (MPI_Count)offset,
                  (MPI_Count)(offset + len));
}

static void stream_unpack(void *ctx, size_t offset, const void *src, size_t len)
{
    mf_request_t *req = ctx;
    mf_dtype_unpack(req->dtype, req->dt_count, req->dt_buf, src, (MPI_Count)offset,
                    (MPI_Count)(offset + len));
}

/* A layout of few large blocks goes as an iovec instead of the callbacks (mf_dtype_iov_ok). The
 * array is a cached temporary of at most MF_DTYPE_IOV_MAX entries in pack_buf, which the
 * request's release frees; when none can be had the message streams. */
static void stream_iov(mf_request_t *req)
{
    mf_dtype_t *d = mf_dtype_get(req->dtype);
    if (d == NULL || !mf_dtype_iov_ok(d, req->dt_count, (size_t)mf_params.dt_iov_bytes))
        return;
    mf_dtype_iov_t *iov =
        mf_dtype_temp_alloc((size_t)(req->dt_count * d->nsegs) * sizeof(mf_dtype_iov_t));
    if (iov == NULL)
        return;
    req->pack_buf = iov;
    req->packer.iovcnt = mf_dtype_iov_fill(d, req->dt_count, req->dt_buf, iov);
    req->packer.iov = iov;
}

void mf_pt2pt_stream_attach(mf_request_t *req, MPI_Datatype dt, const void *buf, MPI_Count count)
{
    mf_dtype_retain(dt);
    req->dtype = dt;
    req->dt_buf = (void *)buf;
    req->dt_count = count;
    req->streamed = 1;
    req->packer = (mf_vci_packer_t){stream_pack, stream_unpack, req, req->buf_len, NULL, 0};
    stream_iov(req);
}

mf_status_t mf_pt2pt_isend_stream(MPI_Datatype dt, const void *buf, MPI_Count count, size_t len,
                                  int dest, int tag, mf_comm_t *comm, mf_send_mode_t mode,
                                  int waits, mf_request_t **req_p)
{
    unsigned ctx = mf_comm_ctx_user(comm);
    if (dest == MPI_PROC_NULL) {
        *req_p = mf_request_precomplete(msg_vci(comm, ctx, comm->rank, tag));
        return MF_OK;
    }
    mf_vci_t *vci = msg_vci_lock(comm, ctx, comm->rank, tag);
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_SEND, comm);
    if (req == NULL) {
        mf_vci_unlock(vci);
        return MF_ERR_NO_MEMORY;
    }
    req->buf_len = len;
    mf_pt2pt_stream_attach(req, dt, buf, count);
    mf_status_t status =
        send_issue_locked(req, NULL, len, dest, tag, ctx, mode == MF_SEND_SYNC, waits);
    if (status != MF_OK)
        mf_request_release_locked(req);
    mf_vci_unlock(vci);
    if (status == MF_OK)
        *req_p = req;
    return status;
}

mf_status_t mf_pt2pt_irecv_stream(MPI_Datatype dt, void *buf, MPI_Count count, size_t len,
                                  int source, int tag, mf_comm_t *comm, mf_request_t **req_p)
{
    unsigned ctx = mf_comm_ctx_user(comm);
    if (source == MPI_PROC_NULL) {
        *req_p = mf_request_proc_null(msg_vci(comm, ctx, source, tag));
        return MF_OK;
    }
    mf_vci_t *vci = msg_vci_lock(comm, ctx, source, tag);
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_RECV, comm);
    if (req == NULL) {
        mf_vci_unlock(vci);
        return MF_ERR_NO_MEMORY;
    }
    req->buf_len = len;
    mf_pt2pt_stream_attach(req, dt, buf, count);
    mf_status_t status = recv_issue_locked(req, NULL, len, source, tag, ctx, 1);
    if (status != MF_OK)
        mf_request_release_locked(req);
    mf_vci_unlock(vci);
    if (status == MF_OK)
        *req_p = req;
    return status;
}

MF_HOT_PATH mf_status_t mf_pt2pt_irecv(void *buf, size_t len, int source, int tag, mf_comm_t *comm,
                                       unsigned ctx, mf_request_t **req_p)
{
    if (source == MPI_PROC_NULL) {
        *req_p = mf_request_proc_null(msg_vci(comm, ctx, source, tag));
        return MF_OK;
    }
    mf_vci_t *vci = msg_vci_lock(comm, ctx, source, tag);
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_RECV, comm);
    if (req == NULL) {
        mf_vci_unlock(vci);
        return MF_ERR_NO_MEMORY;
    }
    mf_status_t status = recv_issue_locked(req, buf, len, source, tag, ctx, 1);
    if (status != MF_OK)
        mf_request_release_locked(req);
    mf_vci_unlock(vci);
    if (status == MF_OK)
        *req_p = req;
    return status;
}

/* ---- derived receives through a packed temporary ---------------------------------------- */

/* The completion of a receive into a packed temporary (mf_pt2pt_irecv_unpack): unpack into the
 * user's layout here, then give the temporary back and drop the type's reference, so that the
 * request is plain by the time anybody waits for it and MPI_Wait/Waitall release it inline.
 * Runs under the VCI lock, before `done` is published, so a waiter that sees `done` sees the
 * data. A short, truncated, cancelled or failed receive unpacks what arrived (or nothing), as
 * mf_request_unpack does at completion for other staged receives. */
static int req_on_complete_unpack(mf_vci_op_t *op)
{
    mf_request_t *req = req_of_op(op);
    struct MPI_ABI_Datatype *d = req->dtype;
    void *packed = req->pack_buf;
    if (MF_LIKELY(op->status == MF_OK && op->length == req->buf_len))
        mf_dtype_copy_inline(d, req->dt_count, (uintptr_t)req->dt_buf, packed, 1);
    else
        mf_request_unpack(req);
    req->dtype = NULL;
    req->dt_buf = NULL;
    req->dt_count = 0;
    req->pack_buf = NULL;
    req->unpacked = 0;
    mf_dtype_temp_free_fast(packed);
    mf_dtype_release_held(d);
    return req_on_complete(op);
}

/* (inlined into the derived MPI_Irecv, as mf_pt2pt_irecv into MPI_Irecv: a call with nine
 * arguments cost its frame, the stack arguments and a second register save) */
MF_HOT_PATH mf_status_t mf_pt2pt_irecv_unpack(void *packed, size_t len, mf_dtype_t *dt, void *buf,
                                              MPI_Count count, int source, int tag, mf_comm_t *comm,
                                              mf_request_t **req_p)
{
    unsigned ctx = mf_comm_ctx_user(comm);
    if (source == MPI_PROC_NULL) {
        mf_dtype_temp_free(packed);
        *req_p = mf_request_proc_null(msg_vci(comm, ctx, source, tag));
        return MF_OK;
    }
    mf_vci_t *vci = msg_vci_lock(comm, ctx, source, tag);
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_RECV, comm);
    if (MF_UNLIKELY(req == NULL)) {
        mf_vci_unlock(vci);
        mf_dtype_temp_free(packed);
        return MF_ERR_NO_MEMORY;
    }
    /* set before posting: the message may be there already and complete inside the call */
    atomic_fetch_add_explicit(&dt->refs, 1, memory_order_relaxed); /* mf_dtype_retain */
    req->dtype = dt;
    req->dt_buf = buf;
    req->dt_count = count;
    req->pack_buf = packed;
    mf_status_t status =
        recv_post_locked(req, packed, len, source, tag, ctx, 1, req_on_complete_unpack);
    if (MF_UNLIKELY(status != MF_OK))
        mf_request_release_locked(req); /* never completed: releases the temporary and type */
    mf_vci_unlock(vci);
    if (status == MF_OK)
        *req_p = req;
    return status;
}

mf_status_t mf_pt2pt_recv_local(void *buf, size_t len, int source, int tag, mf_comm_t *comm,
                                unsigned ctx, mf_request_local_t *local)
{
    mf_vci_t *vci = msg_vci_lock(comm, ctx, source, tag);
    mf_request_init_local(&local->req, vci, MF_REQ_RECV, comm);
    mf_status_t status = recv_issue_locked(&local->req, buf, len, source, tag, ctx,
                                           mf_vci_request_headroom() <= sizeof(local->headroom));
    mf_vci_unlock(vci);
    return status;
}

/* ---- persistent requests ----------------------------------------------------------------- */

static mf_status_t persistent_create(mf_req_type_t type, void *buf, size_t len, int peer, int tag,
                                     mf_comm_t *comm, mf_send_mode_t mode, mf_request_t **req_p)
{
    mf_vci_t *vci = mf_comm_vci_for(comm, type == MF_REQ_SEND ? comm->rank : peer, tag);
    mf_vci_lock(vci);
    mf_request_t *req = mf_request_alloc_locked(vci, type, comm);
    mf_vci_unlock(vci);
    if (req == NULL)
        return MF_ERR_NO_MEMORY;
    mf_request_set_persistent(req);
    req->buf = buf;
    req->buf_len = len;
    req->peer = peer;
    req->tag = tag;
    req->mode = (uint8_t)mode;
    /* An inactive persistent request completes at once with an empty status. */
    atomic_store_explicit(&req->op.done, 1, memory_order_release);
    *req_p = req;
    return MF_OK;
}

mf_status_t mf_pt2pt_send_init(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm,
                               mf_send_mode_t mode, mf_request_t **req_p)
{
    return persistent_create(MF_REQ_SEND, (void *)buf, len, dest, tag, comm, mode, req_p);
}

mf_status_t mf_pt2pt_recv_init(void *buf, size_t len, int source, int tag, mf_comm_t *comm,
                               mf_request_t **req_p)
{
    return persistent_create(MF_REQ_RECV, buf, len, source, tag, comm, MF_SEND_STANDARD, req_p);
}

mf_status_t mf_pt2pt_start(mf_request_t *req)
{
    mf_comm_t *comm = req->comm;
    unsigned ctx = mf_comm_ctx_user(comm);
    mf_status_t status;
    req->unpacked = 0;
    if (req->dtype != NULL && req->type == MF_REQ_SEND && !req->streamed)
        mf_dtype_pack(req->dtype, req->dt_count, req->dt_buf, req->pack_buf, 0,
                      (MPI_Count)req->buf_len);
    if (req->peer == MPI_PROC_NULL || req->mode == MF_SEND_BUFFERED) {
        status = MF_OK;
        if (req->peer != MPI_PROC_NULL)
            status = bsend_start(req->buf, req->buf_len, req->peer, req->tag, comm, ctx);
        mf_vci_op_reset(&req->op, NULL);
        req->op.length = 0;
        req->active = status == MF_OK; /* a failed start leaves it inactive, as below */
        atomic_store_explicit(&req->op.done, 1, memory_order_release);
        return status;
    }
    /* The VCI is chosen at every start, not at init: MPI_Comm_set_info may have spread the
     * communicator since, and the peer's request, made or started after it, uses the new
     * mapping. (An inactive request is its caller's alone; it goes back to the cache of the
     * VCI it ends on.) */
    req->vci =
        mf_comm_vci_lock_for(comm, req->type == MF_REQ_SEND ? comm->rank : req->peer, req->tag);
    mf_vci_op_reset(&req->op, NULL);
    if (req->type == MF_REQ_SEND)
        status = send_issue_locked(req, req->buf, req->buf_len, req->peer, req->tag, ctx,
                                   req->mode == MF_SEND_SYNC, 0);
    else
        status = recv_issue_locked(req, req->buf, req->buf_len, req->peer, req->tag, ctx, 1);
    if (status == MF_OK)
        req->active = 1;
    else
        atomic_store_explicit(&req->op.done, 1, memory_order_release);
    mf_vci_unlock(req->vci);
    return status;
}

/* ---- internal blocking helpers ----------------------------------------------------------- */

static mf_status_t release_done(mf_request_t *req)
{
    mf_status_t status = req->op.status;
    if (req->type != MF_REQ_PRECOMPLETE && req->type != MF_REQ_NULL_PROC) {
        mf_vci_t *vci = req->vci; /* the request may be reused once released */
        mf_vci_lock(vci);
        mf_request_release_locked(req);
        mf_vci_unlock(vci);
    }
    return status;
}

/* Polls between the yields of a yielding wait (the *_internal_yielding helpers). */
#define POLLS_PER_YIELD 16

/* Wait for an internal request; `yield`: give the CPU up every POLLS_PER_YIELD polls rather
 * than after the common wait's learned spin. Returns 0, with the request still in flight,
 * when the processes of the node passed the blocking collective this wait serves different
 * byte counts (mf_coll_shm_call_broken): the message may never come, or never be received. */
static int internal_wait(mf_request_t *req, mf_comm_t *comm, int yield)
{
    if (!yield)
        return mf_request_wait_done_unless(req, mf_coll_shm_call_broken, comm);
    int polls = 0;
    unsigned pokes = 0;
    while (!mf_request_is_complete(req)) {
        mf_progress_poke(req->vci, &polls);
        if (++pokes % POLLS_PER_YIELD != 0 || mf_request_is_complete(req))
            continue;
        if (mf_coll_shm_call_broken(comm))
            return 0;
        sched_yield();
    }
    return 1;
}

/* After a wait that gave up: a receive is cancelled and waited for (one already matched still
 * lands), a send finishes on its own and is released then. The step failed either way. */
static mf_status_t abandon(mf_request_t *req)
{
    if (req->type == MF_REQ_RECV) {
        mf_pt2pt_cancel(req);
        mf_request_wait_done(req);
        release_done(req);
    } else {
        mf_pt2pt_request_free(req);
    }
    return MF_ERR_TRUNCATE;
}

static mf_status_t wait_and_release(mf_request_t *req, mf_comm_t *comm, int yield)
{
    return internal_wait(req, comm, yield) ? release_done(req) : abandon(req);
}

mf_status_t mf_pt2pt_send_internal_yielding(const void *buf, size_t len, int dest, int tag,
                                            mf_comm_t *comm, int yield)
{
    mf_request_t *req;
    mf_status_t status = mf_pt2pt_isend(buf, len, dest, tag, comm, mf_comm_ctx_internal(comm),
                                        MF_SEND_STANDARD, 1, &req);
    return status != MF_OK ? status : wait_and_release(req, comm, yield);
}

mf_status_t mf_pt2pt_recv_internal_yielding(void *buf, size_t len, int source, int tag,
                                            mf_comm_t *comm, int yield)
{
    mf_request_t *req;
    mf_status_t status =
        mf_pt2pt_irecv(buf, len, source, tag, comm, mf_comm_ctx_internal(comm), &req);
    return status != MF_OK ? status : wait_and_release(req, comm, yield);
}

mf_status_t mf_pt2pt_send_internal(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm)
{
    return mf_pt2pt_send_internal_yielding(buf, len, dest, tag, comm, 0);
}

mf_status_t mf_pt2pt_recv_internal(void *buf, size_t len, int source, int tag, mf_comm_t *comm)
{
    return mf_pt2pt_recv_internal_yielding(buf, len, source, tag, comm, 0);
}

mf_status_t mf_pt2pt_sendrecv_internal(const void *sbuf, size_t slen, int dest, void *rbuf,
                                       size_t rlen, int source, int tag, mf_comm_t *comm)
{
    mf_request_t *rreq, *sreq;
    mf_status_t status =
        mf_pt2pt_irecv(rbuf, rlen, source, tag, comm, mf_comm_ctx_internal(comm), &rreq);
    if (status != MF_OK)
        return status;
    status = mf_pt2pt_isend(sbuf, slen, dest, tag, comm, mf_comm_ctx_internal(comm),
                            MF_SEND_STANDARD, 1, &sreq);
    if (status != MF_OK) {
        /* The receive cannot be left posted: wait for it (or cancel it, as any wait here). */
        wait_and_release(rreq, comm, 0);
        return status;
    }
    mf_status_t rstatus = wait_and_release(rreq, comm, 0);
    status = wait_and_release(sreq, comm, 0);
    return rstatus != MF_OK ? rstatus : status;
}

mf_status_t mf_pt2pt_exchange_internal(const void *sbuf, size_t slen, int whole, void *rbuf,
                                       size_t rlen, size_t *got_p, int peer, int tag,
                                       mf_comm_t *comm)
{
    unsigned ctx = mf_comm_ctx_internal(comm);
    mf_request_t *rreq = NULL, *sreq = NULL;
    mf_status_t status = MF_OK, rstatus = MF_OK;
    if (rbuf != NULL)
        status = mf_pt2pt_irecv(rbuf, rlen, peer, tag, comm, ctx, &rreq);
    /* Not waiting at once (`waits` 0) leaves UCX free to move a large message by rendezvous */
    if (status == MF_OK && sbuf != NULL)
        status = mf_pt2pt_isend(sbuf, slen, peer, tag, comm, ctx, MF_SEND_STANDARD, !whole, &sreq);
    /* a receive cannot be left posted: wait for it (or cancel it, as any wait here) even when
     * the send failed */
    if (rreq != NULL && !internal_wait(rreq, comm, 0)) {
        *got_p = 0;
        rstatus = abandon(rreq);
    } else if (rreq != NULL) {
        *got_p = rreq->op.length < rlen ? rreq->op.length : rlen;
        rstatus = release_done(rreq);
    }
    if (sreq != NULL) {
        mf_status_t sstatus = wait_and_release(sreq, comm, 0);
        status = status != MF_OK ? status : sstatus;
    }
    return rstatus != MF_OK ? rstatus : status;
}

/* ---- probes ------------------------------------------------------------------------------ */

static void probe_status(MPI_Status *status, uint64_t tag, size_t len)
{
    if (status != MPI_STATUS_IGNORE)
        mf_status_set(status, mf_pt2pt_tag_source(tag), mf_pt2pt_tag_tag(tag), status->MPI_ERROR,
                      (MPI_Count)len, 0);
}

static void probe_match(mf_comm_t *comm, int source, int tag, uint64_t *match, uint64_t *mask)
{
    mf_pt2pt_match(mf_comm_ctx_user(comm), source == MPI_ANY_SOURCE ? MF_PT2PT_ANY : source,
                   tag == MPI_ANY_TAG ? MF_PT2PT_ANY : tag, match, mask);
}

mf_status_t mf_pt2pt_probe(int source, int tag, mf_comm_t *comm, int blocking, int *flag_p,
                           MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag_p = 1;
        if (status != MPI_STATUS_IGNORE)
            mf_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, status->MPI_ERROR, 0, 0);
        return MF_OK;
    }
    uint64_t match, mask, found_tag = 0;
    size_t len = 0;
    int polls = 0;
    probe_match(comm, source, tag, &match, &mask);
    for (;;) {
        /* Mapped at every poll: MPI_Comm_set_info may spread the communicator meanwhile. */
        mf_vci_t *vci = mf_comm_vci_lock_for(comm, source, tag);
        int found = mf_vci_tag_probe_locked(vci, match, mask, &found_tag, &len);
        if (!found) {
            mf_vci_progress_locked(vci);
            found = mf_vci_tag_probe_locked(vci, match, mask, &found_tag, &len);
        }
        mf_vci_unlock(vci);
        if (found) {
            *flag_p = 1;
            probe_status(status, found_tag, len);
            return MF_OK;
        }
        if (!blocking) {
            *flag_p = 0;
            mf_progress_test(vci);
            return MF_OK;
        }
        mf_progress_poke(vci, &polls);
    }
}

/* Matched messages (MPI_Message) are recycled: a copy of a received message's handle reads as
 * freed. */
static mf_recycler_t message_objects = MF_RECYCLER_INIT;

mf_status_t mf_pt2pt_mprobe(int source, int tag, mf_comm_t *comm, int blocking, int *flag_p,
                            MPI_Message *message_p, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag_p = 1;
        *message_p = MPI_MESSAGE_NO_PROC;
        if (status != MPI_STATUS_IGNORE)
            mf_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, status->MPI_ERROR, 0, 0);
        return MF_OK;
    }
    struct MPI_ABI_Message *msg =
        mf_recycler_take(&message_objects, sizeof(*msg), "matched message");
    if (msg == NULL)
        return MF_ERR_NO_MEMORY;
    uint64_t match, mask;
    int polls = 0;
    mf_vci_t *vci;
    probe_match(comm, source, tag, &match, &mask);
    for (;;) {
        vci = mf_comm_vci_lock_for(comm, source, tag); /* at every poll, as for probe */
        int found = mf_vci_tag_mprobe_locked(vci, match, mask, &msg->msg);
        if (!found) {
            mf_vci_progress_locked(vci);
            found = mf_vci_tag_mprobe_locked(vci, match, mask, &msg->msg);
        }
        if (found) {
            mf_comm_hold(comm); /* the message uses the communicator until received */
            if (mf_comm_unspread_locked(comm))
                comm->unmatched--;
        }
        mf_vci_unlock(vci);
        if (found)
            break;
        if (!blocking) {
            mf_recycler_put(&message_objects, msg);
            *flag_p = 0;
            mf_progress_test(vci);
            return MF_OK;
        }
        mf_progress_poke(vci, &polls);
    }
    msg->kind = MF_KIND_MESSAGE;
    msg->comm = comm;
    msg->vci = vci;
    *flag_p = 1;
    *message_p = msg;
    probe_status(status, msg->msg.sender_tag, msg->msg.length);
    return MF_OK;
}

/* Receive a matched message into buf, or through dt's packer when dt is not NULL. */
static mf_status_t imrecv_common(void *buf, size_t len, MPI_Datatype dt, MPI_Count count,
                                 struct MPI_ABI_Message *msg, mf_request_t **req_p)
{
    mf_vci_t *vci = msg->vci;
    mf_vci_lock(vci);
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_RECV, msg->comm);
    if (req == NULL) {
        mf_vci_unlock(vci);
        return MF_ERR_NO_MEMORY;
    }
    req->buf_len = len;
    mf_vci_op_reset(&req->op, req_on_complete);
    mf_status_t status;
    if (dt != NULL) {
        mf_pt2pt_stream_attach(req, dt, buf, count);
        status = mf_vci_tag_mrecv_packed_locked(vci, &req->packer, &msg->msg, &req->op);
    } else {
        status = mf_vci_tag_mrecv_locked(vci, buf, len, &msg->msg, &req->op);
    }
    if (status != MF_OK)
        mf_request_release_locked(req);
    /* The message is consumed either way: the transport owns it now. */
    mf_comm_release(msg->comm);
    mf_vci_unlock(vci);
    mf_recycler_put(&message_objects, msg);
    if (status == MF_OK)
        *req_p = req;
    return status;
}

mf_status_t mf_pt2pt_imrecv(void *buf, size_t len, struct MPI_ABI_Message *msg,
                            mf_request_t **req_p)
{
    return imrecv_common(buf, len, NULL, 0, msg, req_p);
}

mf_status_t mf_pt2pt_imrecv_stream(MPI_Datatype dt, void *buf, MPI_Count count, size_t len,
                                   struct MPI_ABI_Message *msg, mf_request_t **req_p)
{
    return imrecv_common(buf, len, dt, count, msg, req_p);
}

/* ---- cancel and free --------------------------------------------------------------------- */

void mf_pt2pt_cancel(mf_request_t *req)
{
    if (req->type != MF_REQ_RECV)
        return;
    mf_vci_lock(req->vci);
    if (!mf_vci_op_is_done(&req->op))
        mf_vci_cancel_locked(req->vci, &req->op);
    mf_vci_unlock(req->vci);
}

/* ---- MPI_Isendrecv: a request joining a send and a receive ------------------------------- */

/* Release a part (the shared completed and MPI_PROC_NULL requests stay as they are). */
static void join_release(mf_request_t *part)
{
    if (part->type == MF_REQ_PRECOMPLETE || part->type == MF_REQ_NULL_PROC)
        return;
    mf_vci_t *vci = part->vci;
    mf_vci_lock(vci);
    mf_request_release_locked(part);
    mf_vci_unlock(vci);
}

/* The poll hook: once both parts are done, keep the receive's status and the first failure
 * (the receive's, else the send's), release the parts and complete. Runs without any VCI lock
 * held, so the parts' locks (their VCIs may differ) are taken one at a time. */
static void join_poll(mf_request_t *req)
{
    mf_request_t *send = req->joined[0], *recv = req->joined[1];
    if (send == NULL || !mf_request_is_complete(send) || !mf_request_is_complete(recv))
        return;
    mf_request_unpack(recv);
    MPI_Status st;
    st.MPI_ERROR = MPI_SUCCESS;
    mf_request_fill_status(recv, &st);
    req->peer = st.MPI_SOURCE;
    req->tag = st.MPI_TAG;
    req->buf_len = (size_t)mf_status_bytes(&st);
    req->op.status = recv->op.status != MF_OK ? recv->op.status : send->op.status;
    req->joined[0] = req->joined[1] = NULL;
    join_release(send);
    join_release(recv);
    atomic_store_explicit(&req->op.done, 1, memory_order_release);
}

mf_status_t mf_pt2pt_join(mf_comm_t *comm, mf_request_t *send, mf_request_t *recv,
                          mf_request_t **req_p)
{
    mf_vci_t *vci = comm->vci;
    mf_vci_lock(vci);
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_SENDRECV, comm);
    mf_vci_unlock(vci);
    if (req == NULL)
        return MF_ERR_NO_MEMORY;
    req->joined[0] = send;
    req->joined[1] = recv;
    req->poll = join_poll;
    *req_p = req;
    return MF_OK;
}

void mf_pt2pt_request_free(mf_request_t *req)
{
    if (req->type == MF_REQ_PRECOMPLETE || req->type == MF_REQ_NULL_PROC)
        return;
    if (req->type == MF_REQ_SENDRECV && req->joined[0] != NULL) {
        /* Freed in flight: the parts finish on their own (the receive still lands in the
         * user's buffer) and are released then; the joining request goes now. */
        mf_pt2pt_request_free(req->joined[0]);
        mf_pt2pt_request_free(req->joined[1]);
        req->joined[0] = req->joined[1] = NULL;
        atomic_store_explicit(&req->op.done, 1, memory_order_relaxed); /* released below */
    }
    mf_vci_t *vci = req->vci; /* the request may be reused once released */
    mf_vci_lock(vci);
    if (mf_vci_op_is_done(&req->op)) {
        mf_request_release_locked(req);
    } else {
        req->user_freed = 1;
        req->kind = MF_KIND_REQUEST_ORPHAN;
    }
    mf_vci_unlock(vci);
}
