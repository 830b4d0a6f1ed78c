/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_split_type. Every test runs on one host, so MPI_COMM_TYPE_SHARED gives every
 * process a communicator of all of them, ordered by key (reversed here); MPI_UNDEFINED gives
 * MPI_COMM_NULL; MPI_COMM_TYPE_HW_GUIDED with mpi_hw_resource_type=mpi_shared_memory is the
 * node too. Messages on the result work. An invalid split type gives MPI_ERR_ARG (every
 * process passes it, so none waits alone) and, on Manifold, a communicator handle passed as
 * the info MPI_ERR_INFO.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    MPI_Comm comm;
    MPI_Info info;
    int rank, size, value, got = -1, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL, &comm);
    MTEST_CHECK(comm != MPI_COMM_NULL, "shared split gave MPI_COMM_NULL");
    MPI_Comm_size(comm, &value);
    MTEST_CHECK(value == size, "shared communicator size %d, expected %d", value, size);
    MPI_Comm_rank(comm, &value);
    MTEST_CHECK(value == size - 1 - rank, "shared communicator rank %d (key reversed)", value);
    MPI_Sendrecv(&rank, 1, MPI_INT, (value + 1) % size, 1, &got, 1, MPI_INT,
                 (value + size - 1) % size, 1, comm, MPI_STATUS_IGNORE);
    MTEST_CHECK(got == (rank + 1) % size, "shared ring: got %d", got);
    MPI_Comm_free(&comm);

    /* every other process opts out */
    MPI_Comm_split_type(MPI_COMM_WORLD, rank % 2 ? MPI_UNDEFINED : MPI_COMM_TYPE_SHARED, 0,
                        MPI_INFO_NULL, &comm);
    if (rank % 2) {
        MTEST_CHECK(comm == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    } else {
        MPI_Comm_size(comm, &value);
        MTEST_CHECK(value == (size + 1) / 2, "shared communicator of evens: size %d", value);
        MPI_Comm_free(&comm);
    }

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, 0, info, &comm);
    MTEST_CHECK(comm != MPI_COMM_NULL, "hw_guided mpi_shared_memory gave MPI_COMM_NULL");
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_size(comm, &value);
        MTEST_CHECK(value == size, "hw_guided communicator size %d", value);
        MPI_Comm_free(&comm);
    }
    MPI_Info_free(&info);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    comm = MPI_COMM_NULL;
    rc = MPI_Comm_split_type(MPI_COMM_WORLD, 12345, 0, MPI_INFO_NULL, &comm);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Comm_split_type");
    MTEST_CHECK(comm == MPI_COMM_NULL, "a failed split_type set newcomm");
    if (mtest_is_manifold()) {
        /* a handle of another kind where an info object belongs */
        rc = MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                                 (MPI_Info)(void *)MPI_COMM_WORLD, &comm);
        MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Comm_split_type");
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize(0);
}
