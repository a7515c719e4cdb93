"""Comparators: how an implementation's output is judged against a case's expectation.

Each operation names one comparator in its registration (``runner/schemas/operations``).
A comparator takes the expected output, the actual output and an *oracle* (the reference
implementation, used only to decode strings an encoder produced) and returns ``None`` when
the actual output conforms, or a one-line reason when it does not.

The comparators, documented where they are registered:

``exact``
    JSON equality: same types (``1`` is not ``1.0`` nor ``true``), same order in lists.
``idset_string``
    For ``idset.encode``: the output must be a string that strictly decodes (RFC 22) to
    the same set as the expected string.
``hostlist_string``
    For ``hostlist.encode``: the output must be a string that strictly decodes (RFC 29) to
    the same ordered list, duplicates included, as the expected string.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["COMPARATORS", "Comparator", "Oracle", "json_equal"]

#: Runs a reference operation: ``oracle("idset.decode", "1-3")`` -> ``[1, 2, 3]``.
#: Raises the reference's ``FormatError`` when the input is not acceptable.
Oracle = Callable[[str, Any], Any]

#: ``comparator(expected, actual, oracle)`` -> ``None`` or the reason they differ.
Comparator = Callable[[Any, Any, Oracle], str | None]


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


def _exact(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    del oracle
    return None if json_equal(expected, actual) else "output differs from the expected value"


def _decodes_alike(decoder: str, what: str) -> Comparator:
    def compare(expected: Any, actual: Any, oracle: Oracle) -> str | None:
        from reference.errors import FormatError

        if not isinstance(actual, str):
            return f"output is not a string but {type(actual).__name__}"
        try:
            got = oracle(decoder, actual)
        except FormatError as exc:
            return f"output {actual!r} is not a valid {what}: {exc.reason}"
        want = oracle(decoder, expected)
        if got != want:
            return f"output {actual!r} decodes to a different {what} than {expected!r}"
        return None

    compare.__name__ = f"_{decoder.replace('.', '_')}_alike"
    return compare


COMPARATORS: dict[str, Comparator] = {
    "exact": _exact,
    "idset_string": _decodes_alike("idset.decode", "idset"),
    "hostlist_string": _decodes_alike("hostlist.decode", "hostlist"),
}
