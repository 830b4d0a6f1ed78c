/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-5.0 MPI_Abi_get/set_fortran_info: without Fortran details the query gives
 * MPI_INFO_NULL; Fortran sizes other than the library's (INTEGER 4, DOUBLE PRECISION 8) are
 * MPI_ERR_ABI and store nothing; once set (at most once) it gives a new copy of what was set;
 * a second set is MPI_ERR_ABI, a bad info handle MPI_ERR_INFO.
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
    /* sizes the library's Fortran types do not have are refused, not stored and ignored
     * (MPI_INTEGER of 8 bytes once "succeeded" and reduced 4-byte halves) */
    MPI_Info_set(set, "mpi_integer_size", "8");
    rc = MPI_Abi_set_fortran_info(set);
    MTEST_CHECK_ERR(rc, MPI_ERR_ABI, "mpi_integer_size");
    MPI_Info_set(set, "mpi_integer_size", "4");
    MPI_Info_set(set, "mpi_double_precision_size", "16");
    rc = MPI_Abi_set_fortran_info(set);
    MTEST_CHECK_ERR(rc, MPI_ERR_ABI, "mpi_double_precision_size");
    rc = MPI_Abi_get_fortran_info(&got);
    MTEST_CHECK(rc == MPI_SUCCESS && got == MPI_INFO_NULL, "after refused sets: rc %d", rc);
    MPI_Info_set(set, "mpi_double_precision_size", "8");
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
