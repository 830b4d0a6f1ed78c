/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_dup and MPI_Comm_compare. A dup of MPI_COMM_WORLD has the same size and ranks, is
 * MPI_CONGRUENT to it and MPI_IDENT to itself; a chain of dups of dups stays congruent to
 * MPI_COMM_WORLD and to its parent, and every level carries messages. A dup of MPI_COMM_SELF
 * has one process and is congruent to MPI_COMM_SELF. MPI_COMM_SELF and MPI_COMM_WORLD
 * compare as MPI_UNEQUAL with more than one process and MPI_CONGRUENT with one. The chain is
 * freed parent first, which must not disturb the children.
 */
#include <stdio.h>

#include "mtest.h"

#define DEPTH 8

static void check_compare(MPI_Comm a, MPI_Comm b, int expected, const char *what)
{
    int result = -1;
    int rc = MPI_Comm_compare(a, b, &result);

    MTEST_CHECK(rc == MPI_SUCCESS && result == expected, "%s: MPI_Comm_compare gives %d, not %d",
                what, result, expected);
}

/* Ring exchange on comm; the payload names the level so a message from another level of the
 * chain is noticed. */
static void check_traffic(MPI_Comm comm, int level)
{
    int rank, size, out[2], in[2] = {-1, -1};
    MPI_Status status;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    out[0] = rank;
    out[1] = level;
    MPI_Sendrecv(out, 2, MPI_INT, (rank + 1) % size, 0, in, 2, MPI_INT, (rank + size - 1) % size, 0,
                 comm, &status);
    MTEST_CHECK(in[0] == (rank + size - 1) % size && in[1] == level &&
                    status.MPI_SOURCE == (rank + size - 1) % size,
                "level %d: got rank %d level %d from %d", level, in[0], in[1], status.MPI_SOURCE);
}

int main(int argc, char **argv)
{
    MPI_Comm chain[DEPTH], self_dup;
    int wrank, wsize, rank = -1, size = -1, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    check_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, MPI_IDENT, "world with itself");
    check_compare(MPI_COMM_SELF, MPI_COMM_WORLD, wsize == 1 ? MPI_CONGRUENT : MPI_UNEQUAL,
                  "self with world");

    for (int level = 0; level < DEPTH; level++) {
        MPI_Comm parent = level == 0 ? MPI_COMM_WORLD : chain[level - 1];

        chain[level] = MPI_COMM_NULL;
        rc = MPI_Comm_dup(parent, &chain[level]);
        MTEST_CHECK(rc == MPI_SUCCESS && chain[level] != MPI_COMM_NULL && chain[level] != parent &&
                        chain[level] != MPI_COMM_WORLD,
                    "level %d: MPI_Comm_dup gave no new communicator (rc %d)", level, rc);
        if (rc != MPI_SUCCESS)
            MPI_Abort(MPI_COMM_WORLD, 1);
        MPI_Comm_rank(chain[level], &rank);
        MPI_Comm_size(chain[level], &size);
        MTEST_CHECK(rank == wrank && size == wsize, "level %d: rank %d size %d", level, rank, size);
        check_compare(chain[level], MPI_COMM_WORLD, MPI_CONGRUENT, "dup with world");
        check_compare(chain[level], parent, MPI_CONGRUENT, "dup with parent");
        check_compare(chain[level], chain[level], MPI_IDENT, "dup with itself");
    }
    for (int level = DEPTH - 1; level >= 0; level--)
        check_traffic(chain[level], level);

    MPI_Comm_dup(MPI_COMM_SELF, &self_dup);
    MPI_Comm_size(self_dup, &size);
    MTEST_CHECK(size == 1, "dup of self has size %d", size);
    check_compare(self_dup, MPI_COMM_SELF, MPI_CONGRUENT, "dup of self with self");
    check_traffic(self_dup, DEPTH);
    MPI_Comm_free(&self_dup);

    /* Parents first: each child must keep working after its parent is gone. */
    for (int level = 0; level < DEPTH; level++) {
        rc = MPI_Comm_free(&chain[level]);
        MTEST_CHECK(rc == MPI_SUCCESS && chain[level] == MPI_COMM_NULL,
                    "level %d: MPI_Comm_free rc %d or handle not reset", level, rc);
        if (level + 1 < DEPTH)
            check_traffic(chain[level + 1], level + 1);
    }
    check_traffic(MPI_COMM_WORLD, -1);
    return mtest_finalize(0);
}
