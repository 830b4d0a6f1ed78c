/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nonblocking and persistent collectives whose processes pass different counts (an erroneous
 * program, without the checking mode): rank 0 passes one count, the others another. Their
 * schedules run over point-to-point messages, and every step knows the exact length it
 * receives, so a receiver of a shorter message than it expects fails too, not only one of a
 * longer (which is truncated); and a schedule that has failed sends a message of the wrong
 * length in place of each later one, so a rank that gets rank 0's data only through others
 * (a binomial tree's leaves) fails as well. Before, a short message completed silently, and
 * forwarded data without error: MPICH's ibcastlength, iallreducelength, ireducelength and
 * iscatterlength saw no error where they expect one.
 *
 * Each case runs on a fresh duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN. The calls
 * themselves succeed; every completion returns success or MPI_ERR_TRUNCATE, and every rank
 * whose result depends on rank 0's data (all but a Bcast or Scatter root, the root of a
 * Reduce or Gather) MPI_ERR_TRUNCATE, whichever count is the longer.
 *
 * Last, Allgather whose rank 0 sends less than its own block of recvbuf: the blocks travel
 * from recvbuf, so no length differs, and rank 0 must say so itself (MPICH's iallgatherlength).
 */
#include "mtest.h"

#include <stdlib.h>

enum { IBCAST, IREDUCE, IALLREDUCE, ISCATTER, IGATHER, BCAST_INIT, NOPS };
static const char *names[NOPS] = {"MPI_Ibcast",   "MPI_Ireduce", "MPI_Iallreduce",
                                  "MPI_Iscatter", "MPI_Igather", "MPI_Bcast_init"};

static int start(int op, MPI_Comm c, int *sbuf, int *rbuf, int count, MPI_Request *req)
{
    switch (op) {
    case IBCAST: return MPI_Ibcast(sbuf, count, MPI_INT, 0, c, req);
    case IREDUCE: return MPI_Ireduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, 0, c, req);
    case IALLREDUCE: return MPI_Iallreduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, c, req);
    case ISCATTER: return MPI_Iscatter(sbuf, count, MPI_INT, rbuf, count, MPI_INT, 0, c, req);
    case IGATHER: return MPI_Igather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, 0, c, req);
    default: {
        int rc = MPI_Bcast_init(sbuf, count, MPI_INT, 0, c, MPI_INFO_NULL, req);
        return rc == MPI_SUCCESS ? MPI_Start(req) : rc;
    }
    }
}

/* Whether this rank receives data that depends on rank 0's count, directly or forwarded. */
static int receives(int op, int rank)
{
    switch (op) {
    case IREDUCE:
    case IGATHER: return rank == 0; /* the root receives */
    case IALLREDUCE: return 1;
    default: return rank != 0; /* the root sends */
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* counts of rank 0 and of the others, in ints: small and rendezvous-sized, both ways. On
     * more than two ranks the large counts can choose different algorithms on different
     * ranks (scatter+allgather against a tree), whose messages do not pair up: that can
     * still hang (docs/design/coll.md), so only the small ones run there. */
    static const int pairs[][2] = {{10, 1}, {1, 10}, {65536, 32768}, {32768, 65536}};
    const int npairs = size <= 2 ? 4 : 2;
    size_t most = (size_t)65536 * (size_t)size;
    int *sbuf = mtest_calloc(most, sizeof(int)), *rbuf = mtest_calloc(most, sizeof(int));
    for (int op = 0; op < NOPS; op++) {
        for (int p = 0; p < npairs; p++) {
            int count = pairs[p][rank == 0 ? 0 : 1];
            MPI_Comm c;
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
            MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
            MPI_Request req = MPI_REQUEST_NULL;
            int rc = start(op, c, sbuf, rbuf, count, &req);
            MTEST_CHECK(rc == MPI_SUCCESS, "%s %d/%d: rank %d: the call returned %d", names[op],
                        pairs[p][0], pairs[p][1], rank, rc);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            int cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            MTEST_CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE,
                        "%s %d/%d: rank %d completed with class %d", names[op], pairs[p][0],
                        pairs[p][1], rank, cls);
            if (size > 1 && receives(op, rank))
                MTEST_CHECK(cls == MPI_ERR_TRUNCATE,
                            "%s %d/%d: rank %d completed with class %d, not MPI_ERR_TRUNCATE",
                            names[op], pairs[p][0], pairs[p][1], rank, cls);
            int failed = cls == MPI_ERR_TRUNCATE, any = 0;
            MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            MTEST_CHECK(size == 1 || any, "%s %d/%d: no rank saw the mismatch", names[op],
                        pairs[p][0], pairs[p][1]);
            if (op == BCAST_INIT)
                MPI_Request_free(&req);
            MPI_Comm_free(&c);
        }
    }
    /* Allgather where rank 0 sends fewer items than its own block of recvbuf holds (MPICH's
     * allgatherlength): the others would receive a block of which only the first item is
     * rank 0's. Rank 0 fails in both forms; the nonblocking form passes the failure on. */
    for (int nonblocking = 0; nonblocking < 2; nonblocking++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        int scount = rank == 0 ? 1 : 10, rc, cls = MPI_SUCCESS;
        if (nonblocking) {
            MPI_Request req;
            rc = MPI_Iallgather(sbuf, scount, MPI_INT, rbuf, 10, MPI_INT, c, &req);
            MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Iallgather: rank %d: the call returned %d", rank,
                        rc);
            if (rc == MPI_SUCCESS)
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else
            rc = MPI_Allgather(sbuf, scount, MPI_INT, rbuf, 10, MPI_INT, c);
        if (rc != MPI_SUCCESS)
            MPI_Error_class(rc, &cls);
        if (rank == 0 || nonblocking)
            MTEST_CHECK(cls == MPI_ERR_TRUNCATE,
                        "%s with rank 0's sendcount short: rank %d completed with class %d",
                        nonblocking ? "MPI_Iallgather" : "MPI_Allgather", rank, cls);
        MPI_Comm_free(&c);
    }
    /* the schedules consumed every message: the world's collectives are still correct */
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK(sum == size, "MPI_Allreduce after the mismatches: %d, not %d", sum, size);
    free(sbuf);
    free(rbuf);
    return mtest_finalize(0);
}
