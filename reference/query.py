"""RFC 35 constraint query strings, compiled to RFC 31 constraint objects.

A query is a series of terms ``operator:operand`` joined by boolean operators (RFC 35,
"Description").  This module implements the job-constraint dialect:

* the default operator (a term without ``operator:``) is ``properties``; ``host`` and
  ``hosts`` stand for ``hostlist`` and ``rank`` for ``ranks``; the full names work too, and
  any other operator is ``invalid`` (it would not make an RFC 31 constraint);
* a ``properties`` operand is split on commas (``ssd,gpu`` requires both), as flux-core does;
  ``hostlist`` and ``ranks`` operands are kept whole (commas belong to their own syntax);
* ``not`` binds tightest, then AND (``&``, ``&&``, ``and`` or mere whitespace), then OR
  (``|``, ``||``, ``or``), so ``a|b c`` is ``a | (b & c)`` (the reading; RFC 35's grammar
  leaves the precedence of juxtaposition open);
* ``-term`` negates one term (whitespace after ``-`` is allowed); ``-(...)``, ``-not`` and
  ``--a`` are syntax errors;
* keywords are lowercase whole words (``AND`` and ``andy`` are ordinary terms);
* single or double quotes, anywhere inside a term, protect whitespace and the reserved
  characters ``( ) | & : ' "``; a quoted colon does not separate operator from operand;
* an empty operand (``host:``, ``''``) is a syntax error, and so is an empty query.

Every term is checked as the RFC 31 leaf it becomes (property names, RFC 29 hostlists,
RFC 22 idsets), so a query that compiles is a valid constraint; such problems are ``invalid``,
grammar problems ``syntax``.  Nesting of parentheses and ``not`` deeper than
:data:`MAX_NESTING` is refused with ``limit``, and so is a query longer than
:data:`MAX_QUERY_LENGTH` characters: a query is typed on a command line, and each term
becomes an object of its own (a megabyte of ``a a a ...`` would be half a million of them).

Grammar (EBNF; whitespace may separate any two tokens)::

    query    = or_expr EOF
    or_expr  = and_expr { OR and_expr }
    and_expr = unary { [ AND ] unary }
    unary    = { NOT } primary
    primary  = "(" or_expr ")" | "-" WORD | WORD
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from flux_conformance.reference._tokens import Tokenizer
from flux_conformance.reference.constraint import compile_constraint
from flux_conformance.reference.errors import FormatError, InvalidError, LimitError, ParseError

__all__ = [
    "DEFAULT_OPERATOR",
    "MAX_NESTING",
    "MAX_QUERY_LENGTH",
    "OPERATIONS",
    "OPERATOR_ALIASES",
    "parse",
]

#: The operator of a term written without ``operator:``.
DEFAULT_OPERATOR = "properties"

#: Operator names a query may use, mapped to the RFC 31 operator they stand for.
OPERATOR_ALIASES = {
    "properties": "properties",
    "hostlist": "hostlist",
    "host": "hostlist",
    "hosts": "hostlist",
    "ranks": "ranks",
    "rank": "ranks",
}

#: Operands split into several values, and on what (flux-core's job-constraint dialect).
_SPLIT = {"properties": ","}

#: Deepest nesting of parentheses plus ``not`` accepted.
MAX_NESTING = 100

#: The longest query accepted, in characters (256 KiB).
MAX_QUERY_LENGTH = 256 * 1024

_KEYWORDS = frozenset({"and", "or", "not"})

_RULES = {
    "space": re.compile(r"[ \t\r\n\f\v]+"),
    "lparen": re.compile(r"\("),
    "rparen": re.compile(r"\)"),
    "and": re.compile(r"&&?"),
    "or": re.compile(r"\|\|?"),
    "negate": re.compile(r"-"),
    # A term: bare characters and quoted stretches, in any mix (``host:'a b'``).
    "word": re.compile(r"""(?:[^ \t\r\n\f\v()|&'"]|'[^']*'|"[^"]*")+"""),
}

Json = dict[str, Any]


@dataclass(frozen=True)
class _Word:
    """A term as written: its raw text, where it starts, and whether it is a keyword."""

    text: str
    position: int

    @property
    def keyword(self) -> str | None:
        return self.text if self.text in _KEYWORDS else None


class _Parser:
    """One parse of one query: the tokenizer plus the nesting counter."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.tokens = Tokenizer(source, rules=_RULES)
        self.nesting = 0
        # The first term that parsed but means nothing (unknown operator, bad hostlist ...).
        # It is raised only once the whole query has parsed: a query with a syntax error is
        # a syntax error, whatever its terms say.
        self.deferred: FormatError | None = None

    # -- token helpers ----------------------------------------------------------------------

    def _skip_space(self) -> None:
        self.tokens.accept("space")

    def _peek_word(self) -> _Word | None:
        self._skip_space()
        found = _RULES["word"].match(self.source, self.tokens.position)
        return None if found is None else _Word(found.group(), found.start())

    def _peek_keyword(self, name: str) -> bool:
        word = self._peek_word()
        return word is not None and word.keyword == name

    def _read_word(self) -> _Word:
        token = self.tokens.expect("word", expected="a term")
        return _Word(token.text, token.position)

    def _enter(self, position: int) -> None:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            raise LimitError(
                f"query nested deeper than {MAX_NESTING} levels",
                source=self.source,
                span=(position, position + 1),
            )

    def _fail(self, reason: str) -> NoReturn:
        """Raise a syntax error at the next token; an unclosed quote is named as such."""
        self._skip_space()
        char = self.tokens.peek_char()
        if char in ("'", '"'):
            start = self.tokens.position
            self.tokens.fail(f"unclosed quote {char}", start=start, end=len(self.source))
        self.tokens.fail(reason)

    # -- grammar rules --------------------------------------------------------------------------

    def parse_query(self) -> Json:
        """Parse ``query = or_expr EOF``."""
        self._skip_space()
        if self.tokens.at_end():
            raise ParseError("the query is empty", source=self.source, span=(0, 1))
        result = self.parse_or()
        self._skip_space()
        if not self.tokens.at_end():
            if self.tokens.check("rparen"):
                self._fail("unbalanced parenthesis")
            self._fail("expected an operator or the end of the query")
        if self.deferred is not None:
            raise self.deferred
        return result

    def parse_or(self) -> Json:
        """Parse ``or_expr = and_expr { OR and_expr }``."""
        parts = [self.parse_and()]
        while True:
            self._skip_space()
            if self.tokens.accept("or") is None:
                if not self._peek_keyword("or"):
                    break
                self._read_word()
            parts.append(self.parse_and())
        return parts[0] if len(parts) == 1 else {"or": parts}

    def parse_and(self) -> Json:
        """Parse ``and_expr = unary { [ AND ] unary }``."""
        parts = [self.parse_unary()]
        while True:
            self._skip_space()
            if self.tokens.accept("and") is not None:
                parts.append(self.parse_unary())
                continue
            word = self._peek_word()
            if word is not None and word.keyword == "and":
                self._read_word()
                parts.append(self.parse_unary())
                continue
            if word is not None and word.keyword == "or":
                break
            if word is not None or self.tokens.check("lparen") or self.tokens.check("negate"):
                # Juxtaposition: terms separated by whitespace are joined by AND.
                parts.append(self.parse_unary())
                continue
            break
        return parts[0] if len(parts) == 1 else {"and": parts}

    def parse_unary(self) -> Json:
        """Parse ``unary = { NOT } primary``."""
        starts: list[int] = []
        while True:
            word = self._peek_word()
            if word is None or word.keyword != "not":
                break
            self._read_word()
            self._enter(word.position)
            starts.append(word.position)
        result = self.parse_primary()
        for _ in starts:
            result = {"not": [result]}
        self.nesting -= len(starts)
        return result

    def parse_primary(self) -> Json:
        """Parse ``primary = "(" or_expr ")" | "-" WORD | WORD``."""
        self._skip_space()
        opening = self.tokens.accept("lparen")
        if opening is not None:
            self._enter(opening.position)
            self._skip_space()
            if self.tokens.check("rparen"):
                self._fail("empty parentheses")
            inner = self.parse_or()
            self._skip_space()
            if self.tokens.accept("rparen") is None:
                if self.tokens.at_end():
                    raise ParseError(
                        "unclosed parenthesis",
                        source=self.source,
                        span=(opening.position, opening.position + 1),
                    )
                self._fail("expected ')'")
            self.nesting -= 1
            return inner
        negate = self.tokens.accept("negate")
        word = self._peek_word()
        if negate is not None and word is not None and word.text.startswith("-"):
            self._fail("'-' negates a single term only")
        if word is None or word.keyword is not None:
            if negate is not None:
                self._fail("'-' negates a single term only (use 'not' for more)")
            self._fail("expected a term, '(' or 'not'")
        self._read_word()
        term = self.parse_term(word)
        return {"not": [term]} if negate is not None else term

    def parse_term(self, word: _Word) -> Json:
        """Parse ``term = [ operator ":" ] operand``: remove quotes, check the values."""
        operator: str | None = None
        text: list[str] = []
        quote: str | None = None
        for char in word.text:
            if quote is not None:
                if char == quote:
                    quote = None
                else:
                    text.append(char)
            elif char in ("'", '"'):
                quote = char
            elif char == ":" and operator is None:
                operator = "".join(text)
                text = []
            else:
                text.append(char)
        operand = "".join(text)
        span = (word.position, word.position + len(word.text))
        if not operand:
            raise ParseError("a term needs an operand", source=self.source, span=span)
        if operator is None:
            name = DEFAULT_OPERATOR
        elif operator not in OPERATOR_ALIASES:
            self._defer(
                InvalidError(
                    f"unknown constraint operator {operator!r}", source=self.source, span=span
                )
            )
            return {}
        else:
            name = OPERATOR_ALIASES[operator]
        values = operand.split(_SPLIT[name]) if name in _SPLIT else [operand]
        term: Json = {name: values}
        try:
            compile_constraint(term)
        except FormatError as exc:
            category = LimitError if isinstance(exc, LimitError) else InvalidError
            self._defer(category(exc.reason, source=self.source, span=span))
        return term

    def _defer(self, error: FormatError) -> None:
        if self.deferred is None:
            self.deferred = error


def parse(query: str) -> Json:
    """Compile an RFC 35 query string into an RFC 31 constraint object."""
    if not isinstance(query, str):
        raise InvalidError("a constraint query must be a string")
    if len(query) > MAX_QUERY_LENGTH:
        raise LimitError(
            f"the query is {len(query)} characters long; the limit is {MAX_QUERY_LENGTH}"
        )
    return _Parser(query).parse_query()


def _op_parse_query(value: Any, *, edition: str) -> Json:
    del edition
    return parse(value)


OPERATIONS: dict[str, Callable[..., Any]] = {
    "constraint.parse_query": _op_parse_query,
}
