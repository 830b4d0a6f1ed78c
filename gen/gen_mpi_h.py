# SPDX-License-Identifier: BSD-3-Clause
"""Write mpi.h, the MPI-5.0 standard ABI header, at build time.

Inputs: api/mpi_api.json (functions and callback prototypes, from gen/extract_api.py),
api/abi_constants.txt (our name -> value table) and include/mpi.h.in (the hand-written
typedefs, with @MF_...@ markers where the generated parts go). Every function is declared
twice, as MPI_X and PMPI_X, both with default visibility so that the library, built with
hidden visibility, exports exactly these names. Python standard library only.
"""

import argparse
import json
import os
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import abi_table  # noqa: E402
from c_layout import INDENT, WIDTH, wrap_call  # noqa: E402

def fail(message):
    sys.exit("gen_mpi_h: " + message)


# Parameters that take a special pointer constant (MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY are
# ((int *)10) and ((int *)11)) are declared as pointers, not arrays: for an array parameter
# gcc's -Wstringop-overread and -Wstringop-overflow (on with -Wall from -O2) take such a
# constant for an object of size 0 and reject correct programs built with -Werror. Statuses
# and datarep follow MPICH 5.0.2's mpi_abi.h, which declares these the same way.
POINTER_PARAMS = {"weights", "sourceweights", "destweights", "array_of_statuses", "datarep"}


def param_decl(param):
    if param["name"] in POINTER_PARAMS and param["decl"].endswith("[]"):
        return "%s%s" % (param["type"], "" if param["type"].endswith("*") else " ") + param["name"]
    return param["decl"]


def param_decls(record):
    return [param_decl(p) for p in record["params"]] or ["void"]


def prototype(record, prefix):
    name = prefix + record["name"][len("MPI_") :] if prefix == "PMPI_" else record["name"]
    return wrap_call("MF_MPI_API %s %s" % (record["return_type"], name), param_decls(record), ";")


def callback_typedef(record):
    head = "typedef %s %s" % (record["return_type"], record["name"])
    return wrap_call(head, param_decls(record), ";")


def comment_lines(notes, indent=""):
    return ["%s/* %s */" % (indent, note) for note in notes]


def define_lines(group):
    """Macros aligned in runs of consecutive lines, as clang-format's AlignConsecutiveMacros."""
    ctype = group.c_type()
    runs = [[]]
    for const in group.constants:
        if const.notes and runs[-1]:
            runs.append([])
        runs[-1].append(const)
    lines = []
    for run in runs:
        width = max(len(c.name) for c in run)
        for const in run:
            lines.extend(comment_lines(const.notes))
            if const.alias_of is not None or ctype is None:
                value = const.literal
            else:
                value = "((%s)%s)" % (ctype, const.literal)
            lines.append("#define %s %s" % (const.name.ljust(width), value))
    return lines


def enum_lines(group):
    items = ["%s = %s" % (c.name, c.literal) for c in group.constants]
    has_notes = any(c.notes for c in group.constants)
    if group.kind == "named_enum":
        opening, closing = "typedef enum %s {" % group.argument, "} %s;" % group.argument
        lines = []
    else:
        opening, closing = "enum {", "};"
        lines = ["/* %s */" % group.argument]
    one_line = opening + " " + ", ".join(items) + " " + closing
    if not has_notes and len(one_line) <= WIDTH:
        return lines + [one_line]
    lines.append(opening)
    for index, const in enumerate(group.constants):
        lines.extend(comment_lines(const.notes, INDENT))
        comma = "," if index < len(group.constants) - 1 else ""
        lines.append(INDENT + items[index] + comma)
    return lines + [closing]


def group_lines(group):
    lines = comment_lines(group.notes)
    if group.kind in ("enum", "named_enum"):
        return lines + enum_lines(group)
    if group.kind == "define":
        lines.append("/* %s */" % group.argument)
    return lines + define_lines(group)


def render_groups(groups):
    return "\n\n".join("\n".join(group_lines(g)) for g in groups)


def check_callbacks(api, groups):
    """The table must give a value to every predefined callback the standard lists, with the
    callback type the standard gives it."""
    known = {c["name"] for c in api["callbacks"]}
    in_table = {}
    for group in groups:
        if group.kind != "callback":
            continue
        if group.argument not in known:
            fail("%s: %s is not a callback type" % (group.line, group.argument))
        for const in group.constants:
            in_table[const.name] = group.argument
    for predef in api["predefined_callbacks"]:
        if in_table.get(predef["name"]) != predef["callback"]:
            fail(
                "%s must be in api/abi_constants.txt under '@callback %s'"
                % (predef["name"], predef["callback"])
            )


def render_functions(functions):
    mpi = [f for f in functions if not f["tool"]]
    tool = [f for f in functions if f["tool"]]
    blocks = []
    for prefix, title in (("MPI_", "MPI"), ("PMPI_", "PMPI profiling")):
        for subset, what in ((mpi, "functions"), (tool, "tool interface functions")):
            lines = ["/* %s %s */" % (title, what)]
            lines.extend(prototype(f, prefix) for f in subset)
            blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def banner(inputs):
    sentence = "Generated by gen/gen_mpi_h.py from %s and %s. Do not edit." % (
        ", ".join(inputs[:-1]),
        inputs[-1],
    )
    wrapped = textwrap.wrap(sentence, WIDTH - len(" * "))
    return " *\n" + "\n".join(" * " + line for line in wrapped)


def render(template, api, groups, inputs):
    check_callbacks(api, groups)
    values = {
        "@MF_BANNER@": banner(inputs),
        "@MF_CONSTANTS@": render_groups([g for g in groups if g.kind != "callback"]),
        "@MF_CALLBACK_TYPES@": "\n".join(callback_typedef(c) for c in api["callbacks"]),
        "@MF_CALLBACK_CONSTANTS@": render_groups([g for g in groups if g.kind == "callback"]),
        "@MF_FUNCTIONS@": render_functions(api["functions"]),
    }
    for marker, text in values.items():
        if template.count(marker) != 1:
            fail("the template must contain %s exactly once" % marker)
        template = template.replace(marker, text)
    return template


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--api", required=True, help="api/mpi_api.json")
    parser.add_argument("--constants", required=True, help="api/abi_constants.txt")
    parser.add_argument("--template", required=True, help="include/mpi.h.in")
    parser.add_argument("--output", required=True, help="mpi.h to write")
    args = parser.parse_args()

    try:
        groups, _ = abi_table.load(args.constants)
    except (OSError, abi_table.TableError) as error:
        fail(str(error))
    with open(args.api, encoding="utf-8") as api_file:
        api = json.load(api_file)
    with open(args.template, encoding="utf-8") as template_file:
        template = template_file.read()

    inputs = [
        "api/" + os.path.basename(args.api),
        "api/" + os.path.basename(args.constants),
        "include/" + os.path.basename(args.template),
    ]
    text = render(template, api, groups, inputs)
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    temporary = args.output + ".tmp"
    with open(temporary, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, args.output)


if __name__ == "__main__":
    main()
