"""Strategies for RFC 35 constraint query strings and RFC 46 shapes."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from flux_conformance.runner.tools.strategies._common import near_valid, small

__all__ = ["parse_query", "shape_parse", "shape_text"]

# -- RFC 35 query strings ----------------------------------------------------------------------

_query_term = st.one_of(
    st.sampled_from(("a", "ssd", "gpu", "a,b", "^a", "'a b'", '"x"')),
    st.sampled_from(
        (
            "host:node[1-2]",
            "hosts:n1",
            "hostlist:a",
            "rank:0-3",
            "ranks:1",
            "properties:a,b",
            "foo:x",
        )
    ),
)
_query_expression = st.recursive(
    st.builds(lambda neg, term: neg + term, st.sampled_from(("", "", "-")), _query_term),
    lambda inner: st.one_of(
        st.builds(
            lambda a, op, b: a + op + b,
            inner,
            st.sampled_from((" ", "&", " && ", " and ", "|", " || ", " or ")),
            inner,
        ),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"not {e}"),
    ),
    max_leaves=5,
)


def parse_query() -> st.SearchStrategy[Any]:
    """RFC 35 query strings: terms, operators and groups, with up to two edits."""
    return near_valid(_query_expression, "()&|-'\" :,^")


# -- RFC 46 shapes -----------------------------------------------------------------------------


def _shape_vertex(child: st.SearchStrategy[str] | None) -> st.SearchStrategy[str]:
    count = st.one_of(st.just(""), small.map(lambda n: f"={n}"), st.just("=2-4"), st.just("=1+"))
    items = st.one_of(
        st.just(""),
        st.sampled_from(("{x}", "{-x}", "{+x}", "{label}", "{unit:01}", "{a:1,b:true}", "{}")),
    )
    kind = st.sampled_from(("node", "socket", "core", "gpu", "slot", "SLOT"))
    tail = st.just("") if child is None else st.one_of(st.just(""), child.map(lambda c: "/" + c))
    return st.builds(lambda k, c, i, t: k + c + i + t, kind, count, items, tail)


def shape_text() -> st.SearchStrategy[str]:
    """RFC 46 shape text: vertices, counts, braces and brackets, with up to two edits."""
    text = st.recursive(
        _shape_vertex(None),
        lambda inner: st.one_of(
            _shape_vertex(inner),
            st.lists(inner, min_size=2, max_size=3).map(lambda vs: "[" + ";".join(vs) + "]"),
        ),
        max_leaves=4,
    )
    return near_valid(text, "[];/{}=,: x")


def shape_parse() -> st.SearchStrategy[Any]:
    """``{shape}`` for ``shape.parse``."""
    return st.fixed_dictionaries({"shape": shape_text()})
