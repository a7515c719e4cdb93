"""Helpers shared by the tests (on the path through pytest's ``pythonpath`` setting)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent
MINI = TESTS / "data" / "mini-suite"
FAKES = TESTS / "fakes"
ROOT = TESTS.parent


def fake_command(mode: str, arg: str | None = None) -> str:
    """The command line that starts the fake implementation in ``mode``."""
    argv = [sys.executable, str(FAKES / "fake_impl.py"), mode]
    if arg is not None:
        argv.append(arg)
    return shlex.join(argv)
