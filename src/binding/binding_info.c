/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: info objects (create, set, get, delete, dup, free, key queries) and
 * MPI_Abi_get_info. MPI_INFO_ENV is read-only: reads see mf_info_env()'s object.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include "binding.h"

#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int check_key(const char *func, const char *key)
{
    if (key == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_INFO_KEY, func, "argument key is NULL"));
    size_t len = strlen(key);
    if (len == 0 || len >= MPI_MAX_INFO_KEY)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_INFO_KEY, func,
                                              "argument key has length %zu: it must be 1 to %d "
                                              "characters",
                                              len, MPI_MAX_INFO_KEY - 1));
    return MPI_SUCCESS;
}

/* Decode an info handle; MPI_INFO_ENV is allowed only for reading (its object, or NULL if it
 * could not be built). The info functions work before initialisation and after finalisation
 * too (MPI-4.1 11.4.1: an info object may be made for MPI_Session_init), so none checks it. */
static int check_info(const char *func, MPI_Info info, int writable, struct MPI_ABI_Info **obj_p)
{
    *obj_p = mf_info_get_obj(info);
    if (*obj_p != NULL)
        return MPI_SUCCESS;
    if (info == MPI_INFO_ENV && !writable) {
        *obj_p = mf_info_env();
        return MPI_SUCCESS;
    }
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_INFO, func, "argument info is %s",
                                          info == MPI_INFO_NULL ? "MPI_INFO_NULL"
                                          : info == MPI_INFO_ENV
                                              ? "MPI_INFO_ENV, which cannot be modified"
                                              : "not a valid info object"));
}

#pragma weak MPI_Info_create = PMPI_Info_create
int PMPI_Info_create(MPI_Info *info)
{
    static const char func[] = "MPI_Info_create";
    int rc = mf_check_ptr(func, NULL, info, "info");
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *obj;
    if (mf_info_create(&obj) != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *info = obj;
    return MPI_SUCCESS;
}

/* Allowed before MPI_Init (MPI-4.0): no initialisation check. */
#pragma weak MPI_Info_create_env = PMPI_Info_create_env
int PMPI_Info_create_env(int argc, char *argv[], MPI_Info *info)
{
    static const char func[] = "MPI_Info_create_env";
    if (info == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument info is NULL"));
    if (argc < 0)
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_ARG, func, "argument argc=%d is negative", argc));
    struct MPI_ABI_Info *obj;
    if (mf_info_create_env(argc, argv, &obj) != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *info = obj;
    return MPI_SUCCESS;
}

/* MPI-4.1: what hardware the calling process runs on. The keys are the implementation's to
 * choose: the host, the processors online and those this process may run on. */
#pragma weak MPI_Get_hw_resource_info = PMPI_Get_hw_resource_info
int PMPI_Get_hw_resource_info(MPI_Info *hw_info)
{
    static const char func[] = "MPI_Get_hw_resource_info";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, hw_info, "hw_info");
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *obj;
    if (mf_info_create(&obj) != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    char text[MPI_MAX_INFO_VAL];
    mf_status_t st = MF_OK;
    if (gethostname(text, sizeof(text) - 1) == 0) {
        text[sizeof(text) - 1] = '\0';
        st = mf_info_set(obj, "host", text);
    }
    snprintf(text, sizeof(text), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
    if (st == MF_OK)
        st = mf_info_set(obj, "processors_online", text);
    cpu_set_t set;
    if (st == MF_OK && sched_getaffinity(0, sizeof(set), &set) == 0) {
        snprintf(text, sizeof(text), "%d", CPU_COUNT(&set));
        st = mf_info_set(obj, "processors_allowed", text);
    }
    if (st != MF_OK) {
        mf_info_free(obj);
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    }
    *hw_info = obj;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_set = PMPI_Info_set
int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    static const char func[] = "MPI_Info_set";
    struct MPI_ABI_Info *obj;
    int rc = check_info(func, info, 1, &obj);
    if (rc == MPI_SUCCESS)
        rc = check_key(func, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (value == NULL || strlen(value) >= MPI_MAX_INFO_VAL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_INFO_VALUE, func,
                                              "argument value is NULL or longer than %d",
                                              MPI_MAX_INFO_VAL - 1));
    if (mf_info_set(obj, key, value) != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_delete = PMPI_Info_delete
int PMPI_Info_delete(MPI_Info info, const char *key)
{
    static const char func[] = "MPI_Info_delete";
    struct MPI_ABI_Info *obj;
    int rc = check_info(func, info, 1, &obj);
    if (rc == MPI_SUCCESS)
        rc = check_key(func, key);
    if (rc != MPI_SUCCESS)
        return rc;
    if (mf_info_delete(obj, key) != MF_OK)
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_INFO_NOKEY, func, "key '%s' is not in the info object", key));
    return MPI_SUCCESS;
}

/* Look key up; obj is NULL only when MPI_INFO_ENV could not be built. */
static int info_lookup(struct MPI_ABI_Info *obj, const char *key, char *value, size_t size,
                       size_t *len_p)
{
    return obj != NULL && mf_info_get(obj, key, value, size, len_p);
}

#pragma weak MPI_Info_get_string = PMPI_Info_get_string
int PMPI_Info_get_string(MPI_Info info, const char *key, int *buflen, char *value, int *flag)
{
    static const char func[] = "MPI_Info_get_string";
    struct MPI_ABI_Info *obj;
    int rc = check_info(func, info, 0, &obj);
    if (rc == MPI_SUCCESS)
        rc = check_key(func, key);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, buflen, "buflen");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, flag, "flag");
    if (rc == MPI_SUCCESS && *buflen < 0)
        rc = mf_err_raise(
            NULL, mf_err_code(MPI_ERR_ARG, func, "argument *buflen=%d is negative", *buflen));
    if (rc == MPI_SUCCESS && *buflen > 0)
        rc = mf_check_ptr(func, NULL, value, "value");
    if (rc != MPI_SUCCESS)
        return rc;
    size_t len;
    *flag = info_lookup(obj, key, *buflen > 0 ? value : NULL, (size_t)*buflen, &len);
    if (*flag)
        *buflen = (int)len + 1;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get = PMPI_Info_get
int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    static const char func[] = "MPI_Info_get";
    struct MPI_ABI_Info *obj;
    int rc = check_info(func, info, 0, &obj);
    if (rc == MPI_SUCCESS)
        rc = check_key(func, key);
    if (rc == MPI_SUCCESS && valuelen < 0)
        rc = mf_err_raise(
            NULL, mf_err_code(MPI_ERR_ARG, func, "argument valuelen=%d is negative", valuelen));
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, value, "value");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    size_t len;
    /* valuelen excludes the terminating NUL, which the caller's buffer must also hold. */
    *flag = info_lookup(obj, key, value, (size_t)valuelen + 1, &len);
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_valuelen = PMPI_Info_get_valuelen
int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    static const char func[] = "MPI_Info_get_valuelen";
    struct MPI_ABI_Info *obj;
    int rc = check_info(func, info, 0, &obj);
    if (rc == MPI_SUCCESS)
        rc = check_key(func, key);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, valuelen, "valuelen");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    size_t len;
    *flag = info_lookup(obj, key, NULL, 0, &len);
    if (*flag)
        *valuelen = (int)len;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_nkeys = PMPI_Info_get_nkeys
int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    static const char func[] = "MPI_Info_get_nkeys";
    struct MPI_ABI_Info *obj;
    int rc = check_info(func, info, 0, &obj);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, nkeys, "nkeys");
    if (rc != MPI_SUCCESS)
        return rc;
    *nkeys = obj != NULL ? mf_info_nkeys(obj) : 0;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_get_nthkey = PMPI_Info_get_nthkey
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    static const char func[] = "MPI_Info_get_nthkey";
    struct MPI_ABI_Info *obj;
    int rc = check_info(func, info, 0, &obj);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, key, "key");
    if (rc != MPI_SUCCESS)
        return rc;
    if (obj == NULL || !mf_info_nthkey(obj, n, key, MPI_MAX_INFO_KEY))
        return mf_err_raise(
            NULL, mf_err_code(MPI_ERR_ARG, func, "argument n=%d is not in [0, number of keys)", n));
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_dup = PMPI_Info_dup
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    static const char func[] = "MPI_Info_dup";
    struct MPI_ABI_Info *obj, *out;
    int rc = check_info(func, info, 0, &obj);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newinfo, "newinfo");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_status_t st = obj != NULL ? mf_info_dup(obj, &out) : mf_info_create(&out);
    if (st != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *newinfo = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Info_free = PMPI_Info_free
int PMPI_Info_free(MPI_Info *info)
{
    static const char func[] = "MPI_Info_free";
    struct MPI_ABI_Info *obj;
    int rc = mf_check_ptr(func, NULL, info, "info");
    if (rc == MPI_SUCCESS)
        rc = check_info(func, *info, 1, &obj);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_info_free(obj);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Abi_get_info = PMPI_Abi_get_info
int PMPI_Abi_get_info(MPI_Info *info)
{
    static const char func[] = "MPI_Abi_get_info";
    int rc = mf_check_ptr(func, NULL, info, "info");
    if (rc != MPI_SUCCESS)
        return rc;
    struct MPI_ABI_Info *obj;
    char text[8];
    mf_status_t st = mf_info_create(&obj);
    snprintf(text, sizeof(text), "%zu", sizeof(MPI_Aint));
    if (st == MF_OK)
        st = mf_info_set(obj, "mpi_aint_size", text);
    snprintf(text, sizeof(text), "%zu", sizeof(MPI_Count));
    if (st == MF_OK)
        st = mf_info_set(obj, "mpi_count_size", text);
    snprintf(text, sizeof(text), "%zu", sizeof(MPI_Offset));
    if (st == MF_OK)
        st = mf_info_set(obj, "mpi_offset_size", text);
    if (st != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    *info = obj;
    return MPI_SUCCESS;
}
