/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress from polling calls. MPI requires that repeating MPI_Iprobe, MPI_Test (and the
 * other nonblocking completion calls) eventually succeeds once the matching send or receive
 * can complete, which includes moving other pending operations the peer's progress depends
 * on. Single-threaded, processes in pairs (2k, 2k+1): A starts a 1 MiB MPI_Isend on comm 1,
 * then polls comm 0 only, with an MPI_Iprobe loop, an MPI_Test loop on an MPI_Irecv, or an
 * MPI_Testany loop over just that receive; B receives the large message and only then sends
 * on comm 0. A library whose polling calls look at one channel per communicator never
 * completes the rendezvous on comm 1 and spins forever.
 */
#include "mt_common.h"

#define ROUNDS      10
#define LARGE_COUNT (256 * 1024) /* 1 MiB of uint32_t */

enum poll { POLL_IPROBE, POLL_TEST, POLL_TESTANY, NPOLLS };

static MPI_Comm g_comms[2];
static int g_rank;

static void poll_round(enum poll how, int is_a, int peer, int round, uint32_t *buf)
{
    MPI_Status st;
    uint32_t v = 0;
    int got = -1;

    if (is_a) {
        MPI_Request large, small = MPI_REQUEST_NULL;
        int flag = 0, index = -1;

        mt_fill(buf, LARGE_COUNT, g_rank, 1, round);
        MPI_Isend(buf, LARGE_COUNT, MPI_UINT32_T, peer, 0, g_comms[1], &large);
        if (how != POLL_IPROBE)
            MPI_Irecv(&v, 1, MPI_UINT32_T, peer, 0, g_comms[0], &small);
        while (!flag) {
            if (how == POLL_IPROBE)
                MPI_Iprobe(peer, 0, g_comms[0], &flag, &st);
            else if (how == POLL_TEST)
                MPI_Test(&small, &flag, &st);
            else
                MPI_Testany(1, &small, &index, &flag, &st);
        }
        if (how == POLL_IPROBE)
            MPI_Recv(&v, 1, MPI_UINT32_T, peer, 0, g_comms[0], &st);
        MTEST_CHECK(v == mt_pattern(peer, 0, round, 0), "poll %d round %d: got %u", how, round, v);
        MPI_Wait(&large, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, LARGE_COUNT, MPI_UINT32_T, peer, 0, g_comms[1], &st);
        MPI_Get_count(&st, MPI_UINT32_T, &got);
        MTEST_CHECK(got == LARGE_COUNT && mt_verify(buf, LARGE_COUNT, peer, 1, round) < 0,
                    "poll %d round %d: large message wrong", how, round);
        v = mt_pattern(g_rank, 0, round, 0);
        MPI_Send(&v, 1, MPI_UINT32_T, peer, 0, g_comms[0]);
    }
}

int main(int argc, char **argv)
{
    uint32_t *buf;
    int size, peer, is_a;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    is_a = g_rank % 2 == 0;
    peer = is_a ? g_rank + 1 : g_rank - 1;
    if (peer >= size)
        peer = MPI_PROC_NULL;
    buf = mtest_calloc(LARGE_COUNT, sizeof(uint32_t));
    for (int c = 0; c < 2; c++) {
        if (MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[c]) != MPI_SUCCESS) {
            fprintf(stderr, "set-up failed\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int how = 0; how < NPOLLS && peer != MPI_PROC_NULL; how++)
        for (int round = 0; round < ROUNDS; round++)
            poll_round((enum poll)how, is_a, peer, round, buf);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int c = 0; c < 2; c++)
        MPI_Comm_free(&g_comms[c]);
    free(buf);
    return mtest_finalize(0);
}
