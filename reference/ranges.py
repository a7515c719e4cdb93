"""RFC 45 range strings (``2-16:2:*``) and RFC 14 resource counts.

Two layers, kept apart on purpose:

:func:`parse_range` reads an RFC 45 range string and nothing more (RFC 45, Implementation, and
the readings, "RFC 45 ranges and RFC 14 counts"):

* ``min-max:operand:operator`` and ``min+:operand:operator``; ``:+`` may be dropped, and so may
  ``:1:+``; a bare number ``5`` is the range 5..5; one optional pair of brackets;
* numbers are decimal without leading zeros (``0`` itself is fine); the operator is one of
  ``+ * ^``;
* an operator without its operand (``1-5:*``, ``1-5::*``), an operand on a bare number
  (``5:2``), and ``max < min`` are refused; ``3-3`` is the single value 3.

Every refusal is a :class:`~reference.errors.ParseError` (category ``syntax``).  RFC 45 alone
does not constrain the values, so ``0-5`` and ``1-5:1:*`` are valid *ranges*.

:func:`parse_count` reads an RFC 14 ``count`` (Resources > count) in any of its forms and applies
the count rules; problems with the value are :class:`~reference.errors.InvalidError`:

* a positive integer (``0``, ``true``, ``4.0`` are not);
* a string holding an RFC 22 idset of acceptable counts (``"4,9,16,25"``; no ``0``, not empty)
  or an RFC 45 range; a string that is both (``"5"``, ``"3-30"``, ``"[1-4]"``) means the same
  either way; a string that is neither is a ``syntax`` error;
* a dictionary with a positive ``min``, and ``max`` (>= min), ``operator`` and ``operand``
  (positive) under the chosen *edition* of RFC 14: ``2025-07-31`` (all three or none) or
  ``2026-08-13``, the latest (``max`` optional; ``operator`` and ``operand`` together or not
  at all);
  no other keys;
* for ranges, in either spelling: ``min >= 1``; ``operand >= 1``; ``*`` and ``^`` need
  ``operand >= 2``; ``^`` needs ``min >= 2``.

Limits (see :mod:`reference._limits`): numbers above 2**64 - 1 -> ``limit`` (never wrapped);
:meth:`Count.values` refuses a ``limit`` argument above 2**64 - 1 and a result longer than
4,000,000 values (``limit``), decided before the list is built.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flux_conformance.reference._limits import MAX_ID, check_expansion, check_text_length
from flux_conformance.reference._tokens import Tokenizer
from flux_conformance.reference.editions import DEFAULT_EDITION, edition_named, resolve
from flux_conformance.reference.errors import InvalidError, LimitError, ParseError
from flux_conformance.reference.idset import IdSet

__all__ = ["OPERATIONS", "OPERATORS", "Count", "Range", "parse_count", "parse_range"]

#: RFC 45 (Implementation) / RFC 14 (count): addition, multiplication, exponentiation.
OPERATORS = ("+", "*", "^")

_TOKENS: dict[str, re.Pattern[str]] = {
    "NUMBER": re.compile(r"[0-9]+"),
    "HYPHEN": re.compile(r"-"),
    "PLUS": re.compile(r"\+"),
    "COLON": re.compile(r":"),
    "OPERATOR": re.compile(r"[+*^]"),
    "LBRACKET": re.compile(r"\["),
    "RBRACKET": re.compile(r"\]"),
}

_DICT_KEYS = ("min", "max", "operator", "operand")


@dataclass(frozen=True)
class Range:
    """An RFC 45 / RFC 14 range: ``min``, optional ``max`` (None: unbounded), operator, operand.

    The acceptable values are ``min``, then each previous value combined with ``operand`` by
    ``operator`` (``+`` adds, ``*`` multiplies, ``^`` raises to the power), up to ``max``.
    """

    min: int
    max: int | None
    operator: str = "+"
    operand: int = 1

    def to_json(self) -> dict[str, Any]:
        """``{min, max (only when bounded), operator, operand}``, as ``range.decode`` returns."""
        out: dict[str, Any] = {"min": self.min}
        if self.max is not None:
            out["max"] = self.max
        out["operator"] = self.operator
        out["operand"] = self.operand
        return out

    def encode(self) -> str:
        """Return the shortest RFC 45 string for this range (``:1:+`` and ``:+`` dropped)."""
        head = f"{self.min}+" if self.max is None else f"{self.min}-{self.max}"
        if self.operator == "+":
            return head if self.operand == 1 else f"{head}:{self.operand}"
        return f"{head}:{self.operand}:{self.operator}"

    def __str__(self) -> str:
        return self.encode()


# -- the RFC 45 parser --------------------------------------------------------------------------
#
#     range    = "[" body "]" | body
#     body     = number [ bound [ ":" number [ ":" operator ] ] ]
#     bound    = "-" number | "+"
#     number   = "0" | nonzero { digit }
#     operator = "+" | "*" | "^"


def parse_range(text: str) -> Range:
    """Strictly parse an RFC 45 range string (``ParseError``; ``LimitError`` for huge numbers)."""
    check_text_length(text, "range string")
    tokens = Tokenizer(text, rules=_TOKENS)
    return _parse_range(tokens)


def _parse_range(tokens: Tokenizer) -> Range:
    """Parse ``range = "[" body "]" | body``."""
    if tokens.accept("LBRACKET"):
        result = _parse_body(tokens)
        tokens.expect("RBRACKET", expected="']' closing the range")
    else:
        result = _parse_body(tokens)
    if not tokens.at_end():
        tokens.fail("unexpected text after the range")
    return result


def _parse_body(tokens: Tokenizer) -> Range:
    """Parse ``body = number [ bound [ ":" number [ ":" operator ] ] ]``."""
    start = tokens.position
    low = _parse_number(tokens, "the minimum")
    high: int | None
    if tokens.accept("HYPHEN"):
        high = _parse_number(tokens, "the maximum")
        if high < low:
            tokens.fail("the maximum is below the minimum", start=start, end=tokens.position)
    elif tokens.accept("PLUS"):
        high = None
    else:
        # A bare number: the single value (readings); it takes no operand.
        return Range(low, low)
    operand, operator = 1, "+"
    if tokens.accept("COLON"):
        operand = _parse_number(tokens, "an operand")
        if tokens.accept("COLON"):
            operator = tokens.expect("OPERATOR", expected="an operator (+, * or ^)").text
    return Range(low, high, operator, operand)


def _parse_number(tokens: Tokenizer, what: str) -> int:
    """Parse ``number = "0" | nonzero { digit }``."""
    token = tokens.expect("NUMBER", expected=what)
    if len(token.text) > 1 and token.text[0] == "0":
        tokens.fail(
            "numbers are written without leading zeros", start=token.position, end=token.end
        )
    if len(token.text) > len(str(MAX_ID)) or int(token.text) > MAX_ID:
        raise LimitError(
            f"number exceeds the limit {MAX_ID}",
            source=tokens.source,
            span=(token.position, token.end),
        )
    return int(token.text)


# -- RFC 14 counts ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Count:
    """A valid RFC 14 count: a finite set of acceptable counts (``ids``) or a ``range``.

    Exactly one of ``ids`` and ``range`` is set.  ``source`` is the JSON it was read from
    (kept for :meth:`to_json`, ignored by comparison).
    """

    ids: IdSet | None = None
    range: Range | None = None
    source: Any = field(default=None, compare=False, hash=False, repr=False)

    @property
    def min(self) -> int:
        """The smallest acceptable count."""
        if self.range is not None:
            return self.range.min
        assert self.ids is not None
        first = self.ids.first()
        assert first is not None
        return first

    @property
    def max(self) -> int | None:
        """The declared upper bound (``None`` when unbounded); it need not be reachable."""
        if self.range is not None:
            return self.range.max
        assert self.ids is not None
        return self.ids.last()

    def to_json(self) -> int | str | dict[str, Any]:
        """Return the count in the JSON form it was given (a dictionary with its keys in order)."""
        if isinstance(self.source, dict):
            return {key: self.source[key] for key in _DICT_KEYS if key in self.source}
        if isinstance(self.source, int | str):
            return self.source
        if self.range is not None:
            return self.range.to_json()
        assert self.ids is not None
        return self.ids.encode()

    def __contains__(self, value: object) -> bool:
        if type(value) is not int or value < 1:
            return False
        if self.ids is not None:
            return value in self.ids
        bounds = self.range
        assert bounds is not None
        if value < bounds.min or (bounds.max is not None and value > bounds.max):
            return False
        if bounds.operator == "+":
            return (value - bounds.min) % bounds.operand == 0
        # Multiplicative sequences are short (operand >= 2): walk them.
        return value in _range_values(bounds, value)

    def values(self, limit: int) -> list[int]:
        """Return the acceptable counts up to ``limit``, ascending.

        ``LimitError`` when ``limit`` exceeds 2**64 - 1 or the list would hold more than
        4,000,000 values (checked before it is built).
        """
        if type(limit) is not int or limit < 0:
            raise InvalidError(f"limit must be a non-negative integer, not {limit!r}")
        if limit > MAX_ID:
            raise LimitError(f"limit {limit} exceeds {MAX_ID}")
        if self.ids is not None:
            window = self.ids & IdSet(((0, limit),))
            check_expansion(window.size, "count")
            return list(window)
        assert self.range is not None
        return _range_values(self.range, limit)


def _range_values(bounds: Range, limit: int) -> list[int]:
    top = limit if bounds.max is None else min(limit, bounds.max)
    value, operand = bounds.min, bounds.operand
    if value > top:
        return []
    if bounds.operator == "+":
        check_expansion((top - value) // operand + 1, "count")
        return list(range(value, top + 1, operand))
    out: list[int] = []
    while value <= top:
        out.append(value)
        if bounds.operator == "*":
            value *= operand
        elif (value.bit_length() - 1) * operand > top.bit_length():
            # value**operand >= 2**((bits-1)*operand) > top: stop before building a huge power.
            break
        else:
            value **= operand
    return out


def _check_positive(value: Any, what: str) -> int:
    if type(value) is not int:
        raise InvalidError(f"{what} must be a positive integer, not {value!r}")
    if value < 1:
        raise InvalidError(f"{what} must be a positive integer, not {value}")
    if value > MAX_ID:
        raise LimitError(f"{what} {value} exceeds the limit {MAX_ID}")
    return value


def _check_count_range(bounds: Range) -> Range:
    """Check the RFC 14 rules a range must meet to be a count."""
    if bounds.min < 1:
        raise InvalidError("a count range needs min >= 1")
    if bounds.operand < 1:
        raise InvalidError("a count range needs operand >= 1")
    if bounds.operator in "*^" and bounds.operand < 2:
        raise InvalidError(f"operator {bounds.operator!r} needs operand >= 2")
    if bounds.operator == "^" and bounds.min < 2:
        raise InvalidError("operator '^' needs min >= 2")
    return bounds


def _count_from_string(text: str) -> Count:
    """Read an idset of acceptable counts or an RFC 45 range (same meaning when both apply)."""
    try:
        ids: IdSet | None = IdSet.decode(text)
        idset_error: Exception | None = None
    except (ParseError, LimitError) as exc:
        ids, idset_error = None, exc
    try:
        bounds: Range | None = parse_range(text)
        range_error: Exception | None = None
    except (ParseError, LimitError) as exc:
        bounds, range_error = None, exc
    if ids is not None:
        if not ids:
            raise InvalidError("an idset count names no acceptable count")
        if 0 in ids:
            raise InvalidError("0 is not an acceptable count")
        return Count(ids=ids, source=text)
    if bounds is not None:
        return Count(range=_check_count_range(bounds), source=text)
    if isinstance(idset_error, LimitError) or isinstance(range_error, LimitError):
        raise LimitError(f"count {text!r} holds a number above {MAX_ID}")
    raise ParseError(
        f"count string {text!r} is neither an RFC 22 idset nor an RFC 45 range",
        source=text,
        span=(0, len(text)),
    )


def _count_from_dict(value: dict[Any, Any], edition: str) -> Count:
    unknown = sorted(str(key) for key in value if key not in _DICT_KEYS)
    if unknown:
        raise InvalidError(f"unknown key(s) in a count dictionary: {', '.join(unknown)}")
    if "min" not in value:
        raise InvalidError("a count dictionary needs 'min'")
    low = _check_positive(value["min"], "min")
    has = {key: key in value for key in ("max", "operator", "operand")}
    if not edition_named(edition).range_max_optional:
        if any(has.values()) and not all(has.values()):
            raise InvalidError("max, operator and operand go together (all three or none)")
    elif has["operator"] != has["operand"]:
        raise InvalidError("operator and operand go together")
    high: int | None = None
    if has["max"]:
        high = _check_positive(value["max"], "max")
        if high < low:
            raise InvalidError("max must be greater than or equal to min")
    operator, operand = "+", 1
    if has["operator"]:
        operator = value["operator"]
        if not isinstance(operator, str) or operator not in OPERATORS:
            raise InvalidError(f"operator must be one of + * ^, not {operator!r}")
        operand = _check_positive(value["operand"], "operand")
    return Count(range=_check_count_range(Range(low, high, operator, operand)), source=value)


def parse_count(value: object, *, edition: str = DEFAULT_EDITION) -> Count:
    """Read an RFC 14 count in any of its forms and check the count rules.

    ``InvalidError`` for a value that breaks a rule (or has a wrong JSON type), ``ParseError``
    for a string that is neither an idset nor a range, ``LimitError`` for numbers above
    2**64 - 1.  ``edition`` (see :mod:`reference.editions`) selects the range-dictionary rule.
    """
    edition = resolve(edition)
    if type(value) is int:
        number = _check_positive(value, "a count")
        return Count(ids=IdSet(((number, number),)), source=value)
    if isinstance(value, str):
        return _count_from_string(value)
    if isinstance(value, dict):
        return _count_from_dict(value, edition)
    raise InvalidError(
        "a count is a positive integer, an idset or range string, or a dictionary; "
        f"not {type(value).__name__} {value!r}"
    )


# -- operations ---------------------------------------------------------------------------------


def _op_range_decode(value: Any, *, edition: str) -> dict[str, Any]:
    del edition
    if not isinstance(value, str):
        raise InvalidError(f"range.decode takes a string, not {type(value).__name__}")
    return parse_range(value).to_json()


def _op_count_values(value: Any, *, edition: str) -> list[int]:
    if not isinstance(value, dict) or set(value) != {"count", "limit"}:
        raise InvalidError("count.values takes {count, limit}")
    return parse_count(value["count"], edition=edition).values(value["limit"])


OPERATIONS: dict[str, Callable[..., Any]] = {
    "range.decode": _op_range_decode,
    "count.values": _op_count_values,
}
