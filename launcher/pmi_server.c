/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher: the PMI server mpiexec runs for the processes it starts. Each process talks PMI-1
 * or PMI-2 over its end of a socketpair; this file parses those requests with the shared wire
 * codec (src/pmi/pmi_wire.h), keeps every job's key space and node attributes, runs each job's
 * barrier, passes spawn requests to mpiexec, keeps the name service shared by all jobs and
 * records abort requests for mpiexec to act on. Unknown or malformed requests get an error
 * reply; a process that breaks PMI-2 framing loses its connection.
 */
#define _GNU_SOURCE
#include "mpiexec.h"
#include "pmi_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define KVS_BUCKETS_MAX 1024
#define IN_BUF_FIRST    4096
#define IN_BUF_LIMIT    (64 * 1024) /* a rank that sends more without a full message is broken */

typedef struct kv {
    struct kv *next;
    char *value;
    char key[]; /* key, then value, in one allocation */
} kv_t;

typedef struct kvs {
    unsigned nbuckets;
    kv_t **buckets;
} kvs_t;

typedef struct conn {
    int fd;
    int job, rank, appnum;
    int version; /* framing of the next message: 1 until an init asks for 2 */
    int state;   /* MF_PMI_RANK_* */
    int in_barrier;
    char *wait_key;        /* info-getnodeattr with wait=TRUE that is not answered yet */
    mf_spawn_req_t *spawn; /* a PMI-1 spawn whose last block has not come yet */
    size_t len, cap;
    char *buf;
} conn_t;

/* One job: the first, or one spawn's processes. */
typedef struct pmi_job {
    int size;
    int per_node; /* ranks per reported node (blocks of consecutive ranks) */
    int parent;   /* the job that spawned it, -1 for the first */
    int barrier_waiting;
    char kvsname[64];
    char mapping[64];
    kvs_t kvs, node_attrs;
} pmi_job_t;

/* Jobs and connections are arrays of pointers: a spawn served while a request is being
 * handled adds to both, and the request's own entries must stay where they are. */
struct mf_pmi_server {
    int versions;
    int universe; /* MPI_UNIVERSE_SIZE given on the command line; 0: from the host */
    mf_pmi_spawn_fn_t spawn;
    void *spawn_ctx;
    int njobs, nconns;
    pmi_job_t **jobs;
    conn_t **conns; /* by process id; NULL where never attached */
    kvs_t names;    /* the name service: service -> port, for all jobs */
    int aborted;
    mf_pmi_abort_t abort;
};

/* One request being served: who sent it and the name its reply carries. */
typedef struct request {
    mf_pmi_server_t *server;
    int id;
    conn_t *conn;
    pmi_job_t *job;
    const mf_pmi_msg_t *msg;
    const char *reply_cmd;
} request_t;

static unsigned kvs_hash(const kvs_t *kvs, const char *key)
{
    unsigned hash = 2166136261u; /* FNV-1a */
    for (; *key != '\0'; key++)
        hash = (hash ^ (unsigned char)*key) * 16777619u;
    return hash % kvs->nbuckets;
}

/* About 8 keys per process before chains grow; a small job needs no 8 KiB table. */
static mf_status_t kvs_init(kvs_t *kvs, int nprocs)
{
    kvs->nbuckets = 16;
    while (kvs->nbuckets < KVS_BUCKETS_MAX && kvs->nbuckets < 8u * (unsigned)nprocs)
        kvs->nbuckets *= 2;
    kvs->buckets = mf_calloc(kvs->nbuckets, sizeof(kv_t *), "pmi key space");
    return kvs->buckets != NULL ? MF_OK : MF_ERR_NO_MEMORY;
}

static kv_t **kvs_find(kvs_t *kvs, const char *key)
{
    kv_t **link = &kvs->buckets[kvs_hash(kvs, key)];
    while (*link != NULL && strcmp((*link)->key, key) != 0)
        link = &(*link)->next;
    return link;
}

static const char *kvs_get(kvs_t *kvs, const char *key)
{
    kv_t *kv = *kvs_find(kvs, key);
    return kv != NULL ? kv->value : NULL;
}

static int kvs_remove(kvs_t *kvs, const char *key)
{
    kv_t **link = kvs_find(kvs, key), *kv = *link;
    if (kv == NULL)
        return 0;
    *link = kv->next;
    free(kv);
    return 1;
}

/* A later put of the same key replaces the value, as hydra does. */
static mf_status_t kvs_put(kvs_t *kvs, const char *key, const char *value)
{
    size_t key_len = strlen(key), value_len = strlen(value);
    kv_t **link = kvs_find(kvs, key);
    kv_t *kv = mf_malloc(sizeof(*kv) + key_len + value_len + 2, "pmi key");
    if (kv == NULL)
        return MF_ERR_NO_MEMORY;
    memcpy(kv->key, key, key_len + 1);
    kv->value = kv->key + key_len + 1;
    memcpy(kv->value, value, value_len + 1);
    kv->next = NULL;
    if (*link != NULL) {
        kv->next = (*link)->next;
        free(*link);
    }
    *link = kv;
    return MF_OK;
}

static void kvs_clear(kvs_t *kvs)
{
    for (unsigned b = 0; kvs->buckets != NULL && b < kvs->nbuckets; b++) {
        while (kvs->buckets[b] != NULL) {
            kv_t *kv = kvs->buckets[b];
            kvs->buckets[b] = kv->next;
            free(kv);
        }
    }
    free(kvs->buckets);
    kvs->buckets = NULL;
}

mf_status_t mf_pmi_server_create(int versions, mf_pmi_spawn_fn_t spawn, void *spawn_ctx,
                                 mf_pmi_server_t **server_p)
{
    mf_pmi_server_t *server = mf_calloc(1, sizeof(*server), "pmi server");
    if (server == NULL)
        return MF_ERR_NO_MEMORY;
    server->versions = versions;
    server->spawn = spawn;
    server->spawn_ctx = spawn_ctx;
    if (kvs_init(&server->names, 8) != MF_OK) {
        free(server);
        return MF_ERR_NO_MEMORY;
    }
    *server_p = server;
    return MF_OK;
}

static void job_free(pmi_job_t *job)
{
    if (job == NULL)
        return;
    kvs_clear(&job->kvs);
    kvs_clear(&job->node_attrs);
    free(job);
}

void mf_pmi_server_set_universe(mf_pmi_server_t *server, int universe)
{
    server->universe = universe;
}

int mf_pmi_server_add_job(mf_pmi_server_t *server, int size, int ppn, int parent)
{
    pmi_job_t **jobs = realloc(server->jobs, (size_t)(server->njobs + 1) * sizeof(*jobs));
    if (jobs == NULL)
        return -1;
    server->jobs = jobs;
    pmi_job_t *job = mf_calloc(1, sizeof(*job), "pmi job");
    if (job == NULL || kvs_init(&job->kvs, size) != MF_OK ||
        kvs_init(&job->node_attrs, size) != MF_OK) {
        job_free(job);
        return -1;
    }
    job->size = size;
    job->parent = parent;
    snprintf(job->kvsname, sizeof(job->kvsname), "kvs_%d_%d", (int)getpid(), server->njobs);
    /* One host. Without ppn it is one node holding all ranks; with ppn the ranks are reported
     * as consecutive blocks of ppn on nodes 0, 1, ... (the last block may be shorter). */
    job->per_node = ppn > 0 && ppn < size ? ppn : size;
    snprintf(job->mapping, sizeof(job->mapping), "(vector,(0,%d,%d))",
             (size + job->per_node - 1) / job->per_node, job->per_node);
    server->jobs[server->njobs] = job;
    return server->njobs++;
}

static void conn_close(conn_t *conn)
{
    if (conn->fd >= 0 && close(conn->fd) != 0)
        mf_log(MF_LOG_WARN, "mpiexec", "closing a pmi socket failed: %s", strerror(errno));
    conn->fd = -1;
    free(conn->buf);
    free(conn->wait_key);
    mf_spawn_req_free(conn->spawn);
    conn->spawn = NULL;
    conn->buf = conn->wait_key = NULL;
    conn->len = conn->cap = 0;
}

void mf_pmi_server_destroy(mf_pmi_server_t *server)
{
    if (server == NULL)
        return;
    for (int id = 0; id < server->nconns; id++) {
        if (server->conns[id] != NULL)
            conn_close(server->conns[id]);
        free(server->conns[id]);
    }
    for (int j = 0; j < server->njobs; j++)
        job_free(server->jobs[j]);
    kvs_clear(&server->names);
    free(server->conns);
    free(server->jobs);
    free(server);
}

mf_status_t mf_pmi_server_put(mf_pmi_server_t *server, int job, const char *key, const char *value)
{
    return kvs_put(&server->jobs[job]->kvs, key, value);
}

mf_status_t mf_pmi_server_attach(mf_pmi_server_t *server, int id, int job, int rank, int appnum,
                                 int fd)
{
    if (id >= server->nconns) {
        conn_t **conns = realloc(server->conns, (size_t)(id + 1) * sizeof(*conns));
        if (conns == NULL)
            return MF_ERR_NO_MEMORY;
        for (int i = server->nconns; i <= id; i++)
            conns[i] = NULL;
        server->conns = conns;
        server->nconns = id + 1;
    }
    if (server->conns[id] != NULL)
        conn_close(server->conns[id]); /* of a process whose job failed to start */
    else if ((server->conns[id] = mf_malloc(sizeof(conn_t), "pmi connection")) == NULL)
        return MF_ERR_NO_MEMORY;
    *server->conns[id] =
        (conn_t){.fd = fd, .job = job, .rank = rank, .appnum = appnum, .version = 1};
    return MF_OK;
}

int mf_pmi_server_fd(const mf_pmi_server_t *server, int id)
{
    return id < server->nconns && server->conns[id] != NULL ? server->conns[id]->fd : -1;
}

int mf_pmi_server_rank_state(const mf_pmi_server_t *server, int id)
{
    return id < server->nconns && server->conns[id] != NULL ? server->conns[id]->state : 0;
}

int mf_pmi_server_barrier_waiting(const mf_pmi_server_t *server, int job)
{
    return server->jobs[job]->barrier_waiting;
}

const mf_pmi_abort_t *mf_pmi_server_abort_request(const mf_pmi_server_t *server)
{
    return server->aborted ? &server->abort : NULL;
}

/* How mpiexec names a process in its messages: "rank 2" in the first job, "job 1 rank 0" in
 * spawned ones. */
static const char *conn_name(const conn_t *conn, char *buf, size_t size)
{
    if (conn->job == 0)
        snprintf(buf, size, "rank %d", conn->rank);
    else
        snprintf(buf, size, "job %d rank %d", conn->job, conn->rank);
    return buf;
}

/* Replies go out with blocking writes: they are small and the process waits for them. A
 * process that died makes the write fail, which its exit status will explain. */
static void conn_send(conn_t *conn, mf_pmi_out_t *out)
{
    char name[48];
    mf_status_t status = mf_pmi_out_end(out);
    if (status != MF_OK) {
        mf_log(MF_LOG_ERROR, "mpiexec", "cannot encode pmi reply to %s: %s",
               conn_name(conn, name, sizeof(name)), mf_status_str(status));
        return;
    }
    for (size_t done = 0; done < out->len && conn->fd >= 0;) {
        ssize_t n = send(conn->fd, out->buf + done, out->len - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            mf_log(MF_LOG_DEBUG, "mpiexec", "pmi reply to %s lost: %s",
                   conn_name(conn, name, sizeof(name)), strerror(errno));
            return;
        }
        done += (size_t)n;
    }
}

static void reply_begin(const request_t *req, mf_pmi_out_t *out, int rc)
{
    mf_pmi_out_begin(out, req->conn->version, req->reply_cmd);
    mf_pmi_out_add_int(out, "rc", rc);
}

static void reply_error(const request_t *req, const char *why)
{
    mf_pmi_out_t out;
    reply_begin(req, &out, 1);
    mf_pmi_out_add(&out, req->conn->version == 2 ? "errmsg" : "msg", why);
    conn_send(req->conn, &out);
}

static void reply_ok(const request_t *req)
{
    mf_pmi_out_t out;
    reply_begin(req, &out, 0);
    conn_send(req->conn, &out);
}

/* PMI-1 answers a lookup with rc and value; PMI-2 with found=TRUE/FALSE. */
static void reply_value(const request_t *req, const char *value)
{
    mf_pmi_out_t out;
    if (value == NULL && req->conn->version == 1) {
        reply_error(req, "key not found");
        return;
    }
    reply_begin(req, &out, 0);
    if (req->conn->version == 2)
        mf_pmi_out_add(&out, "found", value != NULL ? "TRUE" : "FALSE");
    if (value != NULL)
        mf_pmi_out_add(&out, "value", value);
    conn_send(req->conn, &out);
}

static void handle_init(request_t *req)
{
    int version = 0;
    mf_pmi_out_t out;
    if (mf_pmi_msg_get_int(req->msg, "pmi_version", &version) != MF_OK ||
        (version != 1 && version != 2)) {
        reply_error(req, "pmi_version must be 1 or 2");
        return;
    }
    int mask = version == 1 ? MF_PMI_SERVE_V1 : MF_PMI_SERVE_V2;
    if ((req->server->versions & mask) == 0) {
        reply_error(req, "this pmi version is disabled by --pmi");
        return;
    }
    reply_begin(req, &out, 0);
    mf_pmi_out_add_int(&out, "pmi_version", version);
    mf_pmi_out_add_int(&out, "pmi_subversion", version == 1 ? 1 : 0);
    /* Tells our client that mpiexec prints abort messages, so the rank need not. */
    mf_pmi_out_add(&out, "launcher", "manifold");
    conn_send(req->conn, &out);
    req->conn->version = version;
    req->conn->state |= MF_PMI_RANK_INITIALIZED;
}

static void handle_fullinit(request_t *req)
{
    int claimed = -1;
    mf_pmi_out_t out;
    if (mf_pmi_msg_get_int(req->msg, "pmirank", &claimed) == MF_OK && claimed != req->conn->rank) {
        reply_error(req, "pmirank does not match PMI_RANK of this connection");
        return;
    }
    reply_begin(req, &out, 0);
    mf_pmi_out_add_int(&out, "rank", req->conn->rank);
    mf_pmi_out_add_int(&out, "size", req->job->size);
    mf_pmi_out_add_int(&out, "appnum", req->conn->appnum);
    /* as hydra: a spawned job learns who spawned it */
    if (req->job->parent >= 0)
        mf_pmi_out_add(&out, "spawner-jobid", req->server->jobs[req->job->parent]->kvsname);
    conn_send(req->conn, &out);
}

static void handle_maxes(request_t *req)
{
    mf_pmi_out_t out;
    reply_begin(req, &out, 0);
    mf_pmi_out_add_int(&out, "kvsname_max", 256);
    mf_pmi_out_add_int(&out, "keylen_max", 64);
    mf_pmi_out_add_int(&out, "vallen_max", 1024);
    conn_send(req->conn, &out);
}

static void handle_int_query(request_t *req, const char *key, int value)
{
    mf_pmi_out_t out;
    reply_begin(req, &out, 0);
    mf_pmi_out_add_int(&out, key, value);
    conn_send(req->conn, &out);
}

static void handle_appnum(request_t *req)
{
    handle_int_query(req, "appnum", req->conn->appnum);
}

/* MPI_UNIVERSE_SIZE: the command line's (--universe-size), else how many processes this host
 * runs usefully, the processors online, but never fewer than the first job has. Every job of
 * the run sees the same number. */
static int universe_size(const mf_pmi_server_t *server)
{
    if (server->universe > 0)
        return server->universe;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int first = server->njobs > 0 ? server->jobs[0]->size : 1;
    return cpus > first ? (int)cpus : first;
}

static void handle_universe(request_t *req)
{
    handle_int_query(req, "size", universe_size(req->server));
}

static void handle_kvsname(request_t *req)
{
    mf_pmi_out_t out;
    reply_begin(req, &out, 0);
    mf_pmi_out_add(&out, req->conn->version == 2 ? "jobid" : "kvsname", req->job->kvsname);
    conn_send(req->conn, &out);
}

static void handle_put(request_t *req)
{
    const char *key = mf_pmi_msg_get(req->msg, "key");
    const char *value = mf_pmi_msg_get(req->msg, "value");
    if (key == NULL || key[0] == '\0' || value == NULL)
        reply_error(req, "put needs key and value");
    else if (strncmp(key, "PMI_", 4) == 0)
        reply_error(req, "keys starting with PMI_ are reserved");
    else if (kvs_put(&req->job->kvs, key, value) != MF_OK)
        reply_error(req, "out of memory");
    else
        reply_ok(req);
}

/* The launcher's attributes: PMI_process_mapping, and PMI-2's universeSize (as hydra). */
static const char *job_attr(request_t *req, const char *key, char *buf, size_t size)
{
    if (strcmp(key, "universeSize") == 0) {
        snprintf(buf, size, "%d", universe_size(req->server));
        return buf;
    }
    return strcmp(key, "PMI_process_mapping") == 0 ? req->job->mapping : NULL;
}

/* PMI-1 get serves both job keys and the launcher's PMI_ attributes; so does info-getjobattr.
 * A process reads its own job's key space, whatever jobid it names. */
static void handle_get(request_t *req)
{
    const char *key = mf_pmi_msg_get(req->msg, "key");
    if (key == NULL) {
        reply_error(req, "get needs a key");
        return;
    }
    char number[16];
    if (strncmp(key, "PMI_", 4) == 0 || strcmp(mf_pmi_msg_cmd(req->msg), "info-getjobattr") == 0)
        reply_value(req, job_attr(req, key, number, sizeof(number)));
    else
        reply_value(req, kvs_get(&req->job->kvs, key));
}

/* The barrier of the requester's job: all its processes get their reply when the last one
 * arrives. */
static void handle_barrier(request_t *req)
{
    mf_pmi_server_t *server = req->server;
    if (req->conn->in_barrier) {
        reply_error(req, "already waiting in the barrier");
        return;
    }
    req->conn->in_barrier = 1;
    if (++req->job->barrier_waiting < req->job->size)
        return;
    req->job->barrier_waiting = 0;
    for (int id = 0; id < server->nconns; id++) {
        conn_t *conn = server->conns[id];
        if (conn == NULL || conn->job != req->conn->job || !conn->in_barrier)
            continue;
        request_t waiter = {server, id,
                            conn,   req->job,
                            NULL,   conn->version == 2 ? "kvs-fence-response" : "barrier_out"};
        conn->in_barrier = 0;
        reply_ok(&waiter);
    }
}

/* Node attributes are kept per job and reported node: "<node>/<key>". */
static int node_attr_key(const request_t *req, const char *key, char *buf, size_t size)
{
    int len = snprintf(buf, size, "%d/%s", req->conn->rank / req->job->per_node, key);
    return len > 0 && (size_t)len < size;
}

static void handle_putnodeattr(request_t *req)
{
    mf_pmi_server_t *server = req->server;
    const char *name = mf_pmi_msg_get(req->msg, "key");
    const char *value = mf_pmi_msg_get(req->msg, "value");
    char key[MF_PMI_WIRE_MAX];
    if (name == NULL || value == NULL) {
        reply_error(req, "info-putnodeattr needs key and value");
        return;
    }
    if (!node_attr_key(req, name, key, sizeof(key))) {
        reply_error(req, "info-putnodeattr key is too long");
        return;
    }
    if (kvs_put(&req->job->node_attrs, key, value) != MF_OK) {
        reply_error(req, "out of memory");
        return;
    }
    reply_ok(req);
    for (int id = 0; id < server->nconns; id++) {
        conn_t *conn = server->conns[id];
        if (conn == NULL || conn->job != req->conn->job || conn->wait_key == NULL ||
            strcmp(conn->wait_key, key) != 0)
            continue;
        request_t waiter = {server, id, conn, req->job, NULL, "info-getnodeattr-response"};
        reply_value(&waiter, value);
        free(conn->wait_key);
        conn->wait_key = NULL;
    }
}

static void handle_getnodeattr(request_t *req)
{
    const char *name = mf_pmi_msg_get(req->msg, "key");
    const char *wait = mf_pmi_msg_get(req->msg, "wait");
    char key[MF_PMI_WIRE_MAX];
    if (name == NULL) {
        reply_error(req, "info-getnodeattr needs a key");
        return;
    }
    if (!node_attr_key(req, name, key, sizeof(key))) {
        reply_error(req, "info-getnodeattr key is too long");
        return;
    }
    const char *value = kvs_get(&req->job->node_attrs, key);
    if (value == NULL && wait != NULL && strcmp(wait, "TRUE") == 0) {
        free(req->conn->wait_key);
        req->conn->wait_key = strdup(key); /* answered by the matching info-putnodeattr */
        if (req->conn->wait_key != NULL)
            return;
        mf_log(MF_LOG_ERROR, "mpiexec", "cannot remember node attribute '%s'", key);
    }
    reply_value(req, value);
}

/* Answers a complete spawn request (and frees it): mpiexec starts the processes, and the
 * answer goes out once they run, or says why they do not. */
static void answer_spawn(request_t *req, mf_spawn_req_t *spawn)
{
    mf_pmi_server_t *server = req->server;
    mf_pmi_out_t out;
    char why[256] = "";
    int job = -1;
    if (spawn == NULL) {
        snprintf(why, sizeof(why), "out of memory");
    } else if (spawn->error[0] != '\0') {
        snprintf(why, sizeof(why), "%s", spawn->error);
    } else {
        spawn->parent_job = req->conn->job;
        job = server->spawn(server->spawn_ctx, spawn, why, sizeof(why));
    }
    mf_spawn_req_free(spawn);
    if (job < 0) {
        reply_error(req, why[0] != '\0' ? why : "spawn failed");
        return;
    }
    reply_begin(req, &out, 0);
    if (req->conn->version == 2)
        mf_pmi_out_add(&out, "jobid", server->jobs[job]->kvsname);
    conn_send(req->conn, &out);
}

/* PMI-1 sends one block per command and waits for one answer after the last. */
static void handle_spawn(request_t *req)
{
    if (req->conn->version == 2) {
        answer_spawn(req, mf_spawn_req_parse_v2(req->msg));
    } else if (mf_spawn_req_add_v1(&req->conn->spawn, req->msg)) {
        mf_spawn_req_t *spawn = req->conn->spawn;
        req->conn->spawn = NULL;
        answer_spawn(req, spawn);
    }
}

/* The service name: "service" in PMI-1, "name" in PMI-2. */
static const char *service_arg(const request_t *req)
{
    const char *service = mf_pmi_msg_get(req->msg, req->conn->version == 2 ? "name" : "service");
    if (service == NULL || service[0] == '\0') {
        reply_error(req, "the request needs a service name");
        return NULL;
    }
    return service;
}

static void handle_publish(request_t *req)
{
    const char *service = service_arg(req), *port = mf_pmi_msg_get(req->msg, "port");
    if (service == NULL)
        return;
    if (port == NULL)
        reply_error(req, "publish needs a port");
    else if (kvs_get(&req->server->names, service) != NULL)
        reply_error(req, "the service name is already published");
    else if (kvs_put(&req->server->names, service, port) != MF_OK)
        reply_error(req, "out of memory");
    else
        reply_ok(req);
}

/* Any process may unpublish any name: the standard does not tie a name to its publisher. */
static void handle_unpublish(request_t *req)
{
    const char *service = service_arg(req);
    if (service != NULL && kvs_remove(&req->server->names, service))
        reply_ok(req);
    else if (service != NULL)
        reply_error(req, "the service name is not published");
}

/* Answered with port=, as hydra does in both protocols. */
static void handle_lookup(request_t *req)
{
    const char *service = service_arg(req);
    mf_pmi_out_t out;
    if (service == NULL)
        return;
    const char *port = kvs_get(&req->server->names, service);
    if (port == NULL) {
        reply_error(req, "the service name is not published");
        return;
    }
    reply_begin(req, &out, 0);
    mf_pmi_out_add(&out, "port", port);
    conn_send(req->conn, &out);
}

static void handle_finalize(request_t *req)
{
    req->conn->state |= MF_PMI_RANK_FINALIZED;
    reply_ok(req);
}

static void handle_abort(request_t *req)
{
    mf_pmi_server_t *server = req->server;
    const char *message = mf_pmi_msg_get(req->msg, "message");
    if (server->aborted)
        return;
    server->aborted = 1;
    server->abort.id = req->id;
    if (mf_pmi_msg_get_int(req->msg, "exitcode", &server->abort.exit_code) != MF_OK)
        server->abort.exit_code = 1;
    snprintf(server->abort.message, sizeof(server->abort.message), "%s",
             message != NULL ? message : "");
}

static const struct {
    const char *v1_cmd, *v1_reply, *v2_cmd;
    void (*handle)(request_t *req);
} handlers[] = {
    {"init", "response_to_init", NULL, handle_init},
    {NULL, NULL, "fullinit", handle_fullinit},
    {"get_maxes", "maxes", NULL, handle_maxes},
    {"get_appnum", "appnum", NULL, handle_appnum},
    {"get_universe_size", "universe_size", NULL, handle_universe},
    {"get_my_kvsname", "my_kvsname", "job-getid", handle_kvsname},
    {"put", "put_result", "kvs-put", handle_put},
    {"get", "get_result", "kvs-get", handle_get},
    {NULL, NULL, "info-getjobattr", handle_get},
    {"barrier_in", "barrier_out", "kvs-fence", handle_barrier},
    {NULL, NULL, "info-putnodeattr", handle_putnodeattr},
    {NULL, NULL, "info-getnodeattr", handle_getnodeattr},
    {"spawn", "spawn_result", "spawn", handle_spawn},
    {"publish_name", "publish_result", "name-publish", handle_publish},
    {"unpublish_name", "unpublish_result", "name-unpublish", handle_unpublish},
    {"lookup_name", "lookup_result", "name-lookup", handle_lookup},
    {"finalize", "finalize_ack", "finalize", handle_finalize},
    {"abort", NULL, "abort", handle_abort},
};

static void dispatch(mf_pmi_server_t *server, int id, const mf_pmi_msg_t *msg)
{
    conn_t *conn = server->conns[id];
    const char *cmd = mf_pmi_msg_cmd(msg);
    char reply_cmd[80];
    request_t req = {server, id, conn, server->jobs[conn->job], msg, reply_cmd};
    for (size_t i = 0; i < sizeof(handlers) / sizeof(handlers[0]); i++) {
        const char *name = conn->version == 2 ? handlers[i].v2_cmd : handlers[i].v1_cmd;
        if (name == NULL || strcmp(name, cmd) != 0)
            continue;
        if (conn->version == 2)
            snprintf(reply_cmd, sizeof(reply_cmd), "%s-response", cmd);
        else
            snprintf(reply_cmd, sizeof(reply_cmd), "%s", handlers[i].v1_reply);
        handlers[i].handle(&req);
        return;
    }
    char name[48];
    mf_log(MF_LOG_WARN, "mpiexec", "%s sent unknown pmi-%d command '%.40s'",
           conn_name(conn, name, sizeof(name)), conn->version, cmd);
    snprintf(reply_cmd, sizeof(reply_cmd), conn->version == 2 ? "%.40s-response" : "%.40s_result",
             cmd);
    reply_error(&req, "unknown command");
}

/* A PMI-1 line without cmd= still gets an answer, so the sender is not left waiting. */
static void malformed(mf_pmi_server_t *server, int id)
{
    conn_t *conn = server->conns[id];
    request_t req = {server, id, conn, server->jobs[conn->job], NULL, "error"};
    char name[48];
    mf_log(MF_LOG_WARN, "mpiexec", "%s sent a malformed pmi-%d message",
           conn_name(conn, name, sizeof(name)), conn->version);
    if (conn->version == 1)
        reply_error(&req, "malformed message");
}

/* PMI-1 framing: a line, or a block from "mcmd=" up to its "endcmd" line (spawn). Returns 0
 * while the message is incomplete; else sets the length of its text and of what it used. */
static int v1_message(const conn_t *conn, int *mcmd_p, size_t *len_p, size_t *used_p)
{
    static const char open[] = "mcmd=", close[] = "\nendcmd\n";
    size_t prefix = conn->len < strlen(open) ? conn->len : strlen(open);
    *mcmd_p = conn->len > 0 && memcmp(conn->buf, open, prefix) == 0;
    if (*mcmd_p) {
        const char *end =
            conn->len >= strlen(open) ? memmem(conn->buf, conn->len, close, strlen(close)) : NULL;
        if (end == NULL)
            return 0;
        *len_p = (size_t)(end - conn->buf) + 1;
        *used_p = *len_p + strlen(close) - 1;
        return 1;
    }
    char *newline = memchr(conn->buf, '\n', conn->len);
    if (newline == NULL)
        return 0;
    *len_p = (size_t)(newline - conn->buf);
    *used_p = *len_p + 1;
    return 1;
}

/* Serves every complete message in the connection's buffer; returns MF_ERR_PROTOCOL when
 * PMI-2 framing is broken and the stream cannot be trusted any more. */
static mf_status_t serve_buffered(mf_pmi_server_t *server, int id)
{
    conn_t *conn = server->conns[id];
    for (;;) {
        size_t skip = 0, len, used;
        int mcmd = 0;
        mf_pmi_msg_t msg;
        mf_status_t status;
        if (conn->version == 2) {
            if (conn->len < MF_PMI_V2_HEADER_LEN)
                return MF_OK;
            int body = mf_pmi_wire_v2_body_len(conn->buf);
            if (body < 0 || body >= IN_BUF_LIMIT)
                return MF_ERR_PROTOCOL;
            skip = MF_PMI_V2_HEADER_LEN;
            len = (size_t)body;
            if (conn->len < skip + len)
                return MF_OK;
            used = skip + len;
        } else if (!v1_message(conn, &mcmd, &len, &used)) {
            return MF_OK;
        }
        /* Parse a copy: the message is consumed before its handler runs, and the handler may
         * switch the framing for the bytes that follow. */
        char *text = mf_malloc(len + 1, "pmi request");
        if (text == NULL)
            return MF_ERR_NO_MEMORY;
        memcpy(text, conn->buf + skip, len);
        text[len] = '\0';
        memmove(conn->buf, conn->buf + used, conn->len - used);
        conn->len -= used;
        int version = conn->version;
        if (version == 2)
            status = mf_pmi_wire_parse_v2(text, len, &msg);
        else if (mcmd)
            status = mf_pmi_wire_parse_mcmd(text, &msg);
        else
            status = mf_pmi_wire_parse_v1(text, &msg);
        if (status == MF_OK)
            dispatch(server, id, &msg);
        else
            malformed(server, id);
        free(text);
        if (status != MF_OK && version == 2)
            return MF_ERR_PROTOCOL;
    }
}

/* Makes room for more input; MF_ERR_PROTOCOL when a process sends too much without a
 * message. */
static mf_status_t conn_grow(conn_t *conn)
{
    if (conn->len < conn->cap)
        return MF_OK;
    size_t cap = conn->cap == 0 ? IN_BUF_FIRST : 2 * conn->cap;
    if (cap > IN_BUF_LIMIT)
        return MF_ERR_PROTOCOL;
    char *buf = realloc(conn->buf, cap);
    if (buf == NULL)
        return MF_ERR_NO_MEMORY;
    conn->buf = buf;
    conn->cap = cap;
    return MF_OK;
}

void mf_pmi_server_handle(mf_pmi_server_t *server, int id)
{
    conn_t *conn = id < server->nconns ? server->conns[id] : NULL;
    mf_status_t status = MF_OK;
    while (conn != NULL && conn->fd >= 0 && status == MF_OK) {
        if ((status = conn_grow(conn)) != MF_OK)
            break;
        ssize_t n = recv(conn->fd, conn->buf + conn->len, conn->cap - conn->len, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            conn_close(conn); /* the process closed its end: it finished or died */
            return;
        }
        conn->len += (size_t)n;
        status = serve_buffered(server, id);
    }
    if (status != MF_OK) {
        char name[48];
        mf_log(MF_LOG_ERROR, "mpiexec", "dropping the pmi connection of %s: %s",
               conn_name(conn, name, sizeof(name)), mf_status_str(status));
        conn_close(conn);
    }
}
