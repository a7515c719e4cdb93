"""Tests for the comparators of RFC 20/31/35 operations (validation, rset_*, constraint_semantic)."""

from __future__ import annotations

from typing import Any

import pytest

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.oracle import reference_oracle

oracle = reference_oracle()


def p(*names: str) -> dict[str, Any]:
    return {"properties": list(names)}


semantic = COMPARATORS["constraint_semantic"]


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        (p("^ssd"), {"not": [p("ssd")]}),
        (p("a", "b"), {"and": [p("a"), p("b")]}),
        ({"or": [p("a"), p("b"), p("c")]}, {"or": [{"or": [p("a"), p("b")]}, p("c")]}),
        ({"not": [{"or": [p("a"), p("b")]}]}, p("^a", "^b")),
        ({"not": [p("a"), p("b")]}, {"or": [p("^a"), p("^b")]}),
        ({"hostlist": ["foo[1-3]"]}, {"or": [{"hostlist": ["foo1"]}, {"hostlist": ["foo[2-3]"]}]}),
        ({"ranks": ["0-3"]}, {"ranks": ["0-1", "2-3"]}),
        ({"and": []}, {}),
        ({"not": []}, {"not": [{}]}),
        ({"and": [{"ranks": ["0"]}, {"not": [{"ranks": ["0"]}]}]}, {"not": []}),
    ],
)
def test_equivalent_constraints_conform(expected: Any, actual: Any) -> None:
    assert semantic(expected, actual, oracle) is None


@pytest.mark.parametrize(
    ("expected", "actual", "reason"),
    [
        # Precedence: a | (b & c) versus (a | b) & c differ on a target with only a.
        (
            {"or": [p("a"), {"and": [p("b"), p("c")]}]},
            {"and": [{"or": [p("a"), p("b")]}, p("c")]},
            "does not select a target that the expected constraint does",
        ),
        # Needs several properties at once to tell apart.
        (
            {"or": [p("a", "b"), p("c", "d")]},
            {"and": [{"or": [p("a"), p("c")]}, {"or": [p("b"), p("d")]}]},
            "selects a target",
        ),
        ({"hostlist": ["foo[1-3]"]}, {"hostlist": ["foo[1-2]"]}, "host 'foo3'"),
        ({"ranks": ["0-3"]}, {"ranks": ["0-2"]}, "rank 3"),
        ({"not": [{"ranks": ["0-3"]}]}, {"ranks": ["4"]}, "does not select"),
        (p("ssd"), p("ssd,gpu"), "does not select"),
        (p("a"), {"properties": ["a"], "x": 1}, "not a valid RFC 31 constraint"),
        (p("a"), "a", "not a valid RFC 31 constraint"),
        (p("host0"), {"hostlist": ["host0"]}, "host 'host0'"),
    ],
)
def test_different_constraints_fail_with_a_reason(expected: Any, actual: Any, reason: str) -> None:
    verdict = semantic(expected, actual, oracle)
    assert verdict is not None
    assert reason in verdict


def test_many_properties_are_sampled_not_enumerated() -> None:
    names = [f"p{i}" for i in range(14)]
    assert semantic(p(*names), {"and": [p(n) for n in names]}, oracle) is None
    verdict = semantic(p(*names), p(*names[:-1]), oracle)
    assert verdict is not None


validation = COMPARATORS["validation"]


@pytest.mark.parametrize(
    ("actual", "ok"),
    [
        ({"warnings": []}, True),
        ({"warnings": ["anything"]}, True),
        ({"warnings": "no"}, False),
        ({"warnings": [1]}, False),
        ({}, False),
        ({"warnings": [], "valid": True}, False),
        ([], False),
    ],
)
def test_validation_shape(actual: Any, ok: bool) -> None:
    assert (validation({"warnings": []}, actual, oracle) is None) is ok


def r_doc(rlite: list[tuple[str, dict[str, str]]], nodelist: list[str], **ex: Any) -> Any:
    return {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": r, "children": c} for r, c in rlite],
            "nodelist": nodelist,
            **ex,
        },
    }


def test_rset_comparators_judge_by_decoded_form() -> None:
    decoded = COMPARATORS["rset_decoded"]
    document = COMPARATORS["rset_document"]
    want = r_doc([("0-3", {"core": "0-3"})], ["n[0-3]"], starttime=1)
    # Another encoding of the same set: split entries, plain host names, brackets.
    same = r_doc(
        [("0-1", {"core": "0-1"}), ("[0-1]", {"core": "2-3"}), ("2-3", {"core": "0-3"})],
        ["n0", "n1", "n[2-3]"],
        starttime=1.0,
    )
    assert decoded(want, same, oracle) is None
    assert document(want, same, oracle) is None
    other = r_doc([("0-3", {"core": "0-2"})], ["n[0-3]"], starttime=1)
    assert "different resource set" in (decoded(want, other, oracle) or "")
    renamed = r_doc([("0-3", {"core": "0-3"})], ["m[0-3]"], starttime=1)
    assert "'n0'" in (decoded(want, renamed, oracle) or "")
    untimed = r_doc([("0-3", {"core": "0-3"})], ["n[0-3]"])
    assert decoded(want, untimed, oracle) is None
    assert "starttime" in (document(want, untimed, oracle) or "")
    assert "not a valid R" in (decoded(want, {"version": 1}, oracle) or "")
