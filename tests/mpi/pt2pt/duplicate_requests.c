/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The same request twice in one array of MPI_Waitall, MPI_Testall, MPI_Waitsome and
 * MPI_Testsome (an erroneous program): the first element completes and frees the request, the
 * second is reported as MPI_ERR_REQUEST in its status (the call returns MPI_ERR_IN_STATUS,
 * through the handler of MPI_COMM_SELF, as for any invalid request: the communicator of a freed
 * request is not known) instead of freeing the request a second time. A request freed twice went
 * back to the request cache twice, so that two later operations shared one request: the window of
 * receives at the end, whose handles must all differ and whose data must all arrive, checks the
 * cache.
 */
#include "mtest.h"

#include <string.h>

#define TAG    7
#define WINDOW 64

typedef enum { WAITALL, WAITALL_IGNORE, TESTALL, WAITSOME, TESTSOME, NCALLS } call_t;

static const char *const call_names[NCALLS] = {"MPI_Waitall", "MPI_Waitall", "MPI_Testall",
                                               "MPI_Waitsome", "MPI_Testsome"};

/* Complete {req, req} with `call`; returns the call's result, statuses in st. */
static int complete_twice(call_t call, MPI_Request req, MPI_Status st[2])
{
    MPI_Request reqs[2] = {req, req};
    int flag = 0, outcount = 0, indices[2], rc;

    switch (call) {
    case WAITALL: return MPI_Waitall(2, reqs, st);
    case WAITALL_IGNORE: return MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    case TESTALL:
        do
            rc = MPI_Testall(2, reqs, &flag, st);
        while (rc == MPI_SUCCESS && !flag);
        return rc;
    case WAITSOME: return MPI_Waitsome(2, reqs, &outcount, indices, st);
    case TESTSOME:
        do
            rc = MPI_Testsome(2, reqs, &outcount, indices, st);
        while (rc == MPI_SUCCESS && outcount == 0);
        return rc;
    default: return MPI_ERR_OTHER;
    }
}

static void check_duplicate(call_t call, int rank)
{
    int value = -1, expected = 1000 + (int)call;

    if (rank == 1) {
        MPI_Send(&expected, 1, MPI_INT, 0, TAG, MPI_COMM_WORLD);
        return;
    }
    MPI_Request req;
    MPI_Status st[2];
    memset(st, 0, sizeof(st));
    MPI_Irecv(&value, 1, MPI_INT, 1, TAG, MPI_COMM_WORLD, &req);
    int rc = complete_twice(call, req, st);
    MTEST_CHECK(value == expected, "%s: received %d, expected %d", call_names[call], value,
                expected);
    MTEST_CHECK(rc == MPI_ERR_IN_STATUS, "%s returned %d, not MPI_ERR_IN_STATUS", call_names[call],
                rc);
    if (call == WAITALL_IGNORE)
        return;
    int cls = MPI_SUCCESS;
    MPI_Error_class(st[1].MPI_ERROR, &cls);
    MTEST_CHECK(st[0].MPI_ERROR == MPI_SUCCESS && st[0].MPI_SOURCE == 1 && st[0].MPI_TAG == TAG,
                "%s: the first status has error %d source %d tag %d", call_names[call],
                st[0].MPI_ERROR, st[0].MPI_SOURCE, st[0].MPI_TAG);
    MTEST_CHECK(cls == MPI_ERR_REQUEST, "%s: the repeated element's status has class %s",
                call_names[call], mtest_error_class_name(cls));
    if (mtest_is_manifold()) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(st[1].MPI_ERROR, msg, &len);
        MTEST_CHECK(strstr(msg, call_names[call]) && strstr(msg, "array_of_requests[1]"),
                    "%s: the message \"%s\" names neither the call nor the element",
                    call_names[call], msg);
    }
}

/* A window of receives: distinct requests, every message where it belongs. */
static void check_cache(int rank)
{
    int bufs[WINDOW];
    MPI_Request reqs[WINDOW];

    for (int round = 0; round < 20; round++) {
        for (int w = 0; w < WINDOW; w++) {
            bufs[w] = -1;
            if (rank == 0)
                MPI_Irecv(&bufs[w], 1, MPI_INT, 1, w, MPI_COMM_WORLD, &reqs[w]);
            else {
                bufs[w] = round * WINDOW + w;
                MPI_Isend(&bufs[w], 1, MPI_INT, 0, w, MPI_COMM_WORLD, &reqs[w]);
            }
        }
        if (rank == 0)
            for (int w = 0; w < WINDOW; w++)
                for (int v = 0; v < w; v++)
                    MTEST_CHECK(reqs[v] != reqs[w],
                                "round %d: receives %d and %d got the same request", round, v, w);
        MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
        if (rank == 0)
            for (int w = 0; w < WINDOW; w++)
                MTEST_CHECK(bufs[w] == round * WINDOW + w, "round %d: message %d holds %d", round,
                            w, bufs[w]);
    }
}

int main(int argc, char **argv)
{
    int rank, size;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (size == 2) {
        for (int call = 0; call < NCALLS; call++)
            check_duplicate((call_t)call, rank);
        check_cache(rank);
    }
    return mtest_finalize(0);
}
