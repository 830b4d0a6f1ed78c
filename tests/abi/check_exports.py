# SPDX-License-Identifier: BSD-3-Clause
"""abi_exports test: the built libmpi_abi must export every function of api/mpi_api.json both
as MPI_X and PMPI_X, and nothing else except MPIX_/PMPIX_ extensions and the linker's own
symbols (_init, _fini ...). Reads the dynamic symbol table with nm -D --defined-only.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import abi_common  # noqa: E402

TEST = "abi_exports"
LINKER_SYMBOLS = {"_init", "_fini", "_edata", "_end", "__bss_start"}
EXTENSION = re.compile(r"^P?MPIX_\w+$")


def exported_symbols(nm, library):
    symbols = {}
    for line in abi_common.run(TEST, [nm, "-D", "--defined-only", library]).splitlines():
        fields = line.split()
        if len(fields) >= 3:
            symbols[fields[2].split("@")[0]] = fields[1]
    return symbols


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", required=True, help="path of libmpi_abi.so")
    parser.add_argument("--api", required=True, help="api/mpi_api.json")
    parser.add_argument("--nm", default="nm", help="nm program")
    args = parser.parse_args()

    with open(args.api, encoding="utf-8") as api_file:
        functions = [f["name"] for f in json.load(api_file)["functions"]]
    expected = set(functions) | {"P" + name for name in functions}
    symbols = exported_symbols(args.nm, args.library)

    problems = []
    for name in sorted(expected - set(symbols)):
        problems.append("not exported: %s" % name)
    for name, kind in sorted(symbols.items()):
        if name in expected:
            if kind not in "TtWwi":
                problems.append("not a function: %s (nm type %s)" % (name, kind))
        elif not (name in LINKER_SYMBOLS or EXTENSION.match(name)):
            problems.append("exported but not an MPI-5.0 ABI function: %s" % name)
    for problem in problems:
        print(problem)
    if problems:
        abi_common.fail(TEST, "%d problem(s) in %s" % (len(problems), args.library))
    print("%s: %d ABI functions exported as MPI_ and PMPI_, nothing else" % (TEST, len(functions)))


if __name__ == "__main__":
    main()
