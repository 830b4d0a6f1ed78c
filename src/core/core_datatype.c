/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: the predefined datatypes. The standard ABI encodes each predefined datatype in
 * 0x200-0x2ff; the table is indexed by the low 8 bits. Pair types (MPI_DOUBLE_INT ...) have an
 * extent that includes the C struct's padding, and their size counts data bytes only: where
 * there is padding they pack to their size, like a struct of the same signature.
 * Derived datatypes are built on top of these leaves in core_dtype.c.
 */
#include "core.h"

#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <wchar.h>

#define PAIR_EXTENT(t1, t2)                                                                        \
    ((int)sizeof(struct {                                                                          \
        t1 a;                                                                                      \
        t2 b;                                                                                      \
    }))
typedef struct dtype_entry {
    MPI_Datatype handle;
    mf_dtype_info_t info;
} dtype_entry_t;

#define T(handle, sz, ext, n)                                                                      \
    {                                                                                              \
        (handle),                                                                                  \
        {                                                                                          \
            (sz), (ext), (n), (sz) == (ext) ? (ext) : 0, #handle                                   \
        }                                                                                          \
    }
/* Not through T: the handle would be macro-expanded before T stringifies it. */
#define S(handle, type)                                                                            \
    {                                                                                              \
        (handle),                                                                                  \
        {                                                                                          \
            (int)sizeof(type), (int)sizeof(type), 1, (int)sizeof(type), #handle                    \
        }                                                                                          \
    }

/* Handles are pointer constants, so the lookup table indexed by handle is filled from this
 * list when the library is loaded. */
static const dtype_entry_t entries[] = {
    S(MPI_AINT, MPI_Aint),
    S(MPI_COUNT, MPI_Count),
    S(MPI_OFFSET, MPI_Offset),
    T(MPI_PACKED, 1, 1, 1),
    S(MPI_SHORT, short),
    S(MPI_INT, int),
    S(MPI_LONG, long),
    /* named as the standard's table names it; MPI_LONG_LONG is the synonym (as in MPICH) */
    {MPI_LONG_LONG,
     {(int)sizeof(long long), (int)sizeof(long long), 1, (int)sizeof(long long),
      "MPI_LONG_LONG_INT"}},
    S(MPI_UNSIGNED_SHORT, unsigned short),
    S(MPI_UNSIGNED, unsigned),
    S(MPI_UNSIGNED_LONG, unsigned long),
    S(MPI_UNSIGNED_LONG_LONG, unsigned long long),
    S(MPI_FLOAT, float),
    S(MPI_C_FLOAT_COMPLEX, float _Complex),
    S(MPI_CXX_FLOAT_COMPLEX, float _Complex),
    S(MPI_DOUBLE, double),
    S(MPI_C_DOUBLE_COMPLEX, double _Complex),
    S(MPI_CXX_DOUBLE_COMPLEX, double _Complex),
    /* Fortran default kinds, with the sizes of a default gfortran until a Fortran layer says
     * otherwise (MPI_Abi_set_fortran_info). */
    T(MPI_LOGICAL, 4, 4, 1),
    T(MPI_INTEGER, 4, 4, 1),
    T(MPI_REAL, 4, 4, 1),
    T(MPI_COMPLEX, 8, 8, 1),
    T(MPI_DOUBLE_PRECISION, 8, 8, 1),
    T(MPI_DOUBLE_COMPLEX, 16, 16, 1),
    T(MPI_CHARACTER, 1, 1, 1),
    S(MPI_LONG_DOUBLE, long double),
    S(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex),
    S(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex),
    T(MPI_FLOAT_INT, (int)(sizeof(float) + sizeof(int)), PAIR_EXTENT(float, int), 2),
    T(MPI_DOUBLE_INT, (int)(sizeof(double) + sizeof(int)), PAIR_EXTENT(double, int), 2),
    T(MPI_LONG_INT, (int)(sizeof(long) + sizeof(int)), PAIR_EXTENT(long, int), 2),
    T(MPI_2INT, (int)(2 * sizeof(int)), PAIR_EXTENT(int, int), 2),
    T(MPI_SHORT_INT, (int)(sizeof(short) + sizeof(int)), PAIR_EXTENT(short, int), 2),
    T(MPI_LONG_DOUBLE_INT, (int)(sizeof(long double) + sizeof(int)), PAIR_EXTENT(long double, int),
      2),
    T(MPI_2REAL, 8, 8, 2),
    T(MPI_2DOUBLE_PRECISION, 16, 16, 2),
    T(MPI_2INTEGER, 8, 8, 2),
    S(MPI_C_BOOL, bool),
    S(MPI_CXX_BOOL, bool),
    S(MPI_WCHAR, wchar_t),
    S(MPI_INT8_T, int8_t),
    S(MPI_UINT8_T, uint8_t),
    S(MPI_CHAR, char),
    S(MPI_SIGNED_CHAR, signed char),
    S(MPI_UNSIGNED_CHAR, unsigned char),
    T(MPI_BYTE, 1, 1, 1),
    S(MPI_INT16_T, int16_t),
    S(MPI_UINT16_T, uint16_t),
    S(MPI_INT32_T, int32_t),
    S(MPI_UINT32_T, uint32_t),
    S(MPI_INT64_T, int64_t),
    S(MPI_UINT64_T, uint64_t),
    T(MPI_LOGICAL1, 1, 1, 1),
    T(MPI_INTEGER1, 1, 1, 1),
    T(MPI_LOGICAL2, 2, 2, 1),
    T(MPI_INTEGER2, 2, 2, 1),
    T(MPI_REAL2, 2, 2, 1),
    T(MPI_LOGICAL4, 4, 4, 1),
    T(MPI_INTEGER4, 4, 4, 1),
    T(MPI_REAL4, 4, 4, 1),
    T(MPI_COMPLEX4, 4, 4, 1),
    T(MPI_LOGICAL8, 8, 8, 1),
    T(MPI_INTEGER8, 8, 8, 1),
    T(MPI_REAL8, 8, 8, 1),
    T(MPI_COMPLEX8, 8, 8, 1),
    T(MPI_LOGICAL16, 16, 16, 1),
    T(MPI_INTEGER16, 16, 16, 1),
    T(MPI_REAL16, 16, 16, 1),
    T(MPI_COMPLEX16, 16, 16, 1),
    T(MPI_COMPLEX32, 32, 32, 1),
};

mf_dtype_info_t mf_dtype_predefined_table[256];

__attribute__((constructor)) static void dtype_table_init(void)
{
    for (size_t i = 0; i < sizeof(entries) / sizeof(entries[0]); i++)
        mf_dtype_predefined_table[(uintptr_t)entries[i].handle & 0xff] = entries[i].info;
}
