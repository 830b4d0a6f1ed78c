/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Partitioned inits freed before any partner met them: rank 0's MPI_Psend_init to rank 1 and
 * rank 1's MPI_Precv_init from rank 0 use different tags, so neither pairs, and both are freed
 * unstarted (initialization is local, freeing an inactive request is allowed). Each init sent
 * its setup message at once; the peer's copy stayed unexpected, and at MPI_Finalize UCX printed
 * "unexpected tag-receive descriptor ... was not matched" for it. The library now drops such
 * messages once every process is in finalize. The program catches its own output around
 * MPI_Finalize (UCX writes there) and fails if the warning is in it.
 */
#define _POSIX_C_SOURCE 200809L

#include "mtest.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size, buf[8] = {0};
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Request req = MPI_REQUEST_NULL;
    if (rank == 0)
        MPI_Psend_init(buf, 4, 2, MPI_INT, 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    else if (rank == 1)
        MPI_Precv_init(buf, 4, 2, MPI_INT, 0, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    if (req != MPI_REQUEST_NULL)
        MPI_Request_free(&req);
    MTEST_CHECK(req == MPI_REQUEST_NULL, "MPI_Request_free left the handle set");
    MPI_Barrier(MPI_COMM_WORLD);

    fflush(stdout);
    FILE *captured = tmpfile();
    int saved = dup(1);
    if (captured == NULL || saved < 0 || dup2(fileno(captured), 1) < 0) {
        printf(" Found 1 errors\ncannot capture the output around MPI_Finalize\n");
        return 1;
    }
    int rc = mtest_finalize(0);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(captured);
    char line[512];
    int warned = 0;
    while (fgets(line, sizeof(line), captured) != NULL) {
        if (strstr(line, "was not matched") != NULL) {
            printf(" Found 1 errors\nrank %d: an unmatched message at MPI_Finalize: %s", rank,
                   line);
            warned = 1;
        } else {
            fputs(line, stdout);
        }
    }
    fclose(captured);
    return warned ? 1 : rc;
}
