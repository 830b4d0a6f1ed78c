/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_disconnect on an intracommunicator and on an intercommunicator with messages still
 * pending: each process starts non-blocking sends, frees their requests, and disconnects; the
 * call returns only once the communication is complete, sets the handle to MPI_COMM_NULL, and
 * the receivers (who wait before disconnecting) got every message. Inactive persistent
 * requests (point-to-point, collective, partitioned) do not hold it up. On Manifold,
 * disconnecting MPI_COMM_WORLD is MPI_ERR_COMM.
 */
#include <stdlib.h>

#include "mtest.h"

#define NMSG 8
#define BIG  (1 << 18)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    int next = (wrank + 1) % wsize, prev = (wrank + wsize - 1) % wsize;
    char *sbuf = malloc((size_t)BIG * NMSG), *rbuf = malloc((size_t)BIG * NMSG);
    MPI_Request sreq[NMSG], rreq[NMSG];
    for (int i = 0; i < NMSG; i++) {
        mtest_fill(sbuf + (size_t)i * BIG, BIG, (unsigned)(wrank * 100 + i));
        MPI_Irecv(rbuf + (size_t)i * BIG, BIG, MPI_CHAR, prev, i, dup, &rreq[i]);
    }
    for (int i = 0; i < NMSG; i++) {
        MPI_Isend(sbuf + (size_t)i * BIG, BIG, MPI_CHAR, next, i, dup, &sreq[i]);
        MPI_Request_free(&sreq[i]);
    }
    MPI_Waitall(NMSG, rreq, MPI_STATUSES_IGNORE);
    MPI_Comm_disconnect(&dup);
    MTEST_CHECK(dup == MPI_COMM_NULL, "disconnect did not set MPI_COMM_NULL");
    for (int i = 0; i < NMSG; i++)
        MTEST_CHECK(mtest_check_fill(rbuf + (size_t)i * BIG, BIG, (unsigned)(prev * 100 + i)) < 0,
                    "message %d corrupt", i);

    if (wsize > 1) {
        int half = (wsize + 1) / 2, low = wrank < half;
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 8, &inter);
        int lrank, rsize;
        MPI_Comm_rank(inter, &lrank);
        MPI_Comm_remote_size(inter, &rsize);
        /* The lower half's rank 0 sends to every remote process, which receives. */
        if (low && lrank == 0) {
            for (int r = 0; r < rsize && r < NMSG; r++) {
                MPI_Request req;
                MPI_Isend(sbuf + (size_t)r * BIG, BIG, MPI_CHAR, r, 3, inter, &req);
                MPI_Request_free(&req);
            }
        } else if (!low && lrank < NMSG) {
            MPI_Recv(rbuf, BIG, MPI_CHAR, 0, 3, inter, MPI_STATUS_IGNORE);
            MTEST_CHECK(mtest_check_fill(rbuf, BIG, (unsigned)lrank) < 0, "inter message corrupt");
        }
        MPI_Comm_disconnect(&inter);
        MTEST_CHECK(inter == MPI_COMM_NULL, "disconnect (inter) did not set MPI_COMM_NULL");
        MPI_Comm_free(&local);
    }

    /* Inactive persistent requests are no pending communication: disconnect returns (it
     * waited for ever for them), and the requests are freed afterwards. One of each kind:
     * point-to-point (one used once before), collective, partitioned. */
    {
        MPI_Comm pc;
        MPI_Request p2p[2], coll, part;
        int x = wrank, y = -1, sum = -1;
        MPI_Comm_dup(MPI_COMM_WORLD, &pc);
        MPI_Send_init(&x, 1, MPI_INT, next, 9, pc, &p2p[0]);
        MPI_Recv_init(&y, 1, MPI_INT, prev, 9, pc, &p2p[1]);
        MPI_Startall(2, p2p);
        MPI_Waitall(2, p2p, MPI_STATUSES_IGNORE);
        MTEST_CHECK(y == prev, "persistent exchange before disconnect: got %d", y);
        MPI_Allreduce_init(&x, &sum, 1, MPI_INT, MPI_SUM, pc, MPI_INFO_NULL, &coll);
        MPI_Psend_init(sbuf, 2, BIG / 2, MPI_CHAR, next, 10, pc, MPI_INFO_NULL, &part);
        MPI_Comm_disconnect(&pc);
        MTEST_CHECK(pc == MPI_COMM_NULL, "disconnect with persistent requests");
        MPI_Request_free(&p2p[0]);
        MPI_Request_free(&p2p[1]);
        MPI_Request_free(&coll);
        MPI_Request_free(&part);
    }

    if (mtest_is_manifold()) {
        MPI_Comm world = MPI_COMM_WORLD;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        int rc = MPI_Comm_disconnect(&world);
        MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_disconnect");
    }
    free(sbuf);
    free(rbuf);
    return mtest_finalize(0);
}
