/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * RMA under MPI_THREAD_MULTIPLE: inside one MPI_Win_lock_all epoch, MTEST_NTHREADS threads per
 * process (default 4) work on the same window at once. Each thread, ITER times: MPI_Fetch_and_op
 * +1 on the counter of rank (thread % size) and MPI_Win_flush (its fetched values must grow);
 * MPI_Accumulate MPI_SUM of rank + 1 onto a sum on every rank; MPI_Put of a new value into its
 * own slot on the right neighbour, MPI_Win_flush, MPI_Get of it back and MPI_Win_flush (the
 * value read is the one just put). After MPI_Win_unlock_all and a barrier every rank checks its
 * counter, its sum and the slots written by its left neighbour's threads.
 */
#define _POSIX_C_SOURCE 200809L

#include "mtest.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITER        50
#define MAX_THREADS 64

/* window layout (ints): [0] fetch-and-op counter, [1] accumulated sum, [2 + t] slot of thread t
 * of the left neighbour */
static MPI_Win win;
static int rank, nprocs;

static void *thread_main(void *arg)
{
    int t = (int)(intptr_t)arg, right = (rank + 1) % nprocs, target = t % nprocs;
    int one = 1, add = rank + 1, prev = -1;

    for (int i = 0; i < ITER; i++) {
        int old = -1, value = 1000000 * rank + 1000 * t + i, back = -1;
        MPI_Fetch_and_op(&one, &old, MPI_INT, target, 0, MPI_SUM, win);
        MPI_Win_flush(target, win);
        MTEST_CHECK(old > prev, "thread %d: fetched %d after %d", t, old, prev);
        prev = old;
        for (int r = 0; r < nprocs; r++)
            MPI_Accumulate(&add, 1, MPI_INT, r, 1, 1, MPI_INT, MPI_SUM, win);
        MPI_Put(&value, 1, MPI_INT, right, 2 + t, 1, MPI_INT, win);
        MPI_Win_flush(right, win);
        MPI_Get(&back, 1, MPI_INT, right, 2 + t, 1, MPI_INT, win);
        MPI_Win_flush(right, win);
        MTEST_CHECK(back == value, "thread %d: read back %d, put %d", t, back, value);
    }
    return NULL;
}

static int nthreads_from_env(void)
{
    const char *text = getenv("MTEST_NTHREADS");
    int n = text != NULL ? atoi(text) : 4;
    return n >= 1 && n <= MAX_THREADS ? n : 4;
}

int main(int argc, char **argv)
{
    int nthreads = nthreads_from_env(), *w;
    pthread_t threads[MAX_THREADS];

    int provided = mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    if (!MTEST_CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (%d)",
                     provided))
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Win_allocate((2 + nthreads) * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w,
                     &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < 2 + nthreads; i++)
        w[i] = i < 2 ? 0 : -1;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock_all(0, win);
    for (int t = 0; t < nthreads; t++) {
        int rc = pthread_create(&threads[t], NULL, thread_main, (void *)(intptr_t)t);
        if (rc != 0) {
            fprintf(stderr, "pthread_create: %s\n", strerror(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(threads[t], NULL);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    int left = (rank + nprocs - 1) % nprocs, fops = 0;
    for (int t = 0; t < nthreads; t++)
        fops += t % nprocs == rank ? nprocs * ITER : 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    MTEST_CHECK(w[0] == fops, "counter %d, expected %d", w[0], fops);
    MTEST_CHECK(w[1] == ITER * nthreads * nprocs * (nprocs + 1) / 2, "sum %d, expected %d", w[1],
                ITER * nthreads * nprocs * (nprocs + 1) / 2);
    for (int t = 0; t < nthreads; t++)
        MTEST_CHECK(w[2 + t] == 1000000 * left + 1000 * t + ITER - 1, "slot %d is %d", t, w[2 + t]);
    MPI_Win_unlock(rank, win);
    MPI_Win_free(&win);
    return mtest_finalize(0);
}
