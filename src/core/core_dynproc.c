/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Dynamic processes (MPI-4.1 chapter 11.8-11.10): ports, MPI_Comm_accept/connect, and the link
 * between spawned processes and their parents (which is an accept on a port the parents' root
 * opened, and a connect by the children during MPI_Init).
 *
 * A port name carries what a stranger needs to reach the port's owner: its job key and world
 * rank (mf_vci_job_key: processes are named by job and rank across jobs), a port number, and
 * its VCI 0 worker address in hex. The handshake runs between the two roots on two contexts
 * beyond every communicator's: the connector sends its group's descriptions (job, rank, VCI 0
 * address of every member) to the owner on the LISTEN context with the port number as tag;
 * the acceptor answers with its own group's on the LINK context, tagged with a number the
 * connector chose and receives; from then on each root receives on a tag it chose itself, so
 * concurrent connections never take each other's messages. Each root broadcasts what it
 * received to its group, every member enters the other group into its process table, and the
 * context id is agreed over the roots' link as for MPI_Intercomm_create.
 */
#include "core.h"

#include "coll.h"
#include "pmi.h"
#include "pt2pt.h"

#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PORT_PREFIX "manifold-port:"
#define ADDR_MAX    1000 /* bytes of a VCI 0 address a port name and a description carry */
#define HELLO_MAGIC 0x6d66636eu
#define CTX_LISTEN  MF_CONTEXT_DYNPROC
#define CTX_LINK    (MF_CONTEXT_DYNPROC + 1)
_Static_assert(2 * (MF_CONTEXT_DYNPROC + 2) <= (1 << MF_PT2PT_CTX_BITS),
               "the handshake contexts fit the transport's context field");

/* One process as the other group learns it. */
typedef struct proc_desc {
    uint64_t job;
    int32_t rank;
    uint32_t len;
    unsigned char addr[ADDR_MAX];
} proc_desc_t;

/* Heads the roots' messages: `n` descriptions follow. */
typedef struct hello {
    uint32_t magic;
    int32_t n;
    int32_t tag;  /* the tag the sender receives on from now on */
    int32_t root; /* which description is the sender's (the root's) */
} hello_t;

typedef struct port {
    uint64_t job;
    int rank;
    int id;
    size_t len;
    unsigned char addr[ADDR_MAX];
} port_t;

/* This process's open ports (ids) and the counters ports and link tags come from. */
static struct {
    pthread_mutex_t lock;
    int *open;
    int nopen, cap;
    int next_port, next_tag;
    mf_comm_t *parent; /* spawned processes: the intercommunicator to the parents */
} dp = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int next_number(int *counter)
{
    /* tags stay in the transport's tag range; 0 is never handed out */
    pthread_mutex_lock(&dp.lock);
    *counter = *counter % MF_PT2PT_TAG_UB + 1;
    int n = *counter;
    pthread_mutex_unlock(&dp.lock);
    return n;
}

static int class_of(mf_status_t status)
{
    return status == MF_ERR_NO_MEMORY ? MPI_ERR_NO_MEM : MPI_ERR_OTHER;
}

static void fail(mf_dynproc_err_t *err, int err_class, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void fail(mf_dynproc_err_t *err, int err_class, const char *fmt, ...)
{
    err->err_class = err_class;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->why, sizeof(err->why), fmt, ap);
    va_end(ap);
}

/* ---- port names ---------------------------------------------------------------------------- */

static void my_desc(proc_desc_t *d)
{
    const void *addr;
    size_t len;
    mf_vci_local_address(mf_vci_get(0), &addr, &len);
    memset(d, 0, sizeof(*d));
    d->job = mf_vci_job_key();
    d->rank = mf_global.world_rank;
    d->len = (uint32_t)(len < ADDR_MAX ? len : 0);
    memcpy(d->addr, addr, d->len);
}

size_t mf_dynproc_desc_size(void)
{
    return sizeof(proc_desc_t);
}

void mf_dynproc_desc_self(void *desc)
{
    my_desc(desc);
}

mf_status_t mf_dynproc_desc_add(const void *desc, int *index_p)
{
    proc_desc_t d;
    memcpy(&d, desc, sizeof(d)); /* the caller's bytes need not be aligned */
    if (d.len == 0 || d.len > ADDR_MAX)
        return MF_ERR_INVALID;
    return mf_vci_add_process(d.job, d.rank, d.addr, d.len, index_p);
}

mf_status_t mf_dynproc_open_port(char *name, size_t size, mf_dynproc_err_t *err)
{
    proc_desc_t me;
    my_desc(&me);
    if (me.len == 0 || me.job == 0) {
        fail(err, MPI_ERR_INTERN, "this process's transport address does not fit a port name");
        return MF_ERR_UNSUPPORTED;
    }
    int id = next_number(&dp.next_port);
    int n = snprintf(name, size, PORT_PREFIX "%016" PRIx64 ":%d:%d:", me.job, me.rank, id);
    for (uint32_t i = 0; n > 0 && (size_t)n + 2 < size && i < me.len; i++)
        n += snprintf(name + n, size - (size_t)n, "%02x", me.addr[i]);
    if (n < 0 || (size_t)n + 1 >= size) {
        fail(err, MPI_ERR_INTERN, "the port name does not fit %zu bytes", size);
        return MF_ERR_NO_SPACE;
    }
    pthread_mutex_lock(&dp.lock);
    if (dp.nopen == dp.cap) {
        int cap = dp.cap ? 2 * dp.cap : 8;
        int *open = realloc(dp.open, sizeof(int) * (size_t)cap);
        if (open == NULL) {
            pthread_mutex_unlock(&dp.lock);
            fail(err, MPI_ERR_NO_MEM, "out of memory for the table of open ports");
            return MF_ERR_NO_MEMORY;
        }
        dp.open = open;
        dp.cap = cap;
    }
    dp.open[dp.nopen++] = id;
    pthread_mutex_unlock(&dp.lock);
    return MF_OK;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1;
}

static int port_parse(const char *name, port_t *p)
{
    memset(p, 0, sizeof(*p));
    int used = 0;
    if (strncmp(name, PORT_PREFIX, strlen(PORT_PREFIX)) != 0 ||
        sscanf(name + strlen(PORT_PREFIX), "%16" SCNx64 ":%d:%d:%n", &p->job, &p->rank, &p->id,
               &used) != 3 ||
        used == 0 || p->rank < 0 || p->id <= 0 || p->id > MF_PT2PT_TAG_UB)
        return 0;
    const char *hex = name + strlen(PORT_PREFIX) + used;
    size_t digits = strlen(hex);
    if (digits == 0 || digits % 2 != 0 || digits / 2 > ADDR_MAX)
        return 0;
    for (size_t i = 0; i < digits / 2; i++) {
        int hi = hex_digit(hex[2 * i]), lo = hex_digit(hex[2 * i + 1]);
        if (hi < 0 || lo < 0)
            return 0;
        p->addr[i] = (unsigned char)(hi * 16 + lo);
    }
    p->len = digits / 2;
    return 1;
}

/* Removes (close) or finds a port of this process; 1 when it was open. */
static int port_is_open(int id, int close)
{
    pthread_mutex_lock(&dp.lock);
    int found = 0;
    for (int i = 0; i < dp.nopen && !found; i++) {
        if (dp.open[i] == id) {
            found = 1;
            if (close)
                dp.open[i] = dp.open[--dp.nopen];
        }
    }
    pthread_mutex_unlock(&dp.lock);
    return found;
}

static int port_mine(const port_t *p)
{
    return p->job == mf_vci_job_key() && p->rank == mf_global.world_rank;
}

mf_status_t mf_dynproc_close_port(const char *name, mf_dynproc_err_t *err)
{
    port_t p;
    if (!port_parse(name, &p)) {
        fail(err, MPI_ERR_PORT, "argument port_name: \"%.60s\" is not a port name", name);
        return MF_ERR_INVALID;
    }
    if (!port_mine(&p) || !port_is_open(p.id, 1)) {
        fail(err, MPI_ERR_PORT,
             "argument port_name: port %d is not open on this process (closed already, or "
             "opened by another process)",
             p.id);
        return MF_ERR_INVALID;
    }
    return MF_OK;
}

/* ---- the roots' handshake ------------------------------------------------------------------ */

/* A two-process view for the roots' messages: rank 0 the acceptor, rank 1 the connector,
 * each naming the other by process number. */
static mf_comm_t root_view(int my_rank, int *procs, unsigned context_id)
{
    mf_comm_t view = {.kind = MF_KIND_COMM,
                      .refs = 1,
                      .vci_spread = 1,
                      .rank = my_rank,
                      .tag_rank = my_rank,
                      .size = 2,
                      .context_id = context_id,
                      .world_ranks = procs,
                      .vci = mf_comm_world.vci};
    return view;
}

static mf_status_t send_msg(mf_comm_t *view, int dest, int tag, const void *buf, size_t len)
{
    mf_request_t *req;
    mf_status_t status = mf_pt2pt_isend(buf, len, dest, tag, view, mf_comm_ctx_user(view),
                                        MF_SEND_STANDARD, 1, &req);
    return status == MF_OK ? mf_request_finish(req) : status;
}

/* Receives a whole message (of any length) matched by mprobe, or returns with *msg_p NULL
 * when `deadline_ns` (0: none) passed first. */
static mf_status_t recv_msg(mf_comm_t *view, int source, int tag, uint64_t deadline_ns,
                            void **msg_p, size_t *len_p)
{
    *msg_p = NULL;
    MPI_Message m;
    MPI_Status st;
    int flag = 0;
    for (unsigned polls = 0;; polls++) {
        mf_status_t status = mf_pt2pt_mprobe(source, tag, view, deadline_ns == 0, &flag, &m, &st);
        if (status != MF_OK)
            return status;
        if (flag)
            break;
        if (mf_now_ns() > deadline_ns)
            return MF_OK;
        /* an answer usually comes within a few hundred microseconds: poll, then doze */
        struct timespec pause = {0, 200000};
        if (polls < 20000)
            sched_yield();
        else
            nanosleep(&pause, NULL);
    }
    size_t len = (size_t)mf_status_bytes(&st);
    void *buf = mf_malloc(len > 0 ? len : 1, "connection message");
    mf_request_t *req;
    mf_status_t status = mf_pt2pt_imrecv(buf, len, m, &req);
    if (status == MF_OK)
        status = mf_request_finish(req);
    if (status != MF_OK || buf == NULL) {
        free(buf);
        return status != MF_OK ? status : MF_ERR_NO_MEMORY;
    }
    *msg_p = buf;
    *len_p = len;
    return MF_OK;
}

static int hello_valid(const void *msg, size_t len)
{
    const hello_t *h = msg;
    return len >= sizeof(*h) && h->magic == HELLO_MAGIC && h->n > 0 && h->tag > 0 &&
           h->tag <= MF_PT2PT_TAG_UB && h->root >= 0 && h->root < h->n &&
           len == sizeof(*h) + sizeof(proc_desc_t) * (size_t)h->n;
}

/* What the roots carry over to the group-wide part. */
typedef struct root_link {
    int procs[2];  /* the view's members: acceptor, connector */
    int send_tag;  /* on messages to the other root */
    int recv_tag;  /* on messages from it */
    unsigned seed; /* the same at both roots */
    int remote_n;  /* descriptions received */
    proc_desc_t *remote;
} root_link_t;

static mf_status_t hello_pack(const proc_desc_t *descs, int n, int root, int tag, void **msg_p,
                              size_t *len_p)
{
    size_t len = sizeof(hello_t) + sizeof(proc_desc_t) * (size_t)n;
    hello_t *h = mf_malloc(len, "connection message");
    if (h == NULL)
        return MF_ERR_NO_MEMORY;
    *h = (hello_t){HELLO_MAGIC, n, tag, root};
    memcpy(h + 1, descs, sizeof(proc_desc_t) * (size_t)n);
    *msg_p = h;
    *len_p = len;
    return MF_OK;
}

static void hello_unpack(void *msg, root_link_t *rl)
{
    const hello_t *h = msg;
    rl->remote_n = h->n;
    rl->remote = msg; /* the descriptions move to the front; the block stays one allocation */
    memmove(msg, h + 1, sizeof(proc_desc_t) * (size_t)rl->remote_n);
}

static mf_status_t accept_root(const port_t *p, const proc_desc_t *descs, int n, int root,
                               int timeout_s, root_link_t *rl, mf_dynproc_err_t *err)
{
    /* the listening view names no connector: the first one's message is taken, whoever sent it */
    rl->procs[0] = rl->procs[1] = mf_global.world_rank;
    mf_comm_t listen = root_view(0, rl->procs, CTX_LISTEN);
    void *msg = NULL;
    size_t len = 0;
    mf_status_t status;
    uint64_t deadline = timeout_s > 0 ? mf_now_ns() + (uint64_t)timeout_s * 1000000000u : 0;
    for (;;) {
        status = recv_msg(&listen, MPI_ANY_SOURCE, p->id, deadline, &msg, &len);
        if (status == MF_OK && msg == NULL) {
            fail(err, MPI_ERR_SPAWN,
                 "the spawned processes did not connect within %d s (MANIFOLD_CONNECT_TIMEOUT)",
                 timeout_s);
            return MF_ERR_NOT_FOUND;
        }
        if (status != MF_OK) {
            fail(err, MPI_ERR_OTHER, "receiving a connection request failed: %s",
                 mf_status_str(status));
            return status;
        }
        if (hello_valid(msg, len))
            break;
        mf_log(MF_LOG_WARN, "dynproc", "ignored a malformed connection request on port %d", p->id);
        free(msg);
    }
    const hello_t *h = msg;
    rl->send_tag = h->tag;
    rl->recv_tag = next_number(&dp.next_tag);
    int their_root = h->root;
    hello_unpack(msg, rl);
    const proc_desc_t *them = &rl->remote[their_root];
    status = mf_vci_add_process(them->job, them->rank, them->addr, them->len, &rl->procs[1]);
    void *reply = NULL;
    if (status == MF_OK)
        status = hello_pack(descs, n, root, rl->recv_tag, &reply, &len);
    if (status == MF_OK) {
        mf_comm_t link = root_view(0, rl->procs, CTX_LINK);
        status = send_msg(&link, 1, rl->send_tag, reply, len);
    }
    free(reply);
    if (status != MF_OK) {
        fail(err, MPI_ERR_OTHER, "answering the connection request failed: %s",
             mf_status_str(status));
        return status;
    }
    rl->seed = (unsigned)p->id * 2654435761u + (unsigned)rl->send_tag * 40503u +
               (unsigned)rl->recv_tag * 7919u;
    return MF_OK;
}

static mf_status_t connect_root(const port_t *p, const proc_desc_t *descs, int n, int root,
                                int timeout_s, root_link_t *rl, mf_dynproc_err_t *err)
{
    rl->procs[1] = mf_global.world_rank;
    mf_status_t status = mf_vci_add_process(p->job, p->rank, p->addr, p->len, &rl->procs[0]);
    if (status != MF_OK) {
        fail(err, MPI_ERR_PORT, "cannot reach the port's process: %s", mf_status_str(status));
        return status;
    }
    rl->recv_tag = next_number(&dp.next_tag);
    void *msg = NULL;
    size_t len = 0;
    status = hello_pack(descs, n, root, rl->recv_tag, &msg, &len);
    if (status == MF_OK) {
        mf_comm_t listen = root_view(1, rl->procs, CTX_LISTEN);
        status = send_msg(&listen, 0, p->id, msg, len);
    }
    free(msg);
    msg = NULL;
    if (status == MF_OK) {
        mf_comm_t link = root_view(1, rl->procs, CTX_LINK);
        uint64_t deadline = timeout_s > 0 ? mf_now_ns() + (uint64_t)timeout_s * 1000000000u : 0;
        status = recv_msg(&link, 0, rl->recv_tag, deadline, &msg, &len);
        if (status == MF_OK && msg == NULL) {
            fail(err, MPI_ERR_PORT,
                 "no process accepted on port %d within %d s (MANIFOLD_CONNECT_TIMEOUT): the "
                 "port may be closed, or its process busy or gone",
                 p->id, timeout_s);
            return MF_ERR_NOT_FOUND;
        }
    }
    if (status == MF_OK && !hello_valid(msg, len)) {
        free(msg);
        fail(err, MPI_ERR_OTHER, "the accepting process sent a malformed answer");
        return MF_ERR_PROTOCOL;
    }
    if (status != MF_OK) {
        fail(err, MPI_ERR_OTHER, "the connection request failed: %s", mf_status_str(status));
        return status;
    }
    rl->send_tag = ((const hello_t *)msg)->tag;
    hello_unpack(msg, rl);
    rl->seed = (unsigned)p->id * 2654435761u + (unsigned)rl->recv_tag * 40503u +
               (unsigned)rl->send_tag * 7919u;
    return MF_OK;
}

/* ---- accept and connect ---------------------------------------------------------------------- */

/* What the root tells its group after the handshake. */
typedef struct verdict {
    mf_dynproc_err_t err;
    int remote_n;
    unsigned seed;
} verdict_t;

mf_status_t mf_dynproc_connect(mf_comm_t *comm, int root, const char *port_name, int accept,
                               int timeout_s, mf_dynproc_err_t *err, mf_comm_t **inter_p)
{
    memset(err, 0, sizeof(*err));
    *inter_p = NULL;
    mf_comm_t *lc;
    mf_status_t status = mf_comm_dup_private(comm, &lc);
    if (status != MF_OK) {
        fail(err, class_of(status), "cannot copy comm: %s", mf_status_str(status));
        return status;
    }
    proc_desc_t me, *descs = NULL;
    my_desc(&me);
    int is_root = lc->rank == root;
    if (is_root) {
        descs = mf_malloc(sizeof(proc_desc_t) * (size_t)lc->size, "process descriptions");
        if (descs == NULL)
            status = MF_ERR_NO_MEMORY;
    }
    mf_status_t gathered = mf_coll_gather(lc, &me, sizeof(me), descs, root);
    root_link_t rl = {{-1, -1}, 0, 0, 0, 0, NULL};
    verdict_t v;
    memset(&v, 0, sizeof(v));
    if (is_root) {
        port_t p;
        if (status != MF_OK || gathered != MF_OK)
            fail(&v.err, MPI_ERR_OTHER, "collecting the group's addresses failed: %s",
                 mf_status_str(status != MF_OK ? status : gathered));
        else if (me.len == 0)
            fail(&v.err, MPI_ERR_INTERN, "this process's address is too long to send");
        else if (!port_parse(port_name, &p))
            fail(&v.err, MPI_ERR_PORT, "argument port_name: \"%.60s\" is not a port name",
                 port_name);
        else if (accept && (!port_mine(&p) || !port_is_open(p.id, 0)))
            fail(&v.err, MPI_ERR_PORT,
                 "argument port_name: port %d is not open on this process (MPI_Comm_accept "
                 "runs where MPI_Open_port did)",
                 p.id);
        else
            status = accept ? accept_root(&p, descs, lc->size, root, timeout_s, &rl, &v.err)
                            : connect_root(&p, descs, lc->size, root, timeout_s, &rl, &v.err);
        v.remote_n = rl.remote_n;
        v.seed = rl.seed;
    }
    free(descs);
    status = mf_coll_bcast(lc, &v, sizeof(v), root);
    if (status == MF_OK && v.err.err_class != 0)
        status = MF_ERR_INVALID;
    if (status == MF_OK && !is_root) {
        rl.remote = mf_malloc(sizeof(proc_desc_t) * (size_t)v.remote_n, "process descriptions");
        if (rl.remote == NULL)
            status = MF_ERR_NO_MEMORY;
    }
    /* One description per broadcast, so that a member that could not allocate still takes
     * part (into a scratch one) and fails after the others have what they need. */
    proc_desc_t scratch;
    for (int i = 0; v.err.err_class == 0 && i < v.remote_n; i++) {
        mf_status_t st = mf_coll_bcast(lc, rl.remote != NULL ? &rl.remote[i] : &scratch,
                                       sizeof(proc_desc_t), root);
        if (status == MF_OK)
            status = st;
    }
    int *rranks = NULL;
    if (status == MF_OK) {
        rranks = mf_malloc(sizeof(int) * (size_t)v.remote_n, "remote group ranks");
        status = rranks == NULL ? MF_ERR_NO_MEMORY : MF_OK;
    }
    for (int i = 0; status == MF_OK && i < v.remote_n; i++) {
        const proc_desc_t *d = &rl.remote[i];
        status = mf_vci_add_process(d->job, d->rank, d->addr, d->len, &rranks[i]);
    }
    free(rl.remote);
    if (status != MF_OK) {
        if (v.err.err_class != 0)
            *err = v.err;
        else
            fail(err, class_of(status), "setting up the connection failed: %s",
                 mf_status_str(status));
        free(rranks);
        mf_comm_free(lc);
        return status;
    }
    /* From here a failure of one member is not seen by the others: the agreement itself
     * reports failures (a peer that is gone) to everyone taking part. */
    mf_comm_t link = root_view(accept ? 0 : 1, rl.procs, CTX_LINK);
    MPI_Errhandler eh = mf_errhandler_acquire(&comm->errhandler);
    status = mf_comm_inter_finish(lc, root, is_root ? &link : NULL, accept ? 1 : 0, rl.send_tag,
                                  rl.recv_tag, v.seed, v.remote_n, rranks, eh, inter_p);
    mf_errhandler_release(eh);
    free(rranks);
    if (status != MF_OK)
        fail(err, class_of(status), "agreeing on the new communicator failed: %s",
             mf_status_str(status));
    return status;
}

/* ---- spawning ------------------------------------------------------------------------------ */

/* "n0,n1,...": the processes of each command, for MF_SPAWN_SIZES_KEY; empty when it does not
 * fit (the children then keep what their launcher says). */
static void spawn_sizes(int ncmds, const mf_pmi_spawn_cmd_t *cmds, char *out, size_t size)
{
    size_t len = 0;
    out[0] = '\0';
    for (int c = 0; c < ncmds; c++) {
        int n = snprintf(out + len, size - len, c > 0 ? ",%d" : "%d", cmds[c].maxprocs);
        if (n < 0 || (size_t)n >= size - len) {
            out[0] = '\0';
            return;
        }
        len += (size_t)n;
    }
}

mf_status_t mf_dynproc_spawn(mf_comm_t *comm, int root, int ncmds, const mf_pmi_spawn_cmd_t *cmds,
                             const mf_dynproc_err_t *root_err, mf_dynproc_err_t *err,
                             mf_comm_t **inter_p)
{
    memset(err, 0, sizeof(*err));
    *inter_p = NULL;
    /* The root opens a port, the launcher starts the children with its name in their key
     * space, and their MPI_Init connects to it while the parents accept. */
    char port[MPI_MAX_PORT_NAME] = "";
    mf_dynproc_err_t v;
    memset(&v, 0, sizeof(v));
    if (comm->rank == root) {
        if (root_err->err_class != 0)
            v = *root_err;
        else if (mf_dynproc_open_port(port, sizeof(port), &v) == MF_OK) {
            char sizes[512];
            const char *keys[] = {MF_PARENT_PORT_KEY, MF_SPAWN_SIZES_KEY}, *vals[] = {port, sizes};
            spawn_sizes(ncmds, cmds, sizes, sizeof(sizes));
            mf_status_t status = mf_pmi_spawn(ncmds, cmds, sizes[0] != '\0' ? 2 : 1, keys, vals);
            if (status == MF_ERR_UNSUPPORTED)
                fail(&v, MPI_ERR_SPAWN,
                     "the launcher cannot start processes (a program started without one "
                     "found no mpiexec next to the library to start: run it under mpiexec)");
            else if (status != MF_OK)
                fail(&v, MPI_ERR_SPAWN, "the launcher could not start the processes: %s",
                     mf_status_str(status));
            if (status != MF_OK) {
                mf_dynproc_err_t ignored;
                mf_dynproc_close_port(port, &ignored);
            }
        }
    }
    mf_status_t status = mf_coll_bcast(comm, &v, sizeof(v), root);
    if (status != MF_OK) {
        fail(err, class_of(status), "the spawn's outcome did not reach every process: %s",
             mf_status_str(status));
        return status;
    }
    if (v.err_class != 0) {
        *err = v;
        return MF_ERR_INVALID;
    }
    /* Some launchers (hydra) report a program they could not start only on their own
     * output: children that never connect end the spawn after the time limit. */
    status = mf_dynproc_connect(comm, root, port, 1, mf_params.connect_timeout, err, inter_p);
    if (comm->rank == root) {
        mf_dynproc_err_t ignored;
        mf_dynproc_close_port(port, &ignored);
    }
    return status;
}

/* ---- spawned processes' parents ----------------------------------------------------------------
 */

/* A child whose launcher reports no appnum: its command's number from MF_SPAWN_SIZES_KEY. */
static void appnum_from_sizes(void)
{
    char sizes[512];
    if (mf_global.appnum >= 0 || mf_pmi_get(-1, MF_SPAWN_SIZES_KEY, sizes, sizeof(sizes)) != MF_OK)
        return;
    long first = 0;
    char *p = sizes;
    for (int c = 0; *p != '\0'; c++) {
        char *end;
        long n = strtol(p, &end, 10);
        if (end == p || n < 0)
            return;
        if (mf_global.world_rank < first + n) {
            mf_global.appnum = c;
            return;
        }
        first += n;
        p = *end == ',' ? end + 1 : end;
    }
}

mf_status_t mf_dynproc_init_parent(void)
{
    char port[MPI_MAX_PORT_NAME];
    mf_status_t status = MF_OK;
    appnum_from_sizes();
    if (mf_global.world_rank == 0)
        status = mf_pmi_get(-1, MF_PARENT_PORT_KEY, port, sizeof(port));
    if (status != MF_OK) {
        mf_log(MF_LOG_ERROR, "dynproc", "spawned, but the parents' port is unknown: %s",
               mf_status_str(status));
        return status;
    }
    mf_dynproc_err_t err;
    mf_comm_t *inter;
    status = mf_dynproc_connect(&mf_comm_world, 0, port, 0, 0, &err, &inter);
    if (status != MF_OK) {
        mf_log(MF_LOG_ERROR, "dynproc", "cannot connect to the parents: %s", err.why);
        return status;
    }
    pthread_mutex_lock(&inter->name_lock);
    snprintf(inter->name, sizeof(inter->name), "MPI_COMM_PARENT");
    pthread_mutex_unlock(&inter->name_lock);
    pthread_mutex_lock(&dp.lock);
    dp.parent = inter;
    pthread_mutex_unlock(&dp.lock);
    return MF_OK;
}

mf_comm_t *mf_dynproc_parent(void)
{
    pthread_mutex_lock(&dp.lock);
    mf_comm_t *parent = dp.parent;
    pthread_mutex_unlock(&dp.lock);
    return parent;
}

void mf_dynproc_forget(mf_comm_t *comm)
{
    pthread_mutex_lock(&dp.lock);
    if (dp.parent == comm)
        dp.parent = NULL;
    pthread_mutex_unlock(&dp.lock);
}

void mf_dynproc_fini(void)
{
    /* Connection requests nobody accepted (the connector gave up, or the port was closed) */
    unsigned shift = MF_PT2PT_SRC_BITS + MF_PT2PT_TAG_BITS;
    mf_vci_pool_discard((uint64_t)(CTX_LISTEN << 1) << shift,
                        (((uint64_t)1 << MF_PT2PT_CTX_BITS) - 1) << shift);
    pthread_mutex_lock(&dp.lock);
    free(dp.open);
    dp.open = NULL;
    dp.nopen = dp.cap = 0;
    dp.parent = NULL;
    pthread_mutex_unlock(&dp.lock);
}
