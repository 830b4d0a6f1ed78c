/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * File views (MPI-4.1 sections 14.3 and 14.4.3). Each rank sets a view with etype
 * MPI_INT and writes with MPI_File_write_all through its individual file pointer; then the view
 * goes back to the default and rank 0 reads the whole file with MPI_File_read_at and checks the
 * owner and index of every int. The filetypes:
 * - a vector: each rank owns every size-th block of B ints (displacement rank * B ints); the
 *   filetype is freed right after MPI_File_set_view, which keeps its own reference;
 * - a 2-D subarray (block decomposition of a 6 x 60 array on a 1 x size or 2 x size/2 grid),
 *   after an 8-int header that rank 0 writes with the default view (displacement 32 bytes);
 * - an indexed type of blocks of 1, 2, 3 and 4 ints resized to a tile shared by all ranks,
 *   written over three tiles;
 * - a contiguous type resized to size * B ints (displacement rank * B ints): there
 *   MPI_File_get_position counts etypes of the view, MPI_File_get_byte_offset maps positions to
 *   bytes, MPI_File_seek with MPI_SEEK_SET, MPI_SEEK_CUR and MPI_SEEK_END (the end of file in
 *   the view: the first etype of the view past it) moves the pointer, a read there returns 0
 *   items (Manifold only: MPICH 5.0.2 reports the full count), and a read-back through a strided
 *   memory type fills only its elements;
 * - a contiguous view with a strided (vector) memory type on write and read.
 * Each rank also reads its data back through its view with MPI_File_read_all. MPI_File_get_view
 * returns the displacement, the etype, a filetype of the same size and extent with the combiner
 * of the one set (on Manifold; elsewhere possibly under an MPI_Type_dup or
 * MPI_Type_contiguous(1, ...) wrapper, as MPICH 5.0.2 returns), derived types the caller frees,
 * committed (setting the view again with them works), and "native"; the default view at open is (0,
 * MPI_BYTE, MPI_BYTE). MPI_File_get_type_extent is the type's extent for "native". File:
 * "io_view_<pid of rank 0>.dat", deleted at the end.
 */
#include "io_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define B   4  /* ints in a block */
#define NB  3  /* blocks per rank */
#define GR  6  /* rows of the 2-D array */
#define GC  60 /* columns */
#define HDR 8  /* ints of the subarray case's header */

static int rank, nprocs;

/* the int a rank writes as its i-th */
static int value(int owner, int i)
{
    return 100000 * (owner + 1) + i;
}

/* which rank wrote file int k (after any header) and as its how-manieth */
typedef int (*owner_fn)(int k, int *local);

static int owner_blocks(int k, int *local)
{
    int block = k / B;
    *local = block / nprocs * B + k % B;
    return block % nprocs;
}

static int owner_subarray(int k, int *local)
{
    int pc = nprocs > 2 && nprocs % 2 == 0 ? nprocs / 2 : nprocs, pr = nprocs / pc;
    int lr = GR / pr, lc = GC / pc, i = k / GC, j = k % GC;
    *local = i % lr * lc + j % lc;
    return i / lr * pc + j / lc;
}

/* a tile holds, for seg = 0..3, one block of seg + 1 ints of each rank in rank order */
static int owner_indexed(int k, int *local)
{
    int tile = k / (10 * nprocs), w = k % (10 * nprocs), seg = 0, base = 0;
    while (w >= base + nprocs * (seg + 1)) {
        base += nprocs * (seg + 1);
        seg++;
    }
    *local = tile * 10 + seg * (seg + 1) / 2 + (w - base) % (seg + 1);
    return (w - base) / (seg + 1);
}

static int owner_contig(int k, int *local)
{
    *local = k % (NB * B);
    return k / (NB * B);
}

static void set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype)
{
    CHECK_OK(MPI_File_set_view(fh, disp, etype, filetype, "native", MPI_INFO_NULL));
}

/* the combiner of type, looking through MPI_Type_dup and MPI_Type_contiguous(1, ...) */
static int unwrapped_combiner(MPI_Datatype type)
{
    int ni, na, nd, comb = -1, ints[1];
    MPI_Aint addrs[1];
    MPI_Datatype inner;

    MPI_Type_get_envelope(type, &ni, &na, &nd, &comb);
    if (!(comb == MPI_COMBINER_DUP || (comb == MPI_COMBINER_CONTIGUOUS && ni == 1 && nd == 1)))
        return comb;
    MPI_Type_get_contents(type, 1, 0, 1, ints, addrs, &inner);
    if (comb == MPI_COMBINER_DUP || ints[0] == 1)
        comb = unwrapped_combiner(inner);
    int ini, ina, ind, icomb;
    MPI_Type_get_envelope(inner, &ini, &ina, &ind, &icomb);
    if (icomb != MPI_COMBINER_NAMED)
        MPI_Type_free(&inner);
    return comb;
}

/* MPI_File_get_view: disp, the etype, a filetype of this combiner, size and extent; "native" */
static void check_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, int combiner, int size,
                       MPI_Aint extent, const char *what)
{
    MPI_Offset d = -1;
    MPI_Datatype e = MPI_DATATYPE_NULL, f = MPI_DATATYPE_NULL;
    char rep[MPI_MAX_DATAREP_STRING + 1] = "";
    int ni, na, nd, comb = -1, fsize = -1;
    MPI_Aint lb, fextent = -1;

    if (!CHECK_OK(MPI_File_get_view(fh, &d, &e, &f, rep)))
        return;
    MTEST_CHECK(d == disp, "%s: get_view displacement %lld, expected %lld", what, (long long)d,
                (long long)disp);
    MTEST_CHECK(e == etype, "%s: get_view returned another etype", what);
    MTEST_CHECK(strcmp(rep, "native") == 0, "%s: get_view datarep \"%s\"", what, rep);
    MPI_Type_get_envelope(f, &ni, &na, &nd, &comb);
    /* The standard asks for "new datatypes with typemaps equal to" the view's (MPI-4.1
     * section 14.3): Manifold returns MPI_Type_dup(filetype), MPICH 5.0.2 (ROMIO)
     * MPI_Type_contiguous(1, filetype), so the combiner is the one under such wrappers. */
    MTEST_CHECK(unwrapped_combiner(f) == combiner,
                "%s: filetype combiner %d (unwrapped %d), expected %d", what, comb,
                unwrapped_combiner(f), combiner);
    MPI_Type_size(f, &fsize);
    MPI_Type_get_extent(f, &lb, &fextent);
    MTEST_CHECK(fsize == size && fextent == extent,
                "%s: filetype of size %d extent %ld, expected %d and %ld", what, fsize,
                (long)fextent, size, (long)extent);
    if (comb != MPI_COMBINER_NAMED)
        MPI_Type_free(&f);
}

/* after the writes: the default view, rank 0 checks the file, then it is emptied */
static void check_file(MPI_File fh, int hdr, int total, owner_fn owner, const char *what)
{
    MPI_Status st;

    CHECK_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_sync(fh));
    set_view(fh, 0, MPI_BYTE, MPI_BYTE);
    if (rank == 0) {
        int *all = mtest_calloc((size_t)(hdr + total + 1), sizeof(int));
        MPI_Offset size = -1;
        CHECK_OK(MPI_File_get_size(fh, &size));
        MTEST_CHECK(size == (MPI_Offset)(hdr + total) * (MPI_Offset)sizeof(int),
                    "%s: file size %lld, expected %d ints", what, (long long)size, hdr + total);
        CHECK_OK(MPI_File_read_at(fh, 0, all, hdr + total + 1, MPI_INT, &st));
        MTEST_CHECK(count_of(&st, MPI_INT) == hdr + total, "%s: read %d ints of %d", what,
                    count_of(&st, MPI_INT), hdr + total);
        for (int i = 0; i < hdr; i++)
            MTEST_CHECK(all[i] == -i - 1, "%s: header int %d is %d", what, i, all[i]);
        for (int k = 0; k < total; k++) {
            int local = -1, who = owner(k, &local);
            if (!MTEST_CHECK(all[hdr + k] == value(who, local),
                             "%s: file int %d is %d, expected rank %d's int %d (%d)", what, k,
                             all[hdr + k], who, local, value(who, local)))
                break;
        }
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_set_size(fh, 0));
}

/* write count ints through the view just set, then read them back through it */
static void write_read_all(MPI_File fh, int count, const char *what)
{
    int *buf = mtest_calloc((size_t)count, sizeof(int)), *back = mtest_calloc((size_t)count, 4);
    MPI_Status st;

    for (int i = 0; i < count; i++)
        buf[i] = value(rank, i);
    CHECK_OK(MPI_File_write_all(fh, buf, count, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == count, "%s: write_all count %d", what,
                count_of(&st, MPI_INT));
    MTEST_CHECK(position(fh) == count, "%s: position %lld after writing %d etypes", what,
                (long long)position(fh), count);
    CHECK_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_OK(MPI_File_read_all(fh, back, count, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == count, "%s: read_all count %d", what,
                count_of(&st, MPI_INT));
    for (int i = 0; i < count; i++)
        if (!MTEST_CHECK(back[i] == buf[i], "%s: read back int %d as %d", what, i, back[i]))
            break;
    free(buf);
    free(back);
}

static void case_vector(MPI_File fh)
{
    MPI_Datatype ft, f2 = MPI_DATATYPE_NULL, e2 = MPI_DATATYPE_NULL;
    MPI_Offset disp = (MPI_Offset)rank * B * (MPI_Offset)sizeof(int), d2;
    MPI_Aint lb, extent;
    char rep[MPI_MAX_DATAREP_STRING + 1];

    MPI_Type_vector(NB, B, nprocs * B, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_get_extent(ft, &lb, &extent);
    MPI_Aint fext = -1;
    CHECK_OK(MPI_File_get_type_extent(fh, ft, &fext));
    MTEST_CHECK(fext == extent, "MPI_File_get_type_extent of a vector: %ld, expected %ld",
                (long)fext, (long)extent);
    set_view(fh, disp, MPI_INT, ft);
    MPI_Type_free(&ft); /* the view holds on to it */
    check_view(fh, disp, MPI_INT, MPI_COMBINER_VECTOR, NB * B * (int)sizeof(int), extent, "vector");

    /* the types get_view returns are committed: the same view can be set with them */
    if (CHECK_OK(MPI_File_get_view(fh, &d2, &e2, &f2, rep))) {
        set_view(fh, d2, e2, f2);
        MPI_Type_free(&f2);
        check_view(fh, disp, MPI_INT, MPI_COMBINER_VECTOR, NB * B * (int)sizeof(int), extent,
                   "vector set again");
    }
    write_read_all(fh, NB * B, "vector");
    check_file(fh, 0, nprocs * NB * B, owner_blocks, "vector");
}

static void case_subarray(MPI_File fh)
{
    int pc = nprocs > 2 && nprocs % 2 == 0 ? nprocs / 2 : nprocs, pr = nprocs / pc;
    int sizes[2] = {GR, GC}, sub[2] = {GR / pr, GC / pc};
    int starts[2] = {rank / pc * sub[0], rank % pc * sub[1]}, hdr[HDR];
    MPI_Datatype ft;
    MPI_Status st;

    if (rank == 0) { /* the header, through the default view */
        for (int i = 0; i < HDR; i++)
            hdr[i] = -i - 1;
        CHECK_OK(MPI_File_write_at(fh, 0, hdr, HDR, MPI_INT, &st));
    }
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &ft);
    MPI_Type_commit(&ft);
    set_view(fh, HDR * sizeof(int), MPI_INT, ft);
    check_view(fh, HDR * sizeof(int), MPI_INT, MPI_COMBINER_SUBARRAY,
               sub[0] * sub[1] * (int)sizeof(int), GR * GC * (MPI_Aint)sizeof(int), "subarray");
    MPI_Type_free(&ft);
    write_read_all(fh, sub[0] * sub[1], "subarray");
    check_file(fh, HDR, GR * GC, owner_subarray, "subarray");
}

static void case_indexed(MPI_File fh)
{
    int lens[4], displs[4], base = 0;
    MPI_Datatype idx, ft;

    for (int seg = 0; seg < 4; seg++) {
        lens[seg] = seg + 1;
        displs[seg] = base + rank * (seg + 1);
        base += nprocs * (seg + 1);
    }
    MPI_Type_indexed(4, lens, displs, MPI_INT, &idx);
    MPI_Type_create_resized(idx, 0, 10 * nprocs * (MPI_Aint)sizeof(int), &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&idx);
    set_view(fh, 0, MPI_INT, ft);
    check_view(fh, 0, MPI_INT, MPI_COMBINER_RESIZED, 10 * (int)sizeof(int),
               10 * nprocs * (MPI_Aint)sizeof(int), "indexed");
    MPI_Type_free(&ft);
    write_read_all(fh, 3 * 10, "indexed"); /* three tiles */
    check_file(fh, 0, 3 * 10 * nprocs, owner_indexed, "indexed");
}

static void case_resized(MPI_File fh)
{
    MPI_Datatype contig, ft, memtype;
    MPI_Offset disp = (MPI_Offset)rank * B * (MPI_Offset)sizeof(int), off = -1;
    MPI_Aint tile = (MPI_Aint)nprocs * B * (MPI_Aint)sizeof(int), ext = -1;
    MPI_Status st;
    int x = -1, strided[2 * NB * B];

    MPI_Type_contiguous(B, MPI_INT, &contig);
    MPI_Type_create_resized(contig, 0, tile, &ft);
    MPI_Type_commit(&ft);
    MPI_Type_free(&contig);
    CHECK_OK(MPI_File_get_type_extent(fh, ft, &ext));
    MTEST_CHECK(ext == tile, "MPI_File_get_type_extent of the resized type: %ld, expected %ld",
                (long)ext, (long)tile);
    ext = -1;
    CHECK_OK(MPI_File_get_type_extent(fh, MPI_INT, &ext));
    MTEST_CHECK(ext == sizeof(int), "MPI_File_get_type_extent(MPI_INT) is %ld", (long)ext);
    set_view(fh, disp, MPI_INT, ft);
    check_view(fh, disp, MPI_INT, MPI_COMBINER_RESIZED, B * (int)sizeof(int), tile, "resized");
    MPI_Type_free(&ft);
    MTEST_CHECK(position(fh) == 0, "position %lld after set_view", (long long)position(fh));
    write_read_all(fh, NB * B, "resized");

    /* positions count etypes of the view */
    for (int p = 0; p <= NB * B; p++) {
        MPI_Offset want = disp + p / B * tile + p % B * (MPI_Offset)sizeof(int);
        CHECK_OK(MPI_File_get_byte_offset(fh, p, &off));
        if (!MTEST_CHECK(off == want, "get_byte_offset(%d) is %lld, expected %lld", p,
                         (long long)off, (long long)want))
            break;
    }
    CHECK_OK(MPI_File_sync(fh)); /* every rank's data is in: the end of file is known */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_sync(fh));
    CHECK_OK(MPI_File_seek(fh, 5, MPI_SEEK_SET));
    MTEST_CHECK(position(fh) == 5, "position %lld after seeking to 5", (long long)position(fh));
    CHECK_OK(MPI_File_seek(fh, 3, MPI_SEEK_CUR));
    MTEST_CHECK(position(fh) == 8, "position %lld after seeking 3 on", (long long)position(fh));
    CHECK_OK(MPI_File_seek(fh, -2, MPI_SEEK_CUR));
    MTEST_CHECK(position(fh) == 6, "position %lld after seeking 2 back", (long long)position(fh));
    CHECK_OK(MPI_File_read(fh, &x, 1, MPI_INT, &st));
    MTEST_CHECK(x == value(rank, 6), "int at position 6 is %d", x);
    MTEST_CHECK(position(fh) == 7, "position %lld after reading one", (long long)position(fh));
    CHECK_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
    MTEST_CHECK(position(fh) == NB * B, "position %lld after seeking to the end, expected %d",
                (long long)position(fh), NB * B);
    CHECK_OK(MPI_File_seek(fh, -1, MPI_SEEK_END));
    MTEST_CHECK(position(fh) == NB * B - 1, "position %lld after seeking to the end - 1",
                (long long)position(fh));
    CHECK_OK(MPI_File_read(fh, &x, 1, MPI_INT, &st));
    MTEST_CHECK(x == value(rank, NB * B - 1), "last int of the view is %d", x);
    /* MPICH 5.0.2 (ROMIO) reports the whole count when a noncontiguous view reaches past the
     * end of file, though only the data before it is read (MPI-4.1 section 14.4.1) */
    CHECK_OK(MPI_File_read(fh, &x, 1, MPI_INT, &st));
    if (mtest_is_manifold())
        MTEST_CHECK(count_of(&st, MPI_INT) == 0, "read at the end of the view: count %d",
                    count_of(&st, MPI_INT));

    /* noncontiguous on both sides: every other int of memory */
    MPI_Type_vector(NB * B, 1, 2, MPI_INT, &memtype);
    MPI_Type_commit(&memtype);
    for (int i = 0; i < 2 * NB * B; i++)
        strided[i] = -7;
    CHECK_OK(MPI_File_read_at_all(fh, 0, strided, 1, memtype, &st));
    MTEST_CHECK(count_of(&st, memtype) == 1, "read_at_all of a vector: count %d",
                count_of(&st, memtype));
    for (int i = 0; i < 2 * NB * B; i++)
        if (!MTEST_CHECK(strided[i] == (i % 2 ? -7 : value(rank, i / 2)),
                         "strided read: memory int %d is %d", i, strided[i]))
            break;
    MPI_Type_free(&memtype);
    check_file(fh, 0, nprocs * NB * B, owner_blocks, "resized");
}

/* contiguous view, strided memory */
static void case_memtype(MPI_File fh)
{
    MPI_Datatype memtype;
    MPI_Offset disp = (MPI_Offset)rank * NB * B * (MPI_Offset)sizeof(int);
    int src[2 * NB * B], dst[2 * NB * B], elements = -1;
    MPI_Status st;

    MPI_Type_vector(NB * B, 1, 2, MPI_INT, &memtype);
    MPI_Type_commit(&memtype);
    for (int i = 0; i < 2 * NB * B; i++)
        src[i] = i % 2 ? -1 : value(rank, i / 2);
    set_view(fh, disp, MPI_INT, MPI_INT);
    check_view(fh, disp, MPI_INT, MPI_COMBINER_NAMED, (int)sizeof(int), sizeof(int), "contiguous");
    CHECK_OK(MPI_File_write_all(fh, src, 1, memtype, &st));
    MTEST_CHECK(count_of(&st, memtype) == 1, "write_all of a vector: count %d",
                count_of(&st, memtype));
    MPI_Get_elements(&st, memtype, &elements);
    MTEST_CHECK(elements == NB * B, "write_all of a vector: %d elements", elements);
    MTEST_CHECK(position(fh) == NB * B, "position %lld after writing a vector of %d ints",
                (long long)position(fh), NB * B);
    for (int i = 0; i < 2 * NB * B; i++)
        dst[i] = -7;
    CHECK_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    CHECK_OK(MPI_File_read_all(fh, dst, 1, memtype, &st));
    for (int i = 0; i < 2 * NB * B; i++)
        if (!MTEST_CHECK(dst[i] == (i % 2 ? -7 : value(rank, i / 2)),
                         "strided read: memory int %d is %d", i, dst[i]))
            break;
    MPI_Type_free(&memtype);
    check_file(fh, 0, nprocs * NB * B, owner_contig, "strided memory");
}

int main(int argc, char **argv)
{
    char name[64];
    MPI_File fh = MPI_FILE_NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    make_name(name, sizeof(name), "io_view", "");
    if (CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name,
                               MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                               MPI_INFO_NULL, &fh))) {
        check_view(fh, 0, MPI_BYTE, MPI_COMBINER_NAMED, 1, 1, "default view");
        case_vector(fh);
        case_subarray(fh);
        case_indexed(fh);
        case_resized(fh);
        case_memtype(fh);
        CHECK_OK(MPI_File_close(&fh));
    }
    return mtest_finalize(0);
}
