/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective checking mode (MANIFOLD_COLL_CHECK=1): before a collective runs, its members
 * compare what they passed. Phase 1 exchanges a fixed-size header (function, root, operation,
 * the (type, count) of reductions) among all members: it has the same shape whatever the
 * collective, so processes that called different collectives meet in it and report instead of
 * hanging. Everyone sees every header, so everyone reaches the same verdict. Only when the
 * headers agree do the members exchange, per peer, the signature each sends to the other
 * (phase 2), compare it with what the receiver expects, and agree on the first mismatch found
 * (phase 3), so every member reports the same error. See docs/design/coll.md.
 */
#include "coll.h"

#include "pt2pt.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tags of their own on the internal context: far from the blocking collectives' small tags and
 * below bit 23 (non-blocking collectives), so check traffic never matches a collective's. */
enum { TAG_HEAD = 0x400001, TAG_SIG = 0x400002, TAG_VERDICT = 0x400003 };

#define FUNC_LEN 40
/* User-defined operations are compared by commutativity only. */
#define OP_USER_COMMUTATIVE     (-1)
#define OP_USER_NON_COMMUTATIVE (-2)

/* A type signature times a count: `hash` is the sum of a per-type code over the basic items
 * (order is not kept, a compromise that lets derived types compose), `type` the predefined
 * type when there is one (names it in messages), `bytes` the data size. */
typedef struct {
    uint64_t hash, bytes;
    int64_t count;
    int32_t type, pad;
} sig_t;

typedef struct {
    char func[FUNC_LEN];
    int32_t root, op;
    int32_t pairs, pad; /* 1: the collective moves data per peer (phase 2 runs) */
    sig_t uniform;
    uint64_t aux;
} head_t;

/* Phase 3: the first mismatch a receiver found (found 0: none). */
typedef struct {
    int32_t found, sender, receiver, pad;
    sig_t sent, expected;
} verdict_t;

static uint64_t type_code(int32_t type)
{
    uint64_t x = (uint64_t)(uint32_t)type * 0x9e3779b97f4a7c15ull;
    return x ^ (x >> 29);
}

/* What one item of a predefined type contributes: its code, or for the pair types of
 * MINLOC/MAXLOC the codes of their two parts, whose signature they are (MPI-4.1 6.9.4: MPI_2INT
 * matches 2 x MPI_INT, MPI_FLOAT_INT a struct of MPI_FLOAT and MPI_INT). */
static uint64_t predefined_hash(MPI_Datatype dt)
{
    static const struct {
        MPI_Datatype pair, value, index;
    } pairs[] = {
        {MPI_FLOAT_INT, MPI_FLOAT, MPI_INT},
        {MPI_DOUBLE_INT, MPI_DOUBLE, MPI_INT},
        {MPI_LONG_INT, MPI_LONG, MPI_INT},
        {MPI_2INT, MPI_INT, MPI_INT},
        {MPI_SHORT_INT, MPI_SHORT, MPI_INT},
        {MPI_LONG_DOUBLE_INT, MPI_LONG_DOUBLE, MPI_INT},
        {MPI_2REAL, MPI_REAL, MPI_REAL},
        {MPI_2DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, MPI_DOUBLE_PRECISION},
        {MPI_2INTEGER, MPI_INTEGER, MPI_INTEGER},
    };
    const mf_dtype_info_t *info = mf_dtype_predefined(dt);
    if (info == NULL)
        return 0;
    for (size_t i = 0; info->nbasic == 2 && i < sizeof(pairs) / sizeof(pairs[0]); i++)
        if (pairs[i].pair == dt)
            return type_code((int32_t)(intptr_t)pairs[i].value) +
                   type_code((int32_t)(intptr_t)pairs[i].index);
    return (uint64_t)info->nbasic * type_code((int32_t)(intptr_t)dt);
}

/* A derived type's signature hash: the sum over its basic elements of what one item of a
 * predefined type contributes, so a contiguous type of 4 MPI_INT hashes as 4 x MPI_INT. */
static uint64_t derived_hash(MPI_Datatype dt)
{
    const mf_dtype_t *d = mf_dtype_get(dt);
    if (d == NULL)
        return predefined_hash(dt);
    uint64_t h = 0;
    for (MPI_Count i = 0; i < (d->node == MF_DT_NODE_LIST ? d->nblocks : 1); i++) {
        MPI_Count n = d->node == MF_DT_NODE_LIST     ? d->blocklens[i]
                      : d->node == MF_DT_NODE_VECTOR ? d->nblocks * d->blocklen
                                                     : 1;
        if (n > 0)
            h += (uint64_t)n * derived_hash(d->children[i]);
    }
    return h;
}

static sig_t sig_of(MPI_Datatype dt, MPI_Count count)
{
    sig_t s;
    memset(&s, 0, sizeof(s));
    const mf_dtype_info_t *info = mf_dtype_predefined(dt);
    const mf_dtype_t *d = mf_dtype_get(dt);
    if (d != NULL && count > 0) {
        s.type = -1; /* derived: compared by hash and size only */
        s.count = count;
        s.hash = (uint64_t)count * derived_hash(dt);
        s.bytes = (uint64_t)count * (uint64_t)d->size;
        return s;
    }
    if (info == NULL || count <= 0)
        return s;
    s.type = (int32_t)(intptr_t)dt;
    s.count = count;
    s.hash = (uint64_t)count * predefined_hash(dt);
    s.bytes = (uint64_t)count * (uint64_t)info->size;
    return s;
}

static int sig_equal(const sig_t *a, const sig_t *b)
{
    /* MPI_PACKED matches any signature of the same size. */
    if (a->type == (int32_t)(intptr_t)MPI_PACKED || b->type == (int32_t)(intptr_t)MPI_PACKED)
        return a->bytes == b->bytes;
    return a->hash == b->hash && a->bytes == b->bytes;
}

static void sig_text(const sig_t *s, char *buf, size_t len)
{
    const mf_dtype_info_t *info = mf_dtype_predefined((MPI_Datatype)(intptr_t)s->type);
    if (s->count == 0)
        snprintf(buf, len, "nothing");
    else if (info != NULL)
        snprintf(buf, len, "%" PRId64 " x %s (%" PRIu64 " bytes)", s->count, info->name, s->bytes);
    else
        snprintf(buf, len, "%" PRIu64 " bytes", s->bytes);
}

/* Class of a signature mismatch: same predefined type means a count problem. */
static mf_check_result_t sig_result(const sig_t *sent, const sig_t *expected)
{
    /* Two different predefined types: the type. A derived type has no single type to compare
     * (type -1): a difference in bytes is one of count, equal bytes one of type. */
    int derived = sent->type == -1 || expected->type == -1;
    if (sent->type != expected->type && sent->count != 0 && expected->count != 0 &&
        (!derived || sent->bytes == expected->bytes))
        return MF_CHECK_TYPE;
    return sent->bytes > expected->bytes ? MF_CHECK_TRUNCATE : MF_CHECK_COUNT;
}

static void op_text(int32_t op, char *buf, size_t len)
{
    if (op == OP_USER_COMMUTATIVE)
        snprintf(buf, len, "a commutative user-defined operation");
    else if (op == OP_USER_NON_COMMUTATIVE)
        snprintf(buf, len, "a non-commutative user-defined operation");
    else if (op == (int32_t)(intptr_t)MPI_OP_NULL)
        snprintf(buf, len, "no operation");
    else
        snprintf(buf, len, "%s", mf_op_name((MPI_Op)(intptr_t)op));
}

static void head_fill(const mf_check_t *chk, head_t *h)
{
    memset(h, 0, sizeof(*h));
    size_t n = strlen(chk->func);
    /* MPI_Bcast and MPI_Bcast_c are the same collective. */
    if (n > 2 && strcmp(chk->func + n - 2, "_c") == 0)
        n -= 2;
    if (n >= FUNC_LEN)
        n = FUNC_LEN - 1;
    memcpy(h->func, chk->func, n);
    h->root = chk->root;
    if (chk->op == MPI_OP_NULL || mf_op_is_predefined(chk->op))
        h->op = (int32_t)(intptr_t)chk->op;
    else
        h->op = mf_op_commutative(chk->op) ? OP_USER_COMMUTATIVE : OP_USER_NON_COMMUTATIVE;
    h->pairs = chk->send.peers != MF_CHECK_NONE || chk->recv.peers != MF_CHECK_NONE;
    h->uniform = sig_of(chk->dt, chk->count);
    h->aux = chk->aux;
}

/* Compare every header with rank 0's; the first difference decides. */
static mf_check_result_t head_compare(const head_t *all, int size, char *msg, size_t msglen)
{
    const head_t *a = &all[0];
    char x[96], y[96];
    for (int r = 1; r < size; r++) {
        const head_t *b = &all[r];
        if (strncmp(a->func, b->func, FUNC_LEN) != 0) {
            snprintf(msg, msglen, "collective mismatch: rank 0 called %.*s, rank %d called %.*s",
                     FUNC_LEN, a->func, r, FUNC_LEN, b->func);
            return MF_CHECK_KIND;
        }
        if (a->root != b->root) {
            snprintf(msg, msglen, "root mismatch: rank 0 passed root %d, rank %d passed root %d",
                     a->root, r, b->root);
            return MF_CHECK_ROOT_DIFF;
        }
        if (a->op != b->op) {
            op_text(a->op, x, sizeof(x));
            op_text(b->op, y, sizeof(y));
            snprintf(msg, msglen, "operation mismatch: rank 0 passed %s, rank %d passed %s", x, r,
                     y);
            return MF_CHECK_OP_DIFF;
        }
        if (!sig_equal(&a->uniform, &b->uniform)) {
            sig_text(&a->uniform, x, sizeof(x));
            sig_text(&b->uniform, y, sizeof(y));
            snprintf(msg, msglen,
                     "type signature mismatch: rank 0 passed %s, rank %d passed %s "
                     "(every process must pass the same)",
                     x, r, y);
            return a->uniform.type != b->uniform.type ? MF_CHECK_TYPE : MF_CHECK_COUNT;
        }
        if (a->aux != b->aux) {
            snprintf(msg, msglen,
                     "count mismatch: the counts array of rank %d differs from rank 0's (every "
                     "process must pass the same)",
                     r);
            return MF_CHECK_AUX;
        }
    }
    return MF_CHECK_OK;
}

/* The signature `side` gives to `peer` (nothing when the side does not involve that peer). */
static sig_t side_sig(const mf_check_side_t *side, int root, int peer)
{
    sig_t none;
    memset(&none, 0, sizeof(none));
    if (side->peers == MF_CHECK_NONE || (side->peers == MF_CHECK_ROOT && peer != root))
        return none;
    MPI_Datatype dt = side->types != NULL ? side->types[peer] : side->type;
    MPI_Count n = side->count;
    if (side->counts != NULL)
        n = side->counts_large ? ((const MPI_Count *)side->counts)[peer]
                               : ((const int *)side->counts)[peer];
    return sig_of(dt, n);
}

/* Everyone sends `len` bytes at `sbuf + i * sstride` to rank i and receives rank i's into
 * `rbuf + i * len` (sstride 0: the same block to all), in size - 1 pairwise steps. */
static mf_status_t exchange(mf_comm_t *comm, const void *sbuf, size_t sstride, void *rbuf,
                            size_t len, int tag)
{
    int size = comm->size, rank = comm->rank;
    const char *s = sbuf;
    char *r = rbuf;
    memcpy(r + (size_t)rank * len, s + (size_t)rank * sstride, len);
    for (int i = 1; i < size; i++) {
        int to = (rank + i) % size, from = (rank - i + size) % size;
        mf_status_t status = mf_pt2pt_sendrecv_internal(
            s + (size_t)to * sstride, len, to, r + (size_t)from * len, len, from, tag, comm);
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

/* Phases 2 and 3: per-peer signatures, then agreement on the first mismatch. */
static mf_status_t check_pairs(mf_comm_t *comm, const mf_check_t *chk, mf_check_result_t *result_p,
                               char *msg, size_t msglen)
{
    int size = comm->size, rank = comm->rank;
    sig_t *out = mf_malloc(2 * (size_t)size * sizeof(sig_t), "collective check signatures");
    verdict_t *verdicts = mf_malloc((size_t)size * sizeof(verdict_t), "collective check");
    mf_status_t status = MF_ERR_NO_MEMORY;
    if (out == NULL || verdicts == NULL)
        goto out_free;
    sig_t *in = out + size;
    for (int j = 0; j < size; j++)
        out[j] = side_sig(&chk->send, chk->root, j);
    status = exchange(comm, out, sizeof(sig_t), in, sizeof(sig_t), TAG_SIG);
    if (status != MF_OK)
        goto out_free;
    verdict_t mine;
    memset(&mine, 0, sizeof(mine));
    for (int j = 0; j < size && !mine.found; j++) {
        sig_t expected = side_sig(&chk->recv, chk->root, j);
        /* A process's block to itself was checked locally by the binding. */
        if (j != rank && !sig_equal(&in[j], &expected)) {
            mine.found = 1;
            mine.sender = j;
            mine.receiver = rank;
            mine.sent = in[j];
            mine.expected = expected;
        }
    }
    status = exchange(comm, &mine, 0, verdicts, sizeof(verdict_t), TAG_VERDICT);
    if (status != MF_OK)
        goto out_free;
    for (int r = 0; r < size; r++) {
        const verdict_t *v = &verdicts[r];
        if (!v->found)
            continue;
        char x[96], y[96];
        sig_text(&v->sent, x, sizeof(x));
        sig_text(&v->expected, y, sizeof(y));
        snprintf(msg, msglen,
                 "type signature mismatch: rank %d sends %s to rank %d, which expects %s",
                 v->sender, x, v->receiver, y);
        *result_p = sig_result(&v->sent, &v->expected);
        break;
    }
out_free:
    free(verdicts);
    free(out);
    return status;
}

mf_status_t mf_coll_check(mf_comm_t *comm, const mf_check_t *chk, mf_check_result_t *result_p,
                          char *msg, size_t msglen)
{
    *result_p = MF_CHECK_OK;
    if (comm->size == 1)
        return MF_OK;
    head_t *all = mf_malloc((size_t)comm->size * sizeof(head_t), "collective check headers");
    if (all == NULL)
        return MF_ERR_NO_MEMORY;
    head_t mine;
    head_fill(chk, &mine);
    mf_status_t status = exchange(comm, &mine, 0, all, sizeof(head_t), TAG_HEAD);
    int pairs = 0;
    if (status == MF_OK) {
        *result_p = head_compare(all, comm->size, msg, msglen);
        for (int r = 0; r < comm->size; r++)
            pairs |= all[r].pairs;
    }
    free(all);
    /* Every member saw the same headers, so all of them take this branch or none. */
    if (status == MF_OK && *result_p == MF_CHECK_OK && pairs)
        status = check_pairs(comm, chk, result_p, msg, msglen);
    return status;
}
