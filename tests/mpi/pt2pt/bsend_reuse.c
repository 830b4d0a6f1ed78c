/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Buffered sends that together need more space than the attached buffer: the buffer holds two
 * messages, rank 1 has already posted receives for all of them, and rank 0 buffered-sends many
 * large messages (large enough to go by rendezvous, so each one's space comes back only after
 * the library made progress on it). Every MPI_Bsend must succeed: the library has to progress
 * the earlier sends before it may report MPI_ERR_BUFFER. (When the receiver has not posted, the
 * standard lets the call fail instead of waiting; that case is in bsend.c.) MPICH 5.0.2 fails
 * this test: it reports MPI_ERR_BUFFER without progressing the earlier sends.
 */
#include "mtest.h"

#include <mpi.h>
#include <stdlib.h>

#define NMSG  8
#define COUNT (256 * 1024) /* ints: 1 MiB, sent by rendezvous */

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *buf = mtest_calloc((size_t)COUNT * NMSG, sizeof(int));
    MPI_Request reqs[NMSG];

    if (rank == 1) {
        for (int i = 0; i < NMSG; i++)
            MPI_Irecv(buf + (size_t)i * COUNT, COUNT, MPI_INT, 0, i, MPI_COMM_WORLD, &reqs[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int packsize = 0;
        MPI_Pack_size(COUNT, MPI_INT, MPI_COMM_WORLD, &packsize);
        if (packsize <= 0)
            packsize = COUNT * (int)sizeof(int);
        int bsize = 2 * (packsize + MPI_BSEND_OVERHEAD);
        char *attach = mtest_calloc((size_t)bsize, 1);
        MPI_Buffer_attach(attach, bsize);
        for (int i = 0; i < NMSG; i++) {
            for (int j = 0; j < COUNT; j += 4096)
                buf[j] = i;
            int rc = MPI_Bsend(buf, COUNT, MPI_INT, 1, i, MPI_COMM_WORLD);
            MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend %d of %d failed with %d", i, NMSG, rc);
        }
        void *detached;
        int dsize;
        MPI_Buffer_detach(&detached, &dsize);
        MTEST_CHECK(detached == attach && dsize == bsize, "detach returned another buffer");
        free(attach);
    } else if (rank == 1) {
        MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < NMSG; i++) {
            const int *m = buf + (size_t)i * COUNT;
            MTEST_CHECK(m[0] == i && m[COUNT - 4096] == i, "message %d has wrong data", i);
        }
    }
    free(buf);
    return mtest_finalize(0);
}
