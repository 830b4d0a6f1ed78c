/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: process groups (MPI-4.1 chapter 7.3): MPI_Comm_group, the group queries, the
 * constructors (incl, excl, range forms, set operations), rank translation, comparison and
 * MPI_Group_free. Group errors belong to no communicator, so they go to MPI_COMM_SELF's handler
 * (MPI_Comm_group's to its communicator's). A result with no member is MPI_GROUP_EMPTY.
 */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

static int check_group(const char *func, MPI_Group handle, const char *arg, mf_group_t **group_p)
{
    mf_group_t *group = mf_group_get(handle);
    if (MF_LIKELY(group != NULL)) {
        *group_p = group;
        return MPI_SUCCESS;
    }
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_GROUP, func, "argument %s: %s", arg,
                                          handle == MPI_GROUP_NULL
                                              ? "MPI_GROUP_NULL is not a group"
                                              : "not a valid group (freed or never created)"));
}

static int init_group(const char *func, MPI_Group handle, mf_group_t **group_p)
{
    int rc = mf_check_initialized(func);
    return rc != MPI_SUCCESS ? rc : check_group(func, handle, "group", group_p);
}

static int no_memory(const char *func)
{
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
}

/* Make the group of the given world ranks, derived from `from`, the user's new handle. */
static int group_out(const char *func, const mf_group_t *from, int n, const int *world_ranks,
                     MPI_Group *newgroup)
{
    mf_group_t *out;
    if (mf_group_create(n, world_ranks, from->session, &out) != MF_OK)
        return no_memory(func);
    *newgroup = mf_group_handle(out);
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_group = PMPI_Comm_group
int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    static const char func[] = "MPI_Comm_group";
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, group, "group");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_group_t *out;
    mf_status_t status = mf_group_from_comm(c, &out);
    if (status != MF_OK)
        return mf_err_from_status(c, status, func, "cannot create the group");
    *group = mf_group_handle(out);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_size = PMPI_Group_size
int PMPI_Group_size(MPI_Group group, int *size)
{
    static const char func[] = "MPI_Group_size";
    mf_group_t *g = NULL;
    int rc = init_group(func, group, &g);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, size, "size");
    if (rc != MPI_SUCCESS)
        return rc;
    *size = g->size;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_rank = PMPI_Group_rank
int PMPI_Group_rank(MPI_Group group, int *rank)
{
    static const char func[] = "MPI_Group_rank";
    mf_group_t *g = NULL;
    int rc = init_group(func, group, &g);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, rank, "rank");
    if (rc != MPI_SUCCESS)
        return rc;
    *rank = g->rank;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_free = PMPI_Group_free
int PMPI_Group_free(MPI_Group *group)
{
    static const char func[] = "MPI_Group_free";
    mf_group_t *g = NULL;
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, group, "group");
    if (rc == MPI_SUCCESS)
        rc = check_group(func, *group, "group", &g);
    if (rc != MPI_SUCCESS)
        return rc;
    /* MPI_GROUP_EMPTY may be freed: constructors hand it out like any other group. */
    mf_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}

/* Checks n and the rank list of incl/excl: every rank valid in g and none repeated. On
 * success *seen_p (g->size flags, caller frees) marks the listed ranks. */
static int check_rank_list(const char *func, mf_group_t *g, int n, const int ranks[], char **seen_p)
{
    if (n < 0 || n > g->size)
        return mf_err_raise(NULL,
                            mf_err_code(MPI_ERR_ARG, func,
                                        "argument n=%d is outside [0, group size %d]", n, g->size));
    if (n > 0 && ranks == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument ranks is NULL"));
    char *seen = mf_calloc((size_t)g->size + 1, 1, "group rank flags");
    if (seen == NULL)
        return no_memory(func);
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        if (r < 0 || r >= g->size || seen[r]) {
            free(seen);
            return mf_err_raise(NULL,
                                mf_err_code(MPI_ERR_RANK, func, "argument ranks[%d]=%d %s", i, r,
                                            r < 0 || r >= g->size ? "is not a rank of the group"
                                                                  : "appears twice"));
        }
        seen[r] = 1;
    }
    *seen_p = seen;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_incl = PMPI_Group_incl
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    static const char func[] = "MPI_Group_incl";
    mf_group_t *g = NULL;
    char *seen = NULL;
    int rc = init_group(func, group, &g);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newgroup, "newgroup");
    if (rc == MPI_SUCCESS)
        rc = check_rank_list(func, g, n, ranks, &seen);
    if (rc != MPI_SUCCESS)
        return rc;
    free(seen);
    int *world = mf_malloc(sizeof(int) * (size_t)n + 1, "group ranks");
    if (world == NULL)
        return no_memory(func);
    for (int i = 0; i < n; i++)
        world[i] = g->world_ranks[ranks[i]];
    rc = group_out(func, g, n, world, newgroup);
    free(world);
    return rc;
}

/* The members of g whose flag in `drop` is 0, in group order. */
static int keep_unflagged(const char *func, mf_group_t *g, const char *drop, MPI_Group *newgroup)
{
    int *world = mf_malloc(sizeof(int) * (size_t)g->size + 1, "group ranks");
    if (world == NULL)
        return no_memory(func);
    int n = 0;
    for (int i = 0; i < g->size; i++) {
        if (!drop[i])
            world[n++] = g->world_ranks[i];
    }
    int rc = group_out(func, g, n, world, newgroup);
    free(world);
    return rc;
}

#pragma weak MPI_Group_excl = PMPI_Group_excl
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    static const char func[] = "MPI_Group_excl";
    mf_group_t *g = NULL;
    char *seen = NULL;
    int rc = init_group(func, group, &g);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newgroup, "newgroup");
    if (rc == MPI_SUCCESS)
        rc = check_rank_list(func, g, n, ranks, &seen);
    if (rc != MPI_SUCCESS)
        return rc;
    rc = keep_unflagged(func, g, seen, newgroup);
    free(seen);
    return rc;
}

/* Expands the (first, last, stride) triplets into group ranks, in order: every computed rank
 * must be valid and appear once (MPI_ERR_RANK), every stride non-zero and pointing from first
 * towards last (MPI_ERR_ARG). On success *list_p (caller frees) holds *count_p ranks. */
static int expand_ranges(const char *func, mf_group_t *g, int n, int ranges[][3], int **list_p,
                         int *count_p)
{
    if (n < 0)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument n=%d is negative", n));
    if (n > 0 && ranges == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument ranges is NULL"));
    char *seen = mf_calloc((size_t)g->size + 1, 1, "group rank flags");
    int *list = mf_malloc(sizeof(int) * (size_t)g->size + 1, "group ranks");
    if (seen == NULL || list == NULL) {
        free(seen);
        free(list);
        return no_memory(func);
    }
    int count = 0, rc = MPI_SUCCESS;
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        /* Only the ranks the triplet computes must be in the group: (0, 3, 2) on a group of 3
         * is {0, 2}, though 3 is not a rank. */
        if (first < 0 || first >= g->size) {
            rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_RANK, func,
                                                "argument ranges[%d]=(%d, %d, %d): first is not "
                                                "a rank of the group (size %d)",
                                                i, first, last, stride, g->size));
        } else if (stride == 0 || (last != first && (last < first) != (stride < 0))) {
            rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                                "argument ranges[%d]=(%d, %d, %d): the stride "
                                                "is zero or leads away from last",
                                                i, first, last, stride));
        }
        /* 64-bit steps: first + stride may not fit in an int. */
        for (long long r = first; rc == MPI_SUCCESS && (stride > 0 ? r <= last : r >= last);
             r += stride) {
            if (r < 0 || r >= g->size) {
                rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_RANK, func,
                                                    "argument ranges[%d]=(%d, %d, %d): computes "
                                                    "rank %lld, not a rank of the group (size %d)",
                                                    i, first, last, stride, r, g->size));
                break;
            }
            if (seen[r]) {
                rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_RANK, func,
                                                    "argument ranges[%d]: rank %lld appears twice",
                                                    i, r));
                break;
            }
            seen[r] = 1;
            list[count++] = (int)r;
        }
    }
    free(seen);
    if (rc != MPI_SUCCESS) {
        free(list);
        return rc;
    }
    *list_p = list;
    *count_p = count;
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_range_incl = PMPI_Group_range_incl
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    static const char func[] = "MPI_Group_range_incl";
    mf_group_t *g = NULL;
    int *list = NULL, count = 0;
    int rc = init_group(func, group, &g);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newgroup, "newgroup");
    if (rc == MPI_SUCCESS)
        rc = expand_ranges(func, g, n, ranges, &list, &count);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int i = 0; i < count; i++)
        list[i] = g->world_ranks[list[i]];
    rc = group_out(func, g, count, list, newgroup);
    free(list);
    return rc;
}

#pragma weak MPI_Group_range_excl = PMPI_Group_range_excl
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    static const char func[] = "MPI_Group_range_excl";
    mf_group_t *g = NULL;
    int *list = NULL, count = 0;
    int rc = init_group(func, group, &g);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newgroup, "newgroup");
    if (rc == MPI_SUCCESS)
        rc = expand_ranges(func, g, n, ranges, &list, &count);
    if (rc != MPI_SUCCESS)
        return rc;
    char *drop = mf_calloc((size_t)g->size + 1, 1, "group rank flags");
    if (drop == NULL) {
        free(list);
        return no_memory(func);
    }
    for (int i = 0; i < count; i++)
        drop[list[i]] = 1;
    free(list);
    rc = keep_unflagged(func, g, drop, newgroup);
    free(drop);
    return rc;
}

typedef enum { SET_UNION, SET_INTERSECTION, SET_DIFFERENCE } set_op_t;

static int set_op(const char *func, MPI_Group group1, MPI_Group group2, MPI_Group *newgroup,
                  set_op_t op)
{
    mf_group_t *a = NULL, *b = NULL;
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_group(func, group1, "group1", &a);
    if (rc == MPI_SUCCESS)
        rc = check_group(func, group2, "group2", &b);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newgroup, "newgroup");
    if (rc != MPI_SUCCESS)
        return rc;
    int *in_b = mf_group_inverse(b);
    int *world = mf_malloc(sizeof(int) * (size_t)(a->size + b->size) + 1, "group ranks");
    if (in_b == NULL || world == NULL) {
        free(in_b);
        free(world);
        return no_memory(func);
    }
    /* Order: group1's members first (in group1's order), then group2's (union only). */
    int n = 0;
    for (int i = 0; i < a->size; i++) {
        int w = a->world_ranks[i], member = in_b[w] >= 0;
        if (op == SET_UNION || (op == SET_INTERSECTION) == member)
            world[n++] = w;
        in_b[w] = -2; /* seen in group1 */
    }
    for (int i = 0; op == SET_UNION && i < b->size; i++) {
        if (in_b[b->world_ranks[i]] != -2)
            world[n++] = b->world_ranks[i];
    }
    /* From two sessions' groups (erroneous for a communicator) the first one's counts. */
    rc = group_out(func, a->session != NULL ? a : b, n, world, newgroup);
    free(in_b);
    free(world);
    return rc;
}

#pragma weak MPI_Group_union = PMPI_Group_union
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_union", group1, group2, newgroup, SET_UNION);
}

#pragma weak MPI_Group_intersection = PMPI_Group_intersection
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_intersection", group1, group2, newgroup, SET_INTERSECTION);
}

#pragma weak MPI_Group_difference = PMPI_Group_difference
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    return set_op("MPI_Group_difference", group1, group2, newgroup, SET_DIFFERENCE);
}

#pragma weak MPI_Group_translate_ranks = PMPI_Group_translate_ranks
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    static const char func[] = "MPI_Group_translate_ranks";
    mf_group_t *a = NULL, *b = NULL;
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_group(func, group1, "group1", &a);
    if (rc == MPI_SUCCESS)
        rc = check_group(func, group2, "group2", &b);
    if (rc != MPI_SUCCESS)
        return rc;
    if (n < 0 || (n > 0 && (ranks1 == NULL || ranks2 == NULL)))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              "argument n=%d is negative or ranks1/ranks2 is "
                                              "NULL",
                                              n));
    for (int i = 0; i < n; i++) {
        int r = ranks1[i];
        if ((r < 0 || r >= a->size) && r != MPI_PROC_NULL)
            return mf_err_raise(NULL, mf_err_code(MPI_ERR_RANK, func,
                                                  "argument ranks1[%d]=%d is not a rank of "
                                                  "group1 (size %d) nor MPI_PROC_NULL",
                                                  i, r, a->size));
    }
    int *in_b = mf_group_inverse(b);
    if (in_b == NULL)
        return no_memory(func);
    for (int i = 0; i < n; i++) {
        int r = ranks1[i];
        if (r == MPI_PROC_NULL)
            ranks2[i] = MPI_PROC_NULL;
        else
            ranks2[i] = in_b[a->world_ranks[r]] >= 0 ? in_b[a->world_ranks[r]] : MPI_UNDEFINED;
    }
    free(in_b);
    return MPI_SUCCESS;
}

#pragma weak MPI_Group_compare = PMPI_Group_compare
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    static const char func[] = "MPI_Group_compare";
    mf_group_t *a = NULL, *b = NULL;
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_group(func, group1, "group1", &a);
    if (rc == MPI_SUCCESS)
        rc = check_group(func, group2, "group2", &b);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, result, "result");
    if (rc != MPI_SUCCESS)
        return rc;
    if (a->size != b->size) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    int same_order = 1;
    for (int i = 0; i < a->size && same_order; i++)
        same_order = a->world_ranks[i] == b->world_ranks[i];
    if (same_order) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    int *in_b = mf_group_inverse(b);
    if (in_b == NULL)
        return no_memory(func);
    int same_set = 1;
    for (int i = 0; i < a->size && same_set; i++)
        same_set = in_b[a->world_ranks[i]] >= 0;
    free(in_b);
    *result = same_set ? MPI_SIMILAR : MPI_UNEQUAL;
    return MPI_SUCCESS;
}
