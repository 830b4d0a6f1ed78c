/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error reporting of the environment and datatype queries, with MPI_ERRORS_RETURN set on
 * MPI_COMM_WORLD and MPI_COMM_SELF (errors not tied to a communicator are raised on
 * MPI_COMM_SELF since MPI-4.0): MPI_COMM_NULL to MPI_Comm_rank/size/get_attr gives
 * MPI_ERR_COMM, MPI_DATATYPE_NULL to MPI_Type_size/get_extent gives MPI_ERR_TYPE, an
 * invalid keyval gives MPI_ERR_KEYVAL. Every error class up to MPI_ERR_ABI is its own
 * class and has a non-empty error string. The library keeps working afterwards.
 */
#include "mtest.h"

#include <string.h>

static void check_classes(void)
{
    char text[MPI_MAX_ERROR_STRING];
    int error_class, len;

    for (int c = MPI_SUCCESS; c <= MPI_ERR_ABI; c++) {
        error_class = -1;
        MTEST_CHECK(MPI_Error_class(c, &error_class) == MPI_SUCCESS && error_class == c,
                    "MPI_Error_class(%s) gave %d", mtest_error_class_name(c), error_class);
        len = -1;
        memset(text, 0, sizeof(text));
        MTEST_CHECK(MPI_Error_string(c, text, &len) == MPI_SUCCESS && len > 0 &&
                        (size_t)len == strlen(text),
                    "MPI_Error_string(%s): len %d", mtest_error_class_name(c), len);
    }
}

static void check_null_handles(void)
{
    MPI_Aint lb, extent;
    void *value;
    int out, flag, rc;

    rc = MPI_Comm_rank(MPI_COMM_NULL, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_rank");
    rc = MPI_Comm_size(MPI_COMM_NULL, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_size");
    rc = MPI_Comm_get_attr(MPI_COMM_NULL, MPI_TAG_UB, &value, &flag);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_get_attr");
    rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_KEYVAL_INVALID, &value, &flag);
    MTEST_CHECK_ERR(rc, MPI_ERR_KEYVAL, "MPI_Comm_get_attr");
    rc = MPI_Type_size(MPI_DATATYPE_NULL, &out);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_size");
    rc = MPI_Type_get_extent(MPI_DATATYPE_NULL, &lb, &extent);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_get_extent");
}

int main(int argc, char **argv)
{
    int rank = -1, size = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    check_classes();
    check_null_handles();
    /* still usable after the errors */
    MTEST_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank) == MPI_SUCCESS && rank >= 0,
                "MPI_Comm_rank after errors");
    MTEST_CHECK(MPI_Type_size(MPI_INT, &size) == MPI_SUCCESS && size == sizeof(int),
                "MPI_Type_size after errors");
    return mtest_finalize(0);
}
