/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Open_port, MPI_Comm_accept and MPI_Comm_connect between the two halves of
 * MPI_COMM_WORLD (the first half accepts): the intercommunicator's groups and ranks,
 * point-to-point both ways with wildcards, collectives across it, MPI_Intercomm_merge with
 * both flag orders, MPI_Comm_disconnect; then several connections in a row on one port, with
 * connecting roots other than rank 0.
 */
#include "mtest.h"

#include <stdio.h>
#include <string.h>

static int errs;

static void check_inter(MPI_Comm inter, int accepting, int half, int rest)
{
    int flag = 0, lsize = -1, rsize = -1, rank = -1, wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &rank);
    MTEST_CHECK(flag, "the new communicator is not an intercommunicator");
    MTEST_CHECK(lsize == (accepting ? half : rest) && rsize == (accepting ? rest : half),
                "sizes local %d remote %d", lsize, rsize);

    /* The remote group, seen through MPI_COMM_WORLD, is the other half in order. */
    MPI_Group remote, world;
    MPI_Comm_remote_group(inter, &remote);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int i = 0; i < rsize; i++) {
        int w = -1;
        MPI_Group_translate_ranks(remote, 1, &i, world, &w);
        int expect = accepting ? half + i : i;
        MTEST_CHECK(w == expect, "remote rank %d is world rank %d, expected %d", i, w, expect);
    }
    MPI_Group_free(&remote);
    MPI_Group_free(&world);

    /* Every process sends to every remote one; receives with MPI_ANY_SOURCE. */
    for (int i = 0; i < rsize; i++) {
        int v = wrank * 100 + i;
        MPI_Send(&v, 1, MPI_INT, i, 7, inter);
    }
    int seen = 0;
    for (int i = 0; i < rsize; i++) {
        int v = -1;
        MPI_Status st;
        MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, inter, &st);
        int src_world = accepting ? half + st.MPI_SOURCE : st.MPI_SOURCE;
        MTEST_CHECK(st.MPI_TAG == 7 && v == src_world * 100 + rank, "got %d tag %d from %d", v,
                    st.MPI_TAG, st.MPI_SOURCE);
        seen |= 1 << st.MPI_SOURCE;
    }
    MTEST_CHECK(seen == (1 << rsize) - 1, "sources seen %#x", seen);

    /* Collectives across: a broadcast from each side's rank 0, an allreduce. */
    int b = accepting ? 4242 : -1;
    if (accepting)
        MPI_Bcast(&b, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    else
        MPI_Bcast(&b, 1, MPI_INT, 0, inter);
    MTEST_CHECK(!accepting ? b == 4242 : 1, "bcast across gave %d", b);
    int sum = -1, one = wrank;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, inter);
    int expect = 0;
    for (int w = accepting ? half : 0; w < (accepting ? half + rest : half); w++)
        expect += w;
    MTEST_CHECK(sum == expect, "allreduce across gave %d, expected %d", sum, expect);

    /* Merged, both ways round: high puts the group last. */
    for (int high_acceptors = 0; high_acceptors < 2; high_acceptors++) {
        MPI_Comm merged;
        int high = accepting ? high_acceptors : !high_acceptors;
        MPI_Intercomm_merge(inter, high, &merged);
        int mrank = -1, msize = -1;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        int first_acceptors = !high_acceptors;
        int want = accepting ? (first_acceptors ? rank : rest + rank)
                             : (first_acceptors ? half + rank : rank);
        MTEST_CHECK(msize == half + rest && mrank == want, "merged rank %d size %d, expected %d",
                    mrank, msize, want);
        int total = 0;
        MPI_Allreduce(&wrank, &total, 1, MPI_INT, MPI_SUM, merged);
        MTEST_CHECK(total == (half + rest) * (half + rest - 1) / 2, "merged allreduce %d", total);
        MPI_Comm_free(&merged);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        printf(" No Errors\n");
        MPI_Finalize();
        return 0;
    }
    int half = wsize / 2, rest = wsize - half;
    int accepting = wrank < half;
    MPI_Comm side;
    MPI_Comm_split(MPI_COMM_WORLD, accepting, wrank, &side);

    /* One port, three connections in a row, with different roots: the port's name matters
     * at the root only, so every process has it. */
    char port[MPI_MAX_PORT_NAME] = "";
    if (wrank == 0) {
        MPI_Open_port(MPI_INFO_NULL, port);
        MTEST_CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME, "port name length");
    }
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);

    for (int round = 0; round < 3; round++) {
        MPI_Comm inter;
        /* MPI_Comm_accept runs on the port's process: world rank 0, the acceptors' rank 0 */
        int acc_root = 0;
        int con_root = round == 0 ? 0 : round == 1 ? rest - 1 : rest / 2;
        int rc;
        if (accepting)
            rc = MPI_Comm_accept(port, MPI_INFO_NULL, acc_root, side, &inter);
        else
            rc = MPI_Comm_connect(port, MPI_INFO_NULL, con_root, side, &inter);
        MTEST_CHECK(rc == MPI_SUCCESS, "round %d: accept/connect failed", round);
        if (rc != MPI_SUCCESS)
            break;
        check_inter(inter, accepting, half, rest);
        rc = MPI_Comm_disconnect(&inter);
        MTEST_CHECK(rc == MPI_SUCCESS && inter == MPI_COMM_NULL, "disconnect");
    }
    if (wrank == 0)
        MTEST_CHECK(MPI_Close_port(port) == MPI_SUCCESS, "close port");
    MPI_Comm_free(&side);
    return mtest_finalize(errs);
}
