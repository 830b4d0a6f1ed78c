/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-IO data representations (MPI-4.1 section 14.5): "external32" and the ones users register
 * with MPI_Register_datarep. A view in such a representation lays the file out in the
 * representation's sizes: the etype and the filetype are rebuilt from their constructors'
 * contents with every predefined type replaced by a run of bytes of its size in the file, so
 * displacements counted in items scale and byte displacements stay as given, as the standard
 * says. An access converts between the user's buffer and a packed buffer in the file's
 * representation, which then moves through the rebuilt view like native data.
 */
#include "io.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mf_io_rep {
    char name[MPI_MAX_DATAREP_STRING];
    int external32;
    /* MPI_Register_datarep(_c): either form's functions, NULL when the user passed none */
    MPI_Datarep_conversion_function *read, *write;
    MPI_Datarep_conversion_function_c *read_c, *write_c;
    MPI_Datarep_extent_function *extent;
    void *extra_state;
    struct mf_io_rep *next;
};

static const mf_io_rep_t external32 = {.name = "external32", .external32 = 1};

/* Registered representations live until the process exits (views may name them at any time). */
static pthread_mutex_t reps_lock = PTHREAD_MUTEX_INITIALIZER;
static mf_io_rep_t *reps;

static int predefined_name(const char *name)
{
    return strcmp(name, "native") == 0 || strcmp(name, "internal") == 0 ||
           strcmp(name, "external32") == 0;
}

int mf_io_rep_register(const char *name, const mf_io_rep_functions_t *fns, char *why)
{
    if (predefined_name(name))
        return mf_io_fail(why, MPI_ERR_DUP_DATAREP, "argument datarep=\"%s\" is predefined", name);
    mf_io_rep_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return mf_io_fail(why, MPI_ERR_NO_MEM, "out of memory");
    snprintf(r->name, sizeof(r->name), "%s", name);
    r->read = fns->read;
    r->write = fns->write;
    r->read_c = fns->read_c;
    r->write_c = fns->write_c;
    r->extent = fns->extent;
    r->extra_state = fns->extra_state;
    pthread_mutex_lock(&reps_lock);
    const mf_io_rep_t *e = reps;
    while (e != NULL && strcmp(e->name, name) != 0)
        e = e->next;
    if (e == NULL) {
        r->next = reps;
        reps = r;
    }
    pthread_mutex_unlock(&reps_lock);
    if (e != NULL) {
        free(r);
        return mf_io_fail(why, MPI_ERR_DUP_DATAREP, "argument datarep=\"%s\" is already registered",
                          name);
    }
    return MPI_SUCCESS;
}

int mf_io_rep_find(const char *name, const mf_io_rep_t **rep_p, char *why)
{
    *rep_p = NULL;
    if (strcmp(name, "native") == 0 || strcmp(name, "internal") == 0)
        return MPI_SUCCESS;
    if (strcmp(name, "external32") == 0) {
        *rep_p = &external32;
        return MPI_SUCCESS;
    }
    pthread_mutex_lock(&reps_lock);
    const mf_io_rep_t *r = reps;
    while (r != NULL && strcmp(r->name, name) != 0)
        r = r->next;
    pthread_mutex_unlock(&reps_lock);
    if (r == NULL)
        return mf_io_fail(why, MPI_ERR_UNSUPPORTED_DATAREP,
                          "argument datarep=\"%s\" is not a known data representation", name);
    *rep_p = r;
    return MPI_SUCCESS;
}

/* ---- the layout in the file ---------------------------------------------------------------- */

static const char *type_name(MPI_Datatype t)
{
    const mf_dtype_info_t *info = mf_dtype_get(t) == NULL ? mf_dtype_predefined(t) : NULL;
    return info != NULL && info->name != NULL ? info->name : "a predefined datatype";
}

/* Bytes a predefined type takes in the file. */
static int leaf_extent(const mf_io_rep_t *rep, MPI_Datatype t, MPI_Aint *extent_p, char *why)
{
    if (rep->external32) {
        MPI_Count s = 0;
        mf_dtype_external32_size(t, &s);
        *extent_p = (MPI_Aint)s;
        return MPI_SUCCESS;
    }
    MPI_Aint e = -1;
    int rc = rep->extent(t, &e, rep->extra_state);
    if (rc != MPI_SUCCESS)
        return mf_io_fail(
            why, MPI_ERR_CONVERSION,
            "the extent function of data representation \"%s\" returned error %d for %s", rep->name,
            rc, type_name(t));
    if (e < 0)
        return mf_io_fail(
            why, MPI_ERR_CONVERSION,
            "the extent function of data representation \"%s\" gave %s a negative extent "
            "(%lld)",
            rep->name, type_name(t), (long long)e);
    *extent_p = e;
    return MPI_SUCCESS;
}

/* Reads a type's contents in the order its constructor recorded them (binding_dtype.c: counts
 * go to the integers, or to the large counts for a _c constructor; byte displacements to the
 * addresses, or to the large counts). */
typedef struct contents_reader {
    const mf_dtype_t *d;
    MPI_Count i, a, c;
} contents_reader_t;

static int read_int(contents_reader_t *r)
{
    return r->d->c_ints[r->i++];
}

static MPI_Count read_count(contents_reader_t *r)
{
    return r->d->large ? r->d->c_counts[r->c++] : (MPI_Count)r->d->c_ints[r->i++];
}

static MPI_Aint read_addr(contents_reader_t *r)
{
    return r->d->large ? (MPI_Aint)r->d->c_counts[r->c++] : r->d->c_addrs[r->a++];
}

static int build_layout(const mf_io_rep_t *rep, MPI_Datatype t, mf_dtype_t **out, char *why);

/* The constructor of d, replayed over `kids` (the layouts of its types). */
static mf_status_t replay(const mf_dtype_t *d, MPI_Datatype *kids, mf_dtype_t **out)
{
    contents_reader_t r = {d, 0, 0, 0};
    int comb = d->combiner;
    mf_dtype_props_t kp = {0};
    if (d->ntypes > 0) /* (a struct of no blocks has no types) */
        mf_dtype_props(kids[0], &kp);
    switch (comb) {
    case MPI_COMBINER_DUP: return mf_dtype_create_resized(kids[0], kp.lb, kp.extent, comb, out);
    case MPI_COMBINER_CONTIGUOUS: {
        MPI_Count n = read_count(&r);
        return mf_dtype_create_vector(1, n, 0, kids[0], comb, out);
    }
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
        MPI_Count n = read_count(&r), bl = read_count(&r);
        MPI_Aint stride = 0;
        if (comb == MPI_COMBINER_HVECTOR)
            stride = read_addr(&r);
        else if (__builtin_mul_overflow((MPI_Aint)read_count(&r), kp.extent, &stride))
            return MF_ERR_OVERFLOW;
        return mf_dtype_create_vector(n, bl, stride, kids[0], comb, out);
    }
    case MPI_COMBINER_RESIZED: {
        MPI_Aint lb = read_addr(&r), extent = read_addr(&r);
        return mf_dtype_create_resized(kids[0], lb, extent, comb, out);
    }
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT: {
        int one_bl = comb == MPI_COMBINER_INDEXED_BLOCK || comb == MPI_COMBINER_HINDEXED_BLOCK;
        int in_bytes = comb == MPI_COMBINER_HINDEXED || comb == MPI_COMBINER_HINDEXED_BLOCK ||
                       comb == MPI_COMBINER_STRUCT;
        MPI_Count n = read_count(&r), bl = one_bl ? read_count(&r) : 0;
        size_t slots = (size_t)(n > 0 ? n : 1);
        MPI_Count *bls = malloc(slots * sizeof(*bls));
        MPI_Aint *disps = malloc(slots * sizeof(*disps));
        mf_status_t st = MF_ERR_NO_MEMORY;
        if (bls != NULL && disps != NULL) {
            for (MPI_Count k = 0; k < n; k++)
                bls[k] = one_bl ? bl : read_count(&r);
            int overflow = 0;
            for (MPI_Count k = 0; k < n; k++) {
                if (in_bytes)
                    disps[k] = read_addr(&r);
                else
                    overflow |=
                        __builtin_mul_overflow((MPI_Aint)read_count(&r), kp.extent, &disps[k]);
            }
            st = overflow ? MF_ERR_OVERFLOW
                          : mf_dtype_create_list(n, bls, disps, kids, comb != MPI_COMBINER_STRUCT,
                                                 comb, out);
        }
        free(bls);
        free(disps);
        return st;
    }
    case MPI_COMBINER_SUBARRAY: {
        int ndims = read_int(&r);
        size_t slots = (size_t)(ndims > 0 ? 3 * ndims : 1);
        MPI_Count *v = malloc(slots * sizeof(*v));
        if (v == NULL)
            return MF_ERR_NO_MEMORY;
        for (int k = 0; k < 3 * ndims; k++)
            v[k] = read_count(&r);
        int order = read_int(&r);
        mf_status_t st =
            mf_dtype_create_subarray(ndims, v, v + ndims, v + 2 * ndims, order, kids[0], out);
        free(v);
        return st;
    }
    case MPI_COMBINER_DARRAY: {
        int size = read_int(&r), rank = read_int(&r), ndims = read_int(&r);
        size_t slots = (size_t)(ndims > 0 ? ndims : 1);
        MPI_Count *gsizes = malloc(slots * sizeof(*gsizes));
        int *ints = malloc(3 * slots * sizeof(*ints));
        mf_status_t st = MF_ERR_NO_MEMORY;
        if (gsizes != NULL && ints != NULL) {
            for (int k = 0; k < ndims; k++)
                gsizes[k] = read_count(&r);
            for (int k = 0; k < 3 * ndims; k++)
                ints[k] = read_int(&r);
            int order = read_int(&r);
            st = mf_dtype_create_darray(size, rank, ndims, gsizes, ints, ints + ndims,
                                        ints + 2 * ndims, order, kids[0], out);
        }
        free(gsizes);
        free(ints);
        return st;
    }
    default: return MF_ERR_UNSUPPORTED;
    }
}

static int build_layout(const mf_io_rep_t *rep, MPI_Datatype t, mf_dtype_t **out, char *why)
{
    const mf_dtype_t *d = mf_dtype_get(t);
    int leaf = d == NULL || d->combiner == MPI_COMBINER_F90_INTEGER ||
               d->combiner == MPI_COMBINER_F90_REAL || d->combiner == MPI_COMBINER_F90_COMPLEX;
    if (leaf) {
        MPI_Aint e = 0;
        int cls = leaf_extent(rep, t, &e, why);
        if (cls != MPI_SUCCESS)
            return cls;
        return mf_dtype_create_vector(1, e, 0, MPI_BYTE, MPI_COMBINER_CONTIGUOUS, out) == MF_OK
                   ? MPI_SUCCESS
                   : mf_io_fail(why, MPI_ERR_NO_MEM, "out of memory");
    }
    MPI_Count nkids = d->ntypes;
    MPI_Datatype *kids = calloc((size_t)(nkids > 0 ? nkids : 1), sizeof(*kids));
    if (kids == NULL)
        return mf_io_fail(why, MPI_ERR_NO_MEM, "out of memory");
    int cls = MPI_SUCCESS;
    for (MPI_Count k = 0; k < nkids && cls == MPI_SUCCESS; k++) {
        mf_dtype_t *kid = NULL;
        cls = build_layout(rep, d->c_types[k], &kid, why);
        kids[k] = kid;
    }
    if (cls == MPI_SUCCESS) {
        mf_status_t st = replay(d, kids, out);
        if (st == MF_ERR_NO_MEMORY)
            cls = mf_io_fail(why, MPI_ERR_NO_MEM, "out of memory");
        else if (st == MF_ERR_OVERFLOW)
            cls = mf_io_fail(why, MPI_ERR_TYPE,
                             "the datatype's layout in data representation \"%s\" overflows an "
                             "address",
                             rep->name);
        else if (st != MF_OK)
            cls =
                mf_io_fail(why, MPI_ERR_TYPE,
                           "the datatype (combiner %d) has no layout in data representation \"%s\"",
                           d->combiner, rep->name);
    }
    for (MPI_Count k = 0; k < nkids; k++)
        if (kids[k] != NULL)
            mf_dtype_release(kids[k]);
    free(kids);
    return cls;
}

int mf_io_rep_layout(const mf_io_rep_t *rep, MPI_Datatype dt, MPI_Datatype *layout_p, char *why)
{
    mf_dtype_t *l = NULL;
    int cls = build_layout(rep, dt, &l, why);
    if (cls != MPI_SUCCESS)
        return cls;
    if (mf_dtype_commit(l) != MF_OK) {
        mf_dtype_release(l);
        return mf_io_fail(why, MPI_ERR_NO_MEM, "out of memory");
    }
    *layout_p = l;
    return MPI_SUCCESS;
}

int mf_io_rep_size(const mf_io_rep_t *rep, MPI_Datatype dt, MPI_Count *size_p, char *why)
{
    if (rep->external32) /* the same sum of the leaves' sizes, without building the layout */
        return mf_dtype_external32_size(dt, size_p) == MF_OK
                   ? MPI_SUCCESS
                   : mf_io_fail(why, MPI_ERR_TYPE, "argument datatype has no external32 size");
    mf_dtype_t *l = NULL;
    int cls = build_layout(rep, dt, &l, why);
    if (cls != MPI_SUCCESS)
        return cls;
    *size_p = l->psize;
    mf_dtype_release(l);
    return MPI_SUCCESS;
}

/* ---- conversion ------------------------------------------------------------------------------ */

/* Without a conversion function the file holds the native packed bytes, which needs every item
 * to take as many bytes in the file as packed in memory. */
static int move_native(const mf_io_rep_t *rep, int to_file, void *buf, MPI_Datatype dt,
                       MPI_Count count, char *filebuf, char *why)
{
    mf_dtype_props_t p = {0};
    mf_dtype_props(dt, &p);
    MPI_Count fsize = 0;
    int cls = mf_io_rep_size(rep, dt, &fsize, why);
    if (cls != MPI_SUCCESS)
        return cls;
    if (fsize != p.psize)
        return mf_io_fail(
            why, MPI_ERR_CONVERSION,
            "data representation \"%s\" has no %s conversion function, and an item of "
            "the datatype takes %lld bytes in the file against %lld in memory",
            rep->name, to_file ? "write" : "read", (long long)fsize, (long long)p.psize);
    MPI_Datatype mdt = mf_dtype_packed_as(dt);
    if (to_file)
        mf_dtype_pack(mdt, count, buf, filebuf, 0, count * p.psize);
    else
        mf_dtype_unpack(mdt, count, buf, filebuf, 0, count * p.psize);
    return MPI_SUCCESS;
}

/* buf advanced by `items` items of dt */
static void *items_on(void *buf, MPI_Datatype dt, MPI_Count items)
{
    mf_dtype_props_t p = {0};
    mf_dtype_props(dt, &p);
    return (void *)((uintptr_t)buf + (uintptr_t)(items * p.extent));
}

int mf_io_rep_convert(const mf_io_rep_t *rep, int to_file, void *buf, MPI_Datatype dt,
                      MPI_Count first, MPI_Count count, char *filebuf, char *why)
{
    if (count == 0)
        return MPI_SUCCESS;
    if (rep->external32) {
        void *at = items_on(buf, dt, first);
        mf_status_t st = to_file ? mf_dtype_external32_pack(dt, count, at, filebuf)
                                 : mf_dtype_external32_unpack(dt, count, at, filebuf);
        if (st == MF_ERR_UNSUPPORTED)
            return mf_io_fail(
                why, MPI_ERR_CONVERSION,
                "the datatype holds a long double, which has no external32 conversion "
                "here");
        if (st != MF_OK)
            return mf_io_fail(why, MPI_ERR_CONVERSION,
                              "a value does not fit its external32 size (MPI_LONG and "
                              "MPI_UNSIGNED_LONG take 4 bytes, MPI_WCHAR 2)");
        return MPI_SUCCESS;
    }
    MPI_Datarep_conversion_function *fn = to_file ? rep->write : rep->read;
    MPI_Datarep_conversion_function_c *fn_c = to_file ? rep->write_c : rep->read_c;
    if (fn == NULL && fn_c == NULL)
        return move_native(rep, to_file, items_on(buf, dt, first), dt, count, filebuf, why);
    MPI_Count fsize = 0;
    int cls = mf_io_rep_size(rep, dt, &fsize, why);
    /* the int form takes at most INT_MAX items a call; `position` says where in buf to go on */
    for (MPI_Count done = 0; cls == MPI_SUCCESS && done < count;) {
        MPI_Count n = count - done;
        MPI_Offset position = (MPI_Offset)(first + done);
        int rc;
        if (fn_c != NULL) {
            rc = fn_c(buf, dt, n, filebuf + done * fsize, position, rep->extra_state);
        } else {
            n = n > INT_MAX ? INT_MAX : n;
            rc = fn(buf, dt, (int)n, filebuf + done * fsize, position, rep->extra_state);
        }
        if (rc != MPI_SUCCESS)
            cls = mf_io_fail(
                why, MPI_ERR_CONVERSION,
                "the %s conversion function of data representation \"%s\" returned error "
                "%d",
                to_file ? "write" : "read", rep->name, rc);
        done += n;
    }
    return cls;
}
