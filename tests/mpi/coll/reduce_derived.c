/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reductions on derived datatypes, blocking, non-blocking and persistent (started twice with
 * new data): MPI_SUM on a strided vector of int (Reduce, Allreduce, Scan, Exscan,
 * Reduce_scatter_block, Reduce_scatter, also in place), MPI_MAX on a contiguous type of double,
 * a non-commutative user operation on a {double, int} struct (the function must see the
 * struct's own layout, and rank order must be kept), a user operation on the vector, and a
 * predefined operation on a struct of different basic types (MPI_ERR_OP). Holes of the
 * vector's layout must keep their sentinel. MPICH 5 rejects predefined operations on any derived
 * type (MPI_ERR_OP), so those parts (vector MPI_SUM, contiguous MPI_MAX) run on Manifold only.
 */
#include "mtest.h"

#include <stddef.h>
#include <stdlib.h>

#define SENT (-7)

typedef struct {
    double d;
    int i;
} pair_t;

static int rank, size;
static MPI_Datatype vec, pairt;

/* Decimal concatenation, associative but not commutative: i holds digits, d is 10 to the
 * number of digits; inout = in followed by inout. */
static void pair_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    pair_t *a = in, *b = inout;
    if (*dt != pairt)
        return;
    for (int k = 0; k < *len; k++) {
        b[k].i = a[k].i * (int)b[k].d + b[k].i;
        b[k].d *= a[k].d;
    }
}

/* The same on the vector's items (3 ints at stride 2, extent 5 ints): digits, 10 to the number
 * of digits, number of contributions. */
static void vec_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int *a = in, *b = inout;
    if (*dt != vec)
        return;
    for (int k = 0; k < *len; k++) {
        int *x = a + 5 * k, *y = b + 5 * k;
        y[0] = x[0] * y[2] + y[0];
        y[2] *= x[2];
        y[4] += x[4];
    }
}

/* n items of vec: element e of item j of rank r is v(r, 3j + e). */
static int v(int r, int k, int it)
{
    return r + 1 + 10 * k + 1000 * it;
}

static void vset(int *buf, int n, int r, int it)
{
    for (int x = 0; x < 5 * n; x++)
        buf[x] = SENT;
    for (int j = 0; j < n; j++)
        for (int e = 0; e < 3; e++)
            buf[j * 5 + 2 * e] = v(r, 3 * j + e, it);
}

/* Sum of v over ranks [lo, hi) for element k. */
static int vsum(int lo, int hi, int k, int it)
{
    int s = 0;
    for (int r = lo; r < hi; r++)
        s += v(r, k, it);
    return s;
}

static int vcheck(const char *what, const int *buf, int n, int lo, int hi, int k0, int it)
{
    for (int j = 0; j < n; j++)
        for (int x = 0; x < 5; x++) {
            int want = x % 2 ? SENT : vsum(lo, hi, k0 + 3 * j + x / 2, it);
            if (!MTEST_CHECK(buf[j * 5 + x] == want, "%s: int %d is %d, expected %d", what,
                             j * 5 + x, buf[j * 5 + x], want))
                return 1;
        }
    return 0;
}

#define CALL(BLK, NB, INIT)                                                                        \
    do {                                                                                           \
        if (mode == 0) {                                                                           \
            BLK;                                                                                   \
        } else if (mode == 1) {                                                                    \
            NB;                                                                                    \
            MPI_Wait(&req, MPI_STATUS_IGNORE);                                                     \
        } else {                                                                                   \
            if (it == 0) {                                                                         \
                INIT;                                                                              \
            }                                                                                      \
            MPI_Start(&req);                                                                       \
            MPI_Wait(&req, MPI_STATUS_IGNORE);                                                     \
        }                                                                                          \
    } while (0)

static int test_vec_sum(int mode)
{
    enum { N = 4 };
    int errs = 0, iters = mode == 2 ? 2 : 1, root = size / 2;
    int *sb = mtest_calloc((size_t)(5 * N * size), sizeof(int));
    int *rb = mtest_calloc((size_t)(5 * N * size), sizeof(int));
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm w = MPI_COMM_WORLD;
    for (int ip = 0; ip < 2; ip++) {
        for (int it = 0; it < iters; it++) {
            vset(sb, N, rank, it);
            vset(rb, N, ip ? rank : -100, it);
            const void *s = ip ? MPI_IN_PLACE : sb;
            CALL(MPI_Allreduce(s, rb, N, vec, MPI_SUM, w),
                 MPI_Iallreduce(s, rb, N, vec, MPI_SUM, w, &req),
                 MPI_Allreduce_init(s, rb, N, vec, MPI_SUM, w, MPI_INFO_NULL, &req));
            errs += vcheck(ip ? "Allreduce in place" : "Allreduce", rb, N, 0, size, 0, it);
        }
        if (mode == 2)
            MPI_Request_free(&req);
        for (int it = 0; it < iters; it++) {
            vset(sb, N, rank, it);
            vset(rb, N, ip && rank == root ? rank : -100, it);
            const void *s = ip && rank == root ? MPI_IN_PLACE : sb;
            CALL(MPI_Reduce(s, rb, N, vec, MPI_SUM, root, w),
                 MPI_Ireduce(s, rb, N, vec, MPI_SUM, root, w, &req),
                 MPI_Reduce_init(s, rb, N, vec, MPI_SUM, root, w, MPI_INFO_NULL, &req));
            if (rank == root)
                errs += vcheck("Reduce", rb, N, 0, size, 0, it);
        }
        if (mode == 2)
            MPI_Request_free(&req);
        for (int it = 0; it < iters; it++) {
            vset(sb, N, rank, it);
            vset(rb, N, ip ? rank : -100, it);
            const void *s = ip ? MPI_IN_PLACE : sb;
            CALL(MPI_Scan(s, rb, N, vec, MPI_SUM, w), MPI_Iscan(s, rb, N, vec, MPI_SUM, w, &req),
                 MPI_Scan_init(s, rb, N, vec, MPI_SUM, w, MPI_INFO_NULL, &req));
            errs += vcheck("Scan", rb, N, 0, rank + 1, 0, it);
        }
        if (mode == 2)
            MPI_Request_free(&req);
        for (int it = 0; it < iters; it++) {
            vset(sb, N, rank, it);
            vset(rb, N, ip ? rank : -100, it);
            const void *s = ip ? MPI_IN_PLACE : sb;
            CALL(MPI_Exscan(s, rb, N, vec, MPI_SUM, w),
                 MPI_Iexscan(s, rb, N, vec, MPI_SUM, w, &req),
                 MPI_Exscan_init(s, rb, N, vec, MPI_SUM, w, MPI_INFO_NULL, &req));
            if (rank > 0)
                errs += vcheck("Exscan", rb, N, 0, rank, 0, it);
        }
        if (mode == 2)
            MPI_Request_free(&req);
        /* Reduce_scatter_block: N items per rank. */
        for (int it = 0; it < iters; it++) {
            vset(ip ? rb : sb, N * size, rank, it);
            if (!ip)
                vset(rb, N, -100, it);
            const void *s = ip ? MPI_IN_PLACE : sb;
            CALL(MPI_Reduce_scatter_block(s, rb, N, vec, MPI_SUM, w),
                 MPI_Ireduce_scatter_block(s, rb, N, vec, MPI_SUM, w, &req),
                 MPI_Reduce_scatter_block_init(s, rb, N, vec, MPI_SUM, w, MPI_INFO_NULL, &req));
            errs += vcheck("Reduce_scatter_block", rb, N, 0, size, 3 * N * rank, it);
        }
        if (mode == 2)
            MPI_Request_free(&req);
        /* Reduce_scatter: rank r gets r % 3 items (zero counts included). */
        int *counts = mtest_calloc((size_t)size, sizeof(int)), total = 0, first = 0;
        for (int r = 0; r < size; r++) {
            counts[r] = r % 3;
            if (r < rank)
                first += counts[r];
            total += counts[r];
        }
        for (int it = 0; it < iters; it++) {
            vset(ip ? rb : sb, total, rank, it);
            if (!ip)
                vset(rb, counts[rank], -100, it);
            const void *s = ip ? MPI_IN_PLACE : sb;
            CALL(MPI_Reduce_scatter(s, rb, counts, vec, MPI_SUM, w),
                 MPI_Ireduce_scatter(s, rb, counts, vec, MPI_SUM, w, &req),
                 MPI_Reduce_scatter_init(s, rb, counts, vec, MPI_SUM, w, MPI_INFO_NULL, &req));
            errs += vcheck("Reduce_scatter", rb, counts[rank], 0, size, 3 * first, it);
        }
        if (mode == 2)
            MPI_Request_free(&req);
        free(counts);
    }
    free(sb);
    free(rb);
    return errs;
}

static int test_user_ops(int mode)
{
    int errs = 0, iters = mode == 2 ? 2 : 1;
    MPI_Op pop, vop;
    MPI_Op_create(pair_op, 0, &pop);
    MPI_Op_create(vec_op, 0, &vop);
    MPI_Request req = MPI_REQUEST_NULL;
    enum { N = 3 };
    pair_t in[N], out[N];
    for (int it = 0; it < iters; it++) {
        for (int k = 0; k < N; k++) {
            in[k].d = 10;
            in[k].i = (rank + 1 + k + it) % 10;
            out[k].d = -1;
            out[k].i = -1;
        }
        CALL(MPI_Allreduce(in, out, N, pairt, pop, MPI_COMM_WORLD),
             MPI_Iallreduce(in, out, N, pairt, pop, MPI_COMM_WORLD, &req),
             MPI_Allreduce_init(in, out, N, pairt, pop, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (int k = 0; k < N; k++) {
            int wi = 0;
            double wd = 1;
            for (int r = 0; r < size; r++) {
                wi = wi * 10 + (r + 1 + k + it) % 10;
                wd *= 10;
            }
            errs += !MTEST_CHECK(out[k].i == wi && out[k].d == wd,
                                 "user op on struct: item %d is {%g, %d}, expected {%g, %d}", k,
                                 out[k].d, out[k].i, wd, wi);
        }
    }
    if (mode == 2)
        MPI_Request_free(&req);
    int vin[5 * N], vout[5 * N];
    for (int it = 0; it < iters; it++) {
        for (int x = 0; x < 5 * N; x++)
            vin[x] = x % 5 == 0   ? rank + 1 + it
                     : x % 5 == 2 ? 10
                     : x % 5 == 4 ? 1
                                  : SENT,
            vout[x] = SENT;
        CALL(MPI_Reduce(vin, vout, N, vec, vop, 0, MPI_COMM_WORLD),
             MPI_Ireduce(vin, vout, N, vec, vop, 0, MPI_COMM_WORLD, &req),
             MPI_Reduce_init(vin, vout, N, vec, vop, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        int want = 0, pow = 1;
        for (int r = 0; r < size; r++)
            want = want * 10 + r + 1 + it, pow *= 10;
        for (int x = 0; x < 5 * N && rank == 0; x++) {
            int w = x % 5 == 0 ? want : x % 5 == 2 ? pow : x % 5 == 4 ? size : SENT;
            if (!MTEST_CHECK(vout[x] == w, "user op on vector: int %d is %d, expected %d", x,
                             vout[x], w))
                errs++;
        }
    }
    if (mode == 2)
        MPI_Request_free(&req);
    MPI_Op_free(&pop);
    MPI_Op_free(&vop);
    return errs;
}

static int test_contig_double(void)
{
    MPI_Datatype c3;
    MPI_Type_contiguous(3, MPI_DOUBLE, &c3);
    MPI_Type_commit(&c3);
    double in[6], out[6];
    for (int k = 0; k < 6; k++)
        in[k] = (k % 2 ? rank : -rank) + 0.5 * k;
    MPI_Allreduce(in, out, 2, c3, MPI_MAX, MPI_COMM_WORLD);
    int errs = 0;
    for (int k = 0; k < 6; k++) {
        double want = (k % 2 ? size - 1 : 0) + 0.5 * k;
        errs += !MTEST_CHECK(out[k] == want, "MPI_MAX on contiguous double: [%d]=%g, expected %g",
                             k, out[k], want);
    }
    MPI_Type_free(&c3);
    return errs;
}

static int test_mixed_error(void)
{
    int errs = 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pair_t in = {1.0, 1}, out;
    int rc = MPI_Allreduce(&in, &out, 1, pairt, MPI_SUM, MPI_COMM_WORLD);
    errs += !MTEST_CHECK_ERR(rc, MPI_ERR_OP, "MPI_Allreduce");
    MPI_Request req;
    rc = MPI_Ireduce(&in, &out, 1, pairt, MPI_MAX, 0, MPI_COMM_WORLD, &req);
    errs += !MTEST_CHECK_ERR(rc, MPI_ERR_OP, "MPI_Ireduce");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* still works */
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    errs += !MTEST_CHECK(sum == size, "Allreduce after the errors gave %d", sum);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {offsetof(pair_t, d), offsetof(pair_t, i)};
    MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT}, tmp;
    MPI_Type_create_struct(2, bl, disp, types, &tmp);
    MPI_Type_create_resized(tmp, 0, sizeof(pair_t), &pairt);
    MPI_Type_free(&tmp);
    MPI_Type_commit(&pairt);
    for (int mode = 0; mode < 3; mode++) {
        /* MPICH 5 rejects predefined operations on every derived type. */
        if (mtest_is_manifold())
            errs += test_vec_sum(mode);
        errs += test_user_ops(mode);
    }
    if (mtest_is_manifold())
        errs += test_contig_double();
    errs += test_mixed_error();
    MPI_Type_free(&vec);
    MPI_Type_free(&pairt);
    return mtest_finalize(errs);
}
