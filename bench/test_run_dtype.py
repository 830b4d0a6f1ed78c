#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of run_dtype.py's arithmetic: medians over launches per layout and size, the
Manifold-versus-MPICH ratio paired per repetition, and the PASS/MISS decisions. No MPI is
started. Run with: python3 -m unittest bench/test_run_dtype.py
"""

import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_dtype  # noqa: E402  (the path is set just above)


def result(layout, size, derived, manual, payload=None):
    return {"layout": layout, "size": size, "payload": payload or size,
            "derived": {"median": derived}, "manual": {"median": manual},
            "speedup": {"median": manual / derived}}


def launch(rep, results, ok=True):
    return {"rep": rep, "ok": ok, "results": results} if ok else {"rep": rep, "ok": False}


class SummarizeTest(unittest.TestCase):
    def test_median_over_launches_skips_failures(self):
        recs = [launch(0, [result("vector", 8, 1.0, 2.0)]),
                launch(1, [result("vector", 8, 3.0, 3.0)]),
                launch(2, [result("vector", 8, 2.0, 1.0)]),
                launch(3, [], ok=False)]
        cell = run_dtype.summarize(recs)[("vector", 8)]
        self.assertEqual(cell["launches"], 3)
        self.assertEqual(cell["derived"], 2.0)
        self.assertEqual(cell["manual"], 2.0)
        self.assertEqual(cell["speedup"], 1.0)

    def test_payload_kept(self):
        cell = run_dtype.summarize([launch(0, [result("struct", 8, 1.0, 1.0, 16)])])
        self.assertEqual(cell[("struct", 8)]["payload"], 16)


class VersusTest(unittest.TestCase):
    def test_paired_per_repetition(self):
        # A slow second repetition hits both MPIs: the paired ratio stays 2.
        mine = run_dtype.derived_by_rep([launch(0, [result("indexed", 64, 1.0, 1.0)]),
                                         launch(1, [result("indexed", 64, 10.0, 1.0)])])
        theirs = run_dtype.derived_by_rep([launch(0, [result("indexed", 64, 2.0, 1.0)]),
                                           launch(1, [result("indexed", 64, 20.0, 1.0)])])
        self.assertEqual(run_dtype.versus(mine, theirs)[("indexed", 64)], 2.0)

    def test_missing_peer_gives_none(self):
        mine = run_dtype.derived_by_rep([launch(0, [result("vector", 8, 1.0, 1.0)])])
        self.assertIsNone(run_dtype.versus(mine, {})[("vector", 8)])


class TargetsTest(unittest.TestCase):
    def test_pass_miss_and_order(self):
        summaries = {"manifold": run_dtype.summarize([launch(0, [
            result("struct", 8, 1.0, 1.0, 16), result("vector", 16, 2.0, 1.0),
            result("vector", 8, 1.0, 1.5)])])}
        vs = {("vector", 8): 0.9, ("vector", 16): 1.0}
        rows = run_dtype.check_targets(summaries, vs)
        self.assertEqual([(r["layout"], r["size"]) for r in rows],
                         [("vector", 8), ("vector", 16), ("struct", 8)])
        self.assertEqual([r["derived_vs_manual_status"] for r in rows], ["PASS", "MISS", "PASS"])
        self.assertEqual([r["vs_mpich_status"] for r in rows], ["MISS", "PASS", "n/a"])

    def test_no_manifold(self):
        self.assertEqual(run_dtype.check_targets({}, {}), [])


if __name__ == "__main__":
    unittest.main()
