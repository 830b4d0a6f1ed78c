#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Compiles an MPI test program with MPICH 5.0.2's mpicc_abi (MPICH's standard-ABI header and
# libmpi_abi.so.1), checks that the binary's only MPI dependency is libmpi_abi.so.1, then runs
# the very same binary under our mpiexec with our library first on LD_LIBRARY_PATH.
# Usage: abi_binary.sh <mpich-venv> <test.c> <mtest-dir> <manifold-build-dir> <runtest.sh>
set -eu
venv=$1 src=$2 util=$3 build=$4 runtest=$5
if [ ! -x "$venv/bin/mpicc_abi" ]; then
    echo "mpitest: FAIL: $venv/bin/mpicc_abi is missing: run tools/install-deps.sh"
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# MPICH's wrapper must not pick up our sanitizer flags; the binary is plain.
"$venv/bin/mpicc_abi" -O1 -I"$util" -o "$work/prog" "$src" "$util/mtest.c"
deps=$(readelf -d "$work/prog" | grep NEEDED | grep -c mpi || true)
if ! readelf -d "$work/prog" | grep -q 'NEEDED.*libmpi_abi.so.1'; then
    echo "mpitest: FAIL: the binary does not depend on libmpi_abi.so.1"
    exit 1
fi
if [ "$deps" -ne 1 ]; then
    echo "mpitest: FAIL: the binary has $deps MPI dependencies, expected only libmpi_abi.so.1"
    exit 1
fi
echo "built with MPICH's mpicc_abi; running on $build/lib/libmpi_abi.so.1"
# A sanitizer build of our library needs its runtime loaded before everything else.
preload=$(ldd "$build/lib/libmpi_abi.so.1" | awk '/lib(asan|tsan)\.so/ {print $3}')
exec sh "$runtest" pass 60 "$build/bin/mpiexec" -n 2 --env LD_LIBRARY_PATH="$build/lib" \
    --env LD_PRELOAD="$preload" "$work/prog"
