/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point on one intercommunicator (the halves of MPI_COMM_WORLD) from several threads
 * per process at once: thread t of every process exchanges messages with every remote process
 * on tags of its own, half of them received with MPI_ANY_SOURCE, and checks contents and
 * MPI_SOURCE.
 */
#include "mt_common.h"

#define ROUNDS 20

typedef struct {
    int id;
    MPI_Comm inter;
    int rank, rsize, low;
} targ_t;

static void *worker(void *p)
{
    targ_t *a = p;
    int *in = calloc((size_t)a->rsize, sizeof(int)), *out = calloc((size_t)a->rsize, sizeof(int));
    MPI_Request *reqs = calloc((size_t)a->rsize * 2, sizeof(MPI_Request));
    for (int round = 0; round < ROUNDS; round++) {
        int any = round % 2,
            tag = a->id * ROUNDS + round; /* a fast peer's next round must not match */
        for (int r = 0; r < a->rsize; r++)
            MPI_Irecv(&in[r], 1, MPI_INT, any ? MPI_ANY_SOURCE : r, tag, a->inter, &reqs[r]);
        for (int r = 0; r < a->rsize; r++) {
            out[r] = (int)(mt_pattern(a->rank + 100 * a->low, a->id, round, r) & 0xffffff);
            MPI_Isend(&out[r], 1, MPI_INT, r, tag, a->inter, &reqs[a->rsize + r]);
        }
        for (int r = 0; r < a->rsize; r++) {
            MPI_Status st;
            MPI_Wait(&reqs[r], &st);
            int src = st.MPI_SOURCE;
            MTEST_CHECK(src >= 0 && src < a->rsize && (any || src == r), "thread %d: source %d",
                        a->id, src);
            if (src >= 0 && src < a->rsize)
                MTEST_CHECK(in[r] == (int)(mt_pattern(src + 100 * !a->low, a->id, round, a->rank) &
                                           0xffffff),
                            "thread %d round %d: wrong value from %d", a->id, round, src);
        }
        MPI_Waitall(a->rsize, reqs + a->rsize, MPI_STATUSES_IGNORE);
    }
    free(in);
    free(out);
    free(reqs);
    return NULL;
}

int main(int argc, char **argv)
{
    if (mt_init(&argc, &argv) != 0)
        return mtest_finalize(0);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    int half = (wsize + 1) / 2, low = wrank < half;
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, low ? half : 0, 21, &inter);
    int n = mt_nthreads(4, 1);
    targ_t args[MT_MAX_THREADS];
    for (int t = 0; t < n; t++) {
        args[t].id = t;
        args[t].inter = inter;
        args[t].low = low;
        MPI_Comm_rank(inter, &args[t].rank);
        MPI_Comm_remote_size(inter, &args[t].rsize);
    }
    mt_run(n, worker, args, sizeof(targ_t));
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mtest_finalize(0);
}
