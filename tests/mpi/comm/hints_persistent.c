/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent and partitioned requests made before MPI_Comm_set_info spreads the communicator
 * (mpi_assert_no_any_source and mpi_assert_no_any_tag) and started after it must meet their
 * peer's, whether the peer made its own before or after set_info. A persistent request used
 * to keep the channel of the communicator as it was at init (the send then went where the
 * receive never looked: a hang); it now takes it at each start. A partitioned pair failed
 * with a protocol error; a communicator with partitioned requests alive is now not spread.
 * A persistent MPI_ANY_SOURCE (or MPI_ANY_TAG) receive made before set_info asserted that none
 * is used is refused at MPI_Start (MPI_ERR_RANK / MPI_ERR_TAG, as MPI_Irecv would be; Manifold
 * only): it was posted where no sender looks and hung. Elsewhere it may work.
 */
#include "mtest.h"

#define NPART 4

static void spread_comm(MPI_Comm comm)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm_set_info(comm, info);
    MPI_Info_free(&info);
}

static MPI_Request make_request(int rank, int partitioned, int *data, int tag, MPI_Comm comm)
{
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 0 && partitioned)
        MPI_Psend_init(data, NPART, 1, MPI_INT, 1, tag, comm, MPI_INFO_NULL, &req);
    else if (rank == 0)
        MPI_Send_init(data, NPART, MPI_INT, 1, tag, comm, &req);
    else if (rank == 1 && partitioned)
        MPI_Precv_init(data, NPART, 1, MPI_INT, 0, tag, comm, MPI_INFO_NULL, &req);
    else if (rank == 1)
        MPI_Recv_init(data, NPART, MPI_INT, 0, tag, comm, &req);
    return req;
}

/* Rank 0 sends to rank 1; sender_early and receiver_early: the side makes its request before
 * set_info. */
static void check_pair(int rank, int partitioned, int sender_early, int receiver_early)
{
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    int data[NPART] = {0}, tag = 5 + partitioned;
    int early = rank == 0 ? sender_early : receiver_early;
    MPI_Request req = early ? make_request(rank, partitioned, data, tag, comm) : MPI_REQUEST_NULL;
    spread_comm(comm);
    if (!early)
        req = make_request(rank, partitioned, data, tag, comm);
    for (int round = 0; round < 3 && rank < 2; round++) {
        for (int i = 0; i < NPART; i++)
            data[i] = rank == 0 ? round * 10 + i : -1;
        MPI_Start(&req);
        if (partitioned && rank == 0)
            MPI_Pready_range(0, NPART - 1, req);
        int rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        MTEST_CHECK(rc == MPI_SUCCESS, "%s, sender %s, receiver %s: round %d failed (%d)",
                    partitioned ? "partitioned" : "persistent", sender_early ? "early" : "late",
                    receiver_early ? "early" : "late", round, rc);
        for (int i = 0; rank == 1 && i < NPART; i++)
            MTEST_CHECK(data[i] == round * 10 + i, "round %d: item %d is %d", round, i, data[i]);
    }
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
    MPI_Comm_free(&comm);
}

/* Rank 1's wildcard receive, made before set_info, started after it; rank 0 sends. */
static void check_wildcard(int rank, int any_tag)
{
    MPI_Comm comm;
    MPI_Request req = MPI_REQUEST_NULL;
    int data = -1, out = 42;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    if (rank == 1)
        MPI_Recv_init(&data, 1, MPI_INT, any_tag ? 0 : MPI_ANY_SOURCE, any_tag ? MPI_ANY_TAG : 5,
                      comm, &req);
    spread_comm(comm);
    if (rank == 0)
        MPI_Send(&out, 1, MPI_INT, 1, 5, comm);
    if (rank == 1) {
        int rc = MPI_Start(&req);
        if (mtest_is_manifold())
            MTEST_CHECK_ERR(rc, any_tag ? MPI_ERR_TAG : MPI_ERR_RANK, "MPI_Start");
        if (rc == MPI_SUCCESS)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        else
            MPI_Recv(&data, 1, MPI_INT, 0, 5, comm, MPI_STATUS_IGNORE);
        MTEST_CHECK(data == out, "wildcard %s: received %d", any_tag ? "tag" : "source", data);
        MPI_Request_free(&req);
    }
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size >= 2)
        for (int partitioned = 0; partitioned < 2; partitioned++)
            for (int early = 0; early < 4; early++)
                check_pair(rank, partitioned, early & 1, early >> 1);
    if (size >= 2)
        for (int any_tag = 0; any_tag < 2; any_tag++)
            check_wildcard(rank, any_tag);
    return mtest_finalize(0);
}
