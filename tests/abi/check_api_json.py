# SPDX-License-Identifier: BSD-3-Clause
"""abi_api_json_fresh test: re-run gen/extract_api.py with the reference venv's pinned
pympistandard and check that the committed api/mpi_api.json is byte for byte what it writes,
so nobody edits the generated table by hand or forgets to regenerate it.
"""

import argparse
import difflib
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import abi_common  # noqa: E402

TEST = "abi_api_json_fresh"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source-dir", required=True, help="repository root")
    parser.add_argument("--venv", required=True, help="venv with pympistandard 0.2.0")
    parser.add_argument("--workdir", required=True, help="scratch directory")
    args = parser.parse_args()

    python = os.path.join(args.venv, "bin", "python")
    if not os.path.isfile(python):
        abi_common.fail(TEST, "no python in the reference venv %s" % args.venv)
    os.makedirs(args.workdir, exist_ok=True)
    fresh = os.path.join(args.workdir, "mpi_api.json")
    script = os.path.join(args.source_dir, "gen", "extract_api.py")
    abi_common.run(TEST, [python, script, "--output", fresh])

    committed = os.path.join(args.source_dir, "api", "mpi_api.json")
    with open(committed, encoding="utf-8") as old, open(fresh, encoding="utf-8") as new:
        old_lines, new_lines = old.readlines(), new.readlines()
    if old_lines != new_lines:
        diff = difflib.unified_diff(old_lines, new_lines, committed, fresh, n=1)
        sys.stdout.writelines(list(diff)[:60])
        abi_common.fail(
            TEST,
            "api/mpi_api.json is stale: run '%s gen/extract_api.py --output api/mpi_api.json'"
            % python,
        )
    print("%s: api/mpi_api.json is up to date" % TEST)


if __name__ == "__main__":
    main()
