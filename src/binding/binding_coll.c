/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: the blocking collectives of MPI-4.1 chapter 6 on intracommunicators, int and
 * large-count (_c) forms. Each family has one checked implementation: it validates the local
 * arguments (root, counts, displacements, datatypes, buffers, the operation, MPI_IN_PLACE where
 * the standard allows it, send and receive buffers that must not alias), turns counts into
 * byte lengths and hands them to src/coll. Arrays of counts and displacements are read through
 * small accessors so the int and MPI_Count/MPI_Aint forms share the code.
 */
#include "binding.h"

#include "coll.h"

#include <stdlib.h>

/* An int[] or (large) MPI_Count[] / MPI_Aint[] argument. */
typedef struct {
    const void *p;
    int large;
} vec_t;

static MPI_Count vec_get(vec_t v, int i)
{
    return v.large ? ((const MPI_Count *)v.p)[i] : ((const int *)v.p)[i];
}

static vec_t vec_of(const void *p, int large)
{
    vec_t v = {p, large};
    return v;
}

static int check_root(const char *func, mf_comm_t *c, int root)
{
    if (root >= 0 && root < c->size)
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(MPI_ERR_ROOT, func,
                                       "argument root=%d is not a rank of the communicator "
                                       "(size %d)",
                                       root, c->size));
}

/* count >= 0, a supported datatype and a buffer for the bytes; *bytes_p and *extent_p out. */
static int check_data(const char *func, mf_comm_t *c, const char *buf_arg, const void *buf,
                      const char *count_arg, MPI_Count count, const char *type_arg, MPI_Datatype dt,
                      size_t *bytes_p, size_t *extent_p)
{
    int rc = mf_check_count(func, c, count_arg, count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, type_arg, dt, count, bytes_p);
    if (rc == MPI_SUCCESS && buf != MPI_IN_PLACE)
        rc = mf_check_buffer(func, c, buf_arg, buf, *bytes_p);
    if (rc == MPI_SUCCESS && extent_p != NULL)
        *extent_p = (size_t)mf_dtype_predefined(dt)->extent;
    return rc;
}

static int check_alias(const char *func, mf_comm_t *c, const void *sbuf, const void *rbuf,
                       size_t bytes)
{
    if (sbuf != rbuf || sbuf == MPI_IN_PLACE || bytes == 0)
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(MPI_ERR_BUFFER, func,
                                       "arguments sendbuf and recvbuf are the same buffer (use "
                                       "MPI_IN_PLACE)"));
}

static int in_place_forbidden(const char *func, mf_comm_t *c, const char *arg, const char *why)
{
    return mf_err_raise(
        c, mf_err_code(MPI_ERR_BUFFER, func, "argument %s is MPI_IN_PLACE, %s", arg, why));
}

static int finish(const char *func, mf_comm_t *c, mf_status_t status)
{
    if (status == MF_OK)
        return MPI_SUCCESS;
    if (status == MF_ERR_TRUNCATE)
        return mf_err_raise(c, mf_err_code(MPI_ERR_TRUNCATE, func,
                                           "a process sent more data than its peer's receive "
                                           "count and type allow"));
    return mf_err_from_status(c, status, func, "the collective failed");
}

/* Per-rank byte lengths and displacements from counts[] and displs[] of one datatype extent;
 * displs NULL means the uniform layout (count items per rank, back to back). */
static int layout(const char *func, mf_comm_t *c, const char *what, vec_t counts, vec_t displs,
                  MPI_Count ucount, size_t extent, const void *buf, size_t **arr_p)
{
    int size = c->size;
    size_t *arr = mf_malloc(2 * (size_t)size * sizeof(size_t), "collective layout");
    if (arr == NULL)
        return mf_err_from_status(c, MF_ERR_NO_MEMORY, func, "cannot allocate the layout");
    size_t total = 0;
    for (int i = 0; i < size; i++) {
        MPI_Count n = counts.p != NULL ? vec_get(counts, i) : ucount;
        MPI_Count d = displs.p != NULL ? vec_get(displs, i) : ucount * i;
        if (n < 0 || d < 0) {
            free(arr);
            return mf_err_raise(c, mf_err_code(n < 0 ? MPI_ERR_COUNT : MPI_ERR_ARG, func,
                                               "argument %s[%d]=%lld is negative",
                                               n < 0 ? what : "displs", i,
                                               (long long)(n < 0 ? n : d)));
        }
        arr[i] = (size_t)n * extent;
        arr[size + i] = (size_t)d * extent;
        total += arr[i];
    }
    if (total > 0 && buf == NULL) {
        free(arr);
        return mf_err_raise(c, mf_err_code(MPI_ERR_BUFFER, func,
                                           "the buffer of argument %s is NULL but %zu bytes are "
                                           "to be transferred",
                                           what, total));
    }
    *arr_p = arr;
    return MPI_SUCCESS;
}

/* ---- broadcast, reductions --------------------------------------------------------------- */

static int bcast_common(const char *func, void *buf, MPI_Count count, MPI_Datatype dt, int root,
                        MPI_Comm comm)
{
    mf_comm_t *c = NULL;
    size_t bytes;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = check_root(func, c, root);
    if (rc == MPI_SUCCESS && buf == MPI_IN_PLACE)
        rc = in_place_forbidden(func, c, "buffer", "which MPI_Bcast does not allow");
    if (rc == MPI_SUCCESS)
        rc = check_data(func, c, "buffer", buf, "count", count, "datatype", dt, &bytes, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    return finish(func, c, mf_coll_bcast(c, buf, bytes, root));
}

#pragma weak MPI_Bcast = PMPI_Bcast
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_common("MPI_Bcast", buffer, count, datatype, root, comm);
}

#pragma weak MPI_Bcast_c = PMPI_Bcast_c
int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_common("MPI_Bcast_c", buffer, count, datatype, root, comm);
}

typedef enum { RED_REDUCE, RED_ALLREDUCE, RED_SCAN, RED_EXSCAN } red_kind_t;

/* Reduce (root >= 0), Allreduce, Scan, Exscan: `count` items of `dt` on every process. */
static int reduce_common(const char *func, red_kind_t kind, const void *sbuf, void *rbuf,
                         MPI_Count count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm)
{
    mf_comm_t *c = NULL;
    size_t bytes, extent;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS && kind == RED_REDUCE)
        rc = check_root(func, c, root);
    if (rc != MPI_SUCCESS)
        return rc;
    int receives = kind != RED_REDUCE || c->rank == root;
    rc = check_data(func, c, "sendbuf", sbuf, "count", count, "datatype", dt, &bytes, &extent);
    if (rc == MPI_SUCCESS)
        rc = mf_check_op(func, c, op, dt);
    if (rc == MPI_SUCCESS && receives) {
        rc = mf_check_buffer(func, c, "recvbuf", rbuf == MPI_IN_PLACE ? NULL : rbuf, bytes);
        if (rc == MPI_SUCCESS)
            rc = check_alias(func, c, sbuf, rbuf, bytes);
    }
    if (rc == MPI_SUCCESS && sbuf == MPI_IN_PLACE && !receives)
        rc = in_place_forbidden(func, c, "sendbuf", "which is only allowed at the root");
    if (rc != MPI_SUCCESS)
        return rc;
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    mf_status_t status;
    switch (kind) {
    case RED_REDUCE:
        status = mf_coll_reduce(c, src, rbuf, (size_t)count, dt, extent, op, root);
        break;
    case RED_ALLREDUCE:
        status = mf_coll_allreduce(c, src, rbuf, (size_t)count, dt, extent, op);
        break;
    default:
        status = mf_coll_scan(c, sbuf, rbuf, (size_t)count, dt, extent, op, kind == RED_EXSCAN);
        break;
    }
    return finish(func, c, status);
}

#define RED_ARGS const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op
#define RED_ARGS_C                                                                                 \
    const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op
#define RED_PASS sendbuf, recvbuf, count, datatype, op

#pragma weak MPI_Reduce = PMPI_Reduce
int PMPI_Reduce(RED_ARGS, int root, MPI_Comm comm)
{
    return reduce_common("MPI_Reduce", RED_REDUCE, RED_PASS, root, comm);
}
#pragma weak MPI_Reduce_c = PMPI_Reduce_c
int PMPI_Reduce_c(RED_ARGS_C, int root, MPI_Comm comm)
{
    return reduce_common("MPI_Reduce_c", RED_REDUCE, RED_PASS, root, comm);
}
#pragma weak MPI_Allreduce = PMPI_Allreduce
int PMPI_Allreduce(RED_ARGS, MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce", RED_ALLREDUCE, RED_PASS, -1, comm);
}
#pragma weak MPI_Allreduce_c = PMPI_Allreduce_c
int PMPI_Allreduce_c(RED_ARGS_C, MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce_c", RED_ALLREDUCE, RED_PASS, -1, comm);
}
#pragma weak MPI_Scan = PMPI_Scan
int PMPI_Scan(RED_ARGS, MPI_Comm comm)
{
    return reduce_common("MPI_Scan", RED_SCAN, RED_PASS, -1, comm);
}
#pragma weak MPI_Scan_c = PMPI_Scan_c
int PMPI_Scan_c(RED_ARGS_C, MPI_Comm comm)
{
    return reduce_common("MPI_Scan_c", RED_SCAN, RED_PASS, -1, comm);
}
#pragma weak MPI_Exscan = PMPI_Exscan
int PMPI_Exscan(RED_ARGS, MPI_Comm comm)
{
    return reduce_common("MPI_Exscan", RED_EXSCAN, RED_PASS, -1, comm);
}
#pragma weak MPI_Exscan_c = PMPI_Exscan_c
int PMPI_Exscan_c(RED_ARGS_C, MPI_Comm comm)
{
    return reduce_common("MPI_Exscan_c", RED_EXSCAN, RED_PASS, -1, comm);
}

/* Reduce_scatter (counts per rank) and Reduce_scatter_block (counts.p NULL: ucount each). */
static int reduce_scatter_common(const char *func, const void *sbuf, void *rbuf, vec_t counts,
                                 MPI_Count ucount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm)
{
    mf_comm_t *c = NULL;
    size_t bytes, extent;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS && counts.p == NULL)
        rc = mf_check_count(func, c, "recvcount", ucount);
    if (rc == MPI_SUCCESS && counts.p != NULL)
        rc = mf_check_ptr(func, c, counts.p, "recvcounts");
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, "datatype", dt, 0, &bytes);
    if (rc == MPI_SUCCESS)
        rc = mf_check_op(func, c, op, dt);
    if (rc != MPI_SUCCESS)
        return rc;
    extent = (size_t)mf_dtype_predefined(dt)->extent;
    size_t *items = mf_malloc((size_t)c->size * sizeof(size_t), "reduce-scatter counts");
    if (items == NULL)
        return mf_err_from_status(c, MF_ERR_NO_MEMORY, func, "cannot allocate the counts");
    size_t total = 0;
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++) {
        MPI_Count n = counts.p != NULL ? vec_get(counts, i) : ucount;
        if (n < 0)
            rc = mf_err_raise(c, mf_err_code(MPI_ERR_COUNT, func,
                                             "argument recvcounts[%d]=%lld is negative", i,
                                             (long long)n));
        items[i] = (size_t)n;
        total += (size_t)n;
    }
    if (rc == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
        rc = mf_check_buffer(func, c, "sendbuf", sbuf, total * extent);
    if (rc == MPI_SUCCESS)
        rc = mf_check_buffer(func, c, "recvbuf", rbuf,
                             (sbuf == MPI_IN_PLACE ? total : items[c->rank]) * extent);
    if (rc == MPI_SUCCESS)
        rc = check_alias(func, c, sbuf, rbuf, total * extent);
    if (rc == MPI_SUCCESS)
        rc = finish(func, c, mf_coll_reduce_scatter(c, sbuf, rbuf, items, dt, extent, op));
    free(items);
    return rc;
}

#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter", sendbuf, recvbuf, vec_of(recvcounts, 0), 0,
                                 datatype, op, comm);
}
#pragma weak MPI_Reduce_scatter_c = PMPI_Reduce_scatter_c
int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter_c", sendbuf, recvbuf, vec_of(recvcounts, 1), 0,
                                 datatype, op, comm);
}
#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter_block", sendbuf, recvbuf, vec_of(NULL, 0),
                                 recvcount, datatype, op, comm);
}
#pragma weak MPI_Reduce_scatter_block_c = PMPI_Reduce_scatter_block_c
int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter_block_c", sendbuf, recvbuf, vec_of(NULL, 1),
                                 recvcount, datatype, op, comm);
}

/* ---- gather, scatter, allgather ---------------------------------------------------------- */

typedef enum { MOVE_GATHER, MOVE_SCATTER, MOVE_ALLGATHER } move_kind_t;

/* The "one block per process" side is (sbuf, scount, stype) for gathers and (rbuf, rcount,
 * rtype) for scatters; the "all blocks" side has counts/displs (v forms) or a uniform count. */
typedef struct {
    const void *one_buf;
    MPI_Count one_count;
    MPI_Datatype one_type;
    void *all_buf;
    vec_t counts, displs;
    MPI_Count all_count;
    MPI_Datatype all_type;
} move_args_t;

static int move_common(const char *func, move_kind_t kind, const move_args_t *a, int root,
                       MPI_Comm comm)
{
    mf_comm_t *c = NULL;
    size_t one_bytes, all_extent, *arr = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS && kind != MOVE_ALLGATHER)
        rc = check_root(func, c, root);
    if (rc != MPI_SUCCESS)
        return rc;
    int is_root = kind == MOVE_ALLGATHER || c->rank == root;
    const char *one_name = kind == MOVE_SCATTER ? "recvbuf" : "sendbuf";
    const char *all_name = kind == MOVE_SCATTER ? "sendbuf" : "recvbuf";
    int one_in_place = a->one_buf == MPI_IN_PLACE;
    if (one_in_place && !is_root)
        return in_place_forbidden(func, c, one_name, "which is only allowed at the root");
    if (!one_in_place) {
        rc = check_data(func, c, one_name, a->one_buf,
                        kind == MOVE_SCATTER ? "recvcount" : "sendcount", a->one_count,
                        kind == MOVE_SCATTER ? "recvtype" : "sendtype", a->one_type, &one_bytes,
                        NULL);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (is_root) {
        const char *cname = kind == MOVE_SCATTER ? "sendcounts" : "recvcounts";
        if (a->counts.p == NULL)
            rc = mf_check_count(func, c, kind == MOVE_SCATTER ? "sendcount" : "recvcount",
                                a->all_count);
        else
            rc = mf_check_ptr(func, c, a->counts.p, cname);
        if (rc == MPI_SUCCESS && a->counts.p != NULL)
            rc = mf_check_ptr(func, c, a->displs.p, "displs");
        if (rc == MPI_SUCCESS)
            rc = mf_check_datatype(func, c, kind == MOVE_SCATTER ? "sendtype" : "recvtype",
                                   a->all_type, 0, &all_extent);
        if (rc != MPI_SUCCESS)
            return rc;
        all_extent = (size_t)mf_dtype_predefined(a->all_type)->extent;
        if (a->all_buf == MPI_IN_PLACE)
            return in_place_forbidden(func, c, all_name, "which is not allowed there");
        rc = layout(func, c, cname, a->counts, a->displs, a->all_count, all_extent, a->all_buf,
                    &arr);
        if (rc != MPI_SUCCESS)
            return rc;
        size_t mine = arr[c->rank];
        if (!one_in_place && one_bytes != mine &&
            (kind == MOVE_SCATTER ? mine > one_bytes : one_bytes > mine))
            rc = mf_err_raise(c, mf_err_code(MPI_ERR_TRUNCATE, func,
                                             "the root's own block is %zu bytes but %zu bytes are "
                                             "expected",
                                             kind == MOVE_SCATTER ? mine : one_bytes,
                                             kind == MOVE_SCATTER ? one_bytes : mine));
        if (rc == MPI_SUCCESS)
            rc = check_alias(func, c, a->one_buf, a->all_buf, mine);
        if (rc != MPI_SUCCESS) {
            free(arr);
            return rc;
        }
    }
    mf_status_t status;
    size_t n = one_in_place ? 0 : one_bytes;
    const size_t *lens = arr, *displs = arr != NULL ? arr + c->size : NULL;
    if (kind == MOVE_GATHER)
        status = mf_coll_gatherv(c, a->one_buf, n, a->all_buf, lens, displs, root);
    else if (kind == MOVE_SCATTER)
        status = mf_coll_scatterv(c, a->all_buf, lens, displs, (void *)a->one_buf, n, root);
    else
        status = mf_coll_allgatherv(c, a->one_buf, n, a->all_buf, lens, displs);
    free(arr);
    return finish(func, c, status);
}

#define GATHER_ARGS                                                                                \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,       \
        MPI_Datatype recvtype
#define GATHER_ARGS_C                                                                              \
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,                \
        MPI_Count recvcount, MPI_Datatype recvtype

static int gather_like(const char *func, move_kind_t kind, const void *sendbuf, MPI_Count sendcount,
                       MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                       MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    move_args_t a;
    if (kind == MOVE_SCATTER) {
        a = (move_args_t){recvbuf,         recvcount,       recvtype,  (void *)sendbuf,
                          vec_of(NULL, 0), vec_of(NULL, 0), sendcount, sendtype};
    } else {
        a = (move_args_t){sendbuf,         sendcount,       sendtype,  recvbuf,
                          vec_of(NULL, 0), vec_of(NULL, 0), recvcount, recvtype};
    }
    return move_common(func, kind, &a, root, comm);
}

#pragma weak MPI_Gather = PMPI_Gather
int PMPI_Gather(GATHER_ARGS, int root, MPI_Comm comm)
{
    return gather_like("MPI_Gather", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm);
}
#pragma weak MPI_Gather_c = PMPI_Gather_c
int PMPI_Gather_c(GATHER_ARGS_C, int root, MPI_Comm comm)
{
    return gather_like("MPI_Gather_c", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm);
}
#pragma weak MPI_Scatter = PMPI_Scatter
int PMPI_Scatter(GATHER_ARGS, int root, MPI_Comm comm)
{
    return gather_like("MPI_Scatter", MOVE_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm);
}
#pragma weak MPI_Scatter_c = PMPI_Scatter_c
int PMPI_Scatter_c(GATHER_ARGS_C, int root, MPI_Comm comm)
{
    return gather_like("MPI_Scatter_c", MOVE_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm);
}
#pragma weak MPI_Allgather = PMPI_Allgather
int PMPI_Allgather(GATHER_ARGS, MPI_Comm comm)
{
    return gather_like("MPI_Allgather", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, 0, comm);
}
#pragma weak MPI_Allgather_c = PMPI_Allgather_c
int PMPI_Allgather_c(GATHER_ARGS_C, MPI_Comm comm)
{
    return gather_like("MPI_Allgather_c", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, 0, comm);
}

static int gatherv_like(const char *func, move_kind_t kind, const void *one_buf,
                        MPI_Count one_count, MPI_Datatype one_type, void *all_buf, vec_t counts,
                        vec_t displs, MPI_Datatype all_type, int root, MPI_Comm comm)
{
    move_args_t a = {one_buf, one_count, one_type, all_buf, counts, displs, 0, all_type};
    return move_common(func, kind, &a, root, comm);
}

#pragma weak MPI_Gatherv = PMPI_Gatherv
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    return gatherv_like("MPI_Gatherv", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 0), vec_of(displs, 0), recvtype, root, comm);
}
#pragma weak MPI_Gatherv_c = PMPI_Gatherv_c
int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm)
{
    return gatherv_like("MPI_Gatherv_c", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 1), vec_of(displs, 1), recvtype, root, comm);
}
#pragma weak MPI_Scatterv = PMPI_Scatterv
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    return gatherv_like("MPI_Scatterv", MOVE_SCATTER, recvbuf, recvcount, recvtype, (void *)sendbuf,
                        vec_of(sendcounts, 0), vec_of(displs, 0), sendtype, root, comm);
}
#pragma weak MPI_Scatterv_c = PMPI_Scatterv_c
int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gatherv_like("MPI_Scatterv_c", MOVE_SCATTER, recvbuf, recvcount, recvtype,
                        (void *)sendbuf, vec_of(sendcounts, 1), vec_of(displs, 1), sendtype, root,
                        comm);
}
#pragma weak MPI_Allgatherv = PMPI_Allgatherv
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    return gatherv_like("MPI_Allgatherv", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 0), vec_of(displs, 0), recvtype, 0, comm);
}
#pragma weak MPI_Allgatherv_c = PMPI_Allgatherv_c
int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm)
{
    return gatherv_like("MPI_Allgatherv_c", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 1), vec_of(displs, 1), recvtype, 0, comm);
}

/* ---- all-to-all -------------------------------------------------------------------------- */

/* Alltoall (counts.p NULL), Alltoallv (one type per side) and Alltoallw (types[] per peer,
 * displacements in bytes). */
typedef struct {
    const void *buf;
    vec_t counts, displs;
    MPI_Count count;
    MPI_Datatype type;
    const MPI_Datatype *types; /* Alltoallw */
} a2a_side_t;

static int a2a_layout(const char *func, mf_comm_t *c, const a2a_side_t *s, int is_send,
                      size_t **arr_p)
{
    const char *cname = is_send ? "sendcounts" : "recvcounts";
    int rc = MPI_SUCCESS;
    if (s->counts.p == NULL)
        rc = mf_check_count(func, c, is_send ? "sendcount" : "recvcount", s->count);
    else
        rc = mf_check_ptr(func, c, s->counts.p, cname);
    if (rc == MPI_SUCCESS && s->counts.p != NULL)
        rc = mf_check_ptr(func, c, s->displs.p, is_send ? "sdispls" : "rdispls");
    if (rc == MPI_SUCCESS && s->types != NULL)
        rc = mf_check_ptr(func, c, s->types, is_send ? "sendtypes" : "recvtypes");
    if (rc != MPI_SUCCESS)
        return rc;
    if (s->types == NULL) {
        size_t unused;
        rc = mf_check_datatype(func, c, is_send ? "sendtype" : "recvtype", s->type, 0, &unused);
        if (rc != MPI_SUCCESS)
            return rc;
        return layout(func, c, cname, s->counts, s->displs, s->count,
                      (size_t)mf_dtype_predefined(s->type)->extent, s->buf, arr_p);
    }
    /* Alltoallw: a type per peer and byte displacements. */
    rc = layout(func, c, cname, s->counts, s->displs, 0, 1, (const void *)1, arr_p);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t total = 0;
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++) {
        size_t bytes;
        rc = mf_check_datatype(func, c, is_send ? "sendtypes[i]" : "recvtypes[i]", s->types[i],
                               vec_get(s->counts, i), &bytes);
        (*arr_p)[i] = bytes;
        total += bytes;
    }
    if (rc == MPI_SUCCESS && total > 0)
        rc = mf_check_buffer(func, c, is_send ? "sendbuf" : "recvbuf", s->buf, total);
    if (rc != MPI_SUCCESS) {
        free(*arr_p);
        *arr_p = NULL;
    }
    return rc;
}

static int alltoall_common(const char *func, const a2a_side_t *snd, const a2a_side_t *rcv,
                           MPI_Comm comm)
{
    mf_comm_t *c = NULL;
    size_t *sarr = NULL, *rarr = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (rcv->buf == MPI_IN_PLACE)
        return in_place_forbidden(func, c, "recvbuf", "which is not allowed there");
    if (snd->buf != MPI_IN_PLACE) {
        rc = a2a_layout(func, c, snd, 1, &sarr);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    rc = a2a_layout(func, c, rcv, 0, &rarr);
    if (rc == MPI_SUCCESS && rcv->buf != NULL)
        rc = check_alias(func, c, snd->buf, rcv->buf, 1);
    if (rc == MPI_SUCCESS) {
        int n = c->size;
        mf_status_t status = mf_coll_alltoallv(c, snd->buf, sarr, sarr != NULL ? sarr + n : NULL,
                                               (void *)rcv->buf, rarr, rarr + n);
        rc = finish(func, c, status);
    }
    free(sarr);
    free(rarr);
    return rc;
}

#pragma weak MPI_Alltoall = PMPI_Alltoall
int PMPI_Alltoall(GATHER_ARGS, MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(NULL, 0), vec_of(NULL, 0), sendcount, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(NULL, 0), vec_of(NULL, 0), recvcount, recvtype, NULL};
    return alltoall_common("MPI_Alltoall", &s, &r, comm);
}
#pragma weak MPI_Alltoall_c = PMPI_Alltoall_c
int PMPI_Alltoall_c(GATHER_ARGS_C, MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(NULL, 0), vec_of(NULL, 0), sendcount, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(NULL, 0), vec_of(NULL, 0), recvcount, recvtype, NULL};
    return alltoall_common("MPI_Alltoall_c", &s, &r, comm);
}
#pragma weak MPI_Alltoallv = PMPI_Alltoallv
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 0), vec_of(sdispls, 0), 0, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 0), vec_of(rdispls, 0), 0, recvtype, NULL};
    return alltoall_common("MPI_Alltoallv", &s, &r, comm);
}
#pragma weak MPI_Alltoallv_c = PMPI_Alltoallv_c
int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 1), vec_of(sdispls, 1), 0, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 1), vec_of(rdispls, 1), 0, recvtype, NULL};
    return alltoall_common("MPI_Alltoallv_c", &s, &r, comm);
}
#pragma weak MPI_Alltoallw = PMPI_Alltoallw
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 0), vec_of(sdispls, 0), 0, NULL, sendtypes};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 0), vec_of(rdispls, 0), 0, NULL, recvtypes};
    return alltoall_common("MPI_Alltoallw", &s, &r, comm);
}
#pragma weak MPI_Alltoallw_c = PMPI_Alltoallw_c
int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 1), vec_of(sdispls, 1), 0, NULL, sendtypes};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 1), vec_of(rdispls, 1), 0, NULL, recvtypes};
    return alltoall_common("MPI_Alltoallw_c", &s, &r, comm);
}
