/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * File manipulation and explicit-offset access (MPI-4.1 sections 14.2 and 14.4.2) with the
 * default view (displacement 0, etype and filetype MPI_BYTE, "native"):
 * - MPI_File_open with MPI_MODE_CREATE | MPI_MODE_RDWR; MPI_File_get_amode returns that mode,
 *   MPI_File_get_group a group MPI_IDENT to the communicator's, atomicity is off at first and
 *   MPI_File_set_atomicity turns it on and off, MPI_File_get_info returns an info the caller
 *   frees, MPI_File_set_info takes hints;
 * - MPI_File_write_at of ints at per-rank offsets (MPI_Get_count of the status: all of them),
 *   MPI_File_sync / MPI_Barrier / MPI_File_sync, then every rank reads the whole file with
 *   MPI_File_read_at; MPI_File_get_size; a read that crosses the end of file returns the items
 *   before it (a short count), one at or past the end returns 0 items, neither is an error;
 * - MPI_File_set_size grows and shrinks the file, MPI_File_preallocate grows it but never
 *   shrinks it;
 * - MPI_File_close sets the handle to MPI_FILE_NULL; reopened with MPI_MODE_RDONLY the file
 *   still holds its data (MPI_File_read moves the individual pointer, counted in bytes);
 *   MPI_File_delete removes it and an open without MPI_MODE_CREATE then fails with
 *   MPI_ERR_NO_SUCH_FILE; so does one after a close with MPI_MODE_DELETE_ON_CLOSE;
 * - MPI_MODE_APPEND: the individual and shared file pointers start at the end of the file.
 * File names are "io_basic_<pid of rank 0>*.dat" in the current directory; all are deleted.
 */
#include "io_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 16 /* ints written by each rank */

static MPI_Offset size_of(MPI_File fh)
{
    MPI_Offset size = -1;
    CHECK_OK(MPI_File_get_size(fh, &size));
    return size;
}

static void queries(MPI_File fh)
{
    int amode = -1, flag = -1, result = -1, nkeys = -1;
    MPI_Group group = MPI_GROUP_NULL, wgroup;
    MPI_Info info = MPI_INFO_NULL, hints;

    CHECK_OK(MPI_File_get_amode(fh, &amode));
    MTEST_CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "MPI_File_get_amode gave %#x", amode);

    CHECK_OK(MPI_File_get_group(fh, &group));
    MPI_Comm_group(MPI_COMM_WORLD, &wgroup);
    MPI_Group_compare(group, wgroup, &result);
    MTEST_CHECK(result == MPI_IDENT, "the file's group compares %d to the communicator's", result);
    MPI_Group_free(&group);
    MPI_Group_free(&wgroup);

    /* nonatomic mode is the default (section 14.6.1) */
    CHECK_OK(MPI_File_get_atomicity(fh, &flag));
    MTEST_CHECK(flag == 0, "atomicity %d at open", flag);
    CHECK_OK(MPI_File_set_atomicity(fh, 1));
    CHECK_OK(MPI_File_get_atomicity(fh, &flag));
    MTEST_CHECK(flag != 0, "atomicity %d after setting it", flag);
    CHECK_OK(MPI_File_set_atomicity(fh, 0));
    CHECK_OK(MPI_File_get_atomicity(fh, &flag));
    MTEST_CHECK(flag == 0, "atomicity %d after clearing it", flag);

    /* hints: the info in use is a new object the caller frees */
    CHECK_OK(MPI_File_get_info(fh, &info));
    if (MTEST_CHECK(info != MPI_INFO_NULL, "MPI_File_get_info returned MPI_INFO_NULL")) {
        CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
        MTEST_CHECK(nkeys >= 0, "the file's info has %d keys", nkeys);
        CHECK_OK(MPI_Info_free(&info));
    }
    MPI_Info_create(&hints);
    MPI_Info_set(hints, "access_style", "read_mostly");
    MPI_Info_set(hints, "mtest_unknown_hint", "1"); /* ignored, no error */
    CHECK_OK(MPI_File_set_info(fh, hints));
    MPI_Info_free(&hints);
    info = MPI_INFO_NULL;
    CHECK_OK(MPI_File_get_info(fh, &info));
    if (MTEST_CHECK(info != MPI_INFO_NULL, "MPI_File_get_info returned MPI_INFO_NULL"))
        MPI_Info_free(&info);
}

static void explicit_offsets(MPI_File fh, int rank, int nprocs)
{
    int buf[N], tail[2 * N], *all = mtest_calloc((size_t)nprocs * N, sizeof(int));
    MPI_Offset total = (MPI_Offset)nprocs * N * (MPI_Offset)sizeof(int);
    MPI_Status st;

    for (int i = 0; i < N; i++)
        buf[i] = 1000 * rank + i;
    CHECK_OK(MPI_File_write_at(fh, (MPI_Offset)rank * N * (MPI_Offset)sizeof(int), buf, N, MPI_INT,
                               &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == N, "write_at: count %d", count_of(&st, MPI_INT));
    sync_all(fh);
    MTEST_CHECK(size_of(fh) == total, "size %lld after the writes, expected %lld",
                (long long)size_of(fh), (long long)total);

    /* every rank reads everything */
    CHECK_OK(MPI_File_read_at(fh, 0, all, nprocs * N, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == nprocs * N, "read_at of the file: count %d",
                count_of(&st, MPI_INT));
    for (int i = 0; i < nprocs * N; i++)
        if (!MTEST_CHECK(all[i] == 1000 * (i / N) + i % N, "int %d of the file is %d", i, all[i]))
            break;

    /* reads crossing, at and past the end of file: short counts, no error */
    memset(tail, 0xff, sizeof(tail));
    CHECK_OK(
        MPI_File_read_at(fh, total - (N / 2) * (MPI_Offset)sizeof(int), tail, 2 * N, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == N / 2, "read_at across the end: count %d, expected %d",
                count_of(&st, MPI_INT), N / 2);
    for (int i = 0; i < N / 2; i++)
        MTEST_CHECK(tail[i] == 1000 * (nprocs - 1) + N / 2 + i, "read across the end: int %d is %d",
                    i, tail[i]);
    CHECK_OK(MPI_File_read_at(fh, total - 6, tail, 64, MPI_BYTE, &st));
    MTEST_CHECK(count_of(&st, MPI_BYTE) == 6, "read_at of bytes across the end: count %d",
                count_of(&st, MPI_BYTE));
    CHECK_OK(MPI_File_read_at(fh, total, tail, N, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == 0, "read_at at the end: count %d",
                count_of(&st, MPI_INT));
    CHECK_OK(MPI_File_read_at(fh, total + 4096, tail, N, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == 0, "read_at past the end: count %d",
                count_of(&st, MPI_INT));
    free(all);
}

static void sizes(MPI_File fh, int nprocs)
{
    MPI_Offset total = (MPI_Offset)nprocs * N * (MPI_Offset)sizeof(int), size;
    MPI_Offset first = N * (MPI_Offset)sizeof(int);
    int buf[N];
    MPI_Status st;

    MPI_Barrier(MPI_COMM_WORLD); /* every read is done before the size changes */
    CHECK_OK(MPI_File_set_size(fh, total + 100));
    size = size_of(fh);
    MTEST_CHECK(size == total + 100, "size %lld after growing to %lld", (long long)size,
                (long long)(total + 100));
    CHECK_OK(MPI_File_set_size(fh, first));
    size = size_of(fh);
    MTEST_CHECK(size == first, "size %lld after shrinking to %lld", (long long)size,
                (long long)first);
    CHECK_OK(MPI_File_read_at(fh, 0, buf, N, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == N, "read_at after shrinking: count %d",
                count_of(&st, MPI_INT));
    for (int i = 0; i < N; i++)
        MTEST_CHECK(buf[i] == i, "int %d is %d after shrinking", i, buf[i]);
    CHECK_OK(MPI_File_read_at(fh, first, buf, 1, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == 0, "read_at at the new end: count %d",
                count_of(&st, MPI_INT));

    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_preallocate(fh, 3 * first));
    size = size_of(fh);
    MTEST_CHECK(size == 3 * first, "size %lld after preallocating %lld", (long long)size,
                (long long)(3 * first));
    CHECK_OK(MPI_File_preallocate(fh, first)); /* never shrinks */
    size = size_of(fh);
    MTEST_CHECK(size == 3 * first, "size %lld after preallocating less", (long long)size);
    CHECK_OK(MPI_File_set_size(fh, first));
    CHECK_OK(MPI_File_sync(fh));
}

/* open without MPI_MODE_CREATE must fail with MPI_ERR_NO_SUCH_FILE (line: the caller's) */
static void check_gone(const char *name, int line)
{
    MPI_File fh = MPI_FILE_NULL;
    int rc = MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    mtest_check_err(rc, MPI_ERR_NO_SUCH_FILE, "MPI_File_open", __FILE__, line);
    if (rc == MPI_SUCCESS)
        MPI_File_close(&fh);
}

static void reopen_and_delete(const char *name)
{
    int rank, buf[N], amode = -1;
    MPI_Offset pos = -1;
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)))
        return;
    CHECK_OK(MPI_File_get_amode(fh, &amode));
    MTEST_CHECK(amode == MPI_MODE_RDONLY, "amode %#x after reopening read-only", amode);
    MTEST_CHECK(size_of(fh) == N * (MPI_Offset)sizeof(int), "size %lld after reopening",
                (long long)size_of(fh));
    memset(buf, 0, sizeof(buf));
    CHECK_OK(MPI_File_read(fh, buf, N, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == N, "MPI_File_read after reopening: count %d",
                count_of(&st, MPI_INT));
    for (int i = 0; i < N; i++)
        MTEST_CHECK(buf[i] == i, "int %d is %d after reopening", i, buf[i]);
    CHECK_OK(MPI_File_get_position(fh, &pos));
    MTEST_CHECK(pos == N * (MPI_Offset)sizeof(int), "position %lld after reading %d ints",
                (long long)pos, N);
    CHECK_OK(MPI_File_close(&fh));
    MTEST_CHECK(fh == MPI_FILE_NULL, "MPI_File_close left the handle set");

    if (rank == 0)
        CHECK_OK(MPI_File_delete(name, MPI_INFO_NULL));
    MPI_Barrier(MPI_COMM_WORLD);
    check_gone(name, __LINE__);
}

static void delete_on_close(const char *name, int rank)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;

    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name,
                                MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh)))
        return;
    CHECK_OK(MPI_File_write_at(fh, rank * (MPI_Offset)sizeof(int), &rank, 1, MPI_INT, &st));
    CHECK_OK(MPI_File_close(&fh));
    MTEST_CHECK(fh == MPI_FILE_NULL, "MPI_File_close left the handle set");
    MPI_Barrier(MPI_COMM_WORLD);
    check_gone(name, __LINE__);
}

static void append(const char *name, int rank)
{
    MPI_File fh = MPI_FILE_NULL;
    MPI_Offset pos = -1;
    MPI_Status st;
    char text[] = "0123456789";

    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_WRONLY,
                                MPI_INFO_NULL, &fh)))
        return;
    if (rank == 0)
        CHECK_OK(MPI_File_write_at(fh, 0, text, 10, MPI_CHAR, &st));
    CHECK_OK(MPI_File_close(&fh));

    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_APPEND,
                                MPI_INFO_NULL, &fh)))
        return;
    CHECK_OK(MPI_File_get_position(fh, &pos));
    MTEST_CHECK(pos == 10, "individual pointer at %lld with MPI_MODE_APPEND, expected 10",
                (long long)pos);
    pos = -1;
    CHECK_OK(MPI_File_get_position_shared(fh, &pos));
    MTEST_CHECK(pos == 10, "shared pointer at %lld with MPI_MODE_APPEND, expected 10",
                (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_OK(MPI_File_write(fh, "ab", 2, MPI_CHAR, &st));
        CHECK_OK(MPI_File_get_position(fh, &pos));
        MTEST_CHECK(pos == 12, "individual pointer at %lld after appending 2 bytes",
                    (long long)pos);
    }
    sync_all(fh);
    MTEST_CHECK(size_of(fh) == 12, "size %lld after appending", (long long)size_of(fh));
    char got[16] = "";
    CHECK_OK(MPI_File_read_at(fh, 0, got, 16, MPI_CHAR, &st));
    MTEST_CHECK(count_of(&st, MPI_CHAR) == 12 && memcmp(got, "0123456789ab", 12) == 0,
                "after appending: %d bytes \"%.12s\"", count_of(&st, MPI_CHAR), got);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_close(&fh));
    if (rank == 0)
        CHECK_OK(MPI_File_delete(name, MPI_INFO_NULL));
}

int main(int argc, char **argv)
{
    int rank, nprocs;
    char name[64], name_doc[64], name_app[64];
    MPI_File fh = MPI_FILE_NULL;
    MPI_Offset pos = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    make_name(name, sizeof(name), "io_basic", "");
    make_name(name_doc, sizeof(name_doc), "io_basic", "_doc");
    make_name(name_app, sizeof(name_app), "io_basic", "_app");

    if (CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                               &fh))) {
        MTEST_CHECK(fh != MPI_FILE_NULL, "MPI_File_open returned MPI_FILE_NULL");
        MTEST_CHECK(size_of(fh) == 0, "a new file has size %lld", (long long)size_of(fh));
        queries(fh);
        explicit_offsets(fh, rank, nprocs);
        sizes(fh, nprocs);
        /* the explicit-offset calls leave the individual pointer alone */
        CHECK_OK(MPI_File_get_position(fh, &pos));
        MTEST_CHECK(pos == 0, "individual pointer at %lld after explicit-offset access",
                    (long long)pos);
        CHECK_OK(MPI_File_close(&fh));
        MTEST_CHECK(fh == MPI_FILE_NULL, "MPI_File_close left the handle set");
        reopen_and_delete(name);
    }
    delete_on_close(name_doc, rank);
    append(name_app, rank);
    return mtest_finalize(0);
}
