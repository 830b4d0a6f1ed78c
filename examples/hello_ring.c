/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The demonstration program: every rank says hello, then a token travels around the ring of
 * processes a few times, each rank adding its rank number, while one thread per rank exchanges
 * messages with its neighbours on a duplicated communicator at the same time.
 */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

#define LAPS 3

static MPI_Comm side_comm;
static int rank, size;

static void *side_traffic(void *arg)
{
    int *sum = arg, right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < 1000; i++) {
        int out = rank * 1000 + i, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, right, i, &in, 1, MPI_INT, left, i, side_comm,
                     MPI_STATUS_IGNORE);
        *sum += in == left * 1000 + i;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, len, ok = 0;
    char name[MPI_MAX_PROCESSOR_NAME], version[MPI_MAX_LIBRARY_VERSION_STRING];
    pthread_t thread;

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(name, &len);
    MPI_Get_library_version(version, &len);
    if (rank == 0)
        printf("%s\n", version);
    printf("hello from rank %d of %d on %s\n", rank, size, name);

    MPI_Comm_dup(MPI_COMM_WORLD, &side_comm);
    pthread_create(&thread, NULL, side_traffic, &ok);

    /* Rank 0 starts each lap; every other rank adds its rank and passes the token on. */
    int token = 0, right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int lap = 0; lap < LAPS; lap++) {
        if (rank == 0) {
            MPI_Send(&token, 1, MPI_INT, right, lap, MPI_COMM_WORLD);
            MPI_Recv(&token, 1, MPI_INT, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(&token, 1, MPI_INT, left, lap, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            token += rank;
            MPI_Send(&token, 1, MPI_INT, right, lap, MPI_COMM_WORLD);
        }
    }
    if (rank == 0) {
        int expect = LAPS * size * (size - 1) / 2;
        printf("ring: token after %d laps = %d (expected %d) %s\n", LAPS, token, expect,
               token == expect ? "ok" : "WRONG");
    }
    pthread_join(thread, NULL);
    MPI_Comm_free(&side_comm);
    MPI_Barrier(MPI_COMM_WORLD);
    printf("rank %d: side thread exchanged 1000 messages concurrently, %d correct\n", rank, ok);
    MPI_Finalize();
    return 0;
}
