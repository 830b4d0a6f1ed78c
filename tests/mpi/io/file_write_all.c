/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking collective writes (MPI_File_write_all, MPI_File_write_at_all and their _c forms,
 * MPI-4.1 section 14.4), which Manifold may run through aggregators (two-phase I/O). Each case
 * opens a file with its hints, fills it with a known pattern by independent writes (rank 0),
 * sets a view in which every rank owns every (size + gap)-th block of B bytes after a header
 * (the gap blocks are holes nobody writes), writes its blocks collectively and closes the file;
 * rank 0 then reads the file with POSIX and checks every byte: the ranks' data where they
 * wrote, the old pattern everywhere else (the header, the holes, the blocks of a rank that
 * writes nothing, and past the end). The status counts each rank's data and the individual
 * file pointer moves past it. The cases: blocks of 1 B, 7 B, 4 KiB and 100 KiB; each of the
 * four calls; memory through a vector type (every other byte); a rank with count 0; the hints
 * collective_buffering (true, false), cb_buffer_size=4096 (many rounds, pieces cut at window
 * boundaries), cb_nodes=1 and 2, which MPI_File_get_info reports (on Manifold also the values
 * used when none is set, 16 MiB and every process, and cb_nodes: MPICH 5.0.2 says 1, its
 * number of hosts).
 * Then:
 * - all ranks write the same blocks, or blocks 3 bytes apart (overlapping writes, MPI-4.1
 *   section 14.6.1: the result is undefined): every byte is one of the ranks' that wrote there,
 *   the others keep the old pattern;
 * - one rank passes count -1: it gets MPI_ERR_COUNT and the others' data is written (Manifold
 *   only: with MPICH 5.0.2 the others wait for that rank forever, the job times out);
 * - a read-only file: MPI_ERR_ACCESS (or MPI_ERR_READ_ONLY) on every rank, no hang;
 * - a failing pwrite at the aggregator (rank 0 with cb_nodes=1, its file size limit lowered so
 *   that the write fails with EFBIG): every rank returns MPI_ERR_IO, and rank 0's message names
 *   the file (Manifold only: MPICH 5.0.2's says "File too large" without the name).
 * File: "io_write_all_<pid of rank 0>.dat", deleted at the end.
 */
#include "io_util.h"

#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define HDR 100 /* header bytes before the view */

static int rank, nprocs;
static char name[256];

typedef enum { W_ALL, W_AT_ALL, W_ALL_C, W_AT_ALL_C } call_t;
static const char *const call_names[] = {"MPI_File_write_all", "MPI_File_write_at_all",
                                         "MPI_File_write_all_c", "MPI_File_write_at_all_c"};

typedef struct wcase {
    int block;           /* bytes of a block */
    int nblk;            /* blocks each rank writes */
    int gap;             /* blocks per tile nobody writes */
    call_t call;         /* the _at forms write from the view's second block of the rank */
    int strided;         /* memory through a vector type: every other byte */
    int idle;            /* a rank that writes nothing (count 0), or -1 */
    const char *cb;      /* collective_buffering, or NULL */
    const char *cb_size; /* cb_buffer_size, or NULL */
    const char *cb_nodes;
} wcase_t;

/* the file's bytes before the collective write (7 bits) and a rank's bytes (top bit set): no
 * written byte can pass for an old one */
static unsigned char old_byte(long off)
{
    return (unsigned char)((off * 7 + 3) & 0x7f);
}

static unsigned char new_byte(int r, long i)
{
    return (unsigned char)(((i * 13 + r * 61 + 1) & 0x7f) | 0x80);
}

static int is_at(call_t c)
{
    return c == W_AT_ALL || c == W_AT_ALL_C;
}

static MPI_Info make_info(const wcase_t *c)
{
    MPI_Info info = MPI_INFO_NULL;
    if (c->cb == NULL && c->cb_size == NULL && c->cb_nodes == NULL)
        return info;
    MPI_Info_create(&info);
    if (c->cb != NULL)
        MPI_Info_set(info, "collective_buffering", c->cb);
    if (c->cb_size != NULL)
        MPI_Info_set(info, "cb_buffer_size", c->cb_size);
    if (c->cb_nodes != NULL)
        MPI_Info_set(info, "cb_nodes", c->cb_nodes);
    return info;
}

/* opens the file with c's hints and fills its first `len` bytes with the old pattern */
static int open_filled(const wcase_t *c, long len, int amode, MPI_File *fh)
{
    MPI_Info info = make_info(c);
    int ok = CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, amode, info, fh));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
    if (!ok)
        return 0;
    CHECK_OK(MPI_File_set_size(*fh, 0));
    if (rank == 0) {
        unsigned char *old = mtest_calloc((size_t)len, 1);
        for (long i = 0; i < len; i++)
            old[i] = old_byte(i);
        MPI_Status st;
        CHECK_OK(MPI_File_write_at(*fh, 0, old, (int)len, MPI_BYTE, &st));
        free(old);
    }
    sync_all(*fh);
    return 1;
}

/* the view of block `owner` of every tile of `per_tile` blocks, after the header */
static void set_view(MPI_File fh, int block, int per_tile, int owner)
{
    MPI_Datatype blk, tile;
    MPI_Type_contiguous(block, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)per_tile * block, &tile);
    MPI_Type_commit(&tile);
    CHECK_OK(MPI_File_set_view(fh, HDR + (MPI_Offset)owner * block, MPI_BYTE, tile, "native",
                               MPI_INFO_NULL));
    MPI_Type_free(&blk);
    MPI_Type_free(&tile);
}

/* the collective write of `bytes` bytes (count -1: an erroneous call) in c's form; the rc */
static int write_blocks(MPI_File fh, const wcase_t *c, long bytes, int bad_count, MPI_Status *st)
{
    unsigned char *buf = mtest_calloc((size_t)(2 * bytes + 1), 1);
    MPI_Datatype type = MPI_BYTE;
    MPI_Count count = bytes;
    for (long i = 0; i < bytes; i++)
        buf[c->strided ? 2 * i : i] = new_byte(rank, i);
    if (c->strided) {
        for (long i = 0; i < bytes; i++)
            buf[2 * i + 1] = 0x55; /* must not reach the file */
        MPI_Type_vector((int)bytes, 1, 2, MPI_BYTE, &type);
        MPI_Type_commit(&type);
        count = bytes > 0;
    }
    if (bad_count)
        count = -1;
    MPI_Offset at = is_at(c->call) ? c->block : 0;
    int rc = MPI_SUCCESS;
    switch (c->call) {
    case W_ALL: rc = MPI_File_write_all(fh, buf, (int)count, type, st); break;
    case W_AT_ALL: rc = MPI_File_write_at_all(fh, at, buf, (int)count, type, st); break;
    case W_ALL_C: rc = MPI_File_write_all_c(fh, buf, count, type, st); break;
    case W_AT_ALL_C: rc = MPI_File_write_at_all_c(fh, at, buf, count, type, st); break;
    }
    if (rc == MPI_SUCCESS) {
        MPI_Count got = -1;
        MPI_Get_count_c(st, type, &got);
        MTEST_CHECK(got == count, "%s: status count %lld, expected %lld", call_names[c->call],
                    (long long)got, (long long)count);
        MPI_Offset pos = position(fh);
        MPI_Offset want = is_at(c->call) ? 0 : bytes;
        MTEST_CHECK(pos == want, "%s: file pointer at %lld, expected %lld", call_names[c->call],
                    (long long)pos, (long long)want);
    }
    if (c->strided)
        MPI_Type_free(&type);
    free(buf);
    return rc;
}

/* Rank 0 reads the file with POSIX and checks every byte; `writers` marks the ranks whose data
 * is there (NULL: every rank, each byte any rank's: overlapping writes). */
static void check_file(const wcase_t *c, long len, const int *writers, const char *what)
{
    if (rank != 0)
        return;
    unsigned char *got = mtest_calloc((size_t)len + 1, 1);
    int fd = open(name, O_RDONLY);
    ssize_t n = fd >= 0 ? pread(fd, got, (size_t)len + 1, 0) : -1;
    if (fd >= 0)
        close(fd);
    if (!MTEST_CHECK(n == len, "%s: the file holds %zd bytes, expected %ld", what, n, len)) {
        free(got);
        return;
    }
    long tile = (long)(nprocs + c->gap) * c->block, first = is_at(c->call), bad = 0;
    for (long off = 0; off < len; off++) {
        long rel = off - HDR, t = rel / tile, blk = (rel % tile) / c->block;
        long i = (t - first) * c->block + rel % c->block;
        int inside = rel >= 0 && blk < nprocs && t >= first && t < first + c->nblk;
        int ok;
        if (inside && writers == NULL) {
            ok = 0;
            for (int r = 0; r < nprocs; r++)
                ok |= got[off] == new_byte(r, i);
        } else if (inside && writers[blk]) {
            ok = got[off] == new_byte((int)blk, i);
        } else {
            ok = got[off] == old_byte(off);
        }
        if (!ok && bad++ < 3)
            MTEST_CHECK(0, "%s: byte %ld is %#x (%s block %ld of rank %ld)", what, off, got[off],
                        inside ? "in" : "outside", t - first, blk);
    }
    MTEST_CHECK(bad == 0, "%s: %ld bytes wrong", what, bad);
    free(got);
}

/* MPI_File_get_info reports cb_buffer_size as set and, on Manifold, cb_nodes as used and both
 * when not set (ROMIO bounds cb_nodes by the number of hosts: 1 here) */
static void check_hints(MPI_File fh, const wcase_t *c)
{
    MPI_Info info = MPI_INFO_NULL;
    if (!CHECK_OK(MPI_File_get_info(fh, &info)))
        return;
    char val[MPI_MAX_INFO_VAL + 1], want[32];
    int flag = 0;
    MPI_Info_get(info, "cb_buffer_size", MPI_MAX_INFO_VAL, val, &flag);
    if (c->cb_size != NULL || mtest_is_manifold())
        MTEST_CHECK(flag && strcmp(val, c->cb_size ? c->cb_size : "16777216") == 0,
                    "cb_buffer_size in use: %s", flag ? val : "(not set)");
    snprintf(want, sizeof(want), "%d", nprocs);
    MPI_Info_get(info, "cb_nodes", MPI_MAX_INFO_VAL, val, &flag);
    if (mtest_is_manifold())
        MTEST_CHECK(flag && strcmp(val, c->cb_nodes && atoi(c->cb_nodes) < nprocs ? c->cb_nodes
                                                                                  : want) == 0,
                    "cb_nodes in use: %s", flag ? val : "(not set)");
    MPI_Info_free(&info);
}

static long file_len(const wcase_t *c)
{
    /* the header, one tile more for the _at forms' offset, and a tail nobody writes */
    return HDR + (long)(c->nblk + 1) * (nprocs + c->gap) * c->block + 50;
}

static void run_case(const wcase_t *c)
{
    char what[160];
    snprintf(what, sizeof(what), "%s of %d x %d B, gap %d%s%s, cb %s, cb_buffer_size %s",
             call_names[c->call], c->nblk, c->block, c->gap, c->strided ? ", strided memory" : "",
             c->idle >= 0 ? ", an idle rank" : "", c->cb ? c->cb : "-",
             c->cb_size ? c->cb_size : "-");
    long len = file_len(c);
    MPI_File fh;
    if (!open_filled(c, len, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh))
        return;
    check_hints(fh, c);
    set_view(fh, c->block, nprocs + c->gap, rank);
    long bytes = rank == c->idle ? 0 : (long)c->nblk * c->block;
    MPI_Status st;
    CHECK_OK(write_blocks(fh, c, bytes, 0, &st));
    CHECK_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    int *writers = mtest_calloc((size_t)nprocs, sizeof(int));
    for (int r = 0; r < nprocs; r++)
        writers[r] = r != c->idle;
    check_file(c, len, writers, what);
    free(writers);
}

/* every rank writes the blocks of one view, `shift` bytes after the previous rank's: the same
 * blocks (shift 0) or partly the same */
static void overlapping(const char *cb, int shift)
{
    wcase_t c = {.block = 7, .nblk = 500, .gap = 1, .call = W_AT_ALL, .idle = -1, .cb = cb};
    long tile = (1 + c.gap) * c.block, len = HDR + (long)(c.nblk + 1) * tile + 50 + nprocs * shift;
    MPI_File fh;
    if (!open_filled(&c, len, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh))
        return;
    MPI_Datatype blk, ft;
    MPI_Type_contiguous(c.block, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, tile, &ft);
    MPI_Type_commit(&ft);
    CHECK_OK(MPI_File_set_view(fh, HDR + (MPI_Offset)rank * shift, MPI_BYTE, ft, "native",
                               MPI_INFO_NULL));
    MPI_Type_free(&blk);
    MPI_Type_free(&ft);
    MPI_Status st;
    CHECK_OK(write_blocks(fh, &c, (long)c.nblk * c.block, 0, &st));
    CHECK_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        return;
    unsigned char *got = mtest_calloc((size_t)len, 1);
    int fd = open(name, O_RDONLY);
    ssize_t n = fd >= 0 ? pread(fd, got, (size_t)len, 0) : -1;
    if (fd >= 0)
        close(fd);
    long bad = 0;
    MTEST_CHECK(n == len, "overlapping: the file holds %zd bytes, expected %ld", n, len);
    for (long off = 0; off < len && n == len; off++) {
        int covered = 0, ok = 0; /* some rank's byte where a rank wrote, else the old one */
        for (int r = 0; r < nprocs; r++) {
            long rel = off - HDR - (long)r * shift, t = rel / tile;
            if (rel >= 0 && rel % tile < c.block && t >= 1 && t <= c.nblk) {
                covered = 1;
                ok |= got[off] == new_byte(r, (t - 1) * c.block + rel % c.block);
            }
        }
        if (!covered)
            ok = got[off] == old_byte(off);
        if (!ok && bad++ < 3)
            MTEST_CHECK(0, "overlapping (cb %s, shift %d): byte %ld is %#x", cb ? cb : "-", shift,
                        off, got[off]);
    }
    MTEST_CHECK(bad == 0, "overlapping (shift %d): %ld bytes wrong", shift, bad);
    free(got);
}

/* the last rank passes count -1: MPI_ERR_COUNT there, the others' data written */
static void bad_count(void)
{
    wcase_t c = {.block = 4096, .nblk = 20, .call = W_ALL, .idle = nprocs - 1, .cb = "true"};
    long len = file_len(&c);
    MPI_File fh;
    if (!open_filled(&c, len, MPI_MODE_CREATE | MPI_MODE_RDWR, &fh))
        return;
    set_view(fh, c.block, nprocs + c.gap, rank);
    MPI_Status st;
    int bad = rank == c.idle;
    int rc = write_blocks(fh, &c, bad ? 0 : (long)c.nblk * c.block, bad, &st);
    if (bad)
        MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_File_write_all");
    else
        CHECK_OK(rc);
    CHECK_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    int *writers = mtest_calloc((size_t)nprocs, sizeof(int));
    for (int r = 0; r < nprocs; r++)
        writers[r] = r != c.idle;
    check_file(&c, len, writers, "count -1 on the last rank");
    free(writers);
}

static void read_only(void)
{
    wcase_t c = {.block = 4096, .nblk = 4, .call = W_ALL, .idle = -1, .cb = "true"};
    MPI_File fh;
    if (!open_filled(&c, file_len(&c), MPI_MODE_CREATE | MPI_MODE_RDWR, &fh))
        return;
    CHECK_OK(MPI_File_close(&fh));
    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)))
        return;
    set_view(fh, c.block, nprocs + c.gap, rank);
    for (int k = 0; k < 2; k++) {
        c.call = k == 0 ? W_ALL : W_AT_ALL_C;
        MPI_Status st;
        int rc = write_blocks(fh, &c, (long)c.nblk * c.block, 0, &st);
        int cls = -1;
        MPI_Error_class(rc, &cls);
        MTEST_CHECK(cls == MPI_ERR_ACCESS || cls == MPI_ERR_READ_ONLY,
                    "%s on a read-only file: class %s", call_names[c.call],
                    mtest_error_class_name(cls));
        if (mtest_is_manifold())
            MTEST_CHECK_ERR(rc, MPI_ERR_ACCESS, call_names[c.call]);
    }
    CHECK_OK(MPI_File_close(&fh));
}

/* rank 0, the only aggregator, cannot write past the header: everyone gets MPI_ERR_IO */
static void failing_aggregator(void)
{
    wcase_t c = {
        .block = 4096, .nblk = 8, .call = W_ALL, .idle = -1, .cb = "true", .cb_nodes = "1"};
    MPI_File fh;
    if (!open_filled(&c, file_len(&c), MPI_MODE_CREATE | MPI_MODE_RDWR, &fh))
        return;
    set_view(fh, c.block, nprocs + c.gap, rank);
    struct rlimit saved;
    getrlimit(RLIMIT_FSIZE, &saved);
    if (rank == 0) {
        signal(SIGXFSZ, SIG_IGN); /* the write fails with EFBIG instead */
        struct rlimit low = {HDR + 1, saved.rlim_max};
        setrlimit(RLIMIT_FSIZE, &low);
    }
    MPI_Status st;
    int rc = write_blocks(fh, &c, (long)c.nblk * c.block, 0, &st);
    if (rank == 0)
        setrlimit(RLIMIT_FSIZE, &saved);
    MTEST_CHECK_ERR(rc, MPI_ERR_IO, "MPI_File_write_all");
    if (rank == 0 && rc != MPI_SUCCESS && mtest_is_manifold()) { /* names the file */
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        MTEST_CHECK(strstr(text, name) != NULL, "the message \"%s\" does not name %s", text, name);
    }
    CHECK_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    make_name(name, sizeof(name), "io_write_all", "");
    int last = nprocs - 1;
    const wcase_t cases[] = {
        {1, 3000, 0, W_ALL, 0, -1, NULL, NULL, NULL},
        {7, 1000, 1, W_AT_ALL, 0, -1, "true", NULL, NULL},
        {4096, 40, 0, W_ALL_C, 1, -1, NULL, NULL, NULL},
        {100 * 1024, 5, 1, W_AT_ALL_C, 0, -1, NULL, NULL, NULL},
        {7, 600, 2, W_ALL, 1, last, "true", "4096", NULL},
        {100 * 1024, 3, 0, W_AT_ALL, 0, -1, "true", "4096", NULL},
        {4096, 40, 1, W_ALL, 0, -1, "false", NULL, NULL},
        {4096, 33, 0, W_AT_ALL_C, 1, 0, "true", NULL, "1"},
        {1, 2000, 1, W_ALL_C, 0, -1, "true", "4096", "2"},
        {4096, 0, 0, W_ALL, 0, -1, "true", NULL, NULL}, /* count 0 everywhere */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        run_case(&cases[i]);
    overlapping(NULL, 0);
    overlapping("true", 0);
    overlapping("true", 3);
    if (mtest_is_manifold())
        bad_count();
    read_only();
    if (nprocs > 1)
        failing_aggregator();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    return mtest_finalize(0);
}
