/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test program for the PMI client and the launchers (ours and hydra): "mf_pmi_probe MODE ..."
 * exercises one behaviour per mode - the key-value exchange between all ranks (with blobs, node
 * attributes and concurrent lookups from several threads), failing in the ways mpiexec must
 * report (exit code, signal, abort, exit without finalize), and plain programs for stdin,
 * output and environment forwarding. Arguments starting with "--token=" are ignored; the test
 * scripts use them to find stray processes. Exits non-zero when a check fails.
 */
#define _GNU_SOURCE
#include "pmi.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define BLOB_BASE   3000 /* bigger than two PMI values */
#define NUM_THREADS 4
#define SAFETY_SEC  30 /* no probe outlives a broken launcher by more than this */

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        if (!(expr))                                                                               \
            check_failed(#expr, __LINE__);                                                         \
    } while (0)

static int my_rank = -1;

static void check_failed(const char *expr, int line)
{
    fprintf(stderr, "mf_pmi_probe rank %d: check failed at line %d: %s\n", my_rank, line, expr);
    exit(1);
}

static mf_pmi_job_t init_or_die(void)
{
    mf_pmi_job_t job;
    CHECK(mf_pmi_init(&job) == MF_OK);
    my_rank = job.rank;
    return job;
}

static void blob_fill(unsigned char *buf, size_t len, int rank)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (unsigned char)(i * 31 + (size_t)rank * 7 + 1);
}

static void check_peer(const mf_pmi_job_t *job, int peer)
{
    char key[32], want[300], value[300];
    unsigned char blob[BLOB_BASE + 64], expect[BLOB_BASE + 64];
    size_t len = 0;
    snprintf(key, sizeof(key), "probe-%d", peer);
    snprintf(want, sizeof(want), "value-of-%d-in-%s", peer, job->kvsname);
    CHECK(mf_pmi_get(peer, key, value, sizeof(value)) == MF_OK);
    CHECK(strcmp(value, want) == 0);
    CHECK(mf_pmi_get(peer, key, value, 4) == MF_ERR_TRUNCATE);
    CHECK(mf_pmi_get_blob(peer, "addr", NULL, 0, &len) == MF_OK);
    CHECK(len == BLOB_BASE + (size_t)peer);
    CHECK(mf_pmi_get_blob(peer, "addr", blob, len - 1, &len) == MF_ERR_TRUNCATE);
    CHECK(mf_pmi_get_blob(peer, "addr", blob, sizeof(blob), &len) == MF_OK);
    CHECK(len == BLOB_BASE + (size_t)peer);
    blob_fill(expect, len, peer);
    CHECK(memcmp(blob, expect, len) == 0);
}

static void *lookup_thread(void *arg)
{
    const mf_pmi_job_t *job = arg;
    for (int round = 0; round < 3; round++) {
        for (int peer = 0; peer < job->size; peer++)
            check_peer(job, (peer + round) % job->size);
    }
    return NULL;
}

static void check_errors(void)
{
    char long_value[2100], value[8];
    memset(long_value, 'x', sizeof(long_value) - 1);
    long_value[sizeof(long_value) - 1] = '\0';
    CHECK(mf_pmi_get(0, "no-such-key", value, sizeof(value)) == MF_ERR_NOT_FOUND);
    CHECK(mf_pmi_put("bad key", "v") == MF_ERR_INVALID);
    CHECK(mf_pmi_put("PMI_reserved", "v") == MF_ERR_INVALID);
    CHECK(mf_pmi_put("k", "has space") == MF_ERR_INVALID);
    CHECK(mf_pmi_put("k", "semi;colon") == MF_ERR_INVALID);
    CHECK(mf_pmi_put("k", "") == MF_ERR_INVALID);
    CHECK(mf_pmi_put("k", long_value) == MF_ERR_INVALID);
    CHECK(mf_pmi_get_node_attr("no-such-attr", value, sizeof(value)) == MF_ERR_NOT_FOUND);
}

static void check_node(const mf_pmi_job_t *job)
{
    int ranks[256], count = 0;
    char value[64], want[64];
    CHECK(job->local_rank >= 0 && job->local_rank < job->local_size);
    CHECK(mf_pmi_get_node_rank_list(ranks, 256, &count) == MF_OK);
    CHECK(count == job->local_size && ranks[job->local_rank] == job->rank);
    if (job->local_size > 1)
        CHECK(mf_pmi_get_node_rank_list(ranks, 1, &count) == MF_ERR_TRUNCATE);
    snprintf(want, sizeof(want), "segment-of-%d", ranks[0]);
    CHECK(mf_pmi_get_node_attr("probe-seg", value, sizeof(value)) == MF_OK);
    CHECK(strcmp(value, want) == 0);
}

/* kvs EXPECTED_VERSION: every rank publishes, fences, and reads everything back. */
static int mode_kvs(int expected_version)
{
    mf_pmi_job_t job = init_or_die(), again;
    char key[32], value[300];
    unsigned char blob[BLOB_BASE + 64];
    pthread_t threads[NUM_THREADS];
    CHECK(mf_pmi_version() == expected_version);
    CHECK(job.size >= 1 && job.rank >= 0 && job.rank < job.size);
    CHECK(job.singleton == (expected_version == 0));
    CHECK(mf_pmi_init(&again) == MF_OK && again.rank == job.rank); /* nested init */
    mf_pmi_finalize();
    snprintf(key, sizeof(key), "probe-%d", job.rank);
    snprintf(value, sizeof(value), "value-of-%d-in-%s", job.rank, job.kvsname);
    CHECK(mf_pmi_put(key, value) == MF_OK);
    blob_fill(blob, BLOB_BASE + (size_t)job.rank, job.rank);
    CHECK(mf_pmi_put_blob("addr", blob, BLOB_BASE + (size_t)job.rank) == MF_OK);
    if (job.local_rank == 0) {
        snprintf(value, sizeof(value), "segment-of-%d", job.rank);
        CHECK(mf_pmi_put_node_attr("probe-seg", value) == MF_OK);
    }
    CHECK(mf_pmi_get(job.rank, key, value, sizeof(value)) == MF_ERR_INVALID); /* no fence yet */
    CHECK(mf_pmi_fence() == MF_OK);
    check_errors();
    for (int t = 0; t < NUM_THREADS; t++)
        CHECK(pthread_create(&threads[t], NULL, lookup_thread, &job) == 0);
    for (int t = 0; t < NUM_THREADS; t++)
        CHECK(pthread_join(threads[t], NULL) == 0);
    check_node(&job);
    CHECK(mf_pmi_fence() == MF_OK);
    printf("rank %d of %d: pmi version %d, local %d of %d\n", job.rank, job.size, mf_pmi_version(),
           job.local_rank, job.local_size);
    if (job.rank == 0)
        printf(" No Errors\n");
    fflush(stdout);
    mf_pmi_finalize();
    return 0;
}

static void sleep_until_killed(void)
{
    for (;;)
        pause();
}

/* Modes where one rank fails and the others block in a fence until mpiexec stops them. */
static int mode_fail(const char *how, int code, int victim)
{
    mf_pmi_job_t job = init_or_die();
    if (job.rank != victim) {
        mf_pmi_fence();
        sleep_until_killed();
    }
    if (strcmp(how, "exit") == 0)
        exit(code);
    if (strcmp(how, "abort") == 0) {
        char msg[64];
        snprintf(msg, sizeof(msg), "probe abort from rank %d", job.rank);
        mf_pmi_abort(code, msg);
    }
    struct rlimit no_core = {0, 0};
    setrlimit(RLIMIT_CORE, &no_core);
    signal(SIGSEGV, SIG_DFL); /* sanitizers install their own handler */
    raise(SIGSEGV);
    return 1;
}

/* Rank 1 ignores SIGTERM, so mpiexec must escalate to SIGKILL; rank 0 fails with code. */
static int mode_stubborn(int code)
{
    mf_pmi_job_t job = init_or_die();
    if (job.rank == 0) {
        usleep(300 * 1000);
        exit(code);
    }
    signal(SIGTERM, SIG_IGN);
    sleep_until_killed();
    return 1;
}

/* Rank 1 starts a child that ignores SIGTERM and outlives it; rank 0 fails with code. Once the
 * ranks are gone, mpiexec must still SIGKILL what is left of the job's process group. */
static int mode_orphan(int code)
{
    mf_pmi_job_t job = init_or_die();
    if (job.rank == 0) {
        usleep(300 * 1000);
        exit(code);
    }
    if (fork() == 0) {
        signal(SIGTERM, SIG_IGN);
        sleep_until_killed();
    }
    sleep_until_killed();
    return 1;
}

/* Rank 0 writes a line of 10000 'a' in two halves 0.3 s apart (mpiexec forwards a line longer
 * than its 4 KiB buffer in pieces); rank 1 writes a short line in between. */
static int mode_longline(void)
{
    const char *rank = getenv("PMI_RANK");
    if (rank == NULL || strcmp(rank, "0") != 0) {
        usleep(100000);
        return printf("short from %s\n", rank != NULL ? rank : "?") < 0;
    }
    char half[5000];
    memset(half, 'a', sizeof(half));
    if (write(1, half, sizeof(half)) != (ssize_t)sizeof(half))
        return 1;
    usleep(300000);
    return write(1, half, sizeof(half)) != (ssize_t)sizeof(half) || write(1, "\n", 1) != 1;
}

static int mode_stdin(void)
{
    char line[256];
    const char *rank = getenv("PMI_RANK");
    if (fgets(line, sizeof(line), stdin) == NULL) {
        printf("rank %s read eof\n", rank);
        return 0;
    }
    line[strcspn(line, "\n")] = '\0';
    printf("rank %s read: %s\n", rank, line);
    return 0;
}

static int mode_env(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *value = getenv(argv[i]);
        printf("rank %s %s=%s\n", getenv("PMI_RANK"), argv[i], value != NULL ? value : "(unset)");
    }
    return 0;
}

static int mode_nofinalize(void)
{
    init_or_die();
    CHECK(mf_pmi_fence() == MF_OK);
    return 0;
}

/* Rank 1 leaves at once, without PMI; the others wait for it in a fence. */
static int mode_early_exit(void)
{
    if (strcmp(getenv("PMI_RANK"), "1") == 0)
        return 0;
    init_or_die();
    mf_pmi_fence();
    sleep_until_killed();
    return 1;
}

/* Leaves a file in /dev/shm as a crashed transport would. */
static int mode_flood(int lines, int then_sleep);

/* Leaves a segment in /dev/shm for mpiexec to remove. With `lines`, then floods stdout, sends
 * mpiexec a malformed PMI request (which it logs) and waits to be killed: mpiexec's own
 * messages then meet a reader that may have stopped reading. */
static int mode_shm(const char *name, int lines)
{
    mf_pmi_job_t job = init_or_die();
    int fd = -1;
    if (job.rank == 0) {
        char path[256];
        snprintf(path, sizeof(path), "/dev/shm/%s", name);
        fd = open(path, O_CREAT | O_RDWR, 0600);
        CHECK(fd >= 0);
    }
    CHECK(mf_pmi_fence() == MF_OK);
    if (lines == 0) {
        if (fd >= 0)
            close(fd);
        mf_pmi_finalize();
        return 0;
    }
    /* Kept open until the rank is killed, as a crashed rank's segment would be: closed, it
     * looked left over to any other job's mpiexec ending meanwhile, which removed it first. */
    mode_flood(lines, 0);
    const char *bad = "xyzzy\n";
    CHECK(write(atoi(getenv("PMI_FD")), bad, strlen(bad)) == (ssize_t)strlen(bad));
    sleep_until_killed();
    return 0;
}

static void raw_send(int fd, const char *text)
{
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
}

static int raw_read(int fd, char *buf, size_t len)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = read(fd, buf + got, len - got);
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    buf[got] = '\0';
    return 1;
}

/* Sends one PMI-1 line and checks that the reply line contains want. */
static void raw_v1(int fd, const char *line, const char *want)
{
    char reply[512];
    size_t len = 0;
    raw_send(fd, line);
    while (len < sizeof(reply) - 1 && raw_read(fd, reply + len, 1) && reply[len] != '\n')
        len++;
    reply[len] = '\0';
    if (strstr(reply, want) == NULL)
        fprintf(stderr, "sent '%s', got '%s', want '%s'\n", line, reply, want);
    CHECK(strstr(reply, want) != NULL);
}

/* Sends one PMI-2 frame body and checks that the reply body contains want. */
static void raw_v2(int fd, const char *body, const char *want)
{
    char frame[512], reply[512];
    snprintf(frame, sizeof(frame), "%6d%s", (int)strlen(body), body);
    raw_send(fd, frame);
    CHECK(raw_read(fd, reply, 6));
    int len = atoi(reply);
    CHECK(len > 0 && len < (int)sizeof(reply) && raw_read(fd, reply, (size_t)len));
    if (strstr(reply, want) == NULL)
        fprintf(stderr, "sent '%s', got '%s', want '%s'\n", body, reply, want);
    CHECK(strstr(reply, want) != NULL);
}

/* Talks to mpiexec's PMI server by hand: odd and malformed requests must get error replies,
 * and a broken PMI-2 frame must cost the connection, never the launcher. */
static int mode_raw(void)
{
    int fd = atoi(getenv("PMI_FD"));
    char byte;
    raw_v1(fd, "cmd=init pmi_version=1 pmi_subversion=1\n", "cmd=response_to_init rc=0");
    raw_v1(fd, "cmd=frobnicate x=1\n", "cmd=frobnicate_result rc=1");
    raw_v1(fd, "no command here\n", "cmd=error rc=1");
    raw_v1(fd, "cmd=put kvsname=k key=PMI_x value=1\n", "rc=1");
    raw_v1(fd, "cmd=get kvsname=k key=missing\n", "cmd=get_result rc=1");
    raw_v1(fd, "cmd=put kvsname=k key=sp value=a\\ b\n", "cmd=put_result rc=0");
    raw_v1(fd, "cmd=get kvsname=k key=sp\n", "value=a\\ b");
    raw_v1(fd, "cmd=get kvsname=k key=PMI_process_mapping\n", "value=(vector,(0,1,1))");
    raw_v1(fd, "cmd=init pmi_version=2 pmi_subversion=0\n", "pmi_version=2");
    raw_v2(fd, "cmd=kvs-get;jobid=k;srcid=0;key=sp;", "found=TRUE;value=a b;");
    raw_v2(fd, "cmd=kvs-put;key=semi;value=x;;y;", "cmd=kvs-put-response;rc=0;");
    raw_v2(fd, "cmd=kvs-get;jobid=k;srcid=0;key=semi;", "value=x;;y;");
    raw_v2(fd, "cmd=kvs-get;jobid=k;srcid=0;key=missing;", "found=FALSE;");
    raw_v2(fd, "cmd=spawn;nprocs=1;", "cmd=spawn-response;rc=1;");
    raw_v2(fd, "cmd=finalize;", "cmd=finalize-response;rc=0;");
    raw_send(fd, "xyzzy!cmd=finalize;"); /* not a length header */
    CHECK(read(fd, &byte, 1) == 0);
    printf("raw protocol checks passed\n");
    return 0;
}

/* Prints `lines` numbered lines of 100 bytes, then ends (`then_sleep` 0) or waits to be
 * killed: more than any pipe holds, for a reader that reads slowly or not at all. */
static int mode_flood(int lines, int then_sleep)
{
    const char *rank = getenv("PMI_RANK");
    for (int i = 0; i < lines; i++)
        printf("rank %s line %07d %.*s\n", rank, i, 80 - (int)strlen(rank),
               "................................................................................");
    fflush(stdout);
    if (then_sleep)
        sleep_until_killed();
    return 0;
}

int main(int argc, char **argv)
{
    int nargs = 0;
    alarm(SAFETY_SEC);
    mf_log_init();
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--token=", 8) != 0)
            argv[++nargs] = argv[i];
    }
    const char *mode = nargs >= 1 ? argv[1] : "";
    int arg2 = nargs >= 2 ? atoi(argv[2]) : 0, arg3 = nargs >= 3 ? atoi(argv[3]) : 0;
    if (strcmp(mode, "kvs") == 0)
        return mode_kvs(arg2);
    if (strcmp(mode, "exit") == 0 || strcmp(mode, "abort") == 0 || strcmp(mode, "signal") == 0)
        return mode_fail(mode, arg2, strcmp(mode, "signal") == 0 ? arg2 : arg3);
    if (strcmp(mode, "stubborn") == 0)
        return mode_stubborn(arg2);
    if (strcmp(mode, "orphan") == 0)
        return mode_orphan(arg2);
    if (strcmp(mode, "sleep") == 0)
        sleep_until_killed();
    if (strcmp(mode, "stdin") == 0)
        return mode_stdin();
    if (strcmp(mode, "hello") == 0)
        return printf("hello from %s\n", getenv("PMI_RANK")) < 0;
    if (strcmp(mode, "longline") == 0)
        return mode_longline();
    if (strcmp(mode, "env") == 0)
        return mode_env(nargs - 1, argv + 2);
    if (strcmp(mode, "nofinalize") == 0)
        return mode_nofinalize();
    if (strcmp(mode, "early-exit") == 0)
        return mode_early_exit();
    if (strcmp(mode, "shm") == 0 && nargs >= 2)
        return mode_shm(argv[2], arg3);
    if (strcmp(mode, "raw") == 0)
        return mode_raw();
    if (strcmp(mode, "flood") == 0)
        return mode_flood(arg2, arg3);
    if (strcmp(mode, "init") == 0) {
        mf_pmi_job_t job;
        return mf_pmi_init(&job) == MF_OK ? 0 : 3;
    }
    fprintf(stderr,
            "usage: mf_pmi_probe kvs|exit|abort|signal|stubborn|orphan|sleep|stdin|hello|env|"
            "nofinalize|early-exit|shm|raw|flood|init [args]\n");
    return 2;
}
