/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bindings of dynamic process management (MPI-4.1 sections 11.8-11.10): MPI_Comm_spawn(_multiple)
 * and MPI_Comm_get_parent, ports (MPI_Open_port, MPI_Close_port, MPI_Comm_accept,
 * MPI_Comm_connect), MPI_Comm_join, and name publishing (MPI_Publish_name, MPI_Unpublish_name,
 * MPI_Lookup_name) through the launcher's name service. core_dynproc.c does the work.
 * Errors of calls without a communicator go to MPI_COMM_SELF's handler (MPI-4.1 section 9.3).
 */
#include "binding.h"

#include "pmi.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int raise_err(mf_comm_t *comm, const char *func, const mf_dynproc_err_t *err)
{
    return mf_err_raise(comm, mf_err_code(err->err_class, func, "%s", err->why));
}

static int check_info_arg(const char *func, mf_comm_t *comm, MPI_Info info)
{
    if (info == MPI_INFO_NULL || mf_info_get_obj(info) != NULL)
        return MPI_SUCCESS;
    return mf_err_raise(comm, mf_err_code(MPI_ERR_INFO, func,
                                          "argument info: not a valid info object (freed or "
                                          "never created)"));
}

static int check_name(const char *func, const char *arg, const char *name, size_t max)
{
    if (name == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL", arg));
    if (strnlen(name, max) >= max)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              "argument %s is not a string of less than %zu "
                                              "characters",
                                              arg, max));
    return MPI_SUCCESS;
}

/* ---- ports --------------------------------------------------------------------------------- */

#pragma weak MPI_Open_port = PMPI_Open_port
int PMPI_Open_port(MPI_Info info, char *port_name)
{
    static const char func[] = "MPI_Open_port";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_info_arg(func, NULL, info);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, port_name, "port_name");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dynproc_err_t err;
    if (mf_dynproc_open_port(port_name, MPI_MAX_PORT_NAME, &err) != MF_OK)
        return raise_err(NULL, func, &err);
    return MPI_SUCCESS;
}

#pragma weak MPI_Close_port = PMPI_Close_port
int PMPI_Close_port(const char *port_name)
{
    static const char func[] = "MPI_Close_port";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_name(func, "port_name", port_name, MPI_MAX_PORT_NAME);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dynproc_err_t err;
    if (mf_dynproc_close_port(port_name, &err) != MF_OK)
        return raise_err(NULL, func, &err);
    return MPI_SUCCESS;
}

/* MPI_Comm_accept and MPI_Comm_connect: port_name and info matter at the root only. */
static int accept_or_connect(const char *func, const char *port_name, MPI_Info info, int root,
                             MPI_Comm comm, MPI_Comm *newcomm, int accept)
{
    mf_comm_t *c = NULL, *out = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra(func, c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc == MPI_SUCCESS && (root < 0 || root >= c->size))
        rc = mf_err_raise(c, mf_err_code(MPI_ERR_ROOT, func,
                                         "argument root=%d is not a rank of comm (size %d)", root,
                                         c->size));
    if (rc == MPI_SUCCESS && c->rank == root)
        rc = check_info_arg(func, c, info);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A bad port name at the root reaches everyone through the call's own verdict. */
    char port[MPI_MAX_PORT_NAME] = "";
    if (c->rank == root && port_name != NULL)
        snprintf(port, sizeof(port), "%s", port_name);
    mf_dynproc_err_t err;
    int timeout = accept ? 0 : mf_params.connect_timeout;
    if (mf_dynproc_connect(c, root, port, accept, timeout, &err, &out) != MF_OK)
        return raise_err(c, func, &err);
    *newcomm = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_accept = PMPI_Comm_accept
int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    return accept_or_connect("MPI_Comm_accept", port_name, info, root, comm, newcomm, 1);
}

#pragma weak MPI_Comm_connect = PMPI_Comm_connect
int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    return accept_or_connect("MPI_Comm_connect", port_name, info, root, comm, newcomm, 0);
}

/* ---- MPI_Comm_join --------------------------------------------------------------------------- */

/* All of len bytes through the socket (either direction), waiting while it would block. */
static int join_io(int fd, void *buf, size_t len, int out)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = out ? write(fd, (char *)buf + done, len - done)
                        : read(fd, (char *)buf + done, len - done);
        if (n > 0) {
            done += (size_t)n;
        } else if (n == 0) {
            errno = EPIPE; /* the other side closed the socket */
            return -1;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            struct pollfd p = {fd, out ? POLLOUT : POLLIN, 0};
            poll(&p, 1, -1);
        } else if (errno != EINTR) {
            return -1;
        }
    }
    return 0;
}

#pragma weak MPI_Comm_join = PMPI_Comm_join
int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    static const char func[] = "MPI_Comm_join";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, intercomm, "intercomm");
    if (rc == MPI_SUCCESS && fd < 0)
        rc = mf_err_raise(
            NULL, mf_err_code(MPI_ERR_ARG, func, "argument fd=%d is not a file descriptor", fd));
    if (rc != MPI_SUCCESS)
        return rc;
    /* Both sides open a port and swap names over the socket; the lower name accepts. Names
     * hold the job and rank, so the two always differ. */
    char mine[MPI_MAX_PORT_NAME], theirs[MPI_MAX_PORT_NAME];
    mf_dynproc_err_t err;
    if (mf_dynproc_open_port(mine, sizeof(mine), &err) != MF_OK)
        return raise_err(NULL, func, &err);
    uint32_t len = (uint32_t)strlen(mine) + 1, their_len = 0;
    int io = join_io(fd, &len, sizeof(len), 1) == 0 && join_io(fd, mine, len, 1) == 0 &&
             join_io(fd, &their_len, sizeof(their_len), 0) == 0 && their_len > 0 &&
             their_len <= sizeof(theirs) && join_io(fd, theirs, their_len, 0) == 0;
    if (!io) {
        int saved = errno;
        mf_dynproc_close_port(mine, &err);
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_OTHER, func,
                                              "argument fd=%d: exchanging port names over the "
                                              "socket failed: %s",
                                              fd,
                                              their_len > sizeof(theirs)
                                                  ? "the other side sent no port name"
                                                  : strerror(saved)));
    }
    theirs[sizeof(theirs) - 1] = '\0';
    int accept = strcmp(mine, theirs) < 0;
    mf_comm_t *out = NULL;
    mf_status_t status = mf_dynproc_connect(&mf_comm_self, 0, accept ? mine : theirs, accept,
                                            mf_params.connect_timeout, &err, &out);
    mf_dynproc_err_t ignored;
    mf_dynproc_close_port(mine, &ignored);
    if (status != MF_OK)
        return raise_err(NULL, func, &err);
    *intercomm = out;
    return MPI_SUCCESS;
}

/* ---- spawning -------------------------------------------------------------------------------- */

#pragma weak MPI_Comm_get_parent = PMPI_Comm_get_parent
int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    int rc = mf_check_initialized("MPI_Comm_get_parent");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr("MPI_Comm_get_parent", NULL, parent, "parent");
    if (rc == MPI_SUCCESS) {
        mf_comm_t *p = mf_dynproc_parent();
        *parent = p != NULL ? mf_comm_handle(p) : MPI_COMM_NULL;
    }
    return rc;
}

/* The launcher's view of one command: its argument count and info pairs, owned here. */
typedef struct spawn_cmd {
    mf_pmi_spawn_cmd_t pmi;
    char **keys, **vals;
} spawn_cmd_t;

static void spawn_cmds_free(spawn_cmd_t *cmds, int n)
{
    for (int i = 0; cmds != NULL && i < n; i++) {
        for (int k = 0; k < cmds[i].pmi.ninfo; k++) {
            free(cmds[i].keys[k]);
            free(cmds[i].vals[k]);
        }
        free(cmds[i].keys);
        free(cmds[i].vals);
    }
    free(cmds);
}

/* Checks the root's arguments of command i and fills cmds[i]; 0 on success, else the error in
 * *err. */
static int spawn_cmd_fill(spawn_cmd_t *cmd, int i, int multiple, const char *command, char *argv[],
                          int maxprocs, MPI_Info info, mf_dynproc_err_t *err)
{
    char where[40] = "";
    if (multiple)
        snprintf(where, sizeof(where), "array_of_");
    struct MPI_ABI_Info *in = mf_info_get_obj(info);
    if (command == NULL || command[0] == '\0') {
        err->err_class = MPI_ERR_ARG;
        snprintf(err->why, sizeof(err->why), "argument %scommand%s is %s", where,
                 multiple ? "s[i]" : "", command == NULL ? "NULL" : "empty");
    } else if (maxprocs <= 0) {
        err->err_class = MPI_ERR_ARG;
        snprintf(err->why, sizeof(err->why),
                 "argument %smaxprocs%s=%d: at least one process must be started", where,
                 multiple ? "[i]" : "", maxprocs);
    } else if (in == NULL && info != MPI_INFO_NULL) {
        err->err_class = MPI_ERR_INFO;
        snprintf(err->why, sizeof(err->why), "argument %sinfo%s: not a valid info object", where,
                 multiple ? "[i]" : "");
    }
    if (err->err_class != 0) {
        if (multiple) { /* name the command */
            char tail[40];
            snprintf(tail, sizeof(tail), " (i=%d)", i);
            strncat(err->why, tail, sizeof(err->why) - strlen(err->why) - 1);
        }
        return -1;
    }
    cmd->pmi.command = command;
    cmd->pmi.maxprocs = maxprocs;
    cmd->pmi.argv = (const char *const *)argv;
    cmd->pmi.argc = 0;
    while (argv != NULL && argv[cmd->pmi.argc] != NULL)
        cmd->pmi.argc++;
    int n = in != NULL ? mf_info_nkeys(in) : 0;
    cmd->keys = calloc((size_t)n + 1, sizeof(char *));
    cmd->vals = calloc((size_t)n + 1, sizeof(char *));
    if (cmd->keys == NULL || cmd->vals == NULL)
        goto no_memory;
    for (int k = 0; k < n; k++) {
        char key[MPI_MAX_INFO_KEY], val[MPI_MAX_INFO_VAL];
        size_t len;
        if (!mf_info_nthkey(in, k, key, sizeof(key)) ||
            !mf_info_get(in, key, val, sizeof(val), &len))
            continue;
        int at = cmd->pmi.ninfo;
        cmd->keys[at] = strdup(key);
        cmd->vals[at] = strdup(val);
        if (cmd->keys[at] == NULL || cmd->vals[at] == NULL) {
            free(cmd->keys[at]);
            free(cmd->vals[at]);
            goto no_memory;
        }
        cmd->pmi.ninfo++;
    }
    cmd->pmi.info_keys = (const char *const *)cmd->keys;
    cmd->pmi.info_vals = (const char *const *)cmd->vals;
    return 0;
no_memory:
    err->err_class = MPI_ERR_NO_MEM;
    snprintf(err->why, sizeof(err->why), "out of memory for the spawn's arguments");
    return -1;
}

static int spawn_common(const char *func, int count, char *commands[], char **argvs[],
                        const int maxprocs[], const MPI_Info infos[], int root, MPI_Comm comm,
                        MPI_Comm *intercomm, int errcodes[], int multiple)
{
    mf_comm_t *c = NULL, *out = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra(func, c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, intercomm, "intercomm");
    if (rc == MPI_SUCCESS && (root < 0 || root >= c->size))
        rc = mf_err_raise(c, mf_err_code(MPI_ERR_ROOT, func,
                                         "argument root=%d is not a rank of comm (size %d)", root,
                                         c->size));
    if (rc != MPI_SUCCESS)
        return rc;
    /* The root's arguments only matter there; its verdict reaches the others in the call. */
    mf_dynproc_err_t root_err;
    memset(&root_err, 0, sizeof(root_err));
    spawn_cmd_t *cmds = NULL;
    int total = 0;
    if (c->rank == root) {
        if (count <= 0 || commands == NULL || maxprocs == NULL) {
            root_err.err_class = MPI_ERR_ARG;
            snprintf(root_err.why, sizeof(root_err.why),
                     count <= 0 ? "argument count=%d: at least one command is needed"
                                : "argument array_of_commands or array_of_maxprocs is NULL "
                                  "(count=%d)",
                     count);
        } else if ((cmds = calloc((size_t)count, sizeof(*cmds))) == NULL) {
            root_err.err_class = MPI_ERR_NO_MEM;
            snprintf(root_err.why, sizeof(root_err.why), "out of memory for the spawn");
        }
        for (int i = 0; cmds != NULL && i < count; i++) {
            if (spawn_cmd_fill(&cmds[i], i, multiple, commands[i], argvs != NULL ? argvs[i] : NULL,
                               maxprocs[i], infos != NULL ? infos[i] : MPI_INFO_NULL,
                               &root_err) != 0)
                break;
            total += maxprocs[i];
        }
    }
    mf_pmi_spawn_cmd_t *pmi = NULL;
    if (cmds != NULL && root_err.err_class == 0) {
        pmi = calloc((size_t)count, sizeof(*pmi));
        for (int i = 0; pmi != NULL && i < count; i++)
            pmi[i] = cmds[i].pmi;
        if (pmi == NULL) {
            root_err.err_class = MPI_ERR_NO_MEM;
            snprintf(root_err.why, sizeof(root_err.why), "out of memory for the spawn");
        }
    }
    mf_dynproc_err_t err;
    mf_status_t status = mf_dynproc_spawn(c, root, count, pmi, &root_err, &err, &out);
    free(pmi);
    spawn_cmds_free(cmds, c->rank == root ? count : 0);
    /* One code per process started (the root's total; the others learn it from the new
     * communicator's remote group): all succeed or the spawn failed as a whole. */
    int n = status == MF_OK ? out->remote_size : total;
    if (errcodes != MPI_ERRCODES_IGNORE) {
        for (int i = 0; i < n; i++)
            errcodes[i] = status == MF_OK ? MPI_SUCCESS : err.err_class;
    }
    if (status != MF_OK)
        return raise_err(c, func, &err);
    *intercomm = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_spawn = PMPI_Comm_spawn
int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    char *commands[1] = {(char *)command};
    char **argvs[1] = {argv};
    MPI_Info infos[1] = {info};
    return spawn_common("MPI_Comm_spawn", 1, commands, argvs, &maxprocs, infos, root, comm,
                        intercomm, array_of_errcodes, 0);
}

#pragma weak MPI_Comm_spawn_multiple = PMPI_Comm_spawn_multiple
int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char **array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[])
{
    return spawn_common("MPI_Comm_spawn_multiple", count, array_of_commands, array_of_argv,
                        array_of_maxprocs, array_of_info, root, comm, intercomm, array_of_errcodes,
                        1);
}

/* ---- names ------------------------------------------------------------------------------------
 */

static int no_name_service(const char *func)
{
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_SERVICE, func,
                                          "the launcher offers no name service (a program "
                                          "started without mpiexec has none)"));
}

/* The arguments of the name service calls; port_name is an input when with_port (Publish and
 * Unpublish: a NULL one was looked for in the name service first, MPI_ERR_SERVICE). */
static int check_names(const char *func, const char *service_name, MPI_Info info,
                       const char *port_name, int with_port)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_name(func, "service_name", service_name, MPI_MAX_INFO_VAL);
    if (rc == MPI_SUCCESS)
        rc = check_info_arg(func, NULL, info);
    if (rc == MPI_SUCCESS && with_port)
        rc = check_name(func, "port_name", port_name, MPI_MAX_PORT_NAME);
    return rc;
}

#pragma weak MPI_Publish_name = PMPI_Publish_name
int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char func[] = "MPI_Publish_name";
    int rc = check_names(func, service_name, info, port_name, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_status_t status = mf_pmi_publish_name(service_name, port_name);
    if (status == MF_ERR_UNSUPPORTED)
        return no_name_service(func);
    if (status != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_SERVICE, func,
                                              "argument service_name=\"%.60s\": %s", service_name,
                                              status == MF_ERR_INVALID
                                                  ? "already published (or the names hold "
                                                    "spaces or ';', which the launcher cannot "
                                                    "carry)"
                                                  : mf_status_str(status)));
    return MPI_SUCCESS;
}

#pragma weak MPI_Unpublish_name = PMPI_Unpublish_name
int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    static const char func[] = "MPI_Unpublish_name";
    int rc = check_names(func, service_name, info, port_name, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_status_t status = mf_pmi_unpublish_name(service_name);
    if (status == MF_ERR_UNSUPPORTED)
        return no_name_service(func);
    if (status != MF_OK)
        return mf_err_raise(
            NULL,
            mf_err_code(MPI_ERR_SERVICE, func, "argument service_name=\"%.60s\": %s", service_name,
                        status == MF_ERR_NOT_FOUND ? "not published" : mf_status_str(status)));
    return MPI_SUCCESS;
}

#pragma weak MPI_Lookup_name = PMPI_Lookup_name
int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    static const char func[] = "MPI_Lookup_name";
    int rc = check_names(func, service_name, info, NULL, 0);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, port_name, "port_name");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_status_t status = mf_pmi_lookup_name(service_name, port_name, MPI_MAX_PORT_NAME);
    if (status == MF_ERR_UNSUPPORTED)
        return no_name_service(func);
    if (status != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NAME, func,
                                              "argument service_name=\"%.60s\": %s", service_name,
                                              status == MF_ERR_NOT_FOUND
                                                  ? "no port is published under this name"
                                                  : mf_status_str(status)));
    return MPI_SUCCESS;
}
