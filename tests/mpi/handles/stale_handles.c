/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stale copies of freed handles of the kinds whose objects used to go back to the allocator:
 * an info object (MPI_Info_free), an error handler (MPI_Errhandler_free when nothing else holds
 * it) and a matched message (consumed by MPI_Mrecv); and of objects an operation in flight
 * keeps after the user freed them: a communicator with a pending receive, a receive request
 * released by MPI_Request_free. Using the copy is an error of the handle's class, read as
 * freed, not read after free (the sanitizer build checks that); the next object of the kind,
 * which may reuse the memory, works. Error handlers and derived datatypes that a communicator
 * or a parent type still holds refuse a copy of their handle freed once more than the program
 * created or got them (that free took the holder's reference before).
 */
#include "mtest.h"

#include <string.h>

static void check_info(void)
{
    MPI_Info info, stale;
    char value[16];
    int flag = 1, nkeys = -1, rc;

    MPI_Info_create(&info);
    MPI_Info_set(info, "key", "value");
    stale = info;
    MPI_Info_free(&info);
    MTEST_CHECK(info == MPI_INFO_NULL, "MPI_Info_free did not set the handle to MPI_INFO_NULL");
    rc = MPI_Info_set(stale, "key", "again");
    MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Info_set");
    rc = MPI_Info_get_nkeys(stale, &nkeys);
    MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Info_get_nkeys");
    rc = MPI_Info_free(&stale);
    MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Info_free");
    rc = MPI_Comm_set_info(MPI_COMM_WORLD, stale);
    MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Comm_set_info");

    MPI_Info_create(&info);
    MPI_Info_get_nkeys(info, &nkeys);
    MTEST_CHECK(nkeys == 0, "a new info object has %d keys", nkeys);
    MPI_Info_set(info, "other", "yes");
    MPI_Info_get(info, "other", sizeof(value) - 1, value, &flag);
    MTEST_CHECK(flag && strcmp(value, "yes") == 0, "a new info object lost its key");
    MPI_Info_free(&info);
}

static void handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
}

static void check_errhandler(void)
{
    MPI_Errhandler eh, stale, got = MPI_ERRHANDLER_NULL;
    MPI_Comm dup;
    int rc;

    MPI_Comm_create_errhandler(handler, &eh);
    stale = eh;
    MPI_Errhandler_free(&eh);
    MTEST_CHECK(eh == MPI_ERRHANDLER_NULL, "MPI_Errhandler_free did not set the handle to NULL");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    rc = MPI_Comm_set_errhandler(dup, stale);
    MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Comm_set_errhandler");
    rc = MPI_Errhandler_free(&stale);
    MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Errhandler_free");

    MPI_Comm_create_errhandler(handler, &eh);
    rc = MPI_Comm_set_errhandler(dup, eh);
    MTEST_CHECK(rc == MPI_SUCCESS, "setting a new error handler failed: %d", rc);
    MPI_Comm_get_errhandler(dup, &got);
    MTEST_CHECK(got == eh, "MPI_Comm_get_errhandler gave another handler");
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&dup);
}

static int handler_calls;

static void counting_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    handler_calls++;
}

/* Held by a communicator: the user's frees are counted apart from the communicator's reference.
 * Without that, the second free below took the communicator's reference, the handler went back
 * to the pool and the next new handler reused it (the communicator then called that one). */
static void check_errhandler_held(void)
{
    MPI_Errhandler eh, copy, got = MPI_ERRHANDLER_NULL, other;
    MPI_Comm dup;
    int rc;

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_errhandler(counting_handler, &eh);
    MPI_Comm_set_errhandler(dup, eh);
    copy = eh;
    MPI_Errhandler_free(&eh);
    rc = MPI_Errhandler_free(&copy);
    MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Errhandler_free");
    /* MPI_Comm_get_errhandler gives one more handle to free, and only one */
    MPI_Comm_get_errhandler(dup, &got);
    copy = got;
    rc = MPI_Errhandler_free(&got);
    MTEST_CHECK(rc == MPI_SUCCESS, "freeing the handle MPI_Comm_get_errhandler gave: %d", rc);
    rc = MPI_Errhandler_free(&copy);
    MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Errhandler_free");
    MPI_Comm_create_errhandler(handler, &other);
    handler_calls = 0;
    MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER);
    MTEST_CHECK(handler_calls == 1, "the communicator's handler ran %d times", handler_calls);
    MPI_Errhandler_free(&other);
    MPI_Comm_free(&dup);
}

/* Held by a parent type: the same for datatypes (the second free took the vector's reference
 * on its child, which was then recycled as the next new type). */
static void check_type_held(void)
{
    MPI_Datatype pair, copy, vec, got[1], other;
    int nints, naddrs, ntypes, combiner, rc;
    MPI_Aint addrs[1];

    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_vector(3, 1, 2, pair, &vec);
    MPI_Type_commit(&vec);
    copy = pair;
    MPI_Type_free(&pair);
    rc = MPI_Type_free(&copy);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_free");
    /* MPI_Type_get_contents gives the child again, to free once */
    MPI_Type_get_envelope(vec, &nints, &naddrs, &ntypes, &combiner);
    MTEST_CHECK(combiner == MPI_COMBINER_VECTOR && ntypes == 1, "envelope: %d, %d types", combiner,
                ntypes);
    int vints[3];
    MPI_Type_get_contents(vec, 3, 0, 1, vints, addrs, got);
    copy = got[0];
    rc = MPI_Type_free(&got[0]);
    MTEST_CHECK(rc == MPI_SUCCESS, "freeing the type MPI_Type_get_contents gave: %d", rc);
    rc = MPI_Type_free(&copy);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_free");
    /* the vector still has its child: a new type does not take its place */
    MPI_Type_contiguous(5, MPI_DOUBLE, &other);
    int in[12], out[12] = {0}, position = 0;
    for (int i = 0; i < 12; i++)
        in[i] = i;
    MPI_Pack(in, 1, vec, out, (int)sizeof(out), &position, MPI_COMM_SELF);
    MTEST_CHECK(position == 6 * (int)sizeof(int), "packed %d bytes of the vector", position);
    int expect[6] = {0, 1, 4, 5, 8, 9};
    for (int i = 0; i < 6; i++)
        MTEST_CHECK(out[i] == expect[i], "packed int %d is %d, not %d", i, out[i], expect[i]);
    MPI_Type_get_contents(vec, 3, 0, 1, vints, addrs, got);
    MPI_Type_get_envelope(got[0], &nints, &naddrs, &ntypes, &combiner);
    MTEST_CHECK(combiner == MPI_COMBINER_CONTIGUOUS && nints == 1,
                "the vector's child is now combiner %d with %d ints", combiner, nints);
    MPI_Type_free(&got[0]);
    MPI_Type_free(&other);
    MPI_Type_free(&vec);
}

static void check_message(void)
{
    int rank, out = 42, in = 0, rc;
    MPI_Request req;
    MPI_Message msg, stale;
    MPI_Status status;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int round = 0; round < 2; round++) {
        MPI_Isend(&out, 1, MPI_INT, rank, round, MPI_COMM_WORLD, &req);
        MPI_Mprobe(rank, round, MPI_COMM_WORLD, &msg, &status);
        stale = msg;
        MPI_Mrecv(&in, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MTEST_CHECK(msg == MPI_MESSAGE_NULL && in == out,
                    "round %d: MPI_Mrecv left the handle set or received %d", round, in);
        in = 0;
        rc = MPI_Mrecv(&in, 1, MPI_INT, &stale, MPI_STATUS_IGNORE);
        MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Mrecv");
        rc = MPI_Imrecv(&in, 1, MPI_INT, &stale, &req);
        MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Imrecv");
    }
}

/* A communicator freed while a receive on it is pending lives on for the receive, but its
 * handle is dead: a copy of it is MPI_ERR_COMM (it was taken for the communicator, so a
 * blocking receive through it waited for ever and a second MPI_Comm_free gave away the
 * receive's reference, recycling the object under it). The receive still completes. */
static void check_comm_in_use(void)
{
    MPI_Comm dup, stale, next;
    MPI_Request req;
    MPI_Status status;
    int x = -1, size = -1, flag = 0, rc;

    MPI_Comm_dup(MPI_COMM_SELF, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Irecv(&x, 1, MPI_INT, 0, 5, dup, &req);
    stale = dup;
    MPI_Comm_free(&dup);
    rc = MPI_Comm_size(stale, &size);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_size");
    rc = MPI_Recv(&x, 1, MPI_INT, 0, 5, stale, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Recv");
    rc = MPI_Comm_free(&stale);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_free");
    /* the next communicator is another object while the receive holds this one */
    MPI_Comm_dup(MPI_COMM_SELF, &next);
    MTEST_CHECK(next != stale, "a communicator still held by a receive was recycled");
    MPI_Cancel(&req);
    MPI_Wait(&req, &status);
    MPI_Test_cancelled(&status, &flag);
    MTEST_CHECK(flag && req == MPI_REQUEST_NULL,
                "the pending receive of a freed communicator: "
                "cancelled %d",
                flag);
    MPI_Comm_free(&next);
}

/* A receive request released with MPI_Request_free while in flight is the library's to finish:
 * a copy of its handle is MPI_ERR_REQUEST (MPI_Wait through it waited for ever, MPI_Test and a
 * second MPI_Request_free took it for the live request), and the message still lands. */
static void check_request_in_flight(void)
{
    MPI_Request req, stale;
    static int x; /* static: nothing says when a freed receive lands */
    int y = 42, flag = 7, rc;

    x = -1;

    MPI_Irecv(&x, 1, MPI_INT, 0, 6, MPI_COMM_SELF, &req);
    stale = req;
    MPI_Request_free(&req);
    MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free did not reset the handle");
    rc = MPI_Wait(&stale, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Wait");
    rc = MPI_Test(&stale, &flag, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Test");
    rc = MPI_Waitall(1, &stale, MPI_STATUSES_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Waitall");
    rc = MPI_Cancel(&stale);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Cancel");
    rc = MPI_Request_free(&stale);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Request_free");
    MPI_Send(&y, 1, MPI_INT, 0, 6, MPI_COMM_SELF);
    /* progress until the freed receive completes (at once, unless the transport to self
     * queues the message: with MANIFOLD_ASYNC_PROGRESS=on it is shared memory) */
    double start = MPI_Wtime();
    while (*(volatile int *)&x != 42 && MPI_Wtime() - start < 10) {
        int found;
        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &found, MPI_STATUS_IGNORE);
    }
    MTEST_CHECK(x == 42, "the freed receive did not land: %d", x);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    check_info();
    check_errhandler();
    check_errhandler_held();
    check_type_held();
    check_message();
    check_comm_in_use();
    check_request_in_flight();
    return mtest_finalize(0);
}
