/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Gather, MPI_Scatter and MPI_Alltoall where one block is one run of memory but the blocks
 * are not back to back: an int resized to the extent of two ints, so every other int of the
 * buffer is a gap. Some processes use that type and the others plain MPI_INT (same type
 * signature), so each process's layout differs while every process must still take the same
 * algorithm (the testlist forces each one). Every gap must keep its sentinel.
 */
#include "mtest.h"

#include <stdlib.h>

#define SENT (-7)

static MPI_Datatype spaced; /* an int with the extent of two */

/* The type this process uses on its "all" side, and how many ints apart its blocks are. */
static MPI_Datatype all_type(int rank, int *stride)
{
    *stride = rank % 2 == 0 ? 2 : 1;
    return rank % 2 == 0 ? spaced : MPI_INT;
}

static void check_blocks(const int *buf, int n, int stride, int (*want)(int), const char *what)
{
    for (int i = 0; i < n * stride; i++) {
        int expect = i % stride == 0 ? want(i / stride) : SENT;
        MTEST_CHECK(buf[i] == expect, "%s: int %d is %d, expected %d", what, i, buf[i], expect);
    }
}

static int g_rank;
static int from_block(int i)
{
    return 100 * i + 1;
}
static int to_me(int i)
{
    return 1000 * i + g_rank;
}

int main(int argc, char **argv)
{
    int rank, size, stride;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    g_rank = rank;
    MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &spaced);
    MPI_Type_commit(&spaced);
    int *all = malloc(2 * (size_t)size * sizeof(int)),
        *sbuf = malloc(2 * (size_t)size * sizeof(int));
    for (int root = 0; root < size; root++) {
        /* Gather: rank i contributes 100 i + 1 */
        MPI_Datatype t = all_type(root, &stride);
        int mine = from_block(rank);
        for (int i = 0; i < 2 * size; i++)
            all[i] = SENT;
        MPI_Gather(&mine, 1, MPI_INT, all, 1, t, root, MPI_COMM_WORLD);
        if (rank == root)
            check_blocks(all, size, stride, from_block, "MPI_Gather");
        /* Scatter: block i is 100 i + 1 */
        for (int i = 0; i < 2 * size; i++)
            all[i] = i % stride == 0 ? from_block(i / stride) : SENT;
        int got = SENT;
        MPI_Scatter(all, 1, t, &got, 1, MPI_INT, root, MPI_COMM_WORLD);
        MTEST_CHECK(got == from_block(rank), "MPI_Scatter from %d: got %d", root, got);
    }
    /* Alltoall: rank r sends 1000 r + i to rank i; receive spaced on even ranks, send spaced on
     * ranks where rank % 3 == 0 */
    int sstride = rank % 3 == 0 ? 2 : 1;
    MPI_Datatype st = rank % 3 == 0 ? spaced : MPI_INT;
    for (int i = 0; i < 2 * size; i++)
        sbuf[i] = i % sstride == 0 ? 1000 * rank + i / sstride : SENT;
    MPI_Datatype rt = all_type(rank, &stride);
    for (int i = 0; i < 2 * size; i++)
        all[i] = SENT;
    MPI_Alltoall(sbuf, 1, st, all, 1, rt, MPI_COMM_WORLD);
    check_blocks(all, size, stride, to_me, "MPI_Alltoall");
    free(all);
    free(sbuf);
    MPI_Type_free(&spaced);
    return mtest_finalize(0);
}
