"""What the allocation checks need to know about one input, worked out once (:func:`facts`).

The pool and the Rs already allocated from it are decoded through the oracle; an allocated R
whose ``expiration`` is above 0 and at or before the scheduler's clock has ended, and its
resources are free again (readings; RFC 20, Execution > expiration).  Without ``now`` the clock
is only known to lie between :data:`times.CLOCK_FLOOR` and the time of judgement: an R that
ends inside that window may or may not have ended, so each check reads it the lenient way
(its resources may be used, and need not be).
"""

from __future__ import annotations

import time
from typing import Any

from flux_conformance.runner.comparators._oracle import Oracle
from flux_conformance.runner.comparators.allocation.request import read_request
from flux_conformance.runner.comparators.allocation.times import CLOCK_FLOOR

__all__ = ["Rank", "decode", "facts", "newer"]


class Rank:
    """One rank of a decoded R: host, core and GPU ids, property names."""

    __slots__ = ("cores", "gpus", "host", "properties")

    def __init__(self, host: str, cores: frozenset[int], gpus: frozenset[int], properties: Any):
        self.host = host
        self.cores = cores
        self.gpus = gpus
        self.properties = frozenset(properties)


def decode(doc: Any, oracle: Oracle) -> dict[int, Rank]:
    """The ranks of the R ``doc``, by rank (``R.decode`` and ``idset.decode`` of the oracle)."""
    decoded: dict[str, frozenset[int]] = {}

    def ids(text: str) -> frozenset[int]:
        if text not in decoded:
            decoded[text] = frozenset(oracle("idset.decode", text))
        return decoded[text]

    return {
        item["rank"]: Rank(
            item["hostname"],
            ids(item["cores"]),
            ids(item.get("gpus", "")),
            item.get("properties", []),
        )
        for item in oracle("R.decode", doc)
    }


#: The smallest request: one slot of one core from a one-core pool.
_PROBE = {
    "pool": {
        "version": 1,
        "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}], "nodelist": ["n0"]},
    },
    "jobspec": {
        "version": 1,
        "resources": [
            {"type": "slot", "count": 1, "label": "s", "with": [{"type": "core", "count": 1}]}
        ],
        "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
        "attributes": {},
    },
    "now": 1,
}
_NEWER: dict[str | None, bool] = {}


def newer(oracle: Oracle) -> bool:
    """Whether the oracle's edition of the texts has nslots and instance-local properties.

    The edition names belong to the reference, which the runner reaches only through the
    oracle: the oracle's own allocation of the smallest request tells (nslots is written
    exactly in the editions whose RFC 20 defines it).
    """
    if oracle.edition not in _NEWER:
        _NEWER[oracle.edition] = "nslots" in oracle("sched.allocate", _PROBE)["execution"]
    return _NEWER[oracle.edition]


def _number(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return value
    return None


def facts(value: dict[str, Any], oracle: Oracle) -> dict[str, Any]:
    """What the rules need to know about one input, as JSON.

    ``ranks``: each rank of the pool with its ``host``, ``properties``, its free ``cores`` and
    ``gpus`` (ids: what an answer may hold), ``all_cores`` and ``all_gpus``, ``whole`` (no
    allocation holds any of it: an exclusive vertex may take it), ``free`` (the counts of cores
    and GPUs surely free, what a larger answer could have taken), ``untouched`` (surely no
    allocation holds any of it) and ``eligible`` (it satisfies the constraint).  The two
    readings differ only for an allocated R ending between the clock's floor and ceiling.
    ``request``: the units to place (:mod:`request`), null when not judged.  ``times``:
    ``now``, the clock's ``floor`` and ``ceiling`` (the time of judgement), ``duration`` and
    the pool's own ``expiration``.  ``newer``: whether nslots and instance-local properties
    apply.  ``pool_scheduling``: the pool's ``scheduling`` key, or null.
    """
    pool_doc = value["pool"]
    pool = decode(pool_doc, oracle)
    now = _number(value.get("now"))
    low = CLOCK_FLOOR if now is None else now
    high = time.time() if now is None else now
    # (cores, gpus) held surely (by an R that cannot have ended) and possibly.
    sure: dict[int, tuple[set[int], set[int]]] = {}
    maybe: dict[int, tuple[set[int], set[int]]] = {}
    for doc in value.get("allocated", []):
        end = _number(doc.get("execution", {}).get("expiration")) or 0
        ended_surely = 0 < end <= low
        ended_maybe = 0 < end <= high
        if ended_surely:
            continue
        for rank, held in decode(doc, oracle).items():
            for table in (maybe,) if ended_maybe else (maybe, sure):
                cores, gpus = table.setdefault(rank, (set(), set()))
                cores |= held.cores
                gpus |= held.gpus
    system = value["jobspec"].get("attributes", {}).get("system", {})
    constraint = system.get("constraints")
    if constraint is None:
        eligible = set(pool)
    else:
        eligible = set(oracle("constraint.match", {"constraint": constraint, "R": pool_doc}))
    empty: tuple[set[int], set[int]] = (set(), set())
    ranks = {}
    for rank, item in sorted(pool.items()):
        lenient, strict = sure.get(rank, empty), maybe.get(rank, empty)
        ranks[str(rank)] = {
            "host": item.host,
            "cores": sorted(item.cores - lenient[0]),
            "gpus": sorted(item.gpus - lenient[1]),
            "all_cores": sorted(item.cores),
            "all_gpus": sorted(item.gpus),
            "properties": sorted(item.properties),
            "eligible": rank in eligible,
            "whole": not (lenient[0] or lenient[1]) and bool(item.cores or item.gpus),
            "free": [len(item.cores - strict[0]), len(item.gpus - strict[1])],
            "untouched": not (strict[0] or strict[1]) and bool(item.cores or item.gpus),
        }
    execution = pool_doc.get("execution", {})
    return {
        "ranks": ranks,
        "request": read_request(value["jobspec"], oracle),
        "times": {
            "now": now,
            "floor": CLOCK_FLOOR,
            "ceiling": high,
            "duration": system.get("duration", 0),
            "pool_expiration": _number(execution.get("expiration")) or None,
        },
        "newer": newer(oracle),
        "pool_scheduling": pool_doc.get("scheduling"),
    }
