/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: communicators. Context ids are agreed by all members without a dedicated
 * protocol round: every process offers its free ids (a bitmap AND-reduced over the parent),
 * a candidate is picked from the agreed set, each process reserves it, and a second AND confirms
 * that every process could. Candidates start at a point derived from the parent and its creation
 * count, so threads creating communicators from different parents at once rarely collide; when
 * they do, all members release and retry. Freed ids are reused. The VCI of a communicator
 * follows from its context id, so it is the same on every member with no extra messages.
 */
#include "core.h"

#include "coll.h"
#include "core_topo.h"
#include "pmi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

mf_comm_t mf_comm_world, mf_comm_self;

#define CTX_WORDS (MF_CONTEXT_MAX / 64)

static struct {
    pthread_mutex_t lock;
    uint64_t used[CTX_WORDS];
    mf_comm_t *free_objects; /* recycled, never returned to the OS: stale handles stay readable */
} comms = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void comm_setup(mf_comm_t *comm, unsigned context_id, int rank, int size, int *world_ranks)
{
    comm->kind = MF_KIND_COMM;
    comm->pending = 0;
    comm->user_freed = 0;
    comm->rank = rank;
    comm->size = size;
    comm->context_id = context_id;
    comm->world_ranks = world_ranks;
    comm->vci = mf_vci_get((int)(context_id % (unsigned)mf_vci_pool_size()));
    atomic_store(&comm->errhandler, MPI_ERRORS_ARE_FATAL);
    comm->create_seq = 0;
    comm->nbc_seq = 0;
    comm->name[0] = '\0';
    comm->info = NULL;
    comm->attrs = NULL;
    comm->topo = NULL;
    pthread_mutex_init(&comm->name_lock, NULL);
}

mf_status_t mf_comm_init_builtin(void)
{
    memset(comms.used, 0, sizeof(comms.used));
    comms.used[0] |= (1ull << MF_CONTEXT_WORLD) | (1ull << MF_CONTEXT_SELF);
    comm_setup(&mf_comm_world, MF_CONTEXT_WORLD, mf_global.world_rank, mf_global.world_size, NULL);
    snprintf(mf_comm_world.name, sizeof(mf_comm_world.name), "MPI_COMM_WORLD");
    int *self_rank = mf_malloc(sizeof(int), "self communicator");
    if (self_rank == NULL)
        return MF_ERR_NO_MEMORY;
    self_rank[0] = mf_global.world_rank;
    comm_setup(&mf_comm_self, MF_CONTEXT_SELF, 0, 1, self_rank);
    snprintf(mf_comm_self.name, sizeof(mf_comm_self.name), "MPI_COMM_SELF");
    return MF_OK;
}

void mf_comm_fini_builtin(void)
{
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

static void comm_destroy(mf_comm_t *comm)
{
    mf_handle_forget(comm);
    ctx_release(comm->context_id);
    mf_errhandler_release(atomic_load(&comm->errhandler));
    free(comm->world_ranks);
    comm->world_ranks = NULL;
    if (comm->info != NULL)
        mf_info_free(comm->info);
    comm->info = NULL;
    mf_topo_free(comm->topo);
    comm->topo = NULL;
    pthread_mutex_destroy(&comm->name_lock);
    comm->kind = MF_KIND_FREED;
    pthread_mutex_lock(&comms.lock);
    comm->next_free = comms.free_objects;
    comms.free_objects = comm;
    pthread_mutex_unlock(&comms.lock);
}

void mf_comm_unhold_locked(mf_comm_t *comm)
{
    if (--comm->pending == 0 && comm->user_freed)
        comm_destroy(comm);
}

void mf_comm_free(mf_comm_t *comm)
{
    /* Operations still in flight keep the communicator (and its context id) alive; the last
     * one to complete destroys it. */
    mf_vci_t *vci = comm->vci;
    mf_vci_lock(vci);
    comm->user_freed = 1;
    if (comm->pending == 0)
        comm_destroy(comm);
    mf_vci_unlock(vci);
}

void mf_comm_vci_mapping(const mf_comm_t *comm, int *home_p, int *spread_p)
{
    *home_p = mf_vci_index(comm->vci);
    *spread_p = 1;
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

/* Agree on a context id free on every member of `over` (the parent itself, or a view of a group
 * of its members). `seed` must be the same on all of them: it picks where the search starts. */
static mf_status_t ctx_agree(mf_comm_t *over, int tag, unsigned seed, unsigned *id_p)
{
    uint64_t mask[CTX_WORDS];
    for (unsigned attempt = 0;; attempt++) {
        pthread_mutex_lock(&comms.lock);
        for (int i = 0; i < CTX_WORDS; i++)
            mask[i] = ~comms.used[i];
        pthread_mutex_unlock(&comms.lock);
        mf_status_t status = mf_coll_allreduce_band_tag(over, tag, mask, CTX_WORDS);
        if (status != MF_OK)
            return status;
        unsigned start = (seed + attempt * 977u) % MF_CONTEXT_MAX;
        int id = ctx_pick(mask, start);
        if (id < 0) {
            mf_log(MF_LOG_ERROR, "comm",
                   "no context id is free on all %d processes (at most %d "
                   "communicators may exist at once)",
                   over->size, MF_CONTEXT_MAX);
            return MF_ERR_NO_MEMORY;
        }
        /* Another thread of this process may have taken the id since the snapshot. */
        uint64_t reserved = 0;
        pthread_mutex_lock(&comms.lock);
        if (!(comms.used[id / 64] & (1ull << (id % 64)))) {
            comms.used[id / 64] |= 1ull << (id % 64);
            reserved = 1;
        }
        pthread_mutex_unlock(&comms.lock);
        uint64_t all = reserved;
        status = mf_coll_allreduce_band_tag(over, tag, &all, 1);
        if (status == MF_OK && all) {
            *id_p = (unsigned)id;
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
static mf_status_t comm_build(mf_comm_t *parent, unsigned id, int new_size, int my_new_rank,
                              const int *world_ranks, mf_comm_t **comm_p)
{
    int *ranks = mf_malloc(sizeof(int) * (size_t)new_size, "communicator ranks");
    mf_comm_t *comm = comm_object_new();
    if (ranks == NULL || comm == NULL) {
        free(ranks);
        free(comm);
        ctx_release(id);
        return MF_ERR_NO_MEMORY;
    }
    memcpy(ranks, world_ranks, sizeof(int) * (size_t)new_size);
    comm_setup(comm, id, my_new_rank, new_size, ranks);
    MPI_Errhandler eh = atomic_load(&parent->errhandler);
    mf_errhandler_retain(eh);
    atomic_store(&comm->errhandler, eh);
    *comm_p = comm;
    return MF_OK;
}

mf_status_t mf_comm_create_from(mf_comm_t *parent, int new_size, int my_new_rank,
                                const int *world_ranks, mf_comm_t **comm_p)
{
    unsigned id;
    unsigned seed = parent->context_id * 2654435761u + parent->create_seq * 40503u;
    mf_status_t status = ctx_agree(parent, CTX_AGREE_TAG, seed, &id);
    parent->create_seq++;
    if (status != MF_OK)
        return status;
    if (my_new_rank < 0) {
        /* Not a member: the id only had to be free here for the agreement. */
        ctx_release(id);
        *comm_p = NULL;
        return MF_OK;
    }
    return comm_build(parent, id, new_size, my_new_rank, world_ranks, comm_p);
}

mf_status_t mf_comm_create_group(mf_comm_t *parent, const mf_group_t *group, int tag,
                                 mf_comm_t **comm_p)
{
    /* Only the group's members take part, so the agreement cannot use the parent's collectives
     * (nor its creation count, which must stay equal on all of the parent's processes). It runs
     * over a view of the group: the parent's VCI, the group's ranks, and a context index beyond
     * every real one, so its messages match neither the parent's traffic nor another view's
     * with a different tag. */
    mf_comm_t view = {.kind = MF_KIND_COMM,
                      .rank = group->rank,
                      .size = group->size,
                      .context_id = parent->context_id + MF_CONTEXT_MAX,
                      .world_ranks = group->world_ranks,
                      .vci = parent->vci};
    unsigned seed = parent->context_id * 2654435761u + (unsigned)tag * 40503u +
                    (unsigned)group->world_ranks[0] * 7919u + (unsigned)group->size;
    unsigned id;
    mf_status_t status = ctx_agree(&view, tag, seed, &id);
    if (status != MF_OK)
        return status;
    return comm_build(parent, id, group->size, group->rank, group->world_ranks, comm_p);
}

mf_status_t mf_comm_dup(mf_comm_t *parent, mf_comm_t **comm_p)
{
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
    if (status != MF_OK) {
        mf_comm_free(*comm_p);
        *comm_p = NULL;
    }
    return status;
}

mf_status_t mf_comm_set_info(mf_comm_t *comm, struct MPI_ABI_Info *info)
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
    return MF_OK;
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

/* The color of this process in a split by node: the lowest world rank on its node, from the
 * launcher's process mapping, or else from an exchange of host names over the parent. */
static mf_status_t node_color(mf_comm_t *parent, int *color_p)
{
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
    char mine[MPI_MAX_PROCESSOR_NAME] = {0};
    if (gethostname(mine, sizeof(mine) - 1) != 0)
        snprintf(mine, sizeof(mine), "localhost");
    char *all = mf_malloc(sizeof(mine) * (size_t)parent->size, "host names");
    if (all == NULL)
        return MF_ERR_NO_MEMORY;
    status = mf_coll_allgather(parent, mine, sizeof(mine), all);
    for (int i = 0; status == MF_OK && i < parent->size; i++) {
        if (strcmp(all + sizeof(mine) * (size_t)i, mine) == 0) {
            *color_p = mf_comm_world_rank(parent, i);
            break;
        }
    }
    free(all);
    return status;
}

mf_status_t mf_comm_split_shared(mf_comm_t *parent, int shared, int key, mf_comm_t **comm_p)
{
    int color = MPI_UNDEFINED;
    if (shared) {
        mf_status_t status = node_color(parent, &color);
        if (status != MF_OK)
            return status;
    }
    return mf_comm_split(parent, color, key, comm_p);
}
