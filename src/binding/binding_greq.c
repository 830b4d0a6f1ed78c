/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: generalized requests (MPI_Grequest_start, MPI_Grequest_complete). Wait, Test,
 * Request_get_status, Request_free and Cancel treat them in binding_request.c and
 * core_request.c through the mf_greq_* calls of core_greq.c.
 */
#include "binding.h"

#pragma weak MPI_Grequest_start = PMPI_Grequest_start
int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    static const char func[] = "MPI_Grequest_start";
    /* The standard has no null callbacks here (unlike the keyval functions). */
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, (const void *)query_fn, "query_fn");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, (const void *)free_fn, "free_fn");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, (const void *)cancel_fn, "cancel_fn");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *req = NULL;
    mf_status_t status = mf_greq_start(query_fn, free_fn, cancel_fn, extra_state, &req);
    if (status != MF_OK)
        return mf_err_from_status(NULL, status, func, "cannot create the request");
    *request = req;
    return MPI_SUCCESS;
}

#pragma weak MPI_Grequest_complete = PMPI_Grequest_complete
int PMPI_Grequest_complete(MPI_Request request)
{
    static const char func[] = "MPI_Grequest_complete";
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *req = mf_request_get(request);
    /* MPI_Request_free may come first: the request still awaits this call (MPI-4.1 13.2). */
    if (req == NULL && request != MPI_REQUEST_NULL && mf_handle_is_object(request) &&
        request->kind == MF_KIND_REQUEST_ORPHAN)
        req = request;
    if (req == NULL || req->type != MF_REQ_GREQ)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_REQUEST, func, "argument request is %s",
                                              request == MPI_REQUEST_NULL ? "MPI_REQUEST_NULL"
                                              : req == NULL               ? "not a valid request"
                                                            : "not a generalized request"));
    if (mf_vci_op_is_done(&req->op))
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_REQUEST, func, "argument request was already completed"));
    mf_greq_complete(req);
    return MPI_SUCCESS;
}
