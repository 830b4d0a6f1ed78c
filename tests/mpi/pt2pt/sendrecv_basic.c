/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking point-to-point around a ring (each rank sends to rank+1 and receives from
 * rank-1, itself when alone): MPI_Send/MPI_Recv, MPI_Sendrecv with different send and
 * receive tags and MPI_Sendrecv_replace, for counts 0, 1, 7, 1000 and 100000 ints. The
 * payload must arrive intact; the status must carry the source, the tag and the count,
 * a receive buffer larger than the message must be accepted, and the MPI_ERROR field must
 * be left alone by these single-completion calls (MPI-4.1 section 3.2.5: only the
 * functions returning several statuses may update it).
 */
#include "mtest.h"

#include <stdlib.h>

#define SENTINEL_ERROR (-12345)

static const int counts[] = {0, 1, 7, 1000, 100000};
#define NCOUNTS (int)(sizeof(counts) / sizeof(counts[0]))

static int rank, size, right, left;

static void check_status(const MPI_Status *status, int source, int tag, int count, const char *what,
                         int check_error_field)
{
    int got = -1;

    MPI_Get_count(status, MPI_INT, &got);
    MTEST_CHECK(status->MPI_SOURCE == source && status->MPI_TAG == tag && got == count,
                "%s: status source %d tag %d count %d, expected %d %d %d", what, status->MPI_SOURCE,
                status->MPI_TAG, got, source, tag, count);
    if (check_error_field) {
        MTEST_CHECK(status->MPI_ERROR == SENTINEL_ERROR, "%s: MPI_ERROR changed to %d", what,
                    status->MPI_ERROR);
    }
}

static void check_payload(const int *buf, int count, unsigned seed, const char *what)
{
    long bad = mtest_check_fill(buf, (size_t)count * sizeof(int), seed);

    MTEST_CHECK(bad < 0, "%s: %d ints from rank %d wrong at byte %ld", what, count, left, bad);
}

/* Blocking send and receive; even ranks send first so the ring cannot deadlock. */
static void ring_send_recv(int *sbuf, int *rbuf, int count, int tag)
{
    MPI_Status status;

    status.MPI_ERROR = SENTINEL_ERROR;
    mtest_fill(sbuf, (size_t)count * sizeof(int), (unsigned)(rank * 100 + tag));
    /* receive into a larger buffer than the message */
    if (rank % 2 == 0) {
        MPI_Send(sbuf, count, MPI_INT, right, tag, MPI_COMM_WORLD);
        MPI_Recv(rbuf, count + 3, MPI_INT, left, tag, MPI_COMM_WORLD, &status);
    } else {
        MPI_Recv(rbuf, count + 3, MPI_INT, left, tag, MPI_COMM_WORLD, &status);
        MPI_Send(sbuf, count, MPI_INT, right, tag, MPI_COMM_WORLD);
    }
    check_status(&status, left, tag, count, "MPI_Recv", 1);
    check_payload(rbuf, count, (unsigned)(left * 100 + tag), "MPI_Recv");
}

static void ring_sendrecv(int *sbuf, int *rbuf, int count, int tag)
{
    MPI_Status status;

    status.MPI_ERROR = SENTINEL_ERROR;
    mtest_fill(sbuf, (size_t)count * sizeof(int), (unsigned)(rank * 100 + tag));
    /* the send and receive tags differ, each rank sends with a tag of its own */
    MPI_Sendrecv(sbuf, count, MPI_INT, right, tag + 1000 * rank, rbuf, count, MPI_INT, left,
                 tag + 1000 * left, MPI_COMM_WORLD, &status);
    check_status(&status, left, tag + 1000 * left, count, "MPI_Sendrecv", 1);
    check_payload(rbuf, count, (unsigned)(left * 100 + tag), "MPI_Sendrecv");
}

static void ring_sendrecv_replace(int *buf, int count, int tag)
{
    MPI_Status status;

    status.MPI_ERROR = SENTINEL_ERROR;
    mtest_fill(buf, (size_t)count * sizeof(int), (unsigned)(rank * 100 + tag));
    MPI_Sendrecv_replace(buf, count, MPI_INT, right, tag, left, tag, MPI_COMM_WORLD, &status);
    /* MPICH 5.0.2 sets MPI_ERROR here, against the standard: check it on Manifold only */
    check_status(&status, left, tag, count, "MPI_Sendrecv_replace", mtest_is_manifold());
    check_payload(buf, count, (unsigned)(left * 100 + tag), "MPI_Sendrecv_replace");
}

int main(int argc, char **argv)
{
    int *sbuf, *rbuf;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    sbuf = mtest_calloc(counts[NCOUNTS - 1] + 3, sizeof(int));
    rbuf = mtest_calloc(counts[NCOUNTS - 1] + 3, sizeof(int));

    for (int i = 0; i < NCOUNTS; i++) {
        /* a lone rank would block sending to itself with MPI_Send */
        if (size > 1) {
            ring_send_recv(sbuf, rbuf, counts[i], 10 + i);
        }
        ring_sendrecv(sbuf, rbuf, counts[i], 20 + i);
        ring_sendrecv_replace(rbuf, counts[i], 30 + i);
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize(0);
}
