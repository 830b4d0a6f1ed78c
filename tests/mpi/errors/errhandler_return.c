/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_ERRORS_RETURN on a communicator. The handlers of MPI_COMM_WORLD and MPI_COMM_SELF start
 * as MPI_ERRORS_ARE_FATAL; after MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN)
 * MPI_Comm_get_errhandler gives MPI_ERRORS_RETURN there (and MPI_COMM_SELF keeps its own
 * handler). Invalid calls on MPI_COMM_WORLD then return an error code of the right class
 * (invalid rank, tag, count, datatype; a truncated receive) with a non-empty error string,
 * and after each one a ring exchange checks that the library still works.
 * MPI_Comm_call_errhandler with MPI_ERRORS_RETURN returns MPI_SUCCESS, as the standard says
 * for a handler that returns. Finally the fatal handler is put back.
 */
#include <stdio.h>

#include "mtest.h"

#define COUNT 4

static int g_rank, g_size;

/* A ring exchange that must work between the error cases. */
static void check_still_works(int round)
{
    int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size;
    int out[COUNT], in[COUNT] = {0}, rc;

    for (int i = 0; i < COUNT; i++)
        out[i] = g_rank * 1000 + round * 10 + i;
    rc = MPI_Sendrecv(out, COUNT, MPI_INT, right, round, in, COUNT, MPI_INT, left, round,
                      MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_CHECK(rc == MPI_SUCCESS, "round %d: exchange after an error returned %d", round, rc);
    for (int i = 0; i < COUNT; i++)
        MTEST_CHECK(in[i] == left * 1000 + round * 10 + i, "round %d: element %d is %d", round, i,
                    in[i]);
}

static void check_handler(MPI_Comm comm, MPI_Errhandler expected, const char *what)
{
    MPI_Errhandler current = MPI_ERRHANDLER_NULL;
    int rc = MPI_Comm_get_errhandler(comm, &current);

    MTEST_CHECK(rc == MPI_SUCCESS && current == expected, "%s: unexpected error handler", what);
}

/* Rank 1 sends COUNT ints to rank 0, which receives into a buffer of COUNT / 2: the receive
 * returns MPI_ERR_TRUNCATE. */
static void check_truncation(void)
{
    int buf[COUNT] = {1, 2, 3, 4}, rc;
    MPI_Status status;

    if (g_size < 2 || g_rank > 1)
        return;
    if (g_rank == 1) {
        rc = MPI_Send(buf, COUNT, MPI_INT, 0, 77, MPI_COMM_WORLD);
        MTEST_CHECK(rc == MPI_SUCCESS, "send of the message to truncate returned %d", rc);
        return;
    }
    rc = MPI_Recv(buf, COUNT / 2, MPI_INT, 1, 77, MPI_COMM_WORLD, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Recv");
}

int main(int argc, char **argv)
{
    int value = 0, rc, round = 0;
    MPI_Request req = MPI_REQUEST_NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);

    check_handler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, "default on MPI_COMM_WORLD");
    check_handler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL, "default on MPI_COMM_SELF");
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_set_errhandler returned %d", rc);
    check_handler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, "MPI_COMM_WORLD after set");
    check_handler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL, "MPI_COMM_SELF after setting WORLD");

    rc = MPI_Send(&value, 1, MPI_INT, g_size, 0, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Send");
    check_still_works(round++);

    rc = MPI_Irecv(&value, 1, MPI_INT, -7, 0, MPI_COMM_WORLD, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Irecv");
    check_still_works(round++);

    rc = MPI_Send(&value, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TAG, "MPI_Send");
    check_still_works(round++);

    rc = MPI_Send(&value, -1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Send");
    check_still_works(round++);

    rc = MPI_Send(&value, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Send");
    check_still_works(round++);

    check_truncation();
    check_still_works(round++);

    rc = MPI_Comm_call_errhandler(MPI_COMM_WORLD, MPI_ERR_OTHER);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_call_errhandler with MPI_ERRORS_RETURN returned %d",
                rc);

    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MTEST_CHECK(rc == MPI_SUCCESS, "restoring MPI_ERRORS_ARE_FATAL returned %d", rc);
    check_handler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD restored");
    check_still_works(round++);
    return mtest_finalize(0);
}
