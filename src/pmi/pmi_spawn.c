/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMI layer: asking the launcher to start a new job (spawn) and its name service (publish,
 * lookup, unpublish), in both protocols. PMI-1 spawn is the multi-line "mcmd=spawn" form, one
 * block per command with the launcher answering after the last; PMI-2 spawn is one frame. A
 * singleton first starts our mpiexec to ask (mf_pmi_adopt_launcher_locked).
 */
#include "pmi_impl.h"

#include <stdlib.h>
#include <string.h>

static mf_status_t check_launcher_locked(const char *what)
{
    mf_status_t status = mf_pmi_check_ready_locked(what);
    if (status != MF_OK)
        return status;
    if (mf_pmi_state.version > 0 || mf_pmi_adopt_launcher_locked() == MF_OK)
        return MF_OK;
    mf_log(MF_LOG_INFO, "pmi", "%s needs a launcher, and this process is a singleton", what);
    return MF_ERR_UNSUPPORTED;
}

/* A launcher that answers with another command than the reply does not know the request. After
 * a multi-block request its other answers may still come, so the stream is given up. */
static mf_status_t map_unknown_locked(mf_status_t status, const char *expect, const char *what,
                                      int multi_block)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    if (status != MF_ERR_PROTOCOL || st->broken || strcmp(mf_pmi_msg_cmd(&st->reply), expect) == 0)
        return status;
    mf_log(MF_LOG_ERROR, "pmi", "the launcher does not serve %s", what);
    if (multi_block)
        st->broken = 1;
    return MF_ERR_UNSUPPORTED;
}

/* Whether text can travel in a spawn request: the multi-line PMI-1 form ends a value at a
 * newline; hydra's PMI-2 does not undo the doubling of ';' (our mpiexec does). */
static mf_status_t check_spawn_text(const char *what, const char *text)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    if (text == NULL) {
        mf_log(MF_LOG_ERROR, "pmi", "spawn: %s is NULL", what);
        return MF_ERR_INVALID;
    }
    if (st->version == 1 && strchr(text, '\n') != NULL) {
        mf_log(MF_LOG_ERROR, "pmi",
               "spawn: %s '%.40s' contains a newline, which PMI-1 cannot carry", what, text);
        return MF_ERR_INVALID;
    }
    if (st->version == 2 && !st->launcher_is_ours && strchr(text, ';') != NULL) {
        mf_log(MF_LOG_ERROR, "pmi",
               "spawn: %s '%.40s' contains ';', which this launcher's PMI-2 "
               "cannot carry",
               what, text);
        return MF_ERR_INVALID;
    }
    return MF_OK;
}

static mf_status_t check_spawn_cmd(const mf_pmi_spawn_cmd_t *cmd)
{
    mf_status_t status = check_spawn_text("the command", cmd->command);
    if (status != MF_OK)
        return status;
    if (cmd->command[0] == '\0' || cmd->maxprocs < 1 || cmd->argc < 0 || cmd->ninfo < 0 ||
        (cmd->argc > 0 && cmd->argv == NULL) ||
        (cmd->ninfo > 0 && (cmd->info_keys == NULL || cmd->info_vals == NULL))) {
        mf_log(MF_LOG_ERROR, "pmi", "spawn: bad command '%s' (maxprocs %d, argc %d, ninfo %d)",
               cmd->command, cmd->maxprocs, cmd->argc, cmd->ninfo);
        return MF_ERR_INVALID;
    }
    for (int i = 0; i < cmd->argc && status == MF_OK; i++)
        status = check_spawn_text("an argument", cmd->argv[i]);
    for (int i = 0; i < cmd->ninfo && status == MF_OK; i++) {
        if ((status = check_spawn_text("an info key", cmd->info_keys[i])) == MF_OK)
            status = check_spawn_text("an info value", cmd->info_vals[i]);
    }
    return status;
}

/* Checks everything and counts the pairs of the largest message (all of PMI-2's one frame, the
 * largest PMI-1 block), which must fit what our launcher parses. */
static mf_status_t check_spawn_locked(int ncmds, const mf_pmi_spawn_cmd_t *cmds, int npreput,
                                      const char *const *keys, const char *const *vals)
{
    mf_status_t status = MF_OK;
    if (ncmds < 1 || cmds == NULL || npreput < 0 ||
        (npreput > 0 && (keys == NULL || vals == NULL))) {
        mf_log(MF_LOG_ERROR, "pmi", "spawn: bad request (%d commands, %d preput keys)", ncmds,
               npreput);
        return MF_ERR_INVALID;
    }
    for (int i = 0; i < npreput && status == MF_OK; i++) {
        if ((status = mf_pmi_check_key(keys[i])) == MF_OK)
            status = mf_pmi_check_value(vals[i]);
    }
    long pairs = 3 + 2L * npreput, largest = 0;
    for (int c = 0; c < ncmds && status == MF_OK; c++) {
        status = check_spawn_cmd(&cmds[c]);
        long cmd_pairs = 5L + cmds[c].argc + 2L * cmds[c].ninfo;
        pairs += cmd_pairs;
        if (cmd_pairs > largest)
            largest = cmd_pairs;
    }
    if (mf_pmi_state.version == 1)
        pairs = 5 + 2L * npreput + largest;
    if (status == MF_OK && pairs > MF_PMI_WIRE_MAX_PAIRS) {
        mf_log(MF_LOG_ERROR, "pmi", "spawn: the request has %ld key=value pairs, more than %d",
               pairs, MF_PMI_WIRE_MAX_PAIRS);
        return MF_ERR_INVALID;
    }
    return status;
}

static void add_indexed(mf_pmi_out_t *req, const char *fmt, int i, const char *value)
{
    char key[32];
    snprintf(key, sizeof(key), fmt, i);
    mf_pmi_out_add(req, key, value);
}

static mf_status_t check_built(const mf_pmi_out_t *req)
{
    if (req->status == MF_OK)
        return MF_OK;
    mf_log(MF_LOG_ERROR, "pmi", "spawn: the request does not fit %d bytes", MF_PMI_SPAWN_MAX);
    return MF_ERR_INVALID;
}

/* PMI-2: one frame; argv and the info pairs count from 0, as hydra reads them. */
static mf_status_t build_spawn_v2(mf_pmi_out_t *req, char *storage, int ncmds,
                                  const mf_pmi_spawn_cmd_t *cmds, int npreput,
                                  const char *const *keys, const char *const *vals)
{
    mf_pmi_out_begin_in(req, 2, "spawn", storage, MF_PMI_SPAWN_MAX);
    mf_pmi_out_add_int(req, "ncmds", ncmds);
    mf_pmi_out_add_int(req, "preputcount", npreput);
    for (int i = 0; i < npreput; i++) {
        add_indexed(req, "ppkey%d", i, keys[i]);
        add_indexed(req, "ppval%d", i, vals[i]);
    }
    for (int c = 0; c < ncmds; c++) {
        const mf_pmi_spawn_cmd_t *cmd = &cmds[c];
        mf_pmi_out_add(req, "subcmd", cmd->command);
        mf_pmi_out_add_int(req, "maxprocs", cmd->maxprocs);
        mf_pmi_out_add_int(req, "argc", cmd->argc);
        for (int i = 0; i < cmd->argc; i++)
            add_indexed(req, "argv%d", i, cmd->argv[i]);
        mf_pmi_out_add_int(req, "infokeycount", cmd->ninfo);
        for (int i = 0; i < cmd->ninfo; i++) {
            add_indexed(req, "infokey%d", i, cmd->info_keys[i]);
            add_indexed(req, "infoval%d", i, cmd->info_vals[i]);
        }
    }
    return check_built(req);
}

/* PMI-1: block c of ncmds; arguments count from 1, the preput pairs travel in every block (as
 * MPICH's client sends them). */
static mf_status_t build_spawn_v1(mf_pmi_out_t *req, char *storage, int c, int ncmds,
                                  const mf_pmi_spawn_cmd_t *cmd, int npreput,
                                  const char *const *keys, const char *const *vals)
{
    mf_pmi_out_begin_in(req, MF_PMI_MCMD, "spawn", storage, MF_PMI_SPAWN_MAX);
    mf_pmi_out_add_int(req, "nprocs", cmd->maxprocs);
    mf_pmi_out_add(req, "execname", cmd->command);
    mf_pmi_out_add_int(req, "totspawns", ncmds);
    mf_pmi_out_add_int(req, "spawnssofar", c + 1);
    mf_pmi_out_add_int(req, "argcnt", cmd->argc);
    for (int i = 0; i < cmd->argc; i++)
        add_indexed(req, "arg%d", i + 1, cmd->argv[i]);
    mf_pmi_out_add_int(req, "preput_num", npreput);
    for (int i = 0; i < npreput; i++) {
        add_indexed(req, "preput_key_%d", i, keys[i]);
        add_indexed(req, "preput_val_%d", i, vals[i]);
    }
    mf_pmi_out_add_int(req, "info_num", cmd->ninfo);
    for (int i = 0; i < cmd->ninfo; i++) {
        add_indexed(req, "info_key_%d", i, cmd->info_keys[i]);
        add_indexed(req, "info_val_%d", i, cmd->info_vals[i]);
    }
    return check_built(req);
}

static mf_status_t spawn_locked(int ncmds, const mf_pmi_spawn_cmd_t *cmds, int npreput,
                                const char *const *keys, const char *const *vals)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    const char *expect = st->version == 2 ? "spawn-response" : "spawn_result";
    mf_pmi_out_t req;
    mf_status_t status = MF_OK;
    char *storage = mf_malloc(MF_PMI_SPAWN_MAX, "spawn request");
    if (storage == NULL)
        return MF_ERR_NO_MEMORY;
    if (st->version == 2) {
        status = build_spawn_v2(&req, storage, ncmds, cmds, npreput, keys, vals);
    } else {
        for (int c = 0; c < ncmds && status == MF_OK; c++) {
            status = build_spawn_v1(&req, storage, c, ncmds, &cmds[c], npreput, keys, vals);
            if (status == MF_OK && c + 1 < ncmds)
                status = mf_pmi_send_locked(&req); /* the launcher answers after the last */
        }
    }
    /* A launcher may never answer: Slurm answers once its srun has started the children, so
     * not while the allocation has no free CPUs, nor for a program it cannot run. */
    int limit = mf_params.connect_timeout; /* 0: for ever */
    st->reply_deadline_ns = limit > 0 ? mf_now_ns() + (uint64_t)limit * 1000000000u : 0;
    if (status == MF_OK)
        status = mf_pmi_call_locked(&req, expect, 1);
    st->reply_deadline_ns = 0;
    free(storage);
    if (status == MF_ERR_IO && st->late_reply == expect) {
        mf_log(MF_LOG_ERROR, "pmi",
               "the launcher did not answer the spawn within %d s (MANIFOLD_CONNECT_TIMEOUT)",
               limit);
        return MF_ERR_OTHER;
    }
    if (status == MF_ERR_NOT_FOUND) {
        const char *why = mf_pmi_msg_get(&st->reply, st->version == 2 ? "errmsg" : "msg");
        mf_log(MF_LOG_ERROR, "pmi", "the launcher did not spawn the job: %s",
               why != NULL ? why : "no reason given");
        return MF_ERR_OTHER;
    }
    return map_unknown_locked(status, expect, "spawn", st->version == 1 && ncmds > 1);
}

mf_status_t mf_pmi_spawn(int ncmds, const mf_pmi_spawn_cmd_t *cmds, int npreput,
                         const char *const *preput_keys, const char *const *preput_vals)
{
    pthread_mutex_lock(&mf_pmi_state.lock);
    mf_status_t status = check_launcher_locked("mf_pmi_spawn");
    if (status == MF_OK && mf_pmi_state.late_reply != NULL) {
        /* Its answer would read as this one's. */
        mf_log(MF_LOG_ERROR, "pmi", "spawn: the launcher has not answered an earlier spawn yet");
        status = MF_ERR_OTHER;
    }
    if (status == MF_OK)
        status = check_spawn_locked(ncmds, cmds, npreput, preput_keys, preput_vals);
    if (status == MF_OK)
        status = spawn_locked(ncmds, cmds, npreput, preput_keys, preput_vals);
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return status;
}

/* Starts a name-service request: PMI-1 "<v1_cmd> service=S", PMI-2 "<v2_cmd>;name=S;". */
static mf_status_t name_begin_locked(mf_pmi_out_t *req, const char *what, const char *v1_cmd,
                                     const char *v2_cmd, const char *service)
{
    int version = mf_pmi_state.version;
    mf_status_t status = check_launcher_locked(what);
    if (status == MF_OK)
        status = mf_pmi_check_value(service);
    if (status != MF_OK)
        return status;
    mf_pmi_out_begin(req, version, version == 2 ? v2_cmd : v1_cmd);
    mf_pmi_out_add(req, version == 2 ? "name" : "service", service);
    return MF_OK;
}

/* rc != 0 is the launcher's "no": hydra says no more than that. Slurm's PMI-1 sends no rc but
 * info=ok or info=fail, as MPICH's PMI-1 client expects. */
static mf_status_t name_call_locked(mf_pmi_out_t *req, const char *v1_reply, const char *v2_reply)
{
    const char *expect = mf_pmi_state.version == 2 ? v2_reply : v1_reply;
    mf_status_t status = mf_pmi_call_locked(req, expect, 1);
    const char *info = mf_pmi_msg_get(&mf_pmi_state.reply, "info");
    if (status == MF_OK && mf_pmi_state.version == 1 && info != NULL && strcmp(info, "ok") != 0)
        return MF_ERR_NOT_FOUND;
    return map_unknown_locked(status, expect, "the name service", 0);
}

/* Slurm's name service answers success to publishing a published name (it replaces the port)
 * and to unpublishing an unknown one, where hydra and our mpiexec say no. Under a launcher
 * other than ours a lookup first gives every launcher the same answers (two processes racing
 * to publish the same name can still both succeed there). Ours answers for itself: *exists_p
 * is left as it is. */
static mf_status_t name_exists_locked(const char *service, int *exists_p)
{
    mf_pmi_out_t req;
    if (mf_pmi_state.launcher_is_ours)
        return MF_OK;
    mf_status_t status =
        name_begin_locked(&req, "the name check", "lookup_name", "name-lookup", service);
    if (status == MF_OK)
        status = name_call_locked(&req, "lookup_result", "name-lookup-response");
    *exists_p = status == MF_OK;
    return status == MF_ERR_NOT_FOUND ? MF_OK : status;
}

mf_status_t mf_pmi_publish_name(const char *service, const char *port)
{
    mf_pmi_out_t req;
    pthread_mutex_lock(&mf_pmi_state.lock);
    mf_status_t status =
        name_begin_locked(&req, "mf_pmi_publish_name", "publish_name", "name-publish", service);
    int exists = 0;
    if (status == MF_OK)
        status = mf_pmi_check_value(port);
    if (status == MF_OK)
        status = name_exists_locked(service, &exists);
    if (status == MF_OK && exists)
        status = MF_ERR_NOT_FOUND; /* reported as the launcher's refusal below */
    if (status == MF_OK) {
        mf_pmi_out_add(&req, "port", port);
        status = name_call_locked(&req, "publish_result", "name-publish-response");
    }
    if (status == MF_ERR_NOT_FOUND) {
        mf_log(MF_LOG_DEBUG, "pmi", "the launcher refused to publish '%s' (already published?)",
               service);
        status = MF_ERR_INVALID;
    }
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return status;
}

mf_status_t mf_pmi_lookup_name(const char *service, char *port, size_t port_size)
{
    mf_pmi_state_t *st = &mf_pmi_state;
    mf_pmi_out_t req;
    pthread_mutex_lock(&st->lock);
    mf_status_t status =
        name_begin_locked(&req, "mf_pmi_lookup_name", "lookup_name", "name-lookup", service);
    if (status == MF_OK)
        status = name_call_locked(&req, "lookup_result", "name-lookup-response");
    if (status == MF_OK) {
        /* hydra answers with port=, as the PMI-2 description says; value= is accepted too */
        const char *found = mf_pmi_msg_get(&st->reply, "port");
        if (found == NULL)
            found = mf_pmi_msg_get(&st->reply, "value");
        if (found == NULL) {
            mf_log(MF_LOG_ERROR, "pmi", "the launcher found '%s' but sent no port", service);
            status = MF_ERR_PROTOCOL;
        } else if (strlen(found) >= port_size) {
            status = MF_ERR_TRUNCATE;
        } else {
            memcpy(port, found, strlen(found) + 1);
        }
    }
    pthread_mutex_unlock(&st->lock);
    return status;
}

mf_status_t mf_pmi_unpublish_name(const char *service)
{
    mf_pmi_out_t req;
    pthread_mutex_lock(&mf_pmi_state.lock);
    mf_status_t status = name_begin_locked(&req, "mf_pmi_unpublish_name", "unpublish_name",
                                           "name-unpublish", service);
    int exists = 1;
    if (status == MF_OK)
        status = name_exists_locked(service, &exists);
    if (status == MF_OK && !exists)
        status = MF_ERR_NOT_FOUND;
    if (status == MF_OK)
        status = name_call_locked(&req, "unpublish_result", "name-unpublish-response");
    pthread_mutex_unlock(&mf_pmi_state.lock);
    return status;
}
