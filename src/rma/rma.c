/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One-sided communication as requests the target applies. Each window has a private duplicate
 * of its communicator; on its user context an origin sends the target a request message (a
 * header, the target's byte segments, and the data when it is short) tagged RMA_TAG_REQ, or the
 * header followed by one RMA_TAG_DATA message with the data. The target's progress loop
 * (mf_rma_progress_all, from every wait) takes requests with a matched probe, in the order each
 * origin sent them, and applies them one at a time: a put is copied in place (a long one is
 * received straight into the window when it lands in one piece), a get or a get-accumulate is
 * answered on a reply tag the origin chose and receives into directly, an accumulate applies the
 * predefined operation on the packed elements. Lock requests are granted or queued; flush and
 * unlock requests are answered once everything before them was applied, which is what makes
 * them complete the operations at the target. MPI_Win_complete sends a notice the target counts
 * in MPI_Win_wait; MPI_Win_post sends one the origin's MPI_Win_start receives. See
 * docs/design/rma.md.
 *
 * Locking: the window's mutex guards its state, the VCI lock the transport; the mutex is taken
 * first. Progress takes the list of windows and each window with trylock, so a thread waiting
 * in an RMA call (holding nothing) and progress from any other call never wait on each other.
 */
#include "rma.h"

#include "coll.h"
#include "pt2pt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum {
    RMA_TAG_REQ = 1,
    RMA_TAG_DATA = 2,
    RMA_TAG_POST = 3,
    RMA_TAG_REPLY = 1 << 23, /* | reply id (23 bits) */
};

/* Data up to this many bytes travels inside the request message. */
#define RMA_INLINE_MAX 8192

typedef enum {
    MSG_PUT = 1,
    MSG_GET,
    MSG_ACC,
    MSG_GACC,
    MSG_CAS,
    MSG_LOCK,
    MSG_UNLOCK,
    MSG_FLUSH,
    MSG_COMPLETE,
} rma_msg_t;

/* A request message: this header, nsegs segments, then `payload` bytes unless data_follows.
 * The same build on both sides, so the layout is the same. */
typedef struct rma_hdr {
    uint8_t type;
    uint8_t data_follows;
    uint8_t exclusive; /* lock requests */
    uint8_t pad;
    int32_t origin; /* window rank of the sender */
    uint32_t reply; /* reply tag, 0: none */
    uint32_t pad2;
    uint64_t op;    /* accumulates: the MPI_Op */
    uint64_t basic; /* accumulates and swaps: the elements' predefined datatype */
    uint64_t nsegs;
    uint64_t bytes;   /* the data the target reads or writes, packed */
    uint64_t payload; /* bytes the request carries: `bytes`, 0 (get, no-op), or 2 x (swap) */
} rma_hdr_t;

/* Byte offsets from the window's base (absolute addresses for dynamic windows). */
typedef struct rma_seg {
    int64_t off;
    uint64_t len;
} rma_seg_t;

typedef enum {
    PEND_SEND = 1, /* a request, data or reply on its way out */
    PEND_RESULT,   /* the data of a get, get-accumulate or swap coming back */
    PEND_ACK,      /* the answer to a flush or an unlock */
    PEND_GRANT,    /* a lock granted */
    PEND_POSTED,   /* an MPI_Win_post notice */
} pend_kind_t;

/* The completion of a request-based operation: done when `left` parts are. Freed by the last
 * of its parts and the request's release (`refs`). */
typedef struct rma_opreq {
    atomic_int left;
    atomic_int refs;
} rma_opreq_t;

typedef struct mf_rma_pending {
    mf_vci_op_t op;
    pend_kind_t kind;
    int target; /* window rank at the other end; -1 for replies this process sends */
    void *buf;  /* owned, freed when done */
    /* PEND_RESULT: `expect` bytes into dest, unpacked from buf when that is a temporary */
    void *dest;
    MPI_Datatype dest_dt;
    MPI_Count dest_count;
    size_t expect;
    uint32_t ack; /* PEND_ACK: the invalid operations the target reports */
    rma_opreq_t *oreq;
    struct mf_rma_pending *next;
} rma_pending_t;

/* A lock request the target could not grant yet. */
typedef struct mf_rma_queued {
    int origin, lock_type;
    uint32_t reply;
    struct mf_rma_queued *next;
} rma_queued_t;

/* A request taken from the transport whose message, or data, is still arriving. */
typedef struct mf_rma_incoming {
    mf_vci_op_t op;
    int stage; /* 0: the request message; 1: its data */
    char *msg;
    size_t len;
    char *data;      /* stage 1: where the data lands */
    int data_direct; /* straight into the window (a put in one piece) */
} rma_incoming_t;

atomic_int mf_rma_windows;

static struct {
    pthread_mutex_t lock;
    mf_win_t *head;
} wins = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int fail(char *why, int cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, MF_RMA_WHY_LEN, fmt, ap);
    va_end(ap);
    return cls;
}

static int status_class(mf_status_t st)
{
    return st == MF_ERR_NO_MEMORY     ? MPI_ERR_NO_MEM
           : st == MF_ERR_PEER_FAILED ? MPI_ERR_PROC_ABORTED
                                      : MPI_ERR_OTHER;
}

/* The source rank a message of window rank r carries in its tag. */
static int tag_src(const mf_comm_t *c, int r)
{
    return c->world_tags ? mf_comm_world_rank(c, r) : r;
}

static uint64_t wtag(mf_win_t *w, int src_rank, int tag)
{
    return mf_pt2pt_tag_make(mf_comm_ctx_user(w->comm), tag_src(w->comm, src_rank), tag);
}

static uint32_t next_reply_locked(mf_win_t *w)
{
    w->next_reply = (w->next_reply + 1) & (RMA_TAG_REPLY - 1);
    if (w->next_reply == 0)
        w->next_reply = 1;
    return RMA_TAG_REPLY | w->next_reply;
}

/* ---- pending operations ------------------------------------------------------------------ */

static rma_pending_t *pend_new(mf_win_t *w, pend_kind_t kind, int target, void *buf,
                               rma_opreq_t *oreq)
{
    rma_pending_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return NULL;
    mf_vci_op_reset(&p->op, NULL);
    p->kind = kind;
    p->target = target;
    p->buf = buf;
    p->oreq = oreq;
    if (oreq != NULL) {
        atomic_fetch_add(&oreq->left, 1);
        atomic_fetch_add(&oreq->refs, 1);
    }
    p->next = w->pending;
    w->pending = p;
    return p;
}

static void opreq_drop(rma_opreq_t *o)
{
    if (atomic_fetch_sub(&o->refs, 1) == 1)
        free(o);
}

/* What a finished pending operation means, then its release. */
static void pend_finish(mf_win_t *w, rma_pending_t *p)
{
    int t = p->target;
    switch (p->kind) {
    case PEND_RESULT:
        if (p->op.status != MF_OK || p->op.length != p->expect)
            w->errors[t]++;
        else if (p->buf != NULL)
            mf_dtype_unpack(p->dest_dt, p->dest_count, p->dest, p->buf, 0, (MPI_Count)p->expect);
        break;
    case PEND_ACK:
        w->acks[t]++;
        w->errors[t] += p->op.status == MF_OK ? p->ack : 1;
        break;
    case PEND_GRANT: w->grants[t]++; break;
    default: break;
    }
    if (p->oreq != NULL) {
        atomic_fetch_sub(&p->oreq->left, 1);
        opreq_drop(p->oreq);
    }
    free(p->buf);
    free(p);
}

/* Release what completed (VCI lock held). */
static void reap_locked(mf_win_t *w)
{
    rma_pending_t **pp = &w->pending;
    while (*pp != NULL) {
        rma_pending_t *p = *pp;
        if (mf_vci_op_is_done(&p->op)) {
            *pp = p->next;
            pend_finish(w, p);
        } else {
            pp = &p->next;
        }
    }
}

/* Whether anything towards `target` (-1: any target) is still in flight. */
static int pending_to(mf_win_t *w, int target)
{
    for (rma_pending_t *p = w->pending; p != NULL; p = p->next)
        if (p->target >= 0 && (target < 0 || p->target == target))
            return 1;
    return 0;
}

/* A send that owns `buf` (NULL: the caller's memory, valid until the op is done). */
static mf_status_t send_locked(mf_win_t *w, int peer, int tag, const void *data, size_t len,
                               void *buf, int target, rma_opreq_t *oreq)
{
    rma_pending_t *p = pend_new(w, PEND_SEND, target, buf, oreq);
    if (p == NULL) {
        free(buf);
        return MF_ERR_NO_MEMORY;
    }
    mf_status_t st = mf_vci_tag_send_locked(w->comm->vci, mf_comm_world_rank(w->comm, peer), data,
                                            len, wtag(w, w->comm->rank, tag), 0, &p->op);
    if (st != MF_OK) {
        p->op.status = st;
        atomic_store(&p->op.done, 1);
    }
    return st;
}

static rma_pending_t *recv_locked(mf_win_t *w, pend_kind_t kind, int peer, int tag, void *into,
                                  size_t len, void *buf, rma_opreq_t *oreq)
{
    rma_pending_t *p = pend_new(w, kind, peer, buf, oreq);
    if (p == NULL) {
        free(buf);
        return NULL;
    }
    if (kind == PEND_ACK) { /* the answer is the count of invalid operations */
        into = &p->ack;
        len = sizeof(p->ack);
    }
    p->expect = len;
    mf_status_t st = mf_vci_tag_recv_locked(w->comm->vci, into, len, wtag(w, peer, tag),
                                            ~(uint64_t)0, NULL, &p->op);
    if (st != MF_OK) {
        p->op.status = st;
        atomic_store(&p->op.done, 1);
    }
    return p;
}

/* ---- the target's side ------------------------------------------------------------------- */

/* The address of segment s, or NULL when it is not inside the window's memory. */
static char *seg_addr(mf_win_t *w, const rma_seg_t *s)
{
    if (s->len == 0)
        return (char *)w->base;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* every byte attached: one region, or regions attached back to back (an access may
         * span them; attachments never overlap) */
        uintptr_t a = (uintptr_t)s->off, covered = a;
        if (s->len > UINTPTR_MAX - a)
            return NULL;
        while (covered < a + s->len) {
            mf_win_region_t *r = w->regions;
            while (r != NULL && !(covered >= r->base && covered - r->base < r->size))
                r = r->next;
            if (r == NULL)
                return NULL;
            covered = r->base + r->size;
        }
        return (char *)a;
    }
    if (s->off < 0 || s->len > w->size || (uint64_t)s->off > w->size - s->len)
        return NULL;
    return (char *)w->base + s->off;
}

static int segs_valid(mf_win_t *w, const rma_seg_t *segs, uint64_t n, uint64_t bytes)
{
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (seg_addr(w, &segs[i]) == NULL)
            return 0;
        total += segs[i].len;
    }
    return total == bytes;
}

static void gather(mf_win_t *w, const rma_seg_t *segs, uint64_t n, char *out)
{
    for (uint64_t i = 0; i < n; i++) {
        memcpy(out, seg_addr(w, &segs[i]), segs[i].len);
        out += segs[i].len;
    }
}

static void scatter(mf_win_t *w, const rma_seg_t *segs, uint64_t n, const char *in)
{
    for (uint64_t i = 0; i < n; i++) {
        memcpy(seg_addr(w, &segs[i]), in, segs[i].len);
        in += segs[i].len;
    }
}

static void reply_locked(mf_win_t *w, int origin, uint32_t tag, void *buf, size_t len)
{
    send_locked(w, origin, (int)tag, buf, len, buf, -1, NULL);
}

static void ack_locked(mf_win_t *w, int origin, uint32_t tag)
{
    uint32_t *a = malloc(sizeof(*a));
    if (a == NULL)
        return; /* the origin waits: nothing better to do without memory */
    *a = w->bad_ops[origin];
    w->bad_ops[origin] = 0;
    reply_locked(w, origin, tag, a, sizeof(*a));
}

static int lock_grantable(mf_win_t *w, int type)
{
    if (w->lock_excl >= 0)
        return 0;
    return type == MPI_LOCK_SHARED || w->lock_shared == 0;
}

static void lock_grant_locked(mf_win_t *w, int origin, int type, uint32_t reply)
{
    if (type == MPI_LOCK_EXCLUSIVE)
        w->lock_excl = origin;
    else
        w->lock_shared++;
    reply_locked(w, origin, reply, NULL, 0);
}

/* Grant queued requests in order while they can be. */
static void lock_queue_locked(mf_win_t *w)
{
    while (w->lock_queue != NULL && lock_grantable(w, w->lock_queue->lock_type)) {
        rma_queued_t *q = w->lock_queue;
        w->lock_queue = q->next;
        lock_grant_locked(w, q->origin, q->lock_type, q->reply);
        free(q);
    }
}

/* Apply a request whose data (if any) is at `data`. */
static void apply_locked(mf_win_t *w, const rma_hdr_t *h, const rma_seg_t *segs, const char *data)
{
    int o = h->origin;
    int valid = segs_valid(w, segs, h->nsegs, h->bytes);
    MPI_Op op = (MPI_Op)(uintptr_t)h->op;
    MPI_Datatype basic = (MPI_Datatype)(uintptr_t)h->basic;
    switch ((rma_msg_t)h->type) {
    case MSG_PUT:
        if (valid)
            scatter(w, segs, h->nsegs, data);
        break;
    case MSG_ACC:
    case MSG_GACC: {
        char *old = NULL;
        /* The operand comes right after the header and segments in the message; the
         * reduction kernels want it aligned for its type, so a misaligned one is copied
         * behind the target's old data. */
        size_t span = (h->bytes + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1);
        int misaligned = op != MPI_NO_OP && (uintptr_t)data % _Alignof(max_align_t) != 0;
        if (valid && h->bytes > 0) {
            old = malloc(misaligned ? span + h->bytes : h->bytes);
            if (old == NULL)
                valid = 0;
            else if (misaligned)
                data = memcpy(old + span, data, h->bytes);
        }
        if (valid) {
            gather(w, segs, h->nsegs, old);
            if (h->type == MSG_GACC) {
                char *copy = malloc(h->bytes > 0 ? h->bytes : 1);
                if (copy != NULL && h->bytes > 0)
                    memcpy(copy, old, h->bytes);
                reply_locked(w, o, h->reply, copy, copy != NULL ? h->bytes : 0);
            }
            /* no bytes: nothing to combine, and a type of no elements has no basic type */
            if (op != MPI_NO_OP && h->bytes > 0) {
                const mf_dtype_info_t *bi = mf_dtype_predefined(basic);
                mf_op_apply(op, data, old, h->bytes / (uint64_t)bi->size, basic);
                scatter(w, segs, h->nsegs, old);
            }
            free(old);
        } else if (h->type == MSG_GACC) {
            reply_locked(w, o, h->reply, NULL, 0);
        }
        break;
    }
    case MSG_GET:
        if (valid) {
            char *out = malloc(h->bytes > 0 ? h->bytes : 1);
            if (out != NULL)
                gather(w, segs, h->nsegs, out);
            reply_locked(w, o, h->reply, out, out != NULL ? h->bytes : 0);
        } else {
            reply_locked(w, o, h->reply, NULL, 0);
        }
        break;
    case MSG_CAS:
        if (valid) {
            char *addr = seg_addr(w, &segs[0]);
            char *out = malloc(h->bytes);
            if (out != NULL)
                memcpy(out, addr, h->bytes);
            if (memcmp(addr, data + h->bytes, h->bytes) == 0)
                memcpy(addr, data, h->bytes);
            reply_locked(w, o, h->reply, out, out != NULL ? h->bytes : 0);
        } else {
            reply_locked(w, o, h->reply, NULL, 0);
        }
        break;
    case MSG_LOCK:
        if (w->lock_queue == NULL &&
            lock_grantable(w, h->exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED)) {
            lock_grant_locked(w, o, h->exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, h->reply);
        } else {
            rma_queued_t *q = calloc(1, sizeof(*q)), **qq = &w->lock_queue;
            if (q == NULL)
                return;
            *q = (rma_queued_t){.origin = o,
                                .lock_type = h->exclusive ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED,
                                .reply = h->reply};
            while (*qq != NULL)
                qq = &(*qq)->next;
            *qq = q;
        }
        return;
    case MSG_UNLOCK:
        if (w->lock_excl == o)
            w->lock_excl = -1;
        else if (w->lock_shared > 0)
            w->lock_shared--;
        ack_locked(w, o, h->reply);
        lock_queue_locked(w);
        return;
    case MSG_FLUSH: ack_locked(w, o, h->reply); return;
    case MSG_COMPLETE: w->completes_in++; return;
    }
    if (!valid)
        w->bad_ops[o]++;
}

static void incoming_free(rma_incoming_t *in)
{
    free(in->msg);
    if (!in->data_direct)
        free(in->data);
    free(in);
}

/* A whole request message has arrived: apply it, or start receiving its data. Returns 1 when
 * it is finished. */
static int request_arrived(mf_win_t *w, rma_incoming_t *in)
{
    const rma_hdr_t *h = (const rma_hdr_t *)in->msg;
    if (in->op.status != MF_OK || in->len < sizeof(*h) ||
        in->len < sizeof(*h) + h->nsegs * sizeof(rma_seg_t))
        return 1; /* a broken message: nothing to apply */
    const rma_seg_t *segs = (const rma_seg_t *)(h + 1);
    if (!h->data_follows) {
        apply_locked(w, h, segs, (const char *)(segs + h->nsegs));
        return 1;
    }
    in->stage = 1;
    in->data_direct = h->type == MSG_PUT && h->nsegs == 1 && segs_valid(w, segs, 1, h->bytes);
    in->data = in->data_direct ? seg_addr(w, &segs[0]) : malloc(h->payload);
    mf_vci_op_reset(&in->op, NULL);
    if (in->data == NULL) {
        in->op.status = MF_ERR_NO_MEMORY;
        atomic_store(&in->op.done, 1);
        return 0;
    }
    mf_status_t st =
        mf_vci_tag_recv_locked(w->comm->vci, in->data, h->payload, wtag(w, h->origin, RMA_TAG_DATA),
                               ~(uint64_t)0, NULL, &in->op);
    if (st != MF_OK) {
        in->op.status = st;
        atomic_store(&in->op.done, 1);
    }
    return 0;
}

/* Requests are applied one at a time, in arrival order: one whose data is still arriving holds
 * back the next (VCI lock held). */
static void serve_locked(mf_win_t *w)
{
    mf_vci_t *vci = w->comm->vci;
    for (;;) {
        rma_incoming_t *in = w->incoming;
        if (in != NULL) {
            if (!mf_vci_op_is_done(&in->op))
                return;
            int finished = 1;
            if (in->stage == 0) {
                finished = request_arrived(w, in);
            } else {
                const rma_hdr_t *h = (const rma_hdr_t *)in->msg;
                const rma_seg_t *segs = (const rma_seg_t *)(h + 1);
                if (in->op.status != MF_OK || in->op.length != h->payload)
                    w->bad_ops[h->origin]++;
                else if (!in->data_direct)
                    apply_locked(w, h, segs, in->data);
            }
            if (!finished)
                continue;
            w->incoming = NULL;
            incoming_free(in);
        }
        uint64_t tag, mask;
        mf_pt2pt_match(mf_comm_ctx_user(w->comm), MF_PT2PT_ANY, RMA_TAG_REQ, &tag, &mask);
        mf_vci_msg_t msg;
        if (!mf_vci_tag_mprobe_locked(vci, tag, mask, &msg))
            return;
        in = calloc(1, sizeof(*in));
        char *buf = malloc(msg.length > 0 ? msg.length : 1);
        if (in == NULL || buf == NULL) {
            /* the message must still be taken off the transport */
            static char sink[sizeof(rma_hdr_t)];
            mf_vci_op_t op;
            mf_vci_op_reset(&op, NULL);
            mf_vci_tag_mrecv_locked(vci, sink, 0, &msg, &op);
            free(in);
            free(buf);
            return;
        }
        in->msg = buf;
        in->len = msg.length;
        mf_vci_op_reset(&in->op, NULL);
        if (mf_vci_tag_mrecv_locked(vci, buf, msg.length, &msg, &in->op) != MF_OK) {
            in->op.status = MF_ERR_TRANSPORT;
            atomic_store(&in->op.done, 1);
        }
        w->incoming = in;
    }
}

/* Everything this process does for the window now (window mutex held). */
static void win_progress_locked(mf_win_t *w)
{
    mf_vci_t *vci = w->comm->vci;
    mf_vci_lock(vci);
    mf_vci_progress_locked(vci);
    reap_locked(w);
    serve_locked(w);
    reap_locked(w);
    mf_vci_unlock(vci);
}

void mf_rma_progress_all(void)
{
    if (pthread_mutex_trylock(&wins.lock) != 0)
        return;
    for (mf_win_t *w = wins.head; w != NULL; w = w->next) {
        if (pthread_mutex_trylock(&w->lock) != 0)
            continue;
        win_progress_locked(w);
        pthread_mutex_unlock(&w->lock);
    }
    pthread_mutex_unlock(&wins.lock);
}

/* Wait until done(w, arg) holds; it is called with the window mutex held, after progress. */
static void wait_until(mf_win_t *w, int (*done)(mf_win_t *w, const void *arg), const void *arg)
{
    int polls = 0;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        win_progress_locked(w);
        int ok = done(w, arg);
        pthread_mutex_unlock(&w->lock);
        if (ok)
            return;
        mf_progress_poke(w->comm->vci, &polls);
    }
}

/* ---- windows ------------------------------------------------------------------------------ */

static void win_release(mf_win_t *w)
{
    free(w->sizes);
    free(w->disp_units);
    free(w->shm_offs);
    free(w->locked);
    free(w->nocheck);
    free(w->dirty);
    free(w->acks);
    free(w->grants);
    free(w->errors);
    free(w->bad_ops);
    free(w->start_group);
    while (w->regions != NULL) {
        mf_win_region_t *r = w->regions;
        w->regions = r->next;
        free(r);
    }
    if (w->shm_map != NULL)
        munmap(w->shm_map, w->shm_len);
    free(w->owned);
    if (w->info != NULL)
        mf_info_free(w->info);
    mf_errhandler_release(atomic_load(&w->errhandler));
    pthread_mutex_destroy(&w->lock);
    pthread_mutex_destroy(&w->name_lock);
    w->kind = MF_KIND_FREED;
    free(w);
}

/* MPI_Win_allocate_shared: one segment for the node, each rank's part after the previous
 * rank's (no padding: the standard's contiguous layout), mapped by all before the name goes. */
static int shared_alloc(mf_win_t *w, size_t size, char *why)
{
    mf_comm_t *c = w->comm;
    mf_comm_t *node = NULL;
    if (mf_comm_split_shared(c, 1, 0, &node) != MF_OK)
        return fail(why, MPI_ERR_OTHER, "cannot find which processes share memory");
    int same = node != NULL && node->size == c->size;
    if (node != NULL)
        mf_comm_free(node);
    uint64_t word = (uint64_t)same;
    if (mf_coll_allreduce_band(c, &word, 1) != MF_OK)
        return fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    if (!word)
        return fail(why, MPI_ERR_RMA_SHARED,
                    "the processes of the communicator do not all share memory (one node)");
    uint64_t total = 0;
    w->shm_offs = calloc((size_t)c->size, sizeof(uint64_t));
    if (w->shm_offs == NULL)
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    for (int i = 0; i < c->size; i++) {
        w->shm_offs[i] = total;
        total += w->sizes[i];
    }
    w->shm_len = total > 0 ? (size_t)total : 1;
    char name[64] = {0};
    int ok = 1;
    if (c->rank == 0) {
        static atomic_uint seq;
        snprintf(name, sizeof(name), "/manifold-win-%ld-%u-%u", (long)getpid(), c->context_id,
                 atomic_fetch_add(&seq, 1));
        /* Reserved: the window is the user's memory, and an unreserved page that finds
         * /dev/shm full at its first touch kills the process (SIGBUS). */
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || mf_shm_size(fd, w->shm_len, 1) != 0)
            ok = 0;
        if (fd >= 0)
            close(fd);
        if (!ok) {
            shm_unlink(name);
            name[0] = '\0';
        }
    }
    if (mf_coll_bcast(c, name, sizeof(name), 0) != MF_OK)
        return fail(why, MPI_ERR_OTHER, "cannot share the segment's name");
    if (name[0] != '\0') {
        int fd = shm_open(name, O_RDWR, 0600);
        void *map = fd >= 0 ? mmap(NULL, w->shm_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                            : MAP_FAILED;
        if (fd >= 0)
            close(fd);
        if (map != MAP_FAILED)
            w->shm_map = map;
    }
    word = w->shm_map != NULL;
    mf_status_t st = mf_coll_allreduce_band(c, &word, 1);
    if (c->rank == 0 && name[0] != '\0')
        shm_unlink(name); /* everyone has mapped it (or failed to): nothing left behind */
    if (st != MF_OK || !word)
        return fail(why, MPI_ERR_NO_MEM,
                    "cannot create a shared-memory segment of %llu bytes (/dev/shm has %zu "
                    "bytes free)",
                    (unsigned long long)total, mf_shm_free_bytes());
    w->base = size > 0 ? w->shm_map + w->shm_offs[c->rank] : NULL;
    return MPI_SUCCESS;
}

int mf_win_create(mf_comm_t *comm, int flavor, void **base_p, size_t size, int disp_unit,
                  struct MPI_ABI_Info *info, mf_win_t **win_p, char *why)
{
    mf_win_t *w = calloc(1, sizeof(*w));
    if (w == NULL)
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    pthread_mutex_init(&w->lock, NULL);
    pthread_mutex_init(&w->name_lock, NULL);
    w->flavor = flavor;
    w->errhandler = MPI_ERRORS_ARE_FATAL;
    w->lock_excl = -1;
    w->post_n = -1;
    if (mf_comm_dup(comm, &w->comm) != MF_OK) {
        win_release(w);
        return fail(why, MPI_ERR_OTHER, "cannot make the window's communicator");
    }
    mf_comm_t *c = w->comm;
    size_t n = (size_t)c->size;
    int cls = MPI_SUCCESS;
    w->locked = calloc(n, 1);
    w->nocheck = calloc(n, 1);
    w->dirty = calloc(n, 1);
    w->acks = calloc(n, sizeof(unsigned));
    w->grants = calloc(n, sizeof(unsigned));
    w->errors = calloc(n, sizeof(unsigned));
    w->bad_ops = calloc(n, sizeof(unsigned));
    w->sizes = calloc(n, sizeof(uint64_t));
    w->disp_units = calloc(n, sizeof(int));
    if (!w->locked || !w->nocheck || !w->dirty || !w->acks || !w->grants || !w->errors ||
        !w->bad_ops || !w->sizes || !w->disp_units)
        cls = fail(why, MPI_ERR_NO_MEM, "out of memory");
    /* everyone's size and unit, and whether everyone got this far */
    struct {
        uint64_t size;
        int64_t disp_unit;
    } mine = {flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size, disp_unit},
      *all = calloc(n, sizeof(mine));
    if (all == NULL && cls == MPI_SUCCESS)
        cls = fail(why, MPI_ERR_NO_MEM, "out of memory");
    uint64_t word = cls == MPI_SUCCESS;
    if (mf_coll_allreduce_band(c, &word, 1) != MF_OK || !word) {
        if (cls == MPI_SUCCESS)
            cls = fail(why, MPI_ERR_OTHER, "another process could not create the window");
    } else if (mf_coll_allgather(c, &mine, sizeof(mine), all) != MF_OK) {
        cls = fail(why, MPI_ERR_OTHER, "cannot exchange the window's sizes");
    } else {
        for (size_t i = 0; i < n; i++) {
            w->sizes[i] = all[i].size;
            w->disp_units[i] = (int)all[i].disp_unit;
        }
    }
    free(all);
    w->disp_unit = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : disp_unit;
    w->size = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
    if (cls == MPI_SUCCESS) {
        switch (flavor) {
        case MPI_WIN_FLAVOR_CREATE: w->base = *base_p; break;
        case MPI_WIN_FLAVOR_ALLOCATE:
            if (posix_memalign(&w->owned, MF_CACHE_LINE, size > 0 ? size : 1) != 0) {
                w->owned = NULL;
                cls = fail(why, MPI_ERR_NO_MEM, "cannot allocate %zu bytes", size);
            }
            w->base = w->owned;
            break;
        case MPI_WIN_FLAVOR_SHARED: cls = shared_alloc(w, size, why); break;
        default: w->base = NULL; break;
        }
        /* A failed allocation here is this process's: the others learn it below. */
        word = cls == MPI_SUCCESS;
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE &&
            (mf_coll_allreduce_band(c, &word, 1) != MF_OK || !word) && cls == MPI_SUCCESS)
            cls = fail(why, MPI_ERR_NO_MEM, "another process could not allocate its memory");
    }
    if (cls == MPI_SUCCESS && info != NULL && mf_info_dup(info, &w->info) != MF_OK)
        cls = fail(why, MPI_ERR_NO_MEM, "out of memory");
    if (cls != MPI_SUCCESS) {
        mf_comm_free(w->comm);
        win_release(w);
        return cls;
    }
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED)
        *base_p = w->base;
    w->attr_size = (MPI_Aint)w->size;
    w->attr_disp_unit = w->disp_unit;
    w->attr_flavor = flavor;
    w->attr_model = MPI_WIN_UNIFIED;
    w->kind = MF_KIND_WIN;
    pthread_mutex_lock(&wins.lock);
    w->next = wins.head;
    if (wins.head != NULL)
        wins.head->prev = w;
    wins.head = w;
    atomic_fetch_add(&mf_rma_windows, 1);
    mf_vci_async_kick(); /* a target serves requests while it computes */
    pthread_mutex_unlock(&wins.lock);
    *win_p = w;
    return MPI_SUCCESS;
}

static int any_epoch_locked(mf_win_t *w)
{
    if (w->lock_all || w->start_group != NULL || w->post_n >= 0)
        return 1;
    for (int i = 0; i < w->comm->size; i++)
        if (w->locked[i])
            return 1;
    return 0;
}

/* MPI-4.1 12.5: a process's access epochs on one window are disjoint, so a passive-target
 * one (lock, lock_all) and an active-target one (start) never overlap. */
static int passive_epoch_locked(mf_win_t *w)
{
    if (w->lock_all)
        return 1;
    for (int i = 0; i < w->comm->size; i++)
        if (w->locked[i])
            return 1;
    return 0;
}

static int nothing_pending(mf_win_t *w, const void *arg)
{
    (void)arg;
    return w->pending == NULL && w->incoming == NULL;
}

int mf_win_free_check(mf_win_t *w, char *why)
{
    pthread_mutex_lock(&w->lock);
    int open = any_epoch_locked(w);
    pthread_mutex_unlock(&w->lock);
    if (open)
        return fail(why, MPI_ERR_RMA_SYNC,
                    "an access or exposure epoch (lock, lock_all, start or post) is still open");
    return MPI_SUCCESS;
}

int mf_win_free(mf_win_t *w, char *why)
{
    int rc = mf_win_free_check(w, why);
    if (rc != MPI_SUCCESS)
        return rc;
    wait_until(w, nothing_pending, NULL);
    /* Every origin has completed its operations (epochs are closed), so once all are here no
     * request is left on its way to this window. */
    mf_status_t st = mf_coll_barrier(w->comm);
    wait_until(w, nothing_pending, NULL);
    pthread_mutex_lock(&wins.lock);
    if (w->prev != NULL)
        w->prev->next = w->next;
    else
        wins.head = w->next;
    if (w->next != NULL)
        w->next->prev = w->prev;
    atomic_fetch_sub(&mf_rma_windows, 1);
    pthread_mutex_unlock(&wins.lock);
    mf_comm_free(w->comm);
    while (w->lock_queue != NULL) {
        rma_queued_t *q = w->lock_queue;
        w->lock_queue = q->next;
        free(q);
    }
    mf_handle_forget(w);
    win_release(w);
    if (st != MF_OK)
        return fail(why, MPI_ERR_OTHER, "the closing synchronisation failed: %s",
                    mf_status_str(st));
    return MPI_SUCCESS;
}

void mf_rma_fini(void)
{
    pthread_mutex_lock(&wins.lock);
    wins.head = NULL;
    atomic_store(&mf_rma_windows, 0);
    pthread_mutex_unlock(&wins.lock);
}

int mf_win_shared_query(mf_win_t *w, int rank, size_t *size_p, int *disp_unit_p, void **base_p,
                        char *why)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC)
        return fail(why, MPI_ERR_RMA_FLAVOR, "a dynamic window has no memory to query");
    if (w->flavor != MPI_WIN_FLAVOR_SHARED) {
        /* MPI-4: any window; only this process's own memory is reachable by load and store */
        int own = rank == w->comm->rank;
        *size_p = own ? w->size : 0;
        *disp_unit_p = own ? w->disp_unit : w->disp_units[rank < 0 ? 0 : rank];
        *base_p = own ? w->base : NULL;
        return MPI_SUCCESS;
    }
    if (rank == MPI_PROC_NULL) {
        rank = 0;
        for (int i = 0; i < w->comm->size; i++)
            if (w->sizes[i] > 0) {
                rank = i;
                break;
            }
    }
    *size_p = (size_t)w->sizes[rank];
    *disp_unit_p = w->disp_units[rank];
    *base_p = w->sizes[rank] > 0 ? w->shm_map + w->shm_offs[rank] : NULL;
    return MPI_SUCCESS;
}

int mf_win_attach(mf_win_t *w, void *base, size_t size, char *why)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return fail(why, MPI_ERR_RMA_FLAVOR, "only a dynamic window takes attached memory");
    mf_win_region_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    pthread_mutex_lock(&w->lock);
    for (mf_win_region_t *o = w->regions; o != NULL; o = o->next)
        if ((uintptr_t)base < o->base + o->size && o->base < (uintptr_t)base + size) {
            pthread_mutex_unlock(&w->lock);
            free(r);
            return fail(why, MPI_ERR_RMA_ATTACH,
                        "the memory overlaps memory already attached to the window");
        }
    r->base = (uintptr_t)base;
    r->size = size;
    r->next = w->regions;
    w->regions = r;
    pthread_mutex_unlock(&w->lock);
    return MPI_SUCCESS;
}

int mf_win_detach(mf_win_t *w, const void *base, char *why)
{
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        return fail(why, MPI_ERR_RMA_FLAVOR, "only a dynamic window has attached memory");
    pthread_mutex_lock(&w->lock);
    for (mf_win_region_t **rr = &w->regions; *rr != NULL; rr = &(*rr)->next)
        if ((*rr)->base == (uintptr_t)base) {
            mf_win_region_t *r = *rr;
            *rr = r->next;
            pthread_mutex_unlock(&w->lock);
            free(r);
            return MPI_SUCCESS;
        }
    pthread_mutex_unlock(&w->lock);
    return fail(why, MPI_ERR_RMA_ATTACH, "no memory attached to the window starts at %p", base);
}

/* ---- the origin's side ------------------------------------------------------------------- */

/* The segments `count` items of dt cover from byte `at` of the target, in packed order, those
 * that touch merged. */
typedef struct seg_list {
    rma_seg_t *v;
    uint64_t n, cap;
} seg_list_t;

static int seg_add(seg_list_t *l, int64_t off, uint64_t len)
{
    if (len == 0)
        return 1;
    if (l->n > 0 && l->v[l->n - 1].off + (int64_t)l->v[l->n - 1].len == off) {
        l->v[l->n - 1].len += len;
        return 1;
    }
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? 2 * l->cap : 8;
        rma_seg_t *v = realloc(l->v, cap * sizeof(*v));
        if (v == NULL)
            return 0;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (rma_seg_t){off, len};
    return 1;
}

static int target_segments(MPI_Datatype dt, MPI_Count count, int64_t at, seg_list_t *l)
{
    MPI_Aint off = 0;
    mf_dtype_props_t p;
    if (mf_dtype_props(dt, &p) != MF_OK)
        return 0;
    if (count == 0 || p.psize == 0)
        return 1;
    if (mf_dtype_contiguous(dt, count, &off))
        return seg_add(l, at + off, (uint64_t)(count * p.psize));
    const mf_dtype_t *d = mf_dtype_get(dt);
    if (d == NULL)
        d = mf_dtype_pair_twin(dt);
    if (d == NULL)
        return 0;
    for (MPI_Count i = 0; i < count; i++) {
        int64_t item = at + (int64_t)i * d->extent;
        if (d->runs == NULL) {
            for (MPI_Count s = 0; s < d->nsegs; s++)
                if (!seg_add(l, item + d->segs[s].off, (uint64_t)d->segs[s].len))
                    return 0;
            continue;
        }
        for (MPI_Count r = 0; r < d->nruns; r++) {
            const mf_dtype_run_t *run = &d->runs[r];
            for (MPI_Count k = 0; k < run->n; k++)
                if (!seg_add(l, item + run->off + (int64_t)k * run->stride, (uint64_t)run->len))
                    return 0;
        }
    }
    return 1;
}

static uint64_t packed_bytes(MPI_Datatype dt, MPI_Count count)
{
    mf_dtype_props_t p;
    return mf_dtype_props(dt, &p) == MF_OK ? (uint64_t)(count * p.psize) : 0;
}

/* The bytes of count items at buf in packed order: buf itself when they lie in one run, else a
 * packed copy in *tmp_p. */
static const char *packed_view(const void *buf, MPI_Datatype dt, MPI_Count count, uint64_t bytes,
                               char **tmp_p)
{
    MPI_Aint off = 0;
    *tmp_p = NULL;
    if (bytes == 0 || mf_dtype_contiguous(dt, count, &off))
        return (const char *)buf + off;
    char *t = malloc(bytes);
    if (t != NULL)
        mf_dtype_pack(dt, count, buf, t, 0, (MPI_Count)bytes);
    *tmp_p = t;
    return t;
}

static int in_epoch_locked(mf_win_t *w, int t)
{
    if (w->fence_open || w->lock_all || w->locked[t])
        return 1;
    for (int i = 0; w->start_group != NULL && i < w->start_n; i++)
        if (w->start_group[i] == t)
            return 1;
    return 0;
}

static void opreq_poll(mf_request_t *req)
{
    rma_opreq_t *o = mf_greq_arg(req);
    mf_rma_progress_all();
    if (atomic_load(&o->left) == 0)
        atomic_store_explicit(&req->op.done, 1, memory_order_release);
}

static int opreq_release(void *arg)
{
    opreq_drop(arg);
    return MPI_SUCCESS;
}

int mf_rma_op(mf_win_t *w, const mf_rma_args_t *a, mf_request_t **req_p, char *why)
{
    int t = a->target;
    int64_t at = (int64_t)a->target_disp *
                 (w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : (int64_t)w->disp_units[t]);
    seg_list_t segs = {0};
    if (!target_segments(a->target_dt, a->target_count, at, &segs)) {
        free(segs.v);
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    }
    uint64_t bytes = packed_bytes(a->target_dt, a->target_count);
    int cls = MPI_SUCCESS;
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC)
        for (uint64_t i = 0; i < segs.n && cls == MPI_SUCCESS; i++)
            if (segs.v[i].off < 0 || segs.v[i].off + (int64_t)segs.v[i].len > (int64_t)w->sizes[t])
                cls = fail(why, MPI_ERR_RMA_RANGE,
                           "the target bytes [%lld, %lld) are outside the window of rank %d "
                           "(%llu bytes)",
                           (long long)segs.v[i].off, (long long)(segs.v[i].off + segs.v[i].len), t,
                           (unsigned long long)w->sizes[t]);
    if (cls != MPI_SUCCESS) {
        free(segs.v);
        return cls;
    }
    rma_hdr_t h = {.origin = w->comm->rank, .nsegs = segs.n, .bytes = bytes};
    const void *send = NULL; /* what goes: origin data (and the comparand) */
    char *send_tmp = NULL;
    int want_result = 0;
    void *res = NULL;
    MPI_Datatype res_dt = MPI_DATATYPE_NULL;
    MPI_Count res_count = 0;
    switch (a->kind) {
    case MF_RMA_PUT:
        h.type = MSG_PUT;
        h.payload = bytes;
        send = packed_view(a->origin, a->origin_dt, a->origin_count, bytes, &send_tmp);
        break;
    case MF_RMA_GET:
        h.type = MSG_GET;
        want_result = 1;
        res = (void *)a->origin, res_dt = a->origin_dt, res_count = a->origin_count;
        break;
    case MF_RMA_ACC:
    case MF_RMA_GACC: {
        int mixed;
        h.type = a->kind == MF_RMA_ACC ? MSG_ACC : MSG_GACC;
        h.op = (uint64_t)(uintptr_t)a->op;
        h.basic = (uint64_t)(uintptr_t)mf_op_basic_type(a->target_dt, &mixed);
        if (a->op != MPI_NO_OP) {
            h.payload = bytes;
            send = packed_view(a->origin, a->origin_dt, a->origin_count, bytes, &send_tmp);
        }
        if (a->kind == MF_RMA_GACC) {
            want_result = 1;
            res = a->result, res_dt = a->result_dt, res_count = a->result_count;
        }
        break;
    }
    case MF_RMA_CAS: {
        h.type = MSG_CAS;
        h.payload = 2 * bytes;
        send_tmp = malloc(2 * bytes);
        if (send_tmp != NULL) {
            memcpy(send_tmp, a->origin, bytes);
            memcpy(send_tmp + bytes, a->compare, bytes);
        }
        send = send_tmp;
        want_result = 1;
        res = a->result, res_dt = a->target_dt, res_count = 1;
        break;
    }
    }
    if (h.payload > 0 && send == NULL) {
        free(segs.v);
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    }
    h.data_follows = h.payload > RMA_INLINE_MAX;
    size_t msg_len = sizeof(h) + segs.n * sizeof(rma_seg_t) + (h.data_follows ? 0 : h.payload);
    char *msg = malloc(msg_len);
    char *res_tmp = NULL;
    MPI_Aint res_off = 0;
    int res_direct =
        want_result && (bytes == 0 || mf_dtype_contiguous(res_dt, res_count, &res_off));
    if (want_result && !res_direct)
        res_tmp = malloc(bytes);
    rma_opreq_t *oreq = req_p != NULL ? calloc(1, sizeof(*oreq)) : NULL;
    if (msg == NULL || (want_result && !res_direct && res_tmp == NULL) ||
        (req_p != NULL && oreq == NULL)) {
        free(msg), free(res_tmp), free(oreq), free(send_tmp), free(segs.v);
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    }
    if (oreq != NULL)
        atomic_store(&oreq->refs, 1); /* the request's */

    pthread_mutex_lock(&w->lock);
    if (!in_epoch_locked(w, t)) {
        pthread_mutex_unlock(&w->lock);
        free(msg), free(res_tmp), free(oreq), free(send_tmp), free(segs.v);
        return fail(why, MPI_ERR_RMA_SYNC,
                    "no access epoch to rank %d is open (call MPI_Win_fence, MPI_Win_lock, "
                    "MPI_Win_lock_all or MPI_Win_start first)",
                    t);
    }
    mf_vci_lock(w->comm->vci);
    if (want_result) {
        h.reply = next_reply_locked(w);
        rma_pending_t *p =
            recv_locked(w, PEND_RESULT, t, (int)h.reply,
                        res_direct ? (char *)res + res_off : res_tmp, bytes, res_tmp, oreq);
        if (p != NULL && !res_direct) {
            p->dest = res;
            p->dest_dt = res_dt;
            p->dest_count = res_count;
        }
    }
    memcpy(msg, &h, sizeof(h));
    if (segs.n > 0)
        memcpy(msg + sizeof(h), segs.v, segs.n * sizeof(rma_seg_t));
    if (!h.data_follows && h.payload > 0)
        memcpy(msg + sizeof(h) + segs.n * sizeof(rma_seg_t), send, h.payload);
    mf_status_t st = send_locked(w, t, RMA_TAG_REQ, msg, msg_len, msg, t, oreq);
    if (st == MF_OK && h.data_follows) {
        st = send_locked(w, t, RMA_TAG_DATA, send, h.payload, send_tmp, t, oreq);
        send_tmp = NULL; /* the send owns it now */
    }
    w->dirty[t] = 1;
    mf_vci_unlock(w->comm->vci);
    pthread_mutex_unlock(&w->lock);
    free(send_tmp);
    free(segs.v);
    if (st != MF_OK)
        return fail(why, status_class(st), "cannot send the operation: %s", mf_status_str(st));
    if (req_p != NULL) {
        mf_request_t *req = NULL;
        if (mf_greq_start_polled(opreq_poll, opreq_release, oreq, &req) != MF_OK) {
            opreq_drop(oreq);
            return fail(why, MPI_ERR_NO_MEM, "out of memory");
        }
        *req_p = req;
    }
    return MPI_SUCCESS;
}

/* ---- synchronisation --------------------------------------------------------------------- */

typedef struct {
    const int *targets;
    int n;
    const unsigned *need; /* acks or grants wanted, per listed target */
    int grants;           /* wait for grants instead of acks */
} await_t;

static int answered(mf_win_t *w, const void *arg)
{
    const await_t *a = arg;
    for (int i = 0; i < a->n; i++) {
        int t = a->targets[i];
        if ((a->grants ? w->grants[t] : w->acks[t]) - a->need[i] > (UINT32_MAX >> 1))
            return 0; /* not there yet (counters wrap) */
        if (!a->grants && pending_to(w, t))
            return 0;
    }
    return 1;
}

/* Send `type` to each listed target and wait for the answers; returns MPI_ERR_RMA_RANGE when a
 * target reported invalid operations. */
static int exchange(mf_win_t *w, int type, int lock_type, const int *targets, int n, char *why)
{
    unsigned *need = calloc((size_t)(n > 0 ? n : 1), sizeof(unsigned));
    if (need == NULL)
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    int grants = type == MSG_LOCK;
    mf_status_t st = MF_OK;
    pthread_mutex_lock(&w->lock);
    mf_vci_lock(w->comm->vci);
    for (int i = 0; i < n && st == MF_OK; i++) {
        int t = targets[i];
        rma_hdr_t *h = calloc(1, sizeof(*h));
        if (h == NULL) {
            st = MF_ERR_NO_MEMORY;
            break;
        }
        *h = (rma_hdr_t){.type = (uint8_t)type,
                         .exclusive = lock_type == MPI_LOCK_EXCLUSIVE,
                         .origin = w->comm->rank,
                         .reply = next_reply_locked(w)};
        rma_pending_t *p =
            recv_locked(w, grants ? PEND_GRANT : PEND_ACK, t, (int)h->reply, NULL, 0, NULL, NULL);
        if (p == NULL) {
            free(h);
            st = MF_ERR_NO_MEMORY;
            break;
        }
        need[i] = (grants ? w->grants[t] : w->acks[t]) + 1;
        st = send_locked(w, t, RMA_TAG_REQ, h, sizeof(*h), h, t, NULL);
        w->dirty[t] = 0;
    }
    mf_vci_unlock(w->comm->vci);
    pthread_mutex_unlock(&w->lock);
    if (st != MF_OK) {
        free(need);
        return fail(why, status_class(st), "cannot reach the target: %s", mf_status_str(st));
    }
    await_t aw = {.targets = targets, .n = n, .need = need, .grants = grants};
    wait_until(w, answered, &aw);
    free(need);
    unsigned bad = 0;
    pthread_mutex_lock(&w->lock);
    for (int i = 0; i < n; i++) {
        bad += w->errors[targets[i]];
        w->errors[targets[i]] = 0;
    }
    pthread_mutex_unlock(&w->lock);
    if (bad > 0)
        return fail(why, MPI_ERR_RMA_RANGE,
                    "%u operation(s) of this epoch named target memory outside the window (or "
                    "not attached to it); they were not applied",
                    bad);
    return MPI_SUCCESS;
}

static int *all_ranks(mf_win_t *w)
{
    int *v = malloc(sizeof(int) * (size_t)w->comm->size);
    for (int i = 0; v != NULL && i < w->comm->size; i++)
        v[i] = i;
    return v;
}

int mf_win_fence(mf_win_t *w, int assert, char *why)
{
    pthread_mutex_lock(&w->lock);
    int open = any_epoch_locked(w);
    int n = 0;
    int *targets = malloc(sizeof(int) * (size_t)w->comm->size);
    for (int t = 0; targets != NULL && t < w->comm->size; t++)
        if (w->dirty[t])
            targets[n++] = t;
    pthread_mutex_unlock(&w->lock);
    if (targets == NULL)
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    if (open) {
        free(targets);
        return fail(why, MPI_ERR_RMA_SYNC,
                    "a lock, lock_all, start or post epoch is open on the window");
    }
    /* Everything this process sent in the epoch is applied, then everyone's is. */
    int cls = n > 0 ? exchange(w, MSG_FLUSH, 0, targets, n, why) : MPI_SUCCESS;
    free(targets);
    mf_status_t st = mf_coll_barrier(w->comm);
    pthread_mutex_lock(&w->lock);
    w->fence_open = !(assert &MPI_MODE_NOSUCCEED);
    pthread_mutex_unlock(&w->lock);
    if (st != MF_OK && cls == MPI_SUCCESS)
        cls = fail(why, status_class(st), "the fence's synchronisation failed: %s",
                   mf_status_str(st));
    return cls;
}

int mf_win_lock(mf_win_t *w, int lock_type, int rank, int assert, char *why)
{
    pthread_mutex_lock(&w->lock);
    int cls = MPI_SUCCESS;
    if (w->lock_all)
        cls = fail(why, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all already locks every rank");
    else if (w->start_group != NULL)
        cls = fail(why, MPI_ERR_RMA_SYNC,
                   "an access epoch of MPI_Win_start is open (epochs must not overlap)");
    else if (w->locked[rank])
        cls = fail(why, MPI_ERR_RMA_SYNC, "rank %d is already locked by this process", rank);
    else if (assert & MPI_MODE_NOCHECK) {
        w->locked[rank] = 1;
        w->nocheck[rank] = 1;
    }
    pthread_mutex_unlock(&w->lock);
    if (cls != MPI_SUCCESS || (assert &MPI_MODE_NOCHECK))
        return cls;
    cls = exchange(w, MSG_LOCK, lock_type, &rank, 1, why);
    if (cls == MPI_SUCCESS) {
        pthread_mutex_lock(&w->lock);
        w->locked[rank] = 1;
        pthread_mutex_unlock(&w->lock);
    }
    return cls;
}

int mf_win_unlock(mf_win_t *w, int rank, char *why)
{
    pthread_mutex_lock(&w->lock);
    int locked = w->locked[rank], nocheck = w->nocheck[rank];
    pthread_mutex_unlock(&w->lock);
    if (!locked)
        return fail(why, MPI_ERR_RMA_SYNC, "rank %d is not locked by this process", rank);
    int cls = exchange(w, nocheck ? MSG_FLUSH : MSG_UNLOCK, 0, &rank, 1, why);
    pthread_mutex_lock(&w->lock);
    w->locked[rank] = 0;
    w->nocheck[rank] = 0;
    pthread_mutex_unlock(&w->lock);
    return cls;
}

int mf_win_lock_all(mf_win_t *w, int assert, char *why)
{
    pthread_mutex_lock(&w->lock);
    int cls = MPI_SUCCESS;
    if (w->lock_all)
        cls = fail(why, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all was already called");
    else if (w->start_group != NULL)
        cls = fail(why, MPI_ERR_RMA_SYNC,
                   "an access epoch of MPI_Win_start is open (epochs must not overlap)");
    for (int i = 0; cls == MPI_SUCCESS && i < w->comm->size; i++)
        if (w->locked[i])
            cls = fail(why, MPI_ERR_RMA_SYNC, "rank %d is already locked by this process", i);
    if (cls == MPI_SUCCESS && (assert &MPI_MODE_NOCHECK))
        w->lock_all = 2;
    pthread_mutex_unlock(&w->lock);
    if (cls != MPI_SUCCESS || (assert &MPI_MODE_NOCHECK))
        return cls;
    int *targets = all_ranks(w);
    if (targets == NULL)
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    cls = exchange(w, MSG_LOCK, MPI_LOCK_SHARED, targets, w->comm->size, why);
    free(targets);
    if (cls == MPI_SUCCESS) {
        pthread_mutex_lock(&w->lock);
        w->lock_all = 1;
        pthread_mutex_unlock(&w->lock);
    }
    return cls;
}

int mf_win_unlock_all(mf_win_t *w, char *why)
{
    pthread_mutex_lock(&w->lock);
    int mode = w->lock_all;
    pthread_mutex_unlock(&w->lock);
    if (!mode)
        return fail(why, MPI_ERR_RMA_SYNC, "MPI_Win_lock_all was not called");
    int *targets = all_ranks(w);
    if (targets == NULL)
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    int cls = exchange(w, mode == 2 ? MSG_FLUSH : MSG_UNLOCK, 0, targets, w->comm->size, why);
    free(targets);
    pthread_mutex_lock(&w->lock);
    w->lock_all = 0;
    pthread_mutex_unlock(&w->lock);
    return cls;
}

int mf_win_flush(mf_win_t *w, int rank, char *why)
{
    int size = w->comm->size, n = 0;
    int *targets = malloc(sizeof(int) * (size_t)size);
    if (targets == NULL)
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    pthread_mutex_lock(&w->lock);
    int cls = MPI_SUCCESS;
    if (rank >= 0) {
        if (!w->lock_all && !w->locked[rank])
            cls = fail(why, MPI_ERR_RMA_SYNC,
                       "no passive-target epoch to rank %d is open (MPI_Win_lock or "
                       "MPI_Win_lock_all)",
                       rank);
        targets[n++] = rank;
    } else {
        for (int t = 0; t < size; t++)
            if ((w->lock_all || w->locked[t]) && (w->dirty[t] || pending_to(w, t)))
                targets[n++] = t;
        int any = w->lock_all;
        for (int t = 0; t < size; t++)
            any |= w->locked[t];
        if (!any)
            cls = fail(why, MPI_ERR_RMA_SYNC,
                       "no passive-target epoch is open (MPI_Win_lock or MPI_Win_lock_all)");
    }
    pthread_mutex_unlock(&w->lock);
    if (cls == MPI_SUCCESS && n > 0)
        cls = exchange(w, MSG_FLUSH, 0, targets, n, why);
    free(targets);
    return cls;
}

int mf_win_post(mf_win_t *w, const int *ranks, int n, int assert, char *why)
{
    pthread_mutex_lock(&w->lock);
    if (w->post_n >= 0) {
        pthread_mutex_unlock(&w->lock);
        return fail(why, MPI_ERR_RMA_SYNC, "an exposure epoch (MPI_Win_post) is already open");
    }
    w->post_n = n;
    mf_status_t st = MF_OK;
    if (!(assert &MPI_MODE_NOCHECK)) {
        mf_vci_lock(w->comm->vci);
        for (int i = 0; i < n && st == MF_OK; i++)
            st = send_locked(w, ranks[i], RMA_TAG_POST, NULL, 0, NULL, -1, NULL);
        mf_vci_unlock(w->comm->vci);
    }
    pthread_mutex_unlock(&w->lock);
    if (st != MF_OK)
        return fail(why, status_class(st), "cannot notify the origins: %s", mf_status_str(st));
    return MPI_SUCCESS;
}

static int posted(mf_win_t *w, const void *arg)
{
    (void)arg;
    for (rma_pending_t *p = w->pending; p != NULL; p = p->next)
        if (p->kind == PEND_POSTED)
            return 0;
    return 1;
}

int mf_win_start(mf_win_t *w, const int *ranks, int n, int assert, char *why)
{
    int *group = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (group == NULL)
        return fail(why, MPI_ERR_NO_MEM, "out of memory");
    memcpy(group, ranks, sizeof(int) * (size_t)n);
    pthread_mutex_lock(&w->lock);
    if (w->start_group != NULL) {
        pthread_mutex_unlock(&w->lock);
        free(group);
        return fail(why, MPI_ERR_RMA_SYNC, "an access epoch (MPI_Win_start) is already open");
    }
    if (passive_epoch_locked(w)) {
        pthread_mutex_unlock(&w->lock);
        free(group);
        return fail(why, MPI_ERR_RMA_SYNC,
                    "a passive-target epoch (MPI_Win_lock or MPI_Win_lock_all) is open "
                    "(epochs must not overlap)");
    }
    if (!(assert &MPI_MODE_NOCHECK)) {
        mf_vci_lock(w->comm->vci);
        for (int i = 0; i < n; i++)
            recv_locked(w, PEND_POSTED, ranks[i], RMA_TAG_POST, NULL, 0, NULL, NULL);
        mf_vci_unlock(w->comm->vci);
    }
    pthread_mutex_unlock(&w->lock);
    /* The standard lets MPI_Win_start wait for the targets' MPI_Win_post. */
    wait_until(w, posted, NULL);
    pthread_mutex_lock(&w->lock);
    w->start_group = group;
    w->start_n = n;
    pthread_mutex_unlock(&w->lock);
    return MPI_SUCCESS;
}

typedef struct {
    const int *targets;
    int n;
} group_t;

static int group_quiet(mf_win_t *w, const void *arg)
{
    const group_t *g = arg;
    for (int i = 0; i < g->n; i++)
        if (pending_to(w, g->targets[i]))
            return 0;
    return 1;
}

int mf_win_complete(mf_win_t *w, char *why)
{
    pthread_mutex_lock(&w->lock);
    int *group = w->start_group, n = w->start_n;
    if (group == NULL) {
        pthread_mutex_unlock(&w->lock);
        return fail(why, MPI_ERR_RMA_SYNC, "no access epoch (MPI_Win_start) is open");
    }
    mf_status_t st = MF_OK;
    mf_vci_lock(w->comm->vci);
    for (int i = 0; i < n && st == MF_OK; i++) {
        rma_hdr_t *h = calloc(1, sizeof(*h));
        if (h == NULL) {
            st = MF_ERR_NO_MEMORY;
            break;
        }
        *h = (rma_hdr_t){.type = MSG_COMPLETE, .origin = w->comm->rank};
        st = send_locked(w, group[i], RMA_TAG_REQ, h, sizeof(*h), h, group[i], NULL);
        w->dirty[group[i]] = 0;
    }
    mf_vci_unlock(w->comm->vci);
    pthread_mutex_unlock(&w->lock);
    /* the epoch's operations are complete here once nothing towards its targets is in flight */
    group_t g = {group, n};
    wait_until(w, group_quiet, &g);
    pthread_mutex_lock(&w->lock);
    w->start_group = NULL;
    w->start_n = 0;
    pthread_mutex_unlock(&w->lock);
    free(group);
    if (st != MF_OK)
        return fail(why, status_class(st), "cannot notify the targets: %s", mf_status_str(st));
    return MPI_SUCCESS;
}

static int all_completed(mf_win_t *w, const void *arg)
{
    (void)arg;
    return w->completes_in >= w->post_n;
}

int mf_win_wait(mf_win_t *w, int blocking, int *flag_p, char *why)
{
    pthread_mutex_lock(&w->lock);
    int open = w->post_n >= 0;
    pthread_mutex_unlock(&w->lock);
    if (!open)
        return fail(why, MPI_ERR_RMA_SYNC, "no exposure epoch (MPI_Win_post) is open");
    if (blocking) {
        wait_until(w, all_completed, NULL);
    } else {
        pthread_mutex_lock(&w->lock);
        win_progress_locked(w);
        int done = all_completed(w, NULL);
        pthread_mutex_unlock(&w->lock);
        *flag_p = done;
        if (!done) {
            mf_progress_test(w->comm->vci);
            return MPI_SUCCESS;
        }
    }
    pthread_mutex_lock(&w->lock);
    w->completes_in -= w->post_n;
    w->post_n = -1;
    pthread_mutex_unlock(&w->lock);
    if (flag_p != NULL)
        *flag_p = 1;
    return MPI_SUCCESS;
}
