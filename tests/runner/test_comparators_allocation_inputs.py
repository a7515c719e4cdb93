"""What ``allocation_rules`` reads from an input and its oracle (allocation.inputs).

Which texts the oracle follows is told by its own allocation of the smallest request: nslots
is written exactly in the editions whose RFC 20 defines it.
"""

from __future__ import annotations

import pytest

from flux_conformance.runner.comparators.allocation import inputs
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
