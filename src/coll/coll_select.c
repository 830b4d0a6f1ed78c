/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective protocols: choosing an algorithm. Each collective has an ordered list of rules
 * (at most this many processes, at most this many bytes -> algorithm); the first matching rule
 * wins. The built-in rules below come from manifold_tune runs on a small shared-memory machine;
 * MANIFOLD_COLL_TABLE names a file whose rules replace them (per collective), and
 * MANIFOLD_COLL_<NAME> forces one algorithm. The algorithm names are the choices of those
 * tunables (src/util/util_params.c), so MPI_T and manifold_info list them. File format:
 * docs/design/coll.md.
 */
#include "coll.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct coll_rule {
    int max_procs;    /* INT_MAX: any */
    size_t max_bytes; /* SIZE_MAX: any */
    int alg;
} coll_rule_t;

#define ANY_PROCS INT_MAX
#define ANY_BYTES SIZE_MAX

static const char *const kind_names[MF_COLL_KINDS] = {
    "barrier", "bcast",     "reduce",   "allreduce",      "gather",
    "scatter", "allgather", "alltoall", "reduce_scatter", "scan",
};

/* The tunable forcing each collective's algorithm (its choices are the algorithm names). */
static const char *const kind_params[MF_COLL_KINDS] = {
    "COLL_BARRIER", "COLL_BCAST",     "COLL_REDUCE",   "COLL_ALLREDUCE",      "COLL_GATHER",
    "COLL_SCATTER", "COLL_ALLGATHER", "COLL_ALLTOALL", "COLL_REDUCE_SCATTER", "COLL_SCAN",
};

/* Built-in rules; each list ends with an (ANY_PROCS, ANY_BYTES) rule. The 2-process rules
 * follow manifold_tune on a 2-core shared-memory machine (docs/design/coll.md, "Measurements");
 * the others follow the usual latency/bandwidth reasoning until a larger machine is tuned. */
static const coll_rule_t rules_barrier[] = {{ANY_PROCS, ANY_BYTES, MF_COLL_BARRIER_DISSEMINATION}};
static const coll_rule_t rules_bcast[] = {
    {2, ANY_BYTES, MF_COLL_BCAST_BINOMIAL},
    {ANY_PROCS, 256 * 1024 - 1, MF_COLL_BCAST_BINOMIAL},
    {ANY_PROCS, ANY_BYTES, MF_COLL_BCAST_SCATTER_ALLGATHER},
};
static const coll_rule_t rules_reduce[] = {
    {2, ANY_BYTES, MF_COLL_REDUCE_BINOMIAL},
    {ANY_PROCS, 64 * 1024 - 1, MF_COLL_REDUCE_BINOMIAL},
    {ANY_PROCS, ANY_BYTES, MF_COLL_REDUCE_RABENSEIFNER},
};
static const coll_rule_t rules_allreduce[] = {
    {ANY_PROCS, 64 * 1024 - 1, MF_COLL_ALLREDUCE_RECURSIVE_DOUBLING},
    {ANY_PROCS, ANY_BYTES, MF_COLL_ALLREDUCE_RABENSEIFNER},
};
static const coll_rule_t rules_gather[] = {
    {2, ANY_BYTES, MF_COLL_GATHER_LINEAR},
    {ANY_PROCS, 4096, MF_COLL_GATHER_BINOMIAL},
    {ANY_PROCS, ANY_BYTES, MF_COLL_GATHER_LINEAR},
};
/* Up to 4 ranks the linear scatter sends each block once (binomial: 2-4 KiB blocks 1.2-1.5 us
 * against 0.7-0.9 linear, 4 ranks on 2 cores); Scan on 3-4 ranks takes the pipelined chain
 * from 8 KiB, which sends every byte once (recursive doubling: 2.5x slower from 32 KiB). */
static const coll_rule_t rules_scatter[] = {
    {4, ANY_BYTES, MF_COLL_SCATTER_LINEAR},
    {ANY_PROCS, 4096, MF_COLL_SCATTER_BINOMIAL},
    {ANY_PROCS, ANY_BYTES, MF_COLL_SCATTER_LINEAR},
};
static const coll_rule_t rules_allgather[] = {
    {ANY_PROCS, 32 * 1024, MF_COLL_ALLGATHER_RECURSIVE_DOUBLING},
    {ANY_PROCS, ANY_BYTES, MF_COLL_ALLGATHER_RING},
};
static const coll_rule_t rules_alltoall[] = {
    {2, ANY_BYTES, MF_COLL_ALLTOALL_PAIRWISE},
    {ANY_PROCS, 1024, MF_COLL_ALLTOALL_BRUCK},
    {ANY_PROCS, ANY_BYTES, MF_COLL_ALLTOALL_PAIRWISE},
};
static const coll_rule_t rules_reduce_scatter[] = {
    {2, ANY_BYTES, MF_COLL_REDUCE_SCATTER_PAIRWISE},
    {ANY_PROCS, 256 * 1024 - 1, MF_COLL_REDUCE_SCATTER_RECURSIVE_HALVING},
    {ANY_PROCS, ANY_BYTES, MF_COLL_REDUCE_SCATTER_PAIRWISE},
};
static const coll_rule_t rules_scan[] = {
    {2, ANY_BYTES, MF_COLL_SCAN_CHAIN},
    {4, 8 * 1024 - 1, MF_COLL_SCAN_RECURSIVE_DOUBLING},
    {4, ANY_BYTES, MF_COLL_SCAN_CHAIN},
    {ANY_PROCS, ANY_BYTES, MF_COLL_SCAN_RECURSIVE_DOUBLING},
};

#define NRULES(a) (int)(sizeof(a) / sizeof((a)[0]))

typedef struct coll_rules {
    const coll_rule_t *rules;
    int n;
} coll_rules_t;

static coll_rules_t builtin[MF_COLL_KINDS] = {
    {rules_barrier, NRULES(rules_barrier)},
    {rules_bcast, NRULES(rules_bcast)},
    {rules_reduce, NRULES(rules_reduce)},
    {rules_allreduce, NRULES(rules_allreduce)},
    {rules_gather, NRULES(rules_gather)},
    {rules_scatter, NRULES(rules_scatter)},
    {rules_allgather, NRULES(rules_allgather)},
    {rules_alltoall, NRULES(rules_alltoall)},
    {rules_reduce_scatter, NRULES(rules_reduce_scatter)},
    {rules_scan, NRULES(rules_scan)},
};

/* Rules read from MANIFOLD_COLL_TABLE, grouped by collective in file order. */
#define FILE_RULES_MAX 512
static coll_rule_t file_rules[FILE_RULES_MAX];
static int file_lines[FILE_RULES_MAX];
static coll_rules_t from_file[MF_COLL_KINDS];
static char table_path[1024]; /* for the debug log */
static const char *const *alg_names[MF_COLL_KINDS];
static int *forced[MF_COLL_KINDS];
static pthread_once_t select_once = PTHREAD_ONCE_INIT;

const char *mf_coll_kind_name(mf_coll_kind_t kind)
{
    return kind < MF_COLL_KINDS ? kind_names[kind] : NULL;
}

static void find_params(void)
{
    mf_param_info_t p;
    for (int i = 0; mf_params_describe(i, &p); i++) {
        for (int k = 0; k < MF_COLL_KINDS; k++) {
            if (strcmp(p.name, kind_params[k]) == 0) {
                alg_names[k] = p.choices;
                forced[k] = p.value;
            }
        }
    }
}

int mf_coll_alg_count(mf_coll_kind_t kind)
{
    int n = 0;
    if (kind < MF_COLL_KINDS && alg_names[kind] != NULL)
        while (alg_names[kind][n + 1] != NULL)
            n++;
    return n;
}

const char *mf_coll_alg_name(mf_coll_kind_t kind, int alg)
{
    if (alg < 0 || alg > mf_coll_alg_count(kind))
        return NULL;
    return alg_names[kind][alg];
}

static int parse_limit(const char *word, size_t max, size_t *out_p)
{
    if (strcmp(word, "*") == 0) {
        *out_p = max;
        return 1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(word, &end, 10);
    if (errno != 0 || end == word || word[0] == '-' || v > max)
        return 0;
    if (*end == 'k' || *end == 'K')
        v <<= 10, end++;
    else if (*end == 'm' || *end == 'M')
        v <<= 20, end++;
    if (*end != '\0' || v > max)
        return 0;
    *out_p = (size_t)v;
    return 1;
}

/* One line "<collective> <max processes> <max bytes> <algorithm>"; 0 and *why set if bad. */
static int parse_line(char *line, int *kind_p, coll_rule_t *rule_p, const char **why)
{
    char *save = NULL, *w[5];
    int n = 0;
    for (char *t = strtok_r(line, " \t\r\n", &save); t != NULL && n < 5;
         t = strtok_r(NULL, " \t\r\n", &save))
        w[n++] = t;
    if (n != 4) {
        *why = "expected '<collective> <max processes> <max bytes> <algorithm>'";
        return 0;
    }
    int kind = -1;
    for (int k = 0; k < MF_COLL_KINDS; k++)
        if (strcmp(w[0], kind_names[k]) == 0)
            kind = k;
    if (kind < 0) {
        *why = "unknown collective";
        return 0;
    }
    size_t procs, bytes;
    if (!parse_limit(w[1], INT_MAX, &procs) || procs < 1) {
        *why = "bad process count (a positive integer or *)";
        return 0;
    }
    if (!parse_limit(w[2], SIZE_MAX, &bytes)) {
        *why = "bad byte count (an integer with optional k or m suffix, or *)";
        return 0;
    }
    int alg = 0;
    for (int a = 1; a <= mf_coll_alg_count(kind); a++)
        if (strcmp(w[3], alg_names[kind][a]) == 0)
            alg = a;
    if (alg == 0) {
        *why = "unknown algorithm for this collective (manifold_info --cvars lists them)";
        return 0;
    }
    *kind_p = kind;
    rule_p->max_procs = (int)procs;
    rule_p->max_bytes = bytes;
    rule_p->alg = alg;
    return 1;
}

/* Read the whole file or nothing: a bad line leaves the built-in rules in force. */
static void load_table(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        mf_log(MF_LOG_WARN, "coll", "MANIFOLD_COLL_TABLE=%s: cannot open (%s); built-in rules used",
               path, strerror(errno));
        return;
    }
    static int kinds[FILE_RULES_MAX], lines[FILE_RULES_MAX];
    static coll_rule_t rules[FILE_RULES_MAX];
    char line[512];
    int n = 0, lineno = 0, ok = 1;
    while (ok && fgets(line, sizeof(line), f) != NULL) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash != NULL)
            *hash = '\0';
        if (strspn(line, " \t\r\n") == strlen(line))
            continue;
        const char *why = NULL;
        if (n == FILE_RULES_MAX) {
            why = "too many rules";
            ok = 0;
        } else if (!parse_line(line, &kinds[n], &rules[n], &why)) {
            ok = 0;
        }
        if (!ok) {
            mf_log(MF_LOG_WARN, "coll", "%s:%d: %s; the file is ignored, built-in rules used", path,
                   lineno, why);
            break;
        }
        lines[n] = lineno;
        n++;
    }
    fclose(f);
    if (!ok)
        return;
    /* Group by collective, keeping file order within each. */
    int used = 0;
    for (int k = 0; k < MF_COLL_KINDS; k++) {
        int first = used;
        for (int i = 0; i < n; i++) {
            if (kinds[i] == k) {
                file_rules[used] = rules[i];
                file_lines[used] = lines[i];
                used++;
            }
        }
        from_file[k].rules = file_rules + first;
        from_file[k].n = used - first;
    }
    snprintf(table_path, sizeof(table_path), "%s", path);
    mf_log(MF_LOG_INFO, "coll", "selection table %s: %d rules loaded", path, n);
}

static void select_init(void)
{
    find_params();
    const char *path = getenv("MANIFOLD_COLL_TABLE");
    if (path != NULL && path[0] != '\0')
        load_table(path);
}

int mf_coll_select(mf_coll_kind_t kind, int nprocs, size_t bytes)
{
    pthread_once(&select_once, select_init);
    MF_ASSERT(kind < MF_COLL_KINDS);
    /* One relaxed atomic load: MPI_T_cvar_write may change it meanwhile (MF_PARAM_LIVE). */
    int chosen =
        forced[kind] != NULL ? __atomic_load_n(forced[kind], __ATOMIC_RELAXED) : MF_COLL_AUTO;
    if (chosen != MF_COLL_AUTO) {
        mf_log(MF_LOG_DEBUG, "coll", "%s on %d processes, %zu bytes: %s (forced)", kind_names[kind],
               nprocs, bytes, mf_coll_alg_name(kind, chosen));
        return chosen;
    }
    /* A file's rules need not cover every case: the built-in ones catch the rest. */
    for (int pass = from_file[kind].n > 0 ? 0 : 1; pass < 2; pass++) {
        const coll_rules_t *set = pass == 0 ? &from_file[kind] : &builtin[kind];
        for (int i = 0; i < set->n; i++) {
            const coll_rule_t *r = &set->rules[i];
            if (nprocs > r->max_procs || bytes > r->max_bytes)
                continue;
            if (pass == 0)
                mf_log(MF_LOG_DEBUG, "coll", "%s on %d processes, %zu bytes: %s (%s:%d)",
                       kind_names[kind], nprocs, bytes, mf_coll_alg_name(kind, r->alg), table_path,
                       file_lines[r - file_rules]);
            else
                mf_log(MF_LOG_DEBUG, "coll", "%s on %d processes, %zu bytes: %s (built-in)",
                       kind_names[kind], nprocs, bytes, mf_coll_alg_name(kind, r->alg));
            return r->alg;
        }
    }
    return 1;
}
