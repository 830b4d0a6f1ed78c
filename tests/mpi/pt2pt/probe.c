/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Probe and MPI_Iprobe with exact and wildcard source and tag. Every rank but 0 sends
 * rank 0 four messages: tag 10+rank with 10*rank+1 ints, tag 20 with no data, tag 30 with
 * 1000 ints and tag 40 with 256 Ki ints (rendezvous size). Rank 0 probes each one, checks
 * the status (source, tag, count), probes it again to see that probing does not consume
 * it, and receives it with the source and tag from the status. MPI_Iprobe must say no for
 * a tag nobody sends and, once everything is received, for any message at all.
 */
#include "mtest.h"

#include <stdlib.h>

#define TAG_FIRST 10
#define TAG_EMPTY 20
#define TAG_MID   30
#define TAG_BIG   40
#define MID_COUNT 1000
#define BIG_COUNT (256 * 1024)

static int rank, size;

static int count_of(int source, int tag)
{
    switch (tag) {
    case TAG_EMPTY: return 0;
    case TAG_MID: return MID_COUNT;
    case TAG_BIG: return BIG_COUNT;
    default: return 10 * source + 1;
    }
}

static void send_all(int *buf)
{
    const int tags[] = {TAG_FIRST + rank, TAG_EMPTY, TAG_MID, TAG_BIG};

    for (int i = 0; i < 4; i++) {
        int n = count_of(rank, tags[i]);

        mtest_fill(buf, (size_t)n * sizeof(int), (unsigned)(rank * 100 + tags[i]));
        MPI_Send(buf, n, MPI_INT, 0, tags[i], MPI_COMM_WORLD);
    }
}

/* Check a probe status, then receive the message it describes. */
static void receive_probed(const MPI_Status *probed, int source, int tag, int *buf,
                           const char *what)
{
    MPI_Status status;
    int count = -1, expect;

    MPI_Get_count(probed, MPI_INT, &count);
    if (source != MPI_ANY_SOURCE) {
        MTEST_CHECK(probed->MPI_SOURCE == source, "%s: source %d, expected %d", what,
                    probed->MPI_SOURCE, source);
    }
    if (tag != MPI_ANY_TAG) {
        MTEST_CHECK(probed->MPI_TAG == tag, "%s: tag %d, expected %d", what, probed->MPI_TAG, tag);
    }
    expect = count_of(probed->MPI_SOURCE, probed->MPI_TAG);
    MTEST_CHECK(count == expect, "%s: count %d, expected %d (source %d tag %d)", what, count,
                expect, probed->MPI_SOURCE, probed->MPI_TAG);
    MPI_Recv(buf, BIG_COUNT, MPI_INT, probed->MPI_SOURCE, probed->MPI_TAG, MPI_COMM_WORLD, &status);
    MPI_Get_count(&status, MPI_INT, &count);
    MTEST_CHECK(count == expect && status.MPI_SOURCE == probed->MPI_SOURCE &&
                    status.MPI_TAG == probed->MPI_TAG,
                "%s: received count %d source %d tag %d", what, count, status.MPI_SOURCE,
                status.MPI_TAG);
    MTEST_CHECK(mtest_check_fill(buf, (size_t)expect * sizeof(int),
                                 (unsigned)(status.MPI_SOURCE * 100 + status.MPI_TAG)) < 0,
                "%s: wrong data from %d tag %d", what, status.MPI_SOURCE, status.MPI_TAG);
}

static void iprobe_until(int source, int tag, MPI_Status *status)
{
    int flag = 0;

    while (!flag) {
        MPI_Iprobe(source, tag, MPI_COMM_WORLD, &flag, status);
    }
}

static void receive_all(int *buf)
{
    MPI_Status status, again;
    int flag = 1;

    MPI_Iprobe(MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &flag, &status);
    MTEST_CHECK(!flag, "MPI_Iprobe found a message with tag 999 that nobody sent");

    for (int src = 1; src < size; src++) { /* exact source and tag */
        MPI_Probe(src, TAG_FIRST + src, MPI_COMM_WORLD, &status);
        receive_probed(&status, src, TAG_FIRST + src, buf, "MPI_Probe(src, tag)");
    }
    for (int i = 1; i < size; i++) { /* any source, exact tag */
        MPI_Probe(MPI_ANY_SOURCE, TAG_EMPTY, MPI_COMM_WORLD, &status);
        receive_probed(&status, MPI_ANY_SOURCE, TAG_EMPTY, buf, "MPI_Probe(any, tag)");
    }
    for (int src = size - 1; src >= 1; src--) { /* exact source, any tag; probe twice */
        iprobe_until(src, MPI_ANY_TAG, &status);
        MPI_Probe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &again);
        MTEST_CHECK(again.MPI_SOURCE == status.MPI_SOURCE && again.MPI_TAG == status.MPI_TAG,
                    "a second probe saw source %d tag %d, the first %d %d", again.MPI_SOURCE,
                    again.MPI_TAG, status.MPI_SOURCE, status.MPI_TAG);
        receive_probed(&status, src, TAG_MID, buf, "MPI_Iprobe(src, any)");
    }
    for (int i = 1; i < size; i++) { /* any source, any tag */
        iprobe_until(MPI_ANY_SOURCE, MPI_ANY_TAG, &status);
        receive_probed(&status, MPI_ANY_SOURCE, TAG_BIG, buf, "MPI_Iprobe(any, any)");
    }
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &status);
    MTEST_CHECK(!flag, "MPI_Iprobe found a message after all were received (source %d tag %d)",
                status.MPI_SOURCE, status.MPI_TAG);
}

int main(int argc, char **argv)
{
    int *buf;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    buf = mtest_calloc(BIG_COUNT, sizeof(int));
    if (rank == 0) {
        receive_all(buf);
    } else {
        send_all(buf);
    }
    /* keeps the final Iprobe of rank 0 clear of the messages of mtest_finalize */
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
    return mtest_finalize(0);
}
