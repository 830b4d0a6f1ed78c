/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided communication entry points (MPI-4.1 chapter 12): window creation and freeing,
 * MPI_Put/Get/Accumulate/Get_accumulate/Fetch_and_op/Compare_and_swap and their request and
 * large-count forms, the synchronisation calls, and window queries (group, name, info, shared
 * memory). The arguments are checked here; errors go through the window's error handler (a
 * call with no valid window: MPI_COMM_SELF's, or the communicator's for the creation calls).
 * The window's error handler and attributes are in binding_err.c and binding_attr.c; the
 * protocol is in src/rma.
 */
#include "binding.h"
#include "coll.h"
#include "rma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- checks ---------------------------------------------------------------------------- */

static int raise_win(mf_win_t *w, int cls, const char *func, const char *why)
{
    return mf_err_raise_win(w, mf_err_code(cls, func, "%s", why));
}

int mf_check_win(const char *func, MPI_Win win, struct MPI_ABI_Win **w_p)
{
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_win_t *w = mf_win_get(win);
    if (w == NULL)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_WIN, func, "argument win is not a window (%s)",
                              win == MPI_WIN_NULL ? "it is MPI_WIN_NULL"
                                                  : "freed, never created, or another handle"));
    *w_p = w;
    return MPI_SUCCESS;
}

/* rank names a process of the window (MPI_PROC_NULL too when proc_null_ok). */
static int check_rank(const char *func, mf_win_t *w, const char *arg, int rank, int proc_null_ok)
{
    if ((rank >= 0 && rank < w->comm->size) || (proc_null_ok && rank == MPI_PROC_NULL))
        return MPI_SUCCESS;
    return mf_err_raise_win(w, mf_err_code(MPI_ERR_RANK, func,
                                           "argument %s=%d is not a rank of the window's "
                                           "group (size %d)",
                                           arg, rank, w->comm->size));
}

static int check_count(const char *func, mf_win_t *w, const char *arg, MPI_Count count)
{
    if (count >= 0)
        return MPI_SUCCESS;
    return mf_err_raise_win(
        w, mf_err_code(MPI_ERR_COUNT, func, "argument %s=%lld is negative", arg, (long long)count));
}

/* A committed datatype; *bytes_p: count items' packed bytes. */
static int check_type(const char *func, mf_win_t *w, const char *arg, MPI_Datatype dt,
                      MPI_Count count, uint64_t *bytes_p)
{
    mf_dtype_props_t p;
    const char *why = NULL;
    if (dt == MPI_DATATYPE_NULL)
        why = "is MPI_DATATYPE_NULL";
    else if (mf_dtype_props(dt, &p) != MF_OK)
        why = "is not a valid datatype (freed, never created, or another handle)";
    else if (!p.committed)
        why = "is not committed (call MPI_Type_commit first)";
    else if (p.psize > 0 && count > INT64_MAX / p.psize)
        why = "times the count is more bytes than fit a count";
    if (why != NULL)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_TYPE, func, "argument %s %s", arg, why));
    *bytes_p = (uint64_t)(count * p.psize);
    return MPI_SUCCESS;
}

static int check_assert(const char *func, mf_win_t *w, int assert, int allowed)
{
    if ((assert & ~allowed) == 0)
        return MPI_SUCCESS;
    return mf_err_raise_win(w, mf_err_code(MPI_ERR_ASSERT, func,
                                           "argument assert=%d has bits this call does not "
                                           "take (allowed: %d)",
                                           assert, allowed));
}

/* ---- creation ---------------------------------------------------------------------------- */

static int win_create(const char *func, int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit,
                      MPI_Info info, MPI_Comm comm, void *baseptr, MPI_Win *win)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra(func, c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (flavor != MPI_WIN_FLAVOR_DYNAMIC && size < 0)
        return mf_err_raise(
            c, mf_err_code(MPI_ERR_SIZE, func, "argument size=%lld is negative", (long long)size));
    if (flavor != MPI_WIN_FLAVOR_DYNAMIC && (disp_unit <= 0 || disp_unit > INT32_MAX))
        return mf_err_raise(c, mf_err_code(MPI_ERR_DISP, func,
                                           "argument disp_unit=%lld must be positive (and fit "
                                           "an int)",
                                           (long long)disp_unit));
    if (info != MPI_INFO_NULL && mf_info_get_obj(info) == NULL)
        return mf_err_raise(
            c, mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    if ((flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) && baseptr == NULL)
        return mf_check_ptr_fail(func, c, "baseptr");
    rc = mf_check_ptr(func, c, win, "win");
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_RMA_WHY_LEN];
    mf_win_t *w = NULL;
    void *b = base;
    rc = mf_win_create(c, flavor, &b, (size_t)size, (int)disp_unit,
                       info == MPI_INFO_NULL ? NULL : mf_info_get_obj(info), &w, why);
    if (rc != MPI_SUCCESS)
        return mf_err_raise(c, mf_err_code(rc, func, "%s", why));
    if (baseptr != NULL)
        *(void **)baseptr = b;
    *win = w;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_create = PMPI_Win_create
int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    return win_create("MPI_Win_create", MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm,
                      NULL, win);
}

#pragma weak MPI_Win_create_c = PMPI_Win_create_c
int PMPI_Win_create_c(void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                      MPI_Win *win)
{
    return win_create("MPI_Win_create_c", MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm,
                      NULL, win);
}

#pragma weak MPI_Win_allocate = PMPI_Win_allocate
int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    return win_create("MPI_Win_allocate", MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info,
                      comm, baseptr, win);
}

#pragma weak MPI_Win_allocate_c = PMPI_Win_allocate_c
int PMPI_Win_allocate_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                        void *baseptr, MPI_Win *win)
{
    return win_create("MPI_Win_allocate_c", MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info,
                      comm, baseptr, win);
}

#pragma weak MPI_Win_allocate_shared = PMPI_Win_allocate_shared
int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    return win_create("MPI_Win_allocate_shared", MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info,
                      comm, baseptr, win);
}

#pragma weak MPI_Win_allocate_shared_c = PMPI_Win_allocate_shared_c
int PMPI_Win_allocate_shared_c(MPI_Aint size, MPI_Aint disp_unit, MPI_Info info, MPI_Comm comm,
                               void *baseptr, MPI_Win *win)
{
    return win_create("MPI_Win_allocate_shared_c", MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit,
                      info, comm, baseptr, win);
}

#pragma weak MPI_Win_create_dynamic = PMPI_Win_create_dynamic
int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    return win_create("MPI_Win_create_dynamic", MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm,
                      NULL, win);
}

#pragma weak MPI_Win_free = PMPI_Win_free
int PMPI_Win_free(MPI_Win *win)
{
    static const char func[] = "MPI_Win_free";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, win, "win");
    mf_win_t *w = NULL;
    if (rc == MPI_SUCCESS)
        rc = mf_check_win(func, *win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    /* the window is still whole: its own handler, and its attributes kept */
    char why[MF_RMA_WHY_LEN];
    rc = mf_win_free_check(w, why);
    if (rc != MPI_SUCCESS)
        return mf_err_raise_win(w, mf_err_code(rc, func, "%s", why));
    rc = mf_binding_win_delete_attrs(func, w);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mf_win_free(w, why);
    if (rc != MPI_SUCCESS)
        return mf_err_raise(NULL, mf_err_code(rc, func, "%s", why));
    *win = MPI_WIN_NULL;
    return MPI_SUCCESS;
}

static int shared_query(const char *func, MPI_Win win, int rank, MPI_Aint *size,
                        MPI_Aint *disp_unit_aint, int *disp_unit_int, void *baseptr)
{
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS)
        rc = check_rank(func, w, "rank", rank, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *null_arg = size == NULL                                      ? "size"
                           : disp_unit_aint == NULL && disp_unit_int == NULL ? "disp_unit"
                           : baseptr == NULL                                 ? "baseptr"
                                                                             : NULL;
    if (null_arg != NULL)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL", null_arg));
    char why[MF_RMA_WHY_LEN];
    size_t sz = 0;
    int du = 0;
    void *base = NULL;
    rc = mf_win_shared_query(w, rank, &sz, &du, &base, why);
    if (rc != MPI_SUCCESS)
        return raise_win(w, rc, func, why);
    *size = (MPI_Aint)sz;
    if (disp_unit_aint != NULL)
        *disp_unit_aint = du;
    else
        *disp_unit_int = du;
    *(void **)baseptr = base;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_shared_query = PMPI_Win_shared_query
int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    return shared_query("MPI_Win_shared_query", win, rank, size, NULL, disp_unit, baseptr);
}

#pragma weak MPI_Win_shared_query_c = PMPI_Win_shared_query_c
int PMPI_Win_shared_query_c(MPI_Win win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                            void *baseptr)
{
    return shared_query("MPI_Win_shared_query_c", win, rank, size, disp_unit, NULL, baseptr);
}

#pragma weak MPI_Win_attach = PMPI_Win_attach
int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    static const char func[] = "MPI_Win_attach";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (size < 0)
        return mf_err_raise_win(
            w, mf_err_code(MPI_ERR_SIZE, func, "argument size=%lld is negative", (long long)size));
    if (base == NULL && size > 0)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument base is NULL"));
    char why[MF_RMA_WHY_LEN];
    rc = mf_win_attach(w, base, (size_t)size, why);
    return rc == MPI_SUCCESS ? rc : raise_win(w, rc, func, why);
}

#pragma weak MPI_Win_detach = PMPI_Win_detach
int PMPI_Win_detach(MPI_Win win, const void *base)
{
    static const char func[] = "MPI_Win_detach";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_RMA_WHY_LEN];
    rc = mf_win_detach(w, base, why);
    return rc == MPI_SUCCESS ? rc : raise_win(w, rc, func, why);
}

/* ---- queries ----------------------------------------------------------------------------- */

#pragma weak MPI_Win_get_group = PMPI_Win_get_group
int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    static const char func[] = "MPI_Win_get_group";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (group == NULL)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument group is NULL"));
    mf_group_t *g = NULL;
    if (mf_group_from_comm(w->comm, &g) != MF_OK)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *group = mf_group_handle(g);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_set_name = PMPI_Win_set_name
int PMPI_Win_set_name(MPI_Win win, const char *win_name)
{
    static const char func[] = "MPI_Win_set_name";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (win_name == NULL)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument win_name is NULL"));
    pthread_mutex_lock(&w->name_lock);
    snprintf(w->name, sizeof(w->name), "%s", win_name);
    pthread_mutex_unlock(&w->name_lock);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_name = PMPI_Win_get_name
int PMPI_Win_get_name(MPI_Win win, char *win_name, int *resultlen)
{
    static const char func[] = "MPI_Win_get_name";
    mf_win_t *w = NULL;
    /* MPI-4.1 gives the null handle the name "MPI_WIN_NULL". */
    if (win == MPI_WIN_NULL) {
        int rc = mf_check_initialized(func);
        if (rc == MPI_SUCCESS)
            rc = mf_check_ptr(func, NULL, win_name, "win_name");
        if (rc == MPI_SUCCESS)
            rc = mf_check_ptr(func, NULL, resultlen, "resultlen");
        if (rc == MPI_SUCCESS)
            *resultlen = snprintf(win_name, MPI_MAX_OBJECT_NAME, "MPI_WIN_NULL");
        return rc;
    }
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (win_name == NULL || resultlen == NULL)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL",
                                               win_name == NULL ? "win_name" : "resultlen"));
    pthread_mutex_lock(&w->name_lock);
    snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    pthread_mutex_unlock(&w->name_lock);
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_set_info = PMPI_Win_set_info
int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    static const char func[] = "MPI_Win_set_info";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *in = mf_info_get_obj(info);
    if (in == NULL && info != MPI_INFO_NULL)
        return mf_err_raise_win(
            w, mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    struct MPI_ABI_Info *copy = NULL;
    if (in != NULL) {
        /* the keys given replace those set before; the others stay (MPI-4.1 section 12.2.7) */
        pthread_mutex_lock(&w->name_lock);
        mf_status_t st = w->info != NULL ? mf_info_dup(w->info, &copy) : mf_info_create(&copy);
        pthread_mutex_unlock(&w->name_lock);
        if (st == MF_OK)
            st = mf_info_update(copy, in);
        if (st != MF_OK) {
            if (copy != NULL)
                mf_info_free(copy);
            return mf_err_raise_win(w, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
        }
    }
    pthread_mutex_lock(&w->name_lock);
    struct MPI_ABI_Info *old = w->info;
    w->info = copy;
    pthread_mutex_unlock(&w->name_lock);
    if (old != NULL)
        mf_info_free(old);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_info = PMPI_Win_get_info
int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    static const char func[] = "MPI_Win_get_info";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (info_used == NULL)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument info_used is NULL"));
    struct MPI_ABI_Info *out = NULL;
    pthread_mutex_lock(&w->name_lock);
    mf_status_t st = w->info != NULL ? mf_info_dup(w->info, &out) : mf_info_create(&out);
    pthread_mutex_unlock(&w->name_lock);
    /* The standard's hints the user left alone, at the values in force (MPI-4.1 12.2.7): the
     * library keeps every guarantee they describe whatever they say. */
    static const char *const defaults[][2] = {
        {"no_locks", "false"},
        {"accumulate_ordering", "rar,raw,war,waw"},
        {"accumulate_ops", "same_op_no_op"},
        {"same_size", "false"},
        {"same_disp_unit", "false"},
    };
    for (size_t i = 0; st == MF_OK && i < sizeof(defaults) / sizeof(defaults[0]); i++) {
        size_t len;
        if (!mf_info_get(out, defaults[i][0], NULL, 0, &len))
            st = mf_info_set(out, defaults[i][0], defaults[i][1]);
    }
    if (st != MF_OK) {
        if (out != NULL)
            mf_info_free(out);
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    }
    *info_used = out;
    return MPI_SUCCESS;
}

/* ---- communication ----------------------------------------------------------------------- */

/* The checks every operation shares, then the operation. `a` holds the arguments; counts are
 * checked here. Returns through the window's handler. */
static int rma_call(const char *func, MPI_Win win, mf_rma_args_t *a, MPI_Request *request,
                    int want_request)
{
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS && want_request && request == NULL)
        rc = mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument request is NULL"));
    if (rc == MPI_SUCCESS)
        rc = check_rank(func, w, "target_rank", a->target, 1);
    if (rc == MPI_SUCCESS && a->target_disp < 0 && w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        rc = mf_err_raise_win(w, mf_err_code(MPI_ERR_DISP, func,
                                             "argument target_disp=%lld is negative",
                                             (long long)a->target_disp));
    if (rc != MPI_SUCCESS)
        return rc;
    int has_origin = a->kind != MF_RMA_GACC || a->op != MPI_NO_OP;
    int is_atomic = a->single;
    uint64_t obytes = 0, tbytes = 0, rbytes = 0;
    if (is_atomic)
        a->origin_count = a->target_count = a->result_count = 1;
    if (!is_atomic && has_origin && (rc = check_count(func, w, "origin_count", a->origin_count)))
        return rc;
    if (!is_atomic && (rc = check_count(func, w, "target_count", a->target_count)))
        return rc;
    if (!is_atomic && a->kind == MF_RMA_GACC &&
        (rc = check_count(func, w, "result_count", a->result_count)))
        return rc;
    const char *odt = is_atomic ? "datatype" : "origin_datatype";
    if (has_origin && (rc = check_type(func, w, odt, a->origin_dt, a->origin_count, &obytes)))
        return rc;
    if ((rc = check_type(func, w, is_atomic ? "datatype" : "target_datatype", a->target_dt,
                         a->target_count, &tbytes)))
        return rc;
    if ((a->kind == MF_RMA_GACC || a->kind == MF_RMA_CAS) &&
        (rc = check_type(func, w, is_atomic ? "datatype" : "result_datatype", a->result_dt,
                         a->result_count, &rbytes)))
        return rc;
    if (a->kind == MF_RMA_ACC || a->kind == MF_RMA_GACC || a->kind == MF_RMA_CAS) {
        int mixed = 0;
        MPI_Datatype tb = mf_op_basic_type(a->target_dt, &mixed);
        if (mixed || (tb == MPI_DATATYPE_NULL && tbytes > 0))
            return mf_err_raise_win(w, mf_err_code(MPI_ERR_TYPE, func,
                                                   "argument %s must consist of one predefined "
                                                   "datatype",
                                                   is_atomic ? "datatype" : "target_datatype"));
        if (a->kind != MF_RMA_CAS) {
            if (!mf_op_valid(a->op) || !mf_op_is_predefined(a->op))
                return mf_err_raise_win(w, mf_err_code(MPI_ERR_OP, func,
                                                       "argument op must be a predefined "
                                                       "operation (user-defined operations are "
                                                       "not allowed in one-sided accumulates)"));
            /* nothing to apply when no data moves (MPICH accepts such a call too) */
            if (tb != MPI_DATATYPE_NULL && tbytes > 0 && mf_op_check(a->op, tb) != MF_OK)
                return mf_err_raise_win(
                    w, mf_err_code(MPI_ERR_OP, func, "argument op %s is not defined on %s",
                                   mf_op_name(a->op), mf_dtype_predefined(tb)->name));
        } else if (mf_dtype_get(a->target_dt) != NULL ||
                   (mf_op_check(MPI_BAND, a->target_dt) != MF_OK &&
                    mf_op_check(MPI_LAND, a->target_dt) != MF_OK)) {
            /* integers, logicals and bytes: the types whose values compare bit by bit */
            return mf_err_raise_win(w, mf_err_code(MPI_ERR_TYPE, func,
                                                   "argument datatype must be a predefined "
                                                   "integer, logical or byte type"));
        }
        if (has_origin && a->kind != MF_RMA_CAS && obytes > 0) {
            MPI_Datatype ob = mf_op_basic_type(a->origin_dt, &mixed);
            if (mixed || ob != tb)
                return mf_err_raise_win(w, mf_err_code(MPI_ERR_TYPE, func,
                                                       "argument origin_datatype must consist "
                                                       "of the target_datatype's predefined "
                                                       "type"));
        }
    }
    const char *mismatch = NULL;
    if (a->kind == MF_RMA_GACC && rbytes != tbytes)
        mismatch = "result";
    else if (has_origin && a->kind != MF_RMA_CAS && obytes != tbytes)
        mismatch = "origin";
    if (mismatch != NULL)
        return mf_err_raise_win(
            w, mf_err_code(MPI_ERR_TYPE, func,
                           "the %s data (%llu bytes) and the target data "
                           "(%llu bytes) differ in size",
                           mismatch, (unsigned long long)(mismatch[0] == 'r' ? rbytes : obytes),
                           (unsigned long long)tbytes));
    if (a->target == MPI_PROC_NULL) {
        if (request != NULL)
            *request = mf_request_proc_null(w->comm->vci);
        return MPI_SUCCESS;
    }
    char why[MF_RMA_WHY_LEN];
    mf_request_t *req = NULL;
    rc = mf_rma_op(w, a, request != NULL ? &req : NULL, why);
    if (rc != MPI_SUCCESS)
        return raise_win(w, rc, func, why);
    if (request != NULL)
        *request = req;
    return MPI_SUCCESS;
}

#define RMA_ARGS_PUT(kind_)                                                                        \
    (mf_rma_args_t)                                                                                \
    {                                                                                              \
        .kind = kind_, .origin = origin_addr, .origin_count = origin_count,                        \
        .origin_dt = origin_datatype, .target = target_rank, .target_disp = target_disp,           \
        .target_count = target_count, .target_dt = target_datatype, .op = MPI_OP_NULL,             \
        .result_dt = MPI_DATATYPE_NULL                                                             \
    }

#pragma weak MPI_Put = PMPI_Put
int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    mf_rma_args_t a = RMA_ARGS_PUT(MF_RMA_PUT);
    return rma_call("MPI_Put", win, &a, NULL, 0);
}

#pragma weak MPI_Put_c = PMPI_Put_c
int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    mf_rma_args_t a = RMA_ARGS_PUT(MF_RMA_PUT);
    return rma_call("MPI_Put_c", win, &a, NULL, 0);
}

#pragma weak MPI_Rput = PMPI_Rput
int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    mf_rma_args_t a = RMA_ARGS_PUT(MF_RMA_PUT);
    return rma_call("MPI_Rput", win, &a, request, 1);
}

#pragma weak MPI_Rput_c = PMPI_Rput_c
int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    mf_rma_args_t a = RMA_ARGS_PUT(MF_RMA_PUT);
    return rma_call("MPI_Rput_c", win, &a, request, 1);
}

#pragma weak MPI_Get = PMPI_Get
int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    mf_rma_args_t a = RMA_ARGS_PUT(MF_RMA_GET);
    return rma_call("MPI_Get", win, &a, NULL, 0);
}

#pragma weak MPI_Get_c = PMPI_Get_c
int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    mf_rma_args_t a = RMA_ARGS_PUT(MF_RMA_GET);
    return rma_call("MPI_Get_c", win, &a, NULL, 0);
}

#pragma weak MPI_Rget = PMPI_Rget
int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    mf_rma_args_t a = RMA_ARGS_PUT(MF_RMA_GET);
    return rma_call("MPI_Rget", win, &a, request, 1);
}

#pragma weak MPI_Rget_c = PMPI_Rget_c
int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    mf_rma_args_t a = RMA_ARGS_PUT(MF_RMA_GET);
    return rma_call("MPI_Rget_c", win, &a, request, 1);
}

#define RMA_ARGS_ACC(kind_)                                                                        \
    (mf_rma_args_t)                                                                                \
    {                                                                                              \
        .kind = kind_, .origin = origin_addr, .origin_count = origin_count,                        \
        .origin_dt = origin_datatype, .target = target_rank, .target_disp = target_disp,           \
        .target_count = target_count, .target_dt = target_datatype, .op = op,                      \
        .result_dt = MPI_DATATYPE_NULL                                                             \
    }

#pragma weak MPI_Accumulate = PMPI_Accumulate
int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    mf_rma_args_t a = RMA_ARGS_ACC(MF_RMA_ACC);
    return rma_call("MPI_Accumulate", win, &a, NULL, 0);
}

#pragma weak MPI_Accumulate_c = PMPI_Accumulate_c
int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    mf_rma_args_t a = RMA_ARGS_ACC(MF_RMA_ACC);
    return rma_call("MPI_Accumulate_c", win, &a, NULL, 0);
}

#pragma weak MPI_Raccumulate = PMPI_Raccumulate
int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    mf_rma_args_t a = RMA_ARGS_ACC(MF_RMA_ACC);
    return rma_call("MPI_Raccumulate", win, &a, request, 1);
}

#pragma weak MPI_Raccumulate_c = PMPI_Raccumulate_c
int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                       MPI_Request *request)
{
    mf_rma_args_t a = RMA_ARGS_ACC(MF_RMA_ACC);
    return rma_call("MPI_Raccumulate_c", win, &a, request, 1);
}

#define RMA_ARGS_GACC                                                                              \
    (mf_rma_args_t)                                                                                \
    {                                                                                              \
        .kind = MF_RMA_GACC, .origin = origin_addr, .origin_count = origin_count,                  \
        .origin_dt = origin_datatype, .result = result_addr, .result_count = result_count,         \
        .result_dt = result_datatype, .target = target_rank, .target_disp = target_disp,           \
        .target_count = target_count, .target_dt = target_datatype, .op = op                       \
    }

#pragma weak MPI_Get_accumulate = PMPI_Get_accumulate
int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    mf_rma_args_t a = RMA_ARGS_GACC;
    return rma_call("MPI_Get_accumulate", win, &a, NULL, 0);
}

#pragma weak MPI_Get_accumulate_c = PMPI_Get_accumulate_c
int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win)
{
    mf_rma_args_t a = RMA_ARGS_GACC;
    return rma_call("MPI_Get_accumulate_c", win, &a, NULL, 0);
}

#pragma weak MPI_Rget_accumulate = PMPI_Rget_accumulate
int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    mf_rma_args_t a = RMA_ARGS_GACC;
    return rma_call("MPI_Rget_accumulate", win, &a, request, 1);
}

#pragma weak MPI_Rget_accumulate_c = PMPI_Rget_accumulate_c
int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                           MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request)
{
    mf_rma_args_t a = RMA_ARGS_GACC;
    return rma_call("MPI_Rget_accumulate_c", win, &a, request, 1);
}

#pragma weak MPI_Fetch_and_op = PMPI_Fetch_and_op
int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    mf_rma_args_t a = {.kind = MF_RMA_GACC,
                       .single = 1,
                       .origin = origin_addr,
                       .origin_dt = datatype,
                       .result = result_addr,
                       .result_dt = datatype,
                       .target = target_rank,
                       .target_disp = target_disp,
                       .target_dt = datatype,
                       .op = op};
    return rma_call("MPI_Fetch_and_op", win, &a, NULL, 0);
}

#pragma weak MPI_Compare_and_swap = PMPI_Compare_and_swap
int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    mf_rma_args_t a = {.kind = MF_RMA_CAS,
                       .single = 1,
                       .origin = origin_addr,
                       .origin_dt = datatype,
                       .compare = compare_addr,
                       .result = result_addr,
                       .result_dt = datatype,
                       .target = target_rank,
                       .target_disp = target_disp,
                       .target_dt = datatype,
                       .op = MPI_REPLACE};
    return rma_call("MPI_Compare_and_swap", win, &a, NULL, 0);
}

/* ---- synchronisation --------------------------------------------------------------------- */

static int finish(mf_win_t *w, const char *func, int rc, const char *why)
{
    return rc == MPI_SUCCESS ? rc : raise_win(w, rc, func, why);
}

#pragma weak MPI_Win_fence = PMPI_Win_fence
int PMPI_Win_fence(int assert, MPI_Win win)
{
    static const char func[] = "MPI_Win_fence";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS)
        rc = check_assert(func, w, assert,
                          MPI_MODE_NOSTORE | MPI_MODE_NOPUT | MPI_MODE_NOPRECEDE |
                              MPI_MODE_NOSUCCEED);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_RMA_WHY_LEN];
    return finish(w, func, mf_win_fence(w, assert, why), why);
}

#pragma weak MPI_Win_lock = PMPI_Win_lock
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    static const char func[] = "MPI_Win_lock";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS && lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        rc = mf_err_raise_win(w, mf_err_code(MPI_ERR_LOCKTYPE, func,
                                             "argument lock_type=%d is neither MPI_LOCK_SHARED "
                                             "nor MPI_LOCK_EXCLUSIVE",
                                             lock_type));
    if (rc == MPI_SUCCESS)
        rc = check_rank(func, w, "rank", rank, 1);
    if (rc == MPI_SUCCESS)
        rc = check_assert(func, w, assert, MPI_MODE_NOCHECK);
    if (rc != MPI_SUCCESS || rank == MPI_PROC_NULL)
        return rc;
    char why[MF_RMA_WHY_LEN];
    return finish(w, func, mf_win_lock(w, lock_type, rank, assert, why), why);
}

#pragma weak MPI_Win_unlock = PMPI_Win_unlock
int PMPI_Win_unlock(int rank, MPI_Win win)
{
    static const char func[] = "MPI_Win_unlock";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS)
        rc = check_rank(func, w, "rank", rank, 1);
    if (rc != MPI_SUCCESS || rank == MPI_PROC_NULL)
        return rc;
    char why[MF_RMA_WHY_LEN];
    return finish(w, func, mf_win_unlock(w, rank, why), why);
}

#pragma weak MPI_Win_lock_all = PMPI_Win_lock_all
int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    static const char func[] = "MPI_Win_lock_all";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS)
        rc = check_assert(func, w, assert, MPI_MODE_NOCHECK);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_RMA_WHY_LEN];
    return finish(w, func, mf_win_lock_all(w, assert, why), why);
}

#pragma weak MPI_Win_unlock_all = PMPI_Win_unlock_all
int PMPI_Win_unlock_all(MPI_Win win)
{
    static const char func[] = "MPI_Win_unlock_all";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_RMA_WHY_LEN];
    return finish(w, func, mf_win_unlock_all(w, why), why);
}

/* Local completion is not cheaper than completion at the target in this protocol (a put's data
 * is on its way once sent), so the _local forms are the full ones. */
static int flush(const char *func, MPI_Win win, int rank, int all)
{
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS && !all)
        rc = check_rank(func, w, "rank", rank, 1);
    if (rc != MPI_SUCCESS || (!all && rank == MPI_PROC_NULL))
        return rc;
    char why[MF_RMA_WHY_LEN];
    return finish(w, func, mf_win_flush(w, all ? -1 : rank, why), why);
}

#pragma weak MPI_Win_flush = PMPI_Win_flush
int PMPI_Win_flush(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush", win, rank, 0);
}

#pragma weak MPI_Win_flush_all = PMPI_Win_flush_all
int PMPI_Win_flush_all(MPI_Win win)
{
    return flush("MPI_Win_flush_all", win, 0, 1);
}

#pragma weak MPI_Win_flush_local = PMPI_Win_flush_local
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    return flush("MPI_Win_flush_local", win, rank, 0);
}

#pragma weak MPI_Win_flush_local_all = PMPI_Win_flush_local_all
int PMPI_Win_flush_local_all(MPI_Win win)
{
    return flush("MPI_Win_flush_local_all", win, 0, 1);
}

#pragma weak MPI_Win_sync = PMPI_Win_sync
int PMPI_Win_sync(MPI_Win win)
{
    mf_win_t *w = NULL;
    int rc = mf_check_win("MPI_Win_sync", win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    /* one memory: what matters is that the processor's stores and loads are ordered */
    atomic_thread_fence(memory_order_seq_cst);
    mf_rma_progress_all();
    return MPI_SUCCESS;
}

/* The window ranks of a group's members; MPI_ERR_GROUP (raised) when the group is not valid or
 * names a process outside the window. */
static int group_ranks(const char *func, mf_win_t *w, MPI_Group group, int **ranks_p, int *n_p)
{
    mf_group_t *g = mf_group_get(group);
    if (g == NULL)
        return mf_err_raise_win(
            w, mf_err_code(MPI_ERR_GROUP, func, "argument group is not a valid group"));
    int *ranks = malloc(sizeof(int) * (size_t)(g->size > 0 ? g->size : 1));
    if (ranks == NULL)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    for (int i = 0; i < g->size; i++) {
        ranks[i] = -1;
        for (int r = 0; r < w->comm->size; r++)
            if (mf_comm_world_rank(w->comm, r) == g->world_ranks[i]) {
                ranks[i] = r;
                break;
            }
        if (ranks[i] < 0) {
            free(ranks);
            return mf_err_raise_win(w, mf_err_code(MPI_ERR_GROUP, func,
                                                   "argument group: member %d is not in the "
                                                   "window's group",
                                                   i));
        }
    }
    *ranks_p = ranks;
    *n_p = g->size;
    return MPI_SUCCESS;
}

static int pscw_open(const char *func, MPI_Group group, int assert, MPI_Win win, int post)
{
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS)
        rc = check_assert(func, w, assert,
                          post ? MPI_MODE_NOCHECK | MPI_MODE_NOSTORE | MPI_MODE_NOPUT
                               : MPI_MODE_NOCHECK);
    int *ranks = NULL, n = 0;
    if (rc == MPI_SUCCESS)
        rc = group_ranks(func, w, group, &ranks, &n);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_RMA_WHY_LEN];
    rc = post ? mf_win_post(w, ranks, n, assert, why) : mf_win_start(w, ranks, n, assert, why);
    free(ranks);
    return finish(w, func, rc, why);
}

#pragma weak MPI_Win_post = PMPI_Win_post
int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    return pscw_open("MPI_Win_post", group, assert, win, 1);
}

#pragma weak MPI_Win_start = PMPI_Win_start
int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    return pscw_open("MPI_Win_start", group, assert, win, 0);
}

#pragma weak MPI_Win_complete = PMPI_Win_complete
int PMPI_Win_complete(MPI_Win win)
{
    static const char func[] = "MPI_Win_complete";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_RMA_WHY_LEN];
    return finish(w, func, mf_win_complete(w, why), why);
}

#pragma weak MPI_Win_wait = PMPI_Win_wait
int PMPI_Win_wait(MPI_Win win)
{
    static const char func[] = "MPI_Win_wait";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_RMA_WHY_LEN];
    return finish(w, func, mf_win_wait(w, 1, NULL, why), why);
}

#pragma weak MPI_Win_test = PMPI_Win_test
int PMPI_Win_test(MPI_Win win, int *flag)
{
    static const char func[] = "MPI_Win_test";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS && flag == NULL)
        rc = mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument flag is NULL"));
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_RMA_WHY_LEN];
    return finish(w, func, mf_win_wait(w, 0, flag, why), why);
}
