/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: the integer form of handles (MPI_<T>_toint, MPI_<T>_fromint). Predefined handles
 * are small constants and convert to themselves. A user handle is a pointer, which does not
 * fit an int, so it gets a slot in a registry on its first conversion: the integer is the
 * handle kind in the top bits and the slot number below, so it is never a predefined value and
 * a value of the wrong kind is recognised. A hash table finds a handle's slot; destroying an
 * object releases its slot (mf_handle_forget). Nothing here is on a message path.
 * Also the recyclers that keep freed objects readable (mf_recycler_t).
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

#define SLOT_BITS 24
#define BUCKETS   1024

typedef struct entry {
    const void *handle;
    int value;
    struct entry *next;
} entry_t;

static struct {
    pthread_mutex_t lock;
    atomic_int used; /* entries registered: lets mf_handle_forget skip the lock when 0 */
    entry_t *buckets[BUCKETS];
    entry_t **slots; /* slot -> entry; slot 0 unused */
    int nslots, cap;
    int *free_slots, nfree;
} reg = {.lock = PTHREAD_MUTEX_INITIALIZER};

static unsigned bucket_of(const void *handle)
{
    uintptr_t h = (uintptr_t)handle;
    return (unsigned)((h >> 4) ^ (h >> 14)) % BUCKETS;
}

static entry_t *find_locked(const void *handle)
{
    for (entry_t *e = reg.buckets[bucket_of(handle)]; e != NULL; e = e->next) {
        if (e->handle == handle)
            return e;
    }
    return NULL;
}

/* A free slot number, or -1; lock held. */
static int slot_new_locked(void)
{
    if (reg.nfree > 0)
        return reg.free_slots[--reg.nfree];
    if (reg.nslots == 0)
        reg.nslots = 1;
    if (reg.nslots >= reg.cap) {
        int cap = reg.cap ? reg.cap * 2 : 64;
        if (cap >= (1 << SLOT_BITS))
            return -1;
        entry_t **slots = realloc(reg.slots, sizeof(*slots) * (size_t)cap);
        if (slots == NULL)
            return -1;
        reg.slots = slots;
        int *free_slots = realloc(reg.free_slots, sizeof(int) * (size_t)cap);
        if (free_slots == NULL)
            return -1;
        reg.free_slots = free_slots;
        reg.cap = cap;
    }
    return reg.nslots++;
}

int mf_handle_toint(mf_hkind_t kind, const void *handle)
{
    if (mf_handle_is_predefined(handle))
        return (int)(uintptr_t)handle;
    pthread_mutex_lock(&reg.lock);
    entry_t *e = find_locked(handle);
    int value = e != NULL ? e->value : -1;
    if (e == NULL) {
        e = mf_malloc(sizeof(*e), "handle registry entry");
        int slot = e != NULL ? slot_new_locked() : -1;
        if (slot < 0) {
            free(e);
        } else {
            value = ((int)kind << SLOT_BITS) | slot;
            e->handle = handle;
            e->value = value;
            unsigned b = bucket_of(handle);
            e->next = reg.buckets[b];
            reg.buckets[b] = e;
            reg.slots[slot] = e;
            atomic_fetch_add(&reg.used, 1);
        }
    }
    pthread_mutex_unlock(&reg.lock);
    return value;
}

void *mf_handle_fromint(mf_hkind_t kind, int value, int *ok_p)
{
    if (value >= 0 && value < MF_HANDLE_PREDEFINED_MAX) {
        *ok_p = 1;
        return (void *)(uintptr_t)value;
    }
    int slot = value & ((1 << SLOT_BITS) - 1);
    const void *handle = NULL;
    pthread_mutex_lock(&reg.lock);
    if (value > 0 && (value >> SLOT_BITS) == (int)kind && slot > 0 && slot < reg.nslots &&
        reg.slots[slot] != NULL && reg.slots[slot]->value == value)
        handle = reg.slots[slot]->handle;
    pthread_mutex_unlock(&reg.lock);
    *ok_p = handle != NULL;
    return (void *)(uintptr_t)handle;
}

void mf_handle_forget(const void *handle)
{
    if (atomic_load_explicit(&reg.used, memory_order_relaxed) == 0)
        return;
    pthread_mutex_lock(&reg.lock);
    entry_t **pp = &reg.buckets[bucket_of(handle)];
    while (*pp != NULL && (*pp)->handle != handle)
        pp = &(*pp)->next;
    entry_t *e = *pp;
    if (e != NULL) {
        *pp = e->next;
        int slot = e->value & ((1 << SLOT_BITS) - 1);
        reg.slots[slot] = NULL;
        reg.free_slots[reg.nfree++] = slot;
        atomic_fetch_sub(&reg.used, 1);
    }
    pthread_mutex_unlock(&reg.lock);
    free(e);
}

/* The freed object's view: its kind word, then the link (the words the object used there are
 * dead). */
typedef struct recycled {
    uint32_t kind;
    void *next;
} recycled_t;

void *mf_recycler_take(mf_recycler_t *r, size_t size, const char *what)
{
    pthread_mutex_lock(&r->lock);
    recycled_t *object = r->free_objects;
    if (object != NULL)
        r->free_objects = object->next;
    pthread_mutex_unlock(&r->lock);
    if (object == NULL)
        return mf_calloc(1, size < sizeof(recycled_t) ? sizeof(recycled_t) : size, what);
    memset(object, 0, size);
    return object;
}

void mf_recycler_put(mf_recycler_t *r, void *object)
{
    recycled_t *freed = object;
    mf_handle_forget(object);
    freed->kind = MF_KIND_FREED;
    pthread_mutex_lock(&r->lock);
    freed->next = r->free_objects;
    r->free_objects = freed;
    pthread_mutex_unlock(&r->lock);
}
