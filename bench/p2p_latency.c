/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ping-pong latency between ranks 0 and 1: rank 0 sends a message with MPI_Send, rank 1
 * answers with the same size, and the one-way latency is half the round-trip time. For each
 * size (0 B to 4 MiB by default) a checked warm-up runs first, then --reps timed loops; the
 * median, minimum and maximum over those loops are printed (microseconds). Standard MPI only.
 */
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

#define PING_TAG 1
#define PONG_TAG 2

static const mf_bench_info_t latency_info = {
    .name = "p2p_latency",
    .metric = "one-way latency (half of the MPI_Send/MPI_Recv round trip)",
    .unit = "us",
    .uses_window = 0,
};

static void send_msg(const void *buf, size_t size, int peer, int tag)
{
    mf_bench_mpi_ok(MPI_Send(buf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD), "MPI_Send");
}

static void recv_msg(void *buf, size_t size, int peer, int tag)
{
    mf_bench_mpi_ok(
        MPI_Recv(buf, (int)size, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        "MPI_Recv");
}

/* Untimed round trips whose payload is filled and checked on both sides, so a library that
 * delivers wrong data is caught before its numbers are printed. */
static void warm_up(void *sbuf, void *rbuf, size_t size, int warmup, int rank)
{
    int peer = 1 - rank;

    for (int i = 0; i < warmup; i++) {
        unsigned ping_seed = (unsigned)(2 * i);
        unsigned pong_seed = (unsigned)(2 * i + 1);

        if (rank == 0) {
            mf_bench_fill(sbuf, size, ping_seed);
            send_msg(sbuf, size, peer, PING_TAG);
            recv_msg(rbuf, size, peer, PONG_TAG);
            mf_bench_verify(rbuf, size, pong_seed, latency_info.name);
        } else {
            recv_msg(rbuf, size, peer, PING_TAG);
            mf_bench_verify(rbuf, size, ping_seed, latency_info.name);
            mf_bench_fill(sbuf, size, pong_seed);
            send_msg(sbuf, size, peer, PONG_TAG);
        }
    }
}

/* One timed loop of iters round trips; returns the one-way latency in microseconds (only
 * meaningful on rank 0, which starts and ends every round trip). */
static double timed_loop(void *sbuf, void *rbuf, size_t size, int iters, int rank)
{
    int peer = 1 - rank;
    double start;

    mf_bench_mpi_ok(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    start = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            send_msg(sbuf, size, peer, PING_TAG);
            recv_msg(rbuf, size, peer, PONG_TAG);
        } else {
            recv_msg(rbuf, size, peer, PING_TAG);
            send_msg(sbuf, size, peer, PONG_TAG);
        }
    }
    return (MPI_Wtime() - start) * 1e6 / (2.0 * iters);
}

/* Buffers and rank shared by every size of one run. */
typedef struct latency_ctx {
    void *sbuf;
    void *rbuf;
    int rank;
} latency_ctx_t;

static int measure_size(void *arg, const mf_bench_opts_t *opts, size_t size, double *samples)
{
    latency_ctx_t *ctx = arg;
    int iters = mf_bench_iters_for_size(opts, size, 2);

    warm_up(ctx->sbuf, ctx->rbuf, size, mf_bench_warmup_for_size(opts, iters), ctx->rank);
    for (int r = 0; r < opts->reps; r++)
        samples[r] = timed_loop(ctx->sbuf, ctx->rbuf, size, iters, ctx->rank);
    return iters;
}

static int run(const mf_bench_opts_t *opts, int rank)
{
    latency_ctx_t ctx = {
        .sbuf = mf_bench_alloc(opts->max_size),
        .rbuf = mf_bench_alloc(opts->max_size),
        .rank = rank,
    };
    int rc = mf_bench_run_sizes(&latency_info, opts, rank, measure_size, &ctx);

    free(ctx.rbuf);
    free(ctx.sbuf);
    return rc;
}

int main(int argc, char **argv)
{
    mf_bench_opts_t opts = {
        .min_size = 0,
        .max_size = 4 << 20,
        .iters = 10000,
        .reps = 5,
        .warmup = 100,
        .window = 1,
        .recv_buffers = 0,
        .byte_budget = 64 << 20,
        .json_path = NULL,
    };
    int rank = mf_bench_init(&argc, &argv, latency_info.name);
    int status = 0;

    if (rank < 0)
        return 1;
    switch (mf_bench_parse_args(argc, argv, latency_info.name, rank, &opts)) {
    case MF_BENCH_ARGS_RUN: status = run(&opts, rank); break;
    case MF_BENCH_ARGS_HELP: status = 0; break;
    case MF_BENCH_ARGS_BAD: status = 2; break;
    }
    mf_bench_mpi_ok(MPI_Finalize(), "MPI_Finalize");
    return status;
}
