/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A derived-datatype message to oneself, against packing by hand, for counting instructions:
 * one process posts a receive, sends to itself and waits, `iters` times, either with the
 * datatype ("derived") or by packing into a buffer, sending MPI_BYTE and unpacking ("manual").
 * No peer, no spinning on another process, so a run under callgrind gives a deterministic cost
 * per round trip (one send and one receive) of everything the library adds to the copies:
 *   mpiexec -n 1 valgrind --tool=callgrind bench/dt_self <bytes> <iters> <layout> <method>
 * then `callgrind_annotate --inclusive=yes` and the cost of run_derived or run_manual divided
 * by iters. layout: vector (one column of two doubles) or struct (int, double and float of a
 * 32-byte particle); method: derived, manual or both (default; prints wall-clock times too);
 * order: irecv (default: MPI_Irecv, MPI_Send, MPI_Wait) or blocking (MPI_Send, then MPI_Recv,
 * the path of a blocking exchange; only for messages the transport sends eagerly, a few KiB).
 * The layouts are those of dt_transfer.c. Standard MPI only.
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

typedef struct self_ctx {
    int is_struct;
    size_t n; /* doubles or particles */
    void *src, *dst;
    char *spacked, *rpacked;
    MPI_Datatype type;
    int type_count;
    int blocking; /* MPI_Send then MPI_Recv */
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
    size_t bytes = c->is_struct ? c->n * PART_BYTES : c->n * sizeof(double);
    for (int i = 0; i < iters; i++) {
        if (c->is_struct) {
            const particle_t *in = c->src;
            char *out = c->spacked;
            for (size_t k = 0; k < c->n; k++, out += PART_BYTES) {
                memcpy(out, &in[k].id, sizeof(int));
                memcpy(out + sizeof(int), &in[k].x, sizeof(double));
                memcpy(out + sizeof(int) + sizeof(double), &in[k].w, sizeof(float));
            }
        } else {
            const double *in = c->src;
            double *out = (double *)c->spacked;
            for (size_t k = 0; k < c->n; k++)
                out[k] = in[2 * k];
        }
        exchange(c, c->spacked, c->rpacked, (int)bytes, MPI_BYTE);
        if (c->is_struct) {
            const char *in = c->rpacked;
            particle_t *out = c->dst;
            for (size_t k = 0; k < c->n; k++, in += PART_BYTES) {
                memcpy(&out[k].id, in, sizeof(int));
                memcpy(&out[k].x, in + sizeof(int), sizeof(double));
                memcpy(&out[k].w, in + sizeof(int) + sizeof(double), sizeof(float));
            }
        } else {
            const double *in = (const double *)c->rpacked;
            double *out = c->dst;
            for (size_t k = 0; k < c->n; k++)
                out[2 * k] = in[k];
        }
    }
}

static void make_type(self_ctx_t *c)
{
    if (c->is_struct) {
        int lens[3] = {1, 1, 1};
        MPI_Aint disps[3] = {offsetof(particle_t, id), offsetof(particle_t, x),
                             offsetof(particle_t, w)};
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT}, fields;
        check(MPI_Type_create_struct(3, lens, disps, types, &fields), "MPI_Type_create_struct");
        check(MPI_Type_create_resized(fields, 0, sizeof(particle_t), &c->type),
              "MPI_Type_create_resized");
        check(MPI_Type_free(&fields), "MPI_Type_free");
        c->type_count = (int)c->n;
    } else {
        check(MPI_Type_vector((int)c->n, 1, 2, MPI_DOUBLE, &c->type), "MPI_Type_vector");
        c->type_count = 1;
    }
    check(MPI_Type_commit(&c->type), "MPI_Type_commit");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 3) {
        fprintf(stderr, "usage: dt_self <bytes> <iters> [vector|struct] [derived|manual|both] "
                        "[irecv|blocking]\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t bytes = strtoul(argv[1], NULL, 0);
    int iters = atoi(argv[2]);
    const char *method = argc > 4 ? argv[4] : "both";
    self_ctx_t c = {.is_struct = argc > 3 && strcmp(argv[3], "struct") == 0,
                    .blocking = argc > 5 && strcmp(argv[5], "blocking") == 0};
    c.n = bytes / (c.is_struct ? PART_BYTES : sizeof(double));
    c.n = c.n > 0 ? c.n : 1;
    size_t span = c.is_struct ? c.n * sizeof(particle_t) : 2 * c.n * sizeof(double);
    c.src = calloc(1, span);
    c.dst = calloc(1, span);
    c.spacked = calloc(1, span);
    c.rpacked = calloc(1, span);
    if (c.src == NULL || c.dst == NULL || c.spacked == NULL || c.rpacked == NULL) {
        fprintf(stderr, "dt_self: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    make_type(&c);
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
               c.is_struct ? "struct" : "vector", bytes, (t1 - t0) * 1e6 / iters,
               (t2 - t1) * 1e6 / iters);
    }
    check(MPI_Type_free(&c.type), "MPI_Type_free");
    free(c.src);
    free(c.dst);
    free(c.spacked);
    free(c.rpacked);
    MPI_Finalize();
    return 0;
}
