/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the point-to-point envelope encoding: (context, source, tag) round-trips through
 * the 64-bit transport tag, and receive masks match exactly what MPI's matching rules say,
 * including MPI_ANY_SOURCE and MPI_ANY_TAG, and never cross contexts.
 */
#include "pt2pt.h"
#include "unit.h"

static int matches(uint64_t sent, uint64_t want, uint64_t mask)
{
    return (sent & mask) == (want & mask);
}

int main(void)
{
    const unsigned ctxs[] = {0, 1, 2, 3, 8191, 65535};
    const int srcs[] = {0, 1, 7, 1000, MF_PT2PT_MAX_RANKS - 1};
    const int tags[] = {0, 1, 6, 1002, 32767, MF_PT2PT_TAG_UB};

    for (unsigned c = 0; c < sizeof(ctxs) / sizeof(ctxs[0]); c++) {
        for (unsigned s = 0; s < sizeof(srcs) / sizeof(srcs[0]); s++) {
            for (unsigned t = 0; t < sizeof(tags) / sizeof(tags[0]); t++) {
                uint64_t tag = mf_pt2pt_tag_make(ctxs[c], srcs[s], tags[t]);
                UNIT_CHECK(mf_pt2pt_tag_source(tag) == srcs[s], "source of %llx",
                           (unsigned long long)tag);
                UNIT_CHECK(mf_pt2pt_tag_tag(tag) == tags[t], "tag of %llx",
                           (unsigned long long)tag);
            }
        }
    }

    /* A message (ctx 4, source 2, tag 6) against receives of every wildcard combination. */
    uint64_t msg = mf_pt2pt_tag_make(4, 2, 6), want, mask;
    struct {
        unsigned ctx;
        int src, tag, expect;
    } cases[] = {
        {4, 2, 6, 1},
        {4, 2, 1002, 0},
        {4, 3, 6, 0},
        {5, 2, 6, 0},
        {4, MF_PT2PT_ANY, 6, 1},
        {4, MF_PT2PT_ANY, 1002, 0}, /* any source must still compare the tag */
        {4, 2, MF_PT2PT_ANY, 1},
        {4, 3, MF_PT2PT_ANY, 0}, /* any tag must still compare the source */
        {4, MF_PT2PT_ANY, MF_PT2PT_ANY, 1},
        {5, MF_PT2PT_ANY, MF_PT2PT_ANY, 0}, /* wildcards never cross communicators */
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        mf_pt2pt_match(cases[i].ctx, cases[i].src, cases[i].tag, &want, &mask);
        UNIT_CHECK(matches(msg, want, mask) == cases[i].expect,
                   "receive (ctx %u, src %d, tag %d) against message (4, 2, 6)", cases[i].ctx,
                   cases[i].src, cases[i].tag);
    }
    return unit_finish("tag_test");
}
