/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher: spawn requests as the PMI server receives them, turned into an mf_spawn_req_t for
 * mpiexec to start. PMI-2 sends one frame (ncmds, preputcount, ppkeyN/ppvalN, then per command
 * subcmd, maxprocs, argc, argvN, infokeycount, infokeyN/infovalN, with N from 0); PMI-1 sends one
 * "mcmd=spawn" block per command (nprocs, execname, totspawns, spawnssofar, argcnt, argN from
 * 1, preput_num, preput_key_N/preput_val_N, info_num, info_key_N/info_val_N). Those are the
 * names MPICH's client sends and hydra reads. Of the info keys, "wdir" and "path" are kept;
 * the others are ignored.
 */
#include "mpiexec.h"
#include "pmi_wire.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define ARGC_MAX   MF_PMI_WIRE_MAX_PAIRS
#define NPROCS_MAX (1 << 20) /* sane counts; mpiexec checks its own limit on the sum */

static void req_error(mf_spawn_req_t *req, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void req_error(mf_spawn_req_t *req, const char *fmt, ...)
{
    va_list ap;
    if (req->error[0] != '\0')
        return; /* the first problem is the one worth reporting */
    va_start(ap, fmt);
    vsnprintf(req->error, sizeof(req->error), fmt, ap);
    va_end(ap);
}

static char *dup_or_fail(mf_spawn_req_t *req, const char *text)
{
    char *copy = strdup(text);
    if (copy == NULL)
        req_error(req, "out of memory");
    return copy;
}

/* The count under key, in [min, max]; when absent, `missing` (-1: required). */
static int get_count(mf_spawn_req_t *req, const mf_pmi_msg_t *msg, const char *key, int min,
                     int max, int missing, int *value_p)
{
    mf_status_t status = mf_pmi_msg_get_int(msg, key, value_p);
    if (status == MF_ERR_NOT_FOUND && missing >= 0) {
        *value_p = missing;
        return 1;
    }
    if (status == MF_OK && *value_p >= min && *value_p <= max)
        return 1;
    req_error(req, "spawn needs %s from %d to %d", key, min, max);
    return 0;
}

static mf_spawn_req_t *req_create(int ncmds)
{
    mf_spawn_req_t *req = mf_calloc(1, sizeof(*req), "spawn request");
    if (req == NULL)
        return NULL;
    req->parent_job = -1;
    req->ncmds = ncmds;
    req->cmds = mf_calloc((size_t)ncmds, sizeof(req->cmds[0]), "spawn commands");
    if (req->cmds == NULL) {
        free(req);
        return NULL;
    }
    return req;
}

static void free_strings(char **strings, int n)
{
    for (int i = 0; strings != NULL && i < n; i++)
        free(strings[i]);
    free(strings);
}

static void preput_clear(mf_spawn_req_t *req)
{
    free_strings(req->preput_keys, req->npreput);
    free_strings(req->preput_vals, req->npreput);
    req->preput_keys = req->preput_vals = NULL;
    req->npreput = 0;
}

void mf_spawn_req_free(mf_spawn_req_t *req)
{
    if (req == NULL)
        return;
    for (int c = 0; c < req->ncmds; c++) {
        char **argv = req->cmds[c].argv;
        for (int i = 0; argv != NULL && argv[i] != NULL; i++)
            free(argv[i]);
        free(argv);
        free(req->cmds[c].wdir);
        free(req->cmds[c].path);
    }
    free(req->cmds);
    preput_clear(req);
    free(req);
}

static int preput_alloc(mf_spawn_req_t *req, int n)
{
    preput_clear(req);
    req->preput_keys = mf_calloc((size_t)n + 1, sizeof(char *), "preput keys");
    req->preput_vals = mf_calloc((size_t)n + 1, sizeof(char *), "preput values");
    req->npreput = n;
    if (req->preput_keys != NULL && req->preput_vals != NULL)
        return 1;
    req_error(req, "out of memory");
    return 0;
}

/* argv[0] is the program; argc arguments follow, filled in later; the array ends with NULL. */
static int cmd_start(mf_spawn_req_t *req, mf_spawn_cmd_t *cmd, const char *exe, int argc)
{
    if (exe == NULL || exe[0] == '\0') {
        req_error(req, "spawn needs a program name");
        return 0;
    }
    cmd->argv = mf_calloc((size_t)argc + 2, sizeof(char *), "spawn arguments");
    if (cmd->argv == NULL) {
        req_error(req, "out of memory");
        return 0;
    }
    cmd->argv[0] = dup_or_fail(req, exe);
    return cmd->argv[0] != NULL;
}

/* Keeps the info keys mpiexec honours: "wdir" (the directory to start in) and "path" (where to
 * look for the program). */
static void cmd_info(mf_spawn_req_t *req, mf_spawn_cmd_t *cmd, const char *key, const char *value)
{
    char **slot = NULL;
    if (key == NULL || value == NULL) {
        req_error(req, "spawn info key without a value");
        return;
    }
    if (strcmp(key, "wdir") == 0)
        slot = &cmd->wdir;
    else if (strcmp(key, "path") == 0)
        slot = &cmd->path;
    if (slot == NULL)
        return;
    free(*slot);
    *slot = dup_or_fail(req, value);
}

static void cmd_check_args(mf_spawn_req_t *req, const mf_spawn_cmd_t *cmd, int argc)
{
    for (int i = 1; cmd->argv != NULL && i <= argc; i++) {
        if (cmd->argv[i] == NULL) {
            req_error(req, "spawn of '%s' lacks argument %d of %d", cmd->argv[0], i, argc);
            return;
        }
    }
}

/* "<prefix><N>" with N in [0, count): returns N, or -1. */
static int key_index(const char *key, const char *prefix, int count)
{
    size_t len = strlen(prefix);
    char *end;
    if (strncmp(key, prefix, len) != 0 || key[len] < '0' || key[len] > '9')
        return -1;
    long n = strtol(key + len, &end, 10);
    return *end == '\0' && n < count ? (int)n : -1;
}

static int parse_count(mf_spawn_req_t *req, const char *key, const char *text, int min, int max,
                       int *value_p)
{
    char *end;
    long value = strtol(text, &end, 10);
    if (end != text && *end == '\0' && value >= min && value <= max) {
        *value_p = (int)value;
        return 1;
    }
    req_error(req, "spawn needs %s from %d to %d", key, min, max);
    return 0;
}

/* PMI-2: the keys of a command repeat for every command, so the pairs are read in order, each
 * applying to the latest subcmd. */
typedef struct v2_cursor {
    mf_spawn_cmd_t *cmd;
    int argc, ninfo;
    const char *info_keys[ARGC_MAX];
} v2_cursor_t;

static void v2_pair(mf_spawn_req_t *req, v2_cursor_t *cur, const char *key, const char *value)
{
    int n;
    if ((n = key_index(key, "ppkey", req->npreput)) >= 0) {
        free(req->preput_keys[n]);
        req->preput_keys[n] = dup_or_fail(req, value);
    } else if ((n = key_index(key, "ppval", req->npreput)) >= 0) {
        free(req->preput_vals[n]);
        req->preput_vals[n] = dup_or_fail(req, value);
    } else if (strcmp(key, "subcmd") == 0) {
        if (cur->cmd != NULL)
            cmd_check_args(req, cur->cmd, cur->argc);
        if (req->nadded == req->ncmds) {
            req_error(req, "spawn has more than ncmds=%d commands", req->ncmds);
            return;
        }
        *cur = (v2_cursor_t){.cmd = &req->cmds[req->nadded++]};
        (void)cmd_start(req, cur->cmd, value, ARGC_MAX);
    } else if (cur->cmd == NULL) {
        return; /* ncmds, preputcount, or something we do not know */
    } else if (strcmp(key, "maxprocs") == 0) {
        (void)parse_count(req, key, value, 1, NPROCS_MAX, &cur->cmd->nprocs);
    } else if (strcmp(key, "argc") == 0) {
        (void)parse_count(req, key, value, 0, ARGC_MAX - 1, &cur->argc);
    } else if ((n = key_index(key, "argv", cur->argc)) >= 0 && cur->cmd->argv != NULL) {
        free(cur->cmd->argv[n + 1]);
        cur->cmd->argv[n + 1] = dup_or_fail(req, value);
    } else if (strcmp(key, "infokeycount") == 0) {
        (void)parse_count(req, key, value, 0, ARGC_MAX, &cur->ninfo);
        memset(cur->info_keys, 0, sizeof(cur->info_keys));
    } else if ((n = key_index(key, "infokey", cur->ninfo)) >= 0) {
        cur->info_keys[n] = value;
    } else if ((n = key_index(key, "infoval", cur->ninfo)) >= 0) {
        cmd_info(req, cur->cmd, cur->info_keys[n], value);
    }
}

mf_spawn_req_t *mf_spawn_req_parse_v2(const mf_pmi_msg_t *msg)
{
    mf_spawn_req_t probe = {.error = ""};
    int ncmds = 0, npreput = 0;
    if (!get_count(&probe, msg, "ncmds", 1, MF_MPIEXEC_MAX_PROCS, -1, &ncmds))
        ncmds = 1; /* answered with the error */
    (void)get_count(&probe, msg, "preputcount", 0, ARGC_MAX, 0, &npreput);
    mf_spawn_req_t *req = req_create(ncmds);
    if (req == NULL)
        return NULL;
    memcpy(req->error, probe.error, sizeof(req->error));
    if (req->error[0] != '\0' || !preput_alloc(req, npreput))
        return req;
    v2_cursor_t *cur = mf_calloc(1, sizeof(*cur), "spawn parser");
    if (cur == NULL) {
        req_error(req, "out of memory");
        return req;
    }
    for (int i = 1; i < msg->npairs && req->error[0] == '\0'; i++)
        v2_pair(req, cur, msg->pairs[i].key, msg->pairs[i].value);
    if (cur->cmd != NULL)
        cmd_check_args(req, cur->cmd, cur->argc);
    free(cur);
    for (int i = 0; i < req->npreput; i++) {
        if (req->preput_keys[i] == NULL || req->preput_vals[i] == NULL)
            req_error(req, "spawn lacks preput pair %d of %d", i, req->npreput);
    }
    for (int c = 0; c < req->ncmds; c++) {
        if (c >= req->nadded || req->cmds[c].nprocs < 1)
            req_error(req, "spawn command %d of %d lacks subcmd or maxprocs", c, req->ncmds);
    }
    return req;
}

/* One PMI-1 block: its keys do not repeat, so they are looked up by name. */
static void v1_block(mf_spawn_req_t *req, const mf_pmi_msg_t *msg)
{
    mf_spawn_cmd_t *cmd = &req->cmds[req->nadded++];
    int argc = 0, npreput = 0, ninfo = 0;
    char key[32];
    if (!get_count(req, msg, "nprocs", 1, NPROCS_MAX, -1, &cmd->nprocs) ||
        !get_count(req, msg, "argcnt", 0, ARGC_MAX - 1, 0, &argc) ||
        !get_count(req, msg, "preput_num", 0, ARGC_MAX, 0, &npreput) ||
        !get_count(req, msg, "info_num", 0, ARGC_MAX, 0, &ninfo) ||
        !cmd_start(req, cmd, mf_pmi_msg_get(msg, "execname"), argc))
        return;
    for (int i = 1; i <= argc; i++) {
        snprintf(key, sizeof(key), "arg%d", i);
        const char *arg = mf_pmi_msg_get(msg, key);
        cmd->argv[i] = arg != NULL ? dup_or_fail(req, arg) : NULL;
    }
    cmd_check_args(req, cmd, argc);
    for (int i = 0; i < ninfo; i++) {
        char val_key[32];
        snprintf(key, sizeof(key), "info_key_%d", i);
        snprintf(val_key, sizeof(val_key), "info_val_%d", i);
        cmd_info(req, cmd, mf_pmi_msg_get(msg, key), mf_pmi_msg_get(msg, val_key));
    }
    /* every block carries the same preput pairs: the last block's are kept */
    if (!preput_alloc(req, npreput))
        return;
    for (int i = 0; i < npreput; i++) {
        char val_key[32];
        snprintf(key, sizeof(key), "preput_key_%d", i);
        snprintf(val_key, sizeof(val_key), "preput_val_%d", i);
        const char *k = mf_pmi_msg_get(msg, key), *v = mf_pmi_msg_get(msg, val_key);
        if (k == NULL || v == NULL) {
            req_error(req, "spawn lacks preput pair %d of %d", i, npreput);
            return;
        }
        req->preput_keys[i] = dup_or_fail(req, k);
        req->preput_vals[i] = dup_or_fail(req, v);
    }
}

int mf_spawn_req_add_v1(mf_spawn_req_t **req_p, const mf_pmi_msg_t *msg)
{
    mf_spawn_req_t probe = {.error = ""}, *req = *req_p;
    int total = 0, sofar = 0;
    int ok = get_count(&probe, msg, "totspawns", 1, MF_MPIEXEC_MAX_PROCS, 1, &total) &&
             get_count(&probe, msg, "spawnssofar", 1, total, 1, &sofar);
    if (req == NULL) {
        if ((req = *req_p = req_create(ok ? total : 1)) == NULL)
            return 1;
    }
    /* A block that does not continue the request cannot be matched to it: answer now. */
    if (!ok || total != req->ncmds || sofar != req->nadded + 1) {
        req_error(req, "%s", probe.error[0] != '\0' ? probe.error : "spawn blocks out of order");
        return 1;
    }
    v1_block(req, msg);
    return req->nadded == req->ncmds;
}
