/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: the MPI tool information interface (MPI_T). Control variables are the
 * tunables table (util_params.c) under their environment names MANIFOLD_<NAME>; performance
 * variables are the per-VCI counters and resource totals of the VCI layer and the
 * communicator-to-VCI mapping. There are no events and no event sources. docs/design/tools.md
 * describes the names and semantics.
 *
 * MPI_T calls never invoke error handlers: they return the error class. Handles and sessions
 * live in one table guarded by one mutex, so a stale or foreign pointer is recognised without
 * being dereferenced.
 */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

/* ---- state -------------------------------------------------------------------------------- */

#define TOOL_MAX_OBJECTS  1024 /* live cvar handles + pvar handles + sessions */
#define TOOL_MAX_SESSIONS 64

enum { OBJ_CVAR_HANDLE = 1, OBJ_PVAR_SESSION, OBJ_PVAR_HANDLE };

struct MPI_ABI_T_cvar_handle {
    int kind;
    int cvar; /* index into the tunables table */
};

struct MPI_ABI_T_pvar_session {
    int kind;
};

struct MPI_ABI_T_pvar_handle {
    int kind;
    MPI_T_pvar_session session;
    int pvar;
    int count;
    mf_comm_t *comm; /* MPI_T_BIND_MPI_COMM variables */
    /* Counters read as the library's value minus base: base is the value at allocation (the
     * counters are continuous, so started there), at the last reset, or what makes the last
     * written value read back. */
    uint64_t base[MF_VCI_MAX];
};

static pthread_mutex_t tool_lock = PTHREAD_MUTEX_INITIALIZER;
static int tool_refs; /* MPI_T_init_thread minus MPI_T_finalize calls */
static int tool_params_loaded;
static void *tool_objects[TOOL_MAX_OBJECTS];
static int tool_nsessions;

static void *obj_find(const void *p, int kind)
{
    if (p == NULL)
        return NULL;
    for (int i = 0; i < TOOL_MAX_OBJECTS; i++) {
        if (tool_objects[i] == p)
            return *(const int *)p == kind ? tool_objects[i] : NULL;
    }
    return NULL;
}

static int obj_add(void *p)
{
    for (int i = 0; i < TOOL_MAX_OBJECTS; i++) {
        if (tool_objects[i] == NULL) {
            tool_objects[i] = p;
            return 1;
        }
    }
    return 0;
}

static void obj_remove(void *p)
{
    for (int i = 0; i < TOOL_MAX_OBJECTS; i++) {
        if (tool_objects[i] == p)
            tool_objects[i] = NULL;
    }
    free(p);
}

/* Every call but init takes the lock and fails when MPI_T is not initialised. */
static int tool_enter(void)
{
    pthread_mutex_lock(&tool_lock);
    if (tool_refs > 0)
        return MPI_SUCCESS;
    pthread_mutex_unlock(&tool_lock);
    return MPI_T_ERR_NOT_INITIALIZED;
}

static int tool_leave(int rc)
{
    pthread_mutex_unlock(&tool_lock);
    return rc;
}

/* The MPI_T string convention (MPI-4.1 section 15.3.3): *len 0 (or buf NULL) asks for the
 * length including the terminator; otherwise at most *len - 1 characters are copied, and *len
 * returns the whole string's length plus one even when it was truncated (so a caller sees that
 * it was, and how much room it needs). len NULL: the string is not wanted. */
static void copy_str(const char *src, char *buf, int *len)
{
    if (len == NULL)
        return;
    int need = (int)strlen(src) + 1;
    if (buf == NULL || *len <= 0) {
        *len = need;
        return;
    }
    int n = need < *len ? need : *len;
    memcpy(buf, src, (size_t)n - 1);
    buf[n - 1] = '\0';
    *len = need;
}

#pragma weak MPI_T_init_thread = PMPI_T_init_thread
int PMPI_T_init_thread(int required, int *provided)
{
    if (provided == NULL)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&tool_lock);
    /* Before MPI_Init the tunables still hold nothing: read the environment so control
     * variables show what the library will use (mf_init reads it again). */
    if (!tool_params_loaded &&
        atomic_load_explicit(&mf_global.state, memory_order_acquire) == MF_STATE_UNINIT) {
        mf_log_init();
        (void)mf_params_load(); /* a bad value is reported now and again, fatally, at init */
    }
    tool_params_loaded = 1;
    tool_refs++;
    pthread_mutex_unlock(&tool_lock);
    /* Every MPI_T call is serialised by tool_lock, so every level is provided as asked. */
    *provided = required == MPI_THREAD_SINGLE || required == MPI_THREAD_FUNNELED ||
                        required == MPI_THREAD_SERIALIZED
                    ? required
                    : MPI_THREAD_MULTIPLE;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_finalize = PMPI_T_finalize
int PMPI_T_finalize(void)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (--tool_refs == 0) {
        /* The last finalize frees what the tool left allocated. */
        for (int i = 0; i < TOOL_MAX_OBJECTS; i++) {
            free(tool_objects[i]);
            tool_objects[i] = NULL;
        }
        tool_nsessions = 0;
    }
    return tool_leave(MPI_SUCCESS);
}

/* ---- enumerations ------------------------------------------------------------------------- */

struct MPI_ABI_T_enum {
    const char *name;
    const char *const *items;
    int nitems;
};

static const char *const vci_state_items[] = {"inactive", "active"};
static struct MPI_ABI_T_enum vci_state_enum = {"vci_state", vci_state_items, 2};

/* One enumeration per enumerated tunable, filled on first use (the table is static). */
static struct MPI_ABI_T_enum param_enums[64];
static char param_enum_names[64][48];

static MPI_T_enum param_enum(int index, const mf_param_info_t *p)
{
    if (p->choices == NULL || index >= 64)
        return MPI_T_ENUM_NULL;
    struct MPI_ABI_T_enum *e = &param_enums[index];
    if (e->name == NULL) {
        int n = 0;
        while (p->choices[n] != NULL)
            n++;
        snprintf(param_enum_names[index], sizeof(param_enum_names[index]), "MANIFOLD_%s", p->name);
        e->items = p->choices;
        e->nitems = n;
        e->name = param_enum_names[index];
    }
    return e;
}

static struct MPI_ABI_T_enum *enum_check(MPI_T_enum e)
{
    if (e == &vci_state_enum)
        return e;
    for (int i = 0; i < 64; i++) {
        if (e == &param_enums[i] && e->name != NULL)
            return e;
    }
    return NULL;
}

#pragma weak MPI_T_enum_get_info = PMPI_T_enum_get_info
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_enum *e = enum_check(enumtype);
    if (e == NULL)
        return tool_leave(MPI_T_ERR_INVALID_HANDLE);
    if (num != NULL)
        *num = e->nitems;
    copy_str(e->name, name, name_len);
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_enum_get_item = PMPI_T_enum_get_item
int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_enum *e = enum_check(enumtype);
    if (e == NULL)
        return tool_leave(MPI_T_ERR_INVALID_HANDLE);
    if (index < 0 || index >= e->nitems)
        return tool_leave(MPI_T_ERR_INVALID_ITEM);
    if (value != NULL)
        *value = index;
    copy_str(e->items[index], name, name_len);
    return tool_leave(MPI_SUCCESS);
}

/* ---- control variables -------------------------------------------------------------------- */

/* The tunables the library itself reads (the launcher's have no value here), by cvar index. */
static int cvar_param(int cvar_index, mf_param_info_t *p)
{
    int seen = 0;
    for (int i = 0; mf_params_describe(i, p); i++) {
        if (p->value == NULL)
            continue;
        if (seen++ == cvar_index)
            return i;
    }
    return -1;
}

static int cvar_count(void)
{
    mf_param_info_t p;
    int n = 0;
    for (int i = 0; mf_params_describe(i, &p); i++)
        n += p.value != NULL;
    return n;
}

/* VCI_STATS is read at finalize, so it may change at run time; the collective algorithms
 * (COLL_*) are read at every call and must agree across processes (manifold_tune writes them
 * on every rank); the rest are read at init. */
static int cvar_scope(const mf_param_info_t *p)
{
    if (strncmp(p->name, "COLL_", 5) == 0)
        return MPI_T_SCOPE_ALL_EQ;
    return strcmp(p->name, "VCI_STATS") == 0 ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_READONLY;
}

#pragma weak MPI_T_cvar_get_num = PMPI_T_cvar_get_num
int PMPI_T_cvar_get_num(int *num_cvar)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (num_cvar == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    *num_cvar = cvar_count();
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_get_info = PMPI_T_cvar_get_info
int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    mf_param_info_t p;
    int pi = cvar_param(cvar_index, &p);
    if (pi < 0)
        return tool_leave(MPI_T_ERR_INVALID_INDEX);
    char text[512];
    snprintf(text, sizeof(text), "MANIFOLD_%s", p.name);
    copy_str(text, name, name_len);
    /* The default rides in the description: MPI_T has no field for it. */
    if (p.choices != NULL)
        snprintf(text, sizeof(text), "%s [default: %s]", p.description, p.choices[p.default_value]);
    else
        snprintf(text, sizeof(text), "%s [default: %d, range %d..%d]", p.description,
                 p.default_value, p.min, p.max);
    copy_str(text, desc, desc_len);
    if (verbosity != NULL)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (datatype != NULL)
        *datatype = MPI_INT;
    if (enumtype != NULL)
        *enumtype = param_enum(pi, &p);
    if (bind != NULL)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope != NULL)
        *scope = cvar_scope(&p);
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_get_index = PMPI_T_cvar_get_index
int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (name == NULL || cvar_index == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    int n = cvar_count();
    for (int i = 0; i < n; i++) {
        mf_param_info_t p;
        cvar_param(i, &p);
        if (strncmp(name, "MANIFOLD_", 9) == 0 && strcmp(name + 9, p.name) == 0) {
            *cvar_index = i;
            return tool_leave(MPI_SUCCESS);
        }
    }
    return tool_leave(MPI_T_ERR_INVALID_NAME);
}

#pragma weak MPI_T_cvar_handle_alloc = PMPI_T_cvar_handle_alloc
int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    mf_param_info_t p;
    if (cvar_param(cvar_index, &p) < 0)
        return tool_leave(MPI_T_ERR_INVALID_INDEX);
    if (handle == NULL || count == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    (void)obj_handle; /* every control variable is bound to no object */
    struct MPI_ABI_T_cvar_handle *h = malloc(sizeof(*h));
    if (h == NULL)
        return tool_leave(MPI_T_ERR_MEMORY);
    h->kind = OBJ_CVAR_HANDLE;
    h->cvar = cvar_index;
    if (!obj_add(h)) {
        free(h);
        return tool_leave(MPI_T_ERR_OUT_OF_HANDLES);
    }
    *handle = h;
    *count = 1;
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_handle_free = PMPI_T_cvar_handle_free
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (handle == NULL || obj_find(*handle, OBJ_CVAR_HANDLE) == NULL)
        return tool_leave(MPI_T_ERR_INVALID_HANDLE);
    obj_remove(*handle);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_read = PMPI_T_cvar_read
int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_cvar_handle *h = obj_find(handle, OBJ_CVAR_HANDLE);
    if (h == NULL)
        return tool_leave(MPI_T_ERR_INVALID_HANDLE);
    if (buf == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    mf_param_info_t p;
    cvar_param(h->cvar, &p);
    *(int *)buf = __atomic_load_n(p.value, __ATOMIC_RELAXED);
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_cvar_write = PMPI_T_cvar_write
int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_cvar_handle *h = obj_find(handle, OBJ_CVAR_HANDLE);
    if (h == NULL)
        return tool_leave(MPI_T_ERR_INVALID_HANDLE);
    if (buf == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    mf_param_info_t p;
    cvar_param(h->cvar, &p);
    if (cvar_scope(&p) == MPI_T_SCOPE_READONLY)
        return tool_leave(MPI_T_ERR_CVAR_SET_NEVER);
    /* mf_init reads the environment and would overwrite an earlier write */
    if (!mf_is_initialized())
        return tool_leave(MPI_T_ERR_CVAR_SET_NOT_NOW);
    int v = *(const int *)buf;
    if (v < p.min || v > p.max)
        return tool_leave(MPI_T_ERR_INVALID);
    __atomic_store_n(p.value, v, __ATOMIC_RELAXED); /* read by MF_PARAM_LIVE */
    return tool_leave(MPI_SUCCESS);
}

/* ---- performance variables ---------------------------------------------------------------- */

enum {
    PV_SENDS,
    PV_RECVS,
    PV_LOCK_ACQUIRED,
    PV_LOCK_CONTENDED,
    PV_GLOBAL_SWEEPS,
    PV_REQUEST_MISSES,
    PV_ACTIVE,
    PV_CONTEXTS,
    PV_WORKERS,
    PV_ENDPOINTS,
    PV_COMM_VCI,
    PV_DT_TEMP_MAX,
    PV_DT_IOV_MSGS,
    PV_ASYNC_WAKEUPS,
    PV_COUNT
};

typedef struct pvar_def {
    const char *name;
    int var_class;
    int bind;
    int readonly;
    const char *desc;
} pvar_def_t;

/* Counters are not read-only: a reset or write changes only what the handle reads (the
 * library's counters never go back), which MPI_T_pvar_reset requires. */
static const pvar_def_t pvar_defs[PV_COUNT] = {
    [PV_SENDS] = {"vci_sends", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, 0,
                  "send operations issued, one element per VCI of the pool"},
    [PV_RECVS] = {"vci_recvs", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, 0,
                  "receive operations posted, one element per VCI of the pool"},
    [PV_LOCK_ACQUIRED] = {"vci_lock_acquired", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, 0,
                          "VCI lock acquisitions, one element per VCI of the pool"},
    [PV_LOCK_CONTENDED] = {"vci_lock_contended", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, 0,
                           "VCI lock acquisitions that had to wait, one element per VCI"},
    [PV_GLOBAL_SWEEPS] = {"vci_global_sweeps", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, 0,
                          "progress sweeps over the other VCIs started by waiters on this VCI"},
    [PV_REQUEST_MISSES] = {"vci_request_misses", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, 0,
                           "request-cache refills (the VCI's cache was empty)"},
    [PV_ACTIVE] = {"vci_active", MPI_T_PVAR_CLASS_STATE, MPI_T_BIND_NO_OBJECT, 1,
                   "whether the VCI's transport worker exists, one element per VCI"},
    [PV_CONTEXTS] = {"vci_contexts", MPI_T_PVAR_CLASS_LEVEL, MPI_T_BIND_NO_OBJECT, 1,
                     "UCX contexts of the VCI pool"},
    [PV_WORKERS] = {"vci_workers", MPI_T_PVAR_CLASS_LEVEL, MPI_T_BIND_NO_OBJECT, 1,
                    "UCX workers created so far"},
    [PV_ENDPOINTS] = {"vci_endpoints", MPI_T_PVAR_CLASS_LEVEL, MPI_T_BIND_NO_OBJECT, 1,
                      "UCX endpoints created so far, over all workers"},
    [PV_COMM_VCI] = {"comm_vci", MPI_T_PVAR_CLASS_GENERIC, MPI_T_BIND_MPI_COMM, 1,
                     "the communicator's home VCI and the number of VCIs its point-to-point "
                     "traffic is spread over"},
    [PV_DT_TEMP_MAX] = {"dtype_temp_max", MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_BIND_NO_OBJECT, 1,
                        "largest temporary copy made to send or receive a non-contiguous "
                        "datatype, in bytes (streamed messages make none)"},
    [PV_DT_IOV_MSGS] = {"dtype_iov_msgs", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, 0,
                        "non-contiguous sends and receives handed to the transport as a "
                        "scatter-gather list (few large blocks)"},
    [PV_ASYNC_WAKEUPS] = {"async_wakeups", MPI_T_PVAR_CLASS_COUNTER, MPI_T_BIND_NO_OBJECT, 0,
                          "times the progress helper thread woke up (MANIFOLD_ASYNC_PROGRESS=on: "
                          "a transport event, new work, or a timed look while the program "
                          "used a channel itself)"},
};

static int pvar_is_counter(int pvar)
{
    return pvar_defs[pvar].var_class == MPI_T_PVAR_CLASS_COUNTER;
}

static MPI_Datatype pvar_datatype(int pvar)
{
    return pvar == PV_ACTIVE || pvar == PV_COMM_VCI ? MPI_INT : MPI_UNSIGNED_LONG_LONG;
}

/* The library's current values of a variable (count elements). */
static void pvar_sample(const struct MPI_ABI_T_pvar_handle *h, void *buf)
{
    uint64_t *u = buf;
    int *i = buf;
    if (h->pvar == PV_COMM_VCI) {
        mf_comm_vci_mapping(h->comm, &i[0], &i[1]);
        return;
    }
    if (h->pvar == PV_DT_TEMP_MAX) {
        u[0] = mf_dtype_temp_max();
        return;
    }
    if (h->pvar == PV_DT_IOV_MSGS) {
        u[0] = mf_dtype_iov_msgs();
        return;
    }
    if (h->pvar == PV_ASYNC_WAKEUPS) {
        u[0] = mf_vci_async_wakeups();
        return;
    }
    if (h->pvar >= PV_CONTEXTS) {
        mf_vci_resources_t res;
        mf_vci_resources_get(&res);
        u[0] = (uint64_t)(h->pvar == PV_CONTEXTS  ? res.contexts
                          : h->pvar == PV_WORKERS ? res.workers
                                                  : res.endpoints);
        return;
    }
    /* The pool may have been brought up again with another size (sessions). */
    int n = mf_vci_pool_size();
    for (int v = 0; v < h->count; v++) {
        mf_vci_stats_t s = {0};
        if (v < n)
            mf_vci_stats_get(v, &s);
        switch (h->pvar) {
        case PV_SENDS: u[v] = s.sends; break;
        case PV_RECVS: u[v] = s.recvs; break;
        case PV_LOCK_ACQUIRED: u[v] = s.lock_acquired; break;
        case PV_LOCK_CONTENDED: u[v] = s.lock_contended; break;
        case PV_GLOBAL_SWEEPS: u[v] = s.global_sweeps; break;
        case PV_REQUEST_MISSES: u[v] = s.request_misses; break;
        default: i[v] = s.active; break;
        }
    }
}

#pragma weak MPI_T_pvar_get_num = PMPI_T_pvar_get_num
int PMPI_T_pvar_get_num(int *num_pvar)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (num_pvar == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    *num_pvar = PV_COUNT;
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_get_info = PMPI_T_pvar_get_info
int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *readonly, int *continuous, int *atomic)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (pvar_index < 0 || pvar_index >= PV_COUNT)
        return tool_leave(MPI_T_ERR_INVALID_INDEX);
    const pvar_def_t *d = &pvar_defs[pvar_index];
    copy_str(d->name, name, name_len);
    copy_str(d->desc, desc, desc_len);
    if (verbosity != NULL)
        *verbosity = MPI_T_VERBOSITY_TUNER_BASIC;
    if (var_class != NULL)
        *var_class = d->var_class;
    if (datatype != NULL)
        *datatype = pvar_datatype(pvar_index);
    if (enumtype != NULL)
        *enumtype = pvar_index == PV_ACTIVE ? &vci_state_enum : MPI_T_ENUM_NULL;
    if (bind != NULL)
        *bind = d->bind;
    if (readonly != NULL)
        *readonly = d->readonly;
    if (continuous != NULL)
        *continuous = 1;
    if (atomic != NULL) /* a counter's readreset takes one sample for both (pvar_read_locked) */
        *atomic = pvar_is_counter(pvar_index);
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_get_index = PMPI_T_pvar_get_index
int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (name == NULL || pvar_index == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    for (int i = 0; i < PV_COUNT; i++) {
        if (strcmp(name, pvar_defs[i].name) == 0 && var_class == pvar_defs[i].var_class) {
            *pvar_index = i;
            return tool_leave(MPI_SUCCESS);
        }
    }
    return tool_leave(MPI_T_ERR_INVALID_NAME);
}

#pragma weak MPI_T_pvar_session_create = PMPI_T_pvar_session_create
int PMPI_T_pvar_session_create(MPI_T_pvar_session *pe_session)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (pe_session == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    if (tool_nsessions >= TOOL_MAX_SESSIONS)
        return tool_leave(MPI_T_ERR_OUT_OF_SESSIONS);
    struct MPI_ABI_T_pvar_session *s = malloc(sizeof(*s));
    if (s == NULL)
        return tool_leave(MPI_T_ERR_MEMORY);
    s->kind = OBJ_PVAR_SESSION;
    if (!obj_add(s)) {
        free(s);
        return tool_leave(MPI_T_ERR_OUT_OF_SESSIONS);
    }
    tool_nsessions++;
    *pe_session = s;
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_session_free = PMPI_T_pvar_session_free
int PMPI_T_pvar_session_free(MPI_T_pvar_session *pe_session)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (pe_session == NULL || obj_find(*pe_session, OBJ_PVAR_SESSION) == NULL)
        return tool_leave(MPI_T_ERR_INVALID_SESSION);
    /* The session's handles go with it. */
    for (int i = 0; i < TOOL_MAX_OBJECTS; i++) {
        struct MPI_ABI_T_pvar_handle *h = tool_objects[i];
        if (h != NULL && h->kind == OBJ_PVAR_HANDLE && h->session == *pe_session)
            obj_remove(h);
    }
    obj_remove(*pe_session);
    tool_nsessions--;
    *pe_session = MPI_T_PVAR_SESSION_NULL;
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_pvar_handle_alloc = PMPI_T_pvar_handle_alloc
int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session pe_session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (obj_find(pe_session, OBJ_PVAR_SESSION) == NULL)
        return tool_leave(MPI_T_ERR_INVALID_SESSION);
    if (pvar_index < 0 || pvar_index >= PV_COUNT)
        return tool_leave(MPI_T_ERR_INVALID_INDEX);
    if (handle == NULL || count == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    /* The variables describe the running library: none exist before init or after finalize. */
    if (!mf_is_initialized())
        return tool_leave(MPI_T_ERR_NOT_ACCESSIBLE);
    mf_comm_t *comm = NULL;
    if (pvar_defs[pvar_index].bind == MPI_T_BIND_MPI_COMM) {
        comm = obj_handle != NULL ? mf_comm_get(*(const MPI_Comm *)obj_handle) : NULL;
        if (comm == NULL)
            return tool_leave(MPI_T_ERR_INVALID_HANDLE);
    }
    struct MPI_ABI_T_pvar_handle *h = calloc(1, sizeof(*h));
    if (h == NULL)
        return tool_leave(MPI_T_ERR_MEMORY);
    h->kind = OBJ_PVAR_HANDLE;
    h->session = pe_session;
    h->pvar = pvar_index;
    h->comm = comm;
    h->count = pvar_index <= PV_ACTIVE ? mf_vci_pool_size() : pvar_index == PV_COMM_VCI ? 2 : 1;
    if (pvar_is_counter(pvar_index))
        pvar_sample(h, h->base);
    if (!obj_add(h)) {
        free(h);
        return tool_leave(MPI_T_ERR_OUT_OF_HANDLES);
    }
    *handle = h;
    *count = h->count;
    return tool_leave(MPI_SUCCESS);
}

/* Decode a session and a handle of it; MPI_T_PVAR_ALL_HANDLES only where `all_ok`. */
static int pvar_check(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int all_ok,
                      struct MPI_ABI_T_pvar_handle **h_p)
{
    if (obj_find(session, OBJ_PVAR_SESSION) == NULL)
        return MPI_T_ERR_INVALID_SESSION;
    if (handle == MPI_T_PVAR_ALL_HANDLES && all_ok) {
        *h_p = NULL;
        return MPI_SUCCESS;
    }
    struct MPI_ABI_T_pvar_handle *h = obj_find(handle, OBJ_PVAR_HANDLE);
    if (h == NULL || h->session != session)
        return MPI_T_ERR_INVALID_HANDLE;
    *h_p = h;
    return MPI_SUCCESS;
}

#pragma weak MPI_T_pvar_handle_free = PMPI_T_pvar_handle_free
int PMPI_T_pvar_handle_free(MPI_T_pvar_session pe_session, MPI_T_pvar_handle *handle)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_pvar_handle *h = NULL;
    rc = handle == NULL ? MPI_T_ERR_INVALID_HANDLE : pvar_check(pe_session, *handle, 0, &h);
    if (rc != MPI_SUCCESS)
        return tool_leave(rc);
    obj_remove(h);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return tool_leave(MPI_SUCCESS);
}

/* Every variable is continuous: a single handle cannot be started or stopped, and
 * MPI_T_PVAR_ALL_HANDLES skips continuous ones, so it succeeds doing nothing. */
static int pvar_startstop(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_pvar_handle *h;
    rc = pvar_check(pe_session, handle, 1, &h);
    if (rc == MPI_SUCCESS && h != NULL)
        rc = MPI_T_ERR_PVAR_NO_STARTSTOP;
    return tool_leave(rc);
}

#pragma weak MPI_T_pvar_start = PMPI_T_pvar_start
int PMPI_T_pvar_start(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return pvar_startstop(pe_session, handle);
}

#pragma weak MPI_T_pvar_stop = PMPI_T_pvar_stop
int PMPI_T_pvar_stop(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    return pvar_startstop(pe_session, handle);
}

/* Read (buf non-NULL) and/or reset a handle; the caller holds the lock. */
static int pvar_read_locked(struct MPI_ABI_T_pvar_handle *h, void *buf, int reset)
{
    if (!mf_is_initialized())
        return MPI_T_ERR_NOT_ACCESSIBLE;
    if (!pvar_is_counter(h->pvar)) {
        if (reset)
            return MPI_T_ERR_PVAR_NO_WRITE;
        pvar_sample(h, buf);
        return MPI_SUCCESS;
    }
    uint64_t now[MF_VCI_MAX];
    pvar_sample(h, now);
    for (int v = 0; v < h->count; v++) {
        if (buf != NULL)
            ((uint64_t *)buf)[v] = now[v] - h->base[v];
        if (reset)
            h->base[v] = now[v];
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_T_pvar_read = PMPI_T_pvar_read
int PMPI_T_pvar_read(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_pvar_handle *h;
    rc = pvar_check(pe_session, handle, 0, &h);
    if (rc == MPI_SUCCESS && buf == NULL)
        rc = MPI_T_ERR_INVALID;
    if (rc == MPI_SUCCESS)
        rc = pvar_read_locked(h, buf, 0);
    return tool_leave(rc);
}

#pragma weak MPI_T_pvar_readreset = PMPI_T_pvar_readreset
int PMPI_T_pvar_readreset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, void *buf)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_pvar_handle *h;
    rc = pvar_check(pe_session, handle, 0, &h);
    if (rc == MPI_SUCCESS && buf == NULL)
        rc = MPI_T_ERR_INVALID;
    if (rc == MPI_SUCCESS)
        rc = pvar_read_locked(h, buf, 1);
    return tool_leave(rc);
}

#pragma weak MPI_T_pvar_reset = PMPI_T_pvar_reset
int PMPI_T_pvar_reset(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_pvar_handle *h;
    rc = pvar_check(pe_session, handle, 1, &h);
    if (rc != MPI_SUCCESS || h != NULL)
        return tool_leave(rc == MPI_SUCCESS ? pvar_read_locked(h, NULL, 1) : rc);
    /* All handles of the session: the read-only ones are skipped. */
    for (int i = 0; i < TOOL_MAX_OBJECTS && rc == MPI_SUCCESS; i++) {
        h = tool_objects[i];
        if (h != NULL && h->kind == OBJ_PVAR_HANDLE && h->session == pe_session &&
            pvar_is_counter(h->pvar))
            rc = pvar_read_locked(h, NULL, 1);
    }
    return tool_leave(rc);
}

#pragma weak MPI_T_pvar_write = PMPI_T_pvar_write
int PMPI_T_pvar_write(MPI_T_pvar_session pe_session, MPI_T_pvar_handle handle, const void *buf)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_T_pvar_handle *h;
    rc = pvar_check(pe_session, handle, 0, &h);
    if (rc == MPI_SUCCESS && buf == NULL)
        rc = MPI_T_ERR_INVALID;
    if (rc == MPI_SUCCESS && !pvar_is_counter(h->pvar))
        rc = MPI_T_ERR_PVAR_NO_WRITE;
    if (rc == MPI_SUCCESS && !mf_is_initialized())
        rc = MPI_T_ERR_NOT_ACCESSIBLE;
    if (rc != MPI_SUCCESS)
        return tool_leave(rc);
    /* The handle reads the written value plus what is counted from now on. */
    uint64_t now[MF_VCI_MAX];
    pvar_sample(h, now);
    for (int v = 0; v < h->count; v++)
        h->base[v] = now[v] - ((const uint64_t *)buf)[v];
    return tool_leave(MPI_SUCCESS);
}

/* ---- categories --------------------------------------------------------------------------- */

enum { CAT_MANIFOLD, CAT_VCI, CAT_COLL, CAT_GENERAL, CAT_COUNT };

static const char *const cat_names[CAT_COUNT] = {"manifold", "vci", "collectives", "tunables"};
static const char *const cat_descs[CAT_COUNT] = {
    "everything the library exposes",
    "the virtual communication interfaces: their tunables, counters and resources",
    "collective algorithm selection",
    "other tunables",
};

static int cvar_category(int cvar_index)
{
    mf_param_info_t p;
    cvar_param(cvar_index, &p);
    if (strncmp(p.name, "VCI_", 4) == 0 || strcmp(p.name, "THREAD_CS") == 0 ||
        strncmp(p.name, "PROGRESS_", 9) == 0)
        return CAT_VCI;
    if (strncmp(p.name, "COLL_", 5) == 0)
        return CAT_COLL;
    return CAT_GENERAL;
}

/* The members of a category of one sort ('c' cvars, 'p' pvars, 's' subcategories), written
 * to indices (up to len) when non-NULL; returns how many there are. */
static int cat_members(int cat, int sort, int len, int indices[])
{
    int n = 0;
    if (sort == 'c') {
        int ncvars = cvar_count();
        for (int i = 0; i < ncvars; i++) {
            if (cat != CAT_MANIFOLD && cvar_category(i) == cat) {
                if (indices != NULL && n < len)
                    indices[n] = i;
                n++;
            }
        }
    } else if (sort == 'p') {
        for (int i = 0; i < PV_COUNT && cat == CAT_VCI; i++) {
            if (indices != NULL && n < len)
                indices[n] = i;
            n++;
        }
    } else if (cat == CAT_MANIFOLD) {
        for (int i = CAT_MANIFOLD + 1; i < CAT_COUNT; i++) {
            if (indices != NULL && n < len)
                indices[n] = i;
            n++;
        }
    }
    return n;
}

#pragma weak MPI_T_category_get_num = PMPI_T_category_get_num
int PMPI_T_category_get_num(int *num_cat)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (num_cat == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    *num_cat = CAT_COUNT;
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_category_get_info = PMPI_T_category_get_info
int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (cat_index < 0 || cat_index >= CAT_COUNT)
        return tool_leave(MPI_T_ERR_INVALID_INDEX);
    copy_str(cat_names[cat_index], name, name_len);
    copy_str(cat_descs[cat_index], desc, desc_len);
    if (num_cvars != NULL)
        *num_cvars = cat_members(cat_index, 'c', 0, NULL);
    if (num_pvars != NULL)
        *num_pvars = cat_members(cat_index, 'p', 0, NULL);
    if (num_categories != NULL)
        *num_categories = cat_members(cat_index, 's', 0, NULL);
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_category_get_index = PMPI_T_category_get_index
int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (name == NULL || cat_index == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    for (int i = 0; i < CAT_COUNT; i++) {
        if (strcmp(name, cat_names[i]) == 0) {
            *cat_index = i;
            return tool_leave(MPI_SUCCESS);
        }
    }
    return tool_leave(MPI_T_ERR_INVALID_NAME);
}

static int category_list(int cat_index, int sort, int len, int indices[])
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (cat_index < 0 || cat_index >= CAT_COUNT)
        return tool_leave(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && indices == NULL))
        return tool_leave(MPI_T_ERR_INVALID);
    if (sort != 'e') /* no events */
        cat_members(cat_index, sort, len, indices);
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_category_get_cvars = PMPI_T_category_get_cvars
int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return category_list(cat_index, 'c', len, indices);
}

#pragma weak MPI_T_category_get_pvars = PMPI_T_category_get_pvars
int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return category_list(cat_index, 'p', len, indices);
}

#pragma weak MPI_T_category_get_categories = PMPI_T_category_get_categories
int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return category_list(cat_index, 's', len, indices);
}

#pragma weak MPI_T_category_get_events = PMPI_T_category_get_events
int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    return category_list(cat_index, 'e', len, indices);
}

#pragma weak MPI_T_category_get_num_events = PMPI_T_category_get_num_events
int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (cat_index < 0 || cat_index >= CAT_COUNT)
        return tool_leave(MPI_T_ERR_INVALID_INDEX);
    if (num_events == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    *num_events = 0;
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_category_changed = PMPI_T_category_changed
int PMPI_T_category_changed(int *update_number)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (update_number == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    *update_number = 0; /* the variables and categories never change */
    return tool_leave(MPI_SUCCESS);
}

/* ---- events and event sources: there are none --------------------------------------------- */

/* What a call naming an event, a source or an event object gets: `rc` once MPI_T is up. */
static int tool_none(int rc)
{
    int init = tool_enter();
    return init != MPI_SUCCESS ? init : tool_leave(rc);
}

#pragma weak MPI_T_source_get_num = PMPI_T_source_get_num
int PMPI_T_source_get_num(int *num_sources)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (num_sources == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    *num_sources = 0;
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_source_get_info = PMPI_T_source_get_info
int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    return tool_none(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_source_get_timestamp = PMPI_T_source_get_timestamp
int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    return tool_none(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_event_get_num = PMPI_T_event_get_num
int PMPI_T_event_get_num(int *num_events)
{
    int rc = tool_enter();
    if (rc != MPI_SUCCESS)
        return rc;
    if (num_events == NULL)
        return tool_leave(MPI_T_ERR_INVALID);
    *num_events = 0;
    return tool_leave(MPI_SUCCESS);
}

#pragma weak MPI_T_event_get_info = PMPI_T_event_get_info
int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    return tool_none(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_event_get_index = PMPI_T_event_get_index
int PMPI_T_event_get_index(const char *name, int *event_index)
{
    return tool_none(name == NULL || event_index == NULL ? MPI_T_ERR_INVALID
                                                         : MPI_T_ERR_INVALID_NAME);
}

#pragma weak MPI_T_event_handle_alloc = PMPI_T_event_handle_alloc
int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    return tool_none(MPI_T_ERR_INVALID_INDEX);
}

#pragma weak MPI_T_event_handle_free = PMPI_T_event_handle_free
int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_event_handle_get_info = PMPI_T_event_handle_get_info
int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_event_handle_set_info = PMPI_T_event_handle_set_info
int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_event_register_callback = PMPI_T_event_register_callback
int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function event_cb_function)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_event_callback_get_info = PMPI_T_event_callback_get_info
int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_event_callback_set_info = PMPI_T_event_callback_set_info
int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_event_set_dropped_handler = PMPI_T_event_set_dropped_handler
int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

/* Event instances only exist inside callbacks, which never run. */
#pragma weak MPI_T_event_copy = PMPI_T_event_copy
int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_event_get_source = PMPI_T_event_get_source
int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_event_get_timestamp = PMPI_T_event_get_timestamp
int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}

#pragma weak MPI_T_event_read = PMPI_T_event_read
int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
