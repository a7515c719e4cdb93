"""Comparators of plain values, encoders' strings and Slurm parse trees.

``exact``, ``idset_string``, ``hostlist_string`` and ``slurm_tree``, documented in
:mod:`runner.comparators`.
"""

from __future__ import annotations

from typing import Any

from flux_conformance.runner.comparators._json import json_equal
from flux_conformance.runner.comparators._oracle import Comparator, Oracle, Refused

__all__ = ["collapse_groups", "decodes_alike", "exact", "slurm_tree"]


def exact(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    """JSON equality."""
    del oracle
    return None if json_equal(expected, actual) else "output differs from the expected value"


def decodes_alike(decoder: str, what: str) -> Comparator:
    """Strings that decode (with the oracle's ``decoder``) to the same value."""

    def compare(expected: Any, actual: Any, oracle: Oracle) -> str | None:
        if not isinstance(actual, str):
            return f"output is not a string but {type(actual).__name__}"
        try:
            got = oracle(decoder, actual)
        except Refused as exc:
            return f"output {actual!r} is not a valid {what}: {exc.reason}"
        want = oracle(decoder, expected)
        if got != want:
            return f"output {actual!r} decodes to a different {what} than {expected!r}"
        return None

    compare.__name__ = f"_{decoder.replace('.', '_')}_alike"
    return compare


def _is_group(node: Any) -> bool:
    return isinstance(node, dict) and isinstance(node.get("children"), list)


def _unwrap(node: Any) -> Any:
    while _is_group(node) and len(node["children"]) == 1:
        node = node["children"][0]
    return node


def collapse_groups(tree: Any) -> Any:
    """``tree`` with every single-child ``{op, children}`` group replaced by its child."""
    # Iterative, so a tree 100,000 levels deep cannot exhaust the stack.
    tree = _unwrap(tree)
    if not _is_group(tree):
        return tree
    root = {**tree, "children": []}
    stack = [(root, list(tree["children"]))]
    while stack:
        parent, children = stack.pop()
        for child in map(_unwrap, children):
            if _is_group(child):
                copy = {**child, "children": []}
                parent["children"].append(copy)
                stack.append((copy, list(child["children"])))
            else:
                parent["children"].append(child)
    return root


def slurm_tree(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    """The same tree once single-child groups are unwrapped on both sides."""
    del oracle
    if json_equal(collapse_groups(expected), collapse_groups(actual)):
        return None
    return "a different tree (single-child groups aside)"
