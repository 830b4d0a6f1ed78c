/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMI layer interface: how a process learns its rank and job size from the launcher and exchanges
 * small key-value data (network addresses) with the other processes of its job. It speaks the
 * PMI-1 and PMI-2 wire protocols served by our mpiexec, hydra and Slurm, over the socket the
 * launcher left in PMI_FD or a TCP connection to PMI_PORT, and falls back to a one-process
 * "singleton" job with an in-memory key space when no launcher is present. It also asks the
 * launcher to start new jobs (spawn) and to keep service names (the name service). Every
 * function is thread-safe: one internal mutex serialises the conversation with the launcher.
 */
#ifndef MF_PMI_H
#define MF_PMI_H

#include "util.h"

#include <stddef.h>

typedef struct mf_pmi_job {
    int rank, size, appnum;
    int universe; /* MPI_UNIVERSE_SIZE as the launcher gives it; -1 when it gives none */
    int local_rank, local_size; /* processes of this job on this node (from PMI_process_mapping,
                                   or MPI_LOCALRANKID/MPI_LOCALNRANKS, or 0/1) */
    int singleton;              /* 1 when started without a launcher */
    int spawned; /* 1 when another job started this one with mf_pmi_spawn (env PMI_SPAWNED=1, or
                    spawner-jobid in the launcher's init answer) */
    char kvsname[256];
} mf_pmi_job_t;

/* Connects to the launcher (PMI_FD, else PMI_PORT with PMI_ID, else singleton) and fills *job_p.
 * MANIFOLD_PMI=1 or 2 forces a protocol; by default PMI-2 is asked for and PMI-1 used if the
 * launcher refuses it. Calls nest: each successful init needs one mf_pmi_finalize. */
mf_status_t mf_pmi_init(mf_pmi_job_t *job_p);

/* Publishes key=value in the job's key space; other processes see it after the next fence.
 * Keys use letters, digits, '_', '-' and '/' and must not start with "PMI_"; values are
 * printable ASCII without spaces, ';' or '\\' and at most mf_pmi_value_max() bytes (this is what
 * every launcher transports intact). Use mf_pmi_put_blob for anything else. */
mf_status_t mf_pmi_put(const char *key, const char *value);

/* Commit + barrier over all processes of the job: puts made before it are visible after it. */
mf_status_t mf_pmi_fence(void);

/* Reads the value src_rank published under key (src_rank is a hint for the launcher; -1 if
 * unknown). MF_ERR_NOT_FOUND when nobody published it, MF_ERR_TRUNCATE when value_size is too
 * small for the value and its terminating NUL, MF_ERR_INVALID before the first fence (lookups
 * have no defined result then, and hydra's PMI-2 server aborts the job on one). Under hydra's
 * PMI-2, looking up a key nobody has published yet waits until someone does or everybody
 * reaches the next fence. */
mf_status_t mf_pmi_get(int src_rank, const char *key, char *value, size_t value_size);

/* Longest value mf_pmi_put accepts (the launcher's limit minus the terminating NUL). */
size_t mf_pmi_value_max(void);

/* Binary data of any length under a key that the library makes unique per process (the rank is
 * part of the stored keys), so all processes can use the same name. The data is hex-encoded and
 * split across numbered keys that each fit the launcher's value limit. The key itself follows
 * the mf_pmi_put rules and must leave room for the suffix (about 24 characters). */
mf_status_t mf_pmi_put_blob(const char *key, const void *data, size_t len);

/* Reads src_rank's blob into buf and stores its length in *len_p. With buf == NULL only *len_p
 * is set; MF_ERR_TRUNCATE when buf_size is smaller than the blob. Same rules as mf_pmi_get. */
mf_status_t mf_pmi_get_blob(int src_rank, const char *key, void *buf, size_t buf_size,
                            size_t *len_p);

/* Node-local attributes, shared by the processes on the same node (PMI-2 node attributes,
 * emulated with node-tagged keys under PMI-1). Same key and value rules as mf_pmi_put; a value
 * is guaranteed visible to the node's other processes after the next mf_pmi_fence. */
mf_status_t mf_pmi_put_node_attr(const char *key, const char *value);
mf_status_t mf_pmi_get_node_attr(const char *key, char *value, size_t value_size);

/* The ranks that share this node, in increasing order (ranks_p[local_rank] == rank). Known when
 * the launcher provides PMI_process_mapping; MF_ERR_NOT_FOUND otherwise. MF_ERR_TRUNCATE when
 * max_ranks < local_size. */
mf_status_t mf_pmi_get_node_rank_list(int *ranks_p, int max_ranks, int *count_p);

/* The node of every rank (node_of_rank has `size` entries, the job size), numbered from 0 in the
 * launcher's PMI_process_mapping. MF_ERR_NOT_FOUND when the launcher gives no mapping. */
mf_status_t mf_pmi_get_node_map(int *node_of_rank, int size);

/* One command of a spawn: `maxprocs` copies of `command` with argv[0..argc-1] after it.
 * info_keys/info_vals (ninfo pairs) are passed to the launcher as the spawn's info
 * (e.g. "wdir", "path", "host"; a launcher ignores what it does not know). */
typedef struct mf_pmi_spawn_cmd {
    const char *command;
    int argc;
    const char *const *argv;
    int maxprocs;
    int ninfo;
    const char *const *info_keys;
    const char *const *info_vals;
} mf_pmi_spawn_cmd_t;

/* Asks the launcher to start one new job made of all the commands' processes (ranks numbered
 * in command order; command i's processes have appnum i). The npreput key/value pairs are put
 * into the new job's key space before its processes start, so they read them with
 * mf_pmi_get(-1, key, ...) after their first fence; preput keys and values follow the
 * mf_pmi_put rules. Returns when the launcher has answered: MF_OK when every process was
 * started; MF_ERR_UNSUPPORTED for a singleton that found no mpiexec next to the library to
 * start for it (mf_pmi_adopt_launcher_locked) or a launcher that does not serve spawn;
 * MF_ERR_INVALID for arguments that cannot travel (a newline under PMI-1, ';' in a PMI-2
 * request to a launcher other than ours, a request over 32 KiB or 512 key=value pairs);
 * MF_ERR_OTHER when the launcher refused or failed the spawn (an mf_log error line says what it
 * said); MF_ERR_IO/MF_ERR_PROTOCOL when the connection failed. Collective over nothing: only the
 * caller talks to the launcher. */
mf_status_t mf_pmi_spawn(int ncmds, const mf_pmi_spawn_cmd_t *cmds, int npreput,
                         const char *const *preput_keys, const char *const *preput_vals);

/* The launcher's name service (MPI_Publish_name and friends), shared by all jobs of one
 * launcher. Service names and port names follow mf_pmi_put's value rules (MF_ERR_INVALID
 * otherwise). publish: MF_ERR_INVALID also when the name is already published (the launcher
 * does not say why it refused, and util.h has no "exists" code); lookup: MF_ERR_NOT_FOUND when
 * it is not published, MF_ERR_TRUNCATE when port_size is too small for the port and its NUL;
 * unpublish: MF_ERR_NOT_FOUND when it is not published (by anyone: unpublishing another
 * process's name is allowed). MF_ERR_UNSUPPORTED for a singleton without an mpiexec to start,
 * or a launcher that answers
 * the request with something else than its reply. */
mf_status_t mf_pmi_publish_name(const char *service, const char *port);
mf_status_t mf_pmi_lookup_name(const char *service, char *port, size_t port_size);
mf_status_t mf_pmi_unpublish_name(const char *service);

/* Which wire protocol is in use: 1, 2, or 0 for a singleton. */
int mf_pmi_version(void);

/* Tells the launcher the job must end with exit_code (message shown to the user), then _exits.
 * Safe to call from any thread, even while another thread is blocked in a fence. */
void mf_pmi_abort(int exit_code, const char *msg) __attribute__((noreturn));

/* The process is exiting with the job still relying on it (MPI_Init without MPI_Finalize).
 * With a launcher other than ours this aborts the job with exit_code and msg (never returns);
 * ours, a singleton or a closed connection: returns, doing nothing. */
void mf_pmi_exit_unfinalized(int exit_code, const char *msg);

/* Says goodbye to the launcher and closes the connection (on the last nested call). */
void mf_pmi_finalize(void);

#endif /* MF_PMI_H */
