/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Traffic isolation between communicators. Processes work in pairs (2k sends, 2k+1
 * receives; an odd last process only takes part in the collective calls). The communicators
 * are MPI_COMM_WORLD, two dups of it, a congruent split and a split with reversed ranks; all
 * messages use the same tag. Messages sent on each communicator in one order and received
 * with MPI_ANY_SOURCE/MPI_ANY_TAG in the reverse order must each arrive on their own
 * communicator, from the sender's rank in that communicator. A pending message on one
 * communicator is invisible to MPI_Iprobe on all the others, also for MPI_COMM_SELF and a dup
 * of it. Interleaved streams over all communicators keep their per-communicator order.
 */
#include <stdio.h>

#include "mtest.h"

#define NCOMMS  5
#define TAG     5
#define STREAM  100 /* messages per communicator in the interleaved part */
#define PAYLOAD 1000

static MPI_Comm g_comms[NCOMMS];
static const char *const g_names[NCOMMS] = {"world", "dup a", "dup b", "split", "reversed split"};

/* Rank of world rank wrank in g_comms[k]. */
static int rank_in(int k, int wrank, int wsize)
{
    return k == NCOMMS - 1 ? wsize - 1 - wrank : wrank;
}

static void create_comms(int wrank)
{
    g_comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[1]);
    MPI_Comm_dup(MPI_COMM_WORLD, &g_comms[2]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, wrank, &g_comms[3]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, -wrank, &g_comms[4]);
}

/* One message per communicator, received in the reverse order with wildcards. */
static void reverse_order(int wsize, int peer, int is_sender)
{
    int out[NCOMMS], in;
    MPI_Request reqs[NCOMMS];
    MPI_Status status;

    if (is_sender) {
        for (int k = 0; k < NCOMMS; k++) {
            out[k] = PAYLOAD + k;
            MPI_Isend(&out[k], 1, MPI_INT, rank_in(k, peer, wsize), TAG, g_comms[k], &reqs[k]);
        }
        MPI_Waitall(NCOMMS, reqs, MPI_STATUSES_IGNORE);
        return;
    }
    for (int k = NCOMMS - 1; k >= 0; k--) {
        in = -1;
        MPI_Recv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, g_comms[k], &status);
        MTEST_CHECK(in == PAYLOAD + k, "%s received the message sent on communicator %d",
                    g_names[k], in - PAYLOAD);
        MTEST_CHECK(status.MPI_SOURCE == rank_in(k, peer, wsize) && status.MPI_TAG == TAG,
                    "%s: source %d tag %d", g_names[k], status.MPI_SOURCE, status.MPI_TAG);
    }
}

/* A message pending on communicator k must not be seen by MPI_Iprobe on the others. The
 * sends are synchronous so that the next message is not on its way while the receiver
 * probes. */
static void probe_isolation(int wsize, int peer, int is_sender)
{
    for (int k = 0; k < NCOMMS; k++) {
        int value = PAYLOAD + k, flag;
        MPI_Status status;

        if (is_sender) {
            MPI_Ssend(&value, 1, MPI_INT, rank_in(k, peer, wsize), TAG, g_comms[k]);
            continue;
        }
        MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, g_comms[k], &status);
        for (int other = 0; other < NCOMMS; other++) {
            if (other == k)
                continue;
            flag = 1;
            MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, g_comms[other], &flag, &status);
            MTEST_CHECK(!flag, "a message on %s is visible on %s", g_names[k], g_names[other]);
        }
        value = -1;
        MPI_Recv(&value, 1, MPI_INT, rank_in(k, peer, wsize), TAG, g_comms[k], &status);
        MTEST_CHECK(value == PAYLOAD + k, "%s: got %d after probing", g_names[k], value);
    }
}

static void self_isolation(void)
{
    MPI_Comm self_dup;
    MPI_Request req;
    int value = 42, got = -1, flag = 0;

    MPI_Comm_dup(MPI_COMM_SELF, &self_dup);
    MPI_Isend(&value, 1, MPI_INT, 0, TAG, self_dup, &req);
    while (!flag)
        MPI_Iprobe(0, TAG, self_dup, &flag, MPI_STATUS_IGNORE);
    flag = 1;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
    MTEST_CHECK(!flag, "a message on a dup of MPI_COMM_SELF is visible on MPI_COMM_SELF");
    MPI_Recv(&got, 1, MPI_INT, 0, TAG, self_dup, MPI_STATUS_IGNORE);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MTEST_CHECK(got == value, "self dup: got %d", got);
    MPI_Comm_free(&self_dup);
}

/* Streams interleaved over all communicators; each stream keeps its own order. */
static void interleaved(int wsize, int peer, int is_sender)
{
    static int out[NCOMMS][STREAM];
    MPI_Request reqs[NCOMMS * STREAM];
    int n = 0;

    if (is_sender) {
        for (int i = 0; i < STREAM; i++) {
            for (int k = 0; k < NCOMMS; k++, n++) {
                out[k][i] = k * STREAM + i;
                MPI_Isend(&out[k][i], 1, MPI_INT, rank_in(k, peer, wsize), TAG, g_comms[k],
                          &reqs[n]);
            }
        }
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        return;
    }
    for (int k = NCOMMS - 1; k >= 0; k--) {
        for (int i = 0; i < STREAM; i++) {
            int got = -1;

            MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, g_comms[k], MPI_STATUS_IGNORE);
            if (!MTEST_CHECK(got == k * STREAM + i, "%s: message %d is %d", g_names[k], i, got))
                return;
        }
    }
}

int main(int argc, char **argv)
{
    int wrank, wsize, peer, is_sender, active;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    create_comms(wrank);
    is_sender = wrank % 2 == 0;
    peer = is_sender ? wrank + 1 : wrank - 1;
    active = peer < wsize;

    if (active) {
        reverse_order(wsize, peer, is_sender);
        probe_isolation(wsize, peer, is_sender);
        interleaved(wsize, peer, is_sender);
    }
    self_isolation();

    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 1; k < NCOMMS; k++)
        MPI_Comm_free(&g_comms[k]);
    return mtest_finalize(0);
}
