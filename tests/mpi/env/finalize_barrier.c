/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A process that calls MPI_Finalize does not complete another process's MPI_Barrier on
 * MPI_COMM_WORLD: the library's own synchronisation in MPI_Finalize is no user collective.
 * (The case behind it: one rank of a Python job dies of an exception, its exit handler calls
 * MPI_Finalize, and the other ranks walked through their barrier into code that assumed
 * everyone had reached it.) Rank 0 waits in MPI_Barrier in a second thread while the other
 * ranks finalize; the barrier must still be waiting a second later. Rank 0 then ends the job
 * with MPI_Abort(..., 0), since the others wait in MPI_Finalize for it. The program is
 * erroneous (not every rank calls the barrier), but the answer to it must not be silence.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <unistd.h>

static atomic_int passed;

static void *barrier_thread(void *arg)
{
    (void)arg;
    MPI_Barrier(MPI_COMM_WORLD);
    atomic_store(&passed, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0) {
        MPI_Finalize(); /* never joins rank 0's barrier */
        return 0;
    }
    if (provided < MPI_THREAD_MULTIPLE) {
        printf(" No Errors\n"); /* nothing to test without threads */
        fflush(stdout);
        MPI_Abort(MPI_COMM_WORLD, 0);
    }
    pthread_t thread;
    pthread_create(&thread, NULL, barrier_thread, NULL);
    for (int i = 0; i < 100 && !atomic_load(&passed); i++)
        usleep(10000);
    if (atomic_load(&passed))
        printf("MPI_Barrier on MPI_COMM_WORLD returned, but the other ranks only finalized\n");
    else
        printf(" No Errors\n");
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, atomic_load(&passed) ? 1 : 0);
    return 0;
}
