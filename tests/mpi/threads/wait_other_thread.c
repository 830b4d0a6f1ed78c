/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests completed by a thread other than the one that started them, and completion calls
 * on requests from different communicators. Part one pairs threads: a producer starts
 * MPI_Irecv/MPI_Isend around a ring of processes and hands the requests over a queue to a
 * consumer, which completes them with MPI_Wait or an MPI_Test loop and checks the data. Part
 * two has every thread start a receive and a send on each of several communicators (dup'ed in
 * the main thread, same tag on all) and complete them together with MPI_Waitall, an
 * MPI_Testall loop, MPI_Waitany or MPI_Waitsome.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define NMSGS      100 /* per producer */
#define COUNT      16
#define NCOMMS     3
#define ITERATIONS 40

/* Part one: a queue of started requests, one per pair of threads. */
struct handoff {
    pthread_mutex_t lock;
    pthread_cond_t nonempty;
    MPI_Request reqs[2 * NMSGS]; /* even: receive of message i / 2, odd: its send */
    int produced;
    int id;
    uint32_t sbuf[NMSGS][COUNT];
    uint32_t rbuf[NMSGS][COUNT];
};

struct pair_arg {
    struct handoff *q;
    int is_producer;
};

static int g_rank, g_size;

static void *producer(struct handoff *q)
{
    int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;

    for (int i = 0; i < NMSGS; i++) {
        MPI_Request rreq, sreq;

        mt_fill(q->sbuf[i], COUNT, g_rank, q->id, i);
        MPI_Irecv(q->rbuf[i], COUNT, MPI_UINT32_T, left, q->id, MPI_COMM_WORLD, &rreq);
        MPI_Isend(q->sbuf[i], COUNT, MPI_UINT32_T, right, q->id, MPI_COMM_WORLD, &sreq);
        pthread_mutex_lock(&q->lock);
        q->reqs[2 * i] = rreq;
        q->reqs[2 * i + 1] = sreq;
        q->produced = 2 * i + 2;
        pthread_cond_signal(&q->nonempty);
        pthread_mutex_unlock(&q->lock);
    }
    return NULL;
}

static void complete_one(MPI_Request *req, int use_test, MPI_Status *status)
{
    int flag = 0;

    if (!use_test) {
        MPI_Wait(req, status);
        return;
    }
    while (!flag)
        MPI_Test(req, &flag, status);
}

static void *consumer(struct handoff *q)
{
    int left = (g_rank + g_size - 1) % g_size;

    for (int n = 0; n < 2 * NMSGS; n++) {
        MPI_Request req;
        MPI_Status status;
        int msg = n / 2, got = -1;

        pthread_mutex_lock(&q->lock);
        while (q->produced <= n)
            pthread_cond_wait(&q->nonempty, &q->lock);
        req = q->reqs[n];
        pthread_mutex_unlock(&q->lock);

        complete_one(&req, msg % 2, &status);
        MTEST_CHECK(req == MPI_REQUEST_NULL, "pair %d: request %d not freed", q->id, n);
        if (n % 2 == 1)
            continue;
        MPI_Get_count(&status, MPI_UINT32_T, &got);
        MTEST_CHECK(status.MPI_SOURCE == left && status.MPI_TAG == q->id && got == COUNT,
                    "pair %d message %d: status %d/%d/%d", q->id, msg, status.MPI_SOURCE,
                    status.MPI_TAG, got);
        MTEST_CHECK(mt_verify(q->rbuf[msg], COUNT, left, q->id, msg) < 0,
                    "pair %d message %d: wrong contents", q->id, msg);
    }
    return NULL;
}

static void *pair_main(void *arg)
{
    struct pair_arg *a = arg;

    return a->is_producer ? producer(a->q) : consumer(a->q);
}

static void run_handoff(int npairs)
{
    struct pair_arg args[MT_MAX_THREADS];
    struct handoff *queues = mtest_calloc((size_t)npairs, sizeof(*queues));

    for (int p = 0; p < npairs; p++) {
        pthread_mutex_init(&queues[p].lock, NULL);
        pthread_cond_init(&queues[p].nonempty, NULL);
        queues[p].id = p;
        args[2 * p] = (struct pair_arg){&queues[p], 1};
        args[2 * p + 1] = (struct pair_arg){&queues[p], 0};
    }
    mt_run(2 * npairs, pair_main, args, sizeof(args[0]));
    for (int p = 0; p < npairs; p++) {
        pthread_mutex_destroy(&queues[p].lock);
        pthread_cond_destroy(&queues[p].nonempty);
    }
    free(queues);
}

/* Part two. */
struct multi_arg {
    int id;
    MPI_Comm *comms;
};

enum { WITH_WAITALL, WITH_TESTALL, WITH_WAITANY, WITH_WAITSOME, NUM_METHODS };

/* Completes n requests with the given method; statuses[i] belongs to reqs[i]. */
static void complete_all(int method, int n, MPI_Request *reqs, MPI_Status *statuses)
{
    int done = 0, flag = 0, index, outcount, indices[2 * NCOMMS];
    MPI_Status some[2 * NCOMMS];

    switch (method) {
    case WITH_WAITALL: MPI_Waitall(n, reqs, statuses); break;
    case WITH_TESTALL:
        while (!flag)
            MPI_Testall(n, reqs, &flag, statuses);
        break;
    case WITH_WAITANY:
        for (done = 0; done < n; done++) {
            MPI_Status st;

            MPI_Waitany(n, reqs, &index, &st);
            if (index >= 0 && index < n)
                statuses[index] = st;
            else
                MTEST_CHECK(0, "MPI_Waitany returned index %d", index);
        }
        break;
    default:
        while (done < n) {
            MPI_Waitsome(n, reqs, &outcount, indices, some);
            MTEST_CHECK(outcount > 0 && outcount <= n - done, "MPI_Waitsome outcount %d", outcount);
            if (outcount <= 0 || outcount > n - done)
                break;
            for (int i = 0; i < outcount; i++)
                statuses[indices[i]] = some[i];
            done += outcount;
        }
        break;
    }
}

static void *multi_main(void *arg)
{
    const struct multi_arg *a = arg;
    int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
    uint32_t sbuf[NCOMMS][COUNT], rbuf[NCOMMS][COUNT];
    MPI_Request reqs[2 * NCOMMS];
    MPI_Status statuses[2 * NCOMMS];

    for (int it = 0; it < ITERATIONS; it++) {
        int method = (it + a->id) % NUM_METHODS;

        for (int c = 0; c < NCOMMS; c++) {
            mt_fill(sbuf[c], COUNT, g_rank, a->id * NCOMMS + c, it);
            MPI_Irecv(rbuf[c], COUNT, MPI_UINT32_T, left, a->id, a->comms[c], &reqs[c]);
        }
        for (int c = 0; c < NCOMMS; c++)
            MPI_Isend(sbuf[c], COUNT, MPI_UINT32_T, right, a->id, a->comms[c], &reqs[NCOMMS + c]);
        complete_all(method, 2 * NCOMMS, reqs, statuses);
        for (int i = 0; i < 2 * NCOMMS; i++)
            MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "method %d left request %d active", method, i);
        for (int c = 0; c < NCOMMS; c++) {
            MTEST_CHECK(statuses[c].MPI_SOURCE == left && statuses[c].MPI_TAG == a->id,
                        "method %d comm %d: status %d/%d", method, c, statuses[c].MPI_SOURCE,
                        statuses[c].MPI_TAG);
            MTEST_CHECK(mt_verify(rbuf[c], COUNT, left, a->id * NCOMMS + c, it) < 0,
                        "method %d thread %d comm %d iteration %d: wrong contents", method, a->id,
                        c, it);
        }
    }
    return NULL;
}

static void run_multi_comm(int nthreads)
{
    struct multi_arg args[MT_MAX_THREADS];
    MPI_Comm comms[NCOMMS];

    for (int c = 0; c < NCOMMS; c++) {
        if (MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]) != MPI_SUCCESS) {
            fprintf(stderr, "MPI_Comm_dup failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int t = 0; t < nthreads; t++)
        args[t] = (struct multi_arg){t, comms};
    mt_run(nthreads, multi_main, args, sizeof(args[0]));
    for (int c = 0; c < NCOMMS; c++)
        MPI_Comm_free(&comms[c]);
}

int main(int argc, char **argv)
{
    int nthreads;

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    nthreads = mt_nthreads(4, 2);

    run_handoff(nthreads / 2);
    MPI_Barrier(MPI_COMM_WORLD);
    run_multi_comm(nthreads);
    return mtest_finalize(0);
}
