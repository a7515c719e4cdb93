"""The reference holds itself to the input schemas the suite publishes.

For every operation, inputs its own input schema (``runner/schemas/operations/<op>.json``)
refuses are derived mechanically from valid inputs of its cases: each value inside the input
replaced by a value of every other JSON type (``null`` among them), each object given an
unknown key, each key removed, and the whole input replaced by each JSON type.  Only the
candidates the schema refuses are kept.  The reference must answer each of them with one of
the operation's registered error categories: never an output (a silent default, such as
``null`` read as "not given"), never a crash.  Checked in-process and through ``serve``.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from functools import cache
from typing import Any

import jsonschema
import pytest

from flux_conformance.reference.errors import FormatError
from flux_conformance.reference.operations import run
from flux_conformance.runner.cases import Case, load_suite
from flux_conformance.runner.operations import OperationSpec

#: One value of each JSON type; a replacement of another type than the original.
_SAMPLES: tuple[Any, ...] = (None, True, 7, 1.5, "x", [], {}, [1], {"k": 1})
#: How many valid inputs of each operation are mutated (the smallest, for speed).
_BASES = 3


def _type_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    return type(value).__name__


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every path into ``value`` (dict keys and list indexes), the root first."""
    yield path
    if isinstance(value, dict):
        for key, inner in value.items():
            yield from _paths(inner, (*path, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value[:3]):
            yield from _paths(inner, (*path, index))


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    out = copy.deepcopy(value)
    holder = out
    for step in path[:-1]:
        holder = holder[step]
    holder[path[-1]] = new
    return out


def _at(value: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        value = value[step]
    return value


def _mutants(base: Any, schema: Any) -> Iterator[tuple[str, Any]]:
    """(what was changed, the changed input) for every mutation of ``base``.

    Optional keys the schema names but ``base`` lacks are added with each sample value too.
    """
    properties = schema.get("properties", {}) if isinstance(schema, dict) else {}
    if isinstance(base, dict):
        for key in properties:
            if key not in base:
                for sample in _SAMPLES:
                    yield f"/{key} added as {json.dumps(sample)}", {**base, key: sample}
    for path in _paths(base):
        here = _at(base, path)
        where = "/" + "/".join(map(str, path))
        for sample in _SAMPLES:
            if _type_of(sample) != _type_of(here):
                yield f"{where} <- {json.dumps(sample)}", _replace(base, path, sample)
        if isinstance(here, dict):
            for key in here:
                smaller = {k: v for k, v in here.items() if k != key}
                yield f"{where} without {key!r}", _replace(base, path, smaller)
            yield f"{where} + unknown key", _replace(base, path, {**here, "zz_unknown": 1})


@cache
def _suite() -> Any:
    return load_suite()


def _bases(op: str) -> list[Case]:
    cases = [
        c
        for c in _suite().cases
        if c.operation == op and c.edition is None and any(e.kind == "output" for e in c.expected)
    ]
    return sorted(cases, key=lambda c: (len(json.dumps(c.input)), c.id))[:_BASES]


def _refused_inputs(spec: OperationSpec) -> list[tuple[str, Any]]:
    validator = jsonschema.Draft202012Validator(spec.input_schema)
    seen: set[str] = set()
    out = []
    for case in _bases(spec.name):
        for what, candidate in _mutants(case.input, spec.input_schema):
            key = json.dumps(candidate, sort_keys=True)
            if key in seen or validator.is_valid(candidate):
                continue
            seen.add(key)
            out.append((f"{case.id}: {what}", candidate))
    return out


def _operations() -> list[OperationSpec]:
    return [spec for _, spec in sorted(_suite().operations.items())]


def test_every_operation_with_a_schema_yields_refused_inputs() -> None:
    # The derivation must not silently produce nothing: operations whose schema constrains
    # anything get candidates (the document operations take any JSON value and get none).
    constrained = [
        s for s in _operations() if isinstance(s.input_schema, dict) and s.input_schema.get("type")
    ]
    assert constrained
    for spec in constrained:
        assert _refused_inputs(spec), spec.name


@pytest.mark.parametrize("spec", _operations(), ids=lambda s: s.name)
def test_schema_refused_inputs_get_a_registered_error(spec: OperationSpec) -> None:
    problems = []
    for what, candidate in _refused_inputs(spec):
        try:
            answer = run(spec.name, candidate)
        except FormatError as exc:
            if exc.category not in spec.errors:
                problems.append(f"{what}: category {exc.category!r} is not registered")
            continue
        problems.append(f"{what}: answered {json.dumps(answer)[:120]} for {json.dumps(candidate)}")
    assert not problems, "\n".join(problems)


def test_schema_refused_inputs_through_serve() -> None:
    """The same inputs, over the protocol: each answer is an error of a registered category."""
    requests, expected = [], []
    for spec in _operations():
        for _, candidate in _refused_inputs(spec):
            requests.append(
                {"cmd": "run", "seq": len(requests) + 1, "operation": spec.name, "input": candidate}
            )
            expected.append(spec)
    lines = [json.dumps({"cmd": "hello", "protocol": 1})]
    lines += [json.dumps(r) for r in requests]
    lines.append(json.dumps({"cmd": "stop"}))
    done = subprocess.run(
        [sys.executable, "-m", "flux_conformance.runner.cli", "serve"],
        input="\n".join(lines) + "\n",
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    replies = [json.loads(line) for line in done.stdout.splitlines()][1:]
    assert len(replies) == len(requests), done.stderr
    for request, spec, reply in zip(requests, expected, replies, strict=True):
        assert reply["seq"] == request["seq"]
        assert "error" in reply, (spec.name, request["input"], reply)
        assert reply["error"]["category"] in spec.errors, (spec.name, reply)
