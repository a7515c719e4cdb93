"""Fuzzing every operation of the reference: only its own categorised errors may escape.

Inputs are the suite's own case inputs, mutated (characters inserted, deleted or replaced in
strings; keys dropped or values replaced in objects; items dropped or duplicated in lists),
plus arbitrary JSON.  For every input the reference must either return an output that its
operation's output schema accepts and that JSON can carry, or raise a ``FormatError`` whose
category is registered for the operation.  Nothing else: no TypeError, no RecursionError,
no hang.  ``tox -e fuzz`` runs the same properties with many more examples.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import OPERATIONS, run
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.operations import load_registry

# Characters that matter to one grammar or another, so mutations hit the parsers' edges.
GRAMMAR = "0123456789-,[]:+*^!<>=&|()'\"{}/ \t\\.@~xeEnN"

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(GRAMMAR, max_size=12)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@cache
def _seeds() -> dict[str, list[Any]]:
    seeds: dict[str, list[Any]] = {}
    for case in load_suite().cases:
        seeds.setdefault(case.operation, []).append(case.input)
    return seeds


def _mutate_string(draw: st.DrawFn, text: str) -> str:
    chars = list(text)
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(chars)))
        action = draw(st.sampled_from(["insert", "delete", "replace", "double"]))
        if action == "insert" or not chars:
            chars.insert(where, draw(st.sampled_from(GRAMMAR)))
        elif action == "delete":
            del chars[min(where, len(chars) - 1)]
        elif action == "replace":
            chars[min(where, len(chars) - 1)] = draw(st.sampled_from(GRAMMAR))
        else:
            chars[where:where] = chars[: draw(st.integers(0, len(chars)))]
    return "".join(chars)


@st.composite
def _mutated(draw: st.DrawFn, value: Any, depth: int = 0) -> Any:
    if depth > 6 or draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    if isinstance(value, str):
        return _mutate_string(draw, value) if draw(st.booleans()) else value
    if isinstance(value, dict) and value:
        out = dict(value)
        key = draw(st.sampled_from(sorted(out)))
        action = draw(st.sampled_from(["drop", "mutate", "mutate", "add"]))
        if action == "drop":
            del out[key]
        elif action == "mutate":
            out[key] = draw(_mutated(out[key], depth + 1))
        else:
            out[draw(st.text(max_size=6))] = draw(json_values)
        return out
    if isinstance(value, list) and value:
        out_list = list(value)
        index = draw(st.integers(0, len(out_list) - 1))
        action = draw(st.sampled_from(["drop", "mutate", "mutate", "duplicate"]))
        if action == "drop":
            del out_list[index]
        elif action == "mutate":
            out_list[index] = draw(_mutated(out_list[index], depth + 1))
        else:
            out_list.insert(index, out_list[index])
        return out_list
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return draw(st.sampled_from([0, -1, value + 1, value - 1, 2**64, -(2**63)]))
    return draw(json_values)


@st.composite
def _inputs(draw: st.DrawFn, operation: str) -> Any:
    seeds = _seeds().get(operation) or [None]
    return draw(_mutated(draw(st.sampled_from(seeds))))


def _check(operation: str, value: Any) -> None:
    spec = load_registry()[operation]
    try:
        output = run(operation, value)
    except FormatError as exc:
        # An input the operation's schema refuses is never sent by the runner; any
        # categorised error will do for it.  A well-formed input gets a registered category.
        if not spec.input_problems(value):
            assert exc.category in spec.errors, (operation, value, exc.category, str(exc))  # noqa: PT017
        return
    assert not spec.input_problems(value), (operation, value, "accepted an ill-formed input")
    json.dumps(output, allow_nan=False)
    assert not spec.output_problems(output), (operation, value, output)


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@given(data=st.data())
def test_only_categorised_errors_escape(operation: str, data: st.DataObject) -> None:
    _check(operation, data.draw(_inputs(operation), label="input"))


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@given(value=json_values)
def test_arbitrary_json_never_crashes(operation: str, value: Any) -> None:
    _check(operation, value)


def test_every_operation_is_registered_and_has_cases() -> None:
    assert set(OPERATIONS) == set(load_registry())
    assert set(_seeds()) == set(OPERATIONS)
