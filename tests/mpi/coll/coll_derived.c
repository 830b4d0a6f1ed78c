/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Derived datatypes in the data-moving collectives: Bcast, Gather(v), Scatter(v), Allgather(v),
 * Alltoall(v/w) in their blocking, non-blocking and persistent forms (the persistent request is
 * started twice, with new data the second time). Each pair of send and receive types has the
 * same type signature (ints) but a different layout: MPI_INT, a strided vector, the vector
 * resized, a contiguous type, an indexed type with a negative lower bound, a struct with a gap.
 * Every element names its origin and position and every byte that no element covers must keep
 * its sentinel, so misplaced or extra bytes are caught. Also: zero counts, MPI_IN_PLACE with
 * derived receive types, MPI_Type_free while a non-blocking collective is pending.
 */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENT   (-7)
#define MARGIN 8 /* ints before the buffer's base, for the negative lower bound */
#define K      6 /* ints per process block: a whole number of items of every type */

typedef struct {
    const char *name;
    MPI_Datatype dt;
    int n;      /* ints per item */
    int off[4]; /* their offsets in ints */
    int ext;    /* extent in ints */
} ty_t;

static ty_t tys[6];
static int ntys;

static void add(const char *name, MPI_Datatype dt, int n, const int *off, int ext)
{
    ty_t *t = &tys[ntys++];
    t->name = name;
    t->dt = dt;
    t->n = n;
    memcpy(t->off, off, (size_t)n * sizeof(int));
    t->ext = ext;
    if (dt != MPI_INT)
        MPI_Type_commit(&t->dt);
}

static void make_types(void)
{
    MPI_Datatype vec, vecr, contig, neg, st;
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 6 * (MPI_Aint)sizeof(int), &vecr);
    MPI_Type_contiguous(3, MPI_INT, &contig);
    int negd[2] = {-2, 1};
    MPI_Type_create_indexed_block(2, 1, negd, MPI_INT, &neg);
    int bl[2] = {1, 2};
    MPI_Aint sd[2] = {0, 3 * sizeof(int)};
    MPI_Datatype stt[2] = {MPI_INT, MPI_INT};
    MPI_Datatype st0;
    MPI_Type_create_struct(2, bl, sd, stt, &st0);
    MPI_Type_create_resized(st0, 0, 6 * (MPI_Aint)sizeof(int), &st);
    MPI_Type_free(&st0);
    add("MPI_INT", MPI_INT, 1, (int[]){0}, 1);
    add("vector", vec, 3, (int[]){0, 2, 4}, 5);
    add("resized vector", vecr, 3, (int[]){0, 2, 4}, 6);
    add("contiguous", contig, 3, (int[]){0, 1, 2}, 3);
    add("negative lb", neg, 2, (int[]){-2, 1}, 4);
    add("struct", st, 3, (int[]){0, 3, 4}, 6);
}

static int val(int origin, int k, int it)
{
    return 1 + origin * 1000 + k + it * 100000;
}

/* A buffer of `items` items of t, with margins, all sentinels. */
static int *tb_alloc(const ty_t *t, int items, int **mem_p, int *nints_p)
{
    int n = items * t->ext + 2 * MARGIN + 8;
    int *mem = mtest_calloc((size_t)n, sizeof(int));
    for (int i = 0; i < n; i++)
        mem[i] = SENT;
    *mem_p = mem;
    *nints_p = n;
    return mem + MARGIN;
}

/* Items [item0, item0 + items) hold elements k0.. of origin's data. */
static void tb_set(const ty_t *t, int *base, int item0, int items, int origin, int k0, int it)
{
    for (int j = 0; j < items; j++)
        for (int e = 0; e < t->n; e++)
            base[(item0 + j) * t->ext + t->off[e]] = val(origin, k0 + j * t->n + e, it);
}

static int tb_check(const char *what, const ty_t *t, const int *base, int item0, int items,
                    int origin, int k0, int it)
{
    int errs = 0;
    for (int j = 0; j < items; j++)
        for (int e = 0; e < t->n; e++) {
            int got = base[(item0 + j) * t->ext + t->off[e]];
            int want = val(origin, k0 + j * t->n + e, it);
            if (!MTEST_CHECK(got == want, "%s (%s): item %d elem %d is %d, expected %d", what,
                             t->name, item0 + j, e, got, want))
                return 1;
        }
    return errs;
}

/* Every int no element of the first `items` items covers is still a sentinel. */
static int tb_holes(const char *what, const ty_t *t, const int *mem, int nints, int items)
{
    char *covered = mtest_calloc((size_t)nints, 1);
    for (int j = 0; j < items; j++)
        for (int e = 0; e < t->n; e++)
            covered[MARGIN + j * t->ext + t->off[e]] = 1;
    int errs = 0;
    for (int i = 0; i < nints && !errs; i++)
        if (!covered[i] && !MTEST_CHECK(mem[i] == SENT,
                                        "%s (%s): int %d outside the type was "
                                        "overwritten with %d",
                                        what, t->name, i - MARGIN, mem[i]))
            errs = 1;
    free(covered);
    return errs;
}

static void tb_clear(const ty_t *t, int *base, int items)
{
    for (int j = 0; j < items; j++)
        for (int e = 0; e < t->n; e++)
            base[j * t->ext + t->off[e]] = SENT;
}

/* Run the call in the form `mode` (0 blocking, 1 I..., 2 ..._init + MPI_Start). */
#define CALL(BLK, NB, INIT)                                                                        \
    do {                                                                                           \
        if (mode == 0) {                                                                           \
            BLK;                                                                                   \
        } else if (mode == 1) {                                                                    \
            NB;                                                                                    \
            MPI_Wait(&req, MPI_STATUS_IGNORE);                                                     \
        } else {                                                                                   \
            if (it == 0) {                                                                         \
                INIT;                                                                              \
            }                                                                                      \
            MPI_Start(&req);                                                                       \
            MPI_Wait(&req, MPI_STATUS_IGNORE);                                                     \
        }                                                                                          \
    } while (0)

static const char *mode_name[] = {"blocking", "non-blocking", "persistent"};
static int rank, size;

static int test_pair(int mode, const ty_t *a, const ty_t *b)
{
    int errs = 0, ca = K / a->n, cb = K / b->n, *am, *bm, an, bn;
    int iters = mode == 2 ? 2 : 1;
    int *abuf = tb_alloc(a, ca * size, &am, &an), *bbuf = tb_alloc(b, cb * size, &bm, &bn);
    int *counts = mtest_calloc((size_t)size, sizeof(int)),
        *displs = mtest_calloc((size_t)size, sizeof(int));
    int *bcounts = mtest_calloc((size_t)size, sizeof(int)),
        *bdispls = mtest_calloc((size_t)size, sizeof(int));
    int *wcounts = mtest_calloc((size_t)size, sizeof(int)),
        *wdispls = mtest_calloc((size_t)size, sizeof(int));
    int *vcounts = mtest_calloc((size_t)size, sizeof(int)),
        *vdispls = mtest_calloc((size_t)size, sizeof(int));
    MPI_Datatype *atypes = mtest_calloc((size_t)size, sizeof(MPI_Datatype)),
                 *btypes = mtest_calloc((size_t)size, sizeof(MPI_Datatype));
    MPI_Request req = MPI_REQUEST_NULL;
    char what[160];
    for (int i = 0; i < size; i++) {
        /* v forms: odd ranks' blocks are empty; blocks stored in reverse rank order. */
        counts[i] = i % 2 ? 0 : cb, displs[i] = (size - 1 - i) * cb;
        vcounts[i] = i % 2 ? 0 : ca, vdispls[i] = (size - 1 - i) * ca;
        wcounts[i] = cb, wdispls[i] = i * cb * b->ext * (int)sizeof(int);
        bcounts[i] = ca, bdispls[i] = i * ca * a->ext * (int)sizeof(int);
        atypes[i] = a->dt, btypes[i] = b->dt;
    }
    int root = size - 1;

    /* Bcast: the root sends a's layout, the others receive b's. */
    snprintf(what, sizeof(what), "%s Bcast %s -> %s", mode_name[mode], a->name, b->name);
    for (int it = 0; it < iters; it++) {
        int me = rank == root;
        if (me)
            tb_set(a, abuf, 0, ca, root, 0, it);
        else
            tb_clear(b, bbuf, cb);
        CALL(MPI_Bcast(me ? abuf : bbuf, me ? ca : cb, me ? a->dt : b->dt, root, MPI_COMM_WORLD),
             MPI_Ibcast(me ? abuf : bbuf, me ? ca : cb, me ? a->dt : b->dt, root, MPI_COMM_WORLD,
                        &req),
             MPI_Bcast_init(me ? abuf : bbuf, me ? ca : cb, me ? a->dt : b->dt, root,
                            MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        if (!me)
            errs += tb_check(what, b, bbuf, 0, cb, root, 0, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);
    errs += tb_holes(what, b, bm, bn, cb * size);

    /* Gather a -> b at the root. */
    snprintf(what, sizeof(what), "%s Gather %s -> %s", mode_name[mode], a->name, b->name);
    for (int it = 0; it < iters; it++) {
        tb_set(a, abuf, 0, ca, rank, 0, it);
        tb_clear(b, bbuf, cb * size);
        CALL(MPI_Gather(abuf, ca, a->dt, bbuf, cb, b->dt, root, MPI_COMM_WORLD),
             MPI_Igather(abuf, ca, a->dt, bbuf, cb, b->dt, root, MPI_COMM_WORLD, &req),
             MPI_Gather_init(abuf, ca, a->dt, bbuf, cb, b->dt, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &req));
        for (int r = 0; r < size && rank == root; r++)
            errs += tb_check(what, b, bbuf, r * cb, cb, r, 0, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);
    errs += tb_holes(what, b, bm, bn, cb * size);

    /* Gather in place at the root (its block already in b's layout). */
    snprintf(what, sizeof(what), "%s Gather in place -> %s", mode_name[mode], b->name);
    for (int it = 0; it < iters; it++) {
        int ip = rank == root;
        tb_set(a, abuf, 0, ca, rank, 0, it);
        tb_clear(b, bbuf, cb * size);
        if (ip)
            tb_set(b, bbuf, root * cb, cb, root, 0, it);
        const void *sb = ip ? MPI_IN_PLACE : abuf;
        CALL(MPI_Gather(sb, ca, a->dt, bbuf, cb, b->dt, root, MPI_COMM_WORLD),
             MPI_Igather(sb, ca, a->dt, bbuf, cb, b->dt, root, MPI_COMM_WORLD, &req),
             MPI_Gather_init(sb, ca, a->dt, bbuf, cb, b->dt, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                             &req));
        for (int r = 0; r < size && rank == root; r++)
            errs += tb_check(what, b, bbuf, r * cb, cb, r, 0, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);

    /* Scatter a (root, blocks of ca items) -> b. */
    snprintf(what, sizeof(what), "%s Scatter %s -> %s", mode_name[mode], a->name, b->name);
    for (int it = 0; it < iters; it++) {
        for (int r = 0; r < size && rank == root; r++)
            tb_set(a, abuf, r * ca, ca, r, 0, it);
        tb_clear(b, bbuf, cb);
        CALL(MPI_Scatter(abuf, ca, a->dt, bbuf, cb, b->dt, root, MPI_COMM_WORLD),
             MPI_Iscatter(abuf, ca, a->dt, bbuf, cb, b->dt, root, MPI_COMM_WORLD, &req),
             MPI_Scatter_init(abuf, ca, a->dt, bbuf, cb, b->dt, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &req));
        errs += tb_check(what, b, bbuf, 0, cb, rank, 0, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);
    errs += tb_holes(what, b, bm, bn, cb * size);

    /* Allgather a -> b, then in place with b. */
    for (int ip = 0; ip < 2; ip++) {
        snprintf(what, sizeof(what), "%s Allgather%s %s -> %s", mode_name[mode],
                 ip ? " in place" : "", a->name, b->name);
        for (int it = 0; it < iters; it++) {
            tb_set(a, abuf, 0, ca, rank, 0, it);
            tb_clear(b, bbuf, cb * size);
            if (ip)
                tb_set(b, bbuf, rank * cb, cb, rank, 0, it);
            const void *sb = ip ? MPI_IN_PLACE : abuf;
            CALL(MPI_Allgather(sb, ca, a->dt, bbuf, cb, b->dt, MPI_COMM_WORLD),
                 MPI_Iallgather(sb, ca, a->dt, bbuf, cb, b->dt, MPI_COMM_WORLD, &req),
                 MPI_Allgather_init(sb, ca, a->dt, bbuf, cb, b->dt, MPI_COMM_WORLD, MPI_INFO_NULL,
                                    &req));
            for (int r = 0; r < size; r++)
                errs += tb_check(what, b, bbuf, r * cb, cb, r, 0, it);
        }
        if (mode == 2)
            MPI_Request_free(&req);
        errs += tb_holes(what, b, bm, bn, cb * size);
    }

    /* Alltoall a -> b: block r of process p holds elements p*K.. for r. */
    snprintf(what, sizeof(what), "%s Alltoall %s -> %s", mode_name[mode], a->name, b->name);
    for (int it = 0; it < iters; it++) {
        for (int r = 0; r < size; r++)
            tb_set(a, abuf, r * ca, ca, rank, r * K, it);
        tb_clear(b, bbuf, cb * size);
        CALL(MPI_Alltoall(abuf, ca, a->dt, bbuf, cb, b->dt, MPI_COMM_WORLD),
             MPI_Ialltoall(abuf, ca, a->dt, bbuf, cb, b->dt, MPI_COMM_WORLD, &req),
             MPI_Alltoall_init(abuf, ca, a->dt, bbuf, cb, b->dt, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &req));
        for (int r = 0; r < size; r++)
            errs += tb_check(what, b, bbuf, r * cb, cb, r, rank * K, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);
    errs += tb_holes(what, b, bm, bn, cb * size);

    /* Alltoall in place with b. */
    snprintf(what, sizeof(what), "%s Alltoall in place %s", mode_name[mode], b->name);
    for (int it = 0; it < iters; it++) {
        for (int r = 0; r < size; r++)
            tb_set(b, bbuf, r * cb, cb, rank, r * K, it);
        CALL(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, bbuf, cb, b->dt, MPI_COMM_WORLD),
             MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, bbuf, cb, b->dt, MPI_COMM_WORLD,
                           &req),
             MPI_Alltoall_init(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, bbuf, cb, b->dt, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &req));
        for (int r = 0; r < size; r++)
            errs += tb_check(what, b, bbuf, r * cb, cb, r, rank * K, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);
    errs += tb_holes(what, b, bm, bn, cb * size);

    /* Gatherv a -> b at the root: odd ranks send nothing, blocks in reverse order. */
    snprintf(what, sizeof(what), "%s Gatherv %s -> %s", mode_name[mode], a->name, b->name);
    for (int it = 0; it < iters; it++) {
        int sc = rank % 2 ? 0 : ca;
        tb_set(a, abuf, 0, ca, rank, 0, it);
        tb_clear(b, bbuf, cb * size);
        CALL(MPI_Gatherv(abuf, sc, a->dt, bbuf, counts, displs, b->dt, root, MPI_COMM_WORLD),
             MPI_Igatherv(abuf, sc, a->dt, bbuf, counts, displs, b->dt, root, MPI_COMM_WORLD, &req),
             MPI_Gatherv_init(abuf, sc, a->dt, bbuf, counts, displs, b->dt, root, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &req));
        for (int r = 0; r < size && rank == root; r++)
            errs += tb_check(what, b, bbuf, displs[r], counts[r], r, 0, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);
    if (rank == root) {
        /* only the even ranks' blocks were written */
        int *copy = mtest_calloc((size_t)bn, sizeof(int));
        memcpy(copy, bm, (size_t)bn * sizeof(int));
        for (int r = 0; r < size; r++)
            if (counts[r])
                tb_clear(b, copy + MARGIN + displs[r] * b->ext, cb);
        for (int i = 0; i < bn; i++)
            if (!MTEST_CHECK(copy[i] == SENT, "%s: int %d overwritten", what, i - MARGIN))
                break;
        free(copy);
    }

    /* Scatterv a -> b: the root's blocks in reverse order, odd ranks get nothing. */
    snprintf(what, sizeof(what), "%s Scatterv %s -> %s", mode_name[mode], a->name, b->name);
    for (int it = 0; it < iters; it++) {
        int rc = rank % 2 ? 0 : cb;
        for (int r = 0; r < size && rank == root; r++)
            tb_set(a, abuf, vdispls[r], ca, r, 0, it);
        tb_clear(b, bbuf, cb);
        CALL(MPI_Scatterv(abuf, vcounts, vdispls, a->dt, bbuf, rc, b->dt, root, MPI_COMM_WORLD),
             MPI_Iscatterv(abuf, vcounts, vdispls, a->dt, bbuf, rc, b->dt, root, MPI_COMM_WORLD,
                           &req),
             MPI_Scatterv_init(abuf, vcounts, vdispls, a->dt, bbuf, rc, b->dt, root, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &req));
        errs += tb_check(what, b, bbuf, 0, rc, rank, 0, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);

    /* Allgatherv a -> b. */
    snprintf(what, sizeof(what), "%s Allgatherv %s -> %s", mode_name[mode], a->name, b->name);
    for (int it = 0; it < iters; it++) {
        int sc = rank % 2 ? 0 : ca;
        tb_set(a, abuf, 0, ca, rank, 0, it);
        tb_clear(b, bbuf, cb * size);
        CALL(MPI_Allgatherv(abuf, sc, a->dt, bbuf, counts, displs, b->dt, MPI_COMM_WORLD),
             MPI_Iallgatherv(abuf, sc, a->dt, bbuf, counts, displs, b->dt, MPI_COMM_WORLD, &req),
             MPI_Allgatherv_init(abuf, sc, a->dt, bbuf, counts, displs, b->dt, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &req));
        for (int r = 0; r < size; r++)
            errs += tb_check(what, b, bbuf, displs[r], counts[r], r, 0, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);

    /* Alltoallv a -> b: only between even ranks, blocks in reverse order. */
    snprintf(what, sizeof(what), "%s Alltoallv %s -> %s", mode_name[mode], a->name, b->name);
    int *zero = mtest_calloc((size_t)size, sizeof(int));
    int *sc = rank % 2 ? zero : vcounts, *rcv = rank % 2 ? zero : counts;
    for (int it = 0; it < iters; it++) {
        for (int r = 0; r < size; r++)
            tb_set(a, abuf, vdispls[r], ca, rank, r * K, it);
        tb_clear(b, bbuf, cb * size);
        CALL(MPI_Alltoallv(abuf, sc, vdispls, a->dt, bbuf, rcv, displs, b->dt, MPI_COMM_WORLD),
             MPI_Ialltoallv(abuf, sc, vdispls, a->dt, bbuf, rcv, displs, b->dt, MPI_COMM_WORLD,
                            &req),
             MPI_Alltoallv_init(abuf, sc, vdispls, a->dt, bbuf, rcv, displs, b->dt, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &req));
        for (int r = 0; r < size; r++)
            errs += tb_check(what, b, bbuf, displs[r], rcv[r], r, rank * K, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);
    free(zero);

    /* Alltoallw a -> b with byte displacements and a type per peer. */
    snprintf(what, sizeof(what), "%s Alltoallw %s -> %s", mode_name[mode], a->name, b->name);
    for (int it = 0; it < iters; it++) {
        for (int r = 0; r < size; r++)
            tb_set(a, abuf, r * ca, ca, rank, r * K, it);
        tb_clear(b, bbuf, cb * size);
        CALL(MPI_Alltoallw(abuf, bcounts, bdispls, atypes, bbuf, wcounts, wdispls, btypes,
                           MPI_COMM_WORLD),
             MPI_Ialltoallw(abuf, bcounts, bdispls, atypes, bbuf, wcounts, wdispls, btypes,
                            MPI_COMM_WORLD, &req),
             MPI_Alltoallw_init(abuf, bcounts, bdispls, atypes, bbuf, wcounts, wdispls, btypes,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &req));
        for (int r = 0; r < size; r++)
            errs += tb_check(what, b, bbuf, r * cb, cb, r, rank * K, it);
    }
    if (mode == 2)
        MPI_Request_free(&req);
    errs += tb_holes(what, b, bm, bn, cb * size);

    free(am), free(bm), free(counts), free(displs), free(bcounts), free(bdispls);
    free(wcounts), free(wdispls), free(vcounts), free(vdispls), free(atypes), free(btypes);
    return errs;
}

/* MPI_Type_free right after starting a non-blocking broadcast of that type. */
static int test_free_pending(void)
{
    int errs = 0, buf[10];
    MPI_Datatype v;
    MPI_Type_vector(5, 1, 2, MPI_INT, &v);
    MPI_Type_commit(&v);
    for (int i = 0; i < 10; i++)
        buf[i] = rank == 0 ? 100 + i : SENT;
    MPI_Request req;
    MPI_Ibcast(buf, 1, v, 0, MPI_COMM_WORLD, &req);
    MPI_Type_free(&v);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    for (int i = 0; i < 10; i++) {
        int want = rank == 0 || i % 2 == 0 ? 100 + i : SENT;
        if (!MTEST_CHECK(buf[i] == want, "Ibcast after Type_free: buf[%d]=%d, expected %d", i,
                         buf[i], want))
            errs++;
    }
    return errs;
}

int main(int argc, char **argv)
{
    int errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    make_types();
    /* send, receive type pairs: every type on each side at least once */
    static const int pairs[][2] = {{0, 1}, {1, 0}, {2, 4}, {4, 3}, {3, 5}, {5, 2}, {1, 1}};
    for (int mode = 0; mode < 3; mode++)
        for (size_t p = 0; p < sizeof(pairs) / sizeof(pairs[0]); p++)
            errs += test_pair(mode, &tys[pairs[p][0]], &tys[pairs[p][1]]);
    errs += test_free_pending();
    for (int i = 1; i < ntys; i++)
        MPI_Type_free(&tys[i].dt);
    return mtest_finalize(errs);
}
