/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deeply nested datatypes. Chains of 1024 types, each built on the one before (contiguous of
 * one item; a struct of the previous type and an empty block; a resized type, with a one-block
 * vector every 512 levels), are committed and used at their deepest: a message to the other
 * process and back (data checked), a partial receive with MPI_Get_elements,
 * MPI_Pack_external and MPI_Unpack_external, MPI_Bcast, and on Manifold MPI_Allreduce with
 * MPI_SUM (the testlist also runs it with the collectives' signature check on); inner types are
 * freed first, the outermost last. On Manifold, building on a type 1024 levels deep is refused
 * with MPI_ERR_TYPE by every constructor, where a chain of about 35,000 levels used to
 * overflow the stack in MPI_Type_commit.
 *
 * Also: 1000 contiguous(1) wrappers over an uncommitted type of 1024 irregular blocks commit
 * to the same layout as the type itself; a struct's extent is rounded to the alignment of a
 * double buried 500 levels down, and an empty block's type does not count for it.
 * Two processes.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define DEPTH 1024 /* Manifold's MF_DTYPE_DEPTH_MAX */

static int rank;

/* Level i of chain `kind` over prev. */
static int build(int kind, int i, MPI_Datatype prev, MPI_Datatype *t)
{
    int bl[2] = {1, 0};
    MPI_Aint ds[2] = {0, 64};
    MPI_Datatype ty[2] = {prev, MPI_DOUBLE};
    switch (kind) {
    case 0: return MPI_Type_contiguous(1, prev, t);
    case 1: return MPI_Type_create_struct(2, bl, ds, ty, t);
    default:
        /* a vector of two one-item blocks over a resized item (so the size stays 4 bytes x 2)
         * every 512 levels, resized types in between */
        if (i % 512 == 0)
            return MPI_Type_vector(1, 1, 1, prev, t);
        return MPI_Type_create_resized(prev, 0, 8, t);
    }
}

/* Use the committed type at the top of a chain of 2 ints per item (MPI_INT at the bottom,
 * resized levels keep one int per 8 bytes). */
static int use_deep(MPI_Datatype top, int kind)
{
    int errs = 0, peer = rank ^ 1;
    MPI_Aint lb, ext;
    MPI_Type_get_extent(top, &lb, &ext);
    int stride = (int)(ext / (MPI_Aint)sizeof(int)); /* ints per item in memory */
    int n = 4 * stride;
    int *out = calloc((size_t)n, sizeof(int)), *in = calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++)
        out[i] = 1000 * rank + i;
    MPI_Sendrecv(out, 4, top, peer, kind, in, 4, top, peer, kind, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    for (int k = 0; k < 4; k++)
        errs += !MTEST_CHECK(in[k * stride] == 1000 * peer + k * stride,
                             "chain %d: item %d received %d, expected %d", kind, k, in[k * stride],
                             1000 * peer + k * stride);

    /* three ints into four items: MPI_Get_elements counts the basic elements */
    MPI_Status st;
    int three[3] = {7, 8, 9}, count = -1, elems = -1;
    memset(in, 0, (size_t)n * sizeof(int));
    MPI_Sendrecv(three, 3, MPI_INT, peer, 10 + kind, in, 4, top, peer, 10 + kind, MPI_COMM_WORLD,
                 &st);
    MPI_Get_count(&st, top, &count);
    MPI_Get_elements(&st, top, &elems);
    errs += !MTEST_CHECK(count == 3 && elems == 3, "chain %d: count %d elements %d, expected 3 3",
                         kind, count, elems);
    errs += !MTEST_CHECK(in[2 * stride] == 9, "chain %d: third int %d", kind, in[2 * stride]);

    /* external32 and back */
    char packed[64];
    MPI_Aint pos = 0;
    MPI_Pack_external("external32", out, 4, top, packed, sizeof(packed), &pos);
    errs += !MTEST_CHECK(pos == 16, "chain %d: external32 size %ld", kind, (long)pos);
    errs += !MTEST_CHECK(packed[3] == (char)(1000 * rank % 256) &&
                             packed[2] == (char)(1000 * rank / 256),
                         "chain %d: external32 bytes are not the big-endian ints", kind);
    memset(in, 0, (size_t)n * sizeof(int));
    pos = 0;
    MPI_Unpack_external("external32", packed, sizeof(packed), &pos, in, 4, top);
    errs += !MTEST_CHECK(in[3 * stride] == out[3 * stride], "chain %d: unpacked %d", kind,
                         in[3 * stride]);

    /* collectives */
    memcpy(in, out, (size_t)n * sizeof(int));
    MPI_Bcast(in, 4, top, 1, MPI_COMM_WORLD);
    errs += !MTEST_CHECK(in[stride] == 1000 + stride, "chain %d: bcast %d", kind, in[stride]);
    if (mtest_is_manifold()) {
        /* (a predefined operation on a derived type of one basic type: MPICH 5.0.2 refuses
         * these) */
        memset(in, 0, (size_t)n * sizeof(int));
        MPI_Allreduce(out, in, 4, top, MPI_SUM, MPI_COMM_WORLD);
        errs += !MTEST_CHECK(in[2 * stride] == 1000 + 2 * 2 * stride, "chain %d: allreduce %d",
                             kind, in[2 * stride]);
    }
    free(out);
    free(in);
    return errs;
}

static int chain(int kind)
{
    int errs = 0;
    MPI_Datatype *t = calloc(DEPTH + 1, sizeof(MPI_Datatype));
    t[0] = MPI_INT;
    for (int i = 1; i <= DEPTH; i++) {
        int rc = build(kind, i, t[i - 1], &t[i]);
        if (!MTEST_CHECK(rc == MPI_SUCCESS, "chain %d: level %d not built", kind, i)) {
            for (int j = i - 1; j >= 1; j--)
                MPI_Type_free(&t[j]);
            free(t);
            return 1;
        }
    }
    MPI_Type_commit(&t[DEPTH]);
    int size;
    MPI_Type_size(t[DEPTH], &size);
    errs += !MTEST_CHECK(size == 4, "chain %d: size %d", kind, size);
    errs += use_deep(t[DEPTH], kind);

    if (mtest_is_manifold()) {
        /* one level more is refused by every constructor, naming the reason */
        MPI_Datatype more = MPI_DATATYPE_NULL, top = t[DEPTH];
        int bl = 1, sizes[1] = {4}, subsizes[1] = {2}, starts[1] = {1};
        MPI_Aint d = 0;
        const char *names[6] = {"MPI_Type_contiguous",    "MPI_Type_vector",
                                "MPI_Type_create_struct", "MPI_Type_create_resized",
                                "MPI_Type_dup",           "MPI_Type_create_subarray"};
        for (int k = 0; k < 6; k++) {
            int rc = k == 0   ? MPI_Type_contiguous(2, top, &more)
                     : k == 1 ? MPI_Type_vector(2, 1, 3, top, &more)
                     : k == 2 ? MPI_Type_create_struct(1, &bl, &d, &top, &more)
                     : k == 3 ? MPI_Type_create_resized(top, 0, 64, &more)
                     : k == 4 ? MPI_Type_dup(top, &more)
                              : MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C,
                                                         top, &more);
            errs += !MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, names[k]);
            if (rc != MPI_SUCCESS) {
                char msg[MPI_MAX_ERROR_STRING];
                int len;
                MPI_Error_string(rc, msg, &len);
                errs += !MTEST_CHECK(strstr(msg, "1024 levels deep") != NULL,
                                     "%s: message '%s' does not give the depth", names[k], msg);
            } else {
                MPI_Type_free(&more);
            }
        }
    }

    /* inner types freed first: each stays alive while the one above refers to it */
    for (int i = 1; i < DEPTH; i++)
        MPI_Type_free(&t[i]);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t[DEPTH], &lb, &ext);
    errs += !MTEST_CHECK(ext == (kind == 2 ? 8 : 4) || kind == 1,
                         "chain %d: extent %ld after the inner types were freed", kind, (long)ext);
    MPI_Type_free(&t[DEPTH]);
    free(t);
    return errs;
}

/* 1000 contiguous(1) wrappers over an uncommitted hvector nest of 2^10 blocks: the same layout
 * as the nest committed on its own. */
static int wrappers(void)
{
    enum { K = 10, L = 1000 };
    int errs = 0;
    MPI_Datatype t[K + L + 1];
    t[0] = MPI_INT;
    for (int i = 1; i <= K; i++)
        MPI_Type_create_hvector(2, 1, (MPI_Aint)12 << i, t[i - 1], &t[i]);
    for (int i = K + 1; i <= K + L; i++)
        MPI_Type_contiguous(1, t[i - 1], &t[i]);
    MPI_Type_commit(&t[K + L]);
    MPI_Type_commit(&t[K]);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(t[K], &lb, &ext);
    size_t n = (size_t)ext / sizeof(int);
    int *src = calloc(n, sizeof(int)), *a = calloc(n, sizeof(int)), *b = calloc(n, sizeof(int));
    for (size_t i = 0; i < n; i++)
        src[i] = (int)i + 1;
    int pa = 0, pb = 0, psize;
    MPI_Pack_size(1, t[K], MPI_COMM_WORLD, &psize);
    char *ba = malloc((size_t)psize), *bb = malloc((size_t)psize);
    MPI_Pack(src, 1, t[K], ba, psize, &pa, MPI_COMM_WORLD);
    MPI_Pack(src, 1, t[K + L], bb, psize, &pb, MPI_COMM_WORLD);
    errs += !MTEST_CHECK(pa == pb && pa == 4 << K && memcmp(ba, bb, (size_t)pa) == 0,
                         "wrappers: packed %d and %d bytes, or different bytes", pa, pb);
    MPI_Sendrecv(src, 1, t[K + L], rank ^ 1, 30, a, 1, t[K + L], rank ^ 1, 30, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    pa = 0;
    MPI_Unpack(ba, psize, &pa, b, 1, t[K], MPI_COMM_WORLD);
    errs += !MTEST_CHECK(memcmp(a, b, n * sizeof(int)) == 0,
                         "wrappers: the received layout differs from the nest's");
    for (int i = K + L; i >= 1; i--)
        MPI_Type_free(&t[i]);
    free(src);
    free(a);
    free(b);
    free(ba);
    free(bb);
    return errs;
}

/* A struct's extent rounds to its most aligned entry's alignment, however deep. */
static int alignment(void)
{
    enum { L = 500 };
    int errs = 0, bl[2] = {1, 1};
    MPI_Aint ds[2] = {0, 8}, lb, ext;
    MPI_Datatype t[L + 1], ty[2], s;
    t[0] = MPI_DOUBLE;
    for (int i = 1; i <= L; i++)
        MPI_Type_contiguous(1, t[i - 1], &t[i]);
    ty[0] = t[L];
    ty[1] = MPI_CHAR;
    MPI_Type_create_struct(2, bl, ds, ty, &s);
    MPI_Type_get_extent(s, &lb, &ext);
    errs +=
        !MTEST_CHECK(ext == 16, "struct {deep double, char}: extent %ld, expected 16", (long)ext);
    MPI_Type_free(&s);
    bl[0] = 1;
    bl[1] = 0;
    ty[0] = MPI_CHAR;
    ty[1] = t[L];
    ds[1] = 8;
    MPI_Type_create_struct(2, bl, ds, ty, &s);
    MPI_Type_get_extent(s, &lb, &ext);
    errs += !MTEST_CHECK(ext == 1, "struct {char, empty deep double}: extent %ld, expected 1",
                         (long)ext);
    MPI_Type_free(&s);
    for (int i = L; i >= 1; i--)
        MPI_Type_free(&t[i]);
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int kind = 0; kind < 3; kind++)
        errs += chain(kind);
    errs += wrappers();
    errs += alignment();
    return mtest_finalize(errs);
}
