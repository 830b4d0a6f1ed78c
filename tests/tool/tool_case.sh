#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one tool test case: manifold_info alone or under mpiexec, and the MANIFOLD_VCI_STATS=1
# summary, checking the exit status and the lines they print.
# The tune cases run manifold_tune and a collective test program with the table it wrote.
# Usage: tool_case.sh CASE MPIEXEC MANIFOLD_INFO [MANIFOLD_TUNE COLL_TEST]
set -u

case_name=$1
mpiexec=$2
info=$3
tune=${4:-}
colltest=${5:-}
out=$(mktemp)
err=$(mktemp)
table=$(mktemp)
trap 'rm -f "$out" "$err" "$table"' EXIT
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE MANIFOLD_VCI_STATS MANIFOLD_VCI_COUNT
unset MANIFOLD_COLL_TABLE MANIFOLD_LOG MANIFOLD_COLL_SHM_CROWDED

. "$(dirname "$0")/../case_lib.sh"

case "$case_name" in
help)
    run "$info" --help
    expect_rc 0
    expect_out "^usage: manifold_info"
    expect_out "--vci"
    ;;
bad_option)
    run "$info" --bogus
    expect_rc 2
    expect_err "unknown option '--bogus'"
    ;;
cvars)
    # control variables only, before MPI_Init; the environment shows in the values
    MANIFOLD_VCI_COUNT=3 MANIFOLD_THREAD_CS=global MANIFOLD_COLL_SCAN=2 run "$info" --cvars
    expect_rc 0
    expect_out "^version: Manifold MPI"
    expect_out "^cvar MANIFOLD_VCI_COUNT  *= 3  *default 0 "
    expect_out "^cvar MANIFOLD_THREAD_CS  *= global  *default vci "
    expect_out "^cvar MANIFOLD_COLL_SCAN  *= recursive_doubling  *default auto "
    expect_out "^cvar MANIFOLD_VCI_STATS  *= 0 .* writable "
    expect_out "^cvar MANIFOLD_COLL_ALLREDUCE  *= auto  *default auto  *writable "
    if grep -q "^pvar" "$out"; then fail "performance variables printed with --cvars"; fi
    ;;
singleton)
    run "$info"
    expect_rc 0
    expect_out "^processes: 1"
    expect_out "^pvar count: "
    expect_out "^pvar vci_sends  *class counter "
    expect_out "^pvar comm_vci  *class generic  *per-communicator"
    expect_out "^pvar dtype_temp_max  *class high-water mark "
    expect_out "^pvar vci_active  *= 1"
    ;;
vci)
    run "$mpiexec" -n 2 "$info" --vci
    expect_rc 0
    expect_out "^processes: 2"
    expect_out "^vci  *idx  *active  *sends  *recvs"
    expect_out "^comm dup0: home vci [0-9][0-9]*, spread over [1-9]"
    expect_out "^comm world: home vci 0, spread over 1"
    # 10 exchanges on each of the 3 communicators: at least 30 sends on some VCI
    total=$(awk '/^vci  *[0-9]/ { s += $4 } END { print s + 0 }' "$out")
    [ "$total" -ge 30 ] || fail "the table counts $total sends, expected at least 30"
    ;;
vci_stats)
    MANIFOLD_VCI_STATS=1 run "$mpiexec" -n 2 "$info" --vci
    expect_rc 0
    for r in 0 1; do
        expect_err "^rank $r vci 0: sends [0-9]* recvs [0-9]* lock [0-9]* contended [0-9]* sweeps [0-9]* misses [0-9]*$"
        expect_err "^rank $r vci totals: pool [0-9]* active [1-9][0-9]* contexts [0-9]* workers [0-9]* endpoints [0-9]*$"
    done
    # without the variable nothing is printed
    run "$mpiexec" -n 2 "$info"
    expect_rc 0
    refute_err "vci totals"
    ;;
tune)
    run "$mpiexec" -n 2 "$tune" --quick --output "$table"
    expect_rc 0
    expect_out "^allreduce .*recursive_doubling .*rabenseifner"
    expect_out "table written to"
    for c in bcast reduce allreduce gather scatter allgather alltoall reduce_scatter scan; do
        grep -q "^$c  *2  *\* [a-z_]*$" "$table" || fail "the table has no catch-all rule for $c"
    done
    # the library loads the table and its rules decide (debug log names file and line)
    MANIFOLD_COLL_TABLE="$table" MANIFOLD_LOG=debug run "$mpiexec" -n 2 "$colltest"
    expect_rc 0
    expect_out "^ No Errors"
    expect_err "selection table $table: [1-9][0-9]* rules loaded"
    expect_err "coll: allreduce on 2 processes, [0-9]* bytes: [a-z_]* ($table:[0-9]*)"
    ;;
bad_table)
    printf 'allreduce 2 * rabenseifner\nreduce 2 64 fastest\n' >"$table"
    MANIFOLD_COLL_TABLE="$table" MANIFOLD_LOG=debug run "$mpiexec" -n 2 "$colltest"
    expect_rc 0
    expect_out "^ No Errors"
    expect_err "$table:2: unknown algorithm"
    expect_err "coll: allreduce on 2 processes, [0-9]* bytes: [a-z_]* (built-in)"
    refute_err "rules loaded"
    ;;
shm_wait)
    # More ranks than the cores they may use together (all on one core): the node is crowded
    # and the shared-memory waits yield at once, unless MANIFOLD_COLL_SHM_CROWDED says
    # otherwise; the collectives stay correct either way.
    command -v taskset >/dev/null 2>&1 || { echo "SKIP ($case_name): no taskset"; exit 0; }
    core=$(taskset -cp $$ | sed 's/.*: //; s/[-,].*//')
    MANIFOLD_LOG=debug run taskset -c "$core" "$mpiexec" -n 3 "$colltest"
    expect_rc 0
    expect_out "^ No Errors"
    expect_err "3 local ranks, crowded: waits yield at once"
    MANIFOLD_COLL_SHM_CROWDED=off MANIFOLD_LOG=debug run taskset -c "$core" "$mpiexec" -n 3 "$colltest"
    expect_rc 0
    expect_out "^ No Errors"
    expect_err "3 local ranks, a core each: waits spin first"
    # a core for every rank (bound one per core or free to use two): spin first unless forced
    if [ "$(taskset -cp $$ | sed 's/.*: //' | tr ',' '\n' |
        awk -F- '{ n += (NF == 2) ? $2 - $1 + 1 : 1 } END { print n }')" -ge 2 ]; then
        MANIFOLD_LOG=debug run "$mpiexec" -n 2 "$colltest"
        expect_rc 0
        expect_err "2 local ranks, a core each: waits spin first"
        MANIFOLD_COLL_SHM_CROWDED=on MANIFOLD_LOG=debug run "$mpiexec" -n 2 "$colltest"
        expect_rc 0
        expect_out "^ No Errors"
        expect_err "2 local ranks, crowded: waits yield at once"
    fi
    ;;
*)
    echo "unknown case $case_name"
    exit 2
    ;;
esac
echo "PASS ($case_name)"
