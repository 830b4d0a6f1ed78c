/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Type_size, MPI_Type_size_c, MPI_Type_get_extent and MPI_Type_get_extent_c of every
 * predefined datatype. C types must match sizeof of the C type; the pair types must have
 * the size of their two members and the extent of the C struct (MPI_DOUBLE_INT: size 12,
 * extent 16 on x86-64); Fortran default kinds have the sizes of a library with no Fortran
 * layer registered (INTEGER, REAL and LOGICAL 4, DOUBLE PRECISION 8). The optional
 * fixed-size Fortran types (MPI_INTEGER8, MPI_REAL2 ...) may be unsupported, which the
 * standard ABI reports as size MPI_UNDEFINED (some read it as 0); otherwise they have the
 * size their name gives. Every lower bound is 0.
 */
#include "mtest.h"
#include "pair_types.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

struct type_case {
    MPI_Datatype type;
    const char *name;
    MPI_Count size;
    MPI_Aint extent;
    int optional;
};

#define PLAIN(t, n, s)                                                                             \
    {                                                                                              \
        t, n, s, s, 0                                                                              \
    }
#define PAIR(t, n, st)                                                                             \
    {                                                                                              \
        t, n, sizeof(((st *)0)->v) + sizeof(int), sizeof(st), 0                                    \
    }
#define OPTIONAL(t, n, s)                                                                          \
    {                                                                                              \
        t, n, s, s, 1                                                                              \
    }

static void check_type(const struct type_case *c)
{
    MPI_Count size_c = -1, lb_c = -1, extent_c = -1;
    MPI_Aint lb = -1, extent = -1;
    int size = -1;

    if (!MTEST_CHECK(MPI_Type_size(c->type, &size) == MPI_SUCCESS, "MPI_Type_size(%s) failed",
                     c->name)) {
        return;
    }
    MTEST_CHECK(MPI_Type_size_c(c->type, &size_c) == MPI_SUCCESS &&
                    (size_c == size || (size == MPI_UNDEFINED && size_c == MPI_UNDEFINED)),
                "MPI_Type_size_c(%s) gave %lld, MPI_Type_size %d", c->name, (long long)size_c,
                size);
    if (c->optional && (size == MPI_UNDEFINED || size == 0)) {
        mtest_debug("%s is not supported", c->name);
        return;
    }
    MTEST_CHECK(size == c->size, "MPI_Type_size(%s) = %d, expected %lld", c->name, size,
                (long long)c->size);
    MTEST_CHECK(MPI_Type_get_extent(c->type, &lb, &extent) == MPI_SUCCESS && lb == 0 &&
                    extent == c->extent,
                "MPI_Type_get_extent(%s) gave lb %ld extent %ld, expected 0 and %ld", c->name,
                (long)lb, (long)extent, (long)c->extent);
    MTEST_CHECK(MPI_Type_get_extent_c(c->type, &lb_c, &extent_c) == MPI_SUCCESS && lb_c == 0 &&
                    extent_c == c->extent,
                "MPI_Type_get_extent_c(%s) gave lb %lld extent %lld", c->name, (long long)lb_c,
                (long long)extent_c);
}

int main(int argc, char **argv)
{
    const struct type_case cases[] = {
        PLAIN(MPI_CHAR, "MPI_CHAR", sizeof(char)),
        PLAIN(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", sizeof(signed char)),
        PLAIN(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", sizeof(unsigned char)),
        PLAIN(MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t)),
        PLAIN(MPI_SHORT, "MPI_SHORT", sizeof(short)),
        PLAIN(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", sizeof(unsigned short)),
        PLAIN(MPI_INT, "MPI_INT", sizeof(int)),
        PLAIN(MPI_UNSIGNED, "MPI_UNSIGNED", sizeof(unsigned)),
        PLAIN(MPI_LONG, "MPI_LONG", sizeof(long)),
        PLAIN(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(unsigned long)),
        PLAIN(MPI_LONG_LONG, "MPI_LONG_LONG", sizeof(long long)),
        PLAIN(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", sizeof(long long)),
        PLAIN(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", sizeof(unsigned long long)),
        PLAIN(MPI_FLOAT, "MPI_FLOAT", sizeof(float)),
        PLAIN(MPI_DOUBLE, "MPI_DOUBLE", sizeof(double)),
        PLAIN(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double)),
        PLAIN(MPI_INT8_T, "MPI_INT8_T", 1),
        PLAIN(MPI_UINT8_T, "MPI_UINT8_T", 1),
        PLAIN(MPI_INT16_T, "MPI_INT16_T", 2),
        PLAIN(MPI_UINT16_T, "MPI_UINT16_T", 2),
        PLAIN(MPI_INT32_T, "MPI_INT32_T", 4),
        PLAIN(MPI_UINT32_T, "MPI_UINT32_T", 4),
        PLAIN(MPI_INT64_T, "MPI_INT64_T", 8),
        PLAIN(MPI_UINT64_T, "MPI_UINT64_T", 8),
        PLAIN(MPI_C_BOOL, "MPI_C_BOOL", sizeof(bool)),
        PLAIN(MPI_C_COMPLEX, "MPI_C_COMPLEX", sizeof(float _Complex)),
        PLAIN(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", sizeof(float _Complex)),
        PLAIN(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", sizeof(double _Complex)),
        PLAIN(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", sizeof(long double _Complex)),
        PLAIN(MPI_BYTE, "MPI_BYTE", 1),
        PLAIN(MPI_PACKED, "MPI_PACKED", 1),
        PLAIN(MPI_AINT, "MPI_AINT", sizeof(MPI_Aint)),
        PLAIN(MPI_OFFSET, "MPI_OFFSET", sizeof(MPI_Offset)),
        PLAIN(MPI_COUNT, "MPI_COUNT", sizeof(MPI_Count)),
        /* C++ types: bool is one byte and complex matches C's on the Linux C++ ABIs */
        PLAIN(MPI_CXX_BOOL, "MPI_CXX_BOOL", 1),
        PLAIN(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", sizeof(float _Complex)),
        PLAIN(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", sizeof(double _Complex)),
        PLAIN(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX",
              sizeof(long double _Complex)),
        PAIR(MPI_FLOAT_INT, "MPI_FLOAT_INT", struct float_int),
        PAIR(MPI_DOUBLE_INT, "MPI_DOUBLE_INT", struct double_int),
        PAIR(MPI_LONG_INT, "MPI_LONG_INT", struct long_int),
        PAIR(MPI_2INT, "MPI_2INT", struct two_int),
        PAIR(MPI_SHORT_INT, "MPI_SHORT_INT", struct short_int),
        PAIR(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", struct long_double_int),
        PLAIN(MPI_INTEGER, "MPI_INTEGER", 4),
        PLAIN(MPI_REAL, "MPI_REAL", 4),
        PLAIN(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8),
        PLAIN(MPI_COMPLEX, "MPI_COMPLEX", 8),
        PLAIN(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16),
        PLAIN(MPI_LOGICAL, "MPI_LOGICAL", 4),
        PLAIN(MPI_CHARACTER, "MPI_CHARACTER", 1),
        PLAIN(MPI_2REAL, "MPI_2REAL", 8),
        PLAIN(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16),
        PLAIN(MPI_2INTEGER, "MPI_2INTEGER", 8),
        OPTIONAL(MPI_LOGICAL1, "MPI_LOGICAL1", 1),
        OPTIONAL(MPI_LOGICAL2, "MPI_LOGICAL2", 2),
        OPTIONAL(MPI_LOGICAL4, "MPI_LOGICAL4", 4),
        OPTIONAL(MPI_LOGICAL8, "MPI_LOGICAL8", 8),
        OPTIONAL(MPI_LOGICAL16, "MPI_LOGICAL16", 16),
        OPTIONAL(MPI_INTEGER1, "MPI_INTEGER1", 1),
        OPTIONAL(MPI_INTEGER2, "MPI_INTEGER2", 2),
        OPTIONAL(MPI_INTEGER4, "MPI_INTEGER4", 4),
        OPTIONAL(MPI_INTEGER8, "MPI_INTEGER8", 8),
        OPTIONAL(MPI_INTEGER16, "MPI_INTEGER16", 16),
        OPTIONAL(MPI_REAL2, "MPI_REAL2", 2),
        OPTIONAL(MPI_REAL4, "MPI_REAL4", 4),
        OPTIONAL(MPI_REAL8, "MPI_REAL8", 8),
        OPTIONAL(MPI_REAL16, "MPI_REAL16", 16),
        OPTIONAL(MPI_COMPLEX4, "MPI_COMPLEX4", 4),
        OPTIONAL(MPI_COMPLEX8, "MPI_COMPLEX8", 8),
        OPTIONAL(MPI_COMPLEX16, "MPI_COMPLEX16", 16),
        OPTIONAL(MPI_COMPLEX32, "MPI_COMPLEX32", 32),
    };

    mtest_init(&argc, &argv);
    MTEST_CHECK(MPI_LONG_LONG_INT == MPI_LONG_LONG, "MPI_LONG_LONG_INT is not MPI_LONG_LONG");
    MTEST_CHECK(MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX is not MPI_C_FLOAT_COMPLEX");
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_type(&cases[i]);
    }
    return mtest_finalize(0);
}
