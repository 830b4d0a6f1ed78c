/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking MPI_Send/MPI_Recv of small non-contiguous datatypes, the messages Manifold packs on
 * the caller's stack (up to MANIFOLD_DT_STACK_BYTES, 4 KiB by default) and, above that, into a
 * temporary the call keeps to itself: sizes on both sides of the limit, a receive type other
 * than the send type, a short message, truncation, MPI_ANY_SOURCE, and argument errors that must
 * still be reported. On Manifold the MPI_T variable dtype_temp_max tells the two paths apart.
 * Rank 0 sends, rank 1 receives.
 */
#include "mtest.h"

#include <mpi.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 1024 /* doubles per message at most */

static int rank;
static double src[2 * MAXN], dst[2 * MAXN];

static void fill(double *a, int n, double base)
{
    for (int i = 0; i < n; i++)
        a[i] = base + i;
}

static unsigned long long temp_max(void)
{
    return mtest_pvar_highwater("dtype_temp_max");
}

/* n doubles every other one: blocking on both sides, every element checked, the gaps untouched */
static void vector_roundtrip(int n, int tag)
{
    MPI_Datatype vec;
    MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    if (rank == 0) {
        fill(src, 2 * n, tag * 10000.0);
        MPI_Send(src, 1, vec, 1, tag, MPI_COMM_WORLD);
    } else if (rank == 1) {
        fill(dst, 2 * MAXN, -1.0);
        MPI_Status st;
        MPI_Recv(dst, 1, vec, 0, tag, MPI_COMM_WORLD, &st);
        int cnt = -1;
        MPI_Get_count(&st, vec, &cnt);
        MTEST_CHECK(cnt == 1, "%d doubles: count %d, expected 1", n, cnt);
        int bad = -1;
        for (int i = 0; i < 2 * n && bad < 0; i++) {
            double want = i % 2 == 0 ? tag * 10000.0 + i : -1.0 + i;
            if (dst[i] != want)
                bad = i;
        }
        MTEST_CHECK(bad < 0, "%d doubles: element %d is %g", n, bad, bad >= 0 ? dst[bad] : 0.0);
        MTEST_CHECK(dst[2 * n] == -1.0 + 2 * n, "%d doubles: written past the end", n);
    }
    MPI_Type_free(&vec);
}

/* A vector sent, received as a struct of an int array and doubles with a hole, then as plain
 * doubles: only the type signatures must match. */
static void other_type(void)
{
    MPI_Datatype vec, rtype;
    MPI_Type_vector(40, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    int lens[2] = {10, 30};
    MPI_Aint disps[2] = {0, 15 * sizeof(double)};
    MPI_Type_create_hindexed(2, lens, disps, MPI_DOUBLE, &rtype);
    MPI_Type_commit(&rtype);
    if (rank == 0) {
        fill(src, 80, 0.0);
        MPI_Send(src, 1, vec, 1, 20, MPI_COMM_WORLD);
        MPI_Send(src, 1, vec, 1, 21, MPI_COMM_WORLD);
    } else if (rank == 1) {
        fill(dst, 80, -100.0);
        MPI_Recv(dst, 1, rtype, 0, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int errs = 0;
        for (int i = 0; i < 10; i++)
            errs += dst[i] != 2.0 * i;
        for (int i = 10; i < 15; i++)
            errs += dst[i] != -100.0 + i;
        for (int i = 0; i < 30; i++)
            errs += dst[15 + i] != 2.0 * (10 + i);
        MTEST_CHECK(errs == 0, "vector received as hindexed: %d wrong elements", errs);
        memset(dst, 0, 40 * sizeof(double));
        MPI_Recv(dst, 40, MPI_DOUBLE, 0, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        errs = 0;
        for (int i = 0; i < 40; i++)
            errs += dst[i] != 2.0 * i;
        MTEST_CHECK(errs == 0, "vector received as MPI_DOUBLE: %d wrong elements", errs);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&rtype);
}

/* A shorter message fills a prefix and reports its length; a longer one is MPI_ERR_TRUNCATE. */
static void short_and_truncate(void)
{
    MPI_Datatype vec;
    MPI_Type_vector(100, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    if (rank == 0) {
        fill(src, 200, 0.0);
        MPI_Send(src, 30, MPI_DOUBLE, 1, 30, MPI_COMM_WORLD);
        MPI_Send(src, 101, MPI_DOUBLE, 1, 31, MPI_COMM_WORLD);
    } else if (rank == 1) {
        fill(dst, 200, -1.0);
        MPI_Status st;
        MPI_Recv(dst, 1, vec, 0, 30, MPI_COMM_WORLD, &st);
        int cnt = 0, elems = 0;
        MPI_Get_count(&st, vec, &cnt);
        MPI_Get_elements(&st, vec, &elems);
        MTEST_CHECK(cnt == MPI_UNDEFINED && elems == 30, "short message: count %d elements %d", cnt,
                    elems);
        int errs = 0;
        for (int i = 0; i < 30; i++)
            errs += dst[2 * i] != (double)i;
        errs += dst[60] != 59.0; /* -1 + 60: beyond what arrived */
        MTEST_CHECK(errs == 0, "short message: %d wrong elements", errs);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        fill(dst, 200, -1.0);
        int rc = MPI_Recv(dst, 1, vec, 0, 31, MPI_COMM_WORLD, &st);
        MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Recv");
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        /* nothing of a truncated message is defined: the buffer stays as it was (Manifold; a
         * predefined receive's buffer too), never the copy's stale bytes */
        errs = 0;
        for (int i = 0; mtest_is_manifold() && i < 200; i++)
            errs += dst[i] != -1.0 + i;
        MTEST_CHECK(errs == 0, "truncated message: %d elements changed", errs);
    }
    MPI_Type_free(&vec);
}

/* MPI_ANY_SOURCE and MPI_ANY_TAG with a derived type: the status names the sender. */
static void any_source(void)
{
    MPI_Datatype pair;
    MPI_Type_vector(2, 1, 3, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, b[8] = {0};
    if (rank == 0) {
        MPI_Send(a, 2, pair, 1, 40, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Status st;
        MPI_Recv(b, 2, pair, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
        int cnt = 0;
        MPI_Get_count(&st, pair, &cnt);
        MTEST_CHECK(st.MPI_SOURCE == 0 && st.MPI_TAG == 40 && cnt == 2,
                    "any source: source %d tag %d count %d", st.MPI_SOURCE, st.MPI_TAG, cnt);
        /* two ints 3 apart, items 4 ints apart (the extent): 0 3 | 4 7 */
        MTEST_CHECK(b[0] == 1 && b[3] == 4 && b[4] == 5 && b[7] == 8 && b[1] == 0 && b[6] == 0,
                    "any source: got %d %d %d %d", b[0], b[3], b[4], b[7]);
    }
    MPI_Type_free(&pair);
}

/* Bad arguments with a small derived type reach the error handler, and nothing is sent. */
static void errors(void)
{
    MPI_Datatype vec, open;
    MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_vector(4, 1, 2, MPI_DOUBLE, &open); /* not committed */
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Send(src, 1, vec, size, 50, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Send");
    rc = MPI_Recv(dst, 1, vec, 0, -5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_TAG, "MPI_Recv");
    rc = MPI_Send(src, 1, open, 0, 50, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Send");
    rc = MPI_Recv(dst, -1, vec, 0, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Recv");
    /* The blocking sends test the datatype handle before anything else and resolve the
     * communicator on the derived path themselves: a bad communicator, and handles just
     * outside the predefined range, still reach the handler. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rc = MPI_Send(src, 1, vec, 0, 50, MPI_COMM_NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Send");
    rc = MPI_Ssend_c(src, 1, vec, 0, 50, MPI_COMM_NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Ssend_c");
    if (mtest_is_manifold()) {
        rc = MPI_Ssend(src, 1, (MPI_Datatype)(uintptr_t)0x1ff, 0, 50, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Ssend");
        rc = MPI_Rsend(src, 1, (MPI_Datatype)(uintptr_t)0x300, 0, 50, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Rsend");
        rc = MPI_Send(src, 1, MPI_DATATYPE_NULL, 0, 50, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Send");
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    /* MPI_PROC_NULL: at once, with the empty status */
    MPI_Status st;
    MPI_Send(src, 1, vec, MPI_PROC_NULL, 50, MPI_COMM_WORLD);
    MPI_Recv(dst, 1, vec, MPI_PROC_NULL, 50, MPI_COMM_WORLD, &st);
    int cnt = -1;
    MPI_Get_count(&st, vec, &cnt);
    MTEST_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && cnt == 0, "proc null: source %d count %d",
                st.MPI_SOURCE, cnt);
    /* The same through the immediate forms and blocking ones on a communicator of its own:
     * the error goes to that communicator's handler (MPI_COMM_WORLD's would abort). */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Request req = MPI_REQUEST_NULL;
    rc = MPI_Isend(src, 1, open, 0, 50, dup, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Isend");
    rc = MPI_Irecv(dst, 1, vec, size, 50, dup, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Irecv");
    rc = MPI_Isend(src, -2, vec, 0, 50, dup, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Isend");
    rc = MPI_Irecv(dst, 1, vec, 0, -7, dup, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_TAG, "MPI_Irecv");
    rc = MPI_Send(src, 1, vec, 0, -7, dup);
    MTEST_CHECK_ERR(rc, MPI_ERR_TAG, "MPI_Send");
    rc = MPI_Recv(dst, 1, open, 0, 50, dup, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Recv");
    rc = MPI_Isend(src, 1, vec, MPI_PROC_NULL, 50, dup, &req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Isend to MPI_PROC_NULL: %d", rc);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    rc = MPI_Irecv(dst, 1, vec, MPI_PROC_NULL, 50, dup, &req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Irecv from MPI_PROC_NULL: %d", rc);
    MPI_Wait(&req, &st);
    MTEST_CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "proc null: source %d", st.MPI_SOURCE);
    MPI_Comm_free(&dup);
    MPI_Type_free(&vec);
    MPI_Type_free(&open);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* up to the default stack limit (4 KiB: 512 doubles) no temporary may be made */
    int check_temps = mtest_is_manifold() && getenv("MANIFOLD_DT_STACK_BYTES") == NULL;
    int sizes[] = {1, 2, 8, 64, 255, 256, 511, 512};
    for (int i = 0; i < (int)(sizeof(sizes) / sizeof(sizes[0])); i++)
        vector_roundtrip(sizes[i], i + 1);
    other_type();
    short_and_truncate();
    any_source();
    if (check_temps) {
        unsigned long long v = temp_max();
        MTEST_CHECK(v == 0, "a message of at most 4 KiB made a temporary of %llu bytes", v);
    }
    /* just above: a temporary (below the default streaming range, 5-8 KiB) */
    vector_roundtrip(513, 10);
    vector_roundtrip(600, 11);
    if (check_temps) {
        unsigned long long v = temp_max();
        MTEST_CHECK(rank > 1 || v >= 4800, "dtype_temp_max %llu missed a 4800-byte temporary", v);
    }
    errors();
    return mtest_finalize(0);
}
