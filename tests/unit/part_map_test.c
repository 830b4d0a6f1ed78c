/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The partition mapping of partitioned communication (part_map.h): for many sender/receiver
 * layouts (equal counts, M = kN, N = kM, coprime, receiver larger than the sender, empty
 * partitions) the sender partitions reported for each receive partition must be exactly those
 * whose bytes overlap it, checked against a byte-by-byte reference. Also the tag layout: data
 * tags never look like point-to-point or setup tags.
 */
#include "part_map.h"
#include "pt2pt.h"
#include "unit.h"

static void check_layout(int m, size_t s, int n, size_t r)
{
    size_t stotal = (size_t)m * s;
    for (int j = 0; j < n; j++) {
        /* reference: the first and last sender partition holding a byte of [j*r, (j+1)*r) */
        int ref_lo = -1, ref_hi = -1;
        for (size_t b = (size_t)j * r; b < (size_t)(j + 1) * r && b < stotal; b++) {
            int i = (int)(b / s);
            if (ref_lo < 0)
                ref_lo = i;
            ref_hi = i;
        }
        int lo = -7, hi = -7;
        int any = mf_part_cover(r, j, n, s, m, &lo, &hi);
        UNIT_CHECK(any == (ref_lo >= 0), "M=%d (%zu bytes) N=%d (%zu bytes) j=%d: lo %d hi %d", m,
                   s, n, r, j, lo, hi);
        if (any && ref_lo >= 0) {
            UNIT_CHECK(lo == ref_lo, "M=%d (%zu bytes) N=%d (%zu bytes) j=%d: lo %d hi %d", m, s, n,
                       r, j, lo, hi);
            UNIT_CHECK(hi == ref_hi, "M=%d (%zu bytes) N=%d (%zu bytes) j=%d: lo %d hi %d", m, s, n,
                       r, j, lo, hi);
        }
    }
}

int main(void)
{
    static const struct {
        int m, n;
        size_t total;
    } cases[] = {{1, 1, 8},   {4, 4, 64},  {8, 2, 64},  {2, 8, 64},   {3, 5, 15},  {5, 3, 45},
                 {7, 11, 77}, {1, 16, 32}, {16, 1, 32}, {12, 18, 36}, {32, 24, 96}};
    for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
        check_layout(cases[k].m, cases[k].total / (size_t)cases[k].m, cases[k].n,
                     cases[k].total / (size_t)cases[k].n);
    /* receiver larger than the sender; empty partitions */
    check_layout(3, 4, 5, 4);
    check_layout(2, 3, 4, 5);
    int lo, hi;
    UNIT_CHECK(!mf_part_cover(4, 0, 2, 0, 2, &lo, &hi), "%s", "edge case"); /* sender empty */
    UNIT_CHECK(!mf_part_cover(4, 3, 4, 4, 2, &lo, &hi), "%s",
               "edge case"); /* past the sender's 8 bytes */
    /* A message of no bytes: receive partition j waits for the sender partitions at the same
     * relative position (never for none: that would report it arrived before any Pready). */
    static const struct {
        int m, n, j, lo, hi;
    } empty[] = {{3, 3, 0, 0, 0}, {3, 3, 2, 2, 2}, {2, 4, 1, 0, 0}, {2, 4, 2, 1, 1},
                 {4, 2, 0, 0, 1}, {4, 2, 1, 2, 3}, {1, 3, 2, 0, 0}, {3, 1, 0, 0, 2}};
    for (size_t k = 0; k < sizeof(empty) / sizeof(empty[0]); k++) {
        lo = hi = -7;
        int any = mf_part_cover(0, empty[k].j, empty[k].n, 0, empty[k].m, &lo, &hi);
        UNIT_CHECK(any && lo == empty[k].lo && hi == empty[k].hi,
                   "empty message M=%d N=%d j=%d: lo %d hi %d", empty[k].m, empty[k].n, empty[k].j,
                   lo, hi);
    }

    /* Data tags set bit 63; point-to-point tags (context < 0x2000) and setup tags never do. */
    uint64_t data = mf_part_data_tag(0xffffffffu, MF_PART_TOKEN_INDEX);
    UNIT_CHECK(data >> 63 == 1, "%s", "edge case");
    UNIT_CHECK((data & ((1u << MF_PART_INDEX_BITS) - 1)) == MF_PART_TOKEN_INDEX, "%s", "edge case");
    uint64_t setup = mf_pt2pt_tag_make(MF_PART_SETUP_CTX_BIT | MF_PART_SETUP_TO_SEND | 0x1fff,
                                       MF_PT2PT_MAX_RANKS - 1, MF_PT2PT_TAG_UB);
    UNIT_CHECK(setup >> 63 == 0, "%s", "edge case");
    uint64_t user = mf_pt2pt_tag_make(0x1fff, MF_PT2PT_MAX_RANKS - 1, MF_PT2PT_TAG_UB);
    UNIT_CHECK((user >> 62) == 0 && user < mf_pt2pt_tag_make(MF_PART_SETUP_CTX_BIT, 0, 0), "%s",
               "edge case");
    return unit_finish("part_map_test");
}
