/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared memory windows on the communicator from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED),
 * once with the default (contiguous) layout and once with alloc_shared_noncontig=true. Rank r
 * gives 64*r ints (rank 0 gives 0 bytes) with disp_unit 4 on odd ranks and 1 on even ones.
 * MPI_Win_shared_query for every rank returns the right size and disp_unit, the own segment
 * at the base from MPI_Win_allocate_shared and, by default, each segment right after the
 * previous one; MPI_PROC_NULL returns the segment of rank 1 (the lowest rank with size > 0).
 * Every rank stores into every segment through the queried pointers inside a lock_all epoch;
 * after MPI_Win_sync, a barrier and MPI_Win_sync the owner sees all the stores.
 */
#include "mtest.h"

#define PER 64

static int seg_ints(int r)
{
    return PER * r;
}

static int seg_unit(int r)
{
    return r % 2 ? (int)sizeof(int) : 1;
}

static void run(MPI_Comm shm, int noncontig)
{
    int rank, nprocs, *mine = NULL;
    MPI_Info info = MPI_INFO_NULL;
    MPI_Win win;
    const char *what = noncontig ? "noncontig" : "contiguous";

    MPI_Comm_rank(shm, &rank);
    MPI_Comm_size(shm, &nprocs);
    if (noncontig) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "alloc_shared_noncontig", "true");
    }
    MPI_Win_allocate_shared((MPI_Aint)(seg_ints(rank) * sizeof(int)), seg_unit(rank), info, shm,
                            &mine, &win);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);

    int *bases[64];
    for (int r = 0; r < nprocs; r++) {
        MPI_Aint size = -1;
        int unit = -1;
        bases[r] = NULL;
        MPI_Win_shared_query(win, r, &size, &unit, &bases[r]);
        MTEST_CHECK(size == (MPI_Aint)(seg_ints(r) * sizeof(int)) && unit == seg_unit(r),
                    "%s: rank %d's segment: size %ld, disp_unit %d", what, r, (long)size, unit);
        MTEST_CHECK(size == 0 || bases[r] != NULL, "%s: rank %d's segment at NULL", what, r);
        if (!noncontig && r > 1)
            MTEST_CHECK(bases[r] == bases[r - 1] + seg_ints(r - 1),
                        "%s: rank %d's segment at %p, rank %d's ends at %p", what, r,
                        (void *)bases[r], r - 1, (void *)(bases[r - 1] + seg_ints(r - 1)));
    }
    if (rank > 0)
        MTEST_CHECK(bases[rank] == mine, "%s: own segment queried at %p, allocated at %p", what,
                    (void *)bases[rank], (void *)mine);
    if (nprocs > 1) {
        MPI_Aint size = -1;
        int unit = -1, *first = NULL;
        MPI_Win_shared_query(win, MPI_PROC_NULL, &size, &unit, &first);
        MTEST_CHECK(first == bases[1] && size == (MPI_Aint)(seg_ints(1) * sizeof(int)) &&
                        unit == seg_unit(1),
                    "%s: MPI_PROC_NULL gave %p size %ld disp_unit %d, rank 1 is at %p", what,
                    (void *)first, (long)size, unit, (void *)bases[1]);
    }

    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    for (int i = 0; i < seg_ints(rank); i++)
        mine[i] = -1;
    MPI_Win_sync(win);
    MPI_Barrier(shm);
    MPI_Win_sync(win);
    for (int t = 1; t < nprocs; t++)
        bases[t][rank] = 1000 * rank + t;
    MPI_Win_sync(win);
    MPI_Barrier(shm);
    MPI_Win_sync(win);
    for (int i = 0; i < seg_ints(rank); i++) {
        int want = i < nprocs ? 1000 * i + rank : -1;
        if (!MTEST_CHECK(mine[i] == want, "%s: element %d of my segment is %d, expected %d", what,
                         i, mine[i], want))
            break;
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    MPI_Comm shm;
    int n;

    mtest_init(&argc, &argv);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    MPI_Comm_size(shm, &n);
    if (n > 64) {
        MTEST_CHECK(0, "at most 64 processes per node");
    } else {
        run(shm, 0);
        run(shm, 1);
    }
    MPI_Comm_free(&shm);
    return mtest_finalize(0);
}
