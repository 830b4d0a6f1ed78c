/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_BOTTOM as the buffer of collectives, with absolute addresses: MPI_Alltoallw whose byte
 * displacements are the addresses of per-rank blocks (predefined MPI_INT), MPI_Allgather with
 * a resized hindexed type holding absolute addresses on both sides. These were refused as "NULL
 * buffer" (and then as aliased buffers) before; the neighbourhood forms share the check.
 * Reductions (MPI_Allreduce in place with a user operation, MPI_Reduce) into MPI_BOTTOM with a
 * hindexed type of absolute addresses, and MPI_Allgatherv_c with MPI_BYTE blocks at absolute
 * byte displacements, were refused the same way. A NULL buffer with a predefined type and data,
 * or with a derived type of relative displacements, is still MPI_ERR_BUFFER (collectives and
 * point-to-point).
 */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>

/* The sum of pairs of ints lying at abs_origin relative to the pointers (a type of absolute
 * addresses reaches the operation as such). */
static MPI_Aint abs_origin;

static void abs_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = (const int *)((uintptr_t)in + (uintptr_t)abs_origin);
    int *b = (int *)((uintptr_t)inout + (uintptr_t)abs_origin);
    for (int i = 0; i < 2 * *len; i++)
        b[i] += a[i];
}

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

    /* Reductions into MPI_BOTTOM through a type of absolute addresses, with a user operation
     * (which sees the items at their addresses relative to the pointers it gets) and with
     * MPI_SUM, in place and not */
    int acc[2] = {rank + 1, rank + 1}, contrib[2] = {rank + 1, rank + 1};
    MPI_Aint acc_addr;
    int two = 2;
    MPI_Get_address(acc, &acc_addr);
    MPI_Datatype abs_pair;
    MPI_Type_create_hindexed(1, &two, &acc_addr, MPI_INT, &abs_pair);
    MPI_Type_commit(&abs_pair);
    MPI_Op user_sum;
    MPI_Op_create(abs_sum, 1, &user_sum);
    int tri = size * (size + 1) / 2;
    abs_origin = acc_addr;
    rc = MPI_Allreduce(MPI_IN_PLACE, MPI_BOTTOM, 1, abs_pair, user_sum, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS && acc[0] == tri && acc[1] == tri,
                "Allreduce in place at MPI_BOTTOM, user op: rc %d, %d %d, want %d", rc, acc[0],
                acc[1], tri);
    MPI_Request req;
    rc = MPI_Iallreduce(contrib, MPI_BOTTOM, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Iallreduce"); /* predefined type: no addresses */
    acc[0] = acc[1] = rank + 1; /* both buffers are at MPI_BOTTOM: the root's in place */
    rc = MPI_Reduce(rank == 0 ? MPI_IN_PLACE : MPI_BOTTOM, MPI_BOTTOM, 1, abs_pair, MPI_SUM, 0,
                    MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS && (rank != 0 || (acc[0] == tri && acc[1] == tri)),
                "Reduce into MPI_BOTTOM: rc %d, %d %d, want %d", rc, acc[0], acc[1], tri);
    MPI_Op_free(&user_sum);
    MPI_Type_free(&abs_pair);

    /* the v forms with a predefined type: displacements in bytes of MPI_BYTE are absolute
     * addresses, which only the _c forms can hold */
    int *gathered = mtest_calloc((size_t)size, sizeof(int));
    MPI_Count *bytes4 = mtest_calloc((size_t)size, sizeof(MPI_Count));
    MPI_Aint *where = mtest_calloc((size_t)size, sizeof(MPI_Aint));
    for (int i = 0; i < size; i++) {
        bytes4[i] = sizeof(int);
        gathered[i] = -1;
        MPI_Get_address(&gathered[i], &where[i]);
    }
    rc = MPI_Allgatherv_c(&mine, sizeof(int), MPI_BYTE, MPI_BOTTOM, bytes4, where, MPI_BYTE,
                          MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Allgatherv_c into MPI_BOTTOM failed (%d)", rc);
    for (int i = 0; i < size; i++)
        MTEST_CHECK(gathered[i] == i + 7, "Allgatherv_c block %d is %d", i, gathered[i]);
    free(gathered);
    free(bytes4);
    free(where);

    /* a NULL buffer with a predefined type and data stays an error */
    MTEST_CHECK_ERR(MPI_Allgather(NULL, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER, "MPI_Allgather");
    /* and so does one with a derived type of relative displacements: not MPI_BOTTOM (it used
     * to read and write near address 0) */
    MPI_Datatype rel;
    MPI_Type_contiguous(2, MPI_INT, &rel);
    MPI_Type_commit(&rel);
    MTEST_CHECK_ERR(MPI_Allreduce(contrib, NULL, 1, rel, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                    "MPI_Allreduce");
    MTEST_CHECK_ERR(MPI_Bcast(NULL, 1, rel, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Bcast");
    MTEST_CHECK_ERR(MPI_Send(NULL, 1, rel, rank, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER, "MPI_Send");
    MPI_Request rreq;
    MTEST_CHECK_ERR(MPI_Irecv(NULL, 1, rel, rank, 0, MPI_COMM_WORLD, &rreq), MPI_ERR_BUFFER,
                    "MPI_Irecv");
    /* the per-peer layouts too (every rank sees its own NULL receive buffer) */
    MTEST_CHECK_ERR(MPI_Allgather(contrib, 2, MPI_INT, NULL, 1, rel, MPI_COMM_WORLD),
                    MPI_ERR_BUFFER, "MPI_Allgather");
    MTEST_CHECK_ERR(MPI_Alltoall(contrib, 2, MPI_INT, NULL, 1, rel, MPI_COMM_WORLD), MPI_ERR_BUFFER,
                    "MPI_Alltoall");
    /* and a matched receive */
    MPI_Message matched;
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Send(contrib, 2, MPI_INT, 0, 8, MPI_COMM_SELF);
    MPI_Mprobe(0, 8, MPI_COMM_SELF, &matched, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(MPI_Mrecv(NULL, 1, rel, &matched, MPI_STATUS_IGNORE), MPI_ERR_BUFFER,
                    "MPI_Mrecv");
    MPI_Mrecv(contrib, 2, MPI_INT, &matched, MPI_STATUS_IGNORE);
    MPI_Type_free(&rel);

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
