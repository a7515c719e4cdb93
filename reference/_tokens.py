"""A small table-driven tokenizer for the reference's hand-written parsers.

A parser owns a table that names each token kind with a compiled regular expression.  The
tokenizer never decides on its own what comes next: the parser asks, at each point of its
grammar, whether a token of a given kind starts at the current position (:meth:`check`) and
then consumes it (:meth:`read`), or demands one (:meth:`expect`).  That keeps the lexing
context-sensitive exactly where a grammar needs it (a count after ``=`` is lexed differently
from a key inside braces) while each rule stays one small function.

Errors are :class:`~reference.errors.ParseError` (or a subclass the parser names) carrying the
source and the span of the offending text, so that messages show a caret under it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import NamedTuple, NoReturn

from flux_conformance.reference.errors import FormatError, ParseError

__all__ = ["Token", "Tokenizer"]


class Token(NamedTuple):
    """One token: its kind (a key of the table), its text and where it starts."""

    name: str
    text: str
    position: int

    @property
    def end(self) -> int:
        """The offset just past the token."""
        return self.position + len(self.text)


class Tokenizer:
    """Reads tokens from ``source`` on demand, using the named patterns in ``rules``."""

    def __init__(
        self,
        source: str,
        *,
        rules: Mapping[str, re.Pattern[str]],
        error: type[FormatError] = ParseError,
    ) -> None:
        self.source = source
        self.rules = rules
        self.error = error
        self.position = 0
        self._pending: Token | None = None

    def at_end(self) -> bool:
        """Whether every character has been consumed."""
        return self.position >= len(self.source)

    def peek_char(self) -> str:
        """Return the next raw character, or ``""`` at the end (for messages and dispatch)."""
        return self.source[self.position : self.position + 1]

    def check(self, name: str) -> bool:
        """Whether a token of kind ``name`` starts here; remember it for :meth:`read`."""
        pending = self._pending
        if pending is not None and pending.name == name:
            return True
        position = self.position
        match = self.rules[name].match(self.source, position)
        if match is None or match.end() == position:
            self._pending = None
            return False
        self._pending = Token(name, match.group(), position)
        return True

    def read(self) -> Token:
        """Consume the token found by the last successful :meth:`check`."""
        token = self._pending
        if token is None:  # pragma: no cover - a bug in the calling parser
            raise RuntimeError("read() without a successful check()")
        self.position = token.position + len(token.text)
        self._pending = None
        return token

    def accept(self, name: str) -> Token | None:
        """Consume and return a token of kind ``name`` if one starts here."""
        return self.read() if self.check(name) else None

    def expect(self, name: str, *, expected: str) -> Token:
        """Consume a token of kind ``name`` or fail, saying what was ``expected``."""
        if not self.check(name):
            self.fail(f"expected {expected}")
        return self.read()

    def fail(self, reason: str, *, start: int | None = None, end: int | None = None) -> NoReturn:
        """Raise the parser's error for the span ``start..end`` (default: here)."""
        begin = self.position if start is None else start
        stop = begin + 1 if end is None else end
        if begin >= len(self.source):
            reason = f"{reason}, found the end of the input"
        elif start is None:
            reason = f"{reason}, found {self.source[begin]!r}"
        raise self.error(reason, source=self.source, span=(begin, max(stop, begin + 1)))
