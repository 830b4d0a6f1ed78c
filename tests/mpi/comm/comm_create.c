/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_create and MPI_Comm_create_group. Comm_create (collective over MPI_COMM_WORLD) with
 * the even ranks: members get a communicator of the right size and rank order, the others
 * MPI_COMM_NULL; with MPI_GROUP_EMPTY everybody gets MPI_COMM_NULL; with the reversed world
 * group the ranks are reversed. Comm_create_group is called by the members of the group only:
 * the even ranks and the odd ranks each build their own communicator at the same time with
 * different tags, then a group of the first two ranks only. Messages on every new
 * communicator reach the right process, and a group that is not part of the communicator
 * (an odd-ranks group passed to a communicator of the even ranks) gives MPI_ERR_GROUP.
 */
#include <stdlib.h>

#include "mtest.h"

/* Pass each process's rank in comm around a ring and check the neighbour's. */
static void check_ring(MPI_Comm comm, const char *what)
{
    int rank, size, got = -1;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 7, comm, MPI_STATUS_IGNORE);
    MTEST_CHECK(got == (rank + size - 1) % size, "%s: rank %d got %d", what, rank, got);
}

static MPI_Group parity_group(MPI_Group world, int size, int parity)
{
    MPI_Group g;
    int range[1][3] = {{parity, size - 1, 2}};

    if (parity >= size)
        return MPI_GROUP_EMPTY;
    MPI_Group_range_incl(world, 1, range, &g);
    return g;
}

int main(int argc, char **argv)
{
    MPI_Group world, even, odd, rev;
    MPI_Comm comm;
    int rank, size, value, i;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    even = parity_group(world, size, 0);
    odd = parity_group(world, size, 1);

    /* Comm_create: collective over the parent */
    MPI_Comm_create(MPI_COMM_WORLD, even, &comm);
    if (rank % 2 == 0) {
        MTEST_CHECK(comm != MPI_COMM_NULL, "even rank %d got MPI_COMM_NULL", rank);
        if (comm != MPI_COMM_NULL) {
            MPI_Comm_size(comm, &value);
            MTEST_CHECK(value == (size + 1) / 2, "even communicator size %d", value);
            MPI_Comm_rank(comm, &value);
            MTEST_CHECK(value == rank / 2, "even communicator rank %d", value);
            check_ring(comm, "Comm_create(even)");
            if (size > 1 && mtest_is_manifold()) {
                /* odd's members are not processes of this communicator (MPICH 5.0.2 does not
                 * check) */
                MPI_Comm bad = MPI_COMM_NULL;
                int rc;

                MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
                rc = MPI_Comm_create_group(comm, odd, 5, &bad);
                MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Comm_create_group");
                MTEST_CHECK(bad == MPI_COMM_NULL, "failed create_group set newcomm");
            }
            MPI_Comm_free(&comm);
        }
    } else {
        MTEST_CHECK(comm == MPI_COMM_NULL, "odd rank %d got a communicator", rank);
    }
    MPI_Comm_create(MPI_COMM_WORLD, MPI_GROUP_EMPTY, &comm);
    MTEST_CHECK(comm == MPI_COMM_NULL, "Comm_create(MPI_GROUP_EMPTY) gave a communicator");

    int *ranks = mtest_calloc((size_t)size, sizeof(int));
    for (i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_Group_incl(world, size, ranks, &rev);
    MPI_Comm_create(MPI_COMM_WORLD, rev, &comm);
    MPI_Comm_rank(comm, &value);
    MTEST_CHECK(value == size - 1 - rank, "reversed communicator rank %d", value);
    check_ring(comm, "Comm_create(reversed)");
    MPI_Comm_free(&comm);

    /* Comm_create_group: only members call, even and odd at the same time */
    MPI_Comm_create_group(MPI_COMM_WORLD, rank % 2 == 0 ? even : odd, 100 + rank % 2, &comm);
    MTEST_CHECK(comm != MPI_COMM_NULL, "Comm_create_group gave MPI_COMM_NULL");
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_rank(comm, &value);
        MTEST_CHECK(value == rank / 2, "create_group rank %d", value);
        check_ring(comm, "Comm_create_group(parity)");
        MPI_Comm_free(&comm);
    }
    if (size >= 2 && rank < 2) {
        MPI_Group pair;
        int two[2] = {1, 0};

        MPI_Group_incl(world, 2, two, &pair);
        MPI_Comm_create_group(MPI_COMM_WORLD, pair, 0, &comm);
        MPI_Comm_rank(comm, &value);
        MTEST_CHECK(value == 1 - rank, "pair rank %d", value);
        check_ring(comm, "Comm_create_group(pair)");
        MPI_Comm_free(&comm);
        MPI_Group_free(&pair);
    }
    MPI_Comm_create_group(MPI_COMM_WORLD, MPI_GROUP_EMPTY, 3, &comm);
    MTEST_CHECK(comm == MPI_COMM_NULL, "Comm_create_group(MPI_GROUP_EMPTY) gave a communicator");
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Group_free(&rev);
    if (even != MPI_GROUP_EMPTY)
        MPI_Group_free(&even);
    if (odd != MPI_GROUP_EMPTY)
        MPI_Group_free(&odd);
    MPI_Group_free(&world);
    free(ranks);
    return mtest_finalize(0);
}
