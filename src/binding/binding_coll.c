/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: the collectives of MPI-4.1 chapter 6, int and large-count (_c) forms, on intra-
 * and intercommunicators (these run as schedules of src/coll/coll_inter.c in every form). Each
 * family has one checked implementation: it validates the local arguments (root, counts,
 * displacements, datatypes, buffers, the operation, MPI_IN_PLACE where the standard allows it, send
 * and receive buffers that must not alias), describes each side's buffer with binding_coll_buf.c
 * (any committed datatype: contiguous data is used in place, the rest packed into a temporary)
 * and hands byte lengths to src/coll. Arrays of counts and displacements are read through small
 * accessors so the int and MPI_Count/MPI_Aint forms share the code.
 */
#include "binding.h"

#include "coll.h"

#include <stdlib.h>
#include <string.h>

/* An int[] or (large) MPI_Count[] / MPI_Aint[] argument; `given` is 0 for the uniform forms
 * (MPI_Gather, ...), which have a single count instead and no array, 1 for an array the caller
 * passed (maybe NULL, an error where it is significant). */
typedef struct {
    const void *p;
    int large, given;
} vec_t;

static MPI_Count vec_get(vec_t v, int i)
{
    return v.large ? ((const MPI_Count *)v.p)[i] : ((const int *)v.p)[i];
}

static vec_t vec_of(const void *p, int large)
{
    vec_t v = {p, large, 1};
    return v;
}

static vec_t vec_none(int large)
{
    vec_t v = {NULL, large, 0};
    return v;
}

/* How an entry point runs: NULL for the blocking form, otherwise the non-blocking (MPI_I...)
 * or persistent (..._init) form and where its request goes. */
typedef struct {
    int persistent;
    MPI_Request *request;
    MPI_Info info;
} nb_t;

static int check_nb_form(const char *func, mf_comm_t *c, const nb_t *nb)
{
    int rc = mf_check_ptr(func, c, nb->request, "request");
    if (rc == MPI_SUCCESS && nb->persistent && nb->info != MPI_INFO_NULL &&
        mf_info_get_obj(nb->info) == NULL)
        rc = mf_err_raise(c, mf_err_code(MPI_ERR_INFO, func,
                                         "argument info is not a valid info "
                                         "object"));
    return rc;
}

/* The small checks below run on every call: inlined (MF_HOT_PATH), their failures out of line. */
static MF_HOT_PATH int check_nb(const char *func, mf_comm_t *c, const nb_t *nb)
{
    return nb == NULL ? MPI_SUCCESS : check_nb_form(func, c, nb);
}

/* A new schedule for the checked collective about to be built (it takes the communicator's
 * next collective sequence number, so only call it once every argument has been checked). */
static mf_sched_t *nb_begin(mf_comm_t *c, const nb_t *nb)
{
    return mf_sched_create(c, mf_sched_next_tag(c, nb != NULL && nb->persistent));
}

/* Turn the built schedule into the user's request (started unless persistent). */
static int nb_end(const char *func, mf_comm_t *c, const nb_t *nb, mf_sched_t *s)
{
    if (s == NULL)
        return mf_err_from_status(c, MF_ERR_NO_MEMORY, func, "cannot allocate the schedule");
    mf_request_t *req = NULL;
    mf_status_t status = mf_sched_request(s, nb->persistent, &req);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot start the collective");
    *nb->request = req;
    return MPI_SUCCESS;
}

/* The blocking form of an intercommunicator collective runs its schedule and waits. */
static int sched_end(const char *func, mf_comm_t *c, const nb_t *nb, mf_sched_t *s)
{
    if (nb != NULL || s == NULL)
        return nb_end(func, c, nb, s);
    int err_class;
    mf_status_t status = mf_inter_run(s, &err_class);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot start the collective");
    if (err_class == MPI_SUCCESS)
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(err_class, func, "the intercommunicator collective failed"));
}

/* MANIFOLD_COLL_CHECK compares calls across one group: intercommunicators are not checked. */
static MF_HOT_PATH int coll_checking(const mf_comm_t *c)
{
    return MF_PARAM_LIVE(coll_check) && !mf_comm_is_inter(c);
}

static int check_root_slow(const char *func, mf_comm_t *c, int root)
{
    if (mf_comm_is_inter(c)) {
        /* MPI-4.1 section 6.2.2: the root passes MPI_ROOT, the rest of its group MPI_PROC_NULL,
         * the other group the root's rank in it. */
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < c->remote_size))
            return MPI_SUCCESS;
        return mf_err_raise(c, mf_err_code(MPI_ERR_ROOT, func,
                                           "argument root=%d on an intercommunicator must be "
                                           "MPI_ROOT, MPI_PROC_NULL or a rank of the remote "
                                           "group (size %d)",
                                           root, c->remote_size));
    }
    if (root >= 0 && root < c->size)
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(MPI_ERR_ROOT, func,
                                       "argument root=%d is not a rank of the communicator "
                                       "(size %d)",
                                       root, c->size));
}

static MF_HOT_PATH int check_root(const char *func, mf_comm_t *c, int root)
{
    if (MF_LIKELY(!mf_comm_is_inter(c) && (unsigned)root < (unsigned)c->size))
        return MPI_SUCCESS;
    return check_root_slow(func, c, root);
}

/* A buffer for `bytes` of dt: NULL is MPI_BOTTOM, fine with a derived type of absolute
 * addresses (its first item's checked), an error with a predefined one. */
static MF_HOT_PATH int check_typed_buffer(const char *func, mf_comm_t *c, const char *buf_arg,
                                          const void *buf, MPI_Datatype dt, size_t bytes)
{
    return mf_check_typed_buffer(func, c, buf_arg, buf, dt, 1, bytes);
}

/* count >= 0, a committed datatype and a buffer for the bytes; *bytes_p (packed) out. */
static MF_HOT_PATH int check_data(const char *func, mf_comm_t *c, const char *buf_arg,
                                  const void *buf, const char *count_arg, MPI_Count count,
                                  const char *type_arg, MPI_Datatype dt, size_t *bytes_p)
{
    int rc = mf_check_count(func, c, count_arg, count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, type_arg, dt, count, bytes_p);
    if (rc == MPI_SUCCESS && buf != MPI_IN_PLACE)
        rc = check_typed_buffer(func, c, buf_arg, buf, dt, *bytes_p);
    return rc;
}

static MF_HOT_PATH int check_alias(const char *func, mf_comm_t *c, const void *sbuf,
                                   const void *rbuf, size_t bytes)
{
    /* both MPI_BOTTOM: the types' absolute addresses tell the buffers apart */
    if (sbuf != rbuf || sbuf == MPI_IN_PLACE || sbuf == MPI_BOTTOM || bytes == 0)
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(MPI_ERR_BUFFER, func,
                                       "arguments sendbuf and recvbuf are the same buffer%s",
                                       mf_comm_is_inter(c) ? "" : " (use MPI_IN_PLACE)"));
}

/* Runs of sspan and rspan bytes from the two buffers (0: not one known run) that share memory.
 * Only where the runs are exactly the memory the call touches, so interleaved derived types
 * never pass for an overlap. */
static int check_overlap(const char *func, mf_comm_t *c, const void *sbuf, size_t sspan,
                         const void *rbuf, size_t rspan)
{
    const char *s = sbuf, *r = rbuf;
    if (sbuf == MPI_IN_PLACE || sbuf == MPI_BOTTOM || rbuf == MPI_BOTTOM || sspan == 0 ||
        rspan == 0 || !(s < r + rspan && r < s + sspan))
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(MPI_ERR_BUFFER, func,
                                       "arguments sendbuf (%zu bytes) and recvbuf (%zu bytes) "
                                       "overlap%s",
                                       sspan, rspan,
                                       mf_comm_is_inter(c) ? "" : " (use MPI_IN_PLACE)"));
}

static int in_place_forbidden(const char *func, mf_comm_t *c, const char *arg, const char *why)
{
    return mf_err_raise(
        c, mf_err_code(MPI_ERR_BUFFER, func, "argument %s is MPI_IN_PLACE, %s", arg, why));
}

int mf_binding_coll_truncated(const char *func, mf_comm_t *c)
{
    return mf_err_raise(c, mf_err_code(MPI_ERR_TRUNCATE, func,
                                       "the processes passed counts or datatypes whose sizes "
                                       "differ, to this or an earlier collective call on the "
                                       "communicator: a process sent more or less data than its "
                                       "peer's count and type allow (MANIFOLD_COLL_CHECK=1 names "
                                       "the mismatch)"));
}

static int finish_failed(const char *func, mf_comm_t *c, mf_status_t status)
{
    if (status == MF_ERR_TRUNCATE)
        return mf_binding_coll_truncated(func, c);
    return mf_err_from_status(c, status, func, "the collective failed");
}

static MF_HOT_PATH int finish(const char *func, mf_comm_t *c, mf_status_t status)
{
    return MF_LIKELY(status == MF_OK) ? MPI_SUCCESS : finish_failed(func, c, status);
}

/* A predefined type whose items lie as they travel: the collectives may use the user's buffers
 * as they are (a pair type with padding packs, like a derived type). */
static MF_HOT_PATH int predefined(MPI_Datatype dt)
{
    const mf_dtype_info_t *info = mf_dtype_predefined(dt);
    return info != NULL && info->direct > 0;
}

/* The blocks of one side, one per rank, from counts[] and displs[] (in units of the type's extent,
 * or bytes when `types` gives a type per rank: Alltoallw); uniform forms (no arrays given) lay
 * out ucount items per rank, back to back. The types are checked. `what` names the counts,
 * `buf_name` the buffer. */
static int layout(const char *func, mf_comm_t *c, const char *what, const char *buf_name,
                  vec_t counts, vec_t displs, MPI_Count ucount, MPI_Datatype dt,
                  const MPI_Datatype *types, const void *buf, mf_cbuf_t *cb)
{
    int size = mf_comm_peer_size(c); /* one block per remote process on intercommunicators */
    mf_dtype_props_t p = {0};
    if (types == NULL)
        mf_dtype_props(dt, &p);
    int rc = mf_cbuf_init(cb, func, c, buf, size, dt, types);
    for (int i = 0; i < size && rc == MPI_SUCCESS; i++) {
        MPI_Count n = counts.given ? vec_get(counts, i) : ucount;
        MPI_Count d = displs.given ? vec_get(displs, i) : ucount * i;
        size_t unused;
        /* A displacement may be negative (MPI-4.1 6.5: only the memory it names must be the
         * caller's); mf_cbuf_layout bases the blocks at the lowest one. */
        if (n < 0)
            rc =
                mf_err_raise(c, mf_err_code(MPI_ERR_COUNT, func, "argument %s[%d]=%lld is negative",
                                            what, i, (long long)n));
        else if (types != NULL) {
            char arg[32];
            snprintf(arg, sizeof(arg), "%stypes[%d]", what[0] == 's' ? "send" : "recv", i);
            rc = mf_check_datatype(func, c, arg, types[i], n, &unused);
        }
        cb->counts[i] = n;
        cb->udispls[i] = types != NULL ? (MPI_Aint)d : (MPI_Aint)d * p.extent;
    }
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_layout(cb, func, c);
    else
        mf_cbuf_free(cb);
    if (rc == MPI_SUCCESS && cb->total > 0 && buf == NULL && !mf_cbuf_bottom_ok(cb)) {
        mf_cbuf_free(cb);
        return mf_err_raise(c, mf_err_code(MPI_ERR_BUFFER, func,
                                           "argument %s is NULL but %zu bytes are to be "
                                           "transferred (MPI_BOTTOM needs absolute addresses)",
                                           buf_name, cb->total));
    }
    return rc;
}

/* ---- checking mode ----------------------------------------------------------------------- */

int mf_binding_coll_check(const char *func, mf_comm_t *c, const mf_check_t *chk)
{
    char msg[320];
    mf_check_result_t result;
    mf_status_t status = mf_coll_check(c, chk, &result, msg, sizeof(msg));
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "the collective check failed");
    static const int classes[] = {
        [MF_CHECK_OK] = MPI_SUCCESS,
        [MF_CHECK_KIND] = MPI_ERR_OTHER,
        [MF_CHECK_ROOT_DIFF] = MPI_ERR_ROOT,
        [MF_CHECK_OP_DIFF] = MPI_ERR_OP,
        [MF_CHECK_TYPE] = MPI_ERR_TYPE,
        [MF_CHECK_COUNT] = MPI_ERR_COUNT,
        [MF_CHECK_TRUNCATE] = MPI_ERR_TRUNCATE,
        [MF_CHECK_AUX] = MPI_ERR_COUNT,
    };
    if (result == MF_CHECK_OK)
        return MPI_SUCCESS;
    return mf_err_raise(c, mf_err_code(classes[result], func, "%s", msg));
}

/* One side of a data movement for the check: `peers` get `count` (or counts[peer]) items of
 * `type` (or types[peer]). */
static mf_check_side_t side(mf_check_peers_t peers, MPI_Datatype type, const MPI_Datatype *types,
                            MPI_Count count, vec_t counts)
{
    mf_check_side_t sd = {peers, type, types, count, counts.p, counts.large};
    return sd;
}

static int check_bcast(const char *func, mf_comm_t *c, MPI_Datatype dt, MPI_Count count, int root)
{
    int is_root = c->rank == root;
    mf_check_t chk = {.func = func, .root = root};
    if (is_root)
        chk.send = side(MF_CHECK_ALL, dt, NULL, count, vec_none(0));
    else
        chk.recv = side(MF_CHECK_ROOT, dt, NULL, count, vec_none(0));
    return mf_binding_coll_check(func, c, &chk);
}

/* Reductions: every process passes the same (dt, count) and operation; aux: a hash of
 * Reduce_scatter's recvcounts. */
static uint64_t counts_hash(const size_t *items, int n)
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the counts */
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)items[i]) * 0x100000001b3ull;
    return h;
}

static int check_reduction(const char *func, mf_comm_t *c, int root, MPI_Op op, MPI_Datatype dt,
                           MPI_Count count, uint64_t aux)
{
    mf_check_t chk = {.func = func, .root = root, .op = op, .dt = dt, .count = count, .aux = aux};
    return mf_binding_coll_check(func, c, &chk);
}

/* ---- broadcast, reductions --------------------------------------------------------------- */

static int bcast_common(const char *func, void *buf, MPI_Count count, MPI_Datatype dt, int root,
                        MPI_Comm comm, const nb_t *nb)
{
    mf_comm_t *c = NULL;
    size_t bytes;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = check_nb(func, c, nb);
    if (rc == MPI_SUCCESS)
        rc = check_root(func, c, root);
    if (rc == MPI_SUCCESS && buf == MPI_IN_PLACE)
        rc = in_place_forbidden(func, c, "buffer", "which MPI_Bcast does not allow");
    if (rc != MPI_SUCCESS)
        return rc;
    /* MPI_PROC_NULL on an intercommunicator: nothing of this process is significant. */
    int inter = mf_comm_is_inter(c), idle = inter && root == MPI_PROC_NULL;
    bytes = 0;
    if (!idle)
        rc = check_data(func, c, "buffer", buf, "count", count, "datatype", dt, &bytes);
    if (rc == MPI_SUCCESS && coll_checking(c))
        rc = check_bcast(func, c, dt, count, root);
    if (rc == MPI_SUCCESS && !inter && nb == NULL && predefined(dt))
        return finish(func, c, mf_coll_bcast(c, buf, bytes, root));
    mf_cbuf_t cb;
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_one(&cb, func, c, buf, idle ? 0 : count, dt);
    if (rc != MPI_SUCCESS)
        return rc;
    int is_root = inter ? root == MPI_ROOT : c->rank == root;
    /* Intercommunicators run a schedule in every form (sched_end waits in the blocking one). */
    mf_sched_t *s = nb != NULL || inter ? nb_begin(c, nb) : NULL;
    if (is_root)
        mf_cbuf_pack(&cb, s, -1);
    if (!inter && nb == NULL) {
        rc = finish(func, c, mf_coll_bcast(c, cb.buf, bytes, root));
        if (rc == MPI_SUCCESS && !is_root)
            mf_cbuf_unpack(&cb, NULL, -1);
        mf_cbuf_free(&cb);
        return rc;
    }
    if (s != NULL) {
        if (inter)
            mf_inter_bcast(s, cb.buf, bytes, root);
        else
            mf_nbc_bcast(s, cb.buf, bytes, root);
        if (!is_root)
            mf_cbuf_unpack(&cb, s, -1);
    }
    mf_cbuf_done(&cb, s);
    return sched_end(func, c, nb, s);
}

#pragma weak MPI_Bcast = PMPI_Bcast
int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_common("MPI_Bcast", buffer, count, datatype, root, comm, NULL);
}

#pragma weak MPI_Bcast_c = PMPI_Bcast_c
int PMPI_Bcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    return bcast_common("MPI_Bcast_c", buffer, count, datatype, root, comm, NULL);
}

typedef enum { RED_REDUCE, RED_ALLREDUCE, RED_SCAN, RED_EXSCAN } red_kind_t;

/* Reduce and Allreduce on an intercommunicator (root already checked); Scan and Exscan are not
 * defined there (MPI-4.1 section 6.2.2). Who supplies what: Allreduce everyone both buffers;
 * Reduce the root its recvbuf, the other group its sendbuf, MPI_PROC_NULL nothing. */
static int reduce_inter(const char *func, red_kind_t kind, const void *sbuf, void *rbuf,
                        MPI_Count count, MPI_Datatype dt, MPI_Op op, int root, mf_comm_t *c,
                        const nb_t *nb)
{
    if (kind == RED_SCAN || kind == RED_EXSCAN)
        return mf_err_raise(c, mf_err_code(MPI_ERR_COMM, func,
                                           "argument comm is an intercommunicator, on which "
                                           "prefix reductions are not defined"));
    int sends = kind == RED_ALLREDUCE || (root != MPI_ROOT && root != MPI_PROC_NULL);
    int receives = kind == RED_ALLREDUCE || root == MPI_ROOT;
    size_t bytes = 0, extent = 1, mul = 1;
    MPI_Datatype rdt = dt;
    int rc = MPI_SUCCESS;
    if (sends || receives) {
        rc = mf_check_count(func, c, "count", count);
        if (rc == MPI_SUCCESS)
            rc = mf_check_datatype(func, c, "datatype", dt, count, &bytes);
        if (rc == MPI_SUCCESS)
            rc = mf_cbuf_red_type(func, c, op, dt, &rdt, &mul, &extent);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (sends && sbuf == MPI_IN_PLACE)
        return in_place_forbidden(func, c, "sendbuf", "which intercommunicators do not allow");
    if (receives && rbuf == MPI_IN_PLACE)
        return in_place_forbidden(func, c, "recvbuf", "which intercommunicators do not allow");
    if (sends)
        rc = check_typed_buffer(func, c, "sendbuf", sbuf, dt, bytes);
    if (rc == MPI_SUCCESS && receives)
        rc = check_typed_buffer(func, c, "recvbuf", rbuf, dt, bytes);
    if (rc == MPI_SUCCESS && sends && receives)
        rc = check_alias(func, c, sbuf, rbuf, bytes);
    mf_cbuf_t sb, rb;
    mf_cbuf_clear(&sb);
    mf_cbuf_clear(&rb);
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_one(&sb, func, c, sbuf, sends ? count : 0, dt);
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_one(&rb, func, c, rbuf, receives ? count : 0, dt);
    if (rc != MPI_SUCCESS) {
        mf_cbuf_free(&sb);
        return rc;
    }
    /* Derived types: pack what goes out, reduce packed items, unpack the result. */
    mf_sched_t *s = nb_begin(c, nb);
    if (s != NULL) {
        size_t n = (size_t)count * mul;
        mf_cbuf_pack(&sb, s, -1);
        if (kind == RED_REDUCE)
            mf_inter_reduce(s, sb.buf, rb.buf, n, rdt, extent, op, root);
        else
            mf_inter_allreduce(s, sb.buf, rb.buf, n, rdt, extent, op);
        mf_cbuf_unpack(&rb, s, -1);
    }
    mf_cbuf_done(&sb, s);
    mf_cbuf_done(&rb, s);
    return sched_end(func, c, nb, s);
}

/* Reduce (root >= 0), Allreduce, Scan, Exscan: `count` items of `dt` on every process. */
static int reduce_common(const char *func, red_kind_t kind, const void *sbuf, void *rbuf,
                         MPI_Count count, MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm,
                         const nb_t *nb)
{
    mf_comm_t *c = NULL;
    size_t bytes, extent, mul;
    MPI_Datatype rdt;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = check_nb(func, c, nb);
    if (rc == MPI_SUCCESS && kind == RED_REDUCE)
        rc = check_root(func, c, root);
    if (rc == MPI_SUCCESS && mf_comm_is_inter(c))
        return reduce_inter(func, kind, sbuf, rbuf, count, dt, op, root, c, nb);
    if (rc != MPI_SUCCESS)
        return rc;
    int receives = kind != RED_REDUCE || c->rank == root;
    rc = check_data(func, c, "sendbuf", sbuf, "count", count, "datatype", dt, &bytes);
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_red_type(func, c, op, dt, &rdt, &mul, &extent);
    if (rc == MPI_SUCCESS && receives) {
        rc = rbuf == MPI_IN_PLACE
                 ? in_place_forbidden(func, c, "recvbuf", "which is only allowed as sendbuf")
                 : check_typed_buffer(func, c, "recvbuf", rbuf, dt, bytes);
        if (rc == MPI_SUCCESS)
            rc = check_alias(func, c, sbuf, rbuf, bytes);
        if (rc == MPI_SUCCESS && mf_dtype_predefined(dt) != NULL)
            rc = check_overlap(func, c, sbuf, bytes, rbuf, bytes);
    }
    if (rc == MPI_SUCCESS && sbuf == MPI_IN_PLACE && !receives)
        rc = in_place_forbidden(func, c, "sendbuf", "which is only allowed at the root");
    if (rc == MPI_SUCCESS && coll_checking(c))
        rc = check_reduction(func, c, kind == RED_REDUCE ? root : -1, op, dt, count, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    int in_place = sbuf == MPI_IN_PLACE;
    if (nb == NULL && predefined(dt)) {
        /* the user's buffers as they are: no collective buffers to lay out */
        mf_status_t status;
        const void *src = in_place ? rbuf : sbuf;
        size_t n = (size_t)count;
        switch (kind) {
        case RED_REDUCE: status = mf_coll_reduce(c, src, rbuf, n, dt, extent, op, root); break;
        case RED_ALLREDUCE: status = mf_coll_allreduce(c, src, rbuf, n, dt, extent, op); break;
        default: status = mf_coll_scan(c, sbuf, rbuf, n, dt, extent, op, kind == RED_EXSCAN); break;
        }
        return finish(func, c, status);
    }
    /* Derived types: the algorithms combine packed items (see mf_cbuf_red_type). */
    mf_cbuf_t sb, rb;
    rc = mf_cbuf_one(&sb, func, c, in_place ? NULL : sbuf, in_place ? 0 : count, dt);
    if (rc == MPI_SUCCESS) {
        rc = mf_cbuf_one(&rb, func, c, rbuf, receives ? count : 0, dt);
        if (rc != MPI_SUCCESS)
            mf_cbuf_free(&sb);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    const void *src = in_place ? rb.buf : sb.buf;
    sbuf = in_place ? sbuf : sb.buf;
    rbuf = rb.buf;
    size_t n = (size_t)count * mul;
    /* Exscan leaves rank 0's recvbuf alone. */
    int unpack = receives && !(kind == RED_EXSCAN && c->rank == 0);
    mf_sched_t *s = nb != NULL ? nb_begin(c, nb) : NULL;
    mf_cbuf_pack(&sb, s, -1);
    if (in_place)
        mf_cbuf_pack(&rb, s, -1);
    if (nb != NULL) {
        if (s != NULL) {
            if (kind == RED_REDUCE)
                mf_nbc_reduce(s, src, rbuf, n, rdt, extent, op, root);
            else if (kind == RED_ALLREDUCE)
                mf_nbc_allreduce(s, src, rbuf, n, rdt, extent, op);
            else
                mf_nbc_scan(s, sbuf, rbuf, n, rdt, extent, op, kind == RED_EXSCAN);
            if (unpack)
                mf_cbuf_unpack(&rb, s, -1);
        }
        mf_cbuf_done(&sb, s);
        mf_cbuf_done(&rb, s);
        return nb_end(func, c, nb, s);
    }
    mf_status_t status;
    switch (kind) {
    case RED_REDUCE: status = mf_coll_reduce(c, src, rbuf, n, rdt, extent, op, root); break;
    case RED_ALLREDUCE: status = mf_coll_allreduce(c, src, rbuf, n, rdt, extent, op); break;
    default: status = mf_coll_scan(c, sbuf, rbuf, n, rdt, extent, op, kind == RED_EXSCAN); break;
    }
    if (status == MF_OK && unpack)
        mf_cbuf_unpack(&rb, NULL, -1);
    mf_cbuf_free(&sb);
    mf_cbuf_free(&rb);
    return finish(func, c, status);
}

#define RED_ARGS const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op
#define RED_ARGS_C                                                                                 \
    const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype, MPI_Op op
#define RED_PASS sendbuf, recvbuf, count, datatype, op

#pragma weak MPI_Reduce = PMPI_Reduce
int PMPI_Reduce(RED_ARGS, int root, MPI_Comm comm)
{
    return reduce_common("MPI_Reduce", RED_REDUCE, RED_PASS, root, comm, NULL);
}
#pragma weak MPI_Reduce_c = PMPI_Reduce_c
int PMPI_Reduce_c(RED_ARGS_C, int root, MPI_Comm comm)
{
    return reduce_common("MPI_Reduce_c", RED_REDUCE, RED_PASS, root, comm, NULL);
}
#pragma weak MPI_Allreduce = PMPI_Allreduce
int PMPI_Allreduce(RED_ARGS, MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce", RED_ALLREDUCE, RED_PASS, -1, comm, NULL);
}
#pragma weak MPI_Allreduce_c = PMPI_Allreduce_c
int PMPI_Allreduce_c(RED_ARGS_C, MPI_Comm comm)
{
    return reduce_common("MPI_Allreduce_c", RED_ALLREDUCE, RED_PASS, -1, comm, NULL);
}
#pragma weak MPI_Scan = PMPI_Scan
int PMPI_Scan(RED_ARGS, MPI_Comm comm)
{
    return reduce_common("MPI_Scan", RED_SCAN, RED_PASS, -1, comm, NULL);
}
#pragma weak MPI_Scan_c = PMPI_Scan_c
int PMPI_Scan_c(RED_ARGS_C, MPI_Comm comm)
{
    return reduce_common("MPI_Scan_c", RED_SCAN, RED_PASS, -1, comm, NULL);
}
#pragma weak MPI_Exscan = PMPI_Exscan
int PMPI_Exscan(RED_ARGS, MPI_Comm comm)
{
    return reduce_common("MPI_Exscan", RED_EXSCAN, RED_PASS, -1, comm, NULL);
}
#pragma weak MPI_Exscan_c = PMPI_Exscan_c
int PMPI_Exscan_c(RED_ARGS_C, MPI_Comm comm)
{
    return reduce_common("MPI_Exscan_c", RED_EXSCAN, RED_PASS, -1, comm, NULL);
}

/* Reduce_scatter(_block) on up to this many ranks keeps its counts on the stack. */
#define DIRECT_RS_RANKS 32

/* Reduce_scatter (counts per rank) and Reduce_scatter_block (counts.p NULL: ucount each). */
static int reduce_scatter_common(const char *func, const void *sbuf, void *rbuf, vec_t counts,
                                 MPI_Count ucount, MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                                 const nb_t *nb)
{
    mf_comm_t *c = NULL;
    size_t bytes, extent, mul;
    MPI_Datatype rdt;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = check_nb(func, c, nb);
    if (rc == MPI_SUCCESS && !counts.given)
        rc = mf_check_count(func, c, "recvcount", ucount);
    if (rc == MPI_SUCCESS && counts.given)
        rc = mf_check_ptr(func, c, counts.p, "recvcounts");
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, "datatype", dt, 1, &bytes);
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_red_type(func, c, op, dt, &rdt, &mul, &extent);
    if (rc == MPI_SUCCESS && mf_comm_is_inter(c) && (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE))
        rc = in_place_forbidden(func, c, sbuf == MPI_IN_PLACE ? "sendbuf" : "recvbuf",
                                "which intercommunicators do not allow");
    if (rc == MPI_SUCCESS && rbuf == MPI_IN_PLACE)
        rc = in_place_forbidden(func, c, "recvbuf", "which is only allowed as sendbuf");
    if (rc != MPI_SUCCESS)
        return rc;
    size_t item = bytes; /* packed bytes of one item */
    /* Up to DIRECT_RS_RANKS the counts live on the stack (two ranks, 16 B: malloc and free
     * were a tenth of the call). */
    size_t stack_items[DIRECT_RS_RANKS];
    size_t *items = c->size <= DIRECT_RS_RANKS
                        ? stack_items
                        : mf_malloc((size_t)c->size * sizeof(size_t), "reduce-scatter counts");
    if (items == NULL)
        return mf_err_from_status(c, MF_ERR_NO_MEMORY, func, "cannot allocate the counts");
    size_t total = 0;
    for (int i = 0; i < c->size && rc == MPI_SUCCESS; i++) {
        MPI_Count n = counts.given ? vec_get(counts, i) : ucount;
        if (n < 0)
            rc = mf_err_raise(c, mf_err_code(MPI_ERR_COUNT, func,
                                             "argument recvcounts[%d]=%lld is negative", i,
                                             (long long)n));
        items[i] = (size_t)n;
        total += (size_t)n;
    }
    int in_place = sbuf == MPI_IN_PLACE;
    if (rc == MPI_SUCCESS && !in_place)
        rc = check_typed_buffer(func, c, "sendbuf", sbuf, dt, total * item);
    if (rc == MPI_SUCCESS)
        rc = check_typed_buffer(func, c, "recvbuf", rbuf, dt,
                                (in_place ? total : items[c->rank]) * item);
    if (rc == MPI_SUCCESS)
        rc = check_alias(func, c, sbuf, rbuf, total * item);
    if (rc == MPI_SUCCESS && coll_checking(c))
        rc = check_reduction(func, c, -1, op, dt, (MPI_Count)total,
                             counts.given ? counts_hash(items, c->size) : 0);
    if (rc == MPI_SUCCESS && nb == NULL && !mf_comm_is_inter(c) && predefined(dt)) {
        /* Blocking with a predefined type: the user's buffers as they are, no collective
         * buffers to lay out (two ranks, 512 B: about 1000 instructions a call less). */
        rc = finish(func, c, mf_coll_reduce_scatter(c, sbuf, rbuf, items, dt, extent, op));
        if (items != stack_items)
            free(items);
        return rc;
    }
    /* In place the whole input is in recvbuf; only this process's block comes back. */
    mf_cbuf_t sb, rb;
    mf_cbuf_clear(&sb);
    mf_cbuf_clear(&rb);
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_one(&sb, func, c, in_place ? NULL : sbuf, in_place ? 0 : total, dt);
    if (rc == MPI_SUCCESS)
        rc = mf_cbuf_one(&rb, func, c, rbuf, in_place ? total : items[c->rank], dt);
    if (rc != MPI_SUCCESS) {
        mf_cbuf_free(&sb);
        if (items != stack_items)
            free(items);
        return rc;
    }
    int inter = mf_comm_is_inter(c);
    mf_sched_t *s = nb != NULL || inter ? nb_begin(c, nb) : NULL;
    mf_cbuf_pack(&sb, s, -1);
    if (in_place)
        mf_cbuf_pack(&rb, s, -1);
    rb.counts[0] = (MPI_Count)items[c->rank];
    for (int i = 0; i < c->size; i++)
        items[i] *= mul;
    const void *src = in_place ? sbuf : sb.buf;
    if (nb == NULL && !inter) {
        rc = finish(func, c, mf_coll_reduce_scatter(c, src, rb.buf, items, rdt, extent, op));
        if (rc == MPI_SUCCESS)
            mf_cbuf_unpack(&rb, NULL, -1);
    } else {
        if (s != NULL) {
            /* Intercommunicators: recvcounts are per local process, the other group's vector
             * has the same total. */
            if (inter)
                mf_inter_reduce_scatter(s, src, rb.buf, items, rdt, extent, op);
            else
                mf_nbc_reduce_scatter(s, src, rb.buf, items, rdt, extent, op);
            mf_cbuf_unpack(&rb, s, -1);
        }
        mf_cbuf_done(&sb, s);
        mf_cbuf_done(&rb, s);
        rc = sched_end(func, c, nb, s);
    }
    mf_cbuf_free(&sb);
    mf_cbuf_free(&rb);
    if (items != stack_items)
        free(items);
    return rc;
}

#pragma weak MPI_Reduce_scatter = PMPI_Reduce_scatter
int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter", sendbuf, recvbuf, vec_of(recvcounts, 0), 0,
                                 datatype, op, comm, NULL);
}
#pragma weak MPI_Reduce_scatter_c = PMPI_Reduce_scatter_c
int PMPI_Reduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter_c", sendbuf, recvbuf, vec_of(recvcounts, 1), 0,
                                 datatype, op, comm, NULL);
}
#pragma weak MPI_Reduce_scatter_block = PMPI_Reduce_scatter_block
int PMPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter_block", sendbuf, recvbuf, vec_none(0),
                                 recvcount, datatype, op, comm, NULL);
}
#pragma weak MPI_Reduce_scatter_block_c = PMPI_Reduce_scatter_block_c
int PMPI_Reduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    return reduce_scatter_common("MPI_Reduce_scatter_block_c", sendbuf, recvbuf, vec_none(1),
                                 recvcount, datatype, op, comm, NULL);
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
    /* A v form: the non-roots' counts are not significant (often NULL), yet they must pick the
     * v algorithm as the root does. */
    int vform;
    /* The root's own block does not fit (move_own_truncated): a request completes in error. */
    int own_truncated;
} move_args_t;

/* Gathers: each process sends its block to the root (all: to everyone), which expects the
 * all-side layout; scatters the other way round. In place, a process's block travels only to
 * itself (gathers, scatters) or goes out from the receive layout (allgathers). */
static int check_move(const char *func, mf_comm_t *c, move_kind_t kind, const move_args_t *a,
                      int root)
{
    int is_root = kind == MOVE_ALLGATHER || c->rank == root;
    mf_check_peers_t one_peers = kind == MOVE_ALLGATHER ? MF_CHECK_ALL : MF_CHECK_ROOT;
    mf_check_side_t one = {0}, all = {0};
    if (a->one_buf != MPI_IN_PLACE)
        one = side(one_peers, a->one_type, NULL, a->one_count, vec_none(0));
    else if (kind == MOVE_ALLGATHER)
        one = side(MF_CHECK_ALL, a->all_type, NULL,
                   a->counts.given ? vec_get(a->counts, c->rank) : a->all_count, vec_none(0));
    if (is_root)
        all = side(MF_CHECK_ALL, a->all_type, NULL, a->all_count, a->counts);
    mf_check_t chk = {.func = func, .root = kind == MOVE_ALLGATHER ? -1 : root};
    chk.send = kind == MOVE_SCATTER ? all : one;
    chk.recv = kind == MOVE_SCATTER ? one : all;
    return mf_binding_coll_check(func, c, &chk);
}

/* The equal-block algorithms (MPI_Gather, MPI_Scatter, MPI_Alltoall) want n blocks of `block`
 * bytes back to back. Every process must take the same algorithm whatever its own layout, so a
 * layout with gaps (a resized type) goes through a packed copy, filled from cb when `fill`;
 * *tmp_p is that copy (NULL when cb's buffer is used as it is). NULL: out of memory. */
static char *blocks_packed(const mf_cbuf_t *cb, int n, size_t block, int fill, char **tmp_p)
{
    int gaps = 0;
    *tmp_p = NULL;
    for (int i = 0; i < n; i++)
        gaps |= cb->lens[i] != block || cb->displs[i] != (size_t)i * block;
    /* NULL means out of memory: a user buffer may be NULL when every block is empty */
    static char no_data[1];
    if (!gaps)
        return cb->buf != NULL ? cb->buf : no_data;
    char *tmp = mf_malloc((size_t)n * block + 1, "collective blocks");
    for (int i = 0; tmp != NULL && fill && i < n; i++)
        memcpy(tmp + (size_t)i * block, cb->buf + cb->displs[i],
               cb->lens[i] < block ? cb->lens[i] : block);
    *tmp_p = tmp;
    return tmp;
}

/* Copy the blocks of a packed copy back to cb's layout (nothing when tmp is NULL). */
static void blocks_unpacked(mf_cbuf_t *cb, int n, size_t block, const char *tmp)
{
    for (int i = 0; tmp != NULL && i < n; i++)
        memcpy(cb->buf + cb->displs[i], tmp + (size_t)i * block,
               cb->lens[i] < block ? cb->lens[i] : block);
}

/* The all-side checks of move_common: counts, displacements, type, the per-block layout. */
static int move_all_layout(const char *func, mf_comm_t *c, move_kind_t kind, const move_args_t *a,
                           mf_cbuf_t *all)
{
    const char *cname = kind == MOVE_SCATTER ? "sendcounts" : "recvcounts";
    size_t unused;
    int rc;
    if (!a->counts.given)
        rc =
            mf_check_count(func, c, kind == MOVE_SCATTER ? "sendcount" : "recvcount", a->all_count);
    else
        rc = mf_check_ptr(func, c, a->counts.p, cname);
    if (rc == MPI_SUCCESS && a->counts.given)
        rc = mf_check_ptr(func, c, a->displs.p, "displs");
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, kind == MOVE_SCATTER ? "sendtype" : "recvtype", a->all_type,
                               0, &unused);
    if (rc != MPI_SUCCESS)
        return rc;
    if (a->all_buf == MPI_IN_PLACE)
        return in_place_forbidden(func, c, kind == MOVE_SCATTER ? "sendbuf" : "recvbuf",
                                  "which is not allowed there");
    return layout(func, c, cname, kind == MOVE_SCATTER ? "sendbuf" : "recvbuf", a->counts,
                  a->displs, a->all_count, a->all_type, NULL, a->all_buf, all);
}

/* mf_inter_allgather wants the remote blocks back to back; when a (resized) receive type keeps
 * them apart, receive into scratch and copy each block to its place. Both groups must run the
 * same algorithm, so this cannot fall back to the Allgatherv one. */
static void inter_allgather(mf_sched_t *s, const mf_cbuf_t *one, size_t one_bytes,
                            const mf_cbuf_t *all)
{
    size_t len = all->lens[0];
    int apart = 0;
    for (int i = 0; i < all->n; i++)
        apart |= all->displs[i] != (size_t)i * len;
    if (!apart) {
        mf_inter_allgather(s, one->buf, one_bytes, all->buf, len);
        return;
    }
    char *tmp = mf_sched_tmp(s, (size_t)all->n * len);
    if (tmp == NULL)
        return;
    mf_inter_allgather(s, one->buf, one_bytes, tmp, len);
    mf_sched_barrier(s);
    for (int i = 0; i < all->n; i++)
        mf_sched_copy(s, all->buf + all->displs[i], tmp + (size_t)i * len, len);
}

/* Gathers, scatters, allgathers on an intercommunicator (root checked): the root (MPI_ROOT)
 * supplies the all side, one block per remote process; the other group the one side;
 * MPI_PROC_NULL nothing; allgathers both. MPI_IN_PLACE is not allowed. */
static int move_inter(const char *func, move_kind_t kind, const move_args_t *a, int root,
                      mf_comm_t *c, const nb_t *nb)
{
    int all_side = kind == MOVE_ALLGATHER || root == MPI_ROOT;
    int one_side = kind == MOVE_ALLGATHER || (root != MPI_ROOT && root != MPI_PROC_NULL);
    size_t one_bytes = 0;
    mf_cbuf_t one, all;
    mf_cbuf_clear(&one);
    mf_cbuf_clear(&all);
    int rc = MPI_SUCCESS;
    if (one_side) {
        const char *one_name = kind == MOVE_SCATTER ? "recvbuf" : "sendbuf";
        if (a->one_buf == MPI_IN_PLACE)
            return in_place_forbidden(func, c, one_name, "which intercommunicators do not allow");
        rc = check_data(func, c, one_name, a->one_buf,
                        kind == MOVE_SCATTER ? "recvcount" : "sendcount", a->one_count,
                        kind == MOVE_SCATTER ? "recvtype" : "sendtype", a->one_type, &one_bytes);
        if (rc == MPI_SUCCESS)
            rc = mf_cbuf_one(&one, func, c, a->one_buf, a->one_count, a->one_type);
    }
    if (rc == MPI_SUCCESS && all_side)
        rc = move_all_layout(func, c, kind, a, &all);
    if (rc == MPI_SUCCESS && kind == MOVE_ALLGATHER && all.total > 0)
        rc = check_alias(func, c, a->one_buf, a->all_buf, one_bytes);
    if (rc != MPI_SUCCESS) {
        mf_cbuf_free(&one);
        mf_cbuf_free(&all);
        return rc;
    }
    /* Scatters send the all side, the others the one side; the other side is unpacked after. */
    mf_sched_t *s = nb_begin(c, nb);
    if (s != NULL) {
        mf_cbuf_pack(kind == MOVE_SCATTER ? &all : &one, s, -1);
        if (kind == MOVE_GATHER)
            mf_inter_gatherv(s, one.buf, one_bytes, all.buf, all.lens, all.displs, root);
        else if (kind == MOVE_SCATTER)
            mf_inter_scatterv(s, all.buf, all.lens, all.displs, one.buf, one_bytes, root);
        else if (!a->counts.given)
            inter_allgather(s, &one, one_bytes, &all);
        else
            mf_inter_allgatherv(s, one.buf, one_bytes, all.buf, all.lens, all.displs);
        mf_cbuf_unpack(kind == MOVE_SCATTER ? &one : &all, s, -1);
    }
    mf_cbuf_done(&one, s);
    mf_cbuf_done(&all, s);
    return sched_end(func, c, nb, s);
}

/* The root's own block: what it sends itself must fit what it expects (mine bytes). */
static MF_HOT_PATH int check_own_block(const char *func, mf_comm_t *c, move_kind_t kind,
                                       const move_args_t *a, size_t one_bytes, size_t mine)
{
    if (a->one_buf != MPI_IN_PLACE && one_bytes != mine &&
        (kind == MOVE_SCATTER ? mine > one_bytes : one_bytes > mine))
        return mf_err_raise(c, mf_err_code(MPI_ERR_TRUNCATE, func,
                                           "the root's own block is %zu bytes but %zu bytes are "
                                           "expected",
                                           kind == MOVE_SCATTER ? mine : one_bytes,
                                           kind == MOVE_SCATTER ? one_bytes : mine));
    return check_alias(func, c, a->one_buf, a->all_buf, mine);
}

/* Blocking MPI_Gather/MPI_Scatter with predefined types (the one side checked): the blocks lie
 * back to back in the user's buffers, so the collective buffers and their layout, which cost
 * as much as a small call on one node, are skipped. The root's checks are move_all_layout's. */
static int move_direct(const char *func, move_kind_t kind, const move_args_t *a, int root,
                       mf_comm_t *c, size_t one_bytes)
{
    const void *one_buf = a->one_buf;
    char *all_buf = NULL;
    size_t block = one_bytes;
    int rc = MPI_SUCCESS;
    if (c->rank == root) {
        const char *cname = kind == MOVE_SCATTER ? "sendcount" : "recvcount";
        rc = mf_check_count(func, c, cname, a->all_count);
        if (rc == MPI_SUCCESS)
            rc = mf_check_datatype(func, c, kind == MOVE_SCATTER ? "sendtype" : "recvtype",
                                   a->all_type, a->all_count, &block);
        if (rc != MPI_SUCCESS)
            return rc;
        if (a->all_buf == MPI_IN_PLACE)
            return in_place_forbidden(func, c, kind == MOVE_SCATTER ? "sendbuf" : "recvbuf",
                                      "which is not allowed there");
        rc = check_typed_buffer(func, c, kind == MOVE_SCATTER ? "sendbuf" : "recvbuf", a->all_buf,
                                a->all_type, block * (size_t)c->size);
        if (rc == MPI_SUCCESS)
            rc = check_own_block(func, c, kind, a, one_bytes, block);
        if (rc != MPI_SUCCESS)
            return rc;
        all_buf = a->all_buf;
    }
    mf_status_t status = kind == MOVE_GATHER
                             ? mf_coll_gather(c, one_buf, block, all_buf, root)
                             : mf_coll_scatter(c, all_buf, block, (void *)one_buf, root);
    return finish(func, c, status);
}

/* Blocking MPI_Allgather on up to this many ranks can take allgather_direct (its layout arrays
 * live on the stack). */
#define DIRECT_ALLGATHER_RANKS 32

/* Blocking MPI_Allgather with predefined types and equal blocks (the send side checked): as
 * move_direct, the user's buffers go to the algorithm as they are (two ranks, 8 B: 1000
 * instructions a call before). Returns -1 when the call needs the general path (unequal or
 * empty blocks, many ranks), without raising. */
static int allgather_direct(const char *func, const move_args_t *a, mf_comm_t *c, size_t one_bytes)
{
    int size = c->size, in_place = a->one_buf == MPI_IN_PLACE;
    size_t block = 0;
    int rc = mf_check_count(func, c, "recvcount", a->all_count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, "recvtype", a->all_type, a->all_count, &block);
    if (rc != MPI_SUCCESS)
        return rc;
    if (a->all_buf == MPI_IN_PLACE)
        return in_place_forbidden(func, c, "recvbuf", "which is not allowed there");
    if (size > DIRECT_ALLGATHER_RANKS || block == 0 || (!in_place && one_bytes != block) ||
        block > SIZE_MAX / (size_t)size)
        return -1;
    rc = mf_check_buffer(func, c, "recvbuf", a->all_buf, block * (size_t)size);
    if (rc == MPI_SUCCESS)
        rc = check_alias(func, c, a->one_buf, a->all_buf, block);
    if (rc == MPI_SUCCESS)
        rc = check_overlap(func, c, a->one_buf, block, a->all_buf, block * (size_t)size);
    if (rc != MPI_SUCCESS)
        return rc;
    size_t arr[2 * DIRECT_ALLGATHER_RANKS];
    for (int i = 0; i < size; i++) {
        arr[i] = block;
        arr[size + i] = (size_t)i * block;
    }
    return finish(func, c,
                  mf_coll_allgatherv(c, in_place ? MPI_IN_PLACE : a->one_buf,
                                     in_place ? 0 : one_bytes, a->all_buf, arr, arr + size));
}

static int move_common(const char *func, move_kind_t kind, const move_args_t *a, int root,
                       MPI_Comm comm, const nb_t *nb);

/* Whether the root's own block of a gather or scatter does not fit where it goes (the root
 * sends itself more than it expects), judged from valid arguments only: invalid ones are
 * raised by the usual checks. */
static int own_block_truncates(move_kind_t kind, const move_args_t *a, int root, size_t one_bytes)
{
    mf_dtype_props_t p = {0};
    MPI_Count count =
        a->vform ? (a->counts.p != NULL ? vec_get(a->counts, root) : -1) : a->all_count;
    if (count < 0 || mf_dtype_props(a->all_type, &p) != MF_OK || !p.committed)
        return 0;
    MPI_Count mine;
    if (__builtin_mul_overflow(count, p.size, &mine))
        return 0;
    return kind == MOVE_SCATTER ? (size_t)mine > one_bytes : one_bytes > (size_t)mine;
}

static mf_status_t own_block_truncated_step(mf_sched_t *s, void *arg)
{
    (void)s;
    (void)arg;
    return MF_ERR_TRUNCATE;
}

/* The root whose own block does not fit still takes part, or the others would wait for it
 * for ever: its own block stays where it is (as with MPI_IN_PLACE), everything else moves,
 * and the call reports MPI_ERR_TRUNCATE. A nonblocking or persistent call returns its request
 * and reports the error at completion, so that the request is not lost (a program that sees
 * an error from the call never waits for it). */
static int move_own_truncated(const char *func, move_kind_t kind, const move_args_t *a, int root,
                              MPI_Comm comm, const nb_t *nb)
{
    move_args_t in_place = *a;
    in_place.one_buf = MPI_IN_PLACE;
    in_place.one_count = 0;
    in_place.own_truncated = 1;
    int rc = move_common(func, kind, &in_place, root, comm, nb);
    if (rc != MPI_SUCCESS || nb != NULL)
        return rc;
    mf_comm_t *c = NULL;
    mf_check_init_comm(func, comm, &c);
    return mf_err_raise(
        c, mf_err_code(MPI_ERR_TRUNCATE, func, "%s",
                       kind == MOVE_SCATTER
                           ? "the root's own block of sendbuf is longer than its recvcount x "
                             "recvtype; its recvbuf was left as it was, the others got theirs"
                           : "the root's sendcount x sendtype is longer than its own block of "
                             "recvbuf (recvcount x recvtype), which was left as it was; the "
                             "others' blocks arrived"));
}

static int move_common(const char *func, move_kind_t kind, const move_args_t *a, int root,
                       MPI_Comm comm, const nb_t *nb)
{
    mf_comm_t *c = NULL;
    size_t one_bytes = 0;
    mf_cbuf_t one, all;
    mf_cbuf_clear(&one);
    mf_cbuf_clear(&all);
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = check_nb(func, c, nb);
    if (rc == MPI_SUCCESS && kind != MOVE_ALLGATHER)
        rc = check_root(func, c, root);
    if (rc == MPI_SUCCESS && mf_comm_is_inter(c))
        return move_inter(func, kind, a, root, c, nb);
    if (rc != MPI_SUCCESS)
        return rc;
    int is_root = kind == MOVE_ALLGATHER || c->rank == root;
    const char *one_name = kind == MOVE_SCATTER ? "recvbuf" : "sendbuf";
    int one_in_place = a->one_buf == MPI_IN_PLACE;
    if (one_in_place && !is_root)
        return in_place_forbidden(func, c, one_name, "which is only allowed at the root");
    if (!one_in_place) {
        rc = check_data(func, c, one_name, a->one_buf,
                        kind == MOVE_SCATTER ? "recvcount" : "sendcount", a->one_count,
                        kind == MOVE_SCATTER ? "recvtype" : "sendtype", a->one_type, &one_bytes);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (kind != MOVE_ALLGATHER && is_root && !one_in_place &&
        own_block_truncates(kind, a, root, one_bytes))
        return move_own_truncated(func, kind, a, root, comm, nb);
    if (nb == NULL && kind != MOVE_ALLGATHER && !a->vform && !coll_checking(c) &&
        (one_in_place || predefined(a->one_type)) && (!is_root || predefined(a->all_type)))
        return move_direct(func, kind, a, root, c, one_in_place ? 0 : one_bytes);
    if (nb == NULL && kind == MOVE_ALLGATHER && !a->vform && !coll_checking(c) &&
        (one_in_place || predefined(a->one_type)) && predefined(a->all_type)) {
        rc = allgather_direct(func, a, c, one_bytes);
        if (rc != -1)
            return rc;
        rc = MPI_SUCCESS;
    }
    if (is_root) {
        rc = move_all_layout(func, c, kind, a, &all);
        if (rc != MPI_SUCCESS)
            return rc;
        rc = check_own_block(func, c, kind, a, one_bytes, all.lens[c->rank]);
        if (rc != MPI_SUCCESS) {
            mf_cbuf_free(&all);
            return rc;
        }
    }
    /* An Allgather(v) process whose send is shorter than its own block of recvbuf (their type
     * signatures must be equal) sends the others a block of which only the first bytes are its
     * data: the call still runs, and fails (a schedule's failure reaches the others too). */
    size_t own_len = kind == MOVE_ALLGATHER ? all.lens[c->rank] : 0;
    int own_short = kind == MOVE_ALLGATHER && !one_in_place && one_bytes < own_len;
    if (coll_checking(c))
        rc = check_move(func, c, kind, a, root);
    if (rc == MPI_SUCCESS && !one_in_place)
        rc = mf_cbuf_one(&one, func, c, a->one_buf, a->one_count, a->one_type);
    /* Where both sides are runs in the user's buffers (not packed), their blocks are exactly
     * the memory touched: the one side must meet none of the all side's. */
    if (rc == MPI_SUCCESS && is_root && !one_in_place && one.tmp == NULL && all.tmp == NULL) {
        for (int i = 0; i < all.n && rc == MPI_SUCCESS; i++)
            rc = check_overlap(func, c, one.buf, one_bytes, all.buf + all.displs[i], all.lens[i]);
    }
    if (rc != MPI_SUCCESS) {
        mf_cbuf_free(&one);
        mf_cbuf_free(&all);
        return rc;
    }
    size_t n = one_in_place ? 0 : one_bytes;
    const void *one_buf = one_in_place ? MPI_IN_PLACE : one.buf;
    const size_t *lens = all.lens, *displs = all.displs;
    /* Scatters send the all side; gathers send the one side, and in place the root's own
     * block already sits in the all side, where the packed copy must hold it too. */
    mf_sched_t *s = nb != NULL ? nb_begin(c, nb) : NULL;
    if (s != NULL && own_short) /* first, so that every message it sends carries the failure */
        mf_sched_call(s, own_block_truncated_step, NULL);
    mf_cbuf_pack(kind == MOVE_SCATTER ? &all : &one, s, -1);
    if (one_in_place && kind != MOVE_SCATTER)
        mf_cbuf_pack(&all, s, c->rank);
    mf_cbuf_t *out = kind == MOVE_SCATTER ? &one : &all;
    if (nb != NULL) {
        if (s != NULL) {
            if (kind == MOVE_GATHER)
                mf_nbc_gatherv(s, one_buf, n, all.buf, lens, displs, root);
            else if (kind == MOVE_SCATTER)
                mf_nbc_scatterv(s, all.buf, lens, displs, (void *)one_buf, n, root);
            else
                mf_nbc_allgatherv(s, one_buf, n, all.buf, lens, displs);
            mf_cbuf_unpack(out, s, -1);
            if (a->own_truncated) /* last: the others' blocks still move */
                mf_sched_call(s, own_block_truncated_step, NULL);
        }
        mf_cbuf_done(&one, s);
        mf_cbuf_done(&all, s);
        return nb_end(func, c, nb, s);
    }
    mf_status_t status;
    if (kind != MOVE_ALLGATHER && !a->vform) {
        /* MPI_Gather/Scatter: equal blocks, the root's back to back */
        size_t block = c->rank == root ? lens[0] : n;
        char *tmp = NULL, *blocks = c->rank != root
                                        ? NULL
                                        : blocks_packed(&all, c->size, block,
                                                        kind == MOVE_SCATTER || one_in_place, &tmp);
        if (c->rank == root && blocks == NULL)
            status = MF_ERR_NO_MEMORY;
        else if (kind == MOVE_GATHER)
            status = mf_coll_gather(c, one_buf, block, blocks, root);
        else
            status = mf_coll_scatter(c, blocks, block, (void *)one_buf, root);
        if (status == MF_OK && kind == MOVE_GATHER)
            blocks_unpacked(&all, c->size, block, tmp);
        free(tmp);
    } else if (kind == MOVE_GATHER)
        status = mf_coll_gatherv(c, one_buf, n, all.buf, lens, displs, root);
    else if (kind == MOVE_SCATTER)
        status = mf_coll_scatterv(c, all.buf, lens, displs, (void *)one_buf, n, root);
    else
        status = mf_coll_allgatherv(c, one_buf, n, all.buf, lens, displs);
    if (status == MF_OK)
        mf_cbuf_unpack(out, NULL, -1);
    mf_cbuf_free(&one);
    mf_cbuf_free(&all);
    if (status == MF_OK && own_short)
        return mf_err_raise(c, mf_err_code(MPI_ERR_TRUNCATE, func,
                                           "sendcount x sendtype (%zu bytes) is shorter than "
                                           "this process's own block of recvbuf (%zu bytes), "
                                           "whose type signatures must be equal",
                                           one_bytes, own_len));
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
                       MPI_Datatype recvtype, int root, MPI_Comm comm, const nb_t *nb)
{
    move_args_t a;
    if (kind == MOVE_SCATTER) {
        a = (move_args_t){
            recvbuf,  recvcount, recvtype, (void *)sendbuf, vec_none(0), vec_none(0), sendcount,
            sendtype, 0,         0};
    } else {
        a = (move_args_t){sendbuf,     sendcount, sendtype, recvbuf, vec_none(0),
                          vec_none(0), recvcount, recvtype, 0,       0};
    }
    return move_common(func, kind, &a, root, comm, nb);
}

#pragma weak MPI_Gather = PMPI_Gather
int PMPI_Gather(GATHER_ARGS, int root, MPI_Comm comm)
{
    return gather_like("MPI_Gather", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm, NULL);
}
#pragma weak MPI_Gather_c = PMPI_Gather_c
int PMPI_Gather_c(GATHER_ARGS_C, int root, MPI_Comm comm)
{
    return gather_like("MPI_Gather_c", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, NULL);
}
#pragma weak MPI_Scatter = PMPI_Scatter
int PMPI_Scatter(GATHER_ARGS, int root, MPI_Comm comm)
{
    return gather_like("MPI_Scatter", MOVE_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, NULL);
}
#pragma weak MPI_Scatter_c = PMPI_Scatter_c
int PMPI_Scatter_c(GATHER_ARGS_C, int root, MPI_Comm comm)
{
    return gather_like("MPI_Scatter_c", MOVE_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, NULL);
}
#pragma weak MPI_Allgather = PMPI_Allgather
int PMPI_Allgather(GATHER_ARGS, MPI_Comm comm)
{
    return gather_like("MPI_Allgather", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, 0, comm, NULL);
}
#pragma weak MPI_Allgather_c = PMPI_Allgather_c
int PMPI_Allgather_c(GATHER_ARGS_C, MPI_Comm comm)
{
    return gather_like("MPI_Allgather_c", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, 0, comm, NULL);
}

static int gatherv_like(const char *func, move_kind_t kind, const void *one_buf,
                        MPI_Count one_count, MPI_Datatype one_type, void *all_buf, vec_t counts,
                        vec_t displs, MPI_Datatype all_type, int root, MPI_Comm comm,
                        const nb_t *nb)
{
    move_args_t a = {one_buf, one_count, one_type, all_buf, counts, displs, 0, all_type, 1, 0};
    return move_common(func, kind, &a, root, comm, nb);
}

#pragma weak MPI_Gatherv = PMPI_Gatherv
int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    return gatherv_like("MPI_Gatherv", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 0), vec_of(displs, 0), recvtype, root, comm, NULL);
}
#pragma weak MPI_Gatherv_c = PMPI_Gatherv_c
int PMPI_Gatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                   int root, MPI_Comm comm)
{
    return gatherv_like("MPI_Gatherv_c", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 1), vec_of(displs, 1), recvtype, root, comm, NULL);
}
#pragma weak MPI_Scatterv = PMPI_Scatterv
int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    return gatherv_like("MPI_Scatterv", MOVE_SCATTER, recvbuf, recvcount, recvtype, (void *)sendbuf,
                        vec_of(sendcounts, 0), vec_of(displs, 0), sendtype, root, comm, NULL);
}
#pragma weak MPI_Scatterv_c = PMPI_Scatterv_c
int PMPI_Scatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                    MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                    MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    return gatherv_like("MPI_Scatterv_c", MOVE_SCATTER, recvbuf, recvcount, recvtype,
                        (void *)sendbuf, vec_of(sendcounts, 1), vec_of(displs, 1), sendtype, root,
                        comm, NULL);
}
#pragma weak MPI_Allgatherv = PMPI_Allgatherv
int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    return gatherv_like("MPI_Allgatherv", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 0), vec_of(displs, 0), recvtype, 0, comm, NULL);
}
#pragma weak MPI_Allgatherv_c = PMPI_Allgatherv_c
int PMPI_Allgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      MPI_Datatype recvtype, MPI_Comm comm)
{
    return gatherv_like("MPI_Allgatherv_c", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 1), vec_of(displs, 1), recvtype, 0, comm, NULL);
}

/* ---- all-to-all -------------------------------------------------------------------------- */

/* Alltoall (no arrays given), Alltoallv (one type per side) and Alltoallw (types[] per peer,
 * displacements in bytes). */
typedef struct {
    const void *buf;
    vec_t counts, displs;
    MPI_Count count;
    MPI_Datatype type;         /* NULL for Alltoallw */
    const MPI_Datatype *types; /* Alltoallw: the caller's array, which may be NULL (an error) */
} a2a_side_t;

static int a2a_layout(const char *func, mf_comm_t *c, const a2a_side_t *s, int is_send,
                      mf_cbuf_t *cb)
{
    const char *cname = is_send ? "sendcounts" : "recvcounts";
    int rc = MPI_SUCCESS;
    if (!s->counts.given)
        rc = mf_check_count(func, c, is_send ? "sendcount" : "recvcount", s->count);
    else
        rc = mf_check_ptr(func, c, s->counts.p, cname);
    if (rc == MPI_SUCCESS && s->counts.given)
        rc = mf_check_ptr(func, c, s->displs.p, is_send ? "sdispls" : "rdispls");
    int w = s->type == NULL;
    if (rc == MPI_SUCCESS && w)
        rc = mf_check_ptr(func, c, s->types, is_send ? "sendtypes" : "recvtypes");
    if (rc == MPI_SUCCESS && !w) {
        size_t unused;
        rc = mf_check_datatype(func, c, is_send ? "sendtype" : "recvtype", s->type, 0, &unused);
    }
    if (rc != MPI_SUCCESS)
        return rc;
    /* Alltoallw: a type per peer and byte displacements. */
    return layout(func, c, cname, is_send ? "sendbuf" : "recvbuf", s->counts, s->displs, s->count,
                  s->type, s->types, s->buf, cb);
}

/* In place, the receive layout is also what goes out. */
static int check_alltoall(const char *func, mf_comm_t *c, const a2a_side_t *snd,
                          const a2a_side_t *rcv)
{
    mf_check_t chk = {.func = func, .root = -1};
    chk.send = side(MF_CHECK_ALL, snd->type, snd->types, snd->count, snd->counts);
    chk.recv = side(MF_CHECK_ALL, rcv->type, rcv->types, rcv->count, rcv->counts);
    return mf_binding_coll_check(func, c, &chk);
}

/* Blocking MPI_Alltoall with predefined types and equal send and receive blocks: the blocks
 * lie back to back in the user's buffers, so the collective buffers and their layout (most of
 * a two-rank call of 8 B: 2200 instructions against 800 for Gather) are skipped. Returns -1
 * when the call needs the general path (unequal blocks, empty blocks), without raising. */
static int alltoall_direct(const char *func, mf_comm_t *c, const a2a_side_t *snd,
                           const a2a_side_t *rcv)
{
    int in_place = snd->buf == MPI_IN_PLACE;
    size_t sbytes = 0, rbytes = 0, n = (size_t)c->size;
    int rc = MPI_SUCCESS;
    if (!in_place) {
        rc = mf_check_count(func, c, "sendcount", snd->count);
        if (rc == MPI_SUCCESS)
            rc = mf_check_datatype(func, c, "sendtype", snd->type, snd->count, &sbytes);
    }
    if (rc == MPI_SUCCESS)
        rc = mf_check_count(func, c, "recvcount", rcv->count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, "recvtype", rcv->type, rcv->count, &rbytes);
    if (rc != MPI_SUCCESS)
        return rc;
    if (rbytes == 0 || (!in_place && sbytes != rbytes) || rbytes > SIZE_MAX / n)
        return -1;
    if (!in_place)
        rc = mf_check_buffer(func, c, "sendbuf", snd->buf, sbytes * n);
    if (rc == MPI_SUCCESS)
        rc = mf_check_buffer(func, c, "recvbuf", rcv->buf, rbytes * n);
    if (rc == MPI_SUCCESS)
        rc = check_alias(func, c, snd->buf, rcv->buf, rbytes * n);
    if (rc == MPI_SUCCESS && !in_place)
        rc = check_overlap(func, c, snd->buf, sbytes * n, rcv->buf, rbytes * n);
    if (rc != MPI_SUCCESS)
        return rc;
    /* rcv->buf is the caller's recvbuf (a2a_side_t keeps both sides const) */
    return finish(func, c, mf_coll_alltoall(c, snd->buf, rbytes, (void *)rcv->buf));
}

static int alltoall_common(const char *func, const a2a_side_t *snd, const a2a_side_t *rcv,
                           MPI_Comm comm, const nb_t *nb)
{
    mf_comm_t *c = NULL;
    mf_cbuf_t sb, rb;
    mf_cbuf_clear(&sb);
    mf_cbuf_clear(&rb);
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = check_nb(func, c, nb);
    if (rc != MPI_SUCCESS)
        return rc;
    if (rcv->buf == MPI_IN_PLACE)
        return in_place_forbidden(func, c, "recvbuf", "which is not allowed there");
    int in_place = snd->buf == MPI_IN_PLACE;
    if (in_place && mf_comm_is_inter(c))
        return in_place_forbidden(func, c, "sendbuf", "which intercommunicators do not allow");
    if (nb == NULL && !rcv->counts.given && rcv->types == NULL && !mf_comm_is_inter(c) &&
        !coll_checking(c) && predefined(rcv->type) && (in_place || predefined(snd->type))) {
        rc = alltoall_direct(func, c, snd, rcv);
        if (rc != -1)
            return rc;
        rc = MPI_SUCCESS;
    }
    if (!in_place) {
        rc = a2a_layout(func, c, snd, 1, &sb);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    rc = a2a_layout(func, c, rcv, 0, &rb);
    /* Nothing received: buffers of length 0 may well share an address (mpi4py's do). */
    if (rc == MPI_SUCCESS && rcv->buf != NULL)
        rc = check_alias(func, c, snd->buf, rcv->buf, rb.total);
    if (rc == MPI_SUCCESS && coll_checking(c))
        rc = check_alltoall(func, c, in_place ? rcv : snd, rcv);
    const void *sbuf = in_place ? MPI_IN_PLACE : sb.buf;
    /* Intercommunicators run a schedule in every form (sched_end waits in the blocking one). */
    int use_sched = nb != NULL || mf_comm_is_inter(c);
    /* In place the receive blocks are also the input. */
    mf_sched_t *s = rc == MPI_SUCCESS && use_sched ? nb_begin(c, nb) : NULL;
    if (rc == MPI_SUCCESS) {
        mf_cbuf_pack(&sb, s, -1);
        if (in_place)
            mf_cbuf_pack(&rb, s, -1);
    }
    if (rc == MPI_SUCCESS && use_sched) {
        mf_status_t status = MF_OK;
        if (s != NULL && mf_comm_is_inter(c))
            mf_inter_alltoallv(s, sbuf, sb.lens, sb.displs, rb.buf, rb.lens, rb.displs);
        else if (s != NULL)
            status = mf_nbc_alltoallv(s, sbuf, sb.lens, sb.displs, rb.buf, rb.lens, rb.displs);
        if (s != NULL && status == MF_OK)
            mf_cbuf_unpack(&rb, s, -1);
        mf_cbuf_done(&sb, s);
        mf_cbuf_done(&rb, s);
        if (status != MF_OK) {
            mf_sched_free(s);
            rc = finish(func, c, status);
        } else {
            rc = sched_end(func, c, nb, s);
        }
    } else if (rc == MPI_SUCCESS) {
        mf_status_t status;
        if (!rcv->counts.given && rcv->types == NULL) {
            /* MPI_Alltoall: equal blocks, back to back on both sides */
            size_t block = rb.lens[0];
            char *stmp = NULL, *rtmp = NULL;
            const char *sblocks =
                in_place ? MPI_IN_PLACE : blocks_packed(&sb, c->size, block, 1, &stmp);
            char *rblocks = blocks_packed(&rb, c->size, block, in_place, &rtmp);
            if (sblocks == NULL || rblocks == NULL)
                status = MF_ERR_NO_MEMORY;
            else
                status = mf_coll_alltoall(c, sblocks, block, rblocks);
            if (status == MF_OK)
                blocks_unpacked(&rb, c->size, block, rtmp);
            free(stmp);
            free(rtmp);
        } else {
            status = mf_coll_alltoallv(c, sbuf, sb.lens, sb.displs, rb.buf, rb.lens, rb.displs);
        }
        if (status == MF_OK)
            mf_cbuf_unpack(&rb, NULL, -1);
        rc = finish(func, c, status);
    }
    mf_cbuf_free(&sb);
    mf_cbuf_free(&rb);
    return rc;
}

#pragma weak MPI_Alltoall = PMPI_Alltoall
int PMPI_Alltoall(GATHER_ARGS, MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_none(0), vec_none(0), sendcount, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_none(0), vec_none(0), recvcount, recvtype, NULL};
    return alltoall_common("MPI_Alltoall", &s, &r, comm, NULL);
}
#pragma weak MPI_Alltoall_c = PMPI_Alltoall_c
int PMPI_Alltoall_c(GATHER_ARGS_C, MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_none(0), vec_none(0), sendcount, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_none(0), vec_none(0), recvcount, recvtype, NULL};
    return alltoall_common("MPI_Alltoall_c", &s, &r, comm, NULL);
}
#pragma weak MPI_Alltoallv = PMPI_Alltoallv
int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 0), vec_of(sdispls, 0), 0, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 0), vec_of(rdispls, 0), 0, recvtype, NULL};
    return alltoall_common("MPI_Alltoallv", &s, &r, comm, NULL);
}
#pragma weak MPI_Alltoallv_c = PMPI_Alltoallv_c
int PMPI_Alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 1), vec_of(sdispls, 1), 0, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 1), vec_of(rdispls, 1), 0, recvtype, NULL};
    return alltoall_common("MPI_Alltoallv_c", &s, &r, comm, NULL);
}
#pragma weak MPI_Alltoallw = PMPI_Alltoallw
int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 0), vec_of(sdispls, 0), 0, NULL, sendtypes};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 0), vec_of(rdispls, 0), 0, NULL, recvtypes};
    return alltoall_common("MPI_Alltoallw", &s, &r, comm, NULL);
}
#pragma weak MPI_Alltoallw_c = PMPI_Alltoallw_c
int PMPI_Alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                     const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 1), vec_of(sdispls, 1), 0, NULL, sendtypes};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 1), vec_of(rdispls, 1), 0, NULL, recvtypes};
    return alltoall_common("MPI_Alltoallw_c", &s, &r, comm, NULL);
}

/* ---- non-blocking and persistent forms --------------------------------------------------- */

/* Each MPI_I<coll> and MPI_<Coll>_init (int and _c) goes through the blocking form's checked
 * implementation with an nb_t saying which form it is; the schedule algorithms are in
 * src/coll/coll_nbc.c. */

static int barrier_nb(const char *func, MPI_Comm comm, const nb_t *nb)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = check_nb(func, c, nb);
    if (rc == MPI_SUCCESS && coll_checking(c))
        rc = mf_binding_coll_check(func, c, &(mf_check_t){.func = func, .root = -1});
    if (rc != MPI_SUCCESS)
        return rc;
    mf_sched_t *s = nb_begin(c, nb);
    if (s != NULL && mf_comm_is_inter(c))
        mf_inter_barrier(s);
    else if (s != NULL)
        mf_nbc_barrier(s);
    return nb_end(func, c, nb, s);
}

#pragma weak MPI_Ibarrier = PMPI_Ibarrier
int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return barrier_nb("MPI_Ibarrier", comm, &nb);
}

#pragma weak MPI_Barrier_init = PMPI_Barrier_init
int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return barrier_nb("MPI_Barrier_init", comm, &nb);
}

#pragma weak MPI_Ibcast = PMPI_Ibcast
int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return bcast_common("MPI_Ibcast", buffer, count, datatype, root, comm, &nb);
}

#pragma weak MPI_Ibcast_c = PMPI_Ibcast_c
int PMPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return bcast_common("MPI_Ibcast_c", buffer, count, datatype, root, comm, &nb);
}

#pragma weak MPI_Bcast_init = PMPI_Bcast_init
int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return bcast_common("MPI_Bcast_init", buffer, count, datatype, root, comm, &nb);
}

#pragma weak MPI_Bcast_init_c = PMPI_Bcast_init_c
int PMPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root, MPI_Comm comm,
                      MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return bcast_common("MPI_Bcast_init_c", buffer, count, datatype, root, comm, &nb);
}

#pragma weak MPI_Ireduce = PMPI_Ireduce
int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_common("MPI_Ireduce", RED_REDUCE, sendbuf, recvbuf, count, datatype, op, root,
                         comm, &nb);
}

#pragma weak MPI_Ireduce_c = PMPI_Ireduce_c
int PMPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_common("MPI_Ireduce_c", RED_REDUCE, sendbuf, recvbuf, count, datatype, op, root,
                         comm, &nb);
}

#pragma weak MPI_Reduce_init = PMPI_Reduce_init
int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_common("MPI_Reduce_init", RED_REDUCE, sendbuf, recvbuf, count, datatype, op, root,
                         comm, &nb);
}

#pragma weak MPI_Reduce_init_c = PMPI_Reduce_init_c
int PMPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_common("MPI_Reduce_init_c", RED_REDUCE, sendbuf, recvbuf, count, datatype, op,
                         root, comm, &nb);
}

#pragma weak MPI_Iallreduce = PMPI_Iallreduce
int PMPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                    MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_common("MPI_Iallreduce", RED_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, -1,
                         comm, &nb);
}

#pragma weak MPI_Iallreduce_c = PMPI_Iallreduce_c
int PMPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_common("MPI_Iallreduce_c", RED_ALLREDUCE, sendbuf, recvbuf, count, datatype, op,
                         -1, comm, &nb);
}

#pragma weak MPI_Allreduce_init = PMPI_Allreduce_init
int PMPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_common("MPI_Allreduce_init", RED_ALLREDUCE, sendbuf, recvbuf, count, datatype, op,
                         -1, comm, &nb);
}

#pragma weak MPI_Allreduce_init_c = PMPI_Allreduce_init_c
int PMPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_common("MPI_Allreduce_init_c", RED_ALLREDUCE, sendbuf, recvbuf, count, datatype,
                         op, -1, comm, &nb);
}

#pragma weak MPI_Iscan = PMPI_Iscan
int PMPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_common("MPI_Iscan", RED_SCAN, sendbuf, recvbuf, count, datatype, op, -1, comm,
                         &nb);
}

#pragma weak MPI_Iscan_c = PMPI_Iscan_c
int PMPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                 MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_common("MPI_Iscan_c", RED_SCAN, sendbuf, recvbuf, count, datatype, op, -1, comm,
                         &nb);
}

#pragma weak MPI_Scan_init = PMPI_Scan_init
int PMPI_Scan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_common("MPI_Scan_init", RED_SCAN, sendbuf, recvbuf, count, datatype, op, -1, comm,
                         &nb);
}

#pragma weak MPI_Scan_init_c = PMPI_Scan_init_c
int PMPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_common("MPI_Scan_init_c", RED_SCAN, sendbuf, recvbuf, count, datatype, op, -1,
                         comm, &nb);
}

#pragma weak MPI_Iexscan = PMPI_Iexscan
int PMPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_common("MPI_Iexscan", RED_EXSCAN, sendbuf, recvbuf, count, datatype, op, -1, comm,
                         &nb);
}

#pragma weak MPI_Iexscan_c = PMPI_Iexscan_c
int PMPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_common("MPI_Iexscan_c", RED_EXSCAN, sendbuf, recvbuf, count, datatype, op, -1,
                         comm, &nb);
}

#pragma weak MPI_Exscan_init = PMPI_Exscan_init
int PMPI_Exscan_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_common("MPI_Exscan_init", RED_EXSCAN, sendbuf, recvbuf, count, datatype, op, -1,
                         comm, &nb);
}

#pragma weak MPI_Exscan_init_c = PMPI_Exscan_init_c
int PMPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_common("MPI_Exscan_init_c", RED_EXSCAN, sendbuf, recvbuf, count, datatype, op, -1,
                         comm, &nb);
}

#pragma weak MPI_Ireduce_scatter = PMPI_Ireduce_scatter
int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_scatter_common("MPI_Ireduce_scatter", sendbuf, recvbuf, vec_of(recvcounts, 0), 0,
                                 datatype, op, comm, &nb);
}

#pragma weak MPI_Ireduce_scatter_c = PMPI_Ireduce_scatter_c
int PMPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_scatter_common("MPI_Ireduce_scatter_c", sendbuf, recvbuf, vec_of(recvcounts, 1),
                                 0, datatype, op, comm, &nb);
}

#pragma weak MPI_Reduce_scatter_init = PMPI_Reduce_scatter_init
int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_scatter_common("MPI_Reduce_scatter_init", sendbuf, recvbuf, vec_of(recvcounts, 0),
                                 0, datatype, op, comm, &nb);
}

#pragma weak MPI_Reduce_scatter_init_c = PMPI_Reduce_scatter_init_c
int PMPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_scatter_common("MPI_Reduce_scatter_init_c", sendbuf, recvbuf,
                                 vec_of(recvcounts, 1), 0, datatype, op, comm, &nb);
}

#pragma weak MPI_Ireduce_scatter_block = PMPI_Ireduce_scatter_block
int PMPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                               MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_scatter_common("MPI_Ireduce_scatter_block", sendbuf, recvbuf, vec_none(0),
                                 recvcount, datatype, op, comm, &nb);
}

#pragma weak MPI_Ireduce_scatter_block_c = PMPI_Ireduce_scatter_block_c
int PMPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return reduce_scatter_common("MPI_Ireduce_scatter_block_c", sendbuf, recvbuf, vec_none(1),
                                 recvcount, datatype, op, comm, &nb);
}

#pragma weak MPI_Reduce_scatter_block_init = PMPI_Reduce_scatter_block_init
int PMPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_scatter_common("MPI_Reduce_scatter_block_init", sendbuf, recvbuf, vec_none(0),
                                 recvcount, datatype, op, comm, &nb);
}

#pragma weak MPI_Reduce_scatter_block_init_c = PMPI_Reduce_scatter_block_init_c
int PMPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return reduce_scatter_common("MPI_Reduce_scatter_block_init_c", sendbuf, recvbuf, vec_none(1),
                                 recvcount, datatype, op, comm, &nb);
}

#pragma weak MPI_Igather = PMPI_Igather
int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gather_like("MPI_Igather", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                       recvtype, root, comm, &nb);
}

#pragma weak MPI_Igather_c = PMPI_Igather_c
int PMPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                   MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                   MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gather_like("MPI_Igather_c", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, &nb);
}

#pragma weak MPI_Gather_init = PMPI_Gather_init
int PMPI_Gather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                     MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gather_like("MPI_Gather_init", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, &nb);
}

#pragma weak MPI_Gather_init_c = PMPI_Gather_init_c
int PMPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gather_like("MPI_Gather_init_c", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, &nb);
}

#pragma weak MPI_Iscatter = PMPI_Iscatter
int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gather_like("MPI_Iscatter", MOVE_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, &nb);
}

#pragma weak MPI_Iscatter_c = PMPI_Iscatter_c
int PMPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                    MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gather_like("MPI_Iscatter_c", MOVE_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, &nb);
}

#pragma weak MPI_Scatter_init = PMPI_Scatter_init
int PMPI_Scatter_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gather_like("MPI_Scatter_init", MOVE_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, &nb);
}

#pragma weak MPI_Scatter_init_c = PMPI_Scatter_init_c
int PMPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                        MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gather_like("MPI_Scatter_init_c", MOVE_SCATTER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, root, comm, &nb);
}

#pragma weak MPI_Iallgather = PMPI_Iallgather
int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gather_like("MPI_Iallgather", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, 0, comm, &nb);
}

#pragma weak MPI_Iallgather_c = PMPI_Iallgather_c
int PMPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                      void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gather_like("MPI_Iallgather_c", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, 0, comm, &nb);
}

#pragma weak MPI_Allgather_init = PMPI_Allgather_init
int PMPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gather_like("MPI_Allgather_init", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                       recvcount, recvtype, 0, comm, &nb);
}

#pragma weak MPI_Allgather_init_c = PMPI_Allgather_init_c
int PMPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                          void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gather_like("MPI_Allgather_init_c", MOVE_ALLGATHER, sendbuf, sendcount, sendtype,
                       recvbuf, recvcount, recvtype, 0, comm, &nb);
}

#pragma weak MPI_Igatherv = PMPI_Igatherv
int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gatherv_like("MPI_Igatherv", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 0), vec_of(displs, 0), recvtype, root, comm, &nb);
}

#pragma weak MPI_Igatherv_c = PMPI_Igatherv_c
int PMPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const MPI_Count recvcounts[], const MPI_Aint displs[], MPI_Datatype recvtype,
                    int root, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gatherv_like("MPI_Igatherv_c", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 1), vec_of(displs, 1), recvtype, root, comm, &nb);
}

#pragma weak MPI_Gatherv_init = PMPI_Gatherv_init
int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gatherv_like("MPI_Gatherv_init", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 0), vec_of(displs, 0), recvtype, root, comm, &nb);
}

#pragma weak MPI_Gatherv_init_c = PMPI_Gatherv_init_c
int PMPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                        MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gatherv_like("MPI_Gatherv_init_c", MOVE_GATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 1), vec_of(displs, 1), recvtype, root, comm, &nb);
}

#pragma weak MPI_Iscatterv = PMPI_Iscatterv
int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gatherv_like("MPI_Iscatterv", MOVE_SCATTER, recvbuf, recvcount, recvtype,
                        (void *)sendbuf, vec_of(sendcounts, 0), vec_of(displs, 0), sendtype, root,
                        comm, &nb);
}

#pragma weak MPI_Iscatterv_c = PMPI_Iscatterv_c
int PMPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                     MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gatherv_like("MPI_Iscatterv_c", MOVE_SCATTER, recvbuf, recvcount, recvtype,
                        (void *)sendbuf, vec_of(sendcounts, 1), vec_of(displs, 1), sendtype, root,
                        comm, &nb);
}

#pragma weak MPI_Scatterv_init = PMPI_Scatterv_init
int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gatherv_like("MPI_Scatterv_init", MOVE_SCATTER, recvbuf, recvcount, recvtype,
                        (void *)sendbuf, vec_of(sendcounts, 0), vec_of(displs, 0), sendtype, root,
                        comm, &nb);
}

#pragma weak MPI_Scatterv_init_c = PMPI_Scatterv_init_c
int PMPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gatherv_like("MPI_Scatterv_init_c", MOVE_SCATTER, recvbuf, recvcount, recvtype,
                        (void *)sendbuf, vec_of(sendcounts, 1), vec_of(displs, 1), sendtype, root,
                        comm, &nb);
}

#pragma weak MPI_Iallgatherv = PMPI_Iallgatherv
int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gatherv_like("MPI_Iallgatherv", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 0), vec_of(displs, 0), recvtype, 0, comm, &nb);
}

#pragma weak MPI_Iallgatherv_c = PMPI_Iallgatherv_c
int PMPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                       void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    return gatherv_like("MPI_Iallgatherv_c", MOVE_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf,
                        vec_of(recvcounts, 1), vec_of(displs, 1), recvtype, 0, comm, &nb);
}

#pragma weak MPI_Allgatherv_init = PMPI_Allgatherv_init
int PMPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gatherv_like("MPI_Allgatherv_init", MOVE_ALLGATHER, sendbuf, sendcount, sendtype,
                        recvbuf, vec_of(recvcounts, 0), vec_of(displs, 0), recvtype, 0, comm, &nb);
}

#pragma weak MPI_Allgatherv_init_c = PMPI_Allgatherv_init_c
int PMPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                           MPI_Request *request)
{
    nb_t nb = {1, request, info};
    return gatherv_like("MPI_Allgatherv_init_c", MOVE_ALLGATHER, sendbuf, sendcount, sendtype,
                        recvbuf, vec_of(recvcounts, 1), vec_of(displs, 1), recvtype, 0, comm, &nb);
}

#pragma weak MPI_Ialltoall = PMPI_Ialltoall
int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    a2a_side_t s = {sendbuf, vec_none(0), vec_none(0), sendcount, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_none(0), vec_none(0), recvcount, recvtype, NULL};
    return alltoall_common("MPI_Ialltoall", &s, &r, comm, &nb);
}

#pragma weak MPI_Ialltoall_c = PMPI_Ialltoall_c
int PMPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, void *recvbuf,
                     MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                     MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    a2a_side_t s = {sendbuf, vec_none(0), vec_none(0), sendcount, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_none(0), vec_none(0), recvcount, recvtype, NULL};
    return alltoall_common("MPI_Ialltoall_c", &s, &r, comm, &nb);
}

#pragma weak MPI_Alltoall_init = PMPI_Alltoall_init
int PMPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request)
{
    nb_t nb = {1, request, info};
    a2a_side_t s = {sendbuf, vec_none(0), vec_none(0), sendcount, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_none(0), vec_none(0), recvcount, recvtype, NULL};
    return alltoall_common("MPI_Alltoall_init", &s, &r, comm, &nb);
}

#pragma weak MPI_Alltoall_init_c = PMPI_Alltoall_init_c
int PMPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    a2a_side_t s = {sendbuf, vec_none(0), vec_none(0), sendcount, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_none(0), vec_none(0), recvcount, recvtype, NULL};
    return alltoall_common("MPI_Alltoall_init_c", &s, &r, comm, &nb);
}

#pragma weak MPI_Ialltoallv = PMPI_Ialltoallv
int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 0), vec_of(sdispls, 0), 0, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 0), vec_of(rdispls, 0), 0, recvtype, NULL};
    return alltoall_common("MPI_Ialltoallv", &s, &r, comm, &nb);
}

#pragma weak MPI_Ialltoallv_c = PMPI_Ialltoallv_c
int PMPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                      MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 1), vec_of(sdispls, 1), 0, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 1), vec_of(rdispls, 1), 0, recvtype, NULL};
    return alltoall_common("MPI_Ialltoallv_c", &s, &r, comm, &nb);
}

#pragma weak MPI_Alltoallv_init = PMPI_Alltoallv_init
int PMPI_Alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                        const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request)
{
    nb_t nb = {1, request, info};
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 0), vec_of(sdispls, 0), 0, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 0), vec_of(rdispls, 0), 0, recvtype, NULL};
    return alltoall_common("MPI_Alltoallv_init", &s, &r, comm, &nb);
}

#pragma weak MPI_Alltoallv_init_c = PMPI_Alltoallv_init_c
int PMPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 1), vec_of(sdispls, 1), 0, sendtype, NULL};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 1), vec_of(rdispls, 1), 0, recvtype, NULL};
    return alltoall_common("MPI_Alltoallv_init_c", &s, &r, comm, &nb);
}

#pragma weak MPI_Ialltoallw = PMPI_Ialltoallw
int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 0), vec_of(sdispls, 0), 0, NULL, sendtypes};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 0), vec_of(rdispls, 0), 0, NULL, recvtypes};
    return alltoall_common("MPI_Ialltoallw", &s, &r, comm, &nb);
}

#pragma weak MPI_Ialltoallw_c = PMPI_Ialltoallw_c
int PMPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                      const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                      const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                      MPI_Request *request)
{
    nb_t nb = {0, request, MPI_INFO_NULL};
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 1), vec_of(sdispls, 1), 0, NULL, sendtypes};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 1), vec_of(rdispls, 1), 0, NULL, recvtypes};
    return alltoall_common("MPI_Ialltoallw_c", &s, &r, comm, &nb);
}

#pragma weak MPI_Alltoallw_init = PMPI_Alltoallw_init
int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    nb_t nb = {1, request, info};
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 0), vec_of(sdispls, 0), 0, NULL, sendtypes};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 0), vec_of(rdispls, 0), 0, NULL, recvtypes};
    return alltoall_common("MPI_Alltoallw_init", &s, &r, comm, &nb);
}

#pragma weak MPI_Alltoallw_init_c = PMPI_Alltoallw_init_c
int PMPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                          const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
                          const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                          const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                          MPI_Request *request)
{
    nb_t nb = {1, request, info};
    a2a_side_t s = {sendbuf, vec_of(sendcounts, 1), vec_of(sdispls, 1), 0, NULL, sendtypes};
    a2a_side_t r = {recvbuf, vec_of(recvcounts, 1), vec_of(rdispls, 1), 0, NULL, recvtypes};
    return alltoall_common("MPI_Alltoallw_init_c", &s, &r, comm, &nb);
}
