/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Context ids must be recycled: 5000 MPI_Comm_dup/MPI_Comm_free cycles would run out of them
 * otherwise. Every 250th communicator is kept alive, so the ids in use are scattered while
 * the loop goes on; every cycle carries a message on the fresh communicator (through
 * requests, whose hold on the communicator must end when it is freed). The loop
 * then does 1000 MPI_Comm_split/MPI_Comm_free cycles, with MPI_UNDEFINED for some processes
 * in every other one. Finally each kept communicator carries a message with the same tag,
 * sent in one order and received in the reverse one, to show that recycled ids never let
 * two live communicators share traffic.
 */
#include <stdio.h>

#include "mtest.h"

#define DUP_CYCLES   5000
#define SPLIT_CYCLES 1000
#define KEEP_EVERY   250
#define TALK_EVERY   1
#define NUM_KEPT     (DUP_CYCLES / KEEP_EVERY)

static void check_exchange(MPI_Comm comm, int value, const char *what)
{
    int rank, size, got = -1;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Sendrecv(&value, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 0, comm, MPI_STATUS_IGNORE);
    MTEST_CHECK(got == value, "%s: got %d, expected %d", what, got, value);
}

/* Returns how many communicators were kept. */
static int dup_cycles(MPI_Comm *kept)
{
    int nkept = 0, rc;

    for (int i = 0; i < DUP_CYCLES; i++) {
        MPI_Comm comm = MPI_COMM_NULL;

        rc = MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        if (!MTEST_CHECK(rc == MPI_SUCCESS && comm != MPI_COMM_NULL, "dup %d failed (rc %d)", i,
                         rc))
            break;
        if (i % TALK_EVERY == 0)
            check_exchange(comm, i, "fresh dup");
        if (i % KEEP_EVERY == KEEP_EVERY - 1 && nkept < NUM_KEPT) {
            kept[nkept++] = comm;
            continue;
        }
        rc = MPI_Comm_free(&comm);
        if (!MTEST_CHECK(rc == MPI_SUCCESS && comm == MPI_COMM_NULL, "free %d failed (rc %d)", i,
                         rc))
            break;
    }
    MTEST_CHECK(nkept == NUM_KEPT, "kept %d communicators, expected %d", nkept, NUM_KEPT);
    return nkept;
}

static void split_cycles(int wrank)
{
    for (int i = 0; i < SPLIT_CYCLES; i++) {
        int color = (i % 2 && wrank % 3 == 1) ? MPI_UNDEFINED : wrank % 2;
        MPI_Comm comm = MPI_COMM_NULL;
        int rc = MPI_Comm_split(MPI_COMM_WORLD, color, i, &comm);

        if (!MTEST_CHECK(rc == MPI_SUCCESS, "split %d failed (rc %d)", i, rc))
            break;
        if (color == MPI_UNDEFINED) {
            MTEST_CHECK(comm == MPI_COMM_NULL, "split %d: MPI_UNDEFINED gave a communicator", i);
            continue;
        }
        if (i % TALK_EVERY == 0)
            check_exchange(comm, -i, "fresh split");
        MPI_Comm_free(&comm);
    }
}

/* The same tag on every kept communicator: each message must arrive on its own. */
static void check_kept(MPI_Comm *kept, int nkept)
{
    MPI_Request reqs[NUM_KEPT];
    int rank, size, out[NUM_KEPT], in[NUM_KEPT];

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int k = 0; k < nkept; k++) {
        out[k] = 100000 + k;
        MPI_Isend(&out[k], 1, MPI_INT, (rank + 1) % size, 9, kept[k], &reqs[k]);
    }
    for (int k = nkept - 1; k >= 0; k--) {
        in[k] = -1;
        MPI_Recv(&in[k], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, kept[k], MPI_STATUS_IGNORE);
        MTEST_CHECK(in[k] == 100000 + k, "kept communicator %d got the message of %d", k,
                    in[k] - 100000);
    }
    MPI_Waitall(nkept, reqs, MPI_STATUSES_IGNORE);
    for (int k = 0; k < nkept; k++)
        MPI_Comm_free(&kept[k]);
}

int main(int argc, char **argv)
{
    MPI_Comm kept[NUM_KEPT];
    int wrank, nkept;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    nkept = dup_cycles(kept);
    split_cycles(wrank);
    check_kept(kept, nkept);
    return mtest_finalize(0);
}
