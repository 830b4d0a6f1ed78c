/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The bad-argument sweep: every MPI function that returns an error code, called once per
 * invalid argument with the others valid (the cases come from gen_arg_sweep.py, which reads
 * api/mpi_api.json and says what is left out and why). With MPI_ERRORS_RETURN on everything,
 * each call must return, with an error code that is not MPI_SUCCESS, whose class is one the case
 * expects (MPI_ERR_COMM for MPI_COMM_NULL, MPI_ERR_ARG for a NULL output pointer,
 * MPI_ERR_COUNT for a negative count, ...) and whose MPI_Error_string is not empty; on Manifold
 * the string must also name the function and the argument. The tool interface's functions
 * return MPI_T_ERR_* classes and pass no error handler, and their messages are the classes'. A
 * crash or a call that does not return within SWEEP_CASE_SECONDS names the case and ends the job;
 * after each case a message to itself checks that the library still works, and at the end every
 * object the sweep made is freed.
 *
 * The objects the cases use (g_*) are made by setup(); the wrappers in the generated
 * arg_sweep_cases.h refer to them by name. Environment: SWEEP_ONLY=<prefix> runs the functions
 * whose name begins with it, SWEEP_LEAVE_OUT=<name>,<name>... leaves those out, SWEEP_VERBOSE=1
 * prints every case before it runs.
 *
 * The checks of classes and messages are Manifold's (the standard leaves the class of many
 * errors open, and MPICH 5.0.2 crashes on some of these calls); a run against MPICH is
 * informative only.
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtest.h"

#define SWEEP_CASE_SECONDS 10
#define SWEEP_STR2(x)      #x
#define SWEEP_STR(x)       SWEEP_STR2(x)

enum {
    SWEEP_NEEDS_CVAR = 1,
    SWEEP_NEEDS_PVAR = 2,
    SWEEP_NEEDS_CAT = 4,
    SWEEP_NEEDS_ENUM = 8,
    SWEEP_NEEDS_SOURCE = 16
};

struct sweep_case {
    int (*call)(int bad);
    int bad;
    const char *func, *arg, *what;
    int tool, needs;
    int expect[4]; /* classes, ended by 0 (MPI_SUCCESS); none: any class */
};

struct sweep_skip {
    const char *what, *reason;
};

/* ---- the objects and values the cases use ---------------------------------------------- */

/* Which of these the generated cases use depends on the API table. */
#define SWEEP_MAYBE_UNUSED __attribute__((unused))

SWEEP_MAYBE_UNUSED static int g_size, g_rank, g_peer, g_have;
SWEEP_MAYBE_UNUSED static MPI_Comm g_world, g_cart, g_graph, g_dgraph;
SWEEP_MAYBE_UNUSED static _Alignas(64) char g_sbuf[4096], g_rbuf[4096], g_cbuf[4096], g_wbuf[4096];
SWEEP_MAYBE_UNUSED static _Alignas(64) char g_attach_buf[64],
    g_bsend_buf[4096], g_psbuf[64], g_prbuf[64];
SWEEP_MAYBE_UNUSED static int ones_i[16], zeros_i[16], iota_i[16], iota4_i[16], neg_i[16];
SWEEP_MAYBE_UNUSED static MPI_Count ones_c[16], zeros_c[16], iota_c[16], iota4_c[16], neg_c[16],
    darray_gsizes_c[16];
SWEEP_MAYBE_UNUSED static MPI_Aint ones_a[16], zeros_a[16], iota_a[16], iota4_a[16], neg_a[16];
SWEEP_MAYBE_UNUSED static int g_dims[16], s_dims[16], g_graph_index[16], g_graph_edges[16];
SWEEP_MAYBE_UNUSED static int g_self_rank[16], g_bad_rank[16], g_ranges[1][3], g_bad_ranges[1][3];
SWEEP_MAYBE_UNUSED static int darray_gsizes_i[16], g_darray_distribs[16], g_darray_dargs[16],
    g_darray_psizes[16];
SWEEP_MAYBE_UNUSED static MPI_Datatype g_types[16], g_vec, g_hvec, g_hvec_c;
SWEEP_MAYBE_UNUSED static MPI_Request g_null_requests[16], g_req_array[16], s_requests[16];
SWEEP_MAYBE_UNUSED static MPI_Request g_preq, g_psend, g_precv, g_greq;
SWEEP_MAYBE_UNUSED static MPI_Info g_infos[16];
SWEEP_MAYBE_UNUSED static MPI_Group g_group;
SWEEP_MAYBE_UNUSED static MPI_Op g_op;
SWEEP_MAYBE_UNUSED static MPI_Info g_info;
SWEEP_MAYBE_UNUSED static MPI_Win g_win, g_win_epoch, g_win_locked, g_dynwin, g_shwin;
SWEEP_MAYBE_UNUSED static MPI_File g_file;
SWEEP_MAYBE_UNUSED static char g_path[512], g_path2[520];
SWEEP_MAYBE_UNUSED static MPI_Session g_session;
SWEEP_MAYBE_UNUSED static int g_comm_keyval, g_type_keyval, g_win_keyval, g_user_class, g_user_code;
SWEEP_MAYBE_UNUSED static MPI_Status g_status;
SWEEP_MAYBE_UNUSED static char g_port[MPI_MAX_PORT_NAME];
SWEEP_MAYBE_UNUSED static MPI_T_cvar_handle g_cvar_handle;
SWEEP_MAYBE_UNUSED static MPI_T_pvar_session g_pvar_session;
SWEEP_MAYBE_UNUSED static MPI_T_pvar_handle g_pvar_handle;
SWEEP_MAYBE_UNUSED static MPI_T_enum g_enum;
SWEEP_MAYBE_UNUSED static MPI_T_event_registration g_event_registration;
SWEEP_MAYBE_UNUSED static MPI_T_event_instance g_event_instance;
SWEEP_MAYBE_UNUSED static char g_cvar_name[256], g_pvar_name[256], g_cat_name[256];
SWEEP_MAYBE_UNUSED static int g_pvar_class;
SWEEP_MAYBE_UNUSED static _Alignas(64) char g_cvar_value[256];
SWEEP_MAYBE_UNUSED static char g_ftrue[8], g_ffalse[8];

/* ---- callbacks the calls are given -------------------------------------------------------- */

SWEEP_MAYBE_UNUSED static void sweep_comm_errh(MPI_Comm *comm, int *code, ...)
{
}

SWEEP_MAYBE_UNUSED static void sweep_file_errh(MPI_File *file, int *code, ...)
{
}

SWEEP_MAYBE_UNUSED static void sweep_win_errh(MPI_Win *win, int *code, ...)
{
}

SWEEP_MAYBE_UNUSED static void sweep_session_errh(MPI_Session *session, int *code, ...)
{
}

SWEEP_MAYBE_UNUSED static void sweep_user_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
}

SWEEP_MAYBE_UNUSED static void sweep_user_op_c(void *in, void *inout, MPI_Count *len,
                                               MPI_Datatype *type)
{
}

SWEEP_MAYBE_UNUSED static int sweep_greq_query(void *extra, MPI_Status *status)
{
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

SWEEP_MAYBE_UNUSED static int sweep_greq_free(void *extra)
{
    return MPI_SUCCESS;
}

SWEEP_MAYBE_UNUSED static int sweep_greq_cancel(void *extra, int complete)
{
    return MPI_SUCCESS;
}

SWEEP_MAYBE_UNUSED static int sweep_datarep_extent(MPI_Datatype type, MPI_Aint *extent, void *extra)
{
    return MPI_Type_get_extent(type, &(MPI_Aint){0}, extent);
}

SWEEP_MAYBE_UNUSED static void sweep_event_cb(MPI_T_event_instance instance,
                                              MPI_T_event_registration registration,
                                              MPI_T_cb_safety safety, void *user_data)
{
}

SWEEP_MAYBE_UNUSED static void sweep_event_dropped(MPI_Count count,
                                                   MPI_T_event_registration registration,
                                                   int source_index, MPI_T_cb_safety safety,
                                                   void *user_data)
{
}

SWEEP_MAYBE_UNUSED static void sweep_event_free(MPI_T_event_registration registration,
                                                MPI_T_cb_safety safety, void *user_data)
{
}

/* ---- what the wrappers call around their call ------------------------------------------- */

/* The arrays a call may change go back to their valid values. */
static void sweep_before_call(void)
{
    for (int i = 0; i < 16; i++) {
        g_req_array[i] = MPI_REQUEST_NULL;
        s_requests[i] = g_preq;
        s_dims[i] = 0;
    }
}

/* Undo an attach a bad call was let through with (errors ignored: usually nothing is there). */
static void sweep_buffer_detach_any(void)
{
    void *addr;
    int size;
    MPI_Buffer_detach(&addr, &size);
}

static void sweep_comm_detach_any(void)
{
    void *addr;
    int size;
    MPI_Comm_detach_buffer(MPI_COMM_WORLD, &addr, &size);
}

static void sweep_session_detach_any(void)
{
    void *addr;
    int size;
    MPI_Session_detach_buffer(g_session, &addr, &size);
}

#include "arg_sweep_cases.h"

/* ---- running a case ----------------------------------------------------------------------- */

static const struct sweep_case *volatile g_current;
static const int g_crash_signals[] = {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL};
#define SWEEP_NSIGNALS (sizeof(g_crash_signals) / sizeof(g_crash_signals[0]))
static struct sigaction g_old_actions[SWEEP_NSIGNALS];

static void say(const char *s)
{
    ssize_t n = write(STDERR_FILENO, s, strlen(s));
    (void)n;
}

static void say_case(const char *event)
{
    const struct sweep_case *c = g_current;
    say("arg_sweep: ");
    if (c != NULL) {
        say(c->func);
        say(" with ");
        say(c->what);
        say(" ");
        say(c->arg);
        say(": ");
    } else {
        say("outside the cases: ");
    }
    say(event);
    say("\n");
}

static void on_crash(int sig)
{
    say_case(sig == SIGSEGV   ? "crashed (SIGSEGV)"
             : sig == SIGBUS  ? "crashed (SIGBUS)"
             : sig == SIGABRT ? "aborted (SIGABRT)"
             : sig == SIGFPE  ? "crashed (SIGFPE)"
                              : "crashed (SIGILL)");
    /* the previous handler (a sanitizer's, or the default) reports it: a fault happens again
     * when this handler returns, an abort is raised again */
    for (size_t i = 0; i < SWEEP_NSIGNALS; i++)
        if (g_crash_signals[i] == sig)
            sigaction(sig, &g_old_actions[i], NULL);
    if (sig == SIGABRT)
        raise(sig);
}

static void on_alarm(int sig)
{
    (void)sig;
    say_case("did not return within " SWEEP_STR(SWEEP_CASE_SECONDS) " s");
    _exit(1);
}

/* A sanitizer's report ends the process without a signal: name the case first. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void on_sanitizer_death(void)
{
    say_case("stopped by a sanitizer report");
}

static void install_handlers(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_crash;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < SWEEP_NSIGNALS; i++)
        sigaction(g_crash_signals[i], &sa, &g_old_actions[i]);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    if (__sanitizer_set_death_callback != NULL)
        __sanitizer_set_death_callback(on_sanitizer_death);
}

static int g_failures;

static void fail(const struct sweep_case *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void fail(const struct sweep_case *c, const char *fmt, ...)
{
    char why[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    printf("FAIL %s with %s %s: %s\n", c->func, c->what, c->arg, why);
    fflush(stdout);
    g_failures++;
}

/* Where text names word as a whole word (not followed by a letter, digit or underscore): the
 * character after it, or NULL. */
static const char *names(const char *text, const char *word)
{
    size_t n = strlen(word);
    for (const char *at = strstr(text, word); at != NULL; at = strstr(at + 1, word)) {
        char next = at[n];
        if (!(next == '_' || (next >= 'a' && next <= 'z') || (next >= 'A' && next <= 'Z') ||
              (next >= '0' && next <= '9')))
            return at + n;
    }
    return NULL;
}

static void expect_list(const struct sweep_case *c, char *buf, size_t len)
{
    buf[0] = 0;
    for (int i = 0; i < 4 && c->expect[i] != MPI_SUCCESS; i++) {
        size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", i ? " or " : "",
                 mtest_error_class_name(c->expect[i]));
    }
}

static void check_result(const struct sweep_case *c, int rc)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int cls = -1, len = -1;

    if (rc == MPI_SUCCESS) {
        fail(c, "returned MPI_SUCCESS");
        return;
    }
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) {
        fail(c, "MPI_Error_class of the code %d failed", rc);
        return;
    }
    int ok = 0;
    for (int i = 0; i < 4 && c->expect[i] != MPI_SUCCESS; i++)
        ok |= cls == c->expect[i];
    if (!ok) {
        char list[256];
        expect_list(c, list, sizeof(list));
        fail(c, "returned %s (%d), expected %s", mtest_error_class_name(cls), cls, list);
    }
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS || len <= 0 ||
        (size_t)len != strlen(text)) {
        fail(c, "no error string (len %d)", len);
        return;
    }
    if (c->tool || !mtest_is_manifold())
        return;
    const char *after = names(text, c->func);
    if (after == NULL) {
        fail(c, "the message does not name the function: \"%s\"", text);
        return;
    }
    /* the argument by its name, as a word ("argument count=-1", "recvcounts[0]=-1") */
    if (names(after, c->arg) == NULL)
        fail(c, "the message does not name the argument: \"%s\"", text);
}

/* The library still works: a message to itself on MPI_COMM_WORLD. */
static void check_alive(const struct sweep_case *c)
{
    int out = 4242, in = -1;
    int rc = MPI_Sendrecv(&out, 1, MPI_INT, g_rank, 999, &in, 1, MPI_INT, g_rank, 999,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || in != out)
        fail(c, "afterwards a message to itself failed (rc %d)", rc);
}

/* ---- the objects ---------------------------------------------------------------------------- */

static int g_setup_errors;

static void need(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        printf("setup: %s failed (%d)\n", what, rc);
        g_setup_errors++;
    }
}

static void setup_arrays(void)
{
    for (int i = 0; i < 16; i++) {
        ones_i[i] = 1, ones_c[i] = 1, ones_a[i] = 1;
        zeros_i[i] = 0, zeros_c[i] = 0, zeros_a[i] = 0;
        iota_i[i] = i, iota_c[i] = i, iota_a[i] = i;
        iota4_i[i] = 4 * i, iota4_c[i] = 4 * i, iota4_a[i] = 4 * i;
        neg_i[i] = 1, neg_c[i] = 1, neg_a[i] = 1;
        g_dims[i] = 1;
        g_graph_index[i] = i + 1;
        g_graph_edges[i] = i;
        g_self_rank[i] = g_rank;
        g_bad_rank[i] = g_size;
        darray_gsizes_i[i] = 4 * g_size, darray_gsizes_c[i] = 4 * g_size;
        g_darray_distribs[i] = MPI_DISTRIBUTE_BLOCK;
        g_darray_dargs[i] = MPI_DISTRIBUTE_DFLT_DARG;
        g_darray_psizes[i] = 1;
        g_types[i] = MPI_INT;
        g_null_requests[i] = MPI_REQUEST_NULL;
        g_infos[i] = MPI_INFO_NULL;
    }
    neg_i[0] = -1, neg_c[0] = -1, neg_a[0] = -1;
    g_dims[0] = g_size;
    g_darray_psizes[0] = g_size;
    g_ranges[0][0] = 0, g_ranges[0][1] = g_size - 1, g_ranges[0][2] = 1;
    g_bad_ranges[0][0] = g_size, g_bad_ranges[0][1] = g_size, g_bad_ranges[0][2] = 1;
    g_ftrue[0] = 1;
}

static void setup_tool(void)
{
    int provided, n = 0, len, count, verbosity, bind, scope, readonly, continuous, atomic;
    MPI_Datatype type;
    MPI_T_enum enumtype;

    need(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init_thread");
    if (MPI_T_cvar_get_num(&n) == MPI_SUCCESS && n > 0) {
        len = sizeof(g_cvar_name);
        if (MPI_T_cvar_get_info(0, g_cvar_name, &len, &verbosity, &type, &enumtype, NULL, NULL,
                                &bind, &scope) == MPI_SUCCESS &&
            MPI_T_cvar_handle_alloc(0, &g_world, &g_cvar_handle, &count) == MPI_SUCCESS)
            g_have |= SWEEP_NEEDS_CVAR;
        for (int i = 0; i < n && g_enum == MPI_T_ENUM_NULL; i++) {
            char name[256];
            len = sizeof(name);
            if (MPI_T_cvar_get_info(i, name, &len, &verbosity, &type, &enumtype, NULL, NULL, &bind,
                                    &scope) == MPI_SUCCESS)
                g_enum = enumtype;
        }
        if (g_enum != MPI_T_ENUM_NULL)
            g_have |= SWEEP_NEEDS_ENUM;
    }
    need(MPI_T_pvar_session_create(&g_pvar_session), "MPI_T_pvar_session_create");
    if (MPI_T_pvar_get_num(&n) == MPI_SUCCESS && n > 0) {
        len = sizeof(g_pvar_name);
        if (MPI_T_pvar_get_info(0, g_pvar_name, &len, &verbosity, &g_pvar_class, &type, &enumtype,
                                NULL, NULL, &bind, &readonly, &continuous,
                                &atomic) == MPI_SUCCESS &&
            MPI_T_pvar_handle_alloc(g_pvar_session, 0, &g_world, &g_pvar_handle, &count) ==
                MPI_SUCCESS)
            g_have |= SWEEP_NEEDS_PVAR;
    }
    if (MPI_T_category_get_num(&n) == MPI_SUCCESS && n > 0) {
        len = sizeof(g_cat_name);
        int ncvars, npvars, ncats;
        if (MPI_T_category_get_info(0, g_cat_name, &len, NULL, NULL, &ncvars, &npvars, &ncats) ==
            MPI_SUCCESS)
            g_have |= SWEEP_NEEDS_CAT;
    }
    if (MPI_T_source_get_num(&n) == MPI_SUCCESS && n > 0)
        g_have |= SWEEP_NEEDS_SOURCE;
}

static void setup(void)
{
    int periods[1] = {1};
    const char *tmp = getenv("TMPDIR");

    g_world = MPI_COMM_WORLD;
    need(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "errhandler of WORLD");
    need(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), "errhandler of SELF");
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    g_peer = (g_rank + 1) % g_size;
    setup_arrays();

    need(MPI_Comm_group(MPI_COMM_WORLD, &g_group), "MPI_Comm_group");
    need(MPI_Op_create(sweep_user_op, 1, &g_op), "MPI_Op_create");
    need(MPI_Info_create(&g_info), "MPI_Info_create");
    need(MPI_Info_set(g_info, "sweep_key", "sweep_value"), "MPI_Info_set");
    need(MPI_Type_vector(2, 1, 2, MPI_INT, &g_vec), "MPI_Type_vector");
    need(MPI_Type_commit(&g_vec), "MPI_Type_commit");
    /* a type with integers, addresses and (through the _c constructor) large counts */
    need(MPI_Type_create_hvector(2, 1, 8, MPI_INT, &g_hvec), "MPI_Type_create_hvector");
    need(MPI_Type_create_hvector_c(2, 1, 8, MPI_INT, &g_hvec_c), "MPI_Type_create_hvector_c");
    need(MPI_Cart_create(MPI_COMM_WORLD, 1, g_dims, periods, 0, &g_cart), "MPI_Cart_create");
    need(MPI_Graph_create(MPI_COMM_WORLD, g_size, g_graph_index, g_graph_edges, 0, &g_graph),
         "MPI_Graph_create");
    need(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, g_self_rank, ones_i, 1, g_self_rank,
                                        ones_i, MPI_INFO_NULL, 0, &g_dgraph),
         "MPI_Dist_graph_create_adjacent");

    need(MPI_Win_create(g_wbuf, sizeof(g_wbuf), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &g_win),
         "MPI_Win_create");
    need(MPI_Win_create(g_wbuf, sizeof(g_wbuf), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &g_win_epoch),
         "MPI_Win_create");
    need(MPI_Win_create(g_wbuf, sizeof(g_wbuf), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &g_win_locked),
         "MPI_Win_create");
    need(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &g_dynwin),
         "MPI_Win_create_dynamic");
    void *shbase;
    need(MPI_Win_allocate_shared(64, 1, MPI_INFO_NULL, MPI_COMM_SELF, &shbase, &g_shwin),
         "MPI_Win_allocate_shared");
    MPI_Win wins[] = {g_win, g_win_epoch, g_win_locked, g_dynwin, g_shwin};
    for (size_t i = 0; i < sizeof(wins) / sizeof(wins[0]); i++)
        need(MPI_Win_set_errhandler(wins[i], MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
    need(MPI_Win_lock_all(0, g_win_epoch), "MPI_Win_lock_all");
    need(MPI_Win_lock(MPI_LOCK_SHARED, g_rank, 0, g_win_locked), "MPI_Win_lock");

    snprintf(g_path, sizeof(g_path), "%s/arg_sweep.%ld.%d", tmp != NULL ? tmp : "/tmp",
             (long)getpid(), g_rank);
    snprintf(g_path2, sizeof(g_path2), "%s.2", g_path);
    need(MPI_File_open(MPI_COMM_SELF, g_path,
                       MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL,
                       &g_file),
         "MPI_File_open");
    need(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &g_session), "MPI_Session_init");

    need(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &g_comm_keyval,
                                NULL),
         "MPI_Comm_create_keyval");
    need(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &g_type_keyval,
                                NULL),
         "MPI_Type_create_keyval");
    need(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &g_win_keyval, NULL),
         "MPI_Win_create_keyval");
    need(MPI_Add_error_class(&g_user_class), "MPI_Add_error_class");
    need(MPI_Add_error_code(g_user_class, &g_user_code), "MPI_Add_error_code");
    need(MPI_Recv(g_rbuf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &g_status), "MPI_Recv");
    need(MPI_Open_port(MPI_INFO_NULL, g_port), "MPI_Open_port");

    need(MPI_Send_init(g_sbuf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &g_preq),
         "MPI_Send_init");
    need(
        MPI_Precv_init(g_prbuf, 1, 1, MPI_INT, g_rank, 77, MPI_COMM_WORLD, MPI_INFO_NULL, &g_precv),
        "MPI_Precv_init");
    need(
        MPI_Psend_init(g_psbuf, 1, 1, MPI_INT, g_rank, 77, MPI_COMM_WORLD, MPI_INFO_NULL, &g_psend),
        "MPI_Psend_init");
    need(MPI_Start(&g_precv), "MPI_Start");
    need(MPI_Start(&g_psend), "MPI_Start");
    need(MPI_Grequest_start(sweep_greq_query, sweep_greq_free, sweep_greq_cancel, NULL, &g_greq),
         "MPI_Grequest_start");
    setup_tool();
}

/* Everything the sweep made is freed, with every call succeeding: the library still works. */
static void teardown(void)
{
    MPI_Request reqs[2];

    need(MPI_Pready(0, g_psend), "MPI_Pready");
    reqs[0] = g_psend, reqs[1] = g_precv;
    need(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall of the partitioned requests");
    need(MPI_Request_free(&g_psend), "MPI_Request_free");
    need(MPI_Request_free(&g_precv), "MPI_Request_free");
    need(MPI_Request_free(&g_preq), "MPI_Request_free");
    need(MPI_Grequest_complete(g_greq), "MPI_Grequest_complete");
    need(MPI_Wait(&g_greq, MPI_STATUS_IGNORE), "MPI_Wait of the generalized request");
    need(MPI_Close_port(g_port), "MPI_Close_port");
    if (g_have & SWEEP_NEEDS_CVAR)
        need(MPI_T_cvar_handle_free(&g_cvar_handle), "MPI_T_cvar_handle_free");
    if (g_have & SWEEP_NEEDS_PVAR)
        need(MPI_T_pvar_handle_free(g_pvar_session, &g_pvar_handle), "MPI_T_pvar_handle_free");
    need(MPI_T_pvar_session_free(&g_pvar_session), "MPI_T_pvar_session_free");
    need(MPI_T_finalize(), "MPI_T_finalize");
    need(MPI_Comm_free_keyval(&g_comm_keyval), "MPI_Comm_free_keyval");
    need(MPI_Type_free_keyval(&g_type_keyval), "MPI_Type_free_keyval");
    need(MPI_Win_free_keyval(&g_win_keyval), "MPI_Win_free_keyval");
    need(MPI_Remove_error_code(g_user_code), "MPI_Remove_error_code");
    need(MPI_Remove_error_class(g_user_class), "MPI_Remove_error_class");
    need(MPI_Session_finalize(&g_session), "MPI_Session_finalize");
    need(MPI_File_close(&g_file), "MPI_File_close");
    need(MPI_Win_unlock(g_rank, g_win_locked), "MPI_Win_unlock");
    need(MPI_Win_unlock_all(g_win_epoch), "MPI_Win_unlock_all");
    need(MPI_Win_free(&g_win), "MPI_Win_free");
    need(MPI_Win_free(&g_win_epoch), "MPI_Win_free");
    need(MPI_Win_free(&g_win_locked), "MPI_Win_free");
    need(MPI_Win_free(&g_dynwin), "MPI_Win_free");
    need(MPI_Win_free(&g_shwin), "MPI_Win_free");
    need(MPI_Comm_free(&g_cart), "MPI_Comm_free");
    need(MPI_Comm_free(&g_graph), "MPI_Comm_free");
    need(MPI_Comm_free(&g_dgraph), "MPI_Comm_free");
    need(MPI_Type_free(&g_vec), "MPI_Type_free");
    need(MPI_Type_free(&g_hvec), "MPI_Type_free");
    need(MPI_Type_free(&g_hvec_c), "MPI_Type_free");
    need(MPI_Info_free(&g_info), "MPI_Info_free");
    need(MPI_Op_free(&g_op), "MPI_Op_free");
    need(MPI_Group_free(&g_group), "MPI_Group_free");
    need(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

/* Whether the comma-separated list names func. */
static int listed(const char *list, const char *func)
{
    size_t n = strlen(func);
    for (const char *at = list; at != NULL && *at != 0; at = strchr(at, ',')) {
        if (*at == ',')
            at++;
        if (strncmp(at, func, n) == 0 && (at[n] == ',' || at[n] == 0))
            return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *only = getenv("SWEEP_ONLY"), *leave_out = getenv("SWEEP_LEAVE_OUT");
    int verbose = getenv("SWEEP_VERBOSE") != NULL;
    size_t ncases = sizeof(sweep_cases) / sizeof(sweep_cases[0]);
    int ran = 0, not_here = 0, functions = 0, nskipped = 0;
    const char *last = "";

    mtest_init(&argc, &argv);
    install_handlers();
    setup();
    if (g_setup_errors == 0) {
        for (size_t i = 0; i < ncases; i++) {
            const struct sweep_case *c = &sweep_cases[i];
            if (only != NULL && strncmp(c->func, only, strlen(only)) != 0)
                continue;
            if (listed(leave_out, c->func))
                continue;
            if (c->needs & ~g_have) {
                not_here++;
                continue;
            }
            if (strcmp(c->func, last) != 0)
                functions++;
            last = c->func;
            g_current = c;
            if (verbose)
                say_case("runs");
            alarm(SWEEP_CASE_SECONDS);
            int rc = c->call(c->bad);
            alarm(0);
            check_result(c, rc);
            check_alive(c);
            g_current = NULL;
            ran++;
        }
        teardown();
    }
    for (const struct sweep_skip *s = sweep_skipped; s->what != NULL; s++)
        nskipped++;
    if (g_rank == 0) {
        printf("arg_sweep: %d cases over %d of %d functions; %d cases need a tool object this "
               "library lacks; skipped: %d (listed in gen_arg_sweep.py)\n",
               ran, functions, SWEEP_FUNCTIONS, not_here, nskipped);
        if (verbose)
            for (const struct sweep_skip *s = sweep_skipped; s->what != NULL; s++)
                printf("  skipped %s: %s\n", s->what, s->reason);
    }
    return mtest_finalize(g_failures + g_setup_errors);
}
