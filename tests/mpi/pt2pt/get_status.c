/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Request_get_status reports completion without freeing the request. Rank 1 posts a
 * receive while rank 0 holds its message back until told to send: until then the flag
 * must be false. Once complete, the flag is true with the
 * full status (source, tag, count), repeatedly; the handle is still valid, and MPI_Wait
 * then frees it and returns the same status. On a send request it reports completion too.
 * A receive whose message was truncated makes MPI_Request_get_status and _any return
 * MPI_ERR_TRUNCATE, as MPI_Test would, and leaves the request for MPI_Wait.
 */
#include "mtest.h"

#define TAG_GO   1
#define TAG_DATA 2
#define N        100

static void check_status(const MPI_Status *status, int source, int tag, int count, const char *what)
{
    int got = -1;

    MPI_Get_count(status, MPI_INT, &got);
    MTEST_CHECK(status->MPI_SOURCE == source && status->MPI_TAG == tag && got == count,
                "%s: source %d tag %d count %d, expected %d %d %d", what, status->MPI_SOURCE,
                status->MPI_TAG, got, source, tag, count);
}

static void receiver(void)
{
    MPI_Request req;
    MPI_Status status;
    int buf[N], flag = 1;

    MPI_Irecv(buf, N, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD, &req);
    for (int i = 0; i < 1000; i++) {
        MPI_Request_get_status(req, &flag, &status);
        MTEST_CHECK(!flag, "MPI_Request_get_status: complete before anything was sent");
        if (flag) {
            break;
        }
    }
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD);
    flag = 0;
    while (!flag) {
        MPI_Request_get_status(req, &flag, &status);
    }
    check_status(&status, 0, TAG_DATA, N - 1, "MPI_Request_get_status");
    MTEST_CHECK(req != MPI_REQUEST_NULL, "MPI_Request_get_status freed the request");
    flag = 0;
    MPI_Request_get_status(req, &flag, &status);
    MTEST_CHECK(flag, "a second MPI_Request_get_status says not complete");
    check_status(&status, 0, TAG_DATA, N - 1, "second MPI_Request_get_status");
    MPI_Wait(&req, &status);
    check_status(&status, 0, TAG_DATA, N - 1, "MPI_Wait after MPI_Request_get_status");
    MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Wait did not free the request");
    for (int i = 0; i < N - 1; i++) {
        if (!MTEST_CHECK(buf[i] == i, "element %d is %d", i, buf[i])) {
            break;
        }
    }

    /* a truncated receive: the status queries report the error */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Irecv(buf, 2, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD, &req);
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD);
    int rc = MPI_SUCCESS;
    flag = 0;
    while (!flag)
        rc = MPI_Request_get_status(req, &flag, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Request_get_status");
    int index = -1;
    rc = MPI_Request_get_status_any(1, &req, &index, &flag, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Request_get_status_any");
    MTEST_CHECK(req != MPI_REQUEST_NULL && index == 0, "the request went: index %d", index);
    rc = MPI_Wait(&req, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Wait");
}

static void sender(void)
{
    MPI_Request req;
    int buf[N], flag = 0;

    for (int i = 0; i < N; i++) {
        buf[i] = i;
    }
    MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Isend(buf, N - 1, MPI_INT, 1, TAG_DATA, MPI_COMM_WORLD, &req);
    while (!flag) {
        MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
    }
    MTEST_CHECK(req != MPI_REQUEST_NULL, "MPI_Request_get_status freed the send request");
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* too long for the receiver's buffer of 2 */
    MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(buf, 5, MPI_INT, 1, TAG_DATA, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, size;

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
