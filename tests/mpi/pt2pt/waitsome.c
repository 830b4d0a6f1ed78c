/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Waitsome and MPI_Testsome on an array of receives of mixed sizes (up to 256 KiB)
 * from every other rank, with MPI_REQUEST_NULL entries in between. Each completed request
 * is reported once, with its status at the same position of the statuses array as its
 * index in the indices array; null entries never appear; the loop ends with outcount
 * MPI_UNDEFINED once all are done. The senders send in several bursts separated by
 * barriers, so the calls see partial completion. Testsome runs with MPI_STATUSES_IGNORE.
 */
#include "mtest.h"

#include <stdlib.h>

#define PER_SENDER 6 /* five receives and a null entry */
#define BIG        (64 * 1024)

static int rank, size, n;

static int source_of(int j)
{
    return 1 + j / PER_SENDER;
}

static int tag_of(int j)
{
    return j % PER_SENDER;
}

static int is_null_entry(int j)
{
    return tag_of(j) == 2;
}

static int count_of(int j)
{
    return tag_of(j) % 2 ? BIG : 1 + tag_of(j);
}

static void post_receives(MPI_Request *reqs, int **bufs)
{
    for (int j = 0; j < n; j++) {
        reqs[j] = MPI_REQUEST_NULL;
        if (!is_null_entry(j)) {
            MPI_Irecv(bufs[j], count_of(j), MPI_INT, source_of(j), tag_of(j), MPI_COMM_WORLD,
                      &reqs[j]);
        }
    }
}

/* One message per burst; the barrier after each lets rank 0 see partial completion. */
static void send_bursts(int *buf)
{
    MPI_Request req;

    for (int tag = 0; tag < PER_SENDER; tag++) {
        int j = (rank - 1) * PER_SENDER + tag;

        req = MPI_REQUEST_NULL;
        if (!is_null_entry(j)) {
            mtest_fill(buf, (size_t)count_of(j) * sizeof(int), (unsigned)j);
            MPI_Isend(buf, count_of(j), MPI_INT, 0, tag, MPI_COMM_WORLD, &req);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

static void check_index(int j, const MPI_Status *status, int *seen, int **bufs, const char *what)
{
    int count = -1;

    if (!MTEST_CHECK(j >= 0 && j < n && !is_null_entry(j), "%s reported index %d", what, j)) {
        return;
    }
    MTEST_CHECK(!seen[j]++, "%s reported index %d twice", what, j);
    MTEST_CHECK(mtest_check_fill(bufs[j], (size_t)count_of(j) * sizeof(int), (unsigned)j) < 0,
                "%s: index %d wrong data", what, j);
    if (status != MPI_STATUS_IGNORE) {
        MPI_Get_count(status, MPI_INT, &count);
        MTEST_CHECK(status->MPI_SOURCE == source_of(j) && status->MPI_TAG == tag_of(j) &&
                        count == count_of(j),
                    "%s: status for index %d has source %d tag %d count %d", what, j,
                    status->MPI_SOURCE, status->MPI_TAG, count);
    }
}

struct some_state {
    MPI_Request *reqs;
    MPI_Status *statuses;
    int *indices;
    int *seen;
};

/* Call MPI_Waitsome or MPI_Testsome once; returns outcount. */
static int complete_some(int use_test, struct some_state *st, int **bufs)
{
    const char *what = use_test ? "MPI_Testsome" : "MPI_Waitsome";
    MPI_Request *reqs = st->reqs;
    MPI_Status *statuses = st->statuses;
    int *indices = st->indices;
    int outcount = -5;

    if (use_test) {
        MPI_Testsome(n, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
    } else {
        MPI_Waitsome(n, reqs, &outcount, indices, statuses);
    }
    if (outcount == MPI_UNDEFINED) {
        return outcount;
    }
    MTEST_CHECK(outcount >= 0 && outcount <= n, "%s gave outcount %d", what, outcount);
    for (int i = 0; i < outcount && i < n; i++) {
        check_index(indices[i], use_test ? MPI_STATUS_IGNORE : &statuses[i], st->seen, bufs, what);
        if (indices[i] >= 0 && indices[i] < n) {
            MTEST_CHECK(reqs[indices[i]] == MPI_REQUEST_NULL, "%s left request %d set", what,
                        indices[i]);
        }
    }
    return outcount;
}

/* Rank 0: collect each burst before the next one is sent, then expect MPI_UNDEFINED. */
static void receive_bursts(int use_test, int **bufs)
{
    struct some_state st;
    int done = 0, expected = 0, outcount;

    st.reqs = mtest_calloc((size_t)n, sizeof(MPI_Request));
    st.statuses = mtest_calloc((size_t)n, sizeof(MPI_Status));
    st.indices = mtest_calloc((size_t)n, sizeof(int));
    st.seen = mtest_calloc((size_t)n, sizeof(int));
    post_receives(st.reqs, bufs);
    for (int burst = 0; burst < PER_SENDER; burst++) {
        MPI_Barrier(MPI_COMM_WORLD);
        expected += is_null_entry(burst) ? 0 : size - 1;
        while (done < expected) {
            outcount = complete_some(use_test, &st, bufs);
            if (!MTEST_CHECK(outcount != MPI_UNDEFINED, "MPI_UNDEFINED with %d of %d done", done,
                             expected)) {
                break;
            }
            done += outcount;
        }
    }
    outcount = complete_some(use_test, &st, bufs);
    MTEST_CHECK(outcount == MPI_UNDEFINED && done == (PER_SENDER - 1) * (size - 1),
                "%d requests done, final outcount %d", done, outcount);
    free(st.reqs);
    free(st.statuses);
    free(st.indices);
    free(st.seen);
}

int main(int argc, char **argv)
{
    int **bufs;
    int *sbuf;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n = PER_SENDER * (size - 1);
    bufs = mtest_calloc((size_t)n, sizeof(int *));
    for (int j = 0; j < n; j++) {
        bufs[j] = mtest_calloc((size_t)count_of(j), sizeof(int));
    }
    sbuf = mtest_calloc(BIG, sizeof(int));
    for (int use_test = 0; use_test < 2; use_test++) {
        if (rank == 0) {
            receive_bursts(use_test, bufs);
        } else {
            send_bursts(sbuf);
        }
    }
    for (int j = 0; j < n; j++) {
        free(bufs[j]);
    }
    free(bufs);
    free(sbuf);
    return mtest_finalize(0);
}
