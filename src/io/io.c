/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-IO over POSIX files (see io.h and docs/design/io.md).
 *
 * A data access is a stream of packed bytes (the memory side packed, or the user's buffer when
 * it is one run) laid into the file through the view: byte p of the view's stream lies in tile
 * p / fsize of the filetype, at the segment holding packed position p % fsize. The walk below
 * turns a range of the stream into file pieces, merges pieces that touch, and moves them with
 * pread/pwrite; a read of many pieces within a few MiB reads the whole span once (data
 * sieving) and copies the pieces out. Writes never read-modify-write, so processes writing
 * interleaved pieces of one file never overwrite each other's bytes. In a representation other
 * than the native one the stream is the data converted to it, and the filetype is walked as
 * rebuilt in its sizes (io_datarep.c).
 */
#include "io.h"

#include "coll.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

static mf_recycler_t file_objects = MF_RECYCLER_INIT;

/* A read of more than one piece within this span reads the span at once (into a staging
 * buffer the thread keeps: the datatype engine's temporaries, cached up to 256 KiB by default,
 * MANIFOLD_DT_TEMP_CACHE; a fresh buffer of megabytes costs its page faults every time). */
#define SIEVE_SPAN_MAX (256u << 10)
/* Pieces gathered before they are moved. */
#define PIECES_MAX 256
/* A representation that converts stages this many bytes of the file's data at a time (the
 * buffer stays in the caches and in the datatype engine's cache of temporaries). */
#define CONVERT_CHUNK (256 << 10)

int mf_io_fail(char *why, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, MF_IO_WHY_LEN, fmt, ap);
    va_end(ap);
    return cls;
}

/* The error class of a failed system call's errno. */
static int errno_class(int e)
{
    switch (e) {
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case ENOSPC: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP:
    case EINVAL: return MPI_ERR_BAD_FILE;
    default: return MPI_ERR_IO;
    }
}

/* ROMIO's file system prefixes name the same POSIX files here. */
static const char *strip_prefix(const char *filename)
{
    static const char *const prefixes[] = {"ufs:", "nfs:", "file:"};
    for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
        size_t n = strlen(prefixes[i]);
        if (strncmp(filename, prefixes[i], n) == 0)
            return filename + n;
    }
    return filename;
}

/* Every process's `ok` and whether `value` is the same everywhere, in one agreement (which is
 * also a barrier). 0 when the agreement itself failed. */
static int agree(mf_comm_t *c, int ok, int64_t value, int *all_ok_p, int *same_p)
{
    uint64_t w[3] = {ok ? UINT64_MAX : 0, (uint64_t)value, ~(uint64_t)value};
    if (mf_coll_allreduce_band(c, w, 3) != MF_OK)
        return 0;
    *all_ok_p = w[0] == UINT64_MAX;
    if (same_p != NULL)
        *same_p = w[1] == (uint64_t)value && w[2] == ~(uint64_t)value;
    return 1;
}

/* After an agreement found a problem elsewhere: the class every process returns. */
static int fail_elsewhere(char *why, const char *what)
{
    return mf_io_fail(why, MPI_ERR_OTHER, "another process of the file's communicator %s", what);
}

static int pwrite_all(int fd, const char *buf, size_t len, MPI_Offset off)
{
    while (len > 0) {
        ssize_t n = pwrite(fd, buf, len, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : ENOSPC;
        buf += n;
        len -= (size_t)n;
        off += n;
    }
    return 0;
}

/* Reads up to len bytes; *got_p < len only at the end of the file. */
static int pread_upto(int fd, char *buf, size_t len, MPI_Offset off, size_t *got_p)
{
    size_t got = 0;
    while (got < len) {
        ssize_t n = pread(fd, buf + got, len - got, (off_t)(off + (MPI_Offset)got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return errno;
        if (n == 0)
            break;
        got += (size_t)n;
    }
    *got_p = got;
    return 0;
}

/* ---- the view ----------------------------------------------------------------------------- */

static MPI_Count view_nruns(const mf_file_view_t *v)
{
    const mf_dtype_t *d = v->ft;
    return d == NULL ? 1 : d->runs != NULL ? d->nruns : d->nsegs;
}

/* Run i of the filetype's segments (a listed segment is a run of one). */
static mf_dtype_run_t view_run(const mf_file_view_t *v, MPI_Count i)
{
    const mf_dtype_t *d = v->ft;
    if (d == NULL)
        return (mf_dtype_run_t){0, v->fsize, 0, 1, 0};
    if (d->runs != NULL)
        return d->runs[i];
    const mf_dtype_seg_t *s = &d->segs[i];
    return (mf_dtype_run_t){s->off, s->len, s->pos, 1, 0};
}

/* Where the walk stands: tile, run, segment in the run, bytes into the segment. */
typedef struct cursor {
    MPI_Offset tile;
    MPI_Count run, seg, inner;
} cursor_t;

/* The cursor at byte p of the view's stream (fsize > 0). */
static cursor_t cursor_at(const mf_file_view_t *v, MPI_Offset p)
{
    cursor_t c = {p / v->fsize, 0, 0, 0};
    MPI_Count within = p % v->fsize;
    MPI_Count lo = 0, hi = view_nruns(v) - 1;
    while (lo < hi) { /* the last run starting at or before `within` */
        MPI_Count mid = lo + (hi - lo + 1) / 2;
        if (view_run(v, mid).pos <= within)
            lo = mid;
        else
            hi = mid - 1;
    }
    mf_dtype_run_t r = view_run(v, lo);
    c.run = lo;
    c.seg = (within - r.pos) / r.len;
    c.inner = (within - r.pos) % r.len;
    return c;
}

static MPI_Offset cursor_offset(const mf_file_view_t *v, const cursor_t *c, mf_dtype_run_t r)
{
    return v->disp + c->tile * v->fextent + r.off + c->seg * r.stride + c->inner;
}

/* The file offset of byte p of the view's stream. */
static MPI_Offset view_offset(const mf_file_view_t *v, MPI_Offset p)
{
    if (v->dense)
        return v->disp + v->dense_off + p;
    if (v->fsize == 0)
        return v->disp;
    cursor_t c = cursor_at(v, p);
    return cursor_offset(v, &c, view_run(v, c.run));
}

/* A walk through bytes [p, end) of the view's stream, piece by piece in stream order (which is
 * file order: views never go backwards). A dense view is one piece, however long. */
typedef struct piece_iter {
    const mf_file_view_t *v;
    cursor_t c; /* at p (not dense) */
    MPI_Offset p, end;
} piece_iter_t;

static void iter_init(piece_iter_t *it, const mf_file_view_t *v, MPI_Offset p, MPI_Offset end)
{
    *it = (piece_iter_t){.v = v, .p = p, .end = end};
    if (!v->dense && p < end)
        it->c = cursor_at(v, p);
}

/* The piece the walk stands at: its file offset and its length (to the end of its segment or
 * of the walk). 0 at the end of the walk. */
static int iter_piece(const piece_iter_t *it, MPI_Offset *off_p, MPI_Offset *len_p)
{
    const mf_file_view_t *v = it->v;
    if (it->p >= it->end)
        return 0;
    MPI_Offset left = it->end - it->p;
    if (v->dense) {
        *off_p = view_offset(v, it->p);
        *len_p = left;
        return 1;
    }
    mf_dtype_run_t r = view_run(v, it->c.run);
    *off_p = cursor_offset(v, &it->c, r);
    *len_p = r.len - it->c.inner < left ? r.len - it->c.inner : left;
    return 1;
}

/* The walk `n` bytes on: at most the length iter_piece gave. */
static void iter_skip(piece_iter_t *it, MPI_Offset n)
{
    const mf_file_view_t *v = it->v;
    it->p += n;
    if (v->dense)
        return;
    cursor_t *c = &it->c;
    mf_dtype_run_t r = view_run(v, c->run);
    c->inner += n;
    if (c->inner < r.len)
        return;
    c->inner = 0;
    if (++c->seg == r.n) {
        c->seg = 0;
        if (++c->run == view_nruns(v)) {
            c->run = 0;
            c->tile++;
        }
    }
}

/* Bytes of the view's stream that lie before file offset `end`. */
static MPI_Offset view_bytes_before(const mf_file_view_t *v, MPI_Offset end)
{
    MPI_Offset rel = end - v->disp - (v->dense ? v->dense_off : 0);
    if (rel <= 0 || v->fsize == 0)
        return 0;
    if (v->dense)
        return rel;
    MPI_Offset bytes = v->one_copy ? 0 : rel / v->fextent * v->fsize;
    MPI_Offset rem = v->one_copy ? rel : rel % v->fextent;
    for (MPI_Count i = 0; i < view_nruns(v); i++) {
        mf_dtype_run_t r = view_run(v, i);
        if (rem <= r.off)
            continue;
        MPI_Count n = r.stride > 0 ? (rem - r.off + r.stride - 1) / r.stride : 1;
        if (n > r.n)
            n = r.n;
        MPI_Offset last = r.off + (n - 1) * r.stride;
        bytes += (n - 1) * r.len + (rem - last < r.len ? rem - last : r.len);
    }
    return bytes;
}

/* A filetype's segments in one tile, and across tiles, never go backwards (nor overlap when
 * `write`): MPI-4.1 section 14.3. */
static int view_monotone(mf_file_view_t *v, int write, char *why)
{
    MPI_Offset first = -1, prev_off = 0, prev_end = 0;
    for (MPI_Count i = 0; i < view_nruns(v); i++) {
        mf_dtype_run_t r = view_run(v, i);
        if (r.stride < (write ? r.len : 0) && r.n > 1)
            return mf_io_fail(why, MPI_ERR_TYPE, "argument filetype has %s blocks",
                              write ? "overlapping" : "decreasing");
        MPI_Offset off = r.off, last = r.off + (r.n - 1) * r.stride;
        if (first < 0) {
            first = off;
            if (off < 0)
                return mf_io_fail(why, MPI_ERR_TYPE,
                                  "argument filetype has a negative displacement (%lld)",
                                  (long long)off);
        } else if (off < prev_off || (write && off < prev_end)) {
            return mf_io_fail(why, MPI_ERR_TYPE,
                              "argument filetype's displacements %s at byte %lld",
                              off < prev_off ? "decrease" : "overlap", (long long)off);
        }
        prev_off = last;
        prev_end = last + r.len;
    }
    /* Copies that would overlap are refused only when an access reaches the second one
     * (view_reach): HDF5's chunked collective I/O builds a struct of resized and plain chunk
     * types whose bounds are the resized members' alone (MPI-5.0 5.1.7), so its extent is far
     * smaller than its data, and it accesses only the first copy. */
    v->one_copy =
        first >= 0 && (v->fextent + first < prev_off || (write && v->fextent + first < prev_end));
    return MPI_SUCCESS;
}

/* Bytes [p, p + len) of the stream lie in copies of the filetype that may be accessed. */
static int view_reach(const mf_file_view_t *v, MPI_Offset p, MPI_Count len, int write, char *why)
{
    if (!v->one_copy || p + len <= v->fsize)
        return MPI_SUCCESS;
    return mf_io_fail(why, MPI_ERR_TYPE,
                      "the access reaches past the first copy of the view's filetype, whose "
                      "extent (%lld bytes) is too small for its data: consecutive copies would %s",
                      (long long)v->fextent, write ? "overlap" : "go backwards");
}

static void view_release(mf_file_view_t *v)
{
    mf_dtype_release(v->etype);
    mf_dtype_release(v->filetype);
    if (v->layout != MPI_DATATYPE_NULL)
        mf_dtype_release(v->layout);
    v->etype = v->filetype = v->layout = MPI_DATATYPE_NULL;
}

/* A copy of f's view that holds its own references (the caller releases it). */
static mf_file_view_t view_snapshot(mf_file_t *f)
{
    mf_file_view_t v = f->view;
    mf_dtype_retain(v.etype);
    mf_dtype_retain(v.filetype);
    if (v.layout != MPI_DATATYPE_NULL)
        mf_dtype_retain(v.layout);
    return v;
}

/* ---- the shared file pointer ---------------------------------------------------------------- */

#define SHARED_MEM_LEN 64 /* a cache line holding the counter */

/* Collective over the file's communicator: when every process is on this node, the shared
 * pointer moves to a counter in shared memory (an atomic add instead of a locked file's read
 * and write), starting at shared_initial. Any failure leaves everyone with the file. */
static void shared_in_memory(mf_file_t *f)
{
    /* one node: every process has the colour MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) gives
     * (asked without making that communicator, whose VCI would cost an address exchange) */
    mf_comm_t *c = f->comm;
    int color = 0, all_ok = 0, same = 0;
    int ok = mf_comm_node_color(c, &color) == MF_OK;
    int local = agree(c, ok, color, &all_ok, &same) && all_ok && same;
    char name[64] = "";
    if (c->rank == 0 && local) {
        static atomic_uint seq;
        snprintf(name, sizeof(name), "/manifold-shfp-%ld-%u-%u", (long)getpid(), c->context_id,
                 atomic_fetch_add(&seq, 1));
        int fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || mf_shm_size(fd, SHARED_MEM_LEN, 1) != 0) { /* reserved: no SIGBUS */
            if (fd >= 0)
                shm_unlink(name);
            name[0] = '\0';
        }
        if (fd >= 0)
            close(fd);
    }
    if (mf_coll_bcast(c, name, sizeof(name), 0) != MF_OK)
        return;
    void *map = MAP_FAILED;
    if (name[0] != '\0') {
        int fd = shm_open(name, O_RDWR, 0600);
        if (fd >= 0) {
            map = mmap(NULL, SHARED_MEM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
        }
    }
    if (c->rank == 0 && map != MAP_FAILED) /* before anyone uses it: the agreement follows */
        atomic_init((_Atomic(int64_t) *)map, f->shared_initial);
    uint64_t mapped = map != MAP_FAILED ? 1 : 0;
    mf_status_t st = mf_coll_allreduce_band(c, &mapped, 1);
    if (c->rank == 0 && name[0] != '\0')
        shm_unlink(name); /* everyone has mapped it (or failed to): nothing left behind */
    if (st == MF_OK && mapped)
        f->shared_mem = map;
    else if (map != MAP_FAILED)
        munmap(map, SHARED_MEM_LEN);
}

/* Under the shared file's lock: old value to *old_p, then old + add (set: `value`). */
static int shared_update(mf_file_t *f, int set, MPI_Offset value, MPI_Offset *old_p, char *why)
{
    if (f->shared_mem != NULL) {
        *old_p = set ? atomic_exchange(f->shared_mem, (int64_t)value)
                     : atomic_fetch_add(f->shared_mem, (int64_t)value);
        return MPI_SUCCESS;
    }
    int cls = MPI_SUCCESS;
    pthread_mutex_lock(&f->shared_lock);
    if (f->shared_fd < 0) {
        f->shared_fd = open(f->shared_name, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (f->shared_fd < 0) {
            int e = errno;
            cls = mf_io_fail(why, MPI_ERR_IO, "cannot create %s for the shared file pointer: %s",
                             f->shared_name, strerror(e));
            goto out;
        }
    }
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 8};
    while (fcntl(f->shared_fd, F_SETLKW, &lk) != 0) {
        if (errno != EINTR) {
            int e = errno;
            cls = mf_io_fail(why, MPI_ERR_IO, "cannot lock the shared file pointer (%s): %s",
                             f->shared_name, strerror(e));
            goto out;
        }
    }
    int64_t cur = f->shared_initial;
    size_t got = 0;
    int e = pread_upto(f->shared_fd, (char *)&cur, sizeof(cur), 0, &got);
    if (e == 0 && got < sizeof(cur))
        cur = f->shared_initial; /* not written yet */
    int64_t next = set ? value : cur + value;
    if (e == 0 && next != cur)
        e = pwrite_all(f->shared_fd, (const char *)&next, sizeof(next), 0);
    lk.l_type = F_UNLCK;
    fcntl(f->shared_fd, F_SETLK, &lk);
    if (e != 0)
        cls = mf_io_fail(why, MPI_ERR_IO, "cannot update the shared file pointer (%s): %s",
                         f->shared_name, strerror(e));
    else
        *old_p = cur;
out:
    pthread_mutex_unlock(&f->shared_lock);
    return cls;
}

/* The shared pointer back to its initial value after a collective call (only if it was ever
 * written: a file that does not exist yet already reads as shared_initial). */
static void shared_reset(mf_file_t *f)
{
    if (f->shared_mem != NULL) {
        atomic_store(f->shared_mem, (int64_t)f->shared_initial);
        return;
    }
    /* through this process's descriptor when it has one: closing another one on the same file
     * would drop the process's fcntl locks on it */
    pthread_mutex_lock(&f->shared_lock);
    int fd = f->shared_fd >= 0 ? f->shared_fd : open(f->shared_name, O_RDWR | O_CLOEXEC);
    if (fd >= 0 && ftruncate(fd, 0) != 0) { /* cannot fail on a regular file opened to write */
    }
    if (fd >= 0 && fd != f->shared_fd)
        close(fd);
    pthread_mutex_unlock(&f->shared_lock);
}

/* ---- open, close, delete ------------------------------------------------------------------ */

static int check_amode(int amode, char *why)
{
    const int known = MPI_MODE_APPEND | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_EXCL |
                      MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL | MPI_MODE_UNIQUE_OPEN |
                      MPI_MODE_WRONLY;
    int access = amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY);
    if ((amode & ~known) != 0)
        return mf_io_fail(why, MPI_ERR_AMODE, "argument amode=%d has bits of no MPI_MODE_ constant",
                          amode);
    if (access != MPI_MODE_RDONLY && access != MPI_MODE_RDWR && access != MPI_MODE_WRONLY)
        return mf_io_fail(
            why, MPI_ERR_AMODE,
            "argument amode=%d must have exactly one of MPI_MODE_RDONLY, MPI_MODE_RDWR "
            "and MPI_MODE_WRONLY",
            amode);
    if (access == MPI_MODE_RDONLY && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return mf_io_fail(why, MPI_ERR_AMODE,
                          "argument amode=%d combines MPI_MODE_RDONLY with MPI_MODE_%s", amode,
                          (amode & MPI_MODE_CREATE) ? "CREATE" : "EXCL");
    if (access == MPI_MODE_RDWR && (amode & MPI_MODE_SEQUENTIAL))
        return mf_io_fail(why, MPI_ERR_AMODE,
                          "argument amode=%d combines MPI_MODE_RDWR with MPI_MODE_SEQUENTIAL",
                          amode);
    return MPI_SUCCESS;
}

static void file_release(mf_file_t *f)
{
    if (f->fd >= 0)
        close(f->fd);
    if (f->shared_fd >= 0)
        close(f->shared_fd);
    free(f->filename);
    free(f->shared_name);
    if (f->shared_mem != NULL)
        munmap((void *)f->shared_mem, SHARED_MEM_LEN);
    if (f->info != NULL)
        mf_info_free(f->info);
    free(f->cb_buf);
    view_release(&f->view);
    if (f->comm != NULL)
        mf_comm_free(f->comm);
    mf_errhandler_release(atomic_load(&f->errhandler));
    pthread_mutex_destroy(&f->lock);
    pthread_mutex_destroy(&f->shared_lock);
    pthread_mutex_destroy(&f->atomic_lock);
    mf_recycler_put(&file_objects, f);
}

/* The shared pointer's file: ".<name>.<id>.shfp" in the data file's directory, so that every
 * process that can see the file sees it too. */
static char *shared_name(const char *path, const char *id)
{
    const char *slash = strrchr(path, '/');
    int dirlen = slash != NULL ? (int)(slash - path + 1) : 0;
    const char *base = path + dirlen;
    size_t len = strlen(path) + strlen(id) + 16;
    char *name = malloc(len);
    if (name != NULL)
        snprintf(name, len, "%.*s.%s.%s.shfp", dirlen, path, base, id);
    return name;
}

int mf_file_open(mf_comm_t *comm, const char *filename, int amode, struct MPI_ABI_Info *info,
                 mf_file_t **file_p, char *why)
{
    int cls = check_amode(amode, why);
    int all_ok = 0, same = 0;
    if (!agree(comm, cls == MPI_SUCCESS, amode, &all_ok, &same))
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    if (cls != MPI_SUCCESS)
        return cls;
    if (!all_ok)
        return mf_io_fail(why, MPI_ERR_AMODE, "another process passed an invalid amode");
    if (!same)
        return mf_io_fail(why, MPI_ERR_NOT_SAME, "argument amode=%d differs between the processes",
                          amode);

    mf_file_t *f = mf_recycler_take(&file_objects, sizeof(*f), "a file");
    if (f == NULL)
        return mf_io_fail(why, MPI_ERR_NO_MEM, "out of memory");
    f->kind = MF_KIND_FILE;
    f->fd = f->shared_fd = -1;
    pthread_mutex_init(&f->lock, NULL);
    pthread_mutex_init(&f->shared_lock, NULL);
    pthread_mutex_init(&f->atomic_lock, NULL);
    f->amode = amode;
    f->errhandler = MPI_ERRORS_RETURN;
    f->view = (mf_file_view_t){.etype = MPI_BYTE,
                               .filetype = MPI_BYTE,
                               .esize = 1,
                               .fsize = 1,
                               .fextent = 1,
                               .layout = MPI_DATATYPE_NULL,
                               .dense = 1,
                               .datarep = "native"};
    const char *path = strip_prefix(filename);
    f->filename = strdup(filename);
    if (mf_comm_dup_internal(comm, &f->comm) != MF_OK) {
        f->comm = NULL;
        file_release(f);
        return mf_io_fail(why, MPI_ERR_OTHER, "cannot make the file's communicator");
    }
    mf_errhandler_replace(&f->comm->errhandler, MPI_ERRORS_RETURN);
    mf_comm_t *c = f->comm;

    int flags = O_CLOEXEC;
    switch (amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY)) {
    case MPI_MODE_RDONLY: flags |= O_RDONLY; break;
    case MPI_MODE_WRONLY: flags |= O_WRONLY; break;
    default: flags |= O_RDWR; break;
    }
    /* The first process creates the file (alone, so MPI_MODE_EXCL means what it says); the
     * others open it once it exists. Its error reaches everyone. */
    int err = 0;
    if (c->rank == 0) {
        int create = (amode & MPI_MODE_CREATE) ? O_CREAT : 0;
        int excl = (amode & MPI_MODE_EXCL) ? O_EXCL | O_CREAT : 0;
        f->fd = open(path, flags | create | excl, 0666);
        err = f->fd < 0 ? errno : 0;
    }
    /* rank 0's errno and a name for the shared pointer's file */
    struct {
        int32_t err;
        char id[44];
    } first = {err, ""};
    if (c->rank == 0) {
        static atomic_uint seq;
        snprintf(first.id, sizeof(first.id), "%ld-%u-%u", (long)getpid(), c->context_id,
                 atomic_fetch_add(&seq, 1));
    }
    if (mf_coll_bcast(c, &first, sizeof(first), 0) != MF_OK) {
        file_release(f);
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    }
    if (c->rank != 0 && first.err == 0) {
        f->fd = open(path, flags, 0666);
        err = f->fd < 0 ? errno : 0;
    }
    int mine = first.err != 0 ? first.err : err;
    int *errs = calloc((size_t)c->size, sizeof(int));
    if (errs == NULL || mf_coll_allgather(c, &mine, sizeof(int), errs) != MF_OK) {
        free(errs);
        file_release(f);
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    }
    int bad = -1;
    for (int i = 0; i < c->size && bad < 0; i++)
        if (errs[i] != 0)
            bad = i;
    err = bad >= 0 ? errs[bad] : 0;
    free(errs);
    if (err != 0) {
        file_release(f);
        if (bad == c->rank || first.err != 0)
            return mf_io_fail(why, errno_class(err),
                              "argument filename=\"%s\" cannot be opened: %s", filename,
                              strerror(err));
        return mf_io_fail(why, errno_class(err),
                          "argument filename=\"%s\" cannot be opened by process %d of the "
                          "communicator: %s",
                          filename, bad, strerror(err));
    }

    f->shared_name = shared_name(path, first.id);
    if (f->filename == NULL || f->shared_name == NULL ||
        (info != NULL && mf_info_dup(info, &f->info) != MF_OK)) {
        file_release(f); /* everyone opened: the others see the same shortage or none */
        return mf_io_fail(why, MPI_ERR_NO_MEM, "out of memory");
    }
    if (amode & MPI_MODE_APPEND) {
        struct stat st;
        if (fstat(f->fd, &st) == 0)
            f->fp = f->shared_initial = (MPI_Offset)st.st_size; /* etype MPI_BYTE */
    }
    shared_in_memory(f);
    *file_p = f;
    return MPI_SUCCESS;
}

int mf_file_close(mf_file_t *f, char *why)
{
    mf_comm_t *c = f->comm;
    int cls = MPI_SUCCESS;
    /* everyone has finished with the file (and the shared pointer) before it goes */
    if (mf_coll_barrier(c) != MF_OK)
        cls = mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    if (c->rank == 0) {
        unlink(f->shared_name);
        if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && unlink(strip_prefix(f->filename)) != 0 &&
            cls == MPI_SUCCESS) {
            int e = errno;
            cls = mf_io_fail(why, errno_class(e), "cannot delete %s on closing it: %s", f->filename,
                             strerror(e));
        }
    }
    if (f->fd >= 0 && close(f->fd) != 0 && cls == MPI_SUCCESS) {
        int e = errno;
        cls = mf_io_fail(why, MPI_ERR_IO, "closing %s failed: %s", f->filename, strerror(e));
    }
    f->fd = -1;
    file_release(f);
    return cls;
}

int mf_file_delete(const char *filename, char *why)
{
    if (unlink(strip_prefix(filename)) == 0)
        return MPI_SUCCESS;
    int e = errno;
    return mf_io_fail(why, errno_class(e), "argument filename=\"%s\" cannot be deleted: %s",
                      filename, strerror(e));
}

/* ---- views -------------------------------------------------------------------------------- */

/* The view of (disp, etype, filetype, datarep), checked, in *v (its layout, when the
 * representation is not native, is a reference *v holds; no others taken). */
static int view_make(mf_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                     const char *datarep, mf_file_view_t *v, char *why)
{
    mf_dtype_props_t ep = {0}, fp = {0};
    if (mf_dtype_props(etype, &ep) != MF_OK)
        return mf_io_fail(why, MPI_ERR_TYPE, "argument etype is not a valid datatype");
    if (mf_dtype_props(filetype, &fp) != MF_OK)
        return mf_io_fail(why, MPI_ERR_TYPE, "argument filetype is not a valid datatype");
    if (!ep.committed)
        return mf_io_fail(why, MPI_ERR_TYPE, "argument etype is not committed");
    if (!fp.committed)
        return mf_io_fail(why, MPI_ERR_TYPE, "argument filetype is not committed");
    const mf_io_rep_t *rep = NULL;
    int cls = mf_io_rep_find(datarep, &rep, why);
    if (cls != MPI_SUCCESS)
        return cls;
    if (disp < 0 && !(disp == MPI_DISPLACEMENT_CURRENT && (f->amode & MPI_MODE_SEQUENTIAL)))
        return mf_io_fail(why, MPI_ERR_ARG,
                          disp == MPI_DISPLACEMENT_CURRENT
                              ? "argument disp=MPI_DISPLACEMENT_CURRENT needs a file opened with "
                                "MPI_MODE_SEQUENTIAL"
                              : "argument disp=%lld is negative",
                          (long long)disp);
    /* sizes and extents in the file's representation */
    MPI_Datatype layout = MPI_DATATYPE_NULL;
    if (rep != NULL) {
        MPI_Count esize = 0;
        cls = mf_io_rep_size(rep, etype, &esize, why);
        if (cls == MPI_SUCCESS)
            cls = mf_io_rep_layout(rep, filetype, &layout, why);
        if (cls != MPI_SUCCESS)
            return cls;
        mf_dtype_props(layout, &fp);
        ep.psize = esize;
    }
    *v = (mf_file_view_t){.disp = disp,
                          .etype = etype,
                          .filetype = filetype,
                          .esize = ep.psize,
                          .fsize = fp.psize,
                          .fextent = fp.extent,
                          .rep = rep,
                          .layout = layout};
    v->ft = layout != MPI_DATATYPE_NULL ? mf_dtype_get(layout)
            : fp.derived                ? mf_dtype_get(filetype)
                                        : mf_dtype_pair_twin(filetype);
    snprintf(v->datarep, sizeof(v->datarep), "%s", datarep);
    if (v->esize <= 0)
        cls = mf_io_fail(why, MPI_ERR_TYPE, "argument etype holds no data (its size is 0)");
    else if (v->fsize % v->esize != 0)
        cls = mf_io_fail(why, MPI_ERR_TYPE,
                         "argument filetype (%lld bytes of data) is not made of whole etypes (%lld "
                         "bytes each)",
                         (long long)v->fsize, (long long)v->esize);
    else if (v->fextent < 0)
        cls = mf_io_fail(why, MPI_ERR_TYPE, "argument filetype has a negative extent (%lld)",
                         (long long)v->fextent);
    if (cls == MPI_SUCCESS && v->fsize > 0) {
        mf_dtype_run_t r = view_run(v, 0);
        v->dense =
            view_nruns(v) == 1 && (r.n == 1 || r.stride == r.len) && r.n * r.len == v->fextent;
        v->dense_off = r.off;
        cls = view_monotone(v, !(f->amode & MPI_MODE_RDONLY), why);
    }
    if (cls != MPI_SUCCESS && layout != MPI_DATATYPE_NULL) {
        mf_dtype_release(layout);
        v->layout = MPI_DATATYPE_NULL;
    }
    return cls;
}

static uint64_t hash_string(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s != '\0'; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The checks of set_view that involve every process, and the displacement
 * MPI_DISPLACEMENT_CURRENT stands for (into v->disp); `cls` is this process's view_make. */
static int view_agree(mf_file_t *f, int cls, mf_file_view_t *v, const char *datarep, char *why)
{
    /* the etype's size and the representation must agree (MPI-4.1 section 14.3) */
    int all_ok = 0, same_size = 0, same_rep = 0, ignored = 0;
    if (!agree(f->comm, cls == MPI_SUCCESS, cls == MPI_SUCCESS ? v->esize : 0, &all_ok,
               &same_size) ||
        !agree(f->comm, 1, (int64_t)hash_string(datarep), &ignored, &same_rep))
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    if (cls != MPI_SUCCESS)
        return cls;
    if (!all_ok)
        return fail_elsewhere(why, "passed an invalid view");
    if (!same_size)
        return mf_io_fail(why, MPI_ERR_NOT_SAME,
                          "argument etype's size differs between the processes");
    if (!same_rep)
        return mf_io_fail(why, MPI_ERR_NOT_SAME, "argument datarep differs between the processes");
    if (v->disp == MPI_DISPLACEMENT_CURRENT) {
        /* the byte the shared pointer reaches in the old view, read by the first process
         * (everyone's shared accesses are done: the agreement above was a barrier) */
        struct {
            int64_t disp;
            int32_t cls;
            char why[MF_IO_WHY_LEN];
        } cur = {0, MPI_SUCCESS, ""};
        if (f->comm->rank == 0) {
            MPI_Offset pos = 0;
            cur.cls = shared_update(f, 0, 0, &pos, cur.why);
            pthread_mutex_lock(&f->lock);
            cur.disp = view_offset(&f->view, pos * f->view.esize);
            pthread_mutex_unlock(&f->lock);
        }
        if (mf_coll_bcast(f->comm, &cur, sizeof(cur), 0) != MF_OK)
            return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
        if (cur.cls != MPI_SUCCESS)
            return mf_io_fail(why, cur.cls, "%s", cur.why);
        v->disp = cur.disp;
    }
    return MPI_SUCCESS;
}

int mf_file_set_view(mf_file_t *f, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                     const char *datarep, char *why)
{
    mf_file_view_t v = {.layout = MPI_DATATYPE_NULL};
    int cls = view_make(f, disp, etype, filetype, datarep, &v, why);
    cls = view_agree(f, cls, &v, datarep, why);
    if (cls != MPI_SUCCESS) {
        if (v.layout != MPI_DATATYPE_NULL)
            mf_dtype_release(v.layout);
        return cls;
    }
    mf_dtype_retain(etype);
    mf_dtype_retain(filetype);
    pthread_mutex_lock(&f->lock);
    mf_file_view_t old = f->view;
    f->view = v;
    f->fp = 0;
    f->shared_initial = 0;
    pthread_mutex_unlock(&f->lock);
    view_release(&old);
    if (f->comm->rank == 0)
        shared_reset(f);
    if (mf_coll_barrier(f->comm) != MF_OK) /* nobody uses the pointer before it is reset */
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    return MPI_SUCCESS;
}

/* ---- data access -------------------------------------------------------------------------- */

typedef struct piece {
    MPI_Offset off;
    size_t len;
} piece_t;

/* A batch of pieces of the stream, in stream order, to move at `stream`. */
typedef struct batch {
    int fd, write;
    char *stream; /* where the next piece's bytes are */
    piece_t pieces[PIECES_MAX];
    int n;
    MPI_Count moved; /* bytes moved so far */
    int eof;         /* a read reached the end of the file */
    int err;         /* errno of a failed call */
} batch_t;

static void batch_flush(batch_t *b)
{
    if (b->n == 0 || b->eof || b->err != 0) {
        b->n = 0;
        return;
    }
    MPI_Offset start = b->pieces[0].off;
    MPI_Offset span = b->pieces[b->n - 1].off + (MPI_Offset)b->pieces[b->n - 1].len - start;
    char *sieve = NULL;
    size_t have = 0;
    if (!b->write && b->n > 1 && span <= (MPI_Offset)SIEVE_SPAN_MAX &&
        (sieve = mf_dtype_temp_alloc((size_t)span)) != NULL)
        b->err = pread_upto(b->fd, sieve, (size_t)span, start, &have);
    for (int i = 0; i < b->n && b->err == 0 && !b->eof; i++) {
        piece_t *p = &b->pieces[i];
        size_t got = p->len;
        if (b->write) {
            b->err = pwrite_all(b->fd, b->stream, p->len, p->off);
        } else if (sieve != NULL) {
            size_t at = (size_t)(p->off - start);
            got = at >= have ? 0 : have - at < p->len ? have - at : p->len;
            memcpy(b->stream, sieve + at, got);
        } else {
            b->err = pread_upto(b->fd, b->stream, p->len, p->off, &got);
        }
        if (b->err != 0)
            break;
        b->stream += got;
        b->moved += (MPI_Count)got;
        if (got < p->len)
            b->eof = 1;
    }
    if (sieve != NULL)
        mf_dtype_temp_free(sieve);
    b->n = 0;
}

static void batch_add(batch_t *b, MPI_Offset off, size_t len)
{
    if (b->n > 0) {
        piece_t *last = &b->pieces[b->n - 1];
        if (last->off + (MPI_Offset)last->len == off) {
            last->len += len;
            return;
        }
        if (b->n == PIECES_MAX)
            batch_flush(b);
    }
    b->pieces[b->n++] = (piece_t){off, len};
}

/* Move `len` bytes at `stream` to or from bytes [p, p + len) of the view's stream. */
static int view_move(int fd, const mf_file_view_t *v, int write, MPI_Offset p, char *stream,
                     MPI_Count len, MPI_Count *moved_p)
{
    batch_t *b = malloc(sizeof(*b));
    if (b == NULL)
        return ENOMEM;
    b->fd = fd;
    b->write = write;
    b->stream = stream;
    b->n = 0;
    b->moved = 0;
    b->eof = b->err = 0;
    piece_iter_t it;
    iter_init(&it, v, p, p + len);
    MPI_Offset off = 0, n = 0;
    while (!b->eof && b->err == 0 && iter_piece(&it, &off, &n)) {
        batch_add(b, off, (size_t)n);
        iter_skip(&it, n);
    }
    batch_flush(b);
    int err = b->err;
    *moved_p = b->moved;
    free(b);
    return err;
}

/* Atomic mode: the process-wide byte-range lock over [start, end), taken (type F_RDLCK or
 * F_WRLCK) or dropped (F_UNLCK). */
static int range_lock(int fd, short type, MPI_Offset start, MPI_Offset end)
{
    struct flock lk = {
        .l_type = type, .l_whence = SEEK_SET, .l_start = start, .l_len = end - start};
    while (fcntl(fd, type == F_UNLCK ? F_SETLK : F_SETLKW, &lk) != 0)
        if (errno != EINTR)
            return errno;
    return 0;
}

/* The data of an access: `count` items of dt at buf, `bytes` of them packed in memory and
 * `fbytes` in the view's stream (in the file's representation: `bytes` for native data). */
typedef struct access_data {
    void *buf;
    MPI_Count count;
    MPI_Datatype dt;
    MPI_Count bytes, fbytes;
} access_data_t;

/* The native data of an access moved at byte p of v's stream: from the user's buffer when it
 * is one run, else packed through a temporary. Memory bytes moved to *bytes_p; an errno. */
static int move_native(int fd, const mf_file_view_t *v, int write, MPI_Offset p,
                       const access_data_t *a, MPI_Count *bytes_p)
{
    MPI_Datatype mdt = mf_dtype_packed_as(a->dt);
    MPI_Aint off = 0;
    if (mf_dtype_contiguous(mdt, a->count, &off))
        return view_move(fd, v, write, p, (char *)(uintptr_t)((uintptr_t)a->buf + (uintptr_t)off),
                         a->bytes, bytes_p);
    char *tmp = mf_dtype_temp_alloc((size_t)a->bytes);
    if (tmp == NULL)
        return ENOMEM;
    if (write)
        mf_dtype_pack(mdt, a->count, a->buf, tmp, 0, a->bytes);
    int err = view_move(fd, v, write, p, tmp, a->bytes, bytes_p);
    if (!write && *bytes_p > 0)
        mf_dtype_unpack(mdt, a->count, a->buf, tmp, 0, *bytes_p);
    mf_dtype_temp_free(tmp);
    return err;
}

/* The same in a representation that converts: CONVERT_CHUNK bytes of the file's representation
 * at a time (at least one item), converted to or from the user's buffer. A read delivers the
 * whole items it found. An errno, or with *cls_p set a failed conversion. */
static int move_converted(int fd, const mf_file_view_t *v, int write, MPI_Offset p,
                          const access_data_t *a, MPI_Count *bytes_p, int *cls_p, char *why)
{
    MPI_Count item = a->fbytes / a->count,
              per = CONVERT_CHUNK / item > 0 ? CONVERT_CHUNK / item : 1;
    if (per > a->count)
        per = a->count;
    char *tmp = mf_dtype_temp_alloc((size_t)(per * item));
    if (tmp == NULL)
        return ENOMEM;
    int err = 0;
    MPI_Count done = 0; /* items moved */
    while (done < a->count && err == 0 && *cls_p == MPI_SUCCESS) {
        MPI_Count n = a->count - done < per ? a->count - done : per, moved = 0;
        if (write)
            *cls_p = mf_io_rep_convert(v->rep, 1, a->buf, a->dt, done, n, tmp, why);
        if (*cls_p == MPI_SUCCESS)
            err = view_move(fd, v, write, p + done * item, tmp, n * item, &moved);
        if (!write && *cls_p == MPI_SUCCESS)
            *cls_p = mf_io_rep_convert(v->rep, 0, a->buf, a->dt, done, moved / item, tmp, why);
        done += moved / item;
        if (moved < n * item) /* the end of the file */
            break;
    }
    mf_dtype_temp_free(tmp);
    *bytes_p = done * (a->bytes / a->count);
    return err;
}

/* The access at byte p of v's stream, after the checks and the pointer updates. */
static int access_bytes(mf_file_t *f, const mf_file_view_t *v, int write, MPI_Offset p,
                        const access_data_t *a, MPI_Count *bytes_p, char *why)
{
    *bytes_p = 0;
    MPI_Count len = a->fbytes;
    if (len == 0)
        return MPI_SUCCESS;
    if (v->fsize == 0)
        return mf_io_fail(why, MPI_ERR_IO,
                          "the file view holds no data (its filetype's size is 0), so %lld bytes "
                          "cannot be %s",
                          (long long)len, write ? "written" : "read");
    int reach = view_reach(v, p, len, write, why);
    if (reach != MPI_SUCCESS)
        return reach;
    int atomic = __atomic_load_n(&f->atomic, __ATOMIC_RELAXED);
    MPI_Offset lo = 0, hi = 0;
    int err = 0, cls = MPI_SUCCESS;
    if (atomic) {
        lo = view_offset(v, p);
        hi = view_offset(v, p + len - 1) + 1;
        pthread_mutex_lock(&f->atomic_lock);
        err = range_lock(f->fd, write ? F_WRLCK : F_RDLCK, lo, hi);
    }
    MPI_Count bytes = 0; /* in memory */
    if (err == 0)
        err = v->rep != NULL ? move_converted(f->fd, v, write, p, a, &bytes, &cls, why)
                             : move_native(f->fd, v, write, p, a, &bytes);
    if (atomic) {
        range_lock(f->fd, F_UNLCK, lo, hi);
        pthread_mutex_unlock(&f->atomic_lock);
    }
    if (err == ENOMEM)
        return mf_io_fail(why, MPI_ERR_NO_MEM, "cannot allocate a buffer to stage the data");
    if (err != 0)
        return mf_io_fail(why, write ? errno_class(err) : MPI_ERR_IO, "%s %s failed: %s",
                          write ? "writing" : "reading", f->filename, strerror(err));
    if (cls != MPI_SUCCESS)
        return cls;
    *bytes_p = bytes;
    return MPI_SUCCESS;
}

/* The access mode allows this access. */
static int access_allowed(mf_file_t *f, int write, char *why)
{
    int access = f->amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY);
    if (write && access == MPI_MODE_RDONLY)
        return mf_io_fail(why, MPI_ERR_ACCESS, "the file was opened with MPI_MODE_RDONLY");
    if (!write && access == MPI_MODE_WRONLY)
        return mf_io_fail(why, MPI_ERR_ACCESS, "the file was opened with MPI_MODE_WRONLY");
    return MPI_SUCCESS;
}

/* The data of `count` items of dt at buf, which must be whole etypes of the view. */
static int access_size(const mf_file_view_t *v, void *buf, MPI_Count count, MPI_Datatype dt,
                       access_data_t *a, char *why)
{
    mf_dtype_props_t p = {0};
    mf_dtype_props(dt, &p);
    MPI_Count item = p.psize;
    if (v->rep != NULL) {
        int cls = mf_io_rep_size(v->rep, dt, &item, why);
        if (cls != MPI_SUCCESS)
            return cls;
    }
    *a = (access_data_t){buf, count, dt, count * p.psize, count * item};
    if (a->fbytes % v->esize != 0)
        return mf_io_fail(
            why, MPI_ERR_TYPE,
            "%lld bytes of data (argument count=%lld of datatype) are not whole etypes "
            "of the view (%lld bytes each)",
            (long long)a->fbytes, (long long)count, (long long)v->esize);
    return MPI_SUCCESS;
}

int mf_file_access(mf_file_t *f, mf_io_where_t where, int write, MPI_Offset offset, void *buf,
                   MPI_Count count, MPI_Datatype dt, MPI_Count *bytes_p, char *why)
{
    int cls = access_allowed(f, write, why);
    if (cls != MPI_SUCCESS)
        return cls;
    if (where != MF_IO_SHARED && (f->amode & MPI_MODE_SEQUENTIAL))
        return mf_io_fail(
            why, MPI_ERR_UNSUPPORTED_OPERATION,
            "the file was opened with MPI_MODE_SEQUENTIAL: only the shared file pointer "
            "may be used");
    access_data_t a;
    pthread_mutex_lock(&f->lock);
    mf_file_view_t v = view_snapshot(f);
    cls = access_size(&v, buf, count, dt, &a, why);
    MPI_Offset pos = offset;
    if (cls == MPI_SUCCESS && where == MF_IO_INDIVIDUAL) {
        pos = f->fp;
        f->fp += a.fbytes / v.esize;
    }
    pthread_mutex_unlock(&f->lock);
    if (cls == MPI_SUCCESS && where == MF_IO_SHARED)
        cls = shared_update(f, 0, a.fbytes / v.esize, &pos, why);
    if (cls == MPI_SUCCESS)
        cls = access_bytes(f, &v, write, pos * v.esize, &a, bytes_p, why);
    view_release(&v);
    return cls;
}

int mf_file_access_ordered(mf_file_t *f, int write, void *buf, MPI_Count count, MPI_Datatype dt,
                           MPI_Count *bytes_p, char *why)
{
    mf_comm_t *c = f->comm;
    pthread_mutex_lock(&f->lock);
    mf_file_view_t v = view_snapshot(f);
    pthread_mutex_unlock(&f->lock);
    access_data_t a;
    int cls = access_allowed(f, write, why);
    if (cls == MPI_SUCCESS)
        cls = access_size(&v, buf, count, dt, &a, why);
    /* every process's etypes (-1: its call is wrong), then the first process moves the shared
     * pointer past all of them and says where they start */
    int64_t mine = cls == MPI_SUCCESS ? a.fbytes / v.esize : -1;
    int64_t *all = calloc((size_t)c->size, sizeof(int64_t));
    if (all == NULL || mf_coll_allgather(c, &mine, sizeof(mine), all) != MF_OK) {
        free(all);
        view_release(&v);
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    }
    int64_t before = 0, total = 0, bad = 0;
    for (int i = 0; i < c->size; i++) {
        bad |= all[i] < 0;
        total += all[i];
        if (i < c->rank)
            before += all[i];
    }
    free(all);
    struct {
        int64_t base;
        int32_t cls;
        char why[MF_IO_WHY_LEN];
    } *start = calloc(1, sizeof(*start));
    if (start == NULL) {
        view_release(&v); /* the others wait in the broadcast: out of memory is fatal here */
        return mf_io_fail(why, MPI_ERR_NO_MEM, "out of memory");
    }
    if (c->rank == 0 && !bad)
        start->cls = shared_update(f, 0, total, &start->base, start->why);
    if (mf_coll_bcast(c, start, sizeof(*start), 0) != MF_OK)
        cls = mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    else if (cls == MPI_SUCCESS && bad)
        cls = fail_elsewhere(why, "passed invalid arguments");
    else if (cls == MPI_SUCCESS && start->cls != MPI_SUCCESS)
        cls = mf_io_fail(why, start->cls, "%s", start->why);
    if (cls == MPI_SUCCESS)
        cls = access_bytes(f, &v, write, (start->base + before) * v.esize, &a, bytes_p, why);
    free(start);
    view_release(&v);
    return cls;
}

/* ---- two-phase collective writes ------------------------------------------------------------ */

/* MPI_File_write_all/_at_all (blocking only) of small interleaved pieces go through aggregators
 * (ROMIO's two-phase scheme): the global range of the call is split into one contiguous domain
 * per aggregator, and in rounds of a window of at most cb_buffer_size bytes per domain every
 * process sends each aggregator the (offset, length) pieces falling in its window, then their
 * bytes (straight from its packed stream); the aggregator merges them in file order and writes
 * each contiguous run with one pwritev. Only bytes some process wrote are written: holes keep
 * what the file had, with no read-modify-write. The non-blocking and split forms never come
 * here: they complete inside their call, which must not wait for other processes. */

#define CB_BUFFER_DEFAULT (16 << 20) /* the window per aggregator and round, as ROMIO's default */
#define CB_BUFFER_MAX     (1 << 30)  /* window offsets and lengths travel as 32-bit values */
/* Domains start at multiples of this, so aggregators' writes start page and block aligned. */
#define CB_ALIGN (64 << 10)
/* Aggregation pays when the pieces are smaller than this on average. Two ranks writing
 * interleaved blocks at 1 MiB per rank, aggregated against alone: 4 KiB blocks 4.5x, 16 KiB
 * 2.0x, 32 KiB 1.5x, 64 KiB 1.27x, 128 KiB 1.13x but 0.65x at 256 KiB and 0.85x at 4 MiB per
 * rank (docs/design/io.md). */
#define CB_PIECE_MAX (128 << 10)
/* ... and when the processes have this many pieces each: aggregating costs five collectives,
 * which a few pwrite calls beat (2 ranks, 4 blocks of 4 KiB each: 1129 MB/s alone, 904
 * through an aggregator; 16 blocks: 1360 alone, 1494 aggregated). */
#define CB_PIECES_MIN 8

enum {
    CB_TAKES_PART = 1, /* the arguments passed the checks */
    CB_NATIVE = 2,     /* native data, not atomic: aggregation is allowed */
    CB_FORCE = 4,      /* collective_buffering=true */
    CB_OFF = 8,        /* collective_buffering=false */
};

/* What each process says in the first exchange. */
typedef struct cb_entry {
    int64_t lo, hi; /* the file bytes [lo, hi) it writes (lo == hi: none) */
    int64_t bytes;  /* of data */
    double pieces;  /* estimated from the filetype */
    int64_t buffer; /* its cb_buffer_size */
    int32_t nodes;  /* its cb_nodes (0: every process) */
    int32_t flags;  /* CB_* */
} cb_entry_t;

/* The plan every process derives alike from the exchange: domain a is [base + a * dsize,
 * base + (a + 1) * dsize) within [lo, hi), written by rank cb_rank(), `window` bytes a round. */
typedef struct cb_plan {
    int naggr, nprocs;
    MPI_Offset lo, hi, base, dsize, window;
    int64_t rounds;
} cb_plan_t;

static int cb_rank(const cb_plan_t *pl, int a)
{
    return (int)((int64_t)a * pl->nprocs / pl->naggr); /* spread over the ranks */
}

static void cb_domain(const cb_plan_t *pl, int a, MPI_Offset *start_p, MPI_Offset *end_p)
{
    MPI_Offset s = pl->base + a * pl->dsize, e = s + pl->dsize;
    *start_p = s < pl->lo ? pl->lo : s > pl->hi ? pl->hi : s;
    *end_p = e > pl->hi ? pl->hi : e < *start_p ? *start_p : e;
}

/* The hints of f's info (under f->lock): collective_buffering, cb_buffer_size, cb_nodes. */
static void cb_hints(mf_file_t *f, cb_entry_t *e)
{
    char val[64];
    size_t len = 0;
    e->buffer = CB_BUFFER_DEFAULT;
    e->nodes = 0;
    if (f->info == NULL)
        return;
    if (mf_info_get(f->info, "collective_buffering", val, sizeof(val), &len))
        e->flags |= strcmp(val, "false") == 0 ? CB_OFF : strcmp(val, "true") == 0 ? CB_FORCE : 0;
    if (mf_info_get(f->info, "cb_buffer_size", val, sizeof(val), &len)) {
        long long n = strtoll(val, NULL, 10);
        if (n > 0) /* a hint: a value that is no size is ignored */
            e->buffer = n < CB_BUFFER_MAX ? n : CB_BUFFER_MAX;
    }
    if (mf_info_get(f->info, "cb_nodes", val, sizeof(val), &len)) {
        long n = strtol(val, NULL, 10);
        e->nodes = n > 0 && n < INT32_MAX ? (int32_t)n : 0;
    }
}

/* The pieces of `len` bytes of v's stream, from the filetype: its segments per tile times the
 * tiles (not walked: a write of 10^9 pieces needs no pass to be planned). */
static double view_pieces(const mf_file_view_t *v, MPI_Offset len)
{
    if (v->dense || len == 0)
        return len > 0;
    double segs = 0;
    for (MPI_Count i = 0; i < view_nruns(v); i++)
        segs += (double)view_run(v, i).n;
    return (double)len / (double)v->fsize * segs + 1;
}

static int cb_cmp_lo(const void *a, const void *b)
{
    const cb_entry_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Whether the call aggregates, and its plan (every process decides alike from `all`). */
static int cb_decide(const cb_entry_t *all, cb_entry_t *sorted, int n, cb_plan_t *pl)
{
    int flags = CB_TAKES_PART | CB_NATIVE, off = 0, force = 0, writers = 0;
    int64_t buffer = CB_BUFFER_MAX, nodes = n, bytes = 0;
    double pieces = 0;
    *pl = (cb_plan_t){.nprocs = n, .lo = INT64_MAX, .hi = 0};
    for (int i = 0; i < n; i++) {
        flags &= all[i].flags;
        off |= all[i].flags & CB_OFF;
        force |= all[i].flags & CB_FORCE;
        buffer = all[i].buffer < buffer ? all[i].buffer : buffer;
        if (all[i].nodes > 0 && all[i].nodes < nodes)
            nodes = all[i].nodes;
        if (all[i].bytes == 0)
            continue;
        writers++;
        bytes += all[i].bytes;
        pieces += all[i].pieces;
        pl->lo = all[i].lo < pl->lo ? all[i].lo : pl->lo;
        pl->hi = all[i].hi > pl->hi ? all[i].hi : pl->hi;
    }
    /* a process out (its arguments failed), atomic mode or converted data: everyone goes
     * alone, so that a process that is out need not take part in anything more */
    if (n == 1 || flags != (CB_TAKES_PART | CB_NATIVE) || off || writers == 0)
        return 0;
    if (!force) {
        /* it pays when the processes' ranges interleave (else each writes its own range as
         * well alone) and the pieces are small (large ones are written as fast alone) */
        if (writers < 2 || (double)bytes / pieces >= CB_PIECE_MAX ||
            pieces / writers < CB_PIECES_MIN)
            return 0;
        int k = 0;
        for (int i = 0; i < n; i++)
            if (all[i].bytes > 0)
                sorted[k++] = all[i];
        qsort(sorted, (size_t)writers, sizeof(*sorted), cb_cmp_lo);
        int overlap = 0;
        for (int i = 1; i < writers && !overlap; i++)
            overlap = sorted[i].lo < sorted[i - 1].hi;
        if (!overlap)
            return 0;
    }
    pl->naggr = (int)nodes;
    pl->base = pl->lo / CB_ALIGN * CB_ALIGN;
    MPI_Offset per = (pl->hi - pl->base + pl->naggr - 1) / pl->naggr;
    pl->dsize = (per + CB_ALIGN - 1) / CB_ALIGN * CB_ALIGN;
    pl->window = buffer < pl->dsize ? buffer : pl->dsize;
    pl->rounds = (pl->dsize + pl->window - 1) / pl->window;
    return 1;
}

/* Window r of aggregator a: [*ws_p, *we_p), empty past its domain. Windows start at multiples
 * of the window from the domain's aligned start. */
static void cb_window(const cb_plan_t *pl, int a, int64_t r, MPI_Offset *ws_p, MPI_Offset *we_p)
{
    MPI_Offset ds = 0, de = 0;
    cb_domain(pl, a, &ds, &de);
    MPI_Offset ws = pl->base + a * pl->dsize + r * pl->window, we = ws + pl->window;
    *ws_p = ws < ds ? ds : ws > de ? de : ws;
    *we_p = we > de ? de : we < *ws_p ? *ws_p : we;
}

/* The first position in [p, end) of v's stream whose byte lies at or after file offset x (end
 * when none): the stream never goes backwards in the file, so a binary search. */
static MPI_Offset view_stream_at(const mf_file_view_t *v, MPI_Offset p, MPI_Offset end,
                                 MPI_Offset x)
{
    while (p < end) {
        MPI_Offset mid = p + (end - p) / 2;
        if (view_offset(v, mid) < x)
            p = mid + 1;
        else
            end = mid;
    }
    return p;
}

/* The walk's pieces below file offset `we` (the last one cut there), merged where they touch,
 * as (offset from ws, length) pairs into out (NULL: only counted). */
static void cb_collect(piece_iter_t *it, MPI_Offset ws, MPI_Offset we, uint32_t *out,
                       uint64_t *npieces_p, uint64_t *bytes_p)
{
    uint64_t np = 0, bytes = 0;
    MPI_Offset off = 0, len = 0, last_end = -1;
    while (iter_piece(it, &off, &len) && off < we) {
        if (len > we - off)
            len = we - off;
        if (off == last_end) {
            if (out != NULL)
                out[2 * (np - 1) + 1] += (uint32_t)len;
        } else {
            if (out != NULL) {
                out[2 * np] = (uint32_t)(off - ws);
                out[2 * np + 1] = (uint32_t)len;
            }
            np++;
        }
        last_end = off + len;
        bytes += (uint64_t)len;
        iter_skip(it, len);
    }
    *npieces_p = np;
    *bytes_p = bytes;
}

/* The aggregator's receive buffer: the file keeps the last one, since a fresh buffer of
 * megabytes costs its page faults on every call. */
static char *cb_buffer_take(mf_file_t *f, size_t len, size_t *cap_p)
{
    char *b = NULL;
    pthread_mutex_lock(&f->lock);
    if (f->cb_buf != NULL && f->cb_cap >= len) {
        b = f->cb_buf;
        *cap_p = f->cb_cap;
        f->cb_buf = NULL;
    }
    pthread_mutex_unlock(&f->lock);
    if (b == NULL && (b = malloc(len)) != NULL)
        *cap_p = len;
    return b;
}

static void cb_buffer_give(mf_file_t *f, char *b, size_t cap)
{
    pthread_mutex_lock(&f->lock);
    if (f->cb_buf == NULL || f->cb_cap < cap) {
        char *old = f->cb_buf;
        f->cb_buf = b;
        f->cb_cap = cap;
        b = old;
    }
    pthread_mutex_unlock(&f->lock);
    free(b);
}

/* Per-call scratch of O(nprocs), taken before the first exchange: the entries (twice: a
 * sorted copy), the lengths and displacements of the two alltoallv (piece lists, data) and the
 * counts sent and received, and the aggregator's merge of the pieces. */
typedef struct cb_src cb_src_t;
typedef struct cb_scratch {
    cb_entry_t *all; /* 2n */
    size_t *lens;    /* per alltoallv: send lengths, send displacements, receive ...: 8n */
    uint64_t *cnt;   /* (pieces, bytes) to each process, then from each: 4n */
    cb_src_t *src;   /* the aggregator's merge: n */
    int *heap;       /* n */
} cb_scratch_t;

/* What an aggregator has in a round: from each process s, rcnt[2 * s] pieces at
 * list + pdispls[s] bytes and their data at data + ddispls[s]; its own pieces and data it
 * takes from where it listed them (`own_list`, `own_data`), not through the alltoallv. */
typedef struct cb_recv {
    const uint64_t *rcnt;
    const char *list, *data;
    const size_t *pdispls, *ddispls;
    const uint32_t *own_list;
    const char *own_data;
} cb_recv_t;

/* One process's pieces while the aggregator merges them: (offset in the window, length)
 * pairs, each process's in file order, and the bytes of the next one. */
struct cb_src {
    const uint32_t *p, *end;
    const char *data;
};

/* Source a's next piece comes first (ties: the lower rank). */
static int cb_before(const cb_src_t *src, int a, int b)
{
    return src[a].p[0] < src[b].p[0] || (src[a].p[0] == src[b].p[0] && a < b);
}

static void heap_down(int *h, int nh, int i, const cb_src_t *src)
{
    for (;;) {
        int l = 2 * i + 1, m = i;
        if (l < nh && cb_before(src, h[l], h[m]))
            m = l;
        if (l + 1 < nh && cb_before(src, h[l + 1], h[m]))
            m = l + 1;
        if (m == i)
            return;
        int t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* pwritev of cnt iovecs at off, going on after short writes. An errno. */
static int pwritev_all(int fd, struct iovec *iov, int cnt, MPI_Offset off)
{
    while (cnt > 0) {
        ssize_t n = pwritev(fd, iov, cnt, (off_t)off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? errno : ENOSPC;
        off += n;
        for (; cnt > 0 && (size_t)n >= iov->iov_len; iov++, cnt--)
            n -= (ssize_t)iov->iov_len;
        if (cnt > 0) {
            iov->iov_base = (char *)iov->iov_base + n;
            iov->iov_len -= (size_t)n;
        }
    }
    return 0;
}

/* iovecs of one pwritev (Linux allows 1024) */
#define CB_IOV 256

/* Aggregator side of a round: every process's pieces for the window at `ws`, merged in file
 * order, each contiguous run written with pwritev straight from the bytes received (copying
 * them into a window buffer first cost 15 % of a 1 MiB write). Bytes nobody wrote are not
 * touched. Where processes overlap (erroneous in MPI's non-atomic mode, MPI-4.1 section
 * 14.6.1: the result is undefined) the bytes merged first stay and the rest is dropped. An
 * errno. */
static int cb_place(mf_file_t *f, MPI_Offset ws, const cb_recv_t *in, cb_scratch_t *sc)
{
    cb_src_t *src = sc->src;
    int *heap = sc->heap, nh = 0;
    for (int s = 0; s < f->comm->size; s++) {
        int self = s == f->comm->rank;
        src[s].p =
            self ? in->own_list : (const uint32_t *)(const void *)(in->list + in->pdispls[s]);
        src[s].end = src[s].p + 2 * in->rcnt[2 * s];
        src[s].data = self ? in->own_data : in->data + in->ddispls[s];
        if (in->rcnt[2 * s] > 0)
            heap[nh++] = s;
    }
    for (int i = nh / 2 - 1; i >= 0; i--)
        heap_down(heap, nh, i, src);
    struct iovec iov[CB_IOV];
    int niov = 0, e = 0;
    uint64_t start = 0, end = 0; /* the run in iov, and the end of everything merged */
    while (nh > 0 && e == 0) {
        cb_src_t *s = &src[heap[0]];
        uint64_t off = s->p[0], len = s->p[1];
        const char *data = s->data;
        s->data += len;
        s->p += 2;
        if (s->p == s->end)
            heap[0] = heap[--nh];
        heap_down(heap, nh, 0, src);
        if (off < end) { /* overlaps what is merged already */
            if (off + len <= end)
                continue;
            data += end - off;
            len -= end - off;
            off = end;
        }
        if (niov == CB_IOV || (niov > 0 && off > end)) {
            e = pwritev_all(f->fd, iov, niov, ws + (MPI_Offset)start);
            niov = 0;
        }
        if (niov == 0)
            start = off;
        iov[niov++] = (struct iovec){(void *)(uintptr_t)data, (size_t)len};
        end = off + len;
    }
    if (e == 0 && niov > 0)
        e = pwritev_all(f->fd, iov, niov, ws + (MPI_Offset)start);
    return e;
}

/* One round's lists: what this process sends each aggregator (pieces relative to its window,
 * and where its bytes lie in the stream), in the scratch's counts and lengths; the list in
 * *list_p (malloc'd). 0 when out of memory (nothing to send then). */
static int cb_lists(const cb_plan_t *pl, int64_t r, piece_iter_t *its, MPI_Offset p0, int n,
                    cb_scratch_t *sc, uint32_t **list_p)
{
    uint64_t *scnt = sc->cnt;
    size_t *pl_slens = sc->lens, *pl_sdispls = pl_slens + n;
    size_t *d_slens = pl_slens + 4 * n, *d_sdispls = d_slens + n;
    memset(scnt, 0, 2 * (size_t)n * sizeof(uint64_t));
    memset(sc->lens, 0, 8 * (size_t)n * sizeof(size_t));
    uint64_t total = 0;
    for (int k = 0; k < pl->naggr; k++) {
        MPI_Offset ws = 0, we = 0;
        cb_window(pl, k, r, &ws, &we);
        piece_iter_t walk = its[k]; /* counted on a copy, listed below */
        int to = cb_rank(pl, k);
        cb_collect(&walk, ws, we, NULL, &scnt[2 * to], &scnt[2 * to + 1]);
        total += scnt[2 * to];
    }
    uint32_t *list = malloc(total * 2 * sizeof(uint32_t) + 1);
    if (list == NULL) {
        memset(scnt, 0, 2 * (size_t)n * sizeof(uint64_t));
        return 0;
    }
    size_t listed = 0;
    for (int k = 0; k < pl->naggr; k++) {
        MPI_Offset ws = 0, we = 0;
        cb_window(pl, k, r, &ws, &we);
        int to = cb_rank(pl, k);
        uint64_t np = 0, nb = 0;
        d_sdispls[to] = (size_t)(its[k].p - p0); /* the stream's bytes are sent in place */
        pl_sdispls[to] = listed * 2 * sizeof(uint32_t);
        cb_collect(&its[k], ws, we, list + 2 * listed, &np, &nb);
        d_slens[to] = (size_t)nb;
        pl_slens[to] = (size_t)np * 2 * sizeof(uint32_t);
        listed += np;
    }
    *list_p = list;
    return 1;
}

/* The aggregated write of bytes [p0, p0 + a->fbytes) of v's stream in pl's rounds. Every
 * process of f->comm calls it with the same plan; each returns its own errno (ENOMEM, or a
 * failed pwrite at an aggregator) in *err_p, -1 when a collective failed (then nothing more
 * can be agreed). */
static void write_aggregated(mf_file_t *f, const mf_file_view_t *v, MPI_Offset p0,
                             const access_data_t *a, const cb_plan_t *pl, cb_scratch_t *sc,
                             int *err_p)
{
    mf_comm_t *c = f->comm;
    int n = c->size, mine = -1, oom = 0, werr = 0, coll = 1;
    for (int k = 0; k < pl->naggr; k++)
        if (cb_rank(pl, k) == c->rank)
            mine = k;
    /* the data as one packed stream: the user's buffer when it is one run */
    static char none;
    const char *stream = &none;
    char *packed = NULL;
    MPI_Datatype mdt = mf_dtype_packed_as(a->dt);
    MPI_Aint moff = 0;
    if (a->bytes > 0 && mf_dtype_contiguous(mdt, a->count, &moff))
        stream = (const char *)a->buf + moff;
    else if (a->bytes > 0 && (packed = mf_dtype_temp_alloc((size_t)a->bytes)) != NULL)
        mf_dtype_pack(mdt, a->count, a->buf, packed, 0, a->bytes);
    else if (a->bytes > 0)
        oom = 1;
    if (packed != NULL)
        stream = packed;
    /* one walk per domain, from its first byte to the next domain's */
    piece_iter_t *its = calloc((size_t)pl->naggr, sizeof(*its));
    oom |= its == NULL;
    MPI_Offset pend = p0 + a->fbytes, from = p0;
    for (int k = 0; k < pl->naggr && its != NULL; k++) {
        MPI_Offset ds = 0, de = 0;
        cb_domain(pl, k, &ds, &de);
        MPI_Offset to = view_stream_at(v, from, pend, de);
        iter_init(&its[k], v, from, to);
        from = to;
    }
    uint64_t *scnt = sc->cnt, *rcnt = scnt + 2 * n;
    size_t *pl_lens = sc->lens, *d_lens = sc->lens + 4 * n; /* slens, sdispls, rlens, rdispls */
    for (int64_t r = 0; r < pl->rounds; r++) {
        uint32_t *slist = NULL, *rlist = NULL;
        char *rdata = NULL;
        if (!oom && !cb_lists(pl, r, its, p0, n, sc, &slist))
            oom = 1;
        if (oom) { /* nothing to send: the agreement below stops everyone */
            memset(scnt, 0, 2 * (size_t)n * sizeof(uint64_t));
            memset(sc->lens, 0, 8 * (size_t)n * sizeof(size_t));
        }
        coll = mf_coll_alltoall(c, scnt, 2 * sizeof(uint64_t), rcnt) == MF_OK;
        uint64_t rpieces = 0, rbytes = 0;
        /* this process's own pieces stay here: no copy through the alltoallv */
        int me = c->rank;
        uint64_t own = coll ? rcnt[2 * me] : 0;
        const uint32_t *own_list =
            slist != NULL ? slist + pl_lens[n + me] / sizeof(uint32_t) : NULL;
        const char *own_data = stream + d_lens[n + me];
        pl_lens[me] = d_lens[me] = 0;
        for (int s = 0; s < n && coll; s++) {
            if (s == me) {
                pl_lens[2 * n + s] = d_lens[2 * n + s] = 0;
                pl_lens[3 * n + s] = d_lens[3 * n + s] = 0;
                continue;
            }
            pl_lens[2 * n + s] = (size_t)rcnt[2 * s] * 2 * sizeof(uint32_t);
            pl_lens[3 * n + s] = (size_t)rpieces * 2 * sizeof(uint32_t);
            d_lens[2 * n + s] = (size_t)rcnt[2 * s + 1];
            d_lens[3 * n + s] = (size_t)rbytes;
            rpieces += rcnt[2 * s];
            rbytes += rcnt[2 * s + 1];
        }
        size_t rcap = 0;
        if (coll && !oom && rpieces > 0) {
            rlist = malloc(rpieces * 2 * sizeof(uint32_t));
            rdata = cb_buffer_take(f, (size_t)rbytes, &rcap);
            oom = rlist == NULL || rdata == NULL;
        }
        /* a process short of memory stops everyone before this round's data moves */
        uint64_t ok = oom ? 0 : UINT64_MAX;
        if (coll)
            coll = mf_coll_allreduce_band(c, &ok, 1) == MF_OK;
        if (coll && ok == UINT64_MAX)
            coll = mf_coll_alltoallv(c, slist != NULL ? (void *)slist : &none, pl_lens, pl_lens + n,
                                     rlist != NULL ? (void *)rlist : &none, pl_lens + 2 * n,
                                     pl_lens + 3 * n) == MF_OK &&
                   mf_coll_alltoallv(c, stream, d_lens, d_lens + n, rdata != NULL ? rdata : &none,
                                     d_lens + 2 * n, d_lens + 3 * n) == MF_OK;
        if (coll && ok == UINT64_MAX && rpieces + own > 0 && werr == 0) {
            MPI_Offset ws = 0, we = 0;
            cb_window(pl, mine, r, &ws, &we);
            cb_recv_t in = {
                rcnt,    (const char *)rlist, rdata, pl_lens + 3 * n, d_lens + 3 * n, own_list,
                own_data};
            werr = cb_place(f, ws, &in, sc);
        }
        free(slist);
        free(rlist);
        if (rdata != NULL)
            cb_buffer_give(f, rdata, rcap);
        if (!coll || ok != UINT64_MAX)
            break;
    }
    free(its);
    mf_dtype_temp_free(packed);
    *err_p = !coll ? -1 : oom ? ENOMEM : werr;
}

mf_status_t mf_file_hints_used(mf_file_t *f, struct MPI_ABI_Info *info)
{
    cb_entry_t e = {0};
    pthread_mutex_lock(&f->lock);
    cb_hints(f, &e);
    pthread_mutex_unlock(&f->lock);
    char val[32];
    snprintf(val, sizeof(val), "%lld", (long long)e.buffer);
    mf_status_t st = mf_info_set(info, "cb_buffer_size", val);
    snprintf(val, sizeof(val), "%d",
             e.nodes > 0 && e.nodes < f->comm->size ? (int)e.nodes : f->comm->size);
    return st != MF_OK ? st : mf_info_set(info, "cb_nodes", val);
}

int mf_file_write_all(mf_file_t *f, int ok, mf_io_where_t where, MPI_Offset offset, const void *buf,
                      MPI_Count count, MPI_Datatype dt, MPI_Count *bytes_p, char *why)
{
    mf_comm_t *c = f->comm;
    int n = c->size, cls = MPI_SUCCESS;
    if (ok)
        cls = access_allowed(f, 1, why);
    if (ok && cls == MPI_SUCCESS && where != MF_IO_SHARED && (f->amode & MPI_MODE_SEQUENTIAL))
        cls =
            mf_io_fail(why, MPI_ERR_UNSUPPORTED_OPERATION,
                       "the file was opened with MPI_MODE_SEQUENTIAL: only the shared file pointer "
                       "may be used");
    cb_entry_t me = {0};
    access_data_t a = {0};
    pthread_mutex_lock(&f->lock);
    mf_file_view_t v = view_snapshot(f);
    cb_hints(f, &me);
    if (ok && cls == MPI_SUCCESS)
        cls = access_size(&v, (void *)(uintptr_t)buf, count, dt, &a, why);
    MPI_Offset pos = offset;
    if (ok && cls == MPI_SUCCESS && where == MF_IO_INDIVIDUAL) {
        pos = f->fp;
        f->fp += a.fbytes / v.esize;
    }
    pthread_mutex_unlock(&f->lock);
    MPI_Offset p0 = pos * v.esize;
    if (ok && cls == MPI_SUCCESS && v.fsize > 0)
        cls = view_reach(&v, p0, a.fbytes, 1, why);
    if (ok && cls == MPI_SUCCESS) {
        me.flags |= CB_TAKES_PART;
        /* (a view holding no data fails in access_bytes, alone) */
        if (v.rep == NULL && !__atomic_load_n(&f->atomic, __ATOMIC_RELAXED) &&
            (v.fsize > 0 || a.fbytes == 0))
            me.flags |= CB_NATIVE;
        if (a.fbytes > 0 && v.fsize > 0) {
            me.lo = view_offset(&v, p0);
            me.hi = view_offset(&v, p0 + a.fbytes - 1) + 1;
            me.bytes = a.fbytes;
            me.pieces = view_pieces(&v, a.fbytes);
        }
    }
    /* the first exchange, which a process whose arguments failed takes part in too (saying
     * so): the others would wait for it otherwise. Out of memory for these few bytes per
     * process leaves the others waiting, as in every agreement of this file. */
    cb_scratch_t sc = {calloc(2 * (size_t)n, sizeof(cb_entry_t)),
                       calloc(8 * (size_t)n, sizeof(size_t)),
                       calloc(4 * (size_t)n, sizeof(uint64_t)), calloc((size_t)n, sizeof(cb_src_t)),
                       calloc((size_t)n, sizeof(int))};
    cb_plan_t pl;
    int agg = 0;
    if (sc.all == NULL || sc.lens == NULL || sc.cnt == NULL || sc.src == NULL || sc.heap == NULL)
        cls = mf_io_fail(why, MPI_ERR_NO_MEM, "out of memory");
    else if (mf_coll_allgather(c, &me, sizeof(me), sc.all) != MF_OK)
        cls = mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    else
        agg = cb_decide(sc.all, sc.all + n, n, &pl);
    if (!ok || cls != MPI_SUCCESS) {
        /* out of this call: the others go alone */
    } else if (!agg) {
        cls = access_bytes(f, &v, 1, p0, &a, bytes_p, why);
    } else {
        int err = 0;
        write_aggregated(f, &v, p0, &a, &pl, &sc, &err);
        /* everyone returns the class of the first process that failed */
        int64_t *errs = (int64_t *)sc.cnt, mine = err;
        if (err < 0 || mf_coll_allgather(c, &mine, sizeof(mine), errs) != MF_OK) {
            cls = mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
        } else {
            int bad = -1;
            for (int i = 0; i < n && bad < 0; i++)
                if (errs[i] != 0)
                    bad = i;
            int e = bad >= 0 ? (int)errs[bad] : 0;
            int ecls = e == ENOMEM ? MPI_ERR_NO_MEM : errno_class(e);
            if (bad < 0)
                *bytes_p = a.bytes;
            else if (err == ENOMEM)
                cls = mf_io_fail(why, ecls, "cannot allocate the buffers of the collective write");
            else if (err != 0)
                cls = mf_io_fail(why, ecls, "writing %s failed: %s", f->filename, strerror(err));
            else
                cls = mf_io_fail(why, ecls,
                                 "the collective write to %s failed at process %d of the file's "
                                 "communicator: %s",
                                 f->filename, bad, e == ENOMEM ? "out of memory" : strerror(e));
        }
    }
    free(sc.all);
    free(sc.lens);
    free(sc.cnt);
    free(sc.src);
    free(sc.heap);
    view_release(&v);
    return cls;
}

int mf_file_type_extent(mf_file_t *f, MPI_Datatype dt, MPI_Aint *extent_p, char *why)
{
    pthread_mutex_lock(&f->lock);
    const mf_io_rep_t *rep = f->view.rep;
    pthread_mutex_unlock(&f->lock);
    mf_dtype_props_t p = {0};
    if (mf_dtype_props(dt, &p) != MF_OK)
        return mf_io_fail(why, MPI_ERR_TYPE, "argument datatype is not a valid datatype");
    if (rep == NULL) {
        *extent_p = p.extent;
        return MPI_SUCCESS;
    }
    MPI_Datatype layout = MPI_DATATYPE_NULL;
    int cls = mf_io_rep_layout(rep, dt, &layout, why);
    if (cls != MPI_SUCCESS)
        return cls;
    mf_dtype_props(layout, &p);
    mf_dtype_release(layout);
    *extent_p = p.extent;
    return MPI_SUCCESS;
}

/* ---- file pointers ---------------------------------------------------------------------- */

static int file_size(mf_file_t *f, MPI_Offset *size_p, char *why)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0) {
        int e = errno;
        return mf_io_fail(why, MPI_ERR_IO, "cannot find the size of %s: %s", f->filename,
                          strerror(e));
    }
    *size_p = (MPI_Offset)st.st_size;
    return MPI_SUCCESS;
}

/* The new position of a seek from `cur` (v: the view, for MPI_SEEK_END). */
static int seek_target(mf_file_t *f, const mf_file_view_t *v, MPI_Offset cur, MPI_Offset offset,
                       int whence, MPI_Offset *pos_p, char *why)
{
    MPI_Offset base = 0;
    switch (whence) {
    case MPI_SEEK_SET: break;
    case MPI_SEEK_CUR: base = cur; break;
    case MPI_SEEK_END: {
        MPI_Offset size = 0;
        int cls = file_size(f, &size, why);
        if (cls != MPI_SUCCESS)
            return cls;
        base = (view_bytes_before(v, size) + v->esize - 1) / v->esize;
        break;
    }
    default:
        return mf_io_fail(
            why, MPI_ERR_ARG,
            "argument whence=%d is none of MPI_SEEK_SET, MPI_SEEK_CUR and MPI_SEEK_END", whence);
    }
    if (base + offset < 0)
        return mf_io_fail(why, MPI_ERR_ARG,
                          "argument offset=%lld would move the pointer before the "
                          "start of the view (to %lld)",
                          (long long)offset, (long long)(base + offset));
    *pos_p = base + offset;
    return MPI_SUCCESS;
}

static int sequential_refuses(mf_file_t *f, char *why)
{
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return mf_io_fail(why, MPI_ERR_UNSUPPORTED_OPERATION,
                          "the file was opened with MPI_MODE_SEQUENTIAL: it has no individual file "
                          "pointer");
    return MPI_SUCCESS;
}

int mf_file_seek(mf_file_t *f, MPI_Offset offset, int whence, char *why)
{
    int cls = sequential_refuses(f, why);
    if (cls != MPI_SUCCESS)
        return cls;
    pthread_mutex_lock(&f->lock);
    MPI_Offset pos = 0;
    cls = seek_target(f, &f->view, f->fp, offset, whence, &pos, why);
    if (cls == MPI_SUCCESS)
        f->fp = pos;
    pthread_mutex_unlock(&f->lock);
    return cls;
}

int mf_file_seek_shared(mf_file_t *f, MPI_Offset offset, int whence, char *why)
{
    mf_comm_t *c = f->comm;
    int all_ok = 0, same_offset = 0, same_whence = 0;
    if (!agree(c, 1, offset, &all_ok, &same_offset) || !agree(c, 1, whence, &all_ok, &same_whence))
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    if (!same_offset || !same_whence)
        return mf_io_fail(why, MPI_ERR_NOT_SAME, "argument %s differs between the processes",
                          !same_offset ? "offset" : "whence");
    struct {
        int32_t cls;
        char why[MF_IO_WHY_LEN];
    } result = {MPI_SUCCESS, ""};
    if (c->rank == 0) {
        MPI_Offset cur = 0, pos = 0;
        pthread_mutex_lock(&f->lock);
        mf_file_view_t v = view_snapshot(f);
        pthread_mutex_unlock(&f->lock);
        result.cls = shared_update(f, 0, 0, &cur, result.why);
        if (result.cls == MPI_SUCCESS)
            result.cls = seek_target(f, &v, cur, offset, whence, &pos, result.why);
        if (result.cls == MPI_SUCCESS)
            result.cls = shared_update(f, 1, pos, &cur, result.why);
        view_release(&v);
    }
    if (mf_coll_bcast(c, &result, sizeof(result), 0) != MF_OK)
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    return result.cls == MPI_SUCCESS ? MPI_SUCCESS : mf_io_fail(why, result.cls, "%s", result.why);
}

int mf_file_get_position(mf_file_t *f, MPI_Offset *offset_p, char *why)
{
    int cls = sequential_refuses(f, why);
    if (cls != MPI_SUCCESS)
        return cls;
    pthread_mutex_lock(&f->lock);
    *offset_p = f->fp;
    pthread_mutex_unlock(&f->lock);
    return MPI_SUCCESS;
}

int mf_file_get_position_shared(mf_file_t *f, MPI_Offset *offset_p, char *why)
{
    return shared_update(f, 0, 0, offset_p, why);
}

int mf_file_get_byte_offset(mf_file_t *f, MPI_Offset offset, MPI_Offset *disp_p, char *why)
{
    (void)why;
    pthread_mutex_lock(&f->lock);
    *disp_p = view_offset(&f->view, offset * f->view.esize);
    pthread_mutex_unlock(&f->lock);
    return MPI_SUCCESS;
}

/* ---- size, atomicity, sync ----------------------------------------------------------------- */

/* A collective change the first process makes for everyone: `value` agreed on, then `change`
 * run on rank 0 and its result shared. */
static int first_changes(mf_file_t *f, const char *arg, MPI_Offset value, int local_cls,
                         int (*change)(mf_file_t *f, MPI_Offset value, char *why), char *why)
{
    mf_comm_t *c = f->comm;
    int all_ok = 0, same = 0;
    if (!agree(c, local_cls == MPI_SUCCESS, value, &all_ok, &same))
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    if (local_cls != MPI_SUCCESS)
        return local_cls;
    if (!all_ok)
        return fail_elsewhere(why, "passed invalid arguments");
    if (!same)
        return mf_io_fail(why, MPI_ERR_NOT_SAME, "argument %s=%lld differs between the processes",
                          arg, (long long)value);
    struct {
        int32_t cls;
        char why[MF_IO_WHY_LEN];
    } result = {MPI_SUCCESS, ""};
    if (c->rank == 0)
        result.cls = change(f, value, result.why);
    if (mf_coll_bcast(c, &result, sizeof(result), 0) != MF_OK)
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    return result.cls == MPI_SUCCESS ? MPI_SUCCESS : mf_io_fail(why, result.cls, "%s", result.why);
}

static int do_truncate(mf_file_t *f, MPI_Offset size, char *why)
{
    if (ftruncate(f->fd, (off_t)size) == 0)
        return MPI_SUCCESS;
    int e = errno;
    return mf_io_fail(why, errno_class(e), "cannot set the size of %s to %lld: %s", f->filename,
                      (long long)size, strerror(e));
}

static int do_preallocate(mf_file_t *f, MPI_Offset size, char *why)
{
    MPI_Offset now = 0;
    int cls = file_size(f, &now, why);
    if (cls != MPI_SUCCESS || size <= now)
        return cls;
    int e = posix_fallocate(f->fd, 0, (off_t)size);
    if (e == 0)
        return MPI_SUCCESS;
    return mf_io_fail(why, errno_class(e), "cannot allocate %lld bytes for %s: %s", (long long)size,
                      f->filename, strerror(e));
}

static int writable(mf_file_t *f, const char *func_what, char *why)
{
    if ((f->amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY)) == MPI_MODE_RDONLY)
        return mf_io_fail(why, MPI_ERR_ACCESS,
                          "the file was opened with MPI_MODE_RDONLY: cannot %s", func_what);
    return MPI_SUCCESS;
}

/* (The access mode is the same everywhere, so writable() fails everywhere or nowhere.) */
int mf_file_set_size(mf_file_t *f, MPI_Offset size, char *why)
{
    return first_changes(f, "size", size, writable(f, "change its size", why), do_truncate, why);
}

int mf_file_preallocate(mf_file_t *f, MPI_Offset size, char *why)
{
    return first_changes(f, "size", size, writable(f, "allocate space", why), do_preallocate, why);
}

int mf_file_set_atomicity(mf_file_t *f, int flag, char *why)
{
    int all_ok = 0, same = 0;
    if (!agree(f->comm, 1, flag != 0, &all_ok, &same))
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    if (!same)
        return mf_io_fail(why, MPI_ERR_NOT_SAME, "argument flag differs between the processes");
    __atomic_store_n(&f->atomic, flag != 0, __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

int mf_file_sync(mf_file_t *f, char *why)
{
    int e = fsync(f->fd) == 0 ? 0 : errno;
    if (e == EINVAL || e == EROFS) /* a file that cannot be synced has nothing to sync */
        e = 0;
    int all_ok = 0;
    if (!agree(f->comm, e == 0, 0, &all_ok, NULL))
        return mf_io_fail(why, MPI_ERR_OTHER, "the agreement over the communicator failed");
    if (e != 0)
        return mf_io_fail(why, errno_class(e), "cannot sync %s: %s", f->filename, strerror(e));
    if (!all_ok)
        return fail_elsewhere(why, "could not sync the file");
    return MPI_SUCCESS;
}

int mf_file_get_size(mf_file_t *f, MPI_Offset *size_p, char *why)
{
    return file_size(f, size_p, why);
}
