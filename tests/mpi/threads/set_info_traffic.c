/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_set_info giving a communicator mpi_assert_no_any_source/_tag while another thread
 * of every process sends and receives on it. Manifold may then spread the communicator's
 * traffic over its VCIs; a message sent on the old path must still meet its receive, whichever
 * side of the switch each lands on. It used to be lost when the traffic began while the
 * members agreed (the switch went by a snapshot of the messages in flight taken before the
 * agreement): the receive waited forever. Each round pairs even ranks with the next odd one
 * and varies the traffic (blocking, nonblocking, probe then receive, persistent) and where it
 * falls against the call, by random delays in both threads.
 */
#define _POSIX_C_SOURCE 200809L

#include "mt_common.h"

#define ROUNDS 48
#define MSGS   12

struct traffic {
    MPI_Comm comm;
    int rank, size, round;
    unsigned seed;
};

/* A delay of up to about `max_us` microseconds, spinning (sleeping would hide the race). */
static void spin_delay(unsigned *seed, int max_us)
{
    double until = MPI_Wtime() + (double)(rand_r(seed) % (max_us + 1)) * 1e-6;
    while (MPI_Wtime() < until)
        ;
}

static int payload(int round, int from, int i)
{
    return round * 100000 + from * 1000 + i;
}

/* Even rank r sends MSGS messages to r + 1, which answers each one; the way of sending and
 * receiving depends on the round. */
static void *traffic_main(void *arg)
{
    struct traffic *t = arg;
    int peer = t->rank % 2 == 0 ? t->rank + 1 : t->rank - 1;
    if (peer >= t->size)
        return NULL;
    int sends_first = t->rank % 2 == 0, mode = t->round % 4;
    spin_delay(&t->seed, 300);
    for (int i = 0; i < MSGS; i++) {
        int out = payload(t->round, t->rank, i), in = -1, tag = i % 5, rc = MPI_SUCCESS;
        MPI_Status st;
        for (int leg = 0; leg < 2; leg++) {
            int sending = (leg == 0) == sends_first;
            if (mode == 0 && sending) {
                rc = MPI_Send(&out, 1, MPI_INT, peer, tag, t->comm);
            } else if (mode == 0) {
                rc = MPI_Recv(&in, 1, MPI_INT, peer, tag, t->comm, &st);
            } else if (mode == 1) {
                MPI_Request req;
                rc = sending ? MPI_Isend(&out, 1, MPI_INT, peer, tag, t->comm, &req)
                             : MPI_Irecv(&in, 1, MPI_INT, peer, tag, t->comm, &req);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&req, sending ? MPI_STATUS_IGNORE : &st);
            } else if (mode == 2 && sending) {
                rc = MPI_Ssend(&out, 1, MPI_INT, peer, tag, t->comm);
            } else if (mode == 2) {
                rc = MPI_Probe(peer, tag, t->comm, &st);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Recv(&in, 1, MPI_INT, peer, tag, t->comm, &st);
            } else {
                MPI_Request req;
                rc = sending ? MPI_Send_init(&out, 1, MPI_INT, peer, tag, t->comm, &req)
                             : MPI_Recv_init(&in, 1, MPI_INT, peer, tag, t->comm, &req);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Start(&req);
                if (rc == MPI_SUCCESS)
                    rc = MPI_Wait(&req, sending ? MPI_STATUS_IGNORE : &st);
                MPI_Request_free(&req);
            }
            MTEST_CHECK(rc == MPI_SUCCESS, "round %d message %d: %s failed (%d)", t->round, i,
                        sending ? "send" : "receive", rc);
        }
        MTEST_CHECK(in == payload(t->round, peer, i) && st.MPI_SOURCE == peer && st.MPI_TAG == tag,
                    "round %d message %d: got %d from %d tag %d, expected %d from %d tag %d",
                    t->round, i, in, st.MPI_SOURCE, st.MPI_TAG, payload(t->round, peer, i), peer,
                    tag);
        spin_delay(&t->seed, 20);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const char *const keys[] = {"mpi_assert_no_any_source", "mpi_assert_no_any_tag"};
    unsigned seed = 12345u + (unsigned)rank * 7919u;
    for (int round = 0; round < ROUNDS; round++) {
        struct traffic t = {MPI_COMM_NULL, rank, size, round, seed + (unsigned)round};
        MPI_Comm_dup(MPI_COMM_WORLD, &t.comm);
        MPI_Info info;
        MPI_Info_create(&info);
        /* source, tag or both asserted: each spreads by its own key */
        for (int k = 0; k < 2; k++)
            if (round % 3 != k)
                MPI_Info_set(info, keys[k], "true");
        pthread_t thread;
        pthread_create(&thread, NULL, traffic_main, &t);
        spin_delay(&seed, 300);
        int rc = MPI_Comm_set_info(t.comm, info);
        MTEST_CHECK(rc == MPI_SUCCESS, "round %d: MPI_Comm_set_info failed (%d)", round, rc);
        pthread_join(thread, NULL);
        MPI_Info_free(&info);
        MPI_Comm_free(&t.comm);
    }
    return mtest_finalize(0);
}
