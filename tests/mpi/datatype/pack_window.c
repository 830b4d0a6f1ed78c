/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Items of two segments and 16 packed bytes (an int, a gap, a double and a float; two doubles
 * with a gap), which Manifold packs by copying 16 bytes of memory at once and the first segment
 * over their front, and similar types that must not take that path (segments out of memory
 * order). For each type and several counts: MPI_Pack must give the reference bytes and write
 * nothing past them, from items whose last type-map byte ends a page followed by an
 * inaccessible one (a read past it faults); a message sent with the type (8 KiB of it is
 * streamed) arrives as the reference bytes; and bytes received with the type land in the type
 * map only. Rank 0 sends, rank 1 receives.
 *
 * Last, the same two segments at absolute addresses (MPI_BOTTOM) with an inaccessible page
 * between them: the window may read only a gap that lies between two bytes of the type map
 * less than 16 bytes apart. Before, it read the 4 bytes before the second segment wherever
 * the first one lay, and MPI_Pack faulted (found by PnetCDF's tests, whose hindexed types of
 * absolute addresses join separate allocations: ASan saw a heap-buffer-overflow).
 */
#include "mtest.h"

#include <mpi.h>

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define SENTRY   0x5a
#define MAXCOUNT 1024

typedef struct shape {
    const char *what;
    MPI_Aint extent;
    MPI_Aint off[2];
    int len[2];
} shape_t;

static const shape_t shapes[] = {
    {"int, gap, double, float", 32, {0, 8}, {4, 12}},
    {"double, gap, double", 32, {0, 16}, {8, 8}},
    {"double, 4-byte gap, double", 24, {0, 12}, {8, 8}},
    {"int after 12 bytes (memory order reversed)", 32, {20, 0}, {4, 12}},
    {"double after a double (memory order reversed)", 32, {16, 0}, {8, 8}},
};

static int rank;

static MPI_Datatype make_type(const shape_t *s)
{
    MPI_Datatype t, r;
    int lens[2] = {s->len[0], s->len[1]};
    MPI_Type_create_hindexed(2, lens, s->off, MPI_BYTE, &t);
    MPI_Type_create_resized(t, 0, s->extent, &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

/* the packed form of count items at mem, by hand */
static void reference(const shape_t *s, const unsigned char *mem, int count, unsigned char *out)
{
    for (int i = 0; i < count; i++)
        for (int b = 0; b < 2; b++) {
            memcpy(out, mem + i * s->extent + s->off[b], (size_t)s->len[b]);
            out += s->len[b];
        }
}

/* The end of the last item's type map: the highest end of its segments. */
static MPI_Aint map_end(const shape_t *s)
{
    MPI_Aint e0 = s->off[0] + s->len[0], e1 = s->off[1] + s->len[1];
    return e0 > e1 ? e0 : e1;
}

static void check_pack(const shape_t *s, MPI_Datatype t, unsigned char *page_end, int count)
{
    size_t span = (size_t)((count - 1) * s->extent + map_end(s));
    unsigned char *mem = page_end - span; /* the last type-map byte ends the page */
    for (size_t i = 0; i < span; i++)
        mem[i] = (unsigned char)(i * 13 + 7);
    size_t bytes = (size_t)count * 16;
    unsigned char *want = malloc(bytes), *out = malloc(bytes + 64);
    reference(s, mem, count, want);
    memset(out, SENTRY, bytes + 64);
    int pos = 0;
    MPI_Pack(mem, count, t, out, (int)bytes + 64, &pos, MPI_COMM_SELF);
    MTEST_CHECK(pos == (int)bytes, "%s, %d items: MPI_Pack position %d", s->what, count, pos);
    MTEST_CHECK(memcmp(out, want, bytes) == 0, "%s, %d items: packed bytes differ", s->what, count);
    for (int i = 0; i < 64; i++)
        if (out[bytes + (size_t)i] != SENTRY) {
            MTEST_CHECK(0, "%s, %d items: byte %d past the end written", s->what, count, i);
            break;
        }
    free(want);
    free(out);
}

static void check_transfer(const shape_t *s, MPI_Datatype t, int count, int tag)
{
    size_t span = (size_t)count * (size_t)s->extent, bytes = (size_t)count * 16;
    unsigned char *mem = malloc(span), *packed = malloc(bytes), *want = malloc(span);
    for (size_t i = 0; i < span; i++)
        mem[i] = (unsigned char)(i * 11 + 3);
    reference(s, mem, count, packed);
    if (rank == 0) {
        MPI_Send(mem, count, t, 1, tag, MPI_COMM_WORLD);
        MPI_Send(packed, (int)bytes, MPI_BYTE, 1, tag + 1, MPI_COMM_WORLD);
    } else {
        unsigned char *got = malloc(bytes);
        MPI_Recv(got, (int)bytes, MPI_BYTE, 0, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MTEST_CHECK(memcmp(got, packed, bytes) == 0, "%s, %d items: sent bytes differ", s->what,
                    count);
        /* received with the type: the type map gets the sender's bytes, the gaps keep theirs */
        memset(want, SENTRY, span);
        for (int i = 0; i < count; i++)
            for (int b = 0; b < 2; b++) {
                MPI_Aint at = i * s->extent + s->off[b];
                memcpy(want + at, mem + at, (size_t)s->len[b]);
            }
        memset(got, 0, bytes);
        unsigned char *dst = malloc(span);
        memset(dst, SENTRY, span);
        MPI_Recv(dst, count, t, 0, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MTEST_CHECK(memcmp(dst, want, span) == 0, "%s, %d items: received bytes differ", s->what,
                    count);
        free(dst);
        free(got);
    }
    free(mem);
    free(packed);
    free(want);
}

/* One item of the first segment ending a page and the second starting the page after an
 * inaccessible one, packed, sent to this process and unpacked. */
static void check_guard_gap(unsigned char *map, size_t page, int len0, int len1)
{
    unsigned char *a = map + page - len0, *b = map + 2 * page;
    for (int i = 0; i < len0; i++)
        a[i] = (unsigned char)(i + 1);
    for (int i = 0; i < len1; i++)
        b[i] = (unsigned char)(i + 101);
    int lens[2] = {len0, len1};
    MPI_Aint disps[2];
    MPI_Get_address(a, &disps[0]);
    MPI_Get_address(b, &disps[1]);
    MPI_Datatype t;
    MPI_Type_create_hindexed(2, lens, disps, MPI_BYTE, &t);
    MPI_Type_commit(&t);
    unsigned char want[16], out[16];
    memcpy(want, a, (size_t)len0);
    memcpy(want + len0, b, (size_t)len1);
    int pos = 0;
    MPI_Pack(MPI_BOTTOM, 1, t, out, (int)sizeof(out), &pos, MPI_COMM_SELF);
    MTEST_CHECK(pos == 16 && memcmp(out, want, 16) == 0, "gap of a page (%d+%d): MPI_Pack", len0,
                len1);
    memset(out, 0, sizeof(out));
    MPI_Sendrecv(MPI_BOTTOM, 1, t, 0, 1, out, 16, MPI_BYTE, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MTEST_CHECK(memcmp(out, want, 16) == 0, "gap of a page (%d+%d): message", len0, len1);
    memset(a, 0, (size_t)len0);
    memset(b, 0, (size_t)len1);
    pos = 0;
    MPI_Unpack(want, 16, &pos, MPI_BOTTOM, 1, t, MPI_COMM_SELF);
    MTEST_CHECK(memcmp(a, want, (size_t)len0) == 0 && memcmp(b, want + len0, (size_t)len1) == 0,
                "gap of a page (%d+%d): MPI_Unpack", len0, len1);
    MPI_Type_free(&t);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t region = ((size_t)MAXCOUNT * 32 + page - 1) / page * page;
    unsigned char *map =
        mmap(NULL, region + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MTEST_CHECK(map != MAP_FAILED, "mmap failed");
    if (map == MAP_FAILED)
        return mtest_finalize(0);
    mprotect(map + region, page, PROT_NONE);
    static const int counts[] = {1, 2, 3, 7, 512, MAXCOUNT};
    int tag = 10;
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        MPI_Datatype t = make_type(&shapes[k]);
        int size = 0;
        MPI_Type_size(t, &size);
        MTEST_CHECK(size == 16, "%s: size %d", shapes[k].what, size);
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            check_pack(&shapes[k], t, map + region, counts[c]);
            check_transfer(&shapes[k], t, counts[c], tag);
            tag += 2;
        }
        MPI_Type_free(&t);
    }
    munmap(map, region + page);
    unsigned char *guard =
        mmap(NULL, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    MTEST_CHECK(guard != MAP_FAILED, "mmap failed");
    if (guard != MAP_FAILED) {
        mprotect(guard + page, page, PROT_NONE);
        check_guard_gap(guard, page, 4, 12);
        check_guard_gap(guard, page, 8, 8);
        munmap(guard, 3 * page);
    }
    return mtest_finalize(0);
}
