/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The completion calls on MPI_REQUEST_NULL alone. MPI_Wait and MPI_Test return at once
 * with an empty status (source MPI_ANY_SOURCE, tag MPI_ANY_TAG, count 0, not cancelled);
 * on arrays of null requests MPI_Waitany and MPI_Testany give index MPI_UNDEFINED (flag
 * true), MPI_Waitsome and MPI_Testsome give outcount MPI_UNDEFINED, MPI_Waitall and
 * MPI_Testall succeed (flag true) with empty statuses, with a statuses array and with
 * MPI_STATUSES_IGNORE, and for zero-length arrays; MPI_Request_get_status on
 * MPI_REQUEST_NULL sets flag with an empty status.
 */
#include "mtest.h"

#define N 5

static void reset_status(MPI_Status *status)
{
    status->MPI_SOURCE = 1234;
    status->MPI_TAG = 5678;
}

static void check_empty(const MPI_Status *status, const char *what)
{
    int count = -1, cancelled = -1;

    MPI_Get_count(status, MPI_INT, &count);
    MPI_Test_cancelled(status, &cancelled);
    MTEST_CHECK(status->MPI_SOURCE == MPI_ANY_SOURCE && status->MPI_TAG == MPI_ANY_TAG &&
                    count == 0 && cancelled == 0,
                "%s: status source %d tag %d count %d cancelled %d is not empty", what,
                status->MPI_SOURCE, status->MPI_TAG, count, cancelled);
}

static void null_array(MPI_Request reqs[N])
{
    for (int i = 0; i < N; i++) {
        reqs[i] = MPI_REQUEST_NULL;
    }
}

static void check_single(void)
{
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Status status;
    int flag = 0;

    reset_status(&status);
    MTEST_CHECK(MPI_Wait(&req, &status) == MPI_SUCCESS, "MPI_Wait(MPI_REQUEST_NULL) failed");
    check_empty(&status, "MPI_Wait");
    reset_status(&status);
    MPI_Test(&req, &flag, &status);
    MTEST_CHECK(flag, "MPI_Test(MPI_REQUEST_NULL) set flag to false");
    check_empty(&status, "MPI_Test");
    reset_status(&status);
    flag = 0;
    MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &status);
    MTEST_CHECK(flag, "MPI_Request_get_status(MPI_REQUEST_NULL) set flag to false");
    check_empty(&status, "MPI_Request_get_status");
    MTEST_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE) == MPI_SUCCESS, "MPI_Wait, STATUS_IGNORE");
}

static void check_any(int n)
{
    MPI_Request reqs[N];
    MPI_Status status;
    int index = 0, flag = 0;

    null_array(reqs);
    reset_status(&status);
    MPI_Waitany(n, reqs, &index, &status);
    MTEST_CHECK(index == MPI_UNDEFINED, "MPI_Waitany(%d null) gave index %d", n, index);
    check_empty(&status, "MPI_Waitany");
    index = 0;
    reset_status(&status);
    MPI_Testany(n, reqs, &index, &flag, &status);
    MTEST_CHECK(flag && index == MPI_UNDEFINED, "MPI_Testany(%d null) gave flag %d index %d", n,
                flag, index);
    check_empty(&status, "MPI_Testany");
    index = 0;
    MPI_Waitany(n, reqs, &index, MPI_STATUS_IGNORE);
    MTEST_CHECK(index == MPI_UNDEFINED, "MPI_Waitany ignoring status gave index %d", index);
}

static void check_some_all(int n)
{
    MPI_Request reqs[N];
    MPI_Status statuses[N];
    int indices[N], outcount = 0, flag = 0;

    null_array(reqs);
    MPI_Waitsome(n, reqs, &outcount, indices, statuses);
    MTEST_CHECK(outcount == MPI_UNDEFINED, "MPI_Waitsome(%d null) gave outcount %d", n, outcount);
    outcount = 0;
    MPI_Testsome(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
    MTEST_CHECK(outcount == MPI_UNDEFINED, "MPI_Testsome(%d null) gave outcount %d", n, outcount);

    for (int i = 0; i < N; i++) {
        reset_status(&statuses[i]);
    }
    MTEST_CHECK(MPI_Waitall(n, reqs, statuses) == MPI_SUCCESS, "MPI_Waitall(%d null)", n);
    for (int i = 0; i < n; i++) {
        check_empty(&statuses[i], "MPI_Waitall");
    }
    MPI_Testall(n, reqs, &flag, statuses);
    MTEST_CHECK(flag, "MPI_Testall(%d null) set flag to false", n);
    for (int i = 0; i < n; i++) {
        check_empty(&statuses[i], "MPI_Testall");
    }
    MTEST_CHECK(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS,
                "MPI_Waitall with MPI_STATUSES_IGNORE");
    flag = 0;
    MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE);
    MTEST_CHECK(flag, "MPI_Testall with MPI_STATUSES_IGNORE set flag to false");
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    check_single();
    check_any(N);
    check_any(0);
    check_some_all(N);
    check_some_all(0);
    return mtest_finalize(0);
}
