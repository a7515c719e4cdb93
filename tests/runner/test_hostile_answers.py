"""Hostile answers: whatever an implementation answers, ``run``, ``compare`` and ``diff`` end,
within bounds, with valid reports.

Each kind of answer is sent by ``fakes/hostile_impl.py`` through the subprocess transport, so
it reaches the runner as raw JSON text would.  A report is valid when the JUnit file parses as
XML, every JSON Lines line parses as strict JSON (no NaN, no Infinity), and no report, and
nothing printed, holds a raw terminal escape or raw HTML from the implementation.
"""

from __future__ import annotations

import json
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import hostile_command

from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.cli import main
from flux_conformance.runner.engine import Outcome, judge
from flux_conformance.runner.oracle import reference_oracle

EMPTY_IDS = "idset.decode.empty-string"  # expects []
ONE_ID = "idset.encode.single"  # expects "5"
RANGE_COUNT = "shape.parse.rfc-use-case-1.2"  # a count 3-30
QUERY = "constraint.parse_query.rfc-foo"  # expects {"properties": ["foo"]}

#: kind -> (case ids, outcome of the first, words its reason holds)
ANSWERS: dict[str, tuple[tuple[str, ...], str, str]] = {
    "huge-list": ((EMPTY_IDS,), "failed", "too large to judge"),
    "huge-string": ((ONE_ID,), "failed", "too large to judge"),
    "wide-power": ((RANGE_COUNT,), "failed", "count"),
    "many-properties": ((QUERY,), "failed", "does not select"),
    "surrogate": ((EMPTY_IDS,), "failed", "not of the operation's form"),
    "xml-forbidden": ((EMPTY_IDS,), "failed", "not of the operation's form"),
    "nan": ((EMPTY_IDS,), "errored", "not JSON"),
    "long-integer": ((EMPTY_IDS,), "errored", "5001 digits"),
    "seq-true": ((EMPTY_IDS,), "errored", "seq True"),
    "stderr-escapes": ((EMPTY_IDS,), "errored", "exited with status 3"),
    "hello-surrogate": ((EMPTY_IDS,), "passed", ""),
    "hello-huge-name": ((EMPTY_IDS,), "passed", ""),
    "hello-markup": ((EMPTY_IDS,), "passed", ""),
}


@pytest.fixture(autouse=True)
def _past_the_preflight(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The hostile implementation answers the runner's pre-flight request right, then not."""
    monkeypatch.setenv("HOSTILE_ONCE", str(tmp_path / "answered-once"))


def strict_json(line: str) -> Any:
    def refuse(name: str) -> Any:
        raise ValueError(f"{name} is not strict JSON")

    return json.loads(line, parse_constant=refuse)


def assert_clean(text: str, markup: bool = False) -> None:
    """Nothing an implementation sent reaches a reader raw: no escape, no NUL, no U+FFFF;
    in Markdown and HTML, no tag and no heading of its own (escaped, they show as text)."""
    for raw in ("\x1b", "\x00", "\x07", "\uffff"):
        assert raw not in text, repr(raw)
    if markup:
        # (the HTML report has <details> of its own; the injected one is "<details open>")
        assert not re.search(r"(?<!\\)<(img|details open)", text)
        assert not re.search(r"^#+ Injected", text, re.MULTILINE)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str, float]:
    start = time.monotonic()
    code = main(list(argv))
    seconds = time.monotonic() - start
    out, err = capsys.readouterr()
    return code, out, err, seconds


@pytest.mark.parametrize("kind", sorted(ANSWERS))
def test_run_ends_with_valid_reports(kind: str, tmp_path: Path, capsys) -> None:
    ids, outcome, words = ANSWERS[kind]
    reports = {name: tmp_path / name for name in ("r.xml", "r.jsonl", "r.md", "r.html")}
    argv = ["run", "--impl", f"exec:{hostile_command(kind)}", "--timeout", "60"]
    argv += [f"--id={i}" for i in ids]
    argv += ["--junit", str(reports["r.xml"]), "--json", str(reports["r.jsonl"])]
    argv += ["--markdown", str(reports["r.md"]), "--html", str(reports["r.html"])]
    code, out, err, seconds = _run(capsys, *argv)
    assert code == (0 if outcome == "passed" else 1), err
    assert seconds < 120  # the bound is 10 s a case; this machine may be busy
    ET.parse(reports["r.xml"])  # well-formed XML 1.0
    lines = [strict_json(line) for line in reports["r.jsonl"].read_text().splitlines()]
    assert "footer" in lines[-1]
    first = lines[1]["case"]
    assert first["outcome"] == outcome
    assert words in first.get("reason", "")
    for name, path in reports.items():
        assert path.stat().st_size < 2_000_000  # a 20 MB name or 38 MB answer is cut
        if name != "r.jsonl":  # JSON carries the answer as data, every control escaped
            assert_clean(path.read_text(encoding="utf-8"), markup=True)
    assert_clean(out + err)


@pytest.mark.parametrize("kind", ["early", "early-part"])
def test_a_reply_sent_before_its_request_is_a_fault(kind: str, tmp_path: Path, capsys) -> None:
    # The early reply for seq 2 used to be taken as the answer to case 2, when the runner's
    # reader had not yet queued it.  It is written with the answer before it, in one write:
    # found however loaded the machine (no sleep anywhere decides it).
    jsonl = tmp_path / "r.jsonl"
    argv = ["run", "--impl", f"exec:{hostile_command(kind)}", "--json", str(jsonl)]
    argv += [f"--id={EMPTY_IDS}", "--id=idset.decode.empty-brackets"]
    code, _, _, _ = _run(capsys, *argv)
    assert code == 1
    cases = [strict_json(line)["case"] for line in jsonl.read_text().splitlines()[1:-1]]
    assert [c["outcome"] for c in cases] == ["passed", "errored"]
    # (the pre-flight request took seq 1, so case 2 is request 3)
    assert "before request 3" in cases[1]["reason"]


@pytest.mark.parametrize("kind", sorted(ANSWERS))
def test_compare_ends_with_valid_reports(kind: str, tmp_path: Path, capsys) -> None:
    ids, _, _ = ANSWERS[kind]
    md, page = tmp_path / "m.md", tmp_path / "m.html"
    argv = ["compare", "--impl", f"exec:{hostile_command(kind)}", "--impl", "reference"]
    argv += [f"--id={i}" for i in ids] + ["--timeout", "60"]
    code, out, err, _ = _run(capsys, *argv, "--markdown", str(md), "--html", str(page))
    # compare's exit status is the verdict (1: some implementation does not conform); the
    # point here is that it ends, with valid reports.
    assert code in (0, 1), err
    for path in (md, page):
        assert path.stat().st_size < 3_000_000
        assert_clean(path.read_text(encoding="utf-8"), markup=True)
    assert_clean(out + err)


#: The answers diff meets on generated inputs, with the operation searched.
DIFFS = {
    "huge-list": "idset.decode",
    "huge-string": "idset.encode",
    "wide-power": "shape.parse",
    "many-properties": "constraint.parse_query",
    "surrogate": "idset.decode",
    "xml-forbidden": "idset.decode",
    "nan": "idset.decode",
    "long-integer": "idset.decode",
    "seq-true": "idset.decode",
    "stderr-escapes": "idset.decode",
}


@pytest.mark.parametrize("kind", sorted(DIFFS))
def test_diff_ends_and_writes_cases_that_load(
    kind: str, tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    # diff sends no pre-flight request: every answer of the hostile implementation is hostile.
    monkeypatch.delenv("HOSTILE_ONCE")
    out_file = tmp_path / "found.yaml"
    argv = ["diff", "--impl", f"exec:{hostile_command(kind)}", "-o", DIFFS[kind]]
    argv += ["--seconds", "30", "--examples", "3", "--seed", "1", "--max", "1"]
    code, out, err, seconds = _run(capsys, *argv, "--timeout", "60", "--out", str(out_file))
    assert code == 1, err  # every one of these answers disagrees with the reference
    assert seconds < 200
    found = yaml.safe_load(out_file.read_text(encoding="utf-8"))
    assert found["cases"]
    assert_clean(out_file.read_text(encoding="utf-8") + out + err)


# -- the judge alone, against the bound ------------------------------------------------------

SUITE = load_suite()


@pytest.mark.parametrize(
    ("case_id", "answer"),
    [
        # 5,000,000 ints took 163 s and 6.5 GB to judge.
        (EMPTY_IDS, list(range(5_000_000))),
        (EMPTY_IDS, ["x"] * 1_000_000),
        (ONE_ID, "1," * 20_000_000),
        # An operand of 10**10 took 44 s, then a MemoryError reported as a suite defect.
        (
            RANGE_COUNT,
            [
                {
                    "type": "slot",
                    "count": {"min": 2, "max": 2**64 - 1, "operator": "^", "operand": 10**10},
                    "label": "default",
                    "with": [{"type": "node", "count": 1}],
                }
            ],
        ),
        # 200 properties took 64 s and 550 MB.
        (QUERY, {"or": [{"properties": [f"p{i}"]} for i in range(200)]}),
        (QUERY, {"or": [{"properties": [f"p{i}"]} for i in range(5000)]}),
        (QUERY, {"hostlist": ["h[0-999999]", "g[0-999999]"]}),
    ],
    ids=[
        "5M-ints",
        "1M-strings",
        "40MB-string",
        "power-10e10",
        "200-properties",
        "5000-properties",
        "2M-hosts",
    ],
)
def test_judging_any_answer_is_bounded(case_id: str, answer: Any) -> None:
    case = SUITE.by_id()[case_id]
    op = SUITE.operations[case.operation]
    start = time.monotonic()
    result = judge(case, Reply("output", answer), op, reference_oracle(case.edition))
    seconds = time.monotonic() - start
    assert result.outcome is Outcome.FAILED
    assert not result.fault  # never a "suite defect"
    assert seconds < 10
