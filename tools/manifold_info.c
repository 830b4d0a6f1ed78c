/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * manifold_info: what the MPI library says about itself through the standard interfaces
 * only (MPI and MPI_T), so it runs on any standard-ABI MPI. Prints the library version, every
 * control variable, and (after MPI_Init, as a singleton or under mpiexec) every performance
 * variable; --vci first makes some traffic on duplicated communicators and prints the per-VCI
 * counters as a table with the communicator-to-VCI mapping. Only rank 0 prints. Every line
 * starts with a fixed keyword (version, cvar, pvar, vci, comm) so it can be grepped.
 */
#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NCOMMS    3
#define MAX_ELEMS 64

static void usage(FILE *out)
{
    fprintf(out,
            "usage: manifold_info [--cvars] [--vci] [--help]\n"
            "  (no option)  library version, control variables and performance variables\n"
            "  --cvars      control variables only (MPI is not initialised)\n"
            "  --vci        also make traffic on %d duplicated communicators, then print\n"
            "               the per-VCI counters and each communicator's VCIs\n"
            "Run it alone or under mpiexec; rank 0 prints.\n",
            NCOMMS);
}

static void print_version(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    printf("version: %s\n", version);
}

static void enum_item(MPI_T_enum e, int value, char *out, int size)
{
    int num, len;
    snprintf(out, (size_t)size, "%d", value);
    if (e == MPI_T_ENUM_NULL || MPI_T_enum_get_info(e, &num, NULL, NULL) != MPI_SUCCESS)
        return;
    for (int i = 0; i < num; i++) {
        int v;
        char name[64];
        len = (int)sizeof(name);
        if (MPI_T_enum_get_item(e, i, &v, name, &len) == MPI_SUCCESS && v == value)
            snprintf(out, (size_t)size, "%s", name);
    }
}

static void print_cvars(void)
{
    int num;
    MPI_T_cvar_get_num(&num);
    printf("cvar count: %d\n", num);
    for (int i = 0; i < num; i++) {
        char name[256], desc[1024], value[64] = "?";
        int name_len = sizeof(name), desc_len = sizeof(desc), verbosity, bind, scope, count;
        MPI_Datatype dt;
        MPI_T_enum e;
        if (MPI_T_cvar_get_info(i, name, &name_len, &verbosity, &dt, &e, desc, &desc_len, &bind,
                                &scope) != MPI_SUCCESS)
            continue;
        MPI_T_cvar_handle h;
        if (dt == MPI_INT && bind == MPI_T_BIND_NO_OBJECT &&
            MPI_T_cvar_handle_alloc(i, NULL, &h, &count) == MPI_SUCCESS) {
            int v;
            if (count == 1 && MPI_T_cvar_read(h, &v) == MPI_SUCCESS)
                enum_item(e, v, value, sizeof(value));
            MPI_T_cvar_handle_free(&h);
        }
        /* The library puts the default at the end of the description. */
        char deflt[128] = "?";
        char *d = strstr(desc, " [default: ");
        if (d != NULL) {
            snprintf(deflt, sizeof(deflt), "%s", d + 11);
            char *end = strchr(deflt, ',');
            if (end == NULL)
                end = strchr(deflt, ']');
            if (end != NULL)
                *end = '\0';
            *d = '\0';
        }
        printf("cvar %-32s = %-8s default %-8s %s  %s\n", name, value, deflt,
               scope == MPI_T_SCOPE_READONLY ? "readonly" : "writable", desc);
    }
}

static const char *class_name(int c)
{
    switch (c) {
    case MPI_T_PVAR_CLASS_STATE: return "state";
    case MPI_T_PVAR_CLASS_LEVEL: return "level";
    case MPI_T_PVAR_CLASS_COUNTER: return "counter";
    case MPI_T_PVAR_CLASS_GENERIC: return "generic";
    case MPI_T_PVAR_CLASS_SIZE: return "size";
    case MPI_T_PVAR_CLASS_PERCENTAGE: return "percentage";
    case MPI_T_PVAR_CLASS_HIGHWATERMARK: return "high-water mark";
    case MPI_T_PVAR_CLASS_LOWWATERMARK: return "low-water mark";
    case MPI_T_PVAR_CLASS_AGGREGATE: return "aggregate";
    case MPI_T_PVAR_CLASS_TIMER: return "timer";
    default: return "other";
    }
}

/* Read one unbound pvar in session s into vals (as unsigned long long); returns count. */
static int read_pvar(MPI_T_pvar_session s, int index, void *obj, unsigned long long *vals)
{
    char name[128];
    int name_len = sizeof(name), verbosity, cls, bind, ro, cont, atomic, count;
    MPI_Datatype dt;
    MPI_T_enum e;
    if (MPI_T_pvar_get_info(index, name, &name_len, &verbosity, &cls, &dt, &e, NULL, NULL, &bind,
                            &ro, &cont, &atomic) != MPI_SUCCESS)
        return 0;
    MPI_T_pvar_handle h;
    if (MPI_T_pvar_handle_alloc(s, index, obj, &h, &count) != MPI_SUCCESS || count > MAX_ELEMS)
        return 0;
    int ok = 0;
    if (dt == MPI_INT) {
        int iv[MAX_ELEMS];
        ok = MPI_T_pvar_read(s, h, iv) == MPI_SUCCESS;
        for (int k = 0; ok && k < count; k++)
            vals[k] = (unsigned long long)iv[k];
    } else if (dt == MPI_UNSIGNED_LONG_LONG) {
        ok = MPI_T_pvar_read(s, h, vals) == MPI_SUCCESS;
    }
    MPI_T_pvar_handle_free(s, &h);
    return ok ? count : 0;
}

/* Counters in a fresh session read zero, so they are read since-allocation in `base`
 * and with the total taken from a session allocated before the traffic. */
static void print_pvars(MPI_T_pvar_session s)
{
    int num;
    MPI_T_pvar_get_num(&num);
    printf("pvar count: %d\n", num);
    for (int i = 0; i < num; i++) {
        char name[128], desc[512];
        int name_len = sizeof(name), desc_len = sizeof(desc), verbosity, cls, bind, ro, cont,
            atomic;
        MPI_Datatype dt;
        MPI_T_enum e;
        if (MPI_T_pvar_get_info(i, name, &name_len, &verbosity, &cls, &dt, &e, desc, &desc_len,
                                &bind, &ro, &cont, &atomic) != MPI_SUCCESS)
            continue;
        printf("pvar %-20s class %-8s %s  %s\n", name, class_name(cls),
               bind == MPI_T_BIND_MPI_COMM ? "per-communicator" : "global", desc);
        if (bind != MPI_T_BIND_NO_OBJECT)
            continue;
        unsigned long long vals[MAX_ELEMS];
        int count = read_pvar(s, i, NULL, vals);
        /* counters in a session of their own read what happened since allocation: zero */
        if (cls == MPI_T_PVAR_CLASS_COUNTER)
            continue;
        printf("pvar %-20s =", name);
        for (int k = 0; k < count; k++)
            printf(" %llu", vals[k]);
        printf("\n");
    }
}

static const char *const counter_names[] = {"vci_sends",         "vci_recvs",
                                            "vci_lock_acquired", "vci_lock_contended",
                                            "vci_global_sweeps", "vci_request_misses"};
#define NCOUNTERS 6

static int vci_report(int rank, int size)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_session_create(&s);
    /* Counters read the difference since their handle was allocated: allocate before. */
    MPI_T_pvar_handle hs[NCOUNTERS];
    int count = 0, errs = 0;
    for (int c = 0; c < NCOUNTERS; c++) {
        int index;
        if (MPI_T_pvar_get_index(counter_names[c], MPI_T_PVAR_CLASS_COUNTER, &index) !=
                MPI_SUCCESS ||
            MPI_T_pvar_handle_alloc(s, index, NULL, &hs[c], &count) != MPI_SUCCESS) {
            if (rank == 0)
                printf("vci: no performance variable %s\n", counter_names[c]);
            return 1;
        }
    }
    MPI_Comm comms[NCOMMS];
    for (int c = 0; c < NCOMMS; c++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]);
        int buf[64] = {0}, in[64];
        for (int k = 0; k < 10; k++)
            MPI_Sendrecv(buf, 64, MPI_INT, (rank + 1) % size, k, in, 64, MPI_INT,
                         (rank + size - 1) % size, k, comms[c], MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long vals[NCOUNTERS][MAX_ELEMS];
    for (int c = 0; c < NCOUNTERS; c++)
        MPI_T_pvar_read(s, hs[c], vals[c]);
    int active_index;
    unsigned long long active[MAX_ELEMS];
    int nactive = 0;
    if (MPI_T_pvar_get_index("vci_active", MPI_T_PVAR_CLASS_STATE, &active_index) == MPI_SUCCESS)
        nactive = read_pvar(s, active_index, NULL, active);
    if (rank == 0) {
        printf("vci %4s %6s %10s %10s %10s %10s %10s %10s\n", "idx", "active", "sends", "recvs",
               "lock", "contended", "sweeps", "misses");
        for (int v = 0; v < count && v < MAX_ELEMS; v++) {
            unsigned long long sum = 0;
            for (int c = 0; c < NCOUNTERS; c++)
                sum += vals[c][v];
            int act = v < nactive ? (int)active[v] : -1;
            if (sum == 0 && act <= 0)
                continue; /* an unused VCI */
            printf("vci %4d %6d %10llu %10llu %10llu %10llu %10llu %10llu\n", v, act, vals[0][v],
                   vals[1][v], vals[2][v], vals[3][v], vals[4][v], vals[5][v]);
        }
        printf("vci pool: %d\n", count);
    }
    int map_index;
    if (MPI_T_pvar_get_index("comm_vci", MPI_T_PVAR_CLASS_GENERIC, &map_index) == MPI_SUCCESS) {
        for (int c = 0; c < NCOMMS; c++) {
            unsigned long long map[2];
            if (read_pvar(s, map_index, &comms[c], map) == 2 && rank == 0)
                printf("comm dup%d: home vci %llu, spread over %llu\n", c, map[0], map[1]);
        }
        unsigned long long map[2];
        MPI_Comm world = MPI_COMM_WORLD;
        if (read_pvar(s, map_index, &world, map) == 2 && rank == 0)
            printf("comm world: home vci %llu, spread over %llu\n", map[0], map[1]);
    }
    for (int c = 0; c < NCOMMS; c++)
        MPI_Comm_free(&comms[c]);
    MPI_T_pvar_session_free(&s);
    return errs;
}

int main(int argc, char **argv)
{
    int vci = 0, cvars_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--vci") == 0) {
            vci = 1;
        } else if (strcmp(argv[i], "--cvars") == 0) {
            cvars_only = 1;
        } else {
            fprintf(stderr, "manifold_info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    int provided;
    if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
        fprintf(stderr, "manifold_info: MPI_T_init_thread failed\n");
        return 1;
    }
    if (cvars_only) {
        print_version();
        print_cvars();
        MPI_T_finalize();
        return 0;
    }
    MPI_Init(&argc, &argv);
    int rank, size, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == 0) {
        print_version();
        printf("processes: %d\n", size);
        print_cvars();
        MPI_T_pvar_session s;
        MPI_T_pvar_session_create(&s);
        print_pvars(s);
        MPI_T_pvar_session_free(&s);
    }
    if (vci)
        errs = vci_report(rank, size);
    fflush(stdout);
    MPI_T_finalize();
    MPI_Finalize();
    return errs;
}
