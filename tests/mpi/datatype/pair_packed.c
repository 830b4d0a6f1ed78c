/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pair types with padding (MPI_DOUBLE_INT, MPI_SHORT_INT, MPI_LONG_DOUBLE_INT) match any
 * type of the same signature (MPI-5.0 3.3): a struct of their two members, a contiguous type
 * of them, and MPI_BYTE by size. Their size, extent and true extent; MPI_Pack_size and
 * MPI_Pack; MPI_Status_set_elements of an odd number of elements (a pair and a half) read back
 * by MPI_Get_elements, with MPI_Get_count undefined; point-to-point in every direction (blocking,
 * immediate, persistent, matched probe, Sendrecv_replace, a large message) with MPI_Get_count and
 * MPI_Get_elements; Bcast, Gather, Allgather and Alltoall with different types on different ranks;
 * MINLOC and MAXLOC reductions (blocking, immediate, Scan, Reduce_scatter_block, a contiguous type
 * of pairs on one rank against the pair type on the others, many items); a user operation sees its
 * items as they lie in memory. Runs on two or more processes.
 */
#include "mtest.h"

#include "pair_types.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define N     5
#define LARGE 100000

/* A struct type of a value of type `v` and an int at the given offsets, resized to `extent`:
 * the signature of a pair type, with its C struct's layout. */
static MPI_Datatype pair_struct(MPI_Datatype v, MPI_Aint v_off, MPI_Aint i_off, MPI_Aint extent)
{
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {v_off, i_off};
    MPI_Datatype types[2] = {v, MPI_INT}, t, r;
    MPI_Type_create_struct(2, bl, disp, types, &t);
    MPI_Type_create_resized(t, 0, extent, &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

static MPI_Datatype double_int_struct(void)
{
    return pair_struct(MPI_DOUBLE, offsetof(struct double_int, v), offsetof(struct double_int, i),
                       sizeof(struct double_int));
}

static MPI_Datatype short_int_struct(void)
{
    return pair_struct(MPI_SHORT, offsetof(struct short_int, v), offsetof(struct short_int, i),
                       sizeof(struct short_int));
}

static void fill_di(struct double_int *a, int n, int seed)
{
    memset(a, 0, sizeof(*a) * (size_t)n);
    for (int k = 0; k < n; k++) {
        a[k].v = seed * 100.0 + k + 0.5;
        a[k].i = seed * 1000 + k;
    }
}

static int check_di(const struct double_int *a, int n, int seed, const char *what)
{
    for (int k = 0; k < n; k++)
        if (!MTEST_CHECK(a[k].v == seed * 100.0 + k + 0.5 && a[k].i == seed * 1000 + k,
                         "%s: item %d is (%g, %d), expected (%g, %d)", what, k, a[k].v, a[k].i,
                         seed * 100.0 + k + 0.5, seed * 1000 + k))
            return 0;
    return 1;
}

static void sizes(void)
{
    int size;
    MPI_Aint lb, extent, tlb, textent;
    MPI_Type_size(MPI_DOUBLE_INT, &size);
    MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent);
    MPI_Type_get_true_extent(MPI_DOUBLE_INT, &tlb, &textent);
    MTEST_CHECK(
        size == 12 && extent == (MPI_Aint)sizeof(struct double_int) && tlb == 0 && textent == 12,
        "MPI_DOUBLE_INT: size %d extent %ld true extent %ld", size, (long)extent, (long)textent);
    MPI_Type_size(MPI_SHORT_INT, &size);
    MPI_Type_get_true_extent(MPI_SHORT_INT, &tlb, &textent);
    MTEST_CHECK(size == 6 && textent == (MPI_Aint)sizeof(struct short_int),
                "MPI_SHORT_INT: size %d true extent %ld", size, (long)textent);
    MPI_Type_size(MPI_LONG_DOUBLE_INT, &size);
    MPI_Type_get_true_extent(MPI_LONG_DOUBLE_INT, &tlb, &textent);
    MTEST_CHECK(size == (int)(sizeof(long double) + sizeof(int)) &&
                    textent == (MPI_Aint)(sizeof(long double) + sizeof(int)),
                "MPI_LONG_DOUBLE_INT: size %d true extent %ld", size, (long)textent);

    /* MPI_Pack writes the size of each item, and the packed bytes unpack through a struct */
    struct double_int a[N], b[N];
    char packed[256];
    int pos = 0, psize = 0;
    fill_di(a, N, 1);
    MPI_Pack_size(N, MPI_DOUBLE_INT, MPI_COMM_WORLD, &psize);
    MPI_Pack(a, N, MPI_DOUBLE_INT, packed, sizeof(packed), &pos, MPI_COMM_WORLD);
    MTEST_CHECK(pos == 12 * N && psize >= pos, "MPI_Pack wrote %d bytes, Pack_size %d", pos, psize);
    MPI_Datatype st = double_int_struct();
    memset(b, 0, sizeof(b));
    pos = 0;
    MPI_Unpack(packed, sizeof(packed), &pos, b, N, st, MPI_COMM_WORLD);
    check_di(b, N, 1, "MPI_Unpack through the struct");
    MPI_Type_free(&st);

    /* a pair and a half, set in a status and read back */
    MPI_Status status;
    int count = 0, elements = 0;
    MPI_Status_set_elements(&status, MPI_DOUBLE_INT, 3);
    MPI_Get_count(&status, MPI_DOUBLE_INT, &count);
    MPI_Get_elements(&status, MPI_DOUBLE_INT, &elements);
    MTEST_CHECK(count == MPI_UNDEFINED && elements == 3,
                "3 elements of MPI_DOUBLE_INT: count %d, elements %d", count, elements);
}

static void point_to_point(int rank)
{
    MPI_Datatype st = double_int_struct(), contig, sst = short_int_struct();
    MPI_Type_contiguous(N, MPI_DOUBLE_INT, &contig);
    MPI_Type_commit(&contig);
    struct double_int a[N], b[N];
    MPI_Status status;
    int count;
    if (rank == 0) {
        fill_di(a, N, 1);
        MPI_Send(a, N, MPI_DOUBLE_INT, 1, 1, MPI_COMM_WORLD); /* to a struct */
        fill_di(a, N, 2);
        MPI_Send(a, N, st, 1, 2, MPI_COMM_WORLD); /* from a struct */
        fill_di(a, N, 3);
        MPI_Send(a, N, MPI_DOUBLE_INT, 1, 3, MPI_COMM_WORLD); /* to bytes */
        fill_di(a, N, 4);
        MPI_Send(a, 1, contig, 1, 4, MPI_COMM_WORLD); /* from a contiguous type of pairs */
        MPI_Request r;
        fill_di(a, N, 5);
        MPI_Isend(a, N, MPI_DOUBLE_INT, 1, 5, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        fill_di(a, N, 6);
        MPI_Send_init(a, N, MPI_DOUBLE_INT, 1, 6, MPI_COMM_WORLD, &r);
        for (int k = 0; k < 2; k++) {
            MPI_Start(&r);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        MPI_Request_free(&r);
        fill_di(a, N, 7);
        MPI_Send(a, N, st, 1, 7, MPI_COMM_WORLD);
    } else if (rank == 1) {
        memset(b, 0, sizeof(b));
        MPI_Recv(b, N, st, 0, 1, MPI_COMM_WORLD, &status);
        check_di(b, N, 1, "MPI_DOUBLE_INT received as a struct");
        MPI_Get_count(&status, st, &count);
        MTEST_CHECK(count == N, "struct count %d", count);
        memset(b, 0, sizeof(b));
        MPI_Recv(b, N, MPI_DOUBLE_INT, 0, 2, MPI_COMM_WORLD, &status);
        check_di(b, N, 2, "a struct received as MPI_DOUBLE_INT");
        MPI_Get_count(&status, MPI_DOUBLE_INT, &count);
        MTEST_CHECK(count == N, "MPI_DOUBLE_INT count %d", count);
        MPI_Get_elements(&status, MPI_DOUBLE_INT, &count);
        MTEST_CHECK(count == 2 * N, "MPI_DOUBLE_INT elements %d", count);
        char raw[256];
        MPI_Recv(raw, sizeof(raw), MPI_BYTE, 0, 3, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_BYTE, &count);
        MTEST_CHECK(count == 12 * N, "MPI_DOUBLE_INT as bytes: %d, expected %d", count, 12 * N);
        double v;
        int i;
        memcpy(&v, raw + 12 * 2, sizeof(v));
        memcpy(&i, raw + 12 * 2 + 8, sizeof(i));
        MTEST_CHECK(v == 302.5 && i == 3002, "third packed item (%g, %d)", v, i);
        memset(b, 0, sizeof(b));
        MPI_Recv(b, N, MPI_DOUBLE_INT, 0, 4, MPI_COMM_WORLD, &status);
        check_di(b, N, 4, "a contiguous type received as MPI_DOUBLE_INT");
        MPI_Request r;
        memset(b, 0, sizeof(b));
        MPI_Irecv(b, N, st, 0, 5, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, &status);
        check_di(b, N, 5, "MPI_Isend of MPI_DOUBLE_INT");
        MPI_Recv_init(b, N, st, 0, 6, MPI_COMM_WORLD, &r);
        for (int k = 0; k < 2; k++) {
            memset(b, 0, sizeof(b));
            MPI_Start(&r);
            MPI_Wait(&r, &status);
            check_di(b, N, 6, "persistent MPI_DOUBLE_INT");
        }
        MPI_Request_free(&r);
        MPI_Message m;
        MPI_Mprobe(0, 7, MPI_COMM_WORLD, &m, &status);
        MPI_Get_count(&status, MPI_DOUBLE_INT, &count);
        MTEST_CHECK(count == N, "probed count %d", count);
        memset(b, 0, sizeof(b));
        MPI_Mrecv(b, N, MPI_DOUBLE_INT, &m, &status);
        check_di(b, N, 7, "MPI_Mrecv of MPI_DOUBLE_INT");
    }

    /* Sendrecv_replace between ranks 0 and 1, one side a struct */
    if (rank < 2) {
        fill_di(a, N, 10 + rank);
        MPI_Sendrecv_replace(a, N, rank == 0 ? MPI_DOUBLE_INT : st, 1 - rank, 8, 1 - rank, 8,
                             MPI_COMM_WORLD, &status);
        check_di(a, N, 11 - rank, "MPI_Sendrecv_replace");
    }

    /* a large message (streamed or rendezvous): MPI_SHORT_INT against its struct */
    struct short_int *big = mtest_calloc(LARGE, sizeof(*big));
    if (rank == 0) {
        for (int k = 0; k < LARGE; k++)
            big[k] = (struct short_int){(short)(k % 30000), k};
        MPI_Send(big, LARGE, MPI_SHORT_INT, 1, 9, MPI_COMM_WORLD);
        MPI_Recv(big, LARGE, MPI_SHORT_INT, 1, 10, MPI_COMM_WORLD, &status);
        int bad = 0;
        for (int k = 0; k < LARGE; k++)
            bad += big[k].v != (short)(k % 20000) || big[k].i != -k;
        MTEST_CHECK(bad == 0, "%d of %d MPI_SHORT_INT items from a struct wrong", bad, LARGE);
    } else if (rank == 1) {
        MPI_Recv(big, LARGE, sst, 0, 9, MPI_COMM_WORLD, &status);
        MPI_Get_count(&status, MPI_BYTE, &count);
        MTEST_CHECK(count == 6 * LARGE, "MPI_SHORT_INT bytes %d, expected %d", count, 6 * LARGE);
        int bad = 0;
        for (int k = 0; k < LARGE; k++)
            bad += big[k].v != (short)(k % 30000) || big[k].i != k;
        MTEST_CHECK(bad == 0, "%d of %d MPI_SHORT_INT items wrong as a struct", bad, LARGE);
        for (int k = 0; k < LARGE; k++)
            big[k] = (struct short_int){(short)(k % 20000), -k};
        MPI_Send(big, LARGE, sst, 0, 10, MPI_COMM_WORLD);
    }
    free(big);
    MPI_Type_free(&st);
    MPI_Type_free(&sst);
    MPI_Type_free(&contig);
}

static void moving_collectives(int rank, int size)
{
    MPI_Datatype st = double_int_struct();
    /* odd ranks use the struct, even ones the pair type */
    MPI_Datatype mine = rank % 2 ? st : MPI_DOUBLE_INT;
    struct double_int a[N], *all = mtest_calloc((size_t)size * N, sizeof(*all));
    for (int root = 0; root < size; root++) {
        if (rank == root)
            fill_di(a, N, 20 + root);
        else
            memset(a, 0, sizeof(a));
        MPI_Bcast(a, N, mine, root, MPI_COMM_WORLD);
        check_di(a, N, 20 + root, "MPI_Bcast");
    }
    fill_di(a, N, 30 + rank);
    MPI_Gather(a, N, mine, all, N, rank % 2 ? MPI_DOUBLE_INT : st, 0, MPI_COMM_WORLD);
    if (rank == 0)
        for (int p = 0; p < size; p++)
            check_di(all + p * N, N, 30 + p, "MPI_Gather");
    memset(all, 0, sizeof(*all) * (size_t)size * N);
    MPI_Allgather(a, N, mine, all, N, mine, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        check_di(all + p * N, N, 30 + p, "MPI_Allgather");
    struct double_int *out = mtest_calloc((size_t)size, sizeof(*out));
    for (int p = 0; p < size; p++)
        out[p] = (struct double_int){rank * 10.0 + p, rank * 100 + p};
    memset(all, 0, sizeof(*all) * (size_t)size);
    MPI_Alltoall(out, 1, mine, all, 1, rank % 2 ? MPI_DOUBLE_INT : st, MPI_COMM_WORLD);
    for (int p = 0; p < size; p++)
        MTEST_CHECK(all[p].v == p * 10.0 + rank && all[p].i == p * 100 + rank,
                    "MPI_Alltoall from %d: (%g, %d)", p, all[p].v, all[p].i);
    MPI_Request r;
    if (rank == 0)
        fill_di(a, N, 40);
    else
        memset(a, 0, sizeof(a));
    MPI_Ibcast(a, N, mine, 0, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    check_di(a, N, 40, "MPI_Ibcast");
    free(out);
    free(all);
    MPI_Type_free(&st);
}

static int user_calls, user_bad;

/* MINLOC by hand, checking that the items lie as the C struct does */
static void user_minloc(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    struct double_int *x = in, *y = inout;
    user_calls++;
    user_bad += *dt != MPI_DOUBLE_INT;
    for (int k = 0; k < *len; k++) {
        user_bad += x[k].i < 0 || x[k].i > 1000000 || y[k].i < 0 || y[k].i > 1000000;
        if (x[k].v < y[k].v || (x[k].v == y[k].v && x[k].i < y[k].i))
            y[k] = x[k];
    }
}

static void reductions(int rank, int size)
{
    enum { M = 1000 };
    struct double_int *in = mtest_calloc(M, sizeof(*in)), *res = mtest_calloc(M, sizeof(*res));
    /* item k's minimum sits on rank k % size, its maximum on the rank after */
    for (int k = 0; k < M; k++)
        in[k] = (struct double_int){rank == k % size         ? -1.0 - k
                                    : rank == (k + 1) % size ? 1e6 + k
                                                             : (double)rank,
                                    rank};
    for (int n = 1; n <= M; n *= 10) {
        MPI_Allreduce(in, res, n, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
        int bad = 0;
        for (int k = 0; k < n; k++)
            bad += res[k].v != -1.0 - k || res[k].i != k % size;
        MTEST_CHECK(bad == 0, "MPI_Allreduce MINLOC of %d: %d wrong", n, bad);
        MPI_Allreduce(in, res, n, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
        bad = 0;
        for (int k = 0; k < n; k++)
            bad += size > 1 && (res[k].v != 1e6 + k || res[k].i != (k + 1) % size);
        MTEST_CHECK(bad == 0, "MPI_Allreduce MAXLOC of %d: %d wrong", n, bad);
    }
    /* rank 0 a contiguous type of N pairs, the others N pairs (Manifold takes a predefined
     * operation on a derived type of one basic type; MPICH refuses it) */
    MPI_Datatype contig;
    MPI_Type_contiguous(N, MPI_DOUBLE_INT, &contig);
    MPI_Type_commit(&contig);
    for (int root = 0; root < size && mtest_is_manifold(); root++) {
        memset(res, 0, sizeof(*res) * N);
        MPI_Reduce(in, res, rank == 0 ? 1 : N, rank == 0 ? contig : MPI_DOUBLE_INT, MPI_MINLOC,
                   root, MPI_COMM_WORLD);
        for (int k = 0; rank == root && k < N; k++)
            MTEST_CHECK(res[k].v == -1.0 - k && res[k].i == k % size,
                        "MPI_Reduce MINLOC (root %d) item %d: (%g, %d)", root, k, res[k].v,
                        res[k].i);
    }
    MPI_Type_free(&contig);
    MPI_Request r;
    MPI_Iallreduce(in, res, M, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD, &r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    int bad = 0;
    for (int k = 0; k < M; k++)
        bad += res[k].v != -1.0 - k || res[k].i != k % size;
    MTEST_CHECK(bad == 0, "MPI_Iallreduce MINLOC: %d wrong", bad);
    /* Scan: the prefix minimum of the ranks' values */
    struct double_int one = {(double)((rank * 7) % 5), rank}, pre;
    MPI_Scan(&one, &pre, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    struct double_int want = {1e300, 0};
    for (int p = 0; p <= rank; p++)
        if ((p * 7) % 5 < want.v)
            want = (struct double_int){(double)((p * 7) % 5), p};
    MTEST_CHECK(pre.v == want.v && pre.i == want.i, "MPI_Scan MINLOC (%g, %d), expected (%g, %d)",
                pre.v, pre.i, want.v, want.i);
    /* Reduce_scatter_block: N items a rank */
    struct double_int *blocks = mtest_calloc((size_t)size * N, sizeof(*blocks));
    for (int k = 0; k < size * N; k++)
        blocks[k] = (struct double_int){rank == k % size ? -(double)k : (double)k, rank};
    MPI_Reduce_scatter_block(blocks, res, N, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    for (int k = 0; k < N; k++) {
        int g = rank * N + k;
        MTEST_CHECK(res[k].v == (g == 0 ? 0.0 : -(double)g) && res[k].i == g % size,
                    "MPI_Reduce_scatter_block item %d: (%g, %d)", g, res[k].v, res[k].i);
    }
    free(blocks);
    /* MPI_SHORT_INT and MPI_LONG_DOUBLE_INT */
    struct short_int si[N], so[N];
    struct long_double_int li[N], lo[N];
    for (int k = 0; k < N; k++) {
        si[k] = (struct short_int){(short)(rank == k % size ? 100 + k : rank), rank};
        li[k] = (struct long_double_int){rank == k % size ? 1e30L + k : (long double)rank, rank};
    }
    MPI_Allreduce(si, so, N, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    MPI_Allreduce(li, lo, N, MPI_LONG_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD);
    for (int k = 0; k < N; k++) {
        MTEST_CHECK(so[k].v == 100 + k && so[k].i == k % size, "MPI_SHORT_INT MAXLOC %d: (%d, %d)",
                    k, so[k].v, so[k].i);
        MTEST_CHECK(lo[k].v == 1e30L + k && lo[k].i == k % size,
                    "MPI_LONG_DOUBLE_INT MAXLOC %d: (%Lg, %d)", k, lo[k].v, lo[k].i);
    }
    /* a user operation gets native items and the pair type */
    MPI_Op op;
    MPI_Op_create(user_minloc, 1, &op);
    MPI_Allreduce(in, res, M, MPI_DOUBLE_INT, op, MPI_COMM_WORLD);
    bad = 0;
    for (int k = 0; k < M; k++)
        bad += res[k].v != -1.0 - k || res[k].i != k % size;
    MTEST_CHECK(bad == 0 && user_bad == 0, "user MINLOC: %d wrong, %d bad calls of %d", bad,
                user_bad, user_calls);
    MPI_Op_free(&op);
    /* MPI_Reduce_local works on the items as they lie */
    struct double_int x[2] = {{1.0, 5}, {4.0, 6}}, y[2] = {{2.0, 7}, {3.0, 8}};
    MPI_Reduce_local(x, y, 2, MPI_DOUBLE_INT, MPI_MINLOC);
    MTEST_CHECK(y[0].v == 1.0 && y[0].i == 5 && y[1].v == 3.0 && y[1].i == 8,
                "MPI_Reduce_local MINLOC: (%g, %d) (%g, %d)", y[0].v, y[0].i, y[1].v, y[1].i);
    free(in);
    free(res);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    sizes();
    if (size >= 2)
        point_to_point(rank);
    moving_collectives(rank, size);
    reductions(rank, size);
    return mtest_finalize(0);
}
