/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Implementation of the shared test utilities declared in mtest.h: start-up, thread-safe
 * error recording, the end-of-test verdict gathered on rank 0 with point-to-point calls
 * only (collectives may not exist yet in the library under test), error-class checks and
 * a position-dependent fill pattern for message payloads.
 */
#include "mtest.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tag used by mtest_finalize; tests must not leave messages with it in flight. */
#define MTEST_FINALIZE_TAG 32767
/* Failed checks printed per process; later ones are only counted. */
#define MTEST_MAX_REPORTS 50

static atomic_int mtest_errors;
static int mtest_world_rank = -1;
static int mtest_verbose;

struct mtest_class_name {
    int error_class;
    const char *name;
};

static const struct mtest_class_name mtest_class_names[] = {
    {MPI_SUCCESS, "MPI_SUCCESS"},
    {MPI_ERR_BUFFER, "MPI_ERR_BUFFER"},
    {MPI_ERR_COUNT, "MPI_ERR_COUNT"},
    {MPI_ERR_TYPE, "MPI_ERR_TYPE"},
    {MPI_ERR_TAG, "MPI_ERR_TAG"},
    {MPI_ERR_COMM, "MPI_ERR_COMM"},
    {MPI_ERR_RANK, "MPI_ERR_RANK"},
    {MPI_ERR_REQUEST, "MPI_ERR_REQUEST"},
    {MPI_ERR_ROOT, "MPI_ERR_ROOT"},
    {MPI_ERR_GROUP, "MPI_ERR_GROUP"},
    {MPI_ERR_OP, "MPI_ERR_OP"},
    {MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY"},
    {MPI_ERR_DIMS, "MPI_ERR_DIMS"},
    {MPI_ERR_ARG, "MPI_ERR_ARG"},
    {MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN"},
    {MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE"},
    {MPI_ERR_OTHER, "MPI_ERR_OTHER"},
    {MPI_ERR_INTERN, "MPI_ERR_INTERN"},
    {MPI_ERR_PENDING, "MPI_ERR_PENDING"},
    {MPI_ERR_IN_STATUS, "MPI_ERR_IN_STATUS"},
    {MPI_ERR_ACCESS, "MPI_ERR_ACCESS"},
    {MPI_ERR_AMODE, "MPI_ERR_AMODE"},
    {MPI_ERR_ASSERT, "MPI_ERR_ASSERT"},
    {MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE"},
    {MPI_ERR_BASE, "MPI_ERR_BASE"},
    {MPI_ERR_CONVERSION, "MPI_ERR_CONVERSION"},
    {MPI_ERR_DISP, "MPI_ERR_DISP"},
    {MPI_ERR_DUP_DATAREP, "MPI_ERR_DUP_DATAREP"},
    {MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS"},
    {MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE"},
    {MPI_ERR_FILE, "MPI_ERR_FILE"},
    {MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY"},
    {MPI_ERR_INFO_NOKEY, "MPI_ERR_INFO_NOKEY"},
    {MPI_ERR_INFO_VALUE, "MPI_ERR_INFO_VALUE"},
    {MPI_ERR_INFO, "MPI_ERR_INFO"},
    {MPI_ERR_IO, "MPI_ERR_IO"},
    {MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL"},
    {MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE"},
    {MPI_ERR_NAME, "MPI_ERR_NAME"},
    {MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM"},
    {MPI_ERR_NOT_SAME, "MPI_ERR_NOT_SAME"},
    {MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE"},
    {MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE"},
    {MPI_ERR_PORT, "MPI_ERR_PORT"},
    {MPI_ERR_QUOTA, "MPI_ERR_QUOTA"},
    {MPI_ERR_READ_ONLY, "MPI_ERR_READ_ONLY"},
    {MPI_ERR_RMA_ATTACH, "MPI_ERR_RMA_ATTACH"},
    {MPI_ERR_RMA_CONFLICT, "MPI_ERR_RMA_CONFLICT"},
    {MPI_ERR_RMA_RANGE, "MPI_ERR_RMA_RANGE"},
    {MPI_ERR_RMA_SHARED, "MPI_ERR_RMA_SHARED"},
    {MPI_ERR_RMA_SYNC, "MPI_ERR_RMA_SYNC"},
    {MPI_ERR_SERVICE, "MPI_ERR_SERVICE"},
    {MPI_ERR_SIZE, "MPI_ERR_SIZE"},
    {MPI_ERR_SPAWN, "MPI_ERR_SPAWN"},
    {MPI_ERR_UNSUPPORTED_DATAREP, "MPI_ERR_UNSUPPORTED_DATAREP"},
    {MPI_ERR_UNSUPPORTED_OPERATION, "MPI_ERR_UNSUPPORTED_OPERATION"},
    {MPI_ERR_WIN, "MPI_ERR_WIN"},
    {MPI_ERR_RMA_FLAVOR, "MPI_ERR_RMA_FLAVOR"},
    {MPI_ERR_PROC_ABORTED, "MPI_ERR_PROC_ABORTED"},
    {MPI_ERR_VALUE_TOO_LARGE, "MPI_ERR_VALUE_TOO_LARGE"},
    {MPI_ERR_SESSION, "MPI_ERR_SESSION"},
    {MPI_ERR_ERRHANDLER, "MPI_ERR_ERRHANDLER"},
    {MPI_ERR_ABI, "MPI_ERR_ABI"},
};

static void mtest_setup(void)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &mtest_world_rank);
    mtest_verbose = getenv("MTEST_VERBOSE") != NULL;
}

void mtest_init(int *argc, char ***argv)
{
    int rc = MPI_Init(argc, argv);

    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "mtest: MPI_Init failed with code %d\n", rc);
        exit(1);
    }
    mtest_setup();
}

int mtest_init_thread(int *argc, char ***argv, int required)
{
    int provided = -1;
    int rc = MPI_Init_thread(argc, argv, required, &provided);

    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "mtest: MPI_Init_thread failed with code %d\n", rc);
        exit(1);
    }
    mtest_setup();
    return provided;
}

int mtest_error_count(void)
{
    return atomic_load(&mtest_errors);
}

int mtest_check(int cond, const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    int nth;

    if (cond) {
        return 1;
    }
    nth = atomic_fetch_add(&mtest_errors, 1) + 1;
    if (nth > MTEST_MAX_REPORTS) {
        return 0;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* one fprintf per report so lines from several threads do not interleave */
    fprintf(stderr, "[rank %d] %s:%d: check failed: %s%s\n", mtest_world_rank, file, line, msg,
            nth == MTEST_MAX_REPORTS ? " (further failures are only counted)" : "");
    fflush(stderr);
    return 0;
}

const char *mtest_error_class_name(int error_class)
{
    size_t n = sizeof(mtest_class_names) / sizeof(mtest_class_names[0]);

    for (size_t i = 0; i < n; i++) {
        if (mtest_class_names[i].error_class == error_class) {
            return mtest_class_names[i].name;
        }
    }
    return "unknown class";
}

int mtest_check_err(int rc, int expected_class, const char *fname, const char *file, int line)
{
    char text[MPI_MAX_ERROR_STRING];
    int error_class = -1, len = -1;
    int rc2;

    if (!mtest_check(rc != MPI_SUCCESS, file, line, "%s returned MPI_SUCCESS, expected %s", fname,
                     mtest_error_class_name(expected_class))) {
        return 0;
    }
    rc2 = MPI_Error_class(rc, &error_class);
    if (!mtest_check(rc2 == MPI_SUCCESS, file, line, "MPI_Error_class(%d) failed with %d", rc,
                     rc2)) {
        return 0;
    }
    if (!mtest_check(error_class == expected_class, file, line,
                     "%s returned error class %s (%d), expected %s (%d)", fname,
                     mtest_error_class_name(error_class), error_class,
                     mtest_error_class_name(expected_class), expected_class)) {
        return 0;
    }
    memset(text, 0, sizeof(text));
    rc2 = MPI_Error_string(rc, text, &len);
    if (!mtest_check(rc2 == MPI_SUCCESS && len > 0 && len < MPI_MAX_ERROR_STRING &&
                         (size_t)len == strlen(text),
                     file, line, "MPI_Error_string for the error of %s: rc %d, len %d", fname, rc2,
                     len)) {
        return 0;
    }
    if (mtest_is_manifold()) {
        return mtest_check(strstr(text, fname) != NULL, file, line,
                           "error string of %s does not name it: \"%s\"", fname, text);
    }
    return 1;
}

int mtest_check_err_arg(int rc, int expected_class, const char *fname, const char *arg,
                        const char *file, int line)
{
    char text[MPI_MAX_ERROR_STRING] = "", want[128];
    int len = 0;
    if (!mtest_check_err(rc, expected_class, fname, file, line))
        return 0;
    if (!mtest_is_manifold())
        return 1;
    MPI_Error_string(rc, text, &len);
    size_t n = strlen(fname);
    if (!mtest_check(strncmp(text, fname, n) == 0 && text[n] == ':', file, line,
                     "error string of %s does not begin with its name: \"%s\"", fname, text))
        return 0;
    snprintf(want, sizeof(want), "argument %s", arg);
    const char *at = strstr(text, want);
    char next = at != NULL ? at[strlen(want)] : 0;
    return mtest_check(at != NULL && !isalnum((unsigned char)next) && next != '_', file, line,
                       "error string of %s does not name argument %s: \"%s\"", fname, arg, text);
}

/* Asked of the library each time until known: programs that test MPI_Init themselves never
 * call mtest_init, and MPI_Get_library_version works before MPI_Init. */
int mtest_is_manifold(void)
{
    static atomic_int known; /* 0 not yet, 1 another MPI, 2 Manifold */
    if (atomic_load(&known) == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        if (MPI_Get_library_version(version, &len) == MPI_SUCCESS)
            atomic_store(&known, strstr(version, "Manifold") != NULL ? 2 : 1);
    }
    return atomic_load(&known) == 2;
}

void mtest_debug(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    if (!mtest_verbose) {
        return;
    }
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "[rank %d] %s\n", mtest_world_rank, msg);
}

/* The pattern word for a word index: distinct per offset so shifted data is caught too. */
static uint64_t mtest_pattern_word(size_t word, unsigned seed)
{
    uint64_t x = (uint64_t)word * 0x9e3779b97f4a7c15ULL + (uint64_t)seed * 0xbf58476d1ce4e5b9ULL;

    return x ^ (x >> 29);
}

void mtest_fill(void *buf, size_t len, unsigned seed)
{
    unsigned char *p = buf;
    size_t words = len / 8;
    uint64_t w;

    for (size_t i = 0; i < words; i++) {
        w = mtest_pattern_word(i, seed);
        memcpy(p + i * 8, &w, 8);
    }
    w = mtest_pattern_word(words, seed);
    memcpy(p + words * 8, &w, len - words * 8);
}

long mtest_check_fill(const void *buf, size_t len, unsigned seed)
{
    const unsigned char *p = buf;
    size_t words = len / 8;
    unsigned char expect[8];
    uint64_t w;

    for (size_t i = 0; i <= words; i++) {
        size_t n = i < words ? 8 : len - words * 8;

        w = mtest_pattern_word(i, seed);
        memcpy(expect, &w, 8);
        if (memcmp(p + i * 8, expect, n) == 0) {
            continue;
        }
        for (size_t j = 0; j < n; j++) {
            if (p[i * 8 + j] != expect[j]) {
                return (long)(i * 8 + j);
            }
        }
    }
    return -1;
}

void *mtest_calloc(size_t count, size_t size)
{
    void *p = calloc(count ? count : 1, size ? size : 1);

    if (p == NULL) {
        fprintf(stderr, "[rank %d] mtest: out of memory allocating %zu x %zu bytes\n",
                mtest_world_rank, count, size);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

int mtest_finalize(int errs)
{
    int local = errs + atomic_load(&mtest_errors);
    int total = local;
    int rank = 0, size = 1, n, rc;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        for (int src = 1; src < size; src++) {
            n = 0;
            rc = MPI_Recv(&n, 1, MPI_INT, src, MTEST_FINALIZE_TAG, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE);
            if (rc != MPI_SUCCESS) {
                fprintf(stderr, "mtest: receiving the error count of rank %d failed\n", src);
                n = 1;
            }
            total += n;
        }
        if (total == 0) {
            printf(" No Errors\n");
        } else {
            printf(" Found %d errors\n", total);
        }
        fflush(stdout);
    } else {
        rc = MPI_Send(&local, 1, MPI_INT, 0, MTEST_FINALIZE_TAG, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "[rank %d] mtest: sending the error count failed\n", rank);
            local++;
        }
    }
    rc = MPI_Finalize();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "[rank %d] mtest: MPI_Finalize failed with code %d\n", rank, rc);
        return 1;
    }
    return (rank == 0 ? total : local) != 0;
}

unsigned long long mtest_pvar_highwater(const char *name)
{
    int provided, index, count;
    unsigned long long v = 0;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    if (MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_HIGHWATERMARK, &index) == MPI_SUCCESS) {
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h;
        MPI_T_pvar_session_create(&s);
        MPI_T_pvar_handle_alloc(s, index, NULL, &h, &count);
        MPI_T_pvar_read(s, h, &v);
        MPI_T_pvar_handle_free(s, &h);
        MPI_T_pvar_session_free(&s);
    }
    MPI_T_finalize();
    return v;
}
