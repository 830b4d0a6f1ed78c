#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run Manifold programs under Slurm's own launcher: `srun --mpi=pmi2` (slurmstepd serves PMI-2,
# and PMI-1 on the same socket) on a single-node cluster of this host. Installs Slurm and munge
# from the distribution when they are missing (needs root and apt-get), writes the cluster's
# configuration into a private directory (SLURM_CONF points to it, all state stays there, other
# ports than a system cluster's), starts munged, slurmctld and slurmd unless they already run,
# runs a fixed list of programs from the build tree at 1 to 4 processes, and stops what it
# started. Exits non-zero when any program fails. Not part of `make check`.
#
#   tools/check-slurm.sh <build tree>      (make check-slurm)
#
# Environment: MF_SLURM_DIR (the private directory, default <build tree>/slurm-check),
# MF_SLURM_TIMEOUT (seconds per run, 60).
set -u

tree=$(cd "${1:?usage: $0 <build tree>}" && pwd)
dir=${MF_SLURM_DIR:-$tree/slurm-check}
limit=${MF_SLURM_TIMEOUT:-60}
host=$(hostname -s)
tests=$tree/tests/mpi
probe=$tree/tests/launcher/mf_pmi_probe

die() {
    echo "check-slurm: $*" >&2
    exit 2
}

[ "$(id -u)" -eq 0 ] || die "needs root (slurmd starts the tasks, munged the credentials)"
[ -x "$tests/env/init_basic" ] && [ -x "$probe" ] || die "$tree is not a built Manifold tree"
if ! command -v srun >/dev/null || ! command -v slurmd >/dev/null ||
    ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
    echo "check-slurm: installing slurmd, slurmctld, slurm-client and munge"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurmd slurmctld slurm-client munge \
        >/dev/null || die "cannot install Slurm"
fi

# The cluster: 2 CPUs are enough, tasks may overcommit them. linuxproc and task/none need
# no cgroups, which containers often do not delegate.
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
cpus=$(nproc)
cat >"$dir/slurm.conf" <<EOF
ClusterName=manifold
SlurmctldHost=$host
SlurmctldPort=6917
SlurmdPort=6918
NodeName=$host CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SlurmdUser=root
SlurmUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
EOF
SLURM_CONF=$dir/slurm.conf
export SLURM_CONF
unset SLURM_JOB_ID SLURM_JOBID SLURM_STEP_ID PMI_FD PMI_PORT PMI_RANK PMI_SIZE MANIFOLD_PMI

started="" # pid files of the daemons this run started, stopped in reverse order at the end
cleanup() {
    for pidfile in $started; do
        pid=$(cat "$pidfile" 2>/dev/null) && kill "$pid" 2>/dev/null || continue
        # slurmctld saves its state first: a few seconds
        tries=0
        while kill -0 "$pid" 2>/dev/null && [ "$tries" -lt 100 ]; do
            tries=$((tries + 1))
            sleep 0.1
        done
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

alive() { # pid file
    pid=$(cat "$1" 2>/dev/null) && kill -0 "$pid" 2>/dev/null
}

if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    mkdir -p /run/munge && chown munge:munge /run/munge
    runuser -u munge -- munged || die "cannot start munged"
    started="/run/munge/munged.pid"
fi
if ! alive "$dir/slurmctld.pid"; then
    slurmctld || die "cannot start slurmctld (see $dir/log/slurmctld.log)"
    started="$dir/slurmctld.pid $started"
fi
if ! alive "$dir/slurmd.pid"; then
    slurmd || die "cannot start slurmd (see $dir/log/slurmd.log)"
    started="$dir/slurmd.pid $started"
fi
tries=0
until sinfo -h -o %t 2>/dev/null | grep -q idle; do
    tries=$((tries + 1))
    [ "$tries" -le 60 ] || die "the node did not become idle: $(sinfo 2>&1)"
    sleep 0.5
done

pass=0
failures=""
out=$(mktemp)
trap 'cleanup; rm -f "$out"' EXIT

# run NAME EXPECT NP [VAR=VALUE...] -- PROGRAM ARGS...: EXPECT is "pass" (exit 0 and a
# " No Errors" line), "probe" (exit 0), "fail" (non-zero exit before the time limit, no
# " No Errors") or "singleton" (srun without PMI: exit 0, every task a job of one, warned).
run() {
    name=$1 expect=$2 np=$3
    shift 3
    mpi=--mpi=pmi2
    [ "$expect" = singleton ] && mpi=--mpi=none
    vars=""
    while [ "$1" != "--" ]; do
        vars="$vars $1"
        shift
    done
    shift
    (cd "$(dirname "$1")" && env $vars timeout -k 5 "$limit" srun "$mpi" -K -O -n "$np" "$@") \
        >"$out" 2>&1
    rc=$?
    ok=1
    case $expect in
    pass) [ "$rc" -eq 0 ] && grep -q '^ No Errors$' "$out" || ok=0 ;;
    probe) [ "$rc" -eq 0 ] || ok=0 ;;
    fail) [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && ! grep -q '^ No Errors$' "$out" || ok=0 ;;
    singleton)
        [ "$rc" -eq 0 ] && [ "$(grep -c '^ No Errors$' "$out")" -eq "$np" ] &&
            grep -q "without a PMI-2 server" "$out" || ok=0
        ;;
    esac
    if [ "$ok" -eq 1 ]; then
        pass=$((pass + 1))
        echo "ok   $name (np $np)"
    else
        failures="$failures $name/$np"
        echo "FAIL $name (np $np): exit status $rc"
        sed 's/^/     /' "$out" | tail -20
    fi
}

echo "check-slurm: $(srun --version), $SLURM_CONF"
for np in 1 2 3 4; do
    run env/init_basic pass $np -- "$tests/env/init_basic"
    run env/attr_predefined pass $np -- "$tests/env/attr_predefined"
    run pt2pt/sendrecv_basic pass $np -- "$tests/pt2pt/sendrecv_basic"
    run coll/bcast pass $np -- "$tests/coll/bcast"
    run coll/reduce pass $np -- "$tests/coll/reduce"
    run comm/comm_split pass $np -- "$tests/comm/comm_split"
    run group/group_basic pass $np -- "$tests/group/group_basic"
done
for np in 2 3 4; do
    run env/procname pass $np -- "$tests/env/procname"
    run env/info_env pass $np -- "$tests/env/info_env"
    run pt2pt/probe pass $np -- "$tests/pt2pt/probe"
    run coll/alltoall pass $np -- "$tests/coll/alltoall"
    run rma/fence_put_get pass $np -- "$tests/rma/fence_put_get"
    run io/file_view pass $np -- "$tests/io/file_view"
    run topo/topo_cart pass $np -- "$tests/topo/topo_cart"
    run dynproc/port_connect pass $np -- "$tests/dynproc/port_connect"
    run pmi/kvs_pmi2 probe $np MANIFOLD_PMI=2 -- "$probe" kvs 2
    run pmi/kvs_pmi1 probe $np MANIFOLD_PMI=1 -- "$probe" kvs 1
done
run part/part_concurrent pass 2 -- "$tests/part/part_concurrent"
run threads/init_thread_multiple pass 3 MTEST_THREAD_LEVEL=multiple -- "$tests/env/init_thread"
run dynproc/join pass 2 -- "$tests/dynproc/join"
run pmi/names_pmi2 probe 3 MANIFOLD_PMI=2 -- "$probe" names
run pmi/names_pmi1 probe 3 MANIFOLD_PMI=1 -- "$probe" names
# Spawned jobs are new srun steps: they need CPUs the allocation lets them share.
run dynproc/spawn pass 2 SLURM_OVERLAP=1 SLURM_OVERCOMMIT=1 -- "$tests/dynproc/spawn"
run dynproc/dynproc_errors pass 2 SLURM_OVERLAP=1 SLURM_OVERCOMMIT=1 MANIFOLD_CONNECT_TIMEOUT=5 \
    -- "$tests/dynproc/dynproc_errors"
run env/abort fail 1 -- "$tests/env/abort"
# rank 1 returns from main without MPI_Finalize while rank 0 waits for it: exit 0, so -K does
# not stop the step; the library's exit handler aborts it (a hang ends at the time limit: 124)
run env/exit_unfinalized fail 2 -- "$tree/tests/launcher/mf_exit_unfinalized"
run env/abort fail 3 -- "$tests/env/abort"
run singleton/init_basic singleton 2 -- "$tests/env/init_basic"

if [ -n "$failures" ]; then
    echo "check-slurm: $pass passed, failed:$failures"
    exit 1
fi
echo "check-slurm: all $pass runs passed"
