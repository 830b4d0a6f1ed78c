/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Isendrecv and MPI_Isendrecv_replace (and their _c forms) on a ring:
 * - each rank exchanges with both neighbours at once (sizes from 0 to past the rendezvous
 *   switch), completes with MPI_Wait, MPI_Test loops and MPI_Waitall over a mix, and gets the
 *   receive's source, tag and count in the status;
 * - a derived (strided) receive type, and the replace form with a strided type, land right;
 * - MPI_ANY_SOURCE on the receive side, MPI_PROC_NULL on either side;
 * - a request freed in flight still delivers its data (checked after a barrier);
 * - MPI_Cancel leaves the request to complete normally (not cancelled);
 * - a too-small receive yields MPI_ERR_TRUNCATE; bad arguments give their error class.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

static int rank, size, left, right;

static void fill(int *buf, int n, int who, int salt)
{
    for (int i = 0; i < n; i++)
        buf[i] = who * 100000 + salt * 1000 + i;
}

static int check_buf(const int *buf, int n, int who, int salt, const char *what)
{
    for (int i = 0; i < n; i++)
        if (buf[i] != who * 100000 + salt * 1000 + i)
            return MTEST_CHECK(0, "%s: element %d is %d, want %d", what, i, buf[i],
                               who * 100000 + salt * 1000 + i);
    return 1;
}

static void check_status(const MPI_Status *st, int source, int tag, int count, const char *what)
{
    int got = -1, cancelled = -1;
    MPI_Get_count(st, MPI_INT, &got);
    MPI_Test_cancelled(st, &cancelled);
    MTEST_CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && got == count && !cancelled,
                "%s: status source %d tag %d count %d cancelled %d, want %d %d %d", what,
                st->MPI_SOURCE, st->MPI_TAG, got, cancelled, source, tag, count);
}

/* Both directions of the ring at once, n ints each way. */
static void ring(int n, int how)
{
    int *sr = mtest_calloc((size_t)n + 1, sizeof(int)),
        *sl = mtest_calloc((size_t)n + 1, sizeof(int));
    int *fromleft = mtest_calloc((size_t)n + 1, sizeof(int));
    int *fromright = mtest_calloc((size_t)n + 1, sizeof(int));
    MPI_Request reqs[2];
    MPI_Status sts[2];
    fill(sr, n, rank, 1);
    fill(sl, n, rank, 2);
    MPI_Isendrecv(sr, n, MPI_INT, right, 1, fromleft, n, MPI_INT, left, 1, MPI_COMM_WORLD,
                  &reqs[0]);
    MPI_Isendrecv_c(sl, n, MPI_INT, left, 2, fromright, n, MPI_INT, MPI_ANY_SOURCE, 2,
                    MPI_COMM_WORLD, &reqs[1]);
    if (how == 0) {
        MPI_Waitall(2, reqs, sts);
    } else if (how == 1) {
        MPI_Wait(&reqs[1], &sts[1]);
        MPI_Wait(&reqs[0], &sts[0]);
    } else {
        int flag = 0;
        while (!flag)
            MPI_Testall(2, reqs, &flag, sts);
    }
    MTEST_CHECK(reqs[0] == MPI_REQUEST_NULL && reqs[1] == MPI_REQUEST_NULL,
                "completion left a request");
    check_status(&sts[0], left, 1, n, "ring from the left");
    check_status(&sts[1], right, 2, n, "ring from the right");
    check_buf(fromright, n, right, 2, "ring from the right");
    check_buf(fromleft, n, left, 1, "ring from the left");
    free(sr);
    free(sl);
    free(fromleft);
    free(fromright);
}

static void derived_and_replace(void)
{
    enum { N = 64 };
    int out[N], strided[2 * N], packed[N];
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    MPI_Request req;
    MPI_Status st;

    fill(out, N, rank, 3);
    for (int i = 0; i < 2 * N; i++)
        strided[i] = -1;
    MPI_Isendrecv(out, N, MPI_INT, right, 3, strided, 1, every_other, left, 3, MPI_COMM_WORLD,
                  &req);
    MPI_Wait(&req, &st);
    check_status(&st, left, 3, N, "derived receive");
    for (int i = 0; i < N; i++) {
        packed[i] = strided[2 * i];
        MTEST_CHECK(strided[2 * i + 1] == -1, "derived receive wrote the gap at %d", 2 * i + 1);
    }
    check_buf(packed, N, left, 3, "derived receive");

    /* replace with the strided type: what was sent is what the right neighbour gets */
    for (int i = 0; i < N; i++)
        strided[2 * i] = rank * 100000 + 4000 + i;
    MPI_Isendrecv_replace(strided, 1, every_other, right, 4, left, 4, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &st);
    check_status(&st, left, 4, N, "replace");
    for (int i = 0; i < N; i++)
        packed[i] = strided[2 * i];
    check_buf(packed, N, left, 4, "replace");

    /* contiguous replace, _c form, large enough for the rendezvous path */
    int n = 1 << 16;
    int *big = mtest_calloc((size_t)n, sizeof(int));
    fill(big, n, rank, 5);
    MPI_Isendrecv_replace_c(big, n, MPI_INT, right, 5, left, 5, MPI_COMM_WORLD, &req);
    int flag = 0;
    while (!flag)
        MPI_Test(&req, &flag, &st);
    check_status(&st, left, 5, n, "large replace");
    check_buf(big, n, left, 5, "large replace");
    free(big);
    MPI_Type_free(&every_other);
}

static void proc_null_free_cancel(void)
{
    int v = rank, got = -7;
    MPI_Request req;
    MPI_Status st;

    /* receive from MPI_PROC_NULL: an empty status from MPI_PROC_NULL, the send still goes */
    MPI_Isendrecv(&v, 1, MPI_INT, right, 6, &got, 1, MPI_INT, MPI_PROC_NULL, 6, MPI_COMM_WORLD,
                  &req);
    MPI_Wait(&req, &st);
    MTEST_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && got == -7, "PROC_NULL receive: source %d got %d",
                st.MPI_SOURCE, got);
    MPI_Recv(&got, 1, MPI_INT, left, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MTEST_CHECK(got == left, "the send beside a PROC_NULL receive brought %d", got);
    MPI_Isendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 7, &got, 1, MPI_INT, MPI_PROC_NULL, 7,
                  MPI_COMM_WORLD, &req);
    MPI_Wait(&req, &st);
    MTEST_CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "all-PROC_NULL: source %d", st.MPI_SOURCE);

    /* freed in flight: the data still arrives */
    got = -1;
    MPI_Isendrecv(&v, 1, MPI_INT, right, 8, &got, 1, MPI_INT, left, 8, MPI_COMM_WORLD, &req);
    MPI_Request_free(&req);
    MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle");
    /* the left neighbour's message is only sent when it reaches its call, so spin on the buffer
     * through a barrier plus polls */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < 100000 && got != left; i++) {
        int flag;
        MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    MTEST_CHECK(got == left, "a freed Isendrecv delivered %d, want %d", got, left);
    MPI_Barrier(MPI_COMM_WORLD);

    /* cancel: the exchange completes normally */
    got = -1;
    MPI_Isendrecv(&v, 1, MPI_INT, right, 9, &got, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &req);
    MPI_Cancel(&req);
    MPI_Wait(&req, &st);
    check_status(&st, left, 9, 1, "after MPI_Cancel");
    MTEST_CHECK(got == left, "after MPI_Cancel got %d", got);
}

static void errors(void)
{
    int v[4] = {rank, rank, rank, rank}, small = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status st;

    MPI_Isendrecv(v, 4, MPI_INT, right, 10, &small, 1, MPI_INT, left, 10, MPI_COMM_WORLD, &req);
    int rc = MPI_Wait(&req, &st);
    MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Wait");

    MTEST_CHECK_ERR(
        MPI_Isendrecv(v, 1, MPI_INT, size, 0, &small, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &req),
        MPI_ERR_RANK, "MPI_Isendrecv");
    MTEST_CHECK_ERR(
        MPI_Isendrecv(v, 1, MPI_INT, right, 0, &small, -1, MPI_INT, left, 0, MPI_COMM_WORLD, &req),
        MPI_ERR_COUNT, "MPI_Isendrecv");
    MTEST_CHECK_ERR(
        MPI_Isendrecv(v, 1, MPI_INT, right, 0, &small, 1, MPI_INT, left, 0, MPI_COMM_WORLD, NULL),
        MPI_ERR_ARG, "MPI_Isendrecv");
    MTEST_CHECK_ERR(
        MPI_Isendrecv_replace(v, 1, MPI_DATATYPE_NULL, right, 0, left, 0, MPI_COMM_WORLD, &req),
        MPI_ERR_TYPE, "MPI_Isendrecv_replace");
    MTEST_CHECK_ERR(MPI_Isendrecv_replace(v, 1, MPI_INT, right, 0, left, 0, MPI_COMM_NULL, &req),
                    MPI_ERR_COMM, "MPI_Isendrecv_replace");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    left = (rank + size - 1) % size;
    right = (rank + 1) % size;
    int sizes[] = {0, 1, 17, 1024, 4096, 1 << 15};
    for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        for (int how = 0; how < 3; how++)
            ring(sizes[i], how);
    derived_and_replace();
    proc_null_free_cancel();
    errors();
    return mtest_finalize(mtest_error_count());
}
