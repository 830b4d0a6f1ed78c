#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Runs one launcher test case: starts mpiexec (ours, or hydra from the MPICH wheel) on the
# mf_pmi_probe test program and checks the exit status, what was printed, and that no process
# of the job is left behind. Every probe gets a unique --token= argument so concurrent tests
# never see each other's processes.
# Usage: launcher_case.sh CASE MPIEXEC PROBE HYDRA_MPIEXEC
set -u

case_name=$1
mpiexec=$2
probe=$3
hydra=$4
token="mftest-$case_name-$$"
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
unset PMI_FD PMI_PORT PMI_ID PMI_RANK PMI_SIZE MANIFOLD_PMI MANIFOLD_MPIEXEC_TIMEOUT

. "$(dirname "$0")/../case_lib.sh"

# Processes whose command line carries our token (mpiexec itself has exited by now).
no_strays() {
    tries=0
    while pgrep -f -- "--token=$token" >/dev/null; do
        tries=$((tries + 1))
        if [ "$tries" -gt "${1:-0}" ]; then
            pgrep -af -- "--token=$token" >>"$err"
            fail "processes left behind"
        fi
        sleep 0.1
    done
}

# Waits until n probes (not mpiexec: its command line starts elsewhere) are running.
wait_for_probes() {
    tries=0
    while [ "$(pgrep -cf -- "^[^ ]*mf_pmi_probe .*--token=$token")" -lt "$1" ]; do
        tries=$((tries + 1))
        [ "$tries" -le 100 ] || fail "the probes did not start"
        sleep 0.05
    done
}

# Waits for mpiexec (pid $1) to end within $2 tenths of a second and sets rc to its exit
# status; past that, kills it and its ranks and fails with message $3.
wait_mpiexec() {
    tries=0
    while kill -0 "$1" 2>/dev/null; do
        tries=$((tries + 1))
        if [ "$tries" -gt "$2" ]; then
            kill -KILL "$1"
            pkill -KILL -f -- "--token=$token"
            rm -f "/dev/shm/ucx_shm_left_$token"
            fail "$3"
        fi
        sleep 0.1
    done
    wait "$1"
    rc=$?
}

kvs_case() { # launcher-args... -- expected-version
    run env "$@" "--token=$token"
    expect_rc 0
    expect_out " No Errors"
    no_strays
}

require_hydra() {
    [ -x "$hydra" ] || fail "hydra mpiexec not found at $hydra: create the MPICH venv (build/venv-mpich with pip install mpich==5.0.2) or point MF_VENV_MPICH at one"
}

case $case_name in
kvs_pmi1)
    kvs_case MANIFOLD_PMI=1 "$mpiexec" -n 4 "$probe" kvs 1
    expect_out "rank 3 of 4: pmi version 1, local 3 of 4" ;;
kvs_pmi2)
    kvs_case MANIFOLD_PMI=2 "$mpiexec" -n 4 "$probe" kvs 2
    expect_out "rank 3 of 4: pmi version 2, local 3 of 4" ;;
ppn_pmi1)
    # --ppn 2 reports 5 ranks as nodes {0,1} {2,3} {4}; node attributes stay per node.
    kvs_case MANIFOLD_PMI=1 "$mpiexec" --ppn 2 -n 5 "$probe" kvs 1
    expect_out "rank 3 of 5: pmi version 1, local 1 of 2"
    expect_out "rank 4 of 5: pmi version 1, local 0 of 1" ;;
ppn_pmi2)
    kvs_case MANIFOLD_PMI=2 "$mpiexec" --ppn 2 -n 5 "$probe" kvs 2
    expect_out "rank 2 of 5: pmi version 2, local 0 of 2"
    expect_out "rank 4 of 5: pmi version 2, local 0 of 1" ;;
ppn_env)
    kvs_case MANIFOLD_PMI=2 MANIFOLD_MPIEXEC_PPN=3 "$mpiexec" -n 4 "$probe" kvs 2
    expect_out "rank 2 of 4: pmi version 2, local 2 of 3"
    expect_out "rank 3 of 4: pmi version 2, local 0 of 1" ;;
pmi_fallback)
    # No MANIFOLD_PMI: the client asks for PMI-2, is refused, and falls back to PMI-1.
    kvs_case "$mpiexec" --pmi 1 -n 2 "$probe" kvs 1 ;;
pmi2_refused)
    run env MANIFOLD_PMI=2 "$mpiexec" --pmi 1 -n 1 "$probe" init "--token=$token"
    expect_rc 3
    expect_err "refused PMI-2" ;;
singleton)
    run "$probe" kvs 0 "--token=$token"
    expect_rc 0
    expect_out "rank 0 of 1: pmi version 0, local 0 of 1"
    expect_out " No Errors" ;;
pmix_refused)
    # Started by a PMIx launcher (Open MPI's mpirun): an error, not a silent job of one
    run env PMIX_NAMESPACE=prterun-test@1 PMIX_RANK=0 "$probe" kvs 0 "--token=$token"
    [ "$rc" -ne 0 ] || fail "the probe started"
    expect_err "the launcher speaks PMIx (PMIX_NAMESPACE=prterun-test@1"
    expect_err "srun --mpi=pmi2"
    refute_out " No Errors" ;;
hydra_pmi1 | hydra_pmi2)
    require_hydra
    kvs_case MANIFOLD_PMI="${case_name#hydra_pmi}" "$hydra" -n 3 "$probe" kvs "${case_name#hydra_pmi}"
    expect_out "rank 2 of 3: pmi version ${case_name#hydra_pmi}, local 2 of 3" ;;
hydra_port_pmi1 | hydra_port_pmi2)
    require_hydra
    version=${case_name#hydra_port_pmi}
    kvs_case MANIFOLD_PMI="$version" "$hydra" -pmi-port -n 3 "$probe" kvs "$version"
    expect_out "rank 1 of 3: pmi version $version" ;;
exit_code)
    run "$mpiexec" -n 4 "$probe" exit 3 2 "--token=$token"
    expect_rc 3
    expect_err "^mpiexec: rank 2 (pid [0-9]*) exited with code 3$"
    no_strays ;;
finalized_exit)
    # A rank that finalized and then exits with a code leaves the others (finalized too) their
    # grace period: they used to be stopped at once, and their output was lost.
    run "$mpiexec" -n 4 "$probe" finalized-fail 3 "--token=$token"
    expect_rc 3
    expect_err "^mpiexec: rank 0 (pid [0-9]*) exited with code 3$"
    for r in 1 2 3; do expect_out "rank $r finished after finalize"; done
    no_strays ;;
finalized_hang)
    # ... and those still running after it are killed.
    run "$mpiexec" -n 3 "$probe" finalized-hang 4 "--token=$token"
    expect_rc 4
    expect_out "rank 2 finished after finalize"
    no_strays 20 ;;
signal)
    run "$mpiexec" -n 3 "$probe" signal 1 "--token=$token"
    expect_rc 139
    expect_err "^mpiexec: rank 1 (pid [0-9]*) killed by signal 11 (Segmentation fault)$"
    no_strays ;;
abort_pmi1 | abort_pmi2)
    run env MANIFOLD_PMI="${case_name#abort_pmi}" "$mpiexec" -n 3 "$probe" abort 7 1 "--token=$token"
    expect_rc 7
    expect_err "^mpiexec: rank 1 (pid [0-9]*) called abort with code 7: probe abort from rank 1$"
    refute_err "aborted the job" # the client leaves the report to our mpiexec
    no_strays ;;
abort_256)
    # an exit status keeps the low byte of the code: 256 must not read as success
    run "$mpiexec" -n 2 "$probe" abort 256 1 "--token=$token"
    expect_rc 1
    expect_err "^mpiexec: rank 1 (pid [0-9]*) called abort with code 256: probe abort from rank 1$"
    no_strays ;;
sigchld_ignored)
    # started with SIGCHLD ignored (inherited through exec), mpiexec must still see its ranks end
    # (a shell does not pass an ignored SIGCHLD on; python does)
    run timeout -k 2 8 python3 -c 'import os, signal, sys
signal.signal(signal.SIGCHLD, signal.SIG_IGN)
os.execv(sys.argv[1], sys.argv[1:])' "$mpiexec" -n 2 "$probe" exit 3 1 "--token=$token"
    expect_rc 3
    expect_err "^mpiexec: rank 1 (pid [0-9]*) exited with code 3$"
    no_strays ;;
early_fatal)
    # $probe is an MPI program here: MPI_Init fails before the ranks are known, and the
    # message must not call every process rank 0
    run env MANIFOLD_VCI_COUNT=abc "$mpiexec" -n 2 "$probe" "--token=$token"
    [ "$rc" -ne 0 ] || fail "the job succeeded"
    expect_err "^manifold (pid [0-9]*): fatal error on MPI_COMM_SELF: MPI_Init"
    refute_err "rank 0: fatal"
    no_strays ;;
abort_hydra)
    require_hydra
    run "$hydra" -n 2 "$probe" abort 5 1 "--token=$token"
    expect_rc 5
    expect_err "rank 1 aborted the job (code 5): probe abort from rank 1" # hydra prints nothing
    no_strays 30 ;;
timeout)
    start=$(date +%s)
    run "$mpiexec" -n 2 --timeout 1 "$probe" sleep "--token=$token"
    expect_rc 124
    expect_err "^mpiexec: timeout after 1 s, stopping 2 rank(s)$"
    [ $(($(date +%s) - start)) -le 4 ] || fail "the timeout took too long"
    no_strays ;;
timeout_env)
    run env MANIFOLD_MPIEXEC_TIMEOUT=1 "$mpiexec" -n 2 "$probe" sleep "--token=$token"
    expect_rc 124
    no_strays
    # hydra's and Open MPI's variable, which test harnesses set; ours wins over it
    run env MPIEXEC_TIMEOUT=1 "$mpiexec" -n 2 "$probe" sleep "--token=$token"
    expect_rc 124
    no_strays
    run env MANIFOLD_MPIEXEC_TIMEOUT=1 MPIEXEC_TIMEOUT=never "$mpiexec" -n 2 "$probe" sleep \
        "--token=$token"
    expect_rc 124
    no_strays ;;
kill_grace)
    # Rank 1 ignores SIGTERM: mpiexec must follow up with SIGKILL.
    run "$mpiexec" -n 2 "$probe" stubborn 4 "--token=$token"
    expect_rc 4
    expect_err "rank 0 (pid [0-9]*) exited with code 4"
    no_strays ;;
orphan)
    # A child of rank 1 ignores SIGTERM and outlives the ranks: it goes with SIGKILL all the same.
    run "$mpiexec" -n 2 "$probe" orphan 5 "--token=$token"
    expect_rc 5
    no_strays 30 ;;
stdin)
    printf 'hello stdin\nsecond line\n' | {
        "$mpiexec" -n 2 "$probe" stdin "--token=$token" >"$out" 2>"$err"
        echo $? >"$out.rc"
    }
    rc=$(cat "$out.rc")
    rm -f "$out.rc"
    expect_rc 0
    expect_out "^rank 0 read: hello stdin$"
    expect_out "^rank 1 read eof$" ;;
tag_output)
    run "$mpiexec" -n 3 --tag-output "$probe" hello "--token=$token"
    expect_rc 0
    for r in 0 1 2; do expect_out "^\[$r\] hello from $r$"; done ;;
longline)
    # A long line goes out in pieces; another rank's line between two pieces must not land
    # inside it: each output line is one rank's, and rank 0's 10000 characters all arrive.
    run "$mpiexec" -n 2 --tag-output "$probe" longline "--token=$token"
    expect_rc 0
    expect_out "^\[1\] short from 1$"
    if grep -v -E '^\[0\] a+$|^\[1\] short from 1$' "$out" >>"$err"; then
        fail "a line mixes the output of two ranks"
    fi
    n=$(grep -E '^\[0\] a+$' "$out" | tr -cd a | wc -c)
    [ "$n" -eq 10000 ] || fail "rank 0 printed 10000 characters, $n arrived" ;;
env)
    run "$mpiexec" -n 2 --env FOO=bar -genv BAZ "q u x" -env EMPTY "" "$probe" env FOO BAZ EMPTY \
        PMI_SIZE MPI_LOCALNRANKS "--token=$token"
    expect_rc 0
    expect_out "^rank 1 FOO=bar$"
    expect_out "^rank 0 BAZ=q u x$"
    expect_out "^rank 0 EMPTY=$"
    expect_out "^rank 1 PMI_SIZE=2$"
    expect_out "^rank 1 MPI_LOCALNRANKS=2$" ;;
memcpy_tunable)
    # On AMD CPUs every rank gets glibc's rep movsb threshold (coll.md: 4 KiB aliasing), after
    # the user's own tunables; one the user set, or MANIFOLD_MPIEXEC_TUNE_MEMCPY=0, wins.
    t=glibc.cpu.x86_rep_movsb_threshold
    if grep -q '^vendor_id.*AuthenticAMD' /proc/cpuinfo; then
        run env -u GLIBC_TUNABLES "$mpiexec" -n 2 "$probe" env GLIBC_TUNABLES "--token=$token"
        expect_rc 0
        expect_out "^rank 1 GLIBC_TUNABLES=$t=2097152$"
        run env GLIBC_TUNABLES=glibc.malloc.check=0 "$mpiexec" -n 1 "$probe" env GLIBC_TUNABLES \
            "--token=$token"
        expect_out "^rank 0 GLIBC_TUNABLES=glibc.malloc.check=0:$t=2097152$"
    fi
    run env GLIBC_TUNABLES=$t=4096 "$mpiexec" -n 1 "$probe" env GLIBC_TUNABLES "--token=$token"
    expect_rc 0
    expect_out "^rank 0 GLIBC_TUNABLES=$t=4096$"
    run env -u GLIBC_TUNABLES "$mpiexec" -n 1 --env MANIFOLD_MPIEXEC_TUNE_MEMCPY=0 "$probe" env \
        GLIBC_TUNABLES "--token=$token"
    expect_rc 0
    expect_out "^rank 0 GLIBC_TUNABLES=(unset)$" ;;
usage)
    run "$mpiexec" --no-such-option "$probe" hello
    expect_rc 2
    expect_err "unknown option '--no-such-option'"
    run "$mpiexec" -n 0 "$probe" hello
    expect_rc 2
    run "$mpiexec" -n 1 ./no-such-program-here
    expect_rc 127
    expect_err "^mpiexec: cannot run './no-such-program-here': No such file or directory$"
    run "$mpiexec" -n 4097 "$probe" hello
    expect_rc 2
    expect_err "at most 4096 processes"
    run "$mpiexec" --universe-size 0 -n 1 "$probe" hello
    expect_rc 2
    expect_err "--universe-size needs a number of processes of at least 1"
    run env MANIFOLD_MPIEXEC_UNIVERSE_SIZE=many "$mpiexec" -n 1 "$probe" hello
    expect_rc 2
    expect_err "MANIFOLD_MPIEXEC_UNIVERSE_SIZE='many' is not a number of processes" ;;
nofinalize)
    run "$mpiexec" -n 2 "$probe" nofinalize "--token=$token"
    expect_rc 1
    expect_err "exited with code 0 without calling PMI finalize"
    no_strays ;;
nofinalize_mpi)
    # $probe is an MPI program here (exit_unfinalized.c): mpiexec names the exit itself. A
    # rank that skips MPI_Finalize leaves the transport allocated: no leak check, whose exit
    # status would replace the program's.
    run env ASAN_OPTIONS=detect_leaks=0 "$mpiexec" -n 2 "$probe" "--token=$token"
    expect_rc 1
    expect_err "rank 1 (pid [0-9]*) exited with code 0 without calling PMI finalize"
    refute_out "the receive returned"
    no_strays ;;
hydra_nofinalize)
    # The same under hydra, which lost the exit in about a quarter of the runs by itself:
    # the library aborts the job from its exit handler. Ten runs, each ended in time.
    require_hydra
    for i in 1 2 3 4 5 6 7 8 9 10; do
        ASAN_OPTIONS=detect_leaks=0 "$hydra" -n 2 "$probe" "--token=$token" >"$out" 2>"$err" &
        wait_mpiexec $! 100 "run $i: hydra's job did not end within 10 s"
        expect_rc 1
        expect_err "rank 1 aborted the job (code 1): rank 1 exited with code 0 without calling MPI_Finalize"
        refute_out "the receive returned"
        no_strays 30
    done ;;
singleton_spawn)
    # $probe is an MPI program here (singleton_spawn.c), started with no launcher at all
    run "$probe" "--token=$token"
    expect_rc 0
    expect_out " No Errors"
    # the mpiexec it started ends with it
    tries=0
    pid=$(sed -n 's/^singleton pid \([0-9]*\)$/\1/p' "$out")
    [ -n "$pid" ] || fail "the program did not say its pid"
    while pgrep -f -- "--adopt=[0-9]*,$pid\$" >/dev/null 2>&1; do
        tries=$((tries + 1))
        [ "$tries" -le 50 ] || fail "the mpiexec started for the singleton is still running"
        sleep 0.1
    done
    no_strays 30 ;;
small_shm)
    # $probe is an MPI program here (small_shm.c), run where /dev/shm holds 16 MiB: UCX's posix
    # transport crashed at start-up or at a new channel with SIGBUS before
    if ! unshare -m true 2>/dev/null; then
        echo "small_shm: skipped, no private mount namespace here (unshare -m)"
        exit 77
    fi
    run unshare -m sh -c 'mount -t tmpfs -o size=16m tmpfs /dev/shm && exec "$@"' sh \
        "$mpiexec" -n 4 --env MANIFOLD_LOG=info "$probe" "--token=$token"
    expect_rc 0
    expect_out " No Errors"
    expect_err "using System V shared memory instead"
    no_strays ;;
early_exit)
    run "$mpiexec" -n 3 "$probe" early-exit "--token=$token"
    expect_rc 1
    expect_err "rank 1 (pid [0-9]*) exited while other ranks wait for it in a fence"
    no_strays ;;
sigterm_mpiexec)
    "$mpiexec" -n 2 "$probe" sleep "--token=$token" >"$out" 2>"$err" &
    pid=$!
    wait_for_probes 2
    kill -TERM "$pid"
    wait "$pid"
    rc=$?
    expect_rc 143
    expect_err "received Terminated, stopping 2 rank(s)"
    no_strays ;;
sigkill_mpiexec)
    # mpiexec gets no chance to clean up: the ranks must still die (parent-death signal).
    "$mpiexec" -n 2 "$probe" sleep "--token=$token" >"$out" 2>"$err" &
    pid=$!
    wait_for_probes 2
    kill -KILL "$pid"
    wait "$pid"
    no_strays 30 ;;
shm_cleanup)
    keep="/dev/shm/ucx_shm_keep_$token"
    : >"$keep" || fail "cannot create $keep"
    run "$mpiexec" -n 2 "$probe" shm "ucx_shm_left_$token" "--token=$token"
    present=$([ -e "$keep" ] && echo yes)
    rm -f "$keep"
    expect_rc 0
    [ ! -e "/dev/shm/ucx_shm_left_$token" ] || fail "the left-over segment was not removed"
    [ "$present" = yes ] || fail "a segment that existed before the job was removed"
    expect_err "removed 1 shared-memory file(s) the ranks left in /dev/shm: ucx_shm_left_$token$"
    run "$mpiexec" -n 2 "$probe" hello
    refute_err "removed" ;;
raw_protocol)
    run "$mpiexec" -n 1 "$probe" raw "--token=$token"
    expect_rc 0
    expect_out "raw protocol checks passed"
    expect_err "unknown pmi-1 command 'frobnicate'" ;;
slow_reader)
    # Far more output than the pipes hold, read only after a second: every line arrives whole.
    "$mpiexec" -n 2 "$probe" flood 20000 0 "--token=$token" 2>"$err" | { sleep 1; cat >"$out"; }
    lines=$(grep -c '^rank [01] line [0-9]\{7\} \.\{79\}$' "$out")
    [ "$lines" -eq 40000 ] || fail "$lines of 40000 lines arrived whole"
    no_strays ;;
stalled_report)
    # mpiexec's own lines after the job (the removed segment) and its log lines during it (a
    # malformed PMI request) went to stderr with a blocking write. Stdout stalled: they still
    # reach stderr. Both stalled (2>&1): mpiexec still ends, within the graces.
    fifo=$(mktemp -u)
    mkfifo "$fifo" || fail "cannot make a fifo"
    exec 3<>"$fifo" # held open, never read
    for how in split joined; do
        start=$(date +%s)
        if [ "$how" = split ]; then
            "$mpiexec" -n 2 --timeout 2 "$probe" shm "ucx_shm_left_$token" 2000 "--token=$token" \
                >"$fifo" 2>"$err" &
        else
            "$mpiexec" -n 2 --timeout 2 "$probe" shm "ucx_shm_left_$token" 2000 "--token=$token" \
                >"$fifo" 2>&1 &
        fi
        wait_mpiexec $! 150 "mpiexec ($how) still runs after 15 s with a stalled reader"
        expect_rc 124
        [ $(($(date +%s) - start)) -le 8 ] || fail "stopping ($how) took too long"
        [ ! -e "/dev/shm/ucx_shm_left_$token" ] || fail "the left-over segment was not removed"
        if [ "$how" = split ]; then
            expect_err "^mpiexec: timeout after 2 s, stopping 2 rank(s)$"
            expect_err "dropping the pmi connection of rank 0"
            expect_err "removed 1 shared-memory file(s)"
        fi
    done
    exec 3>&-
    rm -f "$fifo"
    no_strays 30 ;;
stalled_stdout | stalled_sigint)
    # A reader that never reads: mpiexec used to block writing to it, deaf to its time limit
    # and to signals. It must stop the job all the same, within the drain grace.
    fifo=$(mktemp -u)
    mkfifo "$fifo" || fail "cannot make a fifo"
    exec 3<>"$fifo" # held open, never read
    limit=""
    [ "$case_name" = stalled_stdout ] && limit="--timeout 2"
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$mpiexec" -n 2 $limit "$probe" flood 20000 1 "--token=$token" >"$fifo" 2>"$err" &
    pid=$!
    if [ "$case_name" = stalled_sigint ]; then
        wait_for_probes 2
        sleep 1 # the pipes fill
        kill -INT "$pid"
    fi
    wait_mpiexec "$pid" 100 "mpiexec still runs after 10 s with a stalled stdout reader"
    exec 3>&-
    rm -f "$fifo"
    if [ "$case_name" = stalled_stdout ]; then
        expect_rc 124
        expect_err "^mpiexec: timeout after 2 s, stopping 2 rank(s)$"
    else
        expect_rc 130
        expect_err "received Interrupt, stopping 2 rank(s)"
    fi
    [ $(($(date +%s) - start)) -le 6 ] || fail "stopping took too long"
    no_strays 30 ;;
spawn_pmi1 | spawn_pmi2)
    # Rank 0 spawns a job of two commands (2 + 1 probes) with a preput value; the children
    # check what they are told and exchange keys among themselves. --env reaches them, output
    # is tagged [job:rank], "host" is ignored, "path" and "wdir" are honoured.
    version=${case_name#spawn_pmi}
    run env MANIFOLD_PMI="$version" "$mpiexec" -n 2 --tag-output --timeout 15 \
        --env PROBE_ENV=yes "$probe" spawn-parent "$version" elsewhere "--token=$token"
    expect_rc 0
    expect_out "^\[0\] parent rank 0 of 2 spawned$"
    expect_out "^\[1:0\] child rank 0 of 3 appnum 0 preput from-kvs_[0-9]*_0 env yes arg odd arg;with=all\\\\sorts$"
    expect_out "^\[1:1\] child rank 1 of 3 appnum 0 "
    expect_out "^\[1:2\] child rank 2 of 3 appnum 1 .* arg (none)$"
    no_strays ;;
spawn_errors_pmi1 | spawn_errors_pmi2)
    # Spawns that cannot start (no such program, directory, a process limit, bad arguments)
    # are answered with an error; nothing of them is left and the parents end normally.
    run env MANIFOLD_PMI="${case_name#spawn_errors_pmi}" "$mpiexec" -n 2 --timeout 15 "$probe" \
        spawn-errors "--token=$token"
    expect_rc 0
    expect_out "^rank 0: spawn errors checked$"
    expect_out "^rank 1: spawn errors checked$"
    expect_err "did not spawn the job: cannot run '/nonexistent/mf-no-such-program': No such file"
    expect_err "cannot run '[^']*mf_pmi_probe' in '/nonexistent-mf-dir': No such file"
    expect_err "5000 more processes would exceed mpiexec's limit of 4096"
    refute_err "^mpiexec:"
    no_strays ;;
spawn_exit_code)
    # A spawned process failing stops everything, like any rank, and is named with its job.
    run "$mpiexec" -n 2 --timeout 15 "$probe" spawn-fail 3 "--token=$token"
    expect_rc 3
    expect_err "^mpiexec: job 1 rank 1 (pid [0-9]*) exited with code 3$"
    no_strays ;;
spawn_shm)
    # A spawned process's left-over segment is removed like a rank's.
    run "$mpiexec" -n 2 --timeout 15 "$probe" spawn-run shm "ucx_shm_left_$token" "--token=$token"
    expect_rc 0
    [ ! -e "/dev/shm/ucx_shm_left_$token" ] || fail "the left-over segment was not removed"
    expect_err "removed 1 shared-memory file(s) the ranks left in /dev/shm: ucx_shm_left_$token$"
    no_strays ;;
names_pmi1 | names_pmi2)
    run env MANIFOLD_PMI="${case_name#names_pmi}" "$mpiexec" -n 3 --timeout 15 "$probe" names \
        "--token=$token"
    expect_rc 0
    expect_out "^name service checks passed$"
    no_strays ;;
hydra_names_pmi1 | hydra_names_pmi2)
    # hydra keeps names itself when no -nameserver is given
    require_hydra
    run env MANIFOLD_PMI="${case_name#hydra_names_pmi}" timeout -k 2 15 "$hydra" -n 3 "$probe" \
        names "--token=$token"
    expect_rc 0
    expect_out "^name service checks passed$"
    no_strays 30 ;;
hydra_spawn_pmi1 | hydra_spawn_pmi2)
    # The same request under hydra (no "host": hydra would go there).
    require_hydra
    version=${case_name#hydra_spawn_pmi}
    run env MANIFOLD_PMI="$version" timeout -k 2 15 "$hydra" -n 2 -genv PROBE_ENV yes "$probe" \
        spawn-parent "$version" "--token=$token"
    expect_rc 0
    expect_out "^child rank 2 of 3 appnum 1 preput from-kvs_[^ ]* env yes arg (none)$"
    expect_out "^child rank 0 of 3 appnum 0 "
    no_strays 30 ;;
singleton_dyn)
    run "$probe" dyn-singleton "--token=$token"
    expect_rc 0
    expect_out "^singleton spawn and names unsupported$" ;;
*)
    fail "unknown case" ;;
esac
echo "PASS ($case_name)"
