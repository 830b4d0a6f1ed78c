/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher internals shared by mpiexec.c (options, process start, event loop, failure handling)
 * and its helpers: the PMI server (pmi_server.c), output and stdin forwarding (mpiexec_io.c) and
 * the /dev/shm clean-up (mpiexec_shm.c). Everything runs in mpiexec's single thread.
 */
#ifndef MF_MPIEXEC_H
#define MF_MPIEXEC_H

#include "util.h"

#include <stddef.h>

/* PMI server: one connection per rank, served from mpiexec's poll loop. */
typedef struct mf_pmi_server mf_pmi_server_t;

typedef struct mf_pmi_abort {
    int rank;
    int exit_code;
    char message[512];
} mf_pmi_abort_t;

#define MF_PMI_SERVE_V1 0x1
#define MF_PMI_SERVE_V2 0x2

#define MF_PMI_RANK_INITIALIZED 0x1 /* sent init */
#define MF_PMI_RANK_FINALIZED   0x2 /* sent finalize */

mf_status_t mf_pmi_server_create(int size, int ppn, int versions, mf_pmi_server_t **server_p);
void mf_pmi_server_destroy(mf_pmi_server_t *server);
/* Hands the server its end of rank's socket; the server closes it. */
void mf_pmi_server_attach(mf_pmi_server_t *server, int rank, int fd);
/* The descriptor to poll for rank, or -1 once the connection is closed. */
int mf_pmi_server_fd(const mf_pmi_server_t *server, int rank);
/* Reads everything rank has sent and answers it (without blocking on the read side). */
void mf_pmi_server_handle(mf_pmi_server_t *server, int rank);
int mf_pmi_server_rank_state(const mf_pmi_server_t *server, int rank);
/* Number of ranks waiting in a barrier/fence. */
int mf_pmi_server_barrier_waiting(const mf_pmi_server_t *server);
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

/* Output forwarding: a rank's stdout or stderr pipe copied to a sink line by line, so lines of
 * different ranks never mix; with tag set each line starts with "[rank] ". */
#define MF_OUTPUT_LINE_MAX 4096

typedef struct mf_output {
    int fd; /* read end of the rank's pipe, -1 after EOF */
    mf_sink_t *dest;
    int rank;
    int tag;
    int at_line_start;
    size_t len;
    char buf[MF_OUTPUT_LINE_MAX];
} mf_output_t;

void mf_output_init(mf_output_t *out, int fd, mf_sink_t *dest, int rank, int tag);
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
