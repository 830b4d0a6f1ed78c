/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How much communication progresses while the processes compute without calling MPI: the
 * case for asynchronous progress (Manifold's MANIFOLD_ASYNC_PROGRESS=on, MPICH's
 * MPICH_ASYNC_PROGRESS=1). Two processes; only the standard MPI API, so the same source
 * builds with any MPI (bench/run_async.py runs it side by side).
 *
 * - exchange (per size): both processes post MPI_Irecv and MPI_Isend of `size` bytes to each
 *   other, compute for `compute` us (a spin on the clock, no MPI call), then MPI_Waitall.
 *   `comm_us` is the exchange alone, `compute` defaults to twice that, `total_us` is the whole;
 *   overlap = (comm_us + compute - total_us) / comm_us, in percent (100: the transfer hid
 *   entirely behind the computation, 0: it waited for MPI_Waitall).
 * - passive target: process 1 locks process 0's window, puts 8 bytes and unlocks, while
 *   process 0 computes for `--rma-compute-us` after a barrier; `epoch_us` is the epoch's
 *   time (about the computation when only MPI calls progress the target).
 * Each line of output is one JSON document with medians over the iterations. Options:
 * --iters N (or --reps N, as the other benchmarks name their timed repetitions), --size BYTES
 * (repeatable) or --min/--max (sizes from min to max, four times larger each),
 * --compute-us US (exchange; default twice the exchange alone), --rma-compute-us US.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static double spin_until(double t)
{
    double now;
    while ((now = MPI_Wtime()) < t)
        ;
    return now;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One exchange of `size` bytes with `compute_s` of computation between start and wait;
 * returns its time on this process. */
static double exchange(char *out, char *in, int size, double compute_s)
{
    MPI_Request reqs[2];
    int peer = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    MPI_Irecv(in, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(out, size, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &reqs[1]);
    if (compute_s > 0)
        spin_until(t0 + compute_s);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    return MPI_Wtime() - t0;
}

/* The slower process's time of each iteration: what the pair achieved. */
static double slower(double t)
{
    double worst;
    MPI_Allreduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

static void bench_exchange(int size, int iters, double compute_us_opt)
{
    char *out = malloc((size_t)size), *in = malloc((size_t)size);
    double *t = malloc(sizeof(double) * (size_t)iters);
    memset(out, rank + 1, (size_t)size);
    for (int i = 0; i < 3; i++)
        exchange(out, in, size, 0);
    for (int i = 0; i < iters; i++)
        t[i] = slower(exchange(out, in, size, 0));
    double comm = median(t, iters);
    double compute = compute_us_opt > 0 ? compute_us_opt * 1e-6 : 2 * comm;
    for (int i = 0; i < iters; i++)
        t[i] = slower(exchange(out, in, size, compute));
    double total = median(t, iters);
    double overlap = 100.0 * (comm + compute - total) / comm;
    if (overlap < 0)
        overlap = 0;
    if (overlap > 100)
        overlap = 100;
    if (rank == 0)
        printf("{\"bench\": \"async_overlap\", \"case\": \"exchange\", \"size\": %d, "
               "\"iters\": %d, \"comm_us\": %.2f, \"compute_us\": %.2f, \"total_us\": %.2f, "
               "\"overlap_pct\": %.1f}\n",
               size, iters, comm * 1e6, compute * 1e6, total * 1e6, overlap);
    free(out);
    free(in);
    free(t);
}

static void bench_passive(int iters, double compute_us)
{
    long *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    double *t = malloc(sizeof(double) * (size_t)iters);
    long v = 42;
    for (int i = -3; i < iters; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0) {
            spin_until(t0 + compute_us * 1e-6);
        } else {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
            MPI_Put(&v, 1, MPI_LONG, 0, 0, 1, MPI_LONG, win);
            MPI_Win_unlock(0, win);
            if (i >= 0)
                t[i] = MPI_Wtime() - t0;
        }
    }
    if (rank == 1) {
        double epoch = median(t, iters);
        MPI_Send(&epoch, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD);
    } else {
        double epoch;
        MPI_Recv(&epoch, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        printf("{\"bench\": \"async_overlap\", \"case\": \"passive\", \"size\": 8, "
               "\"iters\": %d, \"compute_us\": %.2f, \"epoch_us\": %.2f}\n",
               iters, compute_us, epoch * 1e6);
    }
    free(t);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    int provided, nprocs, iters = 50;
    double compute_us = 0, rma_compute_us = 1000;
    int sizes[16], nsizes = 0, min = 0, max = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int i = 1; i < argc; i++) {
        if ((!strcmp(argv[i], "--iters") || !strcmp(argv[i], "--reps")) && i + 1 < argc)
            iters = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--min") && i + 1 < argc)
            min = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            max = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--compute-us") && i + 1 < argc)
            compute_us = atof(argv[++i]);
        else if (!strcmp(argv[i], "--rma-compute-us") && i + 1 < argc)
            rma_compute_us = atof(argv[++i]);
        else if (!strcmp(argv[i], "--size") && i + 1 < argc && nsizes < 16)
            sizes[nsizes++] = atoi(argv[++i]);
        else {
            if (rank == 0)
                fprintf(stderr, "usage: async_overlap [--iters N] [--size BYTES]... [--min BYTES "
                                "--max BYTES] [--compute-us US] [--rma-compute-us US]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (nprocs != 2 || iters < 1) {
        if (rank == 0)
            fprintf(stderr, "async_overlap: needs 2 processes and --iters >= 1\n");
        MPI_Finalize();
        return 2;
    }
    for (int s = min > 0 ? min : 1; max > 0 && s <= max && nsizes < 16; s *= 4)
        sizes[nsizes++] = s;
    if (nsizes == 0) {
        sizes[nsizes++] = 64 << 10;
        sizes[nsizes++] = 1 << 20;
        sizes[nsizes++] = 4 << 20;
    }
    for (int s = 0; s < nsizes; s++)
        bench_exchange(sizes[s], iters, compute_us);
    bench_passive(iters, rma_compute_us);
    MPI_Finalize();
    return 0;
}
