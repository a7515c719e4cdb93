"""The time rules of ``allocation_rules`` (allocation.times): ``starttime`` and ``expiration``.

A ``duration`` that is not a number (``true``) sets no end of its own, like none at all.
"""

from __future__ import annotations

import types
from typing import Any

import pytest
from support import allocation_input, r_held, r_pool, slot_vertex

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.comparators.allocation import inputs
from flux_conformance.runner.comparators.allocation.times import CLOCK_FLOOR
from flux_conformance.runner.oracle import reference_oracle

rules = COMPARATORS["allocation_rules"]
oracle = reference_oracle("2025-07-31")

POOL = r_pool((1, 0))


def _value(duration: Any) -> dict[str, Any]:
    return allocation_input(POOL, [slot_vertex(1, ("core", 1))], duration=duration) | {"now": 100}


def _answer(**times: Any) -> dict[str, Any]:
    return r_held({0: ("0", "")}, **times)


def test_a_duration_that_is_no_number_sets_no_end() -> None:
    assert rules({}, _answer(starttime=100), oracle, _value(True)) is None
    reason = rules({}, _answer(starttime=100, expiration=101), oracle, _value(True))
    assert reason is not None
    assert reason.startswith("times: expiration is 101"), reason


def test_a_duration_sets_the_end_from_the_clock() -> None:
    assert rules({}, _answer(starttime=100, expiration=160), oracle, _value(60)) is None
    reason = rules({}, _answer(starttime=100), oracle, _value(60))
    assert reason is not None
    assert reason.startswith("times: expiration is None; now + duration is 160"), reason


def test_a_starttime_of_0_is_unset() -> None:
    assert rules({}, _answer(starttime=0), oracle, _value(0)) is None
    assert rules({}, _answer(starttime=0, expiration=0), oracle, _value(0)) is None
    assert rules({}, _answer(), oracle, _value(0)) is None
    reason = rules({}, _answer(starttime=1), oracle, _value(0))
    assert reason is not None
    assert reason.startswith("times: starttime is 1; now is 100"), reason


def test_the_pools_end_may_cut_a_duration_short() -> None:
    value = _value(60)
    value["pool"] = {**POOL, "execution": {**POOL["execution"], "expiration": 130}}
    assert rules({}, _answer(starttime=100, expiration=130), oracle, value) is None
    assert rules({}, _answer(starttime=100, expiration=160), oracle, value) is None
    reason = rules({}, _answer(starttime=100, expiration=150), oracle, value)
    assert reason is not None
    assert reason.startswith("times: expiration is 150; now + duration is 160"), reason


def test_without_now_a_starttime_is_judged_against_the_clocks_bounds() -> None:
    value = _value(0)
    del value["now"]
    reason = rules({}, _answer(starttime=1), oracle, value)
    assert reason is not None
    assert reason.startswith("times: starttime is 1; the clock lay in ["), reason


def test_without_now_the_expiration_is_the_clock_plus_the_duration() -> None:
    from flux_conformance.runner.comparators.allocation import facts

    value = _value(60)
    del value["now"]
    floor = facts(value, oracle)["times"]["floor"]  # the earliest the clock may have read
    for answer in (
        _answer(expiration=floor + 60),
        _answer(starttime=0, expiration=floor + 60),
        _answer(starttime=floor, expiration=floor + 60),
    ):
        assert rules({}, answer, oracle, value) is None
    for answer in (
        _answer(expiration=floor + 59),
        _answer(starttime=floor, expiration=floor + 61),
    ):
        reason = rules({}, answer, oracle, value)
        assert reason is not None
        assert reason.startswith("times: expiration is"), reason


# -- without now: the clock lies between the floor and the time of judgement ------------------


def _judged_at(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """The time of judgement, as the comparator reads it."""
    monkeypatch.setattr(inputs, "time", types.SimpleNamespace(time=lambda: seconds))


def test_without_now_the_latest_clock_plus_the_duration_is_an_expiration(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    value = _value(60)
    del value["now"]
    judged = CLOCK_FLOOR + 10
    _judged_at(monkeypatch, judged)
    assert rules({}, _answer(expiration=judged + 60), oracle, value) is None
    reason = rules({}, _answer(expiration=judged + 61), oracle, value)
    assert reason is not None
    assert reason.startswith("times: expiration is"), reason


def test_a_pools_end_at_the_latest_clock_plus_the_duration_cuts_nothing_short(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The job started at the floor: it ends 60 s later, before the pool does.
    judged = CLOCK_FLOOR + 10
    value = _value(60)
    del value["now"]
    value["pool"] = r_pool((1, 0), expiration=judged + 60)
    _judged_at(monkeypatch, judged)
    started = _answer(starttime=CLOCK_FLOOR, expiration=CLOCK_FLOOR + 60)
    assert rules({}, started, oracle, value) is None
    late = _answer(starttime=CLOCK_FLOOR, expiration=judged + 60)
    reason = rules({}, late, oracle, value)
    assert reason is not None
    assert reason.startswith("times: expiration is"), reason
    assert "starttime + duration" in reason, reason
