/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tool thread writes every writable control variable (the collective algorithm choices, as
 * manifold_tune does) while the main thread runs collectives that read them at every call. Each
 * write stores the value the variable already has, so every process keeps choosing alike; under
 * ThreadSanitizer the write and the reads must not race (the reads were plain loads).
 */
#include "mtest.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int stop;
#define MAX_VARS 64

/* Every control variable MPI_T lets a program write (the collective algorithm choices and
 * VCI_STATS), rewritten with its own value until the main thread is done. */
static void *tool(void *arg)
{
    (void)arg;
    int count, ncvars = 0, n = 0;
    MPI_T_cvar_handle handles[MAX_VARS];
    int values[MAX_VARS];
    MPI_T_cvar_get_num(&ncvars);
    for (int i = 0; i < ncvars && n < MAX_VARS; i++) {
        char name[256];
        int name_len = sizeof(name), verbosity, bind, scope;
        MPI_Datatype type;
        MPI_T_enum enumtype;
        MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &type, &enumtype, NULL, NULL, &bind,
                            &scope);
        if (scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_CONSTANT)
            continue;
        MPI_T_cvar_handle_alloc(i, NULL, &handles[n], &count);
        MPI_T_cvar_read(handles[n], &values[n]);
        n++;
    }
    MTEST_CHECK(n >= 3, "only %d writable control variables", n);
    /* No MTEST_CHECK in the loop: its lock would order these writes before the main
     * thread's reads, and ThreadSanitizer would see no race to report. */
    int writes = 0, failed = 0;
    while (!atomic_load_explicit(&stop, memory_order_relaxed) || writes < 100) {
        for (int i = 0; i < n; i++)
            failed += MPI_T_cvar_write(handles[i], &values[i]) != MPI_SUCCESS;
        writes++;
    }
    MTEST_CHECK(failed == 0, "%d writes failed", failed);
    for (int i = 0; i < n; i++)
        MPI_T_cvar_handle_free(&handles[i]);
    return NULL;
}

int main(int argc, char **argv)
{
    mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    int provided;
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided); /* for the tool thread */
    pthread_t thread;
    pthread_create(&thread, NULL, tool, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* sizes from one item to the point-to-point algorithms' range, where the choice is read */
    static const int sizes[] = {1, 300, 3000, 20000, 70000};
    static double in[70000 * 4], out[70000 * 4];
    for (int i = 0; i < 40; i++) {
        int n = sizes[i % 5], part = n / 4 > 0 ? n / 4 : 1;
        for (int k = 0; k < n; k++)
            in[k] = rank + k;
        MPI_Bcast(in, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MTEST_CHECK(in[n - 1] == n - 1, "round %d: broadcast %g", i, in[n - 1]);
        for (int k = 0; k < n; k++)
            in[k] = rank + k;
        MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MTEST_CHECK(out[n - 1] == size * (size - 1) / 2.0 + size * (n - 1.0),
                    "round %d: allreduce %g", i, out[n - 1]);
        MPI_Reduce(in, out, n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        MPI_Allgather(in, part, MPI_DOUBLE, out, part, MPI_DOUBLE, MPI_COMM_WORLD);
        MTEST_CHECK(out[(size - 1) * part] == size - 1, "round %d: allgather %g", i,
                    out[(size - 1) * part]);
        MPI_Alltoall(in, part / size > 0 ? part / size : 1, MPI_DOUBLE, out,
                     part / size > 0 ? part / size : 1, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Gather(in, part, MPI_DOUBLE, out, part, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Scatter(in, part / size > 0 ? part / size : 1, MPI_DOUBLE, out,
                    part / size > 0 ? part / size : 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Scan(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MTEST_CHECK(out[0] == rank * (rank + 1) / 2.0, "round %d: scan %g", i, out[0]);
        /* zero counts take the generic algorithms, chosen at each call */
        MPI_Allgather(in, 0, MPI_DOUBLE, out, 0, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Alltoall(in, 0, MPI_DOUBLE, out, 0, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Allreduce(in, out, 0, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    atomic_store_explicit(&stop, 1, memory_order_relaxed);
    pthread_join(thread, NULL);
    MPI_T_finalize();
    return mtest_finalize(0);
}
