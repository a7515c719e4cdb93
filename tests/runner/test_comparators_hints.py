"""The hints the export gives beside each expected output (docs/export.md).

A hint is the expected value in the normalised form its comparator compares, so that a consumer
without Python judges alike: two answers the comparator finds alike have the same hint, two it
finds different have different hints.
"""

from __future__ import annotations

from typing import Any

import pytest

from flux_conformance.runner.comparators import COMPARATORS, Refused
from flux_conformance.runner.comparators.hints import HINTS, normalise_resources
from flux_conformance.runner.oracle import reference_oracle

oracle = reference_oracle()
B = 2**64


def hint(name: str, expected: Any) -> Any:
    return HINTS[name](expected, oracle)


@pytest.mark.parametrize(
    ("name", "first", "second"),
    [
        ("idset_string", "1-3,4,7", "[1,2-4,7]"),
        ("idset_string", f"{B}-{B + 2}", f"{B},{B + 1}-{B + 2}"),
        ("hostlist_string", "n[1-3],m1", "n1,n[2-3],m1"),
        ("slurm_tree", {"op": "and", "children": [{"key": "a"}]}, {"key": "a"}),
        (
            "rset_decoded",
            {
                "version": 1,
                "execution": {
                    "R_lite": [{"rank": "0-1", "children": {"core": "0-1"}}],
                    "nodelist": ["n[0-1]"],
                },
            },
            {
                "version": 1,
                "execution": {
                    "R_lite": [
                        {"rank": "0", "children": {"core": "0,1"}},
                        {"rank": "1", "children": {"core": "0-1"}},
                    ],
                    "nodelist": ["n0", "n1"],
                },
            },
        ),
        ("shape_counts", [{"type": "core", "count": "3-5"}], [{"type": "core", "count": "3,4,5"}]),
        (
            "shape_counts",
            [{"type": "core", "count": {"min": 2}}],
            [{"type": "core", "count": "2+"}],
        ),
    ],
)
def test_answers_alike_have_one_hint(name: str, first: Any, second: Any) -> None:
    assert COMPARATORS[name](first, second, oracle) is None
    assert hint(name, first) == hint(name, second)


@pytest.mark.parametrize(
    ("name", "first", "second"),
    [
        ("idset_string", "1-3,5", "1-5"),
        ("idset_string", "1,3", "1-3"),
        ("idset_string", f"{B},{B + 2}", f"{B}-{B + 2}"),
        ("hostlist_string", "n[1-3]", "n[1,3,2]"),
        ("slurm_tree", {"op": "and", "children": [{"key": "a"}, {"key": "b"}]}, {"key": "a"}),
        ("shape_counts", [{"type": "core", "count": 4}], [{"type": "core", "count": "4-5"}]),
        (
            "shape_counts",
            [{"type": "core", "count": 2}],
            [{"type": "core", "count": {"min": 2, "max": 9, "operator": "*", "operand": 1}}],
        ),
    ],
)
def test_answers_that_differ_have_different_hints(name: str, first: Any, second: Any) -> None:
    assert COMPARATORS[name](first, second, oracle) is not None
    assert hint(name, first) != hint(name, second)


def test_an_idset_hint_holds_maximal_runs() -> None:
    assert hint("idset_string", "1-3,4,7,9-10") == {"intervals": [[1, 4], [7, 7], [9, 10]]}
    assert hint("idset_string", "") == {"intervals": []}
    assert hint("idset_string", f"[{B},{B + 1}]") == {"intervals": [[B, B + 1]]}
    with pytest.raises(Refused):
        hint("idset_string", "3-1")  # an expected output that is no idset is a suite defect


def test_the_other_hints_spell_the_expected_value_out() -> None:
    assert hint("hostlist_string", "n[9-10]") == {"hosts": ["n9", "n10"]}
    assert hint("validation_warnings", {"warnings": ["x"]}) == {"warnings": True}
    assert hint("validation_warnings", {"warnings": []}) == {"warnings": False}
    r = {
        "version": 1,
        "execution": {
            "R_lite": [{"rank": "0", "children": {"core": "0"}}],
            "nodelist": ["n0"],
            "starttime": 5.0,
        },
    }
    ranks = [{"rank": 0, "hostname": "n0", "cores": "0", "gpus": "", "properties": []}]
    assert hint("rset_decoded", r) == {"ranks": ranks}
    assert hint("rset_document", r) == {"ranks": ranks, "starttime": 5.0, "expiration": None}


@pytest.mark.parametrize(
    ("count", "normal"),
    [
        (3, {"values": [3]}),
        ("[3]", {"values": [3]}),
        ({"min": 3, "max": 3}, {"values": [3]}),
        ("1,4", {"values": [1, 4]}),
        ("2-16:2:^", {"values": [2, 4, 16]}),
        ({"min": 2}, {"min": 2, "operator": "+", "operand": 1}),
        ("2+:3:*", {"min": 2, "operator": "*", "operand": 3}),
        ("7-1000000000000", {"min": 7, "max": 1_000_000_000_000, "operator": "+", "operand": 1}),
        ({"min": 0}, {"unreadable": {"min": 0}}),
        ("x", {"unreadable": "x"}),
    ],
)
def test_a_count_is_normalised_to_the_counts_it_accepts(count: Any, normal: Any) -> None:
    vertex = {"type": "node", "count": count, "with": [{"type": "core", "count": "2"}]}
    assert normalise_resources(["odd", vertex], oracle) == [
        "odd",
        {"type": "node", "count": normal, "with": [{"type": "core", "count": {"values": [2]}}]},
    ]
    spec = {"version": 1, "resources": [vertex], "tasks": [], "attributes": {"system": {}}}
    assert hint("jobspec_from_shape", spec)["resources"] == normalise_resources([vertex], oracle)


def test_a_vertex_without_a_count_and_a_list_that_is_none_are_kept() -> None:
    assert normalise_resources([{"type": "node"}], oracle) == [{"type": "node"}]
    assert normalise_resources({"type": "node"}, oracle) == {"type": "node"}


def test_a_constraint_hint_gives_what_it_selects_on_each_probe() -> None:
    expected = {"properties": ["ssd"]}
    probes = hint("constraint_semantic", expected)["probes"]
    assert len(probes) == 1
    (probe,) = probes
    properties = probe["R"]["execution"]["properties"]
    assert probe["selects"] == oracle("idset.decode", properties["ssd"])
    for other in ({"properties": ["^ssd"]}, {"hostlist": ["none"]}):
        found = oracle("constraint.match", {"constraint": other, "R": probe["R"]})
        assert found != probe["selects"]


def test_an_allocation_hint_gives_the_facts_of_the_input() -> None:
    from flux_conformance.runner.comparators.allocation import facts

    value = {
        "jobspec": {
            "version": 1,
            "resources": [{"type": "core", "count": 1}],
            "tasks": [{"command": ["x"], "slot": "s", "count": {"per_slot": 1}}],
            "attributes": {"system": {}},
        },
        "pool": {
            "version": 1,
            "execution": {"R_lite": [{"rank": "0", "children": {"core": "0"}}], "nodelist": ["n0"]},
        },
        "now": 100.0,
    }
    got = HINTS["allocation_rules"]({"nodes": 1}, oracle, value)  # type: ignore[call-arg]
    assert got == {"facts": facts(value, oracle)}
    assert getattr(HINTS["allocation_rules"], "needs_input", False)
    assert not any(
        getattr(h, "needs_input", False) for n, h in HINTS.items() if n != "allocation_rules"
    )
