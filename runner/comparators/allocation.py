"""The ``allocation_rules`` comparator, for ``sched.allocate``: an allocation judged by rules.

Many allocations answer one request correctly, so a case does not hold one expected R.  It
states what is determined (:data:`DETERMINED`), and every answer is checked against the rules
the specs give a scheduler.  Each check, and where it comes from:

``valid``
    The answer is a valid R (RFC 20, R Format).
``subset``
    Every rank, host name, core, GPU and property of the answer is in the pool, on the same
    rank, and no core or GPU is one that ``allocated`` already holds (RFC 20, Overview: R is
    built from the pool; RFC 14, Reserved Resource Types > slot: a slot's resources are the
    program's alone).
``counts``
    Each count of the request is the largest acceptable count that the free part of the pool
    could hold: exactly the count when it is fixed, the largest acceptable value up to ``max``
    following the operator and operand otherwise (RFC 14, Resources > count).  Checked for the
    node count and the slots per node of ``node > slot > core/gpu``, for the slot count of
    ``slot > core/gpu`` with fixed per-slot counts, and for the slot count of ``slot > node``
    with a fixed node count, and, for ``node > slot > core/gpu`` with one slot a node, for the
    cores and GPUs of each node's slot when their counts are ranges (the largest acceptable
    count free on that node).  Where a per-slot count is a range and there are several slots
    a node, or no node level, the case states the figures.
``one-node``
    A slot below node level lies on one node: each rank holds whole slots (readings, RFC 14).
``exclusive``
    An exclusive node (``exclusive: true``, or a node inside a slot without ``exclusive:
    false``) is allocated whole: all its cores and GPUs, none held by another allocation
    (RFC 14, Resources > exclusive).  A node outside any slot is shared by default: only the
    slots' cores and GPUs are taken (checked by ``counts``).
``constraint``
    Every allocated rank satisfies ``attributes.system.constraints``, evaluated on the pool as
    ``constraint.match`` does (RFC 31; RFC 14, Attributes > constraints).
``times``
    With a ``duration`` above zero, ``expiration`` equals the given ``now`` (0 when absent)
    plus the duration; a ``starttime`` that is present equals ``now`` (RFC 14, Attributes >
    duration; RFC 20, Execution > starttime, expiration).
``nslots``
    From the 2026-08-13 texts on: ``nslots`` is present, above zero, and equals the number of
    slots the request was given (RFC 20, Execution > nslots).
``instance-local``
    From the 2026-08-13 texts on: no property starting with ``+`` (RFC 20, Execution >
    properties).

The determined figures a case may state (each compared exactly): ``nodes`` (number of ranks),
``cores`` and ``gpus`` (totals), ``cores_per_rank``, ``nslots``, ``ranks`` (an idset the
ranks must equal), ``ranks_within`` (an idset holding them all), ``properties`` (the property
names, sorted), ``starttime`` and ``expiration`` (``null``: absent or 0).

Compared with another implementation's answer (``flux-conformance diff``), the expected value
is an R: the two disagree when one breaks a rule the other keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from flux_conformance.runner.comparators._oracle import Oracle, Refused

__all__ = ["DETERMINED", "allocation_rules", "facts", "judge", "rule_breaches"]

#: The figures a case may state about the allocation.
DETERMINED = (
    "nodes",
    "cores",
    "gpus",
    "cores_per_rank",
    "nslots",
    "ranks",
    "ranks_within",
    "properties",
    "starttime",
    "expiration",
)


@dataclass
class _Rank:
    host: str
    cores: frozenset[int]
    gpus: frozenset[int]
    properties: frozenset[str]


def _ranks(doc: Any, oracle: Oracle) -> dict[int, _Rank]:
    decoded: dict[str, frozenset[int]] = {}

    def ids(text: str) -> frozenset[int]:
        if text not in decoded:
            decoded[text] = frozenset(oracle("idset.decode", text))
        return decoded[text]

    return {
        item["rank"]: _Rank(
            item["hostname"],
            ids(item["cores"]),
            ids(item.get("gpus", "")),
            frozenset(item.get("properties", [])),
        )
        for item in oracle("R.decode", doc)
    }


# -- the request, read from the jobspec -------------------------------------------------------


@dataclass(frozen=True)
class _Shape:
    """The request shapes whose counts the comparator checks (``kind`` None: none of them)."""

    kind: str | None = None  # "nodes" (node > slot), "slots" (slot > core/gpu), "slot-nodes"
    nodes: Any = None  # the node count (per slot for "slot-nodes")
    slots: Any = None  # the slot count (per node for "nodes")
    cores: Any = None  # per slot (per node for "slot-nodes"); None: no core vertex
    gpus: Any = None
    exclusive: bool = False  # whole nodes


def _leaves(children: list[Any]) -> tuple[Any, Any] | None:
    """The core and gpu counts of a list of leaf vertices, or None if it holds anything else."""
    found: dict[str, Any] = {}
    for child in children:
        kind = child.get("type")
        if kind not in ("core", "gpu") or "with" in child or kind in found:
            return None
        found[kind] = child.get("count")
    return found.get("core"), found.get("gpu")


def _shape(jobspec: Any) -> _Shape:
    try:
        (top,) = jobspec["resources"]
        if top["type"] == "node":
            (slot,) = top["with"]
            if slot["type"] != "slot":
                return _Shape()
            leaves = _leaves(slot["with"])
            if leaves is None:
                return _Shape()
            return _Shape(
                "nodes", top["count"], slot["count"], *leaves, top.get("exclusive") is True
            )
        if top["type"] == "slot":
            leaves = _leaves(top["with"])
            if leaves is not None:
                return _Shape("slots", None, top["count"], *leaves)
            (node,) = top["with"]
            if node["type"] != "node":
                return _Shape()
            leaves = _leaves(node.get("with", []))
            if leaves is None:
                return _Shape()
            return _Shape(
                "slot-nodes", node["count"], top["count"], *leaves, node.get("exclusive", True)
            )
    except (KeyError, TypeError, ValueError, AttributeError):
        pass
    return _Shape()


def _fixed(count: Any) -> int | None:
    """The count when it is one number, else None."""
    if isinstance(count, int) and not isinstance(count, bool):
        return count
    if isinstance(count, str) and count.isdigit():
        return int(count)
    if isinstance(count, dict) and count.get("max", object()) == count.get("min"):
        return int(count["min"])
    return None


@dataclass
class _Counts:
    """Acceptable counts through the oracle (``count.values``), remembered per (count, limit)."""

    oracle: Oracle
    memo: dict[tuple[str, int], list[int]] = field(default_factory=dict)

    def values(self, count: Any, limit: int) -> list[int]:
        import json

        key = (json.dumps(count, sort_keys=True), limit)
        if key not in self.memo:
            self.memo[key] = self.oracle("count.values", {"count": count, "limit": limit})
        return self.memo[key]

    def largest(self, count: Any, available: int) -> int | None:
        """RFC 14: the count an R must hold when ``available`` are free (None: too few)."""
        found = self.values(count, available)
        return found[-1] if found else None


# -- the checks -------------------------------------------------------------------------------


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
}
_NEWER: dict[str | None, bool] = {}


def _newer(oracle: Oracle) -> bool:
    """Whether the oracle's edition of the texts has nslots and instance-local properties.

    The edition names belong to the reference, which the runner reaches only through the
    oracle: the oracle's own allocation of the smallest request tells (nslots is written
    exactly in the editions whose RFC 20 defines it).
    """
    if oracle.edition not in _NEWER:
        _NEWER[oracle.edition] = "nslots" in oracle("sched.allocate", _PROBE)["execution"]
    return _NEWER[oracle.edition]


def _per_slot(shape: _Shape) -> tuple[int, int] | None:
    cores = 0 if shape.cores is None else _fixed(shape.cores)
    gpus = 0 if shape.gpus is None else _fixed(shape.gpus)
    if cores is None or gpus is None or (cores, gpus) == (0, 0):
        return None
    return cores, gpus


def _leaf_counts(shape: _Shape) -> tuple[tuple[Any, str], tuple[Any, str]]:
    """The per-slot core and GPU counts, each with its key in a rank's facts."""
    return (shape.cores, "cores"), (shape.gpus, "gpus")


def _leaf(count: Any, free: int, counts: _Counts) -> int | None:
    """What one slot holds of a leaf with ``free`` of it on the node (None: it does not fit)."""
    if count is None:
        return 0
    fixed = _fixed(count)
    if fixed is not None:
        return fixed if fixed <= free else None
    return counts.largest(count, free)


def _room(cores: int, gpus: int, unit: Sequence[int]) -> int:
    """How many units of (cores, gpus) fit in ``cores`` and ``gpus``."""
    c, g = unit
    return min(cores // c if c else cores + gpus, gpus // g if g else cores + gpus)


def facts(value: dict[str, Any], oracle: Oracle) -> dict[str, Any]:
    """What the rules need to know about one input, worked out once, as JSON.

    ``ranks``: each rank of the pool with its host, its free and its own cores and GPUs, its
    properties, whether it satisfies the constraint (``eligible``) and whether no allocation
    touches it (``whole``).  ``counts``: for the request shapes the comparator checks, what
    the count rules require of the R (``nodes``, ``slots``, the per-slot ``unit`` of cores
    and GPUs, ``slots_per_rank``, ``nodes_per_slot``, ``exclusive``); null for other
    shapes.  ``times``: ``now``, ``duration`` and the pool's own ``expiration``.  ``newer``:
    whether nslots and instance-local properties apply.
    """
    pool = _ranks(value["pool"], oracle)
    free = {r: (x.cores, x.gpus) for r, x in pool.items()}
    for doc in value.get("allocated", []):
        for rank, held in _ranks(doc, oracle).items():
            if rank in free:
                cores, gpus = free[rank]
                free[rank] = (cores - held.cores, gpus - held.gpus)
    system = value["jobspec"].get("attributes", {}).get("system", {})
    constraint = system.get("constraints")
    if constraint is None:
        eligible = set(pool)
    else:
        eligible = set(oracle("constraint.match", {"constraint": constraint, "R": value["pool"]}))
    ranks = {
        str(rank): {
            "host": item.host,
            "cores": sorted(free[rank][0]),
            "gpus": sorted(free[rank][1]),
            "all_cores": sorted(item.cores),
            "all_gpus": sorted(item.gpus),
            "properties": sorted(item.properties),
            "eligible": rank in eligible,
            "whole": free[rank] == (item.cores, item.gpus) and bool(item.cores or item.gpus),
        }
        for rank, item in sorted(pool.items())
    }
    duration = system.get("duration", 0)
    pool_end = value["pool"].get("execution", {}).get("expiration") or None
    return {
        "ranks": ranks,
        "counts": _counts(_shape(value["jobspec"]), ranks, _Counts(oracle)),
        "times": {"now": value.get("now"), "duration": duration, "pool_expiration": pool_end},
        "newer": _newer(oracle),
    }


def _counts(shape: _Shape, ranks: dict[str, Any], counts: _Counts) -> dict[str, Any] | None:
    """What RFC 14's count rules require of the R, for the shapes the comparator checks."""
    if shape.kind is None:
        return None
    unit = _per_slot(shape)
    usable = {
        r: x for r, x in ranks.items() if x["eligible"] and (x["whole"] or not shape.exclusive)
    }
    out: dict[str, Any] = {
        "kind": shape.kind,
        "unit": list(unit) if unit else None,
        "exclusive": shape.exclusive,
        "nodes": None,
        "slots": None,
        "slots_per_rank": None,
        "held_per_rank": None,
        "nodes_per_slot": None,
    }
    if shape.kind == "nodes" and unit is None and _fixed(shape.slots) == 1:
        # One slot a node whose core or GPU count is a range: on each node the slot holds the
        # largest acceptable count of each that is free there (RFC 14, count).  With several
        # slots a node, how a node's cores are shared between them is not known from R.
        held = {}
        for r, x in usable.items():
            got = [_leaf(count, len(x[key]), counts) for count, key in _leaf_counts(shape)]
            if None not in got and any(got):
                held[r] = got
        out["held_per_rank"] = held
        out["slots_per_rank"] = dict.fromkeys(held, 1)
        out["nodes"] = counts.largest(shape.nodes, len(held))
    elif shape.kind == "nodes" and unit is not None:
        # Each node holds the largest acceptable number of slots that fits on it; the node
        # count is the largest acceptable number of such nodes.
        holds = {}
        for r, x in usable.items():
            k = counts.largest(shape.slots, _room(len(x["cores"]), len(x["gpus"]), unit))
            if k is not None:
                holds[r] = k
        out["slots_per_rank"] = holds
        out["nodes"] = counts.largest(shape.nodes, len(holds))
    elif shape.kind == "slots" and unit is not None:
        room = sum(_room(len(x["cores"]), len(x["gpus"]), unit) for x in usable.values())
        out["slots"] = counts.largest(shape.slots, room)
    elif shape.kind == "slot-nodes":
        need = unit or (0, 0)
        fits = [
            x
            for x in usable.values()
            if len(x["cores"]) >= need[0]
            and len(x["gpus"]) >= need[1]
            and (x["cores"] or x["gpus"])
        ]
        n = _fixed(shape.nodes)
        out["nodes_per_slot"] = n
        if n is not None:
            out["slots"] = counts.largest(shape.slots, len(fits) // n)
    return out


Ranks = dict[int, _Rank]


def _check_subset(known: dict[str, Any], got: Ranks) -> str | None:
    for rank, item in sorted(got.items()):
        have = known["ranks"].get(str(rank))
        if have is None:
            return f"rank {rank} is not in the pool"
        if item.host != have["host"]:
            return f"rank {rank} is host {item.host!r}; the pool says {have['host']!r}"
        if not item.cores <= set(have["cores"]) or not item.gpus <= set(have["gpus"]):
            return f"rank {rank} holds cores or GPUs that are not free in the pool"
        if not item.properties <= set(have["properties"]):
            extra = sorted(item.properties - set(have["properties"]))
            return f"rank {rank} has properties the pool does not give it: {extra}"
    return None


def _check_constraint(known: dict[str, Any], got: Ranks) -> str | None:
    ranks = known["ranks"]
    outside = [r for r in sorted(got) if str(r) in ranks and not ranks[str(r)]["eligible"]]
    if outside:
        return f"rank {outside[0]} does not satisfy the constraint"
    return None


def _check_counts(known: dict[str, Any], got: Ranks) -> tuple[str | None, int]:
    """The count, one-node and exclusive rules; also the slot total when it is known (-1)."""
    rule = known["counts"]
    if rule is None:
        return None, -1
    ranks = known["ranks"]
    if rule["exclusive"]:
        for rank, item in sorted(got.items()):
            x = ranks[str(rank)]
            if not x["whole"] or (sorted(item.cores), sorted(item.gpus)) != (
                x["all_cores"],
                x["all_gpus"],
            ):
                return f"rank {rank} is exclusive but not allocated whole", 0
    unit = rule["unit"]
    if rule["nodes"] is not None and len(got) != rule["nodes"]:
        return f"holds {len(got)} node(s); the node count asks for {rule['nodes']}", 0
    if rule["kind"] == "nodes" and rule.get("held_per_rank") is not None:
        for rank, item in sorted(got.items()):
            want = rule["held_per_rank"].get(str(rank))
            if want is None:
                return f"rank {rank} cannot hold the slot asked for on each node", 0
            has = [len(item.cores), len(item.gpus)]
            if not rule["exclusive"] and has != want:
                return (
                    f"rank {rank} holds {has[0]} core(s) and {has[1]} GPU(s); its slot holds "
                    f"the largest acceptable count free there: {want[0]} and {want[1]}",
                    0,
                )
        return None, len(got)
    if rule["kind"] == "nodes" and unit is not None:
        total = 0
        for rank, item in sorted(got.items()):
            k = rule["slots_per_rank"].get(str(rank))
            if k is None:
                return f"rank {rank} cannot hold the slots asked for on each node", 0
            total += k
            held = (len(item.cores), len(item.gpus))
            if not rule["exclusive"] and held != (k * unit[0], k * unit[1]):
                return (
                    f"rank {rank} holds {held[0]} core(s) and {held[1]} GPU(s); {k} slot(s) of "
                    f"{unit[0]} core(s) and {unit[1]} GPU(s) need exactly "
                    f"{k * unit[0]} and {k * unit[1]}",
                    0,
                )
        return None, total
    if rule["kind"] == "slots" and unit is not None:
        total = 0
        for rank, item in sorted(got.items()):
            held = (len(item.cores), len(item.gpus))
            k = _room(*held, unit)
            if k == 0 or held != (k * unit[0], k * unit[1]):
                return (
                    f"rank {rank} holds {held[0]} core(s) and {held[1]} GPU(s): not a whole "
                    f"number of slots of {unit[0]} core(s) and {unit[1]} GPU(s) "
                    "(a slot lies on one node)",
                    0,
                )
            total += k
        if rule["slots"] is not None and total != rule["slots"]:
            return f"holds {total} slot(s); the slot count asks for {rule['slots']}", 0
        return None, total
    if rule["kind"] == "slot-nodes":
        if not rule["exclusive"]:
            need = tuple(unit or (0, 0))
            for rank, item in sorted(got.items()):
                if (len(item.cores), len(item.gpus)) != need:
                    return f"rank {rank} does not hold exactly the node's cores and GPUs", 0
        n = rule["nodes_per_slot"]
        if n is None:
            return None, -1
        if len(got) % n:
            return f"holds {len(got)} node(s), not a whole number of slots of {n} node(s)", 0
        if rule["slots"] is not None and len(got) // n != rule["slots"]:
            return f"holds {len(got) // n} slot(s) of nodes; the count asks for {rule['slots']}", 0
        return None, len(got) // n
    return None, -1


def _check_times(known: dict[str, Any], execution: dict[str, Any]) -> str | None:
    times = known["times"]
    now, duration = times["now"], times["duration"]
    start = execution.get("starttime")
    if now is not None and start not in (None, 0) and start != now:
        return f"starttime is {start!r}; now is {now!r}"
    if isinstance(duration, int | float) and not isinstance(duration, bool) and duration > 0:
        want = (now or 0) + duration
        end = execution.get("expiration")
        bound = times["pool_expiration"]
        # The pool's own end may cut the job short (an open point: see the cases).
        if end != want and not (bound is not None and end == bound and bound < want):
            return f"expiration is {end!r}; now + duration is {want!r}"
    return None


def _check_edition(known: dict[str, Any], execution: dict[str, Any], slots: int) -> str | None:
    if not known["newer"]:
        return None
    nslots = execution.get("nslots")
    if not isinstance(nslots, int) or isinstance(nslots, bool) or nslots <= 0:
        return f"nslots is {nslots!r}; an allocation carries the slot total, above zero"
    if slots > 0 and nslots != slots:
        return f"nslots is {nslots}; the allocation holds {slots} slot(s)"
    local = sorted(k for k in execution.get("properties", {}) if k.startswith("+"))
    if local:
        return f"keeps the instance-local property {local[0]!r}"
    return None


def judge(known: dict[str, Any], got: Ranks, execution: dict[str, Any]) -> list[tuple[str, str]]:
    """Every rule an allocation (decoded ``got``, its ``execution``) breaks, given ``facts``."""
    out: list[tuple[str, str]] = []
    for rule, check in (("subset", _check_subset), ("constraint", _check_constraint)):
        reason = check(known, got)
        if reason:
            out.append((rule, reason))
    if out:
        return out  # the checks below assume ranks of the pool
    reason, slots = _check_counts(known, got)
    if reason:
        out.append(("counts", reason))
    for rule, found in (
        ("times", _check_times(known, execution)),
        ("nslots", _check_edition(known, execution, slots)),
    ):
        if found:
            out.append((rule, found))
    return out


def rule_breaches(value: dict[str, Any], actual: Any, oracle: Oracle) -> list[tuple[str, str]]:
    """Every rule ``actual`` breaks as an answer to ``value``: (rule, reason) pairs, or []."""
    return _breaches(facts(value, oracle), actual, oracle)[0]


def _breaches(
    known: dict[str, Any], actual: Any, oracle: Oracle
) -> tuple[list[tuple[str, str]], Ranks]:
    """:func:`rule_breaches` given the input's ``facts``; also the decoded answer ({} if none)."""
    try:
        oracle("R.validate", actual)
        got = _ranks(actual, oracle)
    except Refused as exc:
        return [("valid", f"not a valid R: {exc}")], {}
    return judge(known, got, actual.get("execution", {})), got


def _determined(expected: dict[str, Any], actual: Any, got: Ranks, oracle: Oracle) -> str | None:
    execution = actual.get("execution", {})
    figures: dict[str, Callable[[], Any]] = {
        "nodes": lambda: len(got),
        "cores": lambda: sum(len(r.cores) for r in got.values()),
        "gpus": lambda: sum(len(r.gpus) for r in got.values()),
        "nslots": lambda: execution.get("nslots"),
        "properties": lambda: sorted(execution.get("properties", {})),
        "starttime": lambda: execution.get("starttime") or None,
        "expiration": lambda: execution.get("expiration") or None,
    }
    for key, want in expected.items():
        if key in figures:
            have = figures[key]()
            if have != want:
                return f"{key} is {have!r}; the case determines {want!r}"
        elif key == "cores_per_rank":
            odd = [r for r, item in sorted(got.items()) if len(item.cores) != want]
            if odd:
                return f"rank {odd[0]} holds {len(got[odd[0]].cores)} core(s), not {want}"
        elif key in ("ranks", "ranks_within"):
            allowed = set(oracle("idset.decode", want))
            if key == "ranks" and set(got) != allowed:
                return f"the ranks are {sorted(got)}; the case determines {want!r}"
            if not set(got) <= allowed:
                return f"rank {sorted(set(got) - allowed)[0]} is outside {want!r}"
    return None


def _names(breaches: Iterable[tuple[str, str]]) -> set[str]:
    return {rule for rule, _ in breaches}


def allocation_rules(expected: Any, actual: Any, oracle: Oracle, value: Any) -> str | None:
    """Judge ``actual``, an answer to the input ``value``, by the rules and ``expected``.

    ``expected`` is what the case determines (see :data:`DETERMINED`), or another
    implementation's R (then the two disagree when one breaks a rule the other keeps).
    """
    known = facts(value, oracle)
    breaches, got = _breaches(known, actual, oracle)
    if isinstance(expected, dict) and "version" in expected:
        theirs, _ = _breaches(known, expected, oracle)
        mine, other = _names(breaches), _names(theirs)
        if mine == other:
            return None
        if mine - other:
            rule = sorted(mine - other)[0]
            reason = next(r for n, r in breaches if n == rule)
            return f"breaks the {rule} rule, which the other answer keeps: {reason}"
        rule = sorted(other - mine)[0]
        reason = next(r for n, r in theirs if n == rule)
        return f"keeps the {rule} rule, which the other answer breaks: {reason}"
    if breaches:
        rule, reason = breaches[0]
        return f"{rule}: {reason}"
    return _determined(expected, actual, got, oracle)


allocation_rules.needs_input = True  # type: ignore[attr-defined]
