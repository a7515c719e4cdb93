"""The JSON Lines report as a program reads it: strict JSON on every line, and whole or not there.

An in-process implementation can answer what JSON cannot carry (NaN, integers too long to
write, lone surrogates): each line must still be read by a strict reader, with those values
as strings that say what they were.  A report that cannot be finished (a full disk when the
footer is written) leaves the previous report in place, never a torn one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import write_suite

from flux_conformance.runner.cli import main
from flux_conformance.runner.report import jsonl


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise AssertionError(f"{constant} is not strict JSON")

    return json.loads(text, parse_constant=refuse)


def test_an_answer_json_cannot_carry_is_written_as_strict_json(tmp_path: Path, capsys) -> None:
    cases = [{"id": "c", "description": "d", "input": "wrong", "output": [1]}]
    folder = write_suite(tmp_path / "suite", {"idset.decode": cases})
    report = tmp_path / "r.jsonl"
    argv = ["run", "--cases", str(folder), "--impl", "python:report_fakes:ByInput"]
    assert main([*argv, "--json", str(report)]) == 1
    capsys.readouterr()
    text = report.read_text(encoding="utf-8")
    assert "\x00" not in text
    header, case, footer = (_strict(line) for line in text.splitlines())
    assert isinstance(header, dict)
    assert header["header"]["implementation"]["spec"] == "python:report_fakes:ByInput"
    assert isinstance(case, dict)
    # The answer: NUL, a lone surrogate, NaN, 1.5, null, true, integers of 14,000 and 14,001
    # bits, and an object holding a list.
    assert case["case"]["actual"] == {
        "output": [
            "\x00",
            "\ud800",
            "NaN",
            1.5,
            None,
            True,
            2**13_999,
            "(an integer of about 4215 digits)",
            {"k": [-0.0]},
        ]
    }
    assert isinstance(footer, dict)
    assert footer["footer"]["total"]["failed"] == 1


@pytest.mark.parametrize("full", ["case", "footer"])
def test_a_line_that_cannot_be_written_leaves_the_previous_report_and_is_told(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch, full: str
) -> None:
    cases = [{"id": f"c{i}", "description": "d", "input": "1", "output": [1]} for i in range(3)]
    folder = write_suite(tmp_path / "suite", {"idset.decode": cases})
    reports = tmp_path / "reports"
    reports.mkdir()
    report = reports / "r.jsonl"
    report.write_text("the previous report\n")
    write = jsonl.JsonLinesReporter._write

    def full_disk(self: jsonl.JsonLinesReporter, obj: dict) -> None:
        # The disk fills at the second case's line, or at the footer.
        if (full == "case" and obj.get("case", {}).get("id") == "c1") or (
            full == "footer" and "footer" in obj
        ):
            raise OSError(28, "No space left on device")  # as a write gives it: no file named
        write(self, obj)

    monkeypatch.setattr(jsonl.JsonLinesReporter, "_write", full_disk)
    argv = ["run", "--cases", str(folder), "--impl", "python:report_fakes:ByInput"]
    assert main([*argv, "--json", str(report)]) == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"error: cannot write {report}: No space left on device"
    )
    assert report.read_text() == "the previous report\n"
    assert [p.name for p in reports.iterdir()] == ["r.jsonl"]


def test_a_run_stopped_by_a_report_it_cannot_write_says_it_stopped(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = [{"id": f"c{i}", "description": "d", "input": "1", "output": [1]} for i in range(3)]
    folder = write_suite(tmp_path / "suite", {"idset.decode": cases})
    write = jsonl.JsonLinesReporter._write

    def full_disk(self: jsonl.JsonLinesReporter, obj: dict) -> None:
        if obj.get("case", {}).get("id") == "c1":
            raise OSError(28, "No space left on device")
        write(self, obj)

    monkeypatch.setattr(jsonl.JsonLinesReporter, "_write", full_disk)
    junit, markdown = tmp_path / "r.xml", tmp_path / "r.md"
    argv = ["run", "--cases", str(folder), "--impl", "python:report_fakes:ByInput"]
    argv += ["--json", str(tmp_path / "r.jsonl"), "--junit", str(junit)]
    assert main([*argv, "--markdown", str(markdown)]) == 2
    out = capsys.readouterr().out
    # Two of the three cases ran: no report calls that a whole run, or says it conforms.
    assert "conforms" not in out
    assert "interrupted" in out.splitlines()[-1]
    assert "interrupted" in markdown.read_text()
    assert "conforms" not in markdown.read_text()
    assert "c2" not in junit.read_text()
