/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The sizes where two ranks on one node switch between the shared-memory paths and the
 * two-rank point-to-point algorithms, which move 128 KiB pieces (8 and 16 KiB, 1 and 4 MiB),
 * and the two-rank Reduce stream's 4 KiB pieces for vectors below 16 KiB:
 * Reduce, Allreduce, Scan and Exscan with MPI_SUM and a non-commutative operation (the left
 * operand wins, so the result is rank 0's vector and any operand swapped shows), every root,
 * MPI_IN_PLACE, identical bits on every rank for an Allreduce whose operands differ only in
 * the sign of zero, 12-byte items that do not divide a piece, Reduce_scatter(_block) with
 * blocks of different lengths (up to 4 MiB, several pieces each); Bcast, Gather, Scatter,
 * Allgather and Alltoall with every root and in place. Runs on any number of processes.
 * PAIR_COLL_RANK0=<value> gives rank 0 MANIFOLD_COLL_PAIR_WHOLE=<value> and leaves the others
 * the environment's (set from the launcher's PMI_RANK before MPI_Init): with `on` against
 * `off` each rank receives the form it does not send, and with `on` against `auto` only one
 * rank would time the probe between them, which must not leave it waiting.
 * PAIR_COLL_RANK0_FAR_NS=<ns> gives rank 0 MANIFOLD_COLL_PAIR_FAR_NS=<ns> the same way: with 0
 * there against a huge value elsewhere, rank 0's probe says far and the others' near, and
 * both must follow rank 0's verdict (point-to-point from 4 KiB) or the two take different
 * algorithms.
 */
#define _POSIX_C_SOURCE 200112L /* setenv */

#include "mtest.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* inout = in: associative, not commutative */
static void left_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

static int value(int rank, int i, int left)
{
    return left ? (rank + 1) * 100000 + i % 9973 : (rank + 1) * (i % 7 + 1);
}

/* what ranks 0..last combine to at item i */
static int expect(int last, int i, int left)
{
    if (left)
        return value(0, i, 1);
    int sum = 0;
    for (int r = 0; r <= last; r++)
        sum += value(r, i, 0);
    return sum;
}

static void fill(int *buf, int n, int rank, int left)
{
    for (int i = 0; i < n; i++)
        buf[i] = value(rank, i, left);
}

/* first wrong item of out against ranks 0..last, or -1 */
static int first_bad(const int *out, int n, int last, int left)
{
    for (int i = 0; i < n; i++)
        if (out[i] != expect(last, i, left))
            return i;
    return -1;
}

static void check_reductions(int n, MPI_Op left)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *in = mtest_calloc((size_t)n, sizeof(int)), *out = mtest_calloc((size_t)n, sizeof(int));
    for (int l = 0; l < 2; l++) {
        MPI_Op op = l ? left : MPI_SUM;
        for (int in_place = 0; in_place < 2; in_place++) {
            for (int root = 0; root < size; root++) {
                fill(in, n, rank, l);
                if (in_place && rank == root)
                    fill(out, n, rank, l);
                else
                    memset(out, 0xff, (size_t)n * sizeof(int));
                const void *src = in_place && rank == root ? MPI_IN_PLACE : in;
                int rc = MPI_Reduce(src, out, n, MPI_INT, op, root, MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "reduce rc %d", rc);
                int bad = rank == root ? first_bad(out, n, size - 1, l) : -1;
                MTEST_CHECK(bad < 0, "reduce n %d op %d in place %d root %d: [%d] = %d, want %d", n,
                            l, in_place, root, bad, bad < 0 ? 0 : out[bad],
                            bad < 0 ? 0 : expect(size - 1, bad, l));
            }
            fill(in, n, rank, l);
            if (in_place)
                fill(out, n, rank, l);
            int rc =
                MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, n, MPI_INT, op, MPI_COMM_WORLD);
            MTEST_CHECK(rc == MPI_SUCCESS, "allreduce rc %d", rc);
            int bad = first_bad(out, n, size - 1, l);
            MTEST_CHECK(bad < 0, "allreduce n %d op %d in place %d: [%d] = %d, want %d", n, l,
                        in_place, bad, bad < 0 ? 0 : out[bad],
                        bad < 0 ? 0 : expect(size - 1, bad, l));

            if (in_place)
                fill(out, n, rank, l);
            rc = MPI_Scan(in_place ? MPI_IN_PLACE : in, out, n, MPI_INT, op, MPI_COMM_WORLD);
            MTEST_CHECK(rc == MPI_SUCCESS, "scan rc %d", rc);
            bad = first_bad(out, n, rank, l);
            MTEST_CHECK(bad < 0, "scan n %d op %d in place %d: [%d] = %d, want %d", n, l, in_place,
                        bad, bad < 0 ? 0 : out[bad], bad < 0 ? 0 : expect(rank, bad, l));

            if (in_place)
                fill(out, n, rank, l);
            rc = MPI_Exscan(in_place ? MPI_IN_PLACE : in, out, n, MPI_INT, op, MPI_COMM_WORLD);
            MTEST_CHECK(rc == MPI_SUCCESS, "exscan rc %d", rc);
            bad = rank > 0 ? first_bad(out, n, rank - 1, l) : -1;
            MTEST_CHECK(bad < 0, "exscan n %d op %d in place %d: [%d] = %d, want %d", n, l,
                        in_place, bad, bad < 0 ? 0 : out[bad],
                        bad < 0 ? 0 : expect(rank - 1, bad, l));
        }
    }
    free(in);
    free(out);
}

/* Reduce_scatter with blocks of n + 7 r items (rank r) and Reduce_scatter_block of n: the
 * vector is (rank + 1) * (i % 7 + 1) at item i, so block r must hold the sums of its items. */
static void check_reduce_scatter(int n, MPI_Op left)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *counts = mtest_calloc((size_t)size, sizeof(int)), total = 0, first = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = n + 7 * r;
        first += r < rank ? counts[r] : 0;
        total += counts[r];
    }
    int most = total > n * size ? total : n * size;
    int *in = mtest_calloc((size_t)most, sizeof(int)),
        *out = mtest_calloc((size_t)most, sizeof(int));
    for (int l = 0; l < 2; l++) {
        MPI_Op op = l ? left : MPI_SUM;
        fill(in, total, rank, l);
        memset(out, 0xff, (size_t)total * sizeof(int));
        MPI_Reduce_scatter(in, out, counts, MPI_INT, op, MPI_COMM_WORLD);
        int bad = -1;
        for (int i = 0; i < counts[rank] && bad < 0; i++)
            if (out[i] != expect(size - 1, first + i, l))
                bad = i;
        MTEST_CHECK(bad < 0, "reduce_scatter n %d op %d: [%d] wrong", n, l, bad);
        MPI_Reduce_scatter_block(in, out, n, MPI_INT, op, MPI_COMM_WORLD);
        bad = -1;
        for (int i = 0; i < n && bad < 0; i++)
            if (out[i] != expect(size - 1, rank * n + i, l))
                bad = i;
        MTEST_CHECK(bad < 0, "reduce_scatter_block n %d op %d: [%d] wrong", n, l, bad);
        /* in place: the whole vector in recvbuf, this rank's block comes back at its start */
        fill(out, n * size, rank, l);
        MPI_Reduce_scatter_block(MPI_IN_PLACE, out, n, MPI_INT, op, MPI_COMM_WORLD);
        bad = -1;
        for (int i = 0; i < n && bad < 0; i++)
            if (out[i] != expect(size - 1, rank * n + i, l))
                bad = i;
        MTEST_CHECK(bad < 0, "reduce_scatter_block in place n %d op %d: [%d] wrong", n, l, bad);
    }
    /* A padded pair type (extent above its size) must land item by item at the extent. */
    typedef struct {
        short v;
        int i;
    } short_int_t;
    short_int_t *pin = mtest_calloc((size_t)n * (size_t)size, sizeof(short_int_t)),
                *pout = mtest_calloc((size_t)n + 1, sizeof(short_int_t));
    for (int i = 0; i < n * size; i++) {
        pin[i].v = (short)((i + rank) % 5);
        pin[i].i = rank;
    }
    memset(pout, 0x5a, ((size_t)n + 1) * sizeof(short_int_t));
    short_int_t guard = pout[n];
    MPI_Reduce_scatter_block(pin, pout, n, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    int pbad = -1;
    for (int i = 0; i < n && pbad < 0; i++) {
        int g = rank * n + i, best = -1, at = 0;
        for (int r = 0; r < size; r++)
            if ((g + r) % 5 > best) {
                best = (g + r) % 5;
                at = r;
            }
        if (pout[i].v != best || pout[i].i != at)
            pbad = i;
    }
    MTEST_CHECK(pbad < 0 && memcmp(&pout[n], &guard, sizeof(guard)) == 0,
                "reduce_scatter_block short_int n %d: [%d] wrong or past the block", n, pbad);
    free(pin);
    free(pout);
    free(counts);
    free(in);
    free(out);
}

/* -0.0 on rank 0, +0.0 elsewhere: MPI_MIN may return either zero, but the same on every rank. */
static void check_same_bits(int n)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    double *in = mtest_calloc((size_t)n, sizeof(double));
    double *out = mtest_calloc((size_t)n, sizeof(double));
    double *root = mtest_calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; i++)
        in[i] = rank == 0 ? -0.0 : 0.0;
    MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    memcpy(root, out, (size_t)n * sizeof(double));
    MPI_Bcast(root, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int bad = -1;
    for (int i = 0; i < n && bad < 0; i++)
        if (out[i] != 0.0 || signbit(out[i]) != signbit(root[i]))
            bad = i;
    MTEST_CHECK(bad < 0, "allreduce min n %d: [%d] has other bits than on rank 0", n, bad);
    free(in);
    free(out);
    free(root);
}

/* inout = in for items of three ints */
static void left3_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * 3 * sizeof(int));
}

/* inout += in for items of three ints: commutative, so it may take the two-rank stream */
static void sum3_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *len * 3; i++)
        ((int *)inout)[i] += ((const int *)in)[i];
}

/* 12-byte items: pieces end inside no item. */
static void check_odd_items(int n)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Datatype t3;
    MPI_Type_contiguous(3, MPI_INT, &t3);
    MPI_Type_commit(&t3);
    MPI_Op left3;
    MPI_Op_create(left3_op, 0, &left3);
    int *in = mtest_calloc((size_t)n * 3, sizeof(int)),
        *out = mtest_calloc((size_t)n * 3, sizeof(int));
    fill(in, n * 3, rank, 1);
    for (int root = 0; root < size; root++) {
        memset(out, 0xff, (size_t)n * 3 * sizeof(int));
        MPI_Reduce(in, out, n, t3, left3, root, MPI_COMM_WORLD);
        int bad = rank == root ? first_bad(out, n * 3, size - 1, 1) : -1;
        MTEST_CHECK(bad < 0, "reduce of 12-byte items n %d root %d: [%d] wrong", n, root, bad);
    }
    MPI_Op sum3;
    MPI_Op_create(sum3_op, 1, &sum3);
    fill(in, n * 3, rank, 0);
    for (int root = 0; root < size; root++) {
        memset(out, 0xff, (size_t)n * 3 * sizeof(int));
        MPI_Reduce(in, out, n, t3, sum3, root, MPI_COMM_WORLD);
        int bad = rank == root ? first_bad(out, n * 3, size - 1, 0) : -1;
        MTEST_CHECK(bad < 0, "commutative reduce of 12-byte items n %d root %d: [%d] wrong", n,
                    root, bad);
    }
    MPI_Op_free(&sum3);
    fill(in, n * 3, rank, 1);
    MPI_Allreduce(in, out, n, t3, left3, MPI_COMM_WORLD);
    int bad = first_bad(out, n * 3, size - 1, 1);
    MTEST_CHECK(bad < 0, "allreduce of 12-byte items n %d: [%d] wrong", n, bad);
    MPI_Scan(in, out, n, t3, left3, MPI_COMM_WORLD);
    bad = first_bad(out, n * 3, rank, 1);
    MTEST_CHECK(bad < 0, "scan of 12-byte items n %d: [%d] wrong", n, bad);
    MPI_Op_free(&left3);
    MPI_Type_free(&t3);
    free(in);
    free(out);
}

/* byte k of rank r's block for rank d */
static unsigned char pattern(int r, int d, size_t k)
{
    return (unsigned char)(r * 31 + d * 7 + k % 251);
}

static long first_bad_block(const unsigned char *buf, size_t len, int r, int d)
{
    for (size_t k = 0; k < len; k++)
        if (buf[k] != pattern(r, d, k))
            return (long)k;
    return -1;
}

static void check_moves(size_t len)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t all = len * (size_t)size;
    unsigned char *s = mtest_calloc(all, 1), *r = mtest_calloc(all, 1);
    int n = (int)len;
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int root = 0; root < size; root++) {
            /* Bcast: root's block for 0 */
            for (size_t k = 0; k < len; k++)
                r[k] = rank == root ? pattern(root, 0, k) : 0;
            MPI_Bcast(r, n, MPI_BYTE, root, MPI_COMM_WORLD);
            long bad = first_bad_block(r, len, root, 0);
            MTEST_CHECK(bad < 0, "bcast %zu root %d: byte %ld", len, root, bad);
            /* Gather: block of rank i lands at i */
            for (size_t k = 0; k < len; k++)
                s[k] = pattern(rank, root, k);
            memset(r, 0, all);
            if (in_place && rank == root)
                memcpy(r + (size_t)root * len, s, len);
            MPI_Gather(in_place && rank == root ? MPI_IN_PLACE : s, n, MPI_BYTE, r, n, MPI_BYTE,
                       root, MPI_COMM_WORLD);
            for (int i = 0; rank == root && i < size; i++) {
                bad = first_bad_block(r + (size_t)i * len, len, i, root);
                MTEST_CHECK(bad < 0, "gather %zu root %d in place %d: block %d byte %ld", len, root,
                            in_place, i, bad);
            }
            /* Scatter: the root's block i goes to rank i */
            for (int i = 0; i < size; i++)
                for (size_t k = 0; k < len; k++)
                    s[(size_t)i * len + k] = pattern(root, i, k);
            memset(r, 0, all);
            int ip = in_place && rank == root;
            MPI_Scatter(s, n, MPI_BYTE, ip ? MPI_IN_PLACE : r, n, MPI_BYTE, root, MPI_COMM_WORLD);
            bad = first_bad_block(ip ? s + (size_t)root * len : r, len, root, rank);
            MTEST_CHECK(bad < 0, "scatter %zu root %d in place %d: byte %ld", len, root, in_place,
                        bad);
        }
        /* Allgather and Alltoall: rank i's block for rank d at d */
        for (int d = 0; d < size; d++)
            for (size_t k = 0; k < len; k++)
                s[(size_t)d * len + k] = pattern(rank, d, k);
        memset(r, 0, all);
        if (in_place)
            memcpy(r + (size_t)rank * len, s, len);
        MPI_Allgather(in_place ? MPI_IN_PLACE : s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++) {
            long bad = first_bad_block(r + (size_t)i * len, len, i, 0);
            MTEST_CHECK(bad < 0, "allgather %zu in place %d: block %d byte %ld", len, in_place, i,
                        bad);
        }
        if (in_place)
            memcpy(r, s, all);
        MPI_Alltoall(in_place ? MPI_IN_PLACE : s, n, MPI_BYTE, r, n, MPI_BYTE, MPI_COMM_WORLD);
        for (int i = 0; i < size; i++) {
            long bad = first_bad_block(r + (size_t)i * len, len, i, rank);
            MTEST_CHECK(bad < 0, "alltoall %zu in place %d: block %d byte %ld", len, in_place, i,
                        bad);
        }
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    const char *prank = getenv("PMI_RANK"), *rank0 = getenv("PAIR_COLL_RANK0");
    const char *far0 = getenv("PAIR_COLL_RANK0_FAR_NS");
    if (rank0 != NULL && prank != NULL && atoi(prank) == 0)
        setenv("MANIFOLD_COLL_PAIR_WHOLE", rank0, 1);
    if (far0 != NULL && prank != NULL && atoi(prank) == 0)
        setenv("MANIFOLD_COLL_PAIR_FAR_NS", far0, 1);
    mtest_init(&argc, &argv);
    MPI_Op left;
    MPI_Op_create(left_op, 0, &left);
    /* ints: around 8 KiB, 16 KiB and 256 KiB, and beyond */
    const int ns[] = {1,    1023, 1025, 1500,  2047,  2048,  4095,
                      4096, 8191, 8192, 16384, 65535, 65536, 100000};
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        check_reductions(ns[k], left);
        check_same_bits(ns[k] / 2);
        check_reduce_scatter(ns[k] / 2, left);
    }
    /* Reduce_scatter in pieces: blocks of several pieces and uneven lengths; the two-rank
     * limit of 8 MiB lies between Reduce_scatter_block's vector and Reduce_scatter's. */
    check_reduce_scatter(300001, left);
    check_reduce_scatter(1048573, left);
    check_odd_items(50000);
    check_odd_items(650);  /* 7800 bytes: pieces of 341 items on the two-rank stream */
    check_odd_items(1300); /* 15600 bytes: four pieces */
    /* bytes: around 8 and 16 KiB, two pieces (Alltoall's limit), several, around 1 and 4 MiB */
    const size_t lens[] = {8188,   8192,    16380,   16384,   262144, 262148,
                           300001, 1048576, 1048580, 4194304, 4194308};
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
        check_moves(lens[k]);
    MPI_Op_free(&left);
    return mtest_finalize(0);
}
