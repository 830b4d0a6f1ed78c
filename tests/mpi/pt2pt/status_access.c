/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI-4.1 accessors and queries around statuses and requests:
 * - MPI_Status_get/set_source, _tag, _error read and write the public fields, and the
 *   MPI_Count `_x` forms (MPI_Get_elements_x, MPI_Status_set_elements_x, MPI_Type_size_x,
 *   MPI_Type_get_extent_x, MPI_Type_get_true_extent_x) agree with the `_c` forms; a count of
 *   elements may exceed what items of the type would fit in memory (2^50 doubles), up to
 *   bytes an MPI_Count holds (MPI_ERR_COUNT beyond);
 * - MPI_Request_get_status_any/all/some report what MPI_Testany/all/some would, and leave
 *   every request as it was: the same requests still complete through MPI_Waitall afterwards;
 *   all-inactive arrays give MPI_UNDEFINED;
 * - MPI_Alloc_mem/MPI_Free_mem, MPI_Comm_get_parent (MPI_COMM_NULL), MPI_Pcontrol and
 *   MPI_Info_create_env (command/argv from the arguments given), MPI_Get_hw_resource_info;
 * - bad arguments (NULL status or outputs, negative sizes, an invalid info) return the right
 *   error class under MPI_ERRORS_RETURN.
 * Runs on any number of processes; the exchange uses rank 0 and the last rank.
 */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define N 4

static void check_status_fields(void)
{
    MPI_Status st;
    int v = -1;
    MTEST_CHECK(MPI_Status_set_source(&st, 3) == MPI_SUCCESS, "Status_set_source failed");
    MTEST_CHECK(MPI_Status_set_tag(&st, 77) == MPI_SUCCESS, "Status_set_tag failed");
    MTEST_CHECK(MPI_Status_set_error(&st, MPI_ERR_TAG) == MPI_SUCCESS, "Status_set_error failed");
    MTEST_CHECK(st.MPI_SOURCE == 3 && st.MPI_TAG == 77 && st.MPI_ERROR == MPI_ERR_TAG,
                "the setters wrote source %d tag %d error %d", st.MPI_SOURCE, st.MPI_TAG,
                st.MPI_ERROR);
    MPI_Status_get_source(&st, &v);
    MTEST_CHECK(v == 3, "Status_get_source gave %d", v);
    MPI_Status_get_tag(&st, &v);
    MTEST_CHECK(v == 77, "Status_get_tag gave %d", v);
    MPI_Status_get_error(&st, &v);
    MTEST_CHECK(v == MPI_ERR_TAG, "Status_get_error gave %d", v);

    MPI_Count c = -1;
    MTEST_CHECK(MPI_Status_set_elements_x(&st, MPI_DOUBLE, 5) == MPI_SUCCESS,
                "Status_set_elements_x failed");
    MPI_Get_elements_x(&st, MPI_DOUBLE, &c);
    MTEST_CHECK(c == 5, "Get_elements_x gave %lld, want 5", (long long)c);
    MPI_Get_elements_x(&st, MPI_INT, &c);
    MTEST_CHECK(c == 10, "Get_elements_x(MPI_INT) of 5 doubles gave %lld", (long long)c);

    /* counts of basic elements, whatever the size of one item of the type */
    MPI_Datatype big;
    MPI_Type_contiguous(1 << 20, MPI_DOUBLE, &big);
    MPI_Type_commit(&big);
    MTEST_CHECK(MPI_Status_set_elements_x(&st, big, (MPI_Count)1 << 50) == MPI_SUCCESS,
                "Status_set_elements_x of 2^50 doubles in 2^20-double items failed");
    MPI_Get_elements_x(&st, big, &c);
    MTEST_CHECK(c == (MPI_Count)1 << 50, "Get_elements_x gave %lld, want 2^50", (long long)c);
    MPI_Get_count_c(&st, big, &c);
    MTEST_CHECK(c == (MPI_Count)1 << 30, "Get_count_c gave %lld, want 2^30", (long long)c);
    MTEST_CHECK_ERR(MPI_Status_set_elements_x(&st, big, (MPI_Count)1 << 61), MPI_ERR_COUNT,
                    "MPI_Status_set_elements_x");
    /* up to the largest byte count itself */
    MTEST_CHECK(MPI_Status_set_elements_x(&st, MPI_BYTE, INT64_MAX) == MPI_SUCCESS,
                "Status_set_elements_x of INT64_MAX bytes failed");
    MTEST_CHECK(MPI_Status_set_elements_x(&st, MPI_DOUBLE, INT64_MAX / 8) == MPI_SUCCESS,
                "Status_set_elements_x of INT64_MAX / 8 doubles failed");
    MPI_Get_elements_x(&st, MPI_DOUBLE, &c);
    MTEST_CHECK(c == INT64_MAX / 8, "Get_elements_x gave %lld, want INT64_MAX / 8", (long long)c);
    MPI_Type_free(&big);

    MPI_Datatype vec;
    MPI_Type_vector(3, 2, 5, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Count size = -1, lb = -1, extent = -1, tlb = -1, textent = -1;
    MPI_Count size_c = -2, lb_c = -2, extent_c = -2, tlb_c = -2, textent_c = -2;
    MPI_Type_size_x(vec, &size);
    MPI_Type_get_extent_x(vec, &lb, &extent);
    MPI_Type_get_true_extent_x(vec, &tlb, &textent);
    MPI_Type_size_c(vec, &size_c);
    MPI_Type_get_extent_c(vec, &lb_c, &extent_c);
    MPI_Type_get_true_extent_c(vec, &tlb_c, &textent_c);
    MTEST_CHECK(size == 24 && size == size_c && lb == lb_c && extent == extent_c && extent == 48 &&
                    tlb == tlb_c && textent == textent_c,
                "_x queries size %lld lb %lld extent %lld true %lld/%lld differ from _c",
                (long long)size, (long long)lb, (long long)extent, (long long)tlb,
                (long long)textent);
    MPI_Type_free(&vec);

    /* error cases */
    MTEST_CHECK_ERR(MPI_Status_get_source(NULL, &v), MPI_ERR_ARG, "MPI_Status_get_source");
    MTEST_CHECK_ERR(MPI_Status_get_tag(&st, NULL), MPI_ERR_ARG, "MPI_Status_get_tag");
    MTEST_CHECK_ERR(MPI_Status_set_error(NULL, 0), MPI_ERR_ARG, "MPI_Status_set_error");
    MTEST_CHECK_ERR(MPI_Type_size_x(MPI_DATATYPE_NULL, &size), MPI_ERR_TYPE, "MPI_Type_size_x");
}

/* Rank 0 posts N receives from `peer`; the peer sends them one at a time when told to, so the
 * queries see partly complete arrays. */
static void check_request_queries(int rank, int peer)
{
    int bufs[N], idx[N], flag = -1, outcount = -1, index = -1, go = 1;
    MPI_Request reqs[N];
    MPI_Status sts[N], st;

    if (rank != 0 && rank != peer)
        return;
    if (rank == peer) {
        for (int i = 0; i < N; i++) {
            MPI_Recv(&go, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int v = 100 + i;
            MPI_Send(&v, 1, MPI_INT, 0, i, MPI_COMM_WORLD);
        }
        return;
    }
    for (int i = 0; i < N; i++)
        MPI_Irecv(&bufs[i], 1, MPI_INT, peer, i, MPI_COMM_WORLD, &reqs[i]);

    /* nothing sent yet */
    MPI_Request_get_status_all(N, reqs, &flag, sts);
    MTEST_CHECK(flag == 0, "get_status_all with nothing sent set flag %d", flag);
    MPI_Request_get_status_some(N, reqs, &outcount, idx, sts);
    MTEST_CHECK(outcount == 0, "get_status_some with nothing sent gave %d", outcount);

    /* the first message: any/some find request 0, and keep finding it (nothing is freed) */
    MPI_Send(&go, 1, MPI_INT, peer, 99, MPI_COMM_WORLD);
    do {
        MPI_Request_get_status_any(N, reqs, &index, &flag, &st);
    } while (!flag);
    MTEST_CHECK(index == 0 && st.MPI_SOURCE == peer && st.MPI_TAG == 0,
                "get_status_any gave index %d source %d tag %d", index, st.MPI_SOURCE, st.MPI_TAG);
    MPI_Request_get_status_any(N, reqs, &index, &flag, &st);
    MTEST_CHECK(flag && index == 0, "a second get_status_any gave flag %d index %d", flag, index);
    MTEST_CHECK(reqs[0] != MPI_REQUEST_NULL, "get_status_any freed the request");
    MPI_Request_get_status_some(N, reqs, &outcount, idx, sts);
    MTEST_CHECK(
        outcount == 1 && idx[0] == 0 && sts[0].MPI_TAG == 0 && sts[0].MPI_ERROR == MPI_SUCCESS,
        "get_status_some gave outcount %d index %d tag %d", outcount, idx[0], sts[0].MPI_TAG);

    /* the rest: get_status_all becomes true, with every status filled */
    for (int i = 1; i < N; i++)
        MPI_Send(&go, 1, MPI_INT, peer, 99, MPI_COMM_WORLD);
    do {
        MPI_Request_get_status_all(N, reqs, &flag, sts);
    } while (!flag);
    for (int i = 0; i < N; i++) {
        int count = -1;
        MPI_Get_count(&sts[i], MPI_INT, &count);
        MTEST_CHECK(sts[i].MPI_SOURCE == peer && sts[i].MPI_TAG == i && count == 1 &&
                        bufs[i] == 100 + i,
                    "get_status_all status %d: source %d tag %d count %d value %d", i,
                    sts[i].MPI_SOURCE, sts[i].MPI_TAG, count, bufs[i]);
        MTEST_CHECK(reqs[i] != MPI_REQUEST_NULL, "get_status_all freed request %d", i);
    }
    MPI_Request_get_status_all(N, reqs, &flag, MPI_STATUSES_IGNORE);
    MTEST_CHECK(flag, "get_status_all with MPI_STATUSES_IGNORE set flag %d", flag);
    /* the requests are still live: the usual completion frees them */
    MTEST_CHECK(MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "Waitall failed");
    for (int i = 0; i < N; i++)
        MTEST_CHECK(reqs[i] == MPI_REQUEST_NULL, "Waitall left request %d", i);

    /* only inactive requests */
    MPI_Request_get_status_any(N, reqs, &index, &flag, &st);
    MTEST_CHECK(flag && index == MPI_UNDEFINED, "get_status_any on nulls: flag %d index %d", flag,
                index);
    MPI_Request_get_status_some(N, reqs, &outcount, idx, sts);
    MTEST_CHECK(outcount == MPI_UNDEFINED, "get_status_some on nulls gave %d", outcount);
    MPI_Request_get_status_all(N, reqs, &flag, sts);
    MTEST_CHECK(flag, "get_status_all on nulls set flag %d", flag);

    MTEST_CHECK_ERR(MPI_Request_get_status_all(-1, reqs, &flag, sts), MPI_ERR_COUNT,
                    "MPI_Request_get_status_all");
    MTEST_CHECK_ERR(MPI_Request_get_status_any(N, reqs, NULL, &flag, &st), MPI_ERR_ARG,
                    "MPI_Request_get_status_any");
    MTEST_CHECK_ERR(MPI_Request_get_status_some(N, reqs, NULL, idx, sts), MPI_ERR_ARG,
                    "MPI_Request_get_status_some");
}

static void check_misc(int argc, char **argv)
{
    double *mem = NULL;
    MTEST_CHECK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem) == MPI_SUCCESS &&
                    mem != NULL,
                "MPI_Alloc_mem failed");
    for (int i = 0; i < 1000; i++)
        mem[i] = i;
    MTEST_CHECK(mem[999] == 999.0, "allocated memory does not hold its values");
    MTEST_CHECK(MPI_Free_mem(mem) == MPI_SUCCESS, "MPI_Free_mem failed");
    void *zero = NULL;
    MTEST_CHECK(MPI_Alloc_mem(0, MPI_INFO_NULL, &zero) == MPI_SUCCESS, "MPI_Alloc_mem(0) failed");
    MPI_Free_mem(zero);
    MTEST_CHECK_ERR(MPI_Alloc_mem(-1, MPI_INFO_NULL, &zero), MPI_ERR_ARG, "MPI_Alloc_mem");
    MTEST_CHECK_ERR(MPI_Alloc_mem(8, (MPI_Info)&zero, &zero), MPI_ERR_INFO, "MPI_Alloc_mem");

    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_Comm_get_parent(&parent);
    MTEST_CHECK(parent == MPI_COMM_NULL, "MPI_Comm_get_parent is not MPI_COMM_NULL");
    MTEST_CHECK(MPI_Pcontrol(1) == MPI_SUCCESS && MPI_Pcontrol(0, "x") == MPI_SUCCESS,
                "MPI_Pcontrol failed");

    char *args[] = {"prog", "one", "two", NULL};
    MPI_Info info;
    char value[MPI_MAX_INFO_VAL];
    int found = 0;
    MTEST_CHECK(MPI_Info_create_env(3, args, &info) == MPI_SUCCESS, "Info_create_env failed");
    MPI_Info_get(info, "command", MPI_MAX_INFO_VAL - 1, value, &found);
    MTEST_CHECK(found && strcmp(value, "prog") == 0, "command is '%s'", found ? value : "");
    MPI_Info_get(info, "argv", MPI_MAX_INFO_VAL - 1, value, &found);
    MTEST_CHECK(found && strcmp(value, "one two") == 0, "argv is '%s'", found ? value : "");
    MPI_Info_get(info, "maxprocs", MPI_MAX_INFO_VAL - 1, value, &found);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MTEST_CHECK(found && atoi(value) == size, "maxprocs is '%s'", found ? value : "");
    MPI_Info_free(&info);
    MTEST_CHECK(MPI_Info_create_env(argc, argv, &info) == MPI_SUCCESS, "Info_create_env failed");
    MPI_Info_free(&info);
    MTEST_CHECK_ERR(MPI_Info_create_env(0, NULL, NULL), MPI_ERR_ARG, "MPI_Info_create_env");

    MTEST_CHECK(MPI_Get_hw_resource_info(&info) == MPI_SUCCESS, "Get_hw_resource_info failed");
    MPI_Info_get(info, "processors_allowed", MPI_MAX_INFO_VAL - 1, value, &found);
    MTEST_CHECK(found && atoi(value) >= 1, "processors_allowed is '%s'", found ? value : "");
    MPI_Info_free(&info);
    MTEST_CHECK_ERR(MPI_Get_hw_resource_info(NULL), MPI_ERR_ARG, "MPI_Get_hw_resource_info");
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_status_fields();
    if (size > 1)
        check_request_queries(rank, size - 1);
    check_misc(argc, argv);
    return mtest_finalize(mtest_error_count());
}
