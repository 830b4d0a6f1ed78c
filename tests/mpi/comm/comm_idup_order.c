/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_idup is non-blocking: processes may start idups of different communicators in
 * different orders (here even ranks dup A then B, odd ranks B then A) and complete them
 * together with MPI_Waitall; many idups of one communicator may be outstanding at once; an
 * idup may overlap a non-blocking collective on its parent; idup of an intercommunicator, and
 * of two intercommunicators in opposite orders by group. Each new communicator must then work
 * and be isolated from the others.
 */
#include <stdlib.h>

#include "mtest.h"

#define MANY 16

/* An allreduce and a ring exchange on `comm`, tagged with `salt`. */
static void check_comm(MPI_Comm comm, int salt, const char *what)
{
    int rank, size, sum = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    MTEST_CHECK(sum == size * (size - 1) / 2, "%s: allreduce %d", what, sum);
    int out = salt * 100 + rank, in = -1;
    MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, salt, &in, 1, MPI_INT,
                 (rank - 1 + size) % size, salt, comm, MPI_STATUS_IGNORE);
    MTEST_CHECK(in == salt * 100 + (rank - 1 + size) % size, "%s: ring got %d", what, in);
}

/* On an intercommunicator between world ranks [0, half) and [half, wsize): every process
 * exchanges with the remote process of its local rank (modulo the remote size), then an
 * allreduce sums the remote group's world ranks and a barrier closes. */
static void check_inter(MPI_Comm comm, int wrank, int low, int half, int wsize, int salt,
                        const char *what)
{
    int lrank, lsize, rsize;
    MPI_Comm_rank(comm, &lrank);
    MPI_Comm_size(comm, &lsize);
    MPI_Comm_remote_size(comm, &rsize);
    int rbase = low ? half : 0;
    MTEST_CHECK(lsize == (low ? half : wsize - half) && rsize == (low ? wsize - half : half),
                "%s: sizes %d %d", what, lsize, rsize);
    /* Local rank r sends to remote r % rsize; it hears from every remote s with s % lsize == r. */
    int out = salt * 1000 + wrank, in = -1;
    MPI_Request rq[2];
    int n = 0;
    MPI_Isend(&out, 1, MPI_INT, lrank % rsize, salt, comm, &rq[n++]);
    for (int s = lrank; s < rsize; s += lsize) {
        MPI_Recv(&in, 1, MPI_INT, s, salt, comm, MPI_STATUS_IGNORE);
        MTEST_CHECK(in == salt * 1000 + rbase + s, "%s: from remote %d got %d", what, s, in);
    }
    MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
    int sum = -1, expect = 0;
    for (int s = 0; s < rsize; s++)
        expect += rbase + s;
    MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, comm);
    MTEST_CHECK(sum == expect, "%s: allreduce %d, expected %d", what, sum, expect);
    MPI_Barrier(comm);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);

    /* 1: opposite orders on two parents. */
    MPI_Comm a, b, na = MPI_COMM_NULL, nb = MPI_COMM_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Request reqs[MANY + 1];
    if (wrank % 2 == 0) {
        MPI_Comm_idup(a, &na, &reqs[0]);
        MPI_Comm_idup(b, &nb, &reqs[1]);
    } else {
        MPI_Comm_idup(b, &nb, &reqs[1]);
        MPI_Comm_idup(a, &na, &reqs[0]);
    }
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    check_comm(na, 1, "idup of a");
    check_comm(nb, 2, "idup of b");
    int cmp;
    MPI_Comm_compare(na, a, &cmp);
    MTEST_CHECK(cmp == MPI_CONGRUENT, "idup of a compares %d to a", cmp);
    /* Isolation: a message on na is not received on nb. */
    if (wsize > 1) {
        int v = 7, flag = 1;
        if (wrank == 0)
            MPI_Send(&v, 1, MPI_INT, 1, 5, na);
        MPI_Barrier(MPI_COMM_WORLD);
        if (wrank == 1) {
            MPI_Iprobe(0, 5, nb, &flag, MPI_STATUS_IGNORE);
            MTEST_CHECK(!flag, "a message sent on idup(a) is visible on idup(b)");
            MPI_Recv(&v, 1, MPI_INT, 0, 5, na, MPI_STATUS_IGNORE);
        }
    }
    MPI_Comm_free(&na);
    MPI_Comm_free(&nb);

    /* 2: many outstanding idups of one communicator, overlapping an Iallreduce on it, completed
     * in reverse order by rank parity. */
    MPI_Comm many[MANY];
    int one = 1, total = 0;
    for (int i = 0; i < MANY; i++) {
        MPI_Comm_idup(a, &many[i], &reqs[i]);
        if (i == MANY / 2)
            MPI_Iallreduce(&one, &total, 1, MPI_INT, MPI_SUM, a, &reqs[MANY]);
    }
    if (wrank % 2 == 0) {
        MPI_Waitall(MANY + 1, reqs, MPI_STATUSES_IGNORE);
    } else {
        for (int i = MANY; i >= 0; i--)
            MPI_Wait(&reqs[i], MPI_STATUS_IGNORE);
    }
    MTEST_CHECK(total == wsize, "iallreduce among idups: %d", total);
    for (int i = 0; i < MANY; i++)
        check_comm(many[i], 10 + i, "one of many idups");
    for (int i = 0; i < MANY; i++)
        MPI_Comm_free(&many[i]);

    /* 3: idup_with_info, and idup of an intercommunicator. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm wi;
    MPI_Comm_idup_with_info(a, info, &wi, &reqs[0]);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    check_comm(wi, 3, "idup_with_info");
    MPI_Info got;
    char value[MPI_MAX_INFO_VAL];
    int flag = 0;
    MPI_Comm_get_info(wi, &got);
    MPI_Info_get_string(got, "mpi_assert_no_any_tag", &(int){MPI_MAX_INFO_VAL}, value, &flag);
    MTEST_CHECK(flag, "idup_with_info lost the info key");
    MPI_Info_free(&got);
    MPI_Info_free(&info);
    MPI_Comm_free(&wi);
    if (wsize > 1) {
        int half = (wsize + 1) / 2, low = wrank < half;
        MPI_Comm local, inter, dup;
        MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 9, &inter);
        MPI_Comm_idup(inter, &dup, &reqs[0]);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        int rsize, flag2 = 0;
        MPI_Comm_remote_size(dup, &rsize);
        MPI_Comm_test_inter(dup, &flag2);
        MTEST_CHECK(flag2 && rsize == (low ? wsize - half : half), "idup of an intercomm: %d %d",
                    flag2, rsize);
        int lrank, v = -1;
        MPI_Comm_rank(dup, &lrank);
        if (lrank == 0)
            MPI_Sendrecv(&wrank, 1, MPI_INT, 0, 1, &v, 1, MPI_INT, 0, 1, dup, MPI_STATUS_IGNORE);
        MTEST_CHECK(lrank != 0 || v == (low ? half : 0), "intercomm idup leaders: %d", v);
        MPI_Comm_free(&dup);

        /* 4: the low group idups x then y, the high group y then x: a blocking idup of an
         * intercommunicator deadlocks here. */
        MPI_Comm x, y, nx, ny;
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 11, &x);
        MPI_Comm_dup(inter, &y);
        if (low) {
            MPI_Comm_idup(x, &nx, &reqs[0]);
            MPI_Comm_idup(y, &ny, &reqs[1]);
        } else {
            MPI_Comm_idup(y, &ny, &reqs[1]);
            MPI_Comm_idup(x, &nx, &reqs[0]);
        }
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        check_inter(nx, wrank, low, half, wsize, 4, "idup of x");
        check_inter(ny, wrank, low, half, wsize, 5, "idup of y");
        /* Isolation: a message on nx is not received on ny. */
        if (lrank == 0 && low) {
            int w = 3;
            MPI_Send(&w, 1, MPI_INT, 0, 6, nx);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (lrank == 0 && !low) {
            int w = -1, seen = 1;
            MPI_Iprobe(0, 6, ny, &seen, MPI_STATUS_IGNORE);
            MTEST_CHECK(!seen, "a message sent on idup(x) is visible on idup(y)");
            MPI_Recv(&w, 1, MPI_INT, 0, 6, nx, MPI_STATUS_IGNORE);
            MTEST_CHECK(w == 3, "idup(x) message %d", w);
        }
        MPI_Comm_free(&nx);
        MPI_Comm_free(&ny);
        MPI_Comm_free(&x);
        MPI_Comm_free(&y);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
    return mtest_finalize(mtest_error_count());
}
