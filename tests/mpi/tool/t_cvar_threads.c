/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tool thread writes the collective algorithm control variables (as manifold_tune does)
 * while the main thread runs collectives that read them at every call. Each write stores the
 * value the variable already has, so every process keeps choosing alike; under
 * ThreadSanitizer the write and the reads must not race (the reads were plain loads).
 */
#include "mtest.h"

#include <pthread.h>
#include <stdatomic.h>

static atomic_int stop;
static const char *const names[] = {"MANIFOLD_COLL_ALLREDUCE", "MANIFOLD_COLL_BCAST",
                                    "MANIFOLD_VCI_STATS"};
#define NVARS ((int)(sizeof(names) / sizeof(names[0])))

static void *tool(void *arg)
{
    (void)arg;
    int provided, count;
    MPI_T_cvar_handle handles[NVARS];
    int values[NVARS];
    MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided);
    for (int i = 0; i < NVARS; i++) {
        int index = -1;
        MTEST_CHECK(MPI_T_cvar_get_index(names[i], &index) == MPI_SUCCESS, "no cvar %s", names[i]);
        MPI_T_cvar_handle_alloc(index, NULL, &handles[i], &count);
        MPI_T_cvar_read(handles[i], &values[i]);
    }
    int writes = 0;
    while (!atomic_load(&stop) || writes < 100) {
        for (int i = 0; i < NVARS; i++) {
            int rc = MPI_T_cvar_write(handles[i], &values[i]);
            MTEST_CHECK(rc == MPI_SUCCESS, "MPI_T_cvar_write(%s): %d", names[i], rc);
        }
        writes++;
    }
    for (int i = 0; i < NVARS; i++)
        MPI_T_cvar_handle_free(&handles[i]);
    MPI_T_finalize();
    return NULL;
}

int main(int argc, char **argv)
{
    mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    pthread_t thread;
    pthread_create(&thread, NULL, tool, NULL);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i < 300; i++) {
        int in[64], out[64];
        for (int k = 0; k < 64; k++)
            in[k] = rank + i + k;
        MPI_Allreduce(in, out, 64, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MTEST_CHECK(out[5] == size * (size - 1) / 2 + size * (i + 5), "round %d: sum %d", i,
                    out[5]);
        int b = rank == 0 ? i : -1;
        MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD);
        MTEST_CHECK(b == i, "round %d: broadcast %d", i, b);
    }
    atomic_store(&stop, 1);
    pthread_join(thread, NULL);
    return mtest_finalize(0);
}
