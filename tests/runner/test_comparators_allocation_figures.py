"""The figures a ``sched.allocate`` case determines, as ``allocation_rules`` compares them.

A case states what every right answer shares (``nodes``, ``cores``, ``starttime`` ...): an
answer that keeps the scheduling rules conforms when each stated figure is its own, compared
exactly, and ``null`` for a time stands for absent or 0.
"""

from __future__ import annotations

from typing import Any

import pytest
from support import allocation_input, node_vertex, r_held, r_pool, slot_vertex

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.comparators.allocation import rule_breaches
from flux_conformance.runner.oracle import reference_oracle

rules = COMPARATORS["allocation_rules"]
oracle = reference_oracle("2025-07-31")

POOL = r_pool(*[(4, 1)] * 4, properties={"ssd": "1,3"})


def _value(duration: float = 0) -> dict[str, Any]:
    node = node_vertex(2, slot_vertex(1, ("core", 2)))
    return allocation_input(POOL, [node], duration=duration) | {"now": 100}


def _answer(**execution: Any) -> dict[str, Any]:
    return r_held({1: ("0-1", ""), 2: ("0-1", "")}, **execution)


@pytest.mark.parametrize(
    ("determined", "answer", "reason"),
    [
        ({"nodes": 2, "cores": 4, "gpus": 0, "cores_per_rank": 2}, _answer(), None),
        ({"ranks": "1-2", "ranks_within": "0-3"}, _answer(), None),
        ({"starttime": 100}, _answer(starttime=100), None),
        ({"starttime": None}, _answer(), None),
        ({"starttime": None}, _answer(starttime=0), None),
        ({"starttime": 100}, _answer(), "starttime is None; the case determines 100"),
        ({"starttime": None}, _answer(starttime=100), "starttime is 100; the case determines None"),
        ({"expiration": None}, _answer(expiration=0), None),
        ({"nodes": 3}, _answer(), "nodes is 2; the case determines 3"),
        ({"cores": 2}, _answer(), "cores is 4; the case determines 2"),
        ({"gpus": 1}, _answer(), "gpus is 0; the case determines 1"),
        ({"cores_per_rank": 1}, _answer(), "rank 1 holds 2 core(s), not 1"),
        ({"ranks": "1-3"}, _answer(), "the ranks are [1, 2]; the case determines '1-3'"),
        ({"ranks": "1"}, _answer(), "the ranks are [1, 2]; the case determines '1'"),
        ({"ranks_within": "2-3"}, _answer(), "rank 1 is outside '2-3'"),
        ({"properties": []}, _answer(properties={"ssd": "1"}), "properties is ['ssd']"),
        ({"nslots": 2}, _answer(nslots=2), None),
    ],
)
def test_each_determined_figure_is_the_answers_own(
    determined: dict[str, Any], answer: dict[str, Any], reason: str | None
) -> None:
    got = rules(determined, answer, oracle, _value())
    if reason is None:
        assert got is None
    else:
        assert got is not None
        assert got.startswith(reason), got


# -- the reason given when rules are broken ----------------------------------------------------


def test_an_answer_breaking_several_rules_is_refused_for_the_first_in_check_order() -> None:
    # Cores the pool does not have (subset) and a start time that is not the clock (times).
    wrong = r_held({1: ("2-5", ""), 2: ("2-5", "")}, starttime=7)
    reason = rules({}, wrong, oracle, _value())
    assert reason is not None
    assert reason.startswith("subset: "), reason


def test_against_another_answer_the_first_rule_in_name_order_is_named() -> None:
    right = _answer(starttime=100)
    # Three cores on a node (division) and a start time that is not the clock (times).
    wrong = r_held({1: ("0-2", ""), 2: ("0-2", "")}, starttime=7)
    assert rules(right, wrong, oracle, _value()).startswith("breaks the division rule")
    assert rules(wrong, right, oracle, _value()).startswith("keeps the division rule")


def test_an_answer_breaking_two_rules_after_the_subset_is_refused_for_the_first() -> None:
    # Three cores on a node (division) and a start time that is not the clock (times).
    wrong = r_held({1: ("0-2", ""), 2: ("0-2", "")}, starttime=7)
    broken = [rule for rule, _reason in rule_breaches(_value(), wrong, oracle)]
    assert broken == ["division", "times"]
    reason = rules({}, wrong, oracle, _value())
    assert reason is not None
    assert reason.startswith("division: "), reason
