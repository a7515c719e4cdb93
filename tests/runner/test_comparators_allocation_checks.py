"""The checks of ``allocation_rules`` that need no division (allocation.checks).

From the 2026-08-13 texts an allocation carries ``nslots``: an answer without it is refused
even when the request is not one whose slots the division check counts.
"""

from __future__ import annotations

from typing import Any

from support import allocation_input, node_vertex, r_held, r_pool, slot_vertex

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.comparators.allocation import rule_breaches
from flux_conformance.runner.oracle import reference_oracle

rules = COMPARATORS["allocation_rules"]
NEWER = reference_oracle("2026-08-13")

POOL = r_pool(*[(4, 0)] * 4)


def _value(*leaves: tuple[str, Any]) -> dict[str, Any]:
    return allocation_input(POOL, [slot_vertex(1, *leaves)]) | {"now": 5}


def _answer(**execution: Any) -> dict[str, Any]:
    return r_held({0: ("0-2", "")}, starttime=5, **execution)


def test_an_allocation_without_nslots_is_refused_whatever_the_request() -> None:
    # Two core vertices side by side: a request whose slots the division check does not count.
    unread = _value(("core", 1), ("core", 2))
    assert rules({}, _answer(nslots=1), NEWER, unread) is None
    reason = rules({}, _answer(), NEWER, unread)
    assert reason == "nslots: nslots is None; an allocation carries the slot total, above zero"


# -- scheduling (2025-07-31): the pool's key describes the whole pool --------------------------

OLDER = reference_oracle("2025-07-31")
GRAPH = {"graph": {"nodes": [], "edges": []}}
GPU_POOL = {**r_pool((2, 1), (2, 1)), "scheduling": GRAPH}


def _nodes_value(count: int) -> dict[str, Any]:
    node = node_vertex(count, slot_vertex(1, ("core", 1)), exclusive=True)
    return allocation_input(GPU_POOL, [node]) | {"now": 5}


def _held(held: dict[int, tuple[str, str]]) -> dict[str, Any]:
    return {**r_held(held, starttime=5), "scheduling": GRAPH}


def test_the_pools_scheduling_key_rides_only_on_the_whole_pool() -> None:
    whole = _held({0: ("0-1", "0"), 1: ("0-1", "0")})
    assert rules({}, whole, OLDER, _nodes_value(2)) is None
    for part, count in (
        (_held({0: ("0-1", "0")}), 1),  # a rank of two
        (_held({0: ("0", "0"), 1: ("0", "0")}), 2),  # a core of two on each
        (_held({0: ("0-1", ""), 1: ("0-1", "")}), 2),  # no GPU
    ):
        broken = [rule for rule, _reason in rule_breaches(_nodes_value(count), part, OLDER)]
        assert "scheduling" in broken, broken
