/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: MPI-4 sessions. A session is a counted user of the library's start-up (shared
 * with the world model, see mf_binding_lib_acquire), with its own error handler and hints. It
 * offers the process sets mpi://WORLD and mpi://SELF, groups made from them, and communicators
 * made from a group without a parent (MPI_Comm_create_from_group), which run the same context-id
 * agreement as MPI_Comm_create_group over the group's members, keyed by a hash of the string tag.
 */
#include "binding.h"

#include "pt2pt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define PSET_WORLD "mpi://WORLD"
#define PSET_SELF  "mpi://SELF"

static const char *const pset_names[] = {PSET_WORLD, PSET_SELF};
#define NPSETS ((int)(sizeof(pset_names) / sizeof(pset_names[0])))

/* Finalized sessions, kept so a stale handle still reads as "freed" instead of freed memory. */
static struct {
    pthread_mutex_t lock;
    mf_session_t *free;
} sessions = {.lock = PTHREAD_MUTEX_INITIALIZER};

static mf_session_t *session_new(void)
{
    pthread_mutex_lock(&sessions.lock);
    mf_session_t *s = sessions.free;
    if (s != NULL)
        sessions.free = s->next_free;
    pthread_mutex_unlock(&sessions.lock);
    if (s == NULL)
        s = mf_calloc(1, sizeof(*s), "session");
    else
        memset(s, 0, sizeof(*s));
    return s;
}

static void session_recycle(mf_session_t *s)
{
    s->kind = MF_KIND_FREED;
    pthread_mutex_lock(&sessions.lock);
    s->next_free = sessions.free;
    sessions.free = s;
    pthread_mutex_unlock(&sessions.lock);
}

/* Which process set `name` is (an index into pset_names), or -1. URIs compare case-blind. */
static int pset_find(const char *name)
{
    for (int i = 0; i < NPSETS; i++) {
        if (strcasecmp(name, pset_names[i]) == 0)
            return i;
    }
    return -1;
}

static int check_pset(const char *func, mf_session_t *s, const char *name, int *pset_p)
{
    if (name == NULL)
        return mf_err_raise_session(s,
                                    mf_err_code(MPI_ERR_ARG, func, "argument pset_name is NULL"));
    int pset = pset_find(name);
    if (pset < 0)
        return mf_err_raise_session(s, mf_err_code(MPI_ERR_ARG, func,
                                                   "argument pset_name=\"%.200s\" is not a "
                                                   "process set (known: " PSET_WORLD ", " PSET_SELF
                                                   ")",
                                                   name));
    *pset_p = pset;
    return MPI_SUCCESS;
}

static int check_ptr(const char *func, mf_session_t *s, const void *p, const char *arg)
{
    if (p != NULL)
        return MPI_SUCCESS;
    return mf_err_raise_session(s, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL", arg));
}

/* An info handle argument that may be MPI_INFO_NULL: *info_p is NULL then. */
static int check_info(const char *func, mf_session_t *s, MPI_Errhandler eh, MPI_Info handle,
                      struct MPI_ABI_Info **info_p)
{
    *info_p = NULL;
    if (handle == MPI_INFO_NULL)
        return MPI_SUCCESS;
    *info_p = mf_info_get_obj(handle);
    if (*info_p != NULL)
        return MPI_SUCCESS;
    int code = mf_err_code(MPI_ERR_INFO, func,
                           "argument info is not a valid info object (freed or never created)");
    return s != NULL ? mf_err_raise_session(s, code) : mf_err_raise_with(eh, code);
}

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    default: return "MPI_THREAD_MULTIPLE";
    }
}

/* The level the session's hints ask for ("thread_level", MPI-4.1 11.3.1), which is the level
 * provided since every level runs the same code; MPI_THREAD_MULTIPLE when they name none. */
static int thread_level_asked(MPI_Info info)
{
    char value[32];
    size_t len;
    if (info == MPI_INFO_NULL ||
        !mf_info_get(mf_info_get_obj(info), "thread_level", value, sizeof(value), &len))
        return MPI_THREAD_MULTIPLE;
    static const int levels[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED};
    for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
        if (strcmp(value, thread_level_name(levels[i])) == 0)
            return levels[i];
    return MPI_THREAD_MULTIPLE;
}

#pragma weak MPI_Session_init = PMPI_Session_init
int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    static const char func[] = "MPI_Session_init";
    if (!mf_errhandler_valid(errhandler) ||
        (!mf_handle_is_predefined(errhandler) && errhandler->session_fn == NULL)) {
        /* No handler to call: the message goes to stderr too, for a program that ignores it. */
        fprintf(stderr, "manifold: %s: argument errhandler is not a session error handler\n", func);
        return mf_err_code(MPI_ERR_ERRHANDLER, func,
                           "argument errhandler is not a session error handler");
    }
    /* The errors of the other arguments go to the handler given (MPI-4.1 section 11.3.1),
     * with no session yet. */
    if (session == NULL)
        return mf_err_raise_session_handler(
            errhandler, MPI_SESSION_NULL,
            mf_err_code(MPI_ERR_ARG, func, "argument session is NULL"));
    if (info != MPI_INFO_NULL && mf_info_get_obj(info) == NULL)
        return mf_err_raise_session_handler(
            errhandler, MPI_SESSION_NULL,
            mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    int provided;
    int rc = mf_binding_lib_acquire(func, 0, thread_level_asked(info), &provided);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_session_t *s = session_new();
    struct MPI_ABI_Info *copy = NULL;
    mf_status_t status = MF_OK;
    if (s != NULL && info != MPI_INFO_NULL)
        status = mf_info_dup(mf_info_get_obj(info), &copy);
    if (s == NULL || status != MF_OK) {
        if (s != NULL)
            session_recycle(s);
        rc = mf_err_raise_with(errhandler, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
        mf_binding_lib_release(func, 0);
        return rc;
    }
    s->thread_level = provided;
    s->info = copy;
    mf_errhandler_retain(errhandler);
    atomic_store(&s->errhandler, errhandler);
    s->kind = MF_KIND_SESSION;
    *session = s;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_finalize = PMPI_Session_finalize
int PMPI_Session_finalize(MPI_Session *session)
{
    static const char func[] = "MPI_Session_finalize";
    mf_session_t *s = NULL;
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, session, "session");
    if (rc == MPI_SUCCESS)
        rc = mf_check_session(func, *session, &s);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_handle_forget(s);
    /* Its buffered sends go out first (MPI-4.1 section 3.6.1); the memory stays the user's. */
    mf_bsend_pool_t *pool = atomic_exchange(&s->bsend_pool, NULL);
    if (pool != NULL) {
        mf_bsend_pool_flush(pool);
        free(pool);
    }
    if (s->info != NULL)
        mf_info_free(s->info);
    mf_errhandler_release(atomic_load(&s->errhandler));
    session_recycle(s);
    *session = MPI_SESSION_NULL;
    return mf_binding_lib_release(func, 0);
}

#pragma weak MPI_Session_get_num_psets = PMPI_Session_get_num_psets
int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    static const char func[] = "MPI_Session_get_num_psets";
    mf_session_t *s = NULL;
    struct MPI_ABI_Info *in = NULL;
    int rc = mf_check_session(func, session, &s);
    if (rc == MPI_SUCCESS)
        rc = check_info(func, s, NULL, info, &in);
    if (rc == MPI_SUCCESS)
        rc = check_ptr(func, s, npset_names, "npset_names");
    if (rc != MPI_SUCCESS)
        return rc;
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_nth_pset = PMPI_Session_get_nth_pset
int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    static const char func[] = "MPI_Session_get_nth_pset";
    mf_session_t *s = NULL;
    struct MPI_ABI_Info *in = NULL;
    int rc = mf_check_session(func, session, &s);
    if (rc == MPI_SUCCESS)
        rc = check_info(func, s, NULL, info, &in);
    if (rc == MPI_SUCCESS)
        rc = check_ptr(func, s, pset_len, "pset_len");
    if (rc != MPI_SUCCESS)
        return rc;
    if (n < 0 || n >= NPSETS)
        return mf_err_raise_session(s, mf_err_code(MPI_ERR_ARG, func,
                                                   "argument n=%d is not in [0, %d) (the "
                                                   "number of process sets)",
                                                   n, NPSETS));
    if (*pset_len < 0)
        return mf_err_raise_session(
            s, mf_err_code(MPI_ERR_ARG, func, "argument *pset_len=%d is negative", *pset_len));
    const char *name = pset_names[n];
    /* A length of 0 asks for the size needed, terminating null included (MPI-4.1 11.3.2). */
    if (*pset_len == 0) {
        *pset_len = (int)strlen(name) + 1;
        return MPI_SUCCESS;
    }
    rc = check_ptr(func, s, pset_name, "pset_name");
    if (rc != MPI_SUCCESS)
        return rc;
    snprintf(pset_name, (size_t)*pset_len, "%s", name);
    return MPI_SUCCESS;
}

static int pset_size(int pset)
{
    return pset == 0 ? mf_global.world_size : 1;
}

#pragma weak MPI_Session_get_pset_info = PMPI_Session_get_pset_info
int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    static const char func[] = "MPI_Session_get_pset_info";
    mf_session_t *s = NULL;
    int pset = -1;
    int rc = mf_check_session(func, session, &s);
    if (rc == MPI_SUCCESS)
        rc = check_pset(func, s, pset_name, &pset);
    if (rc == MPI_SUCCESS)
        rc = check_ptr(func, s, info, "info");
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *out = NULL;
    char value[16];
    snprintf(value, sizeof(value), "%d", pset_size(pset));
    mf_status_t status = mf_info_create(&out);
    if (status == MF_OK)
        status = mf_info_set(out, "mpi_size", value);
    if (status != MF_OK) {
        if (out != NULL)
            mf_info_free(out);
        return mf_err_raise_session(s, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    }
    *info = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_info = PMPI_Session_get_info
int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    static const char func[] = "MPI_Session_get_info";
    mf_session_t *s = NULL;
    int rc = mf_check_session(func, session, &s);
    if (rc == MPI_SUCCESS)
        rc = check_ptr(func, s, info_used, "info_used");
    if (rc != MPI_SUCCESS)
        return rc;
    /* The hints given at init (the session never changes them) and the thread level in use. */
    struct MPI_ABI_Info *out = NULL;
    mf_status_t status = s->info != NULL ? mf_info_dup(s->info, &out) : mf_info_create(&out);
    if (status == MF_OK)
        status = mf_info_set(out, "thread_level", thread_level_name(s->thread_level));
    if (status == MF_OK)
        status = mf_info_memory_kinds(out);
    if (status != MF_OK) {
        if (out != NULL)
            mf_info_free(out);
        return mf_err_raise_session(s, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    }
    *info_used = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_from_session_pset = PMPI_Group_from_session_pset
int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    static const char func[] = "MPI_Group_from_session_pset";
    mf_session_t *s = NULL;
    int pset = -1;
    int rc = mf_check_session(func, session, &s);
    if (rc == MPI_SUCCESS)
        rc = check_pset(func, s, pset_name, &pset);
    if (rc == MPI_SUCCESS)
        rc = check_ptr(func, s, newgroup, "newgroup");
    if (rc != MPI_SUCCESS)
        return rc;
    int n = pset_size(pset);
    int *ranks = mf_malloc(sizeof(int) * (size_t)n, "group ranks");
    if (ranks == NULL)
        return mf_err_raise_session(s, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    for (int i = 0; i < n; i++)
        ranks[i] = pset == 0 ? i : mf_global.world_rank;
    mf_group_t *g = NULL;
    /* Communicators made from it use the session's send buffer. */
    mf_status_t status = mf_group_create(n, ranks, s, &g);
    free(ranks);
    if (status != MF_OK)
        return mf_err_raise_session(s, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *newgroup = mf_group_handle(g);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_create_from_group = PMPI_Comm_create_from_group
int PMPI_Comm_create_from_group(MPI_Group group, const char *stringtag, MPI_Info info,
                                MPI_Errhandler errhandler, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Comm_create_from_group";
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mf_check_new_comm_errhandler(func, errhandler);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_group_t *g = mf_group_get(group);
    if (g == NULL)
        return mf_err_raise_with(errhandler, mf_err_code(MPI_ERR_GROUP, func, "argument group: %s",
                                                         group == MPI_GROUP_NULL
                                                             ? "MPI_GROUP_NULL is not a group"
                                                             : "not a valid group (freed or never "
                                                               "created)"));
    if (stringtag == NULL || newcomm == NULL)
        return mf_err_raise_with(errhandler,
                                 mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL",
                                             stringtag == NULL ? "stringtag" : "newcomm"));
    if (strnlen(stringtag, MPI_MAX_STRINGTAG_LEN) >= MPI_MAX_STRINGTAG_LEN)
        return mf_err_raise_with(errhandler, mf_err_code(MPI_ERR_ARG, func,
                                                         "argument stringtag is longer than "
                                                         "MPI_MAX_STRINGTAG_LEN-1 (%d) characters",
                                                         MPI_MAX_STRINGTAG_LEN - 1));
    struct MPI_ABI_Info *in = NULL;
    rc = check_info(func, NULL, errhandler, info, &in);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Only the group's members call; anyone else gets no communicator, like
     * MPI_Comm_create_group. */
    if (g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    /* Every group names its members by world rank, so the world communicator is the parent
     * whatever process set the group came from. */
    mf_comm_t *out = NULL;
    mf_status_t status = mf_comm_create_from_stringtag(g, stringtag, &out);
    if (status == MF_OK && in != NULL)
        status = mf_comm_set_info(out, in, 0);
    if (status != MF_OK) {
        if (out != NULL)
            mf_comm_free(out);
        return mf_err_raise_with(errhandler, mf_err_code(mf_err_class_of(status), func,
                                                         "cannot create the communicator: %s",
                                                         mf_status_str(status)));
    }
    mf_errhandler_retain(errhandler);
    mf_errhandler_release(atomic_exchange(&out->errhandler, errhandler));
    out->session = g->session;
    *newcomm = out;
    return MPI_SUCCESS;
}

/* ---- session error handlers ---------------------------------------------------------------- */

#pragma weak MPI_Session_create_errhandler = PMPI_Session_create_errhandler
int PMPI_Session_create_errhandler(MPI_Session_errhandler_function *session_errhandler_fn,
                                   MPI_Errhandler *errhandler)
{
    static const char func[] = "MPI_Session_create_errhandler";
    /* Allowed before any initialisation: a session needs its handler at MPI_Session_init. */
    if (session_errhandler_fn == NULL || errhandler == NULL) {
        int code =
            mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL",
                        session_errhandler_fn == NULL ? "session_errhandler_fn" : "errhandler");
        if (!mf_is_initialized()) {
            fprintf(stderr, "manifold: %s: argument %s is NULL\n", func,
                    session_errhandler_fn == NULL ? "session_errhandler_fn" : "errhandler");
            return MPI_ERR_ARG;
        }
        return mf_err_raise(NULL, code);
    }
    struct MPI_ABI_Errhandler *eh = mf_errhandler_new();
    if (eh == NULL)
        return MPI_ERR_NO_MEM;
    eh->session_fn = session_errhandler_fn;
    *errhandler = eh;
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_set_errhandler = PMPI_Session_set_errhandler
int PMPI_Session_set_errhandler(MPI_Session session, MPI_Errhandler errhandler)
{
    static const char func[] = "MPI_Session_set_errhandler";
    mf_session_t *s = NULL;
    int rc = mf_check_session(func, session, &s);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mf_errhandler_valid(errhandler) ||
        (!mf_handle_is_predefined(errhandler) && errhandler->session_fn == NULL))
        return mf_err_raise_session(s, mf_err_code(MPI_ERR_ERRHANDLER, func,
                                                   "argument errhandler is not a session error "
                                                   "handler"));
    mf_errhandler_replace(&s->errhandler, errhandler);
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_get_errhandler = PMPI_Session_get_errhandler
int PMPI_Session_get_errhandler(MPI_Session session, MPI_Errhandler *errhandler)
{
    static const char func[] = "MPI_Session_get_errhandler";
    mf_session_t *s = NULL;
    int rc = mf_check_session(func, session, &s);
    if (rc == MPI_SUCCESS)
        rc = check_ptr(func, s, errhandler, "errhandler");
    if (rc != MPI_SUCCESS)
        return rc;
    /* A new reference for the caller, released by MPI_Errhandler_free. */
    *errhandler = mf_errhandler_acquire_for_user(&s->errhandler);
    return MPI_SUCCESS;
}

#pragma weak MPI_Session_call_errhandler = PMPI_Session_call_errhandler
int PMPI_Session_call_errhandler(MPI_Session session, int errorcode)
{
    static const char func[] = "MPI_Session_call_errhandler";
    mf_session_t *s = NULL;
    int rc = mf_check_session(func, session, &s);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_err_raise_session(s, errorcode);
    /* As MPI_Comm_call_errhandler: MPI_SUCCESS when the handler returns. */
    return MPI_SUCCESS;
}
