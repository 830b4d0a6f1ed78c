/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective checking mode (MANIFOLD_COLL_CHECK=1, set by the testlist): calls whose arguments
 * disagree across the ranks are reported on every rank, with the right error class and a
 * message naming the mismatch, instead of hanging or corrupting memory, and the communicator
 * keeps working. Mismatches covered: different collectives (also blocking vs non-blocking),
 * root, predefined operation, user operation commutativity, reduction type and count, the
 * broadcast signature (type, fewer and more items), Gatherv, Alltoallv and Reduce_scatter
 * counts, a non-blocking and a persistent collective. Matching calls (every family, MPI_IN_PLACE
 * where allowed, and signatures written differently: a pair type against its parts) still
 * pass and compute the right results. Erroneous programs cannot run on
 * another MPI, so without the checking mode only the matching calls run.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static int checking;

static void user_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Every rank must get `cls`, and a message containing `what`. */
static void expect(int rc, int cls, const char *func, const char *what)
{
    if (!MTEST_CHECK_ERR(rc, cls, func))
        return;
    char text[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, text, &len);
    MTEST_CHECK(strstr(text, what) != NULL, "%s: message '%s' lacks '%s'", func, text, what);
    mtest_debug("%s\n", text);
}

static void matching(int rank, int size)
{
    int n = size, *a = calloc((size_t)n * 4, sizeof(int)), *b = calloc((size_t)n * 4, sizeof(int));
    int *cnt = malloc((size_t)n * sizeof(int)), *dsp = malloc((size_t)n * sizeof(int));
    MPI_Datatype *types = malloc((size_t)n * sizeof(MPI_Datatype));
    for (int i = 0; i < n; i++) {
        cnt[i] = 1;
        dsp[i] = i;
        types[i] = MPI_INT;
        a[i] = rank * 100 + i;
    }
    int x = rank == 1 % size ? 42 : 0;
    MTEST_CHECK(MPI_Bcast(&x, 1, MPI_INT, 1 % size, MPI_COMM_WORLD) == MPI_SUCCESS && x == 42,
                "bcast: %d", x);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK(sum == size * (size - 1) / 2, "allreduce: %d", sum);
    sum = rank;
    MPI_Reduce(rank == 0 ? MPI_IN_PLACE : &rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MTEST_CHECK(rank != 0 || sum == size * (size - 1) / 2, "reduce: %d", sum);
    MPI_Gather(&rank, 1, MPI_INT, b, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MTEST_CHECK(rank != 0 || b[size - 1] == size - 1, "gather");
    MPI_Gatherv(&rank, 1, MPI_INT, b, cnt, dsp, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatter(a, 1, MPI_INT, &x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MTEST_CHECK(x == rank, "scatter: %d", x);
    b[rank] = rank;
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, b, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK(b[size - 1] == size - 1, "allgather in place");
    MPI_Allgatherv(&rank, 1, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    MPI_Alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK(b[0] == rank, "alltoall: %d", b[0]);
    MPI_Alltoallv(a, cnt, dsp, MPI_INT, b, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        dsp[i] = i * (int)sizeof(int);
    MPI_Alltoallw(a, cnt, dsp, types, b, cnt, dsp, types, MPI_COMM_WORLD);
    MTEST_CHECK(b[size - 1] == (size - 1) * 100 + rank, "alltoallw: %d", b[size - 1]);
    MPI_Reduce_scatter(a, &x, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce_scatter_block(a, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Scan(&rank, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK(x == rank * (rank + 1) / 2, "scan: %d", x);
    MPI_Exscan(&rank, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request req;
    x = rank == 0 ? 7 : 0;
    MPI_Ibcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MTEST_CHECK(x == 7, "ibcast: %d", x);
    MPI_Allreduce_init(&rank, &sum, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    for (int it = 0; it < 2; it++) {
        sum = -1;
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MTEST_CHECK(sum == size - 1, "allreduce_init: %d", sum);
    }
    MPI_Request_free(&req);
    /* The same signature written two ways: 1 x MPI_2INT is 2 x MPI_INT, 1 x MPI_FLOAT_INT a
     * struct of MPI_FLOAT and MPI_INT (MPI-4.1 6.9.4). */
    int two[2] = {rank == 0 ? 7 : -1, rank == 0 ? 8 : -1};
    int rc = MPI_Bcast(two, rank == 0 ? 1 : 2, rank == 0 ? MPI_2INT : MPI_INT, 0, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS && two[0] == 7 && two[1] == 8,
                "bcast MPI_2INT as 2 x MPI_INT: %d", rc);
    struct {
        float f;
        int i;
    } fi = {rank == 0 ? 1.5f : 0.0f, rank == 0 ? 3 : 0};
    int lens[2] = {1, 1};
    MPI_Aint disp[2] = {0, (MPI_Aint)((char *)&fi.i - (char *)&fi)};
    MPI_Datatype parts[2] = {MPI_FLOAT, MPI_INT}, fi_struct;
    MPI_Type_create_struct(2, lens, disp, parts, &fi_struct);
    MPI_Type_commit(&fi_struct);
    rc = MPI_Bcast(&fi, 1, rank == 0 ? MPI_FLOAT_INT : fi_struct, 0, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS && fi.f == 1.5f && fi.i == 3,
                "bcast MPI_FLOAT_INT as a struct: %d", rc);
    MPI_Type_free(&fi_struct);
    free(types);
    free(dsp);
    free(cnt);
    free(b);
    free(a);
}

static void mismatches(int rank, int size)
{
    MPI_Comm comm = MPI_COMM_WORLD;
    int buf[8] = {0}, out[8] = {0}, *cnt = malloc((size_t)size * sizeof(int)),
        *dsp = malloc((size_t)size * sizeof(int)), *big = calloc((size_t)size * 8, sizeof(int));
    for (int i = 0; i < size; i++) {
        cnt[i] = 1;
        dsp[i] = 2 * i;
    }
    int rc;

    /* Different collectives. */
    if (rank == 0)
        rc = MPI_Bcast(buf, 1, MPI_INT, 0, comm);
    else
        rc = MPI_Reduce(buf, out, 1, MPI_INT, MPI_SUM, 0, comm);
    expect(rc, MPI_ERR_OTHER, rank == 0 ? "MPI_Bcast" : "MPI_Reduce",
           "collective mismatch: rank 0 called MPI_Bcast, rank 1 called MPI_Reduce");
    rc = rank == size - 1 ? MPI_Barrier(comm) : MPI_Allreduce(buf, out, 1, MPI_INT, MPI_SUM, comm);
    expect(rc, MPI_ERR_OTHER, rank == size - 1 ? "MPI_Barrier" : "MPI_Allreduce",
           "called MPI_Barrier");
    MPI_Request req = MPI_REQUEST_NULL;
    rc = rank == 0 ? MPI_Ibcast(buf, 1, MPI_INT, 0, comm, &req)
                   : MPI_Bcast(buf, 1, MPI_INT, 0, comm);
    expect(rc, MPI_ERR_OTHER, rank == 0 ? "MPI_Ibcast" : "MPI_Bcast", "called MPI_Ibcast");
    MTEST_CHECK(req == MPI_REQUEST_NULL, "a request was created despite the mismatch");

    /* Root. */
    rc = MPI_Bcast(buf, 1, MPI_INT, rank % 2, comm);
    expect(rc, MPI_ERR_ROOT, "MPI_Bcast",
           "root mismatch: rank 0 passed root 0, rank 1 passed root 1");
    rc = MPI_Gather(buf, 1, MPI_INT, big, 1, MPI_INT, rank == size - 1 ? 1 : 0, comm);
    expect(rc, MPI_ERR_ROOT, "MPI_Gather", "root mismatch");

    /* Operations. */
    rc = MPI_Allreduce(buf, out, 1, MPI_INT, rank == 0 ? MPI_SUM : MPI_MAX, comm);
    expect(rc, MPI_ERR_OP, "MPI_Allreduce",
           "operation mismatch: rank 0 passed MPI_SUM, rank 1 passed MPI_MAX");
    MPI_Op op;
    MPI_Op_create(user_fn, rank != 1, &op);
    rc = MPI_Reduce(buf, out, 1, MPI_INT, op, 0, comm);
    expect(rc, MPI_ERR_OP, "MPI_Reduce", "rank 1 passed a non-commutative user-defined operation");
    MPI_Op_free(&op);

    /* Reduction type and count. */
    rc = MPI_Allreduce(buf, out, 2, rank == 0 ? MPI_INT : MPI_FLOAT, MPI_SUM, comm);
    expect(rc, MPI_ERR_TYPE, "MPI_Allreduce", "type signature mismatch");
    rc = MPI_Scan(buf, out, rank == 0 ? 2 : 3, MPI_INT, MPI_SUM, comm);
    expect(rc, MPI_ERR_COUNT, "MPI_Scan",
           "rank 0 passed 2 x MPI_INT (8 bytes), rank 1 passed 3 x MPI_INT");

    /* Broadcast signatures: type, fewer and more items than expected. */
    rc = MPI_Bcast(buf, 2, rank == 0 ? MPI_INT : MPI_FLOAT, 0, comm);
    expect(rc, MPI_ERR_TYPE, "MPI_Bcast",
           "rank 0 sends 2 x MPI_INT (8 bytes) to rank 1, which expects 2 x MPI_FLOAT");
    rc = MPI_Bcast(buf, rank == 0 ? 3 : 4, MPI_INT, 0, comm);
    expect(rc, MPI_ERR_COUNT, "MPI_Bcast", "which expects 4 x MPI_INT");
    rc = MPI_Bcast_c(buf, rank == 0 ? 4 : 3, MPI_INT, 0, comm);
    expect(rc, MPI_ERR_TRUNCATE, "MPI_Bcast_c", "which expects 3 x MPI_INT");
    /* a derived type against a predefined one: a difference in size is one of count */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    rc = MPI_Bcast(big, 2, rank == 0 ? MPI_INT : pair, 0, comm);
    expect(rc, MPI_ERR_COUNT, "MPI_Bcast", "rank 0 sends 2 x MPI_INT (8 bytes)");
    MPI_Type_free(&pair);

    /* Per-pair layouts. */
    int mine = rank == 1 ? 2 : 1;
    rc = MPI_Gatherv(buf, mine, MPI_INT, big, cnt, dsp, MPI_INT, 0, comm);
    expect(rc, MPI_ERR_TRUNCATE, "MPI_Gatherv", "rank 1 sends 2 x MPI_INT (8 bytes) to rank 0");
    int *scnt = malloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++)
        scnt[i] = rank == size - 1 && i == 0 ? 2 : 1;
    rc = MPI_Alltoallv(big, scnt, dsp, MPI_INT, big + 2 * size, cnt, dsp, MPI_INT, comm);
    expect(rc, MPI_ERR_TRUNCATE, "MPI_Alltoallv", "to rank 0, which expects 1 x MPI_INT");
    /* Same total, different split. */
    cnt[0] = rank == 0 ? 2 : 1;
    cnt[1] = rank == 0 ? 0 : 1;
    rc = MPI_Reduce_scatter(big, out, cnt, MPI_INT, MPI_SUM, comm);
    expect(rc, MPI_ERR_COUNT, "MPI_Reduce_scatter", "the counts array of rank 1 differs");
    cnt[0] = cnt[1] = 1;

    /* Non-blocking and persistent forms are checked when they are called. */
    rc = MPI_Ibcast(buf, 1, MPI_INT, rank % 2, comm, &req);
    expect(rc, MPI_ERR_ROOT, "MPI_Ibcast", "root mismatch");
    rc = MPI_Allreduce_init(buf, out, 1, MPI_INT, rank == 0 ? MPI_SUM : MPI_PROD, comm,
                            MPI_INFO_NULL, &req);
    expect(rc, MPI_ERR_OP, "MPI_Allreduce_init", "passed MPI_PROD");
    free(scnt);
    free(big);
    free(dsp);
    free(cnt);
}

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const char *env = getenv("MANIFOLD_COLL_CHECK");
    checking = mtest_is_manifold() && env != NULL && strcmp(env, "1") == 0;

    matching(rank, size);
    if (checking && size > 1)
        mismatches(rank, size);
    /* Still works after the errors. */
    matching(rank, size);
    return mtest_finalize(errs);
}
