/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: reduction operations (MPI-4.1 section 6.9): MPI_Op_create(_c), MPI_Op_free,
 * MPI_Op_commutative and MPI_Reduce_local(_c), and the operation check the reduction
 * collectives share. Errors not tied to a communicator go to MPI_COMM_SELF's handler.
 */
#include "binding.h"

#include "coll.h"

#include <stdlib.h>

int mf_check_op(const char *func, mf_comm_t *comm, MPI_Op op, MPI_Datatype dt)
{
    /* A predefined reduction operation defined on dt: every correct call, one table look-up. */
    if (MF_LIKELY(op != MPI_REPLACE && op != MPI_NO_OP && mf_handle_is_predefined(op) &&
                  mf_op_check(op, dt) == MF_OK))
        return MPI_SUCCESS;
    if (op == MPI_OP_NULL)
        return mf_err_raise(comm, mf_err_code(MPI_ERR_OP, func, "argument op is MPI_OP_NULL"));
    if (!mf_op_valid(op))
        return mf_err_raise(comm, mf_err_code(MPI_ERR_OP, func,
                                              "argument op is not a valid operation (freed or "
                                              "never created)"));
    if (op == MPI_REPLACE || op == MPI_NO_OP)
        return mf_err_raise(comm, mf_err_code(MPI_ERR_OP, func,
                                              "argument op=%s is only allowed in one-sided "
                                              "accumulate operations",
                                              mf_op_name(op)));
    if (mf_op_check(op, dt) != MF_OK) {
        const mf_dtype_info_t *info = mf_dtype_predefined(dt);
        return mf_err_raise(
            comm, mf_err_code(MPI_ERR_OP, func, "argument op=%s is not defined for datatype %s",
                              mf_op_name(op), info != NULL ? info->name : "(unknown)"));
    }
    return MPI_SUCCESS;
}

static int op_create(const char *func, MPI_User_function *fn, MPI_User_function_c *fn_c,
                     int commute, MPI_Op *op)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS && fn == NULL && fn_c == NULL)
        rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument user_fn is NULL"));
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, op, "op");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_op_t *obj;
    mf_status_t status = mf_op_create(fn, fn_c, commute, &obj);
    if (status != MF_OK)
        return mf_err_from_status(NULL, status, func, "cannot create the operation");
    *op = obj;
    return MPI_SUCCESS;
}

#pragma weak MPI_Op_create = PMPI_Op_create
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create", user_fn, NULL, commute, op);
}

#pragma weak MPI_Op_create_c = PMPI_Op_create_c
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create("MPI_Op_create_c", NULL, user_fn, commute, op);
}

#pragma weak MPI_Op_free = PMPI_Op_free
int PMPI_Op_free(MPI_Op *op)
{
    static const char func[] = "MPI_Op_free";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, op, "op");
    if (rc != MPI_SUCCESS)
        return rc;
    if (*op == MPI_OP_NULL || !mf_op_valid(*op))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_OP, func,
                                              "argument op is not a valid operation (null, "
                                              "freed or never created)"));
    if (mf_op_is_predefined(*op))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_OP, func,
                                              "argument op=%s is predefined and cannot be freed",
                                              mf_op_name(*op)));
    mf_op_free(*op);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Op_commutative = PMPI_Op_commutative
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    static const char func[] = "MPI_Op_commutative";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, commute, "commute");
    if (rc != MPI_SUCCESS)
        return rc;
    if (op == MPI_OP_NULL || !mf_op_valid(op))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_OP, func,
                                              "argument op is not a valid operation (null, "
                                              "freed or never created)"));
    *commute = mf_op_commutative(op);
    return MPI_SUCCESS;
}

static int reduce_local(const char *func, const void *inbuf, void *inoutbuf, MPI_Count count,
                        MPI_Datatype dt, MPI_Op op)
{
    size_t bytes = 0;
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_count(func, NULL, "count", count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, NULL, "datatype", dt, count, &bytes);
    MPI_Datatype basic;
    size_t mul, extent;
    if (rc == MPI_SUCCESS) /* as the reductions check it: a derived type by its basic type */
        rc = mf_cbuf_red_type(func, NULL, op, dt, &basic, &mul, &extent);
    if (rc == MPI_SUCCESS)
        rc = mf_check_buffer(func, NULL, "inbuf", inbuf, bytes);
    if (rc == MPI_SUCCESS)
        rc = mf_check_buffer(func, NULL, "inoutbuf", inoutbuf, bytes);
    if (rc == MPI_SUCCESS && (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE))
        rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_BUFFER, func,
                                            "MPI_IN_PLACE is not allowed in MPI_Reduce_local"));
    if (rc != MPI_SUCCESS)
        return rc;
    if (mf_dtype_get(dt) == NULL || !mf_handle_is_predefined(op)) {
        /* a user function takes the operands as they lie, with the caller's type */
        mf_op_apply_native(op, inbuf, inoutbuf, (size_t)count, dt);
        return MPI_SUCCESS;
    }
    /* A predefined operation on a derived type (of one basic type: an f90 type, a vector of
     * doubles) reduces its packed elements, as the collectives do. */
    char *a = malloc(bytes > 0 ? bytes : 1), *b = malloc(bytes > 0 ? bytes : 1);
    if (a == NULL || b == NULL) {
        free(a);
        free(b);
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_NO_MEM, func,
                                        "no memory to pack %zu bytes of the operands", bytes));
    }
    mf_dtype_pack(dt, count, inbuf, a, 0, (MPI_Count)bytes);
    mf_dtype_pack(dt, count, inoutbuf, b, 0, (MPI_Count)bytes);
    mf_op_apply(op, a, b, (size_t)count, dt);
    mf_dtype_unpack(dt, count, inoutbuf, b, 0, (MPI_Count)bytes);
    free(a);
    free(b);
    return MPI_SUCCESS;
}

#pragma weak MPI_Reduce_local = PMPI_Reduce_local
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    return reduce_local("MPI_Reduce_local", inbuf, inoutbuf, count, datatype, op);
}

#pragma weak MPI_Reduce_local_c = PMPI_Reduce_local_c
int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op)
{
    return reduce_local("MPI_Reduce_local_c", inbuf, inoutbuf, count, datatype, op);
}
