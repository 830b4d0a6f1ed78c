/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A receive fails (truncation) after the program freed its communicator and the
 * communicator's error handler, both legal while the receive is pending: the completion drops
 * the communicator's last reference, and the error must still reach the handler and come back
 * as MPI_ERR_TRUNCATE (MPI_ERR_IN_STATUS from the array calls). The library used to raise on
 * the destroyed communicator and crash, in every completion call.
 */
#include <mpi.h>
#include <stdio.h>

static int handler_calls, handler_class;

static void count_error(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

int main(int argc, char **argv)
{
    static const char *const names[] = {"MPI_Wait", "MPI_Waitall", "MPI_Waitany", "MPI_Waitsome",
                                        "MPI_Test", "MPI_Testall", "MPI_Testany", "MPI_Testsome"};
    int errs = 0;
    MPI_Init(&argc, &argv);
    for (int mode = 0; mode < 8; mode++) {
        MPI_Comm comm;
        MPI_Errhandler eh;
        MPI_Comm_dup(MPI_COMM_SELF, &comm);
        MPI_Comm_create_errhandler(count_error, &eh);
        MPI_Comm_set_errhandler(comm, eh);
        MPI_Errhandler_free(&eh);
        int sendbuf[4] = {1, 2, 3, 4}, recvbuf[2];
        MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
        MPI_Irecv(recvbuf, 2, MPI_INT, 0, 1, comm, &reqs[0]);
        MPI_Send(sendbuf, 4, MPI_INT, 0, 1, comm); /* small: buffered at the receiver */
        MPI_Comm_free(&comm);
        handler_calls = 0;
        handler_class = MPI_SUCCESS;
        int rc = MPI_SUCCESS, index, outcount, indices[2], flag = 0, expect = MPI_ERR_IN_STATUS;
        switch (mode) {
        case 0: rc = MPI_Wait(&reqs[0], MPI_STATUS_IGNORE), expect = MPI_ERR_TRUNCATE; break;
        case 1: rc = MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE); break;
        case 2:
            rc = MPI_Waitany(2, reqs, &index, MPI_STATUS_IGNORE), expect = MPI_ERR_TRUNCATE;
            break;
        case 3: rc = MPI_Waitsome(2, reqs, &outcount, indices, MPI_STATUSES_IGNORE); break;
        case 4:
            while (!flag)
                rc = MPI_Test(&reqs[0], &flag, MPI_STATUS_IGNORE);
            expect = MPI_ERR_TRUNCATE;
            break;
        case 5:
            while (!flag)
                rc = MPI_Testall(2, reqs, &flag, MPI_STATUSES_IGNORE);
            break;
        case 6:
            while (!flag)
                rc = MPI_Testany(2, reqs, &index, &flag, MPI_STATUS_IGNORE);
            expect = MPI_ERR_TRUNCATE;
            break;
        case 7:
            do
                rc = MPI_Testsome(2, reqs, &outcount, indices, MPI_STATUSES_IGNORE);
            while (rc == MPI_SUCCESS && outcount == 0);
            break;
        }
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        if (cls != expect || handler_calls != 1 || handler_class != expect) {
            errs++;
            fprintf(stderr, "%s: class %d (expected %d), handler called %d times with class %d\n",
                    names[mode], cls, expect, handler_calls, handler_class);
        }
    }
    if (errs == 0)
        printf(" No Errors\n");
    else
        printf(" Found %d errors\n", errs);
    MPI_Finalize();
    return errs != 0;
}
