# SPDX-License-Identifier: BSD-3-Clause
"""Functions shared by the ABI test scripts in tests/abi: locating the reference MPICH
installation (a Python venv with the PyPI mpich wheel), running tools, and failing with one
clear message. Python standard library only.
"""

import os
import subprocess
import sys


def fail(test, message):
    print("%s: FAIL: %s" % (test, message))
    sys.exit(1)


def require_venv(test, venv):
    """The reference MPICH venv must exist: a missing oracle is a failure, never a skip."""
    header = os.path.join(venv, "include", "mpi_abi.h")
    if not os.path.isfile(header):
        fail(
            test,
            "reference MPICH ABI header %s not found; create the venv with "
            "'python3 -m venv %s && %s/bin/pip install mpich==5.0.2 pympistandard==0.2.0' "
            "or point the CMake cache variable MF_VENV_MPICH at one" % (header, venv, venv),
        )
    return header


def run(test, command, **kwargs):
    """Run a command, returning its stdout; fail the test with its output if it fails."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, **kwargs)
    except OSError as error:
        fail(test, "cannot run %s: %s" % (command[0], error))
    if done.returncode != 0:
        fail(
            test,
            "command failed (exit %d): %s\n%s%s"
            % (done.returncode, " ".join(command), done.stdout, done.stderr),
        )
    return done.stdout


def preprocess(test, cc, include_dir, header):
    """The text of a header after the preprocessor, without line markers."""
    source = "#include <%s>\n" % header
    return run(test, [cc, "-std=c11", "-E", "-P", "-I", include_dir, "-x", "c", "-"], input=source)


def without_attributes(text):
    """Drop every __attribute__((...)), whose parentheses nest."""
    out = []
    index = 0
    key = "__attribute__"
    while True:
        start = text.find(key, index)
        if start < 0:
            out.append(text[index:])
            return "".join(out)
        out.append(text[index:start])
        cursor = text.index("(", start)
        depth = 0
        while True:
            if text[cursor] == "(":
                depth += 1
            elif text[cursor] == ")":
                depth -= 1
                if depth == 0:
                    break
            cursor += 1
        index = cursor + 1
