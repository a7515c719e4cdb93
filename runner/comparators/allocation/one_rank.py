"""How one rank of an answer can serve the request's vertices (for the ``division`` check).

A rank serves an exclusive vertex alone, holding all of it; otherwise shared vertices use
exactly what it holds: a ``node`` vertex its slot groups, a ``slot`` vertex some number of
slots, a ``slot-nodes`` vertex one unit (RFC 14, Resources > count and > exclusive, Reserved
Resource Types > slot).  :func:`rank_options` lists every way, each as the units it gives each
vertex (nodes or slots, and the slots it counts), and whether one way of it keeps the largest
rule on this rank: no slot that what is left free would make larger in place or, for a slot
whose node is free to choose, on another node; no node of a ``node`` vertex that a free node
could replace with a larger slot (:mod:`.division` says why).

Every step is counted against :data:`BUDGET`; past it, :class:`OutOfBudget` ends the search.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from flux_conformance.runner.comparators.allocation.counts import above, accepts, smallest

__all__ = [
    "BUDGET",
    "OutOfBudget",
    "Pair",
    "Search",
    "Ways",
    "add_way",
    "fits",
    "rank_options",
    "values",
]

#: Search steps allowed for one answer (far above any case; a hostile input stops here).
BUDGET = 200_000

Pair = tuple[int, int]
Needs = frozenset[Pair]


class OutOfBudget(Exception):
    """The search took more than :data:`BUDGET` steps."""


@dataclass
class Search:
    """One answer's search: the facts it reads, and the steps it has taken."""

    ranks: dict[str, Any]
    request: list[dict[str, Any]]
    held: dict[int, Pair]
    rem: dict[int, Pair]  # surely free after the answer, per eligible rank
    spare: list[tuple[Pair, bool]]  # eligible ranks outside the answer: free, untouched
    steps: int = 0
    front: dict[Pair, int] = field(default_factory=dict)  # the largest rooms, how many hold each

    def __post_init__(self) -> None:
        counted: dict[Pair, int] = {}
        for room in self.rem.values():
            counted[room] = counted.get(room, 0) + 1
        self.front = {p: n for p, n in counted.items() if not _below_another(p, counted)}
        self.spare = [
            (free, untouched)
            for free, untouched in set(self.spare)
            if not any(
                (f, u) != (free, untouched) and (u or not untouched) and fits(free, f)
                for f, u in set(self.spare)
            )
        ]

    def tick(self, n: int = 1) -> None:
        """Count ``n`` steps (:class:`OutOfBudget` past the budget)."""
        self.steps += n
        if self.steps > BUDGET:
            raise OutOfBudget


def values(count: dict[str, Any] | None, limit: int) -> list[int]:
    """The acceptable values of ``count`` up to ``limit`` ([0]: no such vertex)."""
    if count is None:
        return [0]
    out = []
    value: int | None = smallest(count)
    while value is not None and value <= limit:
        if accepts(count, value):
            out.append(value)
        value = above(count, value)
    return out


def _grow(count: dict[str, Any] | None, value: int) -> int | None:
    """How much more this count needs to reach its next acceptable value (None: none)."""
    if count is None:
        return None
    nxt = above(count, value)
    return None if nxt is None else nxt - value


def _reduce(needs: set[Pair]) -> Needs:
    """The needs no other need is below (each is a way to grow)."""
    return frozenset(
        n for n in needs if not any(m != n and m[0] <= n[0] and m[1] <= n[1] for m in needs)
    )


def fits(need: Pair, room: Pair) -> bool:
    """Whether (cores, GPUs) ``need`` fits in ``room``."""
    return need[0] <= room[0] and need[1] <= room[1]


def _below_another(p: Pair, points: Any) -> bool:
    return any(q != p and fits(p, q) for q in points)


def _elsewhere(search: Search, rank: int, need: Pair) -> bool:
    """Whether a rank other than ``rank`` surely has ``need`` free.

    Only the largest rooms are looked at: where the rank's own room is the one largest, a
    smaller room elsewhere is not, so the answer errs towards "no" (an answer kept).
    """
    own = search.rem.get(rank)
    return any(fits(need, room) and (room != own or n > 1) for room, n in search.front.items())


def _slots(
    search: Search,
    unit: dict[str, Any],
    counts: list[int],
    cap: Pair,
    rank: int,
    *,
    move: bool,
) -> dict[int, dict[Pair, set[tuple[Needs, bool]]]]:
    """What k slots of ``unit`` may use within ``cap``, for each k in ``counts``.

    Each sum comes with the ways a slot could grow (what it needs more) and whether one could
    move to another rank and grow there (``move``: its node is free to choose).
    """
    cores, gpus = values(unit["core"], cap[0]), values(unit["gpu"], cap[1])
    choices = [(c, g) for c in cores for g in gpus if (c, g) != (0, 0)]
    grow = {}
    for c, g in choices:
        needs = set()
        moved = False
        for count, i, v in ((unit["core"], 0, c), (unit["gpu"], 1, g)):
            d = _grow(count, v)
            if d is not None:
                needs.add((d, 0) if i == 0 else (0, d))
                if move and _elsewhere(search, rank, (c + d, g) if i == 0 else (c, g + d)):
                    moved = True
        grow[(c, g)] = (needs, moved)
    top = max(counts, default=0)
    layer: dict[Pair, set[tuple[Needs, bool]]] = {(0, 0): {(frozenset(), False)}}
    out = {0: layer} if 0 in counts else {}
    for k in range(1, top + 1):
        nxt: dict[Pair, set[tuple[Needs, bool]]] = {}
        for (sc, sg), ways in layer.items():
            for c, g in choices:
                total = (sc + c, sg + g)
                if not fits(total, cap):
                    continue
                needs, moved = grow[(c, g)]
                for have, was in ways:
                    search.tick()
                    nxt.setdefault(total, set()).add((_reduce(set(have) | needs), was or moved))
        layer = nxt
        if not layer:
            break
        if k in counts:
            out[k] = layer
    return out


def _node_options(search: Search, vertex: dict[str, Any], rank: int, cap: Pair) -> list[Any]:
    """(used, slots, needs, moved) for a node vertex holding this rank within ``cap``."""
    options: list[tuple[Pair, int, Needs, bool]] = [((0, 0), 0, frozenset(), False)]
    for group in vertex["groups"]:
        mins = (
            smallest(group["core"]) if group["core"] else 0,
            smallest(group["gpu"]) if group["gpu"] else 0,
        )
        most = min(
            cap[0] // mins[0] if mins[0] else cap[0] + cap[1],
            cap[1] // mins[1] if mins[1] else cap[0] + cap[1],
        )
        ks = values(group["count"], most)
        table = _slots(search, group, ks, cap, rank, move=False)
        merged = []
        for used, slots, needs, moved in options:
            for k, sums in table.items():
                extra = _grow(group["count"], k)
                grow_k = {(extra * mins[0], extra * mins[1])} if extra else set()
                for total, ways in sums.items():
                    both = (used[0] + total[0], used[1] + total[1])
                    if not fits(both, cap):
                        continue
                    for have, was in ways:
                        search.tick()
                        merged.append(
                            (
                                both,
                                slots + (k if group["slot"] else 0),
                                _reduce(set(needs) | have | grow_k),
                                moved or was,
                            )
                        )
        options = list(set(merged))
    out = []
    for used, slots, needs, moved in options:
        # A node holding one slot: could another free node hold that slot larger?
        swap = slots == 1 and any(
            fits((used[0] + n[0], used[1] + n[1]), free)
            for free, untouched in search.spare
            if untouched or not vertex["exclusive"]
            for n in needs
        )
        out.append((used, slots, needs, moved or swap))
    return out


Ways = dict[tuple[Pair, ...], set[int]]


def _minimal(masks: set[int]) -> set[int]:
    """The masks no other mask is inside (fewer moves are what the largest rule wants)."""
    return {m for m in masks if not any(o != m and o & m == o for o in masks)}


def add_way(found: Ways, vec: tuple[Pair, ...], mask: int | None) -> None:
    """Record a way to ``vec``.

    ``mask`` holds the vertices whose one slot could move and grow; None: a slot could grow
    where it is (the way breaks the largest rule whatever the totals).
    """
    ways = found.setdefault(vec, set())
    if mask is not None:
        ways.add(mask)
        found[vec] = _minimal(ways)


def rank_options(search: Search, rank: int) -> Ways:
    """Each way the rank serves the vertices, as per vertex (units, slots counted).

    Each maps to the masks of its ways in which no slot could grow in place; a mask holds the
    vertices whose one slot could move to another node and grow there (the largest rule counts
    that move only where the vertex holds one unit in all, see :mod:`.division`).
    """
    x = search.ranks[str(rank)]
    held = search.held[rank]
    whole = (len(x["all_cores"]), len(x["all_gpus"]))
    nv = len(search.request)
    zero = ((0, 0),) * nv
    found: Ways = {}
    # An exclusive vertex holds the whole rank, alone.
    if x["whole"] and held == whole:
        for i, vertex in enumerate(search.request):
            if not vertex.get("exclusive"):
                continue
            vec = (*zero[:i], (1, 0), *zero[i + 1 :])
            if vertex["kind"] == "node":
                for used, slots, needs, moved in _node_options(search, vertex, rank, whole):
                    if used == (0, 0) and vertex["groups"]:
                        continue
                    left = (whole[0] - used[0], whole[1] - used[1])
                    grows = any(fits(n, left) for n in needs)
                    vec = (*zero[:i], (1, slots), *zero[i + 1 :])
                    add_way(found, vec, None if grows else (1 << i if moved else 0))
            elif whole != (0, 0) and all(
                vertex[k] is None or values(vertex[k], whole[j])
                for j, k in enumerate(("core", "gpu"))
            ):
                add_way(found, vec, 0)
    # Shared vertices: what they use sums to exactly what the rank holds.
    partial: dict[tuple[tuple[Pair, ...], Pair], set[tuple[Needs, int]]] = {
        ((), (0, 0)): {(frozenset(), 0)}
    }
    for i, vertex in enumerate(search.request):
        if vertex.get("exclusive"):
            options: list[tuple[Pair, Pair, Needs, bool]] = [((0, 0), (0, 0), frozenset(), False)]
        elif vertex["kind"] == "node":
            # Not serving the vertex, or serving it as one of its nodes.
            options = [((0, 0), (0, 0), frozenset(), False)]
            options += [
                (used, (1, slots), needs, moved)
                for used, slots, needs, moved in _node_options(search, vertex, rank, held)
                if used != (0, 0)
            ]
        else:
            many = vertex["kind"] == "slot"
            table = _slots(
                search,
                vertex,
                list(range(held[0] + held[1] + 1)) if many else [0, 1],
                held,
                rank,
                move=many,
            )
            options = [
                (total, (k, k if vertex.get("slot") else 0), have, was)
                for k, sums in table.items()
                for total, ways in sums.items()
                for have, was in ways
            ]
        nxt: dict[tuple[tuple[Pair, ...], Pair], set[tuple[Needs, int]]] = {}
        for (vec, used), ways in partial.items():
            for add, part, needs, moved in options:
                both = (used[0] + add[0], used[1] + add[1])
                if not fits(both, held):
                    continue
                for have, mask in ways:
                    search.tick()
                    nxt.setdefault(((*vec, part), both), set()).add(
                        (_reduce(set(have) | needs), mask | (1 << i if moved else 0))
                    )
        partial = nxt
    room = search.rem.get(rank, (0, 0))
    for (vec, used), ways in partial.items():
        if used != held or vec == zero:
            continue
        found.setdefault(vec, set())
        for needs, mask in ways:
            add_way(found, vec, None if any(fits(n, room) for n in needs) else mask)
    return found
