/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The opt-in header mpi_fint.h: MPI_Fint and the c2f/f2c conversions, which the standard ABI
 * leaves out and C code written before it uses (FFTW's mpi/f03-wrap.c did not build without
 * them). Handles of each kind, predefined and created, go to MPI_Fint and back unchanged, and
 * the converted communicator works; a status goes to MPI_F_STATUS_SIZE integers and back.
 * Against an MPI without the header there is nothing to test.
 */
/* first, so that the header is seen to stand on its own */
#if defined(__has_include)
#if __has_include(<mpi_fint.h>)
#include <mpi_fint.h>
#endif
#endif

#include "mtest.h"

#ifdef MANIFOLD_MPI_FINT_H

#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm comms[] = {MPI_COMM_WORLD, MPI_COMM_SELF, MPI_COMM_NULL, dup};
    for (size_t i = 0; i < sizeof(comms) / sizeof(comms[0]); i++) {
        MPI_Fint f = MPI_Comm_c2f(comms[i]);
        MTEST_CHECK(MPI_Comm_f2c(f) == comms[i], "communicator %zu: round trip through %d", i,
                    (int)f);
    }
    int size = 0, want = 0;
    MPI_Comm_size(MPI_Comm_f2c(MPI_Comm_c2f(dup)), &size);
    MPI_Comm_size(MPI_COMM_WORLD, &want);
    MTEST_CHECK(size == want, "the converted communicator has size %d, not %d", size, want);

    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MTEST_CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_INT)) == MPI_INT, "MPI_INT");
    MTEST_CHECK(MPI_Type_f2c(MPI_Type_c2f(vec)) == vec, "a vector type");
    MTEST_CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_SUM)) == MPI_SUM, "MPI_SUM");
    MPI_Group g;
    MPI_Comm_group(dup, &g);
    MTEST_CHECK(MPI_Group_f2c(MPI_Group_c2f(g)) == g, "a group");
    MPI_Info info;
    MPI_Info_create(&info);
    MTEST_CHECK(MPI_Info_f2c(MPI_Info_c2f(info)) == info, "an info");
    MTEST_CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN)) == MPI_ERRORS_RETURN,
                "MPI_ERRORS_RETURN");
    MTEST_CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL,
                "MPI_REQUEST_NULL");
    MTEST_CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL, "MPI_WIN_NULL");
    MTEST_CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL, "MPI_FILE_NULL");
    MTEST_CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC,
                "MPI_MESSAGE_NO_PROC");
    MTEST_CHECK(MPI_Session_f2c(MPI_Session_c2f(MPI_SESSION_NULL)) == MPI_SESSION_NULL,
                "MPI_SESSION_NULL");

    /* a status from a real receive to MPI_F_STATUS_SIZE integers and back */
    int rank, x = 7, y = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Status st, back;
    MPI_Sendrecv(&x, 1, MPI_INT, rank, 5, &y, 1, MPI_INT, rank, 5, MPI_COMM_WORLD, &st);
    MPI_Fint fst[MPI_F_STATUS_SIZE];
    MTEST_CHECK(MPI_Status_c2f(&st, fst) == MPI_SUCCESS, "MPI_Status_c2f");
    MTEST_CHECK(fst[MPI_F_SOURCE] == rank && fst[MPI_F_TAG] == 5,
                "Fortran status: source %d tag %d", (int)fst[MPI_F_SOURCE], (int)fst[MPI_F_TAG]);
    memset(&back, 0, sizeof(back));
    MTEST_CHECK(MPI_Status_f2c(fst, &back) == MPI_SUCCESS, "MPI_Status_f2c");
    int count = -1;
    MPI_Get_count(&back, MPI_INT, &count);
    MTEST_CHECK(back.MPI_SOURCE == rank && back.MPI_TAG == 5 && count == 1,
                "status back: source %d tag %d count %d", back.MPI_SOURCE, back.MPI_TAG, count);

    MPI_Info_free(&info);
    MPI_Group_free(&g);
    MPI_Type_free(&vec);
    MPI_Comm_free(&dup);
    return mtest_finalize(0);
}

#else /* no mpi_fint.h: nothing to check */

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    return mtest_finalize(0);
}

#endif
