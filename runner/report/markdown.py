"""The Markdown report: a summary table per operation and every case that did not pass."""

from __future__ import annotations

import re

from flux_conformance.runner.bounds import SHOWN_NAME, shown
from flux_conformance.runner.engine import Outcome, Summary
from flux_conformance.runner.report import FileReporter, compact_json, replay_command, verdict_line

__all__ = ["MarkdownReporter", "md_code", "md_escape"]

# Any ASCII punctuation character may be backslash-escaped in CommonMark, and an escaped one
# is literal.  These are the ones that start emphasis, code, links, raw HTML (``<img>``,
# ``<details>``), entities, headings or table cells; the rest read the same either way where
# the text never starts a line (an underscore, a plus and a bang stay as they are: they are
# common in names and dates, and emphasis is no injection).
_ACTIVE = re.compile(r"([\\`*{}\[\]<>#|~&])")


def md_escape(text: str, limit: int | None = None) -> str:
    """``text`` as literal Markdown text, on one line: safe in a table cell or a heading.

    Line breaks become spaces, the punctuation Markdown acts on is backslash-escaped (so raw
    HTML and Markdown syntax show as written), and control characters become visible escapes.
    """
    one_line = " ".join(shown(text, limit).splitlines())
    return _ACTIVE.sub(r"\\\1", one_line)


def md_code(text: str, limit: int | None = None) -> str:
    """``text`` as an inline code span: on one line, without backticks, ``|`` escaped.

    Markdown shows a code span literally (HTML included); the pipe is escaped because a
    table cell ends at one even inside a code span.
    """
    one_line = " ".join(shown(text, limit).splitlines())
    return "`" + one_line.replace("`", "'").replace("|", "\\|") + "`"


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

    def render(self, summary: Summary, *, interrupted: bool) -> str:
        """The file's text."""
        h = self.header
        outcome = verdict_line(summary, interrupted=interrupted)
        name = md_escape(f"{h.implementation} {h.version}".strip(), SHOWN_NAME)
        lines = [
            f"# Conformance report: {name}",
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
                f"### {md_code(r.case.id)}: {r.outcome.value}",
                "",
                f"- where: {md_code(r.case.location)} (level {r.case.level})",
                f"- description: {md_escape(r.case.description)}",
                f"- input: {md_code(compact_json(r.case.input, 500))}",
                f"- expected: {md_code(compact_json(r.case.expected_json(), 500))}",
                f"- actual: {md_code(compact_json(actual, 500))}",
                f"- reason: {md_escape(r.reason, 2000)}",
                f"- replay: {md_code(replay_command(h, r))}",
                "",
            ]
        return "\n".join(lines) + "\n"
