/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Passive target communication. Rank 0 initialises its window under a lock on itself (local
 * stores), then makes no MPI call but a final MPI_Barrier while ranks 1..N-1 access it, so the
 * accesses must progress while the target sits in that barrier. The origins, phase by phase
 * (separated by barriers on a communicator without rank 0):
 * - MPI_Win_lock EXCLUSIVE: put into an own slot, and a non-atomic get / increment / put of a
 *   shared counter, K times each (the counter must end at (N-1)*K);
 * - MPI_Win_lock SHARED with MPI_MODE_NOCHECK: get, MPI_Win_flush, check, put,
 *   MPI_Win_flush_local then overwrite the origin buffer (the old value must arrive);
 * - MPI_Win_lock_all: a store into the own window, MPI_Win_sync, barrier, then MPI_Get from
 *   every other origin's window and from rank 0, MPI_Win_flush_all, check;
 * - rank 1 reads all of rank 0's window under a plain shared lock and checks it (with
 *   MPI_MODE_NOCHECK on MPICH, which hangs otherwise: see below).
 * After the barrier rank 0 checks its window under a lock on itself.
 */
#include "mtest.h"

#define K     20
#define SLOTS 16
#define BASE  7 /* initial counter value */

/* window layout (ints): [0] counter, [1 + r] slot of rank r, [SLOTS + 1 + r] second slot */
#define NWIN (2 * SLOTS + 2)

static int expected(int i, int nprocs)
{
    if (i == 0)
        return BASE + (nprocs - 1) * K;
    if (i >= 2 && i < 1 + nprocs)
        return 1000 * (i - 1) + K - 1;
    if (i >= SLOTS + 2 && i < SLOTS + 1 + nprocs)
        return -(i - SLOTS - 1);
    return -1;
}

static void origin(int rank, int nprocs, MPI_Win win, int *local, MPI_Comm origins)
{
    /* exclusive locks */
    for (int k = 0; k < K; k++) {
        int v = 1000 * rank + k, c = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 1 + rank, 1, MPI_INT, win);
        MPI_Get(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_flush(0, win);
        c++;
        MPI_Put(&c, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(origins);

    /* shared lock with MPI_MODE_NOCHECK: nobody holds an exclusive lock now */
    int got = -1, v = -rank;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, MPI_MODE_NOCHECK, win);
    MPI_Get(&got, 1, MPI_INT, 0, 1 + rank, 1, MPI_INT, win);
    MPI_Win_flush(0, win);
    MTEST_CHECK(got == 1000 * rank + K - 1, "own slot %d after the exclusive phase", got);
    MPI_Put(&v, 1, MPI_INT, 0, SLOTS + 1 + rank, 1, MPI_INT, win);
    MPI_Win_flush_local(0, win);
    v = 12345; /* the origin buffer may be reused now */
    MPI_Win_unlock(0, win);
    MPI_Barrier(origins);

    /* lock_all: local store + MPI_Win_sync, then the others read it */
    MPI_Win_lock_all(0, win);
    local[0] = 500 + rank;
    MPI_Win_sync(win);
    MPI_Barrier(origins);
    int peers[SLOTS], slot0 = -1;
    for (int r = 1; r < nprocs; r++)
        MPI_Get(&peers[r], 1, MPI_INT, r, 0, 1, MPI_INT, win);
    MPI_Get(&slot0, 1, MPI_INT, 0, SLOTS + 1 + rank, 1, MPI_INT, win);
    MPI_Win_flush_all(win);
    for (int r = 1; r < nprocs; r++)
        MTEST_CHECK(peers[r] == 500 + r, "rank %d's stored value read as %d", r, peers[r]);
    MTEST_CHECK(slot0 == -rank, "second slot %d, expected %d", slot0, -rank);
    MPI_Win_unlock_all(win);
    MPI_Barrier(origins);

    if (rank == 1) {
        int all[NWIN];
        /* A plain lock after the MPI_MODE_NOCHECK one. MPICH 5.0.2 never releases a plain
         * lock taken by an origin after a MPI_MODE_NOCHECK lock of the same target (rank 0's
         * exclusive lock on itself below then hangs), so there it is MPI_MODE_NOCHECK again
         * (also correct: nobody else holds or requests a lock on rank 0 now). */
        MPI_Win_lock(MPI_LOCK_SHARED, 0, mtest_is_manifold() ? 0 : MPI_MODE_NOCHECK, win);
        MPI_Get(all, NWIN, MPI_INT, 0, 0, NWIN, MPI_INT, win);
        MPI_Win_unlock(0, win);
        for (int i = 0; i < NWIN; i++)
            MTEST_CHECK(all[i] == expected(i, nprocs), "origin view: target element %d is %d", i,
                        all[i]);
    }
}

int main(int argc, char **argv)
{
    int rank, nprocs, *local;
    MPI_Comm origins;
    MPI_Win win;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (nprocs < 2 || nprocs >= SLOTS) {
        MTEST_CHECK(0, "run with 2 to %d processes", SLOTS - 1);
        return mtest_finalize(0);
    }
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0, rank, &origins);
    MPI_Win_allocate(NWIN * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &local, &win);

    /* lock on self and local stores */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < NWIN; i++)
        local[i] = i == 0 && rank == 0 ? BASE : -1;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank != 0)
        origin(rank, nprocs, win, local, origins);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        for (int i = 0; i < NWIN; i++)
            MTEST_CHECK(local[i] == expected(i, nprocs), "target element %d is %d, expected %d", i,
                        local[i], expected(i, nprocs));
        MPI_Win_unlock(0, win);
    }
    MPI_Comm_free(&origins);
    MPI_Win_free(&win);
    return mtest_finalize(0);
}
