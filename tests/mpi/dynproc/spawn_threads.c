/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two threads of each parent spawn a child each, at the same time, round after round: every
 * child sends an empty message to its parents' root, receives one back and disconnects, and
 * so does the parents' side, before the child exits. The job must leave no transport error on
 * its output (the testlist sets MTEST_FAIL_ON_UCX_ERRORS): children that exited while a
 * parent's transport still connected to them made UCX print "Connection refused" in most runs
 * before MPI_Comm_disconnect waited for the connections to be set up.
 */
#include "mtest.h"

#include <pthread.h>

#define NTHREADS 2
#define ROUNDS   24

static MPI_Comm comms[NTHREADS];
static const char *program;

static void *spawner(void *arg)
{
    MPI_Comm comm = comms[(int)(intptr_t)arg], child;
    int rank, code = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_spawn(program, MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, comm, &child, &code);
    MTEST_CHECK(code == MPI_SUCCESS, "spawn error code %d", code);
    if (rank == 0) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 1, child, MPI_STATUS_IGNORE);
        MPI_Send(NULL, 0, MPI_BYTE, 0, 2, child);
    }
    MPI_Comm_disconnect(&child);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Send(NULL, 0, MPI_BYTE, 0, 1, parent);
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 2, parent, MPI_STATUS_IGNORE);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    if (!MTEST_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided))
        return mtest_finalize(1);
    program = argv[0];
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    for (int round = 0; round < ROUNDS; round++) {
        pthread_t threads[NTHREADS];
        for (int t = 0; t < NTHREADS; t++)
            pthread_create(&threads[t], NULL, spawner, (void *)(intptr_t)t);
        for (int t = 0; t < NTHREADS; t++)
            pthread_join(threads[t], NULL);
    }
    for (int t = 0; t < NTHREADS; t++)
        MPI_Comm_free(&comms[t]);
    return mtest_finalize(0);
}
