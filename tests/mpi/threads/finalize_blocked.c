/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Finalize while another thread still waits in MPI_Recv for a message nobody sends (an
 * erroneous program): finalize used to destroy the transport under the waiting thread, which
 * then crashed. Now it refuses with MPI_ERR_OTHER (MPI_ERRORS_RETURN here) and a message that
 * says why, and the library stays up; the test then sends the message, joins the thread and
 * exits, and the library shuts down at exit.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

static int received = -1;
static atomic_int started;

static void *blocked(void *arg)
{
    (void)arg;
    atomic_store(&started, 1);
    MPI_Recv(&received, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0, errs = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pthread_t thread;
    pthread_create(&thread, NULL, blocked, NULL);
    while (!atomic_load(&started))
        ;
    usleep(100000); /* well inside MPI_Recv */
    MPI_Barrier(MPI_COMM_WORLD);
    int rc = MPI_Finalize();
    int cls = MPI_SUCCESS, len = 0;
    char text[MPI_MAX_ERROR_STRING] = "";
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, text, &len);
    if (cls != MPI_ERR_OTHER || strstr(text, "still wait") == NULL) {
        errs++;
        fprintf(stderr, "MPI_Finalize with a thread waiting: class %d, \"%s\"\n", cls, text);
    }
    int value = 42; /* let the waiting thread go, as the program should have before */
    MPI_Send(&value, 1, MPI_INT, 0, 99, MPI_COMM_SELF);
    pthread_join(thread, NULL);
    if (received != 42) {
        errs++;
        fprintf(stderr, "the waiting thread received %d\n", received);
    }
    printf(errs == 0 ? " No Errors\n" : " Found %d errors\n", errs);
    return errs != 0;
}
