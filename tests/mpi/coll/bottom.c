/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_BOTTOM as the buffer of collectives, with absolute addresses: MPI_Alltoallw whose byte
 * displacements are the addresses of per-rank blocks (predefined MPI_INT), MPI_Allgather with
 * a resized hindexed type holding absolute addresses on both sides. These were refused as "NULL
 * buffer" (and then as aliased buffers) before; the neighbourhood forms share the check. A NULL
 * buffer with a predefined type and data is still MPI_ERR_BUFFER.
 */
#include "mtest.h"

#include <stdlib.h>

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* Alltoallw: block i of each side lives in its own allocation, reached by address */
    int **out = mtest_calloc((size_t)size, sizeof(int *)),
        **in = mtest_calloc((size_t)size, sizeof(int *));
    int *one = mtest_calloc((size_t)size, sizeof(int));
    MPI_Aint *sd = mtest_calloc((size_t)size, sizeof(MPI_Aint)),
             *rd = mtest_calloc((size_t)size, sizeof(MPI_Aint));
    MPI_Datatype *types = mtest_calloc((size_t)size, sizeof(MPI_Datatype));
    int *sdi = mtest_calloc((size_t)size, sizeof(int)),
        *rdi = mtest_calloc((size_t)size, sizeof(int));
    for (int i = 0; i < size; i++) {
        out[i] = mtest_calloc(2, sizeof(int));
        in[i] = mtest_calloc(2, sizeof(int));
        out[i][0] = rank * 100 + i;
        in[i][0] = -1;
        MPI_Get_address(out[i], &sd[i]);
        MPI_Get_address(in[i], &rd[i]);
        sdi[i] = (int)sd[i];
        rdi[i] = (int)rd[i];
        one[i] = 1;
        types[i] = MPI_INT;
    }
    /* the int displacements of MPI_Alltoallw cannot hold 64-bit addresses: the _c form can */
    MPI_Count *cone = mtest_calloc((size_t)size, sizeof(MPI_Count));
    for (int i = 0; i < size; i++)
        cone[i] = 1;
    int rc =
        MPI_Alltoallw_c(MPI_BOTTOM, cone, sd, types, MPI_BOTTOM, cone, rd, types, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Alltoallw_c on MPI_BOTTOM failed (%d)", rc);
    for (int i = 0; i < size; i++)
        MTEST_CHECK(in[i][0] == i * 100 + rank, "Alltoallw block %d is %d, want %d", i, in[i][0],
                    i * 100 + rank);

    /* Allgather with a struct of one absolute address on each side */
    int mine = rank + 7, *all = mtest_calloc((size_t)size, sizeof(int));
    MPI_Aint a;
    int blen = 1;
    MPI_Datatype stype, rtype, rowtype;
    MPI_Get_address(&mine, &a);
    MPI_Type_create_struct(1, &blen, &a, (MPI_Datatype[]){MPI_INT}, &stype);
    MPI_Type_commit(&stype);
    MPI_Type_contiguous(size, MPI_INT, &rowtype);
    MPI_Get_address(all, &a);
    MPI_Type_create_struct(1, &blen, &a, &rowtype, &rtype);
    MPI_Type_commit(&rtype);
    /* the receive side: one struct holding all blocks is not `recvcount` per rank, so receive
     * with MPI_Allgather's required layout through a resized int at the absolute base */
    MPI_Datatype rint;
    MPI_Type_create_hindexed(1, &blen, &a, MPI_INT, &rint);
    MPI_Datatype rint_resized;
    MPI_Type_create_resized(rint, 0, sizeof(int), &rint_resized);
    MPI_Type_commit(&rint_resized);
    rc = MPI_Allgather(MPI_BOTTOM, 1, stype, MPI_BOTTOM, 1, rint_resized, MPI_COMM_WORLD);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Allgather on MPI_BOTTOM failed: %s", msg);
    for (int i = 0; i < size; i++)
        MTEST_CHECK(all[i] == i + 7, "Allgather block %d is %d, want %d", i, all[i], i + 7);

    /* a NULL buffer with a predefined type and data stays an error */
    MTEST_CHECK_ERR(MPI_Allgather(NULL, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER, "MPI_Allgather");

    MPI_Type_free(&stype);
    MPI_Type_free(&rtype);
    MPI_Type_free(&rowtype);
    MPI_Type_free(&rint);
    MPI_Type_free(&rint_resized);
    for (int i = 0; i < size; i++) {
        free(out[i]);
        free(in[i]);
    }
    free(out);
    free(in);
    free(one);
    free(sd);
    free(rd);
    free(types);
    free(sdi);
    free(rdi);
    free(cone);
    free(all);
    return mtest_finalize(mtest_error_count());
}
