#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of run_part.py: parsing part_bench's lines, medians over launches, the targets'
PASS/MISS and the cases. No MPI is started.
Run with: python3 -m unittest bench/test_run_part.py
"""

import json
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_part as rp  # noqa: E402  (the path is set just above)


def line(mode, total, after, errors=0):
    return json.dumps({"bench": "part_bench", "mode": mode, "threads": 2, "parts": 2,
                       "part_bytes": 65536, "total_us": total, "after_last_us": after,
                       "errors": errors})


def rec(mpi, case, rep, *results):
    return {"mpi": mpi, "case": case, "rep": rep, "results": list(results)}


class ParseTest(unittest.TestCase):
    def test_only_part_bench_lines(self):
        text = "\n".join(["mpiexec: note", line("part", 10.0, 2.0), "{broken",
                          json.dumps({"bench": "other", "mode": "part"}),
                          line("single", 12.0, 3.0)])
        res = rp.parse_lines(text)
        self.assertEqual([r["mode"] for r in res], ["part", "single"])
        self.assertEqual(res[0]["after_last_us"], 2.0)


class SummaryTest(unittest.TestCase):
    def test_medians_skip_errors(self):
        recs = [rec("manifold", "staggered", i, {"mode": "part", "total_us": t,
                                                  "after_last_us": a, "errors": 0})
                for i, (t, a) in enumerate([(10, 1), (30, 3), (20, 2)])]
        recs.append(rec("manifold", "staggered", 3, {"mode": "part", "total_us": 999,
                                                      "after_last_us": 999, "errors": 1}))
        s = rp.summarize(recs)
        cell = s[("manifold", "staggered", "part")]
        self.assertEqual((cell["total_us"], cell["after_last_us"], cell["n"]), (20, 2, 3))


class TargetTest(unittest.TestCase):
    def summary(self, part_after, part_total, persist_total, mpich_total):
        s = {}

        def put(mpi, case, mode, total, after):
            s[(mpi, case, mode)] = {"total_us": total, "after_last_us": after, "n": 1}
        put("manifold", "one partition", "single", 10.0, 10.0)
        for case in ("staggered", "balanced"):
            put("manifold", case, "part", part_total, part_after)
            put("manifold", case, "persist", persist_total, 50.0)
            put("mpich", case, "part", mpich_total, 100.0)
        return s

    def verdicts(self, s):
        return {d: v for d, _, _, v in rp.check_targets(s)}

    def test_pass(self):
        v = self.verdicts(self.summary(15.0, 100.0, 100.0, 120.0))
        self.assertTrue(all(x == "PASS" for x in v.values()), v)

    def test_miss(self):
        v = self.verdicts(self.summary(25.0, 106.0, 100.0, 105.0))
        self.assertEqual(v["staggered: after last Pready / one partition's transfer"], "MISS")
        self.assertEqual(v["balanced: partitioned total / persistent multi-send total"], "MISS")
        self.assertEqual(v["balanced: Manifold / MPICH partitioned total"], "MISS")

    def test_missing_peer_is_na(self):
        s = self.summary(15.0, 100.0, 100.0, 120.0)
        s = {k: c for k, c in s.items() if k[0] != "mpich"}
        v = self.verdicts(s)
        self.assertEqual(v["staggered: Manifold / MPICH partitioned total"], "n/a")


class CaseTest(unittest.TestCase):
    def test_cases_and_oversubscription(self):
        args = rp.parse_args(["--threads", "3", "--stagger-us", "500", "--quick"])
        self.assertEqual((args.reps, args.iters), (2, 40))
        names = [c[0] for c in rp.cases(args)]
        self.assertEqual(names, ["staggered", "balanced", "one partition"])
        stag = rp.cases(args)[0][1]
        self.assertEqual(stag[stag.index("--stagger-us") + 1], "500.0")
        self.assertTrue(rp.oversubscribed(2, 1))
        self.assertFalse(rp.oversubscribed(8, 2))


if __name__ == "__main__":
    unittest.main()
