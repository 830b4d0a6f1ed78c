/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Cancel of receives. A posted receive that nothing matches is cancelled: MPI_Wait
 * (or an MPI_Test loop) completes it, MPI_Test_cancelled says true and the request
 * becomes MPI_REQUEST_NULL; a message sent afterwards goes to the next receive, not to
 * the cancelled one. The same for a started persistent receive, which can be started
 * again and then receives normally. Cancelling a receive that has already completed
 * (seen with MPI_Request_get_status, which does not free it) has no effect: MPI_Test_cancelled says
 * false and the data is there. With more ranks, a receive with MPI_ANY_SOURCE is cancelled before
 * the others send on its tag.
 */
#include "mtest.h"

#define TAG_SELF 77
#define TAG_ANY  78

static int rank, size;

static void check_cancelled(const MPI_Status *status, int expected, const char *what)
{
    int flag = -1;

    MPI_Test_cancelled(status, &flag);
    MTEST_CHECK(flag == expected, "%s: MPI_Test_cancelled gave %d, expected %d", what, flag,
                expected);
}

/* A message to oneself must not land in the cancelled receive. */
static void send_self_and_check(int value, const char *what)
{
    MPI_Request req;
    MPI_Status status;
    int got = -1;

    /* post first: a blocking send to oneself may wait for the receive */
    MPI_Irecv(&got, 1, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD, &req);
    MPI_Send(&value, 1, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD);
    MPI_Wait(&req, &status);
    check_cancelled(&status, 0, what);
    MTEST_CHECK(got == value, "%s: received %d, expected %d", what, got, value);
}

static void cancel_posted(void)
{
    MPI_Request req;
    MPI_Status status;
    int unused = -1, flag = 0;

    MPI_Irecv(&unused, 1, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &status);
    MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Wait did not free the cancelled request");
    check_cancelled(&status, 1, "cancelled MPI_Irecv, MPI_Wait");

    MPI_Irecv(&unused, 1, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    while (!flag) {
        MPI_Test(&req, &flag, &status);
    }
    check_cancelled(&status, 1, "cancelled MPI_Irecv, MPI_Test");
    send_self_and_check(11, "receive after a cancelled one");
    MTEST_CHECK(unused == -1, "a cancelled receive wrote its buffer");
}

static void cancel_persistent(void)
{
    MPI_Request req;
    MPI_Status status;
    int value = -1, got = -1;

    MPI_Recv_init(&got, 1, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD, &req);
    MPI_Start(&req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &status);
    check_cancelled(&status, 1, "cancelled persistent receive");
    MTEST_CHECK(req != MPI_REQUEST_NULL, "MPI_Wait freed a persistent request");

    MPI_Start(&req);
    value = 22;
    MPI_Send(&value, 1, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD);
    MPI_Wait(&req, &status);
    check_cancelled(&status, 0, "restarted persistent receive");
    MTEST_CHECK(got == 22 && status.MPI_SOURCE == rank && status.MPI_TAG == TAG_SELF,
                "restarted persistent receive: got %d from %d tag %d", got, status.MPI_SOURCE,
                status.MPI_TAG);
    MPI_Request_free(&req);
}

static void cancel_completed(void)
{
    MPI_Request req;
    MPI_Status status;
    int value = 33, got = -1, flag = 0;

    MPI_Irecv(&got, 1, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD, &req);
    MPI_Send(&value, 1, MPI_INT, rank, TAG_SELF, MPI_COMM_WORLD);
    while (!flag) {
        MPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
    }
    /* the receive is complete but not freed; cancelling it must have no effect */
    MPI_Cancel(&req);
    MPI_Wait(&req, &status);
    check_cancelled(&status, 0, "cancel after the match");
    MTEST_CHECK(got == 33, "cancel after the match: received %d", got);
}

/* Others send on TAG_ANY only after rank 0 cancelled its wildcard receive. */
static void cancel_any_source(void)
{
    MPI_Request req;
    MPI_Status status;
    int got = -1;

    if (rank == 0) {
        MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, TAG_ANY, MPI_COMM_WORLD, &req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &status);
        check_cancelled(&status, 1, "cancelled MPI_ANY_SOURCE receive");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0) {
        MPI_Send(&rank, 1, MPI_INT, 0, TAG_ANY, MPI_COMM_WORLD);
        return;
    }
    for (int i = 1; i < size; i++) {
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, TAG_ANY, MPI_COMM_WORLD, &status);
        MTEST_CHECK(got == status.MPI_SOURCE && got > 0, "after cancel: got %d from %d", got,
                    status.MPI_SOURCE);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    cancel_posted();
    cancel_persistent();
    cancel_completed();
    cancel_any_source();
    return mtest_finalize(0);
}
