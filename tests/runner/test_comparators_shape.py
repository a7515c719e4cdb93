"""The judgement of ``shape_counts`` (``shape.parse``) and ``jobspec_from_shape``.

Each test gives a case's expected output and an implementation's answer and says whether the
answer conforms: a count written in another form that accepts the same counts does, a count
RFC 14 does not allow never does, and every other key is compared exactly.  For
``jobspec.from_shape`` a consistent renaming of the slot's label conforms.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.oracle import reference_oracle

oracle = reference_oracle()
shape_counts = COMPARATORS["shape_counts"]
from_shape = COMPARATORS["jobspec_from_shape"]


def core(count: Any) -> list[dict[str, Any]]:
    return [{"type": "core", "count": count}]


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        (3, "3"),
        ("3", 3),
        ({"min": 3, "max": 30, "operator": "+", "operand": 1}, "3-30"),
        ({"min": 3, "max": 30}, "3-30"),
        ({"min": 2}, "2+"),
        ("2+:2:*", {"min": 2, "operator": "*", "operand": 2}),
        ("1-5:2", "1,3,5"),
        ("4,9", "[4,9]"),
        ({"min": 2, "max": 20, "operator": "*", "operand": 2}, "2,4,8,16"),
        ({"min": 2, "max": 16, "operator": "^", "operand": 2}, "2,4,16"),
        ({"min": 2, "max": 255, "operator": "^", "operand": 2}, "2,4,16"),
        ({"min": 2, "max": 256, "operator": "^", "operand": 2}, "2,4,16,256"),
        ({"min": 3, "max": 27, "operator": "^", "operand": 3}, "3,27"),
        ({"min": 1, "max": 10}, "1-3,4-10"),
        # A count of 100,000 values is compared by its values, whatever its form.
        ({"min": 1, "max": 100_000}, "1-50000,50001-100000"),
        # Larger ranges by their bounds: the last value reached, not the max written.
        ({"min": 1, "max": 200_001, "operator": "+", "operand": 2}, "1-200002:2"),
        ({"min": 7, "max": 10**12}, "7-1000000000000"),
        # Two equal dictionaries are equal, even one RFC 14 does not allow.
        ({"min": 2, "max": 10, "operator": "*", "operand": 1},) * 2,
    ],
)
def test_counts_that_accept_the_same_values_conform(expected: Any, actual: Any) -> None:
    assert shape_counts(core(expected), core(actual), oracle) is None


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        (4, "4,5"),
        (4, 5),
        ("1-5", 5),
        ({"min": 2}, {"min": 2, "max": 9, "operator": "+", "operand": 1}),
        ({"min": 2}, {"min": 3}),
        ("2+:2:*", {"min": 2, "operator": "*", "operand": 3}),
        ({"min": 2, "max": 16, "operator": "^", "operand": 2}, "2,4"),
        ("2,4,8", {"min": 2, "max": 16, "operator": "*", "operand": 2}),
        ("2,4", {"min": 2, "max": 16, "operator": "^", "operand": 2}),
        ({"min": 2, "max": 16, "operator": "^", "operand": 2}, "2,4,16,256"),
        ({"min": 1, "max": 10}, "1-3,4-9"),
        ({"min": 1, "max": 10}, "1-3,4-11"),
        ({"min": 1, "max": 200_001, "operator": "+", "operand": 2}, "1-200004:2"),
        ({"min": 1, "max": 200_001, "operator": "+", "operand": 2}, "3-200001:2"),
        # Past 100,000 values an idset is not expanded: compared exactly only.
        ({"min": 1, "max": 100_001}, "1-50000,50001-100001"),
        # Counts RFC 14 does not allow mean nothing, whatever their values would be.
        (2, {"min": 2, "max": 10, "operator": "*", "operand": 1}),
        (2, {"min": 2, "max": 2, "extra": True}),
        ({"min": 1, "max": 6, "operator": "+", "operand": 2}, {"min": 1, "max": 6, "operand": 2}),
        (1, {"min": 1, "max": 1, "operator": "^", "operand": 2}),
        (1, True),
        (1, [1]),
        (1, "one"),
        # Numbers past the oracle's limits are compared exactly.
        (2**64, {"min": 2**64, "max": 2**64}),
        (2**64, f"{2**64}"),
    ],
)
def test_counts_that_accept_other_values_do_not_conform(expected: Any, actual: Any) -> None:
    reason = shape_counts(core(expected), core(actual), oracle)
    assert reason is not None
    assert reason.startswith("resources[0].count: ")


def test_an_unreadable_expected_count_conforms_only_to_itself() -> None:
    unreadable = {"min": 0}
    assert shape_counts(core(unreadable), core({"min": 0}), oracle) is None
    assert shape_counts(core(unreadable), core({"min": 1}), oracle) is not None


SLOT = [
    {
        "type": "slot",
        "count": {"min": 3, "max": 30, "operator": "+", "operand": 1},
        "label": "a",
        "with": [{"type": "node", "count": 1, "exclusive": True}],
    }
]


def test_a_resources_list_conforms_with_its_counts_in_other_forms() -> None:
    same = copy.deepcopy(SLOT)
    same[0]["count"] = "3-30"
    same[0]["with"][0]["count"] = "1"
    assert shape_counts(SLOT, same, oracle) is None
    assert shape_counts(SLOT, copy.deepcopy(SLOT), oracle) is None


def _changed(path: str, value: Any) -> list[dict[str, Any]]:
    out = copy.deepcopy(SLOT)
    *parents, key = path.split(".")
    node: Any = out[0]
    for part in parents:
        node = node[part][0]
    if value is KeyError:
        del node[key]
    else:
        node[key] = value
    return out


@pytest.mark.parametrize(
    ("actual", "where"),
    [
        (_changed("label", "b"), "resources[0].label"),
        (_changed("type", "node"), "resources[0].type"),
        (_changed("with.exclusive", False), "resources[0].with[0].exclusive"),
        (_changed("with.count", 2), "resources[0].with[0].count"),
        (_changed("with.type", "core"), "resources[0].with[0].type"),
        (_changed("with.extra", 1), "resources[0].with[0]: keys differ"),
        (_changed("with.exclusive", KeyError), "resources[0].with[0]: keys differ"),
        (_changed("label", KeyError), "resources[0]: keys differ"),
        (_changed("with", []), "resources[0].with: expected 1 vertices"),
        (_changed("with", {"type": "node", "count": 1}), "resources[0].with: expected a list"),
        (_changed("with", [5]), "resources[0].with[0]: expected a vertex object"),
        (SLOT * 2, "resources: expected 1 vertices"),
        ([], "resources: expected 1 vertices"),
        (SLOT[0], "resources: expected a list"),
        (5, "resources: expected a list"),
        ([5], "resources[0]: expected a vertex object"),
        (["slot"], "resources[0]: expected a vertex object"),
    ],
)
def test_a_resources_list_differing_anywhere_else_does_not_conform(actual: Any, where: str) -> None:
    reason = shape_counts(SLOT, actual, oracle)
    assert reason is not None
    assert reason.startswith(where), reason


def test_keys_that_differ_are_named() -> None:
    actual = _changed("with.extra", 1)
    del actual[0]["with"][0]["exclusive"]
    reason = shape_counts(SLOT, actual, oracle)
    assert reason == (
        "resources[0].with[0]: keys differ (missing ['exclusive'], unexpected ['extra'])"
    )


# -- jobspec.from_shape ----------------------------------------------------------------------


def _jobspec(label: str = "default", **changes: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "version": 1,
        "resources": [
            {
                "type": "slot",
                "count": 2,
                "label": label,
                "with": [{"type": "node", "count": {"min": 1, "max": 4}}],
            }
        ],
        "tasks": [{"command": ["app"], "slot": label, "count": {"per_slot": 1}}],
        "attributes": {"system": {}},
    }
    spec.update(changes)
    return spec


def test_the_reference_accepts_the_jobspecs_these_tests_build() -> None:
    assert oracle("jobspec.validate", _jobspec()) == {"warnings": []}


@pytest.mark.parametrize(
    "actual",
    [
        _jobspec(),
        _jobspec("task"),  # the slot's label renamed, in the task too
        _jobspec(
            resources=[
                {
                    "type": "slot",
                    "count": "2",
                    "label": "s",
                    "with": [{"type": "node", "count": "1-4"}],
                }
            ],
            tasks=[{"command": ["app"], "slot": "s", "count": {"per_slot": 1}}],
        ),
    ],
    ids=["same", "renamed", "counts-in-other-forms"],
)
def test_a_jobspec_alike_but_for_labels_and_count_forms_conforms(actual: dict[str, Any]) -> None:
    assert from_shape(_jobspec(), actual, oracle) is None


def _task(**changes: Any) -> list[dict[str, Any]]:
    return [{"command": ["app"], "slot": "default", "count": {"per_slot": 1}, **changes}]


@pytest.mark.parametrize(
    ("actual", "reason"),
    [
        ([], "output is not a jobspec object but list"),
        (_jobspec(version=2), "version: expected 1, got 2"),
        (_jobspec(version=True), "output is not a valid jobspec"),
        ({**_jobspec(), "attributes": {"system": {"duration": 60}}}, "attributes: expected"),
        ({**_jobspec(), "x": 1}, "top-level keys differ"),
        (_jobspec(tasks=_task(slot="other")), "output is not a valid jobspec"),
        (_jobspec("task", tasks=_task()), "output is not a valid jobspec"),
        (_jobspec(tasks=_task(command=["other"])), "tasks[0].command: expected ['app']"),
        (_jobspec(tasks=_task(count={"total": 1})), "tasks[0].count: expected"),
        (_jobspec(tasks=_task(attributes={})), "tasks[0]: keys differ"),
        (_jobspec(tasks=_task() * 2), "expected 1 tasks, got 2"),
        (
            _jobspec(resources=[{**_jobspec()["resources"][0], "count": 3}]),
            "resources[0].count: expected 2",
        ),
    ],
)
def test_a_jobspec_differing_otherwise_does_not_conform(actual: Any, reason: str) -> None:
    got = from_shape(_jobspec(), actual, oracle)
    assert got is not None
    assert got.startswith(reason), got
