/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Type_create_f90_integer/real/complex: types with the layout of the smallest Fortran
 * kind that fits, combiner MPI_COMBINER_F90_* and the arguments as contents, the same handle
 * for the same arguments, usable in communication and never freed. MPI_Type_get_value_index:
 * the predefined pair types of MINLOC/MAXLOC, MPI_DATATYPE_NULL for other pairs. Bad
 * arguments reach the error handler with their class.
 */
#include "mtest.h"

static void check_f90(MPI_Datatype t, int combiner, int nints, int p, int r, int size)
{
    int ni = -1, na = -1, nt = -1, comb = -1, ints[2] = {-1, -1}, sz = -1;
    MPI_Type_get_envelope(t, &ni, &na, &nt, &comb);
    MTEST_CHECK(comb == combiner && ni == nints && na == 0 && nt == 0,
                "envelope: combiner %d ni %d na %d nt %d, expected combiner %d ni %d", comb, ni, na,
                nt, combiner, nints);
    if (ni == nints && nints <= 2) {
        MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL);
        if (nints == 1)
            MTEST_CHECK(ints[0] == r, "contents: r %d, expected %d", ints[0], r);
        else
            MTEST_CHECK(ints[0] == p && ints[1] == r, "contents: p %d r %d, expected %d %d",
                        ints[0], ints[1], p, r);
    }
    MPI_Type_size(t, &sz);
    MTEST_CHECK(sz == size, "size %d, expected %d", sz, size);
}

/* Inside a struct between two bytes an F90 type has the bounds of the C type of its size: it
 * has no explicit lb/ub markers of its own (they made such a struct's extent the F90 type's
 * alone, which mpi4py's util.dtlib tests found). */
static void check_f90_in_struct(MPI_Datatype t, int size)
{
    MPI_Datatype same = size == 1   ? MPI_INT8_T
                        : size == 2 ? MPI_INT16_T
                        : size == 4 ? MPI_INT32_T
                                    : MPI_INT64_T;
    int blens[3] = {1, 1, 1};
    MPI_Aint disps[3] = {0, size, 2 * size}, lb[2], extent[2];
    for (int k = 0; k < 2; k++) {
        MPI_Datatype types[3] = {MPI_BYTE, k == 0 ? t : same, MPI_BYTE}, st;
        MPI_Type_create_struct(3, blens, disps, types, &st);
        MPI_Type_get_extent(st, &lb[k], &extent[k]);
        MPI_Type_free(&st);
    }
    MTEST_CHECK(lb[0] == 0 && lb[0] == lb[1] && extent[0] == extent[1],
                "struct of bytes around a %d-byte F90 type: lb %ld extent %ld, expected %ld %ld",
                size, (long)lb[0], (long)extent[0], (long)lb[1], (long)extent[1]);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Datatype i1, i2, i4, i9, i18, r6, r15, c6, c15, again;
    MPI_Type_create_f90_integer(1, &i1);
    MPI_Type_create_f90_integer(2, &i2);
    MPI_Type_create_f90_integer(4, &i4);
    MPI_Type_create_f90_integer(9, &i9);
    MPI_Type_create_f90_integer(18, &i18);
    check_f90(i1, MPI_COMBINER_F90_INTEGER, 1, 0, 1, 1);
    check_f90(i2, MPI_COMBINER_F90_INTEGER, 1, 0, 2, 1);
    check_f90(i4, MPI_COMBINER_F90_INTEGER, 1, 0, 4, 2);
    check_f90(i9, MPI_COMBINER_F90_INTEGER, 1, 0, 9, 4);
    check_f90(i18, MPI_COMBINER_F90_INTEGER, 1, 0, 18, 8);
    MPI_Type_create_f90_real(6, 30, &r6);
    MPI_Type_create_f90_real(15, 300, &r15);
    MPI_Type_create_f90_complex(6, 30, &c6);
    MPI_Type_create_f90_complex(15, MPI_UNDEFINED, &c15);
    check_f90(r6, MPI_COMBINER_F90_REAL, 2, 6, 30, 4);
    check_f90(r15, MPI_COMBINER_F90_REAL, 2, 15, 300, 8);
    check_f90(c6, MPI_COMBINER_F90_COMPLEX, 2, 6, 30, 8);
    check_f90(c15, MPI_COMBINER_F90_COMPLEX, 2, 15, MPI_UNDEFINED, 16);
    check_f90_in_struct(i1, 1);
    check_f90_in_struct(i4, 2);
    check_f90_in_struct(i9, 4);
    check_f90_in_struct(i18, 8);
    check_f90_in_struct(r6, 4);
    check_f90_in_struct(r15, 8);
    MPI_Type_create_f90_real(15, 300, &again);
    MTEST_CHECK(again == r15, "a second MPI_Type_create_f90_real(15, 300) gave another handle");

    /* They carry data: a double-precision exchange around a ring. */
    double out[3] = {rank + 0.5, rank * 2.0, -1.0}, in[3] = {0, 0, 0};
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Type_commit(&r15);
    MPI_Sendrecv(out, 3, r15, next, 0, in, 3, r15, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_CHECK(in[0] == prev + 0.5 && in[1] == prev * 2.0 && in[2] == -1.0,
                "received %g %g %g from %d", in[0], in[1], in[2], prev);

    /* Predefined: they cannot be freed. */
    MPI_Datatype keep = r6;
    rc = MPI_Type_free(&keep);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_free");
    rc = MPI_Type_create_f90_integer(100, &again);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_f90_integer");
    rc = MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &again);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_f90_real");
    rc = MPI_Type_create_f90_complex(1000, 10, &again);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_f90_complex");
    rc = MPI_Type_create_f90_integer(4, NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_f90_integer");

    /* MPI_Type_get_value_index */
    static const struct {
        MPI_Datatype value, pair;
    } pairs[] = {{MPI_FLOAT, MPI_FLOAT_INT}, {MPI_DOUBLE, MPI_DOUBLE_INT},
                 {MPI_LONG, MPI_LONG_INT},   {MPI_INT, MPI_2INT},
                 {MPI_SHORT, MPI_SHORT_INT}, {MPI_LONG_DOUBLE, MPI_LONG_DOUBLE_INT}};
    for (int i = 0; i < 6; i++) {
        MPI_Datatype got = MPI_DATATYPE_NULL;
        rc = MPI_Type_get_value_index(pairs[i].value, MPI_INT, &got);
        MTEST_CHECK(rc == MPI_SUCCESS && got == pairs[i].pair, "value index %d: rc %d", i, rc);
        got = MPI_INT;
        rc = MPI_Type_get_value_index(pairs[i].value, MPI_FLOAT, &got);
        MTEST_CHECK(rc == MPI_SUCCESS && got == MPI_DATATYPE_NULL,
                    "value index %d with a float index gave a type", i);
    }
    MPI_Datatype got;
    rc = MPI_Type_get_value_index(MPI_DATATYPE_NULL, MPI_INT, &got);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_get_value_index");
    rc = MPI_Type_get_value_index(MPI_INT, MPI_DATATYPE_NULL, &got);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_get_value_index");
    rc = MPI_Type_get_value_index(MPI_INT, MPI_INT, NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_get_value_index");
    return mtest_finalize(0);
}
