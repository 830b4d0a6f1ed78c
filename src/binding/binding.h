/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer interface: argument checks, error codes with messages, and error-handler
 * invocation shared by the hand-written MPI_/PMPI_ entry points and the generated stubs.
 *
 * Every check returns MPI_SUCCESS or an error code that has already been passed through the
 * right error handler, so an entry point does `if (rc != MPI_SUCCESS) return rc;`. Error codes
 * carry a message naming the function, the argument and the reason (MPI_Error_string shows it).
 */
#ifndef MF_BINDING_H
#define MF_BINDING_H

#include "core.h"

#include <string.h>

typedef enum {
    MF_ERRH_NONE,
    MF_ERRH_COMM,
    MF_ERRH_WIN,
    MF_ERRH_FILE,
    MF_ERRH_SESSION
} mf_errh_scope_t;

/* The body of every generated stub: reports MPI_ERR_UNSUPPORTED_OPERATION naming `func`. */
int mf_binding_unsupported(const char *func, mf_errh_scope_t scope, const void *handle);

/* Whether `value` is an MPI error code or class (predefined or added by the user). */
int mf_err_is_code(int value);
/* A new error code of `error_class` whose string is "<func>: <formatted reason>". */
int mf_err_code(int error_class, const char *func, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Hand `code` to the communicator's error handler (comm NULL: MPI_COMM_SELF's, as MPI-4 says for
 * errors not tied to an object). Returns the code when the handler returns. */
int mf_err_raise(mf_comm_t *comm, int code);
/* Hand `code` to the session's error handler (MPI_ERRORS_ARE_FATAL until set). Returns the code
 * when the handler returns. */
int mf_err_raise_session(mf_session_t *session, int code);
/* Through the window's error handler (src/rma). */
struct MPI_ABI_Win;
int mf_err_raise_win(struct MPI_ABI_Win *win, int code);
/* A live window (MPI_ERR_WIN through MPI_COMM_SELF's handler otherwise), in binding_rma.c. */
int mf_check_win(const char *func, MPI_Win win, struct MPI_ABI_Win **w_p);
/* MPI_Win_free: delete the window's attributes (their callbacks run). */
int mf_binding_win_delete_attrs(const char *func, struct MPI_ABI_Win *win);
/* Files (src/io): through the file's error handler, or MPI_FILE_NULL's when f is NULL (the
 * default for files opened from now on, MPI_ERRORS_RETURN at first). */
struct MPI_ABI_File;
int mf_err_raise_file(struct MPI_ABI_File *f, int code);
/* MPI_FILE_NULL's handler, with a reference for a file being opened. */
MPI_Errhandler mf_err_file_default(void);
/* `file` is an open file (*f_p), or MPI_FILE_NULL when null_ok (*f_p NULL); MPI_ERR_FILE
 * through MPI_FILE_NULL's handler otherwise. */
int mf_check_file(const char *func, MPI_File file, int null_ok, struct MPI_ABI_File **f_p);
/* Calls session error handler `eh` (predefined or with a session callback) for `handle`. */
int mf_err_raise_session_handler(MPI_Errhandler eh, MPI_Session handle, int code);
/* Errors of a call that is given the error handler of the object it creates, before that object
 * exists (MPI_Session_init, MPI_Comm_create_from_group, MPI_Intercomm_create_from_groups: MPI-4.1
 * sections 11.3.1 and 7.4.2, "also invoked if the function encounters an error"): the handler
 * runs with the null handle of its kind; MPI_ERRHANDLER_NULL leaves it to MPI_COMM_SELF's. */
int mf_err_raise_with(MPI_Errhandler eh, int code);
/* The errhandler argument of a call that makes a communicator from groups: a communicator
 * handler (MPI_ERRHANDLER_NULL is not one; the standard makes no exception for it). */
int mf_check_new_comm_errhandler(const char *func, MPI_Errhandler eh);
/* A user callback (`what`, e.g. "an attribute's delete callback") returned `code` during func:
 * raise an error of code's class (MPI_ERR_OTHER when code is none) that says so. */
int mf_err_callback(mf_comm_t *comm, const char *func, const char *what, int code);
/* The error class of an internal status (MPI_ERR_OTHER when none is closer). */
int mf_err_class_of(mf_status_t status);
/* Convert an internal status to an error code of the matching class and raise it on comm. */
int mf_err_from_status(mf_comm_t *comm, mf_status_t status, const char *func, const char *what);
/* Why request r's operation failed, for the message of its error (`generic` unless more is
 * known: a truncated receive names the sender, the tag and the buffer's size). Call it before
 * the request is completed and freed. */
void mf_binding_failure_reason(const mf_request_t *r, const char *generic, char *buf, size_t len);

/* MPI_LASTUSEDCODE: where the largest error code or class handed out so far is kept. */
int *mf_err_last_used_code_ptr(void);

/* `handle` is a live session (MPI_ERR_SESSION on MPI_COMM_SELF's handler otherwise). */
int mf_check_session(const char *func, MPI_Session handle, mf_session_t **session_p);

/* The library's start-up, shared by the world model and every session: the first user starts
 * it (mf_init), the last one shuts it down (mf_finalize). `world` says which model asks: the
 * world model may start once per process. Both print why they fail when no handler can be
 * called and return an MPI error class. */
int mf_binding_lib_acquire(const char *func, int world, int required, int *provided_p);
int mf_binding_lib_release(const char *func, int world);
/* As mf_check_init_comm, also accepting a communicator of MPI_Comm_idup whose request has not
 * completed: for the calls local to the handle (error handler, name, attributes). */
int mf_check_init_comm_local(const char *func, MPI_Comm handle, mf_comm_t **comm_p);
int mf_check_dest(const char *func, mf_comm_t *comm, const char *arg, int rank);
int mf_check_source(const char *func, mf_comm_t *comm, const char *arg, int rank);
int mf_check_send_tag(const char *func, mf_comm_t *comm, const char *arg, int tag);
int mf_check_recv_tag(const char *func, mf_comm_t *comm, const char *arg, int tag);
/* `op` is a valid operation, usable in a reduction (not MPI_REPLACE/MPI_NO_OP), and defined on
 * the predefined datatype `dt` (binding_op.c). */
int mf_check_op(const char *func, mf_comm_t *comm, MPI_Op op, MPI_Datatype dt);
/* ---- the checks every call makes ----------------------------------------------------------
 * Inline for the passing case, which is every correct call's: a small collective's checks cost
 * about as much as its work when each was a call (Gather of 8 bytes on two ranks: about 390
 * instructions of checks against 200 of work). A failing check goes to the out-of-line *_fail
 * function, which raises the error. */

int mf_check_initialized_fail(const char *func);
int mf_check_comm_fail(const char *func, const char *arg, MPI_Comm handle);
int mf_check_count_fail(const char *func, mf_comm_t *comm, const char *arg, MPI_Count count);
int mf_check_datatype_slow(const char *func, mf_comm_t *comm, const char *arg, MPI_Datatype dt,
                           MPI_Count count, size_t *bytes_p);
int mf_check_buffer_fail(const char *func, mf_comm_t *comm, const char *arg, const void *buf,
                         size_t bytes);
int mf_check_bottom_fail(const char *func, mf_comm_t *comm, const char *arg);
int mf_check_intra_fail(const char *func, const char *arg, mf_comm_t *comm);
int mf_check_ptr_fail(const char *func, mf_comm_t *comm, const char *arg);

static inline int mf_check_initialized(const char *func)
{
    if (MF_LIKELY(atomic_load_explicit(&mf_global.state, memory_order_acquire) == MF_STATE_READY))
        return MPI_SUCCESS;
    return mf_check_initialized_fail(func);
}

/* `handle` (the argument named `arg`) is a communicator. */
static inline int mf_check_comm_arg(const char *func, const char *arg, MPI_Comm handle,
                                    mf_comm_t **comm_p)
{
    mf_comm_t *comm = mf_comm_get(handle);
    if (MF_LIKELY(comm != NULL)) {
        *comm_p = comm;
        return MPI_SUCCESS;
    }
    return mf_check_comm_fail(func, arg, handle);
}

static inline int mf_check_comm(const char *func, MPI_Comm handle, mf_comm_t **comm_p)
{
    return mf_check_comm_arg(func, "comm", handle, comm_p);
}

/* The usual first checks of an entry point: MPI is initialised and `handle` is a communicator
 * (the argument `arg`, or `comm`). */
static inline int mf_check_init_comm_arg(const char *func, const char *arg, MPI_Comm handle,
                                         mf_comm_t **comm_p)
{
    int rc = mf_check_initialized(func);
    return MF_LIKELY(rc == MPI_SUCCESS) ? mf_check_comm_arg(func, arg, handle, comm_p) : rc;
}

static inline int mf_check_init_comm(const char *func, MPI_Comm handle, mf_comm_t **comm_p)
{
    return mf_check_init_comm_arg(func, "comm", handle, comm_p);
}

static inline int mf_check_count(const char *func, mf_comm_t *comm, const char *arg,
                                 MPI_Count count)
{
    return MF_LIKELY(count >= 0) ? MPI_SUCCESS : mf_check_count_fail(func, comm, arg, count);
}

/* *bytes_p = count * unit; nonzero when the product is negative or does not fit an MPI_Count
 * (every length the library reports back, MPI_Get_count_c or MPI_Pack_size_c, is one), where
 * a size_t product would let 2^63..2^64-1 through and turn negative there. */
static inline int mf_bytes_overflow(MPI_Count count, size_t unit, size_t *bytes_p)
{
    int64_t bytes;
    if (__builtin_mul_overflow((int64_t)count, (int64_t)unit, &bytes) || bytes < 0)
        return 1;
    *bytes_p = (size_t)bytes;
    return 0;
}

/* Validates a committed datatype (predefined or derived) and computes the byte length of the
 * packed form of `count` items (count * size). */
static inline int mf_check_datatype(const char *func, mf_comm_t *comm, const char *arg,
                                    MPI_Datatype dt, MPI_Count count, size_t *bytes_p)
{
    const mf_dtype_info_t *info = mf_dtype_predefined(dt);
    if (MF_LIKELY(info != NULL && info->size > 0 &&
                  !mf_bytes_overflow(count, (size_t)info->size, bytes_p)))
        return MPI_SUCCESS;
    return mf_check_datatype_slow(func, comm, arg, dt, count, bytes_p);
}

/* Whether a buffer argument is NULL or one of the sentinels MPI_IN_PLACE and
 * MPI_BUFFER_AUTOMATIC, which only the calls that name them accept (and which check them
 * first). */
static inline int mf_buffer_special(const void *buf)
{
    return (uintptr_t)buf <= (uintptr_t)MPI_BUFFER_AUTOMATIC;
}

static inline int mf_check_buffer(const char *func, mf_comm_t *comm, const char *arg,
                                  const void *buf, size_t bytes)
{
    if (MF_LIKELY(!mf_buffer_special(buf) || bytes == 0))
        return MPI_SUCCESS;
    return mf_check_buffer_fail(func, comm, arg, buf, bytes);
}

/* The same for `count` items of dt: a NULL buffer is MPI_BOTTOM, fine with a derived type
 * whose data lies at absolute addresses (mf_dtype_bottom_ok). */
static inline int mf_check_typed_buffer(const char *func, mf_comm_t *comm, const char *arg,
                                        const void *buf, MPI_Datatype dt, MPI_Count count,
                                        size_t bytes)
{
    if (MF_LIKELY(!mf_buffer_special(buf) || bytes == 0))
        return MPI_SUCCESS;
    mf_dtype_t *d = buf == NULL ? mf_dtype_get(dt) : NULL;
    if (d == NULL)
        return mf_check_buffer_fail(func, comm, arg, buf, bytes);
    return mf_dtype_bottom_ok(d, count) ? MPI_SUCCESS : mf_check_bottom_fail(func, comm, arg);
}

/* comm is an intracommunicator (MPI_ERR_COMM naming func otherwise): for the functions not
 * defined, or not yet supported, on intercommunicators. */
static inline int mf_check_intra_arg(const char *func, const char *arg, mf_comm_t *comm)
{
    return MF_LIKELY(!mf_comm_is_inter(comm)) ? MPI_SUCCESS : mf_check_intra_fail(func, arg, comm);
}

static inline int mf_check_intra(const char *func, mf_comm_t *comm)
{
    return mf_check_intra_arg(func, "comm", comm);
}

static inline int mf_check_ptr(const char *func, mf_comm_t *comm, const void *p, const char *arg)
{
    return MF_LIKELY(p != NULL) ? MPI_SUCCESS : mf_check_ptr_fail(func, comm, arg);
}

struct mf_check;
/* A collective failed with MF_ERR_TRUNCATE: the processes' counts differ (binding_coll.c). */
int mf_binding_coll_truncated(const char *func, mf_comm_t *comm);
/* MANIFOLD_COLL_CHECK=1: compare this collective call with the other members' (binding_coll.c;
 * `chk` is a struct mf_check from coll.h). MPI_SUCCESS when they match. */
int mf_binding_coll_check(const char *func, mf_comm_t *comm, const struct mf_check *chk);

/* ---- collective buffers with any datatype (binding_coll_buf.c) ---------------------------- */

struct mf_sched;
/* One side of a collective: n blocks in the user's buffer, block i being counts[i] items of
 * types[i] (or `type`) at byte displacement udispls[i]. mf_cbuf_layout gives what src/coll
 * uses: buf, and for each block its packed length lens[i] and its offset displs[i] from buf.
 * buf is the user's buffer when every block is one run of memory, else a temporary of packed
 * blocks that mf_cbuf_pack fills from the user's buffer and mf_cbuf_unpack copies back. */
#define MF_CBUF_INLINE 4
typedef struct mf_cbuf {
    char *buf;
    size_t *lens, *displs;
    MPI_Count *counts;
    MPI_Aint *udispls;
    size_t total; /* packed bytes of all blocks */
    char *user, *tmp;
    int n;
    MPI_Datatype type;
    const MPI_Datatype *types;
    /* the four arrays of up to MF_CBUF_INLINE blocks, so small calls need no allocation */
    uint64_t inl[4 * MF_CBUF_INLINE];
} mf_cbuf_t;

/* An empty buffer, safe to free; cheaper than `= {0}`, which would clear the inline arrays. */
static inline void mf_cbuf_clear(mf_cbuf_t *cb)
{
    /* field by field: a memset of the header compiles to a slow `rep stos` */
    cb->buf = cb->user = cb->tmp = NULL;
    cb->lens = cb->displs = NULL;
    cb->counts = NULL;
    cb->udispls = NULL;
    cb->total = 0;
    cb->n = 0;
    cb->type = MPI_DATATYPE_NULL;
    cb->types = NULL;
}
/* Allocate the arrays of n blocks (counts and udispls zeroed, for the caller to fill). */
int mf_cbuf_init(mf_cbuf_t *cb, const char *func, mf_comm_t *c, const void *user, int n,
                 MPI_Datatype type, const MPI_Datatype *types);
/* Compute buf, lens and displs (types already checked); frees cb on failure. */
int mf_cbuf_layout(mf_cbuf_t *cb, const char *func, mf_comm_t *c);
/* A NULL user buffer is MPI_BOTTOM: fine when every block with data lies at an absolute
 * address, its displacement plus its type's lower bound past the first page. 0 when some block
 * would read or write near address 0. */
int mf_cbuf_bottom_ok(const mf_cbuf_t *cb);
/* One block of count items at user: init + layout. */
int mf_cbuf_one(mf_cbuf_t *cb, const char *func, mf_comm_t *c, const void *user, MPI_Count count,
                MPI_Datatype type);
/* Block `block` (all when < 0): at once (s NULL) or as schedule steps; unpacking in a schedule
 * starts a new round, after every step added so far. No-ops when buf is the user's buffer. */
void mf_cbuf_pack(mf_cbuf_t *cb, struct mf_sched *s, int block);
void mf_cbuf_unpack(mf_cbuf_t *cb, struct mf_sched *s, int block);
/* Release cb; with a schedule, the temporary is handed to it. */
void mf_cbuf_done(mf_cbuf_t *cb, struct mf_sched *s);
void mf_cbuf_free(mf_cbuf_t *cb);
/* Check op on dt and give what the reduction algorithms run on: *rdt_p, *mul_p items of it per
 * item of dt, *extent_p (packed) bytes each. A predefined operation on a derived type runs on
 * the type's single basic type (MPI_ERR_OP when it has several); a user one on dt itself. */
int mf_cbuf_red_type(const char *func, mf_comm_t *c, MPI_Op op, MPI_Datatype dt,
                     MPI_Datatype *rdt_p, size_t *mul_p, size_t *extent_p);

/* Attributes at MPI_Comm_dup (copy callbacks; on failure the new communicator is freed and the
 * error raised on the parent) and before a communicator goes away (delete callbacks, in the
 * reverse order of setting). Both return MPI_SUCCESS or an error code already raised. For
 * MPI_Comm_idup, `agreement` is the request of the new communicator's agreement, which the
 * other processes take part in: after a failed copy it runs on and discards both. */
int mf_binding_comm_copy_attrs(const char *func, mf_comm_t *parent, mf_comm_t *newcomm,
                               mf_request_t *agreement);
int mf_binding_comm_delete_attrs(const char *func, mf_comm_t *comm);
/* MPI_Comm_get_attr, as `func` names it (MPI_Attr_get too), its keyval argument `keyval_arg`. */
int mf_binding_comm_get_attr(const char *func, const char *keyval_arg, MPI_Comm comm,
                             int comm_keyval, void *attribute_val, int *flag);
/* Datatype attributes: copy at MPI_Type_dup (on failure the copies are undone and the caller
 * frees newtype), delete all at MPI_Type_free (on failure the type stays). */
int mf_binding_type_copy_attrs(const char *func, MPI_Datatype oldtype, MPI_Datatype newtype);
int mf_binding_type_delete_attrs(const char *func, MPI_Datatype datatype);

#endif /* MF_BINDING_H */
