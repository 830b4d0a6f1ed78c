/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The shared file pointer and the split collectives (MPI-4.1 sections 14.4.4-14.4.5):
 * - MPI_File_write_shared: every rank writes K records of R ints tagged with its rank and
 *   sequence number; afterwards the file holds exactly size * K whole records, each (rank, k)
 *   once, each rank's in the order it wrote them, and MPI_File_get_position_shared is the end
 *   (in bytes: the default view);
 * - MPI_File_seek_shared with MPI_SEEK_SET, MPI_SEEK_CUR and MPI_SEEK_END, checked with
 *   MPI_File_get_position_shared on every rank; MPI_File_read_shared from rank 0 alone moves the
 *   pointer for all;
 * - with a view of etype MPI_INT (which resets the shared pointer to 0): MPI_File_write_ordered
 *   of rank + 1 records per rank puts them in rank order, the shared pointer ends after all of
 *   them (in ints); MPI_File_read_ordered from the start gives each rank its own records back;
 * - the split collectives MPI_File_write_ordered_begin/end (appended in rank order),
 *   MPI_File_write_at_all_begin/end and MPI_File_read_all_begin/end (each rank reads its
 *   right neighbour's record), with the counts in the statuses of the *_end calls.
 * Files: "io_shared_<pid of rank 0>*.dat", deleted at the end.
 */
#include "io_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define R 6 /* ints in a record */
#define K 3 /* records each rank writes with MPI_File_write_shared */

static int rank, nprocs;

/* the shared pointer must be at want on every rank; the barrier keeps the next access of the
 * pointer from any rank after this check on all */
#define CHECK_SHARED(fh, want, what) check_shared((fh), (want), (what), __LINE__)

static void check_shared(MPI_File fh, MPI_Offset want, const char *what, int line)
{
    MPI_Offset pos = -1;
    int rc = MPI_File_get_position_shared(fh, &pos);
    mtest_check(rc == MPI_SUCCESS && pos == want, __FILE__, line,
                "shared pointer at %lld %s, expected %lld (rc %d)", (long long)pos, what,
                (long long)want, rc);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void fill_record(int *rec, int who, int k)
{
    rec[0] = who;
    rec[1] = k;
    for (int j = 2; j < R; j++)
        rec[j] = 10000 * who + 100 * k + j;
}

/* the record is whole: returns its writer, or -1 */
static int record_ok(const int *rec)
{
    if (rec[0] < 0 || rec[0] >= nprocs)
        return -1;
    for (int j = 2; j < R; j++)
        if (rec[j] != 10000 * rec[0] + 100 * rec[1] + j)
            return -1;
    return rec[0];
}

static void write_shared(const char *name)
{
    int rec[R], n = nprocs * K, *all, *seen, *last;
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;
    MPI_Offset total = (MPI_Offset)n * R * (MPI_Offset)sizeof(int);

    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR,
                                MPI_INFO_NULL, &fh)))
        return;
    CHECK_SHARED(fh, 0, "at open");
    for (int k = 0; k < K; k++) {
        fill_record(rec, rank, k);
        CHECK_OK(MPI_File_write_shared(fh, rec, R, MPI_INT, &st));
        MTEST_CHECK(count_of(&st, MPI_INT) == R, "write_shared: count %d", count_of(&st, MPI_INT));
    }
    sync_all(fh);
    CHECK_SHARED(fh, total, "after the writes");

    all = mtest_calloc((size_t)n * R + 1, sizeof(int));
    if (rank == 0) {
        MPI_Offset size = -1;
        CHECK_OK(MPI_File_get_size(fh, &size));
        MTEST_CHECK(size == total, "file size %lld, expected %lld", (long long)size,
                    (long long)total);
        CHECK_OK(MPI_File_read_at(fh, 0, all, n * R + 1, MPI_INT, &st));
        MTEST_CHECK(count_of(&st, MPI_INT) == n * R, "read %d ints of %d", count_of(&st, MPI_INT),
                    n * R);
        seen = mtest_calloc((size_t)n, sizeof(int));
        last = mtest_calloc((size_t)nprocs, sizeof(int));
        for (int i = 0; i < nprocs; i++)
            last[i] = -1;
        for (int i = 0; i < n; i++) {
            int *r = all + i * R, who = record_ok(r);
            if (!MTEST_CHECK(who >= 0 && r[1] >= 0 && r[1] < K, "record %d is broken: %d %d %d", i,
                             r[0], r[1], r[2]))
                continue;
            seen[who * K + r[1]]++;
            MTEST_CHECK(r[1] > last[who], "rank %d's record %d comes after its record %d", who,
                        r[1], last[who]);
            last[who] = r[1];
        }
        for (int i = 0; i < n; i++)
            MTEST_CHECK(seen[i] == 1, "rank %d's record %d is in the file %d times", i / K, i % K,
                        seen[i]);
        free(seen);
        free(last);
    }

    /* seek_shared is collective; read_shared from one rank moves the pointer of all */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK_SHARED(fh, 0, "after seeking to 0");
    if (rank == 0) {
        CHECK_OK(MPI_File_read_shared(fh, rec, R, MPI_INT, &st));
        MTEST_CHECK(count_of(&st, MPI_INT) == R && memcmp(rec, all, sizeof(rec)) == 0,
                    "read_shared of the first record: count %d, writer %d", count_of(&st, MPI_INT),
                    rec[0]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_SHARED(fh, R * (MPI_Offset)sizeof(int), "after rank 0 read a record");
    CHECK_OK(MPI_File_seek_shared(fh, R * (MPI_Offset)sizeof(int), MPI_SEEK_CUR));
    CHECK_SHARED(fh, 2 * R * (MPI_Offset)sizeof(int), "after seeking a record on");
    CHECK_OK(MPI_File_seek_shared(fh, -R * (MPI_Offset)sizeof(int), MPI_SEEK_END));
    CHECK_SHARED(fh, total - R * (MPI_Offset)sizeof(int),
                 "after seeking to a record before the end");
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_close(&fh));
    if (rank == 0)
        CHECK_OK(MPI_File_delete(name, MPI_INFO_NULL));
}

/* rank 0 checks that from int `at` on the file holds rank r's r + 1 records (k = base..) in
 * rank order */
static void check_ordered(MPI_File fh, MPI_Offset at, int base, const char *what)
{
    int tot = R * nprocs * (nprocs + 1) / 2, *all = mtest_calloc((size_t)tot, sizeof(int));
    MPI_Status st;

    CHECK_OK(MPI_File_read_at(fh, at, all, tot, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == tot, "%s: read %d ints of %d", what,
                count_of(&st, MPI_INT), tot);
    for (int r = 0, i = 0; r < nprocs; r++)
        for (int k = 0; k <= r; k++, i++) {
            int *rec = all + i * R;
            if (!MTEST_CHECK(record_ok(rec) == r && rec[1] == base + k,
                             "%s: record %d is (%d, %d), expected (%d, %d)", what, i, rec[0],
                             rec[1], r, base + k))
                break;
        }
    free(all);
}

static void ordered_and_split(const char *name)
{
    int mine = (rank + 1) * R, tot = R * nprocs * (nprocs + 1) / 2, right = (rank + 1) % nprocs;
    int *buf = mtest_calloc((size_t)mine, sizeof(int)), *back = mtest_calloc((size_t)mine, 4);
    int rec[R], got[R];
    MPI_File fh = MPI_FILE_NULL;
    MPI_Status st;

    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name,
                                MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh)))
        return;
    /* a shared pointer away from 0 that set_view resets */
    CHECK_OK(MPI_File_seek_shared(fh, 40, MPI_SEEK_SET));
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_SHARED(fh, 0, "after set_view");

    for (int k = 0; k <= rank; k++)
        fill_record(buf + k * R, rank, k);
    CHECK_OK(MPI_File_write_ordered(fh, buf, mine, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == mine, "write_ordered: count %d, expected %d",
                count_of(&st, MPI_INT), mine);
    CHECK_SHARED(fh, tot, "after write_ordered");
    sync_all(fh);
    if (rank == 0)
        check_ordered(fh, 0, 0, "write_ordered");

    /* each rank reads its own records back */
    CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    CHECK_OK(MPI_File_read_ordered(fh, back, mine, MPI_INT, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == mine, "read_ordered: count %d, expected %d",
                count_of(&st, MPI_INT), mine);
    MTEST_CHECK(memcmp(buf, back, (size_t)mine * sizeof(int)) == 0,
                "read_ordered did not return this rank's records: first (%d, %d)", back[0],
                back[1]);
    CHECK_SHARED(fh, tot, "after read_ordered");

    /* split collectives: ordered append, then explicit offsets, then the individual pointer */
    for (int k = 0; k <= rank; k++)
        fill_record(buf + k * R, rank, 100 + k);
    CHECK_OK(MPI_File_write_ordered_begin(fh, buf, mine, MPI_INT));
    CHECK_OK(MPI_File_write_ordered_end(fh, buf, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == mine, "write_ordered_end: count %d, expected %d",
                count_of(&st, MPI_INT), mine);
    CHECK_SHARED(fh, 2 * tot, "after write_ordered_begin/end");

    fill_record(rec, rank, 200);
    CHECK_OK(MPI_File_write_at_all_begin(fh, 2 * tot + rank * R, rec, R, MPI_INT));
    CHECK_OK(MPI_File_write_at_all_end(fh, rec, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == R, "write_at_all_end: count %d", count_of(&st, MPI_INT));
    sync_all(fh);
    if (rank == 0)
        check_ordered(fh, tot, 100, "write_ordered_begin/end");

    CHECK_OK(MPI_File_seek(fh, 2 * tot + right * R, MPI_SEEK_SET));
    memset(got, 0, sizeof(got));
    CHECK_OK(MPI_File_read_all_begin(fh, got, R, MPI_INT));
    CHECK_OK(MPI_File_read_all_end(fh, got, &st));
    MTEST_CHECK(count_of(&st, MPI_INT) == R, "read_all_end: count %d", count_of(&st, MPI_INT));
    MTEST_CHECK(record_ok(got) == right && got[1] == 200,
                "read_all_begin/end: record (%d, %d), expected (%d, 200)", got[0], got[1], right);
    MPI_Offset pos = -1;
    CHECK_OK(MPI_File_get_position(fh, &pos));
    MTEST_CHECK(pos == 2 * tot + (right + 1) * R, "position %lld after read_all_begin/end",
                (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_close(&fh));
    free(buf);
    free(back);
}

int main(int argc, char **argv)
{
    char name[64], name2[64];

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    make_name(name, sizeof(name), "io_shared", "");
    make_name(name2, sizeof(name2), "io_shared", "_ord");
    write_shared(name);
    ordered_and_split(name2);
    return mtest_finalize(0);
}
