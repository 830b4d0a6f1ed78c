/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Intercomm_create and MPI_Intercomm_create_from_groups between the lower and upper halves
 * of MPI_COMM_WORLD (unequal at odd sizes): MPI_Comm_test_inter, local and remote sizes and
 * groups, MPI_Comm_compare of the intercommunicator with itself and its duplicate, names,
 * attributes copied by MPI_Comm_dup, and a message each way between the leaders.
 */
#include "mtest.h"

static int copied;

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm, (void)keyval, (void)extra;
    copied++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Check an intercommunicator between the halves [0, half) and [half, size) of the world. */
static void check_inter(MPI_Comm inter, int half, const char *what)
{
    int wrank, wsize, flag = 0, lsize, rsize, lrank, low;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    low = wrank < half;
    MPI_Comm_test_inter(inter, &flag);
    MTEST_CHECK(flag, "%s: not an intercommunicator", what);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &lrank);
    MTEST_CHECK(lsize == (low ? half : wsize - half), "%s: local size %d", what, lsize);
    MTEST_CHECK(rsize == (low ? wsize - half : half), "%s: remote size %d", what, rsize);
    MTEST_CHECK(lrank == (low ? wrank : wrank - half), "%s: rank %d", what, lrank);

    /* The remote group, translated to world ranks, is the other half in order. */
    MPI_Group rg, wg;
    MPI_Comm_remote_group(inter, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    int n;
    MPI_Group_size(rg, &n);
    for (int i = 0; i < n; i++) {
        int w;
        MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
        MTEST_CHECK(w == (low ? half + i : i), "%s: remote rank %d is world %d", what, i, w);
    }
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);

    /* Leaders exchange their world ranks: remote rank 0 is the other leader. */
    if (lrank == 0) {
        int got = -1;
        MPI_Sendrecv(&wrank, 1, MPI_INT, 0, 5, &got, 1, MPI_INT, 0, 5, inter, MPI_STATUS_IGNORE);
        MTEST_CHECK(got == (low ? half : 0), "%s: leader got %d", what, got);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int half = (wsize + 1) / 2, low = wrank < half;

    MPI_Comm local, inter, dup;
    MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 17, &inter);
    check_inter(inter, half, "intercomm_create");

    int flag = 1;
    MPI_Comm_test_inter(local, &flag);
    MTEST_CHECK(!flag, "an intracommunicator tests as inter");

    int keyval, result;
    MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);
    MPI_Comm_set_attr(inter, keyval, &keyval);
    MPI_Comm_set_name(inter, "halves");
    MPI_Comm_dup(inter, &dup);
    check_inter(dup, half, "dup");
    void *val = NULL;
    MPI_Comm_get_attr(dup, keyval, &val, &flag);
    MTEST_CHECK(flag && val == &keyval && copied == 1, "attribute not copied by dup");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Comm_get_name(inter, name, &len);
    MTEST_CHECK(len == 6, "name length %d", len);
    MPI_Comm_compare(inter, inter, &result);
    MTEST_CHECK(result == MPI_IDENT, "compare with itself: %d", result);
    MPI_Comm_compare(inter, dup, &result);
    MTEST_CHECK(result == MPI_CONGRUENT, "compare with its dup: %d", result);
    MPI_Comm_compare(inter, local, &result);
    MTEST_CHECK(result == MPI_UNEQUAL, "compare with an intracommunicator: %d", result);

    /* The sessions-style constructor, from the world's groups. */
    MPI_Group wg, lg, rg;
    MPI_Comm fg;
    int range[1][3] = {{0, half - 1, 1}}, other[1][3] = {{half, wsize - 1, 1}};
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_range_incl(wg, 1, low ? range : other, &lg);
    MPI_Group_range_incl(wg, 1, low ? other : range, &rg);
    MPI_Intercomm_create_from_groups(lg, 0, rg, 0, "org.manifold.test.halves", MPI_INFO_NULL,
                                     MPI_ERRORS_RETURN, &fg);
    check_inter(fg, half, "from_groups");
    MPI_Errhandler eh;
    MPI_Comm_get_errhandler(fg, &eh);
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "from_groups: errhandler not attached");
    MPI_Errhandler_free(&eh);

    MPI_Comm_free(&fg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&inter);
    MPI_Comm_free_keyval(&keyval);
    MPI_Comm_free(&local);
    return mtest_finalize(0);
}
