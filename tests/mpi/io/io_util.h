/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers the MPI-IO tests share (header only: each test is one program).
 */
#ifndef IO_UTIL_H
#define IO_UTIL_H

#include "mtest.h"

#include <stdio.h>
#include <unistd.h>

/* A call that must succeed: a failed check naming the call and its error string. */
#define CHECK_OK(call) check_ok((call), #call, __FILE__, __LINE__)

static inline int check_ok(int rc, const char *call, const char *file, int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, msg, &len);
    return mtest_check(rc == MPI_SUCCESS, file, line, "%s failed: %s", call, msg);
}

/* "<prefix>_<pid of rank 0><suffix>.dat", the same on every rank of MPI_COMM_WORLD */
static inline void make_name(char *name, size_t len, const char *prefix, const char *suffix)
{
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(name, len, "%s_%d%s.dat", prefix, pid, suffix);
}

/* make the writes of every rank visible to every rank (MPI-4.1 section 14.6.1) */
static inline void sync_all(MPI_File fh)
{
    CHECK_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_File_sync(fh));
}

static inline int count_of(MPI_Status *st, MPI_Datatype type)
{
    int count = -1;
    MPI_Get_count(st, type, &count);
    return count;
}

/* the individual file pointer, in etypes */
static inline MPI_Offset position(MPI_File fh)
{
    MPI_Offset pos = -1;
    CHECK_OK(MPI_File_get_position(fh, &pos));
    return pos;
}

#endif /* IO_UTIL_H */
