"""Slurm's ``--extra`` node constraints: a job's filter expression tested on each node's Extra.

A node may carry *Extra* data, a JSON object; a job's ``--extra`` string such as
``(load<0.9&load>0.5)|gpu=true`` selects the nodes whose Extra satisfies it.  Slurm's
documentation page (/work/shared/specs/slurm-extra-constraints.md) describes the syntax only
in part; this module reproduces what current Slurm does, as written down in the suite's readings
(/work/shared/notes/readings.md, "Slurm --extra").  Where the two disagree the readings win.

Syntax
    A *leaf* is ``key OP value``.  ``OP`` is the longest run of the characters ``< > = !`` after
    the key and must be one of ``=  !=  <  <=  >  >=``.  Key and value are non-empty and contain
    none of ``, & | < > = ! ( )``.  Nothing is trimmed and nothing is quoted: spaces and quote
    characters belong to the key or value.  Terms (leaves or parenthesised sequences) are joined
    by ``&`` or ``,`` (both AND, and they may be mixed) or ``|`` (OR); a run of several boolean
    characters is an error, and each parenthesis level holds one kind of boolean operator only.
    Anything else (empty input, ``()``, unbalanced parentheses, a term right after a term or a
    ``)``) is a :class:`~reference.errors.ParseError` (category ``syntax``).  Slurm's controller
    refuses an expression longer than 1024 bytes; so does :func:`parse`, with
    :class:`LengthError` (category ``length``), before looking at the syntax.

Evaluation
    A leaf looks its key up among the top-level members of the node's Extra (exactly, case
    included).  A missing key, or a value that is null, an object or an array, makes the leaf
    false whatever the operator, ``!=`` included.  Otherwise the JSON type of the node's value
    decides how the request's value is read:

    * number: the request value must be a C double in full (:func:`read_number`); if it is not,
      the leaf is false for every operator.  Two numbers are equal when their difference lies
      strictly inside (-0.00001, 0.00001) (the documentation's "0.0001" is a typo); within that
      band ``<`` and ``>`` are false; a NaN on either side compares as greater.
    * boolean: the request value is coerced to a boolean (:func:`coerce_bool`) and
      false < true.
    * string: byte-wise comparison of the UTF-8 text (C ``strcmp``), case-sensitive.

    ``&``/``,`` need every child true, ``|`` any child.  A node without Extra never matches.

Extra documents are read as strict JSON (RFC 8259): Slurm's own reader is more lenient
(comments, single quotes, trailing commas); the suite leaves those cases open.

The parse tree is made of :class:`Group` and :class:`Leaf` nodes: a parenthesised sequence of two or
more terms, and the top level when it has two or more terms, is a :class:`Group`; parentheses
around a single term add nothing, so ``((a=1))`` is the same tree as ``a=1``.  Nested groups
are kept as written (``(a=1&b=2)&c=3`` is not flattened).

Parse once, evaluate many: :meth:`Expression.compile` parses the text and turns the tree into
plain closures with every request value already read as a number, a boolean and a string, so
testing a node costs a dictionary lookup and a comparison per leaf.  Nothing here recurses on
the depth of the input: the parser keeps an explicit stack, and tree walks are iterative.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from flux_conformance.reference.errors import InvalidError, LimitError, ParseError

__all__ = [
    "COMPARISONS",
    "EPSILON",
    "MAX_LENGTH",
    "OPERATIONS",
    "Expression",
    "ExtraError",
    "Group",
    "Leaf",
    "LengthError",
    "Node",
    "coerce_bool",
    "load_extra",
    "node_from_json",
    "parse",
    "read_number",
    "select",
    "to_text",
]

#: Slurm's controller refuses a longer ``--extra`` string; it counts bytes (``strlen``), so
#: the reference counts the UTF-8 encoding, not characters.
MAX_LENGTH = 1024

#: Half-width of the open band inside which two numbers are equal (Slurm's FUZZY_EPSILON).
EPSILON = 0.00001

#: The comparison operators of a leaf, in the order the documentation lists them.
COMPARISONS = ("=", "!=", ">", ">=", "<", "<=")

BooleanOp = Literal["and", "or"]


class LengthError(LimitError):
    """The expression is longer than :data:`MAX_LENGTH` bytes (category ``length``)."""

    category = "length"


class ExtraError(InvalidError):
    """A node's Extra text is not a JSON object (category ``extra``)."""

    category = "extra"


# --------------------------------------------------------------------------------------------
# The tree


@dataclass(frozen=True)
class Leaf:
    """One request, ``key comparison value``, with key and value exactly as written."""

    key: str
    comparison: str
    value: str

    def to_json(self) -> dict[str, Any]:
        """Return the leaf as the ``slurm.extra.parse`` operation reports it."""
        return {"key": self.key, "comparison": self.comparison, "value": self.value}


@dataclass(frozen=True)
class Group:
    """Two or more terms joined by one kind of boolean operator (``and`` or ``or``)."""

    op: BooleanOp
    children: tuple[Node, ...]

    def to_json(self) -> dict[str, Any]:
        """Return the group, and everything below it, as ``slurm.extra.parse`` reports it."""
        return _fold(
            self,
            Leaf.to_json,
            lambda group, children: {"op": group.op, "children": children},
        )


Node = Leaf | Group

_T = TypeVar("_T")


def _fold(
    root: Node,
    on_leaf: Callable[[Leaf], _T],
    on_group: Callable[[Group, list[_T]], _T],
) -> _T:
    """Combine a tree bottom-up without recursion (trees may be deeper than the C stack).

    ``on_group`` receives a group and the results of its children, in order.
    """
    results: list[_T] = []
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if isinstance(node, Leaf):
            results.append(on_leaf(node))
        elif children_done:
            count = len(node.children)
            values = results[len(results) - count :]
            del results[len(results) - count :]
            results.append(on_group(node, values))
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children))
    return results[0]


def to_text(node: Node) -> str:
    """Write ``node`` as an expression that :func:`parse` reads back as the same tree.

    AND is written ``&``.  Only nested groups get parentheses.
    """

    def on_group(group: Group, children: list[tuple[str, bool]]) -> tuple[str, bool]:
        joiner = "&" if group.op == "and" else "|"
        parts = [f"({text})" if is_group else text for text, is_group in children]
        return joiner.join(parts), True

    text, _ = _fold(
        node, lambda leaf: (f"{leaf.key}{leaf.comparison}{leaf.value}", False), on_group
    )
    return text


#: Deepest tree :func:`node_from_json` accepts: far beyond what 1024 bytes of text can hold.
_MAX_JSON_DEPTH = 1024


def node_from_json(value: Any) -> Node:
    """Build a tree from its JSON form (the output of ``slurm.extra.parse``), checking it.

    Raises :class:`~reference.errors.InvalidError` for anything :func:`parse` could not have
    produced: unknown members, an unknown comparison, an empty or forbidden key or value, a
    group with fewer than two children.
    """
    # Depth-first with an explicit stack; each entry is (json, path, slot to fill).
    built: dict[int, Node] = {}
    pending: list[tuple[Any, tuple[str | int, ...], bool]] = [(value, (), False)]
    while pending:
        item, path, children_done = pending.pop()
        if len(path) > 2 * _MAX_JSON_DEPTH:
            raise LimitError("tree nested too deeply", path=path)
        if not isinstance(item, dict):
            raise InvalidError("a node must be an object", path=path)
        if "op" in item or "children" in item:
            if set(item) != {"op", "children"}:
                raise InvalidError("a group has exactly the members op and children", path=path)
            if item["op"] not in ("and", "or"):
                raise InvalidError("op must be 'and' or 'or'", path=path)
            children = item["children"]
            if not isinstance(children, list) or len(children) < 2:
                raise InvalidError("children must be a list of two or more nodes", path=path)
            if children_done:
                built[id(item)] = Group(item["op"], tuple(built[id(c)] for c in children))
            else:
                pending.append((item, path, True))
                pending.extend(
                    (child, (*path, "children", i), False) for i, child in enumerate(children)
                )
            continue
        if set(item) != {"key", "comparison", "value"}:
            raise InvalidError("a leaf has exactly the members key, comparison, value", path=path)
        key, comparison, text = item["key"], item["comparison"], item["value"]
        if comparison not in COMPARISONS:
            raise InvalidError(f"unknown comparison {comparison!r}", path=path)
        for what, part in (("key", key), ("value", text)):
            if not isinstance(part, str) or not part or _FORBIDDEN_IN_TERM.search(part):
                raise InvalidError(
                    f"{what} must be a non-empty string free of ,&|<>=!()", path=path
                )
        built[id(item)] = Leaf(key, comparison, text)
    return built[id(value)]


# --------------------------------------------------------------------------------------------
# Parsing

# The token table.  A leaf runs up to the next boolean character or parenthesis; a boolean
# operator is read as the whole run of boolean characters so that `&&` or `,&` is one (bad)
# operator rather than two.
_TOKENS: dict[str, re.Pattern[str]] = {
    "open": re.compile(r"\("),
    "close": re.compile(r"\)"),
    "boolean": re.compile(r"[,&|]+"),
    "leaf": re.compile(r"[^,&|()]+"),
}
_TOKEN_ORDER = ("open", "close", "boolean", "leaf")
_BOOLEANS: dict[str, BooleanOp] = {"&": "and", ",": "and", "|": "or"}
_COMPARISON_RUN = re.compile(r"[<>=!]+")
_FORBIDDEN_IN_TERM = re.compile(r"[,&|<>=!()]")


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    start: int

    @property
    def end(self) -> int:
        return self.start + len(self.text)


def _tokens(source: str) -> list[_Token]:
    """Split ``source`` into tokens; every character belongs to exactly one token."""
    out: list[_Token] = []
    position = 0
    while position < len(source):
        for kind in _TOKEN_ORDER:
            match = _TOKENS[kind].match(source, position)
            if match:
                out.append(_Token(kind, match.group(), position))
                position = match.end()
                break
    return out


@dataclass
class _Frame:
    """A sequence being read: the terms so far, its operator once seen, where it opened."""

    start: int
    terms: list[Node] = field(default_factory=list)
    op: BooleanOp | None = None

    def close(self) -> Node:
        # A lone term in parentheses is that term; Slurm's tree keeps a one-child level
        # there, which evaluates exactly like the child.
        if len(self.terms) == 1:
            return self.terms[0]
        return Group(self.op or "and", tuple(self.terms))


def parse(text: str) -> Node:
    """Parse an ``--extra`` expression into its tree.

    Grammar (EBNF; ``leaf`` and ``boolean`` are the tokens of the table above)::

        expression = sequence END
        sequence   = term { boolean term }      (one kind of boolean per sequence)
        term       = "(" sequence ")" | leaf
        leaf       = key comparison value

    Raises :class:`LengthError` beyond :data:`MAX_LENGTH` bytes, otherwise
    :class:`~reference.errors.ParseError` for any departure from the grammar.
    """
    _check_length(text)
    if "\x00" in text:
        # A C string ends at NUL, so Slurm can never be given one; refuse rather than guess.
        at = text.index("\x00")
        raise ParseError("NUL character in expression", source=text, span=(at, at + 1))
    return _parse_expression(text, _tokens(text))


def _check_length(text: str) -> None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_LENGTH:
        raise LengthError(
            f"expression is {size} bytes long; Slurm accepts at most {MAX_LENGTH}",
            span=(0, len(text)),
        )


def _parse_expression(source: str, tokens: Sequence[_Token]) -> Node:
    """``expression = sequence END`` with ``sequence`` and ``term`` unrolled onto a stack.

    The rules are mutually recursive (a term may be a parenthesised sequence); an explicit
    stack of open sequences replaces the recursion so that nesting depth costs memory only.
    ``want_term`` says which of the two positions of ``sequence`` we are at: before a term,
    or after one (where a boolean operator, a ``)`` or the end may come).
    """

    def fail(reason: str, token: _Token | None) -> ParseError:
        span = (token.start, token.end) if token else (len(source), len(source) + 1)
        return ParseError(reason, source=source, span=span)

    stack = [_Frame(start=0)]
    want_term = True
    for token in tokens:
        frame = stack[-1]
        if want_term:
            if token.kind == "open":
                stack.append(_Frame(start=token.start))
            elif token.kind == "leaf":
                frame.terms.append(_parse_leaf(source, token))
                want_term = False
            elif token.kind == "close":
                raise fail("expected a request or '(' before ')'", token)
            else:
                raise fail("boolean operator without a request before it", token)
            continue
        if token.kind == "boolean":
            _parse_boolean(source, token, frame)
            want_term = True
        elif token.kind == "close":
            if len(stack) == 1:
                raise fail("')' without a matching '('", token)
            stack.pop()
            stack[-1].terms.append(frame.close())
        else:
            raise fail("expected a boolean operator (& , |) between requests", token)
    if want_term:
        raise fail("expected a request", None)
    if len(stack) > 1:
        opened = stack[-1].start
        raise ParseError("'(' is never closed", source=source, span=(opened, opened + 1))
    return stack[0].close()


def _parse_boolean(source: str, token: _Token, frame: _Frame) -> None:
    """``boolean = "&" | "," | "|"``: exactly one character, the same kind across a level."""
    op = _BOOLEANS.get(token.text)
    if op is None:
        raise ParseError(
            f"{token.text!r} is not a boolean operator",
            source=source,
            span=(token.start, token.end),
        )
    if frame.op is not None and frame.op != op:
        raise ParseError(
            "AND and OR mixed at one level of parentheses",
            source=source,
            span=(token.start, token.end),
        )
    frame.op = op


def _parse_leaf(source: str, token: _Token) -> Leaf:
    """``leaf = key comparison value``; the comparison is the first run of ``<>=!``."""
    text = token.text
    run = _COMPARISON_RUN.search(text)
    if run is None:
        raise ParseError(
            "request has no comparison operator", source=source, span=(token.start, token.end)
        )
    comparison = run.group()
    span = (token.start + run.start(), token.start + run.end())
    if comparison not in COMPARISONS:
        raise ParseError(f"{comparison!r} is not a comparison operator", source=source, span=span)
    key, value = text[: run.start()], text[run.end() :]
    if not key:
        raise ParseError("request has an empty key", source=source, span=span)
    if not value:
        raise ParseError("request has an empty value", source=source, span=span)
    # The run was the longest one, so the value starts with another character; a later
    # operator character inside the value (`a=b=c`) is not allowed.
    later = _COMPARISON_RUN.search(value)
    if later is not None:
        at = token.start + run.end() + later.start()
        raise ParseError(
            "operator character inside a value", source=source, span=(at, at + len(later.group()))
        )
    return Leaf(key, comparison, value)


# --------------------------------------------------------------------------------------------
# Reading request values

# Slurm reads a request value compared with a JSON number in two steps: an optional sign and
# the words inf, infinity and nan (any case) by hand; otherwise the text must start with a
# digit and glibc's sscanf("%lf%c") must take all of it.  sscanf takes the longest run that
# could still become a number (so a dangling exponent marker, with or without its sign, is
# taken) and then converts the longest prefix of that run that is one (so `1e` is 1).  A hex
# run needs something after `0x`, and takes an exponent only after a hex digit.  re.ASCII
# keeps IGNORECASE from matching the dotted capital I or the Kelvin sign.
_DECIMAL_RUN = re.compile(r"([0-9]+(?:\.[0-9]*)?)(?:[eE]([+-]?[0-9]*))?", re.ASCII)
_HEX_RUN = re.compile(
    r"0[xX]([0-9a-fA-F]*)(\.[0-9a-fA-F]*)?(?:[pP]([+-]?[0-9]*))?",
    re.ASCII,
)
_SPECIAL = re.compile(r"(inf|infinity|nan)", re.ASCII | re.IGNORECASE)


def _exponent(digits: str | None) -> str:
    """The exponent part worth converting: none when the marker has no digits after it."""
    return "" if digits is None or digits.lstrip("+-") == "" else digits


def _read_unsigned(body: str) -> float | None:
    """Read ``body`` (no sign) as sscanf's ``%lf`` must take it whole, or return None."""
    run = _HEX_RUN.fullmatch(body)
    if run:
        whole, fraction, exponent = run.group(1), run.group(2), run.group(3)
        digits = whole + (fraction or "")[1:]
        if not whole and fraction is None:
            return None  # only `0x`: sscanf refuses the conversion
        if exponent is not None and digits == "":
            return None  # `p` is no exponent before a hex digit; sscanf stops short of it
        if digits == "":
            return 0.0  # `0x.` converts as the `0` before the x
        power = _exponent(exponent)
        mantissa = f"0x{whole or '0'}{fraction or ''}"
        try:
            return float.fromhex(f"{mantissa}p{power}" if power else mantissa)
        except OverflowError:
            return math.inf
    run = _DECIMAL_RUN.fullmatch(body)
    if run:
        power = _exponent(run.group(2))
        return float(f"{run.group(1)}e{power}" if power else run.group(1))
    return None


def read_number(text: str) -> float | None:
    """Read ``text`` as Slurm reads a request value compared with a JSON number.

    An optional sign, then either ``inf``, ``infinity`` or ``nan`` in any case, or a number
    that starts with a digit and that glibc's ``sscanf("%lf")`` takes whole: decimal digits with
    an optional fraction (``23.`` is fine, ``.5`` is not) and exponent, or ``0x`` hexadecimal
    with an optional fraction and binary ``p`` exponent.  As with glibc, an exponent marker with
    no digits after it adds nothing: ``1e``, ``1e+`` and ``0x1p`` are 1, and ``0x.`` is 0.
    Nothing may surround the number, space included.  Returns None when ``text`` is not such a
    number.  Values out of range become infinities (or zero), as with ``strtod``.
    """
    negative = text[:1] == "-"
    body = text[1:] if text[:1] in ("+", "-") else text
    special = _SPECIAL.fullmatch(body)
    if special:
        number = math.nan if special.group(1).lower() == "nan" else math.inf
    elif body[:1].isdigit() and body[:1].isascii():
        found = _read_unsigned(body)
        if found is None:
            return None
        number = found
    else:
        return None
    return -number if negative else number


_WORDS = {
    "y": True,
    "yes": True,
    "t": True,
    "true": True,
    "on": True,
    "n": False,
    "no": False,
    "f": False,
    "false": False,
    "off": False,
}
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
# Integer spellings Slurm's conversions take before trying floats and words: decimal with a
# sign, hexadecimal `0x...`, and (via strtoll, which skips C white space) decimal after spaces.
_INTEGER = re.compile(r"[ \t\n\v\f\r]*[+-]?([0-9]+)|0[xX]([0-9a-fA-F]+)", re.ASCII)


def coerce_bool(text: str) -> bool:
    """Turn a request value into a boolean as Slurm does when the node's value is a boolean.

    False: text starting with ``~`` or equal to ``null`` (any case); an integer that is zero
    (``0``, ``-00``, ``0x0``, and the same after leading white space, which Slurm's integer
    reader skips); a number (:func:`read_number`) equal to zero; ``n no f false off`` in any
    case.  True: every other non-empty text, including ``y yes t true on``, non-zero numbers,
    NaN and unrecognised words.
    """
    if not text or text.startswith("~"):
        return False
    lowered = text.translate(_ASCII_LOWER)
    if lowered == "null":
        return False
    integer = _INTEGER.fullmatch(text)
    if integer:
        digits = integer.group(1) or integer.group(2)
        return digits.strip("0") != ""
    number = read_number(text)
    if number is not None:
        return number != 0
    return _WORDS.get(lowered, True)


# --------------------------------------------------------------------------------------------
# Evaluation

_LT, _EQ, _GT = -1, 0, 1
_ACCEPTS: dict[str, frozenset[int]] = {
    "=": frozenset({_EQ}),
    "!=": frozenset({_LT, _GT}),
    ">": frozenset({_GT}),
    ">=": frozenset({_EQ, _GT}),
    "<": frozenset({_LT}),
    "<=": frozenset({_LT, _EQ}),
}

_MISSING = object()

Test = Callable[[Mapping[str, Any]], bool]


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def _as_double(value: int | float) -> float:
    """Convert a JSON integer to the C double Slurm compares.

    Slurm's JSON reader keeps integers as signed 64-bit numbers and saturates the ones outside
    that range, so 2**64 - 1 is compared as 2**63 - 1 (both are 9223372036854775808.0 as a
    double, which is why equality still holds near the bound).
    """
    return float(min(max(value, _INT64_MIN), _INT64_MAX))


def _compile_leaf(leaf: Leaf) -> Test:
    key = leaf.key
    accepts = _ACCEPTS[leaf.comparison]
    number = read_number(leaf.value)
    flag = coerce_bool(leaf.value)
    text = leaf.value

    def test(extra: Mapping[str, Any]) -> bool:
        found = extra.get(key, _MISSING)
        kind = type(found)
        if kind is str:
            # strcmp stops at a NUL byte; UTF-8 byte order is code point order, so Python's
            # string order is strcmp's order on the encoded text.
            if "\x00" in found:
                found = found[: found.index("\x00")]
            order = (found > text) - (found < text)
        elif kind is float or kind is int:
            if number is None:
                return False
            ours = found if kind is float else _as_double(found)
            difference = ours - number
            if -EPSILON < difference < EPSILON:
                order = _EQ
            elif ours < number:
                order = _LT
            else:  # greater, or a NaN on either side
                order = _GT
        elif kind is bool:
            order = (found > flag) - (found < flag)
        else:  # missing, null, object, array
            return False
        return order in accepts

    return test


def _compile_group(group: Group, tests: list[Test]) -> Test:
    members = tuple(tests)
    if group.op == "or":

        def any_of(extra: Mapping[str, Any]) -> bool:
            # A plain loop: any() over a generator costs a generator per node and leaf group.
            for member in members:  # noqa: SIM110
                if member(extra):
                    return True
            return False

        return any_of

    def all_of(extra: Mapping[str, Any]) -> bool:
        for member in members:  # noqa: SIM110
            if not member(extra):
                return False
        return True

    return all_of


@dataclass(frozen=True)
class Expression:
    """A parsed ``--extra`` expression, ready to be tested against many nodes.

    Build one with :meth:`compile`; ``tree`` is the parse tree.
    """

    text: str
    tree: Node
    _test: Test = field(repr=False, compare=False)

    @classmethod
    def compile(cls, text: str) -> Expression:
        """Parse ``text`` (see :func:`parse` for the errors) and prepare its evaluation."""
        tree = parse(text)
        return cls(text, tree, _fold(tree, _compile_leaf, _compile_group))

    def matches(self, extra: Mapping[str, Any] | None) -> bool:
        """Whether a node whose decoded Extra is ``extra`` satisfies the expression.

        ``None`` (no Extra) never matches, nor does a value that is not a JSON object.
        """
        if not isinstance(extra, Mapping):
            return False
        return self._test(extra)

    def matches_text(self, extra: str | None) -> bool:
        """Like :meth:`matches`, from the node's Extra text; see :func:`load_extra`."""
        return self.matches(load_extra(extra))


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _saturate(digits: str) -> int:
    """A JSON integer for the second decoder: int() refuses ones longer than its digit limit.

    Those are far outside Slurm's signed 64-bit range, so their sign alone decides the bound
    they saturate to (see :func:`_as_double`).
    """
    try:
        return int(digits)
    except ValueError:
        return _INT64_MIN if digits.startswith("-") else _INT64_MAX


def _c_string_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """Build an object whose keys stop at their first NUL, as C strings do; the last one wins."""
    return {key.partition("\x00")[0]: value for key, value in pairs}


# Built once: json.loads() with keyword arguments builds a new decoder on every call, which
# costs more than decoding a small Extra.  NaN and Infinity are not JSON, so they are refused.
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)
# Integers beyond int()'s digit limit are still JSON numbers, far outside Slurm's 64-bit range;
# this second decoder, used only after the first one fails, saturates them.
_WIDE_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, parse_int=_saturate)
# Keys holding an escaped NUL are rare; only their documents pay for the hook that cuts them.
_NUL_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, object_pairs_hook=_c_string_keys)
_NUL_WIDE_DECODER = json.JSONDecoder(
    parse_constant=_refuse_constant, parse_int=_saturate, object_pairs_hook=_c_string_keys
)

#: Slurm's JSON reader (json-c) refuses a document whose values nest more than this deep: the
#: top value is at depth 1, and each member or element one deeper than its container.
MAX_EXTRA_DEPTH = 32


def _depth(value: Any) -> int:
    """The depth of the deepest value in ``value``, without recursion."""
    deepest = 0
    stack = [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(item, dict):
            stack.extend((child, level + 1) for child in item.values())
        elif isinstance(item, list):
            stack.extend((child, level + 1) for child in item)
    return deepest


def load_extra(text: str | None) -> dict[str, Any] | None:
    """Decode a node's Extra text; None for a node without Extra (``None`` or ``""``).

    Integers outside the signed 64-bit range saturate to its bounds, and keys stop at an
    escaped NUL, as in Slurm.  Raises :class:`ExtraError` when the text is not a strict JSON
    object, or nests more than :data:`MAX_EXTRA_DEPTH` levels deep.
    """
    if text is None or text == "":
        # Slurm stores an empty Extra as no Extra at all.
        return None
    # In strict JSON a NUL can only be written as this escape (raw control characters are out).
    plain, wide = (
        (_NUL_DECODER, _NUL_WIDE_DECODER) if "\\u0000" in text else (_DECODER, _WIDE_DECODER)
    )
    try:
        try:
            value = plain.decode(text)
        except ValueError:
            value = wide.decode(text)
    except RecursionError:
        # Python's decoder gives up hundreds of levels below Slurm's bound.
        raise ExtraError(f"Extra nests more than {MAX_EXTRA_DEPTH} levels deep") from None
    except ValueError as exc:
        raise ExtraError(f"Extra is not valid JSON: {exc}") from None
    if not isinstance(value, dict):
        raise ExtraError(f"Extra is a JSON {type(value).__name__}, not an object")
    # Fewer brackets than the bound cannot nest past it: skip the walk for ordinary documents.
    if text.count("[") + text.count("{") >= MAX_EXTRA_DEPTH - 1 and _depth(value) > MAX_EXTRA_DEPTH:
        raise ExtraError(f"Extra nests more than {MAX_EXTRA_DEPTH} levels deep")
    return value


def select(expression: str | Expression, nodes: Mapping[str, str | None]) -> list[str]:
    """Return the sorted names of the ``nodes`` (name -> Extra text) satisfying ``expression``.

    The expression is parsed once (its errors are raised even when there are no nodes).  A
    node whose Extra is missing, empty or not a usable JSON object is simply not selected, as
    Slurm never selects a node it cannot read constraints from.
    """
    compiled = expression if isinstance(expression, Expression) else Expression.compile(expression)
    chosen = []
    for name, text in nodes.items():
        try:
            extra = load_extra(text)
        except (ExtraError, LimitError):
            continue
        if extra is not None and compiled._test(extra):
            chosen.append(name)
    chosen.sort()
    return chosen


# --------------------------------------------------------------------------------------------
# Operations


def _op_parse(value: Any, *, edition: str) -> Any:
    del edition
    if not isinstance(value, str):
        raise InvalidError(f"input must be a string, not {type(value).__name__}")
    return parse(value).to_json()


def _members(value: Any, names: tuple[str, ...]) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidError(f"input must be an object, not {type(value).__name__}")
    if set(value) != set(names):
        raise InvalidError(f"input must have exactly the members {', '.join(names)}")
    if not isinstance(value["expression"], str):
        raise InvalidError("expression must be a string", path=("expression",))
    return value


def _op_match(value: Any, *, edition: str) -> Any:
    del edition
    members = _members(value, ("expression", "extra"))
    extra = members["extra"]
    if extra is not None and not isinstance(extra, str):
        raise InvalidError("extra must be a string or null", path=("extra",))
    # The expression is judged first: Slurm refuses a bad one when the job is submitted.
    compiled = Expression.compile(members["expression"])
    return compiled.matches_text(extra)


def _op_select(value: Any, *, edition: str) -> Any:
    del edition
    members = _members(value, ("expression", "nodes"))
    nodes = members["nodes"]
    if not isinstance(nodes, dict):
        raise InvalidError("nodes must be an object", path=("nodes",))
    for name, text in nodes.items():
        if text is not None and not isinstance(text, str):
            raise InvalidError("a node's Extra must be a string or null", path=("nodes", name))
    return select(members["expression"], nodes)


#: The suite's operations on ``--extra`` expressions (see runner/schemas/operations).
OPERATIONS: dict[str, Callable[..., Any]] = {
    "slurm.extra.parse": _op_parse,
    "slurm.extra.match": _op_match,
    "slurm.extra.select": _op_select,
}
