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

/* Below this many bytes (or on fewer than 3 processes) the binomial tree is faster. */
#define BCAST_LONG_BYTES ((size_t)256 * 1024)

mf_status_t mf_coll_bcast(mf_comm_t *comm, void *buf, size_t len, int root)
{
    if (mf_coll_shm_usable(comm, MPI_OP_NULL))
        return mf_coll_shm_bcast(comm, buf, len, root);
    if (comm->size == 1 || len == 0)
        return MF_OK;
    int alg = mf_params.coll_bcast;
    if (alg == MF_COLL_AUTO)
        alg = len >= BCAST_LONG_BYTES && comm->size > 2 ? MF_COLL_BCAST_SCATTER_ALLGATHER
                                                        : MF_COLL_BCAST_BINOMIAL;
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
    memcpy(acc, sbuf, len);
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
        memcpy(rbuf, acc, len);
out_free:
    free(acc);
    free(tmp);
    return status;
}

mf_status_t mf_coll_reduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                           MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    if (mf_coll_shm_usable(comm, op))
        return mf_coll_shm_reduce(comm, sbuf, rbuf, count, dt, extent, op, root);
    return reduce_binomial(comm, sbuf, rbuf, count, dt, extent, op, root, TAG_REDUCE);
}

/* ---- allreduce --------------------------------------------------------------------------- */

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

/* Rabenseifner pays off from this many bytes on. */
#define ALLREDUCE_LONG_BYTES ((size_t)64 * 1024)

mf_status_t mf_coll_allreduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                              MPI_Datatype dt, size_t extent, MPI_Op op)
{
    if (mf_coll_shm_usable(comm, op))
        return mf_coll_shm_allreduce(comm, sbuf, rbuf, count, dt, extent, op);
    size_t len = count * extent;
    if (sbuf != rbuf)
        memcpy(rbuf, sbuf, len);
    if (comm->size == 1 || count == 0)
        return MF_OK;
    if (!mf_op_commutative(op)) {
        /* Rank order is easiest to keep through one tree: reduce at 0, then broadcast. */
        mf_status_t status =
            reduce_binomial(comm, rbuf, rbuf, count, dt, extent, op, 0, TAG_ALLREDUCE);
        return status != MF_OK ? status : bcast_binomial(comm, rbuf, len, 0, TAG_ALLREDUCE);
    }
    int alg = mf_params.coll_allreduce;
    if (alg == MF_COLL_AUTO)
        alg = len >= ALLREDUCE_LONG_BYTES ? MF_COLL_ALLREDUCE_RABENSEIFNER
                                          : MF_COLL_ALLREDUCE_RECURSIVE_DOUBLING;
    char *acc = mf_malloc(len, "allreduce buffer"), *tmp = mf_malloc(len, "allreduce buffer");
    mf_status_t status = MF_ERR_NO_MEMORY;
    if (acc != NULL && tmp != NULL) {
        memcpy(acc, rbuf, len);
        if (alg == MF_COLL_ALLREDUCE_RABENSEIFNER)
            status = allreduce_rabenseifner(comm, &acc, &tmp, count, dt, extent, op, TAG_ALLREDUCE);
        else
            status = allreduce_recursive_doubling(comm, &acc, &tmp, count, dt, extent, op,
                                                  TAG_ALLREDUCE);
        if (status == MF_OK)
            memcpy(rbuf, acc, len);
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
                memcpy(r + rdispls[i], sbuf, slen);
        } else {
            status = mf_pt2pt_recv_internal(r + rdispls[i], rlens[i], i, tag, comm);
        }
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

mf_status_t mf_coll_gatherv(mf_comm_t *comm, const void *sbuf, size_t slen, void *rbuf,
                            const size_t *rlens, const size_t *rdispls, int root)
{
    return gatherv_linear(comm, sbuf, slen, rbuf, rlens, rdispls, root, TAG_GATHER);
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
                memcpy(rbuf, s + sdispls[i], slens[i]);
        } else {
            status = mf_pt2pt_send_internal(s + sdispls[i], slens[i], i, tag, comm);
        }
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

mf_status_t mf_coll_scatterv(mf_comm_t *comm, const void *sbuf, const size_t *slens,
                             const size_t *sdispls, void *rbuf, size_t rlen, int root)
{
    return scatterv_linear(comm, sbuf, slens, sdispls, rbuf, rlen, root, TAG_SCATTER);
}

mf_status_t mf_coll_allgatherv(mf_comm_t *comm, const void *sbuf, size_t slen, void *rbuf,
                               const size_t *rlens, const size_t *rdispls)
{
    int size = comm->size, rank = comm->rank;
    char *r = rbuf;
    if (sbuf != MPI_IN_PLACE)
        memcpy(r + rdispls[rank], sbuf, slen);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    /* Ring: step i forwards the block that originated i ranks to the left. */
    for (int i = 0; i < size - 1; i++) {
        int sb = (rank - i + size) % size, rb = (rank - i - 1 + size) % size;
        mf_status_t status =
            mf_pt2pt_sendrecv_internal(r + rdispls[sb], rlens[sb], right, r + rdispls[rb],
                                       rlens[rb], left, TAG_ALLGATHER, comm);
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

mf_status_t mf_coll_alltoallv(mf_comm_t *comm, const void *sbuf, const size_t *slens,
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
        memcpy(copy, rbuf, end);
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
            else
                memmove(r + rdispls[rank], s + sdispls[rank], slens[rank]);
            continue;
        }
        status = mf_pt2pt_sendrecv_internal(s + sdispls[dst], slens[dst], dst, r + rdispls[src],
                                            rlens[src], src, TAG_ALLTOALL, comm);
    }
    free(copy);
    return status;
}

/* ---- reduce-scatter, scan ---------------------------------------------------------------- */

mf_status_t mf_coll_reduce_scatter(mf_comm_t *comm, const void *sbuf, void *rbuf,
                                   const size_t *counts, MPI_Datatype dt, size_t extent, MPI_Op op)
{
    int size = comm->size, rank = comm->rank;
    size_t *lens = mf_malloc(2 * (size_t)size * sizeof(size_t), "reduce-scatter counts");
    if (lens == NULL)
        return MF_ERR_NO_MEMORY;
    size_t *displs = lens + size, total = 0;
    for (int i = 0; i < size; i++) {
        lens[i] = counts[i] * extent;
        displs[i] = total * extent;
        total += counts[i];
    }
    /* Reduce everything at rank 0 (rank order kept), then scatter the blocks. */
    char *full = NULL;
    if (rank == 0) {
        full = mf_malloc(total > 0 ? total * extent : 1, "reduce-scatter buffer");
        if (full == NULL) {
            free(lens);
            return MF_ERR_NO_MEMORY;
        }
    }
    const void *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    mf_status_t status =
        reduce_binomial(comm, src, full, total, dt, extent, op, 0, TAG_REDUCE_SCATTER);
    if (status == MF_OK)
        status = scatterv_linear(comm, full, lens, displs, rbuf, lens[rank], 0, TAG_REDUCE_SCATTER);
    free(full);
    free(lens);
    return status;
}

/* Scan and exscan along a chain: rank r waits for the prefix of ranks 0..r-1, combines its own
 * contribution after it (rank order) and passes the new prefix on. */
static mf_status_t scan_chain(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                              MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive, int tag)
{
    int size = comm->size, rank = comm->rank;
    size_t len = count * extent;
    char *prefix = mf_malloc(len ? len : 1, "scan buffer");
    char *mine = mf_malloc(len ? len : 1, "scan buffer");
    mf_status_t status = MF_OK;
    if (prefix == NULL || mine == NULL) {
        status = MF_ERR_NO_MEMORY;
        goto out_free;
    }
    memcpy(mine, sbuf == MPI_IN_PLACE ? rbuf : sbuf, len);
    if (rank > 0) {
        status = mf_pt2pt_recv_internal(prefix, len, rank - 1, tag, comm);
        if (status != MF_OK)
            goto out_free;
        if (exclusive)
            memcpy(rbuf, prefix, len);
        mf_op_apply(op, prefix, mine, count, dt); /* mine = prefix op mine */
    }
    if (!exclusive)
        memcpy(rbuf, mine, len);
    if (rank + 1 < size)
        status = mf_pt2pt_send_internal(mine, len, rank + 1, tag, comm);
out_free:
    free(prefix);
    free(mine);
    return status;
}

mf_status_t mf_coll_scan(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                         MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive)
{
    return scan_chain(comm, sbuf, rbuf, count, dt, extent, op, exclusive,
                      exclusive ? TAG_EXSCAN : TAG_SCAN);
}
