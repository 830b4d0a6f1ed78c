/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffered mode and the attached buffer, between ranks 0 (sender) and 1 (receiver):
 * MPI_Buffer_detach gives back the address and size given to MPI_Buffer_attach, and
 * waits until the buffered messages are gone, so the sender may scribble over the buffer
 * right after it while the receiver has not even posted its receives; several MPI_Bsend
 * and MPI_Ibsend messages can share the buffer; a message larger than the buffer and any
 * buffered send with no buffer attached fail with MPI_ERR_BUFFER (MPI_ERRORS_RETURN set),
 * and the buffer still works after such a failure.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define TAG_GO   1
#define TAG_DATA 2
#define NSMALL   8
#define SMALL    1000
#define LARGE    (256 * 1024)

static int rank;

static void go(void)
{
    if (rank == 0) {
        MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD);
    } else {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static void receive_checked(char *buf, int n, unsigned seed, const char *what)
{
    MPI_Status status;
    int count = -1;

    MPI_Recv(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    MTEST_CHECK(count == n && mtest_check_fill(buf, (size_t)n, seed) < 0,
                "%s: count %d of %d, or wrong data", what, count, n);
}

/* Buffered messages sit in the attached buffer until detach has sent them. */
static void check_detach_waits(char *data)
{
    int bsize = NSMALL * (SMALL + MPI_BSEND_OVERHEAD) + LARGE + MPI_BSEND_OVERHEAD;
    char *bbuf = mtest_calloc((size_t)bsize, 1);
    MPI_Request req;
    void *detached = NULL;
    int dsize = -1;

    if (rank == 0) {
        MPI_Buffer_attach(bbuf, bsize);
        for (int i = 0; i < NSMALL; i++) {
            mtest_fill(data, SMALL, (unsigned)i);
            if (i % 2) {
                MPI_Bsend(data, SMALL, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
            } else {
                MPI_Ibsend(data, SMALL, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req);
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        }
        mtest_fill(data, LARGE, 100);
        MPI_Bsend(data, LARGE, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
        /* the user buffer is free to change once MPI_Bsend returns */
        memset(data, 0xee, LARGE);
        MPI_Irecv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, &req);
        go();
        MPI_Buffer_detach(&detached, &dsize);
        MTEST_CHECK(detached == bbuf && dsize == bsize,
                    "MPI_Buffer_detach gave %p size %d, attached %p size %d", detached, dsize,
                    (void *)bbuf, bsize);
        memset(bbuf, 0xdd, (size_t)bsize);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        go();
        for (int i = 0; i < NSMALL; i++) {
            receive_checked(data, SMALL, (unsigned)i, "buffered small message");
        }
        receive_checked(data, LARGE, 100, "buffered large message");
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD);
    }
    free(bbuf);
}

static void check_too_small(char *data)
{
    int bsize = SMALL + MPI_BSEND_OVERHEAD;
    char *bbuf = mtest_calloc((size_t)bsize, 1);
    void *detached;
    int rc;

    if (rank == 0) {
        rc = MPI_Bsend(data, SMALL, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Bsend");
        MPI_Buffer_attach(bbuf, bsize);
        rc = MPI_Bsend(data, LARGE, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Bsend");
        /* the failed send must not have used up the buffer */
        mtest_fill(data, SMALL, 7);
        rc = MPI_Bsend(data, SMALL, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD);
        MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend after a failed one returned %d", rc);
        MPI_Buffer_detach(&detached, &bsize);
    } else {
        receive_checked(data, SMALL, 7, "MPI_Bsend after a failed one");
    }
    free(bbuf);
}

int main(int argc, char **argv)
{
    int size;
    char *data;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    data = mtest_calloc(LARGE, 1);
    if (rank < 2 && size >= 2) {
        check_detach_waits(data);
        check_too_small(data);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(data);
    return mtest_finalize(0);
}
