/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicator creation and destruction from several threads at once. The main thread dups
 * one parent communicator per thread; each thread then loops MPI_Comm_dup of its parent,
 * a ring exchange on the new communicator, now and then a nested dup of the new communicator
 * or an MPI_Comm_split of it, and MPI_Comm_free. Concurrent creation must hand out distinct
 * contexts (messages checked for cross-talk: all threads use the same tag), the new
 * communicators must be congruent to their parents, and MPI_Comm_free must reset the handle.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define ITERATIONS 100
#define COUNT      8

struct thread_arg {
    int id;
    MPI_Comm parent;
};

/* Ring exchange with the same tag in every thread; the payload names the thread and round. */
static void exchange(MPI_Comm comm, int id, int it, const char *what)
{
    uint32_t sbuf[COUNT], rbuf[COUNT];
    int rank, size, right, left;
    MPI_Status status;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    mt_fill(sbuf, COUNT, rank, id, it);
    MPI_Sendrecv(sbuf, COUNT, MPI_UINT32_T, right, 0, rbuf, COUNT, MPI_UINT32_T, left, 0, comm,
                 &status);
    MTEST_CHECK(status.MPI_SOURCE == left, "%s: thread %d source %d, expected %d", what, id,
                status.MPI_SOURCE, left);
    MTEST_CHECK(mt_verify(rbuf, COUNT, left, id, it) < 0,
                "%s: thread %d iteration %d got another thread's message", what, id, it);
}

static void free_and_check(MPI_Comm *comm, int id, const char *what)
{
    int rc = MPI_Comm_free(comm);

    MTEST_CHECK(rc == MPI_SUCCESS && *comm == MPI_COMM_NULL, "thread %d: freeing %s: rc %d", id,
                what, rc);
}

static void *thread_main(void *arg)
{
    const struct thread_arg *a = arg;
    int prank;

    MPI_Comm_rank(a->parent, &prank);
    for (int it = 0; it < ITERATIONS; it++) {
        MPI_Comm dup = MPI_COMM_NULL, nested = MPI_COMM_NULL;
        int rc = MPI_Comm_dup(a->parent, &dup), result = -1;

        MTEST_CHECK(rc == MPI_SUCCESS && dup != MPI_COMM_NULL, "thread %d: dup failed", a->id);
        if (rc != MPI_SUCCESS)
            break;
        MPI_Comm_compare(dup, a->parent, &result);
        MTEST_CHECK(result == MPI_CONGRUENT, "thread %d: dup compares as %d", a->id, result);
        exchange(dup, a->id, it, "dup");

        if (it % 4 == 1) {
            rc = MPI_Comm_dup(dup, &nested);
            MTEST_CHECK(rc == MPI_SUCCESS, "thread %d: nested dup failed", a->id);
            if (rc == MPI_SUCCESS) {
                exchange(nested, a->id, it, "nested dup");
                free_and_check(&nested, a->id, "nested dup");
            }
        } else if (it % 4 == 3) {
            /* Reversed ranks: still congruent in membership, but the order changed. */
            int size, nrank = -1;

            MPI_Comm_size(dup, &size);
            rc = MPI_Comm_split(dup, 0, size - prank, &nested);
            MTEST_CHECK(rc == MPI_SUCCESS, "thread %d: split failed", a->id);
            if (rc == MPI_SUCCESS) {
                MPI_Comm_rank(nested, &nrank);
                MTEST_CHECK(nrank == size - 1 - prank, "thread %d: split rank %d", a->id, nrank);
                exchange(nested, a->id, it, "split");
                free_and_check(&nested, a->id, "split");
            }
        }
        exchange(dup, a->id, it + ITERATIONS, "dup after nested");
        free_and_check(&dup, a->id, "dup");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    struct thread_arg args[MT_MAX_THREADS];
    int nthreads;

    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    nthreads = mt_nthreads(4, 1);
    for (int t = 0; t < nthreads; t++) {
        args[t].id = t;
        if (MPI_Comm_dup(MPI_COMM_WORLD, &args[t].parent) != MPI_SUCCESS) {
            fprintf(stderr, "MPI_Comm_dup failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    mt_run(nthreads, thread_main, args, sizeof(args[0]));
    for (int t = 0; t < nthreads; t++)
        free_and_check(&args[t].parent, t, "parent");
    return mtest_finalize(0);
}
