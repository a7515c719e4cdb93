"""Where the bundled cases are: a source checkout's ``cases/``, else the installed copy."""

from __future__ import annotations

from pathlib import Path

from flux_conformance import runner

__all__ = ["default_cases_dir"]


def default_cases_dir() -> Path:
    """The suite's case directory: a source checkout's ``cases/``, else the installed copy."""
    package = Path(runner.__file__).resolve().parent
    checkout = package.parent / "cases"
    if (checkout / "requirements").is_dir():
        return checkout
    return package / "_cases"
