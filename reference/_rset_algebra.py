"""RFC 20 resource sets: union, difference and intersection, on rank runs.

Part of :mod:`flux_conformance.reference.rset`.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Callable, Sequence

from flux_conformance.reference._rset_model import (
    CONTENT,
    Children,
    PropertySets,
    ResourceSet,
    Run,
    _succ,
)
from flux_conformance.reference._rset_read import _fail, _join_runs
from flux_conformance.reference.idset import IdSet

__all__ = [
    "difference",
    "intersection",
    "union",
]

# ---------------------------------------------------------------------------------------------
# Set operations.

_Combine = Callable[[Children | None, Children | None], Children | None]


def _combine(
    a: ResourceSet, b: ResourceSet, how: _Combine, *, check_hosts: bool, sides: tuple[bool, bool]
) -> ResourceSet:
    """Walk the runs of ``a`` and ``b`` together and combine children segment by segment.

    ``how(x, y)`` gets the children of a segment in ``a`` and in ``b`` (``None`` where the
    segment is absent from that side) and returns the result's, or ``None`` to drop the ranks;
    ``sides`` tells what it does with a segment of one side alone: keep it (True) or drop it.
    Host names come from ``a`` where it has the rank, otherwise from ``b``.
    """
    count = len(a.runs) + len(b.runs)
    if count >= _MANY_RUNS and len(a.hostnames) + len(b.hostnames) <= _RANKS_PER_RUN * count:
        return _combine_ranks(a, b, how, check_hosts=check_hosts, sides=sides)
    runs_a, runs_b = a.runs, b.runs
    count_a, count_b = len(runs_a), len(runs_b)
    # Keyed by identity: runs share their Children objects, which stay alive meanwhile, and
    # hashing two id() values is far cheaper than hashing two pairs of interval tuples.
    memo: dict[tuple[int, int], Children | None] = {}
    runs: list[Run] = []
    hosts: list[str] = []

    def emit(
        lo: int, hi: int, x: Children | None, y: Children | None, names: Sequence[str]
    ) -> None:
        pair = (id(x), id(y))
        if pair in memo:
            result = memo[pair]
        else:
            result = memo[pair] = how(x, y)
        if result is None:
            return
        if runs and runs[-1][1] == lo - 1 and (runs[-1][2] is result or runs[-1][2] == result):
            runs[-1] = (runs[-1][0], hi, result)
        else:
            runs.append((lo, hi, result))
        hosts.extend(names)

    # i, j: the current run of each side; lo_a, lo_b: where its unconsumed part starts;
    # at, bt: the index of that rank among the side's host names.
    i = j = at = bt = 0
    lo_a = runs_a[0][0] if runs_a else 0
    lo_b = runs_b[0][0] if runs_b else 0
    while i < count_a and j < count_b:
        _, hi_a, x = runs_a[i]
        _, hi_b, y = runs_b[j]
        if lo_a < lo_b:
            # A stretch only ``a`` holds, up to b's run or the end of a's.
            end = min(hi_a, lo_b - 1)
            emit(lo_a, end, x, None, a.hostnames[at : at + end - lo_a + 1])
            at += end - lo_a + 1
        elif lo_b < lo_a:
            end = min(hi_b, lo_a - 1)
            emit(lo_b, end, None, y, b.hostnames[bt : bt + end - lo_b + 1])
            bt += end - lo_b + 1
        else:
            end = min(hi_a, hi_b)
            n = end - lo_a + 1
            names = a.hostnames[at : at + n]
            if check_hosts and b.hostnames[bt : bt + n] != names:
                raise _fail("the two sets give a rank different host names", ())
            emit(lo_a, end, x, y, names)
            at += n
            bt += n
        if end == hi_a:
            i += 1
            lo_a = runs_a[i][0] if i < count_a else 0
        elif lo_a <= end:
            lo_a = end + 1
        if end == hi_b:
            j += 1
            lo_b = runs_b[j][0] if j < count_b else 0
        elif lo_b <= end:
            lo_b = end + 1
    # What is left of one side after the other ran out.
    for k in range(i, count_a):
        start, hi, x = runs_a[k]
        lo = lo_a if k == i else start
        emit(lo, hi, x, None, a.hostnames[at : at + hi - lo + 1])
        at += hi - lo + 1
    for k in range(j, count_b):
        start, hi, y = runs_b[k]
        lo = lo_b if k == j else start
        emit(lo, hi, None, y, b.hostnames[bt : bt + hi - lo + 1])
        bt += hi - lo + 1
    return ResourceSet(tuple(runs), tuple(hosts), {}, a.starttime, a.expiration)


#: Sets of many runs with at most this many ranks per run (fragmented ones, and a full R
#: against an allocation) are combined rank by rank: a C-level step per rank is cheaper than
#: a Python step per segment of the walk once runs are this short.  (Under _MANY_RUNS runs,
#: either way takes microseconds, and the walk is taken.)
_RANKS_PER_RUN = 4
_MANY_RUNS = 32
_LOWER: Callable[[Run], int] = operator.itemgetter(0)
_UPPER: Callable[[Run], int] = operator.itemgetter(1)
_CHILDREN: Callable[[Run], Children] = operator.itemgetter(2)


def _per_rank(runs: Sequence[Run]) -> dict[int, Children]:
    """Each rank of ``runs`` (ascending, disjoint) to its children, in rank order."""
    if all(map(operator.eq, map(_LOWER, runs), map(_UPPER, runs))):
        return dict(zip(map(_LOWER, runs), map(_CHILDREN, runs), strict=True))
    out: dict[int, Children] = {}
    for lo, hi, children in runs:
        out.update(dict.fromkeys(range(lo, hi + 1), children))
    return out


def _join_ranks(ranks: list[int], kids: list[Children]) -> tuple[Run, ...]:
    """Runs of the ascending single ``ranks``, neighbours holding equal children joined."""
    # Mostly none are (every rank of a fragmented set holds its own cores): found in C passes
    # over the children's contents instead of a Python step per rank.
    contents = list(map(CONTENT, kids))
    equal = map(operator.eq, contents, itertools.islice(contents, 1, None))
    consecutive = map(operator.eq, map(_succ, ranks), itertools.islice(ranks, 1, None))
    runs = zip(ranks, ranks, kids, strict=True)
    if any(map(operator.and_, equal, consecutive)):
        return _join_runs(runs)
    return tuple(runs)


def _combine_ranks(
    a: ResourceSet, b: ResourceSet, how: _Combine, *, check_hosts: bool, sides: tuple[bool, bool]
) -> ResourceSet:
    """:func:`_combine` rank by rank, for sets of short runs (fragmented allocations).

    Per rank, with dictionaries and C-level passes: ``how`` is called for the shared ranks
    only, the ranks of one side alone are kept or dropped whole as ``sides`` says.
    """
    kids_a = _per_rank(a.runs)
    kids_b = _per_rank(b.runs)
    hosts_a = dict(zip(kids_a, a.hostnames, strict=True))
    hosts_b = dict(zip(kids_b, b.hostnames, strict=True))
    shared = sorted(kids_a.keys() & kids_b.keys())
    if check_hosts and list(map(hosts_a.__getitem__, shared)) != list(
        map(hosts_b.__getitem__, shared)
    ):
        raise _fail("the two sets give a rank different host names", ())
    found: dict[int, Children | None] = {}
    if sides[0]:
        found.update(kids_a)
    if sides[1]:
        found.update(kids_b)
    found.update(
        zip(
            shared,
            map(how, map(kids_a.__getitem__, shared), map(kids_b.__getitem__, shared)),
            strict=True,
        )
    )
    ranks = sorted(rank for rank, kids in found.items() if kids is not None)
    hosts = tuple(map({**hosts_b, **hosts_a}.__getitem__, ranks))
    kids: list[Children] = list(map(found.__getitem__, ranks))  # type: ignore[arg-type]
    return ResourceSet(_join_ranks(ranks, kids), hosts, {}, a.starttime, a.expiration)


def _with_properties(
    rs: ResourceSet, sources: Sequence[ResourceSet], *, trim: bool = True
) -> ResourceSet:
    """``rs`` with the properties of ``sources`` merged, restricted to its ranks if ``trim``."""
    names = dict.fromkeys(name for src in sources for name in src.properties)
    bits: dict[str | None, int] = {}
    bitwise = all(src.small for src in sources)
    keep = None
    if trim and bitwise and len(rs.ranks.intervals) > 1:
        # Scattered properties cut to scattered ranks: one C operation per property on int
        # bitsets, where interval merges would step through thousands of intervals.  (Cut to
        # one span of ranks, an interval list is only bisected at the span's two ends.)
        keep = bits[None] = rs.rank_bits()
    held: dict[str, IdSet | None] = {}  # every result property; None where bits hold it
    texts: dict[str, str] = {}
    for name in names:
        holders = [src for src in sources if name in src.properties]
        one = len(holders) == 1
        # A set one holder holds as bits stays bits (cut by one C operation if need be, and
        # keeping its text if nothing was cut); other sets merge as intervals unless they are
        # many (or scattered ranks cut them), where one C operation on bitsets does the merge.
        alone = one and _held_as_bits(holders[0], name)
        if keep is None and not alone and (one or not (bitwise and _many(holders, name))):
            sets = [src.properties[name] for src in holders]
            found = functools.reduce(IdSet.union, sets)
            if trim:
                found = found & rs.ranks
            if found.intervals:
                held[name] = found
            continue
        merged = functools.reduce(operator.or_, [src.property_bits(name) for src in holders])
        if keep is None and trim:
            keep = bits[None] = rs.rank_bits()
        cut = merged if keep is None else merged & keep
        if not cut:
            continue
        bits[name] = cut
        held[name] = None
        if one and cut == merged:
            # The set passes whole: it keeps the text it was read from.
            text = _known_text(holders[0], name)
            if text is not None:
                texts[name] = text
    bitsets = {name: bits[name] for name, ids in held.items() if ids is None}
    result = ResourceSet(
        rs.runs, rs.hostnames, PropertySets(held, bitsets, texts), rs.starttime, rs.expiration
    )
    return result._keep_bits(bits)


def _many(holders: Sequence[ResourceSet], name: str) -> bool:
    """Whether merging ``name`` over ``holders`` is cheaper on bitsets than on intervals."""
    for src in holders:
        if _held_as_bits(src, name):
            return True  # (decoding it would cost more)
        if len(src.properties[name].intervals) > _FEW_INTERVALS:
            return True
    return False


def _held_as_bits(src: ResourceSet, name: str) -> bool:
    """Whether ``src`` holds property ``name`` as a bitset (read from a long list)."""
    return src.held_bits(name) is not None


def _known_text(src: ResourceSet, name: str) -> str | None:
    props = src.properties
    return props.source_text(name) if isinstance(props, PropertySets) else None


#: Merging sets of more intervals than this goes through their bitsets (small ranks only).
_FEW_INTERVALS = 64


def _union_children(x: Children | None, y: Children | None) -> Children | None:
    if x is None or y is None:
        return x or y
    return x.union(y)


def _diff_children(x: Children | None, y: Children | None) -> Children | None:
    if x is None or y is None:
        return x
    left = x.difference(y)
    # A rank that the subtraction left with nothing is gone.
    return None if left.empty else left


def _intersect_children(x: Children | None, y: Children | None) -> Children | None:
    if x is None or y is None:
        return None
    both = x.intersection(y)
    return None if both.empty else both


def union(a: ResourceSet, b: ResourceSet) -> ResourceSet:
    """Every (rank, core, GPU) of either set; a rank's properties come from both."""
    both = _combine(a, b, _union_children, check_hosts=True, sides=(True, True))
    # Every rank of either side stays, so the properties need no trimming to the result.
    return _with_properties(both, (a, b), trim=False)


def difference(a: ResourceSet, b: ResourceSet) -> ResourceSet:
    """Return what ``a`` holds and ``b`` does not; ranks left with nothing are dropped."""
    left = _combine(a, b, _diff_children, check_hosts=False, sides=(True, False))
    return _with_properties(left, (a,))


def intersection(a: ResourceSet, b: ResourceSet) -> ResourceSet:
    """Return what both sets hold; a remaining rank's properties come from both."""
    common = _combine(a, b, _intersect_children, check_hosts=False, sides=(False, False))
    return _with_properties(common, (a, b))
