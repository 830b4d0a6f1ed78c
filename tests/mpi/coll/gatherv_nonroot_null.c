/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Gatherv and MPI_Scatterv (blocking) where the non-root processes pass NULL for the
 * arguments that are only significant at the root (counts, displacements, the root-side
 * buffer and type), as mpi4py does: every process must still run the v algorithm the root
 * runs (this hung when the non-roots took the MPI_Gather path).
 */
#include <stdlib.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size);
    int *all = malloc(sizeof(int) * (size_t)(4 * size + 1));
    for (int root = 0; root < size; root++) {
        for (int count = 0; count <= 4; count++) {
            int mine[4];
            for (int i = 0; i < count; i++)
                mine[i] = rank * 10 + i;
            for (int r = 0; r < size; r++)
                counts[r] = count, displs[r] = r * count;
            for (int i = 0; i < count * size; i++)
                all[i] = -1;
            if (rank == root)
                MPI_Gatherv(mine, count, MPI_INT, all, counts, displs, MPI_INT, root,
                            MPI_COMM_WORLD);
            else
                MPI_Gatherv(mine, count, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, root,
                            MPI_COMM_WORLD);
            for (int r = 0; rank == root && r < size; r++)
                for (int i = 0; i < count; i++)
                    MTEST_CHECK(all[r * count + i] == r * 10 + i,
                                "gatherv root %d count %d: block %d item %d is %d", root, count, r,
                                i, all[r * count + i]);
            int got[4] = {-1, -1, -1, -1};
            for (int i = 0; rank == root && i < count * size; i++)
                all[i] = 100 + i;
            if (rank == root)
                MPI_Scatterv(all, counts, displs, MPI_INT, got, count, MPI_INT, root,
                             MPI_COMM_WORLD);
            else
                MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, got, count, MPI_INT, root,
                             MPI_COMM_WORLD);
            for (int i = 0; i < count; i++)
                MTEST_CHECK(got[i] == 100 + rank * count + i,
                            "scatterv root %d count %d: item %d is %d", root, count, i, got[i]);
        }
    }
    free(counts);
    free(displs);
    free(all);
    return mtest_finalize(0);
}
