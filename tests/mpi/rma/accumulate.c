/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Atomic RMA operations, all ranks at once on one target. In a fence epoch and again in a
 * lock_all epoch: MPI_Accumulate with MPI_SUM on int, double and long long, MPI_MAX and
 * MPI_REPLACE onto rank 0 (final values exact; each replaced element comes from one origin).
 * MPI_Get_accumulate with MPI_SUM: the old values fetched by all ranks, sorted, chain from 0 by
 * the added amounts up to the final value; MPI_Get_accumulate and MPI_Fetch_and_op with
 * MPI_NO_OP read the final value. MPI_Fetch_and_op as a shared counter: the N*K fetched values
 * are exactly 0..N*K-1. MPI_Compare_and_swap as a spin lock protecting a non-atomic
 * MPI_Get / increment / MPI_Put of a counter on the last rank: it ends at N*K.
 */
#include "mtest.h"

#include <stddef.h>
#include <stdlib.h>

#define REPS 10
#define K    8

struct target {
    int isum;
    int imax;
    long long llsum;
    double dsum;
    int repl[4];
    int gacc;   /* MPI_Get_accumulate counter */
    int fop;    /* MPI_Fetch_and_op counter */
    int lock;   /* MPI_Compare_and_swap lock word */
    int shared; /* counter behind the lock (used on the last rank) */
};

#define DISP(field) ((MPI_Aint)offsetof(struct target, field))

static int rank, nprocs;

static int max_value(int r)
{
    return (r * 37) % 23 - 11;
}

static void accumulate_all(MPI_Win win)
{
    int one = rank + 1, mx = max_value(rank), repl[4];
    long long ll = (1LL << 40) + rank;
    double d = rank + 0.5;

    for (int i = 0; i < 4; i++)
        repl[i] = 10 * rank + i;
    for (int r = 0; r < REPS; r++) {
        MPI_Accumulate(&one, 1, MPI_INT, 0, DISP(isum), 1, MPI_INT, MPI_SUM, win);
        MPI_Accumulate(&ll, 1, MPI_LONG_LONG, 0, DISP(llsum), 1, MPI_LONG_LONG, MPI_SUM, win);
        MPI_Accumulate(&d, 1, MPI_DOUBLE, 0, DISP(dsum), 1, MPI_DOUBLE, MPI_SUM, win);
        MPI_Accumulate(&mx, 1, MPI_INT, 0, DISP(imax), 1, MPI_INT, MPI_MAX, win);
        MPI_Accumulate(repl, 4, MPI_INT, 0, DISP(repl), 4, MPI_INT, MPI_REPLACE, win);
    }
}

static void check_accumulated(const struct target *t, const char *what)
{
    long long n = nprocs, want_ll = REPS * (n * (1LL << 40) + n * (n - 1) / 2);
    int want_max = -1000;
    for (int r = 0; r < nprocs; r++)
        want_max = max_value(r) > want_max ? max_value(r) : want_max;
    MTEST_CHECK(t->isum == REPS * nprocs * (nprocs + 1) / 2, "%s: int sum %d", what, t->isum);
    MTEST_CHECK(t->llsum == want_ll, "%s: long long sum %lld, expected %lld", what, t->llsum,
                want_ll);
    MTEST_CHECK(t->dsum == REPS * (n * n / 2.0), "%s: double sum %g", what, t->dsum);
    MTEST_CHECK(t->imax == want_max, "%s: max %d, expected %d", what, t->imax, want_max);
    for (int i = 0; i < 4; i++)
        MTEST_CHECK(t->repl[i] % 10 == i && t->repl[i] / 10 >= 0 && t->repl[i] / 10 < nprocs,
                    "%s: replaced element %d is %d", what, i, t->repl[i]);
}

static void reset(struct target *t)
{
    *t = (struct target){.imax = -1000, .repl = {-1, -1, -1, -1}};
}

static int cmp_int(const void *a, const void *b)
{
    return *(const int *)a - *(const int *)b;
}

/* The fetched (old, added) pairs of every rank, collected on rank 0 by point-to-point. */
static void check_fetched(const int *pairs, int npairs, int final, int exact_unit)
{
    int total = npairs * nprocs;
    int *all = mtest_calloc((size_t)total * 2, sizeof(int));
    if (rank != 0) {
        MPI_Send(pairs, 2 * npairs, MPI_INT, 0, 1, MPI_COMM_WORLD);
        free(all);
        return;
    }
    for (int i = 0; i < 2 * npairs; i++)
        all[i] = pairs[i];
    for (int r = 1; r < nprocs; r++)
        MPI_Recv(all + 2 * npairs * r, 2 * npairs, MPI_INT, r, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    qsort(all, (size_t)total, 2 * sizeof(int), cmp_int);
    int expect = 0;
    for (int i = 0; i < total; i++) {
        if (!MTEST_CHECK(all[2 * i] == expect, "fetched value %d is %d, expected %d", i, all[2 * i],
                         expect))
            break;
        MTEST_CHECK(!exact_unit || all[2 * i + 1] == 1, "added %d", all[2 * i + 1]);
        expect += all[2 * i + 1];
    }
    MTEST_CHECK(expect == final, "fetched values chain to %d, final value %d", expect, final);
    free(all);
}

int main(int argc, char **argv)
{
    struct target *t;
    MPI_Win win;
    int last;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    last = nprocs - 1;
    MPI_Win_allocate(sizeof(*t), 1, MPI_INFO_NULL, MPI_COMM_WORLD, &t, &win);
    reset(t);

    /* fence epoch */
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    accumulate_all(win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == 0)
        check_accumulated(t, "fence");

    /* lock_all epoch: rank 0 resets its window under a lock on itself first */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    reset(t);
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    accumulate_all(win);
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* MPI_Get_accumulate: add rank + 1 K times, fetching the old values */
    int pairs[2 * K], add = rank + 1;
    for (int k = 0; k < K; k++) {
        pairs[2 * k + 1] = add;
        MPI_Get_accumulate(&add, 1, MPI_INT, &pairs[2 * k], 1, MPI_INT, 0, DISP(gacc), 1, MPI_INT,
                           MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    /* MPI_Fetch_and_op: a shared counter on the last rank */
    int fetched[2 * K], inc = 1;
    for (int k = 0; k < K; k++) {
        fetched[2 * k + 1] = 1;
        MPI_Fetch_and_op(&inc, &fetched[2 * k], MPI_INT, last, DISP(fop), MPI_SUM, win);
        MPI_Win_flush(last, win);
    }
    /* MPI_Compare_and_swap spin lock on rank 0 around a Get/Put increment on the last rank */
    for (int k = 0; k < K; k++) {
        int zero = 0, me = rank + 1, old = -1, value = -1;
        do {
            MPI_Compare_and_swap(&me, &zero, &old, MPI_INT, 0, DISP(lock), win);
            MPI_Win_flush(0, win);
        } while (old != 0);
        MPI_Get(&value, 1, MPI_INT, last, DISP(shared), 1, MPI_INT, win);
        MPI_Win_flush(last, win);
        value++;
        MPI_Put(&value, 1, MPI_INT, last, DISP(shared), 1, MPI_INT, win);
        MPI_Win_flush(last, win);
        MPI_Compare_and_swap(&zero, &me, &old, MPI_INT, 0, DISP(lock), win);
        MPI_Win_flush(0, win);
        MTEST_CHECK(old == me, "lock word was %d while held by %d", old, me);
    }
    MPI_Win_flush_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* atomic reads with MPI_NO_OP */
    int gacc = -1, fop = -1, shared = -1, lockword = -1;
    MPI_Get_accumulate(NULL, 0, MPI_INT, &gacc, 1, MPI_INT, 0, DISP(gacc), 1, MPI_INT, MPI_NO_OP,
                       win);
    MPI_Fetch_and_op(NULL, &fop, MPI_INT, last, DISP(fop), MPI_NO_OP, win);
    MPI_Fetch_and_op(NULL, &shared, MPI_INT, last, DISP(shared), MPI_NO_OP, win);
    MPI_Fetch_and_op(NULL, &lockword, MPI_INT, 0, DISP(lock), MPI_NO_OP, win);
    MPI_Win_unlock_all(win);
    MTEST_CHECK(gacc == K * nprocs * (nprocs + 1) / 2, "MPI_Get_accumulate counter %d", gacc);
    MTEST_CHECK(fop == K * nprocs, "MPI_Fetch_and_op counter %d", fop);
    MTEST_CHECK(shared == K * nprocs, "counter behind the lock %d, expected %d", shared,
                K * nprocs);
    MTEST_CHECK(lockword == 0, "lock word left at %d", lockword);
    check_fetched(pairs, K, gacc, 0);
    check_fetched(fetched, K, fop, 1);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        check_accumulated(t, "lock_all");
        MPI_Win_unlock(0, win);
    }
    MPI_Win_free(&win);
    return mtest_finalize(0);
}
