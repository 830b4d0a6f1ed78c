/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Intercomm_merge, and MPI_Comm_split / MPI_Comm_create on an intercommunicator between
 * the halves of MPI_COMM_WORLD. Merge with the upper half high orders the lower half first,
 * with the lower half high the upper half first; the merged communicator carries a ring and an
 * allreduce. Split by parity of the world rank gives, on both sides, the intercommunicator of
 * the same colour (MPI_COMM_NULL for MPI_UNDEFINED or a colour absent on the other side), its
 * groups ordered by key (reversed here). Comm_create with the local group's first process
 * gives an intercommunicator between the two leaders.
 */
#include "mtest.h"

static void check_merged(MPI_Comm merged, int expect_rank, int wsize, const char *what)
{
    int rank, size, sum = 0, one = 1, got = -1;
    MPI_Comm_rank(merged, &rank);
    MPI_Comm_size(merged, &size);
    MTEST_CHECK(size == wsize && rank == expect_rank, "%s: rank %d of %d, expected %d", what, rank,
                size, expect_rank);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    MTEST_CHECK(sum == wsize, "%s: allreduce %d", what, sum);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 9, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 9, merged, MPI_STATUS_IGNORE);
    MTEST_CHECK(got == (rank + size - 1) % size, "%s: ring got %d", what, got);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int half = (wsize + 1) / 2, low = wrank < half;
    MPI_Comm local, inter, merged;
    MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 11, &inter);
    int lrank, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_remote_size(inter, &rsize);

    MPI_Intercomm_merge(inter, !low, &merged);
    check_merged(merged, wrank, wsize, "merge upper high");
    MPI_Comm_free(&merged);
    MPI_Intercomm_merge(inter, low, &merged);
    check_merged(merged, low ? wsize - half + lrank : lrank, wsize, "merge lower high");
    MPI_Comm_free(&merged);

    /* Split: colour = world parity (MPI_UNDEFINED for world rank 1), key = -world rank. */
    int color = wrank == 1 ? MPI_UNDEFINED : wrank % 2;
    MPI_Comm sub;
    MPI_Comm_split(inter, color, -wrank, &sub);
    int local_n = 0, remote_n = 0, my_pos = 0;
    for (int w = 0; w < wsize; w++) {
        int c = w == 1 ? MPI_UNDEFINED : w % 2;
        if (c != color || color == MPI_UNDEFINED)
            continue;
        if ((w < half) == low) {
            local_n++;
            my_pos += w > wrank; /* reversed key: higher world ranks come first */
        } else {
            remote_n++;
        }
    }
    if (color == MPI_UNDEFINED || remote_n == 0) {
        MTEST_CHECK(sub == MPI_COMM_NULL, "split: expected MPI_COMM_NULL (colour %d)", color);
    } else if (MTEST_CHECK(sub != MPI_COMM_NULL, "split: no communicator for colour %d", color)) {
        int flag = 0, n, r, rn;
        MPI_Comm_test_inter(sub, &flag);
        MPI_Comm_size(sub, &n);
        MPI_Comm_rank(sub, &r);
        MPI_Comm_remote_size(sub, &rn);
        MTEST_CHECK(flag && n == local_n && rn == remote_n && r == my_pos,
                    "split: inter %d size %d/%d remote %d/%d rank %d/%d", flag, n, local_n, rn,
                    remote_n, r, my_pos);
        /* Rank 0 of each side swaps world ranks: the highest of the colour on each side. */
        if (r == 0) {
            int got = -1;
            MPI_Sendrecv(&wrank, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, sub, MPI_STATUS_IGNORE);
            int expect = -1;
            for (int w = 0; w < wsize; w++) {
                int c = w == 1 ? MPI_UNDEFINED : w % 2;
                if (c == color && (w < half) != low)
                    expect = w;
            }
            MTEST_CHECK(got == expect, "split: remote leader is world %d, expected %d", got,
                        expect);
        }
        MPI_Comm_free(&sub);
    }

    /* Comm_create with each side's first process: an intercommunicator of the two leaders. */
    MPI_Group lg, first;
    int zero = 0;
    MPI_Comm_group(inter, &lg);
    MPI_Group_incl(lg, 1, &zero, &first);
    MPI_Comm_create(inter, first, &sub);
    if (lrank == 0 && MTEST_CHECK(sub != MPI_COMM_NULL, "create: leader got no communicator")) {
        int n = 0, rn = 0, got = -1;
        MPI_Comm_size(sub, &n);
        MPI_Comm_remote_size(sub, &rn);
        MTEST_CHECK(n == 1 && rn == 1, "create: sizes %d %d", n, rn);
        MPI_Sendrecv(&wrank, 1, MPI_INT, 0, 2, &got, 1, MPI_INT, 0, 2, sub, MPI_STATUS_IGNORE);
        MTEST_CHECK(got == (low ? half : 0), "create: got %d", got);
        MPI_Comm_free(&sub);
    } else if (lrank != 0) {
        MTEST_CHECK(sub == MPI_COMM_NULL, "create: non-member got a communicator");
    }
    MPI_Group_free(&first);
    MPI_Group_free(&lg);
    (void)rsize;

    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mtest_finalize(0);
}
