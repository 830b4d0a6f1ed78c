/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Concurrent connections: on each of world ranks 0 and 1, NTHREADS threads each open a port
 * (rank 0) or connect to one (rank 1) over a copy of MPI_COMM_SELF of its own (accept and
 * connect are collective: threads must not share the communicator) at the same time, then exchange
 * messages on their own intercommunicator. The handshakes of different connections run
 * between the same two processes at once and must never take each other's messages.
 */
#include "mtest.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define NTHREADS 4

static char ports[NTHREADS][MPI_MAX_PORT_NAME];
static MPI_Comm selfs[NTHREADS];
static int rank;

static void *run(void *arg)
{
    int t = (int)(long)arg;
    MPI_Comm inter;
    int rc = rank == 0 ? MPI_Comm_accept(ports[t], MPI_INFO_NULL, 0, selfs[t], &inter)
                       : MPI_Comm_connect(ports[t], MPI_INFO_NULL, 0, selfs[t], &inter);
    MTEST_CHECK(rc == MPI_SUCCESS, "thread %d: accept/connect failed", t);
    if (rc != MPI_SUCCESS)
        return NULL;
    for (int i = 0; i < 20; i++) {
        int mine = rank * 100000 + t * 1000 + i, theirs = -1;
        MPI_Sendrecv(&mine, 1, MPI_INT, 0, i, &theirs, 1, MPI_INT, 0, i, inter, MPI_STATUS_IGNORE);
        MTEST_CHECK(theirs == (1 - rank) * 100000 + t * 1000 + i, "thread %d got %d", t, theirs);
    }
    MPI_Comm_disconnect(&inter);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided == MPI_THREAD_MULTIPLE && size >= 2 && rank < 2) {
        if (rank == 0)
            for (int t = 0; t < NTHREADS; t++)
                MPI_Open_port(MPI_INFO_NULL, ports[t]);
        MPI_Comm pair;
        MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &pair);
        MPI_Bcast(ports, (int)sizeof(ports), MPI_CHAR, 0, pair);
        pthread_t th[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            MPI_Comm_dup(MPI_COMM_SELF, &selfs[t]);
        for (int t = 0; t < NTHREADS; t++)
            pthread_create(&th[t], NULL, run, (void *)(long)t);
        for (int t = 0; t < NTHREADS; t++) {
            pthread_join(th[t], NULL);
            MPI_Comm_free(&selfs[t]);
        }
        if (rank == 0)
            for (int t = 0; t < NTHREADS; t++)
                MPI_Close_port(ports[t]);
        MPI_Comm_free(&pair);
    } else if (size >= 2) {
        MPI_Comm pair;
        MPI_Comm_split(MPI_COMM_WORLD, MPI_UNDEFINED, rank, &pair);
    }
    return mtest_finalize(0);
}
