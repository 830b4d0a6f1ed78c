/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point with the layouts Manifold copies with specialised loops (a strided column,
 * a negative stride, a resized vector whose items continue the stride, arrays of small structs,
 * a struct addressed from MPI_BOTTOM, a contiguous derived type that is sent in place), each
 * through MPI_Send/MPI_Recv and MPI_Isend/MPI_Irecv at several counts including 0: every
 * received byte is checked and the gaps must be untouched. Then a short message and a
 * truncated one with a small struct. Rank 0 sends, rank 1 receives.
 */
#include "mtest.h"

#include <mpi.h>

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define SPAN    8192 /* bytes of each buffer */
#define SENTRY  0x5a
#define MAXITEM 64

typedef struct particle {
    int id;
    double x;
    float w;
    double unsent;
} particle_t;

static int rank;
static unsigned char src[SPAN], dst[SPAN], want[SPAN];

/* A layout: its type, how many items to send, and which bytes of an item it selects (the
 * reference the receiver checks against, independent of the library). */
typedef struct layout {
    const char *what;
    MPI_Datatype type;
    MPI_Aint extent;
    int nblk;
    MPI_Aint off[4];
    int len[4];
    int bottom; /* the displacements are absolute: send from and receive into MPI_BOTTOM */
    int rep;    /* the blocks repeat this often (0: once), rstride bytes apart */
    MPI_Aint rstride;
} layout_t;

static void fill_src(void)
{
    for (int i = 0; i < SPAN; i++)
        src[i] = (unsigned char)(i * 7 + 1);
}

/* `count` items of l from src into a copy of the sentry-filled buffer, by the reference */
static void expect(const layout_t *l, int count, MPI_Aint base)
{
    memset(want, SENTRY, SPAN);
    for (int it = 0; it < count; it++)
        for (int r = 0; r < (l->rep > 0 ? l->rep : 1); r++)
            for (int b = 0; b < l->nblk; b++) {
                MPI_Aint at = base + it * l->extent + r * l->rstride + l->off[b];
                memcpy(want + at, src + at, (size_t)l->len[b]);
            }
}

static void transfer(const layout_t *l, int count, int immediate, int tag)
{
    /* items start at byte 64 so negative offsets stay in the buffer */
    MPI_Aint base = 64;
    void *sbuf = l->bottom ? MPI_BOTTOM : (void *)(src + base);
    void *rbuf = l->bottom ? MPI_BOTTOM : (void *)(dst + base);
    if (rank == 0) {
        if (immediate) {
            MPI_Request req;
            MPI_Isend(sbuf, count, l->type, 1, tag, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Send(sbuf, count, l->type, 1, tag, MPI_COMM_WORLD);
        }
        return;
    }
    memset(dst, SENTRY, SPAN);
    MPI_Status st;
    if (immediate) {
        MPI_Request req;
        MPI_Irecv(rbuf, count, l->type, 0, tag, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, &st);
    } else {
        MPI_Recv(rbuf, count, l->type, 0, tag, MPI_COMM_WORLD, &st);
    }
    int got = -1;
    MPI_Get_count(&st, l->type, &got);
    MTEST_CHECK(got == count, "%s, %d items%s: count %d", l->what, count,
                immediate ? " (immediate)" : "", got);
    expect(l, count, base);
    for (int i = 0; i < SPAN; i++) {
        if (dst[i] != want[i]) {
            MTEST_CHECK(0, "%s, %d items%s: byte %d is 0x%02x, expected 0x%02x", l->what, count,
                        immediate ? " (immediate)" : "", i - (int)base, dst[i], want[i]);
            break;
        }
    }
}

static void make_layouts(layout_t *ls, int *n)
{
    int k = 0;
    /* a column of doubles: one item, every other double */
    MPI_Type_vector(MAXITEM, 1, 2, MPI_DOUBLE, &ls[k].type);
    ls[k] = (layout_t){"column", ls[k].type, 0, 1, {0}, {8}, 0, MAXITEM, 16};
    k++;
    /* the same per item, as a vector of one double resized to two: items continue the stride */
    MPI_Datatype one;
    MPI_Type_vector(1, 1, 2, MPI_DOUBLE, &one);
    MPI_Type_create_resized(one, 0, 16, &ls[k].type);
    MPI_Type_free(&one);
    ls[k] = (layout_t){"resized column", ls[k].type, 16, 1, {0}, {8}, 0, 0, 0};
    k++;
    /* three ints with a negative stride: 8, 4, 0 ints from the start; extent 12 ints */
    MPI_Datatype neg;
    MPI_Type_create_hvector(3, 1, -16, MPI_INT, &neg);
    MPI_Type_create_resized(neg, -32, 48, &ls[k].type);
    MPI_Type_free(&neg);
    ls[k] = (layout_t){"negative stride", ls[k].type, 48, 3, {0, -16, -32}, {4, 4, 4}, 0, 0, 0};
    k++;
    /* an array of particles: id, x and w of each (4 + 12 bytes of 32) */
    int lens[3] = {1, 1, 1};
    MPI_Aint disps[3] = {offsetof(particle_t, id), offsetof(particle_t, x),
                         offsetof(particle_t, w)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT}, fields;
    MPI_Type_create_struct(3, lens, disps, types, &fields);
    MPI_Type_create_resized(fields, 0, sizeof(particle_t), &ls[k].type);
    MPI_Type_free(&fields);
    ls[k] = (layout_t){
        "particles", ls[k].type, sizeof(particle_t), 2, {0, offsetof(particle_t, x)}, {4, 12}, 0,
        0,           0};
    k++;
    /* a struct of a short-ish piece and a long one (neither fits the move lists) */
    int lens2[2] = {3, 5};
    MPI_Aint disps2[2] = {0, 8};
    MPI_Datatype types2[2] = {MPI_CHAR, MPI_DOUBLE}, f2;
    MPI_Type_create_struct(2, lens2, disps2, types2, &f2);
    MPI_Type_create_resized(f2, 0, 56, &ls[k].type);
    MPI_Type_free(&f2);
    ls[k] = (layout_t){"char[3] + double[5]", ls[k].type, 56, 2, {0, 8}, {3, 40}, 0, 0, 0};
    k++;
    /* a particle addressed from MPI_BOTTOM: absolute displacements, one item */
    MPI_Aint a_id, a_x, a_w;
    MPI_Get_address(src + 64, &a_id);
    MPI_Get_address(src + 64 + 8, &a_x);
    MPI_Get_address(src + 64 + 16, &a_w);
    if (rank == 1) {
        MPI_Get_address(dst + 64, &a_id);
        MPI_Get_address(dst + 64 + 8, &a_x);
        MPI_Get_address(dst + 64 + 16, &a_w);
    }
    MPI_Aint abs_d[3] = {a_id, a_x, a_w};
    MPI_Type_create_struct(3, lens, abs_d, types, &ls[k].type);
    ls[k] = (layout_t){"MPI_BOTTOM struct", ls[k].type, 24, 2, {0, 8}, {4, 12}, 1, 0, 0};
    k++;
    /* a contiguous derived type: sent in place */
    MPI_Type_contiguous(5, MPI_INT, &ls[k].type);
    ls[k] = (layout_t){"contiguous", ls[k].type, 20, 1, {0}, {20}, 0, 0, 0};
    k++;
    for (int i = 0; i < k; i++)
        MPI_Type_commit(&ls[i].type);
    *n = k;
}

/* Two particles arrive where five fit: a prefix, and the count it makes; seven are truncated. */
static void short_and_truncate(const layout_t *p)
{
    if (rank == 0) {
        MPI_Send(src + 64, 2, p->type, 1, 900, MPI_COMM_WORLD);
        MPI_Send(src + 64, 7, p->type, 1, 901, MPI_COMM_WORLD);
        return;
    }
    memset(dst, SENTRY, SPAN);
    MPI_Status st;
    MPI_Recv(dst + 64, 5, p->type, 0, 900, MPI_COMM_WORLD, &st);
    int got = -1;
    MPI_Get_count(&st, p->type, &got);
    MTEST_CHECK(got == 2, "short message: count %d", got);
    expect(p, 2, 64);
    MTEST_CHECK(memcmp(dst, want, SPAN) == 0, "short message: wrong bytes");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Recv(dst + 64, 5, p->type, 0, 901, MPI_COMM_WORLD, &st);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Recv");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fill_src();
    layout_t ls[8];
    int n = 0;
    make_layouts(ls, &n);
    static const int counts[] = {0, 1, 2, 5, 33};
    int tag = 1;
    for (int i = 0; i < n; i++) {
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            int count = counts[c];
            if ((ls[i].bottom || i == 0) && count > 1)
                continue; /* one absolute item; the column is one item */
            for (int imm = 0; imm < 2; imm++)
                transfer(&ls[i], count, imm, tag++);
        }
    }
    short_and_truncate(&ls[3]);
    for (int i = 0; i < n; i++)
        MPI_Type_free(&ls[i].type);
    return mtest_finalize(0);
}
