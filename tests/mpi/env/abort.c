/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Abort ends the whole job: the last rank calls MPI_Abort(MPI_COMM_WORLD, 3) while
 * every other rank waits for a message that never comes. The testlist marks this program
 * with label=abort, so the runner passes it only if the job ends on its own with a
 * non-zero exit status and without printing " No Errors".
 */
#include "mtest.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, never = 0;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == size - 1) {
        fprintf(stderr, "rank %d calls MPI_Abort with error code 3\n", rank);
        fflush(stderr);
        MPI_Abort(MPI_COMM_WORLD, 3);
    } else {
        MPI_Recv(&never, 1, MPI_INT, size - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    /* not reached when MPI_Abort works */
    return mtest_finalize(0);
}
