/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective protocol interface: reduction operations (predefined and user-defined MPI_Op
 * objects and the engine that applies them), the blocking collectives on intracommunicators,
 * and the few collectives the library itself needs (communicator creation agrees on context
 * ids and exchanges colors/keys). Everything is built on point-to-point over the
 * communicator's internal context, with a tag per collective, so collective traffic never
 * matches user messages nor another collective's. Buffers are described in bytes: the binding
 * layer has already checked the datatypes (predefined only for now) and turned counts into
 * byte lengths; reductions also get the element count and datatype.
 */
#ifndef MF_COLL_H
#define MF_COLL_H

#include "core.h"

#include <stdint.h>
#include <string.h>

mf_status_t mf_coll_barrier(mf_comm_t *comm);
/* MPI_Finalize's barrier over MPI_COMM_WORLD's processes, on a tag of its own: a process that
 * finalizes while another waits in MPI_Barrier(MPI_COMM_WORLD) must not let that barrier
 * return. Point-to-point, so its waits make progress. */
mf_status_t mf_coll_finalize_barrier(void);
/* Bitwise AND of `nwords` 64-bit words across the communicator, result everywhere. */
mf_status_t mf_coll_allreduce_band(mf_comm_t *comm, uint64_t *words, int nwords);
/* The same with the caller's tag (0..MF_PT2PT_TAG_UB) on the internal context, for agreements
 * that several threads may run at once over one context (MPI_Comm_create_group). */
mf_status_t mf_coll_allreduce_band_tag(mf_comm_t *comm, int tag, uint64_t *words, int nwords);
/* Every process contributes `len` bytes; recvbuf receives comm->size blocks in rank order. */
mf_status_t mf_coll_allgather(mf_comm_t *comm, const void *sendbuf, size_t len, void *recvbuf);

/* ---- copies clear of 4 KiB aliasing (coll_internal.c) ---------------------------------- */

/* glibc's x86-64 memcpy moves copies from 2048 (2112 with FSRM) bytes with `rep movsb`, which
 * on AMD Zen runs 20-40x slower when the destination lies 1-63 bytes above the source modulo
 * 4 KiB (a buffer 8 bytes above a shared-memory slot). Copies longer than MF_COLL_COPY_MIN at
 * such a distance run a vector loop of our own from the end down instead. docs/design/coll.md. */
#define MF_COLL_COPY_MIN ((size_t)1984)
void mf_coll_copy_down(void *dst, const void *src, size_t len);

static inline void mf_coll_copy(void *dst, const void *src, size_t len)
{
    uintptr_t d = ((uintptr_t)dst - (uintptr_t)src) & 4095;
    if (len > MF_COLL_COPY_MIN && d - 1 < 63)
        mf_coll_copy_down(dst, src, len);
    else
        memcpy(dst, src, len);
}

/* ---- blocking collectives (coll_blocking.c) ---------------------------------------------- */

/* ---- algorithm selection (coll_select.c) ------------------------------------------------ */

/* The collectives with a choice of algorithm. Exscan shares Scan's choice, Reduce_scatter_block
 * Reduce_scatter's. */
typedef enum {
    MF_COLL_BARRIER,
    MF_COLL_BCAST,
    MF_COLL_REDUCE,
    MF_COLL_ALLREDUCE,
    MF_COLL_GATHER,
    MF_COLL_SCATTER,
    MF_COLL_ALLGATHER,
    MF_COLL_ALLTOALL,
    MF_COLL_REDUCE_SCATTER,
    MF_COLL_SCAN,
    MF_COLL_KINDS
} mf_coll_kind_t;

/* Algorithm ids per collective: the index of the algorithm's name in the choices of
 * MANIFOLD_COLL_<NAME> (src/util/util_params.c); 0 lets the selection table decide. A node-aware
 * shared-memory path (coll_shm.c) is tried at the top of barrier, bcast, reduce and allreduce
 * before any of these. */
#define MF_COLL_AUTO                             0
#define MF_COLL_BARRIER_DISSEMINATION            1
#define MF_COLL_BCAST_BINOMIAL                   1
#define MF_COLL_BCAST_SCATTER_ALLGATHER          2
#define MF_COLL_REDUCE_BINOMIAL                  1
#define MF_COLL_REDUCE_RABENSEIFNER              2
#define MF_COLL_ALLREDUCE_RECURSIVE_DOUBLING     1
#define MF_COLL_ALLREDUCE_RABENSEIFNER           2
#define MF_COLL_ALLREDUCE_REDUCE_BCAST           3
#define MF_COLL_GATHER_LINEAR                    1
#define MF_COLL_GATHER_BINOMIAL                  2
#define MF_COLL_SCATTER_LINEAR                   1
#define MF_COLL_SCATTER_BINOMIAL                 2
#define MF_COLL_ALLGATHER_RING                   1
#define MF_COLL_ALLGATHER_RECURSIVE_DOUBLING     2
#define MF_COLL_ALLGATHER_BRUCK                  3
#define MF_COLL_ALLTOALL_PAIRWISE                1
#define MF_COLL_ALLTOALL_BRUCK                   2
#define MF_COLL_REDUCE_SCATTER_REDUCE_SCATTERV   1
#define MF_COLL_REDUCE_SCATTER_RECURSIVE_HALVING 2
#define MF_COLL_REDUCE_SCATTER_PAIRWISE          3
#define MF_COLL_SCAN_CHAIN                       1
#define MF_COLL_SCAN_RECURSIVE_DOUBLING          2

/* The algorithm for `kind` on `nprocs` processes moving `bytes` (the buffer of bcast, reduce,
 * allreduce and scan; the block of one process for the others): the forced one
 * (MANIFOLD_COLL_<NAME>), else the first matching rule of the table (MANIFOLD_COLL_TABLE or
 * the built-in one). Every member computes the same answer from the same arguments; the
 * caller falls back when the algorithm does not apply (e.g. non-commutative operations). */
int mf_coll_select(mf_coll_kind_t kind, int nprocs, size_t bytes);
/* Name of the collective ("allreduce") and of one of its algorithms (NULL when out of range). */
const char *mf_coll_kind_name(mf_coll_kind_t kind);
const char *mf_coll_alg_name(mf_coll_kind_t kind, int alg);
/* Number of algorithms of `kind`, not counting "auto". */
int mf_coll_alg_count(mf_coll_kind_t kind);

/* All of them are called by every member of the intracommunicator with matching arguments
 * (the binding checked the local ones). Lengths and displacements are in bytes; reductions
 * take `count` items of the predefined type `dt` of `extent` bytes and an operation that
 * mf_op_check accepted. MPI_IN_PLACE is passed through where the comment says so. */
mf_status_t mf_coll_bcast(mf_comm_t *comm, void *buf, size_t len, int root);
/* sbuf: at the root it may equal rbuf (in place); rbuf is used at the root only. */
mf_status_t mf_coll_reduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                           MPI_Datatype dt, size_t extent, MPI_Op op, int root);
/* sbuf may equal rbuf (in place). */
mf_status_t mf_coll_allreduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                              MPI_Datatype dt, size_t extent, MPI_Op op);
/* rbuf, rlens, rdispls are used at the root only; sbuf MPI_IN_PLACE at the root. */
mf_status_t mf_coll_gatherv(mf_comm_t *comm, const void *sbuf, size_t slen, void *rbuf,
                            const size_t *rlens, const size_t *rdispls, int root);
/* MPI_Gather: every block is `len` bytes, rbuf holds them in rank order (root only); sbuf
 * MPI_IN_PLACE at the root. */
mf_status_t mf_coll_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root);
/* MPI_Scatter: the mirror image (rbuf MPI_IN_PLACE at the root). */
mf_status_t mf_coll_scatter(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root);
/* sbuf, slens, sdispls are used at the root only; rbuf MPI_IN_PLACE at the root. */
mf_status_t mf_coll_scatterv(mf_comm_t *comm, const void *sbuf, const size_t *slens,
                             const size_t *sdispls, void *rbuf, size_t rlen, int root);
/* sbuf may be MPI_IN_PLACE (own block already in rbuf). */
mf_status_t mf_coll_allgatherv(mf_comm_t *comm, const void *sbuf, size_t slen, void *rbuf,
                               const size_t *rlens, const size_t *rdispls);
/* sbuf may be MPI_IN_PLACE (then slens/sdispls are ignored: rbuf's layout is used). Also
 * MPI_Alltoallw: byte displacements, one length per peer. */
mf_status_t mf_coll_alltoallv(mf_comm_t *comm, const void *sbuf, const size_t *slens,
                              const size_t *sdispls, void *rbuf, const size_t *rlens,
                              const size_t *rdispls);
/* MPI_Alltoall: blocks of `len` bytes in rank order on both sides; sbuf may be MPI_IN_PLACE. */
mf_status_t mf_coll_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf);
/* counts[i] items end up at rank i; sbuf may be MPI_IN_PLACE (input in rbuf, which then
 * holds the whole vector). */
mf_status_t mf_coll_reduce_scatter(mf_comm_t *comm, const void *sbuf, void *rbuf,
                                   const size_t *counts, MPI_Datatype dt, size_t extent, MPI_Op op);
/* Inclusive (MPI_Scan) or exclusive (MPI_Exscan: rank 0's rbuf is left alone) prefix
 * reduction; sbuf may be MPI_IN_PLACE. */
mf_status_t mf_coll_scan(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                         MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive);

/* ---- node-aware shared-memory collectives (coll_shm.c) ---------------------------------- */

/* 1 when the blocking barrier/bcast/reduce/allreduce on `comm` should take the shared-memory
 * path (op: MPI_OP_NULL for barrier and bcast). Collective on first use: the first call on a
 * communicator of at least 2 ranks sets the path up (the node layout, one segment per node,
 * a communicator of the node leaders), so every member must call it at the same collective,
 * with the same op. Off with MANIFOLD_COLL_SHM=0, for non-commutative operations, and when no
 * node holds two members. */
int mf_coll_shm_usable(mf_comm_t *comm, MPI_Op op);
/* Reductions on one item larger than this (a user operation on a large derived type) take the
 * point-to-point algorithms: the shared-memory path combines whole items in slots this big. */
#define MF_COLL_SHM_ITEM_MAX ((size_t)128 * 1024)
/* The collectives, with the arguments of the blocking forms; only after mf_coll_shm_usable. */
mf_status_t mf_coll_shm_barrier(mf_comm_t *comm);
/* Around every blocking collective: `enter` announces this process's byte count for the call
 * to the others on its node (MF_COLL_SHM_ANY_LEN where counts may differ, the v-forms), and
 * fails when an earlier call on the communicator had counts that differ; `leave` turns the
 * call's status into MF_ERR_TRUNCATE when one of its waits found that the counts of this call
 * differ (the wait would never have ended). Both do nothing without shared memory. */
#define MF_COLL_SHM_ANY_LEN UINT64_MAX
mf_status_t mf_coll_shm_enter(mf_comm_t *comm, uint64_t len);
mf_status_t mf_coll_shm_leave(mf_comm_t *comm, mf_status_t status);
/* Inside such a call: whether the processes of the node passed it different byte counts. The
 * internal point-to-point waits ask, as a message they wait for may then never come. */
int mf_coll_shm_call_broken(mf_comm_t *comm);
/* MPI_Finalize, before its barrier: receive and drop the messages still waiting for the steps
 * that blocking collectives skipped when they gave up (their senders may be in a rendezvous
 * with them), on every communicator where that happened, freed or not. */
void mf_coll_shm_discard_gave_up(void);
/* Receive and drop the messages waiting on internal context `ctx` under the blocking
 * collectives' tags (coll_blocking.c). */
void mf_coll_discard_blocking(unsigned ctx);
mf_status_t mf_coll_shm_bcast(mf_comm_t *comm, void *buf, size_t len, int root);
mf_status_t mf_coll_shm_reduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                               MPI_Datatype dt, size_t extent, MPI_Op op, int root);
mf_status_t mf_coll_shm_allreduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                                  MPI_Datatype dt, size_t extent, MPI_Op op);
/* Small calls (one block or vector up to a cache-line-sized entry) on a communicator that lies
 * on one node: 1 when the shared-memory allgatherv, gather and scan below apply (collective on
 * the first call, like mf_coll_shm_usable). Rank order is kept, so any operation works. */
int mf_coll_shm_small(mf_comm_t *comm, size_t len);
/* mf_coll_shm_small, or on a node running more ranks than cores any size up to `max` and
 * MANIFOLD_COLL_SHM_CROWD_BYTES, in entry-sized pieces (gather and scan). */
int mf_coll_shm_pieces(mf_comm_t *comm, size_t len, size_t max);
int mf_coll_shm_scan_ok(mf_comm_t *comm, size_t len, size_t extent);
/* Crowded node, largest block above one entry and up to MANIFOLD_COLL_SHM_CROWD_BYTES (and
 * half a ring of pieces): every rank publishes all its pieces, then reads the others'. */
int mf_coll_shm_crowd_allgather_ok(mf_comm_t *comm, size_t most);
mf_status_t mf_coll_shm_crowd_allgatherv(mf_comm_t *comm, void *rbuf, const size_t *rlens,
                                         const size_t *rdispls);
/* Crowded node, Alltoall blocks above one entry together and within half a ring of pieces:
 * every rank publishes its whole send buffer, then reads its block from the others'. */
int mf_coll_shm_crowd_alltoall_ok(mf_comm_t *comm, size_t len);
mf_status_t mf_coll_shm_crowd_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf);
mf_status_t mf_coll_shm_allgatherv(mf_comm_t *comm, void *rbuf, const size_t *rlens,
                                   const size_t *rdispls);
mf_status_t mf_coll_shm_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root);
/* Large blocks on one node copied straight from the owner's buffer (process_vm_readv), when
 * every local rank can read the others and the size reaches `min` (a MANIFOLD_COLL_CMA_*
 * tunable; 0: never). `own` (NULL: rbuf's copy) is where the others read this rank's block. */
int mf_coll_shm_cma(mf_comm_t *comm, size_t len, int min);
/* A node running more ranks than cores, every rank able to read the others' memory, and
 * blocks of at least `min` bytes: the single-copy calls whatever MANIFOLD_COLL_CMA_BYTES says. */
int mf_coll_shm_crowd_cma(mf_comm_t *comm, size_t len, size_t min);
/* Whether this rank's node runs more ranks than cores (MANIFOLD_COLL_SHM_CROWDED); collective on
 * the first call, like mf_coll_shm_usable. */
int mf_coll_shm_crowded(mf_comm_t *comm);
mf_status_t mf_coll_shm_cma_allgatherv(mf_comm_t *comm, const void *own, void *rbuf,
                                       const size_t *rlens, const size_t *rdispls);
mf_status_t mf_coll_shm_cma_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf);
mf_status_t mf_coll_shm_cma_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                   int root);
mf_status_t mf_coll_shm_cma_push_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                        int root);
mf_status_t mf_coll_shm_cma_scatter(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                    int root);
/* Whether a two-rank communicator on one node takes point-to-point instead of the segment for
 * a buffer or block of `len` bytes, min <= len <= max (collective on the first call, like
 * mf_coll_shm_usable; never with MANIFOLD_COLL_SHM_MEDIUM=on). */
int mf_coll_shm_pair_p2p(mf_comm_t *comm, size_t len, size_t min, size_t max);
/* As mf_coll_shm_pair_p2p, and also from 4 KiB below min when a probe found the two ranks far
 * apart (both ranks call it alike: it may time a round trip between them). */
int mf_coll_shm_pair_p2p_far(mf_comm_t *comm, size_t len, size_t min, size_t max);
/* After mf_coll_shm_pair_p2p said yes: whether this rank sends a large block as one message
 * (1) or in pieces (0). Both ranks call it once per collective call, with the bytes the call
 * sends plus those it receives (it may time a round trip between them); with a value forced
 * by MANIFOLD_COLL_PAIR_WHOLE they may answer differently. */
int mf_coll_shm_pair_whole(mf_comm_t *comm, size_t bytes);
/* Medium blocks (above a small-call entry, up to 256 KiB) on a communicator that lies on one
 * node: through the data area in pieces (collective on the first call, like
 * mf_coll_shm_usable). */
int mf_coll_shm_medium(mf_comm_t *comm, size_t len);
mf_status_t mf_coll_shm_medium_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                      int root);
/* Scatter on one node up to the same limit: blocks that fit one small-call entry together go
 * through the root's entry, larger ones through the data area. */
/* Gather on a crowded node through the data area's ring of units (blocks of 2-16 KiB while a
 * quarter of the ring holds k - 1 of them). */
int mf_coll_shm_crowd_gather_ok(mf_comm_t *comm, size_t len);
mf_status_t mf_coll_shm_crowd_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                     int root);
int mf_coll_shm_scatter_ok(mf_comm_t *comm, size_t len);
mf_status_t mf_coll_shm_scatter(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                int root);
/* Allgather(v) through the medium rounds: mf_coll_shm_medium, except the larger blocks of
 * two ranks, which point-to-point moves faster. */
int mf_coll_shm_medium_allgather_ok(mf_comm_t *comm, size_t len);
mf_status_t mf_coll_shm_medium_allgatherv(mf_comm_t *comm, void *rbuf, const size_t *rlens,
                                          const size_t *rdispls);
/* Small Alltoall (all blocks of a rank in one entry) and Reduce_scatter (the whole vector in
 * one entry) on one node: mf_coll_shm_small of the bytes a rank publishes; any operation. */
mf_status_t mf_coll_shm_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf);
mf_status_t mf_coll_shm_reduce_scatter(mf_comm_t *comm, const void *src, void *rbuf,
                                       const size_t *counts, MPI_Datatype dt, size_t extent,
                                       MPI_Op op);
/* Allgather(v) on a crowded node, blocks above the pieces and up to
 * MANIFOLD_COLL_SHM_CROWD_ALLGATHER_BYTES (and a k-th of half the data area): one round
 * through the data area, one wait per call. */
int mf_coll_shm_crowd_area_allgather_ok(mf_comm_t *comm, size_t most);
int mf_coll_shm_crowd_area_alltoall_ok(mf_comm_t *comm, size_t len);
mf_status_t mf_coll_shm_crowd_area_alltoall(mf_comm_t *comm, const void *sbuf, size_t len,
                                            void *rbuf);
mf_status_t mf_coll_shm_crowd_area_allgatherv(mf_comm_t *comm, void *rbuf, const size_t *rlens,
                                              const size_t *rdispls);
/* Reduce_scatter on a crowded node, the vector above one entry and up to
 * MANIFOLD_COLL_SHM_CROWD_BYTES (and half a ring of pieces): every rank publishes its vector in
 * pieces and combines its own block from them; any operation, items up to one entry. */
int mf_coll_shm_crowd_reduce_scatter_ok(mf_comm_t *comm, size_t len, size_t extent);
mf_status_t mf_coll_shm_crowd_reduce_scatter(mf_comm_t *comm, const void *src, void *rbuf,
                                             const size_t *counts, MPI_Datatype dt, size_t extent,
                                             MPI_Op op);
/* Reduce_scatter on a crowded node above the pieces: true when blocks of len bytes (the mean)
 * take the crowded Reduce ring (commutative operations); then every rank streams its vector
 * through its part of that ring once and combines its own block from every rank's chunks. */
int mf_coll_shm_crowd_reduce_ring_ok(mf_comm_t *comm, size_t len, size_t extent, MPI_Op op);
mf_status_t mf_coll_shm_crowd_ring_reduce_scatter(mf_comm_t *comm, const void *src, void *rbuf,
                                                  const size_t *counts, MPI_Datatype dt,
                                                  size_t extent, MPI_Op op);
/* Alltoall of a two-rank communicator on one node, blocks above a small-call entry and up to
 * the medium limit (with a core per rank), through the data area. */
int mf_coll_shm_medium_alltoall_ok(mf_comm_t *comm, size_t len);
mf_status_t mf_coll_shm_medium_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf);
/* Reduce_scatter(_block) of a two-rank communicator on one node, vector above a small-call
 * entry and up to 128 KiB, commutative operations, items up to 8 KiB: each rank streams the
 * other's block. */
int mf_coll_shm_pair_reduce_scatter_ok(mf_comm_t *comm, size_t len, size_t extent, MPI_Op op);
mf_status_t mf_coll_shm_pair_reduce_scatter(mf_comm_t *comm, const void *src, void *rbuf,
                                            const size_t *counts, MPI_Datatype dt, size_t extent,
                                            MPI_Op op);
/* Scan/Exscan of a two-rank communicator on one node above a small-call entry (any operation;
 * items up to 8 KiB): rank 0 streams its vector to rank 1. */
int mf_coll_shm_pair_scan_ok(mf_comm_t *comm, size_t len, size_t extent);
mf_status_t mf_coll_shm_pair_scan(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                                  MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive);
mf_status_t mf_coll_shm_scan(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                             MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive);
/* Local: unmap the communicator's segment and free its leaders' communicator (comm destroy,
 * finalize). Returns 1 when a blocking collective on it found byte counts that differ: messages
 * of the calls that gave up may still be in flight on its context id. */
int mf_coll_shm_free(mf_comm_t *comm);

/* ---- schedules: non-blocking and persistent collectives (coll_sched.c, coll_nbc.c) -------- */

/* A schedule is built once (at MPI_I<coll> or MPI_<Coll>_init) from rounds of steps; a round
 * runs its local steps in order, then posts its sends and receives, and the next round starts
 * when they have all completed. Building never fails on the spot: an allocation failure is
 * remembered and reported by mf_sched_request. */
typedef struct mf_sched mf_sched_t;

/* The internal tag of the next non-blocking or (`persistent`) persistent collective on `comm`:
 * bit 23 set, bit 22 for persistent ones, a sequence number of its kind below; every member
 * computes the same one. The two kinds count apart, so the many one-shot operations of a long
 * run never come round to the tag of a persistent one created at its start. */
int mf_sched_next_tag(mf_comm_t *comm, int persistent);
mf_sched_t *mf_sched_create(mf_comm_t *comm, int tag);
/* The communicator whose ranks the next steps name: the schedule's own, unless mf_sched_on
 * switched it. The algorithms below size themselves by it. */
mf_comm_t *mf_sched_comm(const mf_sched_t *s);
/* Steps added from now on address processes of `comm` on its internal context (with the
 * schedule's tag): an intercommunicator's schedule switches to its local_comm for the local
 * half and back. `comm` must live as long as the schedule (local_comm lives with its
 * intercommunicator, which the request holds). */
void mf_sched_on(mf_sched_t *s, mf_comm_t *comm);
void mf_sched_send(mf_sched_t *s, const void *buf, size_t len, int peer);
void mf_sched_recv(mf_sched_t *s, void *buf, size_t len, int peer);
void mf_sched_copy(mf_sched_t *s, void *dst, const void *src, size_t len);
/* inout = in op inout over `count` items of the schedule's datatype and operation. */
void mf_sched_reduce(mf_sched_t *s, const void *in, void *inout, size_t count);
/* Holds a reference on a derived dt until the schedule is freed. */
void mf_sched_set_op(mf_sched_t *s, MPI_Datatype dt, MPI_Op op);
/* Local steps that pack `count` items of dt at buf into `packed` (len bytes: all of their
 * packed form) or unpack them back; each holds a reference on dt until the schedule is freed,
 * and runs again at every start of a persistent request. */
void mf_sched_pack(mf_sched_t *s, MPI_Datatype dt, MPI_Count count, const void *buf, void *packed,
                   size_t len);
void mf_sched_unpack(mf_sched_t *s, MPI_Datatype dt, MPI_Count count, void *buf, const void *packed,
                     size_t len);
/* The schedule owns the malloc'd block p from now on (freed with it, also on failure). */
void mf_sched_adopt(mf_sched_t *s, void *p);
/* A local step that calls fn(s, arg) when its round runs (in order with the copies and
 * reductions). It may append steps, which run after the current round; an error it returns
 * becomes the collective's. Used by protocols whose next round depends on the last one's
 * results (MPI_Comm_idup's context-id agreement retries). */
typedef mf_status_t (*mf_sched_fn_t)(mf_sched_t *s, void *arg);
void mf_sched_call(mf_sched_t *s, mf_sched_fn_t fn, void *arg);
/* Close the current round: later steps wait for its operations. */
void mf_sched_barrier(mf_sched_t *s);
/* A scratch buffer freed with the schedule; NULL on out-of-memory. */
void *mf_sched_tmp(mf_sched_t *s, size_t len);
mf_status_t mf_sched_status(const mf_sched_t *s);
/* Wrap the schedule (owned from now on, freed on failure) in a collective request; a
 * non-persistent one is started at once, a persistent one waits for mf_sched_start. */
mf_status_t mf_sched_request(mf_sched_t *s, int persistent, mf_request_t **req_p);
/* (Re)start the inactive persistent collective request `req`. */
mf_status_t mf_sched_start(mf_request_t *req);
/* Nobody will wait for the started request `req`: 1 when it has ended (the caller completes
 * it), else 0 after setting *flag (read by the schedule's steps, under the same lock) and
 * marking the request to be released when it ends. */
int mf_sched_abandon(mf_request_t *req, atomic_int *flag);
/* At the library's finalize: progress until the abandoned schedules have ended (the other
 * processes wait for this one's part in them), for at most 30 s. */
void mf_sched_finish_abandoned(void);

/* The algorithms, with the arguments of the blocking forms above. */
void mf_nbc_barrier(mf_sched_t *s);
void mf_nbc_bcast(mf_sched_t *s, void *buf, size_t len, int root);
void mf_nbc_reduce(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                   size_t extent, MPI_Op op, int root);
void mf_nbc_allreduce(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                      size_t extent, MPI_Op op);
void mf_nbc_gatherv(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf, const size_t *rlens,
                    const size_t *rdispls, int root);
void mf_nbc_scatterv(mf_sched_t *s, const void *sbuf, const size_t *slens, const size_t *sdispls,
                     void *rbuf, size_t rlen, int root);
void mf_nbc_allgatherv(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf,
                       const size_t *rlens, const size_t *rdispls);
/* MF_ERR_TRUNCATE when this process's own block does not fit. */
mf_status_t mf_nbc_alltoallv(mf_sched_t *s, const void *sbuf, const size_t *slens,
                             const size_t *sdispls, void *rbuf, const size_t *rlens,
                             const size_t *rdispls);
void mf_nbc_reduce_scatter(mf_sched_t *s, const void *sbuf, void *rbuf, const size_t *counts,
                           MPI_Datatype dt, size_t extent, MPI_Op op);
void mf_nbc_scan(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                 size_t extent, MPI_Op op, int exclusive);

/* ---- intercommunicator collectives (coll_inter.c) ----------------------------------------- */

/* Schedules on an intercommunicator (mf_sched_create on it), arguments as above except: roots
 * are the user's argument (MPI_ROOT, MPI_PROC_NULL or a rank of the remote group), the "all"
 * side of gathers, scatters and all-to-alls has one block per remote process, reduce-scatter
 * counts are per local process (the other group's reduced vector is scattered over this one),
 * and MPI_IN_PLACE never appears (the standard does not allow it on intercommunicators). */
void mf_inter_barrier(mf_sched_t *s);
void mf_inter_bcast(mf_sched_t *s, void *buf, size_t len, int root);
void mf_inter_reduce(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                     size_t extent, MPI_Op op, int root);
void mf_inter_allreduce(mf_sched_t *s, const void *sbuf, void *rbuf, size_t count, MPI_Datatype dt,
                        size_t extent, MPI_Op op);
void mf_inter_gatherv(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf, const size_t *rlens,
                      const size_t *rdispls, int root);
void mf_inter_scatterv(mf_sched_t *s, const void *sbuf, const size_t *slens, const size_t *sdispls,
                       void *rbuf, size_t rlen, int root);
/* Allgather: every process of a group sends slen bytes, rbuf gets remote_size blocks of rlen. */
void mf_inter_allgather(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf, size_t rlen);
void mf_inter_allgatherv(mf_sched_t *s, const void *sbuf, size_t slen, void *rbuf,
                         const size_t *rlens, const size_t *rdispls);
void mf_inter_alltoallv(mf_sched_t *s, const void *sbuf, const size_t *slens, const size_t *sdispls,
                        void *rbuf, const size_t *rlens, const size_t *rdispls);
void mf_inter_reduce_scatter(mf_sched_t *s, const void *sbuf, void *rbuf, const size_t *counts,
                             MPI_Datatype dt, size_t extent, MPI_Op op);
/* The blocking forms: start the schedule (owned from now on) and wait. MF_OK when it ran, with
 * *err_class_p the MPI error class of its completion (MPI_SUCCESS when it succeeded). */
mf_status_t mf_inter_run(mf_sched_t *s, int *err_class_p);

/* ---- neighbourhood collectives (coll_neighbor.c) ----------------------------------------- */

/* The in- and out-neighbours of this process in the standard's order (Cartesian: the -1 then
 * +1 neighbour of each dimension, MPI_PROC_NULL where there is none); one allocation, free
 * *in_p. MF_ERR_INVALID when the communicator has no topology. */
mf_status_t mf_neighbor_lists(mf_comm_t *comm, int *indeg_p, int **in_p, int *outdeg_p,
                              int **out_p);
/* Block k of rlens/rdispls (bytes) comes from in[k], block k of slens/sdispls goes to out[k];
 * `cart`: the lists are a Cartesian topology's. Allgathers pass the same block to every
 * out-neighbour. */
void mf_nbc_neighbor_alltoallv(mf_sched_t *s, int cart, int indeg, const int *in, int outdeg,
                               const int *out, const void *sbuf, const size_t *slens,
                               const size_t *sdispls, void *rbuf, const size_t *rlens,
                               const size_t *rdispls);

/* ---- reduction operations (coll_op.c) ---------------------------------------------------- */

struct MPI_ABI_Op {
    uint32_t kind;
    int commutative;
    MPI_User_function *fn;     /* from MPI_Op_create, or NULL */
    MPI_User_function_c *fn_c; /* from MPI_Op_create_c, or NULL */
    struct MPI_ABI_Op *next_free;
    /* the user's handle until MPI_Op_free, and one per pending operation that will apply it
     * (a collective's schedule): the object is reused only when the last one is gone */
    atomic_int refs;
};

typedef struct MPI_ABI_Op mf_op_t;

/* 1 when `op` is a predefined operation other than MPI_OP_NULL. */
int mf_op_is_predefined(MPI_Op op);
/* 1 when `op` is a predefined operation or a live user-defined one. */
int mf_op_valid(MPI_Op op);
/* The name of a predefined operation ("MPI_SUM"), "user-defined operation" otherwise. */
const char *mf_op_name(MPI_Op op);
/* The .TRUE. and .FALSE. bit patterns of Fortran LOGICAL of `size` bytes (1, 2, 4, 8, 16)
 * that the logical reductions use (MPI_Abi_set_fortran_booleans). Set: MF_ERR_INVALID for
 * another size, MF_ERR_OTHER when other patterns were set already. Get: 0 when never set. */
mf_status_t mf_op_set_fortran_booleans(int size, const void *t, const void *f);
int mf_op_get_fortran_booleans(int size, void *t, void *f);
/* 1 when the (valid) operation is commutative. */
int mf_op_commutative(MPI_Op op);
/* MF_OK when the valid operation `op` is defined on the predefined datatype `dt` (MPI-4.1
 * section 6.9.2); MF_ERR_INVALID when it is not (the caller reports MPI_ERR_OP). User-defined
 * operations accept every datatype. */
mf_status_t mf_op_check(MPI_Op op, MPI_Datatype dt);
/* inout[i] = in[i] op inout[i] for `count` items of `dt` (MPI's order: the first operand is
 * the lower-ranked contribution when `in` comes from lower ranks). mf_op_check must have
 * accepted (op, dt). User functions with an int count are called in pieces of at most
 * INT_MAX items. */
void mf_op_apply(MPI_Op op, const void *in, void *inout, size_t count, MPI_Datatype dt);
/* Every dt is taken in its packed form there (the collectives move packed bytes), which differs
 * from the layout in memory for derived types and the pair types with padding: a user function
 * gets the items unpacked into the type's own layout, a predefined operation runs on the type's
 * single basic type (unpacked too when it is such a pair type). mf_op_apply_native takes every
 * operand in its own layout (MPI_Reduce_local). */
void mf_op_apply_native(MPI_Op op, const void *in, void *inout, size_t count, MPI_Datatype dt);
/* The predefined type every basic element of dt is (dt itself when predefined; pair types such
 * as MPI_DOUBLE_INT count as one); MPI_DATATYPE_NULL when dt holds no element, or, with
 * *mixed_p = 1, several different ones. */
MPI_Datatype mf_op_basic_type(MPI_Datatype dt, int *mixed_p);
/* Exactly one of fn, fn_c is non-NULL. */
mf_status_t mf_op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commutative,
                         mf_op_t **op_p);
/* The handle stays recognisable as freed: freed objects are recycled, never unmapped. */
void mf_op_free(mf_op_t *op);
/* A reference on a user-defined operation for as long as something will apply it after the
 * call that named it returned (MPI_Op_free may come first); no-ops for predefined ones. */
void mf_op_retain(MPI_Op op);
void mf_op_release(MPI_Op op);

/* ---- checking mode (coll_check.c, MANIFOLD_COLL_CHECK=1) ---------------------------------- */

/* The peers one side of a collective talks to, as this process sees it. */
typedef enum { MF_CHECK_NONE, MF_CHECK_ROOT, MF_CHECK_ALL } mf_check_peers_t;

/* What this process sends to (or expects from) each peer: a type and a count for every peer,
 * or a type (Alltoallw) and a count (v forms) per peer. */
typedef struct mf_check_side {
    mf_check_peers_t peers;
    MPI_Datatype type;
    const MPI_Datatype *types; /* NULL: `type` for every peer */
    MPI_Count count;
    const void *counts; /* NULL: `count` for every peer; else int[] or MPI_Count[] */
    int counts_large;
} mf_check_side_t;

/* One call of a collective as this process made it. Members every process must agree on:
 * the function (without the _c suffix), root, op (user operations: their commutativity),
 * (dt, count) of reductions and `aux` (e.g. a hash of Reduce_scatter's recvcounts). */
typedef struct mf_check {
    const char *func;
    int root;        /* -1: not rooted */
    MPI_Op op;       /* MPI_OP_NULL: not a reduction */
    MPI_Datatype dt; /* MPI_DATATYPE_NULL: no (dt, count) shared by all */
    MPI_Count count;
    uint64_t aux;
    mf_check_side_t send, recv; /* peers MF_CHECK_NONE (zeroed) when unused */
} mf_check_t;

/* What the check found; the binding turns it into an MPI error class. */
typedef enum {
    MF_CHECK_OK,
    MF_CHECK_KIND, /* different collectives */
    MF_CHECK_ROOT_DIFF,
    MF_CHECK_OP_DIFF,
    MF_CHECK_TYPE,     /* type signatures differ */
    MF_CHECK_COUNT,    /* same type, fewer items sent than expected */
    MF_CHECK_TRUNCATE, /* same type, more items sent than expected */
    MF_CHECK_AUX,      /* e.g. Reduce_scatter recvcounts differ */
} mf_check_result_t;

/* Verify across the communicator that every member is in the same collective with matching
 * arguments. Blocking, on tags of its own: a fixed-shape exchange of a header first (so
 * processes in different collectives never hang), then, if the headers agree and the
 * collective moves data per peer, one signature per peer and an agreement on the first
 * mismatch, so every process reports the same one. `msg` gets the description. */
mf_status_t mf_coll_check(mf_comm_t *comm, const mf_check_t *chk, mf_check_result_t *result_p,
                          char *msg, size_t msglen);

#endif /* MF_COLL_H */
