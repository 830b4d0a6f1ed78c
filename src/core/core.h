/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer interface: the MPI objects (communicators, requests, error handlers, messages,
 * predefined datatypes), their lifetimes, the library's global state, and handle decoding.
 *
 * Handles follow the MPI-5.0 standard ABI: a user handle is a pointer to the object struct
 * (the structs below complete the header's incomplete `struct MPI_ABI_*` types); predefined
 * handles are small constants (< 4096) resolved through static tables here. Every object starts
 * with a `kind` word so a stale or foreign handle is recognised instead of used. Freed
 * communicators and requests go back to pools and keep a "freed" kind, so a handle the user
 * already freed is reported as invalid rather than read after free.
 */
#ifndef MF_CORE_H
#define MF_CORE_H

#include <mpi.h>

#include "util.h"
#include "vci.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define MF_HANDLE_PREDEFINED_MAX 4096

typedef enum {
    MF_KIND_FREED = 0x6672ee00,
    MF_KIND_COMM = 0x6672ee01,
    MF_KIND_REQUEST = 0x6672ee02,
    MF_KIND_ERRHANDLER = 0x6672ee03,
    MF_KIND_MESSAGE = 0x6672ee04,
    MF_KIND_INFO = 0x6672ee05,
    MF_KIND_GROUP = 0x6672ee06,
    MF_KIND_SESSION = 0x6672ee07,
    /* A communicator of MPI_Comm_idup before its request completes: only the calls local to
     * the handle (error handler, name, attributes) accept it. */
    MF_KIND_COMM_PENDING = 0x6672ee08,
    MF_KIND_DATATYPE = 0x6672ee09, /* derived datatypes (core_dtype.h) */
    /* A request MPI_Request_free let go of in flight: the library's to finish, no longer a
     * request to its handle (a copy waited for ever), until its release frees it. */
    MF_KIND_REQUEST_ORPHAN = 0x6672ee0a,
    MF_KIND_WIN = 0x6672ee0b,  /* windows (src/rma) */
    MF_KIND_FILE = 0x6672ee0c, /* open files (src/io) */
    MF_KIND_OP = 0x6672ee20,   /* user-defined operations (coll.h) */
    /* Every value once: a handle of one kind given where another is expected is told apart
     * by this word alone (datatypes and groups once shared a value and passed for each
     * other). */
} mf_kind_t;

static inline int mf_handle_is_predefined(const void *handle)
{
    return (uintptr_t)handle < MF_HANDLE_PREDEFINED_MAX;
}

/* Whether a handle may point at one of our objects, whose kind word can then be read: not a
 * predefined constant, and aligned as every object is. An int stored where a handle belongs
 * (an array of the wrong element type) is then an invalid handle, not a misaligned read. */
static inline int mf_handle_is_object(const void *handle)
{
    return !mf_handle_is_predefined(handle) && (uintptr_t)handle % sizeof(void *) == 0;
}

/* ---- handle conversion (MPI_<T>_toint / MPI_<T>_fromint) -------------------------------- */

/* The handle types, numbered for the integer form of user handles. */
typedef enum {
    MF_HKIND_COMM = 1,
    MF_HKIND_DATATYPE,
    MF_HKIND_GROUP,
    MF_HKIND_REQUEST,
    MF_HKIND_OP,
    MF_HKIND_ERRHANDLER,
    MF_HKIND_WIN,
    MF_HKIND_INFO,
    MF_HKIND_SESSION,
    MF_HKIND_MESSAGE,
    MF_HKIND_FILE,
} mf_hkind_t;

/* A predefined handle is its own value. A user handle gets (kind << 24) | slot, slot >= 1,
 * registered on first conversion and the same for the object's lifetime (so never in
 * 1-4095). -1 when out of memory. */
int mf_handle_toint(mf_hkind_t kind, const void *handle);
/* The handle of a value from mf_handle_toint; NULL when the value names no live handle of
 * that kind (predefined values below 4096 come back as they are). */
void *mf_handle_fromint(mf_hkind_t kind, int value, int *ok_p);
/* Drop the integer form of an object that is going away (no-op when it never had one). */
void mf_handle_forget(const void *handle);

/* Objects of a handle kind that are never returned to the allocator: a freed one is marked
 * MF_KIND_FREED and kept for the next object of its kind, so that a stale copy of its handle
 * reads as freed instead of being read after free. The objects start with their `kind` word;
 * the recycler links freed ones through the pointer-sized word after it. */
typedef struct mf_recycler {
    pthread_mutex_t lock;
    void *free_objects;
} mf_recycler_t;

#define MF_RECYCLER_INIT                                                                           \
    {                                                                                              \
        .lock = PTHREAD_MUTEX_INITIALIZER, .free_objects = NULL                                    \
    }

/* A zeroed object of `size` bytes (the same size every time for one recycler), recycled or
 * new; NULL when out of memory. */
void *mf_recycler_take(mf_recycler_t *r, size_t size, const char *what);
/* Mark the object freed (and forget its integer form) and keep it for mf_recycler_take. */
void mf_recycler_put(mf_recycler_t *r, void *object);

/* ---- global state ------------------------------------------------------------------------ */

typedef enum {
    MF_STATE_UNINIT = 0,
    MF_STATE_READY = 1,
    MF_STATE_FINALIZED = 2,
} mf_state_t;

typedef struct mf_global {
    atomic_int state;       /* the library: up while the world model or any session uses it */
    atomic_int world_state; /* the world model: MPI_Init ... MPI_Finalize */
    int thread_level;
    pthread_t main_thread;
    int world_rank, world_size;
    int appnum;
    int universe; /* MPI_UNIVERSE_SIZE: the launcher's, at least the world size */
    int singleton;
    int param_check;     /* validate user arguments (MANIFOLD_PARAM_CHECK) */
    unsigned sweep_mask; /* a global sweep every sweep_mask + 1 empty polls (a power of two) */
    int progress_all;    /* MANIFOLD_VCI_PROGRESS=all */
    int nvcis;
} mf_global_t;

extern mf_global_t mf_global;

static inline int mf_is_initialized(void)
{
    return atomic_load_explicit(&mf_global.state, memory_order_acquire) == MF_STATE_READY;
}

/* init/finalize: mf_init is called once, by the first of MPI_Init, MPI_Init_thread and
 * MPI_Session_init; mf_finalize by the last of MPI_Finalize and MPI_Session_finalize.
 * `quiesced` (may be NULL) runs once every process has reached finalize, before the
 * transport closes. */
mf_status_t mf_init(int required, int *provided_p);
mf_status_t mf_finalize(void (*quiesced)(void));
void mf_abort(int errorcode, const char *msg) __attribute__((noreturn));
/* At exit without MPI_Finalize: aborts the job under a launcher that would not notice
 * (mf_pmi_exit_unfinalized), else returns. */
void mf_exit_unfinalized(int errorcode, const char *msg);
/* One line per active VCI with its counters, then the pool's resource totals (core_tool.c);
 * printed at finalize when MANIFOLD_VCI_STATS=1. */
void mf_vci_stats_report(FILE *out, int rank);

/* ---- error handlers ---------------------------------------------------------------------- */

struct MPI_ABI_Errhandler {
    uint32_t kind;
    atomic_int refs;      /* the user's handles, communicators (files, ...) that use it */
    atomic_int user_refs; /* the handles the user obtained and has not freed */
    /* Exactly one is set: a handler is for communicators, sessions, files or windows. */
    MPI_Comm_errhandler_function *comm_fn;
    MPI_Session_errhandler_function *session_fn;
    MPI_File_errhandler_function *file_fn;
    MPI_Win_errhandler_function *win_fn;
};

/* A user error handler with one reference and no function yet; NULL when out of memory. */
struct MPI_ABI_Errhandler *mf_errhandler_new(void);
/* The handler in a slot (a communicator's, a session's, MPI_FILE_NULL's) with a reference the
 * caller drops with mf_errhandler_release, and the replacement of a slot's handler (taking a
 * reference on the new one, dropping the slot's on the old): under one lock, so that a reader
 * never takes its reference after a concurrent replacement dropped the last one. */
MPI_Errhandler mf_errhandler_acquire(_Atomic(MPI_Errhandler) *slot);
/* The same for a handle given to the user (MPI_*_get_errhandler), which MPI_Errhandler_free
 * gives back (mf_errhandler_user_free). */
MPI_Errhandler mf_errhandler_acquire_for_user(_Atomic(MPI_Errhandler) *slot);
/* MPI_Errhandler_free of a user handler: 0 when the user freed it as many times as the user
 * obtained it already (a stale copy of the handle), else the user's reference is dropped. */
int mf_errhandler_user_free(MPI_Errhandler eh);
void mf_errhandler_replace(_Atomic(MPI_Errhandler) *slot, MPI_Errhandler eh);
/* Take/drop a reference on an error handler handle (predefined handles are not counted). */
void mf_errhandler_retain(MPI_Errhandler eh);
void mf_errhandler_release(MPI_Errhandler eh);
/* 1 when eh is a predefined handler or a live user handler. */
int mf_errhandler_valid(MPI_Errhandler eh);

/* A buffer for buffered sends (pt2pt.c): the process's (MPI_Buffer_attach), a communicator's
 * or a session's (MPI-4.1 MPI_Comm/Session_attach_buffer). `used` counts the bytes charged by
 * buffered sends in flight; MPI_BUFFER_AUTOMATIC as `buf` means no limit. */
typedef struct mf_bsend_pool {
    pthread_mutex_t lock;
    void *buf;
    size_t size, used;
    int attached;
} mf_bsend_pool_t;

/* ---- sessions ---------------------------------------------------------------------------- */

/* An MPI-4 session: a handle on the library's start-up with its own error handler and hints.
 * Finalized sessions keep the "freed" kind (their memory is recycled, never returned), so a
 * stale handle is recognised. */
struct MPI_ABI_Session {
    uint32_t kind;
    int thread_level;
    _Atomic(MPI_Errhandler) errhandler;
    struct MPI_ABI_Info *info; /* the hints given to MPI_Session_init; NULL when none */
    struct MPI_ABI_Session *next_free;
    _Atomic(mf_bsend_pool_t *) bsend_pool; /* MPI_Session_attach_buffer; NULL until then */
};

typedef struct MPI_ABI_Session mf_session_t;

static inline mf_session_t *mf_session_get(MPI_Session handle)
{
    if (!mf_handle_is_object(handle))
        return NULL;
    return handle->kind == MF_KIND_SESSION ? handle : NULL;
}

/* ---- communicators ----------------------------------------------------------------------- */

#define MF_CONTEXT_MAX 4096 /* live communicators per process */
/* The two contexts of MPI_Comm_connect/accept's handshake (core_dynproc.c), beyond every
 * communicator's and every group view's. */
#define MF_CONTEXT_DYNPROC (6 * MF_CONTEXT_MAX)
#define MF_CONTEXT_WORLD   0
#define MF_CONTEXT_SELF    1

/* The MPI-4 info assertions a communicator's members agreed on (mf_comm_set_info). */
enum {
    MF_HINT_NO_ANY_SOURCE = 1,    /* mpi_assert_no_any_source */
    MF_HINT_NO_ANY_TAG = 2,       /* mpi_assert_no_any_tag */
    MF_HINT_ALLOW_OVERTAKING = 4, /* mpi_assert_allow_overtaking */
    MF_HINT_EXACT_LENGTH = 8,     /* mpi_assert_exact_length */
};

struct MPI_ABI_Comm {
    uint32_t kind;
    /* The user's handle (until MPI_Comm_free) plus one per request or matched message using
     * the communicator; the last release destroys it. */
    atomic_int refs;
    int rank, size;
    /* The source rank this process's messages carry: `rank`, except on the group views that
     * creations agree over (world_tags set), where messages carry world ranks and receives name
     * their source by world rank: there one view rank means another process in the next
     * creation with another group and the same tag, whose messages must not match. */
    int tag_rank, world_tags;
    unsigned context_id; /* index < MF_CONTEXT_MAX; transport context = index*2 (+1 internal) */
    int *world_ranks;    /* world rank of each member; NULL means identity (world) */
    mf_vci_t *vci;       /* home VCI: collectives, and point-to-point unless spread */
    /* Point-to-point spreading: with vci_spread > 1, user messages of (source rank, tag) use
     * pool VCI (home + key) % vci_spread, the key summing the source and/or tag as `spread_by`
     * (MF_HINT_NO_ANY_SOURCE/_TAG bits) says. Fixed once set (see mf_comm_set_info). 0 while
     * MPI_Comm_set_info decides whether to spread: user traffic waits for the outcome. Changed
     * only under the home VCI's lock, so traffic that found 1 there may use the home VCI. */
    _Atomic int vci_spread;
    _Atomic unsigned spread_by;
    _Atomic unsigned hints; /* MF_HINT_* bits in effect */
    /* Before spreading, user messages this process sent minus those it received, and posted
     * receives not yet complete, under the home VCI's lock: summed over the members they tell
     * whether any message is in flight, which would be lost if its VCI changed. */
    int64_t unmatched, open_recvs;
    /* Partitioned requests alive on the communicator (init to free, same lock): their data VCI
     * is fixed at init, so while any exists the communicator is not spread. */
    int64_t part_live;
    /* Requests allocated on the home VCI (under its lock): together they hold one reference
     * in `refs` (home_held), taken when the first one is allocated and kept until the count is
     * back at 0 once `home_drop` is set, so requests on a live communicator cost no atomic
     * operation at all. mf_comm_free sets home_drop; private communicators (mf_comm_set_private)
     * have it from the start. */
    int64_t home_requests;
    uint8_t home_held, home_drop;
    /* Persistent requests among the holders (mf_request_set_persistent to their release), by
     * the reference they hold: MPI_Comm_disconnect waits for every other holder only, since an
     * inactive one is no pending communication and may outlive the communicator. */
    atomic_int persistent_home, persistent_other;
    _Atomic(MPI_Errhandler) errhandler;
    uint32_t create_seq; /* communicators created from this one: identical on all members */
    /* A pending MPI_Comm_idup whose call failed (a copy callback): the agreement, which the
     * other members take part in, runs on and then discards it (mf_comm_idup_abandon). */
    atomic_int idup_abandoned;
    uint32_t nbc_seq;          /* non-blocking collectives started so far: identical everywhere */
    uint32_t nbc_pseq;         /* persistent collectives created so far: the same */
    pthread_mutex_t name_lock; /* protects name, info and attrs */
    char name[MPI_MAX_OBJECT_NAME];
    struct MPI_ABI_Info *info; /* hints set by the user (MPI_Comm_set_info); NULL when none */
    struct mf_attr *attrs;     /* cached attributes, the one set last first */
    struct mf_topo *topo;      /* process topology (core_topo.h); NULL when none */
    /* Intercommunicators (remote_ranks != NULL): rank, size and world_ranks describe the local
     * group; point-to-point ranks name the remote group, whose world ranks are remote_ranks.
     * local_comm is a private intracommunicator over the local group (its own context id),
     * used for the local half of intercommunicator constructors and, later, collectives. */
    int remote_size;
    int *remote_ranks;
    struct MPI_ABI_Comm *local_comm;
    struct MPI_ABI_Comm *next_free;
    void *shm; /* shared-memory collectives (coll_shm.c); NULL until the first one */
    /* Buffered sends: the communicator's own buffer (made at the first attach, freed with the
     * communicator), and the session it comes from (MPI_Comm_create_from_group, or the
     * parent's for a communicator derived from another), whose buffer comes next; NULL when
     * none. */
    _Atomic(mf_bsend_pool_t *) bsend_pool;
    struct MPI_ABI_Session *session;
};

typedef struct MPI_ABI_Comm mf_comm_t;

extern mf_comm_t mf_comm_world, mf_comm_self;

/* Decode a communicator handle; NULL when it is not a live communicator. */
static inline mf_comm_t *mf_comm_get(MPI_Comm handle)
{
    if (handle == MPI_COMM_WORLD)
        return &mf_comm_world;
    if (handle == MPI_COMM_SELF)
        return &mf_comm_self;
    if (!mf_handle_is_object(handle))
        return NULL;
    return handle->kind == MF_KIND_COMM ? handle : NULL;
}

static inline MPI_Comm mf_comm_handle(mf_comm_t *comm)
{
    if (comm == &mf_comm_world)
        return MPI_COMM_WORLD;
    if (comm == &mf_comm_self)
        return MPI_COMM_SELF;
    return comm;
}

static inline int mf_comm_world_rank(const mf_comm_t *comm, int rank)
{
    return comm->world_ranks == NULL ? rank : comm->world_ranks[rank];
}

/* A process named the same way by every process (world ranks are numbers of the local process
 * table: processes of other jobs get different ones in different jobs). */
typedef struct mf_proc_id {
    uint64_t job; /* mf_vci_job_key of its job */
    int32_t rank; /* in its job's MPI_COMM_WORLD */
    int32_t pad;
} mf_proc_id_t;

static inline mf_proc_id_t mf_proc_id(int world_rank)
{
    mf_proc_id_t id = {0, 0, 0};
    mf_vci_process_id(world_rank, &id.job, &id.rank);
    return id;
}

/* The world rank (process table number) of id, or -1 when this process never met it. */
static inline int mf_proc_find(mf_proc_id_t id)
{
    return mf_vci_find_process(id.job, id.rank);
}

/* A 32-bit digest of comm's `rank`, the same on every process (for agreement seeds). */
static inline unsigned mf_comm_proc_key(const mf_comm_t *comm, int rank)
{
    mf_proc_id_t id = mf_proc_id(mf_comm_world_rank(comm, rank));
    return (unsigned)(id.job ^ (id.job >> 32)) * 2654435761u + (unsigned)id.rank;
}

/* Whether the communicator (both groups) holds processes of another job: every member
 * answers alike. */
int mf_comm_spans_jobs(const mf_comm_t *comm);

static inline int mf_comm_is_inter(const mf_comm_t *comm)
{
    return comm->remote_ranks != NULL;
}

/* The processes point-to-point ranks name: the remote group of an intercommunicator, the
 * group itself otherwise. */
static inline int mf_comm_peer_size(const mf_comm_t *comm)
{
    return comm->remote_ranks != NULL ? comm->remote_size : comm->size;
}

static inline int mf_comm_peer_world_rank(const mf_comm_t *comm, int rank)
{
    return comm->remote_ranks != NULL ? comm->remote_ranks[rank] : mf_comm_world_rank(comm, rank);
}

static inline unsigned mf_comm_ctx_user(const mf_comm_t *comm)
{
    return comm->context_id << 1;
}

static inline unsigned mf_comm_ctx_internal(const mf_comm_t *comm)
{
    return (comm->context_id << 1) | 1;
}

mf_vci_t *mf_comm_vci_spread(const mf_comm_t *comm, int rank, int tag);
mf_vci_t *mf_comm_vci_lock_spread(const mf_comm_t *comm, int rank, int tag);
/* The VCI of user point-to-point traffic between (source) `rank` and `tag` on comm. */
static inline __attribute__((always_inline)) mf_vci_t *mf_comm_vci_for(const mf_comm_t *comm,
                                                                       int rank, int tag)
{
    return MF_LIKELY(atomic_load_explicit(&comm->vci_spread, memory_order_acquire) == 1)
               ? comm->vci
               : mf_comm_vci_spread(comm, rank, tag);
}
/* Whether user traffic on comm goes through the home VCI, whose lock the caller holds: then it
 * is counted for the hint agreement. */
static inline __attribute__((always_inline)) int mf_comm_unspread_locked(const mf_comm_t *comm)
{
    return atomic_load_explicit(&comm->vci_spread, memory_order_relaxed) == 1;
}
/* mf_comm_vci_for, locked. The home VCI is checked again under its lock: MPI_Comm_set_info may
 * have begun deciding in between, and then the message must wait for its outcome. */
static inline __attribute__((always_inline)) mf_vci_t *mf_comm_vci_lock_for(const mf_comm_t *comm,
                                                                            int rank, int tag)
{
    if (MF_LIKELY(atomic_load_explicit(&comm->vci_spread, memory_order_acquire) == 1)) {
        mf_vci_t *vci = comm->vci;
        mf_vci_lock(vci);
        if (MF_LIKELY(mf_comm_unspread_locked(comm)))
            return vci;
        mf_vci_unlock(vci);
    }
    return mf_comm_vci_lock_spread(comm, rank, tag);
}

/* Count one more/one less user of the communicator (any thread, no lock needed). */
static inline void mf_comm_hold(mf_comm_t *comm)
{
    atomic_fetch_add_explicit(&comm->refs, 1, memory_order_relaxed);
}
void mf_comm_release(mf_comm_t *comm);
/* A communicator only the library uses and frees from inside another one's destruction (an
 * intercommunicator's local_comm, a node-leader communicator), which may run under a VCI lock:
 * its requests keep no shared reference from now on, so freeing it takes no lock. Call it
 * where the communicator is made, outside any VCI lock. */
void mf_comm_set_private(mf_comm_t *comm);
mf_status_t mf_comm_init_builtin(void);
void mf_comm_fini_builtin(void);
/* Collective over `parent`: a new communicator of the given members (world ranks, ordered by new
 * rank). `my_new_rank` < 0 means this process only takes part in the agreement. */
mf_status_t mf_comm_create_from(mf_comm_t *parent, int new_size, int my_new_rank,
                                const int *world_ranks, mf_comm_t **comm_p);
mf_status_t mf_comm_dup(mf_comm_t *parent, mf_comm_t **comm_p);
/* MPI_Comm_idup(_with_info: info, NULL for none): *comm_p is the new communicator's object at once
 * (attributes may be copied to it), usable once *req_p (a collective request) completes.
 * Intra- and intercommunicators alike: the agreement is a schedule on the parent. */
mf_status_t mf_comm_idup(mf_comm_t *parent, int with_info, struct MPI_ABI_Info *info,
                         mf_comm_t **comm_p, struct MPI_ABI_Request **req_p);
/* Drop an MPI_Comm_idup whose call failed after mf_comm_idup (a copy callback): neither the
 * communicator nor the request reaches the user. Does not wait: the agreement, which the other
 * members take part in, runs on and then discards both. */
void mf_comm_idup_abandon(mf_comm_t *comm, struct MPI_ABI_Request *req);
mf_status_t mf_comm_split(mf_comm_t *parent, int color, int key, mf_comm_t **comm_p);
/* Collective over the members of `group` only (a subset of parent, of which this process is a
 * member): the agreement runs on a context of its own, keyed by `tag`, so concurrent calls on
 * the same parent with different tags do not mix. */
mf_status_t mf_comm_create_group(mf_comm_t *parent, const struct MPI_ABI_Group *group, int tag,
                                 mf_comm_t **comm_p);
/* The same over MPI_COMM_WORLD's processes for a string tag (sessions): the agreement runs on
 * a view of the world above every communicator's context, the view and the tag picked by 38
 * bits of the string's hash. Two different strings with those bits equal, used at the same
 * time by overlapping groups, can still meet (MPICH hashes to fewer bits). */
mf_status_t mf_comm_create_from_stringtag(const struct MPI_ABI_Group *group, const char *stringtag,
                                          mf_comm_t **comm_p);
/* Collective: processes on the same node (split_type MPI_COMM_TYPE_SHARED); `shared` 0 makes
 * this process take part without joining a communicator (it gets NULL). */
mf_status_t mf_comm_split_shared(mf_comm_t *parent, int shared, int key, mf_comm_t **comm_p);
/* The node of this process as mf_comm_split_shared colours it on the intracommunicator `comm`
 * (the same value on every process of a node). Collective when the launcher gives no node list
 * or comm spans jobs (an allgather of host names), local otherwise. */
mf_status_t mf_comm_node_color(mf_comm_t *comm, int *color_p);
/* Collective over parent: MPI_COMM_TYPE_HW_GUIDED with hwloc resource name `resource`, or
 * MPI_COMM_TYPE_HW_UNGUIDED when resource is NULL (core_hwtopo.c). *comm_p NULL: no group. */
mf_status_t mf_comm_split_hw(mf_comm_t *parent, const char *resource, int key, mf_comm_t **comm_p);
/* Record the resource type a hardware split chose in comm's info (key mpi_hw_resource_type),
 * as the standard asks of the guided and unguided splits. */
mf_status_t mf_comm_set_resource_info(mf_comm_t *comm, const char *name);
void mf_comm_free(mf_comm_t *comm);
/* Collective over `local` (MPI_Intercomm_create): an intercommunicator between local's group
 * and the group whose leader is `remote_leader` in `peer`. `peer` (NULL off the leader) links
 * the two leaders and carries their messages with `tag`. `leader_err` is an MPI error class
 * the leader found in its own arguments (0: none): it reaches every member, which then returns
 * MF_ERR_INVALID with the class in *err_class_p (also MPI_ERR_GROUP for overlapping groups). */
mf_status_t mf_comm_intercomm_create(mf_comm_t *local, int local_leader, mf_comm_t *peer,
                                     int remote_leader, int tag, int leader_err, int *err_class_p,
                                     mf_comm_t **comm_p);
/* MPI_Intercomm_create_from_groups: `local` is this process's group, `remote_leader` a process
 * number (a world rank, or a process of another job); the agreements run among the groups' members
 * only, keyed by `stringtag` (as mf_comm_create_from_stringtag). */
mf_status_t mf_comm_intercomm_from_groups(const struct MPI_ABI_Group *local, int local_leader,
                                          int remote_leader_world, const char *stringtag,
                                          int *err_class_p, mf_comm_t **comm_p);
/* A private copy of the intracommunicator comm (same group and order; no hints, topology,
 * attributes): the local half of an intercommunicator. Collective over comm. */
mf_status_t mf_comm_dup_private(mf_comm_t *comm, mf_comm_t **lc_p);
/* A duplicate of an intracommunicator for the library's own traffic beside it (a file's
 * collectives): a new context id agreed over the parent, on the parent's VCI, with nothing else
 * of the parent's (no hints, info or topology). A VCI of its own would cost a worker, an address
 * exchange and cold shared-memory queues on its first calls, for little traffic. */
mf_status_t mf_comm_dup_internal(mf_comm_t *parent, mf_comm_t **comm_p);
/* The end of an intercommunicator constructor whose groups already know each other
 * (remote_ranks, in this process's numbering): agree on a context id over `lc` (owned from now
 * on, also on failure) and the leaders' link, then build. On the leader, `view` and `remote`
 * reach the other leader on view's user context, with send_tag on messages to it and recv_tag
 * on those from it; `seed` must be the same on every process of both groups. */
mf_status_t mf_comm_inter_finish(mf_comm_t *lc, int leader, mf_comm_t *view, int remote,
                                 int send_tag, int recv_tag, unsigned seed, int remote_size,
                                 const int *remote_ranks, MPI_Errhandler eh, mf_comm_t **comm_p);
/* ---- dynamic processes (core_dynproc.c) ------------------------------------------------- */

/* Why a dynamic-process call failed: the MPI error class and a message naming the argument,
 * the same on every process of the calling group. */
typedef struct mf_dynproc_err {
    int err_class;
    char why[200];
} mf_dynproc_err_t;

/* The key under which a spawn leaves the parents' port name in the children's key space. */
#define MF_PARENT_PORT_KEY "mf-parent-port"
/* And the number of processes of each command, comma-separated: a child whose launcher gives
 * no appnum (Slurm's PMI answers -1) counts its command from its rank, which MPI_APPNUM is. */
#define MF_SPAWN_SIZES_KEY "mf-spawn-sizes"

mf_status_t mf_dynproc_open_port(char *name, size_t size, mf_dynproc_err_t *err);
mf_status_t mf_dynproc_close_port(const char *name, mf_dynproc_err_t *err);
/* Collective over the intracommunicator comm: MPI_Comm_accept (accept set) or
 * MPI_Comm_connect; port_name matters at `root` only. The root gives up after timeout_s
 * seconds without a connection (0: never). */
mf_status_t mf_dynproc_connect(mf_comm_t *comm, int root, const char *port_name, int accept,
                               int timeout_s, mf_dynproc_err_t *err, mf_comm_t **inter_p);
/* Collective over the intracommunicator comm: the root asks the launcher for the processes
 * of `cmds` (root only) unless root_err (root only) already holds an error of its arguments,
 * then the group accepts their connection. */
struct mf_pmi_spawn_cmd;
mf_status_t mf_dynproc_spawn(mf_comm_t *comm, int root, int ncmds,
                             const struct mf_pmi_spawn_cmd *cmds, const mf_dynproc_err_t *root_err,
                             mf_dynproc_err_t *err, mf_comm_t **inter_p);
/* How a process of another job reaches this one: a description of mf_dynproc_desc_size()
 * bytes (job, rank, VCI 0 address), and the process table number of the one `desc`
 * describes, added when it is new. For MPI_Intercomm_create, whose groups may hold processes
 * of other jobs that some members never met. */
size_t mf_dynproc_desc_size(void);
void mf_dynproc_desc_self(void *desc);
mf_status_t mf_dynproc_desc_add(const void *desc, int *index_p);
/* Spawned processes, from MPI_Init: connect MPI_COMM_WORLD to the parents. */
mf_status_t mf_dynproc_init_parent(void);
/* The intercommunicator to the parents (NULL: not spawned, or freed/disconnected since). */
mf_comm_t *mf_dynproc_parent(void);
/* The user frees or disconnects comm: if it is the parent, MPI_Comm_get_parent forgets it. */
void mf_dynproc_forget(mf_comm_t *comm);
void mf_dynproc_fini(void);

/* Collective over an intercommunicator: the intracommunicator of both groups, the group with
 * `high` false first (ties: the group whose leader has the lower world rank). */
mf_status_t mf_comm_intercomm_merge(mf_comm_t *inter, int high, mf_comm_t **comm_p);
/* Collective: wait until nothing of comm is in flight on this process, then synchronise the
 * members (MPI_Comm_disconnect); the caller frees it. */
mf_status_t mf_comm_quiesce(mf_comm_t *comm);
/* The VCIs a communicator uses: its home VCI (collectives, and all point-to-point traffic
 * unless spread) and how many pool VCIs user point-to-point traffic is spread over by the
 * mpi_assert_no_any_source/_tag assertions (1: not spread). For tools. */
void mf_comm_vci_mapping(const mf_comm_t *comm, int *home_p, int *spread_p);
/* Collective: replace the communicator's hints by a copy of `info` (NULL clears them) and
 * apply the assertions all members agree on. mpi_assert_no_any_source/_tag spread user
 * point-to-point traffic over the VCI pool when no message of the communicator is in flight;
 * once spread, a communicator stays spread (lifting an assertion then leaves wildcards
 * refused). `live`: the communicator is the user's already (MPI_Comm_set_info), so other
 * threads may be sending or receiving on it meanwhile; 0 for one being made. */
mf_status_t mf_comm_set_info(mf_comm_t *comm, struct MPI_ABI_Info *info, int live);
/* MPI_Comm_set_info: mf_comm_set_info (live) with the communicator's hints updated by the keys
 * of `info`; the others stay as they were (MPI-4.1 section 7.4.4). */
mf_status_t mf_comm_update_info(mf_comm_t *comm, struct MPI_ABI_Info *info);

/* ---- groups ------------------------------------------------------------------------------ */

/* An ordered set of processes, named by their world ranks. MPI_GROUP_EMPTY is a static object;
 * every other group is refcounted and recycled like communicators, so a freed handle is
 * recognised. Groups are immutable once created, so no lock is needed to read them. */
struct MPI_ABI_Group {
    uint32_t kind;
    atomic_int refs;
    int size;
    int rank;         /* this process's rank in the group; MPI_UNDEFINED when not a member */
    int *world_ranks; /* world rank of each member, by group rank */
    struct MPI_ABI_Group *next_free;
    struct MPI_ABI_Session *session; /* MPI_Group_from_session_pset's session, else NULL */
};

typedef struct MPI_ABI_Group mf_group_t;

extern mf_group_t mf_group_empty;

/* Decode a group handle; NULL when it is not MPI_GROUP_EMPTY nor a live user group. */
static inline mf_group_t *mf_group_get(MPI_Group handle)
{
    if (handle == MPI_GROUP_EMPTY)
        return &mf_group_empty;
    if (!mf_handle_is_object(handle))
        return NULL;
    return handle->kind == MF_KIND_GROUP ? handle : NULL;
}

static inline MPI_Group mf_group_handle(mf_group_t *group)
{
    return group == &mf_group_empty ? MPI_GROUP_EMPTY : group;
}

/* A new group of `size` members (world ranks copied), derived from `session` (NULL: from the
 * world model); size 0 gives the empty group. */
mf_status_t mf_group_create(int size, const int *world_ranks, struct MPI_ABI_Session *session,
                            mf_group_t **group_p);
mf_status_t mf_group_from_comm(const mf_comm_t *comm, mf_group_t **group_p);
void mf_group_release(mf_group_t *group);
/* An array of world size: inverse[w] is the group rank of world rank w, or -1. Caller frees. */
int *mf_group_inverse(const mf_group_t *group);

/* ---- keyvals and attributes ---------------------------------------------------------------- */

/* Which objects a keyval's attributes attach to. A keyval's value says it too: the kind times
 * MF_KEYVAL_KIND_STEP plus a slot number (never 0 nor a predefined keyval), so a keyval of the
 * wrong kind is recognised. */
typedef enum { MF_KEYVAL_COMM = 1, MF_KEYVAL_TYPE = 2, MF_KEYVAL_WIN = 3 } mf_keyval_kind_t;

#define MF_KEYVAL_KIND_STEP 0x100000

/* One cached attribute of an object (a list, the attribute set last first: core_attr.c). */
typedef struct mf_attr {
    int keyval;
    void *value;
    struct mf_attr *next;
} mf_attr_t;

/* copy_fn/delete_fn are the user's callbacks of the keyval's kind (stored untyped), or the
 * predefined constants 0 (null copy / null delete) and 1 (dup), which are never called. */
mf_status_t mf_keyval_create(mf_keyval_kind_t kind, void (*copy_fn)(void), void (*delete_fn)(void),
                             void *extra_state, int *keyval_p);
/* MF_ERR_INVALID when keyval is not a live keyval of that kind. Attributes already set with it
 * keep it alive (their delete callback still runs). */
mf_status_t mf_keyval_free(mf_keyval_kind_t kind, int keyval);
/* Whether keyval is a live keyval of that kind; with `attached_ok`, also one the user freed
 * while attributes still use it: those may still be read and deleted (MPI-4.1 7.7.2), not
 * set. */
int mf_keyval_valid(mf_keyval_kind_t kind, int keyval, int attached_ok);

/* Communicator attributes. The callbacks run without any library lock held. When a callback
 * fails these return MF_ERR_OTHER and its MPI error code in *cb_err_p. Set: the old value's
 * delete callback runs first. Copy (MPI_Comm_dup): each attribute through its copy callback,
 * in the order they were set, onto a new communicator nobody else uses yet. Delete all
 * (MPI_Comm_free, MPI_Finalize on MPI_COMM_SELF): in the reverse order of setting, stopping at
 * the first callback that fails. Copy and delete all are linear in the number of attributes;
 * get, delete and replacing a value search the list. */
mf_status_t mf_comm_attr_set(mf_comm_t *comm, int keyval, void *value, int *cb_err_p);
int mf_comm_attr_get(mf_comm_t *comm, int keyval, void **value_p);
mf_status_t mf_comm_attr_delete(mf_comm_t *comm, int keyval, int *cb_err_p);
mf_status_t mf_comm_attr_copy(mf_comm_t *oldcomm, mf_comm_t *newcomm, int *cb_err_p);
mf_status_t mf_comm_attr_delete_all(mf_comm_t *comm, int *cb_err_p);

/* Any object with attributes: the kind of its keyvals, the handle its callbacks get, its list
 * and the lock that guards the list. The mf_attr_* functions behave as the communicator ones
 * above (which are these on mf_comm_attr_obj). */
typedef struct mf_attr_obj {
    mf_keyval_kind_t kind;
    void *handle;
    mf_attr_t **list;
    pthread_mutex_t *lock;
} mf_attr_obj_t;

mf_attr_obj_t mf_comm_attr_obj(mf_comm_t *comm);
/* dt is a live derived datatype or a valid predefined one (the caller checks). */
mf_attr_obj_t mf_dtype_attr_obj(MPI_Datatype dt);
mf_status_t mf_attr_set(const mf_attr_obj_t *obj, int keyval, void *value, int *cb_err_p);
int mf_attr_get(const mf_attr_obj_t *obj, int keyval, void **value_p);
mf_status_t mf_attr_delete(const mf_attr_obj_t *obj, int keyval, int *cb_err_p);
mf_status_t mf_attr_copy(const mf_attr_obj_t *old, const mf_attr_obj_t *out, int *cb_err_p);
mf_status_t mf_attr_delete_all(const mf_attr_obj_t *obj, int *cb_err_p);

/* ---- requests ---------------------------------------------------------------------------- */

typedef enum {
    MF_REQ_SEND = 1,
    MF_REQ_RECV,
    MF_REQ_PRECOMPLETE, /* shared, immutable: an operation that finished at once */
    MF_REQ_NULL_PROC,   /* receive from MPI_PROC_NULL: completes with the empty status */
    MF_REQ_PSEND,       /* partitioned send (src/part) */
    MF_REQ_PRECV,       /* partitioned receive (src/part) */
    MF_REQ_COLL,        /* non-blocking or persistent collective: runs a schedule (coll.h) */
    MF_REQ_SENDRECV,    /* MPI_Isendrecv(_replace): completes when both `joined` parts have */
    MF_REQ_GREQ,        /* generalized request (core_greq.c): the user completes it */
} mf_req_type_t;

typedef enum {
    MF_SEND_STANDARD = 0,
    MF_SEND_SYNC,
    MF_SEND_BUFFERED,
    MF_SEND_READY,
} mf_send_mode_t;

struct MPI_ABI_Request {
    /* The hot part, the first two cache lines: what every allocation writes (request_init)
     * and the message path reads. */
    uint32_t kind;
    uint8_t type;     /* mf_req_type_t */
    uint8_t home_ref; /* its reference on comm is one of comm->home_requests */
    uint8_t counted;  /* a receive counted in comm->open_recvs (see mf_comm_t) */
    mf_vci_t *vci;
    mf_comm_t *comm;                   /* counted reference while the request exists */
    struct MPI_ABI_Request *next_free; /* the VCI cache's free list (free requests only) */
    mf_vci_op_t op;
    size_t buf_len; /* receive buffer size in bytes, for the status count */
    /* The cold part: zero in every free request, so allocating does not touch it. Whoever
     * sets a field here also sets one of the cold flags, dtype, pack_buf or poll, and
     * releasing a request with any of those set clears the whole part again (release_extras).
     */
    union {
        struct {
            uint8_t persistent; /* created by *_init */
            uint8_t user_freed; /* MPI_Request_free called while in flight */
            uint8_t internal;   /* owned by the library (buffered sends); never seen by the user */
            uint8_t streamed;   /* the transport packs or unpacks through `packer`, no pack_buf */
            uint8_t has_int;    /* MPI_Request_toint gave it an integer, forgotten at release */
        };
        uint64_t cold_flags;
    };
    /* persistent: started and not yet completed. Cleared by the completing thread while a
     * partitioned receive's MPI_Parrived may look from another: those two use __atomic. */
    uint8_t active;
    uint8_t mode;
    uint8_t unpacked;
    /* Arguments kept by persistent requests (and buffered sends) for MPI_Start. */
    void *buf;
    int peer, tag;
    void *bsend_copy;
    /* A non-contiguous derived datatype: the type (a counted reference), the user's buffer and
     * item count; the transport sends or receives the packed bytes in pack_buf. Receives are
     * unpacked once, when the request completes (mf_request_unpack). */
    struct MPI_ABI_Datatype *dtype;
    void *dt_buf;
    MPI_Count dt_count;
    void *pack_buf;
    mf_vci_packer_t packer;
    /* Requests that need work besides the transport's own progress set `poll`; completion
     * checks call it before looking at op.done (partitioned requests: setup and flushing queued
     * partitions; collective requests: advancing the schedules). `part` is the partitioned
     * layer's state. */
    void (*poll)(struct MPI_ABI_Request *req);
    void *part;
    struct mf_sched *sched; /* MF_REQ_COLL: the schedule it runs (owned) */
    /* MF_REQ_SENDRECV: its send and its receive (owned) until both are done; then the receive's
     * status is kept in peer, tag and buf_len (pt2pt.c, mf_pt2pt_join). */
    struct MPI_ABI_Request *joined[2];
} __attribute__((aligned(MF_CACHE_LINE))); /* a request never shares a line with another */

typedef struct MPI_ABI_Request mf_request_t;

/* A request on a blocking call's stack, with room in front for the transport's own request
 * (mf_vci_request_headroom; UCX 1.22's takes 280 bytes), as a cached request has. */
typedef struct mf_request_local {
    unsigned char headroom[512];
    mf_request_t req;
} mf_request_local_t;

static inline mf_request_t *mf_request_get(MPI_Request handle)
{
    if (!mf_handle_is_object(handle))
        return NULL;
    return handle->kind == MF_KIND_REQUEST ? handle : NULL;
}

mf_status_t mf_request_pool_init(int nvcis);
void mf_request_pool_fini(void);
/* Allocate from the VCI's cache; the VCI lock must be held. Returns NULL on out-of-memory. */
mf_request_t *mf_request_alloc_locked(mf_vci_t *vci, mf_req_type_t type, mf_comm_t *comm);
/* Make a new request persistent (counted on its communicator until released). */
void mf_request_set_persistent(mf_request_t *req);
void mf_request_release_locked(mf_request_t *req);
/* Fill a request that lives outside the cache (on a blocking call's stack). */
void mf_request_init_local(mf_request_t *req, mf_vci_t *vci, mf_req_type_t type, mf_comm_t *comm);
/* The completed send request of a VCI, shared: what a send that finished inside its call returns.
 */
mf_request_t *mf_request_precomplete(mf_vci_t *vci);
mf_request_t *mf_request_proc_null(mf_vci_t *vci);

/* Completion. `status` may be MPI_STATUS_IGNORE. Wait/test free non-persistent requests and set
 * *handle_p to MPI_REQUEST_NULL (inactive persistent requests stay). Both return the MPI error
 * class/code of the operation (MPI_SUCCESS, MPI_ERR_TRUNCATE ...) as int. */
int mf_request_is_complete(mf_request_t *req);
/* Around one test of an array of requests: poll hooks that advance everything at once (the
 * collective schedules') ask mf_request_pass_first_poll and run for the first request only. */
void mf_request_pass_begin(void);
void mf_request_pass_end(void);
int mf_request_pass_first_poll(void);
/* How many other threads went on waiting in MPI calls (polling with nothing to do) during the
 * next watch_ms milliseconds: for MPI_Finalize, which must not destroy what they poll. */
int mf_request_other_waiters(int watch_ms);
void mf_request_wait_done(mf_request_t *req);
/* The same, asking give_up(comm) every 256 empty polls; returns 0 when it said so (the
 * request is still in flight), 1 once the request is done. */
int mf_request_wait_done_unless(mf_request_t *req, int (*give_up)(mf_comm_t *), mf_comm_t *comm);
/* Waits for a library-internal request, releases it and returns its transport status. */
mf_status_t mf_request_finish(mf_request_t *req);
/* Done with nothing left to drive (no poll hook): what a wait checks first, inline. */
static inline int mf_request_done_now(mf_request_t *req)
{
    return req->poll == NULL && mf_vci_op_is_done(&req->op);
}
int mf_request_complete(MPI_Request *handle_p, MPI_Status *status);
/* What completing an array element returns for a request an earlier element of the same array
 * already completed and freed (the same request twice): no MPI error code (code slot 255 holds
 * none but MPI_ERR_LASTCODE), so nothing a generalized request's callback returns reads as it,
 * short of this very value. */
#define MF_REQUEST_FREED_EARLIER (MPI_ERR_REQUEST | (255 << 6))
/* The communicator of a done request whose completion will report an error, held
 * (mf_comm_hold): completing the request may drop the last reference of a communicator the
 * user freed while it was pending, and the error is raised on it afterwards. NULL when the
 * request will not fail, or has no communicator. The caller releases it (mf_comm_release). */
mf_comm_t *mf_request_hold_failing_comm(MPI_Request r);
/* After completing a request of an array: err its error, comm its communicator as read before,
 * held what mf_request_hold_failing_comm gave. Keeps the communicator of the first failure in
 * *failed_comm_p (held; *failed set) and lets go of the rest. */
void mf_request_note_failure(int err, mf_comm_t *comm, mf_comm_t *held, int *failed,
                             mf_comm_t **failed_comm_p);
/* mf_request_complete for an array (Waitall, Testall) whose requests are all done or inactive
 * (MPI_REQUEST_NULL, or persistent and not started: an empty status). Every status gets its
 * MPI_ERROR when statuses are wanted; the VCI lock taken to release one request is kept for
 * the next of the same VCI, so a window costs one lock. Returns 1 when an operation failed,
 * with the communicator of the first in *failed_comm_p, held (NULL for none; the caller
 * releases it). */
int mf_request_complete_all(int count, MPI_Request reqs[], MPI_Status statuses[],
                            mf_comm_t **failed_comm_p);
int mf_request_error(mf_request_t *req);
void mf_request_fill_status(mf_request_t *req, MPI_Status *status);
/* Generalized requests (core_greq.c). The callbacks run with no library lock held. query runs
 * query_fn into `status` (MPI_STATUS_IGNORE allowed) and returns its code, which error then
 * repeats; finish runs free_fn and releases the request (returns `err`, else free_fn's code);
 * free is MPI_Request_free (released now if complete, else by complete). */
mf_status_t mf_greq_start(MPI_Grequest_query_function *query_fn,
                          MPI_Grequest_free_function *free_fn,
                          MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                          mf_request_t **req_p);
void mf_greq_complete(mf_request_t *req);
/* A request of the library's own that completes when poll (called by every completion check
 * while not done) finds its work finished and sets op.done; `arg` is mf_greq_arg's, and
 * `release` (or NULL) is called with it when the request goes. Freed by the user, it goes at
 * once. */
mf_status_t mf_greq_start_polled(void (*poll)(mf_request_t *req),
                                 MPI_Grequest_free_function *release, void *arg,
                                 mf_request_t **req_p);
void *mf_greq_arg(const mf_request_t *req);
int mf_greq_query(mf_request_t *req, MPI_Status *status);
int mf_greq_error(const mf_request_t *req);
int mf_greq_finish(mf_request_t *req, int err);
/* MPI_Request_free: returns free_fn's error when the request goes now. */
int mf_greq_free(mf_request_t *req);
int mf_greq_cancel(mf_request_t *req);
/* Collective schedules (src/coll/coll_sched.c): advance every started schedule once; free one.
 * The progress loops call the first, so a collective moves on whatever request is waited for. */
void mf_sched_progress_all(void);
int mf_sched_started(void); /* schedules started and not finished */
/* Partitioned requests waiting for a control message (src/part/part.c): advanced from every
 * progress loop while any exists (mf_progress_part, one load when none does). */
extern atomic_int mf_part_waiting;
void mf_part_progress_all(void);
static inline __attribute__((always_inline)) void mf_progress_part(void)
{
    if (MF_UNLIKELY(atomic_load_explicit(&mf_part_waiting, memory_order_relaxed) != 0))
        mf_part_progress_all();
}
/* Windows alive (src/rma/rma.c): while any exists, every progress loop also serves the
 * one-sided requests that reached them (mf_progress_rma, one load when none does). */
extern atomic_int mf_rma_windows;
void mf_rma_progress_all(void);
static inline __attribute__((always_inline)) void mf_progress_rma(void)
{
    if (MF_UNLIKELY(atomic_load_explicit(&mf_rma_windows, memory_order_relaxed) != 0))
        mf_rma_progress_all();
}
void mf_sched_free(struct mf_sched *sched);
/* For the progress helper (MANIFOLD_ASYNC_PROGRESS): whether schedules, partitioned set-ups
 * or windows are outstanding, and one round of their progress. */
int mf_progress_upper_pending(void);
void mf_progress_upper(void);
/* Progress all VCIs the process uses once (for Testany/Testall on mixed requests). */
void mf_progress_poke(mf_vci_t *vci, int *polls_p);
/* One poll for a call that only tests: the unsuccessful ones are counted per thread, so
 * polling loops reach the global sweep as waits do. */
void mf_progress_test(mf_vci_t *vci);
int *mf_progress_test_counter(void);

/* ---- status helpers (the 5 private ints: count as 64 bits, cancelled flag) ---------------- */

void mf_status_set(MPI_Status *status, int source, int tag, int error, MPI_Count bytes,
                   int cancelled);
MPI_Count mf_status_bytes(const MPI_Status *status);
int mf_status_cancelled(const MPI_Status *status);
void mf_status_set_empty(MPI_Status *status);

/* ---- predefined datatypes ---------------------------------------------------------------- */

typedef struct mf_dtype_info {
    int size;   /* bytes of data; MPI_UNDEFINED when the type is not supported */
    int extent; /* bytes spanned, including padding of pair types */
    int nbasic; /* basic elements per item (2 for pair types) */
    /* The extent when items move straight from memory as they lie (size == extent), else 0:
     * unused slots, and the pair types with padding, which pack like a struct
     * (mf_dtype_pair_twin). The one field the point-to-point fast path reads. */
    int direct;
    const char *name;
} mf_dtype_info_t;

/* Indexed by the low byte of a predefined datatype handle (0x200-0x2ff); unused slots have
 * no name. Read on every message, hence visible to inline functions. */
extern mf_dtype_info_t mf_dtype_predefined_table[256];

/* NULL when `dt` is not a valid predefined datatype. */
static inline const mf_dtype_info_t *mf_dtype_predefined(MPI_Datatype dt)
{
    uintptr_t v = (uintptr_t)dt;
    if (v < 0x200 || v > 0x2ff)
        return NULL;
    const mf_dtype_info_t *info = &mf_dtype_predefined_table[v & 0xff];
    return info->name != NULL ? info : NULL;
}

/* Derived datatypes and the pack engine. */
#include "core_dtype.h"

/* Unpack a completed receive that staged a derived datatype (once; no-op otherwise). */
void mf_request_unpack(mf_request_t *req);

/* ---- messages (matched probe) ------------------------------------------------------------ */

struct MPI_ABI_Message {
    uint32_t kind;
    mf_comm_t *comm;
    mf_vci_t *vci;
    mf_vci_msg_t msg;
};

/* ---- info objects ----------------------------------------------------------------------- */

struct MPI_ABI_Info {
    uint32_t kind;
    pthread_mutex_t lock;
    int nkeys, cap;        /* keys set; room in keys and values */
    char **keys, **values; /* in the order the keys were first set */
    int *index;            /* hash index: key numbers, -1 for a free slot; NULL for few keys */
    size_t index_size;     /* slots in index, a power of two */
};

static inline struct MPI_ABI_Info *mf_info_get_obj(MPI_Info handle)
{
    if (!mf_handle_is_object(handle))
        return NULL;
    return handle->kind == MF_KIND_INFO ? handle : NULL;
}

mf_status_t mf_info_create(struct MPI_ABI_Info **info_p);
/* The contents of MPI_INFO_ENV (command, argv, maxprocs, host, arch, wdir, thread_level), built
 * on the first call and completed by the first call after initialisation; never freed by the
 * caller. NULL when out of memory. */
struct MPI_ABI_Info *mf_info_env(void);
/* A new info object with MPI_INFO_ENV's keys (maxprocs and thread_level only once initialised),
 * command and argv taken from argv when argc > 0. */
mf_status_t mf_info_create_env(int argc, char *argv[], struct MPI_ABI_Info **info_p);
void mf_info_free(struct MPI_ABI_Info *info);
mf_status_t mf_info_set(struct MPI_ABI_Info *info, const char *key, const char *value);
mf_status_t mf_info_delete(struct MPI_ABI_Info *info, const char *key);
/* 1 when key is present: *len_p = value length; value (if not NULL) gets up to size-1 bytes. */
int mf_info_get(struct MPI_ABI_Info *info, const char *key, char *value, size_t size,
                size_t *len_p);
int mf_info_nkeys(struct MPI_ABI_Info *info);
int mf_info_nthkey(struct MPI_ABI_Info *info, int n, char *key, size_t size);
mf_status_t mf_info_dup(struct MPI_ABI_Info *info, struct MPI_ABI_Info **out_p);
/* What an info returned to the user says of mpi_memory_alloc_kinds (MPI-4.1 section 11.4.3):
 * the requested kinds this library supports (host memory: "mpi" and "system", with their
 * restrictors), none of them the key removed, no request the default "mpi,system". */
mf_status_t mf_info_memory_kinds(struct MPI_ABI_Info *info);
/* Every key of src set in dst (another object), replacing the value dst had. Linear in the
 * number of keys, as is mf_info_dup (a copy in the same order). */
mf_status_t mf_info_update(struct MPI_ABI_Info *dst, struct MPI_ABI_Info *src);

#endif /* MF_CORE_H */
