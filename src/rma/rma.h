/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided communication (MPI-4.1 chapter 12): windows and the operations on them. Every
 * operation is a message on the window's own communicator (a private duplicate of the one it
 * was created on) that the target applies when its progress engine runs: puts, gets,
 * accumulates, lock requests and epoch notifications all travel in order between a pair, so a
 * reply to a flush means everything sent before it was applied. See docs/design/rma.md.
 *
 * The functions here return an MPI error class (MPI_SUCCESS when none) and, on error, a reason
 * in `why` (MF_RMA_WHY_LEN bytes) for the binding's message.
 */
#ifndef MF_RMA_H
#define MF_RMA_H

#include "core.h"

#define MF_RMA_WHY_LEN 200

typedef struct mf_win_region {
    uintptr_t base;
    size_t size;
    struct mf_win_region *next;
} mf_win_region_t;

struct mf_rma_pending;
struct mf_rma_queued;

struct MPI_ABI_Win {
    uint32_t kind;
    int flavor;      /* MPI_WIN_FLAVOR_* */
    mf_comm_t *comm; /* private duplicate: ranks, group, and the window's traffic */
    void *base;
    size_t size;
    int disp_unit;
    /* every rank's size and displacement unit (not for dynamic windows) */
    uint64_t *sizes;
    int *disp_units;
    /* MPI_Win_allocate_shared: the mapping and each rank's offset in it */
    char *shm_map;
    size_t shm_len;
    uint64_t *shm_offs;
    void *owned; /* memory MPI_Win_allocate allocated */
    /* what MPI_Win_get_attr points to for the predefined keys */
    MPI_Aint attr_size;
    int attr_disp_unit, attr_flavor, attr_model;
    _Atomic(MPI_Errhandler) errhandler;
    pthread_mutex_t name_lock; /* name, info and attrs */
    char name[MPI_MAX_OBJECT_NAME];
    struct MPI_ABI_Info *info;
    struct mf_attr *attrs;

    /* Everything below is under `lock`. */
    pthread_mutex_t lock;
    uint32_t next_reply;
    struct mf_rma_pending *pending; /* sends and reply receives not yet complete */
    /* access epochs at this process (origin side) */
    int fence_open;   /* a fence opened an epoch no fence has closed */
    int lock_all;     /* MPI_Win_lock_all holds (1; 2 with MPI_MODE_NOCHECK) */
    uint8_t *locked;  /* per target: locked by this process */
    uint8_t *nocheck; /* per target: its lock was taken with MPI_MODE_NOCHECK */
    uint8_t *dirty;   /* per target: operations since its last flush */
    int *start_group; /* MPI_Win_start's targets (window ranks); NULL: no such epoch */
    int start_n;
    unsigned *acks;   /* per target: flush/unlock acknowledgements received */
    unsigned *grants; /* per target: lock grants received */
    unsigned *errors; /* per target: operations it reported invalid, not yet returned */
    /* exposure at this process (target side) */
    int lock_excl;   /* window rank holding the exclusive lock, or -1 */
    int lock_shared; /* shared locks held */
    struct mf_rma_queued *lock_queue;
    int post_n;               /* MPI_Win_post's origins; -1: no exposure epoch */
    int completes_in;         /* MPI_Win_complete notices received */
    unsigned *bad_ops;        /* per origin: invalid operations since its last acknowledgement */
    mf_win_region_t *regions; /* dynamic windows: attached memory */
    struct mf_rma_incoming *incoming; /* a request whose data is still arriving */
    int freeing;
    struct MPI_ABI_Win *next, *prev; /* every live window, for progress */
};

typedef struct MPI_ABI_Win mf_win_t;

static inline mf_win_t *mf_win_get(MPI_Win handle)
{
    if (!mf_handle_is_object(handle))
        return NULL;
    return handle->kind == MF_KIND_WIN ? handle : NULL;
}

/* Collective over comm (an intracommunicator). flavor MPI_WIN_FLAVOR_ALLOCATE and _SHARED
 * allocate `size` bytes (*base_p returns them); _CREATE takes *base_p; _DYNAMIC ignores both. */
int mf_win_create(mf_comm_t *comm, int flavor, void **base_p, size_t size, int disp_unit,
                  struct MPI_ABI_Info *info, mf_win_t **win_p, char *why);
/* MPI_ERR_RMA_SYNC (why says so) while an epoch is open: the window cannot be freed. */
int mf_win_free_check(mf_win_t *win, char *why);
/* Collective; the caller has checked (mf_win_free_check) and deleted the attributes. */
int mf_win_free(mf_win_t *win, char *why);
int mf_win_shared_query(mf_win_t *win, int rank, size_t *size_p, int *disp_unit_p, void **base_p,
                        char *why);
int mf_win_attach(mf_win_t *win, void *base, size_t size, char *why);
int mf_win_detach(mf_win_t *win, const void *base, char *why);

typedef enum {
    MF_RMA_PUT = 1,
    MF_RMA_GET,
    MF_RMA_ACC,  /* MPI_Accumulate */
    MF_RMA_GACC, /* MPI_Get_accumulate, MPI_Fetch_and_op */
    MF_RMA_CAS,  /* MPI_Compare_and_swap */
} mf_rma_kind_t;

/* One operation. origin: what is sent (put, accumulates, the new value of a swap); result:
 * where the target's data comes back (get: origin_* describe it; get-accumulate, swap);
 * compare: the swap's comparand. The caller checked the arguments, the epoch is checked here.
 * With req_p, a request that completes when the origin's buffers may be reused (results
 * included) is returned. */
typedef struct mf_rma_args {
    mf_rma_kind_t kind;
    int single; /* MPI_Fetch_and_op, MPI_Compare_and_swap: one item of `datatype` everywhere */
    const void *origin;
    MPI_Count origin_count;
    MPI_Datatype origin_dt;
    void *result;
    MPI_Count result_count;
    MPI_Datatype result_dt;
    const void *compare;
    int target;
    MPI_Aint target_disp;
    MPI_Count target_count;
    MPI_Datatype target_dt;
    MPI_Op op;
} mf_rma_args_t;

int mf_rma_op(mf_win_t *win, const mf_rma_args_t *a, mf_request_t **req_p, char *why);

/* Synchronisation. `assert` is the MPI_MODE_* bits. */
int mf_win_fence(mf_win_t *win, int assert, char *why);
int mf_win_lock(mf_win_t *win, int lock_type, int rank, int assert, char *why);
int mf_win_unlock(mf_win_t *win, int rank, char *why);
int mf_win_lock_all(mf_win_t *win, int assert, char *why);
int mf_win_unlock_all(mf_win_t *win, char *why);
/* rank < 0: every target */
int mf_win_flush(mf_win_t *win, int rank, char *why);
int mf_win_post(mf_win_t *win, const int *ranks, int n, int assert, char *why);
int mf_win_start(mf_win_t *win, const int *ranks, int n, int assert, char *why);
int mf_win_complete(mf_win_t *win, char *why);
/* blocking: MPI_Win_wait; else MPI_Win_test (*flag_p) */
int mf_win_wait(mf_win_t *win, int blocking, int *flag_p, char *why);

/* At finalize, before the transport closes: windows the program never freed stop taking part
 * in progress. */
void mf_rma_fini(void);

#endif /* MF_RMA_H */
