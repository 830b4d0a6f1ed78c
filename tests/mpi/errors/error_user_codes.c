/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * User-defined error classes, codes and strings: MPI_Add_error_class gives a new class
 * beyond the predefined ones and not above MPI_LASTUSEDCODE, MPI_Add_error_code gives
 * distinct codes of that class, MPI_Add_error_string attaches messages that MPI_Error_string
 * returns verbatim, and MPI_Comm_call_errhandler passes such a code unchanged to a user
 * handler. The MPI-4.1 MPI_Remove_error_string/code/class calls undo it all, as often as a
 * library that adds its class at every initialisation and removes it at every finalisation
 * does (values once never came back: the 513th cycle failed). A string of exactly
 * MPI_MAX_ERROR_STRING characters is allowed (the terminator not counted), and
 * MPI_ERR_LASTCODE, listed with the classes, is a class and a code.
 */
#include <stdio.h>
#include <string.h>

#include "mtest.h"

#define CLASS_TEXT "user class for the error tests"
#define CODE_TEXT  "user code for the error tests"

static int g_calls, g_code;

static void code_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    g_calls++;
    g_code = *code;
}

static void check_string(int code, const char *expected)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = -1;
    int rc = MPI_Error_string(code, text, &len);

    MTEST_CHECK(rc == MPI_SUCCESS && len == (int)strlen(expected) && strcmp(text, expected) == 0,
                "MPI_Error_string(%d) gives \"%s\" (len %d), expected \"%s\"", code,
                rc == MPI_SUCCESS ? text : "", len, expected);
}

static void check_lastused_covers(int error_class)
{
    int *value = NULL, flag = 0;

    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &value, &flag);
    MTEST_CHECK(flag && value != NULL && *value >= error_class,
                "MPI_LASTUSEDCODE does not cover the new class %d", error_class);
}

/* Refused with MPI_ERR_ARG; Manifold's message names the argument (arg). */
static void check_remove_refused(const char *what, const char *arg, int rc)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int cls = -1, len;

    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, text, &len);
    }
    MTEST_CHECK(cls == MPI_ERR_ARG, "%s succeeded or gave class %d, expected MPI_ERR_ARG", what,
                cls);
    if (cls == MPI_ERR_ARG && mtest_is_manifold())
        MTEST_CHECK(strstr(text, arg) != NULL, "%s: the message does not name %s: %s", what, arg,
                    text);
}

/* Add and remove a class, a code and a string `cycles` times. */
static void check_reuse(int cycles)
{
    int i, rc = MPI_SUCCESS;

    for (i = 0; i < cycles && rc == MPI_SUCCESS; i++) {
        int cls = -1, code = -1;
        rc = MPI_Add_error_class(&cls);
        if (rc == MPI_SUCCESS)
            rc = MPI_Add_error_code(cls, &code);
        if (rc == MPI_SUCCESS)
            rc = MPI_Add_error_string(code, "a library's error");
        if (rc == MPI_SUCCESS)
            rc = MPI_Remove_error_string(code);
        if (rc == MPI_SUCCESS)
            rc = MPI_Remove_error_code(code);
        if (rc == MPI_SUCCESS)
            rc = MPI_Remove_error_class(cls);
    }
    MTEST_CHECK(rc == MPI_SUCCESS, "add/remove cycle %d of %d failed (%d)", i, cycles, rc);
}

/* A string of MPI_MAX_ERROR_STRING characters is accepted; MPI_Error_string gives what fits. */
static void check_longest_string(void)
{
    static char longest[MPI_MAX_ERROR_STRING + 1], text[MPI_MAX_ERROR_STRING];
    int cls = -1, len = -1;

    memset(longest, 'x', MPI_MAX_ERROR_STRING);
    MPI_Add_error_class(&cls);
    int rc = MPI_Add_error_string(cls, longest);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Add_error_string of %d characters returned %d",
                MPI_MAX_ERROR_STRING, rc);
    rc = MPI_Error_string(cls, text, &len);
    MTEST_CHECK(rc == MPI_SUCCESS && len >= 0 && len < MPI_MAX_ERROR_STRING &&
                    (int)strlen(text) == len && strncmp(text, longest, (size_t)len) == 0,
                "MPI_Error_string of the longest string: rc %d, len %d", rc, len);
    MPI_Remove_error_string(cls);
    MPI_Remove_error_class(cls);
}

static void check_lastcode(void)
{
    char text[MPI_MAX_ERROR_STRING];
    int cls = -1, len = -1;
    int rc = MPI_Error_class(MPI_ERR_LASTCODE, &cls);
    /* MPICH 5.0.2 gives another class */
    MTEST_CHECK(rc == MPI_SUCCESS && (cls == MPI_ERR_LASTCODE || !mtest_is_manifold()),
                "MPI_Error_class(MPI_ERR_LASTCODE): rc %d, class %d", rc, cls);
    rc = MPI_Error_string(MPI_ERR_LASTCODE, text, &len);
    MTEST_CHECK(rc == MPI_SUCCESS && len > 0, "MPI_Error_string(MPI_ERR_LASTCODE): rc %d", rc);
}

int main(int argc, char **argv)
{
    MPI_Errhandler eh;
    MPI_Comm comm;
    int new_class = -1, code1 = -1, code2 = -1, got = -1, rc;

    mtest_init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    rc = MPI_Add_error_class(&new_class);
    MTEST_CHECK(rc == MPI_SUCCESS && new_class > MPI_ERR_ABI, "MPI_Add_error_class: rc %d, %d", rc,
                new_class);
    MPI_Error_class(new_class, &got);
    MTEST_CHECK(got == new_class, "the new class maps to class %d", got);
    check_lastused_covers(new_class);
    {
        int *last = NULL, flag = 0;

        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
        MTEST_CHECK(flag && *last == new_class, "MPI_LASTUSEDCODE is %d, not the new class %d",
                    flag ? *last : -1, new_class);
    }

    rc = MPI_Add_error_code(new_class, &code1);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Add_error_code returned %d", rc);
    rc = MPI_Add_error_code(new_class, &code2);
    MTEST_CHECK(rc == MPI_SUCCESS, "second MPI_Add_error_code returned %d", rc);
    MTEST_CHECK(code1 != code2 && code1 != new_class && code1 > MPI_ERR_ABI && code2 > MPI_ERR_ABI,
                "codes %d and %d for class %d are not new and distinct", code1, code2, new_class);
    got = -1;
    MPI_Error_class(code1, &got);
    MTEST_CHECK(got == new_class, "code %d maps to class %d, expected %d", code1, got, new_class);
    got = -1;
    MPI_Error_class(code2, &got);
    MTEST_CHECK(got == new_class, "code %d maps to class %d, expected %d", code2, got, new_class);

    MTEST_CHECK(MPI_Add_error_string(new_class, CLASS_TEXT) == MPI_SUCCESS,
                "MPI_Add_error_string on the class failed");
    MTEST_CHECK(MPI_Add_error_string(code1, CODE_TEXT) == MPI_SUCCESS,
                "MPI_Add_error_string on the code failed");
    check_string(new_class, CLASS_TEXT);
    check_string(code1, CODE_TEXT);

    /* A user handler sees the user code as it was given. */
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_create_errhandler(code_handler, &eh);
    MPI_Comm_set_errhandler(comm, eh);
    rc = MPI_Comm_call_errhandler(comm, code2);
    MTEST_CHECK(rc == MPI_SUCCESS && g_calls == 1 && g_code == code2,
                "call_errhandler with a user code: rc %d, %d calls, code %d", rc, g_calls, g_code);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    rc = MPI_Comm_call_errhandler(comm, code1);
    MTEST_CHECK(rc == MPI_SUCCESS, "call_errhandler with MPI_ERRORS_RETURN returned %d", rc);
    MPI_Errhandler_free(&eh);
    MPI_Comm_free(&comm);

    /* MPI-4.1 section 9.5: a code or class with a string, or a class with codes, stays. */
    check_remove_refused("MPI_Remove_error_code", "errorcode", MPI_Remove_error_code(code1));
    check_remove_refused("MPI_Remove_error_class", "errorclass", MPI_Remove_error_class(new_class));

    rc = MPI_Remove_error_string(code1);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Remove_error_string returned %d", rc);
    rc = MPI_Remove_error_string(new_class);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Remove_error_string of the class returned %d", rc);
    rc = MPI_Remove_error_code(code1);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Remove_error_code returned %d", rc);
    check_remove_refused("MPI_Remove_error_class with a code left", "errorclass",
                         MPI_Remove_error_class(new_class));
    rc = MPI_Remove_error_code(code2);
    MTEST_CHECK(rc == MPI_SUCCESS, "second MPI_Remove_error_code returned %d", rc);
    check_remove_refused("MPI_Remove_error_code of a removed code", "errorcode",
                         MPI_Remove_error_code(code2));
    if (mtest_is_manifold()) /* MPICH 5.0.2: MPI_ERR_OTHER */
        check_remove_refused("MPI_Remove_error_string of a removed code", "errorcode",
                             MPI_Remove_error_string(code2));
    rc = MPI_Remove_error_class(new_class);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Remove_error_class returned %d", rc);

    check_reuse(2000);
    check_longest_string();
    check_lastcode();

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    return mtest_finalize(0);
}
