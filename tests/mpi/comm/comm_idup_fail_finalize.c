/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Rank 0's MPI_Comm_idup fails in an attribute copy callback, and rank 0 calls MPI_Finalize
 * right after, making no other call that would progress anything, while the others wait for
 * their idup, whose agreement needs rank 0's part. The failed call leaves its agreement running;
 * finalize must run it to its end first (it used to stop at the finalize fence while the others
 * waited for ever). The test passes by ending: a hang is a CTest timeout.
 */
#include <mpi.h>
#include <stdio.h>

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    int rank, keyval, errs = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm dup, newcomm = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_create_keyval(rank == 0 ? copy_fn : MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN,
                           &keyval, NULL);
    MPI_Comm_set_attr(dup, keyval, &errs);
    int rc = MPI_Comm_idup(dup, &newcomm, &req);
    if (rank == 0) {
        errs += rc == MPI_SUCCESS || newcomm != MPI_COMM_NULL || req != MPI_REQUEST_NULL;
    } else {
        errs += rc != MPI_SUCCESS;
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Comm_free(&newcomm);
        MPI_Comm_delete_attr(dup, keyval);
        MPI_Comm_free(&dup);
        MPI_Comm_free_keyval(&keyval);
    }
    if (errs)
        printf("Found %d errors\n", errs);
    MPI_Finalize();
    if (rank == 0 && errs == 0)
        printf(" No Errors\n"); /* after MPI_Finalize: only an ended run says it */
    return 0;
}
