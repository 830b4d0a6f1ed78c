/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent requests around a ring (send to rank+1, receive from rank-1, oneself when
 * alone): MPI_Send_init, MPI_Ssend_init, MPI_Bsend_init and MPI_Rsend_init paired with
 * MPI_Recv_init, restarted many times with MPI_Start and MPI_Startall and new contents
 * each time, at sizes on both sides of the eager/rendezvous switch. Ready mode waits for
 * the receiver's "posted" message in every round. An inactive persistent request must
 * complete at once in MPI_Wait/MPI_Test with an empty status and stay allocated;
 * MPI_Request_free then sets it to MPI_REQUEST_NULL.
 */
#include "mtest.h"

#include <stdlib.h>

enum mode { MODE_SEND, MODE_SSEND, MODE_BSEND, MODE_RSEND, NMODES };

static const char *const mode_names[NMODES] = {"MPI_Send_init", "MPI_Ssend_init", "MPI_Bsend_init",
                                               "MPI_Rsend_init"};
#define TAG_POSTED 1
#define TAG_DATA   2

static int rank, size, right, left;

static int send_init(enum mode mode, const void *buf, int n, MPI_Request *req)
{
    switch (mode) {
    case MODE_SEND: return MPI_Send_init(buf, n, MPI_INT, right, TAG_DATA, MPI_COMM_WORLD, req);
    case MODE_SSEND: return MPI_Ssend_init(buf, n, MPI_INT, right, TAG_DATA, MPI_COMM_WORLD, req);
    case MODE_BSEND: return MPI_Bsend_init(buf, n, MPI_INT, right, TAG_DATA, MPI_COMM_WORLD, req);
    default: return MPI_Rsend_init(buf, n, MPI_INT, right, TAG_DATA, MPI_COMM_WORLD, req);
    }
}

static void check_inactive(MPI_Request *req, const char *what)
{
    MPI_Status status;
    int flag = 0, count = -1;

    MPI_Wait(req, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    MTEST_CHECK(*req != MPI_REQUEST_NULL, "%s: MPI_Wait freed an inactive persistent request",
                what);
    MTEST_CHECK(status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG && count == 0,
                "%s: inactive MPI_Wait status source %d tag %d count %d", what, status.MPI_SOURCE,
                status.MPI_TAG, count);
    MPI_Test(req, &flag, &status);
    MTEST_CHECK(flag && status.MPI_SOURCE == MPI_ANY_SOURCE && status.MPI_TAG == MPI_ANY_TAG,
                "%s: inactive MPI_Test flag %d source %d tag %d", what, flag, status.MPI_SOURCE,
                status.MPI_TAG);
    MTEST_CHECK(*req != MPI_REQUEST_NULL, "%s: MPI_Test freed an inactive persistent request",
                what);
}

/* Even rounds use MPI_Startall, odd ones MPI_Start; reqs[0] is the receive. */
static void start_round(enum mode mode, MPI_Request reqs[2], int iter)
{
    if (mode != MODE_RSEND) {
        if (iter % 2 == 0) {
            MPI_Startall(2, reqs);
        } else {
            MPI_Start(&reqs[0]);
            MPI_Start(&reqs[1]);
        }
        return;
    }
    /* ready mode: the receive of the left neighbour must be active before the send */
    MPI_Start(&reqs[0]);
    MPI_Sendrecv(NULL, 0, MPI_INT, left, TAG_POSTED, NULL, 0, MPI_INT, right, TAG_POSTED,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (iter % 2 == 0) {
        MPI_Startall(1, &reqs[1]);
    } else {
        MPI_Start(&reqs[1]);
    }
}

static void run_mode(enum mode mode, int n, int iters, int *sbuf, int *rbuf)
{
    MPI_Request reqs[2];
    MPI_Status statuses[2];
    int count;

    MPI_Recv_init(rbuf, n, MPI_INT, left, TAG_DATA, MPI_COMM_WORLD, &reqs[0]);
    send_init(mode, sbuf, n, &reqs[1]);
    check_inactive(&reqs[0], "fresh MPI_Recv_init");
    for (int iter = 0; iter < iters; iter++) {
        mtest_fill(sbuf, (size_t)n * sizeof(int), (unsigned)(rank * 10000 + iter));
        start_round(mode, reqs, iter);
        MPI_Waitall(2, reqs, statuses);
        count = -1;
        MPI_Get_count(&statuses[0], MPI_INT, &count);
        MTEST_CHECK(count == n && statuses[0].MPI_SOURCE == left, "%s round %d: count %d source %d",
                    mode_names[mode], iter, count, statuses[0].MPI_SOURCE);
        MTEST_CHECK(
            mtest_check_fill(rbuf, (size_t)n * sizeof(int), (unsigned)(left * 10000 + iter)) < 0,
            "%s round %d: wrong data (%d ints)", mode_names[mode], iter, n);
    }
    check_inactive(&reqs[0], "MPI_Recv_init");
    check_inactive(&reqs[1], mode_names[mode]);
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    MTEST_CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL,
                "MPI_Request_free did not set MPI_REQUEST_NULL");
}

int main(int argc, char **argv)
{
    const int sizes[] = {0, 1, 100, 64 * 1024};
    const int iters[] = {50, 200, 200, 20};
    int max = sizes[3];
    int bsize = 4 * (max * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    int *sbuf, *rbuf;
    char *bbuf;
    void *detached;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    sbuf = mtest_calloc((size_t)max, sizeof(int));
    rbuf = mtest_calloc((size_t)max, sizeof(int));
    bbuf = mtest_calloc((size_t)bsize, 1);
    MPI_Buffer_attach(bbuf, bsize);

    for (int mode = 0; mode < NMODES; mode++) {
        for (int i = 0; i < 4; i++) {
            run_mode((enum mode)mode, sizes[i], iters[i], sbuf, rbuf);
        }
    }

    MPI_Buffer_detach(&detached, &bsize);
    free(bbuf);
    free(sbuf);
    free(rbuf);
    return mtest_finalize(0);
}
