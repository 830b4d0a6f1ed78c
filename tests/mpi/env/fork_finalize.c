/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A child forked after MPI_Init that calls MPI_Finalize and exits normally (what a Python
 * child does through mpi4py's exit hook) must leave its parent's job alone: the child shares
 * the parent's launcher connection and transport descriptors. The parents then communicate
 * (point-to-point around a ring, an allreduce) and finalize; this crashed in the parent's
 * MPI_Finalize when the child had shut the shared descriptors down.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    pid_t child = fork();
    if (child == 0) {
        int rc = MPI_Finalize(), finalized = 0;
        MPI_Finalized(&finalized);
        exit(rc == MPI_SUCCESS && finalized ? 0 : 3);
    }
    int status = 0;
    if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0) {
        printf("rank %d: the child's MPI_Finalize did not succeed (status %d)\n", rank, status);
        errs++;
    }

    int token = rank, got = -1;
    MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (got != (rank + size - 1) % size) {
        printf("rank %d: got %d from the ring\n", rank, got);
        errs++;
    }
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) {
        printf("rank %d: allreduce gave %d\n", rank, sum);
        errs++;
    }
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs == 0 ? " No Errors\n" : " Found %d errors\n", errs);
    MPI_Finalize();
    return 0;
}
