/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Large and odd sizes for the collectives that have several algorithms (the testlist forces
 * each one): Reduce, Allreduce, Reduce_scatter (uneven counts, some zero), Reduce_scatter_block,
 * Scan and Exscan with MPI_SUM and with a non-commutative operation on rank ranges (MPI_2INT
 * pairs (lo, hi); combining [a, b] with [c, d] is only valid when c = b + 1, so any step out of
 * rank order poisons the result), in place and not; Gather, Scatter, Allgather and Alltoall with
 * 1, 7 and 65537-byte blocks from several roots, every byte checked.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    int lo, hi;
} range_t;

#define BAD (-1000)

/* inout = in op inout, `in` holding the lower ranks. */
static void join(void *invec, void *inoutvec, int *len, MPI_Datatype *dt)
{
    (void)dt;
    range_t *a = invec, *b = inoutvec;
    for (int i = 0; i < *len; i++) {
        if (a[i].lo == BAD || b[i].lo == BAD || a[i].hi + 1 != b[i].lo)
            b[i].lo = b[i].hi = BAD;
        else
            b[i].lo = a[i].lo;
    }
}

static int check_ranges(const range_t *v, size_t n, int lo, int hi, const char *what)
{
    int errs = 0;
    for (size_t i = 0; i < n && errs < 3; i++)
        errs += !MTEST_CHECK(v[i].lo == lo && v[i].hi == hi, "%s [%zu] = (%d, %d), want (%d, %d)",
                             what, i, v[i].lo, v[i].hi, lo, hi);
    return errs;
}

static int reductions(int rank, int size, MPI_Op join_op)
{
    int errs = 0;
    const size_t ns[] = {1, 3, 40009};
    for (int ni = 0; ni < 3; ni++) {
        size_t n = ns[ni];
        range_t *in = mtest_calloc(n * (size_t)size + 1, sizeof(range_t));
        range_t *out = mtest_calloc(n * (size_t)size + 1, sizeof(range_t));
        int *iin = mtest_calloc(n * (size_t)size + 1, sizeof(int));
        int *iout = mtest_calloc(n * (size_t)size + 1, sizeof(int));
        for (size_t i = 0; i < n * (size_t)size; i++) {
            in[i].lo = in[i].hi = rank;
            iin[i] = (int)((size_t)(rank + 1) * (i % 1000 + 1));
        }
        for (int root = 0; root<size; root += size> 2 ? size - 1 : 1) {
            memset(out, 0, n * sizeof(range_t));
            MPI_Reduce(in, out, (int)n, MPI_2INT, join_op, root, MPI_COMM_WORLD);
            if (rank == root)
                errs += check_ranges(out, n, 0, size - 1, "reduce");
        }
        for (int in_place = 0; in_place < 2; in_place++) {
            memcpy(out, in, n * sizeof(range_t));
            MPI_Allreduce(in_place ? MPI_IN_PLACE : in, out, (int)n, MPI_2INT, join_op,
                          MPI_COMM_WORLD);
            errs += check_ranges(out, n, 0, size - 1, "allreduce");
            /* reduce-scatter-block: the input is n blocks per process */
            memcpy(out, in, n * (size_t)size * sizeof(range_t));
            MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : in, out, (int)n, MPI_2INT, join_op,
                                     MPI_COMM_WORLD);
            errs += check_ranges(out, n, 0, size - 1, "reduce_scatter_block");
            memcpy(out, in, n * sizeof(range_t));
            MPI_Scan(in_place ? MPI_IN_PLACE : in, out, (int)n, MPI_2INT, join_op, MPI_COMM_WORLD);
            errs += check_ranges(out, n, 0, rank, "scan");
            memcpy(out, in, n * sizeof(range_t));
            MPI_Exscan(in_place ? MPI_IN_PLACE : in, out, (int)n, MPI_2INT, join_op,
                       MPI_COMM_WORLD);
            if (rank > 0)
                errs += check_ranges(out, n, 0, rank - 1, "exscan");
            /* commutative: reduce-scatter with uneven counts, some zero */
            int *counts = mtest_calloc((size_t)size, sizeof(int));
            size_t total = 0, before = 0;
            for (int r = 0; r < size; r++) {
                counts[r] = r % 3 == 1 ? 0 : (int)(n / (size_t)(r + 1)) + (r > 0); /* <= n each */
                if (r < rank)
                    before += (size_t)counts[r];
                total += (size_t)counts[r];
            }
            memcpy(iout, iin, total * sizeof(int));
            MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : iin, iout, counts, MPI_INT, MPI_SUM,
                               MPI_COMM_WORLD);
            for (int i = 0; i < counts[rank]; i++) {
                int want = (int)((size_t)size * (size + 1) / 2 * ((before + (size_t)i) % 1000 + 1));
                if (!MTEST_CHECK(iout[i] == want, "reduce_scatter [%d] = %d want %d", i, iout[i],
                                 want)) {
                    errs++;
                    break;
                }
            }
            free(counts);
            memcpy(iout, iin, n * sizeof(int));
            MPI_Allreduce(in_place ? MPI_IN_PLACE : iin, iout, (int)n, MPI_INT, MPI_SUM,
                          MPI_COMM_WORLD);
            for (size_t i = 0; i < n; i++) {
                int want = (int)((size_t)size * (size + 1) / 2 * (i % 1000 + 1));
                if (!MTEST_CHECK(iout[i] == want, "allreduce sum [%zu] = %d want %d", i, iout[i],
                                 want)) {
                    errs++;
                    break;
                }
            }
        }
        free(in);
        free(out);
        free(iin);
        free(iout);
    }
    return errs;
}

/* Byte j of the block that `from` sends to `to`. */
static unsigned char pat(int from, int to, size_t j)
{
    return (unsigned char)(from * 31 + to * 7 + j % 251);
}

static int check_block(const unsigned char *b, size_t len, int from, int to, const char *what)
{
    for (size_t j = 0; j < len; j++)
        if (b[j] != pat(from, to, j))
            return !MTEST_CHECK(0, "%s: block from %d to %d byte %zu = %d want %d", what, from, to,
                                j, b[j], pat(from, to, j));
    return 0;
}

static int moves(int rank, int size)
{
    int errs = 0;
    const size_t lens[] = {1, 7, 65537};
    for (int li = 0; li < 3; li++) {
        size_t len = lens[li], all = len * (size_t)size;
        unsigned char *s = mtest_calloc(all, 1), *r = mtest_calloc(all, 1);
        for (int root = 0; root<size; root += size> 2 ? size - 2 : 1) {
            for (size_t j = 0; j < len; j++)
                s[j] = pat(rank, root, j);
            MPI_Gather(s, (int)len, MPI_BYTE, r, (int)len, MPI_BYTE, root, MPI_COMM_WORLD);
            for (int p = 0; rank == root && p < size; p++)
                errs += check_block(r + (size_t)p * len, len, p, root, "gather");
            for (int p = 0; rank == root && p < size; p++)
                for (size_t j = 0; j < len; j++)
                    s[(size_t)p * len + j] = pat(root, p, j);
            memset(r, 0, len);
            MPI_Scatter(s, (int)len, MPI_BYTE, r, (int)len, MPI_BYTE, root, MPI_COMM_WORLD);
            errs += check_block(r, len, root, rank, "scatter");
        }
        for (size_t j = 0; j < len; j++)
            s[j] = pat(rank, 0, j);
        MPI_Allgather(s, (int)len, MPI_BYTE, r, (int)len, MPI_BYTE, MPI_COMM_WORLD);
        for (int p = 0; p < size; p++)
            errs += check_block(r + (size_t)p * len, len, p, 0, "allgather");
        for (int in_place = 0; in_place < 2; in_place++) {
            unsigned char *src = in_place ? r : s;
            for (int p = 0; p < size; p++)
                for (size_t j = 0; j < len; j++)
                    src[(size_t)p * len + j] = pat(rank, p, j);
            if (!in_place)
                memset(r, 0, all);
            MPI_Alltoall(in_place ? MPI_IN_PLACE : s, (int)len, MPI_BYTE, r, (int)len, MPI_BYTE,
                         MPI_COMM_WORLD);
            for (int p = 0; p < size; p++)
                errs += check_block(r + (size_t)p * len, len, p, rank, "alltoall");
        }
        free(s);
        free(r);
    }
    return errs;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Op join_op;
    MPI_Op_create(join, 0, &join_op);
    errs += reductions(rank, size, join_op);
    errs += moves(rank, size);
    MPI_Op_free(&join_op);
    return mtest_finalize(errs);
}
