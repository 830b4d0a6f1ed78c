/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_spawn and MPI_Comm_spawn_multiple: the parents start copies of this program, which
 * find them through MPI_Comm_get_parent. Checked on both sides: sizes, error codes, the
 * children's own MPI_COMM_WORLD and MPI_APPNUM, the arguments, messages both ways across the
 * intercommunicator, a merge (parents first) with a collective over it, and disconnection
 * (after which the children see no parent).
 */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void talk(MPI_Comm inter, int parent_side)
{
    int rank, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    if (parent_side && rank == 0) {
        for (int i = 0; i < rsize; i++) {
            int v = 10 * i + 1, back = -1;
            MPI_Send(&v, 1, MPI_INT, i, 3, inter);
            MPI_Recv(&back, 1, MPI_INT, i, 4, inter, MPI_STATUS_IGNORE);
            MTEST_CHECK(back == v + 1, "child %d answered %d", i, back);
        }
    } else if (!parent_side) {
        int v = -1;
        MPI_Recv(&v, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
        MTEST_CHECK(v == 10 * rank + 1, "child %d got %d", rank, v);
        v++;
        MPI_Send(&v, 1, MPI_INT, 0, 4, inter);
    }
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, !parent_side, &merged);
    int mrank, msize, lsize, one = 1, sum = 0;
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    MPI_Comm_size(inter, &lsize);
    MTEST_CHECK(msize == lsize + rsize, "merged size %d", msize);
    MTEST_CHECK(mrank == (parent_side ? rank : rsize + rank), "merged rank %d", mrank);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    MTEST_CHECK(sum == msize, "allreduce over the merged communicator gave %d", sum);
    MPI_Comm_free(&merged);
    MPI_Comm_disconnect(&inter);
}

static int child(int argc, char **argv)
{
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    MTEST_CHECK(parent != MPI_COMM_NULL, "a spawned process has no parent");
    int wsize, *appnum = NULL, flag = 0, expect_size = 3, expect_app = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag);
    if (strcmp(argv[1], "multi") == 0) { /* spawn_multiple: "multi <appnum>" */
        expect_size = 3;
        expect_app = argc > 2 ? atoi(argv[2]) : -1;
    }
    MTEST_CHECK(wsize == expect_size, "the children's world has %d processes", wsize);
    MTEST_CHECK(flag && *appnum == expect_app, "MPI_APPNUM %d (flag %d), expected %d",
                flag ? *appnum : -1, flag, expect_app);
    if (parent != MPI_COMM_NULL) {
        int rsize = 0;
        MPI_Comm_remote_size(parent, &rsize);
        MTEST_CHECK(rsize == 2, "the parents' group has %d processes", rsize);
        char name[MPI_MAX_OBJECT_NAME];
        int len = 0;
        MPI_Comm_get_name(parent, name, &len);
        talk(parent, 0);
        MPI_Comm_get_parent(&parent);
        MTEST_CHECK(parent == MPI_COMM_NULL, "the parent is still there after disconnect");
    }
    return mtest_finalize(0);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    if (argc > 1)
        return child(argc, argv);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTEST_CHECK(size == 2, "run this test with 2 processes");

    /* three copies of one command */
    MPI_Comm inter;
    int codes[3] = {-1, -1, -1};
    char *args[] = {"single", NULL};
    int rc = MPI_Comm_spawn(argv[0], args, 3, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes);
    MTEST_CHECK(rc == MPI_SUCCESS, "spawn failed");
    if (rc == MPI_SUCCESS) {
        int rsize = 0;
        MPI_Comm_remote_size(inter, &rsize);
        MTEST_CHECK(rsize == 3, "%d children", rsize);
        for (int i = 0; i < 3; i++)
            MTEST_CHECK(codes[i] == MPI_SUCCESS, "errcode[%d] %d", i, codes[i]);
        talk(inter, 1);
    }

    /* two commands (1 + 2 processes), the root being rank 1, with an info object */
    char *cmds[2] = {argv[0], argv[0]};
    char *args0[] = {"multi", "0", NULL}, *args1[] = {"multi", "1", NULL};
    char **argvs[2] = {args0, args1};
    int nps[2] = {1, 2};
    MPI_Info infos[2];
    MPI_Info_create(&infos[0]);
    MPI_Info_set(infos[0], "wdir", ".");
    infos[1] = MPI_INFO_NULL;
    rc = MPI_Comm_spawn_multiple(2, cmds, argvs, nps, infos, 1, MPI_COMM_WORLD, &inter,
                                 MPI_ERRCODES_IGNORE);
    MPI_Info_free(&infos[0]);
    MTEST_CHECK(rc == MPI_SUCCESS, "spawn_multiple failed");
    if (rc == MPI_SUCCESS)
        talk(inter, 1);
    return mtest_finalize(0);
}
