/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Info objects at scale: 40,000 keys set one by one (some set again, which keeps their place,
 * some deleted and one of those set again, which puts it last), then MPI_Info_dup: the copy
 * has every key in the same order (MPI_Info_get_nthkey) with its value (read with
 * MPI_Info_get_string), and changing the copy leaves the original alone. On Manifold also
 * MPI_Comm_set_info with all those keys and MPI_Comm_get_info (MPICH 5.0.2 returns only the hints
 * it knows). Nothing here is timed: setting, reading and copying n keys used to take time quadratic
 * in n, which the time limit in the testlist catches.
 */
#include <stdio.h>
#include <string.h>

#include "mtest.h"

#define NKEYS        40000
#define DELETE_EVERY 997 /* keys i % DELETE_EVERY == 5 are deleted */

static int deleted(int i)
{
    return i % DELETE_EVERY == 5;
}

/* Key i's value: longer and shorter ones, and a different one for keys set twice. */
static void value_of(int i, int second, char *value, size_t size)
{
    snprintf(value, size, "%s%d-%.*s", second ? "again" : "v", i, i % 23,
             "xxxxxxxxxxxxxxxxxxxxxxx");
}

static int set_twice(int i)
{
    return i % 101 == 0;
}

/* Check that info holds the expected keys in order and their values (every value when
 * `all`, else a sample: MPICH 5.0.2 finds a key by reading them all); `what` names it. */
static void check_info(MPI_Info info, const int *order, int count, int all, const char *what)
{
    int nkeys = -1, errs = 0;
    char key[MPI_MAX_INFO_KEY + 1], want[64], got[64];

    MPI_Info_get_nkeys(info, &nkeys);
    MTEST_CHECK(nkeys == count, "%s: %d keys, expected %d", what, nkeys, count);
    for (int n = 0; n < count && n < nkeys && errs < 5; n++) {
        int i = order[n], flag = 0, len = sizeof(got);
        char expected_key[32];

        snprintf(expected_key, sizeof(expected_key), "key%d", i);
        MPI_Info_get_nthkey(info, n, key);
        if (!MTEST_CHECK(strcmp(key, expected_key) == 0, "%s: key %d is %s, expected %s", what, n,
                         key, expected_key)) {
            errs++;
            continue;
        }
        if (!all && n % 97 != 0 && n != count - 1)
            continue;
        value_of(i, set_twice(i), want, sizeof(want));
        MPI_Info_get_string(info, key, &len, got, &flag);
        if (!MTEST_CHECK(flag && strcmp(got, want) == 0, "%s: %s is '%s', expected '%s'", what, key,
                         flag ? got : "(missing)", want))
            errs++;
    }
}

int main(int argc, char **argv)
{
    static int order[NKEYS];
    MPI_Info info, dup;
    char key[32], value[64];
    int count = 0;

    mtest_init(&argc, &argv);
    MPI_Info_create(&info);
    for (int i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof(key), "key%d", i);
        value_of(i, 0, value, sizeof(value));
        MPI_Info_set(info, key, value);
    }
    /* values set again keep the key's place; deleted keys go; one comes back, last */
    for (int i = 0; i < NKEYS; i++) {
        snprintf(key, sizeof(key), "key%d", i);
        if (set_twice(i)) {
            value_of(i, 1, value, sizeof(value));
            MPI_Info_set(info, key, value);
        }
        if (deleted(i))
            MPI_Info_delete(info, key);
        else
            order[count++] = i;
    }
    value_of(5, set_twice(5), value, sizeof(value));
    MPI_Info_set(info, "key5", value);
    order[count++] = 5;
    check_info(info, order, count, 0, "the original");

    MPI_Info_dup(info, &dup);
    check_info(dup, order, count, 1, "MPI_Info_dup's copy");

    /* the copy is another object */
    MPI_Info_set(dup, "key1", "changed");
    MPI_Info_delete(dup, "key2");
    MPI_Info_set(dup, "extra", "1");
    check_info(info, order, count, 0, "the original after changing the copy");
    int nkeys = 0;
    MPI_Info_get_nkeys(dup, &nkeys);
    MTEST_CHECK(nkeys == count, "the changed copy has %d keys, expected %d", nkeys, count);
    MPI_Info_free(&dup);

    if (mtest_is_manifold()) {
        /* the communicator keeps a copy of the hints and hands out another */
        MPI_Comm comm;
        MPI_Info got;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_info(comm, info);
        MPI_Comm_get_info(comm, &got);
        nkeys = 0;
        MPI_Info_get_nkeys(got, &nkeys);
        MTEST_CHECK(nkeys >= count, "MPI_Comm_get_info: %d keys, expected at least %d", nkeys,
                    count);
        for (int n = 0; n < count; n += count / 40) {
            int flag = 0, len = sizeof(value);
            snprintf(key, sizeof(key), "key%d", order[n]);
            MPI_Info_get_string(got, key, &len, value, &flag);
            MTEST_CHECK(flag, "MPI_Comm_get_info: %s missing", key);
        }
        MPI_Info_free(&got);
        MPI_Comm_free(&comm);
    }
    MPI_Info_free(&info);
    return mtest_finalize(0);
}
