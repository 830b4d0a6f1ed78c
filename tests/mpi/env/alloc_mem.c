/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Alloc_mem and MPI_Free_mem (MPI-4.1 section 9.2). The info key
 * "mpi_minimum_memory_alignment" asks for an alignment; an implementation may ignore values
 * below its default, so larger powers of two must be honoured (MPICH 5.0.2 does). Values that
 * are not powers of two are hints that may be ignored: the call still succeeds. Every block is
 * writable over its whole size, size 0 works, a negative size is MPI_ERR_ARG.
 */
#include "mtest.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void alloc_and_check(MPI_Aint size, MPI_Info info, uintptr_t align, const char *what)
{
    void *p = NULL;
    int rc = MPI_Alloc_mem(size, info, &p);
    MTEST_CHECK(rc == MPI_SUCCESS && (size == 0 || p != NULL), "MPI_Alloc_mem(%ld) with %s: %d",
                (long)size, what, rc);
    if (rc != MPI_SUCCESS || p == NULL)
        return;
    MTEST_CHECK((uintptr_t)p % align == 0, "MPI_Alloc_mem(%ld) with %s gave %p, not %lu-aligned",
                (long)size, what, p, (unsigned long)align);
    mtest_fill(p, (size_t)size, 7);
    MTEST_CHECK(mtest_check_fill(p, (size_t)size, 7) < 0, "the block of %ld bytes did not hold",
                (long)size);
    MPI_Free_mem(p);
}

/* Allocations with "mpi_minimum_memory_alignment" set to value. */
static void with_hint(const char *value, MPI_Aint from, MPI_Aint to, uintptr_t align)
{
    MPI_Info info;
    char what[96];
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", value);
    snprintf(what, sizeof(what), "mpi_minimum_memory_alignment='%s'", value);
    for (MPI_Aint size = from; size <= to; size *= 7)
        alloc_and_check(size, info, align, what);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    static const char *aligns[] = {"128", "256", "4096", "65536", "1048576"};
    static const char *ignored[] = {"100", "abc", "", "-4096", "99999999999999999999999", "8"};
    void *p = NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    for (MPI_Aint size = 0; size <= 100000; size = size * 7 + 1)
        alloc_and_check(size, MPI_INFO_NULL, sizeof(double), "no info");
    for (size_t i = 0; i < sizeof(aligns) / sizeof(aligns[0]); i++)
        with_hint(aligns[i], 1, 100000, (uintptr_t)strtoull(aligns[i], NULL, 10));
    /* Manifold keeps its default alignment; MPICH 5.0.2 honours "100" as it can */
    for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
        with_hint(ignored[i], 1000, 1000, mtest_is_manifold() ? sizeof(double) : 1);
    MTEST_CHECK_ERR(MPI_Alloc_mem(-1, MPI_INFO_NULL, &p), MPI_ERR_ARG, "MPI_Alloc_mem");
    return mtest_finalize(0);
}
