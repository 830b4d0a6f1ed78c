/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Init and MPI_Finalize with the state queries around them: MPI_Initialized and
 * MPI_Finalized before, during and after, MPI_Comm_rank/MPI_Comm_size on MPI_COMM_WORLD
 * and MPI_COMM_SELF (world ranks must be distinct and cover 0..size-1), MPI_Query_thread
 * and MPI_Is_thread_main. The checks after MPI_Finalize cannot be reported through
 * mtest_finalize, so they turn into a non-zero exit status instead.
 */
#include "mtest.h"

#include <stdio.h>

static void check_world_ranks(int rank, int size)
{
    if (rank != 0) {
        MPI_Send(&rank, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
        return;
    }
    for (int src = 1; src < size; src++) {
        int other = -1;

        MPI_Recv(&other, 1, MPI_INT, src, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MTEST_CHECK(other == src, "rank %d reports itself as rank %d", src, other);
    }
}

int main(int argc, char **argv)
{
    int flag = -1, rank = -1, size = -1, level = -1;
    int rc;

    MPI_Initialized(&flag);
    MTEST_CHECK(flag == 0, "MPI_Initialized before MPI_Init gave %d", flag);
    MPI_Finalized(&flag);
    MTEST_CHECK(flag == 0, "MPI_Finalized before MPI_Init gave %d", flag);

    mtest_init(&argc, &argv);

    MPI_Initialized(&flag);
    MTEST_CHECK(flag == 1, "MPI_Initialized after MPI_Init gave %d", flag);
    MPI_Finalized(&flag);
    MTEST_CHECK(flag == 0, "MPI_Finalized after MPI_Init gave %d", flag);

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTEST_CHECK(size >= 1 && rank >= 0 && rank < size, "world rank %d size %d", rank, size);
    MPI_Comm_rank(MPI_COMM_SELF, &rank);
    MPI_Comm_size(MPI_COMM_SELF, &size);
    MTEST_CHECK(rank == 0 && size == 1, "self rank %d size %d", rank, size);

    MPI_Query_thread(&level);
    MTEST_CHECK(level == MPI_THREAD_SINGLE || level == MPI_THREAD_FUNNELED ||
                    level == MPI_THREAD_SERIALIZED || level == MPI_THREAD_MULTIPLE,
                "MPI_Query_thread gave %d", level);
    flag = -1;
    MPI_Is_thread_main(&flag);
    MTEST_CHECK(flag == 1, "MPI_Is_thread_main on the main thread gave %d", flag);

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_world_ranks(rank, size);

    rc = mtest_finalize(0);

    MPI_Finalized(&flag);
    if (flag != 1) {
        fprintf(stderr, "MPI_Finalized after MPI_Finalize gave %d\n", flag);
        rc = 1;
    }
    MPI_Initialized(&flag);
    if (flag != 1) {
        fprintf(stderr, "MPI_Initialized after MPI_Finalize gave %d\n", flag);
        rc = 1;
    }
    return rc;
}
