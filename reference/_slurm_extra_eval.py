"""Slurm ``--extra`` evaluation: reading request values, decoding Extra, compiled expressions.

Request values are read as numbers and booleans the way Slurm reads them, a node's Extra text
is decoded as Slurm's JSON reader would, and an expression is compiled into closures that test
a decoded Extra.

The public names are re-exported by :mod:`flux_conformance.reference.slurm_extra`, whose
docstring states the rules; this module holds the half of it that looks at a node.  It takes
parse trees from :mod:`flux_conformance.reference._slurm_extra_parse` and never looks at the
expression's text itself.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from flux_conformance.reference._slurm_extra_parse import Group, Leaf, Node, fold_tree, parse
from flux_conformance.reference.errors import InvalidError

__all__ = [
    "EPSILON",
    "MAX_EXTRA_DEPTH",
    "Expression",
    "ExtraError",
    "coerce_bool",
    "load_extra",
    "read_number",
]

#: Half-width of the open band inside which two numbers are equal (Slurm's FUZZY_EPSILON).
EPSILON = 0.00001


class ExtraError(InvalidError):
    """A node's Extra text is not a JSON object (category ``extra``)."""

    category = "extra"


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
        return cls(text, tree, fold_tree(tree, _compile_leaf, _compile_group))

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
