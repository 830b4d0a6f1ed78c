/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_T from several threads: half the threads exchange messages on communicators of their
 * own while the other half read the VCI counters in sessions of their own. The counters never
 * go down and, once the senders are done, account for every message.
 */
#include "mtest.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>

#define NMSG 200

static int rank, size, nvcis;
static MPI_Comm comms[64];
static atomic_int senders_done;
static int nsenders;

static void *sender(void *arg)
{
    int t = (int)(intptr_t)arg, buf = 0;
    int peer = rank ^ 1;
    for (int i = 0; i < NMSG; i++) {
        if (rank % 2 == 0) {
            MPI_Send(&buf, 1, MPI_INT, peer, i, comms[t]);
            MPI_Recv(&buf, 1, MPI_INT, peer, i, comms[t], MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&buf, 1, MPI_INT, peer, i, comms[t], MPI_STATUS_IGNORE);
            MPI_Send(&buf, 1, MPI_INT, peer, i, comms[t]);
        }
    }
    atomic_fetch_add(&senders_done, 1);
    return NULL;
}

static unsigned long long sum(const unsigned long long *v)
{
    unsigned long long s = 0;
    for (int i = 0; i < nvcis; i++)
        s += v[i];
    return s;
}

static void *reader(void *arg)
{
    (void)arg;
    int index, count;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    MTEST_CHECK(MPI_T_pvar_session_create(&s) == MPI_SUCCESS, "session_create");
    MTEST_CHECK(MPI_T_pvar_get_index("vci_sends", MPI_T_PVAR_CLASS_COUNTER, &index) == MPI_SUCCESS,
                "get_index");
    MTEST_CHECK(MPI_T_pvar_handle_alloc(s, index, NULL, &h, &count) == MPI_SUCCESS, "alloc");
    unsigned long long v[64], last = 0;
    int reads = 0;
    while (atomic_load(&senders_done) < nsenders || reads == 0) {
        MTEST_CHECK(MPI_T_pvar_read(s, h, v) == MPI_SUCCESS, "read");
        unsigned long long now = sum(v);
        MTEST_CHECK(now >= last, "vci_sends went down from %llu to %llu", last, now);
        last = now;
        reads++;
    }
    MTEST_CHECK(MPI_T_pvar_read(s, h, v) == MPI_SUCCESS, "read");
    MTEST_CHECK(MPI_T_pvar_session_free(&s) == MPI_SUCCESS, "session_free");
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, count, index;
    mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTEST_CHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS, "T_init");
    int nthreads = getenv("MTEST_NTHREADS") ? atoi(getenv("MTEST_NTHREADS")) : 4;
    if (nthreads < 2)
        nthreads = 2;
    nsenders = nthreads / 2;
    if (size % 2 != 0 && rank == size - 1)
        nsenders = 0; /* no partner: read only */
    for (int t = 0; t < nthreads / 2; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);

    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_get_index("vci_sends", MPI_T_PVAR_CLASS_COUNTER, &index);
    MTEST_CHECK(MPI_T_pvar_handle_alloc(s, index, NULL, &h, &nvcis) == MPI_SUCCESS, "alloc");

    pthread_t th[64];
    for (int t = 0; t < nthreads; t++) {
        int send = t < nthreads / 2;
        if (send && nsenders == 0)
            th[t] = 0;
        else
            pthread_create(&th[t], NULL, send ? sender : reader, (void *)(intptr_t)t);
    }
    for (int t = 0; t < nthreads; t++) {
        if (th[t] != 0)
            pthread_join(th[t], NULL);
    }
    unsigned long long v[64];
    MTEST_CHECK(MPI_T_pvar_read(s, h, v) == MPI_SUCCESS, "read");
    unsigned long long expect = (unsigned long long)nsenders * NMSG;
    MTEST_CHECK(sum(v) >= expect, "vci_sends sums to %llu, %llu messages were sent", sum(v),
                expect);
    MPI_T_pvar_session_free(&s);
    MTEST_CHECK(MPI_T_finalize() == MPI_SUCCESS, "T_finalize");
    for (int t = 0; t < nthreads / 2; t++)
        MPI_Comm_free(&comms[t]);
    (void)count;
    return mtest_finalize(0);
}
