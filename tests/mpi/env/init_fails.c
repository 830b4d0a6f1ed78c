/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Init that cannot start (the testlist passes an invalid MANIFOLD_VCI_COUNT) must end the
 * job through the initial error handler, MPI_ERRORS_ARE_FATAL (MPI-4.1 9.3), instead of
 * returning to a program that does not test its result. Run with expect=abort: reaching the
 * line after MPI_Init prints " No Errors" and exits 0, which fails the test.
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    printf(" No Errors\n");
    return 0;
}
