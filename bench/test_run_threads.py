#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of run_threads.py and count_instructions.py: parsing the programs' JSON lines,
Manifold's VCI statistics and callgrind's totals, paired ratios, PASS/MISS, oversubscription
and the cases a suite builds. No MPI is started.
Run with: python3 -m unittest bench/test_run_threads.py
"""

import argparse
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import count_instructions  # noqa: E402  (the path is set just above)
import run_threads as rt  # noqa: E402

STATS_OUTPUT = """\
{"benchmark": "mt_msgrate", "size": 8, "rate": 1000.0, "rss_kib": 10}
mpiexec: some note
rank 0 vci 0: sends=10 recvs=0 acquired=40 contended=3 sweeps=1
rank 0 vci 1: sends=12 recvs=0 acquired=44 contended=5 sweeps=0
rank 1 vci 0 sends=0 recvs=22 lock_contended=2
rank 0 resources: contexts=1 workers=2 endpoints=4
rank 1 resources contexts=1 workers=2 endpoints=4
"""


def rec(rep, value, ok=True, size=8, field="rate"):
    if not ok:
        return {"rep": rep, "ok": False}
    return {"rep": rep, "ok": True, "results": [{"size": size, field: value}]}


class ParseTest(unittest.TestCase):
    def test_json_lines_only(self):
        res = rt.parse_result_lines(STATS_OUTPUT + "{broken\n")
        self.assertEqual(len(res), 1)
        self.assertEqual(res[0]["rate"], 1000.0)

    def test_vci_stats_are_summed_leniently(self):
        stats = rt.parse_vci_stats(STATS_OUTPUT)
        self.assertEqual(len(stats["vcis"]), 3)
        self.assertEqual(stats["vcis"][1]["vci"], 1)
        self.assertEqual(stats["totals"]["sends"], 22)
        self.assertEqual(rt.contended(stats), 10)  # contended + lock_contended
        self.assertEqual(rt.resource_totals(stats), {"contexts": 2, "workers": 4,
                                                     "endpoints": 8})

    def test_library_stats_format(self):
        # The format src/core/core_tool.c prints: "key value" pairs and a totals line.
        text = ("rank 0 vci 0: sends 15 recvs 21 lock 99 contended 3 sweeps 8 misses 1\n"
                "rank 0 vci 1: sends 2 recvs 4 lock 6 contended 414 sweeps 47 misses 1\n"
                "rank 0 vci totals: pool 8 active 2 contexts 1 workers 2 endpoints 3\n")
        stats = rt.parse_vci_stats(text)
        self.assertEqual(len(stats["vcis"]), 2)
        self.assertEqual(stats["vcis"][1]["vci"], 1)
        self.assertEqual(rt.contended(stats), 417)
        self.assertEqual(rt.resource_totals(stats), {"pool": 8, "active": 2, "contexts": 1,
                                                     "workers": 2, "endpoints": 3})

    def test_no_stats_lines(self):
        self.assertIsNone(rt.parse_vci_stats('{"rate": 1}\nNo Errors\n'))
        self.assertIsNone(rt.contended(None))

    def test_callgrind_totals(self):
        text = "events: Ir\nfn=main\n1 5\nsummary: 123456\ntotals: 123456\n"
        self.assertEqual(count_instructions.parse_callgrind_total(text), 123456)
        self.assertIsNone(count_instructions.parse_callgrind_total("events: Ir\n"))
        self.assertEqual(count_instructions.per_message(1000, 3000, 10), 200)
        self.assertIsNone(count_instructions.per_message(None, 3000, 10))


class RatioTest(unittest.TestCase):
    def test_paired_ratio_uses_common_repetitions(self):
        a = [rec(0, 100.0), rec(1, 300.0), rec(2, 500.0)]
        b = [rec(0, 100.0), rec(1, 100.0, ok=False), rec(2, 250.0)]
        self.assertAlmostEqual(rt.paired_ratio(a, b, 8), 1.5)  # median of 1.0 and 2.0
        self.assertIsNone(rt.paired_ratio(a, [], 8))
        self.assertIsNone(rt.paired_ratio(a, b, 64))

    def test_field_ratio_and_median(self):
        a = [rec(0, 0.2, size=None, field="init_s")]
        b = [rec(0, 0.1, size=None, field="init_s")]
        self.assertAlmostEqual(rt.paired_ratio(a, b, None, "init_s"), 2.0)
        self.assertEqual(rt.median_over([rec(0, 1.0), rec(1, 3.0), rec(2, 2.0)], 8), 2.0)

    def test_verdicts(self):
        self.assertEqual(rt.verdict(0.95, 0.95, "ge"), "PASS")
        self.assertEqual(rt.verdict(0.94, 0.95, "ge"), "MISS")
        self.assertEqual(rt.verdict(1.2, 1.1, "le"), "MISS")
        self.assertEqual(rt.verdict(None, 1.1, "le"), "n/a")

    def test_oversubscription(self):
        self.assertFalse(rt.oversubscribed(2, 2, 1))
        self.assertTrue(rt.oversubscribed(2, 2, 2))


def fake_args(**kw):
    base = dict(threads=[1, 2], sizes="8", window=64, seconds=0.1, inner_reps=1, pin="1",
                vci_counts=[1, 64])
    base.update(kw)
    return argparse.Namespace(**base)


MPIS = {"manifold": {"available": True}, "mpich": {"available": True},
        "mpich-vci": {"available": False}}


class CasesTest(unittest.TestCase):
    def test_everywhere_uses_processes_not_threads(self):
        c = rt.msgrate_case(fake_args(), "manifold", "everywhere", 4, "8")
        self.assertEqual((c["np"], c["threads"]), (8, 1))
        c = rt.msgrate_case(fake_args(), "manifold", "par_comm", 4, "8")
        self.assertEqual((c["np"], c["threads"]), (2, 4))

    def test_case_ids_are_unique(self):
        for suite in rt.SUITES:
            ids = [c["id"] for c in rt.build_cases(fake_args(), suite, MPIS)]
            self.assertEqual(len(ids), len(set(ids)), suite)

    def test_init_varies_each_mpis_vci_knob(self):
        cases = rt.build_cases(fake_args(), "init", MPIS)
        envs = {c["id"]: c["env"] for c in cases}
        self.assertEqual(envs["manifold/init/V64"], {"MANIFOLD_VCI_COUNT": "64"})
        self.assertEqual(envs["mpich/init/V1"], {"MPIR_CVAR_CH4_NUM_VCIS": "1"})

    def test_targets_read_the_right_cases(self):
        runs = {"manifold/everywhere/T1/multiple": [rec(0, 96.0)],
                "manifold/everywhere/T1/single": [rec(0, 100.0)],
                "manifold/init/V64": [rec(0, 0.3, size=None, field="init_s")],
                "manifold/init/V1": [rec(0, 0.1, size=None, field="init_s")]}
        targets = {t["target"][:3]: t for t in rt.evaluate_targets(runs, 2, ["manifold"])}
        self.assertEqual(targets["(1)"]["status"], "PASS")
        self.assertAlmostEqual(targets["(1)"]["ratio"], 0.96)
        self.assertEqual(targets["(5)"]["status"], "MISS")
        self.assertEqual(targets["(6)"]["status"], "n/a")


if __name__ == "__main__":
    unittest.main()
