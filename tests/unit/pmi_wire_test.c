/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the PMI wire codec (src/pmi/pmi_wire.c): PMI-1 line and PMI-2 frame parsing
 * with well-formed and malformed input, the PMI-1 multi-line (mcmd) form of spawn, the length
 * header, the message builder's escaping and limits, hex encoding and PMI_process_mapping. Plain C;
 * prints each failed check and exits non-zero if there was any.
 */
#include "pmi_wire.h"

#include <string.h>

static int failures;

#define CHECK(expr)                                                                                \
    do {                                                                                           \
        if (!(expr)) {                                                                             \
            fprintf(stderr, "pmi_wire_test: line %d: check failed: %s\n", __LINE__, #expr);        \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* Parses a copy of text (the parsers work in place) into a buffer that outlives the call. */
static char scratch[MF_PMI_WIRE_MAX + 1];

static mf_status_t parse1(const char *text, mf_pmi_msg_t *msg)
{
    snprintf(scratch, sizeof(scratch), "%s", text);
    return mf_pmi_wire_parse_v1(scratch, msg);
}

static mf_status_t parse2(const char *text, size_t len, mf_pmi_msg_t *msg)
{
    memcpy(scratch, text, len);
    return mf_pmi_wire_parse_v2(scratch, len, msg);
}

static int value_is(const mf_pmi_msg_t *msg, const char *key, const char *want)
{
    const char *value = mf_pmi_msg_get(msg, key);
    return value != NULL && strcmp(value, want) == 0;
}

static void test_v1_parse(void)
{
    mf_pmi_msg_t msg;
    int rc = 0;
    CHECK(parse1("cmd=put kvsname=kvs_1 key=k value=v", &msg) == MF_OK);
    CHECK(strcmp(mf_pmi_msg_cmd(&msg), "put") == 0 && msg.npairs == 4);
    CHECK(value_is(&msg, "kvsname", "kvs_1") && value_is(&msg, "value", "v"));
    CHECK(mf_pmi_msg_get(&msg, "missing") == NULL);
    CHECK(parse1("  cmd=barrier_out   tag=0  ", &msg) == MF_OK && value_is(&msg, "tag", "0"));
    CHECK(parse1("cmd=x flag other=1", &msg) == MF_OK && value_is(&msg, "flag", ""));
    CHECK(parse1("cmd=abort message=a\\ b\\\\c\\", &msg) == MF_OK);
    CHECK(value_is(&msg, "message", "a b\\c\\"));
    CHECK(parse1("cmd=x rc=-3", &msg) == MF_OK && mf_pmi_msg_get_int(&msg, "rc", &rc) == MF_OK);
    CHECK(rc == -3);
    CHECK(parse1("cmd=x a=12x b= c=99999999999 d=+", &msg) == MF_OK);
    CHECK(mf_pmi_msg_get_int(&msg, "a", &rc) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_msg_get_int(&msg, "b", &rc) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_msg_get_int(&msg, "c", &rc) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_msg_get_int(&msg, "d", &rc) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_msg_get_int(&msg, "e", &rc) == MF_ERR_NOT_FOUND);
}

static void test_v1_malformed(void)
{
    mf_pmi_msg_t msg;
    char many[8 + 4 * MF_PMI_WIRE_MAX_PAIRS] = "cmd=x";
    CHECK(parse1("", &msg) == MF_ERR_PROTOCOL);
    CHECK(parse1("   ", &msg) == MF_ERR_PROTOCOL);
    CHECK(parse1("key=v cmd=x", &msg) == MF_ERR_PROTOCOL);
    CHECK(parse1("cmd=", &msg) == MF_ERR_PROTOCOL);
    CHECK(parse1("cmd", &msg) == MF_ERR_PROTOCOL);
    CHECK(parse1("=v", &msg) == MF_ERR_PROTOCOL);
    CHECK(parse1("cmd=x =y", &msg) == MF_ERR_PROTOCOL);
    for (int i = 0; i < MF_PMI_WIRE_MAX_PAIRS; i++)
        strcat(many, " k=v");
    CHECK(parse1(many, &msg) == MF_ERR_PROTOCOL);
}

static void test_v2_parse(void)
{
    mf_pmi_msg_t msg;
    const char *frame = "cmd=kvs-put;key=k;value=a;;b;";
    CHECK(parse2(frame, strlen(frame), &msg) == MF_OK && msg.npairs == 3);
    CHECK(strcmp(mf_pmi_msg_cmd(&msg), "kvs-put") == 0 && value_is(&msg, "value", "a;b"));
    CHECK(parse2("cmd=x;v=a;;", 11, &msg) == MF_OK && value_is(&msg, "v", "a;"));
    CHECK(parse2("cmd=x;v=sp ace=eq", 17, &msg) == MF_OK && value_is(&msg, "v", "sp ace=eq"));
    CHECK(parse2("cmd=x;empty=;", 13, &msg) == MF_OK && value_is(&msg, "empty", ""));
    /* Only the first len bytes count. */
    CHECK(parse2("cmd=x;k=v;junk", 10, &msg) == MF_OK && msg.npairs == 2);
}

static void test_v2_malformed(void)
{
    mf_pmi_msg_t msg;
    CHECK(parse2("", 0, &msg) == MF_ERR_PROTOCOL);
    CHECK(parse2("cmd=x;junk;", 11, &msg) == MF_ERR_PROTOCOL);
    CHECK(parse2("cmd=x;=v;", 9, &msg) == MF_ERR_PROTOCOL);
    CHECK(parse2("key=v;cmd=x;", 12, &msg) == MF_ERR_PROTOCOL);
    CHECK(parse2("cmd=;", 5, &msg) == MF_ERR_PROTOCOL);
    CHECK(parse2("cmd=x;k=a\0b;", 12, &msg) == MF_ERR_PROTOCOL);
    CHECK(parse2(";cmd=x;", 7, &msg) == MF_ERR_PROTOCOL);
}

static void test_v2_header(void)
{
    CHECK(mf_pmi_wire_v2_body_len("    12") == 12);
    CHECK(mf_pmi_wire_v2_body_len("12    ") == 12);
    CHECK(mf_pmi_wire_v2_body_len("999999") == 999999);
    CHECK(mf_pmi_wire_v2_body_len("000007") == 7);
    CHECK(mf_pmi_wire_v2_body_len(" 1 2  ") == -1);
    CHECK(mf_pmi_wire_v2_body_len("000000") == -1);
    CHECK(mf_pmi_wire_v2_body_len("      ") == -1);
    CHECK(mf_pmi_wire_v2_body_len("cmd=in") == -1);
    CHECK(mf_pmi_wire_v2_body_len("  -12 ") == -1);
}

static void test_builder(void)
{
    mf_pmi_out_t out;
    mf_pmi_msg_t msg;
    static char big[MF_PMI_WIRE_MAX];
    mf_pmi_out_begin(&out, 1, "abort");
    mf_pmi_out_add_int(&out, "exitcode", -7);
    mf_pmi_out_add(&out, "message", "a b\\c");
    CHECK(mf_pmi_out_end(&out) == MF_OK);
    CHECK(strcmp(out.buf, "cmd=abort exitcode=-7 message=a\\ b\\\\c\n") == 0);
    out.buf[out.len - 1] = '\0';
    CHECK(mf_pmi_wire_parse_v1(out.buf, &msg) == MF_OK && value_is(&msg, "message", "a b\\c"));

    mf_pmi_out_begin(&out, 2, "kvs-put");
    mf_pmi_out_add(&out, "key", "k");
    mf_pmi_out_add(&out, "value", "x;y");
    CHECK(mf_pmi_out_end(&out) == MF_OK);
    CHECK(strcmp(out.buf, "    29cmd=kvs-put;key=k;value=x;;y;") == 0);
    CHECK(mf_pmi_wire_v2_body_len(out.buf) == (int)out.len - MF_PMI_V2_HEADER_LEN);
    CHECK(parse2(out.buf + 6, out.len - 6, &msg) == MF_OK && value_is(&msg, "value", "x;y"));

    mf_pmi_out_begin(&out, 1, "put");
    mf_pmi_out_add(&out, "value", "two\nlines");
    CHECK(mf_pmi_out_end(&out) == MF_ERR_INVALID);
    mf_pmi_out_begin(&out, 2, "put");
    mf_pmi_out_add(&out, "bad key", "v");
    CHECK(mf_pmi_out_end(&out) == MF_ERR_INVALID);
    memset(big, 'x', sizeof(big) - 1);
    mf_pmi_out_begin(&out, 2, "put");
    mf_pmi_out_add(&out, "value", big);
    CHECK(mf_pmi_out_end(&out) == MF_ERR_TRUNCATE);
}

static void test_mcmd(void)
{
    mf_pmi_msg_t msg;
    mf_pmi_out_t out;
    char storage[64];
    snprintf(scratch, sizeof(scratch), "mcmd=spawn\nnprocs=2\narg1=a b=c\\ d\narg2=\n\n");
    CHECK(mf_pmi_wire_parse_mcmd(scratch, &msg) == MF_OK && msg.npairs == 4);
    CHECK(strcmp(mf_pmi_msg_cmd(&msg), "spawn") == 0 && value_is(&msg, "nprocs", "2"));
    CHECK(value_is(&msg, "arg1", "a b=c\\ d") && value_is(&msg, "arg2", ""));
    snprintf(scratch, sizeof(scratch), "cmd=spawn\nnprocs=2\n");
    CHECK(mf_pmi_wire_parse_mcmd(scratch, &msg) == MF_ERR_PROTOCOL);
    snprintf(scratch, sizeof(scratch), "mcmd=spawn\nno equals sign\n");
    CHECK(mf_pmi_wire_parse_mcmd(scratch, &msg) == MF_ERR_PROTOCOL);
    snprintf(scratch, sizeof(scratch), "mcmd=spawn\n=v\n");
    CHECK(mf_pmi_wire_parse_mcmd(scratch, &msg) == MF_ERR_PROTOCOL);
    snprintf(scratch, sizeof(scratch), "mcmd=\n");
    CHECK(mf_pmi_wire_parse_mcmd(scratch, &msg) == MF_ERR_PROTOCOL);

    mf_pmi_out_begin(&out, MF_PMI_MCMD, "spawn");
    mf_pmi_out_add_int(&out, "nprocs", 3);
    mf_pmi_out_add(&out, "arg1", "x y\\;z");
    CHECK(mf_pmi_out_end(&out) == MF_OK);
    CHECK(strcmp(out.buf, "mcmd=spawn\nnprocs=3\narg1=x y\\;z\nendcmd\n") == 0);
    mf_pmi_out_begin(&out, MF_PMI_MCMD, "spawn");
    mf_pmi_out_add(&out, "arg1", "two\nlines");
    CHECK(mf_pmi_out_end(&out) == MF_ERR_INVALID);

    /* caller storage: the message lives there and is bounded by its size */
    mf_pmi_out_begin_in(&out, 2, "spawn", storage, sizeof(storage));
    mf_pmi_out_add(&out, "subcmd", "prog");
    CHECK(mf_pmi_out_end(&out) == MF_OK && out.buf == storage);
    CHECK(strcmp(storage, "    22cmd=spawn;subcmd=prog;") == 0);
    mf_pmi_out_begin_in(&out, 2, "spawn", storage, sizeof(storage));
    mf_pmi_out_add(&out, "subcmd", "a-program-name-that-is-longer-than-the-storage-given");
    CHECK(mf_pmi_out_end(&out) == MF_ERR_TRUNCATE);
}

static void test_hex(void)
{
    unsigned char bytes[256], back[256];
    char hex[513];
    for (int i = 0; i < 256; i++)
        bytes[i] = (unsigned char)i;
    mf_pmi_hex_encode(bytes, sizeof(bytes), hex);
    CHECK(strlen(hex) == 512 && strncmp(hex, "000102", 6) == 0);
    CHECK(mf_pmi_hex_decode(hex, 512, back) == MF_OK && memcmp(bytes, back, 256) == 0);
    CHECK(mf_pmi_hex_decode("ABcd", 4, back) == MF_OK && back[0] == 0xab && back[1] == 0xcd);
    CHECK(mf_pmi_hex_decode("abc", 3, back) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_hex_decode("zz", 2, back) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_hex_decode("0g", 2, back) == MF_ERR_PROTOCOL);
    mf_pmi_hex_encode(bytes, 0, hex);
    CHECK(hex[0] == '\0');
}

static int mapping_is(const char *mapping, int size, const int *want)
{
    int nodes[16];
    if (mf_pmi_mapping_parse(mapping, size, nodes) != MF_OK)
        return 0;
    return memcmp(nodes, want, (size_t)size * sizeof(int)) == 0;
}

static void test_mapping(void)
{
    int nodes[16];
    CHECK(mapping_is("(vector,(0,1,4))", 4, (int[]){0, 0, 0, 0}));
    CHECK(mapping_is("(vector,(0,2,2))", 4, (int[]){0, 0, 1, 1}));
    CHECK(mapping_is("(vector,(0,2,1))", 5, (int[]){0, 1, 0, 1, 0}));
    CHECK(mapping_is("(vector,(0,1,2),(1,1,1))", 3, (int[]){0, 0, 1}));
    CHECK(mapping_is("(vector,(3,2,2))", 3, (int[]){3, 3, 4}));
    CHECK(mapping_is(" ( vector , ( 0 , 1 , 2 ) ) ", 2, (int[]){0, 0}));
    CHECK(mf_pmi_mapping_parse("(vector,0)", 1, nodes) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_mapping_parse("(vector)", 1, nodes) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_mapping_parse("", 1, nodes) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_mapping_parse("(vector,(0,1,x))", 1, nodes) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_mapping_parse("(vector,(0,1,0))", 2, nodes) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_mapping_parse("(vector,(0,1,2))x", 2, nodes) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_mapping_parse("(vector,(-1,1,2))", 2, nodes) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_mapping_parse("(vector,(0,1,2)", 2, nodes) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_mapping_parse("(vector,(2147483647,2,1))", 2, nodes) == MF_ERR_PROTOCOL);
    CHECK(mf_pmi_mapping_parse("(vector,(0,1,99999999999))", 2, nodes) == MF_ERR_PROTOCOL);
}

int main(void)
{
    test_v1_parse();
    test_v1_malformed();
    test_v2_parse();
    test_v2_malformed();
    test_v2_header();
    test_builder();
    test_mcmd();
    test_hex();
    test_mapping();
    if (failures != 0) {
        fprintf(stderr, "pmi_wire_test: %d check(s) failed\n", failures);
        return 1;
    }
    printf("pmi_wire_test: all checks passed\n");
    return 0;
}
