/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tool thread initialises MPI_T and reads a control variable over and over while the main
 * thread runs MPI_Init_thread: both load the tunables from the environment, and the reader
 * must only ever see the environment's value (MANIFOLD_VCI_COUNT=4 from the testlist, default
 * 0), never a default in passing. Under ThreadSanitizer the two loads and the reads raced
 * (plain stores). Not an mtest program: MPI_T must start before MPI_Init.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

static atomic_int stop;
static int errs, reads;

static void *tool(void *arg)
{
    (void)arg;
    int provided, index, count, value;
    MPI_T_cvar_handle h;
    if (MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS ||
        MPI_T_cvar_get_index("MANIFOLD_VCI_COUNT", &index) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(index, NULL, &h, &count) != MPI_SUCCESS) {
        printf("MPI_T set-up failed\n");
        errs++;
        return NULL;
    }
    do {
        if (MPI_T_cvar_read(h, &value) != MPI_SUCCESS || value != 4) {
            printf("MANIFOLD_VCI_COUNT read as %d\n", value);
            errs++;
            break;
        }
        reads++;
    } while (!atomic_load(&stop) || reads < 1000);
    MPI_T_cvar_handle_free(&h);
    MPI_T_finalize();
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank;
    pthread_t thread;
    pthread_create(&thread, NULL, tool, NULL);
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (errs != 0)
        printf(" Found %d errors\n", errs);
    else if (rank == 0)
        printf(" No Errors\n");
    return errs != 0;
}
