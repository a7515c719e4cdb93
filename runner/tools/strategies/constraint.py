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
    ILLEGAL_PROPERTIES,
    document,
    r_document,
    rank_model,
)

__all__ = ["constraint_match", "constraint_tree", "constraint_validate"]

#: Hostlist strings of every RFC 29 form, and near-valid ones.
_HOSTLISTS = ("n0", "n[0-3]", "n[0,2]", "node[01-10]", "n[1-2]-ib", "rack1-n[0-1]", "n0,n1")
_ODD_HOSTLISTS = ("", "n[3-3]", "n[1,,2]", "n[2-1]", "x[4294967296]")
_RANKS = ("0", "0-3", "1,3")
_ODD_RANKS = ("", "[0-1]", "3-1", "0,0", "-1", "a")
#: Which edges the leaves of one tree go to: none, one kind only, or all of them (as for R,
#: one kind alone is the common case, so that one refused edge does not hide another).
_EDGE_KINDS = ("none", "hostlist", "ranks", "properties", "all")


def _edged(
    kind: str, edge: str, good: st.SearchStrategy[Any], odd: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """Values of a tree of ``kind``, odd ones half the time where ``edge`` is its kind.

    There ``odd`` comes first, as hypothesis draws the first branch most; in a tree of all
    edges, one time in eight.
    """
    if kind == edge:
        return st.one_of(odd, good)
    return weighted(good, odd, 8) if kind == "all" else good


def _leaf(kind: str, names: list[str], hosts: list[str], ranks: list[int]) -> Any:
    """Leaves of a tree whose edges are of ``kind`` (:data:`_EDGE_KINDS`)."""
    good_name = st.sampled_from(names) if names else st.sampled_from(("ssd", "gpu"))
    name = _edged(kind, "properties", good_name, st.sampled_from(ILLEGAL_PROPERTIES))
    negated = st.builds(lambda caret, n: caret + n, st.sampled_from(("", "", "^")), name)
    good_host = st.sampled_from(hosts + list(_HOSTLISTS))
    bad_host = st.one_of(
        st.builds(
            lambda host, char: host[:1] + char + host[1:],
            st.sampled_from(hosts or ["h0"]),
            st.sampled_from(FORBIDDEN_HOST_CHARACTERS),
        ),
        st.sampled_from(_ODD_HOSTLISTS),
    )
    host = _edged(kind, "hostlist", good_host, bad_host)
    good_rank = st.sampled_from([str(r) for r in ranks] + list(_RANKS))
    odd_rank = st.one_of(
        st.sampled_from(ID_EDGES).map(str),
        st.sampled_from(_ODD_RANKS),
        near_valid(st.sampled_from(_RANKS), "0123456789,-[] "),
    )
    rank = _edged(kind, "ranks", good_rank, odd_rank)
    # Leaves of the tree's own kind of edge are never empty, or the edge would be rare.
    at_least = {key: 1 if key == kind else 0 for key in ("properties", "hostlist", "ranks")}
    leaves = {
        key: st.builds(
            lambda items, key=key: {key: items},
            st.lists(item, min_size=at_least[key], max_size=size),
        )
        for key, item, size in (
            ("properties", negated, 3),
            ("hostlist", host, 2),
            ("ranks", rank, 2),
        )
    }
    # A tree with one kind of edge has mostly leaves of that kind.
    any_leaf = st.one_of(*leaves.values())
    return st.one_of(leaves[kind], any_leaf) if kind in leaves else any_leaf


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

    def node(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        operator = st.sampled_from(("and", "or", "not"))
        return st.builds(lambda op, items: {op: items}, operator, st.lists(inner, max_size=3))

    trees: dict[str, st.SearchStrategy[Any]] = {}

    def tree(kind: str) -> st.SearchStrategy[Any]:
        if kind not in trees:
            trees[kind] = _tree(kind)
        return trees[kind]

    def _tree(kind: str) -> st.SearchStrategy[Any]:
        return st.recursive(
            st.one_of(_leaf(kind, names or [], hosts or [], ranks or []), st.just({})),
            lambda inner: weighted(node(inner), _odd(inner)),
            max_leaves=5,
        )

    return st.sampled_from(_EDGE_KINDS).flatmap(tree)


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
