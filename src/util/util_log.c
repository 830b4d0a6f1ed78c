/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Utility layer: status strings, logging to stderr, assertion failures and allocation helpers.
 */
#include "util.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int mf_log_level_current = MF_LOG_WARN;
static char log_category[32];
static int log_rank = -1;
static mf_log_writer_t log_writer;
static void *log_writer_ctx;

const char *mf_status_str(mf_status_t status)
{
    switch (status) {
    case MF_OK: return "success";
    case MF_ERR_NO_MEMORY: return "out of memory";
    case MF_ERR_INVALID: return "invalid argument";
    case MF_ERR_IO: return "input/output error";
    case MF_ERR_PROTOCOL: return "protocol error";
    case MF_ERR_NOT_FOUND: return "not found";
    case MF_ERR_TRUNCATE: return "message truncated";
    case MF_ERR_TRANSPORT: return "transport error";
    case MF_ERR_PEER_FAILED: return "peer process failed";
    case MF_ERR_UNSUPPORTED: return "unsupported";
    case MF_ERR_CANCELED: return "canceled";
    case MF_ERR_EXHAUSTED: return "too many communicators (no context id is free)";
    case MF_ERR_OVERFLOW: return "its size or extent does not fit in an MPI_Count";
    case MF_ERR_NO_SPACE: return "no room left in the buffer";
    case MF_ERR_OTHER: break;
    }
    return "other error";
}

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

void mf_log_init(void)
{
    const char *env = getenv("MANIFOLD_LOG");
    if (env == NULL || env[0] == '\0')
        return;
    char buf[64];
    snprintf(buf, sizeof(buf), "%s", env);
    char *comma = strchr(buf, ',');
    if (comma != NULL) {
        *comma = '\0';
        snprintf(log_category, sizeof(log_category), "%s", comma + 1);
    }
    for (int i = 0; i < (int)(sizeof(level_names) / sizeof(level_names[0])); i++) {
        if (strcasecmp(buf, level_names[i]) == 0) {
            mf_log_level_current = i;
            return;
        }
    }
    fprintf(stderr,
            "manifold: warning: MANIFOLD_LOG level '%s' is unknown (use error, warn, "
            "info, debug or trace)\n",
            buf);
}

void mf_log_set_rank(int rank)
{
    log_rank = rank;
}

void mf_log_redirect(mf_log_writer_t writer, void *ctx)
{
    log_writer = writer;
    log_writer_ctx = ctx;
}

static void flush_unless_busy(FILE *stream)
{
    if (ftrylockfile(stream) != 0)
        return;
    fflush(stream);
    funlockfile(stream);
}

void mf_flush_program_output(void)
{
    flush_unless_busy(stdout);
    flush_unless_busy(stderr);
}

void mf_log_emit(mf_log_level_t level, const char *category, const char *fmt, ...)
{
    /* A category filter only restricts the chatty levels; errors and warnings always show. */
    if (level > MF_LOG_WARN && log_category[0] != '\0' && strcmp(category, log_category) != 0)
        return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    char line[1200];
    int len;
    if (log_rank >= 0)
        len = snprintf(line, sizeof(line), "manifold[%d:%d] %s %s: %s\n", log_rank, (int)getpid(),
                       level_names[level], category, msg);
    else
        len = snprintf(line, sizeof(line), "manifold[%d] %s %s: %s\n", (int)getpid(),
                       level_names[level], category, msg);
    if (len < 0)
        return;
    if (len >= (int)sizeof(line)) { /* cut, but still one whole line */
        len = (int)sizeof(line) - 1;
        line[len - 1] = '\n';
    }
    if (log_writer != NULL)
        log_writer(log_writer_ctx, line, (size_t)len);
    else
        fputs(line, stderr);
}

void mf_assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "manifold[%d]: assertion '%s' failed at %s:%d\n", (int)getpid(), expr, file,
            line);
    abort();
}

void *mf_malloc(size_t size, const char *what)
{
    void *p = malloc(size);
    if (p == NULL)
        mf_log(MF_LOG_ERROR, "util", "cannot allocate %zu bytes for %s", size, what);
    return p;
}

void *mf_aligned_alloc(size_t align, size_t size)
{
    void *p = NULL;
    return posix_memalign(&p, align, size > 0 ? size : 1) == 0 ? p : NULL;
}

void *mf_calloc(size_t n, size_t size, const char *what)
{
    void *p = calloc(n, size);
    if (p == NULL)
        mf_log(MF_LOG_ERROR, "util", "cannot allocate %zu x %zu bytes for %s", n, size, what);
    return p;
}
