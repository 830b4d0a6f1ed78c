/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of handle decoding: predefined communicator constants resolve to the builtin
 * objects, other small values and freed objects are rejected; every predefined datatype has
 * the size and extent of the C type it stands for; error codes keep their class.
 */
#include "binding.h"
#include "unit.h"

#include <string.h>

int main(void)
{
    /* Communicators. */
    UNIT_CHECK(mf_comm_get(MPI_COMM_WORLD) == &mf_comm_world, "MPI_COMM_WORLD");
    UNIT_CHECK(mf_comm_get(MPI_COMM_SELF) == &mf_comm_self, "MPI_COMM_SELF");
    UNIT_CHECK(mf_comm_get(MPI_COMM_NULL) == NULL, "MPI_COMM_NULL is not a communicator");
    UNIT_CHECK(mf_comm_get((MPI_Comm)(uintptr_t)0x103) == NULL, "unassigned predefined value");
    UNIT_CHECK(mf_comm_get((MPI_Comm)(uintptr_t)0xfff) == NULL, "top of the reserved page");
    struct MPI_ABI_Comm fake;
    memset(&fake, 0, sizeof(fake));
    fake.kind = MF_KIND_FREED;
    UNIT_CHECK(mf_comm_get(&fake) == NULL, "a freed communicator is rejected");
    fake.kind = MF_KIND_COMM;
    UNIT_CHECK(mf_comm_get(&fake) == &fake, "a live communicator is its own handle");
    UNIT_CHECK(mf_comm_handle(&mf_comm_world) == MPI_COMM_WORLD, "world maps back to 0x101");

    /* Requests. */
    UNIT_CHECK(mf_request_get(MPI_REQUEST_NULL) == NULL, "MPI_REQUEST_NULL");
    struct MPI_ABI_Request r;
    memset(&r, 0, sizeof(r));
    r.kind = MF_KIND_REQUEST;
    UNIT_CHECK(mf_request_get(&r) == &r, "a live request");
    r.kind = MF_KIND_FREED;
    UNIT_CHECK(mf_request_get(&r) == NULL, "a freed request is rejected");

    /* Predefined datatypes. */
    struct {
        MPI_Datatype dt;
        int size, extent;
    } types[] = {
        {MPI_CHAR, 1, 1},
        {MPI_INT, (int)sizeof(int), (int)sizeof(int)},
        {MPI_LONG_DOUBLE, (int)sizeof(long double), (int)sizeof(long double)},
        {MPI_INT64_T, 8, 8},
        {MPI_C_DOUBLE_COMPLEX, 16, 16},
        {MPI_DOUBLE_INT, (int)(sizeof(double) + sizeof(int)), 16},
        {MPI_SHORT_INT, (int)(sizeof(short) + sizeof(int)), 8},
        {MPI_2INT, 8, 8},
        {MPI_INTEGER, 4, 4},
        {MPI_DOUBLE_PRECISION, 8, 8},
        {MPI_AINT, 8, 8},
        {MPI_BYTE, 1, 1},
    };
    for (unsigned i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
        const mf_dtype_info_t *info = mf_dtype_predefined(types[i].dt);
        UNIT_CHECK(info != NULL && info->size == types[i].size && info->extent == types[i].extent,
                   "datatype 0x%lx: size/extent", (unsigned long)(uintptr_t)types[i].dt);
    }
    UNIT_CHECK(mf_dtype_predefined(MPI_DATATYPE_NULL) == NULL, "MPI_DATATYPE_NULL");
    UNIT_CHECK(mf_dtype_predefined((MPI_Datatype)(uintptr_t)0x2ff) == NULL, "unassigned value");
    UNIT_CHECK(mf_dtype_predefined((MPI_Datatype)(uintptr_t)0x101) == NULL, "a communicator value");

    /* Error codes keep their class and their message. */
    int code = mf_err_code(MPI_ERR_RANK, "MPI_Send", "argument dest=%d is bad", 7);
    int cls = -1, len = 0;
    char text[MPI_MAX_ERROR_STRING];
    UNIT_CHECK(code != MPI_ERR_RANK, "a new code, not the bare class");
    UNIT_CHECK(code <= MPI_ERR_LASTCODE, "code %d within MPI_ERR_LASTCODE", code);
    UNIT_CHECK(MPI_Error_class(code, &cls) == MPI_SUCCESS && cls == MPI_ERR_RANK, "class");
    UNIT_CHECK(MPI_Error_string(code, text, &len) == MPI_SUCCESS &&
                   strstr(text, "MPI_Send") != NULL && strstr(text, "dest=7") != NULL,
               "message names function and argument: '%s'", text);
    for (int i = 0; i < 300; i++)
        code = mf_err_code(MPI_ERR_TAG, "MPI_Recv", "round %d", i);
    UNIT_CHECK(MPI_Error_class(code, &cls) == MPI_SUCCESS && cls == MPI_ERR_TAG,
               "class survives slot reuse");
    return unit_finish("handle_test");
}
