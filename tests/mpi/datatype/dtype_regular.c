/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Regular layouts of huge block counts commit in constant space, as a program describing a
 * strided column of a huge array needs: MPI_Type_vector(10^8, 1, 2, MPI_DOUBLE), an hvector of
 * 10^8 ints, MPI_Type_vector_c of 2^31 doubles, a column of a 10^8 x 2 subarray, and nested
 * types around them (a resized vector in a contiguous type, an indexed_block and a vector of
 * it, a vector of a resized vector, a struct of an int and the vector, a contiguous type of the
 * plain vector) must each raise the peak resident set (getrusage's ru_maxrss) by less than 64
 * MiB, where a list of one 24-byte segment per block took 2.4 GB for the first (after the first
 * such commit the others are skipped: the _c vector's list would be 48 GiB). Their size,
 * extent, true extent and MPI_Pack_size are checked.
 *
 * Data moves through the same representations at sizes that fit: a vector of 8 Mi doubles (64
 * MiB packed: the streaming path packs it in fragments at arbitrary offsets) to plain doubles
 * and back into the vector; a struct of an int and a vector of 2^20 doubles, and a contiguous
 * type of two vectors (whose middle blocks touch), to and from their contiguous equivalents; a
 * partial receive into a column of a huge array (the 10^8 vector over an untouched mapping:
 * only the received blocks are written), with MPI_Get_count, MPI_Get_elements and
 * MPI_Get_elements_x; MPI_Pack and MPI_Unpack at an offset, MPI_Pack_external against the
 * big-endian doubles; MPI_Bcast and MPI_Gather of the vector and the struct. On Manifold the
 * MPI_T variable dtype_temp_max shows that the streamed and partial messages made no temporary
 * copy. Two processes.
 */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define HUGE_N   100000000    /* blocks of the huge types */
#define GROW_MAX (64L * 1024) /* KiB a commit may add to the peak resident set */

static int rank;
static long rss0;
static int over; /* a commit cost memory: the ones after it are skipped */

static long maxrss_kib(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Commit *t unless an earlier commit cost memory; check it did not. Returns whether it was
 * committed (the caller frees *t either way). */
static int commit_checked(MPI_Datatype *t, const char *what)
{
    if (over)
        return 0;
    double t0 = MPI_Wtime();
    MPI_Type_commit(t);
    long grown = maxrss_kib() - rss0;
    mtest_debug("%s: committed in %.3f s, peak resident set +%ld KiB\n", what, MPI_Wtime() - t0,
                grown);
    if (!MTEST_CHECK(grown < GROW_MAX, "committing %s raised the peak resident set by %ld KiB",
                     what, grown))
        over = 1;
    return !over;
}

/* Size, extent and true extent of a committed type, and a pack size of at least its size. */
static void check_props(MPI_Datatype t, const char *what, MPI_Count size, MPI_Count lb,
                        MPI_Count extent, MPI_Count tlb, MPI_Count textent)
{
    MPI_Count s, l, e, pack;
    MPI_Type_size_c(t, &s);
    MTEST_CHECK(s == size, "%s: size %lld, expected %lld", what, (long long)s, (long long)size);
    MPI_Type_get_extent_c(t, &l, &e);
    MTEST_CHECK(l == lb && e == extent, "%s: lb %lld extent %lld, expected %lld %lld", what,
                (long long)l, (long long)e, (long long)lb, (long long)extent);
    MPI_Type_get_true_extent_c(t, &l, &e);
    MTEST_CHECK(l == tlb && e == textent, "%s: true lb %lld extent %lld, expected %lld %lld", what,
                (long long)l, (long long)e, (long long)tlb, (long long)textent);
    MPI_Pack_size_c(1, t, MPI_COMM_WORLD, &pack);
    MTEST_CHECK(pack >= size, "%s: pack size %lld below its size %lld", what, (long long)pack,
                (long long)size);
    if (size <= INT32_MAX) {
        int isize, ipack;
        MPI_Type_size(t, &isize);
        MPI_Pack_size(1, t, MPI_COMM_WORLD, &ipack);
        MTEST_CHECK(isize == size && ipack >= isize, "%s: MPI_Type_size %d, MPI_Pack_size %d", what,
                    isize, ipack);
    }
}

static void huge_commits(void)
{
    const MPI_Count n = HUGE_N, ext = (n - 1) * 16 + 8;
    MPI_Datatype v, hv, vc, sub, r, cont, ib, vr, inner, innr, vv, st, c2;

    MPI_Type_vector(HUGE_N, 1, 2, MPI_DOUBLE, &v);
    if (commit_checked(&v, "vector(10^8, 1, 2, MPI_DOUBLE)"))
        check_props(v, "vector", n * 8, 0, ext, 0, ext);

    MPI_Type_create_hvector(HUGE_N, 1, 12, MPI_INT, &hv);
    if (commit_checked(&hv, "hvector(10^8, 1, 12 bytes, MPI_INT)"))
        check_props(hv, "hvector", n * 4, 0, (n - 1) * 12 + 4, 0, (n - 1) * 12 + 4);
    MPI_Type_free(&hv);

    const MPI_Count nc = (MPI_Count)1 << 31;
    MPI_Type_vector_c(nc, 1, 2, MPI_DOUBLE, &vc);
    if (commit_checked(&vc, "vector_c(2^31, 1, 2, MPI_DOUBLE)"))
        check_props(vc, "vector_c", nc * 8, 0, (nc - 1) * 16 + 8, 0, (nc - 1) * 16 + 8);
    MPI_Type_free(&vc);

    /* the second column of a 10^8 x 2 array */
    int sizes[2] = {HUGE_N, 2}, subs[2] = {HUGE_N, 1}, starts[2] = {0, 1};
    MPI_Type_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_DOUBLE, &sub);
    if (commit_checked(&sub, "subarray column of 10^8 x 2"))
        check_props(sub, "subarray", n * 8, 0, n * 16, 8, ext);
    MPI_Type_free(&sub);

    /* the vector resized to continue its stride, 3 of them contiguous, an indexed_block of
     * them, and a vector of 2 blocks of 2 */
    MPI_Type_create_resized(v, 0, n * 16, &r);
    MPI_Type_contiguous(3, r, &cont);
    if (commit_checked(&cont, "contiguous(3, resized vector)"))
        check_props(cont, "contiguous of resized", 3 * n * 8, 0, 3 * n * 16, 0, 2 * n * 16 + ext);
    MPI_Type_free(&cont);
    int disps[3] = {0, 1, 2};
    MPI_Type_create_indexed_block(3, 1, disps, r, &ib);
    if (commit_checked(&ib, "indexed_block of a resized vector"))
        check_props(ib, "indexed_block", 3 * n * 8, 0, 3 * n * 16, 0, 2 * n * 16 + ext);
    MPI_Type_free(&ib);
    MPI_Type_vector(2, 2, 2, r, &vr);
    if (commit_checked(&vr, "vector of a resized vector"))
        check_props(vr, "vector of resized", 4 * n * 8, 0, 4 * n * 16, 0, 3 * n * 16 + ext);
    MPI_Type_free(&vr);

    /* a vector of 1000 vectors of 10^5 doubles that continue each other */
    MPI_Type_vector(HUGE_N / 1000, 1, 2, MPI_DOUBLE, &inner);
    MPI_Type_create_resized(inner, 0, (MPI_Aint)(n / 1000) * 16, &innr);
    MPI_Type_vector(1000, 1, 1, innr, &vv);
    if (commit_checked(&vv, "vector(1000) of vector(10^5)"))
        check_props(vv, "vector of vectors", n * 8, 0, n * 16, 0, ext);
    MPI_Type_free(&vv);
    MPI_Type_free(&innr);
    MPI_Type_free(&inner);

    /* a struct of an int and the vector (two runs), a contiguous type of two vectors (the last
     * block of the first touches the first of the second: three runs) */
    int lens[2] = {1, 1};
    MPI_Aint sdisp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, v};
    MPI_Type_create_struct(2, lens, sdisp, types, &st);
    if (commit_checked(&st, "struct of an int and the vector"))
        check_props(st, "struct", 4 + n * 8, 0, 8 + ext, 0, 8 + ext);
    MPI_Type_free(&st);
    MPI_Type_contiguous(2, v, &c2);
    if (commit_checked(&c2, "contiguous(2, vector)"))
        check_props(c2, "contiguous of vector", 2 * n * 8, 0, 2 * ext, 0, 2 * ext);
    MPI_Type_free(&c2);
    MPI_Type_free(&r);

    /* a partial receive into a column of a huge array: only the blocks received are written,
     * so the mapping's other pages are never touched */
    if (!over) {
        const int got = 3000;
        if (rank == 0) {
            double *vals = mtest_calloc((size_t)got, sizeof(double));
            for (int i = 0; i < got; i++)
                vals[i] = i + 0.25;
            MPI_Send(vals, got, MPI_DOUBLE, 1, 1, MPI_COMM_WORLD);
            free(vals);
        } else {
            size_t span = (size_t)ext;
            double *col = mmap(NULL, span, PROT_READ | PROT_WRITE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            MTEST_CHECK(col != MAP_FAILED, "cannot map %zu bytes", span);
            if (col != MAP_FAILED) {
                MPI_Status status;
                int count;
                MPI_Count elems;
                MPI_Recv(col, 1, v, 0, 1, MPI_COMM_WORLD, &status);
                MPI_Get_count(&status, v, &count);
                MTEST_CHECK(count == MPI_UNDEFINED, "partial receive: count %d", count);
                MPI_Get_elements(&status, v, &count);
                MTEST_CHECK(count == got, "partial receive: %d elements, expected %d", count, got);
                MPI_Get_elements_x(&status, v, &elems);
                MTEST_CHECK(elems == got, "partial receive: %lld elements (_x)", (long long)elems);
                int bad = 0;
                for (int i = 0; i < got; i++)
                    bad += col[2 * i] != i + 0.25 || col[2 * i + 1] != 0.0;
                MTEST_CHECK(bad == 0 && col[2 * got] == 0.0, "partial receive: %d wrong", bad);
                munmap(col, span);
            }
        }
    }
    MPI_Type_free(&v);
}

static double dval(size_t i)
{
    return (double)i * 0.5 + 3.0;
}

/* 8 Mi doubles as a vector (64 MiB packed, streamed in fragments) to plain doubles, and back
 * into the vector over zeros: every block and every gap checked. */
static void stream_vector(void)
{
    const size_t n = (size_t)8 << 20;
    MPI_Datatype v;
    MPI_Type_vector((int)n, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    if (rank == 0) {
        double *mem = mtest_calloc(2 * n, sizeof(double));
        for (size_t i = 0; i < n; i++) {
            mem[2 * i] = dval(i);
            mem[2 * i + 1] = -1.0;
        }
        MPI_Send(mem, 1, v, 1, 10, MPI_COMM_WORLD);
        memset(mem, 0, 2 * n * sizeof(double));
        MPI_Recv(mem, 1, v, 1, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += mem[2 * i] != dval(i) + 1.0 || mem[2 * i + 1] != 0.0;
        MTEST_CHECK(bad == 0, "vector unpacked from a stream: %zu wrong", bad);
        free(mem);
    } else {
        double *flat = mtest_calloc(n, sizeof(double));
        MPI_Recv(flat, (int)n, MPI_DOUBLE, 0, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++) {
            bad += flat[i] != dval(i);
            flat[i] += 1.0;
        }
        MTEST_CHECK(bad == 0, "vector packed into a stream: %zu wrong", bad);
        MPI_Send(flat, (int)n, MPI_DOUBLE, 0, 11, MPI_COMM_WORLD);
        free(flat);
    }
    MPI_Type_free(&v);
}

/* Whether double i is data of a contiguous type of two vectors of m doubles, one of two: the
 * even ones of the first, which ends at 2m - 1, then every other one from there. */
static int two_vectors_data(size_t i, size_t m)
{
    return i < 2 * m - 1 ? i % 2 == 0 : i % 2 == 1 && i <= 4 * m - 3;
}

/* A struct of an int and a vector of m doubles (kept as two runs), and a contiguous type of
 * two such vectors (three runs), to and from their contiguous equivalents. */
static void stream_runs(void)
{
    const int m = 1 << 20;
    MPI_Datatype v, st, c2, flat_st;
    MPI_Type_vector(m, 1, 2, MPI_DOUBLE, &v);
    int lens[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, v};
    MPI_Type_create_struct(2, lens, disp, types, &st);
    MPI_Type_commit(&st);
    MPI_Type_contiguous(2, v, &c2);
    MPI_Type_commit(&c2);
    int flens[2] = {1, m};
    MPI_Datatype ftypes[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, flens, disp, ftypes, &flat_st);
    MPI_Type_commit(&flat_st);
    /* the vector's memory: 2m doubles after 8 bytes for the int; the contiguous type's: 4m - 1 */
    size_t words = 4 * (size_t)m + 1;
    double *mem = mtest_calloc(words, sizeof(double));
    double *flat = mtest_calloc(2 * (size_t)m + 1, sizeof(double));
    if (rank == 0) {
        int *head = (int *)mem;
        *head = 12345;
        for (size_t i = 0; i < (size_t)m; i++)
            mem[1 + 2 * i] = dval(i);
        MPI_Send(mem, 1, st, 1, 20, MPI_COMM_WORLD);
        memset(mem, 0, words * sizeof(double));
        MPI_Recv(mem, 1, st, 1, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        size_t bad = *head != 12346;
        for (size_t i = 0; i < (size_t)m; i++)
            bad += mem[1 + 2 * i] != dval(i) * 2 || mem[2 + 2 * i] != 0.0;
        MTEST_CHECK(bad == 0, "struct of an int and a vector unpacked: %zu wrong", bad);
        /* two vectors, the second starting where the first ends */
        for (size_t i = 0; i < words; i++)
            mem[i] = two_vectors_data(i, (size_t)m) ? dval(i) : -1.0;
        MPI_Send(mem, 1, c2, 1, 22, MPI_COMM_WORLD);
        memset(mem, 0, words * sizeof(double));
        MPI_Recv(mem, 1, c2, 1, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = 0;
        for (size_t i = 0; i + 1 < words; i++) {
            bad += mem[i] != (two_vectors_data(i, (size_t)m) ? dval(i) + 1.0 : 0.0);
        }
        MTEST_CHECK(bad == 0, "contiguous of two vectors unpacked: %zu wrong", bad);
    } else {
        int *head = (int *)flat;
        MPI_Recv(flat, 1, flat_st, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        size_t bad = *head != 12345;
        for (size_t i = 0; i < (size_t)m; i++) {
            bad += flat[1 + i] != dval(i);
            flat[1 + i] *= 2;
        }
        MTEST_CHECK(bad == 0, "struct of an int and a vector packed: %zu wrong", bad);
        *head += 1;
        MPI_Send(flat, 1, flat_st, 0, 21, MPI_COMM_WORLD);
        MPI_Recv(flat, 2 * m, MPI_DOUBLE, 0, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        bad = 0;
        for (size_t k = 0; k < 2 * (size_t)m; k++) {
            size_t i = k < (size_t)m ? 2 * k : 2 * k - 1; /* the second vector starts at 2m - 1 */
            bad += flat[k] != dval(i);
            flat[k] += 1.0;
        }
        MTEST_CHECK(bad == 0, "contiguous of two vectors packed: %zu wrong", bad);
        MPI_Send(flat, 2 * m, MPI_DOUBLE, 0, 23, MPI_COMM_WORLD);
    }
    free(mem);
    free(flat);
    MPI_Type_free(&flat_st);
    MPI_Type_free(&c2);
    MPI_Type_free(&st);
    MPI_Type_free(&v);
}

/* MPI_Pack after an int and MPI_Unpack back; MPI_Pack_external against big-endian doubles. */
static void pack_calls(void)
{
    const int n = 100000;
    MPI_Datatype v;
    MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_commit(&v);
    double *mem = mtest_calloc(2 * (size_t)n, sizeof(double));
    for (int i = 0; i < n; i++) {
        mem[2 * i] = dval((size_t)i);
        mem[2 * i + 1] = -1.0;
    }
    int size, pos = 0, head = 77;
    MPI_Pack_size(1, v, MPI_COMM_SELF, &size);
    char *buf = mtest_calloc((size_t)size + 64, 1);
    MPI_Pack(&head, 1, MPI_INT, buf, size + 64, &pos, MPI_COMM_SELF);
    MPI_Pack(mem, 1, v, buf, size + 64, &pos, MPI_COMM_SELF);
    double *back = mtest_calloc(2 * (size_t)n, sizeof(double));
    int head2 = 0, pos2 = 0;
    MPI_Unpack(buf, size + 64, &pos2, &head2, 1, MPI_INT, MPI_COMM_SELF);
    MPI_Unpack(buf, size + 64, &pos2, back, 1, v, MPI_COMM_SELF);
    int bad = head2 != 77 || pos2 != pos;
    for (int i = 0; i < n; i++)
        bad += back[2 * i] != dval((size_t)i) || back[2 * i + 1] != 0.0;
    MTEST_CHECK(bad == 0, "MPI_Pack/MPI_Unpack of a vector after an int: %d wrong", bad);

    MPI_Aint xsize, xpos = 0, xpos2 = 0;
    MPI_Pack_external_size("external32", 1, v, &xsize);
    MTEST_CHECK(xsize == (MPI_Aint)n * 8, "external32 size %ld", (long)xsize);
    unsigned char *x = mtest_calloc((size_t)xsize, 1);
    MPI_Pack_external("external32", mem, 1, v, x, xsize, &xpos);
    bad = xpos != xsize;
    for (int i = 0; i < n && !bad; i++) {
        double d = dval((size_t)i);
        unsigned char b[8];
        memcpy(b, &d, 8);
        for (int k = 0; k < 8; k++)
            bad += x[8 * i + k] != b[7 - k];
    }
    MTEST_CHECK(bad == 0, "MPI_Pack_external of a vector: not big-endian doubles");
    memset(back, 0, 2 * (size_t)n * sizeof(double));
    MPI_Unpack_external("external32", x, xsize, &xpos2, back, 1, v);
    bad = 0;
    for (int i = 0; i < n; i++)
        bad += back[2 * i] != dval((size_t)i) || back[2 * i + 1] != 0.0;
    MTEST_CHECK(bad == 0, "MPI_Unpack_external of a vector: %d wrong", bad);
    free(x);
    free(back);
    free(buf);
    free(mem);
    MPI_Type_free(&v);
}

/* MPI_Bcast of two items of a vector of 2^18 doubles resized to continue its stride, and
 * MPI_Gather of a struct of an int and a vector into contiguous equivalents. */
static void collectives(void)
{
    const int m = 1 << 18;
    MPI_Datatype v, r, st, flat_st;
    MPI_Type_vector(m, 1, 2, MPI_DOUBLE, &v);
    MPI_Type_create_resized(v, 0, (MPI_Aint)m * 16, &r);
    MPI_Type_commit(&r);
    double *mem = mtest_calloc(4 * (size_t)m, sizeof(double));
    for (size_t i = 0; i < 4 * (size_t)m; i++)
        mem[i] = rank == 0 && i % 2 == 0 ? dval(i) : 0.0;
    MPI_Bcast(mem, 2, r, 0, MPI_COMM_WORLD);
    size_t bad = 0;
    for (size_t i = 0; i < 4 * (size_t)m; i++)
        bad += mem[i] != (i % 2 == 0 ? dval(i) : 0.0);
    MTEST_CHECK(bad == 0, "MPI_Bcast of a resized vector: %zu wrong", bad);

    int lens[2] = {1, 1}, flens[2] = {1, m};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, v}, ftypes[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, lens, disp, types, &st);
    MPI_Type_commit(&st);
    MPI_Type_create_struct(2, flens, disp, ftypes, &flat_st);
    MPI_Type_commit(&flat_st);
    int *head = (int *)mem;
    memset(mem, 0, 4 * (size_t)m * sizeof(double));
    *head = 100 + rank;
    for (size_t i = 0; i < (size_t)m; i++)
        mem[1 + 2 * i] = dval(i) + rank;
    MPI_Aint lb, fext;
    MPI_Type_get_extent(flat_st, &lb, &fext);
    char *all = rank == 0 ? mtest_calloc(2, (size_t)fext) : NULL;
    MPI_Gather(mem, 1, st, all, 1, flat_st, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        bad = 0;
        for (int p = 0; p < 2; p++) {
            char *item = all + (size_t)p * (size_t)fext;
            int h;
            memcpy(&h, item, sizeof(int));
            bad += h != 100 + p;
            for (size_t i = 0; i < (size_t)m; i++) {
                double d;
                memcpy(&d, item + 8 + 8 * i, 8);
                bad += d != dval(i) + p;
            }
        }
        MTEST_CHECK(bad == 0, "MPI_Gather of a struct of an int and a vector: %zu wrong", bad);
        free(all);
    }
    free(mem);
    MPI_Type_free(&flat_st);
    MPI_Type_free(&st);
    MPI_Type_free(&r);
    MPI_Type_free(&v);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    rss0 = maxrss_kib();
    huge_commits();
    MPI_Barrier(MPI_COMM_WORLD);
    stream_vector();
    stream_runs();
    if (mtest_is_manifold()) {
        /* the messages above streamed: none made a temporary copy of itself (the MPI_T
         * variable's high-water mark, in bytes) */
        unsigned long long tmax = mtest_pvar_highwater("dtype_temp_max");
        MTEST_CHECK(tmax < (1ull << 20), "a streamed message made a temporary of %llu bytes", tmax);
    }
    pack_calls();
    collectives();
    return mtest_finalize(0);
}
