"""The request a jobspec makes of an R pool, read into the units the division check places.

RFC 14 (Resources) nests vertices; an R holds ranks (nodes), cores and GPUs only, so a request
the checks can judge is a list of top-level vertices of three kinds (RFC 14, Reserved Resource
Types > slot, and Resources > exclusive):

``node``
    ``count`` nodes outside any slot; on each, every ``group`` (slots below the node, or the
    node's own cores and GPUs, which count no slot).  ``exclusive``: the node is taken whole
    (``exclusive: true``, or a bare node).
``slot``
    ``count`` slots of cores and GPUs, each on one node (the readings); a core or GPU at the
    top, outside any slot, is one such unit that counts no slot.
``slot-nodes``
    ``count`` slots of ``nodes`` nodes each; a node inside a slot is exclusive unless it says
    ``exclusive: false``, and then holds the slot's cores and GPUs.

Each count is read by :func:`counts.read_count`.  Anything else (another resource type, a slot
inside a slot, a slot with neither cores nor GPUs, a count the oracle cannot read) leaves the
request unread (None): its allocation is then judged by the other checks only.
"""

from __future__ import annotations

from typing import Any

from flux_conformance.runner.comparators._oracle import Oracle
from flux_conformance.runner.comparators.allocation.counts import read_count

__all__ = ["read_request"]

_ONE = {"values": [1]}


class _Unread(Exception):
    """The request is not one the division check judges."""


def _count(vertex: Any, oracle: Oracle) -> dict[str, Any]:
    found = read_count(vertex.get("count"), oracle)
    if found is None:
        raise _Unread
    return found


def _leaves(children: Any, oracle: Oracle) -> dict[str, Any]:
    """The core and gpu counts of a list of leaf vertices (None where absent)."""
    found: dict[str, Any] = {"core": None, "gpu": None}
    for child in children:
        kind = child.get("type")
        if kind not in found or found[kind] is not None or "with" in child:
            raise _Unread
        found[kind] = _count(child, oracle)
    return found


def _unit(leaves: dict[str, Any]) -> dict[str, Any]:
    if leaves["core"] is None and leaves["gpu"] is None:
        raise _Unread
    return leaves


def _node(vertex: dict[str, Any], oracle: Oracle) -> dict[str, Any]:
    children = vertex.get("with", [])
    own = [c for c in children if c.get("type") != "slot"]
    groups = [
        {"slot": True, "count": _count(child, oracle)}
        | _unit(_leaves(child.get("with", []), oracle))
        for child in children
        if child.get("type") == "slot"
    ]
    if own:
        groups.append({"slot": False, "count": _ONE} | _unit(_leaves(own, oracle)))
    exclusive = vertex.get("exclusive") is True or not children
    return {
        "kind": "node",
        "count": _count(vertex, oracle),
        "exclusive": exclusive,
        "groups": groups,
    }


def _slot(vertex: dict[str, Any], oracle: Oracle) -> dict[str, Any]:
    children = vertex.get("with", [])
    nodes = [c for c in children if c.get("type") == "node"]
    if not nodes:
        return {"kind": "slot", "count": _count(vertex, oracle), "slot": True} | _unit(
            _leaves(children, oracle)
        )
    if len(children) != 1:
        raise _Unread
    (node,) = nodes
    leaves = _leaves(node.get("with", []), oracle)
    exclusive = node.get("exclusive", True) is not False
    if not exclusive:
        _unit(leaves)
    return {
        "kind": "slot-nodes",
        "count": _count(vertex, oracle),
        "nodes": _count(node, oracle),
        "exclusive": exclusive,
    } | leaves


def read_request(jobspec: Any, oracle: Oracle) -> list[dict[str, Any]] | None:
    """The jobspec's top-level vertices as units to place (None: not a request judged here)."""
    try:
        out = []
        for vertex in jobspec["resources"]:
            kind = vertex.get("type")
            if kind == "node":
                out.append(_node(vertex, oracle))
            elif kind == "slot":
                out.append(_slot(vertex, oracle))
            elif kind in ("core", "gpu"):
                out.append(
                    {"kind": "slot", "count": _ONE, "slot": False}
                    | _unit(_leaves([vertex], oracle))
                )
            else:
                raise _Unread
        return out or None
    except (_Unread, KeyError, TypeError, AttributeError):
        return None
