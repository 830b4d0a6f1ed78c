/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Derived-datatype transfer against packing by hand, between ranks 0 and 1. Three layouts:
 * "vector" (one column of a two-column matrix of doubles, MPI_Type_vector), "indexed" (blocks
 * of 1 to 4 ints with gaps of 1 to 3 ints, MPI_Type_indexed) and "struct" (an array of
 * particles of which the int, a double and a float are sent and a double is not, a resized
 * MPI_Type_create_struct) and "blocks" (eight blocks of an eighth of the payload each, with gaps
 * of half a block, MPI_Type_create_hindexed of bytes: few large blocks). DT_TRANSFER_LAYOUTS
 * (a comma-separated list of names) runs some of them only. For every layout and payload size (8 B
 * to 16 MiB) a ping-pong runs two ways: "derived" sends and receives the layout with its datatype,
 * "manual" copies it into a contiguous buffer with plain loops, sends MPI_BYTE, and the receiver
 * copies it back into its own layout. Both ways move the same payload between the same buffers. A
 * checked warm-up compares every received byte, gaps included, with a reference built by the
 * hand-written loops. Each repetition times the two ways in the order A B B A, so it gives a paired
 * ratio that a drift of the machine's speed during the repetition does not bias. Standard MPI only:
 * the same source builds with any MPI's compiler wrapper.
 */
#include "bench_util.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define PING_TAG       1
#define PONG_TAG       2
#define VECTOR_STRIDE  2 /* doubles per matrix row: the vector sends one of two columns */
#define GAP_SENTINEL   0xa5
#define DEFAULT_MAX_MB 16

static const mf_bench_info_t dt_info = {
    .name = "dt_transfer",
    .metric = "one-way time of a ping-pong, derived datatype vs packing by hand",
    .unit = "us",
    .uses_window = 0,
};

typedef enum {
    LAYOUT_VECTOR,
    LAYOUT_INDEXED,
    LAYOUT_STRUCT,
    LAYOUT_BLOCKS,
    LAYOUT_COUNT
} layout_kind_t;

static const char *const layout_names[LAYOUT_COUNT] = {"vector", "indexed", "struct", "blocks"};

#define BLOCKS_N 8

/* One element of the struct layout: id, x and w are sent, unsent is not. With natural
 * alignment it is 32 bytes holding 16 bytes of payload in three pieces. */
typedef struct particle {
    int id;
    double x;
    float w;
    double unsent;
} particle_t;

/* One layout at one payload size, with its datatype. */
typedef struct layout {
    layout_kind_t kind;
    size_t count;      /* doubles (vector), blocks (indexed) or particles (struct) */
    size_t payload;    /* bytes the layout selects */
    size_t extent;     /* bytes the layout spans */
    int *block_len;    /* indexed: ints per block */
    int *block_disp;   /* indexed: offset of each block, in ints */
    MPI_Datatype type; /* sent type_count times */
    int type_count;
} layout_t;

static size_t max_of(size_t a, size_t b)
{
    return a > b ? a : b;
}

static void *xmalloc(size_t size)
{
    void *p = malloc(size > 0 ? size : 1);

    if (p == NULL) {
        fprintf(stderr, "dt_transfer: out of memory (%zu bytes)\n", size);
        mf_bench_abort();
    }
    return p;
}

static void make_vector(layout_t *l, size_t size)
{
    l->count = max_of(1, size / sizeof(double));
    l->payload = l->count * sizeof(double);
    l->extent = ((l->count - 1) * VECTOR_STRIDE + 1) * sizeof(double);
    mf_bench_mpi_ok(MPI_Type_vector((int)l->count, 1, VECTOR_STRIDE, MPI_DOUBLE, &l->type),
                    "MPI_Type_vector");
    l->type_count = 1;
}

/* Blocks of 1, 2, 3, 4, 1, ... ints, each followed by a gap of 1, 2, 3, 1, ... ints; the last
 * block is shortened so the payload is exactly the requested number of ints. */
static void make_indexed(layout_t *l, size_t size)
{
    size_t ints = max_of(1, size / sizeof(int));
    size_t blocks = 0;
    size_t pos = 0;

    l->block_len = xmalloc(ints * sizeof(int));
    l->block_disp = xmalloc(ints * sizeof(int));
    for (size_t left = ints; left > 0; blocks++) {
        size_t len = 1 + blocks % 4;

        if (len > left)
            len = left;
        l->block_len[blocks] = (int)len;
        l->block_disp[blocks] = (int)pos;
        pos += len + 1 + blocks % 3;
        left -= len;
    }
    l->count = blocks;
    l->payload = ints * sizeof(int);
    l->extent =
        ((size_t)l->block_disp[blocks - 1] + (size_t)l->block_len[blocks - 1]) * sizeof(int);
    mf_bench_mpi_ok(MPI_Type_indexed((int)blocks, l->block_len, l->block_disp, MPI_INT, &l->type),
                    "MPI_Type_indexed");
    l->type_count = 1;
}

static void make_struct(layout_t *l, size_t size)
{
    int lens[3] = {1, 1, 1};
    MPI_Aint disps[3] = {offsetof(particle_t, id), offsetof(particle_t, x),
                         offsetof(particle_t, w)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT};
    MPI_Datatype fields;
    size_t unit = sizeof(int) + sizeof(double) + sizeof(float);

    l->count = max_of(1, size / unit);
    l->payload = l->count * unit;
    l->extent = l->count * sizeof(particle_t);
    mf_bench_mpi_ok(MPI_Type_create_struct(3, lens, disps, types, &fields),
                    "MPI_Type_create_struct");
    mf_bench_mpi_ok(MPI_Type_create_resized(fields, 0, sizeof(particle_t), &l->type),
                    "MPI_Type_create_resized");
    mf_bench_mpi_ok(MPI_Type_free(&fields), "MPI_Type_free");
    l->type_count = (int)l->count;
}

/* BLOCKS_N blocks of size / BLOCKS_N bytes, each but the last followed by a gap of half a block
 * (at least 8 bytes, a multiple of 8). */
static void make_blocks(layout_t *l, size_t size)
{
    size_t len = max_of(1, size / BLOCKS_N);
    size_t gap = max_of(8, (len / 2 + 7) / 8 * 8);
    MPI_Aint disps[BLOCKS_N];

    l->block_len = xmalloc(BLOCKS_N * sizeof(int));
    l->block_disp = xmalloc(BLOCKS_N * sizeof(int));
    for (int b = 0; b < BLOCKS_N; b++) {
        l->block_len[b] = (int)len;
        l->block_disp[b] = (int)((size_t)b * (len + gap));
        disps[b] = l->block_disp[b];
    }
    l->count = BLOCKS_N;
    l->payload = BLOCKS_N * len;
    l->extent = (size_t)l->block_disp[BLOCKS_N - 1] + len;
    mf_bench_mpi_ok(MPI_Type_create_hindexed(BLOCKS_N, l->block_len, disps, MPI_BYTE, &l->type),
                    "MPI_Type_create_hindexed");
    l->type_count = 1;
}

/* Builds and commits the datatype of kind for about size bytes of payload, and checks that
 * the library agrees on the payload's size. */
static void layout_create(layout_kind_t kind, size_t size, layout_t *l)
{
    int type_size = 0;

    memset(l, 0, sizeof(*l));
    l->kind = kind;
    switch (kind) {
    case LAYOUT_VECTOR: make_vector(l, size); break;
    case LAYOUT_INDEXED: make_indexed(l, size); break;
    case LAYOUT_BLOCKS: make_blocks(l, size); break;
    default: make_struct(l, size); break;
    }
    mf_bench_mpi_ok(MPI_Type_commit(&l->type), "MPI_Type_commit");
    mf_bench_mpi_ok(MPI_Type_size(l->type, &type_size), "MPI_Type_size");
    if ((size_t)type_size * (size_t)l->type_count != l->payload) {
        fprintf(stderr, "dt_transfer: %s: MPI_Type_size says %d x %d bytes, expected %zu\n",
                layout_names[kind], type_size, l->type_count, l->payload);
        mf_bench_abort();
    }
}

static void layout_destroy(layout_t *l)
{
    mf_bench_mpi_ok(MPI_Type_free(&l->type), "MPI_Type_free");
    free(l->block_disp);
    free(l->block_len);
}

/* The hand-written copies an application would use instead of a datatype. */
static void layout_pack(const layout_t *l, const void *src, void *packed)
{
    if (l->kind == LAYOUT_VECTOR) {
        const double *in = src;
        double *out = packed;

        for (size_t i = 0; i < l->count; i++)
            out[i] = in[i * VECTOR_STRIDE];
    } else if (l->kind == LAYOUT_BLOCKS) {
        const char *in = src;
        char *out = packed;

        for (size_t b = 0; b < l->count; b++) {
            memcpy(out, in + l->block_disp[b], (size_t)l->block_len[b]);
            out += l->block_len[b];
        }
    } else if (l->kind == LAYOUT_INDEXED) {
        const int *in = src;
        int *out = packed;

        for (size_t b = 0; b < l->count; b++) {
            memcpy(out, in + l->block_disp[b], (size_t)l->block_len[b] * sizeof(int));
            out += l->block_len[b];
        }
    } else {
        const particle_t *in = src;
        char *out = packed;

        for (size_t i = 0; i < l->count; i++) {
            memcpy(out, &in[i].id, sizeof(int));
            memcpy(out + sizeof(int), &in[i].x, sizeof(double));
            memcpy(out + sizeof(int) + sizeof(double), &in[i].w, sizeof(float));
            out += sizeof(int) + sizeof(double) + sizeof(float);
        }
    }
}

static void layout_unpack(const layout_t *l, const void *packed, void *dst)
{
    if (l->kind == LAYOUT_VECTOR) {
        const double *in = packed;
        double *out = dst;

        for (size_t i = 0; i < l->count; i++)
            out[i * VECTOR_STRIDE] = in[i];
    } else if (l->kind == LAYOUT_BLOCKS) {
        const char *in = packed;
        char *out = dst;

        for (size_t b = 0; b < l->count; b++) {
            memcpy(out + l->block_disp[b], in, (size_t)l->block_len[b]);
            in += l->block_len[b];
        }
    } else if (l->kind == LAYOUT_INDEXED) {
        const int *in = packed;
        int *out = dst;

        for (size_t b = 0; b < l->count; b++) {
            memcpy(out + l->block_disp[b], in, (size_t)l->block_len[b] * sizeof(int));
            in += l->block_len[b];
        }
    } else {
        const char *in = packed;
        particle_t *out = dst;

        for (size_t i = 0; i < l->count; i++) {
            memcpy(&out[i].id, in, sizeof(int));
            memcpy(&out[i].x, in + sizeof(int), sizeof(double));
            memcpy(&out[i].w, in + sizeof(int) + sizeof(double), sizeof(float));
            in += sizeof(int) + sizeof(double) + sizeof(float);
        }
    }
}

/* Whether DT_TRANSFER_LAYOUTS (unset: all) names the layout. */
static int layout_wanted(layout_kind_t kind)
{
    const char *list = getenv("DT_TRANSFER_LAYOUTS");
    size_t n = strlen(layout_names[kind]);

    if (list == NULL || *list == '\0')
        return 1;
    for (const char *p = list;; p++) {
        size_t k = strcspn(p, ",");

        if (k == n && strncmp(p, layout_names[kind], n) == 0)
            return 1;
        p += k;
        if (*p == '\0')
            return 0;
    }
}

/* Buffers shared by every layout and size of one run. */
typedef struct dt_ctx {
    int rank;
    size_t extent_max;
    char *sbuf;    /* the layout this rank sends from */
    char *rbuf;    /* the layout this rank receives into */
    char *spacked; /* manual: packed outgoing payload */
    char *rpacked; /* manual: packed incoming payload */
    char *expect;  /* warm-up: what rbuf must hold */
} dt_ctx_t;

typedef enum { METHOD_DERIVED, METHOD_MANUAL, METHOD_COUNT } method_t;

static const char *const method_names[METHOD_COUNT] = {"derived", "manual"};

static void send_layout(const dt_ctx_t *c, const layout_t *l, method_t m, int tag)
{
    int peer = 1 - c->rank;

    if (m == METHOD_DERIVED) {
        mf_bench_mpi_ok(MPI_Send(c->sbuf, l->type_count, l->type, peer, tag, MPI_COMM_WORLD),
                        "MPI_Send");
        return;
    }
    layout_pack(l, c->sbuf, c->spacked);
    mf_bench_mpi_ok(MPI_Send(c->spacked, (int)l->payload, MPI_BYTE, peer, tag, MPI_COMM_WORLD),
                    "MPI_Send");
}

static void recv_layout(const dt_ctx_t *c, const layout_t *l, method_t m, int tag)
{
    int peer = 1 - c->rank;

    if (m == METHOD_DERIVED) {
        mf_bench_mpi_ok(
            MPI_Recv(c->rbuf, l->type_count, l->type, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
            "MPI_Recv");
        return;
    }
    mf_bench_mpi_ok(MPI_Recv(c->rpacked, (int)l->payload, MPI_BYTE, peer, tag, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE),
                    "MPI_Recv");
    layout_unpack(l, c->rpacked, c->rbuf);
}

/* Prepares a checked transfer: the sender's whole layout holds a pattern, the receiver's is
 * set to a sentinel, and expect holds the sentinel with the pattern's payload bytes unpacked
 * into place (built with the hand-written loops, the reference for both methods). */
static void check_prepare(const dt_ctx_t *c, const layout_t *l, unsigned seed, int sending)
{
    if (sending) {
        mf_bench_fill(c->sbuf, l->extent, seed);
        return;
    }
    memset(c->rbuf, GAP_SENTINEL, l->extent);
    memset(c->expect, GAP_SENTINEL, l->extent);
    mf_bench_fill(c->sbuf, l->extent, seed);
    layout_pack(l, c->sbuf, c->spacked);
    layout_unpack(l, c->spacked, c->expect);
}

static void check_received(const dt_ctx_t *c, const layout_t *l, method_t m)
{
    if (memcmp(c->rbuf, c->expect, l->extent) == 0)
        return;
    for (size_t i = 0; i < l->extent; i++) {
        if (c->rbuf[i] != c->expect[i]) {
            fprintf(stderr,
                    "dt_transfer: %s %s, %zu payload bytes: wrong byte at offset %zu of the "
                    "layout (got 0x%02x, expected 0x%02x)\n",
                    layout_names[l->kind], method_names[m], l->payload, i,
                    (unsigned char)c->rbuf[i], (unsigned char)c->expect[i]);
            break;
        }
    }
    mf_bench_abort();
}

/* Untimed round trips whose every received byte (gaps included) is checked on both ranks. */
static void warm_up(const dt_ctx_t *c, const layout_t *l, method_t m, int warmup)
{
    for (int i = 0; i < warmup; i++) {
        unsigned ping = (unsigned)(2 * i) + 17u * (unsigned)m;
        unsigned pong = ping + 1;

        if (c->rank == 0) {
            check_prepare(c, l, ping, 1);
            send_layout(c, l, m, PING_TAG);
            check_prepare(c, l, pong, 0);
            recv_layout(c, l, m, PONG_TAG);
            check_received(c, l, m);
        } else {
            check_prepare(c, l, ping, 0);
            recv_layout(c, l, m, PING_TAG);
            check_received(c, l, m);
            check_prepare(c, l, pong, 1);
            send_layout(c, l, m, PONG_TAG);
        }
    }
}

/* One timed loop; returns the one-way time in microseconds (meaningful on rank 0). */
static double timed_loop(const dt_ctx_t *c, const layout_t *l, method_t m, int iters)
{
    double start;

    mf_bench_mpi_ok(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
    start = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (c->rank == 0) {
            send_layout(c, l, m, PING_TAG);
            recv_layout(c, l, m, PONG_TAG);
        } else {
            recv_layout(c, l, m, PING_TAG);
            send_layout(c, l, m, PONG_TAG);
        }
    }
    return (MPI_Wtime() - start) * 1e6 / (2.0 * iters);
}

/* The numbers of one layout at one size. */
typedef struct dt_result {
    layout_kind_t kind;
    size_t size;
    size_t payload;
    int iters;
    mf_bench_result_t time[METHOD_COUNT]; /* one-way us */
    mf_bench_result_t speedup;            /* manual time / derived time, paired per rep */
} dt_result_t;

static void measure(const dt_ctx_t *c, const mf_bench_opts_t *opts, layout_kind_t kind, size_t size,
                    double *samples, dt_result_t *res)
{
    layout_t l;
    int reps = opts->reps;

    layout_create(kind, size, &l);
    res->kind = kind;
    res->size = size;
    res->payload = l.payload;
    res->iters = mf_bench_iters_for_size(opts, l.payload, 2);
    for (int m = 0; m < METHOD_COUNT; m++)
        warm_up(c, &l, (method_t)m, mf_bench_warmup_for_size(opts, res->iters));
    for (int r = 0; r < reps; r++) {
        /* Each repetition times the methods in the order A B B A (A alternating between
         * repetitions) and averages each method's two loops: a machine that speeds up or slows
         * down during the repetition (frequency, the other core's load, the VM's state) then
         * weighs on both alike, and neither method is always the one that runs first after the
         * other, whatever the number of repetitions. */
        int first = r % METHOD_COUNT, second = 1 - first;
        double t_first = timed_loop(c, &l, (method_t)first, res->iters);
        double t_second = timed_loop(c, &l, (method_t)second, res->iters);
        t_second += timed_loop(c, &l, (method_t)second, res->iters);
        t_first += timed_loop(c, &l, (method_t)first, res->iters);
        samples[first * reps + r] = t_first / 2;
        samples[second * reps + r] = t_second / 2;
        samples[METHOD_COUNT * reps + r] =
            samples[METHOD_MANUAL * reps + r] / samples[METHOD_DERIVED * reps + r];
    }
    for (int m = 0; m < METHOD_COUNT; m++)
        mf_bench_summarize(samples + m * reps, reps, &res->time[m]);
    mf_bench_summarize(samples + METHOD_COUNT * reps, reps, &res->speedup);
    layout_destroy(&l);
}

static void print_result(FILE *out, const dt_result_t *r)
{
    const mf_bench_result_t *d = &r->time[METHOD_DERIVED];
    const mf_bench_result_t *m = &r->time[METHOD_MANUAL];

    fprintf(out,
            "{\"benchmark\": \"dt_transfer\", \"layout\": \"%s\", \"size\": %zu, "
            "\"payload\": %zu, \"iters\": %d, \"unit\": \"us\", "
            "\"derived\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}, "
            "\"manual\": {\"median\": %.6g, \"min\": %.6g, \"max\": %.6g}, "
            "\"speedup\": {\"median\": %.4f, \"min\": %.4f, \"max\": %.4f}}",
            layout_names[r->kind], r->size, r->payload, r->iters, d->median, d->min, d->max,
            m->median, m->min, m->max, r->speedup.median, r->speedup.min, r->speedup.max);
}

static int write_json(const mf_bench_opts_t *opts, const dt_result_t *results, int n)
{
    FILE *out;

    if (opts->json_path == NULL)
        return 0;
    out = fopen(opts->json_path, "w");
    if (out == NULL) {
        fprintf(stderr, "dt_transfer: cannot write %s\n", opts->json_path);
        return 1;
    }
    mf_bench_print_json_header(out, &dt_info, opts);
    fprintf(out, "  \"vector_stride\": %d,\n  \"results\": [\n", VECTOR_STRIDE);
    for (int i = 0; i < n; i++) {
        fprintf(out, "    ");
        print_result(out, &results[i]);
        fprintf(out, "%s\n", i + 1 < n ? "," : "");
    }
    fprintf(out, "  ]\n}\n");
    return fclose(out) == 0 ? 0 : 1;
}

static int run(const mf_bench_opts_t *opts, int rank)
{
    size_t *sizes;
    int nsizes = mf_bench_sizes(opts, &sizes);
    size_t top = max_of(opts->max_size, 16);
    dt_ctx_t c = {.rank = rank};
    double *samples = xmalloc((size_t)(METHOD_COUNT + 1) * (size_t)opts->reps * sizeof(double));
    dt_result_t *results = xmalloc((size_t)nsizes * LAYOUT_COUNT * sizeof(dt_result_t));
    int n = 0;
    int rc;

    /* The widest layout spans twice its payload (vector, struct), 1.8 times (indexed) or 1.5
     * times and up to 56 bytes (blocks). */
    c.extent_max = 2 * top + 64 + sizeof(particle_t);
    c.sbuf = mf_bench_alloc(c.extent_max);
    c.rbuf = mf_bench_alloc(c.extent_max);
    c.expect = mf_bench_alloc(c.extent_max);
    c.spacked = mf_bench_alloc(top + sizeof(particle_t));
    c.rpacked = mf_bench_alloc(top + sizeof(particle_t));
    for (int k = 0; k < LAYOUT_COUNT; k++) {
        if (!layout_wanted((layout_kind_t)k))
            continue;
        for (int s = 0; s < nsizes; s++) {
            measure(&c, opts, (layout_kind_t)k, sizes[s], samples, &results[n]);
            if (rank == 0) {
                print_result(stdout, &results[n]);
                printf("\n");
                fflush(stdout);
            }
            n++;
        }
    }
    rc = rank == 0 ? write_json(opts, results, n) : 0;
    free(c.rpacked);
    free(c.spacked);
    free(c.expect);
    free(c.rbuf);
    free(c.sbuf);
    free(results);
    free(samples);
    free(sizes);
    return rc;
}

int main(int argc, char **argv)
{
    mf_bench_opts_t opts = {
        .min_size = 8,
        .max_size = (size_t)DEFAULT_MAX_MB << 20,
        .iters = 1000,
        .reps = 5,
        .warmup = 10,
        .window = 1,
        .recv_buffers = 0,
        .byte_budget = 32 << 20,
        .json_path = NULL,
    };
    int rank = mf_bench_init(&argc, &argv, dt_info.name);
    int status = 0;

    if (rank < 0)
        return 1;
    switch (mf_bench_parse_args(argc, argv, dt_info.name, rank, &opts)) {
    case MF_BENCH_ARGS_RUN: status = run(&opts, rank); break;
    case MF_BENCH_ARGS_HELP: status = 0; break;
    case MF_BENCH_ARGS_BAD: status = 2; break;
    }
    mf_bench_mpi_ok(MPI_Finalize(), "MPI_Finalize");
    return status;
}
