/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher internals shared by mpiexec.c (options, process start, event loop, failure handling)
 * and its helpers: the PMI server (pmi_server.c, with spawn requests parsed in pmi_spawn.c),
 * output and stdin forwarding (mpiexec_io.c) and the /dev/shm clean-up (mpiexec_shm.c).
 * Everything runs in mpiexec's single thread.
 */
#ifndef MF_MPIEXEC_H
#define MF_MPIEXEC_H

#include "util.h"

#include <stddef.h>

/* Most processes mpiexec runs at once, the first job and spawned ones together. */
#define MF_MPIEXEC_MAX_PROCS 4096

/* PMI server: one connection per process, served from mpiexec's poll loop. Processes are
 * identified by mpiexec's process index (0, 1, ... in start order) and belong to jobs: the first
 * job and one per spawn, each with its own key space, ranks, fence and process mapping. The
 * name service is shared by all jobs. */
typedef struct mf_pmi_server mf_pmi_server_t;

typedef struct mf_pmi_abort {
    int id; /* the process that asked */
    int exit_code;
    char message[512];
} mf_pmi_abort_t;

/* One command of a spawn request. Owns its strings. */
typedef struct mf_spawn_cmd {
    int nprocs;
    char **argv;       /* program, its arguments, NULL */
    char *wdir, *path; /* the "wdir" and "path" info values, NULL when not given */
} mf_spawn_cmd_t;

/* A spawn request as the PMI server received it (launcher/pmi_spawn.c). */
typedef struct mf_spawn_req {
    int parent_job;
    int ncmds, nadded; /* commands announced, commands received (PMI-1 sends one per block) */
    mf_spawn_cmd_t *cmds;
    int npreput;
    char **preput_keys, **preput_vals;
    char error[200]; /* the first problem found in the request: it is answered with this */
} mf_spawn_req_t;

struct mf_pmi_msg;
/* PMI-2's spawn frame as a request; NULL when out of memory. Check ->error. */
mf_spawn_req_t *mf_spawn_req_parse_v2(const struct mf_pmi_msg *msg);
/* Adds one PMI-1 "mcmd=spawn" block (one command) to *req_p, created by the first block.
 * Returns 1 when the request is complete and must be answered: after its last block, or when a
 * block cannot be placed (then ->error says why); *req_p is NULL only when out of memory. */
int mf_spawn_req_add_v1(mf_spawn_req_t **req_p, const struct mf_pmi_msg *msg);
void mf_spawn_req_free(mf_spawn_req_t *req);

/* Starts the processes of a spawn request as a new job (mpiexec.c): returns the job's index,
 * or -1 with the reason in why (the requester gets it as the error message). */
typedef int (*mf_pmi_spawn_fn_t)(void *ctx, const mf_spawn_req_t *req, char *why, size_t why_size);

#define MF_PMI_SERVE_V1 0x1
#define MF_PMI_SERVE_V2 0x2

#define MF_PMI_RANK_INITIALIZED 0x1 /* sent init */
#define MF_PMI_RANK_FINALIZED   0x2 /* sent finalize */

mf_status_t mf_pmi_server_create(int versions, mf_pmi_spawn_fn_t spawn, void *spawn_ctx,
                                 mf_pmi_server_t **server_p);
void mf_pmi_server_destroy(mf_pmi_server_t *server);
/* MPI_UNIVERSE_SIZE for every job (0: the processors online, at least the first job's size). */
void mf_pmi_server_set_universe(mf_pmi_server_t *server, int universe);
/* A new job of size processes reported as nodes of ppn consecutive ranks (0: one node), spawned
 * by job parent (-1: none). Returns its index (0, 1, ... in order), or -1 when out of memory. */
int mf_pmi_server_add_job(mf_pmi_server_t *server, int size, int ppn, int parent);
/* Puts key=value into job's key space (spawn's preput values). */
mf_status_t mf_pmi_server_put(mf_pmi_server_t *server, int job, const char *key, const char *value);
/* Hands the server its end of process id's socket (id is the next process index, or one
 * whose connection is closed); the server closes it. */
mf_status_t mf_pmi_server_attach(mf_pmi_server_t *server, int id, int job, int rank, int appnum,
                                 int fd);
/* The descriptor to poll for process id, or -1 once the connection is closed. */
int mf_pmi_server_fd(const mf_pmi_server_t *server, int id);
/* Reads everything process id has sent and answers it (without blocking on the read side). */
void mf_pmi_server_handle(mf_pmi_server_t *server, int id);
int mf_pmi_server_rank_state(const mf_pmi_server_t *server, int id);
/* Number of job's processes waiting in a barrier/fence. */
int mf_pmi_server_barrier_waiting(const mf_pmi_server_t *server, int job);
/* The first abort request received, or NULL. */
const mf_pmi_abort_t *mf_pmi_server_abort_request(const mf_pmi_server_t *server);

/* Our stdout or stderr: whole lines queued and written when poll says the descriptor takes
 * more, one write of at most PIPE_BUF bytes ending at a line's end each time, so a reader that
 * stops reading never blocks mpiexec (its timeout and signals still work) and lines never mix.
 * Above MF_SINK_HIGH queued bytes the ranks' pipes feeding it are not read: they block in
 * their own writes until the reader catches up. */
#define MF_SINK_HIGH (1u << 20)

typedef struct mf_sink {
    int fd;
    int broken; /* the reader is gone (EPIPE ...): what comes is dropped */
    char *buf;
    size_t off, len, cap;
    struct mf_output *open_line; /* whose last piece did not end its line, or NULL */
} mf_sink_t;

void mf_sink_init(mf_sink_t *sink, int fd);
void mf_sink_put(mf_sink_t *sink, const char *data, size_t len);
void mf_sink_printf(mf_sink_t *sink, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
size_t mf_sink_pending(const mf_sink_t *sink);
/* One write (fd is writable); returns 0 once nothing is left. */
int mf_sink_write(mf_sink_t *sink);
/* Drops what is queued and what comes. */
void mf_sink_drop(mf_sink_t *sink);
/* Writes what the descriptor takes within wait_ms, then discards the rest (mpiexec gives up on
 * a reader that does not read). */
void mf_sink_finish(mf_sink_t *sink, long long wait_ms);
/* Milliseconds of CLOCK_MONOTONIC. */
long long mf_now_ms(void);

/* Output forwarding: a process's stdout or stderr pipe copied to a sink line by line, so lines
 * of different processes never mix; with tag set each line starts with "[rank] " (first job)
 * or "[job:rank] " (spawned jobs). */
#define MF_OUTPUT_LINE_MAX 4096

typedef struct mf_output {
    int fd; /* read end of the rank's pipe, -1 after EOF */
    mf_sink_t *dest;
    int job, rank;
    int tag;
    int at_line_start;
    size_t len;
    char buf[MF_OUTPUT_LINE_MAX];
} mf_output_t;

void mf_output_init(mf_output_t *out, int fd, mf_sink_t *dest, int job, int rank, int tag);
/* Reads what the pipe holds and queues complete lines; at EOF queues the rest and closes. */
void mf_output_pump(mf_output_t *out);

/* stdin forwarding to rank 0 through a non-blocking pipe. */
typedef struct mf_input {
    int src;  /* our stdin, -1 once finished */
    int dest; /* write end of rank 0's stdin pipe, -1 once closed */
    size_t len, off;
    char buf[4096];
} mf_input_t;

void mf_input_init(mf_input_t *in, int src, int dest);
void mf_input_read(mf_input_t *in);  /* src is readable */
void mf_input_write(mf_input_t *in); /* dest is writable (or broken) */
void mf_input_close(mf_input_t *in);

/* Shared-memory segments (UCX's "ucx_shm*" and our "manifold*") the ranks leave in /dev/shm. */
typedef struct mf_shm_snapshot {
    char **names;
    size_t count;
} mf_shm_snapshot_t;

/* Records which segments exist before the ranks start; they are never touched. */
void mf_shm_snapshot_take(mf_shm_snapshot_t *snap);
/* Removes segments created since the snapshot that belong to us and that no process has open
 * or mapped any more; says how many it removed on `report`. Frees the snapshot. */
void mf_shm_cleanup(mf_shm_snapshot_t *snap, mf_sink_t *report);

#endif /* MF_MPIEXEC_H */
