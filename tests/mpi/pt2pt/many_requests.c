/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Many requests outstanding at once: rank 0 posts 40000 receives before rank 1 sends them
 * (tags cycling through 100), so the library's request caches grow to hundreds of chunks, then
 * every message must arrive in order of posting within its tag, and MPI_Finalize must release
 * all of it. With UCX's malloc hooks on (the default outside the sanitizer runs), chunks from
 * aligned_alloc made MPI_Finalize abort past about 25000 requests.
 */
#include "mtest.h"

#include <stdlib.h>

#define N    40000
#define TAGS 100

int main(int argc, char **argv)
{
    int rank, size;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Request *reqs = mtest_calloc(N, sizeof(MPI_Request));
    int *vals = mtest_calloc(N, sizeof(int));
    if (size >= 2 && rank == 0) {
        for (int i = 0; i < N; i++)
            MPI_Irecv(&vals[i], 1, MPI_INT, 1, i % TAGS, MPI_COMM_WORLD, &reqs[i]);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < N; i++)
            if (vals[i] != i) {
                MTEST_CHECK(0, "receive %d got %d", i, vals[i]);
                break;
            }
    } else if (size >= 2 && rank == 1) {
        MPI_Barrier(MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            MPI_Send(&i, 1, MPI_INT, 0, i % TAGS, MPI_COMM_WORLD);
    } else {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(vals);
    free(reqs);
    return mtest_finalize(0);
}
