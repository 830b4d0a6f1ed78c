/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher: mpiexec for one host. Starts N copies of a program in one process group, each with
 * a PMI socket (PMI_FD) served by pmi_server.c, and more jobs when processes ask for a spawn;
 * forwards stdin to the first job's rank 0 and every process's output line by line, and ends
 * the run as a whole: the first process that fails (non-zero exit, signal, PMI abort, exit
 * without PMI finalize), a timeout or a signal to mpiexec stops all processes of all jobs
 * (SIGTERM, then SIGKILL after a grace period) and sets mpiexec's exit status. See
 * docs/design/launcher.md.
 */
#define _GNU_SOURCE
#include "mpiexec.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define EXIT_USAGE     2   /* bad command line */
#define EXIT_NOEXEC    127 /* the program cannot be run, as a shell says */
#define EXIT_TIMEOUT   124 /* as timeout(1) */
#define KILL_GRACE_MS  2000
#define DRAIN_GRACE_MS 1000 /* output still held open by the ranks' own children */

typedef struct options {
    int nranks;
    int timeout_sec; /* 0: none */
    int tag_output;
    int pmi_versions;
    int ppn;      /* processes per (simulated) node; 0: all on one node */
    int universe; /* MPI_UNIVERSE_SIZE; 0: the launcher's default */
    char **env;   /* "K=V" for every rank */
    int nenv;
    char **argv;             /* the program and its arguments */
    int adopt_fd, adopt_pid; /* --adopt: serve this process instead of starting a first job */
} options_t;

/* One process of any job. Its index in the run's table is its id for the PMI server. */
typedef struct proc {
    pid_t pid;
    int job, rank;
    int reaped;
    int adopted; /* not our child (--adopt): it ends when its connection closes */
    mf_output_t out, err;
} proc_t;

/* Everything mpiexec runs: the first job and the jobs spawned from it. */
typedef struct run {
    options_t opt;
    proc_t **procs; /* pointers, so that a spawn growing the table moves no output buffer */
    int nprocs, cap_procs, nalive;
    pid_t pgid;
    int sigfd, null_fd;
    sigset_t orig_mask;
    mf_pmi_server_t *pmi;
    mf_input_t in;
    mf_sink_t sink_out, sink_err_own, *sink_err; /* sink_err: sink_out when 1 and 2 are one file */
    int failing, killed_hard, exit_code;
    long long deadline_ms, kill_at_ms, drain_until_ms; /* 0: not armed */
} run_t;

/* What one process is started with. */
typedef struct launch {
    char *const *argv;
    const char *wdir, *path;
    int spawned, rank, size;
    int node_rank, node_size; /* MPI_LOCALRANKID, MPI_LOCALNRANKS */
    int pmi_fd, in_fd, out_fd, err_fd;
    int report_fd; /* close-on-exec: a failure before exec is written here */
} launch_t;

/* What a child that could not exec tells mpiexec. */
typedef struct child_failure {
    int chdir_failed; /* else exec (or the set-up before it) failed */
    int err;
} child_failure_t;

static void usage(FILE *to)
{
    fprintf(to, "usage: mpiexec -n N [options] program [args...]\n"
                "  -n, -np N             number of processes (default 1, at most 4096 with the\n"
                "                        processes spawned later)\n"
                "  --env K=V             set K=V for every process (also -env K V, -genv K V)\n"
                "  --timeout S           stop the job after S seconds and exit with 124\n"
                "                        (default: MANIFOLD_MPIEXEC_TIMEOUT, else\n"
                "                        MPIEXEC_TIMEOUT, else none)\n"
                "  --tag-output, -l      prefix every output line with [rank]\n"
                "  --pmi 1|2             serve only this PMI version (default: both)\n"
                "  --universe-size N     MPI_UNIVERSE_SIZE (also -usize; default:\n"
                "                        MANIFOLD_MPIEXEC_UNIVERSE_SIZE, else the processors\n"
                "                        online, at least -n)\n"
                "  --ppn N               report the ranks as nodes of N processes each (blocks\n"
                "                        of consecutive ranks): tests node-aware code on one host\n"
                "                        (default: MANIFOLD_MPIEXEC_PPN, else one node)\n"
                "  -h, --help            show this help\n"
                "  --adopt=FD,PID        (the library's, for a process started without mpiexec)\n"
                "                        serve process PID, connected on FD, as a job of one\n"
                "Processes may start more jobs (PMI spawn) and publish names (PMI name service).\n"
                "exit status: 0 if every process exits 0; else the first failing process's exit\n"
                "code (128+signal if killed), 124 on timeout, 2 on a bad command line.\n");
}

static int parse_count(const char *text, int min, int *value_p)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > INT_MAX / 2)
        return 0;
    *value_p = (int)value;
    return 1;
}

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "mpiexec: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see mpiexec --help)\n");
    return 0;
}

/* Stores "K=V" (from K=V, or from K and V) in the option list. */
static int add_env(options_t *opt, const char *key, const char *value)
{
    size_t len = strlen(key) + (value != NULL ? strlen(value) + 1 : 0) + 1;
    char *assign = malloc(len), **env = realloc(opt->env, (size_t)(opt->nenv + 1) * sizeof(char *));
    if (assign == NULL || env == NULL) {
        free(assign);
        opt->env = env != NULL ? env : opt->env;
        return usage_error("out of memory for %s", key);
    }
    snprintf(assign, len, value != NULL ? "%s=%s" : "%s", key, value);
    opt->env = env;
    opt->env[opt->nenv++] = assign;
    if (strchr(assign, '=') == NULL || assign[0] == '=')
        return usage_error("'%s' is not K=V", assign);
    return 1;
}

static int parse_option(options_t *opt, int argc, char **argv, int *i_p)
{
    const char *arg = argv[*i_p];
    int has1 = *i_p + 1 < argc, has2 = *i_p + 2 < argc;
    const char *next = has1 ? argv[*i_p + 1] : NULL;
    if (!strcmp(arg, "-n") || !strcmp(arg, "-np") || !strcmp(arg, "--np")) {
        (*i_p)++;
        if (!has1 || !parse_count(next, 1, &opt->nranks))
            return usage_error("%s needs a process count of at least 1", arg);
        if (opt->nranks <= MF_MPIEXEC_MAX_PROCS)
            return 1;
        fprintf(stderr, "mpiexec: at most %d processes run at once (see mpiexec --help)\n",
                MF_MPIEXEC_MAX_PROCS);
        return 0;
    }
    if (!strcmp(arg, "--timeout")) {
        (*i_p)++;
        return (has1 && parse_count(next, 1, &opt->timeout_sec)) ||
               usage_error("%s needs a number of seconds of at least 1", arg);
    }
    if (!strcmp(arg, "--pmi")) {
        (*i_p)++;
        if (!has1 || (strcmp(next, "1") != 0 && strcmp(next, "2") != 0))
            return usage_error("%s needs 1 or 2", arg);
        opt->pmi_versions = next[0] == '1' ? MF_PMI_SERVE_V1 : MF_PMI_SERVE_V2;
        return 1;
    }
    if (!strcmp(arg, "--universe-size") || !strcmp(arg, "-usize")) {
        (*i_p)++;
        return (has1 && parse_count(next, 1, &opt->universe)) ||
               usage_error("%s needs a number of processes of at least 1", arg);
    }
    if (!strcmp(arg, "--ppn") || !strcmp(arg, "-ppn")) {
        (*i_p)++;
        return (has1 && parse_count(next, 1, &opt->ppn)) ||
               usage_error("%s needs a number of processes per node of at least 1", arg);
    }
    if (!strcmp(arg, "--env")) {
        (*i_p)++;
        return has1 ? add_env(opt, next, NULL) : usage_error("%s needs K=V", arg);
    }
    if (!strcmp(arg, "-env") || !strcmp(arg, "-genv")) {
        *i_p += 2;
        return has2 ? add_env(opt, next, argv[*i_p]) : usage_error("%s needs K and V", arg);
    }
    if (!strcmp(arg, "--tag-output") || !strcmp(arg, "-l") || !strcmp(arg, "-prepend-rank")) {
        opt->tag_output = 1;
        return 1;
    }
    if (!strncmp(arg, "--adopt=", 8)) {
        char *end;
        long fd = strtol(arg + 8, &end, 10), pid = *end == ',' ? strtol(end + 1, &end, 10) : -1;
        if (*end != '\0' || fd < 3 || fd > INT_MAX || pid < 1 || pid > INT_MAX)
            return usage_error("%s needs a descriptor and a process id", "--adopt=FD,PID");
        opt->adopt_fd = (int)fd;
        opt->adopt_pid = (int)pid;
        opt->timeout_sec = 0; /* the process's life is its own */
        return 1;
    }
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
        usage(stdout);
        exit(0);
    }
    return usage_error("unknown option '%s'", arg);
}

static int parse_options(options_t *opt, int argc, char **argv)
{
    /* MPIEXEC_TIMEOUT is what hydra and Open MPI's mpirun read, so test harnesses set it */
    const char *timeout_env = getenv("MANIFOLD_MPIEXEC_TIMEOUT");
    int ours = timeout_env != NULL && timeout_env[0] != '\0';
    if (!ours)
        timeout_env = getenv("MPIEXEC_TIMEOUT");
    *opt = (options_t){.nranks = 1, .pmi_versions = MF_PMI_SERVE_V1 | MF_PMI_SERVE_V2};
    if (timeout_env != NULL && timeout_env[0] != '\0' &&
        !parse_count(timeout_env, 1, &opt->timeout_sec))
        return usage_error(ours ? "MANIFOLD_MPIEXEC_TIMEOUT='%s' is not a number of seconds"
                                : "MPIEXEC_TIMEOUT='%s' is not a number of seconds",
                           timeout_env);
    const char *usize_env = getenv("MANIFOLD_MPIEXEC_UNIVERSE_SIZE");
    if (usize_env != NULL && usize_env[0] != '\0' && !parse_count(usize_env, 1, &opt->universe))
        return usage_error("MANIFOLD_MPIEXEC_UNIVERSE_SIZE='%s' is not a number of processes",
                           usize_env);
    const char *ppn_env = getenv("MANIFOLD_MPIEXEC_PPN");
    if (ppn_env != NULL && ppn_env[0] != '\0' && !parse_count(ppn_env, 1, &opt->ppn))
        return usage_error("MANIFOLD_MPIEXEC_PPN='%s' is not a number of processes", ppn_env);
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!parse_option(opt, argc, argv, &i))
            return 0;
    }
    if (opt->adopt_fd > 0)
        return i >= argc || usage_error("%s", "--adopt takes no program");
    if (i >= argc)
        return usage_error("%s", "no program to run");
    opt->argv = &argv[i];
    return 1;
}

/* How messages name a process: "rank 2 (pid 123)" in the first job, as before spawn existed,
 * and "job 1 rank 0 (pid 124)" in spawned ones. */
static const char *proc_name(const proc_t *p, char *buf, size_t size)
{
    if (p->job == 0)
        snprintf(buf, size, "rank %d (pid %d)", p->rank, (int)p->pid);
    else
        snprintf(buf, size, "job %d rank %d (pid %d)", p->job, p->rank, (int)p->pid);
    return buf;
}

/* Every process gets SIGTERM (or SIGKILL), through the run's process group so that the ranks'
 * own children go too. The group id stays valid while any member is left, reaped ranks or not
 * (an id is not reused while its group exists). */
static void kill_ranks(run_t *run, int sig)
{
    for (int id = 0; id < run->nprocs; id++) {
        /* an adopted process is the user's own (an interpreter, a notebook's kernel) */
        if (run->procs[id]->pid > 0 && !run->procs[id]->reaped && !run->procs[id]->adopted)
            kill(run->procs[id]->pid, sig);
    }
    if (run->pgid > 0)
        kill(-run->pgid, sig);
}

/* The first failure decides the exit status; later deaths are its consequences. Unless
 * `stop_now` is 0, every process still running is stopped at once; either way the grace
 * period's SIGKILL takes what is left. */
static void run_fail_msg(run_t *run, int exit_code, int stop_now, const char *msg)
{
    if (run->failing)
        return;
    run->failing = 1;
    run->exit_code = exit_code;
    /* queued behind the ranks' output read so far, which it may explain */
    mf_sink_printf(run->sink_err, "mpiexec: %s\n", msg);
    /* also with no rank left: their children may be */
    if (stop_now)
        kill_ranks(run, SIGTERM);
    run->kill_at_ms = mf_now_ms() + KILL_GRACE_MS;
}

static void run_fail(run_t *run, int exit_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void run_fail(run_t *run, int exit_code, const char *fmt, ...)
{
    char msg[800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    run_fail_msg(run, exit_code, 1, msg);
}

static void check_abort(run_t *run)
{
    const mf_pmi_abort_t *ab = mf_pmi_server_abort_request(run->pmi);
    char name[64];
    /* An exit status keeps the code's low byte: a non-zero code whose low byte is 0 (256) must
     * not read as success. */
    int status = ab != NULL ? ab->exit_code & 0xff : 0;
    if (ab != NULL && ab->exit_code != 0 && status == 0)
        status = 1;
    if (ab != NULL)
        run_fail(run, status, "%s called abort with code %d: %s",
                 proc_name(run->procs[ab->id], name, sizeof(name)), ab->exit_code, ab->message);
}

static void proc_exited(run_t *run, int id, int wstatus)
{
    proc_t *p = run->procs[id];
    int state = mf_pmi_server_rank_state(run->pmi, id);
    char name[64];
    proc_name(p, name, sizeof(name));
    p->reaped = 1;
    run->nalive--;
    /* An abort request may still sit unread in the socket: it explains this exit best. */
    mf_pmi_server_handle(run->pmi, id);
    check_abort(run);
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        run_fail(run, 128 + sig, "%s killed by signal %d (%s)", name, sig, strsignal(sig));
    } else if (WEXITSTATUS(wstatus) != 0 && (state & MF_PMI_RANK_FINALIZED)) {
        /* Finalized, so nobody waits for it, and the others are most likely finalizing too:
         * they get the grace period to end on their own. Stopping them at once lost the output
         * they still flushed at exit (every rank printing, finalizing and returning 1 showed
         * only the first to exit). */
        char msg[128];
        snprintf(msg, sizeof(msg), "%s exited with code %d", name, WEXITSTATUS(wstatus));
        run_fail_msg(run, WEXITSTATUS(wstatus), 0, msg);
    } else if (WEXITSTATUS(wstatus) != 0) {
        run_fail(run, WEXITSTATUS(wstatus), "%s exited with code %d", name, WEXITSTATUS(wstatus));
    } else if ((state & MF_PMI_RANK_INITIALIZED) && !(state & MF_PMI_RANK_FINALIZED)) {
        run_fail(run, 1, "%s exited with code 0 without calling PMI finalize", name);
    }
}

static void reap_children(run_t *run)
{
    int wstatus;
    pid_t pid;
    while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
        for (int id = 0; id < run->nprocs; id++) {
            if (run->procs[id]->pid == pid && !run->procs[id]->reaped)
                proc_exited(run, id, wstatus);
        }
    }
}

static void handle_signals(run_t *run)
{
    struct signalfd_siginfo info;
    while (read(run->sigfd, &info, sizeof(info)) == (ssize_t)sizeof(info)) {
        int sig = (int)info.ssi_signo;
        if (sig == SIGCHLD)
            continue; /* reaped below, once per wake-up */
        if (run->failing && run->nalive > 0) {
            kill_ranks(run, SIGKILL); /* asked twice: no more grace */
            run->killed_hard = 1;
        }
        run_fail(run, 128 + sig, "received %s, stopping %d rank(s)", strsignal(sig), run->nalive);
    }
    reap_children(run);
}

/* An adopted process has ended once its connection is closed: after PMI finalize, or an exit
 * without it (judged as for a child that exited with code 0). */
static void check_adopted(run_t *run)
{
    for (int id = 0; id < run->nprocs; id++) {
        proc_t *p = run->procs[id];
        if (p->adopted && !p->reaped && mf_pmi_server_fd(run->pmi, id) < 0)
            proc_exited(run, id, 0);
    }
}

/* A fence needs every rank of its job: if one already left, the others would wait forever. */
static void check_fence(run_t *run)
{
    char name[64];
    for (int id = 0; id < run->nprocs && !run->failing; id++) {
        proc_t *p = run->procs[id];
        if (p->reaped && mf_pmi_server_barrier_waiting(run->pmi, p->job) > 0)
            run_fail(run, 1, "%s exited while other ranks wait for it in a fence",
                     proc_name(p, name, sizeof(name)));
    }
}

static void check_time(run_t *run)
{
    long long now = mf_now_ms();
    if (run->deadline_ms > 0 && now >= run->deadline_ms && !run->failing)
        run_fail(run, EXIT_TIMEOUT, "timeout after %d s, stopping %d rank(s)", run->opt.timeout_sec,
                 run->nalive);
    if (run->kill_at_ms > 0 && now >= run->kill_at_ms && !run->killed_hard) {
        kill_ranks(run, SIGKILL);
        run->killed_hard = 1;
    }
}

/* glibc (2.36 here) copies 2 KiB and more with `rep movsb` on CPUs with ERMS. On AMD Zen 4 that
 * instruction runs 20-30 times slower when the destination sits 1-63 bytes above the source
 * modulo 4 KiB (4 KiB memcpy: 1.1 us instead of 42 ns at 8 bytes above), up to about 1 MiB,
 * where glibc's vector loop does not care. UCX copies every eager fragment with memcpy between
 * the user's buffer and its shared-memory queue, whose fragments move around, so some launches
 * hit the slow distance at every call: two-rank Bcast of 16 KiB took 1.6 us in those and 0.65
 * in the others (coll.md). Ranks therefore get a rep movsb threshold of 2 MiB on AMD CPUs,
 * unless the user chose one or sets MANIFOLD_MPIEXEC_TUNE_MEMCPY=0. */
#define REP_MOVSB_TUNABLE "glibc.cpu.x86_rep_movsb_threshold"
#define REP_MOVSB_FROM    "2097152"

static int amd_cpu(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    return b == 0x68747541 && d == 0x69746e65 && c == 0x444d4163; /* "AuthenticAMD" */
#else
    return 0;
#endif
}

/* In the child, after the user's variables: appends the threshold to GLIBC_TUNABLES. */
static void tune_memcpy(void)
{
    const char *off = getenv("MANIFOLD_MPIEXEC_TUNE_MEMCPY");
    if ((off != NULL && strcmp(off, "0") == 0) || !amd_cpu())
        return;
    const char *old = getenv("GLIBC_TUNABLES");
    if (old != NULL && strstr(old, REP_MOVSB_TUNABLE) != NULL)
        return;
    char val[1024];
    int n = snprintf(val, sizeof(val), "%s%s" REP_MOVSB_TUNABLE "=" REP_MOVSB_FROM,
                     old != NULL ? old : "", old != NULL && old[0] != '\0' ? ":" : "");
    if (n > 0 && (size_t)n < sizeof(val))
        setenv("GLIBC_TUNABLES", val, 1);
}

static void child_report(const launch_t *l, int chdir_failed, int err)
{
    child_failure_t failure = {chdir_failed, err};
    (void)!write(l->report_fd, &failure, sizeof(failure));
    _exit(EXIT_NOEXEC);
}

static void setenv_int(const char *name, int value)
{
    char num[16];
    snprintf(num, sizeof(num), "%d", value);
    setenv(name, num, 1);
}

/* The "path" info of a spawn: searched for the program before the inherited PATH. */
static void prepend_path(const char *dirs)
{
    const char *old = getenv("PATH");
    size_t len = strlen(dirs) + (old != NULL ? strlen(old) + 1 : 0) + 1;
    char *path = malloc(len);
    if (path == NULL)
        return;
    snprintf(path, len, old != NULL ? "%s:%s" : "%s", dirs, old);
    setenv("PATH", path, 1);
    free(path);
}

/* Runs in the child between fork and exec: only async-signal-safe calls, setenv and malloc
 * (mpiexec has a single thread, so no lock can be held by anyone). */
static void child_exec(const run_t *run, const launch_t *l, pid_t parent)
{
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(EXIT_NOEXEC); /* mpiexec is already gone */
    setpgid(0, run->pgid);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &run->orig_mask, NULL);
    if (dup2(l->in_fd, 0) < 0 || dup2(l->out_fd, 1) < 0 || dup2(l->err_fd, 2) < 0)
        child_report(l, 0, errno);
    int fd = fcntl(l->pmi_fd, F_DUPFD, 3); /* a copy without close-on-exec */
    if (fd < 0)
        child_report(l, 0, errno);
    for (int i = 0; i < run->opt.nenv; i++)
        putenv(run->opt.env[i]);
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    unsetenv("MANIFOLD_MPIEXEC_TIMEOUT");
    unsetenv("MPIEXEC_TIMEOUT");
    unsetenv("MANIFOLD_MPIEXEC_PPN");
    unsetenv("MANIFOLD_MPIEXEC_UNIVERSE_SIZE");
    tune_memcpy();
    setenv_int("PMI_FD", fd);
    setenv_int("PMI_RANK", l->rank);
    setenv_int("PMI_SIZE", l->size);
    setenv_int("MPI_LOCALRANKID", l->node_rank);
    setenv_int("MPI_LOCALNRANKS", l->node_size);
    /* as hydra says it; not inherited by the first job from a spawned mpiexec's caller */
    if (l->spawned)
        setenv("PMI_SPAWNED", "1", 1);
    else
        unsetenv("PMI_SPAWNED");
    char host[256] = "localhost";
    gethostname(host, sizeof(host) - 1);
    setenv("PMI_HOSTNAME", host, 1);
    if (l->wdir != NULL && chdir(l->wdir) != 0)
        child_report(l, 1, errno);
    if (l->path != NULL)
        prepend_path(l->path);
    execvp(l->argv[0], l->argv);
    child_report(l, 0, errno);
}

/* Forks and execs one process. The report pipe is closed by a successful exec: reading
 * end-of-file from it means the program runs; a child_failure_t means it does not, and the
 * child (gone with code 127) is reaped here so that its exit is never judged. Returns 1 when
 * the program runs, -1 when it cannot be run, 0 when mpiexec could not even try. */
static int fork_exec(run_t *run, launch_t *l, pid_t *pid_p, char *why, size_t why_size)
{
    int report[2];
    child_failure_t failure;
    if (pipe2(report, O_CLOEXEC) != 0) {
        snprintf(why, why_size, "cannot create a pipe: %s", strerror(errno));
        return 0;
    }
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(why, why_size, "cannot fork: %s", strerror(errno));
        close(report[0]);
        close(report[1]);
        return 0;
    }
    if (pid == 0) {
        close(report[0]);
        l->report_fd = report[1];
        child_exec(run, l, getppid());
    }
    close(report[1]);
    if (run->pgid == 0)
        run->pgid = pid;     /* the first process leads the run's process group */
    setpgid(pid, run->pgid); /* also done by the child: whichever runs first wins */
    ssize_t n;
    do {
        n = read(report[0], &failure, sizeof(failure));
    } while (n < 0 && errno == EINTR);
    close(report[0]);
    if (n != (ssize_t)sizeof(failure)) {
        *pid_p = pid;
        return 1;
    }
    waitpid(pid, NULL, 0);
    if (run->pgid == pid)
        run->pgid = 0;
    if (failure.chdir_failed)
        snprintf(why, why_size, "cannot run '%s' in '%s': %s", l->argv[0], l->wdir,
                 strerror(failure.err));
    else
        snprintf(why, why_size, "cannot run '%s': %s", l->argv[0], strerror(failure.err));
    return -1;
}

/* stdin goes to rank 0 unless it is a terminal we do not own (reading it would stop us). */
static int forward_stdin(void)
{
    if (fcntl(0, F_GETFD) < 0)
        return 0;
    return !isatty(0) || tcgetpgrp(0) == getpgrp();
}

static void pipe_failed(char *why, size_t why_size)
{
    snprintf(why, why_size, "cannot create a pipe: %s", strerror(errno));
}

/* Creates a process's PMI socket and pipes and starts it; on success it is counted alive, its
 * output forwarded and *pmi_fd_p is mpiexec's end of its socket. Returns as fork_exec; on
 * failure nothing is left. */
static int start_proc(run_t *run, launch_t *l, proc_t *p, int *pmi_fd_p, char *why, size_t why_size)
{
    int sv[2], out[2], err[2], in[2] = {run->null_fd, -1}, started = 0;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(why, why_size, "cannot create a socket: %s", strerror(errno));
        return 0;
    }
    if (pipe2(out, O_CLOEXEC) != 0)
        goto err_pipe;
    if (pipe2(err, O_CLOEXEC) != 0) {
        pipe_failed(why, why_size);
        goto err_close_out;
    }
    if (p->job == 0 && p->rank == 0 && forward_stdin() && pipe2(in, O_CLOEXEC) != 0) {
        pipe_failed(why, why_size);
        goto err_close_err;
    }
    l->pmi_fd = sv[1];
    l->in_fd = in[0];
    l->out_fd = out[1];
    l->err_fd = err[1];
    started = fork_exec(run, l, &p->pid, why, why_size);
    if (started <= 0)
        goto err_close_in;
    run->nalive++;
    close(sv[1]);
    close(out[1]);
    close(err[1]);
    if (in[1] >= 0) {
        close(in[0]);
        fcntl(in[1], F_SETFL, O_NONBLOCK);
        mf_input_init(&run->in, 0, in[1]);
    }
    *pmi_fd_p = sv[0];
    mf_output_init(&p->out, out[0], &run->sink_out, p->job, p->rank, run->opt.tag_output);
    mf_output_init(&p->err, err[0], run->sink_err, p->job, p->rank, run->opt.tag_output);
    return 1;

err_close_in:
    if (in[1] >= 0) {
        close(in[0]);
        close(in[1]);
    }
err_close_err:
    close(err[0]);
    close(err[1]);
err_close_out:
    close(out[0]);
    close(out[1]);
err_close_socket:
    close(sv[0]);
    close(sv[1]);
    return started;
err_pipe:
    pipe_failed(why, why_size);
    goto err_close_socket;
}

/* Room for n more processes in the table. */
static int reserve_procs(run_t *run, int n)
{
    if (run->nprocs + n <= run->cap_procs)
        return 1;
    int cap = run->cap_procs > 0 ? run->cap_procs : 16;
    while (cap < run->nprocs + n)
        cap *= 2;
    proc_t **procs = realloc(run->procs, (size_t)cap * sizeof(*procs));
    if (procs == NULL)
        return 0;
    run->procs = procs;
    for (int id = run->cap_procs; id < cap; id++) {
        if ((procs[id] = mf_calloc(1, sizeof(proc_t), "process")) == NULL) {
            run->cap_procs = id;
            return 0;
        }
    }
    run->cap_procs = cap;
    return 1;
}

/* Undoes a job start that failed half-way: its processes are killed and reaped at once (their
 * exit is never judged), and their descriptors closed. */
static void abandon_procs(run_t *run, int first, int *pmi_fds)
{
    for (int id = first; id < run->nprocs; id++) {
        proc_t *p = run->procs[id];
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        run->nalive--;
        if (pmi_fds[id - first] >= 0)
            close(pmi_fds[id - first]);
        close(p->out.fd);
        close(p->err.fd);
        if (p->job == 0 && p->rank == 0)
            mf_input_close(&run->in);
        *p = (proc_t){.pid = 0};
    }
    run->nprocs = first;
}

/* Starts req's commands as one new job (ranks in command order, command c's processes with
 * appnum c, all reported on one node unless ppn says otherwise), puts the preput pairs into
 * its key space and hands the server its sockets. Returns the job's index, or -1 with the
 * reason in why (and *noexec_p set when a program could not be run); then nothing of the job
 * is left. */
static int start_job(run_t *run, const mf_spawn_req_t *req, int ppn, char *why, size_t why_size,
                     int *noexec_p)
{
    int first = run->nprocs, job = -1, *pmi_fds = NULL;
    long long total = 0;
    *noexec_p = 0;
    for (int c = 0; c < req->ncmds; c++)
        total += req->cmds[c].nprocs;
    if (run->nalive + total > MF_MPIEXEC_MAX_PROCS) {
        snprintf(why, why_size,
                 "%lld more processes would exceed mpiexec's limit of %d (%d running)", total,
                 MF_MPIEXEC_MAX_PROCS, run->nalive);
        return -1;
    }
    int size = (int)total;
    if (!reserve_procs(run, size) ||
        (pmi_fds = mf_calloc((size_t)size, sizeof(int), "pmi sockets")) == NULL) {
        snprintf(why, why_size, "out of memory for %d processes", size);
        return -1;
    }
    int per_node = ppn > 0 && ppn < size ? ppn : size;
    for (int c = 0, rank = 0; c < req->ncmds; c++) {
        const mf_spawn_cmd_t *cmd = &req->cmds[c];
        for (int k = 0; k < cmd->nprocs; k++, rank++) {
            int node_first = rank / per_node * per_node;
            launch_t l = {.argv = cmd->argv,
                          .wdir = cmd->wdir,
                          .path = cmd->path,
                          .spawned = req->parent_job >= 0,
                          .rank = rank,
                          .size = size,
                          .node_rank = rank - node_first,
                          .node_size = size - node_first < per_node ? size - node_first : per_node};
            proc_t *p = run->procs[run->nprocs];
            /* a spawned job's number is the server's, set below */
            *p = (proc_t){.job = req->parent_job >= 0 ? -1 : 0, .rank = rank};
            int started = start_proc(run, &l, p, &pmi_fds[rank], why, why_size);
            if (started <= 0) {
                *noexec_p = started < 0;
                goto err_abandon;
            }
            run->nprocs++;
        }
    }
    job = mf_pmi_server_add_job(run->pmi, size, ppn, req->parent_job);
    for (int i = 0; job >= 0 && i < req->npreput; i++) {
        if (mf_pmi_server_put(run->pmi, job, req->preput_keys[i], req->preput_vals[i]) != MF_OK)
            job = -1;
    }
    for (int c = 0, rank = 0; job >= 0 && c < req->ncmds; c++) {
        for (int k = 0; job >= 0 && k < req->cmds[c].nprocs; k++, rank++) {
            proc_t *p = run->procs[first + rank];
            p->job = p->out.job = p->err.job = job;
            if (mf_pmi_server_attach(run->pmi, first + rank, job, rank, c, pmi_fds[rank]) != MF_OK)
                job = -1;
            else
                pmi_fds[rank] = -1; /* the server closes it now */
        }
    }
    if (job < 0) {
        snprintf(why, why_size, "out of memory for a job of %d processes", size);
        goto err_abandon;
    }
    free(pmi_fds);
    return job;

err_abandon:
    abandon_procs(run, first, pmi_fds);
    free(pmi_fds);
    return -1;
}

/* The PMI server's spawn callback: a job started for a process's request. */
static int serve_spawn(void *ctx, const mf_spawn_req_t *req, char *why, size_t why_size)
{
    run_t *run = ctx;
    int noexec;
    if (run->failing) {
        snprintf(why, why_size, "mpiexec is stopping the run");
        return -1;
    }
    return start_job(run, req, 0, why, why_size, &noexec);
}

/* Which descriptor a pollfd entry belongs to: rank r's PMI socket, stdout or stderr. */
enum { SLOT_PMI, SLOT_OUT, SLOT_ERR };

static void add_poll(struct pollfd *pfds, int *slots, int *n, int fd, short events, int slot)
{
    if (fd < 0)
        return;
    pfds[*n] = (struct pollfd){.fd = fd, .events = events};
    slots[(*n)++] = slot;
}

static int poll_timeout(const run_t *run)
{
    long long next = 0, now = mf_now_ms();
    const long long deadlines[] = {run->failing ? 0 : run->deadline_ms,
                                   run->killed_hard || run->nalive == 0 ? 0 : run->kill_at_ms,
                                   run->drain_until_ms > now ? run->drain_until_ms : 0};
    for (size_t i = 0; i < sizeof(deadlines) / sizeof(deadlines[0]); i++) {
        if (deadlines[i] > 0 && (next == 0 || deadlines[i] < next))
            next = deadlines[i];
    }
    if (next == 0)
        return -1;
    return next <= now ? 0 : (int)(next - now < INT_MAX ? next - now : INT_MAX);
}

static int outputs_open(const run_t *run)
{
    for (int id = 0; id < run->nprocs; id++) {
        if (run->procs[id]->out.fd >= 0 || run->procs[id]->err.fd >= 0)
            return 1;
    }
    return 0;
}

/* Whether output is still to be written once the ranks are gone. A reader that stops reading
 * keeps a failed run (the time limit counts the output too) only for the drain grace; then
 * the rest is dropped. */
static int sinks_flushing(run_t *run)
{
    if (mf_sink_pending(&run->sink_out) == 0 && mf_sink_pending(run->sink_err) == 0)
        return 0;
    if (run->failing && run->drain_until_ms > 0 && mf_now_ms() >= run->drain_until_ms) {
        mf_sink_finish(&run->sink_out, 0);
        mf_sink_finish(run->sink_err, 0);
        return 0;
    }
    return 1;
}

/* The descriptor of a process's pipe, or -1 while the sink it feeds is full (backpressure). */
static int output_fd(const mf_output_t *out)
{
    return mf_sink_pending(out->dest) < MF_SINK_HIGH ? out->fd : -1;
}

/* A PMI request may start a spawned job: the process table grows, the entries polled here stay
 * where they are. */
static void serve_ready(run_t *run, struct pollfd *pfds, const int *slots, int n)
{
    for (int i = 0; i < n; i++) {
        if (pfds[i].revents == 0)
            continue;
        int id = slots[i] / 3, kind = slots[i] % 3;
        if (slots[i] == -1)
            handle_signals(run);
        else if (slots[i] == -4)
            mf_sink_write(&run->sink_out);
        else if (slots[i] == -5)
            mf_sink_write(run->sink_err);
        else if (slots[i] == -2)
            mf_input_read(&run->in);
        else if (slots[i] == -3)
            mf_input_write(&run->in);
        else if (kind == SLOT_PMI)
            mf_pmi_server_handle(run->pmi, id);
        else
            mf_output_pump(kind == SLOT_OUT ? &run->procs[id]->out : &run->procs[id]->err);
    }
}

/* The poll set has room for every process; spawns make it grow. */
static int grow_poll_set(run_t *run, struct pollfd **pfds_p, int **slots_p, int *max_p)
{
    int need = 5 + 3 * run->nprocs;
    if (need <= *max_p)
        return 1;
    struct pollfd *pfds = realloc(*pfds_p, (size_t)need * sizeof(*pfds));
    if (pfds != NULL)
        *pfds_p = pfds;
    int *slots = realloc(*slots_p, (size_t)need * sizeof(int));
    if (slots != NULL)
        *slots_p = slots;
    if (pfds == NULL || slots == NULL)
        return 0;
    *max_p = need;
    return 1;
}

static void event_loop(run_t *run)
{
    struct pollfd *pfds = NULL;
    int *slots = NULL, max = 0, ok = 1;
    while ((run->nalive > 0 || (outputs_open(run) && mf_now_ms() < run->drain_until_ms) ||
            sinks_flushing(run))) {
        if (!(ok = grow_poll_set(run, &pfds, &slots, &max))) {
            run_fail(run, 1, "out of memory for %d process(es)", run->nprocs);
            break;
        }
        int n = 0;
        add_poll(pfds, slots, &n, run->sigfd, POLLIN, -1);
        add_poll(pfds, slots, &n, run->in.len == 0 ? run->in.src : -1, POLLIN, -2);
        add_poll(pfds, slots, &n, run->in.len > 0 ? run->in.dest : -1, POLLOUT, -3);
        add_poll(pfds, slots, &n, mf_sink_pending(&run->sink_out) > 0 ? run->sink_out.fd : -1,
                 POLLOUT, -4);
        if (run->sink_err != &run->sink_out)
            add_poll(pfds, slots, &n, mf_sink_pending(run->sink_err) > 0 ? run->sink_err->fd : -1,
                     POLLOUT, -5);
        for (int id = 0; id < run->nprocs; id++) {
            add_poll(pfds, slots, &n, mf_pmi_server_fd(run->pmi, id), POLLIN, 3 * id + SLOT_PMI);
            add_poll(pfds, slots, &n, output_fd(&run->procs[id]->out), POLLIN, 3 * id + SLOT_OUT);
            add_poll(pfds, slots, &n, output_fd(&run->procs[id]->err), POLLIN, 3 * id + SLOT_ERR);
        }
        if (poll(pfds, (nfds_t)n, poll_timeout(run)) < 0 && errno != EINTR) {
            run_fail(run, 1, "poll failed: %s", strerror(errno));
            kill_ranks(run, SIGKILL);
            break;
        }
        serve_ready(run, pfds, slots, n);
        check_adopted(run);
        check_abort(run);
        check_fence(run);
        check_time(run);
        if (run->nalive == 0 && run->drain_until_ms == 0)
            run->drain_until_ms = mf_now_ms() + DRAIN_GRACE_MS;
    }
    if (!ok)
        kill_ranks(run, SIGKILL);
    while (!ok && run->nalive > 0 && waitpid(-1, NULL, 0) > 0)
        run->nalive--;
    /* A stopped run ends with nothing of its group left, even what ignored SIGTERM and outlived
     * the ranks before the grace ran out. */
    if (run->failing && !run->killed_hard)
        kill_ranks(run, SIGKILL);
    free(pfds);
    free(slots);
}

/* Signals arrive through a descriptor so the poll loop sees them like any other event. */
static int setup_signals(run_t *run)
{
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    signal(SIGPIPE, SIG_IGN);
    /* An ignored SIGCHLD inherited from our parent would have the kernel reap the ranks
     * unreported: the job would never end. */
    signal(SIGCHLD, SIG_DFL);
    if (sigprocmask(SIG_BLOCK, &mask, &run->orig_mask) != 0)
        return 0;
    run->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    return run->sigfd >= 0;
}

/* Our stdout and stderr: one sink when both are the same file (2>&1), so that the order of
 * their lines is kept and two sinks never fill one pipe between polls. */
static void setup_sinks(run_t *run)
{
    struct stat out, err;
    mf_sink_init(&run->sink_out, 1);
    mf_sink_init(&run->sink_err_own, 2);
    run->sink_err = &run->sink_err_own;
    if (fstat(1, &out) == 0 && fstat(2, &err) == 0 && out.st_dev == err.st_dev &&
        out.st_ino == err.st_ino)
        run->sink_err = &run->sink_out;
}

static void log_to_sink(void *sink, const char *line, size_t len)
{
    mf_sink_put(sink, line, len);
}

/* Descriptors 0-2 must exist, or the pipes we create would take their numbers. */
static void ensure_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
            exit(1);
    }
}

/* The first job: -n copies of the program. */
static void run_first_job(run_t *run)
{
    mf_spawn_cmd_t cmd = {.nprocs = run->opt.nranks, .argv = run->opt.argv};
    mf_spawn_req_t req = {.parent_job = -1, .ncmds = 1, .nadded = 1, .cmds = &cmd};
    char why[512];
    int noexec;
    if (run->opt.timeout_sec > 0)
        run->deadline_ms = mf_now_ms() + 1000LL * run->opt.timeout_sec;
    if (start_job(run, &req, run->opt.ppn, why, sizeof(why), &noexec) < 0)
        run_fail(run, noexec ? EXIT_NOEXEC : 1, "%s", why);
    event_loop(run);
}

/* --adopt: job 0 is the one process that connected on the descriptor, started by someone else
 * (a singleton that needs a launcher to spawn); the run ends when it and its spawns are gone. */
static void run_adopted(run_t *run)
{
    if (!reserve_procs(run, 1) || mf_pmi_server_add_job(run->pmi, 1, 0, -1) != 0) {
        run_fail(run, 1, "cannot adopt process %d: out of memory", run->opt.adopt_pid);
        return;
    }
    proc_t *p = run->procs[0];
    *p = (proc_t){.pid = run->opt.adopt_pid, .adopted = 1};
    mf_output_init(&p->out, -1, &run->sink_out, 0, 0, 0);
    mf_output_init(&p->err, -1, run->sink_err, 0, 0, 0);
    run->nprocs = 1;
    run->nalive = 1;
    if (mf_pmi_server_attach(run->pmi, 0, 0, 0, 0, run->opt.adopt_fd) != MF_OK) {
        run_fail(run, 1, "cannot adopt process %d: out of memory", run->opt.adopt_pid);
        return;
    }
    event_loop(run);
}

static void options_free(options_t *opt)
{
    for (int i = 0; i < opt->nenv; i++)
        free(opt->env[i]);
    free(opt->env);
}

static void procs_free(run_t *run)
{
    for (int id = 0; id < run->cap_procs; id++)
        free(run->procs[id]);
    free(run->procs);
}

int main(int argc, char **argv)
{
    run_t run = {.sigfd = -1, .in = {.src = -1, .dest = -1}};
    mf_shm_snapshot_t snap;
    ensure_std_fds();
    mf_log_init();
    if (!parse_options(&run.opt, argc, argv)) {
        options_free(&run.opt);
        return EXIT_USAGE;
    }
    run.exit_code = 1;
    setup_sinks(&run);
    if ((run.null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) < 0) {
        fprintf(stderr, "mpiexec: cannot open /dev/null: %s\n", strerror(errno));
        goto err_free_options;
    }
    if (!setup_signals(&run)) {
        fprintf(stderr, "mpiexec: cannot set up signal handling: %s\n", strerror(errno));
        goto err_close_null;
    }
    if (mf_pmi_server_create(run.opt.pmi_versions, serve_spawn, &run, &run.pmi) != MF_OK)
        goto err_close_signals;
    mf_pmi_server_set_universe(run.pmi, run.opt.universe);
    run.exit_code = 0;
    mf_shm_snapshot_take(&snap);
    mf_log_redirect(log_to_sink, run.sink_err);
    if (run.opt.adopt_fd > 0)
        run_adopted(&run);
    else
        run_first_job(&run);
    mf_input_close(&run.in);
    mf_shm_cleanup(&snap, run.sink_err);
    mf_pmi_server_destroy(run.pmi);
    /* The run's output is written out or given up on; what came after it (the cleanup's
     * report, log lines) gets the drain grace. */
    mf_log_redirect(NULL, NULL);
    mf_sink_finish(&run.sink_out, DRAIN_GRACE_MS);
    mf_sink_finish(run.sink_err, DRAIN_GRACE_MS);
    mf_sink_drop(&run.sink_out);
    mf_sink_drop(&run.sink_err_own);
    procs_free(&run);
err_close_signals:
    close(run.sigfd);
err_close_null:
    close(run.null_fd);
err_free_options:
    options_free(&run.opt);
    return run.exit_code;
}
