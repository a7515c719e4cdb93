"""The Markdown report: a summary table per operation and every case that did not pass."""

from __future__ import annotations

from flux_conformance.runner.engine import Outcome, Summary
from flux_conformance.runner.report import FileReporter, compact_json, replay_command, verdict_line

__all__ = ["MarkdownReporter", "md_escape"]


def md_escape(text: str) -> str:
    """Make ``text`` safe inside a Markdown table cell or inline code."""
    return text.replace("|", "\\|").replace("\n", " ").replace("`", "'")


def _scope_lines(summary: Summary) -> list[str]:
    """Which operations ran and which the implementation does not support, by name."""
    scope = summary.scope()
    lines = []
    if scope.run_operations:
        lines.append(f"- run: {', '.join(scope.run_operations)}")
    if scope.unsupported_operations:
        lines.append(f"- unsupported: {', '.join(scope.unsupported_operations)}")
    return [*lines, ""] if lines else []


class MarkdownReporter(FileReporter):
    """Writes the Markdown file when the run finishes."""

    def write(self, summary: Summary, *, interrupted: bool) -> None:
        """Write the file."""
        h = self.header
        outcome = verdict_line(summary, interrupted=interrupted)
        lines = [
            f"# Conformance report: {h.implementation} {h.version}".rstrip(),
            "",
            f"{md_escape(h.describe())}: **{outcome}**.",
            "",
            *_scope_lines(summary),
            "| operation | " + " | ".join(o.value for o in Outcome) + " |",
            "| --- | " + " | ".join("---:" for _ in Outcome) + " |",
        ]
        for op, counts in sorted(summary.by_operation.items()):
            lines.append(f"| {op} | " + " | ".join(str(counts[o.value]) for o in Outcome) + " |")
        lines.append(
            "| **total** | " + " | ".join(f"**{summary.total[o.value]}**" for o in Outcome) + " |"
        )
        if self._results:
            lines += ["", "## Cases that did not pass", ""]
        for r in self._results:
            actual = r.reply.to_json() if r.reply else None
            lines += [
                f"### `{r.case.id}`: {r.outcome.value}",
                "",
                f"- where: `{md_escape(r.case.location)}` (level {r.case.level})",
                f"- description: {md_escape(r.case.description)}",
                f"- input: `{md_escape(compact_json(r.case.input, 500))}`",
                f"- expected: `{md_escape(compact_json(r.case.expected_json(), 500))}`",
                f"- actual: `{md_escape(compact_json(actual, 500))}`",
                f"- reason: {md_escape(r.reason)}",
                f"- replay: `{md_escape(replay_command(h, r))}`",
                "",
            ]
        self.path.write_text("\n".join(lines) + "\n", encoding="utf-8")
