/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Medium MPI_Gather, MPI_Scatter, MPI_Allgather and MPI_Allgatherv on one node, which move
 * through the shared-memory data area in pieces, and small MPI_Scatter (all blocks but the
 * root's in the root's small-call entry, or the data area when they do not fit: the limit falls
 * between 268 and 269 items on two ranks, 134 and 135 on three, 89 and 90 on four): block sizes
 * around the small-call entry (1072 bytes), the piece (8 KiB) and the upper limit (256 KiB), odd
 * counts, every root, in place, rank-dependent Allgatherv lengths with empty blocks, a strided
 * derived type (packed before the collective), a reversed communicator, and bcasts and reduces in
 * between that reuse the same data area. Alltoall and Reduce_scatter(_block) of those sizes, which
 * two ranks stream through shared memory.
 */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const int counts[] = {1,   7,    30,   60,   61,   62,   89,   90,    134,   135,  268,
                             269, 1000, 2047, 2049, 8191, 8192, 8193, 20001, 65536, 65537};
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))

static int32_t value(int rank, int i, int round)
{
    return (int32_t)(rank * 1000003 + i * 7 + round);
}

static void fill(int32_t *buf, int n, int rank, int round)
{
    for (int i = 0; i < n; i++)
        buf[i] = value(rank, i, round);
}

/* Index of the first wrong item of rank r's block of n items, or -1. */
static int first_bad(const int32_t *buf, int n, int r, int round)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != value(r, i, round))
            return i;
    return -1;
}

static void check_gather(MPI_Comm comm, int n, int root, int in_place, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *one = mtest_calloc(1, (size_t)n * sizeof(int32_t));
    int32_t *all = mtest_calloc(1, (size_t)size * (size_t)n * sizeof(int32_t));
    fill(one, n, rank, round);
    memset(all, 0xee, (size_t)size * (size_t)n * sizeof(int32_t));
    if (rank == root && in_place)
        fill(all + (size_t)root * (size_t)n, n, rank, round);
    MPI_Gather(rank == root && in_place ? MPI_IN_PLACE : one, n, MPI_INT32_T, all, n, MPI_INT32_T,
               root, comm);
    for (int r = 0; rank == root && r < size; r++) {
        int bad = first_bad(all + (size_t)r * (size_t)n, n, r, round);
        MTEST_CHECK(bad < 0, "gather n %d root %d in place %d: block %d item %d wrong", n, root,
                    in_place, r, bad);
    }
    free(one);
    free(all);
}

static void check_scatter(MPI_Comm comm, int n, int root, int in_place, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *one = mtest_calloc(1, (size_t)n * sizeof(int32_t));
    int32_t *all = mtest_calloc(1, (size_t)size * (size_t)n * sizeof(int32_t));
    for (int r = 0; r < size; r++)
        fill(all + (size_t)r * (size_t)n, n, rank == root ? r : -1, round);
    memset(one, 0xee, (size_t)n * sizeof(int32_t));
    MPI_Scatter(all, n, MPI_INT32_T, rank == root && in_place ? MPI_IN_PLACE : one, n, MPI_INT32_T,
                root, comm);
    const int32_t *got = rank == root && in_place ? all + (size_t)root * (size_t)n : one;
    int bad = first_bad(got, n, rank, round);
    MTEST_CHECK(bad < 0, "scatter n %d root %d in place %d: item %d wrong", n, root, in_place, bad);
    free(one);
    free(all);
}

static void check_allgather(MPI_Comm comm, int n, int in_place, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *one = mtest_calloc(1, (size_t)n * sizeof(int32_t));
    int32_t *all = mtest_calloc(1, (size_t)size * (size_t)n * sizeof(int32_t));
    fill(one, n, rank, round);
    memset(all, 0xee, (size_t)size * (size_t)n * sizeof(int32_t));
    if (in_place)
        fill(all + (size_t)rank * (size_t)n, n, rank, round);
    MPI_Allgather(in_place ? MPI_IN_PLACE : one, n, MPI_INT32_T, all, n, MPI_INT32_T, comm);
    for (int r = 0; r < size; r++) {
        int bad = first_bad(all + (size_t)r * (size_t)n, n, r, round);
        MTEST_CHECK(bad < 0, "allgather n %d in place %d: block %d item %d wrong", n, in_place, r,
                    bad);
    }
    free(one);
    free(all);
}

/* Rank r contributes (r * n / 2) % (n + 1) items (rank 0: none), blocks in reverse order with
 * gaps between them that must stay untouched. */
static void check_allgatherv(MPI_Comm comm, int n, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *rc = mtest_calloc(1, (size_t)size * sizeof(int)),
        *dis = mtest_calloc(1, (size_t)size * sizeof(int));
    int total = 0;
    for (int r = size - 1; r >= 0; r--) {
        rc[r] = (int)(((long)r * n / 2) % (n + 1));
        dis[r] = total;
        total += rc[r] + 3;
    }
    int32_t *one = mtest_calloc(1, (size_t)(rc[rank] + 1) * sizeof(int32_t));
    int32_t *all = mtest_calloc(1, (size_t)total * sizeof(int32_t));
    fill(one, rc[rank], rank, round);
    for (int i = 0; i < total; i++)
        all[i] = -5;
    MPI_Allgatherv(one, rc[rank], MPI_INT32_T, all, rc, dis, MPI_INT32_T, comm);
    for (int r = 0; r < size; r++) {
        int bad = first_bad(all + dis[r], rc[r], r, round);
        MTEST_CHECK(bad < 0, "allgatherv n %d: block %d (%d items) item %d wrong", n, r, rc[r],
                    bad);
        for (int g = 0; g < 3; g++)
            MTEST_CHECK(all[dis[r] + rc[r] + g] == -5,
                        "allgatherv n %d: gap after block %d written", n, r);
    }
    free(rc);
    free(dis);
    free(one);
    free(all);
}

/* Every second int of the send buffer (a vector type): the library packs it, then the block
 * takes the same path as a contiguous one. */
static void check_strided_gather(MPI_Comm comm, int n, int root, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype vec;
    MPI_Type_vector(n, 1, 2, MPI_INT32_T, &vec);
    MPI_Type_commit(&vec);
    int32_t *src = mtest_calloc(1, (size_t)n * 2 * sizeof(int32_t));
    int32_t *all = mtest_calloc(1, (size_t)size * (size_t)n * sizeof(int32_t));
    for (int i = 0; i < n; i++) {
        src[2 * i] = value(rank, i, round);
        src[2 * i + 1] = -1;
    }
    memset(all, 0xee, (size_t)size * (size_t)n * sizeof(int32_t));
    MPI_Gather(src, 1, vec, all, n, MPI_INT32_T, root, comm);
    for (int r = 0; rank == root && r < size; r++) {
        int bad = first_bad(all + (size_t)r * (size_t)n, n, r, round);
        MTEST_CHECK(bad < 0, "strided gather n %d root %d: block %d item %d wrong", n, root, r,
                    bad);
    }
    /* and back: the root scatters into strided receive buffers */
    for (int i = 0; i < 2 * n; i++)
        src[i] = -1;
    MPI_Scatter(all, n, MPI_INT32_T, src, 1, vec, root, comm);
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (src[2 * i] != value(rank, i, round) || src[2 * i + 1] != -1)
            bad = i;
    MTEST_CHECK(bad < 0, "strided scatter n %d root %d: item %d wrong", n, root, bad);
    MPI_Type_free(&vec);
    free(src);
    free(all);
}

/* Block r of rank q's send buffer holds value(q * size + r, i): rank r must receive, as its
 * block q, value(q * size + r, i). Two ranks stream their blocks through shared memory. */
static void check_alltoall(MPI_Comm comm, int n, int in_place, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t all = (size_t)size * (size_t)n;
    int32_t *sb = mtest_calloc(1, all * sizeof(int32_t) + 1);
    int32_t *rb = mtest_calloc(1, all * sizeof(int32_t) + 1);
    for (int r = 0; r < size; r++)
        fill((in_place ? rb : sb) + (size_t)r * (size_t)n, n, rank * size + r, round);
    if (!in_place)
        memset(rb, 0xee, all * sizeof(int32_t));
    MPI_Alltoall(in_place ? MPI_IN_PLACE : sb, n, MPI_INT32_T, rb, n, MPI_INT32_T, comm);
    for (int q = 0; q < size; q++) {
        int bad = first_bad(rb + (size_t)q * (size_t)n, n, q * size + rank, round);
        MTEST_CHECK(bad < 0, "alltoall n %d in place %d: block %d item %d wrong", n, in_place, q,
                    bad);
    }
    free(sb);
    free(rb);
}

/* A commutative user operation (the library's own combining loop is not used). */
static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len; i++)
        ((int32_t *)inout)[i] += ((const int32_t *)in)[i];
}

/* Reduce_scatter_block (n items each) and Reduce_scatter (rank r gets n + r * n / 3 items, the
 * last rank none when n is odd), in place or not, MPI_SUM or a commutative user operation; on
 * two ranks they stream each other's block through shared memory. Item i of the vector is
 * value(rank, i), so block item j of rank r must be the sum over ranks of value(q, start + j). */
static void check_reduce_scatter(MPI_Comm comm, int n, int in_place, int block, MPI_Op op,
                                 int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *rc = mtest_calloc(1, (size_t)size * sizeof(int));
    int total = 0, start = 0;
    for (int r = 0; r < size; r++) {
        rc[r] = block ? n : n + r * n / 3;
        if (!block && r == size - 1 && n % 2)
            rc[r] = 0;
        start += r < rank ? rc[r] : 0;
        total += rc[r];
    }
    int32_t *in = mtest_calloc(1, (size_t)total * sizeof(int32_t) + 1);
    int32_t *out = mtest_calloc(1, (size_t)total * sizeof(int32_t) + 1);
    fill(in_place ? out : in, total, rank, round);
    if (!in_place)
        memset(out, 0xee, (size_t)rc[rank] * sizeof(int32_t));
    const void *sbuf = in_place ? MPI_IN_PLACE : in;
    if (block)
        MPI_Reduce_scatter_block(sbuf, out, n, MPI_INT32_T, op, comm);
    else
        MPI_Reduce_scatter(sbuf, out, rc, MPI_INT32_T, op, comm);
    int bad = -1;
    for (int j = 0; j < rc[rank] && bad < 0; j++) {
        int32_t want = 0;
        for (int q = 0; q < size; q++)
            want += value(q, start + j, round);
        if (out[j] != want)
            bad = j;
    }
    MTEST_CHECK(bad < 0, "reduce_scatter%s n %d in place %d user op %d: item %d of %d wrong",
                block ? "_block" : "", n, in_place, op != MPI_SUM, bad, rc[rank]);
    free(rc);
    free(in);
    free(out);
}

/* A bcast and a reduce that use the same data area halves right after a gather. */
static void check_mixed(MPI_Comm comm, int n, int round)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int32_t *buf = mtest_calloc(1, (size_t)n * sizeof(int32_t));
    int32_t *sum = mtest_calloc(1, (size_t)n * sizeof(int32_t));
    fill(buf, n, rank == 0 ? 0 : -2, round);
    MPI_Bcast(buf, n, MPI_INT32_T, 0, comm);
    int bad = first_bad(buf, n, 0, round);
    MTEST_CHECK(bad < 0, "bcast n %d after medium calls: item %d wrong", n, bad);
    MPI_Allreduce(buf, sum, n, MPI_INT32_T, MPI_MAX, comm);
    bad = first_bad(sum, n, 0, round);
    MTEST_CHECK(bad < 0, "allreduce n %d after medium calls: item %d wrong", n, bad);
    free(buf);
    free(sum);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op usum;
    MPI_Op_create(user_sum, 1, &usum);
    MPI_Comm comms[2];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]); /* reversed order */
    int round = 0;
    for (int c = 0; c < 2; c++) {
        for (int j = 0; j < NCOUNTS; j++) {
            int n = counts[j];
            for (int root = 0; root < size; root++, round++) {
                check_gather(comms[c], n, root, (root + j) % 2, round);
                check_scatter(comms[c], n, root, (root + j + 1) % 2, round);
            }
            check_allgather(comms[c], n, j % 2, round);
            check_allgatherv(comms[c], n, round);
            check_strided_gather(comms[c], n, j % size, round);
            check_alltoall(comms[c], n, (j + 1) % 2, round);
            check_reduce_scatter(comms[c], n, j % 2, 1, j % 3 ? MPI_SUM : usum, round);
            check_reduce_scatter(comms[c], n, (j + 1) % 2, 0, j % 3 ? usum : MPI_SUM, round);
            check_mixed(comms[c], n, round);
            round++;
        }
    }
    /* back to back without anything in between: each half is reused as soon as allowed */
    for (int i = 0; i < 60; i++, round++) {
        int n = counts[i % NCOUNTS] / (1 + i % 3) + 61;
        check_gather(MPI_COMM_WORLD, n, i % size, 0, round);
        check_allgather(MPI_COMM_WORLD, n, 0, round);
        check_scatter(MPI_COMM_WORLD, n, (i + 1) % size, 0, round);
        check_reduce_scatter(MPI_COMM_WORLD, n, i % 2, 1, MPI_SUM, round);
    }
    MPI_Comm_free(&comms[1]);
    MPI_Op_free(&usum);
    return mtest_finalize(0);
}
