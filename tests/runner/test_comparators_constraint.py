"""Tests for the comparators of RFC 20/31/35 operations (validation, rset_*, constraint_semantic)."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.comparators.constraint import probes
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


# -- what the probes cover, at the documented sizes ---------------------------------------------


def _subsets(constraint: Any) -> list[tuple[str, ...]]:
    """The property subsets of the (host, properties) targets of the first probe R."""
    (_r_doc, targets), *_ = probes([constraint], oracle)
    return [chosen for _rank, _host, chosen in targets]


def _names(count: int) -> list[str]:
    return [f"p{i:03}" for i in range(count)]


def test_up_to_ten_property_names_every_subset_is_probed_once() -> None:
    subsets = _subsets(p(*_names(10)))
    assert len(subsets) == 1024
    assert len(set(subsets)) == 1024


def test_past_ten_property_names_the_subsets_are_sampled() -> None:
    names = _names(11)
    subsets = set(_subsets(p(*names)))
    assert len(subsets) < 2048
    assert {(), tuple(names)} <= subsets
    for name in names:
        assert (name,) in subsets
        assert tuple(n for n in names if n != name) in subsets


def test_pairs_of_properties_are_probed_up_to_32_names() -> None:
    names = _names(32)
    subsets = set(_subsets(p(*names)))
    for first, second in itertools.combinations(names, 2):
        assert (first, second) in subsets
        assert tuple(n for n in names if n not in (first, second)) in subsets
    names = _names(33)
    subsets = set(_subsets(p(*names)))
    assert not [s for s in subsets if len(s) == 2]  # single names only (and the sample)
    for name in names:
        assert (name,) in subsets
        assert tuple(n for n in names if n != name) in subsets


def test_a_constraint_of_up_to_256_property_names_is_compared() -> None:
    names = _names(256)
    assert semantic(p(*names), {"and": [p(*names[:128]), p(*names[128:])]}, oracle) is None
    assert semantic(p(*names), p(*names[:255]), oracle) is not None
    reason = semantic(p(*_names(257)), {"and": [p(*_names(257))]}, oracle)
    assert reason is not None
    assert reason.startswith("cannot compare: the constraints mention too much")


def test_up_to_a_million_hosts_and_ranks_are_enumerated() -> None:
    # The two constraints' idsets hold 1,000,000 ids in all: compared.
    expected = {"ranks": ["0-499999"]}
    assert semantic(expected, {"ranks": ["0-499998", "499999"]}, oracle) is None
    # One more: too many to enumerate, the answer cannot be judged alike.
    reason = semantic(expected, {"ranks": ["0-499999", "500000"]}, oracle)
    assert reason is not None
    assert reason.startswith("cannot compare: the constraints mention too much")


#: The first host representative of the constraints below: the terms are read from the last.
FIRST_HOST = "h23"


def test_past_25000_host_and_property_pairs_a_sample_keeps_the_extremes() -> None:
    # 25 hosts (24 hostlists and one host in none) times 1024 property subsets: 25,600.
    names = _names(10)
    constraint = {"or": [p(*names), *({"hostlist": [f"h{i}"]} for i in range(24))]}
    (_r_doc, targets), *_ = probes([constraint], oracle)
    assert len(targets) == 25_000
    combos = {(host, chosen) for _rank, host, chosen in targets}
    assert len(combos) == 25_000
    assert (FIRST_HOST, ()) in combos
    assert ("none", tuple(names)) in combos


@pytest.mark.parametrize(("patterns", "pairs"), [(30_000, 1), (10_000, 2)])
def test_the_probes_hold_at_most_50000_targets_in_all(patterns: int, pairs: int) -> None:
    # 25,600 (host, properties) pairs sampled to 25,000 in one R, and rank patterns (rank r is
    # in idset i when bit i of r is set): at most 25,000 of them, each with as many of the
    # pairs as 25,000 targets allow, the first and the last first.
    names = _names(10)
    ids = range(1, patterns + 1)
    idsets = [oracle("idset.encode", [r for r in ids if r >> bit & 1]) for bit in range(15)]
    constraint = {
        "or": [
            p(*names),
            *({"hostlist": [f"h{i}"]} for i in range(24)),
            *({"ranks": [text]} for text in idsets),
        ]
    }
    built = probes([constraint], oracle)
    assert sum(len(targets) for _r, targets in built) <= 50_000
    placed = [rank for _r, targets in built[1:] for rank, _host, _chosen in targets]
    assert len(placed) == min(patterns, 25_000) * pairs
    assert len(set(placed)) == min(patterns, 25_000)
    with_ranks = [{(host, chosen) for _rank, host, chosen in targets} for _r, targets in built[1:]]
    assert with_ranks == [{(FIRST_HOST, ())}, {("none", tuple(names))}][:pairs]
