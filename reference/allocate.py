"""Scheduling: allocating an RFC 20 R from a pool for an RFC 14 jobspec (``sched.allocate``).

RFC 20 ("Overview") calls R the resource set a scheduler builds in answer to a request; RFC 14
("Resources") and RFC 31 say what that set must hold.  This module is a small scheduler that
follows those rules one by one, so that each rule can be read in the code where it is applied.
It is the suite's reference, not a production scheduler.  docs/readings.md (Allocation) says
which readings it takes where the texts leave room.

The rules, and where they are applied:

* A fixed count gives exactly that many; a resource holding more may be matched, the excess
  stays free (RFC 14, Resources > count): :func:`_largest` on a fixed count.
* A count with only ``min`` (or a range, or an idset) gives the largest acceptable count that
  is free, following the operator and operand, up to ``max`` (RFC 14, Resources > count; the
  readings extend "largest" to ranges with a max and to idsets): :func:`_largest`.  Where the
  choice of node is free, such a count is placed where the most is free
  (:func:`_place_slots`, :func:`_place_nodes`).
* Several slots with such counts: the request is met whenever the free resources allow, and
  no slot could be made larger from what is still free.  How the free part is shared among
  the slots is open (readings); the reference's sharing is :func:`_share`.  Top-level requests
  are placed in order, each leaving room for the minimums of those after it (:func:`_fit`).
* Slots and the resources in them are exclusive by default (RFC 14, Resources > exclusive, and
  Reserved Resource Types > slot): a slot's cores and GPUs are never shared, so only free ones
  are taken, and a node inside a slot is taken whole.  A node outside any slot is shared
  unless it says ``exclusive: true``; then it is taken whole.
* A slot below node level lies on one node (readings): :func:`_place_slots`.
* Each allocated rank satisfies ``attributes.system.constraints``, evaluated on the pool as
  ``constraint.match`` does (RFC 31): :func:`_eligible`.
* ``now`` is the scheduler's clock (the caller's, or this machine's when none is given).  An
  allocated R whose expiration is at or before ``now`` has ended: its resources are free
  (:meth:`Pool.at`).  ``starttime`` is ``now``; a ``duration`` above zero gives
  ``expiration = now + duration``, a duration of 0 (or none) the pool's own expiration, if
  any (RFC 14, Attributes > duration; RFC 20, Execution): :func:`_times`.
* From the 2026-08-13 texts on, the allocation carries ``nslots``, the slot total, and leaves
  out ``+`` instance-local properties (RFC 20, Execution > nslots and > properties):
  :func:`._alloc_io.write_answer`.

"Never" and "not now" differ: a request the pool cannot meet even with nothing allocated is
``unsatisfiable``; one it could meet but not from what is free is ``busy``.  The reference
tells them apart by trying the request on the whole pool when it fails on the free part.

The request is read from the jobspec by :mod:`._alloc_request` (what an R pool can hold at
all); the speed machinery (bitsets, memos, a heap) is in :mod:`._alloc_speed`, each piece
beside the plain rule it keeps.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from flux_conformance.reference import editions
from flux_conformance.reference._alloc_io import read_input, write_answer
from flux_conformance.reference._alloc_request import (
    Demand,
    NodeRequest,
    Request,
    SlotGroup,
    SlotOfNodes,
    UnsatisfiableError,
    least,
)
from flux_conformance.reference._alloc_request import read_vertex as _read_vertex
from flux_conformance.reference._alloc_speed import (
    Node,
    Walk,
    by_free_counts,
    largest_acceptable,
    most_free_first,
)
from flux_conformance.reference._speed import gc_paused
from flux_conformance.reference.constraint import compile_constraint, evaluate
from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.jobspec import validate_jobspec
from flux_conformance.reference.ranges import Count
from flux_conformance.reference.rset import (
    Children,
    ResourceSet,
    difference,
    load,
    union,
)

__all__ = [
    "OPERATIONS",
    "BusyError",
    "Pool",
    "UnsatisfiableError",
    "allocate",
]


class BusyError(FormatError):
    """The pool could satisfy the request, but not with what is already allocated."""

    category = "busy"


# ---------------------------------------------------------------------------------------------
# Counts.


def _largest(count: Count, available: int) -> int | None:
    """The count to allocate when ``available`` are free, or None when too few are.

    RFC 14, Resources > count: a fixed count is taken exactly (from anything holding at least
    that many); otherwise the R holds the largest acceptable count that is available, the
    acceptable counts being min, then each obtained from the last by the operator and operand,
    up to max.
    """
    return largest_acceptable(count, available)


def _upper(count: Count) -> int | None:
    """The most that could ever be asked for (None: unbounded)."""
    return count.max


def _share(counts: Sequence[Count | None], free: int) -> list[int]:
    """How ``free`` cores (or GPUs, or nodes) are shared by units that each hold their minimum.

    Each unit (a slot, or a node's own cores) starts at its count's minimum, which is already
    set aside; ``None`` stands for a unit that holds none of this resource.  What is fixed
    (readings, Allocation): in the end no unit could be made larger from what is still free.
    What is open, the sharing, is the reference's choice: each unit in turn takes the largest
    acceptable count of an equal part of what is left; then each in turn the largest
    acceptable count of all that is left (so none could grow afterwards).
    """
    got = [0 if count is None else count.min for count in counts]
    holders = [i for i, count in enumerate(counts) if count is not None]
    for last_pass in (False, True):
        for place, i in enumerate(holders):
            count = counts[i]
            assert count is not None
            part = free if last_pass else free // (len(holders) - place)
            grown = _largest(count, got[i] + part)
            if grown is not None and grown > got[i]:
                free -= grown - got[i]
                got[i] = grown
    return got


def _fits(least: tuple[int, int], cores: int, gpus: int) -> int:
    """How many units of ``least`` (cores, GPUs) fit in ``cores`` and ``gpus``."""
    need_c, need_g = least
    if not need_c and not need_g:
        return cores + gpus
    return min(
        cores // need_c if need_c else cores + gpus,
        gpus // need_g if need_g else cores + gpus,
    )


# ---------------------------------------------------------------------------------------------
# Placing each kind of request on the free nodes (ascending ranks, see _alloc_speed.Walk).

Taken = dict[int, Children]


def _per_unit(demand: Demand, cores: int, gpus: int) -> tuple[int, int] | None:
    """Cores and GPUs for one unit with ``cores`` and ``gpus`` free: each count at its largest."""
    c = 0 if demand.cores is None else _largest(demand.cores, cores)
    g = 0 if demand.gpus is None else _largest(demand.gpus, gpus)
    if c is None or g is None:
        return None
    return c, g


def _place_slots(group: SlotGroup, nodes: Walk, taken: Taken) -> int:
    """Slots below node level, across nodes: each slot on one node (readings).

    Fixed counts in the slot: first fit, each node in rank order taking slots while one still
    fits.  Otherwise the number of slots is settled first (the largest acceptable number that
    fits with each slot at its minimum), each slot goes where the most is free, and each
    node's free part is then shared by the slots on it (:func:`_share`).  Returns the number
    of slots placed.
    """
    if not group.demand.fixed:
        return _place_growing_slots(group, nodes, taken)
    limit = _upper(group.count)
    placed: list[tuple[Node, int, int]] = []
    for node in nodes:
        cores, gpus = node.ncores, node.ngpus
        while limit is None or len(placed) < limit:
            unit = _per_unit(group.demand, cores, gpus)
            if unit is None or unit == (0, 0):
                break
            placed.append((node, *unit))
            cores -= unit[0]
            gpus -= unit[1]
        if limit is not None and len(placed) >= limit:
            break
    wanted = _largest(group.count, len(placed))
    if wanted is None:
        raise BusyError(f"room for {len(placed)} slot(s) only")
    for node, c, g in placed[:wanted]:
        _merge(taken, node.rank, node.take(c, g))
    return wanted if group.slot else 0


def _place_growing_slots(group: SlotGroup, nodes: Walk, taken: Taken) -> int:
    """Slots below node level whose cores or GPUs are a min-only, ranged or idset count."""
    demand = group.demand
    least = demand.least
    fit = [node for node in nodes if _fits(least, node.ncores, node.ngpus)]
    room = sum(_fits(least, node.ncores, node.ngpus) for node in fit)
    limit = _upper(group.count)
    wanted = _largest(group.count, room if limit is None else min(room, limit))
    if wanted is None:
        raise BusyError(f"room for {room} slot(s) only")
    # RFC 14 count (readings): where the node choice is free, the node with the most free.
    where = most_free_first([(node.ncores, node.ngpus) for node in fit], least, wanted)
    on: dict[int, int] = {}
    for index in where:
        on[index] = on.get(index, 0) + 1
    for index in sorted(on):
        node, k = fit[index], on[index]
        cores = sum(_share([demand.cores] * k, node.ncores - k * least[0]))
        gpus = sum(_share([demand.gpus] * k, node.ngpus - k * least[1]))
        _merge(taken, node.rank, node.take(cores, gpus))
    return wanted if group.slot else 0


@dataclass(frozen=True)
class _NodePlan:
    """What one node gives a node request: cores and GPUs in all, and the slots counted."""

    cores: int
    gpus: int
    slots: int  # a node's own cores and GPUs, outside any slot, count none


def _node_holds(groups: Sequence[SlotGroup], cores: int, gpus: int) -> _NodePlan | None:
    """What one node with ``cores`` and ``gpus`` free gives every group, or None if it cannot.

    The number of slots of each group first, in order: the largest acceptable number that
    fits with each slot at its minimum, leaving the minimum of the groups after it.  Then
    what is left is shared by all the slots on the node (:func:`_share`), so that slots of
    two kinds with min-only counts both get theirs.
    """
    spare_c = cores - sum(group.count.min * group.demand.least[0] for group in groups)
    spare_g = gpus - sum(group.count.min * group.demand.least[1] for group in groups)
    if spare_c < 0 or spare_g < 0:
        return None
    units: list[Demand] = []
    slots = 0
    for group in groups:
        need_c, need_g = group.demand.least
        # Room for this group: what is spare, plus its own minimum number of slots.
        room = _fits(
            group.demand.least,
            spare_c + group.count.min * need_c,
            spare_g + group.count.min * need_g,
        )
        k = _largest(group.count, room)
        if k is None:
            return None
        spare_c -= (k - group.count.min) * need_c
        spare_g -= (k - group.count.min) * need_g
        units.extend([group.demand] * k)
        slots += k if group.slot else 0
    given_c = sum(_share([unit.cores for unit in units], spare_c))
    given_g = sum(_share([unit.gpus for unit in units], spare_g))
    return _NodePlan(given_c, given_g, slots)


def _place_nodes(request: NodeRequest, nodes: Walk, taken: Taken) -> int:
    """Nodes outside slots: each node holds every slot group, or is taken whole if exclusive.

    Fixed counts inside the node: first fit in rank order.  Otherwise, when there are more
    nodes that fit than the node count takes, the nodes with the most to give are taken.
    """
    limit = _upper(request.count)
    choose = not all(group.demand.fixed and _fixed(group.count) for group in request.groups)
    plan_for = by_free_counts(lambda c, g: _node_holds(request.groups, c, g))
    chosen: list[tuple[Node, _NodePlan]] = []
    for node in nodes:
        if not choose and limit is not None and len(chosen) >= limit:
            break
        # RFC 14, Resources > exclusive: an exclusive node is allocated to this job alone, so
        # it must be untouched by any other allocation.
        if request.exclusive and not node.whole:
            continue
        plan = plan_for(node.ncores, node.ngpus)
        if plan is not None:
            chosen.append((node, plan))
    wanted = _largest(request.count, len(chosen))
    if wanted is None:
        raise BusyError(f"{len(chosen)} node(s) fit only")
    if choose and wanted < len(chosen):
        # RFC 14 count (readings): where the node choice is free, the nodes with the most free
        # (what an exclusive node gives is all of it); rank order among equals.
        if request.exclusive:
            chosen.sort(key=lambda pair: (-pair[0].ncores, -pair[0].ngpus))
        else:
            chosen.sort(key=lambda pair: (-pair[1].cores, -pair[1].gpus))
        chosen = sorted(chosen[:wanted], key=lambda pair: pair[0].rank)
    slots = 0
    for node, plan in chosen[:wanted]:
        if request.exclusive:
            _merge(taken, node.rank, node.take_all())
        else:
            _merge(taken, node.rank, node.take(plan.cores, plan.gpus))
        slots += plan.slots
    return slots


def _fixed(count: Count) -> bool:
    return count.min == count.max


def _place_slots_of_nodes(request: SlotOfNodes, nodes: Walk, taken: Taken) -> int:
    """Slots above node level: each slot takes whole nodes (or, if not exclusive, its share).

    The number of slots first (the largest acceptable number with each at its minimum number
    of nodes), then the nodes left over are shared by the slots (:func:`_share`).  A slot's
    nodes that give a min-only count of cores are those with the most free.
    """
    fit = [
        node
        for node in nodes
        if (node.whole or not request.exclusive)
        and _per_unit(request.demand, node.ncores, node.ngpus) is not None
        and (node.ncores or node.ngpus)
    ]
    if not request.exclusive and not request.demand.fixed:
        fit.sort(key=lambda node: (-node.ncores, -node.ngpus))
    limit = _upper(request.count)
    room = len(fit) // request.nodes.min
    wanted = _largest(request.count, room if limit is None else min(room, limit))
    if wanted is None:
        raise BusyError(f"room for {room} slot(s) of nodes only")
    sizes = _share([request.nodes] * wanted, len(fit) - wanted * request.nodes.min)
    start = 0
    for size in sizes:
        for node in fit[start : start + size]:
            if request.exclusive:
                _merge(taken, node.rank, node.take_all())
            else:
                unit = _per_unit(request.demand, node.ncores, node.ngpus)
                assert unit is not None
                _merge(taken, node.rank, node.take(*unit))
        start += size
    return wanted


def _merge(taken: Taken, rank: int, children: Children) -> None:
    before = taken.get(rank)
    taken[rank] = children if before is None else before.union(children)


_PLACE: dict[type, Callable[[Any, Walk, Taken], int]] = {
    SlotGroup: _place_slots,
    NodeRequest: _place_nodes,
    SlotOfNodes: _place_slots_of_nodes,
}


# ---------------------------------------------------------------------------------------------
# The whole allocation.


def _eligible(jobspec: dict[str, Any], pool: ResourceSet) -> IdSet:
    """The pool's ranks that satisfy the jobspec's constraint (RFC 31), all when it has none."""
    system = jobspec.get("attributes", {}).get("system", {})
    if "constraints" not in system:
        return pool.ranks
    compiled, _ = compile_constraint(system["constraints"])
    return evaluate(compiled, pool)


def _fit(
    requests: Sequence[Request], free: ResourceSet, eligible: IdSet, whole: IdSet
) -> tuple[Taken, int]:
    """Place every request, in order, from ``free``; raises BusyError when they do not fit.

    Each request takes what it asks for from what the ones before it left.  When that fails
    and a request before the last has a count that could have taken less, the requests are
    placed again so that each leaves room for those after it (:func:`_fit_leaving_room`).
    """
    try:
        taken: Taken = {}
        nodes = Walk(free, eligible, whole)
        slots = sum(_PLACE[type(request)](request, nodes, taken) for request in requests)
    except BusyError:
        if all(least(request) == request for request in requests[:-1]):
            raise
        return _fit_leaving_room(requests, free, eligible, whole)
    return taken, slots


def _fit_leaving_room(
    requests: Sequence[Request], free: ResourceSet, eligible: IdSet, whole: IdSet
) -> tuple[Taken, int]:
    """Several requests with min-only or ranged counts, met whenever their minimums fit.

    First every request at its minimum, in order: if that does not fit, nothing does.  Then
    each request in order takes what it asks for, with what the minimums of the requests after
    it took in the first pass set aside, so that each of those still fits when its turn comes.
    """
    nodes = Walk(free, eligible, whole)
    room: list[Taken] = []
    least_slots = 0
    for request in requests:
        room.append({})
        least_slots += _PLACE[type(request)](least(request), nodes, room[-1])
    try:
        return _fit_in_turn(requests, room, Walk(free, eligible, whole))
    except BusyError:
        # (Each request fits where its minimum did; should one not, the minimums stand.)
        taken: Taken = {}
        for part in room:
            for rank, children in part.items():
                _merge(taken, rank, children)
        return taken, least_slots


def _fit_in_turn(requests: Sequence[Request], room: list[Taken], nodes: Walk) -> tuple[Taken, int]:
    by_rank = {node.rank: node for node in nodes}
    taken: Taken = {}
    slots = 0
    for index, request in enumerate(requests):
        later = [
            (by_rank[rank], part) for after in room[index + 1 :] for rank, part in after.items()
        ]
        held = [node.hold(part) for node, part in later]
        try:
            slots += _PLACE[type(request)](request, nodes, taken)
        finally:
            for (node, part), token in zip(reversed(later), reversed(held), strict=True):
                node.give_back(part, token)
    return taken, slots


def _times(
    system: dict[str, Any], now: float, pool: ResourceSet
) -> tuple[float | None, float | None]:
    """``starttime`` and ``expiration`` of the allocation (RFC 14, Attributes > duration).

    ``starttime`` is ``now``, the scheduler's clock.  A duration above zero gives
    ``expiration = now + duration`` (also past the pool's own expiration: readings); a
    duration of 0 (or none) is unset, and the pool's own expiration, when above 0, bounds the
    allocation; without one there is none.
    """
    duration = system.get("duration", 0)
    if duration > 0:
        return now, now + duration
    return now, pool.expiration or None


def _ended(expiration: float | None, now: float) -> bool:
    """An R whose expiration is set (above 0) and at or before ``now`` has ended (readings)."""
    return expiration is not None and 0 < expiration <= now


@dataclass(frozen=True)
class Pool:
    """A pool of resources (an R) and the part of it already allocated, read once.

    A scheduler keeps this between allocations; :meth:`allocate` answers one request.
    """

    resources: ResourceSet
    free: ResourceSet
    whole: IdSet  # ranks no allocation touches
    allocated: bool
    held: tuple[ResourceSet, ...] = ()  # the allocated Rs, each as read

    @classmethod
    def load(cls, pool_doc: Any, allocated: Sequence[Any] = ()) -> Pool:
        """Read the pool's R and the Rs already allocated from it (``InvalidError`` if bad)."""
        try:
            pool, _ = load(pool_doc)
        except FormatError as exc:
            raise exc.with_path(("pool",)) from None
        held: list[ResourceSet] = []
        for index, doc in enumerate(allocated):
            try:
                held.append(load(doc)[0])
            except FormatError as exc:
                raise exc.with_path(("allocated", index)) from None
        return cls._of(pool, tuple(held))

    @classmethod
    def _of(cls, pool: ResourceSet, held: tuple[ResourceSet, ...]) -> Pool:
        taken: ResourceSet | None = None
        for part in held:
            taken = part if taken is None else union(taken, part)
        if taken is None:
            return cls(pool, pool, pool.ranks, allocated=False)
        free = difference(pool, taken)
        return cls(pool, free, pool.ranks.difference(taken.ranks), True, held)

    def at(self, now: float) -> Pool:
        """The pool as it stands at ``now``: allocations that have ended by then are free."""
        live = tuple(part for part in self.held if not _ended(part.expiration, now))
        return self if len(live) == len(self.held) else self._of(self.resources, live)

    def allocate(self, jobspec: Any, *, now: float | None = None, edition: str) -> dict[str, Any]:
        """The R allocated for a valid ``jobspec`` at ``now`` (None: this machine's clock)."""
        clock = time.time() if now is None else now
        # (The walk makes an object per free node: no cycles, so no collections meanwhile.)
        with gc_paused():
            return self.at(clock)._allocate(jobspec, clock, edition)

    def _allocate(self, jobspec: Any, now: float, edition: str) -> dict[str, Any]:
        if _ended(self.resources.expiration, now):
            # The pool's own time is over: nothing in it will ever be free for this request.
            raise UnsatisfiableError(f"the pool expired at {self.resources.expiration}")
        requests = [
            _read_vertex(vertex, ("jobspec", "resources", index), edition)
            for index, vertex in enumerate(jobspec["resources"])
        ]
        eligible = _eligible(jobspec, self.resources)
        try:
            taken, slots = _fit(requests, self.free, eligible, self.whole)
        except BusyError as busy:
            # Never, or only not now: try the request on the whole pool, nothing allocated.
            if not self.allocated:
                raise UnsatisfiableError(busy.reason) from None
            try:
                _fit(requests, self.resources, eligible, self.resources.ranks)
            except BusyError as never:
                raise UnsatisfiableError(never.reason) from None
            raise
        if editions.edition_named(edition).r_core_every_rank:
            # RFC 20 (2026-08-13 on): each R_lite entry names one or more cores, so a request
            # that leaves a rank with GPUs and no core has no R to answer it.
            for rank, held in taken.items():
                if not held.core_ids:
                    raise UnsatisfiableError(f"rank {rank} would hold no core")
        system = jobspec.get("attributes", {}).get("system", {})
        times = _times(system, now, self.resources)
        return write_answer(self.resources, taken, slots, times, edition)


def allocate(
    pool_doc: Any,
    jobspec: Any,
    *,
    allocated: Sequence[Any] = (),
    now: float | None = None,
    edition: str,
) -> dict[str, Any]:
    """Allocate from ``pool_doc`` (an R) what ``jobspec`` asks for; return the allocation's R.

    ``allocated`` lists Rs already taken from the pool; ``now`` is the scheduler's clock in
    seconds since the epoch (None: this machine's).  Raises ``InvalidError`` for an invalid
    jobspec or R, :class:`UnsatisfiableError` when the whole pool could never satisfy the
    request, :class:`BusyError` when only what is allocated stands in the way.
    """
    try:
        validate_jobspec(jobspec, edition=edition)
    except FormatError as exc:
        raise exc.with_path(("jobspec",)) from None
    return Pool.load(pool_doc, allocated).allocate(jobspec, now=now, edition=edition)


# ---------------------------------------------------------------------------------------------
# The operation.


def _op_allocate(value: Any, *, edition: str) -> dict[str, Any]:
    pool, jobspec, allocated, now = read_input(value)
    return allocate(pool, jobspec, allocated=allocated, now=now, edition=edition)


OPERATIONS: dict[str, Callable[..., Any]] = {
    "sched.allocate": _op_allocate,
}
