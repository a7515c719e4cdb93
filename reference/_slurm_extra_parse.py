"""Slurm ``--extra`` expressions: the parse tree, its parser, and its text and JSON forms.

The public names are re-exported by :mod:`flux_conformance.reference.slurm_extra`, whose
docstring states the syntax; this module holds the half of it that knows nothing about a node's
Extra.  The parser reads its tokens through the reference's shared
:class:`~flux_conformance.reference._tokens.Tokenizer`, asking at each point of the grammar
for the token kinds that may come there, and keeps an explicit stack of open parentheses so
that nesting depth costs memory, never recursion.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from flux_conformance.reference._tokens import Token, Tokenizer
from flux_conformance.reference.errors import InvalidError, LimitError, ParseError

__all__ = [
    "COMPARISONS",
    "MAX_LENGTH",
    "BooleanOp",
    "Group",
    "Leaf",
    "LengthError",
    "Node",
    "fold_tree",
    "node_from_json",
    "parse",
    "to_text",
]

#: Slurm's controller refuses a longer ``--extra`` string; it counts bytes (``strlen``), so
#: the reference counts the UTF-8 encoding, not characters.
MAX_LENGTH = 1024

#: The comparison operators of a leaf, in the order the documentation lists them.
COMPARISONS = ("=", "!=", ">", ">=", "<", "<=")

BooleanOp = Literal["and", "or"]


class LengthError(LimitError):
    """The expression is longer than :data:`MAX_LENGTH` bytes (category ``length``)."""

    category = "length"


# --------------------------------------------------------------------------------------------
# The tree


@dataclass(frozen=True)
class Leaf:
    """One request, ``key comparison value``, with key and value exactly as written."""

    key: str
    comparison: str
    value: str

    def to_json(self) -> dict[str, Any]:
        """Return the leaf as the ``slurm.extra.parse`` operation reports it."""
        return {"key": self.key, "comparison": self.comparison, "value": self.value}


@dataclass(frozen=True)
class Group:
    """Two or more terms joined by one kind of boolean operator (``and`` or ``or``)."""

    op: BooleanOp
    children: tuple[Node, ...]

    def to_json(self) -> dict[str, Any]:
        """Return the group, and everything below it, as ``slurm.extra.parse`` reports it."""
        return fold_tree(
            self,
            Leaf.to_json,
            lambda group, children: {"op": group.op, "children": children},
        )


Node = Leaf | Group

_T = TypeVar("_T")


def fold_tree(
    root: Node,
    on_leaf: Callable[[Leaf], _T],
    on_group: Callable[[Group, list[_T]], _T],
) -> _T:
    """Combine a tree bottom-up without recursion (trees may be deeper than the C stack).

    ``on_group`` receives a group and the results of its children, in order.
    """
    results: list[_T] = []
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if isinstance(node, Leaf):
            results.append(on_leaf(node))
        elif children_done:
            count = len(node.children)
            values = results[len(results) - count :]
            del results[len(results) - count :]
            results.append(on_group(node, values))
        else:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(node.children))
    return results[0]


def to_text(node: Node) -> str:
    """Write ``node`` as an expression that :func:`parse` reads back as the same tree.

    AND is written ``&``.  Only nested groups get parentheses.
    """

    def on_group(group: Group, children: list[tuple[str, bool]]) -> tuple[str, bool]:
        joiner = "&" if group.op == "and" else "|"
        parts = [f"({text})" if is_group else text for text, is_group in children]
        return joiner.join(parts), True

    text, _ = fold_tree(
        node, lambda leaf: (f"{leaf.key}{leaf.comparison}{leaf.value}", False), on_group
    )
    return text


#: Deepest tree :func:`node_from_json` accepts: far beyond what 1024 bytes of text can hold.
_MAX_JSON_DEPTH = 1024


def node_from_json(value: Any) -> Node:
    """Build a tree from its JSON form (the output of ``slurm.extra.parse``), checking it.

    Raises :class:`~reference.errors.InvalidError` for anything :func:`parse` could not have
    produced: unknown members, an unknown comparison, an empty or forbidden key or value, a
    group with fewer than two children.
    """
    # Depth-first with an explicit stack; each entry is (json, path, slot to fill).
    built: dict[int, Node] = {}
    pending: list[tuple[Any, tuple[str | int, ...], bool]] = [(value, (), False)]
    while pending:
        item, path, children_done = pending.pop()
        if len(path) > 2 * _MAX_JSON_DEPTH:
            raise LimitError("tree nested too deeply", path=path)
        if not isinstance(item, dict):
            raise InvalidError("a node must be an object", path=path)
        if "op" in item or "children" in item:
            if set(item) != {"op", "children"}:
                raise InvalidError("a group has exactly the members op and children", path=path)
            if item["op"] not in ("and", "or"):
                raise InvalidError("op must be 'and' or 'or'", path=path)
            children = item["children"]
            if not isinstance(children, list) or len(children) < 2:
                raise InvalidError("children must be a list of two or more nodes", path=path)
            if children_done:
                built[id(item)] = Group(item["op"], tuple(built[id(c)] for c in children))
            else:
                pending.append((item, path, True))
                pending.extend(
                    (child, (*path, "children", i), False) for i, child in enumerate(children)
                )
            continue
        if set(item) != {"key", "comparison", "value"}:
            raise InvalidError("a leaf has exactly the members key, comparison, value", path=path)
        key, comparison, text = item["key"], item["comparison"], item["value"]
        if comparison not in COMPARISONS:
            raise InvalidError(f"unknown comparison {comparison!r}", path=path)
        for what, part in (("key", key), ("value", text)):
            if not isinstance(part, str) or not part or _FORBIDDEN_IN_TERM.search(part):
                raise InvalidError(
                    f"{what} must be a non-empty string free of ,&|<>=!()", path=path
                )
        built[id(item)] = Leaf(key, comparison, text)
    return built[id(value)]


# --------------------------------------------------------------------------------------------
# Parsing

# The token table.  A leaf runs up to the next boolean character or parenthesis; a boolean
# operator is read as the whole run of boolean characters so that `&&` or `,&` is one (bad)
# operator rather than two.  The four kinds are disjoint by first character and together take
# every character, so whatever the grammar asks for, the text is cut the same way.
_RULES: dict[str, re.Pattern[str]] = {
    "open": re.compile(r"\("),
    "close": re.compile(r"\)"),
    "boolean": re.compile(r"[,&|]+"),
    "leaf": re.compile(r"[^,&|()]+"),
}
_BOOLEANS: dict[str, BooleanOp] = {"&": "and", ",": "and", "|": "or"}
_COMPARISON_RUN = re.compile(r"[<>=!]+")
_FORBIDDEN_IN_TERM = re.compile(r"[,&|<>=!()]")


@dataclass
class _Frame:
    """A sequence being read: the terms so far, its operator once seen, where it opened."""

    start: int
    terms: list[Node] = field(default_factory=list)
    op: BooleanOp | None = None

    def close(self) -> Node:
        # A lone term in parentheses is that term; Slurm's tree keeps a one-child level
        # there, which evaluates exactly like the child.
        if len(self.terms) == 1:
            return self.terms[0]
        return Group(self.op or "and", tuple(self.terms))


def parse(text: str) -> Node:
    """Parse an ``--extra`` expression into its tree.

    Grammar (EBNF; ``leaf`` and ``boolean`` are the tokens of the table above)::

        expression = sequence END
        sequence   = term { boolean term }      (one kind of boolean per sequence)
        term       = "(" sequence ")" | leaf
        leaf       = key comparison value

    Raises :class:`LengthError` beyond :data:`MAX_LENGTH` bytes, otherwise
    :class:`~reference.errors.ParseError` for any departure from the grammar.
    """
    _check_length(text)
    if "\x00" in text:
        # A C string ends at NUL, so Slurm can never be given one; refuse rather than guess.
        at = text.index("\x00")
        raise ParseError("NUL character in expression", source=text, span=(at, at + 1))
    return _parse_expression(Tokenizer(text, rules=_RULES))


def _check_length(text: str) -> None:
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_LENGTH:
        raise LengthError(
            f"expression is {size} bytes long; Slurm accepts at most {MAX_LENGTH}",
            span=(0, len(text)),
        )


def _fail(tokens: Tokenizer, reason: str) -> ParseError:
    """A syntax error spanning the token that starts here (or just past the end)."""
    source = tokens.source
    # Only an error's span reads the offending token, so any kind may be taken here.
    token = next((tokens.read() for kind in _RULES if tokens.check(kind)), None)
    span = (token.position, token.end) if token else (len(source), len(source) + 1)
    return ParseError(reason, source=source, span=span)


def _parse_expression(tokens: Tokenizer) -> Node:
    """``expression = sequence END`` with ``sequence`` and ``term`` unrolled onto a stack.

    The rules are mutually recursive (a term may be a parenthesised sequence); an explicit
    stack of open sequences replaces the recursion so that nesting depth costs memory only.
    ``want_term`` says which of the two positions of ``sequence`` we are at: before a term,
    or after one (where a boolean operator, a ``)`` or the end may come).
    """
    stack = [_Frame(start=0)]
    want_term = True
    while not tokens.at_end():
        frame = stack[-1]
        if want_term:
            if tokens.check("open"):
                stack.append(_Frame(start=tokens.read().position))
            elif tokens.check("leaf"):
                frame.terms.append(_parse_leaf(tokens.source, tokens.read()))
                want_term = False
            elif tokens.check("close"):
                raise _fail(tokens, "expected a request or '(' before ')'")
            else:
                raise _fail(tokens, "boolean operator without a request before it")
        elif tokens.check("boolean"):
            _parse_boolean(tokens.source, tokens.read(), frame)
            want_term = True
        elif tokens.check("close"):
            if len(stack) == 1:
                raise _fail(tokens, "')' without a matching '('")
            tokens.read()
            stack.pop()
            stack[-1].terms.append(frame.close())
        else:
            raise _fail(tokens, "expected a boolean operator (& , |) between requests")
    if want_term:
        raise _fail(tokens, "expected a request")
    if len(stack) > 1:
        opened = stack[-1].start
        raise ParseError("'(' is never closed", source=tokens.source, span=(opened, opened + 1))
    return stack[0].close()


def _parse_boolean(source: str, token: Token, frame: _Frame) -> None:
    """``boolean = "&" | "," | "|"``: exactly one character, the same kind across a level."""
    op = _BOOLEANS.get(token.text)
    if op is None:
        raise ParseError(
            f"{token.text!r} is not a boolean operator",
            source=source,
            span=(token.position, token.end),
        )
    if frame.op is not None and frame.op != op:
        raise ParseError(
            "AND and OR mixed at one level of parentheses",
            source=source,
            span=(token.position, token.end),
        )
    frame.op = op


def _parse_leaf(source: str, token: Token) -> Leaf:
    """``leaf = key comparison value``; the comparison is the first run of ``<>=!``."""
    text = token.text
    run = _COMPARISON_RUN.search(text)
    if run is None:
        raise ParseError(
            "request has no comparison operator", source=source, span=(token.position, token.end)
        )
    comparison = run.group()
    span = (token.position + run.start(), token.position + run.end())
    if comparison not in COMPARISONS:
        raise ParseError(f"{comparison!r} is not a comparison operator", source=source, span=span)
    key, value = text[: run.start()], text[run.end() :]
    if not key:
        raise ParseError("request has an empty key", source=source, span=span)
    if not value:
        raise ParseError("request has an empty value", source=source, span=span)
    # The run was the longest one, so the value starts with another character; a later
    # operator character inside the value (`a=b=c`) is not allowed.
    later = _COMPARISON_RUN.search(value)
    if later is not None:
        at = token.position + run.end() + later.start()
        raise ParseError(
            "operator character inside a value", source=source, span=(at, at + len(later.group()))
        )
    return Leaf(key, comparison, value)
