"""Comparators that are not tested beside their operation's reference tests."""

from __future__ import annotations

from flux_conformance.runner.comparators import COMPARATORS, json_equal

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
