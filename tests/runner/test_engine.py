"""The engine's judgements, each pinned by what a user sees (found by mutation testing).

Which cases a run selects (editions, inclusions, exclusions), what the verdict says of the
scope (operations not selected, a partial run's badge, a summary without the suite's sizes),
and how much of a huge answer the JSON report keeps.  Sizes are written as numbers, never
the bounds' constants: a loosened bound must fail here.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
from support import MINI, fake_module

from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.engine import CaseResult, Filters, Outcome, Summary, select
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
