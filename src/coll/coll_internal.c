/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective protocols used inside the library: a dissemination barrier, a recursive-doubling
 * bitwise-AND allreduce (with fold-in of the ranks beyond the largest power of two) and a ring
 * allgather. All run on the communicator's internal context with tags distinct per algorithm.
 */
#include "coll.h"

#include "pt2pt.h"

#include <stdlib.h>
#include <string.h>

enum { TAG_BARRIER = 1, TAG_ALLREDUCE = 2, TAG_ALLGATHER = 3 };

mf_status_t mf_coll_barrier(mf_comm_t *comm)
{
    if (mf_coll_shm_usable(comm, MPI_OP_NULL))
        return mf_coll_shm_barrier(comm);
    int size = comm->size, rank = comm->rank;
    char token = 0, in;
    for (int dist = 1; dist < size; dist <<= 1) {
        mf_status_t status =
            mf_pt2pt_sendrecv_internal(&token, 1, (rank + dist) % size, &in, 1,
                                       (rank - dist + size) % size, TAG_BARRIER, comm);
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

static void band(uint64_t *acc, const uint64_t *in, int nwords)
{
    for (int i = 0; i < nwords; i++)
        acc[i] &= in[i];
}

mf_status_t mf_coll_allreduce_band(mf_comm_t *comm, uint64_t *words, int nwords)
{
    return mf_coll_allreduce_band_tag(comm, TAG_ALLREDUCE, words, nwords);
}

mf_status_t mf_coll_allreduce_band_tag(mf_comm_t *comm, int tag, uint64_t *words, int nwords)
{
    int size = comm->size, rank = comm->rank;
    size_t len = sizeof(uint64_t) * (size_t)nwords;
    uint64_t *tmp = mf_malloc(len, "allreduce buffer");
    if (tmp == NULL)
        return MF_ERR_NO_MEMORY;
    int pof2 = 1;
    while (pof2 * 2 <= size)
        pof2 *= 2;
    int extra = size - pof2;
    mf_status_t status = MF_OK;

    /* Ranks >= pof2 hand their data to rank - pof2 and get the result back at the end. */
    if (rank >= pof2) {
        status = mf_pt2pt_send_internal(words, len, rank - pof2, tag, comm);
        if (status == MF_OK)
            status = mf_pt2pt_recv_internal(words, len, rank - pof2, tag, comm);
        goto out_free;
    }
    if (rank < extra) {
        status = mf_pt2pt_recv_internal(tmp, len, rank + pof2, tag, comm);
        if (status != MF_OK)
            goto out_free;
        band(words, tmp, nwords);
    }
    for (int mask = 1; mask < pof2; mask <<= 1) {
        int peer = rank ^ mask;
        status = mf_pt2pt_sendrecv_internal(words, len, peer, tmp, len, peer, tag, comm);
        if (status != MF_OK)
            goto out_free;
        band(words, tmp, nwords);
    }
    if (rank < extra)
        status = mf_pt2pt_send_internal(words, len, rank + pof2, tag, comm);
out_free:
    free(tmp);
    return status;
}

mf_status_t mf_coll_allgather(mf_comm_t *comm, const void *sendbuf, size_t len, void *recvbuf)
{
    int size = comm->size, rank = comm->rank;
    char *out = recvbuf;
    memcpy(out + (size_t)rank * len, sendbuf, len);
    int right = (rank + 1) % size, left = (rank - 1 + size) % size;
    /* Step i forwards the block that originated i ranks to the left. */
    for (int i = 0; i < size - 1; i++) {
        int send_block = (rank - i + size) % size;
        int recv_block = (rank - i - 1 + size) % size;
        mf_status_t status = mf_pt2pt_sendrecv_internal(out + (size_t)send_block * len, len, right,
                                                        out + (size_t)recv_block * len, len, left,
                                                        TAG_ALLGATHER, comm);
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

void mf_coll_copy_split(void *dst, const void *src, size_t len)
{
    char *d = dst;
    const char *s = src;
    if (!mf_params.coll_copy_split) {
        memcpy(d, s, len);
        return;
    }
    while (len > MF_COLL_COPY_PIECE) {
        memcpy(d, s, MF_COLL_COPY_PIECE);
        d += MF_COLL_COPY_PIECE;
        s += MF_COLL_COPY_PIECE;
        len -= MF_COLL_COPY_PIECE;
    }
    memcpy(d, s, len);
}
