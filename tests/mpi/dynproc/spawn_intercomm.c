/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Intercomm_create between groups that hold processes some members never met: world rank
 * 0 alone spawns two children over MPI_COMM_SELF, then the whole parent world and the
 * children's world build an intercommunicator with the spawn's intercommunicator as peer_comm
 * (MPI-5.0; the other parents pass MPI_COMM_NULL). The parents other than rank 0 and the
 * children have never exchanged a message, so each must learn the other's addresses during
 * the call. Checked: remote sizes, a message between every parent and every child both ways,
 * a merge (parents first) with an allreduce over it, and disconnection.
 */
#include "mtest.h"

#include <string.h>

#define NCHILDREN 2

static void exchange(MPI_Comm inter, int parent_side)
{
    int rank, rsize, lsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MTEST_CHECK((parent_side ? rsize : lsize) == NCHILDREN, "%d children",
                parent_side ? rsize : lsize);
    for (int i = 0; i < rsize; i++) {
        int mine = (parent_side ? 100 : 200) + 10 * rank + i, got = -1;
        MPI_Sendrecv(&mine, 1, MPI_INT, i, 6, &got, 1, MPI_INT, i, 6, inter, MPI_STATUS_IGNORE);
        int want = (parent_side ? 200 : 100) + 10 * i + rank;
        MTEST_CHECK(got == want, "%s %d got %d from remote %d, expected %d",
                    parent_side ? "parent" : "child", rank, got, i, want);
    }
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, !parent_side, &merged);
    int mrank, msize, one = 1, sum = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    MTEST_CHECK(msize == lsize + rsize, "merged size %d", msize);
    MTEST_CHECK(mrank == (parent_side ? rank : rsize + rank), "merged rank %d", mrank);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    MTEST_CHECK(sum == msize, "allreduce over the merged communicator gave %d", sum);
    MPI_Comm_free(&merged);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm parent, spawned = MPI_COMM_NULL, inter;
    MPI_Comm_get_parent(&parent);
    int child = parent != MPI_COMM_NULL, wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (!child && wrank == 0) {
        int codes[NCHILDREN];
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, NCHILDREN, MPI_INFO_NULL, 0, MPI_COMM_SELF, &spawned,
                       codes);
        for (int i = 0; i < NCHILDREN; i++)
            MTEST_CHECK(codes[i] == MPI_SUCCESS, "spawn error code %d: %d", i, codes[i]);
    }
    MPI_Comm peer = child ? parent : spawned;
    int rc = MPI_Intercomm_create(MPI_COMM_WORLD, 0, peer, 0, 12, &inter);
    if (!MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Intercomm_create over the spawn: %d", rc))
        return mtest_finalize(1);
    exchange(inter, !child);
    MPI_Comm_disconnect(&inter);
    if (peer != MPI_COMM_NULL)
        MPI_Comm_disconnect(&peer);
    if (child) {
        MPI_Finalize(); /* only the parents report */
        return 0;
    }
    return mtest_finalize(0);
}
