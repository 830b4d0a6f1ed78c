/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Error classes and their strings. For every predefined class from MPI_SUCCESS to
 * MPI_ERR_ABI: MPI_Error_class gives the class itself (a class is also a valid code), and
 * MPI_Error_string succeeds with a NUL-terminated, non-empty message shorter than
 * MPI_MAX_ERROR_STRING whose length is the returned resultlen. The MPI_LASTUSEDCODE attribute
 * of MPI_COMM_WORLD is at least MPI_ERR_LASTCODE. Codes returned by real errors map to the
 * expected class and have a message. Manifold only: the messages of different classes are
 * all different (MPICH 5.0.2 reports several MPI-4 classes as "Unknown error class"); the tool
 * interface's return codes (MPI_T_ERR_*) are classes of their own with messages, and no code
 * of a real error takes one of their values (Manifold gave them the classes of the codes that
 * share their bits, and empty messages; MPICH 5.0.2's ABI build does too).
 */
#include <stdio.h>
#include <string.h>

#include "mtest.h"

#define NUM_CLASSES (MPI_ERR_ABI + 1)

static char g_strings[NUM_CLASSES][MPI_MAX_ERROR_STRING];

static void check_class(int error_class)
{
    char *text = g_strings[error_class];
    int got = -1, len = -1, rc;

    rc = MPI_Error_class(error_class, &got);
    MTEST_CHECK(rc == MPI_SUCCESS && got == error_class, "MPI_Error_class(%s) gives %d (rc %d)",
                mtest_error_class_name(error_class), got, rc);

    /* fill with non-zero bytes so a missing terminator is noticed */
    memset(text, 'x', MPI_MAX_ERROR_STRING);
    rc = MPI_Error_string(error_class, text, &len);
    MTEST_CHECK(rc == MPI_SUCCESS, "MPI_Error_string(%s) returned %d",
                mtest_error_class_name(error_class), rc);
    MTEST_CHECK(len > 0 && len < MPI_MAX_ERROR_STRING, "MPI_Error_string(%s): length %d",
                mtest_error_class_name(error_class), len);
    if (len <= 0 || len >= MPI_MAX_ERROR_STRING) {
        text[0] = '\0';
        return;
    }
    MTEST_CHECK(text[len] == '\0' && (int)strlen(text) == len,
                "MPI_Error_string(%s): resultlen %d does not match the string",
                mtest_error_class_name(error_class), len);
    text[MPI_MAX_ERROR_STRING - 1] = '\0';
}

static void check_distinct(void)
{
    for (int a = 0; a < NUM_CLASSES; a++) {
        for (int b = a + 1; b < NUM_CLASSES; b++) {
            MTEST_CHECK(strcmp(g_strings[a], g_strings[b]) != 0,
                        "%s and %s have the same message \"%s\"", mtest_error_class_name(a),
                        mtest_error_class_name(b), g_strings[a]);
        }
    }
}

static void check_lastusedcode(void)
{
    int *value = NULL, flag = 0;
    int rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &value, &flag);

    MTEST_CHECK(rc == MPI_SUCCESS && flag, "MPI_LASTUSEDCODE is not set on MPI_COMM_WORLD");
    if (rc == MPI_SUCCESS && flag && value != NULL)
        MTEST_CHECK(*value >= MPI_ERR_LASTCODE, "MPI_LASTUSEDCODE %d < MPI_ERR_LASTCODE %d", *value,
                    MPI_ERR_LASTCODE);
}

static void check_t_classes(void)
{
    char strings[MPI_T_ERR_PVAR_NO_ATOMIC - MPI_T_ERR_CANNOT_INIT + 1][MPI_MAX_ERROR_STRING];
    for (int c = MPI_T_ERR_CANNOT_INIT; c <= MPI_T_ERR_PVAR_NO_ATOMIC; c++) {
        int got = -1, len = -1, rc = MPI_Error_class(c, &got);
        MTEST_CHECK(rc == MPI_SUCCESS && got == c, "MPI_Error_class(%d) gives %d (rc %d)", c, got,
                    rc);
        char *text = strings[c - MPI_T_ERR_CANNOT_INIT];
        rc = MPI_Error_string(c, text, &len);
        MTEST_CHECK(rc == MPI_SUCCESS && len > 0 && (int)strlen(text) == len,
                    "MPI_Error_string(%d): rc %d, length %d", c, rc, len);
        for (int other = MPI_T_ERR_CANNOT_INIT; other < c; other++)
            MTEST_CHECK(strcmp(strings[other - MPI_T_ERR_CANNOT_INIT], text) != 0,
                        "MPI_T_ERR classes %d and %d have the same message", other, c);
    }
    /* Enough real errors to use every message slot: none takes a tool class's value. */
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    for (int i = 0; i < 600; i++) {
        int cls = -1, rc = MPI_Type_size(MPI_DATATYPE_NULL, &cls);
        MTEST_CHECK(rc < MPI_T_ERR_CANNOT_INIT || rc > MPI_T_ERR_PVAR_NO_ATOMIC,
                    "a real error's code %d is a tool interface class", rc);
        MPI_Error_class(rc, &cls);
        MTEST_CHECK(cls == MPI_ERR_TYPE, "code %d has class %d", rc, cls);
    }
    /* Integers no call can have returned are refused, not given a class (MPI_SUCCESS for a
     * non-zero one) and an empty string: the rest of the tool classes' slot, a slot on
     * MPI_SUCCESS's bits, and slots past the last one used. */
    const int impossible[] = {960, 961, 1000, 1019, 64, 16000, 16001};
    for (int i = 0; i < (int)(sizeof(impossible) / sizeof(impossible[0])); i++) {
        int cls = -1, len = -1;
        char text[MPI_MAX_ERROR_STRING];
        int rc = MPI_Error_class(impossible[i], &cls);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Error_class");
        rc = MPI_Error_string(impossible[i], text, &len);
        MTEST_CHECK_ERR(rc, MPI_ERR_ARG, "MPI_Error_string");
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

/* Codes from real failures: their class is right and they have a message. */
static void check_real_codes(void)
{
    int value = 0, size, rc;

    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    rc = MPI_Send(&value, 1, MPI_INT, size, 0, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_RANK, "MPI_Send");
    rc = MPI_Send(&value, 1, MPI_INT, 0, -5, MPI_COMM_WORLD);
    MTEST_CHECK_ERR(rc, MPI_ERR_TAG, "MPI_Send");
    rc = MPI_Comm_rank(MPI_COMM_NULL, &value);
    MTEST_CHECK_ERR(rc, MPI_ERR_COMM, "MPI_Comm_rank");
    rc = MPI_Type_size(MPI_DATATYPE_NULL, &value);
    MTEST_CHECK_ERR(rc, MPI_ERR_TYPE, "MPI_Type_size");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    for (int c = 0; c < NUM_CLASSES; c++)
        check_class(c);
    if (mtest_is_manifold()) {
        check_distinct();
        check_t_classes();
    }
    check_lastusedcode();
    check_real_codes();
    return mtest_finalize(0);
}
