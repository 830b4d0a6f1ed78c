/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Bcast and MPI_Bcast_c from every root, for 0, 1, an odd number of items and 1 MiB, with
 * MPI_INT, MPI_DOUBLE and MPI_BYTE; every rank checks every byte. Run with each algorithm
 * forced (MANIFOLD_COLL_BCAST in the testlist) as well as with the automatic choice.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int counts[] = {0, 1, 7, 1001, 1 << 18};
    MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_BYTE};
    for (int root = 0; root < size; root++) {
        for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
            for (int ti = 0; ti < 3; ti++) {
                int tsize;
                MPI_Type_size(types[ti], &tsize);
                size_t len = (size_t)counts[ci] * (size_t)tsize;
                unsigned char *buf = mtest_calloc(len + 1, 1);
                unsigned seed = (unsigned)root * 31 + (unsigned)ci * 7 + (unsigned)ti;
                if (rank == root)
                    mtest_fill(buf, len, seed);
                int rc;
                if (ci % 2)
                    rc = MPI_Bcast(buf, counts[ci], types[ti], root, MPI_COMM_WORLD);
                else
                    rc = MPI_Bcast_c(buf, counts[ci], types[ti], root, MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "bcast returned %d", rc);
                long bad = mtest_check_fill(buf, len, seed);
                MTEST_CHECK(bad < 0, "root %d count %d type %d: first wrong byte %ld", root,
                            counts[ci], ti, bad);
                free(buf);
            }
        }
    }
    return mtest_finalize(errs);
}
