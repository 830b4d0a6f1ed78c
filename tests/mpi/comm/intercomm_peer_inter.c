/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Intercomm_create with an intercommunicator as peer_comm (allowed since MPI-5.0; MPICH's
 * spawn tests do it with the intercommunicator of MPI_Comm_spawn). `first` joins world rank 0
 * with the rest; the new intercommunicator joins the even and the odd world ranks, whose
 * leaders (world rank 0, and the highest odd rank as the odd group's last member) sit in the
 * two groups of `first` and name each other by rank in its remote group. The other members
 * pass MPI_COMM_NULL as peer_comm (significant only at the leaders). Checked: the merged
 * group's order and members, a message each way between the groups. With MPI_ERRORS_RETURN,
 * only the even group calling: a remote leader beyond the remote group and (at 3 or more
 * processes) one inside the even group itself are MPI_ERR_RANK on every even rank.
 */
#include "mtest.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2)
        return mtest_finalize(0);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* first: {0} and {1..wsize-1}; rank r of the second group is world rank r + 1 */
    MPI_Comm side, first;
    MPI_Comm_split(MPI_COMM_WORLD, wrank == 0, wrank, &side);
    MPI_Intercomm_create(side, 0, MPI_COMM_WORLD, wrank == 0 ? 1 : 0, 5, &first);

    int even = wrank % 2 == 0, nodd = wsize / 2, neven = wsize - nodd;
    int odd_leader_world = 2 * nodd - 1; /* the highest odd world rank, in first's big group */
    MPI_Comm local;
    MPI_Comm_split(MPI_COMM_WORLD, even, wrank, &local);
    MPI_Comm_set_errhandler(local, MPI_ERRORS_RETURN);
    int lrank;
    MPI_Comm_rank(local, &lrank);
    int local_leader = even ? 0 : nodd - 1;
    int is_leader = even ? wrank == 0 : wrank == odd_leader_world;
    MPI_Comm peer = is_leader ? first : MPI_COMM_NULL;
    int remote_leader = even ? odd_leader_world - 1 : 0;

    MPI_Comm inter = MPI_COMM_NULL;
    int rc;
    if (even) {
        rc = MPI_Intercomm_create(local, 0, peer, wsize - 1, 9, &inter);
        MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Intercomm_create");
        if (wsize >= 3) { /* remote rank 1 of first is world rank 2, an even rank */
            rc = MPI_Intercomm_create(local, 0, peer, 1, 9, &inter);
            MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Intercomm_create");
        }
    }

    rc = MPI_Intercomm_create(local, local_leader, peer, remote_leader, 9, &inter);
    if (!MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Intercomm_create with an intercommunicator peer: %d",
                     rc))
        return mtest_finalize(1);
    int flag = 0, rsize = -1;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_remote_size(inter, &rsize);
    MTEST_CHECK(flag, "the result is not an intercommunicator");
    MTEST_CHECK(rsize == (even ? nodd : neven), "remote size %d, expected %d", rsize,
                even ? nodd : neven);

    /* merged with the even group first: world ranks 0, 2, 4, ..., then 1, 3, ... */
    MPI_Comm merged;
    MPI_Intercomm_merge(inter, !even, &merged);
    int *all = malloc(sizeof(int) * (size_t)wsize);
    MPI_Allgather(&wrank, 1, MPI_INT, all, 1, MPI_INT, merged);
    for (int i = 0; i < wsize; i++) {
        int want = i < neven ? 2 * i : 2 * (i - neven) + 1;
        MTEST_CHECK(all[i] == want, "merged rank %d is world rank %d, expected %d", i, all[i],
                    want);
    }
    free(all);

    /* local rank i of each group swaps with remote rank i where both exist */
    if (lrank < nodd) {
        int got = -1;
        MPI_Sendrecv(&wrank, 1, MPI_INT, lrank, 3, &got, 1, MPI_INT, lrank, 3, inter,
                     MPI_STATUS_IGNORE);
        int want = even ? 2 * lrank + 1 : 2 * lrank;
        MTEST_CHECK(got == want, "received %d from remote rank %d, expected %d", got, lrank, want);
    }

    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    MPI_Comm_free(&first);
    MPI_Comm_free(&side);
    return mtest_finalize(0);
}
