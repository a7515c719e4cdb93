"""Comparators of validators' outputs: ``validation`` and ``validation_warnings``.

Both are documented in :mod:`runner.comparators`.
"""

from __future__ import annotations

from typing import Any

from flux_conformance.runner.comparators._oracle import Oracle

__all__ = ["validation", "validation_warnings"]


def validation(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    """An object with exactly a list of string warnings."""
    del expected, oracle
    if not isinstance(actual, dict) or set(actual) != {"warnings"}:
        return "output is not an object with exactly the key 'warnings'"
    warnings = actual["warnings"]
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        return "'warnings' is not a list of strings"
    return None


def validation_warnings(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    """As ``validation``; warnings present exactly when expected."""
    reason = validation(expected, actual, oracle)
    if reason is not None:
        return reason
    want = bool(expected.get("warnings")) if isinstance(expected, dict) else False
    got = bool(actual["warnings"])
    if want and not got:
        return "expected at least one warning, got none"
    if got and not want:
        return f"expected no warnings, got {actual['warnings']!r}"
    return None
