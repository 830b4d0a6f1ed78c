/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Request_free of requests that are still active. Rank 0 frees an MPI_Isend request
 * (small and rendezvous-sized) and a started persistent send right after starting them;
 * the messages must still be delivered intact, and the sender learns of it only from the
 * receiver's acknowledgement, after which it may reuse the buffer. Freeing sets the
 * handle to MPI_REQUEST_NULL. Inactive persistent requests are freed too.
 */
#include "mtest.h"

#include <stdlib.h>

#define TAG_DATA 1
#define TAG_ACK  2
#define BIG      (512 * 1024)

static void send_and_free(char *buf, int n, int persistent, unsigned seed)
{
    MPI_Request req;

    mtest_fill(buf, (size_t)n, seed);
    if (persistent) {
        MPI_Send_init(buf, n, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req);
        MPI_Start(&req);
    } else {
        MPI_Isend(buf, n, MPI_BYTE, 1, TAG_DATA, MPI_COMM_WORLD, &req);
    }
    MPI_Request_free(&req);
    MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
    MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static void receive_and_ack(char *buf, int n, unsigned seed)
{
    MPI_Status status;
    int count = -1;

    MPI_Recv(buf, n, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_BYTE, &count);
    MTEST_CHECK(count == n && mtest_check_fill(buf, (size_t)n, seed) < 0,
                "message of %d bytes sent from a freed request: count %d or data wrong", n, count);
    MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_ACK, MPI_COMM_WORLD);
}

static void free_inactive(void)
{
    MPI_Request reqs[2];
    int value = 0;

    MPI_Send_init(&value, 1, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD, &reqs[0]);
    MPI_Recv_init(&value, 1, MPI_INT, 0, TAG_DATA, MPI_COMM_WORLD, &reqs[1]);
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    MTEST_CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL,
                "freeing inactive persistent requests left the handles set");
}

int main(int argc, char **argv)
{
    const int sizes[] = {8, BIG};
    int rank, size;
    char *buf;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    buf = mtest_calloc(BIG, 1);
    free_inactive();
    for (int i = 0; i < 2 && size > 1; i++) {
        for (int persistent = 0; persistent < 2; persistent++) {
            unsigned seed = (unsigned)(i * 2 + persistent);

            if (rank == 0) {
                send_and_free(buf, sizes[i], persistent, seed);
            } else if (rank == 1) {
                receive_and_ack(buf, sizes[i], seed);
            }
        }
    }
    free(buf);
    return mtest_finalize(0);
}
