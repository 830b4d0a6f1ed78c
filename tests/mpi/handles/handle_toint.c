/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_<T>_toint and MPI_<T>_fromint. Predefined handles convert to their own constant value
 * and back. User handles (a communicator, a group, an info object, an error handler, a
 * request) convert to integers outside 1-4095 that are the same on every call, differ between
 * objects and convert back to the same handle; the converted communicator still works. On
 * Manifold, with MPI_ERRORS_RETURN on MPI_COMM_SELF: the integer of a freed object, or of
 * another handle type, gives the null handle.
 */
#include <stdint.h>

#include "mtest.h"

static int user_int_ok(int v)
{
    return v < 1 || v > 4095;
}

int main(int argc, char **argv)
{
    MPI_Comm dup, dup2;
    MPI_Group group;
    MPI_Info info;
    MPI_Errhandler eh;
    MPI_Request req;
    int rank, size, v, got = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* predefined handles are their own value */
    MTEST_CHECK(MPI_Comm_toint(MPI_COMM_WORLD) == (int)(intptr_t)MPI_COMM_WORLD, "COMM_WORLD");
    MTEST_CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_SELF)) == MPI_COMM_SELF, "COMM_SELF");
    MTEST_CHECK(MPI_Comm_fromint(MPI_Comm_toint(MPI_COMM_NULL)) == MPI_COMM_NULL, "COMM_NULL");
    MTEST_CHECK(MPI_Type_toint(MPI_INT) == (int)(intptr_t)MPI_INT, "MPI_INT");
    MTEST_CHECK(MPI_Type_fromint(MPI_Type_toint(MPI_DOUBLE)) == MPI_DOUBLE, "MPI_DOUBLE");
    MTEST_CHECK(MPI_Group_fromint(MPI_Group_toint(MPI_GROUP_EMPTY)) == MPI_GROUP_EMPTY,
                "GROUP_EMPTY");
    MTEST_CHECK(MPI_Op_fromint(MPI_Op_toint(MPI_SUM)) == MPI_SUM, "MPI_SUM");
    MTEST_CHECK(MPI_Errhandler_fromint(MPI_Errhandler_toint(MPI_ERRORS_RETURN)) ==
                    MPI_ERRORS_RETURN,
                "ERRORS_RETURN");
    MTEST_CHECK(MPI_Info_fromint(MPI_Info_toint(MPI_INFO_ENV)) == MPI_INFO_ENV, "INFO_ENV");
    MTEST_CHECK(MPI_Request_fromint(MPI_Request_toint(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL,
                "REQUEST_NULL");
    MTEST_CHECK(MPI_Win_fromint(MPI_Win_toint(MPI_WIN_NULL)) == MPI_WIN_NULL, "WIN_NULL");
    MTEST_CHECK(MPI_File_fromint(MPI_File_toint(MPI_FILE_NULL)) == MPI_FILE_NULL, "FILE_NULL");
    MTEST_CHECK(MPI_Session_fromint(MPI_Session_toint(MPI_SESSION_NULL)) == MPI_SESSION_NULL,
                "SESSION_NULL");
    MTEST_CHECK(MPI_Message_fromint(MPI_Message_toint(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC,
                "MESSAGE_NO_PROC");

    /* user handles */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
    v = MPI_Comm_toint(dup);
    MTEST_CHECK(user_int_ok(v), "user communicator converted to %d", v);
    MTEST_CHECK(MPI_Comm_toint(dup) == v, "second conversion differs");
    MTEST_CHECK(MPI_Comm_toint(dup2) != v, "two communicators have the same integer");
    MTEST_CHECK(MPI_Comm_fromint(v) == dup, "communicator round trip");
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 0, MPI_Comm_fromint(v), MPI_STATUS_IGNORE);
    MTEST_CHECK(got == (rank + size - 1) % size, "message on the converted communicator");

    MPI_Comm_group(dup, &group);
    int gv = MPI_Group_toint(group);
    MTEST_CHECK(user_int_ok(gv) && MPI_Group_fromint(gv) == group, "group round trip (%d)", gv);
    MPI_Info_create(&info);
    int iv = MPI_Info_toint(info);
    MTEST_CHECK(user_int_ok(iv) && MPI_Info_fromint(iv) == info, "info round trip (%d)", iv);
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    MTEST_CHECK(MPI_Errhandler_fromint(MPI_Errhandler_toint(eh)) == eh, "errhandler round trip");
    MPI_Errhandler_free(&eh);
    MPI_Irecv(&got, 1, MPI_INT, MPI_PROC_NULL, 0, dup, &req);
    MTEST_CHECK(MPI_Request_fromint(MPI_Request_toint(req)) == req, "request round trip");
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    if (mtest_is_manifold()) {
        /* invalid integers give the null handle (and an error on MPI_COMM_SELF) */
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        MTEST_CHECK(MPI_Group_fromint(v) == MPI_GROUP_NULL, "a communicator's int as a group");
        MPI_Group_free(&group);
        MTEST_CHECK(MPI_Group_fromint(gv) == MPI_GROUP_NULL, "a freed group's int");
        MPI_Info stale = info;
        MPI_Info_free(&info);
        MTEST_CHECK(MPI_Info_fromint(iv) == MPI_INFO_NULL, "a freed info's int");
        /* a stale copy of a freed handle has no integer: -1, not a new one for the memory */
        MTEST_CHECK(MPI_Info_toint(stale) == -1, "a freed info got an integer");
        MPI_Info fresh;
        MPI_Info_create(&fresh); /* may reuse the freed object */
        MTEST_CHECK(MPI_Info_fromint(iv) == MPI_INFO_NULL, "a freed info's int names a new info");
        MPI_Info_free(&fresh);
        MPI_Comm_free(&dup);
        MTEST_CHECK(MPI_Comm_fromint(v) == MPI_COMM_NULL, "a freed communicator's int");
        /* a completed request's integer is forgotten, also when its memory serves the next */
        int out = 5, in = 0;
        MPI_Request live, next;
        MPI_Irecv(&in, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &live);
        int rv = MPI_Request_toint(live);
        MTEST_CHECK(MPI_Request_fromint(rv) == live, "live request round trip");
        MPI_Send(&out, 1, MPI_INT, rank, 9, MPI_COMM_WORLD);
        MPI_Wait(&live, MPI_STATUS_IGNORE);
        MTEST_CHECK(MPI_Request_fromint(rv) == MPI_REQUEST_NULL, "a completed request's int");
        MPI_Irecv(&in, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &next);
        MTEST_CHECK(MPI_Request_fromint(rv) == MPI_REQUEST_NULL,
                    "a completed request's int names the next request");
        MPI_Send(&out, 1, MPI_INT, rank, 9, MPI_COMM_WORLD);
        MPI_Wait(&next, MPI_STATUS_IGNORE);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    } else {
        MPI_Group_free(&group);
        MPI_Info_free(&info);
        MPI_Comm_free(&dup);
    }
    MPI_Comm_free(&dup2);
    return mtest_finalize(0);
}
