/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Invalid attribute calls, with MPI_ERRORS_RETURN: MPI_KEYVAL_INVALID, a freed keyval, a
 * datatype or window keyval used on a communicator, and a predefined keyval passed to
 * set_attr, delete_attr or free_keyval all give MPI_ERR_KEYVAL (the freed and wrong-kind
 * keyvals on Manifold only: MPICH 5.0.2 does not check them); MPI_COMM_NULL gives
 * MPI_ERR_COMM; MPI_Attr_get reports under its own name. An error returned by a copy callback is
 * what MPI_Comm_dup returns (newcomm untouched), one returned by a delete callback is what
 * MPI_Comm_delete_attr and MPI_Comm_free return (the communicator stays usable until its attribute
 * can go); a user error code from a callback comes back unchanged.
 */
#include "mtest.h"

static int fail_delete = 1, user_code = MPI_SUCCESS;

static int copy_fails(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    *flag = 0;
    return MPI_ERR_OTHER;
}

static int delete_may_fail(MPI_Comm comm, int keyval, void *value, void *extra)
{
    return user_code != MPI_SUCCESS ? user_code : fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    MPI_Comm dup, out = MPI_COMM_NULL;
    int k, k_type, k_win, freed, flag, rc, predefined = MPI_TAG_UB;
    void *got;

    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &flag);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_KEYVAL, "MPI_Comm_set_attr", "comm_keyval");
    rc = MPI_Attr_put(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &flag);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_KEYVAL, "MPI_Attr_put", "keyval");
    rc = MPI_Type_set_attr(MPI_INT, MPI_KEYVAL_INVALID, &flag);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_KEYVAL, "MPI_Type_set_attr", "type_keyval");
    rc = MPI_Type_free_keyval(NULL);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Type_free_keyval", "type_keyval");
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &got, &flag);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_KEYVAL, "MPI_Comm_get_attr", "comm_keyval");
    /* the MPI-1 form reports under its own name */
    rc = MPI_Attr_get(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &got, &flag);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_KEYVAL, "MPI_Attr_get", "keyval");
    rc = MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, NULL, &flag);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Attr_get", "attribute_val");
    rc = MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, &flag);
    MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
    rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB);
    MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr");
    rc = MPI_Comm_free_keyval(&predefined);
    MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval");

    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &freed, NULL);
    k = freed;
    MPI_Comm_free_keyval(&freed);
    if (mtest_is_manifold()) {
        /* MPICH 5.0.2 does not recognise a freed keyval */
        rc = MPI_Comm_set_attr(MPI_COMM_WORLD, k, &flag);
        MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
        rc = MPI_Comm_free_keyval(&k);
        MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval");
    }

    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &k_type, NULL);
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &k_win, NULL);
    if (mtest_is_manifold()) {
        /* MPICH 5.0.2 does not check the object kind of a keyval */
        rc = MPI_Comm_set_attr(MPI_COMM_WORLD, k_type, &flag);
        MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
        rc = MPI_Comm_get_attr(MPI_COMM_WORLD, k_win, &got, &flag);
        MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
        rc = MPI_Comm_free_keyval(&k_type);
        MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval");
    }
    MPI_Type_free_keyval(&k_type);
    MPI_Win_free_keyval(&k_win);
    MTEST_CHECK(k_type == MPI_KEYVAL_INVALID && k_win == MPI_KEYVAL_INVALID,
                "type/win free_keyval did not reset the keyval");

    rc = MPI_Comm_set_attr(MPI_COMM_NULL, 1, &flag);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_set_attr");

    /* callback errors come back to the caller */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_keyval(copy_fails, delete_may_fail, &k, NULL);
    MPI_Comm_set_attr(dup, k, &flag);
    rc = MPI_Comm_dup(dup, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Comm_dup");
    MTEST_CHECK(out == MPI_COMM_NULL, "failed MPI_Comm_dup set newcomm");
    rc = MPI_Comm_delete_attr(dup, k);
    MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Comm_delete_attr");
    rc = MPI_Comm_free(&dup);
    MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Comm_free");
    MTEST_CHECK(dup != MPI_COMM_NULL, "MPI_Comm_free reset the handle although it failed");
    fail_delete = 0;
    rc = MPI_Comm_free(&dup);
    MTEST_CHECK(rc == MPI_SUCCESS && dup == MPI_COMM_NULL, "MPI_Comm_free once deletable: %d", rc);
    MPI_Comm_free_keyval(&k);

    /* A user error code from a callback comes back as it is, with its string (it came back
     * as its class, whose string says less). */
    int user_class;
    MPI_Add_error_class(&user_class);
    MPI_Add_error_code(user_class, &user_code);
    MPI_Add_error_string(user_code, "my library: resource busy");
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_may_fail, &k, NULL);
    MPI_Comm_set_attr(MPI_COMM_WORLD, k, &flag);
    rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, k);
    MTEST_CHECK(rc == user_code, "MPI_Comm_delete_attr returned %d, not the callback's %d", rc,
                user_code);
    user_code = MPI_SUCCESS;
    MPI_Comm_delete_attr(MPI_COMM_WORLD, k);
    MPI_Comm_free_keyval(&k);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize(0);
}
