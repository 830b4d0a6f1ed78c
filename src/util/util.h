/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Utility layer interface: status codes, logging, assertions and the tunables runtime.
 * This is the bottom layer; it depends on nothing else in Manifold and every other layer
 * (and the launcher) may include it.
 */
#ifndef MF_UTIL_H
#define MF_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Internal status codes: 0 is success, errors are negative. The binding layer is the only
 * place that turns them into MPI error classes. Keep this set small and documented. */
typedef enum {
    MF_OK = 0,
    MF_ERR_NO_MEMORY = -1,   /* an allocation failed */
    MF_ERR_INVALID = -2,     /* an argument or configuration value is not acceptable */
    MF_ERR_IO = -3,          /* a read/write/connect on a socket or file failed */
    MF_ERR_PROTOCOL = -4,    /* a peer (launcher, remote process) sent something unexpected */
    MF_ERR_NOT_FOUND = -5,   /* a key, name or object does not exist */
    MF_ERR_TRUNCATE = -6,    /* a message is longer than the buffer that receives it */
    MF_ERR_TRANSPORT = -7,   /* the network layer reported an error */
    MF_ERR_PEER_FAILED = -8, /* a peer process is gone */
    MF_ERR_UNSUPPORTED = -9, /* the request is valid but not implemented */
    MF_ERR_CANCELED = -10,   /* the operation was cancelled */
    MF_ERR_OTHER = -11,
    MF_ERR_EXHAUSTED = -12, /* no context id is free: too many communicators at once */
    MF_ERR_OVERFLOW = -13,  /* a size, count or extent does not fit its type */
    MF_ERR_NO_SPACE = -14,  /* a buffer of fixed size the user gave has no room left (the
                             * attached buffer of buffered sends); MF_ERR_NO_MEMORY is malloc's */
} mf_status_t;

/* A short lower-case name for a status ("no memory", "truncated" ...). Never NULL. */
const char *mf_status_str(mf_status_t status);

/* Logging. Levels are ordered; MANIFOLD_LOG=<level>[,<category>] selects what is printed.
 * Messages go to stderr prefixed with the process id (and world rank once known). */
typedef enum {
    MF_LOG_ERROR = 0,
    MF_LOG_WARN = 1,
    MF_LOG_INFO = 2,
    MF_LOG_DEBUG = 3,
    MF_LOG_TRACE = 4,
} mf_log_level_t;

extern int mf_log_level_current;

void mf_log_init(void);
void mf_log_set_rank(int rank);
/* Where log lines go instead of stderr (NULL: back to stderr). mpiexec queues them with the
 * ranks' output, since a blocking write to a reader that stopped reading would hold it. */
typedef void (*mf_log_writer_t)(void *ctx, const char *line, size_t len);
void mf_log_redirect(mf_log_writer_t writer, void *ctx);
/* Flushes the program's stdout and stderr before the process ends without exit(): what it
 * printed just before an abort must reach the launcher. Streams another thread holds locked
 * (it may be blocked writing them) are skipped rather than waited for. */
void mf_flush_program_output(void);
void mf_log_emit(mf_log_level_t level, const char *category, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int mf_log_enabled(mf_log_level_t level)
{
    return (int)level <= mf_log_level_current;
}

/* Use as: mf_log(MF_LOG_WARN, "pmi", "bad reply '%s'", line); cheap when disabled. */
#define mf_log(level, category, ...)                                                               \
    do {                                                                                           \
        if (mf_log_enabled(level))                                                                 \
            mf_log_emit((level), (category), __VA_ARGS__);                                         \
    } while (0)

/* Internal invariant checks; compiled in debug builds only (user input is never checked here). */
void mf_assert_fail(const char *expr, const char *file, int line) __attribute__((noreturn));
#ifdef MF_DEBUG
#define MF_ASSERT(expr) ((expr) ? (void)0 : mf_assert_fail(#expr, __FILE__, __LINE__))
#else
#define MF_ASSERT(expr) ((void)0)
#endif

#define MF_CACHE_LINE 64

/* Tell the CPU we are spinning (saves power, frees the pipeline for a sibling thread). */
static inline void mf_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/* Monotonic time in nanoseconds. */
static inline uint64_t mf_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#define MF_LIKELY(x)   __builtin_expect(!!(x), 1)
#define MF_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* On the definition of an external function of the message path (protocol, request and VCI
 * layers): link-time optimisation then inlines it into every caller, so a send or a receive
 * runs in one frame down to UCX instead of one per layer (each frame saved and restored six
 * registers and passed seven arguments). Builds without LTO simply call it. */
#define MF_HOT_PATH __attribute__((always_inline)) inline

/* Allocation helpers that log on failure. */
void *mf_malloc(size_t size, const char *what);
void *mf_calloc(size_t n, size_t size, const char *what);
/* `size` bytes aligned to `align` (a power of two, a multiple of sizeof(void *)), released with
 * free(); NULL when there is no memory. Use this, never C11 aligned_alloc: UCX's malloc hooks
 * (libucm) intercept free and posix_memalign but not aligned_alloc, and with many such blocks
 * its free took one for its own heap and aborted the process. */
void *mf_aligned_alloc(size_t align, size_t size);

/* Bytes free in /dev/shm (SIZE_MAX when it cannot be read). */
size_t mf_shm_free_bytes(void);
/* Sizes a new file of /dev/shm (shm_open) to len bytes: ENOSPC when its file system has less
 * room free, so that no page of it can fault later for want of room at the time of sizing;
 * with `reserve`, its pages are allocated now (posix_fallocate), which also rules out a
 * shortage later, at the price of the memory of untouched pages. Returns 0 or an errno value. */
int mf_shm_size(int fd, size_t len, int reserve);

/* Tunables. Every MANIFOLD_* environment variable is declared once, in util_params.c; the
 * values are parsed at init (mf_params_load) and an invalid value is an error, an unknown
 * MANIFOLD_* variable a warning. */
#define MF_VCI_MAX 64 /* largest VCI pool */

enum { MF_THREAD_CS_VCI = 0, MF_THREAD_CS_GLOBAL = 1 };
enum { MF_VCI_PROGRESS_OWN = 0, MF_VCI_PROGRESS_ALL = 1 };
enum { MF_VCI_SHARING_CONTEXT = 0, MF_VCI_SHARING_WORKER = 1, MF_VCI_SHARING_SHARED = 2 };

typedef struct mf_params {
    int param_check;       /* MANIFOLD_PARAM_CHECK */
    int vci_count;         /* MANIFOLD_VCI_COUNT (0: sized to the machine) */
    int thread_cs;         /* MANIFOLD_THREAD_CS: MF_THREAD_CS_* */
    int vci_progress;      /* MANIFOLD_VCI_PROGRESS: MF_VCI_PROGRESS_* */
    int vci_request_cache; /* MANIFOLD_VCI_REQUEST_CACHE */
    int vci_align;         /* MANIFOLD_VCI_ALIGN */
    int vci_lock_bias;     /* MANIFOLD_VCI_LOCK_BIAS */
    int vci_sharing;       /* MANIFOLD_VCI_SHARING: MF_VCI_SHARING_* */
    int vci_workers;       /* MANIFOLD_VCI_WORKERS */
    int vci_stats;         /* MANIFOLD_VCI_STATS */
    int progress_sweep;    /* MANIFOLD_PROGRESS_SWEEP_POLLS */
    int print_params;      /* MANIFOLD_PRINT_PARAMS */
    int async_progress;    /* MANIFOLD_ASYNC_PROGRESS: 0 off, 1 on */
    /* MANIFOLD_COLL_<NAME>: forced collective algorithms (0: selection table) */
    int coll_barrier;
    int coll_bcast;
    int coll_reduce;
    int coll_allreduce;
    int coll_gather;
    int coll_scatter;
    int coll_allgather;
    int coll_alltoall;
    int coll_reduce_scatter;
    int coll_scan;
    int coll_check;           /* MANIFOLD_COLL_CHECK */
    int connect_timeout;      /* MANIFOLD_CONNECT_TIMEOUT, seconds (0: none) */
    int coll_shm;             /* MANIFOLD_COLL_SHM */
    int coll_shm_medium;      /* MANIFOLD_COLL_SHM_MEDIUM: 0 auto, 1 off, 2 on */
    int coll_shm_crowded;     /* MANIFOLD_COLL_SHM_CROWDED: 0 auto, 1 off, 2 on */
    int coll_pair_whole;      /* MANIFOLD_COLL_PAIR_WHOLE: 0 auto, 1 off, 2 on */
    int coll_pair_far_ns;     /* MANIFOLD_COLL_PAIR_FAR_NS: the probe's far threshold */
    int coll_shm_crowd_bytes; /* MANIFOLD_COLL_SHM_CROWD_BYTES */
    int coll_cma_bytes;       /* MANIFOLD_COLL_CMA_BYTES (0: never copy across processes) */
    int coll_copy_down;       /* MANIFOLD_COLL_COPY_DOWN */
    /* MANIFOLD_COLL_SHM_CROWD_REDUCE_BYTES, MANIFOLD_COLL_SHM_CROWD_RING */
    int coll_shm_crowd_reduce_bytes;
    int coll_shm_crowd_ring;
    int coll_shm_crowd_rs_reduce;
    int coll_shm_crowd_allgather_bytes; /* MANIFOLD_COLL_SHM_CROWD_ALLGATHER_BYTES */
    int coll_shm_crowd_alltoall_bytes;  /* MANIFOLD_COLL_SHM_CROWD_ALLTOALL_BYTES */
    /* MANIFOLD_COLL_CMA_BCAST_BYTES, MANIFOLD_COLL_CMA_ALLGATHER_BYTES (0: never) */
    int coll_cma_bcast_bytes;
    int coll_cma_allgather_bytes;
    int part_aggr_bytes; /* MANIFOLD_PART_AGGR_BYTES (0: off) */
    int dt_stream_bytes; /* MANIFOLD_DT_STREAM_BYTES (0: never stream) */
    /* MANIFOLD_DT_TEMP_CACHE (bytes of pack temporaries a thread keeps) and
     * MANIFOLD_DT_STREAM_EAGER_MIN/MAX (small messages streamed; max 0: none) */
    int dt_temp_cache;
    int dt_stream_eager_min;
    int dt_stream_eager_max;
    int dt_stack_bytes; /* MANIFOLD_DT_STACK_BYTES (blocking calls pack on the stack) */
    int dt_iov_bytes;   /* MANIFOLD_DT_IOV_BYTES (0: never an iovec) */
    /* not a tunable: set by mf_params_load from the four DT_ values above, the largest
     * message a blocking call packs on its stack without asking whether it streams */
    int dt_stack_direct;
} mf_params_t;

extern mf_params_t mf_params;

/* A tunable that MPI_T_cvar_write may change while other threads run (the COLL_* ones and
 * VCI_STATS, see cvar_scope in binding_tool.c): read with a relaxed atomic load, which costs a
 * plain load, so the two never race. */
#define MF_PARAM_LIVE(field) __atomic_load_n(&mf_params.field, __ATOMIC_RELAXED)

mf_status_t mf_params_load(void);
/* Print every tunable (name, value, default, description) to `out`. */
void mf_params_print(FILE *out, int only_non_default);

/* One tunable, for tools (MPI_T control variables, manifold_info). `value` is NULL for
 * variables read by other programs; `choices` is NULL unless the tunable is an enumeration
 * (then the value is an index into it). */
typedef struct mf_param_info {
    const char *name; /* without the MANIFOLD_ prefix */
    const char *description;
    int *value;
    int default_value, min, max;
    const char *const *choices;
} mf_param_info_t;
int mf_params_count(void);
/* 1 and *info filled when index < mf_params_count(). */
int mf_params_describe(int index, mf_param_info_t *info);

#endif /* MF_UTIL_H */
