"""The engine's judgements, each pinned by what a user sees (found by mutation testing).

Which cases a run selects (editions, inclusions, exclusions), the edition a case is asked and
judged in, the reason and the difference a wrong answer is reported with, what the verdict
says of the scope (operations not selected, a partial run's badge, a summary without the
suite's sizes), a case's time, and how much of a huge answer the JSON report keeps.  Sizes are
written as numbers, never the bounds' constants: a loosened bound must fail here.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from support import MINI, fake_module

from flux_conformance.runner import engine
from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.adapters.inprocess import InProcessAdapter
from flux_conformance.runner.case_model import Expected
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.engine import (
    CaseResult,
    Filters,
    Outcome,
    Summary,
    judge,
    run_cases,
    select,
)
from flux_conformance.runner.oracle import reference_oracle
from flux_conformance.runner.report.badge import badge
from flux_conformance.runner.verdicts import verdict_line

OLD, NEW = "2025-07-31", "2026-08-13"


def _mini() -> dict[str, object]:
    return {c.id: c for c in load_suite(MINI).cases}


# -- which cases a run selects -----------------------------------------------------------------


def _edition_cases() -> list:  # type: ignore[type-arg]
    mini = _mini()
    old = dataclasses.replace(mini["mini.range"], id="e.old", edition=OLD)
    new = dataclasses.replace(mini["mini.list"], id="e.new", edition=NEW)
    return [old, new, mini["mini.leading-zero"]]


@pytest.mark.parametrize(
    ("edition", "ids"),
    [
        (NEW, ["e.new", "mini.leading-zero"]),
        (OLD, ["e.old", "mini.leading-zero"]),
        (None, ["e.old", "e.new", "mini.leading-zero"]),  # any edition
    ],
)
def test_a_run_selects_the_cases_of_its_edition_and_of_every_edition(edition, ids) -> None:
    chosen = select(_edition_cases(), Filters(edition=edition))
    assert [c.id for c in chosen] == ids


def _two_operations() -> list:  # type: ignore[type-arg]
    mini = _mini()
    encode = dataclasses.replace(mini["mini.list"], id="other.op", operation="idset.encode")
    return [*mini.values(), encode]


EVERY = ["mini.range", "mini.list", "mini.leading-zero", "mini.brackets", "mini.degenerate"]


@pytest.mark.parametrize(
    ("filters", "ids"),
    [
        (Filters(), [*EVERY, "other.op"]),
        (Filters(operations=("idset.e*",)), ["other.op"]),
        (Filters(operations=("idset.d*", "nothing")), EVERY),
        (Filters(ids=("mini.l*",)), ["mini.list", "mini.leading-zero"]),
        (Filters(levels=("should",)), ["mini.brackets"]),
        (Filters(levels=("clarification", "should")), ["mini.brackets", "mini.degenerate"]),
        (Filters(tags=("range",)), ["mini.range"]),
        (Filters(exclude_operations=("idset.d*",)), ["other.op"]),
        (
            Filters(exclude_ids=("mini.l*", "other.*")),
            ["mini.range", "mini.brackets", "mini.degenerate"],
        ),
        (Filters(exclude_levels=("must",)), ["mini.brackets", "mini.degenerate"]),
        (Filters(exclude_tags=("range",)), [i for i in [*EVERY, "other.op"] if i != "mini.range"]),
        (Filters(ids=("mini.l*",), exclude_ids=("mini.list",)), ["mini.leading-zero"]),
    ],
)
def test_each_filter_selects_alone_in_suite_order(filters, ids) -> None:
    assert [c.id for c in select(_two_operations(), filters)] == ids


# -- the scope a verdict states ------------------------------------------------------------------


def _passed(case) -> CaseResult:  # type: ignore[no-untyped-def]
    return CaseResult(case, Outcome.PASSED, Reply("output", [1]))


def _summary(results: list[CaseResult], **sizes: int) -> Summary:
    summary = Summary(**sizes)
    for result in results:
        summary.add(result)
    return summary


def test_one_operation_not_selected_is_told() -> None:
    summary = _summary([_passed(_mini()["mini.range"])], suite_operations=2, suite_cases=9)
    assert verdict_line(summary) == "conforms on 1 of 2 operations (1 of 9 cases); 1 not selected"


def test_without_the_suites_sizes_the_selection_is_the_scope() -> None:
    # A spec page of the site counts one spec's cases this way.
    summary = _summary([_passed(c) for c in _two_operations()])
    assert verdict_line(summary) == "conforms on 2 of 2 operations (6 of 6 cases)"


@pytest.mark.parametrize(
    ("run", "operations", "color"),
    [(1, 2, "brightgreen"), (1, 3, "blue"), (2, 3, "brightgreen"), (2, 5, "blue")],
)
def test_a_badge_is_blue_when_fewer_than_half_the_operations_ran(run, operations, color) -> None:
    case = _mini()["mini.range"]
    results = [_passed(dataclasses.replace(case, operation=f"op{i}")) for i in range(run)]
    scope = _summary(results, suite_operations=operations, suite_cases=10).scope()
    assert badge(results, scope)["color"] == color


# -- what the JSON report keeps of a huge answer ---------------------------------------------


class _LongRefusals:
    """Refuses every case with ``syntax`` and a message of ``size`` characters ending ``end``."""

    size = 20_000
    end = ""

    def run(self, operation, input, **options):  # type: ignore[no-untyped-def]
        body = "m" * (self.size - len(self.end))
        return {"error": {"category": "syntax", "message": body + self.end}}


@pytest.mark.parametrize("end", ["", " characters)", "... (" + "z" * 9_995])
def test_the_json_report_keeps_10000_characters_and_the_first_length_of_a_message(
    capsys, monkeypatch, end
) -> None:
    # The run keeps each result cut; the JSON report keeps it again and must not cut twice,
    # nor take a message that only ends like a cut one, or only goes on like one at its
    # 10,001st character, for one.
    monkeypatch.setattr(_LongRefusals, "end", end)
    fake_module(monkeypatch, "engine_fakes", LongRefusals=_LongRefusals)
    argv = ["run", "--cases", str(MINI), "--impl", "python:engine_fakes:LongRefusals"]
    assert main([*argv, "--json", "-"]) == 1
    lines = capsys.readouterr().out.splitlines()
    cases = [json.loads(line)["case"] for line in lines if '"case"' in line]
    failed = [c for c in cases if c["outcome"] == "failed"]
    assert [c["id"] for c in failed] == ["mini.range", "mini.list", "mini.brackets"]
    for case in failed:
        message = case["actual"]["error"]["message"]
        assert message == "m" * 10_000 + "... (20000 characters)"


# -- the reason and the difference a wrong answer gets -----------------------------------------


def _judged(case_id: str, reply: Reply, *expected: Expected) -> CaseResult:
    suite = load_suite(MINI)
    case = next(c for c in suite.cases if c.id == case_id)
    if expected:
        case = dataclasses.replace(case, expected=expected)
    return judge(case, reply, suite.operations[case.operation], reference_oracle(None))


def test_each_reason_names_what_was_given_and_what_the_case_expects() -> None:
    output = _judged("mini.leading-zero", Reply("output", [1]))
    assert output.reason == "returned an output; expected error 'syntax'"
    unknown = _judged("mini.range", Reply("error", "unknown", "?"))
    assert unknown.reason == "refused (category unknown); expected an output"
    real = _judged("mini.leading-zero", Reply("error", "limit", "too big"))
    assert real.outcome is Outcome.FAILED
    assert real.reason == "reported error 'limit'; expected error 'syntax'"
    made_up = _judged("mini.leading-zero", Reply("error", "nonsense", "?"))
    assert made_up.outcome is Outcome.FAILED
    assert made_up.reason.startswith(
        "reported error category 'nonsense', which idset.decode does not have (it has "
    )
    assert made_up.reason.endswith("); expected error 'syntax'")


def test_an_unsupported_answer_is_skipped_with_its_reason_or_the_word() -> None:
    told = _judged("mini.range", Reply("unsupported", message="no idsets here"))
    assert (told.outcome, told.reason) == (Outcome.SKIPPED, "no idsets here")
    untold = _judged("mini.range", Reply("unsupported"))
    assert (untold.outcome, untold.reason) == (Outcome.SKIPPED, "unsupported")


def test_a_wrong_answer_to_two_outputs_gives_both_reasons_and_the_diff_from_the_first() -> None:
    result = _judged(
        "mini.range", Reply("output", [5]), Expected("output", [1, 2, 3]), Expected("output", [7])
    )
    assert result.outcome is Outcome.FAILED
    first, second = result.reason.split("; ")
    assert first
    assert second
    assert result.diff == (
        "Item root[1] (2) removed from iterable.\n"
        "Item root[2] (3) removed from iterable.\n"
        "Value of root[0] changed from 1 to 5."
    )


@pytest.mark.parametrize(("changed", "shown"), [(30, 30), (50, 40)])
def test_the_diff_shows_every_difference_up_to_40_lines(changed: int, shown: int) -> None:
    # Every id one off: every line, each in its place, up to 40 (a cap on DeepDiff's
    # comparisons once left the diff of 30 such ids empty).
    result = _judged(
        "mini.range",
        Reply("output", list(range(1, 2 * changed + 1, 2))),
        Expected("output", list(range(0, 2 * changed, 2))),
    )
    assert result.diff.splitlines() == [
        f"Value of root[{i}] changed from {2 * i} to {2 * i + 1}." for i in range(shown)
    ]


def test_a_difference_deep_in_a_list_of_objects_is_shown() -> None:
    # The shape comparator's idset.decode is no matter here: the diff is the engine's.
    expected = [{"rank": i} for i in range(20)]
    result = engine._diff(expected, [*expected[:19], {"rank": -1}])
    assert result == "Value of root[19]['rank'] changed from 19 to -1."


# -- the run: the edition a case is asked and judged in, its time, its exit status -------------


class _Recording:
    """The reference, noting the edition it is asked in."""

    def __init__(self) -> None:
        self.editions: list[str | None] = []

    def run(self, operation, input, **options):  # type: ignore[no-untyped-def]
        self.editions.append(options.get("edition"))
        return {"output": [1, 2, 3]}


def test_a_case_is_asked_and_judged_in_its_own_edition_else_the_runs() -> None:
    suite = load_suite(MINI)
    mini = {c.id: c for c in suite.cases}
    cases = [mini["mini.range"], dataclasses.replace(mini["mini.list"], edition=OLD)]
    impl = _Recording()
    judged_in: list[str | None] = []

    def oracle(edition: str | None):  # type: ignore[no-untyped-def]
        judged_in.append(edition)
        return reference_oracle(edition)

    results = list(
        run_cases(cases, InProcessAdapter(impl), suite.operations, oracle=oracle, edition=NEW)
    )
    assert [r.outcome for r in results] == [Outcome.PASSED, Outcome.FAILED]
    assert impl.editions == [NEW, OLD]
    assert judged_in == [NEW, OLD]


def test_a_cases_time_is_the_time_its_answer_took(monkeypatch) -> None:
    clock = iter([1000.0, 1000.25])
    monkeypatch.setattr(engine, "time", type("Clock", (), {"perf_counter": lambda: next(clock)}))
    suite = load_suite(MINI)
    (result,) = run_cases(
        suite.cases[:1], InProcessAdapter(_Recording()), suite.operations, oracle=reference_oracle
    )
    assert result.seconds == 0.25
    assert result.to_json()["seconds"] == 0.25


def test_a_run_of_one_passing_case_conforms_and_exits_0(capsys) -> None:
    assert main(["run", "--cases", str(MINI), "--id", "mini.range"]) == 0
    assert "conforms on 1 of 1 operations (1 of 5 cases)" in capsys.readouterr().out
