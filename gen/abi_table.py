# SPDX-License-Identifier: BSD-3-Clause
"""Reader for api/abi_constants.txt, the name -> value table of the MPI-5.0 ABI constants.

Shared by gen/gen_mpi_h.py (which writes the constants into mpi.h) and the tests in
tests/abi (which compare them with another implementation). Python standard library only.
The file format is described at the top of api/abi_constants.txt.
"""

import re

GROUP_KINDS = ("define", "enum", "named_enum", "handle", "pointer", "callback", "cast")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
INT_RE = re.compile(r"^-?(0x[0-9a-fA-F]+|[0-9]+)$")


class TableError(Exception):
    pass


class Constant:
    def __init__(self, name, literal, alias_of, notes, line):
        self.name = name
        self.literal = literal  # the value as written (for integers) or the aliased name
        self.alias_of = alias_of  # name of the aliased constant, or None
        self.notes = notes  # comment lines written just above it inside its group
        self.line = line
        self.value = None  # integer value, resolved through aliases


class Group:
    def __init__(self, kind, argument, notes, line):
        self.kind = kind
        self.argument = argument  # title, type name or C type, depending on kind
        self.notes = notes  # comment lines written just above the "@kind" line
        self.line = line
        self.constants = []

    def c_type(self):
        """The C type a cast group casts to, or None for integer groups."""
        if self.kind == "callback":
            return self.argument + " *"
        if self.kind in ("handle", "pointer", "cast"):
            return self.argument
        return None


def _comment_text(line):
    text = line.lstrip()[1:].strip()
    if text and set(text) == {"-"}:
        return None  # a visual separator, not a comment
    return text


def _parse_lines(path):
    groups = []
    pending = []
    with open(path, encoding="utf-8") as table:
        for number, raw in enumerate(table, start=1):
            where = "%s:%d" % (path, number)
            line = raw.strip()
            if not line:
                pending = []  # comments only travel with the item right below them
                continue
            if line.startswith("#"):
                text = _comment_text(line)
                if text is not None:
                    pending.append(text)
                continue
            if "#" in line:
                line = line[: line.index("#")].strip()
            if line.startswith("@"):
                kind, _, argument = line[1:].partition(" ")
                if kind not in GROUP_KINDS or not argument.strip():
                    raise TableError("%s: bad group line '%s'" % (where, line))
                groups.append(Group(kind, argument.strip(), pending, where))
                pending = []
                continue
            fields = line.split()
            if len(fields) != 2 or not NAME_RE.match(fields[0]):
                raise TableError("%s: expected 'NAME VALUE', got '%s'" % (where, line))
            if not groups:
                raise TableError("%s: constant before the first @group line" % where)
            name, literal = fields
            alias_of = None if INT_RE.match(literal) else literal
            if alias_of is not None and not NAME_RE.match(alias_of):
                raise TableError("%s: bad value '%s'" % (where, literal))
            groups[-1].constants.append(Constant(name, literal, alias_of, pending, where))
            pending = []
    return groups


def _resolve(groups):
    by_name = {}
    for group in groups:
        if not group.constants:
            raise TableError("%s: empty group" % group.line)
        for const in group.constants:
            if const.name in by_name:
                raise TableError("%s: %s defined twice" % (const.line, const.name))
            if const.alias_of is None:
                const.value = int(const.literal, 0)
            else:
                target = by_name.get(const.alias_of)
                if target is None:
                    raise TableError(
                        "%s: %s aliases %s, which is not defined above it"
                        % (const.line, const.name, const.alias_of)
                    )
                const.value = target.value
            by_name[const.name] = const
    return by_name


def load(path):
    """Parse the table. Returns (groups in file order, {name: Constant})."""
    groups = _parse_lines(path)
    return groups, _resolve(groups)
