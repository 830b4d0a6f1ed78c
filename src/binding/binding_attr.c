/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Binding layer: attribute keys and communicator attributes (MPI-4.1 section 7.7):
 * MPI_Comm_create_keyval/free_keyval, MPI_Comm_set_attr/delete_attr (MPI_Comm_get_attr, which
 * also answers the predefined keys, is in binding_env.c), datatype keyvals and attributes
 * (predefined datatypes included; copied by MPI_Type_dup, deleted by MPI_Type_free), window
 * keyvals and attributes (MPI_Win_get_attr also answers the predefined keys), and the
 * deprecated MPI-1 forms. Datatype and window errors go to MPI_COMM_SELF's handler. An error
 * returned by a user callback is returned unchanged, through the communicator's error handler.
 */
#include "binding.h"
#include "rma.h"

#include <string.h>

/* The predefined keyvals: they can be read (MPI_Comm_get_attr) but never set, deleted or
 * freed. */
static int keyval_predefined(int keyval)
{
    return (keyval >= MPI_TAG_UB && keyval <= MPI_UNIVERSE_SIZE) ||
           (keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL);
}

static const char *kind_name(mf_keyval_kind_t kind)
{
    return kind == MF_KEYVAL_COMM ? "communicator" : kind == MF_KEYVAL_TYPE ? "datatype" : "window";
}

/* The keyval argument's name in `func`: "keyval" in the MPI-1 calls (MPI_Attr_*,
 * MPI_Keyval_*), "comm_keyval", "type_keyval" or "win_keyval" in the others. */
static const char *keyval_arg(const char *func, mf_keyval_kind_t kind)
{
    if (strncmp(func, "MPI_Attr_", 9) == 0 || strncmp(func, "MPI_Keyval_", 11) == 0)
        return "keyval";
    return kind == MF_KEYVAL_COMM   ? "comm_keyval"
           : kind == MF_KEYVAL_TYPE ? "type_keyval"
                                    : "win_keyval";
}

static int bad_keyval(const char *func, mf_comm_t *comm, mf_keyval_kind_t kind, int keyval)
{
    const char *why = keyval == MPI_KEYVAL_INVALID ? "is MPI_KEYVAL_INVALID"
                      : keyval_predefined(keyval)  ? "is predefined and cannot be changed"
                                                   : NULL;
    if (why != NULL)
        return mf_err_raise(comm, mf_err_code(MPI_ERR_KEYVAL, func, "argument %s=%d %s",
                                              keyval_arg(func, kind), keyval, why));
    return mf_err_raise(comm, mf_err_code(MPI_ERR_KEYVAL, func,
                                          "argument %s=%d is not a %s keyval (freed, of "
                                          "another object kind, or never created)",
                                          keyval_arg(func, kind), keyval, kind_name(kind)));
}

static int keyval_create(const char *func, mf_keyval_kind_t kind, void (*copy_fn)(void),
                         void (*delete_fn)(void), int *keyval, void *extra_state)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, keyval, keyval_arg(func, kind));
    if (rc != MPI_SUCCESS)
        return rc;
    mf_status_t status = mf_keyval_create(kind, copy_fn, delete_fn, extra_state, keyval);
    if (status == MF_ERR_EXHAUSTED)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func,
                                              "%d keyvals exist, the most there can be at once",
                                              MF_KEYVAL_KIND_STEP - 1));
    if (status != MF_OK)
        return mf_err_raise(NULL, mf_err_code(MPI_ERR_NO_MEM, func, "out of memory"));
    return MPI_SUCCESS;
}

static int keyval_free(const char *func, mf_keyval_kind_t kind, int *keyval)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, keyval, keyval_arg(func, kind));
    if (rc != MPI_SUCCESS)
        return rc;
    if (mf_keyval_free(kind, *keyval) != MF_OK)
        return bad_keyval(func, NULL, kind, *keyval);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

#pragma weak MPI_Comm_create_keyval = PMPI_Comm_create_keyval
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    return keyval_create("MPI_Comm_create_keyval", MF_KEYVAL_COMM,
                         (void (*)(void))comm_copy_attr_fn, (void (*)(void))comm_delete_attr_fn,
                         comm_keyval, extra_state);
}

#pragma weak MPI_Comm_free_keyval = PMPI_Comm_free_keyval
int PMPI_Comm_free_keyval(int *comm_keyval)
{
    return keyval_free("MPI_Comm_free_keyval", MF_KEYVAL_COMM, comm_keyval);
}

#pragma weak MPI_Type_create_keyval = PMPI_Type_create_keyval
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
    return keyval_create("MPI_Type_create_keyval", MF_KEYVAL_TYPE,
                         (void (*)(void))type_copy_attr_fn, (void (*)(void))type_delete_attr_fn,
                         type_keyval, extra_state);
}

#pragma weak MPI_Type_free_keyval = PMPI_Type_free_keyval
int PMPI_Type_free_keyval(int *type_keyval)
{
    return keyval_free("MPI_Type_free_keyval", MF_KEYVAL_TYPE, type_keyval);
}

#pragma weak MPI_Win_create_keyval = PMPI_Win_create_keyval
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state)
{
    return keyval_create("MPI_Win_create_keyval", MF_KEYVAL_WIN, (void (*)(void))win_copy_attr_fn,
                         (void (*)(void))win_delete_attr_fn, win_keyval, extra_state);
}

#pragma weak MPI_Win_free_keyval = PMPI_Win_free_keyval
int PMPI_Win_free_keyval(int *win_keyval)
{
    return keyval_free("MPI_Win_free_keyval", MF_KEYVAL_WIN, win_keyval);
}

/* Raise the error of a failed attribute operation: the callback's (its class, naming the
 * callback), or ours. */
static int attr_error_kind(const char *func, mf_comm_t *comm, mf_keyval_kind_t kind,
                           mf_status_t status, int cb_err)
{
    if (status == MF_ERR_OTHER && cb_err != MPI_SUCCESS)
        return mf_err_callback(comm, func, "an attribute's copy or delete callback", cb_err);
    if (status == MF_ERR_INVALID)
        return bad_keyval(func, comm, kind, 0);
    return mf_err_from_status(comm, status, func, "cannot cache the attribute");
}

static int attr_error(const char *func, mf_comm_t *comm, mf_status_t status, int cb_err)
{
    return attr_error_kind(func, comm, MF_KEYVAL_COMM, status, cb_err);
}

static int comm_attr_set(const char *func, MPI_Comm comm, int keyval, void *value)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm_local(func, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mf_keyval_valid(MF_KEYVAL_COMM, keyval, 0))
        return bad_keyval(func, c, MF_KEYVAL_COMM, keyval);
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_comm_attr_set(c, keyval, value, &cb_err);
    return status == MF_OK ? MPI_SUCCESS : attr_error(func, c, status, cb_err);
}

static int comm_attr_delete(const char *func, MPI_Comm comm, int keyval)
{
    mf_comm_t *c = NULL;
    int rc = mf_check_init_comm_local(func, comm, &c);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mf_keyval_valid(MF_KEYVAL_COMM, keyval, 1))
        return bad_keyval(func, c, MF_KEYVAL_COMM, keyval);
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_comm_attr_delete(c, keyval, &cb_err);
    /* Deleting an attribute that is not set is not an error (MPI-4.1 section 7.7.2). */
    if (status == MF_OK || status == MF_ERR_NOT_FOUND)
        return MPI_SUCCESS;
    return attr_error(func, c, status, cb_err);
}

#pragma weak MPI_Comm_set_attr = PMPI_Comm_set_attr
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return comm_attr_set("MPI_Comm_set_attr", comm, comm_keyval, attribute_val);
}

#pragma weak MPI_Comm_delete_attr = PMPI_Comm_delete_attr
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return comm_attr_delete("MPI_Comm_delete_attr", comm, comm_keyval);
}

/* ---- the deprecated MPI-1 forms --------------------------------------------------------- */

#pragma weak MPI_Keyval_create = PMPI_Keyval_create
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return keyval_create("MPI_Keyval_create", MF_KEYVAL_COMM, (void (*)(void))copy_fn,
                         (void (*)(void))delete_fn, keyval, extra_state);
}

#pragma weak MPI_Keyval_free = PMPI_Keyval_free
int PMPI_Keyval_free(int *keyval)
{
    return keyval_free("MPI_Keyval_free", MF_KEYVAL_COMM, keyval);
}

#pragma weak MPI_Attr_put = PMPI_Attr_put
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return comm_attr_set("MPI_Attr_put", comm, keyval, attribute_val);
}

#pragma weak MPI_Attr_delete = PMPI_Attr_delete
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return comm_attr_delete("MPI_Attr_delete", comm, keyval);
}

#pragma weak MPI_Attr_get = PMPI_Attr_get
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return mf_binding_comm_get_attr("MPI_Attr_get", "keyval", comm, keyval, attribute_val, flag);
}

int mf_binding_comm_copy_attrs(const char *func, mf_comm_t *parent, mf_comm_t *newcomm,
                               mf_request_t *agreement)
{
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_comm_attr_copy(parent, newcomm, &cb_err);
    if (status == MF_OK)
        return MPI_SUCCESS;
    /* The duplicate never reaches the user: undo the copies made so far and drop it. */
    int ignored = MPI_SUCCESS;
    if (mf_comm_attr_delete_all(newcomm, &ignored) != MF_OK)
        mf_log(MF_LOG_WARN, "attr", "%s: a delete callback failed while undoing a copy", func);
    if (agreement == NULL)
        mf_comm_free(newcomm);
    else
        mf_comm_idup_abandon(newcomm, agreement);
    return attr_error(func, parent, status, cb_err);
}

int mf_binding_comm_delete_attrs(const char *func, mf_comm_t *comm)
{
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_comm_attr_delete_all(comm, &cb_err);
    return status == MF_OK ? MPI_SUCCESS : attr_error(func, comm, status, cb_err);
}

/* ---- datatype attributes ------------------------------------------------------------------ */

/* A datatype that can hold attributes: any live derived type or valid predefined one. */
static int check_attr_type(const char *func, MPI_Datatype dt)
{
    mf_dtype_props_t p;
    if (mf_dtype_get(dt) != NULL || (mf_dtype_predefined(dt) != NULL && dt != MPI_DATATYPE_NULL &&
                                     mf_dtype_props(dt, &p) == MF_OK))
        return MPI_SUCCESS;
    return mf_err_raise(NULL, mf_err_code(MPI_ERR_TYPE, func, "argument datatype: %s",
                                          dt == MPI_DATATYPE_NULL
                                              ? "MPI_DATATYPE_NULL is not a datatype"
                                              : "not a valid datatype (freed or never created)"));
}

static int type_attr_args(const char *func, MPI_Datatype dt, int keyval, int attached_ok)
{
    int rc = mf_check_initialized(func);
    if (rc == MPI_SUCCESS)
        rc = check_attr_type(func, dt);
    if (rc == MPI_SUCCESS && !mf_keyval_valid(MF_KEYVAL_TYPE, keyval, attached_ok))
        rc = bad_keyval(func, NULL, MF_KEYVAL_TYPE, keyval);
    return rc;
}

#pragma weak MPI_Type_set_attr = PMPI_Type_set_attr
int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    static const char func[] = "MPI_Type_set_attr";
    int rc = type_attr_args(func, datatype, type_keyval, 0);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_attr_obj_t obj = mf_dtype_attr_obj(datatype);
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_attr_set(&obj, type_keyval, attribute_val, &cb_err);
    return status == MF_OK ? MPI_SUCCESS
                           : attr_error_kind(func, NULL, MF_KEYVAL_TYPE, status, cb_err);
}

#pragma weak MPI_Type_get_attr = PMPI_Type_get_attr
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    static const char func[] = "MPI_Type_get_attr";
    int rc = type_attr_args(func, datatype, type_keyval, 1);
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, attribute_val, "attribute_val");
    if (rc == MPI_SUCCESS)
        rc = mf_check_ptr(func, NULL, flag, "flag");
    if (rc != MPI_SUCCESS)
        return rc;
    mf_attr_obj_t obj = mf_dtype_attr_obj(datatype);
    void *value = NULL;
    *flag = mf_attr_get(&obj, type_keyval, &value);
    if (*flag)
        *(void **)attribute_val = value;
    return MPI_SUCCESS;
}

#pragma weak MPI_Type_delete_attr = PMPI_Type_delete_attr
int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    static const char func[] = "MPI_Type_delete_attr";
    int rc = type_attr_args(func, datatype, type_keyval, 1);
    if (rc != MPI_SUCCESS)
        return rc;
    mf_attr_obj_t obj = mf_dtype_attr_obj(datatype);
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_attr_delete(&obj, type_keyval, &cb_err);
    if (status == MF_OK || status == MF_ERR_NOT_FOUND)
        return MPI_SUCCESS;
    return attr_error_kind(func, NULL, MF_KEYVAL_TYPE, status, cb_err);
}

int mf_binding_type_copy_attrs(const char *func, MPI_Datatype oldtype, MPI_Datatype newtype)
{
    mf_attr_obj_t old = mf_dtype_attr_obj(oldtype), out = mf_dtype_attr_obj(newtype);
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_attr_copy(&old, &out, &cb_err);
    if (status == MF_OK)
        return MPI_SUCCESS;
    /* The duplicate never reaches the user: undo the copies made so far. The caller frees it. */
    int ignored = MPI_SUCCESS;
    if (mf_attr_delete_all(&out, &ignored) != MF_OK)
        mf_log(MF_LOG_WARN, "attr", "%s: a delete callback failed while undoing a copy", func);
    return attr_error_kind(func, NULL, MF_KEYVAL_TYPE, status, cb_err);
}

int mf_binding_type_delete_attrs(const char *func, MPI_Datatype datatype)
{
    mf_attr_obj_t obj = mf_dtype_attr_obj(datatype);
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_attr_delete_all(&obj, &cb_err);
    return status == MF_OK ? MPI_SUCCESS
                           : attr_error_kind(func, NULL, MF_KEYVAL_TYPE, status, cb_err);
}

/* ---- window attributes ------------------------------------------------------------------- */

static mf_attr_obj_t win_attr_obj(mf_win_t *w)
{
    return (mf_attr_obj_t){
        .kind = MF_KEYVAL_WIN, .handle = w, .list = &w->attrs, .lock = &w->name_lock};
}

/* A window's attribute errors: a keyval's through MPI_COMM_SELF like the other kinds', a
 * callback's through the window's handler. */
static int win_attr_error(const char *func, mf_win_t *w, mf_status_t status, int cb_err)
{
    if (status == MF_ERR_INVALID)
        return bad_keyval(func, NULL, MF_KEYVAL_WIN, 0);
    int code = status == MF_ERR_OTHER && cb_err != MPI_SUCCESS
                   ? cb_err
                   : mf_err_code(mf_err_class_of(status), func, "cannot cache the attribute: %s",
                                 mf_status_str(status));
    return mf_err_raise_win(w, code);
}

#pragma weak MPI_Win_set_attr = PMPI_Win_set_attr
int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    static const char func[] = "MPI_Win_set_attr";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mf_keyval_valid(MF_KEYVAL_WIN, win_keyval, 0))
        return bad_keyval(func, NULL, MF_KEYVAL_WIN, win_keyval);
    mf_attr_obj_t obj = win_attr_obj(w);
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_attr_set(&obj, win_keyval, attribute_val, &cb_err);
    return status == MF_OK ? MPI_SUCCESS : win_attr_error(func, w, status, cb_err);
}

#pragma weak MPI_Win_get_attr = PMPI_Win_get_attr
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    static const char func[] = "MPI_Win_get_attr";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (attribute_val == NULL || flag == NULL)
        return mf_err_raise_win(w, mf_err_code(MPI_ERR_ARG, func, "argument %s is NULL",
                                               flag == NULL ? "flag" : "attribute_val"));
    void *value = NULL;
    *flag = 1;
    switch (win_keyval) {
    case MPI_WIN_BASE: value = w->base; break;
    case MPI_WIN_SIZE: value = &w->attr_size; break;
    case MPI_WIN_DISP_UNIT: value = &w->attr_disp_unit; break;
    case MPI_WIN_CREATE_FLAVOR: value = &w->attr_flavor; break;
    case MPI_WIN_MODEL: value = &w->attr_model; break;
    default: {
        if (!mf_keyval_valid(MF_KEYVAL_WIN, win_keyval, 1)) {
            *flag = 0;
            return bad_keyval(func, NULL, MF_KEYVAL_WIN, win_keyval);
        }
        mf_attr_obj_t obj = win_attr_obj(w);
        *flag = mf_attr_get(&obj, win_keyval, &value);
    }
    }
    if (*flag)
        *(void **)attribute_val = value;
    return MPI_SUCCESS;
}

#pragma weak MPI_Win_delete_attr = PMPI_Win_delete_attr
int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    static const char func[] = "MPI_Win_delete_attr";
    mf_win_t *w = NULL;
    int rc = mf_check_win(func, win, &w);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!mf_keyval_valid(MF_KEYVAL_WIN, win_keyval, 1))
        return bad_keyval(func, NULL, MF_KEYVAL_WIN, win_keyval);
    mf_attr_obj_t obj = win_attr_obj(w);
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_attr_delete(&obj, win_keyval, &cb_err);
    if (status == MF_OK || status == MF_ERR_NOT_FOUND)
        return MPI_SUCCESS;
    return win_attr_error(func, w, status, cb_err);
}

int mf_binding_win_delete_attrs(const char *func, mf_win_t *w)
{
    mf_attr_obj_t obj = win_attr_obj(w);
    int cb_err = MPI_SUCCESS;
    mf_status_t status = mf_attr_delete_all(&obj, &cb_err);
    return status == MF_OK ? MPI_SUCCESS : win_attr_error(func, w, status, cb_err);
}
