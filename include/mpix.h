/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Manifold extensions outside the MPI standard ABI. Include after <mpi.h>. Programs that must
 * also build against other MPI libraries can test for MANIFOLD_MPIX (or use __has_include).
 */
#ifndef MANIFOLD_MPIX_H
#define MANIFOLD_MPIX_H

#include <mpi.h>

#define MANIFOLD_MPIX 1

#ifdef __cplusplus
extern "C" {
#endif

/* Exported from the library, which is built with hidden visibility. */
#if defined(__GNUC__)
#define MF_MPIX_API __attribute__((visibility("default")))
#else
#define MF_MPIX_API
#endif

/* Partitioned communication, the MPI-4.1 proposal "MPI_Pbuf_prepare": on an active partitioned
 * send request, returns once the receiver's buffer is known to be ready for this iteration, so
 * the following MPI_Pready calls send at once; on a receive request it is the matching call
 * (returns once this side's buffer is armed). Every request must be an active partitioned
 * request (MPI_ERR_REQUEST otherwise). The *all form handles the requests together, so one
 * process may prepare its sends and its receives in one call without deadlock. */
MF_MPIX_API int MPIX_Pbuf_prepare(MPI_Request request);
MF_MPIX_API int MPIX_Pbuf_prepareall(int count, MPI_Request array_of_requests[]);
MF_MPIX_API int PMPIX_Pbuf_prepare(MPI_Request request);
MF_MPIX_API int PMPIX_Pbuf_prepareall(int count, MPI_Request array_of_requests[]);

#undef MF_MPIX_API

#ifdef __cplusplus
}
#endif

#endif /* MANIFOLD_MPIX_H */
