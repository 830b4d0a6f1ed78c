/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error messages under MPI_THREAD_MULTIPLE: every thread makes failing calls (an MPI_Send to a
 * rank that does not exist, a different one each time) as fast as it can, and the string of
 * each code it gets back must describe its own call, not another thread's that came in
 * between (the library's message slots are shared; up to 8 threads each have their own).
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define CALLS 2000

struct thread_arg {
    int id;
};

static void *thread_main(void *arg)
{
    const struct thread_arg *a = arg;
    char text[MPI_MAX_ERROR_STRING], want[64];
    int x = 0, len, wrong = 0;

    for (int i = 0; i < CALLS; i++) {
        int dest = 1000 + a->id * 100000 + i; /* not a rank, and unique to this call */
        int rc = MPI_Send(&x, 1, MPI_INT, dest, 0, MPI_COMM_WORLD);
        MPI_Error_string(rc, text, &len);
        snprintf(want, sizeof(want), "dest=%d ", dest);
        if (strstr(text, want) == NULL && wrong++ == 0)
            MTEST_CHECK(0, "thread %d: the call had %s, its message says: %s", a->id, want, text);
    }
    MTEST_CHECK(wrong == 0, "thread %d: %d of %d messages named another call", a->id, wrong, CALLS);
    return NULL;
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];
    int nthreads = mt_nthreads(8, 1);

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    if (nthreads > 8)
        nthreads = 8;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int i = 0; i < nthreads; i++)
        args[i].id = i;
    mt_run(nthreads, thread_main, args, sizeof(args[0]));
    return mtest_finalize(0);
}
