#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side runner of the multithreaded benchmarks (mt_msgrate, mt_one_receiver, mt_init).

Each suite is a list of cases (an MPI, a process count, a program with its options and the
environment it runs under); every repetition runs every case once, in an order rotated per
repetition, and the report gives medians over repetitions and ratios taken within each
repetition (paired), with PASS/MISS for the targets. Manifold runs from its build tree; MPICH
5.0.2 (PyPI, mpicc_abi) with its defaults and with MPIR_CVAR_CH4_NUM_VCIS=T+1; Open MPI 5
(PyPI); MPICH from Debian when installed (tools/install-deps.sh --with-debian-mpich). A missing
MPI is skipped with the reason. Processes, compilation and launchers come from run_p2p.py.
Writes JSON and, when matplotlib can be installed into build/venv-plot, PNG plots.
Python standard library only (the plots run in that venv).
"""

import argparse
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_p2p as p2p  # noqa: E402  (the path is set just above)

REPO_DIR = p2p.REPO_DIR
BENCHMARKS = {name: {"extra": ["bench_mt.c"]} for name in
              ("mt_msgrate", "mt_one_receiver", "mt_init")}
MODES = ("everywhere", "ser_comm", "par_comm", "tags")
SUITES = ("scaling", "lock", "ablation", "init", "mismatch", "one_receiver", "sharing",
          "targets")
ABLATION = [  # label, Manifold environment
    ("all optimisations", {}),
    ("progress polls all VCIs", {"MANIFOLD_VCI_PROGRESS": "all"}),
    ("one shared request cache", {"MANIFOLD_VCI_REQUEST_CACHE": "0"}),
    ("VCI state packed", {"MANIFOLD_VCI_ALIGN": "0"}),
    ("one global lock", {"MANIFOLD_THREAD_CS": "global"}),
]
SHARING = [("context", None), ("worker", None), ("shared", "1"), ("shared", "2")]


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("build_dir", nargs="?", default=str(REPO_DIR / "build" / "release"),
                   help="Manifold build tree (default: build/release)")
    p.add_argument("--suites", default="targets",
                   help="comma-separated suites, or 'all' (" + ", ".join(SUITES) + ")")
    p.add_argument("--peers", default="mpich,mpich-vci,openmpi,debian-mpich",
                   help="peers: mpich, mpich-vci, openmpi, debian-mpich, or 'none'")
    p.add_argument("--mpich-venv", default=os.environ.get(
        "MF_MPICH_VENV", str(REPO_DIR / "build" / "venv-mpich")))
    p.add_argument("--openmpi-venv", default=os.environ.get(
        "MF_OPENMPI_VENV", str(REPO_DIR / "build" / "venv-openmpi")))
    p.add_argument("--openmpi-pml", choices=("ucx", "ob1"), default="ucx")
    p.add_argument("--debian-mpich-cc", default="/usr/bin/mpicc.mpich")
    p.add_argument("--debian-mpich-run", default="/usr/bin/mpiexec.mpich")
    p.add_argument("--threads", default="1,2,4", help="thread counts (default 1,2,4)")
    p.add_argument("--sizes", default="8,64,512,4k,64k",
                   help="message sizes of the scaling suite (default 8,64,512,4k,64k)")
    p.add_argument("--vci-counts", default="1,2,4,8,16,32,64",
                   help="VCI counts of the init suite (default 1..64 in powers of 2)")
    p.add_argument("--reps", type=int, default=5, help="launches per case (default 5)")
    p.add_argument("--inner-reps", type=int, default=3,
                   help="timed loops inside each launch; its median counts (default 3)")
    p.add_argument("--seconds", type=float, default=0.3,
                   help="length of one timed loop (default 0.3 s)")
    p.add_argument("--window", type=int, default=64)
    p.add_argument("--pin", choices=("0", "1"), default="1",
                   help="bind threads to cores round-robin (default 1)")
    p.add_argument("--quick", action="store_true",
                   help="2 repetitions, sizes 8 and 64k, threads 1,2, VCI counts 1,8,64")
    p.add_argument("--timeout", type=float, default=120.0)
    p.add_argument("--out", default=str(REPO_DIR / "build" / "bench" / "threads_results.json"))
    p.add_argument("--work-dir", default=str(REPO_DIR / "build" / "bench-peers-threads"))
    p.add_argument("--plot-venv", default=str(REPO_DIR / "build" / "venv-plot"))
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--plot-only", metavar="JSON", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.reps = min(args.reps, 2)
        args.sizes, args.threads, args.vci_counts = "8,64k", "1,2", "1,8,64"
    args.suites = list(SUITES) if args.suites == "all" else args.suites.split(",")
    for s in args.suites:
        if s not in SUITES:
            p.error(f"unknown suite '{s}'")
    args.peers = [x for x in args.peers.split(",") if x and x != "none"]
    args.threads = [int(x) for x in args.threads.split(",")]
    args.vci_counts = [int(x) for x in args.vci_counts.split(",")]
    args.build_opt, args.no_swap, args.ucx_tls = None, True, None
    return args


# ---------------------------------------------------------------------------------------------
# Parsing (tested by test_run_threads.py)


def parse_result_lines(text):
    """The JSON objects the programs print one per line (other lines are ignored)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


_PAIR = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*(?:[=:]\s*|\s+)(-?\d+)")


def parse_vci_stats(text):
    """Manifold's MANIFOLD_VCI_STATS=1 lines: 'rank R vci V: key N ...' per VCI and
    'rank R vci totals: key N ...' (or a line naming 'resources') with the resource counts.
    Lenient: 'key N', 'key=N' and 'key: N' pairs all count. Returns
    {"vcis": [...], "resources": {rank: {...}}, "totals": {key: sum over VCI lines}} or None
    when there is no such line."""
    vcis, resources = [], {}
    for line in text.splitlines():
        words = line.split()
        is_totals = len(words) > 3 and words[2] == "vci" and words[3].startswith("totals")
        if len(words) >= 3 and words[0] == "rank" and words[2].startswith("vci") and not is_totals:
            rec = {k: int(v) for k, v in _PAIR.findall(line)}
            rec.setdefault("rank", _int(words[1]))
            if len(words) > 3 and words[2] == "vci":
                rec.setdefault("vci", _int(words[3].rstrip(":")))
            vcis.append(rec)
        elif is_totals or "resources" in line:
            rec = {k: int(v) for k, v in _PAIR.findall(line)}
            m = re.search(r"rank\s+(\d+)", line)
            if rec:
                resources[int(m.group(1)) if m else len(resources)] = rec
    if not vcis and not resources:
        return None
    totals = {}
    for rec in vcis:
        for k, v in rec.items():
            if k not in ("rank", "vci"):
                totals[k] = totals.get(k, 0) + v
    return {"vcis": vcis, "resources": resources, "totals": totals}


def _int(word):
    try:
        return int(word.rstrip(":,"))
    except ValueError:
        return None


def contended(stats):
    """Lock acquisitions that had to wait, summed over every VCI of every rank."""
    if not stats:
        return None
    return sum(v for k, v in stats["totals"].items() if "contended" in k)


def resource_totals(stats):
    """Resource counts summed over ranks (contexts, workers, endpoints, ...)."""
    out = {}
    for rec in (stats or {}).get("resources", {}).values():
        for k, v in rec.items():
            if k != "rank":
                out[k] = out.get(k, 0) + v
    return out


def metric(result):
    """The number of a result line that the report uses."""
    return result.get("rate", result.get("init_s"))


def value_of(record, size=None, field=None):
    """A launch's number for one size (or its only result)."""
    if not record.get("ok"):
        return None
    for res in record["results"]:
        if size is None or res.get("size") == size:
            return res.get(field) if field else metric(res)
    return None


def median_over(records, size=None, field=None):
    vals = [v for v in (value_of(r, size, field) for r in records) if v is not None]
    return statistics.median(vals) if vals else None


def paired_ratio(recs_a, recs_b, size=None, field=None):
    """Median over repetitions of a/b where both launches of the repetition worked."""
    b_by_rep = {r["rep"]: value_of(r, size, field) for r in recs_b}
    ratios = []
    for r in recs_a:
        a, b = value_of(r, size, field), b_by_rep.get(r["rep"])
        if a is not None and b:
            ratios.append(a / b)
    return statistics.median(ratios) if ratios else None


def verdict(value, limit, op):
    if value is None:
        return "n/a"
    return "PASS" if (value >= limit if op == "ge" else value <= limit) else "MISS"


def oversubscribed(cores, processes, threads):
    """More busy threads than cores: the numbers show time slicing, not the library."""
    return processes * threads > cores


# ---------------------------------------------------------------------------------------------
# The MPIs


def debian_mpich(args, env):
    mpi = p2p.new_mpi("debian-mpich", "MPICH (Debian)")
    cc, run = Path(args.debian_mpich_cc), Path(args.debian_mpich_run)
    if not cc.exists() or not run.exists():
        mpi["reason"] = (f"no {cc} or {run} (install with tools/install-deps.sh "
                         "--with-debian-mpich)")
        return mpi
    binaries, err = p2p.compile_benchmarks(str(cc), Path(args.work_dir) / "debian-mpich", env,
                                           BENCHMARKS)
    if err:
        mpi["reason"] = err
        return mpi
    mpi.update(available=True, launcher=[str(run), "-n", "2"], binaries=binaries)
    return mpi


def mpich_tuned(mpich):
    mpi = dict(mpich, key="mpich-vci", label="MPICH 5.0.2, VCIs=T+1", notes=[
        "MPIR_CVAR_CH4_NUM_VCIS = threads + 1 per launch"])
    mpi["vci_env"] = "MPIR_CVAR_CH4_NUM_VCIS"
    return mpi


def discover_mpis(args, env):
    p2p.log("preparing the MPIs ...")
    mpis = [p2p.find_manifold(args.build_dir, BENCHMARKS)]
    if "mpich" in args.peers or "mpich-vci" in args.peers:
        mpich = p2p.find_mpich(args, env, BENCHMARKS)
        if "mpich" in args.peers:
            mpis.append(mpich)
        if "mpich-vci" in args.peers:
            mpis.append(mpich_tuned(mpich))
    if "openmpi" in args.peers:
        mpis.append(p2p.find_openmpi(args, env, BENCHMARKS))
    if "debian-mpich" in args.peers:
        mpis.append(debian_mpich(args, env))
    for mpi in mpis:
        state = "ready" if mpi["available"] else "SKIPPED: " + mpi["reason"]
        p2p.log(f"  {mpi['label']:<30} {state}")
    return {m["key"]: m for m in mpis}


# ---------------------------------------------------------------------------------------------
# Cases


def case(cid, mpi, prog, np_, opts, env=None, threads=1, **meta):
    return {"id": cid, "mpi": mpi, "prog": prog, "np": np_, "opts": opts, "env": env or {},
            "threads": threads, **meta}


def rate_opts(args, mode, threads, sizes):
    return ["--mode", mode, "--threads", str(threads), "--sizes", sizes, "--window",
            str(args.window), "--seconds", str(args.seconds), "--reps", str(args.inner_reps),
            "--pin", args.pin]


def msgrate_case(args, mpi, mode, threads, sizes, env=None, tag=""):
    np_ = 2 * threads if mode == "everywhere" else 2
    t = 1 if mode == "everywhere" else threads
    cid = f"{mpi}/{mode}/T{threads}{tag}"
    return case(cid, mpi, "mt_msgrate", np_, rate_opts(args, mode, t, sizes), env, threads=t,
                mode=mode, total_threads=threads)


def peers_of(mpis):
    return [k for k, m in mpis.items() if m["available"]]


def build_cases(args, suite, mpis):
    avail = peers_of(mpis)
    man = "manifold" if "manifold" in avail else None
    cases = []
    if suite == "scaling":
        for key in avail:
            for mode in MODES:
                for t in args.threads:
                    cases.append(msgrate_case(args, key, mode, t, args.sizes))
    elif suite == "lock" and man:
        for cs in ("vci", "global"):
            for mode in ("ser_comm", "par_comm"):
                for t in args.threads:
                    cases.append(msgrate_case(args, man, mode, t, "8",
                                              {"MANIFOLD_THREAD_CS": cs}, f"/{cs}"))
    elif suite == "ablation" and man:
        t = max(args.threads)
        for label, env in ABLATION:
            cases.append(msgrate_case(args, man, "par_comm", t, "8", env, "/" + label))
    elif suite == "init":
        for key in (k for k in avail if k != "mpich-vci"):  # mpich covers the VCI counts
            var = {"manifold": "MANIFOLD_VCI_COUNT", "mpich": "MPIR_CVAR_CH4_NUM_VCIS"}.get(key)
            counts = args.vci_counts if var else [None]
            for n in counts:
                env = {var: str(n)} if var else {}
                cases.append(case(f"{key}/init/V{n}", key, "mt_init", 2, ["--comms", "4"], env,
                                  vcis=n))
    elif suite == "mismatch" and man:
        t = max(args.threads)
        for n in sorted({1, 2, max(1, t // 2), t, 2 * t}):
            cases.append(msgrate_case(args, man, "par_comm", t, "8",
                                      {"MANIFOLD_VCI_COUNT": str(n)}, f"/V{n}"))
    elif suite == "one_receiver":
        for key in avail:
            for recv in ("specific", "any"):
                for t in args.threads:
                    cases.append(case(f"{key}/one_receiver/{recv}/T{t}", key, "mt_one_receiver",
                                      2, ["--threads", str(t), "--recv", recv, "--iters", "300",
                                          "--reps", str(args.inner_reps), "--pin", args.pin],
                                      threads=t, recv=recv))
    elif suite == "sharing" and man:
        for t in args.threads:
            for sharing, workers in SHARING:
                env = {"MANIFOLD_VCI_SHARING": sharing, "MANIFOLD_VCI_STATS": "1"}
                if workers:
                    env["MANIFOLD_VCI_WORKERS"] = workers
                tag = f"/{sharing}" + (f"{workers}" if workers else "")
                cases.append(msgrate_case(args, man, "par_comm", t, "8", env, tag))
    elif suite == "targets":
        cases += target_cases(args, mpis, man)
    unique = {}
    for c in cases:
        unique.setdefault(c["id"], c)
    return list(unique.values())


def target_cases(args, mpis, man):
    cases = []
    if not man:
        return cases
    single = msgrate_case(args, man, "everywhere", 1, "8", tag="/single")
    single["opts"] += ["--thread-level", "single"]
    cases += [msgrate_case(args, man, "everywhere", 1, "8", tag="/multiple"), single]
    for t in sorted({2, 4} | set(args.threads)):
        for cs in ("vci", "global"):
            env = {"MANIFOLD_THREAD_CS": cs, "MANIFOLD_VCI_STATS": "1"}
            cases.append(msgrate_case(args, man, "par_comm", t, "8", env, f"/{cs}"))
            if t == 2:
                cases.append(msgrate_case(args, man, "ser_comm", t, "8", env, f"/{cs}"))
        cases.append(msgrate_case(args, man, "everywhere", t, "8"))
    cases.append(msgrate_case(args, man, "par_comm", 1, "8",
                              {"MANIFOLD_THREAD_CS": "global"}, "/global"))
    cases.append(msgrate_case(args, man, "par_comm", 1, "8",
                              {"MANIFOLD_THREAD_CS": "vci"}, "/vci"))
    for n in (1, 64):
        cases.append(case(f"{man}/init/V{n}", man, "mt_init", 2, ["--comms", "4"],
                          {"MANIFOLD_VCI_COUNT": str(n)}, vcis=n))
    for key in ("mpich", "mpich-vci"):
        if key in mpis and mpis[key]["available"]:
            cases.append(msgrate_case(args, key, "par_comm", 2, "8"))
    return cases


# ---------------------------------------------------------------------------------------------
# Running


def launch(args, env, mpis, c, rep):
    mpi = mpis[c["mpi"]]
    cmd = list(mpi["launcher"])
    cmd[len(cmd) - 1 - cmd[::-1].index("-n") + 1] = str(c["np"])
    cmd += [str(mpi["binaries"][c["prog"]]), *c["opts"]]
    run_env = {**env, **mpi.get("env", {}), **c["env"]}
    if mpi.get("vci_env"):
        run_env[mpi["vci_env"]] = str(c["threads"] + 1)
    start = time.monotonic()
    rc, out = p2p.run_cmd(cmd, env=run_env, timeout=args.timeout)
    rec = {"rep": rep, "rc": rc, "seconds": round(time.monotonic() - start, 2),
           "command": cmd, "env": {k: v for k, v in run_env.items()
                                   if k.startswith(("MANIFOLD_", "MPIR_CVAR_"))}}
    results = parse_result_lines(out) if rc == 0 else []
    if not results:
        rec.update(ok=False, error=p2p.tail(out))
        return rec
    rec.update(ok=True, results=results, stats=parse_vci_stats(out))
    return rec


def run_cases(args, env, mpis, cases):
    runs = {c["id"]: [] for c in cases}
    for rep in range(args.reps):
        for c in p2p.rotate(cases, rep):
            if sum(not r["ok"] for r in runs[c["id"]]) >= p2p.MAX_FAILURES:
                continue
            rec = launch(args, env, mpis, c, rep)
            runs[c["id"]].append(rec)
            p2p.log(f"  [rep {rep + 1}/{args.reps}] {c['id']:<44} {rec['seconds']:6.1f} s  "
                    + ("ok" if rec["ok"] else "FAILED"))
            if not rec["ok"]:
                p2p.log("    " + rec["error"].replace("\n", "\n    "))
    return runs


# ---------------------------------------------------------------------------------------------
# Reports


def fmt_rate(v):
    return "-" if v is None else f"{v / 1e6:8.3f} M"


def fmt_ratio(v):
    return "-" if v is None else f"{v:.2f}x"


def summarize_suite(cases, runs, cores):
    rows = []
    for c in cases:
        recs = runs.get(c["id"], [])
        sizes = sorted({r.get("size") for rec in recs if rec.get("ok")
                        for r in rec["results"] if r.get("size") is not None})
        row = {k: v for k, v in c.items() if k != "opts"}
        row["launches"] = sum(1 for r in recs if r.get("ok"))
        row["oversubscribed"] = oversubscribed(cores, c["np"], c["threads"])
        if c["prog"] == "mt_init":
            row["values"] = {f: median_over(recs, None, f) for f in
                             ("init_s", "first_comm_s", "finalize_s", "rss_init_kib",
                              "rss_comm_kib")}
        else:
            row["values"] = {str(s): median_over(recs, s) for s in sizes}
            row["rss_kib"] = median_over(recs, None, "rss_kib")
        stats = [r["stats"] for r in recs if r.get("ok") and r.get("stats")]
        if stats:
            row["contended"] = statistics.median([contended(s) or 0 for s in stats])
            row["resources"] = resource_totals(stats[-1])
        rows.append(row)
    return rows


def print_rows(suite, rows):
    p2p.log(f"\n== {suite}")
    for row in rows:
        vals = row["values"]
        if row["prog"] == "mt_init":
            text = "  ".join(f"{k}={v:.0f}" if k.startswith("rss") else f"{k}={v:.4f}"
                             for k, v in vals.items() if v is not None)
        else:
            text = "  ".join(f"{s}B:{fmt_rate(v)}" for s, v in vals.items())
            if row.get("rss_kib"):
                text += f"  rss={row['rss_kib'] / 1024:.1f} MiB"
        if row.get("contended") is not None:
            text += f"  contended={row['contended']}"
        if row.get("resources"):
            text += "  resources=" + ",".join(f"{k}:{v}" for k, v in row["resources"].items())
        over = "  (oversubscribed)" if row["oversubscribed"] else ""
        p2p.log(f"  {row['id']:<44} {text}{over}")


def evaluate_targets(runs, cores, mpis_present):
    """The issue's targets on the paired ratios. Returns a list of target records."""
    out = []

    def get(cid):
        return runs.get(cid, [])

    def add(text, value, limit, op, note=""):
        out.append({"target": text, "ratio": value, "limit": limit,
                    "status": verdict(value, limit, op), "note": note})

    m = "manifold"
    add("(1) 1 thread: MULTIPLE / SINGLE >= 0.95",
        paired_ratio(get(f"{m}/everywhere/T1/multiple"), get(f"{m}/everywhere/T1/single"),
                     8), 0.95, "ge")
    for t in (2, 4):
        over = "oversubscribed: " if oversubscribed(cores, 2, t) else ""
        for cs in ("vci", "global"):
            a = get(f"{m}/par_comm/T{t}/{cs}")
            note = over + f"{2 * t} busy threads on {cores} cores" if over else ""
            add(f"(2) par_comm T={t} ({cs} lock) / par_comm T=1 >= 0.9",
                paired_ratio(a, get(f"{m}/par_comm/T1/{cs}"), 8), 0.9, "ge", note)
            add(f"(2) par_comm T={t} ({cs} lock) / everywhere np={2 * t} >= 0.9",
                paired_ratio(a, get(f"{m}/everywhere/T{t}"), 8), 0.9, "ge", note)
    for cs in ("vci", "global"):
        par = [contended(r.get("stats")) for r in get(f"{m}/par_comm/T2/{cs}") if r.get("ok")]
        ser = [contended(r.get("stats")) for r in get(f"{m}/ser_comm/T2/{cs}") if r.get("ok")]
        par = [x for x in par if x is not None]
        ser = [x for x in ser if x is not None]
        pv = statistics.median(par) if par else None
        sv = statistics.median(ser) if ser else None
        out.append({"target": f"(3) contended lock acquisitions, T=2 ({cs} lock): par_comm "
                              "vs ser_comm", "par_comm": pv, "ser_comm": sv,
                    "status": "info" if pv is not None else "n/a",
                    "note": "" if pv is not None else "no MANIFOLD_VCI_STATS=1 lines in the "
                    "output (this build does not print them yet)"})
    add("(5) MPI_Init time, 64 VCIs / 1 VCI <= 1.1",
        paired_ratio(get(f"{m}/init/V64"), get(f"{m}/init/V1"), None, "init_s"), 1.1, "le")
    for key, label in (("mpich", "defaults"), ("mpich-vci", "VCIs=T+1")):
        note = "" if key in mpis_present else "MPICH 5.0.2 not available"
        add(f"(6) par_comm T=2: Manifold / MPICH 5.0.2 {label} >= 1.0",
            paired_ratio(get(f"{m}/par_comm/T2/vci"), get(f"{key}/par_comm/T2"), 8), 1.0,
            "ge", note)
    return out


def print_targets(targets):
    p2p.log("\nTargets (paired ratios, median over repetitions; a MISS is reported, not an "
            "error):")
    for t in targets:
        if "ratio" in t:
            p2p.log(f"  {t['status']:<5} {t['target']:<58} {fmt_ratio(t['ratio']):>7}"
                    + (f"  [{t['note']}]" if t["note"] else ""))
        else:
            p2p.log(f"  {t['status']:<5} {t['target']:<58} par_comm={t['par_comm']} "
                    f"ser_comm={t['ser_comm']}" + (f"  [{t['note']}]" if t["note"] else ""))
    p2p.log("  (4) instructions per MPI_Isend: bench/count_instructions.py")


# ---------------------------------------------------------------------------------------------
# Plots (run inside build/venv-plot, which has matplotlib)


def ensure_plot_venv(venv):
    """build/venv-plot with matplotlib; returns its python or None (with the reason logged)."""
    py = Path(venv) / "bin" / "python"
    if py.exists() and p2p.run_cmd([str(py), "-c", "import matplotlib"], timeout=60)[0] == 0:
        return py
    p2p.log(f"creating {venv} with matplotlib for the plots ...")
    rc, out = p2p.run_cmd([sys.executable, "-m", "venv", str(venv)], timeout=300)
    if rc == 0:
        rc, out = p2p.run_cmd([str(py), "-m", "pip", "install", "-q",
                               "--disable-pip-version-check", "matplotlib"], timeout=600)
    if rc != 0:
        p2p.log("matplotlib could not be installed, JSON only: " + p2p.tail(out, 3))
        return None
    return py


def plot(doc, outdir):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    written = []
    for suite, rows in doc["suites"].items():
        rows = [r for r in rows if r["values"]]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(10, 5))
        if suite == "scaling":
            for r_mpi in sorted({r["mpi"] for r in rows}):
                for mode in MODES:
                    pts = [(r["total_threads"], r["values"].get("8")) for r in rows
                           if r["mpi"] == r_mpi and r.get("mode") == mode]
                    pts = [(x, y) for x, y in pts if y]
                    if pts:
                        ax.plot(*zip(*sorted(pts)), marker="o", label=f"{r_mpi} {mode}")
            ax.set_xlabel("threads per process (everywhere: processes per side)")
            ax.set_ylabel("8 B messages/s per process pair")
            ax.legend(fontsize=7)
        elif suite == "init":
            for r_mpi in sorted({r["mpi"] for r in rows}):
                for field, style in (("init_s", "-o"), ("finalize_s", "--x")):
                    pts = sorted((r["vcis"] or 1, r["values"].get(field)) for r in rows
                                 if r["mpi"] == r_mpi and r["values"].get(field) is not None)
                    if pts:
                        ax.plot(*zip(*pts), style, label=f"{r_mpi} {field[:-2]}")
            ax.set_xscale("log", base=2)
            ax.set_xlabel("VCIs (MANIFOLD_VCI_COUNT, MPIR_CVAR_CH4_NUM_VCIS; others: default)")
            ax.set_ylabel("seconds")
            ax.legend(fontsize=7)
        else:
            key = "init_s" if suite == "init" else None
            labels, vals = [], []
            for r in rows:
                v = r["values"].get(key) if key else (r["values"].get("8") or
                                                      next(iter(r["values"].values())))
                if v is not None:
                    labels.append(r["id"])
                    vals.append(v)
            ax.barh(labels, vals)
            ax.set_xlabel("MPI_Init seconds" if key else "messages/s")
            ax.tick_params(axis="y", labelsize=6)
        ax.set_title(f"{suite} ({doc['machine'].get('cores')} cores)")
        fig.tight_layout()
        path = Path(outdir) / f"threads_{suite}.png"
        fig.savefig(path, dpi=100)
        plt.close(fig)
        written.append(str(path))
    return written


# ---------------------------------------------------------------------------------------------


def main(argv):
    args = parse_args(argv)
    if args.plot_only:
        doc = json.loads(Path(args.plot_only).read_text())
        for path in plot(doc, Path(args.plot_only).parent):
            print(path)
        return 0
    env = dict(os.environ)
    machine = p2p.machine_info()
    cores = len(p2p.usable_cores())
    p2p.log(f"{cores} usable cores: a case with more busy threads than that is oversubscribed "
            "and measures time slicing")
    mpis = discover_mpis(args, env)
    if not mpis["manifold"]["available"]:
        p2p.log("Manifold is not built: " + mpis["manifold"]["reason"])
    doc = {"schema": "manifold-bench-threads/1",
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": machine, "config": {k: v for k, v in vars(args).items()},
           "mpis": {k: {x: m.get(x) for x in ("label", "available", "reason", "notes")}
                    for k, m in mpis.items()},
           "suites": {}, "runs": {}, "targets": []}
    failed = False
    for suite in args.suites:
        cases = build_cases(args, suite, mpis)
        if not cases:
            p2p.log(f"suite {suite}: nothing to run")
            continue
        p2p.log(f"suite {suite}: {len(cases)} cases x {args.reps} repetitions")
        runs = run_cases(args, env, mpis, cases)
        failed |= any(not r["ok"] for recs in runs.values() for r in recs)
        doc["runs"][suite] = runs
        doc["suites"][suite] = summarize_suite(cases, runs, cores)
        print_rows(suite, doc["suites"][suite])
        if suite == "targets":
            doc["targets"] = evaluate_targets(runs, cores, peers_of(mpis))
            print_targets(doc["targets"])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, default=str) + "\n")
    p2p.log(f"\nresults written to {out}")
    if not args.no_plots and doc["suites"]:
        py = ensure_plot_venv(args.plot_venv)
        if py:
            rc, text = p2p.run_cmd([str(py), __file__, "--plot-only", str(out)], timeout=300)
            p2p.log(("plots: " + " ".join(text.split())) if rc == 0 else
                    "plotting failed: " + p2p.tail(text, 5))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
