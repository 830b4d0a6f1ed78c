/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Large collectives on one node, which Manifold copies straight from the owner's buffer
 * (process_vm_readv) from MANIFOLD_COLL_CMA_BYTES up: MPI_Bcast, MPI_Allgather(v) and
 * MPI_Gather at sizes around that threshold and far above it, every root, odd lengths,
 * MPI_IN_PLACE, receive displacements that differ between ranks, and owners that overwrite
 * their buffer the moment the call returns (they must not return before the readers are
 * done); MPI_Allreduce around 16 KiB (its own threshold), in place, with a user operation on
 * 12-byte items, and with identical floating-point bits on every rank. Small and large calls
 * alternate so both share the ring of small entries. CMA_COLL_DENY=odd|all installs a seccomp
 * filter that makes process_vm_readv fail with EPERM on the odd ranks or on all of them before the
 * tested communicators exist: the library must notice at set-up and fall back on every rank
 * together. With the copies off (the default) the same calls check the segment paths, among
 * them the two-rank streamed allreduce.
 */
#define _GNU_SOURCE

#include "mtest.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __linux__
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

static size_t threshold = 65536;

static unsigned char pattern(int owner, size_t i, int round)
{
    return (unsigned char)(owner * 37 + i * 7 + (i >> 9) + round * 11);
}

static void deny_cma(void)
{
#if defined(__linux__) && defined(SYS_process_vm_readv)
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = (unsigned short)(sizeof(code) / sizeof(code[0])),
                              .filter = code};
    int ok = prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
             prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
    MTEST_CHECK(ok, "cannot install the seccomp filter: %s", strerror(errno));
#endif
}

static void check_bytes(const unsigned char *buf, size_t len, int owner, int round,
                        const char *what)
{
    for (size_t i = 0; i < len; i++) {
        if (buf[i] != pattern(owner, i, round)) {
            MTEST_CHECK(0, "%s: %zu bytes from rank %d round %d: byte %zu is %u", what, len, owner,
                        round, i, buf[i]);
            return;
        }
    }
}

static void check_bcast(MPI_Comm comm, size_t len, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    unsigned char *buf = mtest_calloc(len + 1, 1);
    for (int root = 0; root < size; root++) {
        for (size_t i = 0; i < len; i++)
            buf[i] = rank == root ? pattern(root, i, round) : 0xee;
        MPI_Bcast(buf, (int)len, MPI_BYTE, root, comm);
        if (rank == root)
            memset(buf, 0x55, len); /* the readers must be done by now */
        else
            check_bytes(buf, len, root, round, "bcast");
    }
    free(buf);
}

/* Block i has base + 3i bytes; each rank lays the blocks out in its own order, with gaps. */
static void check_allgatherv(MPI_Comm comm, size_t base, int round, int in_place)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int *counts = mtest_calloc(sizeof(int) * (size_t)size, 1);
    int *displs = mtest_calloc(sizeof(int) * (size_t)size, 1);
    size_t total = 0;
    for (int j = 0; j < size; j++) {
        int i = (j + rank) % size; /* rank-dependent order */
        counts[i] = (int)(base + 3 * (size_t)i);
        displs[i] = (int)total;
        total += (size_t)counts[i] + 64;
    }
    unsigned char *rbuf = mtest_calloc(total, 1);
    unsigned char *sbuf = mtest_calloc((size_t)counts[rank], 1);
    memset(rbuf, 0xee, total);
    unsigned char *mine = in_place ? rbuf + displs[rank] : sbuf;
    for (size_t k = 0; k < (size_t)counts[rank]; k++)
        mine[k] = pattern(rank, k, round);
    MPI_Allgatherv(in_place ? MPI_IN_PLACE : sbuf, counts[rank], MPI_BYTE, rbuf, counts, displs,
                   MPI_BYTE, comm);
    memset(rbuf + displs[rank], 0x55, (size_t)counts[rank]);
    for (int i = 0; i < size; i++) {
        if (i != rank)
            check_bytes(rbuf + displs[i], (size_t)counts[i], i, round, "allgatherv");
        for (int g = 0; g < 64; g++)
            if (rbuf[displs[i] + counts[i] + g] != 0xee) {
                MTEST_CHECK(0, "allgatherv: gap after block %d written", i);
                break;
            }
    }
    free(sbuf);
    free(rbuf);
    free(displs);
    free(counts);
}

static void check_allgather_gather(MPI_Comm comm, size_t len, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    unsigned char *sbuf = mtest_calloc(len, 1);
    unsigned char *rbuf = mtest_calloc(len * (size_t)size, 1);
    for (size_t k = 0; k < len; k++)
        sbuf[k] = pattern(rank, k, round);
    memset(rbuf, 0xee, len * (size_t)size);
    MPI_Allgather(sbuf, (int)len, MPI_BYTE, rbuf, (int)len, MPI_BYTE, comm);
    memset(sbuf, 0x55, len);
    for (int i = 0; i < size; i++)
        check_bytes(rbuf + (size_t)i * len, len, i, round, "allgather");
    for (int root = 0; root < size; root++) {
        int in_place = rank == root && (round + root) % 2 == 1;
        for (size_t k = 0; k < len; k++)
            sbuf[k] = pattern(rank, k, round + root);
        memset(rbuf, 0xee, len * (size_t)size);
        if (in_place)
            memcpy(rbuf + (size_t)root * len, sbuf, len);
        MPI_Gather(in_place ? MPI_IN_PLACE : sbuf, (int)len, MPI_BYTE, rbuf, (int)len, MPI_BYTE,
                   root, comm);
        if (rank != root) {
            memset(sbuf, 0x55, len); /* the root must have copied it already */
            continue;
        }
        for (int i = 0; i < size; i++)
            check_bytes(rbuf + (size_t)i * len, len, i, round + root, "gather");
    }
    free(rbuf);
    free(sbuf);
}

static void sum3(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int32_t *a = in;
    int32_t *b = inout;
    for (int i = 0; i < 3 * *len; i++)
        b[i] += a[i];
}

/* Sums of ints (odd counts, in place), a 12-byte-item user operation, and a floating-point
 * sum that must give every rank the same bits. */
static void check_allreduce(MPI_Comm comm, size_t count, int round)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int32_t *s = mtest_calloc(3 * count, sizeof(int32_t));
    int32_t *r = mtest_calloc(3 * count, sizeof(int32_t));
    for (size_t i = 0; i < 3 * count; i++)
        s[i] = r[i] = (int32_t)(rank * 1000 + i % 977 + round);
    int in_place = round % 2;
    MPI_Allreduce(in_place ? MPI_IN_PLACE : s, r, (int)count, MPI_INT32_T, MPI_SUM, comm);
    for (size_t i = 0; i < count; i++) {
        int32_t want = (int32_t)(1000 * size * (size - 1) / 2 + size * (int)(i % 977 + round));
        if (r[i] != want) {
            MTEST_CHECK(0, "allreduce %zu ints round %d: element %zu is %d, not %d", count, round,
                        i, (int)r[i], (int)want);
            break;
        }
    }
    MPI_Datatype t3;
    MPI_Op op;
    MPI_Type_contiguous(3, MPI_INT32_T, &t3);
    MPI_Type_commit(&t3);
    MPI_Op_create(sum3, 1, &op);
    MPI_Allreduce(s, r, (int)count, t3, op, comm);
    for (size_t i = 0; i < 3 * count; i++) {
        int32_t want = (int32_t)(1000 * size * (size - 1) / 2 + size * (int)(i % 977 + round));
        if (r[i] != want) {
            MTEST_CHECK(0, "allreduce %zu triples round %d: int %zu is %d", count, round, i,
                        (int)r[i]);
            break;
        }
    }
    MPI_Op_free(&op);
    MPI_Type_free(&t3);
    double *d = mtest_calloc(count, sizeof(double)), *e = mtest_calloc(count, sizeof(double));
    for (size_t i = 0; i < count; i++)
        d[i] = 1.0 / (double)(rank + 3) + (double)i * 1e-7 * (rank + 1);
    MPI_Allreduce(d, e, (int)count, MPI_DOUBLE, MPI_SUM, comm);
    memcpy(d, e, count * sizeof(double));
    MPI_Bcast(d, (int)count, MPI_DOUBLE, 0, comm);
    MTEST_CHECK(memcmp(d, e, count * sizeof(double)) == 0,
                "allreduce %zu doubles: rank %d's bits differ from rank 0's", count, rank);
    free(e);
    free(d);
    free(r);
    free(s);
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *t = getenv("MANIFOLD_COLL_CMA_BYTES");
    if (t != NULL && atol(t) > 256)
        threshold = (size_t)atol(t);
    const char *deny = getenv("CMA_COLL_DENY");
    if (deny != NULL && (strcmp(deny, "all") == 0 || (strcmp(deny, "odd") == 0 && rank % 2)))
        deny_cma();
    /* created after the filter, so their set-up sees it */
    MPI_Comm comms[2];
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[0]);
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &comms[1]);
    const size_t sizes[] = {threshold - 1, threshold, threshold + 1, 3 * threshold + 5,
                            (size_t)1 << 20};
    const int nsizes = (int)(sizeof(sizes) / sizeof(sizes[0]));
    for (int c = 0; c < 2; c++) {
        for (int s = 0; s < nsizes; s++) {
            check_bcast(comms[c], sizes[s], s + c);
            check_allgather_gather(comms[c], sizes[s], s + c);
            check_allgatherv(comms[c], sizes[s], s + c, s % 2);
        }
        check_bcast(comms[c], (size_t)4 << 20, 9);
        const size_t counts[] = {1, 61, 4095, 4096, 4097, 16383, 100003, 300001};
        for (int i = 0; i < (int)(sizeof(counts) / sizeof(counts[0])); i++)
            check_allreduce(comms[c], counts[i], i + c);
    }
    /* Large and small calls back to back, more than the ring of small entries holds. */
    for (int i = 0; i < 40; i++) {
        check_bcast(comms[i % 2], i % 2 ? threshold + (size_t)i : 8 + (size_t)i, i);
        check_allgather_gather(comms[i % 2], i % 3 ? threshold : 16, i);
    }
    MPI_Comm_free(&comms[0]);
    MPI_Comm_free(&comms[1]);
    return mtest_finalize(0);
}
