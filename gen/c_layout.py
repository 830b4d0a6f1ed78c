# SPDX-License-Identifier: BSD-3-Clause
"""Line layout functions shared by the C generators in gen/, so that generated C looks the way
clang-format (with the repository's .clang-format) would lay it out: 100 columns, 4-space
indent, wrapped parameter lists aligned after the opening parenthesis.
"""

WIDTH = 100
INDENT = "    "


def fill_lines(first, items, tail, column):
    """Greedy fill: items joined by ', ', new lines start at 'column'."""
    lines = []
    current = first
    for index, item in enumerate(items):
        piece = item + ("," if index < len(items) - 1 else ")" + tail)
        fresh = current.strip() == "" or current.endswith("(")
        candidate = current + ("" if fresh else " ") + piece
        if len(candidate) > WIDTH and not fresh:
            lines.append(current)
            current = " " * column + piece
        else:
            current = candidate
    lines.append(current)
    return lines


def wrap_call(head, items, tail):
    """'head(item, item, ...)tail' wrapped at WIDTH the way clang-format does it: continuation
    lines aligned after the opening parenthesis; when that does not fit, the name moved to a
    line of its own; as a last resort, the items on the next lines with one indent."""
    one_line = head + "(" + ", ".join(items) + ")" + tail
    if len(one_line) <= WIDTH or not items:
        return one_line
    lines = fill_lines(head + "(", items, tail, len(head) + 1)
    if max(len(line) for line in lines) > WIDTH:
        return_type, _, name = head.rpartition(" ")
        lines = [return_type] + fill_lines(name + "(", items, tail, len(name) + 1)
    if max(len(line) for line in lines) > WIDTH:
        lines = [head + "("] + fill_lines(INDENT, items, tail, len(INDENT))
    return "\n".join(lines)
