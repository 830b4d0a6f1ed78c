/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Intercomm_create_from_groups with leaders of different jobs. The parents spawn two
 * children; then
 * - the parents' and the children's groups (the spawn intercommunicator's local and remote
 *   groups) make an intercommunicator, each side naming the other's last process as leader;
 * - the merged communicator's even and odd ranks, each group mixing parents and children where
 *   there are enough of them, make another, the even group led by its first process and the
 *   odd group by its last.
 * On each: remote sizes, an allreduce across the groups, and a message from every process to
 * one of the other group, received by wildcard and checked for its sender.
 */
#include "mtest.h"

#include <stdlib.h>

#define NCHILDREN 2

/* A number per process, the same whichever communicator names it. */
static int identity(int child, int wrank)
{
    return (child ? 2000 : 1000) + wrank;
}

static void check_inter(MPI_Comm inter, int me, const int *remote_ids, int rsize_expected,
                        const char *what)
{
    int rank, lsize, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    if (!MTEST_CHECK(rsize == rsize_expected, "%s: remote size %d, expected %d", what, rsize,
                     rsize_expected))
        return;
    int sum = 0, want = 0;
    for (int i = 0; i < rsize; i++)
        want += remote_ids[i];
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, inter);
    MTEST_CHECK(sum == want, "%s: allreduce over the other group gave %d, expected %d", what, sum,
                want);
    /* Local rank r sends its identity to remote rank r % rsize. */
    MPI_Send(&me, 1, MPI_INT, rank % rsize, 7, inter);
    for (int r = 0; r < rsize; r++) {
        if (r % lsize != rank)
            continue;
        int got = -1;
        MPI_Status st;
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 7, inter, &st);
        MTEST_CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && got == remote_ids[st.MPI_SOURCE],
                    "%s: received %d from remote rank %d", what, got, st.MPI_SOURCE);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm parent, inter;
    MPI_Comm_get_parent(&parent);
    int child = parent != MPI_COMM_NULL, wrank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    if (child)
        inter = parent;
    else
        MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, NCHILDREN, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                       MPI_ERRCODES_IGNORE);
    int me = identity(child, wrank);

    /* Everyone's identity, parents first (the merge's order). */
    MPI_Comm all;
    MPI_Intercomm_merge(inter, child, &all);
    int arank, asize;
    MPI_Comm_rank(all, &arank);
    MPI_Comm_size(all, &asize);
    int *ids = mtest_calloc((size_t)asize, sizeof(int));
    MPI_Allgather(&me, 1, MPI_INT, ids, 1, MPI_INT, all);
    int nparents = asize - NCHILDREN;

    /* Parents and children, each side led by its last process. */
    MPI_Group lg, rg;
    MPI_Comm_group(inter, &lg);
    MPI_Comm_remote_group(inter, &rg);
    int rsize;
    MPI_Group_size(rg, &rsize);
    int lsize;
    MPI_Group_size(lg, &lsize);
    MPI_Comm jobs;
    int rc =
        MPI_Intercomm_create_from_groups(lg, lsize - 1, rg, rsize - 1, "org.manifold.test.jobs",
                                         MPI_INFO_NULL, MPI_ERRORS_RETURN, &jobs);
    if (MTEST_CHECK(rc == MPI_SUCCESS, "parents and children: error %d", rc)) {
        check_inter(jobs, me, child ? ids : ids + nparents, child ? nparents : NCHILDREN,
                    "parents and children");
        MPI_Comm_free(&jobs);
    }
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);

    /* Even and odd ranks of the merged communicator: the even group led by its first process,
     * the odd group by its last. */
    MPI_Group ag, even, odd;
    MPI_Comm_group(all, &ag);
    int neven = (asize + 1) / 2, nodd = asize / 2;
    int range_even[1][3] = {{0, asize - 1, 2}}, range_odd[1][3] = {{1, asize - 1, 2}};
    MPI_Group_range_incl(ag, 1, range_even, &even);
    MPI_Group_range_incl(ag, 1, range_odd, &odd);
    int *even_ids = mtest_calloc((size_t)neven, sizeof(int));
    int *odd_ids = mtest_calloc((size_t)nodd + 1, sizeof(int));
    for (int i = 0; i < asize; i++)
        (i % 2 == 0 ? even_ids : odd_ids)[i / 2] = ids[i];
    int is_even = arank % 2 == 0;
    MPI_Comm halves;
    rc = MPI_Intercomm_create_from_groups(
        is_even ? even : odd, is_even ? 0 : nodd - 1, is_even ? odd : even, is_even ? nodd - 1 : 0,
        "org.manifold.test.parity", MPI_INFO_NULL, MPI_ERRORS_RETURN, &halves);
    if (MTEST_CHECK(rc == MPI_SUCCESS, "even and odd: error %d", rc)) {
        check_inter(halves, me, is_even ? odd_ids : even_ids, is_even ? nodd : neven,
                    "even and odd");
        MPI_Comm_free(&halves);
    }
    MPI_Group_free(&ag);
    MPI_Group_free(&even);
    MPI_Group_free(&odd);
    free(even_ids);
    free(odd_ids);
    free(ids);
    /* Only the parents report: the children's failed checks count there. */
    int errs = child ? mtest_error_count() : 0, child_errs = 0;
    MPI_Allreduce(&errs, &child_errs, 1, MPI_INT, MPI_SUM, all);
    MPI_Comm_free(&all);
    MPI_Comm_disconnect(&inter);
    if (child) {
        MPI_Finalize();
        return 0;
    }
    return mtest_finalize(wrank == 0 ? child_errs : 0);
}
