"""The one YAML loader of prompt-style.

Every YAML file the project reads (task files of every format, meta templates,
promptsource templates, ``--meta-option`` values) goes through
:func:`load_yaml`. It reads untrusted files safely:

- **Parsed once**, by libyaml's C parser when PyYAML has it (the pure-Python one
  otherwise), into events that one iterative composer here turns into Python
  values: no recursion, so no ``RecursionError`` and no C stack overflow on deep
  nesting.
- **YAML 1.2 core schema** for untagged scalars: ``true``/``false``
  (``True``/``TRUE``...), ``null``/``~``/empty, decimal integers without leading
  zeros, ``0o17``, ``0x1F``, floats with a point or an exponent, ``.inf``,
  ``.nan``. Everything else is a string: ``yes``, ``no``, ``on``, ``off``,
  ``y``, ``n``, ``0755``, ``1:30``, ``2001-12-14`` and ``1_000`` stay as
  written (YAML 1.1, PyYAML's default, would make them booleans, octal and
  sexagesimal numbers and dates). A float keeps the text it was written with
  when printed (``3.10`` prints ``3.10``), while comparing and computing as the
  float it is.
- **Strict**: duplicate keys at any depth are errors, as are non-scalar keys,
  keys equal as Python values (``1`` and ``true``), a second document, and
  every tag but the core ones (``!!str``, ``!!int``, ``!!float``, ``!!bool``,
  ``!!null``, ``!!seq``, ``!!map``) and those the caller registers with
  ``tags=``: no Python objects, no ``!!omap``, ``!!pairs``, ``!!set``,
  ``!!binary``, ``!!timestamp``.
- **Bounded** (:class:`~prompt_style.safe.limits.YamlLimits`): file size,
  nesting depth, and nodes counted with every alias expanded, so that an alias
  bomb ("billion laughs") stops within microseconds; a recursive alias is an
  error. Aliases are otherwise allowed (the value is shared, not copied), and
  so are merge keys (``<<: *defaults``).
- Errors are :class:`~prompt_style.TaskFileError` (budgets:
  :class:`~prompt_style.YamlLimitError`) with the file and line; the line of
  every key is kept, by dotted path, for later messages.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import TaskFileError, YamlLimitError, cut
from .limits import YamlLimits, yaml_limits

__all__ = ["YamlDocument", "YamlFloat", "YamlLimits", "load_yaml", "parse_scalar"]


@dataclass(frozen=True)
class YamlDocument:
    """A parsed YAML file: its data and where each key stands."""

    data: Any
    lines: Mapping[str, int] = field(default_factory=dict, repr=False)
    """Line (1-based) of each key, by dotted path: ``template``, ``template.suffix``,
    ``templates.0.jinja``; list items by their index (``doc_to_choice.2``)."""
    path: Path | None = None
    duplicates: tuple[tuple[str, int, int], ...] = ()
    """``(key path, line, line of the first occurrence)`` of each key written
    twice in one mapping, when they were allowed (``duplicate_keys="last"``)."""


class YamlFloat(float):
    """A float that prints as it was written (``3.10``, ``1e3``, ``.5``)."""

    __slots__ = ("text",)

    def __new__(cls, value: float, text: str) -> "YamlFloat":
        obj = super().__new__(cls, value)
        obj.text = text
        return obj

    def __str__(self) -> str:
        return self.text

    __repr__ = __str__

    def __reduce__(self) -> tuple:
        return (YamlFloat, (float(self), self.text))


# -- YAML 1.2 core schema -----------------------------------------------------------

_STR = "tag:yaml.org,2002:str"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = "tag:yaml.org,2002:map"
_MERGE = "tag:yaml.org,2002:merge"

_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUES = frozenset({"true", "True", "TRUE"})
_FALSES = frozenset({"false", "False", "FALSE"})
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*)")
_OCTAL = re.compile(r"0o[0-7]+")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_FLOATS = re.compile(r"[-+]?(?:(?:\.[0-9]+|[0-9]+\.[0-9]*)(?:[eE][-+]?[0-9]+)?|[0-9]+[eE][-+]?[0-9]+)")
_INFS = re.compile(r"[-+]?\.(?:inf|Inf|INF)")
_NANS = frozenset({".nan", ".NaN", ".NAN"})
_SCALAR_START = frozenset("0123456789-+.~nNtTfF")


def _float(text: str) -> float:
    # .inf and .nan print as written too (Python would print inf and nan).
    if _INFS.fullmatch(text):
        return YamlFloat(-math.inf if text.startswith("-") else math.inf, text)
    if text in _NANS:
        return YamlFloat(math.nan, text)
    value = float(text)
    return value if repr(value) == text else YamlFloat(value, text)


def parse_scalar(text: str) -> Any:
    """The YAML 1.2 core-schema value of a plain (unquoted, untagged) scalar."""
    if not text:
        return None
    if text[0] not in _SCALAR_START:
        return text
    if text in _NULLS:
        return None
    if text in _TRUES:
        return True
    if text in _FALSES:
        return False
    if _DECIMAL.fullmatch(text):
        return int(text) if len(text) <= 4000 else text  # Python converts at most 4,300 digits
    # Like decimal integers, octal and hexadecimal ones of more than about 13,000 bits stay
    # the text they are (Python reads such hexadecimal text at once, and cannot print it).
    if _OCTAL.fullmatch(text):
        return int(text[2:], 8) if len(text) <= 4400 else text
    if _HEX.fullmatch(text):
        return int(text[2:], 16) if len(text) <= 3300 else text
    if _FLOATS.fullmatch(text) or _INFS.fullmatch(text) or text in _NANS:
        return _float(text)
    return text


def _tagged_scalar(tag: str, text: str) -> Any:
    """An explicitly tagged core scalar (``!!int "12"``); ``ValueError`` when it is not one."""
    if tag == _STR:
        return text
    if tag == _NULL and text in _NULLS:
        return None
    if tag == _BOOL and text in _TRUES | _FALSES:
        return text in _TRUES
    if tag == _INT:
        value = parse_scalar(text)
        if type(value) is int:
            return value
    if tag == _FLOAT:
        if _DECIMAL.fullmatch(text):
            return float(text)
        value = parse_scalar(text)
        if isinstance(value, float):
            return value
    raise ValueError(text)


def _is_merge(event: Any) -> bool:
    return event.value == "<<" and event.tag in (None, _MERGE) and event.implicit[0]


# -- the composer --------------------------------------------------------------------


class _Frame:
    __slots__ = (
        "seq",
        "value",
        "path",
        "anchor",
        "height",
        "key",
        "has_key",
        "key_line",
        "merges",
        "mark",
        "node",
        "start",
    )

    def __init__(self, seq: bool, path: str, anchor: str | None, mark: Any, node: Any, start: int) -> None:
        self.seq = seq
        self.start = start  # nodes counted before this collection opened
        self.value: Any = [] if seq else {}
        self.path = path
        self.anchor = anchor
        self.height = 1
        self.key: Any = None
        self.has_key = False
        self.key_line = 0
        self.merges: list[Any] = []
        self.mark = mark
        self.node = node  # the yaml node being built, inside a value with a caller's tag


class _Composer:
    """Turns parser events into Python values, line by line, within budgets."""

    def __init__(
        self,
        parser: Any,
        file: str,
        limits: YamlLimits,
        tags: Mapping[str, Callable] | None,
        duplicate_keys: str = "error",
    ) -> None:
        import yaml

        self.keep_last = duplicate_keys == "last"
        self.duplicates: list[tuple[str, int, int]] = []
        self.yaml = yaml
        self.parser = parser
        self.file = file
        self.limits = limits
        self.tags = dict(tags or {})
        self.lines: dict[str, int] = {}
        self.anchors: dict[str, tuple[Any, int, int, Any]] = {}  # value, nodes, height, node
        self.open: set[str] = set()
        self.nodes = 0
        self.aliased = 0
        self.stack: list[_Frame] = []
        self.tagged = 0  # depth inside a value with a caller's tag (node mode)
        self.constructor: Any = None
        self.kept: list[Any] = []  # Python values standing in node mode (aliases from outside)

    # -- errors
    def error(self, message: str, mark: Any = None, hint: str | None = None) -> TaskFileError:
        return TaskFileError(message, file=self.file, line=mark.line + 1 if mark is not None else None, hint=hint)

    def limit(self, limit: str, message: str, mark: Any) -> YamlLimitError:
        return YamlLimitError(
            message,
            limit=limit,
            value=getattr(self.limits, limit),
            file=self.file,
            line=mark.line + 1 if mark is not None else None,
        )

    def count(self, nodes: int, mark: Any, alias: bool = False) -> None:
        self.nodes += nodes
        if alias:
            self.aliased += nodes
        if self.nodes > self.limits.max_nodes:
            if self.aliased:
                message = (
                    f"aliases expand the document to more than {self.limits.max_nodes:,} nodes "
                    f"(an alias bomb, or data too large for a task file)"
                )
            else:
                message = f"more than {self.limits.max_nodes:,} nodes (put large data in a JSON Lines file)"
            raise self.limit("max_nodes", message, mark)

    # -- values
    def scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag in (None, "!"):
            return parse_scalar(event.value) if event.implicit[0] and tag is None else event.value
        if tag in (_STR, _INT, _FLOAT, _BOOL, _NULL):
            try:
                return _tagged_scalar(tag, event.value)
            except ValueError:
                raise self.error(
                    f"{cut(event.value)} is not a valid {tag.rsplit(':', 1)[-1]}", event.start_mark
                ) from None
        raise self.tag_error(tag, event.start_mark)

    def tag_error(self, tag: str, mark: Any) -> TaskFileError:
        shown = tag.replace("tag:yaml.org,2002:", "!!")
        return self.error(
            f"the tag {cut(shown)} is not allowed",
            mark,
            hint="task files hold plain data: strings, numbers, booleans, null, lists and mappings",
        )

    def add(self, value: Any, height: int, mark: Any, node: Any = None) -> None:
        """Put a finished value into the open collection (or make it the document)."""
        if height + len(self.stack) > self.limits.max_depth:
            raise self.limit("max_depth", f"lists and mappings nest more than {self.limits.max_depth} deep", mark)
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        if height + 1 > frame.height:
            frame.height = height + 1
        if frame.node is not None:
            frame.node.value.append(node) if frame.seq else self.add_node_pair(frame, node, mark)
            return
        if frame.seq:
            path = f"{frame.path}{len(frame.value)}"
            self.lines.setdefault(path, mark.line + 1)
            frame.value.append(value)
            return
        if not frame.has_key:
            if isinstance(value, (list, dict)) or node is not None and not isinstance(node, self.yaml.ScalarNode):
                raise self.error("a key must be a plain value (a string or number), not a list or mapping", mark)
            try:
                hash(value)
            except TypeError:
                raise self.error(f"the key {cut(value)} cannot be used as a key", mark) from None
            frame.key, frame.has_key, frame.key_line = value, True, mark.line + 1
            return
        key = frame.key
        frame.has_key = False
        if key is _MERGE_KEY:
            frame.merges.append((value, mark))
            return
        path = f"{frame.path}{key}"
        if key in frame.value:
            self.duplicate(path, frame)
        self.lines.setdefault(path, frame.key_line)
        frame.value[key] = value

    def add_node_pair(self, frame: _Frame, node: Any, mark: Any) -> None:
        if not frame.has_key:
            if not isinstance(node, self.yaml.ScalarNode):
                raise self.error("a key must be a plain value (a string or number), not a list or mapping", mark)
            frame.key, frame.has_key, frame.key_line = node, True, mark.line + 1
            return
        frame.has_key = False
        name = frame.key.value
        path = f"{frame.path}{name}"
        if any(k.value == name for k, _ in frame.node.value):
            self.duplicate(path, frame)
            frame.node.value = [(k, v) for k, v in frame.node.value if k.value != name]
        self.lines.setdefault(path, frame.key_line)
        frame.node.value.append((frame.key, node))

    def duplicate(self, path: str, frame: _Frame) -> None:
        """A key written twice: an error, or (``duplicate_keys="last"``) the last
        one wins as in PyYAML, its lines replacing the first's."""
        if not self.keep_last:
            raise TaskFileError(
                f"key {cut(path)} appears twice",
                file=self.file,
                line=frame.key_line,
                key=path,
                hint="remove one of them; YAML would keep only the last",
            )
        self.duplicates.append((path, frame.key_line, self.lines.get(path, 0)))
        prefix = path + "."
        for stale in [k for k in self.lines if k == path or k.startswith(prefix)]:
            del self.lines[stale]

    def close_mapping(self, frame: _Frame) -> Any:
        value = frame.value
        if not frame.merges:
            return value
        merged: dict[Any, Any] = {}
        for item, mark in reversed(frame.merges):
            parts = item if isinstance(item, list) else [item]
            if not all(isinstance(part, dict) for part in parts):
                raise self.error("a merge key (<<) takes a mapping or a list of mappings", mark)
            for part in reversed(parts):
                merged.update(part)
        return {**merged, **value}

    # -- node mode: a value with a caller's tag, built as yaml nodes for its constructor
    def node_scalar(self, event: Any) -> Any:
        tag = event.tag
        if tag in (None, "!"):
            value = parse_scalar(event.value) if event.implicit[0] and tag is None else event.value
            tag = _TAG_OF.get(type(value), _STR) if not isinstance(value, float) else _FLOAT
            if tag == _FLOAT:
                # the constructor rebuilds floats from text; keep the value through the table
                self.kept.append(value)
                return self.yaml.ScalarNode(_KEPT, str(len(self.kept) - 1), event.start_mark, event.end_mark)
        elif tag not in self.tags and tag not in (_STR, _INT, _FLOAT, _BOOL, _NULL):
            raise self.tag_error(tag, event.start_mark)
        return self.yaml.ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)

    def construct(self, node: Any) -> Any:
        if self.constructor is None:
            self.constructor = _constructor_class(self.tags, self.kept)()
        try:
            return self.constructor.construct_document(node)
        except self.yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None) or node.start_mark
            raise self.error(f"cannot build the {node.tag} value: {getattr(exc, 'problem', exc)}", mark) from None
        except TaskFileError:
            raise
        except Exception as exc:  # the caller's constructor rejected the value
            raise self.error(
                f"cannot build the {node.tag} value: {type(exc).__name__}: {exc}", node.start_mark
            ) from None

    # -- the event loop
    def compose(self) -> Any:
        yaml = self.yaml
        get = self.parser.get_event
        self.root: Any = None
        documents = 0
        while True:
            event = get()
            kind = type(event)
            if kind is yaml.ScalarEvent:
                self.count(1, event.start_mark)
                if self.tagged or event.tag in self.tags:
                    node = self.node_scalar(event)
                    if not self.tagged:
                        value = self.construct(node)
                        self.add(value, 0, event.start_mark)
                        self.anchor(event.anchor, value, 1, 0, node)
                        continue
                    self.anchor(event.anchor, _IN_NODE, 1, 0, node)
                    self.add(None, 0, event.start_mark, node)
                    continue
                if self.stack and _is_merge(event) and not self.stack[-1].seq and not self.stack[-1].has_key:
                    self.stack[-1].key, self.stack[-1].has_key = _MERGE_KEY, True
                    continue
                value = self.scalar(event)
                self.anchor(event.anchor, value, 1, 0)
                self.add(value, 0, event.start_mark)
            elif kind is yaml.MappingStartEvent or kind is yaml.SequenceStartEvent:
                seq = kind is yaml.SequenceStartEvent
                self.count(1, event.start_mark)
                if len(self.stack) + 1 > self.limits.max_depth:
                    raise self.limit(
                        "max_depth", f"lists and mappings nest more than {self.limits.max_depth} deep", event.start_mark
                    )
                tag = event.tag
                node = None
                if self.tagged or tag in self.tags:
                    if tag is not None and tag not in self.tags and tag not in ("!", _SEQ, _MAP):
                        raise self.tag_error(tag, event.start_mark)
                    node_tag = tag if tag not in (None, "!") else _SEQ if seq else _MAP
                    cls = yaml.SequenceNode if seq else yaml.MappingNode
                    node = cls(node_tag, [], event.start_mark, None, flow_style=event.flow_style)
                    self.tagged += 1
                elif tag not in (None, "!", _SEQ if seq else _MAP):
                    raise self.tag_error(tag, event.start_mark)
                parent = self.stack[-1] if self.stack else None
                path = self.child_path(parent)
                if event.anchor is not None:
                    self.open.add(event.anchor)
                self.stack.append(_Frame(seq, path, event.anchor, event.start_mark, node, self.nodes - 1))
            elif kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
                frame = self.stack.pop()
                if frame.anchor is not None:
                    self.open.discard(frame.anchor)
                if frame.node is not None:
                    self.tagged -= 1
                    frame.node.end_mark = event.end_mark
                    if not self.tagged:
                        value = self.construct(frame.node)
                        self.anchor(frame.anchor, value, self.nodes - frame.start, frame.height, frame.node)
                        self.add(value, frame.height, frame.mark)
                    else:
                        self.anchor(frame.anchor, _IN_NODE, self.nodes - frame.start, frame.height, frame.node)
                        self.add(None, frame.height, frame.mark, frame.node)
                    continue
                value = frame.value if frame.seq else self.close_mapping(frame)
                if frame.anchor is not None:
                    self.anchor(frame.anchor, value, self.nodes - frame.start, frame.height)
                self.add(value, frame.height, frame.mark)
            elif kind is yaml.AliasEvent:
                name = event.anchor
                if name in self.open:
                    raise self.error(
                        f"the alias *{cut(name)[1:-1]} refers to the value that contains it",
                        event.start_mark,
                        hint="a value cannot contain itself",
                    )
                if name not in self.anchors:
                    raise self.error(
                        f"the alias *{cut(name)[1:-1]} has no anchor &{cut(name)[1:-1]} before it", event.start_mark
                    )
                value, nodes, height, node = self.anchors[name]
                self.count(nodes, event.start_mark, alias=True)
                if value is _IN_NODE and not self.tagged:
                    raise self.error(
                        f"the alias *{cut(name)[1:-1]} refers into a tagged value; repeat the value instead",
                        event.start_mark,
                    )
                if self.tagged:
                    if node is None:
                        self.kept.append(value)
                        node = yaml.ScalarNode(_KEPT, str(len(self.kept) - 1), event.start_mark, event.end_mark)
                    self.add(None, height, event.start_mark, node)
                    continue
                self.add(value, height, event.start_mark)
            elif kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise self.error(
                        "the file holds more than one YAML document (a second '---')",
                        event.start_mark,
                        hint="a task file is one document",
                    )
            elif kind is yaml.StreamEndEvent:
                return self.root
        # not reached

    def child_path(self, parent: _Frame | None) -> str:
        if parent is None:
            return ""
        if parent.seq:
            count = len(parent.node.value) if parent.node is not None else len(parent.value)
            return f"{parent.path}{count}."
        if parent.has_key:
            key = parent.key.value if parent.node is not None else parent.key
            return f"{parent.path}{key}."
        return f"{parent.path}?."

    def anchor(self, name: str | None, value: Any, nodes: int, height: int, node: Any = None) -> None:
        if name is not None:
            self.anchors[name] = (value, nodes, height, node)


class _MergeKey:
    def __repr__(self) -> str:
        return "<<"


_MERGE_KEY = _MergeKey()
_IN_NODE = _MergeKey()  # an anchor inside a tagged value: no Python value of its own
_KEPT = "tag:prompt-style,2025:kept"
_TAG_OF = {str: _STR, int: _INT, bool: _BOOL, type(None): _NULL}


def _constructor_class(tags: Mapping[str, Callable], kept: list[Any]) -> type:
    """A constructor for the values a caller's tags hold: core scalars only, plus those tags."""
    import yaml

    class Constructor(yaml.constructor.BaseConstructor):
        yaml_constructors: dict = {}

        def construct_yaml_str(self, node: Any) -> str:
            return node.value

        def construct_core_scalar(self, node: Any) -> Any:
            return _tagged_scalar(node.tag, node.value)

        def construct_kept(self, node: Any) -> Any:
            return kept[int(node.value)]

        def construct_yaml_seq(self, node: Any) -> Any:
            data: list[Any] = []
            yield data
            data.extend(self.construct_sequence(node))

        def construct_yaml_map(self, node: Any) -> Any:
            data: dict[Any, Any] = {}
            yield data
            data.update(self.construct_mapping(node))

        def construct_yaml_object(self, node: Any, cls: type) -> Any:
            # What yaml.YAMLObject.from_yaml calls (promptsource's Template is one).
            data = cls.__new__(cls)
            yield data
            if hasattr(data, "__setstate__"):
                data.__setstate__(self.construct_mapping(node, deep=True))
            else:
                data.__dict__.update(self.construct_mapping(node))

    Constructor.add_constructor(_STR, Constructor.construct_yaml_str)
    for tag in (_INT, _FLOAT, _BOOL, _NULL):
        Constructor.add_constructor(tag, Constructor.construct_core_scalar)
    Constructor.add_constructor(_KEPT, Constructor.construct_kept)
    Constructor.add_constructor(_SEQ, Constructor.construct_yaml_seq)
    Constructor.add_constructor(_MAP, Constructor.construct_yaml_map)
    for tag, constructor in tags.items():
        Constructor.add_constructor(tag, constructor)
    return Constructor


def _read(path: Path, file: str, what: str, limits: YamlLimits) -> str:
    """The file's text: a regular file only, never blocked on (a FIFO, a device), within
    ``max_file_bytes`` (safe/files.py)."""
    from .files import read_text

    return read_text(path, what=what, max_bytes=limits.max_file_bytes, file=file)


def _parser(text: str) -> Any:
    import yaml

    try:
        from yaml.cyaml import CParser
    except ImportError:  # PyYAML built without libyaml
        pass
    else:
        return CParser(text)

    class PurePython(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser):
        def __init__(self, stream: str) -> None:
            yaml.reader.Reader.__init__(self, stream)
            yaml.scanner.Scanner.__init__(self)
            yaml.parser.Parser.__init__(self)

    return PurePython(text)


def _yaml_error(exc: Exception, text: str, file: str) -> TaskFileError:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None)
    line = mark.line + 1 if mark is not None else None
    if problem is None:  # a ReaderError: a character YAML does not allow
        position = getattr(exc, "position", None)
        if isinstance(position, int):
            line = text.count("\n", 0, position) + 1
        character = getattr(exc, "character", None)
        if character is not None:
            code = character if isinstance(character, int) else ord(character)
            problem = f"the character U+{code:04X} is not allowed in YAML"
        else:
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return TaskFileError(f"not valid YAML: {problem}", file=file, line=line, hint=_yaml_hint(problem, text, line))


def _yaml_hint(problem: str, text: str, line: int | None) -> str | None:
    """What usually causes libyaml's structural complaints: indentation, or a value
    holding ``": "`` without quotes."""
    if "tab character" in problem:
        return "indent with spaces, not tabs"
    if "mapping values are not allowed" in problem:
        lines = text.splitlines()
        here = lines[line - 1] if line and 0 < line <= len(lines) else ""
        _, sep, value = here.partition(": ")
        if sep and (": " in value or value.rstrip().endswith(":")) and value.strip()[:1] not in ("'", '"'):
            return "the value holds ': ': put it in quotes"
        return (
            "check the indentation of this line against the line above: keys of one mapping start in the "
            "same column, nested keys further right"
        )
    if problem.startswith(("did not find expected", "expected <block end>", "could not find expected ':'")):
        return (
            "check the indentation here and on the lines above: keys of one mapping start in the same "
            "column, nested keys further right, indented with spaces"
        )
    return None


def _json_fallback(text: str, file: str, limits: YamlLimits) -> YamlDocument | None:
    """JSON that libyaml rejects (surrogate-pair escapes such as ``\\ud83d\\ude00``), with
    the YAML loader's node and depth budgets."""
    import json

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in items:
            if key in out:
                raise TaskFileError(f"key {cut(key)} appears twice", file=file, key=key)
            out[key] = value
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except (ValueError, RecursionError):
        return None
    _json_budgets(data, file, limits)
    return YamlDocument(data, {}, None)


def _json_budgets(data: Any, file: str, limits: YamlLimits) -> None:
    """``max_nodes`` and ``max_depth`` of a document json.loads made, as the composer counts them."""
    nodes = 0
    stack = [(data, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        value, depth = pop()
        nodes += 1
        if nodes > limits.max_nodes:
            raise YamlLimitError(
                f"the document has more than {limits.max_nodes:,} nodes",
                limit="max_nodes",
                value=limits.max_nodes,
                file=file,
            )
        if isinstance(value, (dict, list)):
            if depth > limits.max_depth:
                raise YamlLimitError(
                    f"lists and mappings nest more than {limits.max_depth} deep",
                    limit="max_depth",
                    value=limits.max_depth,
                    file=file,
                )
            for item in value.values() if isinstance(value, dict) else value:
                push((item, depth + 1))
            nodes += len(value) if isinstance(value, dict) else 0  # a key is a node too


def load_yaml(
    source: str | Path,
    *,
    text: str | None = None,
    tags: Mapping[str, Callable[[Any, Any], Any]] | None = None,
    what: str = "task file",
    limits: YamlLimits | None = None,
    duplicate_keys: str = "error",
) -> YamlDocument:
    """Read and parse a YAML file (or ``text``, reported as ``source``).

    :param source: the file to read, or the name to report when ``text`` is given.
    :param text: the YAML text, when it is not read from ``source``.
    :param tags: extra constructors ``{tag: constructor(loader, node)}`` for
        formats that use their own tags (promptsource's ``!Template``); the
        loader offers ``construct_mapping``/``construct_sequence``/``construct_scalar``
        and builds the tagged value's content with the same core schema. No
        Python tags are ever loaded.
    :param what: how to name the file in messages.
    :param limits: the budgets (default: the process's, see ``PROMPT_STYLE_LIMITS``).
    :param duplicate_keys: ``"error"`` (default): a key written twice in one
        mapping is an error; ``"last"``: the last one wins, as in PyYAML, and
        the document lists them in ``duplicates`` (for formats whose reference
        implementation accepts them).
    :raises TaskFileError: naming the file and line (:class:`YamlLimitError`
        for a budget).
    """
    limits = limits or yaml_limits()
    path = source if isinstance(source, Path) else Path(source)
    file = str(source)
    if text is not None:
        return _load(path, file, text, tags, what, limits, duplicate_keys)
    # A file is parsed once per process while it is unchanged (every task of a suite
    # loaded again, the same include read by many task files); each caller gets its
    # own copy of the data.
    key = _cache_key(path, file, tags, what, limits, duplicate_keys)
    cached = _PARSED.get(key) if key is not None else None
    if cached is None:
        document = _load(path, file, _read(path, file, what, limits), tags, what, limits, duplicate_keys)
        if key is None or _copied(document.data) is None:
            return document  # a tagged value (a marker object) is the caller's to keep: not shared
        if len(_PARSED) >= _PARSED_MAX:
            _PARSED.pop(next(iter(_PARSED)))
        _PARSED[key] = cached = document
    return YamlDocument(_copied(cached.data), dict(cached.lines), cached.path, cached.duplicates)


_PARSED: dict[Any, YamlDocument] = {}
_PARSED_MAX = 512


def _cache_key(
    path: Path, file: str, tags: Mapping[str, Callable] | None, what: str, limits: YamlLimits, duplicate_keys: str
) -> Any:
    """What a parse of ``path`` depends on: the file as it is now (device, inode, size,
    modification and change times), how it is named in messages, the tags, budgets
    and rule for duplicate keys; ``None`` when the file cannot be looked at (then
    reading it says why)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    tag_key = None if not tags else tuple((name, id(made)) for name, made in tags.items())
    identity = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    return (file, identity, tag_key, what, limits, duplicate_keys)


_SCALARS = frozenset({str, int, float, bool, type(None), YamlFloat})


def _copied(value: Any) -> Any:
    """A copy of parsed data: new lists and mappings (what an alias shares stays shared
    within the copy), the same scalars; ``None`` when it holds anything else (a value
    a caller's tag made)."""
    kind = type(value)
    if kind is not dict and kind is not list:
        return value if kind in _SCALARS else None
    memo: dict[int, Any] = {}
    root: Any = {} if kind is dict else []
    memo[id(value)] = root
    stack = [(value, root)]
    while stack:
        original, made = stack.pop()
        items = original.items() if type(original) is dict else enumerate(original)
        for key, item in items:
            kind = type(item)
            if kind is dict or kind is list:
                copy = memo.get(id(item))
                if copy is None:
                    copy = memo[id(item)] = {} if kind is dict else []
                    stack.append((item, copy))
                item = copy
            elif kind not in _SCALARS:
                return None
            if type(made) is dict:
                made[key] = item
            else:
                made.append(item)
    return root


def _load(
    path: Path,
    file: str,
    text: str,
    tags: Mapping[str, Callable[[Any, Any], Any]] | None,
    what: str,
    limits: YamlLimits,
    duplicate_keys: str,
) -> YamlDocument:
    import yaml

    if len(text) > limits.max_file_bytes:
        raise YamlLimitError(
            f"the {what} is larger than {limits.max_file_bytes:,} characters",
            limit="max_file_bytes",
            value=limits.max_file_bytes,
            file=file,
        )
    composer = _Composer(None, file, limits, tags, duplicate_keys)
    try:
        parser = _parser(text)
        composer.parser = parser
        data = composer.compose()
    except yaml.YAMLError as exc:
        if file.lower().endswith(".json"):
            fallback = _json_fallback(text, file, limits)
            if fallback is not None:
                return YamlDocument(fallback.data, {}, path)
        raise _yaml_error(exc, text, file) from None
    except (UnicodeError, ValueError) as exc:  # text libyaml cannot take, such as lone surrogates
        raise TaskFileError(f"not valid YAML: {cut(str(exc), 200)[1:-1]}", file=file) from None
    finally:
        dispose = getattr(composer.parser, "dispose", None)
        if dispose is not None:
            dispose()
    return YamlDocument(data, composer.lines, path, tuple(composer.duplicates))
