"""Scheduling: allocating an RFC 20 R from a pool for an RFC 14 jobspec (``sched.allocate``).

RFC 20 ("Overview") calls R the resource set a scheduler builds in answer to a request; RFC 14
("Resources") and RFC 31 say what that set must hold.  This module is a small first-fit
scheduler that follows those rules one by one, so that each rule can be read in the code where
it is applied.  It is the suite's reference, not a production scheduler: it walks the free
ranks in ascending order and takes the first that fit.

The rules, and where they are applied:

* A fixed count gives exactly that many; a resource holding more may be matched, the excess
  stays free (RFC 14, Resources > count): :func:`_largest` on a fixed count.
* A count with only ``min`` (or a range, or an idset) gives the largest acceptable count that
  is free, following the operator and operand, up to ``max`` (RFC 14, Resources > count; the
  readings extend "largest" to ranges with a max and to idsets): :func:`_largest`.
* Slots and the resources in them are exclusive by default (RFC 14, Resources > exclusive, and
  Reserved Resource Types > slot): a slot's cores and GPUs are never shared, so only free ones
  are taken, and a node inside a slot is taken whole.  A node outside any slot is shared
  unless it says ``exclusive: true``; then it is taken whole.
* A slot below node level lies on one node (readings): :func:`_place_slots`.
* Each allocated rank satisfies ``attributes.system.constraints``, evaluated on the pool as
  ``constraint.match`` does (RFC 31): :func:`_eligible`.
* ``duration`` above zero bounds the allocation: ``expiration = starttime + duration`` with
  ``starttime`` the given ``now`` (RFC 14, Attributes > duration): :func:`_times`.
* From the 2026-08-13 texts on, the allocation carries ``nslots``, the slot total, and leaves
  out ``+`` instance-local properties (RFC 20, Execution > nslots and > properties).

"Never" and "not now" differ: a request the pool cannot meet even with nothing allocated is
``unsatisfiable``; one it could meet but not from what is free is ``busy``.  The reference
tells them apart by trying the request on the whole pool when it fails on the free part.

An R_lite pool holds ranks (nodes), cores and GPUs only.  A request for any other resource
type (``socket``, ``memory`` ...), or a nesting R cannot hold (a node inside a node, a slot
inside a slot, anything inside a core or GPU) can never be met from such a pool, so it is
``unsatisfiable`` (readings: sockets are an open point, see the ``clarification`` cases).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from flux_conformance.reference import editions
from flux_conformance.reference._rset_children import _as_idset
from flux_conformance.reference._rset_read import _join_runs
from flux_conformance.reference._speed import gc_paused
from flux_conformance.reference.constraint import compile_constraint, evaluate
from flux_conformance.reference.errors import FormatError, InvalidError
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.jobspec import validate_jobspec
from flux_conformance.reference.ranges import Count, parse_count
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


class UnsatisfiableError(FormatError):
    """The pool can never satisfy the request, even with nothing allocated."""

    category = "unsatisfiable"


class BusyError(FormatError):
    """The pool could satisfy the request, but not with what is already allocated."""

    category = "busy"


# ---------------------------------------------------------------------------------------------
# The request, read from the jobspec's resources.


@dataclass(frozen=True)
class Demand:
    """Cores and GPUs one unit asks for on one node (``None``: no such vertex)."""

    cores: Count | None
    gpus: Count | None


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


def _read_vertex(vertex: dict[str, Any], path: Path, edition: str) -> Request:
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
# Counts.


def _largest(count: Count, available: int) -> int | None:
    """The count to allocate when ``available`` are free, or None when too few are.

    RFC 14, Resources > count: a fixed count is taken exactly (from anything holding at least
    that many); otherwise the R holds the largest acceptable count that is available, the
    acceptable counts being min, then each obtained from the last by the operator and operand,
    up to max.
    """
    if available < count.min:
        return None
    if count.ids is not None and len(count.ids.intervals) == 1 and count.min == count.max:
        return count.min  # a fixed count
    bounds = count.range
    if bounds is not None and bounds.operator == "+":
        top = available if bounds.max is None else min(available, bounds.max)
        return bounds.min + (top - bounds.min) // bounds.operand * bounds.operand
    values = count.values(available)
    return values[-1] if values else None


def _upper(count: Count) -> int | None:
    """The most that could ever be asked for (None: unbounded)."""
    return count.max


# ---------------------------------------------------------------------------------------------
# The free part of the pool.


def _size(ids: int | IdSet) -> int:
    return ids.bit_count() if isinstance(ids, int) else ids.size


def _lowest(ids: int | IdSet, n: int) -> int | IdSet:
    """The ``n`` lowest ids of a set (a slot takes the first free cores and GPUs)."""
    if isinstance(ids, int):
        # Bits: clear the lowest set bit n times; what was cleared is what is taken.
        rest = ids
        for _ in range(n):
            rest &= rest - 1
        return ids ^ rest
    out: list[tuple[int, int]] = []
    for lo, hi in ids.intervals:
        if n <= 0:
            break
        take = min(n, hi - lo + 1)
        out.append((lo, lo + take - 1))
        n -= take
    return IdSet(tuple(out))


@dataclass(slots=True)
class Node:
    """One free rank as the allocator sees it: what is left, and whether it is untouched."""

    rank: int
    cores: int | IdSet  # the free core ids (bits, or an IdSet for ids past 4,095)
    gpus: int | IdSet
    whole: bool
    ncores: int
    ngpus: int

    def take(self, ncores: int, ngpus: int) -> Children:
        """Take the lowest ``ncores`` cores and ``ngpus`` GPUs still free here."""
        cores, gpus = _lowest(self.cores, ncores), _lowest(self.gpus, ngpus)
        if type(cores) is int and type(gpus) is int:
            self.cores ^= cores  # type: ignore[operator]  # bits: a part of them is taken
            self.gpus ^= gpus  # type: ignore[operator]
        else:
            self.cores, self.gpus = _without(self.cores, cores), _without(self.gpus, gpus)
        self.ncores -= ncores
        self.ngpus -= ngpus
        self.whole = False
        return _children(cores, gpus)

    def take_all(self) -> Children:
        """Take everything still free here."""
        return self.take(self.ncores, self.ngpus)


#: The Children made for what nodes take, by their ids: nodes that take the same cores and
#: GPUs share one object, so an allocation of many nodes writes each distinct one once.
_MADE: dict[tuple[int, int], Children] = {}


def _children(cores: int | IdSet, gpus: int | IdSet) -> Children:
    if not (isinstance(cores, int) and isinstance(gpus, int)):
        return Children(cores, gpus)
    made = _MADE.get((cores, gpus))
    if made is None:
        if len(_MADE) > 4096:
            _MADE.clear()
        made = _MADE[(cores, gpus)] = Children(cores, gpus)
    return made


def _without(ids: int | IdSet, part: int | IdSet) -> int | IdSet:
    if isinstance(ids, int) and isinstance(part, int):
        return ids ^ part  # part is a subset of ids
    return _as_idset(ids).difference(_as_idset(part))


class _Walk:
    """The free ranks that satisfy the constraint, ascending, made as first fit reaches them.

    Requests are placed one after another on the same nodes, so nodes already made are kept
    (with what each request left on them) and the walk goes on from there.
    """

    def __init__(self, free: ResourceSet, eligible: IdSet, whole: IdSet) -> None:
        self._made: list[Node] = []
        self._more = self._generate(free, eligible, whole)

    @staticmethod
    def _generate(free: ResourceSet, eligible: IdSet, whole: IdSet) -> Iterator[Node]:
        # Both the free runs and the eligible ranks are ascending intervals: walk them together.
        allowed = free.ranks.intersection(eligible).intervals
        untouched = set(whole.intersection(eligible).to_list())
        if allowed == free.ranks.intervals:
            # Every free rank satisfies the constraint (or there is none): the runs alone.
            for lo, hi, children in free.runs:
                cores, gpus = children.core_ids, children.gpu_ids
                ncores = cores.bit_count() if type(cores) is int else _size(cores)
                ngpus = gpus.bit_count() if type(gpus) is int else _size(gpus)
                for rank in range(lo, hi + 1):
                    yield Node(rank, cores, gpus, rank in untouched, ncores, ngpus)
            return
        i = 0
        for lo, hi, children in free.runs:
            cores, gpus = children.core_ids, children.gpu_ids
            ncores = cores.bit_count() if type(cores) is int else _size(cores)
            ngpus = gpus.bit_count() if type(gpus) is int else _size(gpus)
            while i < len(allowed) and allowed[i][1] < lo:
                i += 1
            j = i
            while j < len(allowed) and allowed[j][0] <= hi:
                for rank in range(max(lo, allowed[j][0]), min(hi, allowed[j][1]) + 1):
                    yield Node(rank, cores, gpus, rank in untouched, ncores, ngpus)
                j += 1

    def __iter__(self) -> Iterator[Node]:
        # Nodes an earlier request already reached, then the rest of the walk (each kept for
        # the requests after this one).  One request walks at a time.
        for node in self._made:
            if node.ncores or node.ngpus:
                yield node
        made = self._made
        for node in self._more:
            made.append(node)
            yield node


# ---------------------------------------------------------------------------------------------
# Placing each kind of request (first fit in rank order).

Taken = dict[int, Children]


def _per_unit(demand: Demand, cores: int, gpus: int) -> tuple[int, int] | None:
    """Cores and GPUs for one unit with ``cores`` and ``gpus`` free: each count at its largest."""
    c = 0 if demand.cores is None else _largest(demand.cores, cores)
    g = 0 if demand.gpus is None else _largest(demand.gpus, gpus)
    if c is None or g is None:
        return None
    return c, g


def _place_slots(group: SlotGroup, nodes: _Walk, taken: Taken) -> int:
    """Slots below node level, across nodes: each slot on one node (readings).

    First fit: each node in rank order takes slots while one still fits; a slot's cores and
    GPUs come from that one node.  Returns the number of slots placed.
    """
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


def _node_holds(
    groups: Sequence[SlotGroup], cores: int, gpus: int
) -> list[tuple[int, int, int]] | None:
    """How many slots of each group one node holds, and each slot's cores and GPUs, or None."""
    plan: list[tuple[int, int, int]] = []
    for group in groups:
        demand = group.demand
        # The most slots that fit at each count's minimum, then the largest acceptable of them.
        need_c = demand.cores.min if demand.cores is not None else 0
        need_g = demand.gpus.min if demand.gpus is not None else 0
        room = min(
            cores // need_c if need_c else cores + gpus, gpus // need_g if need_g else cores + gpus
        )
        k = _largest(group.count, room)
        if k is None:
            return None
        # Then each slot's counts at their largest for an even share of what is left.
        unit = _per_unit(demand, cores // k, gpus // k)
        if unit is None:
            return None
        plan.append((k, *unit))
        cores -= k * unit[0]
        gpus -= k * unit[1]
    return plan


def _place_nodes(request: NodeRequest, nodes: _Walk, taken: Taken) -> int:
    """Nodes outside slots: each node holds every slot group, or is taken whole if exclusive."""
    limit = _upper(request.count)
    chosen: list[tuple[Node, list[tuple[int, int, int]]]] = []
    # Nodes with the same free counts hold the same slots: each count pair is worked out once.
    plans: dict[tuple[int, int], list[tuple[int, int, int]] | None] = {}
    for node in nodes:
        if limit is not None and len(chosen) >= limit:
            break
        # RFC 14, Resources > exclusive: an exclusive node is allocated to this job alone, so
        # it must be untouched by any other allocation.
        if request.exclusive and not node.whole:
            continue
        free = (node.ncores, node.ngpus)
        if free not in plans:
            plans[free] = _node_holds(request.groups, *free)
        plan = plans[free]
        if plan is not None:
            chosen.append((node, plan))
    wanted = _largest(request.count, len(chosen))
    if wanted is None:
        raise BusyError(f"{len(chosen)} node(s) fit only")
    # Slots each plan holds (a node's own cores and GPUs, outside any slot, count none).
    counted = {
        id(plan): sum(
            k for (k, _, _), group in zip(plan, request.groups, strict=True) if group.slot
        )
        for plan in plans.values()
        if plan is not None
    }
    slots = 0
    for node, plan in chosen[:wanted]:
        if request.exclusive:
            _merge(taken, node.rank, node.take_all())
        else:
            for k, c, g in plan:
                _merge(taken, node.rank, node.take(k * c, k * g))
        slots += counted[id(plan)]
    return slots


def _place_slots_of_nodes(request: SlotOfNodes, nodes: _Walk, taken: Taken) -> int:
    """Slots above node level: each slot takes whole nodes (or, if not exclusive, its share)."""
    fit = [
        node
        for node in nodes
        if (node.whole or not request.exclusive)
        and _per_unit(request.demand, node.ncores, node.ngpus) is not None
        and (node.ncores or node.ngpus)
    ]
    limit = _upper(request.count)
    slots: list[list[Node]] = []
    left = fit
    while left and (limit is None or len(slots) < limit):
        n = _largest(request.nodes, len(left))
        if n is None:
            break
        slots.append(left[:n])
        left = left[n:]
    wanted = _largest(request.count, len(slots))
    if wanted is None:
        raise BusyError(f"room for {len(slots)} slot(s) of nodes only")
    for members in slots[:wanted]:
        for node in members:
            if request.exclusive:
                _merge(taken, node.rank, node.take_all())
            else:
                unit = _per_unit(request.demand, node.ncores, node.ngpus)
                assert unit is not None
                _merge(taken, node.rank, node.take(*unit))
    return wanted


def _merge(taken: Taken, rank: int, children: Children) -> None:
    before = taken.get(rank)
    taken[rank] = children if before is None else before.union(children)


_PLACE: dict[type, Callable[[Any, _Walk, Taken], int]] = {
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
    """Place every request, in order, from ``free``; raises BusyError when one does not fit."""
    nodes = _Walk(free, eligible, whole)
    taken: Taken = {}
    slots = 0
    for request in requests:
        slots += _PLACE[type(request)](request, nodes, taken)
    return taken, slots


def _times(
    system: dict[str, Any], now: float | None, pool: ResourceSet
) -> tuple[float | None, float | None]:
    """``starttime`` and ``expiration`` of the allocation (RFC 14, Attributes > duration).

    A duration above zero gives ``expiration = now + duration`` (``now`` is 0 when not given);
    a duration of 0 (or none) is unset, and the pool's own expiration, if any, bounds the
    allocation.
    """
    duration = system.get("duration", 0)
    if duration > 0:
        return now, (now or 0) + duration
    return now, pool.expiration


@dataclass(frozen=True)
class Pool:
    """A pool of resources (an R) and the part of it already allocated, read once.

    A scheduler keeps this between allocations; :meth:`allocate` answers one request.
    """

    resources: ResourceSet
    free: ResourceSet
    whole: IdSet  # ranks no allocation touches
    allocated: bool

    @classmethod
    def load(cls, pool_doc: Any, allocated: Sequence[Any] = ()) -> Pool:
        """Read the pool's R and the Rs already allocated from it (``InvalidError`` if bad)."""
        try:
            pool, _ = load(pool_doc)
        except FormatError as exc:
            raise exc.with_path(("pool",)) from None
        taken: ResourceSet | None = None
        for index, doc in enumerate(allocated):
            try:
                part, _ = load(doc)
            except FormatError as exc:
                raise exc.with_path(("allocated", index)) from None
            taken = part if taken is None else union(taken, part)
        if taken is None:
            return cls(pool, pool, pool.ranks, allocated=False)
        return cls(pool, difference(pool, taken), pool.ranks.difference(taken.ranks), True)

    def allocate(self, jobspec: Any, *, now: float | None = None, edition: str) -> dict[str, Any]:
        """The R allocated for a valid ``jobspec`` (see :func:`allocate`)."""
        # (The walk makes an object per free node: no cycles, so no collections meanwhile.)
        with gc_paused():
            return self._allocate(jobspec, now, edition)

    def _allocate(self, jobspec: Any, now: float | None, edition: str) -> dict[str, Any]:
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
        system = jobspec.get("attributes", {}).get("system", {})
        times = _times(system, now, self.resources)
        return _document(self.resources, taken, slots, times, edition)


def allocate(
    pool_doc: Any,
    jobspec: Any,
    *,
    allocated: Sequence[Any] = (),
    now: float | None = None,
    edition: str,
) -> dict[str, Any]:
    """Allocate from ``pool_doc`` (an R) what ``jobspec`` asks for; return the allocation's R.

    ``allocated`` lists Rs already taken from the pool.  Raises ``InvalidError`` for an invalid
    jobspec or R, :class:`UnsatisfiableError` when the whole pool could never satisfy the
    request, :class:`BusyError` when only what is allocated stands in the way.
    """
    try:
        validate_jobspec(jobspec, edition=edition)
    except FormatError as exc:
        raise exc.with_path(("jobspec",)) from None
    return Pool.load(pool_doc, allocated).allocate(jobspec, now=now, edition=edition)


def _document(
    pool: ResourceSet,
    taken: Taken,
    slots: int,
    times: tuple[float | None, float | None],
    edition: str,
) -> dict[str, Any]:
    runs = _join_runs((rank, rank, taken[rank]) for rank in sorted(taken))
    ranks = IdSet.from_ids(sorted(taken))
    # Host names and properties come from the pool, for the ranks taken.
    hosts = tuple(map(pool.hostnames.__getitem__, pool.positions(ranks)))
    rules = editions.edition_named(edition)
    properties = {}
    for name, where in pool.properties.items():
        # RFC 20, Execution > properties (2026-08-13 on): a scheduler leaves instance-local
        # (+) properties out of the R it allocates.
        if rules.r_instance_local_properties and name.startswith("+"):
            continue
        held = where.intersection(ranks)
        if held:
            properties[name] = held
    result = ResourceSet(tuple(runs), hosts, properties).to_json()
    execution = result["execution"]
    if rules.r_nslots:
        # RFC 20, Execution > nslots (2026-08-13 on): a conforming scheduler writes the total.
        execution["nslots"] = slots
    start, end = times
    if start is not None:
        execution["starttime"] = start
    if end is not None:
        execution["expiration"] = end
    return result


# ---------------------------------------------------------------------------------------------
# The operation.

_INPUT_KEYS = ("pool", "jobspec", "allocated", "now")


def _op_allocate(value: Any, *, edition: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidError("the input must be an object with pool and jobspec")
    for key in ("pool", "jobspec"):
        if key not in value:
            raise InvalidError(f"the input needs {key}")
    for key in value:
        if key not in _INPUT_KEYS:
            raise InvalidError(f"unknown key {key!r}")
    allocated = value.get("allocated", [])
    if not isinstance(allocated, list):
        raise InvalidError("allocated must be an array of R", path=("allocated",))
    now = value.get("now")
    # An optional key is absent or of its schema's type: null is not "not given".
    if "now" in value and (
        isinstance(now, bool)
        or not isinstance(now, int | float)
        or not now >= 0
        or now == float("inf")
    ):
        raise InvalidError("now must be a finite number >= 0", path=("now",))
    return allocate(value["pool"], value["jobspec"], allocated=allocated, now=now, edition=edition)


OPERATIONS: dict[str, Callable[..., Any]] = {
    "sched.allocate": _op_allocate,
}
