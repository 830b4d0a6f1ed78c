/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking collectives whose processes pass different counts (an erroneous program), run by
 * several threads at once, each on a communicator of its own: odd threads pass counts that
 * differ (rank 0 65536 ints, the others 32768, so the calls go over point-to-point and
 * their waits must give up), even threads matching ones. A mismatched communicator must
 * fail (in the call or the barrier after it, and a second barrier everywhere) without
 * touching the matched ones, whose results are checked. Under ThreadSanitizer this covers
 * the waits giving up in several threads and the process-wide list of communicators whose
 * leftover messages MPI_Finalize drops.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define BIG    65536
#define SMALL  32768
#define ROUNDS 3

struct thread_arg {
    int id;
    MPI_Comm comms[ROUNDS];
};

static int wrank, wsize;

static void *thread_main(void *p)
{
    struct thread_arg *a = p;
    int *sbuf = mtest_calloc(BIG, sizeof(int)), *rbuf = mtest_calloc(BIG, sizeof(int));
    for (int r = 0; r < ROUNDS; r++) {
        MPI_Comm c = a->comms[r];
        int mismatched = a->id % 2 == 1;
        int count = mismatched && wrank != 0 ? SMALL : BIG;
        for (int i = 0; i < count; i++)
            sbuf[i] = wrank + i + a->id;
        int rc = MPI_Allreduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, c);
        int first = MPI_Barrier(c), second = MPI_Barrier(c);
        if (!mismatched) {
            int bad = 0;
            for (int i = 0; i < count; i++)
                bad += rbuf[i] != wsize * (wsize - 1) / 2 + wsize * (i + a->id);
            MTEST_CHECK(rc == MPI_SUCCESS && first == MPI_SUCCESS && bad == 0,
                        "thread %d round %d: a matched Allreduce failed or has %d wrong items",
                        a->id, r, bad);
            continue;
        }
        int cls = MPI_SUCCESS;
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        MTEST_CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "thread %d round %d: class %s",
                    a->id, r, mtest_error_class_name(cls));
        cls = MPI_SUCCESS;
        if (second != MPI_SUCCESS)
            MPI_Error_class(second, &cls);
        MTEST_CHECK(cls == MPI_ERR_TRUNCATE,
                    "thread %d round %d: the second barrier returned %s, expected "
                    "MPI_ERR_TRUNCATE",
                    a->id, r, mtest_error_class_name(cls));
    }
    free(sbuf);
    free(rbuf);
    return NULL;
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];
    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int nthreads = mt_nthreads(4, 2);
    for (int t = 0; t < nthreads; t++) {
        args[t].id = t;
        for (int r = 0; r < ROUNDS; r++) {
            MPI_Comm_dup(MPI_COMM_WORLD, &args[t].comms[r]);
            MPI_Comm_set_errhandler(args[t].comms[r], MPI_ERRORS_RETURN);
        }
    }
    mt_run(nthreads, thread_main, args, sizeof(args[0]));
    for (int t = 0; t < nthreads; t++)
        for (int r = 0; r < ROUNDS; r++)
            MPI_Comm_free(&args[t].comms[r]);
    return mtest_finalize(0);
}
