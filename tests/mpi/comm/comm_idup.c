/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_idup and MPI_Comm_idup_with_info on MPI_COMM_WORLD, on a split communicator and on
 * an intercommunicator: the new communicator is usable once the request completes (MPI_Wait,
 * MPI_Test), keeps the parent's group, gets the given hints, and is isolated from the parent.
 * Several idups are outstanding at once, started in the same order on every process (the
 * supported usage; see docs/design/objects.md).
 */
#include <string.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm split, dup[3];
    MPI_Request reqs[3];
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &split);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "org.manifold.test", "yes");
    MPI_Comm_idup(MPI_COMM_WORLD, &dup[0], &reqs[0]);
    MPI_Comm_idup_with_info(split, info, &dup[1], &reqs[1]);
    MPI_Comm_idup(MPI_COMM_WORLD, &dup[2], &reqs[2]);
    int done = 0;
    while (!done)
        MPI_Testall(3, reqs, &done, MPI_STATUSES_IGNORE);

    int result;
    MPI_Comm_compare(MPI_COMM_WORLD, dup[0], &result);
    MTEST_CHECK(result == MPI_CONGRUENT, "idup of world: compare %d", result);
    MPI_Comm_compare(split, dup[1], &result);
    MTEST_CHECK(result == MPI_CONGRUENT, "idup of split: compare %d", result);
    MPI_Info used;
    char value[MPI_MAX_INFO_VAL];
    int flag = 0;
    MPI_Comm_get_info(dup[1], &used);
    MPI_Info_get_string(used, "org.manifold.test", &(int){sizeof(value)}, value, &flag);
    MTEST_CHECK(!mtest_is_manifold() || (flag && strcmp(value, "yes") == 0),
                "idup_with_info: hint not kept");
    MPI_Info_free(&used);

    /* Isolation: a message on the duplicate is not received on the parent. */
    int rank, size, a = -1, b = -1;
    MPI_Comm_rank(dup[2], &rank);
    MPI_Comm_size(dup[2], &size);
    MPI_Request r2[4];
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Irecv(&a, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, &r2[0]);
    MPI_Irecv(&b, 1, MPI_INT, prev, 0, dup[2], &r2[1]);
    int va = 100 + rank, vb = 200 + rank;
    MPI_Isend(&vb, 1, MPI_INT, next, 0, dup[2], &r2[2]);
    MPI_Isend(&va, 1, MPI_INT, next, 0, MPI_COMM_WORLD, &r2[3]);
    MPI_Waitall(4, r2, MPI_STATUSES_IGNORE);
    MTEST_CHECK(a == 100 + prev && b == 200 + prev, "isolation: %d %d", a, b);

    /* An intercommunicator (halves of the world) duplicated without blocking. */
    if (wsize > 1) {
        int half = (wsize + 1) / 2, low = wrank < half;
        MPI_Comm local, inter, idup;
        MPI_Request req;
        MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 4, &inter);
        MPI_Comm_idup(inter, &idup, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        int inter_flag = 0, lrank, got = -1;
        MPI_Comm_test_inter(idup, &inter_flag);
        MTEST_CHECK(inter_flag, "idup of an intercommunicator is not inter");
        MPI_Comm_rank(idup, &lrank);
        if (lrank == 0) {
            MPI_Sendrecv(&wrank, 1, MPI_INT, 0, 0, &got, 1, MPI_INT, 0, 0, idup, MPI_STATUS_IGNORE);
            MTEST_CHECK(got == (low ? half : 0), "idup inter: got %d", got);
        }
        MPI_Comm_free(&idup);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }

    MPI_Info_free(&info);
    for (int i = 0; i < 3; i++)
        MPI_Comm_free(&dup[i]);
    MPI_Comm_free(&split);
    return mtest_finalize(0);
}
