/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Streaming bandwidth from rank 0 to rank 1: each round rank 0 sends a window of 64 messages
 * with MPI_Isend while rank 1 has 64 MPI_Irecv posted, both call MPI_Waitall, and rank 1
 * acknowledges with a zero-byte message. For each size (1 B to 4 MiB by default) the
 * bandwidth is the bytes of all windows over rank 0's elapsed time, in MB/s (10^6 bytes per
 * second); median, minimum and maximum over --reps timed loops are printed. Standard MPI only.
 */
#include "bench_window.h"

#include <mpi.h>

static const mf_bench_info_t bandwidth_info = {
    .name = "p2p_bandwidth",
    .metric = "streaming bandwidth, windows of MPI_Isend/MPI_Irecv (MB/s = 1e6 bytes/s)",
    .unit = "MB/s",
    .uses_window = 1,
};

static int measure_size(void *arg, const mf_bench_opts_t *opts, size_t size, double *samples)
{
    mf_bench_window_t *win = arg;
    int rounds = mf_bench_iters_for_size(opts, size, opts->window);
    double bytes = (double)size * opts->window * rounds;

    mf_bench_window_warm_up(win, size, mf_bench_warmup_for_size(opts, rounds), bandwidth_info.name);
    for (int r = 0; r < opts->reps; r++)
        samples[r] = bytes / mf_bench_window_time(win, size, rounds) / 1e6;
    return rounds;
}

static int run(const mf_bench_opts_t *opts, int rank)
{
    mf_bench_window_t win;
    int rc;

    mf_bench_window_create(&win, opts, rank);
    rc = mf_bench_run_sizes(&bandwidth_info, opts, rank, measure_size, &win);
    mf_bench_window_destroy(&win);
    return rc;
}

int main(int argc, char **argv)
{
    mf_bench_opts_t opts = {
        .min_size = 1,
        .max_size = 4 << 20,
        .iters = 200,
        .reps = 5,
        .warmup = 10,
        .window = 64,
        .recv_buffers = 0,
        .byte_budget = 512 << 20,
        .json_path = NULL,
    };
    int rank = mf_bench_init(&argc, &argv, bandwidth_info.name);
    int status = 0;

    if (rank < 0)
        return 1;
    switch (mf_bench_parse_args(argc, argv, bandwidth_info.name, rank, &opts)) {
    case MF_BENCH_ARGS_RUN: status = run(&opts, rank); break;
    case MF_BENCH_ARGS_HELP: status = 0; break;
    case MF_BENCH_ARGS_BAD: status = 2; break;
    }
    mf_bench_mpi_ok(MPI_Finalize(), "MPI_Finalize");
    return status;
}
