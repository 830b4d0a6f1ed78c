#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Pins one MPI process to one core, then runs the given command: rank r goes to core
# r modulo the number of cores this process may use. The rank comes from the variable its
# launcher sets (PMI_RANK for Manifold's mpiexec and MPICH's hydra, OMPI_COMM_WORLD_RANK or
# PMIX_RANK for Open MPI), so every MPI in a side-by-side run is pinned the same way. Without a
# rank variable or without taskset the command runs unpinned, with a warning.
rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-}}}
if [ -z "$rank" ] || ! command -v taskset >/dev/null 2>&1; then
    echo "bind_rank.sh: no rank variable or no taskset, running unpinned" >&2
    exec "$@"
fi
set -- "$rank" "$@"
# The cores this process may use, in order; the rank picks one of them.
cores=$(taskset -cp $$ | sed 's/.*: //' | tr ',' '\n' |
    awk -F- '{ if (NF == 2) { for (c = $1; c <= $2; c++) print c } else print $1 }')
ncores=$(printf '%s\n' "$cores" | wc -l)
core=$(printf '%s\n' "$cores" | sed -n "$(( $1 % ncores + 1 ))p")
shift
exec taskset -c "$core" "$@"
