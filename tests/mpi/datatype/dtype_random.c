/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A randomized differential test of derived datatypes. Each iteration builds a random type
 * tree (contiguous, vector, hvector, indexed, hindexed, indexed_block, hindexed_block, struct,
 * resized, subarray in C and Fortran order, dup; up to four levels over predefined leaves,
 * pair types included) and computes from the constructor arguments alone its reference: the
 * type map (byte offset and basic type of every element), size, true bounds and bounds. The
 * bounds follow MPI-5.0 5.1.7: explicit markers (resized, subarray) decide them when present,
 * otherwise the entries do, and a struct's extent is rounded up to its most strictly aligned
 * member (the epsilon; implementations apply it to structs only). Then, with 1 and several
 * items and the types' own extents:
 * - MPI_Type_size(_c), MPI_Type_get_true_extent(_c), MPI_Type_get_extent(_c);
 * - MPI_Pack (bytes against the reference stream, MPI_Pack_size), MPI_Unpack into another type
 *   of the same signature (a struct of the elements at new, gapped offsets, or a contiguous
 *   array) and, when the random type does not overlap, the reverse: every byte of the
 *   destination checked, the bytes outside the type map must keep their canary;
 * - MPI_Sendrecv on MPI_COMM_SELF both ways between the two types, and a message shorter than
 *   the receive (n items and a partial one): MPI_Get_count (MPI_UNDEFINED unless whole items)
 *   and MPI_Get_elements(_c) against the reference;
 * - MPI_Pack_external/MPI_Unpack_external("external32"): every byte against big-endian
 *   elements of the standard's sizes (MPI_LONG is 4 bytes), and the round trip;
 * - at two processes the same transfers between ranks 0 and 1 (sizes up to a few hundred KiB,
 *   so eager, streamed, iovec and rendezvous paths).
 * Types that overlap are only sent, never received into. The seed is fixed; DTYPE_RANDOM_ITERS,
 * DTYPE_RANDOM_SEED and DTYPE_RANDOM_FIRST (the first iteration: each one can be rerun alone)
 * change the run, DTYPE_RANDOM_VERBOSE prints every type, DTYPE_RANDOM_PORTABLE makes Manifold
 * generate what it generates on MPICH (below), the same types. A failure prints the seed, the
 * iteration, the type's constructor tree and the first wrong byte.
 * MPICH 5.0.2 departs from the standard in corners this test hits, so on other libraries: the
 * bounds ignore markers in a struct (MPICH takes every member's bounds), a padded struct gets
 * its extent explicitly (MPICH leaves out the epsilon of a struct of derived types), there are
 * no zero counts or empty blocks (MPICH counts them in the bounds, and its MPI_Get_elements
 * divides by zero on them), MPI_Get_elements is not checked (wrong or a SIGFPE on structs of
 * several basic types and on pair types), there are no pair types (MPICH refuses to match
 * MPI_2INT with two MPI_INT between processes and unpacked wrong bytes into large types of pair
 * types that Manifold gets right), and external32 is not run (MPICH asserts in
 * MPI_Pack_external on any derived type tried).
 */
#include "mtest.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_ITERS 400
#define MAX_KIDS      4
#define MAX_BLKS      8
#define MAX_DIMS      3
#define MAX_NODES     64
#define MAX_ENTS      (300 * 1024) /* elements of one message, all items */
#define MARGIN        64           /* canary bytes around every buffer */

/* ---- random numbers: splitmix64 ---------------------------------------------------------- */

typedef struct rng {
    uint64_t s;
} rng_t;

static uint64_t rng_next(rng_t *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* uniform in [lo, hi] */
static long rng_range(rng_t *r, long lo, long hi)
{
    if (hi <= lo)
        return lo;
    return lo + (long)(rng_next(r) % (uint64_t)(hi - lo + 1));
}

static int rng_chance(rng_t *r, int percent)
{
    return (int)(rng_next(r) % 100) < percent;
}

/* in [1, max], log-uniform, so small and large values both come up */
static long rng_logcount(rng_t *r, long max)
{
    if (max <= 1)
        return 1;
    int bits = 0;
    while (bits < 62 && (1l << (bits + 1)) <= max)
        bits++;
    long top = 1l << rng_range(r, 0, bits);
    return rng_range(r, 1, top < max ? top : max);
}

/* ---- basic elements and leaves ----------------------------------------------------------- */

enum { C_CHAR, C_SHORT, C_INT, C_LONG, C_FLOAT, C_DOUBLE, C_INT64, C_UINT8, C_BYTE, NCOMP };

static const int comp_size[NCOMP] = {1, 2, 4, (int)sizeof(long), 4, 8, 8, 1, 1};
/* external32 sizes (MPI-5.0 table 19.x): a long is 4 bytes */
static const int comp_esize[NCOMP] = {1, 2, 4, 4, 4, 8, 8, 1, 1};
static const char *const comp_name[NCOMP] = {"char",   "short", "int",   "long", "float",
                                             "double", "int64", "uint8", "byte"};

static MPI_Datatype comp_type(int c)
{
    switch (c) {
    case C_CHAR: return MPI_CHAR;
    case C_SHORT: return MPI_SHORT;
    case C_INT: return MPI_INT;
    case C_LONG: return MPI_LONG;
    case C_FLOAT: return MPI_FLOAT;
    case C_DOUBLE: return MPI_DOUBLE;
    case C_INT64: return MPI_INT64_T;
    case C_UINT8: return MPI_UINT8_T;
    default: return MPI_BYTE;
    }
}

/* A predefined leaf: its elements at their native offsets (the pair types are structs). */
typedef struct leaf {
    const char *name;
    int ncomp, comp[2], off[2];
    int extent, align;
} leaf_t;

enum { NLEAF = NCOMP + 5 };

static leaf_t leaves[NLEAF];

static MPI_Datatype leaf_type(int i)
{
    if (i < NCOMP)
        return comp_type(i);
    switch (i - NCOMP) {
    case 0: return MPI_DOUBLE_INT;
    case 1: return MPI_2INT;
    case 2: return MPI_SHORT_INT;
    case 3: return MPI_LONG_INT;
    default: return MPI_FLOAT_INT;
    }
}

static void leaves_init(void)
{
    for (int c = 0; c < NCOMP; c++)
        leaves[c] = (leaf_t){comp_name[c], 1, {c, 0}, {0, 0}, comp_size[c], comp_size[c]};
    leaves[NCOMP + 0] = (leaf_t){"double_int", 2, {C_DOUBLE, C_INT}, {0, 8}, 16, 8};
    leaves[NCOMP + 1] = (leaf_t){"2int", 2, {C_INT, C_INT}, {0, 4}, 8, 4};
    leaves[NCOMP + 2] = (leaf_t){"short_int", 2, {C_SHORT, C_INT}, {0, 4}, 8, 4};
    leaves[NCOMP + 3] = (leaf_t){
        "long_int",       2, {C_LONG, C_INT}, {0, (int)sizeof(long)}, (int)(2 * sizeof(long)),
        (int)sizeof(long)};
    leaves[NCOMP + 4] = (leaf_t){"float_int", 2, {C_FLOAT, C_INT}, {0, 4}, 8, 4};
}

/* ---- the type tree and its reference ----------------------------------------------------- */

enum {
    K_LEAF,
    K_CONTIG,
    K_VECTOR,
    K_HVECTOR,
    K_INDEXED,
    K_HINDEXED,
    K_IBLOCK,
    K_HIBLOCK,
    K_STRUCT,
    K_RESIZED,
    K_SUBARRAY,
    K_DUP,
    NKINDS
};

typedef struct node {
    int kind;
    MPI_Datatype type;
    int leaf;
    int nkids;
    struct node *kids[MAX_KIDS];
    /* contiguous: count; vector: count, blen, stride (child extents or bytes) */
    int count, blen;
    MPI_Aint stride;
    /* indexed, hindexed, blocks, struct: nblk blocks (struct: one per kid) */
    int nblk, blens[MAX_BLKS];
    MPI_Aint disps[MAX_BLKS]; /* child extents (indexed) or bytes (h*, struct) */
    MPI_Aint rlb, rext;       /* resized */
    int ndims, sizes[MAX_DIMS], subsizes[MAX_DIMS], starts[MAX_DIMS], order;
    /* reference for one item */
    MPI_Aint size, nent; /* bytes and basic elements */
    int markers;         /* the bounds come from explicit markers (resized, subarray) */
    int empty;           /* neither elements nor markers */
    MPI_Aint lb, ub, tlb, tub;
    int align;
    MPI_Aint pad; /* bytes of epsilon added to a struct's extent */
} node_t;

/* Apply the standard's rule for explicit bounds (below); MPICH 5.0.2 does not. */
static int sticky = 1;

static MPI_Aint node_ext(const node_t *n)
{
    return n->ub - n->lb;
}

/* Bounds of a new node from its children's items (MPI-5.0 5.1.7): markers win when any child
 * carries them; the true bounds count elements only. */
typedef struct acc {
    int any_mk, any_plain, any_data, align;
    MPI_Aint mk_lb, mk_ub, pl_lb, pl_ub, tlb, tub;
} acc_t;

static void acc_add(acc_t *a, const node_t *c, MPI_Aint disp, MPI_Aint nrep)
{
    if (nrep <= 0 || c->empty)
        return;
    MPI_Aint span = (nrep - 1) * node_ext(c);
    MPI_Aint lo = span < 0 ? span : 0, hi = span > 0 ? span : 0;
    MPI_Aint lb = disp + c->lb + lo, ub = disp + c->ub + hi;
    if (c->markers && sticky) {
        a->mk_lb = !a->any_mk || lb < a->mk_lb ? lb : a->mk_lb;
        a->mk_ub = !a->any_mk || ub > a->mk_ub ? ub : a->mk_ub;
        a->any_mk = 1;
    } else {
        a->pl_lb = !a->any_plain || lb < a->pl_lb ? lb : a->pl_lb;
        a->pl_ub = !a->any_plain || ub > a->pl_ub ? ub : a->pl_ub;
        a->any_plain = 1;
    }
    if (c->nent > 0) {
        MPI_Aint tlb = disp + c->tlb + lo, tub = disp + c->tub + hi;
        a->tlb = !a->any_data || tlb < a->tlb ? tlb : a->tlb;
        a->tub = !a->any_data || tub > a->tub ? tub : a->tub;
        a->any_data = 1;
        a->align = c->align > a->align ? c->align : a->align;
    }
}

static void acc_finish(node_t *n, const acc_t *a, int is_struct)
{
    n->markers = a->any_mk;
    n->empty = !a->any_mk && !a->any_plain;
    n->align = a->align > 0 ? a->align : 1;
    n->tlb = a->any_data ? a->tlb : 0;
    n->tub = a->any_data ? a->tub : 0;
    if (a->any_mk) {
        n->lb = a->mk_lb;
        n->ub = a->mk_ub;
    } else if (a->any_plain) {
        n->lb = a->pl_lb;
        n->ub = a->pl_ub;
        MPI_Aint rem = (n->ub - n->lb) % n->align;
        if (is_struct && rem != 0) {
            n->pad = n->align - rem;
            n->ub += n->pad; /* the epsilon of MPI-5.0 5.1.6 */
        }
    } else {
        n->lb = n->ub = 0;
    }
}

/* ---- expansion into the type map --------------------------------------------------------- */

typedef struct ent {
    MPI_Aint off;
    int comp, lead; /* lead: the first element of its leaf (a pair type has two) */
} ent_t;

typedef struct entvec {
    ent_t *e;
    MPI_Aint n, cap;
} entvec_t;

static void ent_push(entvec_t *v, MPI_Aint off, int comp, int lead)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? 2 * v->cap : 256;
        v->e = realloc(v->e, (size_t)v->cap * sizeof(ent_t));
        if (v->e == NULL) {
            fprintf(stderr, "out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    v->e[v->n].off = off;
    v->e[v->n].comp = comp;
    v->e[v->n].lead = lead;
    v->n++;
}

static void expand(const node_t *n, MPI_Aint base, entvec_t *v);

static void expand_rep(const node_t *c, MPI_Aint base, MPI_Aint nrep, entvec_t *v)
{
    for (MPI_Aint j = 0; j < nrep; j++)
        expand(c, base + j * node_ext(c), v);
}

/* the element offsets of one subarray item, in increasing linear index (type map order) */
static void expand_subarray(const node_t *n, MPI_Aint base, entvec_t *v)
{
    const node_t *c = n->kids[0];
    int idx[MAX_DIMS] = {0, 0, 0}, nd = n->ndims;
    MPI_Aint total = 1;
    for (int d = 0; d < nd; d++)
        total *= n->subsizes[d];
    for (MPI_Aint k = 0; k < total; k++) {
        MPI_Aint lin = 0;
        if (n->order == MPI_ORDER_C) {
            for (int d = 0; d < nd; d++)
                lin = lin * n->sizes[d] + n->starts[d] + idx[d];
        } else {
            for (int d = nd - 1; d >= 0; d--)
                lin = lin * n->sizes[d] + n->starts[d] + idx[d];
        }
        expand(c, base + lin * node_ext(c), v);
        /* next index: the fastest dimension first */
        for (int s = 0; s < nd; s++) {
            int d = n->order == MPI_ORDER_C ? nd - 1 - s : s;
            if (++idx[d] < n->subsizes[d])
                break;
            idx[d] = 0;
        }
    }
}

static void expand(const node_t *n, MPI_Aint base, entvec_t *v)
{
    const node_t *c = n->kids[0];
    MPI_Aint ext = c != NULL ? node_ext(c) : 0;
    switch (n->kind) {
    case K_LEAF:
        for (int i = 0; i < leaves[n->leaf].ncomp; i++)
            ent_push(v, base + leaves[n->leaf].off[i], leaves[n->leaf].comp[i], i == 0);
        break;
    case K_CONTIG: expand_rep(c, base, n->count, v); break;
    case K_VECTOR:
        for (int i = 0; i < n->count; i++)
            expand_rep(c, base + i * n->stride * ext, n->blen, v);
        break;
    case K_HVECTOR:
        for (int i = 0; i < n->count; i++)
            expand_rep(c, base + i * n->stride, n->blen, v);
        break;
    case K_INDEXED:
    case K_IBLOCK:
        for (int b = 0; b < n->nblk; b++)
            expand_rep(c, base + n->disps[b] * ext, n->blens[b], v);
        break;
    case K_HINDEXED:
    case K_HIBLOCK:
        for (int b = 0; b < n->nblk; b++)
            expand_rep(c, base + n->disps[b], n->blens[b], v);
        break;
    case K_STRUCT:
        for (int b = 0; b < n->nblk; b++)
            expand_rep(n->kids[b], base + n->disps[b], n->blens[b], v);
        break;
    case K_RESIZED:
    case K_DUP: expand(c, base, v); break;
    case K_SUBARRAY: expand_subarray(n, base, v); break;
    }
}

/* ---- description ------------------------------------------------------------------------- */

typedef struct str {
    char buf[6000];
    size_t len;
} str_t;

static void str_add(str_t *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void str_add(str_t *s, const char *fmt, ...)
{
    if (s->len >= sizeof(s->buf) - 1)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(s->buf + s->len, sizeof(s->buf) - s->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        s->len += (size_t)k;
    if (s->len >= sizeof(s->buf) - 1) {
        s->len = sizeof(s->buf) - 1;
        memcpy(s->buf + s->len - 3, "...", 3);
    }
}

static void describe(const node_t *n, str_t *s)
{
    static const char *const kname[NKINDS] = {"leaf",    "contiguous", "vector",   "hvector",
                                              "indexed", "hindexed",   "iblock",   "hiblock",
                                              "struct",  "resized",    "subarray", "dup"};
    if (n->kind == K_LEAF) {
        str_add(s, "%s", leaves[n->leaf].name);
        return;
    }
    str_add(s, "%s(", kname[n->kind]);
    switch (n->kind) {
    case K_CONTIG: str_add(s, "%d, ", n->count); break;
    case K_VECTOR:
    case K_HVECTOR: str_add(s, "%d, %d, %ld, ", n->count, n->blen, (long)n->stride); break;
    case K_INDEXED:
    case K_HINDEXED:
    case K_IBLOCK:
    case K_HIBLOCK:
        str_add(s, "[");
        for (int b = 0; b < n->nblk; b++)
            str_add(s, "%s%d@%ld", b ? " " : "", n->blens[b], (long)n->disps[b]);
        str_add(s, "], ");
        break;
    case K_STRUCT:
        for (int b = 0; b < n->nblk; b++) {
            str_add(s, "%s%d@%ld:", b ? ", " : "", n->blens[b], (long)n->disps[b]);
            describe(n->kids[b], s);
        }
        str_add(s, ")");
        return;
    case K_RESIZED: str_add(s, "lb %ld, extent %ld, ", (long)n->rlb, (long)n->rext); break;
    case K_SUBARRAY:
        str_add(s, "%s", n->order == MPI_ORDER_C ? "C" : "F");
        for (int d = 0; d < n->ndims; d++)
            str_add(s, " %d:%d+%d", n->sizes[d], n->starts[d], n->subsizes[d]);
        str_add(s, ", ");
        break;
    default: break;
    }
    describe(n->kids[0], s);
    str_add(s, ")");
}

/* ---- generation -------------------------------------------------------------------------- */

typedef struct gen {
    rng_t r;
    int full; /* zero counts, empty blocks, pair types (MPICH 5.0.2 differs, see the top) */
    node_t *nodes[MAX_NODES];
    int nnodes;
} gen_t;

static node_t *node_new(gen_t *g, int kind)
{
    node_t *n = mtest_calloc(1, sizeof(*n));
    n->kind = kind;
    n->type = MPI_DATATYPE_NULL;
    g->nodes[g->nnodes++] = n;
    return n;
}

static void gen_free(gen_t *g)
{
    for (int i = 0; i < g->nnodes; i++) {
        if (g->nodes[i]->kind != K_LEAF && g->nodes[i]->type != MPI_DATATYPE_NULL)
            MPI_Type_free(&g->nodes[i]->type);
        free(g->nodes[i]);
    }
    g->nnodes = 0;
}

static node_t *gen_leaf(gen_t *g, MPI_Aint budget)
{
    node_t *n = node_new(g, K_LEAF);
    int l;
    do {
        l = (int)rng_range(&g->r, 0, g->full ? NLEAF - 1 : NCOMP - 1);
    } while (leaves[l].extent > budget && leaves[l].extent > 1);
    const leaf_t *lf = &leaves[l];
    n->leaf = l;
    n->type = leaf_type(l);
    n->nent = lf->ncomp;
    n->size = 0;
    for (int i = 0; i < lf->ncomp; i++)
        n->size += comp_size[lf->comp[i]];
    n->lb = 0;
    n->ub = lf->extent;
    n->tlb = 0;
    n->tub = lf->off[lf->ncomp - 1] + comp_size[lf->comp[lf->ncomp - 1]];
    n->align = lf->align;
    return n;
}

/* A count of at most max child items (max >= 1); 0 now and then where empty types are kept. */
static int gen_count(gen_t *g, MPI_Aint max, long cap, int zero_ok)
{
    if (zero_ok && rng_chance(&g->r, 4))
        return 0;
    max = max < cap ? max : cap;
    if (rng_chance(&g->r, 30)) /* fill the budget: large types */
        return (int)rng_range(&g->r, max / 2 > 1 ? max / 2 : 1, max);
    return (int)rng_logcount(&g->r, max);
}

/* Byte displacements for nb blocks of the given byte lengths: in order with gaps (natural or
 * odd), sometimes shuffled, sometimes anywhere (overlapping). */
static void gen_byte_disps(gen_t *g, int nb, const MPI_Aint *len, int align, MPI_Aint *disps)
{
    int mode = (int)rng_range(&g->r, 0, 9);
    MPI_Aint at = rng_chance(&g->r, 25) ? -rng_range(&g->r, 0, 64) : 0;
    for (int b = 0; b < nb; b++) {
        if (mode == 9) {
            disps[b] = rng_range(&g->r, -48, 48);
            continue;
        }
        if (rng_chance(&g->r, 50))
            at += rng_range(&g->r, 0, 12);
        if (align > 1 && mode < 5)
            at = (at + 8 * align) / align * align - 8 * align; /* round up, also below 0 */
        disps[b] = at;
        at += len[b];
    }
    if (mode >= 7) {
        for (int b = nb - 1; b > 0; b--) {
            int k = (int)rng_range(&g->r, 0, b);
            MPI_Aint t = disps[b];
            disps[b] = disps[k];
            disps[k] = t;
        }
    }
}

static void node_bounds(node_t *n);

static node_t *gen(gen_t *g, int depth, MPI_Aint budget)
{
    if (depth <= 0 || budget < 4 || rng_chance(&g->r, 15))
        return gen_leaf(g, budget);
    int kind = (int)rng_range(&g->r, K_CONTIG, NKINDS - 1);
    int zero_ok = g->full;
    node_t *n = node_new(g, kind), *c;
    switch (kind) {
    case K_CONTIG:
    case K_DUP:
    case K_RESIZED:
        c = gen(g, depth - 1, kind == K_CONTIG ? budget / rng_range(&g->r, 1, 8) : budget);
        n->nkids = 1;
        n->kids[0] = c;
        if (kind == K_CONTIG) {
            n->count = gen_count(g, budget / (c->size > 0 ? c->size : 1), 1 << 16, zero_ok);
        } else if (kind == K_RESIZED) {
            MPI_Aint ext = node_ext(c);
            int mode = (int)rng_range(&g->r, 0, 3);
            n->rlb = c->lb + (mode == 0 ? 0 : rng_range(&g->r, -16, 16));
            n->rext = mode == 1 ? ext : ext + rng_range(&g->r, mode == 3 ? -ext : -8, 24);
            if (n->rext < 1)
                n->rext = 1 + rng_range(&g->r, 0, 8);
        }
        break;
    case K_VECTOR:
    case K_HVECTOR: {
        c = gen(g, depth - 1, budget / rng_range(&g->r, 1, 16));
        n->nkids = 1;
        n->kids[0] = c;
        MPI_Aint max = budget / (c->size > 0 ? c->size : 1);
        n->count = gen_count(g, max, 4096, zero_ok);
        n->blen = gen_count(g, max / (n->count > 0 ? n->count : 1), 4096, zero_ok || n->count == 0);
        int mode = (int)rng_range(&g->r, 0, 9);
        MPI_Aint unit = kind == K_VECTOR ? 1 : node_ext(c);
        MPI_Aint fwd =
            n->blen * unit + (kind == K_VECTOR ? rng_range(&g->r, 0, 3) : rng_range(&g->r, 0, 24));
        if (kind == K_HVECTOR && rng_chance(&g->r, 50))
            fwd = n->blen * unit + unit * rng_range(&g->r, 0, 2); /* whole items apart */
        n->stride = mode < 7 ? fwd : mode < 9 ? -fwd : rng_range(&g->r, -fwd, fwd);
        break;
    }
    case K_INDEXED:
    case K_HINDEXED:
    case K_IBLOCK:
    case K_HIBLOCK: {
        c = gen(g, depth - 1, budget / rng_range(&g->r, 1, 16));
        n->nkids = 1;
        n->kids[0] = c;
        MPI_Aint max = budget / (c->size > 0 ? c->size : 1);
        n->nblk = (int)rng_range(&g->r, zero_ok && rng_chance(&g->r, 5) ? 0 : 1, MAX_BLKS);
        int any = 0, same = gen_count(g, max / (n->nblk > 0 ? n->nblk : 1), 4096, zero_ok);
        for (int b = 0; b < n->nblk; b++) {
            if (kind == K_IBLOCK || kind == K_HIBLOCK)
                n->blens[b] = same;
            else
                n->blens[b] = zero_ok && rng_chance(&g->r, 15)
                                  ? 0
                                  : gen_count(g, max / n->nblk, 4096, zero_ok);
            any |= n->blens[b] > 0;
        }
        if (!any && !zero_ok && n->nblk > 0)
            n->blens[0] = 1;
        if (!any && !zero_ok && (kind == K_IBLOCK || kind == K_HIBLOCK))
            for (int b = 0; b < n->nblk; b++)
                n->blens[b] = 1;
        MPI_Aint len[MAX_BLKS] = {0};
        int elems = kind == K_INDEXED || kind == K_IBLOCK;
        for (int b = 0; b < n->nblk; b++)
            len[b] = elems ? n->blens[b] : n->blens[b] * node_ext(c);
        gen_byte_disps(g, n->nblk, len, 1, n->disps);
        if (elems) /* in child extents: keep them small */
            for (int b = 0; b < n->nblk; b++)
                if (n->disps[b] > 1 << 20 || n->disps[b] < -(1 << 20))
                    n->disps[b] = 0;
        break;
    }
    case K_STRUCT: {
        n->nkids = n->nblk = (int)rng_range(&g->r, 1, MAX_KIDS);
        MPI_Aint len[MAX_KIDS] = {0};
        int any = 0;
        for (int b = 0; b < n->nblk; b++) {
            c = gen(g, depth - 1, budget / n->nblk / rng_range(&g->r, 1, 4) + 1);
            n->kids[b] = c;
            MPI_Aint max = budget / n->nblk / (c->size > 0 ? c->size : 1);
            /* MPICH 5.0.2's MPI_Get_elements divides by zero on a struct with an empty
             * block: those only on Manifold */
            n->blens[b] = zero_ok && rng_chance(&g->r, 10) ? 0 : gen_count(g, max, 64, zero_ok);
            any |= n->blens[b] > 0 && !c->empty;
            len[b] = n->blens[b] * node_ext(c);
        }
        if (!any && !zero_ok) {
            n->blens[0] = 1;
            len[0] = node_ext(n->kids[0]);
        }
        gen_byte_disps(g, n->nblk, len, rng_chance(&g->r, 60) ? n->kids[0]->align : 1, n->disps);
        break;
    }
    case K_SUBARRAY: {
        c = gen(g, depth - 1, budget / rng_range(&g->r, 1, 16));
        n->nkids = 1;
        n->kids[0] = c;
        if (c->lb != 0 || node_ext(c) <= 0) {
            /* the standard's subarray starts its items at the array's origin: only a child
             * whose lb is 0 has an unambiguous reference, so make this a contiguous type */
            n->kind = K_CONTIG;
            n->count = 1;
            break;
        }
        n->ndims = (int)rng_range(&g->r, 1, MAX_DIMS);
        n->order = rng_chance(&g->r, 50) ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
        MPI_Aint left = budget / (c->size > 0 ? c->size : 1);
        for (int d = 0; d < n->ndims; d++) {
            n->sizes[d] = (int)rng_range(&g->r, 1, 6);
            n->subsizes[d] = (int)rng_range(&g->r, 1, n->sizes[d] < left ? n->sizes[d] : left);
            if (left > 1)
                left /= n->subsizes[d];
            n->starts[d] = (int)rng_range(&g->r, 0, n->sizes[d] - n->subsizes[d]);
        }
        break;
    }
    }
    node_bounds(n);
    if (kind == K_STRUCT && !g->full && n->pad > 0) {
        /* MPICH 5.0.2 leaves out the epsilon of a struct of derived types (their elements'
         * alignment): there, the padded extent is given explicitly */
        node_t *r = node_new(g, K_RESIZED);
        r->nkids = 1;
        r->kids[0] = n;
        r->rlb = n->lb;
        r->rext = node_ext(n);
        node_bounds(r);
        return r;
    }
    return n;
}

/* size, elements and bounds of a composite node from its children (the reference) */
static void node_bounds(node_t *n)
{
    acc_t a = {0};
    const node_t *c = n->kids[0];
    MPI_Aint ext = node_ext(c), reps = 0;
    switch (n->kind) {
    case K_CONTIG:
        acc_add(&a, c, 0, n->count);
        reps = n->count;
        break;
    case K_VECTOR:
    case K_HVECTOR:
        if (n->count > 0) {
            MPI_Aint step = n->kind == K_VECTOR ? n->stride * ext : n->stride;
            acc_add(&a, c, 0, n->blen);
            acc_add(&a, c, (n->count - 1) * step, n->blen);
        }
        reps = (MPI_Aint)n->count * n->blen;
        break;
    case K_INDEXED:
    case K_IBLOCK:
    case K_HINDEXED:
    case K_HIBLOCK:
        for (int b = 0; b < n->nblk; b++) {
            MPI_Aint d =
                n->kind == K_INDEXED || n->kind == K_IBLOCK ? n->disps[b] * ext : n->disps[b];
            acc_add(&a, c, d, n->blens[b]);
            reps += n->blens[b];
        }
        break;
    case K_STRUCT:
        for (int b = 0; b < n->nblk; b++)
            acc_add(&a, n->kids[b], n->disps[b], n->blens[b]);
        break;
    case K_RESIZED:
    case K_DUP:
        acc_add(&a, c, 0, 1);
        reps = 1;
        break;
    case K_SUBARRAY: {
        MPI_Aint total = 1, first = 0, last = 0;
        for (int d = 0; d < n->ndims; d++)
            total *= n->subsizes[d];
        /* the first and last elements of the subarray in linear index */
        if (n->order == MPI_ORDER_C) {
            for (int d = 0; d < n->ndims; d++) {
                first = first * n->sizes[d] + n->starts[d];
                last = last * n->sizes[d] + n->starts[d] + n->subsizes[d] - 1;
            }
        } else {
            for (int d = n->ndims - 1; d >= 0; d--) {
                first = first * n->sizes[d] + n->starts[d];
                last = last * n->sizes[d] + n->starts[d] + n->subsizes[d] - 1;
            }
        }
        acc_add(&a, c, first * ext, 1);
        acc_add(&a, c, last * ext, 1);
        reps = total;
        break;
    }
    }
    if (n->kind == K_STRUCT) {
        for (int b = 0; b < n->nblk; b++) {
            n->size += n->blens[b] * n->kids[b]->size;
            n->nent += n->blens[b] * n->kids[b]->nent;
        }
    } else {
        n->size = reps * c->size;
        n->nent = reps * c->nent;
    }
    acc_finish(n, &a, n->kind == K_STRUCT);
    if (n->kind == K_RESIZED) {
        n->markers = 1;
        n->empty = 0;
        n->lb = n->rlb;
        n->ub = n->rlb + n->rext;
    } else if (n->kind == K_SUBARRAY) {
        MPI_Aint total = 1;
        for (int d = 0; d < n->ndims; d++)
            total *= n->sizes[d];
        n->markers = 1;
        n->empty = 0;
        n->lb = 0;
        n->ub = total * ext;
    }
}

/* Build the MPI types of the tree bottom-up; children are committed now and then, which the
 * library flattens differently. */
static void build(gen_t *g, node_t *n)
{
    if (n->kind == K_LEAF)
        return;
    for (int k = 0; k < n->nkids; k++) {
        build(g, n->kids[k]);
        if (n->kids[k]->kind != K_LEAF && rng_chance(&g->r, 30))
            MPI_Type_commit(&n->kids[k]->type);
    }
    MPI_Datatype c = n->kids[0]->type;
    int idisp[MAX_BLKS];
    for (int b = 0; b < n->nblk; b++)
        idisp[b] = (int)n->disps[b];
    switch (n->kind) {
    case K_CONTIG: MPI_Type_contiguous(n->count, c, &n->type); break;
    case K_VECTOR: MPI_Type_vector(n->count, n->blen, (int)n->stride, c, &n->type); break;
    case K_HVECTOR: MPI_Type_create_hvector(n->count, n->blen, n->stride, c, &n->type); break;
    case K_INDEXED: MPI_Type_indexed(n->nblk, n->blens, idisp, c, &n->type); break;
    case K_HINDEXED: MPI_Type_create_hindexed(n->nblk, n->blens, n->disps, c, &n->type); break;
    case K_IBLOCK:
        MPI_Type_create_indexed_block(n->nblk, n->nblk > 0 ? n->blens[0] : 0, idisp, c, &n->type);
        break;
    case K_HIBLOCK:
        MPI_Type_create_hindexed_block(n->nblk, n->nblk > 0 ? n->blens[0] : 0, n->disps, c,
                                       &n->type);
        break;
    case K_STRUCT: {
        MPI_Datatype types[MAX_KIDS];
        for (int b = 0; b < n->nblk; b++)
            types[b] = n->kids[b]->type;
        MPI_Type_create_struct(n->nblk, n->blens, n->disps, types, &n->type);
        break;
    }
    case K_RESIZED: MPI_Type_create_resized(c, n->rlb, n->rext, &n->type); break;
    case K_SUBARRAY:
        MPI_Type_create_subarray(n->ndims, n->sizes, n->subsizes, n->starts, n->order, c, &n->type);
        break;
    case K_DUP: MPI_Type_dup(c, &n->type); break;
    }
}

/* ---- buffers and the reference data movement --------------------------------------------- */

/* A buffer covering byte offsets [lo, hi) around its origin `at`, with canaries around. */
typedef struct buf {
    char *mem, *at;
    size_t len;
} buf_t;

static unsigned char canary(size_t i)
{
    return (unsigned char)(0xa5 + 37 * i);
}

static void buf_make(buf_t *b, const ent_t *e, MPI_Aint n, MPI_Aint lo, MPI_Aint hi)
{
    for (MPI_Aint i = 0; i < n; i++) {
        lo = e[i].off < lo ? e[i].off : lo;
        hi = e[i].off + comp_size[e[i].comp] > hi ? e[i].off + comp_size[e[i].comp] : hi;
    }
    lo = (lo - MARGIN) & ~(MPI_Aint)15;
    hi += MARGIN;
    b->len = (size_t)(hi - lo);
    b->mem = mtest_calloc(1, b->len);
    b->at = b->mem - lo;
}

static void buf_canary(buf_t *b)
{
    for (size_t i = 0; i < b->len; i++)
        b->mem[i] = (char)canary(i);
}

static void buf_free(buf_t *b)
{
    free(b->mem);
    b->mem = b->at = NULL;
}

static void gather(const ent_t *e, MPI_Aint n, const char *at, char *out)
{
    for (MPI_Aint i = 0; i < n; i++) {
        memcpy(out, at + e[i].off, (size_t)comp_size[e[i].comp]);
        out += comp_size[e[i].comp];
    }
}

static void scatter(const ent_t *e, MPI_Aint n, char *at, const char *in)
{
    for (MPI_Aint i = 0; i < n; i++) {
        memcpy(at + e[i].off, in, (size_t)comp_size[e[i].comp]);
        in += comp_size[e[i].comp];
    }
}

/* the external32 form: each element big-endian with its external32 size */
static void gather_x32(const ent_t *e, MPI_Aint n, const char *at, unsigned char *out)
{
    const unsigned one = 1;
    int little = *(const unsigned char *)&one == 1;
    for (MPI_Aint i = 0; i < n; i++) {
        const unsigned char *p = (const unsigned char *)at + e[i].off;
        int ns = comp_size[e[i].comp], es = comp_esize[e[i].comp];
        /* the es least significant bytes of the value, most significant first */
        for (int k = 0; k < es; k++)
            *out++ = little ? p[es - 1 - k] : p[ns - es + k];
    }
}

/* Does any byte belong to two elements? (such a type must not be received into) */
static int cmp_off(const void *a, const void *b)
{
    MPI_Aint x = ((const ent_t *)a)->off, y = ((const ent_t *)b)->off;
    return x < y ? -1 : x > y;
}

static int overlaps(const ent_t *e, MPI_Aint n)
{
    ent_t *s = malloc((size_t)(n > 0 ? n : 1) * sizeof(*s));
    memcpy(s, e, (size_t)n * sizeof(*s));
    qsort(s, (size_t)n, sizeof(*s), cmp_off);
    int ov = 0;
    for (MPI_Aint i = 1; i < n && !ov; i++)
        ov = s[i].off < s[i - 1].off + comp_size[s[i - 1].comp];
    free(s);
    return ov;
}

/* A struct of the elements e[0..n) at byte offsets offs (in that order), consecutive elements
 * of one basic type that touch merged into one block. */
static MPI_Datatype struct_of(const ent_t *e, const MPI_Aint *offs, MPI_Aint n)
{
    int *bl = mtest_calloc((size_t)(n > 0 ? n : 1), sizeof(int));
    MPI_Aint *dp = mtest_calloc((size_t)(n > 0 ? n : 1), sizeof(MPI_Aint));
    MPI_Datatype *ty = mtest_calloc((size_t)(n > 0 ? n : 1), sizeof(MPI_Datatype)), t;
    int nb = 0;
    for (MPI_Aint i = 0; i < n; i++) {
        int c = e[i].comp;
        if (nb > 0 && ty[nb - 1] == comp_type(c) &&
            dp[nb - 1] + (MPI_Aint)bl[nb - 1] * comp_size[c] == offs[i]) {
            bl[nb - 1]++;
            continue;
        }
        ty[nb] = comp_type(c);
        dp[nb] = offs[i];
        bl[nb++] = 1;
    }
    MPI_Type_create_struct(nb, bl, dp, ty, &t);
    free(bl);
    free(dp);
    free(ty);
    return t;
}

/* ---- one case ---------------------------------------------------------------------------- */

typedef struct kase {
    uint64_t seed;
    int iter, failed;
    str_t desc;
} kase_t;

static kase_t cs;
static int rank, nprocs, manifold, full;

static int check(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Record a failed check of this case; only its first failure is reported, with the type. */
static int check(int cond, const char *fmt, ...)
{
    if (cond)
        return 1;
    if (cs.failed++)
        return 0;
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "[rank %d] dtype_random seed %llu iteration %d: type %s\n", rank,
            (unsigned long long)cs.seed, cs.iter, cs.desc.buf);
    MTEST_CHECK(0, "seed %llu iteration %d: %s", (unsigned long long)cs.seed, cs.iter, msg);
    return 0;
}

/* Compare a buffer with its expected image; report the first wrong byte. */
static int check_image(const buf_t *got, const buf_t *want, const char *what, int count)
{
    for (size_t i = 0; i < got->len; i++)
        if (got->mem[i] != want->mem[i])
            return check(0, "%s, count %d: byte at offset %ld is 0x%02x, expected 0x%02x", what,
                         count, (long)(got->mem + i - got->at), (unsigned char)got->mem[i],
                         (unsigned char)want->mem[i]);
    return 1;
}

static int check_bytes(const char *got, const char *want, size_t len, const char *what, int count)
{
    for (size_t i = 0; i < len; i++)
        if (got[i] != want[i])
            return check(0, "%s, count %d: packed byte %zu is 0x%02x, expected 0x%02x", what, count,
                         i, (unsigned char)got[i], (unsigned char)want[i]);
    return 1;
}

/* Everything a case needs: the random type t and the other type a of the same signature, the
 * reference maps of cmax = count + 1 items of each, and buffers. */
typedef struct pair {
    node_t *top;
    MPI_Datatype t, a;
    int count;                /* items in the full transfers; cmax = count + 1 */
    MPI_Aint nent, size;      /* per item */
    entvec_t mt, ma;          /* maps of cmax items */
    int t_overlaps, has_long; /* t must not be received into; external32 needs small longs */
    int has_pair;             /* a pair type among the leaves */
    buf_t src_t, img_t, dst_t, src_a, img_a, dst_a;
    char *stream, *packed; /* reference packed form of cmax items; a packing buffer */
    unsigned char *x32, *xbuf;
    MPI_Aint x32_item;
} pair_t;

static void fill_random(rng_t *r, buf_t *b)
{
    for (size_t i = 0; i < b->len; i += 8) {
        uint64_t v = rng_next(r);
        memcpy(b->mem + i, &v, b->len - i < 8 ? b->len - i : 8);
    }
}

/* An image of canaries with the packed stream's first n elements scattered over map e. */
static void expect(buf_t *img, const ent_t *e, MPI_Aint n, const char *stream)
{
    buf_canary(img);
    scatter(e, n, img->at, stream);
}

static void pair_setup(pair_t *p, rng_t *dr)
{
    entvec_t one = {0};
    MPI_Aint cmax = p->count + 1;
    expand(p->top, 0, &one);
    p->nent = one.n;
    /* cmax items of t, extent apart */
    for (MPI_Aint k = 0; k < cmax; k++)
        for (MPI_Aint i = 0; i < one.n; i++)
            ent_push(&p->mt, one.e[i].off + k * node_ext(p->top), one.e[i].comp, one.e[i].lead);
    /* the other type: the elements in order at new offsets with gaps (or a plain array) */
    MPI_Aint *offs = mtest_calloc((size_t)one.n, sizeof(MPI_Aint)), at = 0, ext;
    int same = 1;
    for (MPI_Aint i = 1; i < one.n; i++)
        same &= one.e[i].comp == one.e[0].comp;
    if (same && rng_chance(dr, 40)) {
        for (MPI_Aint i = 0; i < one.n; i++)
            offs[i] = i * comp_size[one.e[0].comp];
        MPI_Type_contiguous((int)one.n, comp_type(one.e[0].comp), &p->a);
        ext = one.n * comp_size[one.e[0].comp];
    } else {
        int gaps = (int)rng_range(dr, 0, 40);
        for (MPI_Aint i = 0; i < one.n; i++) {
            if (rng_chance(dr, gaps))
                at += rng_range(dr, 1, 9);
            offs[i] = at;
            at += comp_size[one.e[i].comp];
        }
        ext = at + rng_range(dr, 0, 5);
        MPI_Datatype s = struct_of(one.e, offs, one.n);
        MPI_Type_create_resized(s, 0, ext, &p->a);
        MPI_Type_free(&s);
    }
    MPI_Type_commit(&p->a);
    for (MPI_Aint k = 0; k < cmax; k++)
        for (MPI_Aint i = 0; i < one.n; i++)
            ent_push(&p->ma, offs[i] + k * ext, one.e[i].comp, one.e[i].lead);
    free(offs);
    free(one.e);

    MPI_Aint n = p->mt.n;
    p->t_overlaps = overlaps(p->mt.e, n);
    p->has_long = 0;
    for (MPI_Aint i = 0; i < n; i++)
        p->has_long |= p->mt.e[i].comp == C_LONG;
    for (MPI_Aint i = 0; i < n; i++)
        p->has_pair |= !p->mt.e[i].lead;
    buf_make(&p->src_t, p->mt.e, n, 0, 1);
    buf_make(&p->img_t, p->mt.e, n, 0, 1);
    buf_make(&p->dst_t, p->mt.e, n, 0, 1);
    buf_make(&p->src_a, p->ma.e, n, 0, 1);
    buf_make(&p->img_a, p->ma.e, n, 0, 1);
    buf_make(&p->dst_a, p->ma.e, n, 0, 1);
    fill_random(dr, &p->src_t);
    /* longs that fit 32 bits, so external32 can carry them */
    for (MPI_Aint i = 0; i < n; i++)
        if (p->mt.e[i].comp == C_LONG) {
            long v = (long)(int32_t)rng_next(dr);
            memcpy(p->src_t.at + p->mt.e[i].off, &v, sizeof(v));
        }
    p->stream = mtest_calloc(1, (size_t)(cmax * p->size) + 1);
    p->packed = mtest_calloc(1, (size_t)(cmax * p->size) + 64);
    gather(p->mt.e, n, p->src_t.at, p->stream);
    /* the other type's source: the stream laid out by its map */
    expect(&p->src_a, p->ma.e, n, p->stream);
    p->x32_item = 0;
    for (MPI_Aint i = 0; i < p->nent; i++)
        p->x32_item += comp_esize[p->mt.e[i].comp];
    p->x32 = mtest_calloc(1, (size_t)(cmax * p->x32_item) + 1);
    p->xbuf = mtest_calloc(1, (size_t)(cmax * p->x32_item) + 64);
    gather_x32(p->mt.e, n, p->src_t.at, p->x32);
}

static void pair_free(pair_t *p)
{
    MPI_Type_free(&p->a);
    free(p->mt.e);
    free(p->ma.e);
    buf_free(&p->src_t);
    buf_free(&p->img_t);
    buf_free(&p->dst_t);
    buf_free(&p->src_a);
    buf_free(&p->img_a);
    buf_free(&p->dst_a);
    free(p->stream);
    free(p->packed);
    free(p->x32);
    free(p->xbuf);
}

static void check_queries(const pair_t *p)
{
    const node_t *n = p->top;
    int size = -1;
    MPI_Count size_c = -1, tlb_c = -1, text_c = -1, lb_c = -1, ext_c = -1;
    MPI_Aint tlb = -1, text = -1, lb = -1, ext = -1;
    MPI_Type_size(p->t, &size);
    MPI_Type_size_c(p->t, &size_c);
    check(size == n->size && size_c == n->size, "MPI_Type_size %d, _c %lld, expected %ld", size,
          (long long)size_c, (long)n->size);
    MPI_Type_get_true_extent(p->t, &tlb, &text);
    MPI_Type_get_true_extent_c(p->t, &tlb_c, &text_c);
    check(tlb == n->tlb && text == n->tub - n->tlb && tlb_c == tlb && text_c == text,
          "true lb %ld extent %ld (_c %lld %lld), expected %ld %ld", (long)tlb, (long)text,
          (long long)tlb_c, (long long)text_c, (long)n->tlb, (long)(n->tub - n->tlb));
    MPI_Type_get_extent(p->t, &lb, &ext);
    MPI_Type_get_extent_c(p->t, &lb_c, &ext_c);
    check(lb == n->lb && ext == node_ext(n) && lb_c == lb && ext_c == ext,
          "lb %ld extent %ld (_c %lld %lld), expected %ld %ld", (long)lb, (long)ext,
          (long long)lb_c, (long long)ext_c, (long)n->lb, (long)node_ext(n));
}

/* MPI_Pack with t, MPI_Unpack with a; MPI_Pack with a, MPI_Unpack with t (no overlap) */
static void check_pack(pair_t *p, int count)
{
    MPI_Aint n = count * p->nent, bytes = count * p->size;
    int cap = (int)(bytes + 64), pos = 0, psize = -1;
    MPI_Pack_size(count, p->t, MPI_COMM_SELF, &psize);
    MPI_Pack(p->src_t.at, count, p->t, p->packed, cap, &pos, MPI_COMM_SELF);
    if (!check(pos == bytes && psize >= pos, "MPI_Pack position %d, MPI_Pack_size %d, expected %ld",
               pos, psize, (long)bytes) ||
        !check_bytes(p->packed, p->stream, (size_t)bytes, "MPI_Pack", count))
        return;
    buf_canary(&p->dst_a);
    pos = 0;
    MPI_Unpack(p->packed, cap, &pos, p->dst_a.at, count, p->a, MPI_COMM_SELF);
    expect(&p->img_a, p->ma.e, n, p->stream);
    if (!check(pos == bytes, "MPI_Unpack (other type) position %d, expected %ld", pos,
               (long)bytes) ||
        !check_image(&p->dst_a, &p->img_a, "MPI_Unpack (other type)", count))
        return;
    pos = 0;
    memset(p->packed, 0, (size_t)bytes);
    MPI_Pack(p->src_a.at, count, p->a, p->packed, cap, &pos, MPI_COMM_SELF);
    if (!check_bytes(p->packed, p->stream, (size_t)bytes, "MPI_Pack (other type)", count))
        return;
    if (p->t_overlaps)
        return;
    buf_canary(&p->dst_t);
    pos = 0;
    MPI_Unpack(p->packed, cap, &pos, p->dst_t.at, count, p->t, MPI_COMM_SELF);
    expect(&p->img_t, p->mt.e, n, p->stream);
    check(pos == bytes, "MPI_Unpack position %d, expected %ld", pos, (long)bytes);
    check_image(&p->dst_t, &p->img_t, "MPI_Unpack", count);
}

static void check_status(const MPI_Status *st, MPI_Datatype t, MPI_Aint want_count,
                         MPI_Aint want_elems, const char *what)
{
    int cnt = -2, el = -2;
    MPI_Count el_c = -2;
    MPI_Get_count(st, t, &cnt);
    if (!full) {
        /* MPICH 5.0.2's MPI_Get_elements miscounts structs of several basic types and pair
         * types, or dies of a division by zero on them */
        check(cnt == want_count, "%s: MPI_Get_count %d, expected %ld", what, cnt, (long)want_count);
        return;
    }
    MPI_Get_elements(st, t, &el);
    MPI_Get_elements_c(st, t, &el_c);
    check(cnt == want_count && el == want_elems && el_c == want_elems,
          "%s: MPI_Get_count %d, MPI_Get_elements %d (_c %lld), expected %ld and %ld", what, cnt,
          el, (long long)el_c, (long)want_count, (long)want_elems);
}

/* The receive side of one message: into a (or t), then check bytes and status. */
static void recv_check(pair_t *p, int into_t, int count, MPI_Aint nrecv, const MPI_Status *st,
                       const char *what)
{
    buf_t *dst = into_t ? &p->dst_t : &p->dst_a, *img = into_t ? &p->img_t : &p->img_a;
    expect(img, into_t ? p->mt.e : p->ma.e, nrecv, p->stream);
    check_image(dst, img, what, count);
    MPI_Aint whole = nrecv / (p->nent > 0 ? p->nent : 1);
    check_status(st, into_t ? p->t : p->a, nrecv % p->nent == 0 ? whole : MPI_UNDEFINED, nrecv,
                 what);
}

/* The length in elements of a short message: n elements and part of one more item. MPICH
 * 5.0.2 asserts when a message ends inside a pair type, so there it ends between leaves. */
static MPI_Aint short_len(const pair_t *p, MPI_Aint n, rng_t *r)
{
    MPI_Aint k = rng_range(r, 0, p->nent - 1);
    while (!full && k < p->nent && !p->mt.e[n + k].lead)
        k++;
    return n + k;
}

/* The prefix of the packed stream of nsend elements as a struct over the stream itself. */
static MPI_Datatype prefix_type(const pair_t *p, MPI_Aint nsend)
{
    MPI_Aint *offs = mtest_calloc((size_t)(nsend > 0 ? nsend : 1), sizeof(MPI_Aint)), at = 0;
    for (MPI_Aint i = 0; i < nsend; i++) {
        offs[i] = at;
        at += comp_size[p->mt.e[i].comp];
    }
    MPI_Datatype t = struct_of(p->mt.e, offs, nsend);
    MPI_Type_commit(&t);
    free(offs);
    return t;
}

/* MPI_Sendrecv on MPI_COMM_SELF: t to a, a to t, and a short message into count + 1 items */
static void check_self(pair_t *p, int count, rng_t *dr)
{
    MPI_Status st;
    MPI_Aint n = count * p->nent;
    buf_canary(&p->dst_a);
    MPI_Sendrecv(p->src_t.at, count, p->t, 0, 1, p->dst_a.at, count, p->a, 0, 1, MPI_COMM_SELF,
                 &st);
    recv_check(p, 0, count, n, &st, "MPI_Sendrecv self, into the other type");
    if (!p->t_overlaps) {
        buf_canary(&p->dst_t);
        MPI_Sendrecv(p->src_a.at, count, p->a, 0, 2, p->dst_t.at, count, p->t, 0, 2, MPI_COMM_SELF,
                     &st);
        recv_check(p, 1, count, n, &st, "MPI_Sendrecv self, into the type");
    }
    /* count whole items and part of one more, into count + 1 items */
    MPI_Aint nsend = short_len(p, n, dr);
    MPI_Datatype pre = prefix_type(p, nsend);
    int into_t = !p->t_overlaps;
    buf_t *dst = into_t ? &p->dst_t : &p->dst_a;
    buf_canary(dst);
    MPI_Sendrecv(p->stream, 1, pre, 0, 3, dst->at, count + 1, into_t ? p->t : p->a, 0, 3,
                 MPI_COMM_SELF, &st);
    recv_check(p, into_t, count + 1, nsend, &st, "MPI_Sendrecv self, short message");
    MPI_Type_free(&pre);
}

static void check_external32(pair_t *p, int count)
{
    MPI_Aint n = count * p->nent, want = count * p->x32_item, size = -1, pos = 0;
    MPI_Aint cap = want + 64;
    if (p->has_long && p->t_overlaps)
        return; /* the longs may not fit 32 bits where elements overlap */
    MPI_Pack_external_size("external32", count, p->t, &size);
    MPI_Pack_external("external32", p->src_t.at, count, p->t, p->xbuf, cap, &pos);
    if (!check(size == want && pos == want,
               "external32: MPI_Pack_external_size %ld, position %ld, expected %ld", (long)size,
               (long)pos, (long)want) ||
        !check_bytes((char *)p->xbuf, (char *)p->x32, (size_t)want, "MPI_Pack_external", count))
        return;
    if (p->t_overlaps)
        return;
    buf_canary(&p->dst_t);
    pos = 0;
    MPI_Unpack_external("external32", p->xbuf, cap, &pos, p->dst_t.at, count, p->t);
    /* the original elements back, canaries elsewhere */
    buf_canary(&p->img_t);
    for (MPI_Aint i = 0; i < n; i++)
        memcpy(p->img_t.at + p->mt.e[i].off, p->src_t.at + p->mt.e[i].off,
               (size_t)comp_size[p->mt.e[i].comp]);
    check(pos == want, "MPI_Unpack_external position %ld, expected %ld", (long)pos, (long)want);
    check_image(&p->dst_t, &p->img_t, "MPI_Unpack_external", count);
}

/* At two processes: rank 0 sends with t, rank 1 receives with a; rank 1 sends with a, rank 0
 * receives with t (or a when t overlaps); then a short message from rank 0 into count + 1. */
static void check_pair(pair_t *p, int count)
{
    MPI_Status st;
    MPI_Request rq;
    MPI_Aint n = count * p->nent;
    int peer = 1 - rank, into_t = !p->t_overlaps;
    /* both ranks draw the same length of the short message, whatever failed before */
    rng_t r = {((uint64_t)cs.iter << 8) + (uint64_t)count};
    MPI_Aint nsend = short_len(p, n, &r);
    if (rank == 0) {
        MPI_Isend(p->src_t.at, count, p->t, peer, 10, MPI_COMM_WORLD, &rq);
        buf_t *dst = into_t ? &p->dst_t : &p->dst_a;
        buf_canary(dst);
        MPI_Recv(dst->at, count, into_t ? p->t : p->a, peer, 11, MPI_COMM_WORLD, &st);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        recv_check(p, into_t, count, n, &st, "rank 1 to 0, other type to the type");
        MPI_Datatype pre = prefix_type(p, nsend);
        MPI_Send(p->stream, 1, pre, peer, 12, MPI_COMM_WORLD);
        MPI_Type_free(&pre);
    } else {
        buf_canary(&p->dst_a);
        MPI_Irecv(p->dst_a.at, count, p->a, peer, 10, MPI_COMM_WORLD, &rq);
        MPI_Send(p->src_a.at, count, p->a, peer, 11, MPI_COMM_WORLD);
        MPI_Wait(&rq, &st);
        recv_check(p, 0, count, n, &st, "rank 0 to 1, the type to the other type");
        buf_t *dst = into_t ? &p->dst_t : &p->dst_a;
        buf_canary(dst);
        MPI_Recv(dst->at, count + 1, into_t ? p->t : p->a, peer, 12, MPI_COMM_WORLD, &st);
        recv_check(p, into_t, count + 1, nsend, &st, "rank 0 to 1, short message");
    }
}

/* ---- the driver -------------------------------------------------------------------------- */

/* A random type within the bounds of one case: returns the top node, built and committed. */
static node_t *gen_top(gen_t *g, int *count_p)
{
    for (;;) {
        int scale = (int)rng_range(&g->r, 0, 99);
        MPI_Aint budget = scale < 50 ? 256 : scale < 75 ? 8192 : scale < 90 ? 65536 : 400000;
        int depth = (int)rng_range(&g->r, 1, 4);
        node_t *top = gen(g, depth, budget);
        int count = (int)rng_range(&g->r, 2, 4);
        MPI_Aint span = top->ub - top->lb, tspan = top->tub - top->tlb;
        span = span < 0 ? -span : span;
        if (top->nent == 0 || top->size > budget || top->nent * (count + 1) > MAX_ENTS ||
            (tspan + (count + 1) * span) > 8 * budget + 65536) {
            gen_free(g);
            continue;
        }
        build(g, top);
        MPI_Type_commit(&top->type);
        *count_p = count;
        return top;
    }
}

static void run_case(gen_t *g, rng_t *dr)
{
    pair_t p = {0};
    cs.failed = 0;
    cs.desc.len = 0;
    cs.desc.buf[0] = 0;
    p.top = gen_top(g, &p.count);
    p.t = p.top->type;
    p.size = p.top->size;
    describe(p.top, &cs.desc);
    if (getenv("DTYPE_RANDOM_VERBOSE") != NULL && rank == 0)
        printf("%d: size %ld count %d: %s\n", cs.iter, (long)p.size, p.count, cs.desc.buf);
    pair_setup(&p, dr);
    /* at two processes the ranks take turns with the checks within one process */
    int local = nprocs == 1 || cs.iter % 2 == rank;
    if (local)
        check_queries(&p);
    int counts[2] = {1, p.count};
    for (int k = 0; k < 2; k++) {
        if (!cs.failed && local)
            check_pack(&p, counts[k]);
        if (!cs.failed && local)
            check_self(&p, counts[k], dr);
        if (!cs.failed && local && full)
            check_external32(&p, counts[k]);
        if (nprocs == 2)
            check_pair(&p, counts[k]); /* always, to keep the ranks in step */
    }
    pair_free(&p);
    gen_free(g);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    leaves_init();
    int iters = DEFAULT_ITERS;
    const char *s = getenv("DTYPE_RANDOM_ITERS");
    if (s != NULL && atoi(s) > 0)
        iters = atoi(s);
    uint64_t seed = 20240611;
    s = getenv("DTYPE_RANDOM_SEED");
    if (s != NULL)
        seed = strtoull(s, NULL, 0);
    int first = 0;
    s = getenv("DTYPE_RANDOM_FIRST");
    if (s != NULL)
        first = atoi(s);

    manifold = mtest_is_manifold();
    /* DTYPE_RANDOM_PORTABLE=1 runs only what MPICH handles, so that both libraries see the
     * same types */
    full = manifold && getenv("DTYPE_RANDOM_PORTABLE") == NULL;
    gen_t g = {.full = full};
    /* MPICH 5.0.2 ignores explicit bounds in a struct (see the header comment) */
    sticky = manifold;
    cs.seed = seed;
    for (int it = first; it < first + iters; it++) {
        /* each iteration has its own streams, so one can be rerun alone (DTYPE_RANDOM_FIRST) */
        g.r.s = seed * 0x100000001b3ull + (uint64_t)it;
        rng_t dr = {seed ^ ((uint64_t)it << 32) ^ 0x5eed};
        cs.iter = it;
        run_case(&g, &dr);
    }
    return mtest_finalize(0);
}
