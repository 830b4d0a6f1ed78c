/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A partitioned ring (MPI_Precv_init from the left, MPI_Psend_init to the right, MPI_Startall,
 * MPI_Pready, then MPI_Waitall, which waits for the receive first) on a communicator whose
 * traffic is spread over the VCIs by mpi_assert_no_any_source, given by MPI_Comm_set_info or
 * MPI_Comm_dup_with_info, and on a plain one. The send request could move data only when a
 * wait on itself advanced it, but the receive was waited for first, on another VCI than the
 * setup arrived on: every process waited for a partition nobody sent. Requests waiting for a
 * control message are now advanced by every progress loop.
 */
#include "mtest.h"

#define ITERS 100

static MPI_Comm make_comm(int how)
{
    MPI_Comm comm;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    if (how == 2) {
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
    } else {
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        if (how == 1)
            MPI_Comm_set_info(comm, info);
    }
    MPI_Info_free(&info);
    return comm;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int how = 0; how < 3; how++) {
        MPI_Comm comm = make_comm(how);
        for (int i = 0; i < ITERS; i++) {
            int out[2] = {i, rank}, in[2] = {-1, -1};
            MPI_Request r[2];
            MPI_Precv_init(in, 2, 1, MPI_INT, prev, 9, comm, MPI_INFO_NULL, &r[0]);
            MPI_Psend_init(out, 2, 1, MPI_INT, next, 9, comm, MPI_INFO_NULL, &r[1]);
            MPI_Startall(2, r);
            MPI_Pready(0, r[1]);
            MPI_Pready(1, r[1]);
            if (i % 2 == 0) {
                MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
            } else { /* the receive alone first */
                MPI_Wait(&r[0], MPI_STATUS_IGNORE);
                MPI_Wait(&r[1], MPI_STATUS_IGNORE);
            }
            MPI_Request_free(&r[0]);
            MPI_Request_free(&r[1]);
            if (!MTEST_CHECK(in[0] == i && in[1] == prev, "way %d iteration %d: got %d %d", how, i,
                             in[0], in[1]))
                break;
        }
        MPI_Comm_free(&comm);
    }
    return mtest_finalize(0);
}
