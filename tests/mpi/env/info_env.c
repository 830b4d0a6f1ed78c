/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_INFO_ENV (MPI-4.1 section 11.4): the keys this process can know hold what it sees itself:
 * "command" names this program, "argv" its arguments joined by spaces, "maxprocs" the world
 * size, "host" the host name, "arch" uname's machine, "wdir" the working directory,
 * "thread_level" the level MPI_Init_thread provided. Keys may be missing (the standard makes
 * them optional; MPICH 5.0.2 leaves most out), but a present key must be right. It can be read,
 * counted, walked and duplicated, never modified or freed (MPI_ERR_INFO). MPI_Init_thread
 * gets NULL argc/argv, so the library must find the command line itself. Run by hand with
 * arguments, "argv" must hold them. With MTEST_INFO_ENV_EARLY=1 the program counts the keys
 * before MPI_Init_thread (the info functions work then), which must not keep the job's keys
 * (maxprocs, thread_level) out of the object afterwards, and it also makes an object with
 * MPI_Info_create_env then, whose "maxprocs" must already be the world size on Manifold (the
 * launcher says it in PMI_SIZE).
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

static int get(const char *key, char *value)
{
    int flag = 0;
    int rc = MPI_Info_get(MPI_INFO_ENV, key, MPI_MAX_INFO_VAL - 1, value, &flag);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Info_get(MPI_INFO_ENV, %s) returned %d", key, rc);
    return flag;
}

int main(int argc, char **argv)
{
    char value[MPI_MAX_INFO_VAL], want[MPI_MAX_INFO_VAL], key[MPI_MAX_INFO_KEY];
    int provided, size, nkeys = -1, n2 = -1, rc;
    MPI_Info dup, early = MPI_INFO_NULL;
    const char *prog = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 : argv[0];

    if (getenv("MTEST_INFO_ENV_EARLY") != NULL) {
        MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys);
        MPI_Info_create_env(argc, argv, &early);
    }
    MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    if (get("command", value)) {
        const char *base = strrchr(value, '/') != NULL ? strrchr(value, '/') + 1 : value;
        MTEST_CHECK(strcmp(base, prog) == 0, "command is '%s', the program is '%s'", value, prog);
    }
    want[0] = '\0';
    for (int i = 1; i < argc; i++) {
        strncat(want, argv[i], sizeof(want) - strlen(want) - 2);
        if (i + 1 < argc)
            strcat(want, " ");
    }
    if (get("argv", value))
        MTEST_CHECK(strcmp(value, want) == 0, "argv is '%s', expected '%s'", value, want);
    else
        MTEST_CHECK(argc == 1 || !mtest_is_manifold(), "argv is missing (%d arguments)", argc - 1);
    if (get("maxprocs", value))
        MTEST_CHECK(atoi(value) >= size, "maxprocs is %s, the world has %d processes", value, size);
    gethostname(want, sizeof(want));
    if (get("host", value))
        MTEST_CHECK(strcmp(value, want) == 0, "host is '%s', expected '%s'", value, want);
    struct utsname u;
    uname(&u);
    if (get("arch", value))
        MTEST_CHECK(strcmp(value, u.machine) == 0, "arch is '%s', expected '%s'", value, u.machine);
    if (getcwd(want, sizeof(want)) != NULL && get("wdir", value))
        MTEST_CHECK(strcmp(value, want) == 0, "wdir is '%s', expected '%s'", value, want);
    const char *level = provided == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                        : provided == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                        : provided == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                                            : "MPI_THREAD_SINGLE";
    if (get("thread_level", value))
        MTEST_CHECK(strcmp(value, level) == 0, "thread_level is '%s', expected %s", value, level);
    if (early != MPI_INFO_NULL) {
        int flag = 0;
        MPI_Info_get(early, "maxprocs", MPI_MAX_INFO_VAL - 1, value, &flag);
        if (flag || mtest_is_manifold())
            MTEST_CHECK(flag && atoi(value) == size,
                        "MPI_Info_create_env before MPI_Init: maxprocs %s, the world has %d",
                        flag ? value : "missing", size);
        MPI_Info_free(&early);
    }
    if (mtest_is_manifold()) {
        const char *must[] = {"command", "maxprocs", "host", "arch", "wdir", "thread_level"};
        for (int i = 0; i < 6; i++)
            MTEST_CHECK(get(must[i], value), "MPI_INFO_ENV has no key %s", must[i]);
    }

    /* walk it and duplicate it */
    MPI_Info_get_nkeys(MPI_INFO_ENV, &nkeys);
    for (int i = 0; i < nkeys; i++) {
        rc = MPI_Info_get_nthkey(MPI_INFO_ENV, i, key);
        MTEST_CHECK(rc == MPI_SUCCESS && get(key, value), "key %d ('%s') cannot be read", i, key);
    }
    rc = MPI_Info_dup(MPI_INFO_ENV, &dup);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Info_dup(MPI_INFO_ENV) returned %d", rc);
    MPI_Info_get_nkeys(dup, &n2);
    MTEST_CHECK(n2 == nkeys, "the duplicate has %d keys, MPI_INFO_ENV %d", n2, nkeys);
    MPI_Info_set(dup, "command", "changed");
    MPI_Info_free(&dup);
    if (get("command", value))
        MTEST_CHECK(strcmp(value, "changed") != 0, "changing the duplicate changed the original");

    if (mtest_is_manifold()) {
        /* MPICH 5.0.2 lets MPI_INFO_ENV be modified */
        rc = MPI_Info_set(MPI_INFO_ENV, "command", "x");
        MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Info_set");
        rc = MPI_Info_delete(MPI_INFO_ENV, "command");
        MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Info_delete");
        dup = MPI_INFO_ENV;
        rc = MPI_Info_free(&dup);
        MTEST_CHECK_ERR(rc, MPI_ERR_INFO, "MPI_Info_free");
    }
    return mtest_finalize(mtest_error_count());
}
