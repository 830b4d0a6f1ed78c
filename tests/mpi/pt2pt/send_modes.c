/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The four send modes, blocking and nonblocking (MPI_Send, MPI_Ssend, MPI_Bsend,
 * MPI_Rsend, MPI_Isend, MPI_Issend, MPI_Ibsend, MPI_Irsend), between the ranks of each pair
 * (0,1), (2,3) ...; an odd last rank only takes part in the barriers. Sizes go from 0 bytes
 * to 1 MiB so both the eager and the rendezvous paths are used. Ready-mode sends wait for
 * the receiver's "posted" message first, as the standard requires. Synchronous mode is
 * checked for what makes it different: an MPI_Issend must not complete while the receiver
 * has not posted a matching receive.
 */
#include "mtest.h"

#include <stdlib.h>
#include <time.h>

enum mode { MODE_SEND, MODE_SSEND, MODE_BSEND, MODE_RSEND, NMODES };

static const char *const mode_names[NMODES] = {"send", "ssend", "bsend", "rsend"};
static const int sizes[] = {0, 1, 1000, 8192, 100000, 1 << 20};
#define NSIZES     (int)(sizeof(sizes) / sizeof(sizes[0]))
#define TAG_POSTED 1
#define TAG_GO     2
#define TAG_DATA   10

static int rank, size, peer;

static int blocking_send(enum mode mode, const void *buf, int n)
{
    switch (mode) {
    case MODE_SEND: return MPI_Send(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
    case MODE_SSEND: return MPI_Ssend(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
    case MODE_BSEND: return MPI_Bsend(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
    default: return MPI_Rsend(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
    }
}

static int nonblocking_send(enum mode mode, const void *buf, int n, MPI_Request *req)
{
    switch (mode) {
    case MODE_SEND: return MPI_Isend(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, req);
    case MODE_SSEND: return MPI_Issend(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, req);
    case MODE_BSEND: return MPI_Ibsend(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, req);
    default: return MPI_Irsend(buf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, req);
    }
}

/* The even rank of a pair sends, the odd one receives; seed tells the payloads apart. */
static void exchange(enum mode mode, int nonblocking, int n, char *sbuf, char *rbuf)
{
    unsigned seed = (unsigned)(mode * 1000 + nonblocking * 100 + n % 97);
    MPI_Request req;
    MPI_Status status;
    int rc, count = -1;

    if (rank % 2 == 0) {
        mtest_fill(sbuf, (size_t)n, seed);
        if (mode == MODE_RSEND) {
            MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_POSTED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (nonblocking) {
            rc = nonblocking_send(mode, sbuf, n, &req);
            if (rc == MPI_SUCCESS) {
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        } else {
            rc = blocking_send(mode, sbuf, n);
        }
        MTEST_CHECK(rc == MPI_SUCCESS, "%s%s of %d bytes failed", nonblocking ? "i" : "",
                    mode_names[mode], n);
        return;
    }
    MPI_Irecv(rbuf, n, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req);
    if (mode == MODE_RSEND) {
        MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_POSTED, MPI_COMM_WORLD);
    }
    MPI_Wait(&req, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    MTEST_CHECK(count == n && status.MPI_SOURCE == peer && status.MPI_TAG == TAG_DATA,
                "%s%s: received count %d source %d tag %d for %d bytes", nonblocking ? "i" : "",
                mode_names[mode], count, status.MPI_SOURCE, status.MPI_TAG, n);
    MTEST_CHECK(mtest_check_fill(rbuf, (size_t)n, seed) < 0, "%s%s of %d bytes: wrong data",
                nonblocking ? "i" : "", mode_names[mode], n);
}

/* Poll an MPI_Issend for about 100 ms while the receiver waits for TAG_GO. */
static void check_issend_waits(void)
{
    struct timespec nap = {0, 1000 * 1000};
    MPI_Request req;
    int flag = 0, value = 0;

    if (rank % 2 == 0) {
        value = 4242;
        MPI_Issend(&value, 1, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req);
        for (int i = 0; i < 100 && !flag; i++) {
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
            nanosleep(&nap, NULL);
        }
        MTEST_CHECK(!flag, "MPI_Issend completed before the receive was posted");
        MPI_Send(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD);
        if (!flag) {
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        return;
    }
    MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&value, 1, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_CHECK(value == 4242, "synchronous message carried %d", value);
}

int main(int argc, char **argv)
{
    int max = sizes[NSIZES - 1];
    /* room for more than one message: a library may reclaim the space of sent ones late */
    int bsize = 3 * (max + MPI_BSEND_OVERHEAD);
    char *sbuf, *rbuf, *bbuf;
    void *detached;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = rank ^ 1;
    sbuf = mtest_calloc((size_t)max, 1);
    rbuf = mtest_calloc((size_t)max, 1);
    bbuf = mtest_calloc((size_t)bsize, 1);
    MPI_Buffer_attach(bbuf, bsize);

    if (peer < size) {
        for (int mode = 0; mode < NMODES; mode++) {
            for (int i = 0; i < NSIZES; i++) {
                exchange((enum mode)mode, 0, sizes[i], sbuf, rbuf);
                exchange((enum mode)mode, 1, sizes[i], sbuf, rbuf);
            }
        }
        check_issend_waits();
    }
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Buffer_detach(&detached, &bsize);
    free(bbuf);
    free(sbuf);
    free(rbuf);
    return mtest_finalize(0);
}
