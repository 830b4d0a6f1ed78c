/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: environment entry points (init/finalize, queries, timers, version, abort),
 * basic communicator management (rank, size, dup, split, free, names, predefined attributes,
 * barrier) and the sizes of predefined datatypes.
 */
#include "binding.h"
#include "rma.h"

#include "coll.h"
#include "part.h"
#include "pt2pt.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;

/* Values of the predefined attributes: the standard hands out pointers to them. */
/* Values of the predefined attributes: the standard hands out pointers to them, so they live
 * in static storage. The job-dependent ones are written once, at init, before any thread can
 * ask (the last-used code lives with the error table, which updates it under its lock). */
static int attr_tag_ub = MF_PT2PT_TAG_UB, attr_host = MPI_PROC_NULL, attr_io = MPI_ANY_SOURCE,
           attr_wtime_global = 0, attr_appnum, attr_universe;

static void attrs_init(void)
{
    attr_appnum = mf_global.appnum;
    attr_universe = mf_global.universe;
}

/* Users of the library's start-up: the world model (between MPI_Init and MPI_Finalize) and
 * each live session. Protected by init_lock. */
static int lib_users;

/* The process that called MPI_Init: a child it forks inherits the exit handler below, and
 * its exit says nothing about the job. */
static pid_t world_pid;

/* An exit between MPI_Init and MPI_Finalize leaves the other processes waiting for this one:
 * end the job rather than let them hang (MPI-4.1 section 11.2.2 requires the finalize). The
 * job fails even if the process returned 0, as with our mpiexec. */
static void exit_without_finalize(int status, void *unused)
{
    (void)unused;
    if (getpid() != world_pid || atomic_load(&mf_global.world_state) != MF_STATE_READY)
        return;
    char msg[112];
    snprintf(msg, sizeof(msg), "rank %d exited with code %d without calling MPI_Finalize",
             mf_global.world_rank, status);
    mf_exit_unfinalized(status != 0 ? status : 1, msg);
}

#ifndef __GLIBC__
static void exit_without_finalize_unknown(void)
{
    exit_without_finalize(1, NULL);
}
#endif

int mf_binding_lib_acquire(const char *func, int world, int required, int *provided_p)
{
    pthread_mutex_lock(&init_lock);
    int world_state = atomic_load(&mf_global.world_state);
    if (world && world_state != MF_STATE_UNINIT) {
        pthread_mutex_unlock(&init_lock);
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_OTHER, func, "MPI is already %s",
                              world_state == MF_STATE_READY ? "initialized" : "finalized"));
    }
    int state = atomic_load(&mf_global.state);
    if (state == MF_STATE_FINALIZED) {
        /* Transport and launcher connections cannot be brought up twice in one process. */
        pthread_mutex_unlock(&init_lock);
        fprintf(stderr,
                "manifold: %s: the library was shut down and cannot be started again "
                "in this process\n",
                func);
        return mf_err_code(MPI_ERR_OTHER, func,
                           "the library was shut down (MPI_Finalize) and cannot be started "
                           "again in this process");
    }
    if (state == MF_STATE_UNINIT) {
        int level;
        mf_status_t status = mf_init(required, &level);
        if (status != MF_OK) {
            pthread_mutex_unlock(&init_lock);
            /* MPI_Init(_thread): the initial error handler, MPI_ERRORS_ARE_FATAL (MPI-4.1 9.3),
             * ends the process here, so a program that does not test the result does not go
             * on to fail later for a misleading reason. A session's caller gets the code. */
            if (world)
                return mf_err_raise(NULL, mf_err_code(MPI_ERR_OTHER, func,
                                                      "the library could not start: %s",
                                                      mf_status_str(status)));
            fprintf(stderr, "manifold: %s failed: %s\n", func, mf_status_str(status));
            return MPI_ERR_OTHER;
        }
        attrs_init();
    }
    lib_users++;
    if (world) {
        mf_global.thread_level = required; /* the world's, if a session started the library */
        atomic_store(&mf_global.world_state, MF_STATE_READY);
        world_pid = getpid();
#ifdef __GLIBC__
        on_exit(exit_without_finalize, NULL); /* atexit without the exit status */
#else
        atexit(exit_without_finalize_unknown);
#endif
    }
    pthread_mutex_unlock(&init_lock);
    if (provided_p != NULL)
        *provided_p = required;
    return MPI_SUCCESS;
}

/* For errors with no handler left to call. */
static void print_error(int code)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    PMPI_Error_string(code, text, &len);
    fprintf(stderr, "manifold: %s\n", text);
}

/* Shuts the library down; init_lock held. Returns an error code, not raised. Another thread
 * still waiting in a call that can never complete (an erroneous program) would poll the
 * transport this destroys and crash: then the library stays up and the caller reports it. */
static int lib_shutdown_locked(const char *func)
{
    int waiting = mf_request_other_waiters(20);
    if (waiting > 0)
        return mf_err_code(MPI_ERR_OTHER, func,
                           "%d other thread(s) still wait in MPI calls, which could never "
                           "complete; every thread must be done with MPI before it finalizes",
                           waiting);
    mf_vci_async_stop(); /* before the layers its progress visits go */
    mf_sched_finish_abandoned();
    mf_part_fini();
    mf_rma_fini();
    mf_status_t status = mf_finalize(mf_part_drop_setups);
    mf_part_release_all();
    return status == MF_OK ? MPI_SUCCESS
                           : mf_err_code(MPI_ERR_OTHER, func, "shutting down failed: %s",
                                         mf_status_str(status));
}

/* A process that used sessions only keeps the library up when its last session ends: the
 * transport and launcher connections cannot start twice, and sessions may begin again at any
 * time (MPI-4.1 section 11.3), from any thread. It shuts down at exit, if no session is
 * left then. */
static void lib_shutdown_at_exit(void)
{
    pthread_mutex_lock(&init_lock);
    int rc = MPI_SUCCESS;
    if (lib_users == 0 && atomic_load(&mf_global.state) == MF_STATE_READY)
        rc = lib_shutdown_locked("exit");
    pthread_mutex_unlock(&init_lock);
    if (rc != MPI_SUCCESS)
        print_error(rc);
}

int mf_binding_lib_release(const char *func, int world)
{
    static int exit_hook;
    pthread_mutex_lock(&init_lock);
    int rc = MPI_SUCCESS;
    if (world)
        atomic_store(&mf_global.world_state, MF_STATE_FINALIZED);
    /* The world model ends the process's use of MPI (it cannot start again); with sessions
     * only, the library stays up for the next one. */
    if (--lib_users == 0 && atomic_load(&mf_global.world_state) == MF_STATE_FINALIZED)
        rc = lib_shutdown_locked(func);
    /* Still up with no user (sessions only, or a refused shutdown): down at exit. */
    if (lib_users == 0 && mf_is_initialized() && !exit_hook) {
        exit_hook = 1;
        atexit(lib_shutdown_at_exit);
    }
    pthread_mutex_unlock(&init_lock);
    if (rc != MPI_SUCCESS && mf_is_initialized()) /* still up: raised as any error */
        return mf_err_raise(&mf_comm_world, rc);
    if (rc != MPI_SUCCESS)
        print_error(rc);
    return rc;
}

static int init_common(const char *func, int required, int *provided)
{
    return mf_binding_lib_acquire(func, 1, required, provided);
}

#pragma weak MPI_Init = PMPI_Init
int PMPI_Init(int *argc, char ***argv)
{
    return init_common("MPI_Init", MPI_THREAD_SINGLE, NULL);
}

#pragma weak MPI_Init_thread = PMPI_Init_thread
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    static const char func[] = "MPI_Init_thread";
    /* Before initialisation errors go to the initial handler, MPI_ERRORS_ARE_FATAL (MPI-4.1
     * section 9.3): returning would leave a program that does not test the code to fail at
     * its next call for a misleading reason. */
    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED &&
        required != MPI_THREAD_SERIALIZED && required != MPI_THREAD_MULTIPLE)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              "argument required=%d is not a thread level "
                                              "(MPI_THREAD_SINGLE, _FUNNELED, _SERIALIZED or "
                                              "_MULTIPLE)",
                                              required));
    if (provided == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument provided is NULL"));
    return init_common(func, required, provided);
}

#pragma weak MPI_Finalize = PMPI_Finalize
int PMPI_Finalize(void)
{
    static const char func[] = "MPI_Finalize";
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Sessions may keep the library up; the world model itself must be initialised. */
    int world_state = atomic_load(&mf_global.world_state);
    if (world_state != MF_STATE_READY)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_OTHER, func, "called %s",
                                              world_state == MF_STATE_UNINIT
                                                  ? "without MPI_Init (only sessions are active)"
                                                  : "twice"));
    /* A child forked after MPI_Init shares the parent's launcher connection and transport
     * descriptors: shutting them down here would pull them from under the parent (a Python
     * child that exits normally finalizes through mpi4py's exit hook, and the parent then
     * crashed in its own MPI_Finalize). The child only stops using MPI. */
    if (getpid() != world_pid) {
        atomic_store(&mf_global.world_state, MF_STATE_FINALIZED);
        return MPI_SUCCESS;
    }
    /* MPI_Finalize first frees MPI_COMM_SELF's attributes, in the reverse order of setting
     * (MPI-4.1 section 11.2.2), then MPI_COMM_WORLD's so nothing is left behind. */
    rc = mf_binding_comm_delete_attrs(func, &mf_comm_self);
    if (rc == MPI_SUCCESS)
        rc = mf_binding_comm_delete_attrs(func, &mf_comm_world);
    if (rc != MPI_SUCCESS)
        return rc;
    return mf_binding_lib_release(func, 1);
}

#pragma weak MPI_Initialized = PMPI_Initialized
int PMPI_Initialized(int *flag)
{
    if (flag == NULL)
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_ARG, "MPI_Initialized", "argument flag is NULL"));
    *flag = atomic_load(&mf_global.world_state) != MF_STATE_UNINIT;
    return MPI_SUCCESS;
}

#pragma weak MPI_Finalized = PMPI_Finalized
int PMPI_Finalized(int *flag)
{
    if (flag == NULL)
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_ARG, "MPI_Finalized", "argument flag is NULL"));
    *flag = atomic_load(&mf_global.world_state) == MF_STATE_FINALIZED;
    return MPI_SUCCESS;
}

#pragma weak MPI_Query_thread = PMPI_Query_thread
int PMPI_Query_thread(int *provided)
{
    int rc = mf_check_initialized("MPI_Query_thread");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr("MPI_Query_thread", NULL, provided, "provided");
    if (rc != MPI_SUCCESS)
        return rc;
    *provided = mf_global.thread_level;
    return MPI_SUCCESS;
}

#pragma weak MPI_Is_thread_main = PMPI_Is_thread_main
int PMPI_Is_thread_main(int *flag)
{
    int rc = mf_check_initialized("MPI_Is_thread_main");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr("MPI_Is_thread_main", NULL, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    *flag = pthread_equal(pthread_self(), mf_global.main_thread);
    return MPI_SUCCESS;
}

#pragma weak MPI_Abort = PMPI_Abort
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "MPI_Abort called by rank %d with error code %d",
             mf_global.world_rank, errorcode);
    if (!mf_is_initialized()) {
        fprintf(stderr, "manifold: %s\n", msg);
        mf_flush_program_output();
        _exit(errorcode & 0xff ? errorcode & 0xff : 1);
    }
    /* Aborting a sub-communicator ends the whole job, which the standard allows. */
    mf_abort(errorcode, msg);
}

#pragma weak MPI_Wtime = PMPI_Wtime
double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#pragma weak MPI_Wtick = PMPI_Wtick
double PMPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#pragma weak MPI_Get_processor_name = PMPI_Get_processor_name
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    if (name == NULL || resultlen == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, "MPI_Get_processor_name",
                                              "argument name or resultlen is NULL"));
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_version = PMPI_Get_version
int PMPI_Get_version(int *version, int *subversion)
{
    if (version == NULL || subversion == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, "MPI_Get_version",
                                              "argument version or subversion is NULL"));
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

#pragma weak MPI_Get_library_version = PMPI_Get_library_version
int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (version == NULL || resultlen == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, "MPI_Get_library_version",
                                              "argument version or resultlen is NULL"));
    unsigned major, minor, release;
    mf_vci_transport_version(&major, &minor, &release);
    *resultlen = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                          "Manifold MPI %s (MPI %d.%d, standard ABI %d.%d, UCX %u.%u.%u)",
                          MF_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION, MPI_ABI_VERSION,
                          MPI_ABI_SUBVERSION, major, minor, release);
    return MPI_SUCCESS;
}

/* No profiling library is attached to this one: levels are accepted and ignored. */
#pragma weak MPI_Pcontrol = PMPI_Pcontrol
int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}

/* Memory for communication buffers: nothing is registered ahead of time (UCX registers what a
 * transfer needs and caches it), so this is cache-line aligned heap memory. */
/* The alignment MPI_Alloc_mem gives: a cache line, or more when the info asks for it with
 * "mpi_minimum_memory_alignment" (MPI-4.1 section 9.2). A value that is not a power of two is
 * a hint we may ignore, and is. */
static size_t alloc_mem_alignment(MPI_Info info)
{
    struct MPI_ABI_Info *obj = info == MPI_INFO_NULL ? NULL : mf_info_get_obj(info);
    char value[32], *end;
    size_t len;
    if (obj == NULL ||
        !mf_info_get(obj, "mpi_minimum_memory_alignment", value, sizeof(value), &len) ||
        len >= sizeof(value))
        return MF_CACHE_LINE;
    errno = 0;
    unsigned long long align = strtoull(value, &end, 10);
    if (errno != 0 || end == value || *end != '\0' || align <= MF_CACHE_LINE ||
        (align & (align - 1)) != 0 || align > SIZE_MAX / 2)
        return MF_CACHE_LINE;
    return (size_t)align;
}

#pragma weak MPI_Alloc_mem = PMPI_Alloc_mem
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    static const char func[] = "MPI_Alloc_mem";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, baseptr, "baseptr");
    if (rc != MPI_SUCCESS)
        return rc;
    if (size < 0)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument size=%lld is negative",
                                              (long long)size));
    if (info != MPI_INFO_NULL && mf_info_get_obj(info) == NULL && info != MPI_INFO_ENV)
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info"));
    void *p = mf_aligned_alloc(alloc_mem_alignment(info), (size_t)size);
    if (p == NULL)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_NO_MEM, func, "cannot allocate %lld bytes", (long long)size));
    memcpy(baseptr, &p, sizeof(p));
    return MPI_SUCCESS;
}

#pragma weak MPI_Free_mem = PMPI_Free_mem
int PMPI_Free_mem(void *base)
{
    int rc = mf_check_initialized("MPI_Free_mem");
    if (rc == MPI_SUCCESS)
        free(base);
    return rc;
}

#pragma weak MPI_Abi_get_version = PMPI_Abi_get_version
int PMPI_Abi_get_version(int *abi_major, int *abi_minor)
{
    if (abi_major == NULL || abi_minor == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, "MPI_Abi_get_version",
                                              "argument abi_major or abi_minor is NULL"));
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}

/* ---- communicators ----------------------------------------------------------------------- */

#pragma weak MPI_Comm_rank = PMPI_Comm_rank
int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    static const char func[] = "MPI_Comm_rank";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, rank, "rank");
    if (rc != MPI_SUCCESS)
        return rc;
    *rank = c->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_size = PMPI_Comm_size
int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    static const char func[] = "MPI_Comm_size";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, size, "size");
    if (rc != MPI_SUCCESS)
        return rc;
    *size = c->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_dup = PMPI_Comm_dup
int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Comm_dup";
    mf_comm_t *c = NULL, *out = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_status_t status = mf_comm_dup(c, &out);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    rc = mf_binding_comm_copy_attrs(func, c, out, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    *newcomm = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_split = PMPI_Comm_split
int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Comm_split";
    mf_comm_t *c = NULL, *out = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc != MPI_SUCCESS)
        return rc;
    if (color < 0 && color != MPI_UNDEFINED)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                           "argument color=%d is negative and not "
                                           "MPI_UNDEFINED",
                                           color));
    mf_status_t status = mf_comm_split(c, color, key, &out);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    *newcomm = out != NULL ? out : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_free = PMPI_Comm_free
int PMPI_Comm_free(MPI_Comm *comm)
{
    static const char func[] = "MPI_Comm_free";
    mf_comm_t *c = NULL;
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, comm, "comm");
    if (rc == MPI_SUCCESS)
        rc = mf_check_comm(func, *comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c == &mf_comm_world || c == &mf_comm_self)
        return mf_err_raise(c, mf_err_code(MPI_ERR_COMM, func,
                                           "argument comm: %s is predefined and cannot be freed",
                                           c->name));
    /* The delete callbacks run first; if one fails, the communicator stays (MPI-4.1 7.7.1). */
    rc = mf_binding_comm_delete_attrs(func, c);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dynproc_forget(c); /* MPI_Comm_get_parent answers MPI_COMM_NULL from now on */
    mf_comm_free(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_name = PMPI_Comm_set_name
int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    static const char func[] = "MPI_Comm_set_name";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm_local(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, comm_name, "comm_name");
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&c->name_lock);
    snprintf(c->name, sizeof(c->name), "%s", comm_name);
    pthread_mutex_unlock(&c->name_lock);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_name = PMPI_Comm_get_name
int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    static const char func[] = "MPI_Comm_get_name";
    mf_comm_t *c = NULL;
    /* MPI-4.1 gives the null handle the name "MPI_COMM_NULL". */
    if (comm == MPI_COMM_NULL) {
        int rc = mf_check_initialized(func);
        if (rc == MPI_SUCCESS)
            rc = mf_check_ptr(func, NULL, comm_name, "comm_name");
        if (rc == MPI_SUCCESS)
            rc = mf_check_ptr(func, NULL, resultlen, "resultlen");
        if (rc == MPI_SUCCESS)
            *resultlen = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "MPI_COMM_NULL");
        return rc;
    }
    int rc = mf_check_init_comm_local(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, comm_name, "comm_name");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, resultlen, "resultlen");
    if (rc != MPI_SUCCESS)
        return rc;
    pthread_mutex_lock(&c->name_lock);
    *resultlen = snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    pthread_mutex_unlock(&c->name_lock);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_compare = PMPI_Comm_compare
int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    static const char func[] = "MPI_Comm_compare";
    mf_comm_t *a = NULL, *b = NULL;
    int rc = mf_check_init_comm_arg(func, "comm1", comm1, &a);
    if (rc == MPI_SUCCESS)
        rc = mf_check_comm_arg(func, "comm2", comm2, &b);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, a, result, "result");
    if (rc != MPI_SUCCESS)
        return rc;
    if (a == b) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (mf_comm_is_inter(a) != mf_comm_is_inter(b)) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int same_order = a->size == b->size, same_set = a->size == b->size;
    for (int i = 0; same_set && i < a->size; i++) {
        int w = mf_comm_world_rank(a, i), found = 0;
        if (w != mf_comm_world_rank(b, i))
            same_order = 0;
        for (int j = 0; j < b->size && !found; j++)
            found = mf_comm_world_rank(b, j) == w;
        same_set = found;
    }
    /* Intercommunicators: both the local and the remote groups must match (MPI-4.1 7.4.1). */
    if (mf_comm_is_inter(a)) {
        same_order = same_order && a->remote_size == b->remote_size;
        same_set = same_set && a->remote_size == b->remote_size;
        for (int i = 0; same_set && i < a->remote_size; i++) {
            int w = a->remote_ranks[i], found = 0;
            if (w != b->remote_ranks[i])
                same_order = 0;
            for (int j = 0; j < b->remote_size && !found; j++)
                found = b->remote_ranks[j] == w;
            same_set = found;
        }
    }
    *result = same_order ? MPI_CONGRUENT : same_set ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Barrier = PMPI_Barrier
int PMPI_Barrier(MPI_Comm comm)
{
    static const char func[] = "MPI_Barrier";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS && MF_PARAM_LIVE(coll_check) && !mf_comm_is_inter(c))
        rc = mf_binding_coll_check(func, c, &(mf_check_t){.func = func, .root = -1});
    if (rc != MPI_SUCCESS)
        return rc;
    if (mf_comm_is_inter(c)) {
        /* Intercommunicator collectives are schedules (coll_inter.c): run one and wait. */
        mf_sched_t *s = mf_sched_create(c, mf_sched_next_tag(c, 0));
        if (s == NULL)
            return mf_err_from_status(c, MF_ERR_NO_MEMORY, func, "cannot allocate the schedule");
        mf_inter_barrier(s);
        int err_class;
        mf_status_t status = mf_inter_run(s, &err_class);
        if (status != MF_OK)
            return mf_err_from_status(c, status, func, "barrier failed");
        if (err_class != MPI_SUCCESS)
            return mf_err_raise(c, mf_err_code(err_class, func, "barrier failed"));
        return MPI_SUCCESS;
    }
    mf_status_t status = mf_coll_barrier(c);
    if (status == MF_ERR_TRUNCATE)
        return mf_binding_coll_truncated(func, c);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "barrier failed");
    return MPI_SUCCESS;
}

int mf_binding_comm_get_attr(const char *func, const char *keyval_arg, MPI_Comm comm,
                             int comm_keyval, void *attribute_val, int *flag)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm_local(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, attribute_val, "attribute_val");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    int *value = NULL;
    switch (comm_keyval) {
    case MPI_TAG_UB: value = &attr_tag_ub; break;
    case MPI_HOST: value = &attr_host; break;
    case MPI_IO: value = &attr_io; break;
    case MPI_WTIME_IS_GLOBAL: value = &attr_wtime_global; break;
    case MPI_APPNUM: value = attr_appnum >= 0 ? &attr_appnum : NULL; break;
    case MPI_UNIVERSE_SIZE: value = &attr_universe; break;
    case MPI_LASTUSEDCODE: value = mf_err_last_used_code_ptr(); break;
    default: {
        void *user_value = NULL;
        if (!mf_keyval_valid(MF_KEYVAL_COMM, comm_keyval, 1))
            return mf_err_raise(c, mf_err_code(MPI_ERR_KEYVAL, func,
                                               "argument %s=%d is not a communicator keyval "
                                               "(freed, of another object kind, or never "
                                               "created)",
                                               keyval_arg, comm_keyval));
        *flag = mf_comm_attr_get(c, comm_keyval, &user_value);
        if (*flag)
            *(void **)attribute_val = user_value;
        return MPI_SUCCESS;
    }
    }
    /* Predefined attributes are cached on MPI_COMM_WORLD, except the tag bound, which holds
     * for every communicator and is the only one a communicator made from a session's group
     * carries (MPI-4.1 9.1.2). */
    *flag = value != NULL && (c == &mf_comm_world || comm_keyval == MPI_TAG_UB);
    if (*flag)
        *(int **)attribute_val = value;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_attr = PMPI_Comm_get_attr
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    return mf_binding_comm_get_attr("MPI_Comm_get_attr", "comm_keyval", comm, comm_keyval,
                                    attribute_val, flag);
}

/* ---- MPI-5.0 ABI: Fortran details (no Fortran bindings here: only what a layer sets) ------- */

/* The info of MPI_Abi_set_fortran_info (a copy), or NULL: MPI_Abi_get_fortran_info then
 * gives MPI_INFO_NULL, which the standard allows when no Fortran details are known. */
static struct {
    pthread_mutex_t lock;
    struct MPI_ABI_Info *info;
} fortran_info = {PTHREAD_MUTEX_INITIALIZER, NULL};

#pragma weak MPI_Abi_get_fortran_info = PMPI_Abi_get_fortran_info
int PMPI_Abi_get_fortran_info(MPI_Info *info)
{
    static const char func[] = "MPI_Abi_get_fortran_info";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, info, "info");
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *out = NULL;
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&fortran_info.lock);
    if (fortran_info.info != NULL)
        status = mf_info_dup(fortran_info.info, &out);
    pthread_mutex_unlock(&fortran_info.lock);
    if (status != MF_OK)
        return mf_err_from_status(NULL, status, func, "cannot copy the info");
    *info = out != NULL ? out : MPI_INFO_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Abi_set_fortran_info = PMPI_Abi_set_fortran_info
/* The Fortran default kinds have the sizes of gfortran's defaults here (MPI_INTEGER, MPI_REAL
 * and MPI_LOGICAL 4 bytes, MPI_DOUBLE_PRECISION 8, the complex types twice their reals): a
 * Fortran layer that says otherwise is refused rather than ignored, since reductions and
 * MPI_Type_size would use the wrong size. */
static int check_fortran_sizes(const char *func, struct MPI_ABI_Info *in)
{
    static const struct {
        const char *key;
        MPI_Datatype type;
    } sizes[] = {
        {"mpi_integer_size", MPI_INTEGER}, {"mpi_real_size", MPI_REAL},
        {"mpi_logical_size", MPI_LOGICAL}, {"mpi_double_precision_size", MPI_DOUBLE_PRECISION},
        {"mpi_complex_size", MPI_COMPLEX}, {"mpi_double_complex_size", MPI_DOUBLE_COMPLEX},
    };
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        char value[32];
        size_t len;
        if (!mf_info_get(in, sizes[i].key, value, sizeof(value), &len))
            continue;
        int have = mf_dtype_predefined(sizes[i].type)->size;
        char *end;
        long want = strtol(value, &end, 10);
        if (end != value && *end == '\0' && want == have)
            continue;
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ABI, func,
                                              "argument info: %s=\"%s\", but this library's "
                                              "%s is %d bytes and cannot change",
                                              sizes[i].key, value,
                                              mf_dtype_predefined(sizes[i].type)->name, have));
    }
    return MPI_SUCCESS;
}

int PMPI_Abi_set_fortran_info(MPI_Info info)
{
    static const char func[] = "MPI_Abi_set_fortran_info";
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *in = info == MPI_INFO_ENV ? mf_info_env() : mf_info_get_obj(info);
    if (in == NULL)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    rc = check_fortran_sizes(func, in);
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *copy = NULL;
    if (mf_info_dup(in, &copy) != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    pthread_mutex_lock(&fortran_info.lock);
    int set = fortran_info.info != NULL;
    if (!set)
        fortran_info.info = copy;
    pthread_mutex_unlock(&fortran_info.lock);
    if (set) {
        mf_info_free(copy);
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ABI, func,
                                              "the Fortran details were set already (at most "
                                              "one call)"));
    }
    return MPI_SUCCESS;
}

/* The LOGICAL patterns of a Fortran layer, used by MPI_LAND/LOR/LXOR on MPI_LOGICAL*. Callable
 * before MPI_Init (a Fortran layer may register them when it loads). */
static int check_logical_size(const char *func, int logical_size)
{
    if (logical_size <= 0 || (logical_size & (logical_size - 1)) != 0 || logical_size > 16)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              "argument logical_size=%d is not a power of two "
                                              "from 1 to 16 (the sizes of MPI_LOGICAL1-16)",
                                              logical_size));
    return MPI_SUCCESS;
}

/* The arguments both calls share: the size and the two value pointers. */
static int check_booleans_args(const char *func, int logical_size, const void *logical_true,
                               const void *logical_false)
{
    int rc = check_logical_size(func, logical_size);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, logical_true, "logical_true");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, logical_false, "logical_false");
    return rc;
}

#pragma weak MPI_Abi_set_fortran_booleans = PMPI_Abi_set_fortran_booleans
int PMPI_Abi_set_fortran_booleans(int logical_size, void *logical_true, void *logical_false)
{
    static const char func[] = "MPI_Abi_set_fortran_booleans";
    int rc = check_booleans_args(func, logical_size, logical_true, logical_false);
    if (rc != MPI_SUCCESS)
        return rc;
    if (memcmp(logical_true, logical_false, (size_t)logical_size) == 0)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              "logical_true and logical_false are the same "
                                              "value"));
    if (mf_op_set_fortran_booleans(logical_size, logical_true, logical_false) != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ABI, func,
                                              "other values were set already for "
                                              "logical_size=%d",
                                              logical_size));
    return MPI_SUCCESS;
}

#pragma weak MPI_Abi_get_fortran_booleans = PMPI_Abi_get_fortran_booleans
int PMPI_Abi_get_fortran_booleans(int logical_size, void *logical_true, void *logical_false,
                                  int *is_set)
{
    static const char func[] = "MPI_Abi_get_fortran_booleans";
    int rc = check_booleans_args(func, logical_size, logical_true, logical_false);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, is_set, "is_set");
    if (rc != MPI_SUCCESS)
        return rc;
    *is_set = mf_op_get_fortran_booleans(logical_size, logical_true, logical_false);
    return MPI_SUCCESS;
}
