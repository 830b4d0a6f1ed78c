/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running out of communicators: MPI_Comm_dup until the context ids are used up must fail with
 * MPI_ERR_OTHER and a message that says so (not MPI_ERR_NO_MEM: memory is not the problem),
 * on every rank alike, and once some are freed new communicators work again.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define MAX_TRIES 10000

int main(int argc, char **argv)
{
    int rank, made = 0, rc = MPI_SUCCESS, cls = -1;
    MPI_Comm *comms = NULL;

    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    comms = mtest_calloc(MAX_TRIES, sizeof(MPI_Comm));
    while (made < MAX_TRIES && (rc = MPI_Comm_dup(MPI_COMM_WORLD, &comms[made])) == MPI_SUCCESS)
        made++;
    MPI_Error_class(rc, &cls);
    MTEST_CHECK(made < MAX_TRIES && cls == MPI_ERR_OTHER,
                "after %d dups: error class %s, expected MPI_ERR_OTHER", made,
                mtest_error_class_name(cls));
    if (rc != MPI_SUCCESS) {
        char text[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, text, &len);
        MTEST_CHECK(strstr(text, "MPI_Comm_dup") && strstr(text, "too many communicators"),
                    "message: %s", text);
    }
    int all_made = 0;
    MPI_Allreduce(&made, &all_made, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MTEST_CHECK(all_made == made, "rank %d made %d communicators, another %d", rank, made,
                all_made);
    for (int i = 0; i < made; i++)
        MPI_Comm_free(&comms[i]);
    MPI_Comm again;
    rc = MPI_Comm_dup(MPI_COMM_WORLD, &again);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Comm_dup after freeing: %d", rc);
    if (rc == MPI_SUCCESS)
        MPI_Comm_free(&again);
    free(comms);
    return mtest_finalize(0);
}
