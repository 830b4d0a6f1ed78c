/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Common code of the point-to-point benchmarks (see bench_util.h): option parsing, message
 * sizes and iteration counts, statistics, buffers with a checkable pattern, and JSON output.
 * Only standard MPI calls are used so the same source builds with any MPI.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mpi.h>
#include <sys/mman.h>
#include <unistd.h>

#define MF_BENCH_MIN_ITERS 4

void mf_bench_abort(void)
{
    /* Some MPIs return from MPI_Abort and leave the kill to the launcher; never go on. */
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

int mf_bench_init(int *argc, char ***argv, const char *name)
{
    int rank;
    int nprocs;

    mf_bench_mpi_ok(MPI_Init(argc, argv), "MPI_Init");
    mf_bench_mpi_ok(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    mf_bench_mpi_ok(MPI_Comm_size(MPI_COMM_WORLD, &nprocs), "MPI_Comm_size");
    if (nprocs == 2)
        return rank;
    if (rank == 0)
        fprintf(stderr, "%s: needs exactly 2 processes (run with -n 2), got %d\n", name, nprocs);
    mf_bench_mpi_ok(MPI_Finalize(), "MPI_Finalize");
    return -1;
}

static void print_usage(const char *name, const mf_bench_opts_t *opts)
{
    printf("usage: %s [options]   (run with exactly 2 processes)\n"
           "  --min BYTES     smallest message size (default %zu; k/m suffixes allowed)\n"
           "  --max BYTES     largest message size (default %zu)\n"
           "  --iters N       timed iterations for small messages (default %d)\n"
           "  --reps N        timed repetitions per size, median reported (default %d)\n"
           "  --warmup N      untimed, data-checked iterations per size (default %d)\n"
           "  --window N      messages in flight per round, windowed benchmarks (default %d)\n"
           "  --recv-buffers N  distinct receive buffers a window cycles through (default: one\n"
           "                  per message; 1 receives every message into one buffer, as\n"
           "                  ucx_perftest and osu_bw do, which keeps it in cache)\n"
           "  --json FILE     also write all results as one JSON document to FILE\n",
           name, opts->min_size, opts->max_size, opts->iters, opts->reps, opts->warmup,
           opts->window);
}

int mf_bench_parse_size(const char *text, size_t *size_p)
{
    char *end;
    unsigned long long value;
    unsigned long long scale = 1;

    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    value = strtoull(text, &end, 10);
    if (errno != 0)
        return -1;
    if (*end == 'k' || *end == 'K')
        scale = 1024;
    else if (*end == 'm' || *end == 'M')
        scale = 1024 * 1024;
    if (scale != 1)
        end++;
    if (*end != '\0' || value > INT_MAX / scale)
        return -1;
    *size_p = (size_t)(value * scale);
    return 0;
}

static int parse_positive(const char *text, int *value_p)
{
    char *end;
    long value;

    errno = 0;
    value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 1 || value > INT_MAX)
        return -1;
    *value_p = (int)value;
    return 0;
}

static int parse_count(const char *text, int *value_p)
{
    if (strcmp(text, "0") == 0) {
        *value_p = 0;
        return 0;
    }
    return parse_positive(text, value_p);
}

/* Applies one "--option value" pair. Returns 0, or -1 if the option or its value is bad. */
static int apply_option(const char *option, const char *value, mf_bench_opts_t *opts)
{
    if (strcmp(option, "--min") == 0)
        return mf_bench_parse_size(value, &opts->min_size);
    if (strcmp(option, "--max") == 0)
        return mf_bench_parse_size(value, &opts->max_size);
    if (strcmp(option, "--iters") == 0)
        return parse_positive(value, &opts->iters);
    if (strcmp(option, "--reps") == 0)
        return parse_positive(value, &opts->reps);
    if (strcmp(option, "--warmup") == 0)
        return parse_count(value, &opts->warmup);
    if (strcmp(option, "--window") == 0)
        return parse_positive(value, &opts->window);
    if (strcmp(option, "--recv-buffers") == 0)
        return parse_positive(value, &opts->recv_buffers);
    if (strcmp(option, "--json") == 0) {
        opts->json_path = value;
        return 0;
    }
    return -1;
}

mf_bench_args_t mf_bench_parse_args(int argc, char **argv, const char *name, int rank,
                                    mf_bench_opts_t *opts)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            if (rank == 0)
                print_usage(name, opts);
            return MF_BENCH_ARGS_HELP;
        }
        if (i + 1 >= argc || apply_option(argv[i], argv[i + 1], opts) != 0) {
            if (rank == 0)
                fprintf(stderr, "%s: bad option or value '%s' (try --help)\n", name, argv[i]);
            return MF_BENCH_ARGS_BAD;
        }
        i++;
    }
    if (opts->recv_buffers > opts->window) {
        if (rank == 0)
            fprintf(stderr, "%s: --recv-buffers %d is more than --window %d\n", name,
                    opts->recv_buffers, opts->window);
        return MF_BENCH_ARGS_BAD;
    }
    if (opts->recv_buffers == 0)
        opts->recv_buffers = opts->window;
    if (opts->min_size > opts->max_size) {
        if (rank == 0)
            fprintf(stderr, "%s: --min %zu is larger than --max %zu\n", name, opts->min_size,
                    opts->max_size);
        return MF_BENCH_ARGS_BAD;
    }
    return MF_BENCH_ARGS_RUN;
}

/* Running out of memory on one rank would leave the other waiting forever: abort the job. */
static void *alloc_or_abort(size_t n, size_t size, const char *name)
{
    void *p = calloc(n > 0 ? n : 1, size);

    if (p == NULL) {
        fprintf(stderr, "%s: out of memory\n", name);
        mf_bench_abort();
    }
    return p;
}

static size_t next_size(size_t size)
{
    return size == 0 ? 1 : size * 2;
}

int mf_bench_sizes(const mf_bench_opts_t *opts, size_t **sizes_p)
{
    int count = 0;
    size_t *sizes;

    for (size_t s = opts->min_size; s <= opts->max_size; s = next_size(s))
        count++;
    sizes = alloc_or_abort((size_t)count, sizeof(*sizes), "bench");
    count = 0;
    for (size_t s = opts->min_size; s <= opts->max_size; s = next_size(s))
        sizes[count++] = s;
    *sizes_p = sizes;
    return count;
}

int mf_bench_iters_for_size(const mf_bench_opts_t *opts, size_t size, int msgs_per_iter)
{
    size_t bytes_per_iter = size * (size_t)msgs_per_iter;
    size_t iters;

    if (bytes_per_iter == 0)
        return opts->iters;
    iters = opts->byte_budget / bytes_per_iter;
    if (iters > (size_t)opts->iters)
        iters = (size_t)opts->iters;
    if (iters < MF_BENCH_MIN_ITERS)
        iters = MF_BENCH_MIN_ITERS;
    return (int)iters;
}

int mf_bench_warmup_for_size(const mf_bench_opts_t *opts, int iters)
{
    int warmup = iters / 4 > 0 ? iters / 4 : 1;

    return warmup < opts->warmup ? warmup : opts->warmup;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a;
    double y = *(const double *)b;

    return (x > y) - (x < y);
}

void mf_bench_summarize(double *values, int n, mf_bench_result_t *result)
{
    qsort(values, (size_t)n, sizeof(*values), compare_doubles);
    result->min = values[0];
    result->max = values[n - 1];
    if (n % 2 == 1)
        result->median = values[n / 2];
    else
        result->median = (values[n / 2 - 1] + values[n / 2]) / 2.0;
}

void *mf_bench_alloc(size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    void *buf = NULL;

    if (size == 0)
        size = 1;
    if (page <= 0)
        page = 4096;
    if (posix_memalign(&buf, (size_t)page, size) != 0) {
        fprintf(stderr, "bench: cannot allocate %zu bytes\n", size);
        mf_bench_abort();
    }
    memset(buf, 0, size);
    return buf;
}

/* Mixes the offset so that a shifted, truncated or repeated block does not match. */
static uint8_t pattern_byte(size_t offset, unsigned seed)
{
    return (uint8_t)((offset * 131u + seed * 7u + 1u) ^ (offset >> 11));
}

void mf_bench_fill(void *buf, size_t size, unsigned seed)
{
    uint8_t *bytes = buf;

    for (size_t i = 0; i < size; i++)
        bytes[i] = pattern_byte(i, seed);
}

void mf_bench_verify(const void *buf, size_t size, unsigned seed, const char *name)
{
    const uint8_t *bytes = buf;

    for (size_t i = 0; i < size; i++) {
        if (bytes[i] != pattern_byte(i, seed)) {
            fprintf(stderr,
                    "%s: wrong data in a %zu-byte message at byte %zu: got %u, expected %u\n", name,
                    size, i, bytes[i], pattern_byte(i, seed));
            mf_bench_abort();
        }
    }
}

void mf_bench_mpi_ok(int rc, const char *call)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (rc == MPI_SUCCESS)
        return;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof(text), "error code %d", rc);
    fprintf(stderr, "bench: %s failed: %s\n", call, text);
    mf_bench_abort();
}

void mf_bench_print_json_string(FILE *out, const char *s)
{
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c == '\n')
            fputs("\\n", out);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
}

void mf_bench_library_version(char *text)
{
    int len = 0;
    size_t n;

    if (MPI_Get_library_version(text, &len) != MPI_SUCCESS || len <= 0) {
        snprintf(text, MPI_MAX_LIBRARY_VERSION_STRING, "unknown");
        return;
    }
    /* The length excludes the terminator, which the standard asks for but some forget. */
    text[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    n = strlen(text);
    while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
        text[--n] = '\0';
}

static void print_result_fields(FILE *out, const mf_bench_result_t *result)
{
    fprintf(out, "\"size\": %zu, \"iters\": %d, \"median\": %.6g, \"min\": %.6g, \"max\": %.6g",
            result->size, result->iters, result->median, result->min, result->max);
    if (result->placement_ns > 0)
        fprintf(out, ", \"placement_ns\": %.0f", result->placement_ns);
}

void mf_bench_print_line(const mf_bench_info_t *info, const mf_bench_opts_t *opts,
                         const mf_bench_result_t *result)
{
    printf("{\"benchmark\": \"%s\", \"unit\": \"%s\", \"reps\": %d, ", info->name, info->unit,
           opts->reps);
    if (info->uses_window)
        printf("\"window\": %d, \"recv_buffers\": %d, ", opts->window, opts->recv_buffers);
    print_result_fields(stdout, result);
    printf("}\n");
    fflush(stdout);
}

void mf_bench_print_json_header(FILE *out, const mf_bench_info_t *info, const mf_bench_opts_t *opts)
{
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    int version = 0;
    int subversion = 0;

    mf_bench_library_version(library);
    mf_bench_mpi_ok(MPI_Get_version(&version, &subversion), "MPI_Get_version");
    fprintf(out, "{\n  \"benchmark\": \"%s\",\n  \"metric\": \"%s\",\n  \"unit\": \"%s\",\n",
            info->name, info->metric, info->unit);
    fprintf(out, "  \"mpi_version\": \"%d.%d\",\n  \"library\": \"", version, subversion);
    mf_bench_print_json_string(out, library);
    fprintf(out, "\",\n  \"nprocs\": 2,\n  \"reps\": %d,\n  \"warmup\": %d,\n", opts->reps,
            opts->warmup);
    if (info->uses_window)
        fprintf(out, "  \"window\": %d,\n  \"recv_buffers\": %d,\n", opts->window,
                opts->recv_buffers);
}

int mf_bench_write_json(const mf_bench_info_t *info, const mf_bench_opts_t *opts,
                        const mf_bench_result_t *results, int nresults)
{
    FILE *out;

    if (opts->json_path == NULL)
        return 0;
    out = fopen(opts->json_path, "w");
    if (out == NULL) {
        fprintf(stderr, "%s: cannot write %s: %s\n", info->name, opts->json_path, strerror(errno));
        return -1;
    }
    mf_bench_print_json_header(out, info, opts);
    fprintf(out, "  \"results\": [\n");
    for (int i = 0; i < nresults; i++) {
        fprintf(out, "    {");
        print_result_fields(out, &results[i]);
        fprintf(out, "}%s\n", i + 1 < nresults ? "," : "");
    }
    fprintf(out, "  ]\n}\n");
    if (fclose(out) != 0) {
        fprintf(stderr, "%s: cannot write %s: %s\n", info->name, opts->json_path, strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- the placement probe ----------------------------------------------------------------- */

#define PLACEMENT_TRIPS 64
#define PLACEMENT_SEG   4096
#define PLACEMENT_SPINS 4096 /* then yield at every check: a shared core must let the peer run */

static int placement_state; /* 0: not set up yet, 1: usable, -1: not two ranks of one host */
static _Atomic uint64_t *placement_line;
static uint64_t placement_seq; /* the last value written; both ranks count alike */

/* Maps one line both ranks see: rank 0 creates the segment, rank 1 opens it by name, and it is
 * unlinked as soon as both hold it, so nothing is left behind. Returns 1 or -1 on every rank. */
static int placement_setup(MPI_Comm comm)
{
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    char host0[MPI_MAX_PROCESSOR_NAME] = "";
    char name[64] = "";
    int size, rank, len, ok = 1, all = 0, fd = -1;
    void *map = MAP_FAILED;

    mf_bench_mpi_ok(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    if (size != 2)
        return -1;
    mf_bench_mpi_ok(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    mf_bench_mpi_ok(MPI_Get_processor_name(host, &len), "MPI_Get_processor_name");
    memcpy(host0, host, sizeof(host));
    mf_bench_mpi_ok(MPI_Bcast(host0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, comm), "MPI_Bcast");
    if (rank == 0) {
        snprintf(name, sizeof(name), "/mf-bench-placement-%ld", (long)getpid());
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 && ftruncate(fd, PLACEMENT_SEG) != 0) {
            close(fd);
            fd = -1;
            shm_unlink(name);
        }
        if (fd < 0)
            name[0] = '\0';
    }
    mf_bench_mpi_ok(MPI_Bcast(name, sizeof(name), MPI_CHAR, 0, comm), "MPI_Bcast");
    if (rank != 0 && name[0] != '\0' && strcmp(host, host0) == 0)
        fd = shm_open(name, O_RDWR, 0);
    if (fd >= 0) {
        map = mmap(NULL, PLACEMENT_SEG, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    }
    ok = map != MAP_FAILED;
    mf_bench_mpi_ok(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
    if (rank == 0 && name[0] != '\0')
        shm_unlink(name);
    if (!all) {
        if (map != MAP_FAILED)
            munmap(map, PLACEMENT_SEG);
        return -1;
    }
    placement_line = map;
    return 1;
}

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void placement_wait(uint64_t value)
{
    for (long spins = 0; atomic_load_explicit(placement_line, memory_order_acquire) != value;)
        if (++spins > PLACEMENT_SPINS)
            sched_yield();
}

void mf_bench_warm_pairs(MPI_Comm comm)
{
    /* One message fills one 8 KiB receive buffer of UCX's queue (both pages); 640 of them go
     * round its 256 elements more than twice. The receive is posted first, so the blocking send
     * never waits for a peer that is sending too. */
    enum { WARM_BYTES = 8000, WARM_MSGS = 640 };
    int rank, size;
    char *buf = malloc(2 * WARM_BYTES);

    if (buf == NULL) {
        fprintf(stderr, "bench: out of memory\n");
        mf_bench_abort();
    }
    memset(buf, 0, 2 * WARM_BYTES);
    mf_bench_mpi_ok(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    mf_bench_mpi_ok(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    for (int d = 1; d < size; d++) {
        int to = (rank + d) % size, from = (rank - d + size) % size;

        for (int i = 0; i < WARM_MSGS; i++) {
            MPI_Request req;

            mf_bench_mpi_ok(MPI_Irecv(buf + WARM_BYTES, WARM_BYTES, MPI_BYTE, from, 0, comm, &req),
                            "MPI_Irecv");
            mf_bench_mpi_ok(MPI_Send(buf, WARM_BYTES, MPI_BYTE, to, 0, comm), "MPI_Send");
            mf_bench_mpi_ok(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
        }
    }
    free(buf);
    mf_bench_mpi_ok(MPI_Barrier(comm), "MPI_Barrier");
}

double mf_bench_placement_ns(MPI_Comm comm)
{
    double best = 0;
    int rank;

    if (placement_state == 0)
        placement_state = placement_setup(comm);
    if (placement_state < 0)
        return 0;
    mf_bench_mpi_ok(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    mf_bench_mpi_ok(MPI_Barrier(comm), "MPI_Barrier");
    for (int i = 0; i < PLACEMENT_TRIPS; i++) {
        uint64_t ping = ++placement_seq;
        uint64_t pong = ++placement_seq;

        if (rank == 0) {
            double start = now_ns();

            atomic_store_explicit(placement_line, ping, memory_order_release);
            placement_wait(pong);
            double trip = now_ns() - start;
            if (i == 0 || trip < best)
                best = trip;
        } else {
            placement_wait(ping);
            atomic_store_explicit(placement_line, pong, memory_order_release);
        }
    }
    mf_bench_mpi_ok(MPI_Bcast(&best, 1, MPI_DOUBLE, 0, comm), "MPI_Bcast");
    return best;
}

/* Measures one size on every rank, then the placement it ran in; rank 0 also prints its
 * line. */
static void run_one_size(const mf_bench_info_t *info, const mf_bench_opts_t *opts, int rank,
                         mf_bench_measure_fn measure, void *ctx, double *samples,
                         mf_bench_result_t *result)
{
    result->iters = measure(ctx, opts, result->size, samples);
    mf_bench_summarize(samples, opts->reps, result);
    result->placement_ns = mf_bench_placement_ns(MPI_COMM_WORLD);
    if (rank == 0)
        mf_bench_print_line(info, opts, result);
}

int mf_bench_run_sizes(const mf_bench_info_t *info, const mf_bench_opts_t *opts, int rank,
                       mf_bench_measure_fn measure, void *ctx)
{
    size_t *sizes;
    int nsizes = mf_bench_sizes(opts, &sizes);
    mf_bench_result_t *results;
    double *samples;
    int rc = 0;

    results = alloc_or_abort((size_t)nsizes, sizeof(*results), info->name);
    samples = alloc_or_abort((size_t)opts->reps, sizeof(*samples), info->name);
    for (int i = 0; i < nsizes; i++) {
        results[i].size = sizes[i];
        run_one_size(info, opts, rank, measure, ctx, samples, &results[i]);
    }
    if (rank == 0 && mf_bench_write_json(info, opts, results, nsizes) != 0)
        rc = 1;
    free(samples);
    free(results);
    free(sizes);
    return rc;
}
