#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The demonstration behind `make demo`: compile a program with our mpicc, run it under our
# mpiexec, then a short latency and bandwidth run between two processes.
set -eu
build=${1:-build/release}
bin=$build/bin
out=$build/demo
mkdir -p "$out"

echo "== compiling examples/hello_ring.c with $bin/mpicc"
"$bin/mpicc" -O2 -o "$out/hello_ring" examples/hello_ring.c -lpthread
echo "== $bin/mpiexec -n 4 $out/hello_ring"
"$bin/mpiexec" -n 4 --timeout 60 "$out/hello_ring"

echo
echo "== point-to-point latency between 2 processes (median of 5 timed loops, microseconds)"
"$bin/mpiexec" -n 2 --timeout 120 "$build/bench/p2p_latency" --max 4194304 --reps 5
echo
echo "== streaming bandwidth between 2 processes (window of 64 messages, MB/s)"
"$bin/mpiexec" -n 2 --timeout 120 "$build/bench/p2p_bandwidth" --max 4194304 --reps 5
echo
echo "For the side-by-side comparison with MPICH, Open MPI and ucx_perftest: make bench"
