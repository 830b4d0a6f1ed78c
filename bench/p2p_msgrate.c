/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Single-thread message rate from rank 0 to rank 1: the windowed kernel of p2p_bandwidth
 * (64 MPI_Isend against 64 posted MPI_Irecv, MPI_Waitall, zero-byte acknowledgement) with
 * 8-byte messages by default. The rate is the messages of all windows over rank 0's elapsed
 * time, in messages per second; median, minimum and maximum over --reps timed loops are
 * printed. --min/--max select other sizes. Standard MPI only.
 */
#include "bench_window.h"

#include <mpi.h>

static const mf_bench_info_t msgrate_info = {
    .name = "p2p_msgrate",
    .metric = "message rate of one sending thread, windows of MPI_Isend/MPI_Irecv",
    .unit = "msg/s",
    .uses_window = 1,
};

static int measure_size(void *arg, const mf_bench_opts_t *opts, size_t size, double *samples)
{
    mf_bench_window_t *win = arg;
    int rounds = mf_bench_iters_for_size(opts, size, opts->window);
    double messages = (double)opts->window * rounds;

    mf_bench_window_warm_up(win, size, mf_bench_warmup_for_size(opts, rounds), msgrate_info.name);
    for (int r = 0; r < opts->reps; r++)
        samples[r] = messages / mf_bench_window_time(win, size, rounds);
    return rounds;
}

static int run(const mf_bench_opts_t *opts, int rank)
{
    mf_bench_window_t win;
    int rc;

    mf_bench_window_create(&win, opts, rank);
    rc = mf_bench_run_sizes(&msgrate_info, opts, rank, measure_size, &win);
    mf_bench_window_destroy(&win);
    return rc;
}

int main(int argc, char **argv)
{
    mf_bench_opts_t opts = {
        .min_size = 8,
        .max_size = 8,
        .iters = 2000,
        .reps = 5,
        .warmup = 100,
        .window = 64,
        .recv_buffers = 0,
        .byte_budget = 512 << 20,
        .json_path = NULL,
    };
    int rank = mf_bench_init(&argc, &argv, msgrate_info.name);
    int status = 0;

    if (rank < 0)
        return 1;
    switch (mf_bench_parse_args(argc, argv, msgrate_info.name, rank, &opts)) {
    case MF_BENCH_ARGS_RUN: status = run(&opts, rank); break;
    case MF_BENCH_ARGS_HELP: status = 0; break;
    case MF_BENCH_ARGS_BAD: status = 2; break;
    }
    mf_bench_mpi_ok(MPI_Finalize(), "MPI_Finalize");
    return status;
}
