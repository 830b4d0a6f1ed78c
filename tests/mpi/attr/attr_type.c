/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Datatype attributes (MPI-4.1 section 7.7.4): set, get, overwrite and delete on derived and
 * predefined datatypes; MPI_Type_dup copies them through the copy callbacks in the order they
 * were set (MPI_TYPE_DUP_FN copies the value, MPI_TYPE_NULL_COPY_FN drops it, a user callback
 * decides with its flag); MPI_Type_free runs the delete callbacks (in either order); a failing copy
 * callback is what MPI_Type_dup returns and a failing delete callback what MPI_Type_free returns.
 * Errors: a communicator keyval or MPI_KEYVAL_INVALID on a datatype is MPI_ERR_KEYVAL,
 * MPI_DATATYPE_NULL is MPI_ERR_TYPE; window attribute calls on MPI_WIN_NULL are MPI_ERR_WIN.
 */
#include "mtest.h"

#include <string.h>

#define LOG_MAX 32

/* What the callbacks saw, in order: 'c'/'d' followed by the value's first char. */
static char log_buf[LOG_MAX * 2 + 1];
static int log_len;
static MPI_Datatype last_type;
static int fail_copy, fail_delete;

static void log_event(char what, void *value)
{
    if (log_len < LOG_MAX * 2) {
        log_buf[log_len++] = what;
        log_buf[log_len++] = *(const char *)value;
        log_buf[log_len] = '\0';
    }
}

static int copy_cb(MPI_Datatype type, int keyval, void *extra, void *in, void *out, int *flag)
{
    last_type = type;
    log_event('c', in);
    if (fail_copy) {
        *flag = 0;
        return MPI_ERR_OTHER;
    }
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_cb(MPI_Datatype type, int keyval, void *value, void *extra)
{
    last_type = type;
    log_event('d', value);
    return fail_delete ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void expect_log(const char *want, const char *what)
{
    MTEST_CHECK(strcmp(log_buf, want) == 0, "%s: callbacks ran as '%s', expected '%s'", what,
                log_buf, want);
    log_len = 0;
    log_buf[0] = '\0';
}

static void expect_attr(MPI_Datatype t, int keyval, void *want, const char *what)
{
    void *got = NULL;
    int flag = -1;
    int rc = MPI_Type_get_attr(t, keyval, &got, &flag);
    MTEST_CHECK(rc == MPI_SUCCESS, "%s: MPI_Type_get_attr returned %d", what, rc);
    if (want == NULL)
        MTEST_CHECK(flag == 0, "%s: attribute present, expected none", what);
    else
        MTEST_CHECK(flag == 1 && got == want, "%s: flag %d value %p, expected %p", what, flag, got,
                    want);
}

int main(int argc, char **argv)
{
    static char a[] = "a", b[] = "b", c[] = "c", x[] = "x";
    MPI_Datatype vec, dup, dup2 = MPI_DATATYPE_NULL;
    int k_user, k_dup, k_null, k_comm, k_win, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Type_create_keyval(copy_cb, delete_cb, &k_user, NULL);
    MPI_Type_create_keyval(MPI_TYPE_DUP_FN, delete_cb, &k_dup, NULL);
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &k_null, NULL);
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);

    /* set, get, overwrite (the old value's delete callback first), delete */
    expect_attr(vec, k_user, NULL, "before set");
    MPI_Type_set_attr(vec, k_user, a);
    expect_attr(vec, k_user, a, "after set");
    MPI_Type_set_attr(vec, k_user, b);
    expect_log("da", "overwrite");
    MTEST_CHECK(last_type == vec, "delete callback got another datatype handle");
    expect_attr(vec, k_user, b, "after overwrite");
    MPI_Type_delete_attr(vec, k_user);
    expect_log("db", "delete");
    expect_attr(vec, k_user, NULL, "after delete");
    rc = MPI_Type_delete_attr(vec, k_user);
    MTEST_CHECK(rc == MPI_SUCCESS, "deleting an absent attribute returned %d", rc);
    expect_log("", "delete of nothing");

    /* dup: copies in the order set; the null copy function drops its attribute */
    MPI_Type_set_attr(vec, k_dup, c);
    MPI_Type_set_attr(vec, k_null, x);
    MPI_Type_set_attr(vec, k_user, a);
    MPI_Type_dup(vec, &dup);
    expect_log("ca", "dup");
    MTEST_CHECK(last_type == vec, "copy callback did not get the old datatype");
    expect_attr(dup, k_dup, c, "dup: MPI_TYPE_DUP_FN");
    expect_attr(dup, k_null, NULL, "dup: MPI_TYPE_NULL_COPY_FN");
    expect_attr(dup, k_user, a, "dup: user copy");
    expect_attr(vec, k_null, x, "dup leaves the original");

    /* a failing copy callback fails the dup, whose copies are undone */
    fail_copy = 1;
    rc = MPI_Type_dup(dup, &dup2);
    fail_copy = 0;
    MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Type_dup");
    MTEST_CHECK(dup2 == MPI_DATATYPE_NULL, "MPI_Type_dup set newtype although it failed");
    log_len = 0;

    /* free: delete callbacks in the reverse order of setting; a failing one makes the free
     * erroneous: Manifold returns its error and keeps the type (MPICH 5.0.2 frees it anyway) */
    if (mtest_is_manifold()) {
        fail_delete = 1;
        rc = MPI_Type_free(&dup);
        fail_delete = 0;
        MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Type_free");
        expect_log("da", "failed free");
        expect_attr(dup, k_user, a, "after a failed free");
    }
    rc = MPI_Type_free(&dup);
    MTEST_CHECK(rc == MPI_SUCCESS && dup == MPI_DATATYPE_NULL, "MPI_Type_free: %d", rc);
    /* the standard leaves the order of deletion at free open (Manifold: reverse of setting) */
    expect_log(strcmp(log_buf, "dcda") == 0 ? "dcda" : "dadc", "free");
    MPI_Type_free(&vec);
    expect_log(strcmp(log_buf, "dcda") == 0 ? "dcda" : "dadc", "free of the original");

    /* predefined datatypes hold attributes too */
    MPI_Type_set_attr(MPI_INT, k_user, a);
    expect_attr(MPI_INT, k_user, a, "MPI_INT");
    expect_attr(MPI_DOUBLE, k_user, NULL, "MPI_DOUBLE");
    MPI_Type_dup(MPI_INT, &dup);
    expect_log("ca", "dup of MPI_INT");
    expect_attr(dup, k_user, a, "dup of MPI_INT");
    MPI_Type_free(&dup);
    expect_log("da", "free of the dup of MPI_INT");
    MPI_Type_delete_attr(MPI_INT, k_user);
    expect_log("da", "delete on MPI_INT");

    /* errors */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &k_comm, NULL);
    rc = MPI_Type_set_attr(MPI_INT, MPI_KEYVAL_INVALID, a);
    MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Type_set_attr");
    rc = MPI_Type_set_attr(MPI_DATATYPE_NULL, k_user, a);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_set_attr");
    if (mtest_is_manifold()) {
        /* MPICH 5.0.2 does not check the keyval's object kind */
        rc = MPI_Type_set_attr(MPI_INT, k_comm, a);
        MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Type_set_attr");
        rc = MPI_Comm_set_attr(MPI_COMM_WORLD, k_user, a);
        MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
    }
    MPI_Comm_free_keyval(&k_comm);

    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &k_win, NULL);
    rc = MPI_Win_set_attr(MPI_WIN_NULL, k_win, a);
    MTEST_CHECK_ERR(rc, MPI_ERR_WIN, "MPI_Win_set_attr");
    rc = MPI_Win_delete_attr(MPI_WIN_NULL, k_win);
    MTEST_CHECK_ERR(rc, MPI_ERR_WIN, "MPI_Win_delete_attr");
    MPI_Win_free_keyval(&k_win);
    MTEST_CHECK(k_win == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval did not reset the keyval");

    MPI_Type_free_keyval(&k_user);
    MPI_Type_free_keyval(&k_dup);
    MPI_Type_free_keyval(&k_null);
    MTEST_CHECK(k_user == MPI_KEYVAL_INVALID, "MPI_Type_free_keyval did not reset the keyval");
    return mtest_finalize(mtest_error_count());
}
