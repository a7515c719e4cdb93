"""JSON equality that tells ``1``, ``1.0`` and ``true`` apart (Python's ``==`` does not)."""

from __future__ import annotations

from typing import Any

__all__ = ["json_equal"]


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality that, unlike ``==``, tells ``1``, ``1.0`` and ``true`` apart."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int) and isinstance(b, int):
        return a == b
    if isinstance(a, float) or isinstance(b, float):
        return type(a) is type(b) and a == b
    if isinstance(a, str) or isinstance(b, str):
        return type(a) is type(b) and a == b
    if a is None or b is None:
        return a is b
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False
