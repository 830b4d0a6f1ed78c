/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher: the PMI server mpiexec runs for the processes it starts. Each rank talks PMI-1 or
 * PMI-2 over its end of a socketpair; this file parses those requests with the shared wire
 * codec (src/pmi/pmi_wire.h), keeps the job's key space and node attributes, runs the global
 * barrier and records abort requests for mpiexec to act on. Unknown or malformed requests get
 * an error reply; a rank that breaks PMI-2 framing loses its connection.
 */
#include "mpiexec.h"
#include "pmi_wire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define KVS_BUCKETS  1024
#define IN_BUF_FIRST 4096
#define IN_BUF_LIMIT (64 * 1024) /* a rank that sends more without a full message is broken */

typedef struct kv {
    struct kv *next;
    char *value;
    char key[]; /* key, then value, in one allocation */
} kv_t;

typedef struct kvs {
    kv_t *buckets[KVS_BUCKETS];
} kvs_t;

typedef struct conn {
    int fd;
    int version; /* framing of the next message: 1 until an init asks for 2 */
    int state;   /* MF_PMI_RANK_* */
    int in_barrier;
    char *wait_key; /* info-getnodeattr with wait=TRUE that is not answered yet */
    size_t len, cap;
    char *buf;
} conn_t;

struct mf_pmi_server {
    int size;
    int per_node; /* ranks per reported node (blocks of consecutive ranks) */
    int versions;
    int barrier_waiting;
    int aborted;
    mf_pmi_abort_t abort;
    char kvsname[64];
    char mapping[64];
    kvs_t kvs, node_attrs;
    conn_t conns[];
};

/* One request being served: who sent it and the name its reply carries. */
typedef struct request {
    mf_pmi_server_t *server;
    int rank;
    conn_t *conn;
    const mf_pmi_msg_t *msg;
    const char *reply_cmd;
} request_t;

static unsigned kvs_hash(const char *key)
{
    unsigned hash = 2166136261u; /* FNV-1a */
    for (; *key != '\0'; key++)
        hash = (hash ^ (unsigned char)*key) * 16777619u;
    return hash % KVS_BUCKETS;
}

static kv_t **kvs_find(kvs_t *kvs, const char *key)
{
    kv_t **link = &kvs->buckets[kvs_hash(key)];
    while (*link != NULL && strcmp((*link)->key, key) != 0)
        link = &(*link)->next;
    return link;
}

static const char *kvs_get(kvs_t *kvs, const char *key)
{
    kv_t *kv = *kvs_find(kvs, key);
    return kv != NULL ? kv->value : NULL;
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
    for (int b = 0; b < KVS_BUCKETS; b++) {
        while (kvs->buckets[b] != NULL) {
            kv_t *kv = kvs->buckets[b];
            kvs->buckets[b] = kv->next;
            free(kv);
        }
    }
}

mf_status_t mf_pmi_server_create(int size, int ppn, int versions, mf_pmi_server_t **server_p)
{
    mf_pmi_server_t *server =
        mf_calloc(1, sizeof(*server) + (size_t)size * sizeof(conn_t), "pmi server");
    if (server == NULL)
        return MF_ERR_NO_MEMORY;
    server->size = size;
    server->versions = versions;
    snprintf(server->kvsname, sizeof(server->kvsname), "kvs_%d_0", (int)getpid());
    /* One host. Without ppn it is one node holding all ranks; with ppn the ranks are reported
     * as consecutive blocks of ppn on nodes 0, 1, ... (the last block may be shorter). */
    server->per_node = ppn > 0 && ppn < size ? ppn : size;
    snprintf(server->mapping, sizeof(server->mapping), "(vector,(0,%d,%d))",
             (size + server->per_node - 1) / server->per_node, server->per_node);
    for (int r = 0; r < size; r++) {
        server->conns[r].fd = -1;
        server->conns[r].version = 1;
    }
    *server_p = server;
    return MF_OK;
}

static void conn_close(conn_t *conn)
{
    if (conn->fd >= 0 && close(conn->fd) != 0)
        mf_log(MF_LOG_WARN, "mpiexec", "closing a pmi socket failed: %s", strerror(errno));
    conn->fd = -1;
    free(conn->buf);
    free(conn->wait_key);
    conn->buf = conn->wait_key = NULL;
    conn->len = conn->cap = 0;
}

void mf_pmi_server_destroy(mf_pmi_server_t *server)
{
    if (server == NULL)
        return;
    for (int r = 0; r < server->size; r++)
        conn_close(&server->conns[r]);
    kvs_clear(&server->kvs);
    kvs_clear(&server->node_attrs);
    free(server);
}

void mf_pmi_server_attach(mf_pmi_server_t *server, int rank, int fd)
{
    server->conns[rank].fd = fd;
}

int mf_pmi_server_fd(const mf_pmi_server_t *server, int rank)
{
    return server->conns[rank].fd;
}

int mf_pmi_server_rank_state(const mf_pmi_server_t *server, int rank)
{
    return server->conns[rank].state;
}

int mf_pmi_server_barrier_waiting(const mf_pmi_server_t *server)
{
    return server->barrier_waiting;
}

const mf_pmi_abort_t *mf_pmi_server_abort_request(const mf_pmi_server_t *server)
{
    return server->aborted ? &server->abort : NULL;
}

/* Replies go out with blocking writes: they are small and the rank waits for them. A rank that
 * died makes the write fail, which its exit status will explain. */
static void conn_send(conn_t *conn, int rank, mf_pmi_out_t *out)
{
    mf_status_t status = mf_pmi_out_end(out);
    if (status != MF_OK) {
        mf_log(MF_LOG_ERROR, "mpiexec", "cannot encode pmi reply to rank %d: %s", rank,
               mf_status_str(status));
        return;
    }
    for (size_t done = 0; done < out->len && conn->fd >= 0;) {
        ssize_t n = send(conn->fd, out->buf + done, out->len - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            mf_log(MF_LOG_DEBUG, "mpiexec", "pmi reply to rank %d lost: %s", rank, strerror(errno));
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
    conn_send(req->conn, req->rank, &out);
}

static void reply_ok(const request_t *req)
{
    mf_pmi_out_t out;
    reply_begin(req, &out, 0);
    conn_send(req->conn, req->rank, &out);
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
    conn_send(req->conn, req->rank, &out);
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
    conn_send(req->conn, req->rank, &out);
    req->conn->version = version;
    req->conn->state |= MF_PMI_RANK_INITIALIZED;
}

static void handle_fullinit(request_t *req)
{
    int claimed = -1;
    mf_pmi_out_t out;
    if (mf_pmi_msg_get_int(req->msg, "pmirank", &claimed) == MF_OK && claimed != req->rank) {
        reply_error(req, "pmirank does not match PMI_RANK of this connection");
        return;
    }
    reply_begin(req, &out, 0);
    mf_pmi_out_add_int(&out, "rank", req->rank);
    mf_pmi_out_add_int(&out, "size", req->server->size);
    mf_pmi_out_add_int(&out, "appnum", 0);
    conn_send(req->conn, req->rank, &out);
}

static void handle_maxes(request_t *req)
{
    mf_pmi_out_t out;
    reply_begin(req, &out, 0);
    mf_pmi_out_add_int(&out, "kvsname_max", 256);
    mf_pmi_out_add_int(&out, "keylen_max", 64);
    mf_pmi_out_add_int(&out, "vallen_max", 1024);
    conn_send(req->conn, req->rank, &out);
}

static void handle_int_query(request_t *req, const char *key, int value)
{
    mf_pmi_out_t out;
    reply_begin(req, &out, 0);
    mf_pmi_out_add_int(&out, key, value);
    conn_send(req->conn, req->rank, &out);
}

static void handle_appnum(request_t *req)
{
    handle_int_query(req, "appnum", 0);
}

static void handle_universe(request_t *req)
{
    handle_int_query(req, "size", req->server->size);
}

static void handle_kvsname(request_t *req)
{
    mf_pmi_out_t out;
    reply_begin(req, &out, 0);
    mf_pmi_out_add(&out, req->conn->version == 2 ? "jobid" : "kvsname", req->server->kvsname);
    conn_send(req->conn, req->rank, &out);
}

static void handle_put(request_t *req)
{
    const char *key = mf_pmi_msg_get(req->msg, "key");
    const char *value = mf_pmi_msg_get(req->msg, "value");
    if (key == NULL || key[0] == '\0' || value == NULL)
        reply_error(req, "put needs key and value");
    else if (strncmp(key, "PMI_", 4) == 0)
        reply_error(req, "keys starting with PMI_ are reserved");
    else if (kvs_put(&req->server->kvs, key, value) != MF_OK)
        reply_error(req, "out of memory");
    else
        reply_ok(req);
}

static const char *job_attr(const mf_pmi_server_t *server, const char *key)
{
    return strcmp(key, "PMI_process_mapping") == 0 ? server->mapping : NULL;
}

/* PMI-1 get serves both job keys and the launcher's PMI_ attributes; so does info-getjobattr. */
static void handle_get(request_t *req)
{
    const char *key = mf_pmi_msg_get(req->msg, "key");
    if (key == NULL) {
        reply_error(req, "get needs a key");
        return;
    }
    if (strncmp(key, "PMI_", 4) == 0 || strcmp(mf_pmi_msg_cmd(req->msg), "info-getjobattr") == 0)
        reply_value(req, job_attr(req->server, key));
    else
        reply_value(req, kvs_get(&req->server->kvs, key));
}

static void handle_barrier(request_t *req)
{
    mf_pmi_server_t *server = req->server;
    if (req->conn->in_barrier) {
        reply_error(req, "already waiting in the barrier");
        return;
    }
    req->conn->in_barrier = 1;
    if (++server->barrier_waiting < server->size)
        return;
    server->barrier_waiting = 0;
    for (int r = 0; r < server->size; r++) {
        conn_t *conn = &server->conns[r];
        request_t waiter = {server, r, conn, NULL,
                            conn->version == 2 ? "kvs-fence-response" : "barrier_out"};
        conn->in_barrier = 0;
        reply_ok(&waiter);
    }
}

/* Node attributes are kept per reported node: "<node>/<key>". */
static int node_attr_key(const request_t *req, const char *key, char *buf, size_t size)
{
    int len = snprintf(buf, size, "%d/%s", req->rank / req->server->per_node, key);
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
    if (kvs_put(&server->node_attrs, key, value) != MF_OK) {
        reply_error(req, "out of memory");
        return;
    }
    reply_ok(req);
    for (int r = 0; r < server->size; r++) {
        conn_t *conn = &server->conns[r];
        if (conn->wait_key == NULL || strcmp(conn->wait_key, key) != 0)
            continue;
        request_t waiter = {server, r, conn, NULL, "info-getnodeattr-response"};
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
    const char *value = kvs_get(&req->server->node_attrs, key);
    if (value == NULL && wait != NULL && strcmp(wait, "TRUE") == 0) {
        free(req->conn->wait_key);
        req->conn->wait_key = strdup(key); /* answered by the matching info-putnodeattr */
        if (req->conn->wait_key != NULL)
            return;
        mf_log(MF_LOG_ERROR, "mpiexec", "cannot remember node attribute '%s'", key);
    }
    reply_value(req, value);
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
    server->abort.rank = req->rank;
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
    {"finalize", "finalize_ack", "finalize", handle_finalize},
    {"abort", NULL, "abort", handle_abort},
};

static void dispatch(mf_pmi_server_t *server, int rank, const mf_pmi_msg_t *msg)
{
    conn_t *conn = &server->conns[rank];
    const char *cmd = mf_pmi_msg_cmd(msg);
    char reply_cmd[80];
    request_t req = {server, rank, conn, msg, reply_cmd};
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
    mf_log(MF_LOG_WARN, "mpiexec", "rank %d sent unknown pmi-%d command '%.40s'", rank,
           conn->version, cmd);
    snprintf(reply_cmd, sizeof(reply_cmd), conn->version == 2 ? "%.40s-response" : "%.40s_result",
             cmd);
    reply_error(&req, "unknown command");
}

/* A PMI-1 line without cmd= still gets an answer, so the sender is not left waiting. */
static void malformed(mf_pmi_server_t *server, int rank)
{
    conn_t *conn = &server->conns[rank];
    request_t req = {server, rank, conn, NULL, "error"};
    mf_log(MF_LOG_WARN, "mpiexec", "rank %d sent a malformed pmi-%d message", rank, conn->version);
    if (conn->version == 1)
        reply_error(&req, "malformed message");
}

/* Serves every complete message in the connection's buffer; returns MF_ERR_PROTOCOL when
 * PMI-2 framing is broken and the stream cannot be trusted any more. */
static mf_status_t serve_buffered(mf_pmi_server_t *server, int rank)
{
    conn_t *conn = &server->conns[rank];
    for (;;) {
        size_t skip = 0, len, used;
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
        } else {
            char *newline = memchr(conn->buf, '\n', conn->len);
            if (newline == NULL)
                return MF_OK;
            len = (size_t)(newline - conn->buf);
            used = len + 1;
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
        status =
            version == 2 ? mf_pmi_wire_parse_v2(text, len, &msg) : mf_pmi_wire_parse_v1(text, &msg);
        if (status == MF_OK)
            dispatch(server, rank, &msg);
        else
            malformed(server, rank);
        free(text);
        if (status != MF_OK && version == 2)
            return MF_ERR_PROTOCOL;
    }
}

/* Makes room for more input; MF_ERR_PROTOCOL when a rank sends too much without a message. */
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

void mf_pmi_server_handle(mf_pmi_server_t *server, int rank)
{
    conn_t *conn = &server->conns[rank];
    mf_status_t status = MF_OK;
    while (conn->fd >= 0 && status == MF_OK) {
        if ((status = conn_grow(conn)) != MF_OK)
            break;
        ssize_t n = recv(conn->fd, conn->buf + conn->len, conn->cap - conn->len, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) {
            conn_close(conn); /* the rank closed its end: it finished or died */
            return;
        }
        conn->len += (size_t)n;
        status = serve_buffered(server, rank);
    }
    if (status != MF_OK) {
        mf_log(MF_LOG_ERROR, "mpiexec", "dropping the pmi connection of rank %d: %s", rank,
               mf_status_str(status));
        conn_close(conn);
    }
}
