"""Reporters: each receives the run's header, every result as it comes, and the summary.

A reporter must never lose a result: the engine calls :meth:`Reporter.case` for each one,
and :meth:`Reporter.finish` always runs, even when the run is interrupted, so a report is
complete up to the last case that ran.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from flux_conformance.runner.atomic import write_atomic
from flux_conformance.runner.bounds import needs_escape, shown
from flux_conformance.runner.compact import compact_json
from flux_conformance.runner.engine import CaseResult, Outcome, Summary
from flux_conformance.runner.verdicts import judged, verdict_line

__all__ = [
    "FileReporter",
    "Header",
    "Reporter",
    "compact_json",
    "replay_command",
    "shell_command",
    "shell_word",
    "shown",
    "verdict",
    "verdict_line",
]


@dataclass(frozen=True)
class Header:
    """What was run, against what, with which cases: enough to compare two reports later."""

    implementation: str
    impl_spec: str
    version: str
    suite_version: str
    suite_digest: str
    edition: str
    cases_dir: str
    selected: int
    started: str
    filters: dict[str, Any] = field(default_factory=dict)
    expectations: str = ""
    #: Cases of the suite left out because they belong to the other edition.
    other_edition: int = 0
    #: True when ``cases_dir`` was given with ``--cases`` (the replay command repeats it).
    cases_given: bool = False
    #: The per-case timeout the run was given, when not the default (the replay repeats it).
    timeout: float | None = None
    #: More options of the run that its replay command repeats (``--expectations FILE``,
    #: ``--no-shipped-expectations``), so the case is judged again as it was.
    replay_options: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The header as JSON."""
        return {
            "implementation": {
                "name": self.implementation,
                "version": self.version,
                "spec": self.impl_spec,
            },
            "suite": {
                "name": "flux-conformance",
                "version": self.suite_version,
                "digest": self.suite_digest,
            },
            "edition": self.edition,
            "cases_dir": self.cases_dir,
            "selected": self.selected,
            "other_edition": self.other_edition,
            "started": self.started,
            "filters": self.filters,
            "expectations": self.expectations,
        }

    def describe(self) -> str:
        """One line for human readers: suite, edition, cases, filters, date."""
        filters = "; ".join(f"{k} {', '.join(v)}" for k, v in self.filters.items())
        return (
            f"flux-conformance {self.suite_version} (cases {self.suite_digest[:12]}), "
            f"edition {self.edition}, {self.selected} cases"
            + (f" ({filters})" if filters else "")
            + (f", expectations {self.expectations}" if self.expectations else "")
            + f", started {self.started}"
        )


class Reporter(Protocol):
    """Receives a run as it happens."""

    def start(self, header: Header) -> None:
        """The run begins."""

    def case(self, result: CaseResult) -> None:
        """One case has been judged."""

    def finish(self, summary: Summary, *, interrupted: bool = False) -> None:
        """The run is over (``interrupted``: stopped early by the user)."""


class FileReporter:
    """A reporter that keeps results and writes one file at the end (JUnit, Markdown, HTML).

    ``keep_passed`` says whether passing results are kept too (JUnit lists every case; the
    Markdown and HTML reports explain only the others).  Subclasses implement ``render``; the
    file is replaced whole (:mod:`runner.atomic`), so a run stopped while it is written leaves
    the previous report or the new one, never a torn one.
    """

    keep_passed = False

    def __init__(self, path: Path) -> None:
        self.path = path
        self._header: Header | None = None
        self._results: list[CaseResult] = []

    @property
    def header(self) -> Header:
        """The run's header (set by :meth:`start`)."""
        assert self._header is not None, "start() was not called"
        return self._header

    def start(self, header: Header) -> None:
        """Remember the header."""
        self._header = header

    def case(self, result: CaseResult) -> None:
        """Keep the result if this report shows it."""
        if self.keep_passed or result.outcome is not Outcome.PASSED:
            self._results.append(result)

    def finish(self, summary: Summary, *, interrupted: bool = False) -> None:
        """Write the file (creating its folder), replacing the old one whole."""
        write_atomic(self.path, self.render(summary, interrupted=interrupted))

    def render(self, summary: Summary, *, interrupted: bool) -> str:
        """The report's text."""
        raise NotImplementedError


def verdict(summary: Summary, *, interrupted: bool) -> str:
    """The words a run's verdict opens with (see :mod:`runner.verdicts`)."""
    return str(judged(summary.total, interrupted=interrupted))


def shell_word(arg: str) -> str:
    r"""``arg`` as one shell word that a POSIX shell reads back as exactly ``arg``.

    :func:`shlex.quote` where every character of ``arg`` is safe to show; else bash's
    ``$'...'`` quoting with each unsafe character written as the ``\xHH`` escapes of its UTF-8
    bytes (a byte a path held that is not UTF-8, too): so the word is one line, holds no raw
    control or bidi character (:func:`runner.bounds.shown` finds nothing to change in it), and
    pasted into bash, zsh or ksh gives back ``arg`` byte for byte, whatever the locale.
    """
    if not needs_escape(arg):
        return shlex.quote(arg)
    out = []
    for char in arg:
        if char in "\\'":
            out.append("\\" + char)
        elif needs_escape(char) or not char.isprintable():
            raw = char.encode("utf-8", "surrogateescape")
            out.append("".join(f"\\x{byte:02x}" for byte in raw))
        else:
            out.append(char)
    return "$'" + "".join(out) + "'"


def shell_command(argv: Sequence[str]) -> str:
    """``argv`` as one line that a shell runs as exactly ``argv`` (see :func:`shell_word`)."""
    return " ".join(shell_word(arg) for arg in argv)


def replay_command(header: Header, result: CaseResult) -> str:
    """The one-line command that runs just this case again, safe to paste into a shell."""
    argv = ["flux-conformance", "run", "--impl", header.impl_spec, "--id", result.case.id]
    # The edition the case ran in: its own, or the one the run followed.
    argv += ["--edition", result.case.edition or header.edition]
    if header.timeout is not None:
        argv += ["--timeout", f"{header.timeout:g}"]
    argv += header.replay_options
    if header.cases_given:
        argv += ["--cases", header.cases_dir]
    return shell_command(argv)
