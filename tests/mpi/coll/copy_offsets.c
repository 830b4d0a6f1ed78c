/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives on user buffers placed 0-63 bytes and more past a page boundary, so that the
 * library's copies between them and its shared-memory slots (and between the send and receive
 * buffers themselves) land at many distances modulo 4 KiB, including the 1-63 bytes that the
 * collectives copy with a loop of their own. Sizes around its threshold (1984 bytes), odd
 * tails, and up to 64 KiB: Bcast, Gather, Scatter and Allgather of bytes, every root; Reduce
 * (a non-commutative user op, in rank order) and Allreduce (also in place) with their typed
 * buffers at the offsets rounded down to 8 bytes. Every byte is checked.
 */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PAGE 4096
static const size_t sizes[] = {1984, 1988, 2048, 4096, 5004, 8196, 16396, 65540};
static const size_t offsets[][2] = {{0, 0},  {0, 16},  {16, 0}, {1, 9},   {8, 0},
                                    {0, 63}, {63, 61}, {64, 0}, {0, 2048}};
#define NSIZES   ((int)(sizeof(sizes) / sizeof(sizes[0])))
#define NOFFSETS ((int)(sizeof(offsets) / sizeof(offsets[0])))

static unsigned char byte_of(int rank, size_t i, int round)
{
    return (unsigned char)(rank * 131 + (int)(i * 7) + (int)(i >> 8) + round);
}

static int32_t int_of(int rank, size_t i, int round)
{
    return (int32_t)(rank * 1000003 + (int)i * 7 + round);
}

/* An affine map x -> m x + c (m high, c low 32 bits); the op composes two in rank order
 * (associative, not commutative): apply `in` (the lower ranks) first, then `inout`. */
static uint64_t map_of(int rank, size_t i, int round)
{
    uint64_t m = 2u * (uint32_t)(rank + (int)i) + 1u;
    return m << 32 | (uint32_t)int_of(rank, i, round);
}

static uint64_t compose(uint64_t first, uint64_t then)
{
    uint32_t m1 = (uint32_t)(first >> 32), c1 = (uint32_t)first;
    uint32_t m2 = (uint32_t)(then >> 32), c2 = (uint32_t)then;
    return (uint64_t)(m1 * m2) << 32 | (uint32_t)(m2 * c1 + c2);
}

static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = compose(a[i], b[i]);
}

static uint64_t affine_expected(int size, size_t i, int round)
{
    uint64_t acc = map_of(0, i, round);
    for (int r = 1; r < size; r++)
        acc = compose(acc, map_of(r, i, round));
    return acc;
}

static void *page_alloc(size_t len)
{
    void *p = NULL;
    if (posix_memalign(&p, PAGE, len + 2 * PAGE) != 0)
        p = NULL;
    MTEST_CHECK(p != NULL, "cannot allocate %zu bytes", len);
    if (p == NULL)
        exit(1);
    return p;
}

static size_t first_bad_bytes(const unsigned char *buf, size_t n, int rank, int round)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != byte_of(rank, i, round))
            return i;
    return SIZE_MAX;
}

static void run(MPI_Comm comm, MPI_Op affine_op, size_t len, size_t so, size_t ro, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    size_t total = len * (size_t)size;
    unsigned char *smem = page_alloc(total), *rmem = page_alloc(total);
    unsigned char *s = smem + so, *r = rmem + ro;
    int n = (int)len, root = round % size;

    /* Bcast */
    for (size_t i = 0; i < len; i++)
        r[i] = rank == root ? byte_of(root, i, round) : 0;
    MPI_Bcast(r, n, MPI_BYTE, root, comm);
    size_t bad = first_bad_bytes(r, len, root, round);
    MTEST_CHECK(bad == SIZE_MAX, "bcast %zu offsets %zu/%zu root %d: byte %zu wrong", len, so, ro,
                root, bad);

    /* Gather (the root's own block is a local copy between the two buffers) */
    for (size_t i = 0; i < len; i++)
        s[i] = byte_of(rank, i, round);
    memset(r, 0xee, total);
    MPI_Gather(s, n, MPI_BYTE, r, n, MPI_BYTE, root, comm);
    for (int q = 0; rank == root && q < size; q++) {
        bad = first_bad_bytes(r + (size_t)q * len, len, q, round);
        MTEST_CHECK(bad == SIZE_MAX, "gather %zu offsets %zu/%zu root %d: block %d byte %zu wrong",
                    len, so, ro, root, q, bad);
    }

    /* Scatter */
    for (int q = 0; q < size; q++)
        for (size_t i = 0; i < len; i++)
            s[(size_t)q * len + i] = byte_of(q, i, round);
    memset(r, 0xee, len);
    MPI_Scatter(s, n, MPI_BYTE, r, n, MPI_BYTE, root, comm);
    bad = first_bad_bytes(r, len, rank, round);
    MTEST_CHECK(bad == SIZE_MAX, "scatter %zu offsets %zu/%zu root %d: byte %zu wrong", len, so, ro,
                root, bad);

    /* Allgather */
    for (size_t i = 0; i < len; i++)
        s[i] = byte_of(rank, i, round);
    memset(r, 0xee, total);
    MPI_Allgather(s, n, MPI_BYTE, r, n, MPI_BYTE, comm);
    for (int q = 0; q < size; q++) {
        bad = first_bad_bytes(r + (size_t)q * len, len, q, round);
        MTEST_CHECK(bad == SIZE_MAX, "allgather %zu offsets %zu/%zu: block %d byte %zu wrong", len,
                    so, ro, q, bad);
    }

    /* Reduce with a non-commutative op, Allreduce with MPI_SUM, out of place and in place */
    /* Typed buffers keep their items aligned: offsets rounded down to 8 bytes. */
    void *sa = smem + (so & ~(size_t)7), *ra = rmem + (ro & ~(size_t)7);
    int cnt = (int)(len / sizeof(int32_t)), mcnt = (int)(len / sizeof(uint64_t));
    int32_t *si = sa, *ri = ra;
    uint64_t *sm = sa, *rm = ra;
    for (int i = 0; i < mcnt; i++)
        sm[i] = map_of(rank, (size_t)i, round);
    memset(ra, 0xee, len);
    MPI_Reduce(sa, ra, mcnt, MPI_UINT64_T, affine_op, root, comm);
    for (int i = 0; rank == root && i < mcnt; i++)
        if (!MTEST_CHECK(rm[i] == affine_expected(size, (size_t)i, round),
                         "reduce %zu offsets %zu/%zu root %d: item %d wrong", len, so, ro, root, i))
            break;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < cnt; i++) {
            si[i] = int_of(rank, (size_t)i, round);
            ri[i] = pass ? si[i] : -1;
        }
        MPI_Allreduce(pass ? MPI_IN_PLACE : sa, ra, cnt, MPI_INT32_T, MPI_SUM, comm);
        for (int i = 0; i < cnt; i++) {
            uint32_t want = 0;
            for (int q = 0; q < size; q++)
                want += (uint32_t)int_of(q, (size_t)i, round);
            if (!MTEST_CHECK(ri[i] == (int32_t)want,
                             "allreduce %zu offsets %zu/%zu in place %d: item %d wrong", len, so,
                             ro, pass, i))
                break;
        }
    }
    free(smem);
    free(rmem);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Op affine_op;
    MPI_Op_create(affine, 0, &affine_op);
    int round = 0;
    for (int j = 0; j < NSIZES; j++)
        for (int o = 0; o < NOFFSETS; o++, round++)
            run(MPI_COMM_WORLD, affine_op, sizes[j], offsets[o][0], offsets[o][1], round);
    MPI_Op_free(&affine_op);
    return mtest_finalize(0);
}
