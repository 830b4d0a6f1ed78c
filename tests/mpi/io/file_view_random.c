/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * File views against a reference walker: each process writes through random filetypes into its
 * own region of a shared file and checks every byte of the region afterwards (read with the
 * default view), then reads back through the view from random etype offsets. The filetypes:
 * an hindexed type of random blocks (a short segment list) and vectors of a few hundred blocks
 * (which the library keeps as runs of segments), each resized to an extent past its data, and
 * one block as long as the extent at an offset (consecutive tiles form one run), with
 * accesses that start and end in the middle of segments and tiles; the memory side is
 * contiguous or a vector with holes. Bytes in the filetype's holes must keep the fill pattern.
 */
#include "mtest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REGION (1 << 20) /* bytes of file per process */
#define MAXBLK 400
#define FILL   0xEE

typedef struct layout {
    int n;                /* blocks */
    int len[MAXBLK];      /* ints */
    MPI_Aint off[MAXBLK]; /* bytes */
    MPI_Aint extent;
    int per_tile; /* ints of data per tile */
} layout_t;

/* The file offset (from the view's displacement) of int i of the view's stream. */
static MPI_Aint ref_offset(const layout_t *l, long i)
{
    long tile = i / l->per_tile, within = i % l->per_tile;
    for (int b = 0; b < l->n; b++) {
        if (within < l->len[b])
            return tile * l->extent + l->off[b] + 4 * within;
        within -= l->len[b];
    }
    return -1;
}

static void random_layout(layout_t *l, int kind)
{
    MPI_Aint at = 4 * (rand() % 3);
    l->per_tile = 0;
    if (kind == 2) { /* one block as long as the extent, past lb: the tiles are one run */
        l->n = 1;
        l->len[0] = 1 + rand() % 8;
        l->off[0] = at + (rand() % 2);
        l->per_tile = l->len[0];
        l->extent = 4 * l->len[0];
        return;
    }
    if (kind == 0) { /* irregular blocks */
        l->n = 1 + rand() % 12;
        for (int b = 0; b < l->n; b++) {
            l->len[b] = 1 + rand() % 5;
            l->off[b] = at;
            at += 4 * l->len[b] + 4 * (rand() % 4) + (rand() % 2); /* odd gaps too */
        }
    } else { /* a long regular run */
        int blk = 1 + rand() % 3, stride = blk + 1 + rand() % 3;
        l->n = 150 + rand() % 200;
        for (int b = 0; b < l->n; b++) {
            l->len[b] = blk;
            l->off[b] = at + (MPI_Aint)b * 4 * stride;
        }
        at = l->off[l->n - 1] + 4 * blk;
    }
    for (int b = 0; b < l->n; b++)
        l->per_tile += l->len[b];
    l->extent = at + 4 * (rand() % 3);
}

static MPI_Datatype make_filetype(const layout_t *l, int kind)
{
    MPI_Datatype t, r;
    if (kind != 1) {
        MPI_Type_create_hindexed(l->n, l->len, l->off, MPI_INT, &t);
    } else {
        MPI_Datatype v;
        MPI_Type_vector(l->n, l->len[0], (int)((l->off[1] - l->off[0]) / 4), MPI_INT, &v);
        MPI_Type_create_hindexed_block(1, 1, &l->off[0], v, &t);
        MPI_Type_free(&v);
    }
    MPI_Type_create_resized(t, 0, l->extent, &r);
    MPI_Type_free(&t);
    MPI_Type_commit(&r);
    return r;
}

int main(int argc, char **argv)
{
    int rank, size;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char name[64];
    snprintf(name, sizeof(name), "io_view_random_%d.dat", pid);
    srand(1234u + 77u * (unsigned)rank);

    MPI_File fh;
    int rc = MPI_File_open(MPI_COMM_WORLD, name,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_File_open failed (%d)", rc);
    if (rc != MPI_SUCCESS)
        return mtest_finalize(1);
    unsigned char *region = malloc(REGION), *back = malloc(REGION);
    int *data = malloc(sizeof(int) * 2 * 20000), *got = malloc(sizeof(int) * 2 * 20000);
    MPI_Offset base = (MPI_Offset)rank * REGION;

    for (int round = 0; round < 12; round++) {
        int kind = round % 3;
        layout_t l;
        random_layout(&l, kind);
        MPI_Datatype ft = make_filetype(&l, kind);
        long n = l.per_tile * (1 + rand() % 4) + rand() % l.per_tile; /* ints written */
        long start = rand() % (2 * l.per_tile);                       /* first etype */
        if ((start + n) / l.per_tile * l.extent + l.extent > REGION - 64)
            n = l.per_tile; /* keep inside the region */
        int strided = rand() % 2;

        /* the region filled, then the data through the view */
        memset(region, FILL, REGION);
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        MPI_File_write_at(fh, base, region, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_File_set_view(fh, base + 8, MPI_INT, ft, "native", MPI_INFO_NULL);
        for (long i = 0; i < 2 * n; i++)
            data[i] = strided && (i % 2) ? -1 : (int)(rank * 1000003 + round * 10007 + i);
        MPI_Datatype mem = MPI_INT;
        if (strided) {
            MPI_Type_vector((int)n, 1, 2, MPI_INT, &mem);
            MPI_Type_commit(&mem);
        }
        MPI_Status st;
        rc = MPI_File_write_at(fh, start, data, strided ? 1 : (int)n, mem, &st);
        int count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        MTEST_CHECK(rc == MPI_SUCCESS && count == 4 * n, "round %d: write_at rc %d count %d", round,
                    rc, count);

        /* every byte of the region */
        MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
        MPI_File_read_at(fh, base, back, REGION, MPI_BYTE, MPI_STATUS_IGNORE);
        memset(region, FILL, REGION);
        for (long i = 0; i < n; i++) {
            int v = data[strided ? 2 * i : i];
            memcpy(region + 8 + ref_offset(&l, start + i), &v, 4);
        }
        long bad = -1;
        for (long b = 0; b < REGION && bad < 0; b++)
            if (region[b] != back[b])
                bad = b;
        MTEST_CHECK(bad < 0,
                    "round %d (kind %d, %d blocks, start %ld, %ld ints): byte %ld is %d, "
                    "want %d",
                    round, kind, l.n, start, n, bad, bad >= 0 ? back[bad] : 0,
                    bad >= 0 ? region[bad] : 0);

        /* back through the view, from a random etype inside the data */
        MPI_File_set_view(fh, base + 8, MPI_INT, ft, "native", MPI_INFO_NULL);
        long from = start + rand() % n, m = start + n - from;
        rc = MPI_File_read_at(fh, from, got, (int)m, MPI_INT, &st);
        MPI_Get_count(&st, MPI_INT, &count);
        MTEST_CHECK(rc == MPI_SUCCESS && count == m, "round %d: read_at rc %d count %d, want %ld",
                    round, rc, count, m);
        for (long i = 0; i < m; i++) {
            int want = data[strided ? 2 * (from - start + i) : from - start + i];
            if (!MTEST_CHECK(got[i] == want,
                             "round %d: read through the view: int %ld is %d, "
                             "want %d",
                             round, from + i, got[i], want))
                break;
        }
        if (strided)
            MPI_Type_free(&mem);
        MPI_Type_free(&ft);
    }
    MPI_File_close(&fh);
    free(region);
    free(back);
    free(data);
    free(got);
    return mtest_finalize(0);
}
