# SPDX-License-Identifier: BSD-3-Clause
"""abi_unimplemented test: report how many ABI functions are still generated "unsupported"
stubs, from the unimplemented.txt that gen/gen_bindings.py writes next to the stubs. Passes
whatever the number is; fails only when the list is missing or names a non-ABI function.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import abi_common  # noqa: E402

TEST = "abi_unimplemented"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--list", required=True, help="unimplemented.txt")
    parser.add_argument("--api", required=True, help="api/mpi_api.json")
    args = parser.parse_args()

    if not os.path.isfile(args.list):
        abi_common.fail(
            TEST,
            "%s not found: build the library first (src/binding generates it with "
            "mf_generate_bindings)" % args.list,
        )
    with open(args.api, encoding="utf-8") as api_file:
        functions = {f["name"] for f in json.load(api_file)["functions"]}
    with open(args.list, encoding="utf-8") as listing:
        names = [line.strip() for line in listing if line.strip()]
    strangers = sorted(set(names) - functions)
    if strangers:
        abi_common.fail(TEST, "not ABI functions: %s" % ", ".join(strangers))
    print("unimplemented MPI functions: %d of %d" % (len(names), len(functions)))


if __name__ == "__main__":
    main()
