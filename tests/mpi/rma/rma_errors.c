/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erroneous RMA calls return the right error class with MPI_ERRORS_RETURN set on the window by
 * MPI_Win_set_errhandler (MPI_Win_get_errhandler returns it; a handler from
 * MPI_Win_create_errhandler is invoked by MPI_Win_call_errhandler with the window and the
 * code), and leave the window usable:
 * - in a fence epoch: target_rank == size (MPI_ERR_RANK), negative origin_count and
 *   target_count (MPI_ERR_COUNT), MPI_DATATYPE_NULL on either side (MPI_ERR_TYPE), a negative
 *   target_disp (MPI_ERR_DISP or MPI_ERR_RMA_RANGE), a target range past the end of the window
 *   (MPI_ERR_RMA_RANGE; Manifold only, MPICH 5.0.2 does not check it and performs the access),
 *   MPI_Accumulate with a user-defined op (MPI_ERR_OP);
 * - MPI_WIN_NULL to MPI_Put and MPI_Win_fence (MPI_ERR_WIN, raised on MPI_COMM_SELF);
 * - MPI_Win_create with a negative size or disp_unit (MPI_ERR_SIZE / MPI_ERR_DISP or
 *   MPI_ERR_ARG), raised on the communicator;
 * - MPI_Put outside any epoch and MPI_Win_unlock of a rank not locked (MPI_ERR_RMA_SYNC);
 * - MPI_Win_shared_query on a dynamic window and MPI_Win_attach on a window from
 *   MPI_Win_create (MPI_ERR_RMA_FLAVOR); MPI_Win_shared_query on the MPI_Win_create window
 *   is no error since MPI-4.1 (size 0 where the memory cannot be shared).
 * - MPI_Win_free while this process holds a lock (MPI_ERR_RMA_SYNC, through the window's
 *   handler while MPI_COMM_SELF's stays fatal; the handle and a user attribute are kept).
 * - MPI_Win_lock and MPI_Win_lock_all inside an MPI_Win_start epoch, and (Manifold only)
 *   MPI_Win_start while a lock is held (MPI_ERR_RMA_SYNC: access epochs do not overlap).
 * Finally a put in a fence epoch still works. On Manifold the messages must also name the
 * argument at fault.
 */
#include "mtest.h"

/* argument names in the message are checked on Manifold only */
#define CHECK_ARG(rc, cls, fname, arg)                                                             \
    (mtest_is_manifold() ? MTEST_CHECK_ERR_ARG(rc, cls, fname, arg)                                \
                         : MTEST_CHECK_ERR(rc, cls, fname))

static MPI_Win handler_win;
static int handler_calls, handler_code;

static void win_handler(MPI_Win *win, int *code, ...)
{
    handler_win = *win;
    handler_code = *code;
    handler_calls++;
}

static void user_op(void *in, void *inout, int *len, MPI_Datatype *type)
{
}

/* rc must be an error of class a or b; on Manifold the message names fname and arg */
static void check_either(int rc, int a, int b, const char *fname, const char *arg)
{
    int cls = MPI_SUCCESS;
    if (!MTEST_CHECK(rc != MPI_SUCCESS, "%s (bad %s) succeeded", fname, arg))
        return;
    MPI_Error_class(rc, &cls);
    if (MTEST_CHECK(cls == a || cls == b, "%s (bad %s): class %s", fname, arg,
                    mtest_error_class_name(cls)) &&
        mtest_is_manifold())
        MTEST_CHECK_ERR_ARG(rc, cls, fname, arg);
}

int main(int argc, char **argv)
{
    int rank, nprocs, buf[16] = {0}, src[4] = {1, 2, 3, 4}, dst[4];
    MPI_Win win, bad;
    MPI_Errhandler eh;
    MPI_Op op;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int other = (rank + 1) % nprocs;

    MPI_Win_create(buf, sizeof(buf), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);

    /* a user error handler called through MPI_Win_call_errhandler */
    MPI_Win_create_errhandler(win_handler, &eh);
    MPI_Win_set_errhandler(win, eh);
    MPI_Errhandler_free(&eh);
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    MTEST_CHECK(handler_calls == 1 && handler_win == win && handler_code == MPI_ERR_OTHER,
                "user handler: %d calls, window %s, code %d", handler_calls,
                handler_win == win ? "right" : "wrong", handler_code);

    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_get_errhandler(win, &eh);
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "MPI_Win_get_errhandler did not return MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);

    /* errors inside a fence epoch */
    MPI_Win_fence(0, win);
    CHECK_ARG(MPI_Put(src, 1, MPI_INT, nprocs, 0, 1, MPI_INT, win), MPI_ERR_RANK, "MPI_Put",
              "target_rank");
    CHECK_ARG(MPI_Get(dst, 1, MPI_INT, -5, 0, 1, MPI_INT, win), MPI_ERR_RANK, "MPI_Get",
              "target_rank");
    CHECK_ARG(MPI_Put(src, -1, MPI_INT, other, 0, 1, MPI_INT, win), MPI_ERR_COUNT, "MPI_Put",
              "origin_count");
    CHECK_ARG(MPI_Put(src, 1, MPI_INT, other, 0, -1, MPI_INT, win), MPI_ERR_COUNT, "MPI_Put",
              "target_count");
    CHECK_ARG(MPI_Put(src, 1, MPI_DATATYPE_NULL, other, 0, 1, MPI_INT, win), MPI_ERR_TYPE,
              "MPI_Put", "origin_datatype");
    CHECK_ARG(MPI_Get(dst, 1, MPI_INT, other, 0, 1, MPI_DATATYPE_NULL, win), MPI_ERR_TYPE,
              "MPI_Get", "target_datatype");
    /* MPICH 5.0.2 does not check the target range: it performs these accesses, past the end of
     * the window */
    if (mtest_is_manifold()) {
        MTEST_CHECK_ERR(MPI_Put(src, 2, MPI_INT, other, 15, 2, MPI_INT, win), MPI_ERR_RMA_RANGE,
                        "MPI_Put");
        MTEST_CHECK_ERR(MPI_Get(dst, 4, MPI_INT, other, 16, 4, MPI_INT, win), MPI_ERR_RMA_RANGE,
                        "MPI_Get");
    }
    check_either(MPI_Put(src, 1, MPI_INT, other, -1, 1, MPI_INT, win), MPI_ERR_DISP,
                 MPI_ERR_RMA_RANGE, "MPI_Put", "target_disp");
    MPI_Op_create(user_op, 1, &op);
    CHECK_ARG(MPI_Accumulate(src, 1, MPI_INT, other, 0, 1, MPI_INT, op, win), MPI_ERR_OP,
              "MPI_Accumulate", "op");
    MPI_Op_free(&op);
    /* an operation not defined on the type is an error only when data moves (mpi4py's
     * Get_accumulate of 0 bytes passes MPI_SUM with MPI_BYTE) */
    if (mtest_is_manifold()) /* MPICH 5.0.2 applies MPI_SUM to bytes */
        CHECK_ARG(MPI_Accumulate(src, 1, MPI_BYTE, other, 0, 1, MPI_BYTE, MPI_SUM, win), MPI_ERR_OP,
                  "MPI_Accumulate", "op");
    MTEST_CHECK(MPI_Get_accumulate(src, 0, MPI_BYTE, dst, 0, MPI_BYTE, other, 0, 0, MPI_BYTE,
                                   MPI_SUM, win) == MPI_SUCCESS,
                "MPI_Get_accumulate of no bytes with MPI_SUM on MPI_BYTE failed");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);

    /* the null window: the error goes to MPI_COMM_SELF's handler */
    CHECK_ARG(MPI_Put(src, 1, MPI_INT, other, 0, 1, MPI_INT, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Put",
              "win");
    CHECK_ARG(MPI_Win_fence(0, MPI_WIN_NULL), MPI_ERR_WIN, "MPI_Win_fence", "win");

    /* bad sizes and displacement units when creating a window */
    bad = MPI_WIN_NULL;
    check_either(MPI_Win_create(buf, -8, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &bad), MPI_ERR_SIZE,
                 MPI_ERR_ARG, "MPI_Win_create", "size");
    check_either(MPI_Win_create(buf, 8, -4, MPI_INFO_NULL, MPI_COMM_WORLD, &bad), MPI_ERR_DISP,
                 MPI_ERR_ARG, "MPI_Win_create", "disp_unit");
    MTEST_CHECK(bad == MPI_WIN_NULL, "a failed MPI_Win_create set the window handle");

    /* synchronization errors: no epoch is open */
    MTEST_CHECK_ERR(MPI_Put(src, 1, MPI_INT, other, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC,
                    "MPI_Put");
    MTEST_CHECK_ERR(MPI_Win_unlock(other, win), MPI_ERR_RMA_SYNC, "MPI_Win_unlock");

    /* flavor errors */
    MPI_Aint qsize;
    int qunit;
    void *qbase;
    MPI_Win dyn;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &dyn);
    MPI_Win_set_errhandler(dyn, MPI_ERRORS_RETURN);
    MTEST_CHECK_ERR(MPI_Win_shared_query(dyn, 0, &qsize, &qunit, &qbase), MPI_ERR_RMA_FLAVOR,
                    "MPI_Win_shared_query");
    MPI_Win_free(&dyn);
    /* not an error since MPI-4.1: the segment, or size 0 when it cannot be shared */
    for (int r = 0; r < nprocs; r++) {
        qsize = -1;
        MTEST_CHECK(MPI_Win_shared_query(win, r, &qsize, &qunit, &qbase) == MPI_SUCCESS &&
                        (qsize == 0 || qsize == (MPI_Aint)sizeof(buf)),
                    "MPI_Win_shared_query(%d) on an MPI_Win_create window: size %ld", r,
                    (long)qsize);
    }
    MTEST_CHECK_ERR(MPI_Win_attach(win, src, sizeof(src)), MPI_ERR_RMA_FLAVOR, "MPI_Win_attach");

    /* freeing a window with an epoch open: the window's error, the window intact */
    int keyval, value = 5, *got = NULL, flag = 0;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &keyval, NULL);
    MPI_Win_set_attr(win, keyval, &value);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Win_lock(MPI_LOCK_SHARED, other, 0, win);
    MPI_Win held = win;
    MTEST_CHECK_ERR(MPI_Win_free(&held), MPI_ERR_RMA_SYNC, "MPI_Win_free");
    MTEST_CHECK(held == win, "a failed MPI_Win_free changed the handle");
    MPI_Win_unlock(other, win);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Win_get_attr(win, keyval, &got, &flag);
    MTEST_CHECK(flag && got == &value, "a failed MPI_Win_free deleted the attribute");
    MPI_Win_delete_attr(win, keyval);
    MPI_Win_free_keyval(&keyval);

    /* a process's access epochs on one window never overlap (MPI-4.1 12.5) */
    MPI_Group wgroup;
    MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    MPI_Win_post(wgroup, 0, win);
    MPI_Win_start(wgroup, 0, win);
    MTEST_CHECK_ERR(MPI_Win_lock(MPI_LOCK_SHARED, other, MPI_MODE_NOCHECK, win), MPI_ERR_RMA_SYNC,
                    "MPI_Win_lock");
    MTEST_CHECK_ERR(MPI_Win_lock_all(0, win), MPI_ERR_RMA_SYNC, "MPI_Win_lock_all");
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    if (mtest_is_manifold()) { /* MPICH 5.0.2 lets the start through */
        MPI_Win_lock(MPI_LOCK_SHARED, other, 0, win);
        MTEST_CHECK_ERR(MPI_Win_start(wgroup, 0, win), MPI_ERR_RMA_SYNC, "MPI_Win_start");
        MPI_Win_unlock(other, win);
    }
    MPI_Group_free(&wgroup);

    /* the window still works */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    MPI_Put(src, 4, MPI_INT, other, 12, 4, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < 16; i++)
        MTEST_CHECK(buf[i] == (i < 12 ? 0 : i - 11), "element %d is %d after the errors", i,
                    buf[i]);
    MPI_Win_free(&win);
    return mtest_finalize(0);
}
