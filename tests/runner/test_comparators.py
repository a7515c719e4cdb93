"""Comparators that are not tested beside their operation's reference tests."""

from __future__ import annotations

import pytest

from flux_conformance.runner.comparators import COMPARATORS, json_equal
from flux_conformance.runner.comparators.shape import count_key
from flux_conformance.runner.oracle import reference_oracle

LEAF_A = {"key": "a", "comparison": "=", "value": "1"}
LEAF_B = {"key": "b", "comparison": "=", "value": "2"}


def test_json_equal_tells_types_apart():
    assert json_equal([1, {"a": None}], [1, {"a": None}])
    assert not json_equal(1, 1.0)
    assert not json_equal(1, True)
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
    assert not json_equal([1, 2], [2, 1])


def test_slurm_tree_ignores_single_child_groups_only():
    same = COMPARATORS["slurm_tree"]
    wrapped = {"op": "and", "children": [{"op": "and", "children": [LEAF_A]}]}
    assert same(wrapped, LEAF_A, None) is None
    both = {"op": "and", "children": [LEAF_A, LEAF_B]}
    nested = {"op": "and", "children": [{"op": "or", "children": [both]}]}
    assert same(both, nested, None) is None
    # Groups with several children are not merged, order and operator count.
    flat = {"op": "and", "children": [LEAF_A, LEAF_B, LEAF_A]}
    grouped = {"op": "and", "children": [both, LEAF_A]}
    assert same(flat, grouped, None) is not None
    assert same(both, {"op": "or", "children": [LEAF_A, LEAF_B]}, None) is not None
    assert same(both, {"op": "and", "children": [LEAF_B, LEAF_A]}, None) is not None


def test_slurm_tree_handles_very_deep_trees():
    deep = LEAF_A
    for _ in range(100_000):
        deep = {"op": "and", "children": [deep]}
    assert COMPARATORS["slurm_tree"](deep, LEAF_A, None) is None


def _document(starttime: float | None, expiration: float | None) -> dict:
    execution: dict = {
        "R_lite": [{"rank": "0", "children": {"core": "0-1"}}],
        "nodelist": ["node0"],
    }
    if starttime is not None:
        execution["starttime"] = starttime
    if expiration is not None:
        execution["expiration"] = expiration
    return {"version": 1, "execution": execution}


@pytest.mark.parametrize(
    ("expected", "actual", "alike"),
    [
        ((0.0, 10.0), (0.0, 10.0), True),
        ((None, None), (None, None), True),
        ((5.0, None), (None, None), False),  # a start time lost
        ((None, None), (5.0, None), False),  # a start time made up
        ((5.0, 10.0), (5.0, 11.0), False),  # another expiration
        ((0.0, 10.0), (None, 10.0), False),  # a start time of 0 is a start time
    ],
    ids=["same", "neither", "lost", "made-up", "other-expiration", "zero-lost"],
)
def test_an_r_document_keeps_its_start_and_expiration_times(expected, actual, alike) -> None:
    compare = COMPARATORS["rset_document"]
    reason = compare(_document(*expected), _document(*actual), reference_oracle(None))
    assert (reason is None) is alike, reason
    # rset_decoded compares the resources only.
    assert (
        COMPARATORS["rset_decoded"](
            _document(*expected), _document(*actual), reference_oracle(None)
        )
        is None
    )


@pytest.mark.parametrize(
    ("count", "expand", "key"),
    [
        (3, 100_000, ("values", (3,))),
        (True, 100_000, None),
        ({"min": 2}, 100_000, ("unbounded", 2, "+", 1)),
        ({"min": 1, "max": 5}, 5, ("values", (1, 2, 3, 4, 5))),
        ({"min": 1, "max": 5}, 4, ("bounded", 1, 5, "+", 1)),
        ({"min": 1, "max": 6, "operator": "+", "operand": 2}, 100_000, ("values", (1, 3, 5))),
        ({"min": 1, "max": 6, "operator": "+", "operand": 2}, 2, ("bounded", 1, 5, "+", 2)),
        ({"min": 1, "max": 6, "operand": 2}, 100_000, None),  # operand without operator
        ({"min": 2, "max": 16, "operator": "*", "operand": 2}, 100_000, ("values", (2, 4, 8, 16))),
        ({"min": 2, "max": 15, "operator": "*", "operand": 2}, 100_000, ("values", (2, 4, 8))),
        ({"min": 2, "max": 4, "operator": "^", "operand": 2}, 100_000, ("values", (2, 4))),
        (
            {"min": 2, "max": 256, "operator": "^", "operand": 2},
            100_000,
            ("values", (2, 4, 16, 256)),
        ),
        ({"min": 2, "max": 255, "operator": "^", "operand": 2}, 100_000, ("values", (2, 4, 16))),
        ({"min": 3, "max": 27, "operator": "^", "operand": 3}, 100_000, ("values", (3, 27))),
        (
            {"min": 2, "max": 2**64 - 1, "operator": "^", "operand": 10**10},
            100_000,
            ("values", (2,)),
        ),
        ({"min": "1"}, 100_000, None),
        ({"min": 1, "max": "5"}, 100_000, None),
        ({"min": 1, "operand": 0}, 100_000, None),
        ({"min": 1, "operand": True}, 100_000, None),
        ({"min": 1, "operator": 1}, 100_000, None),
        ({"min": 2, "max": 10, "operator": "*", "operand": 1}, 100_000, None),
        ({"min": 1, "max": 10, "operator": "^", "operand": 2}, 100_000, None),
        ({"min": 1, "max": 2, "extra": 1}, 100_000, None),
        ({"min": 2**64}, 100_000, None),
        ("1,3,5", 100_000, ("values", (1, 3, 5))),
        ("1,3,5", 3, ("values", (1, 3, 5))),
        ("1,3,5", 2, None),
        ("not a count", 100_000, None),
        ([1], 100_000, None),
    ],
)
def test_a_count_is_keyed_by_its_values_or_its_bounds(count, expand, key) -> None:
    assert count_key(count, reference_oracle(None), expand) == key


def test_an_idset_past_the_limits_with_an_id_of_4301_digits_is_not_read() -> None:
    from flux_conformance.runner.comparators.text import idset_runs_past_limits

    id_4300 = int("1" * 4300)
    assert idset_runs_past_limits("1" * 4300) == [[id_4300, id_4300]]
    assert idset_runs_past_limits(f"{'1' * 4300}-{'1' * 4299}2") == [[id_4300, id_4300 + 1]]
    # Too long for the runner to read: no idset, never a traceback.
    assert idset_runs_past_limits("1" * 4301) is None
    assert idset_runs_past_limits(f"1-{'1' * 4301}") is None
