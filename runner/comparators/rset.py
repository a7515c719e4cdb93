"""Comparators of RFC 20 R documents: ``rset_decoded`` and ``rset_document``.

Both are documented in :mod:`runner.comparators`.
"""

from __future__ import annotations

from typing import Any

from flux_conformance.runner.comparators._json import json_equal
from flux_conformance.runner.comparators._oracle import Comparator, Oracle, Refused

__all__ = ["rset_alike"]


def _first_difference(want: list[Any], got: list[Any]) -> str:
    for w, g in zip(want, got, strict=False):
        if not json_equal(w, g):
            return f"expected {w!r}, got {g!r}"
    if len(want) != len(got):
        return f"expected {len(want)} ranks, got {len(got)}"
    return "they differ"  # pragma: no cover - only reached when the lists are equal


def rset_alike(*, times: bool) -> Comparator:
    """``rset_decoded`` (``times`` false) or ``rset_document``."""

    def compare(expected: Any, actual: Any, oracle: Oracle) -> str | None:
        try:
            got = oracle("R.decode", actual)
        except Refused as exc:
            return f"output is not a valid R: {exc}"
        want = oracle("R.decode", expected)
        if not json_equal(want, got):
            return f"output decodes to a different resource set: {_first_difference(want, got)}"
        if times:
            for key in ("starttime", "expiration"):
                w = expected.get("execution", {}).get(key)
                g = actual.get("execution", {}).get(key)
                if (w is None) != (g is None) or (w is not None and w != g):
                    return f"execution.{key} is {g!r}, expected {w!r}"
        return None

    compare.__name__ = "_rset_document" if times else "_rset_decoded"
    return compare
