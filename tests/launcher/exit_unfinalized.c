/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An MPI program whose rank 1 returns from main without MPI_Finalize while rank 0 waits for a
 * message from it: the job must end (launcher_case.sh, cases nofinalize_mpi and
 * hydra_nofinalize), not leave rank 0 waiting. Rank 0 reports if the receive ever returns.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, value = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1)
        return 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Recv(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank %d: the receive returned %d\n", rank, rc);
    MPI_Finalize();
    return 0;
}
