/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The windowed streaming kernel of the bandwidth and message-rate benchmarks (see
 * bench_window.h): a window of MPI_Isend on rank 0 against a window of MPI_Irecv on rank 1,
 * MPI_Waitall on both, then a zero-byte acknowledgement from rank 1 to rank 0.
 */
#include "bench_window.h"

#include <stdio.h>
#include <stdlib.h>

#define DATA_TAG 10
#define ACK_TAG  11

void mf_bench_window_create(mf_bench_window_t *win, const mf_bench_opts_t *opts, int rank)
{
    win->window = opts->window;
    win->rank = rank;
    win->slot_size = opts->max_size;
    win->nslots = opts->recv_buffers;
    win->sbuf = NULL;
    win->rslots = NULL;
    if (rank == 0)
        win->sbuf = mf_bench_alloc(opts->max_size);
    else
        win->rslots = mf_bench_alloc(opts->max_size * (size_t)win->nslots);
    win->reqs = calloc((size_t)opts->window, sizeof(*win->reqs));
    if (win->reqs == NULL) {
        fprintf(stderr, "bench: out of memory for %d requests\n", opts->window);
        mf_bench_abort();
    }
}

void mf_bench_window_destroy(mf_bench_window_t *win)
{
    free(win->reqs);
    free(win->rslots);
    free(win->sbuf);
}

static void send_window(mf_bench_window_t *win, size_t size)
{
    for (int w = 0; w < win->window; w++)
        mf_bench_mpi_ok(
            MPI_Isend(win->sbuf, (int)size, MPI_BYTE, 1, DATA_TAG, MPI_COMM_WORLD, &win->reqs[w]),
            "MPI_Isend");
    mf_bench_mpi_ok(MPI_Waitall(win->window, win->reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
    mf_bench_mpi_ok(MPI_Recv(NULL, 0, MPI_BYTE, 1, ACK_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                    "MPI_Recv");
}

static char *recv_slot(const mf_bench_window_t *win, int w)
{
    return win->rslots + (size_t)(w % win->nslots) * win->slot_size;
}

static void recv_window(mf_bench_window_t *win, size_t size)
{
    for (int w = 0; w < win->window; w++)
        mf_bench_mpi_ok(MPI_Irecv(recv_slot(win, w), (int)size, MPI_BYTE, 0, DATA_TAG,
                                  MPI_COMM_WORLD, &win->reqs[w]),
                        "MPI_Irecv");
    mf_bench_mpi_ok(MPI_Waitall(win->window, win->reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
    mf_bench_mpi_ok(MPI_Send(NULL, 0, MPI_BYTE, 0, ACK_TAG, MPI_COMM_WORLD), "MPI_Send");
}

static void run_window(mf_bench_window_t *win, size_t size)
{
    if (win->rank == 0)
        send_window(win, size);
    else
        recv_window(win, size);
}

static void verify_window(const mf_bench_window_t *win, size_t size, unsigned seed,
                          const char *name)
{
    for (int w = 0; w < win->nslots; w++)
        mf_bench_verify(recv_slot(win, w), size, seed, name);
}

void mf_bench_window_warm_up(mf_bench_window_t *win, size_t size, int rounds, const char *name)
{
    for (int i = 0; i < rounds; i++) {
        unsigned seed = (unsigned)i + 1u;

        if (win->rank == 0)
            mf_bench_fill(win->sbuf, size, seed);
        run_window(win, size);
        if (win->rank == 1)
            verify_window(win, size, seed, name);
    }
}

double mf_bench_window_time(mf_bench_window_t *win, size_t size, int rounds)
{
    double start;

    mf_bench_mpi_ok(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    start = MPI_Wtime();
    for (int i = 0; i < rounds; i++)
        run_window(win, size);
    return MPI_Wtime() - start;
}
