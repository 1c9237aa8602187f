"""Macros defined once per render instance instead of once per render.

A template's root-level ``{% macro %}`` is a Python function defined inside the
generated ``root``: every render made a new closure of it (about a quarter of a
microsecond each, for the dozens of cells a macro reads), which for a template
with ten macros was a third of a short render. Here the generated module is
rearranged so that ``root`` lives in a factory, ``_ps_instance()``, whose cells
hold what ``root`` shares with its nested functions (``nonlocal`` in ``root``):
the root-level macros are defined once, in the factory, reading those cells, and
each render assigns them as before. A render takes an instance from a pool (a
new one when all are in use, as with several threads) and gives it back when it
ends; a render that raises drops its instance.

Nothing else changes: each line keeps its code (macro bodies and ``root``'s
lines are moved or indented, not rewritten), the debug information is mapped to
the new lines, and at the end of a render the shared cells are emptied, so that
nothing of a render outlives it. Jinja's code never reads a variable before the
render assigns it (it would be a ``NameError`` in the original form), so a cell's
value from an earlier render is never seen.
"""

from __future__ import annotations

import re
from types import CodeType

_ROOT_DEF = re.compile(r"^def root\(parent(?P<params>(?:, \w+=\w+)*)\):$")
_ROOT_PARAMS = ("missing", "environment")
_RETURN = "    return ''.join(_ps_out)"


def _root_code(module: CodeType) -> CodeType | None:
    for const in module.co_consts:
        if isinstance(const, CodeType) and const.co_name == "root":
            return const
    return None


def _debug_pairs(line: str) -> list[tuple[int, int]]:
    text = line.partition(" = ")[2].strip("'")
    if not text:
        return []
    return [tuple(int(x) for x in pair.split("=")) for pair in text.split("&")]  # type: ignore[misc]


def hoist_macros(source: str, ranges: list[tuple[int, int]], filename: str) -> str:
    """``source`` (a generated module whose ``root(parent)`` defines root-level macros
    on the lines ``ranges``, 1-based and inclusive) with those macros defined once per
    render instance; ``source`` itself when it does not have the expected shape."""
    if not ranges:
        return source
    lines = source.split("\n")
    try:
        start = lines.index(next(line for line in lines if line.startswith("def root(parent")))
    except StopIteration:
        return source
    end = start + 1
    while end < len(lines) and (lines[end].startswith(" ") or not lines[end]):
        end += 1
    match = _ROOT_DEF.match(lines[start])
    if match is None or _RETURN not in lines[start:end]:
        return source
    root = _root_code(compile(source, filename, "exec"))
    if root is None:
        return source
    cells = list(root.co_cellvars)
    params = root.co_varnames[: root.co_argcount]
    if any(name in params and name not in _ROOT_PARAMS for name in cells):
        return source  # a parameter of its own shared with a nested function: not moved
    shared = [name for name in cells if name not in _ROOT_PARAMS]
    kept_params = [name for name in _ROOT_PARAMS if f"{name}={name}" in lines[start] and name not in cells]
    hoisted = [(a - 1, b - 1) for a, b in ranges]  # 0-based, inclusive
    if any(not lines[a].startswith("    def macro(") or not (start < a <= b < end) for a, b in hoisted):
        return source

    # (new line, the old line it comes from: for the debug information)
    out: list[tuple[str, int]] = [(line, i) for i, line in enumerate(lines[:start])]
    out.append((f"def _ps_instance({', '.join(f'{n}={n}' for n in _ROOT_PARAMS)}):", start))
    if shared:
        out.append((f"    {' = '.join(shared)} = None", start))
    for k, (a, b) in enumerate(hoisted):
        out.extend((lines[i], i) for i in range(a, b + 1))
        out.append((f"    _ps_m{k} = macro", b))
    params_text = "".join(f", {name}={name}" for name in kept_params)
    out.append((f"    def root(parent{params_text}):", start))
    if shared:
        out.append((f"        nonlocal {', '.join(shared)}", start))
    starts = {a: (k, b) for k, (a, b) in enumerate(hoisted)}
    i = start + 1
    while i < end:
        if i in starts:
            k, b = starts[i]
            out.append((f"        macro = _ps_m{k}", i))
            i = b + 1
            continue
        line = lines[i]
        if line == _RETURN and shared:
            # Nothing of this render stays in the instance's cells.
            out.append(("        _ps_text = ''.join(_ps_out)", i))
            out.append((f"        {' = '.join(shared)} = None", i))
            out.append(("        return _ps_text", i))
        else:
            out.append((("    " + line) if line else line, i))
        i += 1
    out.append(("    return root", end - 1))
    out.extend(
        [
            ("_ps_roots = []", end - 1),
            ("_ps_roots_pop, _ps_roots_push = _ps_roots.pop, _ps_roots.append", end - 1),
            ("def root(parent):", end - 1),
            ("    try:", end - 1),
            ("        run = _ps_roots_pop()", end - 1),
            ("    except IndexError:", end - 1),
            ("        run = _ps_instance()", end - 1),
            ("    text = run(parent)", end - 1),
            ("    _ps_roots_push(run)  # (as many as renders of this template run at once)", end - 1),
            ("    return text", end - 1),
        ]
    )
    out.extend((line, i) for i, line in enumerate(lines[end:], start=end))

    # The debug information (template line = code line pairs), for the new lines.
    at = next((n for n, (line, _) in enumerate(out) if line.startswith("debug_info = ")), None)
    if at is None:
        return source
    pairs = _debug_pairs(out[at][0])

    def template_line(code_line: int) -> int:
        found = 1
        for template, code in pairs:
            if code > code_line:
                break
            found = template
        return found

    new_pairs: list[str] = []
    last = None
    for n, (_, old) in enumerate(out, start=1):
        line = template_line(old + 1)
        if line != last:
            new_pairs.append(f"{line}={n}")
            last = line
    out[at] = (f"debug_info = {'&'.join(new_pairs)!r}", out[at][1])
    return "\n".join(line for line, _ in out)
