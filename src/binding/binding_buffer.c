/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: the buffers for buffered sends of the process (MPI_Buffer_attach/detach) and,
 * MPI-4.1, of communicators and sessions (MPI_Comm/Session_attach_buffer, _detach_buffer), and
 * the flushes of every buffer, blocking and not (MPI_Buffer_flush/iflush,
 * MPI_Comm/Session_(i)flush_buffer). A buffered send uses its communicator's buffer, else its
 * session's, else the process's (pt2pt.c).
 */
#include "binding.h"

#include "pt2pt.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

/* The buffer of a communicator or a session (made at the first attach and kept), or with both
 * NULL the process's; NULL when there is none yet and `make` is 0, or out of memory. */
static mf_bsend_pool_t *pool_get(mf_comm_t *c, mf_session_t *s, int make)
{
    if (c == NULL && s == NULL)
        return mf_bsend_pool_process();
    _Atomic(mf_bsend_pool_t *) *slot = s != NULL ? &s->bsend_pool : &c->bsend_pool;
    mf_bsend_pool_t *pool = atomic_load_explicit(slot, memory_order_acquire);
    if (pool != NULL || !make)
        return pool;
    mf_bsend_pool_t *fresh = calloc(1, sizeof(*fresh));
    if (fresh == NULL)
        return NULL;
    pthread_mutex_init(&fresh->lock, NULL);
    if (atomic_compare_exchange_strong(slot, &pool, fresh))
        return fresh;
    free(fresh); /* another thread made it first */
    return pool;
}

/* Errors go to the communicator's handler, or the session's (or, for the process's buffer,
 * to MPI_COMM_SELF's). */
static int raise_on(mf_comm_t *c, mf_session_t *s, int code)
{
    return s != NULL ? mf_err_raise_session(s, code) : mf_err_raise(c, code);
}

static const char *owner_of(mf_comm_t *c, mf_session_t *s)
{
    return s != NULL ? "session" : c != NULL ? "communicator" : "process";
}

static int attach(const char *func, mf_comm_t *c, mf_session_t *s, void *buffer, MPI_Count size)
{
    if (buffer != MPI_BUFFER_AUTOMATIC && size < 0)
        return raise_on(
            c, s,
            mf_err_code(MPI_ERR_ARG, func, "argument size=%lld is negative", (long long)size));
    if (buffer != MPI_BUFFER_AUTOMATIC && ((buffer == NULL && size > 0) || buffer == MPI_IN_PLACE))
        return raise_on(
            c, s,
            mf_err_code(MPI_ERR_BUFFER, func, "argument buffer %s",
                        buffer == NULL ? "is NULL" : "is MPI_IN_PLACE, which is not a buffer"));
    mf_bsend_pool_t *pool = pool_get(c, s, 1);
    if (pool == NULL)
        return raise_on(c, s, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    if (buffer == MPI_BUFFER_AUTOMATIC)
        size = 0; /* ignored: the library sizes it; detach gives 0 back */
    if (mf_bsend_pool_attach(pool, buffer, (size_t)size) != MF_OK)
        return raise_on(c, s,
                        mf_err_code(MPI_ERR_BUFFER, func, "a buffer is already attached to this %s",
                                    owner_of(c, s)));
    return MPI_SUCCESS;
}

/* size_max: what the function's size argument holds (INT_MAX for the int forms): a larger
 * buffer stays attached, MPI_ERR_VALUE_TOO_LARGE. */
static int detach(const char *func, mf_comm_t *c, mf_session_t *s, void *buffer_addr,
                  MPI_Count *size_p, MPI_Count size_max)
{
    if (buffer_addr == NULL || size_p == NULL)
        return raise_on(c, s,
                        mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL",
                                    buffer_addr == NULL ? "buffer_addr" : "size"));
    mf_bsend_pool_t *pool = pool_get(c, s, 0);
    void *buf;
    size_t size;
    mf_status_t status =
        pool != NULL ? mf_bsend_pool_detach(pool, (size_t)size_max, &buf, &size) : MF_ERR_NOT_FOUND;
    if (status == MF_ERR_OVERFLOW)
        return raise_on(c, s,
                        mf_err_code(MPI_ERR_VALUE_TOO_LARGE, func,
                                    "the %s's buffer is larger than argument size can hold (use "
                                    "%s_c); it stays attached",
                                    owner_of(c, s), func));
    if (status != MF_OK)
        return raise_on(
            c, s,
            mf_err_code(MPI_ERR_BUFFER, func, "no buffer is attached to this %s", owner_of(c, s)));
    *(void **)buffer_addr = buf;
    *size_p = (MPI_Count)size;
    return MPI_SUCCESS;
}

static int process_attach(const char *func, void *buffer, MPI_Count size)
{
    int rc = mf_check_initialized(func);
    return rc != MPI_SUCCESS ? rc : attach(func, NULL, NULL, buffer, size);
}

#pragma weak MPI_Buffer_attach = PMPI_Buffer_attach
int PMPI_Buffer_attach(void *buffer, int size)
{
    return process_attach("MPI_Buffer_attach", buffer, size);
}

#pragma weak MPI_Buffer_attach_c = PMPI_Buffer_attach_c
int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return process_attach("MPI_Buffer_attach_c", buffer, size);
}

static int process_detach(const char *func, void *buffer_addr, MPI_Count *size, MPI_Count max)
{
    int rc = mf_check_initialized(func);
    return rc != MPI_SUCCESS ? rc : detach(func, NULL, NULL, buffer_addr, size, max);
}

/* The int forms of the detaches: the result of the MPI_Count one (which checked INT_MAX). */
static int detach_int(int rc, const MPI_Count *s, int *size)
{
    if (rc == MPI_SUCCESS)
        *size = (int)*s;
    return rc;
}

#pragma weak MPI_Buffer_detach = PMPI_Buffer_detach
int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    MPI_Count s = 0;
    return detach_int(
        process_detach("MPI_Buffer_detach", buffer_addr, size != NULL ? &s : NULL, INT_MAX), &s,
        size);
}

#pragma weak MPI_Buffer_detach_c = PMPI_Buffer_detach_c
int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return process_detach("MPI_Buffer_detach_c", buffer_addr, size, INT64_MAX);
}

static int comm_attach(const char *func, MPI_Comm comm, void *buffer, MPI_Count size)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    return rc != MPI_SUCCESS ? rc : attach(func, c, NULL, buffer, size);
}

#pragma weak MPI_Comm_attach_buffer = PMPI_Comm_attach_buffer
int PMPI_Comm_attach_buffer(MPI_Comm comm, void *buffer, int size)
{
    return comm_attach("MPI_Comm_attach_buffer", comm, buffer, size);
}

#pragma weak MPI_Comm_attach_buffer_c = PMPI_Comm_attach_buffer_c
int PMPI_Comm_attach_buffer_c(MPI_Comm comm, void *buffer, MPI_Count size)
{
    return comm_attach("MPI_Comm_attach_buffer_c", comm, buffer, size);
}

static int comm_detach(const char *func, MPI_Comm comm, void *buffer_addr, MPI_Count *size,
                       MPI_Count max)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    return rc != MPI_SUCCESS ? rc : detach(func, c, NULL, buffer_addr, size, max);
}

#pragma weak MPI_Comm_detach_buffer = PMPI_Comm_detach_buffer
int PMPI_Comm_detach_buffer(MPI_Comm comm, void *buffer_addr, int *size)
{
    MPI_Count s = 0;
    return detach_int(
        comm_detach("MPI_Comm_detach_buffer", comm, buffer_addr, size != NULL ? &s : NULL, INT_MAX),
        &s, size);
}

#pragma weak MPI_Comm_detach_buffer_c = PMPI_Comm_detach_buffer_c
int PMPI_Comm_detach_buffer_c(MPI_Comm comm, void *buffer_addr, MPI_Count *size)
{
    return comm_detach("MPI_Comm_detach_buffer_c", comm, buffer_addr, size, INT64_MAX);
}

static int session_attach(const char *func, MPI_Session session, void *buffer, MPI_Count size)
{
    mf_session_t *s = NULL;
    int rc = mf_check_session(func, session, &s);
    return rc != MPI_SUCCESS ? rc : attach(func, NULL, s, buffer, size);
}

#pragma weak MPI_Session_attach_buffer = PMPI_Session_attach_buffer
int PMPI_Session_attach_buffer(MPI_Session session, void *buffer, int size)
{
    return session_attach("MPI_Session_attach_buffer", session, buffer, size);
}

#pragma weak MPI_Session_attach_buffer_c = PMPI_Session_attach_buffer_c
int PMPI_Session_attach_buffer_c(MPI_Session session, void *buffer, MPI_Count size)
{
    return session_attach("MPI_Session_attach_buffer_c", session, buffer, size);
}

static int session_detach(const char *func, MPI_Session session, void *buffer_addr, MPI_Count *size,
                          MPI_Count max)
{
    mf_session_t *s = NULL;
    int rc = mf_check_session(func, session, &s);
    return rc != MPI_SUCCESS ? rc : detach(func, NULL, s, buffer_addr, size, max);
}

#pragma weak MPI_Session_detach_buffer = PMPI_Session_detach_buffer
int PMPI_Session_detach_buffer(MPI_Session session, void *buffer_addr, int *size)
{
    MPI_Count s = 0;
    return detach_int(session_detach("MPI_Session_detach_buffer", session, buffer_addr,
                                     size != NULL ? &s : NULL, INT_MAX),
                      &s, size);
}

#pragma weak MPI_Session_detach_buffer_c = PMPI_Session_detach_buffer_c
int PMPI_Session_detach_buffer_c(MPI_Session session, void *buffer_addr, MPI_Count *size)
{
    return session_detach("MPI_Session_detach_buffer_c", session, buffer_addr, size, INT64_MAX);
}

/* ---- flushes: every buffered send of the buffer has left (MPI-4.1 section 3.6.1) ---------- */

static void iflush_poll(mf_request_t *req)
{
    if (mf_bsend_pool_idle(mf_greq_arg(req)))
        atomic_store_explicit(&req->op.done, 1, memory_order_release);
}

/* A communicator's buffer goes with the communicator, which MPI_Comm_free may release while
 * the flush is pending: the request holds the communicator and reads its buffer when it
 * polls. */
static void iflush_poll_comm(mf_request_t *req)
{
    mf_comm_t *c = mf_greq_arg(req);
    mf_bsend_pool_t *pool = atomic_load_explicit(&c->bsend_pool, memory_order_acquire);
    if (pool == NULL || mf_bsend_pool_idle(pool))
        atomic_store_explicit(&req->op.done, 1, memory_order_release);
}

/* A session's buffer goes at MPI_Session_finalize: the request reads it through the session at
 * each poll, so one left pending across the finalize (an erroneous program) completes instead
 * of reading the freed buffer. */
static void iflush_poll_session(mf_request_t *req)
{
    mf_session_t *s = mf_greq_arg(req);
    mf_bsend_pool_t *pool = s->kind == MF_KIND_SESSION
                                ? atomic_load_explicit(&s->bsend_pool, memory_order_acquire)
                                : NULL;
    if (pool == NULL || mf_bsend_pool_idle(pool))
        atomic_store_explicit(&req->op.done, 1, memory_order_release);
}

static int iflush_release_comm(void *arg)
{
    mf_comm_release(arg);
    return MPI_SUCCESS;
}

/* The buffer of communicator c, or else of session s, or else `pool`; NULL: nothing attached
 * there, so nothing to wait for. */
static int flush(const char *func, mf_comm_t *c, mf_session_t *s, mf_bsend_pool_t *pool,
                 MPI_Request *request)
{
    if (c != NULL)
        pool = atomic_load_explicit(&c->bsend_pool, memory_order_acquire);
    else if (s != NULL)
        pool = atomic_load_explicit(&s->bsend_pool, memory_order_acquire);
    if (request == NULL) {
        if (pool != NULL)
            mf_bsend_pool_flush(pool);
        return MPI_SUCCESS;
    }
    static mf_bsend_pool_t none = {.lock = PTHREAD_MUTEX_INITIALIZER};
    mf_request_t *req = NULL;
    mf_status_t status;
    if (c != NULL) {
        mf_comm_hold(c);
        status = mf_greq_start_polled(iflush_poll_comm, iflush_release_comm, c, &req);
        if (status != MF_OK)
            mf_comm_release(c);
    } else if (s != NULL) {
        status = mf_greq_start_polled(iflush_poll_session, NULL, s, &req);
    } else {
        status = mf_greq_start_polled(iflush_poll, NULL, pool != NULL ? pool : &none, &req);
    }
    if (status != MF_OK)
        return raise_on(c, s, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *request = req;
    return MPI_SUCCESS;
}

static int process_flush(const char *func, MPI_Request *request, int nonblocking)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS && nonblocking)
        rc = mf_check_ptr(func, NULL, request, "request");
    return rc != MPI_SUCCESS ? rc : flush(func, NULL, NULL, mf_bsend_pool_process(), request);
}

#pragma weak MPI_Buffer_flush = PMPI_Buffer_flush
int PMPI_Buffer_flush(void)
{
    return process_flush("MPI_Buffer_flush", NULL, 0);
}

#pragma weak MPI_Buffer_iflush = PMPI_Buffer_iflush
int PMPI_Buffer_iflush(MPI_Request *request)
{
    return process_flush("MPI_Buffer_iflush", request, 1);
}

static int comm_flush(const char *func, MPI_Comm comm, MPI_Request *request, int nonblocking)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS && nonblocking)
        rc = mf_check_ptr(func, c, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    return flush(func, c, NULL, NULL, request);
}

#pragma weak MPI_Comm_flush_buffer = PMPI_Comm_flush_buffer
int PMPI_Comm_flush_buffer(MPI_Comm comm)
{
    return comm_flush("MPI_Comm_flush_buffer", comm, NULL, 0);
}

#pragma weak MPI_Comm_iflush_buffer = PMPI_Comm_iflush_buffer
int PMPI_Comm_iflush_buffer(MPI_Comm comm, MPI_Request *request)
{
    return comm_flush("MPI_Comm_iflush_buffer", comm, request, 1);
}

static int session_flush(const char *func, MPI_Session session, MPI_Request *request,
                         int nonblocking)
{
    mf_session_t *s = NULL;
    int rc = mf_check_session(func, session, &s);
    if (rc == MPI_SUCCESS && nonblocking && request == NULL)
        rc = mf_err_raise_session(s, mf_err_code(MPI_ERR_ARG, func, "argument request is NULL"));
    if (rc != MPI_SUCCESS)
        return rc;
    return flush(func, NULL, s, NULL, request);
}

#pragma weak MPI_Session_flush_buffer = PMPI_Session_flush_buffer
int PMPI_Session_flush_buffer(MPI_Session session)
{
    return session_flush("MPI_Session_flush_buffer", session, NULL, 0);
}

#pragma weak MPI_Session_iflush_buffer = PMPI_Session_iflush_buffer
int PMPI_Session_iflush_buffer(MPI_Session session, MPI_Request *request)
{
    return session_flush("MPI_Session_iflush_buffer", session, request, 1);
}
