/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned requests pair in the order of their init calls (MPI-4.1 4.2), not of their
 * starts: rank 0 makes A (4 ints) then B (8 ints) to rank 1 with one tag, rank 1 makes A' then
 * B'; the sender starts B before A (and the receiver, in the second half, B' before A'). Each
 * pair must carry its own data: pairing by first start put B's 8 ints against A's 4 (a
 * truncation) and left A' with nothing.
 */
#include "mtest.h"

#define NA 4
#define NB 8

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2 && rank < 2) {
        int a[NA], b[NB];
        MPI_Request r[2];
        if (rank == 0) {
            MPI_Psend_init(a, 1, NA, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
            MPI_Psend_init(b, 1, NB, MPI_INT, 1, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
        } else {
            MPI_Precv_init(a, 1, NA, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
            MPI_Precv_init(b, 1, NB, MPI_INT, 0, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
        }
        for (int round = 0; round < 4; round++) {
            for (int i = 0; i < NA; i++)
                a[i] = rank == 0 ? 100 * round + i : -1;
            for (int i = 0; i < NB; i++)
                b[i] = rank == 0 ? 100 * round + 50 + i : -1;
            /* the sender always starts B first; the receiver too from round 2 on */
            int b_first = rank == 0 || round >= 2;
            MPI_Start(&r[b_first ? 1 : 0]);
            MPI_Start(&r[b_first ? 0 : 1]);
            if (rank == 0) {
                MPI_Pready(0, r[1]);
                MPI_Pready(0, r[0]);
            }
            int rc = MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            MTEST_CHECK(rc == MPI_SUCCESS, "round %d: MPI_Waitall failed (%d)", round, rc);
            for (int i = 0; rank == 1 && i < NA; i++)
                MTEST_CHECK(a[i] == 100 * round + i, "round %d: A[%d] is %d", round, i, a[i]);
            for (int i = 0; rank == 1 && i < NB; i++)
                MTEST_CHECK(b[i] == 100 * round + 50 + i, "round %d: B[%d] is %d", round, i, b[i]);
        }
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
    }
    return mtest_finalize(0);
}
