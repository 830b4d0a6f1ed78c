/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Waitany, MPI_Testany, MPI_Waitall and MPI_Testall on arrays of receives mixed with
 * MPI_REQUEST_NULL entries. Rank 0 posts, for every other rank, receives with tags 0, 1
 * and 2 and one null entry; the senders send in reverse tag order once the receives are
 * posted. Each completed request must be reported exactly once, with the status of its
 * own message, and set to MPI_REQUEST_NULL; null entries are never reported; Waitany and
 * Testany end with MPI_UNDEFINED, and (as single-completion calls) leave the MPI_ERROR
 * field of the status alone; Waitall gives empty statuses for the null entries.
 */
#include "mtest.h"

#include <stdlib.h>

#define PER_SENDER     4 /* three receives and a null entry */
#define SENTINEL_ERROR (-12345)

enum round { ROUND_WAITANY, ROUND_TESTANY, ROUND_WAITALL, ROUND_TESTALL, NROUNDS };

static const char *const round_names[NROUNDS] = {"MPI_Waitany", "MPI_Testany", "MPI_Waitall",
                                                 "MPI_Testall"};
static int rank, size, n;
static MPI_Request *reqs;
static MPI_Status *statuses;
static int *values, *seen;

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
    return tag_of(j) == PER_SENDER - 1;
}

static void post_receives(void)
{
    for (int j = 0; j < n; j++) {
        values[j] = -1;
        seen[j] = 0;
        if (is_null_entry(j)) {
            reqs[j] = MPI_REQUEST_NULL;
        } else {
            MPI_Irecv(&values[j], 1, MPI_INT, source_of(j), tag_of(j), MPI_COMM_WORLD, &reqs[j]);
        }
    }
}

static void send_messages(void)
{
    for (int tag = PER_SENDER - 2; tag >= 0; tag--) {
        int value = rank * 10 + tag;

        MPI_Send(&value, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
    }
}

static void check_one(int j, const MPI_Status *status, enum round round)
{
    const char *what = round_names[round];

    if (!MTEST_CHECK(j >= 0 && j < n && !is_null_entry(j), "%s reported index %d", what, j)) {
        return;
    }
    MTEST_CHECK(!seen[j]++, "%s reported index %d twice", what, j);
    MTEST_CHECK(reqs[j] == MPI_REQUEST_NULL, "%s left request %d set", what, j);
    MTEST_CHECK(values[j] == source_of(j) * 10 + tag_of(j), "%s: index %d received %d", what, j,
                values[j]);
    if (status != MPI_STATUS_IGNORE) {
        MTEST_CHECK(status->MPI_SOURCE == source_of(j) && status->MPI_TAG == tag_of(j),
                    "%s: index %d status source %d tag %d", what, j, status->MPI_SOURCE,
                    status->MPI_TAG);
    }
}

static void complete_any(enum round round)
{
    MPI_Status status;
    int index = 0, flag, done = 0;

    for (;;) {
        status.MPI_ERROR = SENTINEL_ERROR;
        flag = 1;
        if (round == ROUND_WAITANY) {
            MPI_Waitany(n, reqs, &index, &status);
        } else {
            MPI_Testany(n, reqs, &index, &flag, &status);
        }
        if (!flag) {
            continue;
        }
        if (index == MPI_UNDEFINED) {
            break;
        }
        MTEST_CHECK(status.MPI_ERROR == SENTINEL_ERROR, "%s changed MPI_ERROR to %d",
                    round_names[round], status.MPI_ERROR);
        check_one(index, &status, round);
        done++;
    }
    MTEST_CHECK(done == 3 * (size - 1), "%s completed %d requests, expected %d", round_names[round],
                done, 3 * (size - 1));
}

static void complete_all(enum round round)
{
    int flag = 0, count;

    if (round == ROUND_WAITALL) {
        MPI_Waitall(n, reqs, statuses);
    } else {
        while (!flag) {
            MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE);
        }
    }
    for (int j = 0; j < n; j++) {
        const MPI_Status *status = round == ROUND_WAITALL ? &statuses[j] : MPI_STATUS_IGNORE;

        if (!is_null_entry(j)) {
            check_one(j, status, round);
        } else if (status != MPI_STATUS_IGNORE) {
            MPI_Get_count(status, MPI_INT, &count);
            MTEST_CHECK(status->MPI_SOURCE == MPI_ANY_SOURCE && status->MPI_TAG == MPI_ANY_TAG &&
                            count == 0,
                        "%s: status of null entry %d is not empty", round_names[round], j);
        }
    }
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    n = PER_SENDER * (size - 1);
    reqs = mtest_calloc((size_t)n, sizeof(MPI_Request));
    statuses = mtest_calloc((size_t)n, sizeof(MPI_Status));
    values = mtest_calloc((size_t)n, sizeof(int));
    seen = mtest_calloc((size_t)n, sizeof(int));

    for (int round = 0; round < NROUNDS; round++) {
        if (rank == 0) {
            post_receives();
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank != 0) {
            send_messages();
        } else if (round == ROUND_WAITANY || round == ROUND_TESTANY) {
            complete_any((enum round)round);
        } else {
            complete_all((enum round)round);
        }
    }
    free(reqs);
    free(statuses);
    free(values);
    free(seen);
    return mtest_finalize(0);
}
