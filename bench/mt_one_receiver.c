/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One receiving thread serving T sending threads: rank 0 runs T threads, each sending windows
 * of MPI_Isend on MPI_COMM_WORLD with its own tag; rank 1's main thread alone posts the T
 * windows of MPI_Irecv, either naming source and tag (--recv specific) or with
 * MPI_ANY_SOURCE/MPI_ANY_TAG (--recv any), waits for them all and acknowledges each sender.
 * The number is the messages rank 1 receives per second (median over --reps loops): whether
 * more sending threads still help when a single thread drains them all.
 */
#include "bench_mt.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static const char usage[] =
    "  run with 2 processes: rank 0 has T sending threads, rank 1 one receiving thread\n"
    "  --threads T        sending threads on rank 0 (default 1)\n"
    "  --recv any|specific  wildcard receives or named source and tag (default specific)\n"
    "  --sizes LIST       message sizes (default 8)\n"
    "  --window N         messages per window and sending thread (default 64)\n"
    "  --iters N          windows per timed loop (default 1000)\n"
    "  --reps N           timed loops per size; the median is printed (default 5)\n"
    "  --warmup N         untimed windows per size (default 20)\n"
    "  --pin 0|1, --cpus LIST   bind threads to cores (see mt_msgrate --help)\n";

static mf_mt_opts_t opts = {
    .threads = 1,
    .sizes = {8},
    .nsizes = 1,
    .window = 64,
    .iters = 1000,
    .reps = 5,
    .warmup = 20,
    .level = MPI_THREAD_MULTIPLE,
};
static pthread_barrier_t barrier;
static size_t cur_size;
static int cur_windows;

typedef struct sender {
    int tid;
    char *buf;
    MPI_Request *reqs;
} sender_t;

static void send_windows(sender_t *s)
{
    for (int i = 0; i < cur_windows; i++) {
        for (int m = 0; m < opts.window; m++)
            mf_mt_ok(
                MPI_Isend(s->buf, (int)cur_size, MPI_BYTE, 1, s->tid, MPI_COMM_WORLD, &s->reqs[m]),
                "MPI_Isend");
        mf_mt_ok(MPI_Waitall(opts.window, s->reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
        mf_mt_ok(MPI_Recv(NULL, 0, MPI_BYTE, 1, s->tid, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 "MPI_Recv");
    }
}

/* Rank 0's threads: each phase (warm-up or timed loop of one size) starts at a barrier that
 * the main thread passes once it has set cur_size and cur_windows; cur_windows 0 ends. */
static void *sender_main(void *arg)
{
    sender_t *s = arg;

    mf_mt_pin(&opts, s->tid + 1);
    for (;;) {
        pthread_barrier_wait(&barrier);
        if (cur_windows == 0)
            return NULL;
        send_windows(s);
        pthread_barrier_wait(&barrier);
    }
}

static void receive_windows(char *buf, MPI_Request *reqs, size_t size, int windows)
{
    int n = opts.window * opts.threads;

    for (int i = 0; i < windows; i++) {
        for (int m = 0; m < n; m++) {
            int src = opts.any_source ? MPI_ANY_SOURCE : 0;
            int tag = opts.any_source ? MPI_ANY_TAG : m / opts.window;
            mf_mt_ok(MPI_Irecv(buf + (size_t)m * size, (int)size, MPI_BYTE, src, tag,
                               MPI_COMM_WORLD, &reqs[m]),
                     "MPI_Irecv");
        }
        mf_mt_ok(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
        for (int t = 0; t < opts.threads; t++)
            mf_mt_ok(MPI_Send(NULL, 0, MPI_BYTE, 0, t, MPI_COMM_WORLD), "MPI_Send");
    }
}

int main(int argc, char **argv)
{
    int rank, nprocs, status = mf_mt_parse_args(argc, argv, "mt_one_receiver", usage, &opts);
    size_t max_size = 1;

    if (status != 0)
        return status == 1 ? 0 : status;
    mf_mt_init(&argc, &argv, &opts);
    mf_mt_ok(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    mf_mt_ok(MPI_Comm_size(MPI_COMM_WORLD, &nprocs), "MPI_Comm_size");
    if (nprocs != 2) {
        if (rank == 0)
            fprintf(stderr, "mt_one_receiver: needs exactly 2 processes, got %d\n", nprocs);
        MPI_Finalize();
        return 1;
    }
    for (int s = 0; s < opts.nsizes; s++)
        max_size = opts.sizes[s] > max_size ? opts.sizes[s] : max_size;

    double *samples = calloc((size_t)opts.reps, sizeof(double));
    if (rank == 0) {
        sender_t *senders = calloc((size_t)opts.threads, sizeof(*senders));
        pthread_t *tids = calloc((size_t)opts.threads, sizeof(pthread_t));
        if (!senders || !tids || !samples)
            mf_mt_ok(MPI_ERR_NO_MEM, "calloc");
        pthread_barrier_init(&barrier, NULL, (unsigned)opts.threads + 1);
        for (int t = 0; t < opts.threads; t++) {
            senders[t].tid = t;
            senders[t].buf = calloc(1, max_size);
            senders[t].reqs = calloc((size_t)opts.window, sizeof(MPI_Request));
            if (!senders[t].buf || !senders[t].reqs ||
                pthread_create(&tids[t], NULL, sender_main, &senders[t]) != 0)
                mf_mt_ok(MPI_ERR_OTHER, "sender setup");
        }
        mf_mt_pin(&opts, 0); /* it sleeps in the barrier while the senders work */
        for (int s = 0; s < opts.nsizes; s++) {
            for (int r = -1; r < opts.reps; r++) {
                cur_size = opts.sizes[s];
                cur_windows = r < 0 ? opts.warmup : opts.iters;
                mf_mt_ok(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
                pthread_barrier_wait(&barrier); /* go */
                pthread_barrier_wait(&barrier); /* done */
            }
            mf_mt_ok(
                MPI_Recv(samples, opts.reps, MPI_DOUBLE, 1, 999, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                "MPI_Recv");
            double med, lo, hi;
            mf_mt_summarize(samples, opts.reps, &med, &lo, &hi);
            mf_mt_json_begin("mt_one_receiver", &opts);
            printf("\"recv\": \"%s\", \"size\": %zu, \"window\": %d, \"iters\": %d, "
                   "\"reps\": %d, \"unit\": \"msg/s\", \"rate\": %.1f, \"rate_min\": %.1f, "
                   "\"rate_max\": %.1f, \"rate_per_thread\": %.1f}\n",
                   opts.any_source ? "any" : "specific", opts.sizes[s], opts.window, opts.iters,
                   opts.reps, med, lo, hi, med / opts.threads);
            fflush(stdout);
        }
        cur_windows = 0;
        pthread_barrier_wait(&barrier);
        for (int t = 0; t < opts.threads; t++) {
            pthread_join(tids[t], NULL);
            free(senders[t].buf);
            free(senders[t].reqs);
        }
        pthread_barrier_destroy(&barrier);
        free(senders);
        free(tids);
    } else {
        size_t n = (size_t)opts.window * (size_t)opts.threads;
        char *buf = calloc(n, max_size);
        MPI_Request *reqs = calloc(n, sizeof(MPI_Request));
        if (!buf || !reqs || !samples)
            mf_mt_ok(MPI_ERR_NO_MEM, "calloc");
        mf_mt_pin(&opts, 0); /* shares a core with rank 0's sleeping main thread */
        for (int s = 0; s < opts.nsizes; s++) {
            for (int r = -1; r < opts.reps; r++) {
                int windows = r < 0 ? opts.warmup : opts.iters;
                mf_mt_ok(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
                double start = MPI_Wtime();
                receive_windows(buf, reqs, opts.sizes[s], windows);
                if (r >= 0)
                    samples[r] = (double)n * windows / (MPI_Wtime() - start);
            }
            mf_mt_ok(MPI_Send(samples, opts.reps, MPI_DOUBLE, 0, 999, MPI_COMM_WORLD), "MPI_Send");
        }
        free(buf);
        free(reqs);
    }
    free(samples);
    mf_mt_ok(MPI_Finalize(), "MPI_Finalize");
    return 0;
}
