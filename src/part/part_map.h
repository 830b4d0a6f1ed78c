/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned communication: the arithmetic that maps one side's partitions onto the other's.
 * The sender cuts the buffer into M partitions of s bytes, the receiver into N partitions of r
 * bytes; each sender partition travels as one message, so a receive partition has arrived when
 * every sender partition overlapping its byte range has. Kept free of MPI objects so the unit
 * tests can check it directly (any M:N ratio, coprime counts, receivers larger than senders).
 */
#ifndef MF_PART_MAP_H
#define MF_PART_MAP_H

#include <stddef.h>
#include <stdint.h>

/* The sender partitions [*lo_p, *hi_p] that carry bytes of receive partition j (r bytes each,
 * recv_npart of them), when the sender has send_npart partitions of s bytes. A message of no
 * bytes still travels as one (empty) message per sender partition, and receive partition j
 * waits for those at the same relative position, as if each receive partition held send_npart
 * bytes and each sender partition recv_npart. Returns 0 when no sender bytes fall into the
 * receive partition (it lies past the sender's data, or the sender has none while the
 * receiver has some): such a partition has nothing to wait for. */
static inline int mf_part_cover(size_t r, int j, int recv_npart, size_t s, int send_npart,
                                int *lo_p, int *hi_p)
{
    if (r == 0 && s == 0 && recv_npart > 0 && send_npart > 0) {
        r = (size_t)send_npart;
        s = (size_t)recv_npart;
    }
    if (r == 0 || s == 0 || send_npart <= 0)
        return 0;
    uint64_t begin = (uint64_t)j * r, end = begin + r; /* [begin, end) */
    uint64_t lo = begin / s, hi = (end + s - 1) / s - 1;
    if (lo >= (uint64_t)send_npart)
        return 0;
    if (hi >= (uint64_t)send_npart)
        hi = (uint64_t)send_npart - 1;
    *lo_p = (int)lo;
    *hi_p = (int)hi;
    return 1;
}

/* Transport tags of partitioned traffic. Point-to-point and collective tags keep the top 16
 * bits for the context, which stays below 0x4000 (context index < 2 * MF_CONTEXT_MAX, shifted
 * left once, plus the internal bit). Setup messages use context 0x4000 | the communicator's
 * user context, with the usual source and user-tag fields, so they match in order on
 * (communicator, source, tag) like any message; MF_PART_SETUP_TO_SEND marks the receiver's
 * reply, so a process talking to itself never takes its own setup message for the peer's. Data and
 * per-iteration tokens set bit 63 and carry a channel id that the destination process allocated
 * (unique there) and a partition index; MF_PART_TOKEN_INDEX is the receiver's "iteration armed"
 * token. */
#define MF_PART_SETUP_CTX_BIT 0x4000u
#define MF_PART_SETUP_TO_SEND 0x2000u /* set on receiver-to-sender setup messages */
#define MF_PART_INDEX_BITS    24
#define MF_PART_TOKEN_INDEX   ((1u << MF_PART_INDEX_BITS) - 1)
#define MF_PART_MAX_PARTS     ((int)MF_PART_TOKEN_INDEX - 1)

static inline uint64_t mf_part_data_tag(uint32_t channel, unsigned index)
{
    return ((uint64_t)1 << 63) | ((uint64_t)channel << MF_PART_INDEX_BITS) | (uint64_t)index;
}

#endif /* MF_PART_MAP_H */
