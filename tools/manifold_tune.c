/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * manifold_tune: measures every algorithm of every collective with a choice of algorithm on
 * the current process count and writes a selection table the library loads at init
 * (MANIFOLD_COLL_TABLE=<file>; format in docs/design/coll.md). It is an ordinary MPI program run
 * under mpiexec: it forces one algorithm at a time by writing the MANIFOLD_COLL_<NAME> control
 * variables through MPI_T (the same value on every rank), times each message size, and keeps
 * the fastest algorithm per size range. Rank 0 prints the measurements and writes the file.
 */
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    T_BCAST,
    T_REDUCE,
    T_ALLREDUCE,
    T_GATHER,
    T_SCATTER,
    T_ALLGATHER,
    T_ALLTOALL,
    T_REDUCE_SCATTER,
    T_SCAN,
    T_KINDS
};

/* The table's collective names; the cvar is MANIFOLD_COLL_<upper-case name>. */
static const char *const kind_names[T_KINDS] = {
    "bcast",     "reduce",   "allreduce",      "gather", "scatter",
    "allgather", "alltoall", "reduce_scatter", "scan",
};

#define MAX_ALGS   8
#define MAX_SIZES  32
#define MAX_TRIALS 15

typedef struct tune_opts {
    int quick;
    size_t max_bytes;
    int reps;
    int trials;
    const char *output;
} tune_opts_t;

typedef struct tune_buf {
    char *s, *r;
    int rank, nprocs;
} tune_buf_t;

static void usage(void)
{
    fprintf(stderr,
            "usage: mpiexec -n <procs> manifold_tune [--quick] [--max BYTES] [--reps N] "
            "[--trials N] [--output FILE]\n"
            "  --quick        fewer sizes and repetitions (a quick check, not a tuning run)\n"
            "  --max BYTES    largest message size (default 4194304, 1048576 with --quick)\n"
            "  --reps N       timed calls per trial (default 20, 3 with --quick)\n"
            "  --trials N     trials per point, median kept (default 5, 1 with --quick)\n"
            "  --output FILE  the table to write (default manifold_coll_table.txt)\n"
            "Load the table with MANIFOLD_COLL_TABLE=FILE.\n");
}

static int parse_opts(int argc, char **argv, tune_opts_t *o)
{
    o->quick = 0;
    o->max_bytes = 0;
    o->reps = 0;
    o->trials = 0;
    o->output = "manifold_coll_table.txt";
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) {
            o->quick = 1;
        } else if (strcmp(argv[i], "--max") == 0 && i + 1 < argc) {
            o->max_bytes = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            o->reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--trials") == 0 && i + 1 < argc) {
            o->trials = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--output") == 0 && i + 1 < argc) {
            o->output = argv[++i];
        } else {
            return 0;
        }
    }
    if (o->max_bytes == 0)
        o->max_bytes = o->quick ? (size_t)1 << 20 : (size_t)4 << 20;
    if (o->max_bytes < 8)
        o->max_bytes = 8;
    if (o->reps <= 0)
        o->reps = o->quick ? 3 : 20;
    if (o->trials <= 0)
        o->trials = o->quick ? 1 : 5;
    if (o->trials > MAX_TRIALS)
        o->trials = MAX_TRIALS;
    return 1;
}

/* One call of collective `kind` moving `n` bytes (the buffer of bcast/reduce/allreduce/scan,
 * one process's block otherwise); reductions sum int32. */
static int run_one(int kind, size_t n, tune_buf_t *b)
{
    int cnt = (int)(n / 4 > 0 ? n / 4 : 1), bytes = (int)n;
    switch (kind) {
    case T_BCAST: return MPI_Bcast(b->s, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    case T_REDUCE: return MPI_Reduce(b->s, b->r, cnt, MPI_INT32_T, MPI_SUM, 0, MPI_COMM_WORLD);
    case T_ALLREDUCE: return MPI_Allreduce(b->s, b->r, cnt, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    case T_GATHER:
        return MPI_Gather(b->s, bytes, MPI_BYTE, b->r, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    case T_SCATTER:
        return MPI_Scatter(b->s, bytes, MPI_BYTE, b->r, bytes, MPI_BYTE, 0, MPI_COMM_WORLD);
    case T_ALLGATHER:
        return MPI_Allgather(b->s, bytes, MPI_BYTE, b->r, bytes, MPI_BYTE, MPI_COMM_WORLD);
    case T_ALLTOALL:
        return MPI_Alltoall(b->s, bytes, MPI_BYTE, b->r, bytes, MPI_BYTE, MPI_COMM_WORLD);
    case T_REDUCE_SCATTER:
        return MPI_Reduce_scatter_block(b->s, b->r, cnt, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    case T_SCAN: return MPI_Scan(b->s, b->r, cnt, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD);
    default: return MPI_ERR_ARG;
    }
}

/* Seconds per call: the slowest rank's average over `reps` calls after one warm-up call. */
static double time_point(int kind, size_t n, int reps, tune_buf_t *b)
{
    if (run_one(kind, n, b) != MPI_SUCCESS)
        return -1.0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < reps; i++)
        run_one(kind, n, b);
    double t = (MPI_Wtime() - t0) / reps, tmax;
    MPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

static double median(double *v, int n)
{
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
            double x = v[j];
            v[j] = v[j - 1];
            v[j - 1] = x;
        }
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The control variable forcing `kind`'s algorithm and its algorithm names (item 0 is "auto"). */
typedef struct tune_cvar {
    MPI_T_cvar_handle handle;
    int nalgs;
    char names[MAX_ALGS][64];
} tune_cvar_t;

static int find_cvar(int kind, tune_cvar_t *cv)
{
    char want[96];
    snprintf(want, sizeof(want), "MANIFOLD_COLL_%s", kind_names[kind]);
    for (char *p = want; *p; p++)
        if (*p >= 'a' && *p <= 'z')
            *p = (char)(*p - 'a' + 'A');
    int index, count, num;
    MPI_T_enum e;
    char name[256], ename[64];
    int name_len = sizeof(name), ename_len, verbosity, bind, scope;
    MPI_Datatype dt;
    if (MPI_T_cvar_get_index(want, &index) != MPI_SUCCESS ||
        MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &dt, &e, NULL, NULL, &bind,
                            &scope) != MPI_SUCCESS ||
        e == MPI_T_ENUM_NULL || MPI_T_enum_get_info(e, &num, NULL, NULL) != MPI_SUCCESS ||
        MPI_T_cvar_handle_alloc(index, NULL, &cv->handle, &count) != MPI_SUCCESS)
        return 0;
    cv->nalgs = num < MAX_ALGS ? num : MAX_ALGS;
    for (int i = 0; i < cv->nalgs; i++) {
        int value;
        ename_len = sizeof(ename);
        if (MPI_T_enum_get_item(e, i, &value, ename, &ename_len) != MPI_SUCCESS)
            return 0;
        snprintf(cv->names[i], sizeof(cv->names[i]), "%s", ename);
    }
    return 1;
}

/* Sizes 8 B .. max: every 8x (factor 64 with --quick), always ending at max. */
static int make_sizes(const tune_opts_t *o, size_t *sizes)
{
    int n = 0;
    size_t step = o->quick ? 64 : 8;
    for (size_t s = 8; s < o->max_bytes && n < MAX_SIZES - 1; s *= step)
        sizes[n++] = s;
    sizes[n++] = o->max_bytes;
    return n;
}

/* Runs of equal winners become rules; a boundary sits halfway (in log scale) between the last
 * size of one run and the first of the next. */
static void write_rules(FILE *f, int kind, int nprocs, const tune_cvar_t *cv, const size_t *sizes,
                        const int *best, int nsizes)
{
    for (int i = 0; i < nsizes; i++) {
        if (i + 1 < nsizes && best[i + 1] == best[i])
            continue;
        if (i + 1 < nsizes) {
            size_t bound = (size_t)sqrt((double)sizes[i] * (double)sizes[i + 1]);
            fprintf(f, "%-15s %4d %10zu %s\n", kind_names[kind], nprocs, bound, cv->names[best[i]]);
        } else {
            fprintf(f, "%-15s %4d %10s %s\n", kind_names[kind], nprocs, "*", cv->names[best[i]]);
        }
    }
}

int main(int argc, char **argv)
{
    tune_opts_t o;
    int provided, rank, nprocs, rc = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (!parse_opts(argc, argv, &o)) {
        if (rank == 0)
            usage();
        MPI_Finalize();
        return 2;
    }
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    size_t sizes[MAX_SIZES];
    int nsizes = make_sizes(&o, sizes);
    /* gather/allgather/alltoall move nprocs blocks of the largest size */
    size_t buflen = o.max_bytes * (size_t)nprocs;
    tune_buf_t b = {malloc(buflen), malloc(buflen), rank, nprocs};
    FILE *f = NULL;
    if (b.s == NULL || b.r == NULL) {
        fprintf(stderr, "manifold_tune: cannot allocate %zu bytes\n", 2 * buflen);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    memset(b.s, 1, buflen);
    memset(b.r, 0, buflen);
    if (rank == 0) {
        f = fopen(o.output, "w");
        if (f == NULL) {
            perror(o.output);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fprintf(f,
                "# Manifold collective selection table written by manifold_tune on %d "
                "processes.\n# <collective> <max processes> <max bytes> <algorithm>; the first "
                "matching line wins.\n",
                nprocs);
        printf("# manifold_tune: %d processes, median of %d trials of %d timed calls, "
               "microseconds per call\n",
               nprocs, o.trials, o.reps);
    }
    for (int kind = 0; kind < T_KINDS; kind++) {
        tune_cvar_t cv;
        if (!find_cvar(kind, &cv)) {
            if (rank == 0)
                fprintf(stderr, "manifold_tune: no control variable for %s (not Manifold?)\n",
                        kind_names[kind]);
            rc = 1;
            break;
        }
        /* Trials interleave the algorithms so that a busy machine hurts them alike; each
         * point is the median of its trials. */
        double t[MAX_ALGS][MAX_SIZES], trial[MAX_ALGS][MAX_TRIALS];
        for (int i = 0; i < nsizes; i++) {
            int reps = sizes[i] >= ((size_t)1 << 20) ? (o.reps + 3) / 4 : o.reps;
            for (int k = 0; k < o.trials; k++) {
                for (int alg = 1; alg < cv.nalgs; alg++) {
                    MPI_T_cvar_write(cv.handle, &alg);
                    trial[alg][k] = time_point(kind, sizes[i], reps, &b);
                }
            }
            for (int alg = 1; alg < cv.nalgs; alg++)
                t[alg][i] = median(trial[alg], o.trials);
        }
        int zero = 0;
        MPI_T_cvar_write(cv.handle, &zero);
        MPI_T_cvar_handle_free(&cv.handle);
        if (rank != 0)
            continue;
        int best[MAX_SIZES];
        printf("%-15s %10s", kind_names[kind], "bytes");
        for (int alg = 1; alg < cv.nalgs; alg++)
            printf(" %18s", cv.names[alg]);
        printf("\n");
        for (int i = 0; i < nsizes; i++) {
            best[i] = 1;
            printf("%-15s %10zu", "", sizes[i]);
            for (int alg = 1; alg < cv.nalgs; alg++) {
                printf(" %18.2f", t[alg][i] * 1e6);
                if (t[alg][i] >= 0 && (t[best[i]][i] < 0 || t[alg][i] < t[best[i]][i]))
                    best[i] = alg;
            }
            printf("  -> %s\n", cv.names[best[i]]);
        }
        write_rules(f, kind, nprocs, &cv, sizes, best, nsizes);
    }
    if (f != NULL) {
        if (fclose(f) != 0)
            rc = 1;
        if (rc == 0)
            printf("# table written to %s; load it with MANIFOLD_COLL_TABLE=%s\n", o.output,
                   o.output);
    }
    free(b.s);
    free(b.r);
    MPI_T_finalize();
    MPI_Finalize();
    return rc;
}
