/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Attributes at scale: a communicator and a datatype with 40,000 attributes each, one keyval
 * per attribute. MPI_Comm_dup and MPI_Type_dup call every copy callback once and copy every
 * value; MPI_Comm_free and MPI_Type_free call every delete callback once with the value of that
 * object. Orders: communicators' delete callbacks run in the reverse order of setting; the copy
 * callbacks in the order of first setting (a value set again keeps its place) and datatypes'
 * deletions in the reverse order are checked on Manifold only, as the standard fixes neither
 * (MPICH 5.0.2 copies the newest first). A copy callback failing halfway fails the
 * dup with its error and the attributes copied before it are deleted again (Manifold only).
 * A delete callback failing halfway fails MPI_Comm_free, which leaves the older attributes in
 * place for a second MPI_Comm_free (Manifold only: the standard leaves the state open).
 * Nothing here is timed: these used to take seconds (quadratic in the number of attributes),
 * which the time limit in the testlist catches.
 */
#include <stdint.h>

#include "mtest.h"

#define NATTR       40000
#define COPY_OFFSET 1000000 /* a copy's value is the original's plus this */

static int keyvals[NATTR], type_keyvals[NATTR];

/* What the callbacks check: the index of the attribute each expects next (copies go up from
 * 0, deletions down), the values they expect (index + copy_base or delete_base), where a
 * callback is told to fail (-1: nowhere), and what went wrong. */
static int next_copy, next_delete, copy_base, delete_base;
static int fail_copy_at = -1, fail_delete_at = -1;
static int copies, deletes, out_of_order, wrong_values;
static int check_copy_order, check_delete_order = 1;

static int index_of(void *extra)
{
    return (int)(intptr_t)extra;
}

static int copy_one(int i, void *in, void *out, int *flag)
{
    if (check_copy_order && i != next_copy)
        out_of_order++;
    next_copy = i + 1;
    copies++;
    if ((intptr_t)in != copy_base + i)
        wrong_values++;
    *flag = 0;
    if (i == fail_copy_at)
        return MPI_ERR_OTHER;
    *(void **)out = (void *)((intptr_t)in + COPY_OFFSET);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_one(int i, void *value)
{
    if (check_delete_order && i != next_delete)
        out_of_order++;
    next_delete = i - 1;
    deletes++;
    if ((intptr_t)value != delete_base + i)
        wrong_values++;
    return i == fail_delete_at ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int comm_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    return copy_one(index_of(extra), in, out, flag);
}

static int comm_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    return delete_one(index_of(extra), value);
}

static int type_copy(MPI_Datatype type, int keyval, void *extra, void *in, void *out, int *flag)
{
    return copy_one(index_of(extra), in, out, flag);
}

static int type_delete(MPI_Datatype type, int keyval, void *value, void *extra)
{
    return delete_one(index_of(extra), value);
}

/* Get ready for a round of callbacks: copies see values index + base, deletions index + base
 * or, on the duplicate, the copied values; the first deletion is that of first_delete. */
static void expect(int base, int delete_copies, int first_delete)
{
    copy_base = base;
    delete_base = delete_copies ? base + COPY_OFFSET : base;
    next_copy = 0;
    next_delete = first_delete;
    copies = deletes = out_of_order = wrong_values = 0;
}

static void check_round(const char *what, int want_copies, int want_deletes)
{
    MTEST_CHECK(copies == want_copies, "%s: %d copy callbacks, expected %d", what, copies,
                want_copies);
    MTEST_CHECK(deletes == want_deletes, "%s: %d delete callbacks, expected %d", what, deletes,
                want_deletes);
    MTEST_CHECK(out_of_order == 0, "%s: %d callbacks out of order", what, out_of_order);
    MTEST_CHECK(wrong_values == 0, "%s: %d callbacks got a wrong value", what, wrong_values);
}

/* A sample of the values (reading all would make the test quadratic on a list). */
static void check_comm_values(MPI_Comm comm, int base, const char *what)
{
    for (int i = 0; i < NATTR; i += NATTR / 50) {
        void *got = NULL;
        int flag = 0;
        MPI_Comm_get_attr(comm, keyvals[i], &got, &flag);
        MTEST_CHECK(flag && (intptr_t)got == base + i, "%s: attribute %d is %s %ld", what, i,
                    flag ? "" : "missing,", (long)(intptr_t)got);
    }
}

static void comm_attrs(void)
{
    MPI_Comm comm, dup, failed = MPI_COMM_NULL;
    int rc;

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int i = 0; i < NATTR; i++) {
        MPI_Comm_create_keyval(comm_copy, comm_delete, &keyvals[i], (void *)(intptr_t)i);
        MPI_Comm_set_attr(comm, keyvals[i], (void *)(intptr_t)(i + 1));
    }
    /* replacing a value keeps the attribute's place (its first setting) */
    expect(1, 0, 0);
    MPI_Comm_set_attr(comm, keyvals[0], (void *)(intptr_t)1);
    check_round("MPI_Comm_set_attr replacing a value", 0, 1);

    expect(1, 0, NATTR - 1);
    rc = MPI_Comm_dup(comm, &dup);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_dup returned %d", rc);
    check_round("MPI_Comm_dup", NATTR, 0);
    check_comm_values(dup, 1 + COPY_OFFSET, "the duplicate");
    check_comm_values(comm, 1, "the original after MPI_Comm_dup");

    expect(1, 1, NATTR - 1);
    MPI_Comm_free(&dup);
    check_round("MPI_Comm_free of the duplicate", 0, NATTR);

    /* a copy callback failing halfway: its error, no communicator, the copies undone */
    expect(1, 1, NATTR / 2 - 1);
    fail_copy_at = NATTR / 2;
    rc = MPI_Comm_dup(comm, &failed);
    fail_copy_at = -1;
    MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Comm_dup");
    MTEST_CHECK(failed == MPI_COMM_NULL, "a failed MPI_Comm_dup set newcomm");
    if (mtest_is_manifold()) {
        /* the undo deletes the copies, whose values are the copied ones */
        MTEST_CHECK(copies == NATTR / 2 + 1, "failing MPI_Comm_dup: %d copy callbacks", copies);
        MTEST_CHECK(deletes == NATTR / 2, "failing MPI_Comm_dup: %d copies deleted, expected %d",
                    deletes, NATTR / 2);
        MTEST_CHECK(out_of_order == 0 && wrong_values == 0,
                    "failing MPI_Comm_dup: %d callbacks out of order, %d wrong values",
                    out_of_order, wrong_values);
    }
    check_comm_values(comm, 1, "the original after a failed MPI_Comm_dup");

    expect(1, 0, NATTR - 1);
    if (mtest_is_manifold()) {
        /* a delete callback failing halfway fails the free; the rest goes with a second one */
        fail_delete_at = NATTR / 3;
        rc = MPI_Comm_free(&comm);
        MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Comm_free");
        MTEST_CHECK(comm != MPI_COMM_NULL, "a failed MPI_Comm_free reset the handle");
        fail_delete_at = -1;
        MTEST_CHECK(deletes == NATTR - NATTR / 3, "failing MPI_Comm_free: %d delete callbacks",
                    deletes);
        next_delete = NATTR / 3;
    }
    rc = MPI_Comm_free(&comm);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_free returned %d", rc);
    check_round("MPI_Comm_free", 0, mtest_is_manifold() ? NATTR + 1 : NATTR);
    for (int i = 0; i < NATTR; i++)
        MPI_Comm_free_keyval(&keyvals[i]);
}

static void type_attrs(void)
{
    MPI_Datatype type, dup;
    int rc;

    MPI_Type_contiguous(2, MPI_INT, &type);
    for (int i = 0; i < NATTR; i++) {
        MPI_Type_create_keyval(type_copy, type_delete, &type_keyvals[i], (void *)(intptr_t)i);
        MPI_Type_set_attr(type, type_keyvals[i], (void *)(intptr_t)(i + 1));
    }
    /* MPICH deletes a datatype's attributes in another order (the standard says none) */
    check_delete_order = mtest_is_manifold();
    expect(1, 0, NATTR - 1);
    rc = MPI_Type_dup(type, &dup);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Type_dup returned %d", rc);
    check_round("MPI_Type_dup", NATTR, 0);
    void *got = NULL;
    int flag = 0;
    MPI_Type_get_attr(dup, type_keyvals[NATTR - 1], &got, &flag);
    MTEST_CHECK(flag && (intptr_t)got == NATTR + COPY_OFFSET, "MPI_Type_dup: last value %ld",
                (long)(intptr_t)got);

    expect(1, 1, NATTR - 1);
    MPI_Type_free(&dup);
    check_round("MPI_Type_free of the duplicate", 0, NATTR);
    expect(1, 0, NATTR - 1);
    MPI_Type_free(&type);
    check_round("MPI_Type_free", 0, NATTR);
    check_delete_order = 1;
    for (int i = 0; i < NATTR; i++)
        MPI_Type_free_keyval(&type_keyvals[i]);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    check_copy_order = mtest_is_manifold();
    double t0 = MPI_Wtime();
    comm_attrs();
    double t1 = MPI_Wtime();
    type_attrs();
    mtest_debug("communicator part %.3f s, datatype part %.3f s\n", t1 - t0, MPI_Wtime() - t1);
    return mtest_finalize(0);
}
