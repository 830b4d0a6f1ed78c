/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Active target communication with MPI_Win_fence. Each rank puts 0 B, 8 B, 1 KiB and 1 MiB
 * into its right neighbour's window and gets as many bytes from its left neighbour's; every byte
 * is checked and so is the byte after the transfer at the target (untouched). A window of ints
 * with disp_unit sizeof(int): a put and a get at nonzero target_disp, and a put to self, with
 * the elements around them untouched. MPI_MODE_NOPRECEDE on the first fence and
 * MPI_MODE_NOSUCCEED on the last. A put to and a get from MPI_PROC_NULL change nothing.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define MAXBYTES (1 << 20)
#define SENTINEL 0xa5
#define NINTS    64

static void byte_transfers(int rank, int nprocs)
{
    static const int sizes[] = {0, 8, 1024, MAXBYTES};
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    unsigned char *wbuf, *obuf;
    MPI_Win win;

    MPI_Win_allocate(MAXBYTES + 1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &wbuf, &win);
    obuf = mtest_calloc(MAXBYTES + 1, 1);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        int n = sizes[i];
        /* put: the window starts as sentinel bytes (local stores between fences) */
        memset(wbuf, SENTINEL, MAXBYTES + 1);
        mtest_fill(obuf, (size_t)n, (unsigned)(rank + 10 * n));
        MPI_Win_fence(0, win);
        MPI_Put(obuf, n, MPI_BYTE, right, 0, n, MPI_BYTE, win);
        MPI_Win_fence(0, win);
        long bad = mtest_check_fill(wbuf, (size_t)n, (unsigned)(left + 10 * n));
        MTEST_CHECK(bad < 0, "put of %d bytes: byte %ld wrong", n, bad);
        MTEST_CHECK(wbuf[n] == SENTINEL, "put of %d bytes: the byte after it changed to %#x", n,
                    wbuf[n]);

        /* get: the window holds this rank's pattern, the origin buffer is sentinel bytes */
        mtest_fill(wbuf, (size_t)n, (unsigned)(rank + 7 * n + 1));
        memset(obuf, SENTINEL, MAXBYTES + 1);
        MPI_Win_fence(0, win);
        MPI_Get(obuf, n, MPI_BYTE, left, 0, n, MPI_BYTE, win);
        MPI_Win_fence(0, win);
        bad = mtest_check_fill(obuf, (size_t)n, (unsigned)(left + 7 * n + 1));
        MTEST_CHECK(bad < 0, "get of %d bytes: byte %ld wrong", n, bad);
        MTEST_CHECK(obuf[n] == SENTINEL, "get of %d bytes: the byte after it changed", n);
    }
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    free(obuf);
    MPI_Win_free(&win);
}

static void int_transfers(int rank, int nprocs)
{
    int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    int wbuf[NINTS], src[4], got[4], untouched[4] = {-7, -7, -7, -7};
    MPI_Win win;

    for (int i = 0; i < NINTS; i++)
        wbuf[i] = i < 20 || i >= 24 ? -1 : 1000 * rank + i; /* 20..23 are read by the right */
    MPI_Win_create(wbuf, sizeof(wbuf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    for (int i = 0; i < 4; i++)
        src[i] = 100 * rank + i;
    MPI_Put(src, 4, MPI_INT, right, 10, 4, MPI_INT, win); /* elements 10..13 */
    MPI_Get(got, 4, MPI_INT, left, 20, 4, MPI_INT, win);  /* elements 20..23 */
    MPI_Put(src, 2, MPI_INT, rank, 40, 2, MPI_INT, win);  /* to self: 40, 41 */
    MPI_Put(src, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win);
    MPI_Get(untouched, 4, MPI_INT, MPI_PROC_NULL, 0, 4, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    for (int i = 0; i < NINTS; i++) {
        int want = -1;
        if (i >= 10 && i < 14)
            want = 100 * left + i - 10;
        else if (i >= 20 && i < 24)
            want = 1000 * rank + i;
        else if (i == 40 || i == 41)
            want = 100 * rank + i - 40;
        MTEST_CHECK(wbuf[i] == want, "int window element %d is %d, expected %d", i, wbuf[i], want);
    }
    for (int i = 0; i < 4; i++) {
        MTEST_CHECK(got[i] == 1000 * left + 20 + i, "get at disp 20: element %d is %d", i, got[i]);
        MTEST_CHECK(untouched[i] == -7, "get from MPI_PROC_NULL wrote %d", untouched[i]);
    }
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    int rank, nprocs;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    byte_transfers(rank, nprocs);
    int_transfers(rank, nprocs);
    return mtest_finalize(0);
}
