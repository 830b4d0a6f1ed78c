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

enum { TAG_BARRIER = 1, TAG_ALLREDUCE = 2, TAG_ALLGATHER = 3, TAG_FINALIZE = 14 };

static mf_status_t barrier_run(mf_comm_t *comm);

mf_status_t mf_coll_barrier(mf_comm_t *comm)
{
    /* counted like the other collectives (mf_coll_shm_enter): a barrier after a call whose
     * byte counts differed fails instead of waiting */
    mf_status_t status = mf_coll_shm_enter(comm, 0);
    if (status == MF_OK)
        status = barrier_run(comm);
    return mf_coll_shm_leave(comm, status);
}

static mf_status_t barrier_run(mf_comm_t *comm)
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

mf_status_t mf_coll_finalize_barrier(void)
{
    uint64_t word = ~(uint64_t)0;
    return mf_coll_allreduce_band_tag(&mf_comm_world, TAG_FINALIZE, &word, 1);
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

/* One pass from the end down: a load then never follows a store to an address 1-63 bytes
 * below it modulo 4 KiB, which is what makes the forward copies slow. 128 bytes a step, the
 * head with memcpy (below 128 bytes glibc loads everything before it stores). */
#define COPY_DOWN_STEP(vec_t)                                                                      \
    do {                                                                                           \
        while (len >= 128) {                                                                       \
            vec_t a, b, c, e;                                                                      \
            len -= 128;                                                                            \
            memcpy(&a, s + len, sizeof(a));                                                        \
            memcpy(&b, s + len + 32, sizeof(b));                                                   \
            memcpy(&c, s + len + 64, sizeof(c));                                                   \
            memcpy(&e, s + len + 96, sizeof(e));                                                   \
            memcpy(d + len, &a, sizeof(a));                                                        \
            memcpy(d + len + 32, &b, sizeof(b));                                                   \
            memcpy(d + len + 64, &c, sizeof(c));                                                   \
            memcpy(d + len + 96, &e, sizeof(e));                                                   \
        }                                                                                          \
        memcpy(d, s, len);                                                                         \
    } while (0)

typedef char copy_vec_t __attribute__((vector_size(32)));

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((target("avx2"))) static void copy_down_avx2(char *d, const char *s, size_t len)
{
    COPY_DOWN_STEP(copy_vec_t);
}
#endif

static void copy_down(char *d, const char *s, size_t len)
{
    COPY_DOWN_STEP(copy_vec_t);
}

void mf_coll_copy_down(void *dst, const void *src, size_t len)
{
    char *d = dst;
    const char *s = src;
    if (!MF_PARAM_LIVE(coll_copy_down)) {
        memcpy(d, s, len);
        return;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (MF_PARAM_LIVE(coll_copy_down) == 1 && __builtin_cpu_supports("avx2")) {
        copy_down_avx2(d, s, len);
        return;
    }
#endif
    copy_down(d, s, len);
}
