/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bad arguments to the collectives and reduction operations report the right error class
 * through the error handler (MPI_ERRORS_RETURN here) on every rank, and the communicator keeps
 * working: root out of range (MPI_ERR_ROOT), negative count (MPI_ERR_COUNT), null datatype
 * (MPI_ERR_TYPE), MPI_OP_NULL and an operation not defined on the type (MPI_ERR_OP), the same
 * buffer as sendbuf and recvbuf (MPI_ERR_BUFFER), freeing a predefined operation (MPI_ERR_OP),
 * MPI_IN_PLACE as recvbuf (MPI_ERR_BUFFER), a NULL array of counts or types (MPI_ERR_ARG).
 * Every check uses arguments that all ranks see as wrong, so no rank enters the collective.
 * That includes buffers that overlap without being the same (MPI_ERR_BUFFER): each rank sends
 * its own block of the receive buffer in MPI_Allgather and MPI_Allgatherv (only rank 0's starts
 * where the receive buffer does; the others once went on into the collective alone and hung),
 * and MPI_Alltoall and MPI_Allreduce from one element into the receive buffer.
 */
#include "mtest.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int rank, size, errs = 0, buf[4] = {1, 2, 3, 4}, out[4];
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    int rc = MPI_Bcast(buf, 1, MPI_INT, size, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_ROOT, "MPI_Bcast");
    rc = MPI_Reduce(buf, out, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_ROOT, "MPI_Reduce");
    rc = MPI_Gather(buf, 1, MPI_INT, out, 1, MPI_INT, size + 3, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_ROOT, "MPI_Gather");
    rc = MPI_Bcast(buf, -1, MPI_INT, 0, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Bcast");
    if (mtest_is_manifold()) {
        /* MPICH 5.0.2 crashes on a negative count in MPI_Allreduce. */
        rc = MPI_Allreduce(buf, out, -2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Allreduce");
    }
    rc = MPI_Allgather(buf, -1, MPI_INT, out, 1, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Allgather");
    rc = MPI_Bcast(buf, 1, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Bcast");
    rc = MPI_Allreduce(buf, out, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_OP, "MPI_Allreduce");
    rc = MPI_Allreduce(buf, out, 1, MPI_INT, MPI_MINLOC, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_OP, "MPI_Allreduce");
    rc = MPI_Reduce(buf, out, 1, MPI_DOUBLE, MPI_BAND, 0, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_OP, "MPI_Reduce");
    rc = MPI_Allreduce(buf, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Allreduce");
    rc = MPI_Reduce_local(buf, out, 1, MPI_INT, MPI_MAXLOC);
    MTEST_CHECK_ERR(rc, MPI_ERR_OP, "MPI_Reduce_local");
    MPI_Op op = MPI_SUM;
    rc = MPI_Op_free(&op);
    MTEST_CHECK_ERR(rc, MPI_ERR_OP, "MPI_Op_free");

    /* overlapping buffers: every rank sees its own overlap */
    if (size <= 64) {
        int wide[128], cnt[64], dsp[64];
        for (int i = 0; i < size; i++) {
            cnt[i] = 2;
            dsp[i] = 2 * i;
        }
        rc = MPI_Allgather(wide + rank, 1, MPI_INT, wide, 1, MPI_INT, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Allgather");
        rc = MPI_Allgatherv(wide + 2 * rank, 2, MPI_INT, wide, cnt, dsp, MPI_INT, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Allgatherv");
        if (size > 1) { /* one process: the send block ends where the receive block starts */
            rc = MPI_Alltoall(wide + 1, 1, MPI_INT, wide, 1, MPI_INT, MPI_COMM_WORLD);
            MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Alltoall");
        }
        rc = MPI_Allreduce(wide + 1, wide, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Allreduce");
    }

    /* MPI_IN_PLACE where only sendbuf may take it (it crashed MPI_Reduce_scatter_block) */
    int counts[64], displs[64];
    for (int i = 0; i < size && i < 64; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    rc = MPI_Reduce_scatter_block(buf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Reduce_scatter_block");
    rc = MPI_Reduce_scatter(buf, MPI_IN_PLACE, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Reduce_scatter");
    rc = MPI_Allreduce(buf, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Allreduce");

    /* NULL arrays of counts or types where they are significant: not uniform zero counts */
    if (size <= 64) {
        MPI_Datatype types[64];
        for (int i = 0; i < size; i++)
            types[i] = MPI_INT;
        int big[64];
        rc = MPI_Reduce_scatter(buf, out, NULL, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Reduce_scatter");
        rc = MPI_Allgatherv(buf, 1, MPI_INT, big, NULL, displs, MPI_INT, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Allgatherv");
        rc = MPI_Gatherv(buf, 1, MPI_INT, big, NULL, displs, MPI_INT, 0, MPI_COMM_SELF);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Gatherv");
        rc =
            MPI_Alltoallv(buf, NULL, displs, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Alltoallv");
        rc = MPI_Alltoallw(buf, counts, displs, NULL, big, counts, displs, types, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Alltoallw");
        /* a bad element is named by its index */
        char text[MPI_MAX_ERROR_STRING], want[32];
        int len = 0;
        types[size - 1] = MPI_DATATYPE_NULL;
        rc = MPI_Alltoallw(buf, counts, displs, types, big, counts, displs, types, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Alltoallw");
        MPI_Error_string(rc, text, &len);
        snprintf(want, sizeof(want), "sendtypes[%d]", size - 1);
        MTEST_CHECK(!mtest_is_manifold() || strstr(text, want) != NULL,
                    "the error does not name %s: %s", want, text);
    }

    /* Still works. */
    int sum = 0;
    rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS && sum == size * (size - 1) / 2, "allreduce after errors: %d",
                sum);
    return mtest_finalize(errs);
}
