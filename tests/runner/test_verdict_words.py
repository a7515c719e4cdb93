"""The words of a verdict, for every mix of outcomes, and the same words in every report.

"conforms" is said only where every case run passed: a known departure (xfailed) or a refusal
left unchecked keeps a run at exit status 0 but changes its words (runner/verdicts.py,
docs/verdicts.md).
"""

from __future__ import annotations

import io
import itertools
import json
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from support import MINI, a_header

from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.engine import CaseResult, Outcome, Summary
from flux_conformance.runner.report.badge import BadgeReporter
from flux_conformance.runner.report.html import HtmlReporter
from flux_conformance.runner.report.jsonl import JsonLinesReporter
from flux_conformance.runner.report.junit import JUnitReporter
from flux_conformance.runner.report.markdown import MarkdownReporter
from flux_conformance.runner.report.terminal import TerminalReporter
from flux_conformance.runner.tools.action import outputs_of
from flux_conformance.runner.verdicts import Verdict, counts_text, judged, verdict_line

#: Each outcome, on its own, and the verdict it gives a run where every other case passed.
ALONE = {
    Outcome.PASSED: Verdict.CONFORMS,
    Outcome.SKIPPED: Verdict.CONFORMS,
    Outcome.XFAILED: Verdict.MATCHES_BASELINE,
    Outcome.UNCHECKED: Verdict.PARTLY_CHECKED,
    Outcome.FAILED: Verdict.DOES_NOT_CONFORM,
    Outcome.ERRORED: Verdict.DOES_NOT_CONFORM,
    Outcome.XPASSED: Verdict.DOES_NOT_CONFORM,
}
#: The order of strength: a mix takes the verdict of its strongest outcome.
STRENGTH = [
    Verdict.CONFORMS,
    Verdict.PARTLY_CHECKED,
    Verdict.MATCHES_BASELINE,
    Verdict.DOES_NOT_CONFORM,
]


def _expected(mix: tuple[Outcome, ...]) -> Verdict:
    return max((ALONE[o] for o in (Outcome.PASSED, *mix)), key=STRENGTH.index)


MIXES = [
    mix
    for size in range(len(Outcome) + 1)
    for mix in itertools.combinations([o for o in Outcome if o is not Outcome.PASSED], size)
]


@pytest.mark.parametrize("mix", MIXES, ids=lambda mix: "+".join(o.value for o in mix) or "all")
def test_every_mix_of_outcomes_gets_its_words(mix: tuple[Outcome, ...]) -> None:
    counts = Counter({Outcome.PASSED.value: 3, **{o.value: 2 for o in mix}})
    word = judged(counts)
    assert word is _expected(mix)
    assert (word is Verdict.CONFORMS) == (not set(mix) - {Outcome.SKIPPED})
    assert word.exit_ok == (not any(o.is_bad for o in mix))
    assert judged(counts, interrupted=True) is Verdict.INTERRUPTED
    text = counts_text(counts)
    # Each departure is counted, in words a reader knows.
    assert ("2 known departures (xfail)" in text) == (Outcome.XFAILED in mix)
    assert ("2 refused without a category (unchecked)" in text) == (Outcome.UNCHECKED in mix)
    assert ("2 failed" in text) == (Outcome.FAILED in mix)
    assert "skipped" not in text  # the scope's business


def test_nothing_answered_is_nothing_run() -> None:
    assert judged({}) is Verdict.NOTHING_RUN
    assert judged({Outcome.SKIPPED.value: 4}) is Verdict.NOTHING_RUN
    assert judged({Outcome.UNCHECKED.value: 1}) is Verdict.PARTLY_CHECKED
    assert judged({Outcome.XFAILED.value: 1}) is Verdict.MATCHES_BASELINE


def test_no_word_but_the_first_says_conforms() -> None:
    # ("does not conform" says it does not.)
    assert [v for v in Verdict if str(v).startswith("conform")] == [Verdict.CONFORMS]
    assert counts_text({"xfailed": 1}) == "0 passed, 1 known departure (xfail)"


def _results(mix: dict[Outcome, int]) -> list[CaseResult]:
    suite = load_suite(MINI)
    cases = itertools.cycle(suite.cases)
    results = []
    for outcome, n in mix.items():
        for _ in range(n):
            reply = Reply("unsupported", None) if outcome is Outcome.SKIPPED else None
            results.append(CaseResult(next(cases), outcome, reply, reason="(a reason)"))
    return results


HEADER = a_header()

REPORT_MIXES = {
    Verdict.CONFORMS: {Outcome.PASSED: 4, Outcome.SKIPPED: 1},
    Verdict.MATCHES_BASELINE: {Outcome.PASSED: 3, Outcome.XFAILED: 2, Outcome.UNCHECKED: 1},
    Verdict.PARTLY_CHECKED: {Outcome.PASSED: 3, Outcome.UNCHECKED: 2},
    Verdict.DOES_NOT_CONFORM: {Outcome.PASSED: 3, Outcome.XFAILED: 1, Outcome.FAILED: 1},
    Verdict.NOTHING_RUN: {Outcome.SKIPPED: 5},
}


@pytest.mark.parametrize("word", list(REPORT_MIXES), ids=str)
def test_every_report_says_the_same_words(word: Verdict, tmp_path: Path) -> None:
    results = _results(REPORT_MIXES[word])
    summary = Summary(suite_operations=1, suite_cases=5)
    stream, jsonl = io.StringIO(), io.StringIO()
    files = {name: tmp_path / name for name in ("j.xml", "r.md", "r.html", "b.json")}
    reporters = [
        TerminalReporter(stream, color=False),
        JsonLinesReporter(jsonl),
        JUnitReporter(files["j.xml"]),
        MarkdownReporter(files["r.md"]),
        HtmlReporter(files["r.html"]),
        BadgeReporter(files["b.json"]),
    ]
    for reporter in reporters:
        reporter.start(HEADER)
    for result in results:
        summary.add(result)
        for reporter in reporters:
            reporter.case(result)
    for reporter in reporters:
        reporter.finish(summary)
    line = verdict_line(summary)
    assert line.startswith(str(word))
    if word is not Verdict.CONFORMS:
        assert "conforms" not in line
    assert line in stream.getvalue()
    footer = json.loads(jsonl.getvalue().splitlines()[-1])["footer"]
    assert (footer["verdict"], footer["verdict_words"]) == (line, str(word))
    props = {
        p.get("name"): p.get("value") for p in ET.parse(files["j.xml"]).getroot().iter("property")
    }
    assert props["verdict"] == line
    assert line in files["r.md"].read_text()
    assert line in files["r.html"].read_text()
    assert json.loads(files["b.json"].read_text())["message"].startswith(f"{word}: ")
    (tmp_path / "results.jsonl").write_text(jsonl.getvalue())
    assert outputs_of(tmp_path, 0 if word.exit_ok else 1)["verdict"] == str(word)


def test_a_run_with_known_departures_leads_with_them() -> None:
    summary = Summary(suite_operations=22, suite_cases=1922)
    for result in _results({Outcome.PASSED: 164, Outcome.XFAILED: 105, Outcome.SKIPPED: 3}):
        summary.add(result)
    assert verdict_line(summary) == (
        "matches its baseline: 164 passed, 105 known departures (xfail); "
        "on 1 of 22 operations (269 of 1,922 cases); 21 not selected"
    )


def test_docs_verdicts_md_lists_every_word() -> None:
    from support import ROOT

    text = (ROOT / "docs" / "verdicts.md").read_text(encoding="utf-8")
    listed = [
        line.split("|")[1].strip().strip("`")
        for line in text.splitlines()
        if line.startswith("| `")
    ]
    assert [str(v) for v in Verdict] == [w for w in listed if w in {str(v) for v in Verdict}]
    assert {str(v) for v in Verdict} <= set(listed)
