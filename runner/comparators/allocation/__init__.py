"""The ``allocation_rules`` comparator, for ``sched.allocate``: an allocation judged by rules.

Many allocations answer one request correctly, so a case does not hold one expected R.  It
states what is determined (:data:`DETERMINED`), and every answer is checked against the rules
the specs give a scheduler (:mod:`.checks`).  Each check, and where it comes from:

``valid``
    The answer is a valid R (RFC 20, R Format).
``subset``
    Every rank, host name, core, GPU and property of the answer is in the pool, on the same
    rank, and no core or GPU is one that ``allocated`` still holds (RFC 20, Overview: R is
    built from the pool; RFC 14, Reserved Resource Types > slot: a slot's resources are the
    program's alone).  An allocated R whose ``expiration`` is above 0 and at or before the
    clock has ended: its resources are free (readings; RFC 20, Execution > expiration).
``constraint``
    Every allocated rank satisfies ``attributes.system.constraints``, evaluated on the pool as
    ``constraint.match`` does (RFC 31; RFC 14, Attributes > constraints).
``division``
    The answer's ranks, cores and GPUs divide into the request's units, for every request
    shape an R pool can hold (:mod:`.request`): each slot's cores and GPUs on one node, a fixed
    count exactly and any other an acceptable one, an exclusive node whole and untouched by
    other allocations, several top-level vertices and several slot kinds sharing a node
    (RFC 14, Resources > count and > exclusive, Reserved Resource Types > slot; readings:
    a slot below node level lies on one node).  :mod:`.division` searches for a division.
``largest``
    Some division leaves nothing free that would make a count larger: a slot's min-only or
    ranged count is the largest acceptable count free on its node (or, for a slot whose node
    is free to choose, on the node with the most free), and no slot or node count could reach
    its next acceptable value from what is free (RFC 14, Resources > count; readings for
    several slots: how free resources are shared among slots is open).
``times``
    ``starttime``, when present, is the scheduler's clock; with a ``duration`` above zero,
    ``expiration`` is the clock plus the duration; without one, the pool's expiration or none
    (RFC 14, Attributes > duration; RFC 20, Execution > starttime, expiration; readings for
    the clock when ``now`` is not given: :mod:`.times`).
``nslots``
    From the 2026-08-13 texts on: ``nslots`` is present, above zero, and equals the slot total
    of a division of the answer (RFC 20, Execution > nslots).
``instance-local``
    From the 2026-08-13 texts on: no property starting with ``+`` (RFC 20, Execution >
    properties).
``scheduling``
    In the 2025-07-31 texts, ``scheduling`` serializes the graph of the resources the R
    describes (RFC 20, Scheduling): the pool's key, carried into an allocation holding less
    than the pool, describes resources it does not hold.  The 2026-08-13 text makes the key
    opaque scheduler data that rides along with allocations (RFC 20, scheduling), so it is not
    judged there.

The determined figures a case may state (each compared exactly): ``nodes`` (number of ranks),
``cores`` and ``gpus`` (totals), ``cores_per_rank``, ``nslots``, ``ranks`` (an idset the
ranks must equal), ``ranks_within`` (an idset holding them all), ``properties`` (the property
names, sorted), ``starttime`` and ``expiration`` (``null``: absent or 0).

Compared with another implementation's answer (``flux-conformance diff``), the expected value
is an R: the two disagree when one breaks a rule the other keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from flux_conformance.runner.comparators._oracle import Oracle, Refused
from flux_conformance.runner.comparators.allocation.checks import CHECKS, judge
from flux_conformance.runner.comparators.allocation.inputs import Rank, decode, facts

__all__ = ["CHECKS", "DETERMINED", "allocation_rules", "facts", "judge", "rule_breaches"]

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

Ranks = dict[int, Rank]


def rule_breaches(value: dict[str, Any], actual: Any, oracle: Oracle) -> list[tuple[str, str]]:
    """Every rule ``actual`` breaks as an answer to ``value``: (rule, reason) pairs, or []."""
    return _breaches(facts(value, oracle), actual, oracle)[0]


def _breaches(
    known: dict[str, Any], actual: Any, oracle: Oracle
) -> tuple[list[tuple[str, str]], Ranks]:
    """:func:`rule_breaches` given the input's ``facts``; also the decoded answer ({} if none)."""
    try:
        oracle("R.validate", actual)
        got = decode(actual, oracle)
    except Refused as exc:
        return [("valid", f"not a valid R: {exc}")], {}
    return judge(known, got, actual.get("execution", {}), actual.get("scheduling")), got


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
