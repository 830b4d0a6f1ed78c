/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-contiguous messages from several threads at once (MPI_THREAD_MULTIPLE): each of 4
 * threads of rank 0 sends vectors of doubles, each with its own stride, to its partner thread
 * of rank 1, on a communicator of its own and on one shared by all threads; the receiver
 * checks every element and that the gaps are untouched. The testlist forces Manifold's
 * streaming path (the pack engine called from inside the transport under each channel's lock)
 * with MANIFOLD_DT_STREAM_BYTES; STREAM_THREADS_BLOCK (doubles per block, default 1) makes the
 * vectors' blocks longer, so that few large blocks go as a scatter-gather list instead. Then a
 * burst of small vectors per thread through MPI_Isend and MPI_Irecv, which pack into per-thread
 * buffers, on the thread's communicator and on a shared one.
 */
#include "mtest.h"

#include <pthread.h>
#include <stdlib.h>

#define NTHREADS 4
#define ROUNDS   2
#define ELEMS    (64 * 1024)

static int rank;
static MPI_Comm comms[NTHREADS];
static size_t blk = 1; /* doubles per block of the large vectors */

static void one_round(int t, MPI_Comm comm, int tag)
{
    int stride = 2 + t;
    size_t span = (size_t)stride * blk; /* a block and its gap, in doubles */
    double *buf = mtest_calloc((size_t)ELEMS * (size_t)stride, sizeof(double));
    MPI_Datatype vec;
    MPI_Type_vector((int)(ELEMS / blk), (int)blk, (int)span, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    if (rank == 0) {
        for (size_t i = 0; i < (size_t)ELEMS; i++)
            buf[i / blk * span + i % blk] = (double)(t * 1000000 + tag * 100000) + (double)i;
        MPI_Send(buf, 1, vec, 1, tag, comm);
    } else {
        for (size_t i = 0; i < (size_t)ELEMS * (size_t)stride; i++)
            buf[i] = -1.0;
        MPI_Recv(buf, 1, vec, 0, tag, comm, MPI_STATUS_IGNORE);
        size_t bad = 0;
        for (size_t i = 0; i < (size_t)ELEMS * (size_t)stride; i++) {
            double want = i % span < blk ? (double)(t * 1000000 + tag * 100000) +
                                               (double)(i / span * blk + i % span)
                                         : -1.0;
            bad += buf[i] != want;
        }
        MTEST_CHECK(bad == 0, "thread %d tag %d: %zu wrong doubles", t, tag, bad);
    }
    MPI_Type_free(&vec);
    free(buf);
}

/* Small vectors through the immediate forms (each thread's send buffer, its receive copies),
 * a burst of BURST messages in flight per thread, each with its own data. */
#define BURST 200
#define SMALL 4
static void small_burst(int t, MPI_Comm comm, int tag)
{
    int stride = 2 + t;
    size_t per = (size_t)SMALL * (size_t)stride;
    double *buf = mtest_calloc(BURST * per, sizeof(double));
    MPI_Request *reqs = mtest_calloc(BURST, sizeof(MPI_Request));
    MPI_Datatype vec;
    MPI_Type_vector(SMALL, 1, stride, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    for (size_t i = 0; i < BURST * per; i++)
        buf[i] = rank == 0 ? (double)(t * 1000000) + (double)i : -1.0;
    for (int m = 0; m < BURST; m++) {
        if (rank == 0)
            MPI_Isend(buf + (size_t)m * per, 1, vec, 1, tag, comm, &reqs[m]);
        else
            MPI_Irecv(buf + (size_t)m * per, 1, vec, 0, tag, comm, &reqs[m]);
    }
    MPI_Waitall(BURST, reqs, MPI_STATUSES_IGNORE);
    if (rank == 1) {
        size_t bad = 0;
        for (size_t i = 0; i < BURST * per; i++)
            bad += buf[i] != (i % (size_t)stride == 0 ? (double)(t * 1000000) + (double)i : -1.0);
        MTEST_CHECK(bad == 0, "thread %d: %zu wrong doubles in the small burst", t, bad);
    }
    MPI_Type_free(&vec);
    free(reqs);
    free(buf);
}

static void *worker(void *arg)
{
    int t = (int)(size_t)arg;
    for (int r = 0; r < ROUNDS; r++) {
        one_round(t, comms[t], r);
        /* on the shared communicator the tag tells the threads apart */
        one_round(t, MPI_COMM_WORLD, t + 1);
    }
    small_burst(t, comms[t], 50);
    /* on the shared communicator one thread's progress completes (and unpacks) the others'
     * receives, returning their temporaries to its own cache */
    small_burst(t, MPI_COMM_WORLD, 60 + t);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!MTEST_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided))
        return mtest_finalize(0);
    const char *b = getenv("STREAM_THREADS_BLOCK");
    if (b != NULL && atol(b) > 0 && ELEMS % atol(b) == 0)
        blk = (size_t)atol(b);
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    if (rank < 2) {
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            pthread_create(&th[t], NULL, worker, (void *)(size_t)t);
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(th[t], NULL);
    }
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_free(&comms[t]);
    return mtest_finalize(0);
}
