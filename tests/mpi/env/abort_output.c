/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a process printed just before it ends through MPI reaches the reader: MPI_Abort and a
 * fatal error (MPI_ERRORS_ARE_FATAL) end the process without exit(), and stdout on a pipe
 * (under every launcher) is buffered, so a library that does not flush loses the program's
 * last diagnostic. Also MPI_Init_thread with a `required` that is no thread level: it must not
 * return without initialising and without an error (a program that does not test the code,
 * the usual case under the fatal initial handler, would fail later for a misleading reason).
 * Manifold raises it through the initial handler (fatal, naming MPI_Init_thread); MPICH 5.0.2
 * initialises at MPI_THREAD_SINGLE, which is also accepted elsewhere. And a fatal handler given
 * a value that is no error code (MPI_Comm_call_errhandler's, or a generalized request's
 * query_fn's): the job ends with a message saying so (the library once indexed its string
 * tables with the value: garbage text, or a crash for INT_MIN).
 *
 * Rank 0 runs this program again as a singleton child per case, with stdout and stderr on a
 * pipe, and checks what came through and how the child ended.
 */
#include "mtest.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MARK "printed just before the end"

static int query_garbage(void *extra_state, MPI_Status *status)
{
    (void)extra_state;
    MPI_Status_set_elements(status, MPI_BYTE, 0);
    MPI_Status_set_cancelled(status, 0);
    return -1;
}

static int free_nothing(void *extra_state)
{
    (void)extra_state;
    return MPI_SUCCESS;
}

static int cancel_nothing(void *extra_state, int complete)
{
    (void)extra_state, (void)complete;
    return MPI_SUCCESS;
}

static int child(const char *mode)
{
    int argc = 0, provided = -1, flag = 0;
    char **argv = NULL;
    if (strcmp(mode, "init_thread") == 0) {
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE + 1, &provided);
        MPI_Initialized(&flag);
        printf("returned: initialised %d, provided %d\n", flag, provided);
        if (flag)
            MPI_Finalize();
        return 0;
    }
    MPI_Init(&argc, &argv);
    printf("%s\n", MARK);
    if (strcmp(mode, "abort") == 0)
        MPI_Abort(MPI_COMM_WORLD, 3);
    if (strncmp(mode, "callerr:", 8) == 0)
        MPI_Comm_call_errhandler(MPI_COMM_WORLD, atoi(mode + 8));
    if (strcmp(mode, "greq") == 0) {
        MPI_Request req;
        MPI_Grequest_start(query_garbage, free_nothing, cancel_nothing, NULL, &req);
        MPI_Grequest_complete(req);
        MPI_Wait(&req, MPI_STATUS_IGNORE); /* fatal: query_fn failed */
        return 0;
    }
    int rank;
    MPI_Comm_rank(MPI_COMM_NULL, &rank); /* fatal under the default handler */
    return 0;
}

/* Runs the child; its output goes to out (NUL-terminated). Returns its wait status. */
static int run_child(const char *self, const char *mode, char *out, size_t size)
{
    int fd[2];
    if (pipe(fd) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        /* A singleton: forget the launcher of the parent (Manifold's and hydra's variables). */
        const char *vars[] = {"PMI_FD",   "PMI_PORT",     "PMI_ID",      "PMI_RANK",
                              "PMI_SIZE", "PMI_HOSTNAME", "PMI_SPAWNED", "PMI_APPNUM"};
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
            unsetenv(vars[i]);
        execl(self, self, "--child", mode, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    size_t n = 0;
    ssize_t k;
    while ((k = read(fd[0], out + n, size - 1 - n)) > 0 && n + (size_t)k < size - 1)
        n += (size_t)k;
    if (k > 0)
        n += (size_t)k;
    out[n] = '\0';
    close(fd[0]);
    int status = -1;
    waitpid(pid, &status, 0);
    return status;
}

int main(int argc, char **argv)
{
    static char out[1 << 16];
    int rank;

    if (argc == 3 && strcmp(argv[1], "--child") == 0)
        return child(argv[2]);
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        char int_min[32];
        snprintf(int_min, sizeof(int_min), "callerr:%d", INT_MIN);
        const char *modes[] = {"abort", "fatal", "callerr:-1", "callerr:63", int_min, "greq"};
        /* The values that are no code: an erroneous program, whose end Manifold defines
         * (MPICH 5.0.2 returns from the fatal handler with INT_MIN). */
        int nmodes = mtest_is_manifold() ? 6 : 2;
        for (int i = 0; i < nmodes; i++) {
            int status = run_child(argv[0], modes[i], out, sizeof(out));
            MTEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0,
                        "%s: the child did not fail (status %#x)", modes[i], status);
            MTEST_CHECK(strstr(out, MARK) != NULL,
                        "%s: the line printed before the end was lost; the child said: %s",
                        modes[i], out);
            if (i >= 2)
                MTEST_CHECK(strstr(out, "not an MPI error code") != NULL,
                            "%s: the fatal error does not say the value is no error code: %s",
                            modes[i], out);
        }
        int status = run_child(argv[0], "init_thread", out, sizeof(out));
        int failed = !WIFEXITED(status) || WEXITSTATUS(status) != 0;
        int named = strstr(out, "MPI_Init_thread") != NULL && strstr(out, "required") != NULL;
        int initialised = strstr(out, "returned: initialised 1") != NULL;
        MTEST_CHECK(strstr(out, "returned: initialised 0") == NULL,
                    "MPI_Init_thread(required invalid) returned without initialising: %s", out);
        MTEST_CHECK((failed && named) || (!failed && initialised),
                    "MPI_Init_thread(required invalid): status %#x, output: %s", status, out);
        if (mtest_is_manifold())
            MTEST_CHECK(failed && named,
                        "MPI_Init_thread(required invalid) was not a fatal error naming the "
                        "call and the argument: %s",
                        out);
    }
    return mtest_finalize(0);
}
