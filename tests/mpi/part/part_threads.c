/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Pready from many threads at once (MPI_THREAD_MULTIPLE): rank 0 sends to rank 1 over
 * NPART partitions, and MTEST_NTHREADS threads fill and mark interleaved partitions in
 * reverse order, racing with the library's flush of partitions queued before the receiver's
 * setup arrived (first iteration) or its re-arm token (later ones). The receiving threads each
 * wait with MPI_Parrived on their own partitions and check the data. With
 * MTEST_PART_WAIT_EARLY=1 the main thread waits for the request while its threads still mark
 * or poll partitions (MPI_Parrived of a request another thread completed is flag true).
 */
#include "mtest.h"

#include <pthread.h>
#include <stdlib.h>

#define NPART 64
#define PER   33
#define NITER 5

static int nthreads = 4, rank, iter;
static int *buf;
static MPI_Request req;

static void *send_thread(void *arg)
{
    int t = (int)(size_t)arg;
    for (int p = NPART - 1 - t; p >= 0; p -= nthreads) {
        for (int i = p * PER; i < (p + 1) * PER; i++)
            buf[i] = i + iter * 7919;
        MTEST_CHECK(MPI_Pready(p, req) == MPI_SUCCESS, "MPI_Pready(%d) failed", p);
    }
    return NULL;
}

static void *recv_thread(void *arg)
{
    int t = (int)(size_t)arg;
    for (int p = t; p < NPART; p += nthreads) {
        int flag = 0;
        while (!flag)
            MPI_Parrived(req, p, &flag);
        for (int i = p * PER; i < (p + 1) * PER; i++)
            if (!MTEST_CHECK(buf[i] == i + iter * 7919,
                             "iter %d partition %d item %d is %d, expected %d", iter, p, i, buf[i],
                             i + iter * 7919))
                break;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    const char *env = getenv("MTEST_NTHREADS");
    int wait_early = getenv("MTEST_PART_WAIT_EARLY") != NULL;
    if (env != NULL && atoi(env) > 0)
        nthreads = atoi(env);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided != MPI_THREAD_MULTIPLE || rank > 1)
        return mtest_finalize(0);
    buf = mtest_calloc(NPART * PER, sizeof(int));
    if (rank == 0)
        MPI_Psend_init(buf, NPART, PER, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    else
        MPI_Precv_init(buf, NPART, PER, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    pthread_t *th = mtest_calloc((size_t)nthreads, sizeof(pthread_t));
    for (iter = 0; iter < NITER; iter++) {
        MPI_Start(&req);
        for (int t = 0; t < nthreads; t++)
            pthread_create(&th[t], NULL, rank == 0 ? send_thread : recv_thread, (void *)(size_t)t);
        if (wait_early)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int t = 0; t < nthreads; t++)
            pthread_join(th[t], NULL);
        if (!wait_early)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&req);
    free(th);
    free(buf);
    return mtest_finalize(0);
}
