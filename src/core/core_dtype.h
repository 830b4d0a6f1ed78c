/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer interface of derived datatypes and the pack engine (included by core.h).
 *
 * A derived datatype is a refcounted node of a tree whose leaves are predefined datatypes. Every
 * constructor of the standard reduces to three node shapes: a vector (count blocks of blocklen
 * children, a byte stride apart), a list (blocks with their own length, byte displacement and
 * child), and a resized child. Commit flattens one item into segments (offset, length) in type
 * map order, merging runs that touch, so packing is a loop of memcpy and a contiguous layout is
 * recognised as a single segment; a type of many segments in few runs of equal segments at one
 * stride keeps the runs instead (a vector of 10^8 blocks is one run, committed in constant
 * space). The packed form of a predefined leaf is its size in bytes,
 * the same bytes the predefined send path puts on the wire: the pair types with padding
 * (MPI_DOUBLE_INT ...) pack as the struct of their two components (mf_dtype_pair_twin).
 * A type is immutable after construction; its segments are written once by the first commit
 * (under a lock) and read without one afterwards, so any number of threads may use it.
 */
#ifndef MF_CORE_DTYPE_H
#define MF_CORE_DTYPE_H

#include <mpi.h>

#include "util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

typedef enum {
    MF_DT_NODE_VECTOR = 1,
    MF_DT_NODE_LIST,
    MF_DT_NODE_RESIZED,
} mf_dt_node_t;

typedef enum {
    MF_DT_COPY_CALL = 0,
    MF_DT_COPY_RUN8,
    MF_DT_COPY_MOVES_1_2,
} mf_dtype_copy_kind_t;

struct MPI_ABI_Datatype;
/* A whole-message copy: all `count` items at `buf` to or from `packed` (see copy_fn below). */
typedef void (*mf_dtype_copy_fn_t)(const struct MPI_ABI_Datatype *dt, MPI_Count count,
                                   uintptr_t buf, char *packed);

/* A fixed-size copy of part of a segment: `off` in the item, `pos` in its packed form. */
typedef struct mf_dtype_move {
    MPI_Aint off;
    MPI_Count pos;
} mf_dtype_move_t;

typedef struct mf_dtype_seg {
    MPI_Aint off;  /* byte offset from the item's start (its buffer address) */
    MPI_Count len; /* bytes */
    MPI_Count pos; /* packed offset of the segment's first byte within one item */
} mf_dtype_seg_t;

/* n segments of len bytes, stride bytes apart from off (n = 1: one segment, stride 0): the
 * run-length form of the segments, which commit builds and keeps for a type of many segments in
 * long runs instead of listing them (see segs below). */
typedef struct mf_dtype_run {
    MPI_Aint off;
    MPI_Count len;
    MPI_Count pos; /* packed offset of the run's first byte within one item */
    MPI_Count n;
    MPI_Aint stride;
} mf_dtype_run_t;

/* At most this many segments are always listed one by one (segs); a type with more that form
 * few runs keeps its runs instead (see mf_dtype_commit). */
#define MF_DTYPE_SEGS_LISTED 64

struct MPI_ABI_Datatype {
    uint32_t kind;
    atomic_int refs;      /* the user's handles, parent types, pending operations */
    atomic_int user_refs; /* the handles the user obtained and has not freed */
    atomic_int committed; /* segments are valid */
    int combiner;         /* MPI_COMBINER_* of the constructor called */
    int large;            /* made by a _c constructor: contents are in counts */
    /* the layout */
    int node;    /* mf_dt_node_t */
    int depth;   /* 1 + the deepest child's (a predefined type's is 0); see MF_DTYPE_DEPTH_MAX */
    int align;   /* the most strict alignment of a non-empty entry in the type map (1: none) */
    int markers; /* the bounds are explicit lb/ub markers (resized, subarray, darray, or a type
                  * of such children): they decide a parent's bounds (MPI-5.0 5.1.7) */
    MPI_Count nblocks;
    MPI_Count blocklen;     /* vector */
    MPI_Aint stride;        /* vector, in bytes */
    MPI_Count *blocklens;   /* list */
    MPI_Aint *disps;        /* list, in bytes */
    MPI_Datatype *children; /* list: one per block; vector/resized: children[0] */
    /* derived properties of one item */
    MPI_Count size;   /* MPI size: data bytes */
    MPI_Count psize;  /* packed bytes (the size) */
    MPI_Count nelems; /* basic elements */
    MPI_Aint lb, extent, true_lb, true_ub;
    /* after commit */
    pthread_mutex_t commit_lock;
    /* The item's segments (offset, length, packed position) in type-map order, touching ones
     * merged: all nsegs of them, or, when runs is set (below), the first one only. */
    mf_dtype_seg_t *segs;
    MPI_Count nsegs;
    /* a regular item: nsegs blocks of vlen bytes, vstride apart from segs[0].off; vlen = 0 when
     * the segments differ (then the pack loop walks them or their runs) */
    MPI_Count vlen;
    MPI_Aint vstride;
    MPI_Count seg_min; /* the shortest segment (0 when none): can a message go as an iovec */
    /* Whole-message copies chosen at commit for the layout (a loop specialised by block size,
     * or the segment walk), so a message from packed offset 0 to its end costs one indirect
     * call and that loop; set before `committed` is published and never changed. */
    mf_dtype_copy_fn_t pack_all, unpack_all;
    MPI_Aint run_stride; /* regular, and items continue the stride: the whole message is one
                          * run of blocks this far apart; else 0 */
    int dense;           /* one segment as long as the extent: any count is one run */
    /* what a message needs, known at commit so a send or receive reads it rather than derive
     * it: up to run_max items form one run (0: none does, INT64_MAX: any count), which starts
     * run_off bytes from the buffer */
    MPI_Count run_max;
    MPI_Aint run_off;
    /* an item of a few short segments as 8-byte and 4-byte moves (the moves loop) */
    mf_dtype_move_t mv8[4], mv4[2];
    /* The commonest whole-message copies, which the blocking calls inline instead of calling
     * pack_all/unpack_all (mf_dtype_copy_kind_t; MF_DT_COPY_CALL: through the pointers).
     * RUN8: blocks of 8 bytes, copy_stride apart from copy_off, nsegs per item, for up to
     * copy_max items (1, or any when the items continue the stride); MOVES_1_2: one 8-byte and
     * two 4-byte moves per item. */
    int copy_kind;
    MPI_Aint copy_off, copy_stride;
    MPI_Count copy_max;
    /* RUN8 with blocks 16 bytes apart on a CPU with AVX2: runs of at least copy_simd_min
     * blocks pack through mf_dtype_pack8_s16_avx2 (INT64_MAX: never). MOVES_1_2 whose item packs
     * through a 16-byte window (see choose_window in core_dtype.c): copy_win is the window's offset
     * in the item, else -1. */
    MPI_Count copy_simd_min;
    MPI_Aint copy_win;
    /* The segments as nruns runs of equal segments at a fixed stride, kept instead of the list
     * when there are more than MF_DTYPE_SEGS_LISTED segments and few runs (a vector of 10^8
     * doubles is one run: committing it costs no memory); NULL when segs lists them all. (Here,
     * after the fields the copies read, so their offsets stay what the fast paths were tuned
     * with.) */
    mf_dtype_run_t *runs;
    MPI_Count nruns;
    /* what MPI_Type_get_contents returns */
    MPI_Count nints, naddrs, ncounts, ntypes;
    int *c_ints;
    MPI_Aint *c_addrs;
    MPI_Count *c_counts;
    MPI_Datatype *c_types;
    pthread_mutex_t name_lock; /* protects name and attrs */
    char name[MPI_MAX_OBJECT_NAME];
    struct mf_attr *attrs; /* cached attributes (core_attr.c), the one set last first */
    struct MPI_ABI_Datatype *next_free; /* freed types waiting for reuse (core_dtype.c) */
};

typedef struct MPI_ABI_Datatype mf_dtype_t;

/* The deepest a type may be that constructors build on (binding_dtype.c refuses a deeper one
 * with MPI_ERR_TYPE). Commit, external32, MPI_Get_elements and the collectives' signature check
 * walk a type's tree recursively, a frame per level: this bound keeps them well inside a
 * thread's stack (about 1 KiB per level under AddressSanitizer), and no real layout comes near
 * it. */
#define MF_DTYPE_DEPTH_MAX 1024

/* Properties of one item of any datatype, predefined or derived. */
typedef struct mf_dtype_props {
    MPI_Count size, psize, nelems;
    MPI_Aint lb, extent, true_lb, true_ub;
    int committed;
    int derived;
    int markers; /* lb and extent come from explicit markers (see markers above) */
} mf_dtype_props_t;

/* A live derived datatype, or NULL (predefined, freed, foreign). */
static inline mf_dtype_t *mf_dtype_get(MPI_Datatype handle)
{
    if (!mf_handle_is_object(handle))
        return NULL;
    return handle->kind == MF_KIND_DATATYPE ? handle : NULL;
}

/* Data at MPI_BOTTOM (a NULL buffer) is addressed absolutely, so past the first page, which
 * offsets from a NULL buffer would hit instead: how a NULL buffer is told from MPI_BOTTOM. */
#define MF_BOTTOM_ADDR_MIN 4096

/* Whether `count` items of d from a NULL buffer lie at absolute addresses (MPI_BOTTOM). */
static inline int mf_dtype_bottom_ok(const mf_dtype_t *d, MPI_Count count)
{
    MPI_Aint low = d->true_lb;
    if (d->extent < 0 && count > 1)
        low += (MPI_Aint)(count - 1) * d->extent;
    return low >= MF_BOTTOM_ADDR_MIN;
}

/* The derived type a predefined pair type with padding packs through (its components at their
 * native offsets, the pair's extent), or NULL for any other type. */
mf_dtype_t *mf_dtype_pair_twin(MPI_Datatype dt);
/* dt, or for a pair type with padding its twin: what the paths of derived types take. */
static inline MPI_Datatype mf_dtype_packed_as(MPI_Datatype dt)
{
    mf_dtype_t *twin = mf_dtype_pair_twin(dt);
    return twin != NULL ? twin : dt;
}

/* Fill *props; MF_ERR_INVALID when the handle is neither a supported predefined type nor a live
 * derived type. */
mf_status_t mf_dtype_props(MPI_Datatype dt, mf_dtype_props_t *props);
/* Reference counting; predefined handles are ignored. The last release frees the type and drops
 * its references on its children. */
void mf_dtype_retain(MPI_Datatype dt);
void mf_dtype_release(MPI_Datatype dt);
/* A reference for a handle given to the user (MPI_Type_get_contents), which MPI_Type_free
 * gives back with mf_dtype_user_free. Predefined handles are ignored. */
void mf_dtype_retain_for_user(MPI_Datatype dt);
/* MPI_Type_free of a derived type: 0 when the user freed it as many times as the user obtained
 * it already (a stale copy of the handle; parent types or operations still hold it), else the
 * user's reference is dropped. */
int mf_dtype_user_free(mf_dtype_t *d);
/* mf_dtype_release of a derived type the caller holds a reference to (no handle check). */
void mf_dtype_release_last(mf_dtype_t *d);
static inline void mf_dtype_release_held(mf_dtype_t *d)
{
    if (atomic_fetch_sub_explicit(&d->refs, 1, memory_order_acq_rel) == 1)
        mf_dtype_release_last(d);
}

/* Constructors. Children must be valid (the caller checks); each gets a reference. Block lengths
 * and counts are >= 0. The new type has one reference (the user's) and is not committed. */
mf_status_t mf_dtype_create_vector(MPI_Count count, MPI_Count blocklen, MPI_Aint stride_bytes,
                                   MPI_Datatype child, int combiner, mf_dtype_t **dt_p);
/* `children` has `count` entries, or one shared by all blocks when `one_child`. */
mf_status_t mf_dtype_create_list(MPI_Count count, const MPI_Count *blocklens, const MPI_Aint *disps,
                                 const MPI_Datatype *children, int one_child, int combiner,
                                 mf_dtype_t **dt_p);
mf_status_t mf_dtype_create_resized(MPI_Datatype child, MPI_Aint lb, MPI_Aint extent, int combiner,
                                    mf_dtype_t **dt_p);
/* order is MPI_ORDER_C or MPI_ORDER_FORTRAN; arguments already validated. */
mf_status_t mf_dtype_create_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                                     const MPI_Count *starts, int order, MPI_Datatype child,
                                     mf_dtype_t **dt_p);
mf_status_t mf_dtype_create_darray(int size, int rank, int ndims, const MPI_Count *gsizes,
                                   const int *distribs, const int *dargs, const int *psizes,
                                   int order, MPI_Datatype child, mf_dtype_t **dt_p);
/* Record what MPI_Type_get_contents returns (copies; retains derived types). */
mf_status_t mf_dtype_set_contents(mf_dtype_t *dt, MPI_Count nints, const int *ints,
                                  MPI_Count naddrs, const MPI_Aint *addrs, MPI_Count ncounts,
                                  const MPI_Count *counts, MPI_Count ntypes,
                                  const MPI_Datatype *types);
/* Flatten into segments (idempotent, thread-safe). */
mf_status_t mf_dtype_commit(mf_dtype_t *dt);

/* When `count` items of a committed type occupy one run of memory, return 1 and the run's
 * offset from the buffer address (the zero-copy path); otherwise 0. */
int mf_dtype_contiguous(MPI_Datatype dt, MPI_Count count, MPI_Aint *off_p);
/* Copy bytes [start, end) of the packed form of `count` items at `buf` to `packed`
 * (pack) or from `packed` back into `buf` (unpack). `packed` holds exactly those bytes. The
 * type must be committed. This is the streaming primitive: a message may be packed in pieces. */
void mf_dtype_pack(MPI_Datatype dt, MPI_Count count, const void *buf, void *packed, MPI_Count start,
                   MPI_Count end);
void mf_dtype_unpack(MPI_Datatype dt, MPI_Count count, void *buf, const void *packed,
                     MPI_Count start, MPI_Count end);
/* The whole message (bytes [0, count * psize)) of a committed derived type with psize > 0:
 * the layout's own loop, with none of the range bookkeeping of mf_dtype_pack. */
static inline void mf_dtype_pack_all(const mf_dtype_t *d, MPI_Count count, const void *buf,
                                     void *packed)
{
    d->pack_all(d, count, (uintptr_t)buf, packed);
}
static inline void mf_dtype_unpack_all(const mf_dtype_t *d, MPI_Count count, void *buf,
                                       const void *packed)
{
    d->unpack_all(d, count, (uintptr_t)buf, (char *)packed);
}
/* The same, with the commonest layouts' loops (copy_kind) inlined into the caller: no call,
 * no frame, no set-up beyond reading the type. For the blocking calls, whose small messages
 * cost little more than the copy. */
typedef double mf_dtype_pair_t __attribute__((vector_size(16)));
static inline __attribute__((always_inline)) mf_dtype_pair_t mf_dtype_pair_load(const char *a,
                                                                                const char *b)
{
    double x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return (mf_dtype_pair_t){x, y};
}
/* Packs nb >= 4 blocks of 8 bytes, 16 bytes apart from mem, with 32-byte loads (core_dtype.c;
 * only when commit found AVX2, copy_simd_min). */
void mf_dtype_pack8_s16_avx2(const char *mem, char *packed, MPI_Count nb);
/* Below this many blocks the inline loop beats the call. */
#define MF_DT_SIMD_MIN 16

/* Four 8-byte blocks st apart: the packed side moves 16 bytes at a time (two blocks in one
 * vector register, as a compiler vectorises the hand loop): half the stores when packing,
 * half the loads when unpacking; bits only, no arithmetic. */
static inline __attribute__((always_inline)) void mf_dtype_run8_four(char *mem, MPI_Aint st,
                                                                     char *packed, int dir)
{
    mf_dtype_pair_t lo, hi;
    if (dir == 0) {
        lo = mf_dtype_pair_load(mem, mem + st);
        hi = mf_dtype_pair_load(mem + 2 * st, mem + 3 * st);
        memcpy(packed, &lo, 16);
        memcpy(packed + 16, &hi, 16);
    } else {
        memcpy(&lo, packed, 16);
        memcpy(&hi, packed + 16, 16);
        memcpy(mem, &lo[0], 8);
        memcpy(mem + st, &lo[1], 8);
        memcpy(mem + 2 * st, &hi[0], 8);
        memcpy(mem + 3 * st, &hi[1], 8);
    }
}

/* One item of MOVES_1_2: an 8-byte and two 4-byte moves. */
static inline __attribute__((always_inline)) void
mf_dtype_moves12_one(char *mem, char *packed, const MPI_Aint o[3], const MPI_Count p[3], int dir)
{
    memcpy(dir == 0 ? packed + p[0] : mem + o[0], dir == 0 ? mem + o[0] : packed + p[0], 8);
    memcpy(dir == 0 ? packed + p[1] : mem + o[1], dir == 0 ? mem + o[1] : packed + p[1], 4);
    memcpy(dir == 0 ? packed + p[2] : mem + o[2], dir == 0 ? mem + o[2] : packed + p[2], 4);
}

static inline __attribute__((always_inline)) void
mf_dtype_copy_inline(const mf_dtype_t *d, MPI_Count count, uintptr_t buf, char *packed, int dir)
{
    if (d->copy_kind == MF_DT_COPY_RUN8 && count <= d->copy_max) {
        char *mem = (char *)(buf + (uintptr_t)d->copy_off);
        MPI_Aint st = d->copy_stride;
        MPI_Count nb = d->nsegs * count;
        if (dir == 0 && nb >= d->copy_simd_min) {
            mf_dtype_pack8_s16_avx2(mem, packed, nb);
            return;
        }
        /* four blocks per iteration, counted down (counting blocks up cost one instruction
         * more per iteration, an end pointer for this loop more set-up for short messages;
         * eight per iteration cost more set-up than they saved up to 256 bytes); the tail runs
         * to the end pointer */
        char *end = packed + nb * 8;
        for (MPI_Count k = nb >> 2; k > 0; k--, mem += 4 * st, packed += 32)
            mf_dtype_run8_four(mem, st, packed, dir);
        for (; packed != end; mem += st, packed += 8)
            memcpy(dir == 0 ? packed : mem, dir == 0 ? mem : packed, 8);
        return;
    }
    if (d->copy_kind == MF_DT_COPY_MOVES_1_2) {
        MPI_Aint extent = d->extent, win = d->copy_win;
        char *mem = (char *)buf;
        if (win >= 0) {
            /* the window's layout (choose_window): the first segment (mv4[0]) packed at 0, the
             * second's 8 and 4 bytes (mv8[0], mv4[1]) at 4 and 12, so the packed side's
             * offsets are constants. Packing copies the 16-byte window whole and then the
             * first segment over its front: two loads and two stores an item */
            MPI_Aint head = d->mv4[0].off;
            if (dir == 0) {
                /* two items per iteration (the loop's own bookkeeping is a third of an item),
                 * up to an end pointer (less set-up than a count), then an odd last item */
                char *pairs_end = packed + (count >> 1) * 32;
                for (; packed != pairs_end; mem += 2 * extent, packed += 32) {
                    memcpy(packed, mem + win, 16);
                    memcpy(packed, mem + head, 4);
                    memcpy(packed + 16, mem + extent + win, 16);
                    memcpy(packed + 16, mem + extent + head, 4);
                }
                if (count & 1) {
                    memcpy(packed, mem + win, 16);
                    memcpy(packed, mem + head, 4);
                }
            } else {
                /* one item per iteration, its three loads before its three stores: the
                 * packed and user buffers may alias as far as the compiler knows, and a store
                 * between two loads cost 15-20 % over the hand loop at 1-2 KiB (two items per
                 * iteration saved instructions but cost as much time) */
                MPI_Aint o8 = d->mv8[0].off, o4 = d->mv4[1].off;
                for (char *end = packed + count * 16; packed != end; mem += extent, packed += 16) {
                    uint32_t h, t;
                    uint64_t x;
                    memcpy(&h, packed, 4);
                    memcpy(&x, packed + 4, 8);
                    memcpy(&t, packed + 12, 4);
                    memcpy(mem + head, &h, 4);
                    memcpy(mem + o8, &x, 8);
                    memcpy(mem + o4, &t, 4);
                }
            }
            return;
        }
        const MPI_Aint o[3] = {d->mv8[0].off, d->mv4[0].off, d->mv4[1].off};
        const MPI_Count p[3] = {d->mv8[0].pos, d->mv4[0].pos, d->mv4[1].pos};
        MPI_Count psize = d->psize;
        for (; count > 0; count--, mem += extent, packed += psize)
            mf_dtype_moves12_one(mem, packed, o, p, dir);
        return;
    }
    (dir == 0 ? d->pack_all : d->unpack_all)(d, count, buf, packed);
}
/* Whether `count` items of a committed derived type must be packed (are not one run). */
static inline int mf_dtype_needs_pack(const mf_dtype_t *d, MPI_Count count)
{
    return count > d->run_max;
}
/* Where `count` items of a committed derived type that form one run start. */
static inline void *mf_dtype_run_start(const mf_dtype_t *d, MPI_Count count, const void *buf)
{
    return (void *)((uintptr_t)buf + (uintptr_t)(count > 0 ? d->run_off : 0));
}
/* A message of few large blocks goes to the transport as an iovec of its segments, which the
 * shared-memory rendezvous moves with one copy (no pack, no unpack): at most this many entries. */
#define MF_DTYPE_IOV_MAX 64
/* One entry, laid out as UCX's ucp_dt_iov_t (vci.c checks). */
typedef struct mf_dtype_iov {
    void *base;
    size_t len;
} mf_dtype_iov_t;
/* Whether `count` items of a committed derived type go as an iovec: every segment at least
 * `min_block` bytes (0: never) and at most MF_DTYPE_IOV_MAX entries (so count * nsegs entries
 * is small; a type of many segments, listed or in runs, is packed instead). */
static inline int mf_dtype_iov_ok(const mf_dtype_t *d, MPI_Count count, size_t min_block)
{
    return min_block > 0 && d->nsegs > 0 && d->nsegs <= MF_DTYPE_IOV_MAX &&
           (size_t)d->seg_min >= min_block && count > 0 && count <= MF_DTYPE_IOV_MAX / d->nsegs;
}
/* Write the iovec of `count` items at `buf` (mf_dtype_iov_ok said yes) in packed order into
 * `iov` (room for count * nsegs entries), merging blocks that touch; returns the entries. */
size_t mf_dtype_iov_fill(const mf_dtype_t *d, MPI_Count count, const void *buf,
                         mf_dtype_iov_t *iov);
/* Messages made into an iovec so far (the MPI_T counter dtype_iov_msgs). */
uint64_t mf_dtype_iov_msgs(void);
/* Staging temporaries (full packed copies of a message): record one of `bytes`; the largest
 * so far is the MPI_T performance variable dtype_temp_max (streamed messages have none). */
void mf_dtype_temp_note(size_t bytes);
uint64_t mf_dtype_temp_max(void);
/* A staging temporary of at least `bytes` bytes (NULL when out of memory), reused from the
 * calling thread's cache when it has one large enough; release it with mf_dtype_temp_free (any
 * thread), never free(). MANIFOLD_DT_TEMP_CACHE bounds what a thread keeps; flush drops the
 * calling thread's cache (thread exit does it too). */
void *mf_dtype_temp_alloc(size_t bytes);
void mf_dtype_temp_free(void *p);
void mf_dtype_temp_flush(void);

/* The calling thread's cache (core_dtype.c), visible here for the inline fast paths below.
 * Small temporaries (up to MF_DT_SMALL_MAX) are powers of two from 64 bytes, each with a
 * 64-byte header holding its capacity and, while kept, the next one of its list. */
#define MF_DT_TEMP_HDR      64
#define MF_DT_TEMP_SLOTS    2
#define MF_DT_SMALL_MIN_LOG 6
#define MF_DT_SMALL_CLASSES 7 /* 64 B ... 4 KiB */
#define MF_DT_SMALL_MAX     ((size_t)1 << (MF_DT_SMALL_MIN_LOG + MF_DT_SMALL_CLASSES - 1))
#define MF_DT_SMALL_KEEP    16
typedef struct mf_dtype_temp_cache {
    char *slot[MF_DT_TEMP_SLOTS];
    int registered;   /* the thread's exit frees the slots and lists */
    size_t small_cap; /* the largest small temporary a push may keep: 0 until registered */
    char *small[MF_DT_SMALL_CLASSES];
    unsigned char nsmall[MF_DT_SMALL_CLASSES];
} mf_dtype_temp_cache_t;
extern _Thread_local mf_dtype_temp_cache_t mf_dtype_temp_cache
    __attribute__((tls_model("initial-exec")));

static inline int mf_dtype_small_class(size_t cap)
{
    return (int)(63 - __builtin_clzll((unsigned long long)cap)) - MF_DT_SMALL_MIN_LOG;
}
/* mf_dtype_temp_alloc for `bytes` <= MF_DT_SMALL_MAX, with the pop inline (a call and its
 * frame cost as much as the pop itself on a small receive's path). */
static inline void *mf_dtype_temp_alloc_small(size_t bytes)
{
    mf_dtype_temp_cache_t *tc = &mf_dtype_temp_cache;
    int k = bytes <= 64 ? 0 : 64 - __builtin_clzll(bytes - 1) - MF_DT_SMALL_MIN_LOG;
    char *b = tc->small[k];
    if (__builtin_expect(b == NULL, 0))
        return mf_dtype_temp_alloc(bytes);
    tc->small[k] = *(char **)(b + sizeof(size_t));
    tc->nsmall[k]--;
    return b + MF_DT_TEMP_HDR;
}
/* mf_dtype_temp_free with the push inline; anything else goes out of line. */
static inline void mf_dtype_temp_free_fast(void *p)
{
    mf_dtype_temp_cache_t *tc = &mf_dtype_temp_cache;
    char *b = (char *)p - MF_DT_TEMP_HDR;
    size_t cap = *(size_t *)b;
    int k = mf_dtype_small_class(cap);
    if (__builtin_expect(cap > tc->small_cap || tc->nsmall[k] >= MF_DT_SMALL_KEEP, 0)) {
        mf_dtype_temp_free(p);
        return;
    }
    *(char **)(b + sizeof(size_t)) = tc->small[k];
    tc->small[k] = b;
    tc->nsmall[k]++;
}
/* The calling thread's buffer for packing a small immediate send (MF_DT_SEND_SLOT bytes, a
 * temporary): the transport mostly copies such a message inside the call, and then the buffer
 * serves the next send; when it keeps the bytes, the request takes the buffer
 * (mf_dtype_send_slot_give, then req->pack_buf) and the thread's next send makes a new one.
 * NULL when out of memory or the thread cannot keep one. */
#define MF_DT_SEND_SLOT 4096
extern _Thread_local char *mf_dtype_send_slot_tls __attribute__((tls_model("initial-exec")));
char *mf_dtype_send_slot_make(void);
static inline char *mf_dtype_send_slot(void)
{
    char *slot = mf_dtype_send_slot_tls;
    return __builtin_expect(slot != NULL, 1) ? slot : mf_dtype_send_slot_make();
}
static inline void mf_dtype_send_slot_give(void)
{
    mf_dtype_send_slot_tls = NULL;
}
/* Basic elements in the first `bytes` packed bytes of items of dt; -1 when `bytes` ends inside
 * a basic element. */
MPI_Count mf_dtype_elements(MPI_Datatype dt, MPI_Count bytes);
/* Packed bytes of the first `elements` basic elements; -1 if not expressible. */
MPI_Count mf_dtype_bytes_of_elements(MPI_Datatype dt, MPI_Count elements);

/* external32: the portable big-endian representation (MPI-5.0 section 13.5.2). */
mf_status_t mf_dtype_external32_size(MPI_Datatype dt, MPI_Count *size_p);
mf_status_t mf_dtype_external32_pack(MPI_Datatype dt, MPI_Count count, const void *buf, void *out);
mf_status_t mf_dtype_external32_unpack(MPI_Datatype dt, MPI_Count count, void *buf, const void *in);

#endif /* MF_CORE_DTYPE_H */
