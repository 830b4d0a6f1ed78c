#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side runner of the partitioned-communication benchmark (bench/part_bench.c).

The same source runs on Manifold (its build tree), MPICH 5.0.2 and Open MPI 5 (PyPI venvs,
compiled with their wrappers as run_p2p.py does). Cases: a staggered one (thread t of T
computes t * stagger / (T - 1) before its Pready, the last one late), a balanced one (every
thread computes the same), and the transfer time of one partition alone (one send of one
partition, the floor of "time after the last Pready"). Each launch prints the medians over its
iterations; the report gives medians over launches, ratios and PASS/MISS for the targets:
  - staggered: Manifold's time after the last Pready within 2x one partition's transfer;
  - balanced: Manifold's partitioned total within 1.05x of its persistent multi-send;
  - both cases: Manifold's partitioned total below MPICH's.
Python standard library only.
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
BENCHMARKS = {"part_bench": {"extra": ["bench_util.c"]}}
MODES = ("part", "persist", "single")


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
    p.add_argument("--threads", type=int, default=2, help="sending threads (default 2)")
    p.add_argument("--parts-per-thread", type=int, default=1)
    p.add_argument("--part-bytes", type=int, default=65536)
    p.add_argument("--stride", type=int, default=1,
                   help="N > 1: every mode moves doubles N apart (a derived type the MPI packs)")
    p.add_argument("--stagger-us", type=float, default=300.0,
                   help="extra computation of the last thread in the staggered case")
    p.add_argument("--compute-us", type=float, default=200.0,
                   help="computation of every thread in the balanced case")
    p.add_argument("--iters", type=int, default=100, help="timed iterations per launch")
    p.add_argument("--reps", type=int, default=5, help="launches per case and MPI (default 5)")
    p.add_argument("--quick", action="store_true", help="2 launches of 40 iterations")
    p.add_argument("--timeout", type=float, default=180.0)
    p.add_argument("--out", default=str(REPO_DIR / "build" / "bench" / "part_results.json"))
    p.add_argument("--work-dir", default=str(REPO_DIR / "build" / "bench-peers-part"))
    args = p.parse_args(argv)
    args.peers = [x for x in args.peers.split(",") if x and x != "none"]
    if args.quick:
        args.reps, args.iters = 2, 40
    if args.reps < 1 or args.iters < 1 or args.threads < 1:
        p.error("--reps, --iters and --threads must be at least 1")
    return args


def cases(args):
    """(name, program arguments) of every case."""
    common = ["--threads", str(args.threads), "--parts-per-thread", str(args.parts_per_thread),
              "--part-bytes", str(args.part_bytes), "--stride", str(args.stride),
              "--iters", str(args.iters)]
    return [
        ("staggered", common + ["--compute-us", "0", "--stagger-us", str(args.stagger_us)]),
        ("balanced", common + ["--compute-us", str(args.compute_us), "--stagger-us", "0"]),
        ("one partition", ["--threads", "1", "--parts-per-thread", "1", "--part-bytes",
                           str(args.part_bytes), "--stride", str(args.stride),
                           "--iters", str(args.iters), "--compute-us",
                           "0", "--stagger-us", "0", "--modes", "single"]),
    ]


def parse_lines(text):
    """The part_bench JSON lines of a launch's output (anything else is ignored)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("{") and line.endswith("}")):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if doc.get("bench") == "part_bench" and doc.get("mode") in MODES:
            out.append(doc)
    return out


def summarize(records):
    """records: dicts with mpi, case, rep and results (parsed lines). Returns
    {(mpi, case, mode): {"total_us": median, "after_last_us": median, "n": launches}}."""
    acc = {}
    for r in records:
        for res in r.get("results", []):
            if res.get("errors", 0):
                continue
            key = (r["mpi"], r["case"], res["mode"])
            acc.setdefault(key, {"total_us": [], "after_last_us": []})
            acc[key]["total_us"].append(res["total_us"])
            acc[key]["after_last_us"].append(res["after_last_us"])
    return {k: {"total_us": statistics.median(v["total_us"]),
                "after_last_us": statistics.median(v["after_last_us"]),
                "n": len(v["total_us"])} for k, v in acc.items()}


def ratio(a, b):
    return a / b if a is not None and b else None


def value(summary, mpi, case, mode, field):
    cell = summary.get((mpi, case, mode))
    return cell[field] if cell else None


def check_targets(summary, manifold="manifold", mpich="mpich"):
    """[(description, value, limit, verdict)]; verdict PASS, MISS or n/a."""
    out = []

    def add(desc, val, limit):
        verdict = "n/a" if val is None else ("PASS" if val <= limit else "MISS")
        out.append((desc, val, limit, verdict))

    one = value(summary, manifold, "one partition", "single", "after_last_us")
    add("staggered: after last Pready / one partition's transfer",
        ratio(value(summary, manifold, "staggered", "part", "after_last_us"), one), 2.0)
    add("balanced: partitioned total / persistent multi-send total",
        ratio(value(summary, manifold, "balanced", "part", "total_us"),
              value(summary, manifold, "balanced", "persist", "total_us")), 1.05)
    for case in ("staggered", "balanced"):
        add(f"{case}: Manifold / MPICH partitioned total",
            ratio(value(summary, manifold, case, "part", "total_us"),
                  value(summary, mpich, case, "part", "total_us")), 1.0)
        add(f"{case}: Manifold / MPICH time after the last Pready",
            ratio(value(summary, manifold, case, "part", "after_last_us"),
                  value(summary, mpich, case, "part", "after_last_us")), 1.0)
    return out


def oversubscribed(cores, threads):
    """Two processes, the sender with its threads plus the waiting main thread."""
    return 1 + threads + 1 > cores


def run_all(args, env, mpis):
    records = []
    available = [m for m in mpis if m["available"]]
    for rep in range(args.reps):
        for mpi in p2p.rotate(available, rep):
            for case, extra in cases(args):
                cmd = list(mpi["launcher"]) + [str(mpi["binaries"]["part_bench"]), *extra]
                rc, out = p2p.run_cmd(cmd, env={**env, **mpi["env"]}, timeout=args.timeout)
                rec = {"mpi": mpi["key"], "case": case, "rep": rep, "rc": rc,
                       "results": parse_lines(out) if rc == 0 else []}
                if rc != 0:
                    rec["error"] = p2p.tail(out)
                    p2p.log(f"  {mpi['label']} {case}: failed (rc {rc})\n{rec['error']}")
                records.append(rec)
        p2p.log(f"  repetition {rep + 1}/{args.reps} done")
    return records


def fmt(v, digits=1):
    return "-" if v is None else f"{v:.{digits}f}"


def print_report(mpis, summary, targets, args):
    labels = {m["key"]: m["label"] for m in mpis if m["available"]}
    print(f"\nmedians over {args.reps} launches of {args.iters} iterations; "
          f"{args.threads} threads x {args.parts_per_thread} partitions of "
          f"{args.part_bytes} B"
          f"{f' (doubles {args.stride} apart)' if args.stride > 1 else ''}; times in us")
    for case in ("staggered", "balanced"):
        print(f"\n{case}:")
        print(f"  {'MPI':<30} {'mode':<8} {'total':>9} {'after last':>11} {'part/persist':>13}")
        for key, label in labels.items():
            persist = value(summary, key, case, "persist", "total_us")
            for mode in MODES:
                tot = value(summary, key, case, mode, "total_us")
                after = value(summary, key, case, mode, "after_last_us")
                rel = fmt(ratio(tot, persist), 3) if mode == "part" else ""
                print(f"  {label:<30} {mode:<8} {fmt(tot):>9} {fmt(after):>11} {rel:>13}")
    print("\none partition alone (one send):")
    for key, label in labels.items():
        print(f"  {label:<30} {fmt(value(summary, key, 'one partition', 'single', 'after_last_us'))}")
    print("\ntargets:")
    for desc, val, limit, verdict in targets:
        print(f"  {verdict:<5} {desc}: {fmt(val, 3)} (limit {limit})")


def main(argv):
    args = parse_args(argv)
    env = p2p.base_env(args)
    cores = len(p2p.usable_cores())
    args.no_swap = True
    mpis = p2p.discover_mpis(args, env, BENCHMARKS)
    if not mpis[0]["available"]:
        p2p.log("Manifold is not usable: " + mpis[0]["reason"])
        return 1
    if oversubscribed(cores, args.threads):
        p2p.log(f"note: {cores} cores for 2 processes and {args.threads} sending threads: "
                "oversubscribed, times include scheduling delays")
    records = run_all(args, env, mpis)
    summary = summarize(records)
    targets = check_targets(summary)
    print_report(mpis, summary, targets, args)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "cores": cores, "oversubscribed": oversubscribed(cores, args.threads),
        "options": {k: v for k, v in vars(args).items() if isinstance(v, (int, float, str))},
        "mpis": [{k: m[k] for k in ("key", "label", "available", "reason", "notes")}
                 for m in mpis],
        "summary": [{"mpi": k[0], "case": k[1], "mode": k[2], **v} for k, v in summary.items()],
        "targets": [{"target": d, "value": v, "limit": lim, "verdict": ver}
                    for d, v, lim, ver in targets],
        "records": records,
    }, indent=1))
    p2p.log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
