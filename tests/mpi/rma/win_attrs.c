/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Window objects of every flavor (MPI_Win_create, MPI_Win_allocate, MPI_Win_create_dynamic,
 * MPI_Win_allocate_shared), created on a communicator with the ranks of MPI_COMM_WORLD
 * reversed: the predefined attributes MPI_WIN_BASE, MPI_WIN_SIZE, MPI_WIN_DISP_UNIT,
 * MPI_WIN_CREATE_FLAVOR and MPI_WIN_MODEL (unified or separate); MPI_Win_get_group is
 * MPI_IDENT to the communicator's group (and only MPI_SIMILAR to MPI_COMM_WORLD's when there
 * are several ranks); MPI_Win_set_name/MPI_Win_get_name; a user keyval set, read, deleted (the
 * delete callback runs once with the window and the value) and set again (the callback runs at
 * MPI_Win_free); MPI_Win_free resets the handle to MPI_WIN_NULL. Rank 0 of the communicator
 * gives size 0 (base NULL for MPI_Win_create), and a put into another rank's window still works.
 */
#include "mtest.h"

#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;
static int deletes, extra_state;
static MPI_Win expected_win;
static void *deleted_value;
static int attr_a = 1, attr_b = 2;

static int delete_fn(MPI_Win win, int kv, void *value, void *extra)
{
    MTEST_CHECK(win == expected_win && kv == keyval && extra == &extra_state,
                "delete callback called with the wrong window, keyval or extra_state");
    deletes++;
    deleted_value = value;
    return MPI_SUCCESS;
}

static void check_attrs(MPI_Win win, MPI_Comm comm, void *base, MPI_Aint size, int disp_unit,
                        int flavor, const char *what)
{
    void *v = NULL;
    int flag = 0;

    MPI_Win_get_attr(win, MPI_WIN_BASE, &v, &flag);
    MTEST_CHECK(flag && v == base, "%s: MPI_WIN_BASE flag %d, %p instead of %p", what, flag, v,
                base);
    flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &v, &flag);
    MTEST_CHECK(flag && *(MPI_Aint *)v == size, "%s: MPI_WIN_SIZE flag %d, %ld instead of %ld",
                what, flag, flag ? (long)*(MPI_Aint *)v : -1L, (long)size);
    flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &v, &flag);
    MTEST_CHECK(flag && *(int *)v == disp_unit, "%s: MPI_WIN_DISP_UNIT flag %d, %d instead of %d",
                what, flag, flag ? *(int *)v : -1, disp_unit);
    flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &v, &flag);
    MTEST_CHECK(flag && *(int *)v == flavor, "%s: MPI_WIN_CREATE_FLAVOR flag %d, %d instead of %d",
                what, flag, flag ? *(int *)v : -1, flavor);
    flag = 0;
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &v, &flag);
    MTEST_CHECK(flag && (*(int *)v == MPI_WIN_UNIFIED || *(int *)v == MPI_WIN_SEPARATE),
                "%s: MPI_WIN_MODEL flag %d, value %d", what, flag, flag ? *(int *)v : -1);

    MPI_Group wgroup, cgroup, world;
    int result = -1, nprocs, wsize;
    MPI_Win_get_group(win, &wgroup);
    MPI_Comm_group(comm, &cgroup);
    MPI_Group_compare(wgroup, cgroup, &result);
    MTEST_CHECK(result == MPI_IDENT, "%s: window group vs communicator group: %d", what, result);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_compare(wgroup, world, &result);
    MPI_Comm_size(comm, &nprocs);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (nprocs == wsize)
        MTEST_CHECK(result == (nprocs > 1 ? MPI_SIMILAR : MPI_IDENT),
                    "%s: window group vs the world group (reversed): %d", what, result);
    MPI_Group_free(&world);
    MPI_Group_free(&cgroup);
    MPI_Group_free(&wgroup);

    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    MPI_Win_get_name(win, name, &len);
    MTEST_CHECK(len >= 0 && (size_t)len == strlen(name), "%s: default name length %d", what, len);
    MPI_Win_set_name(win, "rma test window");
    len = -1;
    MPI_Win_get_name(win, name, &len);
    MTEST_CHECK(len == 15 && strcmp(name, "rma test window") == 0, "%s: name \"%s\" (%d)", what,
                name, len);

    /* set, read, delete (callback), set again (callback at MPI_Win_free) */
    expected_win = win;
    deletes = 0;
    MPI_Win_set_attr(win, keyval, &attr_a);
    v = NULL;
    flag = 0;
    MPI_Win_get_attr(win, keyval, &v, &flag);
    MTEST_CHECK(flag && v == &attr_a, "%s: user attribute flag %d, value %p", what, flag, v);
    MPI_Win_delete_attr(win, keyval);
    MTEST_CHECK(deletes == 1 && deleted_value == &attr_a,
                "%s: %d deletes after MPI_Win_delete_attr", what, deletes);
    flag = 1;
    MPI_Win_get_attr(win, keyval, &v, &flag);
    MTEST_CHECK(!flag, "%s: the deleted attribute is still there", what);
    MPI_Win_set_attr(win, keyval, &attr_b);
}

static void free_and_check(MPI_Win *win, const char *what)
{
    MPI_Win_free(win);
    MTEST_CHECK(*win == MPI_WIN_NULL, "%s: MPI_Win_free did not reset the handle", what);
    MTEST_CHECK(deletes == 2 && deleted_value == &attr_b, "%s: %d deletes after MPI_Win_free", what,
                deletes);
}

/* Rank 0 (size 0) puts an int into the last rank's window (size > 0). */
static void put_works(MPI_Win win, int rank, int nprocs, int *local, const char *what)
{
    int value = 4242;
    if (nprocs == 1)
        return;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    if (rank == 0)
        MPI_Put(&value, 1, MPI_INT, nprocs - 1, 1, 1, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    if (rank == nprocs - 1)
        MTEST_CHECK(local[1] == 4242, "%s: put from the rank of size 0 gave %d", what, local[1]);
}

int main(int argc, char **argv)
{
    int wrank, nprocs, rank;
    MPI_Comm comm, shm;
    MPI_Win win;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_split(MPI_COMM_WORLD, 0, nprocs - wrank, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, &keyval, &extra_state);

    /* MPI-4.1 names the null handle */
    char null_name[MPI_MAX_OBJECT_NAME];
    int null_len = -1;
    MPI_Win_get_name(MPI_WIN_NULL, null_name, &null_len);
    MTEST_CHECK(null_len == 12 && strcmp(null_name, "MPI_WIN_NULL") == 0,
                "MPI_Win_get_name(MPI_WIN_NULL) gave \"%s\" (%d)", null_name, null_len);

    /* MPI_Win_create: rank 0 gives base NULL and size 0, the others 8 ints with disp_unit 4 */
    int buf[8] = {0};
    MPI_Aint size = rank == 0 ? 0 : (MPI_Aint)sizeof(buf);
    void *base = rank == 0 ? NULL : buf;
    MPI_Win_create(base, size, sizeof(int), MPI_INFO_NULL, comm, &win);
    check_attrs(win, comm, base, size, sizeof(int), MPI_WIN_FLAVOR_CREATE, "create");
    put_works(win, rank, nprocs, buf, "create");
    free_and_check(&win, "create");

    /* MPI_Win_allocate: size 0 on rank 0, 3 doubles * rank elsewhere, disp_unit 8 */
    double *dbase = NULL;
    size = (MPI_Aint)(3 * rank * sizeof(double));
    MPI_Win_allocate(size, sizeof(double), MPI_INFO_NULL, comm, &dbase, &win);
    MTEST_CHECK(size == 0 || dbase != NULL, "MPI_Win_allocate returned a NULL base");
    check_attrs(win, comm, dbase, size, sizeof(double), MPI_WIN_FLAVOR_ALLOCATE, "allocate");
    free_and_check(&win, "allocate");

    /* MPI_Win_create_dynamic: base MPI_BOTTOM, size 0, disp_unit 1 */
    MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &win);
    check_attrs(win, comm, MPI_BOTTOM, 0, 1, MPI_WIN_FLAVOR_DYNAMIC, "dynamic");
    free_and_check(&win, "dynamic");

    /* MPI_Win_allocate_shared on the ranks sharing memory (reversed as well) */
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
    int srank;
    MPI_Comm_rank(shm, &srank);
    int *ibase = NULL;
    size = (MPI_Aint)(srank * 2 * sizeof(int));
    MPI_Win_allocate_shared(size, sizeof(int), MPI_INFO_NULL, shm, &ibase, &win);
    check_attrs(win, shm, ibase, size, sizeof(int), MPI_WIN_FLAVOR_SHARED, "shared");
    int nshm;
    MPI_Comm_size(shm, &nshm);
    put_works(win, srank, nshm, ibase, "shared");
    free_and_check(&win, "shared");
    MPI_Comm_free(&shm);

    MPI_Win_free_keyval(&keyval);
    MTEST_CHECK(keyval == MPI_KEYVAL_INVALID, "MPI_Win_free_keyval did not reset the keyval");
    MPI_Comm_free(&comm);
    return mtest_finalize(0);
}
