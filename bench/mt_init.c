/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The cost of starting and stopping MPI: the time of MPI_Init_thread, of the first
 * communication on --comms duplicates of MPI_COMM_WORLD (a zero-byte exchange around a ring on
 * each, which is when an MPI creating resources lazily pays for them), and of MPI_Finalize,
 * plus the resident set size after each step. Run it with the MPI's knob for the number of
 * VCIs set (MANIFOLD_VCI_COUNT, MPIR_CVAR_CH4_NUM_VCIS) to see what more VCIs cost. Rank 0
 * prints one JSON line: the slowest rank's init and first-communication times, its own
 * finalize time, the largest RSS.
 */
#include "bench_mt.h"

#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

static const char usage[] = "  --comms N          duplicates of MPI_COMM_WORLD to use (default 1)\n"
                            "  --thread-level L   multiple (default) | single\n";

static const char *env_or_unset(const char *name)
{
    const char *v = getenv(name);
    return v ? v : "";
}

int main(int argc, char **argv)
{
    mf_mt_opts_t opts = {.threads = 1, .comms = 1, .level = MPI_THREAD_MULTIPLE};
    int rank, nprocs, status = mf_mt_parse_args(argc, argv, "mt_init", usage, &opts);
    double t0, t_init, t_comm, t_fin;
    double mine[2], slowest[2];
    long rss[2], rss_max[2];
    MPI_Comm *comms;

    if (status != 0)
        return status == 1 ? 0 : status;
    t0 = mf_mt_now();
    mf_mt_init(&argc, &argv, &opts);
    t_init = mf_mt_now() - t0;
    rss[0] = mf_mt_rss_kib();
    mf_mt_ok(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    mf_mt_ok(MPI_Comm_size(MPI_COMM_WORLD, &nprocs), "MPI_Comm_size");

    comms = calloc((size_t)opts.comms + 1, sizeof(MPI_Comm));
    if (!comms)
        mf_mt_ok(MPI_ERR_NO_MEM, "calloc");
    t0 = mf_mt_now();
    for (int c = 0; c < opts.comms; c++) {
        int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs;
        mf_mt_ok(MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]), "MPI_Comm_dup");
        mf_mt_ok(MPI_Sendrecv(NULL, 0, MPI_BYTE, next, 0, NULL, 0, MPI_BYTE, prev, 0, comms[c],
                              MPI_STATUS_IGNORE),
                 "MPI_Sendrecv");
    }
    t_comm = mf_mt_now() - t0;
    rss[1] = mf_mt_rss_kib();

    mine[0] = t_init;
    mine[1] = t_comm;
    mf_mt_ok(MPI_Reduce(mine, slowest, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    mf_mt_ok(MPI_Reduce(rss, rss_max, 2, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce");
    if (rank == 0) {
        mf_mt_json_begin("mt_init", &opts);
        printf("\"processes\": %d, \"comms\": %d, \"init_s\": %.6f, \"first_comm_s\": %.6f, "
               "\"rss_init_kib\": %ld, \"rss_comm_kib\": %ld, \"manifold_vci_count\": \"%s\", "
               "\"mpich_num_vcis\": \"%s\", ",
               nprocs, opts.comms, slowest[0], slowest[1], rss_max[0], rss_max[1],
               env_or_unset("MANIFOLD_VCI_COUNT"), env_or_unset("MPIR_CVAR_CH4_NUM_VCIS"));
        fflush(stdout);
    }
    for (int c = 0; c < opts.comms; c++)
        mf_mt_ok(MPI_Comm_free(&comms[c]), "MPI_Comm_free");
    free(comms);
    t0 = mf_mt_now();
    mf_mt_ok(MPI_Finalize(), "MPI_Finalize");
    t_fin = mf_mt_now() - t0;
    if (rank == 0)
        printf("\"finalize_s\": %.6f}\n", t_fin);
    return 0;
}
