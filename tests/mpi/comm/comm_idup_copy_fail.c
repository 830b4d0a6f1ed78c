/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_idup whose attribute copy callback fails, on an intracommunicator and on an
 * intercommunicator, on one process only (rank 0) and on all: the call returns the callback's
 * error at once (the others call MPI_Comm_idup only after a barrier that rank 0 enters after its
 * failed call) and hands out neither communicator nor request, while the agreement the other
 * processes take part in still ends everywhere. Nothing is left behind: no request or schedule (the
 * sanitizer build's leak check), no context id released twice (the communicator it was copying
 * from, and MPI_COMM_WORLD, keep working), no crash (the intercommunicator's agreement used to
 * read the local communicator of the freed placeholder).
 */
#include "mtest.h"

#define COPY_ERR (MPI_ERR_OTHER)

static int fail_here;

static int copy_fn(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    *(void **)out = in;
    *flag = 1;
    return fail_here ? COPY_ERR : MPI_SUCCESS;
}

/* Messages from every rank to rank 0 arrive whole; on an intercommunicator one way (the
 * group of even world ranks to the other's rank 0), then the other. */
static void gather_ranks(MPI_Comm comm, int sending, int first, int nsenders, const char *what)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    if (sending) {
        MPI_Send(&rank, 1, MPI_INT, 0, 3, comm);
        return;
    }
    for (int from = first; rank == 0 && from < nsenders; from++) {
        int got = -1;
        MPI_Recv(&got, 1, MPI_INT, from, 3, comm, MPI_STATUS_IGNORE);
        MTEST_CHECK(got == from, "%s: from %d got %d", what, from, got);
    }
}

static void check_usable(MPI_Comm comm, const char *what)
{
    int rank, size, inter, world_rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_test_inter(comm, &inter);
    if (!inter) {
        MPI_Comm_size(comm, &size);
        gather_ranks(comm, rank != 0, 1, size, what);
        return;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_remote_size(comm, &size);
    for (int even_sends = 1; even_sends >= 0; even_sends--)
        gather_ranks(comm, (world_rank % 2 == 0) == even_sends, 0, size, what);
}

static void check_parent(MPI_Comm parent, int keyval, int all_fail, const char *what)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_attr(parent, keyval, (void *)&fail_here);
    fail_here = all_fail || rank == 0;
    MPI_Comm newcomm = MPI_COMM_NULL;
    MPI_Request req = MPI_REQUEST_NULL;
    /* The others start their idup only after a barrier the failing ranks reach after theirs:
     * a failed call must not wait for the agreement. */
    if (!fail_here)
        MPI_Barrier(MPI_COMM_WORLD);
    int rc = MPI_Comm_idup(parent, &newcomm, &req);
    if (fail_here)
        MPI_Barrier(MPI_COMM_WORLD);
    if (fail_here) {
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        MTEST_CHECK(cls == COPY_ERR, "%s: MPI_Comm_idup returned class %s", what,
                    mtest_error_class_name(cls));
        MTEST_CHECK(newcomm == MPI_COMM_NULL && req == MPI_REQUEST_NULL,
                    "%s: the failed MPI_Comm_idup handed out a communicator or request", what);
    } else {
        MTEST_CHECK(rc == MPI_SUCCESS, "%s: MPI_Comm_idup failed (%d)", what, rc);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Comm_free(&newcomm);
    }
    MPI_Comm_delete_attr(parent, keyval);
    check_usable(parent, what);
    /* A second idup, and dups after it, take new context ids everywhere. */
    fail_here = 0;
    MPI_Comm_idup(parent, &newcomm, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check_usable(newcomm, what);
    MPI_Comm_free(&newcomm);
    check_usable(MPI_COMM_WORLD, what);
}

int main(int argc, char **argv)
{
    int rank, size, keyval;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &keyval, NULL);

    for (int all_fail = 0; all_fail < 2; all_fail++) {
        MPI_Comm dup;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        check_parent(dup, keyval, all_fail, all_fail ? "intra, all fail" : "intra, rank 0 fails");
        MPI_Comm_free(&dup);
        if (size < 2)
            continue;
        MPI_Comm local, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank % 2 == 0 ? 1 : 0, 7, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        check_parent(inter, keyval, all_fail, all_fail ? "inter, all fail" : "inter, rank 0 fails");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    MPI_Comm_free_keyval(&keyval);
    return mtest_finalize(0);
}
