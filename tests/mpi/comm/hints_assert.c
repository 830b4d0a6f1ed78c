/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The communicator assertions of MPI-4 (mpi_assert_no_any_source, mpi_assert_no_any_tag,
 * mpi_assert_allow_overtaking, mpi_assert_exact_length) change nothing for a program that
 * keeps them, whatever the library does with them (Manifold spreads such a communicator's
 * traffic over several channels by source and tag):
 * - MPI_Comm_dup_with_info with the assertions succeeds and MPI_Comm_get_info reports them as
 *   "true"; MPI_Comm_dup of that communicator keeps them (values checked on Manifold only: the
 *   standard lets a library drop hints it does not use).
 * - Every process sends every other one messages on many tags, interleaved, some past the
 *   eager limit; the receiver takes them tag by tag (so most arrive unexpected), with
 *   MPI_Irecv, MPI_Recv, MPI_Probe + MPI_Recv, MPI_Iprobe + MPI_Recv and MPI_Mprobe +
 *   MPI_Mrecv, and checks contents and the order per (source, tag).
 * - With mpi_assert_allow_overtaking and mpi_assert_exact_length all messages still arrive
 *   intact (order not checked: it is waived), received with MPI_Mprobe + MPI_Mrecv and
 *   exact lengths.
 * - MPI_Comm_set_info adding the assertions after traffic has completed, and while a small
 *   and a large message sent before it are still unreceived: they are received afterwards,
 *   before the messages sent after set_info on the same (source, tag).
 * - MPI_Comm_set_info setting them back to "false": MPI_Comm_get_info reports what is in
 *   effect, so "true" exactly when a receive with MPI_ANY_SOURCE is still refused.
 * With MTEST_POOL_BY_RANK set, even ranks get a pool of 8 VCIs and odd ones 12
 * (MANIFOLD_VCI_COUNT, as the default pool size follows each node's cores): the spread
 * communicators failed with a protocol error in the address exchange.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mtest.h"

#define NTAGS       40
#define PER_TAG     3
#define HEADER      3 /* source, tag, sequence number */
#define LARGE_LEN   (HEADER + 20000)
#define MAX_RANKS   16
#define PENDING_TAG 2 /* its second message is a large one */

enum how { HOW_IRECV, HOW_RECV, HOW_PROBE, HOW_IPROBE, HOW_MPROBE, HOW_COUNT };

static int g_rank, g_size, g_manifold;

static int msg_len(int tag, int seq)
{
    if ((tag * PER_TAG + seq) % 29 == 7)
        return LARGE_LEN;
    return HEADER + (tag * 7 + seq * 13) % 300;
}

static uint32_t value_at(int src, int tag, int seq, int i)
{
    return (uint32_t)src * 0x9e3779b1u ^ (uint32_t)tag * 0x85ebca77u ^ (uint32_t)seq * 0xc2b2ae3du ^
           (uint32_t)i;
}

static uint32_t *make_msg(int tag, int seq, int len)
{
    uint32_t *b = mtest_calloc((size_t)len, sizeof(uint32_t));

    b[0] = (uint32_t)g_rank;
    b[1] = (uint32_t)tag;
    b[2] = (uint32_t)seq;
    for (int i = HEADER; i < len; i++)
        b[i] = value_at(g_rank, tag, seq, i);
    return b;
}

/* Checks a received message; with ordered set, seq must be the expected one. */
static void check_msg(const char *what, const uint32_t *b, const MPI_Status *st, int src, int tag,
                      int seq, int ordered)
{
    int count = -1, bad = -1;

    MPI_Get_count(st, MPI_UINT32_T, &count);
    if (!MTEST_CHECK(count >= HEADER && st->MPI_SOURCE == src && st->MPI_TAG == tag &&
                         (int)b[0] == src && (int)b[1] == tag,
                     "%s: from %d tag %d: status %d/%d count %d, header %u/%u", what, src, tag,
                     st->MPI_SOURCE, st->MPI_TAG, count, b[0], b[1]))
        return;
    if (ordered)
        MTEST_CHECK((int)b[2] == seq, "%s: from %d tag %d: seq %u, expected %d", what, src, tag,
                    b[2], seq);
    MTEST_CHECK(count == msg_len(tag, (int)b[2]), "%s: from %d tag %d seq %u: %d elements", what,
                src, tag, b[2], count);
    for (int i = HEADER; i < count && bad < 0; i++)
        if (b[i] != value_at(src, tag, (int)b[2], i))
            bad = i;
    MTEST_CHECK(bad < 0, "%s: from %d tag %d seq %u: element %d wrong", what, src, tag, b[2], bad);
}

/* All-to-all on many tags: sends interleaved across tags, receives tag by tag. */
static void traffic(const char *what, MPI_Comm comm, int ordered, int exact)
{
    int nsend = (g_size - 1) * NTAGS * PER_TAG, n = 0;
    MPI_Request *reqs = mtest_calloc((size_t)nsend + 1, sizeof(MPI_Request));
    uint32_t **bufs = mtest_calloc((size_t)nsend + 1, sizeof(uint32_t *));
    int seen[MAX_RANKS][NTAGS] = {{0}};

    for (int seq = 0; seq < PER_TAG; seq++)
        for (int tag = 0; tag < NTAGS; tag++)
            for (int d = 1; d < g_size; d++, n++) {
                int dst = (g_rank + d) % g_size, len = msg_len(tag, seq);

                bufs[n] = make_msg(tag, seq, len);
                MPI_Isend(bufs[n], len, MPI_UINT32_T, dst, tag, comm, &reqs[n]);
            }
    for (int tag = NTAGS - 1; tag >= 0; tag--) {
        for (int d = 1; d < g_size; d++) {
            int src = (g_rank + g_size - d) % g_size;

            for (int seq = 0; seq < PER_TAG; seq++) {
                int how = (tag + seq + src) % HOW_COUNT, len = msg_len(tag, seq), count = -1;
                /* exact_length: the buffer must be exactly the message; without the
                 * assertion a larger buffer is fine */
                int cap = exact || how >= HOW_PROBE ? len : LARGE_LEN;
                uint32_t *b;
                MPI_Status st, probed;
                MPI_Message msg;
                MPI_Request req;
                int flag = 0;

                /* messages of one (source, tag) may overtake: only a matched probe tells
                 * which one, and so its exact length, comes next */
                if (!ordered)
                    how = HOW_MPROBE;
                if (how == HOW_PROBE)
                    MPI_Probe(src, tag, comm, &probed);
                while (how == HOW_IPROBE && !flag)
                    MPI_Iprobe(src, tag, comm, &flag, &probed);
                if (how == HOW_MPROBE)
                    MPI_Mprobe(src, tag, comm, &msg, &probed);
                if (how >= HOW_PROBE) {
                    MPI_Get_count(&probed, MPI_UINT32_T, &count);
                    if (!MTEST_CHECK(count >= HEADER && count <= LARGE_LEN,
                                     "%s: probe gave %d elements", what, count))
                        count = LARGE_LEN;
                    cap = count;
                }
                b = mtest_calloc((size_t)cap, sizeof(uint32_t));
                if (how == HOW_IRECV) {
                    MPI_Irecv(b, cap, MPI_UINT32_T, src, tag, comm, &req);
                    MPI_Wait(&req, &st);
                } else if (how == HOW_MPROBE) {
                    MPI_Mrecv(b, cap, MPI_UINT32_T, &msg, &st);
                } else {
                    MPI_Recv(b, cap, MPI_UINT32_T, src, tag, comm, &st);
                }
                check_msg(what, b, &st, src, tag, seq, ordered);
                if (src < MAX_RANKS && (int)b[2] >= 0 && (int)b[2] < PER_TAG)
                    seen[src][tag] |= 1 << b[2];
                free(b);
            }
            MTEST_CHECK(seen[src][tag] == (1 << PER_TAG) - 1, "%s: from %d tag %d got the set %#x",
                        what, src, tag, seen[src][tag]);
        }
    }
    MPI_Waitall(nsend, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < nsend; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
}

static void get_hint(MPI_Comm comm, const char *key, char *value, int len)
{
    MPI_Info used;
    int flag = 0;

    value[0] = '\0';
    MPI_Comm_get_info(comm, &used);
    MPI_Info_get(used, key, len - 1, value, &flag);
    if (!flag)
        value[0] = '\0';
    MPI_Info_free(&used);
}

static void expect_hint(const char *what, MPI_Comm comm, const char *key)
{
    char value[64];

    get_hint(comm, key, value, sizeof(value));
    MTEST_CHECK(!g_manifold || strcmp(value, "true") == 0, "%s: %s reads '%s'", what, key, value);
}

static MPI_Info assertions(int source, int tag, int overtaking, int exact)
{
    MPI_Info info;

    MPI_Info_create(&info);
    if (source)
        MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    if (tag)
        MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    if (overtaking)
        MPI_Info_set(info, "mpi_assert_allow_overtaking", "true");
    if (exact)
        MPI_Info_set(info, "mpi_assert_exact_length", "true");
    return info;
}

/* Small and large messages sent to the right neighbour before set_info and received after,
 * followed by more on the same tag: all arrive, in order. */
static void pending_across_set_info(void)
{
    int right = (g_rank + 1) % g_size, left = (g_rank + g_size - 1) % g_size, rc;
    MPI_Comm comm;
    MPI_Info info = assertions(1, 1, 0, 0);
    MPI_Request reqs[4];
    uint32_t *out[4], *in;
    MPI_Status st;

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    out[0] = make_msg(PENDING_TAG, 0, msg_len(PENDING_TAG, 0));
    out[1] = make_msg(PENDING_TAG, 1, msg_len(PENDING_TAG, 1));
    MPI_Isend(out[0], msg_len(PENDING_TAG, 0), MPI_UINT32_T, right, PENDING_TAG, comm, &reqs[0]);
    MPI_Isend(out[1], msg_len(PENDING_TAG, 1), MPI_UINT32_T, right, PENDING_TAG, comm, &reqs[1]);
    /* the small message has been sent (and so is unexpected at its receiver) before anyone
     * sets the info; the large one may still wait for its receiver */
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Comm_set_info(comm, info);
    MTEST_CHECK(rc == MPI_SUCCESS, "set_info with a message pending returned %d", rc);
    MPI_Info_free(&info);
    expect_hint("set_info with a message pending", comm, "mpi_assert_no_any_source");
    out[2] = make_msg(PENDING_TAG, 2, msg_len(PENDING_TAG, 2));
    out[3] = make_msg(6, 0, msg_len(6, 0));
    MPI_Isend(out[2], msg_len(PENDING_TAG, 2), MPI_UINT32_T, right, PENDING_TAG, comm, &reqs[2]);
    MPI_Isend(out[3], msg_len(6, 0), MPI_UINT32_T, right, 6, comm, &reqs[3]);
    in = mtest_calloc(LARGE_LEN, sizeof(uint32_t));
    MPI_Recv(in, LARGE_LEN, MPI_UINT32_T, left, 6, comm, &st);
    check_msg("after set_info", in, &st, left, 6, 0, 1);
    for (int seq = 0; seq < 3; seq++) {
        MPI_Recv(in, LARGE_LEN, MPI_UINT32_T, left, PENDING_TAG, comm, &st);
        check_msg("sent before set_info", in, &st, left, PENDING_TAG, seq, 1);
    }
    MPI_Waitall(4, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < 4; i++)
        free(out[i]);
    free(in);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    MPI_Comm hinted, dup, relaxed, late;
    MPI_Info info;
    int rc;

    const char *launcher_rank = getenv("PMI_RANK");
    if (getenv("MTEST_POOL_BY_RANK") != NULL && launcher_rank != NULL)
        setenv("MANIFOLD_VCI_COUNT", atoi(launcher_rank) % 2 == 0 ? "8" : "12", 1);
    mtest_init(&argc, &argv);
    g_manifold = mtest_is_manifold();
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    if (!MTEST_CHECK(g_size <= MAX_RANKS, "at most %d processes", MAX_RANKS))
        return mtest_finalize(0);

    info = assertions(1, 1, 0, 0);
    rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &hinted);
    MPI_Info_free(&info);
    if (!MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_dup_with_info returned %d", rc))
        return mtest_finalize(0);
    expect_hint("dup_with_info", hinted, "mpi_assert_no_any_source");
    expect_hint("dup_with_info", hinted, "mpi_assert_no_any_tag");
    traffic("no_any_source+no_any_tag", hinted, 1, 0);

    MPI_Comm_dup(hinted, &dup);
    expect_hint("dup of a hinted comm", dup, "mpi_assert_no_any_source");
    expect_hint("dup of a hinted comm", dup, "mpi_assert_no_any_tag");
    traffic("dup of hinted", dup, 1, 0);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&hinted);

    info = assertions(1, 0, 0, 0);
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &hinted);
    MPI_Info_free(&info);
    traffic("no_any_source", hinted, 1, 0);
    MPI_Comm_free(&hinted);

    info = assertions(0, 1, 0, 0);
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &hinted);
    MPI_Info_free(&info);
    traffic("no_any_tag", hinted, 1, 0);
    MPI_Comm_free(&hinted);

    info = assertions(1, 1, 1, 1);
    rc = MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &relaxed);
    MPI_Info_free(&info);
    if (MTEST_CHECK(rc == MPI_SUCCESS, "dup_with_info with every assertion returned %d", rc)) {
        expect_hint("every assertion", relaxed, "mpi_assert_allow_overtaking");
        expect_hint("every assertion", relaxed, "mpi_assert_exact_length");
        traffic("allow_overtaking+exact_length", relaxed, 0, 1);
        MPI_Comm_free(&relaxed);
    }

    /* assertions added once traffic (with wildcards) has completed */
    MPI_Comm_dup(MPI_COMM_WORLD, &late);
    {
        int token = g_rank, got = -1;
        MPI_Status st;

        MPI_Sendrecv(&token, 1, MPI_INT, (g_rank + 1) % g_size, 1, &got, 1, MPI_INT, MPI_ANY_SOURCE,
                     MPI_ANY_TAG, late, &st);
        MTEST_CHECK(got == (g_rank + g_size - 1) % g_size, "wildcard exchange got %d", got);
        /* set_info need not synchronise: without this, the next phase's messages could
         * reach a wildcard receive still posted */
        MPI_Barrier(late);
    }
    info = assertions(1, 1, 0, 0);
    rc = MPI_Comm_set_info(late, info);
    MPI_Info_free(&info);
    MTEST_CHECK(rc == MPI_SUCCESS, "set_info after traffic returned %d", rc);
    expect_hint("set_info after traffic", late, "mpi_assert_no_any_tag");
    traffic("set_info after traffic", late, 1, 0);
    /* lifted again: the info says whether the assertion is still in effect */
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_source", "false");
    MPI_Info_set(info, "mpi_assert_no_any_tag", "false");
    MPI_Comm_set_info(late, info);
    MPI_Info_free(&info);
    MPI_Comm_set_errhandler(late, MPI_ERRORS_RETURN);
    MPI_Request wild;
    int sink = 0;
    rc = MPI_Irecv(&sink, 1, MPI_INT, MPI_ANY_SOURCE, 99, late, &wild);
    if (rc == MPI_SUCCESS) {
        MPI_Cancel(&wild);
        MPI_Wait(&wild, MPI_STATUS_IGNORE);
    }
    char value[64];
    get_hint(late, "mpi_assert_no_any_source", value, sizeof(value));
    MTEST_CHECK(!g_manifold || strcmp(value, rc == MPI_SUCCESS ? "false" : "true") == 0,
                "after lifting the assertion, MPI_ANY_SOURCE %s but the info says '%s'",
                rc == MPI_SUCCESS ? "works" : "is refused", value);
    MPI_Comm_free(&late);

    pending_across_set_info();
    return mtest_finalize(0);
}
