/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-IO entry points (MPI-4.1 chapter 14): argument checks and error handling over src/io.
 *
 * Errors go through the file's error handler (MPI_ERRORS_RETURN unless set; MPI_File_open and
 * MPI_File_delete use MPI_FILE_NULL's). The checks shared with other calls (count, datatype,
 * buffer) raise on the file's private communicator, whose handler returns, and the code is
 * then raised on the file. Every data access completes inside its call: a non-blocking one
 * returns a request that is already complete, and a split collective's *_begin does the work
 * and keeps the status for its *_end (both allowed by MPI-4.1 sections 14.4.3 and 14.4.5).
 */
#include "binding.h"
#include "io.h"

#include <stdlib.h>
#include <string.h>

/* Raise error class `cls` with the reason `why` from src/io on f (NULL: MPI_FILE_NULL). */
static int raise_io(mf_file_t *f, const char *func, int cls, const char *why)
{
    return mf_err_raise_file(f, mf_err_code(cls, func, "%s", why));
}

static int check_ptr(mf_file_t *f, const char *func, const void *p, const char *arg)
{
    if (p != NULL)
        return MPI_SUCCESS;
    return mf_err_raise_file(f, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL", arg));
}

/* ---- open, close, delete ------------------------------------------------------------------ */

#pragma weak MPI_File_open = PMPI_File_open
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char func[] = "MPI_File_open";
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_comm_t *c = mf_comm_get(comm);
    struct MPI_ABI_Info *in = mf_info_get_obj(info);
    if (c == NULL)
        return mf_err_raise_file(
            NULL, mf_err_code(MPI_ERR_COMM, func, "argument comm is not a valid communicator"));
    if (mf_comm_is_inter(c))
        return mf_err_raise_file(
            NULL, mf_err_code(MPI_ERR_COMM, func, "argument comm is an intercommunicator"));
    if (filename == NULL)
        return mf_err_raise_file(NULL,
                                 mf_err_code(MPI_ERR_BAD_FILE, func, "argument filename is NULL"));
    if (in == NULL && info != MPI_INFO_NULL)
        return mf_err_raise_file(
            NULL, mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    if (fh == NULL)
        return mf_err_raise_file(NULL, mf_err_code(MPI_ERR_ARG, func, "argument fh is NULL"));
    char why[MF_IO_WHY_LEN];
    mf_file_t *f = NULL;
    int cls = mf_file_open(c, filename, amode, in, &f, why);
    if (cls != MPI_SUCCESS)
        return raise_io(NULL, func, cls, why);
    /* a new file takes the default handler of the moment (MPI-4.1 section 9.3) */
    mf_errhandler_release(atomic_exchange(&f->errhandler, mf_err_file_default()));
    *fh = f;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_close = PMPI_File_close
int PMPI_File_close(MPI_File *fh)
{
    static const char func[] = "MPI_File_close";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS && fh == NULL)
        rc = mf_err_raise_file(NULL, mf_err_code(MPI_ERR_ARG, func, "argument fh is NULL"));
    mf_file_t *f = NULL;
    if (rc == MPI_SUCCESS)
        rc = mf_check_file(func, *fh, 0, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    /* an error of the close itself goes to the handler the file had */
    MPI_Errhandler eh = mf_errhandler_acquire(&f->errhandler);
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_close(f, why);
    *fh = MPI_FILE_NULL;
    if (cls == MPI_SUCCESS) {
        mf_errhandler_release(eh);
        return MPI_SUCCESS;
    }
    int code = mf_err_code(cls, func, "%s", why);
    if (eh == MPI_ERRORS_RETURN) {
        mf_errhandler_release(eh);
        return code;
    }
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT || eh->file_fn == NULL) {
        mf_errhandler_release(eh);
        return mf_err_raise_with(MPI_ERRORS_ARE_FATAL, code);
    }
    MPI_File gone = MPI_FILE_NULL;
    eh->file_fn(&gone, &code);
    mf_errhandler_release(eh);
    return code;
}

#pragma weak MPI_File_delete = PMPI_File_delete
int PMPI_File_delete(const char *filename, MPI_Info info)
{
    static const char func[] = "MPI_File_delete";
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (filename == NULL)
        return mf_err_raise_file(NULL,
                                 mf_err_code(MPI_ERR_BAD_FILE, func, "argument filename is NULL"));
    if (mf_info_get_obj(info) == NULL && info != MPI_INFO_NULL)
        return mf_err_raise_file(
            NULL, mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_delete(filename, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(NULL, func, cls, why);
}

/* ---- size, group, mode, hints --------------------------------------------------------------- */

/* The checks of a call on an open file with one output pointer `out` named `arg`. */
static int check_query(const char *func, MPI_File fh, const void *out, const char *arg,
                       mf_file_t **f_p)
{
    int rc = mf_check_file(func, fh, 0, f_p);
    return rc == MPI_SUCCESS ? check_ptr(*f_p, func, out, arg) : rc;
}

/* A collective size change: MPI_File_set_size or MPI_File_preallocate. */
static int size_call(const char *func, MPI_File fh, MPI_Offset size,
                     int (*change)(mf_file_t *f, MPI_Offset size, char *why))
{
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, fh, 0, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (size < 0)
        return mf_err_raise_file(
            f, mf_err_code(MPI_ERR_ARG, func, "argument size=%lld is negative", (long long)size));
    char why[MF_IO_WHY_LEN];
    int cls = change(f, size, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

#pragma weak MPI_File_set_size = PMPI_File_set_size
int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return size_call("MPI_File_set_size", fh, size, mf_file_set_size);
}

#pragma weak MPI_File_preallocate = PMPI_File_preallocate
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return size_call("MPI_File_preallocate", fh, size, mf_file_preallocate);
}

#pragma weak MPI_File_get_size = PMPI_File_get_size
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char func[] = "MPI_File_get_size";
    mf_file_t *f = NULL;
    int rc = check_query(func, fh, size, "size", &f);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_get_size(f, size, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

#pragma weak MPI_File_get_group = PMPI_File_get_group
int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char func[] = "MPI_File_get_group";
    mf_file_t *f = NULL;
    int rc = check_query(func, fh, group, "group", &f);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_group_t *g = NULL;
    if (mf_group_from_comm(f->comm, &g) != MF_OK)
        return mf_err_raise_file(f, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *group = mf_group_handle(g);
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_amode = PMPI_File_get_amode
int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    mf_file_t *f = NULL;
    int rc = check_query("MPI_File_get_amode", fh, amode, "amode", &f);
    if (rc == MPI_SUCCESS)
        *amode = f->amode;
    return rc;
}

#pragma weak MPI_File_set_info = PMPI_File_set_info
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    static const char func[] = "MPI_File_set_info";
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, fh, 0, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *in = mf_info_get_obj(info);
    if (in == NULL && info != MPI_INFO_NULL)
        return mf_err_raise_file(
            f, mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    if (in == NULL)
        return MPI_SUCCESS;
    /* the keys given replace those set before; the others stay (MPI-4.1 section 14.2.8) */
    struct MPI_ABI_Info *copy = NULL;
    pthread_mutex_lock(&f->lock);
    mf_status_t st = f->info != NULL ? mf_info_dup(f->info, &copy) : mf_info_create(&copy);
    pthread_mutex_unlock(&f->lock);
    if (st == MF_OK)
        st = mf_info_update(copy, in);
    if (st != MF_OK) {
        if (copy != NULL)
            mf_info_free(copy);
        return mf_err_raise_file(f, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    }
    pthread_mutex_lock(&f->lock);
    struct MPI_ABI_Info *old = f->info;
    f->info = copy;
    pthread_mutex_unlock(&f->lock);
    if (old != NULL)
        mf_info_free(old);
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_info = PMPI_File_get_info
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char func[] = "MPI_File_get_info";
    mf_file_t *f = NULL;
    int rc = check_query(func, fh, info_used, "info_used", &f);
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *out = NULL;
    pthread_mutex_lock(&f->lock);
    mf_status_t st = f->info != NULL ? mf_info_dup(f->info, &out) : mf_info_create(&out);
    pthread_mutex_unlock(&f->lock);
    if (st == MF_OK)
        st = mf_file_hints_used(f, out);
    if (st != MF_OK) {
        if (out != NULL)
            mf_info_free(out);
        return mf_err_raise_file(f, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    }
    *info_used = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_set_atomicity = PMPI_File_set_atomicity
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    static const char func[] = "MPI_File_set_atomicity";
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, fh, 0, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_set_atomicity(f, flag, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

#pragma weak MPI_File_get_atomicity = PMPI_File_get_atomicity
int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    mf_file_t *f = NULL;
    int rc = check_query("MPI_File_get_atomicity", fh, flag, "flag", &f);
    if (rc == MPI_SUCCESS)
        *flag = __atomic_load_n(&f->atomic, __ATOMIC_RELAXED);
    return rc;
}

#pragma weak MPI_File_sync = PMPI_File_sync
int PMPI_File_sync(MPI_File fh)
{
    static const char func[] = "MPI_File_sync";
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, fh, 0, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_sync(f, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

/* ---- views -------------------------------------------------------------------------------- */

#pragma weak MPI_File_set_view = PMPI_File_set_view
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    static const char func[] = "MPI_File_set_view";
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, fh, 0, &f);
    if (rc == MPI_SUCCESS && datarep == NULL)
        rc = mf_err_raise_file(
            f, mf_err_code(MPI_ERR_UNSUPPORTED_DATAREP, func, "argument datarep is NULL"));
    if (rc == MPI_SUCCESS && mf_info_get_obj(info) == NULL && info != MPI_INFO_NULL)
        rc = mf_err_raise_file(
            f, mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_set_view(f, disp, etype, filetype, datarep, why);
    if (cls != MPI_SUCCESS)
        return raise_io(f, func, cls, why);
    return info != MPI_INFO_NULL ? PMPI_File_set_info(fh, info) : MPI_SUCCESS;
}

/* A type of the view for the user: a predefined one as it is, a derived one as a new handle
 * (a duplicate) the user frees. */
static int view_type_out(MPI_Datatype dt, MPI_Datatype *out)
{
    if (mf_dtype_get(dt) == NULL) {
        *out = dt;
        return MPI_SUCCESS;
    }
    return PMPI_Type_dup(dt, out);
}

#pragma weak MPI_File_get_view = PMPI_File_get_view
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep)
{
    static const char func[] = "MPI_File_get_view";
    mf_file_t *f = NULL;
    int rc = check_query(func, fh, disp, "disp", &f);
    if (rc == MPI_SUCCESS)
        rc = check_ptr(f, func, etype, "etype");
    if (rc == MPI_SUCCESS)
        rc = check_ptr(f, func, filetype, "filetype");
    if (rc == MPI_SUCCESS)
        rc = check_ptr(f, func, datarep, "datarep");
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&f->lock);
    mf_file_view_t v = f->view;
    mf_dtype_retain(v.etype);
    mf_dtype_retain(v.filetype);
    pthread_mutex_unlock(&f->lock);
    MPI_Datatype e = MPI_DATATYPE_NULL, ft = MPI_DATATYPE_NULL;
    rc = view_type_out(v.etype, &e);
    if (rc == MPI_SUCCESS)
        rc = view_type_out(v.filetype, &ft);
    mf_dtype_release(v.etype);
    mf_dtype_release(v.filetype);
    if (rc != MPI_SUCCESS) {
        if (mf_dtype_get(e) != NULL)
            PMPI_Type_free(&e);
        return mf_err_raise_file(f, mf_err_code(MPI_ERR_NO_MEM, func,
                                                "cannot make the view's datatypes for the caller"));
    }
    *disp = v.disp;
    *etype = e;
    *filetype = ft;
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", v.datarep);
    return MPI_SUCCESS;
}

static int type_extent(const char *func, MPI_File fh, MPI_Datatype dt, MPI_Aint *extent)
{
    mf_file_t *f = NULL;
    int rc = check_query(func, fh, extent, "extent", &f);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_type_extent(f, dt, extent, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

#pragma weak MPI_File_get_type_extent = PMPI_File_get_type_extent
int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    return type_extent("MPI_File_get_type_extent", fh, datatype, extent);
}

#pragma weak MPI_File_get_type_extent_c = PMPI_File_get_type_extent_c
int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    MPI_Aint e = 0;
    int rc = type_extent("MPI_File_get_type_extent_c", fh, datatype, extent != NULL ? &e : NULL);
    if (rc == MPI_SUCCESS)
        *extent = e;
    return rc;
}

/* Errors go to the handler of MPI_FILE_NULL, as for the other I/O calls without a file. */
static int register_datarep(const char *func, const char *datarep, const mf_io_rep_functions_t *fns)
{
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    if (datarep == NULL || datarep[0] == '\0' || strlen(datarep) >= MPI_MAX_DATAREP_STRING)
        return mf_err_raise_file(NULL,
                                 mf_err_code(MPI_ERR_ARG, func, "argument datarep is %s",
                                             datarep == NULL      ? "NULL"
                                             : datarep[0] == '\0' ? "empty"
                                                                  : "longer than "
                                                                    "MPI_MAX_DATAREP_STRING"));
    if (fns->extent == NULL)
        return mf_err_raise_file(
            NULL, mf_err_code(MPI_ERR_ARG, func, "argument dtype_file_extent_fn is NULL"));
    char why[MF_IO_WHY_LEN];
    int cls = mf_io_rep_register(datarep, fns, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(NULL, func, cls, why);
}

#pragma weak MPI_Register_datarep = PMPI_Register_datarep
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    mf_io_rep_functions_t fns = {.read = read_conversion_fn,
                                 .write = write_conversion_fn,
                                 .extent = dtype_file_extent_fn,
                                 .extra_state = extra_state};
    return register_datarep("MPI_Register_datarep", datarep, &fns);
}

#pragma weak MPI_Register_datarep_c = PMPI_Register_datarep_c
int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    mf_io_rep_functions_t fns = {.read_c = read_conversion_fn,
                                 .write_c = write_conversion_fn,
                                 .extent = dtype_file_extent_fn,
                                 .extra_state = extra_state};
    return register_datarep("MPI_Register_datarep_c", datarep, &fns);
}

/* ---- file pointers ---------------------------------------------------------------------- */

#pragma weak MPI_File_seek = PMPI_File_seek
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char func[] = "MPI_File_seek";
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, fh, 0, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_seek(f, offset, whence, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

#pragma weak MPI_File_seek_shared = PMPI_File_seek_shared
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char func[] = "MPI_File_seek_shared";
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, fh, 0, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_seek_shared(f, offset, whence, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

#pragma weak MPI_File_get_position = PMPI_File_get_position
int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char func[] = "MPI_File_get_position";
    mf_file_t *f = NULL;
    int rc = check_query(func, fh, offset, "offset", &f);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_get_position(f, offset, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

#pragma weak MPI_File_get_position_shared = PMPI_File_get_position_shared
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char func[] = "MPI_File_get_position_shared";
    mf_file_t *f = NULL;
    int rc = check_query(func, fh, offset, "offset", &f);
    if (rc != MPI_SUCCESS)
        return rc;
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_get_position_shared(f, offset, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

#pragma weak MPI_File_get_byte_offset = PMPI_File_get_byte_offset
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char func[] = "MPI_File_get_byte_offset";
    mf_file_t *f = NULL;
    int rc = check_query(func, fh, disp, "disp", &f);
    if (rc != MPI_SUCCESS)
        return rc;
    if (offset < 0)
        return mf_err_raise_file(
            f,
            mf_err_code(MPI_ERR_ARG, func, "argument offset=%lld is negative", (long long)offset));
    char why[MF_IO_WHY_LEN];
    int cls = mf_file_get_byte_offset(f, offset, disp, why);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : raise_io(f, func, cls, why);
}

/* ---- data access ---------------------------------------------------------------------------- */

typedef enum {
    IO_BLOCKING,    /* status */
    IO_NONBLOCKING, /* request: complete when returned */
    IO_BEGIN,       /* a split collective's begin: the status waits for `end` */
} io_form_t;

typedef struct io_call {
    const char *func;
    MPI_File fh;
    mf_io_where_t where;
    int ordered; /* MPI_File_read/write_ordered (collective, the shared pointer) */
    /* MPI_File_write_all/_at_all(_c): blocking collective, may aggregate. The non-blocking and
     * split forms do not: they must not wait for other processes inside the call. */
    int collective;
    int write;
    MPI_Offset offset; /* MF_IO_AT */
    void *buf;
    MPI_Count count;
    MPI_Datatype datatype;
    io_form_t form;
    MPI_Status *status;
    MPI_Request *request;
    const char *end; /* IO_BEGIN: the *_end that completes it */
} io_call_t;

static int request_query(void *extra_state, MPI_Status *status)
{
    mf_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, status->MPI_ERROR, *(MPI_Count *)extra_state,
                  0);
    return MPI_SUCCESS;
}

static int request_free(void *extra_state)
{
    free(extra_state);
    return MPI_SUCCESS;
}

static int request_cancel(void *extra_state, int complete)
{
    (void)extra_state;
    (void)complete; /* always complete: nothing to cancel */
    return MPI_SUCCESS;
}

/* A completed request whose status says `bytes` were moved. */
static int completed_request(mf_file_t *f, const char *func, MPI_Count bytes, MPI_Request *request)
{
    MPI_Count *state = malloc(sizeof(*state));
    mf_request_t *req = NULL;
    if (state == NULL ||
        mf_greq_start(request_query, request_free, request_cancel, state, &req) != MF_OK) {
        free(state);
        return mf_err_raise_file(f, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    }
    *state = bytes;
    mf_greq_complete(req);
    *request = req;
    return MPI_SUCCESS;
}

static void set_status(MPI_Status *status, MPI_Count bytes)
{
    if (status != MPI_STATUS_IGNORE) /* MPI_ERROR is left alone, as a single completion does */
        mf_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, status->MPI_ERROR, bytes, 0);
}

static int file_io(const io_call_t *a)
{
    const char *func = a->func;
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, a->fh, 0, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_comm_t *c = f->comm; /* returns its errors: they are raised on f below */
    size_t bytes = 0;
    if (a->where == MF_IO_AT && a->offset < 0)
        rc = mf_err_code(MPI_ERR_ARG, func, "argument offset=%lld is negative",
                         (long long)a->offset);
    if (rc == MPI_SUCCESS)
        rc = mf_check_count(func, c, "count", a->count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, "datatype", a->datatype, a->count, &bytes);
    if (rc == MPI_SUCCESS)
        rc = mf_check_typed_buffer(func, c, "buf", a->buf, a->datatype, a->count, bytes);
    if (rc == MPI_SUCCESS && a->form == IO_NONBLOCKING && a->request == NULL)
        rc = mf_err_code(MPI_ERR_ARG, func, "argument request is NULL");
    if (rc == MPI_SUCCESS && a->form == IO_BEGIN) {
        pthread_mutex_lock(&f->lock);
        const char *pending = f->split_begun;
        pthread_mutex_unlock(&f->lock);
        if (pending != NULL)
            rc = mf_err_code(MPI_ERR_OTHER, func,
                             "a split collective is already active on the file (%s completes "
                             "it; one at a time per file)",
                             pending);
    }
    char why[MF_IO_WHY_LEN];
    MPI_Count moved = 0;
    if (a->collective) {
        /* a process whose checks failed still takes part in the first exchange, saying it is
         * out (the others would wait for it); they then write alone */
        int cls = mf_file_write_all(f, rc == MPI_SUCCESS, a->where, a->offset, a->buf, a->count,
                                    a->datatype, &moved, why);
        if (rc != MPI_SUCCESS)
            return mf_err_raise_file(f, rc);
        if (cls != MPI_SUCCESS)
            return raise_io(f, func, cls, why);
        set_status(a->status, moved);
        return MPI_SUCCESS;
    }
    if (rc != MPI_SUCCESS)
        return mf_err_raise_file(f, rc);
    int cls = a->ordered
                  ? mf_file_access_ordered(f, a->write, a->buf, a->count, a->datatype, &moved, why)
                  : mf_file_access(f, a->where, a->write, a->offset, a->buf, a->count, a->datatype,
                                   &moved, why);
    if (cls != MPI_SUCCESS)
        return raise_io(f, func, cls, why);
    switch (a->form) {
    case IO_BLOCKING: set_status(a->status, moved); break;
    case IO_NONBLOCKING: return completed_request(f, func, moved, a->request);
    case IO_BEGIN:
        pthread_mutex_lock(&f->lock);
        f->split_begun = a->end;
        mf_status_set(&f->split_status, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_SUCCESS, moved, 0);
        pthread_mutex_unlock(&f->lock);
        break;
    }
    return MPI_SUCCESS;
}

/* A split collective's *_end: the status its *_begin kept. */
static int split_end(const char *func, MPI_File fh, MPI_Status *status)
{
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, fh, 0, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&f->lock);
    const char *pending = f->split_begun;
    MPI_Status kept = f->split_status;
    int match = pending != NULL && strcmp(pending, func) == 0;
    if (match)
        f->split_begun = NULL;
    pthread_mutex_unlock(&f->lock);
    if (!match)
        return mf_err_raise_file(f, mf_err_code(MPI_ERR_OTHER, func,
                                                pending == NULL
                                                    ? "no split collective is active on the file"
                                                    : "the active split collective is not this one "
                                                      "(%s completes it)",
                                                pending));
    set_status(status, mf_status_bytes(&kept));
    return MPI_SUCCESS;
}

/* The arguments every form has; each form adds its own. */
static io_call_t io_args(const char *func, MPI_File fh, mf_io_where_t where, int write,
                         MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype dt,
                         io_form_t form)
{
    return (io_call_t){.func = func,
                       .fh = fh,
                       .where = where,
                       .write = write,
                       .offset = offset,
                       .buf = (void *)(uintptr_t)buf,
                       .count = count,
                       .datatype = dt,
                       .form = form};
}

/* The forms, each for read (write 0) and write. */
static int io_blocking(const char *func, MPI_File fh, mf_io_where_t where, int write,
                       MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype dt,
                       MPI_Status *status)
{
    io_call_t a = io_args(func, fh, where, write, offset, buf, count, dt, IO_BLOCKING);
    a.status = status;
    return file_io(&a);
}

/* MPI_File_write_all/_at_all(_c) */
static int io_write_all(const char *func, MPI_File fh, mf_io_where_t where, MPI_Offset offset,
                        const void *buf, MPI_Count count, MPI_Datatype dt, MPI_Status *status)
{
    io_call_t a = io_args(func, fh, where, 1, offset, buf, count, dt, IO_BLOCKING);
    a.collective = 1;
    a.status = status;
    return file_io(&a);
}

static int io_nonblocking(const char *func, MPI_File fh, mf_io_where_t where, int write,
                          MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype dt,
                          MPI_Request *request)
{
    io_call_t a = io_args(func, fh, where, write, offset, buf, count, dt, IO_NONBLOCKING);
    a.request = request;
    return file_io(&a);
}

static int io_begin(const char *func, const char *end, MPI_File fh, mf_io_where_t where, int write,
                    MPI_Offset offset, const void *buf, MPI_Count count, MPI_Datatype dt)
{
    io_call_t a = io_args(func, fh, where, write, offset, buf, count, dt, IO_BEGIN);
    a.end = end;
    return file_io(&a);
}

static int io_ordered(const char *func, const char *end, MPI_File fh, int write, const void *buf,
                      MPI_Count count, MPI_Datatype dt, MPI_Status *status)
{
    io_call_t a = io_args(func, fh, MF_IO_SHARED, write, 0, buf, count, dt,
                          end != NULL ? IO_BEGIN : IO_BLOCKING);
    a.ordered = 1;
    a.status = status;
    a.end = end;
    return file_io(&a);
}

/* explicit offsets */

#pragma weak MPI_File_read_at = PMPI_File_read_at
int PMPI_File_read_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return io_blocking("MPI_File_read_at", fh, MF_IO_AT, 0, offset, buf, count, datatype, status);
}

#pragma weak MPI_File_read_at_c = PMPI_File_read_at_c
int PMPI_File_read_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                        MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking("MPI_File_read_at_c", fh, MF_IO_AT, 0, offset, buf, count, datatype, status);
}

#pragma weak MPI_File_read_at_all = PMPI_File_read_at_all
int PMPI_File_read_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                          MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking("MPI_File_read_at_all", fh, MF_IO_AT, 0, offset, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_read_at_all_c = PMPI_File_read_at_all_c
int PMPI_File_read_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking("MPI_File_read_at_all_c", fh, MF_IO_AT, 0, offset, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_write_at = PMPI_File_write_at
int PMPI_File_write_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                       MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking("MPI_File_write_at", fh, MF_IO_AT, 1, offset, buf, count, datatype, status);
}

#pragma weak MPI_File_write_at_c = PMPI_File_write_at_c
int PMPI_File_write_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking("MPI_File_write_at_c", fh, MF_IO_AT, 1, offset, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_write_at_all = PMPI_File_write_at_all
int PMPI_File_write_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                           MPI_Datatype datatype, MPI_Status *status)
{
    return io_write_all("MPI_File_write_at_all", fh, MF_IO_AT, offset, buf, count, datatype,
                        status);
}

#pragma weak MPI_File_write_at_all_c = PMPI_File_write_at_all_c
int PMPI_File_write_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Status *status)
{
    return io_write_all("MPI_File_write_at_all_c", fh, MF_IO_AT, offset, buf, count, datatype,
                        status);
}

#pragma weak MPI_File_iread_at = PMPI_File_iread_at
int PMPI_File_iread_at(MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
                       MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread_at", fh, MF_IO_AT, 0, offset, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iread_at_c = PMPI_File_iread_at_c
int PMPI_File_iread_at_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                         MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread_at_c", fh, MF_IO_AT, 0, offset, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iread_at_all = PMPI_File_iread_at_all
int PMPI_File_iread_at_all(MPI_File fh, MPI_Offset offset, void *buf, int count,
                           MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread_at_all", fh, MF_IO_AT, 0, offset, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iread_at_all_c = PMPI_File_iread_at_all_c
int PMPI_File_iread_at_all_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                             MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread_at_all_c", fh, MF_IO_AT, 0, offset, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite_at = PMPI_File_iwrite_at
int PMPI_File_iwrite_at(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                        MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite_at", fh, MF_IO_AT, 1, offset, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite_at_c = PMPI_File_iwrite_at_c
int PMPI_File_iwrite_at_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                          MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite_at_c", fh, MF_IO_AT, 1, offset, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite_at_all = PMPI_File_iwrite_at_all
int PMPI_File_iwrite_at_all(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                            MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite_at_all", fh, MF_IO_AT, 1, offset, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite_at_all_c = PMPI_File_iwrite_at_all_c
int PMPI_File_iwrite_at_all_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite_at_all_c", fh, MF_IO_AT, 1, offset, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_read_at_all_begin = PMPI_File_read_at_all_begin
int PMPI_File_read_at_all_begin(MPI_File fh, MPI_Offset offset, void *buf, int count,
                                MPI_Datatype datatype)
{
    return io_begin("MPI_File_read_at_all_begin", "MPI_File_read_at_all_end", fh, MF_IO_AT, 0,
                    offset, buf, count, datatype);
}

#pragma weak MPI_File_read_at_all_begin_c = PMPI_File_read_at_all_begin_c
int PMPI_File_read_at_all_begin_c(MPI_File fh, MPI_Offset offset, void *buf, MPI_Count count,
                                  MPI_Datatype datatype)
{
    return io_begin("MPI_File_read_at_all_begin_c", "MPI_File_read_at_all_end", fh, MF_IO_AT, 0,
                    offset, buf, count, datatype);
}

#pragma weak MPI_File_read_at_all_end = PMPI_File_read_at_all_end
int PMPI_File_read_at_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_read_at_all_end", fh, status);
}

#pragma weak MPI_File_write_at_all_begin = PMPI_File_write_at_all_begin
int PMPI_File_write_at_all_begin(MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                 MPI_Datatype datatype)
{
    return io_begin("MPI_File_write_at_all_begin", "MPI_File_write_at_all_end", fh, MF_IO_AT, 1,
                    offset, buf, count, datatype);
}

#pragma weak MPI_File_write_at_all_begin_c = PMPI_File_write_at_all_begin_c
int PMPI_File_write_at_all_begin_c(MPI_File fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                   MPI_Datatype datatype)
{
    return io_begin("MPI_File_write_at_all_begin_c", "MPI_File_write_at_all_end", fh, MF_IO_AT, 1,
                    offset, buf, count, datatype);
}

#pragma weak MPI_File_write_at_all_end = PMPI_File_write_at_all_end
int PMPI_File_write_at_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_write_at_all_end", fh, status);
}

/* the individual file pointer */

#pragma weak MPI_File_read = PMPI_File_read
int PMPI_File_read(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking("MPI_File_read", fh, MF_IO_INDIVIDUAL, 0, 0, buf, count, datatype, status);
}

#pragma weak MPI_File_read_c = PMPI_File_read_c
int PMPI_File_read_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                     MPI_Status *status)
{
    return io_blocking("MPI_File_read_c", fh, MF_IO_INDIVIDUAL, 0, 0, buf, count, datatype, status);
}

#pragma weak MPI_File_read_all = PMPI_File_read_all
int PMPI_File_read_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status)
{
    return io_blocking("MPI_File_read_all", fh, MF_IO_INDIVIDUAL, 0, 0, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_read_all_c = PMPI_File_read_all_c
int PMPI_File_read_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Status *status)
{
    return io_blocking("MPI_File_read_all_c", fh, MF_IO_INDIVIDUAL, 0, 0, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_write = PMPI_File_write
int PMPI_File_write(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                    MPI_Status *status)
{
    return io_blocking("MPI_File_write", fh, MF_IO_INDIVIDUAL, 1, 0, buf, count, datatype, status);
}

#pragma weak MPI_File_write_c = PMPI_File_write_c
int PMPI_File_write_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Status *status)
{
    return io_blocking("MPI_File_write_c", fh, MF_IO_INDIVIDUAL, 1, 0, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_write_all = PMPI_File_write_all
int PMPI_File_write_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                        MPI_Status *status)
{
    return io_write_all("MPI_File_write_all", fh, MF_IO_INDIVIDUAL, 0, buf, count, datatype,
                        status);
}

#pragma weak MPI_File_write_all_c = PMPI_File_write_all_c
int PMPI_File_write_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return io_write_all("MPI_File_write_all_c", fh, MF_IO_INDIVIDUAL, 0, buf, count, datatype,
                        status);
}

#pragma weak MPI_File_iread = PMPI_File_iread
int PMPI_File_iread(MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread", fh, MF_IO_INDIVIDUAL, 0, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iread_c = PMPI_File_iread_c
int PMPI_File_iread_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread_c", fh, MF_IO_INDIVIDUAL, 0, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iread_all = PMPI_File_iread_all
int PMPI_File_iread_all(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                        MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread_all", fh, MF_IO_INDIVIDUAL, 0, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iread_all_c = PMPI_File_iread_all_c
int PMPI_File_iread_all_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                          MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread_all_c", fh, MF_IO_INDIVIDUAL, 0, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite = PMPI_File_iwrite
int PMPI_File_iwrite(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                     MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite", fh, MF_IO_INDIVIDUAL, 1, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite_c = PMPI_File_iwrite_c
int PMPI_File_iwrite_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                       MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite_c", fh, MF_IO_INDIVIDUAL, 1, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite_all = PMPI_File_iwrite_all
int PMPI_File_iwrite_all(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                         MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite_all", fh, MF_IO_INDIVIDUAL, 1, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite_all_c = PMPI_File_iwrite_all_c
int PMPI_File_iwrite_all_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite_all_c", fh, MF_IO_INDIVIDUAL, 1, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_read_all_begin = PMPI_File_read_all_begin
int PMPI_File_read_all_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return io_begin("MPI_File_read_all_begin", "MPI_File_read_all_end", fh, MF_IO_INDIVIDUAL, 0, 0,
                    buf, count, datatype);
}

#pragma weak MPI_File_read_all_begin_c = PMPI_File_read_all_begin_c
int PMPI_File_read_all_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return io_begin("MPI_File_read_all_begin_c", "MPI_File_read_all_end", fh, MF_IO_INDIVIDUAL, 0,
                    0, buf, count, datatype);
}

#pragma weak MPI_File_read_all_end = PMPI_File_read_all_end
int PMPI_File_read_all_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_read_all_end", fh, status);
}

#pragma weak MPI_File_write_all_begin = PMPI_File_write_all_begin
int PMPI_File_write_all_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return io_begin("MPI_File_write_all_begin", "MPI_File_write_all_end", fh, MF_IO_INDIVIDUAL, 1,
                    0, buf, count, datatype);
}

#pragma weak MPI_File_write_all_begin_c = PMPI_File_write_all_begin_c
int PMPI_File_write_all_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                MPI_Datatype datatype)
{
    return io_begin("MPI_File_write_all_begin_c", "MPI_File_write_all_end", fh, MF_IO_INDIVIDUAL, 1,
                    0, buf, count, datatype);
}

#pragma weak MPI_File_write_all_end = PMPI_File_write_all_end
int PMPI_File_write_all_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_write_all_end", fh, status);
}

/* the shared file pointer */

#pragma weak MPI_File_read_shared = PMPI_File_read_shared
int PMPI_File_read_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                          MPI_Status *status)
{
    return io_blocking("MPI_File_read_shared", fh, MF_IO_SHARED, 0, 0, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_read_shared_c = PMPI_File_read_shared_c
int PMPI_File_read_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return io_blocking("MPI_File_read_shared_c", fh, MF_IO_SHARED, 0, 0, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_write_shared = PMPI_File_write_shared
int PMPI_File_write_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return io_blocking("MPI_File_write_shared", fh, MF_IO_SHARED, 1, 0, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_write_shared_c = PMPI_File_write_shared_c
int PMPI_File_write_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    return io_blocking("MPI_File_write_shared_c", fh, MF_IO_SHARED, 1, 0, buf, count, datatype,
                       status);
}

#pragma weak MPI_File_iread_shared = PMPI_File_iread_shared
int PMPI_File_iread_shared(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                           MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread_shared", fh, MF_IO_SHARED, 0, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iread_shared_c = PMPI_File_iread_shared_c
int PMPI_File_iread_shared_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Request *request)
{
    return io_nonblocking("MPI_File_iread_shared_c", fh, MF_IO_SHARED, 0, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite_shared = PMPI_File_iwrite_shared
int PMPI_File_iwrite_shared(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite_shared", fh, MF_IO_SHARED, 1, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_iwrite_shared_c = PMPI_File_iwrite_shared_c
int PMPI_File_iwrite_shared_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Request *request)
{
    return io_nonblocking("MPI_File_iwrite_shared_c", fh, MF_IO_SHARED, 1, 0, buf, count, datatype,
                          request);
}

#pragma weak MPI_File_read_ordered = PMPI_File_read_ordered
int PMPI_File_read_ordered(MPI_File fh, void *buf, int count, MPI_Datatype datatype,
                           MPI_Status *status)
{
    return io_ordered("MPI_File_read_ordered", NULL, fh, 0, buf, count, datatype, status);
}

#pragma weak MPI_File_read_ordered_c = PMPI_File_read_ordered_c
int PMPI_File_read_ordered_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype,
                             MPI_Status *status)
{
    return io_ordered("MPI_File_read_ordered_c", NULL, fh, 0, buf, count, datatype, status);
}

#pragma weak MPI_File_write_ordered = PMPI_File_write_ordered
int PMPI_File_write_ordered(MPI_File fh, const void *buf, int count, MPI_Datatype datatype,
                            MPI_Status *status)
{
    return io_ordered("MPI_File_write_ordered", NULL, fh, 1, buf, count, datatype, status);
}

#pragma weak MPI_File_write_ordered_c = PMPI_File_write_ordered_c
int PMPI_File_write_ordered_c(MPI_File fh, const void *buf, MPI_Count count, MPI_Datatype datatype,
                              MPI_Status *status)
{
    return io_ordered("MPI_File_write_ordered_c", NULL, fh, 1, buf, count, datatype, status);
}

#pragma weak MPI_File_read_ordered_begin = PMPI_File_read_ordered_begin
int PMPI_File_read_ordered_begin(MPI_File fh, void *buf, int count, MPI_Datatype datatype)
{
    return io_ordered("MPI_File_read_ordered_begin", "MPI_File_read_ordered_end", fh, 0, buf, count,
                      datatype, NULL);
}

#pragma weak MPI_File_read_ordered_begin_c = PMPI_File_read_ordered_begin_c
int PMPI_File_read_ordered_begin_c(MPI_File fh, void *buf, MPI_Count count, MPI_Datatype datatype)
{
    return io_ordered("MPI_File_read_ordered_begin_c", "MPI_File_read_ordered_end", fh, 0, buf,
                      count, datatype, NULL);
}

#pragma weak MPI_File_read_ordered_end = PMPI_File_read_ordered_end
int PMPI_File_read_ordered_end(MPI_File fh, void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_read_ordered_end", fh, status);
}

#pragma weak MPI_File_write_ordered_begin = PMPI_File_write_ordered_begin
int PMPI_File_write_ordered_begin(MPI_File fh, const void *buf, int count, MPI_Datatype datatype)
{
    return io_ordered("MPI_File_write_ordered_begin", "MPI_File_write_ordered_end", fh, 1, buf,
                      count, datatype, NULL);
}

#pragma weak MPI_File_write_ordered_begin_c = PMPI_File_write_ordered_begin_c
int PMPI_File_write_ordered_begin_c(MPI_File fh, const void *buf, MPI_Count count,
                                    MPI_Datatype datatype)
{
    return io_ordered("MPI_File_write_ordered_begin_c", "MPI_File_write_ordered_end", fh, 1, buf,
                      count, datatype, NULL);
}

#pragma weak MPI_File_write_ordered_end = PMPI_File_write_ordered_end
int PMPI_File_write_ordered_end(MPI_File fh, const void *buf, MPI_Status *status)
{
    (void)buf;
    return split_end("MPI_File_write_ordered_end", fh, status);
}
