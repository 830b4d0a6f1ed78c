/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided corner cases found by other MPI test suites:
 * - MPI_Accumulate, MPI_Get_accumulate and MPI_Fetch_and_op of long double with MPI_SUM onto
 *   the next rank: the operand reaches the target behind a message header, where it is not
 *   aligned for long double; the sums must be exact (and UBSan must not see a misaligned load).
 * - Every one-sided call with a zero count or a committed type of size 0 (contiguous of 0
 *   ints), also as the origin, result or target type alone, and with the buffer NULL: each
 *   succeeds and moves nothing (the target once read the basic type of a type with no
 *   elements).
 * - MPI_Win_get_info names the standard's hints at their values in force when the user set
 *   none (no_locks, accumulate_ordering, accumulate_ops, same_size, same_disp_unit), and the
 *   value the user set otherwise.
 */
#include "mtest.h"

#include <string.h>

#define N 4

static int rank, nprocs;

static void long_double_sums(void)
{
    long double *base;
    MPI_Win win;
    MPI_Win_allocate(2 * N * sizeof(long double), sizeof(long double), MPI_INFO_NULL,
                     MPI_COMM_WORLD, &base, &win);
    for (int i = 0; i < 2 * N; i++)
        base[i] = 0.5L;
    MPI_Barrier(MPI_COMM_WORLD);

    int target = (rank + 1) % nprocs;
    long double add[N], old[N], one = 0.25L, fetched = -1.0L;
    for (int i = 0; i < N; i++)
        add[i] = 1.0L + i;
    MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
    MPI_Accumulate(add, N, MPI_LONG_DOUBLE, target, 0, N, MPI_LONG_DOUBLE, MPI_SUM, win);
    MPI_Win_flush(target, win);
    MPI_Get_accumulate(add, N, MPI_LONG_DOUBLE, old, N, MPI_LONG_DOUBLE, target, N, N,
                       MPI_LONG_DOUBLE, MPI_SUM, win);
    MPI_Win_flush(target, win);
    MPI_Fetch_and_op(&one, &fetched, MPI_LONG_DOUBLE, target, 0, MPI_SUM, win);
    MPI_Win_unlock(target, win);
    MPI_Barrier(MPI_COMM_WORLD);

    for (int i = 0; i < N; i++)
        MTEST_CHECK(old[i] == 0.5L, "Get_accumulate of long double fetched %Lg at %d, not 0.5",
                    old[i], i);
    MTEST_CHECK(fetched == 1.5L, "Fetch_and_op of long double fetched %Lg, not 1.5", fetched);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < N; i++) {
        long double want = 0.5L + 1.0L + i + (i == 0 ? 0.25L : 0.0L);
        MTEST_CHECK(base[i] == want, "long double accumulated to %Lg at %d, not %Lg", base[i], i,
                    want);
        MTEST_CHECK(base[N + i] == 1.5L + i, "long double get-accumulated to %Lg at %d, not %Lg",
                    base[N + i], N + i, 1.5L + i);
    }
    MPI_Win_unlock(rank, win);
    MPI_Win_free(&win);
}

static void all_calls(MPI_Win win, int ocount, MPI_Datatype otype, int rcount, MPI_Datatype rtype,
                      int tcount, MPI_Datatype ttype, int *obuf, int *rbuf)
{
    int target = (rank + 1) % nprocs, rc;
    rc = MPI_Put(obuf, ocount, otype, target, 0, tcount, ttype, win);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Put of nothing returned %d", rc);
    rc = MPI_Get(obuf, ocount, otype, target, 0, tcount, ttype, win);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Get of nothing returned %d", rc);
    rc = MPI_Accumulate(obuf, ocount, otype, target, 0, tcount, ttype, MPI_SUM, win);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Accumulate of nothing returned %d", rc);
    rc = MPI_Get_accumulate(obuf, ocount, otype, rbuf, rcount, rtype, target, 0, tcount, ttype,
                            MPI_SUM, win);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Get_accumulate of nothing returned %d", rc);
}

static void nothing_to_move(void)
{
    int *base, obuf[2] = {7, 7}, rbuf[2] = {9, 9};
    MPI_Datatype empty, types[3];
    MPI_Win win;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    types[0] = empty;
    types[1] = MPI_INT;
    types[2] = MPI_DOUBLE;

    MPI_Win_allocate(2 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    base[0] = base[1] = 3;
    MPI_Win_fence(0, win);
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++) {
            all_calls(win, 0, types[i], 0, types[j], 0, empty, obuf, rbuf);
            all_calls(win, 1, empty, 0, types[i], 0, types[j], obuf, rbuf);
            all_calls(win, 0, types[i], 1, empty, 0, types[j], obuf, rbuf);
            all_calls(win, 0, types[i], 0, types[j], 1, empty, obuf, rbuf);
            all_calls(win, 2, empty, 1, empty, 2, empty, NULL, NULL);
        }
    }
    MPI_Win_fence(0, win);
    MTEST_CHECK(base[0] == 3 && base[1] == 3, "the window changed to %d %d", base[0], base[1]);
    MTEST_CHECK(obuf[0] == 7 && obuf[1] == 7 && rbuf[0] == 9 && rbuf[1] == 9,
                "a local buffer changed");
    MPI_Win_free(&win);
    MPI_Type_free(&empty);
}

static void check_hint(MPI_Win win, const char *key, const char *want)
{
    MPI_Info used;
    char value[MPI_MAX_INFO_VAL];
    int flag = 0;
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, key, MPI_MAX_INFO_VAL - 1, value, &flag);
    MTEST_CHECK(flag && strcmp(value, want) == 0, "MPI_Win_get_info: %s is %s, not %s", key,
                flag ? value : "missing", want);
    MPI_Info_free(&used);
}

static void hints(void)
{
    int buf[2];
    MPI_Win win;
    MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (mtest_is_manifold()) { /* the standard lets an implementation leave them out */
        check_hint(win, "no_locks", "false");
        check_hint(win, "accumulate_ordering", "rar,raw,war,waw");
        check_hint(win, "accumulate_ops", "same_op_no_op");
        check_hint(win, "same_size", "false");
        check_hint(win, "same_disp_unit", "false");
    }
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Info_set(info, "accumulate_ops", "same_op");
    MPI_Win_set_info(win, info);
    MPI_Info_free(&info);
    check_hint(win, "accumulate_ordering", "none");
    check_hint(win, "accumulate_ops", "same_op");
    MPI_Win_free(&win);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    long_double_sums();
    nothing_to_move();
    hints();
    return mtest_finalize(mtest_error_count());
}
