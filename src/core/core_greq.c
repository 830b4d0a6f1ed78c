/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generalized requests (MPI_Grequest_start/complete): a request whose operation the user runs
 * and declares finished. It lives in the request cache of MPI_COMM_SELF's VCI like any other
 * request, so Wait/Test and their array forms treat it as one more kind; the user's callbacks
 * hang on `part` and `poll` is set (a no-op) so releasing it clears that cold part.
 */
#include "core.h"

#include <stdlib.h>

typedef struct greq {
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra_state;
    int error; /* what query_fn returned last */
} greq_t;

static void greq_poll(mf_request_t *req)
{
    (void)req; /* the user completes it: nothing to drive */
}

mf_status_t mf_greq_start(MPI_Grequest_query_function *query_fn,
                          MPI_Grequest_free_function *free_fn,
                          MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                          mf_request_t **req_p)
{
    greq_t *g = malloc(sizeof(*g));
    if (g == NULL)
        return MF_ERR_NO_MEMORY;
    *g = (greq_t){query_fn, free_fn, cancel_fn, extra_state, MPI_SUCCESS};
    mf_vci_t *vci = mf_comm_self.vci;
    mf_vci_lock(vci);
    mf_request_t *req = mf_request_alloc_locked(vci, MF_REQ_GREQ, &mf_comm_self);
    if (req != NULL) {
        req->part = g;
        req->poll = greq_poll;
    }
    mf_vci_unlock(vci);
    if (req == NULL) {
        free(g);
        return MF_ERR_NO_MEMORY;
    }
    *req_p = req;
    return MF_OK;
}

mf_status_t mf_greq_start_polled(void (*poll)(mf_request_t *req),
                                 MPI_Grequest_free_function *release, void *arg,
                                 mf_request_t **req_p)
{
    mf_status_t status = mf_greq_start(NULL, release, NULL, arg, req_p);
    if (status == MF_OK)
        (*req_p)->poll = poll;
    return status;
}

void *mf_greq_arg(const mf_request_t *req)
{
    return ((const greq_t *)req->part)->extra_state;
}

/* free_fn, then the request back to its cache. No lock held: callbacks may call MPI. */
static int greq_release(mf_request_t *req)
{
    greq_t *g = req->part;
    int err = g->free_fn != NULL ? g->free_fn(g->extra_state) : MPI_SUCCESS;
    free(g);
    req->part = NULL;
    mf_vci_t *vci = req->vci;
    mf_vci_lock(vci);
    mf_request_release_locked(req);
    mf_vci_unlock(vci);
    return err;
}

void mf_greq_complete(mf_request_t *req)
{
    mf_vci_t *vci = req->vci;
    mf_vci_lock(vci);
    atomic_store_explicit(&req->op.done, 1, memory_order_release);
    int freed = req->user_freed;
    mf_vci_unlock(vci);
    /* MPI_Request_free came first: the request goes now (MPI-4.1 section 13.2). */
    if (freed)
        greq_release(req);
}

int mf_greq_query(mf_request_t *req, MPI_Status *status)
{
    greq_t *g = req->part;
    MPI_Status local = {0};
    if (status == MPI_STATUS_IGNORE)
        status = &local;
    /* What the query leaves unset reads as an empty status. */
    int keep = status->MPI_ERROR;
    mf_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, keep, 0, 0);
    g->error = g->query_fn != NULL ? g->query_fn(g->extra_state, status) : MPI_SUCCESS;
    status->MPI_ERROR = keep;
    return g->error;
}

int mf_greq_error(const mf_request_t *req)
{
    return ((const greq_t *)req->part)->error;
}

int mf_greq_finish(mf_request_t *req, int err)
{
    int free_err = greq_release(req);
    return err != MPI_SUCCESS ? err : free_err;
}

int mf_greq_free(mf_request_t *req)
{
    /* The library's own polled requests only watch work that goes on without them: they go
     * at once, done or not (nothing else would release them). */
    if (req->poll != greq_poll)
        return greq_release(req);
    mf_vci_t *vci = req->vci;
    mf_vci_lock(vci);
    int done = mf_vci_op_is_done(&req->op);
    if (!done) { /* released by MPI_Grequest_complete */
        req->user_freed = 1;
        req->kind = MF_KIND_REQUEST_ORPHAN;
    }
    mf_vci_unlock(vci);
    return done ? greq_release(req) : MPI_SUCCESS;
}

int mf_greq_cancel(mf_request_t *req)
{
    greq_t *g = req->part;
    int complete = mf_vci_op_is_done(&req->op);
    return g->cancel_fn != NULL ? g->cancel_fn(g->extra_state, complete) : MPI_SUCCESS;
}
