/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every collective with zero counts and NULL buffers (what bindings such as mpi4py pass for
 * empty messages): blocking and non-blocking forms succeed and touch nothing. A NULL user
 * buffer once read as an allocation failure (MPI_ERR_NO_MEM from MPI_Allgather, MPI_Alltoall
 * and MPI_Allgatherv).
 */
#include "mtest.h"

#include <stdlib.h>

#define CHECK_OK(call) MTEST_CHECK((call) == MPI_SUCCESS, "%s failed with zero counts", #call)

int main(int argc, char **argv)
{
    int size;
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comm = MPI_COMM_WORLD;
    int *zero = mtest_calloc((size_t)size, sizeof(int));
    MPI_Datatype *types = mtest_calloc((size_t)size, sizeof(MPI_Datatype));
    for (int i = 0; i < size; i++)
        types[i] = MPI_INT;

    CHECK_OK(MPI_Bcast(NULL, 0, MPI_INT, 0, comm));
    CHECK_OK(MPI_Gather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, comm));
    CHECK_OK(MPI_Scatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, comm));
    CHECK_OK(MPI_Allgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, comm));
    CHECK_OK(MPI_Alltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, comm));
    CHECK_OK(MPI_Gatherv(NULL, 0, MPI_INT, NULL, zero, zero, MPI_INT, 0, comm));
    CHECK_OK(MPI_Scatterv(NULL, zero, zero, MPI_INT, NULL, 0, MPI_INT, 0, comm));
    CHECK_OK(MPI_Allgatherv(NULL, 0, MPI_INT, NULL, zero, zero, MPI_INT, comm));
    CHECK_OK(MPI_Alltoallv(NULL, zero, zero, MPI_INT, NULL, zero, zero, MPI_INT, comm));
    CHECK_OK(MPI_Alltoallw(NULL, zero, zero, types, NULL, zero, zero, types, comm));
    CHECK_OK(MPI_Reduce(NULL, NULL, 0, MPI_INT, MPI_SUM, 0, comm));
    CHECK_OK(MPI_Allreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, comm));
    CHECK_OK(MPI_Reduce_scatter(NULL, NULL, zero, MPI_INT, MPI_SUM, comm));
    CHECK_OK(MPI_Reduce_scatter_block(NULL, NULL, 0, MPI_INT, MPI_SUM, comm));
    CHECK_OK(MPI_Scan(NULL, NULL, 0, MPI_INT, MPI_SUM, comm));
    CHECK_OK(MPI_Exscan(NULL, NULL, 0, MPI_INT, MPI_SUM, comm));

    MPI_Request reqs[8];
    CHECK_OK(MPI_Iallgather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, comm, &reqs[0]));
    CHECK_OK(MPI_Ialltoall(NULL, 0, MPI_INT, NULL, 0, MPI_INT, comm, &reqs[1]));
    CHECK_OK(MPI_Iallgatherv(NULL, 0, MPI_INT, NULL, zero, zero, MPI_INT, comm, &reqs[2]));
    CHECK_OK(MPI_Ialltoallv(NULL, zero, zero, MPI_INT, NULL, zero, zero, MPI_INT, comm, &reqs[3]));
    CHECK_OK(MPI_Igather(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, comm, &reqs[4]));
    CHECK_OK(MPI_Iscatter(NULL, 0, MPI_INT, NULL, 0, MPI_INT, 0, comm, &reqs[5]));
    CHECK_OK(MPI_Iallreduce(NULL, NULL, 0, MPI_INT, MPI_SUM, comm, &reqs[6]));
    CHECK_OK(MPI_Ibcast(NULL, 0, MPI_INT, 0, comm, &reqs[7]));
    CHECK_OK(MPI_Waitall(8, reqs, MPI_STATUSES_IGNORE));

    free(zero);
    free(types);
    return mtest_finalize(mtest_error_count());
}
