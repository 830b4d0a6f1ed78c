/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handles that are not aligned as an object is: what a program gets when it keeps handles in
 * an array of int (an int array passed as MPI_Alltoallw's datatypes reads two ints as one
 * handle) or corrupts one. Every handle kind, given such a value, is refused with its error
 * class (MPI_ERR_COMM, _TYPE, _REQUEST, _OP, _INFO, _GROUP, _WIN, _FILE, _ERRHANDLER,
 * _SESSION) instead of being read, and the library still works afterwards. Under
 * UBSan a read of the object's kind word through such a pointer fails the test. Manifold only:
 * with the standard ABI's pointer handles other MPIs may dereference such values.
 */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    if (!mtest_is_manifold())
        return mtest_finalize(0);

    int size, rank, rc, n = 0, flag = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    /* mapped memory, one byte past an aligned address */
    char *heap = malloc(64);
    void *bad = heap + 1;

    rc = MPI_Comm_size((MPI_Comm)bad, &n);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_size");
    rc = MPI_Type_size((MPI_Datatype)bad, &n);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_size");
    MPI_Request req = (MPI_Request)bad;
    rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Wait");
    req = (MPI_Request)bad;
    rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Test");
    rc = MPI_Op_commutative((MPI_Op)bad, &n);
    MTEST_CHECK_ERR(rc, MPI_ERR_OP, "MPI_Op_commutative");
    rc = MPI_Info_get_nkeys((MPI_Info)bad, &n);
    MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Info_get_nkeys");
    rc = MPI_Group_size((MPI_Group)bad, &n);
    MTEST_CHECK_ERR(rc, MPI_ERR_GROUP, "MPI_Group_size");
    MPI_Group group;
    rc = MPI_Win_get_group((MPI_Win)bad, &group);
    MTEST_CHECK_ERR(rc, MPI_ERR_WIN, "MPI_Win_get_group");
    MPI_Offset fsize;
    rc = MPI_File_get_size((MPI_File)bad, &fsize);
    MTEST_CHECK_ERR(rc, MPI_ERR_FILE, "MPI_File_get_size");
    rc = MPI_Comm_set_errhandler(MPI_COMM_SELF, (MPI_Errhandler)bad);
    MTEST_CHECK_ERR(rc, MPI_ERR_ERRHANDLER, "MPI_Comm_set_errhandler");
    rc = MPI_Session_get_num_psets((MPI_Session)bad, MPI_INFO_NULL, &n);
    MTEST_CHECK_ERR(rc, MPI_ERR_SESSION, "MPI_Session_get_num_psets");
    MPI_Message msg = (MPI_Message)bad;
    int value;
    rc = MPI_Mrecv(&value, 1, MPI_INT, &msg, MPI_STATUS_IGNORE);
    MTEST_CHECK_ERR(rc, MPI_ERR_REQUEST, "MPI_Mrecv");

    /* datatypes kept in an int array: each pair of ints reads as one misaligned handle */
    int *counts = calloc((size_t)size, sizeof(int));
    int *displs = calloc((size_t)size, sizeof(int));
    int *int_types = malloc((size_t)size * sizeof(MPI_Datatype));
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = i * (int)sizeof(int);
    }
    for (int i = 0; i < 2 * size; i++)
        int_types[i] = 0x209;
    int *sendbuf = calloc((size_t)size, sizeof(int)), *recvbuf = calloc((size_t)size, sizeof(int));
    rc = MPI_Alltoallw(sendbuf, counts, displs, (MPI_Datatype *)int_types, recvbuf, counts, displs,
                       (MPI_Datatype *)int_types, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Alltoallw");

    /* still works */
    int sum = 0;
    rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MTEST_CHECK(rc == MPI_SUCCESS && sum == size * (size - 1) / 2, "MPI_Allreduce afterwards");
    free(sendbuf);
    free(recvbuf);
    free(int_types);
    free(displs);
    free(counts);
    free(heap);
    return mtest_finalize(mtest_error_count());
}
