/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the tunables table: defaults, a valid value, values out of range or not numbers
 * (errors), and an unknown MANIFOLD_ variable (a warning, not an error).
 */
#include "unit.h"
#include "util.h"

#include <stdlib.h>

int main(void)
{
    UNIT_CHECK(mf_params_load() == MF_OK, "defaults load");
    UNIT_CHECK(mf_params.param_check == 1, "PARAM_CHECK default is 1");
    UNIT_CHECK(mf_params.vci_count >= 1, "VCI_COUNT default is at least 1");

    setenv("MANIFOLD_PROGRESS_SWEEP_POLLS", "17", 1);
    UNIT_CHECK(mf_params_load() == MF_OK && mf_params.progress_sweep == 17, "valid value read");

    setenv("MANIFOLD_PROGRESS_SWEEP_POLLS", "0", 1);
    UNIT_CHECK(mf_params_load() == MF_ERR_INVALID, "value below the range is an error");
    setenv("MANIFOLD_PROGRESS_SWEEP_POLLS", "12abc", 1);
    UNIT_CHECK(mf_params_load() == MF_ERR_INVALID, "trailing garbage is an error");
    setenv("MANIFOLD_PROGRESS_SWEEP_POLLS", "", 1);
    UNIT_CHECK(mf_params_load() == MF_ERR_INVALID, "empty value is an error");
    unsetenv("MANIFOLD_PROGRESS_SWEEP_POLLS");

    setenv("MANIFOLD_NO_SUCH_KNOB", "1", 1);
    UNIT_CHECK(mf_params_load() == MF_OK, "an unknown variable only warns");
    unsetenv("MANIFOLD_NO_SUCH_KNOB");
    return unit_finish("params_test");
}
