/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Code shared by the multithreaded test programs of this chapter: initialising MPI with
 * MPI_THREAD_MULTIPLE, reading the number of threads per process from the environment
 * (MTEST_NTHREADS, so one program can run with few threads or with more threads than cores),
 * running a team of pthreads over an array of per-thread arguments, and a deterministic
 * payload pattern for checking message contents. Everything is static inline so that each
 * test stays a single program built from its own .c file.
 */
#ifndef MT_COMMON_H
#define MT_COMMON_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mtest.h"

#define MT_MAX_THREADS 64

/* Initialises MPI asking for MPI_THREAD_MULTIPLE; returns 0 if it was provided, otherwise
 * counts an error and returns -1 (the caller then finalizes without starting threads). */
static inline int mt_init(int *argc, char ***argv)
{
    int provided = mtest_init_thread(argc, argv, MPI_THREAD_MULTIPLE);

    if (!MTEST_CHECK(provided == MPI_THREAD_MULTIPLE, "MPI_THREAD_MULTIPLE not provided (got %d)",
                     provided))
        return -1;
    return 0;
}

/* Threads per process: MTEST_NTHREADS when set to a value in [min_count, MT_MAX_THREADS],
 * otherwise default_count. */
static inline int mt_nthreads(int default_count, int min_count)
{
    const char *text = getenv("MTEST_NTHREADS");
    char *end = NULL;
    long value;

    if (text == NULL || *text == '\0')
        return default_count;
    value = strtol(text, &end, 10);
    if (*end != '\0' || value < min_count || value > MT_MAX_THREADS) {
        fprintf(stderr, "ignoring MTEST_NTHREADS=%s (allowed %d..%d)\n", text, min_count,
                MT_MAX_THREADS);
        return default_count;
    }
    return (int)value;
}

typedef void *(*mt_thread_fn_t)(void *arg);

/* Runs fn on count threads, thread i getting (char *)args + i * arg_size, and joins them all.
 * The patterns in these tests need every thread running, so a thread that cannot be started
 * aborts the job instead of letting it hang until the time limit. */
static inline void mt_run(int count, mt_thread_fn_t fn, void *args, size_t arg_size)
{
    pthread_t threads[MT_MAX_THREADS];
    int i;

    if (count <= 0 || count > MT_MAX_THREADS) {
        fprintf(stderr, "bad thread count %d\n", count);
        MPI_Abort(MPI_COMM_WORLD, 1);
        return;
    }
    for (i = 0; i < count; i++) {
        int rc = pthread_create(&threads[i], NULL, fn, (char *)args + (size_t)i * arg_size);

        if (rc != 0) {
            fprintf(stderr, "pthread_create of thread %d failed: %s\n", i, strerror(rc));
            MPI_Abort(MPI_COMM_WORLD, 1);
            return;
        }
    }
    for (i = 0; i < count; i++) {
        int rc = pthread_join(threads[i], NULL);

        MTEST_CHECK(rc == 0, "pthread_join of thread %d failed: %s", i, strerror(rc));
    }
}

/* Element index of the message identified by (src, id, seq): every message in a test gets
 * different contents, so a message delivered to the wrong receive is noticed. */
static inline uint32_t mt_pattern(int src, int id, int seq, int index)
{
    uint32_t h = (uint32_t)src * 0x9e3779b1u;

    h ^= (uint32_t)id * 0x85ebca77u;
    h ^= (uint32_t)seq * 0xc2b2ae3du;
    return h + (uint32_t)index;
}

static inline void mt_fill(uint32_t *buf, int count, int src, int id, int seq)
{
    for (int i = 0; i < count; i++)
        buf[i] = mt_pattern(src, id, seq, i);
}

/* Returns the index of the first element that differs from the pattern, or -1. */
static inline int mt_verify(const uint32_t *buf, int count, int src, int id, int seq)
{
    for (int i = 0; i < count; i++) {
        if (buf[i] != mt_pattern(src, id, seq, i))
            return i;
    }
    return -1;
}

#endif /* MT_COMMON_H */
