/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicator attributes: set/get/delete with a user keyval; MPI_Comm_dup copies through
 * the copy callback (a user one, MPI_COMM_DUP_FN, MPI_COMM_NULL_COPY_FN; flag 0 means not
 * copied) in the order the attributes were set; replacing a value calls the delete callback
 * on the old one; MPI_Comm_delete_attr and MPI_Comm_free call the delete callbacks (at free
 * in the reverse order of setting); a keyval freed while attached keeps working for its
 * attributes (they can still be read and deleted through a saved copy of its value); a delete
 * callback that deletes another attribute of the same communicator (that one's callback runs
 * once, not again at MPI_Comm_free); the predefined MPI_TAG_UB still reads back; the deprecated
 * MPI_Attr_put/get see the same attributes; and MPI_Finalize deletes MPI_COMM_SELF's attributes in
 * the reverse order of setting (checked after finalize, through the exit status).
 */
#include <stdio.h>
#include <string.h>

#include "mtest.h"

#define LOG_MAX 64

/* Which callback ran on which value, in order: "c<value>" or "d<value>" per entry. */
static int log_kind[LOG_MAX], log_value[LOG_MAX], log_n;

static void log_call(int kind, int value)
{
    if (log_n < LOG_MAX) {
        log_kind[log_n] = kind;
        log_value[log_n] = value;
    }
    log_n++;
}

static int values[8];

static int copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    int v = *(int *)in;

    log_call('c', v);
    /* odd values are not copied, even ones become value + 1 (a slot of the static table) */
    *flag = v % 2 == 0;
    if (*flag)
        *(void **)out = &values[v + 1];
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *value, void *extra)
{
    log_call('d', *(int *)value);
    (*(int *)extra)++;
    return MPI_SUCCESS;
}

/* Deletes the attribute of the keyval in *extra from the same communicator. */
static int delete_other_fn(MPI_Comm comm, int keyval, void *value, void *extra)
{
    log_call('d', *(int *)value);
    return MPI_Comm_delete_attr(comm, *(int *)extra);
}

static int expect_log(const char *what, int n, const int *kinds, const int *vals)
{
    int ok = MTEST_CHECK(log_n == n, "%s: %d callbacks ran, expected %d", what, log_n, n);

    for (int i = 0; ok && i < n; i++)
        ok = MTEST_CHECK(log_kind[i] == kinds[i] && log_value[i] == vals[i],
                         "%s: callback %d was %c%d, expected %c%d", what, i, log_kind[i],
                         log_value[i], kinds[i], vals[i]);
    log_n = 0;
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Comm dup, dup2;
    int k_user, k_dup, k_null, k_self1, k_self2, deleted = 0, self_deleted = 0, flag;
    void *got;

    for (int i = 0; i < 8; i++)
        values[i] = i;
    mtest_init(&argc, &argv);
    MPI_Comm_create_keyval(copy_fn, delete_fn, &k_user, &deleted);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &k_dup, NULL);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k_null, &deleted);
    MTEST_CHECK(k_user != MPI_KEYVAL_INVALID && k_user != k_dup && k_dup != k_null,
                "keyvals %d %d %d", k_user, k_dup, k_null);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    flag = 1;
    MPI_Comm_get_attr(dup, k_user, &got, &flag);
    MTEST_CHECK(flag == 0, "attribute present before it was set");
    MPI_Comm_set_attr(dup, k_user, &values[1]);
    MPI_Comm_set_attr(dup, k_user, &values[2]); /* replaces: delete(1) */
    {
        int k[] = {'d'}, v[] = {1};
        expect_log("replace", 1, k, v);
    }
    MPI_Comm_set_attr(dup, k_dup, &values[5]);
    MPI_Comm_set_attr(dup, k_null, &values[6]);
    MPI_Comm_get_attr(dup, k_user, &got, &flag);
    MTEST_CHECK(flag && got == &values[2], "get after set: flag %d", flag);

    /* dup: user copy (2 -> 3), DUP_FN (same pointer), NULL_COPY_FN (not copied) */
    MPI_Comm_dup(dup, &dup2);
    {
        int k[] = {'c'}, v[] = {2};
        expect_log("dup", 1, k, v);
    }
    MPI_Comm_get_attr(dup2, k_user, &got, &flag);
    MTEST_CHECK(flag && got == &values[3], "copied attribute: flag %d", flag);
    MPI_Comm_get_attr(dup2, k_dup, &got, &flag);
    MTEST_CHECK(flag && got == &values[5], "MPI_COMM_DUP_FN attribute: flag %d", flag);
    MPI_Comm_get_attr(dup2, k_null, &got, &flag);
    MTEST_CHECK(!flag, "MPI_COMM_NULL_COPY_FN attribute was copied");

    /* a dup of dup2: its user attribute is odd (3), so the copy callback declines it */
    MPI_Comm dup3;
    MPI_Comm_dup(dup2, &dup3);
    MPI_Comm_get_attr(dup3, k_user, &got, &flag);
    MTEST_CHECK(!flag, "attribute copied although the callback returned flag 0");
    log_n = 0;
    MPI_Comm_free(&dup3);

    /* delete_attr, then deleting again is fine */
    MPI_Comm_delete_attr(dup2, k_user);
    MPI_Comm_delete_attr(dup2, k_user);
    {
        int k[] = {'d'}, v[] = {3};
        expect_log("delete_attr", 1, k, v);
    }
    MPI_Comm_get_attr(dup2, k_user, &got, &flag);
    MTEST_CHECK(!flag, "attribute still there after delete_attr");
    MPI_Comm_free(&dup2);

    /* free the keyvals while attached: the attributes still get their delete callbacks,
     * in the reverse order of setting (k_null's 6, then k_user's 2) */
    MPI_Comm_free_keyval(&k_user);
    MTEST_CHECK(k_user == MPI_KEYVAL_INVALID, "free_keyval did not reset the keyval");
    MPI_Comm_free_keyval(&k_null);
    log_n = 0;
    deleted = 0;
    MPI_Comm_free(&dup);
    {
        int k[] = {'d', 'd'}, v[] = {6, 2};
        expect_log("free", 2, k, v);
    }
    MTEST_CHECK(deleted == 2, "extra_state counted %d deletions", deleted);
    MPI_Comm_free_keyval(&k_dup);

    /* a freed keyval's attribute can still be read and deleted (MPI-4.1 7.7.2) */
    int k_gone, k_saved;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k_gone, &deleted);
    k_saved = k_gone;
    MPI_Comm_set_attr(MPI_COMM_WORLD, k_gone, &values[1]);
    MPI_Comm_free_keyval(&k_gone);
    got = NULL;
    flag = 0;
    int rc_get = MPI_Comm_get_attr(MPI_COMM_WORLD, k_saved, &got, &flag);
    MTEST_CHECK(rc_get == MPI_SUCCESS && flag && got == &values[1],
                "get_attr of a freed keyval still attached: rc %d flag %d", rc_get, flag);
    log_n = 0;
    int rc_del = MPI_Comm_delete_attr(MPI_COMM_WORLD, k_saved);
    MTEST_CHECK(rc_del == MPI_SUCCESS, "delete_attr of a freed keyval still attached: rc %d",
                rc_del);
    {
        int k[] = {'d'}, v[] = {1};
        expect_log("delete_attr of a freed keyval", 1, k, v);
    }

    /* A's delete callback deletes B: B's callback runs once (B set first, so it comes last) */
    int k_a, k_b;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k_b, &deleted);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_other_fn, &k_a, &k_b);
    MPI_Comm nested;
    MPI_Comm_dup(MPI_COMM_WORLD, &nested);
    MPI_Comm_set_attr(nested, k_b, &values[5]);
    MPI_Comm_set_attr(nested, k_a, &values[3]);
    log_n = 0;
    MPI_Comm_free(&nested);
    {
        int k[] = {'d', 'd'}, v[] = {3, 5};
        expect_log("a delete callback deleting another attribute", 2, k, v);
    }
    MPI_Comm_free_keyval(&k_a);
    MPI_Comm_free_keyval(&k_b);

    /* predefined attribute still answered */
    int *tag_ub = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    MTEST_CHECK(flag && tag_ub != NULL && *tag_ub >= 32767, "MPI_TAG_UB");

    /* the MPI-1 names */
    int k_old;
    MPI_Keyval_create(MPI_NULL_COPY_FN, MPI_NULL_DELETE_FN, &k_old, NULL);
    MPI_Attr_put(MPI_COMM_WORLD, k_old, &values[7]);
    MPI_Comm_get_attr(MPI_COMM_WORLD, k_old, &got, &flag);
    MTEST_CHECK(flag && got == &values[7], "MPI_Attr_put value not seen by get_attr");
    MPI_Attr_get(MPI_COMM_WORLD, k_old, &got, &flag);
    MTEST_CHECK(flag && got == &values[7], "MPI_Attr_get");
    MPI_Attr_delete(MPI_COMM_WORLD, k_old);
    MPI_Keyval_free(&k_old);

    /* MPI_COMM_SELF's attributes go at MPI_Finalize, last set first */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k_self1, &self_deleted);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &k_self2, &self_deleted);
    MPI_Comm_set_attr(MPI_COMM_SELF, k_self1, &values[4]);
    MPI_Comm_set_attr(MPI_COMM_SELF, k_self2, &values[0]);
    log_n = 0;
    int rc = mtest_finalize(0);
    if (self_deleted != 2 || log_n != 2 || log_value[0] != 0 || log_value[1] != 4) {
        fprintf(stderr, "MPI_Finalize: %d delete callbacks on MPI_COMM_SELF, order %d %d\n",
                self_deleted, log_value[0], log_value[1]);
        return 1;
    }
    return rc;
}
