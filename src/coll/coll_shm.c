/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective protocols: node-aware barrier, broadcast, reduce and allreduce. The members of a
 * communicator that share a node exchange data through one shared-memory segment per node
 * (created by the node's lowest rank, the leader, at the communicator's first eligible
 * collective), and the leaders run the point-to-point algorithms of coll_blocking.c over a
 * communicator of their own. Synchronisation is one monotonically increasing counter per
 * local rank: every local rank signals the same number of times in the same order, so each
 * can compute the value another rank's counter reaches at any step. Design: docs/design/coll.md.
 */
#define _GNU_SOURCE
#include "coll.h"

#include "pmi.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define CACHE_LINE 64
/* The data area holds at least this much: two broadcast slots of half of it each. */
#define DATA_MIN ((size_t)512 * 1024)
/* A reduction slot (one per local rank plus the result). The leaders combine the vector in
 * chunks of this size, so it must be the same on every node. */
#define SLOT MF_COLL_SHM_ITEM_MAX
/* Reductions up to this size on one node: every rank combines all contributions itself. */
#define SMALL_REDUCE ((size_t)16 * 1024)
/* Small collectives on one node skip the data area: each rank owns a ring of SMALL_SLOTS
 * entries of SMALL_ENTRY bytes, a stamp then the payload, so a message up to SMALL_PAYLOAD
 * bytes travels with its flag (one cache line up to 48 bytes). The ring lets a writer run
 * SMALL_SLOTS calls ahead before it needs to see that the readers are done with an entry. */
#define SMALL_SLOTS 16
/* Crowded nodes use rings of this many entries (each ring has room for them): a call of up to
 * 16 pieces then still lets a writer run calls ahead of ranks that wait for a core. */
#define SMALL_SLOTS_CROWD 64
#define SMALL_ENTRY       1088
#define SMALL_HEAD        16 /* the stamp, padded so the payload keeps 16-byte alignment */
#define SMALL_PAYLOAD     (SMALL_ENTRY - SMALL_HEAD)
/* Pieces of the two-rank reduce and the slots they go through (node_stream). */
#define STREAM_CHUNK ((size_t)8 * 1024)
#define STREAM_SLOTS 2
/* Two rings of STREAM_SLOTS slots: node_stream uses the first, pair_exchange one per rank. */
#define STREAM_RINGS 2
/* Busy polls of a flag before the waiter starts yielding the CPU and driving progress: with a
 * core per local rank, and when the node runs more local ranks than they have cores (the rank
 * that must set the flag is then often waiting for the core this waiter spins on). */
#define SPIN_LIMIT       256
#define SPIN_LIMIT_CROWD 1
/* Bcast on a crowded node: chunks of this size in a ring over the whole data area (at most
 * CROWD_RING_MAX of them). */
#define CROWD_CHUNK    ((size_t)32 * 1024)
#define CROWD_RING_MAX 64
/* Bcast up to this size takes only the ring of units it needs (below), not a whole chunk:
 * the root then runs data_len / len calls ahead (256 at 2 KiB, not 16), so the reader that
 * shares its core runs once per many calls (2-8 KiB 0.7-0.9x the time of whole chunks). */
#define CROWD_BCAST_UNITS_MAX ((size_t)8 * 1024)
/* Rooted calls of medium blocks on crowded nodes: the data area as a ring of small units, so
 * a call takes only the units its blocks need and a writer runs many calls ahead. */
#define CROWD_UNIT      ((size_t)1024)
#define CROWD_UNITS_MAX 512
/* Calls whose byte counts each local rank keeps in the segment (mf_coll_shm_enter): more than
 * a rank can run ahead of another (the crowded small rings). */
#define STAMP_CALLS 128
/* Calls of at least this many bytes look at the others' counts once more when they leave
 * (mf_coll_shm_leave): from here a call may go over point-to-point, where a rank can finish
 * without waiting for anything that would have looked. One look costs a read of each local
 * rank's stamp, which is small against moving this much. */
#define LEAVE_LOOK_MIN ((size_t)4 * 1024)
/* mpiexec removes files starting with "manifold" that a killed job left in /dev/shm. */
#define SHM_PREFIX "manifold-coll"
#define NAME_LEN   48

typedef struct shm_flag {
    _Atomic uint64_t value;
    char pad[CACHE_LINE - sizeof(uint64_t)];
} shm_flag_t;

typedef struct shm_stamp {
    _Atomic uint64_t call; /* the call's number (from 1), written after `len` */
    _Atomic uint64_t len;  /* its byte count, or MF_COLL_SHM_ANY_LEN */
} shm_stamp_t;

typedef struct mf_coll_shm {
    int enabled;
    int k, lrank;       /* members of the communicator on this node; my index among them */
    int nnodes;         /* nodes the communicator spans */
    int *node_of;       /* node index (= rank in `leaders`) of each rank of the communicator */
    int *lrank_of;      /* index of each rank among the members of its node */
    mf_comm_t *leaders; /* one rank per node; NULL when nnodes == 1 or not a leader */
    void *map;          /* the segment, NULL when k == 1 */
    size_t map_len;
    shm_flag_t *flags; /* k counters */
    char *data;
    size_t data_len, half, slot;      /* data area, broadcast slot, reduction slot */
    uint64_t seq;                     /* this rank's signals so far (all local ranks in lockstep) */
    uint64_t all_seen;                /* every local counter was seen at least this high */
    uint64_t free_at[2];              /* the data half h is free once every counter reached this */
    int next_half;                    /* where the next broadcast chunk or small reduction goes */
    shm_flag_t *done;                 /* k counters: small calls each rank has finished reading */
    char *small;                      /* k rings of SMALL_SLOTS_CROWD entries */
    unsigned slots;                   /* entries of each ring in use (a power of two) */
    uint64_t small_n;                 /* small calls so far (the same on every local rank) */
    uint64_t small_free;              /* every rank's `done` was seen at least this high */
    char *ring;                       /* STREAM_SLOTS slots for node_stream */
    uint64_t ring_free[STREAM_SLOTS]; /* slot i is free once every counter reached this */
    unsigned ring_next;               /* the slot of the next piece */
    int cma;                          /* every local rank can read the others' memory */
    pid_t *pid_of;                    /* process id of each local rank */
    int roomy; /* medium gathers and scatters through the segment (a core for every local rank) */
    int pair_p2p; /* two ranks leave their medium blocks to point-to-point (not forced `on`) */
    int crowded;  /* more local ranks than cores they may run on (agreed by the node) */
    /* Two ranks: the line of the cross-core probe (mf_coll_shm_pair_whole), whether both
     * ranks time it (agreed at set-up, so a later change of the parameter on one rank cannot
     * leave the other waiting), the values written on it so far, point-to-point calls and
     * bytes since the last probe, and its verdict. */
    shm_flag_t *probe;
    int pair_probe;
    /* Byte counts of the blocking collectives (mf_coll_shm_enter): each local rank's last
     * STAMP_CALLS calls, the segment's flag that some rank found two that differ, and this
     * rank's view of it: the calls so far, the current one's count, and what it found. */
    shm_stamp_t *stamps;
    shm_flag_t *broken;
    uint64_t calls, call_len;
    int mismatch;
    int in_call; /* between mf_coll_shm_enter and mf_coll_shm_leave */
    int noted;   /* its context id is on gave_up's list */
    uint64_t probe_seq;
    unsigned pair_calls;
    size_t pair_bytes;
    int pair_whole;
    int spin_limit; /* busy polls of a wait before it yields */
    /* crowd_bcast's ring of chunks over the whole data area: chunk i is free once every
     * counter reached crowd_free[i]; valid while free_at[] still holds crowd_mark[] (no
     * other call used the halves since) */
    uint64_t crowd_free[CROWD_RING_MAX];
    uint64_t crowd_mark[2];
    unsigned crowd_next;
    /* crowd_reduce's ring: slot i of this rank's part of the data area is free once local rank
     * red_reader[i] (-1: every rank) reached red_free[i]; valid while free_at[] holds
     * red_mark[] */
    uint64_t red_free[CROWD_RING_MAX];
    int red_reader[CROWD_RING_MAX];
    uint64_t red_mark[2];
    unsigned red_next;
    /* the ring of CROWD_UNIT units over the data area (rooted calls of medium blocks, Bcast
     * up to CROWD_BCAST_UNITS_MAX): unit i is free once every counter reached unit_free[i]; valid
     * while free_at[] holds unit_mark[] */
    uint64_t unit_free[CROWD_UNITS_MAX];
    uint64_t unit_mark[2];
    unsigned unit_next;
} mf_coll_shm_t;

/* Communicators where the shared-memory path is off (or being set up). */
static mf_coll_shm_t shm_disabled;
static atomic_uint shm_name_seq;

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

static size_t round_down(size_t v, size_t to)
{
    return v / to * to;
}

static void segment_geometry(mf_coll_shm_t *sh)
{
    size_t k = (size_t)sh->k, data = DATA_MIN;
    if (data < (k + 1) * SLOT)
        data = (k + 1) * SLOT;
    sh->data_len = data;
    sh->half = round_down(data / 2, CACHE_LINE);
    sh->slot = SLOT;
    /* the probe's line last, so that nothing before it moves */
    sh->map_len = sizeof(shm_flag_t) * 2 * k + k * SMALL_SLOTS_CROWD * SMALL_ENTRY +
                  STREAM_RINGS * STREAM_SLOTS * STREAM_CHUNK + data +
                  k * STAMP_CALLS * sizeof(shm_stamp_t) + sizeof(shm_flag_t) + sizeof(shm_flag_t);
}

/* ---- signalling -------------------------------------------------------------------------- */

static void shm_signal(mf_coll_shm_t *sh)
{
    sh->seq++;
    atomic_store_explicit(&sh->flags[sh->lrank].value, sh->seq, memory_order_release);
}

static int stamps_differ(mf_coll_shm_t *sh);

/* Wait until *p >= target. A waiter spins briefly, then keeps the progress engine going (its
 * own sends and other collectives must move on) and yields the CPU, as the node may run more
 * ranks than cores. `spins` and `polls` carry over between the waits of one step. A waiter
 * that must yield also looks whether the local ranks passed different byte counts to this
 * call (stamps_differ): then the wait may never end, and it, and every later wait of the
 * call, returns at once (the call fails, mf_coll_shm_leave). */
static uint64_t wait_ge(mf_comm_t *comm, _Atomic uint64_t *p, uint64_t target, int *spins,
                        int *polls)
{
    uint64_t v;
    mf_coll_shm_t *sh = comm->shm;
    int limit = sh->spin_limit;
    while ((v = atomic_load_explicit(p, memory_order_acquire)) < target) {
        if (++*spins < limit) {
            cpu_relax();
            continue;
        }
        if (sh->mismatch || stamps_differ(sh))
            break;
        mf_progress_poke(comm->vci, polls);
        sched_yield();
    }
    return v;
}

/* Wait until local ranks [first, last) have signalled `target` times. */
static void shm_wait(mf_coll_shm_t *sh, mf_comm_t *comm, int first, int last, uint64_t target)
{
    int polls = 0, spins = 0;
    for (int i = first; i < last; i++)
        wait_ge(comm, &sh->flags[i].value, target, &spins, &polls);
}

/* Wait until every local rank has signalled `target` times. The counters are read only when
 * the lowest one seen so far is too low: a writer that runs calls ahead of the readers (the
 * crowded rings) then touches their lines once per many calls, not at every call. */
static void shm_wait_all(mf_coll_shm_t *sh, mf_comm_t *comm, uint64_t target)
{
    if (target <= sh->all_seen)
        return;
    int polls = 0, spins = 0;
    uint64_t low = UINT64_MAX;
    for (int i = 0; i < sh->k; i++) {
        uint64_t v = wait_ge(comm, &sh->flags[i].value, target, &spins, &polls);
        low = v < low ? v : low;
    }
    sh->all_seen = low;
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

/* ---- byte counts that differ between ranks (an erroneous program) ---------------------- */

/* Local rank i passed `len` bytes to the call this rank passed sh->call_len to: the call
 * fails here, and every rank's next wait that does not end at once, or next call, fails too. */
static int counts_differ(mf_coll_shm_t *sh, int i, uint64_t len)
{
    if (len == sh->call_len || len == MF_COLL_SHM_ANY_LEN || sh->call_len == MF_COLL_SHM_ANY_LEN)
        return 0;
    if (!sh->mismatch)
        mf_log(MF_LOG_INFO, "coll",
               "collective byte counts differ: %" PRIu64 " here, %" PRIu64
               " on the node's local rank %d",
               sh->call_len, len, i);
    sh->mismatch = 1;
    atomic_store_explicit(&sh->broken->value, 1, memory_order_relaxed);
    return 1;
}

/* Whether another local rank entered this rank's current call with another byte count, or
 * some rank already found such a call (the segment's `broken` flag). */
static int stamps_differ(mf_coll_shm_t *sh)
{
    if (sh->stamps == NULL || sh->calls == 0)
        return 0;
    if (atomic_load_explicit(&sh->broken->value, memory_order_relaxed) != 0) {
        sh->mismatch = 1;
        return 1;
    }
    for (int i = 0; i < sh->k; i++) {
        const shm_stamp_t *st = &sh->stamps[(size_t)i * STAMP_CALLS + sh->calls % STAMP_CALLS];
        if (atomic_load_explicit(&st->call, memory_order_acquire) != sh->calls)
            continue; /* not there yet, or long past it */
        if (counts_differ(sh, i, atomic_load_explicit(&st->len, memory_order_relaxed)))
            return 1;
    }
    return 0;
}

/* Context ids of communicators whose blocking collectives gave up on differing counts: their
 * peers' messages for the steps skipped here wait unreceived, and a sender's rendezvous with
 * them, until mf_coll_shm_discard_gave_up drops them at finalize. */
static struct {
    pthread_mutex_t lock;
    unsigned *ctx;
    int n;
} gave_up = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void note_gave_up(mf_comm_t *comm)
{
    pthread_mutex_lock(&gave_up.lock);
    unsigned *grown = realloc(gave_up.ctx, sizeof(*grown) * (size_t)(gave_up.n + 1));
    if (grown != NULL) { /* without memory the messages stay: a leak, no harm */
        gave_up.ctx = grown;
        gave_up.ctx[gave_up.n++] = mf_comm_ctx_internal(comm);
    }
    pthread_mutex_unlock(&gave_up.lock);
}

void mf_coll_shm_discard_gave_up(void)
{
    pthread_mutex_lock(&gave_up.lock);
    for (int i = 0; i < gave_up.n; i++)
        mf_coll_discard_blocking(gave_up.ctx[i]);
    free(gave_up.ctx);
    gave_up.ctx = NULL;
    gave_up.n = 0;
    pthread_mutex_unlock(&gave_up.lock);
}

mf_status_t mf_coll_shm_enter(mf_comm_t *comm, uint64_t len)
{
    mf_coll_shm_t *sh = comm->shm;
    if (MF_UNLIKELY(sh == NULL)) {
        if (!mf_coll_shm_usable(comm, MPI_OP_NULL))
            return MF_OK;
        sh = comm->shm;
    }
    if (sh->stamps == NULL) /* no segment (off, or one rank on the node) */
        return MF_OK;
    if (MF_UNLIKELY(sh->mismatch ||
                    atomic_load_explicit(&sh->broken->value, memory_order_relaxed) != 0)) {
        sh->mismatch = 1;
        mf_log(MF_LOG_INFO, "coll",
               "an earlier collective call on this communicator had byte counts that differ "
               "between processes");
        return MF_ERR_TRUNCATE;
    }
    sh->calls++;
    sh->call_len = len;
    shm_stamp_t *st = &sh->stamps[(size_t)sh->lrank * STAMP_CALLS + sh->calls % STAMP_CALLS];
    atomic_store_explicit(&st->len, len, memory_order_relaxed);
    atomic_store_explicit(&st->call, sh->calls, memory_order_release);
    sh->in_call = 1;
    return MF_OK;
}

mf_status_t mf_coll_shm_leave(mf_comm_t *comm, mf_status_t status)
{
    mf_coll_shm_t *sh = comm->shm;
    if (sh == NULL || sh->stamps == NULL) /* shm_disabled is shared: never written */
        return status;
    sh->in_call = 0;
    if (sh->call_len >= LEAVE_LOOK_MIN && sh->call_len != MF_COLL_SHM_ANY_LEN && !sh->mismatch)
        stamps_differ(sh);
    if (!sh->mismatch)
        return status;
    if (!sh->noted) {
        sh->noted = 1;
        note_gave_up(comm);
    }
    return MF_ERR_TRUNCATE;
}

int mf_coll_shm_call_broken(mf_comm_t *comm)
{
    mf_coll_shm_t *sh = comm->shm;
    return sh != NULL && sh->in_call && (sh->mismatch || stamps_differ(sh));
}

/* ---- set-up and teardown ----------------------------------------------------------------- */

typedef struct shm_entry {
    int leader; /* rank of the lowest member of this rank's node */
    pid_t pid;
    uint64_t probe; /* address of cma_probe in this process */
    char name[NAME_LEN];
    uint8_t cpus[128]; /* the cores this process may run on (first 1024, one bit each) */
} shm_entry_t;

/* What a peer reads at set-up to learn whether the kernel lets it copy from this process. */
static const uint64_t cma_probe = 0x6d616e69666f6c64u;

static void shm_destroy(mf_coll_shm_t *sh)
{
    if (sh->map != NULL && munmap(sh->map, sh->map_len) != 0)
        mf_log(MF_LOG_WARN, "coll", "munmap of a shared-memory collective segment failed");
    if (sh->leaders != NULL)
        mf_comm_free(sh->leaders);
    free(sh->node_of);
    free(sh->lrank_of);
    free(sh->pid_of);
    free(sh);
}

/* The lowest rank of `comm` on this node and how many of its ranks are here, from the node's
 * rank list; without one (no process mapping) every process counts as a node of its own. */
static mf_status_t local_members(mf_comm_t *comm, int *leader_p, int *count_p)
{
    int n = 0, *list = mf_malloc(sizeof(int) * (size_t)mf_global.world_size, "node ranks");
    if (list == NULL)
        return MF_ERR_NO_MEMORY;
    if (mf_pmi_get_node_rank_list(list, mf_global.world_size, &n) != MF_OK || n < 1) {
        list[0] = mf_comm_world_rank(comm, comm->rank);
        n = 1;
    }
    int leader = -1, count = 0;
    for (int i = 0; i < comm->size; i++) {
        int w = mf_comm_world_rank(comm, i);
        for (int j = 0; j < n; j++) {
            if (list[j] == w) {
                if (leader < 0)
                    leader = i;
                count++;
                break;
            }
        }
    }
    free(list);
    *leader_p = leader;
    *count_p = count;
    return MF_OK;
}

static void *segment_create(mf_coll_shm_t *sh, mf_comm_t *comm, char *name)
{
    snprintf(name, NAME_LEN, SHM_PREFIX "-%ld-%u-%u", (long)getpid(), comm->context_id,
             atomic_fetch_add(&shm_name_seq, 1));
    int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) {
        /* The name carries this process's id, and a live job unlinks its segment as soon as
         * every member has attached: this one was left by a job killed while setting up
         * (SIGKILL from srun) whose creator had the same id. */
        mf_log(MF_LOG_DEBUG, "coll", "removing %s, left by a killed job", name);
        shm_unlink(name);
        fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
    }
    if (fd < 0) {
        mf_log(MF_LOG_WARN, "coll", "cannot create shared-memory segment %s: %s", name,
               strerror(errno));
        return NULL;
    }
    /* Not reserved: most communicators never touch the data area, and one segment per
     * communicator holding its pages would add up. The check for room still keeps a full
     * /dev/shm from faulting here; the communicator then runs point-to-point algorithms. */
    void *map = MAP_FAILED;
    int err = mf_shm_size(fd, sh->map_len, 0);
    if (err == 0)
        map = mmap(NULL, sh->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
        static atomic_int warned;
        if (err == ENOSPC && !atomic_exchange(&warned, 1))
            mf_log(MF_LOG_WARN, "coll",
                   "/dev/shm has less than the %zu bytes free that a shared-memory segment for "
                   "collectives takes: communicators without one use point-to-point algorithms "
                   "(a larger /dev/shm avoids it, e.g. docker run --shm-size=1g)",
                   sh->map_len);
        else if (err != ENOSPC)
            mf_log(MF_LOG_WARN, "coll",
                   "cannot size or map shared-memory segment %s (%zu bytes): %s", name, sh->map_len,
                   strerror(err != 0 ? err : errno));
        shm_unlink(name);
        map = NULL;
    }
    close(fd);
    return map;
}

static void *segment_attach(mf_coll_shm_t *sh, const char *name)
{
    int fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        mf_log(MF_LOG_WARN, "coll", "cannot open shared-memory segment %s: %s", name,
               strerror(errno));
        return NULL;
    }
    void *map = mmap(NULL, sh->map_len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        mf_log(MF_LOG_WARN, "coll", "cannot map shared-memory segment %s: %s", name,
               strerror(errno));
        return NULL;
    }
    return map;
}

/* Node layout of every rank from the leaders the ranks reported. Returns 1 when some node has
 * at least two members (the shared-memory path is worth it). */
static int layout_from(mf_coll_shm_t *sh, const shm_entry_t *all, int size, int rank)
{
    int nnodes = 0, crowded = 0;
    for (int i = 0; i < size; i++) {
        int l = all[i].leader;
        if (l == i) {
            sh->node_of[i] = nnodes++;
            sh->lrank_of[i] = 0;
        } else {
            sh->node_of[i] = sh->node_of[l];
            sh->lrank_of[i] = 0;
            for (int j = l; j < i; j++)
                sh->lrank_of[i] += all[j].leader == l;
            crowded = 1;
        }
    }
    sh->nnodes = nnodes;
    sh->lrank = sh->lrank_of[rank];
    return crowded;
}

/* The cores this process may run on, one bit each (all online cores when the affinity mask
 * cannot be read). */
static void my_cpus(uint8_t *bits, size_t nbytes)
{
    cpu_set_t set;
    memset(bits, 0, nbytes);
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        for (long c = 0; c < n && c < (long)nbytes * 8; c++)
            CPU_SET((int)c, &set);
    }
    for (size_t c = 0; c < nbytes * 8 && c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set))
            bits[c / 8] |= (uint8_t)(1u << (c % 8));
}

/* Whether the node of `leader` runs more of the communicator's ranks than the cores they may
 * use together: computed from what every member reported, so all of them agree. Ranks bound
 * one per core are not crowded; four ranks on two cores are, bound or not. */
static int node_crowded(const shm_entry_t *all, int size, int leader, int k)
{
    uint8_t any[sizeof(all[0].cpus)] = {0};
    int cores = 0;
    for (int i = 0; i < size; i++)
        if (all[i].leader == leader)
            for (size_t b = 0; b < sizeof(any); b++)
                any[b] |= all[i].cpus[b];
    for (size_t b = 0; b < sizeof(any); b++)
        cores += __builtin_popcount(any[b]);
    return k > cores;
}

/* Copies len bytes at address `src` of process `pid` to dst; 0 or an errno value. */
static int cma_read(pid_t pid, void *dst, uint64_t src, size_t len)
{
    char *d = dst;
    while (len > 0) {
        struct iovec local = {.iov_base = d, .iov_len = len};
        struct iovec remote = {.iov_base = (void *)(uintptr_t)src, .iov_len = len};
        ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got < 0 ? errno : EFAULT;
        d += got;
        src += (uint64_t)got;
        len -= (size_t)got;
    }
    return 0;
}

/* Copies len bytes from src to address `dst` of process `pid`; 0 or an errno value. */
static int cma_write(pid_t pid, uint64_t dst, const void *src, size_t len)
{
    const char *s = src;
    while (len > 0) {
        struct iovec local = {.iov_base = (void *)(uintptr_t)s, .iov_len = len};
        struct iovec remote = {.iov_base = (void *)(uintptr_t)dst, .iov_len = len};
        ssize_t put = process_vm_writev(pid, &local, 1, &remote, 1, 0);
        if (put < 0 && errno == EINTR)
            continue;
        if (put <= 0)
            return put < 0 ? errno : EFAULT;
        s += put;
        dst += (uint64_t)put;
        len -= (size_t)put;
    }
    return 0;
}

/* Whether this process can read every other member of its node (ptrace permission, a kernel
 * without CMA, a container's seccomp filter all say no), found once per communicator. */
static int cma_works(mf_coll_shm_t *sh, const shm_entry_t *all, int size, int rank)
{
    sh->pid_of = mf_malloc(sizeof(pid_t) * (size_t)sh->k, "node pids");
    if (sh->pid_of == NULL)
        return 0;
    int works = 1;
    for (int i = 0; i < size; i++) {
        if (sh->node_of[i] != sh->node_of[rank])
            continue;
        sh->pid_of[sh->lrank_of[i]] = all[i].pid;
        uint64_t v = 0;
        if (i != rank && (cma_read(all[i].pid, &v, all[i].probe, sizeof(v)) != 0 || v != cma_probe))
            works = 0;
    }
    return works;
}

static mf_status_t shm_setup(mf_comm_t *comm, mf_coll_shm_t **sh_p)
{
    int size = comm->size, leader = -1, count = 0, ok = 1;
    mf_coll_shm_t *sh = calloc(1, sizeof(*sh));
    shm_entry_t *all = mf_malloc(sizeof(shm_entry_t) * (size_t)size, "node layout");
    mf_status_t status = MF_ERR_NO_MEMORY;
    if (sh == NULL || all == NULL)
        goto err_free;
    sh->node_of = mf_malloc(sizeof(int) * (size_t)size, "node layout");
    sh->lrank_of = mf_malloc(sizeof(int) * (size_t)size, "node layout");
    if (sh->node_of == NULL || sh->lrank_of == NULL)
        goto err_free;
    status = local_members(comm, &leader, &count);
    if (status != MF_OK)
        goto err_free;
    shm_entry_t mine = {
        .leader = leader, .pid = getpid(), .probe = (uint64_t)(uintptr_t)&cma_probe};
    my_cpus(mine.cpus, sizeof(mine.cpus));
    sh->k = count;
    segment_geometry(sh);
    if (leader == comm->rank && count > 1) {
        sh->map = segment_create(sh, comm, mine.name);
        ok = sh->map != NULL;
        if (!ok)
            mine.name[0] = '\0';
    }
    status = mf_coll_allgather(comm, &mine, sizeof(mine), all);
    if (status != MF_OK)
        goto err_unlink;
    if (!layout_from(sh, all, size, comm->rank)) {
        free(all);
        shm_destroy(sh);
        *sh_p = &shm_disabled;
        return MF_OK;
    }
    /* The launcher reports one mapping to everyone; a mismatch would mean segments of
     * different sizes, so it switches the path off instead. */
    int members = 0;
    for (int i = 0; i < size; i++)
        members += all[i].leader == leader;
    if (members != count)
        ok = 0;
    else if (leader != comm->rank && count > 1 && all[leader].name[0] != '\0')
        sh->map = segment_attach(sh, all[leader].name);
    if (leader != comm->rank && count > 1 && sh->map == NULL)
        ok = 0;
    /* Bit 0: the segment is mapped; bit 1: cross-process copies work (count on every node
     * with two or more members; anyone failing turns them off everywhere). */
    uint64_t word = ok ? 1 : 0;
    if (ok && (count < 2 || cma_works(sh, all, size, comm->rank)))
        word |= 2;
    /* bit 2: this rank would time the two-rank probe, which needs both ranks */
    if (MF_PARAM_LIVE(coll_pair_whole) == 0)
        word |= 4;
    /* Everyone has mapped the segment (or failed to) once this agreement is done, so the name
     * can go: a job that crashes from now on leaves nothing behind in /dev/shm. */
    status = mf_coll_allreduce_band(comm, &word, 1);
    if (leader == comm->rank && sh->map != NULL)
        shm_unlink(mine.name);
    if (status != MF_OK)
        goto err_free;
    if ((word & 1) == 0) {
        free(all);
        shm_destroy(sh);
        *sh_p = &shm_disabled;
        return MF_OK;
    }
    if (sh->nnodes > 1) {
        status = mf_comm_split(comm, leader == comm->rank ? 0 : MPI_UNDEFINED, 0, &sh->leaders);
        if (status != MF_OK)
            goto err_free;
        if (sh->leaders != NULL) {
            sh->leaders->shm = &shm_disabled; /* one rank per node: nothing to share */
            mf_comm_set_private(sh->leaders); /* freed inside comm's destruction */
        }
    }
    if (sh->map != NULL) {
        size_t k = (size_t)sh->k;
        sh->flags = sh->map;
        sh->done = sh->flags + k;
        sh->small = (char *)(sh->done + k);
        sh->ring = sh->small + k * SMALL_SLOTS_CROWD * SMALL_ENTRY;
        sh->data = sh->ring + STREAM_RINGS * STREAM_SLOTS * STREAM_CHUNK;
        sh->stamps = (shm_stamp_t *)(void *)(sh->data + sh->data_len);
        sh->broken = (shm_flag_t *)(void *)(sh->stamps + k * STAMP_CALLS);
        sh->probe = sh->broken + 1;
    }
    sh->enabled = 1;
    /* the same on every rank of a node, so all of them pick the same protocol */
    sh->crowded = MF_PARAM_LIVE(coll_shm_crowded) == 0 ? node_crowded(all, size, leader, sh->k)
                                                       : MF_PARAM_LIVE(coll_shm_crowded) == 2;
    sh->roomy = MF_PARAM_LIVE(coll_shm_medium) == 2 ||
                (MF_PARAM_LIVE(coll_shm_medium) == 0 && !sh->crowded);
    sh->spin_limit = sh->crowded ? SPIN_LIMIT_CROWD : SPIN_LIMIT;
    sh->slots = sh->crowded ? SMALL_SLOTS_CROWD : SMALL_SLOTS;
    if (sh->k > 1)
        mf_log(MF_LOG_DEBUG, "coll", "%d local ranks, %s: waits %s", sh->k,
               sh->crowded ? "crowded" : "a core each",
               sh->crowded ? "yield at once" : "spin first");
    sh->pair_p2p = MF_PARAM_LIVE(coll_shm_medium) != 2;
    sh->cma = (word & 2) != 0 && sh->pid_of != NULL;
    sh->pair_probe = (word & 4) != 0 && sh->probe != NULL && !sh->crowded;
    if (sh->k > 1)
        mf_log(MF_LOG_DEBUG, "coll", "cross-process copies for large collectives: %s",
               sh->cma ? "on" : "off (a test read failed on some rank)");
    free(all);
    *sh_p = sh;
    return MF_OK;
err_unlink:
    if (leader == comm->rank && sh->map != NULL)
        shm_unlink(mine.name);
err_free:
    free(all);
    if (sh != NULL)
        shm_destroy(sh);
    return status;
}

int mf_coll_shm_usable(mf_comm_t *comm, MPI_Op op)
{
    if (!MF_PARAM_LIVE(coll_shm) || comm->size < 2 || mf_comm_is_inter(comm))
        return 0;
    /* Rank order across nodes and inside them is not kept: non-commutative operations take
     * the point-to-point algorithms, which combine in rank order. */
    if (op != MPI_OP_NULL && !mf_op_commutative(op))
        return 0;
    if (comm->shm == NULL) {
        mf_coll_shm_t *sh = &shm_disabled;
        comm->shm = &shm_disabled; /* the set-up's own collectives take the plain path */
        if (shm_setup(comm, &sh) != MF_OK)
            mf_log(MF_LOG_WARN, "coll", "shared-memory collectives are off on a communicator");
        comm->shm = sh;
    }
    return ((mf_coll_shm_t *)comm->shm)->enabled;
}

int mf_coll_shm_free(mf_comm_t *comm)
{
    mf_coll_shm_t *sh = comm->shm;
    int broken = 0;
    comm->shm = NULL;
    if (sh != NULL && sh != &shm_disabled) {
        broken =
            sh->mismatch || (sh->broken != NULL &&
                             atomic_load_explicit(&sh->broken->value, memory_order_relaxed) != 0);
        shm_destroy(sh);
    }
    return broken;
}

/* ---- small calls on one node ------------------------------------------------------------ */

static int small_call(const mf_coll_shm_t *sh, size_t len)
{
    return sh->nnodes == 1 && len <= SMALL_PAYLOAD;
}

static char *small_entry(const mf_coll_shm_t *sh, int lrank, uint64_t n)
{
    return sh->small +
           ((size_t)lrank * SMALL_SLOTS_CROWD + (size_t)(n & (sh->slots - 1))) * SMALL_ENTRY;
}

static _Atomic uint64_t *small_stamp(char *entry)
{
    return (_Atomic uint64_t *)(void *)entry;
}

/* The byte count the writer passed to the collective the entry belongs to (its call_len): a
 * reader compares it with its own at no cost, on the line it reads anyway. */
static _Atomic uint64_t *small_len(char *entry)
{
    return (_Atomic uint64_t *)(void *)(entry + sizeof(uint64_t));
}

/* Wait for local rank i's entry `entry` of small call n; 1 when the two ranks passed different
 * byte counts to the collective (its data must not be used). */
static int small_wait(mf_coll_shm_t *sh, mf_comm_t *comm, char *entry, int i, uint64_t n,
                      int *spins, int *polls)
{
    wait_ge(comm, small_stamp(entry), n + 1, spins, polls);
    return sh->mismatch ||
           counts_differ(sh, i, atomic_load_explicit(small_len(entry), memory_order_relaxed));
}

/* Wait for local rank i's entry of small call n and return it. In a series of calls the
 * writer is usually ahead, so the next call's entry is fetched early: the reader's miss on it
 * overlaps this call's work (Gather 8 B on two ranks: 0.097 -> 0.082 us). */
static char *small_ready(mf_coll_shm_t *sh, mf_comm_t *comm, int i, uint64_t n, int *spins,
                         int *polls)
{
    char *entry = small_entry(sh, i, n);
    __builtin_prefetch(small_entry(sh, i, n + 1));
    small_wait(sh, comm, entry, i, n, spins, polls);
    return entry;
}

/* Before writing small call n's entry: every rank must have finished call n - SMALL_SLOTS,
 * the last to use it. The counters are read only when the cached minimum is too low, so a
 * writer that stays less than a ring ahead touches no other rank's line. A writer that caught
 * up with the ring waits until half of it is free (the others have finished call n -
 * SMALL_SLOTS / 2, which needs nothing from this rank's later calls): claiming one entry per
 * call would pull the readers' `done` lines over at every call of a series. */
static void small_claim(mf_coll_shm_t *sh, mf_comm_t *comm, uint64_t n)
{
    if (n < sh->slots || sh->small_free >= n + 1 - sh->slots)
        return;
    int spins = 0, polls = 0;
    uint64_t low = UINT64_MAX;
    for (int i = 0; i < sh->k; i++) {
        uint64_t v = wait_ge(comm, &sh->done[i].value, n + 1 - sh->slots / 2, &spins, &polls);
        low = v < low ? v : low;
    }
    sh->small_free = low;
}

/* This rank's entry of small call n is written: readers may take it. */
static void small_done_writing(const mf_coll_shm_t *sh, char *entry, uint64_t n)
{
    atomic_store_explicit(small_len(entry), sh->call_len, memory_order_relaxed);
    atomic_store_explicit(small_stamp(entry), n + 1, memory_order_release);
}

static void small_publish(mf_coll_shm_t *sh, mf_comm_t *comm, const void *buf, size_t len,
                          uint64_t n)
{
    char *entry = small_entry(sh, sh->lrank, n);
    small_claim(sh, comm, n);
    memcpy(entry + SMALL_HEAD, buf, len);
    small_done_writing(sh, entry, n);
}

static void small_finish(mf_coll_shm_t *sh, uint64_t n)
{
    atomic_store_explicit(&sh->done[sh->lrank].value, n + 1, memory_order_release);
}

static void small_bcast(mf_coll_shm_t *sh, mf_comm_t *comm, void *buf, size_t len, int root)
{
    uint64_t n = sh->small_n++;
    if (comm->rank == root) {
        small_publish(sh, comm, buf, len, n);
    } else {
        int spins = 0, polls = 0;
        char *entry = small_ready(sh, comm, sh->lrank_of[root], n, &spins, &polls);
        memcpy(buf, entry + SMALL_HEAD, len);
    }
    small_finish(sh, n);
}

/* Ranks sharing cores (crowded): a call up to MANIFOLD_COLL_SHM_CROWD_BYTES (per rank) runs as
 * a series of small calls, one entry-sized piece each. The ring (64 entries there) lets a
 * writer run calls ahead, where the data area's halves (two) or point-to-point make every call
 * wait for ranks that are off the core: 4 ranks on 2 cores, Bcast 2 KiB took 12 us in the
 * halves against 1.5 for two calls of 1 KiB. */
static int crowd_call(const mf_coll_shm_t *sh, size_t len)
{
    return sh->crowded && sh->nnodes == 1 && len > SMALL_PAYLOAD &&
           len <= (size_t)MF_PARAM_LIVE(coll_shm_crowd_bytes);
}

static size_t piece_len(size_t len, size_t off, size_t piece)
{
    return len - off < piece ? len - off : piece;
}

/* ---- single-copy calls on one node (cross-process memory access) ----------------------- */

/* A large call on one node where every rank can read the others' memory: the owners of the
 * data publish its address through their small-call entry, the readers copy straight from
 * there with process_vm_readv (one copy instead of two through the segment), and an owner
 * returns once every reader's `done` says it has finished. */
static int cma_from(const mf_coll_shm_t *sh, size_t len, int min)
{
    return sh->cma && sh->nnodes == 1 && min > 0 && len >= (size_t)min;
}

static int cma_call(const mf_coll_shm_t *sh, size_t len)
{
    return cma_from(sh, len, MF_PARAM_LIVE(coll_cma_bytes));
}

static void cma_publish(mf_coll_shm_t *sh, mf_comm_t *comm, const void *addr, uint64_t n)
{
    uint64_t a = (uint64_t)(uintptr_t)addr;
    small_publish(sh, comm, &a, sizeof(a), n);
}

/* Copies len bytes of local rank i's published buffer, from byte `off`, to dst. */
static mf_status_t cma_fetch(mf_coll_shm_t *sh, mf_comm_t *comm, int i, uint64_t n, size_t off,
                             void *dst, size_t len, int *spins, int *polls)
{
    char *entry = small_entry(sh, i, n);
    uint64_t a;
    if (small_wait(sh, comm, entry, i, n, spins, polls))
        return MF_ERR_TRUNCATE; /* the address would name a buffer of another size */
    memcpy(&a, entry + SMALL_HEAD, sizeof(a));
    int err = cma_read(sh->pid_of[i], dst, a + off, len);
    if (err == 0)
        return MF_OK;
    mf_log(MF_LOG_WARN, "coll", "cross-process copy of %zu bytes from local rank %d failed: %s",
           len, i, strerror(err));
    return MF_ERR_OTHER;
}

/* An owner's buffer may change once it returns: wait until every rank is done with call n. */
static void cma_wait_readers(mf_coll_shm_t *sh, mf_comm_t *comm, uint64_t n)
{
    int spins = 0, polls = 0;
    for (int i = 0; i < sh->k; i++)
        if (i != sh->lrank)
            wait_ge(comm, &sh->done[i].value, n + 1, &spins, &polls);
}

static mf_status_t cma_bcast(mf_coll_shm_t *sh, mf_comm_t *comm, void *buf, size_t len, int root)
{
    uint64_t n = sh->small_n++;
    int spins = 0, polls = 0;
    mf_status_t status = MF_OK;
    if (comm->rank == root)
        cma_publish(sh, comm, buf, n);
    else
        status = cma_fetch(sh, comm, sh->lrank_of[root], n, 0, buf, len, &spins, &polls);
    small_finish(sh, n);
    if (comm->rank == root)
        cma_wait_readers(sh, comm, n);
    return status;
}

/* ---- barrier ----------------------------------------------------------------------------- */

mf_status_t mf_coll_shm_barrier(mf_comm_t *comm)
{
    mf_coll_shm_t *sh = comm->shm;
    mf_status_t status = MF_OK;
    if (sh->k == 1)
        return mf_coll_barrier(sh->leaders);
    shm_signal(sh);
    if (sh->nnodes == 1) {
        shm_wait_all(sh, comm, sh->seq);
        return MF_OK;
    }
    if (sh->lrank == 0) {
        shm_wait_all(sh, comm, sh->seq);
        status = mf_coll_barrier(sh->leaders);
    }
    shm_signal(sh); /* the leader's says every node has arrived */
    if (sh->lrank != 0)
        shm_wait(sh, comm, 0, 1, sh->seq);
    return status;
}

/* ---- broadcast --------------------------------------------------------------------------- */

/* The reduce root's side of the stream: its own vector and the result it combines into. */
typedef struct stream_sink {
    char *buf;       /* the result */
    const char *own; /* the root's own vector (== buf in place) */
    MPI_Datatype dt;
    size_t extent;
    MPI_Op op;
} stream_sink_t;

/* The root's own part of the piece goes into the result while the writer is still filling
 * the slot. (Combining "piece op own" into the result in one pass after the wait measured no
 * faster on two ranks, nor did it in the two-rank Allreduce: the copy costs nothing, as the
 * root would otherwise only wait, and leaves the result in cache for the combine.) */
static void sink_prepare(const stream_sink_t *sink, size_t off, size_t n)
{
    if (sink->own != sink->buf)
        mf_coll_copy(sink->buf + off, sink->own + off, n);
}

static void sink_chunk(const stream_sink_t *sink, const char *slot, size_t off, size_t n)
{
    if (sink->op == MPI_OP_NULL) /* a plain transfer (Exscan) */
        mf_coll_copy(sink->buf + off, slot, n);
    else
        mf_op_apply(sink->op, slot, sink->buf + off, n / sink->extent, sink->dt);
}

/* Two-rank reduce: local rank `writer` streams `len` bytes of `src` through STREAM_SLOTS slots
 * of STREAM_CHUNK bytes in turn, one signal per piece, so it fills one slot while the root
 * combines the other; it waits only for a slot the root may still be reading. Small pieces in
 * the same two slots stay in both cores' caches: 8 KiB pieces were up to twice as fast as
 * 32 KiB ones, as half-area ones, and as a ring of 8 slots. */
static void node_stream(mf_coll_shm_t *sh, mf_comm_t *comm, const char *src, size_t len,
                        size_t chunk, int writer, const stream_sink_t *sink)
{
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = len - off < chunk ? len - off : chunk;
        unsigned i = sh->ring_next++ % STREAM_SLOTS;
        char *slot = sh->ring + (size_t)i * STREAM_CHUNK;
        if (sh->lrank == writer) {
            shm_wait_all(sh, comm, sh->ring_free[i]);
            mf_coll_copy(slot, src + off, n);
            shm_signal(sh);
        } else {
            sink_prepare(sink, off, n);
            shm_wait(sh, comm, writer, writer + 1, sh->seq + 1);
            sink_chunk(sink, slot, off, n);
            shm_signal(sh);
        }
        sh->ring_free[i] = sh->seq;
    }
}

/* One chunk of a broadcast through `slot` of the data area: the writer waits until every rank
 * reached `free_at` (done with the slot's last use) and fills it, the others wait for the
 * writer's signal and empty it; everyone then signals. */
static void bcast_chunk(mf_coll_shm_t *sh, mf_comm_t *comm, char *slot, char *buf, size_t n,
                        int writer, uint64_t free_at)
{
    if (sh->lrank == writer) {
        shm_wait_all(sh, comm, free_at);
        mf_coll_copy(slot, buf, n);
    } else {
        shm_wait(sh, comm, writer, writer + 1, sh->seq + 1);
        mf_coll_copy(buf, slot, n);
    }
    shm_signal(sh);
}

/* Local rank `writer` has the data: it goes through the two halves of the data area in turn,
 * one chunk each, so the writer fills one while the others empty the other. Large slots let
 * the writer run a whole message ahead of the readers in a series of broadcasts, which
 * measured faster than the reduce's small pieces. */
static void node_bcast(mf_coll_shm_t *sh, mf_comm_t *comm, char *buf, size_t len, int writer)
{
    for (size_t off = 0; off < len; off += sh->half) {
        size_t n = len - off < sh->half ? len - off : sh->half;
        int h = sh->next_half;
        char *slot = sh->data + (size_t)h * sh->half;
        sh->next_half ^= 1;
        bcast_chunk(sh, comm, slot, buf + off, n, writer, sh->free_at[h]);
        sh->free_at[h] = sh->seq;
    }
}

/* The data area as a ring of CROWD_UNIT units (crowded nodes): a call takes the consecutive
 * units its bytes need, so small calls let a writer run many calls ahead. Reserves `bytes`;
 * *wait_p is the count every rank's counter must reach before they may be written. */
static char *crowd_units_claim(mf_coll_shm_t *sh, size_t bytes, unsigned *first_p, unsigned *n_p,
                               uint64_t *wait_p)
{
    unsigned nunits = (unsigned)(sh->data_len / CROWD_UNIT);
    nunits = nunits < CROWD_UNITS_MAX ? nunits : CROWD_UNITS_MAX;
    if (sh->free_at[0] != sh->unit_mark[0] || sh->free_at[1] != sh->unit_mark[1]) {
        uint64_t all = max_u64(sh->free_at[0], sh->free_at[1]);
        for (unsigned i = 0; i < nunits; i++)
            sh->unit_free[i] = all;
    }
    unsigned need = (unsigned)((bytes + CROWD_UNIT - 1) / CROWD_UNIT);
    if (sh->unit_next + need > nunits)
        sh->unit_next = 0;
    uint64_t wait = 0;
    for (unsigned i = sh->unit_next; i < sh->unit_next + need; i++)
        wait = max_u64(wait, sh->unit_free[i]);
    *first_p = sh->unit_next;
    *n_p = need;
    *wait_p = wait;
    sh->unit_next += need;
    return sh->data + (size_t)*first_p * CROWD_UNIT;
}

/* After this call's signal: its units are free once every rank has signalled as often. */
static void crowd_units_release(mf_coll_shm_t *sh, unsigned first, unsigned n)
{
    for (unsigned i = first; i < first + n; i++)
        sh->unit_free[i] = sh->seq;
    size_t lo = (size_t)first * CROWD_UNIT, hi = (size_t)(first + n) * CROWD_UNIT;
    for (int h = 0; h < 2; h++)
        if (lo < (size_t)(h + 1) * sh->half && hi > (size_t)h * sh->half)
            sh->free_at[h] = sh->seq;
    sh->unit_mark[0] = sh->free_at[0];
    sh->unit_mark[1] = sh->free_at[1];
}

/* Bcast on a crowded node above one entry: the root writes chunks of CROWD_CHUNK into a ring
 * over the whole data area and waits only for the chunk it is about to overwrite, so in a
 * series of broadcasts it runs up to a data area ahead (the halves let it run one call ahead,
 * and each call then needed the readers that share its core to run first). A chunk that
 * straddles the halves counts for both, so the other users of the halves wait for it. Up to
 * CROWD_BCAST_UNITS_MAX the call takes consecutive units of the ring of units instead. */
static void crowd_bcast(mf_coll_shm_t *sh, mf_comm_t *comm, char *buf, size_t len, int writer)
{
    if (len <= CROWD_BCAST_UNITS_MAX) {
        unsigned first, n;
        uint64_t wait;
        char *slot = crowd_units_claim(sh, len, &first, &n, &wait);
        bcast_chunk(sh, comm, slot, buf, len, writer, wait);
        crowd_units_release(sh, first, n);
        return;
    }
    size_t chunk = CROWD_CHUNK;
    unsigned nslots = (unsigned)(sh->data_len / chunk);
    if (nslots > CROWD_RING_MAX)
        nslots = CROWD_RING_MAX;
    if (sh->free_at[0] != sh->crowd_mark[0] || sh->free_at[1] != sh->crowd_mark[1]) {
        uint64_t all = max_u64(sh->free_at[0], sh->free_at[1]);
        for (unsigned i = 0; i < nslots; i++)
            sh->crowd_free[i] = all;
    }
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = piece_len(len, off, chunk);
        unsigned i = sh->crowd_next++ % nslots;
        char *slot = sh->data + (size_t)i * chunk;
        bcast_chunk(sh, comm, slot, buf + off, n, writer, sh->crowd_free[i]);
        sh->crowd_free[i] = sh->seq;
        for (int h = 0; h < 2; h++)
            if ((size_t)i * chunk < (size_t)(h + 1) * sh->half &&
                (size_t)(i + 1) * chunk > (size_t)h * sh->half)
                sh->free_at[h] = sh->seq;
    }
    sh->crowd_mark[0] = sh->free_at[0];
    sh->crowd_mark[1] = sh->free_at[1];
}

mf_status_t mf_coll_shm_bcast(mf_comm_t *comm, void *buf, size_t len, int root)
{
    mf_coll_shm_t *sh = comm->shm;
    int root_node = sh->node_of[root], here = root_node == sh->node_of[comm->rank];
    mf_status_t status = MF_OK;
    if (len == 0)
        return MF_OK;
    if (sh->k == 1)
        return mf_coll_bcast(sh->leaders, buf, len, root_node);
    if (small_call(sh, len)) {
        small_bcast(sh, comm, buf, len, root);
        return MF_OK;
    }
    /* With the ring on, the pieces give way to crowd_bcast above one entry: one signal per
     * call instead of one small call per 1 KiB piece (4 ranks on 2 cores, see coll.md). */
    if (crowd_call(sh, len) && !MF_PARAM_LIVE(coll_shm_crowd_ring)) {
        for (size_t off = 0; off < len; off += SMALL_PAYLOAD)
            small_bcast(sh, comm, (char *)buf + off, piece_len(len, off, SMALL_PAYLOAD), root);
        return MF_OK;
    }
    /* Bcast has its own threshold, on by default: the segment's halves copy a message
     * twice, one after the other, where each reader's single copy runs on its own core. Only
     * with a core per rank: 4 ranks on 2 cores took 20 us at 32 KiB against 12. */
    if (sh->roomy && cma_from(sh, len, MF_PARAM_LIVE(coll_cma_bcast_bytes)))
        return cma_bcast(sh, comm, buf, len, root);
    if (sh->crowded && sh->nnodes == 1 && MF_PARAM_LIVE(coll_shm_crowd_ring)) {
        crowd_bcast(sh, comm, buf, len, sh->lrank_of[root]);
        return MF_OK;
    }
    /* On the root's node the root writes and its leader reads like the others, then passes
     * the data on to the other leaders, which then write on their nodes. */
    if (here)
        node_bcast(sh, comm, buf, len, sh->lrank_of[root]);
    if (sh->leaders != NULL)
        status = mf_coll_bcast(sh->leaders, buf, len, root_node);
    if (!here)
        node_bcast(sh, comm, buf, len, 0);
    return status;
}

/* ---- reduce and allreduce ---------------------------------------------------------------- */

/* out = in[0] op in[1] op ... op in[k-1] (stride apart) over `count` items. */
static void combine(const char *in, size_t stride, int k, char *out, size_t count, size_t extent,
                    MPI_Datatype dt, MPI_Op op)
{
    mf_coll_copy(out, in + stride * (size_t)(k - 1), count * extent);
    for (int i = k - 2; i >= 0; i--)
        mf_op_apply(op, in + stride * (size_t)i, out, count, dt);
}

/* As combine over the entries of small call n, but this rank's operand is `own` (rank order
 * kept for non-commutative operations); `out` must not overlap `own`. */
static void combine_own(mf_coll_shm_t *sh, uint64_t n, const void *own, void *out, size_t count,
                        size_t extent, MPI_Datatype dt, MPI_Op op)
{
    int k = sh->k, me = sh->lrank;
    const char *last = k - 1 == me ? own : small_entry(sh, k - 1, n) + SMALL_HEAD;
    mf_coll_copy(out, last, count * extent);
    for (int i = k - 2; i >= 0; i--)
        mf_op_apply(op, i == me ? own : small_entry(sh, i, n) + SMALL_HEAD, out, count, dt);
}

/* Small calls on one node: every rank publishes its vector; those that need the result
 * (`root`, or all when root < 0) combine all entries in local-rank order, so every rank of an
 * allreduce computes the same bits. */
static void small_reduction(mf_coll_shm_t *sh, mf_comm_t *comm, const void *sbuf, void *rbuf,
                            size_t count, MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    uint64_t n = sh->small_n++;
    /* A Reduce's root reads its own vector from its send buffer: no other rank reads its
     * entry, so the copy into it and the stamp are saved. In place the result overwrites that
     * vector while it is still needed, so the root publishes it as the others do. */
    int own = root == comm->rank && sbuf != rbuf;
    if (!own)
        small_publish(sh, comm, sbuf, count * extent, n);
    if (root < 0 || root == comm->rank) {
        int spins = 0, polls = 0;
        for (int i = 0; i < sh->k; i++)
            if (i != sh->lrank)
                small_ready(sh, comm, i, n, &spins, &polls);
        if (own)
            combine_own(sh, n, sbuf, rbuf, count, extent, dt, op);
        else
            combine(small_entry(sh, 0, n) + SMALL_HEAD, (size_t)SMALL_SLOTS_CROWD * SMALL_ENTRY,
                    sh->k, rbuf, count, extent, dt, op);
    }
    small_finish(sh, n);
}

/* A crowded node: the reduction in pieces of whole items that fit an entry, up to its own
 * limit (MANIFOLD_COLL_SHM_CROWD_REDUCE_BYTES, 4 KiB). The non-roots publish their pieces and
 * run ahead up to half a ring; only the root waits. From 8 KiB the ring of chunks
 * (crowd_reduce) is faster: each piece costs the root a stamp wait and a combine of k entries.
 * Returns 0 when it does not apply. rbuf is only touched where the result goes (it may be NULL
 * elsewhere). */
static int crowd_reduction(mf_coll_shm_t *sh, mf_comm_t *comm, const void *sbuf, void *rbuf,
                           size_t count, MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    size_t per = SMALL_PAYLOAD / extent, len = count * extent;
    if (per == 0 || !sh->crowded || sh->nnodes != 1 || len <= SMALL_PAYLOAD ||
        len > (size_t)MF_PARAM_LIVE(coll_shm_crowd_reduce_bytes))
        return 0;
    int mine = root < 0 || root == comm->rank;
    for (size_t first = 0; first < count; first += per) {
        size_t off = first * extent;
        small_reduction(sh, comm, (const char *)sbuf + off, mine ? (char *)rbuf + off : NULL,
                        piece_len(count, first, per), dt, extent, op, root);
    }
    return 1;
}

/* Wait until slot j of this rank's part of crowd_reduce's ring is free again. */
static void red_claim(mf_coll_shm_t *sh, mf_comm_t *comm, unsigned j)
{
    int r = sh->red_reader[j];
    if (r < 0)
        shm_wait_all(sh, comm, sh->red_free[j]);
    else
        shm_wait(sh, comm, r, r + 1, sh->red_free[j]);
}

/* Reduce on a crowded node above the pieces: the data area is cut into one part per local
 * rank, each a ring of CROWD_CHUNK slots. Every non-root streams its vector through its own
 * part, one chunk per step, and waits only for the slot it is about to overwrite (for the rank
 * that last read it), so in a series of reductions it runs up to its part ahead; the root
 * combines each step's chunks in local-rank order straight into the result. 4 ranks on 2
 * cores, medians of 9 launches at load 7-8: 256 KiB 58 us against 80 in 1 KiB pieces (the
 * root waits for a stamp and combines k entries per piece, the writers run 32 KiB ahead) and
 * 78 through node_reduce (every rank waits for every other three times per chunk). Returns 0
 * when it does not apply. */
static int crowd_reduce(mf_coll_shm_t *sh, mf_comm_t *comm, const char *sbuf, char *rbuf,
                        size_t count, MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    size_t chunk = round_down(CROWD_CHUNK, extent), len = count * extent;
    size_t part = round_down(sh->data_len / (size_t)sh->k, CROWD_CHUNK);
    if (!sh->crowded || sh->nnodes != 1 || root < 0 || chunk == 0 || part == 0 ||
        !MF_PARAM_LIVE(coll_shm_crowd_ring))
        return 0;
    unsigned nslots = (unsigned)(part / CROWD_CHUNK);
    if (nslots > CROWD_RING_MAX)
        nslots = CROWD_RING_MAX;
    int me = sh->lrank, rl = sh->lrank_of[root], k = sh->k;
    if (sh->free_at[0] != sh->red_mark[0] || sh->free_at[1] != sh->red_mark[1]) {
        uint64_t all = max_u64(sh->free_at[0], sh->free_at[1]);
        for (unsigned i = 0; i < nslots; i++) {
            sh->red_free[i] = all;
            sh->red_reader[i] = -1;
        }
    }
    /* In place the root's own vector is the result: unless it is the last operand (the first
     * the result takes), it goes through the root's own part first. */
    int stage = me == rl && sbuf == rbuf && rl != k - 1;
    for (size_t off = 0; off < len; off += chunk) {
        size_t n = piece_len(len, off, chunk);
        unsigned j = sh->red_next++ % nslots;
        char *mine = sh->data + (size_t)me * part + (size_t)j * CROWD_CHUNK;
        if (me != rl || stage) {
            red_claim(sh, comm, j);
            mf_coll_copy(mine, sbuf + off, n);
        }
        if (me == rl) {
            /* out = v[0] op (v[1] op (... op v[k-1])), each operand as soon as it is there */
            char *out = rbuf + off;
            for (int i = k - 1; i >= 0; i--) {
                const char *in = i != rl ? sh->data + (size_t)i * part + (size_t)j * CROWD_CHUNK
                                 : stage ? mine
                                         : sbuf + off;
                if (i != rl)
                    shm_wait(sh, comm, i, i + 1, sh->seq + 1);
                if (i == k - 1) {
                    if (in != out)
                        mf_coll_copy(out, in, n);
                } else {
                    mf_op_apply(op, in, out, n / extent, dt);
                }
            }
        }
        shm_signal(sh);
        if (me != rl || stage) {
            sh->red_free[j] = sh->seq;
            sh->red_reader[j] = rl;
        }
    }
    /* the halves' other users, and crowd_bcast, start after every rank is past this call */
    sh->free_at[0] = sh->free_at[1] = sh->seq;
    sh->red_mark[0] = sh->free_at[0];
    sh->red_mark[1] = sh->free_at[1];
    return 1;
}

/* One node, a small vector: every rank puts its contribution in its slot of one half and the
 * ranks that need the result (`root`, or all when root < 0) combine all of them. */
static void node_reduce_small(mf_coll_shm_t *sh, mf_comm_t *comm, const void *sbuf, void *rbuf,
                              size_t count, MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    size_t len = count * extent, stride = round_down(sh->half / (size_t)sh->k, CACHE_LINE);
    int h = sh->next_half;
    char *base = sh->data + (size_t)h * sh->half;
    sh->next_half ^= 1;
    shm_wait_all(sh, comm, sh->free_at[h]);
    mf_coll_copy(base + stride * (size_t)sh->lrank, sbuf, len);
    shm_signal(sh);
    if (root < 0 || root == comm->rank) {
        shm_wait_all(sh, comm, sh->seq);
        combine(base, stride, sh->k, rbuf, count, extent, dt, op);
    }
    shm_signal(sh);
    sh->free_at[h] = sh->seq;
}

/* The general case, in chunks of one reduction slot per rank: every rank copies its chunk into
 * its slot, then combines its share of the chunk (1/k of it) from all slots into the result
 * slot; the leaders combine the results across nodes; the ranks that want the result copy it
 * out. root < 0 means every rank (allreduce). */
static mf_status_t node_reduce(mf_coll_shm_t *sh, mf_comm_t *comm, const char *sbuf, char *rbuf,
                               size_t count, MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    size_t per = sh->slot / extent;
    char *result = sh->data + sh->slot * (size_t)sh->k;
    int lead = sh->lrank == 0, root_node = root < 0 ? -1 : sh->node_of[root];
    mf_status_t status = MF_OK;
    shm_wait_all(sh, comm, max_u64(sh->free_at[0], sh->free_at[1]));
    for (size_t first = 0; first < count; first += per) {
        size_t n = count - first < per ? count - first : per;
        mf_coll_copy(sh->data + sh->slot * (size_t)sh->lrank, sbuf + first * extent, n * extent);
        shm_signal(sh);
        shm_wait_all(sh, comm, sh->seq);
        size_t lo = n * (size_t)sh->lrank / (size_t)sh->k;
        size_t hi = n * (size_t)(sh->lrank + 1) / (size_t)sh->k;
        if (hi > lo)
            combine(sh->data + lo * extent, sh->slot, sh->k, result + lo * extent, hi - lo, extent,
                    dt, op);
        shm_signal(sh);
        if (sh->nnodes == 1) {
            shm_wait_all(sh, comm, sh->seq);
        } else {
            if (lead) {
                shm_wait_all(sh, comm, sh->seq);
                mf_status_t st =
                    root < 0
                        ? mf_coll_allreduce(sh->leaders, result, result, n, dt, extent, op)
                        : mf_coll_reduce(sh->leaders, result, result, n, dt, extent, op, root_node);
                if (status == MF_OK)
                    status = st; /* keep signalling: the node must not hang on an error */
            }
            shm_signal(sh);
            shm_wait(sh, comm, 0, 1, sh->seq);
        }
        if (root < 0 || root == comm->rank)
            mf_coll_copy(rbuf + first * extent, result, n * extent);
    }
    shm_signal(sh); /* done reading: the next collective may overwrite the data area */
    sh->free_at[0] = sh->free_at[1] = sh->seq;
    return status;
}

/* A node of one rank: the leaders' part alone, cut into the chunks the other nodes use. */
static mf_status_t leader_reduce(mf_coll_shm_t *sh, const char *sbuf, char *rbuf, size_t count,
                                 MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    size_t per = sh->slot / extent;
    for (size_t first = 0; first < count; first += per) {
        size_t n = count - first < per ? count - first : per, off = first * extent;
        char *r = rbuf != NULL ? rbuf + off : NULL; /* unused away from the root */
        mf_status_t status =
            root < 0
                ? mf_coll_allreduce(sh->leaders, sbuf + off, r, n, dt, extent, op)
                : mf_coll_reduce(sh->leaders, sbuf + off, r, n, dt, extent, op, sh->node_of[root]);
        if (status != MF_OK)
            return status;
    }
    return MF_OK;
}

static int small_reduce(const mf_coll_shm_t *sh, size_t len)
{
    return sh->nnodes == 1 && len <= SMALL_REDUCE &&
           len <= round_down(sh->half / (size_t)sh->k, CACHE_LINE);
}

/* Reduce on one node of two ranks: the other rank streams its vector through the data area
 * and the root combines each chunk straight from there into its result while the next chunk
 * is written. Every byte is copied once into shared memory and read once, and the chunks keep
 * both cores busy. Returns 0 when the items are too large for the pieces. */
static int pair_reduce(mf_coll_shm_t *sh, mf_comm_t *comm, const void *sbuf, void *rbuf,
                       size_t count, MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    size_t chunk = round_down(STREAM_CHUNK, extent);
    if (sh->nnodes != 1 || sh->k != 2 || chunk == 0)
        return 0;
    /* Up to 16 KiB the pieces are 4 KiB: with one or two 8 KiB pieces the root waits for a
     * whole copy before it combines anything, where smaller pieces overlap the copy of one
     * with the combine of the one before (8 KiB: 0.58 us against 0.87 as one point-to-point
     * message and 0.92 as one piece). Two ranks take point-to-point from 8 KiB since launches
     * split by placement found it steadier there (coll.md, "Reduce of 8 KiB"). */
    if (count * extent <= 2 * STREAM_CHUNK && round_down(STREAM_CHUNK / 2, extent) > 0)
        chunk = round_down(STREAM_CHUNK / 2, extent);
    stream_sink_t sink = {.buf = rbuf, .own = sbuf, .dt = dt, .extent = extent, .op = op};
    node_stream(sh, comm, sbuf, count * extent, chunk, sh->lrank_of[root] ^ 1, &sink);
    return 1;
}

mf_status_t mf_coll_shm_reduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                               MPI_Datatype dt, size_t extent, MPI_Op op, int root)
{
    mf_coll_shm_t *sh = comm->shm;
    if (count == 0)
        return MF_OK;
    if (sh->k == 1)
        return leader_reduce(sh, sbuf, rbuf, count, dt, extent, op, root);
    if (small_call(sh, count * extent)) {
        small_reduction(sh, comm, sbuf, rbuf, count, dt, extent, op, root);
        return MF_OK;
    }
    if (crowd_reduction(sh, comm, sbuf, rbuf, count, dt, extent, op, root))
        return MF_OK;
    if (crowd_reduce(sh, comm, sbuf, rbuf, count, dt, extent, op, root))
        return MF_OK;
    if (pair_reduce(sh, comm, sbuf, rbuf, count, dt, extent, op, root))
        return MF_OK;
    if (small_reduce(sh, count * extent)) {
        node_reduce_small(sh, comm, sbuf, rbuf, count, dt, extent, op, root);
        return MF_OK;
    }
    return node_reduce(sh, comm, sbuf, rbuf, count, dt, extent, op, root);
}

/* Allreduce on one node of two ranks from this size: pair_allreduce. */
#define PAIR_ALLREDUCE_MIN ((size_t)4 * 1024)
/* From this size its pieces go through the data area (4 slots of PAIR_BIG_PIECE): in loaded runs
 * 32 KiB pieces took half the time of 8 KiB ones from 256 KiB and beat 16, 64 and 128 KiB ones. */
#define PAIR_BIG_MIN   ((size_t)32 * 1024)
#define PAIR_BIG_PIECE ((size_t)32 * 1024)

/* A reduce-scatter of two ranks on one node, optionally followed by an allgather: local rank
 * r owns items lo[r] .. lo[r] + len[r] - 1 of the vector and combines them into rbuf +
 * out[r] items. Each streams the other's range of its vector through its own ring of stream
 * slots while combining the pieces the other sends into its own range (commutative operations
 * only: the piece goes on the left for both ranks). With `allgather`, each then streams its
 * finished range and copies the other's into rbuf + out[peer]. Both directions run at once,
 * one piece per step and two signals per step, so each rank moves and combines half the data
 * instead of copying all of it in and out. Each range is combined by one rank, so both get the
 * same bits. In place (sbuf == rbuf) a step sends its piece before it writes any result, and a
 * result range never reaches a part of the vector a later step still reads: the Allreduce
 * writes the other's range only in the second phase, the reduce-scatter writes its block at
 * the start of rbuf, at or below the items it reads. */
static void pair_exchange(mf_coll_shm_t *sh, mf_comm_t *comm, const char *sbuf, char *rbuf,
                          const size_t lo[2], const size_t len[2], const size_t out[2],
                          int allgather, MPI_Datatype dt, size_t extent, MPI_Op op)
{
    int me = sh->lrank, peer = me ^ 1, spins = 0, polls = 0;
    size_t chunk = STREAM_CHUNK;
    char *rings = sh->ring;
    /* large vectors: bigger pieces in the data area, fewer handshakes */
    if ((len[0] + len[1]) * extent >= PAIR_BIG_MIN && extent <= PAIR_BIG_PIECE) {
        chunk = PAIR_BIG_PIECE;
        rings = sh->data;
        shm_wait_all(sh, comm, max_u64(sh->free_at[0], sh->free_at[1]));
    }
    size_t per = chunk / extent, most = len[0] > len[1] ? len[0] : len[1];
    size_t steps = (most + per - 1) / per; /* pieces of the larger range */
    char *mine = rings + (size_t)me * STREAM_SLOTS * chunk;
    char *theirs = rings + (size_t)peer * STREAM_SLOTS * chunk;
    _Atomic uint64_t *pflag = &sh->flags[peer].value;
    /* the slots may still be read by a stream of an earlier call */
    shm_wait_all(sh, comm, max_u64(sh->ring_free[0], sh->ring_free[1]));
    uint64_t base = sh->seq;
    for (size_t s = 0; s < (allgather ? 2 : 1) * steps; s++) {
        int gather = s >= steps; /* second phase */
        size_t p = gather ? s - steps : s, i = s % STREAM_SLOTS, first = p * per;
        /* what I send: the peer's range of my vector, then my finished range */
        int sr = gather ? me : peer, rr = gather ? peer : me;
        size_t sn = first < len[sr] ? (len[sr] - first < per ? len[sr] - first : per) : 0;
        size_t rn = first < len[rr] ? (len[rr] - first < per ? len[rr] - first : per) : 0;
        if (s >= STREAM_SLOTS) /* the peer has read what I put in slot i two steps ago */
            wait_ge(comm, pflag, base + 2 * s - 2, &spins, &polls);
        const char *src = gather ? rbuf + out[sr] * extent : sbuf + lo[sr] * extent;
        mf_coll_copy(mine + i * chunk, src + first * extent, sn * extent);
        shm_signal(sh);
        char *dst = rbuf + (out[rr] + first) * extent;
        const char *own = sbuf + (lo[rr] + first) * extent;
        if (!gather && own != dst)
            memmove(dst, own, rn * extent); /* in place the block may move down */
        wait_ge(comm, pflag, base + 2 * s + 1, &spins, &polls);
        const char *slot = theirs + i * chunk;
        if (gather)
            mf_coll_copy(dst, slot, rn * extent);
        else if (rn > 0)
            mf_op_apply(op, slot, dst, rn, dt);
        shm_signal(sh);
    }
    sh->ring_free[0] = sh->ring_free[1] = sh->seq;
    if (rings == sh->data)
        sh->free_at[0] = sh->free_at[1] = sh->seq;
}

/* Two-rank Allgather and Alltoall blocks up to this size: pair_swap. It took 1.16 us at 8 KiB
 * against 1.39 in the medium rounds, but was 3-10 % slower at 16 KiB and the same above (with
 * 8, 16 or 32 KiB pieces), where the cross-core copy bounds both. */
#define PAIR_SWAP_MAX STREAM_CHUNK

/* Two ranks on one node swap `len` bytes: each streams `send` through its own ring of stream
 * slots (the allgather phase of pair_exchange alone) and copies the peer's pieces to `recv`.
 * A rank overwrites a slot once the peer has consumed the piece it put there two steps
 * earlier. `send` may be `recv` (in place): each step copies its piece out of `recv` before
 * the peer's lands there. */
static void pair_swap(mf_coll_shm_t *sh, mf_comm_t *comm, const char *send, char *recv, size_t len)
{
    int me = sh->lrank, peer = me ^ 1, spins = 0, polls = 0;
    size_t chunk = STREAM_CHUNK;
    char *rings = sh->ring;
    char *mine = rings + (size_t)me * STREAM_SLOTS * chunk;
    const char *theirs = rings + (size_t)peer * STREAM_SLOTS * chunk;
    _Atomic uint64_t *pflag = &sh->flags[peer].value;
    shm_wait_all(sh, comm, max_u64(sh->ring_free[0], sh->ring_free[1]));
    uint64_t base = sh->seq;
    size_t s = 0;
    for (size_t off = 0; off < len; off += chunk, s++) {
        size_t n = len - off < chunk ? len - off : chunk, i = s % STREAM_SLOTS;
        if (s >= STREAM_SLOTS) /* the peer has read what I put in slot i two steps ago */
            wait_ge(comm, pflag, base + 2 * s - 2, &spins, &polls);
        mf_coll_copy(mine + i * chunk, send + off, n);
        shm_signal(sh);
        wait_ge(comm, pflag, base + 2 * s + 1, &spins, &polls);
        mf_coll_copy(recv + off, theirs + i * chunk, n);
        shm_signal(sh);
    }
    sh->ring_free[0] = sh->ring_free[1] = sh->seq;
}

/* Allreduce on one node of two ranks: local rank 0 owns the lower half of the items, rank 1
 * the upper half; a reduce-scatter then an allgather (pair_exchange). */
static void pair_allreduce(mf_coll_shm_t *sh, mf_comm_t *comm, const char *sbuf, char *rbuf,
                           size_t count, MPI_Datatype dt, size_t extent, MPI_Op op)
{
    size_t h = count / 2, lo[2] = {0, h}, len[2] = {h, count - h};
    pair_exchange(sh, comm, sbuf, rbuf, lo, len, lo, 1, dt, extent, op);
}

/* Allreduce from this size on one node goes through cross-process copies (cma_allreduce). */
#define CMA_ALLREDUCE_MIN ((size_t)16 * 1024)
/* The piece of another rank's vector read at a time before it is combined (stays in cache). */
#define CMA_PIECE ((size_t)32 * 1024)

/* Reduce-scatter then allgather with no copy through the segment: each rank owns 1/k of the
 * items, reads that range of every other rank's send buffer piece by piece and combines it
 * into its receive buffer, then (after one signal) reads the other ranks' finished ranges
 * from their receive buffers. Each range is combined by one rank, so all get the same bits.
 * In place, the ranges others read from my buffer are not written before that signal. */
static mf_status_t cma_allreduce(mf_coll_shm_t *sh, mf_comm_t *comm, const char *sbuf, char *rbuf,
                                 size_t count, MPI_Datatype dt, size_t extent, MPI_Op op)
{
    int k = sh->k, me = sh->lrank, spins = 0, polls = 0;
    uint64_t n = sh->small_n++, addr[2] = {(uint64_t)(uintptr_t)sbuf, (uint64_t)(uintptr_t)rbuf};
    size_t piece = round_down(CMA_PIECE, extent);
    if (piece == 0)
        piece = extent;
    char *tmp = mf_malloc(piece, "allreduce piece");
    mf_status_t status = tmp != NULL ? MF_OK : MF_ERR_NO_MEMORY;
    small_publish(sh, comm, addr, sizeof(addr), n);
    size_t lo = count * (size_t)me / (size_t)k * extent;
    size_t hi = count * (size_t)(me + 1) / (size_t)k * extent;
    if (sbuf != rbuf)
        mf_coll_copy(rbuf + lo, sbuf + lo, hi - lo);
    for (int j = 1; j < k && status == MF_OK; j++) {
        int i = (me + j) % k;
        char *entry = small_entry(sh, i, n);
        if (small_wait(sh, comm, entry, i, n, &spins, &polls)) {
            status = MF_ERR_TRUNCATE;
            break;
        }
        uint64_t a[2];
        memcpy(a, entry + SMALL_HEAD, sizeof(a));
        for (size_t off = lo; off < hi && status == MF_OK; off += piece) {
            size_t len = hi - off < piece ? hi - off : piece;
            int err = cma_read(sh->pid_of[i], tmp, a[0] + off, len);
            if (err != 0) {
                mf_log(MF_LOG_WARN, "coll", "cross-process copy from local rank %d failed: %s", i,
                       strerror(err));
                status = MF_ERR_OTHER;
                break;
            }
            mf_op_apply(op, tmp, rbuf + off, len / extent, dt);
        }
    }
    free(tmp);
    shm_signal(sh); /* my range is final; I have read all I need from the send buffers */
    shm_wait_all(sh, comm, sh->seq);
    for (int j = 1; j < k; j++) {
        int i = (me + j) % k;
        uint64_t a[2];
        memcpy(a, small_entry(sh, i, n) + SMALL_HEAD, sizeof(a));
        size_t ilo = count * (size_t)i / (size_t)k * extent;
        size_t ihi = count * (size_t)(i + 1) / (size_t)k * extent;
        int err = ihi > ilo ? cma_read(sh->pid_of[i], rbuf + ilo, a[1] + ilo, ihi - ilo) : 0;
        if (err != 0 && status == MF_OK) {
            mf_log(MF_LOG_WARN, "coll", "cross-process copy from local rank %d failed: %s", i,
                   strerror(err));
            status = MF_ERR_OTHER;
        }
    }
    small_finish(sh, n);
    cma_wait_readers(sh, comm, n);
    return status;
}

mf_status_t mf_coll_shm_allreduce(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                                  MPI_Datatype dt, size_t extent, MPI_Op op)
{
    mf_coll_shm_t *sh = comm->shm;
    if (count == 0)
        return MF_OK;
    if (sh->k == 1)
        return leader_reduce(sh, sbuf, rbuf, count, dt, extent, op, -1);
    if (small_call(sh, count * extent)) {
        small_reduction(sh, comm, sbuf, rbuf, count, dt, extent, op, -1);
        return MF_OK;
    }

    size_t cma_min = (size_t)MF_PARAM_LIVE(coll_cma_bytes);
    if (cma_min > CMA_ALLREDUCE_MIN)
        cma_min = CMA_ALLREDUCE_MIN;
    if (cma_call(sh, cma_min) && count * extent >= cma_min && count >= (size_t)sh->k)
        return cma_allreduce(sh, comm, sbuf, rbuf, count, dt, extent, op);
    if (sh->nnodes == 1 && sh->k == 2 && extent <= STREAM_CHUNK &&
        count * extent >= PAIR_ALLREDUCE_MIN) {
        pair_allreduce(sh, comm, sbuf, rbuf, count, dt, extent, op);
        return MF_OK;
    }
    if (small_reduce(sh, count * extent)) {
        node_reduce_small(sh, comm, sbuf, rbuf, count, dt, extent, op, -1);
        return MF_OK;
    }
    return node_reduce(sh, comm, sbuf, rbuf, count, dt, extent, op, -1);
}

/* ---- small gathers and scans on one node ------------------------------------------------- */

/* Scans combine every lower rank's entry, so their cost grows with the rank: only this many. */
#define SMALL_SCAN_RANKS 8

int mf_coll_shm_cma(mf_comm_t *comm, size_t len, int min)
{
    if (min <= 0 || len < (size_t)min || !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return cma_from(sh, len, min) && sh->k == comm->size;
}

/* Every rank publishes where its own block lies in its receive buffer (displacements may
 * differ between ranks) and copies the others' blocks from theirs. */
mf_status_t mf_coll_shm_cma_allgatherv(mf_comm_t *comm, const void *own, void *rbuf,
                                       const size_t *rlens, const size_t *rdispls)
{
    mf_coll_shm_t *sh = comm->shm;
    uint64_t n = sh->small_n++;
    int spins = 0, polls = 0;
    char *out = rbuf;
    mf_status_t status = MF_OK;
    cma_publish(sh, comm, own != NULL ? own : out + rdispls[comm->rank], n);
    /* start with the next rank so that readers spread over the owners */
    for (int j = 1; j < sh->k; j++) {
        int i = (comm->rank + j) % sh->k;
        if (rlens[i] == 0)
            continue;
        mf_status_t st = cma_fetch(sh, comm, i, n, 0, out + rdispls[i], rlens[i], &spins, &polls);
        if (status == MF_OK)
            status = st;
    }
    small_finish(sh, n);
    cma_wait_readers(sh, comm, n);
    return status;
}

int mf_coll_shm_crowded(mf_comm_t *comm)
{
    return mf_coll_shm_usable(comm, MPI_OP_NULL) && ((const mf_coll_shm_t *)comm->shm)->crowded;
}

int mf_coll_shm_crowd_cma(mf_comm_t *comm, size_t len, size_t min)
{
    if (len < min || !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->crowded && sh->cma && sh->nnodes == 1 && sh->k == comm->size;
}

/* The non-roots publish their send buffers, the root copies from each. */
mf_status_t mf_coll_shm_cma_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                   int root)
{
    mf_coll_shm_t *sh = comm->shm;
    uint64_t n = sh->small_n++;
    mf_status_t status = MF_OK;
    if (comm->rank != root) {
        cma_publish(sh, comm, sbuf, n);
        small_finish(sh, n);
        int spins = 0, polls = 0;
        wait_ge(comm, &sh->done[root].value, n + 1, &spins, &polls);
        return MF_OK;
    }
    int spins = 0, polls = 0;
    char *out = rbuf;
    if (sbuf != MPI_IN_PLACE)
        mf_coll_copy(out + (size_t)root * len, sbuf, len);
    for (int i = 0; i < sh->k; i++) {
        if (i == root)
            continue;
        mf_status_t st = cma_fetch(sh, comm, i, n, 0, out + (size_t)i * len, len, &spins, &polls);
        if (status == MF_OK)
            status = st;
    }
    small_finish(sh, n);
    return status;
}

/* Crowded nodes: the root publishes its receive buffer's address and copies its own block,
 * each sender writes its block straight there (process_vm_writev) and returns. The copies
 * run on every core at once instead of all on the root, and a sender waits only for the
 * root to arrive, not for it to finish reading (4 ranks on 2 cores, see coll.md). */
mf_status_t mf_coll_shm_cma_push_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                        int root)
{
    mf_coll_shm_t *sh = comm->shm;
    uint64_t n = sh->small_n++;
    int spins = 0, polls = 0;
    int lroot = sh->lrank_of[root];
    if (comm->rank == root) {
        cma_publish(sh, comm, rbuf, n);
        if (sbuf != MPI_IN_PLACE)
            mf_coll_copy((char *)rbuf + (size_t)root * len, sbuf, len);
        small_finish(sh, n);
        cma_wait_readers(sh, comm, n);
        return MF_OK;
    }
    char *entry = small_ready(sh, comm, lroot, n, &spins, &polls);
    uint64_t a;
    memcpy(&a, entry + SMALL_HEAD, sizeof(a));
    int err = cma_write(sh->pid_of[lroot], a + (uint64_t)comm->rank * len, sbuf, len);
    small_finish(sh, n);
    if (err == 0)
        return MF_OK;
    mf_log(MF_LOG_WARN, "coll", "cross-process copy of %zu bytes to local rank %d failed: %s", len,
           lroot, strerror(err));
    return MF_ERR_OTHER;
}

/* The mirror of the single-copy Gather: the root publishes its send buffer's address, copies
 * its own block and waits until every rank has read its block from there (process_vm_readv,
 * one hand-over per reader instead of a stream of eager fragments or entry-sized pieces). */
mf_status_t mf_coll_shm_cma_scatter(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                    int root)
{
    mf_coll_shm_t *sh = comm->shm;
    uint64_t n = sh->small_n++;
    int spins = 0, polls = 0;
    mf_status_t status = MF_OK;
    if (comm->rank == root) {
        cma_publish(sh, comm, sbuf, n);
        if (rbuf != MPI_IN_PLACE)
            mf_coll_copy(rbuf, (const char *)sbuf + (size_t)root * len, len);
        small_finish(sh, n);
        cma_wait_readers(sh, comm, n);
        return MF_OK;
    }
    status = cma_fetch(sh, comm, sh->lrank_of[root], n, (size_t)comm->rank * len, rbuf, len, &spins,
                       &polls);
    small_finish(sh, n);
    return status;
}

int mf_coll_shm_small(mf_comm_t *comm, size_t len)
{
    /* Local ranks are communicator ranks on one node, so rank order holds for any operation. */
    if (len == 0 || len > SMALL_PAYLOAD || !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->nnodes == 1 && sh->k == comm->size;
}

int mf_coll_shm_pieces(mf_comm_t *comm, size_t len, size_t max)
{
    if (mf_coll_shm_small(comm, len))
        return 1;
    if (len == 0 || len > max || !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->k == comm->size && crowd_call(sh, len);
}

mf_status_t mf_coll_shm_allgatherv(mf_comm_t *comm, void *rbuf, const size_t *rlens,
                                   const size_t *rdispls)
{
    mf_coll_shm_t *sh = comm->shm;
    uint64_t n = sh->small_n++;
    int spins = 0, polls = 0;
    char *out = rbuf;
    small_publish(sh, comm, out + rdispls[comm->rank], rlens[comm->rank], n);
    for (int i = 0; i < sh->k; i++) {
        if (i == comm->rank || rlens[i] == 0)
            continue;
        char *entry = small_ready(sh, comm, i, n, &spins, &polls);
        memcpy(out + rdispls[i], entry + SMALL_HEAD, rlens[i]);
    }
    small_finish(sh, n);
    return MF_OK;
}

/* Crowded nodes, blocks above one entry: every rank first publishes all pieces of its block
 * (one small call per piece, calls n0 .. n0 + m - 1), then copies the others' pieces, then
 * finishes all m calls at once. A rank needs the core once per call, where a full round per
 * piece made every rank wait for every other at each piece (2-4x slower). Publishing m calls
 * ahead is safe while m is at most half the ring: claiming call n0 + j needs every `done` at
 * n0 + j + 1 - slots / 2 <= n0, and every rank reaches n0 without this call. */
int mf_coll_shm_crowd_allgather_ok(mf_comm_t *comm, size_t most)
{
    if (most <= SMALL_PAYLOAD || !mf_coll_shm_pieces(comm, most, SIZE_MAX))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return (most + SMALL_PAYLOAD - 1) / SMALL_PAYLOAD <= sh->slots / 2;
}

mf_status_t mf_coll_shm_crowd_allgatherv(mf_comm_t *comm, void *rbuf, const size_t *rlens,
                                         const size_t *rdispls)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t most = 0;
    for (int i = 0; i < sh->k; i++)
        most = rlens[i] > most ? rlens[i] : most;
    uint64_t n0 = sh->small_n, m = (most + SMALL_PAYLOAD - 1) / SMALL_PAYLOAD;
    sh->small_n += m;
    char *out = rbuf;
    int me = comm->rank, spins = 0, polls = 0;
    for (uint64_t j = 0; j < m; j++) {
        size_t off = j * SMALL_PAYLOAD;
        if (off >= rlens[me]) { /* a shorter block: an empty entry keeps the calls in step */
            small_publish(sh, comm, out, 0, n0 + j);
            continue;
        }
        small_publish(sh, comm, out + rdispls[me] + off, piece_len(rlens[me], off, SMALL_PAYLOAD),
                      n0 + j);
    }
    for (int d = 1; d < sh->k; d++) {
        int i = (me + d) % sh->k; /* start past me: the ranks do not all wait on rank 0 */
        for (size_t off = 0; off < rlens[i]; off += SMALL_PAYLOAD) {
            char *entry = small_ready(sh, comm, i, n0 + off / SMALL_PAYLOAD, &spins, &polls);
            memcpy(out + rdispls[i] + off, entry + SMALL_HEAD,
                   piece_len(rlens[i], off, SMALL_PAYLOAD));
        }
    }
    small_finish(sh, n0 + m - 1);
    return MF_OK;
}

mf_status_t mf_coll_shm_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root)
{
    mf_coll_shm_t *sh = comm->shm;
    char *out = rbuf;
    if (comm->rank == root && sbuf != MPI_IN_PLACE)
        mf_coll_copy(out + (size_t)root * len, sbuf, len);
    for (size_t off = 0; off < len; off += SMALL_PAYLOAD) {
        uint64_t n = sh->small_n++;
        size_t plen = piece_len(len, off, SMALL_PAYLOAD);
        if (comm->rank != root) {
            small_publish(sh, comm, (const char *)sbuf + off, plen, n);
        } else {
            int spins = 0, polls = 0;
            for (int i = 0; i < sh->k; i++) {
                if (i == root)
                    continue;
                char *entry = small_ready(sh, comm, i, n, &spins, &polls);
                memcpy(out + (size_t)i * len + off, entry + SMALL_HEAD, plen);
            }
        }
        small_finish(sh, n);
    }
    return MF_OK;
}

/* Crowded nodes take the pieces (the chain through the ring below) up to their size limit;
 * with 3 or more ranks, up to CROWD_SCAN_CHAIN_MAX. 4 ranks on 2 cores: 8 KiB-1 MiB ran up to
 * 2.4x faster there than the point-to-point chain (level in a slower phase of the machine),
 * 2-4 MiB slower (the ring's 1 KiB pieces once the vectors leave the caches); see coll.md,
 * "Crowded Scan of 8 KiB-1 MiB through the ring". */
#define CROWD_SCAN_CHAIN_MAX ((size_t)1024 * 1024)

int mf_coll_shm_scan_ok(mf_comm_t *comm, size_t len, size_t extent)
{
    if (comm->size > SMALL_SCAN_RANKS || extent > SMALL_PAYLOAD)
        return 0;
    if (mf_coll_shm_pieces(comm, len, SIZE_MAX))
        return 1;
    if (comm->size < 3 || len > CROWD_SCAN_CHAIN_MAX || !mf_coll_shm_crowded(comm))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->nnodes == 1 && sh->k == comm->size;
}

/* Crowded node, 3 or more ranks: a chain through the ring. Rank r waits only for rank r - 1's
 * entry, which holds the inclusive prefix of ranks 0..r - 1, and publishes (that prefix) op
 * s_r in its own entry: one wait and one application per item, and no rank waits for a
 * higher one (the ring's claim aside). In place, s_r goes into the entry before the result
 * overwrites it. */
static mf_status_t crowd_scan_chain(mf_comm_t *comm, const char *in, void *rbuf, size_t count,
                                    MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive)
{
    mf_coll_shm_t *sh = comm->shm;
    int rank = comm->rank, tail = rank == comm->size - 1;
    size_t per = SMALL_PAYLOAD / extent;
    for (size_t first = 0; first < count; first += per) {
        uint64_t n = sh->small_n++;
        int spins = 0, polls = 0;
        size_t items = piece_len(count, first, per), off = first * extent, len = items * extent;
        char *out = (char *)rbuf + off;
        if (rank == 0) {
            small_publish(sh, comm, in + off, len, n);
            if (!exclusive && in != (const char *)rbuf)
                mf_coll_copy(out, in + off, len);
            small_finish(sh, n);
            continue;
        }
        if (tail && !exclusive && in != (const char *)rbuf)
            mf_coll_copy(out, in + off, len); /* while the prefix is still on its way */
        const char *prev = small_ready(sh, comm, rank - 1, n, &spins, &polls) + SMALL_HEAD;
        if (tail) {
            if (exclusive)
                mf_coll_copy(out, prev, len);
            else
                mf_op_apply(op, prev, out, items, dt); /* prefix op own */
        } else {
            char *entry = small_entry(sh, sh->lrank, n);
            small_claim(sh, comm, n);
            memcpy(entry + SMALL_HEAD, in + off, len);
            mf_op_apply(op, prev, entry + SMALL_HEAD, items, dt); /* prefix op own */
            mf_coll_copy(out, exclusive ? prev : entry + SMALL_HEAD, len);
            small_done_writing(sh, entry, n);
        }
        small_finish(sh, n);
    }
    return MF_OK;
}

/* Rank r combines the entries of ranks 0..r (0..r-1 for exscan) as s0 op (s1 op (... op sr)),
 * which equals the chain's ((s0 op s1) op ...) op sr for any associative operation. */
mf_status_t mf_coll_shm_scan(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                             MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive)
{
    mf_coll_shm_t *sh = comm->shm;
    int rank = comm->rank, last = exclusive ? rank - 1 : rank;
    size_t per = SMALL_PAYLOAD / extent; /* items of one piece (crowded nodes: several) */
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (sh->crowded && comm->size > 2)
        return crowd_scan_chain(comm, in, rbuf, count, dt, extent, op, exclusive);
    for (size_t first = 0; first < count; first += per) {
        uint64_t n = sh->small_n++;
        int spins = 0, polls = 0;
        size_t items = piece_len(count, first, per), off = first * extent;
        char *out = (char *)rbuf + off;
        /* No rank reads the last rank's entry: it combines from its own buffer instead (two
         * ranks, 1 KiB: one copy through the segment less of the two). */
        int tail = rank == comm->size - 1;
        if (!tail)
            small_publish(sh, comm, in + off, items * extent, n);
        /* The tail's own vector goes into its result while the others' entries are still on
         * their way, as the stream's root does (sink_prepare). */
        if (tail && !exclusive && in != rbuf)
            mf_coll_copy(out, in + off, items * extent);
        for (int i = 0; i < rank; i++)
            small_ready(sh, comm, i, n, &spins, &polls);
        if (tail && !exclusive) {
            for (int i = last - 1; i >= 0; i--)
                mf_op_apply(op, small_entry(sh, i, n) + SMALL_HEAD, out, items, dt);
        } else if (last >= 0) {
            combine(small_entry(sh, 0, n) + SMALL_HEAD, (size_t)SMALL_SLOTS_CROWD * SMALL_ENTRY,
                    last + 1, out, items, extent, dt, op);
        }
        small_finish(sh, n);
    }
    return MF_OK;
}

/* Small all-to-all: every rank publishes its whole send buffer (in place: the receive buffer,
 * copied into the entry before any block is overwritten) and copies its block out of every
 * other rank's entry. */
mf_status_t mf_coll_shm_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf)
{
    mf_coll_shm_t *sh = comm->shm;
    uint64_t n = sh->small_n++;
    int me = comm->rank, spins = 0, polls = 0;
    char *out = rbuf;
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    small_publish(sh, comm, in, len * (size_t)sh->k, n);
    if (in != out)
        mf_coll_copy(out + (size_t)me * len, in + (size_t)me * len, len);
    for (int j = 1; j < sh->k; j++) {
        int i = (me + j) % sh->k;
        char *entry = small_ready(sh, comm, i, n, &spins, &polls);
        memcpy(out + (size_t)i * len, entry + SMALL_HEAD + (size_t)me * len, len);
    }
    small_finish(sh, n);
    return MF_OK;
}

/* Crowded node, all blocks together above one entry and within half a ring of pieces: every
 * rank publishes its whole send buffer in entry-sized pieces without waiting (as the crowded
 * Allgather), then copies its block out of the pieces of every other rank that overlap it, and
 * finishes all the calls with one `done` store. A rank needs the core about once per call,
 * where pairwise or Bruck point-to-point steps each wait for a partner that may be off the
 * core. In place, every piece is published before any block is overwritten. */
int mf_coll_shm_crowd_alltoall_ok(mf_comm_t *comm, size_t len)
{
    if (len == 0 || len > (size_t)SMALL_SLOTS_CROWD * SMALL_PAYLOAD ||
        len * (size_t)comm->size <= SMALL_PAYLOAD || !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    size_t all = len * (size_t)comm->size;
    return sh->crowded && sh->nnodes == 1 && sh->k == comm->size &&
           (all + SMALL_PAYLOAD - 1) / SMALL_PAYLOAD <= sh->slots / 2;
}

mf_status_t mf_coll_shm_crowd_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t all = len * (size_t)sh->k, lo = (size_t)comm->rank * len, hi = lo + len;
    uint64_t n0 = sh->small_n, m = (all + SMALL_PAYLOAD - 1) / SMALL_PAYLOAD;
    int me = comm->rank, spins = 0, polls = 0;
    char *out = rbuf;
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    sh->small_n += m;
    for (uint64_t j = 0; j < m; j++) {
        size_t off = j * SMALL_PAYLOAD;
        small_publish(sh, comm, in + off, piece_len(all, off, SMALL_PAYLOAD), n0 + j);
    }
    if (in != out)
        mf_coll_copy(out + lo, in + lo, len);
    for (int d = 1; d < sh->k; d++) {
        int i = (me + d) % sh->k; /* start past me: the ranks do not all wait on rank 0 */
        for (size_t off = lo; off < hi;) {
            size_t j = off / SMALL_PAYLOAD, end = (j + 1) * SMALL_PAYLOAD;
            end = end < hi ? end : hi;
            char *entry = small_ready(sh, comm, i, n0 + j, &spins, &polls);
            memcpy(out + (size_t)i * len + (off - lo),
                   entry + SMALL_HEAD + (off - j * SMALL_PAYLOAD), end - off);
            off = end;
        }
    }
    small_finish(sh, n0 + m - 1);
    return MF_OK;
}

/* Crowded node, blocks above the pieces: every rank publishes its send buffer's address and
 * copies its block from every other rank's buffer with one process_vm_readv each, then waits
 * until every rank has read its buffer. One hand-over per rank and call, where pairwise
 * point-to-point waited for a partner (and its eager fragments) at every step. In place the
 * send side is a private copy, since the others' blocks for this rank land where its own
 * blocks for them lie. */
mf_status_t mf_coll_shm_cma_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t all = len * (size_t)sh->k, lo = (size_t)comm->rank * len;
    char *out = rbuf, *copy = NULL;
    const char *in = sbuf;
    if (sbuf == MPI_IN_PLACE) {
        if ((copy = mf_malloc(all, "alltoall buffer")) == NULL)
            return MF_ERR_NO_MEMORY;
        mf_coll_copy(copy, out, all);
        in = copy;
    } else {
        mf_coll_copy(out + lo, in + lo, len);
    }
    uint64_t n = sh->small_n++;
    int spins = 0, polls = 0;
    mf_status_t status = MF_OK;
    cma_publish(sh, comm, in, n);
    for (int d = 1; d < sh->k; d++) {
        int i = (comm->rank + d) % sh->k; /* start past me: the owners share the readers */
        mf_status_t st = cma_fetch(sh, comm, i, n, lo, out + (size_t)i * len, len, &spins, &polls);
        if (status == MF_OK)
            status = st;
    }
    small_finish(sh, n);
    cma_wait_readers(sh, comm, n);
    free(copy);
    return status;
}

/* Small reduce-scatter: every rank publishes its vector and combines its own block from all
 * entries in rank order, `in[0] op (in[1] op ...)`, so any operation works. In place the
 * vector is read from the entry, never from rbuf, which the result overwrites. */
mf_status_t mf_coll_shm_reduce_scatter(mf_comm_t *comm, const void *src, void *rbuf,
                                       const size_t *counts, MPI_Datatype dt, size_t extent,
                                       MPI_Op op)
{
    mf_coll_shm_t *sh = comm->shm;
    uint64_t n = sh->small_n++;
    int me = comm->rank, spins = 0, polls = 0;
    size_t total = 0, first = 0;
    for (int i = 0; i < sh->k; i++) {
        first += i < me ? counts[i] : 0;
        total += counts[i];
    }
    small_publish(sh, comm, src, total * extent, n);
    if (counts[me] > 0) {
        for (int i = 0; i < sh->k; i++)
            if (i != me)
                small_ready(sh, comm, i, n, &spins, &polls);
        combine(small_entry(sh, 0, n) + SMALL_HEAD + first * extent,
                (size_t)SMALL_SLOTS_CROWD * SMALL_ENTRY, sh->k, rbuf, counts[me], extent, dt, op);
    }
    small_finish(sh, n);
    return MF_OK;
}

/* Crowded nodes, vectors above one entry: the pieces of whole items a rank publishes. */
static size_t crowd_rs_per(size_t extent)
{
    return extent == 0 || extent > SMALL_PAYLOAD ? 0 : SMALL_PAYLOAD / extent;
}

int mf_coll_shm_crowd_reduce_scatter_ok(mf_comm_t *comm, size_t len, size_t extent)
{
    size_t per = crowd_rs_per(extent);
    if (per == 0 || len <= SMALL_PAYLOAD || !mf_coll_shm_pieces(comm, len, SIZE_MAX))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return (len / extent + per - 1) / per <= sh->slots / 2;
}

/* As the crowded Allgather: every rank publishes all pieces of its vector (calls n0 .. n0 +
 * m - 1) without waiting, then combines its own block from the pieces that overlap it, in rank
 * order, and finishes all m calls with one `done` store. A rank needs the core once per call,
 * where recursive halving on point-to-point waited for a partner in each of its log2(p)
 * steps. In place the vector is read from the entries, published before rbuf is written. */
mf_status_t mf_coll_shm_crowd_reduce_scatter(mf_comm_t *comm, const void *src, void *rbuf,
                                             const size_t *counts, MPI_Datatype dt, size_t extent,
                                             MPI_Op op)
{
    mf_coll_shm_t *sh = comm->shm;
    int me = comm->rank, spins = 0, polls = 0;
    size_t total = 0, first = 0, per = crowd_rs_per(extent);
    for (int i = 0; i < sh->k; i++) {
        first += i < me ? counts[i] : 0;
        total += counts[i];
    }
    uint64_t n0 = sh->small_n, m = (total + per - 1) / per;
    sh->small_n += m;
    for (uint64_t j = 0; j < m; j++)
        small_publish(sh, comm, (const char *)src + j * per * extent,
                      piece_len(total, j * per, per) * extent, n0 + j);
    char *out = rbuf;
    for (size_t it = first, end = first + counts[me]; it < end;) {
        uint64_t j = it / per;
        size_t stop = (j + 1) * per < end ? (j + 1) * per : end;
        for (int d = 1; d < sh->k; d++) /* start past me: not everyone waits on rank 0 */
            small_ready(sh, comm, (me + d) % sh->k, n0 + j, &spins, &polls);
        combine(small_entry(sh, 0, n0 + j) + SMALL_HEAD + (it - j * per) * extent,
                (size_t)SMALL_SLOTS_CROWD * SMALL_ENTRY, sh->k, out + (it - first) * extent,
                stop - it, extent, dt, op);
        it = stop;
    }
    small_finish(sh, n0 + m - 1);
    return MF_OK;
}

/* Reduce_scatter above the pieces on a crowded node: whether blocks of len bytes (the mean)
 * take crowd_reduce's ring (mf_coll_shm_crowd_ring_reduce_scatter below). */
int mf_coll_shm_crowd_reduce_ring_ok(mf_comm_t *comm, size_t len, size_t extent, MPI_Op op)
{
    if (extent == 0 || extent > MF_COLL_SHM_ITEM_MAX || !mf_coll_shm_usable(comm, op))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->crowded && sh->nnodes == 1 && sh->k == comm->size && sh->k > 1 &&
           MF_PARAM_LIVE(coll_shm_crowd_ring) &&
           len > (size_t)MF_PARAM_LIVE(coll_shm_crowd_reduce_bytes) && !small_call(sh, len) &&
           round_down(CROWD_CHUNK, extent) > 0 && sh->data_len / (size_t)sh->k / CROWD_CHUNK >= 2;
}

/* Reduce_scatter above the pieces on a crowded node: one pass over crowd_reduce's ring, every
 * rank streaming its whole vector through its part of the data area, one chunk per step. A
 * rank waits only at the steps whose chunk overlaps its own block, for the others' copies of
 * that chunk, and combines its part of it; at the other steps it copies and signals without
 * waiting. One signal per chunk (and one at the end), where one Reduce per block (rooted at its
 * owner) made every rank run k calls' bookkeeping and wait for each owner in turn. A slot is
 * overwritten only after the owners of the blocks it held have signalled after reading it (their
 * next signal; hence two slots at least: with one, a reader would wait for itself). The own operand
 * is read back from the rank's slot, so in place the result (the start of rbuf, never past the
 * chunk just copied) overwrites nothing still unread. */
mf_status_t mf_coll_shm_crowd_ring_reduce_scatter(mf_comm_t *comm, const void *src, void *rbuf,
                                                  const size_t *counts, MPI_Datatype dt,
                                                  size_t extent, MPI_Op op)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t chunk = round_down(CROWD_CHUNK, extent) / extent; /* items */
    size_t part = round_down(sh->data_len / (size_t)sh->k, CROWD_CHUNK), total = 0, first = 0;
    int me = comm->rank, k = sh->k;
    for (int i = 0; i < k; i++) {
        first += i < me ? counts[i] : 0;
        total += counts[i];
    }
    unsigned nslots = (unsigned)(part / CROWD_CHUNK);
    if (nslots > CROWD_RING_MAX)
        nslots = CROWD_RING_MAX;
    if (sh->free_at[0] != sh->red_mark[0] || sh->free_at[1] != sh->red_mark[1]) {
        uint64_t all = max_u64(sh->free_at[0], sh->free_at[1]);
        for (unsigned i = 0; i < nslots; i++) {
            sh->red_free[i] = all;
            sh->red_reader[i] = -1;
        }
    }
    size_t end = first + counts[me];
    int owner = 0; /* the rank whose block holds the chunk's first item */
    size_t owner_end = counts[0];
    for (size_t it = 0; it < total; it += chunk) {
        size_t n = total - it < chunk ? total - it : chunk;
        unsigned j = sh->red_next++ % nslots;
        char *slot0 =
            sh->data + (size_t)j * CROWD_CHUNK; /* rank 0's slot j; rank i's is i parts on */
        red_claim(sh, comm, j);
        mf_coll_copy(slot0 + (size_t)me * part, (const char *)src + it * extent, n * extent);
        shm_signal(sh);
        size_t lo = it > first ? it : first, hi = it + n < end ? it + n : end;
        if (lo < hi) {
            for (int d = 1; d < k; d++) /* start past me: not everyone waits on rank 0 */
                shm_wait(sh, comm, (me + d) % k, (me + d) % k + 1, sh->seq);
            combine(slot0 + (lo - it) * extent, part, k, (char *)rbuf + (lo - first) * extent,
                    hi - lo, extent, dt, op);
        }
        /* the slot's readers: the owners of the blocks the chunk overlaps */
        while (owner < k - 1 && owner_end <= it)
            owner_end += counts[++owner];
        int last = owner;
        for (size_t e = owner_end; last < k - 1 && e < it + n; e += counts[last])
            last++;
        sh->red_free[j] = sh->seq + 1; /* a reader's next signal comes after it read */
        sh->red_reader[j] = last == owner ? owner : -1;
    }
    shm_signal(sh); /* my last chunk is read: the halves' other users may start */
    sh->free_at[0] = sh->free_at[1] = sh->seq;
    sh->red_mark[0] = sh->free_at[0];
    sh->red_mark[1] = sh->free_at[1];
    return MF_OK;
}

/* Reduce_scatter(_block) of two ranks on one node above a small-call entry (commutative
 * operations, items up to a stream piece): the first phase of the two-rank Allreduce with each
 * rank's block as its range. Point-to-point sent each block through UCX's rendezvous from
 * 8 KiB and copied it again into a temporary before combining; from 256 KiB vectors (UCX's
 * single copy) it was 10-20 % faster again, so it keeps those. */
#define PAIR_RS_MAX ((size_t)128 * 1024)

int mf_coll_shm_pair_reduce_scatter_ok(mf_comm_t *comm, size_t len, size_t extent, MPI_Op op)
{
    if (comm->size != 2 || len <= SMALL_PAYLOAD || len > PAIR_RS_MAX || extent > STREAM_CHUNK ||
        !mf_coll_shm_usable(comm, op))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->nnodes == 1 && sh->k == 2;
}

mf_status_t mf_coll_shm_pair_reduce_scatter(mf_comm_t *comm, const void *src, void *rbuf,
                                            const size_t *counts, MPI_Datatype dt, size_t extent,
                                            MPI_Op op)
{
    size_t lo[2] = {0, counts[0]}, out[2] = {0, 0};
    pair_exchange(comm->shm, comm, src, rbuf, lo, counts, out, 0, dt, extent, op);
    return MF_OK;
}

/* Scan and Exscan of two ranks on one node above a small-call entry: rank 0 streams its vector
 * to rank 1 through the stream slots, which combines each piece as "piece op own" (rank order,
 * so any operation) while the next is written: a reduce to rank 1. Point-to-point took the
 * rendezvous path from 8 KiB and moved every byte twice. */
int mf_coll_shm_pair_scan_ok(mf_comm_t *comm, size_t len, size_t extent)
{
    if (comm->size != 2 || len <= SMALL_PAYLOAD || extent > STREAM_CHUNK ||
        !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->nnodes == 1 && sh->k == 2;
}

mf_status_t mf_coll_shm_pair_scan(mf_comm_t *comm, const void *sbuf, void *rbuf, size_t count,
                                  MPI_Datatype dt, size_t extent, MPI_Op op, int exclusive)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t len = count * extent;
    const char *own = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    /* Exscan: rank 1 just receives rank 0's vector (rank 0's result is undefined) */
    stream_sink_t sink = {.buf = rbuf,
                          .own = exclusive ? rbuf : own,
                          .dt = dt,
                          .extent = extent,
                          .op = exclusive ? MPI_OP_NULL : op};
    if (comm->rank == 0 && !exclusive && own != rbuf)
        mf_coll_copy(rbuf, own, len);
    node_stream(sh, comm, own, len, round_down(STREAM_CHUNK, extent), 0, &sink);
    return MF_OK;
}

/* ---- medium gathers and scatters on one node --------------------------------------------- */

/* Two ranks on one node move medium buffers faster over point-to-point than through the
 * segment: blocking sends ask UCX for fast local completion, which sends up to 256 KiB as
 * eager fragments through UCX's own shared-memory queue, so the sender returns once its copy
 * is in and runs calls ahead while the receiver copies out on the other core. The segment's
 * rounds and streams wait for each other at every 8 KiB piece, the single copies at every
 * call. Each caller passes the range where it measured faster (see coll.md). */
static int pair_p2p_ok(mf_comm_t *comm)
{
    if (comm->size != 2 || !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->nnodes == 1 && sh->pair_p2p;
}

int mf_coll_shm_pair_p2p(mf_comm_t *comm, size_t len, size_t min, size_t max)
{
    return len >= min && len <= max && pair_p2p_ok(comm);
}

/* Whether the two ranks are far apart, which decides how their point-to-point collectives move
 * blocks: as one message rather than pieces (mf_coll_shm_pair_whole), and from
 * PAIR_FAR_P2P_MIN over point-to-point rather than the segment (mf_coll_shm_pair_p2p_far).
 * The pieces are eager messages through UCX's shared-memory queue: the sender writes queue
 * lines the receiver read last, and the receiver copies them out, so every line crosses
 * between the two cores twice. That is cheap when the host runs the two close together and
 * about twice as dear as one message's single copy when it runs them further apart (coll.md,
 * "Two ranks far apart"). Which of the two a job gets can change while it runs (a virtual
 * machine's vCPUs move between the host's cores), so both ranks time PROBE_TRIPS round trips of
 * one line of the segment on their first such call and again after PROBE_EVERY calls or
 * PROBE_BYTES bytes (both sent and received, the same count on both ranks). Local rank 0's
 * reading decides for both, since the choice of algorithm must agree. */
#define PROBE_TRIPS 64
#define PROBE_EVERY 4096
#define PROBE_BYTES ((size_t)64 * 1024 * 1024)

/* Times the round trips, then local rank 0 hands its verdict over on the same line: after
 * rank 1's last value `last` it writes last + 1 (near) or last + 2 (far), and waits for rank
 * 1's last + 3, so the next probe cannot overwrite the verdict before it was read. The fastest
 * round trip counts, which a descheduled peer or an interrupt does not lengthen. */
static int probe_far(mf_coll_shm_t *sh, mf_comm_t *comm)
{
    _Atomic uint64_t *line = &sh->probe->value;
    uint64_t base = sh->probe_seq, last = base + 2 * (PROBE_TRIPS + 1), prev = 0, best = UINT64_MAX;
    int polls = 0, spins = 0, far;
    /* local rank 0 writes base + 1, 3, 5, ..., rank 1 base + 2, 4, ... */
    for (uint64_t v = base + 1 + (uint64_t)sh->lrank; v <= last; v += 2) {
        if (v > base + 1) {
            spins = 0;
            wait_ge(comm, line, v - 1, &spins, &polls);
            uint64_t now = mf_now_ns();
            if (prev != 0 && now - prev < best)
                best = now - prev;
            prev = now;
        }
        atomic_store_explicit(line, v, memory_order_release);
    }
    spins = 0;
    if (sh->lrank == 0) {
        wait_ge(comm, line, last, &spins, &polls);
        far = best > (uint64_t)MF_PARAM_LIVE(coll_pair_far_ns);
        atomic_store_explicit(line, last + 1 + (uint64_t)far, memory_order_release);
        spins = 0;
        wait_ge(comm, line, last + 3, &spins, &polls);
    } else {
        far = wait_ge(comm, line, last + 1, &spins, &polls) == last + 2;
        atomic_store_explicit(line, last + 3, memory_order_release);
    }
    sh->probe_seq = last + 3;
    mf_log(MF_LOG_DEBUG, "coll", "two-rank probe: %llu ns a round trip here, %s",
           (unsigned long long)best, far ? "far" : "near");
    return far;
}

/* Runs the probe when it is due and returns the two ranks' verdict (sh->pair_probe only). */
static int pair_far(mf_coll_shm_t *sh, mf_comm_t *comm, size_t bytes)
{
    if (sh->pair_calls == 0 || sh->pair_calls >= PROBE_EVERY || sh->pair_bytes >= PROBE_BYTES) {
        sh->pair_whole = probe_far(sh, comm);
        sh->pair_calls = 0;
        sh->pair_bytes = 0;
    }
    sh->pair_calls++;
    sh->pair_bytes += bytes;
    return sh->pair_whole;
}

int mf_coll_shm_pair_whole(mf_comm_t *comm, size_t bytes)
{
    mf_coll_shm_t *sh = comm->shm;
    int far = sh->pair_probe && pair_far(sh, comm, bytes);
    if (MF_PARAM_LIVE(coll_pair_whole) != 0 || !sh->pair_probe)
        return MF_PARAM_LIVE(coll_pair_whole) == 2;
    return far;
}

/* Far apart, point-to-point also wins below the callers' ranges, from 4 KiB: launches split by
 * the benchmarks' placement probe (coll.md, "Two ranks far apart") ran Reduce 4 KiB in 1.19 us
 * against 2.19 through the segment (Open MPI 1.16), Reduce 8 KiB 1.83 against 3.29, Gather
 * 4 KiB 1.27 against 1.88, Alltoall 4 KiB 2.75 against 3.47; 2 KiB was mixed. Near, the
 * segment stays: its paths were measured faster there. */
#define PAIR_FAR_P2P_MIN ((size_t)4 * 1024)

int mf_coll_shm_pair_p2p_far(mf_comm_t *comm, size_t len, size_t min, size_t max)
{
    if (len > max || len < (min < PAIR_FAR_P2P_MIN ? min : PAIR_FAR_P2P_MIN) || !pair_p2p_ok(comm))
        return 0;
    mf_coll_shm_t *sh = comm->shm;
    return len >= min || (sh->pair_probe && pair_far(sh, comm, 0));
}

/* Blocks above a small-call entry and up to this size go through the data area on one node
 * instead of point-to-point (UCX's rendezvous from 8 KiB); beyond it point-to-point's single
 * copy caught up in two-rank runs. Only with a core per local rank: oversubscribed, every
 * round's handshake waits for the scheduler (4 ranks on 2 cores: about 8 us a round; the
 * small scatter below lost too, 1.2 us against 0.4). */
#define MEDIUM_MAX ((size_t)256 * 1024)
/* Each round moves at most this much of every rank's block, so the writers fill one half
 * while the readers empty the other; 8 KiB pieces stay in cache and beat 4, 16 and 32 KiB. */
#define MEDIUM_PIECE ((size_t)8 * 1024)

int mf_coll_shm_medium(mf_comm_t *comm, size_t len)
{
    if (len <= SMALL_PAYLOAD || len > MEDIUM_MAX || !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->nnodes == 1 && sh->k == comm->size && sh->roomy;
}

/* Bytes of each rank's block per round: its share of a half, at most MEDIUM_PIECE. */
static size_t medium_piece(const mf_coll_shm_t *sh)
{
    size_t p = round_down(sh->half / (size_t)sh->k, CACHE_LINE);
    return p < MEDIUM_PIECE ? p : MEDIUM_PIECE;
}

/* The next round's half of the data area, once every rank has finished reading it. */
static char *medium_half(mf_coll_shm_t *sh, int *h_p)
{
    int h = sh->next_half;
    sh->next_half ^= 1;
    *h_p = h;
    return sh->data + (size_t)h * sh->half;
}

/* Round by round the non-roots copy their piece into their stride of one half and signal; the
 * root waits for all and copies the pieces out, then signals, which frees the half. */
mf_status_t mf_coll_shm_medium_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                      int root)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t piece = medium_piece(sh);
    char *out = rbuf;
    if (comm->rank == root && sbuf != MPI_IN_PLACE)
        mf_coll_copy(out + (size_t)root * len, sbuf, len);
    for (size_t off = 0; off < len; off += piece) {
        size_t n = len - off < piece ? len - off : piece;
        int h;
        char *base = medium_half(sh, &h);
        if (comm->rank != root) {
            shm_wait_all(sh, comm, sh->free_at[h]);
            mf_coll_copy(base + (size_t)sh->lrank * piece, (const char *)sbuf + off, n);
            shm_signal(sh);
        } else {
            shm_wait(sh, comm, 0, root, sh->seq + 1);
            shm_wait(sh, comm, root + 1, sh->k, sh->seq + 1);
            for (int i = 0; i < sh->k; i++)
                if (i != root)
                    mf_coll_copy(out + (size_t)i * len + off, base + (size_t)i * piece, n);
            shm_signal(sh);
        }
        sh->free_at[h] = sh->seq;
    }
    return MF_OK;
}

/* The root copies every other rank's piece into one half and signals; each rank copies its
 * own piece out and signals, which frees the half. */
static void medium_scatter(mf_coll_shm_t *sh, mf_comm_t *comm, const void *sbuf, size_t len,
                           void *rbuf, int root)
{
    size_t piece = medium_piece(sh);
    const char *in = sbuf;
    for (size_t off = 0; off < len; off += piece) {
        size_t n = len - off < piece ? len - off : piece;
        int h;
        char *base = medium_half(sh, &h);
        if (comm->rank == root) {
            shm_wait_all(sh, comm, sh->free_at[h]);
            for (int i = 0; i < sh->k; i++)
                if (i != root)
                    mf_coll_copy(base + (size_t)i * piece, in + (size_t)i * len + off, n);
            shm_signal(sh);
        } else {
            shm_wait(sh, comm, root, root + 1, sh->seq + 1);
            mf_coll_copy((char *)rbuf + off, base + (size_t)sh->lrank * piece, n);
            shm_signal(sh);
        }
        sh->free_at[h] = sh->seq;
    }
}

/* Small scatters: the root publishes every block but its own in its small-call entry, each
 * rank copies its own. Leaving the root's block out lets two ranks' 1 KiB blocks travel with
 * the stamp instead of through the data area's halves and their two signals, and halves the
 * lines the root writes and hands over for 512 B blocks. */
static size_t small_scatter_bytes(const mf_coll_shm_t *sh, size_t len)
{
    return len * (size_t)(sh->k - 1);
}

static void small_scatter(mf_coll_shm_t *sh, mf_comm_t *comm, const void *sbuf, size_t len,
                          void *rbuf, int root)
{
    uint64_t n = sh->small_n++;
    if (comm->rank == root) {
        char *entry = small_entry(sh, sh->lrank, n);
        const char *in = sbuf;
        size_t before = (size_t)root * len;
        small_claim(sh, comm, n);
        memcpy(entry + SMALL_HEAD, in, before);
        memcpy(entry + SMALL_HEAD + before, in + before + len,
               small_scatter_bytes(sh, len) - before);
        small_done_writing(sh, entry, n);
    } else {
        int spins = 0, polls = 0;
        int slot = comm->rank < root ? comm->rank : comm->rank - 1;
        char *entry = small_ready(sh, comm, root, n, &spins, &polls);
        memcpy(rbuf, entry + SMALL_HEAD + (size_t)slot * len, len);
    }
    small_finish(sh, n);
}

/* Crowded nodes (the medium rounds not forced on): the root's send buffer goes through its
 * ring in entry-sized pieces, one small call each, and every rank copies the part of the
 * pieces that holds its block; a rank whose block a piece misses finishes that call at once.
 * The root runs up to a ring ahead, where point-to-point made it wait for each receiver in
 * turn (4 ranks on 2 cores: 64 B blocks 3-8 us, 4 KiB 13 us). */
#define CROWD_SCATTER_MAX ((size_t)4 * 1024) /* all blocks; 8 KiB lost to point-to-point */

static void crowd_scatter(mf_coll_shm_t *sh, mf_comm_t *comm, const void *sbuf, size_t len,
                          void *rbuf, int root)
{
    size_t total = len * (size_t)sh->k, mine = (size_t)comm->rank * len;
    for (size_t off = 0; off < total; off += SMALL_PAYLOAD) {
        uint64_t n = sh->small_n++;
        size_t plen = piece_len(total, off, SMALL_PAYLOAD);
        if (comm->rank == root) {
            small_publish(sh, comm, (const char *)sbuf + off, plen, n);
        } else if (off < mine + len && off + plen > mine) {
            size_t lo = off > mine ? off : mine;
            size_t hi = off + plen < mine + len ? off + plen : mine + len;
            int spins = 0, polls = 0;
            char *entry = small_ready(sh, comm, root, n, &spins, &polls);
            memcpy((char *)rbuf + (lo - mine), entry + SMALL_HEAD + (lo - off), hi - lo);
        }
        small_finish(sh, n);
    }
}

/* Crowded nodes, medium blocks of a rooted call (Scatter, Gather): the k - 1 blocks that cross
 * between processes go through consecutive units of a ring over the data area, one signal per
 * rank and call. Every rank computes the same units (same lengths, lockstep counters). A
 * writer waits only until the units it is about to fill are free, so with 1 KiB blocks the
 * root of a Scatter series runs up to about 170 calls ahead (the small-call ring allowed 16,
 * point-to-point none) and needs the readers sharing its core about once per ring. */
static size_t crowd_block_stride(size_t len)
{
    return (len + CACHE_LINE - 1) / CACHE_LINE * CACHE_LINE;
}

static size_t crowd_block_max(const mf_coll_shm_t *sh)
{
    size_t units = sh->data_len / CROWD_UNIT;
    units = units < CROWD_UNITS_MAX ? units : CROWD_UNITS_MAX;
    return units * CROWD_UNIT / 4; /* at least four calls in the ring */
}

/* Where local rank i's block lies in a call's units (the root has none). */
static char *crowd_block_of(char *base, size_t len, int i, int root)
{
    return base + (size_t)(i < root ? i : i - 1) * crowd_block_stride(len);
}

/* The root writes every other rank's block and signals once; each rank waits for that signal,
 * copies its block and signals. */
static void crowd_block_scatter(mf_coll_shm_t *sh, mf_comm_t *comm, const void *sbuf, size_t len,
                                void *rbuf, int root)
{
    unsigned first, n;
    uint64_t wait;
    char *base =
        crowd_units_claim(sh, crowd_block_stride(len) * (size_t)(sh->k - 1), &first, &n, &wait);
    if (sh->lrank == root) {
        shm_wait_all(sh, comm, wait);
        for (int i = 0; i < sh->k; i++)
            if (i != root)
                mf_coll_copy(crowd_block_of(base, len, i, root),
                             (const char *)sbuf + (size_t)i * len, len);
    } else {
        shm_wait(sh, comm, root, root + 1, sh->seq + 1);
        mf_coll_copy(rbuf, crowd_block_of(base, len, sh->lrank, root), len);
    }
    shm_signal(sh);
    crowd_units_release(sh, first, n);
}

/* The mirror for Gather: each sender waits only until the units of this call are free, writes
 * its block into its stride and signals once; the root waits for every sender, copies the
 * blocks out and signals, which frees the units. One hand-over per sender and call, and a
 * sender runs calls ahead as far as the ring allows, as Open MPI's eager sends do. */
static void crowd_block_gather(mf_coll_shm_t *sh, mf_comm_t *comm, const void *sbuf, size_t len,
                               void *rbuf, size_t rstride, int root)
{
    unsigned first, n;
    uint64_t wait;
    char *base =
        crowd_units_claim(sh, crowd_block_stride(len) * (size_t)(sh->k - 1), &first, &n, &wait);
    if (sh->lrank != root) {
        shm_wait_all(sh, comm, wait);
        mf_coll_copy(crowd_block_of(base, len, sh->lrank, root), sbuf, len);
    } else {
        shm_wait(sh, comm, 0, root, sh->seq + 1);
        shm_wait(sh, comm, root + 1, sh->k, sh->seq + 1);
        for (int i = 0; i < sh->k; i++)
            if (i != root)
                mf_coll_copy((char *)rbuf + (size_t)i * rstride, crowd_block_of(base, len, i, root),
                             len);
    }
    shm_signal(sh);
    crowd_units_release(sh, first, n);
}

/* Blocks of 512 B-32 KiB (while k - 1 of them fit a quarter of the ring). 4 ranks on 2 cores
 * at load 1-3, against point-to-point: 4 KiB 1.2-1.3 us against 2.1-2.2, 8 KiB 2.1-2.3
 * against 2.8-3.0, 16-32 KiB 1.06-1.13x faster; a loaded set (load 9-14) had lost from 4 KiB
 * (8 KiB 89 us against 23; see coll.md). 512 B blocks were a draw with the ring of pieces. */
#define CROWD_BLOCK_MIN ((size_t)512)
#define CROWD_BLOCK_MAX ((size_t)32 * 1024)

static int crowd_block_ok(const mf_coll_shm_t *sh, size_t len)
{
    return sh->crowded && MF_PARAM_LIVE(coll_shm_crowd_ring) && len >= CROWD_BLOCK_MIN &&
           len <= CROWD_BLOCK_MAX &&
           crowd_block_stride(len) * (size_t)(sh->k - 1) <= crowd_block_max(sh);
}

/* Scatter takes the blocks through the ring up to here only. Interleaved A/B of 9 rounds on a
 * quiet machine, benchmark queues warmed (coll.md, "Crowded Scatter from 4 KiB"): point-to-point
 * won from 4 KiB on 4 ranks (1.21-1.27x; 8 KiB 1.55-1.75x) and from 8 KiB on 3 (4 KiB 1.07x). */
#define CROWD_SCATTER_BLOCK_MAX ((size_t)2 * 1024)

static int crowd_block_scatter_ok(const mf_coll_shm_t *sh, size_t len)
{
    return len <= CROWD_SCATTER_BLOCK_MAX && crowd_block_ok(sh, len);
}

int mf_coll_shm_scatter_ok(mf_comm_t *comm, size_t len)
{
    if (len == 0 || len > MEDIUM_MAX || !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    size_t total = len * (size_t)sh->k;
    int crowd =
        sh->crowded &&
        (small_scatter_bytes(sh, len) <= SMALL_PAYLOAD || crowd_block_scatter_ok(sh, len) ||
         (total <= CROWD_SCATTER_MAX && total <= (size_t)MF_PARAM_LIVE(coll_shm_crowd_bytes)));
    return sh->nnodes == 1 && sh->k == comm->size && (sh->roomy || crowd);
}

/* Crowded Gather through the ring of units: blocks from 2 KiB, in pieces that a quarter of
 * the ring holds k - 1 times (up to 42 KiB on 4 ranks, 64 KiB on 3), one ring call per piece.
 * Quiet sets, 4 ranks on 2 cores, against the single copy: 32 KiB blocks 7.5 us against 18.2,
 * 64 KiB in two pieces 16.7 against 28.5, level from 512 KiB (see coll.md). */
#define CROWD_GATHER_MIN ((size_t)2 * 1024)

int mf_coll_shm_crowd_gather_ok(mf_comm_t *comm, size_t len)
{
    if (len < CROWD_GATHER_MIN || !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->crowded && !sh->roomy && sh->nnodes == 1 && sh->k == comm->size && sh->k > 1 &&
           MF_PARAM_LIVE(coll_shm_crowd_ring) &&
           crowd_block_stride(CROWD_GATHER_MIN) * (size_t)(sh->k - 1) <= crowd_block_max(sh);
}

mf_status_t mf_coll_shm_crowd_gather(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf,
                                     int root)
{
    mf_coll_shm_t *sh = comm->shm;
    if (comm->rank == root && sbuf != MPI_IN_PLACE)
        mf_coll_copy((char *)rbuf + (size_t)root * len, sbuf, len);
    /* the largest piece whose k - 1 cache-line strides fit a quarter of the ring */
    size_t piece = crowd_block_max(sh) / (size_t)(sh->k - 1) / CACHE_LINE * CACHE_LINE;
    for (size_t off = 0; off < len; off += piece)
        crowd_block_gather(sh, comm, comm->rank == root ? NULL : (const char *)sbuf + off,
                           piece_len(len, off, piece),
                           comm->rank == root ? (char *)rbuf + off : NULL, len, root);
    return MF_OK;
}

mf_status_t mf_coll_shm_scatter(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf, int root)
{
    mf_coll_shm_t *sh = comm->shm;
    if (comm->rank == root && rbuf != MPI_IN_PLACE)
        mf_coll_copy(rbuf, (const char *)sbuf + (size_t)root * len, len);
    if (small_scatter_bytes(sh, len) <= SMALL_PAYLOAD)
        small_scatter(sh, comm, sbuf, len, rbuf, root);
    else if (!sh->roomy && crowd_block_scatter_ok(sh, len))
        crowd_block_scatter(sh, comm, sbuf, len, rbuf, root);
    else if (!sh->roomy)
        crowd_scatter(sh, comm, sbuf, len, rbuf, root); /* crowded (see scatter_ok) */
    else
        medium_scatter(sh, comm, sbuf, len, rbuf, root);
    return MF_OK;
}

/* Two-rank all-to-all of medium blocks: up to one stream piece each rank streams its block
 * for the other rank (pair_swap); above, the medium Allgather's rounds (below), each rank's
 * piece taken from its block for the other rank instead of its own block. In place, a round
 * copies my piece of the peer's block out before the peer's piece overwrites it. From 32 KiB
 * blocks point-to-point wins: both ranks fetch the other's block at once with UCX's single
 * copy, where the rounds copy every byte twice. */
#define ALLTOALL_MEDIUM_MAX ((size_t)32 * 1024)

int mf_coll_shm_medium_alltoall_ok(mf_comm_t *comm, size_t len)
{
    if (comm->size != 2 || len * 2 <= SMALL_PAYLOAD || len >= ALLTOALL_MEDIUM_MAX ||
        !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->nnodes == 1 && sh->k == 2 && sh->roomy;
}

mf_status_t mf_coll_shm_medium_alltoall(mf_comm_t *comm, const void *sbuf, size_t len, void *rbuf)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t piece = medium_piece(sh);
    int me = sh->lrank, peer = me ^ 1, h = 0;
    char *out = rbuf;
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (in != out)
        mf_coll_copy(out + (size_t)me * len, in + (size_t)me * len, len);
    if (len <= PAIR_SWAP_MAX) {
        pair_swap(sh, comm, in + (size_t)peer * len, out + (size_t)peer * len, len);
        return MF_OK;
    }
    for (size_t off = 0; off < len; off += piece) {
        size_t n = len - off < piece ? len - off : piece;
        char *base = medium_half(sh, &h);
        shm_wait_all(sh, comm, sh->free_at[h]);
        mf_coll_copy(base + (size_t)me * piece, in + (size_t)peer * len + off, n);
        shm_signal(sh);
        sh->free_at[h] = sh->seq + 1; /* my next signal comes after I read this half */
        shm_wait_all(sh, comm, sh->seq);
        mf_coll_copy(out + (size_t)peer * len + off, base + (size_t)peer * piece, n);
    }
    shm_signal(sh);
    sh->free_at[h] = sh->seq;
    return MF_OK;
}

/* Two ranks from 32 KiB blocks: the point-to-point ring wins, each rank fetching the other's
 * block from its send buffer with UCX's single copy (64 KiB 8.2 us against 11-12.6 here).
 * More ranks keep the rounds (not measured: this machine has two cores). */
#define ALLGATHER_PAIR_P2P_MIN ((size_t)32 * 1024)

int mf_coll_shm_medium_allgather_ok(mf_comm_t *comm, size_t len)
{
    return mf_coll_shm_medium(comm, len) && (comm->size != 2 || len < ALLGATHER_PAIR_P2P_MIN);
}

/* Every rank copies its piece in, signals, waits for all and copies the others' pieces out.
 * A rank's next signal says it finished reading, so round r's half is free after round r+1's
 * signals; one last signal frees the final round's half for the next collective. */
mf_status_t mf_coll_shm_medium_allgatherv(mf_comm_t *comm, void *rbuf, const size_t *rlens,
                                          const size_t *rdispls)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t piece = medium_piece(sh), most = 0;
    char *out = rbuf;
    if (sh->k == 2 && rlens[0] == rlens[1] && rlens[0] <= PAIR_SWAP_MAX) {
        int me = comm->rank, peer = me ^ 1;
        pair_swap(sh, comm, out + rdispls[me], out + rdispls[peer], rlens[me]);
        return MF_OK;
    }
    for (int i = 0; i < sh->k; i++)
        most = rlens[i] > most ? rlens[i] : most;
    int h = 0;
    for (size_t off = 0; off < most; off += piece) {
        char *base = medium_half(sh, &h);
        shm_wait_all(sh, comm, sh->free_at[h]);
        size_t mine = rlens[comm->rank];
        if (off < mine)
            mf_coll_copy(base + (size_t)sh->lrank * piece, out + rdispls[comm->rank] + off,
                         mine - off < piece ? mine - off : piece);
        shm_signal(sh);
        sh->free_at[h] = sh->seq + 1; /* my next signal comes after I read this half */
        shm_wait_all(sh, comm, sh->seq);
        for (int i = 0; i < sh->k; i++) {
            if (i == comm->rank || off >= rlens[i])
                continue;
            size_t n = rlens[i] - off < piece ? rlens[i] - off : piece;
            mf_coll_copy(out + rdispls[i] + off, base + (size_t)i * piece, n);
        }
    }
    shm_signal(sh);
    sh->free_at[h] = sh->seq;
    return MF_OK;
}

/* Allgather(v) on a crowded node, blocks above the pieces and up to
 * MANIFOLD_COLL_SHM_CROWD_ALLGATHER_BYTES (default: all): rounds through the data area, a slot
 * of every block per round. Every rank writes its slot once, signals, waits for the others'
 * signals and copies their slots out; its next signal frees the half, while the next round
 * fills the other. One wait per round, where the single copy waits twice (for the addresses,
 * then for every reader before it returns): 4 ranks on 2 cores, 32 and 64 KiB blocks,
 * fastest launches 15-16 and 28-29 us against 30-36 and 46-51; 128 KiB-4 MiB blocks in rounds
 * 1.15-1.96x faster than the single copy (see coll.md). At 4-16 KiB the pieces tied in the
 * fastest launches and led in most medians, so they keep those. */
static size_t crowd_area_slot(const mf_coll_shm_t *sh)
{
    return round_down(sh->half / (size_t)sh->k, CACHE_LINE);
}

int mf_coll_shm_crowd_area_allgather_ok(mf_comm_t *comm, size_t most)
{
    if (most <= SMALL_PAYLOAD || most > (size_t)MF_PARAM_LIVE(coll_shm_crowd_allgather_bytes) ||
        !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    return sh->crowded && sh->nnodes == 1 && sh->k == comm->size;
}

mf_status_t mf_coll_shm_crowd_area_allgatherv(mf_comm_t *comm, void *rbuf, const size_t *rlens,
                                              const size_t *rdispls)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t slot = crowd_area_slot(sh), most = 0;
    int me = comm->rank;
    char *out = rbuf;
    for (int i = 0; i < sh->k; i++)
        most = rlens[i] > most ? rlens[i] : most;
    /* Blocks above a slot go round by round, a slot of each block per round, the halves
     * taking turns so that a round's writes overlap the readers of the one before. */
    for (size_t off = 0; off < most; off += slot) {
        int h;
        char *base = medium_half(sh, &h);
        shm_wait_all(sh, comm, sh->free_at[h]);
        if (off < rlens[me])
            mf_coll_copy(base + (size_t)me * slot, out + rdispls[me] + off,
                         piece_len(rlens[me], off, slot));
        shm_signal(sh);
        for (int d = 1; d < sh->k; d++) { /* start past me: the readers spread over the blocks */
            int i = (me + d) % sh->k;
            shm_wait(sh, comm, i, i + 1, sh->seq);
            if (off < rlens[i])
                mf_coll_copy(out + rdispls[i] + off, base + (size_t)i * slot,
                             piece_len(rlens[i], off, slot));
        }
        shm_signal(sh);
        sh->free_at[h] = sh->seq;
    }
    return MF_OK;
}

/* Crowded Alltoall of blocks above one entry, up to MANIFOLD_COLL_SHM_CROWD_ALLTOALL_BYTES:
 * the area rounds of the Allgather with each rank's send buffer in its stride. Every rank
 * writes once per round, signals, and copies its block from each other rank's stride as soon
 * as that rank has signalled; its second signal frees the half. When all of a rank's blocks
 * fit its stride that is one round and one wait per call, where the pieces made each rank
 * finish every other rank's small calls (k * len / 1 KiB of them). */
int mf_coll_shm_crowd_area_alltoall_ok(mf_comm_t *comm, size_t len)
{
    if (len <= SMALL_PAYLOAD || len > (size_t)MF_PARAM_LIVE(coll_shm_crowd_alltoall_bytes) ||
        !mf_coll_shm_usable(comm, MPI_OP_NULL))
        return 0;
    const mf_coll_shm_t *sh = comm->shm;
    size_t slot = crowd_area_slot(sh), k = (size_t)sh->k;
    return sh->crowded && sh->nnodes == 1 && sh->k == comm->size &&
           (len * k <= slot || slot / k >= CACHE_LINE);
}

mf_status_t mf_coll_shm_crowd_area_alltoall(mf_comm_t *comm, const void *sbuf, size_t len,
                                            void *rbuf)
{
    mf_coll_shm_t *sh = comm->shm;
    size_t slot = crowd_area_slot(sh), k = (size_t)sh->k;
    /* Larger blocks go round by round, a k-th of the stride of each block per round, the
     * halves taking turns (as the Allgather's rounds). In place a round overwrites only the
     * parts of the blocks it has just published. */
    size_t chunk = len * k <= slot ? len : round_down(slot / k, CACHE_LINE);
    int me = comm->rank;
    char *out = rbuf;
    const char *in = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    if (in != out)
        mf_coll_copy(out + (size_t)me * len, in + (size_t)me * len, len);
    for (size_t off = 0; off < len; off += chunk) {
        int h;
        char *base = medium_half(sh, &h), *mine = base + (size_t)me * slot;
        size_t n = piece_len(len, off, chunk);
        shm_wait_all(sh, comm, sh->free_at[h]);
        if (chunk == len)
            mf_coll_copy(mine, in, len * k);
        else
            for (size_t j = 0; j < k; j++)
                mf_coll_copy(mine + j * chunk, in + j * len + off, n);
        shm_signal(sh);
        for (int d = 1; d < sh->k; d++) { /* start past me: the readers spread over the strides */
            int i = (me + d) % sh->k;
            shm_wait(sh, comm, i, i + 1, sh->seq);
            mf_coll_copy(out + (size_t)i * len + off, base + (size_t)i * slot + (size_t)me * chunk,
                         n);
        }
        shm_signal(sh);
        sh->free_at[h] = sh->seq;
    }
    return MF_OK;
}
