"""Tests of RFC 14 jobspec validation and jobspec.from_shape (reference/jobspec.py)."""

from __future__ import annotations

import copy
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import case_inputs

from flux_conformance.reference.errors import FormatError, InvalidError, LimitError
from flux_conformance.reference.jobspec import MAX_DEPTH, jobspec_from_shape, validate_jobspec
from flux_conformance.reference.operations import run
from flux_conformance.reference.shape import render_shape

# The RFC 14 and RFC 25 examples and use cases, as the suite encodes them (verbatim).
_DOCUMENTS = {
    **case_inputs("rfc14/jobspec.validate.yaml", "jobspec.validate.rfc14-"),
    **case_inputs("rfc14/jobspec.validate.yaml", "jobspec.validate.rfc25-"),
}


def minimal(**over: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "version": 1,
        "resources": [
            {"type": "slot", "count": 1, "label": "s", "with": [{"type": "node", "count": 1}]}
        ],
        "tasks": [{"command": ["app"], "slot": "s", "count": {"per_slot": 1}}],
        "attributes": {"system": {}},
    }
    doc.update(over)
    return doc


def test_every_rfc_example_is_there() -> None:
    assert len(_DOCUMENTS) == 25  # 2 examples and 17 use cases of RFC 14, 1 and 5 of RFC 25


@pytest.mark.parametrize("case_id", sorted(_DOCUMENTS))
@pytest.mark.parametrize("edition", ["seed", "upstream"])
def test_rfc_documents_are_valid(case_id: str, edition: str) -> None:
    assert validate_jobspec(_DOCUMENTS[case_id], edition=edition) == []


def test_minimal() -> None:
    assert run("jobspec.validate", minimal()) == {"warnings": []}


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["resources"][0]["with"][0].update(count=0), "resources[0].with[0].count: "),
        (
            lambda d: d["resources"][0]["with"][0].update({"with": []}),
            "resources[0].with[0].with: must hold at least one",
        ),
        (
            lambda d: d["tasks"][0]["count"].update(total=2),
            "tasks[0].count: must hold exactly one key, not 2",
        ),
        (
            lambda d: d["tasks"][0].update(slot="t"),
            "tasks[0].slot: no resource vertex of type slot has label 't'",
        ),
        (
            lambda d: d["attributes"]["system"].update(duration=-1),
            "attributes.system.duration: must be greater than or equal to zero",
        ),
        (
            lambda d: d["attributes"]["system"].update(environment={"A": 1}),
            "attributes.system.environment.A: must be a string or null",
        ),
        (
            lambda d: d["attributes"]["system"].update(
                dependencies=[{"scheme": "string", "value": "x", "type": "in"}]
            ),
            "attributes.system.dependencies[0]: a 'string' dependency must have 'scope'",
        ),
        (
            lambda d: d["attributes"]["system"].update(constraints={"and": [{"ranks": [0]}]}),
            "attributes.system.constraints",
        ),
        (lambda d: d.update(attributes=None), "attributes: must be an object of objects, not null"),
        (lambda d: d.pop("version"), "a jobspec must have 'version'"),
    ],
)
def test_error_messages_name_the_path(mutate: Any, message: str) -> None:
    doc = minimal()
    mutate(doc)
    with pytest.raises(InvalidError) as info:
        validate_jobspec(doc)
    assert type(info.value) is InvalidError
    assert message in str(info.value)


def test_count_syntax_errors_are_invalid_in_a_document() -> None:
    doc = minimal()
    doc["resources"][0]["count"] = "01"
    with pytest.raises(InvalidError, match=r"^resources\[0\]\.count: "):
        validate_jobspec(doc)


def test_huge_count_is_a_limit() -> None:
    doc = minimal()
    doc["resources"][0]["count"] = 2**70
    with pytest.raises(LimitError):
        validate_jobspec(doc)


def test_warnings_name_the_path() -> None:
    doc = minimal(extra=1)
    doc["resources"][0]["color"] = "red"
    doc["attributes"]["system"]["hint"] = 1
    doc["tasks"][0]["priority"] = 2
    assert validate_jobspec(doc) == [
        "resources[0].color: key not defined by RFC 14 for a resource vertex",
        "tasks[0].priority: key not defined by RFC 14 for a task",
        "attributes.system.hint: system attribute not recognised",
        "extra: key not defined by RFC 14 for a jobspec",
    ]


@pytest.mark.parametrize(
    ("count", "seed_ok", "upstream_ok"),
    [
        ({"min": 1, "max": 4}, False, True),
        ({"min": 2, "operator": "*", "operand": 2}, False, True),
        ({"min": 1, "max": 4, "operator": "+"}, False, False),
        ({"min": 1, "max": 4, "operator": "+", "operand": 1}, True, True),
        ({"min": 1}, True, True),
    ],
)
def test_editions(count: dict[str, Any], seed_ok: bool, upstream_ok: bool) -> None:
    for edition, ok in (("seed", seed_ok), ("upstream", upstream_ok)):
        doc = minimal()
        doc["resources"][0]["with"][0]["count"] = count
        if ok:
            assert run("jobspec.validate", doc, edition=edition) == {"warnings": []}
        else:
            with pytest.raises(InvalidError):
                run("jobspec.validate", doc, edition=edition)


def _deep_resources(depth: int) -> list[dict[str, Any]]:
    leaf: dict[str, Any] = {"type": "core", "count": 1}
    for _ in range(depth):
        leaf = {"type": "group", "count": 1, "with": [leaf]}
    return [{"type": "slot", "count": 1, "label": "s", "with": [leaf]}]


def test_deep_resources_are_a_limit() -> None:
    with pytest.raises(LimitError, match="nested more than"):
        validate_jobspec(minimal(resources=_deep_resources(100_000)))


def test_depth_just_inside_the_limit() -> None:
    assert validate_jobspec(minimal(resources=_deep_resources(MAX_DEPTH - 2))) == []


def test_deep_free_form_attributes_are_not_walked() -> None:
    deep: Any = "leaf"
    for _ in range(100_000):
        deep = {"a": deep}
    assert validate_jobspec(minimal(attributes={"user": deep})) == []
    with pytest.raises(LimitError):
        run(
            "jobspec.from_shape",
            {"shape": "slot/node", "command": ["a"], "attributes": {"user": deep}},
        )


def test_deep_constraints_give_a_clean_error() -> None:
    deep: Any = {"properties": ["a"]}
    for _ in range(100_000):
        deep = {"not": [deep]}
    doc = minimal(attributes={"system": {"constraints": deep}})
    with pytest.raises(FormatError) as info:
        validate_jobspec(doc)
    assert info.value.category in {"invalid", "limit"}


def test_from_shape() -> None:
    got = jobspec_from_shape("[slot{a}/node;slot{b}/core]", ["app", "-v"], tasks={"per_slot": 2})
    assert got["version"] == 1
    assert [t["slot"] for t in got["tasks"]] == ["a", "b"]
    assert all(t["count"] == {"per_slot": 2} for t in got["tasks"])
    assert got["attributes"] == {"system": {}}


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"shape": "node", "command": ["a"]}, "declares no slot"),
        (
            {"shape": "[slot{a}/n;slot{b}/n]", "command": ["a"], "tasks": {"total": 2}},
            "cannot be shared",
        ),
        ({"shape": "slot/n", "command": []}, "command: must not be empty"),
        ({"shape": "slot/n", "command": ["a"], "tasks": {"per_resource": {}}}, "exactly one of"),
        ({"shape": "slot/n", "command": ["a"], "tasks": {"per_slot": True}}, "positive integer"),
        ({"shape": "slot/n", "command": ["a"], "nodes": 2}, "nodes: unknown input key"),
        ({"shape": "slot/n"}, "input must have 'command'"),
        ("slot/n", "must be an object"),
        # The input schema types each optional key: present, null is a wrong type, not absent.
        ({"shape": "slot/n", "command": ["a"], "tasks": None}, "tasks: must be an object"),
        ({"shape": "slot/n", "command": ["a"], "attributes": None}, "attributes: must be an"),
        ({"shape": "slot/n", "command": ["a"], "default_label": None}, "default_label: must be"),
    ],
)
def test_from_shape_refusals(value: Any, message: str) -> None:
    with pytest.raises(InvalidError, match=message):
        run("jobspec.from_shape", value)


# -- properties ------------------------------------------------------------------------------

_TYPE = st.text(alphabet=string.ascii_lowercase, min_size=1, max_size=6).filter(
    lambda t: t != "slot"
)
_COUNT = st.one_of(
    st.integers(min_value=1, max_value=1000),
    st.builds(lambda lo: {"min": lo}, st.integers(1, 9)),
    st.builds(lambda lo, n: f"{lo}-{lo + n}", st.integers(1, 9), st.integers(0, 9)),
)


@st.composite
def graphs(draw: st.DrawFn, depth: int = 0) -> list[dict[str, Any]]:
    out = []
    for _ in range(draw(st.integers(1, 3))):
        vertex: dict[str, Any] = {"type": draw(_TYPE), "count": draw(_COUNT)}
        if draw(st.booleans()):
            vertex["exclusive"] = draw(st.booleans())
        if depth < 3 and draw(st.booleans()):
            vertex["with"] = draw(graphs(depth + 1))
        out.append(vertex)
    return out


@settings(max_examples=100, deadline=None)
@given(graphs(), st.integers(1, 4))
def test_generated_jobspecs_validate_and_survive_a_shape_round_trip(
    children: list[dict[str, Any]], per_slot: int
) -> None:
    resources = [{"type": "slot", "count": 2, "label": "s", "with": children}]
    doc = minimal(resources=resources)
    doc["tasks"][0]["count"] = {"per_slot": per_slot}
    assert validate_jobspec(doc) == []
    built = jobspec_from_shape(render_shape(resources), ["app"], tasks={"per_slot": per_slot})
    assert validate_jobspec(built) == []
    assert built["tasks"] == doc["tasks"]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(_JSON)
def test_any_json_value_is_judged_not_crashed_on(value: Any) -> None:
    try:
        validate_jobspec(value)
    except FormatError as exc:
        category = exc.category
    else:
        category = "valid"
    assert category in {"valid", "invalid", "limit"}


@given(
    st.sampled_from(["resources", "tasks", "attributes", "version"]),
    _JSON,
)
def test_any_value_in_a_required_key_is_judged_not_crashed_on(key: str, value: Any) -> None:
    doc = copy.deepcopy(minimal())
    doc[key] = value
    try:
        validate_jobspec(doc)
    except FormatError as exc:
        category = exc.category
    else:
        category = "valid"
    assert category in {"valid", "invalid", "limit"}
