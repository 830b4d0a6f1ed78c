/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Wrong use of ports, accept/connect, spawn and names gives the right error class through the
 * error handler, with a message naming the function and the argument, and never a hang: a
 * connect to a closed port gives up after MANIFOLD_CONNECT_TIMEOUT (set to 1 s by the
 * testlist). Errors at the root of a collective call reach every process of the group.
 */
#include "mtest.h"

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size, rc;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int manifold = mtest_is_manifold();
    char port[MPI_MAX_PORT_NAME];
    MPI_Comm inter = MPI_COMM_NULL;

    /* Ports */
    if (manifold) {
        rc = MPI_Open_port(MPI_INFO_NULL, NULL);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Open_port", "port_name");
    }
    rc = MPI_Open_port(MPI_INFO_NULL, port);
    MTEST_CHECK(rc == MPI_SUCCESS, "open port");
    rc = MPI_Close_port(port);
    MTEST_CHECK(rc == MPI_SUCCESS, "close port");
    if (manifold) {
        rc = MPI_Close_port(port);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_PORT, "MPI_Close_port", "port_name");
        rc = MPI_Close_port("not a port");
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_PORT, "MPI_Close_port", "port_name");
        rc = MPI_Close_port(NULL);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Close_port", "port_name");
    }

    /* Accept and connect: argument errors first, then a bad name at the root reaches all. */
    rc = MPI_Comm_accept(port, MPI_INFO_NULL, size, MPI_COMM_WORLD, &inter);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ROOT, "MPI_Comm_accept", "root");
    rc = MPI_Comm_connect(port, MPI_INFO_NULL, -1, MPI_COMM_WORLD, &inter);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ROOT, "MPI_Comm_connect", "root");
    rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_NULL, &inter);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_connect");
    if (manifold) {
        rc = MPI_Comm_connect(rank == 0 ? "garbage" : NULL, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                              &inter);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_PORT, "MPI_Comm_connect", "port_name");
        /* accepting on a port another process opened (or a closed one) */
        rc = MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_PORT, "MPI_Comm_accept", "port_name");
        /* nobody accepts on a closed port: the connect gives up after the time limit */
        double t0 = MPI_Wtime();
        rc = MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter);
        MTEST_CHECK_ERR(rc, MPI_ERR_PORT, "MPI_Comm_connect");
        MTEST_CHECK(MPI_Wtime() - t0 < 20, "the connect took %.1f s", MPI_Wtime() - t0);
        MTEST_CHECK(inter == MPI_COMM_NULL, "a failed connect returned a communicator");
    }

    /* The rest is checked on Manifold only: MPICH 5.0.2 returns MPI_ERR_INTERN for the join
     * and crashes in the spawn of 0 processes. */
    if (!manifold)
        return mtest_finalize(0);

    /* Join on a descriptor that is not a socket */
    rc = MPI_Comm_join(-1, &inter);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Comm_join", "fd");

    /* Spawn: root-only arguments reach the whole group */
    int codes[4] = {-1, -1, -1, -1};
    rc = MPI_Comm_spawn("./dynproc_errors", MPI_ARGV_NULL, rank == 0 ? 0 : 1, MPI_INFO_NULL, 0,
                        MPI_COMM_WORLD, &inter, codes);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Comm_spawn", "maxprocs");
    rc = MPI_Comm_spawn("./no-such-program", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                        &inter, codes);
    MTEST_CHECK_ERR(rc, MPI_ERR_SPAWN, "MPI_Comm_spawn");
    if (rank == 0)
        MTEST_CHECK(codes[0] == MPI_ERR_SPAWN, "errcode %d", codes[0]);
    rc = MPI_Comm_spawn("x", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, NULL, codes);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Comm_spawn", "intercomm");
    char *cmds[1] = {"x"};
    int np[1] = {1};
    rc = MPI_Comm_spawn_multiple(rank == 0 ? 0 : 1, cmds, MPI_ARGVS_NULL, np, NULL, 0,
                                 MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE);
    MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Comm_spawn_multiple", "count");

    /* Names */
    {
        char found[MPI_MAX_PORT_NAME];
        char service[64];
        snprintf(service, sizeof(service), "manifold-test-errors-%d", rank);
        rc = MPI_Lookup_name(service, MPI_INFO_NULL, found);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_NAME, "MPI_Lookup_name", "service_name");
        rc = MPI_Unpublish_name(service, MPI_INFO_NULL, "p");
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_SERVICE, "MPI_Unpublish_name", "service_name");
        rc = MPI_Publish_name(service, MPI_INFO_NULL, "port-a");
        MTEST_CHECK(rc == MPI_SUCCESS, "publish");
        rc = MPI_Publish_name(service, MPI_INFO_NULL, "port-b");
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_SERVICE, "MPI_Publish_name", "service_name");
        rc = MPI_Unpublish_name(service, MPI_INFO_NULL, "port-a");
        MTEST_CHECK(rc == MPI_SUCCESS, "unpublish");
        rc = MPI_Publish_name(NULL, MPI_INFO_NULL, "p");
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Publish_name", "service_name");
        rc = MPI_Lookup_name(service, MPI_INFO_NULL, NULL);
        MTEST_CHECK_ERR_ARG(rc, MPI_ERR_ARG, "MPI_Lookup_name", "port_name");
    }

    /* Nothing was spawned: no parent. */
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_Comm_get_parent(&parent);
    MTEST_CHECK(parent == MPI_COMM_NULL, "a process started by mpiexec has a parent");
    return mtest_finalize(0);
}
