/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Matched probes: MPI_Mprobe, MPI_Improbe, MPI_Mrecv and MPI_Imrecv. Rank 1 sends rank 0
 * a series of messages; rank 0 checks that a matched message leaves the matching queue
 * (a second probe, or a posted receive, gets the next message with the same tag), that
 * matched messages can be received in any order, that large (rendezvous) and empty
 * messages work, and that the message handle becomes MPI_MESSAGE_NULL once received.
 * Probing MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC with the MPI_PROC_NULL status (source
 * MPI_PROC_NULL, tag MPI_ANY_TAG, count 0), and receiving that handle completes at once.
 * With more than two ranks, the others only take part in the final barrier.
 */
#include "mtest.h"

#include <stdlib.h>

#define TAG_PAIR  5
#define TAG_BIG   6
#define TAG_EMPTY 7
#define TAG_RECV  8
#define BIG_BYTES (1 << 20)

static void check_status(const MPI_Status *status, int source, int tag, int count,
                         MPI_Datatype type, const char *what)
{
    int got = -1;

    MPI_Get_count(status, type, &got);
    MTEST_CHECK(status->MPI_SOURCE == source && status->MPI_TAG == tag && got == count,
                "%s: source %d tag %d count %d, expected %d %d %d", what, status->MPI_SOURCE,
                status->MPI_TAG, got, source, tag, count);
}

static void sender(char *big)
{
    int a[10], b[20], e = 100, f = 200;

    mtest_fill(a, sizeof(a), 1);
    mtest_fill(b, sizeof(b), 2);
    mtest_fill(big, BIG_BYTES, 3);
    MPI_Send(a, 10, MPI_INT, 0, TAG_PAIR, MPI_COMM_WORLD);
    MPI_Send(b, 20, MPI_INT, 0, TAG_PAIR, MPI_COMM_WORLD);
    MPI_Send(big, BIG_BYTES, MPI_BYTE, 0, TAG_BIG, MPI_COMM_WORLD);
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_EMPTY, MPI_COMM_WORLD);
    MPI_Send(&e, 1, MPI_INT, 0, TAG_RECV, MPI_COMM_WORLD);
    MPI_Send(&f, 1, MPI_INT, 0, TAG_RECV, MPI_COMM_WORLD);
}

/* Two messages with one tag: match both, receive them in reverse order. */
static void check_pair(void)
{
    MPI_Message m1, m2;
    MPI_Status status;
    int a[10], b[20], flag = 0;

    MPI_Mprobe(1, TAG_PAIR, MPI_COMM_WORLD, &m1, &status);
    check_status(&status, 1, TAG_PAIR, 10, MPI_INT, "MPI_Mprobe first");
    while (!flag) {
        MPI_Improbe(1, TAG_PAIR, MPI_COMM_WORLD, &flag, &m2, &status);
    }
    /* the first message is matched already, so the second probe must see the second */
    check_status(&status, 1, TAG_PAIR, 20, MPI_INT, "MPI_Improbe second");
    MPI_Mrecv(b, 20, MPI_INT, &m2, &status);
    check_status(&status, 1, TAG_PAIR, 20, MPI_INT, "MPI_Mrecv second");
    MTEST_CHECK(m2 == MPI_MESSAGE_NULL, "MPI_Mrecv left the message handle set");
    MPI_Mrecv(a, 10, MPI_INT, &m1, &status);
    check_status(&status, 1, TAG_PAIR, 10, MPI_INT, "MPI_Mrecv first");
    MTEST_CHECK(mtest_check_fill(a, sizeof(a), 1) < 0 && mtest_check_fill(b, sizeof(b), 2) < 0,
                "matched messages received out of order carry the wrong data");
}

static void check_big_and_empty(char *big)
{
    MPI_Message msg;
    MPI_Request req;
    MPI_Status status;
    int flag = 0;

    while (!flag) {
        MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &status);
    }
    check_status(&status, 1, TAG_BIG, BIG_BYTES, MPI_BYTE, "MPI_Improbe big");
    MPI_Imrecv(big, BIG_BYTES, MPI_BYTE, &msg, &req);
    MTEST_CHECK(msg == MPI_MESSAGE_NULL, "MPI_Imrecv left the message handle set");
    MPI_Wait(&req, &status);
    check_status(&status, 1, TAG_BIG, BIG_BYTES, MPI_BYTE, "MPI_Imrecv big");
    MTEST_CHECK(mtest_check_fill(big, BIG_BYTES, 3) < 0, "MPI_Imrecv big: wrong data");

    MPI_Mprobe(MPI_ANY_SOURCE, TAG_EMPTY, MPI_COMM_WORLD, &msg, &status);
    check_status(&status, 1, TAG_EMPTY, 0, MPI_BYTE, "MPI_Mprobe empty");
    MPI_Mrecv(NULL, 0, MPI_BYTE, &msg, &status);
    check_status(&status, 1, TAG_EMPTY, 0, MPI_BYTE, "MPI_Mrecv empty");
}

/* A matched message is out of reach of an ordinary receive. */
static void check_recv_skips_matched(void)
{
    MPI_Message msg;
    MPI_Status status;
    int first = -1, second = -1;

    MPI_Mprobe(1, TAG_RECV, MPI_COMM_WORLD, &msg, &status);
    MPI_Recv(&second, 1, MPI_INT, 1, TAG_RECV, MPI_COMM_WORLD, &status);
    MPI_Mrecv(&first, 1, MPI_INT, &msg, &status);
    MTEST_CHECK(first == 100 && second == 200,
                "MPI_Recv after MPI_Mprobe got %d, MPI_Mrecv %d (expected 200 and 100)", second,
                first);
}

static void check_proc_null(void)
{
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Request req;
    MPI_Status status;
    int flag = 0, value = 7;

    MPI_Mprobe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &msg, &status);
    MTEST_CHECK(msg == MPI_MESSAGE_NO_PROC, "MPI_Mprobe(MPI_PROC_NULL) gave another message");
    check_status(&status, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT, "MPI_Mprobe(MPI_PROC_NULL)");
    MPI_Mrecv(&value, 1, MPI_INT, &msg, &status);
    check_status(&status, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT, "MPI_Mrecv(NO_PROC)");
    MTEST_CHECK(msg == MPI_MESSAGE_NULL && value == 7,
                "MPI_Mrecv(NO_PROC) left the handle set or wrote the buffer");

    MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &status);
    MTEST_CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "MPI_Improbe(MPI_PROC_NULL): flag %d", flag);
    check_status(&status, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT, "MPI_Improbe(MPI_PROC_NULL)");
    MPI_Imrecv(&value, 1, MPI_INT, &msg, &req);
    MPI_Wait(&req, &status);
    check_status(&status, MPI_PROC_NULL, MPI_ANY_TAG, 0, MPI_INT, "MPI_Imrecv(NO_PROC)");
    MTEST_CHECK(msg == MPI_MESSAGE_NULL && value == 7,
                "MPI_Imrecv(NO_PROC) left the handle set or wrote the buffer");
}

int main(int argc, char **argv)
{
    int rank, size;
    char *big;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    big = mtest_calloc(BIG_BYTES, 1);
    check_proc_null();
    if (rank == 0 && size > 1) {
        check_pair();
        check_big_and_empty(big);
        check_recv_skips_matched();
    } else if (rank == 1) {
        sender(big);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(big);
    return mtest_finalize(0);
}
