/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * VCI layer: the pool of UCX workers, lazy endpoint creation, tagged send/receive/probe on a
 * worker, progress and per-VCI statistics. Each VCI's worker runs in UCX's serialized mode
 * because the VCI lock already protects it; UCX therefore takes no lock of its own.
 */
#define _GNU_SOURCE /* ppoll */
#include "vci.h"

#include "pmi.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <ucp/api/ucp.h>

/* Transport resources: a UCX worker, its endpoints and what it knows of peers. With
 * MANIFOLD_VCI_SHARING=shared several VCIs use one worker (and then one lock). */
typedef struct mf_worker {
    ucp_context_h context; /* the pool's, or its own with MANIFOLD_VCI_SHARING=context */
    ucp_worker_h worker;
    ucp_ep_h *eps; /* indexed by process (mf_vci_add_process), created on first use */
    struct {
        void *addr;
        size_t len;
    } * peers; /* each peer's address of the same-numbered worker; worker 0 reads PMI lazily */
    void *local_addr;
    size_t local_len;
    int index;
    int own_context;
    int neps;
    int efd; /* the worker's event file descriptor (asynchronous progress only) */
    /* The thread that last progressed the worker for a request of its own or started an
     * operation on it (mf_vci_thread_id()), cleared by global sweeps of other threads, which then
     * note the time in idle_since: a sweep leaves a worker another thread uses alone until
     * nobody has touched it for SWEEP_IDLE_NS (it needs no help, and taking its lock would only
     * make its owner wait). A thread sweeps the workers it used itself at once. */
    atomic_uintptr_t user;
    atomic_uint_fast64_t idle_since;
} __attribute__((aligned(MF_CACHE_LINE))) mf_worker_t;

/* How long a worker's owner must have left it alone before global sweeps progress it. Longer
 * than the gaps between an owner's calls, also when it is descheduled for a while with more
 * threads than cores; short against anything a stalled message waits for. */
#define SWEEP_IDLE_NS 1000000u

/* A VCI. Its hot part (lock word, worker pointer, counters) fits one cache line; by default each
 * VCI starts on a line of its own (MANIFOLD_VCI_ALIGN=0 packs them, to measure false sharing). */
struct mf_vci {
    mf_vci_head_t head;       /* first: vci.h reads it through a cast */
    mf_vci_lock_t own_lock;   /* the VCI's own lock, unless `head.lock` points elsewhere */
    _Atomic(mf_worker_t *) w; /* NULL until activated */
    atomic_uint_fast64_t sends, recvs, global_sweeps, request_misses;
};

static struct {
    pthread_mutex_t lock; /* activation, address tables of inactive workers */
    ucp_context_h context;
    unsigned char *vci_mem;
    mf_vci_t *vcis[MF_VCI_MAX];
    mf_worker_t workers[MF_VCI_MAX];
    int nvcis, nworkers, ncontexts;
    int nworkers_max; /* workers the VCIs map onto */
    int world_rank, world_size;
    int local_rank, local_size; /* this job's processes on this node */
    char tls[256];              /* UCX_TLS when /dev/shm is too small for posix (shm_room) */
    /* Processes: the world's ranks, then those of other jobs met through MPI_Comm_connect,
     * accept or spawn (dyn[i] is process world_size + i), up to nprocs_max. nprocs only grows
     * (under `lock`); the tables sized nprocs_max never move. */
    atomic_int nprocs;
    int nprocs_max;
    struct {
        uint64_t job;
        int rank;
    } * dyn;
    uint64_t job; /* this job's key (mf_vci_job_key), 0 until first asked for */
    /* Receives may complete inside ucp_tag_recv_nbx: UCX fills the receive information of an
     * immediate completion only from 1.16 on (earlier ones leave tag and length unset, which
     * tests/mpi/threads/exchange_tags caught on 1.13), so older ones report every receive
     * through the callback. */
    int recv_imm;
    size_t ucx_req_size; /* UCX's own request (ucp_context_query) */
    int lock_bias;       /* locks may be biased (mf_vci_lock_slow) */
    mf_vci_lock_t global_lock __attribute__((aligned(MF_CACHE_LINE)));
} pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Counters are only written by the lock holder, so a relaxed load+store is enough (no atomic
 * read-modify-write on the hot path); readers see a value that may lag slightly. */
static inline void stat_inc(atomic_uint_fast64_t *counter)
{
    mf_vci_count(counter);
}

static mf_status_t status_from_ucs(ucs_status_t st)
{
    if (MF_LIKELY(st == UCS_OK)) /* ahead of the switch's jump table: every completion */
        return MF_OK;
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

/* What UCX's posix transport takes from /dev/shm per worker, with room to grow: each worker
 * maps its receive queue and a first pool of receive buffers there (4.2 MiB measured with UCX
 * 1.22), and the pool grows under load. */
#define POSIX_SHM_PER_WORKER ((size_t)8 * 1024 * 1024)

/* The posix transport sizes its files in /dev/shm without reserving them, so when the file
 * system fills up (a container's 64 MiB) a process dies of SIGBUS in UCX as it touches a
 * page, at start-up or when a channel comes up. Every process of this node may create up to
 * nworkers_max workers; when /dev/shm cannot hold that, UCX leaves posix out and keeps its
 * queues in System V shared memory (the sysv transport, same code otherwise). A UCX_TLS of
 * the user's that lists transports is kept as it is; one that leaves some out ("^cma") leaves
 * posix out too. Sets pool.tls (empty: UCX's own choice). */
static void shm_room(void)
{
    size_t need = (size_t)pool.local_size * (size_t)pool.nworkers_max * POSIX_SHM_PER_WORKER;
    size_t free_bytes = mf_shm_free_bytes();
    const char *user = getenv("UCX_TLS");
    pool.tls[0] = '\0';
    if (free_bytes >= need || (user != NULL && user[0] != '^'))
        return;
    if (user == NULL)
        snprintf(pool.tls, sizeof(pool.tls), "^posix");
    else if (snprintf(pool.tls, sizeof(pool.tls), "%s,posix", user) >= (int)sizeof(pool.tls))
        pool.tls[0] = '\0'; /* longer than any list of UCX's transports: keep the user's */
    if (pool.tls[0] != '\0' && pool.local_rank == 0) /* information: sysv runs the same queues */
        mf_log(MF_LOG_INFO, "vci",
               "/dev/shm has %zu MiB free, less than the %zu MiB UCX's posix transport may take "
               "for %d processes of up to %d channels each: using System V shared memory "
               "instead (a larger /dev/shm avoids this, e.g. docker run --shm-size=1g)",
               free_bytes >> 20, need >> 20, pool.local_size, pool.nworkers_max);
}

static mf_status_t context_create(ucp_context_h *context_p)
{
    ucp_config_t *config;
    ucs_status_t st = ucp_config_read(NULL, NULL, &config);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot read ucx configuration: %s", ucs_status_string(st));
        return status_from_ucs(st);
    }
    if (pool.tls[0] != '\0' && (st = ucp_config_modify(config, "TLS", pool.tls)) != UCS_OK)
        mf_log(MF_LOG_WARN, "vci", "cannot leave out ucx's posix transport: %s",
               ucs_status_string(st));
    ucp_params_t params = {
        .field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED |
                      UCP_PARAM_FIELD_REQUEST_SIZE,
        /* wakeups: the helper thread sleeps on the workers' event file descriptors */
        .features = UCP_FEATURE_TAG | (mf_vci_async ? UCP_FEATURE_WAKEUP : 0),
        .mt_workers_shared = 1,
        /* Room in every UCX request for the op a pending send binds to after the call
         * (mf_vci_tag_send_try_locked). */
        .request_size = sizeof(mf_vci_op_t *),
    };
    st = ucp_init(&params, config, context_p);
    ucp_config_release(config);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot initialise ucx: %s", ucs_status_string(st));
        return status_from_ucs(st);
    }
    /* The size of UCX's own request, which a receive can place in memory we provide
     * (mf_vci_request_headroom): the same for every context of the process. */
    ucp_context_attr_t attr = {.field_mask = UCP_ATTR_FIELD_REQUEST_SIZE};
    if (ucp_context_query(*context_p, &attr) == UCS_OK && attr.request_size > pool.ucx_req_size)
        pool.ucx_req_size = attr.request_size;
    pool.ncontexts++;
    return MF_OK;
}

/* The tables indexed by process number have room for MF_VCI_DYN_PROCS processes of other jobs,
 * which few jobs ever meet: they come from the kernel untouched (zero pages), so only what is
 * used of them takes memory (an allocator may clear a large calloc by hand). */
static void *table_alloc(size_t count, size_t size, const char *what)
{
    void *p = mmap(NULL, count * size, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED)
        return p;
    mf_log(MF_LOG_ERROR, "vci", "out of memory for the %s (%zu bytes)", what, count * size);
    return NULL;
}

static void table_free(void *p, size_t count, size_t size)
{
    if (p != NULL)
        munmap(p, count * size);
}

/* Create worker `index` (pool lock held, or single-threaded init). */
static mf_status_t worker_create(mf_worker_t *w, int index)
{
    w->index = index;
    w->context = pool.context;
    if (mf_params.vci_sharing == MF_VCI_SHARING_CONTEXT && index > 0) {
        mf_status_t status = context_create(&w->context);
        if (status != MF_OK)
            return status;
        w->own_context = 1;
    }
    ucp_worker_params_t wparams = {
        .field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
        .thread_mode = UCS_THREAD_MODE_SERIALIZED,
    };
    ucs_status_t st = ucp_worker_create(w->context, &wparams, &w->worker);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot create worker %d: %s", index, ucs_status_string(st));
        return status_from_ucs(st);
    }
    w->efd = -1;
    if (mf_vci_async && (st = ucp_worker_get_efd(w->worker, &w->efd)) != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "no event file descriptor for worker %d: %s", index,
               ucs_status_string(st));
        return status_from_ucs(st);
    }
    w->eps = table_alloc((size_t)pool.nprocs_max, sizeof(*w->eps), "endpoint table");
    w->peers = table_alloc((size_t)pool.nprocs_max, sizeof(*w->peers), "peer address table");
    if (w->eps == NULL || w->peers == NULL)
        return MF_ERR_NO_MEMORY;
    ucp_address_t *addr;
    st = ucp_worker_get_address(w->worker, &addr, &w->local_len);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot get worker address: %s", ucs_status_string(st));
        return status_from_ucs(st);
    }
    w->local_addr = mf_malloc(w->local_len, "worker address");
    if (w->local_addr != NULL)
        memcpy(w->local_addr, addr, w->local_len);
    ucp_worker_release_address(w->worker, addr);
    if (w->local_addr == NULL)
        return MF_ERR_NO_MEMORY;
    pool.nworkers++;
    return MF_OK;
}

static void worker_close_eps(mf_worker_t *w)
{
    if (w->worker == NULL)
        return;
    int nprocs = atomic_load(&pool.nprocs);
    for (int peer = 0; peer < nprocs; peer++) {
        if (w->eps[peer] == NULL)
            continue;
        ucp_request_param_t param = {
            .op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
            .flags = UCP_EP_CLOSE_FLAG_FORCE,
        };
        void *req = ucp_ep_close_nbx(w->eps[peer], &param);
        if (UCS_PTR_IS_PTR(req)) {
            while (ucp_request_check_status(req) == UCS_INPROGRESS)
                ucp_worker_progress(w->worker);
            ucp_request_free(req);
        }
        w->eps[peer] = NULL;
    }
}

static void worker_destroy(mf_worker_t *w)
{
    if (w->worker == NULL)
        return;
    worker_close_eps(w);
    int nprocs = atomic_load(&pool.nprocs);
    for (int peer = 0; peer < nprocs; peer++)
        free(w->peers[peer].addr);
    table_free(w->eps, (size_t)pool.nprocs_max, sizeof(*w->eps));
    table_free(w->peers, (size_t)pool.nprocs_max, sizeof(*w->peers));
    free(w->local_addr);
    ucp_worker_destroy(w->worker);
    if (w->own_context)
        ucp_cleanup(w->context);
    memset(w, 0, sizeof(*w));
}

/* The worker VCI `index` runs on: its own, or one of the VCI_WORKERS shared ones. */
static int worker_of(int index)
{
    return index % pool.nworkers_max;
}

mf_status_t mf_vci_pool_init(int world_rank, int world_size, int local_rank, int local_size,
                             int nvcis)
{
    pool.world_rank = world_rank;
    pool.world_size = world_size;
    pool.local_rank = local_rank;
    pool.local_size = local_size > 0 ? local_size : 1;
    atomic_store(&pool.nprocs, world_size);
    pool.nprocs_max = world_size + MF_VCI_DYN_PROCS;
    pool.job = 0;
    pool.dyn = table_alloc(MF_VCI_DYN_PROCS, sizeof(*pool.dyn), "process table");
    if (pool.dyn == NULL)
        return MF_ERR_NO_MEMORY;
    mf_vci_async = mf_params.async_progress;
    pool.nvcis = nvcis < MF_VCI_MAX ? nvcis : MF_VCI_MAX;
    pool.nworkers_max = pool.nvcis;
    if (mf_params.vci_sharing == MF_VCI_SHARING_SHARED && mf_params.vci_workers < pool.nvcis)
        pool.nworkers_max = mf_params.vci_workers;
    pool.nworkers = 0;
    pool.ncontexts = 0;
    unsigned major, minor, release;
    ucp_get_version(&major, &minor, &release);
    pool.recv_imm = major > 1 || (major == 1 && minor >= 16);
    shm_room();
    mf_status_t status = context_create(&pool.context);
    if (status != MF_OK)
        return status;

    /* One allocation holds every VCI, each on a fresh cache line or packed back to back. */
    size_t stride = sizeof(mf_vci_t);
    if (mf_params.vci_align)
        stride = (stride + MF_CACHE_LINE - 1) / MF_CACHE_LINE * MF_CACHE_LINE;
    pool.vci_mem = mf_aligned_alloc(MF_CACHE_LINE, stride * (size_t)pool.nvcis);
    if (pool.vci_mem == NULL)
        return MF_ERR_NO_MEMORY;
    memset(pool.vci_mem, 0, stride * (size_t)pool.nvcis);
    pool.lock_bias = mf_params.vci_lock_bias && mf_vci_lock_bias_init();
    for (int i = 0; i < pool.nvcis; i++) {
        mf_vci_t *vci = (mf_vci_t *)(void *)(pool.vci_mem + stride * (size_t)i);
        pool.vcis[i] = vci;
        vci->head.index = i;
        atomic_init(&vci->w, NULL);
    }
    for (int i = 0; i < pool.nvcis; i++) {
        mf_vci_t *vci = pool.vcis[i];
        if (mf_params.thread_cs == MF_THREAD_CS_GLOBAL)
            vci->head.lock = &pool.global_lock;
        else
            vci->head.lock = &pool.vcis[worker_of(i)]->own_lock;
    }

    /* VCI 0 (MPI_COMM_WORLD, MPI_COMM_SELF and the shared fallback) is the only one created
     * now; its address goes to PMI, the others are exchanged when first needed. */
    mf_worker_t *w0 = &pool.workers[0];
    status = worker_create(w0, 0);
    if (status != MF_OK)
        return status;
    atomic_store_explicit(&pool.vcis[0]->w, w0, memory_order_release);
    return mf_pmi_put_blob("mf-ucx-addr-0", w0->local_addr, w0->local_len);
}

void mf_vci_pool_close_eps(void)
{
    mf_vci_async_stop();
    for (int i = 0; i < MF_VCI_MAX; i++)
        worker_close_eps(&pool.workers[i]);
}

void mf_vci_pool_fini(void)
{
    mf_vci_async_stop();
    for (int i = 0; i < MF_VCI_MAX; i++)
        worker_destroy(&pool.workers[i]);
    free(pool.vci_mem);
    pool.vci_mem = NULL;
    table_free(pool.dyn, MF_VCI_DYN_PROCS, sizeof(*pool.dyn));
    pool.dyn = NULL;
    memset(pool.vcis, 0, sizeof(pool.vcis));
    pool.nvcis = 0;
    pool.nworkers = 0;
    if (pool.context != NULL)
        ucp_cleanup(pool.context);
    pool.context = NULL;
    pool.ncontexts = 0;
}

int mf_vci_pool_size(void)
{
    return pool.nvcis;
}

mf_vci_t *mf_vci_get(int index)
{
    return pool.vcis[index];
}

/* The worker of a VCI known to be active, with its lock held: the pointer no longer changes. */
static inline ucp_worker_h worker_locked(mf_vci_t *vci)
{
    return atomic_load_explicit(&vci->w, memory_order_relaxed)->worker;
}

static inline mf_worker_t *vci_worker(const mf_vci_t *vci)
{
    return atomic_load_explicit(&((mf_vci_t *)vci)->w, memory_order_acquire);
}

mf_status_t mf_vci_activate(mf_vci_t *vci)
{
    if (MF_LIKELY(vci_worker(vci) != NULL))
        return MF_OK;
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&pool.lock);
    if (vci_worker(vci) == NULL) {
        mf_worker_t *w = &pool.workers[worker_of(vci->head.index)];
        if (w->worker == NULL)
            status = worker_create(w, worker_of(vci->head.index));
        if (status == MF_OK) {
            atomic_store_explicit(&vci->w, w, memory_order_release);
            mf_vci_async_kick(); /* a sleeping helper watches only the workers it armed */
        } else
            mf_log(MF_LOG_ERROR, "vci", "cannot activate VCI %d", vci->head.index);
    }
    pthread_mutex_unlock(&pool.lock);
    return status;
}

int mf_vci_knows_peers(mf_vci_t *vci, const int *world_ranks, int n)
{
    mf_worker_t *w = vci_worker(vci);
    if (w == NULL)
        return 0;
    if (w->index == 0)
        return 1; /* PMI has them all */
    int known = 1;
    mf_vci_lock(vci);
    for (int i = 0; i < n && known; i++) {
        int peer = world_ranks != NULL ? world_ranks[i] : i;
        known = peer == pool.world_rank || w->peers[peer].addr != NULL;
    }
    mf_vci_unlock(vci);
    return known;
}

int mf_vci_process_count(void)
{
    return atomic_load_explicit(&pool.nprocs, memory_order_acquire);
}

/* FNV-1a over rank 0's address of VCI 0: worker addresses carry a random identifier, so the
 * key tells jobs apart (and costs no agreement: every process finds the same address). */
uint64_t mf_vci_job_key(void)
{
    pthread_mutex_lock(&pool.lock);
    uint64_t job = pool.job;
    pthread_mutex_unlock(&pool.lock);
    if (job != 0)
        return job;
    unsigned char buf[4096];
    const unsigned char *addr = pool.workers[0].local_addr;
    size_t len = pool.workers[0].local_len;
    if (pool.world_rank != 0) {
        if (mf_pmi_get_blob(0, "mf-ucx-addr-0", buf, sizeof(buf), &len) != MF_OK)
            return 0;
        addr = buf;
    }
    job = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++)
        job = (job ^ addr[i]) * 1099511628211ull;
    job |= 1; /* never 0, which means "not known yet" */
    pthread_mutex_lock(&pool.lock);
    pool.job = job;
    pthread_mutex_unlock(&pool.lock);
    return job;
}

static int find_process_locked(uint64_t job, int rank)
{
    int n = atomic_load_explicit(&pool.nprocs, memory_order_relaxed);
    for (int i = 0; i < n - pool.world_size; i++) {
        if (pool.dyn[i].job == job && pool.dyn[i].rank == rank)
            return pool.world_size + i;
    }
    return -1;
}

int mf_vci_find_process(uint64_t job, int rank)
{
    if (job == mf_vci_job_key())
        return rank >= 0 && rank < pool.world_size ? rank : -1;
    pthread_mutex_lock(&pool.lock);
    int index = find_process_locked(job, rank);
    pthread_mutex_unlock(&pool.lock);
    return index;
}

mf_status_t mf_vci_add_process(uint64_t job, int rank, const void *addr, size_t len, int *index_p)
{
    if (job == mf_vci_job_key()) {
        if (rank < 0 || rank >= pool.world_size)
            return MF_ERR_INVALID;
        *index_p = rank;
        return MF_OK;
    }
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&pool.lock);
    int n = atomic_load_explicit(&pool.nprocs, memory_order_relaxed);
    int index = find_process_locked(job, rank);
    if (index < 0 && n == pool.nprocs_max) {
        mf_log(MF_LOG_ERROR, "vci",
               "cannot connect to more than %d processes outside MPI_COMM_WORLD", MF_VCI_DYN_PROCS);
        status = MF_ERR_EXHAUSTED;
    } else if (index < 0) {
        /* the address first: nobody uses the index before this call returns it */
        index = n;
        status = mf_vci_set_peer_address(pool.vcis[0], index, addr, len);
        if (status == MF_OK) {
            pool.dyn[n - pool.world_size].job = job;
            pool.dyn[n - pool.world_size].rank = rank;
            atomic_store_explicit(&pool.nprocs, n + 1, memory_order_release);
        }
    }
    pthread_mutex_unlock(&pool.lock);
    *index_p = index;
    return status;
}

void mf_vci_process_id(int index, uint64_t *job_p, int *rank_p)
{
    if (index < pool.world_size) {
        *job_p = mf_vci_job_key();
        *rank_p = index;
        return;
    }
    pthread_mutex_lock(&pool.lock);
    *job_p = pool.dyn[index - pool.world_size].job;
    *rank_p = pool.dyn[index - pool.world_size].rank;
    pthread_mutex_unlock(&pool.lock);
}

void mf_vci_local_address(mf_vci_t *vci, const void **addr_p, size_t *len_p)
{
    mf_worker_t *w = vci_worker(vci);
    *addr_p = w->local_addr;
    *len_p = w->local_len;
}

mf_status_t mf_vci_set_peer_address(mf_vci_t *vci, int peer, const void *addr, size_t len)
{
    mf_worker_t *w = vci_worker(vci);
    mf_status_t status = MF_OK;
    mf_vci_lock(vci);
    if (w->peers[peer].addr == NULL) {
        void *copy = mf_malloc(len, "peer address");
        if (copy == NULL) {
            status = MF_ERR_NO_MEMORY;
        } else {
            memcpy(copy, addr, len);
            w->peers[peer].addr = copy;
            w->peers[peer].len = len;
        }
    }
    mf_vci_unlock(vci);
    return status;
}

static inline int lock_try_word(mf_vci_lock_t *l)
{
    return atomic_load_explicit(&l->word, memory_order_relaxed) == 0 &&
           atomic_exchange_explicit(&l->word, 1, memory_order_acquire) == 0;
}

/* One turn of a spin on a plain load (no cache-line ping-pong): give the CPU away now and then,
 * since with more threads than cores the holder may be descheduled. */
static void spin_turn(unsigned *spins)
{
    if (++*spins % 256 == 0)
        sched_yield();
    else
        mf_cpu_relax();
}

/* Whether the heavy half of the biased locks' protocol is available: membarrier's private
 * expedited command, registered for this process. ThreadSanitizer cannot see the ordering the
 * system call gives, so its builds never bias. */
int mf_vci_lock_bias_init(void)
{
#if defined(__SANITIZE_THREAD__)
    return 0;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
    return 0;
#endif
#endif
    long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    return cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) != 0 &&
           syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}

/* The word, then the bias. A thread that finds the lock unclaimed may claim it (from its next
 * entry on it comes in through the bias); one that finds it biased to another thread revokes the
 * bias: after the membarrier every processor running this process has passed a full barrier, so
 * the owner either sees `revoked` at its next entry or has announced itself in `owner_in`, which
 * is then awaited. A trylock does not wait for the owner (the bias is gone all the same), so
 * every later entry through the word checks `owner_in` too. */
int mf_vci_lock_enter(mf_vci_lock_t *l, int wait, int claim, atomic_uint_fast64_t *contended)
{
    if (!lock_try_word(l)) {
        if (!wait)
            return 0;
        unsigned spins = 0;
        do
            spin_turn(&spins);
        while (!lock_try_word(l));
        if (contended != NULL)
            stat_inc(contended);
    }
    uintptr_t owner = atomic_load_explicit(&l->owner, memory_order_relaxed);
    if (MF_LIKELY(owner == mf_vci_thread_id()))
        return 1; /* its own bias, revoked (or it would have come in through it) */
    if (owner == 0) {
        if (claim)
            atomic_store_explicit(&l->owner, mf_vci_thread_id(), memory_order_relaxed);
        return 1;
    }
    if (!atomic_load_explicit(&l->revoked, memory_order_relaxed)) {
        atomic_store_explicit(&l->revoked, 1, memory_order_relaxed);
        if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0) {
            /* registered before any claim, so it cannot fail; going on would not be safe */
            mf_log(MF_LOG_ERROR, "vci", "membarrier failed: %s", strerror(errno));
            abort();
        }
    }
    /* Revoked, but the owner may still be inside through the bias: this revocation found it
     * there, or an earlier trylock's did, which gave up the word without waiting for it. */
    if (!wait && atomic_load_explicit(&l->owner_in, memory_order_acquire)) {
        atomic_store_explicit(&l->word, 0, memory_order_release);
        return 0;
    }
    unsigned spins = 0;
    while (atomic_load_explicit(&l->owner_in, memory_order_acquire))
        spin_turn(&spins);
    return 1;
}

/* Sweeps (trylocks) never claim: a lock belongs to the thread that uses it. */
int mf_vci_lock_slow(mf_vci_t *vci, int wait)
{
    return mf_vci_lock_enter(vci->head.lock, wait, wait && pool.lock_bias,
                             &vci->head.lock_contended);
}

/* First message to this peer on this worker: connect to the peer's worker of the same number (a
 * communicator maps to the same VCI, hence worker, on every process). Out of line: its address
 * buffer would make every send pay for a large stack frame. */
static __attribute__((noinline)) ucp_ep_h ep_connect_locked(mf_worker_t *w, int peer,
                                                            mf_status_t *status_p)
{
    unsigned char pmi_addr[4096];
    const void *addr = peer == pool.world_rank ? w->local_addr : w->peers[peer].addr;
    if (addr == NULL && w->index == 0 && peer < pool.world_size) {
        size_t addr_len;
        mf_status_t status =
            mf_pmi_get_blob(peer, "mf-ucx-addr-0", pmi_addr, sizeof(pmi_addr), &addr_len);
        if (status != MF_OK) {
            mf_log(MF_LOG_ERROR, "vci", "cannot find the address of rank %d: %s", peer,
                   mf_status_str(status));
            *status_p = status;
            return NULL;
        }
        addr = pmi_addr;
    }
    if (addr == NULL) {
        mf_log(MF_LOG_ERROR, "vci", "worker %d has no address for rank %d", w->index, peer);
        *status_p = MF_ERR_NOT_FOUND;
        return NULL;
    }
    ucp_ep_params_t params = {
        .field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
        .address = (const ucp_address_t *)addr,
    };
    ucs_status_t st = ucp_ep_create(w->worker, &params, &w->eps[peer]);
    if (st != UCS_OK) {
        mf_log(MF_LOG_ERROR, "vci", "cannot connect to rank %d: %s", peer, ucs_status_string(st));
        *status_p = status_from_ucs(st);
        return NULL;
    }
    w->neps++;
    return w->eps[peer];
}

/* Names the calling thread for mf_worker_t.user: the address of a thread-local byte is unique
 * among running threads, like pthread_self(), and costs one instruction instead of a call
 * through the PLT on every message. */
_Thread_local char mf_vci_thread_anchor __attribute__((tls_model("initial-exec")));

/* A worker whose owner just started an operation on it needs no global sweep either: the
 * owner progresses it when it waits, and a sweeper's trylock would only make the owner's next
 * call wait (par_comm threads then contend with sweepers). Same flag as a waiter's. */
static inline void mark_in_use(mf_worker_t *w)
{
    uintptr_t me = mf_vci_thread_id();
    if (atomic_load_explicit(&w->user, memory_order_relaxed) != me)
        atomic_store_explicit(&w->user, me, memory_order_relaxed);
}

static inline ucp_ep_h ep_get_locked(mf_vci_t *vci, int peer, mf_status_t *status_p)
{
    mf_worker_t *w = atomic_load_explicit(&vci->w, memory_order_relaxed);
    mark_in_use(w);
    if (MF_LIKELY(w->eps[peer] != NULL))
        return w->eps[peer];
    return ep_connect_locked(w, peer, status_p);
}

/* ---- asynchronous progress: state and the count of transport requests in flight ---------- */

int mf_vci_async;

/* What the helper is doing: running, or blocked with nothing to progress (IDLE: only a kick
 * or a new transport request wakes it) or with the workers armed (ARMED: their events, a kick,
 * or a timed look wake it). */
enum { ASYNC_AWAKE = 0, ASYNC_IDLE = 1, ASYNC_ARMED = 2 };

static struct {
    pthread_t thread;
    int running;
    int kick_fd; /* eventfd: kicks and the stop request */
    void (*progress)(void);
    int (*work_pending)(void);
    atomic_int sleeping; /* ASYNC_* */
    atomic_int stop;
    atomic_uint kicks;
    atomic_uint_fast64_t wakeups;
    /* Transport requests the workers hold (counted only with the helper enabled; a callback
     * that runs inside the call that issued its request makes it dip below zero briefly). */
    atomic_long inflight __attribute__((aligned(MF_CACHE_LINE)));
} async = {.kick_fd = -1};

static void async_signal(void)
{
    uint64_t one = 1;
    if (write(async.kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
        mf_log(MF_LOG_WARN, "vci", "cannot wake the progress helper: %s", strerror(errno));
}

/* A transport request stays with a worker: count it, and wake a helper that sleeps because
 * nothing needed progress. The count's increment and the load of `sleeping` pair with the
 * helper's store of ASYNC_IDLE and its load of the count (both sequentially consistent). */
static __attribute__((noinline)) void async_request_held(void)
{
    atomic_fetch_add(&async.inflight, 1);
    int idle = ASYNC_IDLE;
    if (atomic_load(&async.sleeping) == ASYNC_IDLE &&
        atomic_compare_exchange_strong(&async.sleeping, &idle, ASYNC_AWAKE))
        async_signal();
}

static inline void async_request_released(void)
{
    if (MF_UNLIKELY(mf_vci_async))
        atomic_fetch_sub_explicit(&async.inflight, 1, memory_order_relaxed);
}

static inline void op_finish(mf_vci_op_t *op, ucs_status_t st)
{
    op->status = status_from_ucs(st);
    op->transport_req = NULL;
    if (op->on_complete != NULL && op->on_complete(op))
        return; /* released: the memory may already serve another operation */
    atomic_store_explicit(&op->done, 1, memory_order_release);
}

static void send_done_cb(void *request, ucs_status_t st, void *user_data)
{
    async_request_released();
    op_finish(user_data, st);
    ucp_request_free(request);
}

/* A send issued by mf_vci_tag_send_try_locked: its op sits in the request's user area. */
static void send_bound_cb(void *request, ucs_status_t st, void *user_data)
{
    (void)user_data;
    async_request_released();
    op_finish(*(mf_vci_op_t **)request, st);
    ucp_request_free(request);
}

static inline void recv_finish(ucs_status_t st, const ucp_tag_recv_info_t *info, mf_vci_op_t *op)
{
    if (st == UCS_OK || st == UCS_ERR_MESSAGE_TRUNCATED) {
        op->sender_tag = info->sender_tag;
        op->length = info->length;
    }
    op_finish(op, st);
}

static void recv_done_cb(void *request, ucs_status_t st, const ucp_tag_recv_info_t *info,
                         void *user_data)
{
    async_request_released();
    recv_finish(st, info, user_data);
    ucp_request_free(request);
}

/* A receive whose UCX request lives in the caller's memory: UCX neither owns nor frees it. */
static void recv_placed_cb(void *request, ucs_status_t st, const ucp_tag_recv_info_t *info,
                           void *user_data)
{
    (void)request;
    async_request_released();
    recv_finish(st, info, user_data);
}

size_t mf_vci_request_headroom(void)
{
    return (pool.ucx_req_size + MF_CACHE_LINE - 1) / MF_CACHE_LINE * MF_CACHE_LINE;
}

static __attribute__((noinline)) mf_status_t op_failed(ucs_status_ptr_t ret, const char *what)
{
    ucs_status_t st = UCS_PTR_STATUS(ret);
    mf_log(MF_LOG_ERROR, "vci", "%s failed: %s", what, ucs_status_string(st));
    return status_from_ucs(st);
}

/* Common handling of a UCX non-blocking call's return value. */
static inline mf_status_t op_started(mf_vci_op_t *op, ucs_status_ptr_t ret, const char *what)
{
    if (ret == NULL) {
        /* Finished inside the call: op_finish's steps with the status known. */
        op->status = MF_OK;
        op->transport_req = NULL;
        if (op->on_complete == NULL || !op->on_complete(op))
            atomic_store_explicit(&op->done, 1, memory_order_release);
        return MF_OK;
    }
    if (MF_UNLIKELY(UCS_PTR_IS_ERR(ret)))
        return op_failed(ret, what);
    if (MF_UNLIKELY(mf_vci_async))
        async_request_held();
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
    /* Only the fields op_attr_mask names are read: setting just those (no zeroed initialiser
     * of the whole struct) keeps a dozen stores off every message. */
    ucp_request_param_t param;
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send = send_done_cb;
    param.user_data = op;
    stat_inc(&vci->sends);
    ucs_status_ptr_t ret = synchronous ? ucp_tag_send_sync_nbx(ep, buf, len, tag, &param)
                                       : ucp_tag_send_nbx(ep, buf, len, tag, &param);
    return op_started(op, ret, "tagged send");
}

MF_HOT_PATH mf_status_t mf_vci_tag_send_try_locked(mf_vci_t *vci, int peer, const void *buf,
                                                   size_t len, uint64_t tag, int waits,
                                                   void **pending_p)
{
    mf_status_t status = MF_OK;
    ucp_ep_h ep = ep_get_locked(vci, peer, &status);
    if (MF_UNLIKELY(ep == NULL))
        return status;
    /* No user data: a send UCX finishes inside the call (it then runs no callback) needs no op
     * at all, and one it keeps learns its op from mf_vci_send_bind_locked. */
    ucp_request_param_t param;
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | (waits ? UCP_OP_ATTR_FLAG_FAST_CMPL : 0);
    param.cb.send = send_bound_cb;
    stat_inc(&vci->sends);
    ucs_status_ptr_t ret = ucp_tag_send_nbx(ep, buf, len, tag, &param);
    if (MF_UNLIKELY(UCS_PTR_IS_ERR(ret)))
        return op_failed(ret, "tagged send");
    if (ret != NULL && MF_UNLIKELY(mf_vci_async))
        async_request_held();
    *pending_p = ret;
    return MF_OK;
}

void mf_vci_send_bind_locked(void *pending, mf_vci_op_t *op)
{
    op->transport_req = pending;
    *(mf_vci_op_t **)pending = op;
}

MF_HOT_PATH mf_status_t mf_vci_tag_recv_locked(mf_vci_t *vci, void *buf, size_t len, uint64_t tag,
                                               uint64_t tag_mask, void *placed, mf_vci_op_t *op)
{
    /* A message already waiting completes inside the call (pool.recv_imm): no UCX request, no
     * callback. Only without wildcards: UCX (1.22 too) leaves the receive information unset
     * when such a receive is truncated, and only an exact match knows the tag without it; the
     * status count of a truncated receive is the buffer size anyway (docs/design/pt2pt.md). */
    int imm = pool.recv_imm && tag_mask == ~(uint64_t)0;
    ucp_tag_recv_info_t info;
    ucp_request_param_t param; /* only the named fields, as in mf_vci_tag_send_locked */
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         (imm ? UCP_OP_ATTR_FIELD_RECV_INFO : UCP_OP_ATTR_FLAG_NO_IMM_CMPL);
    param.cb.recv = recv_done_cb;
    param.user_data = op;
    param.recv_info.tag_info = &info;
    if (placed != NULL) {
        /* UCX builds its request in the headroom in front of `placed`: no allocation from its
         * pool here, no ucp_request_free at completion. */
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_REQUEST;
        param.request = placed;
        param.cb.recv = recv_placed_cb;
    }
    stat_inc(&vci->recvs);
    mf_worker_t *w = atomic_load_explicit(&vci->w, memory_order_relaxed);
    mark_in_use(w);
    ucs_status_ptr_t ret = ucp_tag_recv_nbx(w->worker, buf, len, tag, tag_mask, &param);
    if (ret == NULL) {
        op->sender_tag = info.sender_tag;
        op->length = info.length;
    } else if (UCS_PTR_STATUS(ret) == UCS_ERR_MESSAGE_TRUNCATED) {
        op->sender_tag = tag;
        op->length = len;
        op_finish(op, UCS_ERR_MESSAGE_TRUNCATED);
        return MF_OK;
    }
    return op_started(op, ret, "tagged receive");
}

/* ---- streamed (generic datatype) messages ------------------------------------------------ */

/* One UCX generic datatype serves every streamed message: the buffer handed to UCX is the
 * mf_vci_packer_t, which is also the per-message state, so nothing is allocated per message. */
static pthread_mutex_t packer_dt_lock = PTHREAD_MUTEX_INITIALIZER;
static ucp_datatype_t packer_dt;
static int packer_dt_made;

static void *packer_start_pack(void *context, const void *buffer, size_t count)
{
    (void)context;
    (void)count;
    return (void *)buffer;
}

static void *packer_start_unpack(void *context, void *buffer, size_t count)
{
    (void)context;
    (void)count;
    return buffer;
}

static size_t packer_packed_size(void *state)
{
    return ((mf_vci_packer_t *)state)->length;
}

static size_t packer_pack(void *state, size_t offset, void *dest, size_t max_length)
{
    mf_vci_packer_t *pk = state;
    size_t n = offset < pk->length ? pk->length - offset : 0;
    n = n < max_length ? n : max_length;
    if (n > 0)
        pk->pack(pk->ctx, offset, dest, n);
    return n;
}

static ucs_status_t packer_unpack(void *state, size_t offset, const void *src, size_t length)
{
    mf_vci_packer_t *pk = state;
    if (offset >= pk->length)
        return UCS_ERR_MESSAGE_TRUNCATED;
    size_t n = length < pk->length - offset ? length : pk->length - offset;
    pk->unpack(pk->ctx, offset, src, n);
    return n == length ? UCS_OK : UCS_ERR_MESSAGE_TRUNCATED;
}

static void packer_finish(void *state)
{
    (void)state;
}

static const ucp_generic_dt_ops_t packer_ops = {
    .start_pack = packer_start_pack,
    .start_unpack = packer_start_unpack,
    .packed_size = packer_packed_size,
    .pack = packer_pack,
    .unpack = packer_unpack,
    .finish = packer_finish,
};

/* Created on first use and kept for the life of the process (it holds no resources of a
 * context or worker, so sessions may come and go). */
static mf_status_t packer_dt_get(ucp_datatype_t *dt_p)
{
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&packer_dt_lock);
    if (!packer_dt_made) {
        ucs_status_t st = ucp_dt_create_generic(&packer_ops, NULL, &packer_dt);
        if (st == UCS_OK) {
            packer_dt_made = 1;
        } else {
            mf_log(MF_LOG_ERROR, "vci", "cannot create the generic datatype: %s",
                   ucs_status_string(st));
            status = status_from_ucs(st);
        }
    }
    *dt_p = packer_dt;
    pthread_mutex_unlock(&packer_dt_lock);
    return status;
}

/* What UCX gets for a packer: its iovec when it has one (scatter-gather, zero copy where the
 * protocol allows), else the packer itself through the generic datatype. */
static mf_status_t packer_buffer(mf_vci_packer_t *pk, ucp_datatype_t *dt_p, void **buf_p,
                                 size_t *count_p)
{
    _Static_assert(sizeof(ucp_dt_iov_t) == 2 * sizeof(void *) &&
                       offsetof(ucp_dt_iov_t, length) == sizeof(void *),
                   "mf_vci_packer_t.iov is laid out as ucp_dt_iov_t");
    if (pk->iov != NULL) {
        *dt_p = ucp_dt_make_iov();
        *buf_p = (void *)pk->iov;
        *count_p = pk->iovcnt;
        return MF_OK;
    }
    *buf_p = pk;
    *count_p = 1;
    return packer_dt_get(dt_p);
}

mf_status_t mf_vci_tag_send_packed_locked(mf_vci_t *vci, int peer, mf_vci_packer_t *pk,
                                          uint64_t tag, int synchronous, int waits, mf_vci_op_t *op)
{
    ucp_datatype_t dt;
    void *ubuf;
    size_t ucount;
    mf_status_t status = packer_buffer(pk, &dt, &ubuf, &ucount);
    if (status != MF_OK)
        return status;
    ucp_ep_h ep = ep_get_locked(vci, peer, &status);
    if (ep == NULL)
        return status;
    ucp_request_param_t param = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FIELD_DATATYPE | (waits ? UCP_OP_ATTR_FLAG_FAST_CMPL : 0),
        .cb.send = send_done_cb,
        .user_data = op,
        .datatype = dt,
    };
    stat_inc(&vci->sends);
    ucs_status_ptr_t ret = synchronous ? ucp_tag_send_sync_nbx(ep, ubuf, ucount, tag, &param)
                                       : ucp_tag_send_nbx(ep, ubuf, ucount, tag, &param);
    return op_started(op, ret, "streamed tagged send");
}

/* The parameters of a receive through the packer (tagged or matched), counted on the VCI. */
static mf_status_t packed_recv_prepare(mf_vci_t *vci, mf_vci_packer_t *pk, mf_vci_op_t *op,
                                       ucp_request_param_t *param, void **ubuf_p, size_t *ucount_p)
{
    ucp_datatype_t dt;
    mf_status_t status = packer_buffer(pk, &dt, ubuf_p, ucount_p);
    if (status != MF_OK)
        return status;
    *param = (ucp_request_param_t){
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FLAG_NO_IMM_CMPL | UCP_OP_ATTR_FIELD_DATATYPE,
        .cb.recv = recv_done_cb,
        .user_data = op,
        .datatype = dt,
    };
    stat_inc(&vci->recvs);
    return MF_OK;
}

mf_status_t mf_vci_tag_recv_packed_locked(mf_vci_t *vci, mf_vci_packer_t *pk, uint64_t tag,
                                          uint64_t tag_mask, mf_vci_op_t *op)
{
    ucp_request_param_t param;
    void *ubuf;
    size_t ucount;
    mf_status_t status = packed_recv_prepare(vci, pk, op, &param, &ubuf, &ucount);
    if (status != MF_OK)
        return status;
    ucs_status_ptr_t ret =
        ucp_tag_recv_nbx(worker_locked(vci), ubuf, ucount, tag, tag_mask, &param);
    return op_started(op, ret, "streamed tagged receive");
}

int mf_vci_tag_probe_locked(mf_vci_t *vci, uint64_t tag, uint64_t tag_mask, uint64_t *tag_p,
                            size_t *len_p)
{
    ucp_tag_recv_info_t info;
    ucp_tag_message_h msg = ucp_tag_probe_nb(worker_locked(vci), tag, tag_mask, 0, &info);
    if (msg == NULL)
        return 0;
    *tag_p = info.sender_tag;
    *len_p = info.length;
    return 1;
}

int mf_vci_tag_mprobe_locked(mf_vci_t *vci, uint64_t tag, uint64_t tag_mask, mf_vci_msg_t *msg)
{
    ucp_tag_recv_info_t info;
    ucp_tag_message_h m = ucp_tag_probe_nb(worker_locked(vci), tag, tag_mask, 1, &info);
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
    ucs_status_ptr_t ret =
        ucp_tag_msg_recv_nbx(worker_locked(vci), buf, len, msg->transport_msg, &param);
    if (ret == NULL) {
        op->sender_tag = msg->sender_tag;
        op->length = msg->length;
    } else if (UCS_PTR_STATUS(ret) == UCS_ERR_MESSAGE_TRUNCATED) {
        /* a message that arrived whole and does not fit: the request reports it, as for
         * mf_vci_tag_recv_locked */
        op->sender_tag = msg->sender_tag;
        op->length = len;
        op_finish(op, UCS_ERR_MESSAGE_TRUNCATED);
        return MF_OK;
    }
    return op_started(op, ret, "matched receive");
}

void mf_vci_pool_discard(uint64_t tag, uint64_t tag_mask)
{
    char scratch[256];
    for (int i = 0; i < pool.nvcis; i++) {
        mf_vci_t *vci = pool.vcis[i];
        if (vci_worker(vci) == NULL)
            continue;
        mf_vci_lock(vci);
        for (int round = 0; round < 8; round++) /* what has landed, into matching */
            mf_vci_progress_locked(vci);
        mf_vci_msg_t msg;
        while (mf_vci_tag_mprobe_locked(vci, tag, tag_mask, &msg)) {
            mf_vci_op_t op;
            mf_vci_op_reset(&op, NULL);
            if (mf_vci_tag_mrecv_locked(vci, scratch, sizeof(scratch), &msg, &op) != MF_OK)
                continue;
            for (int polls = 0; !mf_vci_op_is_done(&op) && polls < 1000000; polls++)
                mf_vci_progress_locked(vci);
        }
        mf_vci_unlock(vci);
    }
}

void mf_vci_cancel_locked(mf_vci_t *vci, mf_vci_op_t *op)
{
    if (op->transport_req != NULL)
        ucp_request_cancel(worker_locked(vci), op->transport_req);
}

unsigned mf_vci_progress_locked(mf_vci_t *vci)
{
    return ucp_worker_progress(worker_locked(vci));
}

MF_HOT_PATH unsigned mf_vci_progress(mf_vci_t *vci)
{
    mf_vci_lock(vci);
    mf_worker_t *w = atomic_load_explicit(&vci->w, memory_order_relaxed);
    unsigned n = ucp_worker_progress(w->worker);
    mark_in_use(w);
    mf_vci_unlock(vci);
    return n;
}

/* Progress each active worker once, through the VCI that owns it (the first VCI mapped to it,
 * whose lock all VCIs sharing the worker use). `self`'s worker is skipped; with `blocking`
 * the locks are taken, otherwise busy workers are skipped. */
static unsigned progress_workers(const mf_vci_t *self, int blocking)
{
    unsigned n = 0;
    uint64_t now = blocking ? 0 : mf_now_ns();
    uintptr_t me = mf_vci_thread_id();
    mf_worker_t *mine = self != NULL ? vci_worker(self) : NULL;
    for (int i = 0; i < pool.nworkers_max; i++) {
        mf_vci_t *vci = pool.vcis[i];
        mf_worker_t *w = vci_worker(vci);
        if (w == NULL || w == mine)
            continue;
        uintptr_t user = blocking ? me : atomic_load_explicit(&w->user, memory_order_relaxed);
        if (user != me && user != 0) {
            atomic_store_explicit(&w->user, 0, memory_order_relaxed);
            atomic_store_explicit(&w->idle_since, now, memory_order_relaxed);
            continue;
        }
        if (user != me &&
            now - atomic_load_explicit(&w->idle_since, memory_order_relaxed) < SWEEP_IDLE_NS)
            continue;
        if (blocking)
            mf_vci_lock(vci);
        else if (!mf_vci_trylock(vci))
            continue;
        n += ucp_worker_progress(w->worker);
        mf_vci_unlock(vci);
    }
    return n;
}

unsigned mf_vci_progress_others(mf_vci_t *self)
{
    atomic_fetch_add_explicit(&self->global_sweeps, 1, memory_order_relaxed);
    return progress_workers(self, 0);
}

unsigned mf_vci_progress_all(void)
{
    return progress_workers(NULL, 1);
}

/* ---- asynchronous progress: the helper thread ---------------------------------------------- */

/* Upper-layer work pending (schedules, windows, partitioned set-ups): besides the workers'
 * events, look again this often, for work whose trylock a program thread won. */
#define ASYNC_RECHECK_NS 20000000u
/* A worker counts as left alone by the program once nobody used it for this long: longer
 * than the gaps between the polls and calls of a thread that communicates, short against a
 * computation worth overlapping. */
#define ASYNC_IDLE_NS 50000u
/* While the program keeps using a worker, the helper looks again after ASYNC_IDLE_NS, then
 * twice as long each time, up to this: a thread blocked in a long wait costs a few hundred
 * wake-ups a second, and a computation that starts after it waits at most this long. */
#define ASYNC_DEFER_MAX_NS 100000u

/* Whether the program's threads left the worker alone for ASYNC_IDLE_NS (the fields of the
 * global sweep's rule): while they use it, their own polls progress it, and the helper would
 * only take the lock from under them. */
static int worker_left_alone(mf_worker_t *w, uint64_t now)
{
    if (atomic_load_explicit(&w->user, memory_order_relaxed) != 0) {
        atomic_store_explicit(&w->user, 0, memory_order_relaxed);
        atomic_store_explicit(&w->idle_since, now, memory_order_relaxed);
        return 0;
    }
    return now - atomic_load_explicit(&w->idle_since, memory_order_relaxed) >= ASYNC_IDLE_NS;
}

/* Progress every worker the program left alone until it has no event left, then arm it and
 * add its descriptor to `fds`. Returns the events handled (nonzero: go round again); sets
 * *deferred when a worker was in use. */
static unsigned async_progress_workers(struct pollfd *fds, int *nfds, int *deferred)
{
    unsigned n = 0;
    uint64_t now = mf_now_ns();
    for (int i = 0; i < pool.nworkers_max; i++) {
        mf_vci_t *vci = pool.vcis[i];
        mf_worker_t *w = vci_worker(vci);
        if (w == NULL)
            continue;
        if (!worker_left_alone(w, now) || !mf_vci_trylock(vci)) {
            *deferred = 1;
            continue;
        }
        unsigned got = ucp_worker_progress(w->worker);
        if (got == 0) {
            ucs_status_t st = ucp_worker_arm(w->worker);
            if (st == UCS_OK)
                fds[(*nfds)++] = (struct pollfd){.fd = w->efd, .events = POLLIN};
            else if (st == UCS_ERR_BUSY)
                got = 1; /* events came in meanwhile */
            else
                *deferred = 1;
        }
        mf_vci_unlock(vci);
        n += got;
    }
    return n;
}

/* Block until a descriptor is ready, a kick comes or `timeout_ns` passes (0: no limit). */
static void async_sleep(struct pollfd *fds, int nfds, uint64_t timeout_ns)
{
    struct timespec limit = {(time_t)(timeout_ns / 1000000000u), (long)(timeout_ns % 1000000000u)};
    fds[0] = (struct pollfd){.fd = async.kick_fd, .events = POLLIN};
    if (ppoll(fds, (nfds_t)nfds, timeout_ns ? &limit : NULL, NULL) > 0 &&
        (fds[0].revents & POLLIN)) {
        uint64_t count;
        if (read(async.kick_fd, &count, sizeof(count)) < 0 && errno != EAGAIN)
            mf_log(MF_LOG_WARN, "vci", "progress helper: %s", strerror(errno));
    }
    mf_vci_count(&async.wakeups);
}

static void *async_main(void *arg)
{
    (void)arg;
    struct pollfd fds[MF_VCI_MAX + 1]; /* the kick descriptor, then armed workers */
    uint64_t defer_ns = ASYNC_IDLE_NS;
    while (!atomic_load_explicit(&async.stop, memory_order_acquire)) {
        unsigned kicks = atomic_load(&async.kicks);
        int upper = async.work_pending();
        if (!upper && atomic_load(&async.inflight) <= 0) {
            /* Nothing needs progress: sleep until a request or a kick says otherwise. */
            atomic_store(&async.sleeping, ASYNC_IDLE);
            if (atomic_load(&async.inflight) <= 0 && atomic_load(&async.kicks) == kicks &&
                !async.work_pending())
                async_sleep(fds, 1, 0);
            atomic_store(&async.sleeping, ASYNC_AWAKE);
            continue;
        }
        if (upper)
            async.progress();
        int nfds = 1, deferred = 0;
        if (async_progress_workers(fds, &nfds, &deferred) > 0)
            continue;
        uint64_t timeout = upper ? ASYNC_RECHECK_NS : 0;
        if (deferred) {
            timeout = defer_ns;
            defer_ns = defer_ns * 2 < ASYNC_DEFER_MAX_NS ? defer_ns * 2 : ASYNC_DEFER_MAX_NS;
        } else
            defer_ns = ASYNC_IDLE_NS;
        atomic_store(&async.sleeping, ASYNC_ARMED);
        if (atomic_load(&async.kicks) == kicks)
            async_sleep(fds, nfds, timeout);
        atomic_store(&async.sleeping, ASYNC_AWAKE);
    }
    return NULL;
}

void mf_vci_async_wake(void)
{
    atomic_fetch_add(&async.kicks, 1);
    if (atomic_load(&async.sleeping) != ASYNC_AWAKE &&
        atomic_exchange(&async.sleeping, ASYNC_AWAKE) != ASYNC_AWAKE)
        async_signal();
}

mf_status_t mf_vci_async_start(void (*progress)(void), int (*work_pending)(void))
{
    if (!mf_vci_async || async.running)
        return MF_OK;
    async.kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (async.kick_fd < 0) {
        mf_log(MF_LOG_ERROR, "vci", "cannot create the progress helper's eventfd: %s",
               strerror(errno));
        return MF_ERR_TRANSPORT;
    }
    async.progress = progress;
    async.work_pending = work_pending;
    atomic_store(&async.stop, 0);
    atomic_store(&async.sleeping, ASYNC_AWAKE);
    int rc = pthread_create(&async.thread, NULL, async_main, NULL);
    if (rc != 0) {
        mf_log(MF_LOG_ERROR, "vci", "cannot start the progress helper: %s", strerror(rc));
        close(async.kick_fd);
        async.kick_fd = -1;
        return MF_ERR_NO_MEMORY;
    }
    async.running = 1;
    return MF_OK;
}

void mf_vci_async_stop(void)
{
    if (!async.running)
        return;
    atomic_store_explicit(&async.stop, 1, memory_order_release);
    async_signal();
    pthread_join(async.thread, NULL);
    close(async.kick_fd);
    async.kick_fd = -1;
    async.running = 0;
}

uint64_t mf_vci_async_wakeups(void)
{
    return atomic_load_explicit(&async.wakeups, memory_order_relaxed);
}

void mf_vci_stats_get(int index, mf_vci_stats_t *stats)
{
    const mf_vci_t *vci = pool.vcis[index];
    stats->sends = atomic_load_explicit(&vci->sends, memory_order_relaxed);
    stats->recvs = atomic_load_explicit(&vci->recvs, memory_order_relaxed);
    stats->lock_acquired = atomic_load_explicit(&vci->head.lock_acquired, memory_order_relaxed);
    stats->lock_contended = atomic_load_explicit(&vci->head.lock_contended, memory_order_relaxed);
    stats->global_sweeps = atomic_load_explicit(&vci->global_sweeps, memory_order_relaxed);
    stats->request_misses = atomic_load_explicit(&vci->request_misses, memory_order_relaxed);
    stats->active = vci_worker(vci) != NULL;
}

void mf_vci_count_request_miss_locked(mf_vci_t *vci)
{
    stat_inc(&vci->request_misses);
}

void mf_vci_resources_get(mf_vci_resources_t *res)
{
    pthread_mutex_lock(&pool.lock);
    res->contexts = pool.ncontexts;
    res->workers = pool.nworkers;
    pthread_mutex_unlock(&pool.lock);
    /* Endpoint counts change under the worker's lock: read them under it. */
    res->endpoints = 0;
    for (int i = 0; i < pool.nworkers_max; i++) {
        mf_vci_t *vci = pool.vcis[i];
        mf_worker_t *w = vci_worker(vci);
        if (w == NULL)
            continue;
        mf_vci_lock(vci);
        res->endpoints += w->neps;
        mf_vci_unlock(vci);
    }
}

void mf_vci_transport_version(unsigned *major, unsigned *minor, unsigned *release)
{
    ucp_get_version(major, minor, release);
}

/* A matched receive through the packer (MPI_Mrecv of a large non-contiguous type). Completion
 * goes through the callback, which has the length and the truncation status. */
mf_status_t mf_vci_tag_mrecv_packed_locked(mf_vci_t *vci, mf_vci_packer_t *pk, mf_vci_msg_t *msg,
                                           mf_vci_op_t *op)
{
    ucp_request_param_t param;
    void *ubuf;
    size_t ucount;
    mf_status_t status = packed_recv_prepare(vci, pk, op, &param, &ubuf, &ucount);
    if (status != MF_OK)
        return status;
    ucs_status_ptr_t ret =
        ucp_tag_msg_recv_nbx(worker_locked(vci), ubuf, ucount, msg->transport_msg, &param);
    if (ret == NULL) {
        /* completed in place despite the flag: the message's own length tells truncation */
        op->sender_tag = msg->sender_tag;
        op->length = msg->length;
        op_finish(op, msg->length > pk->length ? UCS_ERR_MESSAGE_TRUNCATED : UCS_OK);
        return MF_OK;
    }
    return op_started(op, ret, "streamed matched receive");
}

mf_status_t mf_vci_flush_process(int peer)
{
    ucs_status_t st = UCS_OK;
    for (int i = 0; i < pool.nvcis; i++) {
        mf_vci_t *vci = pool.vcis[i];
        mf_worker_t *w = atomic_load_explicit(&vci->w, memory_order_acquire);
        if (w == NULL)
            continue;
        mf_vci_lock(vci);
        void *req = NULL;
        if (w->eps[peer] != NULL) {
            ucp_request_param_t param = {.op_attr_mask = 0};
            req = ucp_ep_flush_nbx(w->eps[peer], &param);
        }
        /* the lock goes between polls: other threads keep using the VCI meanwhile */
        while (UCS_PTR_IS_PTR(req) && ucp_request_check_status(req) == UCS_INPROGRESS) {
            ucp_worker_progress(w->worker);
            mf_vci_unlock(vci);
            sched_yield();
            mf_vci_lock(vci);
        }
        ucs_status_t done =
            UCS_PTR_IS_PTR(req) ? ucp_request_check_status(req) : UCS_PTR_STATUS(req);
        if (UCS_PTR_IS_PTR(req))
            ucp_request_free(req);
        mark_in_use(w);
        mf_vci_unlock(vci);
        if (st == UCS_OK)
            st = done;
    }
    return st == UCS_OK ? MF_OK : status_from_ucs(st);
}
