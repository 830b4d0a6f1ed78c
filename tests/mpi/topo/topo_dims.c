/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Dims_create: balanced factorisations in non-increasing order, non-zero entries kept,
 * zero dimensions, and MPI_ERR_DIMS when nnodes is not a multiple of the given extents.
 */
#include "mtest.h"

#include <string.h>

static void expect(int nnodes, int ndims, const int *in, const int *want)
{
    int dims[16];
    if (ndims > 0)
        memcpy(dims, in, sizeof(int) * (size_t)ndims);
    int rc = MPI_Dims_create(nnodes, ndims, dims);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Dims_create(%d, %d) failed", nnodes, ndims);
    for (int i = 0; i < ndims; i++)
        MTEST_CHECK(dims[i] == want[i], "MPI_Dims_create(%d, %d): dims[%d]=%d, expected %d", nnodes,
                    ndims, i, dims[i], want[i]);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    expect(6, 2, (int[]){0, 0}, (int[]){3, 2});
    expect(7, 2, (int[]){0, 0}, (int[]){7, 1});
    expect(12, 2, (int[]){0, 0}, (int[]){4, 3});
    expect(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    expect(72, 2, (int[]){0, 0}, (int[]){9, 8});
    expect(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    expect(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    expect(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    expect(12, 2, (int[]){2, 6}, (int[]){2, 6});
    expect(64, 3, (int[]){0, 0, 0}, (int[]){4, 4, 4});
    /* more dimensions than prime factors: of the choices with the same spread, the balanced */
    expect(68, 4, (int[]){0, 0, 0, 0}, (int[]){17, 2, 2, 1});
    expect(88, 5, (int[]){0, 0, 0, 0, 0}, (int[]){11, 2, 2, 2, 1});
    expect(1000, 10, (int[]){0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, (int[]){5, 5, 5, 2, 2, 2, 1, 1, 1, 1});
    if (mtest_is_manifold()) /* a large prime: MPICH 5.0.2 divides by zero */
        expect(2147483647, 2, (int[]){0, 0}, (int[]){2147483647, 1});
    if (mtest_is_manifold())
        expect(1, 0, NULL, NULL); /* MPICH 5.0.2 divides by zero here */

    /* MPICH 5.0.2 divides by zero on some invalid input: the errors are checked on Manifold */
    if (!mtest_is_manifold())
        return mtest_finalize(mtest_error_count());
    int dims[3] = {0, 5, 0};
    int rc = MPI_Dims_create(12, 3, dims);
    MTEST_CHECK_ERR(rc, MPI_ERR_DIMS, "MPI_Dims_create");
    int dims2[2] = {2, 3};
    rc = MPI_Dims_create(12, 2, dims2);
    MTEST_CHECK_ERR(rc, MPI_ERR_DIMS, "MPI_Dims_create");
    rc = MPI_Dims_create(12, -1, dims2);
    MTEST_CHECK_ERR(rc, MPI_ERR_DIMS, "MPI_Dims_create");
    int dims3[2] = {-2, 0};
    rc = MPI_Dims_create(12, 2, dims3);
    MTEST_CHECK(rc != MPI_SUCCESS, "MPI_Dims_create accepted a negative extent");
    return mtest_finalize(mtest_error_count());
}
