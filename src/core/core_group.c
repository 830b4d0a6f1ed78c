/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: process groups. A group is an immutable array of world ranks with a reference
 * count; the set operations of the binding layer build new arrays and call mf_group_create.
 * Freed group objects go back to a pool and keep the "freed" kind, so a handle the user already
 * freed is reported as invalid instead of read after free (as for communicators).
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

mf_group_t mf_group_empty = {.kind = MF_KIND_GROUP, .refs = 1, .size = 0, .rank = MPI_UNDEFINED};

static struct {
    pthread_mutex_t lock;
    mf_group_t *free_objects;
} groups = {.lock = PTHREAD_MUTEX_INITIALIZER};

static mf_group_t *group_object_new(void)
{
    pthread_mutex_lock(&groups.lock);
    mf_group_t *group = groups.free_objects;
    if (group != NULL)
        groups.free_objects = group->next_free;
    pthread_mutex_unlock(&groups.lock);
    if (group == NULL)
        group = mf_calloc(1, sizeof(*group), "group");
    return group;
}

mf_status_t mf_group_create(int size, const int *world_ranks, mf_session_t *session,
                            mf_group_t **group_p)
{
    if (size == 0) {
        *group_p = &mf_group_empty;
        return MF_OK;
    }
    int *ranks = mf_malloc(sizeof(int) * (size_t)size, "group ranks");
    if (ranks == NULL)
        return MF_ERR_NO_MEMORY;
    mf_group_t *group = group_object_new();
    if (group == NULL) {
        free(ranks);
        return MF_ERR_NO_MEMORY;
    }
    memcpy(ranks, world_ranks, sizeof(int) * (size_t)size);
    group->size = size;
    group->world_ranks = ranks;
    group->session = session;
    group->rank = MPI_UNDEFINED;
    for (int i = 0; i < size; i++) {
        if (ranks[i] == mf_global.world_rank) {
            group->rank = i;
            break;
        }
    }
    atomic_store(&group->refs, 1);
    group->kind = MF_KIND_GROUP;
    *group_p = group;
    return MF_OK;
}

mf_status_t mf_group_from_comm(const mf_comm_t *comm, mf_group_t **group_p)
{
    int *ranks = mf_malloc(sizeof(int) * (size_t)comm->size, "group ranks");
    if (ranks == NULL)
        return MF_ERR_NO_MEMORY;
    for (int i = 0; i < comm->size; i++)
        ranks[i] = mf_comm_world_rank(comm, i);
    mf_status_t status = mf_group_create(comm->size, ranks, comm->session, group_p);
    free(ranks);
    return status;
}

void mf_group_release(mf_group_t *group)
{
    if (group == &mf_group_empty)
        return;
    if (atomic_fetch_sub(&group->refs, 1) != 1)
        return;
    mf_handle_forget(group);
    free(group->world_ranks);
    group->world_ranks = NULL;
    group->kind = MF_KIND_FREED;
    pthread_mutex_lock(&groups.lock);
    group->next_free = groups.free_objects;
    groups.free_objects = group;
    pthread_mutex_unlock(&groups.lock);
}

int *mf_group_inverse(const mf_group_t *group)
{
    int nprocs = mf_vci_process_count();
    int *inverse = mf_malloc(sizeof(int) * (size_t)nprocs, "group rank map");
    if (inverse == NULL)
        return NULL;
    for (int w = 0; w < nprocs; w++)
        inverse[w] = -1;
    for (int i = 0; i < group->size; i++)
        inverse[group->world_ranks[i]] = i;
    return inverse;
}
