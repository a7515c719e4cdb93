"""``diff`` holds every implementation to its bounds: time, memory and answer size per input."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import strategies as st

from flux_conformance.runner.adapters.base import Reply
from flux_conformance.runner.adapters.inprocess import InProcessAdapter, ReferenceImplementation
from flux_conformance.runner.cli import main
from flux_conformance.runner.operations import load_registry
from flux_conformance.runner.tools.diff import differential
from flux_conformance.runner.tools.diff_bounds import MIB, BoundedAdapter, Bounds, bounded
from flux_conformance.runner.tools.strategies import STRATEGIES

_PLANTED = '''
import time

from flux_conformance.runner.adapters.inprocess import ReferenceImplementation

_REFERENCE = ReferenceImplementation()


class Hangs:
    """The reference, except that it never answers an idset naming 7."""

    def run(self, operation, value, **options):
        if "7" in value:
            time.sleep(3600)
        return _REFERENCE.run(operation, value, **options)


class Grows:
    """The reference, except that an idset naming 7 makes it take all the memory it can."""

    def run(self, operation, value, **options):
        if "7" in value:
            hoard = []
            while True:
                hoard.append(bytearray(64 * 1024 * 1024))
        return _REFERENCE.run(operation, value, **options)


class Floods:
    """The reference, except that an idset naming 7 gets a list of two million ids."""

    def run(self, operation, value, **options):
        if "7" in value:
            return {"output": list(range(2_000_000))}
        return _REFERENCE.run(operation, value, **options)


class NullIsValid:
    """R.validate that calls null a valid R (a planted bug on a null input)."""

    def run(self, operation, value, **options):
        if value is None:
            return {"output": {"warnings": []}}
        return _REFERENCE.run(operation, value, **options)
'''


@pytest.fixture
def planted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (tmp_path / "planted_bounds_impl.py").write_text(_PLANTED)
    monkeypatch.syspath_prepend(str(tmp_path))
    return "python:planted_bounds_impl"


def _run(spec: str, bounds: Bounds, value: str) -> tuple[Reply, BoundedAdapter]:
    adapter = bounded(spec, bounds)
    assert isinstance(adapter, BoundedAdapter)
    adapter.start()
    try:
        return adapter.run("idset.decode", value, edition=None), adapter
    finally:
        adapter.close()


def test_every_operation_has_a_strategy() -> None:
    assert set(STRATEGIES) == set(load_registry())


def test_the_reference_stays_in_process() -> None:
    assert isinstance(bounded("reference", Bounds()), InProcessAdapter)


def test_an_input_over_the_time_bound_is_reported(planted: str) -> None:
    started = time.monotonic()
    reply, adapter = _run(f"{planted}:Hangs", Bounds(timeout=1.0), "7")
    assert time.monotonic() - started < 10
    assert reply.kind == "bound"
    assert "time bound" in reply.message
    assert adapter.over == {"time": 1}


def test_an_input_over_the_memory_bound_is_reported(planted: str) -> None:
    reply, adapter = _run(f"{planted}:Grows", Bounds(timeout=30, memory=512 * MIB), "7")
    assert reply == Reply("bound", None, "over the memory bound")
    assert adapter.over == {"memory": 1}


def test_an_answer_over_the_size_bound_is_reported(planted: str) -> None:
    reply, adapter = _run(f"{planted}:Floods", Bounds(answer_bytes=1 * MIB), "7")
    assert reply.kind == "bound"
    assert reply.value == "output"
    assert "over the bound" in reply.message
    assert adapter.over == {"answer size": 1}


def test_the_search_goes_on_past_a_bound(planted: str) -> None:
    """Every input naming 7 hangs; the search answers the others and stays in its time."""
    impl = bounded(f"{planted}:Hangs", Bounds(timeout=0.5))
    reference = bounded("reference", Bounds())
    impl.start()
    started = time.monotonic()
    try:
        result = differential(
            "idset.decode",
            impl,
            reference,
            seconds=8,
            seed=3,
            examples=60,
            strategy=st.sampled_from(["1", "7", "2-3", "5,7", "9"]),
        )
    finally:
        impl.close()
    assert time.monotonic() - started < 8 + 5
    assert result.disagreements == []
    assert result.over_bounds["impl time"] >= 1
    assert result.evaluated == 5


def test_a_null_input_is_a_finding_like_any_other(planted: str) -> None:
    impl = bounded(f"{planted}:NullIsValid", Bounds())
    reference = InProcessAdapter(ReferenceImplementation())
    impl.start()
    try:
        result = differential("R.validate", impl, reference, seconds=30, seed=1, strategy=st.none())
    finally:
        impl.close()
    assert [d.input for d in result.disagreements] == [None]


def test_cli_reports_bounds_and_peak_memory(
    planted: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["diff", "--impl", f"{planted}:Hangs", "-o", "idset.decode", "--seed", "2"]
    assert main([*argv, "--seconds", "10", "--timeout", "0.5", "--examples", "40"]) in (0, 1)
    err = capsys.readouterr().err
    assert "over the time bound" in err
    assert "peak memory:" in err
