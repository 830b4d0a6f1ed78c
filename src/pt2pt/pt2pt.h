/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point protocol interface: how an MPI message envelope (context, source, tag) maps
 * onto the transport's 64-bit tag and mask, so that matching, wildcards and MPI's non-overtaking
 * order are the transport's tag matching. Knows nothing about communicator objects: callers pass
 * the VCI, the context id and ranks already resolved.
 *
 * Tag layout (most significant first):  context id : 16 | source rank : 24 | MPI tag : 24
 * The context id carries the communicator's index shifted left by one and a low bit that
 * separates library-internal (collective) traffic from user point-to-point traffic.
 */
#ifndef MF_PT2PT_H
#define MF_PT2PT_H

#include "vci.h"

#include <stdint.h>

#define MF_PT2PT_TAG_BITS  24
#define MF_PT2PT_SRC_BITS  24
#define MF_PT2PT_CTX_BITS  16
#define MF_PT2PT_TAG_UB    ((1 << MF_PT2PT_TAG_BITS) - 1)
#define MF_PT2PT_MAX_RANKS (1 << MF_PT2PT_SRC_BITS)
#define MF_PT2PT_ANY       (-1) /* wildcard for source or tag in receives and probes */

static inline uint64_t mf_pt2pt_tag_make(unsigned ctx, int src, int tag)
{
    return ((uint64_t)ctx << (MF_PT2PT_SRC_BITS + MF_PT2PT_TAG_BITS)) |
           ((uint64_t)(uint32_t)src << MF_PT2PT_TAG_BITS) | (uint64_t)(uint32_t)tag;
}

static inline int mf_pt2pt_tag_source(uint64_t tag)
{
    return (int)((tag >> MF_PT2PT_TAG_BITS) & ((1u << MF_PT2PT_SRC_BITS) - 1));
}

static inline int mf_pt2pt_tag_tag(uint64_t tag)
{
    return (int)(tag & ((1u << MF_PT2PT_TAG_BITS) - 1));
}

/* The (tag, mask) pair a receive matches with; src/tag may be MF_PT2PT_ANY. */
static inline void mf_pt2pt_match(unsigned ctx, int src, int tag, uint64_t *tag_p, uint64_t *mask_p)
{
    uint64_t mask = ~(uint64_t)0;
    if (src == MF_PT2PT_ANY) {
        mask &= ~((((uint64_t)1 << MF_PT2PT_SRC_BITS) - 1) << MF_PT2PT_TAG_BITS);
        src = 0;
    }
    if (tag == MF_PT2PT_ANY) {
        mask &= ~(((uint64_t)1 << MF_PT2PT_TAG_BITS) - 1);
        tag = 0;
    }
    *tag_p = mf_pt2pt_tag_make(ctx, src, tag);
    *mask_p = mask;
}

/* ---- operations on communicators (pt2pt.c) ---------------------------------------------- */

#include "core.h"

/* Start a send/receive of `len` contiguous bytes. `ctx` is mf_comm_ctx_user(comm) for user
 * traffic or mf_comm_ctx_internal(comm) for the library's own. dest/source are ranks in comm
 * (source may be MPI_ANY_SOURCE, tag MPI_ANY_TAG; MPI_PROC_NULL completes at once).
 * On success *req_p is a request to wait on (possibly a shared pre-completed one). A send with
 * `waits` set is waited for at once by its caller (blocking calls; see
 * mf_vci_tag_send_try_locked). */
static inline mf_status_t mf_pt2pt_isend(const void *buf, size_t len, int dest, int tag,
                                         mf_comm_t *comm, unsigned ctx, mf_send_mode_t mode,
                                         int waits, mf_request_t **req_p);
/* mf_pt2pt_isend's out-of-line parts: MPI_PROC_NULL, buffered and synchronous sends, and a
 * request for a send the transport kept (VCI lock held; NULL when out of memory, after the
 * send was finished here). */
mf_status_t mf_pt2pt_isend_other(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm,
                                 unsigned ctx, mf_send_mode_t mode, mf_request_t **req_p);
mf_request_t *mf_pt2pt_send_pending_locked(mf_vci_t *vci, mf_comm_t *comm, void *pending);
mf_status_t mf_pt2pt_irecv(void *buf, size_t len, int source, int tag, mf_comm_t *comm,
                           unsigned ctx, mf_request_t **req_p);
/* MPI_Irecv of `count` items of the committed derived type `dt` at `buf` through `packed`, a
 * temporary of `len` bytes (mf_dtype_temp_alloc) that this call takes over in every case. The
 * transport's completion unpacks it and releases it and the type's reference (taken here), so a
 * wait finds a plain request. MPI_PROC_NULL completes at once. */
mf_status_t mf_pt2pt_irecv_unpack(void *packed, size_t len, mf_dtype_t *dt, void *buf,
                                  MPI_Count count, int source, int tag, mf_comm_t *comm,
                                  mf_request_t **req_p);
/* A receive the caller waits for at once (MPI_Recv): `local` is a request on the caller's
 * stack, which cannot outlive the call, so the message needs no request from the cache (nor,
 * with the headroom, one from UCX's pool). Not for MPI_PROC_NULL. Wait for local->req with
 * mf_request_wait_done, then read it with mf_request_fill_status/mf_request_error; nothing to
 * release. */
mf_status_t mf_pt2pt_recv_local(void *buf, size_t len, int source, int tag, mf_comm_t *comm,
                                unsigned ctx, mf_request_local_t *local);
/* Streamed derived-datatype messages: `len` packed bytes of `count` items of the committed type
 * `dt` at `buf` go through the transport's packer (mf_vci_packer_t), which calls the pack
 * engine on pieces, so no full-size temporary exists. The request holds a reference on dt.
 * Not for buffered sends (they copy anyway). MPI_PROC_NULL completes at once. */
mf_status_t mf_pt2pt_isend_stream(MPI_Datatype dt, const void *buf, MPI_Count count, size_t len,
                                  int dest, int tag, mf_comm_t *comm, mf_send_mode_t mode,
                                  int waits, mf_request_t **req_p);
mf_status_t mf_pt2pt_irecv_stream(MPI_Datatype dt, void *buf, MPI_Count count, size_t len,
                                  int source, int tag, mf_comm_t *comm, mf_request_t **req_p);
/* Make a persistent request made by mf_pt2pt_*_init (with a NULL buffer) stream dt. */
void mf_pt2pt_stream_attach(mf_request_t *req, MPI_Datatype dt, const void *buf, MPI_Count count);
/* (Re)start a persistent request created by mf_pt2pt_*_init. */
mf_status_t mf_pt2pt_start(mf_request_t *req);
mf_status_t mf_pt2pt_send_init(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm,
                               mf_send_mode_t mode, mf_request_t **req_p);
mf_status_t mf_pt2pt_recv_init(void *buf, size_t len, int source, int tag, mf_comm_t *comm,
                               mf_request_t **req_p);
/* Blocking helpers for library-internal traffic (collectives used by communicator creation). */
mf_status_t mf_pt2pt_send_internal(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm);
mf_status_t mf_pt2pt_recv_internal(void *buf, size_t len, int source, int tag, mf_comm_t *comm);
mf_status_t mf_pt2pt_sendrecv_internal(const void *sbuf, size_t slen, int dest, void *rbuf,
                                       size_t rlen, int source, int tag, mf_comm_t *comm);
/* A send of slen bytes at sbuf to `peer` and a receive of up to rlen bytes into rbuf from it,
 * at once (a NULL buffer: nothing that way); *got_p: the bytes received. `whole`: the send
 * is one message the transport may move by rendezvous (a single copy by the receiver)
 * instead of sending it eagerly through its queue, as blocking sends do. */
mf_status_t mf_pt2pt_exchange_internal(const void *sbuf, size_t slen, int whole, void *rbuf,
                                       size_t rlen, size_t *got_p, int peer, int tag,
                                       mf_comm_t *comm);
/* The send and receive above, except that with `yield` set (a node running more ranks than
 * cores) the wait yields the CPU every 16 empty polls. The common wait learns to spin 1024 polls
 * (about 40 us) when messages arrive from the other core, which keeps the rank sharing this
 * core, often the next link of a chain, off it. */
mf_status_t mf_pt2pt_send_internal_yielding(const void *buf, size_t len, int dest, int tag,
                                            mf_comm_t *comm, int yield);
mf_status_t mf_pt2pt_recv_internal_yielding(void *buf, size_t len, int source, int tag,
                                            mf_comm_t *comm, int yield);
/* Probe (blocking when `blocking`), matched probe; *flag_p tells whether a message was found. */
mf_status_t mf_pt2pt_probe(int source, int tag, mf_comm_t *comm, int blocking, int *flag_p,
                           MPI_Status *status);
mf_status_t mf_pt2pt_mprobe(int source, int tag, mf_comm_t *comm, int blocking, int *flag_p,
                            MPI_Message *message_p, MPI_Status *status);
mf_status_t mf_pt2pt_imrecv(void *buf, size_t len, struct MPI_ABI_Message *msg,
                            mf_request_t **req_p);
/* The same, unpacking count items of dt into buf piece by piece (no temporary). */
mf_status_t mf_pt2pt_imrecv_stream(MPI_Datatype dt, void *buf, MPI_Count count, size_t len,
                                   struct MPI_ABI_Message *msg, mf_request_t **req_p);
/* A request for MPI_Isendrecv that owns `send` and `recv` (both started) and completes when
 * both have, with the receive's status; the first failure is its error. MPI_Cancel leaves it to
 * complete normally. */
mf_status_t mf_pt2pt_join(mf_comm_t *comm, mf_request_t *send, mf_request_t *recv,
                          mf_request_t **req_p);
/* Cancel a receive (sends are not cancelled: the request completes normally). */
void mf_pt2pt_cancel(mf_request_t *req);
/* Free a request that may still be in flight: it is released when it completes. */
void mf_pt2pt_request_free(mf_request_t *req);

/* Buffered sends: the attached buffer bounds the space in use. A buffer (mf_bsend_pool_t,
 * core.h) is the process's (MPI_Buffer_attach), a communicator's or a session's. attach:
 * MF_ERR_INVALID when one is attached; detach: MF_ERR_NOT_FOUND when none is, MF_ERR_OVERFLOW
 * (and the buffer stays) when its size is above size_max, else it waits until the buffer's
 * messages are out (flush), as does flush; idle: nothing in flight. */
mf_bsend_pool_t *mf_bsend_pool_process(void);
mf_status_t mf_bsend_pool_attach(mf_bsend_pool_t *pool, void *buf, size_t size);
mf_status_t mf_bsend_pool_detach(mf_bsend_pool_t *pool, size_t size_max, void **buf_p,
                                 size_t *size_p);
void mf_bsend_pool_flush(mf_bsend_pool_t *pool);
int mf_bsend_pool_idle(mf_bsend_pool_t *pool);

/* Inline, because it is most of every short send: the message goes out first, and only a
 * send the transport keeps gets a request, so a short standard or ready send costs no request
 * at all (it returns the VCI's shared completed one). */
static inline __attribute__((always_inline)) mf_status_t
mf_pt2pt_isend(const void *buf, size_t len, int dest, int tag, mf_comm_t *comm, unsigned ctx,
               mf_send_mode_t mode, int waits, mf_request_t **req_p)
{
    if (MF_UNLIKELY(dest == MPI_PROC_NULL || mode == MF_SEND_BUFFERED || mode == MF_SEND_SYNC))
        return mf_pt2pt_isend_other(buf, len, dest, tag, comm, ctx, mode, req_p);
    int user = ctx == mf_comm_ctx_user(comm);
    mf_vci_t *vci;
    if (MF_LIKELY(user)) {
        vci = mf_comm_vci_lock_for(comm, comm->rank, tag);
    } else {
        vci = comm->vci;
        mf_vci_lock(vci);
    }
    void *pending;
    mf_status_t status =
        mf_vci_tag_send_try_locked(vci, mf_comm_peer_world_rank(comm, dest), buf, len,
                                   mf_pt2pt_tag_make(ctx, comm->tag_rank, tag), waits, &pending);
    if (MF_LIKELY(status == MF_OK)) {
        /* Messages on the home VCI (whose lock this is), for the hint agreement (hints_apply
         * in core_comm.c). A spread communicator's counter is not touched: its lock is another. */
        if (user && mf_comm_unspread_locked(comm))
            comm->unmatched++;
        *req_p = MF_LIKELY(pending == NULL) ? mf_request_precomplete(vci)
                                            : mf_pt2pt_send_pending_locked(vci, comm, pending);
    }
    mf_vci_unlock(vci);
    return status;
}

#endif /* MF_PT2PT_H */
