/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Gather, MPI_Gatherv, MPI_Scatter, MPI_Scatterv, MPI_Allgather and MPI_Allgatherv (int and
 * _c forms) from every root, with 0, 1 and odd block sizes, uneven counts and shuffled
 * displacements in the v forms, and MPI_IN_PLACE at the root (gather, scatter) or everywhere
 * (allgather); every element names its origin, so a misplaced block is caught.
 */
#include "mtest.h"

#include <stdlib.h>

static int val(int origin, int i)
{
    return origin * 10000 + i;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *counts = mtest_calloc((size_t)size, sizeof(int)),
        *displs = mtest_calloc((size_t)size, sizeof(int));
    MPI_Count *ccounts = mtest_calloc((size_t)size, sizeof(MPI_Count));
    MPI_Aint *cdispls = mtest_calloc((size_t)size, sizeof(MPI_Aint));
    const int ns[] = {0, 1, 5, 3001};
    for (int ni = 0; ni < 4; ni++) {
        int n = ns[ni];
        /* v layout: rank i gets n + i items, blocks stored in reverse rank order. */
        int total = 0;
        for (int i = size - 1; i >= 0; i--) {
            counts[i] = n + i, displs[i] = total, total += n + i;
            ccounts[i] = counts[i], cdispls[i] = displs[i];
        }
        int *all = mtest_calloc((size_t)total + (size_t)n * (size_t)size + 1, sizeof(int));
        int *one = mtest_calloc((size_t)n + (size_t)size + 1, sizeof(int));
        for (int root = 0; root < size; root++) {
            for (int in_place = 0; in_place < 2; in_place++) {
                int ip = in_place && rank == root;
                /* Gather, uniform. */
                for (int i = 0; i < n; i++)
                    one[i] = val(rank, i);
                for (int i = 0; i < n * size; i++)
                    all[i] = -1;
                if (ip)
                    for (int i = 0; i < n; i++)
                        all[rank * n + i] = val(rank, i);
                int rc = MPI_Gather(ip ? MPI_IN_PLACE : one, n, MPI_INT, all, n, MPI_INT, root,
                                    MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "gather rc %d", rc);
                if (rank == root)
                    for (int i = 0; i < n * size; i++)
                        if (!MTEST_CHECK(all[i] == val(i / n, i % n),
                                         "gather n %d root %d ip %d [%d]=%d", n, root, ip, i,
                                         all[i]))
                            break;
                /* Scatter, uniform. */
                for (int i = 0; i < n * size; i++)
                    all[i] = val(i / n, i % n);
                for (int i = 0; i < n; i++)
                    one[i] = -1;
                rc = MPI_Scatter_c(all, n, MPI_INT, ip ? MPI_IN_PLACE : one, n, MPI_INT, root,
                                   MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "scatter rc %d", rc);
                if (!ip)
                    for (int i = 0; i < n; i++)
                        if (!MTEST_CHECK(one[i] == val(rank, i), "scatter n %d root %d [%d]=%d", n,
                                         root, i, one[i]))
                            break;
                /* Gatherv. */
                for (int i = 0; i < n + rank; i++)
                    one[i] = val(rank, i);
                for (int i = 0; i < total; i++)
                    all[i] = -1;
                if (ip)
                    for (int i = 0; i < n + rank; i++)
                        all[displs[rank] + i] = val(rank, i);
                if (ni % 2)
                    rc = MPI_Gatherv(ip ? MPI_IN_PLACE : one, n + rank, MPI_INT, all, counts,
                                     displs, MPI_INT, root, MPI_COMM_WORLD);
                else
                    rc = MPI_Gatherv_c(ip ? MPI_IN_PLACE : one, n + rank, MPI_INT, all, ccounts,
                                       cdispls, MPI_INT, root, MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "gatherv rc %d", rc);
                if (rank == root)
                    for (int p = 0; p < size; p++)
                        for (int i = 0; i < counts[p]; i++)
                            MTEST_CHECK(all[displs[p] + i] == val(p, i),
                                        "gatherv n %d from %d [%d]=%d", n, p, i,
                                        all[displs[p] + i]);
                /* Scatterv. */
                for (int p = 0; p < size; p++)
                    for (int i = 0; i < counts[p]; i++)
                        all[displs[p] + i] = val(p, i);
                for (int i = 0; i < n + rank; i++)
                    one[i] = -1;
                if (ni % 2)
                    rc = MPI_Scatterv(all, counts, displs, MPI_INT, ip ? MPI_IN_PLACE : one,
                                      n + rank, MPI_INT, root, MPI_COMM_WORLD);
                else
                    rc = MPI_Scatterv_c(all, ccounts, cdispls, MPI_INT, ip ? MPI_IN_PLACE : one,
                                        n + rank, MPI_INT, root, MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "scatterv rc %d", rc);
                if (!ip)
                    for (int i = 0; i < n + rank; i++)
                        MTEST_CHECK(one[i] == val(rank, i), "scatterv n %d [%d]=%d", n, i, one[i]);
            }
        }
        /* Allgather(v), normal and in place. */
        for (int in_place = 0; in_place < 2; in_place++) {
            for (int i = 0; i < n * size; i++)
                all[i] = in_place && i / n == rank ? val(rank, i % n) : -1;
            for (int i = 0; i < n; i++)
                one[i] = val(rank, i);
            int rc = MPI_Allgather(in_place ? MPI_IN_PLACE : one, n, MPI_INT, all, n, MPI_INT,
                                   MPI_COMM_WORLD);
            MTEST_CHECK(rc == MPI_SUCCESS, "allgather rc %d", rc);
            for (int i = 0; i < n * size; i++)
                if (!MTEST_CHECK(all[i] == val(i / n, i % n), "allgather n %d ip %d [%d]=%d", n,
                                 in_place, i, all[i]))
                    break;
            for (int i = 0; i < total; i++)
                all[i] = -1;
            for (int i = 0; i < n + rank; i++) {
                one[i] = val(rank, i);
                if (in_place)
                    all[displs[rank] + i] = val(rank, i);
            }
            if (in_place)
                rc = MPI_Allgatherv_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, ccounts, cdispls,
                                      MPI_INT, MPI_COMM_WORLD);
            else
                rc = MPI_Allgatherv(one, n + rank, MPI_INT, all, counts, displs, MPI_INT,
                                    MPI_COMM_WORLD);
            MTEST_CHECK(rc == MPI_SUCCESS, "allgatherv rc %d", rc);
            for (int p = 0; p < size; p++)
                for (int i = 0; i < counts[p]; i++)
                    MTEST_CHECK(all[displs[p] + i] == val(p, i), "allgatherv n %d from %d [%d]=%d",
                                n, p, i, all[displs[p] + i]);
        }
        free(all), free(one);
    }
    free(counts), free(displs), free(ccounts), free(cdispls);
    return mtest_finalize(errs);
}
