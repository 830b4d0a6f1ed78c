/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erroneous partitioned calls return the right error class through the error handler (set to
 * MPI_ERRORS_RETURN) and leave the requests usable: MPI_Pready on a request not yet started,
 * an out-of-range partition in MPI_Pready, MPI_Pready_range and MPI_Pready_list, a partition
 * marked ready twice, MPI_Parrived on a send request, MPI_Pready on a receive request,
 * MPI_Request_free and MPI_Cancel on an active request, a partition listed twice in
 * MPI_Pready_list (nothing is marked), and bad arguments to MPI_Psend_init: a NULL buffer with a
 * derived datatype (MPI_ERR_BUFFER; absolute addresses are not allowed in partitioned
 * communication) and a count whose product with the partitions overflows (MPI_ERR_COUNT). The
 * exchange then completes normally on MPI_COMM_SELF. Not errors: MPI_Parrived of
 * MPI_REQUEST_NULL (flag true, MPI-4.1 4.2.2) and a receive from MPI_PROC_NULL (the null
 * process's status); marking a partition of a send to MPI_PROC_NULL twice is an error there too.
 */
#include "mtest.h"

int main(int argc, char **argv)
{
    int sbuf[8] = {1, 2, 3, 4, 5, 6, 7, 8}, rbuf[8] = {0};
    MPI_Request sreq, rreq, bad;
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MTEST_CHECK_ERR(MPI_Psend_init(sbuf, 0, 2, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad),
                    MPI_ERR_ARG, "MPI_Psend_init");
    MTEST_CHECK_ERR(MPI_Psend_init(sbuf, 4, 2, MPI_INT, 3, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad),
                    MPI_ERR_RANK, "MPI_Psend_init");
    MTEST_CHECK_ERR(
        MPI_Precv_init(rbuf, 4, 2, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad),
        MPI_ERR_RANK, "MPI_Precv_init");
    MTEST_CHECK_ERR(MPI_Psend_init(sbuf, 4, -1, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad),
                    MPI_ERR_COUNT, "MPI_Psend_init");
    MTEST_CHECK_ERR(MPI_Psend_init(sbuf, 8, (MPI_Count)1 << 61, MPI_BYTE, 0, 1, MPI_COMM_SELF,
                                   MPI_INFO_NULL, &bad),
                    MPI_ERR_COUNT, "MPI_Psend_init");
    MTEST_CHECK_ERR(MPI_Psend_init(sbuf, 2, (MPI_Count)1 << 62, MPI_INT, 0, 1, MPI_COMM_SELF,
                                   MPI_INFO_NULL, &bad),
                    MPI_ERR_COUNT, "MPI_Psend_init");
    MPI_Datatype four;
    MPI_Type_contiguous(4, MPI_INT, &four);
    MPI_Type_commit(&four);
    MTEST_CHECK_ERR(MPI_Psend_init(NULL, 2, 1, four, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad),
                    MPI_ERR_BUFFER, "MPI_Psend_init");
    MTEST_CHECK_ERR(MPI_Precv_init(NULL, 2, 1, four, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &bad),
                    MPI_ERR_BUFFER, "MPI_Precv_init");
    MPI_Type_free(&four);

    MPI_Psend_init(sbuf, 4, 2, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &sreq);
    MPI_Precv_init(rbuf, 2, 4, MPI_INT, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &rreq);
    MTEST_CHECK_ERR(MPI_Pready(0, sreq), MPI_ERR_REQUEST, "MPI_Pready");
    MTEST_CHECK_ERR(MPI_Parrived(sreq, 0, &(int){0}), MPI_ERR_REQUEST, "MPI_Parrived");

    MPI_Start(&rreq);
    MPI_Start(&sreq);
    MTEST_CHECK_ERR(MPI_Pready(4, sreq), MPI_ERR_ARG, "MPI_Pready");
    MTEST_CHECK_ERR(MPI_Pready(-1, sreq), MPI_ERR_ARG, "MPI_Pready");
    MTEST_CHECK_ERR(MPI_Pready_range(2, 9, sreq), MPI_ERR_ARG, "MPI_Pready_range");
    MTEST_CHECK_ERR(MPI_Pready_range(3, 2, sreq), MPI_ERR_ARG, "MPI_Pready_range");
    MTEST_CHECK_ERR(MPI_Pready_list(2, (int[]){0, 7}, sreq), MPI_ERR_ARG, "MPI_Pready_list");
    MTEST_CHECK_ERR(MPI_Pready(0, rreq), MPI_ERR_REQUEST, "MPI_Pready");
    MTEST_CHECK_ERR(MPI_Parrived(rreq, 2, &(int){0}), MPI_ERR_ARG, "MPI_Parrived");
    MTEST_CHECK_ERR(MPI_Request_free(&sreq), MPI_ERR_REQUEST, "MPI_Request_free");
    MTEST_CHECK_ERR(MPI_Request_free(&rreq), MPI_ERR_REQUEST, "MPI_Request_free");
    MTEST_CHECK(sreq != MPI_REQUEST_NULL && rreq != MPI_REQUEST_NULL,
                "a failed MPI_Request_free reset the handle");
    MTEST_CHECK_ERR(MPI_Cancel(&sreq), MPI_ERR_REQUEST, "MPI_Cancel");
    MTEST_CHECK_ERR(MPI_Cancel(&rreq), MPI_ERR_REQUEST, "MPI_Cancel");
    MTEST_CHECK_ERR(MPI_Pready_list(3, (int[]){1, 2, 1}, sreq), MPI_ERR_ARG, "MPI_Pready_list");

    /* The failed MPI_Pready_list calls marked nothing, so partitions 0-2 are still free. */
    MTEST_CHECK(MPI_Pready(0, sreq) == MPI_SUCCESS, "MPI_Pready(0) failed after the errors");
    MTEST_CHECK_ERR(MPI_Pready(0, sreq), MPI_ERR_ARG, "MPI_Pready");
    MTEST_CHECK_ERR(MPI_Pready_list(2, (int[]){3, 0}, sreq), MPI_ERR_ARG, "MPI_Pready_list");
    MTEST_CHECK(MPI_Pready_range(1, 3, sreq) == MPI_SUCCESS, "MPI_Pready_range(1, 3) failed");
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    MPI_Wait(&rreq, MPI_STATUS_IGNORE);
    for (int i = 0; i < 8; i++)
        MTEST_CHECK(rbuf[i] == sbuf[i], "item %d is %d, expected %d", i, rbuf[i], sbuf[i]);
    MTEST_CHECK_ERR(MPI_Pready(0, sreq), MPI_ERR_REQUEST, "MPI_Pready");
    MTEST_CHECK(MPI_Request_free(&sreq) == MPI_SUCCESS && MPI_Request_free(&rreq) == MPI_SUCCESS,
                "MPI_Request_free of inactive partitioned requests failed");

    int flag = 0;
    MTEST_CHECK(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag) == MPI_SUCCESS && flag == 1,
                "MPI_Parrived(MPI_REQUEST_NULL): flag %d", flag);
    MPI_Status st;
    MPI_Precv_init(rbuf, 2, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_SELF, MPI_INFO_NULL, &rreq);
    MPI_Start(&rreq);
    MPI_Wait(&rreq, &st);
    int n = -1;
    MPI_Get_count(&st, MPI_INT, &n);
    MTEST_CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && n == 0,
                "a partitioned receive from MPI_PROC_NULL: source %d tag %d count %d",
                st.MPI_SOURCE, st.MPI_TAG, n);
    MPI_Request_free(&rreq);
    MPI_Psend_init(sbuf, 2, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_SELF, MPI_INFO_NULL, &sreq);
    for (int iter = 0; iter < 2; iter++) {
        MPI_Start(&sreq);
        MTEST_CHECK(MPI_Pready(1, sreq) == MPI_SUCCESS, "MPI_Pready to MPI_PROC_NULL failed");
        MTEST_CHECK_ERR(MPI_Pready(1, sreq), MPI_ERR_ARG, "MPI_Pready");
        MPI_Pready(0, sreq);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&sreq);
    return mtest_finalize(0);
}
