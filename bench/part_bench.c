/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned communication benchmark (2 processes). Rank 0 has T threads that each compute,
 * fill their K partitions of S bytes and make them ready; thread t computes
 * compute_us + t * stagger_us / (T - 1) microseconds, so with a stagger the last thread finishes
 * late. Three ways to move the T * K partitions to rank 1:
 *   part     MPI_Psend_init / MPI_Precv_init, each thread calls MPI_Pready on its partitions;
 *   persist  one persistent send per partition, MPI_Startall once every thread is done;
 *   single   one send of the whole buffer once every thread is done.
 * Per iteration the receiver reports when its wait returned; both processes read the same
 * monotonic clock (one host). Printed per mode, as one JSON line: the medians over the timed
 * iterations of the total time (sender start to receiver completion) and of the time from the
 * last ready call to receiver completion. With --stride N > 1 every mode moves doubles N apart
 * (an item type of one double resized to N doubles, on both sides): a partition of S bytes
 * spans N * S bytes of the buffer, and the MPI packs it. Standard MPI only: builds with any
 * MPI.
 */
#include "bench_util.h"

#include <mpi.h>

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int threads, parts_per_thread, iters, warmup;
    long part_bytes;
    int stride; /* 1: contiguous bytes; N: doubles N apart */
    double compute_us, stagger_us, after_us;
    const char *modes;
    const char *json_path;
} opts_t;

static opts_t o = {2, 4, 40, 5, 65536, 1, 0.0, 1000.0, 0.0, "part,persist,single", NULL};
static int rank, nparts;
/* What a partition is: `part_count` items of `item` spanning `span` bytes of the buffer. */
static MPI_Datatype item;
static int part_count;
static size_t span;
static char *buf;
static MPI_Request preq;     /* part mode */
static int cur_mode;         /* 0 part, 1 persist, 2 single */
static double ready_at[256]; /* per thread: when its last ready call returned */
static pthread_barrier_t go, done;
static volatile int quit;

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void spin_us(double us)
{
    double end = now_us() + us;
    while (now_us() < end)
        ;
}

static void *sender_thread(void *arg)
{
    int t = (int)(size_t)arg;
    double delay = o.compute_us + (o.threads > 1 ? t * o.stagger_us / (o.threads - 1) : 0.0);
    for (;;) {
        pthread_barrier_wait(&go);
        if (quit)
            return NULL;
        spin_us(delay);
        for (int k = 0; k < o.parts_per_thread; k++) {
            int p = t * o.parts_per_thread + k;
            memset(buf + (size_t)p * span, (p + 1) & 0xff, span);
            if (cur_mode == 0)
                MPI_Pready(p, preq);
        }
        ready_at[t] = now_us();
        spin_us(o.after_us); /* work after the last Pready, before the join */
        pthread_barrier_wait(&done);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static const char *mode_names[] = {"part", "persist", "single"};

static void run_mode(int mode, FILE *json, int *first)
{
    size_t total = (size_t)nparts * span;
    MPI_Request *reqs = calloc((size_t)nparts, sizeof(MPI_Request));
    double *tot = calloc((size_t)o.iters, sizeof(double));
    double *after = calloc((size_t)o.iters, sizeof(double));
    int bad = 0;
    cur_mode = mode;
    if (mode == 0) {
        if (rank == 0)
            MPI_Psend_init(buf, nparts, part_count, item, 1, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &preq);
        else
            MPI_Precv_init(buf, nparts, part_count, item, 0, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                           &preq);
    } else if (mode == 1) {
        for (int p = 0; p < nparts; p++) {
            char *b = buf + (size_t)p * span;
            if (rank == 0)
                MPI_Send_init(b, part_count, item, 1, 2, MPI_COMM_WORLD, &reqs[p]);
            else
                MPI_Recv_init(b, part_count, item, 0, 2, MPI_COMM_WORLD, &reqs[p]);
        }
    }
    for (int it = -o.warmup; it < o.iters; it++) {
        double t0 = 0, last = 0, t_done = 0;
        if (rank == 1) {
            memset(buf, 0, total);
            if (mode == 0)
                MPI_Start(&preq);
            else if (mode == 1)
                MPI_Startall(nparts, reqs);
            else
                MPI_Irecv(buf, nparts * part_count, item, 0, 3, MPI_COMM_WORLD, &reqs[0]);
            MPI_Barrier(MPI_COMM_WORLD);
            if (mode == 0)
                MPI_Wait(&preq, MPI_STATUS_IGNORE);
            else
                MPI_Waitall(mode == 1 ? nparts : 1, reqs, MPI_STATUSES_IGNORE);
            t_done = now_us();
            for (int p = 0; p < nparts; p++)
                if (buf[(size_t)p * span + span - (size_t)(o.stride - 1) * 8 - 1] !=
                    (char)((p + 1) & 0xff))
                    bad++;
            MPI_Send(&t_done, 1, MPI_DOUBLE, 0, 4, MPI_COMM_WORLD);
        } else {
            if (mode == 0)
                MPI_Start(&preq);
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = now_us();
            /* The main thread waits for the workers without spinning (a fork-join region),
             * then completes the transfer: on 2 cores a spinning waiter would steal the CPU
             * from the threads still computing. */
            pthread_barrier_wait(&go);
            pthread_barrier_wait(&done);
            for (int t = 0; t < o.threads; t++)
                last = ready_at[t] > last ? ready_at[t] : last;
            if (mode == 0) {
                MPI_Wait(&preq, MPI_STATUS_IGNORE);
            } else if (mode == 1) {
                last = now_us();
                MPI_Startall(nparts, reqs);
                MPI_Waitall(nparts, reqs, MPI_STATUSES_IGNORE);
            } else if (mode == 2) {
                last = now_us();
                MPI_Send(buf, nparts * part_count, item, 1, 3, MPI_COMM_WORLD);
            }
            MPI_Recv(&t_done, 1, MPI_DOUBLE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (it >= 0) {
                tot[it] = t_done - t0;
                after[it] = t_done - last;
            }
        }
    }
    if (mode == 0)
        MPI_Request_free(&preq);
    else if (mode == 1)
        for (int p = 0; p < nparts; p++)
            MPI_Request_free(&reqs[p]);
    MPI_Bcast(&bad, 1, MPI_INT, 1, MPI_COMM_WORLD);
    if (rank == 0) {
        char line[512];
        snprintf(line, sizeof(line),
                 "{\"bench\": \"part_bench\", \"mode\": \"%s\", \"threads\": %d, \"parts\": %d, "
                 "\"part_bytes\": %ld, \"stride\": %d, \"compute_us\": %.1f, "
                 "\"stagger_us\": %.1f, "
                 "\"iters\": %d, \"total_us\": %.2f, \"after_last_us\": %.2f, \"errors\": %d}",
                 mode_names[mode], o.threads, nparts, o.part_bytes, o.stride, o.compute_us,
                 o.stagger_us, o.iters, median(tot, o.iters), median(after, o.iters), bad);
        printf("%s\n", line);
        if (json != NULL)
            fprintf(json, "%s%s", *first ? "" : ",\n", line);
        *first = 0;
    }
    free(reqs);
    free(tot);
    free(after);
}

static int parse(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v == NULL)
            return -1;
        if (!strcmp(a, "--threads"))
            o.threads = atoi(v);
        else if (!strcmp(a, "--parts-per-thread"))
            o.parts_per_thread = atoi(v);
        else if (!strcmp(a, "--part-bytes"))
            o.part_bytes = atol(v);
        else if (!strcmp(a, "--stride"))
            o.stride = atoi(v);
        else if (!strcmp(a, "--compute-us"))
            o.compute_us = atof(v);
        else if (!strcmp(a, "--stagger-us"))
            o.stagger_us = atof(v);
        else if (!strcmp(a, "--after-us"))
            o.after_us = atof(v);
        else if (!strcmp(a, "--iters"))
            o.iters = atoi(v);
        else if (!strcmp(a, "--warmup"))
            o.warmup = atoi(v);
        else if (!strcmp(a, "--modes"))
            o.modes = v;
        else if (!strcmp(a, "--json"))
            o.json_path = v;
        else if (strcmp(a, "--min") && strcmp(a, "--max") && strcmp(a, "--reps"))
            return -1; /* the three are accepted for the runners' start-up probe */
        i++;
    }
    if (o.threads < 1 || o.threads > 256 || o.parts_per_thread < 1 || o.part_bytes < 1 ||
        o.iters < 1 || o.warmup < 0 || o.stride < 1 || o.stride > 64 ||
        (o.stride > 1 && o.part_bytes % 8 != 0) ||
        (long)o.threads * o.parts_per_thread * o.part_bytes * o.stride > INT_MAX)
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parse(argc, argv) != 0 || size != 2 || provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(
                stderr,
                "usage: mpiexec -n 2 part_bench [--threads T] [--parts-per-thread K] "
                "[--part-bytes S] [--stride N] [--compute-us C] [--stagger-us U] [--after-us A] "
                "[--iters N] [--warmup W] "
                "[--modes part,persist,single] [--json FILE] (needs MPI_THREAD_MULTIPLE)\n");
        MPI_Finalize();
        return 2;
    }
    mf_bench_warm_pairs(MPI_COMM_WORLD);
    nparts = o.threads * o.parts_per_thread;
    item = MPI_BYTE;
    part_count = (int)o.part_bytes;
    span = (size_t)o.part_bytes;
    if (o.stride > 1) {
        MPI_Type_create_resized(MPI_DOUBLE, 0, (MPI_Aint)o.stride * 8, &item);
        MPI_Type_commit(&item);
        part_count = (int)(o.part_bytes / 8);
        span = (size_t)o.part_bytes * (size_t)o.stride;
    }
    buf = malloc((size_t)nparts * span);
    pthread_t th[256];
    if (rank == 0) {
        pthread_barrier_init(&go, NULL, (unsigned)o.threads + 1);
        pthread_barrier_init(&done, NULL, (unsigned)o.threads + 1);
        for (int t = 0; t < o.threads; t++)
            pthread_create(&th[t], NULL, sender_thread, (void *)(size_t)t);
    }
    FILE *json = rank == 0 && o.json_path != NULL ? fopen(o.json_path, "w") : NULL;
    int first = 1;
    if (json != NULL)
        fprintf(json, "{\"results\": [\n");
    for (int m = 0; m < 3; m++)
        if (strstr(o.modes, mode_names[m]) != NULL)
            run_mode(m, json, &first);
    if (json != NULL) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        for (char *c = lib; *c; c++)
            if (*c == '"' || *c == '\\' || *c == '\n' || *c == '\t')
                *c = ' ';
        fprintf(json, "\n], \"library\": \"%.200s\"}\n", lib);
        fclose(json);
    }
    if (rank == 0) {
        quit = 1;
        pthread_barrier_wait(&go);
        for (int t = 0; t < o.threads; t++)
            pthread_join(th[t], NULL);
    }
    free(buf);
    if (item != MPI_BYTE)
        MPI_Type_free(&item);
    MPI_Finalize();
    return 0;
}
