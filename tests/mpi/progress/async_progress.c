/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Asynchronous progress: communication that needs a process's progress completes while that
 * process computes without calling MPI. Run with the library's progress helper switched on
 * (MANIFOLD_ASYNC_PROGRESS=on; MPICH_ASYNC_PROGRESS=1 for the reference runs on MPICH). In
 * each phase one process, the "computer", stops calling MPI and spins on a flag in a POSIX
 * shared-memory segment (outside MPI), which the others set once their side completed:
 * - passive target: the others lock the computer's window, put, get and accumulate, unlock
 *   (each access is applied and acknowledged by the target's progress);
 * - rendezvous: the others receive a message of 4 MiB that the computer sent with MPI_Isend
 *   (and send it one, which it received with MPI_Irecv): the transfers need both sides;
 * - a non-blocking barrier: with three processes or more another process needs a message the
 *   computer sends only after it received one (dissemination), so the others' MPI_Wait
 *   depends on the computer's progress.
 * Without progress the flag never comes and the computer reports a timeout after 20 s (then
 * it calls MPI again, so the job still ends). On Manifold, a last phase checks that the helper
 * sleeps when nothing needs progress: no wake-up and almost no CPU time over half a second.
 */
#include "mtest.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define BIG      (4 << 20)
#define WAIT_SEC 20.0

static int rank, nprocs;
static atomic_int *flags; /* one counter per phase, shared by the processes of this job */

static double now_sec(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A segment named by rank 0 and mapped by everyone (unlinked once all have it). */
static void flags_map(void)
{
    char name[64];
    long id = (long)getpid();
    MPI_Bcast(&id, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    snprintf(name, sizeof(name), "/mtest-async-%ld", id);
    int fd = -1;
    if (rank == 0) {
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd >= 0 && ftruncate(fd, 4096) != 0) {
            close(fd);
            fd = -1;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank != 0)
        fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        fprintf(stderr, "rank %d: cannot open the shared segment %s\n", rank, name);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    flags = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (flags == MAP_FAILED) {
        fprintf(stderr, "rank %d: cannot map the shared segment\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        shm_unlink(name);
}

/* The computer's side of a phase: no MPI call until every other process has set the flag. */
static void compute_until_done(int phase, const char *what)
{
    double start = now_sec();
    volatile unsigned long spins = 0;
    while (atomic_load(&flags[phase]) < nprocs - 1 && now_sec() - start < WAIT_SEC)
        spins++;
    MTEST_CHECK(atomic_load(&flags[phase]) == nprocs - 1,
                "%s: only %d of %d processes completed while rank 0 computed for %.0f s", what,
                atomic_load(&flags[phase]), nprocs - 1, WAIT_SEC);
    mtest_debug("%s: done after %.3f s of computing", what, now_sec() - start);
}

static void phase_passive_target(void)
{
    int *base;
    MPI_Win win;
    MPI_Win_allocate(2 * nprocs * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                     &base, &win);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        for (int i = 0; i < 2 * nprocs; i++)
            base[i] = -1;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        compute_until_done(0, "passive target");
        MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
        for (int r = 1; r < nprocs; r++) {
            MTEST_CHECK(base[r] == 100 + r, "slot %d holds %d, expected %d", r, base[r], 100 + r);
            MTEST_CHECK(base[nprocs + r] == 1000 + 2 * r, "accumulated slot %d holds %d", r,
                        base[nprocs + r]);
        }
        MPI_Win_unlock(0, win);
    } else {
        int v = 100 + rank, one = 1000 + rank, got = 0;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
        MPI_Accumulate(&rank, 1, MPI_INT, 0, nprocs + rank, 1, MPI_INT, MPI_REPLACE, win);
        MPI_Win_flush(0, win);
        MPI_Accumulate(&one, 1, MPI_INT, 0, nprocs + rank, 1, MPI_INT, MPI_SUM, win);
        MPI_Get(&got, 1, MPI_INT, 0, rank, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
        MTEST_CHECK(got == v, "got back %d from my slot, expected %d", got, v);
        atomic_fetch_add(&flags[0], 1);
    }
    MPI_Win_free(&win);
}

static void phase_rendezvous(void)
{
    char *out = mtest_calloc(BIG, 1), *in = mtest_calloc(BIG, 1);
    if (rank == 0) {
        MPI_Request reqs[2 * 64];
        int n = 0;
        mtest_fill(out, BIG, 11);
        for (int r = 1; r < nprocs; r++) {
            MPI_Isend(out, BIG, MPI_CHAR, r, 5, MPI_COMM_WORLD, &reqs[n++]);
            MPI_Irecv(in + (size_t)(r - 1) * (BIG / nprocs), BIG / nprocs, MPI_CHAR, r, 6,
                      MPI_COMM_WORLD, &reqs[n++]);
        }
        compute_until_done(1, "rendezvous");
        MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        for (int r = 1; r < nprocs; r++)
            MTEST_CHECK(mtest_check_fill(in + (size_t)(r - 1) * (BIG / nprocs), BIG / nprocs,
                                         (unsigned)(20 + r)) < 0,
                        "message from %d damaged", r);
    } else {
        mtest_fill(out, BIG / nprocs, (unsigned)(20 + rank));
        MPI_Request reqs[2];
        MPI_Irecv(in, BIG, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &reqs[0]);
        MPI_Isend(out, BIG / nprocs, MPI_CHAR, 0, 6, MPI_COMM_WORLD, &reqs[1]);
        MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
        MTEST_CHECK(mtest_check_fill(in, BIG, 11) < 0, "message from rank 0 damaged");
        atomic_fetch_add(&flags[1], 1);
    }
    free(out);
    free(in);
}

static void phase_ibarrier(void)
{
    MPI_Request req;
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    if (rank == 0) {
        compute_until_done(2, "non-blocking barrier");
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        atomic_fetch_add(&flags[2], 1);
    }
}

static double cpu_sec(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* Half a second without MPI calls; returns the helper's wake-ups meanwhile (the MPI_T counter
 * async_wakeups) and the process's CPU seconds in *cpu_p. */
static unsigned long long sleep_and_count(double *cpu_p)
{
    int index, count;
    unsigned long long wakeups = 0;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int ok = MPI_T_pvar_get_index("async_wakeups", MPI_T_PVAR_CLASS_COUNTER, &index) == MPI_SUCCESS;
    MTEST_CHECK(ok, "no performance variable async_wakeups");
    if (!ok)
        return 0;
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, index, NULL, &h, &count);
    MPI_T_pvar_start(s, h);
    double cpu = cpu_sec();
    struct timespec half = {0, 500000000L};
    nanosleep(&half, NULL);
    *cpu_p = cpu_sec() - cpu;
    MPI_T_pvar_read(s, h, &wakeups);
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);
    return wakeups;
}

static void phase_idle(void)
{
    int provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    /* The helper leaves a channel alone for a millisecond after the program used it. */
    struct timespec settle = {0, 20000000L};
    nanosleep(&settle, NULL);
    double cpu;
    unsigned long long wakeups = sleep_and_count(&cpu);
    MTEST_CHECK(wakeups == 0, "the helper woke %llu times with nothing to progress", wakeups);
    MTEST_CHECK(cpu < 0.05, "%.3f s of CPU time in half a second with nothing to progress", cpu);

    /* A window makes the helper watch for one-sided requests: it sleeps on the transport's
     * events and looks again every 20 ms, no more. */
    int *base;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    nanosleep(&settle, NULL);
    wakeups = sleep_and_count(&cpu);
    MTEST_CHECK(wakeups <= 40, "the helper woke %llu times in 0.5 s beside an idle window",
                wakeups);
    MTEST_CHECK(cpu < 0.05, "%.3f s of CPU time in half a second beside an idle window", cpu);
    mtest_debug("beside a window: %llu wake-ups, %.4f s CPU", wakeups, cpu);
    MPI_Win_free(&win);
    MPI_T_finalize();
}

int main(int argc, char **argv)
{
    mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    flags_map();

    phase_passive_target();
    MPI_Barrier(MPI_COMM_WORLD);
    phase_rendezvous();
    MPI_Barrier(MPI_COMM_WORLD);
    if (nprocs >= 3)
        phase_ibarrier();
    MPI_Barrier(MPI_COMM_WORLD);
    if (mtest_is_manifold())
        phase_idle();

    munmap(flags, 4096);
    return mtest_finalize(0);
}
