/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The loop bench/count_instructions.py runs under callgrind: rank 0 sends N 8-byte messages,
 * each an MPI_Isend followed by MPI_Wait, to rank 1, which receives them with MPI_Recv. The
 * sending loop is its own function, mf_isend_loop, so callgrind can count only inside it
 * (--toggle-collect); running with N and 2N and subtracting leaves the cost of N sends.
 * Usage: isend_loop N (2 processes).
 */
#include <stdio.h>
#include <stdlib.h>

#include <mpi.h>

/* Not inlined and not static: callgrind's --toggle-collect names it. */
__attribute__((noinline)) void mf_isend_loop(const char *buf, int n);

void mf_isend_loop(const char *buf, int n)
{
    for (int i = 0; i < n; i++) {
        MPI_Request req;
        MPI_Isend(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    char buf[8] = {0};
    int rank, size, n = argc > 1 ? atoi(argv[1]) : 1000;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2 || n < 1) {
        if (rank == 0)
            fprintf(stderr, "isend_loop: needs 2 processes and N >= 1\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    /* One message first, so connection setup is outside the counted loop. */
    if (rank == 0) {
        MPI_Send(buf, 8, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        mf_isend_loop(buf, n);
    } else {
        MPI_Recv(buf, 8, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
