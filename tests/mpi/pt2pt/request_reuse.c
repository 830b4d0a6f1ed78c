/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Requests are recycled: a freed request goes back to a cache and the next operation takes it
 * again. What a persistent request, a derived-datatype receive, a buffered send, a receive freed
 * while in flight or a non-blocking collective left in its request must not show in the plain
 * send or receive that reuses it. Two ranks alternate such operations with plain MPI_Isend /
 * MPI_Irecv pairs and check after each plain one that MPI_Wait set the handle to
 * MPI_REQUEST_NULL (a leftover persistent mark would keep it), that the status names the right
 * source, tag and count, and that the bytes arrived unchanged (a leftover datatype would unpack
 * them). Rank 0 sends, rank 1 receives; every check runs on the rank that owns the request.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define ROUNDS 40
#define LEN    64

/* One plain message from rank 0 to rank 1, through a freshly recycled request on each side. */
static void plain_pair(int rank, int round, int step)
{
    unsigned char buf[LEN];
    int tag = 100 + step;
    unsigned seed = (unsigned)(round * 16 + step);
    MPI_Request req;
    MPI_Status status;
    if (rank == 0) {
        mtest_fill(buf, LEN, seed);
        MPI_Isend(buf, LEN, MPI_BYTE, 1, tag, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, &status);
        MTEST_CHECK(req == MPI_REQUEST_NULL, "round %d step %d: send handle not reset", round,
                    step);
        return;
    }
    memset(buf, 0, LEN);
    MPI_Irecv(buf, LEN, MPI_BYTE, 0, tag, MPI_COMM_WORLD, &req);
    int rc = MPI_Wait(&req, &status);
    int count = -1;
    MPI_Get_count(&status, MPI_BYTE, &count);
    MTEST_CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL,
                "round %d step %d: receive rc %d, handle %s", round, step, rc,
                req == MPI_REQUEST_NULL ? "reset" : "not reset");
    MTEST_CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == tag && count == LEN,
                "round %d step %d: status source %d tag %d count %d", round, step,
                status.MPI_SOURCE, status.MPI_TAG, count);
    MTEST_CHECK(mtest_check_fill(buf, LEN, seed) < 0, "round %d step %d: contents differ", round,
                step);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        MTEST_CHECK(0, "needs exactly two processes, not %d", size);
        return mtest_finalize(0);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Datatype column;
    MPI_Type_vector(8, 1, 4, MPI_INT, &column);
    MPI_Type_commit(&column);
    int bsize = 4 * (LEN + MPI_BSEND_OVERHEAD);
    void *battach = malloc((size_t)bsize);
    MPI_Buffer_attach(battach, bsize);

    for (int round = 0; round < ROUNDS; round++) {
        unsigned char buf[LEN];
        int matrix[32];
        MPI_Request req;

        /* A persistent request, started once and freed. */
        if (rank == 0) {
            MPI_Send_init(buf, LEN, MPI_BYTE, 1, 1, MPI_COMM_WORLD, &req);
        } else {
            MPI_Recv_init(buf, LEN, MPI_BYTE, 0, 1, MPI_COMM_WORLD, &req);
        }
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MTEST_CHECK(req != MPI_REQUEST_NULL, "round %d: persistent handle reset by MPI_Wait",
                    round);
        MPI_Request_free(&req);
        plain_pair(rank, round, 0);

        /* A derived-datatype immediate receive (and send). */
        for (int i = 0; i < 32; i++)
            matrix[i] = rank == 0 ? round * 100 + i : -1;
        if (rank == 0)
            MPI_Isend(matrix, 1, column, 1, 2, MPI_COMM_WORLD, &req);
        else
            MPI_Irecv(matrix, 1, column, 0, 2, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (rank == 1)
            for (int i = 0; i < 32; i++)
                MTEST_CHECK(matrix[i] == (i % 4 == 0 ? round * 100 + i : -1),
                            "round %d: column element %d is %d", round, i, matrix[i]);
        plain_pair(rank, round, 1);

        /* A buffered send (its request is the library's, released at completion). */
        if (rank == 0)
            MPI_Bsend(buf, LEN, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
        else
            MPI_Recv(buf, LEN, MPI_BYTE, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        plain_pair(rank, round, 2);

        /* A receive freed while in flight: the library releases it when the message lands. */
        if (rank == 1) {
            MPI_Irecv(buf, LEN, MPI_BYTE, 0, 4, MPI_COMM_WORLD, &req);
            MPI_Request_free(&req);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            MPI_Send(buf, LEN, MPI_BYTE, 1, 4, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        plain_pair(rank, round, 3);

        /* A non-blocking collective (a request with a schedule and a poll hook). */
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        plain_pair(rank, round, 4);
    }

    void *detached;
    int dsize;
    MPI_Buffer_detach(&detached, &dsize);
    free(battach);
    MPI_Type_free(&column);
    return mtest_finalize(0);
}
