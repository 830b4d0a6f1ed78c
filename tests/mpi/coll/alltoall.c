/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Alltoall, MPI_Alltoallv and MPI_Alltoallw (int and _c forms), with 0, 1, odd and large
 * blocks, uneven counts and reversed displacements, per-peer datatypes in the w form
 * (MPI_INT or MPI_FLOAT by peer), and MPI_IN_PLACE; every element names its sender and
 * receiver.
 */
#include "mtest.h"

#include <stdlib.h>

static int val(int from, int to, int i)
{
    return from * 1000000 + to * 10000 + i;
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t sz = (size_t)size;
    int *sc = mtest_calloc(sz, sizeof(int)), *sd = mtest_calloc(sz, sizeof(int));
    int *rcnt = mtest_calloc(sz, sizeof(int)), *rd = mtest_calloc(sz, sizeof(int));
    MPI_Count *csc = mtest_calloc(sz, sizeof(MPI_Count)),
              *crc = mtest_calloc(sz, sizeof(MPI_Count));
    MPI_Aint *csd = mtest_calloc(sz, sizeof(MPI_Aint)), *crd = mtest_calloc(sz, sizeof(MPI_Aint));
    MPI_Datatype *st = mtest_calloc(sz, sizeof(MPI_Datatype)),
                 *rt = mtest_calloc(sz, sizeof(MPI_Datatype));
    /* 300 ints: above a small-call entry on two ranks, one round of the data area */
    const int ns[] = {0, 1, 7, 300, 20000};
    for (int ni = 0; ni < 5; ni++) {
        int n = ns[ni];
        int *sbuf = mtest_calloc((size_t)(n + size) * sz + 1, sizeof(int));
        int *rbuf = mtest_calloc((size_t)(n + size) * sz + 1, sizeof(int));
        /* Alltoall. */
        for (int in_place = 0; in_place < 2; in_place++) {
            for (int p = 0; p < size; p++)
                for (int i = 0; i < n; i++) {
                    sbuf[p * n + i] = val(rank, p, i);
                    rbuf[p * n + i] = in_place ? val(rank, p, i) : -1;
                }
            int rc = in_place ? MPI_Alltoall_c(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, n, MPI_INT,
                                               MPI_COMM_WORLD)
                              : MPI_Alltoall(sbuf, n, MPI_INT, rbuf, n, MPI_INT, MPI_COMM_WORLD);
            MTEST_CHECK(rc == MPI_SUCCESS, "alltoall rc %d", rc);
            for (int p = 0; p < size; p++)
                for (int i = 0; i < n; i++)
                    MTEST_CHECK(rbuf[p * n + i] == val(p, rank, i),
                                "alltoall n %d ip %d from %d [%d]=%d", n, in_place, p, i,
                                rbuf[p * n + i]);
        }
        /* Alltoallv: rank r sends n + p items to p; blocks stored in reverse order. */
        int stot = 0, rtot = 0;
        for (int p = size - 1; p >= 0; p--) {
            sc[p] = n + p, sd[p] = stot, stot += sc[p];
            rcnt[p] = n + rank, rd[p] = rtot, rtot += rcnt[p];
            csc[p] = sc[p], csd[p] = sd[p], crc[p] = rcnt[p], crd[p] = rd[p];
        }
        for (int p = 0; p < size; p++)
            for (int i = 0; i < sc[p]; i++)
                sbuf[sd[p] + i] = val(rank, p, i);
        for (int i = 0; i < rtot; i++)
            rbuf[i] = -1;
        int rc =
            ni % 2
                ? MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rcnt, rd, MPI_INT, MPI_COMM_WORLD)
                : MPI_Alltoallv_c(sbuf, csc, csd, MPI_INT, rbuf, crc, crd, MPI_INT, MPI_COMM_WORLD);
        MTEST_CHECK(rc == MPI_SUCCESS, "alltoallv rc %d", rc);
        for (int p = 0; p < size; p++)
            for (int i = 0; i < rcnt[p]; i++)
                MTEST_CHECK(rbuf[rd[p] + i] == val(p, rank, i), "alltoallv n %d from %d [%d]=%d", n,
                            p, i, rbuf[rd[p] + i]);
        /* Alltoallw: MPI_FLOAT to and from odd peers (same bit pattern size), bytes displs. */
        for (int p = 0; p < size; p++) {
            st[p] = rt[p] = p % 2 == rank % 2 ? MPI_INT : MPI_FLOAT;
            sc[p] = n, sd[p] = (size - 1 - p) * n * 4, rcnt[p] = n, rd[p] = p * n * 4;
            csc[p] = sc[p], csd[p] = sd[p], crc[p] = rcnt[p], crd[p] = rd[p];
            for (int i = 0; i < n; i++)
                sbuf[(size - 1 - p) * n + i] = val(rank, p, i), rbuf[p * n + i] = -1;
        }
        rc = ni % 2 ? MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rcnt, rd, rt, MPI_COMM_WORLD)
                    : MPI_Alltoallw_c(sbuf, csc, csd, st, rbuf, crc, crd, rt, MPI_COMM_WORLD);
        MTEST_CHECK(rc == MPI_SUCCESS, "alltoallw rc %d", rc);
        for (int p = 0; p < size; p++)
            for (int i = 0; i < n; i++)
                MTEST_CHECK(rbuf[p * n + i] == val(p, rank, i), "alltoallw n %d from %d [%d]=%d", n,
                            p, i, rbuf[p * n + i]);
        free(sbuf), free(rbuf);
    }
    free(sc), free(sd), free(rcnt), free(rd), free(csc), free(crc), free(csd), free(crd), free(st),
        free(rt);
    return mtest_finalize(errs);
}
