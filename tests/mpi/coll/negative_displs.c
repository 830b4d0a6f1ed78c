/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Negative displacements in the v- and w-collectives: MPI-4.1 (6.5-6.8, 8.6) asks only that
 * the memory a displacement names belongs to the caller, so a block may sit before the buffer
 * address. Every rank lays its blocks out backwards from the end of an array (block i at
 * -(i + 1) blocks) and passes that end as the buffer: Gatherv and Scatterv (every root),
 * Allgatherv, Alltoallv, Alltoallw (byte displacements), Igatherv and Ialltoallv, and
 * Neighbor_allgatherv / Neighbor_alltoallv on a periodic ring, each with 1 and 3000 ints per
 * block (a small call and a medium one), every element checked.
 */
#include "mtest.h"

#include <stdlib.h>

static int rank, size;

static int value(int from, int to, int i)
{
    return from * 1000003 + to * 1009 + i;
}

/* counts n for every rank, displacements -(i + 1) * n (in items, or bytes when `bytes`) */
static void backwards(int n, int *cnt, int *dsp, int bytes)
{
    for (int i = 0; i < size; i++) {
        cnt[i] = n;
        dsp[i] = -(i + 1) * n * (bytes ? (int)sizeof(int) : 1);
    }
}

/* block i of a backwards layout ending at `end` */
static int *block(int *end, int n, int i)
{
    return end - (size_t)(i + 1) * n;
}

static void check_block(const int *got, int n, int from, int to, const char *what)
{
    for (int i = 0; i < n; i++)
        if (got[i] != value(from, to, i)) {
            MTEST_CHECK(0, "%s, %d per block: element %d from %d to %d is %d", what, n, i, from, to,
                        got[i]);
            return;
        }
}

static void rooted(int n, int *buf, int *end, int *cnt, int *dsp)
{
    int *mine = malloc((size_t)n * sizeof(int));
    backwards(n, cnt, dsp, 0);
    for (int root = 0; root < size; root++) {
        for (int i = 0; i < n; i++)
            mine[i] = value(rank, root, i);
        MPI_Gatherv(mine, n, MPI_INT, end, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD);
        for (int r = 0; rank == root && r < size; r++)
            check_block(block(end, n, r), n, r, root, "MPI_Gatherv");
        for (int r = 0; rank == root && r < size; r++)
            for (int i = 0; i < n; i++)
                block(end, n, r)[i] = value(root, r, i);
        MPI_Scatterv(end, cnt, dsp, MPI_INT, mine, n, MPI_INT, root, MPI_COMM_WORLD);
        check_block(mine, n, root, rank, "MPI_Scatterv");
        MPI_Request req;
        for (int i = 0; i < n; i++)
            mine[i] = value(rank, root, i);
        MPI_Igatherv(mine, n, MPI_INT, end, cnt, dsp, MPI_INT, root, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int r = 0; rank == root && r < size; r++)
            check_block(block(end, n, r), n, r, root, "MPI_Igatherv");
    }
    (void)buf;
    free(mine);
}

static void everyone(int n, int *end, int *send_end, int *cnt, int *dsp)
{
    int *mine = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        mine[i] = value(rank, 0, i);
    backwards(n, cnt, dsp, 0);
    MPI_Allgatherv(mine, n, MPI_INT, end, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        check_block(block(end, n, r), n, r, 0, "MPI_Allgatherv");

    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            block(send_end, n, r)[i] = value(rank, r, i);
    MPI_Alltoallv(send_end, cnt, dsp, MPI_INT, end, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        check_block(block(end, n, r), n, r, rank, "MPI_Alltoallv");

    MPI_Request req;
    MPI_Ialltoallv(send_end, cnt, dsp, MPI_INT, end, cnt, dsp, MPI_INT, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int r = 0; r < size; r++)
        check_block(block(end, n, r), n, r, rank, "MPI_Ialltoallv");

    MPI_Datatype *types = malloc((size_t)size * sizeof(MPI_Datatype));
    for (int r = 0; r < size; r++)
        types[r] = MPI_INT;
    backwards(n, cnt, dsp, 1);
    MPI_Alltoallw(send_end, cnt, dsp, types, end, cnt, dsp, types, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        check_block(block(end, n, r), n, r, rank, "MPI_Alltoallw");
    free(types);
    free(mine);
}

/* A periodic ring: neighbour 0 is the left one, 1 the right one. */
static void neighbours(int n, int *end, int *send_end)
{
    MPI_Comm ring;
    int dims[1] = {size}, periods[1] = {1}, left, right;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    MPI_Cart_shift(ring, 0, 1, &left, &right);
    int cnt[2] = {n, n}, dsp[2] = {-n, -2 * n};
    int *mine = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        mine[i] = value(rank, 0, i);
    MPI_Neighbor_allgatherv(mine, n, MPI_INT, end, cnt, dsp, MPI_INT, ring);
    check_block(block(end, n, 0), n, left, 0, "MPI_Neighbor_allgatherv (left)");
    check_block(block(end, n, 1), n, right, 0, "MPI_Neighbor_allgatherv (right)");
    for (int i = 0; i < n; i++) {
        block(send_end, n, 0)[i] = value(rank, left, i);
        block(send_end, n, 1)[i] = value(rank, right, i);
    }
    MPI_Neighbor_alltoallv(send_end, cnt, dsp, MPI_INT, end, cnt, dsp, MPI_INT, ring);
    /* on two ranks (or one) left and right are the same process: the second message from it
     * is its right-bound block, which lands in our right slot */
    check_block(block(end, n, 0), n, left, rank, "MPI_Neighbor_alltoallv (left)");
    check_block(block(end, n, 1), n, right, rank, "MPI_Neighbor_alltoallv (right)");
    free(mine);
    MPI_Comm_free(&ring);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int sizes[] = {1, 3000};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        int n = sizes[k];
        size_t total = (size_t)(size > 2 ? size : 2) * n;
        int *buf = mtest_calloc(total, sizeof(int)), *sbuf = mtest_calloc(total, sizeof(int));
        int *cnt = malloc((size_t)size * sizeof(int)), *dsp = malloc((size_t)size * sizeof(int));
        rooted(n, buf, buf + total, cnt, dsp);
        everyone(n, buf + total, sbuf + total, cnt, dsp);
        neighbours(n, buf + total, sbuf + total);
        free(dsp);
        free(cnt);
        free(sbuf);
        free(buf);
    }
    return mtest_finalize(0);
}
