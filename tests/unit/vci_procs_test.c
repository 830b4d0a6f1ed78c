/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the process table (vci.c) in a singleton: processes of other jobs get numbers
 * after the world's, one per (job, rank), the same number when met again, and far more of them
 * than the 1024 the table held before (a job spawning one child at a time ran out after 1024
 * children). The addresses are fakes: no endpoint is ever created to them.
 */
#include "binding.h"
#include "unit.h"

#include <string.h>

#define MET 3000 /* processes of other jobs */

static uint64_t fake_job(int i)
{
    return 0x5eed000000000001ull + 2u * (uint64_t)(i / 7); /* odd: never "unknown" (0) */
}

int main(int argc, char **argv)
{
    UNIT_CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS, "singleton init");
    int world = mf_vci_process_count();
    UNIT_CHECK(world == 1, "a singleton's table holds %d processes", world);
    unsigned char addr[64];
    memset(addr, 0xab, sizeof(addr));

    int first = -1, ok = 1;
    for (int i = 0; i < MET && ok; i++) {
        int index = -1;
        mf_status_t st = mf_vci_add_process(fake_job(i), i % 7, addr, sizeof(addr), &index);
        ok = st == MF_OK && index == world + i;
        UNIT_CHECK(ok, "process %d of other jobs: status %d, number %d", i, (int)st, index);
        if (i == 0)
            first = index;
    }
    UNIT_CHECK(mf_vci_process_count() == world + MET, "%d processes in the table",
               mf_vci_process_count());

    /* Met again: the same numbers, no new entry. */
    int again = -1;
    UNIT_CHECK(mf_vci_add_process(fake_job(0), 0, addr, sizeof(addr), &again) == MF_OK &&
                   again == first,
               "the first process again: %d, first time %d", again, first);
    int last = -1;
    UNIT_CHECK(mf_vci_add_process(fake_job(MET - 1), (MET - 1) % 7, addr, sizeof(addr), &last) ==
                       MF_OK &&
                   last == world + MET - 1,
               "the last process again: %d", last);
    UNIT_CHECK(mf_vci_find_process(fake_job(1234), 1234 % 7) == world + 1234, "found: %d",
               mf_vci_find_process(fake_job(1234), 1234 % 7));
    UNIT_CHECK(mf_vci_find_process(fake_job(MET), 5) == -1, "never met: %d",
               mf_vci_find_process(fake_job(MET), 5));
    uint64_t job = 0;
    int rank = -1;
    mf_vci_process_id(world + 2000, &job, &rank);
    UNIT_CHECK(job == fake_job(2000) && rank == 2000 % 7, "process %d is rank %d", world + 2000,
               rank);
    UNIT_CHECK(mf_vci_process_count() == world + MET, "no entry added by the look-ups");

    UNIT_CHECK(MPI_Finalize() == MPI_SUCCESS, "finalize");
    return unit_finish("vci_procs_test");
}
