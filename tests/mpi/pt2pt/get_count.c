/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Get_count, MPI_Get_elements and their large-count forms on received messages of
 * predefined types, to oneself (any number of ranks). For 0, 1 and 5 elements the count
 * is the number sent and the number of elements is the same for basic types and twice
 * that for the pair types (MPI_2INT, MPI_DOUBLE_INT, ...), whose elements are their two
 * members. A message of 7 bytes read as MPI_INT or MPI_SHORT gives MPI_UNDEFINED from all
 * four calls, and 12 bytes read as MPI_2INT (8 bytes) give count MPI_UNDEFINED.
 */
#include "mtest.h"

#include <string.h>

struct type_case {
    MPI_Datatype type;
    const char *name;
    int members; /* basic elements per item */
};

static int rank;
static unsigned char sbuf[1024], rbuf[1024];

static void self_message(MPI_Datatype type, int count, MPI_Datatype rtype, int rcount,
                         MPI_Status *status)
{
    MPI_Request req;

    MPI_Irecv(rbuf, rcount, rtype, rank, 0, MPI_COMM_WORLD, &req);
    MPI_Send(sbuf, count, type, rank, 0, MPI_COMM_WORLD);
    MPI_Wait(&req, status);
}

static void check_counts(const MPI_Status *status, MPI_Datatype type, const char *name, int count,
                         int elements)
{
    MPI_Count count_c = -1, elements_c = -1;
    int got_count = -1, got_elements = -1;

    MPI_Get_count(status, type, &got_count);
    MPI_Get_count_c(status, type, &count_c);
    MPI_Get_elements(status, type, &got_elements);
    MPI_Get_elements_c(status, type, &elements_c);
    MTEST_CHECK(got_count == count && count_c == count,
                "%s: MPI_Get_count %d, MPI_Get_count_c %lld, expected %d", name, got_count,
                (long long)count_c, count);
    MTEST_CHECK(got_elements == elements && elements_c == elements,
                "%s: MPI_Get_elements %d, MPI_Get_elements_c %lld, expected %d", name, got_elements,
                (long long)elements_c, elements);
}

static void check_whole(const struct type_case *c)
{
    const int counts[] = {0, 1, 5};
    MPI_Status status;

    for (int i = 0; i < 3; i++) {
        self_message(c->type, counts[i], c->type, 10, &status);
        check_counts(&status, c->type, c->name, counts[i], counts[i] * c->members);
    }
}

static void check_partial(void)
{
    MPI_Status status;
    MPI_Count count_c = 0;
    int count = 0;

    self_message(MPI_BYTE, 7, MPI_BYTE, 100, &status);
    check_counts(&status, MPI_BYTE, "7 bytes as MPI_BYTE", 7, 7);
    check_counts(&status, MPI_INT, "7 bytes as MPI_INT", MPI_UNDEFINED, MPI_UNDEFINED);
    check_counts(&status, MPI_SHORT, "7 bytes as MPI_SHORT", MPI_UNDEFINED, MPI_UNDEFINED);
    self_message(MPI_BYTE, 12, MPI_BYTE, 100, &status);
    check_counts(&status, MPI_INT, "12 bytes as MPI_INT", 3, 3);
    /* only the count: the standard says 3 elements, MPICH 5.0.2 says MPI_UNDEFINED */
    MPI_Get_count(&status, MPI_2INT, &count);
    MPI_Get_count_c(&status, MPI_2INT, &count_c);
    MTEST_CHECK(count == MPI_UNDEFINED && count_c == MPI_UNDEFINED,
                "12 bytes as MPI_2INT: count %d, count_c %lld", count, (long long)count_c);
}

int main(int argc, char **argv)
{
    const struct type_case cases[] = {
        {MPI_BYTE, "MPI_BYTE", 1},
        {MPI_CHAR, "MPI_CHAR", 1},
        {MPI_SHORT, "MPI_SHORT", 1},
        {MPI_INT, "MPI_INT", 1},
        {MPI_LONG, "MPI_LONG", 1},
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 1},
        {MPI_FLOAT, "MPI_FLOAT", 1},
        {MPI_DOUBLE, "MPI_DOUBLE", 1},
        {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", 1},
        {MPI_INT64_T, "MPI_INT64_T", 1},
        {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 1},
        {MPI_AINT, "MPI_AINT", 1},
        {MPI_2INT, "MPI_2INT", 2},
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 2},
        {MPI_SHORT_INT, "MPI_SHORT_INT", 2},
        {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", 2},
    };

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(sbuf, 0x5a, sizeof(sbuf));
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        check_whole(&cases[i]);
    }
    check_partial();
    return mtest_finalize(0);
}
