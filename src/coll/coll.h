/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective protocol interface. For now: the blocking collectives the library itself needs
 * (communicator creation agrees on context ids and exchanges colors/keys) and MPI_Barrier, built
 * on point-to-point over the communicator's internal context so they never match user messages.
 */
#ifndef MF_COLL_H
#define MF_COLL_H

#include "core.h"

mf_status_t mf_coll_barrier(mf_comm_t *comm);
/* Bitwise AND of `nwords` 64-bit words across the communicator, result everywhere. */
mf_status_t mf_coll_allreduce_band(mf_comm_t *comm, uint64_t *words, int nwords);
/* The same with the caller's tag (0..MF_PT2PT_TAG_UB) on the internal context, for agreements
 * that several threads may run at once over one context (MPI_Comm_create_group). */
mf_status_t mf_coll_allreduce_band_tag(mf_comm_t *comm, int tag, uint64_t *words, int nwords);
/* Every process contributes `len` bytes; recvbuf receives comm->size blocks in rank order. */
mf_status_t mf_coll_allgather(mf_comm_t *comm, const void *sendbuf, size_t len, void *recvbuf);

#endif /* MF_COLL_H */
