/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Common code of the point-to-point benchmarks: command-line options, the list of message
 * sizes, iteration counts adapted to the size, statistics over repetitions, aligned buffers
 * with a verifiable byte pattern, and the JSON output (one line per size on stdout plus an
 * optional JSON document). The benchmarks use only the standard MPI API, so this file compiles
 * with any MPI's compiler wrapper (Manifold, MPICH's mpicc_abi, Open MPI's mpicc).
 */
#ifndef MF_BENCH_UTIL_H
#define MF_BENCH_UTIL_H

#include <stddef.h>
#include <stdio.h>

#include <mpi.h>

/* Options shared by all benchmarks. A benchmark fills in its defaults, then parses argv. */
typedef struct mf_bench_opts {
    size_t min_size;       /* smallest message size in bytes (0 allowed) */
    size_t max_size;       /* largest message size in bytes */
    int iters;             /* timed iterations for small messages; fewer for large ones */
    int reps;              /* timed repetitions per size; median, min and max are reported */
    int warmup;            /* untimed, data-checked iterations before the timed ones */
    int window;            /* messages in flight per round (windowed benchmarks only) */
    int recv_buffers;      /* distinct receive buffers per window, 1..window; 0 means window */
    size_t byte_budget;    /* bytes one repetition should move; caps iterations of large sizes */
    const char *json_path; /* where to write the JSON document, or NULL */
} mf_bench_opts_t;

/* One measured message size: the statistic over opts.reps repetitions. */
typedef struct mf_bench_result {
    size_t size;
    int iters;
    double median;
    double min;
    double max;
    double placement_ns; /* mf_bench_placement_ns after the size's loops; 0 if not measured */
} mf_bench_result_t;

/* What a benchmark reports and how its numbers read (for the JSON output). */
typedef struct mf_bench_info {
    const char *name;   /* program name, e.g. "p2p_latency" */
    const char *metric; /* what the number is, e.g. "one-way latency" */
    const char *unit;   /* e.g. "us", "MB/s", "msg/s" */
    int uses_window;    /* print opts.window in the output */
} mf_bench_info_t;

/* Starts MPI and checks the job has exactly two processes. Returns this process's rank, or -1
 * after printing an error (rank 0 only) and finalizing MPI when the job has another size. */
int mf_bench_init(int *argc, char ***argv, const char *name);

/* What mf_bench_parse_args found. */
typedef enum {
    MF_BENCH_ARGS_RUN = 0,  /* options are valid: run the benchmark */
    MF_BENCH_ARGS_HELP = 1, /* --help: usage was printed, exit successfully */
    MF_BENCH_ARGS_BAD = 2,  /* a bad option: the error was printed, exit with status 2 */
} mf_bench_args_t;

/* Parses the common options into opts (which holds the defaults on entry). Only rank 0 prints
 * usage or errors. Every rank parses the same argv, so every rank gets the same answer. */
mf_bench_args_t mf_bench_parse_args(int argc, char **argv, const char *name, int rank,
                                    mf_bench_opts_t *opts);

/* The sizes to measure: min_size, then powers of two up to max_size (0 is followed by 1).
 * Returns the number of sizes and stores a malloc'ed array in *sizes_p (aborts if memory is
 * short, since the other rank would otherwise wait forever). */
int mf_bench_sizes(const mf_bench_opts_t *opts, size_t **sizes_p);
/* Parses "4096", "4k" or "4M" (binary multiples) into *size_p. Returns 0 or -1. */
int mf_bench_parse_size(const char *text, size_t *size_p);

/* Timed iterations for one size: opts.iters, reduced so that one repetition moves about
 * opts.byte_budget bytes when each iteration sends msgs_per_iter messages, but never below 4. */
int mf_bench_iters_for_size(const mf_bench_opts_t *opts, size_t size, int msgs_per_iter);

/* Untimed, checked warm-up iterations for a size measured with iters timed iterations: at most
 * opts.warmup, fewer for large messages whose check is slow, at least one unless opts.warmup
 * is 0. */
int mf_bench_warmup_for_size(const mf_bench_opts_t *opts, int iters);

/* Measures one size: fills samples[0 .. opts.reps) with one number per timed repetition and
 * returns the timed iterations per repetition it used. */
typedef int (*mf_bench_measure_fn)(void *ctx, const mf_bench_opts_t *opts, size_t size,
                                   double *samples);

/* Runs measure for every size of opts, prints a JSON line per size and writes the JSON
 * document (rank 0). Returns 0, or 1 if memory is short or the JSON file cannot be written. */
int mf_bench_run_sizes(const mf_bench_info_t *info, const mf_bench_opts_t *opts, int rank,
                       mf_bench_measure_fn measure, void *ctx);

/* Median (sorts values in place), minimum and maximum of n > 0 values into *result. */
void mf_bench_summarize(double *values, int n, mf_bench_result_t *result);

/* Page-aligned allocation of at least size bytes (one byte if size is 0), zero-filled so the
 * pages are mapped before timing. Aborts the job if memory is short. */
void *mf_bench_alloc(size_t size);

/* Fills buf with a byte pattern that depends on seed and on each byte's offset. */
void mf_bench_fill(void *buf, size_t size, unsigned seed);

/* Checks buf holds the pattern mf_bench_fill(buf, size, seed) wrote; on a mismatch prints the
 * first bad byte and aborts the job, since every later number would be meaningless. */
void mf_bench_verify(const void *buf, size_t size, unsigned seed, const char *name);

/* How close the cores of ranks 0 and 1 are, right now: the fastest of 64 round trips of one
 * cache line between the two processes (ns, timed on rank 0), with no MPI in the path. The
 * host moves this machine's vCPUs between placements whose round trips differ 3-5 fold, and a
 * launch meets one of them by chance, so runners compare MPIs within the same placement.
 * Collective over comm; returns 0 on every rank unless comm holds exactly two processes of
 * one host (the probe's shared memory is mapped on the first call and kept). */
double mf_bench_placement_ns(MPI_Comm comm);

/* Moves about 5 MB each way between every two processes of comm in messages of 8000 bytes,
 * untimed, so that what follows measures the steady state: over UCX (Manifold, Open MPI) the
 * first 2 MB or so between two processes run through pages of the shared-memory queue touched
 * for the first time, at about 5 us a page fault on the development VM (benchmarks.md, "The
 * first 2 MB between two processes"), which a benchmark of few calls per size would otherwise
 * count. Collective over comm. */
void mf_bench_warm_pairs(MPI_Comm comm);

/* Aborts the job (MPI_Abort, then exit in case MPI_Abort returns). */
void mf_bench_abort(void) __attribute__((noreturn));

/* Aborts the job with a message naming the MPI call when rc is not MPI_SUCCESS. Benchmarks
 * keep the default error handler too; this also covers MPIs that return instead of abort. */
void mf_bench_mpi_ok(int rc, const char *call);

/* Prints one JSON line for result on stdout (rank 0 calls this as each size finishes). */
void mf_bench_print_line(const mf_bench_info_t *info, const mf_bench_opts_t *opts,
                         const mf_bench_result_t *result);

/* Opens a JSON document on out: its "{" and the fields describing the benchmark, the library
 * (MPI_Get_library_version), the MPI version and the common options, each line ending in a
 * comma. The caller adds its results and the closing "}". */
void mf_bench_print_json_header(FILE *out, const mf_bench_info_t *info,
                                const mf_bench_opts_t *opts);

/* Writes the JSON document with every result to opts.json_path (if set). Returns 0 or -1 after
 * printing why the file could not be written. */
int mf_bench_write_json(const mf_bench_info_t *info, const mf_bench_opts_t *opts,
                        const mf_bench_result_t *results, int nresults);

/* Prints s as the body of a JSON string (without the quotes), escaping what JSON requires. */
void mf_bench_print_json_string(FILE *out, const char *s);

/* Stores the library's self-description (MPI_Get_library_version) in text, which holds
 * MPI_MAX_LIBRARY_VERSION_STRING bytes, trimmed of trailing blanks and newlines. */
void mf_bench_library_version(char *text);

#endif /* MF_BENCH_UTIL_H */
