/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The communicator of MPI_Comm_idup before its request completes: the calls local to the
 * handle (error handler, name, attributes) work on it, as mpi4py relies on (it sets its error
 * handler right after MPI_Comm_idup). Rank 0 holds the other ranks back, so the request cannot
 * have completed when they make those calls. Also the names of the null handles (MPI-4.1).
 */
#include <string.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int inter = 0; inter < 2; inter++) {
        MPI_Comm parent = MPI_COMM_WORLD, local = MPI_COMM_NULL, newcomm = MPI_COMM_NULL;
        if (inter) {
            if (size < 2)
                break;
            MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
            MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 7, &parent);
        }
        MPI_Request req;
        if (rank == 0 && size > 1)
            MPI_Recv(NULL, 0, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Comm_idup(parent, &newcomm, &req);
        if (rank != 0) {
            /* Rank 0 has not called idup yet: the agreement cannot have finished. */
            rc = MPI_Comm_set_errhandler(newcomm, MPI_ERRORS_RETURN);
            MTEST_CHECK(rc == MPI_SUCCESS, "set_errhandler before completion: rc %d", rc);
            MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
            rc = MPI_Comm_get_errhandler(newcomm, &eh);
            MTEST_CHECK(rc == MPI_SUCCESS && eh == MPI_ERRORS_RETURN,
                        "get_errhandler before completion: rc %d", rc);
            rc = MPI_Comm_set_name(newcomm, "pending");
            MTEST_CHECK(rc == MPI_SUCCESS, "set_name before completion: rc %d", rc);
            int key, *val = NULL, flag = 0;
            static int value = 42;
            MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
            rc = MPI_Comm_set_attr(newcomm, key, &value);
            MTEST_CHECK(rc == MPI_SUCCESS, "set_attr before completion: rc %d", rc);
            MPI_Comm_get_attr(newcomm, key, &val, &flag);
            MTEST_CHECK(flag && val == &value, "get_attr before completion: flag %d", flag);
            MPI_Comm_delete_attr(newcomm, key);
            MPI_Comm_free_keyval(&key);
            if (rank == 1)
                MPI_Send(NULL, 0, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Comm_get_name(newcomm, name, &len);
        if (rank != 0)
            MTEST_CHECK(strcmp(name, "pending") == 0, "name after completion: \"%s\"", name);
        int result;
        MPI_Comm_compare(parent, newcomm, &result);
        MTEST_CHECK(result == MPI_CONGRUENT, "compare after completion: %d", result);
        MPI_Barrier(newcomm);
        MPI_Comm_free(&newcomm);
        if (inter) {
            MPI_Comm_free(&parent);
            MPI_Comm_free(&local);
        }
    }

    /* MPI-4.1: the null handles have names. */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    rc = MPI_Comm_get_name(MPI_COMM_NULL, name, &len);
    MTEST_CHECK(rc == MPI_SUCCESS && strcmp(name, "MPI_COMM_NULL") == 0 && len == 13,
                "name of MPI_COMM_NULL: rc %d \"%s\"", rc, rc == MPI_SUCCESS ? name : "");
    len = -1;
    rc = MPI_Type_get_name(MPI_DATATYPE_NULL, name, &len);
    MTEST_CHECK(rc == MPI_SUCCESS && strcmp(name, "MPI_DATATYPE_NULL") == 0 && len == 17,
                "name of MPI_DATATYPE_NULL: rc %d \"%s\"", rc, rc == MPI_SUCCESS ? name : "");
    /* A freed communicator is still no communicator for the local calls. */
    MPI_Comm dead;
    MPI_Comm_dup(MPI_COMM_SELF, &dead);
    MPI_Comm stale = dead;
    MPI_Comm_free(&dead);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rc = MPI_Comm_set_name(stale, "x");
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_set_name");
    return mtest_finalize(0);
}
