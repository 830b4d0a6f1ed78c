/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Self-test of the test harness: rank 0 waits for a message nobody sends, so the job
 * must be stopped by its time limit. Listed as xfail with a short timeout: it passes only
 * while the launcher (or the runner's backstop) really ends a hung job.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int rank, never = 0;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        MPI_Recv(&never, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return mtest_finalize(0);
}
