/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_T control variables, enumerations, categories, events and sources, used before
 * MPI_Init, while MPI runs, and after MPI_Finalize; every error class of those calls.
 * Run with MANIFOLD_VCI_COUNT=4 in the environment.
 */
#include "mtest.h"

#include <stdio.h>
#include <string.h>

static int errs;

#define EXPECT(call, cls)                                                                          \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (cls)) {                                                                        \
            errs++;                                                                                \
            printf("%s:%d: %s returned %d, expected %s\n", __FILE__, __LINE__, #call, rc_, #cls);  \
        }                                                                                          \
    } while (0)

static int cvar_value(const char *name)
{
    int index, count, v = -1;
    MPI_T_cvar_handle h;
    EXPECT(MPI_T_cvar_get_index(name, &index), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_handle_alloc(index, NULL, &h, &count), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_read(h, &v), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    return v;
}

static void before_init(void)
{
    int provided, num;
    /* nothing works before MPI_T_init_thread */
    EXPECT(MPI_T_cvar_get_num(&num), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    EXPECT(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS); /* nested */
    EXPECT(MPI_T_finalize(), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_get_num(&num), MPI_SUCCESS);
    if (num < 10) {
        errs++;
        printf("only %d control variables\n", num);
    }
    /* the environment is visible before MPI_Init */
    int v = cvar_value("MANIFOLD_VCI_COUNT");
    if (v != 4) {
        errs++;
        printf("MANIFOLD_VCI_COUNT reads %d before MPI_Init, expected 4\n", v);
    }
    /* VCI_STATS may change, but only once MPI is initialised */
    int index, count, one = 1;
    MPI_T_cvar_handle h;
    EXPECT(MPI_T_cvar_get_index("MANIFOLD_VCI_STATS", &index), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_handle_alloc(index, NULL, &h, &count), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_write(h, &one), MPI_T_ERR_CVAR_SET_NOT_NOW);
    EXPECT(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    /* no performance variable exists before MPI_Init */
    MPI_T_pvar_session s;
    MPI_T_pvar_handle ph;
    EXPECT(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_handle_alloc(s, 0, NULL, &ph, &count), MPI_T_ERR_NOT_ACCESSIBLE);
    EXPECT(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
}

static void check_cvars(void)
{
    int num, index, count;
    EXPECT(MPI_T_cvar_get_num(&num), MPI_SUCCESS);
    /* names: the string-length convention */
    char name[256], desc[512];
    int name_len = 0;
    EXPECT(MPI_T_cvar_get_index("MANIFOLD_THREAD_CS", &index), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_get_info(index, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_SUCCESS);
    if (name_len != (int)strlen("MANIFOLD_THREAD_CS") + 1) {
        errs++;
        printf("name length query gave %d\n", name_len);
    }
    name_len = 5;
    EXPECT(MPI_T_cvar_get_info(index, name, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_SUCCESS);
    if (name_len != (int)strlen("MANIFOLD_THREAD_CS") + 1 || strcmp(name, "MANI") != 0) {
        errs++;
        printf("truncated name '%s' length %d\n", name, name_len);
    }
    int verbosity, bind, scope, desc_len = sizeof(desc);
    MPI_Datatype dt;
    MPI_T_enum e;
    name_len = sizeof(name);
    EXPECT(MPI_T_cvar_get_info(index, name, &name_len, &verbosity, &dt, &e, desc, &desc_len, &bind,
                               &scope),
           MPI_SUCCESS);
    if (strcmp(name, "MANIFOLD_THREAD_CS") != 0 || dt != MPI_INT || e == MPI_T_ENUM_NULL ||
        bind != MPI_T_BIND_NO_OBJECT || scope != MPI_T_SCOPE_READONLY || desc_len < 2) {
        errs++;
        printf("MANIFOLD_THREAD_CS info is wrong: %s\n", name);
    }
    /* the enumeration: vci, global */
    int nitems, value;
    name_len = sizeof(name);
    EXPECT(MPI_T_enum_get_info(e, &nitems, name, &name_len), MPI_SUCCESS);
    if (nitems != 2) {
        errs++;
        printf("enumeration %s has %d items\n", name, nitems);
    }
    name_len = sizeof(name);
    EXPECT(MPI_T_enum_get_item(e, 1, &value, name, &name_len), MPI_SUCCESS);
    if (value != 1 || strcmp(name, "global") != 0) {
        errs++;
        printf("item 1 is %d '%s'\n", value, name);
    }
    EXPECT(MPI_T_enum_get_item(e, 2, &value, name, &name_len), MPI_T_ERR_INVALID_ITEM);
    EXPECT(MPI_T_enum_get_item(e, -1, &value, name, &name_len), MPI_T_ERR_INVALID_ITEM);
    EXPECT(MPI_T_enum_get_info((MPI_T_enum)&errs, &nitems, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    if (cvar_value("MANIFOLD_THREAD_CS") != 0) {
        errs++;
        printf("MANIFOLD_THREAD_CS is not vci\n");
    }
    /* errors */
    MPI_T_cvar_handle h;
    EXPECT(MPI_T_cvar_get_info(num, name, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_info(-1, name, &name_len, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_index("MANIFOLD_NO_SUCH_THING", &index), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_cvar_get_index("VCI_COUNT", &index), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_cvar_handle_alloc(num, NULL, &h, &count), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_cvar_get_index("MANIFOLD_VCI_COUNT", &index), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_handle_alloc(index, NULL, &h, &count), MPI_SUCCESS);
    int four = 4;
    EXPECT(MPI_T_cvar_write(h, &four), MPI_T_ERR_CVAR_SET_NEVER);
    MPI_T_cvar_handle stale = h;
    EXPECT(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
    if (h != MPI_T_CVAR_HANDLE_NULL) {
        errs++;
        printf("freed cvar handle not set to MPI_T_CVAR_HANDLE_NULL\n");
    }
    EXPECT(MPI_T_cvar_read(stale, &value), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_cvar_handle_free(&stale), MPI_T_ERR_INVALID_HANDLE);
    /* a writable one: VCI_STATS in range, then out of range */
    EXPECT(MPI_T_cvar_get_index("MANIFOLD_VCI_STATS", &index), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_handle_alloc(index, NULL, &h, &count), MPI_SUCCESS);
    int zero = 0, bad = 7;
    EXPECT(MPI_T_cvar_write(h, &zero), MPI_SUCCESS);
    EXPECT(MPI_T_cvar_write(h, &bad), MPI_T_ERR_INVALID);
    EXPECT(MPI_T_cvar_read(h, &value), MPI_SUCCESS);
    if (value != 0) {
        errs++;
        printf("MANIFOLD_VCI_STATS reads %d after writing 0\n", value);
    }
    EXPECT(MPI_T_cvar_handle_free(&h), MPI_SUCCESS);
}

static void check_categories(void)
{
    int num, index, ncvars, npvars, ncats, nevents;
    char name[64];
    int name_len = sizeof(name);
    EXPECT(MPI_T_category_get_num(&num), MPI_SUCCESS);
    EXPECT(MPI_T_category_get_index("vci", &index), MPI_SUCCESS);
    EXPECT(MPI_T_category_get_info(index, name, &name_len, NULL, NULL, &ncvars, &npvars, &ncats),
           MPI_SUCCESS);
    if (strcmp(name, "vci") != 0 || ncvars < 5 || npvars < 7 || ncats != 0) {
        errs++;
        printf("category vci: %s %d cvars %d pvars %d categories\n", name, ncvars, npvars, ncats);
    }
    int cvars[64], count_idx, found = 0;
    EXPECT(MPI_T_cvar_get_index("MANIFOLD_VCI_COUNT", &count_idx), MPI_SUCCESS);
    EXPECT(MPI_T_category_get_cvars(index, 64, cvars), MPI_SUCCESS);
    for (int i = 0; i < ncvars && i < 64; i++)
        found |= cvars[i] == count_idx;
    if (!found) {
        errs++;
        printf("MANIFOLD_VCI_COUNT is not in category vci\n");
    }
    int pvars[64];
    EXPECT(MPI_T_category_get_pvars(index, 64, pvars), MPI_SUCCESS);
    EXPECT(MPI_T_category_get_num_events(index, &nevents), MPI_SUCCESS);
    EXPECT(MPI_T_category_get_events(index, 0, NULL), MPI_SUCCESS);
    if (nevents != 0) {
        errs++;
        printf("%d events\n", nevents);
    }
    int root, subs[8];
    EXPECT(MPI_T_category_get_index("manifold", &root), MPI_SUCCESS);
    EXPECT(MPI_T_category_get_info(root, NULL, NULL, NULL, NULL, NULL, NULL, &ncats), MPI_SUCCESS);
    EXPECT(MPI_T_category_get_categories(root, 8, subs), MPI_SUCCESS);
    found = 0;
    for (int i = 0; i < ncats && i < 8; i++)
        found |= subs[i] == index;
    if (ncats != num - 1 || !found) {
        errs++;
        printf("category manifold has %d subcategories\n", ncats);
    }
    int update;
    EXPECT(MPI_T_category_changed(&update), MPI_SUCCESS);
    EXPECT(MPI_T_category_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_category_get_cvars(-1, 0, NULL), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_category_get_index("nothing", &index), MPI_T_ERR_INVALID_NAME);
    /* no events and no sources */
    MPI_T_event_registration reg;
    EXPECT(MPI_T_event_get_num(&num), MPI_SUCCESS);
    EXPECT(MPI_T_source_get_num(&ncats), MPI_SUCCESS);
    if (num != 0 || ncats != 0) {
        errs++;
        printf("%d events %d sources\n", num, ncats);
    }
    EXPECT(
        MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
        MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_event_get_index("x", &index), MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_source_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
}

int main(int argc, char **argv)
{
    before_init();
    mtest_init(&argc, &argv);
    check_cvars();
    check_categories();
    MPI_Finalize();
    /* after MPI_Finalize: control variables still read, performance variables are gone */
    if (cvar_value("MANIFOLD_VCI_COUNT") != 4) {
        errs++;
        printf("MANIFOLD_VCI_COUNT after MPI_Finalize is wrong\n");
    }
    MPI_T_pvar_session s;
    MPI_T_pvar_handle ph;
    int count;
    EXPECT(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_handle_alloc(s, 0, NULL, &ph, &count), MPI_T_ERR_NOT_ACCESSIBLE);
    EXPECT(MPI_T_finalize(), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_session_free(&s), MPI_T_ERR_NOT_INITIALIZED);
    EXPECT(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    if (errs + mtest_error_count() == 0)
        printf(" No Errors\n");
    else
        printf(" Found %d errors\n", errs + mtest_error_count());
    return errs != 0;
}
