/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every non-blocking collective and its persistent form (int and _c where they exist), all
 * started before any is completed and then finished with MPI_Waitall, checked element by
 * element: barrier, bcast from each root, reduce with MPI_SUM and a non-commutative operation
 * (digit concatenation keeps rank order visible), allreduce, gather(v), scatter(v),
 * allgather(v), alltoall(v/w), reduce_scatter(_block), scan, exscan, MPI_IN_PLACE variants.
 * The persistent forms are started three times with new data.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define N 5 /* items per block */

static void concat(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    long long *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        long long scale = 1;
        while (scale <= b[i])
            scale *= 10;
        b[i] = a[i] * scale + b[i];
    }
}

static long long digits(int lo, int hi)
{
    long long v = 0;
    for (int r = lo; r <= hi; r++)
        v = v * 10 + (r + 1);
    return v;
}

enum { NREQ = 40 };

typedef struct {
    int rank, size, root, iter;
    long long bc[N], red[N], redcat[N], ar[N], arcat[N], arip[N], sc[N], ex[N];
    long long *gat, *gatv, *scat, sct[N], *ag, *agv, *a2a_s, *a2a_r, *a2av_r, *a2aw_r, *rsb_r;
    long long rs_r[N], *rs_s, src[N], dig[N]; /* dig: rank + 1, for the concatenation */
    int *cnts, *displs;
    MPI_Datatype *types;
    int *wcnts, *wdispls;
} bufs_t;

static long long val(int rank, int i, int iter)
{
    return 1000 * iter + 10 * rank + i;
}

/* Fill the inputs for round `iter` and clear the outputs. */
static void fill(bufs_t *b, int iter)
{
    int size = b->size, rank = b->rank;
    b->iter = iter;
    for (int i = 0; i < N; i++) {
        b->src[i] = val(rank, i, iter);
        b->dig[i] = rank + 1;
        b->bc[i] = rank == b->root ? val(b->root, i, iter) : -1;
        b->red[i] = b->redcat[i] = b->ar[i] = b->arcat[i] = b->sc[i] = b->ex[i] = -1;
        b->arip[i] = rank + 1;
        b->sct[i] = -1;
        b->rs_r[i] = -1;
    }
    for (int i = 0; i < N * size; i++) {
        b->gat[i] = b->gatv[i] = b->ag[i] = b->agv[i] = -1;
        b->scat[i] = val(rank, i, iter);
        b->a2a_s[i] = val(rank, i, iter);
        b->a2a_r[i] = b->a2av_r[i] = b->a2aw_r[i] = -1;
        b->rs_s[i] = val(rank, i, iter);
        b->rsb_r[i] = -1;
    }
}

/* Start (or create, persistent) all the collectives; returns how many requests. */
static int post(bufs_t *b, MPI_Op cat, int persistent, MPI_Request *r)
{
    int n = 0, rc = MPI_SUCCESS, root = b->root;
    MPI_Comm w = MPI_COMM_WORLD;
    MPI_Info in = MPI_INFO_NULL;
    MPI_Datatype ll = MPI_LONG_LONG;
#define P(icall, pcall)                                                                            \
    do {                                                                                           \
        rc = persistent ? (pcall) : (icall);                                                       \
        MTEST_CHECK(rc == MPI_SUCCESS, "post %d rc %d", n, rc);                                    \
        n++;                                                                                       \
    } while (0)
    P(MPI_Ibarrier(w, &r[n]), MPI_Barrier_init(w, in, &r[n]));
    P(MPI_Ibcast(b->bc, N, ll, root, w, &r[n]), MPI_Bcast_init(b->bc, N, ll, root, w, in, &r[n]));
    P(MPI_Ireduce(b->src, b->red, N, ll, MPI_SUM, root, w, &r[n]),
      MPI_Reduce_init(b->src, b->red, N, ll, MPI_SUM, root, w, in, &r[n]));
    P(MPI_Ireduce_c(b->dig, b->redcat, N, ll, cat, root, w, &r[n]),
      MPI_Reduce_init_c(b->dig, b->redcat, N, ll, cat, root, w, in, &r[n]));
    P(MPI_Iallreduce(b->src, b->ar, N, ll, MPI_SUM, w, &r[n]),
      MPI_Allreduce_init(b->src, b->ar, N, ll, MPI_SUM, w, in, &r[n]));
    P(MPI_Iallreduce_c(b->dig, b->arcat, N, ll, cat, w, &r[n]),
      MPI_Allreduce_init_c(b->dig, b->arcat, N, ll, cat, w, in, &r[n]));
    P(MPI_Iallreduce(MPI_IN_PLACE, b->arip, N, ll, cat, w, &r[n]),
      MPI_Allreduce_init(MPI_IN_PLACE, b->arip, N, ll, cat, w, in, &r[n]));
    P(MPI_Iscan(b->dig, b->sc, N, ll, cat, w, &r[n]),
      MPI_Scan_init(b->dig, b->sc, N, ll, cat, w, in, &r[n]));
    P(MPI_Iexscan_c(b->src, b->ex, N, ll, MPI_SUM, w, &r[n]),
      MPI_Exscan_init_c(b->src, b->ex, N, ll, MPI_SUM, w, in, &r[n]));
    P(MPI_Igather(b->src, N, ll, b->gat, N, ll, root, w, &r[n]),
      MPI_Gather_init(b->src, N, ll, b->gat, N, ll, root, w, in, &r[n]));
    P(MPI_Igatherv(b->src, N, ll, b->gatv, b->cnts, b->displs, ll, root, w, &r[n]),
      MPI_Gatherv_init(b->src, N, ll, b->gatv, b->cnts, b->displs, ll, root, w, in, &r[n]));
    P(MPI_Iscatter(b->scat, N, ll, b->sct, N, ll, root, w, &r[n]),
      MPI_Scatter_init(b->scat, N, ll, b->sct, N, ll, root, w, in, &r[n]));
    P(MPI_Iallgather(b->src, N, ll, b->ag, N, ll, w, &r[n]),
      MPI_Allgather_init(b->src, N, ll, b->ag, N, ll, w, in, &r[n]));
    P(MPI_Iallgatherv(b->src, N, ll, b->agv, b->cnts, b->displs, ll, w, &r[n]),
      MPI_Allgatherv_init(b->src, N, ll, b->agv, b->cnts, b->displs, ll, w, in, &r[n]));
    P(MPI_Ialltoall(b->a2a_s, N, ll, b->a2a_r, N, ll, w, &r[n]),
      MPI_Alltoall_init(b->a2a_s, N, ll, b->a2a_r, N, ll, w, in, &r[n]));
    P(MPI_Ialltoallv(b->a2a_s, b->cnts, b->displs, ll, b->a2av_r, b->cnts, b->displs, ll, w, &r[n]),
      MPI_Alltoallv_init(b->a2a_s, b->cnts, b->displs, ll, b->a2av_r, b->cnts, b->displs, ll, w, in,
                         &r[n]));
    P(MPI_Ialltoallw(b->a2a_s, b->wcnts, b->wdispls, b->types, b->a2aw_r, b->wcnts, b->wdispls,
                     b->types, w, &r[n]),
      MPI_Alltoallw_init(b->a2a_s, b->wcnts, b->wdispls, b->types, b->a2aw_r, b->wcnts, b->wdispls,
                         b->types, w, in, &r[n]));
    P(MPI_Ireduce_scatter(b->rs_s, b->rs_r, b->cnts, ll, MPI_SUM, w, &r[n]),
      MPI_Reduce_scatter_init(b->rs_s, b->rs_r, b->cnts, ll, MPI_SUM, w, in, &r[n]));
    P(MPI_Ireduce_scatter_block_c(b->rs_s, b->rsb_r, N, ll, MPI_SUM, w, &r[n]),
      MPI_Reduce_scatter_block_init_c(b->rs_s, b->rsb_r, N, ll, MPI_SUM, w, in, &r[n]));
#undef P
    return n;
}

static int check(bufs_t *b)
{
    int size = b->size, rank = b->rank, root = b->root, it = b->iter, e0 = mtest_error_count();
    for (int i = 0; i < N; i++) {
        long long sum = 0, pre = 0;
        for (int q = 0; q < size; q++)
            sum += val(q, i, it);
        for (int q = 0; q < rank; q++)
            pre += val(q, i, it);
        MTEST_CHECK(b->bc[i] == val(root, i, it), "bcast [%d]=%lld", i, b->bc[i]);
        if (rank == root) {
            MTEST_CHECK(b->red[i] == sum, "reduce [%d]=%lld want %lld", i, b->red[i], sum);
        }
        MTEST_CHECK(b->ar[i] == sum, "allreduce [%d]=%lld want %lld", i, b->ar[i], sum);
        if (rank == root)
            MTEST_CHECK(b->redcat[i] == b->arcat[i], "reduce(cat) [%d]=%lld allreduce %lld", i,
                        b->redcat[i], b->arcat[i]);
        MTEST_CHECK(b->arip[i] == digits(0, size - 1), "allreduce in place [%d]=%lld want %lld", i,
                    b->arip[i], digits(0, size - 1));
        if (rank > 0)
            MTEST_CHECK(b->ex[i] == pre, "exscan [%d]=%lld want %lld", i, b->ex[i], pre);
        MTEST_CHECK(b->sct[i] == val(root, rank * N + i, it), "scatter [%d]=%lld", i, b->sct[i]);
        long long rs = 0;
        for (int q = 0; q < size; q++)
            rs += val(q, rank * N + i, it);
        MTEST_CHECK(b->rs_r[i] == rs, "reduce_scatter [%d]=%lld want %lld", i, b->rs_r[i], rs);
        MTEST_CHECK(b->rsb_r[i] == rs, "reduce_scatter_block [%d]=%lld want %lld", i, b->rsb_r[i],
                    rs);
    }
    for (int i = 0; i < N; i++) {
        MTEST_CHECK(b->arcat[i] == digits(0, size - 1), "allreduce(cat) [%d]=%lld", i, b->arcat[i]);
        MTEST_CHECK(b->sc[i] == digits(0, rank), "scan(cat) [%d]=%lld", i, b->sc[i]);
    }
    for (int q = 0; q < size; q++) {
        for (int i = 0; i < N; i++) {
            long long want = val(q, i, it);
            if (rank == root) {
                MTEST_CHECK(b->gat[q * N + i] == want, "gather [%d][%d]", q, i);
                MTEST_CHECK(b->gatv[q * N + i] == want, "gatherv [%d][%d]", q, i);
            }
            MTEST_CHECK(b->ag[q * N + i] == want, "allgather [%d][%d]", q, i);
            MTEST_CHECK(b->agv[q * N + i] == want, "allgatherv [%d][%d]", q, i);
            long long a2a = val(q, rank * N + i, it);
            MTEST_CHECK(b->a2a_r[q * N + i] == a2a, "alltoall [%d][%d]=%lld want %lld", q, i,
                        b->a2a_r[q * N + i], a2a);
            MTEST_CHECK(b->a2av_r[q * N + i] == a2a, "alltoallv [%d][%d]", q, i);
            MTEST_CHECK(b->a2aw_r[q * N + i] == a2a, "alltoallw [%d][%d]", q, i);
        }
    }
    return mtest_error_count() - e0;
}

int main(int argc, char **argv)
{
    bufs_t b;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &b.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b.size);
    int size = b.size;
    MPI_Op cat;
    MPI_Op_create(concat, 0, &cat);
    size_t all = (size_t)(N * size);
    b.gat = mtest_calloc(all, sizeof(long long));
    b.gatv = mtest_calloc(all, sizeof(long long));
    b.scat = mtest_calloc(all, sizeof(long long));
    b.ag = mtest_calloc(all, sizeof(long long));
    b.agv = mtest_calloc(all, sizeof(long long));
    b.a2a_s = mtest_calloc(all, sizeof(long long));
    b.a2a_r = mtest_calloc(all, sizeof(long long));
    b.a2av_r = mtest_calloc(all, sizeof(long long));
    b.a2aw_r = mtest_calloc(all, sizeof(long long));
    b.rs_s = mtest_calloc(all, sizeof(long long));
    b.rsb_r = mtest_calloc(all, sizeof(long long));
    b.cnts = mtest_calloc((size_t)size, sizeof(int));
    b.displs = mtest_calloc((size_t)size, sizeof(int));
    b.wcnts = mtest_calloc((size_t)size, sizeof(int));
    b.wdispls = mtest_calloc((size_t)size, sizeof(int));
    b.types = mtest_calloc((size_t)size, sizeof(MPI_Datatype));
    for (int q = 0; q < size; q++) {
        b.cnts[q] = N;
        b.displs[q] = q * N;
        b.wcnts[q] = N;
        b.wdispls[q] = q * N * (int)sizeof(long long);
        b.types[q] = MPI_LONG_LONG;
    }
    MPI_Request r[NREQ];
    for (int root = 0; root < size; root++) {
        b.root = root;
        fill(&b, 0);
        int n = post(&b, cat, 0, r);
        MTEST_CHECK(MPI_Waitall(n, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
        for (int i = 0; i < n; i++)
            MTEST_CHECK(r[i] == MPI_REQUEST_NULL, "request %d not freed", i);
        MTEST_CHECK(check(&b) == 0, "non-blocking, root %d", root);
    }
    /* Persistent: created once, started with new data three times. */
    b.root = size - 1;
    fill(&b, 0);
    int n = post(&b, cat, 1, r);
    for (int it = 1; it <= 3; it++) {
        fill(&b, it);
        MTEST_CHECK(MPI_Startall(n, r) == MPI_SUCCESS, "startall");
        MTEST_CHECK(MPI_Waitall(n, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "waitall");
        MTEST_CHECK(check(&b) == 0, "persistent, round %d", it);
    }
    for (int i = 0; i < n; i++) {
        MTEST_CHECK(r[i] != MPI_REQUEST_NULL, "persistent request %d freed", i);
        MPI_Request_free(&r[i]);
    }
    MPI_Op_free(&cat);
    free(b.gat), free(b.gatv), free(b.scat), free(b.ag), free(b.agv), free(b.a2a_s);
    free(b.a2a_r), free(b.a2av_r), free(b.a2aw_r), free(b.rs_s), free(b.rsb_r);
    free(b.cnts), free(b.displs), free(b.wcnts), free(b.wdispls), free(b.types);
    return mtest_finalize(0);
}
