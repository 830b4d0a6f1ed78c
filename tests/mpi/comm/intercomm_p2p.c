/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point on an intercommunicator between the halves of MPI_COMM_WORLD: ranks name the
 * remote group and MPI_SOURCE is a remote rank, for blocking, non-blocking, synchronous,
 * buffered, persistent, probe/iprobe, mprobe/mrecv and sendrecv, with MPI_ANY_SOURCE and
 * MPI_PROC_NULL. Every process sends to every remote process and receives from each.
 */
#include <stdlib.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int half = (wsize + 1) / 2, low = wrank < half;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 3, &inter);
    int rank, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    /* The value each process sends to remote rank r: identifies sender, receiver and form. */
#define VAL(form, from_low, from, to) ((form)*10000 + (from_low)*1000 + (from)*100 + (to))

    /* 1: Isend to everyone, blocking Recv from each remote rank in order. */
    MPI_Request *reqs = calloc((size_t)rsize * 2, sizeof(MPI_Request));
    int *out = calloc((size_t)rsize, sizeof(int)), *in = calloc((size_t)rsize, sizeof(int));
    for (int r = 0; r < rsize; r++) {
        out[r] = VAL(1, low, rank, r);
        MPI_Isend(&out[r], 1, MPI_INT, r, 1, inter, &reqs[r]);
    }
    for (int r = 0; r < rsize; r++) {
        MPI_Status st;
        MPI_Recv(&in[r], 1, MPI_INT, r, 1, inter, &st);
        MTEST_CHECK(in[r] == VAL(1, !low, r, rank) && st.MPI_SOURCE == r, "recv from %d: %d src %d",
                    r, in[r], st.MPI_SOURCE);
    }
    MPI_Waitall(rsize, reqs, MPI_STATUSES_IGNORE);

    /* 2: Ssend vs Irecv(ANY_SOURCE): the status names the remote sender. */
    int seen = 0;
    for (int r = 0; r < rsize; r++)
        MPI_Irecv(&in[r], 1, MPI_INT, MPI_ANY_SOURCE, 2, inter, &reqs[r]);
    for (int r = 0; r < rsize; r++) {
        out[r] = VAL(2, low, rank, r);
        MPI_Issend(&out[r], 1, MPI_INT, r, 2, inter, &reqs[rsize + r]);
    }
    for (int r = 0; r < rsize; r++) {
        MPI_Status st;
        MPI_Wait(&reqs[r], &st);
        int src = st.MPI_SOURCE;
        MTEST_CHECK(src >= 0 && src < rsize && in[r] == VAL(2, !low, src, rank),
                    "any_source: %d from %d", in[r], src);
        if (src >= 0 && src < rsize)
            seen |= 1 << src;
    }
    MTEST_CHECK(seen == (1 << rsize) - 1, "any_source saw %x", seen);
    MPI_Waitall(rsize, reqs + rsize, MPI_STATUSES_IGNORE);

    /* 3: persistent requests, started twice. */
    for (int r = 0; r < rsize; r++) {
        MPI_Send_init(&out[r], 1, MPI_INT, r, 3, inter, &reqs[r]);
        MPI_Recv_init(&in[r], 1, MPI_INT, r, 3, inter, &reqs[rsize + r]);
    }
    for (int it = 0; it < 2; it++) {
        for (int r = 0; r < rsize; r++)
            out[r] = VAL(3, low, rank, r) + it;
        MPI_Startall(2 * rsize, reqs);
        MPI_Waitall(2 * rsize, reqs, MPI_STATUSES_IGNORE);
        for (int r = 0; r < rsize; r++)
            MTEST_CHECK(in[r] == VAL(3, !low, r, rank) + it, "persistent %d: %d", r, in[r]);
    }
    for (int r = 0; r < 2 * rsize; r++)
        MPI_Request_free(&reqs[r]);

    /* 4: buffered sends; probe then recv; mprobe then mrecv. */
    int bufsize = rsize * (int)(sizeof(int) + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bufsize);
    MPI_Buffer_attach(bbuf, bufsize);
    for (int r = 0; r < rsize; r++) {
        out[r] = VAL(4, low, rank, r);
        MPI_Bsend(&out[r], 1, MPI_INT, r, 4, inter);
    }
    for (int r = 0; r < rsize; r++) {
        MPI_Status st;
        int count = -1, flag = 0;
        if (r % 2 == 0) {
            MPI_Probe(MPI_ANY_SOURCE, 4, inter, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            MTEST_CHECK(count == 1 && st.MPI_SOURCE < rsize, "probe: count %d src %d", count,
                        st.MPI_SOURCE);
            MPI_Recv(&in[0], 1, MPI_INT, st.MPI_SOURCE, 4, inter, MPI_STATUS_IGNORE);
        } else {
            MPI_Message msg;
            while (!flag)
                MPI_Improbe(MPI_ANY_SOURCE, 4, inter, &flag, &msg, &st);
            MPI_Mrecv(&in[0], 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
        }
        MTEST_CHECK(in[0] == VAL(4, !low, st.MPI_SOURCE, rank), "probe/mprobe: %d from %d", in[0],
                    st.MPI_SOURCE);
    }
    MPI_Buffer_detach(&bbuf, &bufsize);
    free(bbuf);

    /* 5: sendrecv with the remote rank of the same index (wrapping), and MPI_PROC_NULL. */
    int peer = rank % rsize, got = -1;
    MPI_Status st;
    int mine = VAL(5, low, rank, 0);
    /* Local rank i sends to remote rank i % rsize, so this process hears from every remote
     * rank q with q % lsize == rank, in any order. */
    int lsize;
    MPI_Comm_size(inter, &lsize);
    int expected = 0;
    for (int q = 0; q < rsize; q++)
        expected += q % lsize == rank;
    MPI_Request sreq;
    MPI_Isend(&mine, 1, MPI_INT, peer, 5, inter, &sreq);
    for (int k = 0; k < expected; k++) {
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 5, inter, &st);
        MTEST_CHECK(got == VAL(5, !low, st.MPI_SOURCE, 0), "pairing: %d", got);
    }
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);
    got = -1;
    MPI_Sendrecv(&mine, 1, MPI_INT, MPI_PROC_NULL, 6, &got, 1, MPI_INT, MPI_PROC_NULL, 6, inter,
                 &st);
    MTEST_CHECK(got == -1 && st.MPI_SOURCE == MPI_PROC_NULL, "proc_null sendrecv");
    /* Local rank i and remote rank i swap values when both exist. */
    int partner = rank < rsize ? rank : MPI_PROC_NULL;
    got = -1;
    MPI_Sendrecv(&mine, 1, MPI_INT, partner, 7, &got, 1, MPI_INT, partner, 7, inter, &st);
    if (partner != MPI_PROC_NULL)
        MTEST_CHECK(got == VAL(5, !low, rank, 0) && st.MPI_SOURCE == rank, "sendrecv: %d from %d",
                    got, st.MPI_SOURCE);

    free(reqs);
    free(out);
    free(in);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mtest_finalize(0);
}
