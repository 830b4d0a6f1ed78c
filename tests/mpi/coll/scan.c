/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Scan, MPI_Exscan, MPI_Reduce_scatter and MPI_Reduce_scatter_block (int and _c forms),
 * with MPI_SUM and with a non-commutative user operation (digit concatenation: the result is
 * the ranks' digits in rank order), 0, 1 and odd counts, and MPI_IN_PLACE.
 */
#include "mtest.h"

#include <stdlib.h>

/* inout = in "followed by" inout: digits of in, then digits of inout (values stay small). */
static void concat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    long long *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        long long scale = 1;
        while (scale <= b[i])
            scale *= 10;
        b[i] = a[i] * scale + b[i];
    }
}

/* The concatenation of the digits r+1 for ranks lo..hi. */
static long long digits(int lo, int hi)
{
    long long v = 0;
    for (int r = lo; r <= hi; r++)
        v = v * 10 + (r + 1);
    return v;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op cat;
    MPI_Op_create(concat, 0, &cat);
    /* 2500 items (20000 bytes) take the streamed two-rank path on one node; 9000 (72000
     * bytes) go along the chain in three pieces of at most 32 KiB, the last one short */
    const int ns[] = {0, 1, 9, 2500, 9000};
    for (int ni = 0; ni < 5; ni++) {
        int n = ns[ni];
        long long *in = mtest_calloc((size_t)(n * size) + 1, sizeof(long long));
        long long *out = mtest_calloc((size_t)(n * size) + 1, sizeof(long long));
        for (int in_place = 0; in_place < 2; in_place++) {
            for (int opi = 0; opi < 2; opi++) {
                MPI_Op op = opi ? cat : MPI_SUM;
                /* sums vary along the vector, so a misplaced piece shows */
                for (int i = 0; i < n; i++) {
                    in[i] = rank + 1 + (opi ? 0 : 10 * (i % 5));
                    out[i] = in_place ? in[i] : -1;
                }
                int rc = MPI_Scan(in_place ? MPI_IN_PLACE : in, out, n, MPI_LONG_LONG, op,
                                  MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "scan rc %d", rc);
                for (int i = 0; i < n; i++) {
                    long long want = opi ? digits(0, rank)
                                         : (long long)(rank + 1) * (rank + 2) / 2 +
                                               (long long)(rank + 1) * 10 * (i % 5);
                    MTEST_CHECK(out[i] == want, "scan op %d ip %d [%d]=%lld want %lld", opi,
                                in_place, i, out[i], want);
                }
                for (int i = 0; i < n; i++)
                    in[i] = rank + 1, out[i] = in_place ? rank + 1 : -1;
                rc = MPI_Exscan_c(in_place ? MPI_IN_PLACE : in, out, n, MPI_LONG_LONG, op,
                                  MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "exscan rc %d", rc);
                long long want = opi ? digits(0, rank - 1) : (long long)rank * (rank + 1) / 2;
                if (rank > 0)
                    for (int i = 0; i < n; i++)
                        MTEST_CHECK(out[i] == want, "exscan op %d ip %d [%d]=%lld want %lld", opi,
                                    in_place, i, out[i], want);
                /* Reduce_scatter_block: n items per rank; element j of block b is b*100+j+1
                 * added up (sum) or the digit rank+1 (concat). */
                for (int b = 0; b < size; b++)
                    for (int j = 0; j < n; j++)
                        in[b * n + j] = opi ? rank + 1 : b * 100 + j + rank;
                for (int i = 0; i < n * size; i++)
                    out[i] = in_place ? in[i] : -1;
                rc = MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in, out, n, MPI_LONG_LONG,
                                              op, MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "reduce_scatter_block rc %d", rc);
                for (int j = 0; j < n; j++) {
                    want =
                        opi ? digits(0, size - 1)
                            : (long long)size * (rank * 100 + j) + (long long)size * (size - 1) / 2;
                    MTEST_CHECK(out[j] == want,
                                "reduce_scatter_block op %d ip %d [%d]=%lld want %lld", opi,
                                in_place, j, out[j], want);
                }
                /* Reduce_scatter: rank b gets b + n items. */
                int *counts = mtest_calloc((size_t)size, sizeof(int));
                MPI_Count *ccounts = mtest_calloc((size_t)size, sizeof(MPI_Count));
                int total = 0;
                for (int b = 0; b < size; b++)
                    counts[b] = b + n, ccounts[b] = b + n, total += b + n;
                long long *vin = mtest_calloc((size_t)total + 1, sizeof(long long));
                long long *vout = mtest_calloc((size_t)total + 1, sizeof(long long));
                for (int i = 0; i < total; i++)
                    vin[i] = opi ? rank + 1 : i + rank, vout[i] = in_place ? vin[i] : -1;
                if (ni % 2)
                    rc = MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : vin, vout, counts,
                                            MPI_LONG_LONG, op, MPI_COMM_WORLD);
                else
                    rc = MPI_Reduce_scatter_c(in_place ? MPI_IN_PLACE : vin, vout, ccounts,
                                              MPI_LONG_LONG, op, MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "reduce_scatter rc %d", rc);
                int first = 0;
                for (int b = 0; b < rank; b++)
                    first += counts[b];
                for (int j = 0; j < counts[rank]; j++) {
                    want = opi ? digits(0, size - 1)
                               : (long long)size * (first + j) + (long long)size * (size - 1) / 2;
                    MTEST_CHECK(vout[j] == want, "reduce_scatter op %d ip %d [%d]=%lld want %lld",
                                opi, in_place, j, vout[j], want);
                }
                free(counts), free(ccounts), free(vin), free(vout);
            }
        }
        free(in), free(out);
    }
    MPI_Op_free(&cat);
    return mtest_finalize(errs);
}
