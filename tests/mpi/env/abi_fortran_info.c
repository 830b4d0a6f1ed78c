/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-5.0 MPI_Abi_get/set_fortran_info: without Fortran details the query gives
 * MPI_INFO_NULL; once set (at most once) it gives a new copy of what was set; a second set is
 * MPI_ERR_ABI, a bad info handle MPI_ERR_INFO.
 */
#include <string.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Info got = MPI_INFO_ENV, set;
    int rc = MPI_Abi_get_fortran_info(&got);
    MTEST_CHECK(rc == MPI_SUCCESS && got == MPI_INFO_NULL, "before any set: rc %d", rc);
    MPI_Info_create(&set);
    MPI_Info_set(set, "mpi_integer_size", "4");
    rc = MPI_Abi_set_fortran_info(set);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Abi_set_fortran_info: rc %d", rc);
    MPI_Info_set(set, "mpi_integer_size", "8"); /* the library kept a copy */
    rc = MPI_Abi_get_fortran_info(&got);
    char value[16] = "";
    int flag = 0;
    if (rc == MPI_SUCCESS && got != MPI_INFO_NULL) {
        MPI_Info_get(got, "mpi_integer_size", sizeof(value) - 1, value, &flag);
        MPI_Info_free(&got);
    }
    MTEST_CHECK(flag && strcmp(value, "4") == 0, "after set: rc %d, value \"%s\"", rc, value);
    rc = MPI_Abi_set_fortran_info(set);
    MTEST_CHECK_ERR(rc, MPI_ERR_ABI, "MPI_Abi_set_fortran_info");
    rc = MPI_Abi_set_fortran_info(MPI_INFO_NULL);
    MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Abi_set_fortran_info");
    MPI_Info_free(&set);
    return mtest_finalize(0);
}
