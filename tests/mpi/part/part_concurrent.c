/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several partitioned requests in flight at once: rank 0 sends to every other rank with the
 * same tag at the same time (the setup must not cross peers), two requests per pair share a
 * tag and must match in the order they were created, a third uses another tag and is started
 * first. Before that, each pair creates and frees a partitioned pair it never starts (the two
 * match each other: MPI-4.1 pairs partitioned requests in the order of their inits), which must
 * not disturb the next pairs. Startall, Waitall, Testany and Request_get_status drive the
 * requests over several iterations.
 */
#include "mtest.h"

#include <stdlib.h>

#define NREQ  3
#define NPART 6
#define PER   50
#define NITER 4

static int value(int peer, int r, int it, int i)
{
    return peer * 100000 + r * 10000 + it * 1000 + i;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int tags[NREQ] = {7, 7, 9};
    int npeers = rank == 0 ? size - 1 : 1;
    int nreq = npeers * NREQ;
    int *buf = mtest_calloc((size_t)nreq * NPART * PER, sizeof(int));
    MPI_Request *reqs = mtest_calloc((size_t)nreq, sizeof(MPI_Request));

    MPI_Request unused;
    for (int peer = 1; rank == 0 && peer < size; peer++) {
        MPI_Psend_init(buf, 1, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &unused);
        MPI_Request_free(&unused);
    }
    if (rank != 0) {
        MPI_Precv_init(buf, 1, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &unused);
        MPI_Request_free(&unused);
    }

    for (int k = 0; k < nreq; k++) {
        int peer = rank == 0 ? 1 + k / NREQ : 0, r = k % NREQ;
        int *b = buf + (size_t)k * NPART * PER;
        if (rank == 0)
            MPI_Psend_init(b, NPART, PER, MPI_INT, peer, tags[r], MPI_COMM_WORLD, MPI_INFO_NULL,
                           &reqs[k]);
        else
            MPI_Precv_init(b, NPART / 2, PER * 2, MPI_INT, peer, tags[r], MPI_COMM_WORLD,
                           MPI_INFO_NULL, &reqs[k]);
    }
    for (int it = 0; it < NITER && size > 1; it++) {
        for (int k = 0; k < nreq; k++) {
            int peer = rank == 0 ? 1 + k / NREQ : rank, r = k % NREQ;
            int *b = buf + (size_t)k * NPART * PER;
            for (int i = 0; i < NPART * PER; i++)
                b[i] = rank == 0 ? value(peer, r, it, i) : -1;
        }
        /* The tag-9 requests start first: matching is per tag, so this must not matter. */
        for (int k = 0; k < nreq; k++)
            if (k % NREQ == 2)
                MPI_Start(&reqs[k]);
        for (int k = 0; k < nreq; k++)
            if (k % NREQ != 2)
                MPI_Start(&reqs[k]);
        if (rank == 0) {
            for (int p = NPART - 1; p >= 0; p--)
                for (int k = nreq - 1; k >= 0; k--)
                    MPI_Pready(p, reqs[k]);
        }
        if (it % 2 == 0) {
            MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE);
        } else {
            int left = nreq;
            while (left > 0) {
                int idx, flag;
                MPI_Testany(nreq, reqs, &idx, &flag, MPI_STATUS_IGNORE);
                if (flag && idx != MPI_UNDEFINED) {
                    left--;
                    MPI_Request_get_status(reqs[idx], &flag, MPI_STATUS_IGNORE);
                    MTEST_CHECK(flag, "MPI_Request_get_status: a completed request is not done");
                }
            }
        }
        if (rank != 0) {
            for (int k = 0; k < nreq; k++) {
                int *b = buf + (size_t)k * NPART * PER;
                for (int i = 0; i < NPART * PER; i++) {
                    int want = value(rank, k, it, i);
                    if (!MTEST_CHECK(b[i] == want, "iter %d request %d item %d is %d, expected %d",
                                     it, k, i, b[i], want))
                        break;
                }
            }
        }
    }
    for (int k = 0; k < nreq; k++)
        MPI_Request_free(&reqs[k]);
    free(reqs);
    free(buf);
    return mtest_finalize(0);
}
