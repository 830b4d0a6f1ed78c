/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program that only uses a session, never MPI_Init: the process sets mpi://WORLD and
 * mpi://SELF (names through MPI_Session_get_nth_pset with the length query, sizes through
 * MPI_Session_get_pset_info), groups made from them, communicators made from the groups
 * (point-to-point and collectives work on them, MPI_TAG_UB is attached), the hints of
 * MPI_Session_get_info (mpi_memory_alloc_kinds among them), and that MPI_Initialized and
 * MPI_Finalized keep saying the world model was never used.
 */
#include <stdlib.h>

#include "session_common.h"

static int pset_size(MPI_Session session, const char *name)
{
    MPI_Info info = MPI_INFO_NULL;
    char value[64] = "";
    int flag = 0;
    int rc = MPI_Session_get_pset_info(session, name, &info);
    CHECK_OK(rc, "MPI_Session_get_pset_info");
    if (rc != MPI_SUCCESS)
        return -1;
    rc = MPI_Info_get(info, "mpi_size", sizeof(value) - 1, value, &flag);
    CHECK(rc == MPI_SUCCESS && flag, "pset info of %s has no mpi_size", name);
    MPI_Info_free(&info);
    return flag ? atoi(value) : -1;
}

int main(void)
{
    MPI_Session session = MPI_SESSION_NULL;
    int rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
    if (rc != MPI_SUCCESS) {
        printf(" Found 1 errors\nMPI_Session_init failed with code %d\n", rc);
        return 1;
    }
    int flag = 1;
    MPI_Initialized(&flag);
    CHECK(flag == 0, "MPI_Initialized is %d with only a session", flag);

    int npsets = 0;
    rc = MPI_Session_get_num_psets(session, MPI_INFO_NULL, &npsets);
    CHECK_OK(rc, "MPI_Session_get_num_psets");
    CHECK(npsets >= 2, "only %d process sets", npsets);
    int seen_world = 0, seen_self = 0;
    for (int i = 0; i < npsets; i++) {
        int len = 0;
        rc = MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len, NULL);
        CHECK(rc == MPI_SUCCESS && len > 1, "length of process set %d: rc %d len %d", i, rc, len);
        if (rc != MPI_SUCCESS || len <= 1 || len > MPI_MAX_PSET_NAME_LEN)
            continue;
        char name[MPI_MAX_PSET_NAME_LEN];
        memset(name, 'x', sizeof(name));
        rc = MPI_Session_get_nth_pset(session, MPI_INFO_NULL, i, &len, name);
        CHECK_OK(rc, "MPI_Session_get_nth_pset");
        CHECK((int)strlen(name) == len - 1, "name %d \"%s\" does not have length %d", i, name,
              len - 1);
        seen_world += strcmp(name, "mpi://WORLD") == 0;
        seen_self += strcmp(name, "mpi://SELF") == 0;
    }
    CHECK(seen_world == 1 && seen_self == 1, "process sets: mpi://WORLD %d times, mpi://SELF %d",
          seen_world, seen_self);

    MPI_Comm world = world_comm_of(session, "org.manifold.test.session_basic");
    int size = -1, rank = -1;
    MPI_Comm_size(world, &size);
    MPI_Comm_rank(world, &rank);
    CHECK(pset_size(session, "mpi://WORLD") == size, "mpi_size of mpi://WORLD is not %d", size);
    CHECK(pset_size(session, "mpi://SELF") == 1, "mpi_size of mpi://SELF is not 1");

    /* Messages around a ring and a reduction on the session's communicator. */
    int token = rank, got = -1;
    rc = MPI_Sendrecv(&token, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT,
                      (rank + size - 1) % size, 7, world, MPI_STATUS_IGNORE);
    CHECK(rc == MPI_SUCCESS && got == (rank + size - 1) % size, "ring: rc %d got %d", rc, got);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, world);
    CHECK(sum == size * (size - 1) / 2, "allreduce gave %d", sum);
    /* The tag bound is attached to communicators made from a group (MPI-4.1 9.1.2). */
    int *tag_ub = NULL;
    flag = 0;
    MPI_Comm_get_attr(world, MPI_TAG_UB, &tag_ub, &flag);
    CHECK(flag && tag_ub != NULL && *tag_ub >= 32767, "MPI_TAG_UB on the session's communicator");

    /* mpi://SELF: a communicator of one. */
    MPI_Group self_group = MPI_GROUP_NULL;
    MPI_Comm self = MPI_COMM_NULL;
    rc = MPI_Group_from_session_pset(session, "mpi://SELF", &self_group);
    CHECK_OK(rc, "MPI_Group_from_session_pset(mpi://SELF)");
    rc = MPI_Comm_create_from_group(self_group, "org.manifold.test.self", MPI_INFO_NULL,
                                    MPI_ERRORS_RETURN, &self);
    CHECK_OK(rc, "MPI_Comm_create_from_group(self)");
    int self_size = -1, self_rank = -1;
    MPI_Comm_size(self, &self_size);
    MPI_Comm_rank(self, &self_rank);
    CHECK(self_size == 1 && self_rank == 0, "self communicator: size %d rank %d", self_size,
          self_rank);
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(self, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "the new communicator does not have the given handler");
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&self);
    MPI_Group_free(&self_group);

    MPI_Info used = MPI_INFO_NULL;
    rc = MPI_Session_get_info(session, &used);
    CHECK_OK(rc, "MPI_Session_get_info");
    char level[MPI_MAX_INFO_VAL] = "";
    flag = 0;
    MPI_Info_get(used, "thread_level", sizeof(level) - 1, level, &flag);
    /* Asked for no level: Manifold provides MPI_THREAD_MULTIPLE; others may give less. */
    CHECK(flag && (!mtest_manifold_session() || strcmp(level, "MPI_THREAD_MULTIPLE") == 0),
          "thread_level is \"%s\"", level);
    /* MPI-4.1 section 11.4.3: the memory kinds supported, by default "mpi,system" */
    flag = 0;
    MPI_Info_get(used, "mpi_memory_alloc_kinds", sizeof(level) - 1, level, &flag);
    CHECK(flag && strcmp(level, "mpi,system") == 0, "mpi_memory_alloc_kinds is \"%s\"",
          flag ? level : "(not set)");
    MPI_Info_free(&used);

    /* A level asked for in the hints is the level provided (MPI-4.1 11.3.1) */
    MPI_Info ask = MPI_INFO_NULL;
    MPI_Info_create(&ask);
    MPI_Info_set(ask, "thread_level", "MPI_THREAD_FUNNELED");
    MPI_Session funneled = MPI_SESSION_NULL;
    rc = MPI_Session_init(ask, MPI_ERRORS_RETURN, &funneled);
    MPI_Info_free(&ask);
    CHECK_OK(rc, "MPI_Session_init with thread_level MPI_THREAD_FUNNELED");
    if (rc == MPI_SUCCESS) {
        MPI_Session_get_info(funneled, &used);
        flag = 0;
        MPI_Info_get(used, "thread_level", sizeof(level) - 1, level, &flag);
        CHECK(flag && strcmp(level, "MPI_THREAD_FUNNELED") == 0,
              "thread_level of a session that asked for MPI_THREAD_FUNNELED is \"%s\"", level);
        MPI_Info_free(&used);
        MPI_Session_finalize(&funneled);
    }

    int status = report(world);
    MPI_Comm_free(&world);
    rc = MPI_Session_finalize(&session);
    if (rc != MPI_SUCCESS || session != MPI_SESSION_NULL) {
        fprintf(stderr, "MPI_Session_finalize: rc %d\n", rc);
        status = 1;
    }
    MPI_Initialized(&flag);
    if (flag != 0) {
        fprintf(stderr, "MPI_Initialized is %d after the session\n", flag);
        status = 1;
    }
    return status;
}
