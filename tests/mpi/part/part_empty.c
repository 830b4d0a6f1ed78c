/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned messages of no bytes (partitions of count 0), on a ring (a process talking to
 * itself when alone), with equal and unequal partition counts. A receive partition must not
 * report arrival before the sender has marked the partitions it maps to ready: not right after
 * MPI_Start, not after a barrier that orders it before the sender's MPI_Start, and on one
 * process not for partitions after the one just marked. Eventually every partition arrives,
 * and the request completes with an empty status.
 */
#include "mtest.h"

#define NITER 3

typedef struct {
    int m, n; /* sender and receiver partitions */
} layout_t;

static const layout_t layouts[] = {{1, 1}, {3, 3}, {2, 4}, {4, 2}, {1, 3}, {3, 1}};

static void run(const layout_t *l, int rank, int size)
{
    int dest = (rank + 1) % size, source = (rank + size - 1) % size;
    int sbuf = 0, rbuf = 0;
    MPI_Request sreq, rreq;
    MPI_Psend_init(&sbuf, l->m, 0, MPI_INT, dest, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq);
    MPI_Precv_init(&rbuf, l->n, 0, MPI_INT, source, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq);
    for (int it = 0; it < NITER; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Start(&rreq);
        int flag = -1;
        for (int j = 0; j < l->n; j++) {
            MPI_Parrived(rreq, j, &flag);
            MTEST_CHECK(!flag,
                        "M=%d N=%d iteration %d: partition %d arrived before the send "
                        "started",
                        l->m, l->n, it, j);
        }
        MPI_Test(&rreq, &flag, MPI_STATUS_IGNORE);
        MTEST_CHECK(!flag, "M=%d N=%d iteration %d: receive complete before the send started", l->m,
                    l->n, it);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Start(&sreq);
        for (int i = 0; i < l->m; i++) {
            MPI_Pready(i, sreq);
            if (size > 1 || l->m != l->n)
                continue;
            for (int j = i + 1; j < l->n; j++) {
                MPI_Parrived(rreq, j, &flag);
                MTEST_CHECK(!flag, "M=N=%d iteration %d: partition %d arrived after Pready(%d)",
                            l->m, it, j, i);
            }
        }
        for (int j = 0; j < l->n; j++) {
            do
                MPI_Parrived(rreq, j, &flag);
            while (!flag);
        }
        MPI_Status status;
        MPI_Wait(&rreq, &status);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        int count = -1;
        MPI_Get_count(&status, MPI_INT, &count);
        MTEST_CHECK(count == 0, "M=%d N=%d: received count %d, not 0", l->m, l->n, count);
    }
    MPI_Request_free(&rreq);
    MPI_Request_free(&sreq);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t k = 0; k < sizeof(layouts) / sizeof(layouts[0]); k++)
        run(&layouts[k], rank, size);
    return mtest_finalize(0);
}
