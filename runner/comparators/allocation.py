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
    with a fixed node count.  Where a per-slot count is a range, the case states the figures.
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

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from flux_conformance.runner.comparators._oracle import Oracle, Refused

__all__ = ["DETERMINED", "allocation_rules", "rule_breaches"]

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
            return _Shape("nodes", top["count"], slot["count"], *leaves, top.get("exclusive") is True)
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
    edition_key: str | None = None
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

    def accepts(self, count: Any, n: int) -> bool:
        found = self.values(count, n)
        return bool(found) and found[-1] == n


# -- the checks -------------------------------------------------------------------------------


@dataclass
class _Context:
    oracle: Oracle
    input: dict[str, Any]
    pool: dict[int, _Rank]
    free: dict[int, _Rank]
    eligible: set[int]
    counts: _Counts
    newer: bool


def _newer(edition: str | None) -> bool:
    """Whether the texts of ``edition`` have nslots and instance-local properties."""
    from flux_conformance.reference.operations import DEFAULT_EDITION, EDITIONS

    return EDITIONS.index(edition or DEFAULT_EDITION) > 0


def _context(value: dict[str, Any], oracle: Oracle) -> _Context:
    pool = _ranks(value["pool"], oracle)
    free = {r: _Rank(x.host, x.cores, x.gpus, x.properties) for r, x in pool.items()}
    for doc in value.get("allocated", []):
        for rank, held in _ranks(doc, oracle).items():
            if rank in free:
                left = free[rank]
                free[rank] = _Rank(
                    left.host, left.cores - held.cores, left.gpus - held.gpus, left.properties
                )
    constraint = value["jobspec"].get("attributes", {}).get("system", {}).get("constraints")
    if constraint is None:
        eligible = set(pool)
    else:
        eligible = set(oracle("constraint.match", {"constraint": constraint, "R": value["pool"]}))
    return _Context(oracle, value, pool, free, eligible, _Counts(oracle), _newer(oracle.edition))


def _check_subset(ctx: _Context, got: dict[int, _Rank]) -> str | None:
    for rank, item in sorted(got.items()):
        have = ctx.free.get(rank)
        if have is None:
            return f"rank {rank} is not in the pool"
        if item.host != have.host:
            return f"rank {rank} is host {item.host!r}; the pool says {have.host!r}"
        if not item.cores <= have.cores or not item.gpus <= have.gpus:
            return f"rank {rank} holds cores or GPUs that are not free in the pool"
        if not item.properties <= have.properties:
            extra = sorted(item.properties - have.properties)
            return f"rank {rank} has properties the pool does not give it: {extra}"
    return None


def _check_constraint(ctx: _Context, got: dict[int, _Rank]) -> str | None:
    outside = sorted(set(got) - ctx.eligible)
    if outside:
        return f"rank {outside[0]} does not satisfy the constraint"
    return None


def _whole(ctx: _Context, rank: int) -> bool:
    pool, free = ctx.pool[rank], ctx.free[rank]
    return pool.cores == free.cores and pool.gpus == free.gpus and bool(pool.cores or pool.gpus)


def _per_slot(shape: _Shape) -> tuple[int, int] | None:
    cores = 0 if shape.cores is None else _fixed(shape.cores)
    gpus = 0 if shape.gpus is None else _fixed(shape.gpus)
    if cores is None or gpus is None or (cores, gpus) == (0, 0):
        return None
    return cores, gpus


def _room(cores: int, gpus: int, unit: tuple[int, int]) -> int:
    """How many units of (cores, gpus) fit in ``cores`` and ``gpus``."""
    c, g = unit
    return min(cores // c if c else cores + gpus, gpus // g if g else cores + gpus)


def _slots_nodes(ctx: _Context, shape: _Shape, got: dict[int, _Rank]) -> tuple[str | None, int]:
    """node > slot > core/gpu: node count, slots per node, per-rank exactness, exclusivity."""
    unit = _per_slot(shape)
    counts = ctx.counts
    total = 0
    holds: dict[int, int] = {}
    for rank in sorted(ctx.eligible & set(ctx.free)):
        free = ctx.free[rank]
        if shape.exclusive and not _whole(ctx, rank):
            continue
        if unit is None:
            continue
        k = counts.largest(shape.slots, _room(len(free.cores), len(free.gpus), unit))
        if k is not None:
            holds[rank] = k
    if unit is not None:
        want = counts.largest(shape.nodes, len(holds))
        if want is not None and len(got) != want:
            return (
                f"holds {len(got)} node(s); the node count asks for {want} "
                f"({len(holds)} can hold the slots)",
                0,
            )
    for rank, item in sorted(got.items()):
        if shape.exclusive:
            if not _whole(ctx, rank) or item.cores != ctx.pool[rank].cores:
                return f"rank {rank} is exclusive but not allocated whole", 0
            if item.gpus != ctx.pool[rank].gpus:
                return f"rank {rank} is exclusive but not allocated whole", 0
        if unit is None:
            continue
        k = holds.get(rank)
        if k is None:
            return f"rank {rank} cannot hold the slots the request asks for on each node", 0
        total += k
        if not shape.exclusive and (len(item.cores), len(item.gpus)) != (k * unit[0], k * unit[1]):
            return (
                f"rank {rank} holds {len(item.cores)} core(s) and {len(item.gpus)} GPU(s); "
                f"{k} slot(s) of {unit[0]} core(s) and {unit[1]} GPU(s) need exactly "
                f"{k * unit[0]} and {k * unit[1]}",
                0,
            )
    return None, total


def _slots_below(ctx: _Context, shape: _Shape, got: dict[int, _Rank]) -> tuple[str | None, int]:
    """slot > core/gpu: whole slots on each rank, and the slot count."""
    unit = _per_slot(shape)
    if unit is None:
        return None, -1
    slots = 0
    for rank, item in sorted(got.items()):
        k = _room(len(item.cores), len(item.gpus), unit)
        if (len(item.cores), len(item.gpus)) != (k * unit[0], k * unit[1]) or k == 0:
            return (
                f"rank {rank} holds {len(item.cores)} core(s) and {len(item.gpus)} GPU(s): "
                f"not a whole number of slots of {unit[0]} core(s) and {unit[1]} GPU(s) "
                "(a slot lies on one node)",
                0,
            )
        slots += k
    room = sum(
        _room(len(ctx.free[r].cores), len(ctx.free[r].gpus), unit)
        for r in ctx.eligible & set(ctx.free)
    )
    want = ctx.counts.largest(shape.slots, room)
    if want is not None and slots != want:
        return f"holds {slots} slot(s); the slot count asks for {want} ({room} fit)", 0
    return None, slots


def _slot_nodes(ctx: _Context, shape: _Shape, got: dict[int, _Rank]) -> tuple[str | None, int]:
    """slot > node: whole nodes (unless not exclusive), and the slot count for fixed nodes."""
    unit = _per_slot(shape) or (0, 0)
    fits = []
    for rank in sorted(ctx.eligible & set(ctx.free)):
        free = ctx.free[rank]
        if shape.exclusive and not _whole(ctx, rank):
            continue
        if len(free.cores) >= unit[0] and len(free.gpus) >= unit[1] and (free.cores or free.gpus):
            fits.append(rank)
    for rank, item in sorted(got.items()):
        if shape.exclusive and (
            not _whole(ctx, rank)
            or item.cores != ctx.pool[rank].cores
            or item.gpus != ctx.pool[rank].gpus
        ):
            return f"rank {rank} is a node inside a slot but not allocated whole", 0
        if not shape.exclusive and (len(item.cores), len(item.gpus)) != unit:
            return f"rank {rank} does not hold exactly the node's cores and GPUs", 0
    n = _fixed(shape.nodes)
    if n is None:
        return None, -1
    if len(got) % n:
        return f"holds {len(got)} node(s), not a whole number of slots of {n} node(s)", 0
    want = ctx.counts.largest(shape.slots, len(fits) // n)
    if want is not None and len(got) // n != want:
        return f"holds {len(got) // n} slot(s) of nodes; the slot count asks for {want}", 0
    return None, len(got) // n


_SHAPES: dict[str, Callable[[_Context, _Shape, dict[int, _Rank]], tuple[str | None, int]]] = {
    "nodes": _slots_nodes,
    "slots": _slots_below,
    "slot-nodes": _slot_nodes,
}


def _check_times(ctx: _Context, execution: dict[str, Any]) -> str | None:
    now = ctx.input.get("now")
    start = execution.get("starttime")
    if now is not None and start not in (None, 0) and start != now:
        return f"starttime is {start!r}; now is {now!r}"
    duration = ctx.input["jobspec"].get("attributes", {}).get("system", {}).get("duration", 0)
    if isinstance(duration, int | float) and duration > 0:
        want = (now or 0) + duration
        end = execution.get("expiration")
        if end != want:
            return f"expiration is {end!r}; now + duration is {want!r}"
    return None


def _check_edition(ctx: _Context, execution: dict[str, Any], slots: int) -> str | None:
    if not ctx.newer:
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


def rule_breaches(value: dict[str, Any], actual: Any, oracle: Oracle) -> list[tuple[str, str]]:
    """Every rule ``actual`` breaks as an answer to ``value``: (rule, reason) pairs, or []."""
    try:
        oracle("R.validate", actual)
        got = _ranks(actual, oracle)
    except Refused as exc:
        return [("valid", f"not a valid R: {exc}")]
    ctx = _context(value, oracle)
    execution = actual.get("execution", {})
    out: list[tuple[str, str]] = []
    for rule, check in (("subset", _check_subset), ("constraint", _check_constraint)):
        reason = check(ctx, got)
        if reason:
            out.append((rule, reason))
    if out:
        return out  # the shape checks below assume ranks of the pool
    shape = _shape(value["jobspec"])
    slots = -1
    if shape.kind is not None:
        reason, slots = _SHAPES[shape.kind](ctx, shape, got)
        if reason:
            out.append(("counts", reason))
    for rule, found in (
        ("times", _check_times(ctx, execution)),
        ("nslots", _check_edition(ctx, execution, slots)),
    ):
        if found:
            out.append((rule, found))
    return out


def _determined(expected: dict[str, Any], actual: Any, oracle: Oracle) -> str | None:
    got = _ranks(actual, oracle)
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
    breaches = rule_breaches(value, actual, oracle)
    if isinstance(expected, dict) and "version" in expected:
        theirs = rule_breaches(value, expected, oracle)
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
    return _determined(expected, actual, oracle)


allocation_rules.needs_input = True  # type: ignore[attr-defined]
