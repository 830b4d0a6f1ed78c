/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Opt-in: the Fortran interoperability names that the MPI standard ABI leaves out, for C code
 * written before it (FFTW's mpi/f03-wrap.c, some HDF5 and PETSc paths). MPI_Fint is an int,
 * and the c2f and f2c conversions are the ABI's toint and fromint functions. Include after <mpi.h>,
 * or compile with `-include mpi_fint.h`. Header only: nothing here is exported by the library, so
 * a program built with it still runs on any standard-ABI MPI.
 */
#ifndef MANIFOLD_MPI_FINT_H
#define MANIFOLD_MPI_FINT_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int MPI_Fint;

#define MF_FINT_CONVERT(T, name)                                                                   \
    static inline MPI_Fint MPI_##name##_c2f(T handle)                                              \
    {                                                                                              \
        return MPI_##name##_toint(handle);                                                         \
    }                                                                                              \
    static inline T MPI_##name##_f2c(MPI_Fint value)                                               \
    {                                                                                              \
        return MPI_##name##_fromint(value);                                                        \
    }

MF_FINT_CONVERT(MPI_Comm, Comm)
MF_FINT_CONVERT(MPI_Errhandler, Errhandler)
MF_FINT_CONVERT(MPI_File, File)
MF_FINT_CONVERT(MPI_Group, Group)
MF_FINT_CONVERT(MPI_Info, Info)
MF_FINT_CONVERT(MPI_Message, Message)
MF_FINT_CONVERT(MPI_Op, Op)
MF_FINT_CONVERT(MPI_Request, Request)
MF_FINT_CONVERT(MPI_Session, Session)
MF_FINT_CONVERT(MPI_Datatype, Type)
MF_FINT_CONVERT(MPI_Win, Win)

#undef MF_FINT_CONVERT

/* A Fortran status is MPI_F_STATUS_SIZE integers, laid out as the C status (8 ints). */
#ifndef __cplusplus
_Static_assert(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(int),
               "MPI_Status is MPI_F_STATUS_SIZE ints");
#endif

static inline int MPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (c_status == NULL || f_status == NULL)
        return MPI_ERR_ARG;
    const int *from = (const int *)c_status;
    for (int i = 0; i < MPI_F_STATUS_SIZE; i++)
        f_status[i] = from[i];
    return MPI_SUCCESS;
}

static inline int MPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (c_status == NULL || f_status == NULL)
        return MPI_ERR_ARG;
    int *to = (int *)c_status;
    for (int i = 0; i < MPI_F_STATUS_SIZE; i++)
        to[i] = f_status[i];
    return MPI_SUCCESS;
}

#ifdef __cplusplus
}
#endif

#endif /* MANIFOLD_MPI_FINT_H */
