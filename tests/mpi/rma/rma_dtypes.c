/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Derived datatypes in RMA, in fence epochs, each rank targeting its right neighbour. The whole
 * target window is checked element by element, gaps included (they must keep their sentinel):
 * - put: origin contiguous ints, target MPI_Type_vector (count 2 of it, so the extent counts);
 * - put: origin MPI_Type_vector, target contiguous ints;
 * - accumulate (MPI_SUM from every rank onto rank 0): origin contiguous, target an
 *   MPI_Type_create_struct of ints with holes;
 * - get: target MPI_Type_indexed into contiguous origin ints, and target contiguous into an
 *   origin MPI_Type_indexed (origin gaps untouched too).
 */
#include "mtest.h"

#define NWIN     64
#define SENTINEL (-1)

static int rank, nprocs, right, left;

static void reset(int *w)
{
    for (int i = 0; i < NWIN; i++)
        w[i] = SENTINEL;
}

/* w[i] must be want[i] where want[i] != SENTINEL, else SENTINEL */
static void check_window(const int *w, const int *want, const char *what)
{
    for (int i = 0; i < NWIN; i++)
        if (!MTEST_CHECK(w[i] == want[i], "%s: element %d is %d, expected %d", what, i, w[i],
                         want[i]))
            break;
}

int main(int argc, char **argv)
{
    int w[NWIN], want[NWIN], src[NWIN], got[NWIN];
    MPI_Datatype vec, vec2, strct, idx;
    MPI_Win win;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;
    for (int i = 0; i < NWIN; i++)
        src[i] = 100 * rank + i;
    reset(w);
    MPI_Win_create(w, sizeof(w), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    /* vector: 3 blocks of 2 ints, stride 5: extent 12 ints */
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(src, 12, MPI_INT, right, 3, 2, vec, win);
    MPI_Win_fence(0, win);
    reset(want);
    for (int k = 0, i = 0; k < 2; k++)
        for (int b = 0; b < 3; b++)
            for (int j = 0; j < 2; j++, i++)
                want[3 + 12 * k + 5 * b + j] = 100 * left + i;
    check_window(w, want, "contiguous to vector");

    /* origin vector of 4 single ints at stride 3 (from element 1) to contiguous at 40 */
    reset(w);
    MPI_Type_vector(4, 1, 3, MPI_INT, &vec2);
    MPI_Type_commit(&vec2);
    MPI_Win_fence(0, win);
    MPI_Put(src + 1, 1, vec2, right, 40, 4, MPI_INT, win);
    MPI_Win_fence(0, win);
    reset(want);
    for (int j = 0; j < 4; j++)
        want[40 + j] = 100 * left + 1 + 3 * j;
    check_window(w, want, "vector to contiguous");

    /* struct of ints: 2 at 0, 1 at 4, 3 at 7 (6 ints); accumulated by everyone onto rank 0 */
    int blens[3] = {2, 1, 3};
    MPI_Aint disps[3] = {0, 4 * sizeof(int), 7 * sizeof(int)};
    MPI_Datatype types[3] = {MPI_INT, MPI_INT, MPI_INT};
    MPI_Type_create_struct(3, blens, disps, types, &strct);
    MPI_Type_commit(&strct);
    for (int i = 0; i < NWIN; i++)
        w[i] = i < 10 ? 0 : SENTINEL;
    int ones[6] = {1, 2, 3, 4, 5, 6};
    MPI_Win_fence(0, win);
    MPI_Accumulate(ones, 6, MPI_INT, 0, 0, 1, strct, MPI_SUM, win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        static const int pos[6] = {0, 1, 4, 7, 8, 9};
        reset(want);
        for (int i = 0; i < 10; i++)
            want[i] = 0;
        for (int j = 0; j < 6; j++)
            want[pos[j]] = (j + 1) * nprocs;
        check_window(w, want, "accumulate into a struct");
    }

    /* indexed: blocks {1 at 0, 3 at 5, 2 at 10} (6 ints) */
    int iblens[3] = {1, 3, 2}, idisps[3] = {0, 5, 10};
    static const int ipos[6] = {0, 5, 6, 7, 10, 11};
    MPI_Type_indexed(3, iblens, idisps, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    for (int i = 0; i < NWIN; i++) {
        w[i] = 100 * rank + i;
        got[i] = SENTINEL;
    }
    MPI_Win_fence(0, win);
    MPI_Get(got, 6, MPI_INT, left, 20, 1, idx, win);      /* target indexed, origin contiguous */
    MPI_Get(got + 32, 1, idx, left, 50, 6, MPI_INT, win); /* target contiguous, origin indexed */
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    reset(want);
    for (int j = 0; j < 6; j++) {
        want[j] = 100 * left + 20 + ipos[j];
        want[32 + ipos[j]] = 100 * left + 50 + j;
    }
    for (int i = 0; i < NWIN; i++)
        if (!MTEST_CHECK(got[i] == want[i], "indexed gets: element %d is %d, expected %d", i,
                         got[i], want[i]))
            break;

    MPI_Type_free(&vec);
    MPI_Type_free(&vec2);
    MPI_Type_free(&strct);
    MPI_Type_free(&idx);
    MPI_Win_free(&win);
    return mtest_finalize(0);
}
