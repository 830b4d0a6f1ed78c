/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every send and receive entry point (the int and large-count forms of MPI_Send, Ssend, Rsend,
 * Isend, Issend, Irsend, Recv and Irecv) with derived datatypes, which Manifold hands to a
 * function of its own per entry point: a column of doubles and an array of small structs (the
 * two layouts whose copies the blocking calls inline), a type that is one run, and counts 0,
 * 1 and 3. Every byte is checked, gaps included. Then a bad tag and a missing request through
 * each entry point, on a communicator whose handler returns, must report the entry point's
 * own name. Rank 0 sends, rank 1 receives.
 */
#include "mtest.h"

#include <mpi.h>

#include <stddef.h>
#include <string.h>

#define NTYPES 3
#define SPAN   1024 /* bytes of the largest message's memory */

typedef struct particle {
    int id;
    double x;
    float w;
    double unsent;
} particle_t;

enum {
    S_SEND,
    S_SEND_C,
    S_SSEND,
    S_SSEND_C,
    S_RSEND,
    S_RSEND_C,
    S_ISEND,
    S_ISEND_C,
    S_ISSEND,
    S_ISSEND_C,
    S_IRSEND,
    S_IRSEND_C,
    S_COUNT
};
static const char *const send_names[S_COUNT] = {
    "MPI_Send",  "MPI_Send_c",  "MPI_Ssend",  "MPI_Ssend_c",  "MPI_Rsend",  "MPI_Rsend_c",
    "MPI_Isend", "MPI_Isend_c", "MPI_Issend", "MPI_Issend_c", "MPI_Irsend", "MPI_Irsend_c"};
enum { R_RECV, R_RECV_C, R_IRECV, R_IRECV_C, R_COUNT };
static const char *const recv_names[R_COUNT] = {"MPI_Recv", "MPI_Recv_c", "MPI_Irecv",
                                                "MPI_Irecv_c"};

static int rank;
static MPI_Datatype types[NTYPES];
static unsigned char src[SPAN], dst[SPAN], ref[SPAN];

static int do_send(int which, const void *buf, int count, MPI_Datatype t, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    switch (which) {
    case S_SEND: return MPI_Send(buf, count, t, 1, tag, comm);
    case S_SEND_C: return MPI_Send_c(buf, count, t, 1, tag, comm);
    case S_SSEND: return MPI_Ssend(buf, count, t, 1, tag, comm);
    case S_SSEND_C: return MPI_Ssend_c(buf, count, t, 1, tag, comm);
    case S_RSEND: return MPI_Rsend(buf, count, t, 1, tag, comm);
    case S_RSEND_C: return MPI_Rsend_c(buf, count, t, 1, tag, comm);
    case S_ISEND: return MPI_Isend(buf, count, t, 1, tag, comm, req);
    case S_ISEND_C: return MPI_Isend_c(buf, count, t, 1, tag, comm, req);
    case S_ISSEND: return MPI_Issend(buf, count, t, 1, tag, comm, req);
    case S_ISSEND_C: return MPI_Issend_c(buf, count, t, 1, tag, comm, req);
    case S_IRSEND: return MPI_Irsend(buf, count, t, 1, tag, comm, req);
    default: return MPI_Irsend_c(buf, count, t, 1, tag, comm, req);
    }
}

static int do_recv(int which, void *buf, int count, MPI_Datatype t, int tag, MPI_Comm comm,
                   MPI_Request *req)
{
    switch (which) {
    case R_RECV: return MPI_Recv(buf, count, t, 0, tag, comm, MPI_STATUS_IGNORE);
    case R_RECV_C: return MPI_Recv_c(buf, count, t, 0, tag, comm, MPI_STATUS_IGNORE);
    case R_IRECV: return MPI_Irecv(buf, count, t, 0, tag, comm, req);
    default: return MPI_Irecv_c(buf, count, t, 0, tag, comm, req);
    }
}

/* What the receive must leave in dst: the type map's bytes from src, the rest untouched. */
static void expect(MPI_Datatype t, int count)
{
    memset(ref, 0xee, SPAN);
    if (count == 0)
        return;
    MPI_Aint lb, extent;
    MPI_Type_get_extent(t, &lb, &extent);
    int size;
    MPI_Type_size(t, &size);
    unsigned char packed[SPAN], zero[SPAN];
    int pos = 0;
    MPI_Pack(src, count, t, packed, SPAN, &pos, MPI_COMM_SELF);
    /* unpacking into a buffer of one value and into one of another marks the type map */
    memset(zero, 0, SPAN);
    pos = 0;
    MPI_Unpack(packed, SPAN, &pos, zero, count, t, MPI_COMM_SELF);
    unsigned char ones[SPAN];
    memset(ones, 0xff, SPAN);
    pos = 0;
    MPI_Unpack(packed, SPAN, &pos, ones, count, t, MPI_COMM_SELF);
    for (int i = 0; i < SPAN; i++)
        if (zero[i] == ones[i])
            ref[i] = zero[i];
}

static void transfer(int s, int r, int ti, int count, int tag)
{
    MPI_Datatype t = types[ti];
    MPI_Request req = MPI_REQUEST_NULL;
    /* an immediate receive is posted before the barrier, so the ready modes may send */
    int post_first = r == R_IRECV || r == R_IRECV_C;
    if (rank == 1) {
        memset(dst, 0xee, SPAN);
        if (post_first) {
            int rc = do_recv(r, dst, count, t, tag, MPI_COMM_WORLD, &req);
            MTEST_CHECK(rc == MPI_SUCCESS, "%s: %d", recv_names[r], rc);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int rc = do_send(s, src, count, t, tag, MPI_COMM_WORLD, &req);
        MTEST_CHECK(rc == MPI_SUCCESS, "%s: %d", send_names[s], rc);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
        if (!post_first) {
            int rc = do_recv(r, dst, count, t, tag, MPI_COMM_WORLD, &req);
            MTEST_CHECK(rc == MPI_SUCCESS, "%s: %d", recv_names[r], rc);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        expect(t, count);
        for (int i = 0; i < SPAN; i++)
            if (!MTEST_CHECK(dst[i] == ref[i],
                             "%s -> %s, type %d, count %d: byte %d is %#x, not %#x", send_names[s],
                             recv_names[r], ti, count, i, dst[i], ref[i]))
                break;
    }
}

static void errors(void)
{
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Request req;
    for (int s = 0; s < S_COUNT; s++) {
        int rc = do_send(s, src, 1, types[0], -7, dup, &req);
        MTEST_CHECK_ERR(rc, MPI_ERR_TAG, send_names[s]);
        if (s >= S_ISEND) {
            rc = do_send(s, src, 1, types[0], 1, dup, NULL);
            MTEST_CHECK(rc != MPI_SUCCESS, "%s with no request: %d", send_names[s], rc);
        }
    }
    for (int r = 0; r < R_COUNT; r++) {
        int rc = do_recv(r, dst, 1, types[1], -7, dup, &req);
        MTEST_CHECK_ERR(rc, MPI_ERR_TAG, recv_names[r]);
        if (r >= R_IRECV) {
            rc = do_recv(r, dst, 1, types[1], 1, dup, NULL);
            MTEST_CHECK(rc != MPI_SUCCESS, "%s with no request: %d", recv_names[r], rc);
        }
    }
    MPI_Comm_free(&dup);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* a column of 8 doubles (8-byte blocks 16 apart); particles of int, double and float
     * (one 8-byte and two 4-byte moves); three ints in a row (one run) */
    MPI_Type_vector(8, 1, 2, MPI_DOUBLE, &types[0]);
    int lens[3] = {1, 1, 1};
    MPI_Aint disps[3] = {offsetof(particle_t, id), offsetof(particle_t, x),
                         offsetof(particle_t, w)};
    MPI_Datatype comps[3] = {MPI_INT, MPI_DOUBLE, MPI_FLOAT}, fields;
    MPI_Type_create_struct(3, lens, disps, comps, &fields);
    MPI_Type_create_resized(fields, 0, sizeof(particle_t), &types[1]);
    MPI_Type_free(&fields);
    MPI_Type_contiguous(3, MPI_INT, &types[2]);
    for (int i = 0; i < NTYPES; i++)
        MPI_Type_commit(&types[i]);
    for (int i = 0; i < SPAN; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    int counts[3] = {0, 1, 3}, tag = 0;
    for (int s = 0; s < S_COUNT; s++)
        for (int ti = 0; ti < NTYPES; ti++)
            for (int k = 0; k < 3; k++)
                transfer(s, R_IRECV + (tag % 2), ti, counts[k], tag), tag++;
    /* blocking receives, posted after the send starts: every mode but the ready ones */
    for (int r = R_RECV; r <= R_RECV_C; r++)
        for (int s = S_SEND; s < S_COUNT; s++)
            if (s != S_RSEND && s != S_RSEND_C && s != S_IRSEND && s != S_IRSEND_C)
                for (int ti = 0; ti < NTYPES; ti++)
                    for (int k = 0; k < 3; k++)
                        transfer(s, r, ti, counts[k], tag), tag++;
    errors();
    for (int i = 0; i < NTYPES; i++)
        MPI_Type_free(&types[i]);
    return mtest_finalize(0);
}
