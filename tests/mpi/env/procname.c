/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Get_processor_name: a non-empty, NUL-terminated name shorter than
 * MPI_MAX_PROCESSOR_NAME whose length is the returned resultlen, and the same name on
 * repeated calls.
 */
#include "mtest.h"

#include <string.h>

int main(int argc, char **argv)
{
    char name[MPI_MAX_PROCESSOR_NAME], again[MPI_MAX_PROCESSOR_NAME];
    int len = -1, len2 = -1;
    int rc;

    mtest_init(&argc, &argv);
    memset(name, 0x7f, sizeof(name));
    rc = MPI_Get_processor_name(name, &len);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Get_processor_name failed");
    MTEST_CHECK(len > 0 && len < MPI_MAX_PROCESSOR_NAME, "resultlen %d", len);
    if (len > 0 && len < MPI_MAX_PROCESSOR_NAME) {
        MTEST_CHECK(name[len] == '\0' && strlen(name) == (size_t)len,
                    "name is not a string of resultlen %d characters", len);
        rc = MPI_Get_processor_name(again, &len2);
        MTEST_CHECK(rc == MPI_SUCCESS && len2 == len && strcmp(name, again) == 0,
                    "a second call gave a different name");
    }
    return mtest_finalize(0);
}
