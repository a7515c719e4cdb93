"""Reports under hostile names, answers and folders: pasteable, escaped, bounded.

* Every replay command, in every report, pasted into a shell runs exactly the run it names:
  the Markdown report used to turn each backtick of a shell-quoted path into ``'``, so a
  ``--cases`` folder named with a backtick and ``$(...)`` gave a command that ran the
  ``$(...)``.
* Raw U+009B (CSI), U+202E (right-to-left override) and U+200F reached the terminal and every
  report; each is now an escape everywhere (``runner.bounds.shown``; JSON escapes in JSON).
* The JSON Lines report cut outputs, but not error categories, messages or reasons.
* Results kept every reply whole: the runner's memory grew with each huge answer.
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
import tracemalloc
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support import FAKES, MINI, hostile_command

from flux_conformance.runner.cli import main

REPORTS = {"--json": "r.jsonl", "--junit": "r.xml", "--markdown": "r.md", "--html": "r.html"}


def _replays(tmp_path: Path, stdout: str) -> dict[str, str]:
    """The replay command of the one failing case, as each report shows it."""
    found = {"terminal": stdout.split("replay:", 1)[1].splitlines()[0].strip()}
    span = next(line for line in (tmp_path / "r.md").read_text().splitlines() if "replay:" in line)
    fence = re.search(r"replay: (`+)", span)
    assert fence is not None, span
    inner = span.split(fence.group(1))[1]
    found["markdown"] = inner[1:-1] if inner.startswith(" ") and inner.endswith(" ") else inner
    page = (tmp_path / "r.html").read_text()
    found["html"] = html.unescape(re.search(r"replay:   (.*?)</pre>", page).group(1))
    body = next(e.text for e in ET.parse(tmp_path / "r.xml").iter("failure"))
    found["junit"] = next(x for x in body.splitlines() if x.startswith("replay: "))[8:]
    return found


def test_every_replay_command_runs_exactly_its_run_when_pasted(tmp_path: Path, capfd) -> None:
    cases = tmp_path / "we`ird $(touch TOUCHED) `touch TICKED` dir"
    shutil.copytree(MINI, cases)
    argv = ["run", "--cases", str(cases), "--impl", "python:inprocess_fakes:Wrong"]
    argv += ["--id", "mini.range"]
    for option, name in REPORTS.items():
        argv += [option, str(tmp_path / name)]
    assert main(argv) == 1
    out, _ = capfd.readouterr()
    shell = tmp_path / "shell"
    shell.mkdir()
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env["PYTHONPATH"] = os.pathsep.join([str(FAKES), env.get("PYTHONPATH", "")])
    replays = _replays(tmp_path, out)
    assert len(set(replays.values())) == 1, replays  # one command, whatever the report
    for report, command in replays.items():
        done = subprocess.run(
            ["bash", "-c", command + " --json -"],
            cwd=shell,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 1, (report, command, done.stderr)
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        assert [x["case"]["id"] for x in lines if "case" in x] == ["mini.range"], report
        assert lines[0]["header"]["cases_dir"] == str(cases), report
        assert list(shell.iterdir()) == [], f"pasting the {report} replay ran a command"


#: What must never reach a terminal or a report raw.
RAW = ("\u009b", "\u202e", "\u200f", "\x1b")


def test_bidi_and_c1_characters_never_reach_a_report_raw(tmp_path: Path) -> None:
    cases = tmp_path / "cases\u202e\u009b"
    shutil.copytree(MINI, cases)
    argv = [sys.executable, "-m", "flux_conformance.runner.cli", "run", "--cases", str(cases)]
    argv += ["--impl", f"exec:{hostile_command('bidi')}", "-v", "--badge", str(tmp_path / "b")]
    for option, name in REPORTS.items():
        argv += [option, str(tmp_path / name)]
    done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 1, done.stderr
    texts = {"stdout": done.stdout, "stderr": done.stderr}
    texts |= {name: (tmp_path / name).read_text() for name in [*REPORTS.values(), "b"]}
    assert "evil" in texts["r.jsonl"]
    assert "\\u202e" in texts["r.jsonl"]  # a JSON escape: the same value, never raw
    header = json.loads(texts["r.jsonl"].splitlines()[0])["header"]
    assert header["cases_dir"] == str(cases)  # the value itself, written with JSON escapes
    for where, text in texts.items():
        assert not [c for c in RAW if c in text], where


class HugeErrors:
    """Refuses every case with a 3-million-character category and message."""

    def run(self, operation, input, **options):
        return {"error": {"category": "c" * 3_000_000, "message": "m" * 3_000_000}}


def test_the_json_lines_report_cuts_categories_messages_and_reasons(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    import inprocess_fakes

    monkeypatch.setattr(inprocess_fakes, "HugeErrors", HugeErrors, raising=False)
    report = tmp_path / "r.jsonl"
    argv = ["run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:HugeErrors"]
    assert main([*argv, "--json", str(report)]) == 1
    capsys.readouterr()
    lines = report.read_text().splitlines()
    assert len(lines) == 7
    assert max(map(len, lines)) < 50_000, sorted(map(len, lines))[-1]
    case = json.loads(lines[1])["case"]
    assert case["actual"]["error"]["category"].endswith("... (3000000 characters)")
    assert case["reason"].endswith("characters)")


class HugeLists:
    """Answers every case with a new list of 400,000 integers (about 15 MB of Python objects)."""

    def run(self, operation, input, **options):
        return {"output": list(range(400_000))}


def _peak(tmp_path: Path, ids: list[str]) -> int:
    argv = ["run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:HugeLists"]
    for option, name in REPORTS.items():
        argv += [option, str(tmp_path / name)]
    for case_id in ids:
        argv += ["--id", case_id]
    tracemalloc.start()
    try:
        assert main(argv) == 1
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_the_runner_keeps_no_huge_answer(tmp_path: Path, monkeypatch, capsys) -> None:
    import inprocess_fakes

    monkeypatch.setattr(inprocess_fakes, "HugeLists", HugeLists, raising=False)
    one = _peak(tmp_path, ["mini.range"])
    five = _peak(tmp_path, ["mini.*"])
    capsys.readouterr()
    # Each answer holds about 15 MB; keeping them would add about 60 MB for four more.
    assert five < one + 20 * 2**20, (one, five)
    actual = json.loads((tmp_path / "r.jsonl").read_text().splitlines()[1])["case"]["actual"]
    assert actual["cut"] is True
    assert len(actual["output"]) < 10_100


@pytest.mark.parametrize("size", [10, 20_000])
def test_a_kept_result_keeps_a_small_output_whole(size: int) -> None:
    from flux_conformance.runner.adapters.base import Reply
    from flux_conformance.runner.cases import load_suite
    from flux_conformance.runner.engine import CaseResult, Outcome, kept

    case = load_suite(MINI).cases[0]
    result = kept(CaseResult(case, Outcome.FAILED, Reply("output", list(range(size)))))
    assert result.reply is not None
    assert result.reply.cut is (size > 10_000)
    assert (result.reply.value == list(range(size))) is (size <= 10_000)
