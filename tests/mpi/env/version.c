/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Version queries: MPI_Get_version agrees with MPI_VERSION/MPI_SUBVERSION before MPI_Init,
 * after it and after MPI_Finalize (all three are allowed), and is 5.0 on Manifold;
 * MPI_Get_library_version gives a non-empty string whose length matches resultlen;
 * MPI_Abi_get_version gives the ABI version 1.0 of the header; MPI_Abi_get_info reports
 * the sizes of MPI_Aint, MPI_Count and MPI_Offset ("8" each on 64-bit Linux). The info
 * functions and MPI_Errhandler_free work before MPI_Init and after MPI_Finalize too (MPI-4.1
 * 11.4.1), and an info object made before MPI_Init survives it.
 */
#include "mtest.h"

#include <stdio.h>
#include <string.h>

static void check_version(const char *when)
{
    int version = -1, subversion = -1;
    int rc = MPI_Get_version(&version, &subversion);

    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Get_version %s failed", when);
    MTEST_CHECK(version == MPI_VERSION && subversion == MPI_SUBVERSION,
                "MPI_Get_version %s gave %d.%d, the header says %d.%d", when, version, subversion,
                MPI_VERSION, MPI_SUBVERSION);
}

static void check_library_version(const char *when)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = -1;
    int rc;

    memset(text, 0, sizeof(text));
    rc = MPI_Get_library_version(text, &len);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Get_library_version %s failed", when);
    MTEST_CHECK(len > 0 && len < MPI_MAX_LIBRARY_VERSION_STRING && (size_t)len == strlen(text),
                "MPI_Get_library_version %s: resultlen %d, strlen %zu", when, len, strlen(text));
}

static void check_info_size(MPI_Info info, const char *key, size_t expected)
{
    char value[MPI_MAX_INFO_VAL];
    char want[32];
    int buflen = (int)sizeof(value), flag = 0;
    int rc = MPI_Info_get_string(info, key, &buflen, value, &flag);

    snprintf(want, sizeof(want), "%zu", expected);
    MTEST_CHECK(rc == MPI_SUCCESS && flag, "MPI_Abi_get_info has no key %s", key);
    if (rc == MPI_SUCCESS && flag) {
        MTEST_CHECK(strcmp(value, want) == 0, "ABI info %s is \"%s\", expected \"%s\"", key, value,
                    want);
    }
}

static void check_abi(void)
{
    MPI_Info info = MPI_INFO_NULL;
    int major = -1, minor = -1;

    MTEST_CHECK(MPI_Abi_get_version(&major, &minor) == MPI_SUCCESS, "MPI_Abi_get_version failed");
    MTEST_CHECK(major == 1 && minor == 0, "MPI_Abi_get_version gave %d.%d", major, minor);
    MTEST_CHECK(major == MPI_ABI_VERSION && minor == MPI_ABI_SUBVERSION,
                "MPI_Abi_get_version gave %d.%d, the header says %d.%d", major, minor,
                MPI_ABI_VERSION, MPI_ABI_SUBVERSION);

    if (!MTEST_CHECK(MPI_Abi_get_info(&info) == MPI_SUCCESS && info != MPI_INFO_NULL,
                     "MPI_Abi_get_info failed")) {
        return;
    }
    check_info_size(info, "mpi_aint_size", sizeof(MPI_Aint));
    check_info_size(info, "mpi_count_size", sizeof(MPI_Count));
    check_info_size(info, "mpi_offset_size", sizeof(MPI_Offset));
    MTEST_CHECK(MPI_Info_free(&info) == MPI_SUCCESS && info == MPI_INFO_NULL,
                "MPI_Info_free of the ABI info failed");
}

/* An info object's whole life outside initialisation; 0 when every call did what it should. */
static int info_round_trip(void)
{
    MPI_Info info = MPI_INFO_NULL, copy = MPI_INFO_NULL;
    char key[MPI_MAX_INFO_KEY], value[16];
    int bad = 0, nkeys = -1, flag = 0, len = (int)sizeof(value);
    bad |= MPI_Info_create(&info) != MPI_SUCCESS;
    bad |= MPI_Info_set(info, "a", "1") != MPI_SUCCESS;
    bad |= MPI_Info_set(info, "b", "two") != MPI_SUCCESS;
    bad |= MPI_Info_dup(info, &copy) != MPI_SUCCESS;
    bad |= MPI_Info_delete(info, "a") != MPI_SUCCESS;
    bad |= MPI_Info_get_nkeys(copy, &nkeys) != MPI_SUCCESS || nkeys != 2;
    bad |= MPI_Info_get_nthkey(copy, 1, key) != MPI_SUCCESS || strcmp(key, "b") != 0;
    bad |= MPI_Info_get_string(copy, "b", &len, value, &flag) != MPI_SUCCESS || !flag ||
           strcmp(value, "two") != 0;
    bad |= MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS || nkeys != 1;
    bad |= MPI_Info_free(&copy) != MPI_SUCCESS || copy != MPI_INFO_NULL;
    bad |= MPI_Info_free(&info) != MPI_SUCCESS || info != MPI_INFO_NULL;
    MPI_Errhandler eh = MPI_ERRORS_RETURN;
    bad |= MPI_Errhandler_free(&eh) != MPI_SUCCESS || eh != MPI_ERRHANDLER_NULL;
    return bad;
}

int main(int argc, char **argv)
{
    int version = -1, subversion = -1;
    int rc;

    check_version("before MPI_Init");
    check_library_version("before MPI_Init");
    MTEST_CHECK(info_round_trip() == 0, "the info functions before MPI_Init");
    MPI_Info kept = MPI_INFO_NULL;
    MPI_Info_create(&kept);
    MPI_Info_set(kept, "made", "before");
    mtest_init(&argc, &argv);
    char made[16] = "";
    int made_len = (int)sizeof(made), made_flag = 0;
    MPI_Info_get_string(kept, "made", &made_len, made, &made_flag);
    MTEST_CHECK(made_flag && strcmp(made, "before") == 0, "an info made before MPI_Init: \"%s\"",
                made);
    MPI_Info_free(&kept);
    check_version("after MPI_Init");
    check_library_version("after MPI_Init");
    if (mtest_is_manifold()) {
        MPI_Get_version(&version, &subversion);
        MTEST_CHECK(version == 5 && subversion == 0, "Manifold reports MPI %d.%d", version,
                    subversion);
    }
    check_abi();
    rc = mtest_finalize(0);

    /* MPI_Get_version may be called after MPI_Finalize too */
    if (MPI_Get_version(&version, &subversion) != MPI_SUCCESS || version != MPI_VERSION ||
        subversion != MPI_SUBVERSION) {
        fprintf(stderr, "MPI_Get_version after MPI_Finalize gave %d.%d\n", version, subversion);
        rc = 1;
    }
    if (info_round_trip() != 0) {
        fprintf(stderr, "the info functions failed after MPI_Finalize\n");
        rc = 1;
    }
    return rc;
}
