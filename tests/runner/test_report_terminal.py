"""The terminal report as a person reads it: each case that did not pass explained, then a table.

An operation whose every case errored for one reason is told once, with its count; any other
bad case is told in full (input, expected, actual, reason, diff, the last 15 lines of its
stderr, a replay command).  Long texts are cut at 20,000 characters.  The cases come from case
files written by each test and are answered by the in-process ``report_fakes.ByInput``, which
does what each input's first word says; output is read without colour, as a pipe gets it.
"""

from __future__ import annotations

import fcntl
import io
import os
import re
import struct
import sys
import termios
import threading
from pathlib import Path

from support import a_header, write_suite

from flux_conformance.runner.cli import main
from flux_conformance.runner.engine import Summary
from flux_conformance.runner.report.terminal import TerminalReporter

IMPL = "python:report_fakes:ByInput"
#: A case of another operation that the implementation answers: the run's check that the
#: implementation answers at all asks it (not the errored cases), so the run goes on.
PROBE = [{"id": "probe", "description": "answered", "input": [1], "output": "1"}]


def _run(tmp_path: Path, capsys, cases: dict[str, list[dict]], *argv: str) -> str:
    folder = write_suite(tmp_path / "suite", cases)
    main(["run", "--cases", str(folder), "--impl", IMPL, *argv])
    return capsys.readouterr().out


def _case(name: str, word: str, **expected: object) -> dict:
    return {
        "id": name,
        "description": f"case {name}",
        "input": word,
        **(expected or {"output": [1]}),
    }


def _told(out: str) -> list[str]:
    """The ids told in full, in order."""
    return re.findall(r"^(?:FAILED|ERRORED|SKIPPED|XPASSED|UNCHECKED) (\S+)  \(", out, re.M)


def test_a_bad_case_is_told_in_full(tmp_path: Path, capsys) -> None:
    out = _run(tmp_path, capsys, {"idset.decode": [_case("a", "1-3"), _case("b", "1")]})
    (block,) = re.findall(r"^FAILED a  \(.*?(?=\n\n|\noperation)", out, re.M | re.S)
    lines = block.splitlines()
    assert lines[0].endswith("idset.decode.yaml:2) [must]")
    assert lines[1:5] == [
        "  description: case a",
        '  input:       "1-3"',
        '  expected:    {"output": [1]}',
        '  actual:      {"output": [1, 2, 3]}',
    ]
    assert lines[5].startswith("  reason:      ")
    assert lines[6] == "  diff:"
    assert all(line.startswith("    ") for line in lines[7:-1])
    assert "root[1]" in block
    assert lines[-1].startswith(
        "  replay:      flux-conformance run --impl python:report_fakes:ByInput --id a "
    )
    assert _told(out) == ["a"]


def test_the_last_15_lines_of_stderr_are_shown(tmp_path: Path, capsys) -> None:
    out = _run(tmp_path, capsys, {"idset.decode": [_case("a", "lines"), _case("b", "1")]})
    shown = out.split("  stderr (tail):\n", 1)[1].split("  replay:", 1)[0].splitlines()
    assert shown == [f"    line {i}" for i in range(16, 31)]


def test_an_operation_whose_every_case_errored_alike_is_told_once(tmp_path: Path, capsys) -> None:
    cases = [_case(f"e{i}", "lines") for i in range(2)]
    # A case of another operation that failed is told in full, after the errored operation.
    failed = {"id": "f", "description": "wrong", "input": [2], "output": "1"}
    out = _run(tmp_path, capsys, {"idset.decode": cases, "idset.encode": [*PROBE, failed]})
    assert _told(out) == ["f"]
    told = out.split("ERRORED every case of idset.decode (2 cases), each with the same reason:\n")
    assert len(told) == 2
    lines = told[1].split("\n\n")[0].splitlines()
    assert lines[0] == "  reason:      raised RuntimeError: line 1"
    at = lines.index("  stderr (tail, first case):")
    assert lines[at + 1 : at + 16] == [f"    line {i}" for i in range(16, 31)]
    assert lines[at + 16].startswith("  first case:  e0 (")
    assert lines[at + 17].startswith(
        "  replay:      flux-conformance run --impl " + IMPL + " --id e0 "
    )


def test_an_error_without_stderr_is_told_without_a_stderr_section(tmp_path: Path, capsys) -> None:
    alone = {"idset.decode": [_case("b0", "broken")], "idset.encode": PROBE}
    out = _run(tmp_path / "alone", capsys, alone)
    assert _told(out) == ["b0"]
    assert "  stderr (tail" not in out
    every = {"idset.decode": [_case("b0", "broken"), _case("b1", "broken")], "idset.encode": PROBE}
    out = _run(tmp_path / "every", capsys, every)
    assert "ERRORED every case of idset.decode (2 cases)" in out
    assert "  stderr (tail" not in out


def test_errors_are_told_one_by_one_unless_every_case_erred_for_one_reason(
    tmp_path: Path, capsys
) -> None:
    one = _run(
        tmp_path / "one", capsys, {"idset.decode": [_case("e0", "raise")], "idset.encode": PROBE}
    )
    assert _told(one) == ["e0"]
    passed = _run(
        tmp_path / "p",
        capsys,
        {"idset.decode": [_case("e0", "raise"), _case("e1", "raise"), _case("p", "1")]},
    )
    assert _told(passed) == ["e0", "e1"]
    two = _run(
        tmp_path / "two",
        capsys,
        {"idset.decode": [_case("e0", "raise"), _case("e1", "other")], "idset.encode": PROBE},
    )
    assert _told(two) == ["e0", "e1"]
    failed = _run(
        tmp_path / "f",
        capsys,
        {"idset.decode": [_case("e0", "raise"), _case("f", "fail")], "idset.encode": PROBE},
    )
    assert _told(failed) == ["e0", "f"]
    for out in (one, passed, two, failed):
        assert "every case of" not in out


def test_skipped_cases_are_told_only_when_asked(tmp_path: Path, capsys) -> None:
    cases = {"idset.decode": [_case("s", "skip"), _case("f", "fail")]}
    assert _told(_run(tmp_path / "quiet", capsys, cases)) == ["f"]
    assert _told(_run(tmp_path / "told", capsys, cases, "--show-skips")) == ["s", "f"]


def test_verbose_gives_a_line_per_case(tmp_path: Path, capsys) -> None:
    cases = {"idset.decode": [_case("p", "1"), _case("f", "fail"), _case("s", "skip")]}
    out = _run(tmp_path, capsys, cases, "--verbose")
    assert re.findall(r"^(\w+) +(\w)$", out, re.M) == [
        ("PASSED", "p"),
        ("FAILED", "f"),
        ("SKIPPED", "s"),
    ]
    assert "PASSED   p\n" in out


def test_the_table_shows_passed_and_failed_and_any_other_outcome_that_occurred(
    tmp_path: Path, capsys
) -> None:
    passing = _run(tmp_path / "a", capsys, {"idset.decode": [_case("p", "1")]})
    assert re.search(r"^operation\s+┃ passed ┃ failed$", passing, re.M)
    assert re.search(r"^total\s+│\s+1 │\s+0$", passing, re.M)
    assert passing.rstrip().splitlines()[-1] == (
        "conforms on 1 of 1 operations (1 of 1 cases): 1 passed, 0 failed"
    )
    mixed = _run(
        tmp_path / "b",
        capsys,
        {"idset.decode": [_case("p", "1"), _case("e", "raise"), _case("s", "skip")]},
    )
    assert re.search(r"^operation\s+┃ passed ┃ failed ┃ errored ┃ skipped$", mixed, re.M)
    assert re.search(r"^idset\.decode\s+│\s+1 │\s+0 │\s+1 │\s+1$", mixed, re.M)
    last = mixed.rstrip().splitlines()[-1]
    assert last.startswith("does not conform: 1 errored, 1 passed")
    assert not last.endswith("1 skipped")  # the counts are in the verdict, not repeated


def test_texts_are_cut_at_20000_characters_and_names_at_200(tmp_path: Path, capsys) -> None:
    case = {"id": "f", "description": "d" * 20_001, "input": "fail", "output": [1]}
    folder = write_suite(tmp_path / "suite", {"idset.decode": [case]})
    main(["run", "--cases", str(folder), "--impl", "python:report_fakes:LongVersion"])
    out = capsys.readouterr().out
    assert f"  description: {'d' * 20_000}... (20001 characters)\n" in out
    first = out.splitlines()[0]
    assert first == (
        "flux-conformance "
        + first.split()[1]
        + " 1 cases against LongVersion "
        + "v" * 199
        + "... (1501 characters) (edition "
        + first.rsplit("(edition ", 1)[1]
    )


#: A frame of the progress bar: what runs, the bar, the cases done of 2.
BAR = re.compile(r"(\S+) ━+ (\d+)/2 ")


def test_colour_is_forced_on_or_off_when_asked() -> None:
    header = a_header(selected=0)
    for color in (True, False):
        stream = io.StringIO()  # not a terminal
        reporter = TerminalReporter(stream, color=color)
        reporter.start(header)
        reporter.finish(Summary())
        assert ("\x1b[1m" in stream.getvalue()) is color  # the name in bold


def _plain(text: str) -> str:
    """``text`` without its terminal control sequences."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def _on_a_terminal(monkeypatch, argv: list[str]) -> str:
    """What ``flux-conformance`` writes to a terminal (a pseudo-terminal 200 columns wide)."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    chunks: list[bytes] = []

    def drain() -> None:  # the terminal's reader: a full pty would block the writer
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO once the terminal is closed
                return
            if not chunk:
                return
            chunks.append(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        with open(slave, "w", encoding="utf-8") as tty:
            monkeypatch.setattr(sys, "stdout", tty)
            main(argv)
            tty.flush()
            monkeypatch.setattr(sys, "stdout", sys.__stdout__)
    finally:
        reader.join()
        os.close(master)
    return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


def test_a_terminal_gets_colours_and_a_progress_bar_unless_verbose(
    tmp_path: Path, monkeypatch
) -> None:
    folder = write_suite(tmp_path / "suite", {"idset.decode": [_case("a", "1"), _case("b", "1")]})
    argv = ["run", "--cases", str(folder), "--impl", IMPL]
    shown = _on_a_terminal(monkeypatch, argv)
    assert "\x1b[1;32mconforms on 1 of 1 operations (2 of 2 cases)" in shown  # green, bold
    # The bar's frames (each drawn over the last, the last erased as it stops): the cases
    # done of 2, the operation running; the last frame has both done.
    frames = BAR.findall(_plain(shown))
    assert frames[0] == ("running", "0")
    assert frames[-1] == ("idset.decode", "2")
    assert all(int(done) <= 2 for _, done in frames)
    verbose = _on_a_terminal(monkeypatch, [*argv, "--verbose"])
    assert "\x1b[32mPASSED  \x1b[0m a" in verbose
    assert not BAR.findall(_plain(verbose))
