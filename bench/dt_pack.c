/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pack engine alone, against hand-written loops: one process, no messages. For the three
 * layouts of dt_transfer.c (a column of doubles, indexed blocks of 1 to 4 ints, an array of
 * particles of which 16 of 32 bytes are sent) and payloads from 64 B to 16 MiB, it times
 * MPI_Pack + MPI_Unpack of the datatype and the same copies written as plain loops, alternating
 * the two in every repetition, and prints the median time per byte of each and their ratio
 * (hand time over MPI time: above 1.0 the datatype is faster). Every unpacked byte is checked.
 * Standard MPI only, so the same binary runs on any standard-ABI library:
 *   mpiexec -n 1 bench/dt_pack [max_bytes] [reps]
 */
#include <mpi.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRIDE 2 /* doubles per row: the vector takes one column of two */
#define REPS   7

typedef struct particle {
    int id;
    double x;
    float w;
    double unsent;
} particle_t;

enum { L_VECTOR, L_INDEXED, L_STRUCT, L_COUNT };
static const char *const names[L_COUNT] = {"vector", "indexed", "struct"};

typedef struct layout {
    int kind;
    size_t n; /* doubles, blocks or particles */
    size_t payload, extent;
    int *len, *disp;
    MPI_Datatype type;
    int count;
} layout_t;

static void make(layout_t *l, int kind, size_t size)
{
    memset(l, 0, sizeof(*l));
    l->kind = kind;
    if (kind == L_VECTOR) {
        l->n = size / sizeof(double);
        l->payload = l->n * sizeof(double);
        l->extent = l->n * STRIDE * sizeof(double);
        MPI_Type_vector((int)l->n, 1, STRIDE, MPI_DOUBLE, &l->type);
        l->count = 1;
    } else if (kind == L_INDEXED) {
        size_t ints = size / sizeof(int), pos = 0, b = 0;
        l->len = malloc(ints * sizeof(int));
        l->disp = malloc(ints * sizeof(int));
        for (size_t left = ints; left > 0; b++) {
            size_t len = 1 + b % 4;
            len = len > left ? left : len;
            l->len[b] = (int)len;
            l->disp[b] = (int)pos;
            pos += len + 1 + b % 3;
            left -= len;
        }
        l->n = b;
        l->payload = ints * sizeof(int);
        l->extent = pos * sizeof(int);
        MPI_Type_indexed((int)b, l->len, l->disp, MPI_INT, &l->type);
        l->count = 1;
    } else {
        int lens[3] = {1, 1, 1};
        MPI_Aint disps[3] = {offsetof(particle_t, id), offsetof(particle_t, x),
                             offsetof(particle_t, w)};
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT}, t;
        l->n = size / 16;
        l->payload = l->n * 16;
        l->extent = l->n * sizeof(particle_t);
        MPI_Type_create_struct(3, lens, disps, types, &t);
        MPI_Type_create_resized(t, 0, sizeof(particle_t), &l->type);
        MPI_Type_free(&t);
        l->count = (int)l->n;
    }
    MPI_Type_commit(&l->type);
}

static void hand_pack(const layout_t *l, const void *src, void *dst)
{
    if (l->kind == L_VECTOR) {
        const double *in = src;
        double *out = dst;
        for (size_t i = 0; i < l->n; i++)
            out[i] = in[i * STRIDE];
    } else if (l->kind == L_INDEXED) {
        const int *in = src;
        int *out = dst;
        for (size_t b = 0; b < l->n; b++) {
            memcpy(out, in + l->disp[b], (size_t)l->len[b] * sizeof(int));
            out += l->len[b];
        }
    } else {
        const particle_t *in = src;
        char *out = dst;
        for (size_t i = 0; i < l->n; i++, out += 16) {
            memcpy(out, &in[i].id, 4);
            memcpy(out + 4, &in[i].x, 8);
            memcpy(out + 12, &in[i].w, 4);
        }
    }
}

static void hand_unpack(const layout_t *l, const void *src, void *dst)
{
    if (l->kind == L_VECTOR) {
        const double *in = src;
        double *out = dst;
        for (size_t i = 0; i < l->n; i++)
            out[i * STRIDE] = in[i];
    } else if (l->kind == L_INDEXED) {
        const int *in = src;
        int *out = dst;
        for (size_t b = 0; b < l->n; b++) {
            memcpy(out + l->disp[b], in, (size_t)l->len[b] * sizeof(int));
            in += l->len[b];
        }
    } else {
        const char *in = src;
        particle_t *out = dst;
        for (size_t i = 0; i < l->n; i++, in += 16) {
            memcpy(&out[i].id, in, 4);
            memcpy(&out[i].x, in + 4, 8);
            memcpy(&out[i].w, in + 12, 4);
        }
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    size_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : (size_t)16 << 20;
    int reps = argc > 2 ? atoi(argv[2]) : REPS;
    reps = reps < 1 ? 1 : reps > 99 ? 99 : reps;
    size_t cap = 2 * max + 64;
    char *src = malloc(cap), *dst = malloc(cap), *ref = malloc(cap), *packed = malloc(max + 64);
    int errors = 0;
    for (size_t i = 0; i < cap; i++)
        src[i] = (char)(i * 7 + 3);
    printf("%-8s %10s %12s %12s %8s\n", "layout", "bytes", "mpi_ns/B", "hand_ns/B", "ratio");
    for (int kind = 0; kind < L_COUNT; kind++) {
        for (size_t size = 64; size <= max; size *= 4) {
            layout_t l;
            make(&l, kind, size);
            size_t iters = (size_t)(64 << 20) / size + 1;
            double tm[99], th[99];
            for (int r = 0; r < reps; r++) {
                double t0 = MPI_Wtime();
                for (size_t it = 0; it < iters; it++) {
                    int pos = 0;
                    MPI_Pack(src, l.count, l.type, packed, (int)(max + 64), &pos, MPI_COMM_SELF);
                    pos = 0;
                    MPI_Unpack(packed, (int)(max + 64), &pos, dst, l.count, l.type, MPI_COMM_SELF);
                }
                double t1 = MPI_Wtime();
                for (size_t it = 0; it < iters; it++) {
                    hand_pack(&l, src, packed);
                    hand_unpack(&l, packed, ref);
                }
                double t2 = MPI_Wtime();
                tm[r] = (t1 - t0) * 1e9 / (double)(iters * l.payload);
                th[r] = (t2 - t1) * 1e9 / (double)(iters * l.payload);
            }
            /* only the selected bytes: the gaps of dst and ref hold older data */
            memset(dst, 0, l.extent);
            memset(ref, 0, l.extent);
            int pos = 0;
            MPI_Pack(src, l.count, l.type, packed, (int)(max + 64), &pos, MPI_COMM_SELF);
            pos = 0;
            MPI_Unpack(packed, (int)(max + 64), &pos, dst, l.count, l.type, MPI_COMM_SELF);
            hand_pack(&l, src, packed);
            hand_unpack(&l, packed, ref);
            if (memcmp(dst, ref, l.extent) != 0) {
                printf("%s %zu: MPI_Pack/MPI_Unpack disagree with the hand-written loops\n",
                       names[kind], size);
                errors++;
            }
            qsort(tm, (size_t)reps, sizeof(double), cmp);
            qsort(th, (size_t)reps, sizeof(double), cmp);
            printf("%-8s %10zu %12.4f %12.4f %8.2f\n", names[kind], l.payload, tm[reps / 2],
                   th[reps / 2], th[reps / 2] / tm[reps / 2]);
            fflush(stdout);
            MPI_Type_free(&l.type);
            free(l.len);
            free(l.disp);
        }
    }
    free(src);
    free(dst);
    free(ref);
    free(packed);
    MPI_Finalize();
    return errors != 0;
}
