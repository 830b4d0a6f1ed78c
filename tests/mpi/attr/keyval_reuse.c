/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keyvals made and freed one after the other, more of them than the library has slot numbers
 * (a library that makes a temporary keyval per call): every one must work. The library handed
 * out about a million and then returned a keyval of the next kind (the datatypes'), which
 * nothing accepted, and refused every later one. Keyvals of all three kinds share the table,
 * so the test alternates communicator and datatype keyvals. A freed keyval stays invalid as
 * long as its slot is not handed out again.
 */
#include "mtest.h"

#define ROUNDS ((1 << 20) + 1000)

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int first = MPI_KEYVAL_INVALID, failures = 0;
    for (int i = 0; i < ROUNDS && failures < 5; i++) {
        int keyval = MPI_KEYVAL_INVALID, flag = 0, rc;
        void *got = NULL;
        if (i % 2 == 0) {
            rc = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &keyval,
                                        NULL);
            if (rc == MPI_SUCCESS)
                rc = MPI_Comm_set_attr(MPI_COMM_WORLD, keyval, &first);
            if (rc == MPI_SUCCESS)
                rc = MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &got, &flag);
            if (rc == MPI_SUCCESS)
                rc = MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
            if (rc == MPI_SUCCESS && i == 0)
                first = keyval;
            else if (rc == MPI_SUCCESS)
                rc = MPI_Comm_free_keyval(&keyval);
        } else {
            rc = MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &keyval,
                                        NULL);
            if (rc == MPI_SUCCESS)
                rc = MPI_Type_set_attr(MPI_INT, keyval, &first);
            if (rc == MPI_SUCCESS)
                rc = MPI_Type_get_attr(MPI_INT, keyval, &got, &flag);
            if (rc == MPI_SUCCESS)
                rc = MPI_Type_delete_attr(MPI_INT, keyval);
            if (rc == MPI_SUCCESS)
                rc = MPI_Type_free_keyval(&keyval);
        }
        if (rc != MPI_SUCCESS || (flag && got != &first) || !flag) {
            failures++;
            MTEST_CHECK(0, "round %d: keyval %d, rc %d, flag %d", i, keyval, rc, flag);
        }
        if (i == 1000) { /* a freed keyval is refused while its slot is not reused */
            int stale = first;
            MPI_Comm_free_keyval(&first);
            rc = MPI_Comm_set_attr(MPI_COMM_WORLD, stale, &first);
            MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_set_attr");
        }
    }
    return mtest_finalize(0);
}
