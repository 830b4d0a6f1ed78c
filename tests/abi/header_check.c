/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compile-time checks of the generated mpi.h, built as C11 and (with -x c++) as C++11 with
 * -Wall -Wextra -Werror -pedantic and never linked. It asserts the ABI's sizes and layout
 * (MPI_Status is 32 bytes with its public fields first, handles are pointer-sized, the integer
 * types are 8 bytes on LP64) and uses the constants the way programs do: in static
 * initialisers, case labels, array sizes and #if.
 */
#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#if defined(__cplusplus)
#define MF_CHECK(cond)   static_assert(cond, #cond)
#define MF_ALIGNOF(type) alignof(type)
#else
#define MF_CHECK(cond)   _Static_assert(cond, #cond)
#define MF_ALIGNOF(type) _Alignof(type)
#endif

#if MPI_VERSION != 5 || MPI_SUBVERSION != 0
#error "mpi.h must say MPI 5.0"
#endif
#if MPI_ABI_VERSION != 1 || MPI_ABI_SUBVERSION != 0
#error "mpi.h must say ABI 1.0"
#endif
#if MPI_MAX_PROCESSOR_NAME < 256 || MPI_BSEND_OVERHEAD != 512
#error "string maxima and MPI_BSEND_OVERHEAD must be usable in #if"
#endif

MF_CHECK(sizeof(MPI_Status) == 32);
MF_CHECK(MF_ALIGNOF(MPI_Status) == MF_ALIGNOF(int));
MF_CHECK(offsetof(MPI_Status, MPI_SOURCE) == 0);
MF_CHECK(offsetof(MPI_Status, MPI_TAG) == sizeof(int));
MF_CHECK(offsetof(MPI_Status, MPI_ERROR) == 2 * sizeof(int));
MF_CHECK(sizeof(MPI_Status) == MPI_F_STATUS_SIZE * sizeof(int));

MF_CHECK(sizeof(MPI_Aint) == sizeof(intptr_t));
MF_CHECK(sizeof(MPI_Offset) == 8);
MF_CHECK(sizeof(MPI_Count) == 8);
MF_CHECK(sizeof(MPI_Count) >= sizeof(MPI_Aint));

MF_CHECK(sizeof(MPI_Comm) == sizeof(void *));
MF_CHECK(sizeof(MPI_Datatype) == sizeof(void *));
MF_CHECK(sizeof(MPI_Errhandler) == sizeof(void *));
MF_CHECK(sizeof(MPI_File) == sizeof(void *));
MF_CHECK(sizeof(MPI_Group) == sizeof(void *));
MF_CHECK(sizeof(MPI_Info) == sizeof(void *));
MF_CHECK(sizeof(MPI_Message) == sizeof(void *));
MF_CHECK(sizeof(MPI_Op) == sizeof(void *));
MF_CHECK(sizeof(MPI_Request) == sizeof(void *));
MF_CHECK(sizeof(MPI_Session) == sizeof(void *));
MF_CHECK(sizeof(MPI_Win) == sizeof(void *));
MF_CHECK(sizeof(MPI_T_enum) == sizeof(void *));

/* Integer constants are compile-time constants. */
MF_CHECK(MPI_SUCCESS == 0 && MPI_ERR_ABI == 62 && MPI_ERR_LASTCODE == 16383);
MF_CHECK(MPI_ANY_SOURCE < 0 && MPI_ANY_TAG < 0 && MPI_PROC_NULL < 0 && MPI_UNDEFINED < 0);
MF_CHECK(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE);

/* Predefined handles and callbacks are constants usable in static initialisers. */
static MPI_Comm world = MPI_COMM_WORLD;
static MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_LONG_LONG_INT, MPI_C_COMPLEX};
static MPI_Op ops[] = {MPI_SUM, MPI_MAXLOC, MPI_NO_OP};
static MPI_Comm_copy_attr_function *copy_fn = MPI_COMM_DUP_FN;
static MPI_Comm_delete_attr_function *delete_fn = MPI_COMM_NULL_DELETE_FN;
static MPI_Datarep_conversion_function_c *conversion_fn = MPI_CONVERSION_FN_NULL_C;
static char processor_name[MPI_MAX_PROCESSOR_NAME];
static char error_string[MPI_MAX_ERROR_STRING];

#if defined(__cplusplus)
/* Handle types are distinct: these overloads would clash otherwise. */
static int kind(MPI_Comm)
{
    return 1;
}
static int kind(MPI_Datatype)
{
    return 2;
}
static int kind(MPI_Win)
{
    return 3;
}
static int kind(MPI_File)
{
    return 4;
}
static int kind(MPI_Session)
{
    return 5;
}
#define MF_KIND(x) kind(x)
#else
/* Handle types are distinct: a _Generic with two compatible types does not compile. */
#define MF_KIND(x)                                                                                 \
    _Generic((x), MPI_Comm : 1, MPI_Datatype : 2, MPI_Win : 3, MPI_File : 4, MPI_Session : 5,      \
             MPI_Group : 6, MPI_Info : 7, MPI_Message : 8, MPI_Op : 9, MPI_Request : 10,           \
             MPI_Errhandler : 11)
#endif

int mf_header_check_error_class(int code);
int mf_header_check_handles(void);

int mf_header_check_error_class(int code)
{
    switch (code) {
    case MPI_SUCCESS: return 0;
    case MPI_ERR_TRUNCATE: return 1;
    case MPI_T_ERR_INVALID: return 2;
    default: return 3;
    }
}

int mf_header_check_handles(void)
{
    MPI_Status status;
    MPI_Status *ignore = MPI_STATUS_IGNORE;
    const void *in_place = MPI_IN_PLACE;
    status.MPI_SOURCE = MPI_ANY_SOURCE;
    status.MPI_TAG = MPI_ANY_TAG;
    status.MPI_ERROR = MPI_SUCCESS;
    processor_name[0] = error_string[0] = '\0';
    return MF_KIND(world) + MF_KIND(types[0]) + (ops[0] == MPI_SUM) + (copy_fn == NULL) +
           (delete_fn == NULL) + (conversion_fn == NULL) + (ignore == NULL) +
           (in_place != MPI_BOTTOM) + status.MPI_SOURCE + (world == MPI_COMM_NULL) +
           (MPI_UNWEIGHTED != MPI_WEIGHTS_EMPTY) + (MPI_DISPLACEMENT_CURRENT < 0);
}
