/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Alltoallv (blocking, non-blocking, persistent) with every count 0 and the same address
 * for sendbuf and recvbuf: nothing is exchanged, so the buffers do not alias (mpi4py passes
 * empty buffers that share one address). With data, the same address is still MPI_ERR_BUFFER.
 */
#include <stdlib.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int size, rc;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *counts = calloc((size_t)size, sizeof(int)), *displs = calloc((size_t)size, sizeof(int));
    int buf[4] = {0};
    MPI_Request req;
    rc = MPI_Alltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Alltoallv with no data: rc %d", rc);
    rc = MPI_Ialltoallv(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD,
                        &req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Ialltoallv with no data: rc %d", rc);
    if (rc == MPI_SUCCESS)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    rc = MPI_Alltoallv_init(buf, counts, displs, MPI_INT, buf, counts, displs, MPI_INT,
                            MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Alltoallv_init with no data: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        MPI_Start(&req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Request_free(&req);
    }
    for (int i = 0; i < size; i++)
        counts[i] = 1;
    int *big = calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; i++)
        displs[i] = i;
    rc = MPI_Alltoallv(big, counts, displs, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Alltoallv");
    free(big);
    free(counts);
    free(displs);
    return mtest_finalize(0);
}
