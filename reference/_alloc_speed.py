"""How :mod:`.allocate` keeps its rules fast (private): each trick beside the plain rule it keeps.

Nothing here decides an allocation: every function opens with the rule it implements, in
RFC 14 terms, and ``tests/reference/test_allocate.py`` checks each one against a plain version
of that rule (the test named in the function's docstring).

* :func:`largest_acceptable`: the largest acceptable count, worked out without listing the
  counts (test: ``test_largest_is_the_plain_rule``).
* :class:`Node`: a free rank's free cores and GPUs as int bitsets (tests:
  ``test_lowest_ids_on_bits_and_intervals``, ``test_held_cores_come_back_as_they_were``).
* :func:`children`: the same cores and GPUs taken on many nodes share one object (the
  ``_MADE`` memo; test: ``test_children_are_shared_only_when_equal``).
* :class:`Walk`: the free ranks that satisfy the constraint, made as a walk reaches them (test:
  ``test_the_walk_is_the_plain_rank_loop``).
* :func:`by_free_counts`: nodes with the same free counts hold the same slots (test:
  ``test_plans_by_free_counts_are_the_plain_plans``).
* :func:`most_free_first`: units placed one by one on the node with the most free, with a heap
  (test: ``test_most_free_first_is_the_plain_loop``).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from flux_conformance.reference._rset_children import _as_idset
from flux_conformance.reference.idset import IdSet
from flux_conformance.reference.ranges import Count
from flux_conformance.reference.rset import Children, ResourceSet

__all__ = [
    "Node",
    "Walk",
    "by_free_counts",
    "children",
    "largest_acceptable",
    "lowest",
    "most_free_first",
]


def largest_acceptable(count: Count, available: int) -> int | None:
    """The largest acceptable count not above ``available`` (None: even the least is above).

    Plain rule (RFC 14, Resources > count): list the acceptable counts up to ``available``
    and take the last.  Here a fixed count is its one value, and a range with ``+`` is found
    by arithmetic (the list of a min-only count on a large pool would be long).
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


def _size(ids: int | IdSet) -> int:
    return ids.bit_count() if isinstance(ids, int) else ids.size


def lowest(ids: int | IdSet, n: int) -> int | IdSet:
    """The ``n`` lowest ids of a set (a slot takes the first free cores and GPUs).

    Plain rule: sort the free ids and take the first ``n``.  Here ids below 4,096 are int
    bitsets: clearing the lowest set bit ``n`` times leaves the rest.
    """
    if isinstance(ids, int):
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


def _with(ids: int | IdSet, part: int | IdSet) -> int | IdSet:
    if isinstance(ids, int) and isinstance(part, int):
        return ids | part
    return _as_idset(ids).union(_as_idset(part))


def _without(ids: int | IdSet, part: int | IdSet) -> int | IdSet:
    if isinstance(ids, int) and isinstance(part, int):
        return ids ^ part  # part is a subset of ids
    return _as_idset(ids).difference(_as_idset(part))


@dataclass(slots=True)
class Node:
    """One free rank as the allocator sees it: what is left, and whether it is untouched.

    Plain form: the rank's free core ids and GPU ids as sets.  Here they are int bitsets
    (an IdSet for ids past 4,095), with their sizes kept beside them.
    """

    rank: int
    cores: int | IdSet
    gpus: int | IdSet
    whole: bool
    ncores: int
    ngpus: int

    def take(self, ncores: int, ngpus: int) -> Children:
        """Take the lowest ``ncores`` cores and ``ngpus`` GPUs still free here."""
        cores, gpus = lowest(self.cores, ncores), lowest(self.gpus, ngpus)
        if type(cores) is int and type(gpus) is int:
            self.cores ^= cores  # type: ignore[operator]  # bits: a part of them is taken
            self.gpus ^= gpus  # type: ignore[operator]
        else:
            self.cores, self.gpus = _without(self.cores, cores), _without(self.gpus, gpus)
        self.ncores -= ncores
        self.ngpus -= ngpus
        self.whole = False
        return children(cores, gpus)

    def take_all(self) -> Children:
        """Take everything still free here."""
        return self.take(self.ncores, self.ngpus)

    def hold(self, part: Children) -> tuple[bool, int, int]:
        """Set ``part`` (free here) aside for a later request.

        Returns what :meth:`give_back` needs to tell whether the node is untouched again.
        """
        cores, gpus = part.core_ids, part.gpu_ids
        self.cores, self.gpus = _without(self.cores, cores), _without(self.gpus, gpus)
        self.ncores -= _size(cores)
        self.ngpus -= _size(gpus)
        was, self.whole = self.whole, False
        return was, self.ncores, self.ngpus

    def give_back(self, part: Children, held: tuple[bool, int, int]) -> None:
        """Free ``part`` again, set aside by :meth:`hold`.

        The node is untouched again if it was before and nothing was taken from it meanwhile.
        """
        was, ncores, ngpus = held
        untouched = was and (self.ncores, self.ngpus) == (ncores, ngpus)
        cores, gpus = part.core_ids, part.gpu_ids
        self.cores, self.gpus = _with(self.cores, cores), _with(self.gpus, gpus)
        self.ncores += _size(cores)
        self.ngpus += _size(gpus)
        self.whole = untouched


#: The Children made for what nodes take, by their ids: nodes that take the same cores and
#: GPUs share one object, so an allocation of many nodes writes each distinct one once.
_MADE: dict[tuple[int, int], Children] = {}


def children(cores: int | IdSet, gpus: int | IdSet) -> Children:
    """The children holding ``cores`` and ``gpus``.

    Plain rule: ``Children(cores, gpus)``.  Here equal bitsets give the same object (kept in
    ``_MADE``, at most 4,097 of them), so the R writer meets each distinct one once.
    """
    if not (isinstance(cores, int) and isinstance(gpus, int)):
        return Children(cores, gpus)
    made = _MADE.get((cores, gpus))
    if made is None:
        if len(_MADE) > 4096:
            _MADE.clear()
        made = _MADE[(cores, gpus)] = Children(cores, gpus)
    return made


class Walk:
    """The free ranks that satisfy the constraint, ascending, made as a request reaches them.

    Plain rule: for each free rank in ascending order, if it satisfies the constraint, its
    free cores and GPUs, and whether no allocation touches it.  Here the free runs and the
    eligible intervals are walked together, and a node is made only when a request gets to
    it.  Requests are placed one after another on the same nodes, so nodes already made are
    kept (with what each request left on them) and the walk goes on from there.
    """

    def __init__(self, free: ResourceSet, eligible: IdSet, whole: IdSet) -> None:
        self._made: list[Node] = []
        self._more = self._generate(free, eligible, whole)

    @staticmethod
    def _generate(free: ResourceSet, eligible: IdSet, whole: IdSet) -> Iterator[Node]:
        allowed = free.ranks.intersection(eligible).intervals
        untouched = set(whole.intersection(eligible).to_list())
        if allowed == free.ranks.intervals:
            # Every free rank satisfies the constraint (or there is none): the runs alone.
            for lo, hi, held in free.runs:
                cores, gpus = held.core_ids, held.gpu_ids
                ncores = cores.bit_count() if type(cores) is int else _size(cores)
                ngpus = gpus.bit_count() if type(gpus) is int else _size(gpus)
                for rank in range(lo, hi + 1):
                    yield Node(rank, cores, gpus, rank in untouched, ncores, ngpus)
            return
        i = 0
        for lo, hi, held in free.runs:
            cores, gpus = held.core_ids, held.gpu_ids
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


Plan = TypeVar("Plan")


def by_free_counts(plan: Callable[[int, int], Plan]) -> Callable[[int, int], Plan]:
    """``plan(cores, gpus)``, worked out once for each pair of free counts.

    Plain rule: work out what each node holds from its own free cores and GPUs.  Nodes with
    the same free counts hold the same, so a fragmented pool of thousands of nodes (with a
    few dozen distinct free counts) asks for a few dozen plans.
    """
    plans: dict[tuple[int, int], Plan] = {}

    def cached(cores: int, gpus: int) -> Plan:
        key = (cores, gpus)
        if key not in plans:
            plans[key] = plan(cores, gpus)
        return plans[key]

    return cached


def most_free_first(free: list[tuple[int, int]], unit: tuple[int, int], k: int) -> list[int]:
    """Place ``k`` units of ``unit`` (cores, GPUs) one by one; return the node of each.

    Plain rule: each unit goes to the node with the most free (cores, then GPUs, counting
    what the units before it took; the first such node in the list on a tie) among those
    where it still fits.  Here the nodes are kept in a heap.  ``free`` lists each node's free
    (cores, GPUs); the caller has checked that the ``k`` units fit.
    """
    need_c, need_g = unit
    heap = [(-c, -g, index) for index, (c, g) in enumerate(free) if c >= need_c and g >= need_g]
    heapq.heapify(heap)
    chosen: list[int] = []
    for _ in range(k):
        c, g, index = heapq.heappop(heap)
        chosen.append(index)
        c, g = -c - need_c, -g - need_g
        if c >= need_c and g >= need_g:
            heapq.heappush(heap, (-c, -g, index))
    return chosen
