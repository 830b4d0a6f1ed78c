/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An error handler replaced while other threads raise errors on the same communicator: thread 0
 * creates a handler, sets it on the communicator and frees its handle, over and over (so each
 * set drops the communicator's last reference on the previous handler), while the other
 * threads make failing calls on it (MPI_Send to a rank that does not exist). Every error must
 * reach one of the handlers, never a handler already freed (the sanitizer builds catch the read
 * after free of the old race between loading the communicator's handler and taking a reference
 * on it); every handler call sees the communicator and the error class.
 */
#include <stdatomic.h>

#include "mt_common.h"

#define SWAPS 2000

static MPI_Comm comm;
static atomic_int stop, calls, wrong;

static void handler_even(MPI_Comm *c, int *code, ...)
{
    int cls;
    MPI_Error_class(*code, &cls);
    if (*c != comm || cls != MPI_ERR_RANK)
        atomic_fetch_add(&wrong, 1);
    atomic_fetch_add(&calls, 1);
}

static void handler_odd(MPI_Comm *c, int *code, ...)
{
    handler_even(c, code);
}

struct thread_arg {
    int id;
};

static void *thread_main(void *arg)
{
    const struct thread_arg *a = arg;
    int x = 0;

    if (a->id == 0) {
        for (int i = 0; i < SWAPS; i++) {
            MPI_Errhandler eh;
            MPI_Comm_create_errhandler(i % 2 ? handler_odd : handler_even, &eh);
            MPI_Comm_set_errhandler(comm, eh);
            MPI_Errhandler_free(&eh);
        }
        atomic_store(&stop, 1);
        return NULL;
    }
    while (!atomic_load(&stop))
        MPI_Send(&x, 1, MPI_INT, 1000000, 0, comm);
    return NULL;
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];
    int nthreads = mt_nthreads(4, 2);

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int i = 0; i < nthreads; i++)
        args[i].id = i;
    mt_run(nthreads, thread_main, args, sizeof(args[0]));
    MTEST_CHECK(atomic_load(&wrong) == 0,
                "%d of %d handler calls saw another communicator or class", atomic_load(&wrong),
                atomic_load(&calls));
    /* one more failing call: the last handler set is still the communicator's */
    int before = atomic_load(&calls), x = 0;
    MPI_Send(&x, 1, MPI_INT, 1000000, 0, comm);
    MTEST_CHECK(atomic_load(&calls) == before + 1, "the last handler set was not called");
    MPI_Comm_free(&comm);
    return mtest_finalize(0);
}
