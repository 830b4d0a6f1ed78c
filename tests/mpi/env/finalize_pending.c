/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Finalize completes sends the program can no longer wait for (MPI-4.1 section 11.2.2):
 * rank 0 makes large buffered sends (a rendezvous from the attached buffer, never detached)
 * and an MPI_Isend whose request it frees, then finalizes at once; rank 1 posts its receives
 * only a second later. The finalizing sender must still make progress until they arrive (it
 * used to sit in an out-of-band fence, and both ranks hung).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define COUNT (1 << 20) /* ints: 4 MiB, far above any eager limit */

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int *data = malloc(sizeof(int) * COUNT);
    if (size < 2) {
        printf(" No Errors\n");
        MPI_Finalize();
        return 0;
    }
    if (rank == 0) {
        int bytes = 0;
        MPI_Pack_size(COUNT, MPI_INT, MPI_COMM_WORLD, &bytes);
        int bufsize = 2 * (bytes + MPI_BSEND_OVERHEAD);
        void *buf = malloc((size_t)bufsize);
        MPI_Buffer_attach(buf, bufsize);
        for (int m = 0; m < 3; m++) {
            for (int i = 0; i < COUNT; i++)
                data[i] = m * 7 + i;
            if (m < 2) {
                MPI_Bsend(data, COUNT, MPI_INT, 1, m, MPI_COMM_WORLD);
            } else {
                MPI_Request req;
                MPI_Isend(data, COUNT, MPI_INT, 1, m, MPI_COMM_WORLD, &req);
                MPI_Request_free(&req);
            }
        }
        MPI_Finalize(); /* the buffer stays attached, and data in use, until here */
        free(buf);
    } else {
        if (rank == 1) {
            sleep(1);
            for (int m = 0; m < 3; m++) {
                MPI_Recv(data, COUNT, MPI_INT, 0, m, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int i = 0; i < COUNT; i++) {
                    if (data[i] != m * 7 + i) {
                        if (errs++ < 5)
                            fprintf(stderr, "message %d: element %d is %d, expected %d\n", m, i,
                                    data[i], m * 7 + i);
                    }
                }
            }
            if (errs == 0)
                printf(" No Errors\n");
            else
                printf(" Found %d errors\n", errs);
            fflush(stdout);
        }
        MPI_Finalize();
    }
    free(data);
    return errs != 0;
}
