"""The runner's own bounds (runner/bounds.py) and the bounded renderer reports use."""

from __future__ import annotations

import json

import pytest

from flux_conformance.runner.bounds import (
    JUDGE_MAX_CHARS,
    JUDGE_MAX_VALUES,
    first_difference,
    json_size,
    past_judging_bounds,
    shown,
)
from flux_conformance.runner.report import compact_json


@pytest.mark.parametrize(
    ("expected", "actual", "where"),
    [
        ({"a": {"b": 1}, "c": [1, {"d": 2}]}, {"a": {"b": 1}, "c": [1, {"d": 3}]}, "['c'][1]['d']"),
        ([{"x": 1}, {"y": [1, 2]}], [{"x": 1}, {"y": [1, 3]}], "[1]['y'][1]"),
        ([1] * 10, [1] * 9 + [True], "[9]: expected 1, got True"),
        ({"a": 1}, {"b": 1}, "keys differ (missing ['a'], unexpected ['b'])"),
        ([1, 2], [1], "expected 2 items, got 1"),
    ],
)
def test_first_difference_names_the_path(expected, actual, where) -> None:
    assert where in first_difference(expected, actual)


def test_json_size_stops_at_its_cap() -> None:
    assert json_size([1, "ab", {"cd": None}]) == (5, 4)
    values, _ = json_size(list(range(1_000_000)), cap=1000)
    assert 1000 < values < 1010


def test_shown_escapes_what_no_reader_should_get_raw() -> None:
    text = "a\x1b[31mb\x00c\ud800d\uffffe\tf\ng"
    assert shown(text) == "a\\x1b[31mb\\x00c\\ud800d\\uffffe\tf\ng"
    assert shown("x" * 50, 10) == "x" * 10 + "... (50 characters)"


@pytest.mark.parametrize(
    "value", [[1, [2, 3], {"a": {"b": []}}], {"k": [{"z": 1}, {}]}, "x", None, 1.5, {"é": "ü"}]
)
def test_compact_json_is_json_for_plain_values(value) -> None:
    assert compact_json(value) == json.dumps(value, ensure_ascii=False)


def test_compact_json_is_cut_without_rendering_everything() -> None:
    text = compact_json(list(range(10_000_000)), 50)
    assert text.startswith("[0, 1, 2")
    assert text.endswith("... (cut)")
    assert compact_json([10**5000]) == "[(an integer of about 5001 digits)]"


def test_the_fixed_bounds_count_long_strings_past_the_value_bound() -> None:
    # A few long strings: few values, many characters (the count must not stop at the
    # value bound before it reaches the character bound).
    assert not past_judging_bounds(["a" * (JUDGE_MAX_CHARS // 2)])
    assert past_judging_bounds(["a" * 100_000] * 50)
    assert past_judging_bounds(list(range(JUDGE_MAX_VALUES + 1)))
    assert not past_judging_bounds(list(range(100)))


def test_the_json_report_cuts_an_answer_of_a_few_long_strings() -> None:
    import io

    from flux_conformance.runner.adapters.base import Reply
    from flux_conformance.runner.cases import load_suite
    from flux_conformance.runner.engine import CaseResult, Outcome
    from flux_conformance.runner.report.jsonl import JsonLinesReporter

    case = next(c for c in load_suite().cases if c.id == "idset.decode.empty-string")
    reply = Reply("output", ["a" * 100_000] * 50)  # 5,000,000 characters in 50 values
    stream = io.StringIO()
    JsonLinesReporter(stream).case(
        CaseResult(case, Outcome.FAILED, reply, "answer too large to judge")
    )
    line = json.loads(stream.getvalue())
    assert line["case"]["actual"]["cut"] is True
    assert len(stream.getvalue()) < 20_000


# Fixed sizes written as numbers: a text shown in a difference is cut at 100 characters for a
# value and at 500 for the whole line, and a text of exactly the limit is shown whole.
def test_a_value_in_a_difference_is_shown_in_100_characters() -> None:
    # repr of 298 letters is 300 characters; of 98 letters, exactly 100.
    assert first_difference(["a" * 298], ["b"]) == (
        "value[0]: expected '" + "a" * 99 + "... (300 characters), got 'b'"
    )
    assert first_difference(["a" * 98], ["b"]) == "value[0]: expected '" + "a" * 98 + "', got 'b'"


def test_a_differing_value_is_named_in_500_characters_at_most() -> None:
    # The path holds the key: "value['" + 472 letters + "']: expected 1, got 2" is 500 long.
    whole = first_difference({"k" * 472: 1}, {"k" * 472: 2})
    assert whole == "value['" + "k" * 472 + "']: expected 1, got 2"
    assert len(whole) == 500
    cut = first_difference({"k" * 473: 1}, {"k" * 473: 2})
    assert cut == "value['" + "k" * 473 + "']: expected 1, got " + "... (501 characters)"


def test_differing_keys_are_named_in_500_characters_at_most() -> None:
    # "value: keys differ (missing ['" + 449 letters + "'], unexpected ['b'])" is 500 long.
    head, tail = "value: keys differ (missing ['", "'], unexpected ['b'])"
    whole = first_difference({"a" * 449: 1}, {"b": 1})
    assert whole == head + "a" * 449 + tail
    assert len(whole) == 500
    cut = first_difference({"a" * 450: 1}, {"b": 1})
    assert cut == (head + "a" * 450 + tail)[:500] + "... (501 characters)"


def test_the_walk_to_the_first_difference_takes_at_most_its_budget_of_steps() -> None:
    # The list and its ten items are eleven steps; the difference is met at the eleventh.
    want, got = list(range(10)), [*range(9), -1]
    assert first_difference(want, got, budget=11) == "value[9]: expected 9, got -1"
    assert first_difference(want, got, budget=10) == "no difference found within the walk's budget"


def test_equal_values_walk_to_the_end_and_find_no_difference() -> None:
    same = [1, {"a": [2, "x"]}, None]
    assert first_difference(same, [1, {"a": [2, "x"]}, None]) == (
        "no difference found within the walk's budget"
    )
