/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Predefined attributes of MPI_COMM_WORLD read with MPI_Comm_get_attr: MPI_TAG_UB is at
 * least 32767, the same on every rank, and a message with tag MPI_TAG_UB can be sent;
 * MPI_HOST and MPI_IO are MPI_PROC_NULL, MPI_ANY_SOURCE or a rank of MPI_COMM_WORLD;
 * MPI_WTIME_IS_GLOBAL is 0 or 1. The attribute value is a pointer to an int. MPI_UNIVERSE_SIZE,
 * when set, is at least the world size. With MTEST_UNIVERSE_CPUS=1 (the testlist's runs under
 * Manifold's mpiexec) Manifold must set it to the processors online when there are more of them
 * than processes (MPICH's spawn tests and mpi4py.futures size their work by it; it was the world
 * size, which left no room to spawn). With MTEST_UNIVERSE_SIZE=N (the testlist sets our
 * mpiexec's MANIFOLD_MPIEXEC_UNIVERSE_SIZE to the same) it must be N.
 */
#include "mtest.h"

#include <stdlib.h>
#include <unistd.h>

static int get_int_attr(int keyval, const char *name, int *value)
{
    int *ptr = NULL;
    int flag = 0;
    int rc = MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &ptr, &flag);

    if (!MTEST_CHECK(rc == MPI_SUCCESS && flag && ptr != NULL,
                     "MPI_Comm_get_attr(%s): rc %d flag %d", name, rc, flag)) {
        return 0;
    }
    *value = *ptr;
    return 1;
}

static int is_rank_or_marker(int value, int size)
{
    return value == MPI_PROC_NULL || value == MPI_ANY_SOURCE || (value >= 0 && value < size);
}

static void check_tag_ub_everywhere(int tag_ub, int rank, int size)
{
    int self_recv = -1, self_send = 42;
    MPI_Request req;
    MPI_Status status;

    /* the largest valid tag works, here on a message to oneself */
    MPI_Irecv(&self_recv, 1, MPI_INT, rank, tag_ub, MPI_COMM_WORLD, &req);
    MPI_Send(&self_send, 1, MPI_INT, rank, tag_ub, MPI_COMM_WORLD);
    MPI_Wait(&req, &status);
    MTEST_CHECK(self_recv == 42 && status.MPI_TAG == tag_ub, "message with tag %d: got %d tag %d",
                tag_ub, self_recv, status.MPI_TAG);

    if (rank != 0) {
        MPI_Send(&tag_ub, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        return;
    }
    for (int src = 1; src < size; src++) {
        int other = -1;

        MPI_Recv(&other, 1, MPI_INT, src, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MTEST_CHECK(other == tag_ub, "rank %d has MPI_TAG_UB %d, rank 0 has %d", src, other,
                    tag_ub);
    }
}

int main(int argc, char **argv)
{
    int rank, size, value = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (get_int_attr(MPI_TAG_UB, "MPI_TAG_UB", &value)) {
        MTEST_CHECK(value >= 32767, "MPI_TAG_UB is %d", value);
        check_tag_ub_everywhere(value, rank, size);
    }
    if (get_int_attr(MPI_HOST, "MPI_HOST", &value)) {
        MTEST_CHECK(value == MPI_PROC_NULL || (value >= 0 && value < size), "MPI_HOST is %d",
                    value);
    }
    if (get_int_attr(MPI_IO, "MPI_IO", &value)) {
        MTEST_CHECK(is_rank_or_marker(value, size), "MPI_IO is %d", value);
    }
    if (get_int_attr(MPI_WTIME_IS_GLOBAL, "MPI_WTIME_IS_GLOBAL", &value)) {
        MTEST_CHECK(value == 0 || value == 1, "MPI_WTIME_IS_GLOBAL is %d", value);
    }
    int *universe = NULL, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &universe, &flag);
    if (flag)
        MTEST_CHECK(*universe >= size, "MPI_UNIVERSE_SIZE is %d, below %d", *universe, size);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const char *given = getenv("MTEST_UNIVERSE_SIZE");
    if (mtest_is_manifold() && given != NULL)
        MTEST_CHECK(flag && *universe == atoi(given), "MPI_UNIVERSE_SIZE is %d, not %s",
                    flag ? *universe : -1, given);
    if (mtest_is_manifold() && getenv("MTEST_UNIVERSE_CPUS") != NULL)
        MTEST_CHECK(flag && *universe == (cpus > size ? cpus : size),
                    "MPI_UNIVERSE_SIZE is %d, expected the larger of %ld processors and %d",
                    flag ? *universe : -1, cpus, size);
    return mtest_finalize(0);
}
