/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: error codes and their strings, error-handler invocation, the shared argument
 * checks, and the MPI error functions (Error_string, Error_class, error handlers of
 * communicators, files and windows).
 *
 * An error code is its class plus 64 times a slot number; the slot holds the detailed message.
 * Slots are reused round-robin (248 of them), so the message of a very old code may have been
 * replaced; the class of any code is always exact. All codes stay <= MPI_ERR_LASTCODE. Slot 15
 * is never used: the tool interface's classes (MPI_T_ERR_*, 1001-1018) lie in it.
 */
#include "binding.h"
#include "io.h"
#include "rma.h"

#include "pt2pt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ERR_CLASS_BITS 6
#define ERR_SLOTS      255
/* The slots form rings of ERR_PER_RING, and each thread takes its messages from one ring (the
 * threads are dealt to the rings in turn): a thread that reads the string of the error it just
 * got finds its own message even while other threads raise errors fast, up to ERR_RINGS
 * threads; more share rings. */
#define ERR_RINGS    8
#define ERR_PER_RING (ERR_SLOTS / ERR_RINGS)
/* The highest slot handed out (slot 15 is skipped, see T_CLASS_SLOT). */
#define ERR_LAST_SLOT (ERR_RINGS * ERR_PER_RING + 1)
_Static_assert(ERR_LAST_SLOT <= ERR_SLOTS, "every slot handed out has its text");

static struct {
    pthread_mutex_t lock;
    unsigned next[ERR_RINGS];
    unsigned rings_dealt;
    char text[ERR_SLOTS + 1][MPI_MAX_ERROR_STRING];
} errs = {.lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int err_ring = -1;

static const char *const class_strings[] = {
    [MPI_SUCCESS] = "no error",
    [MPI_ERR_BUFFER] = "invalid buffer pointer",
    [MPI_ERR_COUNT] = "invalid count argument",
    [MPI_ERR_TYPE] = "invalid datatype",
    [MPI_ERR_TAG] = "invalid tag",
    [MPI_ERR_COMM] = "invalid communicator",
    [MPI_ERR_RANK] = "invalid rank",
    [MPI_ERR_REQUEST] = "invalid request",
    [MPI_ERR_ROOT] = "invalid root",
    [MPI_ERR_GROUP] = "invalid group",
    [MPI_ERR_OP] = "invalid operation",
    [MPI_ERR_TOPOLOGY] = "invalid topology",
    [MPI_ERR_DIMS] = "invalid dimension argument",
    [MPI_ERR_ARG] = "invalid argument",
    [MPI_ERR_UNKNOWN] = "unknown error",
    [MPI_ERR_TRUNCATE] = "message truncated",
    [MPI_ERR_OTHER] = "other error",
    [MPI_ERR_INTERN] = "internal error",
    [MPI_ERR_PENDING] = "operation pending",
    [MPI_ERR_IN_STATUS] = "an operation failed: the MPI_ERROR field of its status has the error",
    [MPI_ERR_ACCESS] = "permission denied",
    [MPI_ERR_AMODE] = "invalid access mode",
    [MPI_ERR_ASSERT] = "invalid assert argument",
    [MPI_ERR_BAD_FILE] = "invalid file name",
    [MPI_ERR_BASE] = "invalid base address",
    [MPI_ERR_CONVERSION] = "data conversion error",
    [MPI_ERR_DISP] = "invalid displacement",
    [MPI_ERR_DUP_DATAREP] = "data representation already defined",
    [MPI_ERR_ERRHANDLER] = "invalid error handler",
    [MPI_ERR_FILE] = "invalid file handle",
    [MPI_ERR_FILE_EXISTS] = "file exists",
    [MPI_ERR_FILE_IN_USE] = "file in use",
    [MPI_ERR_INFO] = "invalid info object",
    [MPI_ERR_INFO_KEY] = "invalid info key",
    [MPI_ERR_INFO_NOKEY] = "info key not defined",
    [MPI_ERR_INFO_VALUE] = "invalid info value",
    [MPI_ERR_IO] = "input/output error",
    [MPI_ERR_KEYVAL] = "invalid attribute key",
    [MPI_ERR_LOCKTYPE] = "invalid lock type",
    [MPI_ERR_NAME] = "name not published",
    [MPI_ERR_NO_MEM] = "out of memory",
    [MPI_ERR_NO_SPACE] = "not enough space",
    [MPI_ERR_NO_SUCH_FILE] = "file does not exist",
    [MPI_ERR_NOT_SAME] = "collective argument not identical on all processes",
    [MPI_ERR_PORT] = "invalid port name",
    [MPI_ERR_PROC_ABORTED] = "peer process aborted",
    [MPI_ERR_QUOTA] = "quota exceeded",
    [MPI_ERR_READ_ONLY] = "read-only file or file system",
    [MPI_ERR_RMA_ATTACH] = "memory cannot be attached",
    [MPI_ERR_RMA_CONFLICT] = "conflicting accesses to window",
    [MPI_ERR_RMA_RANGE] = "target memory outside the window",
    [MPI_ERR_RMA_SHARED] = "memory cannot be shared",
    [MPI_ERR_RMA_SYNC] = "wrong synchronisation of RMA calls",
    [MPI_ERR_RMA_FLAVOR] = "wrong window flavor",
    [MPI_ERR_SERVICE] = "invalid service name",
    [MPI_ERR_SESSION] = "invalid session",
    [MPI_ERR_SIZE] = "invalid size",
    [MPI_ERR_SPAWN] = "error spawning processes",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "unsupported operation",
    [MPI_ERR_VALUE_TOO_LARGE] = "value too large",
    [MPI_ERR_WIN] = "invalid window",
    [MPI_ERR_ABI] = "ABI information already set or inconsistent",
};

#define NCLASSES ((int)(sizeof(class_strings) / sizeof(class_strings[0])))

/* The tool interface's return codes, error classes of their own (MPI-4.1 section 15.3.10). */
static const char *const t_class_strings[] = {
    [MPI_T_ERR_CANNOT_INIT - MPI_T_ERR_CANNOT_INIT] = "the tool interface cannot be initialized",
    [MPI_T_ERR_NOT_ACCESSIBLE - MPI_T_ERR_CANNOT_INIT] = "the tool interface is not accessible",
    [MPI_T_ERR_NOT_INITIALIZED - MPI_T_ERR_CANNOT_INIT] = "the tool interface is not initialized",
    [MPI_T_ERR_NOT_SUPPORTED - MPI_T_ERR_CANNOT_INIT] = "not supported by the tool interface",
    [MPI_T_ERR_MEMORY - MPI_T_ERR_CANNOT_INIT] = "out of memory in the tool interface",
    [MPI_T_ERR_INVALID - MPI_T_ERR_CANNOT_INIT] = "invalid use of the tool interface",
    [MPI_T_ERR_INVALID_INDEX - MPI_T_ERR_CANNOT_INIT] =
        "invalid variable, category or source index",
    [MPI_T_ERR_INVALID_ITEM - MPI_T_ERR_CANNOT_INIT] = "invalid item index",
    [MPI_T_ERR_INVALID_SESSION - MPI_T_ERR_CANNOT_INIT] = "invalid performance variable session",
    [MPI_T_ERR_INVALID_HANDLE - MPI_T_ERR_CANNOT_INIT] = "invalid tool interface handle",
    [MPI_T_ERR_INVALID_NAME - MPI_T_ERR_CANNOT_INIT] = "invalid variable or category name",
    [MPI_T_ERR_OUT_OF_HANDLES - MPI_T_ERR_CANNOT_INIT] = "no more tool interface handles",
    [MPI_T_ERR_OUT_OF_SESSIONS - MPI_T_ERR_CANNOT_INIT] = "no more performance variable sessions",
    [MPI_T_ERR_CVAR_SET_NOT_NOW - MPI_T_ERR_CANNOT_INIT] = "the control variable cannot be set now",
    [MPI_T_ERR_CVAR_SET_NEVER - MPI_T_ERR_CANNOT_INIT] = "the control variable can never be set",
    [MPI_T_ERR_PVAR_NO_WRITE - MPI_T_ERR_CANNOT_INIT] =
        "the performance variable cannot be written",
    [MPI_T_ERR_PVAR_NO_STARTSTOP - MPI_T_ERR_CANNOT_INIT] =
        "the performance variable cannot be started or stopped",
    [MPI_T_ERR_PVAR_NO_ATOMIC - MPI_T_ERR_CANNOT_INIT] =
        "the performance variable cannot be read and reset atomically",
};

#define T_CLASS_SLOT (MPI_T_ERR_CANNOT_INIT >> ERR_CLASS_BITS)
_Static_assert(MPI_T_ERR_PVAR_NO_ATOMIC >> ERR_CLASS_BITS == T_CLASS_SLOT,
               "the tool interface's classes lie in one slot");
_Static_assert(MPI_T_ERR_PVAR_NO_ATOMIC - MPI_T_ERR_CANNOT_INIT + 1 ==
                   (int)(sizeof(t_class_strings) / sizeof(t_class_strings[0])),
               "a string for each tool interface class");

static int is_t_class(int code)
{
    return code >= MPI_T_ERR_CANNOT_INIT && code <= MPI_T_ERR_PVAR_NO_ATOMIC;
}

static int class_valid(int c)
{
    return c >= 0 && c < NCLASSES && class_strings[c] != NULL;
}

static int code_class(int code);

int mf_err_code(int error_class, const char *func, const char *fmt, ...)
{
    /* A code already (a user callback's, a user class): passed on as it is. */
    if (!class_valid(error_class) && code_class(error_class) >= 0)
        return error_class;
    char reason[MPI_MAX_ERROR_STRING / 2];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    /* A callback's value that is no code at all: MPI_ERR_OTHER, naming the value. */
    if (!class_valid(error_class)) {
        size_t len = strlen(reason);
        snprintf(reason + len, sizeof(reason) - len, " (%d, which is not an MPI error code)",
                 error_class);
        error_class = MPI_ERR_OTHER;
    }
    pthread_mutex_lock(&errs.lock);
    if (err_ring < 0)
        err_ring = (int)(errs.rings_dealt++ % ERR_RINGS);
    unsigned slot = 1 + (unsigned)err_ring * ERR_PER_RING + errs.next[err_ring]++ % ERR_PER_RING;
    slot += slot >= T_CLASS_SLOT; /* the tool interface's classes' */
    snprintf(errs.text[slot], MPI_MAX_ERROR_STRING, "%s: %s (%s)", func, reason,
             class_strings[error_class]);
    pthread_mutex_unlock(&errs.lock);
    return error_class | (int)(slot << ERR_CLASS_BITS);
}

/* User classes and codes (MPI_Add_error_class/code) take values above MPI_ERR_LASTCODE. */
#define USER_FIRST (MPI_ERR_LASTCODE + 1)
#define USER_MAX   1024

typedef struct user_error {
    int in_use, is_class, error_class;
    char string[MPI_MAX_ERROR_STRING + 1];
} user_error_t;

static struct {
    pthread_mutex_t lock;
    user_error_t entries[USER_MAX];
    int count; /* entries ever handed out: values USER_FIRST .. USER_FIRST + count - 1 */
} user = {.lock = PTHREAD_MUTEX_INITIALIZER};
/* A removed value is handed out again (the lowest first), so a library that adds its classes
 * at every initialisation and removes them at every finalisation never runs out. */

/* MPI_LASTUSEDCODE's value; rewritten under user.lock whenever a class or code is added. */
static int last_used_code = MPI_ERR_LASTCODE;

int *mf_err_last_used_code_ptr(void)
{
    return &last_used_code;
}

/* The entry for a user value, or NULL; user.lock held. */
static user_error_t *user_entry_locked(int code)
{
    if (code < USER_FIRST || code >= USER_FIRST + user.count)
        return NULL;
    user_error_t *e = &user.entries[code - USER_FIRST];
    return e->in_use ? e : NULL;
}

static int code_class(int code)
{
    if (code >= USER_FIRST) {
        pthread_mutex_lock(&user.lock);
        user_error_t *e = user_entry_locked(code);
        int c = e != NULL ? e->error_class : -1;
        pthread_mutex_unlock(&user.lock);
        return c;
    }
    if (code < 0)
        return -1;
    /* listed with the error classes (MPI-4.1 section 9.4), so a class and a code */
    if (is_t_class(code) || code == MPI_ERR_LASTCODE)
        return code;
    int c = code & ((1 << ERR_CLASS_BITS) - 1), slot = code >> ERR_CLASS_BITS;
    /* Slots never handed out, and a slot on MPI_SUCCESS, make no code. */
    if (slot > 0 && (slot == T_CLASS_SLOT || slot > ERR_LAST_SLOT || c == MPI_SUCCESS))
        return -1;
    return class_valid(c) ? c : -1;
}

int mf_err_is_code(int value)
{
    return code_class(value) >= 0;
}

static void code_string(int code, char *out, size_t size)
{
    /* A value that is no code reaches here through a fatal handler (a user callback's, or
     * MPI_Comm_call_errhandler's): it indexes nothing. */
    if (code_class(code) < 0) {
        snprintf(out, size, "error code %d (not an MPI error code)", code);
        return;
    }
    if (code == MPI_ERR_LASTCODE) {
        snprintf(out, size, "the last predefined error code");
        return;
    }
    if (code >= USER_FIRST) {
        pthread_mutex_lock(&user.lock);
        user_error_t *e = user_entry_locked(code);
        snprintf(out, size, "%s", e != NULL ? e->string : "");
        pthread_mutex_unlock(&user.lock);
        return;
    }
    if (is_t_class(code)) {
        snprintf(out, size, "%s", t_class_strings[code - MPI_T_ERR_CANNOT_INIT]);
        return;
    }
    int slot = code >> ERR_CLASS_BITS;
    if (slot == 0) {
        snprintf(out, size, "%s", class_strings[code]);
        return;
    }
    pthread_mutex_lock(&errs.lock);
    /* a slot not used yet: a code nobody was given, but of a valid shape */
    snprintf(out, size, "%s",
             errs.text[slot][0] != '\0' ? errs.text[slot]
                                        : class_strings[code & ((1 << ERR_CLASS_BITS) - 1)]);
    pthread_mutex_unlock(&errs.lock);
}

static void fatal_on(const char *where, int code)
{
    char text[MPI_MAX_ERROR_STRING];
    code_string(code, text, sizeof(text));
    if (mf_global.world_size > 0)
        fprintf(stderr, "manifold: rank %d: fatal error on %s: %s\n", mf_global.world_rank, where,
                text);
    else /* before the launcher said which rank this is */
        fprintf(stderr, "manifold (pid %d): fatal error on %s: %s\n", (int)getpid(), where, text);
    if (!mf_is_initialized()) {
        mf_flush_program_output();
        _exit(1);
    }
    mf_abort(code_class(code) > 0 ? code_class(code) : 1, text);
}

static void fatal(mf_comm_t *comm, int code)
{
    char where[MPI_MAX_OBJECT_NAME + 32];
    if (comm == NULL)
        snprintf(where, sizeof(where), "MPI_COMM_SELF");
    else if (comm->name[0] != '\0')
        snprintf(where, sizeof(where), "%s", comm->name);
    else
        snprintf(where, sizeof(where), "a communicator of %d processes (context %u)", comm->size,
                 comm->context_id);
    fatal_on(where, code);
}

int mf_err_raise(mf_comm_t *comm, int code)
{
    if (!mf_is_initialized()) {
        fatal(NULL, code);
        return code;
    }
    if (comm == NULL)
        comm = &mf_comm_self;
    MPI_Errhandler eh = mf_errhandler_acquire(&comm->errhandler);
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT) {
        fatal(comm, code);
        return code;
    }
    MPI_Comm handle = mf_comm_handle(comm);
    eh->comm_fn(&handle, &code);
    mf_errhandler_release(eh);
    return code;
}

int mf_err_raise_session_handler(MPI_Errhandler eh, MPI_Session handle, int code)
{
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT || eh->session_fn == NULL) {
        fatal(NULL, code);
        return code;
    }
    eh->session_fn(&handle, &code);
    return code;
}

int mf_check_new_comm_errhandler(const char *func, MPI_Errhandler eh)
{
    if (eh == MPI_ERRHANDLER_NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ERRHANDLER, func,
                                              "argument errhandler is MPI_ERRHANDLER_NULL, not "
                                              "a communicator error handler"));
    if (!mf_errhandler_valid(eh) || (!mf_handle_is_predefined(eh) && eh->comm_fn == NULL))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ERRHANDLER, func,
                                              "argument errhandler is not a communicator error "
                                              "handler"));
    return MPI_SUCCESS;
}

int mf_err_raise_with(MPI_Errhandler eh, int code)
{
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (eh == MPI_ERRHANDLER_NULL || !mf_errhandler_valid(eh))
        return mf_err_raise(NULL, code);
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT) {
        fatal(NULL, code);
        return code;
    }
    if (eh->comm_fn != NULL) {
        MPI_Comm handle = MPI_COMM_NULL;
        eh->comm_fn(&handle, &code);
    } else if (eh->session_fn != NULL) {
        MPI_Session handle = MPI_SESSION_NULL;
        eh->session_fn(&handle, &code);
    } else {
        return mf_err_raise(NULL, code);
    }
    return code;
}

int mf_err_raise_session(mf_session_t *session, int code)
{
    MPI_Errhandler eh = mf_errhandler_acquire(&session->errhandler);
    code = mf_err_raise_session_handler(eh, session, code);
    mf_errhandler_release(eh);
    return code;
}

int mf_err_class_of(mf_status_t status)
{
    switch (status) {
    case MF_ERR_NO_MEMORY: return MPI_ERR_NO_MEM;
    case MF_ERR_TRUNCATE: return MPI_ERR_TRUNCATE;
    case MF_ERR_PEER_FAILED: return MPI_ERR_PROC_ABORTED;
    case MF_ERR_UNSUPPORTED: return MPI_ERR_UNSUPPORTED_OPERATION;
    case MF_ERR_INVALID: return MPI_ERR_ARG;
    case MF_ERR_OVERFLOW: return MPI_ERR_ARG;
    case MF_ERR_NO_SPACE: return MPI_ERR_BUFFER;
    default: return MPI_ERR_OTHER;
    }
}

int mf_err_callback(mf_comm_t *comm, const char *func, const char *what, int code)
{
    /* A user code or class says more than any message of ours: it goes on as it is. */
    if (code >= USER_FIRST && code_class(code) > 0)
        return mf_err_raise(comm, code);
    int cls = code_class(code);
    return mf_err_raise(comm, mf_err_code(cls > 0 ? cls : MPI_ERR_OTHER, func,
                                          "%s returned error code %d", what, code));
}

int mf_err_from_status(mf_comm_t *comm, mf_status_t status, const char *func, const char *what)
{
    return mf_err_raise(
        comm, mf_err_code(mf_err_class_of(status), func, "%s: %s", what, mf_status_str(status)));
}

void mf_binding_failure_reason(const mf_request_t *r, const char *generic, char *buf, size_t len)
{
    if (r->type == MF_REQ_RECV && r->op.status == MF_ERR_TRUNCATE)
        snprintf(buf, len,
                 "the message from rank %d with tag %d is longer than the receive buffer "
                 "(%zu bytes)",
                 mf_pt2pt_tag_source(r->op.sender_tag), mf_pt2pt_tag_tag(r->op.sender_tag),
                 r->buf_len);
    else if (r->type == MF_REQ_COLL && r->op.status == MF_ERR_TRUNCATE)
        snprintf(buf, len,
                 "the collective operation received a message longer or shorter than it "
                 "expected (the processes passed counts or datatypes whose type signatures "
                 "differ)");
    else if (r->op.status != MF_OK)
        snprintf(buf, len, "%s: %s", generic, mf_status_str(r->op.status));
    else
        snprintf(buf, len, "%s", generic);
}

int mf_binding_unsupported(const char *func, mf_errh_scope_t scope, const void *handle)
{
    int code =
        mf_err_code(MPI_ERR_UNSUPPORTED_OPERATION, func, "this function is not implemented yet");
    if (scope == MF_ERRH_FILE && mf_is_initialized())
        return mf_err_raise_file(mf_file_get((MPI_File)(uintptr_t)handle), code);
    if (scope == MF_ERRH_FILE)
        return mf_err_raise_file(NULL, code);
    mf_comm_t *comm = NULL;
    if (scope == MF_ERRH_COMM && mf_is_initialized())
        comm = mf_comm_get((MPI_Comm)(uintptr_t)handle);
    return mf_err_raise(comm, code);
}

/* ---- checks ------------------------------------------------------------------------------ */

int mf_check_initialized_fail(const char *func)
{
    int state = atomic_load_explicit(&mf_global.state, memory_order_acquire);
    if (state == MF_STATE_READY) /* became ready meanwhile */
        return MPI_SUCCESS;
    return mf_err_raise(NULL,
                        mf_err_code(MPI_ERR_OTHER, func, "called %s",
                                    state == MF_STATE_UNINIT ? "before MPI_Init or MPI_Session_init"
                                                             : "after MPI_Finalize"));
}

int mf_check_session(const char *func, MPI_Session handle, mf_session_t **session_p)
{
    mf_session_t *session = mf_session_get(handle);
    if (MF_LIKELY(session != NULL)) {
        *session_p = session;
        return MPI_SUCCESS;
    }
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_SESSION, func, "argument session: %s",
                                          handle == MPI_SESSION_NULL
                                              ? "MPI_SESSION_NULL is not a session"
                                              : "not a valid session (finalized or never "
                                                "initialized)"));
}

int mf_check_comm_fail(const char *func, const char *arg, MPI_Comm handle)
{
    const char *why = "not a valid communicator (freed or never created)";
    if (handle == MPI_COMM_NULL)
        why = "MPI_COMM_NULL is not a communicator";
    else if (mf_handle_is_object(handle) && handle->kind == MF_KIND_COMM_PENDING)
        why = "the communicator of an MPI_Comm_idup whose request has not completed yet";
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_COMM, func, "argument %s: %s", arg, why));
}

int mf_check_init_comm_local(const char *func, MPI_Comm handle, mf_comm_t **comm_p)
{
    if (mf_handle_is_object(handle) && handle->kind == MF_KIND_COMM_PENDING &&
        mf_check_initialized(func) == MPI_SUCCESS) {
        *comm_p = handle;
        return MPI_SUCCESS;
    }
    return mf_check_init_comm(func, handle, comm_p);
}

int mf_check_count_fail(const char *func, mf_comm_t *comm, const char *arg, MPI_Count count)
{
    return mf_err_raise(comm, mf_err_code(MPI_ERR_COUNT, func, "argument %s=%lld is negative", arg,
                                          (long long)count));
}

/* Derived types, and the errors (a predefined type passed inline in mf_check_datatype). */
int mf_check_datatype_slow(const char *func, mf_comm_t *comm, const char *arg, MPI_Datatype dt,
                           MPI_Count count, size_t *bytes_p)
{
    const mf_dtype_info_t *info = mf_dtype_predefined(dt);
    mf_dtype_t *d = mf_dtype_get(dt);
    int committed = d != NULL && atomic_load_explicit(&d->committed, memory_order_acquire);
    if (committed || (info != NULL && info->size > 0)) {
        size_t unit = committed ? (size_t)d->psize : (size_t)info->size;
        if (!mf_bytes_overflow(count, unit, bytes_p))
            return MPI_SUCCESS;
        /* a message whose length does not fit would be sent shortened */
        return mf_err_raise(comm, mf_err_code(MPI_ERR_COUNT, func,
                                              "the count argument's %lld items of %zu bytes "
                                              "(argument %s) are more bytes than an MPI_Count "
                                              "holds",
                                              (long long)count, unit, arg));
    }
    if (d != NULL)
        return mf_err_raise(comm, mf_err_code(MPI_ERR_TYPE, func,
                                              "argument %s: the datatype is not committed "
                                              "(MPI_Type_commit)",
                                              arg));
    if (dt == MPI_DATATYPE_NULL)
        return mf_err_raise(
            comm, mf_err_code(MPI_ERR_TYPE, func, "argument %s is MPI_DATATYPE_NULL", arg));
    if (info != NULL)
        return mf_err_raise(comm, mf_err_code(MPI_ERR_TYPE, func,
                                              "argument %s: %s is not supported by this build", arg,
                                              info->name));
    return mf_err_raise(comm, mf_err_code(MPI_ERR_TYPE, func,
                                          "argument %s: not a valid datatype handle (freed or "
                                          "never created)",
                                          arg));
}

int mf_check_bottom_fail(const char *func, mf_comm_t *comm, const char *arg)
{
    return mf_err_raise(comm, mf_err_code(MPI_ERR_BUFFER, func,
                                          "argument %s is NULL (MPI_BOTTOM) but the datatype's "
                                          "displacements are not absolute addresses",
                                          arg));
}

int mf_check_buffer_fail(const char *func, mf_comm_t *comm, const char *arg, const void *buf,
                         size_t bytes)
{
    if (buf != NULL)
        return mf_err_raise(
            comm, mf_err_code(MPI_ERR_BUFFER, func,
                              "argument %s is %s, which this call does not "
                              "accept",
                              arg, buf == MPI_IN_PLACE ? "MPI_IN_PLACE" : "MPI_BUFFER_AUTOMATIC"));
    return mf_err_raise(comm, mf_err_code(MPI_ERR_BUFFER, func,
                                          "argument %s is NULL but %zu bytes are to be "
                                          "transferred",
                                          arg, bytes));
}

/* The ranks point-to-point names: on an intercommunicator, those of the remote group. */
static const char *peer_what(const mf_comm_t *comm)
{
    return mf_comm_is_inter(comm) ? "the intercommunicator's remote group" : "the communicator";
}

int mf_check_dest(const char *func, mf_comm_t *comm, const char *arg, int rank)
{
    if (MF_LIKELY((rank >= 0 && rank < mf_comm_peer_size(comm)) || rank == MPI_PROC_NULL))
        return MPI_SUCCESS;
    return mf_err_raise(comm, mf_err_code(MPI_ERR_RANK, func,
                                          "argument %s=%d is not a rank of %s (size %d) nor "
                                          "MPI_PROC_NULL",
                                          arg, rank, peer_what(comm), mf_comm_peer_size(comm)));
}

int mf_check_intra_fail(const char *func, const char *arg, mf_comm_t *comm)
{
    return mf_err_raise(comm, mf_err_code(MPI_ERR_COMM, func,
                                          "argument %s is an intercommunicator, which this "
                                          "function does not support",
                                          arg));
}

int mf_check_source(const char *func, mf_comm_t *comm, const char *arg, int rank)
{
    if (MF_LIKELY((rank >= 0 && rank < mf_comm_peer_size(comm)) || rank == MPI_PROC_NULL))
        return MPI_SUCCESS;
    if (rank == MPI_ANY_SOURCE) {
        if (MF_LIKELY(!((comm->hints | comm->spread_by) & MF_HINT_NO_ANY_SOURCE)))
            return MPI_SUCCESS;
        return mf_err_raise(comm, mf_err_code(MPI_ERR_RANK, func,
                                              "argument %s is MPI_ANY_SOURCE, but the "
                                              "communicator asserts mpi_assert_no_any_source",
                                              arg));
    }
    return mf_err_raise(comm, mf_err_code(MPI_ERR_RANK, func,
                                          "argument %s=%d is not a rank of %s (size %d), "
                                          "MPI_ANY_SOURCE nor MPI_PROC_NULL",
                                          arg, rank, peer_what(comm), mf_comm_peer_size(comm)));
}

int mf_check_send_tag(const char *func, mf_comm_t *comm, const char *arg, int tag)
{
    if (MF_LIKELY(tag >= 0 && tag <= MF_PT2PT_TAG_UB))
        return MPI_SUCCESS;
    return mf_err_raise(comm, mf_err_code(MPI_ERR_TAG, func,
                                          "argument %s=%d is outside [0, MPI_TAG_UB=%d]", arg, tag,
                                          MF_PT2PT_TAG_UB));
}

int mf_check_recv_tag(const char *func, mf_comm_t *comm, const char *arg, int tag)
{
    if (MF_LIKELY(tag >= 0 && tag <= MF_PT2PT_TAG_UB))
        return MPI_SUCCESS;
    if (tag == MPI_ANY_TAG) {
        if (MF_LIKELY(!((comm->hints | comm->spread_by) & MF_HINT_NO_ANY_TAG)))
            return MPI_SUCCESS;
        return mf_err_raise(comm, mf_err_code(MPI_ERR_TAG, func,
                                              "argument %s is MPI_ANY_TAG, but the "
                                              "communicator asserts mpi_assert_no_any_tag",
                                              arg));
    }
    return mf_err_raise(comm, mf_err_code(MPI_ERR_TAG, func,
                                          "argument %s=%d is outside [0, MPI_TAG_UB=%d] and "
                                          "not MPI_ANY_TAG",
                                          arg, tag, MF_PT2PT_TAG_UB));
}

int mf_check_ptr_fail(const char *func, mf_comm_t *comm, const char *arg)
{
    return mf_err_raise(comm, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL", arg));
}

/* ---- MPI error functions ----------------------------------------------------------------- */

#pragma weak MPI_Error_string = PMPI_Error_string
int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    if (string == NULL || resultlen == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, "MPI_Error_string",
                                              "argument string or resultlen is NULL"));
    if (code_class(errorcode) < 0)
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_ARG, "MPI_Error_string",
                                        "argument errorcode=%d is not an error code", errorcode));
    code_string(errorcode, string, MPI_MAX_ERROR_STRING);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}

#pragma weak MPI_Error_class = PMPI_Error_class
int PMPI_Error_class(int errorcode, int *errorclass)
{
    int c = code_class(errorcode);
    if (c < 0)
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_ARG, "MPI_Error_class",
                                        "argument errorcode=%d is not an error code", errorcode));
    if (errorclass == NULL)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_ARG, "MPI_Error_class", "argument errorclass is NULL"));
    *errorclass = c;
    return MPI_SUCCESS;
}

/* What a user error handler was created for, for messages. */
static const char *errhandler_kind(MPI_Errhandler eh)
{
    return eh->comm_fn != NULL      ? "communicator"
           : eh->session_fn != NULL ? "session"
           : eh->file_fn != NULL    ? "file"
                                    : "window";
}

/* A new user error handler with one of its callbacks (the argument fn_arg, fn) set by the
 * caller. */
static int errhandler_create(const char *func, const char *fn_arg, const void *fn,
                             MPI_Errhandler *errhandler, struct MPI_ABI_Errhandler **eh_p)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, fn, fn_arg);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, errhandler, "errhandler");
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Errhandler *eh = mf_errhandler_new();
    if (eh == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *eh_p = eh;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_create_errhandler = PMPI_Comm_create_errhandler
int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fn, MPI_Errhandler *errhandler)
{
    struct MPI_ABI_Errhandler *eh = NULL;
    int rc = errhandler_create("MPI_Comm_create_errhandler", "comm_errhandler_fn", (const void *)fn,
                               errhandler, &eh);
    if (rc != MPI_SUCCESS)
        return rc;
    eh->comm_fn = fn;
    *errhandler = eh;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_errhandler = PMPI_Comm_set_errhandler
int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    static const char func[] = "MPI_Comm_set_errhandler";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm_local(func, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mf_errhandler_valid(errhandler))
        return mf_err_raise(c, mf_err_code(MPI_ERR_ERRHANDLER, func,
                                           "argument errhandler is not a valid error handler"));
    if (!mf_handle_is_predefined(errhandler) && errhandler->comm_fn == NULL)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ERRHANDLER, func,
                                           "argument errhandler is a %s error handler, not a "
                                           "communicator one",
                                           errhandler_kind(errhandler)));
    mf_errhandler_replace(&c->errhandler, errhandler);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_errhandler = PMPI_Comm_get_errhandler
int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    static const char func[] = "MPI_Comm_get_errhandler";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm_local(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, errhandler, "errhandler");
    if (rc != MPI_SUCCESS)
        return rc;
    /* The caller gets a new reference, released by MPI_Errhandler_free. */
    *errhandler = mf_errhandler_acquire_for_user(&c->errhandler);
    return MPI_SUCCESS;
}

#pragma weak MPI_Errhandler_free = PMPI_Errhandler_free
int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    static const char func[] = "MPI_Errhandler_free";
    /* allowed before initialisation and after finalisation (MPI-4.1 11.4.1) */
    int rc = mf_check_ptr(func, NULL, errhandler, "errhandler");
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mf_errhandler_valid(*errhandler))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ERRHANDLER, func,
                                              "argument errhandler is not a valid error handler"));
    if (!mf_errhandler_user_free(*errhandler))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ERRHANDLER, func,
                                              "argument errhandler was freed already: the "
                                              "program freed this handler as many times as it "
                                              "created or got it (a copy of a freed handle)"));
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_call_errhandler = PMPI_Comm_call_errhandler
int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    static const char func[] = "MPI_Comm_call_errhandler";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_err_raise(c, errorcode);
    /* The standard: returns MPI_SUCCESS when the handler returns. */
    return MPI_SUCCESS;
}

/* ---- user-defined error classes, codes and strings --------------------------------------- */

static int user_add(const char *func, int is_class, int error_class, int *value_p)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, value_p, is_class ? "errorclass" : "errorcode");
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&user.lock);
    int i = 0;
    while (i < user.count && user.entries[i].in_use)
        i++;
    if (i == USER_MAX) {
        pthread_mutex_unlock(&user.lock);
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_OTHER, func,
                                              "at most %d user error classes and codes exist at "
                                              "once",
                                              USER_MAX));
    }
    if (i == user.count)
        user.count++;
    int value = USER_FIRST + i;
    user_error_t *e = &user.entries[i];
    if (value > last_used_code)
        last_used_code = value;
    e->in_use = 1;
    e->is_class = is_class;
    e->error_class = is_class ? value : error_class;
    e->string[0] = '\0';
    pthread_mutex_unlock(&user.lock);
    *value_p = value;
    return MPI_SUCCESS;
}

#pragma weak MPI_Add_error_class = PMPI_Add_error_class
int PMPI_Add_error_class(int *errorclass)
{
    return user_add("MPI_Add_error_class", 1, 0, errorclass);
}

static int is_class(int c)
{
    if (c >= USER_FIRST) {
        pthread_mutex_lock(&user.lock);
        user_error_t *e = user_entry_locked(c);
        int ok = e != NULL && e->is_class;
        pthread_mutex_unlock(&user.lock);
        return ok;
    }
    return class_valid(c) || c == MPI_ERR_LASTCODE;
}

#pragma weak MPI_Add_error_code = PMPI_Add_error_code
int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    if (mf_is_initialized() && !is_class(errorclass))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, "MPI_Add_error_code",
                                              "argument errorclass=%d is not an error class",
                                              errorclass));
    return user_add("MPI_Add_error_code", 0, errorclass, errorcode);
}

#pragma weak MPI_Add_error_string = PMPI_Add_error_string
int PMPI_Add_error_string(int errorcode, const char *string)
{
    static const char func[] = "MPI_Add_error_string";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, string, "string");
    if (rc != MPI_SUCCESS)
        return rc;
    /* MPI-4.1 section 9.5: at most MPI_MAX_ERROR_STRING characters, the terminator not
     * counted. MPI_Error_string's buffer has room for one fewer, so it returns the first
     * MPI_MAX_ERROR_STRING - 1 of them. */
    if (strlen(string) > MPI_MAX_ERROR_STRING)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              "argument string is longer than "
                                              "MPI_MAX_ERROR_STRING (%d) characters",
                                              MPI_MAX_ERROR_STRING));
    pthread_mutex_lock(&user.lock);
    user_error_t *e = user_entry_locked(errorcode);
    if (e != NULL)
        snprintf(e->string, sizeof(e->string), "%s", string);
    pthread_mutex_unlock(&user.lock);
    if (e == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              "argument errorcode=%d is not a user-defined error "
                                              "class or code",
                                              errorcode));
    return MPI_SUCCESS;
}

/* MPI_LASTUSEDCODE: the highest value in use (MPI_ERR_LASTCODE when none is); user.lock held. */
static void update_last_used_locked(void)
{
    int i = user.count;
    while (i > 0 && !user.entries[i - 1].in_use)
        i--;
    last_used_code = MPI_ERR_LASTCODE + i;
}

static int user_remove(const char *func, int value, int want_class, int string_only)
{
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    const char *why = NULL;
    pthread_mutex_lock(&user.lock);
    user_error_t *e = user_entry_locked(value);
    if (e == NULL || (!string_only && e->is_class != want_class)) {
        why = string_only  ? "is not a user-defined error class or code"
              : want_class ? "is not a user-defined error class"
                           : "is not a user-defined error code";
    } else if (string_only) {
        e->string[0] = '\0';
    } else if (e->string[0] != '\0') {
        /* MPI-4.1 section 9.5: the string goes first (MPI_Remove_error_string). */
        why = "still has an error string";
    } else {
        for (int i = 0; want_class && i < user.count && why == NULL; i++) {
            user_error_t *o = &user.entries[i];
            if (o->in_use && !o->is_class && o->error_class == value)
                why = "still has error codes";
        }
        if (why == NULL) {
            e->in_use = 0;
            update_last_used_locked();
        }
    }
    pthread_mutex_unlock(&user.lock);
    if (why != NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument %s=%d %s",
                                              want_class ? "errorclass" : "errorcode", value, why));
    return MPI_SUCCESS;
}

#pragma weak MPI_Remove_error_class = PMPI_Remove_error_class
int PMPI_Remove_error_class(int errorclass)
{
    return user_remove("MPI_Remove_error_class", errorclass, 1, 0);
}

#pragma weak MPI_Remove_error_code = PMPI_Remove_error_code
int PMPI_Remove_error_code(int errorcode)
{
    return user_remove("MPI_Remove_error_code", errorcode, 0, 0);
}

#pragma weak MPI_Remove_error_string = PMPI_Remove_error_string
int PMPI_Remove_error_string(int errorcode)
{
    return user_remove("MPI_Remove_error_string", errorcode, 0, 1);
}

/* ---- files ------------------------------------------------------------------------------ */

/* The handler of MPI_FILE_NULL: the default for files opened from now on, and the one of file
 * operations that have no file (MPI-4.1 section 9.3: initially MPI_ERRORS_RETURN). Holds a
 * reference on a user handler. */
static _Atomic(MPI_Errhandler) file_null_errhandler = MPI_ERRORS_RETURN;

MPI_Errhandler mf_err_file_default(void)
{
    return mf_errhandler_acquire(&file_null_errhandler);
}

int mf_err_raise_file(mf_file_t *f, int code)
{
    _Atomic(MPI_Errhandler) *slot = f != NULL ? &f->errhandler : &file_null_errhandler;
    MPI_Errhandler eh = mf_errhandler_acquire(slot);
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT || eh->file_fn == NULL) {
        char where[64 + 32];
        if (f != NULL)
            snprintf(where, sizeof(where), "the file %.64s", f->filename);
        else
            snprintf(where, sizeof(where), "MPI_FILE_NULL");
        fatal_on(where, code);
        return code;
    }
    MPI_File handle = f != NULL ? f : MPI_FILE_NULL;
    eh->file_fn(&handle, &code);
    mf_errhandler_release(eh);
    return code;
}

static int raise_file_null(int code)
{
    return mf_err_raise_file(NULL, code);
}

int mf_check_file(const char *func, MPI_File file, int null_ok, mf_file_t **f_p)
{
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    *f_p = mf_file_get(file);
    if (*f_p != NULL || (null_ok && file == MPI_FILE_NULL))
        return MPI_SUCCESS;
    return raise_file_null(
        mf_err_code(MPI_ERR_FILE, func, "argument fh is %s",
                    file == MPI_FILE_NULL ? "MPI_FILE_NULL" : "not a valid open file"));
}

/* The error handler argument of a *_set_errhandler call for objects of kind `want`; errors go
 * through `raise`. */
static int check_errhandler_kind(const char *func, MPI_Errhandler eh, const char *want,
                                 int (*raise)(int))
{
    if (!mf_errhandler_valid(eh))
        return raise(mf_err_code(MPI_ERR_ERRHANDLER, func,
                                 "argument errhandler is not a valid error handler"));
    if (mf_handle_is_predefined(eh) || strcmp(errhandler_kind(eh), want) == 0)
        return MPI_SUCCESS;
    return raise(mf_err_code(MPI_ERR_ERRHANDLER, func,
                             "argument errhandler is a %s error handler, not a %s one",
                             errhandler_kind(eh), want));
}

#pragma weak MPI_File_create_errhandler = PMPI_File_create_errhandler
int PMPI_File_create_errhandler(MPI_File_errhandler_function *file_errhandler_fn,
                                MPI_Errhandler *errhandler)
{
    struct MPI_ABI_Errhandler *eh = NULL;
    int rc = errhandler_create("MPI_File_create_errhandler", "file_errhandler_fn",
                               (const void *)file_errhandler_fn, errhandler, &eh);
    if (rc != MPI_SUCCESS)
        return rc;
    eh->file_fn = file_errhandler_fn;
    *errhandler = eh;
    return MPI_SUCCESS;
}

#pragma weak MPI_File_set_errhandler = PMPI_File_set_errhandler
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    static const char func[] = "MPI_File_set_errhandler";
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, file, 1, &f);
    if (rc == MPI_SUCCESS)
        rc = check_errhandler_kind(func, errhandler, "file", raise_file_null);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_errhandler_replace(f != NULL ? &f->errhandler : &file_null_errhandler, errhandler);
    return MPI_SUCCESS;
}

#pragma weak MPI_File_get_errhandler = PMPI_File_get_errhandler
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    static const char func[] = "MPI_File_get_errhandler";
    mf_file_t *f = NULL;
    int rc = mf_check_file(func, file, 1, &f);
    if (rc == MPI_SUCCESS && errhandler == NULL)
        rc = mf_err_raise_file(f, mf_err_code(MPI_ERR_ARG, func, "argument errhandler is NULL"));
    if (rc != MPI_SUCCESS)
        return rc;
    *errhandler =
        mf_errhandler_acquire_for_user(f != NULL ? &f->errhandler : &file_null_errhandler);
    return MPI_SUCCESS;
}

#pragma weak MPI_File_call_errhandler = PMPI_File_call_errhandler
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    mf_file_t *f = NULL;
    int rc = mf_check_file("MPI_File_call_errhandler", fh, 1, &f);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_err_raise_file(f, errorcode);
    return MPI_SUCCESS;
}

/* ---- windows ------------------------------------------------------------------------------ */

static int raise_self(int code)
{
    return mf_err_raise(NULL, code);
}

int mf_err_raise_win(mf_win_t *w, int code)
{
    if (w == NULL)
        return mf_err_raise(NULL, code);
    MPI_Errhandler eh = mf_errhandler_acquire(&w->errhandler);
    if (eh == MPI_ERRORS_RETURN)
        return code;
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT || eh->win_fn == NULL) {
        char where[MPI_MAX_OBJECT_NAME + 32];
        pthread_mutex_lock(&w->name_lock);
        if (w->name[0] != '\0')
            snprintf(where, sizeof(where), "%s", w->name);
        else
            snprintf(where, sizeof(where), "a window of %d processes", w->comm->size);
        pthread_mutex_unlock(&w->name_lock);
        fatal_on(where, code);
        return code;
    }
    MPI_Win handle = w;
    eh->win_fn(&handle, &code);
    mf_errhandler_release(eh);
    return code;
}

#pragma weak MPI_Win_create_errhandler = PMPI_Win_create_errhandler
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    struct MPI_ABI_Errhandler *eh = NULL;
    int rc = errhandler_create("MPI_Win_create_errhandler", "win_errhandler_fn",
                               (const void *)win_errhandler_fn, errhandler, &eh);
    if (rc != MPI_SUCCESS)
        return rc;
    eh->win_fn = win_errhandler_fn;
    *errhandler = eh;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_set_errhandler = PMPI_Win_set_errhandler
int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    static const char func[] = "MPI_Win_set_errhandler";
    int rc = mf_check_initialized(func);
    /* The handler's kind is checked first: it is wrong whatever the window. */
    if (rc == MPI_SUCCESS)
        rc = check_errhandler_kind(func, errhandler, "window", raise_self);
    mf_win_t *w = NULL;
    if (rc == MPI_SUCCESS)
        rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_errhandler_replace(&w->errhandler, errhandler);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_get_errhandler = PMPI_Win_get_errhandler
int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    static const char func[] = "MPI_Win_get_errhandler";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc == MPI_SUCCESS && errhandler == NULL)
        rc = mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument errhandler is NULL"));
    if (rc != MPI_SUCCESS)
        return rc;
    *errhandler = mf_errhandler_acquire_for_user(&w->errhandler);
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_call_errhandler = PMPI_Win_call_errhandler
int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    mf_win_t *w = NULL;
    int rc = mf_check_win("MPI_Win_call_errhandler", win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_err_raise_win(w, errorcode);
    return MPI_SUCCESS;
}
