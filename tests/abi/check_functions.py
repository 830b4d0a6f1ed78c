# SPDX-License-Identifier: BSD-3-Clause
"""abi_functions test: the functions our mpi.h declares must be exactly those of MPICH 5.0.2's
mpi_abi.h minus its MPIX_/QMPI_ extensions, each with the same prototype up to parameter
names (an array parameter equals a pointer), and each MPI_X must have its PMPI_X twin. Also
checks that the header declares exactly the functions listed in api/mpi_api.json.

Both headers go through the preprocessor first, so the comparison does not depend on layout.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import abi_common  # noqa: E402

TEST = "abi_functions"
FUNCTION_NAME = re.compile(r"^(P?MPIX?|QMPI)_\w+$")
EXTENSION = re.compile(r"^(P?MPIX_|QMPI_)")


def split_top_level(text, separator):
    parts, depth, current = [], 0, []
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == separator and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def normal_type(text):
    text = re.sub(r"\s*\*\s*", " *", text.strip())
    text = re.sub(r"\* \*", "**", text)
    text = re.sub(r"\* \*", "**", text)
    return re.sub(r"\s+", " ", text).strip()


def parameter_type(param):
    """'const int recvcounts[]' -> 'const int *'; 'int ranges[][3]' -> 'int (*)[3]'."""
    param = param.strip()
    if param in ("void", "..."):
        return param
    suffixes = re.findall(r"\[[^\]]*\]", param)
    core = re.sub(r"(\s*\[[^\]]*\])+$", "", param)
    core = re.sub(r"\b\w+$", "", core)  # the parameter name
    if not suffixes:
        return normal_type(core)
    if len(suffixes) == 1:
        return normal_type(core + "*")
    return normal_type(core) + " (*)" + "".join(suffixes[1:])


def declarations(text):
    """{name: (return type, [parameter types])} of the functions declared in preprocessed C."""
    text = re.sub(r"\s+", " ", abi_common.without_attributes(text))
    text = re.sub(r'extern "C" ?\{', " ", text)
    while True:
        stripped = re.sub(r"\{[^{}]*\}", " ", text)  # enum and struct bodies
        if stripped == text:
            break
        text = stripped
    found = {}
    for statement in split_top_level(text, ";"):
        statement = statement.strip()
        if not statement or statement.startswith("typedef"):
            continue
        match = re.match(r"^(extern )?(?P<ret>.+?)\b(?P<name>\w+) ?\((?P<params>.*)\)$", statement)
        if match is None or not FUNCTION_NAME.match(match.group("name")):
            continue
        params = [parameter_type(p) for p in split_top_level(match.group("params"), ",")]
        found[match.group("name")] = (normal_type(match.group("ret")), params)
    return found


def compare(ours, theirs, problems):
    for name in sorted(set(theirs) - set(ours)):
        problems.append("missing: %s is declared by MPICH but not by us" % name)
    for name in sorted(set(ours) - set(theirs)):
        problems.append("extra: %s is declared by us but not by MPICH" % name)
    for name in sorted(set(ours) & set(theirs)):
        if ours[name] != theirs[name]:
            problems.append("prototype of %s: ours %s, MPICH %s" % (name, ours[name], theirs[name]))


def check_pairs(ours, listed, problems):
    for name in sorted(ours):
        twin = "P" + name if name.startswith("MPI_") else name[1:]
        if twin not in ours:
            problems.append("unpaired: %s is declared without %s" % (name, twin))
    declared = {n for n in ours if n.startswith("MPI_")}
    if declared != listed:
        for name in sorted(declared ^ listed):
            problems.append("json: %s is in only one of mpi.h and api/mpi_api.json" % name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--include", required=True, help="directory with our generated mpi.h")
    parser.add_argument("--venv", required=True, help="reference MPICH venv")
    parser.add_argument("--api", required=True, help="api/mpi_api.json")
    parser.add_argument("--cc", required=True, help="C compiler")
    args = parser.parse_args()

    reference_header = abi_common.require_venv(TEST, args.venv)
    ours = declarations(abi_common.preprocess(TEST, args.cc, args.include, "mpi.h"))
    theirs_all = declarations(
        abi_common.preprocess(TEST, args.cc, os.path.dirname(reference_header), "mpi_abi.h")
    )
    theirs = {n: p for n, p in theirs_all.items() if not EXTENSION.match(n)}
    with open(args.api, encoding="utf-8") as api_file:
        listed = {f["name"] for f in json.load(api_file)["functions"]}

    problems = []
    compare(ours, theirs, problems)
    check_pairs(ours, listed, problems)
    for problem in problems:
        print(problem)
    if problems:
        abi_common.fail(TEST, "%d problem(s)" % len(problems))
    print(
        "%s: %d functions (MPI_ and PMPI_) match MPICH 5.0.2's ABI header (%d MPIX_/QMPI_ left out)"
        % (TEST, len(ours), len(theirs_all) - len(theirs))
    )


if __name__ == "__main__":
    main()
