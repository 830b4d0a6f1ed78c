/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Short standard and ready sends that the transport cannot take at once. Rank 0 starts a
 * backlog of small MPI_Isend calls (0-512 bytes, far more than the shared-memory queue holds)
 * while rank 1 is still waiting at a barrier, so most sends stay pending and get their request
 * only after the transport kept them. Those requests are then completed every way there is:
 * MPI_Test until done, MPI_Waitany, MPI_Waitall, and MPI_Request_free with the delivery learnt
 * from an acknowledgement. Rank 1 checks every message's size, tag and contents, and the order.
 */
#include "mtest.h"

#include <stdlib.h>

#define N      2000
#define MAXLEN 512

static int msg_len(int i)
{
    return (i * 37) % (MAXLEN + 1);
}

static void sender(unsigned char *bufs)
{
    MPI_Request *reqs = mtest_calloc(N, sizeof(MPI_Request));

    for (int i = 0; i < N; i++) {
        unsigned char *b = bufs + (size_t)i * MAXLEN;
        mtest_fill(b, (size_t)msg_len(i), (unsigned)i);
        MPI_Isend(b, msg_len(i), MPI_BYTE, 1, i % 7, MPI_COMM_WORLD, &reqs[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the receiver starts only now */

    /* The first quarter by MPI_Test, the second by MPI_Waitany, the third freed, the rest by
     * MPI_Waitall. */
    for (int i = 0; i < N / 4; i++) {
        int flag = 0;
        while (!flag)
            MPI_Test(&reqs[i], &flag, MPI_STATUS_IGNORE);
        MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Test left a completed send's handle set");
    }
    for (int done = 0; done < N / 4; done++) {
        int idx = -1;
        MPI_Waitany(N / 4, reqs + N / 4, &idx, MPI_STATUS_IGNORE);
        MTEST_CHECK(idx >= 0 && idx < N / 4, "MPI_Waitany returned index %d", idx);
    }
    for (int i = N / 2; i < 3 * N / 4; i++) {
        MPI_Request_free(&reqs[i]);
        MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
    }
    MPI_Waitall(N - 3 * N / 4, reqs + 3 * N / 4, MPI_STATUSES_IGNORE);
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* all arrived */

    /* Ready mode through the same path: the receives are posted before the go-ahead. */
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int i = 0; i < 64; i++) {
        unsigned char *b = bufs + (size_t)i * MAXLEN;
        mtest_fill(b, (size_t)msg_len(i), (unsigned)(i + N));
        MPI_Irsend(b, msg_len(i), MPI_BYTE, 1, 5, MPI_COMM_WORLD, &reqs[i]);
    }
    MPI_Waitall(64, reqs, MPI_STATUSES_IGNORE);
    free(reqs);
}

static void receiver(unsigned char *bufs)
{
    MPI_Request reqs[64];
    MPI_Status status;

    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) {
        unsigned char *b = bufs;
        int count = -1;

        /* Any tag: messages must still arrive in the order they were sent. */
        MPI_Recv(b, MAXLEN, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_BYTE, &count);
        MTEST_CHECK(count == msg_len(i) && status.MPI_TAG == i % 7,
                    "message %d: %d bytes with tag %d, expected %d bytes with tag %d", i, count,
                    status.MPI_TAG, msg_len(i), i % 7);
        MTEST_CHECK(mtest_check_fill(b, (size_t)count, (unsigned)i) < 0,
                    "message %d: contents differ", i);
    }
    MPI_Send(NULL, 0, MPI_BYTE, 0, 99, MPI_COMM_WORLD);

    for (int i = 0; i < 64; i++)
        MPI_Irecv(bufs + (size_t)i * MAXLEN, MAXLEN, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &reqs[i]);
    MPI_Send(NULL, 0, MPI_BYTE, 0, 98, MPI_COMM_WORLD);
    for (int i = 0; i < 64; i++) {
        int count = -1;

        MPI_Wait(&reqs[i], &status);
        MPI_Get_count(&status, MPI_BYTE, &count);
        MTEST_CHECK(count == msg_len(i) && mtest_check_fill(bufs + (size_t)i * MAXLEN,
                                                            (size_t)count, (unsigned)(i + N)) < 0,
                    "ready-mode message %d: %d bytes or contents wrong", i, count);
    }
}

int main(int argc, char **argv)
{
    int rank, size;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *bufs = mtest_calloc((size_t)N * MAXLEN, 1);
    if (size >= 2 && rank == 0)
        sender(bufs);
    else if (size >= 2 && rank == 1)
        receiver(bufs);
    else
        MPI_Barrier(MPI_COMM_WORLD);
    free(bufs);
    return mtest_finalize(0);
}
