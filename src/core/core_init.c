/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: library start-up and shut-down. Init reads the tunables, joins the job through
 * PMI (or starts as a singleton), brings up the VCI pool, publishes the transport addresses and
 * fences once; connections to peers are made later, on first use. Finalize waits for all
 * processes (a barrier that makes progress, then a PMI fence) so no peer still needs our
 * endpoints, then tears everything down.
 */
#include "core.h"

#include <unistd.h>

#include "coll.h"
#include "pmi.h"

#include <stdlib.h>
#include <string.h>

mf_global_t mf_global;
static mf_pmi_job_t job;

/* One VCI per core, at least 8 (threads often outnumber cores, and an unused VCI costs
 * nothing: its worker is created on first use), at most MF_VCI_MAX. */
static int default_pool_size(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    if (cores < 8)
        return 8;
    return cores > MF_VCI_MAX ? MF_VCI_MAX : (int)cores;
}

mf_status_t mf_init(int required, int *provided_p)
{
    (void)required;
    mf_log_init();
    mf_status_t status = mf_params_load();
    if (status != MF_OK)
        return status;
    mf_global.param_check = mf_params.param_check;
    /* MANIFOLD_PROGRESS_SWEEP_POLLS rounded up to a power of two: the poll loop tests a mask */
    mf_global.sweep_mask = 1;
    while (mf_global.sweep_mask < (unsigned)mf_params.progress_sweep)
        mf_global.sweep_mask <<= 1;
    mf_global.sweep_mask -= 1;
    mf_global.nvcis = mf_params.vci_count > 0 ? mf_params.vci_count : default_pool_size();
    mf_global.progress_all = mf_params.vci_progress == MF_VCI_PROGRESS_ALL;
    mf_global.main_thread = pthread_self();
    /* Every thread level is served by the same fine-grained locking, so each is provided as
     * required ("if possible, the call will return provided = required", MPI-4.1 11.2.1):
     * FFTW's tests, for one, check it. */
    mf_global.thread_level = required;

    status = mf_pmi_init(&job);
    if (status != MF_OK)
        return status;
    mf_global.world_rank = job.rank;
    mf_global.world_size = job.size;
    mf_global.appnum = job.appnum;
    mf_global.universe = job.universe > job.size ? job.universe : job.size;
    mf_global.singleton = job.singleton;
    mf_log_set_rank(job.rank);
    if (mf_params.print_params && job.rank == 0)
        mf_params_print(stderr, 1);

    status = mf_vci_pool_init(job.rank, job.size, job.local_rank, job.local_size, mf_global.nvcis);
    if (status != MF_OK)
        goto err_pmi;
    status = mf_request_pool_init(mf_global.nvcis);
    if (status != MF_OK)
        goto err_vci;
    status = mf_pmi_fence();
    if (status != MF_OK)
        goto err_requests;
    status = mf_comm_init_builtin();
    if (status != MF_OK)
        goto err_requests;
    status = mf_vci_async_start(mf_progress_upper, mf_progress_upper_pending);
    if (status != MF_OK)
        goto err_requests;
    *provided_p = mf_global.thread_level;
    atomic_store_explicit(&mf_global.state, MF_STATE_READY, memory_order_release);
    /* Spawned: the parents wait in MPI_Comm_spawn until the children connect. */
    if (job.spawned && (status = mf_dynproc_init_parent()) != MF_OK)
        return status;
    return MF_OK;

err_requests:
    mf_request_pool_fini();
err_vci:
    mf_vci_pool_fini();
err_pmi:
    mf_pmi_finalize();
    return status;
}

mf_status_t mf_finalize(void (*quiesced)(void))
{
    /* Sends the user can no longer wait for (buffered sends, requests freed while pending)
     * may need this process's progress until their receivers have them (a rendezvous), and
     * MPI_Finalize must complete them (MPI-4.1 section 11.2.2). Each receiver completes its
     * receive before it finalizes, so a barrier that makes progress covers them, where the
     * out-of-band fence alone left such a sender deaf. Then every process must be done
     * communicating before endpoints close. The barrier has a channel of its own: on the
     * user's, a process that finalizes early completed another's MPI_Barrier. */
    mf_coll_shm_discard_gave_up();
    mf_status_t status = mf_coll_finalize_barrier();
    mf_status_t fenced = mf_pmi_fence();
    if (status == MF_OK)
        status = fenced;
    if (quiesced != NULL)
        quiesced();
    atomic_store_explicit(&mf_global.state, MF_STATE_FINALIZED, memory_order_release);
    mf_comm_fini_builtin();
    mf_dynproc_fini();
    if (MF_PARAM_LIVE(vci_stats))
        mf_vci_stats_report(stderr, mf_global.world_rank);
    /* Endpoints close before any worker goes away: a worker's end closes its TCP listener, and
     * a peer still connecting a TCP lane to it then printed UCX errors ("connect ... failed:
     * Connection refused") in about 1 of 400 runs of two-process programs under load. */
    mf_vci_pool_close_eps();
    (void)mf_pmi_fence();
    mf_vci_pool_fini();
    mf_request_pool_fini();
    mf_pmi_finalize();
    return status;
}

void mf_abort(int errorcode, const char *msg)
{
    mf_pmi_abort(errorcode, msg);
}

void mf_exit_unfinalized(int errorcode, const char *msg)
{
    mf_pmi_exit_unfinalized(errorcode, msg);
}
