"""Acceptable counts of a jobspec vertex, as the allocation checks read them (RFC 14, count).

A count is read once, through the oracle (``range.decode``, ``idset.decode``), into JSON: a
finite count of few values as ``{"values": [...]}``, any other as ``{"min", "max" (null:
none), "operator", "operand"}``, the form docs/export.md gives for jobspec counts.  The
functions below answer the questions the checks ask of it: the smallest acceptable value, is a
value acceptable, the next acceptable value above one.
"""

from __future__ import annotations

from typing import Any

from flux_conformance.runner.comparators._oracle import Oracle
from flux_conformance.runner.comparators.shape import count_key

__all__ = ["above", "accepts", "read_count", "smallest"]

#: A finite count of at most this many values is kept as its values.
_EXPAND = 4096

Count = dict[str, Any]


def read_count(count: Any, oracle: Oracle) -> Count | None:
    """The count as JSON (None: the oracle cannot read it)."""
    key = count_key(count, oracle, _EXPAND)
    if key is None:
        return None
    kind, *rest = key
    if kind == "values":
        return {"values": sorted(rest[0])} if rest[0] else None
    if kind == "unbounded":
        low, operator, operand = rest
        return {"min": low, "max": None, "operator": operator, "operand": operand}
    low, high, operator, operand = rest
    return {"min": low, "max": high, "operator": operator, "operand": operand}


def smallest(count: Count) -> int:
    """The smallest acceptable value."""
    return int(count["values"][0]) if "values" in count else int(count["min"])


#: Larger than any pool: a next value past it is reported as this (never worked out).
_HUGE = 2**64


def _step(count: Count, value: int) -> int:
    """The value after ``value`` in a count of operator '*' or '^' (above works out '+')."""
    operand: int = count["operand"]
    if count["operator"] == "*":
        return min(value * operand, _HUGE)
    # ``value ** operand`` has at least (bits(value) - 1) * operand + 1 bits: a huge operand
    # costs nothing.
    if (value.bit_length() - 1) * operand + 1 > _HUGE.bit_length():
        return _HUGE
    return min(int(value**operand), _HUGE)


def above(count: Count, value: int) -> int | None:
    """The smallest acceptable value above ``value`` (None: there is none)."""
    if "values" in count:
        return next((v for v in count["values"] if v > value), None)
    low, high, operand = count["min"], count["max"], count["operand"]
    if value < low:
        found = low
    elif count["operator"] == "+":
        found = low + ((value - low) // operand + 1) * operand
    else:
        found = low
        while found <= value:
            nxt = _step(count, found)
            if nxt <= found or nxt >= _HUGE:
                return None if nxt <= found else _HUGE
            found = nxt
    return found if high is None or found <= high else None


def accepts(count: Count, value: int) -> bool:
    """Whether ``value`` is an acceptable count: the smallest acceptable value from it on."""
    return above(count, value - 1) == value
