/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking MPI_Alltoall and MPI_Allgather with predefined types, the calls that skip the
 * collective buffer layout: every block's values at 4 B to 4 KiB blocks (the node segment's
 * small entries, the pair paths and point-to-point), in place, long series of calls (the
 * segment's ring wraps), equal bytes through different counts, empty blocks, and bad
 * arguments, which must reach the error handler with the right class on every rank.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int val(int from, int to, int i, int call)
{
    return from * 100000 + to * 1000 + i + call * 7;
}

static void alltoall_check(int size, int rank, int count, int in_place, int call)
{
    int *s = mtest_calloc((size_t)size * count, sizeof(int));
    int *r = mtest_calloc((size_t)size * count + 1, sizeof(int));
    int *src = in_place ? r : s;
    for (int j = 0; j < size; j++)
        for (int i = 0; i < count; i++)
            src[j * count + i] = val(rank, j, i, call);
    r[size * count] = -7; /* past the blocks: must stay */
    int rc = MPI_Alltoall(in_place ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT,
                          MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Alltoall count %d in_place %d: rc %d", count, in_place, rc);
    int bad = 0;
    for (int j = 0; j < size; j++)
        for (int i = 0; i < count; i++)
            bad += r[j * count + i] != val(j, rank, i, call);
    MTEST_CHECK(bad == 0, "MPI_Alltoall count %d in_place %d call %d: %d wrong items", count,
                in_place, call, bad);
    MTEST_CHECK(r[size * count] == -7, "MPI_Alltoall count %d wrote past recvbuf", count);
    free(s);
    free(r);
}

static void allgather_check(int size, int rank, int count, int in_place, int call)
{
    int *s = mtest_calloc((size_t)count, sizeof(int));
    int *r = mtest_calloc((size_t)size * count + 1, sizeof(int));
    int *mine = in_place ? r + (size_t)rank * count : s;
    for (int i = 0; i < count; i++)
        mine[i] = val(rank, 0, i, call);
    r[size * count] = -7;
    int rc = MPI_Allgather(in_place ? MPI_IN_PLACE : s, count, MPI_INT, r, count, MPI_INT,
                           MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Allgather count %d in_place %d: rc %d", count, in_place,
                rc);
    int bad = 0;
    for (int j = 0; j < size; j++)
        for (int i = 0; i < count; i++)
            bad += r[j * count + i] != val(j, 0, i, call);
    MTEST_CHECK(bad == 0, "MPI_Allgather count %d in_place %d call %d: %d wrong items", count,
                in_place, call, bad);
    MTEST_CHECK(r[size * count] == -7, "MPI_Allgather count %d wrote past recvbuf", count);
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int size, rank, rc;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    static const int counts[] = {1, 2, 3, 16, 100, 256, 1024, 3000};
    for (int k = 0; k < (int)(sizeof(counts) / sizeof(counts[0])); k++)
        for (int in_place = 0; in_place < 2; in_place++) {
            alltoall_check(size, rank, counts[k], in_place, k);
            allgather_check(size, rank, counts[k], in_place, k);
        }
    /* a series longer than the segment's ring of small entries */
    for (int call = 0; call < 300; call++) {
        alltoall_check(size, rank, 1 + call % 5, call % 7 == 0, call);
        allgather_check(size, rank, 1 + call % 3, call % 5 == 0, call);
    }

    /* equal bytes through different counts: 2 shorts go out, 1 int comes in per rank */
    short *hs = mtest_calloc((size_t)size * 2, sizeof(short));
    int *hr = mtest_calloc((size_t)size, sizeof(int));
    for (int j = 0; j < size; j++)
        hs[2 * j] = hs[2 * j + 1] = (short)(rank * 16 + j);
    rc = MPI_Alltoall(hs, 4, MPI_BYTE, hr, 4, MPI_BYTE, MPI_COMM_WORLD);
    int bad = rc != MPI_SUCCESS;
    for (int j = 0; j < size && !bad; j++) {
        short want[2] = {(short)(j * 16 + rank), (short)(j * 16 + rank)};
        bad = memcmp(&hr[j], want, sizeof(want)) != 0;
    }
    MTEST_CHECK(!bad, "MPI_Alltoall of 4 MPI_BYTE blocks: rc %d or wrong data", rc);
    free(hs);
    free(hr);

    /* empty blocks: NULL buffers are fine */
    rc = MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Alltoall of nothing: rc %d", rc);
    rc = MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Allgather of nothing: rc %d", rc);

    /* bad arguments: every rank fails the same way before anything is exchanged */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *b = mtest_calloc((size_t)size * 4, sizeof(int));
    int *c = mtest_calloc((size_t)size * 4, sizeof(int));
    rc = MPI_Alltoall(b, 1, MPI_INT, NULL, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Alltoall");
    rc = MPI_Alltoall(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Alltoall");
    rc = MPI_Alltoall(b, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Alltoall");
    rc = MPI_Alltoall(b, -1, MPI_INT, c, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Alltoall");
    rc = MPI_Alltoall(b, 1, MPI_INT, c, -1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Alltoall");
    rc = MPI_Alltoall(b, 1, MPI_INT, c, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Alltoall");
    rc = MPI_Allgather(b, 1, MPI_INT, NULL, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Allgather");
    rc = MPI_Allgather(b, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Allgather");
    rc = MPI_Allgather(b, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Allgather");
    rc = MPI_Allgather(b, 1, MPI_INT, c, -1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Allgather");
    rc = MPI_Allgather(b, 1, MPI_INT, c, 1, MPI_DATATYPE_NULL, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Allgather");
    free(b);
    free(c);
    return mtest_finalize(0);
}
