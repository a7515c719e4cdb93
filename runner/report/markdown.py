"""The Markdown report: a summary table per operation and every case that did not pass."""

from __future__ import annotations

import re
from collections import Counter

from flux_conformance.runner.bounds import SHOWN_NAME, shown
from flux_conformance.runner.engine import CaseResult, Outcome, Summary
from flux_conformance.runner.report import (
    FileReporter,
    Header,
    compact_json,
    replay_command,
    verdict_line,
)

__all__ = ["MAX_BYTES", "MarkdownReporter", "md_code", "md_escape"]

#: The largest Markdown report, in bytes of UTF-8: a GitHub job summary takes 1 MiB
#: (1,048,576 bytes) a step, and the action adds a line or two.  Cases past it are counted,
#: not shown; the other reports hold them.
MAX_BYTES = 1_000_000
#: Room kept for the line that says how many cases are not shown.
_ROOM = 1_000

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


def md_code(text: str, limit: int | None = None, *, table: bool = True) -> str:
    r"""``text`` as an inline code span on one line, which Markdown shows as written.

    The span is opened and closed by one more backtick than the longest run of backticks in
    the text (and padded with a space where the text starts or ends with one), so a backtick
    in the text is shown as it is, never changed.  In a table cell (``table``) a pipe is
    written ``\|``, which GitHub's tables read back as a pipe even inside a code span;
    elsewhere nothing in the span is changed: a replay command is shown exactly as it runs.
    """
    one_line = " ".join(shown(text, limit).splitlines())
    if table:
        one_line = one_line.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", one_line)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one_line[:1] in ("`", " ") or one_line[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{one_line}{pad}{fence}"


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
            f"{md_escape(h.describe(), 5000)}: **{outcome}**.",
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
        size = len(("\n".join(lines) + "\n").encode("utf-8"))
        left: Counter[str] = Counter()
        for r in self._results:
            block = _case_block(h, r)
            grown = size + len(("\n".join(block) + "\n").encode("utf-8"))
            if left or grown > MAX_BYTES - _ROOM:
                left[r.outcome.value] += 1
                continue
            lines += block
            size = grown
        if left:
            tally = ", ".join(f"{n:,} {outcome}" for outcome, n in left.items())
            lines += [
                f"*{left.total():,} more cases that did not pass are not shown here ({tally}): "
                f"this report keeps under {MAX_BYTES:,} bytes, what a GitHub job summary "
                "takes. The JSON Lines, JUnit and HTML reports hold every case.*",
                "",
            ]
        return "\n".join(lines) + "\n"


def _case_block(h: Header, r: CaseResult) -> list[str]:
    """The lines that explain one case that did not pass (each bounded)."""
    actual = r.reply.to_json() if r.reply else None
    return [
        f"### {md_code(r.case.id, table=False)}: {r.outcome.value}",
        "",
        f"- where: {md_code(r.case.location, 500, table=False)} (level {r.case.level})",
        f"- description: {md_escape(r.case.description, 2000)}",
        f"- input: {md_code(compact_json(r.case.input, 500), table=False)}",
        f"- expected: {md_code(compact_json(r.case.expected_json(), 500), table=False)}",
        f"- actual: {md_code(compact_json(actual, 500), table=False)}",
        f"- reason: {md_escape(r.reason, 2000)}",
        f"- replay: {md_code(replay_command(h, r), table=False)}",
        "",
    ]
