/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned send/receive between rank 0 and every other rank, with sender and receiver
 * partition counts M and N in every relation: equal, M = kN, N = kM, coprime, 1 to 1024
 * partitions. Each layout runs several iterations on the same requests with new contents;
 * the sender marks partitions in reverse order through MPI_Pready, MPI_Pready_range and
 * MPI_Pready_list in turn, and the receiver polls MPI_Parrived for every partition before
 * MPI_Wait (MPI_Parrived must drive progress on its own), then checks the data and status.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define NITER 3

typedef struct {
    int m, n, total; /* sender partitions, receiver partitions, ints in the message */
} layout_t;

static const layout_t layouts[] = {
    {1, 1, 8},    {4, 4, 1024},    {8, 2, 64},      {2, 8, 64},         {3, 5, 15 * 7},
    {7, 3, 2100}, {1024, 1, 1024}, {1, 1024, 2048}, {1024, 1024, 1024}, {16, 16, 1 << 16},
};

static void sender(const layout_t *l, int dest, int tag)
{
    int per = l->total / l->m;
    int *buf = mtest_calloc((size_t)l->total, sizeof(int));
    MPI_Request req;
    MPI_Psend_init(buf, l->m, per, MPI_INT, dest, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int it = 0; it < NITER; it++) {
        for (int i = 0; i < l->total; i++)
            buf[i] = i * 7 + it * 1000003 + dest;
        MPI_Start(&req);
        int form = it % 3;
        if (form == 0) {
            for (int p = l->m - 1; p >= 0; p--)
                MPI_Pready(p, req);
        } else if (form == 1) {
            MPI_Pready_range(l->m / 2, l->m - 1, req);
            if (l->m / 2 > 0)
                MPI_Pready_range(0, l->m / 2 - 1, req);
        } else {
            int *list = mtest_calloc((size_t)l->m, sizeof(int));
            for (int p = 0; p < l->m; p++)
                list[p] = l->m - 1 - p;
            MPI_Pready_list(l->m, list, req);
            free(list);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&req);
    MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free did not reset the handle");
    free(buf);
}

static void receiver(const layout_t *l, int rank, int tag)
{
    int per = l->total / l->n;
    int *buf = mtest_calloc((size_t)l->total, sizeof(int));
    char *seen = mtest_calloc((size_t)l->n, 1);
    MPI_Request req;
    MPI_Precv_init(buf, l->n, per, MPI_INT, 0, tag, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int it = 0; it < NITER; it++) {
        memset(buf, 0xff, (size_t)l->total * sizeof(int));
        memset(seen, 0, (size_t)l->n);
        MPI_Start(&req);
        int left = l->n;
        while (left > 0) {
            for (int p = 0; p < l->n; p++) {
                int flag = 0;
                if (seen[p])
                    continue;
                MPI_Parrived(req, p, &flag);
                if (!flag)
                    continue;
                seen[p] = 1;
                left--;
                for (int i = p * per; i < (p + 1) * per; i++) {
                    int want = i * 7 + it * 1000003 + rank;
                    if (!MTEST_CHECK(buf[i] == want,
                                     "M=%d N=%d iter %d: partition %d arrived but item %d is %d, "
                                     "expected %d",
                                     l->m, l->n, it, p, i, buf[i], want))
                        break;
                }
            }
        }
        MPI_Status status;
        MPI_Wait(&req, &status);
        int count = -1;
        MPI_Get_count(&status, MPI_INT, &count);
        MTEST_CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == tag && count == l->total,
                    "M=%d N=%d: status source %d tag %d count %d", l->m, l->n, status.MPI_SOURCE,
                    status.MPI_TAG, count);
        int flag = 0;
        MPI_Parrived(req, 0, &flag);
        MTEST_CHECK(flag, "MPI_Parrived on a completed (inactive) request gave false");
    }
    MPI_Request_free(&req);
    free(seen);
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int nl = (int)(sizeof(layouts) / sizeof(layouts[0]));
    for (int k = 0; k < nl; k++) {
        /* The same tag for every receiver: the requests match per (source, tag) in order. */
        if (rank == 0) {
            for (int d = 1; d < size; d++)
                sender(&layouts[k], d, 5);
        } else {
            receiver(&layouts[k], rank, 5);
        }
    }
    return mtest_finalize(0);
}
