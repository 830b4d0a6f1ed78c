/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The special pointer constants passed where the standard allows them, compiled (not only
 * parsed) with optimisation and -Wall -Werror: gcc's object-size warnings, which run only in
 * the optimiser, must not take MPI_UNWEIGHTED (((int *)10)) or MPI_WEIGHTS_EMPTY for an array
 * of size 0. Never linked or run.
 */
#include <mpi.h>

int unweighted_graphs(MPI_Comm comm, const int *peers, int n, MPI_Comm *out);
int ignored_statuses(int n, MPI_Request *reqs, int *indices);

int unweighted_graphs(MPI_Comm comm, const int *peers, int n, MPI_Comm *out)
{
    int rc = MPI_Dist_graph_create_adjacent(comm, n, peers, MPI_UNWEIGHTED, n, peers,
                                            MPI_UNWEIGHTED, MPI_INFO_NULL, 0, out);
    rc |= MPI_Dist_graph_create_adjacent(comm, 0, peers, MPI_WEIGHTS_EMPTY, 0, peers,
                                         MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, out);
    int degree = 1;
    rc |= MPI_Dist_graph_create(comm, 1, peers, &degree, peers, MPI_UNWEIGHTED, MPI_INFO_NULL, 1,
                                out);
    int sources[4], dests[4];
    rc |= MPI_Dist_graph_neighbors(*out, 4, sources, MPI_UNWEIGHTED, 4, dests, MPI_UNWEIGHTED);
    rc |= PMPI_Dist_graph_neighbors(*out, 4, sources, MPI_UNWEIGHTED, 4, dests, MPI_UNWEIGHTED);
    return rc;
}

int ignored_statuses(int n, MPI_Request *reqs, int *indices)
{
    int flag, done;
    int rc = MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    rc |= MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE);
    rc |= MPI_Waitsome(n, reqs, &done, indices, MPI_STATUSES_IGNORE);
    rc |= MPI_Testsome(n, reqs, &done, indices, MPI_STATUSES_IGNORE);
    rc |= MPI_Request_get_status_all(n, reqs, &flag, MPI_STATUSES_IGNORE);
    rc |= MPI_Request_get_status_some(n, reqs, &done, indices, MPI_STATUSES_IGNORE);
    return rc;
}
