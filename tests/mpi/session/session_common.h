/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared helpers of the session tests. These programs may run without MPI_Init, so they cannot
 * use mtest_finalize (which reports over MPI_COMM_WORLD): errors are counted here and summed
 * over a communicator the test made from a session.
 */
#ifndef SESSION_COMMON_H
#define SESSION_COMMON_H

#include <mpi.h>
#include <stdio.h>
#include <string.h>

static _Atomic int errs; /* threads of session_again count too */

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            errs++;                                                                                \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
        }                                                                                          \
    } while (0)

/* rc must be MPI_SUCCESS. */
#define CHECK_OK(rc, what) CHECK((rc) == MPI_SUCCESS, "%s failed with code %d", what, (rc))

/* rc must be an error of class `cls`. */
#define CHECK_CLASS(rc, cls, what)                                                                 \
    do {                                                                                           \
        int check_class_ = -1;                                                                     \
        if ((rc) != MPI_SUCCESS)                                                                   \
            MPI_Error_class((rc), &check_class_);                                                  \
        CHECK(check_class_ == (cls), "%s gave class %d, expected %s (%d)", what, check_class_,     \
              #cls, (cls));                                                                        \
    } while (0)

/* 1 when the library is Manifold (for checks of behaviour the standard leaves open). */
static inline int mtest_manifold_session(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    return strstr(version, "Manifold") != NULL;
}

/* A communicator over mpi://WORLD of `session`, tagged `tag`. */
static inline MPI_Comm world_comm_of(MPI_Session session, const char *tag)
{
    MPI_Group group = MPI_GROUP_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    int rc = MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
    CHECK_OK(rc, "MPI_Group_from_session_pset(mpi://WORLD)");
    rc = MPI_Comm_create_from_group(group, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    CHECK_OK(rc, "MPI_Comm_create_from_group");
    MPI_Group_free(&group);
    return comm;
}

/* Sum the error counts over comm; rank 0 prints the verdict. Returns the exit status. */
static inline int report(MPI_Comm comm)
{
    int total = 0, rank = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, comm);
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
        fflush(stdout);
    }
    return total != 0;
}

#endif /* SESSION_COMMON_H */
