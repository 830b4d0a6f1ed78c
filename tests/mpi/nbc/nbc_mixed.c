/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several collectives outstanding at once on one communicator, completed in orders that differ
 * between processes (odd ranks wait in reverse, MPI_Waitany, MPI_Test loops, MPI_Testsome),
 * mixed with point-to-point requests on the same communicator in the same arrays; a persistent
 * allreduce started many times; starting it while active and cancelling it are refused with
 * MPI_ERR_REQUEST, and freeing it while inactive works.
 */
#include "mtest.h"

#include <stdlib.h>

#define K 8 /* outstanding collectives */

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    for (int mode = 0; mode < 4; mode++) {
        int bc[K], ar[K], in[K], sval = rank, rval = -1;
        MPI_Request r[2 * K + 2];
        /* Alternate bcast (root k % size) and allreduce, with barriers mixed in. */
        for (int k = 0; k < K; k++) {
            bc[k] = rank == k % size ? 100 * mode + k : -1;
            in[k] = rank + k;
            MPI_Ibcast(&bc[k], 1, MPI_INT, k % size, MPI_COMM_WORLD, &r[2 * k]);
            if (k % 3 == 2)
                MPI_Ibarrier(MPI_COMM_WORLD, &r[2 * k + 1]);
            else
                MPI_Iallreduce(&in[k], &ar[k], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[2 * k + 1]);
        }
        /* User traffic on the same communicator, with a tag a collective might have used. */
        MPI_Irecv(&rval, 1, MPI_INT, left, 4, MPI_COMM_WORLD, &r[2 * K]);
        MPI_Isend(&sval, 1, MPI_INT, right, 4, MPI_COMM_WORLD, &r[2 * K + 1]);
        int n = 2 * K + 2;
        if (mode == 0) {
            /* Odd ranks complete in reverse order. */
            for (int j = 0; j < n; j++) {
                int i = rank % 2 ? n - 1 - j : j;
                MTEST_CHECK(MPI_Wait(&r[i], MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait %d", i);
            }
        } else if (mode == 1) {
            for (int j = 0; j < n; j++) {
                int idx;
                MTEST_CHECK(MPI_Waitany(n, r, &idx, MPI_STATUS_IGNORE) == MPI_SUCCESS, "waitany");
                MTEST_CHECK(idx >= 0 && idx < n, "waitany index %d", idx);
            }
        } else if (mode == 2) {
            /* Test loops, starting from a rank-dependent request. */
            int left_n = n;
            while (left_n > 0) {
                for (int j = 0; j < n; j++) {
                    int i = (j + rank * 5) % n, flag = 0;
                    if (r[i] == MPI_REQUEST_NULL)
                        continue;
                    MTEST_CHECK(MPI_Test(&r[i], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS, "test");
                    if (flag)
                        left_n--;
                }
            }
        } else {
            int done = 0, idx[2 * K + 2], outc;
            while (done < n) {
                MTEST_CHECK(MPI_Testsome(n, r, &outc, idx, MPI_STATUSES_IGNORE) == MPI_SUCCESS,
                            "testsome");
                if (outc != MPI_UNDEFINED)
                    done += outc;
            }
        }
        for (int i = 0; i < n; i++)
            MTEST_CHECK(r[i] == MPI_REQUEST_NULL, "mode %d request %d not freed", mode, i);
        for (int k = 0; k < K; k++) {
            MTEST_CHECK(bc[k] == 100 * mode + k, "mode %d bcast %d = %d", mode, k, bc[k]);
            if (k % 3 != 2)
                MTEST_CHECK(ar[k] == size * (size - 1) / 2 + size * k, "mode %d allreduce %d = %d",
                            mode, k, ar[k]);
        }
        MTEST_CHECK(rval == left, "mode %d pt2pt got %d want %d", mode, rval, left);
    }

    /* Persistent allreduce started many times, interleaved with a non-blocking barrier. */
    int x = 0, sum = 0;
    MPI_Request p, b;
    MTEST_CHECK(MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                   &p) == MPI_SUCCESS,
                "allreduce_init");
    int flag = 0;
    MPI_Test(&p, &flag, MPI_STATUS_IGNORE);
    MTEST_CHECK(flag == 1 && p != MPI_REQUEST_NULL, "inactive persistent request tests done");
    for (int it = 0; it < 50; it++) {
        x = rank * it;
        MPI_Start(&p);
        MPI_Ibarrier(MPI_COMM_WORLD, &b);
        if (it == 0) {
            int rc = MPI_Start(&p);
            MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Start");
            rc = MPI_Cancel(&p);
            MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Cancel");
        }
        if (it % 2) {
            MPI_Wait(&b, MPI_STATUS_IGNORE);
            MPI_Wait(&p, MPI_STATUS_IGNORE);
        } else {
            MPI_Request two[2] = {p, b};
            MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
            MTEST_CHECK(two[0] == p && two[1] == MPI_REQUEST_NULL, "waitall handles");
        }
        MTEST_CHECK(sum == it * size * (size - 1) / 2, "persistent round %d sum %d", it, sum);
    }
    MTEST_CHECK(MPI_Request_free(&p) == MPI_SUCCESS && p == MPI_REQUEST_NULL, "free inactive");
    return mtest_finalize(0);
}
