/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_ANY_SOURCE and MPI_ANY_TAG. Every rank but 0 sends rank 0 NMSG messages {rank, k}
 * with tag k; rank 0 receives them all with both wildcards and checks that the status
 * names the real source and tag, that the count is right and that each source's messages
 * arrive in the order sent (they all match the same receive, so they may not overtake).
 * Then one message per sender with a tag of its own, received with MPI_ANY_SOURCE and an
 * exact tag in reverse rank order, one with an exact source and MPI_ANY_TAG, and finally
 * wildcard receives posted before anything is sent, completed with MPI_Waitall.
 */
#include "mtest.h"

#include <stdlib.h>

#define NMSG     50
#define TAG_OWN  1000
#define TAG_LATE 2000

static int rank, size;

static void send_all(void)
{
    int msg[2];

    for (int k = 0; k < NMSG; k++) {
        msg[0] = rank;
        msg[1] = k;
        MPI_Send(msg, 2, MPI_INT, 0, k, MPI_COMM_WORLD);
    }
    /* the next messages would match rank 0's MPI_ANY_TAG receives: wait until those end */
    MPI_Barrier(MPI_COMM_WORLD);
    msg[1] = -rank;
    MPI_Send(msg, 2, MPI_INT, 0, TAG_OWN + rank, MPI_COMM_WORLD);
    MPI_Send(msg, 2, MPI_INT, 0, 3 * rank, MPI_COMM_WORLD);
}

static void receive_any_any(int *next)
{
    MPI_Status status;
    int msg[2], count;

    for (int i = 0; i < NMSG * (size - 1); i++) {
        msg[0] = msg[1] = -1;
        MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_INT, &count);
        if (!MTEST_CHECK(msg[0] >= 1 && msg[0] < size && count == 2,
                         "message %d: sender %d, count %d", i, msg[0], count)) {
            continue;
        }
        MTEST_CHECK(status.MPI_SOURCE == msg[0] && status.MPI_TAG == msg[1],
                    "status source %d tag %d for message {%d, %d}", status.MPI_SOURCE,
                    status.MPI_TAG, msg[0], msg[1]);
        MTEST_CHECK(msg[1] == next[msg[0]], "from rank %d got message %d, expected %d", msg[0],
                    msg[1], next[msg[0]]);
        next[msg[0]] = msg[1] + 1;
    }
}

static void receive_exact_tags(void)
{
    MPI_Status status;
    int msg[2];

    for (int src = size - 1; src >= 1; src--) {
        MPI_Recv(msg, 2, MPI_INT, MPI_ANY_SOURCE, TAG_OWN + src, MPI_COMM_WORLD, &status);
        MTEST_CHECK(status.MPI_SOURCE == src && status.MPI_TAG == TAG_OWN + src && msg[0] == src,
                    "any source, tag %d: source %d tag %d sender %d", TAG_OWN + src,
                    status.MPI_SOURCE, status.MPI_TAG, msg[0]);
    }
    for (int src = 1; src < size; src++) {
        MPI_Recv(msg, 2, MPI_INT, src, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        MTEST_CHECK(status.MPI_SOURCE == src && status.MPI_TAG == 3 * src && msg[0] == src,
                    "source %d, any tag: source %d tag %d sender %d", src, status.MPI_SOURCE,
                    status.MPI_TAG, msg[0]);
    }
}

/* Wildcard receives posted before the sends; the barrier orders the two. */
static void late_senders(void)
{
    MPI_Request *reqs = mtest_calloc((size_t)size, sizeof(MPI_Request));
    MPI_Status *statuses = mtest_calloc((size_t)size, sizeof(MPI_Status));
    int *values = mtest_calloc((size_t)size, sizeof(int));
    int *seen = mtest_calloc((size_t)size, sizeof(int));

    if (rank == 0) {
        for (int i = 0; i < size - 1; i++) {
            MPI_Irecv(&values[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                      &reqs[i]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        MPI_Send(&rank, 1, MPI_INT, 0, TAG_LATE + rank, MPI_COMM_WORLD);
    } else {
        MPI_Waitall(size - 1, reqs, statuses);
        for (int i = 0; i < size - 1; i++) {
            int src = statuses[i].MPI_SOURCE;

            if (MTEST_CHECK(src >= 1 && src < size && values[i] == src &&
                                statuses[i].MPI_TAG == TAG_LATE + src,
                            "posted wildcard receive %d: source %d tag %d value %d", i, src,
                            statuses[i].MPI_TAG, values[i])) {
                MTEST_CHECK(!seen[src]++, "two messages from rank %d", src);
            }
        }
    }
    /* senders must not reach mtest_finalize, whose messages the wildcards would match */
    MPI_Barrier(MPI_COMM_WORLD);
    free(reqs);
    free(statuses);
    free(values);
    free(seen);
}

int main(int argc, char **argv)
{
    int *next;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = mtest_calloc((size_t)size, sizeof(int));
    if (rank == 0) {
        receive_any_any(next);
        for (int src = 1; src < size; src++) {
            MTEST_CHECK(next[src] == NMSG, "got %d of %d messages from rank %d", next[src], NMSG,
                        src);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        receive_exact_tags();
    } else {
        send_all();
    }
    late_senders();
    free(next);
    return mtest_finalize(0);
}
