"""Comparators of plain values, encoders' strings and Slurm parse trees.

``exact``, ``idset_string``, ``hostlist_string`` and ``slurm_tree``, documented in
:mod:`runner.comparators`.
"""

from __future__ import annotations

import re
from typing import Any

from flux_conformance.runner.bounds import MAX_INT_DIGITS
from flux_conformance.runner.comparators._json import json_equal
from flux_conformance.runner.comparators._oracle import Comparator, Oracle, Refused

__all__ = [
    "collapse_groups",
    "decodes_alike",
    "exact",
    "idset_runs_past_limits",
    "runs_of",
    "slurm_tree",
]

_RUN = re.compile(r"(0|[1-9][0-9]*)(?:-(0|[1-9][0-9]*))?")


def exact(expected: Any, actual: Any, oracle: Oracle) -> str | None:
    """JSON equality."""
    del oracle
    return None if json_equal(expected, actual) else "output differs from the expected value"


def idset_runs_past_limits(text: str) -> list[list[int]] | None:
    """The runs of an RFC 22 idset read with no bound on its ids (None: not an idset).

    Only for texts the reference refuses with ``limit``: RFC 22 bounds no id, so an encoder
    that writes 2**64 exactly conforms, and its answer is judged by the value it names, read
    as strictly as the reference reads the ids it holds (ascending ids, no leading zeros, no
    range whose ends are equal, optional brackets around the whole).
    """
    body = text[1:-1] if text[:1] == "[" and text[-1:] == "]" else text
    runs: list[list[int]] = []
    for part in body.split(",") if body else []:
        match = _RUN.fullmatch(part) if len(part) <= 2 * MAX_INT_DIGITS + 1 else None
        if match is None or any(len(n or "") > MAX_INT_DIGITS for n in match.groups()):
            return None  # an id longer than the runner reads (bounds.MAX_INT_DIGITS)
        low = int(match.group(1))
        high = low if match.group(2) is None else int(match.group(2))
        if match.group(2) is not None and high <= low:
            return None  # a reversed or degenerate range (3-1, 3-3), as the reference reads
        if runs and low <= runs[-1][1]:
            return None  # ids not strictly ascending
        if runs and low == runs[-1][1] + 1:
            runs[-1][1] = high
        else:
            runs.append([low, high])
    return runs


def runs_of(ids: list[int]) -> list[list[int]]:
    """Ascending distinct ``ids`` as maximal runs: ``[1, 2, 3, 5]`` -> ``[[1, 3], [5, 5]]``."""
    runs: list[list[int]] = []
    for value in ids:
        if runs and runs[-1][1] + 1 == value:
            runs[-1][1] = value
        else:
            runs.append([value, value])
    return runs


def decodes_alike(decoder: str, what: str) -> Comparator:
    """Strings that decode (with the oracle's ``decoder``) to the same value.

    For idsets, a text the oracle refuses only for an id past its own limit is read by
    :func:`idset_runs_past_limits` (on either side), so that an id the reference cannot
    hold is still judged by its value, never refused.
    """
    past_limits = idset_runs_past_limits if decoder == "idset.decode" else None

    def read(text: str, oracle: Oracle) -> Any:
        try:
            value = oracle(decoder, text)
        except Refused as exc:
            runs = past_limits(text) if past_limits and exc.category == "limit" else None
            if runs is None:
                raise
            return runs
        return runs_of(value) if past_limits else value

    def compare(expected: Any, actual: Any, oracle: Oracle) -> str | None:
        if not isinstance(actual, str):
            return f"output is not a string but {type(actual).__name__}"
        try:
            got = read(actual, oracle)
        except Refused as exc:
            return f"output {actual!r} is not a valid {what}: {exc.reason}"
        want = read(expected, oracle)
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
