"""The command line's edges: a closed pipe, an unwritable report, the narrower filters of
``clarify`` and ``coverage``, progress lines, a fast ``--version``, the replay command."""

from __future__ import annotations

import fcntl
import logging
import os
import subprocess
import sys

import pytest
from support import MINI

from flux_conformance.runner import cases as cases_module
from flux_conformance.runner.cli import EXIT_BROKEN_PIPE, main
from flux_conformance.runner.editions import bundled
from flux_conformance.runner.engine import _diff

CLI = [sys.executable, "-m", "flux_conformance.runner.cli"]
DEFAULT_EDITION = bundled().default
OTHER_EDITION = next(e for e in bundled().names if e != DEFAULT_EDITION)


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- a reader that goes away -------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [["list"], ["export"], ["run", "--json", "-"], ["list", "--operations"]],
    ids=["list", "export", "run-json", "operations"],
)
def test_a_closed_pipe_ends_the_command_quietly(argv):
    # The pipe holds one page, less than any of these commands writes, so the command is
    # still writing when the reader goes away whatever the machine's load (with the usual
    # 64 KiB pipe, a short output could be written whole before the reader closes).
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, getattr(fcntl, "F_SETPIPE_SZ", 1031), 4096)
    with subprocess.Popen([*CLI, *argv], stdout=write_end, stderr=subprocess.PIPE) as process:
        os.close(write_end)
        assert process.stderr is not None
        with os.fdopen(read_end, "rb", buffering=0) as reader:
            first = reader.read(10)  # what `head -c 10` reads, then it goes away
        err = process.stderr.read().decode()
        assert process.wait(timeout=120) == EXIT_BROKEN_PIPE
    assert first
    assert err == ""


# -- reports that cannot be written ------------------------------------------------------------


@pytest.mark.parametrize("option", ["--json", "--junit", "--markdown", "--html", "--badge"])
def test_an_unwritable_report_is_a_usage_error_before_the_run(capsys, tmp_path, option):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, out, err = _run(capsys, "run", "--cases", str(MINI), option, str(blocker / "report.out"))
    assert code == 2
    assert f"error: cannot write {blocker / 'report.out'}: {blocker} is not a folder" in err
    assert "Traceback" not in err
    assert "passed" not in out  # nothing ran


def test_a_folder_is_not_a_report(capsys, tmp_path):
    code, _, err = _run(capsys, "compare", "--cases", str(MINI), "--html", str(tmp_path))
    assert code == 2
    assert "it is a folder" in err


def test_a_write_that_fails_late_is_reported_without_a_traceback(capsys, tmp_path, monkeypatch):
    from flux_conformance.runner.report.markdown import MarkdownReporter

    def refuse(self, summary, *, interrupted):
        raise OSError(28, "No space left on device", str(self.path))

    monkeypatch.setattr(MarkdownReporter, "render", refuse)
    code, _, err = _run(capsys, "run", "--cases", str(MINI), "--markdown", str(tmp_path / "r.md"))
    assert code == 2
    assert f"error: cannot write {tmp_path / 'r.md'}: No space left on device" in err


# -- clarify and coverage ------------------------------------------------------------------------


def test_clarify_takes_o_as_operation_and_O_as_the_file(capsys, tmp_path):
    target = tmp_path / "open.md"
    code, out, _ = _run(capsys, "clarify", "-o", "hostlist.*", "-O", str(target))
    assert code == 0
    assert out == ""
    text = target.read_text()
    assert "## RFC 29" in text
    assert "## RFC 22" not in text
    # Findings of the shipped files are kept to the chosen operations too.
    ids = [line.split("`")[1] for line in text.splitlines() if line.startswith("- `")]
    assert ids
    assert all(i.startswith("hostlist.") for i in ids)


def test_clarify_by_spec_and_a_filter_that_matches_nothing(capsys):
    code, out, _ = _run(capsys, "clarify", "--spec", "rfc 31")
    assert code == 0
    headings = [line for line in out.splitlines() if line.startswith("## RFC")]
    assert headings == ["## RFC 31"]
    code, _, err = _run(capsys, "clarify", "-o", "no.such.*")
    assert code == 2
    assert "-o 'no.such.*' matches no operation" in err
    assert "did you mean" not in err  # nothing is close enough to suggest
    code, _, err = _run(capsys, "clarify", "--spec", "rfc99")
    assert code == 2
    assert "unknown spec rfc99" in err


def test_coverage_by_spec_and_by_operation(capsys):
    edition = ["--edition", DEFAULT_EDITION]
    code, whole, _ = _run(capsys, "coverage", "--summary", *edition)
    assert code == 0
    rfc22 = next(line for line in whole.splitlines() if line.startswith("RFC 22 "))
    code, out, _ = _run(capsys, "coverage", "--summary", "--spec", "rfc22", *edition)
    assert out.splitlines()[:3] == [f"edition {DEFAULT_EDITION}:", rfc22, ""]
    # The input classes shown are those of the spec's operations.
    classes = [line.split()[0] for line in out.splitlines()[4:] if "classes covered" in line]
    assert classes == ["idset.decode", "idset.encode"]
    # -o counts only the chosen operations' citations: one of RFC 22's two operations covers
    # fewer statements than both.
    code, out, _ = _run(capsys, "coverage", "--summary", "-o", "idset.decode", *edition)
    lines = out.splitlines()
    assert lines[1] == "citations of the cases of idset.decode only"
    assert lines[2].startswith("RFC 22 ")
    assert lines[2] != rfc22
    assert lines[3] == ""
    classes = lines[lines.index("input classes, per operation (valid / invalid cases):") + 1 :]
    assert classes[0].startswith("idset.decode ")
    assert not any(line.startswith("idset.encode") for line in classes)


# -- progress -------------------------------------------------------------------------------------


def test_compare_says_what_it_runs_and_how_it_went(capsys):
    code, _, err = _run(
        capsys,
        "compare",
        "--cases",
        str(MINI),
        "--impl",
        "reference",
        "--impl",
        "python:inprocess_fakes:Wrong",
    )
    assert code in (0, 1)  # the exit status is the run's; this test is about the lines
    lines = err.splitlines()
    assert "running 5 cases against reference" in lines
    assert any(line.startswith("  reference: 5 pass (") for line in lines)
    assert any(
        line.startswith("  python:inprocess_fakes:Wrong: ") and "fail" in line for line in lines
    )


def test_diff_reports_progress_while_it_searches(capsys):
    pytest.importorskip("hypothesis")
    code, _, err = _run(
        capsys,
        "diff",
        "--impl",
        "python:inprocess_fakes:Wrong",
        "-o",
        "idset.decode",
        "--seed",
        "3",
        "--seconds",
        "5",
        "--max",
        "2",
    )
    assert code == 1
    lines = err.splitlines()
    assert lines[0].startswith(
        "diff python:inprocess_fakes:Wrong against reference on idset.decode: seed 3"
    )
    assert any(line.strip().endswith("disagreement(s)") for line in lines[1:])


# -- --version ---------------------------------------------------------------------------------------


def test_version_is_answered_from_the_cache_once_the_suite_is_known(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    with pytest.raises(SystemExit):
        main(["--version"])
    first = capsys.readouterr().out

    def no_loading(*args, **kwargs):
        raise AssertionError("the suite was loaded again")

    monkeypatch.setattr(cases_module, "load_suite", no_loading)
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == first


def test_version_loads_again_when_a_case_changes(capsys, monkeypatch, tmp_path):
    import shutil

    from flux_conformance.runner._version import describe_suite

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    copy = tmp_path / "suite"
    shutil.copytree(MINI, copy)
    count, digest, _ = describe_suite(copy)
    path = copy / "rfc22" / "idset.decode.yaml"
    path.write_text(path.read_text().replace("output: [1, 5]", "output: [1, 6]"))
    again, changed, _ = describe_suite(copy)
    assert (again, changed != digest) == (count, True)
    assert describe_suite(copy)[1] == cases_module.load_suite(copy).digest() == changed


# -- what is printed -----------------------------------------------------------------------------


def test_the_diff_of_a_long_answer_prints_no_warning(capsys):
    logging.getLogger("deepdiff").setLevel(logging.NOTSET)  # as a fresh process has it
    text = _diff(list(range(200)), list(range(1, 201)))
    assert text
    assert capsys.readouterr().err == ""


def test_the_replay_command_keeps_edition_and_timeout(capsys):
    code, out, _ = _run(
        capsys,
        "run",
        "--cases",
        str(MINI),
        "--impl",
        "python:inprocess_fakes:Wrong",
        "--timeout",
        "3",
        "--edition",
        OTHER_EDITION,
    )
    assert code == 1
    replay = next(line for line in out.splitlines() if "replay:" in line)
    assert f"--edition {OTHER_EDITION}" in replay
    assert "--timeout 3" in replay
    code, out, _ = _run(
        capsys, "run", "--cases", str(MINI), "--impl", "python:inprocess_fakes:Wrong"
    )
    replay = next(line for line in out.splitlines() if "replay:" in line)
    assert f"--edition {DEFAULT_EDITION}" in replay
    assert "--timeout" not in replay


def test_other_edition_is_mentioned_only_when_the_filter_would_take_it(capsys):
    code, out, _ = _run(capsys, "run", "-o", "idset.decode")
    assert code == 0
    assert "other edition" not in out
    code, out, _ = _run(capsys, "run", "-o", "count.values")
    assert code == 0
    assert "case(s) of the other edition left out" in out


def test_the_replay_command_keeps_how_expectations_were_applied(capsys, tmp_path):
    code, out, _ = _run(
        capsys,
        "run",
        "--impl",
        "clustershell",
        "--no-shipped-expectations",
        "--id",
        "hostlist.decode.vector-repeated-names",
    )
    assert code == 1
    replay = next(line for line in out.splitlines() if "replay:" in line)
    assert replay.endswith("--no-shipped-expectations")
    known = tmp_path / "known.yaml"
    known.write_text("expectations:\n  - id: mini.range\n    status: skip\n    reason: r\n")
    code, out, _ = _run(
        capsys,
        "run",
        "--cases",
        str(MINI),
        "--impl",
        "python:inprocess_fakes:Wrong",
        "--expectations",
        str(known),
        "--id",
        "mini.list",
    )
    replay = next(line for line in out.splitlines() if "replay:" in line)
    assert f"--expectations {known} " in replay
