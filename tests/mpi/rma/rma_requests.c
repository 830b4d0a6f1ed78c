/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Request-based RMA inside MPI_Win_lock_all: MPI_Rput to the right neighbour (MPI_Wait, then the
 * origin buffer is reused), MPI_Rget from the left neighbour (data valid after MPI_Wait),
 * MPI_Raccumulate onto rank 0 (MPI_Waitall), MPI_Rget_accumulate onto the last rank (MPI_Test
 * until complete; the fetched old values of all ranks are distinct multiples of the increment).
 * Data at the targets is checked after MPI_Win_flush_all and a barrier. Then the large-count
 * forms: windows from MPI_Win_allocate_c and MPI_Win_create_c (MPI_Aint disp_unit), filled with
 * MPI_Put_c and read back with MPI_Get_c in fence epochs.
 */
#include "mtest.h"

#include <stdlib.h>

#define N 32

/* window layout (ints): [0, N) Rput target, [N, 2N) read by Rget, [2N] Raccumulate sum,
 * [2N + 1] Rget_accumulate counter */
#define NWIN (2 * N + 2)

static int rank, nprocs;

static void requests(void)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs, last = nprocs - 1;
    int *w, src[N], got[N], add = 4, old = -1, one = rank + 1;
    MPI_Request reqs[3];
    MPI_Win win;

    MPI_Win_allocate(NWIN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &w, &win);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < NWIN; i++)
        w[i] = i >= N && i < 2 * N ? 100 * rank + i : 0;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock_all(0, win);
    for (int i = 0; i < N; i++) {
        src[i] = 1000 * rank + i;
        got[i] = -1;
    }
    MPI_Rput(src, N, MPI_INT, right, 0, N, MPI_INT, win, &reqs[0]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    MTEST_CHECK(reqs[0] == MPI_REQUEST_NULL, "MPI_Wait did not free the MPI_Rput request");
    for (int i = 0; i < N; i++)
        src[i] = -5; /* locally complete: reusing the buffer must not change the put data */
    MPI_Rget(got, N, MPI_INT, left, N, N, MPI_INT, win, &reqs[0]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        MTEST_CHECK(got[i] == 100 * left + N + i, "MPI_Rget element %d is %d", i, got[i]);

    MPI_Raccumulate(&one, 1, MPI_INT, 0, 2 * N, 1, MPI_INT, MPI_SUM, win, &reqs[0]);
    MPI_Raccumulate(&one, 1, MPI_INT, 0, 2 * N, 1, MPI_INT, MPI_SUM, win, &reqs[1]);
    MPI_Rget_accumulate(&add, 1, MPI_INT, &old, 1, MPI_INT, last, 2 * N + 1, 1, MPI_INT, MPI_SUM,
                        win, &reqs[2]);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    int flag = 0;
    while (!flag)
        MPI_Test(&reqs[2], &flag, MPI_STATUS_IGNORE);
    MTEST_CHECK(reqs[2] == MPI_REQUEST_NULL, "MPI_Test did not free the request");
    MTEST_CHECK(old >= 0 && old % 4 == 0 && old < 4 * nprocs, "fetched old value %d", old);
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    int mine[NWIN];
    MPI_Get(mine, NWIN, MPI_INT, rank, 0, NWIN, MPI_INT, win);
    MPI_Win_flush(rank, win);
    for (int i = 0; i < N; i++)
        MTEST_CHECK(mine[i] == 1000 * left + i, "MPI_Rput element %d is %d", i, mine[i]);
    if (rank == 0)
        MTEST_CHECK(mine[2 * N] == nprocs * (nprocs + 1), "MPI_Raccumulate sum %d", mine[2 * N]);
    if (rank == last)
        MTEST_CHECK(mine[2 * N + 1] == 4 * nprocs, "MPI_Rget_accumulate counter %d",
                    mine[2 * N + 1]);
    MPI_Win_unlock_all(win);

    /* the fetched values are distinct: collect them on rank 0 */
    if (rank != 0) {
        MPI_Send(&old, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
    } else {
        int seen[64] = {0};
        seen[old / 4]++;
        for (int r = 1; r < nprocs; r++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, r, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (MTEST_CHECK(v >= 0 && v % 4 == 0 && v < 4 * nprocs, "fetched %d", v))
                seen[v / 4]++;
        }
        for (int i = 0; i < nprocs; i++)
            MTEST_CHECK(seen[i] == 1, "old value %d fetched %d times", 4 * i, seen[i]);
    }
    MPI_Win_free(&win);
}

static void large_count(void)
{
    const MPI_Count n = 4096;
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    long long *a, *src = mtest_calloc((size_t)n, sizeof(long long));
    long long *b = mtest_calloc((size_t)n, sizeof(long long));
    long long *got = mtest_calloc((size_t)n, sizeof(long long));
    MPI_Win wa, wb;
    void *v;
    int flag = 0;

    MPI_Win_allocate_c(n * (MPI_Aint)sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                       MPI_COMM_WORLD, &a, &wa);
    MPI_Win_create_c(b, n * (MPI_Aint)sizeof(long long), sizeof(long long), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &wb);
    MPI_Win_get_attr(wb, MPI_WIN_DISP_UNIT, &v, &flag);
    MTEST_CHECK(flag && *(int *)v == (int)sizeof(long long), "MPI_Win_create_c disp_unit");
    MPI_Win_get_attr(wa, MPI_WIN_SIZE, &v, &flag);
    MTEST_CHECK(flag && *(MPI_Aint *)v == n * (MPI_Aint)sizeof(long long),
                "MPI_Win_allocate_c size");

    for (MPI_Count i = 0; i < n; i++) {
        src[i] = ((long long)rank << 32) + i;
        b[i] = -((long long)rank << 32) - i;
    }
    MPI_Win_fence(MPI_MODE_NOPRECEDE, wa);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, wb);
    MPI_Put_c(src, n - 1, MPI_LONG_LONG, right, 1, n - 1, MPI_LONG_LONG, wa);
    MPI_Get_c(got, n, MPI_LONG_LONG, left, 0, n, MPI_LONG_LONG, wb);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, wa);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, wb);
    for (MPI_Count i = 1; i < n; i++)
        if (!MTEST_CHECK(a[i] == ((long long)left << 32) + i - 1, "MPI_Put_c element %lld",
                         (long long)i))
            break;
    for (MPI_Count i = 0; i < n; i++)
        if (!MTEST_CHECK(got[i] == -((long long)left << 32) - i, "MPI_Get_c element %lld",
                         (long long)i))
            break;
    MPI_Win_free(&wa);
    MPI_Win_free(&wb);
    free(src);
    free(b);
    free(got);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs > 64) {
        MTEST_CHECK(0, "run with at most 64 processes");
        return mtest_finalize(0);
    }
    requests();
    large_count();
    return mtest_finalize(0);
}
