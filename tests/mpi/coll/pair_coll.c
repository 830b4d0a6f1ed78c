/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reduce, Allreduce, Scan and Exscan around the sizes where two ranks on one node switch
 * between the shared-memory streams and point-to-point (8 and 16 KiB, 256 KiB): MPI_SUM and a
 * non-commutative operation (the left operand wins, so the result is rank 0's vector and any
 * operand swapped shows), every root, MPI_IN_PLACE, and identical bits on every rank for an
 * Allreduce whose operands differ only in the sign of zero. Runs on any number of processes.
 */
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

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Op left;
    MPI_Op_create(left_op, 0, &left);
    /* ints: around 8 KiB, 16 KiB and 256 KiB, and beyond */
    const int ns[] = {1, 2047, 2048, 4095, 4096, 16384, 65535, 65536, 100000};
    for (size_t k = 0; k < sizeof(ns) / sizeof(ns[0]); k++) {
        check_reductions(ns[k], left);
        check_same_bits(ns[k] / 2);
    }
    MPI_Op_free(&left);
    return mtest_finalize(0);
}
