/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * User-defined communicator error handlers: MPI_Comm_create_errhandler,
 * MPI_Comm_set_errhandler, MPI_Comm_get_errhandler, MPI_Comm_call_errhandler and
 * MPI_Errhandler_free. Two handlers are installed, one on MPI_COMM_WORLD and one on a dup of
 * it. An error on the dup must call the dup's handler, once, with the dup and an error code of
 * the right class, and must not call the one of MPI_COMM_WORLD (and the other way round).
 * MPI_Comm_call_errhandler passes the given code through unchanged and returns MPI_SUCCESS.
 * MPI_Errhandler_free resets the handle, but the communicator keeps using the handler until
 * it is replaced. A handler may call MPI itself (it asks for the error class), and a user
 * handler on MPI_COMM_SELF catches errors on MPI_COMM_SELF.
 */
#include <stdio.h>

#include "mtest.h"

enum { ON_WORLD, ON_DUP, ON_SELF, NUM_HANDLERS };

struct handler_record {
    int calls;
    MPI_Comm comm;
    int code;
    int error_class;
};

static struct handler_record g_records[NUM_HANDLERS];

static void record_call(int which, MPI_Comm *comm, int *code)
{
    struct handler_record *r = &g_records[which];

    r->calls++;
    r->comm = *comm;
    r->code = *code;
    r->error_class = -1;
    MPI_Error_class(*code, &r->error_class);
}

static void world_handler(MPI_Comm *comm, int *code, ...)
{
    record_call(ON_WORLD, comm, code);
}

static void dup_handler(MPI_Comm *comm, int *code, ...)
{
    record_call(ON_DUP, comm, code);
}

static void self_handler(MPI_Comm *comm, int *code, ...)
{
    record_call(ON_SELF, comm, code);
}

static void reset_records(void)
{
    for (int i = 0; i < NUM_HANDLERS; i++)
        g_records[i] = (struct handler_record){0, MPI_COMM_NULL, 0, -1};
}

/* Exactly handler `which` was called, once, on comm with an error of class error_class. */
static void expect_only(int which, MPI_Comm comm, int error_class, const char *what)
{
    static const char *const names[NUM_HANDLERS] = {"world", "dup", "self"};

    for (int i = 0; i < NUM_HANDLERS; i++) {
        if (i != which) {
            MTEST_CHECK(g_records[i].calls == 0, "%s: %s handler called %d times", what, names[i],
                        g_records[i].calls);
            continue;
        }
        MTEST_CHECK(g_records[i].calls == 1, "%s: %s handler called %d times, expected once", what,
                    names[i], g_records[i].calls);
        MTEST_CHECK(g_records[i].comm == comm, "%s: handler got another communicator", what);
        MTEST_CHECK(g_records[i].error_class == error_class, "%s: handler got class %s, not %s",
                    what, mtest_error_class_name(g_records[i].error_class),
                    mtest_error_class_name(error_class));
    }
    reset_records();
}

static void check_get(MPI_Comm comm, MPI_Errhandler expected, const char *what)
{
    MPI_Errhandler current = MPI_ERRHANDLER_NULL;
    int rc = MPI_Comm_get_errhandler(comm, &current);

    MTEST_CHECK(rc == MPI_SUCCESS && current == expected, "%s: get_errhandler gives another one",
                what);
    /* get returns a new reference to a user handler, which the caller must free */
    if (rc == MPI_SUCCESS && current != MPI_ERRHANDLER_NULL && current != MPI_ERRORS_RETURN &&
        current != MPI_ERRORS_ARE_FATAL && current != MPI_ERRORS_ABORT)
        MPI_Errhandler_free(&current);
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh_world, eh_dup, eh_self;
    MPI_Comm dup;
    int rank, size, value = 0, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    reset_records();

    MPI_Comm_create_errhandler(world_handler, &eh_world);
    MPI_Comm_create_errhandler(dup_handler, &eh_dup);
    MPI_Comm_create_errhandler(self_handler, &eh_self);
    MTEST_CHECK(eh_world != MPI_ERRHANDLER_NULL && eh_world != eh_dup,
                "MPI_Comm_create_errhandler gave no distinct handles");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, eh_world);
    MPI_Comm_set_errhandler(dup, eh_dup);
    check_get(MPI_COMM_WORLD, eh_world, "world");
    check_get(dup, eh_dup, "dup");

    /* Errors go to the handler of the communicator they happen on. */
    MPI_Send(&value, 1, MPI_INT, size, 0, dup);
    expect_only(ON_DUP, dup, MPI_ERR_RANK, "invalid rank on the dup");
    MPI_Send(&value, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    expect_only(ON_WORLD, MPI_COMM_WORLD, MPI_ERR_TAG, "invalid tag on world");

    /* MPI_Comm_call_errhandler hands over exactly the code it is given. */
    rc = MPI_Comm_call_errhandler(dup, MPI_ERR_ARG);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_call_errhandler returned %d", rc);
    MTEST_CHECK(g_records[ON_DUP].code == MPI_ERR_ARG, "handler got code %d, expected %d",
                g_records[ON_DUP].code, MPI_ERR_ARG);
    expect_only(ON_DUP, dup, MPI_ERR_ARG, "call_errhandler on the dup");

    /* Freeing the handle does not detach the handler from the communicator. */
    rc = MPI_Errhandler_free(&eh_dup);
    MTEST_CHECK(rc == MPI_SUCCESS && eh_dup == MPI_ERRHANDLER_NULL,
                "MPI_Errhandler_free: rc %d, handle not reset", rc);
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    expect_only(ON_DUP, dup, MPI_ERR_OTHER, "call_errhandler after MPI_Errhandler_free");
    MPI_Recv(&value, 1, MPI_INT, -7, 0, dup, MPI_STATUS_IGNORE);
    expect_only(ON_DUP, dup, MPI_ERR_RANK, "invalid rank after MPI_Errhandler_free");

    /* A user handler on MPI_COMM_SELF. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, eh_self);
    MPI_Send(&value, 1, MPI_INT, 1, 0, MPI_COMM_SELF);
    expect_only(ON_SELF, MPI_COMM_SELF, MPI_ERR_RANK, "invalid rank on self");

    /* Replacing the handler: the dup now returns errors and calls nobody. */
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    rc = MPI_Send(&value, 1, MPI_INT, size, 0, dup);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Send");
    expect_only(-1, MPI_COMM_NULL, MPI_SUCCESS, "after replacing the handler");

    /* Communication still works on both communicators. */
    MPI_Sendrecv_replace(&value, 1, MPI_INT, (rank + 1) % size, 5, (rank + size - 1) % size, 5, dup,
                         MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    expect_only(-1, MPI_COMM_NULL, MPI_SUCCESS, "after successful calls");

    MPI_Comm_free(&dup);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&eh_world);
    MPI_Errhandler_free(&eh_self);
    return mtest_finalize(0);
}
