/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Pack/MPI_Unpack of a struct type with MPI_Pack_size, external32 (sizes, big-endian bytes,
 * round trip; run on Manifold only, see below), MPI_Get_address with MPI_Aint_diff/MPI_Aint_add, a
 * struct of absolute addresses sent from MPI_BOTTOM, and type names.
 */
#include "mtest.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

struct rec {
    int a;
    double b;
    short c[3];
};

/* external32 gives a long double 16 bytes of IEEE binary128, big-endian (MPI-5.0 14.5.2):
 * from the x87 format, the exponent carries over and the significand's 63 fraction bits lead
 * the 112; back, they round to nearest, ties to even. */
static void check_long_double(void)
{
#if LDBL_MANT_DIG == 64 && LDBL_MAX_EXP == 16384
    static const long double values[] = {1.5L, -2.0L, 3.14159265358979323846264338327950288L,
                                         LDBL_TRUE_MIN, INFINITY};
    static const unsigned char quads[][16] = {
        {0x3f, 0xff, 0x80},
        {0xc0, 0x00},
        {0x40, 0x00, 0x92, 0x1f, 0xb5, 0x44, 0x42, 0xd1, 0x84, 0x6a},
        {0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02},
        {0x7f, 0xff},
    };
    enum { N = sizeof(values) / sizeof(values[0]) };
    unsigned char ext[16 * N];
    long double back[N];
    MPI_Aint xsize = 0, xpos = 0;
    MPI_Pack_external_size("external32", N, MPI_LONG_DOUBLE, &xsize);
    MTEST_CHECK(xsize == 16 * N, "external32 size of %d long doubles %ld", N, (long)xsize);
    MPI_Pack_external("external32", values, N, MPI_LONG_DOUBLE, ext, sizeof(ext), &xpos);
    for (int i = 0; i < N; i++)
        MTEST_CHECK(memcmp(ext + 16 * i, quads[i], 16) == 0,
                    "external32 long double %d: bytes %02x %02x %02x .. %02x", i, ext[16 * i],
                    ext[16 * i + 1], ext[16 * i + 2], ext[16 * i + 9]);
    xpos = 0;
    MPI_Unpack_external("external32", ext, sizeof(ext), &xpos, back, N, MPI_LONG_DOUBLE);
    for (int i = 0; i < N; i++)
        MTEST_CHECK(back[i] == values[i], "external32 long double %d came back as %Lg", i, back[i]);
    /* beyond the x87 significand: 1 + 2^-64 is a tie (to even: 1), 1 + 3 * 2^-65 rounds up */
    static const unsigned char ties[2][16] = {{0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x01},
                                              {0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x01, 0x80}};
    long double rounded[2];
    xpos = 0;
    MPI_Unpack_external("external32", ties, sizeof(ties), &xpos, rounded, 2, MPI_LONG_DOUBLE);
    MTEST_CHECK(rounded[0] == 1.0L && rounded[1] == 1.0L + LDBL_EPSILON,
                "external32 long double rounding: %.21Lg %.21Lg", rounded[0], rounded[1]);
    /* the pair type: a long double and an int, 20 bytes */
    struct {
        long double v;
        int i;
    } pair = {-2.0L, 7}, pair_back = {0, 0};
    MPI_Pack_external_size("external32", 1, MPI_LONG_DOUBLE_INT, &xsize);
    xpos = 0;
    MPI_Pack_external("external32", &pair, 1, MPI_LONG_DOUBLE_INT, ext, sizeof(ext), &xpos);
    MTEST_CHECK(xsize == 20 && xpos == 20 && memcmp(ext, quads[1], 16) == 0 && ext[19] == 7,
                "external32 MPI_LONG_DOUBLE_INT: size %ld position %ld", (long)xsize, (long)xpos);
    xpos = 0;
    MPI_Unpack_external("external32", ext, 20, &xpos, &pair_back, 1, MPI_LONG_DOUBLE_INT);
    MTEST_CHECK(pair_back.v == -2.0L && pair_back.i == 7, "external32 MPI_LONG_DOUBLE_INT back");
#endif
}

int main(int argc, char **argv)
{
    struct rec in = {7, 2.5, {1, 2, 3}}, out;
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_SHORT}, t, abs_t;
    int bl[3] = {1, 1, 3}, rank, size, psize = 0, pos = 0, len;
    MPI_Aint disp[3], base, lb, extent;
    char packed[128], name[MPI_MAX_OBJECT_NAME];

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_address(&in, &base);
    MPI_Get_address(&in.a, &disp[0]);
    MPI_Get_address(&in.b, &disp[1]);
    MPI_Get_address(&in.c, &disp[2]);
    MTEST_CHECK(MPI_Aint_add(base, MPI_Aint_diff(disp[1], base)) == disp[1], "address arithmetic");
    for (int i = 0; i < 3; i++) {
        disp[i] = MPI_Aint_diff(disp[i], base);
    }
    MPI_Type_create_struct(3, bl, disp, types, &t);
    MPI_Type_commit(&t);
    MPI_Type_get_extent(t, &lb, &extent);
    MTEST_CHECK(lb == 0 && extent == (MPI_Aint)sizeof(struct rec), "struct extent %ld, sizeof %zu",
                (long)extent, sizeof(struct rec));
    MPI_Pack_size(2, t, MPI_COMM_WORLD, &psize);
    MTEST_CHECK(psize >= 2 * 18, "MPI_Pack_size gave %d", psize);
    MPI_Pack(&in, 1, t, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
    MTEST_CHECK(pos == 18, "packed one struct into %d bytes", pos);
    memset(&out, 0, sizeof(out));
    pos = 0;
    MPI_Unpack(packed, sizeof(packed), &pos, &out, 1, t, MPI_COMM_WORLD);
    MTEST_CHECK(out.a == 7 && out.b == 2.5 && out.c[2] == 3, "unpack: %d %g %d", out.a, out.b,
                out.c[2]);

    /* external32: MPICH 5.0.2 dies with SIGILL packing this struct, so Manifold only */
    if (mtest_is_manifold()) {
        MPI_Aint xsize = 0, xpos = 0;
        unsigned char *x = (unsigned char *)packed;

        MPI_Pack_external_size("external32", 1, t, &xsize);
        MTEST_CHECK(xsize == 4 + 8 + 6, "external32 size %ld", (long)xsize);
        MPI_Pack_external("external32", &in, 1, t, packed, sizeof(packed), &xpos);
        MTEST_CHECK(xpos == xsize && x[3] == 7 && x[0] == 0 && x[4] == 0x40 && x[13] == 1,
                    "external32 bytes: position %ld, %d %d %d %d", (long)xpos, x[0], x[3], x[4],
                    x[13]);
        memset(&out, 0, sizeof(out));
        xpos = 0;
        MPI_Unpack_external("external32", packed, xsize, &xpos, &out, 1, t);
        MTEST_CHECK(out.a == 7 && out.b == 2.5 && out.c[1] == 2, "external32 round trip");

        /* MPI_LONG_INT is a long (4 bytes in external32) and an int, as the struct of the two
         * is; MPI_WCHAR is 2 bytes; a long double is 16 (check_long_double) */
        struct {
            long v;
            int i;
        } li = {-5, 7};
        MPI_Pack_external_size("external32", 1, MPI_LONG_INT, &xsize);
        xpos = 0;
        MPI_Pack_external("external32", &li, 1, MPI_LONG_INT, packed, sizeof(packed), &xpos);
        static const unsigned char want[8] = {0xff, 0xff, 0xff, 0xfb, 0, 0, 0, 7};
        MTEST_CHECK(xsize == 8 && xpos == 8 && memcmp(packed, want, 8) == 0,
                    "external32 MPI_LONG_INT: size %ld, position %ld", (long)xsize, (long)xpos);
        MPI_Pack_external_size("external32", 1, MPI_WCHAR, &xsize);
        MTEST_CHECK(xsize == 2, "external32 size of MPI_WCHAR %ld", (long)xsize);
        /* wide characters move 2 bytes each, in buffers of exactly the sizes MPI names (a
         * 4-byte wchar_t once went through the 8-byte long's conversion: read past both
         * buffers, wrote 4 bytes per item, and failed on a non-zero neighbour) */
        enum { NW = 3 };
        wchar_t *win = malloc(NW * sizeof(wchar_t)), *wout = malloc(NW * sizeof(wchar_t));
        win[0] = L'A';
        win[1] = 0x141;
        win[2] = 0x7fff;
        unsigned char *wext = malloc(2 * NW);
        xpos = 0;
        MPI_Pack_external("external32", win, NW, MPI_WCHAR, wext, 2 * NW, &xpos);
        static const unsigned char wwant[2 * NW] = {0x00, 0x41, 0x01, 0x41, 0x7f, 0xff};
        MTEST_CHECK(xpos == 2 * NW && memcmp(wext, wwant, 2 * NW) == 0,
                    "external32 MPI_WCHAR bytes, position %ld", (long)xpos);
        xpos = 0;
        MPI_Unpack_external("external32", wext, 2 * NW, &xpos, wout, NW, MPI_WCHAR);
        MTEST_CHECK(xpos == 2 * NW && memcmp(win, wout, NW * sizeof(wchar_t)) == 0,
                    "external32 MPI_WCHAR round trip, position %ld", (long)xpos);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        win[0] = 0x10000; /* beyond 2 bytes */
        xpos = 0;
        int wrc = MPI_Pack_external("external32", win, 1, MPI_WCHAR, wext, 2 * NW, &xpos);
        MTEST_CHECK_ERR(wrc, MPI_ERR_CONVERSION, "MPI_Pack_external");
        free(win);
        free(wout);
        free(wext);
        check_long_double();
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    }

    /* absolute addresses from MPI_BOTTOM */
    MPI_Get_address(&in.a, &disp[0]);
    MPI_Get_address(&in.b, &disp[1]);
    MPI_Get_address(&in.c, &disp[2]);
    MPI_Type_create_struct(3, bl, disp, types, &abs_t);
    MPI_Type_commit(&abs_t);
    if (rank == size - 1) {
        in.a = 42;
        MPI_Send(MPI_BOTTOM, 1, abs_t, 0, 3, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        memset(&out, 0, sizeof(out));
        MPI_Recv(&out, 1, t, size - 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MTEST_CHECK(out.a == 42 && out.b == 2.5 && out.c[0] == 1, "MPI_BOTTOM send: %d %g %d",
                    out.a, out.b, out.c[0]);
    }

    MPI_Type_set_name(t, "rec");
    MPI_Type_get_name(t, name, &len);
    MTEST_CHECK(strcmp(name, "rec") == 0 && len == 3, "type name '%s'", name);
    MPI_Type_get_name(MPI_DOUBLE, name, &len);
    MTEST_CHECK(strcmp(name, "MPI_DOUBLE") == 0, "predefined name '%s'", name);
    MPI_Type_free(&abs_t);
    MPI_Type_free(&t);
    return mtest_finalize(0);
}
