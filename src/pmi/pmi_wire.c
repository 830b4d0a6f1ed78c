/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PMI layer: the wire codec. Parses and builds PMI-1 lines and PMI-2 frames, hex-encodes binary
 * values and decodes PMI_process_mapping. Used by the client in this directory and by the PMI
 * server in launcher/; nothing here does I/O or keeps state.
 */
#include "pmi_wire.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define MAPPING_MAX_TRIPLES 256

const char *mf_pmi_msg_cmd(const mf_pmi_msg_t *msg)
{
    return msg->pairs[0].value;
}

const char *mf_pmi_msg_get(const mf_pmi_msg_t *msg, const char *key)
{
    for (int i = 1; i < msg->npairs; i++) {
        if (strcmp(msg->pairs[i].key, key) == 0)
            return msg->pairs[i].value;
    }
    return NULL;
}

static mf_status_t parse_int(const char *text, int *value_p)
{
    char *end;
    if (text[0] == '\0' || isspace((unsigned char)text[0]))
        return MF_ERR_PROTOCOL;
    long value = strtol(text, &end, 10);
    if (*end != '\0' || value < INT_MIN || value > INT_MAX)
        return MF_ERR_PROTOCOL;
    *value_p = (int)value;
    return MF_OK;
}

mf_status_t mf_pmi_msg_get_int(const mf_pmi_msg_t *msg, const char *key, int *value_p)
{
    const char *text = mf_pmi_msg_get(msg, key);
    if (text == NULL)
        return MF_ERR_NOT_FOUND;
    return parse_int(text, value_p);
}

/* Both protocols require the message to start with a non-empty cmd=. */
static mf_status_t check_cmd(const mf_pmi_msg_t *msg)
{
    if (msg->npairs == 0 || strcmp(msg->pairs[0].key, "cmd") != 0 || msg->pairs[0].value[0] == 0)
        return MF_ERR_PROTOCOL;
    return MF_OK;
}

/* Sets the caller's message only on success, copying only the pairs in use (the array is large
 * for spawn requests, and most messages have a handful). */
static mf_status_t finish_parse(const mf_pmi_msg_t *msg, mf_pmi_msg_t *msg_p)
{
    if (check_cmd(msg) != MF_OK)
        return MF_ERR_PROTOCOL;
    msg_p->npairs = msg->npairs;
    memcpy(msg_p->pairs, msg->pairs, (size_t)msg->npairs * sizeof(msg->pairs[0]));
    return MF_OK;
}

/* Cuts one PMI-1 value starting at *p_p in place, undoing backslash escapes; leaves *p_p on the
 * character after the value's terminating space (or on the final NUL). */
static char *cut_v1_value(char **p_p)
{
    char *p = *p_p, *dst = p, *value = p;
    while (*p != '\0' && *p != ' ') {
        if (*p == '\\' && p[1] != '\0')
            p++;
        *dst++ = *p++;
    }
    char terminator = *p;
    *dst = '\0'; /* may overwrite the terminating space, which is why it was saved */
    *p_p = terminator != '\0' ? p + 1 : p;
    return value;
}

mf_status_t mf_pmi_wire_parse_v1(char *line, mf_pmi_msg_t *msg_p)
{
    mf_pmi_msg_t msg;
    msg.npairs = 0;
    char *p = line;
    while (*p != '\0') {
        if (*p == ' ') {
            p++;
            continue;
        }
        if (msg.npairs == MF_PMI_WIRE_MAX_PAIRS)
            return MF_ERR_PROTOCOL;
        char *key = p;
        while (*p != '\0' && *p != ' ' && *p != '=')
            p++;
        if (p == key)
            return MF_ERR_PROTOCOL;
        const char *value = "";
        if (*p == '=') {
            *p++ = '\0';
            value = cut_v1_value(&p);
        } else if (*p == ' ') {
            *p++ = '\0';
        }
        msg.pairs[msg.npairs].key = key;
        msg.pairs[msg.npairs].value = value;
        msg.npairs++;
    }
    return finish_parse(&msg, msg_p);
}

mf_status_t mf_pmi_wire_parse_mcmd(char *block, mf_pmi_msg_t *msg_p)
{
    mf_pmi_msg_t msg;
    char *line = block;
    msg.npairs = 0;
    while (*line != '\0') {
        char *end = strchr(line, '\n'), *next = end != NULL ? end + 1 : line + strlen(line);
        if (end != NULL)
            *end = '\0';
        if (line[0] != '\0') {
            char *eq = strchr(line, '=');
            if (eq == NULL || eq == line || msg.npairs == MF_PMI_WIRE_MAX_PAIRS)
                return MF_ERR_PROTOCOL;
            *eq = '\0';
            /* "mcmd=NAME" opens the block and names the command, like cmd= elsewhere. */
            int first = msg.npairs == 0;
            if (first && strcmp(line, "mcmd") != 0)
                return MF_ERR_PROTOCOL;
            msg.pairs[msg.npairs].key = first ? "cmd" : line;
            msg.pairs[msg.npairs].value = eq + 1;
            msg.npairs++;
        }
        line = next;
    }
    return finish_parse(&msg, msg_p);
}

mf_status_t mf_pmi_wire_parse_v2(char *body, size_t len, mf_pmi_msg_t *msg_p)
{
    mf_pmi_msg_t msg;
    msg.npairs = 0;
    char *p = body, *end = body + len;
    body[len] = '\0';
    if (strlen(body) != len)
        return MF_ERR_PROTOCOL; /* an embedded NUL cannot be part of any value */
    while (p < end) {
        if (msg.npairs == MF_PMI_WIRE_MAX_PAIRS)
            return MF_ERR_PROTOCOL;
        char *key = p;
        while (p < end && *p != '=' && *p != ';')
            p++;
        if (p == end || *p != '=' || p == key)
            return MF_ERR_PROTOCOL;
        *p++ = '\0';
        char *value = p, *dst = p;
        while (p < end && !(*p == ';' && (p + 1 == end || p[1] != ';'))) {
            if (*p == ';')
                p++; /* the first of a doubled ';' */
            *dst++ = *p++;
        }
        if (p < end)
            p++;
        *dst = '\0';
        msg.pairs[msg.npairs].key = key;
        msg.pairs[msg.npairs].value = value;
        msg.npairs++;
    }
    return finish_parse(&msg, msg_p);
}

int mf_pmi_wire_v2_body_len(const char header[MF_PMI_V2_HEADER_LEN])
{
    int i = 0, len = 0, digits = 0;
    while (i < MF_PMI_V2_HEADER_LEN && header[i] == ' ')
        i++;
    for (; i < MF_PMI_V2_HEADER_LEN && header[i] >= '0' && header[i] <= '9'; i++, digits++)
        len = len * 10 + (header[i] - '0');
    while (i < MF_PMI_V2_HEADER_LEN && header[i] == ' ')
        i++;
    if (i != MF_PMI_V2_HEADER_LEN || digits == 0 || len == 0)
        return -1;
    return len;
}

static void out_append(mf_pmi_out_t *out, const char *text, size_t len)
{
    if (out->status != MF_OK)
        return;
    if (out->len + len + 1 > out->cap) {
        out->status = MF_ERR_TRUNCATE;
        return;
    }
    memcpy(out->buf + out->len, text, len);
    out->len += len;
    out->buf[out->len] = '\0';
}

void mf_pmi_out_begin_in(mf_pmi_out_t *out, int version, const char *cmd, char *storage, size_t cap)
{
    out->version = version;
    out->status = MF_OK;
    out->len = 0;
    out->buf = storage;
    out->cap = cap;
    out->buf[0] = '\0';
    if (version == 2)
        out_append(out, "      ", MF_PMI_V2_HEADER_LEN);
    out_append(out, version == MF_PMI_MCMD ? "mcmd=" : "cmd=", version == MF_PMI_MCMD ? 5 : 4);
    out_append(out, cmd, strlen(cmd));
    if (version != 1)
        out_append(out, version == 2 ? ";" : "\n", 1);
}

void mf_pmi_out_begin(mf_pmi_out_t *out, int version, const char *cmd)
{
    mf_pmi_out_begin_in(out, version, cmd, out->small, sizeof(out->small));
}

/* PMI-1 escapes ' ' and '\' with a backslash and cannot carry a newline; PMI-2 doubles ';'; the
 * multi-line form takes anything but a newline as it is. */
static void out_append_value(mf_pmi_out_t *out, const char *value)
{
    for (const char *c = value; *c != '\0' && out->status == MF_OK; c++) {
        if (out->version != 2 && *c == '\n')
            out->status = MF_ERR_INVALID;
        else if (out->version == 1 && (*c == ' ' || *c == '\\'))
            out_append(out, "\\", 1);
        else if (out->version == 2 && *c == ';')
            out_append(out, ";", 1);
        out_append(out, c, 1);
    }
}

void mf_pmi_out_add(mf_pmi_out_t *out, const char *key, const char *value)
{
    if (key[0] == '\0' || strpbrk(key, " =;\n\\") != NULL)
        out->status = out->status == MF_OK ? MF_ERR_INVALID : out->status;
    out_append(out, out->version == 1 ? " " : "", out->version == 1 ? 1 : 0);
    out_append(out, key, strlen(key));
    out_append(out, "=", 1);
    out_append_value(out, value);
    if (out->version != 1)
        out_append(out, out->version == 2 ? ";" : "\n", 1);
}

void mf_pmi_out_add_int(mf_pmi_out_t *out, const char *key, int value)
{
    char text[16];
    snprintf(text, sizeof(text), "%d", value);
    mf_pmi_out_add(out, key, text);
}

mf_status_t mf_pmi_out_end(mf_pmi_out_t *out)
{
    if (out->version == 1) {
        out_append(out, "\n", 1);
    } else if (out->version == MF_PMI_MCMD) {
        out_append(out, "endcmd\n", 7);
    } else if (out->status == MF_OK) {
        char header[MF_PMI_V2_HEADER_LEN + 1];
        snprintf(header, sizeof(header), "%6d", (int)(out->len - MF_PMI_V2_HEADER_LEN));
        memcpy(out->buf, header, MF_PMI_V2_HEADER_LEN);
    }
    return out->status;
}

void mf_pmi_hex_encode(const void *data, size_t len, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *bytes = data;
    for (size_t i = 0; i < len; i++) {
        out[2 * i] = digits[bytes[i] >> 4];
        out[2 * i + 1] = digits[bytes[i] & 0xf];
    }
    out[2 * len] = '\0';
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

mf_status_t mf_pmi_hex_decode(const char *hex, size_t hex_len, void *out)
{
    unsigned char *bytes = out;
    if (hex_len % 2 != 0)
        return MF_ERR_PROTOCOL;
    for (size_t i = 0; i < hex_len / 2; i++) {
        int high = hex_digit(hex[2 * i]), low = hex_digit(hex[2 * i + 1]);
        if (high < 0 || low < 0)
            return MF_ERR_PROTOCOL;
        bytes[i] = (unsigned char)(high << 4 | low);
    }
    return MF_OK;
}

/* Cursor helpers for the mapping grammar; spaces between tokens are tolerated. */
static int expect_char(const char **p_p, char c)
{
    while (**p_p == ' ')
        (*p_p)++;
    if (**p_p != c)
        return 0;
    (*p_p)++;
    return 1;
}

static int expect_count(const char **p_p, int *value_p)
{
    while (**p_p == ' ')
        (*p_p)++;
    if (!isdigit((unsigned char)**p_p))
        return 0;
    char *end;
    long value = strtol(*p_p, &end, 10);
    if (value > INT_MAX)
        return 0;
    *p_p = end;
    *value_p = (int)value;
    return 1;
}

static void mapping_place(const int (*triples)[3], int ntriples, int size, int *node_of_rank,
                          int *placed_p)
{
    int placed = *placed_p;
    for (int t = 0; t < ntriples; t++) {
        for (int n = 0; n < triples[t][1] && placed < size; n++) {
            for (int k = 0; k < triples[t][2] && placed < size; k++)
                node_of_rank[placed++] = triples[t][0] + n;
        }
    }
    *placed_p = placed;
}

mf_status_t mf_pmi_mapping_parse(const char *mapping, int size, int *node_of_rank)
{
    int triples[MAPPING_MAX_TRIPLES][3];
    int ntriples = 0;
    const char *p = mapping;
    if (!expect_char(&p, '('))
        return MF_ERR_PROTOCOL;
    while (*p == ' ')
        p++;
    if (strncmp(p, "vector", 6) != 0)
        return MF_ERR_PROTOCOL;
    p += 6;
    while (expect_char(&p, ',')) {
        if (ntriples == MAPPING_MAX_TRIPLES)
            return MF_ERR_UNSUPPORTED;
        int *t = triples[ntriples++];
        if (!expect_char(&p, '(') || !expect_count(&p, &t[0]) || !expect_char(&p, ',') ||
            !expect_count(&p, &t[1]) || !expect_char(&p, ',') || !expect_count(&p, &t[2]) ||
            !expect_char(&p, ')'))
            return MF_ERR_PROTOCOL;
        if (t[1] > INT_MAX - t[0])
            return MF_ERR_PROTOCOL;
    }
    if (!expect_char(&p, ')') || ntriples == 0)
        return MF_ERR_PROTOCOL;
    while (*p == ' ')
        p++;
    if (*p != '\0')
        return MF_ERR_PROTOCOL;
    int placed = 0;
    while (placed < size) {
        int before = placed;
        mapping_place((const int(*)[3])triples, ntriples, size, node_of_rank, &placed);
        if (placed == before)
            return MF_ERR_PROTOCOL; /* every block is empty: the ranks can never be placed */
    }
    return MF_OK;
}
