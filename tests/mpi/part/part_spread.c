/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned requests on a communicator that asserts mpi_assert_no_any_source and
 * mpi_assert_no_any_tag (so Manifold spreads its traffic over several VCIs): MTEST_NTHREADS
 * threads per side each own one request with its own tag and run start / mark / wait cycles at
 * the same time, the receiving threads polling MPI_Parrived on every partition before MPI_Wait.
 * A request of MPI_COMM_WORLD with the same tag runs alongside. Every partition's data is checked.
 */
#include "mtest.h"

#include <pthread.h>
#include <stdlib.h>

#define NPART 24
#define PER   40
#define NITER 6

static int nthreads = 4, rank;
static MPI_Comm spread;

static int value(int t, int it, int i)
{
    return t * 1000003 + it * 7919 + i;
}

static void *worker(void *arg)
{
    int t = (int)(size_t)arg;
    MPI_Comm comm = t == 0 ? MPI_COMM_WORLD : spread;
    int *buf = mtest_calloc(NPART * PER, sizeof(int));
    MPI_Request req;
    if (rank == 0)
        MPI_Psend_init(buf, NPART, PER, MPI_INT, 1, t, comm, MPI_INFO_NULL, &req);
    else /* the receiver uses fewer, larger partitions */
        MPI_Precv_init(buf, NPART / 3, 3 * PER, MPI_INT, 0, t, comm, MPI_INFO_NULL, &req);
    for (int it = 0; it < NITER; it++) {
        MPI_Start(&req);
        if (rank == 0) {
            for (int p = NPART - 1; p >= 0; p--) {
                for (int i = p * PER; i < (p + 1) * PER; i++)
                    buf[i] = value(t, it, i);
                MTEST_CHECK(MPI_Pready(p, req) == MPI_SUCCESS, "thread %d: MPI_Pready failed", t);
            }
        } else {
            for (int p = 0; p < NPART / 3; p++) {
                int flag = 0;
                while (!flag)
                    MPI_Parrived(req, p, &flag);
                for (int i = p * 3 * PER; i < (p + 1) * 3 * PER; i++)
                    if (!MTEST_CHECK(buf[i] == value(t, it, i),
                                     "thread %d iter %d item %d is %d, expected %d", t, it, i,
                                     buf[i], value(t, it, i)))
                        break;
            }
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&req);
    free(buf);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = mtest_init_thread(&argc, &argv, MPI_THREAD_MULTIPLE);
    const char *env = getenv("MTEST_NTHREADS");
    if (env != NULL && atoi(env) > 0)
        nthreads = atoi(env);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_assert_no_any_source", "true");
    MPI_Info_set(info, "mpi_assert_no_any_tag", "true");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &spread);
    MPI_Info_free(&info);
    if (provided == MPI_THREAD_MULTIPLE && rank < 2) {
        pthread_t *th = mtest_calloc((size_t)nthreads + 1, sizeof(pthread_t));
        for (int t = 0; t <= nthreads; t++)
            pthread_create(&th[t], NULL, worker, (void *)(size_t)t);
        for (int t = 0; t <= nthreads; t++)
            pthread_join(th[t], NULL);
        free(th);
    }
    MPI_Comm_free(&spread);
    return mtest_finalize(0);
}
