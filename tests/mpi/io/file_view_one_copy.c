/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A filetype whose extent is smaller than its data, as HDF5's collective I/O on chunked
 * datasets builds it: a struct of a plain chunk type (20 bytes at 0) and a resized one (4 bytes
 * at 1 MiB, resized to 20). Its bounds are the resized member's alone (MPI-5.0 5.1.7), so its
 * extent is 20 while its data spans 1 MiB + 4 bytes, and consecutive copies would overlap.
 * MPI_File_set_view used to refuse it (HDF5's testphdf5 ecdsetw/ecdsetr/selnone and
 * t_shapesame sscontig4/sschecker4 failed). Now:
 * - the view is accepted on a file opened for writing and on one opened read-only;
 * - a collective write and an independent read of the first copy's 24 bytes work, and the
 *   bytes land at 0-19 and 1 MiB-1 MiB+3 past the view's displacement;
 * - an access that reaches the second copy fails with MPI_ERR_TYPE, naming the reason.
 * Each rank writes its own region of one shared file.
 */
#include "io_util.h"

#include <string.h>

#define FAR   (1024 * 1024)
#define BYTES 24

static MPI_Datatype hdf5_like_filetype(void)
{
    MPI_Datatype b4, plain, resized, far, st;
    MPI_Type_contiguous(4, MPI_BYTE, &b4);
    MPI_Type_vector(1, 5, 1, b4, &plain);
    MPI_Type_create_resized(b4, 0, 20, &resized);
    MPI_Type_vector(1, 1, 1, resized, &far);
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, FAR};
    MPI_Datatype types[2] = {plain, far};
    MPI_Type_create_struct(2, bl, disp, types, &st);
    MPI_Type_commit(&st);
    MPI_Type_free(&b4);
    MPI_Type_free(&plain);
    MPI_Type_free(&resized);
    MPI_Type_free(&far);
    return st;
}

static void expect_type_error(int rc, const char *what)
{
    int cls = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    if (!MTEST_CHECK(cls == MPI_ERR_TYPE, "%s: class %s, expected MPI_ERR_TYPE", what,
                     mtest_error_class_name(cls)))
        return;
    if (mtest_is_manifold()) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        MTEST_CHECK(strstr(msg, "first copy") != NULL, "%s: the message does not say why: %s", what,
                    msg);
    }
}

int main(int argc, char **argv)
{
    char name[64];
    int rank;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    make_name(name, sizeof(name), "io_one_copy", "");
    MPI_Datatype ft = hdf5_like_filetype();
    MPI_Aint lb, extent, tlb, textent;
    MPI_Type_get_extent(ft, &lb, &extent);
    MPI_Type_get_true_extent(ft, &tlb, &textent);
    MTEST_CHECK(extent < textent, "the filetype's extent %lld is not below its span %lld",
                (long long)extent, (long long)textent);
    MPI_Offset disp = (MPI_Offset)rank * 2 * FAR; /* each rank its own region */
    char out[BYTES], in[2 * BYTES];
    for (int i = 0; i < BYTES; i++)
        out[i] = (char)(rank * 50 + i + 1);

    MPI_File fh;
    if (CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                               &fh))) {
        if (CHECK_OK(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL))) {
            MPI_Status st;
            CHECK_OK(MPI_File_write_at_all(fh, 0, out, BYTES, MPI_BYTE, &st));
            MTEST_CHECK(count_of(&st, MPI_BYTE) == BYTES, "wrote %d bytes",
                        count_of(&st, MPI_BYTE));
            expect_type_error(MPI_File_write_at(fh, 0, in, BYTES + 4, MPI_BYTE, &st),
                              "a write into the second copy");
            expect_type_error(MPI_File_write_at_all(fh, BYTES, in, 4, MPI_BYTE, &st),
                              "a collective write at the second copy");
            sync_all(fh);
            memset(in, 0, sizeof(in));
            CHECK_OK(MPI_File_read_at(fh, 0, in, BYTES, MPI_BYTE, &st));
            MTEST_CHECK(memcmp(in, out, BYTES) == 0, "the view reads back other bytes");
            /* where the bytes are, through a plain byte view */
            CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL));
            memset(in, 0, sizeof(in));
            CHECK_OK(MPI_File_read_at(fh, disp, in, 20, MPI_BYTE, &st));
            CHECK_OK(MPI_File_read_at(fh, disp + FAR, in + 20, 4, MPI_BYTE, &st));
            MTEST_CHECK(memcmp(in, out, BYTES) == 0, "the bytes are not at 0-19 and 1 MiB");
        }
        CHECK_OK(MPI_File_close(&fh));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (CHECK_OK(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE,
                               MPI_INFO_NULL, &fh))) {
        if (CHECK_OK(MPI_File_set_view(fh, disp, MPI_BYTE, ft, "native", MPI_INFO_NULL))) {
            MPI_Status st;
            memset(in, 0, sizeof(in));
            CHECK_OK(MPI_File_read_at_all(fh, 0, in, BYTES, MPI_BYTE, &st));
            MTEST_CHECK(memcmp(in, out, BYTES) == 0, "read-only: the view reads back other bytes");
            expect_type_error(MPI_File_read_at(fh, 4, in, BYTES, MPI_BYTE, &st),
                              "a read into the second copy");
        }
        CHECK_OK(MPI_File_close(&fh));
    }
    MPI_Type_free(&ft);
    return mtest_finalize(0);
}
