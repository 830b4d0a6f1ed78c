#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs coll_latency at a few small sizes and checks what it measured, not how fast.

Usage: check_coll_latency.py MPIEXEC COLL_LATENCY

Three processes, sizes 8-64 B: every collective, composition and "2 x n/2" must appear once
at each size it applies to (reductions at whole MPI_INT32_T elements, halves at whole
elements of both halves, Barrier once), and in the group order the runner's pairing relies
on: at each size a collective is followed by its bounds. The program checks its results
itself (a wrong sum or block aborts the job, which fails this test). Then `--ab` (a control
variable set for extra loops of each collective): with a writable variable every collective
is followed by its "[NAME=VALUE]" twin, checked like the rest; a variable that does not exist
or a value that is not one of its items ends the program with status 2 and says why.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

COLLECTIVES = ["Bcast", "Reduce", "Allreduce", "Gather", "Scatter", "Allgather", "Alltoall",
               "Reduce_scatter_block", "Scan"]
COMPOSITION = {"Allreduce": "Reduce+Bcast", "Allgather": "Gather+Bcast",
               "Reduce_scatter_block": "Reduce+Scatter"}
REDUCTIONS = {"Reduce", "Allreduce", "Reduce_scatter_block", "Scan", "Reduce+Bcast",
              "Reduce+Scatter"}
SIZES = [8, 16, 32, 64]


def expected():
    out = [("Barrier", 0)]
    for size in SIZES:
        for coll in COLLECTIVES:
            group = [coll] + ([COMPOSITION[coll]] if coll in COMPOSITION else [])
            for name in group:
                if name not in REDUCTIONS or size % 4 == 0:
                    out.append((name, size))
            unit = 8 if coll in REDUCTIONS else 2
            if size % unit == 0:
                out.append((coll + " 2 x n/2", size))
    return out


AB = "MANIFOLD_COLL_REDUCE=binomial"


def check_ab(mpiexec, prog):
    """1 when --ab misbehaves (printed), else 0."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "ab.json"
        cmd = [mpiexec, "-n", "3", "--timeout", "100", prog, "--only", "Bcast,Reduce", "--min",
               "8", "--max", "16", "--iters", "20", "--reps", "3", "--warmup", "3", "--ab", AB,
               "--json", str(out)]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            print(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
            return 1
        got = [(r["collective"], r["size"]) for r in json.loads(out.read_text())["results"]]
    want = [(name, size) for size in (8, 16) for coll in ("Bcast", "Reduce")
            for name in (coll, f"{coll} [{AB}]")]
    if got != want:
        print(f"--ab {AB}: measured {got}, expected {want}")
        return 1
    for bad, why in (("MANIFOLD_NO_SUCH_VARIABLE=1", "no integer control variable"),
                     ("MANIFOLD_COLL_REDUCE=no_such_algorithm", "is not a value of")):
        cmd = [mpiexec, "-n", "2", "--timeout", "100", prog, "--min", "8", "--max", "8",
               "--ab", bad]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if run.returncode != 2 or why not in run.stderr:
            print(f"--ab {bad}: status {run.returncode} (expected 2), stderr:\n{run.stderr}")
            return 1
    return 0


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    mpiexec, prog = argv[1], argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "coll.json"
        cmd = [mpiexec, "-n", "3", "--timeout", "100", prog, "--min", "8", "--max", "64",
               "--iters", "20", "--reps", "3", "--warmup", "3", "--json", str(out)]
        run = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if run.returncode != 0:
            print(f"{' '.join(cmd)} failed ({run.returncode}):\n{run.stdout}\n{run.stderr}")
            return 1
        doc = json.loads(out.read_text())
    got = [(r["collective"], r["size"]) for r in doc["results"]]
    want = expected()
    if got != want:
        print("measured (collective, size), in order:")
        for i in range(max(len(got), len(want))):
            g = got[i] if i < len(got) else None
            w = want[i] if i < len(want) else None
            print(f"  {'   ' if g == w else '!! '}got {g}, expected {w}")
        return 1
    bad = [r for r in doc["results"] if not (r["min"] <= r["median"] <= r["max"]) or r["iters"] < 1]
    if bad or doc["nprocs"] != 3 or doc["reps"] != 3:
        print(f"inconsistent results: {bad or doc}")
        return 1
    if check_ab(mpiexec, prog):
        return 1
    print(f"coll_latency: {len(got)} measurements in group order; --ab as documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
