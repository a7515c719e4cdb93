"""RFC 20 resource sets: union, difference and intersection, on rank runs.

Part of :mod:`flux_conformance.reference.rset`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence

from flux_conformance.reference._rset_model import Children, ResourceSet, Run, _run_starts
from flux_conformance.reference._rset_read import _fail
from flux_conformance.reference.idset import IdSet

__all__ = [
    "difference",
    "intersection",
    "union",
]

# ---------------------------------------------------------------------------------------------
# Set operations.

_Combine = Callable[[Children | None, Children | None], Children | None]


def _combine(a: ResourceSet, b: ResourceSet, how: _Combine, *, check_hosts: bool) -> ResourceSet:
    """Sweep the runs of ``a`` and ``b`` together and combine children segment by segment.

    ``how(x, y)`` gets the children of a segment in ``a`` and in ``b`` (``None`` where the
    segment is absent from that side) and returns the result's, or ``None`` to drop the ranks.
    Host names come from ``a`` where it has the rank, otherwise from ``b``.
    """
    # Segments lie between consecutive run boundaries of either side; no run starts or ends
    # inside one, so each side holds a segment whole or not at all.
    bounds = sorted(
        {lo for lo, _, _ in a.runs}
        | {hi + 1 for _, hi, _ in a.runs}
        | {lo for lo, _, _ in b.runs}
        | {hi + 1 for _, hi, _ in b.runs}
    )
    sides = (a, b)
    starts = (_run_starts(a.runs), _run_starts(b.runs))
    index = [0, 0]
    # Keyed by identity: runs share their Children objects, which stay alive meanwhile, and
    # hashing two id() values is far cheaper than hashing two pairs of interval tuples.
    memo: dict[tuple[int, int], Children | None] = {}
    runs: list[Run] = []
    hosts: list[str] = []
    for lo, end in itertools.pairwise(bounds):
        held: list[Children | None] = [None, None]
        where = [0, 0]
        for side in (0, 1):
            side_runs = sides[side].runs
            k = index[side]
            while k < len(side_runs) and side_runs[k][1] < lo:
                k += 1
            index[side] = k
            if k < len(side_runs) and side_runs[k][0] <= lo:
                held[side] = side_runs[k][2]
                where[side] = starts[side][k] + lo - side_runs[k][0]
        x, y = held
        if x is None and y is None:
            continue
        pair = (id(x), id(y))
        if pair not in memo:
            memo[pair] = how(x, y)
        result = memo[pair]
        if result is None:
            continue
        n = end - lo
        if x is not None:
            names = a.hostnames[where[0] : where[0] + n]
            if check_hosts and y is not None and b.hostnames[where[1] : where[1] + n] != names:
                raise _fail("the two sets give a rank different host names", ())
        else:
            names = b.hostnames[where[1] : where[1] + n]
        if runs and runs[-1][1] == lo - 1 and runs[-1][2] == result:
            runs[-1] = (runs[-1][0], end - 1, result)
        else:
            runs.append((lo, end - 1, result))
        hosts.extend(names)
    return ResourceSet(tuple(runs), tuple(hosts), {}, a.starttime, a.expiration)


def _with_properties(
    rs: ResourceSet, sources: Sequence[ResourceSet], *, trim: bool = True
) -> ResourceSet:
    """``rs`` with the properties of ``sources`` merged, restricted to its ranks if ``trim``."""
    ranks = rs.ranks
    merged: dict[str, list[IdSet]] = {}
    for src in sources:
        for name, ids in src.properties.items():
            merged.setdefault(name, []).append(ids)
    props: dict[str, IdSet] = {}
    for name, parts in merged.items():
        found = functools.reduce(IdSet.union, parts)
        if trim:
            found = found & ranks
        if found.intervals:
            props[name] = found
    return ResourceSet(rs.runs, rs.hostnames, props, rs.starttime, rs.expiration)


def _union_children(x: Children | None, y: Children | None) -> Children | None:
    if x is None or y is None:
        return x or y
    return Children(x.cores | y.cores, x.gpus | y.gpus)


def _diff_children(x: Children | None, y: Children | None) -> Children | None:
    if x is None or y is None:
        return x
    left = Children(x.cores - y.cores, x.gpus - y.gpus)
    # A rank that the subtraction left with nothing is gone.
    return None if left.empty else left


def _intersect_children(x: Children | None, y: Children | None) -> Children | None:
    if x is None or y is None:
        return None
    both = Children(x.cores & y.cores, x.gpus & y.gpus)
    return None if both.empty else both


def union(a: ResourceSet, b: ResourceSet) -> ResourceSet:
    """Every (rank, core, GPU) of either set; a rank's properties come from both."""
    # Every rank of either side stays, so the properties need no trimming to the result.
    return _with_properties(_combine(a, b, _union_children, check_hosts=True), (a, b), trim=False)


def difference(a: ResourceSet, b: ResourceSet) -> ResourceSet:
    """Return what ``a`` holds and ``b`` does not; ranks left with nothing are dropped."""
    return _with_properties(_combine(a, b, _diff_children, check_hosts=False), (a,))


def intersection(a: ResourceSet, b: ResourceSet) -> ResourceSet:
    """Return what both sets hold; a remaining rank's properties come from both."""
    return _with_properties(_combine(a, b, _intersect_children, check_hosts=False), (a, b))
