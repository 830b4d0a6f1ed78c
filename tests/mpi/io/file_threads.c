/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One file handle used by several threads at once under MPI_THREAD_MULTIPLE, where every MPI
 * call may be made concurrently (explicit offsets and the shared pointer need no individual
 * pointer, so their concurrent use is well defined). A library that does not provide
 * MPI_THREAD_MULTIPLE has nothing to test: the program prints " No Errors" and stops. NT
 * threads per process:
 * - each writes its own region of CH ints with MPI_File_write_at, in ROUNDS rounds of new
 *   values, and reads each round back with MPI_File_read_at (counts and data checked); after
 *   MPI_File_sync / MPI_Barrier / MPI_File_sync rank 0 reads the whole file and checks every
 *   region holds its thread's last round; then the same again through a view of ints in
 *   external32, so the threads convert data at once;
 * - each appends K records with MPI_File_write_shared on a second file; afterwards the shared
 *   pointer is at the end and rank 0 finds every (rank, thread, k) record exactly once and
 *   whole, each thread's in the order it wrote them.
 * Files: "io_threads_<pid of rank 0>*.dat", deleted on close.
 */
#include "io_util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NT     4   /* threads per process */
#define CH     512 /* ints per thread region */
#define ROUNDS 5
#define K      16 /* records per thread */
#define R      4  /* ints per record */

static int rank, nprocs;
static int int_view; /* explicit offsets count ints (a view of MPI_INT), else bytes */

struct targ {
    MPI_File fh;
    int t;
};

static int value(int r, int t, int round, int i)
{
    return ((r * NT + t) * ROUNDS + round) * CH + i;
}

static void *explicit_thread(void *arg)
{
    struct targ *a = arg;
    int *buf = mtest_calloc(CH, sizeof(int)), *back = mtest_calloc(CH, sizeof(int)), count;
    MPI_Offset at = (MPI_Offset)(rank * NT + a->t) * CH * (int_view ? 1 : (MPI_Offset)sizeof(int));
    MPI_Status st;

    for (int round = 0; round < ROUNDS; round++) {
        for (int i = 0; i < CH; i++)
            buf[i] = value(rank, a->t, round, i);
        CHECK_OK(MPI_File_write_at(a->fh, at, buf, CH, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        MTEST_CHECK(count == CH, "thread %d: write_at count %d", a->t, count);
        memset(back, 0, CH * sizeof(int));
        CHECK_OK(MPI_File_read_at(a->fh, at, back, CH, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        MTEST_CHECK(count == CH, "thread %d: read_at count %d", a->t, count);
        for (int i = 0; i < CH; i++)
            if (!MTEST_CHECK(back[i] == buf[i], "thread %d round %d: int %d read back as %d", a->t,
                             round, i, back[i]))
                break;
    }
    free(buf);
    free(back);
    return NULL;
}

static void *shared_thread(void *arg)
{
    struct targ *a = arg;
    int rec[R], count;
    MPI_Status st;

    for (int k = 0; k < K; k++) {
        rec[0] = rank;
        rec[1] = a->t;
        rec[2] = k;
        rec[3] = (rank * NT + a->t) * K + k;
        CHECK_OK(MPI_File_write_shared(a->fh, rec, R, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        MTEST_CHECK(count == R, "thread %d: write_shared count %d", a->t, count);
    }
    return NULL;
}

static void run_threads(MPI_File fh, void *(*fn)(void *))
{
    pthread_t th[NT];
    struct targ args[NT];

    for (int t = 0; t < NT; t++) {
        args[t].fh = fh;
        args[t].t = t;
        if (pthread_create(&th[t], NULL, fn, &args[t]) != 0) {
            MTEST_CHECK(0, "pthread_create failed");
            fn(&args[t]);
            th[t] = pthread_self();
        }
    }
    for (int t = 0; t < NT; t++)
        if (!pthread_equal(th[t], pthread_self()))
            pthread_join(th[t], NULL);
}

/* datarep NULL: the default view of bytes */
static void explicit_offsets(const char *name, const char *datarep)
{
    MPI_File fh = MPI_FILE_NULL;
    int total = nprocs * NT * CH, count = -1;
    MPI_Status st;

    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name,
                                MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh)))
        return;
    int_view = datarep != NULL;
    if (int_view)
        CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, datarep, MPI_INFO_NULL));
    run_threads(fh, explicit_thread);
    sync_all(fh);
    if (rank == 0) {
        int *all = mtest_calloc((size_t)total, sizeof(int));
        CHECK_OK(MPI_File_read_at(fh, 0, all, total, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        MTEST_CHECK(count == total, "read %d ints of %d", count, total);
        for (int k = 0; k < total; k++) {
            int who = k / (NT * CH), t = k / CH % NT, want = value(who, t, ROUNDS - 1, k % CH);
            if (!MTEST_CHECK(all[k] == want, "file int %d is %d, expected %d (rank %d thread %d)",
                             k, all[k], want, who, t))
                break;
        }
        free(all);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_close(&fh));
}

static void shared_pointer(const char *name)
{
    MPI_File fh = MPI_FILE_NULL;
    int n = nprocs * NT * K, count = -1;
    MPI_Offset pos = -1;
    MPI_Status st;

    if (!CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name,
                                MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                MPI_INFO_NULL, &fh)))
        return;
    run_threads(fh, shared_thread);
    sync_all(fh);
    CHECK_OK(MPI_File_get_position_shared(fh, &pos));
    MTEST_CHECK(pos == (MPI_Offset)n * R * (MPI_Offset)sizeof(int),
                "shared pointer at %lld after all writes, expected %lld", (long long)pos,
                (long long)n * R * (long long)sizeof(int));
    if (rank == 0) {
        int *all = mtest_calloc((size_t)n * R + 1, sizeof(int));
        int *seen = mtest_calloc((size_t)n, sizeof(int)), *last = mtest_calloc((size_t)n / K, 4);
        CHECK_OK(MPI_File_read_at(fh, 0, all, n * R + 1, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        MTEST_CHECK(count == n * R, "read %d ints of %d", count, n * R);
        for (int i = 0; i < n / K; i++)
            last[i] = -1;
        for (int i = 0; i < n; i++) {
            int *rec = all + i * R, id = rec[3];
            if (!MTEST_CHECK(rec[0] >= 0 && rec[0] < nprocs && rec[1] >= 0 && rec[1] < NT &&
                                 rec[2] >= 0 && rec[2] < K &&
                                 id == (rec[0] * NT + rec[1]) * K + rec[2],
                             "record %d is broken: %d %d %d %d", i, rec[0], rec[1], rec[2], rec[3]))
                continue;
            seen[id]++;
            MTEST_CHECK(rec[2] > last[id / K], "rank %d thread %d: record %d after record %d",
                        rec[0], rec[1], rec[2], last[id / K]);
            last[id / K] = rec[2];
        }
        for (int i = 0; i < n; i++)
            MTEST_CHECK(seen[i] == 1, "rank %d thread %d record %d is in the file %d times",
                        i / (NT * K), i / K % NT, i % K, seen[i]);
        free(all);
        free(seen);
        free(last);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    char name[64], name2[64];
    int pid = (int)getpid();
    int provided = mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);

    if (provided < MPI_THREAD_MULTIPLE) {
        mtest_debug("MPI_THREAD_MULTIPLE not provided (%d): nothing to test", provided);
        return mtest_finalize(0);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof(name), "io_threads_%d.dat", pid);
    snprintf(name2, sizeof(name2), "io_threads_%d_shared.dat", pid);
    explicit_offsets(name, NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    explicit_offsets(name, "external32");
    shared_pointer(name2);
    return mtest_finalize(0);
}
