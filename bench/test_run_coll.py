#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of run_coll.py's arithmetic: the launcher's process count, medians over
launches, ratios to the faster peer paired within repetitions, the 1.1x PASS/MISS decision and
the self-consistency checks (against measured compositions, and the former sum of parts).
No MPI is started.
Run with: python3 -m unittest bench/test_run_coll.py
"""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_coll  # noqa: E402  (the path is set just above)


def launch(rep, np_, results, ok=True):
    if not ok:
        return {"ok": False, "rep": rep, "np": np_}
    return {"ok": True, "rep": rep, "np": np_,
            "results": [{"collective": c, "size": s, "median": m} for c, s, m in results]}


class LauncherTest(unittest.TestCase):
    def test_process_count_replaces_the_last_n(self):
        cmd = ["mpirun", "--mca", "pml", "ucx", "-n", "2"]
        self.assertEqual(run_coll.with_np(cmd, 4), ["mpirun", "--mca", "pml", "ucx", "-n", "4"])


class SummaryTest(unittest.TestCase):
    def test_median_over_launches_skips_failures(self):
        recs = [launch(0, 2, [("Bcast", 8, 3.0)]), launch(1, 2, [("Bcast", 8, 1.0)]),
                launch(2, 2, [], ok=False), launch(3, 2, [("Bcast", 8, 2.0)])]
        self.assertEqual(run_coll.summarize(recs), {(2, "Bcast", 8): 2.0})

    def test_ratio_is_paired_within_repetitions(self):
        key = (2, "Bcast", 8)
        mine = {key: {0: 2.0, 1: 1.0, 2: 1.2}}
        mpich = {key: {0: 2.0, 1: 0.5, 2: 1.0}}
        openmpi = {key: {0: 1.0, 1: 2.0}}
        # rep 0: 2/1, rep 1: 1/0.5, rep 2: 1.2/1.0 -> median 2.0
        self.assertAlmostEqual(run_coll.paired_vs_peer(mine, [mpich, openmpi])[key], 2.0)

    def test_target_is_inclusive_at_its_limit(self):
        key = (2, "Scan", 64)
        sums = {"manifold": {key: 1.1}, "mpich": {key: 1.0}, "openmpi": {key: 1.5}}
        rows = run_coll.target_report(sums, {key: 1.1}, [key])
        self.assertEqual(rows[0]["status"], "PASS")
        self.assertAlmostEqual(rows[0]["faster_peer"], 1.0)
        rows = run_coll.target_report(sums, {key: 1.11}, [key])
        self.assertEqual(rows[0]["status"], "MISS")
        self.assertEqual(run_coll.target_report(sums, {}, [key])[0]["status"], "n/a")


class PlacementTest(unittest.TestCase):
    def test_ratio_within_the_same_placement(self):
        def placed(rep, median, ns):
            return {"ok": True, "rep": rep, "np": 2,
                    "results": [{"collective": "Bcast", "size": 8, "median": median,
                                 "placement_ns": ns}]}

        key = (2, "Bcast", 8)
        mine = run_coll.by_placement([placed(0, 0.24, 400), placed(1, 0.11, 100),
                                      launch(2, 4, [("Bcast", 8, 1.0)])])
        self.assertEqual(mine, {key: [(0.24, 400), (0.11, 100)]})
        peer = run_coll.by_placement([placed(0, 0.10, 105), placed(1, 0.20, 380)])
        got = run_coll.placed_vs_peer(mine, [peer])
        self.assertAlmostEqual(got[key][0], (1.2 + 1.1) / 2)
        self.assertEqual(got[key][1], 2)
        rows = run_coll.target_report({"manifold": {key: 0.2}, "openmpi": {key: 0.15}},
                                      {key: 1.5}, [key], placed=got)
        self.assertEqual((rows[0]["status"], rows[0]["status_same_placement"]), ("MISS", "MISS"))
        self.assertEqual(rows[0]["launches_matched"], 2)


class ConsistencyTest(unittest.TestCase):
    def test_measured_compositions_and_halves(self):
        reps = {
            (2, "Allreduce", 8): {0: 2.5, 1: 2.0}, (2, "Reduce+Bcast", 8): {0: 2.0, 1: 1.9},
            (2, "Allgather", 8): {0: 1.9}, (2, "Gather+Bcast", 8): {0: 2.0},
            (2, "Reduce_scatter_block", 8): {0: 2.0}, (2, "Reduce+Scatter", 8): {0: 2.0},
            (2, "Scan", 16): {0: 2.2, 1: 2.4}, (2, "Scan 2 x n/2", 16): {0: 2.0, 1: 2.0},
            (2, "Bcast", 16): {0: 1.0}, (2, "Bcast 2 x n/2", 16): {0: 1.1},
            # a composition is a bound, never a collective that is itself checked
            (2, "Reduce+Bcast 2 x n/2", 8): {0: 0.1},
        }
        found = run_coll.consistency_violations(reps, 0.0)
        self.assertEqual(sorted((v["kind"], v["collective"]) for v in found),
                         [("composition", "Allreduce"), ("halving", "Scan")])
        allreduce = [v for v in found if v["collective"] == "Allreduce"][0]
        # paired within launches: 2.5/2.0 and 2.0/1.9 -> median 1.15
        self.assertAlmostEqual(allreduce["ratio"], (1.25 + 2.0 / 1.9) / 2)
        self.assertEqual(allreduce["bound_of"], "Reduce+Bcast(8)")
        # a 15 % slack forgives Scan (1.15) but not Allreduce (1.15 + ...)
        found = run_coll.consistency_violations(reps, 0.15)
        self.assertEqual([v["collective"] for v in found], ["Allreduce"])

    def test_ratio_is_paired_within_launches(self):
        # slower in launch 0, equal in launch 1 and 2: the launch modes cancel out
        reps = {(2, "Gather", 64): {0: 4.0, 1: 1.0, 2: 1.0},
                (2, "Gather 2 x n/2", 64): {0: 3.9, 1: 1.0, 2: 1.0}}
        self.assertEqual(run_coll.consistency_violations(reps, 0.0), [])
        reps[(2, "Gather", 64)] = {0: 4.0, 1: 1.2, 2: 1.2}
        self.assertEqual(len(run_coll.consistency_violations(reps, 0.1)), 1)

    def test_missing_bounds_skip_the_check(self):
        self.assertEqual(run_coll.consistency_violations({(2, "Allreduce", 8): {0: 9.0}}, 0.0),
                         [])
        reps = {(2, "Allreduce", 8): {0: 9.0}, (2, "Reduce+Bcast", 8): {1: 1.0}}
        self.assertEqual(run_coll.consistency_violations(reps, 0.0), [])


class SumOfPartsTest(unittest.TestCase):
    def test_compositions_and_halving(self):
        summary = {
            (2, "Reduce", 8): 1.0, (2, "Bcast", 8): 1.0, (2, "Allreduce", 8): 2.5,
            (2, "Gather", 8): 1.0, (2, "Bcast", 16): 1.0, (2, "Allgather", 8): 1.9,
            (2, "Reduce", 16): 1.0, (2, "Scatter", 8): 1.0, (2, "Reduce_scatter_block", 8): 2.0,
            (2, "Scan", 8): 1.0, (2, "Scan", 16): 2.2, (2, "Reduce+Bcast", 8): 9.0,
        }
        found = run_coll.sum_of_parts_violations(summary, 0.0)
        self.assertEqual(sorted((v["kind"], v["collective"]) for v in found),
                         [("composition", "Allreduce"), ("halving", "Scan")])
        # a 10 % slack forgives Scan (2.2 <= 2.2) but not Allreduce (2.5 > 2.2)
        found = run_coll.sum_of_parts_violations(summary, 0.1)
        self.assertEqual([v["collective"] for v in found], ["Allreduce"])

    def test_block_collectives_scale_their_parts_by_np(self):
        summary = {(4, "Gather", 8): 1.0, (4, "Bcast", 32): 1.0, (4, "Allgather", 8): 3.0}
        found = run_coll.sum_of_parts_violations(summary, 0.0)
        self.assertEqual(found[0]["bound_of"], "Gather(8) + Bcast(32)")

    def test_missing_sizes_skip_the_check(self):
        self.assertEqual(run_coll.sum_of_parts_violations({(2, "Allreduce", 8): 9.0}, 0.0), [])


if __name__ == "__main__":
    unittest.main()
