/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Isend/MPI_Irecv (and the ready, synchronous and persistent forms) of small non-contiguous
 * datatypes: the messages Manifold packs into a per-thread send buffer and receives into a
 * packed copy unpacked at completion. Besides data round trips: thousands of sends in flight to
 * a receiver that is not listening (the transport then keeps some of the packed buffers, which
 * must not be reused), a receive cancelled, one freed in flight, one whose type is freed in
 * flight, a short and a truncated message, MPI_ANY_SOURCE, messages that arrived before their
 * receive, completion by MPI_Waitall, MPI_Testall and MPI_Request_get_status. Rank 0 sends,
 * rank 1 receives.
 */
#include "mtest.h"

#include <mpi.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAXN     600  /* doubles per message at most */
#define INFLIGHT 3000 /* messages sent before the receiver looks */
#define PER_MSG  4    /* doubles per in-flight message */

static int rank;
static double src[2 * MAXN], dst[2 * MAXN];

typedef struct particle {
    int id;
    double x;
    float w;
    double unsent;
} particle_t;

static void fill(double *a, int n, double base)
{
    for (int i = 0; i < n; i++)
        a[i] = base + i;
}

static MPI_Datatype vector_of(int n)
{
    MPI_Datatype vec;
    MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    return vec;
}

/* Every other double of dst came from src, the gaps kept -1. */
static void check_vector(int n, int got, const char *what)
{
    for (int i = 0; i < 2 * n; i++) {
        double want = (i % 2 == 0 && i / 2 < got) ? src[i] : -1.0;
        if (!MTEST_CHECK(dst[i] == want, "%s n=%d: dst[%d] = %g, expected %g", what, n, i, dst[i],
                         want))
            return;
    }
}

static void vector_roundtrip(int n, int tag)
{
    MPI_Datatype vec = vector_of(n);
    if (rank == 0) {
        fill(src, 2 * n, tag * 1000.0);
        MPI_Request req;
        MPI_Isend(src, 1, vec, 1, tag, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        fill(src, 2 * n, tag * 1000.0);
        fill(dst, 2 * MAXN, 0.0);
        for (int i = 0; i < 2 * MAXN; i++)
            dst[i] = -1.0;
        MPI_Request req;
        MPI_Status st;
        MPI_Irecv(dst, 1, vec, 0, tag, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, &st);
        int cnt = -1;
        MPI_Get_count(&st, MPI_DOUBLE, &cnt);
        MTEST_CHECK(cnt == n && st.MPI_SOURCE == 0 && st.MPI_TAG == tag,
                    "vector n=%d: count %d source %d tag %d", n, cnt, st.MPI_SOURCE, st.MPI_TAG);
        check_vector(n, n, "vector");
    }
    MPI_Type_free(&vec);
}

static MPI_Datatype particle_type(void)
{
    int lens[3] = {1, 1, 1};
    MPI_Aint disps[3] = {offsetof(particle_t, id), offsetof(particle_t, x),
                         offsetof(particle_t, w)};
    MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT}, fields, t;
    MPI_Type_create_struct(3, lens, disps, types, &fields);
    MPI_Type_create_resized(fields, 0, sizeof(particle_t), &t);
    MPI_Type_free(&fields);
    MPI_Type_commit(&t);
    return t;
}

/* Particles through MPI_Irsend (the receive is posted before the barrier) and MPI_Issend. */
static void struct_roundtrip(int n, int tag)
{
    MPI_Datatype t = particle_type();
    particle_t *p = calloc((size_t)n, sizeof(*p));
    for (int pass = 0; pass < 2; pass++) {
        MPI_Request req;
        if (rank == 0) {
            for (int i = 0; i < n; i++)
                p[i] = (particle_t){i + tag, i * 0.5 + pass, (float)i * 0.25f, 7.0};
            MPI_Barrier(MPI_COMM_WORLD);
            if (pass == 0)
                MPI_Irsend(p, n, t, 1, tag, MPI_COMM_WORLD, &req);
            else
                MPI_Issend(p, n, t, 1, tag, MPI_COMM_WORLD, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int i = 0; i < n; i++)
                p[i] = (particle_t){-1, -1.0, -1.0f, -1.0};
            MPI_Irecv(p, n, t, 0, tag, MPI_COMM_WORLD, &req);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Status st;
            MPI_Wait(&req, &st);
            int cnt = -1;
            MPI_Get_count(&st, t, &cnt);
            MTEST_CHECK(cnt == n, "struct n=%d pass %d: count %d", n, pass, cnt);
            for (int i = 0; i < n; i++) {
                if (!MTEST_CHECK(p[i].id == i + tag && p[i].x == i * 0.5 + pass &&
                                     p[i].w == (float)i * 0.25f && p[i].unsent == -1.0,
                                 "struct n=%d pass %d: particle %d = {%d %g %g %g}", n, pass, i,
                                 p[i].id, p[i].x, (double)p[i].w, p[i].unsent))
                    break;
            }
        } else {
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    free(p);
    MPI_Type_free(&t);
}

/* Many small sends before the receiver listens: each from its own part of the buffer, with
 * values of its own, so a packed buffer the transport kept and the library then reused would
 * show as another message's data. */
static void many_in_flight(void)
{
    MPI_Datatype vec = vector_of(PER_MSG);
    size_t per = 2 * PER_MSG;
    double *buf = malloc(INFLIGHT * per * sizeof(double));
    MPI_Request *reqs = malloc(INFLIGHT * sizeof(MPI_Request));
    if (rank == 0) {
        for (size_t i = 0; i < INFLIGHT * per; i++)
            buf[i] = (double)i;
        for (int m = 0; m < INFLIGHT; m++)
            MPI_Isend(buf + m * per, 1, vec, 1, 100, MPI_COMM_WORLD, &reqs[m]);
        MPI_Waitall(INFLIGHT, reqs, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        usleep(200000); /* let the sender's queues fill */
        for (size_t i = 0; i < INFLIGHT * per; i++)
            buf[i] = -1.0;
        for (int m = 0; m < INFLIGHT; m++)
            MPI_Irecv(buf + m * per, 1, vec, 0, 100, MPI_COMM_WORLD, &reqs[m]);
        MPI_Waitall(INFLIGHT, reqs, MPI_STATUSES_IGNORE);
        for (size_t i = 0; i < INFLIGHT * per; i++) {
            double want = i % 2 == 0 ? (double)i : -1.0;
            if (!MTEST_CHECK(buf[i] == want, "in flight: element %zu = %g, expected %g", i, buf[i],
                             want))
                break;
        }
    }
    free(reqs);
    free(buf);
    MPI_Type_free(&vec);
}

static void reset_dst(void)
{
    for (int i = 0; i < 2 * MAXN; i++)
        dst[i] = -1.0;
}

/* Receives that end otherwise: cancelled, freed in flight (with its type freed too), the type
 * freed before the wait, short, truncated, from MPI_ANY_SOURCE. */
static void special_receives(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    fill(src, 2 * MAXN, 500.0);
    if (rank == 0) {
        MPI_Datatype vec = vector_of(4);
        MPI_Send(src, 1, vec, 1, 201, dup); /* freed in flight */
        MPI_Send(src, 1, vec, 1, 202, dup); /* marks the one before as arrived */
        MPI_Send(src, 1, vec, 1, 203, dup); /* its type freed before the wait */
        double packed[6];                   /* the packed form of src's even elements */
        for (int i = 0; i < 6; i++)
            packed[i] = src[2 * i];
        MPI_Send(packed, 2, MPI_DOUBLE, 1, 204, dup); /* short */
        MPI_Send(packed, 6, MPI_DOUBLE, 1, 205, dup); /* truncated */
        MPI_Send(src, 1, vec, 1, 206, dup);           /* any source */
        MPI_Type_free(&vec);
    } else if (rank == 1) {
        MPI_Datatype vec = vector_of(4);
        MPI_Request req;
        MPI_Status st;
        int flag = 0, cnt = -1, rc;

        reset_dst();
        MPI_Irecv(dst, 1, vec, 0, 299, dup, &req);
        MPI_Cancel(&req);
        MPI_Wait(&req, &st);
        MPI_Test_cancelled(&st, &flag);
        MTEST_CHECK(flag, "the cancelled receive is not marked cancelled");
        check_vector(4, 0, "cancelled");

        reset_dst();
        MPI_Datatype vec2 = vector_of(4);
        MPI_Irecv(dst, 1, vec2, 0, 201, dup, &req);
        MPI_Request_free(&req);
        MPI_Type_free(&vec2);
        double other[8];
        MPI_Recv(other, 1, vec, 0, 202, dup, MPI_STATUS_IGNORE);
        check_vector(4, 4, "freed in flight");

        reset_dst();
        vec2 = vector_of(4);
        MPI_Irecv(dst, 1, vec2, 0, 203, dup, &req);
        MPI_Type_free(&vec2);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        check_vector(4, 4, "type freed before the wait");

        reset_dst();
        MPI_Irecv(dst, 1, vec, 0, 204, dup, &req);
        MPI_Wait(&req, &st);
        MPI_Get_count(&st, vec, &cnt);
        MTEST_CHECK(cnt == MPI_UNDEFINED, "short: count %d", cnt);
        MPI_Get_elements(&st, vec, &cnt);
        MTEST_CHECK(cnt == 2, "short: elements %d", cnt);
        check_vector(4, 2, "short");

        reset_dst();
        MPI_Irecv(dst, 1, vec, 0, 205, dup, &req);
        rc = MPI_Wait(&req, &st);
        MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Wait");
        /* the gaps stay untouched whatever landed */
        for (int i = 1; i < 2 * MAXN; i += 2)
            if (!MTEST_CHECK(dst[i] == -1.0, "truncated: gap %d = %g", i, dst[i]))
                break;
        if (mtest_is_manifold()) /* untouched, as a predefined receive's buffer */
            check_vector(4, 0, "truncated");

        reset_dst();
        MPI_Irecv(dst, 1, vec, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &req);
        MPI_Wait(&req, &st);
        MTEST_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 206, "any source: source %d tag %d",
                    st.MPI_SOURCE, st.MPI_TAG);
        check_vector(4, 4, "any source");
        MPI_Type_free(&vec);
    }
    MPI_Comm_free(&dup);
}

/* Receives completed by the transport's own completion (which unpacks them): messages that
 * arrived before the receive was posted (they complete inside MPI_Irecv), then completion
 * through MPI_Waitall and MPI_Testall with statuses and MPI_Request_get_status, at a size on
 * the stack limit's side and one above it (a staged temporary). */
static void arrived_first(int n, int tag)
{
    MPI_Datatype vec = vector_of(n);
    fill(src, 2 * MAXN, 700.0 + n);
    if (rank == 0) {
        MPI_Send(src, 1, vec, 1, tag, MPI_COMM_WORLD);
        MPI_Send(src, 1, vec, 1, tag + 1, MPI_COMM_WORLD);
        MPI_Send(src, 1, vec, 1, tag + 2, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* the messages are at rank 1 (or on their way) */
    if (rank == 1) {
        MPI_Request reqs[2];
        MPI_Status sts[2];
        int flag = 0, cnt = -1;

        reset_dst();
        MPI_Irecv(dst, 1, vec, 0, tag, MPI_COMM_WORLD, &reqs[0]);
        reqs[1] = MPI_REQUEST_NULL;
        MPI_Waitall(2, reqs, sts);
        MPI_Get_count(&sts[0], vec, &cnt);
        MTEST_CHECK(cnt == 1 && sts[0].MPI_TAG == tag && sts[0].MPI_SOURCE == 0,
                    "arrived first, Waitall n=%d: count %d tag %d source %d", n, cnt,
                    sts[0].MPI_TAG, sts[0].MPI_SOURCE);
        check_vector(n, n, "arrived first, Waitall");

        reset_dst();
        MPI_Irecv(dst, 1, vec, MPI_ANY_SOURCE, tag + 1, MPI_COMM_WORLD, &reqs[0]);
        do {
            MPI_Request_get_status(reqs[0], &flag, &sts[0]);
        } while (!flag);
        check_vector(n, n, "arrived first, Request_get_status"); /* before the request is freed */
        MPI_Get_count(&sts[0], vec, &cnt);
        MTEST_CHECK(cnt == 1, "arrived first, Request_get_status n=%d: count %d", n, cnt);
        MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
        MTEST_CHECK(reqs[0] == MPI_REQUEST_NULL, "the waited request is not MPI_REQUEST_NULL");

        reset_dst();
        MPI_Irecv(dst, 1, vec, 0, tag + 2, MPI_COMM_WORLD, &reqs[0]);
        static double spare[2 * MAXN];
        MPI_Irecv(spare, 1, vec, 0, tag + 3, MPI_COMM_WORLD, &reqs[1]); /* never matched */
        MPI_Cancel(&reqs[1]);
        flag = 0;
        while (!flag)
            MPI_Testall(2, reqs, &flag, sts);
        check_vector(n, n, "arrived first, Testall");
        MPI_Test_cancelled(&sts[1], &flag);
        MTEST_CHECK(flag, "Testall: the unmatched receive is not marked cancelled");
    }
    MPI_Type_free(&vec);
}

/* A type of no data with an extent: items that pack to nothing. */
static void zero_size(void)
{
    MPI_Datatype none, z;
    MPI_Type_contiguous(0, MPI_INT, &none);
    MPI_Type_create_resized(none, 0, 16, &z);
    MPI_Type_free(&none);
    MPI_Type_commit(&z);
    double buf[8];
    for (int i = 0; i < 8; i++)
        buf[i] = -1.0;
    MPI_Request req;
    if (rank == 0) {
        MPI_Isend(buf, 3, z, 1, 400, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        MPI_Status st;
        MPI_Irecv(buf, 3, z, 0, 400, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, &st);
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        MTEST_CHECK(st.MPI_SOURCE == 0 && cnt == 0, "zero size: source %d bytes %d", st.MPI_SOURCE,
                    cnt);
        for (int i = 0; i < 8; i++)
            MTEST_CHECK(buf[i] == -1.0, "zero size: buf[%d] = %g", i, buf[i]);
    }
    MPI_Type_free(&z);
}

/* Persistent requests, restarted with new data each time. */
static void persistent(void)
{
    MPI_Datatype vec = vector_of(8);
    MPI_Request req;
    if (rank == 0)
        MPI_Send_init(src, 1, vec, 1, 300, MPI_COMM_WORLD, &req);
    else if (rank == 1)
        MPI_Recv_init(dst, 1, vec, 0, 300, MPI_COMM_WORLD, &req);
    for (int round = 0; round < 3 && rank < 2; round++) {
        fill(src, 16, round * 100.0);
        reset_dst();
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        if (rank == 1)
            check_vector(8, 8, "persistent");
    }
    if (rank < 2)
        MPI_Request_free(&req);
    MPI_Type_free(&vec);
}

static unsigned long long temp_max(void)
{
    return mtest_pvar_highwater("dtype_temp_max");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int sizes[] = {1, 2, 3, 8, 64, 255, 256};
    for (int i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++)
        vector_roundtrip(sizes[i], i + 1);
    /* the sends above went out at once: no packed copy outlived its call */
    int path_check = mtest_is_manifold() && getenv("MANIFOLD_DT_STACK_BYTES") == NULL;
    if (path_check && rank == 0) {
        unsigned long long v = temp_max();
        MTEST_CHECK(v == 0, "a small immediate send left a packed copy of %llu bytes", v);
    }
    many_in_flight();
    /* and some of those the transport kept: their packed copies went to their requests */
    if (path_check && rank == 0) {
        unsigned long long v = temp_max();
        MTEST_CHECK(v == PER_MSG * sizeof(double), "no in-flight send kept its copy (%llu)", v);
    }
    vector_roundtrip(513, 10); /* above the stack limit: staged */
    vector_roundtrip(MAXN, 11);
    struct_roundtrip(1, 20);
    struct_roundtrip(4, 21);
    struct_roundtrip(100, 22);
    special_receives();
    arrived_first(8, 30);
    arrived_first(MAXN, 40);
    zero_size();
    persistent();
    return mtest_finalize(0);
}
