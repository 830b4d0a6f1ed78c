/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A session and the world model in one program, in the order SESSION_ORDER says:
 * "session_first" starts a session, then MPI_Init, ends the session first and MPI_Finalize
 * last; "world_first" calls MPI_Init, starts a session, calls MPI_Finalize and keeps using the
 * session's communicator before ending it. Both models' communicators work while both are up,
 * the one left keeps working after the other ends, and MPI_Initialized/MPI_Finalized follow
 * the world model only.
 */
#include <stdlib.h>

#include "session_common.h"

static void exercise(MPI_Comm comm, const char *what)
{
    int rank = -1, size = -1, sum = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm);
    CHECK(rc == MPI_SUCCESS && sum == size * (size - 1) / 2, "%s: allreduce rc %d sum %d", what, rc,
          sum);
}

static void expect_flags(int initialized, int finalized, const char *when)
{
    int i = -1, f = -1;
    MPI_Initialized(&i);
    MPI_Finalized(&f);
    CHECK(i == initialized && f == finalized, "%s: MPI_Initialized %d MPI_Finalized %d", when, i,
          f);
}

int main(int argc, char **argv)
{
    const char *order = getenv("SESSION_ORDER");
    int session_first = order == NULL || strcmp(order, "world_first") != 0;
    MPI_Session session = MPI_SESSION_NULL;
    int status;

    if (session_first) {
        int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
        if (rc != MPI_SUCCESS) {
            printf(" Found 1 errors\n");
            return 1;
        }
        expect_flags(0, 0, "session only");
        MPI_Init(&argc, &argv);
        expect_flags(1, 0, "session and world");
        MPI_Comm comm = world_comm_of(session, "session_world.a");
        exercise(comm, "session communicator");
        exercise(MPI_COMM_WORLD, "MPI_COMM_WORLD");
        MPI_Comm_free(&comm);
        int rc2 = MPI_Session_finalize(&session);
        CHECK_OK(rc2, "MPI_Session_finalize");
        exercise(MPI_COMM_WORLD, "MPI_COMM_WORLD after the session");
        expect_flags(1, 0, "world after the session");
        status = report(MPI_COMM_WORLD);
        MPI_Finalize();
        int f = 0;
        MPI_Finalized(&f);
        if (!f)
            status = 1;
    } else {
        MPI_Init(&argc, &argv);
        int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
        CHECK_OK(rc, "MPI_Session_init after MPI_Init");
        expect_flags(1, 0, "world and session");
        MPI_Comm comm = world_comm_of(session, "session_world.b");
        exercise(comm, "session communicator");
        exercise(MPI_COMM_WORLD, "MPI_COMM_WORLD");
        MPI_Finalize();
        expect_flags(1, 1, "session after MPI_Finalize");
        exercise(comm, "session communicator after MPI_Finalize");
        status = report(comm);
        MPI_Comm_free(&comm);
        rc = MPI_Session_finalize(&session);
        if (rc != MPI_SUCCESS)
            status = 1;
    }
    return status;
}
