/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMI layer: key-value operations on the job's key space (put, fence, get), binary blobs split
 * across keys, node attributes and the node's rank list, for PMI-1, PMI-2 and singletons. Each
 * public function takes the layer's mutex for its whole exchange with the launcher.
 */
#include "pmi_impl.h"

#include <stdlib.h>
#include <string.h>

#define BLOB_HEADER_RESERVE 32 /* room for "<len>:<nchunks>:" in the first chunk */
#define KEY_BUF_SIZE        256

/* Letters, digits, '_', '-' and '/' are what every launcher's key parser accepts; "PMI_" keys
 * are reserved for the launcher's job attributes. */
mf_status_t mf_pmi_check_key(const char *key)
{
    size_t len = strlen(key);
    if (len == 0 || len > mf_pmi_state.key_max || strncmp(key, "PMI_", 4) == 0 ||
        strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-/") != len) {
        mf_log(MF_LOG_ERROR, "pmi", "bad key '%s': use 1 to %zu of [A-Za-z0-9_/-], no PMI_", key,
               mf_pmi_state.key_max);
        return MF_ERR_INVALID;
    }
    return MF_OK;
}

mf_status_t mf_pmi_check_value(const char *value)
{
    size_t len = strlen(value);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)value[i];
        if (c <= ' ' || c >= 0x7f || c == ';' || c == '\\') {
            mf_log(MF_LOG_ERROR, "pmi", "value byte %zu (0x%02x) cannot travel in PMI", i, c);
            return MF_ERR_INVALID;
        }
    }
    if (len == 0 || len > mf_pmi_state.value_max) {
        mf_log(MF_LOG_ERROR, "pmi", "a %zu-byte value does not fit PMI (1 to %zu bytes)", len,
               mf_pmi_state.value_max);
        return MF_ERR_INVALID;
    }
    return MF_OK;
}

mf_status_t mf_pmi_check_ready_locked(const char *what)
{
    if (mf_pmi_state.init_count > 0)
        return MF_OK;
    mf_log(MF_LOG_ERROR, "pmi", "%s called before mf_pmi_init", what);
    return MF_ERR_INVALID;
}

/* Lookups before the first fence have no defined result, and hydra's PMI-2 server aborts the
 * whole job on one, so they are refused everywhere. */
static mf_status_t check_lookup_ready_locked(const char *what)
{
    mf_status_t status = mf_pmi_check_ready_locked(what);
    if (status != MF_OK || mf_pmi_state.fenced)
        return status;
    mf_log(MF_LOG_ERROR, "pmi", "%s called before the first mf_pmi_fence", what);
    return MF_ERR_INVALID;
}

static mf_status_t copy_value(const char *text, char *value, size_t value_size)
{
    size_t len = strlen(text);
    if (len >= value_size)
        return MF_ERR_TRUNCATE;
    memcpy(value, text, len + 1);
    return MF_OK;
}

/* Copies the "value" of the last reply; the launcher said the key exists, so it must be there. */
static mf_status_t copy_reply_value(char *value, size_t value_size)
{
    const char *text = mf_pmi_msg_get(&mf_pmi_state.reply, "value");
    if (text == NULL) {
        mf_log(MF_LOG_ERROR, "pmi", "reply '%s' from the launcher has no value",
               mf_pmi_msg_cmd(&mf_pmi_state.reply));
        return MF_ERR_PROTOCOL;
    }
    return copy_value(text, value, value_size);
}

mf_status_t mf_pmi_put_locked(const char *key, const char *value)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    mf_status_t status;
    if ((status = mf_pmi_check_key(key)) != MF_OK || (status = mf_pmi_check_value(value)) != MF_OK)
        return status;
    if (st->version == 0)
        return mf_pmi_local_put_locked(key, value);
    mf_pmi_out_begin(&req, st->version, st->version == 2 ? "kvs-put" : "put");
    if (st->version == 1)
        mf_pmi_out_add(&req, "kvsname", st->job.kvsname);
    mf_pmi_out_add(&req, "key", key);
    mf_pmi_out_add(&req, "value", value);
    return mf_pmi_call_locked(&req, st->version == 2 ? "kvs-put-response" : "put_result", 0);
}

static mf_status_t get_locked(int src_rank, const char *key, char *value, size_t value_size)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    mf_status_t status = mf_pmi_check_key(key);
    if (status != MF_OK)
        return status;
    if (st->version == 0) {
        const char *text = mf_pmi_local_get_locked(key);
        return text != NULL ? copy_value(text, value, value_size) : MF_ERR_NOT_FOUND;
    }
    mf_pmi_out_begin(&req, st->version, st->version == 2 ? "kvs-get" : "get");
    if (st->version == 2) {
        mf_pmi_out_add(&req, "jobid", st->job.kvsname);
        mf_pmi_out_add_int(&req, "srcid", src_rank);
    } else {
        mf_pmi_out_add(&req, "kvsname", st->job.kvsname);
    }
    mf_pmi_out_add(&req, "key", key);
    status = mf_pmi_call_locked(&req, st->version == 2 ? "kvs-get-response" : "get_result", 1);
    if (status != MF_OK)
        return status;
    return copy_reply_value(value, value_size);
}

mf_status_t mf_pmi_get_job_attr_locked(const char *key, char *value, size_t value_size)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    if (st->version == 0)
        return MF_ERR_NOT_FOUND;
    mf_pmi_out_begin(&req, st->version, st->version == 2 ? "info-getjobattr" : "get");
    if (st->version == 1)
        mf_pmi_out_add(&req, "kvsname", st->job.kvsname);
    mf_pmi_out_add(&req, "key", key);
    mf_status_t status =
        mf_pmi_call_locked(&req, st->version == 2 ? "info-getjobattr-response" : "get_result", 1);
    if (status != MF_OK)
        return status;
    return copy_reply_value(value, value_size);
}

mf_status_t mf_pmi_put(const char *key, const char *value)
{
    pthread_mutex_lock(&mf_pmi_state.lock);
    mf_status_t status = mf_pmi_check_ready_locked("mf_pmi_put");
    if (status == MF_OK)
        status = mf_pmi_put_locked(key, value);
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return status;
}

mf_status_t mf_pmi_get(int src_rank, const char *key, char *value, size_t value_size)
{
    pthread_mutex_lock(&mf_pmi_state.lock);
    mf_status_t status = check_lookup_ready_locked("mf_pmi_get");
    if (status == MF_OK)
        status = get_locked(src_rank, key, value, value_size);
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return status;
}

mf_status_t mf_pmi_fence(void)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    pthread_mutex_lock(&st->lock);
    mf_status_t status = mf_pmi_check_ready_locked("mf_pmi_fence");
    if (status == MF_OK && st->version > 0) {
        mf_pmi_out_begin(&req, st->version, st->version == 2 ? "kvs-fence" : "barrier_in");
        status =
            mf_pmi_call_locked(&req, st->version == 2 ? "kvs-fence-response" : "barrier_out", 0);
    }
    if (status == MF_OK)
        st->fenced = 1;
    pthread_mutex_unlock(&st->lock);
    return status;
}

size_t mf_pmi_value_max(void)
{
    pthread_mutex_lock(&mf_pmi_state.lock);
    size_t value_max = mf_pmi_state.value_max;
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return value_max;
}

/* Without PMI-2 node attributes, a node attribute is a job key tagged with the node. */
static mf_status_t node_key(char *buf, const char *key)
{
    int len = snprintf(buf, KEY_BUF_SIZE, "%s%s", mf_pmi_state.node_tag, key);
    if (len > 0 && len < KEY_BUF_SIZE)
        return MF_OK;
    mf_log(MF_LOG_ERROR, "pmi", "node attribute key '%.40s...' is too long", key);
    return MF_ERR_INVALID;
}

static mf_status_t put_node_attr_locked(const char *key, const char *value)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    char tagged[KEY_BUF_SIZE];
    mf_pmi_out_t req;
    mf_status_t status;
    if (st->version != 2) {
        if ((status = node_key(tagged, key)) != MF_OK)
            return status;
        return mf_pmi_put_locked(tagged, value);
    }
    if ((status = mf_pmi_check_key(key)) != MF_OK || (status = mf_pmi_check_value(value)) != MF_OK)
        return status;
    mf_pmi_out_begin(&req, 2, "info-putnodeattr");
    mf_pmi_out_add(&req, "key", key);
    mf_pmi_out_add(&req, "value", value);
    return mf_pmi_call_locked(&req, "info-putnodeattr-response", 0);
}

static mf_status_t get_node_attr_locked(const char *key, char *value, size_t value_size)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    char tagged[KEY_BUF_SIZE];
    mf_pmi_out_t req;
    mf_status_t status;
    if (st->version != 2) {
        if ((status = node_key(tagged, key)) != MF_OK)
            return status;
        return get_locked(-1, tagged, value, value_size);
    }
    if ((status = mf_pmi_check_key(key)) != MF_OK)
        return status;
    /* wait=FALSE: callers fence first, and a missing attribute must not hang the process. */
    mf_pmi_out_begin(&req, 2, "info-getnodeattr");
    mf_pmi_out_add(&req, "key", key);
    mf_pmi_out_add(&req, "wait", "FALSE");
    if ((status = mf_pmi_call_locked(&req, "info-getnodeattr-response", 1)) != MF_OK)
        return status;
    return copy_reply_value(value, value_size);
}

mf_status_t mf_pmi_put_node_attr(const char *key, const char *value)
{
    pthread_mutex_lock(&mf_pmi_state.lock);
    mf_status_t status = mf_pmi_check_ready_locked("mf_pmi_put_node_attr");
    if (status == MF_OK)
        status = put_node_attr_locked(key, value);
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return status;
}

mf_status_t mf_pmi_get_node_attr(const char *key, char *value, size_t value_size)
{
    pthread_mutex_lock(&mf_pmi_state.lock);
    mf_status_t status = mf_pmi_check_ready_locked("mf_pmi_get_node_attr");
    if (status == MF_OK)
        status = get_node_attr_locked(key, value, value_size);
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return status;
}

mf_status_t mf_pmi_get_node_rank_list(int *ranks_p, int max_ranks, int *count_p)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    pthread_mutex_lock(&st->lock);
    mf_status_t status = mf_pmi_check_ready_locked("mf_pmi_get_node_rank_list");
    if (status == MF_OK && st->node_ranks == NULL)
        status = MF_ERR_NOT_FOUND;
    if (status == MF_OK && max_ranks < st->job.local_size)
        status = MF_ERR_TRUNCATE;
    if (status == MF_OK) {
        memcpy(ranks_p, st->node_ranks, (size_t)st->job.local_size * sizeof(int));
        *count_p = st->job.local_size;
    }
    pthread_mutex_unlock(&st->lock);
    return status;
}

mf_status_t mf_pmi_get_node_map(int *node_of_rank, int size)
{
    char mapping[MF_PMI_WIRE_MAX];
    mf_pmi_state_t *st = &mf_pmi_state;
    pthread_mutex_lock(&st->lock);
    mf_status_t status = mf_pmi_check_ready_locked("mf_pmi_get_node_map");
    if (status == MF_OK)
        status = mf_pmi_get_job_attr_locked("PMI_process_mapping", mapping, sizeof(mapping));
    pthread_mutex_unlock(&st->lock);
    if (status == MF_OK)
        status = mf_pmi_mapping_parse(mapping, size, node_of_rank);
    return status == MF_OK ? MF_OK : MF_ERR_NOT_FOUND;
}

/* Chunk 0 of a blob is "<key>-b<rank>", chunk i is "<key>-b<rank>-<i>". */
static mf_status_t blob_key(char *buf, const char *key, int rank, size_t chunk)
{
    int len = chunk == 0 ? snprintf(buf, KEY_BUF_SIZE, "%s-b%d", key, rank)
                         : snprintf(buf, KEY_BUF_SIZE, "%s-b%d-%zu", key, rank, chunk);
    return len > 0 && len < KEY_BUF_SIZE ? MF_OK : MF_ERR_INVALID;
}

/* Hex characters per chunk: the value limit rounded down to whole bytes. */
static size_t blob_chunk_chars(void)
{
    return mf_pmi_state.value_max & ~(size_t)1;
}

static mf_status_t put_blob_locked(const char *key, const char *hex, size_t len)
{
    char name[KEY_BUF_SIZE], value[MF_PMI_WIRE_MAX];
    size_t chunk_chars = blob_chunk_chars(), hex_len = 2 * len;
    size_t first = chunk_chars - BLOB_HEADER_RESERVE;
    size_t rest = hex_len > first ? hex_len - first : 0;
    size_t nchunks = 1 + (rest + chunk_chars - 1) / chunk_chars;
    int rank = mf_pmi_state.job.rank;
    mf_status_t status;
    if (first > hex_len)
        first = hex_len;
    snprintf(value, sizeof(value), "%zu:%zu:%.*s", len, nchunks, (int)first, hex);
    if ((status = blob_key(name, key, rank, 0)) != MF_OK ||
        (status = mf_pmi_put_locked(name, value)) != MF_OK)
        return status;
    for (size_t i = 1, offset = first; i < nchunks; i++, offset += chunk_chars) {
        size_t n = hex_len - offset < chunk_chars ? hex_len - offset : chunk_chars;
        snprintf(value, sizeof(value), "%.*s", (int)n, hex + offset);
        if ((status = blob_key(name, key, rank, i)) != MF_OK ||
            (status = mf_pmi_put_locked(name, value)) != MF_OK)
            return status;
    }
    return MF_OK;
}

mf_status_t mf_pmi_put_blob(const char *key, const void *data, size_t len)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    char *hex = mf_malloc(2 * len + 1, "pmi blob encoding");
    if (hex == NULL)
        return MF_ERR_NO_MEMORY;
    mf_pmi_hex_encode(data, len, hex);
    pthread_mutex_lock(&st->lock);
    mf_status_t status = mf_pmi_check_ready_locked("mf_pmi_put_blob");
    if (status == MF_OK && blob_chunk_chars() <= BLOB_HEADER_RESERVE) {
        mf_log(MF_LOG_ERROR, "pmi", "the launcher's value limit (%zu) is too small for blobs",
               st->value_max);
        status = MF_ERR_UNSUPPORTED;
    }
    if (status == MF_OK)
        status = put_blob_locked(key, hex, len);
    pthread_mutex_unlock(&st->lock);
    free(hex);
    return status;
}

/* Parses "<len>:<nchunks>:" and returns where the first chunk's hex starts. */
static const char *parse_blob_header(const char *value, size_t *len_p, size_t *nchunks_p)
{
    char *end;
    if (value[0] < '0' || value[0] > '9')
        return NULL;
    unsigned long long len = strtoull(value, &end, 10);
    if (*end != ':' || end[1] < '0' || end[1] > '9')
        return NULL;
    unsigned long long nchunks = strtoull(end + 1, &end, 10);
    if (*end != ':' || nchunks == 0 || nchunks > len + 1 || len > SIZE_MAX / 2)
        return NULL;
    *len_p = (size_t)len;
    *nchunks_p = (size_t)nchunks;
    return end + 1;
}

/* Decodes one chunk's hex at *offset_p in buf, refusing to run past the announced length. */
static mf_status_t blob_decode_chunk(const char *hex, unsigned char *buf, size_t len,
                                     size_t *offset_p)
{
    size_t hex_len = strlen(hex);
    if (hex_len % 2 != 0 || hex_len / 2 > len - *offset_p)
        return MF_ERR_PROTOCOL;
    mf_status_t status = mf_pmi_hex_decode(hex, hex_len, buf + *offset_p);
    if (status == MF_OK)
        *offset_p += hex_len / 2;
    return status;
}

static mf_status_t get_blob_locked(int src_rank, const char *key, void *buf, size_t buf_size,
                                   size_t *len_p)
{
    char name[KEY_BUF_SIZE], value[MF_PMI_WIRE_MAX];
    size_t len, nchunks, offset = 0;
    mf_status_t status;
    if ((status = blob_key(name, key, src_rank, 0)) != MF_OK ||
        (status = get_locked(src_rank, name, value, sizeof(value))) != MF_OK)
        return status;
    const char *hex = parse_blob_header(value, &len, &nchunks);
    if (hex == NULL)
        goto err_malformed;
    if (buf == NULL) {
        *len_p = len;
        return MF_OK;
    }
    if (len > buf_size)
        return MF_ERR_TRUNCATE;
    if (blob_decode_chunk(hex, buf, len, &offset) != MF_OK)
        goto err_malformed;
    for (size_t i = 1; i < nchunks; i++) {
        if ((status = blob_key(name, key, src_rank, i)) != MF_OK ||
            (status = get_locked(src_rank, name, value, sizeof(value))) != MF_OK)
            goto err_missing_chunk;
        if (blob_decode_chunk(value, buf, len, &offset) != MF_OK)
            goto err_malformed;
    }
    if (offset != len)
        goto err_malformed;
    *len_p = len;
    return MF_OK;

err_missing_chunk:
    mf_log(MF_LOG_ERROR, "pmi", "blob '%s' of rank %d lacks chunk key '%s': %s", key, src_rank,
           name, mf_status_str(status));
    return status == MF_ERR_NOT_FOUND ? MF_ERR_PROTOCOL : status;
err_malformed:
    mf_log(MF_LOG_ERROR, "pmi", "blob '%s' of rank %d is malformed (key '%s')", key, src_rank,
           name);
    return MF_ERR_PROTOCOL;
}

mf_status_t mf_pmi_get_blob(int src_rank, const char *key, void *buf, size_t buf_size,
                            size_t *len_p)
{
    pthread_mutex_lock(&mf_pmi_state.lock);
    mf_status_t status = check_lookup_ready_locked("mf_pmi_get_blob");
    if (status == MF_OK)
        status = get_blob_locked(src_rank, key, buf, buf_size, len_p);
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return status;
}

mf_status_t mf_pmi_local_put_locked(const char *key, const char *value)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    char *value_copy = strdup(value);
    if (value_copy == NULL) {
        mf_log(MF_LOG_ERROR, "pmi", "cannot copy a %zu-byte value", strlen(value));
        return MF_ERR_NO_MEMORY;
    }
    for (mf_pmi_kv_t *kv = st->local_kvs; kv != NULL; kv = kv->next) {
        if (strcmp(kv->key, key) == 0) {
            free(kv->value);
            kv->value = value_copy;
            return MF_OK;
        }
    }
    mf_pmi_kv_t *kv = mf_malloc(sizeof(*kv), "singleton key");
    char *key_copy = strdup(key);
    if (kv == NULL || key_copy == NULL) {
        free(kv);
        free(key_copy);
        free(value_copy);
        return MF_ERR_NO_MEMORY;
    }
    *kv = (mf_pmi_kv_t){.next = st->local_kvs, .key = key_copy, .value = value_copy};
    st->local_kvs = kv;
    return MF_OK;
}

const char *mf_pmi_local_get_locked(const char *key)
{
    for (mf_pmi_kv_t *kv = mf_pmi_state.local_kvs; kv != NULL; kv = kv->next) {
        if (strcmp(kv->key, key) == 0)
            return kv->value;
    }
    return NULL;
}

void mf_pmi_local_clear_locked(void)
{
    while (mf_pmi_state.local_kvs != NULL) {
        mf_pmi_kv_t *kv = mf_pmi_state.local_kvs;
        mf_pmi_state.local_kvs = kv->next;
        free(kv->key);
        free(kv->value);
        free(kv);
    }
}
