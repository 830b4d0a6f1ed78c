/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-aware collectives (run by the testlist with and without MANIFOLD_MPIEXEC_PPN, which
 * reports the ranks as several nodes): MPI_Barrier, MPI_Bcast, MPI_Reduce and MPI_Allreduce
 * back to back on several communicators (world, reversed rank order, ranks split across the
 * nodes, a duplicate), with sizes 0, 1, odd, and larger than any shared-memory slot, every
 * root, MPI_IN_PLACE, the collectives interleaved so a slot is reused as soon as the protocol
 * allows; a barrier that must wait for a late rank; a non-commutative operation (rank order);
 * small allgathers, gathers, scans and exscans; items larger than a reduction slot; small calls
 * with one rank far behind (a writer may run ahead only as far as the ring of small entries
 * allows); every rank of a floating-point allreduce getting the same bits; and no shared-memory
 * file of ours left in /dev/shm once the collectives are set up.
 */
#define _POSIX_C_SOURCE 200809L

#include "mtest.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define NCOMMS 4
#define ROUNDS 8

/* 268 and 269 ints straddle the largest message that travels with its flag (1072 bytes). */
static const int counts[] = {0, 1, 7, 60, 61, 268, 269, 1001, 40000, 150001, 300000};
#define NCOUNTS ((int)(sizeof(counts) / sizeof(counts[0])))

static int32_t value(int rank, int i, int round)
{
    return (int32_t)(rank * 3 + i % 1000 + round);
}

/* Broadcast `count` ints (all counts, each root in turn) and check every element. */
static void check_bcast(MPI_Comm comm, int round, int count, int root)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    int32_t *buf = mtest_calloc((size_t)count + 1, sizeof(int32_t));
    for (int i = 0; i < count; i++)
        buf[i] = rank == root ? value(root, i, round) : -1;
    MPI_Bcast(buf, count, MPI_INT32_T, root, comm);
    for (int i = 0; i < count; i++) {
        if (buf[i] != value(root, i, round)) {
            MTEST_CHECK(0, "bcast round %d count %d root %d: element %d is %d", round, count, root,
                        i, (int)buf[i]);
            break;
        }
    }
    free(buf);
}

/* Sum of value(r, i, round) over ranks r. */
static int32_t expected_sum(int size, int i, int round)
{
    return (int32_t)(3 * size * (size - 1) / 2 + size * (i % 1000 + round));
}

static void check_reduce(MPI_Comm comm, int round, int count, int root, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *s = mtest_calloc((size_t)count + 1, sizeof(int32_t));
    int32_t *r = mtest_calloc((size_t)count + 1, sizeof(int32_t));
    for (int i = 0; i < count; i++)
        s[i] = r[i] = value(rank, i, round);
    const char *what = root < 0 ? "allreduce" : "reduce";
    if (root < 0)
        MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, count, MPI_INT32_T, MPI_SUM, comm);
    else
        MPI_Reduce(in_place && rank == root ? MPI_IN_PLACE : s, r, count, MPI_INT32_T, MPI_SUM,
                   root, comm);
    for (int i = 0; (root < 0 || rank == root) && i < count; i++) {
        if (r[i] != expected_sum(size, i, round)) {
            MTEST_CHECK(0, "%s round %d count %d root %d in_place %d: element %d is %d", what,
                        round, count, root, in_place, i, (int)r[i]);
            break;
        }
    }
    free(s);
    free(r);
}

/* MPI_MAX on doubles: the largest contribution comes from the last rank. */
static void check_max(MPI_Comm comm, int round, int count)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double *s = mtest_calloc((size_t)count + 1, sizeof(double));
    double *r = mtest_calloc((size_t)count + 1, sizeof(double));
    for (int i = 0; i < count; i++)
        s[i] = (double)(rank * 1000 + i % 97 + round) * 0.5;
    MPI_Allreduce(s, r, count, MPI_DOUBLE, MPI_MAX, comm);
    for (int i = 0; i < count; i++) {
        if (r[i] != (double)((size - 1) * 1000 + i % 97 + round) * 0.5) {
            MTEST_CHECK(0, "max round %d count %d: element %d is %g", round, count, i, r[i]);
            break;
        }
    }
    free(s);
    free(r);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The last rank arrives 50 ms late: nobody may leave the barrier before it entered (the
 * tests run on one host, where CLOCK_MONOTONIC is the same clock in every process). */
static void check_barrier_waits(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double entered = 0;
    if (rank == size - 1) {
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        entered = now();
    }
    MPI_Barrier(comm);
    double left = now();
    MPI_Bcast(&entered, 1, MPI_DOUBLE, size - 1, comm);
    MTEST_CHECK(left >= entered, "barrier returned %.6f s before the late rank entered",
                entered - left);
}

static void pause_us(long us)
{
    struct timespec ts = {0, us * 1000};
    nanosleep(&ts, NULL);
}

/* Small broadcasts and reductions while one rank keeps falling behind: the others run ahead
 * until they need an entry the slow rank has not read yet. Every value is checked, so an
 * entry overwritten too early shows up. */
static void check_laggard(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int i = 0; i < 70; i++) {
        int slow = i < 35 ? size - 1 : 0, root = i < 35 ? 0 : size - 1;
        if (rank == slow && i % 9 == 0)
            pause_us(2000);
        int32_t v[3] = {i, -i, 7 * i};
        if (rank != root)
            v[0] = v[1] = v[2] = -1;
        MPI_Bcast(v, 3, MPI_INT32_T, root, comm);
        MTEST_CHECK(v[0] == i && v[1] == -i && v[2] == 7 * i,
                    "lagging bcast %d root %d: got %d %d %d", i, root, (int)v[0], (int)v[1],
                    (int)v[2]);
        int32_t mine = rank + i, sum = -1;
        MPI_Reduce(&mine, &sum, 1, MPI_INT32_T, MPI_SUM, slow, comm);
        if (rank == slow)
            MTEST_CHECK(sum == size * (size - 1) / 2 + size * i,
                        "lagging reduce %d to the slow rank: got %d", i, (int)sum);
    }
}

/* Floating-point sums depend on the order of the terms; MPI_Allreduce must give every rank
 * the same result, so every rank must combine in the same order. */
static void check_same_bits(MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    double s[5], r[5], first[5];
    for (int i = 0; i < 5; i++)
        s[i] = (rank % 2 ? 1e16 : 1.0) * (rank % 3 ? -1.0 : 1.0) + 0.1 * (i + rank);
    MPI_Allreduce(s, r, 5, MPI_DOUBLE, MPI_SUM, comm);
    memcpy(first, r, sizeof(r));
    MPI_Bcast(first, 5, MPI_DOUBLE, 0, comm);
    MTEST_CHECK(memcmp(first, r, sizeof(r)) == 0, "allreduce results differ between ranks");
}

/* Commutative user operation on a vector of 3-int items (12 bytes: the pipelined reduce
 * must cut its chunks at item boundaries). */
static void sum3(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int32_t *a = in;
    int32_t *b = inout;
    for (int i = 0; i < 3 * *len; i++)
        b[i] += a[i];
}

static void check_odd_items(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype t3;
    MPI_Type_contiguous(3, MPI_INT32_T, &t3);
    MPI_Type_commit(&t3);
    MPI_Op op;
    MPI_Op_create(sum3, 1, &op);
    const int items = 9001; /* 108012 bytes: several chunks */
    int32_t *s = mtest_calloc((size_t)items * 3, sizeof(int32_t));
    int32_t *r = mtest_calloc((size_t)items * 3, sizeof(int32_t));
    for (int root = 0; root < size; root++) {
        for (int in_place = 0; in_place < 2; in_place++) {
            for (int i = 0; i < 3 * items; i++)
                s[i] = r[i] = value(rank, i, root);
            MPI_Reduce(in_place && rank == root ? MPI_IN_PLACE : s, r, items, t3, op, root, comm);
            for (int i = 0; rank == root && i < 3 * items; i++) {
                if (r[i] != expected_sum(size, i, root)) {
                    MTEST_CHECK(0, "3-int reduce root %d in_place %d: element %d is %d", root,
                                in_place, i, (int)r[i]);
                    break;
                }
            }
        }
    }
    free(s);
    free(r);
    MPI_Op_free(&op);
    MPI_Type_free(&t3);
}

/* Allgather, gather, scan and exscan around the largest block that travels with its flag
 * (268 and 269 ints), back to back so that entries are reused. */
static void check_small_gathers(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    static const int ns[] = {1, 7, 60, 268, 269};
    int32_t *one = mtest_calloc(269, sizeof(int32_t));
    int32_t *all = mtest_calloc((size_t)size * 269, sizeof(int32_t));
    int32_t *pre = mtest_calloc(269, sizeof(int32_t));
    for (int round = 0; round < 40; round++) {
        int n = ns[round % 5], root = round % size;
        for (int i = 0; i < n; i++)
            one[i] = value(rank, i, round);
        MPI_Allgather(one, n, MPI_INT32_T, all, n, MPI_INT32_T, comm);
        for (int r = 0; r < size; r++)
            for (int i = 0; i < n; i++)
                if (all[r * n + i] != value(r, i, round)) {
                    MTEST_CHECK(0, "allgather round %d n %d: block %d item %d is %d", round, n, r,
                                i, (int)all[r * n + i]);
                    r = size, i = n;
                }
        memset(all, 0xff, (size_t)size * 269 * sizeof(int32_t));
        MPI_Gather(one, n, MPI_INT32_T, all, n, MPI_INT32_T, root, comm);
        for (int r = 0; rank == root && r < size; r++)
            for (int i = 0; i < n; i++)
                if (all[r * n + i] != value(r, i, round)) {
                    MTEST_CHECK(0, "gather round %d n %d root %d: block %d item %d is %d", round, n,
                                root, r, i, (int)all[r * n + i]);
                    r = size, i = n;
                }
        MPI_Scan(one, pre, n, MPI_INT32_T, MPI_SUM, comm);
        for (int i = 0; i < n; i++)
            if (pre[i] != expected_sum(rank + 1, i, round)) {
                MTEST_CHECK(0, "scan round %d n %d: item %d is %d", round, n, i, (int)pre[i]);
                break;
            }
        pre[0] = -7;
        MPI_Exscan(one, pre, n, MPI_INT32_T, MPI_SUM, comm);
        if (rank > 0)
            for (int i = 0; i < n; i++)
                if (pre[i] != expected_sum(rank, i, round)) {
                    MTEST_CHECK(0, "exscan round %d n %d: item %d is %d", round, n, i, (int)pre[i]);
                    break;
                }
    }
    free(one);
    free(all);
    free(pre);
}

/* Items larger than a shared-memory reduction slot (a user operation on a 132000-byte type):
 * these must still complete, through the point-to-point algorithms. */
static void sum_big(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int32_t *a = in;
    int32_t *b = inout;
    for (long i = 0; i < 33000L * *len; i++)
        b[i] += a[i];
}

static void check_big_items(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Datatype big;
    MPI_Type_contiguous(33000, MPI_INT32_T, &big);
    MPI_Type_commit(&big);
    MPI_Op op;
    MPI_Op_create(sum_big, 1, &op);
    int32_t *s = mtest_calloc(2 * 33000, sizeof(int32_t));
    int32_t *r = mtest_calloc(2 * 33000, sizeof(int32_t));
    for (int i = 0; i < 2 * 33000; i++)
        s[i] = value(rank, i, 5);
    MPI_Allreduce(s, r, 2, big, op, comm);
    for (int i = 0; i < 2 * 33000; i++)
        if (r[i] != expected_sum(size, i, 5)) {
            MTEST_CHECK(0, "allreduce of 132000-byte items: element %d is %d", i, (int)r[i]);
            break;
        }
    MPI_Reduce(s, r, 2, big, op, size - 1, comm);
    MPI_Op_free(&op);
    MPI_Type_free(&big);
    free(s);
    free(r);
}

/* inout = in: the result is the contribution of the lowest rank only when the combination
 * keeps rank order. */
static void first_op(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    memcpy(inout, in, (size_t)*len * sizeof(int));
}

static void check_noncommutative(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Op op;
    MPI_Op_create(first_op, 0, &op);
    int mine[3] = {rank, rank + 100, rank + 200}, out[3] = {-1, -1, -1};
    MPI_Allreduce(mine, out, 3, MPI_INT, op, comm);
    MTEST_CHECK(out[0] == 0 && out[1] == 100 && out[2] == 200,
                "non-commutative allreduce gave %d %d %d", out[0], out[1], out[2]);
    MPI_Reduce(mine, out, 3, MPI_INT, op, size - 1, comm);
    if (rank == size - 1)
        MTEST_CHECK(out[0] == 0, "non-commutative reduce gave %d", out[0]);
    MPI_Op_free(&op);
}

/* A segment the library created for a node is named after its creator's pid; once the
 * collectives are set up no such name may remain (a killed job then leaves nothing). */
static void check_no_segments(void)
{
    char prefix[64];
    snprintf(prefix, sizeof(prefix), "manifold-coll-%ld-", (long)getpid());
    DIR *dir = opendir("/dev/shm");
    if (dir == NULL)
        return;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL)
        MTEST_CHECK(strncmp(e->d_name, prefix, strlen(prefix)) != 0, "/dev/shm/%s is still there",
                    e->d_name);
    closedir(dir);
}

/* MTEST_STALE_SEGMENT=1: a job killed while setting up (SIGKILL from srun) left the segment
 * name rank 0's first one will have (its pid, MPI_COMM_WORLD's context 0, number 0); the
 * library must replace it, and check_no_segments then finds nothing. Other ranks drop theirs. */
static char stale_name[64];

static void make_stale_segment(void)
{
    const char *env = getenv("MTEST_STALE_SEGMENT");
    if (env == NULL || strcmp(env, "1") != 0)
        return;
    snprintf(stale_name, sizeof(stale_name), "/manifold-coll-%ld-0-0", (long)getpid());
    int fd = shm_open(stale_name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0 && ftruncate(fd, 4096) == 0)
        close(fd);
}

int main(int argc, char **argv)
{
    int rank, size;
    make_stale_segment();
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (stale_name[0] != '\0' && rank != 0)
        shm_unlink(stale_name);
    MPI_Comm comms[NCOMMS];
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]); /* reversed order */
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &comms[2]); /* across the nodes */
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[3]);

    for (int c = 0; c < NCOMMS; c++)
        check_barrier_waits(comms[c]);
    for (int round = 0; round < ROUNDS; round++) {
        for (int c = 0; c < NCOMMS; c++) {
            int csize;
            MPI_Comm_size(comms[c], &csize);
            int count = counts[(round + c) % NCOUNTS], root = (round + c) % csize;
            check_bcast(comms[c], round, count, root);
            check_reduce(comms[c], round, count, -1, round % 2);
            check_reduce(comms[c], round, count, root, round % 3 == 0);
            check_max(comms[c], round, counts[(round + 2 * c + 1) % NCOUNTS]);
            if (round % 4 == 0)
                MPI_Barrier(comms[c]);
        }
    }
    /* Many small ones back to back: each reuses a slot as early as the protocol allows. */
    for (int i = 0; i < 200; i++) {
        int csize;
        MPI_Comm_size(comms[i % NCOMMS], &csize);
        check_bcast(comms[i % NCOMMS], i, 1 + i % 5, i % csize);
        check_reduce(comms[i % NCOMMS], i, 1 + i % 3, -1, i % 2);
        check_reduce(comms[i % NCOMMS], i, 1 + i % 61, i % csize, i % 2);
    }
    for (int c = 0; c < NCOMMS; c++) {
        check_laggard(comms[c]);
        check_odd_items(comms[c]);
        check_small_gathers(comms[c]);
        check_big_items(comms[c]);
        check_same_bits(comms[c]);
        check_noncommutative(comms[c]);
    }
    check_no_segments();
    for (int c = 1; c < NCOMMS; c++)
        MPI_Comm_free(&comms[c]);
    return mtest_finalize(0);
}
