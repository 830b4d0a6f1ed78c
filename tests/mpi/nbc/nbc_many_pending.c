/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Many nonblocking collectives outstanding on one communicator, completed one at a time by
 * MPI_Waitany and in groups by MPI_Testsome / MPI_Waitsome. Each test of a collective request
 * used to advance every started schedule, so one pass over the array cost requests x
 * schedules: 2000 MPI_Ibarrier took 7 s to Waitany (20 s to Testsome) on two processes, 50-150
 * times MPICH, and under the sanitizers longer than this test's time limit. With MTEST_NTHREADS
 * set, that many threads do the same on communicators of their own (under ThreadSanitizer:
 * a finished schedule read its request after publishing it as done, while the owner could
 * already be releasing it).
 */
#define _POSIX_C_SOURCE 200809L

#include "mtest.h"

#include <pthread.h>
#include <stdlib.h>

#define NREQ 2000

struct worker {
    MPI_Comm comm;
    int id;
};

static void *work(void *arg)
{
    struct worker *w = arg;
    int rank, size;
    MPI_Comm_rank(w->comm, &rank);
    MPI_Comm_size(w->comm, &size);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * NREQ);
    int *in = malloc(sizeof(int) * NREQ), *out = malloc(sizeof(int) * NREQ);
    int *idx = malloc(sizeof(int) * NREQ);
    for (int how = 0; how < 3; how++) {
        /* barriers and sums alternate */
        for (int i = 0; i < NREQ; i++) {
            in[i] = rank + i;
            out[i] = -1;
            if (i % 2 == 0)
                MPI_Ibarrier(w->comm, &reqs[i]);
            else
                MPI_Iallreduce(&in[i], &out[i], 1, MPI_INT, MPI_SUM, w->comm, &reqs[i]);
        }
        int left = NREQ;
        while (left > 0) {
            int n = 0, one = MPI_UNDEFINED;
            if (how == 0) {
                MPI_Waitany(NREQ, reqs, &one, MPI_STATUS_IGNORE);
                n = one == MPI_UNDEFINED ? 0 : 1;
            } else if (how == 1) {
                MPI_Testsome(NREQ, reqs, &n, idx, MPI_STATUSES_IGNORE);
            } else {
                MPI_Waitsome(NREQ, reqs, &n, idx, MPI_STATUSES_IGNORE);
            }
            MTEST_CHECK(n != MPI_UNDEFINED, "thread %d: no active request left with %d to go",
                        w->id, left);
            if (n == MPI_UNDEFINED)
                break;
            left -= n;
        }
        for (int i = 1; i < NREQ; i += 2) {
            int want = size * i + size * (size - 1) / 2;
            if (out[i] != want) {
                MTEST_CHECK(0, "thread %d way %d: sum %d is %d, not %d", w->id, how, i, out[i],
                            want);
                break;
            }
        }
    }
    free(reqs);
    free(in);
    free(out);
    free(idx);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *env = getenv("MTEST_NTHREADS");
    int nthreads = env != NULL ? atoi(env) : 0;
    if (nthreads < 0 || nthreads > 64)
        nthreads = 0;
    if (nthreads > 0) {
        int provided = 0;
        mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
        MPI_Query_thread(&provided);
        if (provided != MPI_THREAD_MULTIPLE)
            nthreads = 0;
    } else {
        mtest_init(&argc, &argv);
    }
    if (nthreads == 0) {
        struct worker w = {MPI_COMM_WORLD, 0};
        work(&w);
        return mtest_finalize(0);
    }
    struct worker *ws = malloc(sizeof(*ws) * (size_t)nthreads);
    pthread_t *th = malloc(sizeof(*th) * (size_t)nthreads);
    for (int t = 0; t < nthreads; t++) {
        ws[t].id = t;
        MPI_Comm_dup(MPI_COMM_WORLD, &ws[t].comm);
    }
    for (int t = 0; t < nthreads; t++)
        pthread_create(&th[t], NULL, work, &ws[t]);
    for (int t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        MPI_Comm_free(&ws[t].comm);
    }
    free(ws);
    free(th);
    return mtest_finalize(0);
}
