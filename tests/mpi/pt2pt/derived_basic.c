/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Derived datatypes in point-to-point, which a library may not support yet: either the
 * constructor (MPI_Type_contiguous, MPI_Type_vector) fails cleanly with
 * MPI_ERR_UNSUPPORTED_OPERATION through MPI_ERRORS_RETURN and the library keeps working,
 * or the type works: committed, it has the right size and extent, a message of 3 items
 * sent to oneself lands in the right bytes (a vector leaves its gaps alone), and
 * MPI_Get_count and MPI_Get_elements count items and basic elements. Freeing sets the
 * handle to MPI_DATATYPE_NULL.
 */
#include "mtest.h"

#define ITEMS 3

static int rank;

/* Returns 1 when the constructor worked, 0 after checking its error. */
static int constructed(int rc, const char *fname)
{
    if (rc == MPI_SUCCESS) {
        return 1;
    }
    MTEST_CHECK_ERR(rc, MPI_ERR_UNSUPPORTED_OPERATION, fname);
    mtest_debug("%s is not supported", fname);
    return 0;
}

static void self_exchange(MPI_Datatype type, const int *sbuf, int *rbuf, MPI_Status *status)
{
    MPI_Request req;

    MPI_Irecv(rbuf, ITEMS, type, rank, 0, MPI_COMM_WORLD, &req);
    MPI_Send(sbuf, ITEMS, type, rank, 0, MPI_COMM_WORLD);
    MPI_Wait(&req, status);
}

static void check_counts(const MPI_Status *status, MPI_Datatype type, int elements,
                         const char *what)
{
    int count = -1, got_elements = -1;

    MPI_Get_count(status, type, &count);
    MPI_Get_elements(status, type, &got_elements);
    MTEST_CHECK(count == ITEMS && got_elements == elements,
                "%s: count %d elements %d, expected %d and %d", what, count, got_elements, ITEMS,
                elements);
}

static void check_contiguous(void)
{
    MPI_Datatype type = MPI_DATATYPE_NULL;
    MPI_Aint lb, extent;
    MPI_Status status;
    int sbuf[4 * ITEMS], rbuf[4 * ITEMS], size = -1;

    if (!constructed(MPI_Type_contiguous(4, MPI_INT, &type), "MPI_Type_contiguous")) {
        return;
    }
    MPI_Type_commit(&type);
    MPI_Type_size(type, &size);
    MPI_Type_get_extent(type, &lb, &extent);
    MTEST_CHECK(size == 4 * (int)sizeof(int) && lb == 0 && extent == 4 * (MPI_Aint)sizeof(int),
                "contiguous(4, MPI_INT): size %d lb %ld extent %ld", size, (long)lb, (long)extent);
    for (int i = 0; i < 4 * ITEMS; i++) {
        sbuf[i] = i;
        rbuf[i] = -1;
    }
    self_exchange(type, sbuf, rbuf, &status);
    check_counts(&status, type, 4 * ITEMS, "contiguous");
    for (int i = 0; i < 4 * ITEMS; i++) {
        if (!MTEST_CHECK(rbuf[i] == i, "contiguous: int %d is %d", i, rbuf[i])) {
            break;
        }
    }
    MPI_Type_free(&type);
    MTEST_CHECK(type == MPI_DATATYPE_NULL, "MPI_Type_free left the handle set");
}

/* Two blocks of one int with a stride of three: items cover ints 0 and 3 of 4. */
static void check_vector(void)
{
    MPI_Datatype vector = MPI_DATATYPE_NULL, type = MPI_DATATYPE_NULL;
    MPI_Status status;
    int sbuf[4 * ITEMS], rbuf[4 * ITEMS];

    if (!constructed(MPI_Type_vector(2, 1, 3, MPI_INT, &vector), "MPI_Type_vector")) {
        return;
    }
    /* resize to 4 ints so that consecutive items do not overlap */
    if (!constructed(MPI_Type_create_resized(vector, 0, 4 * (MPI_Aint)sizeof(int), &type),
                     "MPI_Type_create_resized")) {
        MPI_Type_free(&vector);
        return;
    }
    MPI_Type_commit(&type);
    for (int i = 0; i < 4 * ITEMS; i++) {
        sbuf[i] = i;
        rbuf[i] = -1;
    }
    self_exchange(type, sbuf, rbuf, &status);
    check_counts(&status, type, 2 * ITEMS, "vector");
    for (int i = 0; i < 4 * ITEMS; i++) {
        int expect = i % 4 == 0 || i % 4 == 3 ? i : -1;

        if (!MTEST_CHECK(rbuf[i] == expect, "vector: int %d is %d, expected %d", i, rbuf[i],
                         expect)) {
            break;
        }
    }
    MPI_Type_free(&type);
    MPI_Type_free(&vector);
}

int main(int argc, char **argv)
{
    int value = -1;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    check_contiguous();
    check_vector();
    /* basic types still work whatever happened above */
    MPI_Sendrecv(&rank, 1, MPI_INT, rank, 1, &value, 1, MPI_INT, rank, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MTEST_CHECK(value == rank, "message to oneself after the derived types carried %d", value);
    return mtest_finalize(0);
}
