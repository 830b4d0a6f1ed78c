/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher: mpiexec for one host. Starts N copies of a program in one process group, each with
 * a PMI socket (PMI_FD) served by pmi_server.c, forwards stdin to rank 0 and every rank's
 * output line by line, and ends the job as a whole: the first rank that fails (non-zero exit,
 * signal, PMI abort, exit without PMI finalize), a timeout or a signal to mpiexec stops all
 * ranks (SIGTERM, then SIGKILL after a grace period) and sets mpiexec's exit status. See
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
#define EXIT_TIMEOUT   124 /* as timeout(1) */
#define KILL_GRACE_MS  2000
#define DRAIN_GRACE_MS 1000 /* output still held open by the ranks' own children */

typedef struct options {
    int nranks;
    int timeout_sec; /* 0: none */
    int tag_output;
    int pmi_versions;
    int ppn;    /* processes per (simulated) node; 0: all on one node */
    char **env; /* "K=V" for every rank */
    int nenv;
    char **argv; /* the program and its arguments */
} options_t;

typedef struct rank_proc {
    pid_t pid;
    int reaped;
    mf_output_t out, err;
} rank_proc_t;

typedef struct job {
    options_t opt;
    rank_proc_t *ranks;
    int nalive;
    pid_t pgid;
    int sigfd;
    sigset_t orig_mask;
    mf_pmi_server_t *pmi;
    mf_input_t in;
    mf_sink_t sink_out, sink_err_own, *sink_err; /* sink_err: sink_out when 1 and 2 are one file */
    int failing, killed_hard, exit_code;
    long long deadline_ms, kill_at_ms, drain_until_ms; /* 0: not armed */
} job_t;

static void usage(FILE *to)
{
    fprintf(to, "usage: mpiexec -n N [options] program [args...]\n"
                "  -n, -np N             number of processes (default 1)\n"
                "  --env K=V             set K=V for every process (also -env K V, -genv K V)\n"
                "  --timeout S           stop the job after S seconds and exit with 124\n"
                "                        (default: MANIFOLD_MPIEXEC_TIMEOUT, else none)\n"
                "  --tag-output, -l      prefix every output line with [rank]\n"
                "  --pmi 1|2             serve only this PMI version (default: both)\n"
                "  --ppn N               report the ranks as nodes of N processes each (blocks\n"
                "                        of consecutive ranks): tests node-aware code on one host\n"
                "                        (default: MANIFOLD_MPIEXEC_PPN, else one node)\n"
                "  -h, --help            show this help\n"
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
        return (has1 && parse_count(next, 1, &opt->nranks)) ||
               usage_error("%s needs a process count of at least 1", arg);
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
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
        usage(stdout);
        exit(0);
    }
    return usage_error("unknown option '%s'", arg);
}

static int parse_options(options_t *opt, int argc, char **argv)
{
    const char *timeout_env = getenv("MANIFOLD_MPIEXEC_TIMEOUT");
    *opt = (options_t){.nranks = 1, .pmi_versions = MF_PMI_SERVE_V1 | MF_PMI_SERVE_V2};
    if (timeout_env != NULL && timeout_env[0] != '\0' &&
        !parse_count(timeout_env, 1, &opt->timeout_sec))
        return usage_error("MANIFOLD_MPIEXEC_TIMEOUT='%s' is not a number of seconds", timeout_env);
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
    if (i >= argc)
        return usage_error("%s", "no program to run");
    opt->argv = &argv[i];
    return 1;
}

/* Every process gets SIGTERM (or SIGKILL), through the job's process group so that the ranks'
 * own children go too. The group id stays valid while any member is left, reaped ranks or not
 * (an id is not reused while its group exists). */
static void kill_ranks(job_t *job, int sig)
{
    for (int r = 0; r < job->opt.nranks; r++) {
        if (job->ranks[r].pid > 0 && !job->ranks[r].reaped)
            kill(job->ranks[r].pid, sig);
    }
    if (job->pgid > 0)
        kill(-job->pgid, sig);
}

/* The first failure decides the exit status; later deaths are its consequences. */
static void job_fail(job_t *job, int exit_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void job_fail(job_t *job, int exit_code, const char *fmt, ...)
{
    va_list ap;
    if (job->failing)
        return;
    job->failing = 1;
    job->exit_code = exit_code;
    char msg[800];
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* queued behind the ranks' output read so far, which it may explain */
    mf_sink_printf(job->sink_err, "mpiexec: %s\n", msg);
    /* also with no rank left: their children may be */
    kill_ranks(job, SIGTERM);
    job->kill_at_ms = mf_now_ms() + KILL_GRACE_MS;
}

static void check_abort(job_t *job)
{
    const mf_pmi_abort_t *ab = mf_pmi_server_abort_request(job->pmi);
    /* An exit status keeps the code's low byte: a non-zero code whose low byte is 0 (256) must
     * not read as success. */
    int status = ab != NULL ? ab->exit_code & 0xff : 0;
    if (ab != NULL && ab->exit_code != 0 && status == 0)
        status = 1;
    if (ab != NULL)
        job_fail(job, status, "rank %d (pid %d) called abort with code %d: %s", ab->rank,
                 (int)job->ranks[ab->rank].pid, ab->exit_code, ab->message);
}

static void rank_exited(job_t *job, int r, int wstatus)
{
    int pid = (int)job->ranks[r].pid, state = mf_pmi_server_rank_state(job->pmi, r);
    job->ranks[r].reaped = 1;
    job->nalive--;
    /* An abort request may still sit unread in the socket: it explains this exit best. */
    mf_pmi_server_handle(job->pmi, r);
    check_abort(job);
    if (WIFSIGNALED(wstatus)) {
        int sig = WTERMSIG(wstatus);
        job_fail(job, 128 + sig, "rank %d (pid %d) killed by signal %d (%s)", r, pid, sig,
                 strsignal(sig));
    } else if (WEXITSTATUS(wstatus) != 0) {
        job_fail(job, WEXITSTATUS(wstatus), "rank %d (pid %d) exited with code %d", r, pid,
                 WEXITSTATUS(wstatus));
    } else if ((state & MF_PMI_RANK_INITIALIZED) && !(state & MF_PMI_RANK_FINALIZED)) {
        job_fail(job, 1, "rank %d (pid %d) exited with code 0 without calling PMI finalize", r,
                 pid);
    }
}

static void reap_children(job_t *job)
{
    int wstatus;
    pid_t pid;
    while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
        for (int r = 0; r < job->opt.nranks; r++) {
            if (job->ranks[r].pid == pid && !job->ranks[r].reaped)
                rank_exited(job, r, wstatus);
        }
    }
}

static void handle_signals(job_t *job)
{
    struct signalfd_siginfo info;
    while (read(job->sigfd, &info, sizeof(info)) == (ssize_t)sizeof(info)) {
        int sig = (int)info.ssi_signo;
        if (sig == SIGCHLD)
            continue; /* reaped below, once per wake-up */
        if (job->failing && job->nalive > 0) {
            kill_ranks(job, SIGKILL); /* asked twice: no more grace */
            job->killed_hard = 1;
        }
        job_fail(job, 128 + sig, "received %s, stopping %d rank(s)", strsignal(sig), job->nalive);
    }
    reap_children(job);
}

/* A fence needs every rank: if one already left, the others would wait forever. */
static void check_fence(job_t *job)
{
    if (job->failing || mf_pmi_server_barrier_waiting(job->pmi) == 0)
        return;
    for (int r = 0; r < job->opt.nranks; r++) {
        if (job->ranks[r].reaped) {
            job_fail(job, 1, "rank %d (pid %d) exited while other ranks wait for it in a fence", r,
                     (int)job->ranks[r].pid);
            return;
        }
    }
}

static void check_time(job_t *job)
{
    long long now = mf_now_ms();
    if (job->deadline_ms > 0 && now >= job->deadline_ms && !job->failing)
        job_fail(job, EXIT_TIMEOUT, "timeout after %d s, stopping %d rank(s)", job->opt.timeout_sec,
                 job->nalive);
    if (job->kill_at_ms > 0 && now >= job->kill_at_ms && !job->killed_hard) {
        kill_ranks(job, SIGKILL);
        job->killed_hard = 1;
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

/* Runs in the child between fork and exec: only async-signal-safe calls and setenv (mpiexec
 * has a single thread, so the environment lock cannot be held by anyone). */
static void child_exec(job_t *job, int r, int pmi_fd, int in_fd, int out_fd, int err_fd,
                       pid_t parent)
{
    char num[16];
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent)
        _exit(127); /* mpiexec is already gone */
    setpgid(0, job->pgid);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, &job->orig_mask, NULL);
    if (dup2(in_fd, 0) < 0 || dup2(out_fd, 1) < 0 || dup2(err_fd, 2) < 0)
        _exit(127);
    int fd = fcntl(pmi_fd, F_DUPFD, 3); /* a copy without close-on-exec */
    if (fd < 0)
        _exit(127);
    for (int i = 0; i < job->opt.nenv; i++)
        putenv(job->opt.env[i]);
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    unsetenv("MANIFOLD_MPIEXEC_TIMEOUT");
    unsetenv("MANIFOLD_MPIEXEC_PPN");
    tune_memcpy();
    snprintf(num, sizeof(num), "%d", fd);
    setenv("PMI_FD", num, 1);
    snprintf(num, sizeof(num), "%d", r);
    setenv("PMI_RANK", num, 1);
    int ppn = job->opt.ppn > 0 && job->opt.ppn < job->opt.nranks ? job->opt.ppn : job->opt.nranks;
    int node_first = r / ppn * ppn;
    snprintf(num, sizeof(num), "%d", r - node_first);
    setenv("MPI_LOCALRANKID", num, 1);
    snprintf(num, sizeof(num), "%d", job->opt.nranks);
    setenv("PMI_SIZE", num, 1);
    int node_size = job->opt.nranks - node_first < ppn ? job->opt.nranks - node_first : ppn;
    snprintf(num, sizeof(num), "%d", node_size);
    setenv("MPI_LOCALNRANKS", num, 1);
    char host[256] = "localhost";
    gethostname(host, sizeof(host) - 1);
    setenv("PMI_HOSTNAME", host, 1);
    execvp(job->opt.argv[0], job->opt.argv);
    dprintf(2, "mpiexec: cannot run '%s': %s\n", job->opt.argv[0], strerror(errno));
    _exit(127);
}

/* stdin goes to rank 0 unless it is a terminal we do not own (reading it would stop us). */
static int forward_stdin(void)
{
    if (fcntl(0, F_GETFD) < 0)
        return 0;
    return !isatty(0) || tcgetpgrp(0) == getpgrp();
}

static int spawn_rank(job_t *job, int r, int null_fd)
{
    int sv[2], out[2], err[2], in[2] = {null_fd, -1};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
        goto err_report;
    if (pipe2(out, O_CLOEXEC) != 0)
        goto err_close_socket;
    if (pipe2(err, O_CLOEXEC) != 0)
        goto err_close_out;
    if (r == 0 && forward_stdin() && pipe2(in, O_CLOEXEC) != 0)
        goto err_close_err;
    pid_t pid = fork();
    if (pid < 0)
        goto err_close_in;
    if (pid == 0)
        child_exec(job, r, sv[1], in[0], out[1], err[1], getppid());
    if (job->pgid == 0)
        job->pgid = pid;     /* rank 0 leads the job's process group */
    setpgid(pid, job->pgid); /* also done by the child: whichever runs first wins */
    job->ranks[r].pid = pid;
    job->nalive++;
    close(sv[1]);
    close(out[1]);
    close(err[1]);
    if (in[1] >= 0) {
        close(in[0]);
        fcntl(in[1], F_SETFL, O_NONBLOCK);
        mf_input_init(&job->in, 0, in[1]);
    }
    mf_pmi_server_attach(job->pmi, r, sv[0]);
    mf_output_init(&job->ranks[r].out, out[0], &job->sink_out, r, job->opt.tag_output);
    mf_output_init(&job->ranks[r].err, err[0], job->sink_err, r, job->opt.tag_output);
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
err_report:
    job_fail(job, 1, "cannot start rank %d: %s", r, strerror(errno));
    return 0;
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

static int poll_timeout(const job_t *job)
{
    long long next = 0, now = mf_now_ms();
    const long long deadlines[] = {job->failing ? 0 : job->deadline_ms,
                                   job->killed_hard || job->nalive == 0 ? 0 : job->kill_at_ms,
                                   job->drain_until_ms > now ? job->drain_until_ms : 0};
    for (size_t i = 0; i < sizeof(deadlines) / sizeof(deadlines[0]); i++) {
        if (deadlines[i] > 0 && (next == 0 || deadlines[i] < next))
            next = deadlines[i];
    }
    if (next == 0)
        return -1;
    return next <= now ? 0 : (int)(next - now < INT_MAX ? next - now : INT_MAX);
}

static int outputs_open(const job_t *job)
{
    for (int r = 0; r < job->opt.nranks; r++) {
        if (job->ranks[r].out.fd >= 0 || job->ranks[r].err.fd >= 0)
            return 1;
    }
    return 0;
}

/* Whether output is still to be written once the ranks are gone. A reader that stops reading
 * keeps a failed job (the time limit counts the output too) only for the drain grace; then
 * the rest is dropped. */
static int sinks_flushing(job_t *job)
{
    if (mf_sink_pending(&job->sink_out) == 0 && mf_sink_pending(job->sink_err) == 0)
        return 0;
    if (job->failing && job->drain_until_ms > 0 && mf_now_ms() >= job->drain_until_ms) {
        mf_sink_finish(&job->sink_out, 0);
        mf_sink_finish(job->sink_err, 0);
        return 0;
    }
    return 1;
}

/* The descriptor of a rank's pipe, or -1 while the sink it feeds is full (backpressure). */
static int output_fd(const mf_output_t *out)
{
    return mf_sink_pending(out->dest) < MF_SINK_HIGH ? out->fd : -1;
}

static void serve_ready(job_t *job, struct pollfd *pfds, const int *slots, int n)
{
    for (int i = 0; i < n; i++) {
        if (pfds[i].revents == 0)
            continue;
        int r = slots[i] / 3, kind = slots[i] % 3;
        if (slots[i] == -1)
            handle_signals(job);
        else if (slots[i] == -4)
            mf_sink_write(&job->sink_out);
        else if (slots[i] == -5)
            mf_sink_write(job->sink_err);
        else if (slots[i] == -2)
            mf_input_read(&job->in);
        else if (slots[i] == -3)
            mf_input_write(&job->in);
        else if (kind == SLOT_PMI)
            mf_pmi_server_handle(job->pmi, r);
        else
            mf_output_pump(kind == SLOT_OUT ? &job->ranks[r].out : &job->ranks[r].err);
    }
}

static void event_loop(job_t *job)
{
    int max = 5 + 3 * job->opt.nranks;
    struct pollfd *pfds = mf_calloc((size_t)max, sizeof(*pfds), "poll set");
    int *slots = mf_calloc((size_t)max, sizeof(int), "poll slots");
    if (pfds == NULL || slots == NULL) {
        job_fail(job, 1, "out of memory for %d rank(s)", job->opt.nranks);
        max = 0;
    }
    while (max > 0 &&
           (job->nalive > 0 || (outputs_open(job) && mf_now_ms() < job->drain_until_ms) ||
            sinks_flushing(job))) {
        int n = 0;
        add_poll(pfds, slots, &n, job->sigfd, POLLIN, -1);
        add_poll(pfds, slots, &n, job->in.len == 0 ? job->in.src : -1, POLLIN, -2);
        add_poll(pfds, slots, &n, job->in.len > 0 ? job->in.dest : -1, POLLOUT, -3);
        add_poll(pfds, slots, &n, mf_sink_pending(&job->sink_out) > 0 ? job->sink_out.fd : -1,
                 POLLOUT, -4);
        if (job->sink_err != &job->sink_out)
            add_poll(pfds, slots, &n, mf_sink_pending(job->sink_err) > 0 ? job->sink_err->fd : -1,
                     POLLOUT, -5);
        for (int r = 0; r < job->opt.nranks; r++) {
            add_poll(pfds, slots, &n, mf_pmi_server_fd(job->pmi, r), POLLIN, 3 * r + SLOT_PMI);
            add_poll(pfds, slots, &n, output_fd(&job->ranks[r].out), POLLIN, 3 * r + SLOT_OUT);
            add_poll(pfds, slots, &n, output_fd(&job->ranks[r].err), POLLIN, 3 * r + SLOT_ERR);
        }
        if (poll(pfds, (nfds_t)n, poll_timeout(job)) < 0 && errno != EINTR) {
            job_fail(job, 1, "poll failed: %s", strerror(errno));
            kill_ranks(job, SIGKILL);
            break;
        }
        serve_ready(job, pfds, slots, n);
        check_abort(job);
        check_fence(job);
        check_time(job);
        if (job->nalive == 0 && job->drain_until_ms == 0)
            job->drain_until_ms = mf_now_ms() + DRAIN_GRACE_MS;
    }
    while (max == 0 && job->nalive > 0 && waitpid(-1, NULL, 0) > 0)
        job->nalive--;
    /* A stopped job ends with nothing of its group left, even what ignored SIGTERM and outlived
     * the ranks before the grace ran out. */
    if (job->failing && !job->killed_hard)
        kill_ranks(job, SIGKILL);
    free(pfds);
    free(slots);
}

/* Signals arrive through a descriptor so the poll loop sees them like any other event. */
static int setup_signals(job_t *job)
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
    if (sigprocmask(SIG_BLOCK, &mask, &job->orig_mask) != 0)
        return 0;
    job->sigfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
    return job->sigfd >= 0;
}

/* Our stdout and stderr: one sink when both are the same file (2>&1), so that the order of
 * their lines is kept and two sinks never fill one pipe between polls. */
static void setup_sinks(job_t *job)
{
    struct stat out, err;
    mf_sink_init(&job->sink_out, 1);
    mf_sink_init(&job->sink_err_own, 2);
    job->sink_err = &job->sink_err_own;
    if (fstat(1, &out) == 0 && fstat(2, &err) == 0 && out.st_dev == err.st_dev &&
        out.st_ino == err.st_ino)
        job->sink_err = &job->sink_out;
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

static void run_job(job_t *job)
{
    int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null_fd < 0) {
        job_fail(job, 1, "cannot open /dev/null: %s", strerror(errno));
        return;
    }
    if (job->opt.timeout_sec > 0)
        job->deadline_ms = mf_now_ms() + 1000LL * job->opt.timeout_sec;
    for (int r = 0; r < job->opt.nranks && !job->failing; r++)
        spawn_rank(job, r, null_fd);
    close(null_fd);
    event_loop(job);
}

static void options_free(options_t *opt)
{
    for (int i = 0; i < opt->nenv; i++)
        free(opt->env[i]);
    free(opt->env);
}

int main(int argc, char **argv)
{
    job_t job = {.sigfd = -1, .in = {.src = -1, .dest = -1}};
    mf_shm_snapshot_t snap;
    ensure_std_fds();
    mf_log_init();
    if (!parse_options(&job.opt, argc, argv)) {
        options_free(&job.opt);
        return EXIT_USAGE;
    }
    job.exit_code = 1;
    setup_sinks(&job);
    job.ranks = mf_calloc((size_t)job.opt.nranks, sizeof(rank_proc_t), "rank table");
    if (job.ranks == NULL)
        goto err_free_options;
    if (!setup_signals(&job)) {
        fprintf(stderr, "mpiexec: cannot set up signal handling: %s\n", strerror(errno));
        goto err_free_ranks;
    }
    if (mf_pmi_server_create(job.opt.nranks, job.opt.ppn, job.opt.pmi_versions, &job.pmi) != MF_OK)
        goto err_close_signals;
    job.exit_code = 0;
    for (int r = 0; r < job.opt.nranks; r++) {
        mf_output_init(&job.ranks[r].out, -1, &job.sink_out, r, 0);
        mf_output_init(&job.ranks[r].err, -1, job.sink_err, r, 0);
    }
    mf_shm_snapshot_take(&snap);
    mf_log_redirect(log_to_sink, job.sink_err);
    run_job(&job);
    mf_input_close(&job.in);
    mf_shm_cleanup(&snap, job.sink_err);
    mf_pmi_server_destroy(job.pmi);
    /* The job's output is written out or given up on; what came after it (the cleanup's
     * report, log lines) gets the drain grace. */
    mf_log_redirect(NULL, NULL);
    mf_sink_finish(&job.sink_out, DRAIN_GRACE_MS);
    mf_sink_finish(job.sink_err, DRAIN_GRACE_MS);
    mf_sink_drop(&job.sink_out);
    mf_sink_drop(&job.sink_err_own);
err_close_signals:
    close(job.sigfd);
err_free_ranks:
    free(job.ranks);
err_free_options:
    options_free(&job.opt);
    return job.exit_code;
}
