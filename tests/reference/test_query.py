"""Tests for flux_conformance.reference.query (RFC 35 query strings -> RFC 31 constraints)."""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_conformance.reference import query
from flux_conformance.reference.errors import InvalidError, LimitError, ParseError
from flux_conformance.reference.operations import run


def p(name: str) -> dict[str, Any]:
    return {"properties": [name]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("foo", p("foo")),
        ("a|b&c", {"or": [p("a"), {"and": [p("b"), p("c")]}]}),
        ("a|b c", {"or": [p("a"), {"and": [p("b"), p("c")]}]}),
        ("(a|-b)&c", {"and": [{"or": [p("a"), {"not": [p("b")]}]}, p("c")]}),
        ("not a b", {"and": [{"not": [p("a")]}, p("b")]}),
        ("host:foo[1-2] rank:3", {"and": [{"hostlist": ["foo[1-2]"]}, {"ranks": ["3"]}]}),
        ("ssd,gpu", {"properties": ["ssd", "gpu"]}),
        ("properties:'a b':c", {"properties": ["a b:c"]}),
        ("'or'", p("or")),
    ],
)
def test_compiles(text: str, expected: dict[str, Any]) -> None:
    assert query.parse(text) == expected


@pytest.mark.parametrize(
    ("text", "error", "message"),
    [
        ("-(a|b)", ParseError, "'-' negates a single term only (use 'not' for more), found '('"),
        ("(a", ParseError, "unclosed parenthesis\n    (a\n    ^"),
        ("a)", ParseError, "unbalanced parenthesis, found ')'"),
        ("a 'b", ParseError, "unclosed quote '\n    a 'b\n      ^^"),
        ("", ParseError, "the query is empty"),
        ("a &", ParseError, "expected a term, '(' or 'not', found the end of the input"),
        ("host:", ParseError, "a term needs an operand"),
        (
            "color:red",
            InvalidError,
            "unknown constraint operator 'color'\n    color:red\n    ^^^^^^^^^",
        ),
        ("x host:a[", InvalidError, "not a valid RFC 29 hostlist"),
        ("a!b", InvalidError, "property name 'a!b' contains !"),
    ],
)
def test_errors_carry_category_and_span(text: str, error: type[Exception], message: str) -> None:
    with pytest.raises(error) as info:
        query.parse(text)
    assert type(info.value) is error
    assert message in str(info.value)


@pytest.mark.parametrize(
    "text", ["(" * 100_000 + "a" + ")" * 100_000, "not " * 100_000 + "a", "(" * 100_000]
)
def test_deep_nesting_is_a_limit(text: str) -> None:
    with pytest.raises(LimitError):
        query.parse(text)


def test_nesting_at_the_limit_parses() -> None:
    depth = query.MAX_NESTING
    assert query.parse("(" * depth + "a" + ")" * depth) == p("a")


def test_operation_refuses_non_strings() -> None:
    with pytest.raises(InvalidError):
        run("constraint.parse_query", 5)


# -- property: rendering a tree and parsing it back gives an equivalent constraint ---------------

NAMES = ["a", "b", "c", "d"]

Tree = tuple[Any, ...]

leaf = st.sampled_from(NAMES).map(lambda n: ("term", n))
trees: st.SearchStrategy[Tree] = st.recursive(
    st.one_of(leaf, leaf.map(lambda t: ("neg", t[1]))),
    lambda kids: st.one_of(
        st.tuples(st.just("not"), kids),
        st.tuples(st.sampled_from(["and", "or"]), st.lists(kids, min_size=2, max_size=3)),
    ),
    max_leaves=10,
)

_AND = st.sampled_from([" ", "&", " && ", " and "])
_OR = st.sampled_from(["|", " || ", " or "])


def render(tree: Tree, draw: Any) -> str:
    kind = tree[0]
    if kind == "term":
        return str(tree[1])
    if kind == "neg":
        return f"-{tree[1]}"
    if kind == "not":
        return f"not ({render(tree[1], draw)})"
    joiner = draw(_AND if kind == "and" else _OR)
    return "(" + joiner.join(render(t, draw) for t in tree[1]) + ")"


def truth(tree: Tree, env: set[str]) -> bool:
    kind = tree[0]
    if kind == "term":
        return tree[1] in env
    if kind == "neg":
        return tree[1] not in env
    if kind == "not":
        return not truth(tree[1], env)
    parts = [truth(t, env) for t in tree[1]]
    return all(parts) if kind == "and" else any(parts)


def holds(obj: dict[str, Any], env: set[str]) -> bool:
    ((op, values),) = obj.items()
    if op == "properties":
        return all((v[1:] not in env) if v.startswith("^") else v in env for v in values)
    parts = [holds(v, env) for v in values]
    if op == "and":
        return all(parts)
    if op == "or":
        return any(parts)
    return not all(parts)


@given(trees, st.data())
def test_render_then_parse_is_equivalent(tree: Tree, data: st.DataObject) -> None:
    text = render(tree, data.draw)
    compiled = query.parse(text)
    for size in range(len(NAMES) + 1):
        for env in itertools.combinations(NAMES, size):
            assert holds(compiled, set(env)) == truth(tree, set(env)), (text, env)


@given(st.text(alphabet="ab()|&-' \"not:", max_size=20))
def test_arbitrary_text_never_crashes(text: str) -> None:
    with contextlib.suppress(ParseError, InvalidError):
        query.parse(text)
