/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI-4.1 buffers for buffered sends: a buffered send on a communicator uses the
 * communicator's buffer, else its session's, else the process's. Each is checked by what
 * fails without it: a communicator with a buffer too small for a message gives MPI_ERR_BUFFER
 * although the process's is large, and a communicator without one falls back to the
 * process's. MPI_BUFFER_AUTOMATIC lifts the limit. Flushes (blocking and not) wait until the
 * buffered messages are out; detach gives back what was attached; a pending iflush outlives
 * MPI_Comm_free of its communicator, and one freed while pending goes (no leak). Errors:
 * attaching twice, a NULL buffer and detaching nothing are MPI_ERR_BUFFER (a negative size is
 * MPI_ERR_ARG), and so is MPI_Start of a
 * persistent buffered send with no buffer, which leaves the request inactive. A buffer
 * above INT_MAX bytes is detached only by the _c forms (MPI_ERR_VALUE_TOO_LARGE from the int
 * ones, which leave it attached).
 */
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define SMALL 64
#define BIG   (1 << 16)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Comm comm, other;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_dup(MPI_COMM_WORLD, &other);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(other, MPI_ERRORS_RETURN);

    char *process_buf = malloc(BIG + MPI_BSEND_OVERHEAD);
    char *comm_buf = malloc(SMALL + MPI_BSEND_OVERHEAD);
    int data[256], got[256];
    for (int i = 0; i < 256; i++)
        data[i] = rank * 1000 + i;
    MPI_Buffer_attach(process_buf, BIG + MPI_BSEND_OVERHEAD);
    rc = MPI_Comm_attach_buffer(comm, comm_buf, SMALL + MPI_BSEND_OVERHEAD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_attach_buffer: rc %d", rc);

    /* 1 KiB does not fit in the communicator's buffer: its own buffer is the one used. */
    rc = MPI_Bsend(data, 256, MPI_INT, peer, 1, comm);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Bsend");
    /* 16 bytes fit. */
    rc = MPI_Bsend(data, 4, MPI_INT, peer, 2, comm);
    MTEST_CHECK(rc == MPI_SUCCESS, "small MPI_Bsend on the communicator: rc %d", rc);
    /* Another communicator has none: the process's buffer takes 1 KiB. */
    rc = MPI_Bsend(data, 256, MPI_INT, peer, 3, other);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend falling back to the process buffer: rc %d", rc);
    rc = MPI_Comm_flush_buffer(comm);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_flush_buffer: rc %d", rc);
    MPI_Request req;
    rc = MPI_Buffer_iflush(&req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Buffer_iflush: rc %d", rc);
    MPI_Recv(got, 4, MPI_INT, from, 2, comm, MPI_STATUS_IGNORE);
    MTEST_CHECK(got[3] == from * 1000 + 3, "small message: %d", got[3]);
    MPI_Recv(got, 256, MPI_INT, from, 3, other, MPI_STATUS_IGNORE);
    MTEST_CHECK(got[255] == from * 1000 + 255, "process-buffer message: %d", got[255]);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MTEST_CHECK(req == MPI_REQUEST_NULL, "iflush request not freed");
    rc = MPI_Comm_iflush_buffer(comm, &req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_iflush_buffer: rc %d", rc);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Buffer_flush();

    /* Attaching twice, detaching twice. */
    rc = MPI_Comm_attach_buffer(comm, comm_buf, SMALL);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Comm_attach_buffer");
    void *back = NULL;
    int back_size = -1;
    rc = MPI_Comm_detach_buffer(comm, &back, &back_size);
    MTEST_CHECK(rc == MPI_SUCCESS && back == comm_buf && back_size == SMALL + MPI_BSEND_OVERHEAD,
                "MPI_Comm_detach_buffer: rc %d size %d", rc, back_size);
    rc = MPI_Comm_detach_buffer(comm, &back, &back_size);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Comm_detach_buffer");
    rc = MPI_Comm_attach_buffer(comm, comm_buf, -1); /* a size, not a buffer: MPI_ERR_ARG */
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Comm_attach_buffer", "size");

    /* MPI_BUFFER_AUTOMATIC on the communicator: no limit, even with no process buffer. */
    MPI_Buffer_detach(&back, &back_size);
    MPI_Comm_attach_buffer(comm, MPI_BUFFER_AUTOMATIC, 0);
    rc = MPI_Bsend(data, 256, MPI_INT, peer, 4, comm);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend with MPI_BUFFER_AUTOMATIC: rc %d", rc);
    rc = MPI_Bsend(data, 256, MPI_INT, peer, 5, other);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Bsend");
    MPI_Recv(got, 256, MPI_INT, from, 4, comm, MPI_STATUS_IGNORE);
    MTEST_CHECK(got[7] == from * 1000 + 7, "automatic-buffer message: %d", got[7]);
    MPI_Comm_detach_buffer(comm, &back, &back_size);
    MTEST_CHECK(back == MPI_BUFFER_AUTOMATIC, "detach did not give MPI_BUFFER_AUTOMATIC back");
    /* its size argument is ignored, whatever it is: the int detaches give it back */
    MPI_Count sizes[2] = {-1, (MPI_Count)1 << 40};
    for (int i = 0; i < 2; i++) {
        rc = MPI_Comm_attach_buffer_c(comm, MPI_BUFFER_AUTOMATIC, sizes[i]);
        MTEST_CHECK(rc == MPI_SUCCESS, "automatic buffer of size %lld: rc %d", (long long)sizes[i],
                    rc);
        rc = MPI_Comm_detach_buffer(comm, &back, &back_size);
        MTEST_CHECK(rc == MPI_SUCCESS && back == MPI_BUFFER_AUTOMATIC,
                    "detaching the automatic buffer of size %lld: rc %d", (long long)sizes[i], rc);
    }
    MPI_Comm_free(&comm);
    MPI_Comm_free(&other);

    /* A session's buffer serves the communicators made from its groups. */
    MPI_Session session;
    MPI_Group group;
    rc = MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Session_init: rc %d", rc);
    MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
    MPI_Comm_create_from_group(group, "bsend_attach", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    MPI_Group_free(&group);
    rc = MPI_Bsend(data, 16, MPI_INT, peer, 6, comm);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Bsend");
    char *session_buf = malloc(BIG);
    rc = MPI_Session_attach_buffer(session, session_buf, BIG);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Session_attach_buffer: rc %d", rc);
    rc = MPI_Session_attach_buffer(session, session_buf, BIG);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Session_attach_buffer");
    rc = MPI_Bsend(data, 16, MPI_INT, peer, 7, comm);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend through the session buffer: rc %d", rc);
    rc = MPI_Session_iflush_buffer(session, &req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Session_iflush_buffer: rc %d", rc);
    MPI_Recv(got, 16, MPI_INT, from, 7, comm, MPI_STATUS_IGNORE);
    MTEST_CHECK(got[15] == from * 1000 + 15, "session-buffer message: %d", got[15]);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    /* ... and the communicators derived from those: duplicated, split, made from a group,
     * and made from groups derived from the session's (a group operation, the group of a
     * session communicator), which lost the session before. */
    MPI_Comm derived[6];
    MPI_Request ireq;
    MPI_Comm_dup(comm, &derived[0]);
    MPI_Comm_split(comm, 0, rank, &derived[1]);
    MPI_Comm_group(comm, &group);
    MPI_Comm_create(comm, group, &derived[3]);
    MPI_Comm_create_from_group(group, "bsend_attach.comm_group", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                               &derived[4]);
    MPI_Group_free(&group);
    MPI_Group pset_group = MPI_GROUP_NULL, reordered = MPI_GROUP_NULL;
    MPI_Group_from_session_pset(session, "mpi://WORLD", &pset_group);
    int nranks = 0, first_range[1][3];
    MPI_Group_size(pset_group, &nranks);
    first_range[0][0] = nranks - 1;
    first_range[0][1] = 0;
    first_range[0][2] = -1;
    MPI_Group_range_incl(pset_group, 1, first_range, &reordered);
    MPI_Comm_create_from_group(reordered, "bsend_attach.reordered", MPI_INFO_NULL,
                               MPI_ERRORS_RETURN, &derived[5]);
    MPI_Group_free(&reordered);
    MPI_Group_free(&pset_group);
    MPI_Comm_idup(comm, &derived[2], &ireq);
    MPI_Wait(&ireq, MPI_STATUS_IGNORE);
    for (int i = 0; i < 6; i++) {
        /* the same world peers; their ranks in derived[5] are reversed */
        int to = i == 5 ? size - 1 - peer : peer, src = i == 5 ? size - 1 - from : from;
        rc = MPI_Bsend(data, 16, MPI_INT, to, 8 + i, derived[i]);
        MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Bsend on derived communicator %d: rc %d", i, rc);
        if (rc == MPI_SUCCESS) { /* (nothing to receive after a failed send) */
            MPI_Recv(got, 16, MPI_INT, src, 8 + i, derived[i], MPI_STATUS_IGNORE);
            MTEST_CHECK(got[15] == from * 1000 + 15, "derived %d: message %d", i, got[15]);
        }
        MPI_Comm_free(&derived[i]);
    }
    MPI_Session_flush_buffer(session);

    /* a pending iflush of a communicator's buffer outlives the communicator */
    MPI_Comm doomed;
    MPI_Comm_dup(MPI_COMM_WORLD, &doomed);
    MPI_Comm_attach_buffer(doomed, comm_buf, SMALL + MPI_BSEND_OVERHEAD);
    MPI_Bsend(data, 4, MPI_INT, peer, 20, doomed);
    rc = MPI_Comm_iflush_buffer(doomed, &req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_iflush_buffer: rc %d", rc);
    MPI_Recv(got, 4, MPI_INT, from, 20, doomed, MPI_STATUS_IGNORE);
    MPI_Comm_free(&doomed);
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    MTEST_CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL, "iflush after MPI_Comm_free: rc %d",
                rc);
    /* freed while pending: goes at once */
    rc = MPI_Buffer_iflush(&req);
    if (rc == MPI_SUCCESS)
        rc = MPI_Request_free(&req);
    MTEST_CHECK(rc == MPI_SUCCESS && req == MPI_REQUEST_NULL, "freeing an iflush: rc %d", rc);

    /* a persistent buffered send with no buffer (MPI_COMM_WORLD has none, the process's is
     * detached): MPI_ERR_BUFFER, and the request stays inactive */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Request pers;
    MPI_Bsend_init(data, 4, MPI_INT, peer, 21, MPI_COMM_WORLD, &pers);
    rc = MPI_Start(&pers);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Start");
    rc = MPI_Start(&pers);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Start"); /* not "already active" */
    MPI_Request_free(&pers);

    rc = MPI_Session_detach_buffer(session, &back, &back_size);
    MTEST_CHECK(rc == MPI_SUCCESS && back == session_buf && back_size == BIG,
                "MPI_Session_detach_buffer: rc %d", rc);
    rc = MPI_Session_detach_buffer(session, &back, &back_size);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Session_detach_buffer");

    /* A buffer larger than INT_MAX (attached, never used: nothing reads or writes it): the int
     * detaches cannot give its size back, MPI_ERR_VALUE_TOO_LARGE, and it stays attached. */
    static char huge_stand_in[1];
    MPI_Count huge = (MPI_Count)3 << 30, back_c = 0;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rc = MPI_Buffer_attach(data, -1);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Buffer_attach", "size");
    rc = MPI_Buffer_attach(NULL, 16);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_BUFFER, "MPI_Buffer_attach", "buffer");
    MPI_Buffer_attach_c(huge_stand_in, huge);
    MPI_Comm_attach_buffer_c(comm, huge_stand_in, huge);
    MPI_Session_attach_buffer_c(session, huge_stand_in, huge);
    back_size = -1;
    rc = MPI_Buffer_detach(&back, &back_size);
    MTEST_CHECK_ERR(rc, MPI_ERR_VALUE_TOO_LARGE, "MPI_Buffer_detach");
    rc = MPI_Comm_detach_buffer(comm, &back, &back_size);
    MTEST_CHECK_ERR(rc, MPI_ERR_VALUE_TOO_LARGE, "MPI_Comm_detach_buffer");
    rc = MPI_Session_detach_buffer(session, &back, &back_size);
    MTEST_CHECK_ERR(rc, MPI_ERR_VALUE_TOO_LARGE, "MPI_Session_detach_buffer");
    MTEST_CHECK(back_size == -1, "a failed detach set size to %d", back_size);
    rc = MPI_Buffer_detach_c(&back, &back_c);
    MTEST_CHECK(rc == MPI_SUCCESS && back == huge_stand_in && back_c == huge,
                "MPI_Buffer_detach_c: rc %d size %lld", rc, (long long)back_c);
    rc = MPI_Comm_detach_buffer_c(comm, &back, &back_c);
    MTEST_CHECK(rc == MPI_SUCCESS && back_c == huge, "MPI_Comm_detach_buffer_c: rc %d", rc);
    rc = MPI_Session_detach_buffer_c(session, &back, &back_c);
    MTEST_CHECK(rc == MPI_SUCCESS && back_c == huge, "MPI_Session_detach_buffer_c: rc %d", rc);

    MPI_Comm_free(&comm);
    MPI_Session_finalize(&session);

    /* An iflush left pending across MPI_Session_finalize (erroneous) completes at the next
     * test instead of locking the session's freed buffer, where it hung. */
    MPI_Session late;
    MPI_Request late_req = MPI_REQUEST_NULL;
    int late_flag = 0;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &late);
    MPI_Session_attach_buffer(late, session_buf, SMALL + MPI_BSEND_OVERHEAD);
    MPI_Session_iflush_buffer(late, &late_req);
    MPI_Session_detach_buffer(late, &back, &back_size);
    MPI_Session_finalize(&late);
    for (int i = 0; i < 1000 && !late_flag; i++)
        MPI_Test(&late_req, &late_flag, MPI_STATUS_IGNORE);
    MTEST_CHECK(late_flag && late_req == MPI_REQUEST_NULL,
                "an iflush that outlived its session did not complete");
    free(session_buf);
    free(process_buf);
    free(comm_buf);
    return mtest_finalize(0);
}
