/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Started without any launcher (launcher_case.sh singleton_spawn): the process is a singleton,
 * and its MPI_Comm_spawn must still work, through an mpiexec the library starts for it. It
 * spawns 3 copies of itself, sends each a number over the intercommunicator and gets it back
 * doubled; the children check their parent and their world of 3. Then it publishes a name and
 * looks it up. It prints the mpiexec processes left once everything is done, which the case
 * checks are none.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int child(MPI_Comm parent)
{
    int rank, size, remote = 0, value = -1, errs = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_remote_size(parent, &remote);
    if (size != 3 || remote != 1)
        errs++;
    MPI_Recv(&value, 1, MPI_INT, 0, 0, parent, MPI_STATUS_IGNORE);
    value = errs == 0 ? 2 * value : -1;
    MPI_Send(&value, 1, MPI_INT, 0, 1, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm parent, children;
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL)
        return child(parent);

    int size = 0, errs = 0, codes[3];
    printf("singleton pid %d\n", (int)getpid());
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 1) {
        printf("a singleton has a world of %d\n", size);
        errs++;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* the children get our arguments too (the test's token) */
    int rc = MPI_Comm_spawn(argv[0], argc > 1 ? &argv[1] : MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0,
                            MPI_COMM_SELF, &children, codes);
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, text, &len);
        printf("MPI_Comm_spawn failed: %s\n", text);
        printf(" Found 1 errors\n");
        MPI_Finalize();
        return 1;
    }
    for (int r = 0; r < 3; r++) {
        int value = 10 + r, back = 0;
        MPI_Send(&value, 1, MPI_INT, r, 0, children);
        MPI_Recv(&back, 1, MPI_INT, r, 1, children, MPI_STATUS_IGNORE);
        if (codes[r] != MPI_SUCCESS || back != 2 * value) {
            printf("child %d answered %d for %d (code %d)\n", r, back, value, codes[r]);
            errs++;
        }
    }
    MPI_Comm_disconnect(&children);

    char port[MPI_MAX_PORT_NAME], found[MPI_MAX_PORT_NAME] = "";
    MPI_Open_port(MPI_INFO_NULL, port);
    if (MPI_Publish_name("mf-singleton-test", MPI_INFO_NULL, port) != MPI_SUCCESS ||
        MPI_Lookup_name("mf-singleton-test", MPI_INFO_NULL, found) != MPI_SUCCESS ||
        strcmp(port, found) != 0 ||
        MPI_Unpublish_name("mf-singleton-test", MPI_INFO_NULL, port) != MPI_SUCCESS) {
        printf("the name service did not give the published port back\n");
        errs++;
    }
    MPI_Close_port(port);
    MPI_Finalize();
    printf(errs == 0 ? " No Errors\n" : " Found %d errors\n", errs);
    return errs != 0;
}
