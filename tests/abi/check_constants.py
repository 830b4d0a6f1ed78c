# SPDX-License-Identifier: BSD-3-Clause
"""abi_constants test: every constant in api/abi_constants.txt must have the same value, the
same C type and the same macro-or-enum form in our mpi.h as in MPICH 5.0.2's mpi_abi.h, and
every standard (non-MPIX) constant of MPICH's header must exist in ours.

It writes one C program that prints each constant, compiles it once against each header,
runs both and compares the output line by line.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import abi_common  # noqa: E402

TEST = "abi_constants"

# Constants we define although MPICH's header lacks them, each with the reason. Empty: any
# entry here would be compared with nothing, so keep it that way unless the standard says so.
OURS_ONLY = {}

SCALAR_TYPES = [
    "int", "unsigned int", "long", "long long", "double", "void *", "int *", "char **",
    "char ***", "MPI_Status *", "MPI_Comm", "MPI_Datatype", "MPI_Errhandler", "MPI_File",
    "MPI_Group", "MPI_Info", "MPI_Message", "MPI_Op", "MPI_Request", "MPI_Session", "MPI_Win",
    "MPI_T_enum", "MPI_T_cvar_handle", "MPI_T_pvar_handle", "MPI_T_pvar_session",
    "MPI_T_cb_safety", "MPI_T_source_order",
]  # fmt: skip


def strip_c_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)


def reference_constants(header_path):
    """Names of the object-like macros and enumerators in a header, minus the temporary macros that
    the header #undefs again and its include guard (a macro with no value)."""
    with open(header_path, encoding="utf-8") as header:
        text = strip_c_comments(header.read())
    names = set()
    undefined = set(re.findall(r"^\s*#\s*undef\s+(\w+)", text, re.M))
    for name, value in re.findall(r"^\s*#\s*define\s+(\w+)(?!\()[ \t]*(.*)$", text, re.M):
        if value.strip() and name not in undefined:
            names.add(name)
    for body in re.findall(r"\benum\s*\w*\s*\{(.*?)\}", text, re.S):
        for item in body.split(","):
            match = re.match(r"\s*(\w+)", item)
            if match:
                names.add(match.group(1))
    return names


def type_name_expression(name, callback_types):
    """A C expression naming the type of the constant, the same text for both headers."""
    candidates = SCALAR_TYPES + [t + " *" for t in callback_types]
    expression = '"other"'
    for ctype in reversed(candidates):
        expression = '(__builtin_types_compatible_p(__typeof__(%s), %s) ? "%s" : %s)' % (
            name,
            ctype,
            ctype,
            expression,
        )
    return expression


def probe_source(names, callback_types):
    lines = [
        "#include <stdint.h>",
        "#include <stdio.h>",
        "#include MF_PROBE_HEADER",
        "",
        "static void show(const char *name, long long value, const char *type, const char *form)",
        "{",
        '    printf("%s %lld %s %s\\n", name, value, type, form);',
        "}",
        "",
        "int main(void)",
        "{",
    ]
    for name in names:
        call = 'show("%s", (long long)(intptr_t)(%s), %s, ' % (
            name,
            name,
            type_name_expression(name, callback_types),
        )
        lines += [
            "#if defined(%s)" % name,
            "    " + call + '"macro");',
            "#else",
            "    " + call + '"enum");',
            "#endif",
        ]
    lines += ["    return 0;", "}", ""]
    return "\n".join(lines)


def probe(args, source_path, include_dir, header, label):
    exe = os.path.join(args.workdir, "probe_" + label)
    command = [
        args.cc, "-std=gnu11", "-w", "-I", include_dir, "-DMF_PROBE_HEADER=<%s>" % header,
        source_path, "-o", exe,
    ]  # fmt: skip
    abi_common.run(TEST, command)
    output = abi_common.run(TEST, [exe])
    return dict((line.split(" ", 1)[0], line) for line in output.splitlines())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", required=True, help="api/abi_constants.txt")
    parser.add_argument("--api", required=True, help="api/mpi_api.json (callback types)")
    parser.add_argument("--include", required=True, help="directory with our generated mpi.h")
    parser.add_argument("--venv", required=True, help="reference MPICH venv")
    parser.add_argument("--cc", required=True, help="C compiler")
    parser.add_argument("--workdir", required=True, help="scratch directory")
    parser.add_argument("--gen", required=True, help="gen/ directory (table reader)")
    args = parser.parse_args()

    reference_header = abi_common.require_venv(TEST, args.venv)
    sys.path.insert(0, args.gen)
    import abi_table

    groups, by_name = abi_table.load(args.table)
    ours = [c.name for g in groups for c in g.constants]
    reference = {n for n in reference_constants(reference_header) if not n.startswith("MPIX_")}
    with open(args.api, encoding="utf-8") as api_file:
        callback_types = [c["name"] for c in json.load(api_file)["callbacks"]]

    problems = []
    for name in sorted(reference - set(ours)):
        problems.append("missing: %s is in MPICH's ABI header but not in our table" % name)
    for name in ours:
        if name not in reference and name not in OURS_ONLY:
            problems.append("unchecked: %s is not in MPICH's ABI header" % name)

    common = [n for n in ours if n in reference]
    os.makedirs(args.workdir, exist_ok=True)
    source_path = os.path.join(args.workdir, "probe_constants.c")
    with open(source_path, "w", encoding="utf-8") as source:
        source.write(probe_source(common, callback_types))
    mine = probe(args, source_path, args.include, "mpi.h", "ours")
    theirs = probe(args, source_path, os.path.dirname(reference_header), "mpi_abi.h", "mpich")
    for name in common:
        if mine.get(name) != theirs.get(name):
            problems.append("differs: ours '%s', MPICH '%s'" % (mine.get(name), theirs.get(name)))

    for problem in problems:
        print(problem)
    if problems:
        abi_common.fail(TEST, "%d problem(s) in %d constants" % (len(problems), len(ours)))
    print("%s: %d constants identical to MPICH 5.0.2's ABI header" % (TEST, len(common)))


if __name__ == "__main__":
    main()
