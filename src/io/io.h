/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-IO (MPI-4.1 chapter 14) over POSIX files: every process opens the file itself and moves
 * its own data with pread/pwrite, through the file view (a displacement and a filetype tiled
 * from it) mapped to file offsets here. Collective calls agree on their arguments and results
 * over a private duplicate of the communicator. The blocking collective writes (write_all,
 * write_at_all) of small interleaved pieces go through aggregators, each writing one domain of
 * the file in large runs (two-phase I/O); the other collective data calls move each process's
 * data independently. The shared file pointer is a counter in shared memory when every
 * process is on one node, else a small file beside the data file updated under an fcntl lock;
 * either way no process has to make progress for another's access. See docs/design/io.md.
 *
 * The functions here return an MPI error class (MPI_SUCCESS when none) and, on error, a reason
 * in `why` (MF_IO_WHY_LEN bytes) for the binding's message.
 */
#ifndef MF_IO_H
#define MF_IO_H

#include "core.h"

#define MF_IO_WHY_LEN 256

/* Writes the reason (printf format) into `why` (MF_IO_WHY_LEN bytes) and returns `cls`. */
int mf_io_fail(char *why, int cls, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* A data representation a view may name (io_datarep.c). "native" and "internal" are NULL: the
 * file holds the native bytes. "external32" and the representations of MPI_Register_datarep lay
 * the file out in their own sizes and convert the data on every access. */
typedef struct mf_io_rep mf_io_rep_t;

/* The file view: `disp` bytes in, the filetype tiled every `fextent` bytes, each tile holding
 * `fsize` bytes of data in its segments; positions count etypes of `esize` bytes. */
typedef struct mf_file_view {
    MPI_Offset disp;
    MPI_Datatype etype, filetype; /* counted references */
    MPI_Count esize, fsize;       /* in the file's representation */
    MPI_Aint fextent;
    /* the filetype's segments (a pair type's twin; with rep, the layout's); NULL: one segment */
    const mf_dtype_t *ft;
    const mf_io_rep_t *rep;
    MPI_Datatype layout; /* with rep: the filetype's layout in the file (a reference) */
    /* the tiles are one run of data from disp + dense_off (contiguous filetypes, the default
     * view): the stream maps to the file by an addition */
    int dense;
    MPI_Offset dense_off;
    /* the filetype's extent is smaller than its data's span, so copies after the first would
     * overlap it or go backwards: only the first copy's fsize bytes may be accessed */
    int one_copy;
    char datarep[MPI_MAX_DATAREP_STRING];
} mf_file_view_t;

struct MPI_ABI_File {
    uint32_t kind;
    void *recycled_next; /* the recycler's link while freed (core.h) */
    mf_comm_t *comm;     /* private duplicate, its errors returned (MPI_ERRORS_RETURN) */
    int fd;
    int amode;
    char *filename;
    _Atomic(MPI_Errhandler) errhandler;
    pthread_mutex_t lock; /* everything below */
    struct MPI_ABI_Info *info;
    mf_file_view_t view;
    MPI_Offset fp; /* the individual file pointer, in etypes of the view */
    int atomic;    /* MPI_File_set_atomicity */
    /* the receive buffer of the last aggregated collective write, kept for the next (io.c) */
    char *cb_buf;
    size_t cb_cap;
    /* one split collective at a time (MPI-4.1 section 14.4.5): which, and its status */
    const char *split_begun;
    MPI_Status split_status;
    /* the shared file pointer: a file of one 8-byte value (etypes), made on first use; empty
     * means `shared_initial` (0, or the size at opening with MPI_MODE_APPEND) */
    char *shared_name;
    int shared_fd;
    MPI_Offset shared_initial;
    /* every process on this node: the pointer is this counter in shared memory instead */
    _Atomic(int64_t) *shared_mem;
    pthread_mutex_t shared_lock; /* fcntl locks are the process's: threads take this first */
    pthread_mutex_t atomic_lock; /* the same for atomic mode's byte-range locks */
};

typedef struct MPI_ABI_File mf_file_t;

static inline mf_file_t *mf_file_get(MPI_File handle)
{
    if (!mf_handle_is_object(handle))
        return NULL;
    return handle->kind == MF_KIND_FILE ? handle : NULL;
}

/* Collective over comm (an intracommunicator): every process opens `filename` with `amode`
 * (checked here); the first process creates it. All return the same class. */
int mf_file_open(mf_comm_t *comm, const char *filename, int amode, struct MPI_ABI_Info *info,
                 mf_file_t **file_p, char *why);
/* Collective: closes (and with MPI_MODE_DELETE_ON_CLOSE deletes) the file; frees f. */
int mf_file_close(mf_file_t *f, char *why);
int mf_file_delete(const char *filename, char *why);

/* Collective. disp MPI_DISPLACEMENT_CURRENT (sequential files) starts at the shared file
 * pointer. The types are checked here (committed, filetype made of etypes, displacements
 * nondecreasing); both file pointers go to 0. */
int mf_file_set_view(mf_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                     const char *datarep, char *why);

typedef enum {
    MF_IO_AT,         /* explicit offset */
    MF_IO_INDIVIDUAL, /* the individual file pointer */
    MF_IO_SHARED,     /* the shared file pointer */
} mf_io_where_t;

/* Read (write 0) or write `count` items of dt at buf (checked by the caller) at `offset`
 * etypes into the view (MF_IO_AT) or at a file pointer, which then moves past the data.
 * *bytes_p: the bytes moved (a read stops at the end of the file). */
int mf_file_access(mf_file_t *f, mf_io_where_t where, int write, MPI_Offset offset, void *buf,
                   MPI_Count count, MPI_Datatype dt, MPI_Count *bytes_p, char *why);
/* Collective: MPI_File_write_all/_at_all(_c) (the blocking forms only: the non-blocking and
 * split forms must not wait for other processes, so they use mf_file_access). Every process of
 * the file calls it, also one whose arguments failed the binding's checks (ok 0: it takes part
 * in the first exchange only, saying it is out, and its return value means nothing). Small
 * interleaved pieces go through aggregators (two-phase I/O, docs/design/io.md); when a process
 * is out, the file is in atomic mode, the view converts its data or there is one process,
 * everyone writes alone as mf_file_access does. All processes that aggregated return the same
 * class; *bytes_p: this process's bytes. */
int mf_file_write_all(mf_file_t *f, int ok, mf_io_where_t where, MPI_Offset offset, const void *buf,
                      MPI_Count count, MPI_Datatype dt, MPI_Count *bytes_p, char *why);
/* The hints of collective writes in `info` (for MPI_File_get_info): cb_buffer_size and
 * cb_nodes as they are used (the defaults, or the values set, bounded). */
mf_status_t mf_file_hints_used(mf_file_t *f, struct MPI_ABI_Info *info);
/* Collective: MPI_File_read/write_ordered, the processes' data in rank order at the shared
 * file pointer. */
int mf_file_access_ordered(mf_file_t *f, int write, void *buf, MPI_Count count, MPI_Datatype dt,
                           MPI_Count *bytes_p, char *why);

int mf_file_seek(mf_file_t *f, MPI_Offset offset, int whence, char *why);
int mf_file_seek_shared(mf_file_t *f, MPI_Offset offset, int whence, char *why); /* collective */
int mf_file_get_position(mf_file_t *f, MPI_Offset *offset_p, char *why);
int mf_file_get_position_shared(mf_file_t *f, MPI_Offset *offset_p, char *why);
int mf_file_get_byte_offset(mf_file_t *f, MPI_Offset offset, MPI_Offset *disp_p, char *why);

/* Collective; the same value on every process (MPI_ERR_NOT_SAME otherwise). */
int mf_file_set_size(mf_file_t *f, MPI_Offset size, char *why);
int mf_file_preallocate(mf_file_t *f, MPI_Offset size, char *why);
int mf_file_set_atomicity(mf_file_t *f, int flag, char *why);
int mf_file_sync(mf_file_t *f, char *why); /* collective */
int mf_file_get_size(mf_file_t *f, MPI_Offset *size_p, char *why);

/* The extent of dt in the file under f's view (MPI_File_get_type_extent). */
int mf_file_type_extent(mf_file_t *f, MPI_Datatype dt, MPI_Aint *extent_p, char *why);

/* MPI_Register_datarep(_c): MPI_ERR_DUP_DATAREP for a name already known. */
typedef struct mf_io_rep_functions {
    MPI_Datarep_conversion_function *read, *write;
    MPI_Datarep_conversion_function_c *read_c, *write_c;
    MPI_Datarep_extent_function *extent;
    void *extra_state;
} mf_io_rep_functions_t;
int mf_io_rep_register(const char *name, const mf_io_rep_functions_t *fns, char *why);
/* The representation called `name` (NULL for native data); MPI_ERR_UNSUPPORTED_DATAREP when
 * none is. */
int mf_io_rep_find(const char *name, const mf_io_rep_t **rep_p, char *why);
/* dt as laid out in the file: a committed derived type the caller releases. */
int mf_io_rep_layout(const mf_io_rep_t *rep, MPI_Datatype dt, MPI_Datatype *layout_p, char *why);
/* Bytes one item of dt takes in the file. */
int mf_io_rep_size(const mf_io_rep_t *rep, MPI_Datatype dt, MPI_Count *size_p, char *why);
/* Convert items [first, first + count) of dt at buf to (to_file) or from the file's packed
 * representation in filebuf; MPI_ERR_CONVERSION when a value or a conversion function fails. */
int mf_io_rep_convert(const mf_io_rep_t *rep, int to_file, void *buf, MPI_Datatype dt,
                      MPI_Count first, MPI_Count count, char *filebuf, char *why);

#endif /* MF_IO_H */
