/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A buffered send whose copy of the data cannot be allocated is MPI_ERR_NO_MEM, not
 * MPI_ERR_BUFFER: with MPI_BUFFER_AUTOMATIC, MPI_Bsend_c, MPI_Ibsend_c, and MPI_Start and
 * MPI_Startall of an MPI_Bsend_init_c request, of 2^60 bytes, fail with MPI_ERR_NO_MEM, with a
 * message that names the byte count and does not blame the attached buffer. An attached buffer
 * that is too small is still MPI_ERR_BUFFER (MPI_Bsend and MPI_Start), and buffered messages
 * go through after both kinds of failure.
 * The 2^60 bytes are sent from a one-byte buffer, which is erroneous: it is the one way to
 * make the copy's allocation fail every time (no allocator gives 2^60 bytes, and an address
 * space limit cannot work under AddressSanitizer), and it is safe on Manifold only, which
 * allocates the copy before it reads the buffer; MPICH 5.0.2 makes no copy in automatic mode
 * and starts the send. So that part runs on Manifold only. The testlist sets
 * ASAN_OPTIONS=allocator_may_return_null=1: AddressSanitizer's allocator stops the process
 * on an impossible request instead of returning NULL as the C library's does.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define HUGE_COUNT ((MPI_Count)1 << 60)

/* An MPI_ERR_NO_MEM of `func` whose text names the size and not the buffer. */
static void check_no_mem(int rc, const char *func)
{
    char text[MPI_MAX_ERROR_STRING], count[32];
    int len = 0;

    if (!MTEST_CHECK_ERR(rc, MPI_ERR_NO_MEM, func))
        return;
    MPI_Error_string(rc, text, &len);
    snprintf(count, sizeof(count), "%lld", (long long)HUGE_COUNT);
    MTEST_CHECK(strstr(text, count) != NULL && strstr(text, "no room") == NULL,
                "%s: the message should name %s bytes and not blame the buffer: %s", func, count,
                text);
}

/* An MPI_ERR_BUFFER of `func` that, on Manifold, says the attached buffer has no room. */
static void check_no_room(int rc, const char *func)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;

    if (!MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, func) || !mtest_is_manifold())
        return;
    MPI_Error_string(rc, text, &len);
    MTEST_CHECK(strstr(text, "no room") != NULL, "%s: %s", func, text);
}

/* Buffered sends of HUGE_COUNT bytes from one byte, in every form (see above). */
static void copy_fails(int to)
{
    char one = 1;
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;

    rc = MPI_Bsend_c(&one, HUGE_COUNT, MPI_BYTE, to, 1, MPI_COMM_WORLD);
    check_no_mem(rc, "MPI_Bsend_c");
    rc = MPI_Ibsend_c(&one, HUGE_COUNT, MPI_BYTE, to, 1, MPI_COMM_WORLD, &req);
    check_no_mem(rc, "MPI_Ibsend_c");
    if (rc == MPI_SUCCESS)
        MPI_Request_free(&req);
    rc = MPI_Bsend_init_c(&one, HUGE_COUNT, MPI_BYTE, to, 1, MPI_COMM_WORLD, &req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend_init_c: %d", rc);
    if (rc != MPI_SUCCESS)
        return;
    rc = MPI_Start(&req);
    check_no_mem(rc, "MPI_Start");
    rc = MPI_Startall(1, &req);
    check_no_mem(rc, "MPI_Startall");
    MPI_Request_free(&req);
}

int main(int argc, char **argv)
{
    int rank, size, rc, bsize;
    void *detached;
    MPI_Request req;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int to = (rank + 1) % size, from = (rank + size - 1) % size;

    /* no room to run out of: the copy's allocation is what fails */
    MPI_Buffer_attach(MPI_BUFFER_AUTOMATIC, 0);
    if (mtest_is_manifold())
        copy_fails(to);
    /* the process is fine: a buffered message each way */
    int out[4] = {rank, 1, 2, 3}, in[4] = {-1, -1, -1, -1};
    rc = MPI_Bsend(out, 4, MPI_INT, to, 2, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend after the failures: %d", rc);
    MPI_Recv(in, 4, MPI_INT, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_CHECK(in[0] == from && in[3] == 3, "received %d %d", in[0], in[3]);
    MPI_Buffer_detach(&detached, &bsize);

    /* a buffer too small is still MPI_ERR_BUFFER */
    static char small[64 + MPI_BSEND_OVERHEAD];
    static char big[1024];
    MPI_Buffer_attach(small, (int)sizeof(small));
    rc = MPI_Bsend(big, (int)sizeof(big), MPI_BYTE, to, 3, MPI_COMM_WORLD);
    check_no_room(rc, "MPI_Bsend");
    rc = MPI_Bsend_init(big, (int)sizeof(big), MPI_BYTE, to, 3, MPI_COMM_WORLD, &req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend_init: %d", rc);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Start(&req);
        check_no_room(rc, "MPI_Start");
        MPI_Request_free(&req);
    }
    rc = MPI_Bsend(out, 4, MPI_INT, to, 4, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend into the small buffer: %d", rc);
    MPI_Recv(in, 4, MPI_INT, from, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_CHECK(in[0] == from, "received %d from the small buffer", in[0]);
    MPI_Buffer_detach(&detached, &bsize);
    return mtest_finalize(0);
}
