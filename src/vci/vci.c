/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VCI layer: the pool of UCX workers, lazy endpoint creation, tagged send/receive/probe on a
 * worker, progress and per-VCI statistics. Each VCI's worker runs in UCX's serialized mode
 * because the VCI lock already protects it; UCX therefore takes no lock of its own.
 */
#include "vci.h"

#include "pmi.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <ucp/api/ucp.h>

struct mf_vci {
    /* A test-and-test-and-set lock: uncontended it is one atomic exchange and one store, where
     * a pthread mutex costs about a hundred instructions per lock/unlock pair on this path. */
    atomic_int lock;
    ucp_worker_h worker;
    ucp_ep_h *eps; /* indexed by world rank, created on first use */
    int index;
    /* Statistics are written under the lock and read racily by tools. */
    atomic_uint_fast64_t sends, recvs, lock_acquired, lock_contended, global_sweeps, request_misses;
} __attribute__((aligned(MF_CACHE_LINE)));

static struct {
    ucp_context_h context;
    mf_vci_t *vcis;
    int nvcis;
    int world_rank, world_size;
} pool;

/* Counters are only written by the lock holder, so a relaxed load+store is enough (no atomic
 * read-modify-write on the hot path); readers see a value that may lag slightly. */
static inline void stat_inc(atomic_uint_fast64_t *counter)
{
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

static mf_status_t status_from_ucs(ucs_status_t st)
{
    switch (st) {
    case UCS_OK: return MF_OK;
    case UCS_ERR_NO_MEMORY: return MF_ERR_NO_MEMORY;
    case UCS_ERR_MESSAGE_TRUNCATED: return MF_ERR_TRUNCATE;
    case UCS_ERR_CANCELED: return MF_ERR_CANCELED;
    case UCS_ERR_INVALID_PARAM: return MF_ERR_INVALID;
    case UCS_ERR_UNSUPPORTED: return MF_ERR_UNSUPPORTED;
    case UCS_ERR_UNREACHABLE:
    case UCS_ERR_CONNECTION_RESET:
    case UCS_ERR_ENDPOINT_TIMEOUT: return MF_ERR_PEER_FAILED;
    default: return MF_ERR_TRANSPORT;
    }
}

static void addr_key(int index, char *key, size_t size)
{
    snprintf(key, size, "mf-ucx-addr-%d", index);
}

static mf_status_t worker_create(mf_vci_t *vci, int index)
{
    ucp_worker_params_t wparams = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
    };
    ucs_status_t st = ucp_worker_create(pool.context, &wparams, &vci->worker);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot create worker %d: %s", index, ucs_status_string(st));
        return status_from_ucs(st);
    }
    vci->index = index;
    vci->eps = mf_calloc((size_t)pool.world_size, sizeof(ucp_ep_h), "endpoint table");
    if (vci->eps == NULL) {
        ucp_worker_destroy(vci->worker);
        return MF_ERR_NO_MEMORY;
    }
    atomic_init(&vci->lock, 0);

    ucp_address_t *addr;
    size_t addr_len;
    st = ucp_worker_get_address(vci->worker, &addr, &addr_len);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot get worker address: %s", ucs_status_string(st));
        return status_from_ucs(st);
    }
    char key[64];
    addr_key(index, key, sizeof(key));
    mf_status_t status = mf_pmi_put_blob(key, addr, addr_len);
    ucp_worker_release_address(vci->worker, addr);
    return status;
}

mf_status_t mf_vci_pool_init(int world_rank, int world_size, int nvcis)
{
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot read ucx configuration: %s", ucs_status_string(st));
        return status_from_ucs(st);
    }
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED,
        .features = UCP_FEATURE_TAG,
        .mt_workers_shared = 1,
    };
    st = ucp_init(&params, config, &pool.context);
    ucp_config_release(config);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot initialise ucx: %s", ucs_status_string(st));
        return status_from_ucs(st);
    }
    pool.world_rank = world_rank;
    pool.world_size = world_size;
    pool.vcis = aligned_alloc(MF_CACHE_LINE, sizeof(mf_vci_t) * (size_t)nvcis);
    if (pool.vcis == NULL) {
        ucp_cleanup(pool.context);
        return MF_ERR_NO_MEMORY;
    }
    memset(pool.vcis, 0, sizeof(mf_vci_t) * (size_t)nvcis);
    for (int i = 0; i < nvcis; i++) {
        mf_status_t status = worker_create(&pool.vcis[i], i);
        if (status != MF_OK)
            return status;
        pool.nvcis = i + 1;
    }
    return MF_OK;
}

static void ep_close_all(mf_vci_t *vci)
{
    for (int peer = 0; peer < pool.world_size; peer++) {
        if (vci->eps[peer] == NULL)
            continue;
        ucp_request_param_t param = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
            .flags = UCP_EP_CLOSE_FLAG_FORCE,
        };
        void *req = ucp_ep_close_nbx(vci->eps[peer], &param);
        if (UCS_PTR_IS_PTR(req)) {
            while (ucp_request_check_status(req) == UCS_INPROGRESS)
                ucp_worker_progress(vci->worker);
            ucp_request_free(req);
        }
        vci->eps[peer] = NULL;
    }
}

void mf_vci_pool_fini(void)
{
    for (int i = 0; i < pool.nvcis; i++) {
        mf_vci_t *vci = &pool.vcis[i];
        ep_close_all(vci);
        free(vci->eps);
        ucp_worker_destroy(vci->worker);
    }
    free(pool.vcis);
    pool.vcis = NULL;
    pool.nvcis = 0;
    if (pool.context != NULL)
        ucp_cleanup(pool.context);
    pool.context = NULL;
}

int mf_vci_pool_size(void)
{
    return pool.nvcis;
}

mf_vci_t *mf_vci_get(int index)
{
    return &pool.vcis[index];
}

int mf_vci_index(const mf_vci_t *vci)
{
    return vci->index;
}

static inline int lock_try(mf_vci_t *vci)
{
    return atomic_load_explicit(&vci->lock, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&vci->lock, 1, memory_order_acquire) == 0;
}

void mf_vci_lock(mf_vci_t *vci)
{
    if (MF_UNLIKELY(!lock_try(vci))) {
        /* Contended: spin on a plain load (no cache-line ping-pong), and give the CPU away
         * now and then, since with more threads than cores the holder may be descheduled. */
        unsigned spins = 0;
        do {
            while (atomic_load_explicit(&vci->lock, memory_order_relaxed) != 0) {
                if (++spins % 256 == 0)
                    sched_yield();
                else
                    mf_cpu_relax();
            }
        } while (!lock_try(vci));
        stat_inc(&vci->lock_contended);
    }
    stat_inc(&vci->lock_acquired);
}

void mf_vci_unlock(mf_vci_t *vci)
{
    atomic_store_explicit(&vci->lock, 0, memory_order_release);
}

int mf_vci_trylock(mf_vci_t *vci)
{
    if (!lock_try(vci))
        return 0;
    stat_inc(&vci->lock_acquired);
    return 1;
}

static ucp_ep_h ep_get_locked(mf_vci_t *vci, int peer, mf_status_t *status_p)
{
    if (MF_LIKELY(vci->eps[peer] != NULL))
        return vci->eps[peer];

    /* First message to this peer on this VCI: look its address up and connect. The remote
     * VCI has the same index (communicators map to the same VCI index on every process). */
    char key[64];
    addr_key(vci->index, key, sizeof(key));
    unsigned char addr[4096];
    size_t addr_len;
    mf_status_t status = mf_pmi_get_blob(peer, key, addr, sizeof(addr), &addr_len);
    if (status != MF_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot find the address of rank %d: %s", peer,
               mf_status_str(status));
        *status_p = status;
        return NULL;
    }
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address = (const ucp_address_t *)addr,
    };
    ucs_status_t st = ucp_ep_create(vci->worker, &params, &vci->eps[peer]);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot connect to rank %d: %s", peer, ucs_status_string(st));
        *status_p = status_from_ucs(st);
        return NULL;
    }
    return vci->eps[peer];
}

static void op_finish(mf_vci_op_t *op, ucs_status_t st)
{
    op->status = status_from_ucs(st);
    op->transport_req = NULL;
    if (op->on_complete != NULL)
        op->on_complete(op);
    atomic_store_explicit(&op->done, 1, memory_order_release);
}

static void send_done_cb(void *request, ucs_status_t st, void *user_data)
{
    op_finish(user_data, st);
    ucp_request_free(request);
}

static void recv_done_cb(void *request, ucs_status_t st, const ucp_tag_recv_info_t *info,
                         void *user_data)
{
    mf_vci_op_t *op = user_data;
    if (st == UCS_OK || st == UCS_ERR_MESSAGE_TRUNCATED) {
        op->sender_tag = info->sender_tag;
        op->length = info->length;
    }
    op_finish(op, st);
    ucp_request_free(request);
}

/* Common handling of a UCX non-blocking call's return value. */
static mf_status_t op_started(mf_vci_op_t *op, ucs_status_ptr_t ret, const char *what)
{
    if (ret == NULL) {
        op_finish(op, UCS_OK);
        return MF_OK;
    }
    if (UCS_PTR_IS_ERR(ret)) {
        ucs_status_t st = UCS_PTR_STATUS(ret);
        mf_log(MF_LOG_ERROR, "vci", "%s failed: %s", what, ucs_status_string(st));
        return status_from_ucs(st);
    }
    /* The callback may already have run (and freed the transport request) inside the call. */
    if (!mf_vci_op_is_done(op))
        op->transport_req = ret;
    return MF_OK;
}

mf_status_t mf_vci_tag_send_locked(mf_vci_t *vci, int peer, const void *buf, size_t len,
                                   uint64_t tag, int synchronous, mf_vci_op_t *op)
{
    mf_status_t status = MF_OK;
    ucp_ep_h ep = ep_get_locked(vci, peer, &status);
    if (ep == NULL)
        return status;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.send = send_done_cb,
        .user_data = op,
    };
    stat_inc(&vci->sends);
    ucs_status_ptr_t ret = synchronous ? ucp_tag_send_sync_nbx(ep, buf, len, tag, &param)
                                       : ucp_tag_send_nbx(ep, buf, len, tag, &param);
    return op_started(op, ret, "tagged send");
}

mf_status_t mf_vci_tag_recv_locked(mf_vci_t *vci, void *buf, size_t len, uint64_t tag,
                                   uint64_t tag_mask, mf_vci_op_t *op)
{
    /* Immediate completion is refused: UCX 1.13 can return "completed" without filling the
     * receive information (tag, length) under concurrent traffic, so the completion callback,
     * which always has it, reports every receive. */
    ucp_request_param_t param = {
        .op_attr_mask =
            UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FLAG_NO_IMM_CMPL,
        .cb.recv = recv_done_cb,
        .user_data = op,
    };
    stat_inc(&vci->recvs);
    ucs_status_ptr_t ret = ucp_tag_recv_nbx(vci->worker, buf, len, tag, tag_mask, &param);
    return op_started(op, ret, "tagged receive");
}

int mf_vci_tag_probe_locked(mf_vci_t *vci, uint64_t tag, uint64_t tag_mask, uint64_t *tag_p,
                            size_t *len_p)
{
    ucp_tag_recv_info_t info;
    ucp_tag_message_h msg = ucp_tag_probe_nb(vci->worker, tag, tag_mask, 0, &info);
    if (msg == NULL)
        return 0;
    *tag_p = info.sender_tag;
    *len_p = info.length;
    return 1;
}

int mf_vci_tag_mprobe_locked(mf_vci_t *vci, uint64_t tag, uint64_t tag_mask, mf_vci_msg_t *msg)
{
    ucp_tag_recv_info_t info;
    ucp_tag_message_h m = ucp_tag_probe_nb(vci->worker, tag, tag_mask, 1, &info);
    if (m == NULL)
        return 0;
    msg->transport_msg = m;
    msg->sender_tag = info.sender_tag;
    msg->length = info.length;
    return 1;
}

mf_status_t mf_vci_tag_mrecv_locked(mf_vci_t *vci, void *buf, size_t len, mf_vci_msg_t *msg,
                                    mf_vci_op_t *op)
{
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA,
        .cb.recv = recv_done_cb,
        .user_data = op,
    };
    stat_inc(&vci->recvs);
    ucs_status_ptr_t ret = ucp_tag_msg_recv_nbx(vci->worker, buf, len, msg->transport_msg, &param);
    if (ret == NULL) {
        op->sender_tag = msg->sender_tag;
        op->length = msg->length;
    }
    return op_started(op, ret, "matched receive");
}

void mf_vci_cancel_locked(mf_vci_t *vci, mf_vci_op_t *op)
{
    if (op->transport_req != NULL)
        ucp_request_cancel(vci->worker, op->transport_req);
}

unsigned mf_vci_progress_locked(mf_vci_t *vci)
{
    return ucp_worker_progress(vci->worker);
}

unsigned mf_vci_progress(mf_vci_t *vci)
{
    mf_vci_lock(vci);
    unsigned n = ucp_worker_progress(vci->worker);
    mf_vci_unlock(vci);
    return n;
}

unsigned mf_vci_progress_others(mf_vci_t *self)
{
    unsigned n = 0;
    atomic_fetch_add_explicit(&self->global_sweeps, 1, memory_order_relaxed);
    for (int i = 0; i < pool.nvcis; i++) {
        mf_vci_t *vci = &pool.vcis[i];
        if (vci == self || !mf_vci_trylock(vci))
            continue;
        n += ucp_worker_progress(vci->worker);
        mf_vci_unlock(vci);
    }
    return n;
}

void mf_vci_stats_get(int index, mf_vci_stats_t *stats)
{
    const mf_vci_t *vci = &pool.vcis[index];
    stats->sends = atomic_load_explicit(&vci->sends, memory_order_relaxed);
    stats->recvs = atomic_load_explicit(&vci->recvs, memory_order_relaxed);
    stats->lock_acquired = atomic_load_explicit(&vci->lock_acquired, memory_order_relaxed);
    stats->lock_contended = atomic_load_explicit(&vci->lock_contended, memory_order_relaxed);
    stats->global_sweeps = atomic_load_explicit(&vci->global_sweeps, memory_order_relaxed);
    stats->request_misses = atomic_load_explicit(&vci->request_misses, memory_order_relaxed);
    stats->active = vci->worker != NULL;
}

void mf_vci_count_request_miss_locked(mf_vci_t *vci)
{
    stat_inc(&vci->request_misses);
}

void mf_vci_resources_get(mf_vci_resources_t *res)
{
    res->contexts = 1;
    res->workers = pool.nvcis;
    res->endpoints = 0;
    for (int i = 0; i < pool.nvcis; i++) {
        for (int peer = 0; peer < pool.world_size; peer++)
            res->endpoints += pool.vcis[i].eps[peer] != NULL;
    }
}

void mf_vci_transport_version(unsigned *major, unsigned *minor, unsigned *release)
{
    ucp_get_version(major, minor, release);
}
