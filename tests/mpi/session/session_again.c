/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sessions begun again after every earlier one ended (MPI-4.1 section 11.3 allows it; only the
 * world model is once per process): a loop of init, a communicator from mpi://WORLD, an
 * Allreduce, finalize. With SESSION_THREADS=n, n threads each run that loop at once, so the
 * number of live sessions drops to zero at moments no thread controls. The library shut
 * down with the last session and refused the next MPI_Session_init (MPI_ERR_OTHER).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include "session_common.h"

#define ROUNDS 4

static void *run(void *arg)
{
    int t = (int)(intptr_t)arg;
    for (int i = 0; i < ROUNDS; i++) {
        MPI_Session s = MPI_SESSION_NULL;
        MPI_Info info = MPI_INFO_NULL;
        MPI_Info_create(&info);
        MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
        int rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &s);
        MPI_Info_free(&info);
        CHECK_OK(rc, "MPI_Session_init");
        if (rc != MPI_SUCCESS)
            return NULL;
        char tag[64];
        snprintf(tag, sizeof(tag), "session_again.%d.%d", t, i);
        MPI_Comm comm = world_comm_of(s, tag);
        int rank = -1, size = -1, sum = -1;
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
        CHECK(rc == MPI_SUCCESS && sum == size * (size - 1) / 2,
              "thread %d round %d: allreduce rc %d sum %d", t, i, rc, sum);
        if (i == ROUNDS - 1 && t == 0) { /* the last round reports for everyone */
            int total = 0;
            MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, comm);
            if (rank == 0)
                printf(total == 0 ? " No Errors\n" : " Found %d errors\n", total);
        }
        MPI_Comm_free(&comm);
        rc = MPI_Session_finalize(&s);
        CHECK_OK(rc, "MPI_Session_finalize");
    }
    return NULL;
}

int main(void)
{
    const char *env = getenv("SESSION_THREADS");
    int nthreads = env != NULL ? atoi(env) : 1;
    if (nthreads <= 1) {
        run((void *)(intptr_t)0);
        return errs != 0;
    }
    pthread_t threads[16];
    nthreads = nthreads > 16 ? 16 : nthreads;
    /* thread 0 reports last: it starts after the others are done */
    for (int t = 1; t < nthreads; t++)
        pthread_create(&threads[t], NULL, run, (void *)(intptr_t)t);
    for (int t = 1; t < nthreads; t++)
        pthread_join(threads[t], NULL);
    run((void *)(intptr_t)0);
    return errs != 0;
}
