# SPDX-License-Identifier: BSD-3-Clause
"""abi_gen_bindings test: unit tests of gen/gen_bindings.py on throw-away hand-written binding
files in a temporary directory: which PMPI_ definitions it recognises, when it must refuse
(missing pragma, non-ABI name, duplicate), and what the stubs look like. With --cc it also
compiles the stubs against the generated mpi.h with the project's warning flags.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import unittest

ARGS = None

SEND = """#pragma weak MPI_Send = PMPI_Send
int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag,
              MPI_Comm comm)
{
    /* return PMPI_Recv(...) in a comment must not count */
    return PMPI_Ssend(buf, count, datatype, dest, tag, comm);
}
"""

WTIME_TYPE_ON_PREVIOUS_LINE = """#pragma weak MPI_Wtime = PMPI_Wtime
double
PMPI_Wtime(void)
{
    return 1.0;
}
"""

DECLARATION_ONLY = """int PMPI_Barrier(MPI_Comm comm);
static int barrier_twice(void)
{
    return PMPI_Barrier(MPI_COMM_WORLD);
}
"""


class GenBindingsTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.out = os.path.join(self.dir.name, "out", "stubs.c")

    def tearDown(self):
        self.dir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w", encoding="utf-8") as source:
            source.write(text)
        return path

    def generate(self, *sources):
        command = [sys.executable, ARGS.generator, "--api", ARGS.api, "--output", self.out]
        return subprocess.run(command + list(sources), capture_output=True, text=True)

    def stubs(self):
        with open(self.out, encoding="utf-8") as stubs:
            return stubs.read()

    def unimplemented(self):
        path = os.path.join(os.path.dirname(self.out), "unimplemented.txt")
        with open(path, encoding="utf-8") as listing:
            return listing.read().split()

    def test_no_hand_written_files_stubs_everything(self):
        done = self.generate()
        self.assertEqual(done.returncode, 0, done.stderr)
        names = self.unimplemented()
        self.assertIn("MPI_Send", names)
        self.assertIn("MPI_T_init_thread", names)
        self.assertEqual(self.stubs().count("#pragma weak MPI_"), len(names))

    def test_hand_written_definitions_are_not_stubbed(self):
        done = self.generate(
            self.write("send.c", SEND),
            self.write("wtime.c", WTIME_TYPE_ON_PREVIOUS_LINE),
            self.write("decl.c", DECLARATION_ONLY),
        )
        self.assertEqual(done.returncode, 0, done.stderr)
        names = self.unimplemented()
        self.assertNotIn("MPI_Send", names)
        self.assertNotIn("MPI_Wtime", names)
        self.assertIn("MPI_Barrier", names)  # only declared and called, never defined
        self.assertIn("MPI_Recv", names)  # named in a comment only
        self.assertIn("MPI_Ssend", names)  # only called
        self.assertNotIn("PMPI_Send(", self.stubs())

    def test_missing_pragma_fails(self):
        done = self.generate(self.write("send.c", SEND.split("\n", 1)[1]))
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("#pragma weak MPI_Send = PMPI_Send", done.stderr)
        self.assertIn("send.c:1", done.stderr)

    def test_non_abi_name_fails(self):
        text = "#pragma weak MPI_Comm_c2f = PMPI_Comm_c2f\nint PMPI_Comm_c2f(MPI_Comm c)\n{\n}\n"
        done = self.generate(self.write("c2f.c", text))
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("PMPI_Comm_c2f is not an MPI-5.0 ABI function", done.stderr)

    def test_duplicate_definition_fails(self):
        done = self.generate(self.write("a.c", SEND), self.write("b.c", SEND))
        self.assertNotEqual(done.returncode, 0)
        self.assertIn("also defined", done.stderr)

    def test_stub_picks_the_first_handle_argument(self):
        self.assertEqual(self.generate().returncode, 0)
        text = self.stubs()
        self.assertIn('mf_binding_unsupported("MPI_Send", MF_ERRH_COMM, (const void *)comm)', text)
        self.assertIn('("MPI_Win_fence", MF_ERRH_WIN, (const void *)win)', text)
        self.assertIn('("MPI_File_sync", MF_ERRH_FILE, (const void *)fh)', text)
        self.assertIn('("MPI_File_open", MF_ERRH_FILE, NULL)', text)
        self.assertIn('("MPI_File_delete", MF_ERRH_FILE, NULL)', text)
        self.assertIn('("MPI_Session_finalize", MF_ERRH_SESSION,', text)
        self.assertIn('("MPI_Init", MF_ERRH_NONE, NULL)', text)
        self.assertIn("return MPI_COMM_NULL;", text)  # MPI_Comm_fromint
        self.assertIn("return 0.0;", text)  # MPI_Wtime

    def test_stubs_compile_cleanly(self):
        if not ARGS.cc:
            self.skipTest("no compiler given")
        self.assertEqual(self.generate(self.write("send.c", SEND)).returncode, 0)
        binding_h = self.write(
            "binding.h",
            "typedef enum { MF_ERRH_NONE, MF_ERRH_COMM, MF_ERRH_WIN, MF_ERRH_FILE,"
            " MF_ERRH_SESSION } mf_errh_scope_t;\n"
            "int mf_binding_unsupported(const char *func, mf_errh_scope_t scope,"
            " const void *handle);\n",
        )
        flags = "-std=c11 -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
        command = [ARGS.cc] + flags.split() + ["-fsyntax-only", "-I", ARGS.include]
        command += ["-I", os.path.dirname(binding_h), self.out]
        done = subprocess.run(command, capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)


def main():
    global ARGS
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--generator", required=True, help="gen/gen_bindings.py")
    parser.add_argument("--api", required=True, help="api/mpi_api.json")
    parser.add_argument("--include", default="", help="directory with the generated mpi.h")
    parser.add_argument("--cc", default="", help="C compiler for the compile check")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0]] + rest, verbosity=2)


if __name__ == "__main__":
    main()
