/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduce_scatter_block and Reduce_scatter on a node that runs more ranks than cores (the
 * testlist forces the mode with MANIFOLD_COLL_SHM_CROWDED=on and runs it off for comparison):
 * vectors above one small-call entry and up to MANIFOLD_COLL_SHM_CROWD_BYTES go through the
 * entries in pieces, every rank combining its own block from the pieces that overlap it. Blocks
 * that start and end inside pieces, 12-byte items (pieces end on item boundaries), a
 * non-commutative operation (rank order), MPI_IN_PLACE, blocks of different lengths (some
 * empty), and series of calls back to back so that the ring of entries wraps. Larger blocks
 * go through one pass of the Reduce ring (each rank's vector in 32 KiB chunks that straddle
 * the blocks, each rank combining its own), whose series wrap the ranks' parts of the data
 * area (two slots each at 7 ranks); uneven blocks in place overlap the result.
 */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>

/* ints per rank's block: one entry holds 268; from 1025 (above the Reduce pieces) through the
 * Reduce ring, 9000 over two chunks */
static const int blocks[] = {67, 134, 135, 268, 269, 400, 512, 1000, 1024, 2049, 4500, 9000};
#define NBLOCKS ((int)(sizeof(blocks) / sizeof(blocks[0])))
#define SERIES  40

static int32_t value(int rank, size_t i, int round)
{
    return (int32_t)(rank * 5 + (int)(i % 997) + round);
}

/* (m, c) stands for t -> m t + c; in op inout is in after inout: associative, not commutative */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (int i = 0; i < *len; i++) {
        uint32_t m = a[2 * i] * b[2 * i], c = a[2 * i] * b[2 * i + 1] + a[2 * i + 1];
        b[2 * i] = m;
        b[2 * i + 1] = c;
    }
}

static void trio_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int32_t *a = in;
    int32_t *b = inout;
    for (int i = 0; i < 3 * *len; i++)
        b[i] += a[i];
}

/* A series of Reduce_scatter_block sums, separate buffers and in place on alternate calls. */
static void check_block_sum(MPI_Comm comm, int round, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t total = (size_t)n * (size_t)size;
    int32_t *s = malloc(SERIES * total * sizeof(int32_t));
    int32_t *r = malloc(SERIES * total * sizeof(int32_t));
    for (int c = 0; c < SERIES; c++)
        for (size_t i = 0; i < total; i++) {
            s[c * total + i] = value(rank, i, round + c);
            r[c * total + i] = value(rank, i, round + c);
        }
    for (int c = 0; c < SERIES; c++) {
        if (c % 2)
            MPI_Reduce_scatter_block(MPI_IN_PLACE, r + c * total, n, MPI_INT32_T, MPI_SUM, comm);
        else
            MPI_Reduce_scatter_block(s + c * total, r + c * total, n, MPI_INT32_T, MPI_SUM, comm);
    }
    int bad = 0;
    for (int c = 0; c < SERIES && !bad; c++)
        for (int i = 0; i < n && !bad; i++) {
            size_t g = (size_t)rank * (size_t)n + (size_t)i;
            int32_t want = 0;
            for (int q = 0; q < size; q++)
                want += value(q, g, round + c);
            bad = r[c * total + (size_t)i] != want;
            MTEST_CHECK(!bad, "block %d call %d item %d: %d, expected %d", n, c, i,
                        r[c * total + (size_t)i], want);
        }
    free(s);
    free(r);
}

/* Reduce_scatter sums with blocks of different lengths in place: a rank's own block can
 * overlap the start of the buffer, where its result goes. */
static void check_uneven_sum(MPI_Comm comm, int round, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *rc = malloc((size_t)size * sizeof(int));
    size_t total = 0, first = 0;
    for (int q = 0; q < size; q++) {
        rc[q] = n * ((q + round + 1) % 3) / 2;
        first += q < rank ? (size_t)rc[q] : 0;
        total += (size_t)rc[q];
    }
    int32_t *r = malloc((total + 1) * sizeof(int32_t));
    for (size_t i = 0; i < total; i++)
        r[i] = value(rank, i, round);
    MPI_Reduce_scatter(MPI_IN_PLACE, r, rc, MPI_INT32_T, MPI_SUM, comm);
    int bad = 0;
    for (int i = 0; i < rc[rank] && !bad; i++) {
        int32_t want = 0;
        for (int q = 0; q < size; q++)
            want += value(q, first + (size_t)i, round);
        bad = r[i] != want;
        MTEST_CHECK(!bad, "uneven sum block %d item %d: %d, expected %d", rc[rank], i, r[i], want);
    }
    free(rc);
    free(r);
}

/* Reduce_scatter with blocks of different lengths (rank r gets n * ((r + round) % 3) / 2
 * pairs) under the non-commutative composition, in place on odd rounds. */
static void check_compose(MPI_Comm comm, int round, int n, MPI_Datatype pair, MPI_Op op)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *rc = malloc((size_t)size * sizeof(int));
    size_t total = 0, first = 0;
    for (int q = 0; q < size; q++) {
        rc[q] = n * ((q + round) % 3) / 2;
        first += q < rank ? (size_t)rc[q] : 0;
        total += (size_t)rc[q];
    }
    uint32_t *s = malloc((2 * total + 2) * sizeof(uint32_t));
    uint32_t *r = malloc((2 * total + 2) * sizeof(uint32_t));
    for (size_t i = 0; i < total; i++) {
        s[2 * i] = r[2 * i] = (uint32_t)(2 * rank + 1 + 2 * (i % 5));
        s[2 * i + 1] = r[2 * i + 1] = (uint32_t)value(rank, i, round);
    }
    MPI_Reduce_scatter(round % 2 ? MPI_IN_PLACE : s, r, rc, pair, op, comm);
    int bad = 0;
    for (int i = 0; i < rc[rank] && !bad; i++) {
        size_t g = first + (size_t)i;
        /* v[0] op (v[1] op (... op v[size-1])): apply the last map first */
        uint32_t m = 1, c = 0;
        for (int q = size - 1; q >= 0; q--) {
            uint32_t qm = (uint32_t)(2 * q + 1 + 2 * (g % 5)), qc = (uint32_t)value(q, g, round);
            c = qm * c + qc;
            m = qm * m;
        }
        bad = r[2 * i] != m || r[2 * i + 1] != c;
        MTEST_CHECK(!bad, "compose block %d item %d: (%u, %u), expected (%u, %u)", rc[rank], i,
                    r[2 * i], r[2 * i + 1], m, c);
    }
    free(rc);
    free(s);
    free(r);
}

/* 12-byte items of a user operation: 89 fit an entry, so pieces end 4 bytes short of it. */
static void check_trios(MPI_Comm comm, int round, int n, MPI_Datatype trio, MPI_Op op)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t total = (size_t)n * (size_t)size;
    int32_t *s = malloc(3 * total * sizeof(int32_t));
    int32_t *r = malloc(3 * (size_t)n * sizeof(int32_t));
    for (size_t i = 0; i < 3 * total; i++)
        s[i] = value(rank, i, round);
    MPI_Reduce_scatter_block(s, r, n, trio, op, comm);
    int bad = 0;
    for (int i = 0; i < 3 * n && !bad; i++) {
        size_t g = 3 * (size_t)rank * (size_t)n + (size_t)i;
        int32_t want = 0;
        for (int q = 0; q < size; q++)
            want += value(q, g, round);
        bad = r[i] != want;
        MTEST_CHECK(!bad, "trio block %d int %d: %d, expected %d", n, i, r[i], want);
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_NULL};
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]); /* reversed order */
    MPI_Datatype pair, trio;
    MPI_Type_contiguous(2, MPI_UINT32_T, &pair);
    MPI_Type_commit(&pair);
    MPI_Type_contiguous(3, MPI_INT32_T, &trio);
    MPI_Type_commit(&trio);
    MPI_Op comp, tsum;
    MPI_Op_create(compose, 0, &comp);
    MPI_Op_create(trio_sum, 1, &tsum);
    for (int round = 0; round < 2 * NBLOCKS; round++) {
        MPI_Comm comm = comms[round % 2];
        int n = blocks[round % NBLOCKS];
        check_block_sum(comm, round, n);
        check_compose(comm, round, n, pair, comp);
        check_uneven_sum(comm, round, n);
        check_trios(comm, round, n / 3 + 1, trio, tsum);
    }
    MPI_Op_free(&comp);
    MPI_Op_free(&tsum);
    MPI_Type_free(&pair);
    MPI_Type_free(&trio);
    MPI_Comm_free(&comms[1]);
    return mtest_finalize(0);
}
