"""Comparators of RFC 46 shapes and of jobspecs built from them.

``shape_counts`` and ``jobspec_from_shape``, documented in :mod:`runner.comparators`.
"""

from __future__ import annotations

from typing import Any

from flux_conformance.runner.comparators._json import json_equal
from flux_conformance.runner.comparators._oracle import Oracle, Refused

__all__ = ["count_key", "jobspec_from_shape", "shape_counts"]

#: A finite count with at most this many values is compared as its set of values.
_COUNT_EXPANSION = 100_000


def _range_key(
    low: int, high: int | None, operator: str, operand: int, expand: int
) -> tuple[Any, ...]:
    if high is None:
        return ("unbounded", low, operator, operand)
    if operator == "+":
        if (high - low) // operand + 1 <= expand:
            return ("values", tuple(range(low, high + 1, operand)))
        return ("bounded", low, low + (high - low) // operand * operand, "+", operand)
    values: list[int] = []
    value = low
    # operand >= 2 (and min >= 2 for "^") in a valid count, so each value is larger.
    while value <= high and len(values) <= expand:
        values.append(value)
        if operator == "^" and not _power_within(value, operand, high):
            break
        value = value * operand if operator == "*" else value**operand
    return ("values", tuple(values))


def _power_within(value: int, operand: int, high: int) -> bool:
    """Whether ``value ** operand`` may be at most ``high``, decided on bit lengths.

    ``value ** operand`` has at least ``(bits(value) - 1) * operand + 1`` bits, so when that
    passes ``bits(high)`` the power is above ``high`` and is never computed: an answer whose
    operand is ``10**10`` costs nothing.
    """
    return (value.bit_length() - 1) * operand + 1 <= high.bit_length()


def count_key(count: Any, oracle: Oracle, expand: int = _COUNT_EXPANSION) -> tuple[Any, ...] | None:
    """Return what a count means as a comparable key (None when it cannot be read).

    A finite count of at most ``expand`` values is keyed by its values; a larger one by its
    bounds (so two counts of more than ``expand`` values compare by their bounds).
    """
    if isinstance(count, bool):
        return None
    if isinstance(count, int):
        return ("values", (count,))
    if isinstance(count, str):
        try:
            count = oracle("range.decode", count)
        except Refused:
            try:
                ids = oracle("idset.decode", count)
            except Refused:
                return None
            if len(ids) > expand:
                return None
            return ("values", tuple(ids))
    if not isinstance(count, dict):
        return None
    try:
        # Only a count RFC 14 allows means anything: a dictionary with '*' and operand 1, an
        # unknown key or a number past the oracle's limits is compared exactly, like a count
        # string the oracle refuses.
        oracle("count.values", {"count": count, "limit": 1})
    except Refused:
        return None
    operator, operand = count.get("operator", "+"), count.get("operand", 1)
    return _range_key(count["min"], count.get("max"), operator, operand, expand)


def _counts_alike(want: Any, got: Any, oracle: Oracle) -> bool:
    if json_equal(want, got):
        return True
    want_key = count_key(want, oracle)
    if want_key is None:
        return False
    # An answer's count is expanded no further than the expected one's values: a count with
    # more values cannot accept the same ones, and a large answer stays cheap to judge.
    expand = len(want_key[1]) if want_key[0] == "values" else _COUNT_EXPANSION
    return want_key == count_key(got, oracle, expand)


def _vertices_alike(
    want: Any, got: Any, oracle: Oracle, where: str, labels: dict[str, str] | None
) -> str | None:
    """Compare two resources lists; with ``labels``, record a label renaming instead."""
    if not isinstance(got, list) or not isinstance(want, list):
        return f"{where}: expected a list of vertices, got {type(got).__name__}"
    if len(got) != len(want):
        return f"{where}: expected {len(want)} vertices, got {len(got)}"
    for index, (w, g) in enumerate(zip(want, got, strict=True)):
        here = f"{where}[{index}]"
        if not isinstance(g, dict) or not isinstance(w, dict):
            return f"{here}: expected a vertex object, got {type(g).__name__}"
        if set(g) != set(w):
            missing, extra = sorted(set(w) - set(g)), sorted(set(g) - set(w))
            return f"{here}: keys differ (missing {missing}, unexpected {extra})"
        for key, value in w.items():
            if key == "count":
                if not _counts_alike(value, g[key], oracle):
                    return f"{here}.count: expected {value!r} or an equivalent, got {g[key]!r}"
            elif key == "with":
                reason = _vertices_alike(value, g[key], oracle, f"{here}.with", labels)
                if reason:
                    return reason
            elif key == "label" and labels is not None and isinstance(g[key], str):
                if labels.setdefault(value, g[key]) != g[key]:
                    return f"{here}.label: label {value!r} renamed inconsistently"
            elif not json_equal(value, g[key]):
                return f"{here}.{key}: expected {value!r}, got {g[key]!r}"
    return None


def shape_counts(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    """Resources lists alike, counts compared by meaning."""
    return _vertices_alike(expected, actual, oracle, "resources", None)


def jobspec_from_shape(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    """A valid jobspec alike to the expected one, labels renamed consistently."""
    if not isinstance(actual, dict) or not isinstance(expected, dict):
        return f"output is not a jobspec object but {type(actual).__name__}"
    try:
        oracle("jobspec.validate", actual)
    except Refused as exc:
        return f"output is not a valid jobspec: {exc.reason}"
    if set(actual) != set(expected):
        return f"top-level keys differ: expected {sorted(expected)}, got {sorted(actual)}"
    labels: dict[str, str] = {}
    reason = _vertices_alike(
        expected["resources"], actual["resources"], oracle, "resources", labels
    )
    if reason:
        return reason
    if len(set(labels.values())) != len(labels):
        return "two different labels were renamed to the same label"
    want_tasks, got_tasks = expected["tasks"], actual["tasks"]
    if len(got_tasks) != len(want_tasks):
        return f"expected {len(want_tasks)} tasks, got {len(got_tasks)}"
    for index, (w, g) in enumerate(zip(want_tasks, got_tasks, strict=True)):
        if set(g) != set(w):
            return f"tasks[{index}]: keys differ: expected {sorted(w)}, got {sorted(g)}"
        for key, value in w.items():
            if key == "slot":
                if labels.get(value, value) != g[key]:
                    return f"tasks[{index}].slot: expected the slot labelled {value!r}"
            elif not json_equal(value, g[key]):
                return f"tasks[{index}].{key}: expected {value!r}, got {g[key]!r}"
    for key in expected:
        if key not in ("resources", "tasks") and not json_equal(expected[key], actual[key]):
            return f"{key}: expected {expected[key]!r}, got {actual[key]!r}"
    return None
