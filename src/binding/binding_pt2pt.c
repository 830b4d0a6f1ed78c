/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: point-to-point entry points. Each family (send modes; blocking, immediate and
 * persistent forms; int and large-count variants) shares one checked implementation; the entry
 * points only name themselves and pass their arguments on.
 */
#include "binding.h"

#include "pt2pt.h"

#include <stdlib.h>
#include <string.h>

typedef enum { OP_BLOCKING, OP_IMMEDIATE, OP_PERSISTENT } op_form_t;

/* How a call names the arguments of one side of its envelope, for the error messages. */
typedef struct {
    const char *buf, *count, *datatype, *peer, *tag;
} envelope_names_t;

static const envelope_names_t send_names = {"buf", "count", "datatype", "dest", "tag"};
static const envelope_names_t recv_names = {"buf", "count", "datatype", "source", "tag"};

static int check_envelope(const char *func, MPI_Comm comm, const void *buf, MPI_Count count,
                          MPI_Datatype dt, int rank, int tag, int is_send,
                          const envelope_names_t *names, mf_comm_t **comm_p, size_t *bytes_p)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_comm(func, comm, comm_p);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_comm_t *c = *comm_p;
    if (!mf_global.param_check) {
        const mf_dtype_info_t *info = mf_dtype_predefined(dt);
        *bytes_p = info != NULL ? (size_t)count * (size_t)info->size : 0;
        return info != NULL ? MPI_SUCCESS
                            : mf_check_datatype(func, c, names->datatype, dt, 0, bytes_p);
    }
    rc = mf_check_count(func, c, names->count, count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, names->datatype, dt, count, bytes_p);
    /* A derived type may address absolute memory from MPI_BOTTOM (a NULL buf). */
    if (rc == MPI_SUCCESS)
        rc = mf_check_typed_buffer(func, c, names->buf, buf, dt, count, *bytes_p);
    if (rc == MPI_SUCCESS)
        rc = is_send ? mf_check_dest(func, c, names->peer, rank)
                     : mf_check_source(func, c, names->peer, rank);
    if (rc == MPI_SUCCESS)
        rc = is_send ? mf_check_send_tag(func, c, names->tag, tag)
                     : mf_check_recv_tag(func, c, names->tag, tag);
    return rc;
}

/* The rank and tag of an envelope, checked inline: a rank of the communicator (or
 * MPI_ANY_SOURCE for receives) and a valid tag (or MPI_ANY_TAG for receives), unless the
 * communicator asserts otherwise. 0 sends the call through check_envelope. */
static inline int peer_tag_fast(const mf_comm_t *c, int rank, int tag, int is_send)
{
    int wild = is_send ? 0 : (c->hints | c->spread_by);
    if (MF_UNLIKELY((unsigned)rank >= (unsigned)mf_comm_peer_size(c)) &&
        (is_send || rank != MPI_ANY_SOURCE || (wild & MF_HINT_NO_ANY_SOURCE)))
        return 0;
    if (MF_UNLIKELY((unsigned)tag > (unsigned)MF_PT2PT_TAG_UB) &&
        (is_send || tag != MPI_ANY_TAG || (wild & MF_HINT_NO_ANY_TAG)))
        return 0;
    return 1;
}

static inline int library_ready(void)
{
    return atomic_load_explicit(&mf_global.state, memory_order_acquire) == MF_STATE_READY;
}

/* Whether a datatype handle lies in the predefined range (0x200-0x2ff). */
static inline int dt_predefined_range(MPI_Datatype dt)
{
    return (uintptr_t)dt - 0x200 <= 0xff;
}

/* Where envelope_fast sends a call. */
typedef enum { ENV_CHECKED, ENV_PREDEFINED, ENV_DERIVED } env_route_t;

/* The common case of a point-to-point envelope, checked in one pass with no calls: the library
 * is ready, a valid communicator, a predefined datatype, count >= 0, a buffer for the bytes,
 * and peer_tag_fast (ENV_PREDEFINED, with the communicator and the byte count). A datatype
 * outside the predefined range leaves at the very branch that rejects it, with the communicator
 * already resolved (ENV_DERIVED: envelope_derived finishes the pass), so neither kind pays for
 * the other; `in_range` (a constant) says the caller has tested the range already. ENV_CHECKED
 * sends the call through check_envelope, which finds and reports whatever differs
 * (MPI_PROC_NULL goes that way too). Inlined, the route is a constant on each exit and the
 * caller's switch on it compiles away. */
static inline __attribute__((always_inline)) env_route_t
envelope_fast(MPI_Comm comm, const void *buf, MPI_Count count, MPI_Datatype dt, int rank, int tag,
              int is_send, int in_range, mf_comm_t **c_p, size_t *bytes_p)
{
    if (MF_UNLIKELY(!library_ready()))
        return ENV_CHECKED;
    mf_comm_t *c = mf_comm_get(comm);
    /* The table's unused slots have size 0. */
    const mf_dtype_info_t *info = &mf_dtype_predefined_table[(uintptr_t)dt & 0xff];
    if (MF_UNLIKELY(c == NULL))
        return ENV_CHECKED;
    if (MF_UNLIKELY((!in_range && !dt_predefined_range(dt)) || info->direct <= 0)) {
        *c_p = c;
        return in_range ? ENV_CHECKED : ENV_DERIVED;
    }
    size_t bytes;
    if (MF_UNLIKELY(count < 0 || mf_bytes_overflow(count, (size_t)info->direct, &bytes)))
        return ENV_CHECKED;
    if (MF_UNLIKELY(mf_buffer_special(buf) && bytes > 0) || !peer_tag_fast(c, rank, tag, is_send))
        return ENV_CHECKED;
    *c_p = c;
    *bytes_p = bytes;
    return ENV_PREDEFINED;
}

/* The rest of the pass for a datatype that is not predefined, on a resolved communicator (NULL:
 * the library is not ready or the handle is bad): a committed derived type (whose buffer may be
 * MPI_BOTTOM, with absolute addresses), count >= 0 and peer_tag_fast. Returns the type, or NULL
 * for check_envelope. */
static inline __attribute__((always_inline)) mf_dtype_t *
envelope_derived(const mf_comm_t *c, const void *buf, MPI_Count count, MPI_Datatype dt, int rank,
                 int tag, int is_send, size_t *bytes_p)
{
    mf_dtype_t *d = mf_dtype_get(dt);
    if (MF_UNLIKELY(c == NULL || d == NULL || count < 0 ||
                    !atomic_load_explicit(&d->committed, memory_order_acquire) ||
                    mf_bytes_overflow(count, (size_t)d->psize, bytes_p) ||
                    (mf_buffer_special(buf) && *bytes_p > 0 &&
                     (buf != NULL || !mf_dtype_bottom_ok(d, count))) ||
                    !peer_tag_fast(c, rank, tag, is_send)))
        return NULL;
    return d;
}

/* How `count` items of a datatype reach the transport: the user's memory itself when they form
 * one run (the zero-copy path, which every predefined type takes); streamed through the
 * transport's packer with no temporary (when the caller can, `may_stream`, and the size is one
 * stream_size picks); otherwise a temporary buffer with the packed bytes that the request owns
 * until it is released. */
typedef struct stage {
    void *ptr;       /* what the transport reads or writes */
    void *tmp;       /* the packed copy, or NULL */
    MPI_Datatype dt; /* the caller's type, or the twin of a pair type (mf_dtype_packed_as) */
    int stream;      /* use mf_pt2pt_*_stream */
} stage_t;

/* Whether a non-contiguous message of `bytes` packed bytes of d is streamed: large ones (no
 * full-size temporary), and those that fit the transport's eager buffers, which the packer
 * fills directly (a temporary would add a copy on each side); in between, a rendezvous of a
 * temporary uses the transport's zero-copy path, which a streamed one cannot. Only a type
 * packed as one run of 8-byte blocks (MF_DT_COPY_RUN8) fills the eager buffer directly: the
 * packer's small and overlapping stores into the shared buffer the peer reads cost a struct
 * of 8 KiB 0.56-0.84 of packing by hand in the launches where the two ranks' cores are far
 * apart, against 1.02-1.05 through a temporary, which the transport copies in whole lines
 * (docs/design/datatype.md, "Eager streaming only for runs"). */
static inline int stream_size(const mf_dtype_t *d, size_t bytes)
{
    if (mf_params.dt_stream_eager_max > 0 && bytes <= (size_t)mf_params.dt_stream_eager_max &&
        bytes >= (size_t)mf_params.dt_stream_eager_min)
        return d->copy_kind == MF_DT_COPY_RUN8;
    return mf_params.dt_stream_bytes > 0 && bytes >= (size_t)mf_params.dt_stream_bytes;
}

/* Whether `count` items of d are streamed: by size, or as an iovec (few large blocks, which the
 * transport's packer then reads and writes in place; mf_pt2pt_stream_attach builds it). */
static inline int stream_msg(const mf_dtype_t *d, MPI_Count count, size_t bytes)
{
    return stream_size(d, bytes) || mf_dtype_iov_ok(d, count, (size_t)mf_params.dt_iov_bytes);
}

static int stage_prepare(const char *func, mf_comm_t *c, const void *buf, MPI_Count count,
                         MPI_Datatype dt, size_t bytes, int pack, int may_stream, stage_t *s)
{
    MPI_Aint off;
    dt = mf_dtype_packed_as(dt);
    s->tmp = NULL;
    s->dt = dt;
    s->stream = 0;
    if (mf_dtype_get(dt) == NULL) {
        s->ptr = (void *)buf;
        return MPI_SUCCESS;
    }
    if (mf_dtype_contiguous(dt, count, &off)) {
        s->ptr = (void *)((uintptr_t)buf + (uintptr_t)off);
        return MPI_SUCCESS;
    }
    if (may_stream && stream_msg(mf_dtype_get(dt), count, bytes)) {
        s->ptr = NULL;
        s->stream = 1;
        return MPI_SUCCESS;
    }
    s->tmp = mf_dtype_temp_alloc(bytes);
    if (s->tmp == NULL)
        return mf_err_raise(c,
                            mf_err_code(MPI_ERR_NO_MEM, func,
                                        "cannot allocate %zu bytes to pack the datatype", bytes));
    mf_dtype_temp_note(bytes);
    if (pack)
        mf_dtype_pack(dt, count, buf, s->tmp, 0, (MPI_Count)bytes);
    s->ptr = s->tmp;
    return MPI_SUCCESS;
}

/* Hand the packed copy to the request (with a reference on the type when it unpacks or packs
 * again later: receives, persistent sends) or drop it when the operation is already over (a
 * shared pre-completed request). */
static void stage_attach(mf_request_t *req, stage_t *s, void *user_buf, MPI_Count count)
{
    if (s->tmp == NULL)
        return;
    if (req->type == MF_REQ_PRECOMPLETE || req->type == MF_REQ_NULL_PROC) {
        mf_dtype_temp_free(s->tmp);
        return;
    }
    if (req->type == MF_REQ_SEND && !req->persistent) {
        /* packed already: only the bytes are needed, not the type (whose reference would cost
         * two atomic read-modify-writes per message) */
        req->pack_buf = s->tmp;
        return;
    }
    mf_dtype_retain(s->dt);
    req->dtype = s->dt;
    req->dt_buf = user_buf;
    req->dt_count = count;
    req->pack_buf = s->tmp;
    req->unpacked = 0;
}

/* Wait for a request the binding created itself and report its outcome. */
static int finish_blocking(const char *func, mf_comm_t *comm, MPI_Request req, MPI_Status *status)
{
    mf_request_wait_done(req);
    char why[160] = "";
    if (MF_UNLIKELY(req->op.status != MF_OK))
        mf_binding_failure_reason(req, "the operation failed", why, sizeof(why));
    int err = mf_request_complete(&req, status);
    if (err == MPI_SUCCESS)
        return MPI_SUCCESS;
    return mf_err_raise(comm, mf_err_code(err, func, "%s", why[0] ? why : "the operation failed"));
}

/* ---- blocking calls of packed derived types ---------------------------------------------- */

/* The largest MANIFOLD_DT_STACK_BYTES: what a blocking call may put on its stack. */
#define DT_STACK_CAP 4096

/* A cached temporary for a blocking call's `bytes` packed bytes, or NULL. */
static void *blocking_temp(size_t bytes)
{
    void *tmp = mf_dtype_temp_alloc(bytes);
    if (tmp != NULL)
        mf_dtype_temp_note(bytes);
    return tmp;
}

/* Report a blocking receive whose request (on the caller's stack) has completed. */
static int finish_local(const char *func, mf_comm_t *c, mf_request_t *local, MPI_Status *st)
{
    mf_request_fill_status(local, st);
    int err = mf_request_error(local);
    if (MF_LIKELY(err == MPI_SUCCESS))
        return MPI_SUCCESS;
    char why[160];
    mf_binding_failure_reason(local, "the operation failed", why, sizeof(why));
    return mf_err_raise(c, mf_err_code(err, func, "%s", why));
}

/* Predefined datatypes, immediate and blocking forms: straight to the protocol layer. */
static inline __attribute__((always_inline)) int send_fast(const char *func, const void *buf,
                                                           size_t bytes, int dest, int tag,
                                                           mf_comm_t *c, mf_send_mode_t mode,
                                                           op_form_t form, MPI_Request *request)
{
    mf_request_t *req;
    mf_status_t status = mf_pt2pt_isend(buf, bytes, dest, tag, c, mf_comm_ctx_user(c), mode,
                                        form == OP_BLOCKING, &req);
    if (MF_UNLIKELY(status != MF_OK))
        return mf_err_from_status(c, status, func, "cannot start the send");
    if (form == OP_BLOCKING)
        return MF_LIKELY(req->type == MF_REQ_PRECOMPLETE)
                   ? MPI_SUCCESS /* UCX took the bytes inside the call */
                   : finish_blocking(func, c, req, MPI_STATUS_IGNORE);
    *request = req;
    return MPI_SUCCESS;
}

/* MPI_Recv: the request lives on this frame (it cannot outlive the call). Out of line, so
 * MPI_Irecv's path does not carry its frame. */
static __attribute__((noinline)) int recv_blocking_fast(const char *func, void *buf, size_t bytes,
                                                        int source, int tag, mf_comm_t *c,
                                                        MPI_Status *st)
{
    mf_request_local_t local;
    mf_status_t status =
        mf_pt2pt_recv_local(buf, bytes, source, tag, c, mf_comm_ctx_user(c), &local);
    if (MF_UNLIKELY(status != MF_OK))
        return mf_err_from_status(c, status, func, "cannot post the receive");
    mf_request_wait_done(&local.req);
    return finish_local(func, c, &local.req, st);
}

static inline int recv_fast(const char *func, void *buf, size_t bytes, int source, int tag,
                            mf_comm_t *c, op_form_t form, MPI_Request *request, MPI_Status *st)
{
    if (form == OP_BLOCKING)
        return recv_blocking_fast(func, buf, bytes, source, tag, c, st);
    mf_request_t *req;
    mf_status_t status = mf_pt2pt_irecv(buf, bytes, source, tag, c, mf_comm_ctx_user(c), &req);
    if (MF_UNLIKELY(status != MF_OK))
        return mf_err_from_status(c, status, func, "cannot post the receive");
    *request = req;
    return MPI_SUCCESS;
}

/* Send `bytes` of a message whose envelope is checked: stage it (the user's memory, streamed,
 * or a packed temporary) and start the send; the request owns what it needs. */
static int send_issue(const char *func, mf_comm_t *c, const void *buf, MPI_Count count,
                      MPI_Datatype dt, size_t bytes, int dest, int tag, mf_send_mode_t mode,
                      op_form_t form, MPI_Request *request)
{
    stage_t sg = {0};
    int rc = stage_prepare(func, c, buf, count, dt, bytes, form != OP_PERSISTENT,
                           mode != MF_SEND_BUFFERED, &sg);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *req;
    mf_status_t status;
    if (form == OP_PERSISTENT)
        status = mf_pt2pt_send_init(sg.ptr, bytes, dest, tag, c, mode, &req);
    else if (sg.stream)
        status = mf_pt2pt_isend_stream(sg.dt, buf, count, bytes, dest, tag, c, mode,
                                       form == OP_BLOCKING, &req);
    else
        status = mf_pt2pt_isend(sg.ptr, bytes, dest, tag, c, mf_comm_ctx_user(c), mode,
                                form == OP_BLOCKING, &req);
    if (status == MF_OK && sg.stream && form == OP_PERSISTENT)
        mf_pt2pt_stream_attach(req, sg.dt, buf, count);
    else if (status == MF_OK)
        stage_attach(req, &sg, (void *)buf, count);
    else
        mf_dtype_temp_free(sg.tmp);
    if (status == MF_ERR_NOT_FOUND && mode == MF_SEND_BUFFERED)
        return mf_err_raise(
            c, mf_err_code(MPI_ERR_BUFFER, func, "no buffer is attached (MPI_Buffer_attach)"));
    if (status == MF_ERR_NO_SPACE && mode == MF_SEND_BUFFERED)
        return mf_err_raise(c, mf_err_code(MPI_ERR_BUFFER, func,
                                           "the attached buffer has no room for %zu bytes "
                                           "(plus MPI_BSEND_OVERHEAD)",
                                           bytes));
    if (status == MF_ERR_NO_MEMORY && mode == MF_SEND_BUFFERED)
        return mf_err_raise(c, mf_err_code(MPI_ERR_NO_MEM, func,
                                           "cannot allocate memory for a copy of the %zu bytes "
                                           "to send",
                                           bytes));
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot start the send");
    if (form == OP_BLOCKING)
        return finish_blocking(func, c, req, MPI_STATUS_IGNORE);
    *request = req;
    return MPI_SUCCESS;
}

static int recv_issue(const char *func, mf_comm_t *c, void *buf, MPI_Count count, MPI_Datatype dt,
                      size_t bytes, int source, int tag, op_form_t form, MPI_Request *request,
                      MPI_Status *st)
{
    stage_t sg = {0};
    int rc = stage_prepare(func, c, buf, count, dt, bytes, 0, 1, &sg);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *req;
    mf_status_t status;
    if (form == OP_PERSISTENT)
        status = mf_pt2pt_recv_init(sg.ptr, bytes, source, tag, c, &req);
    else if (sg.stream)
        status = mf_pt2pt_irecv_stream(sg.dt, buf, count, bytes, source, tag, c, &req);
    else if (sg.tmp != NULL) /* the request takes the temporary and unpacks it at completion */
        status = mf_pt2pt_irecv_unpack(sg.tmp, bytes, mf_dtype_get(sg.dt), buf, count, source, tag,
                                       c, &req);
    else
        status = mf_pt2pt_irecv(sg.ptr, bytes, source, tag, c, mf_comm_ctx_user(c), &req);
    if (sg.tmp != NULL && form != OP_PERSISTENT)
        sg.tmp = NULL; /* mf_pt2pt_irecv_unpack's now, whatever happened */
    if (status == MF_OK && sg.stream && form == OP_PERSISTENT)
        mf_pt2pt_stream_attach(req, sg.dt, buf, count);
    else if (status == MF_OK)
        stage_attach(req, &sg, buf, count);
    else
        mf_dtype_temp_free(sg.tmp);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot post the receive");
    if (form == OP_BLOCKING)
        return finish_blocking(func, c, req, st);
    *request = req;
    return MPI_SUCCESS;
}

/* Everything the one-pass envelope does not take (persistent and buffered forms, MPI_PROC_NULL,
 * bad arguments), with every argument checked: out of line, so the fast path's callers stay
 * small. */
static __attribute__((noinline)) int send_staged(const char *func, const void *buf, MPI_Count count,
                                                 MPI_Datatype dt, int dest, int tag, MPI_Comm comm,
                                                 mf_send_mode_t mode, op_form_t form,
                                                 MPI_Request *request)
{
    size_t bytes = 0;
    mf_comm_t *c = NULL;
    int rc = check_envelope(func, comm, buf, count, dt, dest, tag, 1, &send_names, &c, &bytes);
    if (rc == MPI_SUCCESS && form != OP_BLOCKING)
        rc = mf_check_ptr(func, c, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    return send_issue(func, c, buf, count, dt, bytes, dest, tag, mode, form, request);
}

static __attribute__((noinline)) int recv_staged(const char *func, void *buf, MPI_Count count,
                                                 MPI_Datatype dt, int source, int tag,
                                                 MPI_Comm comm, op_form_t form,
                                                 MPI_Request *request, MPI_Status *st)
{
    size_t bytes = 0;
    mf_comm_t *c = NULL;
    int rc = check_envelope(func, comm, buf, count, dt, source, tag, 0, &recv_names, &c, &bytes);
    if (rc == MPI_SUCCESS && form != OP_BLOCKING)
        rc = mf_check_ptr(func, c, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    return recv_issue(func, c, buf, count, dt, bytes, source, tag, form, request, st);
}

/* ---- derived datatypes --------------------------------------------------------------------- */

/* The entry point has found a datatype outside the predefined range, and resolved the
 * communicator (NULL when that failed); envelope_derived finishes the pass (anything it rejects
 * is staged with every argument checked against `comm`). Items that form one run take the
 * predefined types' path at the run's start.
 *
 * A blocking call keeps its packed copy to itself: it waits for the transport anyway, so the
 * copy lives in this frame, on the stack up to MANIFOLD_DT_STACK_BYTES (one comparison with a
 * limit set at init, which also rules out the streamed sizes). The copies of the commonest
 * layouts are inlined (mf_dtype_copy_inline). The send packs and then does exactly what
 * MPI_Send of bytes does (no wait when the transport took them at once); no request carries the
 * type, the user's buffer or a type reference. Larger messages go to send_derived_large /
 * recv_derived_large, out of line, so the small path tracks no temporary. */

/* A blocking message above the stack limit: streamed, or packed into a cached temporary. */
static __attribute__((noinline)) int send_derived_large(const char *func, const void *buf,
                                                        MPI_Count count, mf_dtype_t *d,
                                                        size_t bytes, int dest, int tag,
                                                        mf_comm_t *c, mf_send_mode_t mode)
{
    if (stream_msg(d, count, bytes))
        return send_issue(func, c, buf, count, d, bytes, dest, tag, mode, OP_BLOCKING, NULL);
    char *packed = blocking_temp(bytes);
    if (packed == NULL)
        return mf_err_raise(c,
                            mf_err_code(MPI_ERR_NO_MEM, func,
                                        "cannot allocate %zu bytes to pack the datatype", bytes));
    mf_dtype_pack_all(d, count, buf, packed);
    int rc = send_fast(func, packed, bytes, dest, tag, c, mode, OP_BLOCKING, NULL);
    mf_dtype_temp_free(packed);
    return rc;
}

static inline __attribute__((always_inline)) int
send_derived_blocking(const char *func, const void *buf, MPI_Count count, MPI_Datatype dt, int dest,
                      int tag, mf_comm_t *c, MPI_Comm comm, mf_send_mode_t mode)
{
    size_t bytes;
    mf_dtype_t *d = envelope_derived(c, buf, count, dt, dest, tag, 1, &bytes);
    if (MF_UNLIKELY(d == NULL))
        return send_staged(func, buf, count, dt, dest, tag, comm, mode, OP_BLOCKING, NULL);
    if (!mf_dtype_needs_pack(d, count))
        return send_fast(func, mf_dtype_run_start(d, count, buf), bytes, dest, tag, c, mode,
                         OP_BLOCKING, NULL);
    if (MF_UNLIKELY(bytes > (size_t)mf_params.dt_stack_direct))
        return send_derived_large(func, buf, count, d, bytes, dest, tag, c, mode);
    char packed[DT_STACK_CAP];
    mf_dtype_copy_inline(d, count, (uintptr_t)buf, packed, 0);
    return send_fast(func, packed, bytes, dest, tag, c, mode, OP_BLOCKING, NULL);
}

/* The receive: a request on this frame (mf_pt2pt_recv_local) and the whole-message unpack when
 * the whole message arrived; a shorter or truncated one unpacks what arrived, as a temporary
 * unpacked at completion does (mf_request_unpack). `inline_copy` inlines the commonest loops
 * (the stack path) or calls unpack_all (a temporary). */
static inline __attribute__((always_inline)) int
recv_into(const char *func, void *buf, MPI_Count count, mf_dtype_t *d, size_t bytes, int source,
          int tag, mf_comm_t *c, MPI_Status *st, char *packed, int inline_copy)
{
    mf_request_local_t local_slot;
    mf_request_t *local = &local_slot.req;
    mf_status_t status =
        mf_pt2pt_recv_local(packed, bytes, source, tag, c, mf_comm_ctx_user(c), &local_slot);
    if (MF_UNLIKELY(status != MF_OK))
        return mf_err_from_status(c, status, func, "cannot post the receive");
    mf_request_wait_done(local);
    if (MF_LIKELY(local->op.status == MF_OK && local->op.length == bytes)) {
        if (inline_copy)
            mf_dtype_copy_inline(d, count, (uintptr_t)buf, packed, 1);
        else
            mf_dtype_unpack_all(d, count, buf, packed);
    } else if (local->op.status == MF_OK) {
        /* a short message; a truncated one left nothing defined in the copy (the transport does
         * not deliver a message too long for its buffer), so the user's buffer stays as it was,
         * as for a predefined type */
        size_t got = local->op.length < bytes ? local->op.length : bytes;
        mf_dtype_unpack(d, count, buf, packed, 0, (MPI_Count)got);
    }
    return finish_local(func, c, local, st);
}

static __attribute__((noinline)) int recv_derived_large(const char *func, void *buf,
                                                        MPI_Count count, mf_dtype_t *d,
                                                        size_t bytes, int source, int tag,
                                                        mf_comm_t *c, MPI_Status *st)
{
    if (stream_msg(d, count, bytes))
        return recv_issue(func, c, buf, count, d, bytes, source, tag, OP_BLOCKING, NULL, st);
    char *packed = blocking_temp(bytes);
    if (packed == NULL)
        return mf_err_raise(c,
                            mf_err_code(MPI_ERR_NO_MEM, func,
                                        "cannot allocate %zu bytes to pack the datatype", bytes));
    int rc = recv_into(func, buf, count, d, bytes, source, tag, c, st, packed, 0);
    mf_dtype_temp_free(packed);
    return rc;
}

/* recv_staged against `comm`, or when that is NULL against the resolved `c` (whose handle is
 * worked out here, off the path of a valid call). */
static __attribute__((noinline, cold)) int recv_staged_c(const char *func, void *buf,
                                                         MPI_Count count, MPI_Datatype dt,
                                                         int source, int tag, mf_comm_t *c,
                                                         MPI_Comm comm, MPI_Status *st)
{
    return recv_staged(func, buf, count, dt, source, tag, comm != NULL ? comm : mf_comm_handle(c),
                       OP_BLOCKING, NULL, st);
}

static inline __attribute__((always_inline)) int
recv_derived_blocking(const char *func, void *buf, MPI_Count count, MPI_Datatype dt, int source,
                      int tag, mf_comm_t *c, MPI_Comm comm, MPI_Status *st)
{
    size_t bytes;
    mf_dtype_t *d = envelope_derived(c, buf, count, dt, source, tag, 0, &bytes);
    if (MF_UNLIKELY(d == NULL))
        return recv_staged_c(func, buf, count, dt, source, tag, c, comm, st);
    if (!mf_dtype_needs_pack(d, count))
        return recv_blocking_fast(func, mf_dtype_run_start(d, count, buf), bytes, source, tag, c,
                                  st);
    if (MF_UNLIKELY(bytes > (size_t)mf_params.dt_stack_direct))
        return recv_derived_large(func, buf, count, d, bytes, source, tag, c, st);
    _Alignas(64) char packed[DT_STACK_CAP]; /* on a cache line, as a temporary (core_dtype.c) */
    return recv_into(func, buf, count, d, bytes, source, tag, c, st, packed, 1);
}

/* The immediate forms: one run goes to the predefined path; a small message (up to the stack
 * limit, so never a streamed size) is packed into the thread's send slot or a receive temporary
 * with no staging bookkeeping; anything else is staged (streamed or a packed temporary the
 * request owns) without checking the envelope again.
 *
 * A small send packs into the thread's slot and does what MPI_Isend of bytes does. The
 * transport copies a small message inside the call as a rule (the shared completed request
 * comes back) and the slot serves the next send; when it keeps the bytes (no room in its
 * queues), the request takes the slot. Synchronous sends always keep them: staged. */
_Static_assert(MF_DT_SEND_SLOT >= DT_STACK_CAP, "the send slot holds every small message");
_Static_assert(MF_DT_SMALL_MAX >= DT_STACK_CAP, "a small receive's temporary is a small one");

static inline __attribute__((always_inline)) int
send_derived_immediate(const char *func, const void *buf, MPI_Count count, MPI_Datatype dt,
                       int dest, int tag, mf_comm_t *c, mf_send_mode_t mode, MPI_Request *request)
{
    size_t bytes;
    mf_dtype_t *d = envelope_derived(c, buf, count, dt, dest, tag, 1, &bytes);
    if (MF_UNLIKELY(d == NULL))
        return send_staged(func, buf, count, dt, dest, tag, mf_comm_handle(c), mode, OP_IMMEDIATE,
                           request);
    if (!mf_dtype_needs_pack(d, count))
        return send_fast(func, mf_dtype_run_start(d, count, buf), bytes, dest, tag, c, mode,
                         OP_IMMEDIATE, request);
    char *slot;
    if (MF_UNLIKELY(bytes > (size_t)mf_params.dt_stack_direct || mode == MF_SEND_SYNC ||
                    (slot = mf_dtype_send_slot()) == NULL))
        return send_issue(func, c, buf, count, dt, bytes, dest, tag, mode, OP_IMMEDIATE, request);
    mf_dtype_copy_inline(d, count, (uintptr_t)buf, slot, 0);
    mf_request_t *req;
    mf_status_t status =
        mf_pt2pt_isend(slot, bytes, dest, tag, c, mf_comm_ctx_user(c), mode, 0, &req);
    if (MF_UNLIKELY(status != MF_OK))
        return mf_err_from_status(c, status, func, "cannot start the send");
    if (MF_UNLIKELY(req->type != MF_REQ_PRECOMPLETE)) {
        mf_dtype_send_slot_give();
        mf_dtype_temp_note(bytes);
        req->pack_buf = slot;
    }
    *request = req;
    return MPI_SUCCESS;
}

static inline __attribute__((always_inline)) int
recv_derived_immediate(const char *func, void *buf, MPI_Count count, MPI_Datatype dt, int source,
                       int tag, mf_comm_t *c, MPI_Request *request)
{
    size_t bytes;
    mf_dtype_t *d = envelope_derived(c, buf, count, dt, source, tag, 0, &bytes);
    if (MF_UNLIKELY(d == NULL))
        return recv_staged(func, buf, count, dt, source, tag, mf_comm_handle(c), OP_IMMEDIATE,
                           request, MPI_STATUS_IGNORE);
    if (!mf_dtype_needs_pack(d, count))
        return recv_fast(func, mf_dtype_run_start(d, count, buf), bytes, source, tag, c,
                         OP_IMMEDIATE, request, MPI_STATUS_IGNORE);
    char *packed;
    if (MF_UNLIKELY(bytes > (size_t)mf_params.dt_stack_direct ||
                    (packed = mf_dtype_temp_alloc_small(bytes)) == NULL))
        return recv_issue(func, c, buf, count, dt, bytes, source, tag, OP_IMMEDIATE, request,
                          MPI_STATUS_IGNORE);
    /* unpacked and released by the transport's completion: the wait finds a plain request */
    mf_dtype_temp_note(bytes);
    mf_request_t *req;
    mf_status_t status = mf_pt2pt_irecv_unpack(packed, bytes, d, buf, count, source, tag, c, &req);
    if (MF_UNLIKELY(status != MF_OK))
        return mf_err_from_status(c, status, func, "cannot post the receive");
    *request = req;
    return MPI_SUCCESS;
}

/* How the entry points reach these. GCC places a function's prologue before its first test (it
 * does not shrink-wrap the entry points), so a body that tests the datatype after resolving the
 * communicator saves and restores six registers on the derived path before it jumps on.
 *
 * The blocking sends (six arguments, all in registers) are therefore a test of the handle's
 * range and a jump, to the predefined body or to the derived one, each out of line with the
 * entry point's own arguments: the predefined path gains that one jump (the range test only
 * moved) and the derived path pays nothing but the test. With a seventh argument (receives,
 * immediate forms) GCC 12 loads it from the stack before the test and copies it back before one
 * of the two jumps, so those keep the test inside their body (envelope_fast, no added
 * instruction) and jump to their derived function after the epilogue, passing the resolved
 * communicator and the seventh argument in place. */

#define SEND_DERIVED_IMMEDIATE(name, mode)                                                         \
    static __attribute__((noinline)) int send_derived_##name(const void *buf, MPI_Count count,     \
                                                             MPI_Datatype dt, int dest, int tag,   \
                                                             mf_comm_t *c, MPI_Request *request)   \
    {                                                                                              \
        return send_derived_immediate("MPI_" #name, buf, count, dt, dest, tag, c, mode, request);  \
    }
SEND_DERIVED_IMMEDIATE(Isend, MF_SEND_STANDARD)
SEND_DERIVED_IMMEDIATE(Isend_c, MF_SEND_STANDARD)
SEND_DERIVED_IMMEDIATE(Issend, MF_SEND_SYNC)
SEND_DERIVED_IMMEDIATE(Issend_c, MF_SEND_SYNC)
SEND_DERIVED_IMMEDIATE(Irsend, MF_SEND_READY)
SEND_DERIVED_IMMEDIATE(Irsend_c, MF_SEND_READY)

#define RECV_DERIVED_BLOCKING(name)                                                                \
    static __attribute__((noinline)) int recv_derived_##name(void *buf, MPI_Count count,           \
                                                             MPI_Datatype dt, int source, int tag, \
                                                             mf_comm_t *c, MPI_Status *st)         \
    {                                                                                              \
        return recv_derived_blocking("MPI_" #name, buf, count, dt, source, tag, c, NULL, st);      \
    }
#define RECV_DERIVED_IMMEDIATE(name)                                                               \
    static __attribute__((noinline)) int recv_derived_##name(void *buf, MPI_Count count,           \
                                                             MPI_Datatype dt, int source, int tag, \
                                                             mf_comm_t *c, MPI_Request *request)   \
    {                                                                                              \
        return recv_derived_immediate("MPI_" #name, buf, count, dt, source, tag, c, request);      \
    }
RECV_DERIVED_BLOCKING(Recv)
RECV_DERIVED_BLOCKING(Recv_c)
RECV_DERIVED_IMMEDIATE(Irecv)
RECV_DERIVED_IMMEDIATE(Irecv_c)

/* The entry points' common body. The immediate and blocking forms check the envelope in one
 * pass that accepts both kinds of datatype (envelope_fast): a predefined one goes straight to
 * the protocol layer, a derived one to its own function with the communicator resolved (the
 * blocking sends have tested the range already, `in_range`, and pass no derived function). The
 * persistent and buffered forms, and whatever the pass rejects, are staged with every argument
 * checked. */
typedef int (*send_derived_i_t)(const void *, MPI_Count, MPI_Datatype, int, int, mf_comm_t *,
                                MPI_Request *);
typedef int (*recv_derived_b_t)(void *, MPI_Count, MPI_Datatype, int, int, mf_comm_t *,
                                MPI_Status *);
typedef int (*recv_derived_i_t)(void *, MPI_Count, MPI_Datatype, int, int, mf_comm_t *,
                                MPI_Request *);

static inline __attribute__((always_inline)) int
send_common(const char *func, const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
            MPI_Comm comm, mf_send_mode_t mode, op_form_t form, MPI_Request *request,
            send_derived_i_t derived_i)
{
    size_t bytes = 0;
    mf_comm_t *c = NULL;
    if (form != OP_PERSISTENT && mode != MF_SEND_BUFFERED && (form == OP_BLOCKING || request)) {
        switch (
            envelope_fast(comm, buf, count, dt, dest, tag, 1, form == OP_BLOCKING, &c, &bytes)) {
        case ENV_PREDEFINED: return send_fast(func, buf, bytes, dest, tag, c, mode, form, request);
        case ENV_DERIVED:
            if (form != OP_BLOCKING)
                return derived_i(buf, count, dt, dest, tag, c, request);
            break;
        case ENV_CHECKED: break;
        }
    }
    return send_staged(func, buf, count, dt, dest, tag, comm, mode, form, request);
}

static inline int recv_common(const char *func, void *buf, MPI_Count count, MPI_Datatype dt,
                              int source, int tag, MPI_Comm comm, op_form_t form,
                              MPI_Request *request, MPI_Status *st, recv_derived_b_t derived_b,
                              recv_derived_i_t derived_i)
{
    size_t bytes = 0;
    mf_comm_t *c = NULL;
    if (form != OP_PERSISTENT && (form == OP_BLOCKING || request)) {
        switch (envelope_fast(comm, buf, count, dt, source, tag, 0, 0, &c, &bytes)) {
        case ENV_PREDEFINED: return recv_fast(func, buf, bytes, source, tag, c, form, request, st);
        case ENV_DERIVED:
            return form == OP_BLOCKING ? derived_b(buf, count, dt, source, tag, c, st)
                                       : derived_i(buf, count, dt, source, tag, c, request);
        case ENV_CHECKED: break;
        }
    }
    return recv_staged(func, buf, count, dt, source, tag, comm, form, request, st);
}

/* The blocking sends: a test of the handle's range and a jump (see above). */
#define SEND_BLOCKING_BODIES(name, count_t, mode)                                                  \
    static __attribute__((noinline)) int send_predefined_##name(                                   \
        const void *buf, count_t count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)         \
    {                                                                                              \
        return send_common("MPI_" #name, buf, count, dt, dest, tag, comm, mode, OP_BLOCKING, NULL, \
                           NULL);                                                                  \
    }                                                                                              \
    static __attribute__((noinline)) int send_derived_##name(                                      \
        const void *buf, count_t count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)         \
    {                                                                                              \
        mf_comm_t *c = library_ready() ? mf_comm_get(comm) : NULL;                                 \
        return send_derived_blocking("MPI_" #name, buf, count, dt, dest, tag, c, comm, mode);      \
    }
SEND_BLOCKING_BODIES(Send, int, MF_SEND_STANDARD)
SEND_BLOCKING_BODIES(Send_c, MPI_Count, MF_SEND_STANDARD)
SEND_BLOCKING_BODIES(Ssend, int, MF_SEND_SYNC)
SEND_BLOCKING_BODIES(Ssend_c, MPI_Count, MF_SEND_SYNC)
SEND_BLOCKING_BODIES(Rsend, int, MF_SEND_READY)
SEND_BLOCKING_BODIES(Rsend_c, MPI_Count, MF_SEND_READY)

/* ---- sends ------------------------------------------------------------------------------- */

#define SEND_ARGS                                                                                  \
    const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm
#define SEND_ARGS_C                                                                                \
    const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm
#define SEND_PASS buf, count, datatype, dest, tag, comm

#pragma weak MPI_Send = PMPI_Send
int PMPI_Send(SEND_ARGS)
{
    if (MF_LIKELY(dt_predefined_range(datatype)))
        return send_predefined_Send(SEND_PASS);
    return send_derived_Send(SEND_PASS);
}
#pragma weak MPI_Send_c = PMPI_Send_c
int PMPI_Send_c(SEND_ARGS_C)
{
    if (MF_LIKELY(dt_predefined_range(datatype)))
        return send_predefined_Send_c(SEND_PASS);
    return send_derived_Send_c(SEND_PASS);
}
#pragma weak MPI_Ssend = PMPI_Ssend
int PMPI_Ssend(SEND_ARGS)
{
    if (MF_LIKELY(dt_predefined_range(datatype)))
        return send_predefined_Ssend(SEND_PASS);
    return send_derived_Ssend(SEND_PASS);
}
#pragma weak MPI_Ssend_c = PMPI_Ssend_c
int PMPI_Ssend_c(SEND_ARGS_C)
{
    if (MF_LIKELY(dt_predefined_range(datatype)))
        return send_predefined_Ssend_c(SEND_PASS);
    return send_derived_Ssend_c(SEND_PASS);
}
#pragma weak MPI_Bsend = PMPI_Bsend
int PMPI_Bsend(SEND_ARGS)
{
    return send_common("MPI_Bsend", SEND_PASS, MF_SEND_BUFFERED, OP_BLOCKING, NULL, NULL);
}
#pragma weak MPI_Bsend_c = PMPI_Bsend_c
int PMPI_Bsend_c(SEND_ARGS_C)
{
    return send_common("MPI_Bsend_c", SEND_PASS, MF_SEND_BUFFERED, OP_BLOCKING, NULL, NULL);
}
#pragma weak MPI_Rsend = PMPI_Rsend
int PMPI_Rsend(SEND_ARGS)
{
    if (MF_LIKELY(dt_predefined_range(datatype)))
        return send_predefined_Rsend(SEND_PASS);
    return send_derived_Rsend(SEND_PASS);
}
#pragma weak MPI_Rsend_c = PMPI_Rsend_c
int PMPI_Rsend_c(SEND_ARGS_C)
{
    if (MF_LIKELY(dt_predefined_range(datatype)))
        return send_predefined_Rsend_c(SEND_PASS);
    return send_derived_Rsend_c(SEND_PASS);
}
#pragma weak MPI_Isend = PMPI_Isend
int PMPI_Isend(SEND_ARGS, MPI_Request *request)
{
    return send_common("MPI_Isend", SEND_PASS, MF_SEND_STANDARD, OP_IMMEDIATE, request,
                       send_derived_Isend);
}
#pragma weak MPI_Isend_c = PMPI_Isend_c
int PMPI_Isend_c(SEND_ARGS_C, MPI_Request *request)
{
    return send_common("MPI_Isend_c", SEND_PASS, MF_SEND_STANDARD, OP_IMMEDIATE, request,
                       send_derived_Isend_c);
}
#pragma weak MPI_Issend = PMPI_Issend
int PMPI_Issend(SEND_ARGS, MPI_Request *request)
{
    return send_common("MPI_Issend", SEND_PASS, MF_SEND_SYNC, OP_IMMEDIATE, request,
                       send_derived_Issend);
}
#pragma weak MPI_Issend_c = PMPI_Issend_c
int PMPI_Issend_c(SEND_ARGS_C, MPI_Request *request)
{
    return send_common("MPI_Issend_c", SEND_PASS, MF_SEND_SYNC, OP_IMMEDIATE, request,
                       send_derived_Issend_c);
}
#pragma weak MPI_Ibsend = PMPI_Ibsend
int PMPI_Ibsend(SEND_ARGS, MPI_Request *request)
{
    return send_common("MPI_Ibsend", SEND_PASS, MF_SEND_BUFFERED, OP_IMMEDIATE, request, NULL);
}
#pragma weak MPI_Ibsend_c = PMPI_Ibsend_c
int PMPI_Ibsend_c(SEND_ARGS_C, MPI_Request *request)
{
    return send_common("MPI_Ibsend_c", SEND_PASS, MF_SEND_BUFFERED, OP_IMMEDIATE, request, NULL);
}
#pragma weak MPI_Irsend = PMPI_Irsend
int PMPI_Irsend(SEND_ARGS, MPI_Request *request)
{
    return send_common("MPI_Irsend", SEND_PASS, MF_SEND_READY, OP_IMMEDIATE, request,
                       send_derived_Irsend);
}
#pragma weak MPI_Irsend_c = PMPI_Irsend_c
int PMPI_Irsend_c(SEND_ARGS_C, MPI_Request *request)
{
    return send_common("MPI_Irsend_c", SEND_PASS, MF_SEND_READY, OP_IMMEDIATE, request,
                       send_derived_Irsend_c);
}
#pragma weak MPI_Send_init = PMPI_Send_init
int PMPI_Send_init(SEND_ARGS, MPI_Request *request)
{
    return send_common("MPI_Send_init", SEND_PASS, MF_SEND_STANDARD, OP_PERSISTENT, request, NULL);
}
#pragma weak MPI_Send_init_c = PMPI_Send_init_c
int PMPI_Send_init_c(SEND_ARGS_C, MPI_Request *request)
{
    return send_common("MPI_Send_init_c", SEND_PASS, MF_SEND_STANDARD, OP_PERSISTENT, request,
                       NULL);
}
#pragma weak MPI_Ssend_init = PMPI_Ssend_init
int PMPI_Ssend_init(SEND_ARGS, MPI_Request *request)
{
    return send_common("MPI_Ssend_init", SEND_PASS, MF_SEND_SYNC, OP_PERSISTENT, request, NULL);
}
#pragma weak MPI_Ssend_init_c = PMPI_Ssend_init_c
int PMPI_Ssend_init_c(SEND_ARGS_C, MPI_Request *request)
{
    return send_common("MPI_Ssend_init_c", SEND_PASS, MF_SEND_SYNC, OP_PERSISTENT, request, NULL);
}
#pragma weak MPI_Bsend_init = PMPI_Bsend_init
int PMPI_Bsend_init(SEND_ARGS, MPI_Request *request)
{
    return send_common("MPI_Bsend_init", SEND_PASS, MF_SEND_BUFFERED, OP_PERSISTENT, request, NULL);
}
#pragma weak MPI_Bsend_init_c = PMPI_Bsend_init_c
int PMPI_Bsend_init_c(SEND_ARGS_C, MPI_Request *request)
{
    return send_common("MPI_Bsend_init_c", SEND_PASS, MF_SEND_BUFFERED, OP_PERSISTENT, request,
                       NULL);
}
#pragma weak MPI_Rsend_init = PMPI_Rsend_init
int PMPI_Rsend_init(SEND_ARGS, MPI_Request *request)
{
    return send_common("MPI_Rsend_init", SEND_PASS, MF_SEND_READY, OP_PERSISTENT, request, NULL);
}
#pragma weak MPI_Rsend_init_c = PMPI_Rsend_init_c
int PMPI_Rsend_init_c(SEND_ARGS_C, MPI_Request *request)
{
    return send_common("MPI_Rsend_init_c", SEND_PASS, MF_SEND_READY, OP_PERSISTENT, request, NULL);
}

/* ---- receives ---------------------------------------------------------------------------- */

#define RECV_ARGS void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm
#define RECV_ARGS_C                                                                                \
    void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm
#define RECV_PASS buf, count, datatype, source, tag, comm

#pragma weak MPI_Recv = PMPI_Recv
int PMPI_Recv(RECV_ARGS, MPI_Status *status)
{
    return recv_common("MPI_Recv", RECV_PASS, OP_BLOCKING, NULL, status, recv_derived_Recv, NULL);
}
#pragma weak MPI_Recv_c = PMPI_Recv_c
int PMPI_Recv_c(RECV_ARGS_C, MPI_Status *status)
{
    return recv_common("MPI_Recv_c", RECV_PASS, OP_BLOCKING, NULL, status, recv_derived_Recv_c,
                       NULL);
}
#pragma weak MPI_Irecv = PMPI_Irecv
int PMPI_Irecv(RECV_ARGS, MPI_Request *request)
{
    return recv_common("MPI_Irecv", RECV_PASS, OP_IMMEDIATE, request, MPI_STATUS_IGNORE, NULL,
                       recv_derived_Irecv);
}
#pragma weak MPI_Irecv_c = PMPI_Irecv_c
int PMPI_Irecv_c(RECV_ARGS_C, MPI_Request *request)
{
    return recv_common("MPI_Irecv_c", RECV_PASS, OP_IMMEDIATE, request, MPI_STATUS_IGNORE, NULL,
                       recv_derived_Irecv_c);
}
#pragma weak MPI_Recv_init = PMPI_Recv_init
int PMPI_Recv_init(RECV_ARGS, MPI_Request *request)
{
    return recv_common("MPI_Recv_init", RECV_PASS, OP_PERSISTENT, request, MPI_STATUS_IGNORE, NULL,
                       NULL);
}
#pragma weak MPI_Recv_init_c = PMPI_Recv_init_c
int PMPI_Recv_init_c(RECV_ARGS_C, MPI_Request *request)
{
    return recv_common("MPI_Recv_init_c", RECV_PASS, OP_PERSISTENT, request, MPI_STATUS_IGNORE,
                       NULL, NULL);
}

/* ---- sendrecv ---------------------------------------------------------------------------- */

/* The end of a send-receive whose two requests are started: the blocking forms wait for both
 * (the send first: its buffer is the caller's), the immediate ones join them into one request. */
static int sendrecv_finish(const char *func, mf_comm_t *c, mf_request_t *sreq, mf_request_t *rreq,
                           op_form_t form, MPI_Request *request, MPI_Status *status)
{
    if (form == OP_IMMEDIATE) {
        mf_status_t st = mf_pt2pt_join(c, sreq, rreq, request);
        if (st == MF_OK)
            return MPI_SUCCESS;
        finish_blocking(func, c, sreq, MPI_STATUS_IGNORE);
        finish_blocking(func, c, rreq, MPI_STATUS_IGNORE);
        return mf_err_from_status(c, st, func, "cannot create the request");
    }
    int rc = finish_blocking(func, c, sreq, MPI_STATUS_IGNORE);
    int rrc = finish_blocking(func, c, rreq, status);
    return rrc != MPI_SUCCESS ? rrc : rc;
}

/* MPI_Sendrecv (OP_BLOCKING) and MPI_Isendrecv (OP_IMMEDIATE). */
static int sendrecv_common(const char *func, const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                           MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
                           MPI_Comm comm, op_form_t form, MPI_Request *request, MPI_Status *status)
{
    mf_comm_t *c = NULL;
    size_t sbytes, rbytes;
    static const envelope_names_t send = {"sendbuf", "sendcount", "sendtype", "dest", "sendtag"};
    static const envelope_names_t recv = {"recvbuf", "recvcount", "recvtype", "source", "recvtag"};
    int rc = check_envelope(func, comm, sendbuf, sendcount, sendtype, dest, sendtag, 1, &send, &c,
                            &sbytes);
    if (rc == MPI_SUCCESS)
        rc = check_envelope(func, comm, recvbuf, recvcount, recvtype, source, recvtag, 0, &recv, &c,
                            &rbytes);
    if (rc == MPI_SUCCESS && form == OP_IMMEDIATE)
        rc = mf_check_ptr(func, c, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    stage_t rs = {0}, ss = {0};
    rc = stage_prepare(func, c, recvbuf, recvcount, recvtype, rbytes, 0, 1, &rs);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = stage_prepare(func, c, sendbuf, sendcount, sendtype, sbytes, 1, 1, &ss);
    if (rc != MPI_SUCCESS) {
        mf_dtype_temp_free(rs.tmp);
        return rc;
    }
    mf_request_t *rreq, *sreq;
    mf_status_t st =
        rs.stream
            ? mf_pt2pt_irecv_stream(rs.dt, recvbuf, recvcount, rbytes, source, recvtag, c, &rreq)
            : mf_pt2pt_irecv(rs.ptr, rbytes, source, recvtag, c, mf_comm_ctx_user(c), &rreq);
    if (st != MF_OK) {
        mf_dtype_temp_free(rs.tmp);
        mf_dtype_temp_free(ss.tmp);
        return mf_err_from_status(c, st, func, "cannot post the receive");
    }
    stage_attach(rreq, &rs, recvbuf, recvcount);
    st = ss.stream ? mf_pt2pt_isend_stream(ss.dt, sendbuf, sendcount, sbytes, dest, sendtag, c,
                                           MF_SEND_STANDARD, 1, &sreq)
                   : mf_pt2pt_isend(ss.ptr, sbytes, dest, sendtag, c, mf_comm_ctx_user(c),
                                    MF_SEND_STANDARD, 1, &sreq);
    if (st != MF_OK) {
        mf_dtype_temp_free(ss.tmp);
        finish_blocking(func, c, rreq, MPI_STATUS_IGNORE);
        return mf_err_from_status(c, st, func, "cannot start the send");
    }
    stage_attach(sreq, &ss, (void *)sendbuf, sendcount);
    return sendrecv_finish(func, c, sreq, rreq, form, request, status);
}

#pragma weak MPI_Sendrecv = PMPI_Sendrecv
int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_common("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvcount, recvtype, source, recvtag, comm, OP_BLOCKING, NULL, status);
}

#pragma weak MPI_Sendrecv_c = PMPI_Sendrecv_c
int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_common("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvcount, recvtype, source, recvtag, comm, OP_BLOCKING, NULL, status);
}

#pragma weak MPI_Isendrecv = PMPI_Isendrecv
int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request)
{
    return sendrecv_common("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvcount, recvtype, source, recvtag, comm, OP_IMMEDIATE, request,
                           MPI_STATUS_IGNORE);
}

#pragma weak MPI_Isendrecv_c = PMPI_Isendrecv_c
int PMPI_Isendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                     int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                     int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return sendrecv_common("MPI_Isendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                           recvcount, recvtype, source, recvtag, comm, OP_IMMEDIATE, request,
                           MPI_STATUS_IGNORE);
}

static int sendrecv_replace_common(const char *func, void *buf, MPI_Count count,
                                   MPI_Datatype datatype, int dest, int sendtag, int source,
                                   int recvtag, MPI_Comm comm, op_form_t form, MPI_Request *request,
                                   MPI_Status *status)
{
    mf_comm_t *c = NULL;
    size_t bytes;
    static const envelope_names_t send = {"buf", "count", "datatype", "dest", "sendtag"};
    static const envelope_names_t recv = {"buf", "count", "datatype", "source", "recvtag"};
    int rc = check_envelope(func, comm, buf, count, datatype, dest, sendtag, 1, &send, &c, &bytes);
    if (rc == MPI_SUCCESS)
        rc =
            check_envelope(func, comm, buf, count, datatype, source, recvtag, 0, &recv, &c, &bytes);
    if (rc == MPI_SUCCESS && form == OP_IMMEDIATE)
        rc = mf_check_ptr(func, c, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    /* The outgoing bytes are copied out first, so the receive may write the user's buffer at
     * once like any receive: directly when contiguous, streamed when large, else through a
     * temporary unpacked at completion. That is one copy of the message; less would need the
     * peer's cooperation, since the incoming bytes must land somewhere while the outgoing ones
     * they overwrite are unsent. */
    void *out = mf_dtype_temp_alloc(bytes);
    if (out == NULL)
        return mf_err_raise(c, mf_err_code(MPI_ERR_NO_MEM, func,
                                           "cannot allocate %zu bytes for the exchange", bytes));
    MPI_Aint off;
    if (mf_dtype_contiguous(datatype, count, &off)) {
        if (bytes > 0) /* buf may be NULL then */
            memcpy(out, (void *)((uintptr_t)buf + (uintptr_t)off), bytes);
    } else {
        mf_dtype_temp_note(bytes);
        mf_dtype_pack(datatype, count, buf, out, 0, (MPI_Count)bytes);
    }
    stage_t rs = {0};
    rc = stage_prepare(func, c, buf, count, datatype, bytes, 0, 1, &rs);
    if (rc != MPI_SUCCESS) {
        mf_dtype_temp_free(out);
        return rc;
    }
    mf_request_t *rreq, *sreq;
    mf_status_t st =
        rs.stream ? mf_pt2pt_irecv_stream(rs.dt, buf, count, bytes, source, recvtag, c, &rreq)
                  : mf_pt2pt_irecv(rs.ptr, bytes, source, recvtag, c, mf_comm_ctx_user(c), &rreq);
    if (st != MF_OK) {
        mf_dtype_temp_free(out);
        mf_dtype_temp_free(rs.tmp);
        return mf_err_from_status(c, st, func, "cannot post the receive");
    }
    stage_attach(rreq, &rs, buf, count);
    st = mf_pt2pt_isend(out, bytes, dest, sendtag, c, mf_comm_ctx_user(c), MF_SEND_STANDARD, 1,
                        &sreq);
    if (st != MF_OK) {
        finish_blocking(func, c, rreq, MPI_STATUS_IGNORE);
        mf_dtype_temp_free(out);
        return mf_err_from_status(c, st, func, "cannot start the send");
    }
    /* The send request owns the copy (freed with it; at once when the send is already over). */
    stage_t os = {.tmp = out, .ptr = out};
    stage_attach(sreq, &os, out, 0);
    return sendrecv_finish(func, c, sreq, rreq, form, request, status);
}

#pragma weak MPI_Sendrecv_replace = PMPI_Sendrecv_replace
int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace_common("MPI_Sendrecv_replace", buf, count, datatype, dest, sendtag,
                                   source, recvtag, comm, OP_BLOCKING, NULL, status);
}

#pragma weak MPI_Sendrecv_replace_c = PMPI_Sendrecv_replace_c
int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return sendrecv_replace_common("MPI_Sendrecv_replace_c", buf, count, datatype, dest, sendtag,
                                   source, recvtag, comm, OP_BLOCKING, NULL, status);
}

#pragma weak MPI_Isendrecv_replace = PMPI_Isendrecv_replace
int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    return sendrecv_replace_common("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag,
                                   source, recvtag, comm, OP_IMMEDIATE, request, MPI_STATUS_IGNORE);
}

#pragma weak MPI_Isendrecv_replace_c = PMPI_Isendrecv_replace_c
int PMPI_Isendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                             int sendtag, int source, int recvtag, MPI_Comm comm,
                             MPI_Request *request)
{
    return sendrecv_replace_common("MPI_Isendrecv_replace_c", buf, count, datatype, dest, sendtag,
                                   source, recvtag, comm, OP_IMMEDIATE, request, MPI_STATUS_IGNORE);
}

/* ---- probes ------------------------------------------------------------------------------ */

/* The probes; `matched`: MPI_Mprobe/MPI_Improbe, which hand the message out through
 * `message` (MPI_MESSAGE_NULL when an immediate probe found none). */
static int probe_common(const char *func, int source, int tag, MPI_Comm comm, int blocking,
                        int matched, int *flag, MPI_Message *message, MPI_Status *status)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_source(func, c, "source", source);
    if (rc == MPI_SUCCESS)
        rc = mf_check_recv_tag(func, c, "tag", tag);
    if (rc == MPI_SUCCESS && !blocking)
        rc = mf_check_ptr(func, c, flag, "flag");
    if (rc == MPI_SUCCESS && matched)
        rc = mf_check_ptr(func, c, message, "message");
    if (rc != MPI_SUCCESS)
        return rc;
    int found;
    mf_status_t st = matched ? mf_pt2pt_mprobe(source, tag, c, blocking, &found, message, status)
                             : mf_pt2pt_probe(source, tag, c, blocking, &found, status);
    if (st != MF_OK)
        return mf_err_from_status(c, st, func, "probe failed");
    if (matched && !found)
        *message = MPI_MESSAGE_NULL;
    if (flag != NULL)
        *flag = found;
    return MPI_SUCCESS;
}

#pragma weak MPI_Probe = PMPI_Probe
int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return probe_common("MPI_Probe", source, tag, comm, 1, 0, NULL, NULL, status);
}

#pragma weak MPI_Iprobe = PMPI_Iprobe
int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return probe_common("MPI_Iprobe", source, tag, comm, 0, 0, flag, NULL, status);
}

#pragma weak MPI_Mprobe = PMPI_Mprobe
int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    return probe_common("MPI_Mprobe", source, tag, comm, 1, 1, NULL, message, status);
}

#pragma weak MPI_Improbe = PMPI_Improbe
int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    return probe_common("MPI_Improbe", source, tag, comm, 0, 1, flag, message, status);
}

static int mrecv_common(const char *func, void *buf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Message *message, int blocking, MPI_Request *request,
                        MPI_Status *status)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, message, "message");
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Message m = *message;
    if (m != MPI_MESSAGE_NO_PROC && (!mf_handle_is_object(m) || m->kind != MF_KIND_MESSAGE))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_REQUEST, func,
                                              "argument message is not a matched message "
                                              "(MPI_Mprobe/MPI_Improbe)"));
    /* The message from MPI_PROC_NULL belongs to no communicator: its errors go to
     * MPI_COMM_SELF's handler. Its arguments are checked all the same (a negative count
     * returned success, a NULL request was written to). */
    mf_comm_t *c = m == MPI_MESSAGE_NO_PROC ? NULL : m->comm;
    size_t bytes;
    rc = mf_check_count(func, c, "count", count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, "datatype", datatype, count, &bytes);
    if (rc == MPI_SUCCESS)
        rc = mf_check_typed_buffer(func, c, "buf", buf, datatype, count, bytes);
    if (rc == MPI_SUCCESS && !blocking)
        rc = mf_check_ptr(func, c, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    if (m == MPI_MESSAGE_NO_PROC) {
        *message = MPI_MESSAGE_NULL;
        mf_request_t *req = mf_request_proc_null(mf_vci_get(0));
        if (blocking) {
            mf_request_fill_status(req, status);
            return MPI_SUCCESS;
        }
        *request = req;
        return MPI_SUCCESS;
    }
    stage_t sg = {0};
    if (rc == MPI_SUCCESS)
        rc = stage_prepare(func, c, buf, count, datatype, bytes, 0, 1, &sg);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *req;
    mf_status_t st = sg.stream ? mf_pt2pt_imrecv_stream(sg.dt, buf, count, bytes, m, &req)
                               : mf_pt2pt_imrecv(sg.ptr, bytes, m, &req);
    *message = MPI_MESSAGE_NULL;
    if (st == MF_OK)
        stage_attach(req, &sg, buf, count);
    else
        mf_dtype_temp_free(sg.tmp);
    if (st != MF_OK) {
        rc = mf_err_from_status(c, st, func, "cannot receive the message");
    } else if (blocking) {
        rc = finish_blocking(func, c, req, status);
    } else {
        *request = req;
    }
    return rc;
}

#pragma weak MPI_Mrecv = PMPI_Mrecv
int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    return mrecv_common("MPI_Mrecv", buf, count, datatype, message, 1, NULL, status);
}

#pragma weak MPI_Mrecv_c = PMPI_Mrecv_c
int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                 MPI_Status *status)
{
    return mrecv_common("MPI_Mrecv_c", buf, count, datatype, message, 1, NULL, status);
}

#pragma weak MPI_Imrecv = PMPI_Imrecv
int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    return mrecv_common("MPI_Imrecv", buf, count, datatype, message, 0, request, MPI_STATUS_IGNORE);
}

#pragma weak MPI_Imrecv_c = PMPI_Imrecv_c
int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                  MPI_Request *request)
{
    return mrecv_common("MPI_Imrecv_c", buf, count, datatype, message, 0, request,
                        MPI_STATUS_IGNORE);
}
