/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: attribute keys (keyvals) and the attributes cached on communicators and datatypes
 * (MPI-4.1 section 7.7). Both kinds of object go through one implementation that sees an
 * object as its handle, its attribute list and the lock guarding that list (mf_attr_obj_t);
 * predefined datatypes keep their lists in a table here, since they have no struct. Keyvals live in
 * one table under a lock, with a reference from the user and one from every attribute that uses
 * them, so MPI_Comm_free_keyval does not stop the delete callbacks of attributes still attached.
 * Slots are reused only after every slot number was handed out once (about a million), so a
 * freed keyval is recognised for that long: it sets nothing more, though the attributes still
 * using it may be read and deleted (MPI-4.1 7.7.2). User callbacks always run with no lock
 * held, since they may call MPI on the same object. The keyval table's lock may be taken with
 * an object's lock held, never the other way round.
 */
#include "core.h"

#include <stdlib.h>
#include <string.h>

typedef struct mf_keyval {
    mf_keyval_kind_t kind;
    int refs;       /* the user's (until freed) plus one per attribute */
    int user_freed; /* no longer usable to set attributes */
    void (*copy_fn)(void);
    void (*delete_fn)(void);
    void *extra_state;
} mf_keyval_t;

static struct {
    pthread_mutex_t lock;
    mf_keyval_t **slots;
    int count, cap; /* slot numbers handed out so far (at most KEYVAL_SLOTS_MAX); allocated */
    int reuse;      /* where the search for a released slot starts once all were handed out */
} keyvals = {.lock = PTHREAD_MUTEX_INITIALIZER};

#define KEYVAL_SLOTS_MAX (MF_KEYVAL_KIND_STEP - 1)

/* The table entry of a keyval value (live or still referenced), or NULL; lock held. */
static mf_keyval_t *keyval_entry_locked(int keyval)
{
    int slot = keyval % MF_KEYVAL_KIND_STEP - 1;
    if (keyval <= 0 || slot < 0 || slot >= keyvals.count)
        return NULL;
    mf_keyval_t *kv = keyvals.slots[slot];
    if (kv == NULL || (int)kv->kind != keyval / MF_KEYVAL_KIND_STEP)
        return NULL;
    return kv;
}

static void keyval_unref_locked(int keyval, mf_keyval_t *kv)
{
    if (--kv->refs > 0)
        return;
    keyvals.slots[keyval % MF_KEYVAL_KIND_STEP - 1] = NULL;
    free(kv);
}

mf_status_t mf_keyval_create(mf_keyval_kind_t kind, void (*copy_fn)(void), void (*delete_fn)(void),
                             void *extra_state, int *keyval_p)
{
    mf_keyval_t *kv = mf_calloc(1, sizeof(*kv), "keyval");
    if (kv == NULL)
        return MF_ERR_NO_MEMORY;
    kv->kind = kind;
    kv->refs = 1;
    kv->copy_fn = copy_fn;
    kv->delete_fn = delete_fn;
    kv->extra_state = extra_state;
    mf_status_t status = MF_OK;
    int slot = -1;
    pthread_mutex_lock(&keyvals.lock);
    if (keyvals.count < KEYVAL_SLOTS_MAX) {
        if (keyvals.count == keyvals.cap) {
            int cap = keyvals.cap ? keyvals.cap * 2 : 64;
            cap = cap < KEYVAL_SLOTS_MAX ? cap : KEYVAL_SLOTS_MAX;
            mf_keyval_t **slots = realloc(keyvals.slots, sizeof(*slots) * (size_t)cap);
            if (slots == NULL) {
                status = MF_ERR_NO_MEMORY;
                goto out_unlock;
            }
            keyvals.slots = slots;
            keyvals.cap = cap;
        }
        slot = keyvals.count++;
    } else {
        /* Every slot number has been handed out: take released ones in turn, so that a
         * freed keyval's value stays recognised as long as possible. */
        for (int i = 0; i < KEYVAL_SLOTS_MAX && slot < 0; i++) {
            int candidate = (keyvals.reuse + i) % KEYVAL_SLOTS_MAX;
            if (keyvals.slots[candidate] == NULL)
                slot = candidate;
        }
        if (slot < 0) {
            status = MF_ERR_EXHAUSTED;
            goto out_unlock;
        }
        keyvals.reuse = slot + 1;
    }
    keyvals.slots[slot] = kv;
    *keyval_p = (int)kind * MF_KEYVAL_KIND_STEP + slot + 1;
out_unlock:
    pthread_mutex_unlock(&keyvals.lock);
    if (status != MF_OK)
        free(kv);
    return status;
}

mf_status_t mf_keyval_free(mf_keyval_kind_t kind, int keyval)
{
    mf_status_t status = MF_ERR_INVALID;
    pthread_mutex_lock(&keyvals.lock);
    mf_keyval_t *kv = keyval_entry_locked(keyval);
    if (kv != NULL && kv->kind == kind && !kv->user_freed) {
        kv->user_freed = 1;
        keyval_unref_locked(keyval, kv);
        status = MF_OK;
    }
    pthread_mutex_unlock(&keyvals.lock);
    return status;
}

int mf_keyval_valid(mf_keyval_kind_t kind, int keyval, int attached_ok)
{
    pthread_mutex_lock(&keyvals.lock);
    mf_keyval_t *kv = keyval_entry_locked(keyval);
    int ok = kv != NULL && kv->kind == kind && (!kv->user_freed || attached_ok);
    pthread_mutex_unlock(&keyvals.lock);
    return ok;
}

/* A copy of the keyval's callbacks, taken under the lock so they can be called without it. */
static mf_keyval_t keyval_snapshot(int keyval)
{
    mf_keyval_t copy = {0};
    pthread_mutex_lock(&keyvals.lock);
    mf_keyval_t *kv = keyval_entry_locked(keyval);
    if (kv != NULL)
        copy = *kv;
    pthread_mutex_unlock(&keyvals.lock);
    return copy;
}

static void keyval_unref(int keyval)
{
    pthread_mutex_lock(&keyvals.lock);
    mf_keyval_t *kv = keyval_entry_locked(keyval);
    if (kv != NULL)
        keyval_unref_locked(keyval, kv);
    pthread_mutex_unlock(&keyvals.lock);
}

/* Run the delete callback of an attribute; MPI_SUCCESS for the null callback. */
static int attr_call_delete(const mf_attr_obj_t *obj, int keyval, void *value)
{
    mf_keyval_t kv = keyval_snapshot(keyval);
    if ((uintptr_t)kv.delete_fn <= 1)
        return MPI_SUCCESS;
    switch (obj->kind) {
    case MF_KEYVAL_COMM:
        return ((MPI_Comm_delete_attr_function *)kv.delete_fn)(obj->handle, keyval, value,
                                                               kv.extra_state);
    case MF_KEYVAL_TYPE:
        return ((MPI_Type_delete_attr_function *)kv.delete_fn)(obj->handle, keyval, value,
                                                               kv.extra_state);
    case MF_KEYVAL_WIN:
        return ((MPI_Win_delete_attr_function *)kv.delete_fn)(obj->handle, keyval, value,
                                                              kv.extra_state);
    }
    return MPI_SUCCESS;
}

/* Run the copy callback of an attribute (MPI_*_DUP_FN copies the value). */
static int attr_call_copy(const mf_attr_obj_t *obj, int keyval, void *value, void **out_p,
                          int *flag_p)
{
    mf_keyval_t kv = keyval_snapshot(keyval);
    *flag_p = 0;
    if ((uintptr_t)kv.copy_fn == 0)
        return MPI_SUCCESS;
    if ((uintptr_t)kv.copy_fn == 1) {
        *out_p = value;
        *flag_p = 1;
        return MPI_SUCCESS;
    }
    switch (obj->kind) {
    case MF_KEYVAL_COMM:
        return ((MPI_Comm_copy_attr_function *)kv.copy_fn)(obj->handle, keyval, kv.extra_state,
                                                           value, out_p, flag_p);
    case MF_KEYVAL_TYPE:
        return ((MPI_Type_copy_attr_function *)kv.copy_fn)(obj->handle, keyval, kv.extra_state,
                                                           value, out_p, flag_p);
    case MF_KEYVAL_WIN: break; /* windows are never copied */
    }
    return MPI_SUCCESS;
}

/* An object's attributes are a list kept newest first: freeing takes them from the head (the
 * reverse order of setting) in constant time each, and a dup reads a snapshot from its end
 * (the order of setting) and pushes each copy on the head of the new list. Only a lookup by
 * keyval walks the list. */
static mf_attr_t **find_locked(const mf_attr_obj_t *obj, int keyval)
{
    mf_attr_t **pp = obj->list;
    while (*pp != NULL && (*pp)->keyval != keyval)
        pp = &(*pp)->next;
    return pp;
}

int mf_attr_get(const mf_attr_obj_t *obj, int keyval, void **value_p)
{
    pthread_mutex_lock(obj->lock);
    mf_attr_t *attr = *find_locked(obj, keyval);
    if (attr != NULL)
        *value_p = attr->value;
    pthread_mutex_unlock(obj->lock);
    return attr != NULL;
}

/* A new attribute, not linked yet, holding a reference to its keyval. */
static mf_status_t attr_new(int keyval, void *value, mf_attr_t **attr_p)
{
    mf_attr_t *attr = mf_malloc(sizeof(*attr), "attribute");
    if (attr == NULL)
        return MF_ERR_NO_MEMORY;
    attr->keyval = keyval;
    attr->value = value;
    attr->next = NULL;
    pthread_mutex_lock(&keyvals.lock);
    mf_keyval_t *kv = keyval_entry_locked(keyval);
    if (kv != NULL)
        kv->refs++;
    pthread_mutex_unlock(&keyvals.lock);
    if (kv == NULL) {
        /* freed by another thread since the caller checked it */
        free(attr);
        return MF_ERR_INVALID;
    }
    *attr_p = attr;
    return MF_OK;
}

/* Whether no object has an attribute of keyval: the keyval's references are the user's
 * alone. A keyval is most often set on one object at first, which then needs no search. */
static int keyval_unused_locked(const mf_keyval_t *kv)
{
    return kv->refs == (kv->user_freed ? 0 : 1);
}

static int keyval_unused(int keyval)
{
    pthread_mutex_lock(&keyvals.lock);
    mf_keyval_t *kv = keyval_entry_locked(keyval);
    int unused = kv != NULL && keyval_unused_locked(kv);
    pthread_mutex_unlock(&keyvals.lock);
    return unused;
}

/* Add an attribute the caller found unset, as the newest. */
static mf_status_t attr_insert(const mf_attr_obj_t *obj, int keyval, void *value)
{
    mf_attr_t *attr = mf_malloc(sizeof(*attr), "attribute");
    if (attr == NULL)
        return MF_ERR_NO_MEMORY;
    attr->keyval = keyval;
    attr->value = value;
    /* The keyval's use is counted under the object's lock, so of two threads setting it on
     * the same object only one can see it unused; the other searches and finds the first. */
    pthread_mutex_lock(obj->lock);
    pthread_mutex_lock(&keyvals.lock);
    mf_keyval_t *kv = keyval_entry_locked(keyval);
    int unused = kv != NULL && keyval_unused_locked(kv);
    if (kv != NULL)
        kv->refs++;
    pthread_mutex_unlock(&keyvals.lock);
    mf_attr_t *present = NULL;
    if (kv != NULL && !unused)
        present = *find_locked(obj, keyval);
    if (present != NULL) {
        present->value = value; /* set by another thread since the caller looked */
    } else if (kv != NULL) {
        attr->next = *obj->list;
        *obj->list = attr;
    }
    pthread_mutex_unlock(obj->lock);
    if (kv == NULL) {
        free(attr); /* freed by another thread since the caller checked it */
        return MF_ERR_INVALID;
    }
    if (present != NULL) {
        free(attr);
        keyval_unref(keyval);
    }
    return MF_OK;
}

mf_status_t mf_attr_set(const mf_attr_obj_t *obj, int keyval, void *value, int *cb_err_p)
{
    void *old;
    if (!keyval_unused(keyval) && mf_attr_get(obj, keyval, &old)) {
        /* Replacing a value deletes the old one first (MPI-4.1 section 7.7.2). */
        int rc = attr_call_delete(obj, keyval, old);
        if (rc != MPI_SUCCESS) {
            *cb_err_p = rc;
            return MF_ERR_OTHER;
        }
        pthread_mutex_lock(obj->lock);
        mf_attr_t *attr = *find_locked(obj, keyval);
        if (attr != NULL)
            attr->value = value;
        pthread_mutex_unlock(obj->lock);
        if (attr != NULL)
            return MF_OK;
    }
    return attr_insert(obj, keyval, value);
}

/* Unlink and free the attribute of keyval, dropping its keyval reference. */
static void attr_remove(const mf_attr_obj_t *obj, int keyval)
{
    pthread_mutex_lock(obj->lock);
    mf_attr_t **pp = find_locked(obj, keyval), *attr = *pp;
    if (attr != NULL)
        *pp = attr->next;
    pthread_mutex_unlock(obj->lock);
    if (attr == NULL)
        return;
    free(attr);
    keyval_unref(keyval);
}

mf_status_t mf_attr_delete(const mf_attr_obj_t *obj, int keyval, int *cb_err_p)
{
    void *value;
    if (!mf_attr_get(obj, keyval, &value))
        return MF_ERR_NOT_FOUND;
    int rc = attr_call_delete(obj, keyval, value);
    if (rc != MPI_SUCCESS) {
        *cb_err_p = rc;
        return MF_ERR_OTHER;
    }
    attr_remove(obj, keyval);
    return MF_OK;
}

/* The attributes of obj as an array (keyval, value), newest first. */
static mf_status_t attr_snapshot(const mf_attr_obj_t *obj, mf_attr_t **list_p, int *count_p)
{
    pthread_mutex_lock(obj->lock);
    int n = 0;
    for (mf_attr_t *a = *obj->list; a != NULL; a = a->next)
        n++;
    mf_attr_t *list = n > 0 ? mf_malloc(sizeof(*list) * (size_t)n, "attribute list") : NULL;
    if (n > 0 && list == NULL) {
        pthread_mutex_unlock(obj->lock);
        return MF_ERR_NO_MEMORY;
    }
    n = 0;
    for (mf_attr_t *a = *obj->list; a != NULL; a = a->next)
        list[n++] = *a;
    pthread_mutex_unlock(obj->lock);
    *list_p = list;
    *count_p = n;
    return MF_OK;
}

mf_status_t mf_attr_copy(const mf_attr_obj_t *old, const mf_attr_obj_t *out, int *cb_err_p)
{
    mf_attr_t *list = NULL;
    int n = 0;
    mf_status_t status = attr_snapshot(old, &list, &n);
    /* Oldest first, the order of setting. The copies go on the head of out's list without a
     * search: the keyvals of one list are distinct and out is new, nobody else's yet. */
    for (int i = n - 1; i >= 0 && status == MF_OK; i--) {
        void *value = NULL;
        int flag = 0;
        int rc = attr_call_copy(old, list[i].keyval, list[i].value, &value, &flag);
        if (rc != MPI_SUCCESS) {
            *cb_err_p = rc;
            status = MF_ERR_OTHER;
            break;
        }
        mf_attr_t *attr;
        if (flag && (status = attr_new(list[i].keyval, value, &attr)) == MF_OK) {
            pthread_mutex_lock(out->lock);
            attr->next = *out->list;
            *out->list = attr;
            pthread_mutex_unlock(out->lock);
        }
    }
    free(list);
    return status;
}

/* The attribute set last, or 0 when there is none. */
static int attr_newest(const mf_attr_obj_t *obj, int *keyval_p, void **value_p)
{
    pthread_mutex_lock(obj->lock);
    mf_attr_t *newest = *obj->list;
    if (newest != NULL) {
        *keyval_p = newest->keyval;
        *value_p = newest->value;
    }
    pthread_mutex_unlock(obj->lock);
    return newest != NULL;
}

mf_status_t mf_attr_delete_all(const mf_attr_obj_t *obj, int *cb_err_p)
{
    /* The last one set goes first; the list is read again after every callback, which may
     * delete (or set) other attributes of the object: each is deleted once. Unless a callback
     * set newer ones, the attribute to unlink is still the head. */
    int keyval;
    void *value;
    while (attr_newest(obj, &keyval, &value)) {
        int rc = attr_call_delete(obj, keyval, value);
        if (rc != MPI_SUCCESS) {
            *cb_err_p = rc;
            return MF_ERR_OTHER;
        }
        attr_remove(obj, keyval);
    }
    return MF_OK;
}

/* ---- the objects ------------------------------------------------------------------------- */

mf_attr_obj_t mf_comm_attr_obj(mf_comm_t *comm)
{
    return (mf_attr_obj_t){MF_KEYVAL_COMM, mf_comm_handle(comm), &comm->attrs, &comm->name_lock};
}

/* Predefined datatypes are ABI constants below 4096 with no struct: their lists live here,
 * under one lock (attributes on them are rare). */
static struct {
    pthread_mutex_t lock;
    mf_attr_t *lists[4096];
} predef_type_attrs = {.lock = PTHREAD_MUTEX_INITIALIZER};

mf_attr_obj_t mf_dtype_attr_obj(MPI_Datatype dt)
{
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d != NULL)
        return (mf_attr_obj_t){MF_KEYVAL_TYPE, dt, &d->attrs, &d->name_lock};
    MF_ASSERT((uintptr_t)dt < 4096);
    return (mf_attr_obj_t){MF_KEYVAL_TYPE, dt, &predef_type_attrs.lists[(uintptr_t)dt],
                           &predef_type_attrs.lock};
}

mf_status_t mf_comm_attr_set(mf_comm_t *comm, int keyval, void *value, int *cb_err_p)
{
    mf_attr_obj_t obj = mf_comm_attr_obj(comm);
    return mf_attr_set(&obj, keyval, value, cb_err_p);
}

int mf_comm_attr_get(mf_comm_t *comm, int keyval, void **value_p)
{
    mf_attr_obj_t obj = mf_comm_attr_obj(comm);
    return mf_attr_get(&obj, keyval, value_p);
}

mf_status_t mf_comm_attr_delete(mf_comm_t *comm, int keyval, int *cb_err_p)
{
    mf_attr_obj_t obj = mf_comm_attr_obj(comm);
    return mf_attr_delete(&obj, keyval, cb_err_p);
}

mf_status_t mf_comm_attr_copy(mf_comm_t *oldcomm, mf_comm_t *newcomm, int *cb_err_p)
{
    mf_attr_obj_t old = mf_comm_attr_obj(oldcomm), out = mf_comm_attr_obj(newcomm);
    return mf_attr_copy(&old, &out, cb_err_p);
}

mf_status_t mf_comm_attr_delete_all(mf_comm_t *comm, int *cb_err_p)
{
    mf_attr_obj_t obj = mf_comm_attr_obj(comm);
    return mf_attr_delete_all(&obj, cb_err_p);
}
