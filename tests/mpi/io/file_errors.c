/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * I/O errors (MPI-4.1 sections 14.7-14.8) under MPI_ERRORS_RETURN, the default handler of files:
 * MPI_File_get_errhandler(MPI_FILE_NULL) returns it at start. Each erroneous call returns the
 * class below, with a message naming the function (and, on Manifold, the argument at fault):
 * - MPI_File_open of a missing file without MPI_MODE_CREATE: MPI_ERR_NO_SUCH_FILE (filename);
 *   MPI_MODE_RDONLY | MPI_MODE_WRONLY and MPI_MODE_RDONLY | MPI_MODE_CREATE: MPI_ERR_AMODE
 *   (amode); MPI_MODE_CREATE | MPI_MODE_EXCL on an existing file: MPI_ERR_FILE_EXISTS
 *   (filename);
 * - MPI_File_write_at and MPI_File_write on a read-only file: MPI_ERR_ACCESS or
 *   MPI_ERR_READ_ONLY; MPI_File_read_at and MPI_File_read on a write-only file: MPI_ERR_ACCESS;
 * - MPI_File_read_at with offset -1: MPI_ERR_ARG (offset); count -1 (read_at and write_at):
 *   MPI_ERR_COUNT (count); MPI_DATATYPE_NULL: MPI_ERR_TYPE (datatype);
 * - MPI_FILE_NULL to MPI_File_write: MPI_ERR_FILE (fh; Manifold only, MPICH 5.0.2 crashes);
 * - MPI_File_set_view with an uncommitted filetype: MPI_ERR_TYPE (filetype), with datarep
 *   "mtest-no-such-rep": MPI_ERR_UNSUPPORTED_DATAREP (datarep);
 * - MPI_File_delete of a missing file: MPI_ERR_NO_SUCH_FILE (filename);
 * - MPI_File_read_all_end and MPI_File_write_at_all_end without a *_begin: an error.
 * A handler from MPI_File_create_errhandler set on an open file (MPI_File_get_errhandler
 * returns it) is called with that file and the code by an erroneous call, which then returns
 * the code (checked on Manifold only: MPICH 5.0.2 returns MPI_SUCCESS), and by
 * MPI_File_call_errhandler. Set on MPI_FILE_NULL it is called for a failing
 * MPI_File_open (with MPI_FILE_NULL) and files opened afterwards inherit it. After all that the
 * file still works. Files: "io_errors_<pid of rank 0>*.dat", all deleted.
 */
#include "io_util.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* argument names in the message are checked on Manifold only */
#define CHECK_ARG(rc, cls, fname, arg)                                                             \
    (mtest_is_manifold() ? MTEST_CHECK_ERR_ARG(rc, cls, fname, arg)                                \
                         : MTEST_CHECK_ERR(rc, cls, fname))

static int handler_calls, handler_code;
static MPI_File handler_file;

static void file_handler(MPI_File *fh, int *code, ...)
{
    handler_file = *fh;
    handler_code = *code;
    handler_calls++;
}

static int class_of(int code)
{
    int cls = -1;
    MPI_Error_class(code, &cls);
    return cls;
}

/* rc must be an error of class a or b; on Manifold the message names fname */
static void check_either(int rc, int a, int b, const char *fname)
{
    int cls = class_of(rc);
    if (!MTEST_CHECK(rc != MPI_SUCCESS, "%s succeeded", fname))
        return;
    if (MTEST_CHECK(cls == a || cls == b, "%s: class %s", fname, mtest_error_class_name(cls)) &&
        mtest_is_manifold())
        MTEST_CHECK_ERR(rc, cls, fname);
}

static void open_errors(const char *name, const char *missing)
{
    MPI_File fh = MPI_FILE_NULL;
    int rc;

    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    CHECK_ARG(rc, MPI_ERR_NO_SUCH_FILE, "MPI_File_open", "filename");
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
    CHECK_ARG(rc, MPI_ERR_AMODE, "MPI_File_open", "amode");
    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh);
    CHECK_ARG(rc, MPI_ERR_AMODE, "MPI_File_open", "amode");
    MTEST_CHECK(access(name, F_OK) != 0, "a refused MPI_File_open created %s", name);
}

/* name exists (written by the caller): mode errors */
static void mode_errors(const char *name)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    int rc, buf[4] = {0};

    rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                       MPI_INFO_NULL, &fh);
    CHECK_ARG(rc, MPI_ERR_FILE_EXISTS, "MPI_File_open", "filename");
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);

    if (CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh))) {
        check_either(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_ACCESS,
                     MPI_ERR_READ_ONLY, "MPI_File_write_at");
        check_either(MPI_File_write(fh, buf, 1, MPI_INT, &st), MPI_ERR_ACCESS, MPI_ERR_READ_ONLY,
                     "MPI_File_write");
        CHECK_OK(MPI_File_read_at(fh, 0, buf, 1, MPI_INT, &st)); /* reading is fine */
        CHECK_OK(MPI_File_close(&fh));
    }
    if (CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh))) {
        MTEST_CHECK_ERR(MPI_File_read_at(fh, 0, buf, 1, MPI_INT, &st), MPI_ERR_ACCESS,
                        "MPI_File_read_at");
        MTEST_CHECK_ERR(MPI_File_read(fh, buf, 1, MPI_INT, &st), MPI_ERR_ACCESS, "MPI_File_read");
        CHECK_OK(MPI_File_close(&fh));
    }
}

/* errors on an open read-write file */
static void argument_errors(MPI_File fh)
{
    MPI_Status st;
    MPI_Datatype uncommitted;
    int buf[4] = {0};

    CHECK_ARG(MPI_File_read_at(fh, -1, buf, 1, MPI_INT, &st), MPI_ERR_ARG, "MPI_File_read_at",
              "offset");
    CHECK_ARG(MPI_File_read_at(fh, 0, buf, -1, MPI_INT, &st), MPI_ERR_COUNT, "MPI_File_read_at",
              "count");
    CHECK_ARG(MPI_File_write_at(fh, 0, buf, -1, MPI_INT, &st), MPI_ERR_COUNT, "MPI_File_write_at",
              "count");
    CHECK_ARG(MPI_File_read_at(fh, 0, buf, 1, MPI_DATATYPE_NULL, &st), MPI_ERR_TYPE,
              "MPI_File_read_at", "datatype");
    /* MPICH 5.0.2 crashes (SIGSEGV in MPI_File_write) on MPI_FILE_NULL */
    if (mtest_is_manifold())
        CHECK_ARG(MPI_File_write(MPI_FILE_NULL, buf, 1, MPI_INT, &st), MPI_ERR_FILE,
                  "MPI_File_write", "fh");

    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    CHECK_ARG(MPI_File_set_view(fh, 0, MPI_INT, uncommitted, "native", MPI_INFO_NULL), MPI_ERR_TYPE,
              "MPI_File_set_view", "filetype");
    MPI_Type_free(&uncommitted);
    CHECK_ARG(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "mtest-no-such-rep", MPI_INFO_NULL),
              MPI_ERR_UNSUPPORTED_DATAREP, "MPI_File_set_view", "datarep");

    /* split collective ends without their begin */
    int rc = MPI_File_read_all_end(fh, buf, &st);
    MTEST_CHECK(rc != MPI_SUCCESS, "MPI_File_read_all_end without a begin succeeded");
    rc = MPI_File_write_at_all_end(fh, buf, &st);
    MTEST_CHECK(rc != MPI_SUCCESS, "MPI_File_write_at_all_end without a begin succeeded");
}

static void user_handlers(MPI_File fh, const char *missing, const char *other)
{
    MPI_Errhandler eh, got = MPI_ERRHANDLER_NULL;
    MPI_File fh2 = MPI_FILE_NULL;
    MPI_Status st;
    int rc, buf[1];

    CHECK_OK(MPI_File_create_errhandler(file_handler, &eh));
    CHECK_OK(MPI_File_set_errhandler(fh, eh));
    CHECK_OK(MPI_File_get_errhandler(fh, &got));
    MTEST_CHECK(got == eh, "MPI_File_get_errhandler does not return the handler set");
    MPI_Errhandler_free(&got);

    rc = MPI_File_read_at(fh, -1, buf, 1, MPI_INT, &st);
    MTEST_CHECK(handler_calls == 1 && handler_file == fh && class_of(handler_code) == MPI_ERR_ARG,
                "read_at(offset -1): handler called %d times, %s file, class %s", handler_calls,
                handler_file == fh ? "right" : "wrong",
                mtest_error_class_name(class_of(handler_code)));
    /* the code is "to be returned by the MPI routine that raised the error" (MPI-4.1 section
     * 9.3); MPICH 5.0.2 (ROMIO) returns MPI_SUCCESS once a user handler returned */
    if (mtest_is_manifold())
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_File_read_at");
    rc = MPI_File_call_errhandler(fh, MPI_ERR_OTHER);
    MTEST_CHECK(rc == MPI_SUCCESS && handler_calls == 2 && handler_file == fh &&
                    handler_code == MPI_ERR_OTHER,
                "MPI_File_call_errhandler: rc %d, handler called %d times with code %d", rc,
                handler_calls, handler_code);
    CHECK_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));

    /* on MPI_FILE_NULL: for MPI_File_open and inherited by new files */
    CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    handler_calls = 0;
    handler_file = fh;
    rc = MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh2);
    MTEST_CHECK(handler_calls == 1 && handler_file == MPI_FILE_NULL &&
                    class_of(handler_code) == MPI_ERR_NO_SUCH_FILE,
                "open of a missing file: MPI_FILE_NULL's handler called %d times, %s file, class "
                "%s",
                handler_calls, handler_file == MPI_FILE_NULL ? "null" : "another",
                mtest_error_class_name(class_of(handler_code)));
    /* MPICH 5.0.2 returns MPI_SUCCESS from MPI_File_open once the handler returned (above) */
    if (mtest_is_manifold())
        MTEST_CHECK_ERR(rc, MPI_ERR_NO_SUCH_FILE, "MPI_File_open");
    if (CHECK_OK(MPI_File_open(MPI_COMM_WORLD, other,
                               MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                               MPI_INFO_NULL, &fh2))) {
        got = MPI_ERRHANDLER_NULL;
        CHECK_OK(MPI_File_get_errhandler(fh2, &got));
        MTEST_CHECK(got == eh, "a new file did not inherit MPI_FILE_NULL's handler");
        MPI_Errhandler_free(&got);
        handler_calls = 0;
        MPI_File_read_at(fh2, 0, buf, -1, MPI_INT, &st);
        MTEST_CHECK(handler_calls == 1 && handler_file == fh2 &&
                        class_of(handler_code) == MPI_ERR_COUNT,
                    "read_at(count -1) on the new file: handler called %d times, %s file",
                    handler_calls, handler_file == fh2 ? "right" : "wrong");
        CHECK_OK(MPI_File_close(&fh2));
    }
    CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Errhandler_free(&eh));
}

int main(int argc, char **argv)
{
    int rank, pid = (int)getpid(), mine, back = -1;
    char name[64], missing[64], other[64];
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof(name), "io_errors_%d.dat", pid);
    snprintf(missing, sizeof(missing), "io_errors_%d_missing.dat", pid);
    snprintf(other, sizeof(other), "io_errors_%d_other.dat", pid);

    CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);

    open_errors(name, missing);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_ARG(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE, "MPI_File_delete",
                  "filename");

    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh)))
        return mtest_finalize(0);
    eh = MPI_ERRHANDLER_NULL;
    CHECK_OK(MPI_File_get_errhandler(fh, &eh));
    MTEST_CHECK(eh == MPI_ERRORS_RETURN, "a new file's handler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);
    argument_errors(fh);
    user_handlers(fh, missing, other);

    /* the file still works */
    mine = 1000 + rank;
    CHECK_OK(MPI_File_write_at(fh, rank * (MPI_Offset)sizeof(int), &mine, 1, MPI_INT, &st));
    CHECK_OK(MPI_File_read_at(fh, rank * (MPI_Offset)sizeof(int), &back, 1, MPI_INT, &st));
    MTEST_CHECK(back == mine, "read back %d after the errors, expected %d", back, mine);
    CHECK_OK(MPI_File_close(&fh));

    MPI_Barrier(MPI_COMM_WORLD);
    mode_errors(name);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_OK(MPI_File_delete(name, MPI_INFO_NULL));
    return mtest_finalize(0);
}
