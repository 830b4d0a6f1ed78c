/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Common code of the multithreaded benchmarks (see bench_mt.h). Standard MPI and POSIX only.
 */
#define _GNU_SOURCE /* pthread_setaffinity_np, sched_getaffinity */

#include "bench_mt.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const mode_names[] = {"everywhere", "ser_comm", "par_comm", "tags"};

const char *mf_mt_mode_name(mf_mt_mode_t mode)
{
    return mode_names[mode];
}

const char *mf_mt_level_name(int level)
{
    return level == MPI_THREAD_SINGLE ? "single" : "multiple";
}

/* Parses "4096", "4k" or "4m" (binary multiples). Returns 0 or -1. */
static int parse_size(const char *text, size_t *size_p)
{
    char *end;
    unsigned long long value;

    if (text[0] < '0' || text[0] > '9')
        return -1;
    errno = 0;
    value = strtoull(text, &end, 10);
    if (errno != 0)
        return -1;
    if (*end == 'k' || *end == 'K') {
        value <<= 10;
        end++;
    } else if (*end == 'm' || *end == 'M') {
        value <<= 20;
        end++;
    }
    if (*end != '\0')
        return -1;
    *size_p = (size_t)value;
    return 0;
}

static int parse_int(const char *text, int min, int *value_p)
{
    char *end;
    long value;

    errno = 0;
    value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < min || value > 1 << 30)
        return -1;
    *value_p = (int)value;
    return 0;
}

/* A comma-separated list of sizes. */
static int parse_sizes(char *text, mf_mt_opts_t *opts)
{
    opts->nsizes = 0;
    for (char *tok = strtok(text, ","); tok; tok = strtok(NULL, ",")) {
        if (opts->nsizes == MF_MT_MAX_SIZES || parse_size(tok, &opts->sizes[opts->nsizes]) != 0)
            return -1;
        opts->nsizes++;
    }
    return opts->nsizes > 0 ? 0 : -1;
}

/* "0,2,4-7": cores in the order given. */
static int parse_cpus(char *text, mf_mt_opts_t *opts)
{
    opts->ncpus = 0;
    for (char *tok = strtok(text, ","); tok; tok = strtok(NULL, ",")) {
        int lo, hi;
        char *dash = strchr(tok, '-');
        if (dash)
            *dash = '\0';
        if (parse_int(tok, 0, &lo) != 0 || parse_int(dash ? dash + 1 : tok, lo, &hi) != 0)
            return -1;
        for (int c = lo; c <= hi; c++) {
            if (opts->ncpus == MF_MT_MAX_CPUS)
                return -1;
            opts->cpus[opts->ncpus++] = c;
        }
    }
    return opts->ncpus > 0 ? 0 : -1;
}

/* --min A --max B: A, then powers of two up to B (as the point-to-point benchmarks). */
static int sizes_from_range(size_t min, size_t max, mf_mt_opts_t *opts)
{
    opts->nsizes = 0;
    for (size_t s = min; s <= max; s = s ? s * 2 : 1) {
        if (opts->nsizes == MF_MT_MAX_SIZES)
            return -1;
        opts->sizes[opts->nsizes++] = s;
    }
    return 0;
}

int mf_mt_parse_args(int argc, char **argv, const char *name, const char *usage, mf_mt_opts_t *opts)
{
    size_t min = 0, max = 0;
    int have_range = 0;

    for (int i = 1; i < argc; i++) {
        const char *opt = argv[i];
        char *val = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;

        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            printf("usage: %s [options]\n%s", name, usage);
            return 1;
        }
        if (strcmp(opt, "--pin") == 0 &&
            (!val || (strcmp(val, "0") != 0 && strcmp(val, "1") != 0))) {
            opts->pin = 1; /* a bare --pin */
            continue;
        }
        if (!val) {
            fprintf(stderr, "%s: %s needs a value (see --help)\n", name, opt);
            return 2;
        }
        i++;
        if (strcmp(opt, "--threads") == 0)
            bad = parse_int(val, 1, &opts->threads);
        else if (strcmp(opt, "--mode") == 0) {
            bad = -1;
            for (int m = 0; m < 4; m++) {
                if (strcmp(val, mode_names[m]) == 0) {
                    opts->mode = (mf_mt_mode_t)m;
                    bad = 0;
                }
            }
        } else if (strcmp(opt, "--sizes") == 0)
            bad = parse_sizes(val, opts);
        else if (strcmp(opt, "--min") == 0) {
            bad = parse_size(val, &min);
            have_range = 1;
        } else if (strcmp(opt, "--max") == 0) {
            bad = parse_size(val, &max);
            have_range = 1;
        } else if (strcmp(opt, "--window") == 0)
            bad = parse_int(val, 1, &opts->window);
        else if (strcmp(opt, "--iters") == 0)
            bad = parse_int(val, 1, &opts->iters);
        else if (strcmp(opt, "--seconds") == 0) {
            opts->seconds = strtod(val, NULL);
            bad = opts->seconds > 0 ? 0 : -1;
        } else if (strcmp(opt, "--reps") == 0)
            bad = parse_int(val, 1, &opts->reps);
        else if (strcmp(opt, "--warmup") == 0)
            bad = parse_int(val, 0, &opts->warmup);
        else if (strcmp(opt, "--pin") == 0)
            bad = parse_int(val, 0, &opts->pin);
        else if (strcmp(opt, "--cpus") == 0) {
            bad = parse_cpus(val, opts);
            opts->pin = 1;
        } else if (strcmp(opt, "--thread-level") == 0) {
            if (strcmp(val, "single") == 0)
                opts->level = MPI_THREAD_SINGLE;
            else if (strcmp(val, "multiple") == 0)
                opts->level = MPI_THREAD_MULTIPLE;
            else
                bad = -1;
        } else if (strcmp(opt, "--recv") == 0) {
            opts->any_source = strcmp(val, "any") == 0;
            bad = opts->any_source || strcmp(val, "specific") == 0 ? 0 : -1;
        } else if (strcmp(opt, "--comms") == 0)
            bad = parse_int(val, 0, &opts->comms);
        else if (strcmp(opt, "--json") == 0)
            bad = 0; /* the result lines on stdout are the JSON; accepted for uniformity */
        else {
            fprintf(stderr, "%s: unknown option %s (see --help)\n", name, opt);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "%s: bad value '%s' for %s\n", name, val, opt);
            return 2;
        }
    }
    if (have_range) {
        if (max < min)
            max = min;
        if (sizes_from_range(min, max, opts) != 0) {
            fprintf(stderr, "%s: too many sizes in --min/--max\n", name);
            return 2;
        }
    }
    if (opts->level == MPI_THREAD_SINGLE && opts->threads != 1) {
        fprintf(stderr, "%s: --thread-level single needs --threads 1\n", name);
        return 2;
    }
    return 0;
}

void mf_mt_ok(int rc, const char *call)
{
    if (rc == MPI_SUCCESS)
        return;
    fprintf(stderr, "%s failed with error %d\n", call, rc);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

void mf_mt_init(int *argc, char ***argv, const mf_mt_opts_t *opts)
{
    int provided = -1;

    mf_mt_ok(MPI_Init_thread(argc, argv, opts->level, &provided), "MPI_Init_thread");
    if (provided < opts->level) {
        fprintf(stderr, "MPI_Init_thread granted level %d, less than %s\n", provided,
                mf_mt_level_name(opts->level));
        MPI_Abort(MPI_COMM_WORLD, 1);
        exit(1);
    }
}

/* Fills cores[] with the cores pinning counts over; returns their number. */
static int pin_cores(const mf_mt_opts_t *opts, int cores[MF_MT_MAX_CPUS])
{
    cpu_set_t set;
    int n = 0;

    if (!opts->pin)
        return 0;
    if (opts->ncpus > 0) {
        memcpy(cores, opts->cpus, (size_t)opts->ncpus * sizeof(int));
        return opts->ncpus;
    }
    if (sched_getaffinity(0, sizeof(set), &set) != 0)
        return 0;
    for (int c = 0; c < CPU_SETSIZE && n < MF_MT_MAX_CPUS; c++) {
        if (CPU_ISSET(c, &set))
            cores[n++] = c;
    }
    return n;
}

int mf_mt_ncores(const mf_mt_opts_t *opts)
{
    int cores[MF_MT_MAX_CPUS];
    return pin_cores(opts, cores);
}

int mf_mt_pin(const mf_mt_opts_t *opts, int index)
{
    int cores[MF_MT_MAX_CPUS];
    int n = pin_cores(opts, cores);
    cpu_set_t set;

    if (n == 0)
        return -1;
    int core = cores[index % n];
    CPU_ZERO(&set);
    CPU_SET(core, &set);
    if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) != 0) {
        fprintf(stderr, "cannot bind a thread to core %d\n", core);
        return -1;
    }
    return core;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void mf_mt_summarize(double *values, int n, double *median, double *min, double *max)
{
    qsort(values, (size_t)n, sizeof(double), cmp_double);
    *median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    *min = values[0];
    *max = values[n - 1];
}

static void print_json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

void mf_mt_json_begin(const char *name, const mf_mt_opts_t *opts)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    char *nl;

    MPI_Get_library_version(lib, &len);
    lib[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] = '\0';
    nl = strchr(lib, '\n');
    if (nl)
        *nl = '\0';
    printf("{\"benchmark\": \"%s\", \"library\": ", name);
    print_json_string(lib);
    printf(", \"threads\": %d, \"thread_level\": \"%s\", \"pinned\": %s, ", opts->threads,
           mf_mt_level_name(opts->level), opts->pin ? "true" : "false");
}

double mf_mt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

long mf_mt_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;

    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "VmRSS:", 6) == 0) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    }
    fclose(f);
    return kib;
}
