"""``diff --seconds`` bounds the whole command: one deadline for every phase, memory capped.

No assertion here is about how long something took on this machine (a loaded machine would
make it flake): the clock is a fake one, or the implementation can never start in time, or the
margins are many seconds wide and the assertion is about what the report says.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import textwrap
import time
import types
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.adapters.inprocess import InProcessAdapter, ReferenceImplementation
from flux_conformance.runner.cli import main
from flux_conformance.runner.commands import diff as diff_command
from flux_conformance.runner.tools import diff as diff_module
from flux_conformance.runner.tools.diff import Disagreement, differential
from flux_conformance.runner.tools.diff_bounds import BoundedAdapter, Bounds, bounded
from flux_conformance.runner.tools.diff_clock import (
    Budget,
    TimedJudge,
    cap_own_memory,
    reserve_for,
)

_REFERENCE = ReferenceImplementation()


class FakeClock:
    """A clock that moves only when told to (one tick an implementation call, below)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


def test_the_reserve_is_a_tenth_within_bounds() -> None:
    assert reserve_for(1) == 0.5
    assert reserve_for(30) == 3.0
    assert reserve_for(3600) == 3.0
    # Never more than half a budget.
    assert Budget(0.4, clock=FakeClock().monotonic).reserve == 0.2


def test_budget_notes_each_phase_and_the_ones_past_their_part() -> None:
    clock = FakeClock()
    budget = Budget(30, clock=clock.monotonic)
    assert budget.deadline == 1030
    assert budget.work_deadline == 1027
    clock.now += 5
    budget.ended("starting", budget.start)
    since = clock.now
    clock.now = 1028.5  # the search ends 1.5 s into the reserve
    budget.ended("search", since)
    since = clock.now
    clock.now = 1029.0
    budget.ended("writing", since, last=True)
    assert [name for name, _ in budget.phases] == ["starting", "search", "writing"]
    assert budget.over == ["search ended 1.5 s past its part, into the 3 s kept for the end"]
    assert budget.summary().startswith("29.0 s of --seconds 30 (starting 5.0 s, search 23.5 s")
    clock.now = 1031.0
    budget.ended("closing", since, last=True)
    assert budget.over[-1] == "closing ended 1.0 s past --seconds"


class _AlwaysRefuses:
    """idset.decode refusing every idset of five characters or more, else the reference's answer.

    Each call is one tick of the fake clock, so the deadline falls at a known call.
    """

    def __init__(self, clock: FakeClock, *, memory_after: int | None = None) -> None:
        self.clock = clock
        self.calls = 0
        self.memory_after = memory_after

    def run(self, operation: str, value: Any, **options: Any) -> dict[str, Any]:
        self.calls += 1
        self.clock.now += 1
        if self.memory_after is not None and self.calls > self.memory_after:
            raise MemoryError
        if isinstance(value, str) and len(value) >= 5:
            return {"error": {"category": "invalid"}}
        return dict(_REFERENCE.run(operation, value, **options))


def _fake_time(monkeypatch: pytest.MonkeyPatch, clock: FakeClock) -> None:
    # Only the search's own clock: hypothesis and the rest keep the real one.
    monkeypatch.setattr(diff_module, "time", types.SimpleNamespace(monotonic=clock.monotonic))


def test_shrinking_cut_by_the_deadline_keeps_the_disagreement(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    _fake_time(monkeypatch, clock)
    against = InProcessAdapter(ReferenceImplementation())

    def search(ticks: float) -> tuple[_AlwaysRefuses, Any]:
        refuser = _AlwaysRefuses(clock)
        return refuser, differential(
            "idset.decode",
            InProcessAdapter(refuser),
            against,
            examples=500,
            seconds=10_000,
            seed=5,
            max_found=1,
            deadline=clock.now + ticks,
        )

    full_impl, full = search(100_000)
    assert not full.out_of_time
    assert len(full.disagreements) == 1
    # Shrinking that first input down to the minimal one took this many calls: cut it short.
    calls = full_impl.calls
    assert calls > 10
    cut_impl, cut = search(calls // 2)
    assert cut.out_of_time
    assert len(cut.disagreements) == 1
    found = cut.disagreements[0]
    assert found.actual.kind == "error"
    assert found.expected.kind == "output"
    assert cut_impl.calls <= calls // 2 + 1


def test_a_memory_error_in_the_search_keeps_what_was_found(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = FakeClock()
    _fake_time(monkeypatch, clock)
    against = InProcessAdapter(ReferenceImplementation())

    class Direct:
        """Not an in-process adapter (which makes an exception an errored reply): it raises."""

        name, version = "direct", ""

        def __init__(self, impl: _AlwaysRefuses) -> None:
            self.impl = impl

        def run(self, operation: str, value: Any, *, edition: str | None) -> Reply:
            outcome = self.impl.run(operation, value)
            if "error" in outcome:
                return Reply("error", outcome["error"]["category"])
            return Reply("output", outcome["output"])

    first = _AlwaysRefuses(clock)
    differential(
        "idset.decode", Direct(first), against, examples=500, seconds=10_000, seed=5, max_found=1
    )
    result = differential(
        "idset.decode",
        Direct(_AlwaysRefuses(clock, memory_after=first.calls)),  # out of memory in round 2
        against,
        examples=500,
        seconds=10_000,
        seed=5,
        max_found=5,
    )
    assert result.out_of_memory
    assert len(result.disagreements) == 1


def test_the_command_reports_its_own_memory_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def runs_out(*args: Any) -> int:
        raise MemoryError

    monkeypatch.setattr(diff_command, "_run", runs_out)
    assert main(["diff", "--impl", "reference", "-o", "idset.decode", "--seconds", "5"]) == 3
    err = capsys.readouterr().err
    assert "diff's own process ran out of memory" in err
    assert "Traceback" not in err


def test_an_input_after_the_deadline_is_not_sent() -> None:
    adapter = bounded(
        "python:flux_conformance.runner.adapters.inprocess:ReferenceImplementation", Bounds()
    )
    assert isinstance(adapter, BoundedAdapter)
    adapter.deadline = time.monotonic() - 1  # never started: nothing may be sent to it
    reply = adapter.run("idset.decode", "1", edition=None)
    assert reply.kind == "bound"
    assert "time was up" in reply.message


def test_a_worker_that_cannot_start_in_time_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    silent = tmp_path / "silent.py"
    silent.write_text("import time\ntime.sleep(600)\n")  # never answers hello
    spec = f"exec:{sys.executable} {silent}"
    code = main(["diff", "--impl", spec, "-o", "idset.decode", "--seconds", "3", "--seed", "1"])
    err = capsys.readouterr().err
    assert code == 3
    assert "did not start within the time left of the run" in err
    assert "Traceback" not in err


_SLOW_START = """
import sys
import time

from flux_conformance.runner.cli import main

time.sleep({sleep})  # starting takes most of the run's budget
sys.exit(main(["serve", "--impl", "reference"]))
"""


@pytest.mark.slow
def test_a_slow_start_still_ends_with_a_report(tmp_path: Path) -> None:
    # Starting takes 10 s of 24: the search has what is left, and the report is written.
    slow = tmp_path / "slow_start.py"
    slow.write_text(_SLOW_START.format(sleep=10))
    out = tmp_path / "found.yaml"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "flux_conformance.runner.cli",
            "diff",
            "--impl",
            f"exec:{sys.executable} {slow}",
            "-o",
            "idset.decode",
            "--seconds",
            "24",
            "--examples",
            "1000000",
            "--seed",
            "1",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "(stopped by --seconds)" in done.stderr
    timing = next(line for line in done.stderr.splitlines() if line.startswith("  time: "))
    starting = float(timing.split("starting ")[1].split(" s")[0])
    assert starting >= 10
    assert "peak memory:" in done.stderr


def test_own_memory_is_capped_for_the_command_only() -> None:
    script = textwrap.dedent(
        """
        import resource
        from flux_conformance.runner.tools.diff_clock import cap_own_memory
        before = resource.getrlimit(resource.RLIMIT_AS)
        capped, restore = cap_own_memory(512 * 1024 * 1024)
        assert capped
        try:
            bytearray(768 * 1024 * 1024)
        except MemoryError:
            print("refused")
        restore()
        assert resource.getrlimit(resource.RLIMIT_AS) == before
        bytearray(768 * 1024 * 1024)
        print("restored")
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["refused", "restored"]


def test_own_memory_is_not_capped_below_what_is_in_use() -> None:
    capped, restore = cap_own_memory(1)
    restore()
    assert not capped


def test_a_judging_that_does_not_end_is_cut_and_counted() -> None:
    class Endless:
        name = "idset.decode"

        def first_output_problem(self, value: Any) -> str | None:
            while True:  # never ends: only the judge's timer stops it
                pass

        def compare(self, expected: Any, actual: Any, oracle: Any, value: Any) -> str | None:
            return "differs"

    over: Counter[str] = Counter()
    judge = TimedJudge(Endless(), 0.2, time.monotonic() + 3600, over)  # type: ignore[arg-type]
    assert judge.first_output_problem([1]) is None
    assert over == {"judge time": 1}
    assert judge.compare([1], [2], None, "1") == "differs"
    assert judge.name == "idset.decode"


def _run_all() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "run_all", Path(__file__).resolve().parents[2] / "tests" / "differential" / "run_all.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_findings_pair_whose_worker_cannot_start_is_reported(tmp_path: Path) -> None:
    run_all = _run_all()
    silent = tmp_path / "silent.py"
    silent.write_text("import time\ntime.sleep(600)\n")
    args = argparse.Namespace(examples=10, seed=1, out=tmp_path)
    pair, version = run_all._run_pair(
        f"exec:{sys.executable} {silent}",
        "idset.decode",
        "2026-08-13",
        seconds=3,
        bounds=Bounds(),
        suite=None,  # never reached: nothing is classified
        args=args,
    )
    assert pair.over_bounds == {"worker start": 1}
    assert pair.findings == []
    assert version == ""


def test_classification_past_the_pair_end_is_refused_and_shown_as_new() -> None:
    run_all = _run_all()
    reference = InProcessAdapter(ReferenceImplementation())
    late = run_all._Until(reference, time.monotonic() - 1)
    with pytest.raises(run_all._PairOutOfTime):
        late.run("idset.decode", "1", edition=None)
    found = Disagreement(
        "idset.decode", "1-3", Reply("error", "invalid"), Reply("output", [1, 2, 3]), "x", ()
    )
    (finding,) = run_all._unclassified([found], "flux-core", "2026-08-13")
    assert finding.kind == "new"
    assert "not classified" in finding.covered_by
    assert (finding.actual, finding.expected) == ("error:invalid", "output")
