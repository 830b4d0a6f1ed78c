/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives on intercommunicators (MPI-4.1 section 6.2.2), each in its blocking, non-blocking
 * and persistent form (the persistent one started twice): Barrier, Bcast, Reduce, Allreduce,
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v/w), Reduce_scatter(_block). Two splittings of
 * the world: the halves (unequal at odd sizes) and rank 0 alone against the rest; roots at the
 * first and last process of either group, zero counts, then the errors: a bad root, MPI_IN_PLACE,
 * prefix reductions (not defined on intercommunicators). Passes against MPICH 5.0.2 too, minus
 * three of its bugs that are checked on Manifold only.
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

static int g, lrank, lsize, rsize; /* my group (0 or 1), my rank and the groups' sizes */

/* Block i of what process `rank` of group `grp` sends to process `to` of the other group. */
static int enc(int grp, int rank, int to, int i)
{
    return grp * 100000 + rank * 1000 + to * 10 + i;
}

/* Run the collective in form `mode`: 0 blocking (already done by `rc`), 1 I..., 2 ..._init. */
static void complete(const char *name, int mode, int rc, MPI_Request *req)
{
    MTEST_CHECK(rc == MPI_SUCCESS, "%s form %d returned %d", name, mode, rc);
    if (rc != MPI_SUCCESS || mode == 0)
        return;
    if (mode == 1) {
        MPI_Wait(req, MPI_STATUS_IGNORE);
        return;
    }
    for (int run = 0; run < 2; run++) {
        MPI_Start(req);
        MPI_Wait(req, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(req);
}

/* The root argument of this process for a root at rank rr of group rg. */
static int root_arg(int rg, int rr)
{
    return rg == g ? (lrank == rr ? MPI_ROOT : MPI_PROC_NULL) : rr;
}

static void test_bcast(MPI_Comm ic, int mode, int rg, int rr, int count)
{
    int buf[8], root = root_arg(rg, rr);
    MPI_Request req;
    /* MPICH 5.0.2's Ibcast/Bcast_init on an intercommunicator deliver nothing when the root is
     * not its group's rank 0 (its blocking Bcast does): checked on Manifold only. */
    if (mode != 0 && rr != 0 && !mtest_is_manifold())
        return;
    for (int i = 0; i < 8; i++)
        buf[i] = root == MPI_ROOT ? enc(g, lrank, 0, i) : -1;
    int rc = mode == 0   ? MPI_Bcast(buf, count, MPI_INT, root, ic)
             : mode == 1 ? MPI_Ibcast(buf, count, MPI_INT, root, ic, &req)
                         : MPI_Bcast_init(buf, count, MPI_INT, root, ic, MPI_INFO_NULL, &req);
    complete("bcast", mode, rc, &req);
    for (int i = 0; i < 8; i++) {
        int want = root == MPI_ROOT                      ? enc(g, lrank, 0, i)
                   : root == MPI_PROC_NULL || i >= count ? -1
                                                         : enc(rg, rr, 0, i);
        MTEST_CHECK(buf[i] == want, "bcast form %d root %d/%d: [%d] = %d, want %d", mode, rg, rr, i,
                    buf[i], want);
    }
}

static void test_reduce(MPI_Comm ic, int mode, int rg, int rr, int count)
{
    int sbuf[8], rbuf[8], root = root_arg(rg, rr);
    MPI_Request req;
    for (int i = 0; i < 8; i++) {
        sbuf[i] = enc(g, lrank, 0, i);
        rbuf[i] = -1;
    }
    int rc = mode == 0   ? MPI_Reduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, root, ic)
             : mode == 1 ? MPI_Ireduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, root, ic, &req)
                         : MPI_Reduce_init(sbuf, rbuf, count, MPI_INT, MPI_SUM, root, ic,
                                           MPI_INFO_NULL, &req);
    complete("reduce", mode, rc, &req);
    for (int i = 0; i < 8; i++) {
        int want = -1;
        if (root == MPI_ROOT && i < count) {
            want = 0;
            for (int k = 0; k < rsize; k++)
                want += enc(!g, k, 0, i);
        }
        MTEST_CHECK(rbuf[i] == want, "reduce form %d root %d/%d: [%d] = %d, want %d", mode, rg, rr,
                    i, rbuf[i], want);
    }
}

static void test_allreduce(MPI_Comm ic, int mode, int count)
{
    int sbuf[8], rbuf[8];
    MPI_Request req;
    for (int i = 0; i < 8; i++) {
        sbuf[i] = enc(g, lrank, 0, i);
        rbuf[i] = -1;
    }
    int rc = mode == 0 ? MPI_Allreduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, ic)
             : mode == 1
                 ? MPI_Iallreduce(sbuf, rbuf, count, MPI_INT, MPI_SUM, ic, &req)
                 : MPI_Allreduce_init(sbuf, rbuf, count, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &req);
    complete("allreduce", mode, rc, &req);
    for (int i = 0; i < 8; i++) {
        int want = -1;
        if (i < count) {
            want = 0;
            for (int k = 0; k < rsize; k++)
                want += enc(!g, k, 0, i);
        }
        MTEST_CHECK(rbuf[i] == want, "allreduce form %d: [%d] = %d, want %d", mode, i, rbuf[i],
                    want);
    }
}

/* Gather(v) (v: remote process k sends k % 3 items, placed with a gap of one) and Scatter(v). */
static void test_gather_scatter(MPI_Comm ic, int mode, int rg, int rr, int v, int scatter)
{
    int root = root_arg(rg, rr), n = 3 * rsize + rsize + 8;
    int *all = malloc(sizeof(int) * (size_t)n), *counts = malloc(sizeof(int) * (size_t)rsize);
    int *displs = malloc(sizeof(int) * (size_t)rsize), one[3], total = 0;
    MPI_Request req;
    for (int k = 0; k < rsize; k++) {
        counts[k] = v ? k % 3 : 3;
        displs[k] = total;
        total += counts[k] + v;
    }
    int mycount = v ? lrank % 3 : 3;
    for (int i = 0; i < n; i++)
        all[i] = -1;
    for (int i = 0; i < 3; i++)
        one[i] = scatter ? -1 : enc(g, lrank, 0, i);
    if (scatter && root == MPI_ROOT)
        for (int k = 0; k < rsize; k++)
            for (int i = 0; i < counts[k]; i++)
                all[displs[k] + i] = enc(g, k, 0, i);
    int rc;
    const char *name = scatter ? (v ? "scatterv" : "scatter") : (v ? "gatherv" : "gather");
    if (!scatter && !v)
        rc = mode == 0 ? MPI_Gather(one, 3, MPI_INT, all, 3, MPI_INT, root, ic)
             : mode == 1
                 ? MPI_Igather(one, 3, MPI_INT, all, 3, MPI_INT, root, ic, &req)
                 : MPI_Gather_init(one, 3, MPI_INT, all, 3, MPI_INT, root, ic, MPI_INFO_NULL, &req);
    else if (!scatter)
        rc = mode == 0 ? MPI_Gatherv(one, mycount, MPI_INT, all, counts, displs, MPI_INT, root, ic)
             : mode == 1
                 ? MPI_Igatherv(one, mycount, MPI_INT, all, counts, displs, MPI_INT, root, ic, &req)
                 : MPI_Gatherv_init(one, mycount, MPI_INT, all, counts, displs, MPI_INT, root, ic,
                                    MPI_INFO_NULL, &req);
    else if (!v)
        rc = mode == 0   ? MPI_Scatter(all, 3, MPI_INT, one, 3, MPI_INT, root, ic)
             : mode == 1 ? MPI_Iscatter(all, 3, MPI_INT, one, 3, MPI_INT, root, ic, &req)
                         : MPI_Scatter_init(all, 3, MPI_INT, one, 3, MPI_INT, root, ic,
                                            MPI_INFO_NULL, &req);
    else
        rc = mode == 0 ? MPI_Scatterv(all, counts, displs, MPI_INT, one, mycount, MPI_INT, root, ic)
             : mode == 1 ? MPI_Iscatterv(all, counts, displs, MPI_INT, one, mycount, MPI_INT, root,
                                         ic, &req)
                         : MPI_Scatterv_init(all, counts, displs, MPI_INT, one, mycount, MPI_INT,
                                             root, ic, MPI_INFO_NULL, &req);
    complete(name, mode, rc, &req);
    if (!scatter && root == MPI_ROOT) {
        for (int k = 0; k < rsize; k++)
            for (int i = 0; i < counts[k] + v; i++) {
                int want = i < counts[k] ? enc(!g, k, 0, i) : -1;
                MTEST_CHECK(all[displs[k] + i] == want, "%s form %d: block %d [%d] = %d, want %d",
                            name, mode, k, i, all[displs[k] + i], want);
            }
    } else if (scatter && root != MPI_ROOT) {
        for (int i = 0; i < 3; i++) {
            int want = root != MPI_PROC_NULL && i < mycount ? enc(rg, lrank, 0, i) : -1;
            MTEST_CHECK(one[i] == want, "%s form %d root %d/%d: [%d] = %d, want %d", name, mode, rg,
                        rr, i, one[i], want);
        }
    }
    free(all);
    free(counts);
    free(displs);
}

/* Allgather (2 items each) and Allgatherv (process k of a group sends k % 3 items). */
static void test_allgather(MPI_Comm ic, int mode, int v)
{
    int n = 3 * rsize + 1, *all = malloc(sizeof(int) * (size_t)n), one[3], total = 0;
    int *counts = malloc(sizeof(int) * (size_t)rsize),
        *displs = malloc(sizeof(int) * (size_t)rsize);
    MPI_Request req;
    for (int k = 0; k < rsize; k++) {
        counts[k] = v ? k % 3 : 2;
        displs[k] = total;
        total += counts[k];
    }
    for (int i = 0; i < n; i++)
        all[i] = -1;
    for (int i = 0; i < 3; i++)
        one[i] = enc(g, lrank, 0, i);
    int mycount = v ? lrank % 3 : 2, rc;
    if (!v)
        rc = mode == 0 ? MPI_Allgather(one, 2, MPI_INT, all, 2, MPI_INT, ic)
             : mode == 1
                 ? MPI_Iallgather(one, 2, MPI_INT, all, 2, MPI_INT, ic, &req)
                 : MPI_Allgather_init(one, 2, MPI_INT, all, 2, MPI_INT, ic, MPI_INFO_NULL, &req);
    else
        rc = mode == 0 ? MPI_Allgatherv(one, mycount, MPI_INT, all, counts, displs, MPI_INT, ic)
             : mode == 1
                 ? MPI_Iallgatherv(one, mycount, MPI_INT, all, counts, displs, MPI_INT, ic, &req)
                 : MPI_Allgatherv_init(one, mycount, MPI_INT, all, counts, displs, MPI_INT, ic,
                                       MPI_INFO_NULL, &req);
    complete(v ? "allgatherv" : "allgather", mode, rc, &req);
    for (int k = 0; k < rsize; k++)
        for (int i = 0; i < counts[k]; i++)
            MTEST_CHECK(all[displs[k] + i] == enc(!g, k, 0, i), "allgather%s form %d: %d[%d] = %d",
                        v ? "v" : "", mode, k, i, all[displs[k] + i]);
    MTEST_CHECK(all[total] == -1, "allgather%s wrote past the end", v ? "v" : "");
    free(all);
    free(counts);
    free(displs);
}

/* Items process s of one group sends process r of the other in Alltoallv/w. */
static int a2a_count(int s, int r)
{
    return (s + r) % 3;
}

/* kind 0: Alltoall (2 items per peer), 1: Alltoallv, 2: Alltoallw. */
static void test_alltoall(MPI_Comm ic, int mode, int kind)
{
    int n = 3 * rsize + 1;
    int *sbuf = malloc(sizeof(int) * (size_t)n), *rbuf = malloc(sizeof(int) * (size_t)n);
    int *sc = malloc(sizeof(int) * (size_t)rsize * 4), *sd = sc + rsize, *rc_ = sc + 2 * rsize,
        *rd = sc + 3 * rsize;
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)rsize);
    MPI_Request req;
    int st = 0, rt = 0;
    for (int k = 0; k < rsize; k++) {
        sc[k] = kind == 0 ? 2 : a2a_count(lrank, k);
        rc_[k] = kind == 0 ? 2 : a2a_count(k, lrank);
        sd[k] = st;
        rd[k] = rt;
        st += sc[k];
        rt += rc_[k];
        types[k] = MPI_INT;
        for (int i = 0; i < sc[k]; i++)
            sbuf[sd[k] + i] = enc(g, lrank, k, i);
    }
    for (int i = 0; i < n; i++)
        rbuf[i] = -1;
    int rc;
    if (kind == 0) {
        rc = mode == 0 ? MPI_Alltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ic)
             : mode == 1
                 ? MPI_Ialltoall(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ic, &req)
                 : MPI_Alltoall_init(sbuf, 2, MPI_INT, rbuf, 2, MPI_INT, ic, MPI_INFO_NULL, &req);
    } else if (kind == 1) {
        rc = mode == 0   ? MPI_Alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc_, rd, MPI_INT, ic)
             : mode == 1 ? MPI_Ialltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc_, rd, MPI_INT, ic, &req)
                         : MPI_Alltoallv_init(sbuf, sc, sd, MPI_INT, rbuf, rc_, rd, MPI_INT, ic,
                                              MPI_INFO_NULL, &req);
    } else {
        int *sdb = malloc(sizeof(int) * (size_t)rsize * 2), *rdb = sdb + rsize;
        for (int k = 0; k < rsize; k++) {
            sdb[k] = sd[k] * (int)sizeof(int);
            rdb[k] = rd[k] * (int)sizeof(int);
        }
        rc = mode == 0   ? MPI_Alltoallw(sbuf, sc, sdb, types, rbuf, rc_, rdb, types, ic)
             : mode == 1 ? MPI_Ialltoallw(sbuf, sc, sdb, types, rbuf, rc_, rdb, types, ic, &req)
                         : MPI_Alltoallw_init(sbuf, sc, sdb, types, rbuf, rc_, rdb, types, ic,
                                              MPI_INFO_NULL, &req);
        complete("alltoallw", mode, rc, &req);
        free(sdb);
        rc = MPI_SUCCESS;
        mode = 0; /* completed above */
    }
    complete(kind == 0 ? "alltoall" : "alltoallv", mode, rc, &req);
    for (int k = 0; k < rsize; k++)
        for (int i = 0; i < rc_[k]; i++)
            MTEST_CHECK(rbuf[rd[k] + i] == enc(!g, k, lrank, i), "alltoall kind %d: %d[%d] = %d",
                        kind, k, i, rbuf[rd[k] + i]);
    MTEST_CHECK(rbuf[rt] == -1, "alltoall kind %d wrote past the end", kind);
    free(sbuf);
    free(rbuf);
    free(sc);
    free(types);
}

/* The vector reduced over the other group is scattered over mine. Both groups' vectors have
 * total = 2 * lsize * rsize items; block: Reduce_scatter_block (2 * rsize each), otherwise my
 * group's first process takes rsize more and its last rsize fewer. */
static void test_reduce_scatter(MPI_Comm ic, int mode, int block)
{
    int total = 2 * lsize * rsize, *sbuf = malloc(sizeof(int) * (size_t)total);
    int *rbuf = malloc(sizeof(int) * (size_t)(total + 1)),
        *counts = malloc(sizeof(int) * (size_t)lsize);
    MPI_Request req;
    for (int i = 0; i < lsize; i++)
        counts[i] = 2 * rsize;
    if (!block && lsize > 1) {
        counts[0] += rsize;
        counts[lsize - 1] -= rsize;
    }
    for (int e = 0; e < total; e++)
        sbuf[e] = g * 1000 + lrank * 100 + e;
    for (int e = 0; e <= total; e++)
        rbuf[e] = -1;
    int rc;
    if (block)
        rc = mode == 0 ? MPI_Reduce_scatter_block(sbuf, rbuf, 2 * rsize, MPI_INT, MPI_SUM, ic)
             : mode == 1
                 ? MPI_Ireduce_scatter_block(sbuf, rbuf, 2 * rsize, MPI_INT, MPI_SUM, ic, &req)
                 : MPI_Reduce_scatter_block_init(sbuf, rbuf, 2 * rsize, MPI_INT, MPI_SUM, ic,
                                                 MPI_INFO_NULL, &req);
    else
        rc = mode == 0   ? MPI_Reduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, ic)
             : mode == 1 ? MPI_Ireduce_scatter(sbuf, rbuf, counts, MPI_INT, MPI_SUM, ic, &req)
                         : MPI_Reduce_scatter_init(sbuf, rbuf, counts, MPI_INT, MPI_SUM, ic,
                                                   MPI_INFO_NULL, &req);
    complete(block ? "reduce_scatter_block" : "reduce_scatter", mode, rc, &req);
    int first = 0;
    for (int i = 0; i < lrank; i++)
        first += counts[i];
    for (int j = 0; j <= counts[lrank]; j++) {
        int want = -1;
        if (j < counts[lrank]) {
            want = 0;
            for (int k = 0; k < rsize; k++)
                want += !g * 1000 + k * 100 + first + j;
        }
        MTEST_CHECK(rbuf[j] == want, "reduce_scatter%s form %d: [%d] = %d, want %d",
                    block ? "_block" : "", mode, j, rbuf[j], want);
    }
    free(sbuf);
    free(rbuf);
    free(counts);
}

static void test_errors(MPI_Comm ic)
{
    int buf[4] = {0}, out[4];
    MPI_Request req;
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    MTEST_CHECK_ERR(MPI_Bcast(buf, 1, MPI_INT, rsize, ic), MPI_ERR_ROOT, "MPI_Bcast");
    MTEST_CHECK_ERR(MPI_Bcast(buf, 1, MPI_INT, -7, ic), MPI_ERR_ROOT, "MPI_Bcast");
    MTEST_CHECK_ERR(MPI_Ireduce(buf, out, 1, MPI_INT, MPI_SUM, rsize + 3, ic, &req), MPI_ERR_ROOT,
                    "MPI_Ireduce");
    MTEST_CHECK_ERR(MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_INT, MPI_ANY_SOURCE, ic), MPI_ERR_ROOT,
                    "MPI_Gather");
    MTEST_CHECK_ERR(MPI_Allreduce(MPI_IN_PLACE, buf, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_BUFFER,
                    "MPI_Allreduce");
    if (mtest_is_manifold()) {
        /* MPICH 5.0.2 accepts these (and then crashes). */
        MTEST_CHECK_ERR(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, out, 1, MPI_INT, ic),
                        MPI_ERR_BUFFER, "MPI_Allgather");
        MTEST_CHECK_ERR(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, out, 1, MPI_INT, ic), MPI_ERR_BUFFER,
                        "MPI_Alltoall");
    }
    MTEST_CHECK_ERR(MPI_Scan(buf, out, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM, "MPI_Scan");
    MTEST_CHECK_ERR(MPI_Exscan(buf, out, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM, "MPI_Exscan");
    MTEST_CHECK_ERR(MPI_Iscan(buf, out, 1, MPI_INT, MPI_SUM, ic, &req), MPI_ERR_COMM, "MPI_Iscan");
    if (mtest_is_manifold()) /* MPICH 5.0.2 aborts on an internal assertion */
        MTEST_CHECK_ERR(MPI_Exscan_init(buf, out, 1, MPI_INT, MPI_SUM, ic, MPI_INFO_NULL, &req),
                        MPI_ERR_COMM, "MPI_Exscan_init");
    /* Still usable after the refused calls. */
    MTEST_CHECK(MPI_Barrier(ic) == MPI_SUCCESS, "barrier after errors");
}

static void run_all(MPI_Comm ic)
{
    MPI_Comm_rank(ic, &lrank);
    MPI_Comm_size(ic, &lsize);
    MPI_Comm_remote_size(ic, &rsize);
    for (int mode = 0; mode < 3; mode++) {
        MPI_Request req;
        int rc = mode == 0   ? MPI_Barrier(ic)
                 : mode == 1 ? MPI_Ibarrier(ic, &req)
                             : MPI_Barrier_init(ic, MPI_INFO_NULL, &req);
        complete("barrier", mode, rc, &req);
        for (int rg = 0; rg < 2; rg++) {
            int gsize = rg == g ? lsize : rsize;
            for (int rr = 0; rr<gsize; rr += gsize> 1 ? gsize - 1 : 1) {
                test_bcast(ic, mode, rg, rr, 5);
                test_reduce(ic, mode, rg, rr, 4);
                for (int v = 0; v < 2; v++) {
                    test_gather_scatter(ic, mode, rg, rr, v, 0);
                    test_gather_scatter(ic, mode, rg, rr, v, 1);
                }
            }
        }
        test_bcast(ic, mode, 1, 0, 0);
        test_reduce(ic, mode, 0, 0, 0);
        test_allreduce(ic, mode, 6);
        test_allreduce(ic, mode, 0);
        test_allgather(ic, mode, 0);
        test_allgather(ic, mode, 1);
        for (int kind = 0; kind < 3; kind++)
            test_alltoall(ic, mode, kind);
        test_reduce_scatter(ic, mode, 1);
        test_reduce_scatter(ic, mode, 0);
    }
    test_errors(ic);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        MTEST_CHECK(0, "needs at least 2 processes");
        return mtest_finalize(mtest_error_count());
    }
    /* split 0: the halves; split 1: rank 0 alone against the rest. */
    for (int split = 0; split < 2; split++) {
        int half = split == 0 ? (wsize + 1) / 2 : 1;
        g = wrank >= half;
        MPI_Comm local, ic;
        MPI_Comm_split(MPI_COMM_WORLD, g, wrank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, g ? 0 : half, 7, &ic);
        run_all(ic);
        MPI_Comm_free(&ic);
        MPI_Comm_free(&local);
    }
    return mtest_finalize(mtest_error_count());
}
