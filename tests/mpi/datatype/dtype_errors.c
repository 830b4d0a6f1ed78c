/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error cases and partial receives with derived types: sending with an uncommitted type, with
 * a freed (MPI_DATATYPE_NULL) handle and with a stale copy of a freed handle (read as freed, not
 * read after free: the sanitizer build checks that), negative counts and block lengths in
 * constructors (both MPI_ERR_COUNT), a type whose size or bounds would not fit in an MPI_Count or
 * MPI_Aint (on Manifold: MPI_ERR_ARG rather than a wrapped size; MPICH asserts), freeing a
 * predefined type (all through MPI_ERRORS_RETURN); a message longer than the derived receive gives
 * MPI_ERR_TRUNCATE; a message of one and a half items gives MPI_UNDEFINED from MPI_Get_count and
 * the element count from MPI_Get_elements; MPI_Pack/MPI_Unpack (and the external32 forms) with NULL
 * buffers, negative sizes and positions; the type queries and MPI_Type_create_darray name the NULL
 * pointer they were given. The library works afterwards.
 */
#include "mtest.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, vec = MPI_DATATYPE_NULL, freed = MPI_DATATYPE_NULL;
    int rank, size, buf[16] = {0}, rc, count, elems;
    MPI_Status status;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Type_contiguous(2, MPI_INT, &t);
    rc = MPI_Send(buf, 1, t, rank, 0, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Send");
    MPI_Type_contiguous(2, MPI_INT, &freed);
    MPI_Type_free(&freed);
    rc = MPI_Send(buf, 1, freed, rank, 0, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Send");
    for (int committed = 0; committed < 2; committed++) {
        MPI_Datatype stale;
        MPI_Type_vector(2, 1, 2, MPI_INT, &freed);
        if (committed)
            MPI_Type_commit(&freed);
        stale = freed;
        MPI_Type_free(&freed);
        rc = MPI_Send(buf, 1, stale, rank, 0, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Send");
    }
    rc = MPI_Type_contiguous(-1, MPI_INT, &vec);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Type_contiguous");
    rc = MPI_Type_vector(-2, 1, 1, MPI_INT, &vec);
    MTEST_CHECK_ERR(rc, MPI_ERR_COUNT, "MPI_Type_vector");
    /* a block length is a count too (it was MPI_ERR_ARG) */
    rc = MPI_Type_vector(2, -1, 1, MPI_INT, &vec);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_COUNT, "MPI_Type_vector", "blocklength");
    {
        int bls[2] = {1, -3}, disps[2] = {0, 4};
        rc = MPI_Type_indexed(2, bls, disps, MPI_INT, &vec);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_COUNT, "MPI_Type_indexed", "array_of_blocklengths");
        rc = MPI_Type_create_indexed_block(2, -1, disps, MPI_INT, &vec);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_COUNT, "MPI_Type_create_indexed_block", "blocklength");
    }
    rc = MPI_Type_contiguous(2, MPI_DATATYPE_NULL, &vec);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_contiguous");
    if (mtest_is_manifold()) {
        MPI_Datatype big = MPI_DATATYPE_NULL, huge = MPI_DATATYPE_NULL;
        MPI_Type_contiguous(INT_MAX, MPI_DOUBLE, &big); /* 2^34 bytes: fine */
        rc = MPI_Type_contiguous(INT_MAX, big, &huge);  /* 2^65 bytes */
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_contiguous");
        MPI_Type_free(&big);
        rc = MPI_Type_vector(INT_MAX, INT_MAX, INT_MAX, MPI_DOUBLE, &huge);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_vector");
        int bl[2] = {1, 1};
        MPI_Aint far[2] = {INTPTR_MAX - 4, INTPTR_MIN + 4};
        MPI_Datatype two[2] = {MPI_INT, MPI_INT};
        rc = MPI_Type_create_struct(2, bl, far, two, &huge);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_struct");
        rc = MPI_Type_create_resized(MPI_INT, INTPTR_MAX, 16, &huge);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_resized");
    }
    {
        MPI_Datatype predefined = MPI_INT;

        rc = MPI_Type_free(&predefined);
        MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_free");
    }
    MPI_Type_commit(&t);

    /* a vector item: ints 0 and 2 of 3 (extent 3 ints); 3 ints arrive: 1.5 items */
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    if (rank == size - 1) {
        int src[6] = {10, 11, 12, 13, 14, 15};

        MPI_Send(src, 3, MPI_INT, 0, 5, MPI_COMM_WORLD);
        MPI_Send(src, 6, MPI_INT, 0, 6, MPI_COMM_WORLD);
    }
    if (rank == 0) {
        for (int i = 0; i < 16; i++) {
            buf[i] = -1;
        }
        rc = MPI_Recv(buf, 2, vec, size - 1, 5, MPI_COMM_WORLD, &status);
        MTEST_CHECK(rc == MPI_SUCCESS, "partial receive failed");
        MPI_Get_count(&status, vec, &count);
        MPI_Get_elements(&status, vec, &elems);
        MTEST_CHECK(count == MPI_UNDEFINED && elems == 3, "partial: count %d elements %d", count,
                    elems);
        MTEST_CHECK(buf[0] == 10 && buf[1] == -1 && buf[2] == 11 && buf[3] == 12 && buf[4] == -1,
                    "partial: %d %d %d %d %d", buf[0], buf[1], buf[2], buf[3], buf[4]);
        rc = MPI_Recv(buf, 2, vec, size - 1, 6, MPI_COMM_WORLD, &status);
        MTEST_CHECK_ERR(rc, MPI_ERR_TRUNCATE, "MPI_Recv");
    }
    /* Pack and unpack arguments: a NULL buffer with bytes to move is MPI_ERR_BUFFER (these
     * once copied through it), negative sizes and positions MPI_ERR_ARG naming the argument;
     * MPI_BOTTOM with a type of absolute addresses still packs. */
    {
        char packed[64];
        int v[4] = {1, 2, 3, 4}, pos = 0;
        MPI_Aint apos = 0;
        rc = MPI_Pack(NULL, 4, MPI_INT, packed, 64, &pos, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Pack");
        rc = MPI_Pack(v, 4, MPI_INT, NULL, 64, &pos, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Pack");
        rc = MPI_Unpack(NULL, 64, &pos, v, 4, MPI_INT, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Unpack");
        rc = MPI_Unpack(packed, 64, &pos, NULL, 4, MPI_INT, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Unpack");
        rc = MPI_Pack_external("external32", NULL, 4, MPI_INT, packed, 64, &apos);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Pack_external");
        rc = MPI_Unpack_external("external32", packed, 64, &apos, NULL, 4, MPI_INT);
        MTEST_CHECK_ERR(rc, MPI_ERR_BUFFER, "MPI_Unpack_external");
        rc = MPI_Pack(v, 1, MPI_INT, packed, -1, &pos, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "outsize=-1");
        pos = -4;
        rc = MPI_Pack(v, 1, MPI_INT, packed, 64, &pos, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "position=-4");
        pos = 0;
        rc = MPI_Unpack(packed, -16, &pos, v, 1, MPI_INT, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "insize=-16");
        apos = -8;
        rc = MPI_Pack_external("external32", v, 1, MPI_INT, packed, 64, &apos);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "position=-8");
        pos = 60;
        rc = MPI_Pack(v, 4, MPI_INT, packed, 64, &pos, MPI_COMM_WORLD);
        MTEST_CHECK_ERR(rc, MPI_ERR_NO_SPACE, "outsize=64");
        MPI_Aint at;
        MPI_Datatype abs_t;
        MPI_Get_address(v, &at);
        MPI_Type_create_hindexed_block(1, 4, &at, MPI_INT, &abs_t);
        MPI_Type_commit(&abs_t);
        pos = 0;
        rc = MPI_Pack(MPI_BOTTOM, 1, abs_t, packed, 64, &pos, MPI_COMM_WORLD);
        MTEST_CHECK(rc == MPI_SUCCESS && pos == 16 && ((int *)packed)[3] == 4,
                    "MPI_Pack from MPI_BOTTOM: rc %d position %d", rc, pos);
        MPI_Type_free(&abs_t);
    }
    /* The queries name the NULL pointer they were given. */
    {
        MPI_Aint lb, extent;
        MPI_Count clb, cextent;
        int ni, na, nt, comb, len, gs[1] = {4}, ds[1] = {MPI_DISTRIBUTE_BLOCK},
                                   da[1] = {MPI_DISTRIBUTE_DFLT_DARG}, ps[1] = {1};
        char name[MPI_MAX_OBJECT_NAME];
        MPI_Datatype out = MPI_DATATYPE_NULL;
        MTEST_CHECK_ERR_ARG(MPI_Type_get_extent(vec, NULL, &extent), MPI_ERR_ARG,
                            "MPI_Type_get_extent", "lb");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_extent(vec, &lb, NULL), MPI_ERR_ARG, "MPI_Type_get_extent",
                            "extent");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_true_extent_x(vec, &clb, NULL), MPI_ERR_ARG,
                            "MPI_Type_get_true_extent_x", "true_extent");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_extent_c(vec, NULL, &cextent), MPI_ERR_ARG,
                            "MPI_Type_get_extent_c", "lb");
        MTEST_CHECK_ERR_ARG(MPI_Type_size(vec, NULL), MPI_ERR_ARG, "MPI_Type_size", "size");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_envelope(vec, &ni, &na, NULL, &comb), MPI_ERR_ARG,
                            "MPI_Type_get_envelope", "num_datatypes");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_envelope(vec, &ni, NULL, &nt, &comb), MPI_ERR_ARG,
                            "MPI_Type_get_envelope", "num_addresses");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_envelope(vec, &ni, &na, &nt, NULL), MPI_ERR_ARG,
                            "MPI_Type_get_envelope", "combiner");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_name(vec, name, NULL), MPI_ERR_ARG, "MPI_Type_get_name",
                            "resultlen");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_name(MPI_DATATYPE_NULL, NULL, &len), MPI_ERR_ARG,
                            "MPI_Type_get_name", "type_name");
        MTEST_CHECK_ERR_ARG(MPI_Type_set_name(vec, NULL), MPI_ERR_ARG, "MPI_Type_set_name",
                            "type_name");
        MTEST_CHECK_ERR_ARG(
            MPI_Type_create_darray(1, 0, 1, gs, ds, da, NULL, MPI_ORDER_C, MPI_INT, &out),
            MPI_ERR_ARG, "MPI_Type_create_darray", "array_of_psizes");
        MTEST_CHECK_ERR_ARG(
            MPI_Type_create_darray(1, 0, 1, gs, NULL, da, ps, MPI_ORDER_C, MPI_INT, &out),
            MPI_ERR_ARG, "MPI_Type_create_darray", "array_of_distribs");
        MTEST_CHECK(out == MPI_DATATYPE_NULL, "a refused MPI_Type_create_darray set newtype");
        int ints[3];
        MTEST_CHECK_ERR_ARG(MPI_Type_get_contents(vec, 3, 0, 1, NULL, NULL, &out), MPI_ERR_ARG,
                            "MPI_Type_get_contents", "array_of_integers");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_contents(vec, 3, 0, 1, ints, NULL, NULL), MPI_ERR_ARG,
                            "MPI_Type_get_contents", "array_of_datatypes");
        MTEST_CHECK_ERR_ARG(MPI_Type_get_contents(vec, 2, 0, 1, ints, NULL, &out), MPI_ERR_ARG,
                            "MPI_Type_get_contents", "max_integers");
        /* a bad subarray names the entries of the three arrays */
        int sizes[1] = {4}, subsizes[1] = {5}, starts[1] = {0};
        rc = MPI_Type_create_subarray(1, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &out);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Type_create_subarray");
        if (mtest_is_manifold()) {
            char text[MPI_MAX_ERROR_STRING];
            MPI_Error_string(rc, text, &len);
            MTEST_CHECK(strstr(text, "array_of_subsizes[0]=5") != NULL,
                        "the subarray error does not name the entry: %s", text);
        }
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&t);
    MPI_Barrier(MPI_COMM_WORLD);
    rc = MPI_Sendrecv(&rank, 1, MPI_INT, rank, 1, buf, 1, MPI_INT, rank, 1, MPI_COMM_WORLD,
                      MPI_STATUS_IGNORE);
    MTEST_CHECK(rc == MPI_SUCCESS && buf[0] == rank, "self message after the errors");
    return mtest_finalize(0);
}
