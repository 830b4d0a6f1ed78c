/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Invalid uses of intercommunicators, with MPI_ERRORS_RETURN: a remote rank out of range in
 * point-to-point (MPI_ERR_RANK), a topology constructor on an intercommunicator
 * (MPI_ERR_COMM). On Manifold only (MPICH 5 crashes or does not check): the remote size of an
 * intracommunicator (MPI_ERR_COMM), an out-of-range local leader (MPI_ERR_RANK),
 * MPI_COMM_NULL as peer_comm at the leaders (MPI_ERR_COMM), merge of an intracommunicator
 * (MPI_ERR_COMM), overlapping groups and a bad leader in MPI_Intercomm_create_from_groups
 * (MPI_ERR_GROUP, MPI_ERR_RANK) and MPI_Scan on an intercommunicator (MPI_ERR_COMM).
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int half = (wsize + 1) / 2, low = wrank < half;
    MPI_Comm local, inter = MPI_COMM_NULL, merged;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local);
    int lsize;
    MPI_Comm_size(local, &lsize);

    int rc;
    if (mtest_is_manifold()) { /* MPICH 5 does not check local_leader */
        rc = MPI_Intercomm_create(local, lsize, MPI_COMM_WORLD, 0, 1, &inter);
        MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Intercomm_create");
        rc = MPI_Intercomm_create(local, -1, MPI_COMM_WORLD, 0, 1, &inter);
        MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Intercomm_create");
    }
    /* Every leader passes MPI_COMM_NULL: both groups fail alike (MPICH 5 crashes here). */
    if (mtest_is_manifold()) {
        rc = MPI_Intercomm_create(local, 0, MPI_COMM_NULL, low ? half : 0, 1, &inter);
        MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Intercomm_create");
    }

    if (mtest_is_manifold()) { /* MPICH 5 crashes here */
        rc = MPI_Intercomm_merge(local, 0, &merged);
        MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Intercomm_merge: argument intercomm");
    }
    if (mtest_is_manifold()) { /* MPICH 5 answers */
        int n;
        rc = MPI_Comm_remote_size(local, &n);
        MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_remote_size");
    }

    rc = MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 1, &inter);
    MTEST_CHECK(rc == MPI_SUCCESS, "valid MPI_Intercomm_create failed");
    if (mtest_is_manifold()) { /* the message names the argument that is wrong */
        MPI_Comm again = MPI_COMM_NULL;
        rc = MPI_Intercomm_create(inter, 0, MPI_COMM_WORLD, 0, 2, &again);
        MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Intercomm_create: argument local_comm");
    }
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    int v = 0, v2 = 0;
    rc = MPI_Send(&v, 1, MPI_INT, rsize, 0, inter);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Send");
    MPI_Request req;
    rc = MPI_Irecv(&v, 1, MPI_INT, rsize + 3, 0, inter, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Irecv");

    int dims[1] = {lsize}, periods[1] = {0};
    MPI_Comm cart;
    rc = MPI_Cart_create(inter, 1, dims, periods, 0, &cart);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Cart_create");

    if (mtest_is_manifold()) {
        /* A prefix reduction is not defined on an intercommunicator (coll/inter_coll has the
         * other collective errors). */
        rc = MPI_Scan(&v, &v2, 1, MPI_INT, MPI_SUM, inter);
        MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Scan");
        /* Overlapping groups: found locally, before any message. */
        MPI_Group wg;
        MPI_Comm fg;
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        rc = MPI_Intercomm_create_from_groups(wg, 0, wg, 0, "overlap", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &fg);
        MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Intercomm_create_from_groups");
        rc = MPI_Intercomm_create_from_groups(wg, wsize, wg, 0, "bad leader", MPI_INFO_NULL,
                                              MPI_ERRORS_RETURN, &fg);
        MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Intercomm_create_from_groups");
        MPI_Group_free(&wg);
    }

    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mtest_finalize(0);
}
