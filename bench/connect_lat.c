/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time of MPI_Comm_accept + MPI_Comm_connect between two processes over MPI_COMM_SELF (one
 * port, opened once), each connection disconnected before the next. Prints the median and the
 * 10th percentile of `reps` connections (default 200) as seen by the connecting side. Builds
 * with any MPI's mpicc: `mpiexec -n 2 connect_lat [reps]`.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int reps = argc > 1 ? atoi(argv[1]) : 200;
    if (size != 2 || reps < 1) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 connect_lat [reps > 0]\n");
        MPI_Finalize();
        return 2;
    }
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0)
        MPI_Open_port(MPI_INFO_NULL, port);
    MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);
    double *t = malloc(sizeof(double) * (size_t)reps);
    for (int i = 0; i < reps; i++) {
        MPI_Comm inter;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        if (rank == 0)
            MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        else
            MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
        t[i] = MPI_Wtime() - t0;
        MPI_Comm_disconnect(&inter);
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    if (rank == 1)
        printf("connect_lat: %d connections, median %.1f us, p10 %.1f us\n", reps,
               t[reps / 2] * 1e6, t[reps / 10] * 1e6);
    if (rank == 0)
        MPI_Close_port(port);
    free(t);
    MPI_Finalize();
    return 0;
}
