#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks that the benchmarks record the placement probe where the runners pair by it.

Usage: check_placement.py MPIEXEC P2P_LATENCY COLL_LATENCY

On two ranks every result of p2p_latency and coll_latency must carry "placement_ns", the
fastest cache-line round trip between the ranks (bench_util.c, mf_bench_placement_ns), as a
plausible number: above zero and below 10 ms, which even two ranks sharing one busy core meet.
On three ranks coll_latency must leave it out, since the probe is defined for two.
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def run(cmd_head, prog, np_, args):
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        cmd = [cmd_head, "-n", str(np_), "--timeout", "100", prog, *args, "--json", str(out)]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stdout}\n"
                             f"{done.stderr}")
        return json.loads(out.read_text())["results"]


def main(argv):
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    mpiexec, p2p, coll = argv[1:]
    small = ["--min", "8", "--max", "16", "--iters", "20", "--reps", "3", "--warmup", "3"]
    results = run(mpiexec, p2p, 2, small) + run(mpiexec, coll, 2, ["--only", "Bcast"] + small)
    bad = [r for r in results if not 0 < r.get("placement_ns", 0) < 1e7]
    if bad or len(results) < 4:
        print(f"two ranks: results without a plausible placement_ns: {bad or results}")
        return 1
    three = run(mpiexec, coll, 3, ["--only", "Bcast"] + small)
    if not three or any("placement_ns" in r for r in three):
        print(f"three ranks: placement_ns where no probe runs: {three}")
        return 1
    print("placement probes: " + ", ".join(f"{r['placement_ns']:.0f}" for r in results) + " ns")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
