/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMI layer: the connection to the launcher. Finds it (PMI_FD, PMI_PORT or none), negotiates
 * the protocol version, learns rank, size, job id and node layout, and implements the
 * request/reply exchange, abort and finalize. Key-value operations are in pmi_kvs.c.
 */
#define _GNU_SOURCE
#include "pmi_impl.h"

#include <dlfcn.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PMI1_KEYLEN_DEFAULT   64 /* PMI-2 has no get_maxes: use the limits hydra and Slurm use */
#define PMI1_VALLEN_DEFAULT   1024
#define PMI1_LINE_MAX         1024       /* MPICH's PMI-1 client never sends a longer line */
#define ABORT_FORWARD_WAIT_NS 200000000L /* 0.2 s */
#define ABORT_LOCK_WAIT_SEC   1
#define KEY_MAX_CAP           128
#define VALUE_MAX_CAP         (MF_PMI_WIRE_MAX / 2)

mf_pmi_state_t mf_pmi_state = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1};

static mf_status_t conn_send(const char *buf, size_t len)
{
    while (len > 0) {
        /* MSG_NOSIGNAL: a launcher that died must become an error, not a SIGPIPE. */
        ssize_t n = send(mf_pmi_state.fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            mf_log(MF_LOG_ERROR, "pmi", "cannot send to the launcher on fd %d: %s", mf_pmi_state.fd,
                   strerror(errno));
            return MF_ERR_IO;
        }
        buf += n;
        len -= (size_t)n;
    }
    return MF_OK;
}

mf_status_t mf_pmi_send_locked(mf_pmi_out_t *req)
{
    mf_status_t status = mf_pmi_out_end(req);
    if (status != MF_OK) {
        mf_log(MF_LOG_ERROR, "pmi", "cannot encode a PMI-%d request: %s", req->version,
               mf_status_str(status));
        return status;
    }
    if (mf_pmi_state.broken)
        return MF_ERR_IO;
    if ((status = conn_send(req->buf, req->len)) != MF_OK)
        mf_pmi_state.broken = 1;
    return status;
}

static mf_status_t conn_fill(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    if (st->in_len == sizeof(st->in_buf)) {
        mf_log(MF_LOG_ERROR, "pmi", "the launcher sent a message longer than %zu bytes",
               sizeof(st->in_buf));
        return MF_ERR_PROTOCOL;
    }
    for (;;) {
        if (st->reply_deadline_ns != 0) {
            uint64_t now = mf_now_ns();
            int64_t left_ms = now < st->reply_deadline_ns
                                  ? (int64_t)((st->reply_deadline_ns - now) / 1000000) + 1
                                  : 0;
            struct pollfd pfd = {.fd = st->fd, .events = POLLIN};
            int ready =
                left_ms > 0 ? poll(&pfd, 1, (int)(left_ms < INT_MAX ? left_ms : INT_MAX)) : 0;
            if (ready < 0 && errno == EINTR)
                continue;
            if (ready == 0) {
                st->timed_out = 1;
                return MF_ERR_IO;
            }
        }
        ssize_t n = recv(st->fd, st->in_buf + st->in_len, sizeof(st->in_buf) - st->in_len, 0);
        if (n > 0) {
            st->in_len += (size_t)n;
            return MF_OK;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n == 0)
            mf_log(MF_LOG_ERROR, "pmi", "the launcher closed the connection (did it exit?)");
        else
            mf_log(MF_LOG_ERROR, "pmi", "cannot read from the launcher on fd %d: %s", st->fd,
                   strerror(errno));
        return MF_ERR_IO;
    }
}

/* Moves one raw message of len bytes (starting skip bytes into in_buf) to reply_buf, parses it
 * and drops it from in_buf. */
static mf_status_t conn_take(size_t skip, size_t len, int version)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_status_t status;
    if (len > MF_PMI_WIRE_MAX) {
        mf_log(MF_LOG_ERROR, "pmi", "the launcher sent a %zu-byte message, more than %d", len,
               MF_PMI_WIRE_MAX);
        return MF_ERR_PROTOCOL;
    }
    memcpy(st->reply_buf, st->in_buf + skip, len);
    st->reply_buf[len] = '\0';
    if (version == 1)
        status = mf_pmi_wire_parse_v1(st->reply_buf, &st->reply);
    else
        status = mf_pmi_wire_parse_v2(st->reply_buf, len, &st->reply);
    if (status != MF_OK)
        mf_log(MF_LOG_ERROR, "pmi", "malformed PMI-%d reply from the launcher: '%.*s'", version,
               (int)len, st->in_buf + skip);
    size_t used = skip + len + (version == 1 ? 1 : 0); /* PMI-1 lines end with '\n' */
    memmove(st->in_buf, st->in_buf + used, st->in_len - used);
    st->in_len -= used;
    return status;
}

static mf_status_t conn_read_line(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    char *newline;
    while ((newline = memchr(st->in_buf, '\n', st->in_len)) == NULL) {
        mf_status_t status = conn_fill();
        if (status != MF_OK)
            return status;
    }
    return conn_take(0, (size_t)(newline - st->in_buf), 1);
}

static mf_status_t conn_read_frame(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_status_t status;
    while (st->in_len < MF_PMI_V2_HEADER_LEN) {
        if ((status = conn_fill()) != MF_OK)
            return status;
    }
    int len = mf_pmi_wire_v2_body_len(st->in_buf);
    if (len < 0 || len > MF_PMI_WIRE_MAX) {
        mf_log(MF_LOG_ERROR, "pmi", "bad PMI-2 length header from the launcher: '%.6s'",
               st->in_buf);
        return MF_ERR_PROTOCOL;
    }
    while (st->in_len < MF_PMI_V2_HEADER_LEN + (size_t)len) {
        if ((status = conn_fill()) != MF_OK)
            return status;
    }
    return conn_take(MF_PMI_V2_HEADER_LEN, (size_t)len, 2);
}

static mf_status_t check_reply(const char *expect, int missing_ok)
{
    const mf_pmi_msg_t *reply = &mf_pmi_state.reply;
    int rc = 0;
    if (strcmp(mf_pmi_msg_cmd(reply), expect) != 0) {
        mf_log(MF_LOG_ERROR, "pmi", "expected '%s' from the launcher, got '%s'", expect,
               mf_pmi_msg_cmd(reply));
        return MF_ERR_PROTOCOL;
    }
    if (mf_pmi_msg_get_int(reply, "rc", &rc) == MF_ERR_PROTOCOL) {
        mf_log(MF_LOG_ERROR, "pmi", "'%s' from the launcher has a bad rc '%s'", expect,
               mf_pmi_msg_get(reply, "rc"));
        return MF_ERR_PROTOCOL;
    }
    const char *found = mf_pmi_msg_get(reply, "found");
    if (rc == 0 && (found == NULL || strcmp(found, "TRUE") == 0))
        return MF_OK;
    if (missing_ok)
        return MF_ERR_NOT_FOUND;
    const char *why = mf_pmi_msg_get(reply, "errmsg");
    if (why == NULL)
        why = mf_pmi_msg_get(reply, "msg");
    mf_log(MF_LOG_ERROR, "pmi", "the launcher answered '%s' with rc=%d: %s", expect, rc,
           why != NULL ? why : "no reason given");
    return MF_ERR_PROTOCOL;
}

mf_status_t mf_pmi_call_locked(mf_pmi_out_t *req, const char *expect, int missing_ok)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_status_t status = mf_pmi_out_end(req);
    if (status != MF_OK) {
        mf_log(MF_LOG_ERROR, "pmi", "cannot encode PMI-%d request for '%s': %s", req->version,
               expect, mf_status_str(status));
        return status;
    }
    if (st->broken)
        return MF_ERR_IO; /* the failure was logged when it happened */
    status = conn_send(req->buf, req->len);
    for (;;) {
        if (status == MF_OK)
            status = st->version == 2 ? conn_read_frame() : conn_read_line();
        /* The reply of a call that gave up earlier: dropped, the stream is in step again. */
        if (status != MF_OK || st->late_reply == NULL ||
            strcmp(mf_pmi_msg_cmd(&st->reply), st->late_reply) != 0)
            break;
        mf_log(MF_LOG_DEBUG, "pmi", "dropped the late '%s'", st->late_reply);
        st->late_reply = NULL;
    }
    if (status != MF_OK && st->timed_out) {
        /* Nothing or part of the reply came in time; the rest stays in in_buf for later. */
        st->timed_out = 0;
        st->late_reply = expect;
        return MF_ERR_IO;
    }
    if (status != MF_OK) {
        st->broken = 1;
        return status;
    }
    return check_reply(expect, missing_ok);
}

static mf_status_t env_int(const char *name, int *value_p)
{
    const char *text = getenv(name);
    char *end;
    if (text == NULL) {
        mf_log(MF_LOG_ERROR, "pmi", "the launcher did not set %s", name);
        return MF_ERR_NOT_FOUND;
    }
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || value < 0 || value > INT_MAX) {
        mf_log(MF_LOG_ERROR, "pmi", "%s='%s' is not a non-negative integer", name, text);
        return MF_ERR_INVALID;
    }
    *value_p = (int)value;
    return MF_OK;
}

/* MANIFOLD_PMI: 1 or 2 forces a protocol, unset means "2, else 1". */
static mf_status_t requested_version(int *version_p)
{
    const char *text = getenv("MANIFOLD_PMI");
    if (text == NULL || text[0] == '\0') {
        *version_p = 0;
        return MF_OK;
    }
    if (strcmp(text, "1") != 0 && strcmp(text, "2") != 0) {
        mf_log(MF_LOG_ERROR, "pmi", "MANIFOLD_PMI='%s' is not valid (use 1 or 2)", text);
        return MF_ERR_INVALID;
    }
    *version_p = text[0] - '0';
    return MF_OK;
}

static mf_status_t connect_port(const char *port_env, int *fd_p)
{
    char host[256];
    const char *colon = strrchr(port_env, ':');
    if (colon == NULL || (size_t)(colon - port_env) >= sizeof(host) || colon[1] == '\0') {
        mf_log(MF_LOG_ERROR, "pmi", "PMI_PORT='%s' is not host:port", port_env);
        return MF_ERR_INVALID;
    }
    memcpy(host, port_env, (size_t)(colon - port_env));
    host[colon - port_env] = '\0';
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *list;
    int rc = getaddrinfo(host, colon + 1, &hints, &list);
    if (rc != 0) {
        mf_log(MF_LOG_ERROR, "pmi", "cannot resolve PMI_PORT='%s': %s", port_env, gai_strerror(rc));
        return MF_ERR_IO;
    }
    int fd = -1, err = 0;
    for (struct addrinfo *ai = list; ai != NULL && fd < 0; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(list);
    if (fd < 0) {
        mf_log(MF_LOG_ERROR, "pmi", "cannot connect to the launcher at %s: %s", port_env,
               strerror(err));
        return MF_ERR_IO;
    }
    *fd_p = fd;
    return MF_OK;
}

/* Sends the PMI-1 style init line that opens both protocols; *accepted_p says whether the
 * launcher agreed to speak this version. */
static mf_status_t send_init_locked(int version, int *accepted_p)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    int got = 0;
    mf_pmi_out_begin(&req, 1, "init");
    mf_pmi_out_add_int(&req, "pmi_version", version);
    mf_pmi_out_add_int(&req, "pmi_subversion", version == 1 ? 1 : 0);
    st->version = 1; /* the reply to init is always a PMI-1 line */
    mf_status_t status = mf_pmi_call_locked(&req, "response_to_init", 1);
    if (status == MF_ERR_NOT_FOUND) {
        *accepted_p = 0;
        return MF_OK;
    }
    if (status != MF_OK)
        return status;
    const char *launcher = mf_pmi_msg_get(&st->reply, "launcher");
    st->launcher_is_ours = launcher != NULL && strcmp(launcher, "manifold") == 0;
    *accepted_p = mf_pmi_msg_get_int(&st->reply, "pmi_version", &got) == MF_OK && got == version;
    return MF_OK;
}

static mf_status_t handshake_locked(int want)
{
    int first = want == 1 ? 1 : 2, accepted = 0;
    mf_status_t status = send_init_locked(first, &accepted);
    if (status != MF_OK)
        return status;
    if (!accepted && want == 0) {
        mf_log(MF_LOG_INFO, "pmi", "the launcher refused PMI-2, falling back to PMI-1");
        first = 1;
        if ((status = send_init_locked(1, &accepted)) != MF_OK)
            return status;
    }
    if (!accepted) {
        mf_log(MF_LOG_ERROR, "pmi", "the launcher refused PMI-%d%s", first,
               want != 0 ? " (requested by MANIFOLD_PMI)" : "");
        return MF_ERR_UNSUPPORTED;
    }
    mf_pmi_state.version = first;
    return MF_OK;
}

static mf_status_t reply_int(const char *key, int *value_p)
{
    mf_status_t status = mf_pmi_msg_get_int(&mf_pmi_state.reply, key, value_p);
    if (status != MF_OK)
        mf_log(MF_LOG_ERROR, "pmi", "reply '%s' from the launcher lacks a valid %s",
               mf_pmi_msg_cmd(&mf_pmi_state.reply), key);
    return status == MF_OK ? MF_OK : MF_ERR_PROTOCOL;
}

static mf_status_t reply_string(const char *key, char *value, size_t value_size)
{
    const char *text = mf_pmi_msg_get(&mf_pmi_state.reply, key);
    if (text == NULL || strlen(text) >= value_size) {
        mf_log(MF_LOG_ERROR, "pmi", "reply '%s' from the launcher lacks a valid %s",
               mf_pmi_msg_cmd(&mf_pmi_state.reply), key);
        return MF_ERR_PROTOCOL;
    }
    memcpy(value, text, strlen(text) + 1);
    return MF_OK;
}

/* The launcher's limits count the terminating NUL; ours do not, and are capped so that any
 * request still fits one wire message. */
static void set_limits_locked(int keylen, int vallen)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    st->key_max = keylen > 1 ? (size_t)keylen - 1 : 0;
    st->value_max = vallen > 1 ? (size_t)vallen - 1 : 0;
    if (st->key_max > KEY_MAX_CAP)
        st->key_max = KEY_MAX_CAP;
    if (st->value_max > VALUE_MAX_CAP)
        st->value_max = VALUE_MAX_CAP;
}

/* A job started by a spawn: the launcher names the spawning job in its init answer (PMI-2
 * fullinit, PMI-1 initack in port mode; hydra does) and/or sets PMI_SPAWNED=1 (hydra and our
 * mpiexec do; it is all PMI-1 over PMI_FD has). */
static void note_spawner_locked(void)
{
    const char *spawner = mf_pmi_msg_get(&mf_pmi_state.reply, "spawner-jobid");
    if (spawner != NULL && spawner[0] != '\0')
        mf_pmi_state.job.spawned = 1;
}

static void note_spawned_env_locked(void)
{
    const char *flag = getenv("PMI_SPAWNED");
    if (flag != NULL && flag[0] != '\0' && strcmp(flag, "0") != 0)
        mf_pmi_state.job.spawned = 1;
}

/* Slurm's PMI-1 server takes a request from a single read of at most 1024 bytes, the line limit
 * of MPICH's client, and parses the rest as a new request: a put of the longest key and value
 * it announced (vallen_max 1024) did not fit. Launchers other than ours get the same limit. */
static void fit_put_line_locked(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    size_t overhead =
        strlen("cmd=put kvsname= key= value=\n") + strlen(st->job.kvsname) + st->key_max;
    if (st->launcher_is_ours || overhead >= PMI1_LINE_MAX)
        return;
    if (st->value_max > PMI1_LINE_MAX - overhead)
        st->value_max = PMI1_LINE_MAX - overhead;
}

/* Port mode: initack tells rank and size; hydra then also sends three "cmd=set" lines (size,
 * rank, debug) which older launchers used instead. */
static mf_status_t initack_locked(int pmi_id)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    mf_pmi_out_begin(&req, 1, "initack");
    mf_pmi_out_add_int(&req, "pmiid", pmi_id);
    mf_status_t status = mf_pmi_call_locked(&req, "initack", 0);
    (void)mf_pmi_msg_get_int(&st->reply, "rank", &st->job.rank);
    (void)mf_pmi_msg_get_int(&st->reply, "size", &st->job.size);
    note_spawner_locked();
    for (int i = 0; i < 3 && status == MF_OK; i++) {
        if ((status = conn_read_line()) != MF_OK) {
            st->broken = 1;
            break;
        }
        if ((status = check_reply("set", 0)) != MF_OK)
            break;
        (void)mf_pmi_msg_get_int(&st->reply, "rank", &st->job.rank);
        (void)mf_pmi_msg_get_int(&st->reply, "size", &st->job.size);
        note_spawner_locked();
    }
    return status;
}

static mf_status_t init_job_v1_locked(int port_mode, int pmi_id)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    mf_status_t status;
    int keylen = 0, vallen = 0;
    st->job.rank = st->job.size = -1;
    if (port_mode)
        status = initack_locked(pmi_id);
    else if ((status = env_int("PMI_RANK", &st->job.rank)) == MF_OK)
        status = env_int("PMI_SIZE", &st->job.size);
    if (status != MF_OK)
        return status;
    mf_pmi_out_begin(&req, 1, "get_maxes");
    if ((status = mf_pmi_call_locked(&req, "maxes", 0)) != MF_OK ||
        (status = reply_int("keylen_max", &keylen)) != MF_OK ||
        (status = reply_int("vallen_max", &vallen)) != MF_OK)
        return status;
    set_limits_locked(keylen, vallen);
    mf_pmi_out_begin(&req, 1, "get_appnum");
    if ((status = mf_pmi_call_locked(&req, "appnum", 0)) != MF_OK ||
        (status = reply_int("appnum", &st->job.appnum)) != MF_OK)
        return status;
    /* optional: hydra answers -1, and a launcher may not know */
    mf_pmi_out_begin(&req, 1, "get_universe_size");
    if (mf_pmi_call_locked(&req, "universe_size", 1) != MF_OK ||
        mf_pmi_msg_get_int(&st->reply, "size", &st->job.universe) != MF_OK)
        st->job.universe = -1;
    mf_pmi_out_begin(&req, 1, "get_my_kvsname");
    if ((status = mf_pmi_call_locked(&req, "my_kvsname", 0)) != MF_OK ||
        (status = reply_string("kvsname", st->job.kvsname, sizeof(st->job.kvsname))) != MF_OK)
        return status;
    fit_put_line_locked();
    return MF_OK;
}

static mf_status_t init_job_v2_locked(int pmi_id)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    mf_status_t status;
    const char *pmi_jobid = getenv("PMI_JOBID");
    mf_pmi_out_begin(&req, 2, "fullinit");
    /* Slurm refuses a fullinit without the job id it set in PMI_JOBID (rc=3); hydra sets none. */
    if (pmi_jobid != NULL && pmi_jobid[0] != '\0')
        mf_pmi_out_add(&req, "pmijobid", pmi_jobid);
    mf_pmi_out_add_int(&req, "pmirank", pmi_id);
    mf_pmi_out_add(&req, "threaded", "FALSE"); /* our mutex serialises all requests */
    if ((status = mf_pmi_call_locked(&req, "fullinit-response", 0)) != MF_OK ||
        (status = reply_int("rank", &st->job.rank)) != MF_OK ||
        (status = reply_int("size", &st->job.size)) != MF_OK)
        return status;
    if (mf_pmi_msg_get_int(&st->reply, "appnum", &st->job.appnum) != MF_OK)
        st->job.appnum = 0;
    note_spawner_locked();
    mf_pmi_out_begin(&req, 2, "job-getid");
    if ((status = mf_pmi_call_locked(&req, "job-getid-response", 0)) != MF_OK)
        return status;
    set_limits_locked(PMI1_KEYLEN_DEFAULT, PMI1_VALLEN_DEFAULT);
    if ((status = reply_string("jobid", st->job.kvsname, sizeof(st->job.kvsname))) != MF_OK)
        return status;
    /* optional, as with PMI-1 */
    char universe[32], *end = NULL;
    if (mf_pmi_get_job_attr_locked("universeSize", universe, sizeof(universe)) == MF_OK) {
        long n = strtol(universe, &end, 10);
        if (end != universe && *end == '\0' && n > 0 && n <= INT_MAX)
            st->job.universe = (int)n;
    }
    return MF_OK;
}

/* Local rank, local size and the node's rank list from PMI_process_mapping, else from the
 * MPI_LOCALRANKID/MPI_LOCALNRANKS hints hydra and our mpiexec set, else "alone on the node". */
static void init_locality_locked(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    char mapping[MF_PMI_WIRE_MAX];
    int *node_of_rank = NULL;
    if (mf_pmi_get_job_attr_locked("PMI_process_mapping", mapping, sizeof(mapping)) == MF_OK &&
        (node_of_rank = mf_calloc((size_t)st->job.size, sizeof(int), "process map")) != NULL &&
        mf_pmi_mapping_parse(mapping, st->job.size, node_of_rank) == MF_OK) {
        int my_node = node_of_rank[st->job.rank], count = 0;
        for (int r = 0; r < st->job.size; r++)
            count += node_of_rank[r] == my_node;
        st->node_ranks = mf_malloc((size_t)count * sizeof(int), "node rank list");
        if (st->node_ranks != NULL) {
            st->job.local_size = count;
            for (int r = 0, i = 0; r < st->job.size; r++) {
                if (node_of_rank[r] != my_node)
                    continue;
                if (r == st->job.rank)
                    st->job.local_rank = i;
                st->node_ranks[i++] = r;
            }
            free(node_of_rank);
            return;
        }
    }
    free(node_of_rank);
    mf_log(MF_LOG_DEBUG, "pmi", "no usable PMI_process_mapping, using environment hints");
    if (getenv("MPI_LOCALRANKID") == NULL || getenv("MPI_LOCALNRANKS") == NULL ||
        env_int("MPI_LOCALRANKID", &st->job.local_rank) != MF_OK ||
        env_int("MPI_LOCALNRANKS", &st->job.local_size) != MF_OK ||
        st->job.local_rank >= st->job.local_size) {
        st->job.local_rank = 0;
        st->job.local_size = 1;
    }
}

/* PMI-1 has no node attributes: they become job keys tagged with a hash of the host name and,
 * once the process mapping is known, the node's first rank (mpiexec --ppn reports several
 * nodes on one host). */
static void init_node_tag_locked(void)
{
    int first = mf_pmi_state.node_ranks != NULL ? mf_pmi_state.node_ranks[0] : -1;
    char host[256] = "localhost";
    uint32_t hash = 2166136261u; /* FNV-1a */
    if (gethostname(host, sizeof(host) - 1) != 0)
        mf_log(MF_LOG_WARN, "pmi", "gethostname failed: %s", strerror(errno));
    for (const char *c = host; *c != '\0'; c++)
        hash = (hash ^ (unsigned char)*c) * 16777619u;
    snprintf(mf_pmi_state.node_tag, sizeof(mf_pmi_state.node_tag), "mfnode-%08x-%d-", hash, first);
}

/* Whether PMI_FD names no launcher connection of ours: the client marks the descriptor
 * close-on-exec, so a program an MPI process starts (a Python multiprocessing worker under the
 * spawn or forkserver methods, which imports mpi4py again) inherits the variable without the
 * descriptor, or with its number reused for a pipe or a file. Such a process is no member of
 * the job, and talking PMI on the number would fail or, worse, write into that pipe. */
static int pmi_fd_inherited(void)
{
    const char *text = getenv("PMI_FD");
    struct stat st;
    char *end;
    if (text == NULL || getenv("PMI_PORT") != NULL)
        return 0;
    errno = 0;
    long fd = strtol(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || fd < 0 || fd > INT_MAX)
        return 0; /* a malformed value is reported as such later */
    if (fstat((int)fd, &st) == 0 && S_ISSOCK(st.st_mode))
        return 0;
    mf_log(MF_LOG_INFO, "pmi",
           "PMI_FD=%ld is %s here: this process was started by an MPI process, not by the "
           "launcher, and runs as a job of one",
           fd, errno == EBADF ? "not open" : "not a socket");
    return 1;
}

static mf_status_t init_singleton_locked(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    st->node_ranks = mf_malloc(sizeof(int), "node rank list");
    if (st->node_ranks == NULL)
        return MF_ERR_NO_MEMORY;
    st->node_ranks[0] = 0;
    st->version = 0;
    set_limits_locked(PMI1_KEYLEN_DEFAULT, PMI1_VALLEN_DEFAULT);
    st->job = (mf_pmi_job_t){.rank = 0, .size = 1, .local_size = 1, .singleton = 1, .universe = -1};
    snprintf(st->job.kvsname, sizeof(st->job.kvsname), "singleton_%d", (int)getpid());
    mf_log(MF_LOG_DEBUG, "pmi", "no launcher found (PMI_FD/PMI_PORT unset): singleton");
    /* srun without --mpi=pmi2 starts its tasks without PMI: each would silently be a job of
     * one. Its first task says so, once. */
    const char *ntasks = getenv("SLURM_STEP_NUM_TASKS"), *procid = getenv("SLURM_PROCID");
    if (ntasks != NULL && atoi(ntasks) > 1 && procid != NULL && strcmp(procid, "0") == 0)
        mf_log(MF_LOG_WARN, "pmi",
               "srun started %s tasks without a PMI-2 server: each runs as a job of one "
               "process (run srun --mpi=pmi2)",
               ntasks);
    return MF_OK;
}

static mf_status_t open_connection_locked(int *port_mode_p, int *pmi_id_p)
{
    const char *port_env = getenv("PMI_PORT");
    mf_status_t status;
    int fd = -1;
    if (getenv("PMI_FD") != NULL) {
        if ((status = env_int("PMI_FD", &fd)) != MF_OK)
            return status;
        /* The inherited socket must not leak into programs the process starts. */
        if (fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
            mf_log(MF_LOG_ERROR, "pmi", "PMI_FD=%d is not an open descriptor: %s", fd,
                   strerror(errno));
            return MF_ERR_IO;
        }
        if ((status = env_int("PMI_RANK", pmi_id_p)) != MF_OK)
            return status;
        *port_mode_p = 0;
    } else {
        if ((status = env_int("PMI_ID", pmi_id_p)) != MF_OK ||
            (status = connect_port(port_env, &fd)) != MF_OK)
            return status;
        *port_mode_p = 1;
    }
    mf_pmi_state.fd = fd;
    mf_pmi_state.in_len = 0;
    mf_pmi_state.broken = 0;
    return MF_OK;
}

static mf_status_t init_locked(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    int want, port_mode = 0, pmi_id = 0;
    mf_status_t status = requested_version(&want);
    if (status != MF_OK)
        return status;
    init_node_tag_locked();
    if ((getenv("PMI_FD") == NULL && getenv("PMI_PORT") == NULL) || pmi_fd_inherited()) {
        /* Open MPI's mpirun and srun --mpi=pmix speak PMIx only: every process would silently
         * be a job of one. Refuse, as MPICH does. */
        const char *pmix = getenv("PMIX_NAMESPACE");
        if (pmix != NULL) {
            mf_log(MF_LOG_ERROR, "pmi",
                   "the launcher speaks PMIx (PMIX_NAMESPACE=%s: Open MPI's mpirun, srun "
                   "--mpi=pmix), which Manifold does not; start the program with Manifold's "
                   "mpiexec, MPICH's mpiexec (hydra) or srun --mpi=pmi2",
                   pmix);
            return MF_ERR_UNSUPPORTED;
        }
        return init_singleton_locked();
    }
    if ((status = open_connection_locked(&port_mode, &pmi_id)) != MF_OK)
        return status;
    st->job = (mf_pmi_job_t){.local_size = 1, .universe = -1};
    if ((status = handshake_locked(want)) != MF_OK)
        goto err_close_connection;
    if (st->version == 2)
        status = init_job_v2_locked(pmi_id);
    else
        status = init_job_v1_locked(port_mode, pmi_id);
    if (status != MF_OK)
        goto err_close_connection;
    if (st->job.size < 1 || st->job.rank < 0 || st->job.rank >= st->job.size) {
        mf_log(MF_LOG_ERROR, "pmi", "the launcher gave rank %d of size %d", st->job.rank,
               st->job.size);
        status = MF_ERR_PROTOCOL;
        goto err_close_connection;
    }
    note_spawned_env_locked();
    init_locality_locked();
    init_node_tag_locked();
    mf_log(MF_LOG_DEBUG, "pmi", "PMI-%d: rank %d of %d, local %d of %d, kvs %s%s", st->version,
           st->job.rank, st->job.size, st->job.local_rank, st->job.local_size, st->job.kvsname,
           st->job.spawned ? " (spawned)" : "");
    return MF_OK;

err_close_connection:
    close(st->fd);
    st->fd = -1;
    return status;
}

/* Our mpiexec beside this library: <dir of libmpi_abi>/../bin/mpiexec, as both the build tree
 * and an installation lay them out. */
static int find_mpiexec(char *path, size_t size)
{
    Dl_info info;
    if (dladdr((void *)&mf_pmi_init, &info) == 0 || info.dli_fname == NULL)
        return 0;
    const char *slash = strrchr(info.dli_fname, '/');
    int dir = slash != NULL ? (int)(slash - info.dli_fname) : 1;
    const char *base = slash != NULL ? info.dli_fname : ".";
    int len = snprintf(path, size, "%.*s/../bin/mpiexec", dir, base);
    return len > 0 && (size_t)len < size && access(path, X_OK) == 0;
}

/* A singleton's first spawn or name-service call: start our mpiexec to serve it, as MPICH and
 * Open MPI do, and go on as rank 0 of a job of one that mpiexec adopts (`--adopt FD,PID`).
 * mpiexec is started through an intermediate child that exits at once, so it is nobody's child
 * to reap and outlives nothing: it ends when this process's connection closes and the jobs it
 * spawned are gone. The key space written so far moves to it. */
mf_status_t mf_pmi_adopt_launcher_locked(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    char mpiexec[4096], adopt[64];
    int sv[2];
    if (!find_mpiexec(mpiexec, sizeof(mpiexec))) {
        mf_log(MF_LOG_INFO, "pmi", "no mpiexec next to the library to serve this singleton");
        return MF_ERR_UNSUPPORTED;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        mf_log(MF_LOG_ERROR, "pmi", "cannot create a socket for mpiexec: %s", strerror(errno));
        return MF_ERR_IO;
    }
    snprintf(adopt, sizeof(adopt), "--adopt=%d,%d", sv[1], (int)getpid());
    char *argv[] = {mpiexec, adopt, NULL};
    pid_t child = fork();
    if (child == 0) { /* only async-signal-safe calls from here to exec */
        if (fork() != 0)
            _exit(0);
        int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd >= 0)
            dup2(null_fd, 0);
        /* none of this process's other descriptors (a pipe's write end would keep its reader
         * waiting for mpiexec), only its end of the connection */
        close_range(3, ~0u, CLOSE_RANGE_CLOEXEC);
        fcntl(sv[1], F_SETFD, 0);
        execv(mpiexec, argv);
        _exit(127);
    }
    close(sv[1]);
    int wstatus = 0;
    if (child < 0 || waitpid(child, &wstatus, 0) != child || !WIFEXITED(wstatus) ||
        WEXITSTATUS(wstatus) != 0) {
        mf_log(MF_LOG_ERROR, "pmi", "cannot start %s", mpiexec);
        close(sv[0]);
        return MF_ERR_IO;
    }
    mf_pmi_job_t before = st->job;
    st->fd = sv[0];
    st->in_len = 0;
    st->broken = 0;
    mf_status_t status = handshake_locked(2);
    if (status == MF_OK)
        status = init_job_v2_locked(0);
    if (status == MF_OK && (st->job.rank != 0 || st->job.size != 1))
        status = MF_ERR_PROTOCOL;
    for (mf_pmi_kv_t *kv = st->local_kvs; status == MF_OK && kv != NULL; kv = kv->next)
        status = mf_pmi_put_locked(kv->key, kv->value);
    mf_pmi_out_t req;
    if (status == MF_OK) {
        mf_pmi_out_begin(&req, 2, "kvs-fence");
        status = mf_pmi_call_locked(&req, "kvs-fence-response", 0);
    }
    if (status != MF_OK) {
        mf_log(MF_LOG_ERROR, "pmi", "the mpiexec started for this singleton did not answer");
        close(st->fd);
        st->fd = -1;
        st->version = 0;
        st->job = before;
        return status;
    }
    mf_pmi_local_clear_locked();
    st->job.local_rank = before.local_rank;
    st->job.local_size = before.local_size;
    mf_log(MF_LOG_DEBUG, "pmi", "started %s to serve this singleton (kvs %s)", mpiexec,
           st->job.kvsname);
    return MF_OK;
}

mf_status_t mf_pmi_init(mf_pmi_job_t *job_p)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&st->lock);
    if (st->init_count == 0)
        status = init_locked();
    if (status == MF_OK) {
        st->init_count++;
        *job_p = st->job;
        mf_log_set_rank(st->job.rank);
    }
    pthread_mutex_unlock(&st->lock);
    return status;
}

int mf_pmi_version(void)
{
    pthread_mutex_lock(&mf_pmi_state.lock);
    int version = mf_pmi_state.version;
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return version;
}

/* The launcher's side of finalize; failures only matter as log lines now. */
static void say_goodbye_locked(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    mf_pmi_out_begin(&req, st->version, "finalize");
    (void)mf_pmi_call_locked(&req, st->version == 2 ? "finalize-response" : "finalize_ack", 0);
    if (close(st->fd) != 0)
        mf_log(MF_LOG_WARN, "pmi", "closing the launcher connection failed: %s", strerror(errno));
    st->fd = -1;
}

void mf_pmi_finalize(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    pthread_mutex_lock(&st->lock);
    if (st->init_count > 0 && --st->init_count == 0) {
        if (st->version > 0)
            say_goodbye_locked();
        mf_pmi_local_clear_locked();
        free(st->node_ranks);
        st->node_ranks = NULL;
        st->version = 0;
        st->fenced = 0;
    }
    pthread_mutex_unlock(&st->lock);
}

/* Builds the abort request. PMI-1 cannot carry a newline, so control characters become
 * spaces; hydra reads "exitcode" and "message" in both protocols. */
static void send_abort(int exit_code, const char *msg)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    char text[512];
    mf_pmi_out_t req;
    snprintf(text, sizeof(text), "%s", msg);
    for (char *c = text; *c != '\0'; c++) {
        if ((unsigned char)*c < 0x20)
            *c = ' ';
    }
    mf_pmi_out_begin(&req, st->version, "abort");
    if (st->version == 2)
        mf_pmi_out_add(&req, "isworld", "TRUE");
    mf_pmi_out_add_int(&req, "exitcode", exit_code);
    mf_pmi_out_add(&req, "message", text);
    if (mf_pmi_out_end(&req) == MF_OK)
        (void)conn_send(req.buf, req.len);
}

/* Hydra kills the job when a process's PMI connection closes before it finalized, but only
 * when it reads the closed connection before it reaps the process: otherwise it takes the exit
 * status 0 for a normal end and the other ranks wait for the dead one for ever (a quarter of
 * the runs of a rank that returned from main without MPI_Finalize). Say it instead. Our
 * mpiexec notices the missing PMI finalize itself, and reports it in its own words. */
void mf_pmi_exit_unfinalized(int exit_code, const char *msg)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    if (st->init_count > 0 && st->version > 0 && !st->broken && !st->launcher_is_ours)
        mf_pmi_abort(exit_code, msg);
}

void mf_pmi_abort(int exit_code, const char *msg)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    struct timespec deadline;
    if (msg == NULL)
        msg = "";
    mf_flush_program_output();
    /* Another thread may sit in a fence holding the lock forever: wait a little, then send
     * anyway. That thread is blocked reading, so our bytes do not interleave with its own. */
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += ABORT_LOCK_WAIT_SEC;
    int locked = pthread_mutex_timedlock(&st->lock, &deadline) == 0;
    int connected = st->init_count > 0 && st->version > 0 && !st->broken;
    /* Print before telling the launcher: hydra kills the job at once and says nothing. */
    if (!connected || !st->launcher_is_ours) {
        char line[640];
        int len = snprintf(line, sizeof(line), "manifold: rank %d aborted the job (code %d): %s\n",
                           st->init_count > 0 ? st->job.rank : -1, exit_code, msg);
        if (len > 0)
            (void)!write(STDERR_FILENO, line,
                         (size_t)len < sizeof(line) ? (size_t)len : sizeof(line) - 1);
        /* Such a launcher forwards our standard error through a pipe and kills the job as
         * soon as it hears of the abort: under load the line was lost with the pipe. Give
         * the forwarding a moment to pass it on first. */
        if (connected) {
            struct timespec pause = {0, ABORT_FORWARD_WAIT_NS};
            nanosleep(&pause, NULL);
        }
    }
    if (connected)
        send_abort(exit_code, msg);
    if (locked)
        pthread_mutex_unlock(&st->lock);
    _exit(exit_code);
}
