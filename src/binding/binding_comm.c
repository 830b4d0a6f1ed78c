/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: communicator constructors beyond dup and split (MPI_Comm_create,
 * MPI_Comm_create_group, MPI_Comm_split_type, MPI_Comm_dup_with_info), communicator hints
 * (MPI_Comm_set_info, MPI_Comm_get_info), intercommunicators (MPI_Intercomm_create,
 * MPI_Intercomm_create_from_groups, MPI_Intercomm_merge and the queries), MPI_Comm_idup and
 * MPI_Comm_disconnect.
 */
#include "binding.h"

#include "pt2pt.h"

#include <stdio.h>
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
    /* On an intercommunicator the group is a subset of the local group, and the remote group is
     * what the other side passed (MPI-4.1 7.4.2): a split by membership, keyed by group rank. */
    mf_status_t status = mf_comm_is_inter(c)
                             ? mf_comm_split(c, my_rank < 0 ? MPI_UNDEFINED : 0, my_rank, &out)
                             : mf_comm_create_from(c, g->size, my_rank, g->world_ranks, &out);
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
        rc = mf_check_intra(func, c); /* the standard defines it on intracommunicators only */
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc == MPI_SUCCESS)
        rc = check_group_arg(func, c, group, &g);
    if (rc == MPI_SUCCESS)
        rc = mf_check_send_tag(func, c, "tag", tag);
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
    /* Intercommunicators: the shared-memory split (each local group split by node, the
     * groups paired by node, as MPI_Comm_split does) and MPI_UNDEFINED; not the hardware ones. */
    if (rc == MPI_SUCCESS && split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_UNDEFINED)
        rc = mf_check_intra(func, c);
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
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        /* "mpi_shared_memory" is the node; other names are hwloc's (core_hwtopo.c); no key
         * gives MPI_COMM_NULL. The only resources known are hardware ones, so the resource
         * guided split is the hardware guided one. */
        if (obj != NULL && mf_info_get(obj, "mpi_hw_resource_type", value, sizeof(value), &len))
            shared = strcmp(value, "mpi_shared_memory") == 0, hw = !shared;
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED: hw = 1; break;
    case MPI_UNDEFINED: break;
    default:
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func,
                                           "argument split_type=%d is not a communicator split "
                                           "type nor MPI_UNDEFINED",
                                           split_type));
    }
    mf_status_t status = hw ? mf_comm_split_hw(c, value[0] != '\0' ? value : NULL, key, &out)
                            : mf_comm_split_shared(c, shared, key, &out);
    if (status == MF_OK && out != NULL && shared && split_type != MPI_COMM_TYPE_SHARED)
        status = mf_comm_set_resource_info(out, "mpi_shared_memory");
    /* The unguided split also says in the caller's info which resource it chose. */
    if (status == MF_OK && out != NULL && obj != NULL && split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        pthread_mutex_lock(&out->name_lock);
        if (out->info != NULL &&
            mf_info_get(out->info, "mpi_hw_resource_type", value, sizeof(value), &len))
            status = mf_info_set(obj, "mpi_hw_resource_type", value);
        pthread_mutex_unlock(&out->name_lock);
    }
    if (status != MF_OK) {
        if (out != NULL)
            mf_comm_free(out);
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    }
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
        status = mf_comm_set_info(out, obj, 0);
        if (status != MF_OK)
            mf_comm_free(out);
    }
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    rc = mf_binding_comm_copy_attrs(func, c, out, NULL);
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
    mf_status_t status = mf_comm_update_info(c, obj);
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
    /* The assertions are reported as they are in effect (MPI-4.1 section 7.4.4: with the
     * defaults of those supported): what every member asserted, plus those the traffic was
     * spread by, which a later MPI_Comm_set_info of "false" cannot lift. Intercommunicators
     * keep the hints given but use none: there only the defaults are added. */
    static const struct {
        const char *key;
        unsigned bit;
    } assertions[] = {{"mpi_assert_no_any_source", MF_HINT_NO_ANY_SOURCE},
                      {"mpi_assert_no_any_tag", MF_HINT_NO_ANY_TAG},
                      {"mpi_assert_allow_overtaking", MF_HINT_ALLOW_OVERTAKING},
                      {"mpi_assert_exact_length", MF_HINT_EXACT_LENGTH}};
    unsigned in_effect = c->hints | c->spread_by;
    for (size_t i = 0; i < sizeof(assertions) / sizeof(assertions[0]) && status == MF_OK; i++) {
        size_t len;
        if (mf_comm_is_inter(c) && mf_info_get(out, assertions[i].key, NULL, 0, &len))
            continue;
        status =
            mf_info_set(out, assertions[i].key, in_effect & assertions[i].bit ? "true" : "false");
    }
    if (status == MF_OK)
        status = mf_info_memory_kinds(out);
    if (status != MF_OK) {
        if (out != NULL)
            mf_info_free(out);
        return mf_err_from_status(c, status, func, "cannot copy the hints");
    }
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
    *flag = mf_comm_is_inter(c);
    return MPI_SUCCESS;
}

static int check_inter(const char *func, const char *arg, mf_comm_t *comm)
{
    if (mf_comm_is_inter(comm))
        return MPI_SUCCESS;
    return mf_err_raise(comm, mf_err_code(MPI_ERR_COMM, func,
                                          "argument %s is an intracommunicator, not an "
                                          "intercommunicator",
                                          arg));
}

#pragma weak MPI_Comm_remote_size = PMPI_Comm_remote_size
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    static const char func[] = "MPI_Comm_remote_size";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, size, "size");
    if (rc == MPI_SUCCESS)
        rc = check_inter(func, "comm", c);
    if (rc != MPI_SUCCESS)
        return rc;
    *size = c->remote_size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_remote_group = PMPI_Comm_remote_group
int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    static const char func[] = "MPI_Comm_remote_group";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, group, "group");
    if (rc == MPI_SUCCESS)
        rc = check_inter(func, "comm", c);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_group_t *out;
    mf_status_t status = mf_group_create(c->remote_size, c->remote_ranks, c->session, &out);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot build the remote group");
    *group = mf_group_handle(out);
    return MPI_SUCCESS;
}

/* Raise an error of an intercommunicator constructor whose class the core layer reported
 * (the leader's verdict or overlapping groups) or that the transport caused. */
static int inter_error(const char *func, mf_comm_t *comm, mf_status_t status, int err_class,
                       const char *leader_why)
{
    if (status != MF_ERR_INVALID || err_class == 0)
        return mf_err_from_status(comm, status, func, "cannot create the intercommunicator");
    if (err_class == MPI_ERR_GROUP && leader_why == NULL)
        return mf_err_raise(comm, mf_err_code(MPI_ERR_GROUP, func,
                                              "the local and remote groups overlap (they must "
                                              "be disjoint)"));
    if (leader_why != NULL)
        return mf_err_raise(comm, mf_err_code(err_class, func, "%s", leader_why));
    return mf_err_raise(comm, mf_err_code(err_class, func,
                                          "the local leader rejected its arguments peer_comm or "
                                          "remote_leader"));
}

#pragma weak MPI_Intercomm_create = PMPI_Intercomm_create
int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    static const char func[] = "MPI_Intercomm_create";
    mf_comm_t *c = NULL, *out = NULL;
    int rc = mf_check_init_comm_arg(func, "local_comm", local_comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_intra_arg(func, "local_comm", c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newintercomm, "newintercomm");
    if (rc == MPI_SUCCESS && (local_leader < 0 || local_leader >= c->size))
        rc = mf_err_raise(c, mf_err_code(MPI_ERR_RANK, func,
                                         "argument local_leader=%d is not a rank of local_comm "
                                         "(size %d)",
                                         local_leader, c->size));
    if (rc == MPI_SUCCESS)
        rc = mf_check_send_tag(func, c, "tag", tag);
    if (rc != MPI_SUCCESS)
        return rc;
    /* peer_comm and remote_leader only matter at the leader; its verdict reaches the others
     * inside the call so that nobody is left waiting. */
    int leader_err = 0;
    char why[160] = "";
    mf_comm_t *p = NULL;
    if (c->rank == local_leader) {
        p = mf_comm_get(peer_comm);
        if (p == NULL) {
            leader_err = MPI_ERR_COMM;
            snprintf(why, sizeof(why), "argument peer_comm: %s",
                     peer_comm == MPI_COMM_NULL ? "MPI_COMM_NULL is not a communicator"
                                                : "not a valid communicator");
        } else if (remote_leader < 0 || remote_leader >= mf_comm_peer_size(p)) {
            /* MPI-5.0 allows an intercommunicator: the remote leader is then a rank of its
             * remote group, as for any point-to-point call on it */
            leader_err = MPI_ERR_RANK;
            snprintf(why, sizeof(why),
                     "argument remote_leader=%d is not a rank of peer_comm (%s %d)", remote_leader,
                     mf_comm_is_inter(p) ? "remote size" : "size", mf_comm_peer_size(p));
        } else {
            int w = mf_comm_peer_world_rank(p, remote_leader);
            for (int i = 0; i < c->size && leader_err == 0; i++) {
                if (mf_comm_world_rank(c, i) == w) {
                    leader_err = MPI_ERR_RANK;
                    snprintf(why, sizeof(why),
                             "argument remote_leader=%d is a process of local_comm (rank %d): "
                             "the remote leader must belong to the other group",
                             remote_leader, i);
                }
            }
        }
    }
    int err_class = 0;
    mf_status_t status = mf_comm_intercomm_create(c, local_leader, p, remote_leader, tag,
                                                  leader_err, &err_class, &out);
    if (status != MF_OK)
        return inter_error(func, c, status, err_class, leader_err != 0 ? why : NULL);
    *newintercomm = out;
    return MPI_SUCCESS;
}

static int check_group_on(const char *func, MPI_Errhandler eh, MPI_Group handle, const char *arg,
                          mf_group_t **group_p)
{
    *group_p = mf_group_get(handle);
    if (*group_p != NULL)
        return MPI_SUCCESS;
    return mf_err_raise_with(eh, mf_err_code(MPI_ERR_GROUP, func, "argument %s: %s", arg,
                                             handle == MPI_GROUP_NULL
                                                 ? "MPI_GROUP_NULL is not a group"
                                                 : "not a valid group (freed or never created)"));
}

/* The integer tag of a string tag (FNV-1a into the tag range): equal strings agree. */
/* The first member of `a` that is also in `b`, or -1. */
static int groups_overlap(const mf_group_t *a, const mf_group_t *b, int *overlap_p)
{
    int *in_b = mf_group_inverse(b);
    if (in_b == NULL)
        return -1;
    *overlap_p = -1;
    for (int i = 0; i < a->size && *overlap_p < 0; i++) {
        if (in_b[a->world_ranks[i]] >= 0)
            *overlap_p = i;
    }
    free(in_b);
    return 0;
}

#pragma weak MPI_Intercomm_create_from_groups = PMPI_Intercomm_create_from_groups
int PMPI_Intercomm_create_from_groups(MPI_Group local_group, int local_leader,
                                      MPI_Group remote_group, int remote_leader,
                                      const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newintercomm)
{
    static const char func[] = "MPI_Intercomm_create_from_groups";
    int rc = mf_check_initialized(func);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = mf_check_new_comm_errhandler(func, errhandler);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_group_t *lg = NULL, *rg = NULL;
    rc = check_group_on(func, errhandler, local_group, "local_group", &lg);
    if (rc == MPI_SUCCESS)
        rc = check_group_on(func, errhandler, remote_group, "remote_group", &rg);
    if (rc != MPI_SUCCESS)
        return rc;
    if (stringtag == NULL || newintercomm == NULL)
        return mf_err_raise_with(errhandler,
                                 mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL",
                                             stringtag == NULL ? "stringtag" : "newintercomm"));
    if (strnlen(stringtag, MPI_MAX_STRINGTAG_LEN) >= MPI_MAX_STRINGTAG_LEN)
        return mf_err_raise_with(errhandler, mf_err_code(MPI_ERR_ARG, func,
                                                         "argument stringtag is longer than "
                                                         "MPI_MAX_STRINGTAG_LEN-1 (%d) characters",
                                                         MPI_MAX_STRINGTAG_LEN - 1));
    struct MPI_ABI_Info *in = mf_info_get_obj(info);
    if (in == NULL && info != MPI_INFO_NULL && info != MPI_INFO_ENV)
        return mf_err_raise_with(
            errhandler,
            mf_err_code(MPI_ERR_INFO, func, "argument info is not a valid info object"));
    if (local_leader < 0 || local_leader >= lg->size)
        return mf_err_raise_with(errhandler,
                                 mf_err_code(MPI_ERR_RANK, func,
                                             "argument local_leader=%d is not a rank of "
                                             "local_group (size %d)",
                                             local_leader, lg->size));
    if (remote_leader < 0 || remote_leader >= rg->size)
        return mf_err_raise_with(errhandler,
                                 mf_err_code(MPI_ERR_RANK, func,
                                             "argument remote_leader=%d is not a rank of "
                                             "remote_group (size %d)",
                                             remote_leader, rg->size));
    if (lg->rank == MPI_UNDEFINED)
        return mf_err_raise_with(errhandler,
                                 mf_err_code(MPI_ERR_GROUP, func,
                                             "argument local_group does not contain the "
                                             "calling process"));
    int overlap = -1;
    if (groups_overlap(rg, lg, &overlap) != 0)
        return mf_err_raise_with(errhandler, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    if (overlap >= 0)
        return mf_err_raise_with(errhandler,
                                 mf_err_code(MPI_ERR_GROUP, func,
                                             "rank %d of remote_group is also in local_group "
                                             "(the groups must be disjoint)",
                                             overlap));
    int err_class = 0;
    mf_comm_t *out = NULL;
    mf_status_t status = mf_comm_intercomm_from_groups(
        lg, local_leader, rg->world_ranks[remote_leader], stringtag, &err_class, &out);
    if (status == MF_OK && in != NULL)
        status = mf_comm_set_info(out, in, 0);
    if (status != MF_OK) {
        if (out != NULL)
            mf_comm_free(out);
        return mf_err_raise_with(errhandler,
                                 mf_err_code(err_class != 0 ? err_class : MPI_ERR_OTHER, func,
                                             "cannot create the intercommunicator: %s",
                                             mf_status_str(status)));
    }
    mf_errhandler_retain(errhandler);
    mf_errhandler_release(atomic_exchange(&out->errhandler, errhandler));
    out->session = lg->session;
    *newintercomm = out;
    return MPI_SUCCESS;
}

#pragma weak MPI_Intercomm_merge = PMPI_Intercomm_merge
int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    static const char func[] = "MPI_Intercomm_merge";
    mf_comm_t *c = NULL, *out = NULL;
    int rc = mf_check_init_comm_arg(func, "intercomm", intercomm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newintracomm, "newintracomm");
    if (rc == MPI_SUCCESS)
        rc = check_inter(func, "intercomm", c);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_status_t status = mf_comm_intercomm_merge(c, high, &out);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    *newintracomm = out;
    return MPI_SUCCESS;
}

/* MPI_Comm_idup returns at once with the new handle; the context-id agreement runs as a
 * collective schedule and the communicator is usable when the request completes. Attributes
 * are copied at the call; hints from idup_with_info's info replace the parent's. */
static int idup_common(const char *func, MPI_Comm comm, int with_info, MPI_Info info,
                       MPI_Comm *newcomm, MPI_Request *request)
{
    mf_comm_t *c = NULL, *out = NULL;
    struct MPI_ABI_Info *obj = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, newcomm, "newcomm");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, request, "request");
    if (rc == MPI_SUCCESS && with_info)
        rc = check_info_arg(func, c, info, 1, &obj);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_request_t *req = NULL;
    mf_status_t status = mf_comm_idup(c, with_info, obj, &out, &req);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the communicator");
    rc = mf_binding_comm_copy_attrs(func, c, out, req);
    if (rc != MPI_SUCCESS)
        return rc;
    *newcomm = out;
    *request = req;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_idup = PMPI_Comm_idup
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_common("MPI_Comm_idup", comm, 0, MPI_INFO_NULL, newcomm, request);
}

#pragma weak MPI_Comm_idup_with_info = PMPI_Comm_idup_with_info
int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    return idup_common("MPI_Comm_idup_with_info", comm, 1, info, newcomm, request);
}

#pragma weak MPI_Comm_disconnect = PMPI_Comm_disconnect
int PMPI_Comm_disconnect(MPI_Comm *comm)
{
    static const char func[] = "MPI_Comm_disconnect";
    mf_comm_t *c = NULL;
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, comm, "comm");
    if (rc == MPI_SUCCESS)
        rc = mf_check_comm(func, *comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (c == &mf_comm_world || c == &mf_comm_self)
        return mf_err_raise(c, mf_err_code(MPI_ERR_COMM, func,
                                           "argument comm: %s is predefined and cannot be "
                                           "disconnected",
                                           c->name));
    /* MPI-4.1 section 11.10.4: wait for the pending communication, then free collectively. */
    mf_status_t status = mf_comm_quiesce(c);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot wait for the communication to end");
    rc = mf_binding_comm_delete_attrs(func, c);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dynproc_forget(c); /* MPI_Comm_get_parent answers MPI_COMM_NULL from now on */
    mf_comm_free(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
