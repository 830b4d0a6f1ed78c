/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attributes under MPI_THREAD_MULTIPLE: in each round every thread sets the same new keyvals
 * on its own communicator (one keyval first used by several threads at once), sets keyvals of
 * its own on one shared communicator, reads them back and deletes half of them. Every
 * attribute must read back with its thread's value, and every value set must reach exactly
 * one delete callback (at MPI_Comm_delete_attr or at MPI_Comm_free).
 */
#define _POSIX_C_SOURCE 200809L

#include <stdatomic.h>

#include "mt_common.h"

#define ROUNDS    40
#define PER_ROUND 8 /* keyvals set per round by each thread, on each communicator */

struct thread_arg {
    int id;
    MPI_Comm own;
};

static MPI_Comm shared;
static int round_keyvals[ROUNDS * PER_ROUND];
static atomic_int sets, deletions;

static int count_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    atomic_fetch_add(&deletions, 1);
    return MPI_SUCCESS;
}

static void *value_of(int id, int n)
{
    return (void *)(intptr_t)(id * 1000000 + n + 1);
}

static int check_value(MPI_Comm comm, int keyval, void *want, const char *where, int id)
{
    void *got = NULL;
    int flag = 0;

    MPI_Comm_get_attr(comm, keyval, &got, &flag);
    return MTEST_CHECK(flag && got == want, "thread %d: %s attribute %s (%ld, expected %ld)", id,
                       where, flag ? "wrong" : "missing", (long)(intptr_t)got,
                       (long)(intptr_t)want);
}

static void *thread_main(void *arg)
{
    const struct thread_arg *a = arg;
    int mine[PER_ROUND], ok = 1;

    for (int r = 0; r < ROUNDS && ok; r++) {
        for (int k = 0; k < PER_ROUND; k++) {
            int n = r * PER_ROUND + k;
            MPI_Comm_set_attr(a->own, round_keyvals[n], value_of(a->id, n));
            MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &mine[k], NULL);
            MPI_Comm_set_attr(shared, mine[k], value_of(a->id, n));
            atomic_fetch_add(&sets, 2);
        }
        for (int k = 0; k < PER_ROUND && ok; k++) {
            int n = r * PER_ROUND + k;
            ok = check_value(a->own, round_keyvals[n], value_of(a->id, n), "own", a->id) &&
                 check_value(shared, mine[k], value_of(a->id, n), "shared", a->id);
            if (k % 2 == 0)
                MPI_Comm_delete_attr(shared, mine[k]);
            MPI_Comm_free_keyval(&mine[k]);
        }
    }
    for (int n = 0; n < ROUNDS * PER_ROUND && ok; n++)
        ok = check_value(a->own, round_keyvals[n], value_of(a->id, n), "own (at the end)", a->id);
    return NULL;
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];
    int nthreads = mt_nthreads(4, 1);

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_dup(MPI_COMM_WORLD, &shared);
    for (int n = 0; n < ROUNDS * PER_ROUND; n++)
        MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, count_delete, &round_keyvals[n], NULL);
    for (int i = 0; i < nthreads; i++) {
        args[i].id = i;
        MPI_Comm_dup(MPI_COMM_WORLD, &args[i].own);
    }
    mt_run(nthreads, thread_main, args, sizeof(args[0]));
    for (int i = 0; i < nthreads; i++)
        MPI_Comm_free(&args[i].own);
    MPI_Comm_free(&shared);
    for (int n = 0; n < ROUNDS * PER_ROUND; n++)
        MPI_Comm_free_keyval(&round_keyvals[n]);
    MTEST_CHECK(atomic_load(&deletions) == atomic_load(&sets), "%d values set, %d delete callbacks",
                atomic_load(&sets), atomic_load(&deletions));
    return mtest_finalize(0);
}
