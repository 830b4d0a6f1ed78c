/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Corners of the datatype constructors and queries, each of which was wrong once:
 * - MPI_Type_create_struct(0, NULL, NULL, NULL) read the types array (a crash);
 * - MPI_Type_indexed_c / create_indexed_block_c with displacement * extent beyond MPI_Aint
 *   overflowed silently (UB), and MPI_Pack_external_size_c with count * size beyond MPI_Count;
 *   both are errors now (MPI_ERR_ARG and MPI_ERR_COUNT);
 * - a struct's alignment padding and bounds counted members without data (blocklength 0, or
 *   an empty type), and the true extent counted empty children that carry only bounds;
 * - MPI_Type_set_name refused a long name instead of cutting it to MPI_MAX_OBJECT_NAME - 1;
 * - MPI_Type_create_f90_integer had no kind for ranges 19..38 (MPI_INTEGER16);
 * - MPI_Type_get_name(MPI_LONG_LONG_INT) gave the synonym's name;
 * - byte lengths of 2^63 and more (a size_t holds them, an MPI_Count does not) passed:
 *   MPI_Pack_size_c returned a negative size, MPI_Pack_c/Unpack_c a negative position, and
 *   MPI_Pack_external_c overflowed (a crash); all MPI_ERR_COUNT now;
 * - a struct whose true extent does not fit an MPI_Aint was accepted and reported a negative
 *   true extent; the constructor fails now (MPI_ERR_ARG);
 * - MPI_Type_create_subarray/darray kept per-dimension arrays on the stack (a stack overflow
 *   at 400000 dimensions of size 1), and darray multiplied the process grid past overflow;
 * - MPI_Pack_external_size walked every block of a vector (seconds for 2^30 blocks);
 * - a struct with a member that carries explicit bounds (resized, subarray) took its other
 *   members' elements into its bounds and added the epsilon; the markers decide alone
 *   (MPI-5.0 5.1.7; found by dtype_random, checked on Manifold only: MPICH 5.0.2 differs);
 * - MPI_Get_count, _c and MPI_Get_elements refused a derived type that was not committed
 *   (commit is needed to communicate, not to ask a status; MPICH 5.0.2 refuses it in
 *   MPI_Get_elements, which is checked on Manifold only).
 */
#include "mtest.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_extents(MPI_Datatype t, MPI_Aint lb, MPI_Aint extent, MPI_Aint tlb,
                          MPI_Aint textent, const char *what)
{
    MPI_Aint l = -1, e = -1, tl = -1, te = -1;
    MPI_Type_get_extent(t, &l, &e);
    MPI_Type_get_true_extent(t, &tl, &te);
    MTEST_CHECK(l == lb && e == extent, "%s: lb %ld extent %ld, expected %ld %ld", what, (long)l,
                (long)e, (long)lb, (long)extent);
    MTEST_CHECK(tl == tlb && te == textent, "%s: true lb %ld extent %ld, expected %ld %ld", what,
                (long)tl, (long)te, (long)tlb, (long)textent);
}

static void struct_corners(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = MPI_Type_create_struct(0, NULL, NULL, NULL, &t);
    MTEST_CHECK(rc == MPI_SUCCESS && t != MPI_DATATYPE_NULL, "empty struct: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        int size = -1;
        MPI_Type_size(t, &size);
        MTEST_CHECK(size == 0, "empty struct: size %d", size);
        check_extents(t, 0, 0, 0, 0, "empty struct");
        MPI_Type_free(&t);
    }
    rc = MPI_Type_create_struct_c(0, NULL, NULL, NULL, &t);
    MTEST_CHECK(rc == MPI_SUCCESS, "empty struct (_c): rc %d", rc);
    if (rc == MPI_SUCCESS)
        MPI_Type_free(&t);

    /* {int at 0, double with blocklength 0 at 8}: no double in the type map, no padding */
    int bl[2] = {1, 0};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE};
    MPI_Type_create_struct(2, bl, disp, types, &t);
    check_extents(t, 0, 4, 0, 4, "struct {int, 0 x double}");
    MPI_Type_free(&t);
    MPI_Datatype none;
    MPI_Type_contiguous(0, MPI_DOUBLE, &none);
    types[1] = none;
    bl[1] = 1;
    MPI_Type_create_struct(2, bl, disp, types, &t);
    check_extents(t, 0, 4, 0, 4, "struct {int, contiguous(0, double)}");
    MPI_Type_free(&t);
    MPI_Type_free(&none);
}

/* Children that carry bounds but no data leave the true extent alone. */
static void empty_children(void)
{
    MPI_Datatype empty, r, t;
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_create_resized(empty, 0, 28, &r);
    MPI_Type_contiguous(10, r, &t);
    check_extents(t, 0, 280, 0, 0, "contiguous(10, empty resized to 28)");
    MPI_Type_free(&t);
    MPI_Type_vector(3, 2, 5, r, &t);
    check_extents(t, 0, 336, 0, 0, "vector(3, 2, 5, empty resized to 28)");
    MPI_Type_free(&t);
    int bl[2] = {1, 3};
    MPI_Aint disp[2] = {0, 100};
    MPI_Datatype types[2] = {MPI_INT, r};
    MPI_Type_create_struct(2, bl, disp, types, &t);
    /* the markers decide the bounds (see marker_bounds) */
    check_extents(t, 100, 84, 0, 4, "struct {int, 3 x empty resized to 28}");
    MPI_Type_free(&t);
    MPI_Type_free(&r);
    MPI_Type_free(&empty);
}

/* MPI-5.0 5.1.7: lb is the lowest lb marker when the type map has one, ub the highest ub
 * marker, and the epsilon only applies without ub markers. MPICH 5.0.2 ignores markers in a
 * struct, so these run on Manifold only. */
static void marker_bounds(void)
{
    MPI_Datatype r, t, sub, s2, d;
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    if (!mtest_is_manifold())
        return;
    /* {int at 0, char resized to [0, 1) at 8}: bounds [8, 9), the int outside them */
    MPI_Type_create_resized(MPI_CHAR, 0, 1, &r);
    MPI_Datatype types[2] = {MPI_INT, r};
    MPI_Type_create_struct(2, bl, disp, types, &t);
    check_extents(t, 8, 1, 0, 9, "struct {int, char resized to 1}");
    MPI_Type_free(&t);
    MPI_Type_free(&r);
    /* {double resized to 12}: no epsilon */
    MPI_Type_create_resized(MPI_DOUBLE, 0, 12, &r);
    MPI_Type_create_struct(1, bl, disp, &r, &t);
    check_extents(t, 0, 12, 0, 8, "struct {double resized to 12}");
    MPI_Type_free(&t);
    MPI_Type_free(&r);
    /* {ints 1..2 of a subarray of 4 at 0, int at 20}: the subarray's [0, 16) */
    int size = 4, subsize = 2, start = 1;
    MPI_Type_create_subarray(1, &size, &subsize, &start, MPI_ORDER_C, MPI_INT, &sub);
    MPI_Datatype types2[2] = {sub, MPI_INT};
    disp[1] = 20;
    MPI_Type_create_struct(2, bl, disp, types2, &t);
    check_extents(t, 0, 16, 4, 20, "struct {subarray, int at 20}");
    MPI_Type_free(&t);
    MPI_Type_free(&sub);
    /* a dup carries no markers: {dup of {double, char}, char at 16} is padded to 24 */
    MPI_Datatype types3[2] = {MPI_DOUBLE, MPI_CHAR};
    disp[1] = 8;
    MPI_Type_create_struct(2, bl, disp, types3, &s2);
    MPI_Type_dup(s2, &d);
    MPI_Datatype types4[2] = {d, MPI_CHAR};
    disp[1] = 16;
    MPI_Type_create_struct(2, bl, disp, types4, &t);
    check_extents(t, 0, 24, 0, 17, "struct {dup of struct, char}");
    MPI_Type_free(&t);
    MPI_Type_free(&d);
    MPI_Type_free(&s2);
}

static void overflows(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Count bl[1] = {1}, disp[1] = {(MPI_Count)1 << 62};
    int rc = MPI_Type_indexed_c(1, bl, disp, MPI_INT, &t);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_indexed_c");
    rc = MPI_Type_create_indexed_block_c(1, 1, disp, MPI_INT, &t);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_indexed_block_c");
    MTEST_CHECK(t == MPI_DATATYPE_NULL, "a failed constructor set newtype");
    MPI_Count size = 0;
    rc = MPI_Pack_external_size_c("external32", (MPI_Count)1 << 62, MPI_INT, &size);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Pack_external_size_c");
    rc = MPI_Pack_external_size_c("external32", 1000, MPI_INT, &size);
    MTEST_CHECK(rc == MPI_SUCCESS && size == 4000, "external32 size of 1000 ints: %lld",
                (long long)size);

    const MPI_Count just = ((MPI_Count)1 << 61) + 1; /* ints: 2^63 + 4 bytes */
    int small[4];
    MPI_Count pos = 0;
    size = 0;
    rc = MPI_Pack_size_c(just, MPI_INT, MPI_COMM_SELF, &size);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Pack_size_c");
    rc = MPI_Pack_c(small, just, MPI_INT, small, sizeof(small), &pos, MPI_COMM_SELF);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Pack_c");
    rc = MPI_Unpack_c(small, sizeof(small), &pos, small, just, MPI_INT, MPI_COMM_SELF);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Unpack_c");
    rc = MPI_Pack_external_c("external32", small, just, MPI_INT, small, sizeof(small), &pos);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Pack_external_c");
    rc = MPI_Unpack_external_c("external32", small, sizeof(small), &pos, small, just, MPI_INT);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Unpack_external_c");
    MTEST_CHECK(pos == 0, "a failed pack moved the position to %lld", (long long)pos);

    /* Data at -2^62 and near 2^62, bounds resized to 4 bytes: two of them in a struct have an
     * extent that fits and a true extent that does not. */
    MPI_Datatype far, far4, pair = MPI_DATATYPE_NULL;
    MPI_Count fbl[2] = {1, 1}, fdisp[2] = {-((MPI_Count)1 << 62), ((MPI_Count)1 << 62) - 8};
    MPI_Type_create_hindexed_c(2, fbl, fdisp, MPI_INT, &far);
    MPI_Type_create_resized_c(far, 0, 4, &far4);
    MPI_Count sbl[2] = {1, 1}, sdisp[2] = {0, 16};
    MPI_Datatype stypes[2] = {far4, far4};
    rc = MPI_Type_create_struct_c(2, sbl, sdisp, stypes, &pair);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_struct_c");
    MTEST_CHECK(pair == MPI_DATATYPE_NULL, "a failed MPI_Type_create_struct_c set newtype");
    MPI_Type_free(&far4);
    MPI_Type_free(&far);

    int psizes[3] = {INT32_MAX, INT32_MAX, INT32_MAX}, gsizes[3] = {4, 4, 4};
    int distribs[3] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC};
    int dargs[3] = {MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG, MPI_DISTRIBUTE_DFLT_DARG};
    rc = MPI_Type_create_darray(1, 0, 3, gsizes, distribs, dargs, psizes, MPI_ORDER_C, MPI_INT, &t);
    MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_darray");
}

/* Many dimensions of size 1 are a valid subarray (the stack held them once), and so is a
 * huge vector whose external32 size comes without a walk over its blocks. */
static void big_descriptions(void)
{
    enum { NDIMS = 400000 };
    int *ones = mtest_calloc(NDIMS, sizeof(int)), *zeros = mtest_calloc(NDIMS, sizeof(int));
    for (int i = 0; i < NDIMS; i++)
        ones[i] = 1;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    int rc = MPI_Type_create_subarray(NDIMS, ones, ones, zeros, MPI_ORDER_C, MPI_INT, &t);
    MTEST_CHECK(rc == MPI_SUCCESS, "a subarray of %d dimensions of 1: rc %d", NDIMS, rc);
    if (rc == MPI_SUCCESS) {
        MPI_Count size = 0;
        MPI_Type_commit(&t);
        MPI_Type_size_c(t, &size);
        MTEST_CHECK(size == 4, "the subarray of %d dimensions of 1 has size %lld", NDIMS,
                    (long long)size);
        MPI_Type_free(&t);
    }
    free(ones);
    free(zeros);

    MPI_Datatype v;
    MPI_Count size = 0;
    MPI_Type_vector_c((MPI_Count)1 << 40, 1, 2, MPI_INT, &v);
    rc = MPI_Pack_external_size_c("external32", 1, v, &size);
    MTEST_CHECK(rc == MPI_SUCCESS && size == ((MPI_Count)1 << 42),
                "external32 size of a vector of 2^40 ints: rc %d size %lld", rc, (long long)size);
    MPI_Type_free(&v);
}

static void names_and_kinds(void)
{
    char name[MPI_MAX_OBJECT_NAME + 8];
    int len = 0;
    MPI_Type_get_name(MPI_LONG_LONG_INT, name, &len);
    MTEST_CHECK(strcmp(name, "MPI_LONG_LONG_INT") == 0, "MPI_LONG_LONG_INT is named %s", name);

    char longname[300];
    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    MPI_Datatype t;
    MPI_Type_contiguous(2, MPI_INT, &t);
    int rc = MPI_Type_set_name(t, longname);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Type_set_name with 299 characters: rc %d", rc);
    MPI_Type_get_name(t, name, &len);
    MTEST_CHECK(len == MPI_MAX_OBJECT_NAME - 1 && strncmp(name, longname, (size_t)len) == 0,
                "a long name came back with %d characters", len);
    MPI_Type_free(&t);

    for (int r = 19; r <= 38; r += 19) {
        MPI_Datatype k = MPI_DATATYPE_NULL;
        rc = MPI_Type_create_f90_integer(r, &k);
        int size = 0;
        if (rc == MPI_SUCCESS)
            MPI_Type_size(k, &size);
        MTEST_CHECK(rc == MPI_SUCCESS && size == 16, "f90 integer of range %d: rc %d size %d", r,
                    rc, size);
    }
    MPI_Datatype k = MPI_DATATYPE_NULL;
    rc = MPI_Type_create_f90_integer(39, &k);
    MTEST_CHECK(rc != MPI_SUCCESS, "f90 integer of range 39 exists");
}

static void uncommitted_counts(void)
{
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair); /* never committed */
    int x[6] = {1, 2, 3, 4, 5, 6}, y[6];
    MPI_Status st;
    MPI_Sendrecv(x, 6, MPI_INT, 0, 0, y, 6, MPI_INT, 0, 0, MPI_COMM_SELF, &st);
    int count = -1, elems = -1;
    MPI_Count count_c = -1;
    int rc = MPI_Get_count(&st, pair, &count);
    MTEST_CHECK(rc == MPI_SUCCESS && count == 3, "Get_count of an uncommitted type: rc %d, %d", rc,
                count);
    rc = MPI_Get_count_c(&st, pair, &count_c);
    MTEST_CHECK(rc == MPI_SUCCESS && count_c == 3,
                "Get_count_c of an uncommitted type: rc %d, %lld", rc, (long long)count_c);
    if (mtest_is_manifold()) {
        rc = MPI_Get_elements(&st, pair, &elems);
        MTEST_CHECK(rc == MPI_SUCCESS && elems == 6,
                    "Get_elements of an uncommitted type: rc %d, %d", rc, elems);
    }
    MPI_Type_free(&pair);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    struct_corners();
    empty_children();
    marker_bounds();
    overflows();
    big_descriptions();
    names_and_kinds();
    uncommitted_counts();
    return mtest_finalize(0);
}
