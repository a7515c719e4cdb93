"""Strategies for RFC 31 constraints: objects to validate, and objects matched against an R.

A constraint is a tree: ``and``, ``or`` and ``not`` over lists (empty ones too), with leaves
``properties`` (names, ``^``-negated, legal and illegal), ``hostlist`` (RFC 29 strings in every
form, and with characters RFC 29 forbids) and ``ranks`` (RFC 22 strings, ids at the edges of
integer types among them).  Near-valid objects come from one change at most: an operator
RFC 31 does not define, two operators in one object, a value of the wrong type.  For
``constraint.match`` the names of the tree are drawn from the R it is matched against, so that
matches are neither all nor nothing.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from flux_conformance.runner.tools.strategies._common import (
    ID_EDGES,
    near_valid,
    sometimes,
    weighted,
)
from flux_conformance.runner.tools.strategies.rset import (
    FORBIDDEN_HOST_CHARACTERS,
    document,
    property_name,
    r_document,
    rank_model,
)

__all__ = ["constraint_match", "constraint_tree", "constraint_validate"]

#: Hostlist strings of every RFC 29 form, and a few RFC 29 forbids.
_HOSTLISTS = (
    "n0", "n[0-3]", "n[0,2]", "node[01-10]", "n[1-2]-ib", "rack1-n[0-1]", "n0,n1", "", "n[3-3]",
    "n[1,,2]", "n[2-1]", "x[4294967296]",
)  # fmt: skip
_RANKS = ("0", "0-3", "1,3", "", "[0-1]", "3-1", "0,0", "-1", "a")


@st.composite
def _leaf(draw: st.DrawFn, names: list[str], hosts: list[str], ranks: list[int]) -> Any:
    kind = draw(st.sampled_from(("properties", "hostlist", "ranks")))
    if kind == "properties":
        name = st.one_of(st.sampled_from(names), property_name()) if names else property_name()
        negated = st.builds(lambda caret, n: caret + n, st.sampled_from(("", "", "^")), name)
        return {"properties": draw(st.lists(negated, max_size=3))}
    if kind == "hostlist":
        bad = st.builds(
            lambda host, char: host[:1] + char + host[1:],
            st.sampled_from(hosts or ["h0"]),
            st.sampled_from(FORBIDDEN_HOST_CHARACTERS),
        )
        host = st.one_of(st.sampled_from(hosts), st.sampled_from(_HOSTLISTS), bad)
        return {
            "hostlist": draw(st.lists(host if hosts else st.sampled_from(_HOSTLISTS), max_size=2))
        }
    rank = st.one_of(
        st.sampled_from(ranks).map(str) if ranks else st.just("0"),
        st.sampled_from(ID_EDGES).map(str),
        st.sampled_from(_RANKS),
        near_valid(st.sampled_from(_RANKS), "0123456789,-[] "),
    )
    return {"ranks": draw(st.lists(rank, max_size=2))}


def _odd(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Objects that are not constraints, each one change away from one."""
    return st.one_of(
        inner.map(lambda c: {**c, "or": []} if isinstance(c, dict) else {"or": c}),
        inner.map(lambda c: {"nand": [c]}),
        st.sampled_from(
            (
                {"properties": "ssd"},
                {"hostlist": "n0"},
                {"ranks": [0]},
                {"and": {}},
                {"not": None},
                {"properties": [1]},
                [],
                "ssd",
                None,
            )
        ),
    )


def constraint_tree(
    names: list[str] | None = None,
    hosts: list[str] | None = None,
    ranks: list[int] | None = None,
) -> st.SearchStrategy[Any]:
    """Constraint objects over these names, hosts and ranks, nested and now and then odd."""
    leaf = _leaf(names or [], hosts or [], ranks or [])

    def node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        operator = st.sampled_from(("and", "or", "not"))
        return st.builds(lambda op, items: {op: items}, operator, st.lists(inner, max_size=3))

    return st.recursive(
        st.one_of(leaf, st.just({})),
        lambda inner: st.one_of(
            weighted(node(inner), _odd(inner)),
        ),
        max_leaves=5,
    )  # fmt: skip


def constraint_validate() -> st.SearchStrategy[Any]:
    """Constraint objects for ``constraint.validate``."""
    return constraint_tree(["ssd", "gpu", "amd-mi50@gpu"], ["n0", "n[1-2]"], [0, 1])


@st.composite
def _match(draw: st.DrawFn) -> dict[str, Any]:
    if sometimes(draw, 4):
        doc = draw(r_document())
        model: list[dict[str, Any]] = []
    else:
        model = draw(rank_model(max_ranks=5))
        doc = document(model, merge=draw(st.booleans()), form="joined")
    names = sorted({n for r in model for n in r["properties"]})
    hosts = [r["hostname"] for r in model]
    ranks = [r["rank"] for r in model]
    return {"constraint": draw(constraint_tree(names, hosts, ranks)), "R": doc}


def constraint_match() -> st.SearchStrategy[Any]:
    """``{constraint, R}`` for ``constraint.match``: names drawn from the R."""
    return _match()
