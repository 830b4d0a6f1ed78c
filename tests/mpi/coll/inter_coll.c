/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives on intercommunicators (MPI-4.1 section 6.2.2), each in its blocking, non-blocking
 * and persistent form (the persistent one started twice): Barrier, Bcast, Reduce, Allreduce,
 * Gather(v), Scatter(v), Allgather(v), Alltoall(v/w), Reduce_scatter(_block). Two splittings of
 * the world: the halves (unequal at odd sizes) and rank 0 alone against the rest; roots at the
 * first and last process of either group, zero counts, then the errors: a bad root, MPI_IN_PLACE,
 * prefix reductions (not defined on intercommunicators). Derived datatypes on either side of
 * Bcast, Gather, Scatter, Allgather, Alltoall, Allreduce and Reduce (a user operation). Passes
 * against MPICH 5.0.2 too, minus three of its bugs that are checked on Manifold only.
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

/* ---- derived datatypes -------------------------------------------------------------------- */

#define SENT (-7)

/* Int positions of element e in a buffer of items of type kind: 0 the vector {int, gap, int}
 * (extent 3 ints), 1 MPI_INT resized to 2 ints (a gap after each), 2 plain ints. */
static int pos(int kind, int e)
{
    return kind == 0 ? e / 2 * 3 + e % 2 * 2 : kind == 1 ? 2 * e : e;
}

/* buf[0..len) holds want[e] at pos(kind, e) for e < n and SENT everywhere else. */
static void check_layout(const char *what, int mode, const int *buf, int len, int kind,
                         const int *want, int n)
{
    for (int k = 0; k < len; k++) {
        int w = SENT;
        for (int e = 0; e < n; e++)
            if (pos(kind, e) == k)
                w = want[e];
        MTEST_CHECK(buf[k] == w, "derived %s form %d: [%d] = %d, want %d", what, mode, k, buf[k],
                    w);
    }
}

static void reset(int *sbuf, int *rbuf, int n)
{
    for (int k = 0; k < n; k++)
        sbuf[k] = rbuf[k] = SENT;
}

/* A user sum on items of the vector type (in its own layout). */
static void vsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in;
    int *b = inout;
    for (int j = 0; j < *len; j++) {
        b[3 * j] += a[3 * j];
        b[3 * j + 2] += a[3 * j + 2];
    }
}

/* Every side with a derived type somewhere: packed sends, unpacked receives, and a resized
 * receive type that keeps its blocks apart (Allgather's direct exchange). Root: group 0's
 * rank 0. */
static void test_derived(MPI_Comm ic, int mode)
{
    MPI_Datatype v, ri;
    MPI_Op op;
    MPI_Type_vector(2, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &ri);
    MPI_Type_commit(&ri);
    MPI_Op_create(vsum, 1, &op);
    int n = 4 * (lsize > rsize ? lsize : rsize) + 12, root = root_arg(0, 0);
    int *sbuf = malloc((size_t)n * sizeof(int)), *rbuf = malloc((size_t)n * sizeof(int));
    int *want = malloc((size_t)n * sizeof(int));
    MPI_Request req;
    int rc;

    /* Bcast: 3 vectors at both ends. */
    reset(sbuf, rbuf, n);
    for (int e = 0; e < 6; e++) {
        want[e] = enc(0, 0, 0, e);
        if (root == MPI_ROOT)
            rbuf[pos(0, e)] = want[e];
    }
    rc = mode == 0   ? MPI_Bcast(rbuf, 3, v, root, ic)
         : mode == 1 ? MPI_Ibcast(rbuf, 3, v, root, ic, &req)
                     : MPI_Bcast_init(rbuf, 3, v, root, ic, MPI_INFO_NULL, &req);
    complete("derived bcast", mode, rc, &req);
    check_layout("bcast", mode, rbuf, 9, 0, want, root == MPI_PROC_NULL ? 0 : 6);

    /* Gather: plain ints in, one vector per remote process at the root. */
    reset(sbuf, rbuf, n);
    for (int i = 0; i < 2; i++)
        sbuf[i] = enc(g, lrank, 0, i);
    for (int e = 0; e < 2 * rsize; e++)
        want[e] = enc(!g, e / 2, 0, e % 2);
    rc = mode == 0   ? MPI_Gather(sbuf, 2, MPI_INT, rbuf, 1, v, root, ic)
         : mode == 1 ? MPI_Igather(sbuf, 2, MPI_INT, rbuf, 1, v, root, ic, &req)
                     : MPI_Gather_init(sbuf, 2, MPI_INT, rbuf, 1, v, root, ic, MPI_INFO_NULL, &req);
    complete("derived gather", mode, rc, &req);
    check_layout("gather", mode, rbuf, 3 * rsize, 0, want, root == MPI_ROOT ? 2 * rsize : 0);

    /* Scatter: a vector per remote process out of the root, two resized ints in. */
    reset(sbuf, rbuf, n);
    if (root == MPI_ROOT)
        for (int e = 0; e < 2 * rsize; e++)
            sbuf[pos(0, e)] = enc(g, lrank, e / 2, e % 2);
    for (int i = 0; i < 2; i++)
        want[i] = enc(0, 0, lrank, i);
    rc = mode == 0   ? MPI_Scatter(sbuf, 1, v, rbuf, 2, ri, root, ic)
         : mode == 1 ? MPI_Iscatter(sbuf, 1, v, rbuf, 2, ri, root, ic, &req)
                     : MPI_Scatter_init(sbuf, 1, v, rbuf, 2, ri, root, ic, MPI_INFO_NULL, &req);
    complete("derived scatter", mode, rc, &req);
    check_layout("scatter", mode, rbuf, 4, 1, want, g == 1 ? 2 : 0);

    /* Allgather: one int each, received as resized ints (blocks not back to back). */
    reset(sbuf, rbuf, n);
    sbuf[0] = enc(g, lrank, 0, 0);
    for (int k = 0; k < rsize; k++)
        want[k] = enc(!g, k, 0, 0);
    rc = mode == 0   ? MPI_Allgather(sbuf, 1, MPI_INT, rbuf, 1, ri, ic)
         : mode == 1 ? MPI_Iallgather(sbuf, 1, MPI_INT, rbuf, 1, ri, ic, &req)
                     : MPI_Allgather_init(sbuf, 1, MPI_INT, rbuf, 1, ri, ic, MPI_INFO_NULL, &req);
    complete("derived allgather", mode, rc, &req);
    check_layout("allgather", mode, rbuf, 2 * rsize, 1, want, rsize);

    /* Alltoall: a vector to each remote process, plain ints back. */
    reset(sbuf, rbuf, n);
    for (int e = 0; e < 2 * rsize; e++) {
        sbuf[pos(0, e)] = enc(g, lrank, e / 2, e % 2);
        want[e] = enc(!g, e / 2, lrank, e % 2);
    }
    rc = mode == 0   ? MPI_Alltoall(sbuf, 1, v, rbuf, 2, MPI_INT, ic)
         : mode == 1 ? MPI_Ialltoall(sbuf, 1, v, rbuf, 2, MPI_INT, ic, &req)
                     : MPI_Alltoall_init(sbuf, 1, v, rbuf, 2, MPI_INT, ic, MPI_INFO_NULL, &req);
    complete("derived alltoall", mode, rc, &req);
    check_layout("alltoall", mode, rbuf, 2 * rsize, 2, want, 2 * rsize);

    /* Allreduce and Reduce: a user sum over 2 vectors; each gets the other group's sum. */
    for (int red = 0; red < 2; red++) {
        reset(sbuf, rbuf, n);
        for (int e = 0; e < 4; e++) {
            sbuf[pos(0, e)] = enc(g, lrank, 0, e);
            want[e] = 0;
            for (int k = 0; k < rsize; k++)
                want[e] += enc(!g, k, 0, e);
        }
        if (red == 0)
            rc = mode == 0   ? MPI_Allreduce(sbuf, rbuf, 2, v, op, ic)
                 : mode == 1 ? MPI_Iallreduce(sbuf, rbuf, 2, v, op, ic, &req)
                             : MPI_Allreduce_init(sbuf, rbuf, 2, v, op, ic, MPI_INFO_NULL, &req);
        else
            rc = mode == 0   ? MPI_Reduce(sbuf, rbuf, 2, v, op, root, ic)
                 : mode == 1 ? MPI_Ireduce(sbuf, rbuf, 2, v, op, root, ic, &req)
                             : MPI_Reduce_init(sbuf, rbuf, 2, v, op, root, ic, MPI_INFO_NULL, &req);
        complete(red == 0 ? "derived allreduce" : "derived reduce", mode, rc, &req);
        check_layout(red == 0 ? "allreduce" : "reduce", mode, rbuf, 6, 0, want,
                     red == 0 || root == MPI_ROOT ? 4 : 0);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&v);
    MPI_Type_free(&ri);
    free(sbuf);
    free(rbuf);
    free(want);
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
        /* One buffer for both sides (accepted before, where Allreduce and Alltoall refused
         * it), and no advice to use MPI_IN_PLACE, which intercommunicators refuse. */
        int counts[4] = {1, 1, 1, 1}, displs[4] = {0, 1, 2, 3};
        int rc = MPI_Allgather(buf, 1, MPI_INT, buf, 1, MPI_INT, ic);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Allgather");
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        MTEST_CHECK(strstr(text, "MPI_IN_PLACE") == NULL, "the message advises MPI_IN_PLACE: %s",
                    text);
        if (rsize <= 4)
            MTEST_CHECK_ERR(MPI_Allgatherv(buf, 1, MPI_INT, buf, counts, displs, MPI_INT, ic),
                            MPI_ERR_BUFFER, "MPI_Allgatherv");
        MTEST_CHECK_ERR(MPI_Iallgather(buf, 1, MPI_INT, buf, 1, MPI_INT, ic, &req), MPI_ERR_BUFFER,
                        "MPI_Iallgather");
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
        test_derived(ic, mode);
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
