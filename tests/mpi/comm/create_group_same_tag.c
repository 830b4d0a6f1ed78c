/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_create_group and MPI_Intercomm_create_from_groups called one after the other with
 * the same tag and different groups (legal: only concurrent calls need different tags). A
 * process that has moved on to the next call sends the next agreement's messages while a
 * peer is still in the previous one; they used to match there whenever the sender's rank in
 * the new group equalled the rank the peer expected from the old one, and the creation failed
 * ("message truncated") or mixed the two. Cases: groups {0,1} then {0,2} (rank 1 late);
 * alternating the world group and its reverse; intercommunicators {0,1}|{2} then {0,3}|{2}.
 */
#include <stdlib.h>
#include <unistd.h>

#include "mtest.h"

/* The communicator's members must be `group`, and its Allreduce of world ranks their sum. */
static void check_comm(MPI_Comm comm, MPI_Group group, const char *what)
{
    MPI_Group got;
    int result = MPI_UNEQUAL, wrank, sum = -1, want = 0, n, *ranks, *world;
    MPI_Comm_group(comm, &got);
    MPI_Group_compare(got, group, &result);
    MPI_Group_free(&got);
    MTEST_CHECK(result == MPI_IDENT, "%s: the group compares %d", what, result);
    MPI_Group_size(group, &n);
    ranks = malloc(sizeof(int) * (size_t)n);
    world = malloc(sizeof(int) * (size_t)n);
    MPI_Group world_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    for (int i = 0; i < n; i++)
        ranks[i] = i;
    MPI_Group_translate_ranks(group, n, ranks, world_group, world);
    for (int i = 0; i < n; i++)
        want += world[i];
    MPI_Group_free(&world_group);
    free(ranks);
    free(world);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, comm);
    MTEST_CHECK(sum == want, "%s: the sum of world ranks is %d, expected %d", what, sum, want);
}

static MPI_Group group_of(MPI_Group world, int n, const int *ranks)
{
    MPI_Group g;
    MPI_Group_incl(world, n, ranks, &g);
    return g;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);

    if (wsize >= 3) { /* {0,1} then {0,2}, tag 5; rank 2 starts at once, rank 1 late */
        MPI_Group g01 = group_of(world, 2, (int[]){0, 1}), g02 = group_of(world, 2, (int[]){0, 2});
        MPI_Comm c1 = MPI_COMM_NULL, c2 = MPI_COMM_NULL;
        if (wrank == 1)
            usleep(200000);
        if (wrank == 0 || wrank == 1)
            MPI_Comm_create_group(MPI_COMM_WORLD, g01, 5, &c1);
        if (wrank == 0 || wrank == 2)
            MPI_Comm_create_group(MPI_COMM_WORLD, g02, 5, &c2);
        if (c1 != MPI_COMM_NULL) {
            check_comm(c1, g01, "{0,1}");
            MPI_Comm_free(&c1);
        }
        if (c2 != MPI_COMM_NULL) {
            check_comm(c2, g02, "{0,2}");
            MPI_Comm_free(&c2);
        }
        MPI_Group_free(&g01);
        MPI_Group_free(&g02);
    }

    /* the world group and its reverse, alternately, all with tag 7 */
    int *order = malloc(sizeof(int) * (size_t)wsize);
    for (int i = 0; i < wsize; i++)
        order[i] = wsize - 1 - i;
    MPI_Group reversed = group_of(world, wsize, order);
    free(order);
    for (int i = 0; i < 20; i++) {
        MPI_Group g = i % 2 ? reversed : world;
        MPI_Comm c = MPI_COMM_NULL;
        MPI_Comm_create_group(MPI_COMM_WORLD, g, 7, &c);
        check_comm(c, g, i % 2 ? "reversed world" : "world");
        MPI_Comm_free(&c);
    }
    MPI_Group_free(&reversed);

    if (wsize >= 4) { /* {0,1}|{2} then {0,3}|{2}, string tag "same" */
        MPI_Group g01 = group_of(world, 2, (int[]){0, 1}), g2 = group_of(world, 1, (int[]){2}),
                  g03 = group_of(world, 2, (int[]){0, 3});
        MPI_Comm i1 = MPI_COMM_NULL, i2 = MPI_COMM_NULL;
        if (wrank == 0 || wrank == 1)
            MPI_Intercomm_create_from_groups(g01, 0, g2, 0, "same", MPI_INFO_NULL,
                                             MPI_ERRORS_RETURN, &i1);
        if (wrank == 2)
            MPI_Intercomm_create_from_groups(g2, 0, g01, 0, "same", MPI_INFO_NULL,
                                             MPI_ERRORS_RETURN, &i1);
        if (wrank == 0 || wrank == 3)
            MPI_Intercomm_create_from_groups(g03, 0, g2, 0, "same", MPI_INFO_NULL,
                                             MPI_ERRORS_RETURN, &i2);
        if (wrank == 2)
            MPI_Intercomm_create_from_groups(g2, 0, g03, 0, "same", MPI_INFO_NULL,
                                             MPI_ERRORS_RETURN, &i2);
        MPI_Comm inters[2] = {i1, i2};
        int remote_sums[2][2] = {{2, 1}, {2, 3}}; /* [which][am I in group {2}] */
        for (int k = 0; k < 2; k++) {
            if (inters[k] == MPI_COMM_NULL)
                continue;
            int sum = -1;
            MPI_Allreduce(&wrank, &sum, 1, MPI_INT, MPI_SUM, inters[k]);
            int want = remote_sums[k][wrank == 2 ? 1 : 0];
            MTEST_CHECK(sum == want, "intercommunicator %d: remote sum %d, expected %d", k + 1, sum,
                        want);
            MPI_Comm_free(&inters[k]);
        }
        MPI_Group_free(&g01);
        MPI_Group_free(&g2);
        MPI_Group_free(&g03);
    }
    MPI_Group_free(&world);
    return mtest_finalize(0);
}
