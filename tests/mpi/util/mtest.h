/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared support code for the MPI test programs under tests/mpi/<chapter>/. A test calls
 * mtest_init (or mtest_init_thread), records failed checks with MTEST_CHECK or
 * MTEST_CHECK_ERR, and ends with `return mtest_finalize(errs);`, which adds up the error
 * counts of all ranks on rank 0 using only MPI_Send/MPI_Recv, prints " No Errors" or
 * " Found N errors", calls MPI_Finalize and gives the exit code for main. The utilities use
 * nothing but the standard MPI C API, so the same programs run on any standard-ABI MPI.
 */
#ifndef MTEST_H
#define MTEST_H

#include <mpi.h>
#include <stddef.h>

/* Initialise MPI with MPI_Init; exits the process with a message if that fails. */
void mtest_init(int *argc, char ***argv);

/* Initialise MPI with MPI_Init_thread and return the provided thread level. */
int mtest_init_thread(int *argc, char ***argv, int required);

/*
 * Gather the error counts (errs plus every failed MTEST_CHECK of this process) on rank 0,
 * print the verdict there, finalize MPI and return 0 when all ranks saw no error, 1
 * otherwise. Must be called by every rank of MPI_COMM_WORLD, with no message pending.
 */
int mtest_finalize(int errs);

/* Failed checks recorded so far by this process (all threads). */
int mtest_error_count(void);

/*
 * Record a failed check with its location and message unless cond is true; returns cond
 * (0 or 1). Thread-safe. Use through MTEST_CHECK, which supplies file and line.
 */
int mtest_check(int cond, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define MTEST_CHECK(cond, ...) mtest_check((cond) != 0, __FILE__, __LINE__, __VA_ARGS__)

/*
 * Check that rc is an error code of class expected_class, that MPI_Error_string gives a
 * non-empty message for it and, on Manifold, that the message names the function fname.
 * Returns 1 when all of that holds. Use through MTEST_CHECK_ERR.
 */
int mtest_check_err(int rc, int expected_class, const char *fname, const char *file, int line);

#define MTEST_CHECK_ERR(rc, expected_class, fname)                                                 \
    mtest_check_err((rc), (expected_class), (fname), __FILE__, __LINE__)

/*
 * mtest_check_err, and on Manifold also that the message begins with "fname:" (the function
 * itself, not another that shares its code) and names the argument: "argument <arg>" followed
 * by something other than a letter, digit or underscore.
 */
int mtest_check_err_arg(int rc, int expected_class, const char *fname, const char *arg,
                        const char *file, int line);

#define MTEST_CHECK_ERR_ARG(rc, expected_class, fname, arg)                                        \
    mtest_check_err_arg((rc), (expected_class), (fname), (arg), __FILE__, __LINE__)

/* Name of an MPI error class ("MPI_ERR_RANK"), or "unknown class" for other values. */
const char *mtest_error_class_name(int error_class);

/* 1 if the library is Manifold (its MPI_Get_library_version names it), else 0. */
int mtest_is_manifold(void);

/* The value of the high-water-mark MPI_T performance variable `name` (0 when the library has no
 * such variable), read in an MPI_T session of its own. */
unsigned long long mtest_pvar_highwater(const char *name);

/* Print to stderr, prefixed with the rank, when MTEST_VERBOSE is set in the environment. */
void mtest_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fill len bytes of buf with a pattern that depends on seed and on the byte offset. */
void mtest_fill(void *buf, size_t len, unsigned seed);

/* Offset of the first byte that differs from mtest_fill's pattern, or -1 if none does. */
long mtest_check_fill(const void *buf, size_t len, unsigned seed);

/* calloc that reports and aborts the job when memory runs out, so tests need not check. */
void *mtest_calloc(size_t count, size_t size);

#endif
