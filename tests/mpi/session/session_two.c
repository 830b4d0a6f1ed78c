/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Two sessions at once: each makes communicators (from mpi://WORLD, and one with the processes
 * in reverse order), the same string tag in both sessions and different tags in one session
 * give distinct working communicators, messages on one never match receives on the other, and
 * ending the first session leaves the second's communicators working.
 */
#include <stdlib.h>

#include "session_common.h"

int main(void)
{
    MPI_Session a = MPI_SESSION_NULL, b = MPI_SESSION_NULL;
    if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &a) != MPI_SUCCESS ||
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &b) != MPI_SUCCESS) {
        printf(" Found 1 errors\n");
        return 1;
    }
    CHECK(a != b, "two sessions have the same handle");
    MPI_Comm ca = world_comm_of(a, "session_two");
    MPI_Comm cb = world_comm_of(b, "session_two");
    int rank = -1, size = -1;
    MPI_Comm_rank(ca, &rank);
    MPI_Comm_size(ca, &size);

    /* The reversed group of b's world: rank r becomes size-1-r. */
    MPI_Group gw = MPI_GROUP_NULL, grev = MPI_GROUP_NULL;
    MPI_Group_from_session_pset(b, "mpi://WORLD", &gw);
    int *order = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        order[i] = size - 1 - i;
    MPI_Group_incl(gw, size, order, &grev);
    free(order);
    MPI_Comm crev = MPI_COMM_NULL;
    int rc = MPI_Comm_create_from_group(grev, "session_two.reversed", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &crev);
    CHECK_OK(rc, "MPI_Comm_create_from_group(reversed)");
    int rrev = -1;
    MPI_Comm_rank(crev, &rrev);
    CHECK(rrev == size - 1 - rank, "reversed rank %d, expected %d", rrev, size - 1 - rank);
    MPI_Group_free(&gw);
    MPI_Group_free(&grev);

    int result = -1;
    MPI_Comm_compare(ca, cb, &result);
    CHECK(result == MPI_CONGRUENT, "the two sessions' world communicators compare %d", result);

    /* Same tag, same peer on both communicators: each receive gets its own communicator's
     * message, whatever the order they were sent in. */
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    int va = 100 + rank, vb = 200 + rank, ra = -1, rb = -1;
    MPI_Request reqs[4];
    MPI_Irecv(&ra, 1, MPI_INT, from, 5, ca, &reqs[0]);
    MPI_Irecv(&rb, 1, MPI_INT, from, 5, cb, &reqs[1]);
    MPI_Isend(&vb, 1, MPI_INT, peer, 5, cb, &reqs[2]);
    MPI_Isend(&va, 1, MPI_INT, peer, 5, ca, &reqs[3]);
    rc = MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    CHECK(rc == MPI_SUCCESS && ra == 100 + from && rb == 200 + from, "rc %d: got %d and %d", rc, ra,
          rb);

    MPI_Comm_free(&ca);
    rc = MPI_Session_finalize(&a);
    CHECK_OK(rc, "MPI_Session_finalize(first)");
    int sum = -1;
    rc = MPI_Allreduce(&rrev, &sum, 1, MPI_INT, MPI_SUM, crev);
    CHECK(rc == MPI_SUCCESS && sum == size * (size - 1) / 2, "after the first session: %d", sum);
    MPI_Comm_free(&crev);

    int status = report(cb);
    MPI_Comm_free(&cb);
    if (MPI_Session_finalize(&b) != MPI_SUCCESS)
        status = 1;
    return status;
}
