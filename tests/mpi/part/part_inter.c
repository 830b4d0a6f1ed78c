/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned communication on an intercommunicator between the even and the odd ranks of
 * MPI_COMM_WORLD: local rank r of each group sends to remote rank r of the other (when it
 * exists) with MPI_Psend_init, and receives from it with MPI_Precv_init, both directions at
 * once, with 4 sender and 3 receiver partitions of ints, then with a strided datatype on the
 * sending side; several iterations, data checked as each partition arrives. Ranks are the
 * remote group's (MPI_ERR_RANK for one past it), and the status names the remote rank.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define NITER  3
#define NINTS  (12 * 50)
#define MPARTS 4
#define NPARTS 3

static int value(int from_group, int i, int it)
{
    return from_group * 1000003 + i * 7 + it * 131;
}

static void exchange(MPI_Comm inter, int group, int rank, int strided)
{
    int *sbuf = mtest_calloc(2 * NINTS, sizeof(int)); /* strided: every other int */
    int *rbuf = mtest_calloc(NINTS, sizeof(int));
    MPI_Datatype stype = MPI_INT, every_other;
    MPI_Request req[2];
    if (strided) {
        MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other);
        MPI_Type_commit(&every_other);
        stype = every_other;
    }
    MPI_Precv_init(rbuf, NPARTS, NINTS / NPARTS, MPI_INT, rank, 9, inter, MPI_INFO_NULL, &req[0]);
    MPI_Psend_init(sbuf, MPARTS, NINTS / MPARTS, stype, rank, 9, inter, MPI_INFO_NULL, &req[1]);
    if (strided)
        MPI_Type_free(&every_other);
    for (int it = 0; it < NITER; it++) {
        for (int i = 0; i < NINTS; i++) {
            sbuf[strided ? 2 * i : i] = value(group, i, it);
            if (strided)
                sbuf[2 * i + 1] = -1;
        }
        memset(rbuf, 0xff, NINTS * sizeof(int));
        MPI_Startall(2, req);
        for (int p = MPARTS - 1; p >= 0; p--)
            MPI_Pready(p, req[1]);
        for (int p = 0; p < NPARTS; p++) {
            int flag = 0;
            while (!flag)
                MPI_Parrived(req[0], p, &flag);
            for (int i = p * (NINTS / NPARTS); i < (p + 1) * (NINTS / NPARTS); i++)
                if (!MTEST_CHECK(rbuf[i] == value(!group, i, it),
                                 "group %d rank %d%s iter %d: partition %d item %d is %d, "
                                 "expected %d",
                                 group, rank, strided ? " strided" : "", it, p, i, rbuf[i],
                                 value(!group, i, it)))
                    break;
        }
        MPI_Status st[2];
        MPI_Waitall(2, req, st);
        MTEST_CHECK(st[0].MPI_SOURCE == rank && st[0].MPI_TAG == 9,
                    "receive status: source %d tag %d, expected remote rank %d tag 9",
                    st[0].MPI_SOURCE, st[0].MPI_TAG, rank);
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    int wrank, wsize;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int group = wrank % 2;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, group, wrank, &local);
    /* The other group's leader is world rank 1 (for the evens) or 0 (for the odds). */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, !group, 4, &inter);
    int rank, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    if (rank < rsize) {
        exchange(inter, group, rank, 0);
        exchange(inter, group, rank, 1);
    }
    /* A rank of the remote group's size is out of range, whatever the local group's size. */
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Request r = MPI_REQUEST_NULL;
    int x[4];
    int rc = MPI_Psend_init(x, 1, 4, MPI_INT, rsize, 0, inter, MPI_INFO_NULL, &r);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Psend_init");
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mtest_finalize(0);
}
