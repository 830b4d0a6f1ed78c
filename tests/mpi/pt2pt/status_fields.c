/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI_Status object: the standard ABI layout (8 ints, MPI_SOURCE, MPI_TAG and
 * MPI_ERROR first), and on successful single-completion calls the source, tag and count
 * filled in while the MPI_ERROR field is left as it was (MPI-4.1 section 3.2.5: only the
 * calls returning several statuses may set it). Checked for MPI_Recv_c, MPI_Wait,
 * MPI_Test, MPI_Probe, MPI_Iprobe, MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv with
 * MPI_Wait and MPI_Request_get_status, on messages from rank 1 to rank 0.
 */
#include "mtest.h"

#include <stddef.h>

#define SENTINEL_ERROR (-12345)
#define N              10

static int rank;

static void reset(MPI_Status *status)
{
    status->MPI_SOURCE = -100;
    status->MPI_TAG = -100;
    status->MPI_ERROR = SENTINEL_ERROR;
}

static void check(const MPI_Status *status, int tag, const char *what)
{
    int count = -1;

    MPI_Get_count(status, MPI_INT, &count);
    MTEST_CHECK(status->MPI_SOURCE == 1 && status->MPI_TAG == tag && count == N,
                "%s: source %d tag %d count %d, expected 1 %d %d", what, status->MPI_SOURCE,
                status->MPI_TAG, count, tag, N);
    MTEST_CHECK(status->MPI_ERROR == SENTINEL_ERROR, "%s: MPI_ERROR changed to %d", what,
                status->MPI_ERROR);
}

static void check_layout(void)
{
    MTEST_CHECK(sizeof(MPI_Status) == 8 * sizeof(int), "MPI_Status has %zu bytes",
                sizeof(MPI_Status));
    MTEST_CHECK(offsetof(MPI_Status, MPI_SOURCE) == 0 &&
                    offsetof(MPI_Status, MPI_TAG) == sizeof(int) &&
                    offsetof(MPI_Status, MPI_ERROR) == 2 * sizeof(int),
                "MPI_Status public fields are not the first three ints");
}

static void receiver(void)
{
    MPI_Request req;
    MPI_Message msg;
    MPI_Status status;
    int buf[N], flag = 0, tag = 0;

    reset(&status);
    MPI_Recv_c(buf, N, MPI_INT, 1, tag, MPI_COMM_WORLD, &status);
    check(&status, tag++, "MPI_Recv_c");

    MPI_Irecv(buf, N, MPI_INT, 1, tag, MPI_COMM_WORLD, &req);
    reset(&status);
    MPI_Wait(&req, &status);
    check(&status, tag++, "MPI_Wait");

    MPI_Irecv(buf, N, MPI_INT, 1, tag, MPI_COMM_WORLD, &req);
    while (!flag) {
        reset(&status);
        MPI_Test(&req, &flag, &status);
    }
    check(&status, tag++, "MPI_Test");

    MPI_Irecv(buf, N, MPI_INT, 1, tag, MPI_COMM_WORLD, &req);
    flag = 0;
    while (!flag) {
        reset(&status);
        MPI_Request_get_status(req, &flag, &status);
    }
    check(&status, tag++, "MPI_Request_get_status");
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    reset(&status);
    MPI_Probe(1, tag, MPI_COMM_WORLD, &status);
    check(&status, tag, "MPI_Probe");
    flag = 0;
    while (!flag) {
        reset(&status);
        MPI_Iprobe(1, tag, MPI_COMM_WORLD, &flag, &status);
    }
    check(&status, tag, "MPI_Iprobe");
    reset(&status);
    MPI_Mprobe(1, tag, MPI_COMM_WORLD, &msg, &status);
    check(&status, tag, "MPI_Mprobe");
    reset(&status);
    MPI_Mrecv(buf, N, MPI_INT, &msg, &status);
    check(&status, tag++, "MPI_Mrecv");

    flag = 0;
    while (!flag) {
        reset(&status);
        MPI_Improbe(1, tag, MPI_COMM_WORLD, &flag, &msg, &status);
    }
    check(&status, tag, "MPI_Improbe");
    MPI_Imrecv(buf, N, MPI_INT, &msg, &req);
    reset(&status);
    MPI_Wait(&req, &status);
    check(&status, tag, "MPI_Imrecv");
}

int main(int argc, char **argv)
{
    int size, buf[N] = {0};

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_layout();
    if (size >= 2 && rank == 0) {
        receiver();
    } else if (size >= 2 && rank == 1) {
        for (int tag = 0; tag < 6; tag++) {
            MPI_Send(buf, N, MPI_INT, 0, tag, MPI_COMM_WORLD);
        }
    }
    return mtest_finalize(0);
}
