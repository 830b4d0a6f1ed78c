/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: the buffers of the collectives with any datatype. src/coll moves bytes, so
 * each side of a collective (one buffer holding blocks of items, one block per peer) is turned
 * into the bytes the algorithms see: when every block is one run of memory (predefined types,
 * contiguous derived types) the algorithms work on the user's buffer itself; otherwise on a
 * temporary holding the packed blocks back to back, packed before the collective and unpacked
 * after it (blocking forms), or by pack and unpack steps of the schedule (non-blocking and
 * persistent forms). Matching type signatures have the same packed bytes, so the two sides of
 * a transfer may use different datatypes.
 */
#include "binding.h"

#include "coll.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

int mf_cbuf_init(mf_cbuf_t *cb, const char *func, mf_comm_t *c, const void *user, int n,
                 MPI_Datatype type, const MPI_Datatype *types)
{
    mf_cbuf_clear(cb);
    size_t m = (size_t)(n > 0 ? n : 1), per = 2 * sizeof(MPI_Count) + 2 * sizeof(size_t);
    /* One block of memory: counts, byte displacements in the user buffer, lengths, offsets;
     * inside cb for a few blocks (the malloc and free cost as much as a small collective). */
    char *mem = (char *)cb->inl;
    if (m <= MF_CBUF_INLINE)
        memset(mem, 0, m * per);
    else
        mem = mf_calloc(m, per, "collective buffer");
    if (mem == NULL)
        return mf_err_from_status(c, MF_ERR_NO_MEMORY, func, "cannot allocate the buffer layout");
    cb->counts = (MPI_Count *)mem;
    cb->udispls = (MPI_Aint *)(mem + m * sizeof(MPI_Count));
    cb->lens = (size_t *)(mem + 2 * m * sizeof(MPI_Count));
    cb->displs = cb->lens + m;
    cb->user = (char *)user;
    cb->buf = (char *)user;
    cb->n = n;
    cb->type = type;
    cb->types = types;
    return MPI_SUCCESS;
}

static MPI_Datatype block_type(const mf_cbuf_t *cb, int i)
{
    return cb->types != NULL ? cb->types[i] : cb->type;
}

/* What a block of `count` items of one type looks like; mf_cbuf_layout asks once per type and
 * count, not once per block (it runs at every collective call). */
typedef struct block_shape {
    MPI_Datatype type;
    MPI_Count count;
    size_t bytes;   /* packed */
    int contiguous; /* one run of memory, starting `off` bytes into the block */
    MPI_Aint off;
} block_shape_t;

static const block_shape_t *shape_of(block_shape_t *sh, MPI_Datatype type, MPI_Count count)
{
    if (sh->type == type && sh->count == count)
        return sh;
    mf_dtype_props_t p = {0};
    sh->type = type;
    sh->count = count;
    sh->bytes = 0;
    if (count > 0 && mf_dtype_props(type, &p) == MF_OK)
        sh->bytes = (size_t)count * (size_t)p.psize;
    sh->contiguous = mf_dtype_contiguous(type, count, &sh->off);
    return sh;
}

static size_t block_bytes(const mf_cbuf_t *cb, int i, MPI_Count count)
{
    block_shape_t sh = {.count = -1};
    return shape_of(&sh, block_type(cb, i), count)->bytes;
}

int mf_cbuf_layout(mf_cbuf_t *cb, const char *func, mf_comm_t *c)
{
    int direct = 1;
    size_t total = 0;
    block_shape_t sh = {.count = -1};
    for (int i = 0; i < cb->n; i++) {
        const block_shape_t *b = shape_of(&sh, block_type(cb, i), cb->counts[i]);
        cb->lens[i] = b->bytes;
        total += b->bytes;
        if (b->bytes > 0 && !b->contiguous)
            direct = 0;
        /* where the block's run starts in the user buffer, for now (direct case) */
        cb->displs[i] = (size_t)(cb->udispls[i] + (b->contiguous ? b->off : 0));
    }
    cb->total = total;
    if (direct) {
        /* Work on the user's buffer, based at the lowest run (a type's true lower bound may be
         * negative) so that every offset is >= 0. */
        MPI_Aint lo = 0;
        int first = 1;
        for (int i = 0; i < cb->n; i++)
            if (cb->lens[i] > 0 && (first || (MPI_Aint)cb->displs[i] < lo)) {
                lo = (MPI_Aint)cb->displs[i];
                first = 0;
            }
        cb->buf = (char *)((uintptr_t)cb->user + (uintptr_t)lo); /* MPI_BOTTOM: lo is absolute */
        for (int i = 0; i < cb->n; i++)
            cb->displs[i] = cb->lens[i] > 0 ? (size_t)((MPI_Aint)cb->displs[i] - lo) : 0;
        return MPI_SUCCESS;
    }
    cb->tmp = mf_malloc(total > 0 ? total : 1, "collective packing buffer");
    if (cb->tmp == NULL) {
        mf_cbuf_free(cb);
        return mf_err_from_status(c, MF_ERR_NO_MEMORY, func,
                                  "cannot allocate the packing buffer for a derived datatype");
    }
    cb->buf = cb->tmp;
    size_t pos = 0;
    for (int i = 0; i < cb->n; i++) {
        cb->displs[i] = pos;
        pos += cb->lens[i];
    }
    return MPI_SUCCESS;
}

int mf_cbuf_one(mf_cbuf_t *cb, const char *func, mf_comm_t *c, const void *user, MPI_Count count,
                MPI_Datatype type)
{
    int rc = mf_cbuf_init(cb, func, c, user, 1, type, NULL);
    if (rc != MPI_SUCCESS)
        return rc;
    cb->counts[0] = count;
    return mf_cbuf_layout(cb, func, c);
}

/* Block i, or every block when i < 0; nothing to do when the collective uses the user's
 * buffer. The count is read now, so a caller may shorten a block before unpacking it. */
static void move(mf_cbuf_t *cb, mf_sched_t *s, int block, int unpack)
{
    if (cb->tmp == NULL)
        return;
    int lo = block < 0 ? 0 : block, hi = block < 0 ? cb->n : block + 1;
    if (unpack && s != NULL)
        mf_sched_barrier(s); /* after everything the algorithm does */
    for (int i = lo; i < hi; i++) {
        MPI_Datatype dt = block_type(cb, i);
        size_t len = block_bytes(cb, i, cb->counts[i]);
        char *user = (char *)((uintptr_t)cb->user + (uintptr_t)cb->udispls[i]); /* or MPI_BOTTOM */
        char *packed = cb->buf + cb->displs[i];
        if (len == 0)
            continue;
        if (s != NULL && unpack)
            mf_sched_unpack(s, dt, cb->counts[i], user, packed, len);
        else if (s != NULL)
            mf_sched_pack(s, dt, cb->counts[i], user, packed, len);
        else if (unpack)
            mf_dtype_unpack(dt, cb->counts[i], user, packed, 0, (MPI_Count)len);
        else
            mf_dtype_pack(dt, cb->counts[i], user, packed, 0, (MPI_Count)len);
    }
}

void mf_cbuf_pack(mf_cbuf_t *cb, mf_sched_t *s, int block)
{
    move(cb, s, block, 0);
}

void mf_cbuf_unpack(mf_cbuf_t *cb, mf_sched_t *s, int block)
{
    move(cb, s, block, 1);
}

void mf_cbuf_done(mf_cbuf_t *cb, mf_sched_t *s)
{
    if (s != NULL && cb->tmp != NULL) {
        mf_sched_adopt(s, cb->tmp);
        cb->tmp = NULL;
    }
    mf_cbuf_free(cb);
}

void mf_cbuf_free(mf_cbuf_t *cb)
{
    free(cb->tmp);
    if ((void *)cb->counts != (void *)cb->inl)
        free(cb->counts);
    cb->tmp = NULL;
    cb->counts = NULL;
    cb->udispls = NULL;
    cb->lens = cb->displs = NULL;
}

int mf_cbuf_red_type(const char *func, mf_comm_t *c, MPI_Op op, MPI_Datatype dt,
                     MPI_Datatype *rdt_p, size_t *mul_p, size_t *extent_p)
{
    const mf_dtype_info_t *info = mf_dtype_predefined(dt);
    if (MF_LIKELY(info != NULL && info->direct > 0)) { /* the common case, without the props */
        *rdt_p = dt;
        *mul_p = 1;
        *extent_p = (size_t)info->extent;
        return mf_check_op(func, c, op, dt);
    }
    mf_dtype_props_t p = {0};
    mf_dtype_props(dt, &p);
    *rdt_p = dt;
    *mul_p = 1;
    *extent_p = (size_t)p.psize;
    /* User operations take the derived type itself (on packed items, see mf_op_apply). */
    if (!p.derived || op == MPI_OP_NULL || !mf_op_valid(op) || !mf_op_is_predefined(op) ||
        op == MPI_REPLACE || op == MPI_NO_OP)
        return mf_check_op(func, c, op, dt);
    int mixed;
    MPI_Datatype basic = mf_op_basic_type(dt, &mixed);
    if (mixed)
        return mf_err_raise(c, mf_err_code(MPI_ERR_OP, func,
                                           "argument op=%s is a predefined operation but "
                                           "datatype is a derived type of several different "
                                           "basic types; only a user-defined operation can "
                                           "reduce it",
                                           mf_op_name(op)));
    if (basic == MPI_DATATYPE_NULL) /* no data at all */
        return MPI_SUCCESS;
    int rc;
    rc = mf_check_op(func, c, op, basic);
    if (rc != MPI_SUCCESS)
        return rc;
    /* The packed items are a run of packed basic elements: reduce those. */
    size_t ext = (size_t)mf_dtype_predefined(basic)->size;
    *rdt_p = basic;
    *mul_p = (size_t)p.psize / ext;
    *extent_p = ext;
    return MPI_SUCCESS;
}

int mf_cbuf_bottom_ok(const mf_cbuf_t *cb)
{
    for (int i = 0; i < cb->n; i++) {
        if (cb->counts[i] == 0)
            continue;
        MPI_Datatype t = cb->types != NULL ? cb->types[i] : cb->type;
        /* a block at MPI_BOTTOM lies at an absolute address, through its displacement or its
         * derived type's (none in the first page, which offsets of a NULL buffer would hit) */
        mf_dtype_t *d = mf_dtype_get(t);
        MPI_Aint low = cb->udispls[i] + (d != NULL ? d->true_lb : 0);
        if (d != NULL && d->extent < 0 && cb->counts[i] > 1)
            low += (MPI_Aint)(cb->counts[i] - 1) * d->extent;
        if (low < MF_BOTTOM_ADDR_MIN)
            return 0;
    }
    return 1;
}
