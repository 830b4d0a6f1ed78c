/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher: removal of the shared-memory files a job leaves in /dev/shm when ranks crash or are
 * killed before unlinking them (UCX's posix transport names them "ucx_shm*"). To stay safe when
 * other jobs of the same user run at the same time, a file is removed only if it appeared after
 * the job started, belongs to us, and no process we can inspect has it open or mapped.
 */
#define _GNU_SOURCE
#include "mpiexec.h"

#include <ctype.h>
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHM_DIR "/dev/shm"

static const char *const shm_prefixes[] = {"ucx_shm", "manifold"};

typedef struct candidate {
    char path[300];
    int in_use;
} candidate_t;

static int is_job_segment(const char *name)
{
    for (size_t i = 0; i < sizeof(shm_prefixes) / sizeof(shm_prefixes[0]); i++) {
        if (strncmp(name, shm_prefixes[i], strlen(shm_prefixes[i])) == 0)
            return 1;
    }
    return 0;
}

static int snapshot_has(const mf_shm_snapshot_t *snap, const char *name)
{
    for (size_t i = 0; i < snap->count; i++) {
        if (strcmp(snap->names[i], name) == 0)
            return 1;
    }
    return 0;
}

void mf_shm_snapshot_take(mf_shm_snapshot_t *snap)
{
    DIR *dir = opendir(SHM_DIR);
    struct dirent *entry;
    *snap = (mf_shm_snapshot_t){NULL, 0};
    if (dir == NULL)
        return;
    while ((entry = readdir(dir)) != NULL) {
        if (!is_job_segment(entry->d_name))
            continue;
        char **names = realloc(snap->names, (snap->count + 1) * sizeof(char *));
        char *name = strdup(entry->d_name);
        if (names == NULL || name == NULL) {
            free(name);
            snap->names = names != NULL ? names : snap->names;
            break; /* an incomplete snapshot only means fewer files are candidates */
        }
        snap->names = names;
        snap->names[snap->count++] = name;
    }
    closedir(dir);
}

/* New files of ours, not in the snapshot; returns how many were stored (at most max). */
static size_t find_candidates(const mf_shm_snapshot_t *snap, candidate_t *cands, size_t max)
{
    DIR *dir = opendir(SHM_DIR);
    struct dirent *entry;
    struct stat st;
    size_t count = 0;
    if (dir == NULL)
        return 0;
    while ((entry = readdir(dir)) != NULL && count < max) {
        if (!is_job_segment(entry->d_name) || snapshot_has(snap, entry->d_name))
            continue;
        candidate_t *c = &cands[count];
        snprintf(c->path, sizeof(c->path), "%s/%s", SHM_DIR, entry->d_name);
        c->in_use = 0;
        if (lstat(c->path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid())
            count++;
    }
    closedir(dir);
    return count;
}

static void mark_path(candidate_t *cands, size_t count, const char *path, size_t len)
{
    for (size_t i = 0; i < count; i++) {
        if (strlen(cands[i].path) == len && strncmp(cands[i].path, path, len) == 0)
            cands[i].in_use = 1;
    }
}

static void mark_open_files(int pid, candidate_t *cands, size_t count)
{
    char dir_path[32], link_path[300], target[320];
    snprintf(dir_path, sizeof(dir_path), "/proc/%d/fd", pid);
    DIR *dir = opendir(dir_path);
    struct dirent *entry;
    if (dir == NULL)
        return;
    while ((entry = readdir(dir)) != NULL) {
        snprintf(link_path, sizeof(link_path), "%s/%s", dir_path, entry->d_name);
        ssize_t n = readlink(link_path, target, sizeof(target) - 1);
        if (n > 0)
            mark_path(cands, count, target, (size_t)n);
    }
    closedir(dir);
}

static void mark_mapped_files(int pid, candidate_t *cands, size_t count)
{
    char maps_path[32], *line = NULL;
    size_t cap = 0;
    ssize_t n;
    snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", pid);
    FILE *maps = fopen(maps_path, "r");
    if (maps == NULL)
        return;
    while ((n = getline(&line, &cap, maps)) > 0) {
        char *path = strstr(line, SHM_DIR "/");
        if (path != NULL)
            mark_path(cands, count, path, strcspn(path, " \n"));
    }
    free(line);
    fclose(maps);
}

/* Returns 0 if /proc cannot be read: then nobody can tell whether a file is still in use. */
static int mark_in_use(candidate_t *cands, size_t count)
{
    DIR *proc = opendir("/proc");
    struct dirent *entry;
    if (proc == NULL)
        return 0;
    while ((entry = readdir(proc)) != NULL) {
        int pid = atoi(entry->d_name);
        if (!isdigit((unsigned char)entry->d_name[0]) || pid <= 0)
            continue;
        mark_open_files(pid, cands, count);
        mark_mapped_files(pid, cands, count);
    }
    closedir(proc);
    return 1;
}

static void snapshot_free(mf_shm_snapshot_t *snap)
{
    for (size_t i = 0; i < snap->count; i++)
        free(snap->names[i]);
    free(snap->names);
    *snap = (mf_shm_snapshot_t){NULL, 0};
}

void mf_shm_cleanup(mf_shm_snapshot_t *snap, mf_sink_t *report)
{
    candidate_t cands[64];
    size_t count = find_candidates(snap, cands, sizeof(cands) / sizeof(cands[0])), removed = 0;
    snapshot_free(snap);
    if (count == 0 || !mark_in_use(cands, count))
        return;
    /* The names say whose files they were (UCX's or the library's), up to a line's worth. */
    char names[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < count; i++) {
        if (cands[i].in_use || unlink(cands[i].path) != 0)
            continue;
        removed++;
        const char *name = cands[i].path + strlen(SHM_DIR) + 1;
        if (used < sizeof(names)) {
            int n = snprintf(names + used, sizeof(names) - used, "%s%s", used > 0 ? " " : "", name);
            used = n > 0 ? used + (size_t)n : used;
        }
    }
    if (removed > 0)
        mf_sink_printf(report,
                       "mpiexec: removed %zu shared-memory file(s) the ranks left in %s: %s%s\n",
                       removed, SHM_DIR, names, used >= sizeof(names) ? " ..." : "");
}
