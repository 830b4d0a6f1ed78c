#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one MPI test program for CTest and decides the verdict from both its output and its
# exit status, because CTest's pass expression alone would ignore the exit status.
# Usage: runtest.sh <expect> <seconds> <mpiexec> <args...>
#   expect=pass   the job must exit 0 and print a line " No Errors" (and, with
#                 MTEST_FAIL_ON_UCX_ERRORS set, no UCX error line)
#   expect=abort  the job must end with a non-zero exit status, on its own before the time
#                 limit, and must not print " No Errors" (tests of MPI_Abort)
# <seconds> is a backstop for a launcher that fails to enforce its own time limit.
# Failures are reported on a line starting with "mpitest: FAIL".
set -u

if [ $# -lt 3 ]; then
    echo "mpitest: FAIL: usage: runtest.sh pass|abort <seconds> <command...>"
    exit 2
fi
expect=$1
limit=$2
shift 2

out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT

timeout -k 5 "$limit" "$@" >"$out" 2>&1
rc=$?
cat "$out"

if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
    echo "mpitest: FAIL: killed after $limit seconds (exit status $rc)"
    exit 1
fi
case "$expect" in
pass)
    if [ "$rc" -ne 0 ]; then
        echo "mpitest: FAIL: exit status $rc"
        exit 1
    fi
    if ! grep -q '^ No Errors$' "$out"; then
        echo "mpitest: FAIL: no ' No Errors' line in the output"
        exit 1
    fi
    if [ -n "${MTEST_FAIL_ON_UCX_ERRORS:-}" ] && grep -q 'UCX  ERROR' "$out"; then
        echo "mpitest: FAIL: the transport printed errors"
        exit 1
    fi
    ;;
abort)
    if [ "$rc" -eq 0 ]; then
        echo "mpitest: FAIL: the job exited with status 0, expected a failure"
        exit 1
    fi
    if grep -q '^ No Errors$' "$out"; then
        echo "mpitest: FAIL: the job went on to print ' No Errors'"
        exit 1
    fi
    echo "mpitest: the job failed as expected (exit status $rc)"
    ;;
*)
    echo "mpitest: FAIL: unknown expectation '$expect'"
    exit 2
    ;;
esac
exit 0
