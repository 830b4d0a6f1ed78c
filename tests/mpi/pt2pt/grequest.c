/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Generalized requests (MPI_Grequest_start/complete): MPI_Test is false until
 * MPI_Grequest_complete; MPI_Wait, MPI_Waitall with a point-to-point request beside it and
 * MPI_Request_get_status call query_fn for the status (source, tag, count, cancelled) and
 * return its code; free_fn runs once, when the request is freed (also when MPI_Request_free
 * came before the completion); MPI_Cancel calls cancel_fn with whether it had completed; a
 * second thread may complete it while the first waits. query_fn's error is what
 * MPI_Request_get_status and its array forms return (MPI_ERR_IN_STATUS for _all, with the
 * statuses ignored too), free_fn's what MPI_Request_free returns. Errors:
 * MPI_Grequest_complete on a request that is not generalized or completed twice is
 * MPI_ERR_REQUEST; a NULL callback is MPI_ERR_ARG. In an array's status, query_fn's MPI_ERR_REQUEST
 * is its own error (it once read as "the same request twice"), and a value that is no error code
 * becomes one of class MPI_ERR_OTHER (Manifold; it was passed on raw, a code MPI_Error_class
 * refuses).
 */
#include <pthread.h>
#include <string.h>

#include "mtest.h"

typedef struct state {
    int queries, frees, cancels, last_complete, code, free_code;
} state_t;

static int query_fn(void *extra, MPI_Status *status)
{
    state_t *s = extra;
    s->queries++;
    status->MPI_SOURCE = 3;
    status->MPI_TAG = 17;
    MPI_Status_set_elements(status, MPI_INT, 5);
    MPI_Status_set_cancelled(status, 0);
    return s->code;
}

static int free_fn(void *extra)
{
    state_t *s = extra;
    s->frees++;
    return s->free_code;
}

static int cancel_fn(void *extra, int complete)
{
    state_t *s = extra;
    s->cancels++;
    s->last_complete = complete;
    return MPI_SUCCESS;
}

static void *completer(void *arg)
{
    MPI_Grequest_complete(*(MPI_Request *)arg);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, flag, count, rc;
    mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    MPI_Query_thread(&provided);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Test, complete, Request_get_status, Wait */
    state_t s = {0};
    MPI_Request req;
    MPI_Status st;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &req);
    MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    MTEST_CHECK(!flag && req != MPI_REQUEST_NULL, "test before completion: flag %d", flag);
    MPI_Grequest_complete(req);
    MPI_Request_get_status(req, &flag, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    MTEST_CHECK(flag && st.MPI_SOURCE == 3 && st.MPI_TAG == 17 && count == 5 && s.frees == 0,
                "get_status: flag %d source %d tag %d count %d frees %d", flag, st.MPI_SOURCE,
                st.MPI_TAG, count, s.frees);
    MPI_Cancel(&req);
    MTEST_CHECK(s.cancels == 1 && s.last_complete == 1, "cancel after completion: %d calls, %d",
                s.cancels, s.last_complete);
    rc = MPI_Wait(&req, &st);
    MTEST_CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL && st.MPI_TAG == 17 &&
                    s.queries == 2 && s.frees == 1,
                "wait: rc %d tag %d queries %d frees %d", rc, st.MPI_TAG, s.queries, s.frees);
    rc = MPI_Grequest_complete(req);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Grequest_complete");

    /* Waitall beside a point-to-point request; query_fn's code comes back. */
    state_t s2 = {0};
    s2.code = MPI_ERR_OTHER;
    MPI_Request reqs[2];
    int rank, buf = 0, out = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s2, &reqs[0]);
    MPI_Irecv(&buf, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &reqs[1]);
    MPI_Send(&out, 1, MPI_INT, rank, 5, MPI_COMM_WORLD);
    MPI_Cancel(&reqs[0]);
    MTEST_CHECK(s2.cancels == 1 && s2.last_complete == 0, "cancel before completion: %d, %d",
                s2.cancels, s2.last_complete);
    MPI_Grequest_complete(reqs[0]);
    MPI_Status sts[2];
    rc = MPI_Waitall(2, reqs, sts);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(cls == MPI_ERR_IN_STATUS && sts[0].MPI_ERROR == MPI_ERR_OTHER &&
                    sts[1].MPI_ERROR == MPI_SUCCESS && buf == 1 && s2.frees == 1,
                "waitall: rc %d errors %d %d buf %d frees %d", rc, sts[0].MPI_ERROR,
                sts[1].MPI_ERROR, buf, s2.frees);

    /* query_fn's MPI_ERR_REQUEST, then a value that is no code, through an array */
    int codes[2] = {MPI_ERR_REQUEST, -1};
    for (int k = 0; k < 2; k++) {
        state_t s4 = {0};
        s4.code = codes[k];
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s4, &reqs[0]);
        MPI_Grequest_complete(reqs[0]);
        rc = MPI_Waitall(1, reqs, sts);
        char text[MPI_MAX_ERROR_STRING] = "";
        int len, ecls = -1;
        int crc = MPI_Error_class(sts[0].MPI_ERROR, &ecls);
        MPI_Error_string(sts[0].MPI_ERROR, text, &len);
        MTEST_CHECK(rc == MPI_ERR_IN_STATUS && s4.frees == 1, "waitall, query_fn gives %d: rc %d",
                    codes[k], rc);
        if (k == 0)
            MTEST_CHECK(ecls == MPI_ERR_REQUEST && strstr(text, "earlier element") == NULL,
                        "query_fn's MPI_ERR_REQUEST: class %d, text %s", ecls, text);
        else if (mtest_is_manifold())
            MTEST_CHECK(crc == MPI_SUCCESS && ecls == MPI_ERR_OTHER,
                        "query_fn's -1: status error %d, class %d (rc %d)", sts[0].MPI_ERROR, ecls,
                        crc);
    }

    /* Request_free before the completion: free_fn runs at the completion. */
    state_t s3 = {0};
    MPI_Request keep;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s3, &req);
    keep = req;
    MPI_Request_free(&req);
    MTEST_CHECK(req == MPI_REQUEST_NULL && s3.frees == 0, "free before completion ran free_fn");
    MPI_Grequest_complete(keep);
    MTEST_CHECK(s3.frees == 1 && s3.queries == 0, "completion after free: frees %d queries %d",
                s3.frees, s3.queries);

    /* query_fn's error through the status queries, which leave the request as it is */
    state_t s5 = {0};
    s5.code = MPI_ERR_OTHER;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s5, &req);
    MPI_Grequest_complete(req);
    rc = MPI_Request_get_status(req, &flag, &st);
    MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Request_get_status");
    int index = -1;
    rc = MPI_Request_get_status_any(1, &req, &index, &flag, &st);
    MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Request_get_status_any");
    rc = MPI_Request_get_status_all(1, &req, &flag, sts);
    MTEST_CHECK(rc == MPI_ERR_IN_STATUS && sts[0].MPI_ERROR == MPI_ERR_OTHER,
                "get_status_all: rc %d error %d", rc, sts[0].MPI_ERROR);
    int queries = s5.queries;
    rc = MPI_Request_get_status_all(1, &req, &flag, MPI_STATUSES_IGNORE);
    MTEST_CHECK(rc == MPI_ERR_IN_STATUS && s5.queries == queries + 1,
                "get_status_all, statuses ignored: rc %d, query_fn ran %d times", rc,
                s5.queries - queries);
    int outcount = -1, indices[1];
    rc = MPI_Request_get_status_some(1, &req, &outcount, indices, sts);
    MTEST_CHECK(rc == MPI_ERR_IN_STATUS && outcount == 1 && sts[0].MPI_ERROR == MPI_ERR_OTHER,
                "get_status_some: rc %d outcount %d", rc, outcount);
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    /* free_fn's error through MPI_Request_free of a completed request */
    state_t s6 = {0};
    s6.free_code = MPI_ERR_OTHER;
    MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s6, &req);
    MPI_Grequest_complete(req);
    rc = MPI_Request_free(&req);
    MTEST_CHECK_ERR(rc, MPI_ERR_OTHER, "MPI_Request_free");
    MTEST_CHECK(req == MPI_REQUEST_NULL && s6.frees == 1, "free_fn ran %d times", s6.frees);

    /* Completed by another thread while this one waits. */
    if (provided == MPI_THREAD_MULTIPLE) {
        state_t s4 = {0};
        pthread_t th;
        MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s4, &req);
        MPI_Request copy = req;
        pthread_create(&th, NULL, completer, &copy);
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        pthread_join(th, NULL);
        MTEST_CHECK(rc == MPI_SUCCESS && s4.queries == 1 && s4.frees == 1,
                    "threaded: rc %d queries %d frees %d", rc, s4.queries, s4.frees);
    }

    /* Not a generalized request. */
    MPI_Irecv(&buf, 1, MPI_INT, rank, 6, MPI_COMM_WORLD, &req);
    rc = MPI_Grequest_complete(req);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Grequest_complete");
    MPI_Send(&out, 1, MPI_INT, rank, 6, MPI_COMM_WORLD);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    rc = MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Grequest_start");
    /* The callbacks have no null values. */
    req = MPI_REQUEST_NULL;
    rc = MPI_Grequest_start(NULL, free_fn, cancel_fn, &s, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Grequest_start");
    rc = MPI_Grequest_start(query_fn, NULL, cancel_fn, &s, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Grequest_start");
    rc = MPI_Grequest_start(query_fn, free_fn, NULL, &s, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Grequest_start");
    MTEST_CHECK(req == MPI_REQUEST_NULL, "a refused MPI_Grequest_start set the request");
    return mtest_finalize(0);
}
