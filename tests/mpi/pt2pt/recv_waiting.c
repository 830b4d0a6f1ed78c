/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receives of messages that are already waiting when the receive is posted (the transport may
 * complete them inside the call). Every other rank sends a run of messages of assorted lengths
 * (0 bytes, short, eager-sized, and one longer than the receive buffer) and tags to rank 0,
 * then all meet at a barrier; only then does rank 0 receive them, through MPI_Recv,
 * MPI_Irecv + MPI_Wait and MPI_Irecv + MPI_Test in turn, first naming the source and tag of
 * the next message of each sender in turn, then with MPI_ANY_SOURCE and MPI_ANY_TAG. Each
 * status must name the right source and tag, MPI_Get_count the right length, and the long
 * message must be MPI_ERR_TRUNCATE with its source and tag still set.
 */
#include "mtest.h"

#include <stdlib.h>

#define NMSG 24
#define ROOM 4096

static int msg_len(int i)
{
    static const int lens[] = {0, 1, 8, 100, 1000, 4000, ROOM, ROOM + 1000};
    return lens[i % 8];
}

static int msg_tag(int src, int i)
{
    return 1000 * src + i;
}

static int receive(int how, int src, int tag, unsigned char *buf, MPI_Status *status)
{
    MPI_Request req;
    int rc, flag = 0;

    if (how == 0)
        return MPI_Recv(buf, ROOM, MPI_BYTE, src, tag, MPI_COMM_WORLD, status);
    MPI_Irecv(buf, ROOM, MPI_BYTE, src, tag, MPI_COMM_WORLD, &req);
    if (how == 1)
        return MPI_Wait(&req, status);
    do {
        rc = MPI_Test(&req, &flag, status);
    } while (rc == MPI_SUCCESS && !flag);
    return rc;
}

int main(int argc, char **argv)
{
    int rank, size;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsigned char *buf = mtest_calloc(ROOM + 1000, 1);

    if (rank != 0) {
        MPI_Request reqs[NMSG];
        unsigned char *out = mtest_calloc((size_t)NMSG * (ROOM + 1000), 1);
        for (int i = 0; i < NMSG; i++) {
            unsigned char *b = out + (size_t)i * (ROOM + 1000);
            mtest_fill(b, (size_t)msg_len(i), (unsigned)msg_tag(rank, i));
            MPI_Isend(b, msg_len(i), MPI_BYTE, 0, msg_tag(rank, i), MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
        free(out);
    } else {
        int next[64] = {0}; /* per source: the index of the next message (non-overtaking) */
        MPI_Barrier(MPI_COMM_WORLD);
        int total = NMSG * (size - 1);
        for (int n = 0; n < total; n++) {
            MPI_Status status;
            int count = -1, error_class = -1;
            /* The first half names the next message of the senders in turn. */
            int want = 1 + n % (size - 1);
            int exact = n < total / 2;
            int rc = receive(n % 3, exact ? want : MPI_ANY_SOURCE,
                             exact ? msg_tag(want, next[want]) : MPI_ANY_TAG, buf, &status);
            int src = status.MPI_SOURCE;
            if (!MTEST_CHECK(src >= 1 && src < size && src < 64, "receive %d: source %d", n, src))
                continue;
            int i = next[src]++;
            int len = msg_len(i);
            MPI_Error_class(rc, &error_class);
            MTEST_CHECK(status.MPI_TAG == msg_tag(src, i),
                        "receive %d from %d: tag %d, expected %d", n, src, status.MPI_TAG,
                        msg_tag(src, i));
            if (len > ROOM) {
                MTEST_CHECK(error_class == MPI_ERR_TRUNCATE,
                            "receive %d: %d bytes into %d gave %s, not MPI_ERR_TRUNCATE", n, len,
                            ROOM, mtest_error_class_name(error_class));
                continue;
            }
            MPI_Get_count(&status, MPI_BYTE, &count);
            MTEST_CHECK(rc == MPI_SUCCESS && count == len, "receive %d: rc %d, count %d of %d", n,
                        rc, count, len);
            MTEST_CHECK(mtest_check_fill(buf, (size_t)len, (unsigned)msg_tag(src, i)) < 0,
                        "receive %d: contents differ", n);
        }
    }
    free(buf);
    return mtest_finalize(0);
}
