/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Invalid arguments to the point-to-point functions, with MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD and on MPI_COMM_SELF (where errors tied to no communicator, such as a
 * null request, are raised). Each call must fail with the right error class and a
 * non-empty error string (on Manifold, one naming the function): ranks outside the
 * communicator, MPI_ANY_SOURCE or MPI_ROOT as a destination (MPI_ERR_RANK); negative tags,
 * MPI_ANY_TAG on a send and tags above MPI_TAG_UB (MPI_ERR_TAG); negative counts
 * (MPI_ERR_COUNT); MPI_DATATYPE_NULL (MPI_ERR_TYPE); MPI_COMM_NULL (MPI_ERR_COMM);
 * MPI_REQUEST_NULL to MPI_Start, MPI_Startall, MPI_Cancel and MPI_Request_free
 * (MPI_ERR_REQUEST); MPI_IN_PLACE as a buffer (MPI_ERR_BUFFER). The exchanges
 * (MPI_Sendrecv, MPI_Isendrecv, MPI_Sendrecv_replace) name the side at fault (sendcount,
 * recvtag...) and the message begins with the function's own name. Afterwards the ranks must still
 * exchange messages normally.
 */
#include "mtest.h"

#include <limits.h>
#include <string.h>

static int rank, size;

static void bad_ranks(void)
{
    MPI_Request req;
    MPI_Status status;
    int x = 0, flag;

    MTEST_CHECK_ERR(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send");
    MTEST_CHECK_ERR(MPI_Send(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK, "MPI_Send");
    MTEST_CHECK_ERR(MPI_Send(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
                    "MPI_Send");
    MTEST_CHECK_ERR(MPI_Send(&x, 1, MPI_INT, MPI_ROOT, 0, MPI_COMM_WORLD), MPI_ERR_RANK,
                    "MPI_Send");
    MTEST_CHECK_ERR(MPI_Isend(&x, 1, MPI_INT, size + 10, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK,
                    "MPI_Isend");
    MTEST_CHECK_ERR(MPI_Send_init(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK,
                    "MPI_Send_init");
    MTEST_CHECK_ERR(MPI_Recv(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &status), MPI_ERR_RANK,
                    "MPI_Recv");
    MTEST_CHECK_ERR(MPI_Irecv(&x, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &req), MPI_ERR_RANK,
                    "MPI_Irecv");
    MTEST_CHECK_ERR(MPI_Iprobe(size, 0, MPI_COMM_WORLD, &flag, &status), MPI_ERR_RANK,
                    "MPI_Iprobe");
}

static void bad_tags(void)
{
    MPI_Request req;
    MPI_Status status;
    int x = 0, flag = 0, *tag_ub = NULL;

    MTEST_CHECK_ERR(MPI_Send(&x, 1, MPI_INT, rank, -5, MPI_COMM_WORLD), MPI_ERR_TAG, "MPI_Send");
    MTEST_CHECK_ERR(MPI_Send(&x, 1, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG,
                    "MPI_Send");
    MTEST_CHECK_ERR(MPI_Isend(&x, 1, MPI_INT, rank, -1, MPI_COMM_WORLD, &req), MPI_ERR_TAG,
                    "MPI_Isend");
    MTEST_CHECK_ERR(MPI_Recv(&x, 1, MPI_INT, rank, -5, MPI_COMM_WORLD, &status), MPI_ERR_TAG,
                    "MPI_Recv");
    MTEST_CHECK_ERR(MPI_Recv_init(&x, 1, MPI_INT, rank, -5, MPI_COMM_WORLD, &req), MPI_ERR_TAG,
                    "MPI_Recv_init");
    MTEST_CHECK_ERR(MPI_Iprobe(rank, -5, MPI_COMM_WORLD, &flag, &status), MPI_ERR_TAG,
                    "MPI_Iprobe");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    if (flag && *tag_ub < INT_MAX) {
        MTEST_CHECK_ERR(MPI_Send(&x, 1, MPI_INT, rank, *tag_ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG,
                        "MPI_Send");
    }
}

static void bad_counts_and_types(void)
{
    MPI_Request req;
    MPI_Status status;
    int x = 0, count;

    memset(&status, 0, sizeof(status));
    MTEST_CHECK_ERR(MPI_Send(&x, -1, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_COUNT, "MPI_Send");
    MTEST_CHECK_ERR(MPI_Send_c(&x, -1, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_COUNT,
                    "MPI_Send_c");
    MTEST_CHECK_ERR(MPI_Recv(&x, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &status), MPI_ERR_COUNT,
                    "MPI_Recv");
    MTEST_CHECK_ERR(MPI_Isend(&x, -1, MPI_INT, rank, 0, MPI_COMM_WORLD, &req), MPI_ERR_COUNT,
                    "MPI_Isend");
    MTEST_CHECK_ERR(MPI_Send(&x, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD), MPI_ERR_TYPE,
                    "MPI_Send");
    MTEST_CHECK_ERR(MPI_Irecv(&x, 1, MPI_DATATYPE_NULL, rank, 0, MPI_COMM_WORLD, &req),
                    MPI_ERR_TYPE, "MPI_Irecv");
    MTEST_CHECK_ERR(MPI_Get_count(&status, MPI_DATATYPE_NULL, &count), MPI_ERR_TYPE,
                    "MPI_Get_count");
}

/* The exchanges name the side at fault: sendcount, not count (both sides share the code). */
static void sendrecv_sides(void)
{
    MPI_Request req = MPI_REQUEST_NULL;
    int x = 0, y = 0;
    const MPI_Comm w = MPI_COMM_WORLD;

    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv(&x, -1, MPI_INT, rank, 0, &y, 1, MPI_INT, rank, 0, w, MPI_STATUS_IGNORE),
        MPI_ERR_COUNT, "MPI_Sendrecv", "sendcount");
    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv(&x, 1, MPI_INT, rank, 0, &y, -1, MPI_INT, rank, 0, w, MPI_STATUS_IGNORE),
        MPI_ERR_COUNT, "MPI_Sendrecv", "recvcount");
    MTEST_CHECK_ERR_ARG(MPI_Sendrecv(&x, 1, MPI_DATATYPE_NULL, rank, 0, &y, 1, MPI_INT, rank, 0, w,
                                     MPI_STATUS_IGNORE),
                        MPI_ERR_TYPE, "MPI_Sendrecv", "sendtype");
    MTEST_CHECK_ERR_ARG(MPI_Sendrecv(&x, 1, MPI_INT, rank, 0, &y, 1, MPI_DATATYPE_NULL, rank, 0, w,
                                     MPI_STATUS_IGNORE),
                        MPI_ERR_TYPE, "MPI_Sendrecv", "recvtype");
    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv(NULL, 1, MPI_INT, rank, 0, &y, 1, MPI_INT, rank, 0, w, MPI_STATUS_IGNORE),
        MPI_ERR_BUFFER, "MPI_Sendrecv", "sendbuf");
    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv(&x, 1, MPI_INT, rank, 0, NULL, 1, MPI_INT, rank, 0, w, MPI_STATUS_IGNORE),
        MPI_ERR_BUFFER, "MPI_Sendrecv", "recvbuf");
    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv(&x, 1, MPI_INT, rank, -5, &y, 1, MPI_INT, rank, 0, w, MPI_STATUS_IGNORE),
        MPI_ERR_TAG, "MPI_Sendrecv", "sendtag");
    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv(&x, 1, MPI_INT, rank, 0, &y, 1, MPI_INT, rank, -5, w, MPI_STATUS_IGNORE),
        MPI_ERR_TAG, "MPI_Sendrecv", "recvtag");
    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv(&x, 1, MPI_INT, size, 0, &y, 1, MPI_INT, rank, 0, w, MPI_STATUS_IGNORE),
        MPI_ERR_RANK, "MPI_Sendrecv", "dest");
    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv(&x, 1, MPI_INT, rank, 0, &y, 1, MPI_INT, size, 0, w, MPI_STATUS_IGNORE),
        MPI_ERR_RANK, "MPI_Sendrecv", "source");
    MTEST_CHECK_ERR_ARG(MPI_Isendrecv(&x, 1, MPI_INT, rank, 0, &y, -2, MPI_INT, rank, 0, w, &req),
                        MPI_ERR_COUNT, "MPI_Isendrecv", "recvcount");
    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv_replace(&x, 1, MPI_INT, rank, -3, rank, 0, w, MPI_STATUS_IGNORE), MPI_ERR_TAG,
        "MPI_Sendrecv_replace", "sendtag");
    MTEST_CHECK_ERR_ARG(
        MPI_Sendrecv_replace(&x, 1, MPI_INT, rank, 0, rank, -3, w, MPI_STATUS_IGNORE), MPI_ERR_TAG,
        "MPI_Sendrecv_replace", "recvtag");
    /* and the plain calls keep their own names */
    MTEST_CHECK_ERR_ARG(MPI_Send(&x, 1, MPI_INT, rank, -1, w), MPI_ERR_TAG, "MPI_Send", "tag");
    MTEST_CHECK_ERR_ARG(MPI_Irecv(&y, -1, MPI_INT, rank, 0, w, &req), MPI_ERR_COUNT, "MPI_Irecv",
                        "count");
    MTEST_CHECK(req == MPI_REQUEST_NULL, "a refused call set the request");
    int outcount, indices[1];
    MTEST_CHECK_ERR_ARG(MPI_Waitsome(-1, &req, &outcount, indices, MPI_STATUSES_IGNORE),
                        MPI_ERR_COUNT, "MPI_Waitsome", "incount");
    MTEST_CHECK_ERR_ARG(MPI_Waitall(-1, &req, MPI_STATUSES_IGNORE), MPI_ERR_COUNT, "MPI_Waitall",
                        "count");
}

static void bad_comms(void)
{
    MPI_Request req;
    MPI_Message msg;
    MPI_Status status;
    int x = 0, flag;

    MTEST_CHECK_ERR(MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM, "MPI_Send");
    MTEST_CHECK_ERR(MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &status), MPI_ERR_COMM,
                    "MPI_Recv");
    MTEST_CHECK_ERR(MPI_Isend(&x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &req), MPI_ERR_COMM,
                    "MPI_Isend");
    MTEST_CHECK_ERR(MPI_Probe(0, 0, MPI_COMM_NULL, &status), MPI_ERR_COMM, "MPI_Probe");
    MTEST_CHECK_ERR(MPI_Iprobe(0, 0, MPI_COMM_NULL, &flag, &status), MPI_ERR_COMM, "MPI_Iprobe");
    MTEST_CHECK_ERR(MPI_Mprobe(0, 0, MPI_COMM_NULL, &msg, &status), MPI_ERR_COMM, "MPI_Mprobe");
    /* NULL output arguments of the immediate probes */
    MTEST_CHECK_ERR(MPI_Iprobe(0, 0, MPI_COMM_WORLD, NULL, &status), MPI_ERR_ARG, "MPI_Iprobe");
    MTEST_CHECK_ERR(MPI_Improbe(0, 0, MPI_COMM_WORLD, NULL, &msg, &status), MPI_ERR_ARG,
                    "MPI_Improbe");
    MTEST_CHECK_ERR(MPI_Improbe(0, 0, MPI_COMM_WORLD, &flag, NULL, &status), MPI_ERR_ARG,
                    "MPI_Improbe");
    MTEST_CHECK_ERR(MPI_Mprobe(0, 0, MPI_COMM_WORLD, NULL, &status), MPI_ERR_ARG, "MPI_Mprobe");
    MTEST_CHECK_ERR(
        MPI_Sendrecv(&x, 1, MPI_INT, 0, 0, &x, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &status),
        MPI_ERR_COMM, "MPI_Sendrecv");
}

static void bad_requests(void)
{
    MPI_Request reqs[2];
    MPI_Request req = MPI_REQUEST_NULL;
    int x = 0;

    MTEST_CHECK_ERR(MPI_Start(&req), MPI_ERR_REQUEST, "MPI_Start");
    int rc = MPI_Cancel(&req);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Cancel");
    if (mtest_is_manifold()) { /* the message says what the handle is ("not a valid request") */
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        MTEST_CHECK(strstr(text, "MPI_REQUEST_NULL") != NULL, "MPI_Cancel says: %s", text);
    }
    MTEST_CHECK_ERR(MPI_Request_free(&req), MPI_ERR_REQUEST, "MPI_Request_free");
    MPI_Send_init(&x, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &reqs[0]);
    reqs[1] = MPI_REQUEST_NULL;
    MTEST_CHECK_ERR(MPI_Startall(2, reqs), MPI_ERR_REQUEST, "MPI_Startall");
    MPI_Request_free(&reqs[0]);
}

/* MPI_IN_PLACE is no buffer for point-to-point, packing or MPI_Buffer_attach: MPI_ERR_BUFFER
 * naming the argument (these once sent from and wrote to address 1; MPICH 5.0.2 crashes, so
 * Manifold only). */
static void in_place_buffers(void)
{
    if (!mtest_is_manifold())
        return;
    int x = 1, pos = 0;
    char packed[16];
    MPI_Request req;
    MTEST_CHECK_ERR(MPI_Send(MPI_IN_PLACE, 1, MPI_INT, rank, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                    "argument buf is MPI_IN_PLACE");
    MTEST_CHECK_ERR(MPI_Isend(MPI_IN_PLACE, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &req),
                    MPI_ERR_BUFFER, "MPI_Isend");
    MTEST_CHECK_ERR(MPI_Irecv(MPI_IN_PLACE, 1, MPI_INT, rank, 0, MPI_COMM_WORLD, &req),
                    MPI_ERR_BUFFER, "MPI_Irecv");
    MTEST_CHECK_ERR(MPI_Sendrecv(&x, 1, MPI_INT, rank, 0, MPI_IN_PLACE, 1, MPI_INT, rank, 0,
                                 MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                    MPI_ERR_BUFFER, "MPI_Sendrecv");
    MTEST_CHECK_ERR(MPI_Sendrecv_replace(MPI_IN_PLACE, 1, MPI_INT, rank, 0, rank, 0, MPI_COMM_WORLD,
                                         MPI_STATUS_IGNORE),
                    MPI_ERR_BUFFER, "MPI_Sendrecv_replace");
    MTEST_CHECK_ERR(MPI_Pack(MPI_IN_PLACE, 1, MPI_INT, packed, 16, &pos, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER, "MPI_Pack");
    MTEST_CHECK_ERR(MPI_Buffer_attach(MPI_IN_PLACE, 1000), MPI_ERR_BUFFER, "MPI_Buffer_attach");
}

/* A ring exchange after all the errors. */
static void still_works(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int got = -1, rc;

    rc = MPI_Sendrecv(&rank, 1, MPI_INT, right, 5, &got, 1, MPI_INT, left, 5, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    MTEST_CHECK(rc == MPI_SUCCESS && got == left, "exchange after errors: rc %d, got %d", rc, got);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    bad_ranks();
    bad_tags();
    bad_counts_and_types();
    sendrecv_sides();
    bad_comms();
    bad_requests();
    in_place_buffers();
    still_works();
    return mtest_finalize(0);
}
