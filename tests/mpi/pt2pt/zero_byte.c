/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages with no data, between ranks 0 and 1: count 0 with a NULL buffer in every send
 * mode and in MPI_Sendrecv, count 0 of a non-byte datatype, and a zero-byte message
 * received into a buffer with room for more, which must stay untouched. The status of
 * each receive must carry the source and the tag with count 0, and MPI_Probe must see
 * the empty message with count 0 before it is received.
 */
#include "mtest.h"

#define N 8

static int rank;

static void check_empty_message(const MPI_Status *status, int tag, const char *what)
{
    int count = -1;

    MPI_Get_count(status, MPI_DOUBLE, &count);
    MTEST_CHECK(status->MPI_SOURCE == 1 - rank && status->MPI_TAG == tag && count == 0,
                "%s: source %d tag %d count %d", what, status->MPI_SOURCE, status->MPI_TAG, count);
}

static void sender(void)
{
    MPI_Request req;
    int tag = 1;

    MPI_Send(NULL, 0, MPI_BYTE, 1, tag++, MPI_COMM_WORLD);
    MPI_Ssend(NULL, 0, MPI_BYTE, 1, tag++, MPI_COMM_WORLD);
    MPI_Send(NULL, 0, MPI_DOUBLE, 1, tag++, MPI_COMM_WORLD);
    MPI_Isend(NULL, 0, MPI_INT, 1, tag++, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Issend(NULL, 0, MPI_INT, 1, tag++, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* ready mode once the receiver says its receive is posted */
    MPI_Recv(NULL, 0, MPI_BYTE, 1, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Rsend(NULL, 0, MPI_BYTE, 1, tag++, MPI_COMM_WORLD);
    MPI_Sendrecv(NULL, 0, MPI_BYTE, 1, tag, NULL, 0, MPI_BYTE, 1, tag, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

static void receiver(void)
{
    MPI_Request req;
    MPI_Status status;
    double buf[N];
    int tag = 1;

    for (int i = 0; i < N; i++) {
        buf[i] = i + 0.5;
    }
    MPI_Probe(0, tag, MPI_COMM_WORLD, &status);
    check_empty_message(&status, tag, "MPI_Probe");
    MPI_Recv(NULL, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &status);
    check_empty_message(&status, tag++, "MPI_Send");
    MPI_Recv(buf, N, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &status);
    check_empty_message(&status, tag++, "MPI_Ssend");
    MPI_Recv(buf, N, MPI_DOUBLE, 0, tag, MPI_COMM_WORLD, &status);
    check_empty_message(&status, tag++, "MPI_Send of 0 doubles");
    MPI_Irecv(buf, N, MPI_INT, 0, tag, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &status);
    check_empty_message(&status, tag++, "MPI_Isend");
    MPI_Recv(NULL, 0, MPI_INT, 0, tag, MPI_COMM_WORLD, &status);
    check_empty_message(&status, tag++, "MPI_Issend");
    MPI_Irecv(buf, N, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
    MPI_Send(NULL, 0, MPI_BYTE, 0, 100, MPI_COMM_WORLD);
    MPI_Wait(&req, &status);
    check_empty_message(&status, tag++, "MPI_Rsend");
    MPI_Sendrecv(NULL, 0, MPI_BYTE, 0, tag, NULL, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &status);
    check_empty_message(&status, tag, "MPI_Sendrecv");
    for (int i = 0; i < N; i++) {
        if (!MTEST_CHECK(buf[i] == i + 0.5, "an empty message changed the buffer at %d", i)) {
            break;
        }
    }
}

int main(int argc, char **argv)
{
    int size;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2 && rank == 0) {
        sender();
    } else if (size >= 2 && rank == 1) {
        receiver();
    }
    return mtest_finalize(0);
}
