/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wildcards on a communicator that asserts they are not used. The standard makes such a call
 * erroneous without saying what happens; Manifold documents that it is refused: with
 * MPI_ERRORS_RETURN, MPI_ANY_SOURCE under mpi_assert_no_any_source gives an error of class
 * MPI_ERR_RANK and MPI_ANY_TAG under mpi_assert_no_any_tag one of class MPI_ERR_TAG, for
 * MPI_Recv, MPI_Irecv, MPI_Probe, MPI_Iprobe, MPI_Mprobe and MPI_Improbe, and the
 * communicator keeps working. Those checks are Manifold-specific and run only on Manifold; on
 * any library the communicators are created, the allowed wildcard is used on the
 * communicators that assert only the other thing, and traffic with named sources and tags
 * works. A message to self is kept pending during the refused calls, so that a library that
 * wrongly accepts the wildcard matches it instead of hanging.
 */
#include <stdio.h>
#include <string.h>

#include "mtest.h"

#define TAG 3

enum call { CALL_RECV, CALL_IRECV, CALL_PROBE, CALL_IPROBE, CALL_MPROBE, CALL_IMPROBE, NCALLS };

static const char *const g_names[NCALLS] = {"MPI_Recv",   "MPI_Irecv",  "MPI_Probe",
                                            "MPI_Iprobe", "MPI_Mprobe", "MPI_Improbe"};

static int g_rank;

/* Makes one call with (source, tag); returns its code. If the library accepted the call, the
 * pending message may have been consumed: *consumed says so. */
static int wildcard_call(enum call c, MPI_Comm comm, int source, int tag, int *consumed)
{
    int value = -1, flag = 0, rc;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;

    *consumed = 0;
    switch (c) {
    case CALL_RECV:
        rc = MPI_Recv(&value, 1, MPI_INT, source, tag, comm, &st);
        *consumed = rc == MPI_SUCCESS;
        break;
    case CALL_IRECV:
        rc = MPI_Irecv(&value, 1, MPI_INT, source, tag, comm, &req);
        if (rc == MPI_SUCCESS) {
            MPI_Wait(&req, &st);
            *consumed = 1;
        }
        break;
    case CALL_PROBE: rc = MPI_Probe(source, tag, comm, &st); break;
    case CALL_IPROBE: rc = MPI_Iprobe(source, tag, comm, &flag, &st); break;
    case CALL_MPROBE:
        rc = MPI_Mprobe(source, tag, comm, &msg, &st);
        if (rc == MPI_SUCCESS) {
            MPI_Mrecv(&value, 1, MPI_INT, &msg, &st);
            *consumed = 1;
        }
        break;
    default:
        rc = MPI_Improbe(source, tag, comm, &flag, &msg, &st);
        if (rc == MPI_SUCCESS && flag) {
            MPI_Mrecv(&value, 1, MPI_INT, &msg, &st);
            *consumed = 1;
        }
        break;
    }
    return rc;
}

static MPI_Comm asserting(int source, int tag)
{
    MPI_Info info;
    MPI_Comm comm;

    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_source", source ? "true" : "false");
    MPI_Info_set(info, "mpi_assert_no_any_tag", tag ? "true" : "false");
    if (MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm) != MPI_SUCCESS) {
        fprintf(stderr, "MPI_Comm_dup_with_info failed\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    return comm;
}

/* MPI_ERR_TAG if rc has that class, else MPI_ERR_RANK (which the check then demands). */
static int either_class(int rc)
{
    int cls = MPI_SUCCESS;

    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls == MPI_ERR_TAG ? MPI_ERR_TAG : MPI_ERR_RANK;
}

/* With a message to self pending on comm, every call with (source, tag) must fail with
 * expected_class (refused_checks) or, for an allowed wildcard, work. */
static void try_calls(const char *what, MPI_Comm comm, int source, int tag, int expected_class,
                      int refused_checks)
{
    int token = g_rank, got = -1, consumed;
    MPI_Request send = MPI_REQUEST_NULL;
    MPI_Status st;

    if (expected_class != MPI_SUCCESS && !refused_checks)
        return; /* erroneous elsewhere: anything may happen, even a hang */
    for (int c = 0; c < NCALLS; c++) {
        int rc;

        if (send == MPI_REQUEST_NULL)
            MPI_Isend(&token, 1, MPI_INT, g_rank, TAG, comm, &send);
        rc = wildcard_call((enum call)c, comm, source, tag, &consumed);
        if (expected_class == MPI_SUCCESS)
            MTEST_CHECK(rc == MPI_SUCCESS, "%s: %s with an allowed wildcard returned %d", what,
                        g_names[c], rc);
        else if (expected_class == MPI_ERR_OTHER) /* both wildcards: either class will do */
            MTEST_CHECK_ERR(rc, either_class(rc), g_names[c]);
        else
            MTEST_CHECK_ERR(rc, expected_class, g_names[c]);
        if (consumed) {
            MPI_Wait(&send, MPI_STATUS_IGNORE);
            send = MPI_REQUEST_NULL;
        }
    }
    /* the communicator still works with a named source and tag */
    if (send != MPI_REQUEST_NULL) {
        int rc = MPI_Recv(&got, 1, MPI_INT, g_rank, TAG, comm, &st);

        MTEST_CHECK(rc == MPI_SUCCESS && got == g_rank, "%s: receive afterwards: rc %d value %d",
                    what, rc, got);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    int manifold, size, right, left, token, got = -1;
    MPI_Comm src_only, tag_only, both;
    MPI_Status st;

    mtest_init(&argc, &argv);
    manifold = mtest_is_manifold();
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (g_rank + 1) % size;
    left = (g_rank + size - 1) % size;

    src_only = asserting(1, 0);
    tag_only = asserting(0, 1);
    both = asserting(1, 1);

    try_calls("no_any_source, MPI_ANY_SOURCE", src_only, MPI_ANY_SOURCE, TAG, MPI_ERR_RANK,
              manifold);
    try_calls("no_any_source, MPI_ANY_TAG", src_only, g_rank, MPI_ANY_TAG, MPI_SUCCESS, manifold);
    try_calls("no_any_tag, MPI_ANY_TAG", tag_only, g_rank, MPI_ANY_TAG, MPI_ERR_TAG, manifold);
    try_calls("no_any_tag, MPI_ANY_SOURCE", tag_only, MPI_ANY_SOURCE, TAG, MPI_SUCCESS, manifold);
    try_calls("both, MPI_ANY_SOURCE", both, MPI_ANY_SOURCE, TAG, MPI_ERR_RANK, manifold);
    try_calls("both, MPI_ANY_TAG", both, g_rank, MPI_ANY_TAG, MPI_ERR_TAG, manifold);
    if (manifold)
        try_calls("both, both wildcards", both, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_ERR_OTHER, 1);

    /* and traffic between processes still flows on all three */
    MPI_Comm comms[3] = {src_only, tag_only, both};
    for (int i = 0; i < 3; i++) {
        token = g_rank * 10 + i;
        MPI_Sendrecv(&token, 1, MPI_INT, right, i, &got, 1, MPI_INT, left, i, comms[i], &st);
        MTEST_CHECK(got == left * 10 + i, "comm %d: ring exchange got %d", i, got);
        MPI_Comm_free(&comms[i]);
    }
    return mtest_finalize(0);
}
