/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The windowed streaming kernel shared by the bandwidth and message-rate benchmarks: rank 0
 * starts a window of nonblocking sends, rank 1 a window of nonblocking receives, both wait
 * for all of them, and rank 1 then sends a zero-byte acknowledgement so rank 0 cannot start
 * the next window (or stop its clock) before the data has arrived. Standard MPI only.
 */
#ifndef MF_BENCH_WINDOW_H
#define MF_BENCH_WINDOW_H

#include "bench_util.h"

#include <mpi.h>

/* Buffers and requests of one rank for a whole run (every size up to opts.max_size). */
typedef struct mf_bench_window {
    void *sbuf;        /* rank 0: one send buffer, read by every send of a window */
    char *rslots;      /* rank 1: nslots receive slots of slot_size bytes each */
    size_t slot_size;  /* bytes per receive slot (opts.max_size) */
    int nslots;        /* receive slots; message w of a window lands in slot w % nslots */
    MPI_Request *reqs; /* one request per message of a window */
    int window;        /* messages per window */
    int rank;          /* 0 sends, 1 receives */
} mf_bench_window_t;

/* Allocates what this rank needs for every size of opts. By default each receive of a window
 * gets its own slot, because MPI does not allow pending receives to share memory; with
 * opts.recv_buffers < window they share slots, which every MPI tolerates in practice (all
 * messages carry the same bytes) and which keeps the receive side in cache, as ucx_perftest
 * and osu_bw do. Sends always share one buffer (allowed since MPI-3.0). */
void mf_bench_window_create(mf_bench_window_t *win, const mf_bench_opts_t *opts, int rank);

void mf_bench_window_destroy(mf_bench_window_t *win);

/* Runs rounds untimed windows of size-byte messages whose content is filled on rank 0 and
 * checked on rank 1; aborts the job if a message arrives wrong. */
void mf_bench_window_warm_up(mf_bench_window_t *win, size_t size, int rounds, const char *name);

/* Runs rounds timed windows after a barrier and returns the elapsed seconds (the number that
 * counts is rank 0's: it starts the first send and ends on the last acknowledgement). */
double mf_bench_window_time(mf_bench_window_t *win, size_t size, int rounds);

#endif /* MF_BENCH_WINDOW_H */
