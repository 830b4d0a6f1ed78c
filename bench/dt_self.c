/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A derived-datatype message to oneself, against packing by hand, for counting instructions:
 * one process posts a receive, sends to itself and waits, `iters` times, either with the
 * datatype ("derived") or by packing into a buffer, sending MPI_BYTE and unpacking ("manual").
 * No peer, no spinning on another process, so a run under callgrind gives a deterministic cost
 * per round trip (one send and one receive) of everything the library adds to the copies:
 *   mpiexec -n 1 valgrind --tool=callgrind bench/dt_self <bytes> <iters> <layout> <method>
 * then `callgrind_annotate --inclusive=yes` and the cost of run_derived or run_manual divided
 * by iters. layout: vector (one column of two doubles), indexed (blocks of 1 to 4 ints with
 * gaps of 1 to 3 ints) or struct (int, double and float of a 32-byte particle); method: derived,
 * manual or both (default; prints wall-clock times too); order: irecv (default: MPI_Irecv,
 * MPI_Send, MPI_Wait), isend (MPI_Irecv, MPI_Isend, MPI_Waitall: both immediate forms) or
 * blocking (MPI_Send, then MPI_Recv, the path of a blocking exchange; only for messages the
 * transport sends eagerly, a few KiB). The layouts are those of dt_transfer.c.
 * Standard MPI only.
 */
#include <mpi.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct particle {
    int id;
    double x;
    float w;
    double unsent;
} particle_t;

#define PART_BYTES (sizeof(int) + sizeof(double) + sizeof(float))

enum { LAYOUT_VECTOR, LAYOUT_INDEXED, LAYOUT_STRUCT };
static const char *const layout_names[] = {"vector", "indexed", "struct"};

typedef struct self_ctx {
    int layout;
    size_t n;          /* doubles, indexed blocks or particles */
    size_t payload;    /* packed bytes */
    int *blen, *bdisp; /* indexed: ints per block, offset of each block in ints */
    void *src, *dst;
    char *spacked, *rpacked;
    MPI_Datatype type;
    int type_count;
    int blocking; /* MPI_Send then MPI_Recv */
    int isend;    /* MPI_Irecv, MPI_Isend, MPI_Waitall */
} self_ctx_t;

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "dt_self: %s failed\n", what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void exchange(const self_ctx_t *c, void *sbuf, void *rbuf, int count, MPI_Datatype type)
{
    if (c->blocking) {
        check(MPI_Send(sbuf, count, type, 0, 1, MPI_COMM_SELF), "MPI_Send");
        check(MPI_Recv(rbuf, count, type, 0, 1, MPI_COMM_SELF, MPI_STATUS_IGNORE), "MPI_Recv");
        return;
    }
    if (c->isend) {
        MPI_Request reqs[2];
        check(MPI_Irecv(rbuf, count, type, 0, 1, MPI_COMM_SELF, &reqs[0]), "MPI_Irecv");
        check(MPI_Isend(sbuf, count, type, 0, 1, MPI_COMM_SELF, &reqs[1]), "MPI_Isend");
        check(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE), "MPI_Waitall");
        return;
    }
    MPI_Request req;
    check(MPI_Irecv(rbuf, count, type, 0, 1, MPI_COMM_SELF, &req), "MPI_Irecv");
    check(MPI_Send(sbuf, count, type, 0, 1, MPI_COMM_SELF), "MPI_Send");
    check(MPI_Wait(&req, MPI_STATUS_IGNORE), "MPI_Wait");
}

/* noinline: callgrind reports each method as one function */
__attribute__((noinline)) static void run_derived(const self_ctx_t *c, int iters)
{
    for (int i = 0; i < iters; i++)
        exchange(c, c->src, c->dst, c->type_count, c->type);
}

__attribute__((noinline)) static void run_manual(const self_ctx_t *c, int iters)
{
    for (int i = 0; i < iters; i++) {
        if (c->layout == LAYOUT_STRUCT) {
            const particle_t *in = c->src;
            char *out = c->spacked;
            for (size_t k = 0; k < c->n; k++, out += PART_BYTES) {
                memcpy(out, &in[k].id, sizeof(int));
                memcpy(out + sizeof(int), &in[k].x, sizeof(double));
                memcpy(out + sizeof(int) + sizeof(double), &in[k].w, sizeof(float));
            }
        } else if (c->layout == LAYOUT_INDEXED) {
            const int *in = c->src;
            int *out = (int *)c->spacked;
            for (size_t b = 0; b < c->n; b++) {
                memcpy(out, in + c->bdisp[b], (size_t)c->blen[b] * sizeof(int));
                out += c->blen[b];
            }
        } else {
            const double *in = c->src;
            double *out = (double *)c->spacked;
            for (size_t k = 0; k < c->n; k++)
                out[k] = in[2 * k];
        }
        exchange(c, c->spacked, c->rpacked, (int)c->payload, MPI_BYTE);
        if (c->layout == LAYOUT_STRUCT) {
            const char *in = c->rpacked;
            particle_t *out = c->dst;
            for (size_t k = 0; k < c->n; k++, in += PART_BYTES) {
                memcpy(&out[k].id, in, sizeof(int));
                memcpy(&out[k].x, in + sizeof(int), sizeof(double));
                memcpy(&out[k].w, in + sizeof(int) + sizeof(double), sizeof(float));
            }
        } else if (c->layout == LAYOUT_INDEXED) {
            const int *in = (const int *)c->rpacked;
            int *out = c->dst;
            for (size_t b = 0; b < c->n; b++) {
                memcpy(out + c->bdisp[b], in, (size_t)c->blen[b] * sizeof(int));
                in += c->blen[b];
            }
        } else {
            const double *in = (const double *)c->rpacked;
            double *out = c->dst;
            for (size_t k = 0; k < c->n; k++)
                out[2 * k] = in[k];
        }
    }
}

/* The layouts of dt_transfer.c for `bytes` of payload; returns the span of the buffers. */
static size_t make_type(self_ctx_t *c, size_t bytes)
{
    size_t span;
    if (c->layout == LAYOUT_STRUCT) {
        c->n = bytes / PART_BYTES > 0 ? bytes / PART_BYTES : 1;
        c->payload = c->n * PART_BYTES;
        span = c->n * sizeof(particle_t);
        int lens[3] = {1, 1, 1};
        MPI_Aint disps[3] = {offsetof(particle_t, id), offsetof(particle_t, x),
                             offsetof(particle_t, w)};
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT}, fields;
        check(MPI_Type_create_struct(3, lens, disps, types, &fields), "MPI_Type_create_struct");
        check(MPI_Type_create_resized(fields, 0, sizeof(particle_t), &c->type),
              "MPI_Type_create_resized");
        check(MPI_Type_free(&fields), "MPI_Type_free");
        c->type_count = (int)c->n;
    } else if (c->layout == LAYOUT_INDEXED) {
        /* blocks of 1, 2, 3, 4, 1, ... ints, each followed by a gap of 1, 2, 3, 1, ... ints */
        size_t ints = bytes / sizeof(int) > 0 ? bytes / sizeof(int) : 1, pos = 0;
        c->blen = malloc(ints * sizeof(int));
        c->bdisp = malloc(ints * sizeof(int));
        if (c->blen == NULL || c->bdisp == NULL) {
            fprintf(stderr, "dt_self: out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        c->n = 0;
        for (size_t left = ints; left > 0; c->n++) {
            size_t len = 1 + c->n % 4;
            len = len < left ? len : left;
            c->blen[c->n] = (int)len;
            c->bdisp[c->n] = (int)pos;
            pos += len + 1 + c->n % 3;
            left -= len;
        }
        c->payload = ints * sizeof(int);
        span = pos * sizeof(int);
        check(MPI_Type_indexed((int)c->n, c->blen, c->bdisp, MPI_INT, &c->type),
              "MPI_Type_indexed");
        c->type_count = 1;
    } else {
        c->n = bytes / sizeof(double) > 0 ? bytes / sizeof(double) : 1;
        c->payload = c->n * sizeof(double);
        span = 2 * c->n * sizeof(double);
        check(MPI_Type_vector((int)c->n, 1, 2, MPI_DOUBLE, &c->type), "MPI_Type_vector");
        c->type_count = 1;
    }
    check(MPI_Type_commit(&c->type), "MPI_Type_commit");
    return span;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr,
                "usage: dt_self <bytes> <iters> [vector|indexed|struct] [derived|manual|both] "
                "[irecv|isend|blocking]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t bytes = strtoul(argv[1], NULL, 0);
    int iters = atoi(argv[2]);
    const char *method = argc > 4 ? argv[4] : "both";
    self_ctx_t c = {.layout = LAYOUT_VECTOR,
                    .blocking = argc > 5 && strcmp(argv[5], "blocking") == 0,
                    .isend = argc > 5 && strcmp(argv[5], "isend") == 0};
    for (int l = 0; argc > 3 && l < 3; l++)
        if (strcmp(argv[3], layout_names[l]) == 0)
            c.layout = l;
    size_t span = make_type(&c, bytes);
    c.src = calloc(1, span);
    c.dst = calloc(1, span);
    c.spacked = calloc(1, span);
    c.rpacked = calloc(1, span);
    if (c.src == NULL || c.dst == NULL || c.spacked == NULL || c.rpacked == NULL) {
        fprintf(stderr, "dt_self: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (strcmp(method, "derived") == 0) {
        run_derived(&c, iters);
    } else if (strcmp(method, "manual") == 0) {
        run_manual(&c, iters);
    } else {
        run_derived(&c, iters / 10 + 1); /* warm-up */
        run_manual(&c, iters / 10 + 1);
        double t0 = MPI_Wtime();
        run_derived(&c, iters);
        double t1 = MPI_Wtime();
        run_manual(&c, iters);
        double t2 = MPI_Wtime();
        printf("dt_self %s %zu bytes: derived %.3f us, manual %.3f us per round trip\n",
               layout_names[c.layout], c.payload, (t1 - t0) * 1e6 / iters, (t2 - t1) * 1e6 / iters);
    }
    check(MPI_Type_free(&c.type), "MPI_Type_free");
    free(c.src);
    free(c.dst);
    free(c.spacked);
    free(c.rpacked);
    free(c.blen);
    free(c.bdisp);
    MPI_Finalize();
    return 0;
}
