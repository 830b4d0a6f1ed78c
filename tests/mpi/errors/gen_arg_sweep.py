# SPDX-License-Identifier: BSD-3-Clause
"""Generate the cases of the bad-argument sweep (errors/arg_sweep.c) from api/mpi_api.json.

Every function of the table that returns an error code is called once per bad argument, the
other arguments valid:

  null      an input handle (or the handle an in/out pointer points to, or the first element of
            an array of datatypes or requests) is its null handle;
  nullptr   a required output or in/out pointer is NULL;
  negative  a count, length or size is -1 (the first element of an array of counts);
  rank      a rank or root is the communicator's size (the first element of an array of ranks);
  negrank   a rank or root is -5, which no sentinel is;
  tag       a tag is -5;
  nullin    a required input array, string or callback is NULL.

The output is a C header of one wrapper per function, `static int sweep_<name>(int bad)`, which
makes the call with argument `bad` (a case number local to the function, 0: none) replaced, and
the table of cases with the error classes each may return. arg_sweep.c includes it and provides
the valid objects it names (g_*), the checks and the report.

What is not tried is said here, each with its reason: SKIP_FUNCTIONS (whole functions),
ALLOWED (bad values the standard gives a meaning, which must be accepted), SKIP_CASES (single
cases that need a state one process cannot set up). Functions that do not return an error code
(MPI_Wtime, MPI_Aint_add, the handle conversions) report no errors and are left out.
"""

import argparse
import json
import os
import re
import sys

# ---- what is not swept, and why ---------------------------------------------------------------

SKIP_FUNCTIONS = {
    "MPI_Init": "initialises the process; the sweep runs inside MPI_Init..MPI_Finalize",
    "MPI_Init_thread": "initialises the process; the sweep runs inside MPI_Init..MPI_Finalize",
    "MPI_Finalize": "ends MPI for the process",
    "MPI_Abort": "ends the job",
    "MPI_Comm_spawn": "a check that let a bad call through would start processes",
    "MPI_Comm_spawn_multiple": "a check that let a bad call through would start processes",
    "MPI_Comm_join": "needs a connected socket between two processes",
    "MPI_Pcontrol": "variadic, and no argument has an invalid value",
}

# Bad values the standard allows: (function or "*", parameter or "*", what) -> reason.
ALLOWED = {
    ("*", "info", "null"): "MPI_INFO_NULL is the empty set of hints wherever a call takes hints",
    ("MPI_Wait", "request", "null"): "MPI_REQUEST_NULL completes at once (MPI-4.1 section 3.7.3)",
    ("MPI_Test", "request", "null"): "MPI_REQUEST_NULL completes at once (MPI-4.1 section 3.7.3)",
    ("MPI_Request_get_status", "request", "null"): "MPI_REQUEST_NULL is complete "
    "(MPI-4.1 section 3.7.3)",
    ("MPI_File_set_errhandler", "file", "null"): "MPI_FILE_NULL's handler is the default of "
    "files (MPI-4.1 section 9.3)",
    ("MPI_File_get_errhandler", "file", "null"): "MPI_FILE_NULL's handler is the default of "
    "files (MPI-4.1 section 9.3)",
    ("MPI_Comm_get_name", "comm", "null"): "MPI-4.1 names the null handles (section 7.8)",
    ("MPI_Type_get_name", "datatype", "null"): "MPI-4.1 names the null handles (section 5.1.13)",
    ("MPI_Win_get_name", "win", "null"): "MPI-4.1 names the null handles (section 12.2.7)",
    ("MPI_Parrived", "request", "null"): "a null request has nothing to wait for: flag true "
    "(MPI-4.1 section 4.2.2)",
    ("MPI_Type_get_contents_c", "array_of_integers", "nullptr"): "the type the _c "
    "constructor made keeps its counts as large counts: no integer is written",
    ("MPI_Type_get_contents_c", "array_of_addresses", "nullptr"): "the type the _c "
    "constructor made keeps its stride as a large count: no address is written",
    ("MPI_File_call_errhandler", "fh", "null"): "MPI_FILE_NULL's handler is the one file "
    "errors without a file go to; MPICH 5.0.2 calls it too",
}
# MPI_REQUEST_NULL elements are ignored by the multiple completions (MPI-4.1 section 3.7.5)
for _f in ("Waitall", "Waitany", "Waitsome", "Testall", "Testany", "Testsome",
           "Request_get_status_all", "Request_get_status_any", "Request_get_status_some"):
    ALLOWED[("MPI_" + _f, "array_of_requests", "null")] = "MPI_REQUEST_NULL elements are " \
        "ignored by the multiple completions (MPI-4.1 section 3.7.5)"
# The tool interface's queries return what is asked for: a NULL output is not wanted
# (MPI-4.1 section 15.3.3 for strings; Manifold and MPICH 5.0.2 skip any NULL output).
TOOL_QUERIES = re.compile(r"^MPI_T_(category|cvar|pvar|enum|source|event)_get_(info|item)$")
# The Info calls work on an info object: MPI_INFO_NULL is no object there.
INFO_OBJECT_FUNCTIONS = re.compile(r"^MPI_Info_(delete|dup|free|get|get_nkeys|get_nthkey|"
                                   r"get_string|get_valuelen|set)$")

SKIP_CASES = {
    ("MPI_Intercomm_merge", "newintracomm"): "needs an intercommunicator, which one process "
    "cannot make",
    ("MPI_Comm_remote_group", "group"): "needs an intercommunicator",
    ("MPI_Comm_remote_size", "size"): "needs an intercommunicator",
}
# Tool event functions: Manifold has no events, so no registration or instance can exist and
# only their null-handle cases are meaningful; the others are listed as skipped.
EVENT_FUNCTIONS = re.compile(r"^MPI_T_event_(?!get_num$)")
NO_EVENTS = "needs a tool event, and the library has none"

# ---- handles ------------------------------------------------------------------------------------

HANDLES = {
    "MPI_Comm": ("MPI_COMM_NULL", ["MPI_ERR_COMM"]),
    "MPI_Datatype": ("MPI_DATATYPE_NULL", ["MPI_ERR_TYPE"]),
    "MPI_Group": ("MPI_GROUP_NULL", ["MPI_ERR_GROUP"]),
    "MPI_Op": ("MPI_OP_NULL", ["MPI_ERR_OP"]),
    "MPI_Info": ("MPI_INFO_NULL", ["MPI_ERR_INFO"]),
    # MPI-4.1 has no class for an invalid handler; MPI_ERR_ARG is what MPICH says
    "MPI_Errhandler": ("MPI_ERRHANDLER_NULL", ["MPI_ERR_ERRHANDLER", "MPI_ERR_ARG"]),
    "MPI_Win": ("MPI_WIN_NULL", ["MPI_ERR_WIN"]),
    "MPI_File": ("MPI_FILE_NULL", ["MPI_ERR_FILE"]),
    "MPI_Session": ("MPI_SESSION_NULL", ["MPI_ERR_SESSION"]),
    # a message handle has no class of its own; MPICH says MPI_ERR_REQUEST
    "MPI_Message": ("MPI_MESSAGE_NULL", ["MPI_ERR_REQUEST", "MPI_ERR_ARG"]),
    "MPI_Request": ("MPI_REQUEST_NULL", ["MPI_ERR_REQUEST"]),
    "MPI_T_cvar_handle": ("MPI_T_CVAR_HANDLE_NULL", None),
    "MPI_T_pvar_handle": ("MPI_T_PVAR_HANDLE_NULL", None),
    "MPI_T_pvar_session": ("MPI_T_PVAR_SESSION_NULL", None),
    "MPI_T_enum": ("MPI_T_ENUM_NULL", None),
    # no null constants: the handles are pointers
    "MPI_T_event_registration": ("(MPI_T_event_registration)NULL", None),
    "MPI_T_event_instance": ("(MPI_T_event_instance)NULL", None),
}

# Valid handles by type; functions and parameters below override them.
GOOD_HANDLE = {
    "MPI_Comm": "MPI_COMM_WORLD",
    "MPI_Datatype": "MPI_INT",
    "MPI_Group": "g_group",
    "MPI_Op": "MPI_SUM",
    "MPI_Info": "g_info",
    "MPI_Errhandler": "MPI_ERRORS_RETURN",
    "MPI_Win": "g_win",
    "MPI_File": "g_file",
    "MPI_Session": "g_session",
    "MPI_Message": "MPI_MESSAGE_NO_PROC",
    "MPI_Request": "g_preq",
    "MPI_T_cvar_handle": "g_cvar_handle",
    "MPI_T_pvar_handle": "g_pvar_handle",
    "MPI_T_pvar_session": "g_pvar_session",
    "MPI_T_enum": "g_enum",
    "MPI_T_event_registration": "g_event_registration",
    "MPI_T_event_instance": "g_event_instance",
}

# ---- counts, ranks, tags ------------------------------------------------------------------------

COUNT = ["MPI_ERR_COUNT"]
LENGTH = ["MPI_ERR_ARG", "MPI_ERR_COUNT"]  # lengths of arrays and sizes: the standard names none
NEGATIVE = {
    "POLYXFER_NUM_ELEM_NNI": COUNT,
    "XFER_NUM_ELEM_NNI": COUNT,
    "POLYDTYPE_NUM_ELEM_NNI": COUNT,
    "POLYXFER_NUM_ELEM": COUNT,
    "XFER_NUM_ELEM": COUNT,
    "ARRAY_LENGTH": LENGTH,
    "ARRAY_LENGTH_NNI": LENGTH,
    "ARRAY_LENGTH_PI": LENGTH,
    "POLYNUM_BYTES_NNI": LENGTH,
    "POLYDTYPE_PACK_SIZE": LENGTH,
    "POLYNUM_PARAM_VALUES": LENGTH,
    "POLYDTYPE_NUM_ELEM_PI": LENGTH + ["MPI_ERR_DIMS"],
    "DEGREE": LENGTH,
    "INFO_VALUE_LENGTH": LENGTH,
    "COMM_SIZE": LENGTH,
    "COMM_SIZE_PI": LENGTH,
    "NUM_DIMS": ["MPI_ERR_DIMS", "MPI_ERR_ARG"],
    "WINDOW_SIZE": ["MPI_ERR_SIZE", "MPI_ERR_ARG"],
    "WIN_ATTACH_SIZE": ["MPI_ERR_SIZE", "MPI_ERR_ARG"],
    "ALLOC_MEM_NUM_BYTES": ["MPI_ERR_SIZE", "MPI_ERR_ARG", "MPI_ERR_NO_MEM"],
    "POLYRMA_DISPLACEMENT": ["MPI_ERR_DISP", "MPI_ERR_ARG"],
}
# kinds that are counts only under these names (elsewhere the same kind is a stride or an index)
NEGATIVE_BY_NAME = {
    ("POLYDTYPE_NUM_ELEM", "incount"): COUNT,
    ("POLYDTYPE_NUM_ELEM", "outcount"): COUNT,
    ("PARTITION", "partitions"): LENGTH,
    # the starts of a subarray are indices: MPI_ERR_ARG is as good as MPI_ERR_COUNT
    ("POLYDTYPE_NUM_ELEM_NNI", "array_of_starts"): LENGTH,
    # the number of dimensions of a darray or subarray type
    ("ARRAY_LENGTH_PI", "ndims"): LENGTH + ["MPI_ERR_DIMS"],
}
# setters of status fields store any value
NOT_CHECKED = {("MPI_Status_set_source", "source"), ("MPI_Status_set_tag", "tag"),
               ("MPI_Status_set_elements", "count"), ("MPI_Status_set_elements_x", "count")}
RANK_KINDS = ("RANK", "RANK_NNI")

# NULL input arrays of these kinds mean something, or are not arrays the call reads.
NULL_INPUT_MEANS = {
    "BUFFER",  # MPI_BOTTOM
    "STATUS",  # MPI_STATUS_IGNORE
    "WEIGHT",  # MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are the special values; left alone
    "ARGUMENT_LIST",  # MPI_ARGV_NULL
}
# Callbacks for which the standard defines no null value (the attribute copy and delete
# callbacks' null ones are NULL in the ABI, the conversions' MPI_CONVERSION_FN_NULL).
NULL_CALLBACKS = {
    "MPI_Comm_errhandler_function *", "MPI_File_errhandler_function *",
    "MPI_Win_errhandler_function *", "MPI_Session_errhandler_function *",
    "MPI_User_function *", "MPI_User_function_c *", "MPI_Grequest_query_function *",
    "MPI_Grequest_free_function *", "MPI_Grequest_cancel_function *",
    "MPI_Datarep_extent_function *",
}
# Strings whose own classes a NULL may also raise.
NULLIN_CLASSES = {
    "filename": ["MPI_ERR_ARG", "MPI_ERR_BAD_FILE"],
    "datarep": ["MPI_ERR_ARG", "MPI_ERR_UNSUPPORTED_DATAREP"],
    "port_name": ["MPI_ERR_ARG", "MPI_ERR_PORT"],
    "service_name": ["MPI_ERR_ARG", "MPI_ERR_SERVICE", "MPI_ERR_NAME"],
    "key": ["MPI_ERR_ARG", "MPI_ERR_INFO_KEY"],
    "value": ["MPI_ERR_ARG", "MPI_ERR_INFO_VALUE"],
}

# ---- valid values -------------------------------------------------------------------------------

# Scalars by kind (a function's own values in GOOD below come first).
GOOD_SCALAR = {
    "POLYXFER_NUM_ELEM_NNI": "1", "XFER_NUM_ELEM_NNI": "1", "POLYDTYPE_NUM_ELEM_NNI": "1",
    "POLYXFER_NUM_ELEM": "1", "XFER_NUM_ELEM": "1", "POLYDTYPE_NUM_ELEM": "1",
    "ARRAY_LENGTH": "1", "ARRAY_LENGTH_NNI": "1", "ARRAY_LENGTH_PI": "1",
    "POLYNUM_BYTES_NNI": "64", "POLYDTYPE_PACK_SIZE": "64", "POLYNUM_PARAM_VALUES": "16",
    "DEGREE": "1", "INFO_VALUE_LENGTH": "64", "COMM_SIZE": "g_size", "COMM_SIZE_PI": "g_size",
    "NUM_DIMS": "1", "WINDOW_SIZE": "64", "WIN_ATTACH_SIZE": "64", "ALLOC_MEM_NUM_BYTES": "64",
    "POLYRMA_DISPLACEMENT": "1", "RANK": "g_rank", "RANK_NNI": "g_rank", "TAG": "0",
    "ACCESS_MODE": "MPI_MODE_RDWR", "ASSERT": "0", "CALLBACK_SAFETY": "MPI_T_CB_REQUIRE_NONE",
    "CAT_INDEX": "0", "CVAR_INDEX": "0", "CVAR_INDEX_SPECIAL": "0", "PVAR_INDEX": "0",
    "EVENT_INDEX": "0", "SOURCE_INDEX": "0", "TOOLENUM_INDEX": "0", "PVAR_CLASS":
    "MPI_T_PVAR_CLASS_COUNTER", "COLOR": "0", "KEY": "0", "DIMENSION": "1", "INDEX": "0",
    "ERROR_CODE": "MPI_ERR_OTHER", "ERROR_CLASS": "g_user_class", "FILE_DESCRIPTOR": "-1",
    "KEY_INDEX": "0", "LOCK_TYPE": "MPI_LOCK_SHARED",
    "LOGICAL": "0", "MATH": "6", "OFFSET": "0", "ORDER": "MPI_ORDER_C", "PARTITION": "0",
    "RMA_DISPLACEMENT_NNI": "0", "SPLIT_TYPE": "MPI_COMM_TYPE_SHARED",
    "THREAD_LEVEL": "MPI_THREAD_SINGLE", "TOOL_MPI_OBJ": "NULL", "TYPECLASS":
    "MPI_TYPECLASS_INTEGER", "TYPECLASS_SIZE": "4", "UPDATE_MODE": "MPI_SEEK_SET",
    "EXTRA_STATE": "NULL", "EXTRA_STATE2": "NULL", "POLYDTYPE_STRIDE_BYTES": "4",
    "POLYDISPLACEMENT_AINT_COUNT": "0", "DISPLACEMENT": "0", "ATTRIBUTE_VAL": "(void *)g_sbuf",
    "ATTRIBUTE_VAL_10": "(void *)g_sbuf", "LOGICAL_VOID": "g_sbuf", "PROFILE_LEVEL": "0",
    "ARGUMENT_COUNT": "0",
}

# Callbacks by type.
GOOD_FUNCTION = {
    "MPI_Comm_copy_attr_function *": "MPI_COMM_NULL_COPY_FN",
    "MPI_Comm_delete_attr_function *": "MPI_COMM_NULL_DELETE_FN",
    "MPI_Type_copy_attr_function *": "MPI_TYPE_NULL_COPY_FN",
    "MPI_Type_delete_attr_function *": "MPI_TYPE_NULL_DELETE_FN",
    "MPI_Win_copy_attr_function *": "MPI_WIN_NULL_COPY_FN",
    "MPI_Win_delete_attr_function *": "MPI_WIN_NULL_DELETE_FN",
    "MPI_Copy_function *": "MPI_NULL_COPY_FN",
    "MPI_Delete_function *": "MPI_NULL_DELETE_FN",
    "MPI_Comm_errhandler_function *": "sweep_comm_errh",
    "MPI_File_errhandler_function *": "sweep_file_errh",
    "MPI_Win_errhandler_function *": "sweep_win_errh",
    "MPI_Session_errhandler_function *": "sweep_session_errh",
    "MPI_User_function *": "sweep_user_op",
    "MPI_User_function_c *": "sweep_user_op_c",
    "MPI_Grequest_query_function *": "sweep_greq_query",
    "MPI_Grequest_free_function *": "sweep_greq_free",
    "MPI_Grequest_cancel_function *": "sweep_greq_cancel",
    "MPI_Datarep_conversion_function *": "MPI_CONVERSION_FN_NULL",
    "MPI_Datarep_conversion_function_c *": "MPI_CONVERSION_FN_NULL_C",
    "MPI_Datarep_extent_function *": "sweep_datarep_extent",
    "MPI_T_event_cb_function *": "sweep_event_cb",
    "MPI_T_event_dropped_cb_function *": "sweep_event_dropped",
    "MPI_T_event_free_cb_function *": "sweep_event_free",
}

# Per function (the name without _c), per parameter: a valid value other than the default.
COMM_KEYVAL = {"comm_keyval": "g_comm_keyval"}
ATTR_KEYVAL = {"keyval": "g_comm_keyval"}
RMA_EPOCH = {"win": "g_win_epoch"}
GOOD = {
    "MPI_Attr_delete": ATTR_KEYVAL, "MPI_Attr_get": ATTR_KEYVAL, "MPI_Attr_put": ATTR_KEYVAL,
    "MPI_Comm_delete_attr": COMM_KEYVAL, "MPI_Comm_get_attr": COMM_KEYVAL,
    "MPI_Comm_set_attr": COMM_KEYVAL,
    "MPI_Type_delete_attr": {"datatype": "g_vec", "type_keyval": "g_type_keyval"},
    "MPI_Type_get_attr": {"datatype": "g_vec", "type_keyval": "g_type_keyval"},
    "MPI_Type_set_attr": {"datatype": "g_vec", "type_keyval": "g_type_keyval"},
    "MPI_Win_delete_attr": {"win_keyval": "g_win_keyval"},
    "MPI_Win_get_attr": {"win_keyval": "g_win_keyval"},
    "MPI_Win_set_attr": {"win_keyval": "g_win_keyval"},
    "MPI_Type_get_contents": {"datatype": "g_hvec"},
    "MPI_Type_get_contents_c": {"datatype": "g_hvec_c"},
    "MPI_Type_get_envelope": {"datatype": "g_vec"},
    "MPI_Type_set_name": {"datatype": "g_vec", "type_name": '"sweep"'},
    "MPI_Type_get_value_index": {"value_type": "MPI_FLOAT"},
    "MPI_Type_create_f90_integer": {"r": "4"},
    "MPI_Type_create_f90_real": {"r": "30"},
    "MPI_Type_create_f90_complex": {"r": "30"},
    "MPI_Type_create_resized": {"extent": "4"},
    "MPI_Type_create_subarray": {"array_of_starts": "zeros"},
    "MPI_Type_create_darray": {"array_of_gsizes": "darray_gsizes",
                               "array_of_distribs": "g_darray_distribs",
                               "array_of_dargs": "g_darray_dargs",
                               "array_of_psizes": "g_darray_psizes"},
    "MPI_Comm_call_errhandler": {"errorcode": "g_user_code"},
    "MPI_Win_call_errhandler": {"errorcode": "g_user_code"},
    "MPI_File_call_errhandler": {"errorcode": "g_user_code"},
    "MPI_Session_call_errhandler": {"errorcode": "g_user_code"},
    "MPI_Add_error_string": {"errorcode": "g_user_code"},
    "MPI_Comm_set_name": {"comm_name": '"sweep"'},
    "MPI_Win_set_name": {"win_name": '"sweep"'},
    "MPI_Info_delete": {"key": '"sweep_key"'},
    "MPI_Info_get": {"key": '"sweep_key"'},
    "MPI_Info_get_string": {"key": '"sweep_key"'},
    "MPI_Info_get_valuelen": {"key": '"sweep_key"'},
    "MPI_Info_set": {"key": '"sweep_key"', "value": '"sweep_value"'},
    "MPI_Info_create_env": {"argv": "NULL"},
    "MPI_Op_commutative": {"op": "g_op"},
    "MPI_Op_create": {"commute": "1"},
    # topologies
    "MPI_Cart_coords": {"comm": "g_cart"},
    "MPI_Cart_get": {"comm": "g_cart"},
    "MPI_Cart_rank": {"comm": "g_cart", "coords": "zeros"},
    "MPI_Cart_shift": {"comm": "g_cart"},
    "MPI_Cart_sub": {"comm": "g_cart", "remain_dims": "ones"},
    "MPI_Cartdim_get": {"comm": "g_cart"},
    "MPI_Cart_create": {"dims": "g_dims", "periods": "ones"},
    "MPI_Cart_map": {"dims": "g_dims", "periods": "ones"},
    "MPI_Dims_create": {"dims": "s_dims"},
    "MPI_Graph_create": {"index": "g_graph_index", "edges": "g_graph_edges"},
    "MPI_Graph_map": {"nnodes": "g_size", "index": "g_graph_index", "edges": "g_graph_edges"},
    "MPI_Graph_get": {"comm": "g_graph", "maxindex": "16", "maxedges": "16"},
    "MPI_Graph_neighbors": {"comm": "g_graph", "maxneighbors": "16"},
    "MPI_Graph_neighbors_count": {"comm": "g_graph"},
    "MPI_Graphdims_get": {"comm": "g_graph"},
    "MPI_Dist_graph_create": {"sources": "g_self_rank", "destinations": "g_self_rank",
                              "weights": "ones", "degrees": "ones"},
    "MPI_Dist_graph_create_adjacent": {"sources": "g_self_rank", "sourceweights": "ones",
                                       "destinations": "g_self_rank", "destweights": "ones"},
    "MPI_Dist_graph_neighbors": {"comm": "g_dgraph", "maxindegree": "1", "maxoutdegree": "1"},
    "MPI_Dist_graph_neighbors_count": {"comm": "g_dgraph"},
    "MPI_Topo_test": {"comm": "g_cart"},
    # point to point: receive from MPI_PROC_NULL, so a call let through returns at once
    "MPI_Recv": {"source": "MPI_PROC_NULL"}, "MPI_Irecv": {"source": "MPI_PROC_NULL"},
    "MPI_Recv_init": {"source": "MPI_PROC_NULL"},
    "MPI_Sendrecv": {"source": "MPI_PROC_NULL", "dest": "MPI_PROC_NULL"},
    "MPI_Isendrecv": {"source": "MPI_PROC_NULL", "dest": "MPI_PROC_NULL"},
    "MPI_Sendrecv_replace": {"source": "MPI_PROC_NULL", "dest": "MPI_PROC_NULL"},
    "MPI_Isendrecv_replace": {"source": "MPI_PROC_NULL", "dest": "MPI_PROC_NULL"},
    "MPI_Probe": {"source": "MPI_PROC_NULL"}, "MPI_Iprobe": {"source": "MPI_PROC_NULL"},
    "MPI_Mprobe": {"source": "MPI_PROC_NULL"}, "MPI_Improbe": {"source": "MPI_PROC_NULL"},
    "MPI_Precv_init": {"source": "MPI_PROC_NULL", "partitions": "1"},
    "MPI_Psend_init": {"dest": "MPI_PROC_NULL", "partitions": "1"},
    "MPI_Startall": {"array_of_requests": "s_requests"},
    "MPI_Pready": {"request": "g_psend"}, "MPI_Pready_range": {"request": "g_psend"},
    "MPI_Pready_list": {"request": "g_psend", "array_of_partitions": "zeros"},
    "MPI_Parrived": {"request": "g_precv"},
    "MPI_Grequest_complete": {"request": "g_greq"},
    "MPI_Get_count": {"status": "&g_status"}, "MPI_Get_elements": {"status": "&g_status"},
    "MPI_Get_elements_x": {"status": "&g_status"},
    "MPI_Test_cancelled": {"status": "&g_status"},
    "MPI_Status_get_error": {"status": "&g_status"},
    "MPI_Status_get_source": {"status": "&g_status"},
    "MPI_Status_get_tag": {"status": "&g_status"},
    "MPI_Buffer_attach": {"buffer": "g_bsend_buf"},
    "MPI_Comm_attach_buffer": {"buffer": "g_bsend_buf"},
    "MPI_Session_attach_buffer": {"buffer": "g_bsend_buf"},
    "MPI_Pack_external": {"datarep": '"external32"'},
    "MPI_Unpack_external": {"datarep": '"external32"'},
    "MPI_Pack_external_size": {"datarep": '"external32"'},
    "MPI_Get_address": {"location": "g_sbuf"},
    # collective communication: every rank's blocks at their own offset
    "MPI_Gatherv": {"displs": "iota"}, "MPI_Igatherv": {"displs": "iota"},
    "MPI_Gatherv_init": {"displs": "iota"},
    "MPI_Allgatherv": {"displs": "iota"}, "MPI_Iallgatherv": {"displs": "iota"},
    "MPI_Allgatherv_init": {"displs": "iota"},
    "MPI_Scatterv": {"displs": "iota"}, "MPI_Iscatterv": {"displs": "iota"},
    "MPI_Scatterv_init": {"displs": "iota"},
    "MPI_Alltoallv": {"sdispls": "iota", "rdispls": "iota"},
    "MPI_Ialltoallv": {"sdispls": "iota", "rdispls": "iota"},
    "MPI_Alltoallv_init": {"sdispls": "iota", "rdispls": "iota"},
    "MPI_Alltoallw": {"sdispls": "iota4", "rdispls": "iota4"},
    "MPI_Ialltoallw": {"sdispls": "iota4", "rdispls": "iota4"},
    "MPI_Alltoallw_init": {"sdispls": "iota4", "rdispls": "iota4"},
    "MPI_Neighbor_allgather": {"comm": "g_cart"}, "MPI_Ineighbor_allgather": {"comm": "g_cart"},
    "MPI_Neighbor_allgather_init": {"comm": "g_cart"},
    "MPI_Neighbor_allgatherv": {"comm": "g_cart", "displs": "iota"},
    "MPI_Ineighbor_allgatherv": {"comm": "g_cart", "displs": "iota"},
    "MPI_Neighbor_allgatherv_init": {"comm": "g_cart", "displs": "iota"},
    "MPI_Neighbor_alltoall": {"comm": "g_cart"}, "MPI_Ineighbor_alltoall": {"comm": "g_cart"},
    "MPI_Neighbor_alltoall_init": {"comm": "g_cart"},
    "MPI_Neighbor_alltoallv": {"comm": "g_cart", "sdispls": "iota", "rdispls": "iota"},
    "MPI_Ineighbor_alltoallv": {"comm": "g_cart", "sdispls": "iota", "rdispls": "iota"},
    "MPI_Neighbor_alltoallv_init": {"comm": "g_cart", "sdispls": "iota", "rdispls": "iota"},
    "MPI_Neighbor_alltoallw": {"comm": "g_cart", "sdispls": "iota4", "rdispls": "iota4"},
    "MPI_Ineighbor_alltoallw": {"comm": "g_cart", "sdispls": "iota4", "rdispls": "iota4"},
    "MPI_Neighbor_alltoallw_init": {"comm": "g_cart", "sdispls": "iota4", "rdispls": "iota4"},
    "MPI_Reduce_local": {"inoutbuf": "g_rbuf"},
    "MPI_Compare_and_swap": {"compare_addr": "g_cbuf", "result_addr": "g_rbuf", "win":
                             "g_win_epoch"},
    "MPI_Fetch_and_op": {"result_addr": "g_rbuf", "win": "g_win_epoch"},
    "MPI_Get_accumulate": {"result_addr": "g_rbuf", "win": "g_win_epoch"},
    "MPI_Rget_accumulate": {"result_addr": "g_rbuf", "win": "g_win_epoch"},
    "MPI_Put": RMA_EPOCH, "MPI_Get": RMA_EPOCH, "MPI_Accumulate": RMA_EPOCH,
    "MPI_Rput": RMA_EPOCH, "MPI_Rget": RMA_EPOCH, "MPI_Raccumulate": RMA_EPOCH,
    "MPI_Win_flush": RMA_EPOCH, "MPI_Win_flush_all": RMA_EPOCH,
    "MPI_Win_flush_local": RMA_EPOCH, "MPI_Win_flush_local_all": RMA_EPOCH,
    "MPI_Win_unlock": {"win": "g_win_locked"},
    "MPI_Win_unlock_all": RMA_EPOCH,
    "MPI_Win_attach": {"win": "g_dynwin", "base": "g_attach_buf"},
    "MPI_Win_detach": {"win": "g_dynwin", "base": "g_attach_buf"},
    "MPI_Win_shared_query": {"win": "g_shwin", "rank": "0"},  # a window of MPI_COMM_SELF
    "MPI_Win_create": {"base": "g_wbuf"},
    # files
    "MPI_File_open": {"comm": "MPI_COMM_SELF", "filename": "g_path2",
                      "amode": "MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_DELETE_ON_CLOSE"},
    "MPI_File_delete": {"filename": "g_path2"},
    "MPI_File_set_view": {"datarep": '"native"'},
    # sessions, dynamic processes, tools
    "MPI_Group_from_session_pset": {"pset_name": '"mpi://SELF"'},
    "MPI_Session_get_pset_info": {"pset_name": '"mpi://SELF"'},
    "MPI_Comm_create_from_group": {"stringtag": '"sweep"'},
    "MPI_Intercomm_create_from_groups": {"stringtag": '"sweep"', "local_leader": "0",
                                         "remote_leader": "0"},
    "MPI_Intercomm_create": {"local_comm": "MPI_COMM_SELF", "local_leader": "0",
                             "remote_leader": "g_peer"},
    "MPI_Comm_accept": {"port_name": "g_port", "root": "0"},
    "MPI_Comm_connect": {"port_name": "g_port", "root": "0"},
    "MPI_Close_port": {"port_name": "g_port"},
    "MPI_Publish_name": {"service_name": '"sweep"', "port_name": "g_port"},
    "MPI_Unpublish_name": {"service_name": '"sweep"', "port_name": "g_port"},
    "MPI_Lookup_name": {"service_name": '"sweep"'},
    "MPI_T_cvar_get_index": {"name": "g_cvar_name"},
    "MPI_T_pvar_get_index": {"name": "g_pvar_name", "var_class": "g_pvar_class"},
    "MPI_T_category_get_index": {"name": "g_cat_name"},
    "MPI_T_event_get_index": {"name": '"sweep"'},
    "MPI_T_cvar_handle_alloc": {"obj_handle": "&g_world"},
    "MPI_T_pvar_handle_alloc": {"obj_handle": "&g_world"},
    "MPI_T_event_handle_alloc": {"obj_handle": "&g_world"},
    "MPI_T_cvar_read": {"buf": "g_rbuf"}, "MPI_T_cvar_write": {"buf": "g_cvar_value"},
    "MPI_T_pvar_write": {"buf": "g_rbuf"},
    "MPI_Abi_set_fortran_booleans": {"logical_true": "g_ftrue", "logical_false": "g_ffalse"},
}

# Code run before and after the call of a function (a call let through is undone after).
AROUND = {
    "MPI_Buffer_detach": ("MPI_Buffer_attach(g_bsend_buf, 1024);",
                          "sweep_buffer_detach_any();"),
    "MPI_Buffer_attach": ("", "sweep_buffer_detach_any();"),
    "MPI_Comm_detach_buffer": ("MPI_Comm_attach_buffer(MPI_COMM_WORLD, g_bsend_buf, 1024);",
                               "sweep_comm_detach_any();"),
    "MPI_Comm_attach_buffer": ("", "sweep_comm_detach_any();"),
    "MPI_Session_detach_buffer": ("MPI_Session_attach_buffer(g_session, g_bsend_buf, 1024);",
                                  "sweep_session_detach_any();"),
    "MPI_Session_attach_buffer": ("", "sweep_session_detach_any();"),
    "MPI_Win_attach": ("", "MPI_Win_detach(g_dynwin, g_attach_buf);"),
}

# ---- parameters -------------------------------------------------------------------------------

# arg_sweep.c's arrays that exist for int, MPI_Count and MPI_Aint elements (ones_i, ones_c, ...)
TYPED_ARRAYS = ("ones", "zeros", "iota", "iota4", "darray_gsizes")
# Array types by element type: the valid array is <name>_<suffix> in arg_sweep.c.
SUFFIX = {"int": "i", "MPI_Count": "c", "MPI_Aint": "a"}


def base_name(name):
    return name[:-2] if name.endswith("_c") else name


def strip_const(ctype):
    return ctype.replace("const ", "").strip()


def pointee(ctype):
    """The element type of a pointer parameter ("int *" -> "int")."""
    t = strip_const(ctype)
    assert t.endswith("*"), ctype
    return t[:-1].strip()


class Param:
    def __init__(self, fn, p):
        self.fn = fn
        self.name = p["name"]
        self.kind = p["kind"]
        self.dir = p["direction"]
        self.ctype = p["type"]
        self.array = p["array"] is not None
        self.tool = fn["tool"] or fn["name"].startswith("MPI_T_")


def override(fname, pname):
    if fname in GOOD and pname in GOOD[fname]:
        return GOOD[fname][pname]
    return GOOD.get(base_name(fname), {}).get(pname)


def typed_array(name, elem):
    """One of arg_sweep.c's arrays (ones, zeros, iota, ...) for elements of type elem."""
    suffix = SUFFIX.get(elem)
    if suffix is None:
        raise ValueError("no %s array of %s" % (name, elem))
    return "%s_%s" % (name, suffix)


class Unhandled(Exception):
    pass


def valid_in(fname, p):
    """A valid value for an input parameter passed by value or through a const pointer."""
    o = override(fname, p.name)
    t = strip_const(p.ctype)
    if o is not None and o in TYPED_ARRAYS:
        return typed_array(o, pointee(t))
    if o is not None:
        return o
    if t in HANDLES and not p.array:
        return GOOD_HANDLE[t]
    if t.endswith("_function *") or t.endswith("_function_c *"):
        return GOOD_FUNCTION[t]
    if p.kind == "BUFFER":
        return "g_sbuf"
    if p.kind == "STRING":
        return '"sweep"'
    if t == "int (*)[3]":
        return "g_ranges"
    if t.endswith("*") and p.array or t.endswith("*") and p.kind in (
            "DIMENSION", "COORDINATE", "RANK", "RANK_NNI", "WEIGHT", "DEGREE", "INDEX",
            "PARTITION", "LOGICAL", "POLYDISPLACEMENT", "DISPLACEMENT", "COMM_SIZE",
            "POLYDISPLACEMENT_COUNT", "POLYDISPLACEMENT_AINT_COUNT", "PROCESS_GRID_SIZE",
            "DISTRIB_ENUM", "DTYPE_DISTRIBUTION", "POLYXFER_NUM_ELEM_NNI",
            "POLYDTYPE_NUM_ELEM_NNI", "POLYDTYPE_NUM_ELEM_PI", "STATUS"):
        elem = pointee(t)
        if elem == "MPI_Datatype":
            return "g_types"
        if elem == "MPI_Request":
            return "g_null_requests"
        if elem == "MPI_Info":
            return "g_infos"
        if elem == "MPI_Status":
            return "&g_status"
        if p.kind in ("POLYDISPLACEMENT", "DISPLACEMENT", "POLYDISPLACEMENT_COUNT",
                      "POLYDISPLACEMENT_AINT_COUNT", "COORDINATE", "LOGICAL", "PARTITION"):
            return typed_array("zeros", elem)
        if p.kind in ("RANK", "RANK_NNI"):
            return "g_self_rank"
        return typed_array("ones", elem)
    if p.kind in GOOD_SCALAR:
        return GOOD_SCALAR[p.kind]
    raise Unhandled("%s: no valid value for %s (%s, %s)" % (fname, p.name, p.kind, p.ctype))


def storage(fname, p, decls):
    """A valid pointer for an out or in/out parameter, declaring what it points to."""
    o = override(fname, p.name)
    t = strip_const(p.ctype)
    if p.kind == "BUFFER":
        return o or "g_rbuf"
    if p.kind in ("LOGICAL_VOID",):
        return "g_rbuf"
    if t == "void *":  # a void ** in disguise: baseptr, attribute_val, buffer_addr
        decls.append("static void *o_%s[16];" % p.name)
        return "o_%s" % p.name
    elem = pointee(t)
    if o is not None and o.startswith("s_"):
        return o  # arg_sweep.c's state, reset before each call
    if p.dir in ("in", "inout"):
        # an in/out pointer starts from a valid value
        if elem in HANDLES and not p.array:
            decls.append("%s v_%s = %s;" % (elem, p.name, valid_inout_handle(fname, p, elem)))
            return "&v_%s" % p.name
        if elem == "MPI_Request" and p.array:
            return "g_req_array"  # refilled with MPI_REQUEST_NULL before each call
        if p.kind in ("STRING_LENGTH", "INFO_VALUE_LENGTH"):
            decls.append("int v_%s = 64;" % p.name)
            return "&v_%s" % p.name
        if p.kind in ("POLYDISPLACEMENT_COUNT", "POLYLOCATION", "KEYVAL", "DIMENSION",
                      "ARRAY_LENGTH_NNI", "ARGUMENT_COUNT", "STATUS"):
            decls.append("%s v_%s[16] = {0};" % (elem, p.name))
            return "v_%s" % p.name
        if p.kind == "ARGUMENT_LIST":
            decls.append("%s v_%s = NULL;" % (elem, p.name))
            return "&v_%s" % p.name
        raise Unhandled("%s: no in/out value for %s (%s, %s)" % (fname, p.name, p.kind, t))
    if elem == "char":
        decls.append("static char o_%s[16384];" % p.name)
        return "o_%s" % p.name
    decls.append("static %s o_%s[16];" % (elem, p.name))
    return "o_%s" % p.name


def valid_inout_handle(fname, p, elem):
    o = override(fname, p.name)
    return o if o is not None else GOOD_HANDLE[elem]


def allowed(fname, p, what):
    base = base_name(fname)
    if what == "nullptr" and TOOL_QUERIES.match(base):
        return True
    for key in ((fname, p.name, what), (base, p.name, what), ("*", p.name, what),
                (base, "*", what)):
        if key in ALLOWED:
            if key == ("*", "info", "null") and INFO_OBJECT_FUNCTIONS.match(base):
                continue
            return True
    return False


def bad_cases(fn, p, value, decls):
    """(what, bad C value, expected class names) of a parameter; the declarations the kept
    cases need go to decls."""
    cases = []
    for what, badval, classes, mine in parameter_cases(fn, p, value):
        if not allowed(fn["name"], p, what):
            decls += mine
            cases.append((what, badval, classes))
    return cases


def parameter_cases(fn, p, value):
    """(what, bad C value, expected class names, declarations it needs) of a parameter."""
    fname = fn["name"]
    base = base_name(fname)
    t = strip_const(p.ctype)
    out = []
    if (base, p.name) in NOT_CHECKED:
        return out
    # null handles
    if p.dir == "in" and t in HANDLES and not p.array:
        null, classes = HANDLES[t]
        out.append(("null", null, classes, []))
    elif t.endswith("*") and pointee(t) in HANDLES and p.dir in ("in", "inout"):
        elem = pointee(t)
        null, classes = HANDLES[elem]
        if p.array:
            if elem in ("MPI_Datatype", "MPI_Request"):
                out.append(("null", "n_%s" % p.name, classes, [
                    "%s n_%s[16];" % (elem, p.name),
                    "memcpy(n_%s, %s, sizeof n_%s);" % (p.name, value, p.name),
                    "n_%s[0] = %s;" % (p.name, null)]))
        else:
            out.append(("null", "&n_%s" % p.name, classes,
                        ["%s n_%s = %s;" % (elem, p.name, null)]))
    # NULL pointers where a pointer is required
    if p.dir in ("out", "inout") and t.endswith("*") and p.kind not in (
            "BUFFER", "STATUS", "LOGICAL_OPTIONAL", "ERROR_CODE", "ARGUMENT_LIST",
            "ARGUMENT_COUNT") and not (p.kind == "C_BUFFER" and fname.startswith("MPI_T_")):
        classes = ["MPI_ERR_ARG"]
        if p.name == "array_of_requests":
            classes.append("MPI_ERR_REQUEST")  # no array of requests: MPI_ERR_REQUEST says as much
        out.append(("nullptr", "NULL", classes, []))
    # NULL where a required input array, string or callback goes
    if p.dir == "in" and t.endswith("*") and not (pointee(t) in HANDLES and not p.array) and (
            p.kind == "STRING" or p.kind == "LOGICAL_VOID" or t in NULL_CALLBACKS or
            p.array and p.kind not in NULL_INPUT_MEANS):
        classes = NULLIN_CLASSES.get(p.name, ["MPI_ERR_ARG"])
        if p.name == "array_of_requests":
            classes = classes + ["MPI_ERR_REQUEST"]
        out.append(("nullin", "NULL", classes, []))
    # negative counts
    neg = NEGATIVE_BY_NAME.get((p.kind, p.name)) or NEGATIVE.get(p.kind)
    if neg and p.dir == "in":
        if not t.endswith("*"):
            out.append(("negative", "-1", neg, []))
        elif p.array and pointee(t) in SUFFIX:
            arr = typed_array("neg", pointee(t))
            out.append(("negative", arr, neg, []))
    # ranks and roots
    if p.kind in RANK_KINDS and p.dir == "in":
        classes = ["MPI_ERR_ROOT"] if p.name == "root" else ["MPI_ERR_RANK"]
        if base in ("MPI_Type_create_darray",):
            classes = ["MPI_ERR_RANK", "MPI_ERR_ARG"]
        if t in ("int",):
            out.append(("rank", "g_size", classes, []))
            # below every rank sentinel (MPI_ANY_SOURCE -1 .. MPI_ROOT -4)
            out.append(("negrank", "-5", classes, []))
        elif t == "int (*)[3]":
            out.append(("rank", "g_bad_ranges", ["MPI_ERR_RANK", "MPI_ERR_ARG"], []))
        elif p.array:
            out.append(("rank", "g_bad_rank", ["MPI_ERR_RANK", "MPI_ERR_ARG"], []))
    # tags
    if p.kind == "TAG" and p.dir == "in" and t == "int":
        out.append(("tag", "-5", ["MPI_ERR_TAG"], []))
    return out


def tool_classes(what, classes):
    """The tool interface's classes for a case (it has no MPI_ERR_ classes)."""
    handles = ["MPI_T_ERR_INVALID_HANDLE", "MPI_T_ERR_INVALID_SESSION"]
    if what == "null":
        return handles
    if what == "nullin":
        return ["MPI_T_ERR_INVALID", "MPI_T_ERR_INVALID_NAME"]
    # a NULL pointer to a handle: the standard names no class, the handle's is as good
    return ["MPI_T_ERR_INVALID"] + (handles if what == "nullptr" else [])


# Tool objects a library may not have: a case that needs one it lacks is skipped at run time.
NEEDS = [
    ("SWEEP_NEEDS_CVAR", ("CVAR", "CVAR_INDEX", "CVAR_INDEX_SPECIAL"), "g_cvar_"),
    ("SWEEP_NEEDS_PVAR", ("PVAR", "PVAR_INDEX"), "g_pvar_"),
    ("SWEEP_NEEDS_CAT", ("CAT_INDEX",), "g_cat_"),
    ("SWEEP_NEEDS_ENUM", ("TOOLS_ENUM",), "g_enum"),
    ("SWEEP_NEEDS_SOURCE", ("SOURCE_INDEX",), None),
]


def tool_needs(params, body):
    flags = []
    for flag, kinds, symbol in NEEDS:
        if any(p.kind in kinds and p.dir == "in" for p in params) or \
                symbol is not None and symbol in body:
            flags.append(flag)
    return " | ".join(flags) or "0"


# ---- output ------------------------------------------------------------------------------------


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def generate(api, unimplemented):
    functions = api["functions"]
    wrappers, cases, skipped, counted = [], [], [], 0
    for fn in sorted(functions, key=lambda f: f["name"]):
        name = fn["name"]
        base = base_name(name)
        if fn["return_kind"] != "ERROR_CODE":
            continue  # returns a value, reports no errors
        counted += 1
        if name in unimplemented:
            skipped.append((name, "not implemented (a stub that reports "
                                  "MPI_ERR_UNSUPPORTED_OPERATION)"))
            continue
        if base in SKIP_FUNCTIONS:
            skipped.append((name, SKIP_FUNCTIONS[base]))
            continue
        params = [Param(fn, p) for p in fn["params"]]
        decls, args, fcases = [], [], []
        bad = 0
        for p in params:
            t = strip_const(p.ctype)
            handle_ptr = t.endswith("*") and pointee(t) in HANDLES and not p.array
            if (p.dir == "in" or not t.endswith("*")) and not handle_ptr:
                value = valid_in(name, p)
            else:
                value = storage(name, p, decls)
            expr = value
            variants = bad_cases(fn, p, value, decls)
            if EVENT_FUNCTIONS.match(base):
                kept = [v for v in variants if v[0] == "null" and p.kind.startswith("EVENT_")]
                for v in variants:
                    if v not in kept:
                        skipped.append(("%s(%s)" % (name, p.name), NO_EVENTS))
                variants = kept
            skip_reason = SKIP_CASES.get((base, p.name))
            if skip_reason:
                for v in variants:
                    skipped.append(("%s(%s)" % (name, p.name), skip_reason))
                variants = []
            for what, badval, classes in variants:
                bad += 1
                expr = "bad == %d ? %s : %s" % (bad, badval, expr) if expr == value else \
                    "bad == %d ? %s : (%s)" % (bad, badval, expr)
                fcases.append((bad, p.name, what, classes))
            args.append(expr if expr == value else "(%s)" % expr)
        if not fcases:
            continue
        pre, post = AROUND.get(base, ("", ""))
        body = ["static int sweep_%s(int bad)" % name, "{"]
        body += ["    " + d for d in sorted(set(decls), key=decls.index)]
        body.append("    sweep_before_call();")
        if pre:
            body.append("    " + pre)
        body.append("    int rc = %s(%s);" % (name, ", ".join(args)))
        if post:
            body.append("    " + post)
        body.append("    return rc;")
        body.append("}")
        wrappers.append("\n".join(body))
        tool = fn["tool"] or name.startswith("MPI_T_")
        needs = tool_needs(params, "\n".join(body))
        for bad_no, pname, what, classes in fcases:
            expect = "{" + ", ".join(tool_classes(what, classes) if tool else classes) + "}"
            cases.append("    {sweep_%s, %d, %s, %s, %s, %d, %s, %s}," % (
                name, bad_no, c_string(name), c_string(pname), c_string(what), int(tool),
                needs, expect))
    out = ["/* Generated by tests/mpi/errors/gen_arg_sweep.py from api/mpi_api.json: do not "
           "edit. */", ""]
    out += wrappers
    out.append("")
    out.append("static const struct sweep_case sweep_cases[] = {")
    out += cases
    out.append("};")
    out.append("")
    out.append("static const struct sweep_skip sweep_skipped[] = {")
    for what, reason in skipped:
        out.append("    {%s, %s}," % (c_string(what), c_string(reason)))
    out.append("    {NULL, NULL},")
    out.append("};")
    out.append("")
    out.append("/* functions that return an error code */")
    out.append("#define SWEEP_FUNCTIONS %d" % counted)
    out.append("")
    return "\n".join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--api", required=True, help="api/mpi_api.json")
    parser.add_argument("--unimplemented", help="functions to leave out, one a line")
    parser.add_argument("--output", required=True, help="the header to write")
    args = parser.parse_args(argv)
    with open(args.api, encoding="utf-8") as f:
        api = json.load(f)
    unimplemented = set()
    if args.unimplemented and os.path.exists(args.unimplemented):
        with open(args.unimplemented, encoding="utf-8") as f:
            unimplemented = set(f.read().split())
    try:
        text = generate(api, unimplemented)
    except Unhandled as e:
        print("gen_arg_sweep.py: %s" % e, file=sys.stderr)
        return 1
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    tmp = args.output + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
