/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One message of 2^31 + 24 bytes (more than an int can count) from rank 0 to rank 1 with
 * MPI_Send_c and MPI_Recv_c. MPI_Probe's status must count it right with
 * MPI_Get_count_c and MPI_Get_elements_c, while MPI_Get_count and MPI_Get_elements, whose
 * int result cannot hold it, must give MPI_UNDEFINED; the data must arrive intact. Needs
 * about 2 GiB of memory per rank (label large).
 */
#include "mtest.h"

#include <limits.h>
#include <stdlib.h>

#define NBYTES ((MPI_Count)INT_MAX + 25)

static void check_counts(const MPI_Status *status, const char *what)
{
    MPI_Count count_c = -1, elements_c = -1;
    int count = 0, elements = 0;

    MPI_Get_count(status, MPI_BYTE, &count);
    MPI_Get_elements(status, MPI_BYTE, &elements);
    MPI_Get_count_c(status, MPI_BYTE, &count_c);
    MPI_Get_elements_c(status, MPI_BYTE, &elements_c);
    MTEST_CHECK(count_c == NBYTES && elements_c == NBYTES,
                "%s: MPI_Get_count_c %lld, MPI_Get_elements_c %lld, expected %lld", what,
                (long long)count_c, (long long)elements_c, (long long)NBYTES);
    MTEST_CHECK(count == MPI_UNDEFINED && elements == MPI_UNDEFINED,
                "%s: MPI_Get_count %d, MPI_Get_elements %d, expected MPI_UNDEFINED", what, count,
                elements);
}

int main(int argc, char **argv)
{
    MPI_Status status;
    int rank, size, rc;
    char *buf = NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2 && rank < 2) {
        buf = mtest_calloc((size_t)NBYTES, 1);
    }
    if (size >= 2 && rank == 0) {
        mtest_fill(buf, (size_t)NBYTES, 9);
        rc = MPI_Send_c(buf, NBYTES, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Send_c of %lld bytes returned %d", (long long)NBYTES,
                    rc);
    } else if (size >= 2 && rank == 1) {
        MPI_Probe(0, 0, MPI_COMM_WORLD, &status);
        check_counts(&status, "MPI_Probe");
        rc = MPI_Recv_c(buf, NBYTES, MPI_BYTE, 0, 0, MPI_COMM_WORLD, &status);
        MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Recv_c returned %d", rc);
        check_counts(&status, "MPI_Recv_c");
        MTEST_CHECK(mtest_check_fill(buf, (size_t)NBYTES, 9) < 0, "wrong data");
    }
    free(buf);
    return mtest_finalize(0);
}
