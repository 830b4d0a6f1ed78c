/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running out of communicators: MPI_Comm_dup until the context ids are used up must fail with
 * MPI_ERR_OTHER and a message that says so (not MPI_ERR_NO_MEM: memory is not the problem),
 * on every rank alike, and once some are freed new communicators work again. Out of ids,
 * MPI_Comm_idup (of an intra- and an intercommunicator) completes with that error rather than
 * trying for ever, and MPI_Comm_create_from_group fails with the same class.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TRIES 10000

/* Out of ids: MPI_Comm_idup of `parent` fails at the call or at the wait, with MPI_ERR_OTHER. */
static void idup_fails(MPI_Comm parent, const char *what)
{
    MPI_Comm c = MPI_COMM_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Comm_idup(parent, &c, &r), cls = -1;
    if (rc == MPI_SUCCESS)
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(cls == MPI_ERR_OTHER, "MPI_Comm_idup of %s out of ids: class %s", what,
                mtest_error_class_name(cls));
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, text, &len);
    MTEST_CHECK(strstr(text, "too many communicators") != NULL, "MPI_Comm_idup of %s: %s", what,
                text);
}

int main(int argc, char **argv)
{
    int rank, made = 0, rc = MPI_SUCCESS, cls = -1;
    MPI_Comm *comms = NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* made while ids are free: an intercommunicator of the even and the odd ranks, and a
     * session's group of the world */
    MPI_Comm half = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    if (size >= 2) {
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    }
    MPI_Session session;
    MPI_Group world_group;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
    MPI_Group_from_session_pset(session, "mpi://WORLD", &world_group);
    comms = mtest_calloc(MAX_TRIES, sizeof(MPI_Comm));
    while (made < MAX_TRIES && (rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[made])) == MPI_SUCCESS)
        made++;
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(made < MAX_TRIES && cls == MPI_ERR_OTHER,
                "after %d dups: error class %s, expected MPI_ERR_OTHER", made,
                mtest_error_class_name(cls));
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, text, &len);
        MTEST_CHECK(strstr(text, "MPI_Comm_dup") && strstr(text, "too many communicators"),
                    "message: %s", text);
    }
    int all_made = 0;
    MPI_Allreduce(&made, &all_made, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MTEST_CHECK(all_made == made, "rank %d made %d communicators, another %d", rank, made,
                all_made);
    idup_fails(MPI_COMM_WORLD, "MPI_COMM_WORLD");
    if (inter != MPI_COMM_NULL)
        idup_fails(inter, "an intercommunicator");
    MPI_Comm from_group = MPI_COMM_NULL;
    rc = MPI_Comm_create_from_group(world_group, "comm_limit", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                    &from_group);
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(cls == MPI_ERR_OTHER, "MPI_Comm_create_from_group out of ids: class %s",
                mtest_error_class_name(cls));
    for (int i = 0; i < made; i++)
        MPI_Comm_free(&comms[i]);
    MPI_Comm again;
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &again);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_dup after freeing: %d", rc);
    if (rc == MPI_SUCCESS)
        MPI_Comm_free(&again);
    free(comms);
    if (inter != MPI_COMM_NULL) {
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Group_free(&world_group);
    MPI_Session_finalize(&session);
    return mtest_finalize(0);
}
