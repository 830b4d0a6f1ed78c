/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPIX_Pbuf_prepare / MPIX_Pbuf_prepareall (Manifold extension, mpix.h). After the sender's
 * MPIX_Pbuf_prepare returns, MPI_Pready must send at once: the sender marks every partition and
 * then only waits for an acknowledgement that the receiver sends once MPI_Parrived saw every
 * partition, without touching the partitioned request in between (were the partitions still
 * queued behind the receiver's re-arm token, this would hang). Then both ranks exchange in both
 * directions with one MPIX_Pbuf_prepareall over their send and receive requests, and the
 * erroneous calls are checked: an inactive request, a request that is not partitioned,
 * MPI_REQUEST_NULL, a negative count. Against an MPI without mpix.h there is nothing to test.
 */
#include "mtest.h"

#if defined(__has_include)
#if __has_include(<mpix.h>)
#include <mpix.h>
#endif
#endif

#ifdef MANIFOLD_MPIX

#include <stdlib.h>

#define NPART 16
#define PER   100
#define NITER 6

static void fill(int *buf, int it, int who)
{
    for (int i = 0; i < NPART * PER; i++)
        buf[i] = i * 3 + it * 10007 + who;
}

static void check(const int *buf, int it, int who, const char *what)
{
    for (int i = 0; i < NPART * PER; i++)
        if (!MTEST_CHECK(buf[i] == i * 3 + it * 10007 + who, "%s iter %d item %d is %d", what, it,
                         i, buf[i]))
            return;
}

static void one_way(int rank)
{
    int *buf = mtest_calloc(NPART * PER, sizeof(int));
    MPI_Request req;
    if (rank == 0)
        MPI_Psend_init(buf, NPART, PER, MPI_INT, 1, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    else
        MPI_Precv_init(buf, NPART, PER, MPI_INT, 0, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int it = 0; it < NITER; it++) {
        MPI_Start(&req);
        MTEST_CHECK(MPIX_Pbuf_prepare(req) == MPI_SUCCESS, "MPIX_Pbuf_prepare failed");
        if (rank == 0) {
            fill(buf, it, 0);
            for (int p = NPART - 1; p >= 0; p--)
                MPI_Pready(p, req);
            MPI_Recv(NULL, 0, MPI_INT, 1, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            for (int p = 0; p < NPART; p++) {
                int flag = 0;
                while (!flag)
                    MPI_Parrived(req, p, &flag);
            }
            MPI_Send(NULL, 0, MPI_INT, 0, 6, MPI_COMM_WORLD);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (rank == 1)
            check(buf, it, 0, "one-way");
    }
    MPI_Request_free(&req);
    free(buf);
}

static void both_ways(int rank)
{
    int peer = 1 - rank;
    int *sbuf = mtest_calloc(NPART * PER, sizeof(int)), *rbuf = mtest_calloc(NPART * PER, 4);
    MPI_Request reqs[2];
    /* Different partition counts each way, so both the aggregated and the plain path run. */
    MPI_Precv_init(rbuf, NPART / 2, 2 * PER, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL,
                   &reqs[0]);
    MPI_Psend_init(sbuf, NPART, PER, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &reqs[1]);
    for (int it = 0; it < NITER; it++) {
        fill(sbuf, it, rank);
        MPI_Startall(2, reqs);
        MTEST_CHECK(MPIX_Pbuf_prepareall(2, reqs) == MPI_SUCCESS, "MPIX_Pbuf_prepareall failed");
        MPI_Pready_range(0, NPART - 1, reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        check(rbuf, it, peer, "both-ways");
    }
    MPI_Request_free(&reqs[0]);
    MPI_Request_free(&reqs[1]);
    free(sbuf);
    free(rbuf);
}

static void errors(void)
{
    int b[4] = {0};
    MPI_Request req, pers, null = MPI_REQUEST_NULL;
    MPI_Psend_init(b, 2, 2, MPI_INT, 0, 9, MPI_COMM_SELF, MPI_INFO_NULL, &req);
    MPI_Send_init(b, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &pers);
    MTEST_CHECK_ERR(MPIX_Pbuf_prepare(req), MPI_ERR_REQUEST, "MPIX_Pbuf_prepare");
    MTEST_CHECK_ERR(MPIX_Pbuf_prepare(pers), MPI_ERR_REQUEST, "MPIX_Pbuf_prepare");
    MTEST_CHECK_ERR(MPIX_Pbuf_prepare(null), MPI_ERR_REQUEST, "MPIX_Pbuf_prepare");
    MTEST_CHECK_ERR(MPIX_Pbuf_prepareall(-1, &req), MPI_ERR_ARG, "MPIX_Pbuf_prepareall");
    MTEST_CHECK_ERR(MPIX_Pbuf_prepareall(2, (MPI_Request[]){req, pers}), MPI_ERR_REQUEST,
                    "MPIX_Pbuf_prepareall");
    MTEST_CHECK(MPIX_Pbuf_prepareall(0, NULL) == MPI_SUCCESS, "MPIX_Pbuf_prepareall(0) failed");
    MPI_Request_free(&req);
    MPI_Request_free(&pers);
}

int main(int argc, char **argv)
{
    int rank;
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    errors();
    if (rank < 2) {
        one_way(rank);
        both_ways(rank);
    }
    return mtest_finalize(0);
}

#else /* no MPIX extensions: nothing to check */

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    return mtest_finalize(0);
}

#endif
