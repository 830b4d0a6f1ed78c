#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Build mpi4py (the pinned sdist from PyPI) against a Manifold build tree's mpicc_abi and run its
# test suite under our mpiexec at 1 and 2 processes, one mpiexec per test module. The modules
# and tests named in tests/mpi4py/expected_failures.txt are left out (with the reason there).
# Fails when any other module fails or runs past its time limit.
#
#   tools/check-mpi4py.sh <build tree> [module ...]      (make check-mpi4py)
#
# Environment: MF_MPI4PY_NP (default "1 2"), MF_MPI4PY_TIMEOUT (seconds per module, 300).
set -eu

tree=$(cd "${1:?usage: $0 <build tree> [module ...]}" && pwd)
shift
top=$(cd "$(dirname "$0")/.." && pwd)
version=4.1.2
venv=$top/build/venv-mpi4py
src=$top/build/mpi4py-src/mpi4py-$version
list=$top/tests/mpi4py/expected_failures.txt
nps=${MF_MPI4PY_NP:-1 2}
limit=${MF_MPI4PY_TIMEOUT:-300}

# The build: once per tree (the library is found through RUNPATH, so a rebuilt Manifold needs
# no new mpi4py; another tree does).
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet setuptools wheel "cython>=3.0"
fi
# numpy: with it mpi4py's tests cover every numpy type (long double in external32, structs of
# Fortran 90 types), which found two bugs that the tests without it did not reach
if ! "$venv/bin/python" -c "import numpy" 2>/dev/null; then
    "$venv/bin/pip" install --quiet numpy
fi
if [ ! -d "$src" ]; then
    mkdir -p "$top/build/mpi4py-src"
    "$venv/bin/pip" download --quiet --no-deps --no-binary :all: --no-build-isolation \
        -d "$top/build/mpi4py-src" "mpi4py==$version"
    tar -xzf "$top/build/mpi4py-src/mpi4py-$version.tar.gz" -C "$top/build/mpi4py-src"
fi
stamp=$venv/.manifold-tree
if [ "$(cat "$stamp" 2>/dev/null)" != "$tree" ]; then
    echo "check-mpi4py: building mpi4py $version with $tree/bin/mpicc_abi (a few minutes)"
    rm -rf "$src/build"
    MPICC=$tree/bin/mpicc_abi "$venv/bin/pip" install --quiet --no-build-isolation --no-deps \
        --force-reinstall "$src"
    # The extension must need the tree's library (a link while the library was being rebuilt
    # gave one that needs none).
    ext=$(find "$venv/lib" -name 'MPI.*.so' | head -n 1)
    if ! readelf -d "$ext" | grep -q 'libmpi_abi'; then
        echo "check-mpi4py: $ext is not linked with libmpi_abi; run again" >&2
        exit 1
    fi
    echo "$tree" >"$stamp"
fi

# The skip list: "module  # reason" leaves a module out, "module:pattern  # reason" the tests
# whose names contain the pattern.
skip_modules=$(sed -e 's/#.*//' "$list" | awk 'NF && $1 !~ /:/ {print $1}')
skip_tests=$(sed -e 's/#.*//' "$list" | awk 'NF && $1 ~ /:/ {print $1}')

if [ $# -gt 0 ]; then
    modules=$*
else
    modules=$(cd "$src/test" && ls test_*.py | sed 's/\.py$//')
fi

export UCX_MEM_MALLOC_HOOKS=no UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_EVENTS=no
failed=""
start=$(date +%s)
cd "$src/test"
for np in $nps; do
    for m in $modules; do
        skip=0
        for s in $skip_modules; do
            [ "$s" = "$m" ] && skip=1
        done
        [ $skip = 1 ] && continue
        xargs=""
        for t in $skip_tests; do
            [ "${t%%:*}" = "$m" ] && xargs="$xargs -x ${t#*:}"
        done
        t0=$(date +%s)
        # shellcheck disable=SC2086
        if "$tree/bin/mpiexec" -n "$np" --timeout "$limit" "$venv/bin/python" main.py -q \
            $xargs "$m" >"$top/build/mpi4py-src/$m.np$np.log" 2>&1; then
            result=ok
        else
            result=FAIL
            failed="$failed $m(np$np)"
        fi
        printf '%-24s np %s  %-4s %4ss\n' "$m" "$np" "$result" $(($(date +%s) - t0))
    done
done
echo "check-mpi4py: $(($(date +%s) - start)) s; logs in build/mpi4py-src/<module>.np<N>.log"
if [ -n "$failed" ]; then
    echo "check-mpi4py: FAILED:$failed"
    exit 1
fi
echo "check-mpi4py: all modules passed"
