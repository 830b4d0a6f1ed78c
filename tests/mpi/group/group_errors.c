/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Invalid group calls, with MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF: invalid
 * group handles (MPI_GROUP_NULL, a freed group, a communicator or a datatype passed as a group)
 * give MPI_ERR_GROUP (a group passed as a datatype MPI_ERR_TYPE); ranks outside the group or
 * repeated give MPI_ERR_RANK in incl, excl,
 * range_incl, range_excl (checked on Manifold only: MPICH 5.0.2 says MPI_ERR_ARG) and
 * translate_ranks; a negative count, a zero stride or a stride
 * leading away from the range's end give MPI_ERR_ARG. Output handles are left alone by failed
 * calls, and the groups still work afterwards.
 */
#include "mtest.h"

/* MPICH 5.0.2 reports bad ranks in ranges as MPI_ERR_ARG; the class is checked on Manifold
 * only, elsewhere the call just has to fail. */
static void check_range_err(int rc, int expected_class, const char *fname)
{
    if (mtest_is_manifold())
        MTEST_CHECK_ERR(rc, expected_class, fname);
    else
        MTEST_CHECK(rc != MPI_SUCCESS, "%s succeeded on a bad range", fname);
}

int main(int argc, char **argv)
{
    MPI_Group world, freed, out = MPI_GROUP_NULL;
    int size, rc, value = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_group(MPI_COMM_WORLD, &world);

    /* invalid handles */
    rc = MPI_Group_size(MPI_GROUP_NULL, &value);
    MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_size");
    rc = MPI_Group_rank(MPI_GROUP_NULL, &value);
    MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_rank");
    MPI_Comm_group(MPI_COMM_WORLD, &freed);
    MPI_Group stale = freed;
    MPI_Group_free(&freed);
    rc = MPI_Group_union(world, MPI_GROUP_NULL, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_union");
    rc = MPI_Group_compare(MPI_GROUP_NULL, world, &value);
    MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_compare");
    freed = MPI_GROUP_NULL;
    rc = MPI_Group_free(&freed);
    MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_free");
    if (mtest_is_manifold()) {
        /* A freed group and a handle of another kind: both are recognised as invalid
         * (MPICH 5.0.2 does not check either). */
        rc = MPI_Group_free(&stale);
        MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_free");
        rc = MPI_Group_size(stale, &value);
        MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_size");
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        rc = MPI_Group_size((MPI_Group)(void *)dup, &value);
        MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_size");
        MPI_Comm_free(&dup);
        /* a derived datatype as a group and a group as a datatype (the two kinds once
         * shared their tag and passed for each other, reading past the group) */
        MPI_Datatype dt;
        MPI_Type_contiguous(3, MPI_INT, &dt);
        MPI_Type_commit(&dt);
        rc = MPI_Group_size((MPI_Group)(void *)dt, &value);
        MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_size");
        rc = MPI_Type_size((MPI_Datatype)(void *)world, &value);
        MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_size");
        MPI_Type_free(&dt);
    }

    /* bad ranks */
    int bad = size, twice[2] = {0, 0}, neg = -1;
    rc = MPI_Group_incl(world, 1, &bad, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Group_incl");
    rc = MPI_Group_incl(world, 1, &neg, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Group_incl");
    if (size >= 2 && mtest_is_manifold()) {
        /* MPICH 5.0.2 does not check for repeated ranks */
        rc = MPI_Group_incl(world, 2, twice, &out);
        MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Group_incl");
        rc = MPI_Group_excl(world, 2, twice, &out);
        MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Group_excl");
    }
    rc = MPI_Group_excl(world, 1, &bad, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Group_excl");
    int range_out[1][3] = {{0, size, 1}};
    rc = MPI_Group_range_incl(world, 1, range_out, &out);
    check_range_err(rc, MPI_ERR_RANK, "MPI_Group_range_incl");
    rc = MPI_Group_range_excl(world, 1, range_out, &out);
    check_range_err(rc, MPI_ERR_RANK, "MPI_Group_range_excl");
    int range_twice[2][3] = {{0, 0, 1}, {0, 0, 1}};
    rc = MPI_Group_range_incl(world, 2, range_twice, &out);
    check_range_err(rc, MPI_ERR_RANK, "MPI_Group_range_incl");
    rc = MPI_Group_translate_ranks(world, 1, &bad, world, &value);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Group_translate_ranks");

    /* bad arguments */
    rc = MPI_Group_incl(world, -1, &bad, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Group_incl");
    int range_zero[1][3] = {{0, 0, 0}};
    rc = MPI_Group_range_incl(world, 1, range_zero, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Group_range_incl");
    if (size >= 2) {
        /* strides away from last, also ones longer than the range (their quotient is 0) */
        int range_away[3][1][3] = {{{1, 0, 1}}, {{0, 1, -5}}, {{1, 0, 5}}};
        for (int i = 0; i < 3; i++) {
            rc = MPI_Group_range_incl(world, 1, range_away[i], &out);
            MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Group_range_incl");
            rc = MPI_Group_range_excl(world, 1, range_away[i], &out);
            MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Group_range_excl");
        }
    }
    MTEST_CHECK(out == MPI_GROUP_NULL, "a failed call set the output group");

    /* still works */
    rc = MPI_Group_incl(world, 1, &twice[0], &out);
    MTEST_CHECK(rc == MPI_SUCCESS && out != MPI_GROUP_NULL, "incl after errors failed");
    MPI_Group_size(out, &value);
    MTEST_CHECK(value == 1, "incl of one rank has size %d", value);
    MPI_Group_free(&out);
    MPI_Group_free(&world);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize(0);
}
