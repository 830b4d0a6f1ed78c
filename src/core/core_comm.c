/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: communicators. Context ids are agreed by all members without a dedicated
 * protocol round: every process offers its free ids (a bitmap AND-reduced over the parent),
 * a candidate is picked from the agreed set, each process reserves it, and a second AND confirms
 * that every process could. Candidates start at a point derived from the parent and its creation
 * count, so threads creating communicators from different parents at once rarely collide; when
 * they do, all members release and retry. Freed ids are reused.
 *
 * The same agreement picks the communicator's VCI: each process also offers the pool VCIs no
 * communicator of its uses and those whose peers' addresses it already knows, so one AND gives
 * every member the same choice — a VCI free everywhere (one already connected if possible),
 * else the shared VCI 0. Only when some member lacks the chosen VCI's addresses do the members
 * exchange them (once per VCI and set of peers). Hints (mpi_assert_no_any_source/_tag) spread a
 * communicator's point-to-point traffic over the whole pool; see mf_comm_set_info.
 */
#include "core.h"

#include "coll.h"
#include "core_topo.h"
#include "pmi.h"
#include "pt2pt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

mf_comm_t mf_comm_world, mf_comm_self;

#define CTX_WORDS (MF_CONTEXT_MAX / 64)

static struct {
    pthread_mutex_t lock;
    uint64_t used[CTX_WORDS];
    int vci_users[MF_VCI_MAX]; /* communicators of this process mapped to each VCI */
    mf_comm_t *free_objects;   /* recycled, never returned to the OS: stale handles stay readable */
} comms = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void comm_setup(mf_comm_t *comm, unsigned context_id, int vci_index, int rank, int size,
                       int *world_ranks)
{
    comm->kind = MF_KIND_COMM;
    atomic_init(&comm->refs, 1);
    comm->rank = rank;
    comm->tag_rank = rank;
    comm->world_tags = 0;
    comm->size = size;
    comm->context_id = context_id;
    comm->world_ranks = world_ranks;
    comm->vci = mf_vci_get(vci_index);
    comm->vci_spread = 1;
    comm->spread_by = 0;
    comm->hints = 0;
    comm->unmatched = 0;
    comm->open_recvs = 0;
    comm->part_live = 0;
    comm->home_requests = 0;
    comm->home_held = 0;
    comm->home_drop = 0;
    atomic_store(&comm->errhandler, MPI_ERRORS_ARE_FATAL);
    comm->create_seq = 0;
    atomic_init(&comm->idup_abandoned, 0);
    comm->nbc_seq = 0;
    comm->nbc_pseq = 0;
    comm->name[0] = '\0';
    comm->info = NULL;
    comm->attrs = NULL;
    comm->topo = NULL;
    comm->remote_size = 0;
    comm->remote_ranks = NULL;
    comm->local_comm = NULL;
    comm->shm = NULL;
    pthread_mutex_init(&comm->name_lock, NULL);
}

mf_status_t mf_comm_init_builtin(void)
{
    memset(comms.used, 0, sizeof(comms.used));
    memset(comms.vci_users, 0, sizeof(comms.vci_users));
    comms.used[0] |= (1ull << MF_CONTEXT_WORLD) | (1ull << MF_CONTEXT_SELF);
    comm_setup(&mf_comm_world, MF_CONTEXT_WORLD, 0, mf_global.world_rank, mf_global.world_size,
               NULL);
    snprintf(mf_comm_world.name, sizeof(mf_comm_world.name), "MPI_COMM_WORLD");
    int *self_rank = mf_malloc(sizeof(int), "self communicator");
    if (self_rank == NULL)
        return MF_ERR_NO_MEMORY;
    self_rank[0] = mf_global.world_rank;
    comm_setup(&mf_comm_self, MF_CONTEXT_SELF, 0, 0, 1, self_rank);
    snprintf(mf_comm_self.name, sizeof(mf_comm_self.name), "MPI_COMM_SELF");
    return MF_OK;
}

void mf_comm_fini_builtin(void)
{
    mf_coll_shm_free(&mf_comm_world);
    mf_coll_shm_free(&mf_comm_self);
    free(mf_comm_self.world_ranks);
    mf_comm_self.world_ranks = NULL;
    mf_comm_world.kind = MF_KIND_FREED;
    mf_comm_self.kind = MF_KIND_FREED;
}

static void ctx_release(unsigned id)
{
    pthread_mutex_lock(&comms.lock);
    comms.used[id / 64] &= ~(1ull << (id % 64));
    pthread_mutex_unlock(&comms.lock);
}

static void vci_release(int index)
{
    pthread_mutex_lock(&comms.lock);
    comms.vci_users[index]--;
    pthread_mutex_unlock(&comms.lock);
}

/* What a communicator object owns in memory, then the object back to the pool (not its
 * context id, VCI use, shared memory or local_comm: comm_destroy and pending_discard differ
 * there). */
static void comm_object_free(mf_comm_t *comm)
{
    mf_handle_forget(comm);
    mf_errhandler_release(atomic_load(&comm->errhandler));
    free(comm->world_ranks);
    comm->world_ranks = NULL;
    if (comm->info != NULL)
        mf_info_free(comm->info);
    comm->info = NULL;
    mf_topo_free(comm->topo);
    comm->topo = NULL;
    free(comm->remote_ranks);
    comm->remote_ranks = NULL;
    /* Buffered sends in flight hold the communicator, so its buffer is idle by now. */
    free(atomic_exchange(&comm->bsend_pool, NULL));
    comm->session = NULL;
    pthread_mutex_destroy(&comm->name_lock);
    comm->kind = MF_KIND_FREED;
    pthread_mutex_lock(&comms.lock);
    comm->next_free = comms.free_objects;
    comms.free_objects = comm;
    pthread_mutex_unlock(&comms.lock);
}

static void comm_destroy(mf_comm_t *comm)
{
    /* A context id that may still carry messages of collectives that gave up is never used
     * again, so no later communicator receives them. */
    if (!mf_coll_shm_free(comm))
        ctx_release(comm->context_id);
    vci_release(mf_vci_index(comm->vci));
    if (comm->local_comm != NULL)
        mf_comm_release(comm->local_comm);
    comm->local_comm = NULL;
    comm_object_free(comm);
}

/* The communicator of an MPI_Comm_idup whose agreement failed: it took no context id and no
 * VCI use, so only the attributes copied at the call (their delete callbacks run) and its
 * memory go; the user's handle reads as freed. */
static void pending_discard(mf_comm_t *comm)
{
    int ignored;
    if (mf_comm_attr_delete_all(comm, &ignored) != MF_OK)
        mf_log(MF_LOG_WARN, "comm",
               "MPI_Comm_idup failed and an attribute's delete callback "
               "failed on the communicator it had begun");
    if (comm->local_comm != NULL)
        pending_discard(comm->local_comm);
    comm->local_comm = NULL;
    comm_object_free(comm);
}

void mf_comm_release(mf_comm_t *comm)
{
    /* Operations still in flight keep the communicator (and its context id) alive; the last
     * reference to go destroys it. */
    if (atomic_fetch_sub_explicit(&comm->refs, 1, memory_order_acq_rel) == 1)
        comm_destroy(comm);
}

/* From now on the home requests' shared reference goes with their last one (now, if none is
 * left). */
static void home_drop(mf_comm_t *comm)
{
    if (comm->home_drop)
        return;
    mf_vci_lock(comm->vci);
    comm->home_drop = 1;
    int drop = comm->home_requests == 0 && comm->home_held;
    if (drop)
        comm->home_held = 0;
    mf_vci_unlock(comm->vci);
    if (drop)
        mf_comm_release(comm);
}

void mf_comm_set_private(mf_comm_t *comm)
{
    home_drop(comm);
}

void mf_comm_free(mf_comm_t *comm)
{
    /* The handle is dead from now on, although operations in flight may keep the object: a
     * copy of it is MPI_ERR_COMM (a second free took the requests' reference, and the object
     * was recycled under them). */
    comm->kind = MF_KIND_FREED;
    home_drop(comm);
    mf_comm_release(comm); /* the user's reference */
}

void mf_comm_vci_mapping(const mf_comm_t *comm, int *home_p, int *spread_p)
{
    *home_p = mf_vci_index(comm->vci);
    int spread = atomic_load_explicit(&comm->vci_spread, memory_order_acquire);
    *spread_p = spread == 0 ? 1 : spread; /* deciding: still on the home VCI */
}

static mf_comm_t *comm_object_new(void)
{
    pthread_mutex_lock(&comms.lock);
    mf_comm_t *comm = comms.free_objects;
    if (comm != NULL)
        comms.free_objects = comm->next_free;
    pthread_mutex_unlock(&comms.lock);
    if (comm == NULL)
        comm = mf_calloc(1, sizeof(*comm), "communicator");
    return comm;
}

/* First id set in `mask` at or after `start`, wrapping around; -1 when none. */
static int ctx_pick(const uint64_t *mask, unsigned start)
{
    for (unsigned i = 0; i < MF_CONTEXT_MAX; i++) {
        unsigned id = (start + i) % MF_CONTEXT_MAX;
        if (mask[id / 64] & (1ull << (id % 64)))
            return (int)id;
    }
    return -1;
}

/* The context ids free in this process: mask[] gets a set bit for each. comms.lock held. */
static void ctx_free_mask_locked(uint64_t *mask)
{
    for (int i = 0; i < CTX_WORDS; i++)
        mask[i] = ~comms.used[i];
}

static int ctx_is_used_locked(int id)
{
    return (comms.used[id / 64] >> (id % 64)) & 1;
}

/* Reserve the n ids picked from an agreed snapshot, all or none: another thread of this
 * process may have taken one since. 1 when they are ours now. */
static uint64_t ctx_reserve(const int *ids, int n)
{
    uint64_t ok = 1;
    pthread_mutex_lock(&comms.lock);
    for (int k = 0; k < n; k++)
        ok &= !ctx_is_used_locked(ids[k]);
    for (int k = 0; ok && k < n; k++)
        comms.used[ids[k] / 64] |= 1ull << (ids[k] % 64);
    pthread_mutex_unlock(&comms.lock);
    return ok;
}

/* VCIs (beyond the shared VCI 0) no communicator of this process uses; comms.lock held. */
static uint64_t vci_free_mask(void)
{
    uint64_t mask = 0;
    for (int i = 1; i < mf_vci_pool_size(); i++) {
        if (comms.vci_users[i] == 0)
            mask |= 1ull << i;
    }
    return mask;
}

/* VCIs that already know the addresses of every member of `over`. */
static uint64_t vci_ready_mask(mf_comm_t *over)
{
    uint64_t mask = 0;
    for (int i = 0; i < mf_vci_pool_size(); i++) {
        if (mf_vci_knows_peers(mf_vci_get(i), over->world_ranks, over->size))
            mask |= 1ull << i;
    }
    return mask;
}

static int lowest_bit(uint64_t mask)
{
    return mask == 0 ? -1 : __builtin_ctzll(mask);
}

/* An all-to-all of variable-length blobs over `over` by AND reductions: each process fills its
 * own slot and all-ones elsewhere, so the AND leaves every slot with its owner's bytes. Two
 * rounds (lengths, then data); it runs on the internal context with the caller's tag, so it is
 * usable over a group view. Used for the rare address exchanges only. `blobs_p` gets
 * over->size slots of *slot_p bytes each (caller frees); lens_p (caller frees) their lengths. */
/* More than any process's addresses: every VCI's UCX worker address, a few hundred bytes each. */
#define BLOB_MAX ((uint64_t)1 << 24)

static mf_status_t blob_allgather(mf_comm_t *over, int tag, const void *mine, size_t len,
                                  unsigned char **blobs_p, size_t *slot_p, uint64_t **lens_p)
{
    int n = over->size;
    uint64_t *lens = mf_malloc(sizeof(uint64_t) * (size_t)n, "exchange lengths");
    if (lens == NULL)
        return MF_ERR_NO_MEMORY;
    for (int i = 0; i < n; i++)
        lens[i] = ~(uint64_t)0;
    lens[over->rank] = len;
    mf_status_t status = mf_coll_allreduce_band_tag(over, tag, lens, n);
    if (status != MF_OK) {
        free(lens);
        return status;
    }
    /* The AND leaves this process's own length in its slot unless messages of another
     * exchange came in (two string tags of the same hash, created at once): then the slots
     * would not hold what is copied into them. */
    size_t slot = 8;
    for (int i = 0; i < n; i++) {
        if (lens[i] > BLOB_MAX || (i == over->rank && lens[i] != len)) {
            mf_log(MF_LOG_ERROR, "comm",
                   "address exchange: rank %d's length reads %llu; another exchange's messages "
                   "came in (string tags of one hash created at the same time?)",
                   mf_comm_world_rank(over, i), (unsigned long long)lens[i]);
            free(lens);
            return MF_ERR_PROTOCOL;
        }
        if (lens[i] > slot)
            slot = (size_t)lens[i];
    }
    slot = (slot + 7) / 8 * 8;
    unsigned char *blobs = mf_malloc(slot * (size_t)n, "exchange data");
    if (blobs == NULL) {
        free(lens);
        return MF_ERR_NO_MEMORY;
    }
    memset(blobs, 0xff, slot * (size_t)n);
    memcpy(blobs + slot * (size_t)over->rank, mine, len);
    status = mf_coll_allreduce_band_tag(over, tag, (uint64_t *)(void *)blobs,
                                        (int)(slot / 8 * (size_t)n));
    if (status != MF_OK) {
        free(blobs);
        free(lens);
        return status;
    }
    *blobs_p = blobs;
    *slot_p = slot;
    *lens_p = lens;
    return MF_OK;
}

/* Collective over `over`: activate the VCIs in `vcis` and tell every member's VCIs the others'
 * addresses. The blob of each process is a list of (VCI index, length, address). */
static mf_status_t vci_exchange(mf_comm_t *over, int tag, uint64_t vcis)
{
    size_t len = 0;
    for (uint64_t m = vcis; m != 0; m &= m - 1) {
        mf_vci_t *vci = mf_vci_get(lowest_bit(m));
        mf_status_t status = mf_vci_activate(vci);
        if (status != MF_OK)
            return status;
        const void *addr;
        size_t alen;
        mf_vci_local_address(vci, &addr, &alen);
        len += 2 * sizeof(uint32_t) + alen;
    }
    unsigned char *mine = mf_malloc(len, "local addresses"), *p = mine;
    if (mine == NULL)
        return MF_ERR_NO_MEMORY;
    for (uint64_t m = vcis; m != 0; m &= m - 1) {
        uint32_t head[2] = {(uint32_t)lowest_bit(m), 0};
        const void *addr;
        size_t alen;
        mf_vci_local_address(mf_vci_get(lowest_bit(m)), &addr, &alen);
        head[1] = (uint32_t)alen;
        memcpy(p, head, sizeof(head));
        memcpy(p + sizeof(head), addr, alen);
        p += sizeof(head) + alen;
    }
    unsigned char *blobs;
    size_t slot;
    uint64_t *lens;
    mf_status_t status = blob_allgather(over, tag, mine, len, &blobs, &slot, &lens);
    free(mine);
    if (status != MF_OK)
        return status;
    for (int r = 0; r < over->size && status == MF_OK; r++) {
        int peer = mf_comm_world_rank(over, r);
        unsigned char *q = blobs + slot * (size_t)r, *end = q + lens[r];
        while (q + 2 * sizeof(uint32_t) <= end && status == MF_OK) {
            uint32_t head[2];
            memcpy(head, q, sizeof(head));
            q += sizeof(head);
            if (head[0] >= (uint32_t)mf_vci_pool_size() || q + head[1] > end) {
                mf_log(MF_LOG_ERROR, "comm", "malformed address exchange from rank %d", peer);
                status = MF_ERR_PROTOCOL;
                break;
            }
            if (peer != mf_global.world_rank)
                status = mf_vci_set_peer_address(mf_vci_get((int)head[0]), peer, q, head[1]);
            q += head[1];
        }
    }
    free(blobs);
    free(lens);
    return status;
}

/* Agree on a context id free on every member of `over` (the parent itself, or a view of a group
 * of its members) and on a VCI for it (reserved here; *vci_p; none when vci_p is NULL). `seed`
 * must be the same on all of them: it picks where the search starts. */
static mf_status_t ctx_agree(mf_comm_t *over, int tag, unsigned seed, unsigned *id_p, int *vci_p)
{
    enum { VCI_FREE = CTX_WORDS, VCI_READY, AGREE_WORDS };
    uint64_t mask[AGREE_WORDS];
    uint64_t ready = vci_ready_mask(over);
    for (unsigned attempt = 0;; attempt++) {
        pthread_mutex_lock(&comms.lock);
        ctx_free_mask_locked(mask);
        mask[VCI_FREE] = vci_free_mask();
        pthread_mutex_unlock(&comms.lock);
        mask[VCI_READY] = ready;
        mf_status_t status = mf_coll_allreduce_band_tag(over, tag, mask, AGREE_WORDS);
        if (status != MF_OK)
            return status;
        unsigned start = (seed + attempt * 977u) % MF_CONTEXT_MAX;
        int id = ctx_pick(mask, start);
        if (id < 0) {
            mf_log(MF_LOG_DEBUG, "comm",
                   "no context id is free on all %d processes (at most %d "
                   "communicators may exist at once)",
                   over->size, MF_CONTEXT_MAX);
            return MF_ERR_EXHAUSTED;
        }
        uint64_t reserved = ctx_reserve(&id, 1), all = reserved;
        status = mf_coll_allreduce_band_tag(over, tag, &all, 1);
        if (status == MF_OK && all && vci_p == NULL) {
            *id_p = (unsigned)id;
            return MF_OK;
        }
        if (status == MF_OK && all) {
            /* A VCI free on every member, preferring one that is already connected; when the
             * pool is exhausted, the shared VCI 0. (Another thread may take the same VCI
             * meanwhile: then two communicators share it, which is only slower.) */
            int vci = lowest_bit(mask[VCI_FREE] & mask[VCI_READY]);
            if (vci < 0)
                vci = lowest_bit(mask[VCI_FREE]);
            if (vci < 0)
                vci = 0;
            pthread_mutex_lock(&comms.lock);
            comms.vci_users[vci]++;
            pthread_mutex_unlock(&comms.lock);
            if (!(mask[VCI_READY] & (1ull << vci)))
                status = vci_exchange(over, tag, 1ull << vci);
            if (status != MF_OK) {
                vci_release(vci);
                ctx_release((unsigned)id);
                return status;
            }
            *id_p = (unsigned)id;
            *vci_p = vci;
            return MF_OK;
        }
        if (reserved)
            ctx_release((unsigned)id);
        if (status != MF_OK)
            return status;
    }
}

/* The internal tag of the parent-wide agreements (coll uses 1-3 for its own algorithms). */
#define CTX_AGREE_TAG 2

/* A new communicator with context id `id` and the parent's error handler. */
static mf_status_t comm_build(mf_comm_t *parent, unsigned id, int vci, int new_size,
                              int my_new_rank, const int *world_ranks, mf_comm_t **comm_p)
{
    int *ranks = mf_malloc(sizeof(int) * (size_t)new_size, "communicator ranks");
    mf_comm_t *comm = comm_object_new();
    if (ranks == NULL || comm == NULL) {
        free(ranks);
        free(comm);
        ctx_release(id);
        vci_release(vci);
        return MF_ERR_NO_MEMORY;
    }
    memcpy(ranks, world_ranks, sizeof(int) * (size_t)new_size);
    comm_setup(comm, id, vci, my_new_rank, new_size, ranks);
    atomic_store(&comm->errhandler, mf_errhandler_acquire(&parent->errhandler));
    comm->session = parent->session;
    *comm_p = comm;
    return MF_OK;
}

mf_status_t mf_comm_create_from(mf_comm_t *parent, int new_size, int my_new_rank,
                                const int *world_ranks, mf_comm_t **comm_p)
{
    unsigned id;
    int vci;
    unsigned seed = parent->context_id * 2654435761u + parent->create_seq * 40503u;
    mf_status_t status = ctx_agree(parent, CTX_AGREE_TAG, seed, &id, &vci);
    parent->create_seq++;
    if (status != MF_OK)
        return status;
    if (my_new_rank < 0) {
        /* Not a member: the id and VCI only had to be free here for the agreement. */
        ctx_release(id);
        vci_release(vci);
        *comm_p = NULL;
        return MF_OK;
    }
    return comm_build(parent, id, vci, new_size, my_new_rank, world_ranks, comm_p);
}

mf_status_t mf_comm_dup_internal(mf_comm_t *parent, mf_comm_t **comm_p)
{
    unsigned id;
    unsigned seed = parent->context_id * 2654435761u + parent->create_seq * 40503u;
    mf_status_t status = ctx_agree(parent, CTX_AGREE_TAG, seed, &id, NULL);
    parent->create_seq++;
    if (status != MF_OK)
        return status;
    int vci = mf_vci_index(parent->vci);
    pthread_mutex_lock(&comms.lock);
    comms.vci_users[vci]++;
    pthread_mutex_unlock(&comms.lock);
    int *ranks = mf_malloc(sizeof(int) * (size_t)parent->size, "communicator ranks");
    if (ranks == NULL) {
        ctx_release(id);
        vci_release(vci);
        return MF_ERR_NO_MEMORY;
    }
    for (int i = 0; i < parent->size; i++)
        ranks[i] = mf_comm_world_rank(parent, i);
    status = comm_build(parent, id, vci, parent->size, parent->rank, ranks, comm_p);
    free(ranks);
    return status;
}

/* `view_ctx`: the context index of the view the agreement runs on (see below). */
static mf_status_t create_group_on(mf_comm_t *parent, unsigned view_ctx, const mf_group_t *group,
                                   int tag, mf_comm_t **comm_p)
{
    /* Only the group's members take part, so the agreement cannot use the parent's collectives
     * (nor its creation count, which must stay equal on all of the parent's processes). It runs
     * over a view of the group: the parent's VCI, the group's ranks, and a context index beyond
     * every real one, so its messages match neither the parent's traffic nor another view's
     * with a different tag. */
    /* One reference that is never dropped: requests over the view must not destroy it. */
    mf_comm_t view = {.kind = MF_KIND_COMM,
                      .refs = 1,
                      .vci_spread = 1,
                      .rank = group->rank,
                      .tag_rank = mf_global.world_rank,
                      .world_tags = 1,
                      .size = group->size,
                      .context_id = view_ctx,
                      .world_ranks = group->world_ranks,
                      .vci = parent->vci};
    /* World ranks are this job's numbers: a group that spans jobs names its members by group
     * rank (then only a later creation with the same tag whose messages arrive early could
     * mistake them; the standard asks for distinct tags on concurrent ones). */
    int spans = 0;
    for (int i = 0; i < group->size; i++)
        spans |= group->world_ranks[i] >= mf_global.world_size;
    if (spans) {
        view.tag_rank = group->rank;
        view.world_tags = 0;
    }
    mf_comm_t first = {.size = 1, .world_ranks = group->world_ranks};
    unsigned first_key = spans ? mf_comm_proc_key(&first, 0) : (unsigned)group->world_ranks[0];
    unsigned seed =
        view_ctx * 2654435761u + (unsigned)tag * 40503u + first_key * 7919u + (unsigned)group->size;
    unsigned id;
    int vci;
    mf_status_t status = ctx_agree(&view, tag, seed, &id, &vci);
    if (status != MF_OK)
        return status;
    return comm_build(parent, id, vci, group->size, group->rank, group->world_ranks, comm_p);
}

mf_status_t mf_comm_create_group(mf_comm_t *parent, const mf_group_t *group, int tag,
                                 mf_comm_t **comm_p)
{
    return create_group_on(parent, parent->context_id + MF_CONTEXT_MAX, group, tag, comm_p);
}

/* The creations named by a string tag run on group views of the world's processes whose
 * contexts lie above those of every communicator and every integer tag's view (from
 * 2 x MF_CONTEXT_MAX): a 64-bit FNV-1a hash of the string picks one of STRINGTAG_VIEWS views
 * and the tag in it, so two strings created at the same time meet only when 38 bits of their
 * hashes agree (24 did once: a deliberate pair broke both creations). */
#define STRINGTAG_VIEWS 16384
_Static_assert((2 * MF_CONTEXT_MAX + STRINGTAG_VIEWS) * 2 <= (1 << MF_PT2PT_CTX_BITS),
               "the string tags' views have transport contexts");

typedef struct stringtag_link {
    unsigned context_id; /* of the view */
    int tag;
} stringtag_link_t;

static stringtag_link_t stringtag_link(const char *stringtag)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)stringtag; *p != '\0'; p++)
        h = (h ^ *p) * 1099511628211ull;
    stringtag_link_t link = {2 * MF_CONTEXT_MAX +
                                 (unsigned)((h >> MF_PT2PT_TAG_BITS) % STRINGTAG_VIEWS),
                             (int)(h % ((uint64_t)MF_PT2PT_TAG_UB + 1))};
    return link;
}

mf_status_t mf_comm_create_from_stringtag(const mf_group_t *group, const char *stringtag,
                                          mf_comm_t **comm_p)
{
    stringtag_link_t link = stringtag_link(stringtag);
    return create_group_on(&mf_comm_world, link.context_id, group, link.tag, comm_p);
}

static mf_status_t hints_apply(mf_comm_t *comm, int live);

static mf_status_t inter_dup(mf_comm_t *inter, mf_comm_t **comm_p);
static mf_status_t inter_split(mf_comm_t *inter, int color, int key, mf_comm_t **comm_p);

mf_status_t mf_comm_dup(mf_comm_t *parent, mf_comm_t **comm_p)
{
    if (mf_comm_is_inter(parent)) {
        mf_status_t status = inter_dup(parent, comm_p);
        if (status != MF_OK)
            return status;
        pthread_mutex_lock(&parent->name_lock);
        if (parent->info != NULL)
            status = mf_info_dup(parent->info, &(*comm_p)->info);
        pthread_mutex_unlock(&parent->name_lock);
        if (status != MF_OK) {
            mf_comm_free(*comm_p);
            *comm_p = NULL;
        }
        return status;
    }
    int *ranks = mf_malloc(sizeof(int) * (size_t)parent->size, "communicator ranks");
    if (ranks == NULL)
        return MF_ERR_NO_MEMORY;
    for (int i = 0; i < parent->size; i++)
        ranks[i] = mf_comm_world_rank(parent, i);
    mf_status_t status = mf_comm_create_from(parent, parent->size, parent->rank, ranks, comm_p);
    free(ranks);
    if (status != MF_OK)
        return status;
    /* MPI_Comm_dup keeps the parent's hints (MPI-4.1 section 7.4.2). */
    pthread_mutex_lock(&parent->name_lock);
    if (parent->info != NULL)
        status = mf_info_dup(parent->info, &(*comm_p)->info);
    pthread_mutex_unlock(&parent->name_lock);
    /* ... and its topology (section 8.4): the topology is immutable, no lock needed. */
    if (status == MF_OK && parent->topo != NULL)
        status = mf_topo_dup(parent->topo, &(*comm_p)->topo);
    if (status == MF_OK && parent->hints != 0)
        status = hints_apply(*comm_p, 0);
    if (status != MF_OK) {
        mf_comm_free(*comm_p);
        *comm_p = NULL;
    }
    return status;
}

/* MPI_Comm_idup on an intracommunicator: the agreement of ctx_agree as a schedule on the
 * parent, so the call returns at once and the agreement advances with every other collective
 * (two idups started in opposite orders on different processes both complete). Each attempt
 * is: snapshot the free ids and VCIs, AND them over the parent, pick and reserve a candidate,
 * AND the reservations; a failed attempt appends the next one. Every attempt reuses the tag
 * taken at the call: its rounds run one after the other on every process and messages
 * between two processes with one tag do not overtake. No address exchange is possible
 * without blocking, so the VCI is one free everywhere and already connected, else the
 * parent's; hints are kept (wildcards refused) but traffic is not spread. */
enum { IDUP_FREE = CTX_WORDS, IDUP_READY, IDUP_WORDS };

typedef struct idup {
    mf_comm_t *parent, *comm;
    unsigned seed, attempt;
    int id, with_info;
    uint64_t mask[IDUP_WORDS];
    uint64_t mine, all; /* this process reserved the candidate; everyone did */
} idup_t;

static void idup_attempt(mf_sched_t *s, idup_t *st);

static mf_status_t idup_snapshot(mf_sched_t *s, void *arg)
{
    idup_t *st = arg;
    (void)s;
    pthread_mutex_lock(&comms.lock);
    ctx_free_mask_locked(st->mask);
    st->mask[IDUP_FREE] = vci_free_mask();
    pthread_mutex_unlock(&comms.lock);
    st->mask[IDUP_READY] = vci_ready_mask(st->parent);
    return MF_OK;
}

static mf_status_t idup_reserve(mf_sched_t *s, void *arg)
{
    idup_t *st = arg;
    (void)s;
    st->id = ctx_pick(st->mask, (st->seed + st->attempt * 977u) % MF_CONTEXT_MAX);
    if (st->id < 0) {
        /* the same on every process (the mask is agreed): idup_decide ends the request */
        mf_log(MF_LOG_DEBUG, "comm",
               "no context id is free on all %d processes (at most %d communicators may exist at "
               "once)",
               st->parent->size, MF_CONTEXT_MAX);
        st->mine = st->all = 0;
        return MF_OK;
    }
    st->mine = ctx_reserve(&st->id, 1);
    st->all = st->mine;
    return MF_OK;
}

static mf_status_t idup_decide(mf_sched_t *s, void *arg)
{
    idup_t *st = arg;
    if (st->id < 0) {
        pending_discard(st->comm);
        return MF_ERR_EXHAUSTED;
    }
    if (!st->all) {
        /* Someone could not reserve the candidate (another communicator took it meanwhile):
         * release ours and try the next one. */
        if (st->mine)
            ctx_release((unsigned)st->id);
        st->attempt++;
        idup_attempt(s, st);
        return MF_OK;
    }
    if (atomic_load(&st->comm->idup_abandoned)) {
        /* The call failed here; the others have their communicator. */
        ctx_release((unsigned)st->id);
        pending_discard(st->comm);
        return MF_OK;
    }
    int vci = lowest_bit(st->mask[IDUP_FREE] & st->mask[IDUP_READY]);
    if (vci < 0)
        vci = mf_vci_index(st->parent->vci);
    pthread_mutex_lock(&comms.lock);
    comms.vci_users[vci]++;
    pthread_mutex_unlock(&comms.lock);
    mf_comm_t *comm = st->comm, *parent = st->parent;
    comm->context_id = (unsigned)st->id;
    comm->vci = mf_vci_get(vci);
    /* The parent's agreed assertions; idup_with_info's are not agreed on: none applied. */
    comm->hints = st->with_info ? 0 : parent->hints;
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&parent->name_lock);
    if (parent->info != NULL && !st->with_info)
        status = mf_info_dup(parent->info, &comm->info);
    pthread_mutex_unlock(&parent->name_lock);
    if (status == MF_OK && parent->topo != NULL)
        status = mf_topo_dup(parent->topo, &comm->topo);
    /* Usable from now on: the handle checks see a communicator. */
    atomic_thread_fence(memory_order_release);
    comm->kind = MF_KIND_COMM;
    return status;
}

static void idup_attempt(mf_sched_t *s, idup_t *st)
{
    mf_sched_barrier(s);
    mf_sched_call(s, idup_snapshot, st);
    mf_sched_barrier(s);
    mf_nbc_allreduce(s, st->mask, st->mask, IDUP_WORDS, MPI_UINT64_T, 8, MPI_BAND);
    mf_sched_barrier(s);
    mf_sched_call(s, idup_reserve, st);
    mf_sched_barrier(s);
    mf_nbc_allreduce(s, &st->all, &st->all, 1, MPI_UINT64_T, 8, MPI_BAND);
    mf_sched_barrier(s);
    mf_sched_call(s, idup_decide, st);
    mf_sched_barrier(s);
}

static mf_status_t inter_idup(mf_comm_t *parent, int with_info, struct MPI_ABI_Info *info,
                              mf_comm_t **comm_p, mf_request_t **req_p);

mf_status_t mf_comm_idup(mf_comm_t *parent, int with_info, struct MPI_ABI_Info *info,
                         mf_comm_t **comm_p, mf_request_t **req_p)
{
    if (mf_comm_is_inter(parent))
        return inter_idup(parent, with_info, info, comm_p, req_p);
    int *ranks = mf_malloc(sizeof(int) * (size_t)parent->size, "communicator ranks");
    mf_comm_t *comm = comm_object_new();
    mf_sched_t *s = mf_sched_create(parent, mf_sched_next_tag(parent, 0));
    idup_t *st = s != NULL ? mf_sched_tmp(s, sizeof(*st)) : NULL;
    if (ranks == NULL || comm == NULL || st == NULL) {
        free(ranks);
        free(comm);
        if (s != NULL)
            mf_sched_free(s);
        return MF_ERR_NO_MEMORY;
    }
    /* The info copy comes first: a failure after comm_setup would have to undo a context id
     * and a VCI use that the placeholder set-up never took. */
    struct MPI_ABI_Info *kept = NULL;
    if (with_info && info != NULL && mf_info_dup(info, &kept) != MF_OK) {
        free(ranks);
        free(comm);
        mf_sched_free(s);
        return MF_ERR_NO_MEMORY;
    }
    for (int i = 0; i < parent->size; i++)
        ranks[i] = mf_comm_world_rank(parent, i);
    /* Set up now so attributes can be copied at the call; unusable until the agreement. */
    comm_setup(comm, 0, mf_vci_index(parent->vci), parent->rank, parent->size, ranks);
    comm->kind = MF_KIND_COMM_PENDING;
    comm->info = kept;
    atomic_store(&comm->errhandler, mf_errhandler_acquire(&parent->errhandler));
    comm->session = parent->session;
    memset(st, 0, sizeof(*st));
    st->parent = parent;
    st->comm = comm;
    st->with_info = with_info;
    st->seed = parent->context_id * 2654435761u + parent->create_seq * 40503u;
    parent->create_seq++;
    idup_attempt(s, st);
    mf_request_t *req;
    mf_status_t status = mf_sched_request(s, 0, &req);
    if (status != MF_OK)
        return status;
    *comm_p = comm;
    *req_p = req;
    return MF_OK;
}

void mf_comm_idup_abandon(mf_comm_t *comm, mf_request_t *req)
{
    if (!mf_sched_abandon(req, &comm->idup_abandoned))
        return;
    /* The agreement has ended: a whole communicator to free, or a failed one already gone. */
    MPI_Request h = req;
    if (mf_request_complete(&h, MPI_STATUS_IGNORE) == MPI_SUCCESS)
        mf_comm_free(comm);
}

/* The assertion bits an info object sets to "true". */
static unsigned hints_of(struct MPI_ABI_Info *info)
{
    static const struct {
        const char *key;
        unsigned bit;
    } keys[] = {
        {"mpi_assert_no_any_source", MF_HINT_NO_ANY_SOURCE},
        {"mpi_assert_no_any_tag", MF_HINT_NO_ANY_TAG},
        {"mpi_assert_allow_overtaking", MF_HINT_ALLOW_OVERTAKING},
        {"mpi_assert_exact_length", MF_HINT_EXACT_LENGTH},
    };
    unsigned bits = 0;
    for (size_t i = 0; info != NULL && i < sizeof(keys) / sizeof(keys[0]); i++) {
        char value[16];
        size_t len;
        if (mf_info_get(info, keys[i].key, value, sizeof(value), &len) &&
            strcasecmp(value, "true") == 0)
            bits |= keys[i].bit;
    }
    return bits;
}

/* The spread case of mf_comm_vci_for: the assertions let the source and/or the tag choose the
 * VCI. While MPI_Comm_set_info decides (vci_spread 0), wait for the outcome: every member is
 * inside that call by then (hints_apply), so it comes without help from this thread. */
mf_vci_t *mf_comm_vci_spread(const mf_comm_t *comm, int rank, int tag)
{
    int spread, polls = 0;
    while ((spread = atomic_load_explicit(&comm->vci_spread, memory_order_acquire)) == 0)
        mf_progress_poke(comm->vci, &polls);
    if (spread == 1)
        return comm->vci;
    unsigned by = atomic_load_explicit(&comm->spread_by, memory_order_relaxed), key = 0;
    if (by & MF_HINT_NO_ANY_SOURCE)
        key += (unsigned)rank;
    if (by & MF_HINT_NO_ANY_TAG)
        key += (unsigned)tag;
    /* Unsigned throughout: MPI_PROC_NULL (negative) must still give a valid index. */
    return mf_vci_get((int)(((unsigned)mf_vci_index(comm->vci) + key) % (unsigned)spread));
}

/* mf_comm_vci_lock_for when the communicator was not simply on its home VCI. */
mf_vci_t *mf_comm_vci_lock_spread(const mf_comm_t *comm, int rank, int tag)
{
    for (;;) {
        mf_vci_t *vci = mf_comm_vci_spread(comm, rank, tag);
        mf_vci_lock(vci);
        /* Spread is final; the home VCI may have begun or finished deciding meanwhile. */
        int spread = atomic_load_explicit(&comm->vci_spread, memory_order_relaxed);
        if (spread == 1 ? vci == comm->vci
                        : spread > 1 && vci == mf_comm_vci_spread(comm, rank, tag))
            return vci;
        mf_vci_unlock(vci);
    }
}

/* What each member contributes to the hint agreement. */
typedef struct hint_vote {
    int64_t unmatched, open_recvs;
    uint64_t hints, ready;
    int64_t pool; /* VCI pool size: the default follows the node's cores, so nodes differ */
} hint_vote_t;

/* Whether a message of the communicator is in flight, taken on every member while its traffic
 * waits (vci_spread 0), which it does from the moment its vote is counted until the outcome is
 * known: then the sum of the votes is what was in flight at the last member's count, and
 * nothing moved between that and the switch. Pausing is safe only because every member is
 * already inside MPI_Comm_set_info (after the first agreement): a member still outside might
 * wait for a message this process would now hold back. */
static mf_status_t spread_switch(mf_comm_t *comm, unsigned spread_by, int pool_size)
{
    int64_t mine[2];
    mf_vci_lock(comm->vci);
    atomic_store_explicit(&comm->vci_spread, 0, memory_order_relaxed);
    mine[0] = comm->unmatched + comm->part_live;
    mine[1] = comm->open_recvs;
    mf_vci_unlock(comm->vci);

    unsigned char *blobs;
    size_t slot;
    uint64_t *lens;
    int busy = 0;
    mf_status_t status =
        blob_allgather(comm, CTX_AGREE_TAG, mine, sizeof(mine), &blobs, &slot, &lens);
    if (status == MF_OK) {
        int64_t sum[2] = {0, 0};
        for (int r = 0; r < comm->size; r++) {
            int64_t v[2];
            memcpy(v, blobs + slot * (size_t)r, sizeof(v));
            sum[0] += v[0];
            sum[1] += v[1];
        }
        busy = sum[0] != 0 || sum[1] != 0;
        free(blobs);
        free(lens);
    }
    mf_vci_lock(comm->vci);
    if (status == MF_OK && !busy) {
        atomic_store_explicit(&comm->spread_by, spread_by, memory_order_relaxed);
        atomic_store_explicit(&comm->vci_spread, pool_size, memory_order_release);
    } else {
        atomic_store_explicit(&comm->vci_spread, 1, memory_order_release);
    }
    mf_vci_unlock(comm->vci);
    if (busy)
        mf_log(MF_LOG_INFO, "comm",
               "assertions given while messages were in flight: traffic not spread");
    return status;
}

/* Collective over comm: agree on the assertions and spread the traffic when they allow it.
 * `live`: other threads may be using the communicator (MPI_Comm_set_info); a new one has no
 * traffic yet. */
static mf_status_t hints_apply(mf_comm_t *comm, int live)
{
    /* Intercommunicators keep the hints but use none of them: no spreading (both groups would
     * have to agree) and wildcards stay allowed. */
    if (mf_comm_is_inter(comm))
        return MF_OK;
    hint_vote_t mine = {0};
    pthread_mutex_lock(&comm->name_lock);
    mine.hints = hints_of(comm->info);
    pthread_mutex_unlock(&comm->name_lock);
    mf_vci_lock(comm->vci);
    mine.unmatched = comm->unmatched + comm->part_live; /* either way: not spread now */
    mine.open_recvs = comm->open_recvs;
    mf_vci_unlock(comm->vci);
    mine.ready = vci_ready_mask(comm);
    mine.pool = mf_vci_pool_size();

    unsigned char *blobs;
    size_t slot;
    uint64_t *lens;
    mf_status_t status =
        blob_allgather(comm, CTX_AGREE_TAG, &mine, sizeof(mine), &blobs, &slot, &lens);
    if (status != MF_OK)
        return status;
    hint_vote_t all = {0, 0, ~(uint64_t)0, ~(uint64_t)0, mine.pool};
    for (int r = 0; r < comm->size; r++) {
        hint_vote_t v;
        memcpy(&v, blobs + slot * (size_t)r, sizeof(v));
        all.unmatched += v.unmatched;
        all.open_recvs += v.open_recvs;
        all.hints &= v.hints;
        all.ready &= v.ready;
        if (v.pool < all.pool)
            all.pool = v.pool;
    }
    free(blobs);
    free(lens);

    comm->hints = (unsigned)all.hints;
    unsigned spread_by = (unsigned)all.hints & (MF_HINT_NO_ANY_SOURCE | MF_HINT_NO_ANY_TAG);
    /* Every member maps (source, tag) to a VCI index below the smallest pool. */
    int pool_size = (int)all.pool;
    if (comm->vci_spread > 1 || spread_by == 0 || pool_size == 1 || comm->size == 1)
        return MF_OK;
    if (all.unmatched != 0 || all.open_recvs != 0) {
        /* A message sent on the home VCI could be received on another one after the switch:
         * stay on one VCI (correct, just not spread). */
        mf_log(MF_LOG_INFO, "comm",
               "assertions on a communicator with messages in flight: traffic not spread");
        return MF_OK;
    }
    uint64_t pool_mask = pool_size == 64 ? ~(uint64_t)0 : (1ull << pool_size) - 1;
    if ((all.ready & pool_mask) != pool_mask)
        status = vci_exchange(comm, CTX_AGREE_TAG, pool_mask & ~all.ready);
    if (status != MF_OK)
        return status;
    /* The votes above are a snapshot: other threads may have sent or posted since. */
    if (live)
        return spread_switch(comm, spread_by, pool_size);
    comm->spread_by = spread_by;
    atomic_store_explicit(&comm->vci_spread, pool_size, memory_order_release);
    return MF_OK;
}

mf_status_t mf_comm_update_info(mf_comm_t *comm, struct MPI_ABI_Info *info)
{
    struct MPI_ABI_Info *merged = NULL;
    pthread_mutex_lock(&comm->name_lock);
    mf_status_t status =
        comm->info != NULL ? mf_info_dup(comm->info, &merged) : mf_info_create(&merged);
    pthread_mutex_unlock(&comm->name_lock);
    if (status == MF_OK && info != NULL)
        status = mf_info_update(merged, info);
    if (status == MF_OK)
        status = mf_comm_set_info(comm, merged, 1);
    if (merged != NULL)
        mf_info_free(merged);
    return status;
}

mf_status_t mf_comm_set_info(mf_comm_t *comm, struct MPI_ABI_Info *info, int live)
{
    struct MPI_ABI_Info *copy = NULL;
    if (info != NULL) {
        mf_status_t status = mf_info_dup(info, &copy);
        if (status != MF_OK)
            return status;
    }
    pthread_mutex_lock(&comm->name_lock);
    struct MPI_ABI_Info *old = comm->info;
    comm->info = copy;
    pthread_mutex_unlock(&comm->name_lock);
    if (old != NULL)
        mf_info_free(old);
    return hints_apply(comm, live);
}

typedef struct split_entry {
    int color, key, rank;
} split_entry_t;

static int split_cmp(const void *a, const void *b)
{
    const split_entry_t *x = a, *y = b;
    if (x->key != y->key)
        return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : (x->rank > y->rank);
}

mf_status_t mf_comm_split(mf_comm_t *parent, int color, int key, mf_comm_t **comm_p)
{
    if (mf_comm_is_inter(parent))
        return inter_split(parent, color, key, comm_p);
    int size = parent->size;
    split_entry_t mine = {color, key, parent->rank};
    split_entry_t *all = mf_malloc(sizeof(split_entry_t) * (size_t)size, "split table");
    int *ranks = mf_malloc(sizeof(int) * (size_t)size, "communicator ranks");
    mf_status_t status = MF_ERR_NO_MEMORY;
    if (all == NULL || ranks == NULL)
        goto out_free;
    status = mf_coll_allgather(parent, &mine, sizeof(mine), all);
    if (status != MF_OK)
        goto out_free;
    int n = 0;
    if (color != MPI_UNDEFINED) {
        for (int i = 0; i < size; i++) {
            if (all[i].color == color)
                all[n++] = all[i];
        }
        qsort(all, (size_t)n, sizeof(split_entry_t), split_cmp);
    }
    int my_new_rank = -1;
    for (int i = 0; i < n; i++) {
        ranks[i] = mf_comm_world_rank(parent, all[i].rank);
        if (all[i].rank == parent->rank)
            my_new_rank = i;
    }
    /* All colors share one agreement over the parent: disjoint groups may reuse one id. */
    status = mf_comm_create_from(parent, n, my_new_rank, ranks, comm_p);
out_free:
    free(all);
    free(ranks);
    return status;
}

static mf_status_t host_color(mf_comm_t *parent, int *color_p);

int mf_comm_spans_jobs(const mf_comm_t *comm)
{
    for (int i = 0; i < comm->size; i++) {
        if (mf_comm_world_rank(comm, i) >= mf_global.world_size)
            return 1;
    }
    for (int i = 0; i < comm->remote_size; i++) {
        if (comm->remote_ranks[i] >= mf_global.world_size)
            return 1;
    }
    return 0;
}

/* The color of this process in a split by node: the lowest world rank on its node, from the
 * launcher's process mapping, or else from an exchange of host names over the parent, where it
 * is the parent rank of the first process on the same host (the launcher's mapping covers one
 * job: a parent that spans jobs always takes this way). */
static mf_status_t node_color(mf_comm_t *parent, int *color_p)
{
    if (mf_comm_spans_jobs(parent))
        return host_color(parent, color_p);
    int count = 0;
    int *ranks = mf_malloc(sizeof(int) * (size_t)mf_global.world_size, "node ranks");
    if (ranks == NULL)
        return MF_ERR_NO_MEMORY;
    mf_status_t status = mf_pmi_get_node_rank_list(ranks, mf_global.world_size, &count);
    int from_pmi = status == MF_OK && count > 0;
    if (from_pmi)
        *color_p = ranks[0];
    free(ranks);
    if (from_pmi)
        return MF_OK;
    return host_color(parent, color_p);
}

static mf_status_t host_color(mf_comm_t *parent, int *color_p)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    if (gethostname(mine, sizeof(mine) - 1) != 0)
        snprintf(mine, sizeof(mine), "localhost");
    char *all = mf_malloc(sizeof(mine) * (size_t)parent->size, "host names");
    if (all == NULL)
        return MF_ERR_NO_MEMORY;
    mf_status_t status = mf_coll_allgather(parent, mine, sizeof(mine), all);
    for (int i = 0; status == MF_OK && i < parent->size; i++) {
        if (strcmp(all + sizeof(mine) * (size_t)i, mine) == 0) {
            *color_p = i;
            break;
        }
    }
    free(all);
    return status;
}

mf_status_t mf_comm_node_color(mf_comm_t *comm, int *color_p)
{
    return node_color(comm, color_p);
}

mf_status_t mf_comm_split_shared(mf_comm_t *parent, int shared, int key, mf_comm_t **comm_p)
{
    /* On an intercommunicator the split pairs each node's processes of one group with those
     * of the other: the launcher's node colour is the same in both groups. A process that
     * asks for nothing finds the colour too: without the launcher's node list that takes an
     * allgather, which the others (a shared or hardware split) make. */
    int color = MPI_UNDEFINED;
    mf_status_t status = node_color(mf_comm_is_inter(parent) ? parent->local_comm : parent, &color);
    if (status != MF_OK)
        return status;
    return mf_comm_split(parent, shared ? color : MPI_UNDEFINED, key, comm_p);
}

/* ---- intercommunicators -------------------------------------------------------------------- */

/* How the two leaders of an intercommunicator operation talk: point-to-point on `comm` (a view
 * of the peer communicator, or the intercommunicator itself) on context `ctx`, with `remote`
 * the other leader as comm's point-to-point names it. Messages to the remote leader carry
 * `tag`, those from it `rtag`: the same but between processes of different jobs
 * (mf_comm_inter_finish), where each side picks the tag it receives. */
typedef struct inter_link {
    mf_comm_t *comm;
    unsigned ctx;
    int remote;
    int tag, rtag;
} inter_link_t;

static mf_status_t link_sendrecv(const inter_link_t *link, const void *sbuf, size_t slen,
                                 void *rbuf, size_t rlen)
{
    mf_request_t *rreq, *sreq;
    mf_status_t status =
        mf_pt2pt_irecv(rbuf, rlen, link->remote, link->rtag, link->comm, link->ctx, &rreq);
    if (status != MF_OK)
        return status;
    status = mf_pt2pt_isend(sbuf, slen, link->remote, link->tag, link->comm, link->ctx,
                            MF_SEND_STANDARD, 1, &sreq);
    if (status != MF_OK) {
        mf_request_finish(rreq); /* a posted receive cannot be abandoned */
        return status;
    }
    mf_status_t rstatus = mf_request_finish(rreq);
    status = mf_request_finish(sreq);
    return rstatus != MF_OK ? rstatus : status;
}

/* The leader swaps `len` bytes with the remote leader, then every member of `local` gets the
 * remote side's bytes in `theirs`. */
static mf_status_t inter_swap(mf_comm_t *local, int leader, const inter_link_t *link,
                              const void *mine, void *theirs, size_t len)
{
    mf_status_t status = MF_OK;
    if (local->rank == leader)
        status = link_sendrecv(link, mine, len, theirs, len);
    if (status != MF_OK)
        return status;
    return mf_coll_bcast(local, theirs, len, leader);
}

/* Agree on a context id free on every process of both groups: each group ANDs its free ids,
 * the leaders swap and AND the two masks, every process picks the same candidate from the same
 * start, reserves it, and the same path confirms that all of them could. */
static mf_status_t inter_ctx_agree(mf_comm_t *local, int leader, const inter_link_t *link,
                                   unsigned seed, unsigned *id_p)
{
    uint64_t mask[CTX_WORDS], theirs[CTX_WORDS];
    for (unsigned attempt = 0;; attempt++) {
        pthread_mutex_lock(&comms.lock);
        ctx_free_mask_locked(mask);
        pthread_mutex_unlock(&comms.lock);
        mf_status_t status = mf_coll_allreduce_band_tag(local, CTX_AGREE_TAG, mask, CTX_WORDS);
        if (status == MF_OK)
            status = inter_swap(local, leader, link, mask, theirs, sizeof(mask));
        if (status != MF_OK)
            return status;
        for (int i = 0; i < CTX_WORDS; i++)
            mask[i] &= theirs[i];
        int id = ctx_pick(mask, (seed + attempt * 977u) % MF_CONTEXT_MAX);
        if (id < 0) {
            mf_log(MF_LOG_DEBUG, "comm",
                   "no context id is free on all processes of both groups (at most %d "
                   "communicators may exist at once)",
                   MF_CONTEXT_MAX);
            return MF_ERR_EXHAUSTED;
        }
        uint64_t reserved = ctx_reserve(&id, 1), all = reserved, other = 0;
        status = mf_coll_allreduce_band_tag(local, CTX_AGREE_TAG, &all, 1);
        if (status == MF_OK)
            status = inter_swap(local, leader, link, &all, &other, sizeof(all));
        if (status == MF_OK && (all & other)) {
            *id_p = (unsigned)id;
            return MF_OK;
        }
        if (reserved)
            ctx_release((unsigned)id);
        if (status != MF_OK)
            return status;
    }
}

/* A new intercommunicator over the local intracommunicator `lc` (owned from now on, also on
 * failure) and the remote group. Intercommunicators use VCI 0, which knows every process of
 * the world, so no address exchange between the groups is needed. */
static mf_status_t inter_build(mf_comm_t *lc, unsigned id, int remote_size, const int *remote_ranks,
                               MPI_Errhandler eh, mf_comm_t **comm_p)
{
    int *ranks = mf_malloc(sizeof(int) * (size_t)lc->size, "communicator ranks");
    int *rranks = mf_malloc(sizeof(int) * (size_t)remote_size, "remote group ranks");
    mf_comm_t *comm = comm_object_new();
    if (ranks == NULL || rranks == NULL || comm == NULL) {
        free(ranks);
        free(rranks);
        free(comm);
        ctx_release(id);
        mf_comm_free(lc);
        return MF_ERR_NO_MEMORY;
    }
    for (int i = 0; i < lc->size; i++)
        ranks[i] = mf_comm_world_rank(lc, i);
    memcpy(rranks, remote_ranks, sizeof(int) * (size_t)remote_size);
    pthread_mutex_lock(&comms.lock);
    comms.vci_users[0]++;
    pthread_mutex_unlock(&comms.lock);
    comm_setup(comm, id, 0, lc->rank, lc->size, ranks);
    comm->remote_size = remote_size;
    comm->remote_ranks = rranks;
    comm->local_comm = lc;
    mf_comm_set_private(lc);
    mf_errhandler_retain(eh);
    atomic_store(&comm->errhandler, eh);
    comm->session = lc->session;
    *comm_p = comm;
    return MF_OK;
}

/* A private copy of an intracommunicator (same members and order, no hints nor topology). */
static mf_status_t comm_dup_plain(mf_comm_t *parent, mf_comm_t **comm_p)
{
    int *ranks = mf_malloc(sizeof(int) * (size_t)parent->size, "communicator ranks");
    if (ranks == NULL)
        return MF_ERR_NO_MEMORY;
    for (int i = 0; i < parent->size; i++)
        ranks[i] = mf_comm_world_rank(parent, i);
    mf_status_t status = mf_comm_create_from(parent, parent->size, parent->rank, ranks, comm_p);
    free(ranks);
    return status;
}

static unsigned inter_seed(int a, int b, unsigned salt)
{
    unsigned lo = (unsigned)(a < b ? a : b), hi = (unsigned)(a < b ? b : a);
    return lo * 2654435761u + hi * 40503u + salt * 7919u;
}

/* Where the two groups hold processes of more than one job, a member may not know a process
 * of the other group (spawned by another member, say): every process's own description goes
 * to its leader, the leaders swap their groups', and each member adds the other group's to
 * its process table. Numbers of the remote group in rranks. */
static mf_status_t learn_remote_group(mf_comm_t *lc, int leader, const inter_link_t *link,
                                      int nremote, int *rranks)
{
    size_t dsize = mf_dynproc_desc_size();
    char *mine = mf_malloc(dsize, "process description");
    char *group = lc->rank == leader ? mf_malloc(dsize * (size_t)lc->size, "descriptions") : NULL;
    char *theirs = mf_malloc(dsize * (size_t)nremote, "process descriptions");
    mf_status_t status = MF_ERR_NO_MEMORY;
    if (mine == NULL || theirs == NULL || (lc->rank == leader && group == NULL))
        goto out;
    mf_dynproc_desc_self(mine);
    status = mf_coll_gather(lc, mine, dsize, group, leader);
    if (status == MF_OK && lc->rank == leader)
        status =
            link_sendrecv(link, group, dsize * (size_t)lc->size, theirs, dsize * (size_t)nremote);
    if (status == MF_OK)
        status = mf_coll_bcast(lc, theirs, dsize * (size_t)nremote, leader);
    mf_status_t added = MF_OK;
    for (int i = 0; status == MF_OK && added == MF_OK && i < nremote; i++)
        added = mf_dynproc_desc_add(theirs + dsize * (size_t)i, &rranks[i]);
    /* a full process table on one member fails all members of both groups */
    uint64_t ok[2] = {added == MF_OK ? ~0ull : 0, 0};
    if (status == MF_OK)
        status = mf_coll_allreduce_band(lc, ok, 1);
    if (status == MF_OK)
        status = inter_swap(lc, leader, link, &ok[0], &ok[1], sizeof(ok[0]));
    if (status == MF_OK && (ok[0] & ok[1]) == 0) {
        mf_log(MF_LOG_INFO, "comm",
               "a process of the two groups cannot enter one more process "
               "into its table (at most %d of other jobs)",
               MF_VCI_DYN_PROCS);
        status = MF_ERR_EXHAUSTED;
    }
out:
    free(mine);
    free(group);
    free(theirs);
    return status;
}

/* Both groups learn each other's members over the leaders' link, check they are disjoint and
 * agree on a context id. `lc` is owned from now on. */
static mf_status_t inter_connect(mf_comm_t *lc, int leader, const inter_link_t *link,
                                 MPI_Errhandler eh, int *err_class_p, mf_comm_t **comm_p)
{
    int mine[2] = {lc->size, (int)mf_comm_proc_key(lc, leader)}, theirs[2];
    int *ranks = NULL, *rranks = NULL;
    mf_proc_id_t *ids = NULL, *rids = NULL;
    char *in_local = NULL;
    mf_status_t status = inter_swap(lc, leader, link, mine, theirs, sizeof(mine));
    if (status != MF_OK)
        goto err_free;
    status = MF_ERR_NO_MEMORY;
    int nprocs = mf_vci_process_count();
    ranks = mf_malloc(sizeof(int) * (size_t)lc->size, "communicator ranks");
    rranks = mf_malloc(sizeof(int) * (size_t)theirs[0], "remote group ranks");
    ids = mf_malloc(sizeof(*ids) * (size_t)lc->size, "process ids");
    rids = mf_malloc(sizeof(*rids) * (size_t)theirs[0], "process ids");
    in_local = mf_calloc((size_t)nprocs, 1, "group membership");
    if (ranks == NULL || rranks == NULL || ids == NULL || rids == NULL || in_local == NULL)
        goto err_free;
    for (int i = 0; i < lc->size; i++) {
        ranks[i] = mf_comm_world_rank(lc, i);
        in_local[ranks[i]] = 1;
        ids[i] = mf_proc_id(ranks[i]);
    }
    /* The groups travel as job-independent process ids: either may hold processes of other
     * jobs, which each process numbers in its own way. */
    status = MF_OK;
    if (lc->rank == leader)
        status = link_sendrecv(link, ids, sizeof(*ids) * (size_t)lc->size, rids,
                               sizeof(*rids) * (size_t)theirs[0]);
    if (status == MF_OK)
        status = mf_coll_bcast(lc, rids, sizeof(*rids) * (size_t)theirs[0], leader);
    if (status != MF_OK)
        goto err_free;
    /* Every process of both groups sees the same two lists, so all of them decide alike
     * whether addresses must travel: only where the groups hold more than one job. */
    int one_job = 1;
    for (int i = 0; i < lc->size; i++)
        one_job &= ids[i].job == ids[0].job;
    for (int i = 0; i < theirs[0]; i++)
        one_job &= rids[i].job == ids[0].job;
    if (!one_job) {
        status = learn_remote_group(lc, leader, link, theirs[0], rranks);
        if (status != MF_OK)
            goto err_free;
    }
    /* Overlapping groups are erroneous (MPI-4.1 section 7.6.2): all processes fail alike. */
    for (int i = 0; i < theirs[0]; i++) {
        if (one_job)
            rranks[i] = mf_proc_find(rids[i]); /* a process of this job: always found */
        if (rranks[i] < nprocs && in_local[rranks[i]]) {
            mf_log(MF_LOG_INFO, "comm", "intercommunicator groups overlap (world rank %d)",
                   rranks[i]);
            *err_class_p = MPI_ERR_GROUP;
            status = MF_ERR_INVALID;
            goto err_free;
        }
    }
    unsigned id;
    status = inter_ctx_agree(
        lc, leader, link, inter_seed(mine[1], theirs[1], (unsigned)(link->tag ^ link->rtag)), &id);
    if (status != MF_OK)
        goto err_free;
    status = inter_build(lc, id, theirs[0], rranks, eh, comm_p);
    free(ranks);
    free(rranks);
    free(ids);
    free(rids);
    free(in_local);
    return status;
err_free:
    free(ranks);
    free(rranks);
    free(ids);
    free(rids);
    free(in_local);
    mf_comm_free(lc);
    return status;
}

/* A view of `comm` on a context of its own (beyond every real one), as for
 * mf_comm_create_group; the leaders' link uses its user context, which no group view uses. */
static mf_comm_t comm_view(mf_comm_t *comm)
{
    mf_comm_t view = {.kind = MF_KIND_COMM,
                      .refs = 1,
                      .vci_spread = 1,
                      .rank = comm->rank,
                      .tag_rank = mf_global.world_rank,
                      .world_tags = 1,
                      .size = comm->size,
                      .context_id = comm->context_id + MF_CONTEXT_MAX,
                      .world_ranks = comm->world_ranks,
                      .vci = comm->vci};
    return view;
}

mf_status_t mf_comm_intercomm_create(mf_comm_t *local, int local_leader, mf_comm_t *peer,
                                     int remote_leader, int tag, int leader_err, int *err_class_p,
                                     mf_comm_t **comm_p)
{
    *err_class_p = 0;
    /* The local half runs on a private copy of local_comm, which the intercommunicator keeps. */
    mf_comm_t *lc;
    mf_status_t status = comm_dup_plain(local, &lc);
    if (status != MF_OK)
        return status;
    /* Only the leader checked peer_comm and remote_leader: its verdict reaches everyone. */
    int verdict = leader_err;
    status = mf_coll_bcast(lc, &verdict, sizeof(verdict), local_leader);
    if (status == MF_OK && verdict != 0) {
        *err_class_p = verdict;
        status = MF_ERR_INVALID;
    }
    if (status != MF_OK) {
        mf_comm_free(lc);
        return status;
    }
    mf_comm_t view = {0};
    if (local->rank == local_leader) {
        view = comm_view(peer);
        /* World ranks are this job's numbers: across jobs the leaders name each other by
         * peer_comm rank (a peer that spans jobs does so for every member, so both agree). */
        if (mf_comm_spans_jobs(peer)) {
            view.tag_rank = peer->rank;
            view.world_tags = 0;
        }
        /* An intercommunicator peer (MPI-5.0): the leaders are in its two groups and name
         * each other as its point-to-point calls do, by rank in the other group. */
        if (mf_comm_is_inter(peer)) {
            view.tag_rank = peer->rank;
            view.world_tags = 0;
            view.remote_size = peer->remote_size;
            view.remote_ranks = peer->remote_ranks;
        }
    }
    inter_link_t link = {&view, mf_comm_ctx_user(&view), remote_leader, tag, tag};
    MPI_Errhandler eh = mf_errhandler_acquire(&local->errhandler);
    status = inter_connect(lc, local_leader, &link, eh, err_class_p, comm_p);
    mf_errhandler_release(eh);
    return status;
}

mf_status_t mf_comm_intercomm_from_groups(const mf_group_t *local, int local_leader,
                                          int remote_leader_world, const char *stringtag,
                                          int *err_class_p, mf_comm_t **comm_p)
{
    *err_class_p = 0;
    mf_comm_t *lc;
    mf_status_t status = mf_comm_create_from_stringtag(local, stringtag, &lc);
    if (status != MF_OK)
        return status;
    /* Groups name processes by world rank: the leaders talk over the world's processes, on the
     * user context of the string tags' view. */
    stringtag_link_t st = stringtag_link(stringtag);
    mf_comm_t view = comm_view(&mf_comm_world);
    view.context_id = st.context_id;
    int remote = remote_leader_world, pair[2];
    if (remote_leader_world >= mf_global.world_size && lc->rank == local_leader) {
        /* A leader of another job, where world ranks name other processes: the two talk over
         * a view of just the two of them, ordered by process id, which both compute alike. */
        mf_proc_id_t me = mf_proc_id(mf_global.world_rank), them = mf_proc_id(remote_leader_world);
        int first = me.job < them.job || (me.job == them.job && me.rank < them.rank);
        view.rank = view.tag_rank = first ? 0 : 1;
        view.world_tags = 0;
        view.size = 2;
        pair[view.rank] = mf_global.world_rank;
        pair[1 - view.rank] = remote_leader_world;
        view.world_ranks = pair;
        remote = 1 - view.rank;
    }
    inter_link_t link = {&view, mf_comm_ctx_user(&view), remote, st.tag, st.tag};
    return inter_connect(lc, local_leader, &link, MPI_ERRORS_ARE_FATAL, err_class_p, comm_p);
}

mf_status_t mf_comm_dup_private(mf_comm_t *comm, mf_comm_t **lc_p)
{
    return comm_dup_plain(comm, lc_p);
}

mf_status_t mf_comm_inter_finish(mf_comm_t *lc, int leader, mf_comm_t *view, int remote,
                                 int send_tag, int recv_tag, unsigned seed, int remote_size,
                                 const int *remote_ranks, MPI_Errhandler eh, mf_comm_t **comm_p)
{
    inter_link_t link = {view, view != NULL ? mf_comm_ctx_user(view) : 0, remote, send_tag,
                         recv_tag};
    unsigned id;
    mf_status_t status = inter_ctx_agree(lc, leader, &link, seed, &id);
    if (status != MF_OK) {
        mf_comm_free(lc);
        return status;
    }
    return inter_build(lc, id, remote_size, remote_ranks, eh, comm_p);
}

/* The link of an operation on an existing intercommunicator: its internal context, between the
 * two groups' rank 0. */
static inter_link_t inter_self_link(mf_comm_t *inter)
{
    inter_link_t link = {inter, mf_comm_ctx_internal(inter), 0, CTX_AGREE_TAG, CTX_AGREE_TAG};
    return link;
}

static mf_status_t inter_dup(mf_comm_t *inter, mf_comm_t **comm_p)
{
    inter_link_t link = inter_self_link(inter);
    unsigned seed = inter->context_id * 2654435761u + inter->create_seq * 40503u;
    inter->create_seq++;
    mf_comm_t *lc;
    mf_status_t status = comm_dup_plain(inter->local_comm, &lc);
    if (status != MF_OK)
        return status;
    unsigned id;
    status = inter_ctx_agree(inter->local_comm, 0, &link, seed, &id);
    if (status != MF_OK) {
        mf_comm_free(lc);
        return status;
    }
    MPI_Errhandler eh = mf_errhandler_acquire(&inter->errhandler);
    status = inter_build(lc, id, inter->remote_size, inter->remote_ranks, eh, comm_p);
    mf_errhandler_release(eh);
    return status;
}

/* MPI_Comm_idup on an intercommunicator: inter_ctx_agree as a schedule on the parent, whose
 * rounds alternate between the parent's local_comm (the AND within each group, the broadcast
 * of what the leaders swapped) and the parent itself (the leaders' swap), all with the tag
 * taken at the call. Each attempt picks two ids free on every process of both groups: one for
 * the new intercommunicator, one for its local_comm (the groups are disjoint, so one id serves
 * both groups' local_comms). The intercommunicator is on VCI 0 as in inter_build, its
 * local_comm on the parent local_comm's VCI, which already knows the group's addresses. */
typedef struct inter_idup {
    mf_comm_t *parent, *comm;
    unsigned seed, attempt;
    int id[2], with_info;
    uint64_t mask[CTX_WORDS], theirs[CTX_WORDS];
    uint64_t mine, all, other; /* reserved both here; everyone of my group; of the other group */
} inter_idup_t;

static void inter_idup_attempt(mf_sched_t *s, inter_idup_t *st);

static mf_status_t inter_idup_snapshot(mf_sched_t *s, void *arg)
{
    inter_idup_t *st = arg;
    (void)s;
    pthread_mutex_lock(&comms.lock);
    ctx_free_mask_locked(st->mask);
    pthread_mutex_unlock(&comms.lock);
    return MF_OK;
}

static mf_status_t inter_idup_reserve(mf_sched_t *s, void *arg)
{
    inter_idup_t *st = arg;
    (void)s;
    for (int i = 0; i < CTX_WORDS; i++)
        st->mask[i] &= st->theirs[i];
    unsigned start = (st->seed + st->attempt * 977u) % MF_CONTEXT_MAX;
    st->id[0] = ctx_pick(st->mask, start);
    st->id[1] = -1;
    if (st->id[0] >= 0) {
        st->mask[st->id[0] / 64] &= ~(1ull << (st->id[0] % 64));
        st->id[1] = ctx_pick(st->mask, start);
    }
    if (st->id[0] < 0 || st->id[1] < 0) {
        /* the same on every process of both groups: inter_idup_decide ends the request */
        mf_log(MF_LOG_DEBUG, "comm",
               "no two context ids are free on all processes of both groups (at most %d "
               "communicators may exist at once)",
               MF_CONTEXT_MAX);
        st->mine = st->all = 0;
        return MF_OK;
    }
    st->mine = ctx_reserve(st->id, 2);
    st->all = st->mine;
    return MF_OK;
}

static mf_status_t inter_idup_decide(mf_sched_t *s, void *arg)
{
    inter_idup_t *st = arg;
    if (st->id[0] < 0 || st->id[1] < 0) {
        pending_discard(st->comm);
        return MF_ERR_EXHAUSTED;
    }
    if (!(st->all & st->other)) {
        if (st->mine) {
            ctx_release((unsigned)st->id[0]);
            ctx_release((unsigned)st->id[1]);
        }
        st->attempt++;
        inter_idup_attempt(s, st);
        return MF_OK;
    }
    if (atomic_load(&st->comm->idup_abandoned)) { /* as in idup_decide */
        ctx_release((unsigned)st->id[0]);
        ctx_release((unsigned)st->id[1]);
        pending_discard(st->comm);
        return MF_OK;
    }
    mf_comm_t *comm = st->comm, *lc = comm->local_comm, *parent = st->parent;
    int lvci = mf_vci_index(parent->local_comm->vci);
    pthread_mutex_lock(&comms.lock);
    comms.vci_users[0]++;
    comms.vci_users[lvci]++;
    pthread_mutex_unlock(&comms.lock);
    comm->context_id = (unsigned)st->id[0];
    lc->context_id = (unsigned)st->id[1];
    lc->vci = mf_vci_get(lvci);
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&parent->name_lock);
    if (parent->info != NULL && !st->with_info)
        status = mf_info_dup(parent->info, &comm->info);
    pthread_mutex_unlock(&parent->name_lock);
    atomic_thread_fence(memory_order_release);
    lc->kind = MF_KIND_COMM;
    comm->kind = MF_KIND_COMM;
    return status;
}

static void inter_idup_attempt(mf_sched_t *s, inter_idup_t *st)
{
    mf_comm_t *parent = st->parent;
    /* Each group ANDs its free ids, the leaders swap, each group learns the other's mask. */
    mf_sched_barrier(s);
    mf_sched_call(s, inter_idup_snapshot, st);
    mf_sched_barrier(s);
    mf_sched_on(s, parent->local_comm);
    mf_nbc_allreduce(s, st->mask, st->mask, CTX_WORDS, MPI_UINT64_T, 8, MPI_BAND);
    mf_sched_barrier(s);
    mf_sched_on(s, parent);
    if (parent->rank == 0) {
        mf_sched_send(s, st->mask, sizeof(st->mask), 0);
        mf_sched_recv(s, st->theirs, sizeof(st->theirs), 0);
    }
    mf_sched_barrier(s);
    mf_sched_on(s, parent->local_comm);
    mf_nbc_bcast(s, st->theirs, sizeof(st->theirs), 0);
    mf_sched_barrier(s);
    /* Every process picks the same two ids and reserves them; the same path confirms. */
    mf_sched_call(s, inter_idup_reserve, st);
    mf_sched_barrier(s);
    mf_nbc_allreduce(s, &st->all, &st->all, 1, MPI_UINT64_T, 8, MPI_BAND);
    mf_sched_barrier(s);
    mf_sched_on(s, parent);
    if (parent->rank == 0) {
        mf_sched_send(s, &st->all, sizeof(st->all), 0);
        mf_sched_recv(s, &st->other, sizeof(st->other), 0);
    }
    mf_sched_barrier(s);
    mf_sched_on(s, parent->local_comm);
    mf_nbc_bcast(s, &st->other, sizeof(st->other), 0);
    mf_sched_barrier(s);
    mf_sched_call(s, inter_idup_decide, st);
    mf_sched_barrier(s);
    mf_sched_on(s, parent);
}

static mf_status_t inter_idup(mf_comm_t *parent, int with_info, struct MPI_ABI_Info *info,
                              mf_comm_t **comm_p, mf_request_t **req_p)
{
    mf_comm_t *plc = parent->local_comm;
    int *ranks = mf_malloc(sizeof(int) * (size_t)plc->size, "communicator ranks");
    int *lranks = mf_malloc(sizeof(int) * (size_t)plc->size, "communicator ranks");
    int *rranks = mf_malloc(sizeof(int) * (size_t)parent->remote_size, "remote group ranks");
    mf_comm_t *comm = comm_object_new(), *lc = comm_object_new();
    mf_sched_t *s = mf_sched_create(parent, mf_sched_next_tag(parent, 0));
    inter_idup_t *st = s != NULL ? mf_sched_tmp(s, sizeof(*st)) : NULL;
    struct MPI_ABI_Info *dinfo = NULL;
    mf_status_t status = MF_OK;
    if (with_info && info != NULL)
        status = mf_info_dup(info, &dinfo);
    if (ranks == NULL || lranks == NULL || rranks == NULL || comm == NULL || lc == NULL ||
        st == NULL || status != MF_OK) {
        if (dinfo != NULL)
            mf_info_free(dinfo);
        free(ranks);
        free(lranks);
        free(rranks);
        free(comm);
        free(lc);
        if (s != NULL)
            mf_sched_free(s);
        return MF_ERR_NO_MEMORY;
    }
    for (int i = 0; i < plc->size; i++)
        ranks[i] = lranks[i] = mf_comm_world_rank(plc, i);
    memcpy(rranks, parent->remote_ranks, sizeof(int) * (size_t)parent->remote_size);
    /* Set up now (attributes are copied at the call, the handle answers Comm_test_inter);
     * unusable until the agreement. Placeholder ids: nothing is reserved before it. */
    comm_setup(lc, 0, mf_vci_index(plc->vci), plc->rank, plc->size, lranks);
    lc->kind = 0;
    comm_setup(comm, 0, 0, plc->rank, plc->size, ranks);
    comm->kind = MF_KIND_COMM_PENDING;
    comm->remote_size = parent->remote_size;
    comm->remote_ranks = rranks;
    comm->local_comm = lc;
    mf_comm_set_private(lc);
    atomic_store(&comm->errhandler, mf_errhandler_acquire(&parent->errhandler));
    comm->session = lc->session = parent->session;
    comm->info = dinfo;
    memset(st, 0, sizeof(*st));
    st->parent = parent;
    st->comm = comm;
    st->with_info = with_info;
    st->seed = parent->context_id * 2654435761u + parent->create_seq * 40503u;
    parent->create_seq++;
    inter_idup_attempt(s, st);
    mf_request_t *req;
    status = mf_sched_request(s, 0, &req);
    if (status != MF_OK)
        return status;
    *comm_p = comm;
    *req_p = req;
    return MF_OK;
}

/* MPI-4.1 section 7.4.2: each process gets the intercommunicator between the processes of its
 * colour in both groups, each group ordered by key then old rank; MPI_COMM_NULL when either
 * side of the colour is empty. */
static mf_status_t inter_split(mf_comm_t *inter, int color, int key, mf_comm_t **comm_p)
{
    mf_comm_t *lc = inter->local_comm, *nl = NULL;
    inter_link_t link = {inter, mf_comm_ctx_internal(inter), 0, CTX_AGREE_TAG, CTX_AGREE_TAG};
    split_entry_t mine = {color, key, lc->rank};
    split_entry_t *local_all = mf_malloc(sizeof(split_entry_t) * (size_t)lc->size, "split table");
    split_entry_t *remote_all =
        mf_malloc(sizeof(split_entry_t) * (size_t)inter->remote_size, "split table");
    int *rranks = mf_malloc(sizeof(int) * (size_t)inter->remote_size + 1, "remote group ranks");
    unsigned seed = inter->context_id * 2654435761u + inter->create_seq * 40503u;
    inter->create_seq++;
    mf_status_t status = MF_ERR_NO_MEMORY;
    if (local_all == NULL || remote_all == NULL || rranks == NULL)
        goto out_free;
    status = mf_comm_split(lc, color, key, &nl);
    if (status == MF_OK)
        status = mf_coll_allgather(lc, &mine, sizeof(mine), local_all);
    if (status == MF_OK && lc->rank == 0)
        status = link_sendrecv(&link, local_all, sizeof(split_entry_t) * (size_t)lc->size,
                               remote_all, sizeof(split_entry_t) * (size_t)inter->remote_size);
    if (status == MF_OK)
        status =
            mf_coll_bcast(lc, remote_all, sizeof(split_entry_t) * (size_t)inter->remote_size, 0);
    if (status != MF_OK)
        goto out_free;
    int n = 0;
    if (color != MPI_UNDEFINED) {
        for (int i = 0; i < inter->remote_size; i++) {
            if (remote_all[i].color == color)
                remote_all[n++] = remote_all[i];
        }
        qsort(remote_all, (size_t)n, sizeof(split_entry_t), split_cmp);
    }
    for (int i = 0; i < n; i++)
        rranks[i] = inter->remote_ranks[remote_all[i].rank];
    /* One agreement for every colour: the new intercommunicators are disjoint. */
    unsigned id;
    status = inter_ctx_agree(lc, 0, &link, seed, &id);
    if (status != MF_OK)
        goto out_free;
    if (nl == NULL || n == 0) {
        ctx_release(id);
        *comm_p = NULL;
        goto out_free;
    }
    MPI_Errhandler eh = mf_errhandler_acquire(&inter->errhandler);
    status = inter_build(nl, id, n, rranks, eh, comm_p);
    mf_errhandler_release(eh);
    nl = NULL;
out_free:
    if (nl != NULL)
        mf_comm_free(nl);
    free(local_all);
    free(remote_all);
    free(rranks);
    return status;
}

mf_status_t mf_comm_intercomm_merge(mf_comm_t *inter, int high, mf_comm_t **comm_p)
{
    mf_comm_t *lc = inter->local_comm;
    inter_link_t link = inter_self_link(inter);
    /* The leader's flag speaks for its group (all members must pass the same one). */
    mf_proc_id_t leader = mf_proc_id(mf_comm_world_rank(lc, 0));
    uint64_t mine[3] = {high != 0, leader.job, (uint64_t)leader.rank}, theirs[3];
    mf_status_t status = mf_coll_bcast(lc, mine, sizeof(mine), 0);
    if (status == MF_OK)
        status = inter_swap(lc, 0, &link, mine, theirs, sizeof(mine));
    if (status != MF_OK)
        return status;
    /* MPI-4.1 section 7.6.2: the group with high false comes first; with equal flags the order
     * is the implementation's choice: here the group whose leader has the lower (job, rank),
     * which both groups see alike also when they belong to different jobs. */
    int local_first = mine[0] != theirs[0]   ? mine[0] < theirs[0]
                      : mine[1] != theirs[1] ? mine[1] < theirs[1]
                                             : mine[2] < theirs[2];
    int n = lc->size + inter->remote_size;
    int *ranks = mf_malloc(sizeof(int) * (size_t)n, "communicator ranks");
    if (ranks == NULL)
        return MF_ERR_NO_MEMORY;
    int local_at = local_first ? 0 : inter->remote_size;
    int remote_at = local_first ? lc->size : 0;
    for (int i = 0; i < lc->size; i++)
        ranks[local_at + i] = mf_comm_world_rank(lc, i);
    memcpy(ranks + remote_at, inter->remote_ranks, sizeof(int) * (size_t)inter->remote_size);
    unsigned seed = inter->context_id * 2654435761u + inter->create_seq * 40503u;
    inter->create_seq++;
    unsigned id;
    status = inter_ctx_agree(lc, 0, &link, seed, &id);
    if (status == MF_OK) {
        /* On VCI 0 like the intercommunicator: it knows every process of both groups. */
        pthread_mutex_lock(&comms.lock);
        comms.vci_users[0]++;
        pthread_mutex_unlock(&comms.lock);
        status = comm_build(inter, id, 0, n, local_at + lc->rank, ranks, comm_p);
    }
    free(ranks);
    return status;
}

mf_status_t mf_comm_quiesce(mf_comm_t *comm)
{
    /* Every request and matched message holds a reference (the home VCI's requests one
     * between them, which stays after they completed): the user's is the last other one left
     * once all of them completed. Persistent requests are not waited for: an inactive one is
     * no communication, and would be waited for for ever (MPICH frees it at finalize). */
    int polls = 0;
    for (;;) {
        mf_vci_lock(comm->vci);
        int64_t home = comm->home_requests;
        int held = comm->home_held;
        mf_vci_unlock(comm->vci);
        home -= atomic_load_explicit(&comm->persistent_home, memory_order_relaxed);
        int others = atomic_load_explicit(&comm->refs, memory_order_acquire) - held -
                     atomic_load_explicit(&comm->persistent_other, memory_order_relaxed);
        if (home == 0 && others <= 1)
            break;
        mf_progress_poke(comm->vci, &polls);
    }
    /* Connections to processes of other jobs finish setting up before anyone may leave: a
     * process that exited while a peer's transport still connected to it (both sides connect
     * to each other) made the peer print UCX errors. */
    for (int i = 0; i < comm->size + comm->remote_size; i++) {
        int p = i < comm->size ? mf_comm_world_rank(comm, i) : comm->remote_ranks[i - comm->size];
        mf_status_t status = p >= mf_global.world_size ? mf_vci_flush_process(p) : MF_OK;
        if (status != MF_OK)
            return status;
    }
    if (!mf_comm_is_inter(comm))
        return mf_coll_barrier(comm);
    inter_link_t link = inter_self_link(comm);
    int mine = 0, theirs = 0;
    mf_status_t status = mf_coll_barrier(comm->local_comm);
    if (status == MF_OK)
        status = inter_swap(comm->local_comm, 0, &link, &mine, &theirs, sizeof(mine));
    return status;
}
