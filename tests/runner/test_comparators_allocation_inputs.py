"""What ``allocation_rules`` reads from an input and its oracle (allocation.inputs).

Which texts the oracle follows is told by its own allocation of the smallest request: nslots
is written exactly in the editions whose RFC 20 defines it.
"""

from __future__ import annotations

import types

import pytest
from support import allocation_input, r_held, r_pool, slot_vertex

from flux_conformance.runner.comparators.allocation import inputs
from flux_conformance.runner.comparators.allocation.times import CLOCK_FLOOR
from flux_conformance.runner.oracle import reference_oracle


@pytest.mark.parametrize(("edition", "newer"), [("2025-07-31", False), ("2026-08-13", True)])
def test_the_oracles_edition_is_told_by_its_own_allocation(
    edition: str, newer: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "_NEWER", {})  # asked afresh, not remembered from a test before
    assert inputs.newer(reference_oracle(edition)) is newer


def test_a_now_that_is_no_number_is_no_clock() -> None:
    from flux_conformance.runner.comparators import COMPARATORS

    pool = {
        "version": 1,
        "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}], "nodelist": ["n0"]},
    }
    slot = {"type": "slot", "count": 1, "label": "s", "with": [{"type": "core", "count": 1}]}
    value = {
        "pool": pool,
        "jobspec": {
            "version": 1,
            "resources": [slot],
            "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
            "attributes": {},
        },
        "now": True,
    }
    answer = {"version": 1, "execution": {**pool["execution"], "starttime": 1}}
    reason = COMPARATORS["allocation_rules"]({}, answer, reference_oracle("2025-07-31"), value)
    assert reason is not None
    assert reason.startswith("times: starttime is 1; the clock lay in ["), reason


# -- what other allocations hold -------------------------------------------------------------

POOL2 = {
    "version": 1,
    "execution": {
        "R_lite": [{"rank": "0-1", "children": {"core": "0-3", "gpu": "0"}}],
        "nodelist": ["n[0-1]"],
    },
}


def _held(rank: str, cores: str, gpu: bool = False, **execution: float) -> dict:
    children = {"core": cores, **({"gpu": "0"} if gpu else {})}
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": rank, "children": children}],
            "nodelist": [f"n{rank}"],
            **execution,
        },
    }


def _request(resources: list, allocated: list) -> dict:
    return {
        "pool": POOL2,
        "jobspec": {
            "version": 1,
            "resources": resources,
            "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
            "attributes": {},
        },
        "allocated": allocated,
        "now": 50,
    }


def _judge(value: dict, answer: dict) -> str | None:
    from flux_conformance.runner.comparators import COMPARATORS

    answer["execution"]["starttime"] = 50
    return COMPARATORS["allocation_rules"]({}, answer, reference_oracle("2025-07-31"), value)


def _slot(cores: object, gpus: int = 0) -> list:
    leaves = [{"type": "core", "count": cores}]
    if gpus:
        leaves.append({"type": "gpu", "count": gpus})
    return [{"type": "slot", "count": 1, "label": "s", "with": leaves}]


def test_an_allocation_ended_at_the_clock_or_long_before_frees_what_it_held() -> None:
    for end in (50, 1):
        value = _request(_slot({"min": 1}), [_held("0", "0-3", expiration=end)])
        assert _judge(value, _held("0", "0-3")) is None
        # All four cores are surely free: a ranged slot takes them all.
        reason = _judge(value, _held("0", "0-1"))
        assert reason is not None
        assert reason.startswith("largest:"), reason


def test_every_allocation_still_running_holds_its_resources() -> None:
    ended, running = _held("0", "0-3", expiration=10), _held("1", "0-3", expiration=99)
    value = _request(_slot(1), [ended, running])
    assert _judge(value, _held("0", "0")) is None
    reason = _judge(value, _held("1", "0"))
    assert reason is not None
    assert reason.startswith("subset:"), reason


def test_a_gpu_another_allocation_holds_is_not_free() -> None:
    value = _request(_slot(1, gpus=1), [_held("0", "1", gpu=True)])
    reason = _judge(value, _held("0", "0", gpu=True))
    assert reason is not None
    assert reason.startswith("subset:"), reason
    assert _judge(value, _held("1", "0", gpu=True)) is None


def test_a_node_another_allocation_touches_is_not_whole() -> None:
    node = [{"type": "node", "count": 1, "exclusive": True, "with": _slot(1)}]
    value = _request(node, [_held("0", "1")])
    assert _judge(value, {**_held("1", "0-3", gpu=True)}) is None
    reason = _judge(value, _held("0", "0,2-3", gpu=True))
    assert reason is not None
    assert reason.startswith("division:"), reason


# -- the facts exported beside a case (docs/export.md): what each rank has free ---------------

#: Ranks 0, 1 and 3 have two cores and a GPU each, rank 2 two cores and no GPU.
POOL4 = r_pool((2, 1), (2, 1), (2, 0), (2, 1))
SLOT = slot_vertex(1, ("core", 1))


def _rank(cores: list[int], gpus: list[int], free: list[int], whole: bool, untouched: bool):
    return {"cores": cores, "gpus": gpus, "free": free, "whole": whole, "untouched": untouched}


def _readings(value: dict) -> dict:
    keys = ("cores", "gpus", "free", "whole", "untouched")
    ranks = inputs.facts(value, reference_oracle("2025-07-31"))["ranks"]
    return {rank: {k: item[k] for k in keys} for rank, item in ranks.items()}


def test_each_rank_reads_what_running_allocations_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    judged = CLOCK_FLOOR + 10  # no now: the clock lay between the floor and this
    monkeypatch.setattr(inputs, "time", types.SimpleNamespace(time=lambda: judged))
    value = allocation_input(
        POOL4,
        [SLOT],
        r_held({0: ("1", "")}),  # a core, running
        r_held({1: ("", "0")}),  # a GPU alone, running
        r_held({2: ("0-1", "")}, expiration=CLOCK_FLOOR - 5),  # ended before the floor
        r_held({3: ("0", "0")}, expiration=judged),  # may have ended
    )
    del value["now"]
    assert _readings(value) == {
        "0": _rank([0], [0], [1, 1], whole=False, untouched=False),
        "1": _rank([0, 1], [], [2, 0], whole=False, untouched=False),
        "2": _rank([0, 1], [], [2, 0], whole=True, untouched=True),
        # Its cores may be used (it may have ended), but are not surely free.
        "3": _rank([0, 1], [0], [1, 0], whole=True, untouched=False),
    }
    assert inputs.facts(value, reference_oracle("2025-07-31"))["times"] == {
        "now": None,
        "floor": CLOCK_FLOOR,
        "ceiling": judged,
        "duration": 0,
        "pool_expiration": None,
    }


def test_an_allocation_ended_at_now_or_at_1_holds_nothing() -> None:
    value = allocation_input(
        POOL4,
        [SLOT],
        r_held({2: ("0", "")}, expiration=50),
        r_held({2: ("1", "")}, expiration=1),
        r_held({0: ("0-1", "")}, expiration=51),
    ) | {"now": 50}
    readings = _readings(value)
    assert readings["2"] == _rank([0, 1], [], [2, 0], whole=True, untouched=True)
    assert readings["0"] == _rank([], [0], [0, 1], whole=False, untouched=False)
