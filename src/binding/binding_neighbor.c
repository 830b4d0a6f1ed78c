/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: the neighbourhood collectives of MPI-4.1 section 8.6 (Neighbor_allgather(v),
 * Neighbor_alltoall(v/w)) in their blocking, non-blocking (MPI_I...) and persistent (..._init)
 * forms, int and large-count (_c). One checked implementation turns both sides into per-
 * neighbour byte lengths and displacements and builds a schedule (src/coll/coll_neighbor.c);
 * the blocking form starts it and waits. Any committed datatype works (binding_coll_buf.c packs
 * the blocks of non-contiguous ones). A communicator without a process topology is
 * MPI_ERR_TOPOLOGY.
 */
#include "binding.h"

#include "coll.h"
#include "core_topo.h"

#include <stdlib.h>

/* An array argument: int[], MPI_Count[] or MPI_Aint[]; ARR_NONE for the uniform forms, which
 * have a single count instead (an array the caller passed may be NULL: an error). */
typedef enum { ARR_NONE, ARR_INT, ARR_COUNT, ARR_AINT } arr_kind_t;

typedef struct {
    const void *p;
    arr_kind_t kind;
} arr_t;

static MPI_Count arr_get(arr_t a, int i)
{
    if (a.kind == ARR_INT)
        return ((const int *)a.p)[i];
    if (a.kind == ARR_COUNT)
        return ((const MPI_Count *)a.p)[i];
    return ((const MPI_Aint *)a.p)[i];
}

static const arr_t NONE = {NULL, ARR_NONE};

/* One side of the exchange. counts NONE: `count` items per neighbour, laid out back to back
 * (or the same block for every neighbour when `same_block`); `w` (alltoallw): types[] gives a
 * type per neighbour and the displacements are in bytes. */
typedef struct {
    const void *buf;
    arr_t counts, displs;
    MPI_Count count;
    MPI_Datatype type;
    const MPI_Datatype *types;
    int same_block, w;
} nside_t;

/* How an entry point runs: NULL for the blocking form, else the request and whether it is
 * persistent. */
typedef struct {
    int persistent;
    MPI_Request *request;
    MPI_Info info;
} nb_t;

/* The n blocks of one side (one per neighbour) in the user's buffer; the collective buffer gives
 * their packed lengths and offsets. */
static int side_layout(const char *func, mf_comm_t *c, const nside_t *sd, int is_send, int n,
                       mf_cbuf_t *cb)
{
    const char *cname = is_send ? "sendcounts" : "recvcounts";
    const char *dname = is_send ? "sdispls" : "rdispls";
    const char *bname = is_send ? "sendbuf" : "recvbuf";
    int rc = MPI_SUCCESS;
    if (sd->buf == MPI_IN_PLACE)
        return mf_err_raise(c, mf_err_code(MPI_ERR_BUFFER, func,
                                           "argument %s is MPI_IN_PLACE, which the neighbourhood "
                                           "collectives do not allow",
                                           bname));
    int uniform = sd->counts.kind == ARR_NONE;
    if (uniform)
        rc = mf_check_count(func, c, is_send ? "sendcount" : "recvcount", sd->count);
    else if (n > 0)
        rc = mf_check_ptr(func, c, sd->counts.p, cname);
    if (rc == MPI_SUCCESS && !uniform && n > 0)
        rc = mf_check_ptr(func, c, sd->displs.p, dname);
    if (rc == MPI_SUCCESS && sd->w && n > 0)
        rc = mf_check_ptr(func, c, sd->types, is_send ? "sendtypes" : "recvtypes");
    size_t unused;
    mf_dtype_props_t p = {0};
    if (rc == MPI_SUCCESS && !sd->w) {
        rc = mf_check_datatype(func, c, is_send ? "sendtype" : "recvtype", sd->type, 0, &unused);
        if (rc == MPI_SUCCESS)
            mf_dtype_props(sd->type, &p);
    }
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_init(cb, func, c, sd->buf, n, sd->type, sd->types);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int k = 0; k < n && rc == MPI_SUCCESS; k++) {
        MPI_Count cnt = !uniform ? arr_get(sd->counts, k) : sd->count;
        MPI_Count d = !uniform ? arr_get(sd->displs, k) : (sd->same_block ? 0 : sd->count * k);
        if (cnt < 0) /* displacements may be negative, as in layout() of binding_coll.c */
            rc =
                mf_err_raise(c, mf_err_code(MPI_ERR_COUNT, func, "argument %s[%d]=%lld is negative",
                                            cname, k, (long long)cnt));
        else if (sd->w) { /* Alltoallw: byte displacements, a type per neighbour */
            char arg[32];
            snprintf(arg, sizeof(arg), "%stypes[%d]", is_send ? "send" : "recv", k);
            rc = mf_check_datatype(func, c, arg, sd->types[k], cnt, &unused);
        }
        cb->counts[k] = cnt;
        cb->udispls[k] = sd->w ? (MPI_Aint)d : (MPI_Aint)d * p.extent;
    }
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_layout(cb, func, c);
    else
        mf_cbuf_free(cb);
    if (rc == MPI_SUCCESS && cb->total > 0 && sd->buf == NULL && !mf_cbuf_bottom_ok(cb)) {
        mf_cbuf_free(cb);
        rc = mf_err_raise(c, mf_err_code(MPI_ERR_BUFFER, func,
                                         "argument %s is NULL but %zu bytes are to be "
                                         "transferred",
                                         bname, cb->total));
    }
    return rc;
}

static int check_nb(const char *func, mf_comm_t *c, const nb_t *nb)
{
    if (nb == NULL)
        return MPI_SUCCESS;
    int rc = mf_check_ptr(func, c, nb->request, "request");
    if (rc == MPI_SUCCESS && nb->persistent && nb->info != MPI_INFO_NULL &&
        mf_info_get_obj(nb->info) == NULL)
        rc = mf_err_raise(
            c, mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    return rc;
}

/* Build the schedule; start it (non-persistent) and, for the blocking form, wait for it. */
static int run(const char *func, mf_comm_t *c, const nb_t *nb, int cart, int indeg, const int *in,
               int outdeg, const int *out, mf_cbuf_t *sb, mf_cbuf_t *rb)
{
    mf_sched_t *s = mf_sched_create(c, mf_sched_next_tag(c, nb != NULL && nb->persistent));
    if (s == NULL)
        return mf_err_from_status(c, MF_ERR_NO_MEMORY, func, "cannot allocate the schedule");
    /* Derived types: pack steps first, unpack steps after everything else. */
    mf_cbuf_pack(sb, s, -1);
    for (int k = 0; k < indeg; k++)
        if (in[k] == MPI_PROC_NULL) /* its block stays as it is */
            mf_cbuf_pack(rb, s, k);
    mf_nbc_neighbor_alltoallv(s, cart, indeg, in, outdeg, out, sb->buf, sb->lens, sb->displs,
                              rb->buf, rb->lens, rb->displs);
    mf_cbuf_unpack(rb, s, -1);
    mf_cbuf_done(sb, s);
    mf_cbuf_done(rb, s);
    mf_request_t *req = NULL;
    mf_status_t status = mf_sched_request(s, nb != NULL && nb->persistent, &req);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot start the collective");
    if (nb != NULL) {
        *nb->request = req;
        return MPI_SUCCESS;
    }
    MPI_Request handle = req;
    mf_request_wait_done(req);
    int err = mf_request_complete(&handle, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS)
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(err, func, "the neighbourhood collective failed"));
}

static int neighbor_common(const char *func, const nside_t *snd, const nside_t *rcv, MPI_Comm comm,
                           const nb_t *nb)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = check_nb(func, c, nb);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c->topo == NULL)
        return mf_err_raise(c, mf_err_code(MPI_ERR_TOPOLOGY, func,
                                           "argument comm has no process topology (Cartesian, "
                                           "graph or distributed graph)"));
    int indeg, outdeg, *in = NULL, *out = NULL;
    mf_status_t status = mf_neighbor_lists(c, &indeg, &in, &outdeg, &out);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot list the neighbours");
    mf_cbuf_t sb, rb;
    mf_cbuf_clear(&sb);
    mf_cbuf_clear(&rb);
    rc = side_layout(func, c, snd, 1, outdeg, &sb);
    if (rc == MPI_SUCCESS)
        rc = side_layout(func, c, rcv, 0, indeg, &rb);
    /* The checking mode compares the collective called; the per-neighbour signatures are
     * not exchanged. */
    if (rc == MPI_SUCCESS && MF_PARAM_LIVE(coll_check))
        rc = mf_binding_coll_check(func, c, &(mf_check_t){.func = func, .root = -1});
    if (rc == MPI_SUCCESS)
        rc = run(func, c, nb, c->topo->type == MPI_CART, indeg, in, outdeg, out, &sb, &rb);
    mf_cbuf_free(&rb);
    mf_cbuf_free(&sb);
    free(in);
    return rc;
}

/* ---- Neighbor_allgather ------------------------------------------------------------------ */

static int allgather(const char *func, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                     void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm,
                     const nb_t *nb)
{
    nside_t s = {sbuf, NONE, NONE, scount, stype, NULL, 1, 0};
    nside_t r = {rbuf, NONE, NONE, rcount, rtype, NULL, 0, 0};
    return neighbor_common(func, &s, &r, comm, nb);
}

#define AG_ARGS                                                                                    \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,       \
        MPI_Datatype recvtype, MPI_Comm comm
#define AG_ARGS_C                                                                                  \
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,                \
        MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm
#define AG_PASS sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm

#pragma weak MPI_Neighbor_allgather = PMPI_Neighbor_allgather
int PMPI_Neighbor_allgather(AG_ARGS)
{
    return allgather("MPI_Neighbor_allgather", AG_PASS, NULL);
}
#pragma weak MPI_Neighbor_allgather_c = PMPI_Neighbor_allgather_c
int PMPI_Neighbor_allgather_c(AG_ARGS_C)
{
    return allgather("MPI_Neighbor_allgather_c", AG_PASS, NULL);
}
#pragma weak MPI_Ineighbor_allgather = PMPI_Ineighbor_allgather
int PMPI_Ineighbor_allgather(AG_ARGS, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return allgather("MPI_Ineighbor_allgather", AG_PASS, &nb);
}
#pragma weak MPI_Ineighbor_allgather_c = PMPI_Ineighbor_allgather_c
int PMPI_Ineighbor_allgather_c(AG_ARGS_C, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return allgather("MPI_Ineighbor_allgather_c", AG_PASS, &nb);
}
#pragma weak MPI_Neighbor_allgather_init = PMPI_Neighbor_allgather_init
int PMPI_Neighbor_allgather_init(AG_ARGS, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return allgather("MPI_Neighbor_allgather_init", AG_PASS, &nb);
}
#pragma weak MPI_Neighbor_allgather_init_c = PMPI_Neighbor_allgather_init_c
int PMPI_Neighbor_allgather_init_c(AG_ARGS_C, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return allgather("MPI_Neighbor_allgather_init_c", AG_PASS, &nb);
}

/* ---- Neighbor_allgatherv ----------------------------------------------------------------- */

static int allgatherv(const char *func, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                      void *rbuf, arr_t rcounts, arr_t displs, MPI_Datatype rtype, MPI_Comm comm,
                      const nb_t *nb)
{
    nside_t s = {sbuf, NONE, NONE, scount, stype, NULL, 1, 0};
    nside_t r = {rbuf, rcounts, displs, 0, rtype, NULL, 0, 0};
    return neighbor_common(func, &s, &r, comm, nb);
}

#define AGV_ARGS                                                                                   \
    const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,                      \
        const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm
#define AGV_ARGS_C                                                                                 \
    const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,                \
        const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,              \
        MPI_Comm comm
#define AGV_PASS                                                                                   \
    sendbuf, sendcount, sendtype, recvbuf, (arr_t){recvcounts, ARR_INT}, (arr_t){displs, ARR_INT}, \
        recvtype, comm
#define AGV_PASS_C                                                                                 \
    sendbuf, sendcount, sendtype, recvbuf, (arr_t){recvcounts, ARR_COUNT},                         \
        (arr_t){displs, ARR_AINT}, recvtype, comm

#pragma weak MPI_Neighbor_allgatherv = PMPI_Neighbor_allgatherv
int PMPI_Neighbor_allgatherv(AGV_ARGS)
{
    return allgatherv("MPI_Neighbor_allgatherv", AGV_PASS, NULL);
}
#pragma weak MPI_Neighbor_allgatherv_c = PMPI_Neighbor_allgatherv_c
int PMPI_Neighbor_allgatherv_c(AGV_ARGS_C)
{
    return allgatherv("MPI_Neighbor_allgatherv_c", AGV_PASS_C, NULL);
}
#pragma weak MPI_Ineighbor_allgatherv = PMPI_Ineighbor_allgatherv
int PMPI_Ineighbor_allgatherv(AGV_ARGS, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return allgatherv("MPI_Ineighbor_allgatherv", AGV_PASS, &nb);
}
#pragma weak MPI_Ineighbor_allgatherv_c = PMPI_Ineighbor_allgatherv_c
int PMPI_Ineighbor_allgatherv_c(AGV_ARGS_C, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return allgatherv("MPI_Ineighbor_allgatherv_c", AGV_PASS_C, &nb);
}
#pragma weak MPI_Neighbor_allgatherv_init = PMPI_Neighbor_allgatherv_init
int PMPI_Neighbor_allgatherv_init(AGV_ARGS, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return allgatherv("MPI_Neighbor_allgatherv_init", AGV_PASS, &nb);
}
#pragma weak MPI_Neighbor_allgatherv_init_c = PMPI_Neighbor_allgatherv_init_c
int PMPI_Neighbor_allgatherv_init_c(AGV_ARGS_C, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return allgatherv("MPI_Neighbor_allgatherv_init_c", AGV_PASS_C, &nb);
}

/* ---- Neighbor_alltoall ------------------------------------------------------------------- */

static int alltoall(const char *func, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                    void *rbuf, MPI_Count rcount, MPI_Datatype rtype, MPI_Comm comm, const nb_t *nb)
{
    nside_t s = {sbuf, NONE, NONE, scount, stype, NULL, 0, 0};
    nside_t r = {rbuf, NONE, NONE, rcount, rtype, NULL, 0, 0};
    return neighbor_common(func, &s, &r, comm, nb);
}

#pragma weak MPI_Neighbor_alltoall = PMPI_Neighbor_alltoall
int PMPI_Neighbor_alltoall(AG_ARGS)
{
    return alltoall("MPI_Neighbor_alltoall", AG_PASS, NULL);
}
#pragma weak MPI_Neighbor_alltoall_c = PMPI_Neighbor_alltoall_c
int PMPI_Neighbor_alltoall_c(AG_ARGS_C)
{
    return alltoall("MPI_Neighbor_alltoall_c", AG_PASS, NULL);
}
#pragma weak MPI_Ineighbor_alltoall = PMPI_Ineighbor_alltoall
int PMPI_Ineighbor_alltoall(AG_ARGS, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return alltoall("MPI_Ineighbor_alltoall", AG_PASS, &nb);
}
#pragma weak MPI_Ineighbor_alltoall_c = PMPI_Ineighbor_alltoall_c
int PMPI_Ineighbor_alltoall_c(AG_ARGS_C, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return alltoall("MPI_Ineighbor_alltoall_c", AG_PASS, &nb);
}
#pragma weak MPI_Neighbor_alltoall_init = PMPI_Neighbor_alltoall_init
int PMPI_Neighbor_alltoall_init(AG_ARGS, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return alltoall("MPI_Neighbor_alltoall_init", AG_PASS, &nb);
}
#pragma weak MPI_Neighbor_alltoall_init_c = PMPI_Neighbor_alltoall_init_c
int PMPI_Neighbor_alltoall_init_c(AG_ARGS_C, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return alltoall("MPI_Neighbor_alltoall_init_c", AG_PASS, &nb);
}

/* ---- Neighbor_alltoallv ------------------------------------------------------------------ */

static int alltoallv(const char *func, const void *sbuf, arr_t scounts, arr_t sdispls,
                     MPI_Datatype stype, void *rbuf, arr_t rcounts, arr_t rdispls,
                     MPI_Datatype rtype, MPI_Comm comm, const nb_t *nb)
{
    nside_t s = {sbuf, scounts, sdispls, 0, stype, NULL, 0, 0};
    nside_t r = {rbuf, rcounts, rdispls, 0, rtype, NULL, 0, 0};
    return neighbor_common(func, &s, &r, comm, nb);
}

#define AV_ARGS                                                                                    \
    const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,       \
        void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,         \
        MPI_Comm comm
#define AV_ARGS_C                                                                                  \
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],                   \
        MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],                        \
        const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm
#define AV_PASS                                                                                    \
    sendbuf, (arr_t){sendcounts, ARR_INT}, (arr_t){sdispls, ARR_INT}, sendtype, recvbuf,           \
        (arr_t){recvcounts, ARR_INT}, (arr_t){rdispls, ARR_INT}, recvtype, comm
#define AV_PASS_C                                                                                  \
    sendbuf, (arr_t){sendcounts, ARR_COUNT}, (arr_t){sdispls, ARR_AINT}, sendtype, recvbuf,        \
        (arr_t){recvcounts, ARR_COUNT}, (arr_t){rdispls, ARR_AINT}, recvtype, comm

#pragma weak MPI_Neighbor_alltoallv = PMPI_Neighbor_alltoallv
int PMPI_Neighbor_alltoallv(AV_ARGS)
{
    return alltoallv("MPI_Neighbor_alltoallv", AV_PASS, NULL);
}
#pragma weak MPI_Neighbor_alltoallv_c = PMPI_Neighbor_alltoallv_c
int PMPI_Neighbor_alltoallv_c(AV_ARGS_C)
{
    return alltoallv("MPI_Neighbor_alltoallv_c", AV_PASS_C, NULL);
}
#pragma weak MPI_Ineighbor_alltoallv = PMPI_Ineighbor_alltoallv
int PMPI_Ineighbor_alltoallv(AV_ARGS, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return alltoallv("MPI_Ineighbor_alltoallv", AV_PASS, &nb);
}
#pragma weak MPI_Ineighbor_alltoallv_c = PMPI_Ineighbor_alltoallv_c
int PMPI_Ineighbor_alltoallv_c(AV_ARGS_C, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return alltoallv("MPI_Ineighbor_alltoallv_c", AV_PASS_C, &nb);
}
#pragma weak MPI_Neighbor_alltoallv_init = PMPI_Neighbor_alltoallv_init
int PMPI_Neighbor_alltoallv_init(AV_ARGS, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return alltoallv("MPI_Neighbor_alltoallv_init", AV_PASS, &nb);
}
#pragma weak MPI_Neighbor_alltoallv_init_c = PMPI_Neighbor_alltoallv_init_c
int PMPI_Neighbor_alltoallv_init_c(AV_ARGS_C, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return alltoallv("MPI_Neighbor_alltoallv_init_c", AV_PASS_C, &nb);
}

/* ---- Neighbor_alltoallw ------------------------------------------------------------------ */

static int alltoallw(const char *func, const void *sbuf, arr_t scounts, const MPI_Aint *sdispls,
                     const MPI_Datatype *stypes, void *rbuf, arr_t rcounts, const MPI_Aint *rdispls,
                     const MPI_Datatype *rtypes, MPI_Comm comm, const nb_t *nb)
{
    nside_t s = {sbuf, scounts, {sdispls, ARR_AINT}, 0, MPI_DATATYPE_NULL, stypes, 0, 1};
    nside_t r = {rbuf, rcounts, {rdispls, ARR_AINT}, 0, MPI_DATATYPE_NULL, rtypes, 0, 1};
    return neighbor_common(func, &s, &r, comm, nb);
}

#define AW_ARGS                                                                                    \
    const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],                         \
        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],                     \
        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm
#define AW_ARGS_C                                                                                  \
    const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],                   \
        const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],               \
        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm
#define AW_PASS                                                                                    \
    sendbuf, (arr_t){sendcounts, ARR_INT}, sdispls, sendtypes, recvbuf,                            \
        (arr_t){recvcounts, ARR_INT}, rdispls, recvtypes, comm
#define AW_PASS_C                                                                                  \
    sendbuf, (arr_t){sendcounts, ARR_COUNT}, sdispls, sendtypes, recvbuf,                          \
        (arr_t){recvcounts, ARR_COUNT}, rdispls, recvtypes, comm

#pragma weak MPI_Neighbor_alltoallw = PMPI_Neighbor_alltoallw
int PMPI_Neighbor_alltoallw(AW_ARGS)
{
    return alltoallw("MPI_Neighbor_alltoallw", AW_PASS, NULL);
}
#pragma weak MPI_Neighbor_alltoallw_c = PMPI_Neighbor_alltoallw_c
int PMPI_Neighbor_alltoallw_c(AW_ARGS_C)
{
    return alltoallw("MPI_Neighbor_alltoallw_c", AW_PASS_C, NULL);
}
#pragma weak MPI_Ineighbor_alltoallw = PMPI_Ineighbor_alltoallw
int PMPI_Ineighbor_alltoallw(AW_ARGS, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return alltoallw("MPI_Ineighbor_alltoallw", AW_PASS, &nb);
}
#pragma weak MPI_Ineighbor_alltoallw_c = PMPI_Ineighbor_alltoallw_c
int PMPI_Ineighbor_alltoallw_c(AW_ARGS_C, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return alltoallw("MPI_Ineighbor_alltoallw_c", AW_PASS_C, &nb);
}
#pragma weak MPI_Neighbor_alltoallw_init = PMPI_Neighbor_alltoallw_init
int PMPI_Neighbor_alltoallw_init(AW_ARGS, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return alltoallw("MPI_Neighbor_alltoallw_init", AW_PASS, &nb);
}
#pragma weak MPI_Neighbor_alltoallw_init_c = PMPI_Neighbor_alltoallw_init_c
int PMPI_Neighbor_alltoallw_init_c(AW_ARGS_C, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return alltoallw("MPI_Neighbor_alltoallw_init_c", AW_PASS_C, &nb);
}
