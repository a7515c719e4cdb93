"""Whether an answer's resources divide into the requested slots (the ``division`` check).

RFC 14 (Resources > count, > exclusive; Reserved Resource Types > slot) with the readings: an
allocation holds each top-level vertex of the request (:mod:`request`), every slot's cores and
GPUs on one node, a fixed count exactly, and a node outside any slot or inside a slot of nodes
taken whole when exclusive.  The answer names only ranks, cores and GPUs, not which slot holds
what, so the check searches for a division of them into the request's units:

* on each rank, which vertices it serves, how many slots of each, and each slot's core and GPU
  counts (acceptable counts of the jobspec), using exactly what the rank holds (an exclusive
  vertex: the whole rank, alone);
* across ranks, totals the counts accept: nodes of a ``node`` vertex, slots of a ``slot``
  vertex, nodes of a ``slot-nodes`` vertex split into acceptable slots of acceptable sizes.

Among the divisions, the ``largest`` check wants one that nothing free could make larger
(RFC 14, count: the largest acceptable count free; readings for several slots): no slot whose
next acceptable count fits in what is left free on its node (for a slot outside any node
vertex, on any node: where node choice is free, a node with the most free); no node of a
``node`` vertex that another free node could replace with a larger slot; no slot or node count
whose next acceptable value the free rest of the pool could hold.  How the free resources are
shared among several slots is open, and not judged.  ``nslots`` is judged against the slot
totals of the divisions found.

The search is exact and bounded (:data:`BUDGET` steps): past the bound, and for a request it
does not read, the answer is judged by the other checks only (``undecided``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from flux_conformance.runner.comparators.allocation.counts import above, accepts, smallest
from flux_conformance.runner.comparators.allocation.inputs import Rank
from flux_conformance.runner.comparators.allocation.one_rank import (
    BUDGET,
    OutOfBudget,
    Pair,
    Search,
    Ways,
    add_way,
    fits,
    rank_options,
    values,
)

__all__ = ["BUDGET", "Division", "divide"]

Spare = Counter[tuple[Pair, bool]]


@dataclass
class Division:
    """What the search found: ``decided`` False when it could not tell."""

    decided: bool = True
    found: bool = False  # some division exists
    largest: bool = False  # some division keeps the largest rule
    slots: set[int] = field(default_factory=set)  # slot totals of the best divisions
    reason: str = ""


def _splits(count: dict[str, Any], nodes: dict[str, Any], members: int) -> set[int]:
    """The slot numbers the count accepts into which ``members`` nodes split by ``nodes``."""
    sizes = values(nodes, members)
    reach: dict[int, set[int]] = {0: {0}}  # slots -> node totals reachable
    out = set()
    for k in range(1, members + 1):
        reach[k] = {t + s for t in reach[k - 1] for s in sizes if t + s <= members}
        if members in reach[k] and accepts(count, k):
            out.add(k)
        if not reach[k]:
            break
    return out


def _room(search: Search, unit: dict[str, Any]) -> int:
    """How many more slots of ``unit`` at its smallest counts the surely free rest holds."""
    need = (
        smallest(unit["core"]) if unit["core"] else 0,
        smallest(unit["gpu"]) if unit["gpu"] else 0,
    )
    total = 0
    for c, g in search.rem.values():
        total += min(c // need[0] if need[0] else c + g, g // need[1] if need[1] else c + g)
    return total


def _node_room(spare: Spare, vertex: dict[str, Any]) -> int:
    """How many free nodes outside the answer could hold the vertex at its smallest counts.

    ``spare`` counts the eligible ranks outside the answer by (free, untouched); the search's
    own list keeps one of each kind only (enough to find a node that could hold more).
    """
    need = [0, 0]
    for group in vertex.get("groups", []):
        k = smallest(group["count"])
        need[0] += k * (smallest(group["core"]) if group["core"] else 0)
        need[1] += k * (smallest(group["gpu"]) if group["gpu"] else 0)
    if vertex["kind"] == "slot-nodes":
        need = [
            smallest(vertex["core"]) if vertex["core"] else 0,
            smallest(vertex["gpu"]) if vertex["gpu"] else 0,
        ]
    return sum(
        n
        for (free, untouched), n in spare.items()
        if (untouched or not vertex["exclusive"])
        and fits((need[0], need[1]), free)
        and free != (0, 0)
    )


def _totals(search: Search, spare: Spare, vec: tuple[Pair, ...]) -> tuple[bool, bool, set[int]]:
    """Whether the counts accept these totals, whether none could grow, and the slot totals."""
    slots = {0}
    grows = False
    for vertex, (units, counted) in zip(search.request, vec, strict=True):
        count = vertex["count"]
        if vertex["kind"] == "slot-nodes":
            ks = _splits(count, vertex["nodes"], units)
            if not ks:
                return False, False, set()
            slots = {s + k for s in slots for k in ks}
            free_nodes = _node_room(spare, vertex)
            grows = grows or all(
                (nxt := above(count, k)) is not None
                and free_nodes >= (nxt - k) * smallest(vertex["nodes"])
                for k in ks
            )
            continue
        if not accepts(count, units):
            return False, False, set()
        slots = {s + counted for s in slots}
        nxt = above(count, units)
        if nxt is not None:
            room = _node_room(spare, vertex) if vertex["kind"] == "node" else _room(search, vertex)
            grows = grows or room >= nxt - units
    return True, not grows, slots


def divide(known: dict[str, Any], got: dict[int, Rank]) -> Division:
    """Search for a division of ``got`` into the units of ``known["request"]``."""
    request = known["request"]
    if request is None or not got:
        return Division(decided=False)
    ranks = known["ranks"]
    held = {r: (len(item.cores), len(item.gpus)) for r, item in got.items()}
    rem = {}
    spare = []
    for key, x in ranks.items():
        if not x["eligible"]:
            continue
        r = int(key)
        free = (x["free"][0], x["free"][1])
        have = held.get(r, (0, 0))
        rem[r] = (max(free[0] - have[0], 0), max(free[1] - have[1], 0))
        if r not in got:
            spare.append((free, bool(x["untouched"])))
    search = Search(ranks, request, held, rem, spare)
    try:
        states: Ways = {((0, 0),) * len(request): {0}}
        memo: dict[Any, Ways] = {}
        for rank in sorted(got):
            x = ranks[str(rank)]
            key = (held[rank], rem.get(rank), x["whole"], len(x["all_cores"]), len(x["all_gpus"]))
            if key not in memo:
                memo[key] = rank_options(search, rank)
            options = memo[key]
            nxt: Ways = {}
            for vec, masks in states.items():
                for add, more in options.items():
                    search.tick(1 + len(masks) * len(more))
                    total = tuple((a[0] + b[0], a[1] + b[1]) for a, b in zip(vec, add, strict=True))
                    nxt.setdefault(total, set())
                    for mask in {m | n for m in masks for n in more}:
                        add_way(nxt, total, mask)
            states = nxt
            if not states:
                break
    except OutOfBudget:
        return Division(decided=False)
    out = Division()
    counted = Counter(spare)
    for vec, masks in states.items():
        accepted, keeps, slots = _totals(search, counted, vec)
        if not accepted:
            continue
        # A move that makes a slot larger counts where the vertex holds that one slot alone.
        ok = any(
            not any(mask >> i & 1 and units == 1 for i, (units, _) in enumerate(vec))
            for mask in masks
        )
        if not out.found or (ok and keeps and not out.largest):
            out.slots = set()
        out.found = True
        if ok and keeps:
            out.largest = True
            out.slots |= slots
        elif not out.largest:
            out.slots |= slots
    if not out.found:
        out.reason = (
            "its ranks, cores and GPUs cannot be divided into the requested slots (each slot "
            "on one node, each count acceptable, exclusive nodes whole)"
        )
    elif not out.largest:
        out.reason = (
            "every division of it leaves free a core, GPU, slot or node that would make a "
            "count larger (RFC 14: the largest acceptable count that is free)"
        )
    return out
