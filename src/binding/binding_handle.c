/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: MPI_<T>_toint and MPI_<T>_fromint for every handle type, the standard ABI's
 * replacement for the Fortran handle conversions. Predefined handles convert to their own
 * value; user handles to a registered integer (src/core/core_handle.c). Neither function can
 * return an error code: a failure is raised on MPI_COMM_SELF's handler and the result is -1
 * (toint) or the type's null handle (fromint).
 */
#include "binding.h"

static int to_int(const char *func, mf_hkind_t kind, const void *handle)
{
    /* Every object starts with its kind word; a freed one has no integer any more (its memory
     * may be the next object's by now). */
    if (mf_handle_is_object(handle) && *(const uint32_t *)handle == MF_KIND_FREED) {
        mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument is a freed handle"));
        return -1;
    }
    int value = mf_handle_toint(kind, handle);
    if (value < 0)
        mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    return value;
}

static void *from_int(const char *func, mf_hkind_t kind, int value, void *null_handle)
{
    int ok = 0;
    void *handle = mf_handle_fromint(kind, value, &ok);
    if (ok)
        return handle;
    mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                   "argument %d is not the integer of a live handle of this "
                                   "type",
                                   value));
    return null_handle;
}

#pragma weak MPI_Comm_toint = PMPI_Comm_toint
int PMPI_Comm_toint(MPI_Comm comm)
{
    return to_int("MPI_Comm_toint", MF_HKIND_COMM, comm);
}

#pragma weak MPI_Comm_fromint = PMPI_Comm_fromint
MPI_Comm PMPI_Comm_fromint(int comm)
{
    return (MPI_Comm)from_int("MPI_Comm_fromint", MF_HKIND_COMM, comm, MPI_COMM_NULL);
}

#pragma weak MPI_Type_toint = PMPI_Type_toint
int PMPI_Type_toint(MPI_Datatype datatype)
{
    return to_int("MPI_Type_toint", MF_HKIND_DATATYPE, datatype);
}

#pragma weak MPI_Type_fromint = PMPI_Type_fromint
MPI_Datatype PMPI_Type_fromint(int datatype)
{
    return (MPI_Datatype)from_int("MPI_Type_fromint", MF_HKIND_DATATYPE, datatype,
                                  MPI_DATATYPE_NULL);
}

#pragma weak MPI_Group_toint = PMPI_Group_toint
int PMPI_Group_toint(MPI_Group group)
{
    return to_int("MPI_Group_toint", MF_HKIND_GROUP, group);
}

#pragma weak MPI_Group_fromint = PMPI_Group_fromint
MPI_Group PMPI_Group_fromint(int group)
{
    return (MPI_Group)from_int("MPI_Group_fromint", MF_HKIND_GROUP, group, MPI_GROUP_NULL);
}

#pragma weak MPI_Request_toint = PMPI_Request_toint
int PMPI_Request_toint(MPI_Request request)
{
    int value = to_int("MPI_Request_toint", MF_HKIND_REQUEST, request);
    /* the request's release forgets the integer (the shared completed ones are never released) */
    mf_request_t *req = mf_request_get(request);
    if (value >= 0 && req != NULL && req->type != MF_REQ_PRECOMPLETE &&
        req->type != MF_REQ_NULL_PROC)
        req->has_int = 1;
    return value;
}

#pragma weak MPI_Request_fromint = PMPI_Request_fromint
MPI_Request PMPI_Request_fromint(int request)
{
    return (MPI_Request)from_int("MPI_Request_fromint", MF_HKIND_REQUEST, request,
                                 MPI_REQUEST_NULL);
}

#pragma weak MPI_Op_toint = PMPI_Op_toint
int PMPI_Op_toint(MPI_Op op)
{
    return to_int("MPI_Op_toint", MF_HKIND_OP, op);
}

#pragma weak MPI_Op_fromint = PMPI_Op_fromint
MPI_Op PMPI_Op_fromint(int op)
{
    return (MPI_Op)from_int("MPI_Op_fromint", MF_HKIND_OP, op, MPI_OP_NULL);
}

#pragma weak MPI_Errhandler_toint = PMPI_Errhandler_toint
int PMPI_Errhandler_toint(MPI_Errhandler errhandler)
{
    return to_int("MPI_Errhandler_toint", MF_HKIND_ERRHANDLER, errhandler);
}

#pragma weak MPI_Errhandler_fromint = PMPI_Errhandler_fromint
MPI_Errhandler PMPI_Errhandler_fromint(int errhandler)
{
    return (MPI_Errhandler)from_int("MPI_Errhandler_fromint", MF_HKIND_ERRHANDLER, errhandler,
                                    MPI_ERRHANDLER_NULL);
}

#pragma weak MPI_Win_toint = PMPI_Win_toint
int PMPI_Win_toint(MPI_Win win)
{
    return to_int("MPI_Win_toint", MF_HKIND_WIN, win);
}

#pragma weak MPI_Win_fromint = PMPI_Win_fromint
MPI_Win PMPI_Win_fromint(int win)
{
    return (MPI_Win)from_int("MPI_Win_fromint", MF_HKIND_WIN, win, MPI_WIN_NULL);
}

#pragma weak MPI_Info_toint = PMPI_Info_toint
int PMPI_Info_toint(MPI_Info info)
{
    return to_int("MPI_Info_toint", MF_HKIND_INFO, info);
}

#pragma weak MPI_Info_fromint = PMPI_Info_fromint
MPI_Info PMPI_Info_fromint(int info)
{
    return (MPI_Info)from_int("MPI_Info_fromint", MF_HKIND_INFO, info, MPI_INFO_NULL);
}

#pragma weak MPI_Session_toint = PMPI_Session_toint
int PMPI_Session_toint(MPI_Session session)
{
    return to_int("MPI_Session_toint", MF_HKIND_SESSION, session);
}

#pragma weak MPI_Session_fromint = PMPI_Session_fromint
MPI_Session PMPI_Session_fromint(int session)
{
    return (MPI_Session)from_int("MPI_Session_fromint", MF_HKIND_SESSION, session,
                                 MPI_SESSION_NULL);
}

#pragma weak MPI_Message_toint = PMPI_Message_toint
int PMPI_Message_toint(MPI_Message message)
{
    return to_int("MPI_Message_toint", MF_HKIND_MESSAGE, message);
}

#pragma weak MPI_Message_fromint = PMPI_Message_fromint
MPI_Message PMPI_Message_fromint(int message)
{
    return (MPI_Message)from_int("MPI_Message_fromint", MF_HKIND_MESSAGE, message,
                                 MPI_MESSAGE_NULL);
}

#pragma weak MPI_File_toint = PMPI_File_toint
int PMPI_File_toint(MPI_File file)
{
    return to_int("MPI_File_toint", MF_HKIND_FILE, file);
}

#pragma weak MPI_File_fromint = PMPI_File_fromint
MPI_File PMPI_File_fromint(int file)
{
    return (MPI_File)from_int("MPI_File_fromint", MF_HKIND_FILE, file, MPI_FILE_NULL);
}
