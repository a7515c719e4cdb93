"""RFC 46 resource shapes: the compact command-line form of an RFC 14 resources list.

A shape such as ``slot=4{nodelevel}/node{-x}/socket=2+/core=4+`` expands into the list of
resource vertices a canonical jobspec (RFC 14) carries under ``resources``.  The grammar is the
one RFC 46 gives in its Grammar section; where the text leaves room this module follows the
project's readings (``shared/notes/readings.md``, "RFC 46 shapes"):

* an unlabelled slot gets the label ``default`` (configurable with ``default_label``);
* counts: digits only give an integer, an RFC 45 range gives the RFC 14 range dictionary the
  RFC's examples show (``3-30`` -> min/max/operator/operand, ``2+`` -> ``{min: 2}``), and an
  idset stays a string (``"4,9,16,25"``).  A range the edition cannot write as a dictionary
  (``2+:2:*`` under the 2025-07-31 edition, where operator and operand need a max) stays a string;
* the first entry in a slot's braces is its label, whatever it spells (``slot{x}`` is label
  ``x``);
* ``x``, ``+x`` set ``exclusive`` true and ``-x`` false; ``+key``/``key`` set any key true;
* values are read as JSON first (``true``, ``false``, ``null``, numbers, quoted strings,
  arrays, and objects written in the brace syntax), and otherwise taken as an unquoted string
  (``unit:01`` is the string ``"01"``);
* whitespace is not part of the grammar and is rejected outside quoted strings; type names
  are case-sensitive (``SLOT`` is not a slot).

Errors: :class:`~reference.errors.ParseError` (``syntax``) when the text leaves the grammar,
:class:`~reference.errors.InvalidError` (``invalid``) when it breaks a rule the grammar does not
express (an unlabelled slot among several, a key that repeats or that the syntax already
sets, a count RFC 14 does not allow), :class:`~reference.errors.LimitError` (``limit``) when
nesting exceeds :data:`MAX_DEPTH` or a value is a number no JSON output can hold (an integer of
more than 4,300 digits, a float beyond the double range such as ``1e400``).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flux_conformance.reference._tokens import Token, Tokenizer
from flux_conformance.reference.editions import DEFAULT_EDITION, edition_named
from flux_conformance.reference.errors import FormatError, InvalidError, LimitError

__all__ = [
    "DEFAULT_LABEL",
    "MAX_DEPTH",
    "OPERATIONS",
    "count_to_shape",
    "parse_shape",
    "render_shape",
]

#: The label an unlabelled slot receives (the RFC's examples use it; flux-core uses ``task``).
DEFAULT_LABEL = "default"

#: Deepest nesting of ``/`` levels, brackets and braces the parser follows before refusing.
#: Real resource graphs are a handful of levels deep; the bound keeps recursion far from
#: Python's own limit whatever the caller's stack depth.
MAX_DEPTH = 128

# Characters that structure a shape; an unquoted string is a run of anything else that is not
# whitespace.  A key may not start with a sign, which marks a shortened boolean.
_SPECIAL = r"\s\[\]{};=,:/\"'"

_RULES: dict[str, re.Pattern[str]] = {
    "LBRACKET": re.compile(r"\["),
    "RBRACKET": re.compile(r"\]"),
    "LBRACE": re.compile(r"\{"),
    "RBRACE": re.compile(r"\}"),
    "SEMICOLON": re.compile(r";"),
    "EQUALS": re.compile(r"="),
    "COMMA": re.compile(r","),
    "COLON": re.compile(r":"),
    "SLASH": re.compile(r"/"),
    "SIGN": re.compile(r"[+-]"),
    "STRING": re.compile(rf"[^{_SPECIAL}+-][^{_SPECIAL}]*"),
    # A JSON string; escapes are checked by decoding it.
    "DQUOTED": re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"'),
    # A single-quoted string is taken literally (no escapes), as flux-core's shape lexer does.
    "SQUOTED": re.compile(r"'[^']*'"),
    # The characters an RFC 22 idset or RFC 45 range may use; the count code judges the rest.
    "COUNT": re.compile(r"[0-9,+\-:*^]+"),
    # An unquoted value runs to the next separator of the enclosing dict or array.
    "BARE": re.compile(r"[^\s\[\]{},\"']+"),
}

_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?\Z")
_JSON_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}

# Keys the shape syntax itself fills in; writing them in braces would contradict it.
_POSITIONAL_KEYS = frozenset({"type", "count", "with"})


@dataclass(frozen=True)
class _Slot:
    """A slot seen while parsing: its vertex, and where its type was written."""

    vertex: dict[str, Any]
    token: Token
    labelled: bool


class _ShapeParser:
    """Recursive-descent parser for one shape string (one method per grammar rule)."""

    def __init__(self, source: str, *, edition: str) -> None:
        self.tokens = Tokenizer(source, rules=_RULES)
        self.edition = edition
        self.depth = 0
        self.slots: list[_Slot] = []

    # -- helpers -------------------------------------------------------------------------

    def _enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise LimitError(
                f"shape nested more than {MAX_DEPTH} levels deep",
                source=self.tokens.source,
                span=(self.tokens.position, self.tokens.position + 1),
            )

    def _leave(self) -> None:
        self.depth -= 1

    def _quoted(self) -> str | None:
        """A quoted string here, decoded; ``None`` if no quote starts here."""
        tokens = self.tokens
        if tokens.peek_char() not in ("'", '"'):
            return None
        if tokens.check("DQUOTED"):
            token = tokens.read()
            try:
                text: str = json.loads(token.text)
            except ValueError:
                tokens.fail("invalid escape in quoted string", start=token.position, end=token.end)
            return text
        if not tokens.check("SQUOTED"):
            tokens.fail("unterminated quoted string")
        return tokens.read().text[1:-1]

    def _string(self, *, expected: str) -> str:
        """STRING, or a quoted string."""
        quoted = self._quoted()
        if quoted is not None:
            return quoted
        return self.tokens.expect("STRING", expected=expected).text

    # -- grammar rules -------------------------------------------------------------------

    def parse_resources(self) -> list[dict[str, Any]]:
        """Parse ``resources : list``, with nothing after it."""
        result = self._list()
        tokens = self.tokens
        if not tokens.at_end():
            if tokens.check("SEMICOLON"):
                tokens.fail("several vertices at one level must be enclosed in '[' ']'")
            if tokens.check("RBRACKET"):
                tokens.fail("']' closes no '['")
            tokens.fail("expected ';', ']' or the end of the shape")
        return result

    def _list(self) -> list[dict[str, Any]]:
        """Parse ``list : '[' vertex (';' vertex)* ']' | vertex``."""
        self._enter()
        tokens = self.tokens
        if tokens.accept("LBRACKET"):
            vertices = [self._vertex()]
            while tokens.accept("SEMICOLON"):
                vertices.append(self._vertex())
            tokens.expect("RBRACKET", expected="';' or ']'")
        else:
            vertices = [self._vertex()]
        self._leave()
        return vertices

    def _vertex(self) -> dict[str, Any]:
        """Parse one vertex.

        ``vertex : 'slot' ('=' count)? ('{' label (',' item)* '}')? '/' list
        | type ('=' count)? dict? ('/' list)?``
        """
        tokens = self.tokens
        start = tokens.position
        rtype = self._string(expected="a resource type")
        type_token = Token("STRING", tokens.source[start : tokens.position], start)
        count: Any = 1
        if tokens.accept("EQUALS"):
            count = self._count()
        vertex: dict[str, Any] = {"type": rtype, "count": count}
        if rtype == "slot":
            labelled = False
            if tokens.accept("LBRACE"):
                self._enter()
                vertex["label"] = self._string(expected="the slot's label")
                labelled = True
                while tokens.accept("COMMA"):
                    self._item(vertex, slot=True)
                tokens.expect("RBRACE", expected="',' or '}'")
                self._leave()
            if not tokens.accept("SLASH"):
                tokens.fail("a slot must be followed by '/' and the resources it holds")
            self.slots.append(_Slot(vertex, type_token, labelled))
            vertex["with"] = self._list()
            return vertex
        if tokens.check("LBRACE"):
            self._dict(into=vertex, vertex=True)
        if tokens.accept("SLASH"):
            vertex["with"] = self._list()
        return vertex

    def _count(self) -> Any:
        """Parse ``count : '[' count-value ']' | count-value``."""
        tokens = self.tokens
        start = tokens.position
        if tokens.accept("LBRACKET"):
            tokens.expect("COUNT", expected="a count inside '[' ']'")
            tokens.expect("RBRACKET", expected="']' after the count")
        else:
            tokens.expect("COUNT", expected="a count after '='")
        text = tokens.source[start : tokens.position]
        try:
            return count_to_shape(text, edition=self.edition)
        except FormatError as exc:
            raise type(exc)(
                f"bad count {text!r}: {exc.reason}",
                source=tokens.source,
                span=(start, tokens.position),
            ) from None

    def _dict(self, *, into: dict[str, Any], vertex: bool) -> dict[str, Any]:
        """Parse ``dict : '{' (item (',' item)*)? '}'``."""
        self._enter()
        tokens = self.tokens
        tokens.expect("LBRACE", expected="'{'")
        if not tokens.accept("RBRACE"):
            self._item(into, vertex=vertex)
            while tokens.accept("COMMA"):
                self._item(into, vertex=vertex)
            tokens.expect("RBRACE", expected="',' or '}'")
        self._leave()
        return into

    def _item(self, into: dict[str, Any], *, slot: bool = False, vertex: bool = True) -> None:
        """Parse ``item : key ':' VALUE | ('+'|'-')? key`` into ``into``."""
        tokens = self.tokens
        sign = tokens.accept("SIGN")
        start = tokens.position
        key = self._key()
        end = tokens.position
        value: Any
        if sign is None and tokens.accept("COLON"):
            value = self._value()
        else:
            value = sign is None or sign.text == "+"
        if vertex and (key in _POSITIONAL_KEYS or (slot and key == "label")):
            raise InvalidError(
                f"key {key!r} is written by the shape syntax itself, not inside braces",
                source=tokens.source,
                span=(start, end),
            )
        if key in into:
            raise InvalidError(f"key {key!r} given twice", source=tokens.source, span=(start, end))
        into[key] = value

    def _key(self) -> str:
        """Parse ``key : 'x' | STRING``; an unquoted ``x`` stands for ``exclusive``."""
        quoted = self._quoted()
        if quoted is not None:
            return quoted
        text = self.tokens.expect("STRING", expected="a key").text
        return "exclusive" if text == "x" else text

    def _value(self) -> Any:
        """Parse ``VALUE : quoted | '[' (VALUE (',' VALUE)*)? ']' | dict | BARE``, JSON first."""
        tokens = self.tokens
        quoted = self._quoted()
        if quoted is not None:
            return quoted
        if tokens.check("LBRACE"):
            return self._dict(into={}, vertex=False)
        if tokens.accept("LBRACKET"):
            self._enter()
            items: list[Any] = []
            if not tokens.accept("RBRACKET"):
                items.append(self._value())
                while tokens.accept("COMMA"):
                    items.append(self._value())
                tokens.expect("RBRACKET", expected="',' or ']'")
            self._leave()
            return items
        token = tokens.expect("BARE", expected="a value after ':'")
        text = token.text
        if text in _JSON_WORDS:
            return _JSON_WORDS[text]
        if _JSON_NUMBER.match(text):
            return self._number(token)
        return text

    def _number(self, token: Token) -> int | float:
        """A JSON number, refused when it has no faithful value (JSON output has no infinity)."""
        try:
            number: int | float = json.loads(token.text)
        except ValueError:
            # int() refuses more than 4,300 digits.
            number = math.inf
        if isinstance(number, float) and not math.isfinite(number):
            raise LimitError(
                "number too large to represent",
                source=self.tokens.source,
                span=(token.position, token.end),
            )
        return number

    def finish(self, default_label: str) -> None:
        """Apply the slot-label rules of RFC 46 to the slots seen."""
        unlabelled = [slot for slot in self.slots if not slot.labelled]
        if len(self.slots) > 1 and unlabelled:
            token = unlabelled[0].token
            raise InvalidError(
                "a shape with several slots must label every slot",
                source=self.tokens.source,
                span=(token.position, token.end),
            )
        for slot in unlabelled:
            # Keep the key order of the RFC's examples: type, count, label, the rest.
            rest = {k: v for k, v in slot.vertex.items() if k not in ("type", "count")}
            for key in rest:
                del slot.vertex[key]
            slot.vertex["label"] = default_label
            slot.vertex.update(rest)


def count_to_shape(text: str, *, edition: str = DEFAULT_EDITION) -> Any:
    """Return the RFC 14 ``count`` value a shape's count string stands for.

    Digits only give an integer, an idset gives its string, a range gives the dictionary
    RFC 46's examples show when the edition can express it, or else the range string.
    Raises the count code's :class:`~reference.errors.FormatError` for a bad count.
    """
    found = _count_to_shape(text, edition)
    # The cache holds dictionaries as tuples of items: every caller gets its own dict.
    return dict(found) if isinstance(found, tuple) else found


@functools.lru_cache(maxsize=1024)
def _count_to_shape(text: str, edition: str) -> int | str | tuple[tuple[str, Any], ...]:
    # Shapes repeat the same few counts many times; reading each once keeps long shapes fast.
    found = _read_count(text, edition)
    return tuple(found.items()) if isinstance(found, dict) else found


def _read_count(text: str, edition: str) -> int | str | dict[str, Any]:
    from flux_conformance.reference.errors import ParseError
    from flux_conformance.reference.ranges import parse_count, parse_range

    # parse_count applies every RFC 14 rule (and refuses what is neither form); what is left
    # is only to choose how to write the count down.
    count = parse_count(text, edition=edition)
    bare = text[1:-1] if text.startswith("[") else text
    if bare.isdigit():
        return int(bare)
    if count.range is not None:
        bounds = count.range
    else:
        # Read as an idset; it may be a range as well (``3-30``), which is written as one.
        try:
            bounds = parse_range(text)
        except ParseError:
            return text
    if bounds.max is not None:
        return bounds.to_json()
    if bounds.operator == "+" and bounds.operand == 1:
        return {"min": bounds.min}
    if edition_named(edition).range_max_optional:
        return {"min": bounds.min, "operator": bounds.operator, "operand": bounds.operand}
    # Before max became optional, operator and operand needed a max, which an open range lacks.
    return text


def parse_shape(
    shape: str, *, default_label: str = DEFAULT_LABEL, edition: str = DEFAULT_EDITION
) -> list[dict[str, Any]]:
    """Expand an RFC 46 shape string into an RFC 14 resources list."""
    parser = _ShapeParser(shape, edition=edition)
    resources = parser.parse_resources()
    parser.finish(default_label)
    return resources


# -- rendering (the inverse, used by tests and by tools that print shapes) ------------------

_PLAIN = re.compile(rf"[^{_SPECIAL}+-][^{_SPECIAL}]*\Z")


def _render_string(text: str) -> str:
    if _PLAIN.match(text) and text != "x":
        return text
    return json.dumps(text)


def _render_count(count: Any) -> str:
    if isinstance(count, bool):
        raise InvalidError("a count is not a boolean")
    if isinstance(count, int):
        return str(count)
    if isinstance(count, str):
        return count
    if isinstance(count, dict) and "min" in count:
        low = count["min"]
        text = f"{low}-{count['max']}" if "max" in count else f"{low}+"
        if "operator" in count:
            text += f":{count['operand']}:{count['operator']}"
        return text
    raise InvalidError(f"cannot render count {count!r}")


def _render_value(value: Any) -> str:
    if isinstance(value, str):
        if (
            value in _JSON_WORDS
            or _JSON_NUMBER.match(value)
            or not re.fullmatch(r"[^\s\[\]{},\"']+", value)
        ):
            return json.dumps(value)
        return value
    if isinstance(value, dict):
        return (
            "{"
            + ",".join(f"{_render_string(k)}:{_render_value(v)}" for k, v in value.items())
            + "}"
        )
    if isinstance(value, list):
        return "[" + ",".join(_render_value(v) for v in value) + "]"
    return json.dumps(value)


def _render_vertex(vertex: Any) -> str:
    if not isinstance(vertex, dict) or not isinstance(vertex.get("type"), str):
        raise InvalidError(f"not a resource vertex: {vertex!r}")
    if vertex["type"] == "slot" and not isinstance(vertex.get("label"), str):
        raise InvalidError("a slot needs a string label to be written as a shape")
    if "with" in vertex and (not isinstance(vertex["with"], list) or not vertex["with"]):
        raise InvalidError("with must be a non-empty list to be written as a shape")
    out = _render_string(vertex["type"])
    if vertex.get("count", 1) != 1 or isinstance(vertex.get("count"), bool):
        out += "=" + _render_count(vertex["count"])
    entries: list[str] = []
    if vertex["type"] == "slot":
        entries.append(_render_string(vertex["label"]))
    for key, value in vertex.items():
        if key in _POSITIONAL_KEYS or (key == "label" and vertex["type"] == "slot"):
            continue
        entries.append(f"{_render_string(key)}:{_render_value(value)}")
    if entries:
        out += "{" + ",".join(entries) + "}"
    if "with" in vertex:
        out += "/" + _render_list(vertex["with"])
    return out


def _render_list(vertices: list[dict[str, Any]]) -> str:
    if len(vertices) == 1:
        return _render_vertex(vertices[0])
    return "[" + ";".join(_render_vertex(v) for v in vertices) + "]"


def render_shape(resources: list[dict[str, Any]]) -> str:
    """Write a resources list as a shape that :func:`parse_shape` reads back to it.

    Every slot is written with its label and every key explicitly (``key:value``), so the
    result does not depend on the default label.  Raises
    :class:`~reference.errors.InvalidError` for a value the shape syntax cannot carry.
    """
    if not resources:
        raise InvalidError("a shape has at least one vertex")
    return _render_list(resources)


# -- the operation ---------------------------------------------------------------------------


def _shape_parse(value: Any, *, edition: str) -> list[dict[str, Any]]:
    """Operation ``shape.parse``: ``{shape, default_label?}`` -> resources list."""
    if not isinstance(value, dict):
        raise InvalidError("input must be an object with a 'shape' string")
    unknown = sorted(set(value) - {"shape", "default_label"})
    if unknown:
        raise InvalidError(f"unknown input key {unknown[0]!r}")
    shape = value.get("shape")
    if not isinstance(shape, str):
        raise InvalidError("'shape' must be a string", path=("shape",))
    label = value.get("default_label", DEFAULT_LABEL)
    if not isinstance(label, str):
        raise InvalidError("'default_label' must be a string", path=("default_label",))
    return parse_shape(shape, default_label=label, edition=edition)


OPERATIONS: dict[str, Callable[..., Any]] = {"shape.parse": _shape_parse}
