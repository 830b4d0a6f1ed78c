/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Messages from a rank to itself, small and large (1 MiB): MPI_Isend then MPI_Recv,
 * MPI_Irecv then a blocking MPI_Send, both nonblocking in either order with MPI_Waitall,
 * MPI_Sendrecv and MPI_Sendrecv_replace with oneself, MPI_Probe of one's own message, and
 * an MPI_Issend that must stay incomplete until its receive is posted. Then 100 messages
 * with distinct tags sent first and received in reverse tag order, which must match by
 * tag. Every rank does this on its own, so any number of ranks works.
 */
#include "mtest.h"

#include <stdlib.h>

#define BIG   (1 << 20)
#define NTAGS 100

static int rank;

static void check_data(const char *buf, int n, unsigned seed, const MPI_Status *status, int tag,
                       const char *what)
{
    int count = -1;

    MPI_Get_count(status, MPI_BYTE, &count);
    MTEST_CHECK(status->MPI_SOURCE == rank && status->MPI_TAG == tag && count == n,
                "%s (%d bytes): source %d tag %d count %d", what, n, status->MPI_SOURCE,
                status->MPI_TAG, count);
    MTEST_CHECK(mtest_check_fill(buf, (size_t)n, seed) < 0, "%s (%d bytes): wrong data", what, n);
}

static void pairs(char *sbuf, char *rbuf, int n)
{
    MPI_Request reqs[2];
    MPI_Status statuses[2], status;

    mtest_fill(sbuf, (size_t)n, 1);
    MPI_Isend(sbuf, n, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &reqs[0]);
    MPI_Recv(rbuf, n, MPI_BYTE, rank, 1, MPI_COMM_WORLD, &status);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    check_data(rbuf, n, 1, &status, 1, "MPI_Isend, MPI_Recv");

    mtest_fill(sbuf, (size_t)n, 2);
    MPI_Irecv(rbuf, n, MPI_BYTE, rank, 2, MPI_COMM_WORLD, &reqs[0]);
    MPI_Send(sbuf, n, MPI_BYTE, rank, 2, MPI_COMM_WORLD);
    MPI_Wait(&reqs[0], &status);
    check_data(rbuf, n, 2, &status, 2, "MPI_Irecv, MPI_Send");

    mtest_fill(sbuf, (size_t)n, 3);
    MPI_Isend(sbuf, n, MPI_BYTE, rank, 3, MPI_COMM_WORLD, &reqs[0]);
    MPI_Irecv(rbuf, n, MPI_BYTE, rank, 3, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, statuses);
    check_data(rbuf, n, 3, &statuses[1], 3, "MPI_Isend, MPI_Irecv");

    mtest_fill(sbuf, (size_t)n, 4);
    MPI_Irecv(rbuf, n, MPI_BYTE, rank, 4, MPI_COMM_WORLD, &reqs[0]);
    MPI_Isend(sbuf, n, MPI_BYTE, rank, 4, MPI_COMM_WORLD, &reqs[1]);
    MPI_Waitall(2, reqs, statuses);
    check_data(rbuf, n, 4, &statuses[0], 4, "MPI_Irecv, MPI_Isend");

    mtest_fill(sbuf, (size_t)n, 5);
    MPI_Sendrecv(sbuf, n, MPI_BYTE, rank, 5, rbuf, n, MPI_BYTE, rank, 5, MPI_COMM_WORLD, &status);
    check_data(rbuf, n, 5, &status, 5, "MPI_Sendrecv");

    mtest_fill(rbuf, (size_t)n, 6);
    MPI_Sendrecv_replace(rbuf, n, MPI_BYTE, rank, 6, rank, 6, MPI_COMM_WORLD, &status);
    check_data(rbuf, n, 6, &status, 6, "MPI_Sendrecv_replace");

    mtest_fill(sbuf, (size_t)n, 7);
    MPI_Isend(sbuf, n, MPI_BYTE, rank, 7, MPI_COMM_WORLD, &reqs[0]);
    MPI_Probe(rank, MPI_ANY_TAG, MPI_COMM_WORLD, &status);
    check_data(sbuf, n, 7, &status, 7, "MPI_Probe");
    MPI_Recv(rbuf, n, MPI_BYTE, status.MPI_SOURCE, status.MPI_TAG, MPI_COMM_WORLD, &status);
    MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
    check_data(rbuf, n, 7, &status, 7, "MPI_Recv after MPI_Probe");
}

static void synchronous(void)
{
    MPI_Request req;
    MPI_Status status;
    int value = 99, got = -1, flag = 0;

    MPI_Issend(&value, 1, MPI_INT, rank, 8, MPI_COMM_WORLD, &req);
    for (int i = 0; i < 100 && !flag; i++) {
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    }
    MTEST_CHECK(!flag, "MPI_Issend to oneself completed with no receive posted");
    MPI_Recv(&got, 1, MPI_INT, rank, 8, MPI_COMM_WORLD, &status);
    if (!flag) {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MTEST_CHECK(got == 99, "MPI_Issend to oneself delivered %d", got);
}

static void reverse_tags(void)
{
    MPI_Request reqs[NTAGS];
    int values[NTAGS], got;

    for (int tag = 0; tag < NTAGS; tag++) {
        values[tag] = 1000 + tag;
        MPI_Isend(&values[tag], 1, MPI_INT, rank, tag, MPI_COMM_WORLD, &reqs[tag]);
    }
    for (int tag = NTAGS - 1; tag >= 0; tag--) {
        got = -1;
        MPI_Recv(&got, 1, MPI_INT, rank, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MTEST_CHECK(got == 1000 + tag, "tag %d delivered %d", tag, got);
    }
    MPI_Waitall(NTAGS, reqs, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    char *sbuf, *rbuf;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    sbuf = mtest_calloc(BIG, 1);
    rbuf = mtest_calloc(BIG, 1);
    pairs(sbuf, rbuf, 10);
    pairs(sbuf, rbuf, BIG);
    synchronous();
    reverse_tags();
    free(sbuf);
    free(rbuf);
    return mtest_finalize(0);
}
