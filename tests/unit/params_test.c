/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the tunables table: defaults, a valid value, values out of range or not numbers
 * (errors), enumerations by name (and by number for collective algorithms), and an unknown
 * MANIFOLD_ variable (a warning, not an error), and the stack limit derived from the DT_ values.
 */
#include "unit.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

int main(void)
{
    UNIT_CHECK(mf_params_load() == MF_OK, "defaults load");
    UNIT_CHECK(mf_params.param_check == 1, "PARAM_CHECK default is 1");
    UNIT_CHECK(mf_params.vci_count == 0, "VCI_COUNT default is 0 (sized to the machine)");
    UNIT_CHECK(mf_params.thread_cs == MF_THREAD_CS_VCI, "THREAD_CS default is vci");

    setenv("MANIFOLD_THREAD_CS", "global", 1);
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.thread_cs == MF_THREAD_CS_GLOBAL,
               "an enumeration is read by name");
    setenv("MANIFOLD_THREAD_CS", "1", 1);
    UNIT_CHECK(mf_params_load() == MF_ERR_INVALID, "an enumeration rejects numbers");
    setenv("MANIFOLD_THREAD_CS", "Global", 1);
    UNIT_CHECK(mf_params_load() == MF_ERR_INVALID, "enumeration names are exact");
    unsetenv("MANIFOLD_THREAD_CS");
    setenv("MANIFOLD_COLL_BCAST", "2", 1);
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.coll_bcast == 2,
               "a collective algorithm is read by number");
    setenv("MANIFOLD_COLL_BCAST", "binomial", 1);
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.coll_bcast == 1,
               "a collective algorithm is read by name");
    setenv("MANIFOLD_COLL_BCAST", "3", 1);
    UNIT_CHECK(mf_params_load() == MF_ERR_INVALID, "an algorithm number out of range is an error");
    unsetenv("MANIFOLD_COLL_BCAST");

    int found = 0;
    mf_param_info_t info;
    for (int i = 0; mf_params_describe(i, &info); i++) {
        if (strcmp(info.name, "VCI_SHARING") == 0)
            found = info.choices != NULL && strcmp(info.choices[info.default_value], "worker") == 0;
    }
    UNIT_CHECK(found, "tools see VCI_SHARING as an enumeration with default worker");
    UNIT_CHECK(!mf_params_describe(mf_params_count(), &info), "describe stops at the end");

    setenv("MANIFOLD_PROGRESS_SWEEP_POLLS", "17", 1);
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.progress_sweep == 17, "valid value read");

    setenv("MANIFOLD_PROGRESS_SWEEP_POLLS", "0", 1);
    UNIT_CHECK(mf_params_load() == MF_ERR_INVALID, "value below the range is an error");
    setenv("MANIFOLD_PROGRESS_SWEEP_POLLS", "12abc", 1);
    UNIT_CHECK(mf_params_load() == MF_ERR_INVALID, "trailing garbage is an error");
    setenv("MANIFOLD_PROGRESS_SWEEP_POLLS", "", 1);
    UNIT_CHECK(mf_params_load() == MF_ERR_INVALID, "empty value is an error");
    unsetenv("MANIFOLD_PROGRESS_SWEEP_POLLS");

    /* the stack limit of blocking derived-type calls never reaches a streamed size */
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.dt_stack_direct == 4096,
               "stack limit: default 4096, got %d", mf_params.dt_stack_direct);
    setenv("MANIFOLD_DT_STACK_BYTES", "4096", 1);
    setenv("MANIFOLD_DT_STREAM_EAGER_MIN", "1000", 1);
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.dt_stack_direct == 999,
               "stack limit below the eager streaming range: got %d", mf_params.dt_stack_direct);
    setenv("MANIFOLD_DT_STREAM_EAGER_MAX", "0", 1);
    setenv("MANIFOLD_DT_STREAM_BYTES", "3000", 1);
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.dt_stack_direct == 2999,
               "stack limit below the streaming threshold: got %d", mf_params.dt_stack_direct);
    setenv("MANIFOLD_DT_STREAM_BYTES", "0", 1);
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.dt_stack_direct == 4096,
               "stack limit with streaming off: got %d", mf_params.dt_stack_direct);
    setenv("MANIFOLD_DT_STREAM_EAGER_MAX", "8192", 1);
    setenv("MANIFOLD_DT_STREAM_EAGER_MIN", "0", 1);
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.dt_stack_direct == 0,
               "stack limit when everything streams: got %d", mf_params.dt_stack_direct);
    unsetenv("MANIFOLD_DT_STACK_BYTES");
    unsetenv("MANIFOLD_DT_STREAM_EAGER_MIN");
    unsetenv("MANIFOLD_DT_STREAM_EAGER_MAX");
    unsetenv("MANIFOLD_DT_STREAM_BYTES");

    setenv("MANIFOLD_NO_SUCH_KNOB", "1", 1);
    UNIT_CHECK(mf_params_load() == MF_OK, "an unknown variable only warns");
    unsetenv("MANIFOLD_NO_SUCH_KNOB");
    return unit_finish("params_test");
}
