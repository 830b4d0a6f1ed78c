/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_split_type on an intercommunicator (as mpi4py's tests call it): MPI_COMM_TYPE_SHARED
 * splits each group by node and pairs the groups' processes of one node, so on one host the
 * result has the local group's and the remote group's sizes; MPI_UNDEFINED gives
 * MPI_COMM_NULL; a hardware split there is MPI_ERR_COMM.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm local, inter, node, out;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 3, &inter);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsize, lsize, rsize, flag = 0;
    MPI_Comm_size(node, &nsize);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);

    rc = MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &out);
    MTEST_CHECK(rc == MPI_SUCCESS && out != MPI_COMM_NULL, "shared split of an intercommunicator");
    if (rc == MPI_SUCCESS && out != MPI_COMM_NULL) {
        int a, b;
        MPI_Comm_test_inter(out, &flag);
        MPI_Comm_size(out, &a);
        MPI_Comm_remote_size(out, &b);
        /* one node: the whole groups */
        if (nsize == size)
            MTEST_CHECK(flag && a == lsize && b == rsize, "inter %d, sizes %d/%d, expected %d/%d",
                        flag, a, b, lsize, rsize);
        MPI_Barrier(out);
        MPI_Comm_free(&out);
    }
    rc = MPI_Comm_split_type(inter, MPI_UNDEFINED, 0, MPI_INFO_NULL, &out);
    MTEST_CHECK(rc == MPI_SUCCESS && out == MPI_COMM_NULL, "MPI_UNDEFINED gave a communicator");
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    rc = MPI_Comm_split_type(inter, MPI_COMM_TYPE_HW_UNGUIDED, 0, MPI_INFO_NULL, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_split_type");
    MPI_Comm_free(&node);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mtest_finalize(0);
}
