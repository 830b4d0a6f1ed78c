/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the pack engine: random nested datatypes (every node shape, negative strides and
 * displacements, resized extents, holes, zero-length blocks, subarrays and darrays) are packed
 * and unpacked by the engine, whole and in random byte ranges, and compared with a reference
 * that walks the tree leaf by leaf; element counts at every leaf boundary; external32 round
 * trips and byte order.
 */
#include "unit.h"

#include "core.h"

#include <stdlib.h>
#include <string.h>

static unsigned long long rng = 88172645463325252ull;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n == 0 ? 0 : (unsigned)(rng % n);
}

static const MPI_Datatype leaves[] = {MPI_INT,   MPI_DOUBLE,     MPI_CHAR,
                                      MPI_SHORT, MPI_DOUBLE_INT, MPI_SHORT_INT};

static MPI_Datatype make_type(int depth);

static MPI_Datatype make_child(int depth)
{
    return depth <= 0 || rnd(3) == 0 ? leaves[rnd(5)] : make_type(depth - 1);
}

/* A random derived type; the caller owns one reference. */
static MPI_Datatype make_type(int depth)
{
    mf_dtype_t *d = NULL;
    MPI_Datatype c = make_child(depth);
    mf_dtype_props_t cp = {0};
    mf_dtype_props(c, &cp);
    int shape = (int)rnd(6);
    mf_status_t st = MF_OK;
    if (shape == 0) {
        st = mf_dtype_create_vector(rnd(4), rnd(4),
                                    ((MPI_Aint)rnd(9) - 4) * cp.extent + (MPI_Aint)rnd(3), c,
                                    MPI_COMBINER_HVECTOR, &d);
    } else if (shape == 1 || shape == 2) {
        MPI_Count n = rnd(4), bl[4];
        MPI_Aint disp[4];
        MPI_Datatype kids[4];
        for (int i = 0; i < n; i++) {
            bl[i] = rnd(3);
            disp[i] = ((MPI_Aint)rnd(13) - 6) * 4;
            kids[i] = shape == 2 ? make_child(depth - 1) : c;
        }
        st = mf_dtype_create_list(n, bl, disp, kids, shape == 1,
                                  shape == 2 ? MPI_COMBINER_STRUCT : MPI_COMBINER_HINDEXED, &d);
        for (int i = 0; shape == 2 && i < n; i++)
            mf_dtype_release(kids[i]);
    } else if (shape == 3) {
        st = mf_dtype_create_resized(c, (MPI_Aint)rnd(9) - 4, (MPI_Aint)rnd(40) + 1,
                                     MPI_COMBINER_RESIZED, &d);
    } else if (shape == 4) {
        MPI_Count sizes[2] = {rnd(3) + 1, rnd(4) + 1}, sub[2], start[2];
        for (int i = 0; i < 2; i++) {
            sub[i] = rnd((unsigned)sizes[i]) + 1;
            start[i] = rnd((unsigned)(sizes[i] - sub[i] + 1));
        }
        st = mf_dtype_create_subarray(2, sizes, sub, start,
                                      rnd(2) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, c, &d);
    } else {
        MPI_Count g[2] = {rnd(6) + 1, rnd(6) + 1};
        int dist[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC};
        int darg[2] = {MPI_DISTRIBUTE_DFLT_DARG, (int)rnd(2) + 1}, ps[2] = {2, 2};
        st = mf_dtype_create_darray(4, (int)rnd(4), 2, g, dist, darg, ps, MPI_ORDER_C, c, &d);
    }
    mf_dtype_release(c);
    UNIT_CHECK(st == MF_OK, "constructor shape %d failed: %d", shape, (int)st);
    return d;
}

/* ---- the reference: one leaf at a time, no merging, no search ---------------------------- */

typedef struct ref {
    char *packed;
    MPI_Count pos;
    uintptr_t base;
    int unpack;
    MPI_Count *bounds; /* packed offset after each leaf */
    int *nbasic;       /* and its basic elements */
    MPI_Count nbounds;
} ref_t;

/* Copy `len` bytes at `off` between memory and the packed form. */
static void ref_copy(ref_t *r, MPI_Aint off, size_t len)
{
    char *mem = (char *)(r->base + (uintptr_t)off);
    if (r->packed != NULL && r->unpack)
        memcpy(mem, r->packed + r->pos, len);
    else if (r->packed != NULL)
        memcpy(r->packed + r->pos, mem, len);
    r->pos += (MPI_Count)len;
}

static void ref_walk(MPI_Datatype t, MPI_Aint off, ref_t *r)
{
    mf_dtype_t *d = mf_dtype_get(t);
    if (d == NULL) {
        const mf_dtype_info_t *info = mf_dtype_predefined(t);
        if (info->size == info->extent) {
            ref_copy(r, off, (size_t)info->size);
        } else {
            /* a pair with padding packs its parts: the first, then the int at its alignment */
            size_t first = (size_t)info->size - sizeof(int);
            ref_copy(r, off, first);
            ref_copy(r, off + (MPI_Aint)((first + sizeof(int) - 1) / sizeof(int) * sizeof(int)),
                     sizeof(int));
        }
        if (r->bounds != NULL) {
            r->nbasic[r->nbounds] = info->nbasic;
            r->bounds[r->nbounds++] = r->pos;
        }
        return;
    }
    MPI_Count nb = d->node == MF_DT_NODE_RESIZED ? 1 : d->nblocks;
    for (MPI_Count i = 0; i < nb; i++) {
        MPI_Datatype c = d->children[d->node == MF_DT_NODE_LIST ? i : 0];
        MPI_Count b = d->node == MF_DT_NODE_LIST     ? d->blocklens[i]
                      : d->node == MF_DT_NODE_VECTOR ? d->blocklen
                                                     : 1;
        MPI_Aint disp = d->node == MF_DT_NODE_LIST     ? d->disps[i]
                        : d->node == MF_DT_NODE_VECTOR ? (MPI_Aint)i * d->stride
                                                       : 0;
        mf_dtype_props_t cp = {0};
        mf_dtype_props(c, &cp);
        for (MPI_Count j = 0; j < b; j++)
            ref_walk(c, off + disp + (MPI_Aint)j * cp.extent, r);
    }
}

static void check_type(MPI_Datatype t, int iter)
{
    mf_dtype_props_t p = {0};
    mf_dtype_props(t, &p);
    MPI_Count count = rnd(3) + 1;
    /* the memory the items touch */
    MPI_Aint lo = 0, hi = 0;
    for (MPI_Count i = 0; i < count && p.psize > 0; i++) {
        MPI_Aint a = (MPI_Aint)i * p.extent + p.true_lb, b = (MPI_Aint)i * p.extent + p.true_ub;
        lo = i == 0 || a < lo ? a : lo;
        hi = i == 0 || b > hi ? b : hi;
    }
    size_t span = (size_t)(hi - lo) + 1, bytes = (size_t)(count * p.psize);
    char *mem = malloc(span), *mem2 = malloc(span), *mem3 = malloc(span);
    char *want = malloc(bytes + 1), *got = malloc(bytes + 1);
    for (size_t i = 0; i < span; i++)
        mem[i] = (char)(i * 7 + 3);
    uintptr_t base = (uintptr_t)mem - (uintptr_t)lo;
    ref_t r = {want, 0, base, 0, NULL, NULL, 0};
    for (MPI_Count i = 0; i < count; i++)
        ref_walk(t, (MPI_Aint)i * p.extent, &r);
    UNIT_CHECK(r.pos == (MPI_Count)bytes, "type %d: reference packed %lld bytes, psize says %lld",
               iter, (long long)r.pos, (long long)bytes);
    UNIT_CHECK(mf_dtype_commit(t) == MF_OK, "type %d: commit failed", iter);
    mf_dtype_pack(t, count, (void *)base, got, 0, (MPI_Count)bytes);
    UNIT_CHECK(memcmp(want, got, bytes) == 0, "type %d: whole pack differs", iter);
    /* random ranges, as a pipelined send would pack them */
    for (int k = 0; k < 4 && bytes > 0; k++) {
        MPI_Count s = rnd((unsigned)bytes), e = s + rnd((unsigned)(bytes - s)) + 1;
        memset(got, 0, bytes);
        mf_dtype_pack(t, count, (void *)base, got, s, e);
        UNIT_CHECK(memcmp(want + s, got, (size_t)(e - s)) == 0,
                   "type %d: pack of [%lld, %lld) differs", iter, (long long)s, (long long)e);
    }
    /* unpack in two pieces over a zeroed buffer equals the reference's unpack */
    memset(mem2, 0, span);
    memset(mem3, 0, span);
    MPI_Count cut = bytes > 0 ? rnd((unsigned)bytes) : 0;
    uintptr_t base2 = (uintptr_t)mem2 - (uintptr_t)lo, base3 = (uintptr_t)mem3 - (uintptr_t)lo;
    mf_dtype_unpack(t, count, (void *)base2, want, 0, cut);
    mf_dtype_unpack(t, count, (void *)base2, want + cut, cut, (MPI_Count)bytes);
    ref_t u = {want, 0, base3, 1, NULL, NULL, 0};
    for (MPI_Count i = 0; i < count; i++)
        ref_walk(t, (MPI_Aint)i * p.extent, &u);
    UNIT_CHECK(memcmp(mem2, mem3, span) == 0, "type %d: unpack differs", iter);
    /* element counts: exact at each leaf boundary, undefined one byte short of a basic leaf */
    MPI_Count *bounds = malloc(sizeof(MPI_Count) * (size_t)(p.nelems + 1));
    int *nbasic = malloc(sizeof(int) * (size_t)(p.nelems + 1));
    ref_t e = {NULL, 0, 0, 0, bounds, nbasic, 0};
    ref_walk(t, 0, &e);
    MPI_Count elems = 0;
    for (MPI_Count i = 0; i < e.nbounds; i++) {
        MPI_Count prev = i > 0 ? bounds[i - 1] : 0;
        MPI_Count got_e = mf_dtype_elements(t, bounds[i]);
        elems += nbasic[i]; /* a pair counts two */
        UNIT_CHECK(got_e == elems, "type %d: %lld bytes hold %lld elements, engine says %lld", iter,
                   (long long)bounds[i], (long long)elems, (long long)got_e);
        if (bounds[i] - prev > 1 && nbasic[i] == 1)
            UNIT_CHECK(mf_dtype_elements(t, bounds[i] - 1) == -1,
                       "type %d: a partial element counted", iter);
    }
    free(bounds);
    free(nbasic);
    free(mem);
    free(mem2);
    free(mem3);
    free(want);
    free(got);
}

/* ---- types of many segments: kept as runs ---------------------------------------------- */

/* A random type of more than MF_DTYPE_SEGS_LISTED segments built from regular parts (vectors,
 * hvectors, subarray rows) nested in contiguous, vector, resized, struct and hindexed types,
 * with children committed or not, so commit takes its closed forms, keeps one run or a few, or
 * lists the segments; the caller owns one reference. */
static MPI_Datatype make_big(int depth)
{
    mf_dtype_t *d = NULL;
    mf_status_t st = MF_OK;
    int shape = depth <= 0 ? (int)rnd(3) : 3 + (int)rnd(6);
    if (shape <= 2) {
        MPI_Datatype leaf = leaves[rnd(6)]; /* the pairs make lists of short runs */
        mf_dtype_props_t lp = {0};
        mf_dtype_props(leaf, &lp);
        MPI_Count n = 65 + rnd(200), bl = 1 + rnd(2);
        if (shape == 2) {
            MPI_Count sizes[2] = {n + 3, bl + 2 + rnd(3)}, sub[2] = {n, bl}, start[2] = {2, 1};
            st = mf_dtype_create_subarray(2, sizes, sub, start, MPI_ORDER_C, leaf, &d);
        } else {
            MPI_Aint stride = (MPI_Aint)(bl + 1 + rnd(3)) * lp.extent + (shape == 1 ? 1 : 0);
            st = mf_dtype_create_vector(n, bl, rnd(4) == 0 ? -stride : stride, leaf,
                                        MPI_COMBINER_HVECTOR, &d);
        }
        UNIT_CHECK(st == MF_OK, "big leaf shape %d failed", shape);
        return d;
    }
    MPI_Datatype c = make_big(depth - 1);
    if (rnd(2))
        mf_dtype_commit((mf_dtype_t *)c);
    mf_dtype_props_t cp = {0};
    mf_dtype_props(c, &cp);
    if (shape == 3) { /* contiguous: the items touch or not */
        st = mf_dtype_create_vector(1, 1 + rnd(3), 0, c, MPI_COMBINER_CONTIGUOUS, &d);
    } else if (shape == 4) { /* resized to continue the stride, or anything */
        mf_dtype_t *cd = (mf_dtype_t *)c;
        MPI_Aint ext = cp.extent + (MPI_Aint)rnd(24);
        if (cd->node == MF_DT_NODE_VECTOR && rnd(2))
            ext = cd->nblocks * cd->stride;
        st = mf_dtype_create_resized(c, 0, ext > 0 ? ext : cp.extent, MPI_COMBINER_RESIZED, &d);
    } else if (shape == 5) { /* a vector of it */
        st = mf_dtype_create_vector(2 + rnd(2), 1, cp.extent + (MPI_Aint)rnd(3) * 8, c,
                                    MPI_COMBINER_HVECTOR, &d);
    } else if (shape == 6) { /* a struct of an int and it */
        MPI_Count bl[2] = {1, 1};
        MPI_Aint disp[2] = {cp.true_lb - 8 - (MPI_Aint)rnd(2) * 4, 0};
        MPI_Datatype kids[2] = {MPI_INT, c};
        if (rnd(2)) {
            disp[0] = cp.true_ub + (MPI_Aint)rnd(2) * 4;
        }
        st = mf_dtype_create_list(2, bl, disp, kids, 0, MPI_COMBINER_STRUCT, &d);
    } else if (shape == 7) { /* hindexed: blocks of it, some touching */
        MPI_Count bl[3] = {1, 1 + rnd(2), 1};
        MPI_Aint disp[3] = {0, cp.extent, cp.extent * (bl[1] + 1) + (MPI_Aint)rnd(2) * 16};
        st = mf_dtype_create_list(3, bl, disp, &c, 1, MPI_COMBINER_HINDEXED, &d);
    } else { /* a subarray of it */
        MPI_Count sizes[2] = {3, 4}, sub[2] = {2, 1 + rnd(3)}, start[2] = {1, 0};
        st = mf_dtype_create_subarray(2, sizes, sub, start, MPI_ORDER_C, c, &d);
    }
    mf_dtype_release(c);
    UNIT_CHECK(st == MF_OK, "big shape %d failed: %d", shape, (int)st);
    return d;
}

/* What commit keeps for regular layouts of many segments: one run, no list. */
static void check_runs_kept(void)
{
    mf_dtype_t *v, *r, *vv, *c, *s, *sub;
    mf_dtype_create_vector(1000, 1, 16, MPI_DOUBLE, MPI_COMBINER_HVECTOR, &v);
    mf_dtype_commit(v);
    UNIT_CHECK(v->runs != NULL && v->nruns == 1 && v->nsegs == 1000 && v->vlen == 8 &&
                   v->vstride == 16,
               "vector of 1000 doubles: %lld runs, %lld segments", (long long)v->nruns,
               (long long)v->nsegs);
    /* resized to continue the stride, then 7 of them, and a vector of 5 of those */
    mf_dtype_create_resized(v, 0, 16000, MPI_COMBINER_RESIZED, &r);
    mf_dtype_create_vector(1, 7, 0, r, MPI_COMBINER_CONTIGUOUS, &c);
    mf_dtype_create_vector(5, 1, 7 * 16000, c, MPI_COMBINER_HVECTOR, &vv);
    mf_dtype_commit(vv);
    UNIT_CHECK(vv->runs != NULL && vv->nruns == 1 && vv->nsegs == 35000 && vv->vstride == 16,
               "nested regular vectors: %lld runs", (long long)vv->nruns);
    /* a contiguous type of the plain vector: its items touch, three runs (a merged segment) */
    mf_dtype_t *c2;
    mf_dtype_create_vector(1, 2, 0, v, MPI_COMBINER_CONTIGUOUS, &c2);
    mf_dtype_commit(c2);
    UNIT_CHECK(c2->runs != NULL && c2->nruns == 3 && c2->nsegs == 1999 && c2->vlen == 0,
               "contiguous of a vector: %lld runs, %lld segments", (long long)c2->nruns,
               (long long)c2->nsegs);
    /* a struct of an int and the vector: two runs */
    MPI_Count bl[2] = {1, 1};
    MPI_Aint disp[2] = {-8, 0};
    MPI_Datatype kids[2] = {MPI_INT, v};
    mf_dtype_create_list(2, bl, disp, kids, 0, MPI_COMBINER_STRUCT, &s);
    mf_dtype_commit(s);
    UNIT_CHECK(s->runs != NULL && s->nruns == 2 && s->nsegs == 1001,
               "struct of an int and a vector: %lld runs", (long long)s->nruns);
    /* subarray rows: one run */
    MPI_Count sizes[2] = {500, 10}, subs[2] = {400, 3}, starts[2] = {50, 2};
    mf_dtype_create_subarray(2, sizes, subs, starts, MPI_ORDER_C, MPI_INT, &sub);
    mf_dtype_commit(sub);
    UNIT_CHECK(sub->runs != NULL && sub->nruns == 1 && sub->vlen == 12 && sub->vstride == 40 &&
                   sub->segs[0].off == 50 * 40 + 8,
               "subarray rows: %lld runs", (long long)sub->nruns);
    mf_dtype_release(v);
    mf_dtype_release(r);
    mf_dtype_release(c);
    mf_dtype_release(vv);
    mf_dtype_release(c2);
    mf_dtype_release(s);
    mf_dtype_release(sub);
}

static void check_contiguous(void)
{
    mf_dtype_t *v, *r;
    /* vector(3, 2, 2) of int is one run of 6 ints */
    UNIT_CHECK(mf_dtype_create_vector(3, 2, 8, MPI_INT, MPI_COMBINER_HVECTOR, &v) == MF_OK, "x");
    mf_dtype_commit(v);
    MPI_Aint off = -1;
    UNIT_CHECK(v->nsegs == 1 && mf_dtype_contiguous(v, 5, &off) && off == 0,
               "dense vector: %lld segments", (long long)v->nsegs);
    /* a resized int with a hole after it: one item is contiguous, two are not */
    UNIT_CHECK(mf_dtype_create_resized(MPI_INT, -4, 12, MPI_COMBINER_RESIZED, &r) == MF_OK, "x");
    mf_dtype_commit(r);
    UNIT_CHECK(mf_dtype_contiguous(r, 1, &off) && off == 0 && !mf_dtype_contiguous(r, 2, &off),
               "resized int: contiguity");
    UNIT_CHECK(r->lb == -4 && r->extent == 12 && r->true_lb == 0 && r->true_ub == 4,
               "resized bounds %ld %ld %ld %ld", (long)r->lb, (long)r->extent, (long)r->true_lb,
               (long)r->true_ub);
    mf_dtype_release(v);
    mf_dtype_release(r);
}

static void check_external32(void)
{
    struct {
        int i;
        double d;
        long l;
        short s;
    } in = {0x01020304, 1.5, -2, 0x0506}, out;
    MPI_Count bl[4] = {1, 1, 1, 1};
    MPI_Aint disp[4] = {0, 8, 16, 24};
    MPI_Datatype types[4] = {MPI_INT, MPI_DOUBLE, MPI_LONG, MPI_SHORT};
    mf_dtype_t *t;
    UNIT_CHECK(mf_dtype_create_list(4, bl, disp, types, 0, MPI_COMBINER_STRUCT, &t) == MF_OK, "x");
    UNIT_CHECK(t->extent == 32, "struct extent %ld (aligned to 8)", (long)t->extent);
    mf_dtype_commit(t);
    MPI_Count size;
    mf_dtype_external32_size(t, &size);
    UNIT_CHECK(size == 4 + 8 + 4 + 2, "external32 size %lld", (long long)size);
    unsigned char buf[18];
    UNIT_CHECK(mf_dtype_external32_pack(t, 1, &in, buf) == MF_OK, "pack failed");
    UNIT_CHECK(buf[0] == 1 && buf[3] == 4 && buf[4] == 0x3f && buf[5] == 0xf8 && buf[12] == 0xff &&
                   buf[15] == 0xfe && buf[16] == 5 && buf[17] == 6,
               "external32 bytes are not big-endian");
    memset(&out, 0, sizeof(out));
    UNIT_CHECK(mf_dtype_external32_unpack(t, 1, &out, buf) == MF_OK, "unpack failed");
    UNIT_CHECK(out.i == in.i && out.d == in.d && out.l == in.l && out.s == in.s,
               "external32 round trip");
    long big = 1L << 40;
    UNIT_CHECK(mf_dtype_external32_pack(MPI_LONG, 1, &big, buf) != MF_OK,
               "a long that does not fit 4 bytes converted silently");
    mf_dtype_release(t);
}

/* ---- the whole-message loops chosen at commit ---------------------------------------------- */

/* One item as byte blocks (offset, length) and its extent: every shape commit specialises
 * (regular runs of 1, 2, 4, 8, 16 and other block sizes, items that do not continue the
 * stride, 8- and 4-byte move lists with overlapping tails and padding, segment lists that
 * fit neither, dense items), with negative strides and offsets. */
typedef struct shape {
    const char *what;
    int n;
    MPI_Aint off[6];
    MPI_Count len[6];
    MPI_Aint extent;
} shape_t;

static const shape_t shapes[] = {
    {"1-byte run", 3, {0, 3, 6}, {1, 1, 1}, 9},
    {"2-byte run", 2, {0, 5}, {2, 2}, 10},
    {"4-byte items", 3, {0, 8, 16}, {4, 4, 4}, 28},
    {"8-byte negative stride", 3, {32, 16, 0}, {8, 8, 8}, 40},
    {"16-byte run", 2, {0, 24}, {16, 16}, 48},
    {"12-byte run", 3, {0, 20, 40}, {12, 12, 12}, 60},
    {"dense", 1, {0}, {24}, 24},
    {"one block, hole", 1, {4}, {8}, 16},
    {"moves 2x8", 2, {0, 16}, {8, 8}, 40},
    {"moves 4x8", 3, {0, 20, 40}, {16, 8, 8}, 56},
    {"moves 2x4", 2, {0, 8}, {4, 4}, 20},
    {"moves struct 4+12", 2, {0, 8}, {4, 12}, 32},
    {"moves struct 4+12, misaligned", 2, {3, 13}, {4, 12}, 40},
    {"8-byte run 16 apart", 1, {0}, {8}, 16},
    {"8-byte run 16 apart, misaligned", 1, {5}, {8}, 16},
    {"moves 7+8", 2, {0, 9}, {7, 8}, 24},
    {"moves 6+16", 2, {0, 8}, {6, 16}, 32},
    {"moves 30+4 padded", 2, {0, 40}, {30, 4}, 48},
    {"moves 24+4 padded", 2, {0, 32}, {24, 4}, 40},
    {"moves negative offsets", 2, {-24, -8}, {4, 12}, 32},
    {"segments, short pieces", 3, {0, 4, 9}, {2, 2, 3}, 16},
    {"segments, 7+4", 2, {0, 9}, {7, 4}, 16},
    {"segments, long piece", 2, {0, 48}, {40, 8}, 64},
    {"segments, too many moves", 5, {0, 10, 21, 33, 44}, {8, 8, 8, 8, 8}, 56},
};

/* hindexed bytes resized to the extent; `bottom`: displacements are absolute (from
 * MPI_BOTTOM) by adding `base` */
static mf_dtype_t *shape_type(const shape_t *sh, uintptr_t base, int bottom)
{
    MPI_Aint disp[6];
    MPI_Datatype byte = MPI_BYTE;
    for (int i = 0; i < sh->n; i++)
        disp[i] = sh->off[i] + (bottom ? (MPI_Aint)base : 0);
    mf_dtype_t *l, *r;
    UNIT_CHECK(mf_dtype_create_list(sh->n, sh->len, disp, &byte, 1, MPI_COMBINER_HINDEXED, &l) ==
                   MF_OK,
               "%s: hindexed", sh->what);
    UNIT_CHECK(mf_dtype_create_resized(l, l->lb, sh->extent, MPI_COMBINER_RESIZED, &r) == MF_OK,
               "%s: resized", sh->what);
    mf_dtype_release(l);
    UNIT_CHECK(mf_dtype_commit(r) == MF_OK, "%s: commit", sh->what);
    return r;
}

static void check_fast_paths(void)
{
    /* 15-19 and 33: the 16-byte-stride kernel's threshold and each remainder of its groups;
     * 7-9: the window's two-item loop from 8 items */
    static const MPI_Count counts[] = {0, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 18, 19, 33, 300};
    for (size_t k = 0; k < sizeof(shapes) / sizeof(shapes[0]); k++) {
        const shape_t *sh = &shapes[k];
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            MPI_Count count = counts[c], psize = 0;
            for (int i = 0; i < sh->n; i++)
                psize += sh->len[i];
            /* 64 bytes of margin before (negative offsets) and after the items */
            size_t span = (size_t)(count * sh->extent) + 128, bytes = (size_t)(count * psize);
            char *mem = malloc(span), *out = malloc(span), *want = malloc(span);
            char *packed = malloc(bytes + 1), *ref = malloc(bytes + 1);
            uintptr_t base = (uintptr_t)mem + 64, obase = (uintptr_t)out + 64;
            for (size_t i = 0; i < span; i++)
                mem[i] = (char)(i * 13 + 5);
            memset(want, 0x5a, span);
            char *r = ref;
            for (MPI_Count it = 0; it < count; it++) {
                for (int i = 0; i < sh->n; i++) {
                    size_t at = 64 + (size_t)(it * sh->extent + sh->off[i]);
                    memcpy(r, mem + at, (size_t)sh->len[i]);
                    memcpy(want + at, mem + at, (size_t)sh->len[i]);
                    r += sh->len[i];
                }
            }
            for (int bottom = 0; bottom < 2; bottom++) {
                mf_dtype_t *t = shape_type(sh, bottom ? base : 0, bottom);
                UNIT_CHECK(t->psize == psize, "%s: psize %lld", sh->what, (long long)t->psize);
                uintptr_t at = bottom ? 0 : base;
                memset(packed, 0, bytes + 1);
                mf_dtype_pack(t, count, (void *)at, packed, 0, (MPI_Count)bytes);
                UNIT_CHECK(memcmp(packed, ref, bytes) == 0, "%s: pack of %lld items%s differs",
                           sh->what, (long long)count, bottom ? " from MPI_BOTTOM" : "");
                if (bytes > 0) {
                    mf_dtype_pack_all(t, count, (void *)at, packed);
                    UNIT_CHECK(memcmp(packed, ref, bytes) == 0, "%s: pack_all differs", sh->what);
                }
                /* the copies the point-to-point calls inline (mf_dtype_copy_inline; as
                 * pack_all, for messages of at least one byte) */
                if (bytes > 0) {
                    memset(packed, 0, bytes + 1);
                    mf_dtype_copy_inline(t, count, at, packed, 0);
                    UNIT_CHECK(memcmp(packed, ref, bytes) == 0 && packed[bytes] == 0,
                               "%s: inline pack of %lld items%s differs", sh->what,
                               (long long)count, bottom ? " from MPI_BOTTOM" : "");
                    memset(out, 0x5a, span);
                    mf_dtype_copy_inline(t, count, bottom ? obase - base : obase, ref, 1);
                    UNIT_CHECK(memcmp(out, want, span) == 0,
                               "%s: inline unpack of %lld items%s differs", sh->what,
                               (long long)count, bottom ? " to MPI_BOTTOM" : "");
                }
                /* unpacking writes the type map and nothing else */
                memset(out, 0x5a, span);
                mf_dtype_t *u = bottom ? shape_type(sh, obase, 1) : t;
                mf_dtype_unpack(u, count, bottom ? NULL : (void *)obase, ref, 0, (MPI_Count)bytes);
                UNIT_CHECK(memcmp(out, want, span) == 0, "%s: unpack of %lld items%s differs",
                           sh->what, (long long)count, bottom ? " to MPI_BOTTOM" : "");
                if (u != t)
                    mf_dtype_release(u);
                mf_dtype_release(t);
            }
            free(mem);
            free(out);
            free(want);
            free(packed);
            free(ref);
        }
    }
}

/* The AVX2 kernel for 8-byte blocks 16 bytes apart, called directly at every block count and
 * alignment: a source buffer that ends where the last block ends (so a read past it is caught
 * under AddressSanitizer) and a packed buffer with a guard byte. */
static void check_pack8_s16(void)
{
#if defined(__x86_64__)
    if (!__builtin_cpu_supports("avx2"))
        return;
    for (MPI_Count nb = 4; nb <= 40; nb++) {
        for (size_t mis = 0; mis < 8; mis += 3) {
            size_t span = (size_t)nb * 16 - 8;
            char *mem = malloc(span + mis), *packed = malloc((size_t)nb * 8 + 1);
            for (size_t i = 0; i < span + mis; i++)
                mem[i] = (char)(i * 7 + 1);
            memset(packed, 0x5a, (size_t)nb * 8 + 1);
            mf_dtype_pack8_s16_avx2(mem + mis, packed, nb);
            for (MPI_Count b = 0; b < nb; b++)
                UNIT_CHECK(memcmp(packed + b * 8, mem + mis + b * 16, 8) == 0,
                           "pack8_s16: block %lld of %lld (offset %zu) differs", (long long)b,
                           (long long)nb, mis);
            UNIT_CHECK(packed[nb * 8] == 0x5a, "pack8_s16: wrote past %lld blocks", (long long)nb);
            free(mem);
            free(packed);
        }
    }
#endif
}

/* Temporaries start on a cache line (a transport's memcpy into them must not meet the
 * alignment penalties a 16-byte-aligned malloc block can), new or reused, small or large. */
static void check_temp_alignment(void)
{
    size_t sizes[] = {1, 8, 63, 64, 65, 1000, 4096, 4097, 5000, 70000, 300000};
    void *kept[sizeof(sizes) / sizeof(sizes[0])];
    for (int round = 0; round < 2; round++) { /* the second round reuses cached ones */
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            kept[i] = mf_dtype_temp_alloc(sizes[i]);
            UNIT_CHECK(kept[i] != NULL && (uintptr_t)kept[i] % 64 == 0,
                       "a temporary of %zu bytes at %p (round %d)", sizes[i], kept[i], round);
            if (kept[i] != NULL)
                memset(kept[i], 0xab, sizes[i]);
        }
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            mf_dtype_temp_free(kept[i]);
    }
}

/* The inline pop and push (mf_dtype_temp_alloc_small, mf_dtype_temp_free_fast) keep what the
 * out-of-line ones would: a freed temporary is the next one of its size, a list holds at most
 * MF_DT_SMALL_KEEP, and nothing above MANIFOLD_DT_TEMP_CACHE is kept (0: nothing at all). */
static void check_temp_inline(void)
{
    int saved = mf_params.dt_temp_cache;
    mf_params.dt_temp_cache = 256 * 1024;
    mf_dtype_temp_flush();
    char *a = mf_dtype_temp_alloc_small(100);
    UNIT_CHECK(a != NULL && (uintptr_t)a % 64 == 0, "a small temporary at %p", (void *)a);
    mf_dtype_temp_free_fast(a); /* the first push registers the thread, out of line */
    char *b = mf_dtype_temp_alloc_small(120);
    UNIT_CHECK(b == a, "the 128-byte list gave %p, not the temporary freed (%p)", (void *)b,
               (void *)a);
    mf_dtype_temp_free_fast(b); /* inline now */
    UNIT_CHECK(mf_dtype_temp_cache.nsmall[1] == 1, "the 128-byte list holds %d, not 1",
               mf_dtype_temp_cache.nsmall[1]);
    UNIT_CHECK(mf_dtype_temp_alloc_small(65) == a, "the inline push did not keep the temporary");
    mf_dtype_temp_free(a);

    char *many[MF_DT_SMALL_KEEP + 4];
    for (int i = 0; i < MF_DT_SMALL_KEEP + 4; i++)
        many[i] = mf_dtype_temp_alloc_small(8);
    for (int i = 0; i < MF_DT_SMALL_KEEP + 4; i++)
        mf_dtype_temp_free_fast(many[i]);
    UNIT_CHECK(mf_dtype_temp_cache.nsmall[0] == MF_DT_SMALL_KEEP, "the 64-byte list holds %d",
               mf_dtype_temp_cache.nsmall[0]);

    int limits[] = {100, 0};
    for (int l = 0; l < 2; l++) {
        mf_params.dt_temp_cache = limits[l];
        mf_dtype_temp_flush();
        char *s64 = mf_dtype_temp_alloc_small(64), *s128 = mf_dtype_temp_alloc_small(128);
        mf_dtype_temp_free_fast(s64);
        mf_dtype_temp_free_fast(s128);
        UNIT_CHECK(mf_dtype_temp_cache.nsmall[0] == (limits[l] >= 64) &&
                       mf_dtype_temp_cache.nsmall[1] == 0,
                   "with a cache limit of %d bytes the lists hold %d and %d", limits[l],
                   mf_dtype_temp_cache.nsmall[0], mf_dtype_temp_cache.nsmall[1]);
    }
    mf_params.dt_temp_cache = saved;
    mf_dtype_temp_flush();
}

int main(void)
{
    check_temp_alignment();
    check_temp_inline();
    check_contiguous();
    check_fast_paths();
    check_pack8_s16();
    check_external32();
    for (int iter = 0; iter < 3000; iter++) {
        MPI_Datatype t = make_type(3);
        if (t != NULL)
            check_type(t, iter);
        mf_dtype_release(t);
    }
    check_runs_kept();
    int forms[3] = {0}; /* one run, several runs, a list */
    for (int iter = 0; iter < 400; iter++) {
        MPI_Datatype t = make_big((int)rnd(4));
        if (t != NULL) {
            check_type(t, 10000 + iter);
            mf_dtype_t *d = (mf_dtype_t *)t;
            forms[d->runs == NULL ? 2 : d->nruns == 1 ? 0 : 1]++;
        }
        mf_dtype_release(t);
    }
    UNIT_CHECK(forms[0] > 20 && forms[1] > 20 && forms[2] > 20,
               "types of many segments: %d one run, %d runs, %d listed", forms[0], forms[1],
               forms[2]);
    return unit_finish("dtype_test");
}
