/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A partitioned send and receive whose buffers differ in size: both requests complete with
 * MPI_ERR_TRUNCATE and the receive buffer is left alone, whichever side is larger (a larger
 * receive would have partitions no data ever covers; MPICH 5.0.2 refuses the pair too). The
 * partition layouts may differ when the sizes agree, so a matched exchange on the same tag
 * works afterwards. Its requests are left unfreed at MPI_Finalize, which is legal for inactive
 * persistent requests and must leave nothing behind (LeakSanitizer checks under ASan).
 * Another MPI only has to fail the receive of a mismatched pair (MPICH 5.0.2 fails it with
 * MPI_ERR_OTHER, lets the send succeed and fills what fits).
 */
#include "mtest.h"

static void check_wait(int rc, int expect, int is_recv)
{
    if (expect == MPI_SUCCESS)
        MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Wait of a matched pair failed: %d", rc);
    else if (mtest_is_manifold())
        MTEST_CHECK_ERR(rc, expect, "MPI_Wait");
    else if (is_recv)
        MTEST_CHECK(rc != MPI_SUCCESS, "the receive of a mismatched pair succeeded");
}

static void exchange(int rank, int sparts, int scount, int rparts, int rcount, int expect)
{
    int buf[16];
    MPI_Request req;
    MPI_Status st;
    for (int i = 0; i < 16; i++)
        buf[i] = rank == 0 ? i + 1 : -1;
    if (rank == 0) {
        MPI_Psend_init(buf, sparts, scount, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        MPI_Start(&req);
        MPI_Pready_range(0, sparts - 1, req);
        check_wait(MPI_Wait(&req, &st), expect, 0);
    } else {
        MPI_Precv_init(buf, rparts, rcount, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
        MPI_Start(&req);
        check_wait(MPI_Wait(&req, &st), expect, 1);
        for (int i = 0; (expect == MPI_SUCCESS || mtest_is_manifold()) && i < rparts * rcount;
             i++) {
            int want = expect == MPI_SUCCESS ? i + 1 : -1;
            MTEST_CHECK(buf[i] == want, "%dx%d into %dx%d: item %d is %d, expected %d", sparts,
                        scount, rparts, rcount, i, buf[i], want);
        }
    }
    if (expect != MPI_SUCCESS)
        MPI_Request_free(&req);
    /* else left for MPI_Finalize */
}

int main(int argc, char **argv)
{
    int rank;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    exchange(rank, 2, 4, 2, 2, MPI_ERR_TRUNCATE); /* the sender's is larger */
    exchange(rank, 2, 2, 2, 4, MPI_ERR_TRUNCATE); /* the receiver's is larger */
    exchange(rank, 4, 1, 1, 2, MPI_ERR_TRUNCATE);
    exchange(rank, 4, 2, 2, 4, MPI_SUCCESS);
    return mtest_finalize(0);
}
