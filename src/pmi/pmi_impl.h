/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMI layer internals shared by pmi_client.c (connection, init, finalize, abort) and pmi_kvs.c
 * (key-value operations): the single connection state and the request/reply helper. All of it
 * is protected by mf_pmi_state.lock; functions named *_locked expect the caller to hold it.
 */
#ifndef MF_PMI_IMPL_H
#define MF_PMI_IMPL_H

#include "pmi.h"
#include "pmi_wire.h"

#include <pthread.h>

/* One entry of the in-memory key space a singleton uses instead of a launcher. */
typedef struct mf_pmi_kv {
    struct mf_pmi_kv *next;
    char *key;
    char *value;
} mf_pmi_kv_t;

typedef struct mf_pmi_state {
    pthread_mutex_t lock;
    int init_count;       /* nested mf_pmi_init calls still to be finalized */
    int version;          /* 0 singleton, 1 or 2 */
    int fd;               /* connection to the launcher, -1 for a singleton */
    int broken;           /* a transfer failed half-way: the stream can no longer be trusted */
    int launcher_is_ours; /* our mpiexec: prints abort messages itself, undoes ";;" */
    int fenced;           /* a fence completed: lookups are meaningful from now on */
    size_t key_max;       /* longest key, in characters */
    size_t value_max;     /* longest value, in characters */
    mf_pmi_job_t job;
    int *node_ranks;        /* ranks on this node (job.local_size of them), NULL if unknown */
    char node_tag[40];      /* key prefix that emulates node attributes under PMI-1 */
    mf_pmi_kv_t *local_kvs; /* singleton key space */
    size_t in_len;          /* bytes received but not yet consumed */
    char in_buf[2 * MF_PMI_WIRE_MAX];
    mf_pmi_msg_t reply; /* last reply; its strings live in reply_buf */
    char reply_buf[MF_PMI_WIRE_MAX + 1];
    /* A call whose reply may be late gives up at this mf_now_ns time (0: waits for ever),
     * timed_out says it did, and late_reply names the reply still to come then, which the next
     * calls drop when it arrives: the stream stays in step (see mf_pmi_call_locked). */
    uint64_t reply_deadline_ns;
    int timed_out;
    const char *late_reply;
} mf_pmi_state_t;

extern mf_pmi_state_t mf_pmi_state;

/* Sends req and reads one reply into mf_pmi_state.reply, checking that its command is expect
 * and that rc is 0. When missing_ok is set, a non-zero rc or found=FALSE returns
 * MF_ERR_NOT_FOUND without logging (the caller asked for a key that may not exist). */
mf_status_t mf_pmi_call_locked(mf_pmi_out_t *req, const char *expect, int missing_ok);

/* Sends req without waiting for a reply (the first blocks of a multi-block request); a failed
 * send marks the connection broken. */
mf_status_t mf_pmi_send_locked(mf_pmi_out_t *req);

/* A singleton starts our mpiexec and becomes rank 0 of a job of one it serves (PMI-2), so
 * that it can spawn and use the name service. MF_ERR_UNSUPPORTED without an mpiexec next to
 * the library; on any failure the process stays a singleton. */
mf_status_t mf_pmi_adopt_launcher_locked(void);
/* Puts key=value into the job's key space (a singleton's own, or the launcher's). */
mf_status_t mf_pmi_put_locked(const char *key, const char *value);

/* MF_ERR_INVALID (logged) unless mf_pmi_init was called. */
mf_status_t mf_pmi_check_ready_locked(const char *what);

/* The key and value rules of mf_pmi_put; MF_ERR_INVALID (logged, naming the bad byte). */
mf_status_t mf_pmi_check_key(const char *key);
mf_status_t mf_pmi_check_value(const char *value);

/* Reads a job attribute such as PMI_process_mapping (PMI-1: a reserved key; PMI-2:
 * info-getjobattr) into value. */
mf_status_t mf_pmi_get_job_attr_locked(const char *key, char *value, size_t value_size);

/* Singleton key space: replace or add, find. */
mf_status_t mf_pmi_local_put_locked(const char *key, const char *value);
const char *mf_pmi_local_get_locked(const char *key);
void mf_pmi_local_clear_locked(void);

#endif /* MF_PMI_IMPL_H */
