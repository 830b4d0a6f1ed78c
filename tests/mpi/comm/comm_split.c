/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_split. Each scenario gives every process a color and a key as a function of its
 * rank; every process works out the expected groups locally (members of its color ordered by
 * key, ties by old rank) and checks its new rank and size, MPI_COMM_NULL for
 * MPI_UNDEFINED, MPI_Comm_compare against the parent (MPI_CONGRUENT, MPI_SIMILAR or
 * MPI_UNEQUAL) and a ring exchange of world ranks on the new communicator. Scenarios cover
 * parity colors, colors modulo 3 with reversed keys, MPI_UNDEFINED for some processes,
 * equal keys, one process per color, large colors and partly equal keys. Every result is
 * split once more (parity colors, reversed keys) and checked the same way.
 */
#include <stdio.h>

#include "mtest.h"

#define MAX_RANKS 64

struct scenario {
    const char *name;
    int (*color)(int rank, int size);
    int (*key)(int rank, int size);
};

static int color_parity(int rank, int size)
{
    (void)size;
    return rank % 2;
}

static int color_mod3(int rank, int size)
{
    (void)size;
    return rank % 3;
}

static int color_undefined_odd(int rank, int size)
{
    (void)size;
    return rank % 2 ? MPI_UNDEFINED : 0;
}

static int color_undefined_first(int rank, int size)
{
    (void)size;
    return rank == 0 ? MPI_UNDEFINED : 7;
}

static int color_zero(int rank, int size)
{
    (void)rank;
    (void)size;
    return 0;
}

static int color_own(int rank, int size)
{
    (void)size;
    return rank;
}

static int color_large(int rank, int size)
{
    (void)size;
    return 1000000 + rank % 2;
}

static int key_rank(int rank, int size)
{
    (void)size;
    return rank;
}

static int key_reversed(int rank, int size)
{
    return size - rank;
}

static int key_negative(int rank, int size)
{
    (void)size;
    return -rank;
}

static int key_zero(int rank, int size)
{
    (void)rank;
    (void)size;
    return 0;
}

static int key_pairs(int rank, int size)
{
    return (size - rank) / 2;
}

static const struct scenario g_scenarios[] = {
    {"parity", color_parity, key_rank},
    {"mod 3, reversed keys", color_mod3, key_negative},
    {"odd ranks undefined", color_undefined_odd, key_rank},
    {"rank 0 undefined, equal keys", color_undefined_first, key_zero},
    {"one color, equal keys", color_zero, key_zero},
    {"one color, reversed", color_zero, key_reversed},
    {"one process per color", color_own, key_zero},
    {"large colors, paired keys", color_large, key_pairs},
};

static const struct scenario g_nested = {"nested: parity, reversed", color_parity, key_reversed};

/* The members of my group in their new order, as world ranks: parent_world[p] is the world
 * rank of parent rank p. Returns the group size and sets *my_index (-1 if undefined). */
static int expected_group(const struct scenario *sc, const int *parent_world, int n, int prank,
                          int *members, int *my_index)
{
    int my_color = sc->color(prank, n), count = 0;
    int keys[MAX_RANKS], pranks[MAX_RANKS];

    *my_index = -1;
    if (my_color == MPI_UNDEFINED)
        return 0;
    for (int p = 0; p < n; p++) {
        int key = sc->key(p, n), pos;

        if (sc->color(p, n) != my_color)
            continue;
        /* insertion by (key, parent rank); p grows, so equal keys keep parent order */
        for (pos = count; pos > 0 && keys[pos - 1] > key; pos--) {
            keys[pos] = keys[pos - 1];
            pranks[pos] = pranks[pos - 1];
        }
        keys[pos] = key;
        pranks[pos] = p;
        count++;
    }
    for (int i = 0; i < count; i++) {
        members[i] = parent_world[pranks[i]];
        if (pranks[i] == prank)
            *my_index = i;
    }
    return count;
}

static int expected_compare(const int *members, int count, const int *parent_world, int n)
{
    int same_order = 1;

    if (count != n)
        return MPI_UNEQUAL;
    for (int i = 0; i < n; i++)
        same_order = same_order && members[i] == parent_world[i];
    return same_order ? MPI_CONGRUENT : MPI_SIMILAR;
}

/* Ring exchange of world ranks in the order the library gave: the left neighbour must be the
 * expected member. The ring follows the actual ranks so that a wrong split is reported
 * instead of leaving some processes waiting for a partner that is not there. */
static void check_ring(MPI_Comm comm, const int *members, int count, int index, int wrank,
                       const char *what)
{
    int rank, size, left, got = -1;
    MPI_Status status;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    left = (rank + size - 1) % size;
    MPI_Sendrecv(&wrank, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT, left, 3, comm,
                 &status);
    MTEST_CHECK(status.MPI_SOURCE == left, "%s: source %d, expected %d", what, status.MPI_SOURCE,
                left);
    if (rank == index && size == count)
        MTEST_CHECK(got == members[left], "%s: left neighbour is world rank %d, expected %d", what,
                    got, members[left]);
}

/* Splits parent by the scenario, checks the result and returns it (MPI_COMM_NULL if this
 * process is not in any group); fills members/count for a further split. */
static MPI_Comm split_and_check(MPI_Comm parent, const int *parent_world, const struct scenario *sc,
                                int *members, int *count)
{
    MPI_Comm comm = MPI_COMM_NULL;
    int prank, n, wrank, index, rank = -1, size = -1, result = -1, rc;

    MPI_Comm_rank(parent, &prank);
    MPI_Comm_size(parent, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    *count = expected_group(sc, parent_world, n, prank, members, &index);

    rc = MPI_Comm_split(parent, sc->color(prank, n), sc->key(prank, n), &comm);
    MTEST_CHECK(rc == MPI_SUCCESS, "%s: MPI_Comm_split returned %d", sc->name, rc);
    if (index < 0) {
        MTEST_CHECK(comm == MPI_COMM_NULL, "%s: MPI_UNDEFINED did not give MPI_COMM_NULL",
                    sc->name);
        if (comm != MPI_COMM_NULL)
            MPI_Comm_free(&comm);
        return MPI_COMM_NULL;
    }
    if (!MTEST_CHECK(comm != MPI_COMM_NULL, "%s: got MPI_COMM_NULL", sc->name))
        return MPI_COMM_NULL;

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MTEST_CHECK(rank == index && size == *count, "%s: rank %d of %d, expected %d of %d", sc->name,
                rank, size, index, *count);
    MPI_Comm_compare(comm, parent, &result);
    MTEST_CHECK(result == expected_compare(members, *count, parent_world, n),
                "%s: compare with the parent gives %d", sc->name, result);
    check_ring(comm, members, *count, index, wrank, sc->name);
    return comm;
}

int main(int argc, char **argv)
{
    int world[MAX_RANKS], members[MAX_RANKS], nested_members[MAX_RANKS];
    int nscenarios = (int)(sizeof(g_scenarios) / sizeof(g_scenarios[0]));
    int wsize, count, nested_count;

    mtest_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (!MTEST_CHECK(wsize <= MAX_RANKS, "at most %d processes", MAX_RANKS))
        return mtest_finalize(0);
    for (int r = 0; r < wsize; r++)
        world[r] = r;

    for (int s = 0; s < nscenarios; s++) {
        MPI_Comm comm = split_and_check(MPI_COMM_WORLD, world, &g_scenarios[s], members, &count);

        if (comm == MPI_COMM_NULL)
            continue;
        MPI_Comm nested = split_and_check(comm, members, &g_nested, nested_members, &nested_count);

        if (nested != MPI_COMM_NULL)
            MPI_Comm_free(&nested);
        MPI_Comm_free(&comm);
        MTEST_CHECK(comm == MPI_COMM_NULL, "MPI_Comm_free did not reset the handle");
    }
    return mtest_finalize(0);
}
