/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicator hints and intercommunicator queries on intracommunicators: MPI_Comm_set_info
 * keeps a hint (a key of our own: an implementation reports the values it uses for the
 * standard's assertions) that MPI_Comm_get_info returns (in a new info object the caller frees),
 * MPI_Comm_dup keeps the parent's hints, MPI_Comm_dup_with_info replaces them with its own
 * (and behaves like a dup: messages work), a later set_info replaces the values it names and
 * keeps the others (MPI-4.1 section 7.4.4; it once dropped them). The standard's four
 * assertions are reported with their defaults ("false") on a communicator that set none, and
 * mpi_memory_alloc_kinds with its default "mpi,system", or of the kinds asked for only those
 * supported (MPI-4.1 section 11.4.3: a program decides from it whether to pass device memory;
 * the kinds were echoed as given).
 * MPI_Comm_test_inter is false on MPI_COMM_WORLD and a dup; MPI_Comm_remote_size and
 * MPI_Comm_remote_group give MPI_ERR_COMM on an intracommunicator (Manifold only: MPICH
 * 5.0.2 answers them); MPI_Comm_set_info with MPI_INFO_NULL gives MPI_ERR_INFO (Manifold
 * only: MPICH 5.0.2 aborts).
 */
#include <string.h>

#include "mtest.h"

/* The value of key in comm's hints, or "" when not set. */
static void hint(MPI_Comm comm, const char *key, char *value, int len)
{
    MPI_Info used;
    int flag = 0;

    value[0] = '\0';
    MPI_Comm_get_info(comm, &used);
    MPI_Info_get(used, key, len - 1, value, &flag);
    if (!flag)
        value[0] = '\0';
    MPI_Info_free(&used);
}

int main(int argc, char **argv)
{
    MPI_Comm dup, dup2;
    MPI_Info info;
    MPI_Group group = MPI_GROUP_NULL;
    char value[64];
    int rank, size, flag = -1, got = -1, rc;

    mtest_init(&argc, &argv);
    /* The standard lets an implementation drop hints it does not use (MPICH 5.0.2 drops
     * unknown keys): the values read back are checked on Manifold only. */
    int manifold = mtest_is_manifold();
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mf_test_hint", "true");
    MPI_Comm_set_info(dup, info);
    MPI_Info_free(&info);
    hint(dup, "mf_test_hint", value, sizeof(value));
    MTEST_CHECK(!manifold || strcmp(value, "true") == 0, "set_info hint read back as '%s'", value);

    MPI_Comm_dup(dup, &dup2);
    hint(dup2, "mf_test_hint", value, sizeof(value));
    MTEST_CHECK(!manifold || strcmp(value, "true") == 0, "MPI_Comm_dup did not keep the hint: '%s'",
                value);
    MPI_Comm_free(&dup2);

    MPI_Info_create(&info);
    MPI_Info_set(info, "mf_test_other_hint", "true");
    MPI_Comm_dup_with_info(dup, info, &dup2);
    MPI_Info_free(&info);
    hint(dup2, "mf_test_hint", value, sizeof(value));
    MTEST_CHECK(!manifold || value[0] == '\0', "dup_with_info kept the parent's hint '%s'", value);
    hint(dup2, "mf_test_other_hint", value, sizeof(value));
    MTEST_CHECK(!manifold || strcmp(value, "true") == 0, "dup_with_info hint read back as '%s'",
                value);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, 3, &got, 1, MPI_INT,
                 (rank + size - 1) % size, 3, dup2, MPI_STATUS_IGNORE);
    MTEST_CHECK(got == (rank + size - 1) % size, "dup_with_info ring: got %d", got);
    MPI_Comm_free(&dup2);

    MPI_Info_create(&info);
    MPI_Info_set(info, "mf_test_hint", "false");
    MPI_Comm_set_info(dup, info);
    MPI_Info_free(&info);
    hint(dup, "mf_test_hint", value, sizeof(value));
    MTEST_CHECK(!manifold || strcmp(value, "false") == 0, "second set_info read back as '%s'",
                value);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mf_test_third_hint", "1");
    MPI_Comm_set_info(dup, info);
    MPI_Info_free(&info);
    hint(dup, "mf_test_hint", value, sizeof(value));
    MTEST_CHECK(!manifold || strcmp(value, "false") == 0,
                "a set_info of another key dropped the hint: '%s'", value);

    static const char *const assertions[] = {"mpi_assert_no_any_source", "mpi_assert_no_any_tag",
                                             "mpi_assert_allow_overtaking",
                                             "mpi_assert_exact_length"};
    MPI_Comm_dup(MPI_COMM_WORLD, &dup2);
    for (int i = 0; i < 4; i++) {
        hint(dup2, assertions[i], value, sizeof(value));
        MTEST_CHECK(strcmp(value, "false") == 0, "%s of a new communicator reads '%s'",
                    assertions[i], value);
    }
    hint(dup2, "mpi_memory_alloc_kinds", value, sizeof(value));
    MTEST_CHECK(strcmp(value, "mpi,system") == 0, "mpi_memory_alloc_kinds reads '%s'", value);
    MPI_Comm_free(&dup2);
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_memory_alloc_kinds", "system,cuda:device");
    MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &dup2);
    MPI_Info_free(&info);
    hint(dup2, "mpi_memory_alloc_kinds", value, sizeof(value));
    MTEST_CHECK(strstr(value, "cuda") == NULL && (!manifold || strcmp(value, "system") == 0),
                "mpi_memory_alloc_kinds after asking for system,cuda:device reads '%s'", value);
    MPI_Comm_free(&dup2);

    MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    MTEST_CHECK(flag == 0, "MPI_COMM_WORLD is an intercommunicator?");
    flag = -1;
    MPI_Comm_test_inter(dup, &flag);
    MTEST_CHECK(flag == 0, "a dup is an intercommunicator?");

    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    if (mtest_is_manifold()) {
        /* MPICH 5.0.2 answers these on an intracommunicator */
        rc = MPI_Comm_remote_size(dup, &flag);
        MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_remote_size");
        rc = MPI_Comm_remote_group(dup, &group);
        MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_remote_group");
        MTEST_CHECK(group == MPI_GROUP_NULL, "failed remote_group set the group");
    }
    if (manifold) {
        /* MPICH 5.0.2 aborts here instead of returning the error */
        rc = MPI_Comm_set_info(dup, MPI_INFO_NULL);
        MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Comm_set_info");
    }
    MPI_Comm_free(&dup);
    return mtest_finalize(0);
}
