/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two threads call MPI_Comm_create_from_group at the same time with different string tags,
 * "org.example.tag7213" and "org.example.tag11700", whose 32-bit FNV-1a hashes agree in their
 * low 24 bits: folded into the tag range alone (as Manifold did, and as MPICH hashes), the two
 * creations received each other's messages and failed, hung, or overflowed a buffer. Distinct
 * string tags are independent creations (MPI-4.1 section 7.4.2). Thread 0 uses the world in
 * order, thread 1 in reverse; each communicator must have its group and carry its own traffic.
 */
#include <pthread.h>
#include <stdlib.h>

#include "session_common.h"

#define ROUNDS 10

static const char *const tags[2] = {"org.example.tag7213", "org.example.tag11700"};
static MPI_Session session;
static int rank, size;

static void *creator(void *arg)
{
    int t = (int)(long)arg;
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Group world, group;
        MPI_Group_from_session_pset(session, "mpi://WORLD", &world);
        if (t == 0) {
            group = world;
        } else {
            int *ranks = malloc(sizeof(int) * (size_t)size);
            for (int i = 0; i < size; i++)
                ranks[i] = size - 1 - i;
            MPI_Group_incl(world, size, ranks, &group);
            MPI_Group_free(&world);
            free(ranks);
        }
        MPI_Comm comm;
        int rc =
            MPI_Comm_create_from_group(group, tags[t], MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
        MPI_Group_free(&group);
        CHECK_OK(rc, tags[t]);
        if (rc != MPI_SUCCESS)
            return NULL;
        int r = -1, n = 0, want = t == 0 ? rank : size - 1 - rank;
        MPI_Comm_rank(comm, &r);
        MPI_Comm_size(comm, &n);
        CHECK(r == want, "thread %d round %d: rank %d, expected %d", t, round, r, want);
        int out = t * 100 + r, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 0, &in, 1, MPI_INT, (r + n - 1) % n, 0, comm,
                     MPI_STATUS_IGNORE);
        CHECK(in == t * 100 + (r + n - 1) % n, "thread %d round %d: received %d", t, round, in);
        MPI_Comm_free(&comm);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf(" No Errors\n"); /* nothing to test without threads */
        MPI_Finalize();
        return 0;
    }
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
    pthread_t threads[2];
    for (long t = 0; t < 2; t++)
        pthread_create(&threads[t], NULL, creator, (void *)t);
    for (int t = 0; t < 2; t++)
        pthread_join(threads[t], NULL);
    MPI_Session_finalize(&session);
    int mine = errs, total = 0;
    MPI_Reduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total == 0 ? " No Errors\n" : " Found %d errors\n", total);
    MPI_Finalize();
    return 0;
}
