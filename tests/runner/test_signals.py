"""Signals and processes that outlive their parent: the run always ends, with complete reports,
and leaves no process behind.

SIGTERM (``timeout``, ``docker stop``, a CI cancel) used to kill ``run`` at once: no JUnit, no
HTML, a JSON report without its footer, and the implementation left running.  A child that
called ``setsid()`` outlived ``run`` and ``diff`` alike.  An implementation that hangs on every
case cost the full timeout for each.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from support import MINI, hostile_command

from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.adapters.subprocess import SubprocessAdapter
from flux_conformance.runner.cli import main


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (a zombie waiting to be reaped is not)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 :].split()[0] != b"Z"


def _all_gone(pids: list[int], within: float = 60.0) -> bool:
    """Whether every one of ``pids`` is gone (polled: ``within`` only bounds a failure)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(map(_alive, pids)):
            return True
        time.sleep(0.1)
    return False


def _lines(path: Path, at_least: int, within: float = 120.0) -> list[int]:
    """The numbers ``path`` holds once it holds ``at_least`` of them (an event a fake wrote)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists():
            numbers = [int(line) for line in path.read_text().split()]
            if len(numbers) >= at_least:
                return numbers
        time.sleep(0.05)
    raise AssertionError(f"the implementation never wrote {at_least} line(s) to {path.name}")


def _pids(path: Path, at_least: int) -> list[int]:
    """The pids the hostile implementation wrote once it started ``at_least`` processes."""
    return _lines(path, at_least)


def _time_out_after_the_check(monkeypatch: pytest.MonkeyPatch, once: Path, seconds: float) -> None:
    """Give each request sent after the run's pre-flight check ``seconds`` to be answered.

    The check (answered right, see ``HOSTILE_ONCE``) keeps the run's own long ``--timeout``,
    however slow the machine; every later request goes to an implementation that never
    answers, so it times out whatever the timeout: no outcome depends on the machine's speed.
    """
    run = SubprocessAdapter.run

    def timed(self: SubprocessAdapter, operation: str, input: Any, *, edition: str | None) -> Reply:
        if once.exists():
            self.timeout = seconds
        return run(self, operation, input, edition=edition)

    monkeypatch.setattr(SubprocessAdapter, "run", timed)


def _hostile_env(pids: Path, hanging: Path, once: Path) -> dict[str, str]:
    return {"HOSTILE_PIDS": str(pids), "HOSTILE_HANGING": str(hanging), "HOSTILE_ONCE": str(once)}


pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_leaves_complete_reports_and_no_process(signum: int, tmp_path: Path) -> None:
    pidfile, hanging = tmp_path / "pids", tmp_path / "hanging"
    reports = {name: tmp_path / name for name in ("r.jsonl", "r.xml", "r.html", "r.md")}
    argv = [sys.executable, "-m", "flux_conformance.runner.cli", "run", "--cases", str(MINI)]
    argv += ["--impl", f"exec:{hostile_command('setsid-hang')}", "--timeout", "120"]
    argv += ["--json", str(reports["r.jsonl"]), "--junit", str(reports["r.xml"])]
    argv += ["--html", str(reports["r.html"]), "--markdown", str(reports["r.md"])]
    runner = subprocess.Popen(
        argv,
        env={**os.environ, **_hostile_env(pidfile, hanging, tmp_path / "once")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        # The implementation, the child that left its session, and a daemon.
        pids = _pids(pidfile, at_least=3)
        # The first case is under way (it never gets an answer): the reports have begun.
        assert _lines(hanging, at_least=1) == [2]  # seq 1 was the pre-flight check
        runner.send_signal(signum)
        _, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 128 + signum, err
    assert "Traceback" not in err
    lines = [json.loads(line) for line in reports["r.jsonl"].read_text().splitlines()]
    assert lines[-1]["footer"]["interrupted"] is True
    ET.parse(reports["r.xml"])
    assert "interrupted" in reports["r.html"].read_text()
    assert "interrupted" in reports["r.md"].read_text()
    assert _all_gone(pids), [p for p in pids if _alive(p)]


def test_diff_stopped_by_sigterm_leaves_no_process(tmp_path: Path) -> None:
    pidfile, hanging = tmp_path / "pids", tmp_path / "hanging"
    argv = [sys.executable, "-m", "flux_conformance.runner.cli", "diff", "-o", "idset.decode"]
    argv += ["--impl", f"exec:{hostile_command('setsid-hang')}", "--timeout", "120"]
    runner = subprocess.Popen(
        [*argv, "--seconds", "300"],
        env={**os.environ, **_hostile_env(pidfile, hanging, tmp_path / "once")},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        pids = _pids(pidfile, at_least=3)
        _lines(hanging, at_least=1)  # the search is under way, waiting for an answer
        runner.send_signal(signal.SIGTERM)
        _, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 128 + signal.SIGTERM, err
    assert "interrupted" in err
    assert "Traceback" not in err
    assert _all_gone(pids), [p for p in pids if _alive(p)]


def test_setsid_children_are_killed_with_the_implementation(tmp_path: Path, monkeypatch) -> None:
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("HOSTILE_PIDS", str(pidfile))
    adapter = SubprocessAdapter(hostile_command("setsid-hang"), timeout=0.5)
    adapter.start()
    pids = _pids(pidfile, at_least=3)
    reply = adapter.run("idset.decode", "1", edition=None)
    assert reply.kind == "errored"
    assert "no reply within the timeout" in reply.message
    # The case's fault killed the implementation and everything it started.
    assert _all_gone(pids), [p for p in pids if _alive(p)]
    adapter.close()


@pytest.mark.skipif(sys.platform != "linux", reason="PR_SET_CHILD_SUBREAPER is Linux's")
def test_a_daemon_with_no_token_and_no_parent_is_killed_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Double fork, setsid() and an empty environment: neither the process tree under the
    # implementation nor the token finds the daemon; only a subreaper keeps it in the tree.
    pidfile = tmp_path / "pids"
    monkeypatch.setenv("HOSTILE_PIDS", str(pidfile))
    adapter = SubprocessAdapter(hostile_command("clean-escape"), timeout=30)
    adapter.start()
    try:
        pids = _pids(pidfile, at_least=2)
        daemon = pids[-1]
        assert _alive(daemon)
        with open(f"/proc/{daemon}/environ", "rb") as handle:
            assert handle.read() == b""  # nothing carries the token
        assert adapter.run("idset.decode", "1", edition=None).kind == "output"
    finally:
        adapter.close()
    assert _all_gone(pids), [p for p in pids if _alive(p)]


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_implementation_that_hangs_on_every_case_is_given_up_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    once, hanging = tmp_path / "once", tmp_path / "hanging"
    monkeypatch.setenv("HOSTILE_ONCE", str(once))  # answers the check, then hangs
    monkeypatch.setenv("HOSTILE_HANGING", str(hanging))
    _time_out_after_the_check(monkeypatch, once, 0.5)
    jsonl = tmp_path / "r.jsonl"
    argv = ["run", "--cases", str(MINI), "--impl", f"exec:{hostile_command('hang')}"]
    argv += ["-j", str(jobs)]
    code = main([*argv, "--timeout", "120", "--max-timeouts", "2", "--json", str(jsonl)])
    err = capsys.readouterr().err
    assert code == 1
    cases = [json.loads(line)["case"] for line in jsonl.read_text().splitlines()[1:-1]]
    assert [c["outcome"] for c in cases] == ["errored"] * 5
    assert all("no reply within the timeout" in c["reason"] for c in cases[:2])
    assert all(
        "gave up on hostile-hang after 2 timeouts in a row" in c["reason"] for c in cases[2:]
    )
    assert err.count("gave up on") == 1  # one clear message
    assert len(hanging.read_text().split()) == 2  # the three others were never sent


@pytest.mark.parametrize("jobs", [1, 2])
def test_compare_says_once_that_it_gave_up_on_a_hanging_implementation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, jobs: int
) -> None:
    once, hanging = tmp_path / "once", tmp_path / "hanging"
    monkeypatch.setenv("HOSTILE_ONCE", str(once))  # answers the check, then hangs
    monkeypatch.setenv("HOSTILE_HANGING", str(hanging))
    _time_out_after_the_check(monkeypatch, once, 0.5)
    impl = f"exec:{hostile_command('hang')}"
    argv = ["compare", "--cases", str(MINI), "--impl", "reference", "--impl", impl]
    code = main([*argv, "--timeout", "120", "--max-timeouts", "2", "-j", str(jobs)])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.err.count("warning: gave up on hostile-hang after 2 timeouts") == 1
    # The matrix notes it under the column too.
    assert "gave up on hostile-hang" in captured.out
    assert len(hanging.read_text().split()) == 2  # no case was sent after it gave up


def test_max_timeouts_zero_never_gives_up() -> None:
    adapter = SubprocessAdapter(hostile_command("hang"), timeout=0.3, max_timeouts=0)
    adapter.start()
    try:
        replies = [adapter.run("idset.decode", "1", edition=None) for _ in range(3)]
    finally:
        adapter.close()
    assert all("no reply within the timeout" in r.message for r in replies)
    assert adapter.gave_up is None


def test_a_signal_while_the_implementation_stops_loses_no_report(tmp_path: Path) -> None:
    """Every case answered, ``stop`` ignored, SIGTERM during the stop grace: reports whole.

    The implementation used to be stopped before the reports were written, unguarded: the
    signal in its grace left a traceback, a JSON Lines report without its footer, no other
    report, and the implementation and its child running.
    """
    pidfile, stopped = tmp_path / "pids", tmp_path / "stopped"
    reports = {n: tmp_path / n for n in ("r.jsonl", "r.xml", "r.html", "r.md", "b.json")}
    argv = [sys.executable, "-m", "flux_conformance.runner.cli", "run", "--cases", str(MINI)]
    argv += ["--impl", f"exec:{hostile_command('ignore-stop')}"]
    argv += ["--json", str(reports["r.jsonl"]), "--junit", str(reports["r.xml"])]
    argv += ["--html", str(reports["r.html"]), "--markdown", str(reports["r.md"])]
    argv += ["--badge", str(reports["b.json"])]
    runner = subprocess.Popen(
        argv,
        env={**os.environ, "HOSTILE_PIDS": str(pidfile), "HOSTILE_STOPPED": str(stopped)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not stopped.exists() and runner.poll() is None:
            time.sleep(0.02)
        assert stopped.exists(), "the runner never asked the implementation to stop"
        pids = _pids(pidfile, at_least=2)
        runner.send_signal(signal.SIGTERM)  # within the stop grace
        _, err = runner.communicate(timeout=60)
    finally:
        if runner.poll() is None:
            runner.kill()
    assert runner.returncode == 128 + signal.SIGTERM, err
    assert "Traceback" not in err, err
    lines = [json.loads(line) for line in reports["r.jsonl"].read_text().splitlines()]
    footer = lines[-1]["footer"]
    assert footer["interrupted"] is False  # every case ran: the reports say so
    assert sum(footer["total"].values()) == len(lines) - 2
    assert len(ET.parse(reports["r.xml"]).getroot().findall(".//testcase")) == len(lines) - 2
    assert "</html>" in reports["r.html"].read_text()
    assert "| **total** |" in reports["r.md"].read_text()
    assert json.loads(reports["b.json"].read_text())["schemaVersion"] == 1
    assert _all_gone(pids), [p for p in pids if _alive(p)]
    assert not list(tmp_path.glob(".*.tmp"))
