"""Shared fixtures for the runner's tests: the mini suite and the fake implementations."""

from __future__ import annotations

import pytest
from support import FAKES, MINI

from flux_conformance.runner.cases import Suite, load_suite


@pytest.fixture(scope="session")
def mini_suite() -> Suite:
    return load_suite(MINI)


@pytest.fixture(autouse=True)
def _fakes_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FAKES))


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    # `--version` keeps a cache under $XDG_CACHE_HOME: never the user's own in a test.
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "cache"))
