# SPDX-License-Identifier: BSD-3-Clause
"""Write api/mpi_api.json, the machine-readable list of every C function of the MPI-5.0
standard ABI, from the MPI Forum's pympistandard package (pinned to 0.2.0).

For each function it records the name, the C return type and each parameter as a C
declaration, together with the semantic kind, direction and array length that pympistandard
carries, so that the header, stub and argument-check generators never need pympistandard
themselves. It also records the callback prototypes and the predefined callback names.
The ABI drops the Fortran handle conversions (c2f/f2c and the MPI_Status conversions); the
lists below say what is excluded, corrected or added and why. Run it with a Python that has
pympistandard installed:  python gen/extract_api.py --output api/mpi_api.json
"""

import argparse
import json
import re
import sys

PINNED_VERSION = "0.2.0"

# Not part of the C ABI: their meaning depends on the Fortran compiler's INTEGER size
# (MPI-5.0 ABI chapter). The *_toint/*_fromint pairs replace the handle conversions.
EXCLUDED_PATTERNS = [
    (r"_c2f$", "handle conversion to Fortran, replaced by *_toint"),
    (r"_f2c$", "handle conversion from Fortran, replaced by *_fromint"),
    (r"^MPI_Status_(c2f08|f082c|f082f|f2f08)$", "MPI_Status conversions to/from Fortran"),
]

# Standard functions that the MPI-5.0 ABI has but pympistandard 0.2.0 lacks. None so far:
# the function set equals MPICH 5.0.2's ABI header minus MPIX_* (checked by the abi_functions
# test). Entries would be complete function records in the output format.
ADDITIONS = []

# Places where pympistandard 0.2.0 renders a C declaration that differs from the standard's
# C binding. Key: (function, parameter) -> (declaration, decayed type).
CORRECTIONS = {
    # The standard reads "int MPI_Info_create_env(int argc, char *argv[], MPI_Info *info)";
    # pympistandard loses one level of pointer and renders "char argv[]".
    ("MPI_Info_create_env", "argv"): ("char *argv[]", "char **"),
}

# Handle parameter kinds, used by the generators to pick the error handler of a call.
FUNCTION_TYPE_KINDS = {"EVENT_CB_FUNCTION", "EVENT_FREE_CB_FUNCTION", "EVENT_DROP_CB_FUNCTION"}


def load_standard():
    try:
        import pympistandard
    except ImportError:
        sys.exit("extract_api: pympistandard is not installed in this python (%s)" % sys.executable)
    if pympistandard.__version__ != PINNED_VERSION:
        sys.exit(
            "extract_api: pympistandard %s found, %s required"
            % (pympistandard.__version__, PINNED_VERSION)
        )
    pympistandard.use_api_version(1)
    return pympistandard


def spaced_pointers(text):
    """pympistandard writes 'void* buf'; we write 'void *buf' everywhere."""
    text = re.sub(r"\s*\*", " *", text)
    text = re.sub(r"\*\s+(?=\*)", "*", text)
    text = re.sub(r"\*\s+(?=\w)", "*", text)
    return re.sub(r"\s+", " ", text).strip()


def decayed_type(param):
    """The parameter's type as a function body sees it (arrays decay to pointers)."""
    kind = param._parseset["kind"]
    if kind == "VARARGS":
        return "..."
    base = ("const " if param.constant else "") + param.type
    array = param.array
    if array.startswith("[]["):
        return spaced_pointers(base) + " (*)" + array[2:]
    if array == "[]":
        base += "*"
    if kind in FUNCTION_TYPE_KINDS:
        base += "*"
    return spaced_pointers(base)


def declaration(param):
    if param._parseset["kind"] == "VARARGS":
        return "..."
    return spaced_pointers(str(param))


def parameter_record(func_name, param):
    raw = param._parseset
    decl = declaration(param)
    ctype = decayed_type(param)
    if (func_name, param.name) in CORRECTIONS:
        decl, ctype = CORRECTIONS[(func_name, param.name)]
    length = raw["length"]
    return {
        "name": "..." if raw["kind"] == "VARARGS" else param.name,
        "decl": decl,
        "type": ctype,
        "kind": raw["kind"],
        "direction": raw["param_direction"],
        "constant": bool(raw["constant"]),
        "array": length,
        "optional": bool(raw["optional"]),
        "root_only": bool(raw["root_only"]),
        "asynchronous": bool(raw["asynchronous"]),
        "desc": raw["desc"],
    }


def symbol_record(symbol, expression, large):
    name = expression.name
    params = [parameter_record(name, p) for p in expression.parameters]
    return {
        "name": name,
        "return_type": spaced_pointers(expression.return_type),
        "return_kind": symbol._parseset["return_kind"],
        "large_count": large,
        "deprecated": bool(symbol._parseset["attributes"]["deprecated"]),
        "params": params,
    }


def excluded(name):
    return any(re.search(pattern, name) for pattern, _ in EXCLUDED_PATTERNS)


def collect_functions(std):
    records = []
    for proc in std.PROCEDURES.values():
        small = proc.express.iso_c
        if small is None or excluded(small.name):
            continue
        large = proc.express.embiggen.iso_c
        record = symbol_record(proc, small, False)
        record["large_variant"] = large.name if large is not None else None
        record["small_variant"] = None
        records.append(record)
        if large is not None:
            big = symbol_record(proc, large, True)
            big["large_variant"] = None
            big["small_variant"] = small.name
            records.append(big)
    records.extend(ADDITIONS)
    for record in records:
        record["tool"] = record["name"].startswith("MPI_T_")
    return sorted(records, key=lambda r: r["name"])


def collect_callbacks(std):
    records = []
    for callback in std.CALLBACKS.values():
        small = callback.express.iso_c
        large = callback.express.embiggen.iso_c
        record = symbol_record(callback, small, False)
        record["large_variant"] = large.name if large is not None else None
        records.append(record)
        if large is not None:
            big = symbol_record(callback, large, True)
            big["large_variant"] = None
            records.append(big)
    return sorted(records, key=lambda r: r["name"])


def collect_predefined(std):
    records = []
    for predef in std.PREDEFINED_FUNCTIONS.values():
        callback = predef._parseset["attributes"]["predefined_function"]
        records.append({"name": predef.express.iso_c.name, "callback": callback})
        large = predef.express.embiggen.iso_c
        if large is not None:
            records.append({"name": large.name, "callback": callback + "_c"})
    return sorted(records, key=lambda r: r["name"])


def check_no_fortran_types(functions):
    for record in functions:
        for param in record["params"]:
            if "MPI_Fint" in param["type"] or "MPI_F08" in param["type"]:
                sys.exit("extract_api: %s still uses a Fortran type" % record["name"])


def compact(value):
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def dump_record(record):
    """One key per line, one parameter per line: small, readable diffs when the data moves."""
    lines = []
    for key in sorted(record):
        if key == "params":
            if not record[key]:
                lines.append('  "params": []')
                continue
            params = ",\n".join("   " + compact(p) for p in record[key])
            lines.append('  "params": [\n' + params + "\n  ]")
        else:
            lines.append("  %s: %s" % (compact(key), compact(record[key])))
    return " {\n" + ",\n".join(lines) + "\n }"


def dump_document(document):
    parts = []
    for key in sorted(document):
        value = document[key]
        if isinstance(value, list) and value and isinstance(value[0], dict) and "name" in value[0]:
            body = ",\n".join(dump_record(r) for r in value)
            parts.append('%s: [\n%s\n]' % (compact(key), body))
        else:
            parts.append("%s: %s" % (compact(key), compact(value)))
    text = "{\n" + ",\n".join(parts) + "\n}\n"
    if json.loads(text) != document:
        sys.exit("extract_api: internal error, formatted json does not round-trip")
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", required=True, help="path of the JSON file to write")
    args = parser.parse_args()

    std = load_standard()
    functions = collect_functions(std)
    check_no_fortran_types(functions)
    document = {
        "_generated": "by gen/extract_api.py from pympistandard %s; do not edit" % PINNED_VERSION,
        "excluded": [{"pattern": p, "reason": r} for p, r in EXCLUDED_PATTERNS],
        "functions": functions,
        "callbacks": collect_callbacks(std),
        "predefined_callbacks": collect_predefined(std),
    }
    with open(args.output, "w", encoding="utf-8") as out:
        out.write(dump_document(document))
    print("extract_api: wrote %d functions to %s" % (len(functions), args.output))


if __name__ == "__main__":
    main()
