/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Invalid communicator calls, with MPI_ERRORS_RETURN on MPI_COMM_WORLD and MPI_COMM_SELF
 * (errors on an invalid communicator argument may be raised on either). MPI_Comm_free of
 * MPI_COMM_WORLD, MPI_COMM_SELF or MPI_COMM_NULL fails with MPI_ERR_COMM and leaves the
 * predefined communicators usable; MPI_COMM_NULL is rejected with MPI_ERR_COMM by
 * MPI_Comm_dup, MPI_Comm_split, MPI_Comm_rank, MPI_Comm_size and MPI_Comm_compare; NULL
 * output pointers give MPI_ERR_ARG. Manifold only (MPICH 5.0.2 accepts it): MPI_Comm_split
 * with a negative color other than MPI_UNDEFINED fails with MPI_ERR_ARG. Afterwards dup,
 * split and point-to-point still work.
 */
#include <stdio.h>

#include <string.h>

#include "mtest.h"

static void check_free_predefined(MPI_Comm predefined, const char *what)
{
    MPI_Comm handle = predefined;
    int rc = MPI_Comm_free(&handle);

    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_free");
    MTEST_CHECK(handle == predefined, "MPI_Comm_free(%s) changed the handle", what);
}

static void check_null_comm(void)
{
    MPI_Comm null_comm = MPI_COMM_NULL, out = MPI_COMM_NULL;
    int value = -1, rc;

    rc = MPI_Comm_free(&null_comm);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_free");
    rc = MPI_Comm_dup(MPI_COMM_NULL, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_dup");
    rc = MPI_Comm_split(MPI_COMM_NULL, 0, 0, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_split");
    rc = MPI_Comm_rank(MPI_COMM_NULL, &value);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_rank");
    rc = MPI_Comm_size(MPI_COMM_NULL, &value);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_size");
    rc = MPI_Comm_compare(MPI_COMM_NULL, MPI_COMM_WORLD, &value);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_compare");
    if (mtest_is_manifold()) { /* the message names the argument (it said "comm" for both) */
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        MTEST_CHECK(strstr(text, "comm1") != NULL, "message does not name comm1: %s", text);
        rc = MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_NULL, &value);
        MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_compare");
        MPI_Error_string(rc, text, &len);
        MTEST_CHECK(strstr(text, "comm2") != NULL, "message does not name comm2: %s", text);
    }
    MTEST_CHECK(out == MPI_COMM_NULL, "a failed call set the output communicator");
}

/* NULL output pointers are invalid arguments. */
static void check_null_outputs(void)
{
    int rc;

    rc = MPI_Comm_split(MPI_COMM_WORLD, 0, 0, NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Comm_split");
    rc = MPI_Comm_dup(MPI_COMM_WORLD, NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Comm_dup");
    rc = MPI_Comm_size(MPI_COMM_WORLD, NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Comm_size");
    rc = MPI_Comm_rank(MPI_COMM_WORLD, NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Comm_rank");
}

/* A color must be non-negative or MPI_UNDEFINED. Every process passes the same bad color, so
 * none waits in the collective alone; if the library accepts it, the result is freed so the
 * run can go on. */
static void check_bad_color(void)
{
    MPI_Comm out = MPI_COMM_NULL;
    int rc = MPI_Comm_split(MPI_COMM_WORLD, -5, 0, &out);

    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Comm_split");
    if (rc == MPI_SUCCESS && out != MPI_COMM_NULL)
        MPI_Comm_free(&out);
}

/* After the errors: a dup, a split and messages on both still work. */
static void check_still_works(void)
{
    MPI_Comm dup = MPI_COMM_NULL, split = MPI_COMM_NULL;
    int rank, size, got = -1, rc;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_dup after the errors returned %d", rc);
    rc = MPI_Comm_split(MPI_COMM_WORLD, 0, -rank, &split);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_split after the errors returned %d", rc);
    if (rc != MPI_SUCCESS || dup == MPI_COMM_NULL || split == MPI_COMM_NULL)
        return;
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 1, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 1, dup, MPI_STATUS_IGNORE);
    MTEST_CHECK(got == (rank + size - 1) % size, "dup: got %d", got);
    /* in the reversed split, the right neighbour is world rank - 1 */
    got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, (size - rank) % size, 2, &got, 1, MPI_INT,
                 (2 * size - 2 - rank) % size, 2, split, MPI_STATUS_IGNORE);
    MTEST_CHECK(got == (rank + 1) % size, "reversed split: got %d", got);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    check_free_predefined(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    check_free_predefined(MPI_COMM_SELF, "MPI_COMM_SELF");
    check_null_comm();
    check_null_outputs();
    if (mtest_is_manifold())
        check_bad_color();
    check_still_works();

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize(0);
}
