/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned communication on tagged transport messages. At init each side sends the other a
 * setup message (its channel id and partition layout) on the partitioned setup context and
 * posts the receive of the peer's, matched on (communicator, source, tag) in order: requests
 * pair in the order of their init calls, as MPI-4.1 wants, whatever the order of their starts.
 * A request freed while its setup is still on its way leaves it to a list that finishes it
 * (the message belongs to that pairing, and must not reach a later one). From then on the sender
 * sends partition p as one message tagged (receiver's channel, p) as soon as MPI_Pready marks it
 * and the receiver is known to be armed; the receiver posts one receive per sender partition at its
 * buffer offset, so data lands in place and MPI_Parrived only looks at the receives that cover a
 * partition. Later iterations skip the setup: the receiver re-arms its receives and sends a token
 * tagged (sender's channel, MF_PART_TOKEN_INDEX), and the sender holds ready partitions back until
 * that token has arrived, so it never writes into a buffer the receiver still owns. All state
 * changes happen under the communicator's VCI lock; only the per partition "ready" marks and the
 * "armed" flag are atomics, which is what lets MPI_Pready run from many threads without waiting for
 * anything.
 *
 * Small partitions are aggregated: a partition that becomes sendable takes its ready-but-unsent
 * neighbours along (never waiting for any), one message of at most MANIFOLD_PART_AGGR_BYTES
 * tagged with its first partition. A receiver whose sender aggregates cannot know the runs in
 * advance, so it does not pre-post: it takes the messages of its channel with a matched probe
 * and receives each at its first partition's offset, its length giving the partition count.
 * On a spread communicator a request's data and tokens use the VCI of (sender rank, tag), the
 * same on both sides; the setup handshake stays on the home VCI.
 */
#include "part.h"

#include "pt2pt.h"

#include <stdlib.h>
#include <string.h>

/* The setup message: identical layout on both sides (same build). */
typedef struct part_setup {
    uint64_t part_bytes;
    uint32_t channel;
    uint32_t npart;
    uint32_t vci;  /* index of the data VCI: both sides must have picked the same */
    uint32_t aggr; /* sender: 1 when it aggregates partitions (the receiver probes) */
} part_setup_t;

/* A sender partition's mark. PACKING: MPI_Pready is packing it (a datatype whose items are not
 * one run of memory), so it counts as marked but nothing sends it yet. */
enum { PART_IDLE = 0, PART_READY = 1, PART_SENT = 2, PART_PACKING = 3 };
/* A receive partition of a packed request: its bytes are still in the staging copy, being
 * copied out by one thread, or in the user's buffer. */
enum { UNPACK_NOT = 0, UNPACK_BUSY = 1, UNPACK_DONE = 2 };

typedef struct mf_part {
    int is_send;
    int npart;
    size_t part_bytes;
    char *buf; /* what travels: the user's buffer, or the staging copy of a packed request */
    /* A datatype whose items are not one run of memory: the partitions travel packed through
     * `buf`, a staging copy. The sender packs a partition in MPI_Pready (in the calling thread),
     * the receiver copies one out once all of it landed (MPI_Parrived, or at completion). The
     * request holds a reference on the type (dt_handle); dt is what packs (a pair type's
     * twin). */
    char *staging;
    MPI_Datatype dt_handle;
    const mf_dtype_t *dt;
    MPI_Count dt_count;               /* items per partition */
    uintptr_t user_buf;               /* the user's buffer (MPI_BOTTOM is 0: absolute addresses) */
    MPI_Aint dt_stride;               /* bytes from one partition's first item to the next one's */
    _Atomic(unsigned char) *unpacked; /* receiver: UNPACK_* per own partition */

    uint32_t channel; /* allocated here; the peer's messages to us carry it */
    int started_once; /* the setup handshake was issued */
    int setup_done;   /* the peer's setup message arrived and was read */
    uint32_t peer_channel;
    int peer_npart;
    size_t peer_part_bytes;
    mf_status_t err; /* MF_ERR_TRUNCATE when the two buffers differ in size */
    part_setup_t out, in;
    /* setup messages, on the home VCI; tokens, on the request's VCI */
    mf_vci_t *home;
    mf_vci_op_t setup_send, setup_recv;
    int setup_posted;
    mf_vci_op_t ctl_send, ctl_recv;
    int ctl_send_posted, ctl_recv_posted;
    /* sender: most partitions per message (1: no aggregation) */
    int aggr_max;
    struct mf_part *next_dead; /* the list of freed requests whose setup is still in flight */
    /* receiver of an aggregating sender: head[i] is the first partition of the message that
     * carries sender partition i (-1: not taken yet); nclaimed partitions are taken */
    int peer_aggr;
    int *head;
    int nclaimed;
    char token_out, token_in;
    /* sender: partition marks, "receiver armed" flag, partitions handed to the transport */
    _Atomic(unsigned char) *state;
    atomic_int armed;
    int nsent;
    /* sender: one op per own partition; receiver: one per sender partition */
    mf_vci_op_t *ops;
    int nops;
    int data_posted; /* receiver: this iteration's receives are posted */
    /* on the list of requests waiting for a control message (below) */
    mf_request_t *req;
    struct mf_part *wait_next, *wait_prev;
    int waiting;
    struct mf_part *all_next, *all_prev; /* every state not yet released (below) */
} mf_part_t;

/* Every partitioned state, so that what the program never freed (legal for an inactive
 * request) is released when the library shuts down. */
static struct {
    pthread_mutex_t lock;
    mf_part_t *head;
} all_parts = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void all_parts_add(mf_part_t *pt)
{
    pthread_mutex_lock(&all_parts.lock);
    pt->all_next = all_parts.head;
    if (all_parts.head != NULL)
        all_parts.head->all_prev = pt;
    all_parts.head = pt;
    pthread_mutex_unlock(&all_parts.lock);
}

/* Active requests that cannot move data until a control message arrives (the sender the
 * receiver's setup or re-arm token, the receiver the sender's setup), so that every progress
 * loop advances them (mf_part_progress_all), not only waits on themselves: MPI's progress rule
 * lets a process wait for anything else first. A ring that waits for its receive before its
 * send otherwise never sent once the setup came over another VCI than the wait polled. */
static struct {
    pthread_mutex_t lock;
    mf_part_t *head;
} waiting = {.lock = PTHREAD_MUTEX_INITIALIZER};
atomic_int mf_part_waiting;

static int part_blocked(const mf_part_t *pt)
{
    return pt->is_send ? !atomic_load(&pt->armed) : !pt->data_posted;
}

static void waiting_unlink_locked(mf_part_t *pt)
{
    if (!pt->waiting)
        return;
    if (pt->wait_prev != NULL)
        pt->wait_prev->wait_next = pt->wait_next;
    else
        waiting.head = pt->wait_next;
    if (pt->wait_next != NULL)
        pt->wait_next->wait_prev = pt->wait_prev;
    pt->wait_next = pt->wait_prev = NULL;
    pt->waiting = 0;
    atomic_fetch_sub_explicit(&mf_part_waiting, 1, memory_order_relaxed);
}

/* Called without any VCI lock held (the list's lock comes first). */
static void waiting_add(mf_part_t *pt)
{
    pthread_mutex_lock(&waiting.lock);
    if (!pt->waiting) {
        pt->wait_prev = NULL;
        pt->wait_next = waiting.head;
        if (waiting.head != NULL)
            waiting.head->wait_prev = pt;
        waiting.head = pt;
        pt->waiting = 1;
        atomic_fetch_add_explicit(&mf_part_waiting, 1, memory_order_relaxed);
    }
    pthread_mutex_unlock(&waiting.lock);
    mf_vci_async_kick();
}

static void waiting_remove(mf_part_t *pt)
{
    pthread_mutex_lock(&waiting.lock);
    waiting_unlink_locked(pt);
    pthread_mutex_unlock(&waiting.lock);
}

static atomic_uint next_channel = 1;

/* to_sender: the message goes from the receiving side to the sending side. */
static uint64_t setup_tag(mf_comm_t *comm, int src, int tag, int to_sender)
{
    unsigned ctx = MF_PART_SETUP_CTX_BIT | mf_comm_ctx_user(comm);
    return mf_pt2pt_tag_make(to_sender ? ctx | MF_PART_SETUP_TO_SEND : ctx, src, tag);
}

static void part_poll(mf_request_t *req);
static int part_advance(mf_request_t *req);

void mf_part_progress_all(void)
{
    /* One thread at a time; the others go on polling their VCIs. */
    if (pthread_mutex_trylock(&waiting.lock) != 0)
        return;
    mf_part_t *pt = waiting.head;
    while (pt != NULL) {
        mf_part_t *next = pt->wait_next;
        /* Listed from MPI_Start until unblocked: active, and restarted only after it completed
         * (its owner may be completing it now, so only `done` and what the lock guards are
         * read). */
        if (mf_vci_op_is_done(&pt->req->op) || !part_advance(pt->req))
            waiting_unlink_locked(pt);
        pt = next;
    }
    pthread_mutex_unlock(&waiting.lock);
}

/* The VCI of a request's data and tokens: on a spread communicator the pool VCI of (sender
 * rank, tag), computed alike on both sides (partitioned receives have no wildcards, so no hint
 * is needed to key on both); otherwise the communicator's. */
static mf_vci_t *part_vci(mf_comm_t *comm, int spread, int is_send, int peer, int tag)
{
    if (spread <= 1 || peer == MPI_PROC_NULL)
        return comm->vci;
    unsigned key = (unsigned)(is_send ? comm->rank : peer) + (unsigned)tag;
    return mf_vci_get((int)(((unsigned)mf_vci_index(comm->vci) + key) % (unsigned)spread));
}

/* Count a partitioned request alive on comm (its VCI is fixed from now on, so the communicator
 * must not be spread while it lives) and return the spreading it sees: counted under the home
 * VCI's lock, where the hint agreement reads it, once no MPI_Comm_set_info is deciding. */
static int part_count_live(mf_comm_t *comm)
{
    int polls = 0;
    for (;;) {
        mf_vci_lock(comm->vci);
        int spread = atomic_load_explicit(&comm->vci_spread, memory_order_relaxed);
        if (spread != 0)
            comm->part_live++;
        mf_vci_unlock(comm->vci);
        if (spread != 0)
            return spread;
        mf_progress_poke(comm->vci, &polls);
    }
}

static mf_status_t setup_post(mf_request_t *req, mf_part_t *pt);
static void dead_sweep(int cancel);
static void part_state_free(mf_part_t *pt);

/* A request whose partitions travel packed: the staging copy and the type's reference. */
static mf_status_t packed_init(mf_part_t *pt, void *buf, MPI_Datatype packed, MPI_Count count)
{
    pt->staging = mf_malloc((size_t)pt->npart * pt->part_bytes, "partitioned staging buffer");
    if (!pt->is_send)
        pt->unpacked = calloc((size_t)pt->npart, sizeof(*pt->unpacked));
    if (pt->staging == NULL || (!pt->is_send && pt->unpacked == NULL))
        return MF_ERR_NO_MEMORY;
    pt->buf = pt->staging;
    mf_dtype_retain(packed);
    pt->dt_handle = packed;
    pt->dt = mf_dtype_get(mf_dtype_packed_as(packed));
    pt->dt_count = count;
    pt->user_buf = (uintptr_t)buf;
    pt->dt_stride = pt->dt->extent * (MPI_Aint)count;
    return MF_OK;
}

/* Sender: pack partition p into the staging copy (MPI_Pready, before it is marked ready). */
static void pack_part(mf_part_t *pt, int p)
{
    mf_dtype_pack_all(pt->dt, pt->dt_count,
                      (const void *)(pt->user_buf + (uintptr_t)(p * pt->dt_stride)),
                      pt->buf + (size_t)p * pt->part_bytes);
}

/* Receiver: copy receive partition p, all of whose bytes have landed, out of the staging copy
 * once. Returns whether it is in the user's buffer now (0 while another thread copies it). */
static int unpack_part(mf_part_t *pt, int p)
{
    unsigned char expect = UNPACK_NOT;
    if (atomic_compare_exchange_strong(&pt->unpacked[p], &expect, UNPACK_BUSY)) {
        mf_dtype_unpack_all(pt->dt, pt->dt_count,
                            (void *)(pt->user_buf + (uintptr_t)(p * pt->dt_stride)),
                            pt->buf + (size_t)p * pt->part_bytes);
        atomic_store(&pt->unpacked[p], UNPACK_DONE);
        return 1;
    }
    return expect == UNPACK_DONE;
}

mf_status_t mf_part_init(int is_send, void *buf, int npart, size_t part_bytes, MPI_Datatype packed,
                         MPI_Count count, int peer, int tag, mf_comm_t *comm, mf_request_t **req_p)
{
    dead_sweep(0);
    mf_part_t *pt = calloc(1, sizeof(*pt));
    if (pt == NULL)
        return MF_ERR_NO_MEMORY;
    pt->is_send = is_send;
    pt->npart = npart;
    pt->part_bytes = part_bytes;
    pt->buf = buf;
    pt->channel = atomic_fetch_add(&next_channel, 1);
    all_parts_add(pt);
    if (packed != MPI_DATATYPE_NULL && part_bytes > 0 && peer != MPI_PROC_NULL &&
        packed_init(pt, buf, packed, count) != MF_OK) {
        part_state_free(pt);
        return MF_ERR_NO_MEMORY;
    }
    if (is_send) {
        pt->state = calloc((size_t)npart, sizeof(*pt->state));
        pt->ops = calloc((size_t)npart, sizeof(*pt->ops));
        pt->nops = npart;
        if (pt->state == NULL || pt->ops == NULL) {
            part_state_free(pt);
            return MF_ERR_NO_MEMORY;
        }
    }
    pt->home = comm->vci;
    pt->aggr_max = 1;
    if (is_send && part_bytes > 0 && (size_t)mf_params.part_aggr_bytes > part_bytes)
        pt->aggr_max = (int)((size_t)mf_params.part_aggr_bytes / part_bytes);
    mf_vci_t *vci = part_vci(comm, part_count_live(comm), is_send, peer, tag);
    mf_vci_lock(vci);
    mf_request_t *req = mf_request_alloc_locked(vci, is_send ? MF_REQ_PSEND : MF_REQ_PRECV, comm);
    mf_vci_unlock(vci);
    if (req == NULL) {
        mf_vci_lock(pt->home);
        comm->part_live--;
        mf_vci_unlock(pt->home);
        part_state_free(pt);
        return MF_ERR_NO_MEMORY;
    }
    mf_request_set_persistent(req);
    req->buf = buf;
    req->buf_len = (size_t)npart * part_bytes;
    req->peer = peer;
    req->tag = tag;
    req->part = pt;
    pt->req = req;
    req->poll = part_poll;
    mf_status_t st = peer != MPI_PROC_NULL ? setup_post(req, pt) : MF_OK;
    if (st != MF_OK) {
        mf_part_free(req);
        return st;
    }
    *req_p = req;
    return MF_OK;
}

/* Send partition p (already moved to SENT by the caller) together with the ready neighbours it
 * can take along: each extra partition is claimed with the same compare-and-swap as a single
 * one, so a concurrent MPI_Pready of a neighbour either finds it claimed or claims it first. */
static void sender_send_locked(mf_request_t *req, mf_part_t *pt, int p)
{
    int lo = p, hi = p;
    while (hi - lo + 1 < pt->aggr_max && hi + 1 < pt->npart) {
        unsigned char expect = PART_READY;
        if (!atomic_compare_exchange_strong(&pt->state[hi + 1], &expect, PART_SENT))
            break;
        hi++;
    }
    while (hi - lo + 1 < pt->aggr_max && lo > 0) {
        unsigned char expect = PART_READY;
        if (!atomic_compare_exchange_strong(&pt->state[lo - 1], &expect, PART_SENT))
            break;
        lo--;
    }
    for (int i = lo; i <= hi; i++) {
        mf_vci_op_reset(&pt->ops[i], NULL);
        if (i != lo) /* carried by ops[lo] */
            atomic_store_explicit(&pt->ops[i].done, 1, memory_order_relaxed);
    }
    pt->nsent += hi - lo + 1;
    if (pt->err != MF_OK)
        return; /* the receiver cannot take the data: the request completes with the error */
    mf_status_t st = mf_vci_tag_send_locked(
        req->vci, mf_comm_peer_world_rank(req->comm, req->peer),
        pt->buf + (size_t)lo * pt->part_bytes, (size_t)(hi - lo + 1) * pt->part_bytes,
        mf_part_data_tag(pt->peer_channel, (unsigned)lo), 0, &pt->ops[lo]);
    if (st != MF_OK && pt->err == MF_OK)
        pt->err = st;
}

static mf_status_t receiver_post_locked(mf_request_t *req, mf_part_t *pt)
{
    for (int i = 0; i < pt->nops; i++)
        mf_vci_op_reset(&pt->ops[i], NULL);
    pt->data_posted = 1;
    if (pt->err != MF_OK)
        return MF_OK;
    if (pt->peer_aggr) { /* messages are taken by receiver_drain_locked */
        for (int i = 0; i < pt->peer_npart; i++)
            pt->head[i] = -1;
        pt->nclaimed = 0;
        return MF_OK;
    }
    for (int i = 0; i < pt->peer_npart; i++) {
        mf_status_t st = mf_vci_tag_recv_locked(
            req->vci, pt->buf + (size_t)i * pt->peer_part_bytes, pt->peer_part_bytes,
            mf_part_data_tag(pt->channel, (unsigned)i), ~(uint64_t)0, NULL, &pt->ops[i]);
        if (st != MF_OK)
            return st;
    }
    return MF_OK;
}

static mf_status_t ctl_send_locked(mf_request_t *req, mf_part_t *pt, const void *buf, size_t len,
                                   uint64_t tag)
{
    mf_vci_op_reset(&pt->ctl_send, NULL);
    pt->ctl_send_posted = 1;
    return mf_vci_tag_send_locked(req->vci, mf_comm_peer_world_rank(req->comm, req->peer), buf, len,
                                  tag, 0, &pt->ctl_send);
}

static mf_status_t ctl_recv_locked(mf_request_t *req, mf_part_t *pt, void *buf, size_t len,
                                   uint64_t tag)
{
    mf_vci_op_reset(&pt->ctl_recv, NULL);
    pt->ctl_recv_posted = 1;
    return mf_vci_tag_recv_locked(req->vci, buf, len, tag, ~(uint64_t)0, NULL, &pt->ctl_recv);
}

/* At init: the setup exchange on the home VCI (its own lock; never nested). */
static mf_status_t setup_post(mf_request_t *req, mf_part_t *pt)
{
    uint64_t my_setup = setup_tag(req->comm, req->comm->rank, req->tag, !pt->is_send);
    uint64_t peer_setup = setup_tag(req->comm, req->peer, req->tag, pt->is_send);
    pt->out = (part_setup_t){.part_bytes = pt->part_bytes,
                             .channel = pt->channel,
                             .npart = (uint32_t)pt->npart,
                             .vci = (uint32_t)mf_vci_index(req->vci),
                             .aggr = pt->aggr_max > 1};
    mf_vci_lock(pt->home);
    mf_vci_op_reset(&pt->setup_send, NULL);
    mf_vci_op_reset(&pt->setup_recv, NULL);
    pt->setup_posted = 1;
    mf_status_t st =
        mf_vci_tag_send_locked(pt->home, mf_comm_peer_world_rank(req->comm, req->peer), &pt->out,
                               sizeof(pt->out), my_setup, 0, &pt->setup_send);
    if (st == MF_OK)
        st = mf_vci_tag_recv_locked(pt->home, &pt->in, sizeof(pt->in), peer_setup, ~(uint64_t)0,
                                    NULL, &pt->setup_recv);
    mf_vci_unlock(pt->home);
    return st;
}

/* The peer's setup message, once it arrived: its layout, or why no data can flow. */
static mf_status_t setup_read(mf_request_t *req, mf_part_t *pt)
{
    pt->setup_done = 1;
    if (pt->setup_recv.status != MF_OK)
        return pt->setup_recv.status;
    pt->peer_channel = pt->in.channel;
    pt->peer_npart = (int)pt->in.npart;
    pt->peer_part_bytes = (size_t)pt->in.part_bytes;
    pt->peer_aggr = !pt->is_send && pt->in.aggr;
    if (pt->in.vci != (uint32_t)mf_vci_index(req->vci))
        return MF_ERR_PROTOCOL; /* both chose at init, and no spreading while they live */
    return MF_OK;
}

mf_status_t mf_part_start(mf_request_t *req)
{
    mf_part_t *pt = req->part;
    mf_vci_t *vci = req->vci;
    mf_status_t st = MF_OK;
    mf_vci_lock(vci);
    mf_vci_op_reset(&req->op, NULL);
    req->active = 1;
    if (req->peer == MPI_PROC_NULL) {
        /* nothing moves, but marking a partition twice is still an error */
        for (int p = 0; pt->is_send && p < pt->npart; p++)
            atomic_store_explicit(&pt->state[p], PART_IDLE, memory_order_relaxed);
        atomic_store_explicit(&req->op.done, 1, memory_order_release);
        mf_vci_unlock(vci);
        return MF_OK;
    }
    pt->ctl_send_posted = 0;
    pt->ctl_recv_posted = 0;
    int first = !pt->started_once;
    pt->started_once = 1;
    if (pt->is_send) {
        for (int p = 0; p < pt->npart; p++) {
            atomic_store_explicit(&pt->state[p], PART_IDLE, memory_order_relaxed);
            mf_vci_op_reset(&pt->ops[p], NULL);
        }
        pt->nsent = 0;
        atomic_store(&pt->armed, 0);
        if (!first)
            st = ctl_recv_locked(req, pt, &pt->token_in, 1,
                                 mf_part_data_tag(pt->channel, MF_PART_TOKEN_INDEX));
    } else {
        pt->data_posted = 0;
        for (int p = 0; pt->unpacked != NULL && p < pt->npart; p++)
            atomic_store_explicit(&pt->unpacked[p], UNPACK_NOT, memory_order_relaxed);
        if (!first) {
            st = receiver_post_locked(req, pt);
            if (st == MF_OK)
                st = ctl_send_locked(req, pt, &pt->token_out, 1,
                                     mf_part_data_tag(pt->peer_channel, MF_PART_TOKEN_INDEX));
        }
    }
    int blocked = st == MF_OK && part_blocked(pt); /* read under the lock that guards it */
    mf_vci_unlock(vci);
    if (blocked)
        waiting_add(pt);
    return st;
}

/* The sender learns the receiver's layout (first iteration) or its re-arm token, then flushes
 * the partitions marked ready meanwhile. VCI lock held. */
static void sender_advance_locked(mf_request_t *req, mf_part_t *pt)
{
    if (atomic_load(&pt->armed))
        return;
    if (!pt->setup_done) {
        if (!pt->setup_posted || !mf_vci_op_is_done(&pt->setup_recv))
            return;
        mf_status_t st = setup_read(req, pt);
        if (st == MF_OK &&
            (uint64_t)pt->npart * pt->part_bytes != (uint64_t)pt->peer_npart * pt->peer_part_bytes)
            st = MF_ERR_TRUNCATE;
        if (st != MF_OK && pt->err == MF_OK)
            pt->err = st;
    } else {
        if (!pt->ctl_recv_posted || !mf_vci_op_is_done(&pt->ctl_recv))
            return;
        if (pt->ctl_recv.status != MF_OK && pt->err == MF_OK)
            pt->err = pt->ctl_recv.status;
        pt->ctl_recv_posted = 0;
    }
    /* Publish "armed" before scanning: a concurrent MPI_Pready either sees it and sends its own
     * partition, or marked its partition before our scan and we send it (the CAS picks one). */
    atomic_store(&pt->armed, 1);
    for (int p = 0; p < pt->npart; p++) {
        unsigned char expect = PART_READY;
        if (atomic_compare_exchange_strong(&pt->state[p], &expect, PART_SENT))
            sender_send_locked(req, pt, p);
    }
}

static void receiver_advance_locked(mf_request_t *req, mf_part_t *pt)
{
    if (pt->data_posted || !pt->setup_posted || !mf_vci_op_is_done(&pt->setup_recv))
        return;
    mf_status_t st = setup_read(req, pt);
    if (st == MF_OK &&
        (uint64_t)pt->peer_npart * pt->peer_part_bytes != (uint64_t)pt->npart * pt->part_bytes)
        st = MF_ERR_TRUNCATE;
    if (st == MF_OK) {
        pt->ops = calloc((size_t)pt->peer_npart + 1, sizeof(*pt->ops));
        pt->head = pt->peer_aggr ? calloc((size_t)pt->peer_npart + 1, sizeof(int)) : NULL;
        if (pt->ops == NULL || (pt->peer_aggr && pt->head == NULL))
            st = MF_ERR_NO_MEMORY;
        else
            pt->nops = pt->peer_npart;
    }
    if (st != MF_OK) {
        pt->err = st;
        pt->data_posted = 1;
        return;
    }
    st = receiver_post_locked(req, pt);
    if (st != MF_OK)
        pt->err = st;
}

/* Receiver of an aggregating sender: take every message of this channel that has arrived and
 * receive it in place; its tag gives the first partition, its length the count. */
static void receiver_drain_locked(mf_request_t *req, mf_part_t *pt)
{
    size_t s = pt->peer_part_bytes;
    mf_vci_msg_t msg;
    while (pt->err == MF_OK && pt->nclaimed < pt->peer_npart &&
           mf_vci_tag_mprobe_locked(req->vci, mf_part_data_tag(pt->channel, 0),
                                    ~(uint64_t)MF_PART_TOKEN_INDEX, &msg)) {
        uint64_t first = msg.sender_tag & MF_PART_TOKEN_INDEX;
        uint64_t k = msg.length / s;
        mf_vci_op_t *op = &pt->ops[pt->peer_npart]; /* spare op for a message we refuse */
        if (k == 0 || msg.length % s != 0 || first + k > (uint64_t)pt->peer_npart ||
            pt->head[first] >= 0) {
            pt->err = MF_ERR_PROTOCOL;
            mf_vci_op_reset(op, NULL);
            mf_vci_tag_mrecv_locked(req->vci, NULL, 0, &msg, op);
            break;
        }
        for (uint64_t i = first; i < first + k; i++)
            pt->head[i] = (int)first;
        pt->nclaimed += (int)k;
        op = &pt->ops[first];
        mf_vci_op_reset(op, NULL);
        mf_status_t st =
            mf_vci_tag_mrecv_locked(req->vci, pt->buf + first * s, (size_t)k * s, &msg, op);
        if (st != MF_OK)
            pt->err = st;
    }
}

/* Receive side: sender partition i has landed. VCI lock held. */
static int recv_part_done(mf_part_t *pt, int i)
{
    if (!pt->peer_aggr)
        return mf_vci_op_is_done(&pt->ops[i]);
    return pt->head[i] >= 0 && mf_vci_op_is_done(&pt->ops[pt->head[i]]);
}

/* Receive side: every byte of receive partition p has landed. VCI lock held. */
static int recv_covered(mf_part_t *pt, int p)
{
    int lo, hi;
    if (!mf_part_cover(pt->part_bytes, p, pt->npart, pt->peer_part_bytes, pt->peer_npart, &lo, &hi))
        return 1;
    for (int i = lo; i <= hi; i++)
        if (!recv_part_done(pt, i))
            return 0;
    return 1;
}

/* A packed receive copies out the partitions that have landed at every poll, so that the
 * wait after the last one copies that one only. VCI lock held. */
static void unpack_arrived_locked(mf_part_t *pt)
{
    for (int p = 0; p < pt->npart; p++)
        if (atomic_load_explicit(&pt->unpacked[p], memory_order_relaxed) == UNPACK_NOT &&
            recv_covered(pt, p))
            unpack_part(pt, p);
}

static int ops_done(mf_part_t *pt, int n, mf_status_t *err_p)
{
    for (int i = 0; i < n; i++) {
        if (!mf_vci_op_is_done(&pt->ops[i]))
            return 0;
        if (pt->ops[i].status != MF_OK && *err_p == MF_OK)
            *err_p = pt->ops[i].status;
    }
    return 1;
}

/* Advance an active request; returns whether it still waits for a control message (read
 * under its VCI's lock: 0 once it is done). */
static int part_advance(mf_request_t *req)
{
    mf_part_t *pt = req->part;
    /* The setup travels on the home VCI, which waiting on the request's VCI may not progress. */
    if (pt->home != req->vci && pt->setup_posted &&
        (!mf_vci_op_is_done(&pt->setup_recv) || !mf_vci_op_is_done(&pt->setup_send)))
        mf_vci_progress(pt->home);
    mf_vci_lock(req->vci);
    if (mf_vci_op_is_done(&req->op)) {
        mf_vci_unlock(req->vci);
        return 0;
    }
    int done = 0;
    mf_status_t err = pt->err;
    if (pt->is_send) {
        sender_advance_locked(req, pt);
        err = pt->err;
        done = atomic_load(&pt->armed) && pt->nsent == pt->npart &&
               (pt->err != MF_OK || ops_done(pt, pt->npart, &err));
    } else {
        receiver_advance_locked(req, pt);
        if (pt->data_posted && pt->peer_aggr)
            receiver_drain_locked(req, pt);
        if (pt->data_posted && pt->dt != NULL && pt->err == MF_OK)
            unpack_arrived_locked(pt);
        err = pt->err;
        if (!pt->data_posted)
            done = 0;
        else if (pt->err != MF_OK)
            done = 1;
        else if (pt->peer_aggr) {
            done = pt->nclaimed == pt->peer_npart;
            for (int i = 0; i < pt->peer_npart && done; i++) {
                done = recv_part_done(pt, i);
                if (done && pt->ops[i].status != MF_OK && err == MF_OK && pt->head[i] == i)
                    err = pt->ops[i].status;
            }
        } else
            done = ops_done(pt, pt->peer_npart, &err);
    }
    if (done && pt->ctl_send_posted && !mf_vci_op_is_done(&pt->ctl_send))
        done = 0;
    if (done && pt->setup_posted && !mf_vci_op_is_done(&pt->setup_send))
        done = 0;
    if (done && pt->setup_posted && !mf_vci_op_is_done(&pt->setup_recv))
        done = 0;
    /* A packed receive is done once every partition is in the user's buffer: those MPI_Parrived
     * did not copy are copied here (one another thread is copying makes it wait). */
    for (int p = 0; done && !pt->is_send && pt->dt != NULL && err == MF_OK && p < pt->npart; p++)
        done = unpack_part(pt, p);
    if (done) {
        req->op.status = err;
        atomic_store_explicit(&req->op.done, 1, memory_order_release);
    }
    int blocked = !done && part_blocked(pt);
    mf_vci_unlock(req->vci);
    return blocked;
}

static void part_poll(mf_request_t *req)
{
    if (__atomic_load_n(&req->active, __ATOMIC_RELAXED) && !mf_vci_op_is_done(&req->op))
        part_advance(req);
}

mf_status_t mf_part_pready(mf_request_t *req, int p)
{
    mf_part_t *pt = req->part;
    unsigned char expect = PART_IDLE;
    if (pt->dt == NULL) {
        if (!atomic_compare_exchange_strong(&pt->state[p], &expect, PART_READY))
            return MF_ERR_INVALID;
    } else {
        /* Marked while packing, so a second MPI_Pready fails and nobody sends it half
         * packed; "ready" is stored before "armed" is read below, as for the plain mark. */
        if (!atomic_compare_exchange_strong(&pt->state[p], &expect, PART_PACKING))
            return MF_ERR_INVALID;
        pack_part(pt, p);
        atomic_store(&pt->state[p], PART_READY);
    }
    if (req->peer == MPI_PROC_NULL)
        return MF_OK;
    if (atomic_load(&pt->armed)) {
        mf_vci_lock(req->vci);
        expect = PART_READY;
        if (atomic_compare_exchange_strong(&pt->state[p], &expect, PART_SENT))
            sender_send_locked(req, pt, p);
        mf_vci_unlock(req->vci);
    } else if (mf_vci_trylock(req->vci)) {
        /* Queued. The receiver's token or setup has usually arrived but waits for progress:
         * one non-blocking poll here sends this partition (and those queued before) early,
         * where otherwise they would wait for the sender's MPI_Wait. Skipped when another
         * thread holds the lock (never wait here): the next poll flushes our mark. */
        mf_vci_progress_locked(req->vci);
        sender_advance_locked(req, pt);
        mf_vci_unlock(req->vci);
    }
    return MF_OK;
}

int mf_part_parrived(mf_request_t *req, int p)
{
    mf_part_t *pt = req->part;
    if (!__atomic_load_n(&req->active, __ATOMIC_ACQUIRE) || req->peer == MPI_PROC_NULL)
        return 1; /* completed: acquire pairs with mf_request_complete's release */
    mf_progress_test(req->vci);
    part_poll(req);
    if (mf_vci_op_is_done(&req->op))
        return 1;
    mf_vci_lock(req->vci);
    int flag = pt->data_posted && (pt->err != MF_OK || recv_covered(pt, p));
    int unpack = flag && pt->dt != NULL && pt->err == MF_OK;
    mf_vci_unlock(req->vci);
    /* Outside the lock: the copy may be long, and the request stays active until the wait, which
     * finds this partition copied (or copies it). */
    return unpack ? unpack_part(pt, p) : flag;
}

int mf_part_marked(mf_request_t *req, int p)
{
    mf_part_t *pt = req->part;
    return atomic_load_explicit(&pt->state[p], memory_order_relaxed) != PART_IDLE;
}

size_t mf_part_npart(const mf_request_t *req)
{
    const mf_part_t *pt = req->part;
    return (size_t)pt->npart;
}

static void part_state_free(mf_part_t *pt)
{
    pthread_mutex_lock(&all_parts.lock);
    if (pt->all_prev != NULL)
        pt->all_prev->all_next = pt->all_next;
    else
        all_parts.head = pt->all_next;
    if (pt->all_next != NULL)
        pt->all_next->all_prev = pt->all_prev;
    pthread_mutex_unlock(&all_parts.lock);
    free(pt->state);
    free(pt->ops);
    free(pt->head);
    free(pt->staging);
    free(pt->unpacked);
    if (pt->dt != NULL)
        mf_dtype_release(pt->dt_handle);
    free(pt);
}

/* Freed requests whose setup message or setup receive is still in flight: the operations write
 * into their state until done. */
static struct {
    pthread_mutex_t lock;
    mf_part_t *head;
} dead = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int setup_in_flight(mf_part_t *pt)
{
    mf_vci_lock(pt->home);
    int busy = pt->setup_posted &&
               (!mf_vci_op_is_done(&pt->setup_send) || !mf_vci_op_is_done(&pt->setup_recv));
    mf_vci_unlock(pt->home);
    return busy;
}

/* Release the finished ones; with `cancel` (at finalize) withdraw the setup receives first. */
static void dead_sweep(int cancel)
{
    pthread_mutex_lock(&dead.lock);
    for (mf_part_t **pp = &dead.head; *pp != NULL;) {
        mf_part_t *pt = *pp;
        if (cancel) {
            mf_vci_lock(pt->home);
            if (!mf_vci_op_is_done(&pt->setup_recv))
                mf_vci_cancel_locked(pt->home, &pt->setup_recv);
            mf_vci_unlock(pt->home);
            mf_vci_progress(pt->home);
        }
        if (setup_in_flight(pt)) {
            pp = &pt->next_dead;
            continue;
        }
        *pp = pt->next_dead;
        part_state_free(pt);
    }
    pthread_mutex_unlock(&dead.lock);
}

void mf_part_drop_setups(void)
{
    uint64_t setup = (uint64_t)MF_PART_SETUP_CTX_BIT << (MF_PT2PT_SRC_BITS + MF_PT2PT_TAG_BITS);
    mf_vci_pool_discard(setup, setup | (uint64_t)1 << 63);
}

void mf_part_fini(void)
{
    for (int round = 0; round < 100000 && dead.head != NULL; round++)
        dead_sweep(1);
}

void mf_part_release_all(void)
{
    while (all_parts.head != NULL)
        part_state_free(all_parts.head);
    dead.head = NULL;
    waiting.head = NULL;
    atomic_store(&mf_part_waiting, 0);
}

void mf_part_free(mf_request_t *req)
{
    mf_part_t *pt = req->part;
    mf_comm_t *comm = req->comm;
    if (pt != NULL)
        waiting_remove(pt);
    mf_vci_lock(comm->vci);
    comm->part_live--;
    mf_vci_unlock(comm->vci);
    mf_vci_t *vci = req->vci; /* the request may be reused once released */
    mf_vci_lock(vci);
    req->part = NULL;
    req->poll = NULL;
    mf_request_release_locked(req);
    mf_vci_unlock(vci);
    if (pt == NULL)
        return;
    if (setup_in_flight(pt)) {
        /* Never started, or its peer never was: the setup pairs these two inits and no later
         * ones, so it finishes here first. */
        pthread_mutex_lock(&dead.lock);
        pt->next_dead = dead.head;
        dead.head = pt;
        pthread_mutex_unlock(&dead.lock);
    } else {
        part_state_free(pt);
    }
    dead_sweep(0);
}

/* Sender: the receiver is known armed for this iteration (or no data can flow). Receiver: its
 * buffer is armed (receives posted or messages being taken). VCI lock held. */
static int prepared_locked(mf_request_t *req, mf_part_t *pt)
{
    if (pt->err != MF_OK || mf_vci_op_is_done(&req->op))
        return 1;
    return pt->is_send ? atomic_load(&pt->armed) : pt->data_posted;
}

mf_status_t mf_part_pbuf_prepare(mf_request_t **reqs, int n)
{
    for (;;) {
        int all = 1;
        for (int i = 0; i < n; i++) {
            mf_request_t *req = reqs[i];
            if (req->peer == MPI_PROC_NULL)
                continue;
            mf_vci_lock(req->vci);
            int ready = prepared_locked(req, req->part);
            mf_vci_unlock(req->vci);
            if (ready)
                continue;
            all = 0;
            mf_progress_test(req->vci);
            part_poll(req);
        }
        if (all)
            return MF_OK;
    }
}
