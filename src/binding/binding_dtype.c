/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: datatype entry points. The constructors (int and large-count forms share one
 * checked implementation each), commit/free/dup, the size and extent queries, envelope and
 * contents with the ABI's combiner values, names, MPI_Type_match_size, addresses, and
 * MPI_Pack/MPI_Unpack in the native and the external32 representation. Errors that belong to
 * no communicator are raised on MPI_COMM_SELF, as the standard says.
 */
#include "binding.h"

#include <stdlib.h>
#include <string.h>

/* A handle that is a supported predefined type or a live derived type (committed or not). */
static int check_type(const char *func, MPI_Datatype dt, const char *arg, mf_dtype_props_t *p)
{
    if (MF_LIKELY(mf_dtype_props(dt, p) == MF_OK))
        return MPI_SUCCESS;
    size_t unused;
    return mf_check_datatype(func, NULL, arg, dt, 0, &unused);
}

/* check_type for a type a constructor builds on, which must leave room for one more level. */
static int check_oldtype(const char *func, MPI_Datatype dt, const char *arg, mf_dtype_props_t *p)
{
    int rc = check_type(func, dt, arg, p);
    mf_dtype_t *d = mf_dtype_get(dt);
    if (rc == MPI_SUCCESS && d != NULL && d->depth >= MF_DTYPE_DEPTH_MAX)
        rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_TYPE, func,
                                            "argument %s is a datatype %d levels deep: no "
                                            "type may be built on one that deep (types nest "
                                            "at most %d levels)",
                                            arg, d->depth, MF_DTYPE_DEPTH_MAX));
    return rc;
}

static int check_nonneg(const char *func, const char *arg, MPI_Count v, int cls)
{
    if (MF_LIKELY(v >= 0))
        return MPI_SUCCESS;
    return mf_err_raise(NULL,
                        mf_err_code(cls, func, "argument %s=%lld is negative", arg, (long long)v));
}

static int check_array(const char *func, const void *a, MPI_Count n, const char *arg)
{
    return n > 0 ? mf_check_ptr(func, NULL, a, arg) : MPI_SUCCESS;
}

static int is_f90(const mf_dtype_t *d);

static int raise_status(const char *func, mf_status_t st)
{
    return mf_err_from_status(NULL, st, func, "cannot create the datatype");
}

/* ---- contents ---------------------------------------------------------------------------- */

/* What MPI_Type_get_contents returns, gathered while a constructor checks its arguments. With
 * a large-count constructor, counts and displacements go to the large-count array. */
typedef struct contents {
    int large;
    MPI_Count ni, na, nc, nt;
    int *i;
    MPI_Aint *a;
    MPI_Count *c;
    MPI_Datatype *t;
} contents_t;

static int contents_init(contents_t *ct, int large, MPI_Count cap, MPI_Count ntypes)
{
    memset(ct, 0, sizeof(*ct));
    ct->large = large;
    ct->i = malloc(sizeof(int) * (size_t)(cap + 1));
    ct->a = malloc(sizeof(MPI_Aint) * (size_t)(cap + 1));
    ct->c = malloc(sizeof(MPI_Count) * (size_t)(cap + 1));
    ct->t = malloc(sizeof(MPI_Datatype) * (size_t)(ntypes + 1));
    return ct->i != NULL && ct->a != NULL && ct->c != NULL && ct->t != NULL;
}

static void contents_fini(contents_t *ct)
{
    free(ct->i);
    free(ct->a);
    free(ct->c);
    free(ct->t);
}

static void put_int(contents_t *ct, MPI_Count v)
{
    ct->i[ct->ni++] = (int)v;
}
/* a count: an integer, or a large count */
static void put_count(contents_t *ct, MPI_Count v)
{
    if (ct->large)
        ct->c[ct->nc++] = v;
    else
        ct->i[ct->ni++] = (int)v;
}
/* a byte displacement: an address, or a large count */
static void put_addr(contents_t *ct, MPI_Count v)
{
    if (ct->large)
        ct->c[ct->nc++] = v;
    else
        ct->a[ct->na++] = (MPI_Aint)v;
}

/* Record the contents on the new type and hand it to the user. */
static int finish(const char *func, mf_status_t st, mf_dtype_t *d, contents_t *ct,
                  MPI_Datatype *newtype)
{
    if (st == MF_OK)
        st = mf_dtype_set_contents(d, ct->ni, ct->i, ct->na, ct->a, ct->nc, ct->c, ct->nt, ct->t);
    contents_fini(ct);
    if (st != MF_OK) {
        if (d != NULL)
            mf_dtype_release(d);
        return raise_status(func, st);
    }
    *newtype = d;
    return MPI_SUCCESS;
}

static int nomem(const char *func, contents_t *ct)
{
    contents_fini(ct);
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
}

/* ---- contiguous, vector, hvector --------------------------------------------------------- */

static int vector_common(const char *func, int combiner, int large, MPI_Count count,
                         MPI_Count blocklen, MPI_Count stride, MPI_Datatype old,
                         MPI_Datatype *newtype)
{
    mf_dtype_props_t p = {0};
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_nonneg(func, "count", count, MPI_ERR_COUNT);
    if (rc == MPI_SUCCESS)
        rc = check_nonneg(func, "blocklength", blocklen, MPI_ERR_COUNT);
    if (rc == MPI_SUCCESS)
        rc = check_oldtype(func, old, "oldtype", &p);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newtype, "newtype");
    if (rc != MPI_SUCCESS)
        return rc;
    contents_t ct;
    if (!contents_init(&ct, large, 3, 1))
        return nomem(func, &ct);
    put_count(&ct, count);
    ct.t[ct.nt++] = old;
    mf_dtype_t *d = NULL;
    mf_status_t st;
    if (combiner == MPI_COMBINER_CONTIGUOUS) {
        st = mf_dtype_create_vector(1, count, 0, old, combiner, &d);
    } else {
        put_count(&ct, blocklen);
        if (combiner == MPI_COMBINER_VECTOR)
            put_count(&ct, stride);
        else
            put_addr(&ct, stride);
        MPI_Aint bytes = (MPI_Aint)stride;
        if (combiner == MPI_COMBINER_VECTOR &&
            __builtin_mul_overflow((MPI_Aint)stride, p.extent, &bytes))
            st = MF_ERR_OVERFLOW;
        else
            st = mf_dtype_create_vector(count, blocklen, bytes, old, combiner, &d);
    }
    return finish(func, st, d, &ct, newtype);
}

#pragma weak MPI_Type_contiguous = PMPI_Type_contiguous
int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector_common("MPI_Type_contiguous", MPI_COMBINER_CONTIGUOUS, 0, count, 1, 0, oldtype,
                         newtype);
}
#pragma weak MPI_Type_contiguous_c = PMPI_Type_contiguous_c
int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector_common("MPI_Type_contiguous_c", MPI_COMBINER_CONTIGUOUS, 1, count, 1, 0, oldtype,
                         newtype);
}
#pragma weak MPI_Type_vector = PMPI_Type_vector
int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return vector_common("MPI_Type_vector", MPI_COMBINER_VECTOR, 0, count, blocklength, stride,
                         oldtype, newtype);
}
#pragma weak MPI_Type_vector_c = PMPI_Type_vector_c
int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector_common("MPI_Type_vector_c", MPI_COMBINER_VECTOR, 1, count, blocklength, stride,
                         oldtype, newtype);
}
#pragma weak MPI_Type_create_hvector = PMPI_Type_create_hvector
int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return vector_common("MPI_Type_create_hvector", MPI_COMBINER_HVECTOR, 0, count, blocklength,
                         stride, oldtype, newtype);
}
#pragma weak MPI_Type_create_hvector_c = PMPI_Type_create_hvector_c
int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector_common("MPI_Type_create_hvector_c", MPI_COMBINER_HVECTOR, 1, count, blocklength,
                         stride, oldtype, newtype);
}

/* ---- indexed, hindexed, indexed_block, hindexed_block, struct ---------------------------- */

/* The arguments of every list constructor, widened to MPI_Count: `bl` has one entry (block
 * forms) or `count`; `types` has one entry or `count` (struct). */
typedef struct list_args {
    MPI_Count count;
    const MPI_Count *bl;
    int one_bl;
    const MPI_Count *disp;
    int disp_bytes; /* h forms and struct: displacements in bytes */
    const MPI_Datatype *types;
    int one_type;
} list_args_t;

static int list_common(const char *func, int combiner, int large, const list_args_t *la,
                       MPI_Datatype *newtype)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_nonneg(func, "count", la->count, MPI_ERR_COUNT);
    if (rc == MPI_SUCCESS)
        rc = check_array(func, la->bl, la->one_bl ? 1 : la->count, "array_of_blocklengths");
    if (rc == MPI_SUCCESS)
        rc = check_array(func, la->disp, la->count, "array_of_displacements");
    if (rc == MPI_SUCCESS)
        rc = check_array(func, la->types, la->one_type ? 1 : la->count, "array_of_types");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newtype, "newtype");
    MPI_Count ntypes = la->one_type ? 1 : la->count;
    for (MPI_Count i = 0; rc == MPI_SUCCESS && i < ntypes; i++) {
        mf_dtype_props_t p = {0};
        rc = check_oldtype(func, la->types[i], la->one_type ? "oldtype" : "array_of_types", &p);
    }
    for (MPI_Count i = 0; rc == MPI_SUCCESS && i < (la->one_bl ? 1 : la->count); i++)
        rc = check_nonneg(func, la->one_bl ? "blocklength" : "array_of_blocklengths", la->bl[i],
                          MPI_ERR_COUNT);
    if (rc != MPI_SUCCESS)
        return rc;
    contents_t ct;
    MPI_Count n = la->count;
    if (!contents_init(&ct, large, 2 * n + 2, ntypes))
        return nomem(func, &ct);
    MPI_Count *bls = malloc(sizeof(MPI_Count) * (size_t)(n + 1));
    MPI_Aint *disps = malloc(sizeof(MPI_Aint) * (size_t)(n + 1));
    if (bls == NULL || disps == NULL) {
        free(bls);
        free(disps);
        return nomem(func, &ct);
    }
    mf_dtype_props_t op = {0};
    if (la->one_type) /* displacements in multiples of the one old type's extent */
        mf_dtype_props(la->types[0], &op);
    put_count(&ct, n);
    if (la->one_bl)
        put_count(&ct, la->bl[0]);
    int overflow = 0;
    for (MPI_Count i = 0; i < n; i++) {
        bls[i] = la->bl[la->one_bl ? 0 : i];
        disps[i] = (MPI_Aint)la->disp[i];
        if (!la->disp_bytes)
            overflow |= __builtin_mul_overflow((MPI_Aint)la->disp[i], op.extent, &disps[i]);
        if (!la->one_bl)
            put_count(&ct, bls[i]);
    }
    for (MPI_Count i = 0; i < n; i++) {
        if (la->disp_bytes)
            put_addr(&ct, la->disp[i]);
        else
            put_count(&ct, la->disp[i]);
    }
    for (MPI_Count i = 0; i < ntypes; i++)
        ct.t[ct.nt++] = la->types[i];
    mf_dtype_t *d = NULL;
    mf_status_t st =
        overflow ? MF_ERR_OVERFLOW
                 : mf_dtype_create_list(n, bls, disps, la->types, la->one_type, combiner, &d);
    free(bls);
    free(disps);
    return finish(func, st, d, &ct, newtype);
}

/* Widen an int array (NULL stays NULL); *ok is cleared when memory runs out. */
static MPI_Count *widen(const int *a, MPI_Count n, int *ok)
{
    if (a == NULL)
        return NULL;
    MPI_Count *w = malloc(sizeof(MPI_Count) * (size_t)(n > 0 ? n : 1));
    if (w == NULL) {
        *ok = 0;
        return NULL;
    }
    for (MPI_Count i = 0; i < n; i++)
        w[i] = a[i];
    return w;
}

static MPI_Count *widen_aint(const MPI_Aint *a, MPI_Count n, int *ok)
{
    if (a == NULL)
        return NULL;
    MPI_Count *w = malloc(sizeof(MPI_Count) * (size_t)(n > 0 ? n : 1));
    if (w == NULL) {
        *ok = 0;
        return NULL;
    }
    for (MPI_Count i = 0; i < n; i++)
        w[i] = a[i];
    return w;
}

/* The int forms: widen the arrays, then the common path. */
static int list_int(const char *func, int combiner, int count, const int *bl, int one_bl,
                    const int *idisp, const MPI_Aint *adisp, const MPI_Datatype *types,
                    int one_type, MPI_Datatype *newtype)
{
    int ok = 1;
    MPI_Count n = count > 0 ? count : 0;
    MPI_Count *wbl = widen(bl, one_bl ? 1 : n, &ok);
    MPI_Count *wd = idisp != NULL ? widen(idisp, n, &ok) : widen_aint(adisp, n, &ok);
    int rc;
    if (!ok) {
        rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    } else {
        list_args_t la = {count, wbl, one_bl, wd, idisp == NULL, types, one_type};
        rc = list_common(func, combiner, 0, &la, newtype);
    }
    free(wbl);
    free(wd);
    return rc;
}

#pragma weak MPI_Type_indexed = PMPI_Type_indexed
int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    return list_int("MPI_Type_indexed", MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0,
                    array_of_displacements, NULL, &oldtype, 1, newtype);
}
#pragma weak MPI_Type_indexed_c = PMPI_Type_indexed_c
int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
{
    list_args_t la = {count, array_of_blocklengths, 0, array_of_displacements, 0, &oldtype, 1};
    return list_common("MPI_Type_indexed_c", MPI_COMBINER_INDEXED, 1, &la, newtype);
}
#pragma weak MPI_Type_create_hindexed = PMPI_Type_create_hindexed
int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    return list_int("MPI_Type_create_hindexed", MPI_COMBINER_HINDEXED, count, array_of_blocklengths,
                    0, NULL, array_of_displacements, &oldtype, 1, newtype);
}
#pragma weak MPI_Type_create_hindexed_c = PMPI_Type_create_hindexed_c
int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    list_args_t la = {count, array_of_blocklengths, 0, array_of_displacements, 1, &oldtype, 1};
    return list_common("MPI_Type_create_hindexed_c", MPI_COMBINER_HINDEXED, 1, &la, newtype);
}
#pragma weak MPI_Type_create_indexed_block = PMPI_Type_create_indexed_block
int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return list_int("MPI_Type_create_indexed_block", MPI_COMBINER_INDEXED_BLOCK, count,
                    &blocklength, 1, array_of_displacements, NULL, &oldtype, 1, newtype);
}
#pragma weak MPI_Type_create_indexed_block_c = PMPI_Type_create_indexed_block_c
int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    list_args_t la = {count, &blocklength, 1, array_of_displacements, 0, &oldtype, 1};
    return list_common("MPI_Type_create_indexed_block_c", MPI_COMBINER_INDEXED_BLOCK, 1, &la,
                       newtype);
}
#pragma weak MPI_Type_create_hindexed_block = PMPI_Type_create_hindexed_block
int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    return list_int("MPI_Type_create_hindexed_block", MPI_COMBINER_HINDEXED_BLOCK, count,
                    &blocklength, 1, NULL, array_of_displacements, &oldtype, 1, newtype);
}
#pragma weak MPI_Type_create_hindexed_block_c = PMPI_Type_create_hindexed_block_c
int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    list_args_t la = {count, &blocklength, 1, array_of_displacements, 1, &oldtype, 1};
    return list_common("MPI_Type_create_hindexed_block_c", MPI_COMBINER_HINDEXED_BLOCK, 1, &la,
                       newtype);
}
#pragma weak MPI_Type_create_struct = PMPI_Type_create_struct
int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    return list_int("MPI_Type_create_struct", MPI_COMBINER_STRUCT, count, array_of_blocklengths, 0,
                    NULL, array_of_displacements, array_of_types, 0, newtype);
}
#pragma weak MPI_Type_create_struct_c = PMPI_Type_create_struct_c
int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    list_args_t la = {count, array_of_blocklengths, 0, array_of_displacements,
                      1,     array_of_types,        0};
    return list_common("MPI_Type_create_struct_c", MPI_COMBINER_STRUCT, 1, &la, newtype);
}

/* ---- subarray, darray -------------------------------------------------------------------- */

static int check_order(const char *func, int order)
{
    if (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN)
        return MPI_SUCCESS;
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                          "argument order=%d is neither MPI_ORDER_C nor "
                                          "MPI_ORDER_FORTRAN",
                                          order));
}

static int subarray_common(const char *func, int large, int ndims, const MPI_Count *sizes,
                           const MPI_Count *subsizes, const MPI_Count *starts, int order,
                           MPI_Datatype old, MPI_Datatype *newtype)
{
    mf_dtype_props_t p = {0};
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS && ndims <= 0)
        rc = mf_err_raise(
            NULL, mf_err_code(MPI_ERR_DIMS, func, "argument ndims=%d must be positive", ndims));
    if (rc == MPI_SUCCESS && (sizes == NULL || subsizes == NULL || starts == NULL))
        rc = mf_check_ptr(func, NULL, NULL, "array_of_sizes, array_of_subsizes or array_of_starts");
    if (rc == MPI_SUCCESS)
        rc = check_order(func, order);
    if (rc == MPI_SUCCESS)
        rc = check_oldtype(func, old, "oldtype", &p);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newtype, "newtype");
    for (int i = 0; rc == MPI_SUCCESS && i < ndims; i++) {
        if (sizes[i] <= 0 || subsizes[i] <= 0 || subsizes[i] > sizes[i] || starts[i] < 0 ||
            starts[i] > sizes[i] - subsizes[i])
            rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                                "arguments array_of_sizes[%d]=%lld, "
                                                "array_of_subsizes[%d]=%lld and "
                                                "array_of_starts[%d]=%lld do not describe a "
                                                "subarray",
                                                i, (long long)sizes[i], i, (long long)subsizes[i],
                                                i, (long long)starts[i]));
    }
    if (rc != MPI_SUCCESS)
        return rc;
    contents_t ct;
    if (!contents_init(&ct, large, 3 * (MPI_Count)ndims + 2, 1))
        return nomem(func, &ct);
    put_int(&ct, ndims);
    for (int i = 0; i < ndims; i++)
        put_count(&ct, sizes[i]);
    for (int i = 0; i < ndims; i++)
        put_count(&ct, subsizes[i]);
    for (int i = 0; i < ndims; i++)
        put_count(&ct, starts[i]);
    put_int(&ct, order);
    ct.t[ct.nt++] = old;
    mf_dtype_t *d = NULL;
    mf_status_t st = mf_dtype_create_subarray(ndims, sizes, subsizes, starts, order, old, &d);
    return finish(func, st, d, &ct, newtype);
}

#pragma weak MPI_Type_create_subarray = PMPI_Type_create_subarray
int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    int ok = 1, n = ndims > 0 ? ndims : 0;
    MPI_Count *a = widen(array_of_sizes, n, &ok), *b = widen(array_of_subsizes, n, &ok),
              *c = widen(array_of_starts, n, &ok);
    int rc =
        ok ? subarray_common("MPI_Type_create_subarray", 0, ndims, a, b, c, order, oldtype, newtype)
           : mf_err_raise(NULL,
                          mf_err_code(MPI_ERR_NO_MEM, "MPI_Type_create_subarray", "out of memory"));
    free(a);
    free(b);
    free(c);
    return rc;
}
#pragma weak MPI_Type_create_subarray_c = PMPI_Type_create_subarray_c
int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    return subarray_common("MPI_Type_create_subarray_c", 1, ndims, array_of_sizes,
                           array_of_subsizes, array_of_starts, order, oldtype, newtype);
}

static int darray_common(const char *func, int large, int size, int rank, int ndims,
                         const MPI_Count *gsizes, const int *distribs, const int *dargs,
                         const int *psizes, int order, MPI_Datatype old, MPI_Datatype *newtype)
{
    mf_dtype_props_t p = {0};
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS && (size <= 0 || rank < 0 || rank >= size))
        rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                            "arguments size=%d and rank=%d do not name a process",
                                            size, rank));
    if (rc == MPI_SUCCESS && ndims <= 0)
        rc = mf_err_raise(
            NULL, mf_err_code(MPI_ERR_DIMS, func, "argument ndims=%d must be positive", ndims));
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, gsizes, "array_of_gsizes");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, distribs, "array_of_distribs");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, dargs, "array_of_dargs");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, psizes, "array_of_psizes");
    if (rc == MPI_SUCCESS)
        rc = check_order(func, order);
    if (rc == MPI_SUCCESS)
        rc = check_oldtype(func, old, "oldtype", &p);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newtype, "newtype");
    long long nprocs = 1;
    for (int i = 0; rc == MPI_SUCCESS && i < ndims; i++) {
        const char *why = NULL;
        int dist = distribs[i], darg = dargs[i];
        if (gsizes[i] <= 0 || psizes[i] <= 0) {
            int gsize = gsizes[i] <= 0;
            rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                                "argument %s[%d]=%lld must be positive",
                                                gsize ? "array_of_gsizes" : "array_of_psizes", i,
                                                (long long)(gsize ? gsizes[i] : psizes[i])));
            break;
        }
        if (dist != MPI_DISTRIBUTE_NONE && dist != MPI_DISTRIBUTE_BLOCK &&
            dist != MPI_DISTRIBUTE_CYCLIC)
            why = "unknown distribution";
        else if (dist == MPI_DISTRIBUTE_NONE && psizes[i] != 1)
            why = "MPI_DISTRIBUTE_NONE needs a psize of 1";
        else if (darg != MPI_DISTRIBUTE_DFLT_DARG && darg <= 0 && dist != MPI_DISTRIBUTE_NONE)
            why = "darg must be positive or MPI_DISTRIBUTE_DFLT_DARG";
        else if (dist == MPI_DISTRIBUTE_BLOCK && darg != MPI_DISTRIBUTE_DFLT_DARG &&
                 (MPI_Count)darg * psizes[i] < gsizes[i])
            why = "the blocks do not cover the dimension";
        if (why != NULL)
            rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "dimension %d: %s", i, why));
        if (nprocs <= size) /* beyond size the product only has to stay wrong, not overflow */
            nprocs *= psizes[i];
    }
    if (rc == MPI_SUCCESS && nprocs > size)
        rc = mf_err_raise(NULL,
                          mf_err_code(MPI_ERR_ARG, func,
                                      "the process grid has more than size=%d processes", size));
    else if (rc == MPI_SUCCESS && nprocs != size)
        rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                            "the process grid has %lld processes, size is %d",
                                            nprocs, size));
    if (rc != MPI_SUCCESS)
        return rc;
    contents_t ct;
    if (!contents_init(&ct, large, 4 * (MPI_Count)ndims + 4, 1))
        return nomem(func, &ct);
    put_int(&ct, size);
    put_int(&ct, rank);
    put_int(&ct, ndims);
    for (int i = 0; i < ndims; i++)
        put_count(&ct, gsizes[i]);
    for (int i = 0; i < ndims; i++)
        put_int(&ct, distribs[i]);
    for (int i = 0; i < ndims; i++)
        put_int(&ct, dargs[i]);
    for (int i = 0; i < ndims; i++)
        put_int(&ct, psizes[i]);
    put_int(&ct, order);
    ct.t[ct.nt++] = old;
    mf_dtype_t *d = NULL;
    mf_status_t st =
        mf_dtype_create_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, &d);
    return finish(func, st, d, &ct, newtype);
}

#pragma weak MPI_Type_create_darray = PMPI_Type_create_darray
int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    int ok = 1;
    MPI_Count *g = widen(array_of_gsizes, ndims > 0 ? ndims : 0, &ok);
    int rc =
        ok ? darray_common("MPI_Type_create_darray", 0, size, rank, ndims, g, array_of_distribs,
                           array_of_dargs, array_of_psizes, order, oldtype, newtype)
           : mf_err_raise(NULL,
                          mf_err_code(MPI_ERR_NO_MEM, "MPI_Type_create_darray", "out of memory"));
    free(g);
    return rc;
}
#pragma weak MPI_Type_create_darray_c = PMPI_Type_create_darray_c
int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    return darray_common("MPI_Type_create_darray_c", 1, size, rank, ndims, array_of_gsizes,
                         array_of_distribs, array_of_dargs, array_of_psizes, order, oldtype,
                         newtype);
}

/* ---- resized, dup, commit, free ---------------------------------------------------------- */

static int resized_common(const char *func, int large, MPI_Datatype old, MPI_Count lb,
                          MPI_Count extent, MPI_Datatype *newtype)
{
    mf_dtype_props_t p = {0};
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_oldtype(func, old, "oldtype", &p);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newtype, "newtype");
    if (rc != MPI_SUCCESS)
        return rc;
    contents_t ct;
    if (!contents_init(&ct, large, 2, 1))
        return nomem(func, &ct);
    put_addr(&ct, lb);
    put_addr(&ct, extent);
    ct.t[ct.nt++] = old;
    mf_dtype_t *d = NULL;
    mf_status_t st =
        mf_dtype_create_resized(old, (MPI_Aint)lb, (MPI_Aint)extent, MPI_COMBINER_RESIZED, &d);
    return finish(func, st, d, &ct, newtype);
}

#pragma weak MPI_Type_create_resized = PMPI_Type_create_resized
int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    return resized_common("MPI_Type_create_resized", 0, oldtype, lb, extent, newtype);
}
#pragma weak MPI_Type_create_resized_c = PMPI_Type_create_resized_c
int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
{
    return resized_common("MPI_Type_create_resized_c", 1, oldtype, lb, extent, newtype);
}

#pragma weak MPI_Type_dup = PMPI_Type_dup
int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char func[] = "MPI_Type_dup";
    mf_dtype_props_t p = {0};
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_oldtype(func, oldtype, "oldtype", &p);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newtype, "newtype");
    if (rc != MPI_SUCCESS)
        return rc;
    contents_t ct;
    if (!contents_init(&ct, 0, 0, 1))
        return nomem(func, &ct);
    ct.t[ct.nt++] = oldtype;
    mf_dtype_t *d = NULL;
    /* The same layout and bounds; a committed type gives a committed duplicate (MPI-5.0 5.1.9). */
    mf_status_t st = mf_dtype_create_resized(oldtype, p.lb, p.extent, MPI_COMBINER_DUP, &d);
    if (st == MF_OK && p.committed)
        st = mf_dtype_commit(d);
    MPI_Datatype out = MPI_DATATYPE_NULL;
    rc = finish(func, st, d, &ct, &out);
    if (rc == MPI_SUCCESS && (rc = mf_binding_type_copy_attrs(func, oldtype, out)) != MPI_SUCCESS)
        mf_dtype_release(out); /* the attribute copy callbacks said no */
    if (rc == MPI_SUCCESS)
        *newtype = out;
    return rc;
}

static int check_derived_ptr(const char *func, MPI_Datatype *datatype, const char *what,
                             mf_dtype_t **d_p)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, datatype, "datatype");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dtype_props_t p = {0};
    if (mf_dtype_props(*datatype, &p) == MF_OK && !p.derived) {
        *d_p = NULL;
        if (what == NULL)
            return MPI_SUCCESS;
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_TYPE, func,
                                              "argument datatype: a predefined datatype %s", what));
    }
    rc = check_type(func, *datatype, "datatype", &p);
    if (rc == MPI_SUCCESS)
        *d_p = mf_dtype_get(*datatype);
    return rc;
}

#pragma weak MPI_Type_commit = PMPI_Type_commit
int PMPI_Type_commit(MPI_Datatype *datatype)
{
    mf_dtype_t *d;
    int rc = check_derived_ptr("MPI_Type_commit", datatype, NULL, &d);
    if (rc != MPI_SUCCESS || d == NULL)
        return rc;
    mf_status_t st = mf_dtype_commit(d);
    return st == MF_OK ? MPI_SUCCESS
                       : mf_err_from_status(NULL, st, "MPI_Type_commit", "cannot commit");
}

static int freed_already(void)
{
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_TYPE, "MPI_Type_free",
                                          "argument datatype was freed already: the program freed "
                                          "this type as many times as it created or got it (a "
                                          "copy of a freed handle)"));
}

#pragma weak MPI_Type_free = PMPI_Type_free
int PMPI_Type_free(MPI_Datatype *datatype)
{
    mf_dtype_t *d;
    int rc = check_derived_ptr("MPI_Type_free", datatype, "cannot be freed", &d);
    if (rc != MPI_SUCCESS)
        return rc;
    if (d != NULL && is_f90(d))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_TYPE, "MPI_Type_free",
                                              "argument datatype: a predefined Fortran 90 "
                                              "datatype (MPI_Type_create_f90_*) cannot be freed"));
    /* A copy of a handle the user already freed (parent types or operations may still hold the
     * type): refused before its attributes go. */
    if (atomic_load_explicit(&d->user_refs, memory_order_relaxed) == 0)
        return freed_already();
    /* Attributes go with the user's handle (their delete callbacks may refuse). */
    rc = mf_binding_type_delete_attrs("MPI_Type_free", *datatype);
    if (rc != MPI_SUCCESS)
        return rc;
    /* Only the user's reference: pending operations and parent types keep theirs. */
    if (!mf_dtype_user_free(d))
        return freed_already();
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

/* ---- size and extent queries ------------------------------------------------------------- */

/* The type's properties, after checking it and the two pointer arguments (named). */
static int query(const char *func, MPI_Datatype dt, const void *arg1, const char *name1,
                 const void *arg2, const char *name2, mf_dtype_props_t *p)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_type(func, dt, "datatype", p);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, arg1, name1);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, arg2, name2);
    return rc;
}

#pragma weak MPI_Type_size = PMPI_Type_size
int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    mf_dtype_props_t p = {0};
    int rc = query("MPI_Type_size", datatype, size, "size", size, "size", &p);
    if (rc == MPI_SUCCESS)
        *size = p.size > 0x7fffffff ? MPI_UNDEFINED : (int)p.size;
    return rc;
}
/* The MPI_Count queries: the `_c` forms and the MPI-3 `_x` forms are the same. */
static int size_count(const char *func, MPI_Datatype datatype, MPI_Count *size)
{
    mf_dtype_props_t p = {0};
    int rc = query(func, datatype, size, "size", size, "size", &p);
    if (rc == MPI_SUCCESS)
        *size = p.size;
    return rc;
}
static int extent_count(const char *func, MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    mf_dtype_props_t p = {0};
    int rc = query(func, datatype, lb, "lb", extent, "extent", &p);
    if (rc == MPI_SUCCESS) {
        *lb = p.lb;
        *extent = p.extent;
    }
    return rc;
}
static int true_extent_count(const char *func, MPI_Datatype datatype, MPI_Count *true_lb,
                             MPI_Count *true_extent)
{
    mf_dtype_props_t p = {0};
    int rc = query(func, datatype, true_lb, "true_lb", true_extent, "true_extent", &p);
    if (rc == MPI_SUCCESS) {
        *true_lb = p.true_lb;
        *true_extent = p.true_ub - p.true_lb;
    }
    return rc;
}
#pragma weak MPI_Type_size_c = PMPI_Type_size_c
int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_c", datatype, size);
}
#pragma weak MPI_Type_get_extent = PMPI_Type_get_extent
int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    mf_dtype_props_t p = {0};
    int rc = query("MPI_Type_get_extent", datatype, lb, "lb", extent, "extent", &p);
    if (rc == MPI_SUCCESS) {
        *lb = p.lb;
        *extent = p.extent;
    }
    return rc;
}
#pragma weak MPI_Type_get_extent_c = PMPI_Type_get_extent_c
int PMPI_Type_get_extent_c(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_count("MPI_Type_get_extent_c", datatype, lb, extent);
}
#pragma weak MPI_Type_get_true_extent = PMPI_Type_get_true_extent
int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    mf_dtype_props_t p = {0};
    int rc = query("MPI_Type_get_true_extent", datatype, true_lb, "true_lb", true_extent,
                   "true_extent", &p);
    if (rc == MPI_SUCCESS) {
        *true_lb = p.true_lb;
        *true_extent = p.true_ub - p.true_lb;
    }
    return rc;
}
#pragma weak MPI_Type_get_true_extent_c = PMPI_Type_get_true_extent_c
int PMPI_Type_get_true_extent_c(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return true_extent_count("MPI_Type_get_true_extent_c", datatype, true_lb, true_extent);
}

#pragma weak MPI_Type_size_x = PMPI_Type_size_x
int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    return size_count("MPI_Type_size_x", datatype, size);
}
#pragma weak MPI_Type_get_extent_x = PMPI_Type_get_extent_x
int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    return extent_count("MPI_Type_get_extent_x", datatype, lb, extent);
}
#pragma weak MPI_Type_get_true_extent_x = PMPI_Type_get_true_extent_x
int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    return true_extent_count("MPI_Type_get_true_extent_x", datatype, true_lb, true_extent);
}

/* ---- envelope and contents --------------------------------------------------------------- */

static int envelope_common(const char *func, MPI_Datatype dt, int large, MPI_Count *ni,
                           MPI_Count *na, MPI_Count *nc, MPI_Count *nt, int *combiner)
{
    mf_dtype_props_t p = {0};
    int rc = query(func, dt, ni, "num_integers", combiner, "combiner", &p);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, na, "num_addresses");
    if (rc == MPI_SUCCESS && large)
        rc = mf_check_ptr(func, NULL, nc, "num_large_counts");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, nt, "num_datatypes");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d == NULL) {
        *ni = *na = *nt = 0;
        if (nc != NULL)
            *nc = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    if (!large && d->ncounts > 0)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_TYPE, func,
                                              "argument datatype was made by a large-count "
                                              "constructor: use the _c function"));
    *ni = d->nints;
    *na = d->naddrs;
    *nt = d->ntypes;
    if (nc != NULL)
        *nc = d->ncounts;
    *combiner = d->combiner;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_envelope = PMPI_Type_get_envelope
int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    MPI_Count ni = 0, na = 0, nt = 0;
    int rc = envelope_common("MPI_Type_get_envelope", datatype, 0,
                             num_integers != NULL ? &ni : NULL, num_addresses != NULL ? &na : NULL,
                             NULL, num_datatypes != NULL ? &nt : NULL, combiner);
    if (rc == MPI_SUCCESS) {
        *num_integers = (int)ni;
        *num_addresses = (int)na;
        *num_datatypes = (int)nt;
    }
    return rc;
}
#pragma weak MPI_Type_get_envelope_c = PMPI_Type_get_envelope_c
int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    return envelope_common("MPI_Type_get_envelope_c", datatype, 1, num_integers, num_addresses,
                           num_large_counts, num_datatypes, combiner);
}

static int contents_common(const char *func, MPI_Datatype dt, int large, MPI_Count max_i,
                           MPI_Count max_a, MPI_Count max_c, MPI_Count max_t, int *ints,
                           MPI_Aint *addrs, MPI_Count *counts, MPI_Datatype *types)
{
    mf_dtype_props_t p = {0};
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_type(func, dt, "datatype", &p);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dtype_t *d = mf_dtype_get(dt);
    if (d == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_TYPE, func,
                                              "argument datatype is a predefined datatype "
                                              "(combiner MPI_COMBINER_NAMED)"));
    if (!large && d->ncounts > 0)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_TYPE, func,
                                              "argument datatype was made by a large-count "
                                              "constructor: use the _c function"));
    const char *small = max_i < d->nints     ? "max_integers"
                        : max_a < d->naddrs  ? "max_addresses"
                        : max_c < d->ncounts ? "max_large_counts"
                        : max_t < d->ntypes  ? "max_datatypes"
                                             : NULL;
    if (small != NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              "argument %s is smaller than the type's contents "
                                              "(MPI_Type_get_envelope gives the sizes)",
                                              small));
    if (d->nints > 0)
        rc = mf_check_ptr(func, NULL, ints, "array_of_integers");
    if (rc == MPI_SUCCESS && d->naddrs > 0)
        rc = mf_check_ptr(func, NULL, addrs, "array_of_addresses");
    if (rc == MPI_SUCCESS && d->ncounts > 0)
        rc = mf_check_ptr(func, NULL, counts, "array_of_large_counts");
    if (rc == MPI_SUCCESS && d->ntypes > 0)
        rc = mf_check_ptr(func, NULL, types, "array_of_datatypes");
    if (rc != MPI_SUCCESS)
        return rc;
    if (d->nints > 0)
        memcpy(ints, d->c_ints, sizeof(int) * (size_t)d->nints);
    if (d->naddrs > 0)
        memcpy(addrs, d->c_addrs, sizeof(MPI_Aint) * (size_t)d->naddrs);
    if (d->ncounts > 0 && counts != NULL)
        memcpy(counts, d->c_counts, sizeof(MPI_Count) * (size_t)d->ncounts);
    /* Derived types come back as new references the user frees (MPI-5.0 5.1.13). */
    for (MPI_Count i = 0; i < d->ntypes; i++) {
        types[i] = d->c_types[i];
        mf_dtype_retain_for_user(types[i]);
    }
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_contents = PMPI_Type_get_contents
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    return contents_common("MPI_Type_get_contents", datatype, 0, max_integers, max_addresses, 0,
                           max_datatypes, array_of_integers, array_of_addresses, NULL,
                           array_of_datatypes);
}
#pragma weak MPI_Type_get_contents_c = PMPI_Type_get_contents_c
int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes,
                             int array_of_integers[], MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    return contents_common("MPI_Type_get_contents_c", datatype, 1, max_integers, max_addresses,
                           max_large_counts, max_datatypes, array_of_integers, array_of_addresses,
                           array_of_large_counts, array_of_datatypes);
}

/* ---- names ------------------------------------------------------------------------------- */

/* Names the user gave predefined types (they have no object to hold one). */
static struct {
    pthread_mutex_t lock;
    char names[256][MPI_MAX_OBJECT_NAME];
} predef_names = {.lock = PTHREAD_MUTEX_INITIALIZER};

#pragma weak MPI_Type_set_name = PMPI_Type_set_name
int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    static const char func[] = "MPI_Type_set_name";
    mf_dtype_props_t p = {0};
    int rc = query(func, datatype, type_name, "type_name", type_name, "type_name", &p);
    if (rc != MPI_SUCCESS)
        return rc;
    /* A longer name is cut to MPI_MAX_OBJECT_NAME - 1 characters, as for communicators. */
    mf_dtype_t *d = mf_dtype_get(datatype);
    pthread_mutex_t *lock = d != NULL ? &d->name_lock : &predef_names.lock;
    char *dst = d != NULL ? d->name : predef_names.names[(uintptr_t)datatype & 0xff];
    pthread_mutex_lock(lock);
    snprintf(dst, MPI_MAX_OBJECT_NAME, "%s", type_name);
    pthread_mutex_unlock(lock);
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_get_name = PMPI_Type_get_name
int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    mf_dtype_props_t p = {0};
    /* MPI-4.1 gives the null handle the name "MPI_DATATYPE_NULL". */
    if (datatype == MPI_DATATYPE_NULL) {
        int rc = mf_check_initialized("MPI_Type_get_name");
        if (rc == MPI_SUCCESS)
            rc = mf_check_ptr("MPI_Type_get_name", NULL, type_name, "type_name");
        if (rc == MPI_SUCCESS)
            rc = mf_check_ptr("MPI_Type_get_name", NULL, resultlen, "resultlen");
        if (rc == MPI_SUCCESS)
            *resultlen = snprintf(type_name, MPI_MAX_OBJECT_NAME, "MPI_DATATYPE_NULL");
        return rc;
    }
    int rc =
        query("MPI_Type_get_name", datatype, type_name, "type_name", resultlen, "resultlen", &p);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_dtype_t *d = mf_dtype_get(datatype);
    if (d != NULL) {
        pthread_mutex_lock(&d->name_lock);
        snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", d->name);
        pthread_mutex_unlock(&d->name_lock);
    } else {
        pthread_mutex_lock(&predef_names.lock);
        const char *set = predef_names.names[(uintptr_t)datatype & 0xff];
        snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s",
                 set[0] != '\0' ? set : mf_dtype_predefined(datatype)->name);
        pthread_mutex_unlock(&predef_names.lock);
    }
    *resultlen = (int)strlen(type_name);
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_match_size = PMPI_Type_match_size
int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const char func[] = "MPI_Type_match_size";
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, datatype, "datatype");
    if (rc != MPI_SUCCESS)
        return rc;
    static const MPI_Datatype ints[] = {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8,
                                        MPI_INTEGER16};
    static const MPI_Datatype reals[] = {MPI_REAL2, MPI_REAL4, MPI_REAL8, MPI_REAL16};
    static const MPI_Datatype cplx[] = {MPI_COMPLEX4, MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32};
    const MPI_Datatype *list = typeclass == MPI_TYPECLASS_INTEGER   ? ints
                               : typeclass == MPI_TYPECLASS_REAL    ? reals
                               : typeclass == MPI_TYPECLASS_COMPLEX ? cplx
                                                                    : NULL;
    size_t n = typeclass == MPI_TYPECLASS_INTEGER ? 5 : 4;
    if (list == NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              "argument typeclass=%d is not an MPI_TYPECLASS_*",
                                              typeclass));
    for (size_t i = 0; i < n; i++) {
        if (mf_dtype_predefined(list[i])->size == size) {
            *datatype = list[i];
            return MPI_SUCCESS;
        }
    }
    return mf_err_raise(
        NULL,
        mf_err_code(MPI_ERR_ARG, func, "no predefined datatype of that class has size %d", size));
}

/* ---- addresses --------------------------------------------------------------------------- */

#pragma weak MPI_Get_address = PMPI_Get_address
int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    int rc = mf_check_ptr("MPI_Get_address", NULL, address, "address");
    if (rc == MPI_SUCCESS)
        *address = (MPI_Aint)(uintptr_t)location;
    return rc;
}

#pragma weak MPI_Aint_add = PMPI_Aint_add
MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}

#pragma weak MPI_Aint_diff = PMPI_Aint_diff
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}

/* ---- MPI_Pack / MPI_Unpack ---------------------------------------------------------------- */

/* The packed form is the one point-to-point sends: the engine's packed bytes of each item. */
/* The buffers and sizes of a pack or unpack (inbuf and outbuf as the caller named them, the
 * packed side `packed` bytes of a buffer of `size` from *position, the typed side `native`
 * bytes of count items of dt, which may be MPI_BOTTOM); MPI_ERR_ARG, MPI_ERR_BUFFER, or the
 * class of a packed buffer too small. */
static int pack_args_check(const char *func, mf_comm_t *c, int unpack, const void *inbuf,
                           const void *outbuf, MPI_Datatype dt, MPI_Count count, size_t native,
                           MPI_Count packed, MPI_Count size, MPI_Count position)
{
    const char *size_arg = unpack ? "insize" : "outsize";
    if (position < 0)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func, "argument position=%lld is negative",
                                           (long long)position));
    if (size < 0)
        return mf_err_raise(c, mf_err_code(MPI_ERR_ARG, func, "argument %s=%lld is negative",
                                           size_arg, (long long)size));
    int rc = unpack ? mf_check_buffer(func, c, "inbuf", inbuf, (size_t)packed)
                    : mf_check_typed_buffer(func, c, "inbuf", inbuf, dt, count, native);
    if (rc == MPI_SUCCESS)
        rc = unpack ? mf_check_typed_buffer(func, c, "outbuf", outbuf, dt, count, native)
                    : mf_check_buffer(func, c, "outbuf", outbuf, (size_t)packed);
    if (rc == MPI_SUCCESS && (size < position || packed > size - position))
        rc = mf_err_raise(c, mf_err_code(unpack ? MPI_ERR_TRUNCATE : MPI_ERR_NO_SPACE, func,
                                         "%lld packed bytes from argument position=%lld do not "
                                         "fit in argument %s=%lld",
                                         (long long)packed, (long long)position, size_arg,
                                         (long long)size));
    return rc;
}

static int pack_common(const char *func, int unpack, const void *inbuf, MPI_Count count,
                       MPI_Datatype dt, void *buf, MPI_Count size, MPI_Count *position,
                       MPI_Comm comm)
{
    mf_comm_t *c = NULL;
    size_t bytes = 0;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_count(func, c, unpack ? "outcount" : "incount", count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, "datatype", dt, count, &bytes);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, position, "position");
    if (rc == MPI_SUCCESS)
        rc = pack_args_check(func, c, unpack, inbuf, buf, dt, count, bytes, (MPI_Count)bytes, size,
                             *position);
    if (rc != MPI_SUCCESS)
        return rc;
    char *at = (char *)(uintptr_t)((uintptr_t)(unpack ? inbuf : buf) + (uintptr_t)*position);
    if (unpack)
        mf_dtype_unpack(dt, count, buf, at, 0, (MPI_Count)bytes);
    else
        mf_dtype_pack(dt, count, inbuf, at, 0, (MPI_Count)bytes);
    *position += (MPI_Count)bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack = PMPI_Pack
int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    MPI_Count pos = position != NULL ? *position : 0;
    int rc = pack_common("MPI_Pack", 0, inbuf, incount, datatype, outbuf, outsize,
                         position != NULL ? &pos : NULL, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
#pragma weak MPI_Pack_c = PMPI_Pack_c
int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    return pack_common("MPI_Pack_c", 0, inbuf, incount, datatype, outbuf, outsize, position, comm);
}
#pragma weak MPI_Unpack = PMPI_Unpack
int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    MPI_Count pos = position != NULL ? *position : 0;
    int rc = pack_common("MPI_Unpack", 1, inbuf, outcount, datatype, outbuf, insize,
                         position != NULL ? &pos : NULL, comm);
    if (rc == MPI_SUCCESS)
        *position = (int)pos;
    return rc;
}
#pragma weak MPI_Unpack_c = PMPI_Unpack_c
int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    return pack_common("MPI_Unpack_c", 1, inbuf, outcount, datatype, outbuf, insize, position,
                       comm);
}

static int pack_size_common(const char *func, MPI_Count count, MPI_Datatype dt, MPI_Comm comm,
                            MPI_Count *size)
{
    mf_comm_t *c = NULL;
    size_t bytes = 0;
    int rc = mf_check_init_comm(func, comm, &c);
    if (rc == MPI_SUCCESS)
        rc = mf_check_count(func, c, "incount", count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, c, "datatype", dt, count, &bytes);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, c, size, "size");
    if (rc == MPI_SUCCESS)
        *size = (MPI_Count)bytes;
    return rc;
}

#pragma weak MPI_Pack_size = PMPI_Pack_size
int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    MPI_Count s = 0;
    int rc = pack_size_common("MPI_Pack_size", incount, datatype, comm, size != NULL ? &s : NULL);
    if (rc == MPI_SUCCESS)
        *size = s > 0x7fffffff ? MPI_UNDEFINED : (int)s;
    return rc;
}
#pragma weak MPI_Pack_size_c = PMPI_Pack_size_c
int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    return pack_size_common("MPI_Pack_size_c", incount, datatype, comm, size);
}

/* ---- external32 -------------------------------------------------------------------------- */

static int check_datarep(const char *func, const char *datarep)
{
    int rc = mf_check_ptr(func, NULL, datarep, "datarep");
    if (rc == MPI_SUCCESS && strcmp(datarep, "external32") != 0)
        rc = mf_err_raise(NULL, mf_err_code(MPI_ERR_UNSUPPORTED_DATAREP, func,
                                            "argument datarep=\"%s\": only \"external32\" is "
                                            "supported",
                                            datarep));
    return rc;
}

static int external_common(const char *func, int unpack, const char *datarep, const void *inbuf,
                           MPI_Count count, MPI_Datatype dt, void *buf, MPI_Count size,
                           MPI_Count *position)
{
    size_t native;
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_datarep(func, datarep);
    if (rc == MPI_SUCCESS)
        rc = mf_check_count(func, NULL, unpack ? "outcount" : "incount", count);
    if (rc == MPI_SUCCESS)
        rc = mf_check_datatype(func, NULL, "datatype", dt, count, &native);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, position, "position");
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count item, bytes;
    mf_dtype_external32_size(dt, &item);
    if (__builtin_mul_overflow(item, count, &bytes))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_COUNT, func,
                                              "argument %s=%lld: %lld items of %lld bytes each "
                                              "do not fit an MPI_Count",
                                              unpack ? "outcount" : "incount", (long long)count,
                                              (long long)count, (long long)item));
    rc = pack_args_check(func, NULL, unpack, inbuf, buf, dt, count, native, bytes, size, *position);
    if (rc != MPI_SUCCESS)
        return rc;
    char *at = (char *)(uintptr_t)((uintptr_t)(unpack ? inbuf : buf) + (uintptr_t)*position);
    mf_status_t st = unpack ? mf_dtype_external32_unpack(dt, count, buf, at)
                            : mf_dtype_external32_pack(dt, count, inbuf, at);
    if (st != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_CONVERSION, func, "%s",
                                              st == MF_ERR_UNSUPPORTED
                                                  ? "long double has no external32 conversion"
                                                  : "a value does not fit its external32 size"));
    *position += bytes;
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_external = PMPI_Pack_external
int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    MPI_Count pos = position != NULL ? *position : 0;
    int rc = external_common("MPI_Pack_external", 0, datarep, inbuf, incount, datatype, outbuf,
                             outsize, position != NULL ? &pos : NULL);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}
#pragma weak MPI_Pack_external_c = PMPI_Pack_external_c
int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    return external_common("MPI_Pack_external_c", 0, datarep, inbuf, incount, datatype, outbuf,
                           outsize, position);
}
#pragma weak MPI_Unpack_external = PMPI_Unpack_external
int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    MPI_Count pos = position != NULL ? *position : 0;
    int rc = external_common("MPI_Unpack_external", 1, datarep, inbuf, outcount, datatype, outbuf,
                             insize, position != NULL ? &pos : NULL);
    if (rc == MPI_SUCCESS)
        *position = (MPI_Aint)pos;
    return rc;
}
#pragma weak MPI_Unpack_external_c = PMPI_Unpack_external_c
int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    return external_common("MPI_Unpack_external_c", 1, datarep, inbuf, outcount, datatype, outbuf,
                           insize, position);
}

static int external_size_common(const char *func, const char *datarep, MPI_Count count,
                                MPI_Datatype dt, MPI_Count *size)
{
    mf_dtype_props_t p = {0};
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_datarep(func, datarep);
    if (rc == MPI_SUCCESS)
        rc = mf_check_count(func, NULL, "incount", count);
    if (rc == MPI_SUCCESS)
        rc = check_type(func, dt, "datatype", &p);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, size, "size");
    if (rc != MPI_SUCCESS)
        return rc;
    MPI_Count item;
    mf_dtype_external32_size(dt, &item);
    if (__builtin_mul_overflow(item, count, size))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_COUNT, func,
                                              "argument incount=%lld: %lld items of %lld bytes "
                                              "each do not fit an MPI_Count",
                                              (long long)count, (long long)count, (long long)item));
    return MPI_SUCCESS;
}

#pragma weak MPI_Pack_external_size = PMPI_Pack_external_size
int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    MPI_Count s = 0;
    int rc = external_size_common("MPI_Pack_external_size", datarep, incount, datatype,
                                  size != NULL ? &s : NULL);
    if (rc == MPI_SUCCESS)
        *size = (MPI_Aint)s;
    return rc;
}
#pragma weak MPI_Pack_external_size_c = PMPI_Pack_external_size_c
int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count *size)
{
    return external_size_common("MPI_Pack_external_size_c", datarep, incount, datatype, size);
}

/* ---- the Fortran 90 parameterised types and MPI_Type_get_value_index ---------------------- */

/* MPI_Type_create_f90_*: a type with the layout of the predefined Fortran type of the smallest
 * kind that has the precision and range asked (the kinds of gfortran), combiner
 * MPI_COMBINER_F90_* and contents (r) or (p, r). The standard calls them predefined: they are
 * made once per argument set, kept for the life of the process and never freed. */
typedef struct f90_type {
    int combiner, p, r;
    MPI_Datatype type;
    struct f90_type *next;
} f90_type_t;

static struct {
    pthread_mutex_t lock;
    f90_type_t *list;
} f90 = {PTHREAD_MUTEX_INITIALIZER, NULL};

static int is_f90(const mf_dtype_t *d)
{
    return d->combiner == MPI_COMBINER_F90_INTEGER || d->combiner == MPI_COMBINER_F90_REAL ||
           d->combiner == MPI_COMBINER_F90_COMPLEX;
}

/* The predefined type for (p, r), MPI_UNDEFINED meaning "any"; MPI_DATATYPE_NULL when no
 * Fortran kind has them. */
static MPI_Datatype f90_base(int combiner, int p, int r)
{
    static const struct {
        int p, r;
        MPI_Datatype real, cplx;
    } reals[] = {
        {6, 37, MPI_REAL4, MPI_COMPLEX8},
        {15, 307, MPI_REAL8, MPI_COMPLEX16},
        {33, 4931, MPI_REAL16, MPI_COMPLEX32},
    };
    static const struct {
        int r;
        MPI_Datatype type;
    } ints[] = {{2, MPI_INTEGER1},
                {4, MPI_INTEGER2},
                {9, MPI_INTEGER4},
                {18, MPI_INTEGER8},
                {38, MPI_INTEGER16}};
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
            if (r <= ints[i].r)
                return ints[i].type;
        return MPI_DATATYPE_NULL;
    }
    for (size_t i = 0; i < sizeof(reals) / sizeof(reals[0]); i++)
        if ((p == MPI_UNDEFINED || p <= reals[i].p) && (r == MPI_UNDEFINED || r <= reals[i].r))
            return combiner == MPI_COMBINER_F90_REAL ? reals[i].real : reals[i].cplx;
    return MPI_DATATYPE_NULL;
}

static int f90_common(const char *func, int combiner, int p, int r, MPI_Datatype *newtype)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, newtype, "newtype");
    if (rc != MPI_SUCCESS)
        return rc;
    int ints = combiner == MPI_COMBINER_F90_INTEGER;
    if (ints ? r < 0 : (p == MPI_UNDEFINED && r == MPI_UNDEFINED))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              ints ? "argument r=%d is negative"
                                                   : "arguments p and r are both MPI_UNDEFINED",
                                              r));
    if ((!ints && p != MPI_UNDEFINED && p < 0) || (!ints && r != MPI_UNDEFINED && r < 0))
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func, "argument %s=%d is negative",
                                              p < 0 ? "p" : "r", p < 0 ? p : r));
    MPI_Datatype base = f90_base(combiner, p, r);
    if (base == MPI_DATATYPE_NULL)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_ARG, func,
                                              ints ? "argument r=%d: no Fortran integer kind has "
                                                     "this range"
                                                   : "arguments p=%d, r=%d: no Fortran kind has "
                                                     "this precision and range",
                                              ints ? r : p, r));
    pthread_mutex_lock(&f90.lock);
    for (f90_type_t *e = f90.list; e != NULL; e = e->next) {
        if (e->combiner == combiner && e->p == p && e->r == r) {
            *newtype = e->type;
            pthread_mutex_unlock(&f90.lock);
            return MPI_SUCCESS;
        }
    }
    mf_dtype_props_t bp = {0};
    mf_dtype_props(base, &bp);
    f90_type_t *e = malloc(sizeof(*e));
    mf_dtype_t *d = NULL;
    mf_status_t st = e != NULL ? mf_dtype_create_resized(base, bp.lb, bp.extent, combiner, &d)
                               : MF_ERR_NO_MEMORY;
    int pr[2] = {p, r};
    if (st == MF_OK)
        st = mf_dtype_set_contents(d, ints ? 1 : 2, ints ? &pr[1] : pr, 0, NULL, 0, NULL, 0, NULL);
    if (st == MF_OK)
        st = mf_dtype_commit(d);
    if (st != MF_OK) {
        pthread_mutex_unlock(&f90.lock);
        free(e);
        if (d != NULL)
            mf_dtype_release(d);
        return raise_status(func, st);
    }
    *e = (f90_type_t){combiner, p, r, d, f90.list};
    f90.list = e;
    pthread_mutex_unlock(&f90.lock);
    *newtype = d;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_create_f90_integer = PMPI_Type_create_f90_integer
int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    return f90_common("MPI_Type_create_f90_integer", MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r,
                      newtype);
}

#pragma weak MPI_Type_create_f90_real = PMPI_Type_create_f90_real
int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return f90_common("MPI_Type_create_f90_real", MPI_COMBINER_F90_REAL, p, r, newtype);
}

#pragma weak MPI_Type_create_f90_complex = PMPI_Type_create_f90_complex
int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return f90_common("MPI_Type_create_f90_complex", MPI_COMBINER_F90_COMPLEX, p, r, newtype);
}

/* MPI-4.1: the predefined pair type of MINLOC/MAXLOC for (value, index), MPI_DATATYPE_NULL
 * when there is none. */
#pragma weak MPI_Type_get_value_index = PMPI_Type_get_value_index
int PMPI_Type_get_value_index(MPI_Datatype value_type, MPI_Datatype index_type,
                              MPI_Datatype *pair_type)
{
    static const char func[] = "MPI_Type_get_value_index";
    static const struct {
        MPI_Datatype value, pair;
    } pairs[] = {
        {MPI_FLOAT, MPI_FLOAT_INT}, {MPI_DOUBLE, MPI_DOUBLE_INT},
        {MPI_LONG, MPI_LONG_INT},   {MPI_INT, MPI_2INT},
        {MPI_SHORT, MPI_SHORT_INT}, {MPI_LONG_DOUBLE, MPI_LONG_DOUBLE_INT},
    };
    mf_dtype_props_t p = {0};
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_type(func, value_type, "value_type", &p);
    if (rc == MPI_SUCCESS)
        rc = check_type(func, index_type, "index_type", &p);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, pair_type, "pair_type");
    if (rc != MPI_SUCCESS)
        return rc;
    *pair_type = MPI_DATATYPE_NULL;
    for (size_t i = 0; index_type == MPI_INT && i < sizeof(pairs) / sizeof(pairs[0]); i++)
        if (pairs[i].value == value_type)
            *pair_type = pairs[i].pair;
    return MPI_SUCCESS;
}
