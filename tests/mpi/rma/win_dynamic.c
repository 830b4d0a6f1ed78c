/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dynamic windows: MPI_Win_create_dynamic (base MPI_BOTTOM, size 0, flavor dynamic), two
 * regions per rank (16 ints and 4096 doubles from malloc) attached with MPI_Win_attach, their
 * addresses from MPI_Get_address exchanged with MPI_Allgather of MPI_AINT. In lock epochs each
 * rank puts into both regions of its right neighbour and gets from the left neighbour's, with
 * target_disp the absolute address (plus an offset); the owner checks both regions under a lock
 * on itself. Then the first region is detached everywhere and the second one is still
 * reachable (a put and a get); finally the second is detached too. Last, the two halves of
 * one array attached as two regions back to back: a put and an accumulate that span both
 * reach every element, and a put that runs past the second half's end is MPI_ERR_RMA_RANGE at
 * the flush (MPI_ERRORS_RETURN on the window) and changes nothing.
 */
#include "mtest.h"

#include <stdlib.h>

#define NA 16
#define NB 4096

int main(int argc, char **argv)
{
    int rank, nprocs, right, left, *a, flag = 0;
    double *b;
    MPI_Aint mine[2], *addr;
    MPI_Win win;
    void *v;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    right = (rank + 1) % nprocs;
    left = (rank + nprocs - 1) % nprocs;
    a = mtest_calloc(NA, sizeof(int));
    b = mtest_calloc(NB, sizeof(double));
    addr = mtest_calloc(2 * (size_t)nprocs, sizeof(MPI_Aint));
    for (int i = 0; i < NA; i++)
        a[i] = -1;
    for (int i = 0; i < NB; i++)
        b[i] = rank + i / 8192.0;

    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag);
    MTEST_CHECK(flag && *(int *)v == MPI_WIN_FLAVOR_DYNAMIC, "flavor is not dynamic");
    MPI_Win_attach(win, a, NA * sizeof(int));
    MPI_Win_attach(win, b, NB * sizeof(double));
    MPI_Get_address(a, &mine[0]);
    MPI_Get_address(b, &mine[1]);
    MPI_Allgather(mine, 2, MPI_AINT, addr, 2, MPI_AINT, MPI_COMM_WORLD);
    MTEST_CHECK(addr[2 * rank] == mine[0] && addr[2 * rank + 1] == mine[1],
                "MPI_Allgather of the addresses");

    /* put 4 ints at a[4..7] and 100 doubles at b[1000..1099] of the right neighbour */
    int isrc[4];
    double dsrc[100];
    for (int i = 0; i < 4; i++)
        isrc[i] = 100 * rank + i;
    for (int i = 0; i < 100; i++)
        dsrc[i] = -rank - i / 128.0;
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    MPI_Put(isrc, 4, MPI_INT, right, addr[2 * right] + 4 * sizeof(int), 4, MPI_INT, win);
    MPI_Put(dsrc, 100, MPI_DOUBLE, right, addr[2 * right + 1] + 1000 * sizeof(double), 100,
            MPI_DOUBLE, win);
    MPI_Win_unlock(right, win);

    /* get b[3000..3099] of the left neighbour (not written by anyone) */
    double dgot[100];
    MPI_Win_lock(MPI_LOCK_SHARED, left, 0, win);
    MPI_Get(dgot, 100, MPI_DOUBLE, left, addr[2 * left + 1] + 3000 * sizeof(double), 100,
            MPI_DOUBLE, win);
    MPI_Win_unlock(left, win);
    for (int i = 0; i < 100; i++)
        if (!MTEST_CHECK(dgot[i] == left + (3000 + i) / 8192.0, "get: element %d is %g", i,
                         dgot[i]))
            break;
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < NA; i++)
        MTEST_CHECK(a[i] == (i >= 4 && i < 8 ? 100 * left + i - 4 : -1),
                    "region a: element %d is %d", i, a[i]);
    for (int i = 0; i < NB; i++) {
        double want = i >= 1000 && i < 1100 ? -left - (i - 1000) / 128.0 : rank + i / 8192.0;
        if (!MTEST_CHECK(b[i] == want, "region b: element %d is %g, expected %g", i, b[i], want))
            break;
    }
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* detach a: b is still attached and reachable */
    MPI_Win_detach(win, a);
    MPI_Barrier(MPI_COMM_WORLD);
    double one = 0.25, back = 0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(&one, 1, MPI_DOUBLE, right, addr[2 * right + 1] + 5 * sizeof(double), 1, MPI_DOUBLE,
            win);
    MPI_Win_flush(right, win);
    MPI_Get(&back, 1, MPI_DOUBLE, right, addr[2 * right + 1] + 5 * sizeof(double), 1, MPI_DOUBLE,
            win);
    MPI_Win_unlock(right, win);
    MTEST_CHECK(back == 0.25, "after detaching a: read back %g", back);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    MTEST_CHECK(b[5] == 0.25, "after detaching a: b[5] is %g", b[5]);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, b);

    /* c[0..31] and c[32..63] attached separately; accesses at c[22..41] span both */
    int c[64], span[20], rc;
    MPI_Aint cmine, *caddr = mtest_calloc((size_t)nprocs, sizeof(MPI_Aint));
    for (int i = 0; i < 64; i++)
        c[i] = -1;
    for (int i = 0; i < 20; i++)
        span[i] = 1000 * rank + i;
    MPI_Win_attach(win, c + 32, 32 * sizeof(int));
    MPI_Win_attach(win, c, 32 * sizeof(int));
    MPI_Get_address(c, &cmine);
    MPI_Allgather(&cmine, 1, MPI_AINT, caddr, 1, MPI_AINT, MPI_COMM_WORLD);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    rc = MPI_Put(span, 20, MPI_INT, right, caddr[right] + 22 * sizeof(int), 20, MPI_INT, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(right, win);
    MTEST_CHECK(rc == MPI_SUCCESS, "a put spanning two regions returned %d", rc);
    rc = MPI_Accumulate(span, 20, MPI_INT, right, caddr[right] + 22 * sizeof(int), 20, MPI_INT,
                        MPI_SUM, win);
    if (rc == MPI_SUCCESS)
        rc = MPI_Win_flush(right, win);
    MTEST_CHECK(rc == MPI_SUCCESS, "an accumulate spanning two regions returned %d", rc);
    MPI_Put(span, 8, MPI_INT, right, caddr[right] + 60 * sizeof(int), 8, MPI_INT, win);
    rc = MPI_Win_flush(right, win);
    MTEST_CHECK_ERR(rc, MPI_ERR_RMA_RANGE, "MPI_Win_flush");
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < 64; i++) {
        int want = i >= 22 && i < 42 ? 2 * (1000 * left + i - 22) : -1;
        if (!MTEST_CHECK(c[i] == want, "spanning regions: c[%d] is %d, expected %d", i, c[i], want))
            break;
    }
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_detach(win, c);
    MPI_Win_detach(win, c + 32);
    free(caddr);

    MPI_Win_free(&win);
    free(a);
    free(b);
    free(addr);
    return mtest_finalize(0);
}
