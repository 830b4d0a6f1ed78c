/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Thread-level queries from several threads. MPI_Init_thread must provide
 * MPI_THREAD_MULTIPLE; MPI_Query_thread must say so from every thread; MPI_Is_thread_main must
 * be true only on the thread that initialised MPI; and local calls made concurrently
 * (MPI_Initialized, MPI_Comm_rank/size, MPI_Wtime, MPI_Get_processor_name) must give the same
 * answers as on the main thread. Every thread then does a self send and receive on
 * MPI_COMM_SELF with its own tag.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define REPEAT 200

struct thread_arg {
    int id;
    int rank;
    int size;
    const char *name;
};

static void *thread_main(void *arg)
{
    const struct thread_arg *a = arg;
    char name[MPI_MAX_PROCESSOR_NAME];
    double last = MPI_Wtime();

    for (int i = 0; i < REPEAT; i++) {
        int level = -1, is_main = -1, flag = 0, rank = -1, size = -1, len = -1;
        uint32_t out = mt_pattern(a->rank, a->id, i, 0), in = 0;
        double now;

        MPI_Query_thread(&level);
        MTEST_CHECK(level == MPI_THREAD_MULTIPLE, "thread %d: query gives %d", a->id, level);
        MPI_Is_thread_main(&is_main);
        MTEST_CHECK(is_main == 0, "thread %d: MPI_Is_thread_main says %d", a->id, is_main);
        MPI_Initialized(&flag);
        MTEST_CHECK(flag == 1, "thread %d: MPI_Initialized says %d", a->id, flag);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        MTEST_CHECK(rank == a->rank && size == a->size, "thread %d: rank %d size %d", a->id, rank,
                    size);
        now = MPI_Wtime();
        MTEST_CHECK(now >= last, "thread %d: MPI_Wtime went back", a->id);
        last = now;
        MPI_Get_processor_name(name, &len);
        MTEST_CHECK(len == (int)strlen(a->name) && strcmp(name, a->name) == 0,
                    "thread %d: processor name '%s'", a->id, name);
        MPI_Sendrecv(&out, 1, MPI_UINT32_T, 0, a->id, &in, 1, MPI_UINT32_T, 0, a->id, MPI_COMM_SELF,
                     MPI_STATUS_IGNORE);
        MTEST_CHECK(in == out, "thread %d: self message wrong", a->id);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];
    char name[MPI_MAX_PROCESSOR_NAME];
    int rank, size, nthreads, level = -1, is_main = 0, len = 0;

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Query_thread(&level);
    MTEST_CHECK(level == MPI_THREAD_MULTIPLE, "main: MPI_Query_thread gives %d", level);
    MPI_Is_thread_main(&is_main);
    MTEST_CHECK(is_main == 1, "main: MPI_Is_thread_main says %d", is_main);
    MPI_Get_processor_name(name, &len);

    nthreads = mt_nthreads(4, 1);
    for (int t = 0; t < nthreads; t++)
        args[t] = (struct thread_arg){t, rank, size, name};
    mt_run(nthreads, thread_main, args, sizeof(args[0]));

    is_main = 0;
    MPI_Is_thread_main(&is_main);
    MTEST_CHECK(is_main == 1, "main after the threads: MPI_Is_thread_main says %d", is_main);
    return mtest_finalize(0);
}
