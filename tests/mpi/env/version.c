/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Version queries: MPI_Get_version agrees with MPI_VERSION/MPI_SUBVERSION before MPI_Init,
 * after it and after MPI_Finalize (all three are allowed), and is 5.0 on Manifold;
 * MPI_Get_library_version gives a non-empty string whose length matches resultlen;
 * MPI_Abi_get_version gives the ABI version 1.0 of the header; MPI_Abi_get_info reports
 * the sizes of MPI_Aint, MPI_Count and MPI_Offset ("8" each on 64-bit Linux).
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

int main(int argc, char **argv)
{
    int version = -1, subversion = -1;
    int rc;

    check_version("before MPI_Init");
    check_library_version("before MPI_Init");
    mtest_init(&argc, &argv);
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
    return rc;
}
