"""Reporters: each receives the run's header, every result as it comes, and the summary.

A reporter must never lose a result: the engine calls :meth:`Reporter.case` for each one,
and :meth:`Reporter.finish` always runs, even when the run is interrupted, so a report is
complete up to the last case that ran.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any, Protocol

from runner.engine import CaseResult, Summary

__all__ = ["Header", "Reporter", "compact_json", "replay_command"]


@dataclass(frozen=True)
class Header:
    """What was run, against what."""

    implementation: str
    impl_spec: str
    version: str
    runner_version: str
    edition: str
    cases_dir: str
    selected: int
    started: str
    filters: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The header as JSON."""
        return {
            "implementation": {
                "name": self.implementation,
                "version": self.version,
                "spec": self.impl_spec,
            },
            "runner": {"name": "flux-conformance", "version": self.runner_version},
            "edition": self.edition,
            "cases_dir": self.cases_dir,
            "selected": self.selected,
            "started": self.started,
            "filters": self.filters,
        }


class Reporter(Protocol):
    """Receives a run as it happens."""

    def start(self, header: Header) -> None:
        """The run begins."""

    def case(self, result: CaseResult) -> None:
        """One case has been judged."""

    def finish(self, summary: Summary, *, interrupted: bool = False) -> None:
        """The run is over (``interrupted``: stopped early by the user)."""


def compact_json(value: Any, limit: int = 2000) -> str:
    """A one-line JSON rendering, cut at ``limit`` characters."""
    try:
        text = json.dumps(value, ensure_ascii=False, sort_keys=False)
    except (TypeError, ValueError):
        try:
            text = repr(value)
        except RecursionError:
            text = "(a value nested too deeply to show)"
    except RecursionError:
        text = "(a value nested too deeply to show)"
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


def replay_command(header: Header, result: CaseResult) -> str:
    """The one-line command that runs just this case again."""
    argv = ["flux-conformance", "run", "--impl", header.impl_spec, "--id", result.case.id]
    if result.case.edition and result.case.edition != "seed":
        argv += ["--edition", result.case.edition]
    if header.cases_dir:
        argv += ["--cases", header.cases_dir]
    return shlex.join(argv)
