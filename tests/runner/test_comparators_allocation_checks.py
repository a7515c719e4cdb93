"""The checks of ``allocation_rules`` that need no division (allocation.checks).

From the 2026-08-13 texts an allocation carries ``nslots``: an answer without it is refused
even when the request is not one whose slots the division check counts.
"""

from __future__ import annotations

from typing import Any

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.comparators.allocation import rule_breaches
from flux_conformance.runner.oracle import reference_oracle

rules = COMPARATORS["allocation_rules"]
NEWER = reference_oracle("2026-08-13")

POOL = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "0-3", "children": {"core": "0-3"}}],
        "nodelist": ["n[0-3]"],
    },
}


def _value(cores: list[Any]) -> dict[str, Any]:
    slot = {"type": "slot", "label": "s", "count": 1, "with": cores}
    return {
        "pool": POOL,
        "jobspec": {
            "version": 1,
            "resources": [slot],
            "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
            "attributes": {"system": {}},
        },
        "now": 5,
    }


def _answer(**execution: Any) -> dict[str, Any]:
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": "0", "children": {"core": "0-2"}}],
            "nodelist": ["n0"],
            "starttime": 5,
            **execution,
        },
    }


def test_an_allocation_without_nslots_is_refused_whatever_the_request() -> None:
    # Two core vertices side by side: a request whose slots the division check does not count.
    unread = _value([{"type": "core", "count": 1}, {"type": "core", "count": 2}])
    assert rules({}, _answer(nslots=1), NEWER, unread) is None
    reason = rules({}, _answer(), NEWER, unread)
    assert reason == "nslots: nslots is None; an allocation carries the slot total, above zero"


# -- scheduling (2025-07-31): the pool's key describes the whole pool --------------------------

OLDER = reference_oracle("2025-07-31")
GRAPH = {"graph": {"nodes": [], "edges": []}}
GPU_POOL = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "0-1", "children": {"core": "0-1", "gpu": "0"}}],
        "nodelist": ["n[0-1]"],
    },
    "scheduling": GRAPH,
}


def _nodes_value(count: int) -> dict[str, Any]:
    slot = {"type": "slot", "label": "s", "count": 1, "with": [{"type": "core", "count": 1}]}
    return {
        "pool": GPU_POOL,
        "jobspec": {
            "version": 1,
            "resources": [{"type": "node", "count": count, "exclusive": True, "with": [slot]}],
            "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
            "attributes": {"system": {}},
        },
        "now": 5,
    }


def _held(ranks: str, hosts: str, cores: str, gpu: bool) -> dict[str, Any]:
    children = {"core": cores, **({"gpu": "0"} if gpu else {})}
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": ranks, "children": children}],
            "nodelist": [hosts],
            "starttime": 5,
        },
        "scheduling": GRAPH,
    }


def test_the_pools_scheduling_key_rides_only_on_the_whole_pool() -> None:
    whole = _held("0-1", "n[0-1]", "0-1", gpu=True)
    assert rules({}, whole, OLDER, _nodes_value(2)) is None
    for part, count in (
        (_held("0", "n0", "0-1", gpu=True), 1),  # a rank of two
        (_held("0-1", "n[0-1]", "0", gpu=True), 2),  # a core of two on each
        (_held("0-1", "n[0-1]", "0-1", gpu=False), 2),  # no GPU
    ):
        broken = [rule for rule, _reason in rule_breaches(_nodes_value(count), part, OLDER)]
        assert "scheduling" in broken, broken
