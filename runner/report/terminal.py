"""The terminal report: a progress bar on a TTY, failure details, a summary per operation."""

from __future__ import annotations

from typing import IO

from rich.console import Console
from rich.markup import escape as _markup_escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table

from flux_conformance.runner.bounds import SHOWN_NAME, shown
from flux_conformance.runner.engine import CaseResult, Outcome, Summary
from flux_conformance.runner.report import Header, compact_json, replay_command
from flux_conformance.runner.verdicts import Verdict, judged, verdict_line

__all__ = ["TerminalReporter"]


def escape(text: str, limit: int | None = 20_000) -> str:
    """``text`` for the console: no markup, and no control sequence reaches the terminal."""
    return _markup_escape(shown(text, limit))


_STYLE = {
    Outcome.PASSED: "green",
    Outcome.UNCHECKED: "blue",
    Outcome.FAILED: "red",
    Outcome.ERRORED: "magenta",
    Outcome.SKIPPED: "yellow",
    Outcome.XFAILED: "cyan",
    Outcome.XPASSED: "red",
}


class TerminalReporter:
    """Human-readable output; details for every case that did not pass."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        verbose: bool = False,
        show_skips: bool = False,
        color: bool | None = None,
    ) -> None:
        self.console = Console(
            file=stream,
            highlight=False,
            soft_wrap=True,
            no_color=color is False,
            force_terminal=color or None,
        )
        self.verbose = verbose
        self.show_skips = show_skips
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._header: Header | None = None
        self._bad: list[CaseResult] = []

    def start(self, header: Header) -> None:
        """Print what is being run and start the progress bar on a terminal."""
        self._header = header
        version = f" {header.version}" if header.version else ""
        self.console.print(
            f"flux-conformance {header.suite_version}: {header.selected} cases against "
            f"[bold]{escape(header.implementation, SHOWN_NAME)}{escape(version, SHOWN_NAME)}"
            "[/bold] "
            f"(edition {header.edition})"
        )
        other = (
            f"; {header.other_edition} case(s) of the other edition left out (--edition)"
            if header.other_edition
            else ""
        )
        self.console.print(f"cases: {escape(header.cases_dir)}{other}", style="dim")
        if self.console.is_terminal and not self.verbose:
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=self.console,
                transient=True,
            )
            self._progress.start()
            self._task = self._progress.add_task("running", total=header.selected)

    def case(self, result: CaseResult) -> None:
        """Advance the bar; remember what needs explaining."""
        if result.outcome.is_bad or (self.show_skips and result.outcome is Outcome.SKIPPED):
            self._bad.append(result)
        if self.verbose:
            style = _STYLE[result.outcome]
            self.console.print(
                f"[{style}]{result.outcome.value.upper():8}[/{style}] {escape(result.case.id)}"
            )
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=1, description=escape(result.case.operation))

    def _detail(self, result: CaseResult) -> None:
        assert self._header is not None
        style = _STYLE[result.outcome]
        case = result.case
        self.console.print(
            f"\n[{style} bold]{result.outcome.value.upper()}[/{style} bold] "
            f"[bold]{escape(case.id)}[/bold]  ({escape(case.location)}) {escape(f'[{case.level}]')}"
        )
        self.console.print(f"  description: {escape(case.description)}")
        self.console.print(f"  input:       {escape(compact_json(case.input))}")
        self.console.print(f"  expected:    {escape(compact_json(case.expected_json()))}")
        if result.reply is not None:
            self.console.print(f"  actual:      {escape(compact_json(result.reply.to_json()))}")
        if result.reason:
            self.console.print(f"  reason:      {escape(result.reason)}")
        if result.diff:
            self.console.print("  diff:")
            for line in result.diff.splitlines():
                self.console.print(f"    {escape(line)}")
        if result.reply is not None and result.reply.stderr:
            self.console.print("  stderr (tail):")
            for line in result.reply.stderr.splitlines()[-15:]:
                self.console.print(f"    {escape(line)}")
        self.console.print(f"  replay:      {escape(replay_command(self._header, result))}")

    def _same_error(self, summary: Summary) -> dict[str, list[CaseResult]]:
        """Operations whose every case errored with one message (told once, with the count)."""
        by_op: dict[str, list[CaseResult]] = {}
        for result in self._bad:
            by_op.setdefault(result.case.operation, []).append(result)
        return {
            op: results
            for op, results in by_op.items()
            if len(results) > 1
            and all(r.outcome is Outcome.ERRORED for r in results)
            and len({r.reason for r in results}) == 1
            and len(results) == sum(summary.by_operation.get(op, {}).values())
        }

    def _detail_once(self, op: str, results: list[CaseResult]) -> None:
        assert self._header is not None
        first = results[0]
        self.console.print(
            f"\n[magenta bold]ERRORED[/magenta bold] every case of [bold]{escape(op)}[/bold] "
            f"({len(results)} cases), each with the same reason:"
        )
        self.console.print(f"  reason:      {escape(first.reason)}")
        if first.reply is not None and first.reply.stderr:
            self.console.print("  stderr (tail, first case):")
            for line in first.reply.stderr.splitlines()[-15:]:
                self.console.print(f"    {escape(line)}")
        self.console.print(
            f"  first case:  {escape(first.case.id)} ({escape(first.case.location)})"
        )
        self.console.print(f"  replay:      {escape(replay_command(self._header, first))}")

    def finish(self, summary: Summary, *, interrupted: bool = False) -> None:
        """Stop the bar, explain every bad case, print the per-operation summary."""
        if self._progress is not None:
            self._progress.stop()
        collapsed = self._same_error(summary)
        told: set[str] = set()
        for result in self._bad:
            op = result.case.operation
            if op in collapsed:
                if op not in told:
                    told.add(op)
                    self._detail_once(op, collapsed[op])
                continue
            self._detail(result)
        table = Table(title=None, show_edge=False, pad_edge=False)
        table.add_column("operation")
        columns = [
            o for o in Outcome if summary.total[o.value] or o in (Outcome.PASSED, Outcome.FAILED)
        ]
        for outcome in columns:
            table.add_column(outcome.value, justify="right", style=_STYLE[outcome])
        for op, counts in sorted(summary.by_operation.items()):
            table.add_row(op, *(str(counts[o.value]) for o in columns))
        table.add_row(
            "[bold]total[/bold]", *(f"[bold]{summary.total[o.value]}[/bold]" for o in columns)
        )
        self.console.print()
        self.console.print(table)
        tally = ", ".join(f"{summary.total[o.value]} {o.value}" for o in columns)
        word = judged(summary.total, interrupted=interrupted)
        style = {Verdict.CONFORMS: "green bold", Verdict.MATCHES_BASELINE: "yellow bold"}.get(
            word, "yellow bold" if word.exit_ok else "red bold"
        )
        line = verdict_line(summary, interrupted=interrupted)
        # Any other verdict than these two leads with its counts already.
        tail = f": {tally}" if word in (Verdict.CONFORMS, Verdict.NOTHING_RUN) else ""
        self.console.print(f"[{style}]{escape(line)}[/{style}]{tail}")
