# SPDX-License-Identifier: BSD-3-Clause
"""abi_gen_arg_sweep test: unit tests of tests/mpi/errors/gen_arg_sweep.py, the generator of the
bad-argument sweep: the cases it makes for a small hand-written API table, what it leaves out
(allowed null handles, skipped functions, stubs), that every function and parameter its tables
name exists in api/mpi_api.json (a misspelt entry would silently do nothing), and, with --cc,
that the sweep compiles against the generated mpi.h with the project's warning flags.
"""

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None


def param(name, kind, ctype, direction="in", array=None):
    return {"name": name, "kind": kind, "type": ctype, "direction": direction, "array": array,
            "optional": False}


def function(name, params, tool=False):
    return {"name": name, "params": params, "return_kind": "ERROR_CODE", "tool": tool}


SEND = function("MPI_Send", [
    param("buf", "BUFFER", "const void *"),
    param("count", "POLYXFER_NUM_ELEM_NNI", "int"),
    param("datatype", "DATATYPE", "MPI_Datatype"),
    param("dest", "RANK", "int"),
    param("tag", "TAG", "int"),
    param("comm", "COMMUNICATOR", "MPI_Comm"),
])
WAIT = function("MPI_Wait", [
    param("request", "REQUEST", "MPI_Request *", "inout"),
    param("status", "STATUS", "MPI_Status *", "out"),
])
COMM_SIZE = function("MPI_Comm_size", [
    param("comm", "COMMUNICATOR", "MPI_Comm"),
    param("size", "COMM_SIZE", "int *", "out"),
])
WTIME = dict(function("MPI_Wtime", []), return_kind="DOUBLE")


class GenArgSweepTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.dir.name, "arg_sweep_cases.h")

    def tearDown(self):
        self.dir.cleanup()

    def generate(self, api_path, *extra):
        command = [sys.executable, ARGS.generator, "--api", api_path, "--output", self.out]
        return subprocess.run(command + list(extra), capture_output=True, text=True)

    def generate_table(self, functions, *extra):
        path = os.path.join(self.dir.name, "api.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"functions": functions}, f)
        done = self.generate(path, *extra)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(self.out, encoding="utf-8") as f:
            return f.read()

    @staticmethod
    def cases(text):
        return [line.strip() for line in text.splitlines() if line.startswith("    {sweep_")]

    def test_send_gets_one_case_per_bad_argument(self):
        cases = self.cases(self.generate_table([SEND]))
        whats = [c.split(", ")[3:5] for c in cases]
        self.assertEqual(whats, [['"count"', '"negative"'], ['"datatype"', '"null"'],
                                 ['"dest"', '"rank"'], ['"dest"', '"negrank"'],
                                 ['"tag"', '"tag"'], ['"comm"', '"null"']])
        self.assertIn("{MPI_ERR_COUNT}", cases[0])
        self.assertIn("{MPI_ERR_TYPE}", cases[1])
        self.assertIn("{MPI_ERR_RANK}", cases[2])
        self.assertIn("{MPI_ERR_RANK}", cases[3])
        self.assertIn("{MPI_ERR_TAG}", cases[4])
        self.assertIn("{MPI_ERR_COMM}", cases[5])
        # each case replaces its own argument: case 5 (the tag) leaves dest valid
        self.assertIn("(bad == 5 ? -5 : 0)", self.generate_table([SEND]))

    def test_null_output_pointer_and_allowed_null_request(self):
        cases = self.cases(self.generate_table([WAIT, COMM_SIZE]))
        # MPI_Wait: MPI_REQUEST_NULL is allowed, a NULL status is MPI_STATUS_IGNORE
        self.assertEqual([c for c in cases if "MPI_Wait" in c and '"null"' in c], [])
        self.assertEqual(len([c for c in cases if '"MPI_Wait", "request", "nullptr"' in c]), 1)
        self.assertFalse(any('"status"' in c for c in cases))
        self.assertTrue(any('"MPI_Comm_size", "size", "nullptr"' in c and "{MPI_ERR_ARG}" in c
                            for c in cases))

    def test_skips_and_value_returning_functions(self):
        init = function("MPI_Init", [param("argc", "ARGUMENT_COUNT", "int *", "inout")])
        text = self.generate_table([init, WTIME, SEND])
        self.assertIn('{"MPI_Init", ', text)
        self.assertNotIn("sweep_MPI_Wtime", text)
        self.assertIn("#define SWEEP_FUNCTIONS 2", text)

    def test_stubs_are_left_out(self):
        listing = os.path.join(self.dir.name, "unimplemented.txt")
        with open(listing, "w", encoding="utf-8") as f:
            f.write("MPI_Send\n")
        text = self.generate_table([SEND, COMM_SIZE], "--unimplemented", listing)
        self.assertNotIn("sweep_MPI_Send", text)
        self.assertIn('{"MPI_Send", "not implemented', text)

    def test_unknown_parameter_kind_fails(self):
        odd = function("MPI_Odd", [param("x", "NO_SUCH_KIND", "int")])
        path = os.path.join(self.dir.name, "api.json")
        with open(path, "w", encoding="utf-8") as f:
            json.dump({"functions": [odd]}, f)
        done = self.generate(path)
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("MPI_Odd", done.stderr)

    def test_tables_name_real_functions_and_parameters(self):
        spec = importlib.util.spec_from_file_location("gen_arg_sweep", ARGS.generator)
        gen = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(gen)
        with open(ARGS.api, encoding="utf-8") as f:
            functions = {fn["name"]: {p["name"] for p in fn["params"]}
                         for fn in json.load(f)["functions"]}
        for name in gen.SKIP_FUNCTIONS:
            self.assertIn(name, functions)
        for name, params in gen.GOOD.items():
            self.assertIn(name, functions)
            for p in params:
                self.assertIn(p, functions[name], name)
        for name, _ in gen.AROUND.items():
            self.assertIn(name, functions)
        for (name, p, what) in gen.ALLOWED:
            self.assertIn(what, ("null", "nullptr", "nullin", "negative", "rank", "negrank", "tag"))
            if name != "*":
                self.assertIn(name, functions)
                if p != "*":
                    self.assertIn(p, functions[name], name)
        for (name, p) in list(gen.SKIP_CASES) + list(gen.NOT_CHECKED):
            self.assertIn(p, functions[name], name)

    def test_whole_table_compiles(self):
        done = self.generate(ARGS.api)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(self.out, encoding="utf-8") as f:
            cases = self.cases(f.read())
        self.assertGreater(len(cases), 1500)
        if not ARGS.cc:
            self.skipTest("no compiler given")
        flags = "-std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes " \
                "-Wno-unused-parameter -Werror"
        source = os.path.join(os.path.dirname(ARGS.generator), "arg_sweep.c")
        util = os.path.join(os.path.dirname(os.path.dirname(ARGS.generator)), "util")
        command = [ARGS.cc] + flags.split() + ["-fsyntax-only", "-I", ARGS.include, "-I", util,
                                               "-I", self.dir.name, source]
        done = subprocess.run(command, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generator", required=True, help="tests/mpi/errors/gen_arg_sweep.py")
    parser.add_argument("--api", required=True, help="api/mpi_api.json")
    parser.add_argument("--include", default="", help="directory with the generated mpi.h")
    parser.add_argument("--cc", default="", help="C compiler for the compile check")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
