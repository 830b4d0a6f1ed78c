/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher: forwarding of the ranks' stdout/stderr to mpiexec's own, a whole line per write so
 * that lines of different ranks never interleave (optionally tagged "[rank] "), and of
 * mpiexec's stdin to rank 0 through a non-blocking pipe that never stalls the event loop.
 */
#include "mpiexec.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Our stdout may be a closed pipe (mpiexec ... | head): losing output is then fine. */
static void write_all(int fd, const char *data, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return;
        data += n;
        len -= (size_t)n;
    }
}

void mf_output_init(mf_output_t *out, int fd, int dest, int rank, int tag)
{
    *out = (mf_output_t){.fd = fd, .dest = dest, .rank = rank, .tag = tag, .at_line_start = 1};
}

/* Writes len bytes of one line (or of a line too long for the buffer) in a single write. */
static void emit(mf_output_t *out, const char *data, size_t len)
{
    char line[MF_OUTPUT_LINE_MAX + 32];
    size_t used = 0;
    if (out->tag && out->at_line_start)
        used = (size_t)snprintf(line, sizeof(line), "[%d] ", out->rank);
    memcpy(line + used, data, len);
    used += len;
    out->at_line_start = data[len - 1] == '\n';
    write_all(out->dest, line, used);
}

static void emit_lines(mf_output_t *out, int at_eof)
{
    size_t start = 0;
    for (;;) {
        char *newline = memchr(out->buf + start, '\n', out->len - start);
        if (newline == NULL)
            break;
        size_t end = (size_t)(newline - out->buf) + 1;
        emit(out, out->buf + start, end - start);
        start = end;
    }
    /* A full buffer without a newline, or the unterminated end of the output, goes as is. */
    if (out->len - start > 0 && (at_eof || (start == 0 && out->len == sizeof(out->buf)))) {
        emit(out, out->buf + start, out->len - start);
        start = out->len;
    }
    memmove(out->buf, out->buf + start, out->len - start);
    out->len -= start;
}

void mf_output_pump(mf_output_t *out)
{
    ssize_t n;
    do {
        n = read(out->fd, out->buf + out->len, sizeof(out->buf) - out->len);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN)
        return;
    if (n > 0) {
        out->len += (size_t)n;
        emit_lines(out, 0);
        return;
    }
    emit_lines(out, 1);
    close(out->fd);
    out->fd = -1;
}

void mf_input_init(mf_input_t *in, int src, int dest)
{
    in->src = src;
    in->dest = dest;
    in->len = in->off = 0;
}

void mf_input_close(mf_input_t *in)
{
    if (in->dest >= 0)
        close(in->dest); /* rank 0 sees end of file */
    in->src = in->dest = -1;
    in->len = in->off = 0;
}

void mf_input_read(mf_input_t *in)
{
    ssize_t n;
    do {
        n = read(in->src, in->buf, sizeof(in->buf));
    } while (n < 0 && errno == EINTR);
    if (n < 0 && errno == EAGAIN)
        return;
    if (n <= 0) {
        in->src = -1;
        if (in->len == 0)
            mf_input_close(in);
        return;
    }
    in->len = (size_t)n;
    in->off = 0;
}

void mf_input_write(mf_input_t *in)
{
    ssize_t n = write(in->dest, in->buf + in->off, in->len - in->off);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n < 0) {
        mf_input_close(in); /* rank 0 closed its stdin or exited: stop reading ours */
        return;
    }
    in->off += (size_t)n;
    if (in->off < in->len)
        return;
    in->len = in->off = 0;
    if (in->src < 0)
        mf_input_close(in);
}
