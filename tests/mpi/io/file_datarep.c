/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Data representations of file views (MPI-4.1 section 14.5).
 * - "external32": the file holds big-endian data in the standard's sizes (MPI_LONG 4 bytes,
 *   MPI_DOUBLE_INT 12, a struct of char, double and int 13, with no padding), checked byte by
 *   byte through a native view. MPI_File_get_type_extent gives those sizes, the file pointer
 *   and MPI_File_get_byte_offset count them, and a filetype's displacements in items scale to
 *   them (a vector of MPI_LONG with stride 2 puts items 8 bytes apart) while byte displacements
 *   (hvector) stay as given. Individual, explicit-offset, non-blocking and collective accesses
 *   convert; a read past the end of the file reports the whole items read. A long that does not
 *   fit 4 bytes is MPI_ERR_CONVERSION.
 * - every process writes its ints through a subarray filetype collectively in external32; the
 *   first process checks the interleaved big-endian file. Then 150000 ints per process (more
 *   than the library converts at once) through a filetype that skips every other int.
 * - MPI_Register_datarep ("mtest-wide": an int takes 8 bytes in the file, stored plus 1000) and
 *   MPI_Register_datarep_c: the conversion functions run on write and read, the extent
 *   function sizes the view (150000 ints: calls at positions past 0), a failing conversion
 *   function is MPI_ERR_CONVERSION, a filetype whose layout would pass the address space
 *   (an extent function giving 2^61 bytes) is MPI_ERR_TYPE, and a name
 *   registered twice, or a predefined one, is MPI_ERR_DUP_DATAREP.
 * MPICH 5.0.2's ROMIO gives MPI_LONG and the pair types their native sizes in external32, does
 * not scale filetypes, stops on an illegal instruction in the struct part, and through a
 * noncontiguous filetype puts the ints elsewhere and reads past the end of the file: the parts
 * after the ints of the first section and the 150000 ints run on Manifold only, as does the last
 * part (MPICH 5.0.2 refuses conversion functions).
 * Files: "io_datarep_<pid of rank 0>*.dat", deleted at the end.
 */
#include "io_util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int rank, nprocs;

/* the file's first `len` bytes through a native byte view (every rank reads them) */
static void raw_bytes(MPI_File fh, unsigned char *out, int len)
{
    MPI_Status st;
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
    memset(out, 0xee, (size_t)len);
    CHECK_OK(MPI_File_read_at(fh, 0, out, len, MPI_BYTE, &st));
}

static uint64_t be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = (v << 8) | p[i];
    return v;
}

static MPI_Aint type_extent(MPI_File fh, MPI_Datatype t)
{
    MPI_Aint e = -1;
    CHECK_OK(MPI_File_get_type_extent(fh, t, &e));
    return e;
}

static void external32_basics(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh)))
        return;
    CHECK_OK(MPI_File_set_size(fh, 0));
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    char rep[MPI_MAX_DATAREP_STRING + 1] = "";
    MPI_Offset disp = -1;
    MPI_Datatype et, ft;
    CHECK_OK(MPI_File_get_view(fh, &disp, &et, &ft, rep));
    MTEST_CHECK(strcmp(rep, "external32") == 0, "get_view datarep \"%s\"", rep);
    MTEST_CHECK(type_extent(fh, MPI_INT) == 4, "external32 extent of MPI_INT");
    MTEST_CHECK(type_extent(fh, MPI_DOUBLE) == 8, "external32 extent of MPI_DOUBLE");
    MTEST_CHECK(type_extent(fh, MPI_SHORT) == 2, "external32 extent of MPI_SHORT");
    MTEST_CHECK(type_extent(fh, MPI_INT64_T) == 8, "external32 extent of MPI_INT64_T");
    if (mtest_is_manifold()) { /* the standard's sizes, and a filetype's scaling */
        MPI_Datatype v3;
        MPI_Type_vector(3, 1, 2, MPI_LONG, &v3);
        MPI_Type_commit(&v3);
        MTEST_CHECK(type_extent(fh, MPI_LONG) == 4, "external32 extent of MPI_LONG %ld",
                    (long)type_extent(fh, MPI_LONG));
        MTEST_CHECK(type_extent(fh, MPI_DOUBLE_INT) == 12,
                    "external32 extent of MPI_DOUBLE_INT %ld",
                    (long)type_extent(fh, MPI_DOUBLE_INT));
        MTEST_CHECK(type_extent(fh, v3) == 20, "external32 extent of vector(3, 1, 2, MPI_LONG) %ld",
                    (long)type_extent(fh, v3));
        MPI_Type_free(&v3);
    }

    /* ints, one rank at a time into its own 12 bytes */
    int ints[3] = {0x01020304, -2, 7 + rank}, back[3] = {0};
    CHECK_OK(MPI_File_write_at(fh, 3 * rank, ints, 3, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == 3, "external32 write count %d", count_of(&st, MPI_INT));
    sync_all(fh);
    CHECK_OK(MPI_File_read_at(fh, 3 * rank, back, 3, MPI_INT, &st));
    MTEST_CHECK(memcmp(back, ints, sizeof(ints)) == 0, "external32 ints read back %x %d %d",
                back[0], back[1], back[2]);
    MPI_Offset size = -1;
    CHECK_OK(MPI_File_get_size(fh, &size));
    MTEST_CHECK(size == 12 * nprocs, "file of %d x 3 external32 ints is %lld bytes", nprocs,
                (long long)size);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char raw[64];
    raw_bytes(fh, raw, 12);
    MTEST_CHECK(be(raw, 4) == 0x01020304 && be(raw + 4, 4) == 0xfffffffe && be(raw + 8, 4) == 7,
                "external32 int bytes %02x%02x%02x%02x %02x%02x%02x%02x", raw[0], raw[1], raw[2],
                raw[3], raw[4], raw[5], raw[6], raw[7]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (!mtest_is_manifold()) { /* see the top of the file */
        CHECK_OK(MPI_File_close(&fh));
        return;
    }

    /* longs take 4 bytes: positions and byte offsets count them */
    CHECK_OK(MPI_File_set_size(fh, 0));
    MPI_Offset base = 64 * rank;
    CHECK_OK(MPI_File_set_view(fh, base, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL));
    long longs[3] = {1, -1, 70000 + rank}, lback[5] = {0};
    CHECK_OK(MPI_File_write(fh, longs, 3, MPI_LONG, &st));
    MTEST_CHECK(count_of(&st, MPI_LONG) == 3, "external32 long write count %d",
                count_of(&st, MPI_LONG));
    MTEST_CHECK(position(fh) == 3, "position after 3 longs %lld", (long long)position(fh));
    MPI_Offset byte = -1;
    CHECK_OK(MPI_File_get_byte_offset(fh, 3, &byte));
    MTEST_CHECK(byte == base + 12, "byte offset of long 3 is %lld, expected %lld", (long long)byte,
                (long long)(base + 12));
    long big = (long)1 << 40;
    int rc = MPI_File_write_at(fh, 3, &big, 1, MPI_LONG, &st);
    MTEST_CHECK_ERR(rc, MPI_ERR_CONVERSION, "MPI_File_write_at");
    sync_all(fh);
    /* 5 asked for, 3 there (the other ranks' data starts 64 bytes on) */
    CHECK_OK(MPI_File_read_at(fh, 0, lback, rank == nprocs - 1 ? 5 : 3, MPI_LONG, &st));
    MTEST_CHECK(count_of(&st, MPI_LONG) == 3, "read of 5 longs at the end: count %d",
                count_of(&st, MPI_LONG));
    MTEST_CHECK(lback[0] == 1 && lback[1] == -1 && lback[2] == 70000 + rank,
                "external32 longs read back %ld %ld %ld", lback[0], lback[1], lback[2]);
    MPI_Barrier(MPI_COMM_WORLD);
    raw_bytes(fh, raw, 12);
    MTEST_CHECK(be(raw, 4) == 1 && be(raw + 4, 4) == 0xffffffff && be(raw + 8, 4) == 70000,
                "external32 long bytes");
    MPI_Barrier(MPI_COMM_WORLD);

    /* a filetype in items scales; one in bytes does not */
    CHECK_OK(MPI_File_set_size(fh, 0));
    MPI_Datatype vec, hvec;
    MPI_Type_vector(2, 1, 2, MPI_LONG, &vec);           /* file extent 12: items at 0, 8, 12, 20 */
    MPI_Type_create_hvector(2, 1, 10, MPI_LONG, &hvec); /* extent 14: 0, 10, 14, 24 */
    MPI_Type_commit(&vec);
    MPI_Type_commit(&hvec);
    long four[4] = {11, 12, 13, 14};
    if (rank == 0) {
        CHECK_OK(MPI_File_set_view(fh, 0, MPI_LONG, vec, "external32", MPI_INFO_NULL));
        CHECK_OK(MPI_File_write_at(fh, 0, four, 4, MPI_LONG, &st));
        CHECK_OK(MPI_File_set_view(fh, 32, MPI_LONG, hvec, "external32", MPI_INFO_NULL));
        MPI_Request req;
        CHECK_OK(MPI_File_iwrite_at(fh, 0, four, 4, MPI_LONG, &req));
        CHECK_OK(MPI_Wait(&req, &st));
        MTEST_CHECK(count_of(&st, MPI_LONG) == 4, "iwrite_at count %d", count_of(&st, MPI_LONG));
        raw_bytes(fh, raw, 60);
        static const int at_vec[4] = {0, 8, 12, 20}, at_hvec[4] = {32, 42, 46, 56};
        for (int i = 0; i < 4; i++) {
            MTEST_CHECK(be(raw + at_vec[i], 4) == (uint64_t)four[i],
                        "vector filetype: long %d not at byte %d", i, at_vec[i]);
            MTEST_CHECK(be(raw + at_hvec[i], 4) == (uint64_t)four[i],
                        "hvector filetype: long %d not at byte %d", i, at_hvec[i]);
        }
        MTEST_CHECK(be(raw + 4, 4) == 0, "vector filetype wrote its gap");
    } else {
        CHECK_OK(MPI_File_set_view(fh, 0, MPI_LONG, vec, "external32", MPI_INFO_NULL));
        CHECK_OK(MPI_File_set_view(fh, 32, MPI_LONG, hvec, "external32", MPI_INFO_NULL));
        raw_bytes(fh, raw, 1);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&hvec);
    MPI_Barrier(MPI_COMM_WORLD);

    /* a struct with padding in memory is packed in the file; pairs too */
    CHECK_OK(MPI_File_set_size(fh, 0));
    struct rec {
        char c;
        double d;
        int i;
    } recs[2] = {{'a', 1.5, 100}, {'b', -2.0, -200}}, rback[2];
    int bl[3] = {1, 1, 1};
    MPI_Aint disps[3] = {offsetof(struct rec, c), offsetof(struct rec, d), offsetof(struct rec, i)};
    MPI_Datatype types[3] = {MPI_CHAR, MPI_DOUBLE, MPI_INT}, rt, rtr;
    MPI_Type_create_struct(3, bl, disps, types, &rt);
    MPI_Type_create_resized(rt, 0, sizeof(struct rec), &rtr);
    MPI_Type_commit(&rtr);
    MPI_Type_free(&rt);
    struct {
        double d;
        int i;
    } pair = {3.25, 9}, pback = {0, 0};
    if (rank == 0) {
        CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
        MTEST_CHECK(type_extent(fh, rtr) == sizeof(struct rec), "a resized type keeps its extent");
        CHECK_OK(MPI_File_write_at(fh, 0, recs, 2, rtr, &st));
        CHECK_OK(MPI_File_write_at(fh, 26, &pair, 1, MPI_DOUBLE_INT, &st));
        memset(rback, 0, sizeof(rback));
        CHECK_OK(MPI_File_read_at(fh, 0, rback, 2, rtr, &st));
        MTEST_CHECK(count_of(&st, rtr) == 2, "struct read count %d", count_of(&st, rtr));
        CHECK_OK(MPI_File_read_at(fh, 26, &pback, 1, MPI_DOUBLE_INT, &st));
        MTEST_CHECK(rback[1].c == 'b' && rback[1].d == -2.0 && rback[1].i == -200 &&
                        rback[0].d == 1.5,
                    "struct read back");
        MTEST_CHECK(pback.d == 3.25 && pback.i == 9, "MPI_DOUBLE_INT read back");
        MPI_Offset size2 = -1;
        CHECK_OK(MPI_File_get_size(fh, &size2));
        MTEST_CHECK(size2 == 38, "2 structs and a double-int take %lld bytes, expected 38",
                    (long long)size2);
        raw_bytes(fh, raw, 38);
        double d = -2.0;
        uint64_t dbits;
        memcpy(&dbits, &d, sizeof(d));
        MTEST_CHECK(raw[13] == 'b' && be(raw + 14, 8) == dbits && be(raw + 22, 4) == 0xffffff38,
                    "second struct's bytes");
        d = 3.25;
        memcpy(&dbits, &d, sizeof(d));
        MTEST_CHECK(be(raw + 26, 8) == dbits && be(raw + 34, 4) == 9, "MPI_DOUBLE_INT bytes");
    } else {
        CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "external32", MPI_INFO_NULL));
        raw_bytes(fh, raw, 1);
    }
    MPI_Type_free(&rtr);
    CHECK_OK(MPI_File_close(&fh));
}

/* every rank's 4 ints interleaved by a subarray filetype, written collectively */
static void external32_collective(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh)))
        return;
    int sizes[1] = {nprocs}, subsizes[1] = {1}, starts[1] = {rank};
    MPI_Datatype sub;
    MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Type_commit(&sub);
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, sub, "external32", MPI_INFO_NULL));
    int mine[4], back[4] = {0};
    for (int k = 0; k < 4; k++)
        mine[k] = 100 * rank + k;
    CHECK_OK(MPI_File_write_all(fh, mine, 4, MPI_INT, &st));
    sync_all(fh);
    CHECK_OK(MPI_File_read_at_all(fh, 0, back, 4, MPI_INT, &st));
    MTEST_CHECK(memcmp(back, mine, sizeof(mine)) == 0, "collective external32 read back");
    int n = 4 * nprocs;
    unsigned char raw[4 * 4 * 8];
    raw_bytes(fh, raw, 4 * n);
    for (int i = 0; i < n; i++) {
        int r = i % nprocs, k = i / nprocs;
        MTEST_CHECK(be(raw + 4 * i, 4) == (uint64_t)(100 * r + k), "int %d of the file", i);
    }
    MPI_Type_free(&sub);
    CHECK_OK(MPI_File_close(&fh));
}

/* More ints than the library stages at once, every other int of the file (a filetype of one
 * int resized to 8 bytes), each rank from its own displacement. Each reads one int more than it
 * wrote: the next rank's first, or past the end of the file on the last rank (the count says
 * which). */
enum { BIG = 150000 };

static void external32_large(const char *name)
{
    MPI_File fh;
    MPI_Status st;
    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh)))
        return;
    CHECK_OK(MPI_File_set_size(fh, 0));
    MPI_Datatype ft;
    MPI_Type_create_resized(MPI_INT, 0, 8, &ft);
    MPI_Type_commit(&ft);
    int *big = malloc(BIG * sizeof(int)), *back = calloc(BIG + 1, sizeof(int));
    for (int i = 0; i < BIG; i++)
        big[i] = i * 7 - 3 + rank;
    CHECK_OK(MPI_File_set_view(fh, (MPI_Offset)rank * BIG * 8, MPI_INT, ft, "external32",
                               MPI_INFO_NULL));
    CHECK_OK(MPI_File_write(fh, big, BIG, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == BIG, "large external32 write count %d",
                count_of(&st, MPI_INT));
    sync_all(fh);
    int last = rank == nprocs - 1;
    CHECK_OK(MPI_File_read_at(fh, 0, back, BIG + 1, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == BIG + (last ? 0 : 1), "large external32 read count %d",
                count_of(&st, MPI_INT));
    int bad = -1;
    for (int i = 0; i < BIG && bad < 0; i++)
        if (back[i] != big[i])
            bad = i;
    MTEST_CHECK(bad < 0, "large external32 read back: int %d is %d, expected %d", bad,
                bad < 0 ? 0 : back[bad], bad < 0 ? 0 : big[bad]);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char raw[24];
    raw_bytes(fh, raw, 24);
    MTEST_CHECK(be(raw + 8, 4) == 4 && be(raw + 16, 4) == 11 && be(raw + 4, 4) == 0,
                "large external32: ints 1 and 2 not at bytes 8 and 16");
    free(big);
    free(back);
    MPI_Type_free(&ft);
    CHECK_OK(MPI_File_close(&fh));
}

/* "mtest-wide": an MPI_INT takes 8 bytes in the file, its value plus 1000, little-endian */
static int fail_conversion;

static int wide_extent(MPI_Datatype t, MPI_Aint *extent, void *state)
{
    (void)state;
    if (t != MPI_INT)
        return MPI_ERR_TYPE;
    *extent = 8;
    return MPI_SUCCESS;
}

/* "mtest-huge": an int takes 2^61 bytes, so a vector of stride 8 cannot be laid out */
static int huge_extent(MPI_Datatype t, MPI_Aint *extent, void *state)
{
    (void)t;
    (void)state;
    *extent = (MPI_Aint)1 << 61;
    return MPI_SUCCESS;
}

static int wide_write(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                      void *state)
{
    (*(int *)state)++;
    if (t != MPI_INT || fail_conversion)
        return MPI_ERR_OTHER;
    for (int i = 0; i < count; i++) {
        int64_t v = (int64_t)((int *)userbuf)[position + i] + 1000;
        memcpy((char *)filebuf + 8 * i, &v, 8);
    }
    return MPI_SUCCESS;
}

static int wide_read(void *userbuf, MPI_Datatype t, int count, void *filebuf, MPI_Offset position,
                     void *state)
{
    (*(int *)state)++;
    if (t != MPI_INT || fail_conversion)
        return MPI_ERR_OTHER;
    for (int i = 0; i < count; i++) {
        int64_t v;
        memcpy(&v, (char *)filebuf + 8 * i, 8);
        ((int *)userbuf)[position + i] = (int)(v - 1000);
    }
    return MPI_SUCCESS;
}

static int wide_write_c(void *userbuf, MPI_Datatype t, MPI_Count count, void *filebuf,
                        MPI_Offset position, void *state)
{
    return wide_write(userbuf, t, (int)count, filebuf, position, state);
}

static int wide_read_c(void *userbuf, MPI_Datatype t, MPI_Count count, void *filebuf,
                       MPI_Offset position, void *state)
{
    return wide_read(userbuf, t, (int)count, filebuf, position, state);
}

static void user_datarep(const char *name, const char *rep, int *calls)
{
    MPI_File fh;
    MPI_Status st;
    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh)))
        return;
    CHECK_OK(MPI_File_set_view(fh, 16 * 5 * rank, MPI_INT, MPI_INT, rep, MPI_INFO_NULL));
    MTEST_CHECK(type_extent(fh, MPI_INT) == 8, "%s: extent of MPI_INT %ld", rep,
                (long)type_extent(fh, MPI_INT));
    int ints[5] = {1, 2, 3, -4, 5 + rank}, back[5] = {0};
    *calls = 0;
    CHECK_OK(MPI_File_write(fh, ints, 5, MPI_INT, &st));
    MTEST_CHECK(*calls > 0, "%s: the write conversion function was not called", rep);
    MTEST_CHECK(count_of(&st, MPI_INT) == 5, "%s: write count %d", rep, count_of(&st, MPI_INT));
    MTEST_CHECK(position(fh) == 5, "%s: position %lld", rep, (long long)position(fh));
    sync_all(fh);
    int before = *calls;
    CHECK_OK(MPI_File_read_at(fh, 0, back, 5, MPI_INT, &st));
    MTEST_CHECK(*calls > before, "%s: the read conversion function was not called", rep);
    MTEST_CHECK(memcmp(back, ints, sizeof(ints)) == 0, "%s: read back %d %d %d %d %d", rep, back[0],
                back[1], back[2], back[3], back[4]);
    /* several pieces: the functions are called with positions past 0 */
    int *many = malloc(BIG * sizeof(int)), *manyback = calloc(BIG, sizeof(int));
    for (int i = 0; i < BIG; i++)
        many[i] = i ^ 0x5555;
    MPI_Offset at = 10 * (MPI_Offset)BIG * (rank + 1);
    CHECK_OK(MPI_File_write_at(fh, at, many, BIG, MPI_INT, &st));
    CHECK_OK(MPI_File_read_at(fh, at, manyback, BIG, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == BIG && memcmp(many, manyback, BIG * sizeof(int)) == 0,
                "%s: %d ints read back", rep, BIG);
    free(many);
    free(manyback);
    fail_conversion = 1;
    int rc = MPI_File_write_at(fh, 0, ints, 1, MPI_INT, &st);
    MTEST_CHECK_ERR(rc, MPI_ERR_CONVERSION, "MPI_File_write_at");
    rc = MPI_File_read_at(fh, 0, back, 1, MPI_INT, &st);
    MTEST_CHECK_ERR(rc, MPI_ERR_CONVERSION, "MPI_File_read_at");
    fail_conversion = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char raw[8 * 5];
    raw_bytes(fh, raw, 40);
    int64_t v;
    memcpy(&v, raw + 24, 8);
    MTEST_CHECK(v == -4 + 1000, "%s: the file holds %lld for -4", rep, (long long)v);
    CHECK_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    char name[256], name2[256];
    make_name(name, sizeof(name), "io_datarep", "");
    make_name(name2, sizeof(name2), "io_datarep", "_coll");

    external32_basics(name);
    MPI_Barrier(MPI_COMM_WORLD);
    if (nprocs <= 8)
        external32_collective(name2);
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_is_manifold()) /* see the top of the file */
        external32_large(name);
    MPI_Barrier(MPI_COMM_WORLD);

    static int calls, calls_c;
    if (!mtest_is_manifold()) /* see the top of the file */
        goto done;
    CHECK_OK(MPI_Register_datarep("mtest-wide", wide_read, wide_write, wide_extent, &calls));
    CHECK_OK(
        MPI_Register_datarep_c("mtest-wide-c", wide_read_c, wide_write_c, wide_extent, &calls_c));
    int rc = MPI_Register_datarep("mtest-wide", wide_read, wide_write, wide_extent, &calls);
    MTEST_CHECK_ERR(rc, MPI_ERR_DUP_DATAREP, "MPI_Register_datarep");
    rc = MPI_Register_datarep("external32", wide_read, wide_write, wide_extent, &calls);
    MTEST_CHECK_ERR(rc, MPI_ERR_DUP_DATAREP, "MPI_Register_datarep");
    user_datarep(name, "mtest-wide", &calls);
    MPI_Barrier(MPI_COMM_WORLD);
    user_datarep(name, "mtest-wide-c", &calls_c);

    /* a layout past the address space: an error, not an overflow */
    CHECK_OK(MPI_Register_datarep("mtest-huge", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                  huge_extent, NULL));
    MPI_File fh;
    if (CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR, MPI_INFO_NULL, &fh))) {
        MPI_Datatype vec;
        MPI_Type_vector(2, 1, 8, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        rc = MPI_File_set_view(fh, 0, MPI_INT, vec, "mtest-huge", MPI_INFO_NULL);
        MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_File_set_view");
        MPI_Type_free(&vec);
        CHECK_OK(MPI_File_close(&fh));
    }

done:
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_OK(MPI_File_delete(name, MPI_INFO_NULL));
        if (nprocs <= 8)
            CHECK_OK(MPI_File_delete(name2, MPI_INFO_NULL));
    }
    return mtest_finalize(0);
}
