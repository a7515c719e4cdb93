"""RFC 20 resource sets: the typed values of an R document, each checked with its path.

Part of :mod:`flux_conformance.reference.rset`: the small readers that every part of an R
uses (an object, an array, a string, an idset, a time), each refusing a value of the wrong
type with an :class:`InvalidError` that names where it stands.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from flux_conformance.reference._rset_model import Number, Path
from flux_conformance.reference.errors import FormatError, InvalidError, LimitError, format_path
from flux_conformance.reference.idset import IdSet

__all__ = [
    "_array",
    "_check_times",
    "_fail",
    "_idset",
    "_is_number",
    "_json_type",
    "_object",
    "_string",
    "_time",
    "_unknown_keys",
]


def _fail(reason: str, path: Path) -> InvalidError:
    return InvalidError(reason, path=path)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _idset(value: Any, path: Path, what: str) -> IdSet:
    """Decode an RFC 22 string inside a document: bad text makes the document invalid."""
    if not isinstance(value, str):
        raise _fail(f"{what} must be an RFC 22 idset string, not {_json_type(value)}", path)
    try:
        return IdSet.decode(value)
    except LimitError as exc:
        raise exc.with_path(path) from None
    except FormatError as exc:
        raise _fail(f"{what} is not a valid RFC 22 idset: {exc.reason}", path) from None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _object(value: Any, path: Path, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _fail(f"{what} must be an object, not {_json_type(value)}", path)
    return value


def _array(value: Any, path: Path, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise _fail(f"{what} must be an array, not {_json_type(value)}", path)
    return value


def _string(value: Any, path: Path, what: str) -> str:
    if not isinstance(value, str):
        raise _fail(f"{what} must be a string, not {_json_type(value)}", path)
    return value


def _unknown_keys(
    obj: Mapping[str, Any], known: Iterable[str], path: Path, warnings: list[str]
) -> None:
    allowed = set(known)
    for key in obj:
        if key not in allowed:
            where = format_path((*path, key))
            warnings.append(f"{where}: key reserved for future extensions; ignored")


def _check_times(
    start: Number | None, end: Number | None, path: Path, *, zero_unset: bool = False
) -> None:
    """Refuse an expiration that is not later than the starttime.

    Since RFC 20 ``e775b80`` (``zero_unset``) a time of 0 means "unset", so it bounds nothing.
    Before, the text gave 0 no meaning; the one exception the reference makes is flux-core's
    encoding of an R without times, both set to 0.
    """
    if zero_unset:
        start = None if start == 0 else start
        end = None if end == 0 else end
    if start is not None and end is not None and not end > start and (start, end) != (0, 0):
        raise _fail("expiration must be later than starttime", path)


def _time(value: Any, path: Path, what: str) -> Number:
    if not _is_number(value) or not math.isfinite(value):
        raise _fail(f"{what} must be a number of seconds since the epoch", path)
    if value < 0:
        raise _fail(f"{what} may not be negative", path)
    number: Number = value
    return number
