/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Utility layer: the table of tunables. This file is the single place that declares every
 * MANIFOLD_* environment variable: its type, default, range and a description. The library
 * reads the table at init; the launcher's own variables are listed so they are not reported as
 * unknown.
 */
#include "util.h"

#include <errno.h>
#include <pthread.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

mf_params_t mf_params;

typedef struct param_def {
    const char *name; /* without the MANIFOLD_ prefix */
    int *value;       /* NULL for variables read by other programs (the launcher) */
    int default_value, min, max;
    const char *description;
    /* Enumerations: the accepted words, NULL-terminated; the value is the word's index. */
    const char *const *choices;
} param_def_t;

extern char **environ;

static const char *const thread_cs_choices[] = {"vci", "global", NULL};
static const char *const vci_progress_choices[] = {"own", "all", NULL};
static const char *const async_progress_choices[] = {"off", "on", NULL};
static const char *const vci_sharing_choices[] = {"context", "worker", "shared", NULL};
/* Collective algorithms: index 0 lets the selection table decide; the order is the
 * MF_COLL_<NAME>_* ids of src/coll/coll.h. */
static const char *const coll_barrier_choices[] = {"auto", "dissemination", NULL};
static const char *const coll_bcast_choices[] = {"auto", "binomial", "scatter_allgather", NULL};
static const char *const coll_reduce_choices[] = {"auto", "binomial", "rabenseifner", NULL};
static const char *const coll_allreduce_choices[] = {"auto", "recursive_doubling", "rabenseifner",
                                                     "reduce_bcast", NULL};
static const char *const coll_shm_medium_choices[] = {"auto", "off", "on", NULL};
static const char *const coll_shm_crowded_choices[] = {"auto", "off", "on", NULL};
static const char *const coll_pair_whole_choices[] = {"auto", "off", "on", NULL};
static const char *const coll_gather_choices[] = {"auto", "linear", "binomial", NULL};
static const char *const coll_allgather_choices[] = {"auto", "ring", "recursive_doubling", "bruck",
                                                     NULL};
static const char *const coll_alltoall_choices[] = {"auto", "pairwise", "bruck", NULL};
static const char *const coll_reduce_scatter_choices[] = {"auto", "reduce_scatterv",
                                                          "recursive_halving", "pairwise", NULL};
static const char *const coll_scan_choices[] = {"auto", "chain", "recursive_doubling", NULL};

static const param_def_t param_table[] = {
    {"PARAM_CHECK", &mf_params.param_check, 1, 0, 1,
     "check the arguments of every MPI call and report bad ones through the error handler", NULL},
    {"VCI_COUNT", &mf_params.vci_count, 0, 0, MF_VCI_MAX,
     "virtual communication interfaces (network channels) in the pool; 0: one per core, at "
     "least 8 (they are created on first use)",
     NULL},
    {"THREAD_CS", &mf_params.thread_cs, MF_THREAD_CS_VCI, 0, 1,
     "critical sections: vci (a lock per channel) or global (one lock; for comparison only)",
     thread_cs_choices},
    {"VCI_PROGRESS", &mf_params.vci_progress, MF_VCI_PROGRESS_OWN, 0, 1,
     "waiting polls its own channel (own) or every channel each time (all; for comparison only)",
     vci_progress_choices},
    {"VCI_REQUEST_CACHE", &mf_params.vci_request_cache, 1, 0, 1,
     "1: free requests are cached per channel; 0: one shared cache (for comparison only)", NULL},
    {"VCI_ALIGN", &mf_params.vci_align, 1, 0, 1,
     "1: each channel's state on cache lines of its own; 0: packed (for comparison only)", NULL},
    {"VCI_LOCK_BIAS", &mf_params.vci_lock_bias, 1, 0, 1,
     "1: a channel's lock is biased to the first thread that takes it, which then enters "
     "without atomic instructions until another thread takes it; 0: never (for comparison only)",
     NULL},
    {"VCI_SHARING", &mf_params.vci_sharing, MF_VCI_SHARING_WORKER, 0, 2,
     "transport resources per channel: context (a UCX context each), worker (a worker each "
     "in one context), shared (VCI_WORKERS workers shared by all channels)",
     vci_sharing_choices},
    {"VCI_WORKERS", &mf_params.vci_workers, 2, 1, MF_VCI_MAX,
     "workers the channels share when VCI_SHARING=shared", NULL},
    {"VCI_STATS", &mf_params.vci_stats, 0, 0, 1,
     "print each channel's counters at finalize (every rank, to standard error)", NULL},
    {"PROGRESS_SWEEP_POLLS", &mf_params.progress_sweep, 64, 1, 1 << 20,
     "unsuccessful polls of a request's own channel before all other channels are progressed "
     "(rounded up to a power of two)",
     NULL},
    {"ASYNC_PROGRESS", &mf_params.async_progress, 0, 0, 1,
     "a helper thread per process that progresses communication while the program computes "
     "(on), sleeping on the transport's events whenever nothing needs progress and leaving "
     "channels alone while the program's own threads use them; off: only MPI calls progress",
     async_progress_choices},
    {"PRINT_PARAMS", &mf_params.print_params, 0, 0, 1,
     "print every tunable that differs from its default at init (rank 0)", NULL},
    {"COLL_BARRIER", &mf_params.coll_barrier, 0, 0, 1, "barrier algorithm (auto: selection table)",
     coll_barrier_choices},
    {"COLL_BCAST", &mf_params.coll_bcast, 0, 0, 2,
     "broadcast algorithm (auto: selection table; scatter_allgather: binomial scatter, ring "
     "allgather)",
     coll_bcast_choices},
    {"COLL_REDUCE", &mf_params.coll_reduce, 0, 0, 2,
     "reduce algorithm (auto: selection table; rabenseifner: reduce-scatter then gather, "
     "commutative operations only)",
     coll_reduce_choices},
    {"COLL_ALLREDUCE", &mf_params.coll_allreduce, 0, 0, 3,
     "allreduce algorithm (auto: selection table; non-commutative operations always take "
     "reduce_bcast)",
     coll_allreduce_choices},
    {"COLL_GATHER", &mf_params.coll_gather, 0, 0, 2,
     "gather algorithm (auto: selection table; binomial applies to MPI_Gather, not Gatherv)",
     coll_gather_choices},
    {"COLL_SCATTER", &mf_params.coll_scatter, 0, 0, 2,
     "scatter algorithm (auto: selection table; binomial applies to MPI_Scatter, not Scatterv)",
     coll_gather_choices},
    {"COLL_ALLGATHER", &mf_params.coll_allgather, 0, 0, 3,
     "allgather(v) algorithm (auto: selection table)", coll_allgather_choices},
    {"COLL_ALLTOALL", &mf_params.coll_alltoall, 0, 0, 2,
     "all-to-all algorithm (auto: selection table; bruck applies to MPI_Alltoall only)",
     coll_alltoall_choices},
    {"COLL_REDUCE_SCATTER", &mf_params.coll_reduce_scatter, 0, 0, 3,
     "reduce-scatter(_block) algorithm (auto: selection table; non-commutative operations "
     "always take reduce_scatterv)",
     coll_reduce_scatter_choices},
    {"COLL_SCAN", &mf_params.coll_scan, 0, 0, 2,
     "scan and exscan algorithm (auto: selection table)", coll_scan_choices},
    {"COLL_TABLE", NULL, 0, 0, 0,
     "collective selection table file loaded at init instead of the built-in rules "
     "(docs/design/coll.md; written by manifold_tune)",
     NULL},
    {"CONNECT_TIMEOUT", &mf_params.connect_timeout, 180, 0, 86400,
     "seconds MPI_Comm_connect waits for the port's process to accept before failing with "
     "MPI_ERR_PORT (0: for ever)",
     NULL},
    {"COLL_CHECK", &mf_params.coll_check, 0, 0, 1,
     "1: before each collective, verify across the processes that they called the same one "
     "with matching root, operation and type signatures (costs an exchange per call)",
     NULL},
    {"COLL_SHM", &mf_params.coll_shm, 1, 0, 1,
     "1: barrier, bcast, reduce and allreduce go through shared memory among the ranks of a "
     "node and point-to-point among one leader per node; 0: point-to-point only",
     NULL},
    {"COLL_SHM_MEDIUM", &mf_params.coll_shm_medium, 0, 0, 2,
     "gather, scatter and allgather blocks up to 256 KiB on one node through shared memory "
     "(auto: only with a core for every rank of the node, and two ranks take point-to-point "
     "from 8-16 KiB instead; off; on: shared memory for two ranks too)",
     coll_shm_medium_choices},
    {"COLL_SHM_CROWDED", &mf_params.coll_shm_crowded, 0, 0, 2,
     "whether a node runs more ranks than they have cores (auto: from their affinity masks; "
     "off; on): then shared-memory collectives yield the core at once when they wait, and "
     "calls up to COLL_SHM_CROWD_BYTES go through the small-call entries in pieces",
     coll_shm_crowded_choices},
    {"COLL_PAIR_WHOLE", &mf_params.coll_pair_whole, 0, 0, 2,
     "two ranks on one node, each with a core, send the blocks of their point-to-point "
     "collectives as one message (a single copy) instead of pieces (auto: when a probe finds "
     "their cores far apart, repeated every 4096 calls; off: pieces; on: one message)",
     coll_pair_whole_choices},
    {"COLL_PAIR_FAR_NS", &mf_params.coll_pair_far_ns, 200, 0, INT_MAX,
     "two ranks on one node, each with a core, count as far apart when the fastest round trip "
     "of a cache line between them takes longer than this many nanoseconds (timed every 4096 "
     "calls; local rank 0's timing decides for both). Far apart, their collectives send blocks "
     "of 32 KiB and more as one message (see COLL_PAIR_WHOLE) and take point-to-point from "
     "4 KiB",
     NULL},
    {"COLL_SHM_CROWD_BYTES", &mf_params.coll_shm_crowd_bytes, 16384, 0, INT_MAX,
     "on a crowded node (see COLL_SHM_CROWDED), bcast (ring off), gather, scan, allgather and "
     "reduce_scatter up to this many bytes (per rank; the whole vector for reduce_scatter) go "
     "through the small-call entries in pieces, which let the writers "
     "run calls ahead of ranks waiting for a core; 0: never",
     NULL},
    {"COLL_SHM_CROWD_RING", &mf_params.coll_shm_crowd_ring, 1, 0, 1,
     "on a crowded node, bcast above one entry and reduce above COLL_SHM_CROWD_REDUCE_BYTES go "
     "through rings of 32 KiB chunks in the data area, so the writers run calls ahead (1), or "
     "through its two halves and its shared chunks (0); scatter blocks of 512 B-2 KiB go "
     "through a ring of 1 KiB units there (1) or the pieces or point-to-point (0)",
     NULL},
    {"COLL_SHM_CROWD_RS_REDUCE", &mf_params.coll_shm_crowd_rs_reduce, 1, 0, 1,
     "on a crowded node, reduce_scatter above the pieces with blocks that would take the "
     "reduce ring goes through one pass of that ring, every rank combining its own block from "
     "the others' chunks (1), or point-to-point (0)",
     NULL},
    {"COLL_SHM_CROWD_REDUCE_BYTES", &mf_params.coll_shm_crowd_reduce_bytes, 4096, 0, INT_MAX,
     "on a crowded node, reduce up to this many bytes goes through the small-call entries in "
     "pieces (the non-roots run ahead, only the root waits); above, through a ring of 32 KiB "
     "chunks in each rank's part of the data area (COLL_SHM_CROWD_RING=1) or the data area's "
     "chunks, where every rank waits for every other; 0: never",
     NULL},
    {"COLL_SHM_CROWD_ALLGATHER_BYTES", &mf_params.coll_shm_crowd_allgather_bytes, INT_MAX, 0,
     INT_MAX,
     "on a crowded node, allgather(v) of blocks above the pieces (COLL_SHM_CROWD_BYTES) and up "
     "to this many bytes goes through the data area in rounds of a slot (a k-th of half the "
     "area) per block, each rank writing its slot once and copying the others' out after one "
     "wait (the single copy waits twice); default: every size; 0: never",
     NULL},
    {"COLL_SHM_CROWD_ALLTOALL_BYTES", &mf_params.coll_shm_crowd_alltoall_bytes, 32768, 0, INT_MAX,
     "on a crowded node, alltoall of blocks above one small-call entry and up to this many "
     "bytes goes through the data area in rounds (one round and one wait per call while all "
     "of a rank's blocks fit its stride); 0: never",
     NULL},
    {"COLL_CMA_BCAST_BYTES", &mf_params.coll_cma_bcast_bytes, 32768, 0, INT_MAX,
     "bcast of at least this many bytes on one node with a core for every rank (see "
     "COLL_SHM_MEDIUM): the readers copy straight from the root's buffer (process_vm_readv) "
     "when the kernel allows it; 0: never, the data goes through the shared segment",
     NULL},
    {"COLL_CMA_ALLGATHER_BYTES", &mf_params.coll_cma_allgather_bytes, 32768, 0, INT_MAX,
     "allgather(v) with a (largest) block of at least this many bytes on one node: every rank "
     "copies the others' blocks straight from their buffers (process_vm_readv) when the "
     "kernel allows it; 0: never",
     NULL},
    {"COLL_CMA_BYTES", &mf_params.coll_cma_bytes, 0, 0, INT_MAX,
     "gather of at least this many bytes (per block; allreduce from "
     "16 KiB or this, whichever is lower) on one node copy straight from the other process's "
     "buffer (process_vm_readv) when the kernel allows it; 0 (default): never, the data goes "
     "through the shared segment",
     NULL},
    {"COLL_COPY_DOWN", &mf_params.coll_copy_down, 1, 0, 2,
     "1: the collectives copy with a vector loop of their own, from the end down, when the "
     "destination lies 1-63 bytes above the source modulo 4 KiB (glibc's rep movsb is slow "
     "there on AMD CPUs); 0: memcpy; 2: that loop without AVX2 (for tests)",
     NULL},
    {"PART_AGGR_BYTES", &mf_params.part_aggr_bytes, 8192, 0, 1 << 30,
     "partitioned sends: adjacent ready partitions smaller than this go as one message of at "
     "most this many bytes; 0: every partition is its own message",
     NULL},
    {"DT_STREAM_BYTES", &mf_params.dt_stream_bytes, 8192, 0, INT_MAX,
     "non-contiguous datatype messages of at least this many bytes are packed piece by piece "
     "by the transport instead of through a full-size temporary copy; 0: never",
     NULL},
    {"DT_STREAM_EAGER_MIN", &mf_params.dt_stream_eager_min, 5120, 0, INT_MAX,
     "non-contiguous messages from this many bytes up to DT_STREAM_EAGER_MAX are packed by "
     "the transport straight into its eager buffers (one copy less on each side) when their "
     "type is one run of 8-byte blocks; other types take a temporary in this range",
     NULL},
    {"DT_STREAM_EAGER_MAX", &mf_params.dt_stream_eager_max, 8192, 0, INT_MAX,
     "upper end of the DT_STREAM_EAGER_MIN range; keep it within the transport's eager size "
     "(larger streamed messages go rendezvous without zero copy); 0: no such range",
     NULL},
    {"DT_IOV_BYTES", &mf_params.dt_iov_bytes, 16384, 0, INT_MAX,
     "non-contiguous messages whose blocks are all at least this many bytes (and at most 64 "
     "of them) go to the transport as a scatter-gather list, with no pack or unpack copy; 0: "
     "never",
     NULL},
    {"DT_STACK_BYTES", &mf_params.dt_stack_bytes, 4096, 0, 4096,
     "blocking sends and receives of non-contiguous messages up to this many bytes pack into "
     "a buffer on the caller's stack, with no temporary and no request of their own; 0: never",
     NULL},
    {"DT_TEMP_CACHE", &mf_params.dt_temp_cache, 262144, 0, INT_MAX,
     "pack temporaries of non-contiguous messages up to this many bytes are kept by the thread "
     "that releases them for its next message instead of freed; 0: always malloc and free",
     NULL},
    {"PMI", NULL, 0, 1, 2,
     "process-manager wire protocol: 1 or 2 forces one; unset asks for 2 and falls back to 1",
     NULL},
    {"MPIEXEC_TIMEOUT", NULL, 0, 0, INT_MAX, "mpiexec: kill the job after this many seconds", NULL},
    {"LOG", NULL, 0, 0, 0, "logging: <level>[,<category>] with level error, warn, info, debug",
     NULL},
};

#define PARAM_COUNT (sizeof(param_table) / sizeof(param_table[0]))

static const param_def_t *param_find(const char *name, size_t len)
{
    for (size_t i = 0; i < PARAM_COUNT; i++) {
        if (strlen(param_table[i].name) == len && strncmp(param_table[i].name, name, len) == 0)
            return &param_table[i];
    }
    return NULL;
}

/* Where a tunable lives in `set`, a copy of mf_params being filled. */
static int *param_slot(mf_params_t *set, const param_def_t *def)
{
    return (int *)((char *)set + ((char *)def->value - (char *)&mf_params));
}

static mf_status_t param_parse_choice(const param_def_t *def, const char *text, int *dst)
{
    /* Collective algorithms (COLL_*) were numbers first: their index is accepted too. */
    int index_ok = strncmp(def->name, "COLL_", 5) == 0;
    for (int i = 0; def->choices[i] != NULL; i++) {
        /* the word or its index ("2" for the third word) */
        if (strcmp(def->choices[i], text) == 0 ||
            (index_ok && text[0] == '0' + i && text[1] == '\0')) {
            *dst = i;
            return MF_OK;
        }
    }
    char words[256] = "";
    for (int i = 0; def->choices[i] != NULL; i++) {
        strncat(words, i > 0 ? ", " : "", sizeof(words) - strlen(words) - 1);
        strncat(words, def->choices[i], sizeof(words) - strlen(words) - 1);
    }
    if (index_ok)
        strncat(words, " (or the index from 0)", sizeof(words) - strlen(words) - 1);
    mf_log(MF_LOG_ERROR, "params", "MANIFOLD_%s='%s' is invalid: expected one of %s", def->name,
           text, words);
    return MF_ERR_INVALID;
}

static mf_status_t param_parse(const param_def_t *def, const char *text, int *dst)
{
    if (def->choices != NULL)
        return param_parse_choice(def, text, dst);
    char *end;
    errno = 0;
    long v = strtol(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0' || v < def->min || v > def->max) {
        mf_log(MF_LOG_ERROR, "params",
               "MANIFOLD_%s='%s' is invalid: expected an integer in [%d, %d]", def->name, text,
               def->min, def->max);
        return MF_ERR_INVALID;
    }
    *dst = (int)v;
    return MF_OK;
}

/* MPI_T_init_thread and MPI_Init both load the tunables, possibly at once in two threads,
 * while a tool thread may read them as control variables: the environment is parsed into a
 * copy under a lock, and only the values that differ are stored into mf_params (relaxed
 * atomic stores, as MPI_T_cvar_write does), so no reader sees a default in passing and a
 * second load of the same environment stores nothing. */
_Static_assert(sizeof(mf_params_t) % sizeof(int) == 0, "mf_params_t holds ints only");
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

mf_status_t mf_params_load(void)
{
    mf_status_t status = MF_OK;
    mf_params_t fresh = {0};
    pthread_mutex_lock(&load_lock);
    for (size_t i = 0; i < PARAM_COUNT; i++) {
        if (param_table[i].value != NULL)
            *param_slot(&fresh, &param_table[i]) = param_table[i].default_value;
    }
    for (char **env = environ; *env != NULL; env++) {
        if (strncmp(*env, "MANIFOLD_", 9) != 0)
            continue;
        const char *name = *env + 9;
        const char *eq = strchr(name, '=');
        if (eq == NULL)
            continue;
        const param_def_t *def = param_find(name, (size_t)(eq - name));
        if (def == NULL) {
            mf_log(MF_LOG_WARN, "params", "MANIFOLD_%.*s is not a known variable (ignored)",
                   (int)(eq - name), name);
            continue;
        }
        if (def->value != NULL && param_parse(def, eq + 1, param_slot(&fresh, def)) != MF_OK)
            status = MF_ERR_INVALID;
    }
    int direct = fresh.dt_stack_bytes;
    if (fresh.dt_stream_bytes > 0 && direct >= fresh.dt_stream_bytes)
        direct = fresh.dt_stream_bytes - 1;
    if (fresh.dt_stream_eager_max > 0 && direct >= fresh.dt_stream_eager_min)
        direct = fresh.dt_stream_eager_min - 1;
    fresh.dt_stack_direct = direct > 0 ? direct : 0;
    int *to = (int *)&mf_params;
    const int *from = (const int *)&fresh;
    for (size_t i = 0; i < sizeof(mf_params_t) / sizeof(int); i++) {
        if (__atomic_load_n(&to[i], __ATOMIC_RELAXED) != from[i])
            __atomic_store_n(&to[i], from[i], __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&load_lock);
    return status;
}

void mf_params_print(FILE *out, int only_non_default)
{
    for (size_t i = 0; i < PARAM_COUNT; i++) {
        const param_def_t *def = &param_table[i];
        if (def->value == NULL) {
            if (!only_non_default)
                fprintf(out, "MANIFOLD_%-22s (read by other components)  %s\n", def->name,
                        def->description);
            continue;
        }
        if (only_non_default && *def->value == def->default_value)
            continue;
        if (def->choices != NULL)
            fprintf(out, "MANIFOLD_%-22s = %-8s (default %s)  %s\n", def->name,
                    def->choices[*def->value], def->choices[def->default_value], def->description);
        else
            fprintf(out, "MANIFOLD_%-22s = %-8d (default %d, range %d..%d)  %s\n", def->name,
                    *def->value, def->default_value, def->min, def->max, def->description);
    }
}

int mf_params_count(void)
{
    return (int)PARAM_COUNT;
}

int mf_params_describe(int index, mf_param_info_t *info)
{
    if (index < 0 || index >= (int)PARAM_COUNT)
        return 0;
    const param_def_t *def = &param_table[index];
    info->name = def->name;
    info->description = def->description;
    info->value = def->value;
    info->default_value = def->default_value;
    info->min = def->min;
    info->max = def->max;
    info->choices = def->choices;
    return 1;
}
