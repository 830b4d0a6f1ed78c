/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Errors on MPI_COMM_SELF and errors that belong to no communicator, which MPI-4 raises on
 * MPI_COMM_SELF. With one counting user handler on MPI_COMM_WORLD and another on
 * MPI_COMM_SELF: invalid point-to-point calls on MPI_COMM_SELF, and MPI_Type_size of
 * MPI_DATATYPE_NULL (no communicator argument), must call the handler of MPI_COMM_SELF with
 * MPI_COMM_SELF and never the one of MPI_COMM_WORLD. With MPI_ERRORS_RETURN on MPI_COMM_SELF
 * the same calls return codes of the right class, and MPI_COMM_SELF still carries messages.
 */
#include <stdio.h>

#include "mtest.h"

enum { ON_WORLD, ON_SELF };

static int g_calls[2];
static MPI_Comm g_comm;
static int g_class;

static void record(int which, MPI_Comm *comm, int *code)
{
    g_calls[which]++;
    g_comm = *comm;
    g_class = -1;
    MPI_Error_class(*code, &g_class);
}

static void world_handler(MPI_Comm *comm, int *code, ...)
{
    record(ON_WORLD, comm, code);
}

static void self_handler(MPI_Comm *comm, int *code, ...)
{
    record(ON_SELF, comm, code);
}

static void expect_self_handler(int error_class, const char *what)
{
    MTEST_CHECK(g_calls[ON_SELF] == 1, "%s: self handler called %d times", what, g_calls[ON_SELF]);
    MTEST_CHECK(g_calls[ON_WORLD] == 0, "%s: world handler called %d times", what,
                g_calls[ON_WORLD]);
    if (g_calls[ON_SELF] == 1) {
        MTEST_CHECK(g_comm == MPI_COMM_SELF, "%s: handler got another communicator", what);
        MTEST_CHECK(g_class == error_class, "%s: class %s, expected %s", what,
                    mtest_error_class_name(g_class), mtest_error_class_name(error_class));
    }
    g_calls[ON_WORLD] = g_calls[ON_SELF] = 0;
}

static void check_self_works(int tag)
{
    int out = 1000 + tag, in = -1, rc;
    MPI_Status status;

    rc = MPI_Sendrecv(&out, 1, MPI_INT, 0, tag, &in, 1, MPI_INT, 0, tag, MPI_COMM_SELF, &status);
    MTEST_CHECK(rc == MPI_SUCCESS && in == out && status.MPI_SOURCE == 0,
                "self message after errors: rc %d, got %d", rc, in);
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh_world, eh_self;
    MPI_Request req = MPI_REQUEST_NULL;
    int value = 0, size = -1, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_create_errhandler(world_handler, &eh_world);
    MPI_Comm_create_errhandler(self_handler, &eh_self);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh_world);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh_self);

    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    expect_self_handler(MPI_ERR_RANK, "send to rank 1 of MPI_COMM_SELF");
    MPI_Irecv(&value, 1, MPI_INT, 0, -5, MPI_COMM_SELF, &req);
    expect_self_handler(MPI_ERR_TAG, "receive with tag -5 on MPI_COMM_SELF");
    MPI_Type_size(MPI_DATATYPE_NULL, &size);
    expect_self_handler(MPI_ERR_TYPE, "MPI_Type_size(MPI_DATATYPE_NULL)");
    check_self_works(1);

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rc = MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Send");
    rc = MPI_Recv(&value, -1, MPI_INT, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Recv");
    rc = MPI_Type_size(MPI_DATATYPE_NULL, &size);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_size");
    MTEST_CHECK(g_calls[ON_WORLD] == 0 && g_calls[ON_SELF] == 0,
                "a user handler was called with MPI_ERRORS_RETURN on MPI_COMM_SELF");
    check_self_works(2);

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh_world);
    MPI_Errhandler_free(&eh_self);
    return mtest_finalize(0);
}
