/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_split_type by hardware resource (MPI-4.1 section 7.4.2). With MTEST_BIND=core each
 * process binds itself to one CPU (its world rank modulo the CPUs it may use) before the split:
 * MPI_COMM_TYPE_HW_GUIDED with "Core" then groups exactly the processes on the same CPU, and
 * MPI_COMM_TYPE_HW_UNGUIDED gives a strict subset whose members share a CPU (or MPI_COMM_NULL
 * when every process is on one CPU). Unbound processes that may run on several cores get
 * MPI_COMM_NULL from "Core". Any binding: "Package" never mixes nodes, an unknown resource
 * name gives MPI_COMM_NULL everywhere, "mpi_shared_memory" is MPI_COMM_TYPE_SHARED, and the
 * new communicator's info names the resource.
 */
#define _GNU_SOURCE
#include "mtest.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

static MPI_Comm split_type_info(int type, const char *resource)
{
    MPI_Info info;
    MPI_Comm out;
    MPI_Info_create(&info);
    if (resource != NULL)
        MPI_Info_set(info, "mpi_hw_resource_type", resource);
    MPI_Comm_split_type(MPI_COMM_WORLD, type, 0, info, &out);
    MPI_Info_free(&info);
    return out;
}

static MPI_Comm split_guided(const char *resource)
{
    return split_type_info(MPI_COMM_TYPE_HW_GUIDED, resource);
}

/* 1 when every member of comm reports the same value. */
static int all_same(MPI_Comm comm, int value)
{
    int lo, hi;
    MPI_Allreduce(&value, &lo, 1, MPI_INT, MPI_MIN, comm);
    MPI_Allreduce(&value, &hi, 1, MPI_INT, MPI_MAX, comm);
    return lo == hi;
}

int main(int argc, char **argv)
{
    MPI_Comm node, comm;
    int wrank, wsize, nsize, csize, node_id, cpu = -1, ncpus, bound;
    cpu_set_t set;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &nsize);
    MPI_Allreduce(&wrank, &node_id, 1, MPI_INT, MPI_MIN, node);

    sched_getaffinity(0, sizeof(set), &set);
    ncpus = CPU_COUNT(&set);
    bound = getenv("MTEST_BIND") != NULL && strcmp(getenv("MTEST_BIND"), "core") == 0;
    if (bound) {
        int want = wrank % ncpus;
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (CPU_ISSET(c, &set) && want-- == 0) {
                cpu = c;
                break;
            }
        }
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        MTEST_CHECK(sched_setaffinity(0, sizeof(set), &set) == 0, "cannot bind to CPU %d", cpu);
    }

    /* an unknown resource: nobody gets a communicator */
    comm = split_guided("NoSuchResource");
    MTEST_CHECK(comm == MPI_COMM_NULL, "an unknown resource gave a communicator");

    /* the node */
    comm = split_guided("mpi_shared_memory");
    MTEST_CHECK(comm != MPI_COMM_NULL, "mpi_shared_memory gave MPI_COMM_NULL");
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_size(comm, &csize);
        MTEST_CHECK(csize == nsize, "mpi_shared_memory: %d processes, the node has %d", csize,
                    nsize);
        MPI_Info used;
        char kind[MPI_MAX_INFO_VAL] = "";
        int len = MPI_MAX_INFO_VAL, flag = 0;
        MPI_Comm_get_info(comm, &used);
        MPI_Info_get_string(used, "mpi_hw_resource_type", &len, kind, &flag);
        MPI_Info_free(&used);
        MTEST_CHECK(flag && strcmp(kind, "mpi_shared_memory") == 0,
                    "mpi_shared_memory: the communicator's info says \"%s\"", kind);
        MPI_Comm_free(&comm);
    }

    /* MPI_COMM_TYPE_RESOURCE_GUIDED takes the same key (MPI-4.1 section 7.4.2) */
    comm = split_type_info(MPI_COMM_TYPE_RESOURCE_GUIDED, "mpi_shared_memory");
    MTEST_CHECK(comm != MPI_COMM_NULL, "resource guided mpi_shared_memory gave MPI_COMM_NULL");
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_size(comm, &csize);
        MTEST_CHECK(csize == nsize, "resource guided: %d processes, the node has %d", csize, nsize);
        MPI_Comm_free(&comm);
    }
    comm = split_type_info(MPI_COMM_TYPE_RESOURCE_GUIDED, NULL);
    MTEST_CHECK(comm == MPI_COMM_NULL, "resource guided without a key gave a communicator");
    comm = split_type_info(MPI_COMM_TYPE_RESOURCE_GUIDED, "NoSuchResource");
    MTEST_CHECK(comm == MPI_COMM_NULL, "resource guided, unknown resource gave a communicator");
    /* only rank 0 asks, the others pass MPI_UNDEFINED */
    comm = split_type_info(wrank == 0 ? MPI_COMM_TYPE_RESOURCE_GUIDED : MPI_UNDEFINED,
                           "mpi_shared_memory");
    MTEST_CHECK((comm != MPI_COMM_NULL) == (wrank == 0),
                "resource guided on rank 0 only: rank %d %s a communicator", wrank,
                comm != MPI_COMM_NULL ? "got" : "did not get");
    if (comm != MPI_COMM_NULL) {
        MPI_Comm_size(comm, &csize);
        MTEST_CHECK(csize == 1, "resource guided on rank 0 only: %d processes", csize);
        MPI_Comm_free(&comm);
    }

    /* an hwloc type on some processes, MPI_UNDEFINED on the others: nobody hangs, the
     * undefined ones get MPI_COMM_NULL and the others a communicator of askers only */
    for (int asker = 0; asker < 2; asker++) {
        int asks = (wrank == 0) == (asker == 0);
        comm = split_type_info(asks ? MPI_COMM_TYPE_HW_GUIDED : MPI_UNDEFINED, "Package");
        MTEST_CHECK(asks || comm == MPI_COMM_NULL, "MPI_UNDEFINED on rank %d gave a communicator",
                    wrank);
        if (comm != MPI_COMM_NULL) {
            MTEST_CHECK(all_same(comm, asks), "a mixed Package split mixed in an undefined one");
            MPI_Comm_free(&comm);
        }
    }

    /* a package never spans nodes */
    comm = split_guided("Package");
    if (comm != MPI_COMM_NULL) {
        MTEST_CHECK(all_same(comm, node_id), "a Package communicator spans several nodes");
        MPI_Comm_free(&comm);
    }

    comm = split_guided("Core");
    /* Manifold looks at the calling thread's binding, which is what MTEST_BIND sets; MPICH
     * 5.0.2 looks at the whole process's, so it is not checked there */
    if (bound && mtest_is_manifold()) {
        MTEST_CHECK(comm != MPI_COMM_NULL, "bound to CPU %d, \"Core\" gave MPI_COMM_NULL", cpu);
        if (comm != MPI_COMM_NULL) {
            int expect = 0, flag = 0;
            char value[MPI_MAX_INFO_VAL];
            MPI_Info info;
            /* the processes of my node bound to my CPU */
            for (int r = 0; r < wsize; r++)
                expect += r % ncpus == wrank % ncpus;
            MPI_Comm_size(comm, &csize);
            MTEST_CHECK(all_same(comm, cpu) && all_same(comm, node_id),
                        "a Core communicator mixes CPUs or nodes");
            if (nsize == wsize)
                MTEST_CHECK(csize == expect, "Core: %d processes, expected %d", csize, expect);
            MPI_Comm_get_info(comm, &info);
            MPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL - 1, value, &flag);
            MTEST_CHECK(flag && strcmp(value, "Core") == 0, "the info names '%s', not Core",
                        flag ? value : "nothing");
            MPI_Info_free(&info);
            MPI_Comm_free(&comm);
        }
    } else if (!bound && ncpus > 1 && mtest_is_manifold()) {
        /* this host has one hardware thread per core (MPICH 5.0.2 decides otherwise) */
        MTEST_CHECK(comm == MPI_COMM_NULL, "unbound, \"Core\" gave a communicator");
    }
    if (comm != MPI_COMM_NULL)
        MPI_Comm_free(&comm);

    /* the unguided split names the resource it chose in the caller's info and the new
     * communicator's */
    MPI_Info chosen;
    MPI_Info_create(&chosen);
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, 0, chosen, &comm);
    if (comm != MPI_COMM_NULL) {
        char in_arg[MPI_MAX_INFO_VAL] = "", in_comm[MPI_MAX_INFO_VAL] = "";
        int len = MPI_MAX_INFO_VAL, flag = 0, flag2 = 0;
        MPI_Info_get_string(chosen, "mpi_hw_resource_type", &len, in_arg, &flag);
        MPI_Info used;
        MPI_Comm_get_info(comm, &used);
        len = MPI_MAX_INFO_VAL;
        MPI_Info_get_string(used, "mpi_hw_resource_type", &len, in_comm, &flag2);
        MPI_Info_free(&used);
        MTEST_CHECK(flag && flag2 && strcmp(in_arg, in_comm) == 0,
                    "unguided: resource \"%s\" in the info argument, \"%s\" on the communicator",
                    in_arg, in_comm);
        MPI_Comm_size(comm, &csize);
        MTEST_CHECK(csize < wsize, "unguided: %d processes, not a strict subset of %d", csize,
                    wsize);
        if (bound && nsize == wsize && mtest_is_manifold())
            MTEST_CHECK(all_same(comm, cpu), "unguided: a communicator mixes CPUs");
        MPI_Comm_free(&comm);
    } else if (mtest_is_manifold()) {
        /* nothing divides: one node, and unbound or all on one CPU */
        MTEST_CHECK(nsize == wsize && (!bound || ncpus == 1 || wsize == 1),
                    "unguided gave MPI_COMM_NULL although the processes can be divided");
    }
    MPI_Info_free(&chosen);
    MPI_Comm_free(&node);
    return mtest_finalize(mtest_error_count());
}
