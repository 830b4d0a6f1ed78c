/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A user-defined operation freed while collectives that use it are pending (MPI-4.1 2.5.1:
 * freeing marks the object, operations using it complete normally): an MPI_Iallreduce and an
 * MPI_Ireduce started with operation A, then MPI_Op_free(A) and MPI_Op_create of B (which may
 * get A's memory back), then the waits; and an MPI_Allreduce_init with A, freed before its
 * three starts. Every result must be A's. Then B and a third operation work as themselves.
 */
#include "mtest.h"

/* A: plain sum; B: the sum plus 1000 per combine, so a result computed with B shows. */
static void op_a(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void op_b(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i] + 1000;
}

int main(int argc, char **argv)
{
    int rank, size, one = 0, sum = -1, red = -1, expect;
    MPI_Op a, b, c;
    MPI_Request reqs[2], pers;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    one = rank + 1;
    expect = size * (size + 1) / 2;

    MPI_Op_create(op_a, 1, &a);
    MPI_Iallreduce(&one, &sum, 1, MPI_INT, a, MPI_COMM_WORLD, &reqs[0]);
    MPI_Ireduce(&one, &red, 1, MPI_INT, a, 0, MPI_COMM_WORLD, &reqs[1]);
    MPI_Op_free(&a);
    MTEST_CHECK(a == MPI_OP_NULL, "MPI_Op_free left the handle set");
    MPI_Op_create(op_b, 1, &b);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    MTEST_CHECK(sum == expect, "MPI_Iallreduce with a freed operation: %d, expected %d", sum,
                expect);
    MTEST_CHECK(rank != 0 || red == expect, "MPI_Ireduce with a freed operation: %d, expected %d",
                red, expect);

    MPI_Op_create(op_a, 1, &a);
    MPI_Allreduce_init(&one, &sum, 1, MPI_INT, a, MPI_COMM_WORLD, MPI_INFO_NULL, &pers);
    MPI_Op_free(&a);
    MPI_Op_create(op_b, 1, &c);
    for (int it = 0; it < 3; it++) {
        sum = -1;
        MPI_Start(&pers);
        MPI_Wait(&pers, MPI_STATUS_IGNORE);
        MTEST_CHECK(sum == expect, "MPI_Allreduce_init with a freed operation, start %d: %d", it,
                    sum);
    }
    MPI_Request_free(&pers);

    /* the live operations are still themselves */
    MPI_Allreduce(&one, &sum, 1, MPI_INT, b, MPI_COMM_WORLD);
    MTEST_CHECK(sum == expect + 1000 * (size - 1), "MPI_Allreduce with B: %d", sum);
    MPI_Op_free(&b);
    MPI_Op_create(op_a, 1, &a);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, a, MPI_COMM_WORLD);
    MTEST_CHECK(sum == expect, "MPI_Allreduce with a new A: %d", sum);
    MPI_Op_free(&a);
    MPI_Op_free(&c);
    return mtest_finalize(0);
}
