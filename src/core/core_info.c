/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Core layer: info objects, an ordered list of (key, value) strings behind a lock. Keys keep
 * their insertion order, which MPI_Info_get_nthkey exposes; from a few dozen keys on a hash
 * index finds a key without reading them all. Also the contents of MPI_INFO_ENV,
 * built once on first use from what this process knows of how it was started.
 */
#include "core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static mf_recycler_t info_objects = MF_RECYCLER_INIT;

/* Below this many keys a search reads them all; from it on a hash index of the keys finds
 * one in constant time, so that setting n keys or copying n keys into another object is
 * linear in n (MPI_Info_set searches for the key it sets). */
#define INFO_INDEX_MIN 32

mf_status_t mf_info_create(struct MPI_ABI_Info **info_p)
{
    struct MPI_ABI_Info *info = mf_recycler_take(&info_objects, sizeof(*info), "info object");
    if (info == NULL)
        return MF_ERR_NO_MEMORY;
    info->kind = MF_KIND_INFO;
    pthread_mutex_init(&info->lock, NULL);
    *info_p = info;
    return MF_OK;
}

void mf_info_free(struct MPI_ABI_Info *info)
{
    for (int i = 0; i < info->nkeys; i++) {
        free(info->keys[i]);
        free(info->values[i]);
    }
    free(info->keys);
    free(info->values);
    free(info->index);
    pthread_mutex_destroy(&info->lock);
    mf_recycler_put(&info_objects, info);
}

static size_t key_hash(const char *key)
{
    uint64_t h = 14695981039346656037ULL; /* 64-bit FNV-1a */
    for (const unsigned char *c = (const unsigned char *)key; *c != '\0'; c++)
        h = (h ^ *c) * 1099511628211ULL;
    return (size_t)h;
}

/* Enter key number i in the index, which has a free slot. */
static void index_add_locked(struct MPI_ABI_Info *info, int i)
{
    size_t mask = info->index_size - 1, slot = key_hash(info->keys[i]) & mask;
    while (info->index[slot] >= 0)
        slot = (slot + 1) & mask;
    info->index[slot] = i;
}

/* Take key number i out of the index before it is deleted; the keys after it move down by
 * one. The hole is filled from the run of entries after it (linear probing keeps no
 * tombstones): an entry moves back when its home slot is not between the hole and itself. */
static void index_remove_locked(struct MPI_ABI_Info *info, int i)
{
    size_t mask = info->index_size - 1, hole = key_hash(info->keys[i]) & mask;
    while (info->index[hole] != i)
        hole = (hole + 1) & mask;
    for (size_t s = (hole + 1) & mask; info->index[s] >= 0; s = (s + 1) & mask) {
        size_t home = key_hash(info->keys[info->index[s]]) & mask;
        if (((s - hole) & mask) <= ((s - home) & mask)) {
            info->index[hole] = info->index[s];
            hole = s;
        }
    }
    info->index[hole] = -1;
    for (size_t s = 0; s < info->index_size; s++) {
        if (info->index[s] > i)
            info->index[s]--;
    }
}

/* Index every key again (to grow the index, or to give a copy one). Without memory the
 * object goes without an index: searches read every key, which stays correct. */
static void index_rebuild_locked(struct MPI_ABI_Info *info)
{
    free(info->index);
    info->index = NULL;
    info->index_size = 0;
    if (info->nkeys < INFO_INDEX_MIN)
        return;
    size_t size = 64;
    while (size < 4 * (size_t)info->nkeys)
        size *= 2;
    info->index = malloc(sizeof(int) * size);
    if (info->index == NULL)
        return;
    info->index_size = size;
    for (size_t s = 0; s < size; s++)
        info->index[s] = -1;
    for (int i = 0; i < info->nkeys; i++)
        index_add_locked(info, i);
}

/* Key number i was appended: index it, growing the index to keep it at most half full. */
static void index_appended_locked(struct MPI_ABI_Info *info, int i)
{
    if (info->index != NULL && 2 * (size_t)info->nkeys <= info->index_size)
        index_add_locked(info, i);
    else if (info->nkeys >= INFO_INDEX_MIN)
        index_rebuild_locked(info);
}

static int find_locked(struct MPI_ABI_Info *info, const char *key)
{
    if (info->index == NULL) {
        for (int i = 0; i < info->nkeys; i++) {
            if (strcmp(info->keys[i], key) == 0)
                return i;
        }
        return -1;
    }
    size_t mask = info->index_size - 1;
    for (size_t slot = key_hash(key) & mask; info->index[slot] >= 0; slot = (slot + 1) & mask) {
        if (strcmp(info->keys[info->index[slot]], key) == 0)
            return info->index[slot];
    }
    return -1;
}

/* Room for `more` keys after the present ones; the arrays grow by half at least, so that
 * appending n keys one by one copies O(n) pointers in all. */
static mf_status_t reserve_locked(struct MPI_ABI_Info *info, int more)
{
    if (info->nkeys + more <= info->cap)
        return MF_OK;
    int cap = info->cap + info->cap / 2;
    if (cap < info->nkeys + more)
        cap = info->nkeys + more;
    if (cap < 8)
        cap = 8;
    char **keys = realloc(info->keys, sizeof(char *) * (size_t)cap);
    if (keys == NULL)
        return MF_ERR_NO_MEMORY;
    info->keys = keys;
    char **values = realloc(info->values, sizeof(char *) * (size_t)cap);
    if (values == NULL)
        return MF_ERR_NO_MEMORY; /* keys is larger than needed, which is harmless */
    info->values = values;
    info->cap = cap;
    return MF_OK;
}

mf_status_t mf_info_set(struct MPI_ABI_Info *info, const char *key, const char *value)
{
    char *v = strdup(value);
    if (v == NULL)
        return MF_ERR_NO_MEMORY;
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&info->lock);
    int i = find_locked(info, key);
    if (i >= 0) {
        free(info->values[i]);
        info->values[i] = v;
        goto out_unlock;
    }
    char *k = strdup(key);
    status = k != NULL ? reserve_locked(info, 1) : MF_ERR_NO_MEMORY;
    if (status != MF_OK) {
        free(k);
        free(v);
        goto out_unlock;
    }
    info->keys[info->nkeys] = k;
    info->values[info->nkeys] = v;
    info->nkeys++;
    index_appended_locked(info, info->nkeys - 1);
out_unlock:
    pthread_mutex_unlock(&info->lock);
    return status;
}

mf_status_t mf_info_delete(struct MPI_ABI_Info *info, const char *key)
{
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&info->lock);
    int i = find_locked(info, key);
    if (i < 0) {
        status = MF_ERR_NOT_FOUND;
    } else {
        if (info->index != NULL)
            index_remove_locked(info, i);
        free(info->keys[i]);
        free(info->values[i]);
        memmove(&info->keys[i], &info->keys[i + 1], sizeof(char *) * (size_t)(info->nkeys - i - 1));
        memmove(&info->values[i], &info->values[i + 1],
                sizeof(char *) * (size_t)(info->nkeys - i - 1));
        info->nkeys--;
    }
    pthread_mutex_unlock(&info->lock);
    return status;
}

int mf_info_get(struct MPI_ABI_Info *info, const char *key, char *value, size_t size, size_t *len_p)
{
    pthread_mutex_lock(&info->lock);
    int i = find_locked(info, key);
    if (i >= 0) {
        *len_p = strlen(info->values[i]);
        if (value != NULL && size > 0)
            snprintf(value, size, "%s", info->values[i]);
    }
    pthread_mutex_unlock(&info->lock);
    return i >= 0;
}

int mf_info_nkeys(struct MPI_ABI_Info *info)
{
    pthread_mutex_lock(&info->lock);
    int n = info->nkeys;
    pthread_mutex_unlock(&info->lock);
    return n;
}

int mf_info_nthkey(struct MPI_ABI_Info *info, int n, char *key, size_t size)
{
    pthread_mutex_lock(&info->lock);
    int ok = n >= 0 && n < info->nkeys;
    if (ok)
        snprintf(key, size, "%s", info->keys[n]);
    pthread_mutex_unlock(&info->lock);
    return ok;
}

mf_status_t mf_info_update(struct MPI_ABI_Info *dst, struct MPI_ABI_Info *src)
{
    mf_status_t status = MF_OK;
    pthread_mutex_lock(&src->lock);
    for (int i = 0; i < src->nkeys && status == MF_OK; i++)
        status = mf_info_set(dst, src->keys[i], src->values[i]);
    pthread_mutex_unlock(&src->lock);
    return status;
}

mf_status_t mf_info_memory_kinds(struct MPI_ABI_Info *info)
{
    static const char key[] = "mpi_memory_alloc_kinds";
    char requested[MPI_MAX_INFO_VAL + 1], kept[MPI_MAX_INFO_VAL + 1] = "";
    size_t len, used = 0;
    if (!mf_info_get(info, key, requested, sizeof(requested), &len))
        return mf_info_set(info, key, "mpi,system");
    /* Comma-separated kinds, each "kind" or "kind:restrictor": host memory only here. */
    char *save = NULL;
    for (char *item = strtok_r(requested, ",", &save); item != NULL;
         item = strtok_r(NULL, ",", &save)) {
        size_t kind = strcspn(item, ":");
        if ((kind == 3 && strncmp(item, "mpi", 3) == 0) ||
            (kind == 6 && strncmp(item, "system", 6) == 0))
            used +=
                (size_t)snprintf(kept + used, sizeof(kept) - used, "%s%s", used ? "," : "", item);
    }
    return used > 0 ? mf_info_set(info, key, kept) : mf_info_delete(info, key);
}

mf_status_t mf_info_dup(struct MPI_ABI_Info *info, struct MPI_ABI_Info **out_p)
{
    struct MPI_ABI_Info *out;
    mf_status_t status = mf_info_create(&out);
    if (status != MF_OK)
        return status;
    /* The source's keys are distinct: copied in one pass, in order, with no search. The new
     * object is nobody else's yet, so only the source is locked. */
    pthread_mutex_lock(&info->lock);
    status = reserve_locked(out, info->nkeys);
    for (int i = 0; i < info->nkeys && status == MF_OK; i++) {
        char *k = strdup(info->keys[i]), *v = strdup(info->values[i]);
        if (k == NULL || v == NULL) {
            free(k);
            free(v);
            status = MF_ERR_NO_MEMORY;
            break;
        }
        out->keys[i] = k;
        out->values[i] = v;
        out->nkeys = i + 1;
    }
    pthread_mutex_unlock(&info->lock);
    if (status != MF_OK) {
        mf_info_free(out);
        return status;
    }
    index_rebuild_locked(out);
    *out_p = out;
    return MF_OK;
}

/* ---- MPI_INFO_ENV (MPI-4.1 section 11.4) ------------------------------------------------- */

/* The command line from /proc/self/cmdline: MPI_Init may have been given NULL argc/argv, and
 * this also works before MPI_Init sees them. "command" is the first word, "argv" the others
 * joined by spaces. */
static mf_status_t env_command_line(struct MPI_ABI_Info *info)
{
    FILE *f = fopen("/proc/self/cmdline", "r");
    if (f == NULL)
        return MF_OK; /* not Linux: the keys are optional */
    char buf[MPI_MAX_INFO_VAL];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    if (n == 0)
        return MF_OK;
    buf[n] = '\0';
    mf_status_t status = mf_info_set(info, "command", buf);
    size_t first = strlen(buf) + 1;
    if (status != MF_OK || first >= n)
        return status;
    /* The words after the command, NUL-separated (the last NUL included in n or not). */
    for (size_t i = first; i < n; i++) {
        if (buf[i] == '\0' && i + 1 < n)
            buf[i] = ' ';
    }
    return mf_info_set(info, "argv", buf + first);
}

static mf_status_t env_build(struct MPI_ABI_Info *info)
{
    char text[MPI_MAX_INFO_VAL];
    mf_status_t status = env_command_line(info);
    int started = mf_global.world_size > 0; /* MPI_Info_create_env may run before MPI_Init */
    snprintf(text, sizeof(text), "%d", mf_global.world_size);
    /* before MPI_Init, the size the launcher gave (hydra, our mpiexec) if it is a number */
    const char *launched = getenv("PMI_SIZE");
    char *end = NULL;
    long launched_size = launched != NULL ? strtol(launched, &end, 10) : 0;
    if (!started && end != NULL && end != launched && *end == '\0' && launched_size > 0)
        snprintf(text, sizeof(text), "%ld", launched_size);
    else if (!started)
        text[0] = '\0';
    if (status == MF_OK && text[0] != '\0')
        status = mf_info_set(info, "maxprocs", text);
    if (status == MF_OK && gethostname(text, sizeof(text) - 1) == 0) {
        text[sizeof(text) - 1] = '\0';
        status = mf_info_set(info, "host", text);
    }
    struct utsname u;
    if (status == MF_OK && uname(&u) == 0)
        status = mf_info_set(info, "arch", u.machine);
    if (status == MF_OK && getcwd(text, sizeof(text)) != NULL)
        status = mf_info_set(info, "wdir", text);
    const char *level = mf_global.thread_level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                        : mf_global.thread_level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                        : mf_global.thread_level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                                                          : "MPI_THREAD_SINGLE";
    if (status == MF_OK && started)
        status = mf_info_set(info, "thread_level", level);
    return status;
}

/* The command line as the program passed it (MPI_Info_create_env): it wins over /proc, which
 * names an interpreter's command rather than its script's. */
static mf_status_t env_from_args(struct MPI_ABI_Info *info, int argc, char *argv[])
{
    mf_status_t status = mf_info_set(info, "command", argv[0]);
    char words[MPI_MAX_INFO_VAL];
    size_t used = 0;
    words[0] = '\0';
    for (int i = 1; i < argc && argv[i] != NULL; i++) {
        int n = snprintf(words + used, sizeof(words) - used, "%s%s", i > 1 ? " " : "", argv[i]);
        if (n < 0 || used + (size_t)n >= sizeof(words))
            break; /* truncated to the longest value an info object holds */
        used += (size_t)n;
    }
    if (status != MF_OK)
        return status;
    if (argc > 1)
        return mf_info_set(info, "argv", words);
    mf_info_delete(info, "argv"); /* no arguments: no key, whatever /proc said */
    return MF_OK;
}

mf_status_t mf_info_create_env(int argc, char *argv[], struct MPI_ABI_Info **info_p)
{
    struct MPI_ABI_Info *info;
    mf_status_t status = mf_info_create(&info);
    if (status != MF_OK)
        return status;
    status = env_build(info);
    if (status == MF_OK && argc > 0 && argv != NULL && argv[0] != NULL)
        status = env_from_args(info, argc, argv);
    if (status != MF_OK) {
        mf_info_free(info);
        return status;
    }
    *info_p = info;
    return MF_OK;
}

static struct {
    pthread_mutex_t lock;
    struct MPI_ABI_Info *info;
    int started; /* -1: not built; 1: built after MPI_Init, with maxprocs and thread_level */
} info_env = {.lock = PTHREAD_MUTEX_INITIALIZER, .started = -1};

struct MPI_ABI_Info *mf_info_env(void)
{
    pthread_mutex_lock(&info_env.lock);
    if (info_env.info == NULL) {
        struct MPI_ABI_Info *info;
        if (mf_info_create(&info) == MF_OK)
            info_env.info = info;
    }
    /* The info functions work before MPI_Init: a look then must not keep the job's keys out. */
    int started = mf_global.world_size > 0;
    if (info_env.info != NULL && info_env.started != started) {
        if (env_build(info_env.info) != MF_OK)
            mf_log(MF_LOG_WARN, "info", "MPI_INFO_ENV is incomplete: out of memory");
        info_env.started = started;
    }
    struct MPI_ABI_Info *info = info_env.info;
    pthread_mutex_unlock(&info_env.lock);
    return info;
}
