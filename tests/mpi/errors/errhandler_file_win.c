/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error handlers of files and windows (MPI-4.1 sections 9.3.2-9.3.3). MPI_FILE_NULL's handler
 * is MPI_ERRORS_RETURN at start; MPI_File_set_errhandler(MPI_FILE_NULL, eh) changes it and
 * MPI_File_call_errhandler(MPI_FILE_NULL, code) calls it with the handle and the code. Kinds
 * are checked: a file handler on a communicator, or a communicator handler on MPI_FILE_NULL,
 * is MPI_ERR_ERRHANDLER (checked on Manifold only), as is MPI_ERRHANDLER_NULL where a handler is
 * expected; a NULL handler function is MPI_ERR_ARG naming it. Window handlers can be created
 * and freed; MPI_WIN_NULL is MPI_ERR_WIN. File
 * operations without a file (MPI_File_open, MPI_File_delete) report on MPI_FILE_NULL's handler
 * (section 14.7): with every handler at its default, a failing MPI_File_open returns its error
 * and the program goes on (an unsupported MPI-IO once aborted the job there on Manifold).
 */
#include "mtest.h"

static int file_calls, file_code, win_calls;
static MPI_File file_seen;

static void file_handler(MPI_File *fh, int *code, ...)
{
    file_calls++;
    file_code = *code;
    file_seen = *fh;
}

static void win_handler(MPI_Win *win, int *code, ...)
{
    win_calls++;
}

static void comm_handler(MPI_Comm *comm, int *code, ...)
{
}

int main(int argc, char **argv)
{
    MPI_Errhandler feh, weh, ceh, got = MPI_ERRHANDLER_NULL;
    int rc;

    mtest_init(&argc, &argv);
    MPI_File file;
    rc = MPI_File_open(MPI_COMM_SELF, "/nonexistent-dir/file", MPI_MODE_RDONLY, MPI_INFO_NULL,
                       &file);
    MTEST_CHECK(rc != MPI_SUCCESS, "MPI_File_open of a file in a missing directory succeeded");
    rc = MPI_File_delete("/nonexistent-dir/file", MPI_INFO_NULL);
    MTEST_CHECK(rc != MPI_SUCCESS, "MPI_File_delete of a file in a missing directory succeeded");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* the default handler of file operations */
    rc = MPI_File_get_errhandler(MPI_FILE_NULL, &got);
    MTEST_CHECK(rc == MPI_SUCCESS && got == MPI_ERRORS_RETURN,
                "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN at start (rc %d)", rc);
    MPI_Errhandler_free(&got);
    rc = MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_IO);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_File_call_errhandler returned %d", rc);

    /* a user file handler on MPI_FILE_NULL */
    rc = MPI_File_create_errhandler(file_handler, &feh);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_File_create_errhandler returned %d", rc);
    rc = MPI_File_set_errhandler(MPI_FILE_NULL, feh);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_File_set_errhandler returned %d", rc);
    MPI_File_get_errhandler(MPI_FILE_NULL, &got);
    MTEST_CHECK(got == feh, "MPI_File_get_errhandler does not return the handler set");
    MPI_Errhandler_free(&got);
    rc = MPI_File_call_errhandler(MPI_FILE_NULL, MPI_ERR_AMODE);
    MTEST_CHECK(rc == MPI_SUCCESS && file_calls == 1 && file_code == MPI_ERR_AMODE &&
                    file_seen == MPI_FILE_NULL,
                "file handler: rc %d, called %d times with code %d", rc, file_calls, file_code);
    rc = MPI_File_open(MPI_COMM_SELF, "/nonexistent-dir/file", MPI_MODE_RDONLY, MPI_INFO_NULL,
                       &file);
    /* MPICH 5.0.2 returns MPI_SUCCESS once the handler returned */
    MTEST_CHECK((rc != MPI_SUCCESS || !mtest_is_manifold()) && file_calls == 2,
                "MPI_File_open: rc %d, MPI_FILE_NULL's handler called %d times (want 2)", rc,
                file_calls);

    /* kinds: a file handler is not for communicators, a communicator one not for files
     * (MPICH 5.0.2 does not check the kinds) */
    MPI_Comm_create_errhandler(comm_handler, &ceh);
    if (mtest_is_manifold()) {
        rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, feh);
        MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Comm_set_errhandler");
        file_calls = 0;
        rc = MPI_File_set_errhandler(MPI_FILE_NULL, ceh);
        /* the error goes to MPI_FILE_NULL's handler, which is ours */
        MTEST_CHECK(rc != MPI_SUCCESS && file_calls == 1,
                    "MPI_File_set_errhandler(comm handler): rc %d, file handler called %d times",
                    rc, file_calls);
        MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
        rc = MPI_File_set_errhandler(MPI_FILE_NULL, ceh);
        MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_File_set_errhandler");
    }
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);

    /* a NULL function is named by its argument, for each kind */
    MPI_Errhandler nofn = MPI_ERRHANDLER_NULL;
    rc = MPI_Comm_create_errhandler(NULL, &nofn);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Comm_create_errhandler", "comm_errhandler_fn");
    rc = MPI_File_create_errhandler(NULL, &nofn);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_File_create_errhandler", "file_errhandler_fn");
    rc = MPI_Win_create_errhandler(NULL, &nofn);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Win_create_errhandler", "win_errhandler_fn");
    MTEST_CHECK(nofn == MPI_ERRHANDLER_NULL, "a refused create set the handler");

    /* windows: the handler exists; MPI_WIN_NULL is not a window */
    rc = MPI_Win_create_errhandler(win_handler, &weh);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Win_create_errhandler returned %d", rc);
    rc = MPI_Win_set_errhandler(MPI_WIN_NULL, weh);
    MTEST_CHECK_ERR(rc, MPI_ERR_WIN, "MPI_Win_set_errhandler");
    rc = MPI_Win_get_errhandler(MPI_WIN_NULL, &got);
    MTEST_CHECK_ERR(rc, MPI_ERR_WIN, "MPI_Win_get_errhandler");
    rc = MPI_Win_call_errhandler(MPI_WIN_NULL, MPI_ERR_OTHER);
    MTEST_CHECK_ERR(rc, MPI_ERR_WIN, "MPI_Win_call_errhandler");
    MTEST_CHECK(win_calls == 0, "the window handler ran without a window");
    if (mtest_is_manifold()) {
        rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, weh);
        MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Comm_set_errhandler");
        /* no window can exist here, so the handler's kind is what can be checked */
        rc = MPI_Win_set_errhandler(MPI_WIN_NULL, ceh);
        MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Win_set_errhandler");
    }

    rc = MPI_Errhandler_free(&feh);
    MTEST_CHECK(rc == MPI_SUCCESS && feh == MPI_ERRHANDLER_NULL, "freeing the file handler");
    MPI_Errhandler_free(&weh);
    MPI_Errhandler_free(&ceh);

    /* MPI_ERRHANDLER_NULL is no error handler (MPI_ERR_ERRHANDLER, MPI-4.1) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    rc = MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRHANDLER_NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Comm_set_errhandler");
    MPI_Errhandler none = MPI_ERRHANDLER_NULL;
    rc = MPI_Errhandler_free(&none);
    MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Errhandler_free");
    return mtest_finalize(mtest_error_count());
}
