/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_PROC_NULL on communicators whose traffic the no_any_source/no_any_tag assertions may
 * spread over several channels: sends to and receives from MPI_PROC_NULL (plain, non-blocking,
 * persistent, probes) complete at once with the empty status, whatever source and tag a
 * library uses to pick a channel. Then ordinary traffic still works.
 */
#include "mtest.h"

static int check_null_status(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    return MTEST_CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0,
                       "%s: status source %d tag %d count %d, expected the empty status", what,
                       st->MPI_SOURCE, st->MPI_TAG, count);
}

static void run(MPI_Comm comm, int rank, int size)
{
    int buf[4] = {0}, flag = 0;
    MPI_Status st;
    MPI_Request req;

    MPI_Send(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm);
    MPI_Recv(buf, 4, MPI_INT, MPI_PROC_NULL, 5, comm, &st);
    check_null_status(&st, "MPI_Recv");
    MPI_Irecv(buf, 4, MPI_INT, MPI_PROC_NULL, 1000, comm, &req);
    MPI_Wait(&req, &st);
    check_null_status(&st, "MPI_Irecv");
    MPI_Isend(buf, 4, MPI_INT, MPI_PROC_NULL, 1000, comm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Probe(MPI_PROC_NULL, 9, comm, &st);
    check_null_status(&st, "MPI_Probe");
    MPI_Iprobe(MPI_PROC_NULL, 9, comm, &flag, &st);
    MTEST_CHECK(flag, "MPI_Iprobe from MPI_PROC_NULL: flag 0");
    for (int tag = 0; tag < 70; tag += 7) {
        MPI_Recv_init(buf, 4, MPI_INT, MPI_PROC_NULL, tag, comm, &req);
        for (int i = 0; i < 2; i++) {
            MPI_Start(&req);
            MPI_Wait(&req, &st);
            check_null_status(&st, "persistent receive");
        }
        MPI_Request_free(&req);
        MPI_Send_init(buf, 4, MPI_INT, MPI_PROC_NULL, tag, comm, &req);
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
    }
    /* Ordinary traffic around a ring, one tag per step. */
    for (int tag = 0; tag < 8; tag++) {
        int got = -1, mine = rank * 100 + tag;
        MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, tag, &got, 1, MPI_INT,
                     (rank + size - 1) % size, tag, comm, MPI_STATUS_IGNORE);
        MTEST_CHECK(got == ((rank + size - 1) % size) * 100 + tag, "ring step %d: got %d", tag,
                    got);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    static const char *const keys[] = {"mpi_assert_no_any_source", "mpi_assert_no_any_tag"};
    for (int which = 1; which <= 3; which++) {
        MPI_Info info;
        MPI_Info_create(&info);
        for (int k = 0; k < 2; k++) {
            if (which & (1 << k))
                MPI_Info_set(info, keys[k], "true");
        }
        /* Several communicators, so their home channels differ. */
        MPI_Comm comms[3];
        for (int c = 0; c < 3; c++)
            MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comms[c]);
        MPI_Info_free(&info);
        for (int c = 0; c < 3; c++)
            run(comms[c], rank, size);
        for (int c = 0; c < 3; c++)
            MPI_Comm_free(&comms[c]);
    }
    return mtest_finalize(0);
}
