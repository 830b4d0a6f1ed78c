/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective protocols: the blocking collectives of MPI-4.1 chapter 6 on intracommunicators,
 * built on the blocking internal point-to-point helpers. Each collective has its own tag on the
 * internal context, passed down to the algorithms it is made of, so two different collectives
 * never match each other's messages; collectives of one communicator are issued in the same
 * order everywhere, so no sequence number is needed. Reductions combine in rank order whenever
 * the operation is not commutative. Algorithms and their selection: docs/design/coll.md.
 */
#include "coll.h"

#include "pt2pt.h"

#include <stdlib.h>
#include <string.h>

/* memcpy that allows empty copies from or to NULL: a user's buffer may be NULL (or MPI_BOTTOM)
 * when its count is 0, and memcpy's pointers must not be NULL even then. */
static inline void copy_bytes(void *dst, const void *src, size_t len)
{
    if (len > 0)
        mf_coll_copy(dst, src, len);
}

/* Tags 1-3 belong to coll_internal.c. */
enum {
    TAG_BCAST = 4,
    TAG_REDUCE = 5,
    TAG_ALLREDUCE = 6,
    TAG_GATHER = 7,
    TAG_SCATTER = 8,
    TAG_ALLGATHER = 9,
    TAG_ALLTOALL = 10,
    TAG_REDUCE_SCATTER = 11,
    TAG_SCAN = 12,
    TAG_EXSCAN = 13,
};

void mf_coll_discard_blocking(unsigned ctx)
{
    for (int tag = TAG_BCAST; tag <= TAG_EXSCAN; tag++) {
        uint64_t match, mask;
        mf_pt2pt_match(ctx, MF_PT2PT_ANY, tag, &match, &mask);
        mf_vci_pool_discard(match, mask);
    }
}

/* Two ranks on one node take the two-rank point-to-point algorithms below instead of the
 * segment for a buffer (or the block of the rooted and all-to-all collectives) in these
 * ranges, where interleaved launches measured them faster (coll.md). Data flowing one way
 * stops at PAIR_FLOW_MAX: the sender runs ahead on eager pieces the receiver buffers if it
 * is late, so that bounds the memory a late rank holds per call. Allgather exchanges one
 * piece at most (PAIR_SWAP_MAX): with more, every piece waits for the peer, which was up to
 * five times slower than the single copy while other jobs loaded the machine. Alltoall
 * (blocks of two pieces) and Reduce_scatter (vectors up to twice PAIR_FLOW_MAX) take more
 * anyway: two calls of half the size wait for the peer as often, and one large message
 * (Reduce_scatter: into a temporary, then copied) made n bytes up to 1.4x slower than that.
 * Alltoall of 1 MiB blocks in pieces had launches 5-8x slower even on a quiet machine. */
#define PAIR_P2P_MIN            ((size_t)8 * 1024)
#define PAIR_SCATTER_MIN        ((size_t)4 * 1024)
#define PAIR_BCAST_MIN          ((size_t)16 * 1024)
#define PAIR_REDUCE_MIN         ((size_t)8 * 1024)
#define PAIR_SCAN_MIN           ((size_t)8 * 1024)
#define PAIR_ALLREDUCE_MIN      ((size_t)16 * 1024)
#define PAIR_REDUCE_SCATTER_MIN ((size_t)32 * 1024)
#define PAIR_FLOW_MAX           ((size_t)4 * 1024 * 1024)
#define PAIR_SWAP_MAX           ((size_t)128 * 1024)
#define PAIR_ALLTOALL_MAX       ((size_t)256 * 1024)

/* ---- two ranks ---------------------------------------------------------------------------- */

/* The two-rank algorithms move their data in pieces of at most this many bytes: UCX sends a
 * blocking send below 256 KiB as eager fragments through its shared-memory queue (fast local
 * completion) and a larger one by rendezvous, whose single copy (process_vm_readv) lost to the
 * pieces at every size measured while the two ranks ran on cores close together. On cores
 * further apart pair_sendrecv sends one message instead (mf_coll_shm_pair_whole). */
#define PAIR_PIECE ((size_t)128 * 1024)
/* On cores far apart the one message wins from 8 KiB. At 32 KiB, launches split by the
 * benchmarks' placement probe (coll.md): Alltoall 10.1 us against 15.4 in pieces (Open MPI
 * 10.1), Bcast 7.6 against 9.2, Allgather 10.1 against 15.7. At 16 KiB, once the benchmarks
 * warmed UCX's queues up: Bcast 3.6-4.0 against 6.9-7.0, Gather, Scatter, Reduce, Scan,
 * Alltoall and Allgather 3.8-4.6 against 6.7-9.1; at 8 KiB every collective 3.0-3.8 against
 * 3.5-4.8 (coll.md, "Two ranks far apart"). Below, UCX sends both forms eagerly. */
#define PAIR_WHOLE_MIN ((size_t)8 * 1024)

/* `slen` bytes to the other rank of a two-rank communicator while receiving its `rlen`; either
 * side may be NULL (nothing that way). This rank sends in pieces, or as one message when
 * mf_coll_shm_pair_whole says so, and receives whatever the other sends: every piece but the
 * last is PAIR_PIECE bytes, so anything shorter ends the flow (a peer that sends fewer bytes
 * than this rank expects leaves it short, as one message would, instead of waiting). */
static mf_status_t pair_sendrecv(const void *sbuf, size_t slen, void *rbuf, size_t rlen, int tag,
                                 mf_comm_t *comm)
{
    int sending = sbuf != NULL, receiving = rbuf != NULL;
    int whole = mf_coll_shm_pair_whole(comm, (sending ? slen : 0) + (receiving ? rlen : 0)) &&
                slen >= PAIR_WHOLE_MIN;
    size_t soff = 0, roff = 0;
    mf_status_t status = MF_OK;
    while (status == MF_OK && (sending || receiving)) {
        size_t n = slen - soff, got = 0;
        if (!whole && n > PAIR_PIECE)
            n = PAIR_PIECE;
        status = mf_pt2pt_exchange_internal(sending ? (const char *)sbuf + soff : NULL, n, whole,
                                            receiving ? (char *)rbuf + roff : NULL, rlen - roff,
                                            &got, comm->rank ^ 1, tag, comm);
        soff += n;
        sending = sending && soff < slen;
        roff += got;
        receiving = receiving && roff < rlen && got == PAIR_PIECE;
    }
    return status;
}

/* Items per step of the two-rank reductions: a piece's worth, at least one. */
static size_t pair_items(size_t extent, size_t bytes)
{
    size_t n = extent > 0 ? bytes / extent : 0;
    return n > 0 ? n : 1;
}

/* The buffer in pieces from the root to the other rank. */
static mf_status_t bcast_pair(mf_comm_t *comm, void *buf, size_t len, int root, int tag)
{
    if (comm->rank == root)
        return pair_sendrecv(buf, len, NULL, 0, tag, comm);
    return pair_sendrecv(NULL, 0, buf, len, tag, comm);
}

/* The other rank's block in pieces to the root, which copies its own. */
static mf_status_t gather_pair(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root,
                               int tag)
{
    if (comm->rank != root)
        return pair_sendrecv(sbuf, len, NULL, 0, tag, comm);
    if (sbuf != MPI_IN_PLACE)
        copy_bytes((char *)rbuf + (size_t)root * len, sbuf, len);
    return pair_sendrecv(NULL, 0, (char *)rbuf + (size_t)(root ^ 1) * len, len, tag, comm);
}

static mf_status_t scatter_pair(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root,
                                int tag)
{
    if (comm->rank != root)
        return pair_sendrecv(NULL, 0, rbuf, len, tag, comm);
    if (rbuf != MPI_IN_PLACE)
        copy_bytes(rbuf, (const char *)sbuf + (size_t)root * len, len);
    return pair_sendrecv((const char *)sbuf + (size_t)(root ^ 1) * len, len, NULL, 0, tag, comm);
}

/* Each rank sends the other its block for it (a copy of it in place, where the peer's block
 * lands on it) and keeps its own. */
static mf_status_t alltoall_pair(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int tag)
{
    int rank = comm->rank, peer = rank ^ 1;
    char *r = rbuf, *copy = NULL;
    const char *out = (const char *)sbuf + (size_t)peer * len;
    if (sbuf == MPI_IN_PLACE) {
        if ((copy = mf_malloc(len ? len : 1, "alltoall buffer")) == NULL)
            return MF_ERR_NO_MEMORY;
        copy_bytes(copy, r + (size_t)peer * len, len);
        out = copy;
    } else {
        copy_bytes(r + (size_t)rank * len, (const char *)sbuf + (size_t)rank * len, len);
    }
    mf_status_t status = pair_sendrecv(out, len, r + (size_t)peer * len, len, tag, comm);
    free(copy);
    return status;
}

/* ---- broadcast --------------------------------------------------------------------------- */

static mf_status_t bcast_binomial(mf_comm_t *comm, void *buf, size_t len, int root, int tag)
{
    int size = comm->size, vr = (comm->rank - root + size) % size, mask = 1;
    mf_status_t status = MF_OK;
    while (mask < size) {
        if (vr & mask) {
            status = mf_pt2pt_recv_internal(buf, len, (vr - mask + root) % size, tag, comm);
            if (status != MF_OK)
                return status;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < size) {
            status = mf_pt2pt_send_internal(buf, len, (vr + mask + root) % size, tag, comm);
            if (status != MF_OK)
                return status;
        }
    }
    return MF_OK;
}

/* Byte offset of chunk `i` when `len` bytes are cut into `n` chunks of equal size (the last
 * ones possibly shorter or empty). */
static size_t chunk_off(size_t len, int n, int i)
{
    size_t chunk = (len + (size_t)n - 1) / (size_t)n, off = chunk * (size_t)i;
    return off < len ? off : len;
}

/* Large messages: a binomial scatter of p chunks, then a ring allgather of the chunks, so the
 * root sends each byte about once instead of log2(p) times. */
static mf_status_t bcast_scatter_allgather(mf_comm_t *comm, void *buf, size_t len, int root,
                                           int tag)
{
    int size = comm->size, vr = (comm->rank - root + size) % size, mask = 1;
    char *b = buf;
    mf_status_t status;
    /* Relative rank vr owns chunks [vr, vr + subtree size) after the scatter. */
    while (mask < size) {
        if (vr & mask) {
            int hi = vr + mask < size ? vr + mask : size;
            size_t lo_off = chunk_off(len, size, vr), hi_off = chunk_off(len, size, hi);
            status = mf_pt2pt_recv_internal(b + lo_off, hi_off - lo_off, (vr - mask + root) % size,
                                            tag, comm);
            if (status != MF_OK)
                return status;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < size) {
            int lo = vr + mask, hi = vr + 2 * mask < size ? vr + 2 * mask : size;
            size_t lo_off = chunk_off(len, size, lo), hi_off = chunk_off(len, size, hi);
            status =
                mf_pt2pt_send_internal(b + lo_off, hi_off - lo_off, (lo + root) % size, tag, comm);
            if (status != MF_OK)
                return status;
        }
    }
    int right = (vr + 1) % size, left = (vr - 1 + size) % size;
    for (int i = 0; i < size - 1; i++) {
        int sb = (vr - i + size) % size, rb = (vr - i - 1 + size) % size;
        size_t so = chunk_off(len, size, sb), ro = chunk_off(len, size, rb);
        status = mf_pt2pt_sendrecv_internal(
            b + so, chunk_off(len, size, sb + 1) - so, (right + root) % size, b + ro,
            chunk_off(len, size, rb + 1) - ro, (left + root) % size, tag, comm);
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

static mf_status_t bcast_run(mf_comm_t *comm, void *buf, size_t len, int root)
{
    /* Shared memory inside nodes unless an algorithm is forced (coll_shm.c). */
    if (!MF_PARAM_LIVE(coll_bcast) &&
        mf_coll_shm_pair_p2p_far(comm, len, PAIR_BCAST_MIN, PAIR_FLOW_MAX))
        return bcast_pair(comm, buf, len, root, TAG_BCAST);
    if (!MF_PARAM_LIVE(coll_bcast) && mf_coll_shm_usable(comm, MPI_OP_NULL))
        return mf_coll_shm_bcast(comm, buf, len, root);
    if (comm->size == 1 || len == 0)
        return MF_OK;
    int alg = mf_coll_select(MF_COLL_BCAST, comm->size, len);
    if (alg == MF_COLL_BCAST_SCATTER_ALLGATHER)
        return bcast_scatter_allgather(comm, buf, len, root, TAG_BCAST);
    return bcast_binomial(comm, buf, len, root, TAG_BCAST);
}

/* ---- reduce ------------------------------------------------------------------------------ */

/* Binomial reduction of `count` items from every rank's `sbuf` into `rbuf` at `root`. A node
 * of the tree holds the combination of a contiguous range of relative ranks and receives the
 * next range up, so combining "mine op received" keeps the order. For non-commutative
 * operations the tree is rooted at rank 0, where relative and real order agree, and the result
 * travels on to `root`. */
static mf_status_t reduce_binomial(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                                   MPI_Datatype dt, size_t extent, MPI_Op op, int root, int tag)
{
    int size = comm->size, rank = comm->rank;
    int troot = mf_op_commutative(op) ? root : 0;
    int vr = (rank - troot + size) % size;
    size_t len = count * extent;
    char *acc = mf_malloc(len ? len : 1, "reduce buffer");
    char *tmp = mf_malloc(len ? len : 1, "reduce buffer");
    mf_status_t status = MF_OK;
    if (acc == NULL || tmp == NULL) {
        status = MF_ERR_NO_MEMORY;
        goto out_free;
    }
    copy_bytes(acc, sbuf, len);
    for (int mask = 1; mask < size; mask <<= 1) {
        if (vr & mask) {
            status = mf_pt2pt_send_internal(acc, len, (vr - mask + troot) % size, tag, comm);
            if (status != MF_OK)
                goto out_free;
            break;
        }
        if (vr + mask < size) {
            status = mf_pt2pt_recv_internal(tmp, len, (vr + mask + troot) % size, tag, comm);
            if (status != MF_OK)
                goto out_free;
            mf_op_apply(op, acc, tmp, count, dt); /* tmp = acc op tmp */
            char *t = acc;
            acc = tmp;
            tmp = t;
        }
    }
    if (troot != root) {
        if (rank == troot)
            status = mf_pt2pt_send_internal(acc, len, root, tag, comm);
        else if (rank == root)
            status = mf_pt2pt_recv_internal(acc, len, troot, tag, comm);
    }
    if (status == MF_OK && rank == root)
        copy_bytes(rbuf, acc, len);
out_free:
    free(acc);
    free(tmp);
    return status;
}

/* Two ranks: the other rank sends its send buffer as it is, in pieces or as one message
 * (pair_sendrecv's choice). The root receives it straight into its result and combines its own
 * vector in ("own op received": rank order when the root is rank 0, any order for a
 * commutative operation); otherwise (rank 1 as root with a non-commutative operation, or in
 * place) it receives into a temporary of the whole vector. It takes whatever arrives and
 * combines it while the next piece is on its way; a piece shorter than a full one ends the
 * vector, as in pair_sendrecv. */
static mf_status_t reduce_pair(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                               MPI_Datatype dt, size_t extent, MPI_Op op, int root, int tag)
{
    size_t piece = pair_items(extent, PAIR_PIECE) * extent, len = count * extent;
    if (count == 0)
        return MF_OK;
    int whole = mf_coll_shm_pair_whole(comm, len) && len >= PAIR_WHOLE_MIN;
    if (comm->rank != root) {
        mf_status_t status = MF_OK;
        size_t got;
        for (size_t off = 0; status == MF_OK && off < len; off += whole ? len : piece)
            status = mf_pt2pt_exchange_internal((const char *)sbuf + off,
                                                whole || len - off < piece ? len - off : piece,
                                                whole, NULL, 0, &got, root, tag, comm);
        return status;
    }
    int direct = sbuf != rbuf && (root == 0 || mf_op_commutative(op));
    char *tmp = NULL;
    if (!direct && (tmp = mf_malloc(len, "reduce buffer")) == NULL)
        return MF_ERR_NO_MEMORY;
    mf_status_t status = MF_OK;
    size_t got = piece;
    for (size_t off = 0; status == MF_OK && off < len && got == piece; off += got) {
        const char *own = (const char *)sbuf + off;
        char *res = (char *)rbuf + off, *in = direct ? res : tmp + off;
        status = mf_pt2pt_exchange_internal(NULL, 0, 0, in, len - off, &got, root ^ 1, tag, comm);
        size_t n = got / extent;
        if (status != MF_OK)
            break;
        if (direct) {
            mf_op_apply(op, own, res, n, dt); /* own op received */
        } else if (root == 0) {
            mf_op_apply(op, res, in, n, dt); /* in place: in = own op received */
            copy_bytes(res, in, n * extent);
        } else {
            if (own != res)
                copy_bytes(res, own, n * extent);
            mf_op_apply(op, in, res, n, dt); /* received op own */
        }
    }
    free(tmp);
    return status;
}

/* ---- allreduce --------------------------------------------------------------------------- */

/* Two ranks, commutative operations: each rank combines one half of the vector (rank 0 the
 * lower), receiving the other's contribution straight into that half of its result, then the
 * two swap their finished halves; a step at a time of up to two pieces. Each half is combined
 * by one rank only, so both end with the same bits. */
static mf_status_t allreduce_pair(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                                  MPI_Datatype dt, size_t extent, MPI_Op op, int tag)
{
    int rank = comm->rank;
    size_t step = pair_items(extent, 2 * PAIR_PIECE);
    char *tmp = NULL;
    if (sbuf == rbuf && (tmp = mf_malloc(step * extent, "allreduce buffer")) == NULL)
        return MF_ERR_NO_MEMORY; /* in place: my half of the result is still my own data */
    mf_status_t status = MF_OK;
    for (size_t i = 0; status == MF_OK && i < count; i += step) {
        size_t n = count - i < step ? count - i : step, lo = n / 2;
        size_t mine = rank == 0 ? lo : n - lo, theirs = n - mine;
        const char *own = (const char *)sbuf + i * extent;
        char *res = (char *)rbuf + i * extent;
        size_t my_off = rank == 0 ? 0 : lo * extent, their_off = rank == 0 ? lo * extent : 0;
        char *in = tmp != NULL ? tmp : res + my_off;
        status = mf_pt2pt_sendrecv_internal(own + their_off, theirs * extent, rank ^ 1, in,
                                            mine * extent, rank ^ 1, tag, comm);
        if (status != MF_OK)
            break;
        if (tmp != NULL)
            mf_op_apply(op, in, res + my_off, mine, dt); /* received op own */
        else
            mf_op_apply(op, own + my_off, in, mine, dt); /* own op received */
        status = mf_pt2pt_sendrecv_internal(res + my_off, mine * extent, rank ^ 1, res + their_off,
                                            theirs * extent, rank ^ 1, tag, comm);
    }
    free(tmp);
    return status;
}

/* The ranks beyond the largest power of two `pof2` fold into the first ones: with
 * rem = size - pof2, ranks 2i and 2i+1 (i < rem) combine at 2i+1, which takes part as new rank
 * i; ranks from 2*rem on take part as rank - rem. Returns the new rank, -1 for ranks that only
 * handed their data over. */
static int fold_rank(int rank, int rem)
{
    if (rank < 2 * rem)
        return rank % 2 ? rank / 2 : -1;
    return rank - rem;
}

static int unfold_rank(int newrank, int rem)
{
    return newrank < rem ? newrank * 2 + 1 : newrank + rem;
}

static mf_status_t fold_in(mf_comm_t *comm, char **acc, char **tmp, size_t count, MPI_Datatype dt,
                           size_t len, MPI_Op op, int rem, int tag)
{
    int rank = comm->rank;
    if (rank >= 2 * rem)
        return MF_OK;
    if (rank % 2 == 0)
        return mf_pt2pt_send_internal(*acc, len, rank + 1, tag, comm);
    mf_status_t status = mf_pt2pt_recv_internal(*tmp, len, rank - 1, tag, comm);
    if (status == MF_OK)
        mf_op_apply(op, *tmp, *acc, count, dt); /* lower rank first */
    return status;
}

static mf_status_t fold_out(mf_comm_t *comm, char *acc, size_t len, int rem, int tag)
{
    int rank = comm->rank;
    if (rank >= 2 * rem)
        return MF_OK;
    if (rank % 2 == 0)
        return mf_pt2pt_recv_internal(acc, len, rank + 1, tag, comm);
    return mf_pt2pt_send_internal(acc, len, rank - 1, tag, comm);
}

static mf_status_t allreduce_recursive_doubling(mf_comm_t *comm, char **acc, char **tmp,
                                                size_t count, MPI_Datatype dt, size_t extent,
                                                MPI_Op op, int tag)
{
    int size = comm->size, pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2;
    size_t len = count * extent;
    mf_status_t status = fold_in(comm, acc, tmp, count, dt, len, op, rem, tag);
    int newrank = fold_rank(comm->rank, rem);
    for (int mask = 1; status == MF_OK && newrank >= 0 && mask < pof2; mask <<= 1) {
        int peer = unfold_rank(newrank ^ mask, rem);
        status = mf_pt2pt_sendrecv_internal(*acc, len, peer, *tmp, len, peer, tag, comm);
        if (status != MF_OK)
            break;
        /* Keep rank order so every process computes bit-identical results. */
        if (peer < comm->rank) {
            mf_op_apply(op, *tmp, *acc, count, dt);
        } else {
            mf_op_apply(op, *acc, *tmp, count, dt);
            char *t = *acc;
            *acc = *tmp;
            *tmp = t;
        }
    }
    if (status == MF_OK)
        status = fold_out(comm, *acc, len, rem, tag);
    return status;
}

/* First element of block `b` when `count` elements are cut into `n` blocks. */
static size_t block_start(size_t count, int n, int b)
{
    size_t q = count / (size_t)n, r = count % (size_t)n;
    return q * (size_t)b + ((size_t)b < r ? (size_t)b : r);
}

/* Rabenseifner: reduce-scatter by recursive halving, then allgather by recursive doubling
 * over the same pairs in reverse; each process moves about 2x the data instead of log2(p)x.
 * Commutative operations only. */
static mf_status_t allreduce_rabenseifner(mf_comm_t *comm, char **acc, char **tmp, size_t count,
                                          MPI_Datatype dt, size_t extent, MPI_Op op, int tag)
{
    int size = comm->size, pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2;
    size_t len = count * extent;
    mf_status_t status = fold_in(comm, acc, tmp, count, dt, len, op, rem, tag);
    int newrank = fold_rank(comm->rank, rem);
    int lo_at[32], hi_at[32], steps = 0, lo = 0, hi = pof2;
    for (int mask = pof2 / 2; status == MF_OK && newrank >= 0 && mask > 0; mask /= 2) {
        int peer = unfold_rank(newrank ^ mask, rem), mid = lo + (hi - lo) / 2;
        lo_at[steps] = lo;
        hi_at[steps] = hi;
        steps++;
        int keep_lo = newrank & mask ? mid : lo, keep_hi = newrank & mask ? hi : mid;
        int send_lo = newrank & mask ? lo : mid, send_hi = newrank & mask ? mid : hi;
        size_t ks = block_start(count, pof2, keep_lo), ke = block_start(count, pof2, keep_hi);
        size_t ss = block_start(count, pof2, send_lo), se = block_start(count, pof2, send_hi);
        status =
            mf_pt2pt_sendrecv_internal(*acc + ss * extent, (se - ss) * extent, peer,
                                       *tmp + ks * extent, (ke - ks) * extent, peer, tag, comm);
        if (status == MF_OK)
            mf_op_apply(op, *tmp + ks * extent, *acc + ks * extent, ke - ks, dt);
        lo = keep_lo;
        hi = keep_hi;
    }
    for (int mask = 1; status == MF_OK && newrank >= 0 && mask < pof2; mask *= 2) {
        steps--;
        int peer = unfold_rank(newrank ^ mask, rem);
        int plo = lo == lo_at[steps] ? hi : lo_at[steps];
        int phi = lo == lo_at[steps] ? hi_at[steps] : lo;
        size_t ms = block_start(count, pof2, lo), me = block_start(count, pof2, hi);
        size_t ps = block_start(count, pof2, plo), pe = block_start(count, pof2, phi);
        status =
            mf_pt2pt_sendrecv_internal(*acc + ms * extent, (me - ms) * extent, peer,
                                       *acc + ps * extent, (pe - ps) * extent, peer, tag, comm);
        lo = lo_at[steps];
        hi = hi_at[steps];
    }
    if (status == MF_OK)
        status = fold_out(comm, *acc, len, rem, tag);
    return status;
}

static int largest_pof2(int size)
{
    int pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    return pof2;
}

/* Rabenseifner's reduce: the reduce-scatter of allreduce_rabenseifner, then the pieces are
 * gathered along the same pairs in reverse to folded rank 0, which forwards the result to the
 * root if that is another process. Commutative operations only. */
static mf_status_t reduce_rabenseifner(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                                       MPI_Datatype dt, size_t extent, MPI_Op op, int root, int tag)
{
    int size = comm->size, rank = comm->rank, pof2 = largest_pof2(size), rem = size - pof2;
    size_t len = count * extent;
    char *acc = mf_malloc(len, "reduce buffer"), *tmp = mf_malloc(len, "reduce buffer");
    mf_status_t status = MF_ERR_NO_MEMORY;
    if (acc == NULL || tmp == NULL)
        goto out_free;
    copy_bytes(acc, sbuf, len);
    status = fold_in(comm, &acc, &tmp, count, dt, len, op, rem, tag);
    int newrank = fold_rank(rank, rem);
    int lo_at[32], hi_at[32], steps = 0, lo = 0, hi = pof2;
    for (int mask = pof2 / 2; status == MF_OK && newrank >= 0 && mask > 0; mask /= 2) {
        int peer = unfold_rank(newrank ^ mask, rem), mid = lo + (hi - lo) / 2;
        lo_at[steps] = lo;
        hi_at[steps] = hi;
        steps++;
        int keep_lo = newrank & mask ? mid : lo, keep_hi = newrank & mask ? hi : mid;
        int send_lo = newrank & mask ? lo : mid, send_hi = newrank & mask ? mid : hi;
        size_t ks = block_start(count, pof2, keep_lo), ke = block_start(count, pof2, keep_hi);
        size_t ss = block_start(count, pof2, send_lo), se = block_start(count, pof2, send_hi);
        status = mf_pt2pt_sendrecv_internal(acc + ss * extent, (se - ss) * extent, peer,
                                            tmp + ks * extent, (ke - ks) * extent, peer, tag, comm);
        if (status == MF_OK)
            mf_op_apply(op, tmp + ks * extent, acc + ks * extent, ke - ks, dt);
        lo = keep_lo;
        hi = keep_hi;
    }
    /* Binomial gather of the pieces to folded rank 0. */
    for (int mask = 1; status == MF_OK && newrank >= 0 && mask < pof2; mask *= 2) {
        steps--;
        int peer = unfold_rank(newrank ^ mask, rem);
        size_t ms = block_start(count, pof2, lo), me = block_start(count, pof2, hi);
        if (newrank & mask) {
            status = mf_pt2pt_send_internal(acc + ms * extent, (me - ms) * extent, peer, tag, comm);
            break;
        }
        int plo = lo == lo_at[steps] ? hi : lo_at[steps];
        int phi = lo == lo_at[steps] ? hi_at[steps] : lo;
        size_t ps = block_start(count, pof2, plo), pe = block_start(count, pof2, phi);
        status = mf_pt2pt_recv_internal(acc + ps * extent, (pe - ps) * extent, peer, tag, comm);
        lo = lo_at[steps];
        hi = hi_at[steps];
    }
    int holder = unfold_rank(0, rem);
    if (status == MF_OK && holder != root) {
        if (rank == holder)
            status = mf_pt2pt_send_internal(acc, len, root, tag, comm);
        else if (rank == root)
            status = mf_pt2pt_recv_internal(rbuf, len, holder, tag, comm);
    } else if (status == MF_OK && rank == root) {
        copy_bytes(rbuf, acc, len);
    }
out_free:
    free(acc);
    free(tmp);
    return status;
}

static mf_status_t reduce_run(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                              MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    if (!MF_PARAM_LIVE(coll_reduce) &&
        mf_coll_shm_pair_p2p_far(comm, count * extent, PAIR_REDUCE_MIN, PAIR_FLOW_MAX))
        return reduce_pair(comm, sbuf, rbuf, count, dt, extent, op, root, TAG_REDUCE);
    if (!MF_PARAM_LIVE(coll_reduce) && extent <= MF_COLL_SHM_ITEM_MAX &&
        mf_coll_shm_usable(comm, op))
        return mf_coll_shm_reduce(comm, sbuf, rbuf, count, dt, extent, op, root);
    int alg = mf_coll_select(MF_COLL_REDUCE, comm->size, count * extent);
    /* Rabenseifner needs a commutative operation and at least one item per piece. */
    if (alg == MF_COLL_REDUCE_RABENSEIFNER && comm->size > 1 && mf_op_commutative(op) &&
        count >= (size_t)largest_pof2(comm->size))
        return reduce_rabenseifner(comm, sbuf, rbuf, count, dt, extent, op, root, TAG_REDUCE);
    return reduce_binomial(comm, sbuf, rbuf, count, dt, extent, op, root, TAG_REDUCE);
}

static mf_status_t allreduce_run(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                                 MPI_Datatype dt, size_t extent, MPI_Op op)
{
    if (!MF_PARAM_LIVE(coll_allreduce) && mf_op_commutative(op) &&
        mf_coll_shm_pair_p2p(comm, count * extent, PAIR_ALLREDUCE_MIN, SIZE_MAX))
        return allreduce_pair(comm, sbuf, rbuf, count, dt, extent, op, TAG_ALLREDUCE);
    if (!MF_PARAM_LIVE(coll_allreduce) && extent <= MF_COLL_SHM_ITEM_MAX &&
        mf_coll_shm_usable(comm, op))
        return mf_coll_shm_allreduce(comm, sbuf, rbuf, count, dt, extent, op);
    size_t len = count * extent;
    if (sbuf != rbuf)
        copy_bytes(rbuf, sbuf, len);
    if (comm->size == 1 || count == 0)
        return MF_OK;
    int alg = mf_coll_select(MF_COLL_ALLREDUCE, comm->size, len);
    if (!mf_op_commutative(op) || alg == MF_COLL_ALLREDUCE_REDUCE_BCAST) {
        /* Rank order is easiest to keep through one tree: reduce at 0, then broadcast. */
        mf_status_t status =
            reduce_binomial(comm, rbuf, rbuf, count, dt, extent, op, 0, TAG_ALLREDUCE);
        return status != MF_OK ? status : bcast_binomial(comm, rbuf, len, 0, TAG_ALLREDUCE);
    }
    char *acc = mf_malloc(len, "allreduce buffer"), *tmp = mf_malloc(len, "allreduce buffer");
    mf_status_t status = MF_ERR_NO_MEMORY;
    if (acc != NULL && tmp != NULL) {
        copy_bytes(acc, rbuf, len);
        if (alg == MF_COLL_ALLREDUCE_RABENSEIFNER)
            status = allreduce_rabenseifner(comm, &acc, &tmp, count, dt, extent, op, TAG_ALLREDUCE);
        else
            status = allreduce_recursive_doubling(comm, &acc, &tmp, count, dt, extent, op,
                                                  TAG_ALLREDUCE);
        if (status == MF_OK)
            copy_bytes(rbuf, acc, len);
    }
    free(acc);
    free(tmp);
    return status;
}

/* ---- gather, scatter, allgather, alltoall ------------------------------------------------ */

static mf_status_t gatherv_linear(mf_comm_t *comm, const void *sbuf, size_t slen, void *rbuf,
                                  const size_t *rlens, const size_t *rdispls, int root, int tag)
{
    if (comm->rank != root)
        return mf_pt2pt_send_internal(sbuf, slen, root, tag, comm);
    char *r = rbuf;
    for (int i = 0; i < comm->size; i++) {
        mf_status_t status = MF_OK;
        if (i == root) {
            if (sbuf != MPI_IN_PLACE)
                copy_bytes(r + rdispls[i], sbuf, slen);
        } else {
            status = mf_pt2pt_recv_internal(r + rdispls[i], rlens[i], i, tag, comm);
        }
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

static mf_status_t gatherv_run(mf_comm_t *comm, const void *sbuf, size_t slen, void *rbuf,
                               const size_t *rlens, const size_t *rdispls, int root)
{
    return gatherv_linear(comm, sbuf, slen, rbuf, rlens, rdispls, root, TAG_GATHER);
}

/* Lowest set bit of relative rank vr (the size of its subtree in a binomial tree), or the
 * first power of two reaching `size` for vr 0. */
static int subtree_span(int vr, int size)
{
    int span = 1;
    while (!(vr & span) && span < size)
        span <<= 1;
    return span;
}

/* Binomial gather: relative rank vr collects the blocks of vr .. vr+span-1 (in relative order)
 * and passes them up in one message, so the root receives log2(p) messages instead of p-1. */
static mf_status_t gather_binomial(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                   int root, int tag)
{
    int size = comm->size, vr = (comm->rank - root + size) % size;
    int span = subtree_span(vr, size), nblk = span < size - vr ? span : size - vr;
    const char *own = sbuf == MPI_IN_PLACE ? (char *)rbuf + (size_t)root * len : sbuf;
    char *buf = NULL, *alloc = NULL;
    mf_status_t status = MF_OK;
    if (nblk == 1) {
        buf = (char *)own;
    } else if (vr == 0 && root == 0) {
        buf = rbuf; /* relative order is rank order */
        if (sbuf != MPI_IN_PLACE)
            copy_bytes(buf, sbuf, len);
    } else {
        buf = alloc = mf_malloc((size_t)nblk * len, "gather buffer");
        if (buf == NULL)
            return MF_ERR_NO_MEMORY;
        copy_bytes(buf, own, len);
    }
    for (int mask = 1; mask < span && vr + mask < size && status == MF_OK; mask <<= 1) {
        int n = mask < size - vr - mask ? mask : size - vr - mask;
        status = mf_pt2pt_recv_internal(buf + (size_t)mask * len, (size_t)n * len,
                                        (vr + mask + root) % size, tag, comm);
    }
    if (status == MF_OK && vr != 0) {
        status =
            mf_pt2pt_send_internal(buf, (size_t)nblk * len, (vr - span + root) % size, tag, comm);
    } else if (status == MF_OK && buf != rbuf) {
        /* relative block j belongs to rank (j + root) % size */
        size_t head = (size_t)(size - root) * len;
        copy_bytes((char *)rbuf + (size_t)root * len, buf, head);
        copy_bytes(rbuf, buf + head, (size_t)root * len);
    }
    free(alloc);
    return status;
}

/* Per-rank lengths and packed displacements for `len`-byte blocks: 2*size entries. */
static size_t *uniform_layout(int size, size_t len)
{
    size_t *arr = mf_malloc(2 * (size_t)size * sizeof(size_t), "collective layout");
    if (arr != NULL) {
        for (int i = 0; i < size; i++) {
            arr[i] = len;
            arr[size + i] = (size_t)i * len;
        }
    }
    return arr;
}

static mf_status_t gather_run(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root)
{
    /* Ranks sharing cores, blocks from 2 KiB: the ring of units, one hand-over per sender and
     * piece of a quarter of the ring (4 ranks on 2 cores, medians at load 6: 8 KiB 9.2 us
     * against 10.7 in pieces, 16 KiB 18.5 against 21.6; see coll.md). */
    if (!MF_PARAM_LIVE(coll_gather) && mf_coll_shm_crowd_gather_ok(comm, len))
        return mf_coll_shm_crowd_gather(comm, sbuf, len, rbuf, root);
    /* Below that (or with the ring off): pieces up to 16 KiB blocks (4 ranks on 2 cores,
     * fastest launches: 4 KiB 1.0 us against 7.2 point-to-point, 8 KiB 2.0 against 4.6, 16 KiB
     * 5.0 against 26); the senders publish every piece without waiting for the root. */
    if (!MF_PARAM_LIVE(coll_gather) && mf_coll_shm_pieces(comm, len, 16384))
        return mf_coll_shm_gather(comm, sbuf, len, rbuf, root);
    /* Above the pieces (the ring off): every sender writes its block straight into the root's
     * buffer (process_vm_writev), one hand-over per sender instead of a stream of eager fragments,
     * the copies spread over the cores (see coll.md, "Gather of 32-128 KiB blocks"). */
    if (!MF_PARAM_LIVE(coll_gather) && mf_coll_shm_crowd_cma(comm, len, 16384 + 1))
        return mf_coll_shm_cma_push_gather(comm, sbuf, len, rbuf, root);
    if (!MF_PARAM_LIVE(coll_gather) && mf_coll_shm_cma(comm, len, MF_PARAM_LIVE(coll_cma_bytes)))
        return mf_coll_shm_cma_gather(comm, sbuf, len, rbuf, root);
    if (!MF_PARAM_LIVE(coll_gather) &&
        mf_coll_shm_pair_p2p_far(comm, len, PAIR_P2P_MIN, PAIR_FLOW_MAX))
        return gather_pair(comm, sbuf, len, rbuf, root, TAG_GATHER);
    if (!MF_PARAM_LIVE(coll_gather) && mf_coll_shm_medium(comm, len))
        return mf_coll_shm_medium_gather(comm, sbuf, len, rbuf, root);
    int alg = mf_coll_select(MF_COLL_GATHER, comm->size, len);
    if (alg == MF_COLL_GATHER_BINOMIAL && comm->size > 1)
        return gather_binomial(comm, sbuf, len, rbuf, root, TAG_GATHER);
    size_t *arr = uniform_layout(comm->size, len);
    if (arr == NULL)
        return MF_ERR_NO_MEMORY;
    mf_status_t status =
        gatherv_linear(comm, sbuf, len, rbuf, arr, arr + comm->size, root, TAG_GATHER);
    free(arr);
    return status;
}

static mf_status_t scatterv_linear(mf_comm_t *comm, const void *sbuf, const size_t *slens,
                                   const size_t *sdispls, void *rbuf, size_t rlen, int root,
                                   int tag)
{
    if (comm->rank != root)
        return mf_pt2pt_recv_internal(rbuf, rlen, root, tag, comm);
    const char *s = sbuf;
    for (int i = 0; i < comm->size; i++) {
        mf_status_t status = MF_OK;
        if (i == root) {
            if (rbuf != MPI_IN_PLACE)
                copy_bytes(rbuf, s + sdispls[i], slens[i]);
        } else {
            status = mf_pt2pt_send_internal(s + sdispls[i], slens[i], i, tag, comm);
        }
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

static mf_status_t scatterv_run(mf_comm_t *comm, const void *sbuf, const size_t *slens,
                                const size_t *sdispls, void *rbuf, size_t rlen, int root)
{
    return scatterv_linear(comm, sbuf, slens, sdispls, rbuf, rlen, root, TAG_SCATTER);
}

/* Binomial scatter, the mirror image of gather_binomial. */
static mf_status_t scatter_binomial(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                    int root, int tag)
{
    int size = comm->size, vr = (comm->rank - root + size) % size;
    int span = subtree_span(vr, size), nblk = span < size - vr ? span : size - vr;
    char *buf = NULL, *alloc = NULL;
    mf_status_t status = MF_OK;
    if (vr == 0 && root == 0) {
        buf = (char *)sbuf;
    } else if (nblk == 1) {
        buf = rbuf;
    } else {
        buf = alloc = mf_malloc((size_t)nblk * len, "scatter buffer");
        if (buf == NULL)
            return MF_ERR_NO_MEMORY;
        if (vr == 0) {
            size_t head = (size_t)(size - root) * len;
            copy_bytes(buf, (const char *)sbuf + (size_t)root * len, head);
            copy_bytes(buf + head, sbuf, (size_t)root * len);
        }
    }
    if (vr != 0)
        status =
            mf_pt2pt_recv_internal(buf, (size_t)nblk * len, (vr - span + root) % size, tag, comm);
    for (int mask = span >> 1; mask > 0 && status == MF_OK; mask >>= 1) {
        if (vr + mask >= size)
            continue;
        int n = mask < size - vr - mask ? mask : size - vr - mask;
        status = mf_pt2pt_send_internal(buf + (size_t)mask * len, (size_t)n * len,
                                        (vr + mask + root) % size, tag, comm);
    }
    if (status == MF_OK && rbuf != MPI_IN_PLACE && buf != rbuf)
        copy_bytes(rbuf, buf, len);
    free(alloc);
    return status;
}

static mf_status_t scatter_run(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root)
{
    if (!MF_PARAM_LIVE(coll_scatter) &&
        mf_coll_shm_pair_p2p_far(comm, len, PAIR_SCATTER_MIN, PAIR_FLOW_MAX))
        return scatter_pair(comm, sbuf, len, rbuf, root, TAG_SCATTER);
    /* Ranks sharing cores, blocks above 128 KiB: each rank copies its block straight from the
     * root's buffer (process_vm_readv). Below, point-to-point's blocking sends go eagerly
     * through UCX's queue, which won once warm (coll.md, "Crowded Scatter from 4 KiB"): 4
     * ranks on 2 cores, 64 KiB 13.8 us against 20.6, 128 KiB 26.7 against 33.6; from 256 KiB
     * point-to-point goes by rendezvous and the single copy wins (58.5 against 117). */
    if (!MF_PARAM_LIVE(coll_scatter) && mf_coll_shm_crowd_cma(comm, len, 128 * 1024 + 1))
        return mf_coll_shm_cma_scatter(comm, sbuf, len, rbuf, root);
    if (!MF_PARAM_LIVE(coll_scatter) && mf_coll_shm_scatter_ok(comm, len))
        return mf_coll_shm_scatter(comm, sbuf, len, rbuf, root);
    int alg = mf_coll_select(MF_COLL_SCATTER, comm->size, len);
    if (alg == MF_COLL_SCATTER_BINOMIAL && comm->size > 1)
        return scatter_binomial(comm, sbuf, len, rbuf, root, TAG_SCATTER);
    size_t *arr = uniform_layout(comm->size, len);
    if (arr == NULL)
        return MF_ERR_NO_MEMORY;
    mf_status_t status =
        scatterv_linear(comm, sbuf, arr, arr + comm->size, rbuf, len, root, TAG_SCATTER);
    free(arr);
    return status;
}

/* `own` (NULL in place) is the send buffer: the first step sends from there rather than from
 * the copy in rbuf. On one node UCX's single copy then reads pages the sender is not writing
 * at the same time (two ranks, 64 KiB blocks: 8.2 us against 15.3 from rbuf). */
static mf_status_t allgatherv_ring(mf_comm_t *comm, const void *own, void *rbuf,
                                   const size_t *rlens, const size_t *rdispls, int tag)
{
    int size = comm->size, rank = comm->rank;
    char *r = rbuf;
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    /* Ring: step i forwards the block that originated i ranks to the left. */
    for (int i = 0; i < size - 1; i++) {
        int sb = (rank - i + size) % size, rb = (rank - i - 1 + size) % size;
        const char *from = i == 0 && own != NULL ? own : r + rdispls[sb];
        mf_status_t status = mf_pt2pt_sendrecv_internal(from, rlens[sb], right, r + rdispls[rb],
                                                        rlens[rb], left, tag, comm);
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

/* Recursive doubling on a power of two: in step k the groups of k ranks swap everything they
 * have, kept in rank order in a packed buffer (rbuf itself when its layout is packed). */
static mf_status_t allgatherv_recursive_doubling(mf_comm_t *comm, const void *own, void *rbuf,
                                                 const size_t *rlens, const size_t *rdispls,
                                                 int tag)
{
    int size = comm->size, rank = comm->rank;
    size_t *off = mf_malloc(((size_t)size + 1) * sizeof(size_t), "allgather offsets");
    if (off == NULL)
        return MF_ERR_NO_MEMORY;
    int packed = 1;
    off[0] = 0;
    for (int i = 0; i < size; i++) {
        packed = packed && rdispls[i] == off[i];
        off[i + 1] = off[i] + rlens[i];
    }
    char *r = rbuf, *buf = packed ? r : mf_malloc(off[size] ? off[size] : 1, "allgather buffer");
    /* packed, buf is the user's, which may be NULL when every block is empty */
    mf_status_t status = !packed && buf == NULL ? MF_ERR_NO_MEMORY : MF_OK;
    if (status == MF_OK && !packed)
        copy_bytes(buf + off[rank], r + rdispls[rank], rlens[rank]);
    for (int mask = 1; mask < size && status == MF_OK; mask <<= 1) {
        int peer = rank ^ mask, base = rank & ~(mask - 1), pbase = peer & ~(mask - 1);
        const char *from = mask == 1 && own != NULL ? own : buf + off[base]; /* see the ring */
        status =
            mf_pt2pt_sendrecv_internal(from, off[base + mask] - off[base], peer, buf + off[pbase],
                                       off[pbase + mask] - off[pbase], peer, tag, comm);
    }
    if (status == MF_OK && !packed)
        for (int i = 0; i < size; i++)
            if (i != rank)
                copy_bytes(r + rdispls[i], buf + off[i], rlens[i]);
    if (!packed)
        free(buf);
    free(off);
    return status;
}

/* Bruck: ceil(log2 p) steps for any p. Blocks are kept in order relative to this rank (block
 * j is rank + j's); in step k every rank sends its first min(k, p - k) blocks to rank - k. */
static mf_status_t allgatherv_bruck(mf_comm_t *comm, const void *own, void *rbuf,
                                    const size_t *rlens, const size_t *rdispls, int tag)
{
    int size = comm->size, rank = comm->rank;
    size_t *off = mf_malloc(((size_t)size + 1) * sizeof(size_t), "allgather offsets");
    if (off == NULL)
        return MF_ERR_NO_MEMORY;
    off[0] = 0;
    for (int j = 0; j < size; j++)
        off[j + 1] = off[j] + rlens[(rank + j) % size];
    char *r = rbuf, *buf = mf_malloc(off[size] ? off[size] : 1, "allgather buffer");
    mf_status_t status = buf == NULL ? MF_ERR_NO_MEMORY : MF_OK;
    if (status == MF_OK)
        copy_bytes(buf, r + rdispls[rank], rlens[rank]);
    for (int k = 1; k < size && status == MF_OK; k <<= 1) {
        int n = k < size - k ? k : size - k;
        const char *from = k == 1 && own != NULL ? own : buf; /* see the ring */
        status = mf_pt2pt_sendrecv_internal(from, off[n], (rank - k + size) % size, buf + off[k],
                                            off[k + n] - off[k], (rank + k) % size, tag, comm);
    }
    if (status == MF_OK)
        for (int j = 1; j < size; j++)
            copy_bytes(r + rdispls[(rank + j) % size], buf + off[j], off[j + 1] - off[j]);
    free(buf);
    free(off);
    return status;
}

static mf_status_t allgatherv_run(mf_comm_t *comm, const void *sbuf, size_t slen, void *rbuf,
                                  const size_t *rlens, const size_t *rdispls)
{
    int size = comm->size, rank = comm->rank;
    if (sbuf != MPI_IN_PLACE)
        copy_bytes((char *)rbuf + rdispls[rank], sbuf, slen);
    if (size == 1)
        return MF_OK;
    /* Others read the own block from the send buffer, not from its copy in rbuf (see
     * allgatherv_ring), when it holds the whole block. */
    const void *own = sbuf != MPI_IN_PLACE && slen == rlens[rank] ? sbuf : NULL;
    size_t total = 0, most = 0;
    for (int i = 0; i < size; i++) {
        total += rlens[i];
        most = rlens[i] > most ? rlens[i] : most;
    }
    if (!MF_PARAM_LIVE(coll_allgather) && mf_coll_shm_small(comm, most))
        return mf_coll_shm_allgatherv(comm, rbuf, rlens, rdispls);
    if (!MF_PARAM_LIVE(coll_allgather) && mf_coll_shm_crowd_allgather_ok(comm, most))
        return mf_coll_shm_crowd_allgatherv(comm, rbuf, rlens, rdispls);
    if (!MF_PARAM_LIVE(coll_allgather) && mf_coll_shm_crowd_area_allgather_ok(comm, most))
        return mf_coll_shm_crowd_area_allgatherv(comm, rbuf, rlens, rdispls);
    if (!MF_PARAM_LIVE(coll_allgather) &&
        mf_coll_shm_pair_p2p_far(comm, most, PAIR_P2P_MIN, PAIR_SWAP_MAX))
        return pair_sendrecv(own != NULL ? own : (char *)rbuf + rdispls[rank], rlens[rank],
                             (char *)rbuf + rdispls[rank ^ 1], rlens[rank ^ 1], TAG_ALLGATHER,
                             comm);
    if (!MF_PARAM_LIVE(coll_allgather) &&
        mf_coll_shm_cma(comm, most, MF_PARAM_LIVE(coll_cma_allgather_bytes)))
        return mf_coll_shm_cma_allgatherv(comm, own, rbuf, rlens, rdispls);
    if (!MF_PARAM_LIVE(coll_allgather) && mf_coll_shm_medium_allgather_ok(comm, most))
        return mf_coll_shm_medium_allgatherv(comm, rbuf, rlens, rdispls);
    /* every member knows every length, so all select the same algorithm */
    int alg = mf_coll_select(MF_COLL_ALLGATHER, size, total / (size_t)size);
    if (alg == MF_COLL_ALLGATHER_RECURSIVE_DOUBLING && (size & (size - 1)) == 0)
        return allgatherv_recursive_doubling(comm, own, rbuf, rlens, rdispls, TAG_ALLGATHER);
    if (alg == MF_COLL_ALLGATHER_RECURSIVE_DOUBLING || alg == MF_COLL_ALLGATHER_BRUCK)
        return allgatherv_bruck(comm, own, rbuf, rlens, rdispls, TAG_ALLGATHER);
    return allgatherv_ring(comm, own, rbuf, rlens, rdispls, TAG_ALLGATHER);
}

static mf_status_t alltoallv_run(mf_comm_t *comm, const void *sbuf, const size_t *slens,
                                 const size_t *sdispls, void *rbuf, const size_t *rlens,
                                 const size_t *rdispls)
{
    int size = comm->size, rank = comm->rank;
    char *copy = NULL, *r = rbuf;
    if (sbuf == MPI_IN_PLACE) {
        /* In place: the data to send is what recvbuf holds now, laid out like the result. */
        size_t end = 0;
        for (int i = 0; i < size; i++)
            if (rdispls[i] + rlens[i] > end)
                end = rdispls[i] + rlens[i];
        copy = mf_malloc(end ? end : 1, "alltoall buffer");
        if (copy == NULL)
            return MF_ERR_NO_MEMORY;
        copy_bytes(copy, rbuf, end);
        sbuf = copy;
        slens = rlens;
        sdispls = rdispls;
    }
    const char *s = sbuf;
    mf_status_t status = MF_OK;
    /* Pairwise: in step i send to rank+i and receive from rank-i, so every pair meets once. */
    for (int i = 0; i < size && status == MF_OK; i++) {
        int dst = (rank + i) % size, src = (rank - i + size) % size;
        if (i == 0) {
            if (slens[rank] > rlens[rank])
                status = MF_ERR_TRUNCATE;
            else if (slens[rank] > 0) /* empty blocks may be NULL */
                memmove(r + rdispls[rank], s + sdispls[rank], slens[rank]);
            continue;
        }
        status = mf_pt2pt_sendrecv_internal(s + sdispls[dst], slens[dst], dst, r + rdispls[src],
                                            rlens[src], src, TAG_ALLTOALL, comm);
    }
    free(copy);
    return status;
}

/* Bruck's all-to-all for small blocks: ceil(log2 p) steps instead of p - 1. Blocks are
 * rotated so block j is for rank + j; in step k every block whose index has bit k goes to
 * rank + k (packed into one message), and at the end block j came from rank - j. */
static mf_status_t alltoall_bruck(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                  int tag)
{
    int size = comm->size, rank = comm->rank;
    const char *s = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t all = (size_t)size * len;
    char *buf = mf_malloc(3 * all + 1, "alltoall buffer");
    if (buf == NULL)
        return MF_ERR_NO_MEMORY;
    char *pack = buf + all, *r = rbuf;
    for (int j = 0; j < size; j++)
        copy_bytes(buf + (size_t)j * len, s + (size_t)((rank + j) % size) * len, len);
    mf_status_t status = MF_OK;
    for (int k = 1; k < size && status == MF_OK; k <<= 1) {
        size_t n = 0;
        for (int j = 1; j < size; j++)
            if (j & k)
                copy_bytes(pack + len * n++, buf + (size_t)j * len, len);
        char *in = pack + all;
        status = mf_pt2pt_sendrecv_internal(pack, len * n, (rank + k) % size, in, len * n,
                                            (rank - k + size) % size, tag, comm);
        n = 0;
        for (int j = 1; j < size && status == MF_OK; j++)
            if (j & k)
                copy_bytes(buf + (size_t)j * len, in + len * n++, len);
    }
    if (status == MF_OK)
        for (int j = 0; j < size; j++)
            copy_bytes(r + (size_t)((rank - j + size) % size) * len, buf + (size_t)j * len, len);
    free(buf);
    return status;
}

static mf_status_t alltoall_run(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf)
{
    if (!MF_PARAM_LIVE(coll_alltoall) && mf_coll_shm_small(comm, len * (size_t)comm->size))
        return mf_coll_shm_alltoall(comm, sbuf, len, rbuf);
    /* Ranks sharing cores: every rank publishes its send buffer in pieces without waiting (4
     * ranks on 2 cores, fastest launches: 1 KiB blocks 3.7 us against 17 through Bruck, 4 KiB
     * 6.2 against 24 pairwise, 8 KiB 11.4 against 28; Open MPI 10.0, 8.7, 21.8). */
    if (!MF_PARAM_LIVE(coll_alltoall) && mf_coll_shm_crowd_area_alltoall_ok(comm, len))
        return mf_coll_shm_crowd_area_alltoall(comm, sbuf, len, rbuf);
    if (!MF_PARAM_LIVE(coll_alltoall) && mf_coll_shm_crowd_alltoall_ok(comm, len))
        return mf_coll_shm_crowd_alltoall(comm, sbuf, len, rbuf);
    /* Above those: every rank copies its block straight from each sender's buffer
     * (process_vm_readv), one hand-over per rank instead of a partner at every pairwise step. */
    if (!MF_PARAM_LIVE(coll_alltoall) && mf_coll_shm_crowd_cma(comm, len, 1))
        return mf_coll_shm_cma_alltoall(comm, sbuf, len, rbuf);
    if (!MF_PARAM_LIVE(coll_alltoall) &&
        mf_coll_shm_pair_p2p_far(comm, len, PAIR_P2P_MIN, PAIR_ALLTOALL_MAX))
        return alltoall_pair(comm, sbuf, len, rbuf, TAG_ALLTOALL);
    if (!MF_PARAM_LIVE(coll_alltoall) && mf_coll_shm_medium_alltoall_ok(comm, len))
        return mf_coll_shm_medium_alltoall(comm, sbuf, len, rbuf);
    int alg = mf_coll_select(MF_COLL_ALLTOALL, comm->size, len);
    if (alg == MF_COLL_ALLTOALL_BRUCK && comm->size > 1)
        return alltoall_bruck(comm, sbuf, len, rbuf, TAG_ALLTOALL);
    size_t *arr = uniform_layout(comm->size, len);
    if (arr == NULL)
        return MF_ERR_NO_MEMORY;
    mf_status_t status =
        alltoallv_run(comm, sbuf, arr, arr + comm->size, rbuf, arr, arr + comm->size);
    free(arr);
    return status;
}

/* ---- reduce-scatter, scan ---------------------------------------------------------------- */

/* Non-commutative operations: reduce everything at rank 0 (rank order kept), then scatter. */
static mf_status_t reduce_scatter_reduce_scatterv(mf_comm_t *comm, const void *src, void *rbuf,
                                                  const size_t *lens, const size_t *displs,
                                                  size_t total, MPI_Datatype dt, size_t extent,
                                                  MPI_Op op, int tag)
{
    char *full = NULL;
    if (comm->rank == 0) {
        full = mf_malloc(total > 0 ? total * extent : 1, "reduce-scatter buffer");
        if (full == NULL)
            return MF_ERR_NO_MEMORY;
    }
    mf_status_t status = reduce_binomial(comm, src, full, total, dt, extent, op, 0, tag);
    if (status == MF_OK)
        status = scatterv_linear(comm, full, lens, displs, rbuf, lens[comm->rank], 0, tag);
    free(full);
    return status;
}

/* Recursive halving (commutative): the ranks beyond the largest power of two fold into their
 * neighbours; then each step halves the range of folded ranks whose blocks a process still
 * reduces, swapping the other half with its partner. Folded rank i stands for ranks 2i and
 * 2i+1 (i < rem) or i + rem, so its blocks are contiguous; at the end 2i+1 hands 2i its block. */
static mf_status_t reduce_scatter_recursive_halving(mf_comm_t *comm, const void *src, void *rbuf,
                                                    const size_t *lens, const size_t *displs,
                                                    size_t total, MPI_Datatype dt, size_t extent,
                                                    MPI_Op op, int tag)
{
    int size = comm->size, rank = comm->rank, pof2 = largest_pof2(size), rem = size - pof2;
    size_t len = total * extent;
    char *acc = mf_malloc(len ? len : 1, "reduce-scatter buffer");
    char *tmp = mf_malloc(len ? len : 1, "reduce-scatter buffer");
    size_t *start = mf_malloc(((size_t)pof2 + 1) * sizeof(size_t), "reduce-scatter offsets");
    mf_status_t status = MF_ERR_NO_MEMORY;
    if (acc == NULL || tmp == NULL || start == NULL)
        goto out_free;
    for (int i = 0; i < pof2; i++)
        start[i] = displs[i < rem ? 2 * i : i + rem]; /* bytes */
    start[pof2] = len;
    copy_bytes(acc, src, len);
    status = fold_in(comm, &acc, &tmp, total, dt, len, op, rem, tag);
    int newrank = fold_rank(rank, rem), lo = 0, hi = pof2;
    for (int mask = pof2 / 2; status == MF_OK && newrank >= 0 && mask > 0; mask /= 2) {
        int peer = unfold_rank(newrank ^ mask, rem), mid = lo + (hi - lo) / 2;
        int keep_lo = newrank & mask ? mid : lo, keep_hi = newrank & mask ? hi : mid;
        int send_lo = newrank & mask ? lo : mid, send_hi = newrank & mask ? mid : hi;
        size_t ks = start[keep_lo], ke = start[keep_hi], ss = start[send_lo], se = start[send_hi];
        status =
            mf_pt2pt_sendrecv_internal(acc + ss, se - ss, peer, tmp + ks, ke - ks, peer, tag, comm);
        if (status == MF_OK)
            mf_op_apply(op, tmp + ks, acc + ks, (ke - ks) / extent, dt);
        lo = keep_lo;
        hi = keep_hi;
    }
    if (status != MF_OK)
        goto out_free;
    if (rank < 2 * rem && rank % 2 == 1)
        status =
            mf_pt2pt_send_internal(acc + displs[rank - 1], lens[rank - 1], rank - 1, tag, comm);
    if (rank < 2 * rem && rank % 2 == 0)
        status = mf_pt2pt_recv_internal(rbuf, lens[rank], rank + 1, tag, comm);
    else if (status == MF_OK)
        copy_bytes(rbuf, acc + displs[rank], lens[rank]);
out_free:
    free(acc);
    free(tmp);
    free(start);
    return status;
}

/* Pairwise exchange (commutative): in step i send rank + i its block of my input and combine
 * the block of mine that rank - i sends; p - 1 steps, each moving one block. */
static mf_status_t reduce_scatter_pairwise(mf_comm_t *comm, const void *src, void *rbuf,
                                           const size_t *lens, const size_t *displs,
                                           MPI_Datatype dt, size_t extent, MPI_Op op, int tag)
{
    int size = comm->size, rank = comm->rank;
    size_t mine = lens[rank];
    char *acc = mf_malloc(2 * mine + 1, "reduce-scatter buffer"), *tmp = acc + mine;
    if (acc == NULL)
        return MF_ERR_NO_MEMORY;
    copy_bytes(acc, (const char *)src + displs[rank], mine);
    mf_status_t status = MF_OK;
    for (int i = 1; i < size && status == MF_OK; i++) {
        int dst = (rank + i) % size, from = (rank - i + size) % size;
        status = mf_pt2pt_sendrecv_internal((const char *)src + displs[dst], lens[dst], dst, tmp,
                                            mine, from, tag, comm);
        if (status == MF_OK)
            mf_op_apply(op, tmp, acc, mine / extent, dt);
    }
    if (status == MF_OK)
        copy_bytes(rbuf, acc, mine);
    free(acc);
    return status;
}

/* Two ranks, commutative operations, not in place: each rank sends the other's block of its
 * vector and receives the other's contribution to its own block straight into its result,
 * then combines its own block in (the first half of allreduce_pair); piece by piece. Each
 * block is combined by one rank only. */
static mf_status_t reduce_scatter_pair(mf_comm_t *comm, const void *sbuf, void *rbuf,
                                       const size_t *counts, MPI_Datatype dt, size_t extent,
                                       MPI_Op op, int tag)
{
    int rank = comm->rank, peer = rank ^ 1;
    size_t mine = counts[rank], theirs = counts[peer], step = pair_items(extent, PAIR_PIECE);
    const char *own = (const char *)sbuf + (rank == 0 ? 0 : counts[0] * extent);
    const char *out = (const char *)sbuf + (rank == 0 ? counts[0] * extent : 0);
    char *res = rbuf;
    mf_status_t status = MF_OK;
    for (size_t i = 0; status == MF_OK && (i < mine || i < theirs); i += step) {
        size_t nr = i < mine ? (mine - i < step ? mine - i : step) : 0;
        size_t ns = i < theirs ? (theirs - i < step ? theirs - i : step) : 0;
        size_t off = i * extent;
        if (nr > 0 && ns > 0)
            status = mf_pt2pt_sendrecv_internal(out + off, ns * extent, peer, res + off,
                                                nr * extent, peer, tag, comm);
        else if (ns > 0)
            status = mf_pt2pt_send_internal(out + off, ns * extent, peer, tag, comm);
        else
            status = mf_pt2pt_recv_internal(res + off, nr * extent, peer, tag, comm);
        if (status == MF_OK && nr > 0)
            mf_op_apply(op, own + off, res + off, nr, dt); /* own op received */
    }
    return status;
}

static mf_status_t reduce_scatter_run(mf_comm_t *comm, const void *sbuf, void *rbuf,
                                      const size_t *counts, MPI_Datatype dt, size_t extent,
                                      MPI_Op op)
{
    int size = comm->size;
    size_t items = 0;
    for (int i = 0; i < size; i++)
        items += counts[i];
    if (!MF_PARAM_LIVE(coll_reduce_scatter) && mf_coll_shm_small(comm, items * extent))
        return mf_coll_shm_reduce_scatter(comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf, counts,
                                          dt, extent, op);
    if (!MF_PARAM_LIVE(coll_reduce_scatter) &&
        mf_coll_shm_crowd_reduce_scatter_ok(comm, items * extent, extent))
        return mf_coll_shm_crowd_reduce_scatter(comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf,
                                                counts, dt, extent, op);
    if (!MF_PARAM_LIVE(coll_reduce_scatter) && MF_PARAM_LIVE(coll_shm_crowd_rs_reduce) &&
        mf_coll_shm_crowd_reduce_ring_ok(comm, items * extent / (size_t)size, extent, op))
        return mf_coll_shm_crowd_ring_reduce_scatter(comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf,
                                                     counts, dt, extent, op);
    if (!MF_PARAM_LIVE(coll_reduce_scatter) && sbuf != MPI_IN_PLACE && mf_op_commutative(op) &&
        mf_coll_shm_pair_p2p(comm, items * extent, PAIR_REDUCE_SCATTER_MIN, 2 * PAIR_FLOW_MAX))
        return reduce_scatter_pair(comm, sbuf, rbuf, counts, dt, extent, op, TAG_REDUCE_SCATTER);
    if (!MF_PARAM_LIVE(coll_reduce_scatter) &&
        mf_coll_shm_pair_reduce_scatter_ok(comm, items * extent, extent, op))
        return mf_coll_shm_pair_reduce_scatter(comm, sbuf == MPI_IN_PLACE ? rbuf : sbuf, rbuf,
                                               counts, dt, extent, op);
    size_t *lens = mf_malloc(2 * (size_t)size * sizeof(size_t), "reduce-scatter counts");
    if (lens == NULL)
        return MF_ERR_NO_MEMORY;
    size_t *displs = lens + size, total = 0;
    for (int i = 0; i < size; i++) {
        lens[i] = counts[i] * extent;
        displs[i] = total * extent;
        total += counts[i];
    }
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int alg = mf_coll_select(MF_COLL_REDUCE_SCATTER, size, total * extent / (size_t)size);
    mf_status_t status;
    if (size == 1 || !mf_op_commutative(op) || alg == MF_COLL_REDUCE_SCATTER_REDUCE_SCATTERV)
        status = reduce_scatter_reduce_scatterv(comm, src, rbuf, lens, displs, total, dt, extent,
                                                op, TAG_REDUCE_SCATTER);
    else if (alg == MF_COLL_REDUCE_SCATTER_PAIRWISE)
        status = reduce_scatter_pairwise(comm, src, rbuf, lens, displs, dt, extent, op,
                                         TAG_REDUCE_SCATTER);
    else
        status = reduce_scatter_recursive_halving(comm, src, rbuf, lens, displs, total, dt, extent,
                                                  op, TAG_REDUCE_SCATTER);
    free(lens);
    return status;
}

/* Scan and exscan along a chain, in pieces: rank r receives piece i of the prefix of ranks
 * 0..r-1, combines its own contribution after it (rank order) and passes the new prefix on
 * while rank r-1 already works on piece i+1. Rank 0 only sends, so with eager sends it runs
 * ahead; each rank sends once, where recursive doubling sends log2(p) times and makes every
 * rank wait for a partner at every step (4 ranks on 2 cores, 256 KiB: 413 us against 1737).
 * A commutative operation out of place receives straight into the result and combines its
 * own vector in; otherwise the prefix arrives in a temporary and goes on the left.
 * On a crowded node, vectors below CHAIN_YIELD_BELOW, the waits yield every few polls: the
 * default wait spins up to 1024 polls while the prefix comes from the other core, which is when
 * the rank sharing this core (the next or previous link) has work (4 ranks on 2 cores, 64 KiB:
 * ranks 0 and 2 spun about 300 polls per call). From 256 KiB it measured mixed (coll.md). */
#define CHAIN_PIECE       ((size_t)32 * 1024)
#define CHAIN_YIELD_BELOW ((size_t)256 * 1024)

static mf_status_t scan_chain(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                              MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive, int tag)
{
    int size = comm->size, rank = comm->rank, last = rank + 1 == size;
    int yield = count * extent < CHAIN_YIELD_BELOW && mf_coll_shm_crowded(comm);
    size_t step = pair_items(extent, CHAIN_PIECE);
    const char *own = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    char *res = rbuf, *tmp = NULL;
    if (rank == 0 && !exclusive && own != rbuf)
        copy_bytes(rbuf, own, count * extent);
    int direct = !exclusive && own != rbuf && mf_op_commutative(op);
    if (rank > 0 && !direct && (!exclusive || !last) &&
        (tmp = mf_malloc(step * extent, "scan buffer")) == NULL)
        return MF_ERR_NO_MEMORY;
    mf_status_t status = MF_OK;
    for (size_t i = 0; status == MF_OK && i < count; i += step) {
        size_t n = count - i < step ? count - i : step, off = i * extent, bytes = n * extent;
        if (rank == 0) {
            if (!last)
                status = mf_pt2pt_send_internal_yielding(own + off, bytes, 1, tag, comm, yield);
            continue;
        }
        const char *out = res + off; /* what goes on to rank + 1 */
        if (direct) {
            status = mf_pt2pt_recv_internal_yielding(res + off, bytes, rank - 1, tag, comm, yield);
            if (status == MF_OK)
                mf_op_apply(op, own + off, res + off, n, dt); /* own op prefix, commutative */
        } else if (exclusive) {
            if (!last)
                copy_bytes(tmp, own + off, bytes); /* before the prefix overwrites it in place */
            status = mf_pt2pt_recv_internal_yielding(res + off, bytes, rank - 1, tag, comm, yield);
            if (status == MF_OK && !last)
                mf_op_apply(op, res + off, tmp, n, dt); /* prefix op own */
            out = tmp;
        } else {
            status = mf_pt2pt_recv_internal_yielding(tmp, bytes, rank - 1, tag, comm, yield);
            if (status == MF_OK && own != rbuf)
                copy_bytes(res + off, own + off, bytes);
            if (status == MF_OK)
                mf_op_apply(op, tmp, res + off, n, dt); /* prefix op own */
        }
        if (status == MF_OK && !last)
            status = mf_pt2pt_send_internal_yielding(out, bytes, rank + 1, tag, comm, yield);
    }
    free(tmp);
    return status;
}

/* Two ranks: rank 1's result is rank 0's vector combined with its own on the right, which is
 * reduce_pair with rank 1 as the root (receiving straight into its result for a commutative
 * operation, else through a temporary); rank 0's is its own vector. Exscan's rank 1 just
 * receives rank 0's vector (rank 0's result is undefined). */
static mf_status_t scan_pair(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                             MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive, int tag)
{
    const char *own = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    size_t len = count * extent;
    if (exclusive)
        return comm->rank == 0 ? pair_sendrecv(own, len, NULL, 0, tag, comm)
                               : pair_sendrecv(NULL, 0, rbuf, len, tag, comm);
    if (comm->rank == 0 && own != rbuf)
        copy_bytes(rbuf, own, len);
    return reduce_pair(comm, own, rbuf, count, dt, extent, op, 1, tag);
}

/* Recursive doubling: in step k exchange the combination of my group of k ranks with the
 * partner group; a lower partner's data comes before mine (rank order), so it is combined on
 * the left of both the running prefix and the group total. */
static mf_status_t scan_recursive_doubling(mf_comm_t *comm, const void *sbuf, void *rbuf,
                                           size_t count, MPI_Datatype dt, size_t extent, MPI_Op op,
                                           int exclusive, int tag)
{
    int size = comm->size, rank = comm->rank, have = 0;
    size_t len = count * extent;
    char *part = mf_malloc(2 * len + 1, "scan buffer"), *tmp = part + len;
    if (part == NULL)
        return MF_ERR_NO_MEMORY;
    copy_bytes(part, sbuf == MPI_IN_PLACE ? rbuf : sbuf, len);
    if (!exclusive && sbuf != MPI_IN_PLACE)
        copy_bytes(rbuf, sbuf, len);
    mf_status_t status = MF_OK;
    for (int mask = 1; mask < size && status == MF_OK; mask <<= 1) {
        int peer = rank ^ mask;
        if (peer >= size)
            continue;
        status = mf_pt2pt_sendrecv_internal(part, len, peer, tmp, len, peer, tag, comm);
        if (status != MF_OK)
            break;
        if (peer < rank) {
            if (!exclusive || have)
                mf_op_apply(op, tmp, rbuf, count, dt);
            else
                copy_bytes(rbuf, tmp, len);
            have = 1;
            mf_op_apply(op, tmp, part, count, dt);
        } else {
            mf_op_apply(op, part, tmp, count, dt); /* tmp = part op tmp */
            copy_bytes(part, tmp, len);
        }
    }
    free(part);
    return status;
}

static mf_status_t scan_run(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                            MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive)
{
    int tag = exclusive ? TAG_EXSCAN : TAG_SCAN;
    if (!MF_PARAM_LIVE(coll_scan) &&
        mf_coll_shm_pair_p2p_far(comm, count * extent, PAIR_SCAN_MIN, PAIR_FLOW_MAX))
        return scan_pair(comm, sbuf, rbuf, count, dt, extent, op, exclusive, tag);
    if (!MF_PARAM_LIVE(coll_scan) && mf_coll_shm_scan_ok(comm, count * extent, extent))
        return mf_coll_shm_scan(comm, sbuf, rbuf, count, dt, extent, op, exclusive);
    if (!MF_PARAM_LIVE(coll_scan) && mf_coll_shm_pair_scan_ok(comm, count * extent, extent))
        return mf_coll_shm_pair_scan(comm, sbuf, rbuf, count, dt, extent, op, exclusive);
    int alg = mf_coll_select(MF_COLL_SCAN, comm->size, count * extent);
    if (alg == MF_COLL_SCAN_RECURSIVE_DOUBLING)
        return scan_recursive_doubling(comm, sbuf, rbuf, count, dt, extent, op, exclusive, tag);
    return scan_chain(comm, sbuf, rbuf, count, dt, extent, op, exclusive, tag);
}

/* ---- entry points ------------------------------------------------------------------------ */

/* Each collective first announces its byte count to the other ranks of its node, so that
 * counts which differ between processes (an erroneous program) end in MF_ERR_TRUNCATE instead
 * of a wait for data that never comes (mf_coll_shm_enter). */
#define RUN_COUNTED(comm, len, call)                                                               \
    do {                                                                                           \
        mf_status_t status_ = mf_coll_shm_enter((comm), (len));                                    \
        if (status_ == MF_OK)                                                                      \
            status_ = (call);                                                                      \
        return mf_coll_shm_leave((comm), status_);                                                 \
    } while (0)

/* The v-forms whose counts every process passes alike (Allgatherv, Reduce_scatter): one
 * number for the whole array. */
static uint64_t counts_key(const size_t *counts, int n, size_t scale)
{
    uint64_t h = 14695981039346656037ull;
    for (int i = 0; i < n; i++)
        h = (h ^ (uint64_t)(counts[i] * scale)) * 1099511628211ull;
    return h == MF_COLL_SHM_ANY_LEN ? 0 : h;
}

mf_status_t mf_coll_bcast(mf_comm_t *comm, void *buf, size_t len, int root)
{
    RUN_COUNTED(comm, len, bcast_run(comm, buf, len, root));
}

mf_status_t mf_coll_reduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                           MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    RUN_COUNTED(comm, count * extent, reduce_run(comm, sbuf, rbuf, count, dt, extent, op, root));
}

mf_status_t mf_coll_allreduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                              MPI_Datatype dt, size_t extent, MPI_Op op)
{
    RUN_COUNTED(comm, count * extent, allreduce_run(comm, sbuf, rbuf, count, dt, extent, op));
}

mf_status_t mf_coll_gatherv(mf_comm_t *comm, const void *sbuf, size_t slen, void *rbuf,
                            const size_t *rlens, const size_t *rdispls, int root)
{
    RUN_COUNTED(comm, MF_COLL_SHM_ANY_LEN,
                gatherv_run(comm, sbuf, slen, rbuf, rlens, rdispls, root));
}

mf_status_t mf_coll_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root)
{
    RUN_COUNTED(comm, len, gather_run(comm, sbuf, len, rbuf, root));
}

mf_status_t mf_coll_scatterv(mf_comm_t *comm, const void *sbuf, const size_t *slens,
                             const size_t *sdispls, void *rbuf, size_t rlen, int root)
{
    RUN_COUNTED(comm, MF_COLL_SHM_ANY_LEN,
                scatterv_run(comm, sbuf, slens, sdispls, rbuf, rlen, root));
}

mf_status_t mf_coll_scatter(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root)
{
    RUN_COUNTED(comm, len, scatter_run(comm, sbuf, len, rbuf, root));
}

mf_status_t mf_coll_allgatherv(mf_comm_t *comm, const void *sbuf, size_t slen, void *rbuf,
                               const size_t *rlens, const size_t *rdispls)
{
    RUN_COUNTED(comm, counts_key(rlens, comm->size, 1),
                allgatherv_run(comm, sbuf, slen, rbuf, rlens, rdispls));
}

mf_status_t mf_coll_alltoallv(mf_comm_t *comm, const void *sbuf, const size_t *slens,
                              const size_t *sdispls, void *rbuf, const size_t *rlens,
                              const size_t *rdispls)
{
    RUN_COUNTED(comm, MF_COLL_SHM_ANY_LEN,
                alltoallv_run(comm, sbuf, slens, sdispls, rbuf, rlens, rdispls));
}

mf_status_t mf_coll_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf)
{
    RUN_COUNTED(comm, len, alltoall_run(comm, sbuf, len, rbuf));
}

mf_status_t mf_coll_reduce_scatter(mf_comm_t *comm, const void *sbuf, void *rbuf,
                                   const size_t *counts, MPI_Datatype dt, size_t extent, MPI_Op op)
{
    RUN_COUNTED(comm, counts_key(counts, comm->size, extent),
                reduce_scatter_run(comm, sbuf, rbuf, counts, dt, extent, op));
}

mf_status_t mf_coll_scan(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                         MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive)
{
    RUN_COUNTED(comm, count * extent, scan_run(comm, sbuf, rbuf, count, dt, extent, op, exclusive));
}
