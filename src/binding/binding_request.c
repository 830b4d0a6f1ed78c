/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: request completion (Wait/Test and their any/all/some forms, Request_get_status),
 * Start/Startall, Request_free, Cancel, and the status queries (Get_count, Get_elements, the
 * Status_set/get functions).
 */
#include "binding.h"

#include "coll.h"
#include "pt2pt.h"
#include "part.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Inactive: MPI_REQUEST_NULL or a persistent request that was not started. */
static int req_inactive(MPI_Request r)
{
    return r == MPI_REQUEST_NULL || (r->persistent && !r->active);
}

/* (A request MPI_Request_free let go of in flight has another kind: not valid here.) */
static int request_valid(MPI_Request r)
{
    return r == MPI_REQUEST_NULL || mf_request_get(r) != NULL;
}

static int check_request(const char *func, MPI_Request r, const char *arg)
{
    if (request_valid(r))
        return MPI_SUCCESS;
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_REQUEST, func,
                                          "argument %s is not a valid request (freed or never "
                                          "created)",
                                          arg));
}

static int check_requests(const char *func, int count, MPI_Request reqs[])
{
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0) /* the *some calls name it incount */
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_COUNT, func, "argument %s=%d is negative",
                                        strstr(func, "some") != NULL ? "incount" : "count", count));
    if (count > 0 && reqs == NULL)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_REQUEST, func, "argument array_of_requests is NULL"));
    for (int i = 0; i < count; i++) {
        if (MF_LIKELY(request_valid(reqs[i])))
            continue;
        char arg[40];
        snprintf(arg, sizeof(arg), "array_of_requests[%d]", i);
        return check_request(func, reqs[i], arg);
    }
    return MPI_SUCCESS;
}

/* Complete the failed request *rp (done), fill status, and raise its error with the reason. */
static __attribute__((noinline)) int complete_failed(const char *func, MPI_Request *rp,
                                                     MPI_Status *status)
{
    MPI_Request r = *rp;
    /* Completing may destroy a communicator the user freed meanwhile: hold it to raise on. */
    mf_comm_t *comm = mf_request_hold_failing_comm(r);
    char why[160];
    mf_binding_failure_reason(r, "the request's operation failed", why, sizeof(why));
    int err = mf_request_complete(rp, status);
    int rc = MPI_SUCCESS; /* cancelled, or a generalized request whose query succeeded */
    if (err != MPI_SUCCESS)
        rc = mf_err_raise(comm, mf_err_code(err, func, "%s", why));
    if (comm != NULL)
        mf_comm_release(comm);
    return rc;
}

/* An error the completion itself gave, with no failed operation: a generalized request's,
 * whose communicator is MPI_COMM_SELF (the request is gone by now). */
static int raise_request_error(const char *func, int err)
{
    return mf_err_raise(&mf_comm_self,
                        mf_err_code(err, func,
                                    "the generalized request's query_fn or free_fn returned "
                                    "this error"));
}

/* The status of a complete request that stays as it is (MPI_Request_get_status and _any): the
 * error of its operation is returned as MPI_Test would (after a generalized request's
 * query_fn, whose result it is). */
static int peek_status(const char *func, MPI_Request r, MPI_Status *status)
{
    mf_request_fill_status(r, status);
    int err = mf_request_error(r);
    if (MF_LIKELY(err == MPI_SUCCESS))
        return MPI_SUCCESS;
    char why[160];
    mf_binding_failure_reason(r, "the request's operation failed", why, sizeof(why));
    return mf_err_raise(r->comm, mf_err_code(err, func, "%s", why));
}

/* Complete request *rp (known to be done), fill status, free it. Returns the error class. */
static int complete_one(MPI_Request *rp, MPI_Status *status)
{
    if (req_inactive(*rp)) {
        mf_status_set_empty(status);
        return MPI_SUCCESS;
    }
    return mf_request_complete(rp, status);
}

static __attribute__((noinline)) int wait_checked(MPI_Request *request, MPI_Status *status)
{
    static const char func[] = "MPI_Wait";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, request, "request");
    if (rc == MPI_SUCCESS)
        rc = check_request(func, *request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Request r = *request;
    if (!req_inactive(r)) {
        mf_request_wait_done(r);
        if (MF_UNLIKELY(r->op.status != MF_OK))
            return complete_failed(func, request, status);
    }
    int err = complete_one(request, status);
    return err == MPI_SUCCESS ? MPI_SUCCESS : raise_request_error(func, err);
}

/* A valid request with an operation to complete (not MPI_REQUEST_NULL, not an inactive
 * persistent one), once the library is ready: MPI_Wait's common case. */
static inline int is_live(MPI_Request r)
{
    return r != MPI_REQUEST_NULL && mf_handle_is_object(r) && r->kind == MF_KIND_REQUEST &&
           !(r->persistent && !r->active) &&
           atomic_load_explicit(&mf_global.state, memory_order_acquire) == MF_STATE_READY;
}

/* MPI_Wait on anything but a send that finished inside its call. */
static __attribute__((noinline)) int wait_live(MPI_Request *request, MPI_Status *status)
{
    MPI_Request r;
    if (MF_UNLIKELY(request == NULL || !is_live(r = *request)))
        return wait_checked(request, status);
    mf_request_wait_done(r);
    if (MF_UNLIKELY(r->op.status != MF_OK))
        return complete_failed("MPI_Wait", request, status);
    int err = mf_request_complete(request, status);
    return MF_LIKELY(err == MPI_SUCCESS) ? MPI_SUCCESS : raise_request_error("MPI_Wait", err);
}

#pragma weak MPI_Wait = PMPI_Wait
int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MPI_Request r;
    /* A send that finished inside MPI_Isend (the shared completed request, never persistent):
     * only the handle to reset. Everything else, checks included, is out of line, so this
     * path saves no registers. */
    if (MF_LIKELY(request != NULL && mf_handle_is_object(r = *request) &&
                  r->kind == MF_KIND_REQUEST && r->type == MF_REQ_PRECOMPLETE &&
                  atomic_load_explicit(&mf_global.state, memory_order_acquire) == MF_STATE_READY)) {
        if (status != MPI_STATUS_IGNORE)
            mf_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, status->MPI_ERROR, 0, 0);
        *request = MPI_REQUEST_NULL;
        return MPI_SUCCESS;
    }
    return wait_live(request, status);
}

#pragma weak MPI_Test = PMPI_Test
int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    static const char func[] = "MPI_Test";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS && (request == NULL || flag == NULL))
        rc = mf_check_ptr(func, NULL, NULL, "request or flag");
    if (rc == MPI_SUCCESS)
        rc = check_request(func, *request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Request r = *request;
    if (!req_inactive(r) && !mf_request_is_complete(r)) {
        mf_progress_test(r->vci);
        if (!mf_request_is_complete(r)) {
            *flag = 0;
            return MPI_SUCCESS;
        }
    }
    *flag = 1;
    if (!req_inactive(r) && MF_UNLIKELY(r->op.status != MF_OK))
        return complete_failed(func, request, status);
    int err = complete_one(request, status);
    return err == MPI_SUCCESS ? MPI_SUCCESS : raise_request_error(func, err);
}

#pragma weak MPI_Request_get_status = PMPI_Request_get_status
int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    static const char func[] = "MPI_Request_get_status";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, flag, "flag");
    if (rc == MPI_SUCCESS)
        rc = check_request(func, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    if (req_inactive(request)) {
        *flag = 1;
        mf_status_set_empty(status);
        return MPI_SUCCESS;
    }
    if (!mf_request_is_complete(request))
        mf_progress_test(request->vci);
    *flag = mf_request_is_complete(request);
    return *flag ? peek_status(func, request, status) : MPI_SUCCESS;
}

/* One pass over the array: index of a completed active request, or -1; *nactive_p counts the
 * active ones. */
static int find_done(int count, MPI_Request reqs[], int *nactive_p)
{
    int nactive = 0;
    mf_request_pass_begin();
    for (int i = 0; i < count; i++) {
        if (req_inactive(reqs[i]))
            continue;
        nactive++;
        if (mf_request_is_complete(reqs[i])) {
            mf_request_pass_end();
            *nactive_p = nactive;
            return i;
        }
    }
    mf_request_pass_end();
    *nactive_p = nactive;
    return -1;
}

/* Progress the VCIs of the active requests in the array (each once per call). */
static void progress_requests(int count, MPI_Request reqs[], int *polls)
{
    mf_vci_t *last = NULL;
    for (int i = 0; i < count; i++) {
        if (req_inactive(reqs[i]) || reqs[i]->vci == last)
            continue;
        last = reqs[i]->vci;
        mf_progress_poke(last, polls);
    }
}

/* MPI_Request_get_status_any/all/some (MPI-4.1): what MPI_Testany/all/some report, with every
 * request left as it is (neither freed nor made inactive), as MPI_Request_get_status does for
 * one. */
static int get_status_checks(const char *func, int count, const MPI_Request reqs[],
                             const void *out1, const void *out2, const char *names[2])
{
    int rc = check_requests(func, count, (MPI_Request *)reqs);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, out1, names[0]);
    if (rc == MPI_SUCCESS && count > 0)
        rc = mf_check_ptr(func, NULL, out2, names[1]);
    return rc;
}

/* Whether every active request of the array is complete. */
static int all_complete(int count, const MPI_Request reqs[])
{
    int done = 1;
    mf_request_pass_begin();
    for (int i = 0; i < count && done; i++)
        done = req_inactive(reqs[i]) || mf_request_is_complete(reqs[i]);
    mf_request_pass_end();
    return done;
}

/* Progress the VCIs of the array once when one of its active requests is not complete yet;
 * returns the number of active requests. */
static int progress_unfinished(int count, const MPI_Request reqs[])
{
    int nactive = 0, pending = 0;
    mf_request_pass_begin();
    for (int i = 0; i < count; i++) {
        if (req_inactive(reqs[i]))
            continue;
        nactive++;
        pending |= !mf_request_is_complete(reqs[i]);
    }
    mf_request_pass_end();
    if (pending)
        progress_requests(count, (MPI_Request *)reqs, mf_progress_test_counter());
    return nactive;
}

#pragma weak MPI_Request_get_status_any = PMPI_Request_get_status_any
int PMPI_Request_get_status_any(int count, const MPI_Request array_of_requests[], int *index,
                                int *flag, MPI_Status *status)
{
    static const char func[] = "MPI_Request_get_status_any";
    int rc = get_status_checks(func, count, array_of_requests, flag, index,
                               (const char *[]){"flag", "index"});
    if (rc == MPI_SUCCESS && index == NULL)
        rc = mf_check_ptr(func, NULL, index, "index");
    if (rc != MPI_SUCCESS)
        return rc;
    *index = MPI_UNDEFINED;
    if (progress_unfinished(count, array_of_requests) == 0) {
        *flag = 1;
        mf_status_set_empty(status);
        return MPI_SUCCESS;
    }
    int nactive, i = find_done(count, (MPI_Request *)array_of_requests, &nactive);
    if (i >= 0) {
        *index = i;
        *flag = 1;
        return peek_status(func, array_of_requests[i], status);
    }
    *flag = 0;
    return MPI_SUCCESS;
}

/* Fill statuses[n] (with MPI_ERROR) for request r; returns its error class. */
static int status_of(MPI_Request r, MPI_Status statuses[], int n)
{
    if (req_inactive(r)) {
        if (statuses != MPI_STATUSES_IGNORE)
            mf_status_set_empty(&statuses[n]);
        return MPI_SUCCESS;
    }
    /* the status first: a generalized request's query_fn, run even when statuses are ignored,
     * decides its error */
    MPI_Status *st = statuses != MPI_STATUSES_IGNORE ? &statuses[n] : MPI_STATUS_IGNORE;
    mf_request_fill_status(r, st);
    int err = mf_request_error(r);
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = err;
    return err;
}

/* A multiple completion with a failed operation: the standard has it return the code
 * MPI_ERR_IN_STATUS itself (MPI-4.1 3.7.5; programs compare with it), not a code of that class
 * carrying a message, so the statuses' MPI_ERROR fields are where the reasons are. */
static int in_status_failed(mf_comm_t *comm)
{
    /* The class itself, as the standard says ("returns MPI_ERR_IN_STATUS") and programs test
     * with ==; the statuses carry the errors. */
    return mf_err_raise(comm, MPI_ERR_IN_STATUS);
}

/* The same on a communicator held since before its request completed; lets it go. */
static int in_status_failed_held(mf_comm_t *comm)
{
    int rc = in_status_failed(comm);
    if (comm != NULL)
        mf_comm_release(comm);
    return rc;
}

#pragma weak MPI_Request_get_status_all = PMPI_Request_get_status_all
int PMPI_Request_get_status_all(int count, const MPI_Request array_of_requests[], int *flag,
                                MPI_Status array_of_statuses[])
{
    static const char func[] = "MPI_Request_get_status_all";
    int rc = get_status_checks(func, count, array_of_requests, flag, flag,
                               (const char *[]){"flag", "flag"});
    if (rc != MPI_SUCCESS)
        return rc;
    progress_unfinished(count, array_of_requests);
    if (!all_complete(count, array_of_requests)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    mf_comm_t *failed = NULL;
    for (int i = 0; i < count; i++)
        if (status_of(array_of_requests[i], array_of_statuses, i) != MPI_SUCCESS && !failed)
            failed = array_of_requests[i]->comm;
    return failed != NULL ? in_status_failed(failed) : MPI_SUCCESS;
}

#pragma weak MPI_Request_get_status_some = PMPI_Request_get_status_some
int PMPI_Request_get_status_some(int incount, const MPI_Request array_of_requests[], int *outcount,
                                 int array_of_indices[], MPI_Status array_of_statuses[])
{
    static const char func[] = "MPI_Request_get_status_some";
    int rc = get_status_checks(func, incount, array_of_requests, outcount, array_of_indices,
                               (const char *[]){"outcount", "array_of_indices"});
    if (rc != MPI_SUCCESS)
        return rc;
    if (progress_unfinished(incount, array_of_requests) == 0) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    int n = 0;
    mf_comm_t *failed = NULL;
    mf_request_pass_begin();
    for (int i = 0; i < incount; i++) {
        MPI_Request r = array_of_requests[i];
        if (req_inactive(r) || !mf_request_is_complete(r))
            continue;
        if (status_of(r, array_of_statuses, n) != MPI_SUCCESS && failed == NULL)
            failed = r->comm;
        array_of_indices[n++] = i;
    }
    mf_request_pass_end();
    *outcount = n;
    return failed != NULL ? in_status_failed(failed) : MPI_SUCCESS;
}

static int any_common(const char *func, int count, MPI_Request reqs[], int *index, int *flag,
                      MPI_Status *status, int blocking)
{
    int rc = check_requests(func, count, reqs);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, index, "index");
    if (rc != MPI_SUCCESS)
        return rc;
    int polls = 0;
    int *counter = blocking ? &polls : mf_progress_test_counter();
    for (;;) {
        int nactive, i = find_done(count, reqs, &nactive);
        if (nactive == 0) {
            *index = MPI_UNDEFINED;
            if (flag != NULL)
                *flag = 1;
            mf_status_set_empty(status);
            return MPI_SUCCESS;
        }
        if (i >= 0) {
            MPI_Request r = reqs[i];
            *index = i;
            if (flag != NULL)
                *flag = 1;
            if (MF_UNLIKELY(r->op.status != MF_OK))
                return complete_failed(func, &reqs[i], status);
            int err = mf_request_complete(&reqs[i], status);
            return err == MPI_SUCCESS ? MPI_SUCCESS : raise_request_error(func, err);
        }
        progress_requests(count, reqs, counter);
        if (!blocking && find_done(count, reqs, &nactive) < 0) {
            *flag = 0;
            *index = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
    }
}

#pragma weak MPI_Waitany = PMPI_Waitany
int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    return any_common("MPI_Waitany", count, array_of_requests, index, NULL, status, 1);
}

#pragma weak MPI_Testany = PMPI_Testany
int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                 MPI_Status *status)
{
    if (flag == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, "MPI_Testany", "argument flag is NULL"));
    return any_common("MPI_Testany", count, array_of_requests, index, flag, status, 0);
}

/* Complete every request of the array (all done or inactive). Fills statuses (MPI_ERROR
 * included) and returns MPI_ERR_IN_STATUS when any operation failed. */
/* A completion's error for element i of the array, as an MPI error code: the request was freed
 * since the call checked its arguments, by an earlier element naming the same request
 * (complete_any in core_request.c), or a generalized request's callback returned a value that
 * is no error code. */
static int element_error(const char *func, int i, int err)
{
    if (err == MF_REQUEST_FREED_EARLIER)
        return mf_err_code(MPI_ERR_REQUEST, func,
                           "array_of_requests[%d] names a request that an earlier element of "
                           "the array already completed and freed (the same request twice)",
                           i);
    if (mf_err_is_code(err))
        return err;
    return mf_err_code(err, func,
                       "array_of_requests[%d]: the generalized request's query_fn or free_fn "
                       "returned an error",
                       i);
}

static int complete_all(const char *func, int count, MPI_Request reqs[], MPI_Status statuses[])
{
    mf_comm_t *failed_comm = NULL;
    if (MF_LIKELY(!mf_request_complete_all(count, reqs, statuses, &failed_comm)))
        return MPI_SUCCESS;
    if (statuses != MPI_STATUSES_IGNORE)
        for (int i = 0; i < count; i++)
            statuses[i].MPI_ERROR = element_error(func, i, statuses[i].MPI_ERROR);
    return in_status_failed_held(failed_comm);
}

#pragma weak MPI_Waitall = PMPI_Waitall
int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    static const char func[] = "MPI_Waitall";
    int rc = check_requests(func, count, array_of_requests);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < count; i++) {
        MPI_Request r = array_of_requests[i];
        /* after the first wait most of a window is usually done: no call for those */
        if (!req_inactive(r) && !mf_request_done_now(r))
            mf_request_wait_done(r);
    }
    return complete_all(func, count, array_of_requests, array_of_statuses);
}

#pragma weak MPI_Testall = PMPI_Testall
int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                 MPI_Status array_of_statuses[])
{
    static const char func[] = "MPI_Testall";
    int rc = check_requests(func, count, array_of_requests);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    progress_requests(count, array_of_requests, mf_progress_test_counter());
    if (!all_complete(count, array_of_requests)) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    return complete_all(func, count, array_of_requests, array_of_statuses);
}

static int some_common(const char *func, int incount, MPI_Request reqs[], int *outcount,
                       int indices[], MPI_Status statuses[], int blocking)
{
    int rc = check_requests(func, incount, reqs);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, outcount, "outcount");
    if (rc == MPI_SUCCESS && incount > 0)
        rc = mf_check_ptr(func, NULL, indices, "array_of_indices");
    if (rc != MPI_SUCCESS)
        return rc;
    int polls = 0;
    for (;;) {
        int nactive, n = 0, failed = 0;
        mf_comm_t *failed_comm = NULL;
        find_done(incount, reqs, &nactive);
        if (nactive == 0) {
            *outcount = MPI_UNDEFINED;
            return MPI_SUCCESS;
        }
        mf_request_pass_begin();
        for (int i = 0; i < incount; i++) {
            MPI_Request r = reqs[i];
            if (req_inactive(r) || !mf_request_is_complete(r))
                continue;
            MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
            mf_comm_t *comm = mf_request_get(r) ? r->comm : NULL; /* r is released below */
            mf_comm_t *held = mf_request_hold_failing_comm(r);
            int err = element_error(func, i, mf_request_complete(&reqs[i], st));
            if (st != MPI_STATUS_IGNORE)
                st->MPI_ERROR = err;
            mf_request_note_failure(err, comm, held, &failed, &failed_comm);
            indices[n++] = i;
        }
        mf_request_pass_end();
        if (n > 0 || !blocking) {
            *outcount = n;
            if (failed)
                return in_status_failed_held(failed_comm);
            if (n == 0)
                progress_requests(incount, reqs, mf_progress_test_counter());
            return MPI_SUCCESS;
        }
        progress_requests(incount, reqs, &polls);
    }
}

#pragma weak MPI_Waitsome = PMPI_Waitsome
int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[])
{
    return some_common("MPI_Waitsome", incount, array_of_requests, outcount, array_of_indices,
                       array_of_statuses, 1);
}

#pragma weak MPI_Testsome = PMPI_Testsome
int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[])
{
    return some_common("MPI_Testsome", incount, array_of_requests, outcount, array_of_indices,
                       array_of_statuses, 0);
}

/* ---- start, free, cancel ----------------------------------------------------------------- */

/* A request MPI_Start may take: persistent and inactive. `arg` names it in the message. */
static int start_check(const char *func, MPI_Request r, const char *arg)
{
    if (r == MPI_REQUEST_NULL || mf_request_get(r) == NULL || !r->persistent)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_REQUEST, func,
                                              "argument %s is not a persistent request", arg));
    if (r->active)
        return mf_err_raise(
            r->comm, mf_err_code(MPI_ERR_REQUEST, func, "argument %s is already active", arg));
    /* A wildcard receive made before MPI_Comm_set_info asserted that none is used: posted on
     * a spread communicator it would wait on a VCI no sender uses, so it is refused as
     * MPI_Irecv would be now. */
    if (r->type == MF_REQ_RECV && !mf_part_is_part(r)) {
        unsigned hints = r->comm->hints | r->comm->spread_by;
        if (r->peer == MPI_ANY_SOURCE && (hints & MF_HINT_NO_ANY_SOURCE))
            return mf_err_raise(r->comm, mf_err_code(MPI_ERR_RANK, func,
                                                     "argument %s receives from MPI_ANY_SOURCE, "
                                                     "but the communicator now asserts "
                                                     "mpi_assert_no_any_source",
                                                     arg));
        if (r->tag == MPI_ANY_TAG && (hints & MF_HINT_NO_ANY_TAG))
            return mf_err_raise(r->comm, mf_err_code(MPI_ERR_TAG, func,
                                                     "argument %s receives with MPI_ANY_TAG, but "
                                                     "the communicator now asserts "
                                                     "mpi_assert_no_any_tag",
                                                     arg));
    }
    return MPI_SUCCESS;
}

static int start_one(const char *func, MPI_Request r, const char *arg)
{
    mf_status_t st = mf_part_is_part(r)       ? mf_part_start(r)
                     : r->type == MF_REQ_COLL ? mf_sched_start(r)
                                              : mf_pt2pt_start(r);
    if (st == MF_OK)
        return MPI_SUCCESS;
    if (r->type == MF_REQ_SEND && r->mode == MF_SEND_BUFFERED && st == MF_ERR_NOT_FOUND)
        return mf_err_raise(r->comm,
                            mf_err_code(MPI_ERR_BUFFER, func,
                                        "%s: no buffer is attached for the buffered send", arg));
    if (r->type == MF_REQ_SEND && r->mode == MF_SEND_BUFFERED && st == MF_ERR_NO_SPACE)
        return mf_err_raise(r->comm, mf_err_code(MPI_ERR_BUFFER, func,
                                                 "%s: the attached buffer has no room for %zu "
                                                 "bytes (plus MPI_BSEND_OVERHEAD)",
                                                 arg, r->buf_len));
    if (r->type == MF_REQ_SEND && r->mode == MF_SEND_BUFFERED && st == MF_ERR_NO_MEMORY)
        return mf_err_raise(r->comm, mf_err_code(MPI_ERR_NO_MEM, func,
                                                 "%s: cannot allocate memory for a copy of the "
                                                 "%zu bytes to send",
                                                 arg, r->buf_len));
    return mf_err_from_status(r->comm, st, func, "cannot start the operation");
}

#pragma weak MPI_Start = PMPI_Start
int PMPI_Start(MPI_Request *request)
{
    int rc = mf_check_initialized("MPI_Start");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr("MPI_Start", NULL, request, "request");
    if (rc == MPI_SUCCESS)
        rc = start_check("MPI_Start", *request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    return start_one("MPI_Start", *request, "request");
}

/* Every element is checked before any starts, so a refused call starts nothing; a start that
 * fails (a buffered send without room) leaves the elements before it started, as its message
 * says. */
#pragma weak MPI_Startall = PMPI_Startall
int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
    static const char func[] = "MPI_Startall";
    char arg[64];
    int rc = check_requests(func, count, array_of_requests);
    for (int i = 0; rc == MPI_SUCCESS && i < count; i++) {
        snprintf(arg, sizeof(arg), "array_of_requests[%d]", i);
        rc = start_check(func, array_of_requests[i], arg);
    }
    for (int i = 0; rc == MPI_SUCCESS && i < count; i++) {
        snprintf(arg, sizeof(arg), "array_of_requests[%d] (those before it were started)", i);
        const char *name = i > 0 ? arg : "array_of_requests[0]";
        rc = start_check(func, array_of_requests[i], name); /* twice in the array */
        if (rc == MPI_SUCCESS)
            rc = start_one(func, array_of_requests[i], name);
    }
    return rc;
}

#pragma weak MPI_Request_free = PMPI_Request_free
int PMPI_Request_free(MPI_Request *request)
{
    static const char func[] = "MPI_Request_free";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    if (*request == MPI_REQUEST_NULL || mf_request_get(*request) == NULL)
        return mf_err_raise(
            NULL,
            mf_err_code(MPI_ERR_REQUEST, func, "argument request is %s",
                        *request == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL" : "not a valid request"));
    if ((*request)->type == MF_REQ_COLL && !req_inactive(*request) &&
        !mf_request_is_complete(*request))
        /* The schedule still refers to the user's buffers and must run to its end: a collective
         * request is freed once completed (or, persistent, while inactive). */
        return mf_err_raise((*request)->comm,
                            mf_err_code(MPI_ERR_REQUEST, func,
                                        "argument request is an active collective operation; "
                                        "complete it before freeing it"));
    if ((*request)->type == MF_REQ_GREQ) {
        MPI_Request r = *request;
        *request = MPI_REQUEST_NULL;
        int err = mf_greq_free(r); /* free_fn's error, when it ran now */
        return err == MPI_SUCCESS
                   ? MPI_SUCCESS
                   : mf_err_callback(NULL, func, "the generalized request's free_fn", err);
    }
    if (mf_part_is_part(*request)) {
        /* Partitioned requests may only be freed while inactive (MPI-4.0 section 4.2). */
        if ((*request)->active)
            return mf_err_raise((*request)->comm,
                                mf_err_code(MPI_ERR_REQUEST, func,
                                            "argument request is an active partitioned request; "
                                            "complete it with MPI_Wait or MPI_Test first"));
        mf_part_free(*request);
    } else {
        mf_pt2pt_request_free(*request);
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Cancel = PMPI_Cancel
int PMPI_Cancel(MPI_Request *request)
{
    static const char func[] = "MPI_Cancel";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    if (*request == MPI_REQUEST_NULL)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_REQUEST, func, "argument request is MPI_REQUEST_NULL"));
    if (mf_request_get(*request) == NULL)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_REQUEST, func, "argument request is not a valid request"));
    if ((*request)->type == MF_REQ_COLL)
        return mf_err_raise((*request)->comm,
                            mf_err_code(MPI_ERR_REQUEST, func,
                                        "argument request is a collective operation, which "
                                        "cannot be cancelled"));
    if ((*request)->type == MF_REQ_GREQ) {
        int err = mf_greq_cancel(*request); /* the user's cancel_fn decides */
        return err == MPI_SUCCESS
                   ? MPI_SUCCESS
                   : mf_err_callback(NULL, func, "the generalized request's cancel_fn", err);
    }
    if (mf_part_is_part(*request) && !req_inactive(*request))
        return mf_err_raise((*request)->comm,
                            mf_err_code(MPI_ERR_REQUEST, func,
                                        "argument request is an active partitioned request, "
                                        "which cannot be cancelled (MPI-4.1 section 4.2.2)"));
    if (!req_inactive(*request))
        mf_pt2pt_cancel(*request);
    return MPI_SUCCESS;
}

#pragma weak MPI_Test_cancelled = PMPI_Test_cancelled
int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    if (status == NULL || flag == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, "MPI_Test_cancelled",
                                              "argument status or flag is NULL"));
    *flag = mf_status_cancelled(status);
    return MPI_SUCCESS;
}

/* ---- status queries ---------------------------------------------------------------------- */

static int count_common(const char *func, const MPI_Status *status, MPI_Datatype datatype,
                        int elements, MPI_Count *count)
{
    if (status == NULL || count == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL",
                                              status == NULL ? "status" : "count"));
    /* a derived type need not be committed: its size and tree are known from construction, and
     * commit is for communication (MPI-5.0 section 5.1.9) */
    size_t unused;
    int rc = mf_dtype_get(datatype) != NULL
                 ? MPI_SUCCESS
                 : mf_check_datatype(func, NULL, "datatype", datatype, 0, &unused);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dtype_props_t p = {0};
    mf_dtype_props(datatype, &p);
    MPI_Count bytes = mf_status_bytes(status);
    if (elements) {
        /* Basic elements, also of a partly filled item; pair types count their first half. */
        MPI_Count e = mf_dtype_elements(datatype, bytes);
        *count = e < 0 ? MPI_UNDEFINED : e;
        return MPI_SUCCESS;
    }
    if (p.psize == 0)
        *count = 0; /* MPI-5.0 3.2.5: a type of size zero gives a count of zero */
    else
        *count = bytes % p.psize == 0 ? bytes / p.psize : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int count_to_int(MPI_Count c, int *out)
{
    *out = c > 0x7fffffff ? MPI_UNDEFINED : (int)c;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_count = PMPI_Get_count
int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count c = 0;
    int rc = count_common("MPI_Get_count", status, datatype, 0, count != NULL ? &c : NULL);
    return rc == MPI_SUCCESS ? count_to_int(c, count) : rc;
}

#pragma weak MPI_Get_count_c = PMPI_Get_count_c
int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return count_common("MPI_Get_count_c", status, datatype, 0, count);
}

#pragma weak MPI_Get_elements = PMPI_Get_elements
int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    MPI_Count c = 0;
    int rc = count_common("MPI_Get_elements", status, datatype, 1, count != NULL ? &c : NULL);
    return rc == MPI_SUCCESS ? count_to_int(c, count) : rc;
}

#pragma weak MPI_Get_elements_c = PMPI_Get_elements_c
int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return count_common("MPI_Get_elements_c", status, datatype, 1, count);
}

/* The MPI-3 `_x` forms: MPI_Count results, the same as the `_c` forms. */
#pragma weak MPI_Get_elements_x = PMPI_Get_elements_x
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    return count_common("MPI_Get_elements_x", status, datatype, 1, count);
}

static int set_elements_common(const char *func, MPI_Status *status, MPI_Datatype datatype,
                               MPI_Count count)
{
    if (status == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument status is NULL"));
    size_t unused;
    int rc = mf_check_count(func, NULL, "count", count);
    /* count is in basic elements, not in items of the type: only the type is checked here */
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, NULL, "datatype", datatype, 0, &unused);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dtype_props_t p = {0};
    mf_dtype_props(datatype, &p);
    /* the status keeps a byte count (an MPI_Count), which the elements' bytes must fit: whole
     * items, and less than one more for the elements of a partial one */
    MPI_Count items = p.nelems > 0 ? count / p.nelems : 0;
    if (p.nelems > 0 && p.psize > 0 &&
        (items > INT64_MAX / p.psize ||
         (count % p.nelems != 0 && items * p.psize > INT64_MAX - p.psize)))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_COUNT, func,
                                              "argument count=%lld elements of the datatype are "
                                              "more bytes than an MPI_Count holds",
                                              (long long)count));
    MPI_Count b = mf_dtype_bytes_of_elements(datatype, count);
    mf_status_set(status, status->MPI_SOURCE, status->MPI_TAG, status->MPI_ERROR, b < 0 ? 0 : b,
                  mf_status_cancelled(status));
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_set_elements = PMPI_Status_set_elements
int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements_common("MPI_Status_set_elements", status, datatype, count);
}

#pragma weak MPI_Status_set_elements_c = PMPI_Status_set_elements_c
int PMPI_Status_set_elements_c(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements_common("MPI_Status_set_elements_c", status, datatype, count);
}

#pragma weak MPI_Status_set_elements_x = PMPI_Status_set_elements_x
int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements_common("MPI_Status_set_elements_x", status, datatype, count);
}

#pragma weak MPI_Status_set_cancelled = PMPI_Status_set_cancelled
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    if (status == NULL)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_ARG, "MPI_Status_set_cancelled", "argument status is NULL"));
    status->MPI_internal[2] = flag != 0;
    return MPI_SUCCESS;
}

/* The public fields of a status (MPI-4.1), for languages that cannot reach them directly. Like
 * the other status functions they work before MPI_Init and after MPI_Finalize. */
static int status_field(const char *func, const MPI_Status *status, const void *out,
                        const char *out_arg)
{
    if (status == NULL || status == MPI_STATUS_IGNORE)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument status is NULL"));
    if (out == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL", out_arg));
    return MPI_SUCCESS;
}

#pragma weak MPI_Status_get_source = PMPI_Status_get_source
int PMPI_Status_get_source(const MPI_Status *status, int *source)
{
    int rc = status_field("MPI_Status_get_source", status, source, "source");
    if (rc == MPI_SUCCESS)
        *source = status->MPI_SOURCE;
    return rc;
}

#pragma weak MPI_Status_get_tag = PMPI_Status_get_tag
int PMPI_Status_get_tag(const MPI_Status *status, int *tag)
{
    int rc = status_field("MPI_Status_get_tag", status, tag, "tag");
    if (rc == MPI_SUCCESS)
        *tag = status->MPI_TAG;
    return rc;
}

#pragma weak MPI_Status_get_error = PMPI_Status_get_error
int PMPI_Status_get_error(const MPI_Status *status, int *err)
{
    int rc = status_field("MPI_Status_get_error", status, err, "err");
    if (rc == MPI_SUCCESS)
        *err = status->MPI_ERROR;
    return rc;
}

#pragma weak MPI_Status_set_source = PMPI_Status_set_source
int PMPI_Status_set_source(MPI_Status *status, int source)
{
    int rc = status_field("MPI_Status_set_source", status, status, "status");
    if (rc == MPI_SUCCESS)
        status->MPI_SOURCE = source;
    return rc;
}

#pragma weak MPI_Status_set_tag = PMPI_Status_set_tag
int PMPI_Status_set_tag(MPI_Status *status, int tag)
{
    int rc = status_field("MPI_Status_set_tag", status, status, "status");
    if (rc == MPI_SUCCESS)
        status->MPI_TAG = tag;
    return rc;
}

#pragma weak MPI_Status_set_error = PMPI_Status_set_error
int PMPI_Status_set_error(MPI_Status *status, int err)
{
    int rc = status_field("MPI_Status_set_error", status, status, "status");
    if (rc == MPI_SUCCESS)
        status->MPI_ERROR = err;
    return rc;
}
