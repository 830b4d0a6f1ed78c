/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A gather or scatter whose root sends itself more than it expects (its own block does not
 * fit): the root gets MPI_ERR_TRUNCATE, and must still take part. It used to return the error
 * at once, and every other process waited for it for ever. Now the others' blocks move as
 * usual and the root's own block is left where it was (as with MPI_IN_PLACE). Blocking,
 * nonblocking and persistent, uniform and v forms, small and large blocks. A nonblocking or
 * persistent call returns its request and the error comes at completion: it used to come from
 * the call itself, and a program that then never waits (as MPICH's igatherlength) leaked it.
 */
#include "mtest.h"

#include <stdlib.h>

enum { GATHER, SCATTER, GATHERV, SCATTERV, IGATHER, ISCATTER, GATHER_INIT, NKINDS };
static const char *const names[NKINDS] = {"MPI_Gather",     "MPI_Scatter", "MPI_Gatherv",
                                          "MPI_Scatterv",   "MPI_Igather", "MPI_Iscatter",
                                          "MPI_Gather_init"};

/* The call succeeds; the error, if any, comes from the completion, which frees the request. */
static int complete(int rc, MPI_Request *req, const char *name)
{
    if (rc != MPI_SUCCESS) {
        MTEST_CHECK(0, "%s returned %d itself", name, rc);
        return rc;
    }
    rc = MPI_Wait(req, MPI_STATUS_IGNORE);
    MTEST_CHECK(*req == MPI_REQUEST_NULL, "%s: the request was not freed", name);
    return rc;
}

static int run(int kind, int n, int rank, int size, int *mine, int *all, MPI_Comm comm)
{
    const int root = size - 1;
    int is_root = rank == root, *counts = NULL, *displs = NULL;
    /* only the root's own block is too long: a gathering root sends itself n + 1 elements
     * for a block of n, a scattering root sends itself n for a receive of n - 1 */
    int gathers = kind == GATHER || kind == GATHERV || kind == IGATHER || kind == GATHER_INIT;
    int all_count = n;
    int one = !is_root ? n : gathers ? n + 1 : n - 1;
    counts = malloc(sizeof(int) * (size_t)size);
    displs = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++) {
        counts[i] = all_count;
        displs[i] = i * n;
    }
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    switch (kind) {
    case GATHER: rc = MPI_Gather(mine, one, MPI_INT, all, all_count, MPI_INT, root, comm); break;
    case SCATTER: rc = MPI_Scatter(all, all_count, MPI_INT, mine, one, MPI_INT, root, comm); break;
    case GATHERV:
        rc = MPI_Gatherv(mine, one, MPI_INT, all, counts, displs, MPI_INT, root, comm);
        break;
    case SCATTERV:
        rc = MPI_Scatterv(all, counts, displs, MPI_INT, mine, one, MPI_INT, root, comm);
        break;
    case IGATHER:
        rc = MPI_Igather(mine, one, MPI_INT, all, all_count, MPI_INT, root, comm, &req);
        rc = complete(rc, &req, names[kind]);
        break;
    case ISCATTER:
        rc = MPI_Iscatter(all, all_count, MPI_INT, mine, one, MPI_INT, root, comm, &req);
        rc = complete(rc, &req, names[kind]);
        break;
    default: { /* every start of the persistent request ends the same way */
        rc = MPI_Gather_init(mine, one, MPI_INT, all, all_count, MPI_INT, root, comm, MPI_INFO_NULL,
                             &req);
        if (rc != MPI_SUCCESS) {
            MTEST_CHECK(0, "MPI_Gather_init returned %d itself", rc);
            break;
        }
        int first = MPI_SUCCESS;
        for (int start = 0; start < 2; start++) {
            MPI_Start(&req);
            int end = MPI_Wait(&req, MPI_STATUS_IGNORE);
            if (start == 0)
                first = end;
            else
                rc = end;
        }
        MTEST_CHECK((first == MPI_SUCCESS) == (rc == MPI_SUCCESS),
                    "MPI_Gather_init: the two starts ended in %d and %d", first, rc);
        MPI_Request_free(&req);
        break;
    }
    }
    free(counts);
    free(displs);
    return rc;
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    const int root = size - 1;
    static const int sizes[] = {4, 40000};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        int n = sizes[si];
        int *mine = malloc(sizeof(int) * (size_t)(n + 1));
        int *all = malloc(sizeof(int) * (size_t)n * (size_t)size);
        for (int kind = 0; kind < NKINDS; kind++) {
            int gathers =
                kind == GATHER || kind == GATHERV || kind == IGATHER || kind == GATHER_INIT;
            for (int i = 0; i <= n; i++)
                mine[i] = gathers ? rank * 1000000 + i : -1;
            for (int i = 0; i < n * size; i++)
                all[i] = gathers ? -1 : (i / n) * 1000000 + i % n;
            int rc = run(kind, n, rank, size, mine, all, MPI_COMM_WORLD);
            int cls = MPI_SUCCESS;
            if (rc != MPI_SUCCESS)
                MPI_Error_class(rc, &cls);
            if (rank == root)
                MTEST_CHECK(cls == MPI_ERR_TRUNCATE, "%s n=%d: the root got class %d", names[kind],
                            n, cls);
            else
                MTEST_CHECK(rc == MPI_SUCCESS, "%s n=%d: rank %d got %d", names[kind], n, rank, rc);
            if (gathers && rank == root) {
                for (int r = 0; r < size; r++) {
                    int want = r == root ? -1 : r * 1000000 + n - 1;
                    MTEST_CHECK(all[r * n + n - 1] == want, "%s n=%d: block %d holds %d, not %d",
                                names[kind], n, r, all[r * n + n - 1], want);
                }
            } else if (!gathers) {
                int want = rank == root ? -1 : rank * 1000000 + n - 1;
                int got = mine[rank == root ? n - 2 : n - 1];
                MTEST_CHECK(got == want, "%s n=%d: rank %d received %d, not %d", names[kind], n,
                            rank, got, want);
            }
        }
        free(mine);
        free(all);
    }
    return mtest_finalize(0);
}
