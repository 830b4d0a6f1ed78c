/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message rate of nonblocking sends between process pairs with T threads each. Even rank 2k
 * sends to odd rank 2k+1; sender thread t starts a window of MPI_Isend, waits for all of them
 * and then for a zero-byte acknowledgement, while receiver thread t has the matching window of
 * MPI_Irecv posted. How threads reach their peers is the --mode: everywhere (one thread per
 * process, MPI everywhere), ser_comm (all on MPI_COMM_WORLD, a tag each), par_comm (a
 * communicator per thread pair) or tags (one duplicate carrying the no-any-source/no-any-tag
 * assertions, a tag each). The number is messages per second per process pair, summed over
 * its threads; the median over --reps timed loops is printed, with the per-thread share.
 */
#include "bench_mt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static const char usage[] =
    "  run with an even number of processes: rank 2k sends to rank 2k+1\n"
    "  --threads T        threads per process (default 1)\n"
    "  --mode M           everywhere | ser_comm | par_comm | tags (default par_comm)\n"
    "  --sizes LIST       message sizes, e.g. 8,1k,64k (default 8; or --min/--max)\n"
    "  --window N         messages per window and thread (default 64)\n"
    "  --iters N          windows per thread per timed loop (default 2000)\n"
    "  --seconds S        instead of --iters: windows chosen so a loop lasts about S s\n"
    "  --reps N           timed loops per size; the median is printed (default 5)\n"
    "  --warmup N         untimed windows per size (default 50)\n"
    "  --pin [0|1]        bind thread t of rank r to core r*T+t of the allowed ones (with more\n"
    "                     threads than cores, each rank's threads share a block of cores)\n"
    "  --cpus LIST        bind to these cores instead, e.g. 0,1 or 0-3 (implies --pin 1)\n"
    "  --thread-level L   multiple (default) | single (needs --threads 1)\n";

typedef struct worker {
    int tid;
    MPI_Comm comm;
    int tag;
    char *buf;
    MPI_Request *reqs;
    double elapsed;
} worker_t;

static mf_mt_opts_t opts = {
    .threads = 1,
    .mode = MF_MT_PAR_COMM,
    .sizes = {8},
    .nsizes = 1,
    .window = 64,
    .iters = 2000,
    .reps = 5,
    .warmup = 50,
    .level = MPI_THREAD_MULTIPLE,
};
static int rank, nprocs, peer, sender;
static worker_t *workers;
static pthread_barrier_t barrier;
static double *samples;
static int iters_of_size[MF_MT_MAX_SIZES];

static void run_windows(worker_t *w, size_t size, int windows)
{
    int count = (int)size;

    for (int i = 0; i < windows; i++) {
        for (int m = 0; m < opts.window; m++) {
            if (sender)
                mf_mt_ok(MPI_Isend(w->buf, count, MPI_BYTE, peer, w->tag, w->comm, &w->reqs[m]),
                         "MPI_Isend");
            else
                mf_mt_ok(MPI_Irecv(w->buf + (size_t)m * size, count, MPI_BYTE, peer, w->tag,
                                   w->comm, &w->reqs[m]),
                         "MPI_Irecv");
        }
        mf_mt_ok(MPI_Waitall(opts.window, w->reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
        if (sender)
            mf_mt_ok(MPI_Recv(NULL, 0, MPI_BYTE, peer, w->tag, w->comm, MPI_STATUS_IGNORE),
                     "MPI_Recv");
        else
            mf_mt_ok(MPI_Send(NULL, 0, MPI_BYTE, peer, w->tag, w->comm), "MPI_Send");
    }
}

/* Every thread of every process together: returns the process's elapsed time (slowest of its
 * threads) for windows windows of size bytes, after an MPI_Barrier. */
static double timed_loop(worker_t *w, size_t size, int windows)
{
    double start, slowest = 0;

    pthread_barrier_wait(&barrier);
    if (w->tid == 0)
        mf_mt_ok(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    pthread_barrier_wait(&barrier);
    start = mf_mt_now();
    run_windows(w, size, windows);
    w->elapsed = mf_mt_now() - start;
    pthread_barrier_wait(&barrier);
    for (int t = 0; t < opts.threads; t++)
        slowest = workers[t].elapsed > slowest ? workers[t].elapsed : slowest;
    return slowest;
}

/* The core slot of thread tid: r*T+t for thread t of rank r, wrapping around the cores. When the
 * threads of all ranks outnumber the cores but the ranks do not, each rank keeps a block of
 * cores instead, so that a sender thread and its receiver run on different cores, as the
 * processes of `everywhere` do (plain wrapping would put both threads of pair t on one core,
 * where every window waits for the scheduler to switch between them). */
static int pin_slot(int tid)
{
    int ncores = mf_mt_ncores(&opts);
    if (nprocs * opts.threads <= ncores || nprocs > ncores)
        return rank * opts.threads + tid;
    int per_rank = ncores / nprocs;
    return rank * per_rank + tid % per_rank;
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    int npairs = nprocs / 2;

    mf_mt_pin(&opts, pin_slot(w->tid));
    for (int s = 0; s < opts.nsizes; s++) {
        size_t size = opts.sizes[s];
        int iters = opts.iters;

        run_windows(w, size, opts.warmup);
        if (opts.seconds > 0) {
            /* A short pilot loop; every process takes the slowest one's pace. */
            int pilot = 20;
            double t = timed_loop(w, size, pilot);
            pthread_barrier_wait(&barrier);
            if (w->tid == 0) {
                double tmax;
                mf_mt_ok(MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                         "MPI_Allreduce");
                iters_of_size[s] = (int)(opts.seconds / (tmax / pilot)) + 1;
            }
            pthread_barrier_wait(&barrier);
            iters = iters_of_size[s];
        }
        if (w->tid == 0)
            iters_of_size[s] = iters;
        for (int r = 0; r < opts.reps; r++) {
            double t = timed_loop(w, size, iters);
            double mine = sender ? (double)opts.window * iters * opts.threads / t : 0, sum = 0;
            pthread_barrier_wait(&barrier);
            if (w->tid == 0) {
                mf_mt_ok(MPI_Reduce(&mine, &sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD),
                         "MPI_Reduce");
                samples[s * opts.reps + r] = sum / npairs;
            }
        }
    }
    return NULL;
}

static void setup_workers(size_t max_size)
{
    MPI_Comm shared = MPI_COMM_WORLD;

    if (opts.mode == MF_MT_TAGS) {
        MPI_Info info;
        mf_mt_ok(MPI_Info_create(&info), "MPI_Info_create");
        mf_mt_ok(MPI_Info_set(info, "mpi_assert_no_any_source", "true"), "MPI_Info_set");
        mf_mt_ok(MPI_Info_set(info, "mpi_assert_no_any_tag", "true"), "MPI_Info_set");
        mf_mt_ok(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &shared), "MPI_Comm_dup_with_info");
        mf_mt_ok(MPI_Info_free(&info), "MPI_Info_free");
    }
    workers = calloc((size_t)opts.threads, sizeof(*workers));
    if (!workers)
        mf_mt_ok(MPI_ERR_NO_MEM, "calloc");
    for (int t = 0; t < opts.threads; t++) {
        worker_t *w = &workers[t];
        w->tid = t;
        w->tag = t;
        w->comm = shared;
        if (opts.mode == MF_MT_PAR_COMM)
            mf_mt_ok(MPI_Comm_dup(MPI_COMM_WORLD, &w->comm), "MPI_Comm_dup");
        /* The receiver gives every message of a window its own slot. */
        w->buf = calloc(sender ? 1 : (size_t)opts.window, max_size ? max_size : 1);
        w->reqs = calloc((size_t)opts.window, sizeof(MPI_Request));
        if (!w->buf || !w->reqs)
            mf_mt_ok(MPI_ERR_NO_MEM, "calloc");
    }
}

static void free_workers(void)
{
    for (int t = 0; t < opts.threads; t++) {
        if (opts.mode == MF_MT_PAR_COMM || (opts.mode == MF_MT_TAGS && t == 0))
            mf_mt_ok(MPI_Comm_free(&workers[t].comm), "MPI_Comm_free");
        free(workers[t].buf);
        free(workers[t].reqs);
    }
    free(workers);
}

static void report(long rss_kib)
{
    for (int s = 0; s < opts.nsizes; s++) {
        double med, lo, hi;
        mf_mt_summarize(&samples[s * opts.reps], opts.reps, &med, &lo, &hi);
        mf_mt_json_begin("mt_msgrate", &opts);
        printf("\"mode\": \"%s\", \"processes\": %d, \"pairs\": %d, \"size\": %zu, "
               "\"window\": %d, \"iters\": %d, \"reps\": %d, \"unit\": \"msg/s\", "
               "\"rate\": %.1f, \"rate_min\": %.1f, \"rate_max\": %.1f, "
               "\"rate_per_thread\": %.1f, \"rss_kib\": %ld}\n",
               mf_mt_mode_name(opts.mode), nprocs, nprocs / 2, opts.sizes[s], opts.window,
               iters_of_size[s], opts.reps, med, lo, hi, med / opts.threads, rss_kib);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    size_t max_size = 0;
    pthread_t *tids;
    int status = mf_mt_parse_args(argc, argv, "mt_msgrate", usage, &opts);

    if (status != 0)
        return status == 1 ? 0 : status;
    if (opts.mode == MF_MT_EVERYWHERE && opts.threads != 1) {
        fprintf(stderr, "mt_msgrate: --mode everywhere means one thread per process\n");
        return 2;
    }
    mf_mt_init(&argc, &argv, &opts);
    mf_mt_ok(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    mf_mt_ok(MPI_Comm_size(MPI_COMM_WORLD, &nprocs), "MPI_Comm_size");
    if (nprocs % 2 != 0) {
        if (rank == 0)
            fprintf(stderr, "mt_msgrate: needs an even number of processes, got %d\n", nprocs);
        MPI_Finalize();
        return 1;
    }
    peer = rank ^ 1;
    sender = rank % 2 == 0;
    for (int s = 0; s < opts.nsizes; s++)
        max_size = opts.sizes[s] > max_size ? opts.sizes[s] : max_size;
    samples = calloc((size_t)opts.nsizes * (size_t)opts.reps, sizeof(double));
    tids = calloc((size_t)opts.threads, sizeof(pthread_t));
    if (!samples || !tids)
        mf_mt_ok(MPI_ERR_NO_MEM, "calloc");
    setup_workers(max_size);
    pthread_barrier_init(&barrier, NULL, (unsigned)opts.threads);
    /* One thread works in the main thread, as MPI_THREAD_SINGLE requires. */
    for (int t = 1; t < opts.threads; t++)
        if (pthread_create(&tids[t], NULL, worker_main, &workers[t]) != 0)
            mf_mt_ok(MPI_ERR_OTHER, "pthread_create");
    worker_main(&workers[0]);
    for (int t = 1; t < opts.threads; t++)
        pthread_join(tids[t], NULL);
    pthread_barrier_destroy(&barrier);
    /* The largest resident set of any process, with every communicator still in use. */
    long rss = mf_mt_rss_kib(), rss_max = 0;
    mf_mt_ok(MPI_Reduce(&rss, &rss_max, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    if (rank == 0)
        report(rss_max);
    free_workers();
    free(tids);
    free(samples);
    mf_mt_ok(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
