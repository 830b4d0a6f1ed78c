/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives of a node that runs more ranks than cores (the testlist forces this with
 * MANIFOLD_COLL_SHM_CROWDED=on, and runs it with the mode off for comparison): calls up to
 * MANIFOLD_COLL_SHM_CROWD_BYTES then go through the small-call entries in pieces. Sizes just
 * below, at and above one entry and across many pieces, back to back so that the ring of
 * entries wraps within a call: Bcast from every root, Reduce (with MPI_IN_PLACE, and 12-byte
 * items of a user operation whose pieces must end on item boundaries), Gather (in place too;
 * blocks from 2 KiB through the data area's ring of units, in pieces above a quarter of it;
 * with the ring off, larger ones written by each sender straight into the root's buffer),
 * Gather series from 2 KiB blocks through the data area's ring of units, the senders running
 * ahead and wrapping it, and of 18-36 KiB blocks (one ring call on 3-4 ranks, two pieces
 * on 5 and 7), whose root checks every block as it
 * returns), Scatter (blocks together up to 4 KiB, in place too; blocks of 512 B-32 KiB through
 * the data area's ring of units, also in series that wrap it; blocks above 32 KiB through each
 * rank's single copy from the root's buffer where ranks can read each other), Scan and Exscan with
 * a non-commutative operation, which must combine in rank order (on 3 or more ranks through the
 * ring chain up to 1 MiB, also with 32-400 KiB vectors, and the point-to-point chain above),
 * Allgather and Allgatherv with blocks of different lengths (some empty; every rank publishes all
 * its pieces before it reads), Alltoall (in place too; blocks above one entry up to
 * MANIFOLD_COLL_SHM_CROWD_ALLTOALL_BYTES through the data area, each rank copying its block out of
 * the others' strides: in one round while all of a rank's blocks fit its stride, otherwise (4097
 * ints per block on 4 and 7 ranks; with the limit raised by the testlist, also 9000 ints and a
 * k-th of 8-400 KiB per block) in rounds that carry a k-th of a stride of each block; with that
 * limit at 0, up to half a ring of pieces through the ring, each rank copying its block out of
 * the others' pieces; larger ones through each rank's single copy from every other), and
 * Allreduce, which keeps its other algorithms. Bcast series of 1.2-8 KiB through the data area's
 * ring of units, long enough to wrap it. Then larger Bcast (the ring of chunks, also back to back
 * so that the root wraps it) and Reduce (pieces up to 4 KiB by default, a ring of chunks in each
 * rank's part of the data area above; also back to back with a non-commutative operation and
 * moving roots), between Allreduce and Gather calls that use the data area's halves.
 */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ints: one entry holds 268; 16 KiB is 4096 */
static const int counts[] = {267, 268, 269, 536, 537, 1000, 2048, 4095, 4096, 4097, 6000};
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))

static int32_t value(int rank, int i, int round)
{
    return (int32_t)(rank * 7 + i % 1013 + round);
}

static int32_t sum_of(int size, int i, int round)
{
    return (int32_t)(7 * size * (size - 1) / 2 + size * (i % 1013 + round));
}

/* 12-byte items: a commutative sum of the three ints */
typedef struct {
    int32_t v[3];
} trio_t;

static void trio_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const trio_t *a = in;
    trio_t *b = inout;
    for (int i = 0; i < *len; i++)
        for (int j = 0; j < 3; j++)
            b[i].v[j] += a[i].v[j];
}

/* Non-commutative and associative: a pair (m, c) stands for t -> m t + c, and the operation
 * applies the earlier map first, (m1, c1) o (m2, c2) = (m1 m2, c1 m2 + c2) (mod 2^32). Only
 * rank order gives the expected prefixes. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint32_t *a = in;
    uint32_t *b = inout;
    for (int i = 0; i < *len; i++) {
        uint32_t m = b[2 * i];
        b[2 * i + 1] = a[2 * i + 1] * m + b[2 * i + 1];
        b[2 * i] = a[2 * i] * m;
    }
}

static uint32_t slope(int rank)
{
    return 2u + (uint32_t)rank % 3u;
}

/* The prefix of ranks 0..last at pair i, one rank after the other; `m_out` gets its slope. */
static int32_t affine_expect(int last, int i, int round, uint32_t *m_out)
{
    uint32_t m = 1, c = 0;
    for (int r = 0; r <= last; r++) {
        c = c * slope(r) + (uint32_t)value(r, i, round);
        m *= slope(r);
    }
    *m_out = m;
    return (int32_t)c;
}

static void check_rooted(MPI_Comm comm, int round, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int root = round % size;
    int32_t *a = mtest_calloc((size_t)n, sizeof(int32_t));
    int32_t *b = mtest_calloc((size_t)n * size, sizeof(int32_t));
    for (int i = 0; i < n; i++)
        a[i] = rank == root ? value(root, i, round) : -1;
    MPI_Bcast(a, n, MPI_INT32_T, root, comm);
    for (int i = 0; i < n; i++)
        if (a[i] != value(root, i, round)) {
            MTEST_CHECK(0, "bcast n %d root %d: item %d is %d", n, root, i, (int)a[i]);
            break;
        }
    for (int i = 0; i < n; i++)
        a[i] = value(rank, i, round);
    int in_place = round % 2 == 1 && rank == root;
    if (in_place)
        memcpy(b, a, (size_t)n * sizeof(int32_t));
    MPI_Reduce(in_place ? MPI_IN_PLACE : a, b, n, MPI_INT32_T, MPI_SUM, root, comm);
    for (int i = 0; rank == root && i < n; i++)
        if (b[i] != sum_of(size, i, round)) {
            MTEST_CHECK(0, "reduce n %d root %d: item %d is %d", n, root, i, (int)b[i]);
            break;
        }
    memcpy(b, a, (size_t)n * sizeof(int32_t));
    MPI_Allreduce(round % 3 == 0 ? MPI_IN_PLACE : a, b, n, MPI_INT32_T, MPI_SUM, comm);
    for (int i = 0; i < n; i++)
        if (b[i] != sum_of(size, i, round)) {
            MTEST_CHECK(0, "allreduce n %d: item %d is %d", n, i, (int)b[i]);
            break;
        }
    memset(b, 0xff, (size_t)n * size * sizeof(int32_t));
    if (rank == root && round % 2 == 0)
        memcpy(b + (size_t)root * n, a, (size_t)n * sizeof(int32_t));
    MPI_Gather(rank == root && round % 2 == 0 ? MPI_IN_PLACE : a, n, MPI_INT32_T, b, n, MPI_INT32_T,
               root, comm);
    for (int r = 0; rank == root && r < size; r++)
        for (int i = 0; i < n; i++)
            if (b[(size_t)r * n + i] != value(r, i, round)) {
                MTEST_CHECK(0, "gather n %d root %d: block %d item %d is %d", n, root, r, i,
                            (int)b[(size_t)r * n + i]);
                r = size, i = n;
            }
    free(a);
    free(b);
}

/* Scatter blocks (ints) whose blocks together take one entry, a few (up to 4 KiB go through
 * the root's ring), 512 B-32 KiB blocks through the data area's ring of units (while k - 1 of
 * them fit a quarter of it; point-to-point otherwise) and blocks above 32 KiB (each rank's
 * single copy from the root's buffer where ranks can read each other), cut by the pieces at
 * odd places; from every root, in place at the root on odd rounds. Items just past a block must
 * keep their guard value. */
static const int scatter_counts[] = {1,   2,    67,   68,   134,  135,  268,   300,   409,
                                     512, 1024, 2048, 4097, 8192, 8193, 32768, 32769, 70000};
#define NSCATTER ((int)(sizeof(scatter_counts) / sizeof(scatter_counts[0])))

static void check_scatter(MPI_Comm comm, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int c = 0; c < NSCATTER; c++) {
        int n = scatter_counts[c];
        int32_t *a = mtest_calloc((size_t)n * size, sizeof(int32_t));
        int32_t *b = mtest_calloc((size_t)n + 1, sizeof(int32_t));
        for (int root = 0; root < size; root++) {
            for (int r = 0; r < size; r++)
                for (int i = 0; i < n; i++)
                    a[(size_t)r * n + i] = rank == root ? value(r, i, round + c) : -1;
            for (int i = 0; i <= n; i++)
                b[i] = -7;
            int in_place = round % 2 == 1 && rank == root;
            MPI_Scatter(a, n, MPI_INT32_T, in_place ? MPI_IN_PLACE : b, n, MPI_INT32_T, root, comm);
            const int32_t *got = in_place ? a + (size_t)root * n : b;
            for (int i = 0; i < n; i++)
                if (got[i] != value(rank, i, round + c)) {
                    MTEST_CHECK(0, "scatter n %d root %d: item %d is %d", n, root, i, (int)got[i]);
                    break;
                }
            MTEST_CHECK(b[n] == -7, "scatter n %d root %d: wrote past the block", n, root);
        }
        free(a);
        free(b);
    }
}

/* A Bcast large enough to go through the data area in chunks, between the calls of a series
 * (so a ring of units there must leave the chunks alone). */
enum { BIG_ITEMS = 40000 };
static void bcast_between(MPI_Comm comm, int32_t *big, int root, int c, const char *series)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    for (int i = 0; i < BIG_ITEMS; i++)
        big[i] = rank == root ? value(root, i, c) : -1;
    MPI_Bcast(big, BIG_ITEMS, MPI_INT32_T, root, comm);
    MTEST_CHECK(big[0] == value(root, 0, c) && big[BIG_ITEMS - 1] == value(root, BIG_ITEMS - 1, c),
                "%s series: bcast %d is wrong", series, c);
}

/* Scatters back to back into separate buffers, the root moving every few calls and a Bcast
 * through the data area between them: on crowded nodes medium blocks go through a ring of units
 * over the data area and the root runs ahead and wraps it, which must not overwrite a unit
 * before its reader has copied it, nor one the Bcast's chunks still hold. */
static void check_scatter_series(MPI_Comm comm, int round, int n)
{
    enum { CALLS = 200 };
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *a = mtest_calloc((size_t)n * size, sizeof(int32_t));
    int32_t *b = mtest_calloc((size_t)n * CALLS, sizeof(int32_t));
    int32_t *big = mtest_calloc(BIG_ITEMS, sizeof(int32_t));
    for (int c = 0; c < CALLS; c++) {
        int root = (round + c / 30) % size;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                a[(size_t)r * n + i] = rank == root ? value(r, i, round + c) : -1;
        MPI_Scatter(a, n, MPI_INT32_T, b + (size_t)c * n, n, MPI_INT32_T, root, comm);
        if (c % 50 == 49)
            bcast_between(comm, big, root, c, "scatter");
    }
    for (int c = 0; c < CALLS; c++)
        for (int i = 0; i < n; i++)
            if (b[(size_t)c * n + i] != value(rank, i, round + c)) {
                MTEST_CHECK(0, "scatter series n %d call %d: item %d is %d", n, c, i,
                            (int)b[(size_t)c * n + i]);
                c = CALLS, i = n;
            }
    free(a);
    free(b);
    free(big);
}

/* Gathers back to back, each into its own part of the root's buffer, the root moving every few
 * calls (in place on the root's first call of each) and a Bcast through the data area between
 * them: on crowded nodes blocks from 2 KiB go through the ring of units, where a sender runs
 * calls ahead and wraps it, which must not overwrite a unit before the root has copied it out.
 * The senders change their buffer right after each call. */
static void check_gather_series(MPI_Comm comm, int round, int n)
{
    /* blocks above 16 KiB (the ring of units, in pieces where a quarter of it cannot hold a
     * call): fewer calls, the root checks each as it returns */
    int big_blocks = n > 4096, CALLS = big_blocks ? 40 : 200;
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *a = mtest_calloc((size_t)n, sizeof(int32_t));
    int32_t *b = mtest_calloc((size_t)n * size * CALLS, sizeof(int32_t));
    int32_t *big = mtest_calloc(BIG_ITEMS, sizeof(int32_t));
    for (int c = 0; c < CALLS; c++) {
        int root = (round + c / 30) % size, in_place = c % 30 == 0 && rank == root;
        int32_t *out = b + (size_t)c * n * size;
        for (int i = 0; i < n; i++)
            a[i] = value(rank, i, round + c);
        if (in_place)
            memcpy(out + (size_t)root * n, a, (size_t)n * sizeof(int32_t));
        MPI_Gather(in_place ? MPI_IN_PLACE : a, n, MPI_INT32_T, out, n, MPI_INT32_T, root, comm);
        memset(a, 0xee, (size_t)n * sizeof(int32_t));
        /* every block must be in place when the root returns, not some time later */
        for (int r = 0; big_blocks && rank == root && r < size; r++)
            if (out[(size_t)r * n + n - 1] != value(r, n - 1, round + c)) {
                MTEST_CHECK(0, "gather series n %d call %d: block %d incomplete at return", n, c,
                            r);
                break;
            }
        if (c % 50 == 49)
            bcast_between(comm, big, root, c, "gather");
    }
    for (int c = 0; c < CALLS; c++) {
        if ((round + c / 30) % size != rank)
            continue;
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                if (b[((size_t)c * size + r) * n + i] != value(r, i, round + c)) {
                    MTEST_CHECK(0, "gather series n %d call %d: block %d item %d is %d", n, c, r, i,
                                (int)b[((size_t)c * size + r) * n + i]);
                    c = CALLS, r = size, i = n;
                }
    }
    free(a);
    free(b);
    free(big);
}

/* Alltoall of m items per block, in place on odd rounds: block j of rank r holds
 * value(r * size + j, i, round). */
static void check_alltoall(MPI_Comm comm, int round, int m)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *a = mtest_calloc((size_t)m * size + 1, sizeof(int32_t));
    int32_t *b = mtest_calloc((size_t)m * size + 1, sizeof(int32_t));
    for (int j = 0; j < size; j++)
        for (int i = 0; i < m; i++)
            a[(size_t)j * m + i] = value(rank * size + j, i, round);
    int in_place = round % 2 == 1;
    if (in_place)
        memcpy(b, a, (size_t)m * size * sizeof(int32_t));
    MPI_Alltoall(in_place ? MPI_IN_PLACE : a, m, MPI_INT32_T, b, m, MPI_INT32_T, comm);
    for (int j = 0; j < size; j++)
        for (int i = 0; i < m; i++)
            if (b[(size_t)j * m + i] != value(j * size + rank, i, round)) {
                MTEST_CHECK(0, "alltoall m %d%s: block %d item %d is %d", m,
                            in_place ? " in place" : "", j, i, (int)b[(size_t)j * m + i]);
                j = size, i = m;
            }
    free(a);
    free(b);
}

/* Allgather of n items per block, then Allgatherv of n * r / size items from rank r: above a
 * slot of the data area (a k-th of its half) the blocks go round by round, the shorter ones
 * running out of items before the longer ones. */
static void check_allgathers(MPI_Comm comm, int round, int n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *a = mtest_calloc((size_t)n * size, sizeof(int32_t));
    int32_t *b = mtest_calloc((size_t)n * size, sizeof(int32_t));
    for (int i = 0; i < n; i++)
        a[i] = value(rank, i, round);
    MPI_Allgather(a, n, MPI_INT32_T, b, n, MPI_INT32_T, comm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < n; i++)
            if (b[(size_t)r * n + i] != value(r, i, round)) {
                MTEST_CHECK(0, "allgather n %d: block %d item %d is %d", n, r, i,
                            (int)b[(size_t)r * n + i]);
                r = size, i = n;
            }
    /* Allgatherv: rank r gives n * r / size items (rank 0 none), packed in reverse rank order */
    int *rc = mtest_calloc((size_t)size, sizeof(int));
    int *rd = mtest_calloc((size_t)size, sizeof(int));
    int at = 0;
    for (int r = size - 1; r >= 0; r--) {
        rc[r] = n * r / size;
        rd[r] = at;
        at += rc[r];
    }
    memset(b, 0xff, (size_t)n * size * sizeof(int32_t));
    MPI_Allgatherv(a, rc[rank], MPI_INT32_T, b, rc, rd, MPI_INT32_T, comm);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < rc[r]; i++)
            if (b[rd[r] + i] != value(r, i, round)) {
                MTEST_CHECK(0, "allgatherv n %d: block %d item %d is %d", n, r, i,
                            (int)b[rd[r] + i]);
                r = size;
                break;
            }
    free(rc);
    free(rd);
    free(a);
    free(b);
}

static void check_all(MPI_Comm comm, int round, int n)
{
    int size;
    MPI_Comm_size(comm, &size);
    check_allgathers(comm, round, n);
    check_alltoall(comm, round, n / size);
}

static void check_scans(MPI_Comm comm, int round, int n, MPI_Datatype pair, MPI_Op op)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int half = n / 2; /* pairs */
    int32_t *a = mtest_calloc((size_t)half * 2 + 2, sizeof(int32_t));
    int32_t *b = mtest_calloc((size_t)half * 2 + 2, sizeof(int32_t));
    for (int i = 0; i < half; i++) {
        a[2 * i] = (int32_t)slope(rank);
        a[2 * i + 1] = value(rank, i, round);
    }
    int in_place = round % 2 == 1;
    if (in_place)
        memcpy(b, a, (size_t)half * 2 * sizeof(int32_t));
    MPI_Scan(in_place ? MPI_IN_PLACE : a, b, half, pair, op, comm);
    uint32_t m;
    for (int i = 0; i < half; i++)
        if (b[2 * i + 1] != affine_expect(rank, i, round, &m) || (uint32_t)b[2 * i] != m) {
            MTEST_CHECK(0, "scan %d pairs: pair %d is (%d, %d)", half, i, (int)b[2 * i],
                        (int)b[2 * i + 1]);
            break;
        }
    MPI_Exscan(a, b, half, pair, op, comm);
    for (int i = 0; rank > 0 && i < half; i++)
        if (b[2 * i + 1] != affine_expect(rank - 1, i, round, &m) || (uint32_t)b[2 * i] != m) {
            MTEST_CHECK(0, "exscan %d pairs: pair %d is (%d, %d)", half, i, (int)b[2 * i],
                        (int)b[2 * i + 1]);
            break;
        }
    free(a);
    free(b);
}

/* A commutative predefined operation out of place: on 3-4 ranks from 8 KiB the chain receives
 * the prefix straight into the result (with the crowded waits that yield). */
static void check_sum_scans(MPI_Comm comm, int n)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int32_t *a = mtest_calloc((size_t)n + 1, sizeof(int32_t));
    int32_t *b = mtest_calloc((size_t)n + 1, sizeof(int32_t));
    for (int i = 0; i < n; i++)
        a[i] = rank + i;
    MPI_Scan(a, b, n, MPI_INT32_T, MPI_SUM, comm);
    for (int i = 0; i < n; i++)
        if (b[i] != (rank + 1) * i + rank * (rank + 1) / 2) {
            MTEST_CHECK(0, "sum scan %d ints: item %d is %d", n, i, (int)b[i]);
            break;
        }
    MPI_Exscan(a, b, n, MPI_INT32_T, MPI_SUM, comm);
    for (int i = 0; rank > 0 && i < n; i++)
        if (b[i] != rank * i + (rank - 1) * rank / 2) {
            MTEST_CHECK(0, "sum exscan %d ints: item %d is %d", n, i, (int)b[i]);
            break;
        }
    free(a);
    free(b);
}

/* One pair per call, calls back to back into separate results (the crowded chain through the
 * ring on 3 or more ranks: rank r reads only rank r - 1's prefix, and rank 0 runs ahead past
 * the 64 entries of the ring, which must not be overwritten before the next rank read them). */
#define SCAN_SERIES 150

static void check_scan_series(MPI_Comm comm, int round, MPI_Datatype pair, MPI_Op op)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int32_t a[2 * SCAN_SERIES], b[2 * SCAN_SERIES], e[2 * SCAN_SERIES];
    for (int c = 0; c < SCAN_SERIES; c++) {
        a[2 * c] = (int32_t)slope(rank);
        a[2 * c + 1] = value(rank, c, round);
    }
    memcpy(b, a, sizeof(a));
    for (int c = 0; c < SCAN_SERIES; c++)
        MPI_Scan(round % 2 ? MPI_IN_PLACE : a + 2 * c, b + 2 * c, 1, pair, op, comm);
    for (int c = 0; c < SCAN_SERIES; c++)
        MPI_Exscan(a + 2 * c, e + 2 * c, 1, pair, op, comm);
    uint32_t m;
    for (int c = 0; c < SCAN_SERIES; c++) {
        if (b[2 * c + 1] != affine_expect(rank, c, round, &m) || (uint32_t)b[2 * c] != m) {
            MTEST_CHECK(0, "scan series call %d: (%d, %d)", c, (int)b[2 * c], (int)b[2 * c + 1]);
            break;
        }
        if (rank > 0 &&
            (e[2 * c + 1] != affine_expect(rank - 1, c, round, &m) || (uint32_t)e[2 * c] != m)) {
            MTEST_CHECK(0, "exscan series call %d: (%d, %d)", c, (int)e[2 * c], (int)e[2 * c + 1]);
            break;
        }
    }
}

/* 12-byte items: 1072 bytes is not a whole number of them */
static void check_trios(MPI_Comm comm, int round, int n, MPI_Datatype trio, MPI_Op op)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int items = n / 3;
    trio_t *a = mtest_calloc((size_t)items + 1, sizeof(trio_t));
    trio_t *b = mtest_calloc((size_t)items + 1, sizeof(trio_t));
    for (int i = 0; i < items; i++)
        for (int j = 0; j < 3; j++)
            a[i].v[j] = value(rank, 3 * i + j, round);
    MPI_Reduce(a, b, items, trio, op, size - 1, comm);
    if (rank != size - 1) {
        free(a);
        free(b);
        return;
    }
    for (int i = 0; i < items; i++)
        for (int j = 0; j < 3; j++)
            if (b[i].v[j] != sum_of(size, 3 * i + j, round)) {
                MTEST_CHECK(0, "reduce of %d 12-byte items: item %d.%d is %d", items, i, j,
                            (int)b[i].v[j]);
                i = items, j = 3;
            }
    free(a);
    free(b);
}

/* Above the pieces: Bcast through the ring of chunks over the data area, and Reduce through
 * the ring of chunks in the ranks' parts of the data area (in pieces up to 256 KiB = 65536 ints
 * with MANIFOLD_COLL_SHM_CROWD_REDUCE_BYTES=262144, the data area's chunks with
 * MANIFOLD_COLL_SHM_CROWD_RING=0). */
static const int big_counts[] = {8193, 40000, 65536, 65537, 100000};
#define NBIG ((int)(sizeof(big_counts) / sizeof(big_counts[0])))

/* Broadcasts back to back into separate buffers: the root runs ahead and wraps the ring of
 * chunks, which must not overwrite a chunk before every reader has copied it. */
static void check_bcast_series(MPI_Comm comm, int round, int n)
{
    enum { CALLS = 6 };
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int root = (round + 1) % size;
    int32_t *a = mtest_calloc((size_t)n * CALLS, sizeof(int32_t));
    for (int c = 0; c < CALLS; c++)
        for (int i = 0; i < n; i++)
            a[(size_t)c * n + i] = rank == root ? value(root, i, round + c) : -1;
    for (int c = 0; c < CALLS; c++)
        MPI_Bcast(a + (size_t)c * n, n, MPI_INT32_T, root, comm);
    for (int c = 0; c < CALLS; c++)
        for (int i = 0; i < n; i++)
            if (a[(size_t)c * n + i] != value(root, i, round + c)) {
                MTEST_CHECK(0, "bcast series n %d call %d root %d: item %d is %d", n, c, root, i,
                            (int)a[(size_t)c * n + i]);
                c = CALLS, i = n;
            }
    free(a);
}

/* Bcasts of 1.2-8 KiB back to back into separate buffers, the root moving every 50 calls: each
 * takes only the units it needs of the data area's ring of units, so the root runs up to 256
 * calls ahead and wraps the ring several times; it must not overwrite units a reader has not
 * copied yet, nor the units a Scatter between the calls still holds. */
static void check_bcast_unit_series(MPI_Comm comm, int round, int n)
{
    enum { CALLS = 400, PER_ROOT = 50 };
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *a = mtest_calloc((size_t)n * CALLS, sizeof(int32_t));
    int32_t *blocks = mtest_calloc((size_t)size * 300, sizeof(int32_t)), mine[300];
    for (int c = 0; c < CALLS; c++) {
        int root = (round + c / PER_ROOT) % size;
        for (int i = 0; i < n; i++)
            a[(size_t)c * n + i] = rank == root ? value(root, i, round + c) : -1;
    }
    for (int c = 0; c < CALLS; c++) {
        int root = (round + c / PER_ROOT) % size;
        MPI_Bcast(a + (size_t)c * n, n, MPI_INT32_T, root, comm);
        if (c % 97 == 96) {
            for (int i = 0; i < size * 300; i++)
                blocks[i] = value(i / 300, i % 300, round + c);
            MPI_Scatter(blocks, 300, MPI_INT32_T, mine, 300, MPI_INT32_T, root, comm);
            for (int i = 0; i < 300; i++)
                if (mine[i] != value(rank, i, round + c)) {
                    MTEST_CHECK(0, "scatter in bcast series call %d: item %d is %d", c, i,
                                (int)mine[i]);
                    break;
                }
        }
    }
    for (int c = 0; c < CALLS; c++) {
        int root = (round + c / PER_ROOT) % size;
        for (int i = 0; i < n; i++)
            if (a[(size_t)c * n + i] != value(root, i, round + c)) {
                MTEST_CHECK(0, "bcast unit series n %d call %d root %d: item %d is %d", n, c, root,
                            i, (int)a[(size_t)c * n + i]);
                c = CALLS, i = n;
            }
    }
    free(a);
    free(blocks);
}

/* Reductions back to back into separate buffers with a non-commutative operation, the root
 * moving from call to call and in place on odd calls: above the pieces the non-roots run ahead
 * through their parts of the data area and wrap them, which must not overwrite a chunk before
 * the root that reads it has combined it, and the root must combine in rank order. */
static void check_reduce_series(MPI_Comm comm, int round, int n, MPI_Datatype pair, MPI_Op op)
{
    enum { CALLS = 6 };
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t half = (size_t)n / 2; /* pairs */
    int32_t *a = mtest_calloc(half * 2 * CALLS, sizeof(int32_t));
    int32_t *b = mtest_calloc(half * 2 * CALLS, sizeof(int32_t));
    for (int c = 0; c < CALLS; c++) {
        int root = (round + c) % size, in_place = c % 2 == 1 && rank == root;
        int32_t *own = (in_place ? b : a) + (size_t)c * half * 2;
        for (size_t i = 0; i < half; i++) {
            own[2 * i] = (int32_t)slope(rank);
            own[2 * i + 1] = value(rank, (int)i, round + c);
        }
        MPI_Reduce(in_place ? MPI_IN_PLACE : own, b + (size_t)c * half * 2, (int)half, pair, op,
                   root, comm);
    }
    for (int c = 0; c < CALLS; c++) {
        if (rank != (round + c) % size)
            continue;
        const int32_t *r = b + (size_t)c * half * 2;
        uint32_t m;
        for (size_t i = 0; i < half; i++)
            if (r[2 * i + 1] != affine_expect(size - 1, (int)i, round + c, &m) ||
                (uint32_t)r[2 * i] != m) {
                MTEST_CHECK(0, "reduce series %zu pairs call %d: pair %zu is (%d, %d)", half, c, i,
                            (int)r[2 * i], (int)r[2 * i + 1]);
                break;
            }
    }
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm comms[2];
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]); /* reversed order */
    MPI_Datatype pair, trio;
    MPI_Type_contiguous(2, MPI_INT32_T, &pair);
    MPI_Type_commit(&pair);
    MPI_Type_contiguous(3, MPI_INT32_T, &trio);
    MPI_Type_commit(&trio);
    MPI_Op aff, tsum;
    MPI_Op_create(affine, 0, &aff);
    MPI_Op_create(trio_sum, 1, &tsum);
    for (int round = 0; round < 2 * NCOUNTS; round++) {
        MPI_Comm comm = comms[round % 2];
        int n = counts[round % NCOUNTS];
        check_rooted(comm, round, n);
        if (round < 4) {
            check_scatter(comm, round);
            check_scatter_series(comm, round, round < 2 ? 256 : 500);
            check_scatter_series(comm, round, round % 2 == 0 ? 1500 : 4097); /* 6-16 KiB */
            check_gather_series(comm, round, round < 2 ? 600 : 2500);
            check_gather_series(comm, round, round % 2 == 0 ? 4500 : 9000);
            /* blocks above the ring's half: 4097 ints through data-area rounds with a short
             * last one, 9000 (above the default limit) through the single copy from every
             * other, as both with MANIFOLD_COLL_SHM_CROWD_ALLTOALL_BYTES=0 */
            check_alltoall(comm, round, round < 2 ? 4097 : 9000);
        }
        check_all(comm, round, n);
        check_scans(comm, round, n, pair, aff);
        check_sum_scans(comm, n);
        if (round < 2)
            check_scan_series(comm, round, pair, aff);
        if (round < 3)
            check_bcast_unit_series(comm, round, round == 0 ? 300 : round == 1 ? 1000 : 2048);
        check_trios(comm, round, n, trio, tsum);
    }
    for (int round = 0; round < 2 * NBIG; round++) {
        MPI_Comm comm = comms[round % 2];
        int n = big_counts[round % NBIG];
        check_rooted(comm, round, n);
        check_bcast_series(comm, round, n);
        check_reduce_series(comm, round, n, pair, aff);
        check_trios(comm, round, n, trio, tsum);
        check_sum_scans(comm, n);               /* 32-400 KiB: several pieces, both waits */
        check_scans(comm, round, n, pair, aff); /* rank order through the ring chain */
        check_allgathers(comm, round, n);       /* 32-400 KiB blocks: several data-area rounds */
        check_alltoall(comm, round, n / size);  /* 5-100 KiB blocks: rounds or single copies */
    }
    /* Above the ring chain's limit (1 MiB) the point-to-point chain takes the scan again. */
    check_sum_scans(comms[0], 300000);
    check_scans(comms[1], 1, 300000, pair, aff);
    MPI_Op_free(&aff);
    MPI_Op_free(&tsum);
    MPI_Type_free(&pair);
    MPI_Type_free(&trio);
    MPI_Comm_free(&comms[1]);
    return mtest_finalize(0);
}
