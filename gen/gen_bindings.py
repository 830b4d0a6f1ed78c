# SPDX-License-Identifier: BSD-3-Clause
"""Write the "unsupported" stubs for every MPI-5.0 ABI function that has no hand-written
binding yet, so that libmpi_abi always exports the complete function set.

Inputs: api/mpi_api.json and the hand-written binding sources (src/binding/*.c). A
hand-written function is a definition "PMPI_<Name>(" at the start of a line, with its return
type on the same or the previous line; its file must also hold
"#pragma weak MPI_<Name> = PMPI_<Name>". For every other ABI function this writes a PMPI_
stub that reports MPI_ERR_UNSUPPORTED_OPERATION through mf_binding_unsupported() (declared in
binding.h) plus the weak MPI_ alias, and lists the function in unimplemented.txt next to the
C file. Fails when a hand-written PMPI_ name is not an ABI function, is defined twice, or
lacks its pragma. Python standard library only.
"""

import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from c_layout import INDENT, wrap_call  # noqa: E402

ERRH_SCOPES = {
    "COMMUNICATOR": "MF_ERRH_COMM",
    "WINDOW": "MF_ERRH_WIN",
    "FILE": "MF_ERRH_FILE",
    "SESSION": "MF_ERRH_SESSION",
}
TYPE_WORD = re.compile(r"^[A-Za-z_][\w \t\*]*$")
NOT_TYPE_WORDS = {"return", "if", "else", "while", "for", "switch", "case", "goto", "do", "sizeof"}
DEFINITION = re.compile(r"^(?P<before>[^\s(][^(]*?)?\bPMPI_(?P<name>\w+)\s*\(")
PRAGMA = re.compile(r"^\s*#\s*pragma\s+weak\s+MPI_(\w+)\s*=\s*PMPI_(\w+)\s*$", re.M)


class BindingError(Exception):
    pass


def strip_comments(text):
    """Blank out comments and string literals, keeping line numbers."""

    def blank(match):
        return re.sub(r"[^\n]", " ", match.group(0))

    pattern = r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
    return re.sub(pattern, blank, text, flags=re.S)


def looks_like_type(text):
    text = text.strip()
    if not text or not TYPE_WORD.match(text):
        return False
    return not (set(re.findall(r"\w+", text)) & NOT_TYPE_WORDS)


def followed_by_body(text, offset):
    """True when the parenthesised list starting at text[offset] ('(') is followed by '{'."""
    depth = 0
    for index in range(offset, len(text)):
        char = text[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                rest = text[index + 1 :].lstrip()
                return rest.startswith("{")
    return False


def scan_definitions(path):
    """Names X of the PMPI_X functions defined in one C file, with line numbers."""
    with open(path, encoding="utf-8") as source:
        text = strip_comments(source.read())
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    found = []
    for number, line in enumerate(lines):
        match = DEFINITION.match(line)
        if match is None:
            continue
        before = match.group("before")
        if before is not None and before.strip():
            if not looks_like_type(before):
                continue
        elif number == 0 or not looks_like_type(lines[number - 1]):
            continue
        paren = offsets[number] + match.end() - 1
        if followed_by_body(text, paren):
            found.append((match.group("name"), number + 1))
    return found


def scan_pragmas(path):
    with open(path, encoding="utf-8") as source:
        text = strip_comments(source.read())
    pairs = set()
    for weak, strong in PRAGMA.findall(text):
        if weak == strong:
            pairs.add(weak)
    return pairs


def find_hand_written(sources, abi_names):
    implemented = {}
    for path in sources:
        pragmas = scan_pragmas(path)
        for name, line in scan_definitions(path):
            where = "%s:%d" % (path, line)
            mpi_name = "MPI_" + name
            if mpi_name not in abi_names:
                raise BindingError("%s: PMPI_%s is not an MPI-5.0 ABI function" % (where, name))
            if mpi_name in implemented:
                raise BindingError(
                    "%s: PMPI_%s is also defined at %s" % (where, name, implemented[mpi_name])
                )
            if name not in pragmas:
                raise BindingError(
                    "%s: PMPI_%s needs '#pragma weak MPI_%s = PMPI_%s' in the same file"
                    % (where, name, name, name)
                )
            implemented[mpi_name] = where
    return implemented


def handle_argument(record):
    """(scope, C expression) of the object whose error handler reports the failure: the first
    communicator, window, file or session passed by value, else the first passed through a
    single pointer (MPI_Comm_free ...), else none. A file operation without a file
    (MPI_File_open, MPI_File_delete) reports through MPI_FILE_NULL's handler (MPI-4.1 section
    14.7), which a NULL file handle stands for."""
    scope, handle = first_handle_argument(record)
    if record["name"].startswith("MPI_File_") and scope != "MF_ERRH_FILE":
        return "MF_ERRH_FILE", "NULL"
    return scope, handle


def first_handle_argument(record):
    by_pointer = None
    for param in record["params"]:
        scope = ERRH_SCOPES.get(param["kind"])
        if scope is None or param["array"] is not None:
            continue
        if not param["type"].endswith("*"):
            return scope, "(const void *)%s" % param["name"]
        if by_pointer is None and param["direction"] == "inout":
            name = param["name"]
            by_pointer = (scope, "(const void *)(%s != NULL ? *%s : NULL)" % (name, name))
    return by_pointer or ("MF_ERRH_NONE", "NULL")


def zero_value(return_type):
    if return_type == "double":
        return "0.0"
    if return_type == "MPI_Aint":
        return "0"
    if return_type.startswith("MPI_"):
        return return_type.upper() + "_NULL"  # MPI_Comm -> MPI_COMM_NULL ...
    raise BindingError("no zero value for return type %s" % return_type)


def stub(record):
    name = record["name"]
    pmpi = "P" + name
    decls = [p["decl"] for p in record["params"]] or ["void"]
    scope, handle = handle_argument(record)
    call_args = ['"%s"' % name, scope, handle]
    used = handle.split("(const void *)")[-1]
    unused = [
        INDENT + "(void)%s;" % p["name"]
        for p in record["params"]
        if p["name"] != "..." and not re.search(r"\b%s\b" % re.escape(p["name"]), used)
    ]
    lines = ["#pragma weak %s = %s" % (name, pmpi)]
    lines.append(wrap_call("%s %s" % (record["return_type"], pmpi), decls, ""))
    lines.append("{")
    lines.extend(unused)
    if record["return_type"] == "int":
        lines.append(wrap_call(INDENT + "return mf_binding_unsupported", call_args, ";"))
    else:
        lines.append(wrap_call(INDENT + "(void)mf_binding_unsupported", call_args, ";"))
        lines.append(INDENT + "return %s;" % zero_value(record["return_type"]))
    lines.append("}")
    return "\n".join(lines)


def render(functions, sources):
    names = ", ".join(os.path.basename(s) for s in sources) or "none"
    header = [
        "/* SPDX-License-Identifier: BSD-3-Clause */",
        "/*",
        " * Stubs for the MPI-5.0 ABI functions that have no hand-written binding yet: each",
        " * reports MPI_ERR_UNSUPPORTED_OPERATION through the error handler of its first",
        " * communicator, window, file or session argument.",
        " *",
        " * Generated by gen/gen_bindings.py from api/mpi_api.json and the hand-written bindings",
        " * (%s). Do not edit." % names,
        " */",
        "#include <stddef.h>",
        "",
        "#include <mpi.h>",
        "",
        '#include "binding.h"',
        "",
    ]
    body = "\n\n".join(stub(f) for f in functions)
    return "\n".join(header) + "\n" + body + ("\n" if body else "")


def write_file(path, text):
    temporary = path + ".tmp"
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", required=True, help="api/mpi_api.json")
    parser.add_argument("--output", required=True, help="C file to write")
    parser.add_argument("sources", nargs="*", help="hand-written binding C files")
    args = parser.parse_args()

    with open(args.api, encoding="utf-8") as api_file:
        functions = json.load(api_file)["functions"]
    abi_names = {f["name"] for f in functions}
    try:
        implemented = find_hand_written(args.sources, abi_names)
        missing = [f for f in functions if f["name"] not in implemented]
        text = render(missing, args.sources)
    except (OSError, BindingError) as error:
        sys.exit("gen_bindings: %s" % error)

    out_dir = os.path.dirname(os.path.abspath(args.output))
    os.makedirs(out_dir, exist_ok=True)
    write_file(args.output, text)
    listing = "".join(f["name"] + "\n" for f in missing)
    write_file(os.path.join(out_dir, "unimplemented.txt"), listing)


if __name__ == "__main__":
    main()
