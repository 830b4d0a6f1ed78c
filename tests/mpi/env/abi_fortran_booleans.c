/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-5.0 MPI_Abi_get/set_fortran_booleans: nothing is set at first; sizes other than 1, 2, 4,
 * 8 and 16 are MPI_ERR_ARG; setting the same values again is fine, other values MPI_ERR_ABI.
 * MPI_LAND/LOR/LXOR on MPI_LOGICAL* then read .FALSE. as false and anything else as true, and
 * give the set patterns (here .TRUE. = -1, as some compilers have it), in MPI_Reduce_local and
 * in MPI_Allreduce.
 */
#include <stdint.h>

#include "mtest.h"

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int32_t t = 7, f = 7;
    int is_set = -1;
    int rc = MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set);
    MTEST_CHECK(rc == MPI_SUCCESS && is_set == 0 && t == 7 && f == 7,
                "before any set: rc %d is_set %d", rc, is_set);
    int bad[] = {0, -4, 3, 6, 32};
    for (int i = 0; i < 5; i++) {
        rc = MPI_Abi_set_fortran_booleans(bad[i], &t, &f);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Abi_set_fortran_booleans");
        rc = MPI_Abi_get_fortran_booleans(bad[i], &t, &f, &is_set);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Abi_get_fortran_booleans");
    }
    rc = MPI_Abi_set_fortran_booleans(4, NULL, &f);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Abi_set_fortran_booleans");
    rc = MPI_Abi_set_fortran_booleans(4, &t, &f); /* .TRUE. == .FALSE. */
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Abi_set_fortran_booleans");

    /* Before any set, 1 and 0 (gfortran's). */
    int32_t in[3] = {0, 5, 5}, io[3] = {5, 0, 5};
    MPI_Reduce_local(in, io, 3, MPI_LOGICAL, MPI_LOR);
    MTEST_CHECK(io[0] == 1 && io[1] == 1 && io[2] == 1, "LOR before set: %d %d %d", io[0], io[1],
                io[2]);

    int32_t t4 = -1, f4 = 0;
    int8_t t1 = -1, f1 = 0;
    rc = MPI_Abi_set_fortran_booleans(4, &t4, &f4);
    MTEST_CHECK(rc == MPI_SUCCESS, "set 4: rc %d", rc);
    rc = MPI_Abi_set_fortran_booleans(4, &t4, &f4);
    MTEST_CHECK(rc == MPI_SUCCESS, "set 4 again, same values: rc %d", rc);
    int32_t other = 1;
    rc = MPI_Abi_set_fortran_booleans(4, &other, &f4);
    MTEST_CHECK_ERR(rc, MPI_ERR_ABI, "MPI_Abi_set_fortran_booleans");
    rc = MPI_Abi_set_fortran_booleans(1, &t1, &f1);
    MTEST_CHECK(rc == MPI_SUCCESS, "set 1: rc %d", rc);
    t = f = 7;
    rc = MPI_Abi_get_fortran_booleans(4, &t, &f, &is_set);
    MTEST_CHECK(rc == MPI_SUCCESS && is_set == 1 && t == -1 && f == 0,
                "after set: rc %d is_set %d t %d f %d", rc, is_set, t, f);
    int64_t t8, f8;
    rc = MPI_Abi_get_fortran_booleans(8, &t8, &f8, &is_set);
    MTEST_CHECK(rc == MPI_SUCCESS && is_set == 0, "size 8 stays unset: is_set %d", is_set);

    /* in op io -> io, for LAND, LOR, LXOR: (T,T) (T,F) (F,T) (F,F), with 5 as another true. */
    int32_t a[4] = {5, -1, 0, 0}, b[4] = {-1, 0, 5, 0};
    int32_t want[3][4] = {{-1, 0, 0, 0}, {-1, -1, -1, 0}, {0, -1, -1, 0}};
    MPI_Op ops[3] = {MPI_LAND, MPI_LOR, MPI_LXOR};
    for (int k = 0; k < 3; k++) {
        int32_t r[4] = {b[0], b[1], b[2], b[3]};
        MPI_Reduce_local(a, r, 4, MPI_LOGICAL4, ops[k]);
        for (int i = 0; i < 4; i++)
            MTEST_CHECK(r[i] == want[k][i], "op %d item %d: %d, expected %d", k, i, r[i],
                        want[k][i]);
    }
    int8_t a1[2] = {3, 0}, r1[2] = {0, 0};
    MPI_Reduce_local(a1, r1, 2, MPI_LOGICAL1, MPI_LOR);
    MTEST_CHECK(r1[0] == -1 && r1[1] == 0, "LOGICAL1 LOR: %d %d", r1[0], r1[1]);

    /* Across ranks: rank r contributes true (r+1) except rank 0 contributes .FALSE. to LAND. */
    int32_t mine = rank == 0 ? 0 : rank + 1, all_and = 1, any_or = 1;
    MPI_Allreduce(&mine, &all_and, 1, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD);
    MPI_Allreduce(&mine, &any_or, 1, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD);
    MTEST_CHECK(all_and == 0, "Allreduce LAND: %d", all_and);
    MTEST_CHECK(any_or == (size > 1 ? -1 : 0), "Allreduce LOR: %d", any_or);
    return mtest_finalize(0);
}
