/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A string tag and an integer tag with the same 24-bit value, used at the same time: one thread
 * calls MPI_Comm_create_from_group with the string, another MPI_Comm_create_group on
 * MPI_COMM_WORLD with the integer, in opposite orders on even and odd ranks. The two creations
 * must not meet: each communicator talks to its own counterpart. (The integer below is the
 * string's 32-bit FNV-1a hash folded into 24 bits, the tag Manifold once used for it. Before
 * string tags had contexts of their own, the two agreements crossed.)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "session_common.h"

static const char stringtag[] = "session_tag_space";
static MPI_Group world_group, session_group;
static int rank, size;

static int tag_of_string(const char *s)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++)
        h = (h ^ *p) * 16777619u;
    return (int)(h % (1u << 24));
}

/* Every process sends its rank and the kind of creation to the next one over `comm`: the
 * receiver's own kind must come back. */
static void check_partner(MPI_Comm comm, int kind, const char *what)
{
    int r = -1, n = -1;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    int out[2] = {kind, r}, in[2] = {-1, -1};
    int rc = MPI_Sendrecv(out, 2, MPI_INT, (r + 1) % n, 7, in, 2, MPI_INT, (r + n - 1) % n, 7, comm,
                          MPI_STATUS_IGNORE);
    CHECK_OK(rc, what);
    CHECK(in[0] == kind && in[1] == (r + n - 1) % n,
          "%s on rank %d: the neighbour's communicator is of kind %d rank %d (expected %d, %d)",
          what, rank, in[0], in[1], kind, (r + n - 1) % n);
}

static void *by_string(void *arg)
{
    (void)arg;
    if (rank % 2 == 0)
        usleep(200000);
    MPI_Comm comm = MPI_COMM_NULL;
    int rc = MPI_Comm_create_from_group(session_group, stringtag, MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &comm);
    CHECK_OK(rc, "MPI_Comm_create_from_group");
    if (rc == MPI_SUCCESS) {
        check_partner(comm, 1, "string-tag communicator");
        MPI_Comm_free(&comm);
    }
    return NULL;
}

static void *by_integer(void *arg)
{
    (void)arg;
    if (rank % 2 == 1)
        usleep(200000);
    MPI_Comm comm = MPI_COMM_NULL;
    int rc = MPI_Comm_create_group(MPI_COMM_WORLD, world_group, tag_of_string(stringtag), &comm);
    CHECK_OK(rc, "MPI_Comm_create_group");
    if (rc == MPI_SUCCESS) {
        check_partner(comm, 2, "integer-tag communicator");
        MPI_Comm_free(&comm);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("MPI_THREAD_MULTIPLE not provided; skipping\n No Errors\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Session session = MPI_SESSION_NULL;
    MPI_Info info = MPI_INFO_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    int rc = MPI_Session_init(info, MPI_ERRORS_RETURN, &session);
    MPI_Info_free(&info);
    CHECK_OK(rc, "MPI_Session_init");
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    rc = MPI_Group_from_session_pset(session, "mpi://WORLD", &session_group);
    CHECK_OK(rc, "MPI_Group_from_session_pset");

    for (int round = 0; round < 3 && errs == 0; round++) {
        pthread_t a, b;
        pthread_create(&a, NULL, by_string, NULL);
        pthread_create(&b, NULL, by_integer, NULL);
        pthread_join(a, NULL);
        pthread_join(b, NULL);
    }

    MPI_Group_free(&session_group);
    MPI_Group_free(&world_group);
    MPI_Session_finalize(&session);
    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0)
            printf(" No Errors\n");
        else
            printf(" Found %d errors\n", total);
    }
    MPI_Finalize();
    return total != 0;
}
