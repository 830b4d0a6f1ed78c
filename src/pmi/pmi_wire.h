/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMI wire formats, shared by the PMI client (src/pmi) and the PMI server in our mpiexec
 * (launcher/): parsing and building PMI-1 lines ("cmd=put key=k value=v\n") and PMI-2 frames
 * (6-character decimal length, then "cmd=kvs-put;key=k;value=v;"), hex encoding of binary values
 * and the PMI_process_mapping format. Pure functions without I/O or global state, so the parsers
 * can be unit-tested against malformed input.
 */
#ifndef MF_PMI_WIRE_H
#define MF_PMI_WIRE_H

#include "util.h"

#include <stddef.h>

#define MF_PMI_WIRE_MAX       4096 /* largest message we build or accept, header included */
#define MF_PMI_WIRE_MAX_PAIRS 512  /* a spawn request carries every argument as a pair */
#define MF_PMI_V2_HEADER_LEN  6
#define MF_PMI_SPAWN_MAX      (32 * 1024) /* largest spawn request (built in caller storage) */

/* The "version" of the PMI-1 multi-line form that spawn uses: "mcmd=spawn\n", one "key=value\n"
 * line per pair (the value runs to the end of the line, unescaped), then "endcmd\n". */
#define MF_PMI_MCMD 3

/* A parsed message: pairs[0] is always "cmd". Keys and values point into the parsed buffer. */
typedef struct mf_pmi_msg {
    int npairs;
    struct {
        const char *key, *value;
    } pairs[MF_PMI_WIRE_MAX_PAIRS];
} mf_pmi_msg_t;

/* Parses one PMI-1 line in place (without its '\n'): space-separated key=value tokens starting
 * with cmd=, a backslash escapes the next character of a value. MF_ERR_PROTOCOL if malformed. */
mf_status_t mf_pmi_wire_parse_v1(char *line, mf_pmi_msg_t *msg_p);

/* Parses one PMI-1 multi-line block in place, from "mcmd=NAME" up to (without) its "endcmd"
 * line: pairs[0] is then cmd=NAME. MF_ERR_PROTOCOL if malformed. */
mf_status_t mf_pmi_wire_parse_mcmd(char *block, mf_pmi_msg_t *msg_p);

/* Parses one PMI-2 frame body of len bytes in place (the buffer must have room for one more
 * byte): key=value pairs each ended by ';', where ";;" inside a value stands for ';'. */
mf_status_t mf_pmi_wire_parse_v2(char *body, size_t len, mf_pmi_msg_t *msg_p);

/* Decodes a PMI-2 length header (6 characters, digits padded with spaces on either side).
 * Returns the body length, or -1 if the header is malformed or announces an empty body. */
int mf_pmi_wire_v2_body_len(const char header[MF_PMI_V2_HEADER_LEN]);

/* The command name of a parsed message and the value of key (NULL if absent). */
const char *mf_pmi_msg_cmd(const mf_pmi_msg_t *msg);
const char *mf_pmi_msg_get(const mf_pmi_msg_t *msg, const char *key);
/* A decimal integer value: MF_ERR_NOT_FOUND if absent, MF_ERR_PROTOCOL if not an int. */
mf_status_t mf_pmi_msg_get_int(const mf_pmi_msg_t *msg, const char *key, int *value_p);

/* Builds one message: begin, add pairs, end. The first error (message too long, a character
 * the protocol cannot carry) sticks and is returned by mf_pmi_out_end. version is 1, 2 or
 * MF_PMI_MCMD. The message is in buf: the struct's own MF_PMI_WIRE_MAX bytes, or the storage
 * given to mf_pmi_out_begin_in for larger ones (spawn requests). */
typedef struct mf_pmi_out {
    int version;
    mf_status_t status;
    size_t len, cap;
    char *buf;
    char small[MF_PMI_WIRE_MAX];
} mf_pmi_out_t;

void mf_pmi_out_begin(mf_pmi_out_t *out, int version, const char *cmd);
void mf_pmi_out_begin_in(mf_pmi_out_t *out, int version, const char *cmd, char *storage,
                         size_t cap);
void mf_pmi_out_add(mf_pmi_out_t *out, const char *key, const char *value);
void mf_pmi_out_add_int(mf_pmi_out_t *out, const char *key, int value);
/* Adds '\n' (PMI-1), "endcmd\n" (MF_PMI_MCMD) or the length header (PMI-2). */
mf_status_t mf_pmi_out_end(mf_pmi_out_t *out);

/* Lower-case hex; out must hold 2 * len + 1 bytes and is NUL-terminated. */
void mf_pmi_hex_encode(const void *data, size_t len, char *out);
/* Decodes hex_len characters into out (hex_len / 2 bytes); MF_ERR_PROTOCOL on bad input. */
mf_status_t mf_pmi_hex_decode(const char *hex, size_t hex_len, void *out);

/* Parses a PMI_process_mapping value such as "(vector,(0,2,4),(2,1,3))": triples of (first
 * node, node count, ranks per node), applied cyclically until size ranks are placed. Fills
 * node_of_rank[0..size-1] with each rank's node index. */
mf_status_t mf_pmi_mapping_parse(const char *mapping, int size, int *node_of_rank);

#endif /* MF_PMI_WIRE_H */
