/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: what the library reports about itself to tools outside MPI_T. Today that is the
 * per-VCI counter summary MANIFOLD_VCI_STATS=1 prints at finalize.
 */
#include "core.h"

#include <inttypes.h>

void mf_vci_stats_report(FILE *out, int rank)
{
    int n = mf_vci_pool_size();
    int active = 0;
    for (int v = 0; v < n; v++) {
        mf_vci_stats_t s;
        mf_vci_stats_get(v, &s);
        if (!s.active)
            continue;
        active++;
        fprintf(out,
                "rank %d vci %d: sends %" PRIu64 " recvs %" PRIu64 " lock %" PRIu64
                " contended %" PRIu64 " sweeps %" PRIu64 " misses %" PRIu64 "\n",
                rank, v, s.sends, s.recvs, s.lock_acquired, s.lock_contended, s.global_sweeps,
                s.request_misses);
    }
    mf_vci_resources_t res;
    mf_vci_resources_get(&res);
    fprintf(out, "rank %d vci totals: pool %d active %d contexts %d workers %d endpoints %d\n",
            rank, n, active, res.contexts, res.workers, res.endpoints);
    fflush(out);
}
