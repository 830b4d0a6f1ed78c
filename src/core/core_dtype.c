/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: derived datatypes and the pack engine. Constructors build nodes of a tree whose
 * leaves are predefined types and compute the item's size, bounds and element count; commit
 * flattens an item into merged segments; pack and unpack copy any byte range of the packed
 * form of `count` items (the basis of pipelined sends); external32 walks the tree leaf by leaf
 * and converts to big-endian with the standard's sizes. See docs/design/datatype.md.
 */
#include "core.h"

#include <float.h>
#include <stdlib.h>
#include <string.h>

/* ---- leaf (predefined) properties -------------------------------------------------------- */

/* Layout of a predefined type for external32 and the true extent of pair types: up to two
 * components, each with its native offset and size, its external32 size, whether it is a
 * signed integer (for widening) and the unit to byte-swap (half the size for complex). */
typedef struct leaf_comp {
    int off, nsize, esize, is_signed, unit;
    int quad; /* long doubles: external32 has them as IEEE binary128 (x87_to_quad) */
} leaf_comp_t;

/* external32 gives a long double 16 bytes, IEEE binary128 (MPI-5.0 14.5.2). A host whose long
 * double is that format only swaps bytes; an x87 host converts (x87_to_quad); others have no
 * conversion. */
#if LDBL_MANT_DIG == 64 && LDBL_MAX_EXP == 16384
#define LONG_DOUBLE_ESIZE 16
#define LONG_DOUBLE_X87   1
#elif LDBL_MANT_DIG == 113
#define LONG_DOUBLE_ESIZE 16
#define LONG_DOUBLE_X87   0
#else
#define LONG_DOUBLE_ESIZE 0
#define LONG_DOUBLE_X87   0
#endif

static int leaf_layout(MPI_Datatype t, leaf_comp_t comps[2])
{
    const mf_dtype_info_t *info = mf_dtype_predefined(t);
    int s = info->size;
    leaf_comp_t one = {0, s, s, 0, s, 0};
    if (t == MPI_C_FLOAT_COMPLEX || t == MPI_CXX_FLOAT_COMPLEX || t == MPI_C_DOUBLE_COMPLEX ||
        t == MPI_CXX_DOUBLE_COMPLEX || t == MPI_COMPLEX || t == MPI_DOUBLE_COMPLEX ||
        t == MPI_COMPLEX4 || t == MPI_COMPLEX8 || t == MPI_COMPLEX16 || t == MPI_COMPLEX32)
        one.unit = s / 2;
    if (t == MPI_LONG) {
        one.esize = 4;
        one.is_signed = 1;
    } else if (t == MPI_UNSIGNED_LONG) {
        one.esize = 4;
    } else if (t == MPI_WCHAR) {
        one.esize = 2; /* the external32 table's size */
    } else if (t == MPI_LONG_DOUBLE || t == MPI_C_LONG_DOUBLE_COMPLEX ||
               t == MPI_CXX_LONG_DOUBLE_COMPLEX) {
        one.esize = LONG_DOUBLE_ESIZE * (s / (int)sizeof(long double));
        one.unit = (int)sizeof(long double);
        one.quad = LONG_DOUBLE_X87;
    }
    if (info->nbasic != 2) {
        comps[0] = one;
        return 1;
    }
    /* pair types: the first component's size, the int (or twin) after it at its alignment */
    int s1 = t == MPI_FLOAT_INT || t == MPI_2INT || t == MPI_2REAL || t == MPI_2INTEGER ? 4
             : t == MPI_SHORT_INT                                                       ? 2
             : t == MPI_LONG_DOUBLE_INT                                                 ? 16
                                                                                        : 8;
    int s2 = info->size - s1;
    int off2 = (s1 + s2 - 1) / s2 * s2;
    comps[0] = (leaf_comp_t){0, s1, s1, 0, s1, 0};
    comps[1] = (leaf_comp_t){off2, s2, s2, 0, s2, 0};
    if (t == MPI_LONG_DOUBLE_INT) {
        comps[0].esize = LONG_DOUBLE_ESIZE;
        comps[0].quad = LONG_DOUBLE_X87;
    }
    if (t == MPI_LONG_INT)
        comps[0] = (leaf_comp_t){0, s1, 4, 1, s1, 0}; /* a long, as MPI_LONG: 4 bytes */
    return 2;
}

static int leaf_align(MPI_Datatype t)
{
    leaf_comp_t c[2];
    int n = leaf_layout(t, c), a = 1;
    for (int i = 0; i < n; i++)
        a = c[i].unit > a ? c[i].unit : a;
    return a > 16 ? 16 : a;
}

mf_status_t mf_dtype_props(MPI_Datatype dt, mf_dtype_props_t *p)
{
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d != NULL) {
        *p = (mf_dtype_props_t){d->size,   d->psize,   d->nelems,  d->lb,
                                d->extent, d->true_lb, d->true_ub, atomic_load(&d->committed),
                                1,         d->markers};
        return MF_OK;
    }
    const mf_dtype_info_t *info = mf_dtype_predefined(dt);
    if (info == NULL || info->size <= 0)
        return MF_ERR_INVALID;
    /* A pair type's true extent ends with its second component, before the trailing padding. */
    MPI_Aint true_ub = info->extent;
    if (info->direct <= 0) {
        leaf_comp_t c[2];
        leaf_layout(dt, c);
        true_ub = c[1].off + c[1].nsize;
    }
    *p = (mf_dtype_props_t){info->size, info->size, info->nbasic, 0, info->extent, 0, true_ub, 1,
                            0,          0};
    return MF_OK;
}

/* ---- pair types with padding ------------------------------------------------------------- */

/* MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT and MPI_LONG_DOUBLE_INT lie in memory as their C
 * struct, padding included, but pack to their size, as a struct type of the same signature
 * does (MPI-5.0 3.3: the type signature alone decides what matches). Each has a twin, a
 * committed derived type of its two components at their native offsets with the pair's
 * extent, which the pack engine and the paths of derived types take in its place. Made at the
 * first use, never freed. */
static mf_dtype_t *pair_twins[256];
static pthread_once_t pair_twins_once = PTHREAD_ONCE_INIT;

static void pair_twins_make(void)
{
    for (uintptr_t v = 0x200; v <= 0x2ff; v++) {
        MPI_Datatype t = (MPI_Datatype)v;
        const mf_dtype_info_t *info = mf_dtype_predefined(t);
        if (info == NULL || info->size <= 0 || info->direct > 0)
            continue;
        leaf_comp_t c[2];
        leaf_layout(t, c); /* two components: only pair types have padding */
        MPI_Count lens[2] = {c[0].nsize, c[1].nsize};
        MPI_Aint disps[2] = {c[0].off, c[1].off};
        MPI_Datatype bytes = MPI_BYTE;
        mf_dtype_t *parts = NULL, *twin = NULL;
        if (mf_dtype_create_list(2, lens, disps, &bytes, 1, MPI_COMBINER_HINDEXED, &parts) !=
                MF_OK ||
            mf_dtype_create_resized(parts, 0, info->extent, MPI_COMBINER_RESIZED, &twin) != MF_OK ||
            mf_dtype_commit(twin) != MF_OK)
            mf_abort(MPI_ERR_NO_MEM, "cannot build the layout of a pair type");
        mf_dtype_release(parts); /* the twin holds it */
        pair_twins[v & 0xff] = twin;
    }
}

mf_dtype_t *mf_dtype_pair_twin(MPI_Datatype dt)
{
    const mf_dtype_info_t *info = mf_dtype_predefined(dt);
    if (info == NULL || info->size <= 0 || info->direct > 0)
        return NULL;
    pthread_once(&pair_twins_once, pair_twins_make);
    return pair_twins[(uintptr_t)dt & 0xff];
}

/* The alignment a struct's extent is rounded to (bounds_set): its most strictly aligned entry's.
 * Kept in every derived type at construction, so no constructor walks the types below. */
static int type_align(MPI_Datatype t)
{
    mf_dtype_t *d = mf_dtype_get(t);
    return d != NULL ? d->align : leaf_align(t);
}

/* Depth and alignment of a new type from one more child's (blocks of it non-empty or not). */
static void inherit(mf_dtype_t *d, MPI_Datatype child, int nonempty)
{
    mf_dtype_t *c = mf_dtype_get(child);
    int depth = (c != NULL ? c->depth : 0) + 1, align = nonempty ? type_align(child) : 1;
    d->depth = depth > d->depth ? depth : d->depth;
    d->align = align > d->align ? align : d->align;
}

/* ---- lifetime ---------------------------------------------------------------------------- */

void mf_dtype_retain(MPI_Datatype dt)
{
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d != NULL)
        atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
}

/* Freed types, kept for reuse (dtype_destroy). */
static struct {
    pthread_mutex_t lock;
    mf_dtype_t *free_list;
} dtype_pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void dtype_destroy(mf_dtype_t *d)
{
    MPI_Count nchild = d->node == MF_DT_NODE_LIST ? d->nblocks : 1;
    for (MPI_Count i = 0; d->children != NULL && i < nchild; i++)
        mf_dtype_release(d->children[i]);
    for (MPI_Count i = 0; i < d->ntypes; i++)
        mf_dtype_release(d->c_types[i]);
    free(d->children);
    free(d->blocklens);
    free(d->disps);
    free(d->segs);
    free(d->runs);
    free(d->c_ints);
    free(d->c_addrs);
    free(d->c_counts);
    free(d->c_types);
    pthread_mutex_destroy(&d->commit_lock);
    pthread_mutex_destroy(&d->name_lock);
    mf_handle_forget(d); /* its MPI_Type_toint value, if it had one, is free again */
    /* The object itself is kept for the next type, never unmapped, so a stale handle reads
     * as freed (MPI_ERR_TYPE) instead of being read after free, as for operations. */
    d->kind = MF_KIND_FREED;
    pthread_mutex_lock(&dtype_pool.lock);
    d->next_free = dtype_pool.free_list;
    dtype_pool.free_list = d;
    pthread_mutex_unlock(&dtype_pool.lock);
}

void mf_dtype_release(MPI_Datatype dt)
{
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d != NULL && atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1)
        dtype_destroy(d);
}

void mf_dtype_retain_for_user(MPI_Datatype dt)
{
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d != NULL) {
        atomic_fetch_add_explicit(&d->refs, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&d->user_refs, 1, memory_order_relaxed);
    }
}

/* The user's count is kept apart from the references of parent types and operations: a copy of
 * a handle freed once too often would otherwise take a parent's reference, and the type would be
 * recycled under the parent. */
int mf_dtype_user_free(mf_dtype_t *d)
{
    int n = atomic_load_explicit(&d->user_refs, memory_order_relaxed);
    do {
        if (n == 0)
            return 0;
    } while (!atomic_compare_exchange_weak_explicit(&d->user_refs, &n, n - 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    mf_dtype_release_held(d);
    return 1;
}

void mf_dtype_release_last(mf_dtype_t *d)
{
    dtype_destroy(d);
}

static mf_dtype_t *dtype_alloc(int node, MPI_Count nchild, int combiner)
{
    MPI_Datatype *children =
        mf_calloc((size_t)(nchild > 0 ? nchild : 1), sizeof(MPI_Datatype), "datatype");
    if (children == NULL)
        return NULL;
    pthread_mutex_lock(&dtype_pool.lock);
    mf_dtype_t *d = dtype_pool.free_list;
    if (d != NULL)
        dtype_pool.free_list = d->next_free;
    pthread_mutex_unlock(&dtype_pool.lock);
    if (d != NULL)
        memset(d, 0, sizeof(*d));
    else if ((d = mf_calloc(1, sizeof(*d), "datatype")) == NULL) {
        free(children);
        return NULL;
    }
    d->children = children;
    d->kind = MF_KIND_DATATYPE;
    atomic_init(&d->refs, 1);
    atomic_init(&d->user_refs, 1);
    atomic_init(&d->committed, 0);
    d->node = node;
    d->align = 1;
    d->combiner = combiner;
    pthread_mutex_init(&d->commit_lock, NULL);
    pthread_mutex_init(&d->name_lock, NULL);
    return d;
}

/* ---- bounds ------------------------------------------------------------------------------ */

typedef struct bounds {
    int any;
    int overflow; /* a bound does not fit an MPI_Aint */
    MPI_Aint lb, ub;
    int many; /* mlb/mub hold the bounds of children with explicit markers */
    MPI_Aint mlb, mub;
    int tany; /* tlb/tub hold data: children without any (only bounds) leave them */
    MPI_Aint tlb, tub;
} bounds_t;

/* x + y + z, noting an overflow in *ovf. */
static MPI_Aint add3(MPI_Aint x, MPI_Aint y, MPI_Aint z, int *ovf)
{
    MPI_Aint r;
    *ovf |= __builtin_add_overflow(x, y, &r) | __builtin_add_overflow(r, z, &r);
    return r;
}

/* a * b * c (>= 0 counts and sizes), noting an overflow in *ovf. */
static MPI_Count mul3(MPI_Count a, MPI_Count b, MPI_Count c, int *ovf)
{
    MPI_Count r;
    *ovf |= __builtin_mul_overflow(a, b, &r) | __builtin_mul_overflow(r, c, &r);
    return r;
}

/* Account for `b` consecutive items of a child (props cp) starting at byte displacement disp. */
static void bounds_add(bounds_t *bd, MPI_Aint disp, MPI_Count b, const mf_dtype_props_t *cp)
{
    /* An empty child adds nothing, unless it carries bounds of its own (resized): those
     * markers count, its data-less true bounds do not (below). */
    if (b <= 0 || (cp->size == 0 && cp->extent == 0 && !cp->markers))
        return;
    MPI_Aint span;
    int ovf = __builtin_mul_overflow((MPI_Aint)(b - 1), cp->extent, &span);
    MPI_Aint lo = span < 0 ? span : 0, hi = span > 0 ? span : 0;
    MPI_Aint lb = add3(disp, cp->lb, lo, &ovf),
             ub = add3(add3(disp, cp->lb, cp->extent, &ovf), hi, 0, &ovf);
    MPI_Aint tlb = add3(disp, cp->true_lb, lo, &ovf), tub = add3(disp, cp->true_ub, hi, &ovf);
    bd->overflow |= ovf;
    if (cp->markers) {
        bd->mlb = !bd->many || lb < bd->mlb ? lb : bd->mlb;
        bd->mub = !bd->many || ub > bd->mub ? ub : bd->mub;
        bd->many = 1;
    }
    bd->lb = !bd->any || lb < bd->lb ? lb : bd->lb;
    bd->ub = !bd->any || ub > bd->ub ? ub : bd->ub;
    bd->any = 1;
    if (cp->size == 0)
        return;
    bd->tlb = !bd->tany || tlb < bd->tlb ? tlb : bd->tlb;
    bd->tub = !bd->tany || tub > bd->tub ? tub : bd->tub;
    bd->tany = 1;
}

/* MF_ERR_OVERFLOW when the bounds, the extent or the true extent do not fit an MPI_Aint. */
static mf_status_t bounds_set(mf_dtype_t *d, const bounds_t *bd)
{
    MPI_Aint true_extent;
    if (!bd->any)
        return MF_OK; /* an empty type: everything 0 */
    /* Markers win (MPI-5.0 5.1.7): when a child carries explicit bounds, the lb is the lowest
     * lb marker and the ub the highest ub marker, whatever elements of other children lie
     * beyond them, and no epsilon is added. (MPICH 5.0.2 takes the elements too.) */
    MPI_Aint lb = bd->many ? bd->mlb : bd->lb, ub = bd->many ? bd->mub : bd->ub;
    d->markers = bd->many;
    if (bd->overflow || __builtin_sub_overflow(ub, lb, &d->extent) ||
        (bd->tany && __builtin_sub_overflow(bd->tub, bd->tlb, &true_extent)))
        return MF_ERR_OVERFLOW;
    d->lb = lb;
    d->true_lb = bd->tany ? bd->tlb : 0;
    d->true_ub = bd->tany ? bd->tub : 0;
    if (d->combiner == MPI_COMBINER_STRUCT && !bd->many) {
        /* The standard's epsilon: a struct's extent is rounded up to the alignment of its most
         * strictly aligned member, so that arrays of it keep members aligned (MPI-5.0 5.1.6). */
        int a = type_align(d);
        MPI_Aint rem = d->extent % a;
        if (rem != 0 && __builtin_add_overflow(d->extent, a - rem, &d->extent))
            return MF_ERR_OVERFLOW;
    }
    return MF_OK;
}

mf_status_t mf_dtype_create_vector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride_bytes,
                                   MPI_Datatype child, int combiner, mf_dtype_t **dt_p)
{
    mf_dtype_props_t cp = {0};
    if (mf_dtype_props(child, &cp) != MF_OK)
        return MF_ERR_INVALID;
    mf_dtype_t *d = dtype_alloc(MF_DT_NODE_VECTOR, 1, combiner);
    if (d == NULL)
        return MF_ERR_NO_MEMORY;
    d->nblocks = count;
    d->blocklen = blocklen;
    d->stride = stride_bytes;
    d->children[0] = child;
    mf_dtype_retain(child);
    inherit(d, child, cp.size > 0 && count > 0 && blocklen > 0);
    int ovf = 0;
    d->size = mul3(count, blocklen, cp.size, &ovf);
    d->psize = mul3(count, blocklen, cp.psize, &ovf);
    d->nelems = mul3(count, blocklen, cp.nelems, &ovf);
    bounds_t bd = {0};
    if (count > 0) {
        MPI_Aint last;
        bd.overflow = __builtin_mul_overflow((MPI_Aint)(count - 1), stride_bytes, &last);
        bounds_add(&bd, 0, blocklen, &cp);
        bounds_add(&bd, last, blocklen, &cp);
    }
    mf_status_t st = ovf ? MF_ERR_OVERFLOW : bounds_set(d, &bd);
    if (st != MF_OK) {
        mf_dtype_release(d);
        return st;
    }
    *dt_p = d;
    return MF_OK;
}

mf_status_t mf_dtype_create_list(MPI_Count count, const MPI_Count *blocklens, const MPI_Aint *disps,
                                 const MPI_Datatype *children, int one_child, int combiner,
                                 mf_dtype_t **dt_p)
{
    mf_dtype_t *d = dtype_alloc(MF_DT_NODE_LIST, count, combiner);
    if (d == NULL)
        return MF_ERR_NO_MEMORY;
    size_t n = (size_t)(count > 0 ? count : 1);
    d->blocklens = mf_malloc(n * sizeof(MPI_Count), "datatype");
    d->disps = mf_malloc(n * sizeof(MPI_Aint), "datatype");
    if (d->blocklens == NULL || d->disps == NULL) {
        d->nblocks = 0;
        dtype_destroy(d);
        return MF_ERR_NO_MEMORY;
    }
    d->nblocks = count;
    bounds_t bd = {0};
    int ovf = 0;
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Datatype c = children[one_child ? 0 : i];
        mf_dtype_props_t cp = {0};
        if (mf_dtype_props(c, &cp) != MF_OK) {
            d->nblocks = i;
            dtype_destroy(d);
            return MF_ERR_INVALID;
        }
        d->children[i] = c;
        mf_dtype_retain(c);
        inherit(d, c, cp.size > 0 && blocklens[i] > 0);
        d->blocklens[i] = blocklens[i];
        d->disps[i] = disps[i];
        d->size = add3(d->size, mul3(blocklens[i], cp.size, 1, &ovf), 0, &ovf);
        d->psize = add3(d->psize, mul3(blocklens[i], cp.psize, 1, &ovf), 0, &ovf);
        d->nelems = add3(d->nelems, mul3(blocklens[i], cp.nelems, 1, &ovf), 0, &ovf);
        bounds_add(&bd, disps[i], blocklens[i], &cp);
    }
    mf_status_t st = ovf ? MF_ERR_OVERFLOW : bounds_set(d, &bd);
    if (st != MF_OK) {
        mf_dtype_release(d);
        return st;
    }
    *dt_p = d;
    return MF_OK;
}

mf_status_t mf_dtype_create_resized(MPI_Datatype child, MPI_Aint lb, MPI_Aint extent, int combiner,
                                    mf_dtype_t **dt_p)
{
    mf_dtype_props_t cp = {0};
    if (mf_dtype_props(child, &cp) != MF_OK)
        return MF_ERR_INVALID;
    mf_dtype_t *d = dtype_alloc(MF_DT_NODE_RESIZED, 1, combiner);
    if (d == NULL)
        return MF_ERR_NO_MEMORY;
    d->children[0] = child;
    mf_dtype_retain(child);
    inherit(d, child, cp.size > 0);
    d->size = cp.size;
    d->psize = cp.psize;
    d->nelems = cp.nelems;
    d->lb = lb;
    d->extent = extent;
    /* A dup and a Fortran 90 type (MPI_Type_create_f90_*) stand for their child: its bounds,
     * not markers of their own (a struct of them would otherwise take those bounds alone). */
    int stands_for_child = combiner == MPI_COMBINER_DUP || combiner == MPI_COMBINER_F90_INTEGER ||
                           combiner == MPI_COMBINER_F90_REAL ||
                           combiner == MPI_COMBINER_F90_COMPLEX;
    d->markers = stands_for_child ? cp.markers : 1;
    d->true_lb = cp.true_lb;
    d->true_ub = cp.true_ub;
    MPI_Aint ub;
    if (__builtin_add_overflow(lb, extent, &ub)) {
        mf_dtype_release(d);
        return MF_ERR_OVERFLOW;
    }
    *dt_p = d;
    return MF_OK;
}

/* ---- subarray and darray: one pattern of blocks per dimension ---------------------------- */

typedef struct dim_pattern {
    MPI_Count nblocks;
    MPI_Count *lens;
    MPI_Aint *offs; /* in elements of this dimension */
} dim_pattern_t;

/* Build dimension by dimension from the fastest-varying one: each dimension is a list of blocks
 * of the inner type, resized to the dimension's full length, so the result spans the whole
 * global array (the standard's definition for both subarray and darray). */
static mf_status_t build_dims(int ndims, const MPI_Count *gsizes, const dim_pattern_t *pat,
                              int order, MPI_Datatype child, int combiner, mf_dtype_t **dt_p)
{
    mf_dtype_props_t cp = {0};
    if (mf_dtype_props(child, &cp) != MF_OK)
        return MF_ERR_INVALID;
    MPI_Datatype t = child;
    mf_dtype_retain(t);
    MPI_Aint stride = cp.extent;
    for (int k = 0; k < ndims; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        /* A dimension of one element taken whole adds a level and nothing else; skipping it
         * keeps the nesting shallow (at most 63 dimensions of 2 or more fit an MPI_Aint). */
        if (k < ndims - 1 && gsizes[i] == 1 && pat[i].nblocks == 1 && pat[i].lens[0] == 1 &&
            pat[i].offs[0] == 0)
            continue;
        MPI_Aint span; /* the whole dimension: the offsets below are smaller */
        if (__builtin_mul_overflow(stride, (MPI_Aint)gsizes[i], &span)) {
            mf_dtype_release(t);
            return MF_ERR_OVERFLOW;
        }
        MPI_Aint *disps = mf_malloc(sizeof(MPI_Aint) * (size_t)(pat[i].nblocks + 1), "datatype");
        if (disps == NULL) {
            mf_dtype_release(t);
            return MF_ERR_NO_MEMORY;
        }
        for (MPI_Count b = 0; b < pat[i].nblocks; b++)
            disps[b] = pat[i].offs[b] * stride;
        mf_dtype_t *list, *sized;
        mf_status_t st = mf_dtype_create_list(pat[i].nblocks, pat[i].lens, disps, &t, 1,
                                              MPI_COMBINER_HINDEXED, &list);
        free(disps);
        mf_dtype_release(t);
        if (st != MF_OK)
            return st;
        st = mf_dtype_create_resized(list, 0, span,
                                     k == ndims - 1 ? combiner : MPI_COMBINER_RESIZED, &sized);
        mf_dtype_release(list);
        if (st != MF_OK)
            return st;
        t = sized;
        stride *= (MPI_Aint)gsizes[i];
    }
    *dt_p = (mf_dtype_t *)t;
    return MF_OK;
}

mf_status_t mf_dtype_create_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                                     const MPI_Count *starts, int order, MPI_Datatype child,
                                     mf_dtype_t **dt_p)
{
    /* On the heap: ndims has no bound but memory (a million dimensions of size 1 are valid). */
    dim_pattern_t *pat = calloc((size_t)(ndims > 0 ? ndims : 1), sizeof(*pat));
    MPI_Aint *offs = calloc((size_t)(ndims > 0 ? ndims : 1), sizeof(*offs));
    mf_status_t st = MF_ERR_NO_MEMORY;
    if (pat != NULL && offs != NULL) {
        for (int i = 0; i < ndims; i++) {
            offs[i] = (MPI_Aint)starts[i];
            pat[i] = (dim_pattern_t){1, (MPI_Count *)&subsizes[i], &offs[i]};
        }
        st = build_dims(ndims, sizes, pat, order, child, MPI_COMBINER_SUBARRAY, dt_p);
    }
    free(pat);
    free(offs);
    return st;
}

mf_status_t mf_dtype_create_darray(int size, int rank, int ndims, const MPI_Count *gsizes,
                                   const int *distribs, const int *dargs, const int *psizes,
                                   int order, MPI_Datatype child, mf_dtype_t **dt_p)
{
    (void)size;
    dim_pattern_t *pat = calloc((size_t)(ndims > 0 ? ndims : 1), sizeof(*pat));
    int *coords = calloc((size_t)(ndims > 0 ? ndims : 1), sizeof(*coords));
    if (pat == NULL || coords == NULL) {
        free(pat);
        free(coords);
        return MF_ERR_NO_MEMORY;
    }
    mf_status_t st = MF_OK;
    /* The process grid is row-major whatever the array order (MPI-5.0 5.1.4). */
    int r = rank;
    for (int i = ndims - 1; i >= 0; i--) {
        coords[i] = r % psizes[i];
        r /= psizes[i];
    }
    for (int i = 0; i < ndims && st == MF_OK; i++) {
        MPI_Count g = gsizes[i], p = psizes[i], c = coords[i], b;
        MPI_Count n = 1;
        if (distribs[i] == MPI_DISTRIBUTE_CYCLIC) {
            b = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[i];
            n = g / (p * b) + 1;
        }
        pat[i].lens = mf_calloc((size_t)n, sizeof(MPI_Count), "datatype");
        pat[i].offs = mf_calloc((size_t)n, sizeof(MPI_Aint), "datatype");
        if (pat[i].lens == NULL || pat[i].offs == NULL) {
            st = MF_ERR_NO_MEMORY;
            break;
        }
        if (distribs[i] == MPI_DISTRIBUTE_NONE) {
            pat[i].nblocks = 1;
            pat[i].lens[0] = g;
        } else if (distribs[i] == MPI_DISTRIBUTE_BLOCK) {
            b = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : dargs[i];
            MPI_Count s = c * b, len = g - s < b ? g - s : b;
            pat[i].nblocks = 1;
            pat[i].offs[0] = (MPI_Aint)s;
            pat[i].lens[0] = len > 0 ? len : 0;
        } else {
            b = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[i];
            for (MPI_Count s = c * b; s < g; s += p * b) {
                pat[i].offs[pat[i].nblocks] = (MPI_Aint)s;
                pat[i].lens[pat[i].nblocks++] = g - s < b ? g - s : b;
            }
        }
    }
    if (st == MF_OK)
        st = build_dims(ndims, gsizes, pat, order, child, MPI_COMBINER_DARRAY, dt_p);
    for (int i = 0; i < ndims; i++) {
        free(pat[i].lens);
        free(pat[i].offs);
    }
    free(pat);
    free(coords);
    return st;
}

mf_status_t mf_dtype_set_contents(mf_dtype_t *d, MPI_Count nints, const int *ints, MPI_Count naddrs,
                                  const MPI_Aint *addrs, MPI_Count ncounts, const MPI_Count *counts,
                                  MPI_Count ntypes, const MPI_Datatype *types)
{
    d->c_ints = mf_malloc(sizeof(int) * (size_t)(nints + 1), "datatype contents");
    d->c_addrs = mf_malloc(sizeof(MPI_Aint) * (size_t)(naddrs + 1), "datatype contents");
    d->c_counts = mf_malloc(sizeof(MPI_Count) * (size_t)(ncounts + 1), "datatype contents");
    d->c_types = mf_malloc(sizeof(MPI_Datatype) * (size_t)(ntypes + 1), "datatype contents");
    if (d->c_ints == NULL || d->c_addrs == NULL || d->c_counts == NULL || d->c_types == NULL)
        return MF_ERR_NO_MEMORY;
    if (nints > 0)
        memcpy(d->c_ints, ints, sizeof(int) * (size_t)nints);
    if (naddrs > 0)
        memcpy(d->c_addrs, addrs, sizeof(MPI_Aint) * (size_t)naddrs);
    if (ncounts > 0)
        memcpy(d->c_counts, counts, sizeof(MPI_Count) * (size_t)ncounts);
    for (MPI_Count i = 0; i < ntypes; i++) {
        d->c_types[i] = types[i];
        mf_dtype_retain(types[i]);
    }
    d->nints = nints;
    d->naddrs = naddrs;
    d->ncounts = ncounts;
    d->ntypes = ntypes;
    d->large = ncounts > 0;
    return MF_OK;
}

/* ---- flattening -------------------------------------------------------------------------- */

/* Commit flattens an item into runs, the run-length form of its segments: a run is n segments
 * of one length at one stride. Appending a run merges what touches exactly as a list of
 * segments would (a segment that touches the previous one extends it), and extends the last run
 * when the new segments continue its length and stride, so the runs always describe the same
 * merged segments a segment-by-segment walk would list. A layout built from regular parts
 * (vector, hvector, contiguous, subarray rows, nested vectors that continue each other) is then
 * computed in closed form without visiting its blocks, and ends as a single run.
 *
 * The list under construction costs what a list of segments does: an entry is a segment
 * (offset, length) whose third word, the packed position once stored, holds 0 for a single
 * segment or 1 + the index of its repeat (count and stride) in a side array. So an irregular type
 * listed segment by segment is stored in place, with no copy. */
typedef struct flat_rep {
    MPI_Count n;
    MPI_Aint stride;
} flat_rep_t;

#define FLAT_REPS_LOCAL 4

/* (Never copied: reps may point at rep_local, in the structure itself.) */
typedef struct flat {
    mf_dtype_seg_t *ents; /* pos: 0, or 1 + index in reps */
    MPI_Count n, cap;
    flat_rep_t *reps; /* NULL, rep_local, or on the heap */
    MPI_Count nreps, repcap;
    int failed;
    flat_rep_t rep_local[FLAT_REPS_LOCAL]; /* a small type's repeats, without a malloc */
} flat_t;

static inline mf_dtype_run_t flat_get(const flat_t *f, MPI_Count i)
{
    const mf_dtype_seg_t *e = &f->ents[i];
    if (e->pos == 0)
        return (mf_dtype_run_t){e->off, e->len, 0, 1, 0};
    const flat_rep_t *r = &f->reps[e->pos - 1];
    return (mf_dtype_run_t){e->off, e->len, 0, r->n, r->stride};
}

/* Set the repeat of entry e (the last one) to n segments stride apart. */
static void flat_set_rep(flat_t *f, mf_dtype_seg_t *e, MPI_Count n, MPI_Aint stride)
{
    if (n == 1) {
        if (e->pos != 0 && e->pos == f->nreps) /* the last repeat: its slot is free again */
            f->nreps--;
        e->pos = 0;
        return;
    }
    if (e->pos == 0) {
        if (f->reps == NULL) {
            f->reps = f->rep_local;
            f->repcap = FLAT_REPS_LOCAL;
        }
        if (f->nreps == f->repcap) {
            MPI_Count cap = 4 * f->repcap;
            flat_rep_t *r = f->reps == f->rep_local ? malloc(sizeof(*r) * (size_t)cap)
                                                    : realloc(f->reps, sizeof(*r) * (size_t)cap);
            if (r == NULL) {
                f->failed = 1;
                return;
            }
            if (f->reps == f->rep_local)
                memcpy(r, f->rep_local, sizeof(f->rep_local));
            f->reps = r;
            f->repcap = cap;
        }
        e->pos = ++f->nreps;
    }
    f->reps[e->pos - 1] = (flat_rep_t){n, stride};
}

static void flat_push(flat_t *f, MPI_Aint off, MPI_Count len, MPI_Count n, MPI_Aint stride)
{
    if (f->n == f->cap) {
        MPI_Count cap = f->cap > 0 ? 2 * f->cap : 16;
        mf_dtype_seg_t *s = realloc(f->ents, sizeof(*s) * (size_t)cap);
        if (s == NULL) {
            f->failed = 1;
            return;
        }
        f->ents = s;
        f->cap = cap;
    }
    mf_dtype_seg_t *e = &f->ents[f->n++];
    *e = (mf_dtype_seg_t){off, len, 0};
    if (n > 1)
        flat_set_rep(f, e, n, stride);
}

/* Append n segments of len bytes, stride apart from off, after what f holds. */
static void flat_run(flat_t *f, MPI_Aint off, MPI_Count len, MPI_Count n, MPI_Aint stride)
{
    if (len <= 0 || n <= 0 || f->failed)
        return;
    if (n == 1) {
        stride = 0;
    } else if (stride == (MPI_Aint)len) {
        len *= n; /* segments that touch are one */
        n = 1;
        stride = 0;
    }
    if (f->n > 0) {
        mf_dtype_seg_t *e = &f->ents[f->n - 1];
        mf_dtype_run_t l = flat_get(f, f->n - 1);
        MPI_Aint last = l.off + (MPI_Aint)(l.n - 1) * l.stride;
        if (last + (MPI_Aint)l.len == off) {
            /* The last segment and the first new one touch: they become one segment, which
             * touches neither the segment before it nor the next new one (a run's stride is
             * never its length), so this recurses at most once each way. */
            if (l.n == 1) {
                flat_set_rep(f, e, 1, 0);
                f->n--;
            } else {
                flat_set_rep(f, e, l.n - 1, l.stride);
            }
            flat_run(f, last, l.len + len, 1, 0);
            if (n > 1)
                flat_run(f, off + stride, len, n - 1, stride);
            return;
        }
        MPI_Aint gap = off - last;
        if (l.len == len && (l.n == 1 || l.stride == gap) && (n == 1 || stride == gap)) {
            flat_set_rep(f, e, l.n + n, gap);
            return;
        }
    }
    flat_push(f, off, len, n, stride);
}

static void flat_free(flat_t *f)
{
    free(f->ents);
    if (f->reps != f->rep_local)
        free(f->reps);
}

/* An empty flat_t, without clearing rep_local. */
static inline void flat_init(flat_t *f)
{
    f->ents = NULL;
    f->n = f->cap = 0;
    f->reps = NULL;
    f->nreps = f->repcap = 0;
    f->failed = 0;
}

/* The runs of one item of a type, read from where they are: a committed type's list or runs, a
 * flattening (of an uncommitted type, or of a vector's block), or a single run. */
typedef struct flat_src {
    const mf_dtype_run_t *runs;
    const mf_dtype_seg_t *segs;
    const flat_t *flat;
    MPI_Count n;
    mf_dtype_run_t one;
    flat_t tmp; /* when flat points here: freed by src_close */
} flat_src_t;

static inline mf_dtype_run_t src_run(const flat_src_t *s, MPI_Count k)
{
    if (s->runs != NULL)
        return s->runs[k];
    if (s->segs != NULL)
        return (mf_dtype_run_t){s->segs[k].off, s->segs[k].len, 0, 1, 0};
    if (s->flat != NULL)
        return flat_get(s->flat, k);
    return s->one;
}

static void flat_type(flat_t *f, MPI_Datatype t, MPI_Aint off);

/* Read the flattening in s->tmp (a failure fails f). */
static void src_use_tmp(flat_src_t *s, flat_t *f)
{
    if (s->tmp.failed)
        f->failed = 1;
    s->flat = &s->tmp;
    s->n = s->tmp.failed ? 0 : s->tmp.n;
}

static void src_open(flat_src_t *s, MPI_Datatype c, flat_t *f)
{
    s->runs = NULL;
    s->segs = NULL;
    s->flat = NULL;
    mf_dtype_t *cd = mf_dtype_get(c);
    if (cd == NULL && (cd = mf_dtype_pair_twin(c)) == NULL) {
        const mf_dtype_info_t *info = mf_dtype_predefined(c);
        s->one = (mf_dtype_run_t){0, info->extent, 0, 1, 0};
        s->n = 1;
        return;
    }
    if (!atomic_load_explicit(&cd->committed, memory_order_acquire)) {
        flat_init(&s->tmp);
        flat_type(&s->tmp, cd, 0);
        src_use_tmp(s, f);
    } else if (cd->runs != NULL) {
        s->runs = cd->runs;
        s->n = cd->nruns;
    } else if (cd->vlen > 0) {
        s->one = (mf_dtype_run_t){cd->segs[0].off, cd->vlen, 0, cd->nsegs, cd->vstride};
        s->n = 1;
    } else {
        s->segs = cd->segs;
        s->n = cd->nsegs;
    }
}

static void src_close(flat_src_t *s)
{
    if (s->flat == &s->tmp)
        flat_free(&s->tmp);
    s->flat = NULL;
}

/* `b` copies of the runs of s, `ext` bytes apart from off. A single run repeated is one run
 * whenever the copies continue it (a dense run, one segment per copy, or a run whose stride
 * leads from one copy to the next); anything else is appended copy by copy. */
static void flat_copies(flat_t *f, const flat_src_t *s, MPI_Aint ext, MPI_Aint off, MPI_Count b)
{
    if (b <= 0 || s->n == 0)
        return;
    if (s->n == 1) {
        mf_dtype_run_t r = src_run(s, 0);
        MPI_Aint span;
        if (r.n == 1 && (MPI_Aint)r.len == ext) {
            flat_run(f, off + r.off, b * r.len, 1, 0);
            return;
        }
        if (b == 1 || r.n == 1) {
            flat_run(f, off + r.off, r.len, b == 1 ? r.n : b, b == 1 ? r.stride : ext);
            return;
        }
        if (!__builtin_mul_overflow((MPI_Aint)r.n, r.stride, &span) && span == ext) {
            flat_run(f, off + r.off, r.len, r.n * b, r.stride);
            return;
        }
    }
    for (MPI_Count j = 0; j < b && !f->failed; j++)
        for (MPI_Count k = 0; k < s->n; k++) {
            mf_dtype_run_t r = src_run(s, k);
            flat_run(f, off + (MPI_Aint)j * ext + r.off, r.len, r.n, r.stride);
        }
}

/* `b` consecutive items of child c at off. */
static void flat_blocks(flat_t *f, MPI_Datatype c, MPI_Aint off, MPI_Count b)
{
    mf_dtype_props_t cp = {0};
    mf_dtype_props(c, &cp);
    flat_src_t s;
    src_open(&s, c, f);
    flat_copies(f, &s, cp.extent, off, b);
    src_close(&s);
}

/* When an item of d is one item of a single child (contiguous(1), a struct or indexed type of
 * one block of 1, resized, dup), that child and its displacement. */
static int one_item(const mf_dtype_t *d, MPI_Datatype *child_p, MPI_Aint *disp_p)
{
    switch (d->node) {
    case MF_DT_NODE_VECTOR:
        *disp_p = 0;
        *child_p = d->children[0];
        return d->nblocks == 1 && d->blocklen == 1;
    case MF_DT_NODE_LIST:
        *disp_p = d->nblocks == 1 ? d->disps[0] : 0;
        *child_p = d->children[0];
        return d->nblocks == 1 && d->blocklens[0] == 1;
    default:
        *disp_p = 0;
        *child_p = d->children[0];
        return 1;
    }
}

static void flat_type(flat_t *f, MPI_Datatype t, MPI_Aint off)
{
    mf_dtype_t *d = mf_dtype_get(t), *cd;
    MPI_Datatype c;
    MPI_Aint disp;
    /* Wrappers of one item of an uncommitted type are flattened as that type, in place: a chain
     * of L of them over B blocks costs B, not L copies of B, and no stack per level. */
    while (d != NULL && one_item(d, &c, &disp) && (cd = mf_dtype_get(c)) != NULL &&
           !atomic_load_explicit(&cd->committed, memory_order_acquire)) {
        d = cd;
        t = c;
        off += disp;
    }
    if (d == NULL) {
        flat_blocks(f, t, off, 1);
        return;
    }
    switch (d->node) {
    case MF_DT_NODE_VECTOR:
        if (d->nblocks == 1) {
            flat_blocks(f, d->children[0], off, d->blocklen);
        } else if (d->nblocks > 1) {
            /* one block (blocklen items of the child), then nblocks copies of it */
            flat_src_t blk;
            blk.runs = NULL;
            blk.segs = NULL;
            flat_init(&blk.tmp);
            flat_blocks(&blk.tmp, d->children[0], 0, d->blocklen);
            src_use_tmp(&blk, f);
            flat_copies(f, &blk, d->stride, off, d->nblocks);
            src_close(&blk);
        }
        break;
    case MF_DT_NODE_LIST: {
        /* the children of an indexed type are all the same: opened once */
        flat_src_t s;
        s.flat = NULL;
        MPI_Datatype cur = NULL;
        mf_dtype_props_t cp = {0};
        for (MPI_Count i = 0; i < d->nblocks && !f->failed; i++) {
            if (d->blocklens[i] <= 0)
                continue;
            if (cur == NULL || d->children[i] != cur) {
                src_close(&s);
                cur = d->children[i];
                src_open(&s, cur, f);
                mf_dtype_props(cur, &cp);
            }
            flat_copies(f, &s, cp.extent, off + d->disps[i], d->blocklens[i]);
        }
        src_close(&s);
        break;
    }
    default: flat_blocks(f, d->children[0], off, 1); break;
    }
}

/* Pick the whole-message copies of a type being committed (below, with the pack loops). */
static void choose_copy(mf_dtype_t *d);

/* Recognise an item of equal blocks at a fixed stride (vector, hvector, subarray rows,
 * indexed_block with even gaps ...), nested or not: the flattened segments already merged
 * whatever touches, so checking them catches every constructor that produces this shape. */
static void find_regular(mf_dtype_t *d)
{
    d->vlen = 0;
    d->vstride = 0;
    if (d->nsegs == 0)
        return;
    if (d->runs != NULL) {
        if (d->nruns == 1) {
            d->vlen = d->runs[0].len;
            d->vstride = d->runs[0].stride;
        }
        return;
    }
    MPI_Count len = d->segs[0].len;
    MPI_Aint stride = d->nsegs > 1 ? d->segs[1].off - d->segs[0].off : 0;
    for (MPI_Count i = 1; i < d->nsegs; i++)
        if (d->segs[i].len != len || d->segs[i].off - d->segs[i - 1].off != stride)
            return;
    d->vlen = len;
    d->vstride = stride;
}

/* A type keeps its runs instead of listing its segments when it has more than
 * MF_DTYPE_SEGS_LISTED segments and they average at least this many per run (the list's
 * segment walk is the faster loop for short runs). */
#define RUNS_KEEP_MIN 8
_Static_assert(MF_DTYPE_SEGS_LISTED >= MF_DTYPE_IOV_MAX, "an iovec's type lists its segments");

/* Store the flattening in d: as runs (segs then holds the first segment only), or as the list
 * of segments, in place. */
static mf_status_t flat_store(mf_dtype_t *d, flat_t *f)
{
    MPI_Count nsegs = 0, pos = 0;
    int single = 1;
    for (MPI_Count i = 0; i < f->n; i++) {
        mf_dtype_run_t r = flat_get(f, i);
        nsegs += r.n;
        pos += r.n * r.len;
        single &= r.n == 1;
    }
    MF_ASSERT(pos == d->psize);
    if (nsegs > MF_DTYPE_SEGS_LISTED && nsegs / RUNS_KEEP_MIN >= f->n) {
        mf_dtype_run_t *runs = mf_malloc(sizeof(*runs) * (size_t)f->n, "datatype");
        d->segs = mf_malloc(sizeof(mf_dtype_seg_t), "datatype");
        if (runs == NULL || d->segs == NULL) {
            free(runs);
            free(d->segs);
            d->segs = NULL;
            return MF_ERR_NO_MEMORY;
        }
        pos = 0;
        for (MPI_Count i = 0; i < f->n; i++) {
            runs[i] = flat_get(f, i);
            runs[i].pos = pos;
            pos += runs[i].n * runs[i].len;
        }
        d->segs[0] = (mf_dtype_seg_t){runs[0].off, runs[0].len, 0};
        d->runs = runs;
        d->nruns = f->n;
        d->nsegs = nsegs;
        return MF_OK;
    }
    /* The list, built in the entries' array: each run is spread over its segments from the
     * last run back (segment k of run i lands at or after index i, so no entry is overwritten
     * before it is read), then the third words become packed positions. */
    mf_dtype_seg_t *segs = f->ents;
    if (nsegs > f->cap) {
        segs = realloc(f->ents, sizeof(*segs) * (size_t)nsegs);
        if (segs == NULL)
            return MF_ERR_NO_MEMORY;
        f->ents = segs;
        f->cap = nsegs;
    }
    if (!single) {
        MPI_Count k = nsegs;
        for (MPI_Count i = f->n - 1; i >= 0; i--) {
            mf_dtype_run_t r = flat_get(f, i);
            for (MPI_Count j = r.n - 1; j >= 0; j--)
                segs[--k] = (mf_dtype_seg_t){r.off + (MPI_Aint)j * r.stride, r.len, 0};
        }
    }
    pos = 0;
    for (MPI_Count i = 0; i < nsegs; i++) {
        segs[i].pos = pos;
        pos += segs[i].len;
    }
    if (f->cap - nsegs > 256) { /* what doubling left unused, when it is worth a call */
        mf_dtype_seg_t *shrunk = realloc(segs, sizeof(*segs) * (size_t)(nsegs > 0 ? nsegs : 1));
        segs = shrunk != NULL ? shrunk : segs;
    }
    f->ents = NULL;
    d->segs = segs;
    d->nsegs = nsegs;
    return MF_OK;
}

mf_status_t mf_dtype_commit(mf_dtype_t *d)
{
    if (atomic_load_explicit(&d->committed, memory_order_acquire))
        return MF_OK;
    pthread_mutex_lock(&d->commit_lock);
    mf_status_t st = MF_OK;
    if (!atomic_load_explicit(&d->committed, memory_order_relaxed)) {
        flat_t f;
        flat_init(&f);
        flat_type(&f, d, 0);
        st = f.failed ? MF_ERR_NO_MEMORY : flat_store(d, &f);
        flat_free(&f);
        if (st == MF_OK) {
            find_regular(d);
            d->seg_min = 0;
            if (d->runs != NULL) {
                for (MPI_Count i = 0; i < d->nruns; i++)
                    if (i == 0 || d->runs[i].len < d->seg_min)
                        d->seg_min = d->runs[i].len;
            } else {
                for (MPI_Count i = 0; i < d->nsegs; i++)
                    if (i == 0 || d->segs[i].len < d->seg_min)
                        d->seg_min = d->segs[i].len;
            }
            choose_copy(d);
            atomic_store_explicit(&d->committed, 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&d->commit_lock);
    return st;
}

int mf_dtype_contiguous(MPI_Datatype dt, MPI_Count count, MPI_Aint *off_p)
{
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d == NULL)
        d = mf_dtype_pair_twin(dt);
    if (d == NULL) {
        *off_p = 0;
        return 1;
    }
    if (d->nsegs == 0 || count == 0) {
        *off_p = 0;
        return 1;
    }
    if (d->nsegs == 1 && (count == 1 || d->segs[0].len == d->extent)) {
        *off_p = d->segs[0].off;
        return 1;
    }
    return 0;
}

/* ---- pack and unpack --------------------------------------------------------------------- */

/* The copy loops are what hand-written packing compiles to: fixed-size blocks become plain
 * loads and stores (memcpy of a constant size), so a column of doubles costs one load and one
 * store per element, not a call. `dir` 0 packs (memory to packed), 1 unpacks. */
static inline void copy_small(char *dst, const char *src, size_t len)
{
    /* Up to 16 bytes with two possibly overlapping fixed-size copies: no call, no loop, and
     * never a byte outside [0, len) written. */
    if (len >= 8) {
        if (len <= 16) {
            memcpy(dst, src, 8);
            memcpy(dst + len - 8, src + len - 8, 8);
            return;
        }
        memcpy(dst, src, len);
    } else if (len >= 4) {
        memcpy(dst, src, 4);
        memcpy(dst + len - 4, src + len - 4, 4);
    } else {
        for (size_t i = 0; i < len; i++)
            dst[i] = src[i];
    }
}

/* Four blocks per iteration: the loop overhead (two pointer updates, a compare, a branch)
 * otherwise outweighs the one load and one store of a small element. */
static inline __attribute__((always_inline)) void blocks_fixed(char *mem, char *packed,
                                                               MPI_Count nb, MPI_Aint mstride,
                                                               MPI_Aint pstride, size_t len,
                                                               int dir)
{
    MPI_Count i = 0;
    if (dir == 0 && len == 8 && __builtin_constant_p(pstride) && pstride == 8) {
        /* packed back to back: two blocks per 16-byte store, as in mf_dtype_copy_inline */
        for (; i + 4 <= nb; i += 4, mem += 4 * mstride, packed += 32) {
            mf_dtype_pair_t lo = mf_dtype_pair_load(mem, mem + mstride);
            mf_dtype_pair_t hi = mf_dtype_pair_load(mem + 2 * mstride, mem + 3 * mstride);
            memcpy(packed, &lo, 16);
            memcpy(packed + 16, &hi, 16);
        }
        for (; i < nb; i++, mem += mstride, packed += 8)
            memcpy(packed, mem, 8);
    } else if (dir == 0) {
        for (; i + 4 <= nb; i += 4, mem += 4 * mstride, packed += 4 * pstride) {
            memcpy(packed, mem, len);
            memcpy(packed + pstride, mem + mstride, len);
            memcpy(packed + 2 * pstride, mem + 2 * mstride, len);
            memcpy(packed + 3 * pstride, mem + 3 * mstride, len);
        }
        for (; i < nb; i++, mem += mstride, packed += pstride)
            memcpy(packed, mem, len);
    } else {
        for (; i + 4 <= nb; i += 4, mem += 4 * mstride, packed += 4 * pstride) {
            memcpy(mem, packed, len);
            memcpy(mem + mstride, packed + pstride, len);
            memcpy(mem + 2 * mstride, packed + 2 * pstride, len);
            memcpy(mem + 3 * mstride, packed + 3 * pstride, len);
        }
        for (; i < nb; i++, mem += mstride, packed += pstride)
            memcpy(mem, packed, len);
    }
}

/* nb blocks of len bytes, mstride apart in memory and pstride apart in the packed buffer:
 * specialised by the common element sizes so each instance is a tight load/store loop. */
static void copy_blocks(char *mem, char *packed, MPI_Count nb, MPI_Aint mstride, MPI_Aint pstride,
                        MPI_Count len, int dir)
{
    switch (len) {
    case 1: blocks_fixed(mem, packed, nb, mstride, pstride, 1, dir); return;
    case 2: blocks_fixed(mem, packed, nb, mstride, pstride, 2, dir); return;
    case 4: blocks_fixed(mem, packed, nb, mstride, pstride, 4, dir); return;
    case 8: blocks_fixed(mem, packed, nb, mstride, pstride, 8, dir); return;
    case 12: blocks_fixed(mem, packed, nb, mstride, pstride, 12, dir); return;
    case 16: blocks_fixed(mem, packed, nb, mstride, pstride, 16, dir); return;
    case 24: blocks_fixed(mem, packed, nb, mstride, pstride, 24, dir); return;
    case 32: blocks_fixed(mem, packed, nb, mstride, pstride, 32, dir); return;
    default: break;
    }
    for (MPI_Count i = 0; i < nb; i++, mem += mstride, packed += pstride) {
        if (dir == 0)
            memcpy(packed, mem, (size_t)len);
        else
            memcpy(mem, packed, (size_t)len);
    }
}

static inline void copy_piece(char *mem, char *packed, MPI_Count n, int dir)
{
    if (dir == 0)
        copy_small(packed, mem, (size_t)n);
    else
        copy_small(mem, packed, (size_t)n);
}

/* A regular item (nsegs blocks of vlen bytes, vstride apart): a partial first block, whole
 * blocks in the specialised loop, a partial last block. When consecutive items continue the
 * same stride (a one-block item, or a resized vector) the message is one long run of blocks. */
static inline __attribute__((always_inline)) void copy_regular(const mf_dtype_t *d, MPI_Count count,
                                                               uintptr_t buf, char *packed,
                                                               MPI_Count start, MPI_Count end,
                                                               int dir)
{
    MPI_Count len = d->vlen, nb = d->nsegs;
    MPI_Aint stride = d->vstride, extent = d->extent;
    if (nb == 1 || stride * (MPI_Aint)nb == extent) {
        stride = nb == 1 ? extent : stride;
        nb *= count;
        extent = 0;
    }
    /* 64-bit divisions cost tens of cycles: a whole message (start 0) needs none */
    MPI_Count item = 0, blk = 0, skip = 0, left = end - start;
    if (start > 0) {
        MPI_Count in = start % (nb * len);
        item = start / (nb * len);
        blk = in / len;
        skip = in % len;
    }
    uintptr_t first = buf + (uintptr_t)d->segs[0].off;
    if (skip > 0) {
        MPI_Count n = len - skip < left ? len - skip : left;
        char *mem = (char *)(first + (uintptr_t)(item * extent + blk * stride + (MPI_Aint)skip));
        copy_piece(mem, packed, n, dir);
        packed += n;
        left -= n;
        if (++blk == nb) {
            blk = 0;
            item++;
        }
    }
    while (left >= len) {
        /* divide only for a range that ends inside this run of blocks (not a whole message) */
        MPI_Count n = nb - blk;
        if (n * len > left)
            n = left / len;
        char *mem = (char *)(first + (uintptr_t)(item * extent + blk * stride));
        copy_blocks(mem, packed, n, stride, (MPI_Aint)len, len, dir);
        packed += n * len;
        left -= n * len;
        blk += n;
        if (blk == nb) {
            blk = 0;
            item++;
        }
    }
    if (left > 0)
        copy_piece((char *)(first + (uintptr_t)(item * extent + blk * stride)), packed, left, dir);
}

#define ITEM_SEGS_MAX 16  /* items with more segments are walked segment by segment */
#define ITEM_CHUNK    256 /* items per pass of the segment-major loop */

/* Any item: find the segment holding `start`, then walk the (offset, length) array. */
static inline __attribute__((always_inline)) void
copy_segments(const mf_dtype_seg_t *segs, MPI_Count nsegs, MPI_Count psize, MPI_Aint extent,
              uintptr_t buf, char *packed, MPI_Count start, MPI_Count end, int dir)
{
    MPI_Count item = start > 0 ? start / psize : 0, in = start > 0 ? start % psize : 0;
    /* the segment holding packed offset `in`: the last one whose pos <= in */
    MPI_Count lo = 0, hi = in > 0 ? nsegs - 1 : 0;
    while (lo < hi) {
        MPI_Count mid = (lo + hi + 1) / 2;
        if (segs[mid].pos <= in)
            lo = mid;
        else
            hi = mid - 1;
    }
    MPI_Count k = lo, left = end - start;
    uintptr_t base = buf + (uintptr_t)(item * extent);
    /* a partial first segment */
    if (in > segs[k].pos) {
        MPI_Count skip = in - segs[k].pos, n = segs[k].len - skip;
        n = n < left ? n : left;
        copy_piece((char *)(base + (uintptr_t)(segs[k].off + (MPI_Aint)skip)), packed, n, dir);
        packed += n;
        left -= n;
        if (++k == nsegs) {
            k = 0;
            base += (uintptr_t)extent;
        }
    }
    /* Many whole items of few segments (an array of structs): segment by segment over a chunk
     * of items, so each pass is a tight fixed-size strided loop and the chunk stays in cache. */
    if (k == 0 && nsegs <= ITEM_SEGS_MAX && left >= 2 * psize) {
        for (MPI_Count items = left / psize; items > 0;) {
            MPI_Count n = items < ITEM_CHUNK ? items : ITEM_CHUNK;
            for (MPI_Count j = 0; j < nsegs; j++)
                copy_blocks((char *)(base + (uintptr_t)segs[j].off), packed + segs[j].pos, n,
                            extent, (MPI_Aint)psize, segs[j].len, dir);
            items -= n;
            left -= n * psize;
            packed += n * psize;
            base += (uintptr_t)(n * extent);
        }
    }
    /* the rest, segment by segment */
    while (left > 0) {
        const mf_dtype_seg_t *s = &segs[k];
        MPI_Count n = s->len < left ? s->len : left;
        copy_piece((char *)(base + (uintptr_t)s->off), packed, n, dir);
        packed += n;
        left -= n;
        if (++k == nsegs) {
            k = 0;
            base += (uintptr_t)extent;
        }
    }
}

/* The segment walk for one direction each, out of line: a copy of a range has its loops
 * compiled for its direction whatever the compiler makes of the code around the call. */
static __attribute__((noinline)) void
copy_segments_pack(const mf_dtype_t *d, uintptr_t buf, char *packed, MPI_Count start, MPI_Count end)
{
    copy_segments(d->segs, d->nsegs, d->psize, d->extent, buf, packed, start, end, 0);
}
static __attribute__((noinline)) void copy_segments_unpack(const mf_dtype_t *d, uintptr_t buf,
                                                           char *packed, MPI_Count start,
                                                           MPI_Count end)
{
    copy_segments(d->segs, d->nsegs, d->psize, d->extent, buf, packed, start, end, 1);
}

/* A type kept as runs (many segments, few runs, not one regular run: a struct holding a huge
 * vector, a contiguous type of such vectors): find the run holding `start`, then each run's
 * whole blocks in the specialised loop, pieces of a block on either side. */
static __attribute__((noinline)) void copy_runs(const mf_dtype_t *d, uintptr_t buf, char *packed,
                                                MPI_Count start, MPI_Count end, int dir)
{
    const mf_dtype_run_t *runs = d->runs;
    MPI_Count nruns = d->nruns, psize = d->psize;
    MPI_Aint extent = d->extent;
    MPI_Count item = start > 0 ? start / psize : 0, in = start > 0 ? start % psize : 0;
    /* the run holding packed offset `in`: the last one whose pos <= in */
    MPI_Count lo = 0, hi = in > 0 ? nruns - 1 : 0;
    while (lo < hi) {
        MPI_Count mid = (lo + hi + 1) / 2;
        if (runs[mid].pos <= in)
            lo = mid;
        else
            hi = mid - 1;
    }
    MPI_Count k = lo, left = end - start, blk = 0, skip = 0;
    if (in > runs[k].pos) {
        blk = (in - runs[k].pos) / runs[k].len;
        skip = (in - runs[k].pos) % runs[k].len;
    }
    uintptr_t base = buf + (uintptr_t)(item * extent);
    while (left > 0) {
        const mf_dtype_run_t *r = &runs[k];
        char *mem = (char *)(base + (uintptr_t)(r->off + (MPI_Aint)blk * r->stride));
        if (skip > 0 || left < r->len) {
            /* a piece of one block: the range starts or ends inside it */
            MPI_Count n = r->len - skip < left ? r->len - skip : left;
            copy_piece(mem + skip, packed, n, dir);
            packed += n;
            left -= n;
            if (skip + n < r->len)
                break; /* the range ended inside the block */
            skip = 0;
            blk++;
        } else {
            MPI_Count n = r->n - blk;
            if (n * r->len > left)
                n = left / r->len;
            copy_blocks(mem, packed, n, r->stride, (MPI_Aint)r->len, r->len, dir);
            packed += n * r->len;
            left -= n * r->len;
            blk += n;
        }
        if (blk == r->n) {
            blk = 0;
            if (++k == nruns) {
                k = 0;
                base += (uintptr_t)extent;
            }
        }
    }
}

/* ---- whole messages: the loop chosen at commit ------------------------------------------- */

/* A message from packed offset 0 to its end needs none of the range bookkeeping above, so
 * commit picks one function per direction and the message costs an indirect call and the loop.
 * Each specialised function below is a separate instance of an always_inline body with a
 * constant block size: link-time optimisation cannot fold them back into one loop taking the
 * size as an argument (which it did to blocks_fixed once, tripling the cost per element). */

/* Items of a regular layout that do not continue the stride, one at a time: out of line, so
 * its registers do not weigh on the one-run loop below (an item of a vector sent with a
 * count has many blocks, which pays for copy_blocks' switch). */
static __attribute__((noinline)) void regular_items(const mf_dtype_t *d, MPI_Count count, char *mem,
                                                    char *packed, int dir)
{
    MPI_Count nb = d->nsegs, len = d->vlen;
    for (; count > 0; count--, mem += d->extent, packed += nb * len)
        copy_blocks(mem, packed, nb, d->vstride, (MPI_Aint)len, len, dir);
}

/* Regular layouts: blocks of d->vlen bytes, d->vstride apart; one run over the whole message
 * when it is one item or the items continue the stride (returns 1 with the run's block count
 * and stride), else copied item by item at the extent here (returns 0). */
static inline __attribute__((always_inline)) int regular_run(const mf_dtype_t *d, MPI_Count count,
                                                             char *mem, char *packed, int dir,
                                                             MPI_Count *nb_p, MPI_Aint *stride_p)
{
    *nb_p = d->nsegs;
    *stride_p = d->vstride;
    if (count > 1) {
        if (d->run_stride == 0) {
            regular_items(d, count, mem, packed, dir);
            return 0;
        }
        *nb_p *= count;
        *stride_p = d->run_stride;
    }
    return 1;
}

static inline __attribute__((always_inline)) void
regular_all(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed, size_t len, int dir)
{
    char *mem = (char *)(buf + (uintptr_t)d->segs[0].off);
    MPI_Count nb;
    MPI_Aint stride;
    if (regular_run(d, count, mem, packed, dir, &nb, &stride))
        blocks_fixed(mem, packed, nb, stride, (MPI_Aint)len, len, dir);
}

/* One entry per block size and direction, so the copy loop is compiled for each size. */
#define REGULAR_ENTRY(name, bs, dir)                                                               \
    static void name(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)            \
    {                                                                                              \
        regular_all(d, count, buf, packed, bs, dir);                                               \
    }
REGULAR_ENTRY(regular_pack_1, 1, 0)
REGULAR_ENTRY(regular_pack_2, 2, 0)
REGULAR_ENTRY(regular_pack_4, 4, 0)
REGULAR_ENTRY(regular_pack_8, 8, 0)
REGULAR_ENTRY(regular_pack_16, 16, 0)
REGULAR_ENTRY(regular_unpack_1, 1, 1)
REGULAR_ENTRY(regular_unpack_2, 2, 1)
REGULAR_ENTRY(regular_unpack_4, 4, 1)
REGULAR_ENTRY(regular_unpack_8, 8, 1)
REGULAR_ENTRY(regular_unpack_16, 16, 1)
#undef REGULAR_ENTRY

/* Other block sizes: copy_blocks' switch (12, 24, 32 bytes stay fixed-size moves). */
static void regular_any(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed, int dir)
{
    char *mem = (char *)(buf + (uintptr_t)d->segs[0].off);
    MPI_Count nb;
    MPI_Aint stride;
    if (regular_run(d, count, mem, packed, dir, &nb, &stride))
        copy_blocks(mem, packed, nb, stride, (MPI_Aint)d->vlen, d->vlen, dir);
}
static void regular_pack_any(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    regular_any(d, count, buf, packed, 0);
}
static void regular_unpack_any(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    regular_any(d, count, buf, packed, 1);
}

/* A dense type (count > 1 items of one run, as MPI_Pack may be given): one copy. */
static void dense_pack(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    memcpy(packed, (const char *)(buf + (uintptr_t)d->segs[0].off), (size_t)(count * d->psize));
}
static void dense_unpack(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    memcpy((char *)(buf + (uintptr_t)d->segs[0].off), packed, (size_t)(count * d->psize));
}

/* Segment lists (struct, indexed): many items of few segments segment by segment over chunks
 * of items, as copy_segments does; otherwise item by item, each segment of up to 16 bytes in
 * two fixed-size moves. A strided pass costs about 50 instructions to set up, so a few items
 * (an array of 4 small structs) are cheaper item by item. */
#define SEGS_ITEMS_MIN 8
static void segs_all(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed, int dir)
{
    const mf_dtype_seg_t *segs = d->segs;
    MPI_Count nsegs = d->nsegs, psize = d->psize;
    MPI_Aint extent = d->extent;
    if (count >= SEGS_ITEMS_MIN && nsegs <= ITEM_SEGS_MAX) {
        while (count > 0) {
            MPI_Count n = count < ITEM_CHUNK ? count : ITEM_CHUNK;
            for (MPI_Count j = 0; j < nsegs; j++)
                copy_blocks((char *)(buf + (uintptr_t)segs[j].off), packed + segs[j].pos, n, extent,
                            (MPI_Aint)psize, segs[j].len, dir);
            count -= n;
            packed += n * psize;
            buf += (uintptr_t)(n * extent);
        }
        return;
    }
    for (; count > 0; count--, buf += (uintptr_t)extent) {
        for (MPI_Count k = 0; k < nsegs; k++) {
            copy_piece((char *)(buf + (uintptr_t)segs[k].off), packed, segs[k].len, dir);
            packed += segs[k].len;
        }
    }
}
static void runs_pack(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    copy_runs(d, buf, packed, 0, count * d->psize, 0);
}
static void runs_unpack(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    copy_runs(d, buf, packed, 0, count * d->psize, 1);
}
static void segs_pack(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    segs_all(d, count, buf, packed, 0);
}
static void segs_unpack(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    segs_all(d, count, buf, packed, 1);
}

/* Items of a few short segments (small structs, short vectors with a count): every segment
 * of 8 to 32 bytes becomes 8-byte moves and a 4- or 8-byte move for its tail (overlapping the
 * one before), one of 4 to 7 bytes one or two 4-byte moves, and all moves of an item are unrolled
 * with their offsets in registers, so an item costs a load and a store per move, as the
 * hand-written loop does. Overlapping moves stay inside their segment, so unpacking writes no byte
 * outside the type map. n8 and n4 are constants in each caller; commit pads the lists to those
 * sizes with repeated moves. */
static inline __attribute__((always_inline)) void moves_all(const mf_dtype_t *d, MPI_Count count,
                                                            uintptr_t buf, char *packed, int n8,
                                                            int n4, int dir)
{
    MPI_Aint o8[4] = {0}, o4[2] = {0};
    MPI_Count p8[4] = {0}, p4[2] = {0};
    for (int j = 0; j < n8; j++) {
        o8[j] = d->mv8[j].off;
        p8[j] = d->mv8[j].pos;
    }
    for (int j = 0; j < n4; j++) {
        o4[j] = d->mv4[j].off;
        p4[j] = d->mv4[j].pos;
    }
    MPI_Aint extent = d->extent;
    MPI_Count psize = d->psize;
    for (; count > 0; count--, buf += (uintptr_t)extent, packed += psize) {
        char *mem = (char *)buf;
        for (int j = 0; j < n8; j++) {
            if (dir == 0)
                memcpy(packed + p8[j], mem + o8[j], 8);
            else
                memcpy(mem + o8[j], packed + p8[j], 8);
        }
        for (int j = 0; j < n4; j++) {
            if (dir == 0)
                memcpy(packed + p4[j], mem + o4[j], 4);
            else
                memcpy(mem + o4[j], packed + p4[j], 4);
        }
    }
}

static void moves_pack_2_0(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 2, 0, 0);
}
static void moves_pack_4_0(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 4, 0, 0);
}
static void moves_pack_0_2(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 0, 2, 0);
}
static void moves_pack_1_2(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 1, 2, 0);
}
static void moves_pack_2_2(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 2, 2, 0);
}
static void moves_pack_4_2(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 4, 2, 0);
}
static void moves_unpack_2_0(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 2, 0, 1);
}
static void moves_unpack_4_0(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 4, 0, 1);
}
static void moves_unpack_0_2(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 0, 2, 1);
}
static void moves_unpack_1_2(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 1, 2, 1);
}
static void moves_unpack_2_2(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 2, 2, 1);
}
static void moves_unpack_4_2(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    moves_all(d, count, buf, packed, 4, 2, 1);
}

/* Items of two segments and 16 packed bytes whose second segment's last 16 bytes of memory start
 * inside or at the end of the first segment (an int, a gap, a double and a float): packing
 * copies those 16 bytes whole and then the first segment over the front of them, two loads and
 * two stores an item where the moves take three of each. The window's extra bytes are the whole
 * gap, under 16 bytes between two bytes of the type map, so they lie in those bytes' pages and
 * are mapped; only the packed side is written twice, never past the item's 16 bytes. Unpacking
 * must not write the gap and keeps the moves. */
static inline __attribute__((always_inline)) void
win16_pack(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed, size_t head)
{
    MPI_Aint win = d->segs[1].off + (MPI_Aint)d->segs[1].len - 16, off0 = d->segs[0].off;
    MPI_Aint extent = d->extent;
    for (; count > 0; count--, buf += (uintptr_t)extent, packed += 16) {
        memcpy(packed, (const char *)(buf + (uintptr_t)win), 16);
        memcpy(packed, (const char *)(buf + (uintptr_t)off0), head);
    }
}
static void win16_pack_4(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    win16_pack(d, count, buf, packed, 4);
}
static void win16_pack_8(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    win16_pack(d, count, buf, packed, 8);
}

/* Whether d packs through win16_pack: the window starts within the first segment or where it
 * ends (segments in memory order). A window that started in the gap would read bytes that need
 * not be mapped: with absolute addresses (MPI_BOTTOM) the gap can span an unmapped page. */
static void choose_window(mf_dtype_t *d)
{
    if (d->nsegs != 2 || d->psize != 16 || (d->segs[0].len != 4 && d->segs[0].len != 8))
        return;
    MPI_Aint win = d->segs[1].off + (MPI_Aint)d->segs[1].len - 16;
    MPI_Aint end0 = d->segs[0].off + (MPI_Aint)d->segs[0].len;
    if (d->segs[0].off >= d->segs[1].off || win < d->segs[0].off || win > end0)
        return;
    d->pack_all = d->segs[0].len == 4 ? win16_pack_4 : win16_pack_8;
    /* the inlined copy of a MOVES_1_2 item packs through the window too: its first move is
     * the first segment, packed at 0 */
    if (d->copy_kind == MF_DT_COPY_MOVES_1_2 && d->mv4[0].off == d->segs[0].off &&
        d->mv4[0].pos == 0 && d->mv8[0].pos == 4 && d->mv4[1].pos == 12)
        d->copy_win = win;
}

/* The moves of one item, padded to 0, 1, 2 or 4 eight-byte moves and 0 or 2 four-byte ones
 * (one 8-byte move alone is a single segment, which the regular loops take); 0 when the item
 * does not fit (a segment under 4 or over 32 bytes, or too many moves). */
static int plan_moves(mf_dtype_t *d, int *n8_p, int *n4_p)
{
    int n8 = 0, n4 = 0;
    for (MPI_Count i = 0; i < d->nsegs; i++) {
        const mf_dtype_seg_t *sg = &d->segs[i];
        MPI_Count len = sg->len;
        if (len >= 8 && len <= 32) {
            /* whole 8-byte words, then a tail of up to 4 bytes as a 4-byte move and a longer
             * one as an 8-byte move, both ending at the segment's end */
            int k = (int)(len / 8), tail = (int)(len % 8);
            if (n8 + k + (tail > 4) > 4 || n4 + (tail > 0 && tail <= 4) > 2)
                return 0;
            for (int j = 0; j < k; j++)
                d->mv8[n8++] = (mf_dtype_move_t){sg->off + 8 * j, sg->pos + 8 * j};
            if (tail > 4)
                d->mv8[n8++] = (mf_dtype_move_t){sg->off + (MPI_Aint)(len - 8), sg->pos + len - 8};
            else if (tail > 0)
                d->mv4[n4++] = (mf_dtype_move_t){sg->off + (MPI_Aint)(len - 4), sg->pos + len - 4};
        } else if (len >= 4 && len < 8) {
            int k = len == 4 ? 1 : 2;
            if (n4 + k > 2)
                return 0;
            d->mv4[n4++] = (mf_dtype_move_t){sg->off, sg->pos};
            if (k == 2)
                d->mv4[n4++] = (mf_dtype_move_t){sg->off + (MPI_Aint)(len - 4), sg->pos + len - 4};
        } else {
            return 0;
        }
    }
    /* repeating a move copies the same bytes again */
    if (n8 == 3)
        d->mv8[n8++] = d->mv8[0];
    if (n4 == 1)
        d->mv4[n4++] = d->mv4[0];
    *n8_p = n8;
    *n4_p = n4;
    return 1;
}

static int choose_moves(mf_dtype_t *d)
{
    int n8, n4;
    if (!plan_moves(d, &n8, &n4))
        return 0;
    switch (n8 * 10 + n4) {
    case 20: d->pack_all = moves_pack_2_0, d->unpack_all = moves_unpack_2_0; break;
    case 40: d->pack_all = moves_pack_4_0, d->unpack_all = moves_unpack_4_0; break;
    case 2: d->pack_all = moves_pack_0_2, d->unpack_all = moves_unpack_0_2; break;
    case 12:
        d->pack_all = moves_pack_1_2, d->unpack_all = moves_unpack_1_2;
        d->copy_kind = MF_DT_COPY_MOVES_1_2;
        break;
    case 22: d->pack_all = moves_pack_2_2, d->unpack_all = moves_unpack_2_2; break;
    case 42: d->pack_all = moves_pack_4_2, d->unpack_all = moves_unpack_4_2; break;
    default: return 0;
    }
    return 1;
}

/* Blocks of 8 bytes 16 bytes apart (a column of a two-column matrix), packed four at a time
 * with two 32-byte loads, a blend and a permute: one 32-byte store where the baseline loop
 * takes four 8-byte loads, two shuffles and two 16-byte stores. The second load starts 24
 * bytes on, so it ends where the fourth block ends: a load reads only bytes between two bytes
 * of the type map, never past the last block. A last group of fewer than four blocks is done
 * as the four blocks ending at the message's end, overlapping the group before (nb >= 4). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
static inline __attribute__((always_inline, target("avx2"))) void pack8_s16_four(const char *mem,
                                                                                 char *packed)
{
    __m256d a = _mm256_loadu_pd((const double *)mem);        /* x0 g0 x1 g1 */
    __m256d b = _mm256_loadu_pd((const double *)(mem + 24)); /* g1 x2 g2 x3 */
    __m256d c = _mm256_blend_pd(a, b, 0xA);                  /* x0 x2 x1 x3 */
    _mm256_storeu_pd((double *)packed, _mm256_permute4x64_pd(c, 0xD8));
}
__attribute__((target("avx2"))) void mf_dtype_pack8_s16_avx2(const char *mem, char *packed,
                                                             MPI_Count nb)
{
    const char *last = mem + (nb - 4) * 16;
    char *plast = packed + (nb - 4) * 8;
    MPI_Count k = nb >> 2;
    for (; k >= 2; k -= 2, mem += 128, packed += 64) {
        pack8_s16_four(mem, packed);
        pack8_s16_four(mem + 64, packed + 32);
    }
    if (k > 0)
        pack8_s16_four(mem, packed);
    if (nb & 3)
        pack8_s16_four(last, plast);
}
static int simd_avx2(void)
{
    return __builtin_cpu_supports("avx2");
}
#else
void mf_dtype_pack8_s16_avx2(const char *mem, char *packed, MPI_Count nb)
{
    for (; nb > 0; nb--, mem += 16, packed += 8)
        memcpy(packed, mem, 8);
}
static int simd_avx2(void)
{
    return 0;
}
#endif

/* Nothing to copy (an empty type). */
static void none_copy(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed)
{
    (void)d;
    (void)count;
    (void)buf;
    (void)packed;
}

/* Pick the whole-message copies of a type being committed (segments, vlen and vstride set). */
static void choose_copy(mf_dtype_t *d)
{
    d->run_stride = 0;
    d->copy_kind = MF_DT_COPY_CALL;
    d->copy_simd_min = INT64_MAX;
    d->copy_win = -1;
    d->dense = d->nsegs == 1 && d->segs[0].len == d->extent;
    d->run_max = d->nsegs == 0 || d->dense ? INT64_MAX : d->nsegs == 1 ? 1 : 0;
    d->run_off = d->nsegs > 0 ? d->segs[0].off : 0;
    if (d->nsegs == 0) {
        d->pack_all = none_copy;
        d->unpack_all = none_copy;
        return;
    }
    if (d->dense) {
        d->pack_all = dense_pack;
        d->unpack_all = dense_unpack;
        return;
    }
    /* the items continue the blocks' stride: one item of one block, or a resized vector */
    if (d->vlen > 0 && d->nsegs == 1)
        d->run_stride = d->extent;
    else if (d->vlen > 0 && d->vstride * (MPI_Aint)d->nsegs == d->extent)
        d->run_stride = d->vstride;
    /* Blocks of 8 bytes: what regular_all does, set out for mf_dtype_copy_inline (one item of
     * nsegs blocks vstride apart, or any count when the items continue the stride). Also when a
     * small item takes the moves below: inlined, one item's loop beats the call to the moves. */
    if (d->vlen == 8) {
        d->copy_kind = MF_DT_COPY_RUN8;
        d->copy_off = d->segs[0].off;
        d->copy_stride = d->run_stride != 0 ? d->run_stride : d->vstride;
        d->copy_max = d->run_stride != 0 ? INT64_MAX : 1;
        if (d->copy_stride == 16 && simd_avx2())
            d->copy_simd_min = MF_DT_SIMD_MIN;
    }
    /* one long run of blocks is the best loop there is; otherwise a small item is moves */
    if (d->run_stride == 0 && d->runs == NULL && choose_moves(d)) {
        choose_window(d);
        return;
    }
    if (d->vlen == 0) {
        d->pack_all = d->runs != NULL ? runs_pack : segs_pack;
        d->unpack_all = d->runs != NULL ? runs_unpack : segs_unpack;
        return;
    }
    switch (d->vlen) {
    case 1: d->pack_all = regular_pack_1, d->unpack_all = regular_unpack_1; break;
    case 2: d->pack_all = regular_pack_2, d->unpack_all = regular_unpack_2; break;
    case 4: d->pack_all = regular_pack_4, d->unpack_all = regular_unpack_4; break;
    case 8: d->pack_all = regular_pack_8, d->unpack_all = regular_unpack_8; break;
    case 16: d->pack_all = regular_pack_16, d->unpack_all = regular_unpack_16; break;
    default: d->pack_all = regular_pack_any, d->unpack_all = regular_unpack_any; break;
    }
}

static inline __attribute__((always_inline)) void copy_range(MPI_Datatype dt, MPI_Count count,
                                                             uintptr_t buf, char *packed,
                                                             MPI_Count start, MPI_Count end,
                                                             int dir)
{
    if (start >= end)
        return;
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d == NULL)
        d = mf_dtype_pair_twin(dt);
    if (d == NULL) {
        char *mem = (char *)(buf + (uintptr_t)start); /* a predefined type is dense */
        memcpy(dir == 0 ? packed : mem, dir == 0 ? mem : packed, (size_t)(end - start));
        return;
    }
    if (d->psize == 0)
        return;
    MF_ASSERT(end <= count * d->psize);
    if (start == 0 && end == count * d->psize) {
        (dir == 0 ? d->pack_all : d->unpack_all)(d, count, buf, packed);
        return;
    }
    if (d->vlen > 0)
        copy_regular(d, count, buf, packed, start, end, dir);
    else if (d->runs != NULL)
        copy_runs(d, buf, packed, start, end, dir);
    else
        (dir == 0 ? copy_segments_pack : copy_segments_unpack)(d, buf, packed, start, end);
}

/* One function per direction, each with its loops compiled for it (left to itself, GCC stopped
 * cloning copy_range per direction once it gained the branch to copy_runs, and a streamed
 * indexed type's fragments took 4 % more instructions). */
static __attribute__((noinline)) void copy_range_pack(MPI_Datatype dt, MPI_Count count,
                                                      uintptr_t buf, char *packed, MPI_Count start,
                                                      MPI_Count end)
{
    copy_range(dt, count, buf, packed, start, end, 0);
}
static __attribute__((noinline)) void copy_range_unpack(MPI_Datatype dt, MPI_Count count,
                                                        uintptr_t buf, char *packed,
                                                        MPI_Count start, MPI_Count end)
{
    copy_range(dt, count, buf, packed, start, end, 1);
}

static _Atomic uint64_t temp_max;

/* A temporary starts TEMP_HDR bytes into its allocation, after its capacity, so whichever thread
 * releases it can keep it for that thread's next message. A thread keeps TEMP_SLOTS (a blocking
 * exchange has a send's and a receive's in flight). malloc and free of a fresh buffer cost more
 * than packing a small message, and a reused buffer stays in cache and in the transport's
 * registration cache. */
#define TEMP_HDR   MF_DT_TEMP_HDR
#define TEMP_SLOTS MF_DT_TEMP_SLOTS
/* Temporaries start on a cache line, as a user's buffer from an aligned allocation does: the
 * transport copies received bytes into them with memcpy, which on some CPUs (AMD Zen) runs
 * several times slower when the destination sits just above the source modulo 4 KiB (8-24
 * bytes: the 16-byte alignment of malloc met the transport's buffers there), and a 4 KiB copy
 * would span one line more. */
#define TEMP_ALIGN 64

static char *temp_malloc(size_t bytes)
{
    return mf_aligned_alloc(TEMP_ALIGN, bytes);
}
/* Small temporaries (up to 4 KiB: the immediate forms' receive copies, which a window of
 * receives holds many of at once) come in powers of two from 64 bytes, and a thread keeps up to
 * SMALL_KEEP of each size on a list linked through the header: taking one or giving it back is
 * a pop or a push. */
#define SMALL_MIN_LOG MF_DT_SMALL_MIN_LOG
#define SMALL_CLASSES MF_DT_SMALL_CLASSES
#define SMALL_MAX     MF_DT_SMALL_MAX
#define SMALL_KEEP    MF_DT_SMALL_KEEP
typedef mf_dtype_temp_cache_t temp_cache_t;
_Static_assert(SMALL_MAX == MF_DT_SEND_SLOT, "the send slot is a small temporary");

/* The list a small temporary of `want` bytes (64 <= want <= SMALL_MAX, a power of two) is on. */
static inline int small_class(size_t want)
{
    return (int)(63 - __builtin_clzll((unsigned long long)want)) - SMALL_MIN_LOG;
}

static inline char **small_next(char *b)
{
    return (char **)(b + sizeof(size_t));
}
/* initial-exec: a few bytes of static TLS, reached without a __tls_get_addr call per access */
_Thread_local temp_cache_t mf_dtype_temp_cache __attribute__((tls_model("initial-exec")));
#define temp_cache mf_dtype_temp_cache
static pthread_key_t temp_key;
static pthread_once_t temp_once = PTHREAD_ONCE_INIT;
static int temp_key_ok;

static void temp_thread_exit(void *arg)
{
    (void)arg;
    mf_dtype_temp_flush();
}

static void temp_key_create(void)
{
    temp_key_ok = pthread_key_create(&temp_key, temp_thread_exit) == 0;
}

/* Whether this thread may keep buffers: its exit must free them (a key destructor). */
static __attribute__((noinline)) int temp_thread_register(temp_cache_t *tc)
{
    pthread_once(&temp_once, temp_key_create);
    if (!temp_key_ok || pthread_setspecific(temp_key, (void *)1) != 0)
        return 0;
    tc->registered = 1;
    return 1;
}

/* (inline, with the registration out of line: the common case saves no registers) */
static inline int temp_thread_ready(temp_cache_t *tc)
{
    return MF_LIKELY(tc->registered) ? 1 : temp_thread_register(tc);
}

/* A new small temporary of `want` bytes. */
static __attribute__((noinline)) char *small_make(size_t want)
{
    char *b = temp_malloc(TEMP_HDR + want);
    if (b != NULL)
        *(size_t *)b = want;
    return b;
}

static void *temp_alloc_large(temp_cache_t *tc, size_t bytes);
static void temp_free_slow(temp_cache_t *tc, char *b, size_t cap);

static inline void small_push(temp_cache_t *tc, char *b, int k)
{
    *small_next(b) = tc->small[k];
    tc->small[k] = b;
    tc->nsmall[k]++;
}

/* (the small sizes inline, the rest out of line: a pop or push saves no registers) */
void *mf_dtype_temp_alloc(size_t bytes)
{
    temp_cache_t *tc = &temp_cache;
    if (bytes <= SMALL_MAX) {
        size_t want = bytes <= 64 ? 64 : (size_t)1 << (64 - __builtin_clzll(bytes - 1));
        int k = small_class(want);
        char *b = tc->small[k];
        if (MF_LIKELY(b != NULL)) {
            tc->small[k] = *small_next(b);
            tc->nsmall[k]--;
        } else if ((b = small_make(want)) == NULL) {
            return NULL;
        }
        return b + TEMP_HDR;
    }
    return temp_alloc_large(tc, bytes);
}

static __attribute__((noinline)) void *temp_alloc_large(temp_cache_t *tc, size_t bytes)
{
    size_t want = (bytes + 63) & ~(size_t)63;
    for (int i = 0; i < TEMP_SLOTS; i++) {
        char *b = tc->slot[i];
        if (b != NULL && *(size_t *)b >= want) {
            tc->slot[i] = NULL;
            return b + TEMP_HDR;
        }
    }
    char *b = temp_malloc(TEMP_HDR + want);
    if (b == NULL)
        return NULL;
    *(size_t *)b = want;
    return b + TEMP_HDR;
}

void mf_dtype_temp_free(void *p)
{
    if (p == NULL)
        return;
    temp_cache_t *tc = &temp_cache;
    char *b = (char *)p - TEMP_HDR;
    size_t cap = *(size_t *)b;
    int k = small_class(cap);
    if (MF_LIKELY(cap <= tc->small_cap && tc->nsmall[k] < SMALL_KEEP)) {
        small_push(tc, b, k);
        return;
    }
    temp_free_slow(tc, b, cap);
}

static __attribute__((noinline)) void temp_free_slow(temp_cache_t *tc, char *b, size_t cap)
{
    if (cap <= SMALL_MAX) {
        int k = small_class(cap);
        if (tc->nsmall[k] < SMALL_KEEP && cap <= (size_t)mf_params.dt_temp_cache &&
            temp_thread_ready(tc)) {
            /* what the inline push (mf_dtype_temp_free_fast) may keep from now on */
            size_t lim = (size_t)mf_params.dt_temp_cache;
            tc->small_cap = lim < SMALL_MAX ? lim : SMALL_MAX;
            small_push(tc, b, k);
        } else
            free(b);
        return;
    }

    if (cap <= (size_t)mf_params.dt_temp_cache && temp_thread_ready(tc)) {
        /* an empty slot, else the smallest kept one if this is larger */
        int k = 0;
        for (int i = 0; i < TEMP_SLOTS; i++) {
            if (tc->slot[i] == NULL) {
                k = i;
                break;
            }
            if (*(size_t *)tc->slot[i] < *(size_t *)tc->slot[k])
                k = i;
        }
        if (tc->slot[k] == NULL || *(size_t *)tc->slot[k] < cap) {
            char *old = tc->slot[k];
            tc->slot[k] = b;
            b = old;
        }
    }
    free(b);
}

_Thread_local char *mf_dtype_send_slot_tls __attribute__((tls_model("initial-exec")));

char *mf_dtype_send_slot_make(void)
{
    /* kept until the thread exits, so only by a thread whose exit frees it */
    if (!temp_thread_ready(&temp_cache))
        return NULL;
    char *slot = mf_dtype_temp_alloc(MF_DT_SEND_SLOT);
    mf_dtype_send_slot_tls = slot;
    return slot;
}

void mf_dtype_temp_flush(void)
{
    temp_cache_t *tc = &temp_cache;
    for (int i = 0; i < TEMP_SLOTS; i++) {
        free(tc->slot[i]);
        tc->slot[i] = NULL;
    }
    for (int k = 0; k < SMALL_CLASSES; k++) {
        while (tc->small[k] != NULL) {
            char *b = tc->small[k];
            tc->small[k] = *small_next(b);
            free(b);
        }
        tc->nsmall[k] = 0;
    }
    tc->small_cap = 0;
    if (mf_dtype_send_slot_tls != NULL)
        free(mf_dtype_send_slot_tls - TEMP_HDR);
    mf_dtype_send_slot_tls = NULL;
}

void mf_dtype_temp_note(size_t bytes)
{
    uint64_t cur = atomic_load_explicit(&temp_max, memory_order_relaxed);
    while (bytes > cur &&
           !atomic_compare_exchange_weak_explicit(&temp_max, &cur, (uint64_t)bytes,
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}

static _Atomic uint64_t iov_msgs;

uint64_t mf_dtype_iov_msgs(void)
{
    return atomic_load_explicit(&iov_msgs, memory_order_relaxed);
}

size_t mf_dtype_iov_fill(const mf_dtype_t *d, MPI_Count count, const void *buf, mf_dtype_iov_t *iov)
{
    size_t n = 0;
    atomic_fetch_add_explicit(&iov_msgs, 1, memory_order_relaxed);
    for (MPI_Count i = 0; i < count; i++) {
        uintptr_t item = (uintptr_t)buf + (uintptr_t)(i * d->extent);
        for (MPI_Count k = 0; k < d->nsegs; k++) {
            char *p = (char *)(item + (uintptr_t)d->segs[k].off);
            size_t len = (size_t)d->segs[k].len;
            if (n > 0 && (char *)iov[n - 1].base + iov[n - 1].len == p) {
                iov[n - 1].len += len;
                continue;
            }
            iov[n].base = p;
            iov[n].len = len;
            n++;
        }
    }
    return n;
}

uint64_t mf_dtype_temp_max(void)
{
    return atomic_load_explicit(&temp_max, memory_order_relaxed);
}

void mf_dtype_pack(MPI_Datatype dt, MPI_Count count, const void *buf, void *packed, MPI_Count start,
                   MPI_Count end)
{
    copy_range_pack(dt, count, (uintptr_t)buf, packed, start, end);
}

void mf_dtype_unpack(MPI_Datatype dt, MPI_Count count, void *buf, const void *packed,
                     MPI_Count start, MPI_Count end)
{
    copy_range_unpack(dt, count, (uintptr_t)buf, (char *)packed, start, end);
}

/* ---- element counts ---------------------------------------------------------------------- */

static MPI_Count block_child(const mf_dtype_t *d, MPI_Count i, MPI_Datatype *c_p)
{
    *c_p = d->children[d->node == MF_DT_NODE_LIST ? i : 0];
    return d->node == MF_DT_NODE_LIST     ? d->blocklens[i]
           : d->node == MF_DT_NODE_VECTOR ? d->blocklen
                                          : 1;
}

MPI_Count mf_dtype_elements(MPI_Datatype dt, MPI_Count bytes)
{
    mf_dtype_props_t p = {0};
    mf_dtype_props(dt, &p);
    if (p.psize == 0)
        return 0;
    MPI_Count n = bytes / p.psize * p.nelems, rest = bytes % p.psize;
    if (rest == 0)
        return n;
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d == NULL) {
        /* exactly the first half of a pair counts one; anything else is a partial element */
        leaf_comp_t c[2];
        return leaf_layout(dt, c) == 2 && rest == c[0].nsize ? n + 1 : -1;
    }
    MPI_Count nblocks = d->node == MF_DT_NODE_RESIZED ? 1 : d->nblocks, i = 0;
    if (d->node == MF_DT_NODE_VECTOR) {
        /* equal blocks: skip the whole ones without visiting them (10^8 of them) */
        MPI_Count cb = d->psize / d->nblocks;
        i = rest / cb;
        n += i * (d->nelems / d->nblocks);
        rest -= i * cb;
    }
    for (; i < nblocks; i++) {
        MPI_Datatype c;
        MPI_Count b = block_child(d, i, &c);
        mf_dtype_props_t cp = {0};
        mf_dtype_props(c, &cp);
        MPI_Count cb = b * cp.psize;
        if (rest >= cb) {
            n += b * cp.nelems;
            rest -= cb;
            continue;
        }
        MPI_Count r = mf_dtype_elements(c, rest);
        return r < 0 ? -1 : n + r;
    }
    return n;
}

MPI_Count mf_dtype_bytes_of_elements(MPI_Datatype dt, MPI_Count elements)
{
    mf_dtype_props_t p = {0};
    mf_dtype_props(dt, &p);
    if (p.nelems == 0)
        return 0;
    MPI_Count bytes = elements / p.nelems * p.psize, rest = elements % p.nelems;
    if (rest == 0)
        return bytes;
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d == NULL) {
        leaf_comp_t c[2]; /* half a pair: its first component's bytes */
        return leaf_layout(dt, c) == 2 ? bytes + c[0].nsize : bytes;
    }
    MPI_Count nblocks = d->node == MF_DT_NODE_RESIZED ? 1 : d->nblocks, i = 0;
    if (d->node == MF_DT_NODE_VECTOR) {
        MPI_Count ce = d->nelems / d->nblocks; /* equal blocks: skip the whole ones */
        i = rest / ce;
        bytes += i * (d->psize / d->nblocks);
        rest -= i * ce;
    }
    for (; i < nblocks; i++) {
        MPI_Datatype c;
        MPI_Count b = block_child(d, i, &c);
        mf_dtype_props_t cp = {0};
        mf_dtype_props(c, &cp);
        if (rest >= b * cp.nelems) {
            bytes += b * cp.psize;
            rest -= b * cp.nelems;
            continue;
        }
        MPI_Count r = mf_dtype_bytes_of_elements(c, rest);
        return r < 0 ? -1 : bytes + r;
    }
    return bytes;
}

/* ---- external32 ------------------------------------------------------------------------- */

typedef struct x32 {
    char *ext; /* cursor in the external buffer */
    int unpack;
    mf_status_t status;
} x32_t;

/* An x87 long double (64-bit significand with its integer bit, 15-bit exponent, in the low 10
 * of its 16 bytes) as IEEE binary128, big-endian. Both formats have the same exponent bias,
 * so the exponent carries over and the 63 fraction bits become the top of the 112. */
static void x87_to_quad(const char *mem, unsigned char out[16])
{
    uint64_t m, hi, lo;
    uint16_t se;
    memcpy(&m, mem, 8);
    memcpy(&se, mem + 8, 2);
    uint64_t frac = m & ~(UINT64_C(1) << 63);
    hi = (uint64_t)se << 48 | frac >> 15;
    lo = (frac & 0x7fff) << 49;
    for (int i = 0; i < 8; i++) {
        out[i] = (unsigned char)(hi >> (56 - 8 * i));
        out[8 + i] = (unsigned char)(lo >> (56 - 8 * i));
    }
}

/* The reverse, rounding the 112 fraction bits to 63 to nearest, ties to even. */
static void quad_to_x87(const unsigned char in[16], char *mem)
{
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++) {
        hi = hi << 8 | in[i];
        lo = lo << 8 | in[8 + i];
    }
    uint16_t se = (uint16_t)(hi >> 48);
    unsigned exp = se & 0x7fff;
    uint64_t frac = (hi & ((UINT64_C(1) << 48) - 1)) << 15 | lo >> 49;
    uint64_t rest = lo & ((UINT64_C(1) << 49) - 1), half = UINT64_C(1) << 48;
    if (exp == 0x7fff) { /* infinity; a NaN keeps a non-zero fraction */
        if (frac == 0 && rest != 0)
            frac = UINT64_C(1) << 62;
    } else if (rest > half || (rest == half && (frac & 1))) {
        frac++;
        if (frac >> 63) { /* carried into the integer bit: the next binade */
            frac = 0;
            exp++;
            se++;
        }
    }
    uint64_t m = frac | (exp != 0 ? UINT64_C(1) << 63 : 0);
    memcpy(mem, &m, 8);
    memcpy(mem + 8, &se, 2);
    memset(mem + 10, 0, sizeof(long double) - 10);
}

static void x32_comp(const leaf_comp_t *c, char *mem, x32_t *x)
{
    unsigned char *e = (unsigned char *)x->ext;
    if (c->esize == 0) {
        x->status = MF_ERR_UNSUPPORTED;
        return;
    }
    if (c->quad) {
        for (int u = 0; u < c->nsize / c->unit; u++) {
            if (x->unpack)
                quad_to_x87(e + 16 * u, mem + u * c->unit);
            else
                x87_to_quad(mem + u * c->unit, e + 16 * u);
        }
        x->ext += c->esize;
        return;
    }
    if (c->esize != c->nsize) {
        /* a narrower external32 integer: a native 8-byte long as 4 bytes, a 4-byte wchar_t as
         * 2 (values that do not fit are a conversion error) */
        int ebits = 8 * c->esize;
        int64_t v;
        if (!x->unpack) {
            if (c->nsize == 8) {
                memcpy(&v, mem, sizeof(v));
            } else {
                int32_t v32;
                memcpy(&v32, mem, sizeof(v32));
                v = c->is_signed ? (int64_t)v32 : (int64_t)(uint32_t)v32;
            }
            int fits = c->is_signed
                           ? v >= -(INT64_C(1) << (ebits - 1)) && v < (INT64_C(1) << (ebits - 1))
                           : (uint64_t)v < (UINT64_C(1) << ebits);
            if (!fits)
                x->status = MF_ERR_INVALID;
            for (int i = 0; i < c->esize; i++)
                e[i] = (unsigned char)((uint64_t)v >> (ebits - 8 - 8 * i));
        } else {
            uint64_t u = 0;
            for (int i = 0; i < c->esize; i++)
                u = (u << 8) | e[i];
            if (c->is_signed && (u >> (ebits - 1)))
                u |= ~UINT64_C(0) << ebits; /* sign-extend */
            if (c->nsize == 8) {
                memcpy(mem, &u, sizeof(u));
            } else {
                uint32_t u32 = (uint32_t)u;
                memcpy(mem, &u32, sizeof(u32));
            }
        }
        x->ext += c->esize;
        return;
    }
    /* big-endian: reverse the bytes of each unit (this build targets little-endian hosts) */
    for (int u = 0; u < c->nsize; u += c->unit)
        for (int i = 0; i < c->unit; i++) {
            if (x->unpack)
                mem[u + i] = (char)e[u + c->unit - 1 - i];
            else
                e[u + c->unit - 1 - i] = (unsigned char)mem[u + i];
        }
    x->ext += c->nsize;
}

static void x32_walk(MPI_Datatype t, uintptr_t mem, x32_t *x)
{
    mf_dtype_t *d = mf_dtype_get(t);
    if (d == NULL) {
        leaf_comp_t c[2];
        int n = leaf_layout(t, c);
        for (int i = 0; i < n && x->status == MF_OK; i++)
            x32_comp(&c[i], (char *)(mem + (uintptr_t)c[i].off), x);
        return;
    }
    MPI_Count nblocks = d->node == MF_DT_NODE_RESIZED ? 1 : d->nblocks;
    for (MPI_Count i = 0; i < nblocks && x->status == MF_OK; i++) {
        MPI_Datatype c;
        MPI_Count b = block_child(d, i, &c);
        mf_dtype_props_t cp = {0};
        mf_dtype_props(c, &cp);
        MPI_Aint disp = d->node == MF_DT_NODE_LIST     ? d->disps[i]
                        : d->node == MF_DT_NODE_VECTOR ? (MPI_Aint)i * d->stride
                                                       : 0;
        for (MPI_Count j = 0; j < b && x->status == MF_OK; j++)
            x32_walk(c, mem + (uintptr_t)(disp + (MPI_Aint)j * cp.extent), x);
    }
}

static MPI_Count x32_size(MPI_Datatype t)
{
    mf_dtype_t *d = mf_dtype_get(t);
    if (d == NULL) {
        leaf_comp_t c[2];
        int n = leaf_layout(t, c);
        MPI_Count s = 0;
        for (int i = 0; i < n; i++)
            s += c[i].esize > 0 ? c[i].esize : c[i].nsize;
        return s;
    }
    MPI_Count nblocks = d->node == MF_DT_NODE_RESIZED ? 1 : d->nblocks, s = 0;
    if (d->node != MF_DT_NODE_LIST && nblocks > 0) { /* equal blocks: no walk over them */
        MPI_Datatype c;
        MPI_Count b = block_child(d, 0, &c);
        return nblocks * b * x32_size(c);
    }
    for (MPI_Count i = 0; i < nblocks; i++) {
        MPI_Datatype c;
        MPI_Count b = block_child(d, i, &c);
        s += b * x32_size(c);
    }
    return s;
}

mf_status_t mf_dtype_external32_size(MPI_Datatype dt, MPI_Count *size_p)
{
    *size_p = x32_size(dt);
    return MF_OK;
}

/* Byte-swaps n units of `unit` bytes from src to dst (which do not overlap). */
static void x32_swap(char *dst, const char *src, MPI_Count n, int unit)
{
    switch (unit) {
    case 1: memcpy(dst, src, (size_t)n); return;
    case 2:
        for (MPI_Count i = 0; i < n; i++) {
            uint16_t v;
            memcpy(&v, src + 2 * i, 2);
            v = __builtin_bswap16(v);
            memcpy(dst + 2 * i, &v, 2);
        }
        return;
    case 4:
        for (MPI_Count i = 0; i < n; i++) {
            uint32_t v;
            memcpy(&v, src + 4 * i, 4);
            v = __builtin_bswap32(v);
            memcpy(dst + 4 * i, &v, 4);
        }
        return;
    default:
        for (MPI_Count i = 0; i < n; i++) {
            uint64_t v;
            memcpy(&v, src + 8 * i, 8);
            v = __builtin_bswap64(v);
            memcpy(dst + 8 * i, &v, 8);
        }
        return;
    }
}

static mf_status_t x32_run(MPI_Datatype dt, MPI_Count count, uintptr_t buf, char *ext, int unpack)
{
    leaf_comp_t c[2];
    if (mf_dtype_get(dt) == NULL && leaf_layout(dt, c) == 1 && c[0].esize == c[0].nsize &&
        (c[0].unit == 1 || c[0].unit == 2 || c[0].unit == 4 || c[0].unit == 8)) {
        /* a predefined type of the same size: one loop of swaps over the whole array */
        MPI_Count units = count * (c[0].nsize / c[0].unit);
        if (unpack)
            x32_swap((char *)buf, ext, units, c[0].unit);
        else
            x32_swap(ext, (const char *)buf, units, c[0].unit);
        return MF_OK;
    }
    mf_dtype_props_t p = {0};
    mf_dtype_props(dt, &p);
    x32_t x = {ext, unpack, MF_OK};
    for (MPI_Count i = 0; i < count && x.status == MF_OK; i++)
        x32_walk(dt, buf + (uintptr_t)(i * p.extent), &x);
    return x.status;
}

mf_status_t mf_dtype_external32_pack(MPI_Datatype dt, MPI_Count count, const void *buf, void *out)
{
    return x32_run(dt, count, (uintptr_t)buf, out, 0);
}

mf_status_t mf_dtype_external32_unpack(MPI_Datatype dt, MPI_Count count, void *buf, const void *in)
{
    return x32_run(dt, count, (uintptr_t)buf, (char *)in, 1);
}
