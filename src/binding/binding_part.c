/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned point-to-point entry points: MPI_Psend_init, MPI_Precv_init, MPI_Pready,
 * MPI_Pready_range, MPI_Pready_list and MPI_Parrived. The argument checks live here; the
 * protocol is in src/part. MPI_Start, the wait/test family and MPI_Request_free handle
 * partitioned requests through binding_request.c, which calls into the same layer.
 */
#include "binding.h"
#include "part.h"

#include "mpix.h"

#include <stdio.h>
#include <stdlib.h>

static int init_common(const char *func, int is_send, const void *buf, int partitions,
                       MPI_Count count, MPI_Datatype dt, int peer, int tag, MPI_Comm comm,
                       MPI_Info info, MPI_Request *request)
{
    mf_comm_t *c = NULL;
    size_t bytes = 0;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (partitions < 1 || partitions > MF_PART_MAX_PARTS)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                           "argument partitions=%d must be between 1 and %d",
                                           partitions, MF_PART_MAX_PARTS));
    rc = mf_check_count(func, c, "count", count);
    if (rc == MPI_SUCCESS && count > INT64_MAX / partitions)
        rc = mf_err_raise(c, mf_err_code(MPI_ERR_COUNT, func,
                                         "argument count=%lld times partitions=%d does not fit "
                                         "a count",
                                         (long long)count, partitions));
    /* The whole buffer, partitions x count items: its size in bytes must fit an MPI_Count. */
    MPI_Count total = rc == MPI_SUCCESS ? count * (MPI_Count)partitions : 0;
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, "datatype", dt, total, &bytes);
    if (rc == MPI_SUCCESS)
        rc = mf_check_typed_buffer(func, c, "buf", buf, dt, total, bytes);
    bytes /= (size_t)partitions; /* a partition's */
    if (rc == MPI_SUCCESS)
        rc = mf_check_dest(func, c, is_send ? "dest" : "source", peer);
    if (rc == MPI_SUCCESS)
        rc = mf_check_send_tag(func, c, "tag", tag);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, request, "request");
    if (rc != MPI_SUCCESS)
        return rc;
    if (info != MPI_INFO_NULL && mf_info_get_obj(info) == NULL)
        return mf_err_raise(
            c, mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    /* Items that form one run of memory travel from it; others packed, through a staging copy. */
    MPI_Aint off = 0;
    MPI_Datatype packed = MPI_DATATYPE_NULL;
    if (mf_dtype_contiguous(dt, total, &off))
        buf = (const char *)buf + off;
    else
        packed = dt;
    mf_request_t *req = NULL;
    mf_status_t st =
        mf_part_init(is_send, (void *)buf, partitions, bytes, packed, count, peer, tag, c, &req);
    if (st != MF_OK)
        return mf_err_from_status(c, st, func, "cannot create the partitioned request");
    *request = req;
    return MPI_SUCCESS;
}

#pragma weak MPI_Psend_init = PMPI_Psend_init
int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_common("MPI_Psend_init", 1, buf, partitions, count, datatype, dest, tag, comm, info,
                       request);
}

#pragma weak MPI_Precv_init = PMPI_Precv_init
int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return init_common("MPI_Precv_init", 0, buf, partitions, count, datatype, source, tag, comm,
                       info, request);
}

/* The request is an active partitioned request of the wanted direction. */
static int check_part_request(const char *func, MPI_Request request, int want_send)
{
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *r = request == MPI_REQUEST_NULL ? NULL : mf_request_get(request);
    if (r == NULL || !mf_part_is_part(r))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_REQUEST, func,
                                              "argument request is not a partitioned request"));
    if ((r->type == MF_REQ_PSEND) != want_send)
        return mf_err_raise(
            r->comm, mf_err_code(MPI_ERR_REQUEST, func,
                                 "argument request is a partitioned %s request, not a %s "
                                 "request",
                                 want_send ? "receive" : "send", want_send ? "send" : "receive"));
    return MPI_SUCCESS;
}

static int check_active(const char *func, mf_request_t *r)
{
    if (__atomic_load_n(&r->active, __ATOMIC_RELAXED))
        return MPI_SUCCESS;
    return mf_err_raise(r->comm, mf_err_code(MPI_ERR_REQUEST, func,
                                             "argument request is not active (call MPI_Start "
                                             "first)"));
}

static int pready_one(const char *func, mf_request_t *r, int p)
{
    if (p < 0 || (size_t)p >= mf_part_npart(r))
        return mf_err_raise(r->comm, mf_err_code(MPI_ERR_ARG, func,
                                                 "partition %d is out of range (the request has "
                                                 "%zu partitions)",
                                                 p, mf_part_npart(r)));
    mf_status_t st = mf_part_pready(r, p);
    if (st == MF_ERR_INVALID)
        return mf_err_raise(r->comm, mf_err_code(MPI_ERR_ARG, func,
                                                 "partition %d is already marked ready in this "
                                                 "iteration",
                                                 p));
    if (st != MF_OK)
        return mf_err_from_status(r->comm, st, func, "cannot send the partition");
    return MPI_SUCCESS;
}

#pragma weak MPI_Pready = PMPI_Pready
int PMPI_Pready(int partition, MPI_Request request)
{
    static const char func[] = "MPI_Pready";
    int rc = check_part_request(func, request, 1);
    if (rc == MPI_SUCCESS)
        rc = check_active(func, request);
    if (rc != MPI_SUCCESS)
        return rc;
    return pready_one(func, request, partition);
}

#pragma weak MPI_Pready_range = PMPI_Pready_range
int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    static const char func[] = "MPI_Pready_range";
    int rc = check_part_request(func, request, 1);
    if (rc == MPI_SUCCESS)
        rc = check_active(func, request);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *r = request;
    if (partition_low < 0 || partition_high < partition_low ||
        (size_t)partition_high >= mf_part_npart(r))
        return mf_err_raise(r->comm, mf_err_code(MPI_ERR_ARG, func,
                                                 "arguments partition_low=%d and "
                                                 "partition_high=%d are not a range within the "
                                                 "request's %zu partitions",
                                                 partition_low, partition_high, mf_part_npart(r)));
    for (int p = partition_low; rc == MPI_SUCCESS && p <= partition_high; p++)
        rc = pready_one(func, r, p);
    return rc;
}

#pragma weak MPI_Pready_list = PMPI_Pready_list
int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    static const char func[] = "MPI_Pready_list";
    int rc = check_part_request(func, request, 1);
    if (rc == MPI_SUCCESS)
        rc = check_active(func, request);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *r = request;
    if (length < 0)
        return mf_err_raise(
            r->comm, mf_err_code(MPI_ERR_ARG, func, "argument length=%d is negative", length));
    if (length > 0)
        rc = mf_check_ptr(func, r->comm, array_of_partitions, "array_of_partitions");
    /* Check the whole list before marking anything, so a bad entry sends nothing. */
    size_t npart = mf_part_npart(r);
    unsigned char *seen = rc == MPI_SUCCESS && length > 0 ? calloc(npart / 8 + 1, 1) : NULL;
    if (rc == MPI_SUCCESS && length > 0 && seen == NULL)
        rc = mf_err_raise(r->comm, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    for (int i = 0; rc == MPI_SUCCESS && i < length; i++) {
        int p = array_of_partitions[i];
        if (p < 0 || (size_t)p >= npart)
            rc = mf_err_raise(r->comm, mf_err_code(MPI_ERR_ARG, func,
                                                   "array_of_partitions[%d]=%d is out of range "
                                                   "(the request has %zu partitions)",
                                                   i, p, npart));
        else if (seen[p / 8] & (1u << (p % 8)))
            rc = mf_err_raise(r->comm, mf_err_code(MPI_ERR_ARG, func,
                                                   "array_of_partitions[%d]=%d appears twice in "
                                                   "the list",
                                                   i, p));
        else if (mf_part_marked(r, p))
            rc = mf_err_raise(r->comm, mf_err_code(MPI_ERR_ARG, func,
                                                   "array_of_partitions[%d]: partition %d is "
                                                   "already marked ready in this iteration",
                                                   i, p));
        else
            seen[p / 8] |= (unsigned char)(1u << (p % 8));
    }
    free(seen);
    for (int i = 0; rc == MPI_SUCCESS && i < length; i++)
        rc = pready_one(func, r, array_of_partitions[i]);
    return rc;
}

#pragma weak MPI_Parrived = PMPI_Parrived
int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    static const char func[] = "MPI_Parrived";
    if (request == MPI_REQUEST_NULL && mf_is_initialized()) {
        /* a null request has nothing to wait for: flag true (MPI-4.1 4.2.2) */
        int rc = mf_check_ptr(func, NULL, flag, "flag");
        if (rc == MPI_SUCCESS)
            *flag = 1;
        return rc;
    }
    int rc = check_part_request(func, request, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *r = request;
    rc = mf_check_ptr(func, r->comm, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    if (partition < 0 || (size_t)partition >= mf_part_npart(r))
        return mf_err_raise(r->comm, mf_err_code(MPI_ERR_ARG, func,
                                                 "partition %d is out of range (the request has "
                                                 "%zu partitions)",
                                                 partition, mf_part_npart(r)));
    *flag = mf_part_parrived(r, partition);
    return MPI_SUCCESS;
}

/* MPIX_Pbuf_prepare(all): every entry an active partitioned request. */
static int pbuf_prepare(const char *func, int one, int count, MPI_Request requests[])
{
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (count < 0)
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_ARG, func, "argument count=%d is negative", count));
    if (count > 0 && requests == NULL)
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_ARG, func, "argument array_of_requests is NULL"));
    for (int i = 0; i < count; i++) {
        mf_request_t *r = requests[i] == MPI_REQUEST_NULL ? NULL : mf_request_get(requests[i]);
        char arg[48];
        if (one)
            snprintf(arg, sizeof(arg), "argument request");
        else
            snprintf(arg, sizeof(arg), "array_of_requests[%d]", i);
        if (r == NULL || !mf_part_is_part(r))
            return mf_err_raise(
                NULL, mf_err_code(MPI_ERR_REQUEST, func, "%s is not a partitioned request", arg));
        if (!__atomic_load_n(&r->active, __ATOMIC_RELAXED))
            return mf_err_raise(
                r->comm,
                mf_err_code(MPI_ERR_REQUEST, func, "%s is not active (call MPI_Start first)", arg));
    }
    mf_status_t st = mf_part_pbuf_prepare((mf_request_t **)requests, count);
    if (st != MF_OK)
        return mf_err_from_status(NULL, st, func, "cannot prepare the partitioned buffers");
    return MPI_SUCCESS;
}

#pragma weak MPIX_Pbuf_prepare = PMPIX_Pbuf_prepare
int PMPIX_Pbuf_prepare(MPI_Request request)
{
    return pbuf_prepare("MPIX_Pbuf_prepare", 1, 1, &request);
}

#pragma weak MPIX_Pbuf_prepareall = PMPIX_Pbuf_prepareall
int PMPIX_Pbuf_prepareall(int count, MPI_Request array_of_requests[])
{
    return pbuf_prepare("MPIX_Pbuf_prepareall", 0, count, array_of_requests);
}
