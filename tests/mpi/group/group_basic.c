/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Group constructors and queries on the group of MPI_COMM_WORLD: size and rank (MPI_UNDEFINED
 * for a non-member), incl/excl (order kept), range_incl/range_excl with positive and negative
 * strides, union/intersection/difference (order and MPI_GROUP_EMPTY results),
 * translate_ranks (MPI_PROC_NULL kept, non-members MPI_UNDEFINED), compare (IDENT, SIMILAR,
 * UNEQUAL) and free (handles become MPI_GROUP_NULL, MPI_GROUP_EMPTY may be freed).
 */
#include <stdlib.h>

#include "mtest.h"

static int size_of(MPI_Group g)
{
    int n = -1;
    MPI_Group_size(g, &n);
    return n;
}

static int rank_of(MPI_Group g)
{
    int r = -2;
    MPI_Group_rank(g, &r);
    return r;
}

/* Member i of g as a rank of the world group. */
static int world_of(MPI_Group g, MPI_Group world, int i)
{
    int out = -2;
    MPI_Group_translate_ranks(g, 1, &i, world, &out);
    return out;
}

static int compare(MPI_Group a, MPI_Group b)
{
    int result = -1;
    MPI_Group_compare(a, b, &result);
    return result;
}

int main(int argc, char **argv)
{
    MPI_Group world, rev, first, odd, even, tmp;
    int rank, size, i;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MTEST_CHECK(size_of(world) == size, "world group size %d", size_of(world));
    MTEST_CHECK(rank_of(world) == rank, "world group rank %d", rank_of(world));

    /* incl in reverse order */
    int *ranks = mtest_calloc((size_t)size, sizeof(int));
    for (i = 0; i < size; i++)
        ranks[i] = size - 1 - i;
    MPI_Group_incl(world, size, ranks, &rev);
    MTEST_CHECK(rank_of(rev) == size - 1 - rank, "reversed rank %d", rank_of(rev));
    for (i = 0; i < size; i++)
        MTEST_CHECK(world_of(rev, world, i) == size - 1 - i, "reversed member %d is %d", i,
                    world_of(rev, world, i));
    MTEST_CHECK(compare(world, rev) == (size == 1 ? MPI_IDENT : MPI_SIMILAR),
                "compare(world, reversed) = %d", compare(world, rev));
    MTEST_CHECK(compare(world, world) == MPI_IDENT, "compare(world, world)");

    /* range_incl with a negative stride gives the same group */
    int range_rev[1][3] = {{size - 1, 0, -1}};
    MPI_Group_range_incl(world, 1, range_rev, &tmp);
    MTEST_CHECK(compare(tmp, rev) == MPI_IDENT, "range (size-1, 0, -1) differs from incl");
    MPI_Group_free(&tmp);
    MTEST_CHECK(tmp == MPI_GROUP_NULL, "MPI_Group_free did not set MPI_GROUP_NULL");

    /* excl of rank 0 keeps the others in order; a non-member sees MPI_UNDEFINED */
    int zero = 0;
    MPI_Group_excl(world, 1, &zero, &first);
    MTEST_CHECK(size_of(first) == size - 1, "excl size %d", size_of(first));
    MTEST_CHECK(rank_of(first) == (rank == 0 ? MPI_UNDEFINED : rank - 1), "excl rank %d",
                rank_of(first));
    MPI_Group_free(&first);

    /* even and odd ranks through ranges */
    int even_range[1][3] = {{0, size - 1, 2}};
    MPI_Group_range_incl(world, 1, even_range, &even);
    MPI_Group_range_excl(world, 1, even_range, &odd);
    MTEST_CHECK(size_of(even) == (size + 1) / 2, "even size %d", size_of(even));
    MTEST_CHECK(size_of(odd) == size / 2, "odd size %d", size_of(odd));
    MTEST_CHECK(rank_of(even) == (rank % 2 == 0 ? rank / 2 : MPI_UNDEFINED), "even rank %d",
                rank_of(even));
    MTEST_CHECK(rank_of(odd) == (rank % 2 == 1 ? rank / 2 : MPI_UNDEFINED), "odd rank %d",
                rank_of(odd));
    /* `last` need not be a rank, only the ranks computed (it was refused): (first, size, 2)
     * and (last, -1, -2), the first and last chosen so that neither size nor -1 is computed */
    int up = size % 2 == 1 ? 0 : 1, down = size % 2 == 1 ? size - 1 : size - 2;
    int past_end[1][3] = {{up, size, 2}}, past_start[1][3] = {{down, -1, -2}};
    MPI_Group want = up == 0 ? even : odd;
    int rc = MPI_Group_range_incl(world, 1, past_end, &tmp);
    MTEST_CHECK(rc == MPI_SUCCESS && compare(tmp, want) == MPI_IDENT,
                "range (%d, size, 2): rc %d, differs from incl", up, rc);
    if (rc == MPI_SUCCESS)
        MPI_Group_free(&tmp);
    rc = MPI_Group_range_excl(world, 1, past_start, &tmp);
    MTEST_CHECK(rc == MPI_SUCCESS && compare(tmp, odd) == MPI_IDENT,
                "range_excl (%d, -1, -2): rc %d, differs from the odd ranks", down, rc);
    if (rc == MPI_SUCCESS)
        MPI_Group_free(&tmp);

    /* set operations */
    MPI_Group_union(odd, even, &tmp);
    MTEST_CHECK(size_of(tmp) == size, "union size %d", size_of(tmp));
    if (size > 1)
        MTEST_CHECK(world_of(tmp, world, 0) == 1, "union starts with %d, not odd's first member",
                    world_of(tmp, world, 0));
    MTEST_CHECK(compare(tmp, world) == (size <= 1 ? MPI_IDENT : MPI_SIMILAR), "union vs world");
    MPI_Group_free(&tmp);
    MPI_Group_intersection(odd, even, &tmp);
    MTEST_CHECK(tmp == MPI_GROUP_EMPTY, "empty intersection is not MPI_GROUP_EMPTY");
    MTEST_CHECK(size_of(tmp) == 0 && rank_of(tmp) == MPI_UNDEFINED, "empty group size/rank");
    MPI_Group_free(&tmp);
    MTEST_CHECK(tmp == MPI_GROUP_NULL, "freeing MPI_GROUP_EMPTY did not set MPI_GROUP_NULL");
    MPI_Group_intersection(world, rev, &tmp);
    MTEST_CHECK(compare(tmp, world) == MPI_IDENT, "intersection keeps group1's order");
    MPI_Group_free(&tmp);
    MPI_Group_difference(world, odd, &tmp);
    MTEST_CHECK(compare(tmp, even) == MPI_IDENT, "world - odd differs from even");
    MPI_Group_free(&tmp);
    MPI_Group_difference(world, world, &tmp);
    MTEST_CHECK(tmp == MPI_GROUP_EMPTY, "world - world is not MPI_GROUP_EMPTY");
    MPI_Group_free(&tmp);
    MTEST_CHECK(compare(odd, even) == MPI_UNEQUAL || size == 1, "odd vs even not unequal");
    MTEST_CHECK(compare(MPI_GROUP_EMPTY, MPI_GROUP_EMPTY) == MPI_IDENT, "empty vs empty");

    /* translate_ranks: world -> even */
    int in[3] = {MPI_PROC_NULL, 0, size - 1}, out[3] = {-5, -5, -5};
    MPI_Group_translate_ranks(world, 3, in, even, out);
    MTEST_CHECK(out[0] == MPI_PROC_NULL, "MPI_PROC_NULL translated to %d", out[0]);
    MTEST_CHECK(out[1] == 0, "world 0 translated to %d", out[1]);
    MTEST_CHECK(out[2] == ((size - 1) % 2 == 0 ? (size - 1) / 2 : MPI_UNDEFINED),
                "world %d translated to %d", size - 1, out[2]);
    MPI_Group_translate_ranks(world, 1, &in[1], MPI_GROUP_EMPTY, out);
    MTEST_CHECK(out[0] == MPI_UNDEFINED, "translation into the empty group gave %d", out[0]);

    /* incl of nothing gives MPI_GROUP_EMPTY */
    MPI_Group_incl(world, 0, ranks, &tmp);
    MTEST_CHECK(tmp == MPI_GROUP_EMPTY, "incl of 0 ranks is not MPI_GROUP_EMPTY");
    MPI_Group_free(&tmp);

    MPI_Group_free(&odd);
    MPI_Group_free(&even);
    MPI_Group_free(&rev);
    MPI_Group_free(&world);
    free(ranks);
    return mtest_finalize(0);
}
