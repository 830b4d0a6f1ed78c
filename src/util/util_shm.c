/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Room in /dev/shm. It is a tmpfs: a file there gets its pages only when they are first
 * touched, so sizing one with ftruncate succeeds whatever is free, and the first touch of a
 * page that does not fit kills the process with SIGBUS. Containers make this common (Docker
 * gives /dev/shm 64 MiB). These helpers turn it into an error at set-up time.
 */
#define _GNU_SOURCE
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/statvfs.h>
#include <unistd.h>

static size_t free_bytes(const struct statvfs *vfs)
{
    unsigned long long bytes = (unsigned long long)vfs->f_bavail * vfs->f_frsize;
    return bytes > SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

size_t mf_shm_free_bytes(void)
{
    struct statvfs vfs;
    return statvfs("/dev/shm", &vfs) == 0 ? free_bytes(&vfs) : SIZE_MAX;
}

int mf_shm_size(int fd, size_t len, int reserve)
{
    struct statvfs vfs;
    if (fstatvfs(fd, &vfs) == 0 && free_bytes(&vfs) < len)
        return ENOSPC;
    if (reserve && len > 0)
        return posix_fallocate(fd, 0, (off_t)len);
    return ftruncate(fd, (off_t)len) == 0 ? 0 : errno;
}
