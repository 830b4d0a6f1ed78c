/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Runs where /dev/shm is small (launcher_case.sh small_shm mounts a 16 MiB one, as a
 * container's): several communicators, so that more than one channel (UCX worker) and more
 * than one collective segment come up, each with collectives and point-to-point traffic; then
 * a shared window larger than /dev/shm, which must fail with MPI_ERR_NO_MEM rather than kill
 * the process when its pages are touched, and a small one, which must work.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#define COMMS 12
#define ITEMS (64 * 1024)

static double buf[ITEMS];

int main(int argc, char **argv)
{
    int rank, size, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm comms[COMMS];
    for (int c = 0; c < COMMS; c++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &comms[c]);
        for (int i = 0; i < ITEMS; i++)
            buf[i] = rank + c;
        MPI_Allreduce(MPI_IN_PLACE, buf, ITEMS, MPI_DOUBLE, MPI_SUM, comms[c]);
        double want = size * (size - 1) / 2.0 + (double)size * c;
        if (buf[0] != want || buf[ITEMS - 1] != want) {
            printf("rank %d: allreduce on communicator %d gave %g, expected %g\n", rank, c, buf[0],
                   want);
            errs++;
        }
        MPI_Sendrecv_replace(buf, ITEMS, MPI_DOUBLE, (rank + 1) % size, c, (rank + size - 1) % size,
                             c, comms[c], MPI_STATUS_IGNORE);
    }
    for (int c = 0; c < COMMS; c++)
        MPI_Comm_free(&comms[c]);

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Win win;
    double *base = NULL;
    MPI_Aint big = rank == 0 ? (MPI_Aint)64 * 1024 * 1024 : 0;
    int rc = MPI_Win_allocate_shared(big, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    int cls = -1;
    MPI_Error_class(rc, &cls);
    if (cls != MPI_ERR_NO_MEM) {
        printf("rank %d: a 64 MiB shared window gave class %d, expected MPI_ERR_NO_MEM\n", rank,
               cls);
        errs++;
    }
    if (rc == MPI_SUCCESS)
        MPI_Win_free(&win);
    rc = MPI_Win_allocate_shared(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    if (rc != MPI_SUCCESS) {
        printf("rank %d: a 4 KiB shared window failed\n", rank);
        errs++;
    } else {
        memset(base, rank, 4096);
        MPI_Win_free(&win);
    }
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs == 0 ? " No Errors\n" : " Found %d errors\n", errs);
    MPI_Finalize();
    return errs != 0;
}
