/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: communicator constructors beyond dup and split (MPI_Comm_create,
 * MPI_Comm_create_group, MPI_Comm_split_type, MPI_Comm_dup_with_info), communicator hints
 * (MPI_Comm_set_info, MPI_Comm_get_info) and the intercommunicator queries, which only see
 * intracommunicators for now.
 */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

static int check_group_arg(const char *func, mf_comm_t *comm, MPI_Group handle,
                           mf_group_t **group_p)
{
    mf_group_t *group = mf_group_get(handle);
    if (group != NULL) {
        *group_p = group;
        return MPI_SUCCESS;
    }
    return mf_err_raise(comm, mf_err_code(MPI_ERR_GROUP, func, "argument group: %s",
                                          handle == MPI_GROUP_NULL
                                              ? "MPI_GROUP_NULL is not a group"
                                              : "not a valid group (freed or never created)"));
}

/* Every member of group must be a process of comm (MPI_ERR_GROUP otherwise). */
static int check_subgroup(const char *func, mf_comm_t *comm, mf_group_t *group)
{
    mf_group_t *all;
    mf_status_t status = mf_group_from_comm(comm, &all);
    if (status != MF_OK)
        return mf_err_from_status(comm, status, func, "cannot build the communicator's group");
    int *in_comm = mf_group_inverse(all);
    mf_group_release(all);
    if (in_comm == NULL)
        return mf_err_raise(comm, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    int missing = -1;
    for (int i = 0; i < group->size && missing < 0; i++) {
        if (in_comm[group->world_ranks[i]] < 0)
            missing = i;
    }
    free(in_comm);
    if (missing < 0)
        return MPI_SUCCESS;
    return mf_err_raise(comm, mf_err_code(MPI_ERR_GROUP, func,
                                          "argument group: its rank %d is not a process of the "
                                          "communicator",
                                          missing));
}

/* An info argument that may be MPI_INFO_NULL (no hints, *obj_p NULL) or MPI_INFO_ENV (empty). */
static int check_info_arg(const char *func, mf_comm_t *comm, MPI_Info info, int null_ok,
                          struct MPI_ABI_Info **obj_p)
{
    *obj_p = mf_info_get_obj(info);
    if (*obj_p != NULL || info == MPI_INFO_ENV || (null_ok && info == MPI_INFO_NULL))
        return MPI_SUCCESS;
    return mf_err_raise(comm,
                        mf_err_code(MPI_ERR_INFO, func, "argument info: %s",
                                    info == MPI_INFO_NULL ? "MPI_INFO_NULL is not an info object"
                                                          : "not a valid info object"));
}

#pragma weak MPI_Comm_create = PMPI_Comm_create
int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Comm_create";
    mf_comm_t *c = NULL, *out = NULL;
    mf_group_t *g = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc == MPI_SUCCESS)
        rc = check_group_arg(func, c, group, &g);
    if (rc == MPI_SUCCESS)
        rc = check_subgroup(func, c, g);
    if (rc != MPI_SUCCESS)
        return rc;
    int my_rank = g->rank == MPI_UNDEFINED ? -1 : g->rank;
    mf_status_t status = mf_comm_create_from(c, g->size, my_rank, g->world_ranks, &out);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    *newcomm = out != NULL ? out : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_create_group = PMPI_Comm_create_group
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Comm_create_group";
    mf_comm_t *c = NULL, *out = NULL;
    mf_group_t *g = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc == MPI_SUCCESS)
        rc = check_group_arg(func, c, group, &g);
    if (rc == MPI_SUCCESS)
        rc = mf_check_send_tag(func, c, tag);
    if (rc == MPI_SUCCESS)
        rc = check_subgroup(func, c, g);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Only the group's members call; anyone else (MPI_GROUP_EMPTY included) gets no
     * communicator and talks to nobody. */
    if (g->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    mf_status_t status = mf_comm_create_group(c, g, tag, &out);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    *newcomm = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_split_type = PMPI_Comm_split_type
int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Comm_split_type";
    mf_comm_t *c = NULL, *out = NULL;
    struct MPI_ABI_Info *obj = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc == MPI_SUCCESS)
        rc = check_info_arg(func, c, info, 1, &obj);
    if (rc != MPI_SUCCESS)
        return rc;
    int shared = 0, hw = 0;
    char value[MPI_MAX_INFO_VAL] = "";
    size_t len;
    switch (split_type) {
    case MPI_COMM_TYPE_SHARED: shared = 1; break;
    case MPI_COMM_TYPE_HW_GUIDED:
        /* "mpi_shared_memory" is the node; other names are hwloc's (core_hwtopo.c); no key
         * gives MPI_COMM_NULL. */
        if (obj != NULL && mf_info_get(obj, "mpi_hw_resource_type", value, sizeof(value), &len))
            shared = strcmp(value, "mpi_shared_memory") == 0, hw = !shared;
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED: hw = 1; break;
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
    case MPI_UNDEFINED:
        /* No finer hardware level than the node is known here: nobody gets a communicator. */
        break;
    default:
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                           "argument split_type=%d is not a communicator split "
                                           "type nor MPI_UNDEFINED",
                                           split_type));
    }
    mf_status_t status = hw ? mf_comm_split_hw(c, value[0] != '\0' ? value : NULL, key, &out)
                            : mf_comm_split_shared(c, shared, key, &out);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    *newcomm = out != NULL ? out : MPI_COMM_NULL;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_dup_with_info = PMPI_Comm_dup_with_info
int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    static const char func[] = "MPI_Comm_dup_with_info";
    mf_comm_t *c = NULL, *out = NULL;
    struct MPI_ABI_Info *obj = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc == MPI_SUCCESS)
        rc = check_info_arg(func, c, info, 1, &obj);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_status_t status = mf_comm_dup(c, &out);
    /* The new communicator's hints are those of `info`, not the parent's. */
    if (status == MF_OK) {
        status = mf_comm_set_info(out, obj);
        if (status != MF_OK)
            mf_comm_free(out);
    }
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    rc = mf_binding_comm_copy_attrs(func, c, out);
    if (rc != MPI_SUCCESS)
        return rc;
    *newcomm = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_set_info = PMPI_Comm_set_info
int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    static const char func[] = "MPI_Comm_set_info";
    mf_comm_t *c = NULL;
    struct MPI_ABI_Info *obj = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = check_info_arg(func, c, info, 0, &obj);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_status_t status = mf_comm_set_info(c, obj);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot keep the hints");
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_get_info = PMPI_Comm_get_info
int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    static const char func[] = "MPI_Comm_get_info";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, info_used, "info_used");
    if (rc != MPI_SUCCESS)
        return rc;
    /* The caller owns the result (a copy), and frees it with MPI_Info_free. */
    struct MPI_ABI_Info *out = NULL;
    pthread_mutex_lock(&c->name_lock);
    mf_status_t status = c->info != NULL ? mf_info_dup(c->info, &out) : mf_info_create(&out);
    pthread_mutex_unlock(&c->name_lock);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot copy the hints");
    *info_used = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_test_inter = PMPI_Comm_test_inter
int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    static const char func[] = "MPI_Comm_test_inter";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    *flag = 0;
    return MPI_SUCCESS;
}

static int not_inter(const char *func, mf_comm_t *comm)
{
    return mf_err_raise(comm, mf_err_code(MPI_ERR_COMM, func,
                                          "argument comm is an intracommunicator, not an "
                                          "intercommunicator"));
}

#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    static const char func[] = "MPI_Comm_remote_size";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, size, "size");
    return rc != MPI_SUCCESS ? rc : not_inter(func, c);
}

#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    static const char func[] = "MPI_Comm_remote_group";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, group, "group");
    return rc != MPI_SUCCESS ? rc : not_inter(func, c);
}
