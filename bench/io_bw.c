/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-IO bandwidth: every rank writes, then reads back, its part of one shared file, in three
 * patterns, for sizes per rank from --min to --max bytes (four times larger each):
 *
 * - contig_at:   MPI_File_write_at / MPI_File_read_at of one contiguous block per rank, at
 *                offset rank * size;
 * - strided_all: a file view whose filetype (a vector of size / block blocks of --block bytes
 *                with a stride of nprocs blocks, resized to nprocs * size) interleaves the
 *                ranks block by block, with MPI_File_write_all / MPI_File_read_all;
 * - shared:      MPI_File_write_shared of --block bytes at a time until the rank's size is
 *                written, then MPI_File_read_shared of as many blocks (after seek_shared to 0).
 *
 * Every phase is timed on rank 0 as MPI_Barrier, the operation, MPI_Barrier (so it ends when
 * the slowest rank is done); one untimed warm-up iteration, then --iters timed ones, and rank
 * 0 prints one JSON line per (pattern, op, size) with the median, minimum and maximum seconds
 * and the aggregate bandwidth, mb_s = nprocs * size / median / 1e6. Before every write phase
 * MPI_File_set_size(fh, 0) empties the file (and seek / seek_shared rewind the pointers), so
 * no data of an earlier iteration survives; the data written depends on the rank, the offset
 * and the iteration, and every read is checked (the shared pattern's blocks, which land in an
 * order nobody chooses, carry their writer and index in their first 8 bytes, and every block
 * must be read exactly once). After the last iteration the file is closed, reopened and each
 * rank reads the next rank's data through the same layout, untimed (so that a library serving
 * a process's reads from its own writes cannot pass). A mismatch ends the program with status
 * 3 after the numbers so far. The file of each (pattern, size) is deleted when it is done.
 *
 * contig_at and strided_all read back what the rank itself wrote (sequential consistency within
 * a process holds without MPI_File_sync). The shared reads return other ranks' blocks, which
 * MPI's nonatomic mode guarantees only after sync-barrier-sync: the program does that before
 * every shared read phase, untimed (--no-sync leaves it out).
 *
 * What this measures: the files live in the page cache (this is run on a 2-core VM with plenty
 * of memory; nothing forces data to a disk inside a timed phase, though the kernel's writeback
 * of dirty pages may run beside one at the larger sizes), so the numbers compare the MPI
 * libraries' own overheads (views and datatypes, collective buffering, the shared file
 * pointer's locking), not a storage device.
 *
 * Only the standard MPI API (MPI-5.0 ABI) and POSIX: the same source builds with Manifold,
 * MPICH's mpicc_abi and Open MPI's mpicc (bench/run_io.py runs them side by side). Options:
 * --dir DIR (default .), --min BYTES, --max BYTES (default 4k and 16m; k/m suffixes),
 * --block BYTES (default 4k), --iters N (or --reps N; default 5), --patterns LIST (comma
 * separated, default contig_at,strided_all,shared), --no-sync, --datarep REP (contig_at moves
 * ints, MPI_INT, through a view of ints in data representation REP, e.g. external32, which
 * converts every int; sizes must then be multiples of 4 bytes; the other patterns refuse it).
 */
#include "bench_util.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#define IO_MAX_SIZES 32

enum { PAT_CONTIG_AT, PAT_STRIDED_ALL, PAT_SHARED, PAT_COUNT };

static const char *const pattern_names[PAT_COUNT] = {"contig_at", "strided_all", "shared"};

typedef struct io_opts {
    const char *dir;
    size_t min_size;
    size_t max_size;
    size_t block;
    int iters;
    int patterns[PAT_COUNT];
    int sync_shared;
    const char *datarep; /* NULL: bytes in the default view */
} io_opts_t;

static int rank, nprocs;
static const char *contig_rep; /* --datarep */

/* 64 bits of the data pattern: word `index` of rank `owner`'s data in iteration `iter`. */
static uint64_t pattern_word(int owner, int iter, uint64_t index)
{
    uint64_t x = index * 0x9E3779B97F4A7C15ull + (uint64_t)(owner + 1) * 0xC2B2AE3D27D4EB4Full +
                 (uint64_t)(iter + 1) * 0x165667B19E3779F9ull;
    x ^= x >> 31;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 29;
    return x;
}

/* The pattern byte at logical offset `off` of rank `owner`'s data. */
static unsigned char pattern_byte(int owner, int iter, size_t off)
{
    return (unsigned char)(pattern_word(owner, iter, off / 8) >> (8 * (off % 8)));
}

static void fill(unsigned char *buf, size_t size, int owner, int iter)
{
    size_t words = size / 8;
    for (size_t w = 0; w < words; w++) {
        uint64_t x = pattern_word(owner, iter, w);
        memcpy(buf + 8 * w, &x, 8);
    }
    for (size_t off = 8 * words; off < size; off++)
        buf[off] = pattern_byte(owner, iter, off);
}

/* Index of the first of buf[0, len) that differs from owner's pattern, buf holding the data
 * from logical offset off0 on; SIZE_MAX if all match. */
static size_t mismatch(const unsigned char *buf, size_t off0, size_t len, int owner, int iter)
{
    for (size_t i = 0; i < len; i++) {
        size_t off = off0 + i;
        if (off % 8 == 0 && i + 8 <= len) {
            uint64_t x = pattern_word(owner, iter, off / 8), y;
            memcpy(&y, buf + i, 8);
            if (x == y) {
                i += 7;
                continue;
            }
        }
        if (buf[i] != pattern_byte(owner, iter, off))
            return i;
    }
    return SIZE_MAX;
}

/* The shared pattern's block header: writer and block index, in the block's first 8 bytes. */
static void put_header(unsigned char *block, int owner, size_t index)
{
    uint32_t h[2] = {(uint32_t)owner, (uint32_t)index};
    memcpy(block, h, 8);
}

static double elapsed_since(double t0)
{
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime() - t0;
}

static double start_phase(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
    return MPI_Wtime();
}

static int count_ok(MPI_Status *st, size_t expected)
{
    int n = -1;
    MPI_Get_count(st, MPI_BYTE, &n);
    return n >= 0 && (size_t)n == expected;
}

/* contig_at's view: the default one, or ints in the --datarep representation. */
static void contig_view(MPI_File fh)
{
    if (contig_rep != NULL)
        mf_bench_mpi_ok(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, contig_rep, MPI_INFO_NULL),
                        "MPI_File_set_view");
}

/* contig_at's access: `owner`'s block of `size` bytes (as size / 4 ints with --datarep). */
static void contig_access(MPI_File fh, int write, int owner, unsigned char *buf, size_t size,
                          MPI_Status *st)
{
    size_t unit = contig_rep != NULL ? sizeof(int) : 1;
    MPI_Datatype type = contig_rep != NULL ? MPI_INT : MPI_BYTE;
    MPI_Offset at = (MPI_Offset)(size / unit * (size_t)owner);
    int count = (int)(size / unit);
    if (write)
        mf_bench_mpi_ok(MPI_File_write_at(fh, at, buf, count, type, st), "MPI_File_write_at");
    else
        mf_bench_mpi_ok(MPI_File_read_at(fh, at, buf, count, type, st), "MPI_File_read_at");
}

static void print_line(const char *pattern, const char *op, size_t size, size_t block, double *t,
                       int iters)
{
    mf_bench_result_t r;
    mf_bench_summarize(t, iters, &r);
    double total = (double)size * nprocs;
    printf("{\"bench\": \"io_bw\", \"pattern\": \"%s\", \"op\": \"%s\", \"size\": %zu, "
           "\"np\": %d, \"block\": %zu, \"iters\": %d, \"median_s\": %.6e, \"min_s\": %.6e, "
           "\"max_s\": %.6e, \"mb_s\": %.2f}\n",
           pattern, op, size, nprocs, block, iters, r.median, r.min, r.max,
           r.median > 0 ? total / r.median / 1e6 : 0.0);
    fflush(stdout);
}

/* Checks the shared pattern's blocks this rank read back (rbuf holds nblk of them, in the
 * order they came): each one's content, and that every (writer, index) came exactly once over
 * all ranks. Returns the number of bad blocks on this rank (0 on every rank if all is well). */
static long check_shared(const unsigned char *rbuf, size_t nblk, size_t eff, int iter, int *seen)
{
    long bad = 0;
    memset(seen, 0, sizeof(int) * nblk * (size_t)nprocs);
    for (size_t b = 0; b < nblk; b++) {
        const unsigned char *blk = rbuf + b * eff;
        uint32_t h[2];
        memcpy(h, blk, 8);
        if (h[0] >= (uint32_t)nprocs || h[1] >= nblk) {
            if (bad++ == 0)
                fprintf(stderr, "io_bw: rank %d: shared block %zu has a bad header (%u, %u)\n",
                        rank, b, h[0], h[1]);
            continue;
        }
        /* the header replaced the first 8 bytes; the rest is the writer's pattern */
        size_t at = mismatch(blk + 8, (size_t)h[1] * eff + 8, eff - 8, (int)h[0], iter);
        if (at != SIZE_MAX) {
            if (bad++ == 0)
                fprintf(stderr,
                        "io_bw: rank %d: shared block %zu (writer %u, index %u): wrong byte at "
                        "%zu of the block\n",
                        rank, b, h[0], h[1], at + 8);
            continue;
        }
        seen[(size_t)h[0] * nblk + h[1]]++;
    }
    MPI_Allreduce(MPI_IN_PLACE, seen, (int)(nblk * (size_t)nprocs), MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    if (rank == 0) {
        for (size_t i = 0; i < nblk * (size_t)nprocs; i++) {
            if (seen[i] != 1) {
                if (bad++ == 0)
                    fprintf(stderr, "io_bw: block %zu of rank %zu was read %d times\n", i % nblk,
                            i / nblk, seen[i]);
            }
        }
    }
    return bad;
}

/* After the last iteration (`iter`) and MPI_File_close: reopens the file and reads the next
 * rank's data through the same layout (read_at, or the view with that rank's displacement and
 * read_all), so that a library serving a process's reads from its own writes would not pass
 * unnoticed (close and open make other processes' data visible without MPI_File_sync). The
 * shared pattern's reads cross ranks already. Returns 0, or -1 on every rank after a mismatch. */
static long cross_check(int pat, size_t size, size_t eff, const char *path, MPI_Datatype ftype,
                        unsigned char *rbuf, int iter)
{
    MPI_File fh;
    MPI_Status st;
    int next = (rank + 1) % nprocs;
    long bad = 0;

    memset(rbuf, 0, size);
    mf_bench_mpi_ok(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                    "MPI_File_open");
    if (pat == PAT_CONTIG_AT) {
        contig_view(fh);
        contig_access(fh, 0, next, rbuf, size, &st);
    } else {
        mf_bench_mpi_ok(MPI_File_set_view(fh, (MPI_Offset)(eff * (size_t)next), MPI_BYTE, ftype,
                                          "native", MPI_INFO_NULL),
                        "MPI_File_set_view");
        mf_bench_mpi_ok(MPI_File_read_all(fh, rbuf, (int)size, MPI_BYTE, &st), "MPI_File_read_all");
    }
    size_t at = count_ok(&st, size) ? mismatch(rbuf, 0, size, next, iter) : 0;
    if (at != SIZE_MAX) {
        fprintf(stderr,
                "io_bw: rank %d: %s size %zu, after reopening: rank %d's data is wrong at its "
                "offset %zu (or short)\n",
                rank, pattern_names[pat], size, next, at);
        bad = 1;
    }
    mf_bench_mpi_ok(MPI_File_close(&fh), "MPI_File_close");
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    return bad ? -1 : 0;
}

/* Runs one pattern at one size. Returns 0, or 1 after a data mismatch (on every rank). */
static int run_one(const io_opts_t *o, int pat, size_t size, const char *path, unsigned char *wbuf,
                   unsigned char *rbuf, int *seen, double *tw, double *tr)
{
    MPI_File fh;
    MPI_Datatype vec = MPI_DATATYPE_NULL, ftype = MPI_DATATYPE_NULL;
    MPI_Status st;
    size_t eff = o->block < size ? o->block : size;
    size_t nblk = size / eff;
    long bad = 0;
    int iter;

    mf_bench_mpi_ok(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
        "MPI_File_open");
    if (pat == PAT_CONTIG_AT)
        contig_view(fh);
    if (pat == PAT_STRIDED_ALL) {
        mf_bench_mpi_ok(
            MPI_Type_vector((int)nblk, (int)eff, (int)(eff * (size_t)nprocs), MPI_BYTE, &vec),
            "MPI_Type_vector");
        mf_bench_mpi_ok(MPI_Type_create_resized(vec, 0, (MPI_Aint)(size * (size_t)nprocs), &ftype),
                        "MPI_Type_create_resized");
        mf_bench_mpi_ok(MPI_Type_commit(&ftype), "MPI_Type_commit");
        mf_bench_mpi_ok(MPI_File_set_view(fh, (MPI_Offset)(eff * (size_t)rank), MPI_BYTE, ftype,
                                          "native", MPI_INFO_NULL),
                        "MPI_File_set_view");
    }
    for (iter = 0; iter <= o->iters && bad == 0; iter++) {
        double t0, tw_i, tr_i;
        int short_io = 0;

        fill(wbuf, size, rank, iter);
        if (pat == PAT_SHARED)
            for (size_t b = 0; b < nblk; b++)
                put_header(wbuf + b * eff, rank, b);
        memset(rbuf, 0, size);
        mf_bench_mpi_ok(MPI_File_set_size(fh, 0), "MPI_File_set_size");

        /* write phase */
        if (pat == PAT_STRIDED_ALL)
            mf_bench_mpi_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "MPI_File_seek");
        if (pat == PAT_SHARED)
            mf_bench_mpi_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), "MPI_File_seek_shared");
        t0 = start_phase();
        switch (pat) {
        case PAT_CONTIG_AT:
            contig_access(fh, 1, rank, wbuf, size, &st);
            short_io |= !count_ok(&st, size);
            break;
        case PAT_STRIDED_ALL:
            mf_bench_mpi_ok(MPI_File_write_all(fh, wbuf, (int)size, MPI_BYTE, &st),
                            "MPI_File_write_all");
            short_io |= !count_ok(&st, size);
            break;
        default:
            for (size_t b = 0; b < nblk; b++) {
                mf_bench_mpi_ok(MPI_File_write_shared(fh, wbuf + b * eff, (int)eff, MPI_BYTE, &st),
                                "MPI_File_write_shared");
                short_io |= !count_ok(&st, eff);
            }
        }
        tw_i = elapsed_since(t0);

        /* read phase */
        if (pat == PAT_STRIDED_ALL)
            mf_bench_mpi_ok(MPI_File_seek(fh, 0, MPI_SEEK_SET), "MPI_File_seek");
        if (pat == PAT_SHARED) {
            if (o->sync_shared) {
                mf_bench_mpi_ok(MPI_File_sync(fh), "MPI_File_sync");
                MPI_Barrier(MPI_COMM_WORLD);
                mf_bench_mpi_ok(MPI_File_sync(fh), "MPI_File_sync");
            }
            mf_bench_mpi_ok(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), "MPI_File_seek_shared");
        }
        t0 = start_phase();
        switch (pat) {
        case PAT_CONTIG_AT:
            contig_access(fh, 0, rank, rbuf, size, &st);
            short_io |= !count_ok(&st, size);
            break;
        case PAT_STRIDED_ALL:
            mf_bench_mpi_ok(MPI_File_read_all(fh, rbuf, (int)size, MPI_BYTE, &st),
                            "MPI_File_read_all");
            short_io |= !count_ok(&st, size);
            break;
        default:
            for (size_t b = 0; b < nblk; b++) {
                mf_bench_mpi_ok(MPI_File_read_shared(fh, rbuf + b * eff, (int)eff, MPI_BYTE, &st),
                                "MPI_File_read_shared");
                short_io |= !count_ok(&st, eff);
            }
        }
        tr_i = elapsed_since(t0);

        /* check (untimed) */
        if (short_io) {
            fprintf(stderr,
                    "io_bw: rank %d: %s size %zu: a write or read moved fewer bytes "
                    "than asked\n",
                    rank, pattern_names[pat], size);
            bad++;
        }
        if (pat == PAT_SHARED) {
            bad += check_shared(rbuf, nblk, eff, iter, seen);
        } else {
            size_t at = mismatch(rbuf, 0, size, rank, iter);
            if (at != SIZE_MAX) {
                fprintf(stderr,
                        "io_bw: rank %d: %s size %zu iteration %d: wrong byte at offset %zu of "
                        "the rank's data: got %u, expected %u\n",
                        rank, pattern_names[pat], size, iter, at, rbuf[at],
                        pattern_byte(rank, iter, at));
                bad++;
            }
        }
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        if (iter > 0) {
            tw[iter - 1] = tw_i;
            tr[iter - 1] = tr_i;
        }
    }
    mf_bench_mpi_ok(MPI_File_close(&fh), "MPI_File_close");
    if (bad == 0 && pat != PAT_SHARED)
        bad = cross_check(pat, size, eff, path, ftype, rbuf, o->iters);
    if (ftype != MPI_DATATYPE_NULL) {
        MPI_Type_free(&ftype);
        MPI_Type_free(&vec);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        mf_bench_mpi_ok(MPI_File_delete(path, MPI_INFO_NULL), "MPI_File_delete");
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "io_bw: DATA MISMATCH in %s at %zu bytes per rank (iteration %d)\n",
                    pattern_names[pat], size, bad < 0 ? o->iters : iter - 1);
        return 1;
    }
    if (rank == 0) {
        print_line(pattern_names[pat], "write", size, eff, tw, o->iters);
        print_line(pattern_names[pat], "read", size, eff, tr, o->iters);
    }
    return 0;
}

static int parse_patterns(char *list, int *on)
{
    for (int p = 0; p < PAT_COUNT; p++)
        on[p] = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int p;
        for (p = 0; p < PAT_COUNT && strcmp(tok, pattern_names[p]); p++)
            ;
        if (p == PAT_COUNT)
            return -1;
        on[p] = 1;
    }
    for (int p = 0; p < PAT_COUNT; p++)
        if (on[p])
            return 0;
    return -1;
}

static void usage(void)
{
    fprintf(stderr, "usage: io_bw [--dir DIR] [--min BYTES] [--max BYTES] [--block BYTES] "
                    "[--iters N] [--patterns contig_at,strided_all,shared] [--no-sync] "
                    "[--datarep REP]\n");
}

/* Returns 0 if the options are valid (an error was printed by rank 0 otherwise). */
static int parse_args(int argc, char **argv, io_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int has = i + 1 < argc;
        if (!strcmp(a, "--dir") && has) {
            o->dir = argv[++i];
        } else if (!strcmp(a, "--min") && has) {
            if (mf_bench_parse_size(argv[++i], &o->min_size))
                goto bad;
        } else if (!strcmp(a, "--max") && has) {
            if (mf_bench_parse_size(argv[++i], &o->max_size))
                goto bad;
        } else if (!strcmp(a, "--block") && has) {
            if (mf_bench_parse_size(argv[++i], &o->block))
                goto bad;
        } else if ((!strcmp(a, "--iters") || !strcmp(a, "--reps")) && has) {
            o->iters = atoi(argv[++i]);
        } else if (!strcmp(a, "--patterns") && has) {
            if (parse_patterns(argv[++i], o->patterns))
                goto bad;
        } else if (!strcmp(a, "--no-sync")) {
            o->sync_shared = 0;
        } else if (!strcmp(a, "--datarep") && has) {
            o->datarep = argv[++i];
        } else {
            goto bad;
        }
    }
    if (o->iters < 1 || o->min_size < 8 || o->max_size < o->min_size || o->block < 8) {
        if (rank == 0)
            fprintf(stderr, "io_bw: needs --iters >= 1, 8 <= --min <= --max, --block >= 8\n");
        return -1;
    }
    if (o->datarep != NULL && (o->patterns[PAT_STRIDED_ALL] || o->patterns[PAT_SHARED] ||
                               o->min_size % sizeof(int) != 0)) {
        if (rank == 0)
            fprintf(stderr, "io_bw: --datarep needs --patterns contig_at and --min a multiple "
                            "of 4\n");
        return -1;
    }
    for (size_t s = o->min_size; s <= o->max_size; s *= 4) {
        size_t eff = o->block < s ? o->block : s;
        if (s % eff != 0 || s * (size_t)nprocs > INT_MAX) {
            if (rank == 0)
                fprintf(stderr,
                        "io_bw: size %zu is not a multiple of the block (%zu) or too "
                        "large for %d processes\n",
                        s, o->block, nprocs);
            return -1;
        }
    }
    return 0;
bad:
    if (rank == 0)
        usage();
    return -1;
}

int main(int argc, char **argv)
{
    io_opts_t o = {".", 4096, 16 << 20, 4096, 5, {1, 1, 1}, 1, NULL};
    size_t sizes[IO_MAX_SIZES];
    int nsizes = 0, tag, failed = 0;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];

    mf_bench_mpi_ok(MPI_Init(&argc, &argv), "MPI_Init");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (parse_args(argc, argv, &o)) {
        MPI_Finalize();
        return 2;
    }
    contig_rep = o.datarep;
    mf_bench_warm_pairs(MPI_COMM_WORLD);
    for (size_t s = o.min_size; s <= o.max_size && nsizes < IO_MAX_SIZES; s *= 4)
        sizes[nsizes++] = s;

    /* one name per run: rank 0's process id */
    tag = (int)getpid();
    MPI_Bcast(&tag, 1, MPI_INT, 0, MPI_COMM_WORLD);

    size_t max = sizes[nsizes - 1];
    size_t maxblk = max / (o.block < max ? o.block : max) * (size_t)nprocs;
    unsigned char *wbuf = mf_bench_alloc(max), *rbuf = mf_bench_alloc(max);
    int *seen = malloc(sizeof(int) * maxblk);
    double *tw = malloc(sizeof(double) * (size_t)o.iters);
    double *tr = malloc(sizeof(double) * (size_t)o.iters);
    if (!seen || !tw || !tr)
        mf_bench_abort();

    if (rank == 0) {
        mf_bench_library_version(lib);
        printf("{\"bench\": \"io_bw\", \"header\": true, \"np\": %d, \"iters\": %d, "
               "\"block\": %zu, \"sync_shared\": %s, \"datarep\": \"%s\", \"dir\": \"",
               nprocs, o.iters, o.block, o.sync_shared ? "true" : "false",
               o.datarep != NULL ? o.datarep : "native");
        mf_bench_print_json_string(stdout, o.dir);
        printf("\", \"library\": \"");
        mf_bench_print_json_string(stdout, lib);
        printf("\"}\n");
        fflush(stdout);
    }
    for (int p = 0; p < PAT_COUNT && !failed; p++) {
        if (!o.patterns[p])
            continue;
        for (int s = 0; s < nsizes && !failed; s++) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/io_bw.%d.%s.dat", o.dir, tag, pattern_names[p]);
            failed = run_one(&o, p, sizes[s], path, wbuf, rbuf, seen, tw, tr);
        }
    }
    free(wbuf);
    free(rbuf);
    free(seen);
    free(tw);
    free(tr);
    MPI_Finalize();
    return failed ? 3 : 0;
}
