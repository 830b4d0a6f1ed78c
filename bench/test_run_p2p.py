#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of run_p2p.py's arithmetic: parsing ucx_perftest's CSV (and its MiB/s), medians
over launches, the faster peer, ratios, the PASS/MISS decisions and which ucx_perftest runs.
No MPI is started.
Run with: python3 -m unittest bench/test_run_p2p.py
"""

import os
import sys
import tempfile
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_p2p  # noqa: E402  (the path is set just above)

PERFTEST_OUTPUT = """\
+--------------+
iterations,50.0_percentile_lat,avg_lat,overall_lat,avg_bw,overall_bw,avg_mr,overall_mr
2000,80.663,82.493,82.493,12122.23,12122.23,12122,12122
"""


def launch(size, median, ok=True):
    return {"ok": ok, "results": [{"size": size, "median": median}]} if ok else {"ok": False}


def summaries(lat, bw, rate):
    return {"p2p_latency": [{"size": 8, "median": lat, "min": lat, "max": lat}],
            "p2p_bandwidth": [{"size": run_p2p.MIB, "median": bw, "min": bw, "max": bw}],
            "p2p_msgrate": [{"size": 8, "median": rate, "min": rate, "max": rate}]}


def mpi(key):
    return {"key": key, "label": key, "available": True}


class PerftestCsvTest(unittest.TestCase):
    def test_final_line_is_parsed_and_mib_converted(self):
        numbers = run_p2p.parse_perftest_csv(PERFTEST_OUTPUT)
        self.assertEqual(numbers["iters"], 2000)
        self.assertAlmostEqual(numbers["lat_us"], 82.493)
        self.assertAlmostEqual(numbers["bw_mb_s"], 12122.23 * 1048576 / 1e6)
        self.assertEqual(numbers["msg_rate"], 12122.0)

    def test_output_without_numbers_is_none(self):
        self.assertIsNone(run_p2p.parse_perftest_csv("client failed. connect() failed\n"))


class SummaryTest(unittest.TestCase):
    def test_median_over_launches_skips_failures(self):
        rows = run_p2p.summarize_mpi([launch(8, 3.0), launch(8, 1.0), launch(8, 0, ok=False),
                                      launch(8, 2.0)])
        self.assertEqual(rows, [{"size": 8, "median": 2.0, "min": 1.0, "max": 3.0,
                                 "launches": 3}])

    def test_rotation_changes_who_goes_first(self):
        self.assertEqual(run_p2p.rotate(["a", "b", "c"], 1), ["b", "c", "a"])
        self.assertEqual(run_p2p.rotate(["a", "b", "c"], 3), ["a", "b", "c"])


class TableAndTargetsTest(unittest.TestCase):
    def table(self, manifold):
        mpis = [mpi("manifold"), mpi("mpich"), mpi("openmpi")]
        sums = {"manifold": summaries(*manifold), "mpich": summaries(1.0, 9000.0, 2e6),
                "openmpi": summaries(0.5, 10000.0, 3e6)}
        floor = {"p2p_latency": {"median": 0.4, "min": 0.4, "max": 0.4},
                 "p2p_bandwidth": {"median": 12000.0, "min": 12000.0, "max": 12000.0},
                 "p2p_msgrate": {"median": 9e6, "min": 9e6, "max": 9e6}}
        return run_p2p.build_table(mpis, sums, floor)

    def test_faster_peer_depends_on_direction(self):
        table = self.table((0.5, 11000.0, 3e6))
        self.assertEqual(table["faster_peer"], {"p2p_latency": 0.5, "p2p_bandwidth": 10000.0,
                                                "p2p_msgrate": 3e6})
        row = table["rows"][0]
        self.assertAlmostEqual(row["p2p_latency"]["vs_ucx_perftest"], 1.25)
        self.assertAlmostEqual(row["p2p_bandwidth"]["vs_faster_peer"], 1.1)

    def test_all_targets_pass_at_their_limits(self):
        targets = run_p2p.check_targets(self.table((0.5, 10800.0, 3e6)))
        # The last two pair launches by placement, which these launches did not probe.
        self.assertEqual([t["status"] for t in targets], ["PASS"] * 4 + ["n/a"] * 2)

    def test_each_target_misses_past_its_limit(self):
        targets = run_p2p.check_targets(self.table((0.53, 10700.0, 2.9e6)))
        self.assertEqual([t["status"] for t in targets], ["MISS"] * 4 + ["n/a"] * 2)
        self.assertAlmostEqual(targets[0]["ratio"], 0.53 / 0.4)

    def test_paired_ratios_decide_when_present(self):
        table = self.table((0.6, 10800.0, 3e6))  # its medians miss the latency targets
        paired = {"manifold": {"p2p_latency": {"vs_ucx_perftest": 1.25, "vs_faster_peer": 0.9}}}
        targets = run_p2p.check_targets(table, paired)
        self.assertEqual([t["status"] for t in targets[:4]], ["PASS"] * 4)
        self.assertEqual(targets[0]["status_of_medians"], "MISS")

    def test_without_manifold_targets_are_not_applicable(self):
        sums = {"mpich": summaries(1.0, 9000.0, 2e6)}
        table = run_p2p.build_table([mpi("mpich")], sums, {})
        self.assertEqual({t["status"] for t in run_p2p.check_targets(table)}, {"n/a"})


class PairedRatiosTest(unittest.TestCase):
    def test_ratios_are_taken_within_each_repetition(self):
        # ucx_perftest happened to run in the machine's fast state in repetition 1 while
        # Manifold did not: only repetition 1's ratio is off, and the median ignores it.
        def rec(rep, value):
            return {"ok": True, "rep": rep, "results": [{"size": 8, "median": value}]}

        def perf(rep, value):
            return {"ok": True, "rep": rep, "lat_us": value, "bw_mb_s": value, "msg_rate": value}

        runs = {name: {} for name in ("manifold", "mpich", "ucx_perftest")}
        for name in run_p2p.BENCHMARKS:
            runs["manifold"][name] = [rec(0, 0.2), rec(1, 0.6), rec(2, 0.6)]
            runs["mpich"][name] = [rec(0, 0.4), rec(1, 1.2), rec(2, 1.2)]
            runs["ucx_perftest"][name] = [perf(0, 0.1), perf(1, 0.1), perf(2, 0.3)]
        paired = run_p2p.paired_ratios(runs, [mpi("manifold"), mpi("mpich")])
        lat = paired["manifold"]["p2p_latency"]
        self.assertAlmostEqual(lat["vs_ucx_perftest"], 2.0)
        self.assertAlmostEqual(lat["vs_faster_peer"], 0.5)
        self.assertEqual(lat["repetitions"], 3)


class PlacementTest(unittest.TestCase):
    def test_launches_are_matched_by_placement_not_repetition(self):
        # Manifold met the far placement (400 ns) where the peer met the near one, and the
        # other way round: paired by repetition it looks 2x slower and 2x faster, matched by
        # placement it is level with the peer's launches in the same place.
        mine = [(0.4, 400.0), (0.1, 100.0), (0.1, 110.0)]
        peer = [(0.1, 105.0), (0.4, 420.0), (0.1, 95.0)]
        ratio, matched = run_p2p.same_placement_ratio(mine, [peer])
        self.assertAlmostEqual(ratio, 1.0)
        self.assertEqual(matched, 3)

    def test_faster_peer_and_unmatched_launches(self):
        mine = [(0.3, 300.0), (0.2, 150.0)]  # 150 ns: no peer launch within 1.25x
        slow = [(0.6, 290.0)]
        fast = [(0.2, 310.0), (0.4, 330.0)]
        ratio, matched = run_p2p.same_placement_ratio(mine, [slow, fast])
        self.assertAlmostEqual(ratio, 0.3 / 0.3)  # the faster peer's median of 0.2 and 0.4
        self.assertEqual(matched, 1)
        rate, _ = run_p2p.same_placement_ratio([(9.0, 300.0)], [slow, fast], lower_better=False)
        self.assertAlmostEqual(rate, 9.0 / 0.6)
        self.assertEqual(run_p2p.same_placement_ratio([(1.0, 100.0)], [slow]), (None, 0))

    def test_paired_ratios_carry_the_placement_ratio(self):
        def rec(rep, value, placed):
            return {"ok": True, "rep": rep,
                    "results": [{"size": 8, "median": value, "placement_ns": placed}]}

        runs = {"manifold": {}, "openmpi": {}, "ucx_perftest": {}}
        for name in run_p2p.BENCHMARKS:
            runs["manifold"][name] = [rec(0, 0.4, 400.0), rec(1, 0.1, 100.0)]
            runs["openmpi"][name] = [rec(0, 0.1, 100.0), rec(1, 0.5, 400.0)]
            runs["ucx_perftest"][name] = []
        paired = run_p2p.paired_ratios(runs, [mpi("manifold"), mpi("openmpi")])
        lat = paired["manifold"]["p2p_latency"]
        self.assertAlmostEqual(lat["vs_faster_peer"], (4.0 + 0.2) / 2)
        self.assertAlmostEqual(lat["vs_faster_peer_same_placement"], (0.8 + 1.0) / 2)
        self.assertEqual(lat["launches_matched_by_placement"], 2)


class CliffTest(unittest.TestCase):
    def test_a_latency_cliff_is_reported(self):
        summary = [{"size": 4096, "median": 1.0}, {"size": 8192, "median": 1.9},
                   {"size": 16384, "median": 4.5}, {"size": 32768, "median": 5.0}]
        cliffs = run_p2p.check_cliffs(summary)
        self.assertEqual([c["size"] for c in cliffs], [8192])
        self.assertAlmostEqual(cliffs[0]["ratio"], 4.5 / 1.9)

    def test_no_cliff_when_doubling_at_most_doubles(self):
        summary = [{"size": 0, "median": 0.5}, {"size": 1, "median": 0.2},
                   {"size": 2, "median": 0.4}]
        self.assertEqual(run_p2p.check_cliffs(summary), [])


class FormatTest(unittest.TestCase):
    def test_spread_is_half_the_range_in_percent(self):
        self.assertEqual(run_p2p.fmt_cell(1.0, 0.9, 1.1, "p2p_latency"), "1.000 ±10%")
        self.assertEqual(run_p2p.fmt_cell(None, None, None, "p2p_latency"), "-")


class FindUcxTest(unittest.TestCase):
    def test_perftest_of_the_build_ucx(self):
        with tempfile.TemporaryDirectory() as tmp:
            prefix, build = Path(tmp) / "ucx", Path(tmp) / "build"
            (prefix / "bin").mkdir(parents=True)
            build.mkdir()
            perftest = prefix / "bin" / "ucx_perftest"
            perftest.write_text("#!/bin/sh\n")
            perftest.chmod(0o755)
            info = prefix / "bin" / "ucx_info"
            info.write_text("#!/bin/sh\necho '# Library version: 9.9.9'\n")
            info.chmod(0o755)
            (build / "CMakeCache.txt").write_text(
                "// comment\nUCX_PREFIX:INTERNAL=%s\nUCX_LIBDIR:INTERNAL=%s/lib\n"
                "UCX_VERSION:INTERNAL=9.9.9\n" % (prefix, prefix))
            ucx = run_p2p.find_ucx(build)
            self.assertEqual(ucx["perftest"], str(perftest))
            self.assertEqual(ucx["build"]["version"], "9.9.9")
            self.assertEqual(ucx["perftest_ucx"], "9.9.9")
            self.assertTrue(ucx["env"]["LD_LIBRARY_PATH"].startswith(f"{prefix}/lib"))

    def test_ucx_info_versions(self):
        self.assertEqual(run_p2p.parse_ucx_info_version(
            "# Library version: 1.22.0\n# Library path: x\n# API headers version: 1.22.0\n"),
            "1.22.0")
        self.assertEqual(run_p2p.parse_ucx_info_version(
            "# Version 1.13.1\n# Git branch '<unknown>', revision 0000000\n"), "1.13.1")
        self.assertIsNone(run_p2p.parse_ucx_info_version("ucx_info: error\n"))

    def test_without_a_build_falls_back_to_path(self):
        with tempfile.TemporaryDirectory() as tmp:
            old = os.environ.get("PATH", "")
            os.environ["PATH"] = tmp
            try:
                ucx = run_p2p.find_ucx(Path(tmp) / "none")
            finally:
                os.environ["PATH"] = old
            self.assertIsNone(ucx["perftest"])
            self.assertEqual(ucx["env"], {})


if __name__ == "__main__":
    unittest.main()
