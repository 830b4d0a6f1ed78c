/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program an MPI process starts inherits the launcher's variables (PMI_FD, PMI_RANK ...) but
 * not its connection: MPI_Init there must make a job of one (what a Python multiprocessing
 * worker under the spawn or forkserver methods does when it imports mpi4py again), not fail on
 * the missing descriptor. Each rank runs itself twice as a child: once as it is, and once with
 * a pipe at the descriptor number PMI_FD names, which the child's MPI_Init must leave alone
 * (nothing written to it).
 */
#include <mpi.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int child(int reuse)
{
    int fds[2] = {-1, -1};
    const char *pmi_fd = getenv("PMI_FD");
    if (reuse && pmi_fd != NULL) {
        if (pipe(fds) != 0 || dup2(fds[1], atoi(pmi_fd)) < 0)
            return 10;
        close(fds[1]);
    }
    MPI_Init(NULL, NULL);
    int size = 0, rank = -1;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (size != 1 || rank != 0)
        return 11;
    if (reuse && pmi_fd != NULL) {
        close(atoi(pmi_fd));
        char c;
        if (read(fds[0], &c, 1) != 0) /* end of file: nobody wrote */
            return 12;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strncmp(argv[1], "--child=", 8) == 0)
        return child(atoi(argv[1] + 8));
    int rank, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int reuse = 0; reuse < 2; reuse++) {
        char mode[16];
        snprintf(mode, sizeof(mode), "--child=%d", reuse);
        char *args[] = {argv[0], mode, NULL};
        pid_t pid;
        int status = 0;
        if (posix_spawn(&pid, argv[0], NULL, NULL, args, environ) != 0 ||
            waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            printf("rank %d: the child (%s) failed, status %d\n", rank, mode, status);
            errs++;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(errs == 0 ? " No Errors\n" : " Found %d errors\n", errs);
    MPI_Finalize();
    return 0;
}
