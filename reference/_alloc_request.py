"""Reading a jobspec's resources as allocation requests (part of :mod:`.allocate`).

RFC 14's resource graph is read into the few shapes an R pool (nodes, cores and GPUs: RFC 20,
Execution) can hold: nodes outside slots (:class:`NodeRequest`), slots below node level
(:class:`SlotGroup`) and slots of whole nodes (:class:`SlotOfNodes`).  Anything else (a
``socket`` or ``memory`` vertex, a node inside a node, a slot inside a slot, anything inside a
core or GPU) can never be met from such a pool, so it is refused here as ``unsatisfiable``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.ranges import Count, parse_count

__all__ = [
    "Demand",
    "NodeRequest",
    "Path",
    "Request",
    "SlotGroup",
    "SlotOfNodes",
    "UnsatisfiableError",
    "least",
    "read_vertex",
]


class UnsatisfiableError(FormatError):
    """The pool can never satisfy the request, even with nothing allocated."""

    category = "unsatisfiable"


# ---------------------------------------------------------------------------------------------
# The request, read from the jobspec's resources.


@dataclass(frozen=True)
class Demand:
    """Cores and GPUs one unit asks for on one node (``None``: no such vertex)."""

    cores: Count | None
    gpus: Count | None

    @property
    def fixed(self) -> bool:
        """Each count has one acceptable value only: nothing is left to choose."""
        return all(count is None or count.min == count.max for count in (self.cores, self.gpus))

    @property
    def least(self) -> tuple[int, int]:
        """The fewest cores and GPUs one unit accepts (its counts' minimums)."""
        return (
            0 if self.cores is None else self.cores.min,
            0 if self.gpus is None else self.gpus.min,
        )


@dataclass(frozen=True)
class SlotGroup:
    """``count`` slots, each holding ``demand`` on one node (a slot below node level)."""

    count: Count
    demand: Demand
    slot: bool  # False: a node's own core/gpu vertices, outside any slot (no slot counted)


@dataclass(frozen=True)
class NodeRequest:
    """A node vertex outside any slot: ``count`` nodes, each holding every group."""

    count: Count
    exclusive: bool
    groups: tuple[SlotGroup, ...]


@dataclass(frozen=True)
class SlotOfNodes:
    """A slot above node level: ``count`` slots of ``nodes`` nodes each."""

    count: Count
    nodes: Count
    exclusive: bool  # nodes inside a slot are exclusive unless they say otherwise
    demand: Demand


Request = NodeRequest | SlotGroup | SlotOfNodes

_R_TYPES = ("node", "slot", "core", "gpu")

Path = tuple[str | int, ...]


def _never(reason: str, path: Path) -> UnsatisfiableError:
    return UnsatisfiableError(reason, path=path)


def _count(vertex: dict[str, Any], edition: str) -> Count:
    return parse_count(vertex["count"], edition=edition)


def _within(children: Sequence[dict[str, Any]], path: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [((*path, "with", index), child) for index, child in enumerate(children)]


def _demand(children: Sequence[tuple[Path, dict[str, Any]]], edition: str) -> Demand:
    """The cores and GPUs of a slot or node: at most one core and one gpu vertex, leaves."""
    found: dict[str, Count] = {}
    for where, child in children:
        kind = child["type"]
        if kind == "node":
            raise _never("an R holds no node inside a node", where)
        if kind not in ("core", "gpu"):
            raise _never(f"an R holds no {kind!r} at this level", where)
        if "with" in child:
            raise _never(f"an R holds nothing inside a {kind}", (*where, "with"))
        if kind in found:
            raise _never(f"two {kind} vertices side by side name no distinct resources", where)
        found[kind] = _count(child, edition)
    return Demand(found.get("core"), found.get("gpu"))


def read_vertex(vertex: dict[str, Any], path: Path, edition: str) -> Request:
    kind = vertex["type"]
    if kind not in _R_TYPES:
        raise _never(f"an R pool holds no {kind!r} resources, only nodes, cores and GPUs", path)
    children: list[dict[str, Any]] = vertex.get("with", [])
    if kind == "node":
        groups: list[SlotGroup] = []
        own = [(p, c) for p, c in _within(children, path) if c["type"] != "slot"]
        for index, child in enumerate(children):
            if child["type"] == "slot":
                demand = _slot_demand(child, (*path, "with", index), edition)
                if not isinstance(demand, Demand):
                    raise _never("an R holds no node inside a node", (*path, "with", index))
                groups.append(SlotGroup(_count(child, edition), demand, slot=True))
        if own:
            groups.append(SlotGroup(Count(IdSet(((1, 1),))), _demand(own, edition), False))
        # RFC 14, Resources > exclusive: a node outside any slot is shared unless it says
        # otherwise; a bare node (nothing inside it) asks for the node itself, taken whole.
        exclusive = vertex.get("exclusive", False) or not children
        return NodeRequest(_count(vertex, edition), exclusive, tuple(groups))
    if kind == "slot":
        inner = _slot_demand(vertex, path, edition)
        if isinstance(inner, Demand):
            return SlotGroup(_count(vertex, edition), inner, slot=True)
        return SlotOfNodes(_count(vertex, edition), *inner)
    # A core or GPU at the top of the request: not inside any slot, so not a slot's.
    return SlotGroup(Count(IdSet(((1, 1),))), _demand([(path, vertex)], edition), slot=False)


def _slot_demand(
    slot: dict[str, Any], path: Path, edition: str
) -> Demand | tuple[Count, bool, Demand]:
    """What one slot holds: cores and GPUs on one node, or whole nodes (count, exclusive)."""
    children: list[dict[str, Any]] = slot["with"]
    nodes = [c for c in children if c["type"] == "node"]
    if not nodes:
        return _demand(_within(children, path), edition)
    if len(children) != 1:
        raise _never("a slot holding nodes and other resources beside them", (*path, "with"))
    node = nodes[0]
    where = (*path, "with", 0)
    for index, child in enumerate(node.get("with", [])):
        if child["type"] == "slot":
            raise _never("an R holds no slot inside a slot", (*where, "with", index))
    # RFC 14, Reserved Resource Types > slot: a slot's resources are exclusive unless their
    # own exclusive key says otherwise.
    exclusive = node.get("exclusive", True)
    return (
        _count(node, edition),
        exclusive,
        _demand(_within(node.get("with", []), where), edition),
    )


# ---------------------------------------------------------------------------------------------
# A request at its least.


def _exactly(value: int) -> Count:
    return Count(IdSet(((value, value),)))


def least(request: Request) -> Request:
    """The request with every count at its minimum."""
    if isinstance(request, SlotGroup):
        return _least_group(request)
    if isinstance(request, SlotOfNodes):
        return replace(
            request,
            count=_exactly(request.count.min),
            nodes=_exactly(request.nodes.min),
            demand=_least_demand(request.demand),
        )
    groups = tuple(_least_group(group) for group in request.groups)
    return replace(request, count=_exactly(request.count.min), groups=groups)


def _least_group(group: SlotGroup) -> SlotGroup:
    return replace(group, count=_exactly(group.count.min), demand=_least_demand(group.demand))


def _least_demand(demand: Demand) -> Demand:
    cores = None if demand.cores is None else _exactly(demand.cores.min)
    gpus = None if demand.gpus is None else _exactly(demand.gpus.min)
    return Demand(cores, gpus)
