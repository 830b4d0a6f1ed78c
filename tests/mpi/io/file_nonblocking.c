/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Nonblocking data access (MPI-4.1 section 14.4) and the large-count (_c) forms. The file (the
 * default view) has six segments of size * N ints, rank r writing the r-th N ints of each:
 * - 0: MPI_File_iwrite_at; 1: MPI_File_iwrite through the individual pointer, which has moved
 *   past the data as soon as the call returns (before completion); both completed together by
 *   MPI_Waitall;
 * - 2: MPI_File_iwrite_at_all (MPI_Wait); 3: MPI_File_iwrite_all (MPI_Test until done);
 * - 4: MPI_File_iwrite_shared after MPI_File_seek_shared to the segment (MPI_Wait): each rank's
 *   record lands in one of the N-int slots;
 * - 5: MPI_File_write_at_c with an MPI_Count count, MPI_Get_count_c of its status.
 * After MPI_File_sync / MPI_Barrier / MPI_File_sync each rank reads its right neighbour's data
 * with MPI_File_iread_at and MPI_File_iread (MPI_Waitall), MPI_File_iread_at_all (MPI_Wait),
 * MPI_File_iread_all (MPI_Test), MPI_File_read_at_all_c and MPI_File_iread_c; each rank reads
 * one slot of segment 4 with MPI_File_iread_shared and rank 0 checks, through point-to-point
 * messages, that every rank's record was read exactly once. Every status gives the count
 * through MPI_Get_count (MPI_Get_count_c for the _c calls), completed requests are
 * MPI_REQUEST_NULL, and the file size is six segments. File: "io_nonblocking_<pid of rank
 * 0>.dat", deleted on close.
 */
#include "io_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N    32 /* ints per rank and segment */
#define NSEG 6

static int rank, nprocs;

/* byte offset of rank r's part of segment s */
static MPI_Offset off(int s, int r)
{
    return ((MPI_Offset)s * nprocs + r) * N * (MPI_Offset)sizeof(int);
}

static void fill(int *buf, int s, int r)
{
    for (int i = 0; i < N; i++)
        buf[i] = 1000000 * (s + 1) + 1000 * r + i;
}

/* buf must hold rank r's part of segment s, read with a status of N ints */
static void check_data(const int *buf, MPI_Status *st, int s, int r, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_INT, &count);
    MTEST_CHECK(count == N, "%s: count %d, expected %d", what, count, N);
    for (int i = 0; i < N; i++)
        if (!MTEST_CHECK(buf[i] == 1000000 * (s + 1) + 1000 * r + i,
                         "%s: int %d is %d, expected rank %d's segment %d", what, i, buf[i], r, s))
            break;
}

static void test_until_done(MPI_Request *req, MPI_Status *st, const char *what)
{
    int flag = 0;
    for (long i = 0; !flag; i++) {
        if (!CHECK_OK(MPI_Test(req, &flag, st)))
            return;
        if (i > 100000000L) {
            MTEST_CHECK(0, "%s: MPI_Test never completed", what);
            return;
        }
    }
    MTEST_CHECK(*req == MPI_REQUEST_NULL, "%s: request not freed by MPI_Test", what);
}

static void writes(MPI_File fh)
{
    int b[NSEG][N], count = -1;
    MPI_Request req[2];
    MPI_Status st[2];
    MPI_Count ccount = -1;

    for (int s = 0; s < NSEG; s++)
        fill(b[s], s, rank);

    CHECK_OK(MPI_File_iwrite_at(fh, off(0, rank), b[0], N, MPI_INT, &req[0]));
    CHECK_OK(MPI_File_seek(fh, off(1, rank), MPI_SEEK_SET));
    CHECK_OK(MPI_File_iwrite(fh, b[1], N, MPI_INT, &req[1]));
    /* the pointer moves when the call starts (section 14.4.3) */
    MTEST_CHECK(position(fh) == off(1, rank) + N * (MPI_Offset)sizeof(int),
                "position %lld after starting iwrite", (long long)position(fh));
    CHECK_OK(MPI_Waitall(2, req, st));
    MTEST_CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL,
                "MPI_Waitall left a request set");
    for (int i = 0; i < 2; i++) {
        MPI_Get_count(&st[i], MPI_INT, &count);
        MTEST_CHECK(count == N, "%s: count %d", i ? "iwrite" : "iwrite_at", count);
    }

    CHECK_OK(MPI_File_iwrite_at_all(fh, off(2, rank), b[2], N, MPI_INT, &req[0]));
    CHECK_OK(MPI_Wait(&req[0], &st[0]));
    MPI_Get_count(&st[0], MPI_INT, &count);
    MTEST_CHECK(count == N && req[0] == MPI_REQUEST_NULL, "iwrite_at_all: count %d", count);

    CHECK_OK(MPI_File_seek(fh, off(3, rank), MPI_SEEK_SET));
    CHECK_OK(MPI_File_iwrite_all(fh, b[3], N, MPI_INT, &req[0]));
    test_until_done(&req[0], &st[0], "iwrite_all");
    MPI_Get_count(&st[0], MPI_INT, &count);
    MTEST_CHECK(count == N, "iwrite_all: count %d", count);
    MTEST_CHECK(position(fh) == off(3, rank) + N * (MPI_Offset)sizeof(int),
                "position %lld after iwrite_all", (long long)position(fh));

    CHECK_OK(MPI_File_seek_shared(fh, off(4, 0), MPI_SEEK_SET));
    CHECK_OK(MPI_File_iwrite_shared(fh, b[4], N, MPI_INT, &req[0]));
    CHECK_OK(MPI_Wait(&req[0], &st[0]));
    MPI_Get_count(&st[0], MPI_INT, &count);
    MTEST_CHECK(count == N, "iwrite_shared: count %d", count);

    CHECK_OK(MPI_File_write_at_c(fh, off(5, rank), b[5], (MPI_Count)N, MPI_INT, &st[0]));
    MPI_Get_count_c(&st[0], MPI_INT, &ccount);
    MTEST_CHECK(ccount == N, "write_at_c: count %lld", (long long)ccount);
}

static void reads(MPI_File fh)
{
    int b[N], b2[N], right = (rank + 1) % nprocs, count = -1, who;
    MPI_Request req[2];
    MPI_Status st[2];
    MPI_Count ccount = -1;

    memset(b, 0, sizeof(b));
    memset(b2, 0, sizeof(b2));
    CHECK_OK(MPI_File_iread_at(fh, off(0, right), b, N, MPI_INT, &req[0]));
    CHECK_OK(MPI_File_seek(fh, off(1, right), MPI_SEEK_SET));
    CHECK_OK(MPI_File_iread(fh, b2, N, MPI_INT, &req[1]));
    MTEST_CHECK(position(fh) == off(1, right) + N * (MPI_Offset)sizeof(int),
                "position %lld after starting iread", (long long)position(fh));
    CHECK_OK(MPI_Waitall(2, req, st));
    check_data(b, &st[0], 0, right, "iread_at");
    check_data(b2, &st[1], 1, right, "iread");

    memset(b, 0, sizeof(b));
    CHECK_OK(MPI_File_iread_at_all(fh, off(2, right), b, N, MPI_INT, &req[0]));
    CHECK_OK(MPI_Wait(&req[0], &st[0]));
    check_data(b, &st[0], 2, right, "iread_at_all");

    memset(b, 0, sizeof(b));
    CHECK_OK(MPI_File_seek(fh, off(3, right), MPI_SEEK_SET));
    CHECK_OK(MPI_File_iread_all(fh, b, N, MPI_INT, &req[0]));
    test_until_done(&req[0], &st[0], "iread_all");
    check_data(b, &st[0], 3, right, "iread_all");

    /* one slot each of segment 4: together they are every rank's record once */
    memset(b, 0, sizeof(b));
    CHECK_OK(MPI_File_seek_shared(fh, off(4, 0), MPI_SEEK_SET));
    CHECK_OK(MPI_File_iread_shared(fh, b, N, MPI_INT, &req[0]));
    CHECK_OK(MPI_Wait(&req[0], &st[0]));
    who = (b[0] - 5000000) / 1000;
    if (!MTEST_CHECK(who >= 0 && who < nprocs, "iread_shared read %d", b[0]))
        who = -1;
    else
        check_data(b, &st[0], 4, who, "iread_shared");
    if (rank == 0) {
        int *seen = mtest_calloc((size_t)nprocs, sizeof(int)), w;
        for (int r = 0; r < nprocs; r++) {
            if (r == 0)
                w = who;
            else
                MPI_Recv(&w, 1, MPI_INT, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            if (w >= 0)
                seen[w]++;
        }
        for (int r = 0; r < nprocs; r++)
            MTEST_CHECK(seen[r] == 1, "iread_shared: rank %d's record read %d times", r, seen[r]);
        free(seen);
    } else {
        MPI_Send(&who, 1, MPI_INT, 0, 1, MPI_COMM_WORLD);
    }

    memset(b, 0, sizeof(b));
    CHECK_OK(MPI_File_read_at_all_c(fh, off(5, right), b, (MPI_Count)N, MPI_INT, &st[0]));
    MPI_Get_count_c(&st[0], MPI_INT, &ccount);
    MTEST_CHECK(ccount == N, "read_at_all_c: count %lld", (long long)ccount);
    check_data(b, &st[0], 5, right, "read_at_all_c");

    memset(b, 0, sizeof(b));
    CHECK_OK(MPI_File_seek(fh, off(0, right), MPI_SEEK_SET));
    CHECK_OK(MPI_File_iread_c(fh, b, (MPI_Count)N, MPI_INT, &req[0]));
    CHECK_OK(MPI_Wait(&req[0], &st[0]));
    ccount = -1;
    MPI_Get_count_c(&st[0], MPI_INT, &ccount);
    MTEST_CHECK(ccount == N, "iread_c: count %lld", (long long)ccount);
    check_data(b, &st[0], 0, right, "iread_c");

    /* reading at the end of file completes with no data */
    CHECK_OK(MPI_File_iread_at(fh, off(NSEG, 0), b, N, MPI_INT, &req[0]));
    CHECK_OK(MPI_Wait(&req[0], &st[0]));
    MPI_Get_count(&st[0], MPI_INT, &count);
    MTEST_CHECK(count == 0, "iread_at at the end of file: count %d", count);
}

int main(int argc, char **argv)
{
    char name[64];
    int pid = (int)getpid();
    MPI_File fh = MPI_FILE_NULL;
    MPI_Offset size = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof(name), "io_nonblocking_%d.dat", pid);
    if (CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name,
                               MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                               MPI_INFO_NULL, &fh))) {
        writes(fh);
        CHECK_OK(MPI_File_sync(fh));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(MPI_File_sync(fh));
        CHECK_OK(MPI_File_get_size(fh, &size));
        MTEST_CHECK(size == off(NSEG, 0), "file size %lld, expected %lld", (long long)size,
                    (long long)off(NSEG, 0));
        reads(fh);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(MPI_File_close(&fh));
    }
    return mtest_finalize(0);
}
