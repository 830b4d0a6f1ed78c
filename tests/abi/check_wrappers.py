# SPDX-License-Identifier: BSD-3-Clause
"""abi_wrappers test: the build-tree mpicc/mpicxx (and the _abi aliases) compile and link a
program whose only MPI dependency is libmpi_abi.so.1, found through a RUNPATH (not RPATH);
-show prints the command, -c/-E/-S add no link flags, and MANIFOLD_CC/MANIFOLD_CXX replace the
compiler.
"""

import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import abi_common  # noqa: E402

TEST = "abi_wrappers"

PROGRAM = """#include <mpi.h>

int main(int argc, char **argv)
{
    int major = 0, minor = 0;
    (void)argv;
    /* referenced but not called: running proves the loader finds the library */
    if (argc > 100)
        return MPI_Abi_get_version(&major, &minor);
    return major + minor;
}
"""


def check(condition, message):
    if not condition:
        abi_common.fail(TEST, message)


def check_show(wrapper):
    shown = abi_common.run(TEST, [wrapper, "-show", "prog.c", "-o", "prog"])
    for flag in ("-lmpi_abi", "-Wl,--enable-new-dtags", "-Wl,-rpath,", "-I"):
        check(flag in shown, "%s -show lacks %s: %s" % (wrapper, flag, shown))
    for only in ("-c", "-E", "-S"):
        shown = abi_common.run(TEST, [wrapper, "-show", only, "prog.c"])
        check("-lmpi_abi" not in shown, "%s -show %s still links: %s" % (wrapper, only, shown))


def check_override(wrapper, variable):
    env = dict(os.environ, **{variable: "echo overridden"})
    shown = abi_common.run(TEST, [wrapper, "-c", "prog.c"], env=env)
    check(shown.startswith("overridden "), "%s ignores %s: %s" % (wrapper, variable, shown))


def check_program(wrapper, source, workdir, readelf):
    exe = os.path.join(workdir, os.path.basename(wrapper) + "_prog")
    abi_common.run(TEST, [wrapper, source, "-o", exe])
    dynamic = abi_common.run(TEST, [readelf, "-d", exe])
    needed = re.findall(r"\(NEEDED\).*\[(.*)\]", dynamic)
    check("libmpi_abi.so.1" in needed, "%s: not linked to libmpi_abi.so.1: %s" % (exe, needed))
    check([n for n in needed if "mpi" in n] == ["libmpi_abi.so.1"], "%s: %s" % (exe, needed))
    check("(RUNPATH)" in dynamic, "%s has no RUNPATH" % exe)
    check("(RPATH)" not in dynamic, "%s has an RPATH, LD_LIBRARY_PATH could not override it" % exe)
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    done = subprocess.run([exe], env=env, capture_output=True, text=True)
    why = "%s does not run (exit %d): %s" % (exe, done.returncode, done.stderr)
    check(done.returncode == 0, why)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bindir", required=True, help="directory with the wrappers")
    parser.add_argument("--workdir", required=True, help="scratch directory")
    parser.add_argument("--readelf", default="readelf", help="readelf program")
    args = parser.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    c_source = os.path.join(args.workdir, "prog.c")
    cxx_source = os.path.join(args.workdir, "prog.cpp")
    for path in (c_source, cxx_source):
        with open(path, "w", encoding="utf-8") as source:
            source.write(PROGRAM)

    for name, source, variable in (
        ("mpicc", c_source, "MANIFOLD_CC"),
        ("mpicc_abi", c_source, "MANIFOLD_CC"),
        ("mpicxx", cxx_source, "MANIFOLD_CXX"),
        ("mpicxx_abi", cxx_source, "MANIFOLD_CXX"),
    ):
        wrapper = os.path.join(args.bindir, name)
        check(os.access(wrapper, os.X_OK), "%s is missing or not executable" % wrapper)
        check_show(wrapper)
        check_override(wrapper, variable)
        check_program(wrapper, source, args.workdir, args.readelf)
    print("%s: mpicc, mpicxx and the _abi aliases build programs linked by RUNPATH" % TEST)


if __name__ == "__main__":
    main()
