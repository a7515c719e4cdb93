"""Tests of the RFC 46 shape reference (reference/shape.py) and the shape comparators."""

from __future__ import annotations

import json
import string
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from flux_conformance.reference.errors import FormatError, InvalidError, LimitError, ParseError
from flux_conformance.reference.operations import run
from flux_conformance.reference.shape import MAX_DEPTH, count_to_shape, parse_shape, render_shape
from flux_conformance.runner.comparators import COMPARATORS
from flux_conformance.runner.oracle import reference_oracle

oracle = reference_oracle()


# -- examples and rules ------------------------------------------------------------------------


def test_rfc_example_1_5() -> None:
    shape = "[cluster/slot=2{ib}/node/[memory=4{unit:GB};ib10g];switch/slot=2{bicore}/node/core=2]"
    got = parse_shape(shape)
    assert [v["type"] for v in got] == ["cluster", "switch"]
    node = got[0]["with"][0]["with"][0]
    assert node["with"] == [
        {"type": "memory", "count": 4, "unit": "GB"},
        {"type": "ib10g", "count": 1},
    ]


def test_default_label_and_key_order() -> None:
    got = parse_shape("slot=2/node", default_label="task")
    assert got == [
        {"type": "slot", "count": 2, "label": "task", "with": [{"type": "node", "count": 1}]}
    ]
    assert list(got[0]) == ["type", "count", "label", "with"]


@pytest.mark.parametrize(
    ("text", "seed", "upstream"),
    [
        ("4", 4, 4),
        ("[4]", 4, 4),
        ("3-30", {"min": 3, "max": 30, "operator": "+", "operand": 1}, None),
        ("2+", {"min": 2}, None),
        ("2+:1:+", {"min": 2}, None),
        ("2+:2:*", "2+:2:*", {"min": 2, "operator": "*", "operand": 2}),
        ("1,3", "1,3", None),
        ("[1,3]", "[1,3]", None),
    ],
)
def test_count_spelling(text: str, seed: Any, upstream: Any) -> None:
    assert count_to_shape(text, edition="seed") == seed
    assert count_to_shape(text, edition="upstream") == (seed if upstream is None else upstream)


@pytest.mark.parametrize(
    ("shape", "error", "message"),
    [
        ("a;b", ParseError, "several vertices at one level must be enclosed in '[' ']'"),
        ("slot", ParseError, "a slot must be followed by '/'"),
        ("node={x}", ParseError, "expected a count after '='"),
        ("node ", ParseError, "found ' '"),
        ("node/", ParseError, "expected a resource type, found the end of the input"),
        ("[node", ParseError, "expected ';' or ']'"),
        ("node]", ParseError, "']' closes no '['"),
        ('node{a:"x}', ParseError, "unterminated quoted string"),
        ('node{a:"\\q"}', ParseError, "invalid escape"),
        ("[slot/a;slot/b]", InvalidError, "several slots must label every slot"),
        ("node{a:1,a:2}", InvalidError, "key 'a' given twice"),
        ("node{x,exclusive:false}", InvalidError, "key 'exclusive' given twice"),
        ("node{count:2}", InvalidError, "written by the shape syntax itself"),
        ("slot{a,label:b}/n", InvalidError, "written by the shape syntax itself"),
        ("node=0", InvalidError, "bad count '0'"),
        ("node=01", ParseError, "bad count '01'"),
        ("node=99999999999999999999999", LimitError, "bad count"),
    ],
)
def test_errors(shape: str, error: type[FormatError], message: str) -> None:
    with pytest.raises(error) as info:
        parse_shape(shape)
    assert type(info.value) is error
    assert message in str(info.value)


def test_error_shows_position() -> None:
    with pytest.raises(ParseError) as info:
        parse_shape("slot=4{a}/node;core")
    assert info.value.span == (14, 15)
    assert str(info.value).splitlines()[-1] == "    " + " " * 14 + "^"


@pytest.mark.parametrize(
    "shape",
    [
        "a/" * 10_000 + "a",
        "node{" + "a:{" * 10_000 + "}" * 10_001,
        "node{a:" + "[" * 10_000 + "]" * 10_000 + "}",
        "[a/" * 10_000 + "a" + "]" * 10_000,
    ],
    ids=["slashes", "braces", "arrays", "brackets"],
)
def test_deep_nesting_is_a_limit(shape: str) -> None:
    with pytest.raises(LimitError, match="nested more than"):
        parse_shape(shape)


def test_depth_just_inside_the_limit() -> None:
    # Each '/' opens one list level; the outermost list is level one.
    got = parse_shape("a/" * (MAX_DEPTH - 1) + "a")
    depth = 0
    level: list[dict[str, Any]] | None = got
    while level:
        depth += 1
        level = level[0].get("with")
    assert depth == MAX_DEPTH


def test_values_json_first() -> None:
    got = parse_shape('n{a:01,b:1e2,c:-0.5,d:"1",e:NaN,f:[a,"b",{c}],g:{"h":null},i:\'q,r\'}')
    assert got[0] == {
        "type": "n",
        "count": 1,
        "a": "01",
        "b": 100.0,
        "c": -0.5,
        "d": "1",
        "e": "NaN",
        "f": ["a", "b", {"c": True}],
        "g": {"h": None},
        "i": "q,r",
    }


@pytest.mark.parametrize(
    "value", ["1e400", "-1e400", "[1,1e999]", "{b:2e308}", "1" * 5000, "-" + "9" * 4301]
)
def test_numbers_without_a_faithful_json_value_are_a_limit(value: str) -> None:
    # Infinity has no JSON spelling, and int() refuses more than 4,300 digits.
    with pytest.raises(LimitError) as info:
        parse_shape(f"n{{a:{value}}}")
    assert info.value.reason == "number too large to represent"


def test_numbers_at_the_edges_are_kept() -> None:
    got = parse_shape(f"n{{a:1e308,b:{'1' * 4300},c:1e-400}}")[0]
    assert (got["a"], got["b"], got["c"]) == (1e308, int("1" * 4300), 0.0)
    json.dumps(got, allow_nan=False)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("slot/node", "input must be an object"),
        ({}, "'shape' must be a string"),
        ({"shape": 3}, "'shape' must be a string"),
        ({"shape": "a", "default_label": 1}, "'default_label' must be a string"),
        ({"shape": "a", "label": "x"}, "unknown input key 'label'"),
    ],
)
def test_operation_input(value: Any, message: str) -> None:
    with pytest.raises(InvalidError, match=message):
        run("shape.parse", value)


# -- properties ------------------------------------------------------------------------------

_NAME = st.text(alphabet=string.ascii_letters + string.digits + "-_.@", min_size=1, max_size=8)
_ODD_NAME = st.text(min_size=0, max_size=6)  # anything: the renderer must quote it
_SCALAR = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**6), max_value=10**6)
    | st.floats(allow_nan=False, allow_infinity=False, width=32)
    | _ODD_NAME
)
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_ODD_NAME, inner, max_size=3),
    max_leaves=4,
)
_COUNT = st.one_of(
    st.integers(min_value=1, max_value=10**6),
    st.builds(
        lambda lo, n: {"min": lo, "max": lo + n, "operator": "+", "operand": 1},
        st.integers(1, 99),
        st.integers(1, 99),
    ),
    st.builds(lambda lo: {"min": lo}, st.integers(1, 99)),
    st.builds(lambda a, b: f"{a},{a + b}", st.integers(1, 50), st.integers(2, 50)),
)
_RESERVED = {"type", "count", "with", "label", "x"}


@st.composite
def resources(
    draw: st.DrawFn, depth: int = 0, labels: set[str] | None = None
) -> list[dict[str, Any]]:
    labels = set() if labels is None else labels
    out = []
    for _ in range(draw(st.integers(1, 2))):
        is_slot = draw(st.booleans())
        vertex: dict[str, Any] = {
            "type": "slot" if is_slot else draw(_NAME.filter(lambda t: t != "slot")),
            "count": draw(_COUNT),
        }
        if is_slot:
            label = draw(_NAME.filter(lambda t: t not in labels))
            labels.add(label)
            vertex["label"] = label
        extras = draw(
            st.dictionaries(_ODD_NAME.filter(lambda k: k not in _RESERVED), _VALUE, max_size=3)
        )
        vertex.update(extras)
        if is_slot or (depth < 2 and draw(st.booleans())):
            vertex["with"] = draw(resources(depth + 1, labels))
        out.append(vertex)
    return out


@settings(max_examples=150, deadline=None)
@given(resources())
def test_render_then_parse_is_identity(value: list[dict[str, Any]]) -> None:
    text = render_shape(value)
    assert parse_shape(text) == value
    assert COMPARATORS["shape_counts"](value, parse_shape(text), oracle) is None


@given(st.text(alphabet="slotnde=[]{};,:/+-x0123456789\"' ", max_size=40))
def test_arbitrary_text_gives_a_result_or_a_format_error(text: str) -> None:
    try:
        got = parse_shape(text)
    except FormatError as exc:
        category = exc.category
    else:
        category = "ok"
        json.dumps(got, allow_nan=False)  # always plain JSON
    assert category in {"ok", "syntax", "invalid", "limit"}


# -- comparators -------------------------------------------------------------------------------


def test_shape_counts_comparator() -> None:
    compare = COMPARATORS["shape_counts"]
    want = [
        {
            "type": "slot",
            "count": {"min": 3, "max": 30, "operator": "+", "operand": 1},
            "label": "a",
            "with": [{"type": "n", "count": 1}],
        }
    ]
    same = [{"type": "slot", "count": "3-30", "label": "a", "with": [{"type": "n", "count": "1"}]}]
    assert compare(want, same, oracle) is None
    assert (
        compare([{"type": "n", "count": {"min": 2}}], [{"type": "n", "count": "2+"}], oracle)
        is None
    )
    assert (
        compare([{"type": "n", "count": "4,9"}], [{"type": "n", "count": "[4,9]"}], oracle) is None
    )
    assert (
        compare(
            [{"type": "n", "count": "2+:2:*"}],
            [{"type": "n", "count": {"min": 2, "operator": "*", "operand": 2}}],
            oracle,
        )
        is None
    )
    assert (
        compare([{"type": "n", "count": "1-5:2"}], [{"type": "n", "count": "1,3,5"}], oracle)
        is None
    )
    # Different meanings, labels or keys are caught.
    assert compare(
        [{"type": "n", "count": "2+"}],
        [{"type": "n", "count": {"min": 2, "max": 9, "operator": "+", "operand": 1}}],
        oracle,
    )
    assert compare([{"type": "n", "count": 4}], [{"type": "n", "count": "4,5"}], oracle)
    assert compare(want, [{**same[0], "label": "b"}], oracle)
    assert compare([{"type": "n", "count": 1}], [{"type": "n", "count": 1, "x": True}], oracle)
    assert compare([{"type": "n", "count": 1}], [{"type": "n", "count": True}], oracle)
    assert compare([{"type": "n", "count": 1}], {"type": "n"}, oracle)


def test_validation_warnings_comparator() -> None:
    compare = COMPARATORS["validation_warnings"]
    assert compare({"warnings": []}, {"warnings": []}, oracle) is None
    assert compare({"warnings": ["x"]}, {"warnings": ["other words", "two"]}, oracle) is None
    assert compare({"warnings": []}, {"warnings": ["x"]}, oracle)
    assert compare({"warnings": ["x"]}, {"warnings": []}, oracle)
    assert compare({"warnings": []}, {"warnings": [1]}, oracle)
    assert compare({"warnings": []}, [], oracle)


def test_from_shape_comparator_accepts_a_consistent_relabelling() -> None:
    compare = COMPARATORS["jobspec_from_shape"]
    want = run("jobspec.from_shape", {"shape": "slot=2/node", "command": ["app"]})
    other = run(
        "jobspec.from_shape", {"shape": "slot=2/node", "command": ["app"], "default_label": "task"}
    )
    assert compare(want, other, oracle) is None
    broken = json.loads(json.dumps(other))
    broken["tasks"][0]["slot"] = "default"
    assert compare(want, broken, oracle)  # not a valid jobspec any more
    wrong = json.loads(json.dumps(other))
    wrong["tasks"][0]["count"] = {"per_slot": 2}
    assert compare(want, wrong, oracle)
    two = run("jobspec.from_shape", {"shape": "[slot{a}/n;slot{b}/m]", "command": ["app"]})
    swapped = json.loads(json.dumps(two))
    swapped["tasks"].reverse()
    assert compare(two, swapped, oracle)
