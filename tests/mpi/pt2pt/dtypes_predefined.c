/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every predefined datatype travels with the right bytes: around a ring (to oneself when
 * alone) each rank sends 17 and 1000 elements of each type with MPI_Sendrecv and checks
 * the received count and bytes. For the pair types (MPI_DOUBLE_INT ...) only the bytes of
 * the two members are compared, since the padding between and after them is not data.
 * Optional types the library does not support (size MPI_UNDEFINED or 0) are skipped.
 */
#include "mtest.h"
#include "pair_types.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

struct type_case {
    MPI_Datatype type;
    const char *name;
    size_t first;  /* bytes of the first member of a pair type; 0 for other types */
    size_t second; /* offset of the int member of a pair type */
};

#define PLAIN(t)                                                                                   \
    {                                                                                              \
        t, #t, 0, 0                                                                                \
    }
#define PAIR(t, st)                                                                                \
    {                                                                                              \
        t, #t, sizeof(((st *)0)->v), offsetof(st, i)                                               \
    }

static const int counts[] = {17, 1000};
static int rank, size, right, left;

/* Offset of the first data byte that differs, or -1. */
static long compare_data(const struct type_case *c, const unsigned char *got,
                         const unsigned char *want, int count, MPI_Aint extent)
{
    for (long e = 0; e < count; e++) {
        const unsigned char *g = got + e * extent, *w = want + e * extent;

        if (c->first == 0) {
            if (memcmp(g, w, (size_t)extent) != 0) {
                return e * extent;
            }
            continue;
        }
        if (memcmp(g, w, c->first) != 0 || memcmp(g + c->second, w + c->second, sizeof(int)) != 0) {
            return e * extent;
        }
    }
    return -1;
}

static void check_type(const struct type_case *c, unsigned char *sbuf, unsigned char *rbuf,
                       unsigned char *want)
{
    MPI_Aint lb, extent;
    MPI_Status status;
    int type_size = 0, got = -1;
    long bad;

    MPI_Type_size(c->type, &type_size);
    if (type_size == MPI_UNDEFINED || type_size == 0) {
        mtest_debug("%s is not supported, skipped", c->name);
        return;
    }
    MPI_Type_get_extent(c->type, &lb, &extent);
    for (int i = 0; i < 2; i++) {
        size_t bytes = (size_t)counts[i] * (size_t)extent;

        mtest_fill(sbuf, bytes, (unsigned)(rank * 31 + i));
        mtest_fill(want, bytes, (unsigned)(left * 31 + i));
        memset(rbuf, 0, bytes);
        MPI_Sendrecv(sbuf, counts[i], c->type, right, i, rbuf, counts[i], c->type, left, i,
                     MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, c->type, &got);
        MTEST_CHECK(got == counts[i], "%s: received count %d of %d", c->name, got, counts[i]);
        bad = compare_data(c, rbuf, want, counts[i], extent);
        MTEST_CHECK(bad < 0, "%s x %d: wrong data in the element at byte %ld", c->name, counts[i],
                    bad);
    }
}

int main(int argc, char **argv)
{
    const struct type_case cases[] = {
        PLAIN(MPI_CHAR),
        PLAIN(MPI_SIGNED_CHAR),
        PLAIN(MPI_UNSIGNED_CHAR),
        PLAIN(MPI_WCHAR),
        PLAIN(MPI_SHORT),
        PLAIN(MPI_UNSIGNED_SHORT),
        PLAIN(MPI_INT),
        PLAIN(MPI_UNSIGNED),
        PLAIN(MPI_LONG),
        PLAIN(MPI_UNSIGNED_LONG),
        PLAIN(MPI_LONG_LONG),
        PLAIN(MPI_UNSIGNED_LONG_LONG),
        PLAIN(MPI_FLOAT),
        PLAIN(MPI_DOUBLE),
        PLAIN(MPI_LONG_DOUBLE),
        PLAIN(MPI_INT8_T),
        PLAIN(MPI_UINT8_T),
        PLAIN(MPI_INT16_T),
        PLAIN(MPI_UINT16_T),
        PLAIN(MPI_INT32_T),
        PLAIN(MPI_UINT32_T),
        PLAIN(MPI_INT64_T),
        PLAIN(MPI_UINT64_T),
        PLAIN(MPI_C_BOOL),
        PLAIN(MPI_C_FLOAT_COMPLEX),
        PLAIN(MPI_C_DOUBLE_COMPLEX),
        PLAIN(MPI_C_LONG_DOUBLE_COMPLEX),
        PLAIN(MPI_BYTE),
        PLAIN(MPI_PACKED),
        PLAIN(MPI_AINT),
        PLAIN(MPI_OFFSET),
        PLAIN(MPI_COUNT),
        PLAIN(MPI_CXX_BOOL),
        PLAIN(MPI_CXX_FLOAT_COMPLEX),
        PLAIN(MPI_CXX_DOUBLE_COMPLEX),
        PLAIN(MPI_CXX_LONG_DOUBLE_COMPLEX),
        PAIR(MPI_FLOAT_INT, struct float_int),
        PAIR(MPI_DOUBLE_INT, struct double_int),
        PAIR(MPI_LONG_INT, struct long_int),
        PAIR(MPI_2INT, struct two_int),
        PAIR(MPI_SHORT_INT, struct short_int),
        PAIR(MPI_LONG_DOUBLE_INT, struct long_double_int),
        PLAIN(MPI_INTEGER),
        PLAIN(MPI_REAL),
        PLAIN(MPI_DOUBLE_PRECISION),
        PLAIN(MPI_COMPLEX),
        PLAIN(MPI_DOUBLE_COMPLEX),
        PLAIN(MPI_LOGICAL),
        PLAIN(MPI_CHARACTER),
        PLAIN(MPI_2REAL),
        PLAIN(MPI_2DOUBLE_PRECISION),
        PLAIN(MPI_2INTEGER),
        PLAIN(MPI_LOGICAL1),
        PLAIN(MPI_LOGICAL2),
        PLAIN(MPI_LOGICAL4),
        PLAIN(MPI_LOGICAL8),
        PLAIN(MPI_LOGICAL16),
        PLAIN(MPI_INTEGER1),
        PLAIN(MPI_INTEGER2),
        PLAIN(MPI_INTEGER4),
        PLAIN(MPI_INTEGER8),
        PLAIN(MPI_INTEGER16),
        PLAIN(MPI_REAL2),
        PLAIN(MPI_REAL4),
        PLAIN(MPI_REAL8),
        PLAIN(MPI_REAL16),
        PLAIN(MPI_COMPLEX4),
        PLAIN(MPI_COMPLEX8),
        PLAIN(MPI_COMPLEX16),
        PLAIN(MPI_COMPLEX32),
    };
    /* the largest extent of a predefined type is 32 bytes */
    size_t max_bytes = (size_t)counts[1] * 32;
    unsigned char *sbuf, *rbuf, *want;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    sbuf = mtest_calloc(max_bytes, 1);
    rbuf = mtest_calloc(max_bytes, 1);
    want = mtest_calloc(max_bytes, 1);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_type(&cases[i], sbuf, rbuf, want);
    }
    free(sbuf);
    free(rbuf);
    free(want);
    return mtest_finalize(0);
}
