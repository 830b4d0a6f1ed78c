# SPDX-License-Identifier: BSD-3-Clause
# Helpers shared by the shell-driven test cases (tests/launcher/launcher_case.sh,
# tests/tool/tool_case.sh). The sourcing script sets case_name, out and err (temporary files
# for the command's stdout and stderr) before using them.

fail() {
    echo "FAIL ($case_name): $*"
    echo "--- stdout"
    cat "$out"
    echo "--- stderr"
    cat "$err"
    exit 1
}

# Run a command with its output in $out and $err and its exit status in $rc.
run() {
    "$@" >"$out" 2>"$err"
    rc=$?
}

expect_rc() {
    [ "$rc" -eq "$1" ] || fail "exit status $rc, expected $1"
}

expect_out() {
    grep -q -e "$1" "$out" || fail "stdout lacks '$1'"
}

expect_err() {
    grep -q -e "$1" "$err" || fail "stderr lacks '$1'"
}

refute_out() {
    if grep -q -e "$1" "$out"; then fail "stdout has '$1'"; fi
}

refute_err() {
    if grep -q -e "$1" "$err"; then fail "stderr has '$1'"; fi
}
