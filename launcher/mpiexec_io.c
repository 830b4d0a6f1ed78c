/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Launcher: forwarding of the ranks' stdout/stderr to mpiexec's own through sinks that queue
 * whole lines (optionally tagged "[rank] ", or "[job:rank] " for spawned jobs) and write them only
 * when the descriptor takes more, and of mpiexec's stdin to rank 0 through a non-blocking pipe.
 * Nothing here blocks the event loop, whatever the reader at either end does.
 */
#include "mpiexec.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

long long mf_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void mf_sink_init(mf_sink_t *sink, int fd)
{
    *sink = (mf_sink_t){.fd = fd};
}

size_t mf_sink_pending(const mf_sink_t *sink)
{
    return sink->len - sink->off;
}

void mf_sink_drop(mf_sink_t *sink)
{
    sink->broken = 1;
    free(sink->buf);
    sink->buf = NULL;
    sink->off = sink->len = sink->cap = 0;
}

static void sink_append(mf_sink_t *sink, const char *data, size_t len)
{
    if (sink->broken)
        return;
    if (sink->off > 0 && sink->off == sink->len)
        sink->off = sink->len = 0;
    if (sink->len + len > sink->cap && sink->off > 0) {
        /* move the unwritten rest to the front before growing */
        memmove(sink->buf, sink->buf + sink->off, sink->len - sink->off);
        sink->len -= sink->off;
        sink->off = 0;
    }
    if (sink->len + len > sink->cap) {
        size_t cap = sink->cap > 0 ? sink->cap : 16384;
        while (cap < sink->len + len)
            cap *= 2;
        char *buf = realloc(sink->buf, cap);
        if (buf == NULL)
            return; /* out of memory: this output is lost, the job goes on */
        sink->buf = buf;
        sink->cap = cap;
    }
    memcpy(sink->buf + sink->len, data, len);
    sink->len += len;
}

/* Another writer comes while a rank's long line is open (a piece without its end): the piece
 * ends its own line, and the rank's next piece starts a new one (tagged again). */
static void sink_end_open_line(mf_sink_t *sink, const mf_output_t *writer)
{
    if (sink->open_line == NULL || sink->open_line == writer)
        return;
    sink_append(sink, "\n", 1);
    sink->open_line->at_line_start = 1;
    sink->open_line = NULL;
}

void mf_sink_put(mf_sink_t *sink, const char *data, size_t len)
{
    sink_end_open_line(sink, NULL);
    sink_append(sink, data, len);
}

void mf_sink_printf(mf_sink_t *sink, const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line), fmt, ap);
    va_end(ap);
    if (n > 0)
        mf_sink_put(sink, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

int mf_sink_write(mf_sink_t *sink)
{
    size_t len = mf_sink_pending(sink);
    if (len == 0)
        return 0;
    /* A pipe reported writable takes PIPE_BUF bytes without blocking; end at a line's end so
     * that another writer of the same pipe cannot split one of ours. */
    if (len > PIPE_BUF) {
        len = PIPE_BUF;
        const char *data = sink->buf + sink->off;
        for (size_t i = len; i > 0; i--) {
            if (data[i - 1] == '\n') {
                len = i;
                break;
            }
        }
    }
    ssize_t n = write(sink->fd, sink->buf + sink->off, len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return 1;
    if (n < 0) {
        /* Our stdout may be a closed pipe (mpiexec ... | head): losing output is then fine. */
        mf_sink_drop(sink);
        return 0;
    }
    sink->off += (size_t)n;
    return mf_sink_pending(sink) > 0;
}

void mf_sink_finish(mf_sink_t *sink, long long wait_ms)
{
    struct pollfd pfd = {.fd = sink->fd, .events = POLLOUT};
    long long until = mf_now_ms() + wait_ms;
    while (mf_sink_pending(sink) > 0) {
        long long left = until - mf_now_ms();
        if (poll(&pfd, 1, left > 0 ? (int)left : 0) != 1 || !(pfd.revents & POLLOUT) ||
            !mf_sink_write(sink))
            break;
    }
    sink->off = sink->len = 0;
}

void mf_output_init(mf_output_t *out, int fd, mf_sink_t *dest, int job, int rank, int tag)
{
    *out = (mf_output_t){
        .fd = fd, .dest = dest, .job = job, .rank = rank, .tag = tag, .at_line_start = 1};
}

/* Queues len bytes of one line (or of a line too long for the buffer) as one piece. */
static void emit(mf_output_t *out, const char *data, size_t len)
{
    char line[MF_OUTPUT_LINE_MAX + 32];
    size_t used = 0;
    sink_end_open_line(out->dest, out);
    if (out->tag && out->at_line_start && out->job == 0)
        used = (size_t)snprintf(line, sizeof(line), "[%d] ", out->rank);
    else if (out->tag && out->at_line_start)
        used = (size_t)snprintf(line, sizeof(line), "[%d:%d] ", out->job, out->rank);
    memcpy(line + used, data, len);
    used += len;
    out->at_line_start = data[len - 1] == '\n';
    sink_append(out->dest, line, used);
    out->dest->open_line = out->at_line_start ? NULL : out;
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
