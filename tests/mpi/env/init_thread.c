/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Init_thread at the level named by the environment variable MTEST_THREAD_LEVEL
 * (single, funneled, serialized or multiple; multiple when unset): the provided level must
 * be the required one (the levels are ordered, and every level is supported: "if possible,
 * the call will return provided = required", MPI-4.1 11.2.1; it used to be
 * MPI_THREAD_MULTIPLE whatever was asked, and FFTW's MPI tests failed), MPI_Query_thread must
 * agree, and MPI_Is_thread_main must be true on the main thread and, where other threads may
 * call MPI (serialized, multiple), false on another thread.
 */
#include "mtest.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int thread_main_flag = -1;

static void *query_from_thread(void *arg)
{
    MPI_Is_thread_main(&thread_main_flag);
    return NULL;
}

static int required_level(void)
{
    const char *name = getenv("MTEST_THREAD_LEVEL");

    if (name == NULL || strcmp(name, "multiple") == 0) {
        return MPI_THREAD_MULTIPLE;
    }
    if (strcmp(name, "single") == 0) {
        return MPI_THREAD_SINGLE;
    }
    if (strcmp(name, "funneled") == 0) {
        return MPI_THREAD_FUNNELED;
    }
    if (strcmp(name, "serialized") == 0) {
        return MPI_THREAD_SERIALIZED;
    }
    MTEST_CHECK(0, "unknown MTEST_THREAD_LEVEL '%s'", name);
    return MPI_THREAD_MULTIPLE;
}

static void check_other_thread(void)
{
    pthread_t thread;

    if (!MTEST_CHECK(pthread_create(&thread, NULL, query_from_thread, NULL) == 0,
                     "pthread_create failed")) {
        return;
    }
    pthread_join(thread, NULL);
    MTEST_CHECK(thread_main_flag == 0, "MPI_Is_thread_main on another thread gave %d",
                thread_main_flag);
}

int main(int argc, char **argv)
{
    int required = required_level();
    int provided, queried = -1, is_main = -1;

    MTEST_CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED &&
                    MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
                    MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE,
                "thread level constants are not ordered");

    provided = mtest_init_thread(&argc, &argv, required);

    MTEST_CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
                    provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE,
                "provided level %d is not a thread level", provided);
    MTEST_CHECK(provided == required, "required %d, provided %d", required, provided);
    MPI_Query_thread(&queried);
    MTEST_CHECK(queried == provided, "MPI_Query_thread gave %d, MPI_Init_thread %d", queried,
                provided);
    MPI_Is_thread_main(&is_main);
    MTEST_CHECK(is_main == 1, "MPI_Is_thread_main on the main thread gave %d", is_main);
    if (provided >= MPI_THREAD_SERIALIZED) {
        check_other_thread();
    }
    return mtest_finalize(0);
}
