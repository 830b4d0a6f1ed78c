/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned point-to-point communication (MPI_Psend_init, MPI_Precv_init, MPI_Pready*,
 * MPI_Parrived) implemented on the transport's tagged messages: a one-time handshake at the
 * first MPI_Start, then every sender partition travels as its own message the moment it is
 * marked ready and lands directly in the receiver's buffer. See docs/design/partitioned.md.
 */
#ifndef MF_PART_H
#define MF_PART_H

#include "core.h"
#include "part_map.h"

/* Create an inactive partitioned request over `npart` partitions of `part_bytes` bytes each.
 * `packed` is MPI_DATATYPE_NULL when they are contiguous bytes starting at `buf`; otherwise the
 * committed datatype of the `count` items of each partition at `buf`, whose items are not one
 * run of memory: they travel packed (part_bytes is then the packed size of a partition). Local:
 * nothing is sent before the first MPI_Start. */
mf_status_t mf_part_init(int is_send, void *buf, int npart, size_t part_bytes, MPI_Datatype packed,
                         MPI_Count count, int peer, int tag, mf_comm_t *comm, mf_request_t **req_p);
/* Start one iteration (the request is inactive). */
mf_status_t mf_part_start(mf_request_t *req);
/* Mark partition p of an active send request ready: sent at once when the receiver is known
 * to be armed, otherwise queued and sent by progress. MF_ERR_INVALID when p was already marked
 * ready in this iteration. Never waits for the peer. */
mf_status_t mf_part_pready(mf_request_t *req, int p);
/* 1 when every byte of receive partition p has landed (drives progress first). */
int mf_part_parrived(mf_request_t *req, int p);
/* MPIX_Pbuf_prepare(all): returns once every listed active request is armed: a send request's
 * receiver has armed its buffer for this iteration (later MPI_Pready calls send at once), a
 * receive request has armed its own. Drives progress; the pair's calls complete each other. */
mf_status_t mf_part_pbuf_prepare(mf_request_t **reqs, int n);
/* The number of partitions of this side of the request. */
size_t mf_part_npart(const mf_request_t *req);
/* Send side: partition p is already marked ready in this iteration. */
int mf_part_marked(mf_request_t *req, int p);
/* Release an inactive partitioned request. */
void mf_part_free(mf_request_t *req);
/* At the library's finalize: withdraw the setups of requests freed before they paired. */
void mf_part_fini(void);
/* After the finalize fence: drop setup messages of inits freed before a partner ever met them
 * (UCX would warn about them, unexpected, when the workers close). */
void mf_part_drop_setups(void);
/* After the transport is gone: release the state of the requests the program never freed
 * (an inactive persistent request may be left at MPI_Finalize). */
void mf_part_release_all(void);

static inline int mf_part_is_part(const mf_request_t *req)
{
    return req->type == MF_REQ_PSEND || req->type == MF_REQ_PRECV;
}

#endif /* MF_PART_H */
