/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective algorithms written as schedules (coll_sched.c) for the non-blocking and
 * persistent collectives: dissemination barrier, binomial or scatter + allgather broadcast,
 * binomial reduce in rank order, recursive-doubling (rank order) or Rabenseifner (commutative)
 * allreduce with the extra ranks folded into their neighbours, linear
 * gather(v)/scatter(v), ring, recursive-doubling or Bruck allgather(v), pairwise all-to-all,
 * reduce-scatter by pairwise exchange (commutative) or reduce + scatter, chain or
 * recursive-doubling scan; where there is a choice the selection table decides (coll_select.c).
 * Arguments are those of the blocking forms (coll.h): byte lengths and displacements, items for
 * reductions. Every builder only appends steps; the caller turns the schedule into a request
 * (mf_sched_request), which also reports allocation failures.
 */
#include "coll.h"

#include <string.h>

void mf_nbc_barrier(mf_sched_t *s)
{
    mf_comm_t *comm = mf_sched_comm(s);
    int size = comm->size, rank = comm->rank;
    char *token = mf_sched_tmp(s, 2);
    if (token == NULL)
        return;
    for (int dist = 1; dist < size; dist <<= 1) {
        mf_sched_send(s, token, 1, (rank + dist) % size);
        mf_sched_recv(s, token + 1, 1, (rank - dist + size) % size);
        mf_sched_barrier(s);
    }
}

/* Byte offset of chunk `i` of `n` equal chunks of `len` bytes (the last ones may be short). */
static size_t chunk_off(size_t len, int n, int i)
{
    size_t chunk = (len + (size_t)n - 1) / (size_t)n, off = chunk * (size_t)i;
    return off < len ? off : len;
}

/* Binomial scatter of p chunks, then a ring allgather (as in coll_blocking.c). */
static void bcast_scatter_allgather(mf_sched_t *s, char *b, size_t len, int root, int size, int vr)
{
    int mask = 1;
    while (mask < size) {
        if (vr & mask) {
            int hi = vr + mask < size ? vr + mask : size;
            size_t lo_off = chunk_off(len, size, vr), hi_off = chunk_off(len, size, hi);
            mf_sched_recv(s, b + lo_off, hi_off - lo_off, (vr - mask + root) % size);
            mf_sched_barrier(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < size) {
            int lo = vr + mask, hi = vr + 2 * mask < size ? vr + 2 * mask : size;
            size_t lo_off = chunk_off(len, size, lo), hi_off = chunk_off(len, size, hi);
            mf_sched_send(s, b + lo_off, hi_off - lo_off, (lo + root) % size);
        }
    }
    mf_sched_barrier(s);
    int right = (vr + 1) % size, left = (vr - 1 + size) % size;
    for (int i = 0; i < size - 1; i++) {
        int sb = (vr - i + size) % size, rb = (vr - i - 1 + size) % size;
        size_t so = chunk_off(len, size, sb), ro = chunk_off(len, size, rb);
        mf_sched_send(s, b + so, chunk_off(len, size, sb + 1) - so, (right + root) % size);
        mf_sched_recv(s, b + ro, chunk_off(len, size, rb + 1) - ro, (left + root) % size);
        mf_sched_barrier(s);
    }
}

void mf_nbc_bcast(mf_sched_t *s, void *buf, size_t len, int root)
{
    mf_comm_t *comm = mf_sched_comm(s);
    int size = comm->size, vr = (comm->rank - root + size) % size, mask = 1;
    if (size == 1)
        return;
    if (len > 0 && mf_coll_select(MF_COLL_BCAST, size, len) == MF_COLL_BCAST_SCATTER_ALLGATHER) {
        bcast_scatter_allgather(s, buf, len, root, size, vr);
        return;
    }
    while (mask < size) {
        if (vr & mask) {
            mf_sched_recv(s, buf, len, (vr - mask + root) % size);
            mf_sched_barrier(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < size)
            mf_sched_send(s, buf, len, (vr + mask + root) % size);
    mf_sched_barrier(s);
}

/* The tree is rooted at rank 0 so each node holds a contiguous range of ranks and combines
 * "mine op received" (the received range is the next one up): rank order is kept for every
 * operation. The result goes on to `root` if that is not 0. `acc` holds the contribution. */
static void reduce_tree(mf_sched_t *s, char *acc, char *tmp, void *rbuf, size_t count,
                        size_t extent, int root)
{
    mf_comm_t *comm = mf_sched_comm(s);
    int size = comm->size, rank = comm->rank;
    size_t len = count * extent;
    for (int mask = 1; mask < size; mask <<= 1) {
        if (rank & mask) {
            mf_sched_send(s, acc, len, rank - mask);
            mf_sched_barrier(s);
            break;
        }
        if (rank + mask < size) {
            mf_sched_recv(s, tmp, len, rank + mask);
            mf_sched_barrier(s);
            mf_sched_reduce(s, acc, tmp, count); /* tmp = acc op tmp */
            mf_sched_copy(s, acc, tmp, len);
        }
    }
    mf_sched_barrier(s);
    if (root == 0) {
        if (rank == 0)
            mf_sched_copy(s, rbuf, acc, len);
    } else if (rank == 0) {
        mf_sched_send(s, acc, len, root);
    } else if (rank == root) {
        mf_sched_recv(s, rbuf, len, 0);
    }
    mf_sched_barrier(s);
}

void mf_nbc_reduce(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                   size_t extent, MPI_Op op, int root)
{
    size_t len = count * extent;
    char *acc = mf_sched_tmp(s, len), *tmp = mf_sched_tmp(s, len);
    if (acc == NULL || tmp == NULL)
        return;
    mf_sched_set_op(s, dt, op);
    mf_sched_copy(s, acc, sbuf, len);
    reduce_tree(s, acc, tmp, rbuf, count, extent, root);
}

/* Rank of the process that plays folded rank `nr` (see mf_nbc_allreduce). */
static int unfold(int nr, int rem)
{
    return nr < rem ? 2 * nr + 1 : nr + rem;
}

/* First item of piece `b` when `count` items are cut into `n` pieces. */
static size_t piece_start(size_t count, int n, int b)
{
    size_t q = count / (size_t)n, r = count % (size_t)n;
    return q * (size_t)b + ((size_t)b < r ? (size_t)b : r);
}

/* Rabenseifner on the folded ranks, as in coll_blocking.c: reduce-scatter by recursive halving
 * (the combination runs at the start of the next round, before that round's sends), then
 * allgather by recursive doubling over the same pairs in reverse. */
static void allreduce_rabenseifner(mf_sched_t *s, char *buf, char *tmp, size_t count, size_t extent,
                                   int nr, int pof2, int rem)
{
    int lo_at[32], hi_at[32], steps = 0, lo = 0, hi = pof2;
    for (int mask = pof2 / 2; mask > 0; mask /= 2) {
        int peer = unfold(nr ^ mask, rem), mid = lo + (hi - lo) / 2;
        lo_at[steps] = lo;
        hi_at[steps] = hi;
        steps++;
        int keep_lo = nr & mask ? mid : lo, keep_hi = nr & mask ? hi : mid;
        int send_lo = nr & mask ? lo : mid, send_hi = nr & mask ? mid : hi;
        size_t ks = piece_start(count, pof2, keep_lo), ke = piece_start(count, pof2, keep_hi);
        size_t ss = piece_start(count, pof2, send_lo), se = piece_start(count, pof2, send_hi);
        mf_sched_send(s, buf + ss * extent, (se - ss) * extent, peer);
        mf_sched_recv(s, tmp + ks * extent, (ke - ks) * extent, peer);
        mf_sched_barrier(s);
        mf_sched_reduce(s, tmp + ks * extent, buf + ks * extent, ke - ks);
        lo = keep_lo;
        hi = keep_hi;
    }
    for (int mask = 1; mask < pof2; mask *= 2) {
        steps--;
        int peer = unfold(nr ^ mask, rem);
        int plo = lo == lo_at[steps] ? hi : lo_at[steps];
        int phi = lo == lo_at[steps] ? hi_at[steps] : lo;
        size_t ms = piece_start(count, pof2, lo), me = piece_start(count, pof2, hi);
        size_t ps = piece_start(count, pof2, plo), pe = piece_start(count, pof2, phi);
        mf_sched_send(s, buf + ms * extent, (me - ms) * extent, peer);
        mf_sched_recv(s, buf + ps * extent, (pe - ps) * extent, peer);
        mf_sched_barrier(s);
        lo = lo_at[steps];
        hi = hi_at[steps];
    }
}

void mf_nbc_allreduce(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                      size_t extent, MPI_Op op)
{
    mf_comm_t *comm = mf_sched_comm(s);
    int size = comm->size, rank = comm->rank, pof2 = 1;
    size_t len = count * extent;
    mf_sched_set_op(s, dt, op);
    mf_sched_copy(s, rbuf, sbuf, len);
    if (size == 1)
        return;
    char *tmp = mf_sched_tmp(s, len);
    if (tmp == NULL)
        return;
    mf_sched_barrier(s);
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int rem = size - pof2, nr;
    /* Fold: among ranks 0..2*rem-1, each even rank hands its data to the odd rank above it
     * (which combines "lower op higher") and waits for the result; the odd ones and the ranks
     * from 2*rem on keep the rank order as folded ranks 0..pof2-1. */
    if (rank < 2 * rem) {
        if (rank % 2 == 0) {
            mf_sched_send(s, rbuf, len, rank + 1);
            mf_sched_barrier(s);
            mf_sched_recv(s, rbuf, len, rank + 1);
            mf_sched_barrier(s);
            return;
        }
        mf_sched_recv(s, tmp, len, rank - 1);
        mf_sched_barrier(s);
        mf_sched_reduce(s, tmp, rbuf, count); /* rbuf = lower op mine */
        nr = rank / 2;
    } else {
        nr = rank - rem;
    }
    /* Rabenseifner (commutative, at least one item per piece) or recursive doubling */
    int raben = mf_op_commutative(op) && count >= (size_t)pof2 &&
                mf_coll_select(MF_COLL_ALLREDUCE, size, len) == MF_COLL_ALLREDUCE_RABENSEIFNER;
    if (raben)
        allreduce_rabenseifner(s, rbuf, tmp, count, extent, nr, pof2, rem);
    for (int mask = 1; !raben && mask < pof2; mask <<= 1) {
        int peer_nr = nr ^ mask, peer = unfold(peer_nr, rem);
        mf_sched_send(s, rbuf, len, peer);
        mf_sched_recv(s, tmp, len, peer);
        mf_sched_barrier(s);
        if (peer_nr < nr) {
            mf_sched_reduce(s, tmp, rbuf, count); /* rbuf = theirs op mine */
        } else {
            mf_sched_reduce(s, rbuf, tmp, count); /* tmp = mine op theirs */
            mf_sched_copy(s, rbuf, tmp, len);
        }
    }
    mf_sched_barrier(s);
    if (rank < 2 * rem)
        mf_sched_send(s, rbuf, len, rank - 1);
    mf_sched_barrier(s);
}

void mf_nbc_gatherv(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf, const size_t *rlens,
                    const size_t *rdispls, int root)
{
    mf_comm_t *comm = mf_sched_comm(s);
    if (comm->rank != root) {
        mf_sched_send(s, sbuf, slen, root);
        mf_sched_barrier(s);
        return;
    }
    char *r = rbuf;
    for (int i = 0; i < comm->size; i++) {
        if (i != root)
            mf_sched_recv(s, r + rdispls[i], rlens[i], i);
        else if (sbuf != MPI_IN_PLACE)
            mf_sched_copy(s, r + rdispls[i], sbuf, slen);
    }
    mf_sched_barrier(s);
}

void mf_nbc_scatterv(mf_sched_t *s, const void *sbuf, const size_t *slens, const size_t *sdispls,
                     void *rbuf, size_t rlen, int root)
{
    mf_comm_t *comm = mf_sched_comm(s);
    if (comm->rank != root) {
        mf_sched_recv(s, rbuf, rlen, root);
        mf_sched_barrier(s);
        return;
    }
    const char *b = sbuf;
    for (int i = 0; i < comm->size; i++) {
        if (i != root)
            mf_sched_send(s, b + sdispls[i], slens[i], i);
        else if (rbuf != MPI_IN_PLACE)
            mf_sched_copy(s, rbuf, b + sdispls[i], slens[i]);
    }
    mf_sched_barrier(s);
}

/* Recursive doubling (power-of-two sizes) over a buffer packed in rank order: rbuf itself
 * when its layout is packed. As in coll_blocking.c. */
static void allgather_recursive_doubling(mf_sched_t *s, char *r, const size_t *rlens,
                                         const size_t *rdispls, int size, int rank)
{
    size_t *off = mf_sched_tmp(s, ((size_t)size + 1) * sizeof(size_t));
    if (off == NULL)
        return;
    int packed = 1;
    off[0] = 0;
    for (int i = 0; i < size; i++) {
        packed = packed && rdispls[i] == off[i];
        off[i + 1] = off[i] + rlens[i];
    }
    char *buf = packed ? r : mf_sched_tmp(s, off[size]);
    if (buf == NULL)
        return;
    if (!packed)
        mf_sched_copy(s, buf + off[rank], r + rdispls[rank], rlens[rank]);
    for (int mask = 1; mask < size; mask <<= 1) {
        int peer = rank ^ mask, base = rank & ~(mask - 1), pbase = peer & ~(mask - 1);
        mf_sched_send(s, buf + off[base], off[base + mask] - off[base], peer);
        mf_sched_recv(s, buf + off[pbase], off[pbase + mask] - off[pbase], peer);
        mf_sched_barrier(s);
    }
    if (!packed)
        for (int i = 0; i < size; i++)
            if (i != rank)
                mf_sched_copy(s, r + rdispls[i], buf + off[i], rlens[i]);
    mf_sched_barrier(s);
}

/* Bruck: blocks in order relative to this rank; step k sends the first min(k, p - k) blocks
 * to rank - k. As in coll_blocking.c. */
static void allgather_bruck(mf_sched_t *s, char *r, const size_t *rlens, const size_t *rdispls,
                            int size, int rank)
{
    size_t *off = mf_sched_tmp(s, ((size_t)size + 1) * sizeof(size_t));
    if (off == NULL)
        return;
    off[0] = 0;
    for (int j = 0; j < size; j++)
        off[j + 1] = off[j] + rlens[(rank + j) % size];
    char *buf = mf_sched_tmp(s, off[size]);
    if (buf == NULL)
        return;
    mf_sched_copy(s, buf, r + rdispls[rank], rlens[rank]);
    for (int k = 1; k < size; k <<= 1) {
        int n = k < size - k ? k : size - k;
        mf_sched_send(s, buf, off[n], (rank - k + size) % size);
        mf_sched_recv(s, buf + off[k], off[k + n] - off[k], (rank + k) % size);
        mf_sched_barrier(s);
    }
    for (int j = 1; j < size; j++)
        mf_sched_copy(s, r + rdispls[(rank + j) % size], buf + off[j], off[j + 1] - off[j]);
    mf_sched_barrier(s);
}

void mf_nbc_allgatherv(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf,
                       const size_t *rlens, const size_t *rdispls)
{
    mf_comm_t *comm = mf_sched_comm(s);
    int size = comm->size, rank = comm->rank;
    char *r = rbuf;
    if (sbuf != MPI_IN_PLACE)
        mf_sched_copy(s, r + rdispls[rank], sbuf, slen);
    mf_sched_barrier(s);
    if (size == 1)
        return;
    size_t total = 0;
    for (int i = 0; i < size; i++)
        total += rlens[i];
    int alg = mf_coll_select(MF_COLL_ALLGATHER, size, total / (size_t)size);
    if (alg == MF_COLL_ALLGATHER_RECURSIVE_DOUBLING && (size & (size - 1)) == 0) {
        allgather_recursive_doubling(s, r, rlens, rdispls, size, rank);
        return;
    }
    if (alg == MF_COLL_ALLGATHER_RECURSIVE_DOUBLING || alg == MF_COLL_ALLGATHER_BRUCK) {
        allgather_bruck(s, r, rlens, rdispls, size, rank);
        return;
    }
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    /* Ring: step i forwards the block that originated i ranks to the left. */
    for (int i = 0; i < size - 1; i++) {
        int sb = (rank - i + size) % size, rb = (rank - i - 1 + size) % size;
        mf_sched_send(s, r + rdispls[sb], rlens[sb], right);
        mf_sched_recv(s, r + rdispls[rb], rlens[rb], left);
        mf_sched_barrier(s);
    }
}

mf_status_t mf_nbc_alltoallv(mf_sched_t *s, const void *sbuf, const size_t *slens,
                             const size_t *sdispls, void *rbuf, const size_t *rlens,
                             const size_t *rdispls)
{
    mf_comm_t *comm = mf_sched_comm(s);
    int size = comm->size, rank = comm->rank;
    char *r = rbuf;
    if (sbuf == MPI_IN_PLACE) {
        /* The data to send is what recvbuf holds when the operation starts: copy it then. */
        size_t end = 0;
        for (int i = 0; i < size; i++)
            if (rdispls[i] + rlens[i] > end)
                end = rdispls[i] + rlens[i];
        char *copy = mf_sched_tmp(s, end);
        if (copy == NULL)
            return MF_OK; /* reported by mf_sched_request */
        mf_sched_copy(s, copy, rbuf, end);
        mf_sched_barrier(s);
        sbuf = copy;
        slens = rlens;
        sdispls = rdispls;
    }
    if (slens[rank] > rlens[rank])
        return MF_ERR_TRUNCATE;
    const char *b = sbuf;
    mf_sched_copy(s, r + rdispls[rank], b + sdispls[rank], slens[rank]);
    mf_sched_barrier(s);
    /* Pairwise: in step i send to rank+i and receive from rank-i, so every pair meets once. */
    for (int i = 1; i < size; i++) {
        int dst = (rank + i) % size, src = (rank - i + size) % size;
        mf_sched_send(s, b + sdispls[dst], slens[dst], dst);
        mf_sched_recv(s, r + rdispls[src], rlens[src], src);
        mf_sched_barrier(s);
    }
    return MF_OK;
}

void mf_nbc_reduce_scatter(mf_sched_t *s, const void *sbuf, void *rbuf, const size_t *counts,
                           MPI_Datatype dt, size_t extent, MPI_Op op)
{
    mf_comm_t *comm = mf_sched_comm(s);
    int size = comm->size, rank = comm->rank;
    size_t *lens = mf_sched_tmp(s, 2 * (size_t)size * sizeof(size_t));
    if (lens == NULL)
        return;
    size_t *displs = lens + size, total = 0;
    for (int i = 0; i < size; i++) {
        lens[i] = counts[i] * extent;
        displs[i] = total * extent;
        total += counts[i];
    }
    const char *src = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int alg = mf_coll_select(MF_COLL_REDUCE_SCATTER, size, total * extent / (size_t)size);
    if (size > 1 && mf_op_commutative(op) && alg != MF_COLL_REDUCE_SCATTER_REDUCE_SCATTERV) {
        /* Pairwise exchange (recursive halving is not written as a schedule yet): step i
         * sends rank + i its block and combines the one from rank - i into mine. */
        size_t mine = lens[rank];
        char *acc = mf_sched_tmp(s, mine), *tmp = mf_sched_tmp(s, mine);
        if (acc == NULL || tmp == NULL)
            return;
        mf_sched_set_op(s, dt, op);
        mf_sched_copy(s, acc, src + displs[rank], mine);
        for (int i = 1; i < size; i++) {
            int dst = (rank + i) % size, from = (rank - i + size) % size;
            mf_sched_send(s, src + displs[dst], lens[dst], dst);
            mf_sched_recv(s, tmp, mine, from);
            mf_sched_barrier(s);
            mf_sched_reduce(s, tmp, acc, mine / extent);
        }
        mf_sched_barrier(s);
        mf_sched_copy(s, rbuf, acc, mine);
        mf_sched_barrier(s);
        return;
    }
    char *full = mf_sched_tmp(s, total * extent);
    if (full == NULL)
        return;
    /* Reduce everything at rank 0 (rank order kept), then scatter the blocks. */
    mf_nbc_reduce(s, src, full, total, dt, extent, op, 0);
    mf_nbc_scatterv(s, full, lens, displs, rbuf, lens[rank], 0);
}

/* Recursive doubling in rank order, as in coll_blocking.c. */
static void scan_recursive_doubling(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count,
                                    size_t len, int exclusive)
{
    mf_comm_t *comm = mf_sched_comm(s);
    int size = comm->size, rank = comm->rank, have = 0;
    char *part = mf_sched_tmp(s, len), *tmp = mf_sched_tmp(s, len);
    if (part == NULL || tmp == NULL)
        return;
    mf_sched_copy(s, part, sbuf == MPI_IN_PLACE ? rbuf : sbuf, len);
    if (!exclusive && sbuf != MPI_IN_PLACE)
        mf_sched_copy(s, rbuf, sbuf, len);
    for (int mask = 1; mask < size; mask <<= 1) {
        int peer = rank ^ mask;
        if (peer >= size)
            continue;
        mf_sched_send(s, part, len, peer);
        mf_sched_recv(s, tmp, len, peer);
        mf_sched_barrier(s);
        if (peer < rank) {
            if (!exclusive || have)
                mf_sched_reduce(s, tmp, rbuf, count); /* rbuf = lower op rbuf */
            else
                mf_sched_copy(s, rbuf, tmp, len);
            have = 1;
            mf_sched_reduce(s, tmp, part, count);
        } else {
            mf_sched_reduce(s, part, tmp, count); /* tmp = part op higher */
            mf_sched_copy(s, part, tmp, len);
        }
    }
    mf_sched_barrier(s);
}

void mf_nbc_scan(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                 size_t extent, MPI_Op op, int exclusive)
{
    mf_comm_t *comm = mf_sched_comm(s);
    int size = comm->size, rank = comm->rank;
    size_t len = count * extent;
    mf_sched_set_op(s, dt, op);
    if (mf_coll_select(MF_COLL_SCAN, size, len) == MF_COLL_SCAN_RECURSIVE_DOUBLING) {
        scan_recursive_doubling(s, sbuf, rbuf, count, len, exclusive);
        return;
    }
    char *prefix = mf_sched_tmp(s, len), *mine = mf_sched_tmp(s, len);
    if (prefix == NULL || mine == NULL)
        return;
    mf_sched_copy(s, mine, sbuf == MPI_IN_PLACE ? rbuf : sbuf, len);
    if (rank > 0) {
        mf_sched_recv(s, prefix, len, rank - 1);
        mf_sched_barrier(s);
        if (exclusive)
            mf_sched_copy(s, rbuf, prefix, len);
        mf_sched_reduce(s, prefix, mine, count); /* mine = prefix op mine */
    }
    if (!exclusive)
        mf_sched_copy(s, rbuf, mine, len);
    if (rank + 1 < size)
        mf_sched_send(s, mine, len, rank + 1);
    mf_sched_barrier(s);
}
