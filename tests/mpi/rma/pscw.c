/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generalized active target synchronization with groups from MPI_Group_incl:
 * - a ring: each rank exposes its window to its left neighbour (MPI_Win_post) and accesses its
 *   right neighbour's (MPI_Win_start), puts and gets, MPI_Win_complete, then MPI_Win_wait or an
 *   MPI_Win_test loop until the flag is set, several rounds with new data;
 * - one to many: rank 0 accesses every other rank (puts and gets), each exposes to rank 0 only;
 * - many to one: every other rank accumulates into rank 0, which exposes to all of them;
 * - the ring again with MPI_MODE_NOCHECK on both post and start (the posts are known to have
 *   completed through a barrier before the starts).
 */
#include "mtest.h"

#define ROUNDS 4
#define N      8

static int rank, nprocs;

static MPI_Group group_of(const int *ranks, int n)
{
    MPI_Group world, g;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, n, ranks, &g);
    MPI_Group_free(&world);
    return g;
}

static void ring(MPI_Win win, int *wbuf, int assert)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    MPI_Group gl = group_of(&left, 1), gr = group_of(&right, 1);

    for (int round = 0; round < ROUNDS; round++) {
        int src[N], got[N];
        for (int i = 0; i < N; i++) {
            src[i] = 10000 * round + 100 * rank + i;
            wbuf[N + i] = -(10000 * round + 100 * rank + i); /* read by the left neighbour */
            got[i] = 0;
        }
        MPI_Win_post(gl, assert, win);
        if (assert & MPI_MODE_NOCHECK)
            MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_start(gr, assert, win);
        MPI_Put(src, N, MPI_INT, right, 0, N, MPI_INT, win);
        MPI_Get(got, N, MPI_INT, right, N, N, MPI_INT, win);
        MPI_Win_complete(win);
        if (round % 2 == 0) {
            MPI_Win_wait(win);
        } else {
            int flag = 0;
            while (!flag)
                MPI_Win_test(win, &flag);
        }
        for (int i = 0; i < N; i++) {
            MTEST_CHECK(wbuf[i] == 10000 * round + 100 * left + i,
                        "ring round %d: put element "
                        "%d is %d",
                        round, i, wbuf[i]);
            MTEST_CHECK(got[i] == -(10000 * round + 100 * right + i),
                        "ring round %d: got "
                        "element %d is %d",
                        round, i, got[i]);
        }
        /* nobody may write the next round's data before every rank checked this round */
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Group_free(&gl);
    MPI_Group_free(&gr);
}

static void one_to_many(MPI_Win win, int *wbuf)
{
    int others[64], zero = 0, n = nprocs - 1;
    for (int i = 0; i < n; i++)
        others[i] = i + 1;
    MPI_Group g0 = group_of(&zero, 1), gothers = group_of(others, n);

    /* rank 0 writes into every other rank and reads from it */
    for (int i = 0; i < 2 * N; i++)
        wbuf[i] = 7 * rank + i;
    if (rank == 0) {
        int src[N], got[64][N];
        for (int i = 0; i < N; i++)
            src[i] = 3 * i + 1;
        MPI_Win_start(gothers, 0, win);
        for (int r = 1; r < nprocs; r++) {
            MPI_Put(src, N, MPI_INT, r, 0, N, MPI_INT, win);
            MPI_Get(got[r], N, MPI_INT, r, N, N, MPI_INT, win);
        }
        MPI_Win_complete(win);
        for (int r = 1; r < nprocs; r++)
            for (int i = 0; i < N; i++)
                MTEST_CHECK(got[r][i] == 7 * r + N + i, "one to many: got %d from rank %d",
                            got[r][i], r);
    } else {
        MPI_Win_post(g0, 0, win);
        MPI_Win_wait(win);
        for (int i = 0; i < N; i++)
            MTEST_CHECK(wbuf[i] == 3 * i + 1, "one to many: element %d is %d", i, wbuf[i]);
    }

    /* every other rank accumulates into rank 0 */
    for (int i = 0; i < N; i++)
        wbuf[i] = 0;
    if (rank == 0) {
        MPI_Win_post(gothers, 0, win);
        int flag = 0;
        while (!flag)
            MPI_Win_test(win, &flag);
        for (int i = 0; i < N; i++)
            MTEST_CHECK(wbuf[i] == i * (nprocs - 1) * nprocs / 2, "many to one: element %d is %d",
                        i, wbuf[i]);
    } else {
        int src[N];
        for (int i = 0; i < N; i++)
            src[i] = i * rank;
        MPI_Win_start(g0, 0, win);
        MPI_Accumulate(src, N, MPI_INT, 0, 0, N, MPI_INT, MPI_SUM, win);
        MPI_Win_complete(win);
    }
    MPI_Group_free(&g0);
    MPI_Group_free(&gothers);
}

int main(int argc, char **argv)
{
    int wbuf[2 * N];
    MPI_Win win;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2 || nprocs > 64) {
        MTEST_CHECK(0, "run with 2 to 64 processes");
        return mtest_finalize(0);
    }
    MPI_Win_create(wbuf, sizeof(wbuf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    ring(win, wbuf, 0);
    one_to_many(win, wbuf);
    MPI_Barrier(MPI_COMM_WORLD);
    ring(win, wbuf, MPI_MODE_NOCHECK);
    MPI_Win_free(&win);
    return mtest_finalize(0);
}
