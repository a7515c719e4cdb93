"""The one error hierarchy of the reference implementation.

Every error the reference raises on bad input is a :class:`FormatError`, and every
:class:`FormatError` names a *category*: the short, stable word that a conformance case
asserts (``syntax``, ``invalid``, ``limit`` ...).  Messages are for people and may change;
categories are part of the contract.

An error carries the text it was about (``source``), the character span that is wrong
(``span``, a half-open ``(start, end)`` pair) and, for structured documents, a JSON
``path`` (a tuple of keys and indexes).  ``str(error)`` renders all of that, with a caret
line under the offending text when there is one.  Messages stay short whatever the input:
a reason longer than :data:`MAX_REASON` characters keeps its start and its end, and a long
source is shown as a window around the span.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

__all__ = [
    "FormatError",
    "InvalidError",
    "LimitError",
    "ParseError",
    "format_path",
]


def format_path(path: Sequence[str | int]) -> str:
    """Render a JSON path the way people write it: ``resources[0].with[1].count``."""
    out: list[str] = []
    for part in path:
        if isinstance(part, int):
            out.append(f"[{part}]")
        elif out:
            out.append(f".{part}")
        else:
            out.append(part)
    return "".join(out) or "(top level)"


#: The longest reason kept: a reason may quote the input, and an input may be megabytes long.
MAX_REASON = 500


def _cut(reason: str) -> str:
    """``reason``, or its start and end around a note of how much was left out."""
    if len(reason) <= MAX_REASON:
        return reason
    head, tail = reason[: MAX_REASON - 100], reason[-60:]
    return f"{head}... ({len(reason) - len(head) - len(tail)} characters left out) ...{tail}"


class FormatError(ValueError):
    """Base class: the input is not acceptable, for the reason and category given."""

    category: ClassVar[str] = "invalid"

    def __init__(
        self,
        reason: str,
        *,
        source: str | None = None,
        span: tuple[int, int] | None = None,
        path: Sequence[str | int] = (),
    ) -> None:
        self.reason = _cut(reason)
        self.source = source
        self.span = span
        self.path = tuple(path)
        super().__init__(self._render())

    def _render(self) -> str:
        head = self.reason
        if self.path:
            head = f"{format_path(self.path)}: {head}"
        if self.source is None or self.span is None:
            return head
        start, end = self.span
        if len(self.source) > 200:
            # Show a window around the problem rather than a huge line.
            lo = max(0, start - 60)
            hi = min(len(self.source), max(end, start + 1) + 60)
            before = "..." if lo else ""
            after = "..." if hi < len(self.source) else ""
            text = before + self.source[lo:hi] + after
            start, end = start - lo + (3 if lo else 0), end - lo + (3 if lo else 0)
        else:
            text = self.source
        caret = " " * start + "^" * max(1, end - start)
        return f"{head}\n    {text}\n    {caret}"

    def with_path(self, prefix: Sequence[str | int]) -> FormatError:
        """Return a copy of this error whose path is prefixed by ``prefix``."""
        return type(self)(
            self.reason, source=self.source, span=self.span, path=(*prefix, *self.path)
        )


class ParseError(FormatError):
    """The text does not follow the grammar (category ``syntax``)."""

    category = "syntax"


class InvalidError(FormatError):
    """The input is well-formed but breaks a rule of the spec (category ``invalid``)."""

    category = "invalid"


class LimitError(FormatError):
    """The input is acceptable in principle but exceeds a documented limit (``limit``)."""

    category = "limit"
