/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Truncation: a message longer than the receive buffer is an MPI_ERR_TRUNCATE error of
 * the receive, reported through MPI_ERRORS_RETURN: as the return code of MPI_Recv,
 * MPI_Wait and MPI_Mrecv (small, medium and rendezvous-sized messages; a medium message from a
 * blocking send travels as several eager fragments), of the MPI_Wait after MPI_Imrecv (which
 * itself succeeds and returns a request, even when the message arrived whole before it), and
 * from MPI_Waitall as
 * MPI_ERR_IN_STATUS with MPI_ERR_TRUNCATE in the MPI_ERROR field of that message's status
 * and MPI_SUCCESS in the field of the message that fit. The sender sees no error, and
 * both ranks communicate normally afterwards.
 */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SMALL  100
#define MEDIUM (16 << 10) /* 64 KiB */
#define BIG    (1 << 20)
#define ROOM   10
#define NMSG   11

enum {
    TAG_RECV_SMALL = 1,
    TAG_RECV_MEDIUM,
    TAG_RECV_BIG,
    TAG_WAIT,
    TAG_ALL_OK,
    TAG_ALL_BAD,
    TAG_MRECV,
    TAG_MRECV_MEDIUM,
    TAG_IMRECV,
    TAG_SOME_BAD,
    TAG_AFTER
};

static void sender(int *buf)
{
    const int tags[NMSG] = {TAG_RECV_SMALL, TAG_RECV_MEDIUM, TAG_RECV_BIG, TAG_WAIT,
                            TAG_ALL_OK,     TAG_ALL_BAD,     TAG_MRECV,    TAG_MRECV_MEDIUM,
                            TAG_IMRECV,     TAG_SOME_BAD,    TAG_AFTER};
    const int counts[NMSG] = {SMALL, MEDIUM, BIG,   BIG,   ROOM, SMALL,
                              SMALL, MEDIUM, SMALL, SMALL, SMALL};
    int rc;

    for (int i = 0; i < BIG; i++) {
        buf[i] = i;
    }
    for (int i = 0; i < NMSG; i++) {
        rc = MPI_Send(buf, counts[i], MPI_INT, 1, tags[i], MPI_COMM_WORLD);
        MTEST_CHECK(rc == MPI_SUCCESS, "sending %d ints with tag %d returned %d", counts[i],
                    tags[i], rc);
    }
}

static void check_waitall(int *buf)
{
    MPI_Request reqs[2];
    MPI_Status statuses[2];
    int error_class = -1, rc;

    MPI_Irecv(buf, ROOM, MPI_INT, 0, TAG_ALL_OK, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(buf + ROOM, ROOM, MPI_INT, 0, TAG_ALL_BAD, MPI_COMM_WORLD, &reqs[1]);
    rc = MPI_Waitall(2, reqs, statuses);
    /* the code itself, which programs compare with (MPI-4.1 3.7.5) */
    MTEST_CHECK(rc == MPI_ERR_IN_STATUS, "MPI_Waitall returned %d, not MPI_ERR_IN_STATUS", rc);
    MTEST_CHECK(statuses[0].MPI_ERROR == MPI_SUCCESS, "MPI_ERROR of the good message is %d",
                statuses[0].MPI_ERROR);
    MPI_Error_class(statuses[1].MPI_ERROR, &error_class);
    MTEST_CHECK(error_class == MPI_ERR_TRUNCATE, "MPI_ERROR of the truncated message is %s",
                mtest_error_class_name(error_class));

    int outcount = -1, index = -1;
    MPI_Irecv(buf, ROOM, MPI_INT, 0, TAG_SOME_BAD, MPI_COMM_WORLD, &reqs[0]);
    rc = MPI_Waitsome(1, reqs, &outcount, &index, statuses);
    MTEST_CHECK(rc == MPI_ERR_IN_STATUS && outcount == 1 && index == 0,
                "MPI_Waitsome returned %d (not MPI_ERR_IN_STATUS), outcount %d index %d", rc,
                outcount, index);
    MPI_Error_class(statuses[0].MPI_ERROR, &error_class);
    MTEST_CHECK(error_class == MPI_ERR_TRUNCATE, "MPI_ERROR after MPI_Waitsome is %s",
                mtest_error_class_name(error_class));
}

/* The truncation of a matched message belongs to the request, not to MPI_Imrecv. */
static void check_imrecv(int *buf)
{
    MPI_Message msg;
    MPI_Status status;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;

    MPI_Mprobe(0, TAG_IMRECV, MPI_COMM_WORLD, &msg, &status);
    rc = MPI_Imrecv(buf, ROOM, MPI_INT, &msg, &req);
    MTEST_CHECK(rc == MPI_SUCCESS && req != MPI_REQUEST_NULL && msg == MPI_MESSAGE_NULL,
                "MPI_Imrecv of a message that does not fit: rc %d, request %s, message %s", rc,
                req == MPI_REQUEST_NULL ? "null" : "set",
                msg == MPI_MESSAGE_NULL ? "null" : "not null");
    if (req == MPI_REQUEST_NULL)
        return;
    rc = MPI_Wait(&req, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Wait");
    MTEST_CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == TAG_IMRECV,
                "status of the truncated MPI_Imrecv: source %d tag %d", status.MPI_SOURCE,
                status.MPI_TAG);
}

static void receiver(int *buf)
{
    MPI_Request req;
    MPI_Message msg;
    MPI_Status status;
    int rc, count = -1;

    rc = MPI_Recv(buf, ROOM, MPI_INT, 0, TAG_RECV_SMALL, MPI_COMM_WORLD, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Recv");
    {
        /* the message names the sender, the tag and the room there was */
        char text[MPI_MAX_ERROR_STRING], want[64];
        int len;
        MPI_Error_string(rc, text, &len);
        snprintf(want, sizeof(want), "from rank 0 with tag %d", TAG_RECV_SMALL);
        MTEST_CHECK(strstr(text, want) != NULL && strstr(text, "(40 bytes)") != NULL,
                    "truncation message: %s", text);
    }
    rc = MPI_Recv(buf, ROOM, MPI_INT, 0, TAG_RECV_MEDIUM, MPI_COMM_WORLD, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Recv");
    rc = MPI_Recv(buf, ROOM, MPI_INT, 0, TAG_RECV_BIG, MPI_COMM_WORLD, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Recv");
    MPI_Irecv(buf, ROOM, MPI_INT, 0, TAG_WAIT, MPI_COMM_WORLD, &req);
    rc = MPI_Wait(&req, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Wait");
    check_waitall(buf);
    MPI_Mprobe(0, TAG_MRECV, MPI_COMM_WORLD, &msg, &status);
    status.MPI_SOURCE = status.MPI_TAG = -99;
    rc = MPI_Mrecv(buf, ROOM, MPI_INT, &msg, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Mrecv");
    MTEST_CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == TAG_MRECV,
                "status of the truncated MPI_Mrecv: source %d tag %d", status.MPI_SOURCE,
                status.MPI_TAG);
    /* the probe reports the whole medium message, not its first fragment */
    MPI_Mprobe(0, TAG_MRECV_MEDIUM, MPI_COMM_WORLD, &msg, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    MTEST_CHECK(count == MEDIUM, "MPI_Mprobe of a %d-int message: count %d", MEDIUM, count);
    rc = MPI_Mrecv(buf, ROOM, MPI_INT, &msg, &status);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Mrecv");
    check_imrecv(buf);

    /* nothing is left behind by the errors */
    rc = MPI_Recv(buf, SMALL, MPI_INT, 0, TAG_AFTER, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    MTEST_CHECK(rc == MPI_SUCCESS && count == SMALL && buf[SMALL - 1] == SMALL - 1,
                "receive after the truncations: rc %d count %d", rc, count);
}

int main(int argc, char **argv)
{
    int rank, size;
    int *buf;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    buf = mtest_calloc(BIG, sizeof(int));
    if (size >= 2 && rank == 0) {
        sender(buf);
    } else if (size >= 2 && rank == 1) {
        receiver(buf);
    }
    free(buf);
    return mtest_finalize(0);
}
