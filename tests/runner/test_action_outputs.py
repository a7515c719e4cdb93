"""The action's run step: outputs no input can forge, no stale verdict, a summary that fits.

Run here without installing (``test_action.py`` installs for real): ``FC_VENV`` is a folder
whose ``bin/flux-conformance`` runs this checkout's command line.

* A second run that could not start the implementation used to exit 3, yet output
  ``verdict=conforms`` and the first run's counts, and append the first run's summary: the
  reports folder was neither cleared nor checked.
* Outputs were written as ``key=value`` lines: an input holding a newline and
  ``exit-status=0`` wrote an output of its own.
* The Markdown report had no bound (2.9 MB for an all-failing run), where a job summary takes
  1 MiB.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support import MINI, a_header, github_outputs

from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.cases import load_suite
from flux_conformance.runner.engine import CaseResult, Outcome, Summary
from flux_conformance.runner.report.markdown import MarkdownReporter
from flux_conformance.runner.tools import action as steps


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A folder whose ``bin/flux-conformance`` runs this checkout's command line."""
    folder = tmp_path / "venv"
    (folder / "bin").mkdir(parents=True)
    script = folder / "bin" / "flux-conformance"
    script.write_text(f'#!/bin/sh\nexec {sys.executable} -m flux_conformance.runner.cli "$@"\n')
    script.chmod(0o755)
    return folder


def _step(tmp_path: Path, venv: Path, reports: Path, impl: str) -> tuple[int, dict, str]:
    output, summary = tmp_path / "output", tmp_path / "summary"
    output.write_text("")
    summary.write_text("")
    env = {
        **os.environ,
        "FC_VENV": str(venv),
        "FC_IMPL": impl,
        "FC_REPORTS": str(reports),
        "FC_ARGS": f"--cases {MINI}",
        "GITHUB_OUTPUT": str(output),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    status = steps._run(env)
    return status, github_outputs(output.read_text()), summary.read_text()


def test_a_run_that_cannot_start_reports_no_earlier_verdict(tmp_path: Path, venv: Path) -> None:
    reports = tmp_path / "reports"
    status, outputs, summary = _step(tmp_path, venv, reports, "reference")
    assert (status, outputs["verdict"], outputs["passed"]) == (0, "conforms", "5")
    assert "conforms" in summary
    status, outputs, summary = _step(tmp_path, venv, reports, "exec:/nonexistent/impl")
    assert status == 3
    assert (outputs["verdict"], outputs["exit-status"]) == ("not run", "3")
    assert "passed" not in outputs
    assert summary.startswith("**flux-conformance did not run** (exit status 3:")
    assert not (reports / "results.jsonl").exists()


def test_no_input_can_forge_an_output(tmp_path: Path, venv: Path) -> None:
    reports = tmp_path / "r\nexit-status=0\nverdict=conforms"
    status, outputs, _ = _step(tmp_path, venv, reports, "exec:/nonexistent/impl")
    assert status == 3
    assert (outputs["exit-status"], outputs["verdict"]) == ("3", "not run")
    assert outputs["reports"] == str(reports)


def test_an_output_holding_a_delimiter_like_line_stays_whole() -> None:
    value = "a\nghadelimiter_0\nexit-status=0"
    text = steps.output_lines({"reports": value, "exit-status": "1"})
    assert github_outputs(text) == {"reports": value, "exit-status": "1"}


def test_the_markdown_report_fits_a_job_summary_and_says_what_it_left_out(tmp_path) -> None:
    from flux_conformance.runner.report.markdown import MAX_BYTES

    case = load_suite(MINI).cases[0]
    reporter = MarkdownReporter(tmp_path / "r.md")
    header = a_header(selected=3000)
    reporter.start(header)
    summary = Summary()
    for _ in range(3000):
        result = CaseResult(case, Outcome.FAILED, Reply("output", ["y" * 600]), "z" * 3000)
        summary.add(result)
        reporter.case(result)
    reporter.finish(summary)
    text = (tmp_path / "r.md").read_text()
    assert len(text.encode()) <= MAX_BYTES < 1024 * 1024
    shown = text.count("### ")
    assert 100 < shown < 3000
    assert f"*{3000 - shown:,} more cases that did not pass are not shown here" in text
    assert text.rstrip().endswith("hold every case.*")


def test_the_summary_is_cut_at_a_line_and_says_so() -> None:
    text = "".join(f"line {i} " + "x" * 100 + "\n" for i in range(20_000))
    cut = steps.summary_of(text)
    assert len(cut.encode()) <= steps.SUMMARY_BYTES
    assert "This summary is cut here" in cut
    assert cut.split("\n\n*This summary")[0] == text[: len(cut.split("\n\n*This summary")[0])]
    assert steps.summary_of("short\n") == "short\n"
