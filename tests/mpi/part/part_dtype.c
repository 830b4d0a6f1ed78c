/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned communication with datatypes whose items are not one run of memory: a strided
 * vector, a resized type with gaps between items, an indexed type, an array of MPI_DOUBLE_INT
 * (padding inside every item) and a struct, against each other and against contiguous
 * MPI_DOUBLE receives, with sender and receiver partition counts that differ (the
 * type signatures match, the layouts do not). Each pairing runs several iterations on the same
 * requests with new contents; the receiver checks every partition as soon as MPI_Parrived
 * reports it (before MPI_Wait), and that the gaps between items keep their contents. The
 * datatypes are freed right after the init calls (the requests keep what they need). With
 * MTEST_NTHREADS=T (MPI_THREAD_MULTIPLE) T threads mark the sender's partitions and poll the
 * receiver's at once.
 */
#include "mtest.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NITER 3
#define FILL  0x5a

/* One side of a pairing: `npart` partitions of `count` items of the type `make` builds, in a
 * buffer of `count * npart` items of `extent` bytes. elem(i) is the byte offset of the i-th
 * element (a double or an int of the signature) in the buffer. */
typedef enum { T_DOUBLE, T_VECTOR, T_RESIZED, T_INDEXED, T_DOUBLE_INT, T_STRUCT } kind_t;

typedef struct {
    kind_t kind;
    int npart;
} side_t;

/* The elements of the signature in one item. */
static int elems_per_item(kind_t k)
{
    switch (k) {
    case T_VECTOR: return 3;
    case T_INDEXED: return 4;
    case T_DOUBLE_INT:
    case T_STRUCT: return 2;
    default: return 1;
    }
}

static MPI_Datatype make_type(kind_t k, MPI_Aint *extent)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, tmp;
    switch (k) {
    case T_DOUBLE: t = MPI_DOUBLE; break;
    case T_DOUBLE_INT: t = MPI_DOUBLE_INT; break;
    case T_VECTOR: /* 3 doubles 2 apart: 5 doubles of extent, gaps between and after */
        MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &tmp);
        MPI_Type_create_resized(tmp, 0, 6 * sizeof(double), &t);
        MPI_Type_free(&tmp);
        break;
    case T_RESIZED: /* one double in 24 bytes */
        MPI_Type_create_resized(MPI_DOUBLE, 0, 3 * sizeof(double), &t);
        break;
    case T_INDEXED: { /* doubles at 0, 1, 4, 7 of 8 */
        int lens[3] = {2, 1, 1}, disps[3] = {0, 4, 7};
        MPI_Type_indexed(3, lens, disps, MPI_DOUBLE, &tmp);
        MPI_Type_create_resized(tmp, 0, 8 * sizeof(double), &t);
        MPI_Type_free(&tmp);
        break;
    }
    case T_STRUCT: { /* DOUBLE_INT's signature, the other way round in memory: int at 0,
                      * double at 8, 24 bytes */
        int lens[2] = {1, 1};
        MPI_Aint disps[2] = {8, 0};
        MPI_Datatype types[2] = {MPI_DOUBLE, MPI_INT};
        MPI_Type_create_struct(2, lens, disps, types, &tmp);
        MPI_Type_create_resized(tmp, 0, 24, &t);
        MPI_Type_free(&tmp);
        break;
    }
    }
    if (t != MPI_DOUBLE && t != MPI_DOUBLE_INT)
        MPI_Type_commit(&t);
    MPI_Aint lb;
    MPI_Type_get_extent(t, &lb, extent);
    return t;
}

/* Byte offset of element e (0 .. elems_per_item - 1) of item i. */
static size_t elem_off(kind_t k, MPI_Aint extent, size_t i, int e)
{
    static const int indexed[4] = {0, 1, 4, 7};
    size_t base = i * (size_t)extent;
    switch (k) {
    case T_VECTOR: return base + (size_t)e * 2 * sizeof(double);
    case T_INDEXED: return base + (size_t)indexed[e] * sizeof(double);
    case T_DOUBLE_INT: return base + (e == 0 ? 0 : sizeof(double));
    case T_STRUCT: return base + (e == 0 ? 8 : 0);
    default: return base;
    }
}

/* The value of element `g` (index in the message's signature) in iteration `it`; doubles and
 * ints of the signature take the same numbers. */
static int value(size_t g, int it)
{
    return (int)(g * 13 + 7 + (size_t)it * 100003);
}

/* Element e of an item of kind k is a double (1) or an int (0). */
static int is_double(kind_t k, int e)
{
    return (k != T_DOUBLE_INT && k != T_STRUCT) || e == 0;
}

static void put(char *buf, kind_t k, MPI_Aint extent, size_t g, int it)
{
    int per = elems_per_item(k);
    size_t off = elem_off(k, extent, g / (size_t)per, (int)(g % (size_t)per));
    if (is_double(k, (int)(g % (size_t)per))) {
        double v = value(g, it);
        memcpy(buf + off, &v, sizeof(v));
    } else {
        int v = value(g, it);
        memcpy(buf + off, &v, sizeof(v));
    }
}

static int got(const char *buf, kind_t k, MPI_Aint extent, size_t g)
{
    int per = elems_per_item(k);
    size_t off = elem_off(k, extent, g / (size_t)per, (int)(g % (size_t)per));
    if (is_double(k, (int)(g % (size_t)per))) {
        double v;
        memcpy(&v, buf + off, sizeof(v));
        return (int)v;
    }
    int v;
    memcpy(&v, buf + off, sizeof(v));
    return v;
}

/* Whether byte b of the buffer belongs to no element (a gap the receive must not write). */
static int in_gap(kind_t k, MPI_Aint extent, size_t b)
{
    size_t i = b / (size_t)extent;
    for (int e = 0; e < elems_per_item(k); e++) {
        size_t off = elem_off(k, extent, i, e);
        size_t len = is_double(k, e) ? sizeof(double) : sizeof(int);
        if (b >= off && b < off + len)
            return 0;
    }
    return 1;
}

typedef struct {
    kind_t send, recv;
    int m, n;  /* sender and receiver partitions */
    int elems; /* elements of the signature in the message */
} pairing_t;

/* The element counts divide into whole items on both sides. */
static const pairing_t pairings[] = {
    {T_VECTOR, T_DOUBLE, 4, 2, 3 * 8},
    {T_DOUBLE, T_VECTOR, 2, 4, 3 * 8},
    {T_VECTOR, T_INDEXED, 5, 3, 360},
    {T_RESIZED, T_VECTOR, 6, 3, 3 * 6 * 40},
    {T_INDEXED, T_RESIZED, 8, 8, 4 * 8 * 300},
    {T_DOUBLE_INT, T_STRUCT, 4, 2, 2 * 4 * 50},
    {T_STRUCT, T_DOUBLE_INT, 5, 1, 2 * 5 * 3},
    {T_VECTOR, T_VECTOR, 64, 16, 3 * 64 * 2},
    {T_RESIZED, T_DOUBLE, 1, 1, 1},
    {T_VECTOR, T_RESIZED, 2, 3, 3 * 2 * 4096},
};

static int nthreads = 1;

typedef struct {
    MPI_Request req;
    int npart, tid;
    /* receiver */
    char *buf;
    kind_t kind;
    MPI_Aint extent;
    int per_part; /* elements per receive partition */
    int it;
    const pairing_t *pr;
} worker_t;

static void check_part(worker_t *w, int p)
{
    for (int j = 0; j < w->per_part; j++) {
        size_t g = (size_t)p * (size_t)w->per_part + (size_t)j;
        int v = got(w->buf, w->kind, w->extent, g);
        if (!MTEST_CHECK(v == value(g, w->it),
                         "send %d recv %d M=%d N=%d iter %d: partition %d arrived but element "
                         "%zu is %d, expected %d",
                         w->pr->send, w->pr->recv, w->pr->m, w->pr->n, w->it, p, g, v,
                         value(g, w->it)))
            return;
    }
}

static void *mark(void *arg)
{
    worker_t *w = arg;
    for (int p = w->npart - 1 - w->tid; p >= 0; p -= nthreads)
        MPI_Pready(p, w->req);
    return NULL;
}

static void *poll_parts(void *arg)
{
    worker_t *w = arg;
    for (int p = w->tid; p < w->npart; p += nthreads) {
        int flag = 0;
        while (!flag)
            MPI_Parrived(w->req, p, &flag);
        check_part(w, p);
    }
    return NULL;
}

static void run_threads(void *(*fn)(void *), worker_t *w)
{
    pthread_t th[64];
    worker_t ws[64];
    for (int t = 1; t < nthreads; t++) {
        ws[t] = *w;
        ws[t].tid = t;
        pthread_create(&th[t], NULL, fn, &ws[t]);
    }
    ws[0] = *w;
    ws[0].tid = 0;
    fn(&ws[0]);
    for (int t = 1; t < nthreads; t++)
        pthread_join(th[t], NULL);
}

static void one_pairing(const pairing_t *pr, int rank, int tag)
{
    int is_send = rank == 0;
    kind_t k = is_send ? pr->send : pr->recv;
    int npart = is_send ? pr->m : pr->n;
    MPI_Aint extent;
    MPI_Datatype t = make_type(k, &extent);
    size_t items = (size_t)pr->elems / (size_t)elems_per_item(k);
    size_t bytes = items * (size_t)extent;
    char *buf = mtest_calloc(bytes, 1);
    MPI_Request req;
    if (is_send)
        MPI_Psend_init(buf, npart, (MPI_Count)(items / (size_t)npart), t, 1, tag, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &req);
    else
        MPI_Precv_init(buf, npart, (MPI_Count)(items / (size_t)npart), t, 0, tag, MPI_COMM_WORLD,
                       MPI_INFO_NULL, &req);
    if (t != MPI_DOUBLE && t != MPI_DOUBLE_INT)
        MPI_Type_free(&t);
    worker_t w = {.req = req, .npart = npart, .buf = buf, .kind = k, .extent = extent, .pr = pr};
    w.per_part = pr->elems / npart;
    for (int it = 0; it < NITER; it++) {
        w.it = it;
        if (is_send) {
            memset(buf, 0, bytes);
            for (size_t g = 0; g < (size_t)pr->elems; g++)
                put(buf, k, extent, g, it);
            MPI_Start(&req);
            run_threads(mark, &w);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            memset(buf, FILL, bytes);
            MPI_Start(&req);
            run_threads(poll_parts, &w);
            MPI_Status status;
            MPI_Wait(&req, &status);
            for (int p = 0; p < npart; p++)
                check_part(&w, p);
            for (size_t b = 0; b < bytes; b++) {
                if (in_gap(k, extent, b) && (unsigned char)buf[b] != FILL) {
                    MTEST_CHECK(0, "send %d recv %d iter %d: the receive wrote gap byte %zu",
                                pr->send, pr->recv, it, b);
                    break;
                }
            }
            MTEST_CHECK(status.MPI_SOURCE == 0 && status.MPI_TAG == tag, "status source %d tag %d",
                        status.MPI_SOURCE, status.MPI_TAG);
        }
    }
    MPI_Request_free(&req);
    free(buf);
}

int main(int argc, char **argv)
{
    const char *env = getenv("MTEST_NTHREADS");
    if (env != NULL && atoi(env) > 1)
        nthreads = atoi(env) > 64 ? 64 : atoi(env);
    int rank, size;
    if (nthreads > 1)
        mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    else
        mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int np = (int)(sizeof(pairings) / sizeof(pairings[0]));
    if (rank < 2)
        for (int k = 0; k < np; k++)
            one_pairing(&pairings[k], rank, 3);
    return mtest_finalize(0);
}
