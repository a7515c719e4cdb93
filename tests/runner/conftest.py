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
