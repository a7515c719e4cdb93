"""``--write-expectations`` updates a baseline for what the run measured, and nothing else.

It used to write the file anew from the run's failures: entries outside the selection were
dropped, reasons written by hand replaced, the file written after an interrupted run, an
errored case recorded as an expected wrong answer, and the file written in place.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from support import MINI

from flux_conformance.runner.cli import main
from flux_conformance.runner.expectations import Expectations

WRONG = ("--impl", "python:inprocess_fakes:Wrong")
GOOD = ("--impl", "python:inprocess_fakes:good")

BASELINE = """\
# Our baseline for the Wrong fake: keep these notes.
implementation: wrong
expectations:
  # Tracked upstream; the reason is ours.
  - id: mini.range
    status: xfail
    reason: answers nothing at all (written by hand)
    issue: https://example.org/1
  - id: mini.list  # a note on the line
    status: xfail
    reason: also nothing
  - id: 'mini.b*'
    status: xfail
    reason: brackets, by hand
  - id: mini.degenerate
    status: skip
    reason: not asked
"""


def _write(capsys, tmp_path: Path, *argv: str, body: str = BASELINE) -> tuple[int, Path, str]:
    base = tmp_path / "base.yaml"
    base.write_text(body)
    argv = ("run", "--cases", str(MINI), "--expectations", str(base), *argv)
    code = main([*argv, "--write-expectations", str(base)])
    return code, base, capsys.readouterr().err


def test_entries_outside_the_selection_and_unchanged_ones_are_kept_line_for_line(
    capsys, tmp_path: Path
) -> None:
    code, base, err = _write(capsys, tmp_path, *WRONG, "--id", "mini.range", "--id", "mini.l*")
    assert code == 1  # mini.leading-zero failed with no entry
    text = base.read_text()
    assert text.startswith(BASELINE)  # every line people wrote, comments included
    added = Expectations.load(base).entries[4:]
    assert [(e.pattern, e.status) for e in added] == [("mini.leading-zero", "xfail")]
    assert f"wrote {base}" in err
    assert main(["run", "--cases", str(MINI), *WRONG, "--expectations", str(base)]) == 0
    capsys.readouterr()


def test_a_case_that_now_passes_leaves_the_file_and_only_it(capsys, tmp_path: Path) -> None:
    code, base, _ = _write(capsys, tmp_path, *GOOD, "--id", "mini.range")
    assert code == 1  # xpassed
    assert base.read_text() == BASELINE.replace(
        "  # Tracked upstream; the reason is ours.\n  - id: mini.range\n    status: xfail\n"
        "    reason: answers nothing at all (written by hand)\n"
        "    issue: https://example.org/1\n",
        "",
    )


def test_a_glob_with_a_changed_case_is_narrowed_keeping_its_reason(capsys, tmp_path) -> None:
    body = "expectations:\n  # all of them\n  - id: 'mini.*'\n    status: xfail\n    reason: mine\n"
    code, base, _ = _write(capsys, tmp_path, *GOOD, "--id", "mini.range", body=body)
    assert code == 1
    entries = Expectations.load(base).entries
    assert [(e.pattern, e.reason) for e in entries] == [
        (i, "mine") for i in ("mini.brackets", "mini.degenerate", "mini.leading-zero", "mini.list")
    ]
    assert "  # all of them\n" in base.read_text()


def test_errored_cases_are_recorded_as_errors(capsys, tmp_path: Path) -> None:
    base = tmp_path / "new.yaml"
    impl = ("--impl", "python:inprocess_fakes:RaisingAfterFirst")
    assert main(["run", "--cases", str(MINI), *impl, "--write-expectations", str(base)]) == 1
    entries = Expectations.load(base).entries
    assert len(entries) == 5
    assert {e.status for e in entries} == {"xerror"}
    assert all(e.reason.startswith("errored: ") for e in entries)
    assert main(["run", "--cases", str(MINI), *impl, "--expectations", str(base)]) == 0
    # A wrong answer is not the error the entry expects.
    assert main(["run", "--cases", str(MINI), *WRONG, "--expectations", str(base)]) == 1
    assert "expects it to error" in capsys.readouterr().out


class _Interrupting:
    """Answers the runner's first request and two cases wrongly, then is interrupted."""

    def __init__(self) -> None:
        self.calls = 0

    def run(self, operation, input, **options):
        self.calls += 1
        if self.calls > 3:
            raise KeyboardInterrupt
        return {"output": []}


def test_an_interrupted_run_writes_nothing(capsys, tmp_path: Path, monkeypatch) -> None:
    import inprocess_fakes

    monkeypatch.setattr(inprocess_fakes, "Interrupting", _Interrupting, raising=False)
    before = (tmp_path / "base.yaml", BASELINE)
    code, base, err = _write(capsys, tmp_path, "--impl", "python:inprocess_fakes:Interrupting")
    assert code == 130
    assert base.read_text() == before[1]
    assert f"not written: {base} (the run was interrupted)" in err


def test_the_baseline_is_replaced_whole(capsys, tmp_path: Path) -> None:
    base = tmp_path / "base.yaml"
    base.write_text(BASELINE)
    with base.open(encoding="utf-8") as reader:
        code, base, _ = _write(capsys, tmp_path, *WRONG)
        assert code == 1
        assert reader.read() == BASELINE  # the old file was not rewritten in place
        assert os.fstat(reader.fileno()).st_ino != base.stat().st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.yaml"]


@pytest.mark.parametrize("body", ["expectations: [{id: mini.list, status: xfail, reason: r}]\n"])
def test_a_flow_style_file_is_written_anew_with_its_entries(capsys, tmp_path, body) -> None:
    code, base, _ = _write(capsys, tmp_path, *WRONG, "--id", "mini.range", body=body)
    assert code == 1
    entries = Expectations.load(base).entries
    assert [(e.pattern, e.reason) for e in entries[:1]] == [("mini.list", "r")]
    assert [e.pattern for e in entries[1:]] == ["mini.range"]
