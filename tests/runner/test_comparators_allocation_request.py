"""The request shapes ``allocation_rules`` reads for its division check (allocation.request).

Cores outside any slot (at the top, or a node's own beside its slots) are one unit that counts
no slot: an answer must hold exactly that many more cores.  A request the check cannot read
(two core vertices side by side) leaves the division unjudged, never refused by a guess.
"""

from __future__ import annotations

from typing import Any

import pytest

from flux_conformance.reference.operations import run
from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.comparators.allocation import facts
from flux_conformance.runner.oracle import reference_oracle

rules = COMPARATORS["allocation_rules"]
EDITION = "2025-07-31"
oracle = reference_oracle(EDITION)

POOL = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "0-3", "children": {"core": "0-3", "gpu": "0"}}],
        "nodelist": ["n[0-3]"],
    },
}
SLOT = {"type": "slot", "label": "s", "count": 1, "with": [{"type": "core", "count": 1}]}


def _value(resources: list[Any]) -> dict[str, Any]:
    return {
        "pool": POOL,
        "jobspec": {
            "version": 1,
            "resources": resources,
            "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
            "attributes": {"system": {}},
        },
        "now": 5,
    }


def _cores(cores: str) -> dict[str, Any]:
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": "0", "children": {"core": cores}}],
            "nodelist": ["n0"],
            "starttime": 5,
        },
    }


@pytest.mark.parametrize(
    "resources",
    [
        [SLOT, {"type": "core", "count": 2}],
        [{"type": "node", "count": 1, "with": [SLOT, {"type": "core", "count": 2}]}],
    ],
    ids=["top-level-cores", "a-nodes-own-cores"],
)
def test_cores_outside_a_slot_are_one_unit_of_their_count(resources: list[Any]) -> None:
    value = _value(resources)
    assert run("sched.allocate", value, edition=EDITION)["execution"]["R_lite"] == [
        {"rank": "0", "children": {"core": "0-2"}}
    ]
    assert rules({}, _cores("0-2"), oracle, value) is None
    for wrong in ("0-1", "0-3"):
        reason = rules({}, _cores(wrong), oracle, value)
        assert reason is not None
        assert reason.startswith("division:"), reason


def test_a_request_the_division_check_cannot_read_leaves_it_unjudged() -> None:
    two_cores = {**SLOT, "with": [{"type": "core", "count": 1}, {"type": "core", "count": 2}]}
    value = _value([two_cores])
    # Three cores on a node: no division is asked of a slot of two core vertices.
    assert rules({}, _cores("0-2"), oracle, value) is None
    assert rules({}, _cores("0"), oracle, value) is None


def _nodes(ranks: str, hosts: str, cores: str = "0-3", gpu: bool = True) -> dict[str, Any]:
    children = {"core": cores, **({"gpu": "0"} if gpu else {})}
    answer = _cores(cores)
    answer["execution"]["R_lite"] = [{"rank": ranks, "children": children}]
    answer["execution"]["nodelist"] = [hosts]
    return answer


def test_a_slot_of_exclusive_nodes_holds_them_whole() -> None:
    value = _value([{**SLOT, "with": [{"type": "node", "count": 2}]}])
    assert rules({}, _nodes("0-1", "n[0-1]"), oracle, value) is None
    for wrong in (_nodes("0", "n0"), _nodes("0-2", "n[0-2]"), _nodes("0-1", "n[0-1]", "0-2")):
        reason = rules({}, wrong, oracle, value)
        assert reason is not None
        assert reason.startswith("division:"), reason


def test_a_slot_of_shared_nodes_holds_their_cores() -> None:
    node = {"type": "node", "count": 2, "exclusive": False, "with": [{"type": "core", "count": 1}]}
    value = _value([{**SLOT, "with": [node]}])
    assert rules({}, _nodes("0-1", "n[0-1]", "0", gpu=False), oracle, value) is None
    reason = rules({}, _nodes("0-1", "n[0-1]", "0-1", gpu=False), oracle, value)
    assert reason is not None
    assert reason.startswith("division:"), reason


def test_a_slot_of_nodes_beside_other_resources_leaves_the_division_unjudged() -> None:
    beside = {**SLOT, "with": [{"type": "node", "count": 2}, {"type": "core", "count": 1}]}
    value = _value([beside])
    assert rules({}, _nodes("0", "n0", "0"), oracle, value) is None


# -- the request exported beside a case (docs/export.md: facts.request, null: not divided) ----

GPU = {"type": "gpu", "count": 1}


def _read(resources: list[Any]) -> Any:
    return facts(_value(resources), oracle)["request"]


def test_a_slot_of_gpus_alone_is_read() -> None:
    assert _read([{**SLOT, "with": [GPU]}]) == [
        {
            "kind": "slot",
            "count": {"values": [1]},
            "slot": True,
            "core": None,
            "gpu": {"values": [1]},
        }
    ]


@pytest.mark.parametrize(
    "resources",
    [
        [{**SLOT, "with": []}],  # a slot of nothing
        [{**SLOT, "count": {"min": 1, "max": 4, "operator": "*", "operand": 1}}],  # no count
        [SLOT, {"type": "memory", "count": 1}],  # a resource an R does not hold
    ],
    ids=["empty-slot", "unreadable-count", "memory"],
)
def test_a_request_the_division_cannot_place_is_not_read(resources: list[Any]) -> None:
    assert _read(resources) is None
