/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test program for the PMI client and the launchers (ours and hydra): "mf_pmi_probe MODE ..."
 * exercises one behaviour per mode - the key-value exchange between all ranks (with blobs, node
 * attributes and concurrent lookups from several threads), failing in the ways mpiexec must
 * report (exit code, signal, abort, exit without finalize), spawn (the probe starts copies of
 * itself as a new job) and the name service, and plain programs for stdin, output and
 * environment forwarding. Arguments starting with "--token=" are ignored; the test
 * scripts use them to find stray processes. Exits non-zero when a check fails.
 */
#define _GNU_SOURCE
#include "pmi.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define BLOB_BASE     3000 /* bigger than two PMI values */
#define NUM_THREADS   4
#define SAFETY_SEC    30 /* no probe outlives a broken launcher by more than this */
#define SPAWN_ODD_ARG "odd arg;with=all\\sorts"

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        if (!(expr))                                                                               \
            check_failed(#expr, __LINE__);                                                         \
    } while (0)

static int my_rank = -1;
static const char *token = "--token=none"; /* passed on to spawned probes */

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

/* Every rank finalizes; rank 0 then exits with `code` at once, the others print a line a
 * moment later and exit 0, or, with `hang`, stay until killed. */
static int mode_finalized_fail(int code, int hang)
{
    mf_pmi_job_t job = init_or_die();
    CHECK(mf_pmi_fence() == MF_OK);
    mf_pmi_finalize();
    if (job.rank == 0)
        exit(code);
    usleep(300 * 1000);
    printf("rank %d finished after finalize\n", job.rank);
    fflush(stdout);
    if (hang)
        sleep_until_killed();
    return 0;
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
    raw_v1(fd, "mcmd=spawn\nnprocs=1\ntotspawns=1\nspawnssofar=1\nendcmd\n",
           "cmd=spawn_result rc=1 msg=spawn\\ needs\\ a\\ program\\ name");
    raw_v1(fd, "cmd=publish_name service=raw-svc port=raw-port\n", "cmd=publish_result rc=0");
    raw_v1(fd, "cmd=lookup_name service=raw-svc\n", "cmd=lookup_result rc=0 port=raw-port");
    raw_v1(fd, "cmd=init pmi_version=2 pmi_subversion=0\n", "pmi_version=2");
    raw_v2(fd, "cmd=name-lookup;name=raw-svc;", "cmd=name-lookup-response;rc=0;port=raw-port;");
    raw_v2(fd, "cmd=name-unpublish;name=raw-svc;", "cmd=name-unpublish-response;rc=0;");
    raw_v2(fd, "cmd=spawn;ncmds=2;subcmd=/bin/true;maxprocs=1;argc=0;",
           "rc=1;errmsg=spawn command 1 of 2 lacks subcmd or maxprocs;");
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

/* The probe's own path (a spawn started in another directory must find it) and directory. */
static void own_path(char *exe, char *dir, size_t size)
{
    ssize_t n = readlink("/proc/self/exe", exe, size - 1);
    CHECK(n > 0);
    exe[n] = '\0';
    snprintf(dir, size, "%s", exe);
    *strrchr(dir, '/') = '\0';
}

/* spawn-parent VERSION [HOST]: rank 0 publishes a name and spawns this program as one job of
 * two commands: two copies by full path (appnum 0), one by bare name found through the "path"
 * info and started in /tmp ("wdir"), with a preput value naming the parent. Info keys the
 * launcher does not know are ignored: "probe-unknown", and "host" when HOST is given (our
 * mpiexec runs everything here; hydra would go there). */
static int mode_spawn_parent(const char *version, const char *host)
{
    mf_pmi_job_t job = init_or_die();
    char exe[PATH_MAX], dir[PATH_MAX], preput[300];
    CHECK(!job.spawned);
    if (job.rank == 0) {
        own_path(exe, dir, sizeof(exe));
        /* spaces and ';' travel to our mpiexec (hydra's PMI-2 would cut at the ';') */
        const char *argv[] = {"spawn-child", version, token, SPAWN_ODD_ARG};
        const char *keys[] = {"path", "wdir", "probe-unknown", "host"};
        const char *vals[] = {dir, "/tmp", "x", host};
        const mf_pmi_spawn_cmd_t cmds[2] = {
            {.command = exe, .argc = host != NULL ? 4 : 3, .argv = argv, .maxprocs = 2},
            {.command = "mf_pmi_probe",
             .argc = 3,
             .argv = argv,
             .maxprocs = 1,
             .ninfo = host != NULL ? 4 : 3,
             .info_keys = keys,
             .info_vals = vals}};
        const char *preput_key[] = {"probe-parent"}, *preput_val[] = {preput};
        snprintf(preput, sizeof(preput), "from-%s", job.kvsname);
        CHECK(mf_pmi_publish_name("probe-parent-svc", job.kvsname) == MF_OK);
        CHECK(mf_pmi_spawn(2, cmds, 1, preput_key, preput_val) == MF_OK);
    }
    CHECK(mf_pmi_fence() == MF_OK);
    printf("parent rank %d of %d spawned\n", job.rank, job.size);
    mf_pmi_finalize();
    return 0;
}

/* spawn-child VERSION [ARG]: what a spawned probe is told (ARG: as the parent sent it), and a
 * key exchange among the children. */
static int mode_spawn_child(const char *version, const char *odd_arg)
{
    mf_pmi_job_t job = init_or_die();
    char key[32], value[300], want[300], port[300], cwd[PATH_MAX];
    const char *flag = getenv("PMI_SPAWNED"), *env = getenv("PROBE_ENV");
    CHECK(job.spawned == 1 && flag != NULL && strcmp(flag, "1") == 0);
    CHECK(mf_pmi_version() == atoi(version));
    CHECK(odd_arg == NULL || strcmp(odd_arg, SPAWN_ODD_ARG) == 0);
    CHECK(job.size == 3 && job.appnum == (job.rank < 2 ? 0 : 1));
    CHECK(getcwd(cwd, sizeof(cwd)) != NULL);
    CHECK(job.rank < 2 || strcmp(cwd, "/tmp") == 0);
    snprintf(key, sizeof(key), "child-%d", job.rank);
    snprintf(value, sizeof(value), "value-of-%d-in-%s", job.rank, job.kvsname);
    CHECK(mf_pmi_put(key, value) == MF_OK);
    CHECK(mf_pmi_fence() == MF_OK);
    for (int peer = 0; peer < job.size; peer++) {
        snprintf(key, sizeof(key), "child-%d", peer);
        snprintf(want, sizeof(want), "value-of-%d-in-%s", peer, job.kvsname);
        CHECK(mf_pmi_get(peer, key, value, sizeof(value)) == MF_OK && strcmp(value, want) == 0);
    }
    /* the preput value and the published name both carry the parent's job id */
    CHECK(mf_pmi_get(-1, "probe-parent", value, sizeof(value)) == MF_OK);
    CHECK(strncmp(value, "from-", 5) == 0 && strcmp(value + 5, job.kvsname) != 0);
    CHECK(mf_pmi_lookup_name("probe-parent-svc", port, sizeof(port)) == MF_OK);
    CHECK(strcmp(port, value + 5) == 0);
    CHECK(mf_pmi_fence() == MF_OK);
    printf("child rank %d of %d appnum %d preput %s env %s arg %s\n", job.rank, job.size,
           job.appnum, value, env != NULL ? env : "(unset)", odd_arg != NULL ? odd_arg : "(none)");
    mf_pmi_finalize();
    return 0;
}

static mf_status_t spawn_one(const char *command, int maxprocs, int ninfo, const char **keys,
                             const char **vals)
{
    const char *argv[] = {"sleep", token};
    mf_pmi_spawn_cmd_t cmd = {.command = command,
                              .argc = 2,
                              .argv = argv,
                              .maxprocs = maxprocs,
                              .ninfo = ninfo,
                              .info_keys = keys,
                              .info_vals = vals};
    return mf_pmi_spawn(1, &cmd, 0, NULL, NULL);
}

/* spawn-errors: spawns that must fail, each answered with an error while the job goes on.
 * What would start by mistake sleeps with our token, which the test looks for. */
static int mode_spawn_errors(void)
{
    mf_pmi_job_t job = init_or_die();
    char exe[PATH_MAX], dir[PATH_MAX];
    own_path(exe, dir, sizeof(exe));
    if (job.rank == 0) {
        const char *argv[] = {"sleep", token}, *bad_argv[] = {"two\nlines"};
        const char *wdir_key[] = {"wdir"}, *wdir_val[] = {"/nonexistent-mf-dir"};
        const mf_pmi_spawn_cmd_t half[2] = {
            {.command = exe, .argc = 2, .argv = argv, .maxprocs = 2},
            {.command = "/nonexistent/mf-no-such-program", .argc = 2, .argv = argv, .maxprocs = 1}};
        mf_pmi_spawn_cmd_t bad = {.command = exe, .argc = 1, .argv = bad_argv, .maxprocs = 1};
        CHECK(spawn_one("/nonexistent/mf-no-such-program", 1, 0, NULL, NULL) == MF_ERR_OTHER);
        CHECK(spawn_one("mf-no-such-program-in-path", 1, 0, NULL, NULL) == MF_ERR_OTHER);
        CHECK(mf_pmi_spawn(2, half, 0, NULL, NULL) == MF_ERR_OTHER); /* the first command's go */
        CHECK(spawn_one(exe, 1, 1, wdir_key, wdir_val) == MF_ERR_OTHER);
        CHECK(spawn_one(exe, 5000, 0, NULL, NULL) == MF_ERR_OTHER); /* over mpiexec's limit */
        CHECK(spawn_one(exe, 0, 0, NULL, NULL) == MF_ERR_INVALID);
        CHECK(spawn_one("", 1, 0, NULL, NULL) == MF_ERR_INVALID);
        if (mf_pmi_version() == 1) /* a newline ends a value of PMI-1's spawn */
            CHECK(mf_pmi_spawn(1, &bad, 0, NULL, NULL) == MF_ERR_INVALID);
        const char *pk[] = {"bad key"}, *pv[] = {"v"};
        CHECK(mf_pmi_spawn(1, &half[0], 1, pk, pv) == MF_ERR_INVALID);
    }
    CHECK(mf_pmi_fence() == MF_OK);
    printf("rank %d: spawn errors checked\n", job.rank);
    mf_pmi_finalize();
    return 0;
}

/* spawn-fail CODE: rank 0 spawns two probes of which the second exits with CODE after PMI
 * init; mpiexec must stop everything and say which process it was. */
static int mode_spawn_fail(const char *code)
{
    mf_pmi_job_t job = init_or_die();
    char exe[PATH_MAX], dir[PATH_MAX];
    own_path(exe, dir, sizeof(exe));
    if (job.rank == 0) {
        const char *argv[] = {"exit", code, "1", token};
        mf_pmi_spawn_cmd_t cmd = {.command = exe, .argc = 4, .argv = argv, .maxprocs = 2};
        CHECK(mf_pmi_spawn(1, &cmd, 0, NULL, NULL) == MF_OK);
    }
    mf_pmi_fence();
    sleep_until_killed();
    return 1;
}

/* spawn-run MODE ARGS...: rank 0 spawns one probe running MODE ARGS, and the job ends. */
static int mode_spawn_run(int argc, char **argv)
{
    mf_pmi_job_t job = init_or_die();
    char exe[PATH_MAX], dir[PATH_MAX];
    const char *args[16];
    CHECK(argc < 15);
    own_path(exe, dir, sizeof(exe));
    for (int i = 0; i < argc; i++)
        args[i] = argv[i];
    args[argc] = token;
    mf_pmi_spawn_cmd_t cmd = {.command = exe, .argc = argc + 1, .argv = args, .maxprocs = 1};
    if (job.rank == 0)
        CHECK(mf_pmi_spawn(1, &cmd, 0, NULL, NULL) == MF_OK);
    CHECK(mf_pmi_fence() == MF_OK);
    mf_pmi_finalize();
    return 0;
}

/* A barrier everywhere: hydra's PMI-2 fence returns at once (its lookups wait for the key
 * instead), so every rank also reads every other rank's key for this step. */
static void sync_all(const mf_pmi_job_t *job, int step)
{
    char key[32], value[32];
    snprintf(key, sizeof(key), "sync-%d-%d", step, job->rank);
    CHECK(mf_pmi_put(key, "here") == MF_OK);
    CHECK(mf_pmi_fence() == MF_OK);
    for (int peer = 0; peer < job->size; peer++) {
        snprintf(key, sizeof(key), "sync-%d-%d", step, peer);
        CHECK(mf_pmi_get(peer, key, value, sizeof(value)) == MF_OK);
    }
}

/* names: publish, lookup and unpublish across the ranks of one job (at least 3). */
static int mode_names(void)
{
    mf_pmi_job_t job = init_or_die();
    char port[64], small[4];
    CHECK(job.size >= 3);
    CHECK(mf_pmi_lookup_name("probe-no-such-service", port, sizeof(port)) == MF_ERR_NOT_FOUND);
    CHECK(mf_pmi_publish_name("probe service", "p") == MF_ERR_INVALID);
    CHECK(mf_pmi_publish_name("probe-svc-bad-port", "a;b") == MF_ERR_INVALID);
    if (job.rank == 0)
        CHECK(mf_pmi_publish_name("probe-svc", "port-of-0") == MF_OK);
    sync_all(&job, 1);
    if (job.rank == 1) {
        CHECK(mf_pmi_lookup_name("probe-svc", port, sizeof(port)) == MF_OK);
        CHECK(strcmp(port, "port-of-0") == 0);
        CHECK(mf_pmi_lookup_name("probe-svc", small, sizeof(small)) == MF_ERR_TRUNCATE);
        CHECK(mf_pmi_publish_name("probe-svc", "port-of-1") == MF_ERR_INVALID); /* exists */
    }
    sync_all(&job, 2);
    if (job.rank == 2) { /* anyone may unpublish */
        CHECK(mf_pmi_unpublish_name("probe-svc") == MF_OK);
        CHECK(mf_pmi_unpublish_name("probe-svc") == MF_ERR_NOT_FOUND);
    }
    sync_all(&job, 3);
    CHECK(mf_pmi_lookup_name("probe-svc", port, sizeof(port)) == MF_ERR_NOT_FOUND);
    sync_all(&job, 4);
    if (job.rank == 0)
        printf("name service checks passed\n");
    mf_pmi_finalize();
    return 0;
}

/* spawn-late (run with MANIFOLD_CONNECT_TIMEOUT=1 under a launcher that answers the spawn only
 * later, slurm_pmi_server.py): rank 0's spawn fails after the time limit instead of waiting
 * for ever, a second one is refused while the first is unanswered, and the late answer, which
 * comes before the next fence's, is dropped: the fence and the key space still work. */
static int mode_spawn_late(void)
{
    CHECK(mf_params_load() == MF_OK);
    mf_pmi_job_t job = init_or_die();
    char key[32], value[64], want[64];
    const char *argv[] = {"hello"};
    mf_pmi_spawn_cmd_t cmd = {
        .command = "/no/such/program", .argc = 1, .argv = argv, .maxprocs = 1};
    if (job.rank == 0) {
        uint64_t start = mf_now_ns();
        CHECK(mf_pmi_spawn(1, &cmd, 0, NULL, NULL) == MF_ERR_OTHER);
        CHECK(mf_now_ns() - start >= 900000000u); /* waited for the limit, 1 s */
        CHECK(mf_pmi_spawn(1, &cmd, 0, NULL, NULL) == MF_ERR_OTHER);
    }
    snprintf(key, sizeof(key), "late-%d", job.rank);
    snprintf(value, sizeof(value), "value-%d", job.rank);
    CHECK(mf_pmi_put(key, value) == MF_OK);
    CHECK(mf_pmi_fence() == MF_OK);
    int peer = (job.rank + 1) % job.size;
    snprintf(key, sizeof(key), "late-%d", peer);
    snprintf(want, sizeof(want), "value-%d", peer);
    CHECK(mf_pmi_get(peer, key, value, sizeof(value)) == MF_OK && strcmp(value, want) == 0);
    CHECK(mf_pmi_fence() == MF_OK);
    if (job.rank == 0)
        printf("late spawn answer checks passed\n");
    mf_pmi_finalize();
    return 0;
}

/* dyn-singleton: without a launcher, and without an mpiexec next to the program to start (the
 * probe links the PMI layer itself), spawn and the name service are unsupported. */
static int mode_dyn_singleton(void)
{
    mf_pmi_job_t job = init_or_die();
    char port[64];
    const char *argv[] = {"hello"};
    mf_pmi_spawn_cmd_t cmd = {.command = "/bin/true", .argc = 1, .argv = argv, .maxprocs = 1};
    CHECK(job.singleton && !job.spawned);
    CHECK(mf_pmi_spawn(1, &cmd, 0, NULL, NULL) == MF_ERR_UNSUPPORTED);
    CHECK(mf_pmi_publish_name("probe-svc", "p") == MF_ERR_UNSUPPORTED);
    CHECK(mf_pmi_lookup_name("probe-svc", port, sizeof(port)) == MF_ERR_UNSUPPORTED);
    CHECK(mf_pmi_unpublish_name("probe-svc") == MF_ERR_UNSUPPORTED);
    printf("singleton spawn and names unsupported\n");
    mf_pmi_finalize();
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
        else
            token = argv[i];
    }
    const char *mode = nargs >= 1 ? argv[1] : "";
    int arg2 = nargs >= 2 ? atoi(argv[2]) : 0, arg3 = nargs >= 3 ? atoi(argv[3]) : 0;
    if (strcmp(mode, "kvs") == 0)
        return mode_kvs(arg2);
    if (strcmp(mode, "exit") == 0 || strcmp(mode, "abort") == 0 || strcmp(mode, "signal") == 0)
        return mode_fail(mode, arg2, strcmp(mode, "signal") == 0 ? arg2 : arg3);
    if (strcmp(mode, "finalized-fail") == 0 || strcmp(mode, "finalized-hang") == 0)
        return mode_finalized_fail(arg2, strcmp(mode, "finalized-hang") == 0);
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
    if (strcmp(mode, "spawn-parent") == 0 && nargs >= 2)
        return mode_spawn_parent(argv[2], nargs >= 3 ? argv[3] : NULL);
    if (strcmp(mode, "spawn-child") == 0 && nargs >= 2)
        return mode_spawn_child(argv[2], nargs >= 3 ? argv[3] : NULL);
    if (strcmp(mode, "spawn-errors") == 0)
        return mode_spawn_errors();
    if (strcmp(mode, "spawn-fail") == 0 && nargs >= 2)
        return mode_spawn_fail(argv[2]);
    if (strcmp(mode, "spawn-run") == 0 && nargs >= 2)
        return mode_spawn_run(nargs - 1, argv + 2);
    if (strcmp(mode, "names") == 0)
        return mode_names();
    if (strcmp(mode, "spawn-late") == 0)
        return mode_spawn_late();
    if (strcmp(mode, "dyn-singleton") == 0)
        return mode_dyn_singleton();
    if (strcmp(mode, "init") == 0) {
        mf_pmi_job_t job;
        return mf_pmi_init(&job) == MF_OK ? 0 : 3;
    }
    fprintf(stderr,
            "usage: mf_pmi_probe kvs|exit|abort|signal|stubborn|orphan|sleep|stdin|hello|env|"
            "nofinalize|early-exit|shm|raw|flood|spawn-parent|spawn-child|spawn-errors|"
            "spawn-fail|spawn-run|names|spawn-late|dyn-singleton|init [args]\n");
    return 2;
}
