/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the tags of non-blocking and persistent collectives (mf_sched_next_tag): they
 * stay above the blocking collectives' tags, and a persistent collective's tag is never the tag
 * of a one-shot operation, however many of those a long run makes (a persistent collective
 * created at the start of a run and started alongside the 2^23-th non-blocking collective
 * after it once exchanged data with it).
 */
#include "coll.h"
#include "pt2pt.h"
#include "unit.h"

#include <string.h>

int main(void)
{
    static mf_comm_t comm;
    const int nbc_bit = 1 << (MF_PT2PT_TAG_BITS - 1);
    memset(&comm, 0, sizeof(comm));

    int persistent = mf_sched_next_tag(&comm, 1);
    UNIT_CHECK((persistent & nbc_bit) != 0, "persistent tag %#x lacks bit 23", persistent);
    for (uint64_t i = 0; i < ((uint64_t)1 << MF_PT2PT_TAG_BITS) + 3; i++) {
        int tag = mf_sched_next_tag(&comm, 0);
        if (tag == persistent || (tag & nbc_bit) == 0 || tag > MF_PT2PT_TAG_UB) {
            UNIT_CHECK(0, "one-shot collective %llu got tag %#x (persistent %#x)",
                       (unsigned long long)i, tag, persistent);
            break;
        }
    }
    /* The persistent ones count on their own, and every member counts alike. */
    int next = mf_sched_next_tag(&comm, 1);
    UNIT_CHECK(next != persistent && (next & nbc_bit) != 0, "second persistent tag %#x", next);
    return unit_finish("coll_tag_test");
}
