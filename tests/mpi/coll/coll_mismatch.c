/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives whose processes pass different counts (an erroneous program, without the
 * checking mode): rank 0 passes one count, the others another, small (one shared-memory entry)
 * and large (chunks through the segment or cross-process copies). Each case runs on a fresh
 * duplicate of MPI_COMM_WORLD with MPI_ERRORS_RETURN and must
 * - return on every rank (before, a large Bcast, Reduce, Allreduce, Gather or Allgather waited
 *   for ever for data that never came);
 * - fail with MPI_ERR_TRUNCATE on at least one rank, in the call or in a barrier right after
 *   it (a rank whose own steps all completed finds out only when the others' steps no longer
 *   match its own);
 * - leave the communicator's collectives failing: a second barrier fails on every rank.
 * Run at 2, 3 and 4 ranks, where the counts also make some ranks take a point-to-point
 * algorithm and others the segment, or all take point-to-point with different step counts:
 * before, a rank whose receive failed returned at once and its peer waited for ever for the
 * messages of the steps it skipped (Allreduce and Reduce_scatter_block 4096/2048 on two ranks,
 * most collectives at 65536/32768, Scatter on three ranks). Now the internal waits of a
 * blocking collective give up once the node's processes are seen to have passed different
 * byte counts.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

enum { BCAST, REDUCE, ALLREDUCE, GATHER, ALLGATHER, ALLTOALL, SCATTER, SCAN, RSB, NOPS };
static const char *names[NOPS] = {"MPI_Bcast",   "MPI_Reduce",    "MPI_Allreduce",
                                  "MPI_Gather",  "MPI_Allgather", "MPI_Alltoall",
                                  "MPI_Scatter", "MPI_Scan",      "MPI_Reduce_scatter_block"};

static int run(int op, MPI_Comm c, int *sbuf, int *rbuf, int count)
{
    switch (op) {
    case BCAST: return MPI_Bcast(sbuf, count, MPI_INT, 0, c);
    case REDUCE: return MPI_Reduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, 0, c);
    case ALLREDUCE: return MPI_Allreduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, c);
    case GATHER: return MPI_Gather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, 0, c);
    case ALLGATHER: return MPI_Allgather(sbuf, count, MPI_INT, rbuf, count, MPI_INT, c);
    case ALLTOALL: return MPI_Alltoall(sbuf, count, MPI_INT, rbuf, count, MPI_INT, c);
    case SCATTER: return MPI_Scatter(sbuf, count, MPI_INT, rbuf, count, MPI_INT, 0, c);
    case SCAN: return MPI_Scan(sbuf, rbuf, count, MPI_INT, MPI_SUM, c);
    default: return MPI_Reduce_scatter_block(sbuf, rbuf, count, MPI_INT, MPI_SUM, c);
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* counts of rank 0 and of the others, in ints */
    static const int pairs[][2] = {{10, 1},          {1, 10},         {2048, 4096},
                                   {4096, 2048},     {65536, 32768},  {32768, 65536},
                                   {262144, 131072}, {131072, 262144}};
    const int npairs = (int)(sizeof(pairs) / sizeof(pairs[0]));
    size_t most = (size_t)262144 * (size_t)size;
    int *sbuf = mtest_calloc(most, sizeof(int)), *rbuf = mtest_calloc(most, sizeof(int));
    for (int op = 0; op < NOPS; op++) {
        for (int p = 0; p < npairs; p++) {
            int count = pairs[p][rank == 0 ? 0 : 1];
            MPI_Comm c;
            MPI_Comm_dup(MPI_COMM_WORLD, &c);
            MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
            int rc = run(op, c, sbuf, rbuf, count), cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            MTEST_CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE,
                        "%s with counts %d/%d: class %s", names[op], pairs[p][0], pairs[p][1],
                        mtest_error_class_name(cls));
            int failed = rc != MPI_SUCCESS, anyone = 0;
            rc = MPI_Barrier(c);
            failed |= rc != MPI_SUCCESS;
            MPI_Allreduce(&failed, &anyone, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            MTEST_CHECK(anyone, "%s with counts %d/%d: no process reported an error", names[op],
                        pairs[p][0], pairs[p][1]);
            rc = MPI_Barrier(c);
            cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            MTEST_CHECK(cls == MPI_ERR_TRUNCATE,
                        "the second MPI_Barrier after %s with counts %d/%d: class %s, expected "
                        "MPI_ERR_TRUNCATE",
                        names[op], pairs[p][0], pairs[p][1], mtest_error_class_name(cls));
            if (rc != MPI_SUCCESS && mtest_is_manifold()) {
                char msg[MPI_MAX_ERROR_STRING];
                int len = 0;
                MPI_Error_string(rc, msg, &len);
                MTEST_CHECK(strstr(msg, "MPI_Barrier") != NULL && strstr(msg, "count") != NULL,
                            "the barrier's message does not say why: %s", msg);
            }
            MPI_Comm_free(&c);
        }
    }
    /* The same counts everywhere still work on a fresh communicator. */
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    for (int i = 0; i < 1000; i++)
        sbuf[i] = rank + i;
    MPI_Allreduce(sbuf, rbuf, 1000, MPI_INT, MPI_SUM, c);
    int bad = 0;
    for (int i = 0; i < 1000; i++)
        bad += rbuf[i] != size * (size - 1) / 2 + size * i;
    MTEST_CHECK(bad == 0, "%d wrong sums after the mismatched calls", bad);
    MPI_Comm_free(&c);
    free(sbuf);
    free(rbuf);
    return mtest_finalize(0);
}
