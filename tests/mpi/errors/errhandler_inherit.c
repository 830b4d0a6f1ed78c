/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A new communicator inherits the error handler of its parent. With a user handler on
 * MPI_COMM_WORLD, an MPI_Comm_dup, an MPI_Comm_split, and a dup of that dup all report it
 * through MPI_Comm_get_errhandler, and an error on any of them calls it with that child
 * communicator (not MPI_COMM_WORLD). Changing the handler of a child leaves the parent's alone,
 * and a child of a communicator with MPI_ERRORS_RETURN returns errors as well.
 */
#include <stdio.h>

#include "mtest.h"

static int g_calls;
static MPI_Comm g_comm;
static int g_code;

static void counting_handler(MPI_Comm *comm, int *code, ...)
{
    g_calls++;
    g_comm = *comm;
    g_code = *code;
}

static MPI_Errhandler get_handler(MPI_Comm comm)
{
    MPI_Errhandler current = MPI_ERRHANDLER_NULL;

    MPI_Comm_get_errhandler(comm, &current);
    return current;
}

/* The handler currently on comm is expected; a user handler's new reference is released. */
static void check_handler(MPI_Comm comm, MPI_Errhandler expected, const char *what)
{
    MPI_Errhandler current = get_handler(comm);

    MTEST_CHECK(current == expected, "%s: another error handler than expected", what);
    if (current != MPI_ERRORS_RETURN && current != MPI_ERRORS_ARE_FATAL &&
        current != MPI_ERRORS_ABORT && current != MPI_ERRHANDLER_NULL)
        MPI_Errhandler_free(&current);
}

/* An invalid send on comm must call the user handler once, with comm. */
static void check_error_goes_to_handler(MPI_Comm comm, const char *what)
{
    int value = 0, size, cls = -1;

    MPI_Comm_size(comm, &size);
    g_calls = 0;
    g_comm = MPI_COMM_NULL;
    MPI_Send(&value, 1, MPI_INT, size, 0, comm);
    MTEST_CHECK(g_calls == 1, "%s: handler called %d times", what, g_calls);
    MTEST_CHECK(g_comm == comm, "%s: handler called with another communicator", what);
    MPI_Error_class(g_code, &cls);
    MTEST_CHECK(cls == MPI_ERR_RANK, "%s: handler got class %s", what, mtest_error_class_name(cls));
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh;
    MPI_Comm dup, split, dup2, child;
    int rank, value = 0, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* Children of a communicator with the default handler have the default handler. */
    MPI_Comm_dup(MPI_COMM_WORLD, &child);
    check_handler(child, MPI_ERRORS_ARE_FATAL, "dup of world with the default");
    MPI_Comm_free(&child);

    MPI_Comm_create_errhandler(counting_handler, &eh);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &split);
    MPI_Comm_dup(dup, &dup2);
    check_handler(dup, eh, "dup");
    check_handler(split, eh, "split");
    check_handler(dup2, eh, "dup of dup");

    check_error_goes_to_handler(dup, "dup");
    check_error_goes_to_handler(split, "split");
    check_error_goes_to_handler(dup2, "dup of dup");

    /* A child's handler is its own: changing it leaves the parent alone. */
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    check_handler(MPI_COMM_WORLD, eh, "world after changing the dup");
    check_handler(dup2, eh, "dup of dup after changing the dup");
    check_error_goes_to_handler(MPI_COMM_WORLD, "world after changing the dup");

    /* And a child of the dup now inherits MPI_ERRORS_RETURN. */
    MPI_Comm_dup(dup, &child);
    check_handler(child, MPI_ERRORS_RETURN, "dup of a dup with MPI_ERRORS_RETURN");
    g_calls = 0;
    rc = MPI_Send(&value, 1, MPI_INT, 0, -5, child);
    MTEST_CHECK_ERR(rc, MPI_ERR_TAG, "MPI_Send");
    MTEST_CHECK(g_calls == 0, "the user handler was called for a child with MPI_ERRORS_RETURN");
    MPI_Comm_free(&child);

    /* The handler outlives its handle while communicators still use it. */
    MPI_Errhandler_free(&eh);
    check_error_goes_to_handler(split, "split after MPI_Errhandler_free");

    MPI_Comm_free(&dup2);
    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize(0);
}
