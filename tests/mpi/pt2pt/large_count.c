/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The large-count (_c) point-to-point functions with MPI_Count arguments, between ranks 0
 * and 1: MPI_Send_c, MPI_Ssend_c, MPI_Bsend_c (buffer from MPI_Buffer_attach_c, returned
 * by MPI_Buffer_detach_c), MPI_Rsend_c, their nonblocking forms, the persistent
 * MPI_*send_init_c with MPI_Recv_init_c, MPI_Recv_c, MPI_Irecv_c, MPI_Sendrecv_c,
 * MPI_Sendrecv_replace_c, MPI_Mrecv_c and MPI_Imrecv_c, each with a small and a
 * rendezvous-sized count; received counts are read with MPI_Get_count_c and
 * MPI_Get_elements_c. The counts fit in an int; large_count_2g sends more than 2^31 bytes.
 * A count whose byte length a size_t cannot hold (2^62 + 1 MPI_INTs, or 2^32 items of a 4 GiB
 * type) is MPI_ERR_COUNT for sends, receives and a collective, not a shortened message.
 */
#include "mtest.h"

#include <stdlib.h>

#define TAG_POSTED 1
#define TAG_DATA   2
#define NKINDS     16

static const char *const kind_names[NKINDS] = {"MPI_Send_c",       "MPI_Ssend_c",
                                               "MPI_Bsend_c",      "MPI_Rsend_c",
                                               "MPI_Isend_c",      "MPI_Issend_c",
                                               "MPI_Ibsend_c",     "MPI_Irsend_c",
                                               "MPI_Send_init_c",  "MPI_Ssend_init_c",
                                               "MPI_Bsend_init_c", "MPI_Rsend_init_c",
                                               "MPI_Sendrecv_c",   "MPI_Sendrecv_replace_c",
                                               "MPI_Mrecv_c",      "MPI_Imrecv_c"};
enum { KIND_RSEND = 3, KIND_IRSEND = 7, KIND_RSEND_INIT = 11, KIND_SENDRECV = 12 };

static int rank, peer;

static int is_ready_mode(int kind)
{
    return kind == KIND_RSEND || kind == KIND_IRSEND || kind == KIND_RSEND_INIT;
}

static void start_and_wait(int rc, MPI_Request *req, int persistent)
{
    if (rc != MPI_SUCCESS) {
        return;
    }
    if (persistent) {
        MPI_Start(req);
    }
    MPI_Wait(req, MPI_STATUS_IGNORE);
    if (persistent) {
        MPI_Request_free(req);
    }
}

static int send_kind(int kind, const void *buf, MPI_Count n)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;

    switch (kind) {
    case 0: return MPI_Send_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD);
    case 1: return MPI_Ssend_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD);
    case 2: return MPI_Bsend_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD);
    case 3: return MPI_Rsend_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD);
    case 4: rc = MPI_Isend_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req); break;
    case 5: rc = MPI_Issend_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req); break;
    case 6: rc = MPI_Ibsend_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req); break;
    case 7: rc = MPI_Irsend_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req); break;
    case 8: rc = MPI_Send_init_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req); break;
    case 9: rc = MPI_Ssend_init_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req); break;
    case 10: rc = MPI_Bsend_init_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req); break;
    default: rc = MPI_Rsend_init_c(buf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req); break;
    }
    start_and_wait(rc, &req, kind >= 8);
    return rc;
}

static void check_received(const MPI_Status *status, const int *buf, MPI_Count n, unsigned seed,
                           const char *what)
{
    MPI_Count count = -1, elements = -1;

    MPI_Get_count_c(status, MPI_INT, &count);
    MPI_Get_elements_c(status, MPI_INT, &elements);
    MTEST_CHECK(count == n && elements == n && status->MPI_SOURCE == peer,
                "%s of %lld ints: count %lld elements %lld source %d", what, (long long)n,
                (long long)count, (long long)elements, status->MPI_SOURCE);
    MTEST_CHECK(mtest_check_fill(buf, (size_t)n * sizeof(int), seed) < 0,
                "%s of %lld ints: wrong data", what, (long long)n);
}

/* Rank 0 sends with the send function of this kind, rank 1 receives. */
static void one_way(int kind, MPI_Count n, int *sbuf, int *rbuf)
{
    unsigned seed = (unsigned)(kind * 7 + n % 13);
    MPI_Request req;
    MPI_Status status;
    int rc;

    if (rank == 0) {
        mtest_fill(sbuf, (size_t)n * sizeof(int), seed);
        if (is_ready_mode(kind)) {
            MPI_Recv_c(NULL, 0, MPI_INT, peer, TAG_POSTED, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        rc = send_kind(kind, sbuf, n);
        MTEST_CHECK(rc == MPI_SUCCESS, "%s of %lld ints returned %d", kind_names[kind],
                    (long long)n, rc);
        return;
    }
    if (kind % 2) {
        MPI_Recv_init_c(rbuf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req);
        MPI_Start(&req);
    } else {
        MPI_Irecv_c(rbuf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req);
    }
    if (is_ready_mode(kind)) {
        MPI_Send_c(NULL, 0, MPI_INT, peer, TAG_POSTED, MPI_COMM_WORLD);
    }
    MPI_Wait(&req, &status);
    if (kind % 2) {
        MPI_Request_free(&req);
    }
    check_received(&status, rbuf, n, seed, kind_names[kind]);
}

static void exchanges(MPI_Count n, int *sbuf, int *rbuf)
{
    MPI_Status status;

    mtest_fill(sbuf, (size_t)n * sizeof(int), (unsigned)(rank + 100));
    MPI_Sendrecv_c(sbuf, n, MPI_INT, peer, TAG_DATA, rbuf, n, MPI_INT, peer, TAG_DATA,
                   MPI_COMM_WORLD, &status);
    check_received(&status, rbuf, n, (unsigned)(peer + 100), "MPI_Sendrecv_c");
    mtest_fill(rbuf, (size_t)n * sizeof(int), (unsigned)(rank + 200));
    MPI_Sendrecv_replace_c(rbuf, n, MPI_INT, peer, TAG_DATA, peer, TAG_DATA, MPI_COMM_WORLD,
                           &status);
    check_received(&status, rbuf, n, (unsigned)(peer + 200), "MPI_Sendrecv_replace_c");
}

static void matched(MPI_Count n, int *sbuf, int *rbuf)
{
    MPI_Message msg;
    MPI_Request req;
    MPI_Status status;

    if (rank == 0) {
        mtest_fill(sbuf, (size_t)n * sizeof(int), 300);
        MPI_Send_c(sbuf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD);
        mtest_fill(sbuf, (size_t)n * sizeof(int), 301);
        MPI_Send_c(sbuf, n, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD);
        return;
    }
    MPI_Mprobe(peer, TAG_DATA, MPI_COMM_WORLD, &msg, &status);
    MPI_Mrecv_c(rbuf, n, MPI_INT, &msg, &status);
    check_received(&status, rbuf, n, 300, "MPI_Mrecv_c");
    MPI_Mprobe(peer, TAG_DATA, MPI_COMM_WORLD, &msg, &status);
    MPI_Imrecv_c(rbuf, n, MPI_INT, &msg, &req);
    MPI_Wait(&req, &status);
    check_received(&status, rbuf, n, 301, "MPI_Imrecv_c");
}

static void check_buffer_calls(char *bbuf, MPI_Count bsize)
{
    void *detached = NULL;
    MPI_Count dsize = -1;

    MPI_Buffer_detach_c(&detached, &dsize);
    MTEST_CHECK(detached == bbuf && dsize == bsize,
                "MPI_Buffer_detach_c gave %p size %lld, attached %p size %lld", detached,
                (long long)dsize, (void *)bbuf, (long long)bsize);
}

/* Counts of more bytes than an MPI_Count holds: rejected before anything moves. 2^61 + 1 ints
 * are 2^63 + 4 bytes, which a size_t holds but an MPI_Count does not (it went out as a 4-byte
 * message once). */
static void check_overflow(int *buf)
{
    const MPI_Count huge = ((MPI_Count)1 << 62) + 1, just = ((MPI_Count)1 << 61) + 1;
    MPI_Request req;
    MPI_Datatype four_gib;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MTEST_CHECK_ERR(MPI_Isend_c(buf, just, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req),
                    MPI_ERR_COUNT, "MPI_Isend_c");
    MTEST_CHECK_ERR(MPI_Send_c(buf, just, MPI_INT, MPI_PROC_NULL, TAG_DATA, MPI_COMM_WORLD),
                    MPI_ERR_COUNT, "MPI_Send_c");
    MTEST_CHECK_ERR(MPI_Send_c(buf, huge, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD), MPI_ERR_COUNT,
                    "MPI_Send_c");
    MTEST_CHECK_ERR(MPI_Isend_c(buf, huge, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req),
                    MPI_ERR_COUNT, "MPI_Isend_c");
    MTEST_CHECK_ERR(MPI_Irecv_c(buf, huge, MPI_INT, peer, TAG_DATA, MPI_COMM_WORLD, &req),
                    MPI_ERR_COUNT, "MPI_Irecv_c");
    MTEST_CHECK_ERR(MPI_Bcast_c(buf, huge, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
                    "MPI_Bcast_c");
    MPI_Type_contiguous_c((MPI_Count)1 << 32, MPI_BYTE, &four_gib);
    MPI_Type_commit(&four_gib);
    MTEST_CHECK_ERR(
        MPI_Send_c(buf, (MPI_Count)1 << 32, four_gib, MPI_PROC_NULL, TAG_DATA, MPI_COMM_WORLD),
        MPI_ERR_COUNT, "MPI_Send_c");
    MPI_Type_free(&four_gib);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    const MPI_Count counts[] = {3, 300 * 1000};
    MPI_Count bsize = 4 * (counts[1] * (MPI_Count)sizeof(int) + MPI_BSEND_OVERHEAD);
    int size;
    int *sbuf, *rbuf;
    char *bbuf;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = 1 - rank;
    sbuf = mtest_calloc((size_t)counts[1], sizeof(int));
    rbuf = mtest_calloc((size_t)counts[1], sizeof(int));
    bbuf = mtest_calloc((size_t)bsize, 1);
    MPI_Buffer_attach_c(bbuf, bsize);
    if (size >= 2 && rank < 2) {
        for (int i = 0; i < 2; i++) {
            for (int kind = 0; kind < KIND_SENDRECV; kind++) {
                one_way(kind, counts[i], sbuf, rbuf);
            }
            exchanges(counts[i], sbuf, rbuf);
            matched(counts[i], sbuf, rbuf);
        }
    }
    check_buffer_calls(bbuf, bsize);
    if (size >= 2 && rank < 2)
        check_overflow(sbuf);
    free(bbuf);
    free(sbuf);
    free(rbuf);
    return mtest_finalize(0);
}
