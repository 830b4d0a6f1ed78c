/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The default error handler is MPI_ERRORS_ARE_FATAL: an error must end the whole job with a
 * non-zero exit status. Rank 0 makes one invalid call while the other ranks block in
 * MPI_Recv, so the launcher also has to take them down. MTEST_FATAL_ON picks where the error
 * is raised: "world" (default), "dup" (a dup of MPI_COMM_WORLD, which inherits the handler),
 * "self" (MPI_COMM_SELF) or "nocomm" (a call with no communicator argument, raised on
 * MPI_COMM_SELF). The testlist runs it with label abort, so the runner passes it only if the
 * job fails on its own. If the error is not fatal the program says so on stderr, releases
 * the other ranks and ends normally with " No Errors", which the runner reports as a failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define RELEASE_TAG 1

static int provoke_error(const char *where, MPI_Comm dup)
{
    int value = 0, size = -1;

    if (strcmp(where, "dup") == 0)
        return MPI_Send(&value, 1, MPI_INT, -7, 0, dup);
    if (strcmp(where, "self") == 0)
        return MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    if (strcmp(where, "nocomm") == 0)
        return MPI_Type_size(MPI_DATATYPE_NULL, &size);
    return MPI_Send(&value, 1, MPI_INT, -7, 0, MPI_COMM_WORLD);
}

static MPI_Comm handler_comm(const char *where, MPI_Comm dup)
{
    if (strcmp(where, "dup") == 0)
        return dup;
    if (strcmp(where, "self") == 0 || strcmp(where, "nocomm") == 0)
        return MPI_COMM_SELF;
    return MPI_COMM_WORLD;
}

int main(int argc, char **argv)
{
    const char *where = getenv("MTEST_FATAL_ON");
    MPI_Comm dup = MPI_COMM_NULL;
    MPI_Errhandler current = MPI_ERRHANDLER_NULL;
    int rank, size, token = 0, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (where == NULL)
        where = "world";
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);

    MPI_Comm_get_errhandler(handler_comm(where, dup), &current);
    if (current != MPI_ERRORS_ARE_FATAL)
        fprintf(stderr, "[rank %d] the default error handler on '%s' is not MPI_ERRORS_ARE_FATAL\n",
                rank, where);

    if (rank == 0) {
        rc = provoke_error(where, dup);
        /* Only reached when the handler did not end the job. */
        fprintf(stderr, "error on '%s' was not fatal: the call returned %d\n", where, rc);
        for (int r = 1; r < size; r++)
            MPI_Send(&token, 1, MPI_INT, r, RELEASE_TAG, MPI_COMM_WORLD);
    } else {
        MPI_Recv(&token, 1, MPI_INT, 0, RELEASE_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&dup);
    return mtest_finalize(0);
}
