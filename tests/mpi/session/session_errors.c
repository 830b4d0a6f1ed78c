/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Invalid session calls and session error handlers. A user session handler sees the session
 * and the code of every error of a session call (unknown process set, pset index out of range,
 * NULL arguments, a communicator handler given to MPI_Session_set_errhandler) and of
 * MPI_Session_call_errhandler. Invalid session handles (MPI_SESSION_NULL, a finalized one) are
 * MPI_ERR_SESSION on MPI_COMM_SELF's handler. MPI_Comm_create_from_group reports a bad group
 * or tag through the handler it is given (a user handler too, with MPI_COMM_NULL; MPICH 5.0.2
 * calls MPI_COMM_SELF's instead, as Manifold once did), as does
 * MPI_Intercomm_create_from_groups, and MPI_Session_init the errors of its info and
 * session arguments. A handler of the wrong kind, or MPI_ERRHANDLER_NULL, is
 * MPI_ERR_ERRHANDLER. Runs with the world
 * model up so MPI_COMM_SELF's handler can be set to MPI_ERRORS_RETURN.
 */
#include <stdlib.h>

#include "session_common.h"

static int calls, last_code;
static MPI_Session last_session = MPI_SESSION_NULL;

static void on_session_error(MPI_Session *session, int *code, ...)
{
    calls++;
    last_code = *code;
    last_session = *session;
}

static int comm_calls, comm_code;
static MPI_Comm comm_seen;

static void on_comm_error(MPI_Comm *comm, int *code, ...)
{
    comm_calls++;
    comm_code = *code;
    comm_seen = *comm;
}

/* The error went through the session's handler exactly once with class `cls`. Manifold also
 * returns the code when the handler returns (MPICH 5.0.2 returns MPI_SUCCESS then). */
#define CHECK_HANDLED(rc, cls, what, session)                                                      \
    do {                                                                                           \
        CHECK_CLASS(calls == 1 ? last_code : MPI_SUCCESS, cls, what);                              \
        CHECK(calls == 1 && last_session == (session), "%s: handler called %d times", what,        \
              calls);                                                                              \
        if (mtest_manifold_session())                                                              \
            CHECK((rc) == last_code, "%s: returned %d, the handler saw %d", what, (rc),            \
                  last_code);                                                                      \
        calls = 0;                                                                                 \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Errhandler seh = MPI_ERRHANDLER_NULL, ceh = MPI_ERRHANDLER_NULL;
    int rc = MPI_Session_create_errhandler(on_session_error, &seh);
    CHECK_OK(rc, "MPI_Session_create_errhandler");
    MPI_Comm_create_errhandler(on_comm_error, &ceh);

    MPI_Session s = MPI_SESSION_NULL;
    rc = MPI_Session_init(MPI_INFO_NULL, seh, &s);
    CHECK_OK(rc, "MPI_Session_init");
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    rc = MPI_Session_get_errhandler(s, &got);
    CHECK(rc == MPI_SUCCESS && got == seh, "MPI_Session_get_errhandler: rc %d", rc);
    MPI_Errhandler_free(&got);

    int n = 0, len = 0;
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, NULL);
    CHECK_HANDLED(rc, MPI_ERR_ARG, "get_nth_pset(n=npsets)", s);
    rc = MPI_Session_get_nth_pset(s, MPI_INFO_NULL, -1, &len, NULL);
    CHECK_HANDLED(rc, MPI_ERR_ARG, "get_nth_pset(n=-1)", s);
    MPI_Group g = MPI_GROUP_NULL;
    rc = MPI_Group_from_session_pset(s, "mpi://NO_SUCH_SET", &g);
    CHECK_HANDLED(rc, MPI_ERR_ARG, "Group_from_session_pset(unknown)", s);
    CHECK(g == MPI_GROUP_NULL, "a group came back for an unknown process set");
    rc = MPI_Group_from_session_pset(s, NULL, &g);
    CHECK_HANDLED(rc, MPI_ERR_ARG, "Group_from_session_pset(NULL)", s);
    MPI_Info info = MPI_INFO_NULL;
    rc = MPI_Session_get_pset_info(s, "mpi://NO_SUCH_SET", &info);
    CHECK_HANDLED(rc, MPI_ERR_ARG, "get_pset_info(unknown)", s);
    rc = MPI_Session_get_num_psets(s, MPI_INFO_NULL, NULL);
    CHECK_HANDLED(rc, MPI_ERR_ARG, "get_num_psets(NULL)", s);
    if (mtest_manifold_session()) {
        rc = MPI_Session_set_errhandler(s, ceh);
        CHECK_HANDLED(rc, MPI_ERR_ERRHANDLER, "Session_set_errhandler(communicator handler)", s);
        rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, seh);
        CHECK_CLASS(rc, MPI_ERR_ERRHANDLER, "Comm_set_errhandler(session handler)");
    }

    /* MPI_Session_call_errhandler hands over the code and returns success. */
    int code = MPI_ERR_OTHER;
    rc = MPI_Session_call_errhandler(s, code);
    CHECK(rc == MPI_SUCCESS && calls == 1 && last_code == code && last_session == s,
          "Session_call_errhandler: rc %d calls %d code %d", rc, calls, last_code);
    calls = 0;

    /* With MPI_ERRORS_RETURN the error comes back without the user handler. */
    MPI_Session_set_errhandler(s, MPI_ERRORS_RETURN);
    rc = MPI_Group_from_session_pset(s, "mpi://NO_SUCH_SET", &g);
    CHECK(rc != MPI_SUCCESS && calls == 0, "after MPI_ERRORS_RETURN: rc %d calls %d", rc, calls);

    /* Communicators from groups: a bad group or stringtag goes to the handler given. */
    MPI_Comm c = MPI_COMM_NULL;
    rc = MPI_Comm_create_from_group(MPI_GROUP_NULL, "tag", MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    CHECK_CLASS(rc, MPI_ERR_GROUP, "Comm_create_from_group(MPI_GROUP_NULL)");
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    rc = MPI_Comm_create_from_group(g, NULL, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    CHECK_CLASS(rc, MPI_ERR_ARG, "Comm_create_from_group(stringtag NULL)");
    if (mtest_manifold_session()) {
        rc = MPI_Comm_create_from_group(MPI_GROUP_NULL, "tag", MPI_INFO_NULL, ceh, &c);
        CHECK_CLASS(rc, MPI_ERR_GROUP, "Comm_create_from_group(MPI_GROUP_NULL, user handler)");
        CHECK(comm_calls == 1 && comm_code == rc && comm_seen == MPI_COMM_NULL,
              "Comm_create_from_group: the handler given ran %d times", comm_calls);
        rc = MPI_Intercomm_create_from_groups(g, 0, MPI_GROUP_NULL, 0, "tag2", MPI_INFO_NULL, ceh,
                                              &c);
        CHECK_CLASS(rc, MPI_ERR_GROUP, "Intercomm_create_from_groups(MPI_GROUP_NULL)");
        CHECK(comm_calls == 2 && comm_code == rc,
              "Intercomm_create_from_groups: the handler given ran %d times", comm_calls - 1);
    }
    MPI_Group_free(&g);
    if (mtest_manifold_session()) {
        /* A handler of the wrong kind is MPI_ERR_ERRHANDLER wherever it is given (it was
         * MPI_ERR_ARG here, MPI_ERR_ERRHANDLER in the set_errhandler calls). */
        MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
        rc = MPI_Comm_create_from_group(g, "tag", MPI_INFO_NULL, seh, &c);
        CHECK_CLASS(rc, MPI_ERR_ERRHANDLER, "Comm_create_from_group(session handler)");
        /* and so is the null handle (it was taken as MPI_ERRORS_ARE_FATAL) */
        rc = MPI_Comm_create_from_group(g, "tag", MPI_INFO_NULL, MPI_ERRHANDLER_NULL, &c);
        CHECK_CLASS(rc, MPI_ERR_ERRHANDLER, "Comm_create_from_group(MPI_ERRHANDLER_NULL)");
        rc = MPI_Intercomm_create_from_groups(g, 0, g, 0, "tag3", MPI_INFO_NULL,
                                              MPI_ERRHANDLER_NULL, &c);
        CHECK_CLASS(rc, MPI_ERR_ERRHANDLER, "Intercomm_create_from_groups(MPI_ERRHANDLER_NULL)");
        CHECK(c == MPI_COMM_NULL, "a refused call set its communicator");
        MPI_Group_free(&g);
        MPI_Session other = MPI_SESSION_NULL;
        rc = MPI_Session_init(MPI_INFO_NULL, ceh, &other);
        CHECK_CLASS(rc, MPI_ERR_ERRHANDLER, "Session_init(communicator handler)");
        /* MPI_Session_init's other argument errors go to the handler it is given, with no
         * session (they were returned without calling it). */
        MPI_Info freed;
        MPI_Info_create(&freed);
        MPI_Info stale_info = freed;
        MPI_Info_free(&freed);
        calls = 0;
        rc = MPI_Session_init(stale_info, seh, &other);
        CHECK_HANDLED(rc, MPI_ERR_INFO, "Session_init(freed info)", MPI_SESSION_NULL);
        rc = MPI_Session_init(MPI_INFO_NULL, seh, NULL);
        CHECK_HANDLED(rc, MPI_ERR_ARG, "Session_init(session NULL)", MPI_SESSION_NULL);
    }

    /* Invalid session handles. */
    MPI_Session stale = s;
    rc = MPI_Session_finalize(&s);
    CHECK(rc == MPI_SUCCESS && s == MPI_SESSION_NULL, "MPI_Session_finalize: rc %d", rc);
    rc = MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n);
    CHECK_CLASS(rc, MPI_ERR_SESSION, "get_num_psets(MPI_SESSION_NULL)");
    rc = MPI_Session_finalize(&s);
    CHECK_CLASS(rc, MPI_ERR_SESSION, "Session_finalize(MPI_SESSION_NULL)");
    if (mtest_manifold_session()) {
        /* Using a finalized session is erroneous; Manifold recognises it. */
        rc = MPI_Session_get_num_psets(stale, MPI_INFO_NULL, &n);
        CHECK_CLASS(rc, MPI_ERR_SESSION, "get_num_psets(finalized session)");
        rc = MPI_Session_finalize(&stale);
        CHECK_CLASS(rc, MPI_ERR_SESSION, "Session_finalize(finalized session)");
    }
    CHECK(calls == 0, "the finalized session's handler was called %d times", calls);

    MPI_Errhandler_free(&seh);
    MPI_Errhandler_free(&ceh);
    int status = report(MPI_COMM_WORLD);
    MPI_Finalize();
    return status;
}
