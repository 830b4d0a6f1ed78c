/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-overtaking order: messages from one sender with one tag are received in the order
 * sent, whatever their sizes. Every rank but 0 sends rank 0 a sequence of sizes that
 * crosses the eager/rendezvous switch back and forth (0, 1, 1 KiB, 8 KiB, 64 KiB, 1 MiB,
 * 4 MiB, 1, 64 KiB, 0, 4 MiB, 8 KiB) three times: into receives posted in advance with
 * the exact size of each message (an overtaking message would be truncated), as
 * unexpected messages received with MPI_ANY_SOURCE into one large buffer, and with
 * blocking calls on both sides. Then many small messages with one tag. Every message
 * carries a pattern seeded by sender and position, so a swapped message is caught.
 */
#include "mtest.h"

#include <stdlib.h>

#define NSEQ           12
#define NSMALL         500
#define MAXSIZE        (4 << 20)
#define TAG_POSTED     1
#define TAG_UNEXPECTED 2
#define TAG_BLOCKING   3
#define TAG_SMALL      4

static const int sizes[NSEQ] = {0,       1, 1 << 10,  8 << 10, 64 << 10, 1 << 20,
                                4 << 20, 1, 64 << 10, 0,       4 << 20,  8 << 10};
static int rank, size;

static unsigned seed_of(int src, int pos, int tag)
{
    return (unsigned)(src * 1000 + pos * 10 + tag);
}

static void check_message(const MPI_Status *status, const char *buf, int src, int pos, int tag)
{
    int count = -1;

    MPI_Get_count(status, MPI_BYTE, &count);
    MTEST_CHECK(status->MPI_SOURCE == src && count == sizes[pos],
                "tag %d, message %d of rank %d: source %d, %d bytes instead of %d", tag, pos, src,
                status->MPI_SOURCE, count, sizes[pos]);
    if (count == sizes[pos]) {
        MTEST_CHECK(mtest_check_fill(buf, (size_t)count, seed_of(src, pos, tag)) < 0,
                    "tag %d, message %d of rank %d (%d bytes): wrong data", tag, pos, src, count);
    }
}

static void send_sequence(int tag)
{
    MPI_Request reqs[NSEQ];
    char *bufs[NSEQ];

    for (int i = 0; i < NSEQ; i++) {
        bufs[i] = mtest_calloc((size_t)sizes[i], 1);
        mtest_fill(bufs[i], (size_t)sizes[i], seed_of(rank, i, tag));
    }
    if (tag == TAG_BLOCKING) {
        for (int i = 0; i < NSEQ; i++) {
            MPI_Send(bufs[i], sizes[i], MPI_BYTE, 0, tag, MPI_COMM_WORLD);
        }
    } else {
        for (int i = 0; i < NSEQ; i++) {
            MPI_Isend(bufs[i], sizes[i], MPI_BYTE, 0, tag, MPI_COMM_WORLD, &reqs[i]);
        }
        if (tag == TAG_UNEXPECTED) {
            /* rank 0 starts receiving only after this barrier */
            MPI_Barrier(MPI_COMM_WORLD);
        }
        MPI_Waitall(NSEQ, reqs, MPI_STATUSES_IGNORE);
    }
    for (int i = 0; i < NSEQ; i++) {
        free(bufs[i]);
    }
}

static void receive_posted(void)
{
    int n = (size - 1) * NSEQ;
    MPI_Request *reqs = mtest_calloc((size_t)n, sizeof(MPI_Request));
    MPI_Status *statuses = mtest_calloc((size_t)n, sizeof(MPI_Status));
    char **bufs = mtest_calloc((size_t)n, sizeof(char *));
    int rc;

    for (int j = 0; j < n; j++) {
        bufs[j] = mtest_calloc((size_t)sizes[j % NSEQ], 1);
        MPI_Irecv(bufs[j], sizes[j % NSEQ], MPI_BYTE, 1 + j / NSEQ, TAG_POSTED, MPI_COMM_WORLD,
                  &reqs[j]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Waitall(n, reqs, statuses);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Waitall of the posted receives failed (%d)", rc);
    for (int j = 0; j < n; j++) {
        if (rc != MPI_SUCCESS && statuses[j].MPI_ERROR != MPI_SUCCESS) {
            MTEST_CHECK(0, "posted receive %d of rank %d: error %d", j % NSEQ, 1 + j / NSEQ,
                        statuses[j].MPI_ERROR);
        } else {
            check_message(&statuses[j], bufs[j], 1 + j / NSEQ, j % NSEQ, TAG_POSTED);
        }
        free(bufs[j]);
    }
    free(reqs);
    free(statuses);
    free(bufs);
}

static void receive_any_source(char *buf, int tag)
{
    int *next = mtest_calloc((size_t)size, sizeof(int));
    MPI_Status status;

    for (int j = 0; j < (size - 1) * NSEQ; j++) {
        MPI_Recv(buf, MAXSIZE, MPI_BYTE, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &status);
        if (!MTEST_CHECK(status.MPI_SOURCE >= 1 && status.MPI_SOURCE < size &&
                             next[status.MPI_SOURCE] < NSEQ,
                         "unexpected message from %d", status.MPI_SOURCE)) {
            continue;
        }
        check_message(&status, buf, status.MPI_SOURCE, next[status.MPI_SOURCE]++, tag);
    }
    free(next);
}

static void receive_blocking(char *buf)
{
    MPI_Status status;

    for (int src = 1; src < size; src++) {
        for (int i = 0; i < NSEQ; i++) {
            MPI_Recv(buf, sizes[i], MPI_BYTE, src, TAG_BLOCKING, MPI_COMM_WORLD, &status);
            check_message(&status, buf, src, i, TAG_BLOCKING);
        }
    }
}

static void small_messages(void)
{
    int *next, value;
    MPI_Status status;

    if (rank != 0) {
        for (int k = 0; k < NSMALL; k++) {
            MPI_Send(&k, 1, MPI_INT, 0, TAG_SMALL, MPI_COMM_WORLD);
        }
        return;
    }
    next = mtest_calloc((size_t)size, sizeof(int));
    for (int j = 0; j < (size - 1) * NSMALL; j++) {
        MPI_Recv(&value, 1, MPI_INT, MPI_ANY_SOURCE, TAG_SMALL, MPI_COMM_WORLD, &status);
        MTEST_CHECK(value == next[status.MPI_SOURCE], "small message %d from %d, expected %d",
                    value, status.MPI_SOURCE, next[status.MPI_SOURCE]);
        next[status.MPI_SOURCE] = value + 1;
    }
    free(next);
}

int main(int argc, char **argv)
{
    char *buf;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* report a truncated (overtaken) message instead of aborting */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    buf = mtest_calloc(MAXSIZE, 1);
    if (rank == 0) {
        receive_posted();
        MPI_Barrier(MPI_COMM_WORLD);
        receive_any_source(buf, TAG_UNEXPECTED);
        receive_blocking(buf);
    } else {
        /* rank 0 posts its receives before this barrier */
        MPI_Barrier(MPI_COMM_WORLD);
        send_sequence(TAG_POSTED);
        send_sequence(TAG_UNEXPECTED);
        send_sequence(TAG_BLOCKING);
    }
    small_messages();
    free(buf);
    return mtest_finalize(0);
}
