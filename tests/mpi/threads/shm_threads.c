/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Node-aware collectives from several threads at once: each thread owns a duplicate of
 * MPI_COMM_WORLD and runs barriers, broadcasts (every root, small and larger than a
 * shared-memory slot) and allreduces on it, so segments of different communicators are set up
 * and used concurrently. The testlist runs it with one node and with nodes of 2 ranks.
 */
#include "mt_common.h"

#define ROUNDS 40

typedef struct targ {
    int id;
    MPI_Comm comm;
} targ_t;

static int g_rank, g_size;

static void *worker(void *arg)
{
    targ_t *t = arg;
    int counts[] = {1, 33, 70000};
    uint32_t *buf = mtest_calloc(70000, sizeof(uint32_t));
    uint32_t *sum = mtest_calloc(70000, sizeof(uint32_t));
    for (int round = 0; round < ROUNDS; round++) {
        int count = counts[(round + t->id) % 3], root = (round + t->id) % g_size;
        if (g_rank == root)
            mt_fill(buf, count, root, t->id, round);
        else
            memset(buf, 0, (size_t)count * sizeof(uint32_t));
        MPI_Bcast(buf, count, MPI_UINT32_T, root, t->comm);
        int bad = mt_verify(buf, count, root, t->id, round);
        MTEST_CHECK(bad < 0, "thread %d round %d: bcast element %d wrong", t->id, round, bad);
        for (int i = 0; i < count; i++)
            buf[i] = (uint32_t)(g_rank + i + t->id);
        MPI_Allreduce(buf, sum, count, MPI_UINT32_T, MPI_SUM, t->comm);
        for (int i = 0; i < count; i++) {
            uint32_t want = (uint32_t)(g_size * (g_size - 1) / 2 + g_size * (i + t->id));
            if (!MTEST_CHECK(sum[i] == want, "thread %d round %d: allreduce element %d is %u",
                             t->id, round, i, sum[i]))
                break;
        }
        if (round % 5 == 0)
            MPI_Barrier(t->comm);
    }
    free(buf);
    free(sum);
    return NULL;
}

int main(int argc, char **argv)
{
    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &g_size);
    int n = mt_nthreads(3, 1);
    targ_t args[MT_MAX_THREADS];
    for (int i = 0; i < n; i++) {
        args[i].id = i;
        MPI_Comm_dup(MPI_COMM_WORLD, &args[i].comm);
    }
    mt_run(n, worker, args, sizeof(targ_t));
    for (int i = 0; i < n; i++)
        MPI_Comm_free(&args[i].comm);
    return mtest_finalize(0);
}
