"""Strict YAML loading for case files and requirement indexes.

Case files are written by people and read by machines in other languages, so the loader
refuses what YAML 1.1 would silently turn into something else:

* duplicate keys in a mapping (PyYAML keeps the last one without a word);
* anchors and aliases (no case needs them, and they are the road to "billion laughs");
* plain (unquoted) scalars whose meaning differs between YAML 1.1 and what a reader expects:
  ``yes``/``no``/``on``/``off`` and any capitalised boolean, octal ``0755``, hex ``0x1F``,
  sexagesimal ``1:30``, ``1_000``, ``.inf``/``.nan``, ``~`` and ``Null``, and ``1e3``
  (a float in YAML 1.2 and JSON, a string to PyYAML).  Quote them to mean a string;
* documents over :data:`MAX_DOCUMENT_BYTES`, with more than :data:`MAX_NODES` nodes, or
  nested more than :data:`MAX_DEPTH` levels deep (deeper inputs are written as strings, or
  sent to an implementation by a test, not by a case file): both counted while the node tree
  is built, so a document past either is refused before it is built whole;
* integers of more than :data:`MAX_INT_DIGITS` digits and floats beyond the double range
  (``1e999`` would be read as infinity, which JSON lacks);
* anything but a regular file: the file is opened without blocking and checked before a
  byte is read (a FIFO, ``/dev/zero`` or a directory is refused), and at most
  :data:`MAX_DOCUMENT_BYTES` bytes are read whatever its size claims.

Every problem is reported with the line it is on.  Loaded data stays paired with its node
tree so that later checks (schema, ids) can name the line of any value.
"""

from __future__ import annotations

import math
import os
import re
import stat
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from flux_conformance.runner.bounds import MAX_INT_DIGITS
from flux_conformance.runner.errors import ConformanceError

__all__ = [
    "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES",
    "MAX_INT_DIGITS",
    "MAX_NODES",
    "Document",
    "YamlProblem",
    "load_document",
]

#: Case files larger than this are refused before parsing.
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
#: A document may hold at most this many nodes (scalars, lists, mappings): more than ten
#: times the largest bundled case file, and few enough to be refused within seconds (building
#: the node tree costs microseconds per node).
MAX_NODES = 200_000
#: Deepest nesting of lists and mappings in a document (a case's input gets all but 4 of
#: these levels): every later step, from schema checks to JSON, must be able to follow it.
MAX_DEPTH = 256
#: The longest scalar a problem message quotes.
_QUOTED = 60

_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_BOOL_TAG = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_NULL_TAG = "tag:yaml.org,2002:null"
_STR_TAG = "tag:yaml.org,2002:str"

_JSON_TAGS = frozenset({_BOOL_TAG, _INT_TAG, _FLOAT_TAG, _NULL_TAG, _STR_TAG})

_PLAIN_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)\Z")
_PLAIN_FLOAT = re.compile(r"[-+]?(0|[1-9][0-9]*)\.[0-9]+([eE][-+]?[0-9]+)?\Z")
_LOOKS_NUMERIC = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)[eE][-+]?[0-9]+\Z")


@dataclass(frozen=True)
class YamlProblem:
    """Something wrong in a YAML file, with the 1-based line it is on."""

    line: int
    message: str


class YamlError(ConformanceError):
    """The file could not be loaded; ``problems`` says where and why."""

    def __init__(self, problems: Sequence[YamlProblem]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(f"line {p.line}: {p.message}" for p in self.problems))


@dataclass(frozen=True)
class Document:
    """A loaded YAML document: its data and the node tree it came from."""

    data: Any
    root: yaml.Node

    def line_of(self, path: Sequence[str | int]) -> int:
        """The 1-based line of the value at ``path`` (or of its nearest ancestor found)."""
        node = self.root
        for part in path:
            child = _child(node, part)
            if child is None:
                break
            node = child
        return int(node.start_mark.line) + 1


def _child(node: yaml.Node, part: str | int) -> yaml.Node | None:
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and key.value == part:
                return value  # type: ignore[no-any-return]
    elif (
        isinstance(node, yaml.SequenceNode)
        and isinstance(part, int)
        and 0 <= part < len(node.value)
    ):
        return node.value[part]  # type: ignore[no-any-return]
    return None


def _walk(root: yaml.Node) -> Iterator[YamlProblem]:
    seen: set[int] = set()
    stack = [(root, 1)]
    while stack:
        # (The node bound was checked while the tree was built: see _compose.)
        node, depth = stack.pop()
        line = int(node.start_mark.line) + 1
        if depth > MAX_DEPTH:
            yield YamlProblem(line, f"nested more than {MAX_DEPTH} levels deep")
            return
        if id(node) in seen:
            yield YamlProblem(line, "anchors and aliases are not allowed in case files")
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            problem = _check_scalar(node)
            if problem:
                yield YamlProblem(line, problem)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((child, depth + 1) for child in reversed(node.value))
        elif isinstance(node, yaml.MappingNode):
            keys: dict[str, int] = {}
            for key, value in node.value:
                if isinstance(key, yaml.ScalarNode):
                    if key.value == "<<" and key.tag == "tag:yaml.org,2002:merge":
                        yield YamlProblem(
                            int(key.start_mark.line) + 1, "merge keys (<<) are not allowed"
                        )
                    elif key.value in keys:
                        yield YamlProblem(
                            int(key.start_mark.line) + 1,
                            f"duplicate key {key.value!r} (first on line {keys[key.value]})",
                        )
                    else:
                        keys[key.value] = int(key.start_mark.line) + 1
                stack.append((value, depth + 1))
                stack.append((key, depth + 1))


def _quote(value: str) -> str:
    """A scalar as a problem message quotes it: cut, so no message repeats a whole file."""
    return repr(value if len(value) <= _QUOTED else value[:_QUOTED] + "...")


def _check_scalar(node: yaml.ScalarNode) -> str | None:
    if node.style:  # quoted or block scalar: always a string (CParser says "" for plain)
        return None if node.tag == _STR_TAG else f"the tag {_quote(node.tag)} is not allowed here"
    value: str = node.value
    tag: str = node.tag
    if tag == _INT_TAG and len(value.lstrip("+-")) > MAX_INT_DIGITS:
        return (
            f"a plain integer of {len(value.lstrip('+-'))} digits: at most {MAX_INT_DIGITS} "
            "(quote it for a string)"
        )
    if tag == _FLOAT_TAG and _PLAIN_FLOAT.match(value) and not _finite(value):
        return f"plain {_quote(value)} is beyond the range of a double: quote it"
    if tag == _BOOL_TAG and value not in ("true", "false"):
        return f"plain {_quote(value)} is a boolean in YAML 1.1: write true/false, or quote it"
    if tag == _INT_TAG and not _PLAIN_INT.match(value):
        return (
            f"plain {_quote(value)} is read as the integer {_int_value(value)}: quote it or "
            "write decimal"
        )
    if tag == _FLOAT_TAG and not _PLAIN_FLOAT.match(value):
        return f"plain {_quote(value)} is a YAML 1.1 special float: quote it or write e.g. 1.5"
    if tag == _NULL_TAG and value not in ("", "null"):
        return f"plain {_quote(value)} is null in YAML: write null, or quote it for a string"
    if tag not in _JSON_TAGS:
        kind = _quote(tag.rsplit(":", 1)[-1])
        return f"{_quote(value)} has the YAML type {kind}, which JSON lacks: quote it"
    if tag == _STR_TAG and _LOOKS_NUMERIC.match(value):
        return f"plain {_quote(value)} is a string to YAML 1.1 but a number to JSON: quote it"
    return None


def _finite(text: str) -> bool:
    return math.isfinite(float(text))


def _int_value(text: str) -> str:
    try:
        return _quote(str(yaml.load(text, Loader=_Loader)))
    except (yaml.YAMLError, ValueError):
        return "?"


def _compose(loader: Any) -> Any:
    """Build the node tree of the single document from parser events, without recursion.

    PyYAML's composers (the C one included) recurse once per level of nesting, so a deeply
    nested document would overflow the C stack and kill the process; this one keeps its own
    stack.  Anchors and aliases are refused here.
    """
    loader.get_event()  # stream start
    if loader.check_event(yaml.StreamEndEvent):
        return None
    loader.get_event()  # document start
    # PyYAML's type stubs do not cover the event API: events and nodes are Any here.
    root: Any = None
    stack: list[tuple[Any, list[Any]]] = []  # open collection, pending key

    def attach(node: Any) -> None:
        nonlocal root
        if not stack:
            root = node
            return
        parent, pending = stack[-1]
        if isinstance(parent, yaml.SequenceNode):
            parent.value.append(node)
        elif pending:
            parent.value.append((pending.pop(), node))
        else:
            pending.append(node)

    nodes = 0
    resolved: dict[tuple[str, Any], str] = {}  # plain scalars repeat: resolve each once
    while True:
        event = loader.get_event()
        start: Any = event.start_mark
        end: Any = event.end_mark
        if isinstance(event, yaml.ScalarEvent | yaml.SequenceStartEvent | yaml.MappingStartEvent):
            nodes += 1
            if nodes > MAX_NODES:
                raise yaml.MarkedYAMLError(
                    problem=f"document has more than {MAX_NODES} nodes", problem_mark=start
                )
            if len(stack) >= MAX_DEPTH and not isinstance(event, yaml.ScalarEvent):
                raise yaml.MarkedYAMLError(
                    problem=f"nested more than {MAX_DEPTH} levels deep", problem_mark=start
                )
        if isinstance(event, yaml.DocumentEndEvent):
            break
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise yaml.MarkedYAMLError(
                problem="anchors and aliases are not allowed in case files",
                problem_mark=event.start_mark,
            )
        if isinstance(event, yaml.ScalarEvent):
            tag = event.tag
            if tag is None or tag == "!":
                key = (event.value, event.implicit)
                tag = resolved.get(key)
                if tag is None:
                    tag = resolved[key] = loader.resolve(yaml.ScalarNode, *key)
            attach(yaml.ScalarNode(tag, event.value, start, end, style=event.style))
        elif isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent):
            kind = (
                yaml.SequenceNode
                if isinstance(event, yaml.SequenceStartEvent)
                else yaml.MappingNode
            )
            tag = event.tag
            if tag is None or tag == "!":
                tag = loader.resolve(kind, None, event.implicit)
            node = kind(tag, [], start, None, flow_style=event.flow_style)
            attach(node)
            stack.append((node, []))
        elif isinstance(event, yaml.SequenceEndEvent | yaml.MappingEndEvent):
            node, _ = stack.pop()
            node.end_mark = end
    if not loader.check_event(yaml.StreamEndEvent):
        event = loader.get_event()
        raise yaml.MarkedYAMLError(
            problem="a case file holds one YAML document", problem_mark=event.start_mark
        )
    return root


def _stray(root: yaml.Node, required: Sequence[str], what: str) -> str | None:
    """Why ``root`` is not a document of this kind at all, saying nothing of what it holds."""
    if not required:
        return None
    if not isinstance(root, yaml.MappingNode):
        kind = "text" if isinstance(root, yaml.ScalarNode) else "a list"
        return f"not a {what}: its top level is {kind}, not a mapping"
    keys = {key.value for key, _ in root.value if isinstance(key, yaml.ScalarNode)}
    missing = [key for key in required if key not in keys]
    if missing:
        return f"not a {what}: it has no {' or '.join(map(repr, missing))}"
    return None


def read_bounded(path: Path, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (:data:`MAX_DOCUMENT_BYTES`).

    Opened without blocking (a FIFO does not hang) and checked before a byte is read: a
    directory, a device (``/dev/zero``), a FIFO or a socket is refused, and so is a file
    larger than ``limit``, whatever ``stat`` said before it was opened.  Raises
    :class:`YamlError` saying why, never with what the file holds.
    """
    limit = MAX_DOCUMENT_BYTES if limit is None else limit
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except IsADirectoryError:
        raise YamlError([YamlProblem(1, "is a directory, not a file")]) from None
    except OSError as exc:
        raise YamlError([YamlProblem(1, f"cannot be opened: {exc.strerror or exc}")]) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise YamlError([YamlProblem(1, "is a directory, not a file")])
        if not stat.S_ISREG(mode):
            raise YamlError([YamlProblem(1, "is not a regular file (a device, FIFO or socket)")])
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise YamlError([YamlProblem(1, f"cannot be read: {exc.strerror or exc}")]) from None
    finally:
        os.close(fd)
    if len(data) > limit:
        raise YamlError([YamlProblem(1, f"file is more than {limit} bytes")])
    return data


def load_document(path: Path, *, required: Sequence[str] = (), what: str = "case file") -> Document:
    """Load one YAML document strictly; raise :class:`YamlError` listing every problem.

    ``required`` names the top-level keys a document of this kind (``what``) has: a document
    that is not a mapping holding them is refused before any other check, with a problem that
    quotes nothing of it (a stray private key or ``.env`` file is not printed).
    """
    raw = read_bounded(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise YamlError([YamlProblem(1, f"not UTF-8: {exc.reason}")]) from None
    loader = _Loader(text)
    try:
        root = _compose(loader)
        if root is None:
            raise YamlError([YamlProblem(1, "the file is empty")])
        stray = _stray(root, required, what)
        if stray:
            raise YamlError([YamlProblem(1, stray)])
        problems = list(_walk(root))
        if problems:
            raise YamlError(sorted(problems, key=lambda p: p.line))
        data = loader.construct_document(root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = int(mark.line) + 1 if mark is not None else 1
        raise YamlError([YamlProblem(line, f"{exc.problem or exc.context}")]) from None
    except yaml.YAMLError as exc:
        raise YamlError([YamlProblem(1, str(exc))]) from None
    except RecursionError:
        raise YamlError([YamlProblem(1, "the document is nested too deeply to load")]) from None
    except ValueError as exc:  # a value the constructor cannot make (checked above; kept safe)
        raise YamlError([YamlProblem(1, f"a value cannot be read: {str(exc)[:200]}")]) from None
    finally:
        loader.dispose()
    return Document(data, root)
