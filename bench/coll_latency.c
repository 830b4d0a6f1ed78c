/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Latency of the blocking collectives on MPI_COMM_WORLD (any number of processes, at least 2):
 * Barrier, Bcast, Reduce, Allreduce, Gather, Scatter, Allgather, Alltoall, Reduce_scatter_block
 * and Scan, over message sizes from 8 B to 4 MiB by default. The size is the buffer of Bcast,
 * Reduce, Allreduce and Scan, and the block one rank contributes or receives for Gather,
 * Scatter, Allgather, Alltoall and Reduce_scatter_block (as in OSU's benchmarks). Reductions
 * sum MPI_INT32_T. For every size one checked call runs first (every rank verifies what it
 * got), then untimed warm-up calls (timed too, to cap the iterations so that one loop takes
 * about 20 ms), then --reps timed loops, each after an MPI_Barrier; a loop's number is the
 * slowest rank's average time per call, and the median over the loops is reported in
 * microseconds. Sizes are the outer loop: at each size every collective is measured with its
 * bounds (below), their timed loops taking turns. Standard MPI only, so it builds with any
 * MPI.
 *
 * Next to every collective the benchmark times the compositions a user could write instead,
 * which are the self-consistency bounds run_coll.py checks (every loop body is what the user's
 * loop would be, on the same buffers and sizes as the parts): "Reduce+Bcast" (bound of
 * Allreduce), "Gather+Bcast" (Allgather; the Bcast sends the nprocs gathered blocks),
 * "Reduce+Scatter" (Reduce_scatter_block: the Reduce of all nprocs blocks into a third buffer,
 * which the root then scatters) and, for every collective but Barrier, "<name> 2 x n/2": two
 * calls of half the size, the second one on the second half of each buffer. Timing the
 * composition matters: in a loop of Reduce alone the root runs calls ahead of the others,
 * while after Reduce then Bcast every process waits for the Bcast data before its next call.
 *
 * --offset BYTES (0-4095, default 0) moves the three buffers that far past a page boundary, to
 * see whether the buffers' placement against the library's own (4 KiB aliasing) matters.
 *
 * --ab NAME=VALUE also times every collective (not its bounds) with the MPI_T control variable
 * NAME set to VALUE (an integer or one of the variable's enumeration items) during its loops,
 * reported as "<collective> [NAME=VALUE]". Its loops take turns with the others, so the two
 * settings meet the same states of the machine within one launch: differences of a few per
 * cent show, where launches of two builds differ by 20 % and more on this machine. The
 * variable must exist and be writable at run time (Manifold's MANIFOLD_COLL_*, e.g.
 * MANIFOLD_COLL_REDUCE=binomial or MANIFOLD_COLL_PAIR_WHOLE=on); one the library reads only
 * when it sets a communicator up (MANIFOLD_COLL_SHM_MEDIUM, _SHM_CROWDED) changes nothing here.
 */
#include "bench_util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define COLL_NAME      "coll_latency"
#define COLL_COUNT     13
#define COLL_LOOP_US   20000.0 /* target length of one timed loop, in microseconds */
#define COLL_MIN_ITERS 4

typedef enum {
    COLL_BARRIER,
    COLL_BCAST,
    COLL_REDUCE,
    COLL_ALLREDUCE,
    COLL_GATHER,
    COLL_SCATTER,
    COLL_ALLGATHER,
    COLL_ALLTOALL,
    COLL_REDUCE_SCATTER_BLOCK,
    COLL_SCAN,
    COLL_REDUCE_BCAST,   /* Reduce to 0, then Bcast of the result: bound of Allreduce */
    COLL_GATHER_BCAST,   /* Gather to 0, then Bcast of all blocks: bound of Allgather */
    COLL_REDUCE_SCATTER, /* Reduce of all blocks to 0, then Scatter: bound of RSB */
} coll_kind_t;

static const char *const coll_names[COLL_COUNT] = {
    "Barrier",        "Bcast",        "Reduce",
    "Allreduce",      "Gather",       "Scatter",
    "Allgather",      "Alltoall",     "Reduce_scatter_block",
    "Scan",           "Reduce+Bcast", "Gather+Bcast",
    "Reduce+Scatter",
};

/* What is measured: each collective, then the compositions that bound it. */
typedef struct coll_op {
    coll_kind_t kind;
    int halves; /* 1: two calls of half the size, on the two halves of the buffers */
} coll_op_t;

static const coll_op_t coll_ops[] = {
    {COLL_BARRIER, 0},        {COLL_BCAST, 0},
    {COLL_BCAST, 1},          {COLL_REDUCE, 0},
    {COLL_REDUCE, 1},         {COLL_ALLREDUCE, 0},
    {COLL_REDUCE_BCAST, 0},   {COLL_ALLREDUCE, 1},
    {COLL_GATHER, 0},         {COLL_GATHER, 1},
    {COLL_SCATTER, 0},        {COLL_SCATTER, 1},
    {COLL_ALLGATHER, 0},      {COLL_GATHER_BCAST, 0},
    {COLL_ALLGATHER, 1},      {COLL_ALLTOALL, 0},
    {COLL_ALLTOALL, 1},       {COLL_REDUCE_SCATTER_BLOCK, 0},
    {COLL_REDUCE_SCATTER, 0}, {COLL_REDUCE_SCATTER_BLOCK, 1},
    {COLL_SCAN, 0},           {COLL_SCAN, 1},
};

#define COLL_NOPS ((int)(sizeof(coll_ops) / sizeof(coll_ops[0])))

/* The entry after the group that starts at coll_ops[k]: a collective with the compositions
 * and the two calls of half the size that follow it. */
static int group_end(int k)
{
    int end = k + 1;

    while (end < COLL_NOPS && (coll_ops[end].halves || coll_ops[end].kind >= COLL_REDUCE_BCAST))
        end++;
    return end;
}

/* What every call needs: the buffers (each nprocs x max_size bytes; tbuf holds the reduced
 * vector of Reduce+Scatter) and the job's shape. */
typedef struct coll_ctx {
    coll_kind_t kind;
    int halves;
    int variant; /* 1: with the control variable of --ab set */
    unsigned char *sbuf;
    unsigned char *rbuf;
    unsigned char *tbuf;
    int rank;
    int nprocs;
} coll_ctx_t;

/* One result with the operation it belongs to. */
typedef struct coll_result {
    coll_op_t op;
    int variant;
    mf_bench_result_t res;
} coll_result_t;

static int is_reduction(coll_kind_t kind)
{
    return kind == COLL_REDUCE || kind == COLL_ALLREDUCE || kind == COLL_REDUCE_SCATTER_BLOCK ||
           kind == COLL_SCAN || kind == COLL_REDUCE_BCAST || kind == COLL_REDUCE_SCATTER;
}

/* Whether the size is one rank's block (the send or receive buffer holds nprocs of them). */
static int is_block(coll_kind_t kind)
{
    return (kind >= COLL_GATHER && kind <= COLL_REDUCE_SCATTER_BLOCK) ||
           kind == COLL_GATHER_BCAST || kind == COLL_REDUCE_SCATTER;
}

/* Bytes one call with size bytes uses of the send and of the receive buffer: where the second
 * half-size call of "2 x n/2" starts. */
static size_t send_span(const coll_ctx_t *ctx, size_t size)
{
    int many = ctx->kind == COLL_SCATTER || ctx->kind == COLL_ALLTOALL ||
               ctx->kind == COLL_REDUCE_SCATTER_BLOCK || ctx->kind == COLL_REDUCE_SCATTER;

    return many ? size * (size_t)ctx->nprocs : size;
}

static size_t recv_span(const coll_ctx_t *ctx, size_t size)
{
    int many = ctx->kind == COLL_GATHER || ctx->kind == COLL_ALLGATHER ||
               ctx->kind == COLL_ALLTOALL || ctx->kind == COLL_GATHER_BCAST;

    return many ? size * (size_t)ctx->nprocs : size;
}

/* --ab: the control variable, its value for the variant's loops and the value it had. */
static struct {
    const char *spec; /* NAME=VALUE as given */
    MPI_T_cvar_handle handle;
    int value, saved;
} ab;

static void op_name(const coll_op_t *op, int variant, char *name, size_t len)
{
    if (variant)
        snprintf(name, len, "%s [%s]", coll_names[op->kind], ab.spec);
    else
        snprintf(name, len, op->halves ? "%s 2 x n/2" : "%s", coll_names[op->kind]);
}

static void ab_write(int value)
{
    mf_bench_mpi_ok(MPI_T_cvar_write(ab.handle, &value), "MPI_T_cvar_write");
}

/* Finds the variable of `spec` (NAME=VALUE) and reads its current value; 0 and a message on
 * rank 0 when it cannot be used. */
static int ab_setup(const char *spec, int rank)
{
    char name[256];
    const char *eq = strchr(spec, '=');
    int index, count, verbosity, bind, scope, name_len = sizeof(name), provided;
    MPI_Datatype dt;
    MPI_T_enum e;

    if (eq == NULL || eq == spec || (size_t)(eq - spec) >= sizeof(name)) {
        if (rank == 0)
            fprintf(stderr, "%s: --ab takes NAME=VALUE\n", COLL_NAME);
        return 0;
    }
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = '\0';
    mf_bench_mpi_ok(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), "MPI_T_init_thread");
    if (MPI_T_cvar_get_index(name, &index) != MPI_SUCCESS ||
        MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &dt, &e, NULL, NULL, &bind,
                            &scope) != MPI_SUCCESS ||
        dt != MPI_INT || scope == MPI_T_SCOPE_CONSTANT || scope == MPI_T_SCOPE_READONLY ||
        MPI_T_cvar_handle_alloc(index, NULL, &ab.handle, &count) != MPI_SUCCESS || count != 1) {
        if (rank == 0)
            fprintf(stderr, "%s: --ab: no integer control variable %s writable at run time\n",
                    COLL_NAME, name);
        MPI_T_finalize();
        return 0;
    }
    char *end;
    long v = strtol(eq + 1, &end, 10);
    int found = eq[1] != '\0' && *end == '\0';
    int items = 0;
    if (!found && e != MPI_T_ENUM_NULL && MPI_T_enum_get_info(e, &items, NULL, NULL) == MPI_SUCCESS)
        for (int i = 0; i < items && !found; i++) {
            char item[128];
            int item_len = sizeof(item), value;
            if (MPI_T_enum_get_item(e, i, &value, item, &item_len) == MPI_SUCCESS &&
                strcmp(item, eq + 1) == 0) {
                v = value;
                found = 1;
            }
        }
    if (!found) {
        if (rank == 0)
            fprintf(stderr, "%s: --ab: %s is not a value of %s\n", COLL_NAME, eq + 1, name);
        MPI_T_cvar_handle_free(&ab.handle);
        MPI_T_finalize();
        return 0;
    }
    mf_bench_mpi_ok(MPI_T_cvar_read(ab.handle, &ab.saved), "MPI_T_cvar_read");
    ab.value = (int)v;
    ab.spec = spec;
    return 1;
}

/* One call of the collective with size bytes (per block for the block collectives). */
static void coll_call_at(const coll_ctx_t *ctx, size_t size, unsigned char *s, unsigned char *r)
{
    int bytes = (int)size;
    int ints = (int)(size / sizeof(int32_t));
    int p = ctx->nprocs;
    MPI_Comm comm = MPI_COMM_WORLD;

    switch (ctx->kind) {
    case COLL_BARRIER: mf_bench_mpi_ok(MPI_Barrier(comm), "MPI_Barrier"); break;
    case COLL_BCAST: mf_bench_mpi_ok(MPI_Bcast(s, bytes, MPI_BYTE, 0, comm), "MPI_Bcast"); break;
    case COLL_REDUCE:
        mf_bench_mpi_ok(MPI_Reduce(s, r, ints, MPI_INT32_T, MPI_SUM, 0, comm), "MPI_Reduce");
        break;
    case COLL_ALLREDUCE:
        mf_bench_mpi_ok(MPI_Allreduce(s, r, ints, MPI_INT32_T, MPI_SUM, comm), "MPI_Allreduce");
        break;
    case COLL_GATHER:
        mf_bench_mpi_ok(MPI_Gather(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, 0, comm), "MPI_Gather");
        break;
    case COLL_SCATTER:
        mf_bench_mpi_ok(MPI_Scatter(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, 0, comm),
                        "MPI_Scatter");
        break;
    case COLL_ALLGATHER:
        mf_bench_mpi_ok(MPI_Allgather(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, comm),
                        "MPI_Allgather");
        break;
    case COLL_ALLTOALL:
        mf_bench_mpi_ok(MPI_Alltoall(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, comm), "MPI_Alltoall");
        break;
    case COLL_REDUCE_SCATTER_BLOCK:
        mf_bench_mpi_ok(MPI_Reduce_scatter_block(s, r, ints, MPI_INT32_T, MPI_SUM, comm),
                        "MPI_Reduce_scatter_block");
        break;
    case COLL_SCAN:
        mf_bench_mpi_ok(MPI_Scan(s, r, ints, MPI_INT32_T, MPI_SUM, comm), "MPI_Scan");
        break;
    case COLL_REDUCE_BCAST:
        mf_bench_mpi_ok(MPI_Reduce(s, r, ints, MPI_INT32_T, MPI_SUM, 0, comm), "MPI_Reduce");
        mf_bench_mpi_ok(MPI_Bcast(r, ints, MPI_INT32_T, 0, comm), "MPI_Bcast");
        break;
    case COLL_GATHER_BCAST:
        mf_bench_mpi_ok(MPI_Gather(s, bytes, MPI_BYTE, r, bytes, MPI_BYTE, 0, comm), "MPI_Gather");
        mf_bench_mpi_ok(MPI_Bcast(r, bytes * p, MPI_BYTE, 0, comm), "MPI_Bcast");
        break;
    case COLL_REDUCE_SCATTER:
        mf_bench_mpi_ok(MPI_Reduce(s, ctx->tbuf, ints * p, MPI_INT32_T, MPI_SUM, 0, comm),
                        "MPI_Reduce");
        mf_bench_mpi_ok(MPI_Scatter(ctx->tbuf, ints, MPI_INT32_T, r, ints, MPI_INT32_T, 0, comm),
                        "MPI_Scatter");
        break;
    }
}

/* One iteration of the measured operation: the collective, or two calls of half the size. */
static void coll_call(const coll_ctx_t *ctx, size_t size)
{
    if (!ctx->halves) {
        coll_call_at(ctx, size, ctx->sbuf, ctx->rbuf);
        return;
    }
    coll_call_at(ctx, size / 2, ctx->sbuf, ctx->rbuf);
    coll_call_at(ctx, size / 2, ctx->sbuf + send_span(ctx, size / 2),
                 ctx->rbuf + recv_span(ctx, size / 2));
}

/* The value rank puts at int index i of its send buffer for the reductions. */
static int32_t reduce_input(int rank, size_t i)
{
    return (int32_t)(i % 1000003u) + rank + 1;
}

/* The sum of reduce_input over ranks 0 .. upto. */
static int32_t reduce_sum(int upto, size_t i)
{
    return (int32_t)(upto + 1) * (int32_t)(i % 1000003u) + (upto + 1) * (upto + 2) / 2;
}

static void check_ints(const int32_t *got, size_t n, size_t first, int upto, coll_kind_t kind)
{
    for (size_t i = 0; i < n; i++) {
        if (got[i] != reduce_sum(upto, first + i)) {
            fprintf(stderr, "%s: MPI_%s gave %d at element %zu, expected %d\n", COLL_NAME,
                    coll_names[kind], (int)got[i], first + i, (int)reduce_sum(upto, first + i));
            mf_bench_abort();
        }
    }
}

static void fill_reduction(const coll_ctx_t *ctx, size_t size)
{
    size_t total = send_span(ctx, size);
    int32_t *s = (int32_t *)ctx->sbuf;

    for (size_t i = 0; i < total / sizeof(int32_t); i++)
        s[i] = reduce_input(ctx->rank, i);
}

static void verify_reduction(const coll_ctx_t *ctx, size_t size)
{
    size_t n = size / sizeof(int32_t);
    const int32_t *r = (const int32_t *)ctx->rbuf;
    int last = ctx->nprocs - 1;

    switch (ctx->kind) {
    case COLL_REDUCE:
        if (ctx->rank == 0)
            check_ints(r, n, 0, last, ctx->kind);
        break;
    case COLL_ALLREDUCE:
    case COLL_REDUCE_BCAST: check_ints(r, n, 0, last, ctx->kind); break;
    case COLL_REDUCE_SCATTER_BLOCK:
    case COLL_REDUCE_SCATTER: check_ints(r, n, n * (size_t)ctx->rank, last, ctx->kind); break;
    case COLL_SCAN: check_ints(r, n, 0, ctx->rank, ctx->kind); break;
    default: break;
    }
}

/* Seeds of the byte patterns: block b sent by rank r carries seed r * nprocs + b + 1. */
static unsigned seed_of(const coll_ctx_t *ctx, int from, int block)
{
    return (unsigned)(from * ctx->nprocs + block + 1);
}

static void fill_blocks(const coll_ctx_t *ctx, size_t size)
{
    int p = ctx->nprocs;

    switch (ctx->kind) {
    case COLL_BCAST:
        if (ctx->rank == 0)
            mf_bench_fill(ctx->sbuf, size, seed_of(ctx, 0, 0));
        else
            memset(ctx->sbuf, 0, size);
        break;
    case COLL_GATHER:
    case COLL_ALLGATHER:
    case COLL_GATHER_BCAST: mf_bench_fill(ctx->sbuf, size, seed_of(ctx, ctx->rank, 0)); break;
    case COLL_SCATTER:
    case COLL_ALLTOALL:
        for (int b = 0; b < p; b++)
            mf_bench_fill(ctx->sbuf + (size_t)b * size, size, seed_of(ctx, ctx->rank, b));
        break;
    default: break;
    }
    memset(ctx->rbuf, 0, size * (size_t)p);
}

static void verify_blocks(const coll_ctx_t *ctx, size_t size)
{
    int p = ctx->nprocs;

    switch (ctx->kind) {
    case COLL_BCAST: mf_bench_verify(ctx->sbuf, size, seed_of(ctx, 0, 0), COLL_NAME); break;
    case COLL_GATHER:
        for (int b = 0; ctx->rank == 0 && b < p; b++)
            mf_bench_verify(ctx->rbuf + (size_t)b * size, size, seed_of(ctx, b, 0), COLL_NAME);
        break;
    case COLL_ALLGATHER:
    case COLL_GATHER_BCAST:
        for (int b = 0; b < p; b++)
            mf_bench_verify(ctx->rbuf + (size_t)b * size, size, seed_of(ctx, b, 0), COLL_NAME);
        break;
    case COLL_SCATTER:
        mf_bench_verify(ctx->rbuf, size, seed_of(ctx, 0, ctx->rank), COLL_NAME);
        break;
    case COLL_ALLTOALL:
        for (int b = 0; b < p; b++)
            mf_bench_verify(ctx->rbuf + (size_t)b * size, size, seed_of(ctx, b, ctx->rank),
                            COLL_NAME);
        break;
    default: break;
    }
}

/* One call whose result every rank checks, so a library that computes or delivers wrong data
 * is caught before its numbers are printed. Each half of "2 x n/2" is filled and checked as a
 * call of its own on its part of the buffers. */
static void checked_call(const coll_ctx_t *ctx, size_t size)
{
    coll_ctx_t part[2] = {*ctx, *ctx};
    int nparts = ctx->halves ? 2 : 1;
    size_t psize = ctx->halves ? size / 2 : size;

    part[1].sbuf += send_span(ctx, psize);
    part[1].rbuf += recv_span(ctx, psize);
    for (int i = 0; i < nparts; i++) {
        if (is_reduction(ctx->kind))
            fill_reduction(&part[i], psize);
        else
            fill_blocks(&part[i], psize);
    }
    coll_call(ctx, size);
    for (int i = 0; i < nparts; i++) {
        if (is_reduction(ctx->kind))
            verify_reduction(&part[i], psize);
        else
            verify_blocks(&part[i], psize);
    }
}

/* One timed loop; returns the slowest rank's average time per call in microseconds (the same
 * number on every rank). */
static double timed_loop(const coll_ctx_t *ctx, size_t size, int iters)
{
    double start;
    double mine;
    double slowest = 0.0;

    if (ctx->variant)
        ab_write(ab.value);
    mf_bench_mpi_ok(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    start = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        coll_call(ctx, size);
    mine = (MPI_Wtime() - start) * 1e6 / iters;
    if (ctx->variant)
        ab_write(ab.saved);
    mf_bench_mpi_ok(MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD),
                    "MPI_Allreduce");
    return slowest;
}

/* The checked call and the warm-up of one operation; returns the iterations of its timed
 * loops. */
static int prepare(const coll_ctx_t *ctx, const mf_bench_opts_t *opts, size_t size)
{
    /* Budget by the bytes one rank moves: a block collective moves nprocs blocks. */
    size_t moved = ctx->kind == COLL_BARRIER ? 0 : size;
    int iters;
    int warmup;

    if (is_block(ctx->kind))
        moved *= (size_t)ctx->nprocs;
    iters = mf_bench_iters_for_size(opts, moved, 1);
    warmup = mf_bench_warmup_for_size(opts, iters);
    if (opts->warmup > 0) {
        if (ctx->variant)
            ab_write(ab.value);
        checked_call(ctx, size);
        if (ctx->variant)
            ab_write(ab.saved);
    }
    if (warmup > 1) {
        /* Time the warm-up too and cap the loop at about COLL_LOOP_US: an oversubscribed run
         * can be a thousand times slower than the byte budget assumes. */
        double per_call = timed_loop(ctx, size, warmup - 1);
        double cap = COLL_LOOP_US / (per_call > 0.0 ? per_call : 1.0);

        if (cap < (double)iters)
            iters = cap > COLL_MIN_ITERS ? (int)cap : COLL_MIN_ITERS;
    }
    return iters;
}

/* A collective, the compositions that bound it and its two calls of half the size at one
 * size: the timed loops take turns (one loop of each per repetition), so that a change of
 * the machine's state during the launch (the host moving the vCPUs, another job) meets the
 * collective and its bounds alike instead of whichever ran in that stretch. n is at most
 * GROUP_MAX; samples holds reps values per operation. */
#define GROUP_MAX 4

static void measure_group(coll_ctx_t *ctx, int n, const mf_bench_opts_t *opts, size_t size,
                          double *samples, coll_result_t *results)
{
    int iters[GROUP_MAX];

    for (int m = 0; m < n; m++)
        iters[m] = prepare(&ctx[m], opts, size);
    for (int r = 0; r < opts->reps; r++)
        for (int m = 0; m < n; m++)
            samples[m * opts->reps + r] = timed_loop(&ctx[m], size, iters[m]);
    double placement = mf_bench_placement_ns(MPI_COMM_WORLD);
    for (int m = 0; m < n; m++) {
        results[m].res.size = size;
        results[m].res.iters = iters[m];
        results[m].res.placement_ns = placement;
        mf_bench_summarize(&samples[m * opts->reps], opts->reps, &results[m].res);
    }
}

static void print_result(FILE *out, const coll_result_t *r)
{
    char name[320];

    op_name(&r->op, r->variant, name, sizeof(name));
    fprintf(out,
            "\"collective\": \"%s\", \"size\": %zu, \"iters\": %d, \"median\": %.6g, "
            "\"min\": %.6g, \"max\": %.6g",
            name, r->res.size, r->res.iters, r->res.median, r->res.min, r->res.max);
    if (r->res.placement_ns > 0)
        fprintf(out, ", \"placement_ns\": %.0f", r->res.placement_ns);
}

static int write_json(const mf_bench_opts_t *opts, int nprocs, const coll_result_t *results, int n)
{
    char library[MPI_MAX_LIBRARY_VERSION_STRING];
    FILE *out;

    if (opts->json_path == NULL)
        return 0;
    out = fopen(opts->json_path, "w");
    if (out == NULL) {
        fprintf(stderr, "%s: cannot write %s\n", COLL_NAME, opts->json_path);
        return 1;
    }
    mf_bench_library_version(library);
    fprintf(out,
            "{\n  \"benchmark\": \"%s\",\n  \"metric\": \"latency of one call, slowest "
            "rank, median over timed loops\",\n  \"unit\": \"us\",\n  \"library\": \"",
            COLL_NAME);
    mf_bench_print_json_string(out, library);
    fprintf(out, "\",\n  \"nprocs\": %d,\n  \"reps\": %d,\n  \"warmup\": %d,\n", nprocs, opts->reps,
            opts->warmup);
    fprintf(out, "  \"results\": [\n");
    for (int i = 0; i < n; i++) {
        fprintf(out, "    {");
        print_result(out, &results[i]);
        fprintf(out, "}%s\n", i + 1 < n ? "," : "");
    }
    fprintf(out, "  ]\n}\n");
    if (fclose(out) != 0) {
        fprintf(stderr, "%s: cannot write %s\n", COLL_NAME, opts->json_path);
        return 1;
    }
    return 0;
}

/* --only: a comma-separated list of collective names (as printed, without " 2 x n/2");
 * NULL measures everything. */
static const char *only_list;

static int wanted(const coll_op_t *op)
{
    const char *name = coll_names[op->kind];
    size_t len = strlen(name);

    if (only_list == NULL)
        return 1;
    for (const char *p = only_list; *p != '\0'; p++) {
        if ((p == only_list || p[-1] == ',') && strncmp(p, name, len) == 0 &&
            (p[len] == ',' || p[len] == '\0'))
            return !op->halves;
    }
    return 0;
}

static int run(const mf_bench_opts_t *opts, size_t offset, int rank, int nprocs)
{
    size_t *sizes;
    int nsizes = mf_bench_sizes(opts, &sizes);
    size_t bytes = (opts->max_size > 0 ? opts->max_size : 1) * (size_t)nprocs + offset;
    unsigned char *mem[3] = {mf_bench_alloc(bytes), mf_bench_alloc(bytes), mf_bench_alloc(bytes)};
    coll_ctx_t ctx = {.sbuf = mem[0] + offset,
                      .rbuf = mem[1] + offset,
                      .tbuf = mem[2] + offset,
                      .rank = rank,
                      .nprocs = nprocs};
    coll_result_t *results = calloc((size_t)(2 * COLL_NOPS * nsizes + 1), sizeof(*results));
    double *samples = calloc((size_t)(GROUP_MAX * opts->reps), sizeof(*samples));
    int n = 0;
    int rc;

    if (results == NULL || samples == NULL) {
        fprintf(stderr, "%s: out of memory\n", COLL_NAME);
        mf_bench_abort();
    }
    for (int i = 0; i < nsizes; i++) {
        for (int k = 0; k < COLL_NOPS; k = group_end(k)) {
            coll_ctx_t group[GROUP_MAX];
            int members = 0;
            size_t size = coll_ops[k].kind == COLL_BARRIER ? 0 : sizes[i];

            if (coll_ops[k].kind == COLL_BARRIER && i > 0)
                continue;
            for (int m = k; m < group_end(k); m++) {
                size_t unit = (is_reduction(coll_ops[m].kind) ? sizeof(int32_t) : 1) *
                              (coll_ops[m].halves ? 2 : 1);

                /* Reductions count MPI_INT elements: skip sizes that are not whole elements
                 * (of both halves for "2 x n/2"). */
                if (!wanted(&coll_ops[m]) ||
                    ((coll_ops[m].halves || is_reduction(coll_ops[m].kind)) &&
                     (size == 0 || size % unit != 0)))
                    continue;
                group[members] = ctx;
                group[members].kind = coll_ops[m].kind;
                group[members].halves = coll_ops[m].halves;
                results[n + members].op = coll_ops[m];
                members++;
                if (ab.spec != NULL && m == k) { /* the collective itself, with --ab's setting */
                    group[members] = group[members - 1];
                    group[members].variant = 1;
                    results[n + members].op = coll_ops[m];
                    results[n + members].variant = 1;
                    members++;
                }
            }
            if (members == 0)
                continue;
            measure_group(group, members, opts, size, samples, &results[n]);
            for (int m = 0; m < members && rank == 0; m++) {
                printf("{\"benchmark\": \"%s\", \"unit\": \"us\", \"nprocs\": %d, ", COLL_NAME,
                       nprocs);
                print_result(stdout, &results[n + m]);
                printf("}\n");
            }
            fflush(stdout);
            n += members;
        }
    }
    rc = rank == 0 ? write_json(opts, nprocs, results, n) : 0;
    free(samples);
    free(results);
    for (int i = 0; i < 3; i++)
        free(mem[i]);
    free(sizes);
    return rc;
}

int main(int argc, char **argv)
{
    mf_bench_opts_t opts = {
        .min_size = 8,
        .max_size = 4 << 20,
        .iters = 1000,
        .reps = 5,
        .warmup = 20,
        .window = 1,
        .recv_buffers = 0,
        .byte_budget = 16 << 20,
        .json_path = NULL,
    };
    int rank;
    int nprocs;
    int status = 0;
    long offset = 0;

    mf_bench_mpi_ok(MPI_Init(&argc, &argv), "MPI_Init");
    /* --only, --offset and --ab are this program's own options: take them out before the
     * common ones are parsed. */
    const char *ab_spec = NULL;
    for (int i = 1; i + 1 < argc; i++) {
        const char *value = argv[i + 1];
        if (strcmp(argv[i], "--ab") == 0) {
            ab_spec = value;
        } else if (strcmp(argv[i], "--only") == 0) {
            only_list = value;
        } else if (strcmp(argv[i], "--offset") == 0) {
            char *end;
            offset = strtol(value, &end, 10);
            if (*end != '\0' || offset < 0 || offset > 4095)
                offset = -1;
        } else {
            continue;
        }
        for (int j = i; j + 2 <= argc; j++)
            argv[j] = argv[j + 2];
        argc -= 2;
        i--;
    }
    mf_bench_mpi_ok(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    mf_bench_mpi_ok(MPI_Comm_size(MPI_COMM_WORLD, &nprocs), "MPI_Comm_size");
    if (nprocs < 2) {
        fprintf(stderr, "%s: needs at least 2 processes\n", COLL_NAME);
        status = 1;
    } else if (offset < 0) {
        if (rank == 0)
            fprintf(stderr, "%s: --offset takes a number of bytes from 0 to 4095\n", COLL_NAME);
        status = 2;
    } else if (ab_spec != NULL && !ab_setup(ab_spec, rank)) {
        status = 2;
    } else {
        switch (mf_bench_parse_args(argc, argv, COLL_NAME, rank, &opts)) {
        case MF_BENCH_ARGS_RUN:
            mf_bench_warm_pairs(MPI_COMM_WORLD);
            status = run(&opts, (size_t)offset, rank, nprocs);
            break;
        case MF_BENCH_ARGS_HELP: status = 0; break;
        case MF_BENCH_ARGS_BAD: status = 2; break;
        }
    }
    if (ab.spec != NULL) {
        MPI_T_cvar_handle_free(&ab.handle);
        MPI_T_finalize();
    }
    mf_bench_mpi_ok(MPI_Finalize(), "MPI_Finalize");
    return status;
}
