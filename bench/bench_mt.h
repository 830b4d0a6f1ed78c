/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Common code of the multithreaded benchmarks (mt_msgrate, mt_one_receiver, mt_init): their
 * command-line options, MPI_Init_thread with a check of the level granted, pinning threads to
 * cores, medians, and one JSON object per result line on stdout. Standard MPI and POSIX
 * threads only, so the same source builds with any MPI's compiler wrapper.
 */
#ifndef MF_BENCH_MT_H
#define MF_BENCH_MT_H

#include <stddef.h>

#include <mpi.h>

#define MF_MT_MAX_SIZES 32
#define MF_MT_MAX_CPUS  1024

/* How the threads of a process reach their peers (mt_msgrate --mode). */
typedef enum {
    MF_MT_EVERYWHERE, /* one thread per process: MPI everywhere, run with more processes */
    MF_MT_SER_COMM,   /* every thread on MPI_COMM_WORLD, a tag per thread */
    MF_MT_PAR_COMM,   /* a communicator (MPI_Comm_dup) per thread pair */
    MF_MT_TAGS,       /* one duplicate with the no-any-source/no-any-tag assertions, a tag each */
} mf_mt_mode_t;

typedef struct mf_mt_opts {
    int threads;                   /* T: threads per process (or sender threads) */
    mf_mt_mode_t mode;             /* mt_msgrate only */
    size_t sizes[MF_MT_MAX_SIZES]; /* message sizes in bytes */
    int nsizes;                    /* entries of sizes */
    int window;                    /* messages in flight per thread and window */
    int iters;                     /* windows per thread per timed repetition */
    double seconds;                /* > 0: choose iters so a repetition lasts this long */
    int reps;                      /* timed repetitions; the median is reported */
    int warmup;                    /* untimed windows per size */
    int pin;                       /* bind threads to cores */
    int cpus[MF_MT_MAX_CPUS];      /* --cpus: the cores to use, in order */
    int ncpus;                     /* entries of cpus (0: the process's allowed cores) */
    int level;                     /* MPI_THREAD_SINGLE or MPI_THREAD_MULTIPLE */
    int any_source;                /* mt_one_receiver: receive with the wildcards */
    int comms;                     /* mt_init: communicators to duplicate and use */
} mf_mt_opts_t;

/* Parses argv into opts (which holds the defaults). Returns 0 to run, 1 after --help, 2 after
 * an error (printed to stderr by every rank that parses: call it before MPI_Init so the
 * process can exit with the status). */
int mf_mt_parse_args(int argc, char **argv, const char *name, const char *usage,
                     mf_mt_opts_t *opts);

/* MPI_Init_thread at opts->level; aborts the job when the MPI grants less. */
void mf_mt_init(int *argc, char ***argv, const mf_mt_opts_t *opts);

/* Aborts the job with a message naming the call when rc is not MPI_SUCCESS. */
void mf_mt_ok(int rc, const char *call);

/* Binds the calling thread to core number index (counted over --cpus, or over the cores the
 * process may use, modulo their number). Does nothing without --pin or --cpus. Returns the
 * core, or -1 when not pinned. */
int mf_mt_pin(const mf_mt_opts_t *opts, int index);

/* How many cores mf_mt_pin counts over (0 without --pin or --cpus). */
int mf_mt_ncores(const mf_mt_opts_t *opts);

/* Median (sorts in place) and extremes of n > 0 values. */
void mf_mt_summarize(double *values, int n, double *median, double *min, double *max);

/* Name of a mode or a thread level, as given on the command line. */
const char *mf_mt_mode_name(mf_mt_mode_t mode);
const char *mf_mt_level_name(int level);

/* Prints the opening of a JSON result line: {"benchmark": name, "library": ..., "threads":
 * ..., "thread_level": ..., with a trailing comma; the caller adds its fields and "}\n". */
void mf_mt_json_begin(const char *name, const mf_mt_opts_t *opts);

/* Monotonic wall-clock seconds (usable before MPI_Init and after MPI_Finalize). */
double mf_mt_now(void);

/* Resident set size of this process in KiB (from /proc), or -1. */
long mf_mt_rss_kib(void);

#endif /* MF_BENCH_MT_H */
