"""Tests of the RFC 45 range and RFC 14 count reference (reference/ranges.py)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from flux_conformance.reference._limits import MAX_ID
from flux_conformance.reference.errors import InvalidError, LimitError, ParseError
from flux_conformance.reference.operations import run
from flux_conformance.reference.ranges import Count, Range, parse_count, parse_range

numbers = st.integers(min_value=0, max_value=MAX_ID)


@st.composite
def ranges(draw: st.DrawFn) -> Range:
    low = draw(numbers)
    high = draw(st.none() | st.integers(min_value=low, max_value=MAX_ID))
    return Range(low, high, draw(st.sampled_from("+*^")), draw(numbers))


@given(ranges())
def test_range_text_round_trip(value: Range) -> None:
    assert parse_range(value.encode()) == value
    assert parse_range(f"[{value.encode()}]") == value


@given(ranges())
def test_range_json_round_trip(value: Range) -> None:
    data = value.to_json()
    assert ("max" in data) == (value.max is not None)
    rebuilt = Range(data["min"], data.get("max"), data["operator"], data["operand"])
    assert rebuilt == value
    assert run("range.decode", value.encode()) == data


def test_range_short_forms() -> None:
    assert Range(1, 4).encode() == "1-4"
    assert Range(1, 5, "+", 2).encode() == "1-5:2"
    assert Range(1, 5, "*", 2).encode() == "1-5:2:*"
    assert Range(100, None).encode() == "100+"
    assert parse_range("5") == Range(5, 5)
    assert parse_range("1-4:1:+") == parse_range("1-4") == parse_range("[1-4]")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5:2", "unexpected text after the range, found ':'"),
        ("1-5:*", "expected an operand, found '*'"),
        ("2-8:01", "numbers are written without leading zeros"),
        ("3-1", "the maximum is below the minimum"),
        ("1-5:2:/", "expected an operator (+, * or ^), found '/'"),
        ("[5", "expected ']' closing the range, found the end of the input"),
        ("", "expected the minimum, found the end of the input"),
    ],
)
def test_range_syntax_messages(text: str, message: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_range(text)
    assert info.value.reason == message


def test_range_limits() -> None:
    assert parse_range(f"1-{MAX_ID}").max == MAX_ID
    with pytest.raises(LimitError):
        parse_range(f"1-{MAX_ID + 1}")
    with pytest.raises(LimitError):
        parse_range("1" * 5000)


def _brute_force(count: Count, limit: int) -> list[int]:
    return [n for n in range(limit + 1) if n in count]


@st.composite
def count_dicts(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from("+*^"))
    low = draw(st.integers(min_value=2 if operator == "^" else 1, max_value=40))
    operand = draw(st.integers(min_value=1 if operator == "+" else 2, max_value=5))
    high = draw(st.integers(min_value=low, max_value=400))
    return {"min": low, "max": high, "operator": operator, "operand": operand}


@given(count_dicts(), st.integers(min_value=0, max_value=500))
def test_count_values_follow_the_operator(data: dict[str, Any], limit: int) -> None:
    count = parse_count(data)
    values = count.values(limit)
    expected = []
    value = data["min"]
    while value <= min(limit, data["max"]):
        expected.append(value)
        if data["operator"] == "+":
            value += data["operand"]
        elif data["operator"] == "*":
            value *= data["operand"]
        else:
            value **= data["operand"]
    assert values == expected
    assert values == _brute_force(count, limit)
    # The string spelling of the same range means the same.
    text = Range(data["min"], data["max"], data["operator"], data["operand"]).encode()
    assert parse_count(text).values(limit) == values
    assert count.to_json() == data


@given(st.sets(st.integers(min_value=1, max_value=200), min_size=1), st.integers(0, 250))
def test_idset_counts(values: set[int], limit: int) -> None:
    from flux_conformance.reference.idset import encode

    count = parse_count(encode(values))
    assert count.values(limit) == sorted(v for v in values if v <= limit)
    assert count.min == min(values)
    assert count.max == max(values)


def test_count_forms_and_accessors() -> None:
    assert parse_count(4).values(10) == [4]
    assert parse_count(4).to_json() == 4
    assert parse_count("3-30") == parse_count("[3-30]")
    unbounded = parse_count({"min": 2})
    assert (unbounded.min, unbounded.max) == (2, None)
    assert parse_count("2+:3").max is None
    assert 8 in parse_count("2+:3")
    assert 9 not in parse_count("2+:3")
    assert 16 in parse_count("2-16:2:^")
    assert 8 not in parse_count("2-16:2:^")
    assert parse_count("3-3").values(5) == [3]


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (0, InvalidError),
        (True, InvalidError),
        (4.0, InvalidError),
        (None, InvalidError),
        ("", InvalidError),
        ("0", InvalidError),
        ("0,5", InvalidError),
        ("1-16:2:^", InvalidError),
        ("1-5:1:*", InvalidError),
        ("1-5:0", InvalidError),
        ("5,3", ParseError),
        ("five", ParseError),
        ({"min": 1, "max": 16, "operator": "^", "operand": 2}, InvalidError),
        ({"min": 2, "max": 8}, InvalidError),
        ({"min": 1, "extra": 1}, InvalidError),
        ({"min": 5, "max": 3, "operator": "+", "operand": 1}, InvalidError),
        (MAX_ID + 1, LimitError),
        ("1-99999999999999999999999", LimitError),
    ],
)
def test_count_errors(value: object, error: type[Exception]) -> None:
    # The edition in which max, operator and operand come all three or none (RFC 14 f6afff1).
    with pytest.raises(error):
        parse_count(value, edition="2025-07-31")


def test_editions() -> None:
    assert parse_count({"min": 2, "max": 8}, edition="upstream").values(10) == list(range(2, 9))
    assert parse_count({"min": 2, "operator": "*", "operand": 2}, edition="upstream").values(
        20
    ) == [2, 4, 8, 16]
    with pytest.raises(InvalidError):
        parse_count({"min": 2, "operator": "*", "operand": 2}, edition="seed")
    with pytest.raises(InvalidError):
        parse_count({"min": 2, "max": 8, "operator": "+"}, edition="upstream")
    with pytest.raises(InvalidError):
        parse_count(1, edition="draft")
    assert run("count.values", {"count": {"min": 2, "max": 3}, "limit": 9}, edition="upstream")


def test_values_limits() -> None:
    with pytest.raises(LimitError):
        parse_count("1+").values(MAX_ID)
    with pytest.raises(LimitError):
        parse_count("1+").values(MAX_ID + 1)
    with pytest.raises(InvalidError):
        parse_count("1+").values(-1)
    # Multiplicative sequences stay short even up to the largest limit.
    assert parse_count("2+:2:*").values(MAX_ID)[-1] == 2**63
    assert parse_count(f"2-{MAX_ID}:{MAX_ID}:^").values(MAX_ID) == [2]


def test_count_values_operation_input() -> None:
    with pytest.raises(InvalidError):
        run("count.values", {"count": 1})
    with pytest.raises(InvalidError):
        run("count.values", {"count": 1, "limit": 2, "other": 3})
    with pytest.raises(InvalidError):
        run("count.values", {"count": 1, "limit": "2"})
    with pytest.raises(InvalidError):
        run("range.decode", 5)


def test_deep_brackets_are_clean_errors() -> None:
    from flux_conformance.reference import hostlist
    from flux_conformance.reference.idset import IdSet

    deep = "[" * 100_000 + "1" + "]" * 100_000
    with pytest.raises(ParseError):
        parse_range(deep)
    with pytest.raises(ParseError):
        IdSet.decode(deep)
    with pytest.raises(ParseError):
        hostlist.decode("n" + deep)
    with pytest.raises(ParseError):
        parse_count(deep)
