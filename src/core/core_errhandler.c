/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: error handler objects. The predefined handlers (MPI_ERRORS_ARE_FATAL,
 * MPI_ERRORS_ABORT, MPI_ERRORS_RETURN) are ABI constants and are never counted; user handlers
 * are reference counted so a communicator keeps its handler alive after MPI_Errhandler_free.
 */
#include "core.h"

#include <stdlib.h>

int mf_errhandler_valid(MPI_Errhandler eh)
{
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_ABORT || eh == MPI_ERRORS_RETURN)
        return 1;
    if (!mf_handle_is_object(eh))
        return 0;
    return eh->kind == MF_KIND_ERRHANDLER;
}

static mf_recycler_t errhandler_objects = MF_RECYCLER_INIT;

struct MPI_ABI_Errhandler *mf_errhandler_new(void)
{
    struct MPI_ABI_Errhandler *eh =
        mf_recycler_take(&errhandler_objects, sizeof(*eh), "error handler");
    if (eh == NULL)
        return NULL;
    eh->kind = MF_KIND_ERRHANDLER;
    atomic_store(&eh->refs, 1);
    atomic_store(&eh->user_refs, 1);
    return eh;
}

static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;

MPI_Errhandler mf_errhandler_acquire(_Atomic(MPI_Errhandler) *slot)
{
    MPI_Errhandler eh = atomic_load_explicit(slot, memory_order_acquire);
    if (mf_handle_is_predefined(eh)) /* not counted: nothing to take */
        return eh;
    pthread_mutex_lock(&slot_lock);
    eh = atomic_load_explicit(slot, memory_order_relaxed);
    mf_errhandler_retain(eh);
    pthread_mutex_unlock(&slot_lock);
    return eh;
}

MPI_Errhandler mf_errhandler_acquire_for_user(_Atomic(MPI_Errhandler) *slot)
{
    MPI_Errhandler eh = mf_errhandler_acquire(slot);
    if (!mf_handle_is_predefined(eh))
        atomic_fetch_add_explicit(&eh->user_refs, 1, memory_order_relaxed);
    return eh;
}

/* The user's count is kept apart from the references communicators hold: a copy of a handle
 * freed once too often would otherwise take a communicator's reference, and the handler would be
 * recycled while that communicator still calls it. */
int mf_errhandler_user_free(MPI_Errhandler eh)
{
    if (mf_handle_is_predefined(eh))
        return 1;
    int n = atomic_load_explicit(&eh->user_refs, memory_order_relaxed);
    do {
        if (n == 0)
            return 0;
    } while (!atomic_compare_exchange_weak_explicit(&eh->user_refs, &n, n - 1, memory_order_relaxed,
                                                    memory_order_relaxed));
    mf_errhandler_release(eh);
    return 1;
}

void mf_errhandler_replace(_Atomic(MPI_Errhandler) *slot, MPI_Errhandler eh)
{
    mf_errhandler_retain(eh);
    pthread_mutex_lock(&slot_lock);
    MPI_Errhandler old = atomic_exchange_explicit(slot, eh, memory_order_acq_rel);
    pthread_mutex_unlock(&slot_lock);
    mf_errhandler_release(old);
}

void mf_errhandler_retain(MPI_Errhandler eh)
{
    if (!mf_handle_is_predefined(eh))
        atomic_fetch_add_explicit(&eh->refs, 1, memory_order_relaxed);
}

void mf_errhandler_release(MPI_Errhandler eh)
{
    if (mf_handle_is_predefined(eh))
        return;
    if (atomic_fetch_sub_explicit(&eh->refs, 1, memory_order_acq_rel) == 1) {
        mf_recycler_put(&errhandler_objects, eh);
    }
}
