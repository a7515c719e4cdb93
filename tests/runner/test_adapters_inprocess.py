"""The in-process transport: loading ``python:module:object``, and what a raising implementation leaves."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import fake_module

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.adapters.inprocess import (
    InProcessAdapter,
    as_implementation,
    load_python_object,
)

_HERE_MODULES = ("impl_in_the_current_directory", "other_impl_in_the_current_directory")
_ANSWERING = 'def run(operation, input, **options):\n    return {"output": "from here"}\n'


@pytest.fixture
def in_a_fresh_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[str, list[str]]]:
    """A current directory holding two implementation modules, and a search path without it."""
    for name in _HERE_MODULES:
        (tmp_path / f"{name}.py").write_text(_ANSWERING, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    here = str(tmp_path)
    path = [p for p in sys.path if p not in ("", here)]
    monkeypatch.setattr(sys, "path", path)
    importlib.invalidate_caches()
    try:
        yield here, path
    finally:
        for name in _HERE_MODULES:
            sys.modules.pop(name, None)


def test_a_module_in_the_current_directory_is_found_as_python_m_would(
    in_a_fresh_directory: tuple[str, list[str]],
) -> None:
    # The installed command does not search the current directory; the loader adds it, last.
    here, path = in_a_fresh_directory
    impl = as_implementation(load_python_object(f"{_HERE_MODULES[0]}:run"))
    assert impl.run("idset.decode", "1") == {"output": "from here"}
    assert path[-1] == here


def test_the_current_directory_is_added_once_for_any_number_of_implementations(
    in_a_fresh_directory: tuple[str, list[str]],
) -> None:
    # compare --impl python:a:run --impl python:b:run: one entry, not one per implementation.
    here, path = in_a_fresh_directory
    before = len(path)
    for name in _HERE_MODULES:
        load_python_object(f"{name}:run")
    assert path.count(here) == 1
    assert len(path) == before + 1


def test_a_current_directory_python_already_searches_is_not_added(
    in_a_fresh_directory: tuple[str, list[str]],
) -> None:
    _, path = in_a_fresh_directory
    path.insert(0, "")  # what `python -m` and `python -c` put first
    before = list(path)
    load_python_object(f"{_HERE_MODULES[0]}:run")
    assert path == before


def test_a_missing_object_names_the_modules_public_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fake_module(monkeypatch, "impl_with_two_objects", Alpha=object(), beta=1, _private=2)
    with pytest.raises(AdapterError) as raised:
        load_python_object("impl_with_two_objects:Gamma")
    message = str(raised.value)
    assert "'Gamma'" in message
    assert message.endswith("it has: Alpha, beta")


def test_a_missing_attribute_of_an_object_is_an_error_not_the_object_above_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The module has a run function of its own: taking the module instead would run it.
    def run(operation, input, **options):
        return {"output": "the module's"}

    fake_module(monkeypatch, "impl_with_a_run", run=run, Holder=type("Holder", (), {}))
    with pytest.raises(AdapterError, match=r"has no 'Holder\.impl'"):
        load_python_object("impl_with_a_run:Holder.impl")


def test_a_class_that_cannot_be_instantiated_is_an_error_at_load() -> None:
    class NeedsArguments:
        def __init__(self, config):
            self.config = config

        def run(self, operation, input, **options):
            return {"output": self.config}

    with pytest.raises(AdapterError, match="could not instantiate NeedsArguments"):
        as_implementation(NeedsArguments)


@pytest.mark.parametrize("obj", [42, "run", None])
def test_an_object_with_no_run_that_cannot_be_called_is_an_error_at_load(obj: object) -> None:
    with pytest.raises(AdapterError, match="has no run"):
        InProcessAdapter(obj)


def _seventh() -> None:
    raise RuntimeError("deep down")


def _sixth() -> None:
    _seventh()


def _fifth() -> None:
    _sixth()


def _fourth() -> None:
    _fifth()


def _third() -> None:
    _fourth()


def _second() -> None:
    _third()


def _first() -> None:
    _second()


class _RaisesSevenCallsDeep:
    def run(self, operation, input, **options):
        _first()


def test_a_raising_implementation_leaves_its_five_innermost_frames_and_the_exception() -> None:
    reply = InProcessAdapter(_RaisesSevenCallsDeep()).run("idset.decode", "1", edition=None)
    assert reply.kind == "errored"
    assert not reply.adapter_fault
    assert reply.message == "raised RuntimeError: deep down"
    frames = [
        line.rsplit(" in ", 1)[1]
        for line in reply.stderr.splitlines()
        if line.startswith("  File ")
    ]
    assert frames == ["_third", "_fourth", "_fifth", "_sixth", "_seventh"]
    assert reply.stderr.endswith("RuntimeError: deep down\n")
