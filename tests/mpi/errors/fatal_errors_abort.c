/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_ERRORS_ABORT (MPI-4): set on a dup of MPI_COMM_WORLD, an error on that communicator
 * must abort the job as MPI_Abort on it would, with a non-zero exit status, while the other
 * ranks block in MPI_Recv. Listed with label abort: the runner passes it only if the job
 * fails on its own. If the error returns instead, the program says so on stderr, releases
 * the other ranks and ends with " No Errors", which the runner reports as a failure.
 */
#include <stdio.h>

#include "mtest.h"

#define RELEASE_TAG 1

int main(int argc, char **argv)
{
    MPI_Comm comm = MPI_COMM_NULL;
    MPI_Errhandler current = MPI_ERRHANDLER_NULL;
    int rank, size, value = 0, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ABORT);
    MPI_Comm_get_errhandler(comm, &current);
    if (current != MPI_ERRORS_ABORT)
        fprintf(stderr, "[rank %d] MPI_Comm_get_errhandler does not give MPI_ERRORS_ABORT\n", rank);

    if (rank == 0) {
        /* an invalid tag: negative and not MPI_ANY_TAG (which is not valid for a send anyway) */
        rc = MPI_Send(&value, 1, MPI_INT, 0, -5, comm);
        fprintf(stderr, "MPI_ERRORS_ABORT did not abort: MPI_Send returned %d\n", rc);
        for (int r = 1; r < size; r++)
            MPI_Send(&value, 1, MPI_INT, r, RELEASE_TAG, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&value, 1, MPI_INT, 0, RELEASE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&comm);
    return mtest_finalize(0);
}
