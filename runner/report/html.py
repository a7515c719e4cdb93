"""A self-contained HTML report of one run: summary table and every case that did not pass.

One file, no scripts fetched from anywhere, no server: it opens from disk.
"""

from __future__ import annotations

import html

from flux_conformance.runner.bounds import SHOWN_NAME, shown
from flux_conformance.runner.engine import Outcome, Summary
from flux_conformance.runner.report import FileReporter, compact_json, replay_command
from flux_conformance.runner.verdicts import verdict_line

__all__ = ["HtmlReporter"]


def _count_cell(outcome: Outcome, count: int, tag: str = "td") -> str:
    """A count, coloured by its outcome only when non-zero (zero failures is good news)."""
    css = f" class='{outcome.value}'" if count else " class='zero'"
    return f"<{tag}{css}>{count}</{tag}>"


_CSS = """
body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .6em;text-align:right}
td:first-child,th:first-child{text-align:left}
.failed,.xpassed{color:#b00}.errored{color:#808}.passed{color:#070}.skipped,.xfailed{color:#a60}.unchecked{color:#06a}
.zero{color:#888}
pre{background:#f6f6f6;padding:.5em;white-space:pre-wrap;word-break:break-all}
details{margin:.4em 0}summary{cursor:pointer}
"""


class HtmlReporter(FileReporter):
    """Writes one HTML page when the run finishes."""

    def render(self, summary: Summary, *, interrupted: bool) -> str:
        """The page."""
        h = self.header

        def e(text: str, limit: int | None = 20_000) -> str:
            return html.escape(shown(text, limit))

        outcome = verdict_line(summary, interrupted=interrupted)
        head = "".join(f"<th>{o.value}</th>" for o in Outcome)
        rows = "".join(
            f"<tr><td>{e(op)}</td>" + "".join(_count_cell(o, c[o.value]) for o in Outcome) + "</tr>"
            for op, c in sorted(summary.by_operation.items())
        )
        total = "".join(_count_cell(o, summary.total[o.value], "th") for o in Outcome)
        details = []
        for r in self._results:
            actual = compact_json(r.reply.to_json(), 5000) if r.reply else "-"
            details.append(
                f"<details><summary class='{r.outcome.value}'>{r.outcome.value}: "
                f"<code>{e(r.case.id)}</code></summary>"
                f"<p>{e(r.case.description)}<br>"
                f"<small>{e(r.case.location)} · level {r.case.level}</small></p>"
                f"<pre>input:    {e(compact_json(r.case.input, 5000))}\n"
                f"expected: {e(compact_json(r.case.expected_json(), 5000))}\n"
                f"actual:   {e(actual)}\nreason:   {e(r.reason)}"
                + (f"\ndiff:\n{e(r.diff)}" if r.diff else "")
                + f"\nreplay:   {e(replay_command(h, r))}</pre></details>"
            )
        scope = summary.scope()
        return (
            "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>flux-conformance: {e(h.implementation, SHOWN_NAME)}</title>"
            f"<style>{_CSS}</style></head><body>"
            f"<h1>Conformance report: {e(h.implementation, SHOWN_NAME)} "
            f"{e(h.version, SHOWN_NAME)}</h1>"
            f"<p>{e(h.describe())}: <strong>{e(outcome)}</strong>.</p>"
            + "".join(
                f"<p>{label}: {e(', '.join(ops))}</p>"
                for label, ops in (
                    ("Operations run", scope.run_operations),
                    ("Unsupported", scope.unsupported_operations),
                )
                if ops
            )
            + f"<table><tr><th>operation</th>{head}</tr>{rows}"
            + f"<tr><th>total</th>{total}</tr></table>"
            + ("<h2>Cases that did not pass</h2>" + "".join(details) if details else "")
            + "</body></html>\n"
        )
