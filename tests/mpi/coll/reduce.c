/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Reduce (every root) and MPI_Allreduce, int and _c forms, with MPI_IN_PLACE: MPI_SUM on
 * int for 0, 1, odd and 256 Ki items (1 MiB), MPI_MAX on double, MPI_PROD on double complex,
 * MPI_LXOR on C_BOOL, MPI_BOR on MPI_BYTE, MPI_MINLOC/MPI_MAXLOC on MPI_2INT and
 * MPI_DOUBLE_INT with ties; a non-commutative user operation (2x2 matrix product modulo a
 * prime) whose result shows the combination order; MPI_Op_commutative, MPI_Op_free and
 * MPI_Reduce_local(_c). The testlist also forces each allreduce algorithm.
 */
#include "mtest.h"

#include <complex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define MOD 1000003u

/* Non-commutative: inout = in x inout, 2x2 matrices of 4 MPI_UNSIGNED each, row-major. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    unsigned *a = in, *b = inout;
    for (int k = 0; k < *len / 4; k++, a += 4, b += 4) {
        unsigned long long c0 =
            ((unsigned long long)a[0] * b[0] + (unsigned long long)a[1] * b[2]) % MOD;
        unsigned long long c1 =
            ((unsigned long long)a[0] * b[1] + (unsigned long long)a[1] * b[3]) % MOD;
        unsigned long long c2 =
            ((unsigned long long)a[2] * b[0] + (unsigned long long)a[3] * b[2]) % MOD;
        unsigned long long c3 =
            ((unsigned long long)a[2] * b[1] + (unsigned long long)a[3] * b[3]) % MOD;
        b[0] = (unsigned)c0, b[1] = (unsigned)c1, b[2] = (unsigned)c2, b[3] = (unsigned)c3;
    }
}

static void matrix_of(int rank, int k, unsigned *m)
{
    m[0] = (unsigned)(rank + 2 + k), m[1] = 1, m[2] = (unsigned)(rank * 3 + 1), m[3] = 0;
}

static int check_matmul(int root, int size, MPI_Op op, int rank, int count)
{
    unsigned *mine = mtest_calloc((size_t)count * 4, sizeof(unsigned));
    unsigned *out = mtest_calloc((size_t)count * 4, sizeof(unsigned));
    unsigned *ref = mtest_calloc((size_t)count * 4, sizeof(unsigned));
    for (int k = 0; k < count; k++)
        matrix_of(rank, k, mine + 4 * k);
    int rc = root >= 0 ? MPI_Reduce(mine, out, count * 4, MPI_UNSIGNED, op, root, MPI_COMM_WORLD)
                       : MPI_Allreduce(mine, out, count * 4, MPI_UNSIGNED, op, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "user op reduction returned %d", rc);
    int ok = 1;
    if (root < 0 || rank == root) {
        for (int k = 0; k < count; k++) {
            unsigned *r = ref + 4 * k, m[4];
            matrix_of(size - 1, k, r);
            for (int p = size - 2; p >= 0; p--) {
                int one = 4;
                matrix_of(p, k, m);
                matmul(m, r, &one, NULL); /* r = M_p x r: rank order M_0 x M_1 x ... */
            }
        }
        ok = memcmp(out, ref, (size_t)count * 16) == 0;
        MTEST_CHECK(ok, "non-commutative %s root %d: wrong order",
                    root >= 0 ? "reduce" : "allreduce", root);
    }
    free(mine), free(out), free(ref);
    return ok;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* MPI_SUM on int, every root and allreduce (root -1), normal and in place. */
    const int counts[] = {0, 1, 7, 1 << 18};
    for (int root = -1; root < size; root++) {
        for (int ci = 0; ci < 4; ci++) {
            int n = counts[ci];
            int *in = mtest_calloc((size_t)n + 1, sizeof(int));
            int *out = mtest_calloc((size_t)n + 1, sizeof(int));
            for (int in_place = 0; in_place < 2; in_place++) {
                for (int i = 0; i < n; i++)
                    in[i] = rank * 1000 + i, out[i] = -1;
                const void *s = in;
                void *r = out;
                int receives = root < 0 || rank == root;
                if (in_place && receives) {
                    memcpy(out, in, (size_t)n * sizeof(int));
                    s = MPI_IN_PLACE;
                }
                int rc = root >= 0 ? MPI_Reduce_c(s, r, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD)
                                   : MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
                MTEST_CHECK(rc == MPI_SUCCESS, "sum returned %d", rc);
                if (receives) {
                    int bad = -1;
                    for (int i = 0; i < n && bad < 0; i++)
                        if (out[i] != 1000 * size * (size - 1) / 2 + size * i)
                            bad = i;
                    MTEST_CHECK(bad < 0, "sum root %d n %d in_place %d: element %d is %d", root, n,
                                in_place, bad, bad >= 0 ? out[bad] : 0);
                }
            }
            free(in), free(out);
        }
    }

    /* Several types and ops through allreduce and reduce at the last rank. */
    for (int root = -1; root < size; root += size) {
        int receives = root < 0 || rank == root;
        double d = rank * 1.5, dmax = 0;
        double complex z = 1.0 + rank * I, zprod = 0, zref = 1;
        bool b = rank % 2, bx = 0;
        unsigned char by = (unsigned char)(1u << (rank % 8)), bor = 0;
        struct {
            int v, i;
        } pi = {rank % 2, rank}, pmin = {0, 0}, pmax = {0, 0};
        struct {
            double v;
            int i;
        } pd = {(double)(rank / 2), rank}, pdmax = {0, 0};
        for (int p = 0; p < size; p++)
            zref *= 1.0 + p * I;
        if (root < 0) {
            MPI_Allreduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(&z, &zprod, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD);
            MPI_Allreduce(&b, &bx, 1, MPI_C_BOOL, MPI_LXOR, MPI_COMM_WORLD);
            MPI_Allreduce(&by, &bor, 1, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD);
            MPI_Allreduce(&pi, &pmin, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
            MPI_Allreduce(&pi, &pmax, 1, MPI_2INT, MPI_MAXLOC, MPI_COMM_WORLD);
            MPI_Allreduce(&pd, &pdmax, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
        } else {
            MPI_Reduce(&d, &dmax, 1, MPI_DOUBLE, MPI_MAX, root, MPI_COMM_WORLD);
            MPI_Reduce(&z, &zprod, 1, MPI_C_DOUBLE_COMPLEX, MPI_PROD, root, MPI_COMM_WORLD);
            MPI_Reduce(&b, &bx, 1, MPI_C_BOOL, MPI_LXOR, root, MPI_COMM_WORLD);
            MPI_Reduce(&by, &bor, 1, MPI_BYTE, MPI_BOR, root, MPI_COMM_WORLD);
            MPI_Reduce(&pi, &pmin, 1, MPI_2INT, MPI_MINLOC, root, MPI_COMM_WORLD);
            MPI_Reduce(&pi, &pmax, 1, MPI_2INT, MPI_MAXLOC, root, MPI_COMM_WORLD);
            MPI_Reduce(&pd, &pdmax, 1, MPI_DOUBLE_INT, MPI_MAXLOC, root, MPI_COMM_WORLD);
        }
        if (receives) {
            unsigned char bref = 0;
            for (int p = 0; p < size; p++)
                bref |= (unsigned char)(1u << (p % 8));
            MTEST_CHECK(dmax == (size - 1) * 1.5, "max %g", dmax);
            MTEST_CHECK(creal(zprod) == creal(zref) && cimag(zprod) == cimag(zref),
                        "complex product (%g,%g), expected (%g,%g)", creal(zprod), cimag(zprod),
                        creal(zref), cimag(zref));
            MTEST_CHECK(bx == (bool)((size / 2) % 2), "lxor %d", (int)bx);
            MTEST_CHECK(bor == bref, "bor %x", bor);
            MTEST_CHECK(pmin.v == 0 && pmin.i == 0, "minloc (%d,%d)", pmin.v, pmin.i);
            MTEST_CHECK(pmax.v == (size > 1) && pmax.i == (size > 1),
                        "maxloc (%d,%d): ties take the lowest index", pmax.v, pmax.i);
            MTEST_CHECK(pdmax.v == (double)((size - 1) / 2) && pdmax.i == ((size - 1) / 2) * 2,
                        "double_int maxloc (%g,%d)", pdmax.v, pdmax.i);
        }
    }

    /* A non-commutative user operation keeps rank order from every root. */
    MPI_Op op;
    int commute = -1;
    MPI_Op_create(matmul, 0, &op);
    MPI_Op_commutative(op, &commute);
    MTEST_CHECK(commute == 0, "MPI_Op_commutative says %d", commute);
    MPI_Op_commutative(MPI_SUM, &commute);
    MTEST_CHECK(commute == 1, "MPI_SUM commutative says %d", commute);
    for (int root = -1; root < size; root++) {
        check_matmul(root, size, op, rank, 1);
        check_matmul(root, size, op, rank, 5000);
    }
    /* MPI_Reduce_local with the user op and a predefined one. */
    unsigned a[4], m[4];
    matrix_of(1, 0, a), matrix_of(2, 0, m);
    MPI_Reduce_local(a, m, 4, MPI_UNSIGNED, op);
    MTEST_CHECK(m[0] == 3 * 4 + 1 * 7 && m[1] == 3 && m[2] == 4 * 4 && m[3] == 4,
                "reduce_local user op gives %u %u %u %u", m[0], m[1], m[2], m[3]);
    long long x[3] = {1, 2, 3}, y[3] = {10, 20, 30};
    MPI_Reduce_local_c(x, y, 3, MPI_LONG_LONG, MPI_PROD);
    MTEST_CHECK(y[0] == 10 && y[1] == 40 && y[2] == 90, "reduce_local prod %lld %lld %lld", y[0],
                y[1], y[2]);
    /* Predefined operations on derived types of one basic type, as the reductions take them:
     * f90 types (MPI_ERR_OP once) and a vector with holes, which stay untouched. */
    MPI_Datatype f90r, f90c, every_other;
    MPI_Type_create_f90_real(6, 37, &f90r);
    MPI_Type_create_f90_complex(15, 300, &f90c);
    float fa[2] = {1.5f, 2.0f}, fb[2] = {1.0f, 1.0f};
    int rc = MPI_Reduce_local(fa, fb, 2, f90r, MPI_SUM);
    MTEST_CHECK(rc == MPI_SUCCESS && fb[0] == 2.5f && fb[1] == 3.0f, "f90 real sum: %d %g %g", rc,
                fb[0], fb[1]);
    double ca[2] = {1, 2}, cb[2] = {3, 4};
    rc = MPI_Reduce_local(ca, cb, 1, f90c, MPI_SUM);
    MTEST_CHECK(rc == MPI_SUCCESS && cb[0] == 4 && cb[1] == 6, "f90 complex sum: %d %g %g", rc,
                cb[0], cb[1]);
    MPI_Type_vector(3, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int va[5] = {1, 100, 2, 100, 3}, vb[5] = {7, -1, 1, -1, 9};
    rc = MPI_Reduce_local(va, vb, 1, every_other, MPI_MAX);
    MTEST_CHECK(rc == MPI_SUCCESS && vb[0] == 7 && vb[1] == -1 && vb[2] == 2 && vb[3] == -1 &&
                    vb[4] == 9,
                "vector max: %d %d %d %d %d %d", rc, vb[0], vb[1], vb[2], vb[3], vb[4]);
    MPI_Type_free(&every_other);
    MPI_Op_free(&op);
    MTEST_CHECK(op == MPI_OP_NULL, "MPI_Op_free did not reset the handle");
    return mtest_finalize(errs);
}
