"""An implementation's releases side by side: the data ``history.py`` scripts write, read back.

A history is one JSON document (``docs/history.json`` for flux-core): the runs of one
implementation's column, one per release and per way of installing it (a *series*: the
package-index wheel alone, a source build), each with its counts per operation, and the cases
whose outcome or answer changed from one release to the next in a series.  This module checks
such a document, gathers one from JSON Lines reports (``run --json``), and renders it as
Markdown; the site shows it on the implementation's page and on the pages of the cases that
changed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from flux_conformance.runner.bounds import shown
from flux_conformance.runner.errors import ConformanceError
from flux_conformance.runner.report import compact_json
from flux_conformance.runner.report.markdown import md_code, md_escape
from flux_conformance.runner.verdicts import counts_text, judged

__all__ = [
    "FORMAT",
    "History",
    "HistoryError",
    "Run",
    "answered",
    "cell_of_line",
    "gather",
    "history_markdown",
    "load_history",
]

#: The ``format`` a history document declares.
FORMAT = "flux-conformance history 1"
#: Cell names in the order counts are shown (as the comparison matrix shows them).
_ORDER = ("pass", "xfail", "unsupported", "fail", "errored", "xpass", "unchecked", "skipped")


class HistoryError(ConformanceError):
    """A history document that does not load (a usage error: exit status 2)."""

    exit_status = 2


@dataclass(frozen=True)
class Run:
    """One release's run in one series: its counts per operation and what it answered."""

    release: str
    version: str
    verdict: str
    totals: Mapping[str, Mapping[str, int]]
    #: Per case id: (cell, the answer in brief); only in memory, while gathering.
    cases: Mapping[str, tuple[str, str]]
    #: Why it gave no results (it could not be run), or "".
    problem: str = ""


@dataclass(frozen=True)
class History:
    """A loaded history document (see the module's docstring)."""

    data: Mapping[str, Any]

    @property
    def implementation(self) -> str:
        """The ``--impl`` name whose column the history holds."""
        return str(self.data["implementation"])

    def series(self) -> list[Mapping[str, Any]]:
        """The series, each with ``kind``, ``title``, ``how`` and ``runs``."""
        return list(self.data["series"])

    def changes_of(self, case_id: str) -> list[Mapping[str, Any]]:
        """The changes recorded for one case (one per series it changed in)."""
        return [c for c in self.data["changes"] if c["case"] == case_id]


def cell_of_line(line: Mapping[str, Any]) -> str:
    """The matrix cell of one ``case`` line of a JSON Lines report (as ``compare`` names it)."""
    outcome = line.get("outcome")
    if outcome == "skipped":
        actual = line.get("actual")
        unsupported = isinstance(actual, dict) and "unsupported" in actual
        return "unsupported" if unsupported else "skipped"
    return {
        "passed": "pass",
        "failed": "fail",
        "errored": "errored",
        "xfailed": "xfail",
        "xpassed": "xpass",
        "unchecked": "unchecked",
    }.get(str(outcome), "errored")


def _brief(line: Mapping[str, Any]) -> str:
    """The answer of a case line, as compared between releases (messages left out)."""
    if line.get("outcome") == "passed":
        return "(accepted answer)"
    actual = line.get("actual")
    if not isinstance(actual, dict):
        return "(no answer)"
    if "error" in actual and isinstance(actual["error"], dict):
        return f"error {shown(str(actual['error'].get('category', '?')), 100)}"
    if "output" in actual:
        return "output " + compact_json(_clock_free(actual["output"]), 300)
    return next(iter(actual), "(no answer)")


def _clock_free(output: Any) -> Any:
    """An allocation with its stamps told relative to the clock that wrote them.

    A scheduler stamps ``starttime`` with its clock when the case gives no ``now``, so two
    runs of the same release differ there; only the stamps' relation to each other (the
    duration between them) says anything about the release.
    """
    execution = output.get("execution") if isinstance(output, dict) else None
    if not isinstance(execution, dict):
        return output
    start = execution.get("starttime")
    if not isinstance(start, int | float) or isinstance(start, bool) or not start:
        return output
    stamped = dict(execution, starttime="clock")
    end = execution.get("expiration")
    if isinstance(end, int | float) and not isinstance(end, bool) and end:
        stamped["expiration"] = f"clock + {end - start:g}"
    return dict(output, execution=stamped)


def read_report(path: Path, release: str) -> Run:
    """One run, from its JSON Lines report."""
    version, finished = release, False
    outcomes: Counter[str] = Counter()
    totals: dict[str, Counter[str]] = {}
    cases: dict[str, tuple[str, str]] = {}
    with path.open(encoding="utf-8") as stream:
        for text in stream:
            line = json.loads(text)
            if "header" in line:
                version = str(line["header"]["implementation"]["version"])
            elif "case" in line:
                case = line["case"]
                cell = cell_of_line(case)
                outcomes[str(case.get("outcome"))] += 1
                totals.setdefault(case["operation"], Counter())[cell] += 1
                cases[case["id"]] = (cell, _brief(case))
            elif "footer" in line:
                finished = True
    if not finished:
        return Run(release, version, "", {}, {}, problem="the run did not finish")
    # The words of this suite's verdicts, whatever version of the suite wrote the report.
    verdict = f"{judged(outcomes)}: {counts_text(outcomes)}"
    return Run(release, version, verdict, {op: dict(c) for op, c in totals.items()}, cases)


def gather(
    *,
    implementation: str,
    about: Mapping[str, Any],
    series: Sequence[tuple[Mapping[str, str], Sequence[Run]]],
) -> dict[str, Any]:
    """The history document for ``series``: (kind/title/how, runs in release order) each.

    ``about`` carries the suite's version and digest, the edition, the command and the date.
    A case *changed* at a release when its cell, or its answer where it did not pass, differs
    from the previous release's of the same series.
    """
    doc: dict[str, Any] = {"format": FORMAT, "implementation": implementation, **about}
    doc["series"] = []
    doc["changes"] = []
    for head, runs in series:
        doc["series"].append(
            {
                **head,
                "runs": [
                    {
                        "release": r.release,
                        "version": r.version,
                        "verdict": r.verdict,
                        "problem": r.problem,
                        "totals": {
                            op: dict(sorted(c.items())) for op, c in sorted(r.totals.items())
                        },
                    }
                    for r in runs
                ],
            }
        )
        ran = [r for r in runs if not r.problem]
        ids = sorted({i for r in ran for i in r.cases})
        for case_id in ids:
            seen = [(r.release, r.cases.get(case_id, ("not run", ""))) for r in ran]
            changed = [
                release
                for (release, now), (_, before) in zip(seen[1:], seen, strict=False)
                if now != before
            ]
            if changed:
                doc["changes"].append(
                    {
                        "series": head["kind"],
                        "case": case_id,
                        "operation": _operation_of(case_id, ran),
                        "outcomes": {release: cell for release, (cell, _) in seen},
                        "answers": {release: brief for release, (_, brief) in seen},
                        "changed_in": changed,
                    }
                )
    return doc


def _operation_of(case_id: str, runs: Iterable[Run]) -> str:
    for run in runs:
        for op in run.totals:
            if case_id.startswith(op + "."):
                return op
    return ""


def load_history(path: Path) -> History:
    """Read and check a history document; a clear :class:`HistoryError` when it is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise HistoryError(f"{path}: not a history document: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise HistoryError(f'{path}: not a history document (no "format": {FORMAT!r})')
    try:
        for series in data["series"]:
            for run in series["runs"]:
                for counts in run["totals"].values():
                    if not all(isinstance(n, int) for n in counts.values()):
                        raise TypeError("a count is not an integer")
                str(run["release"]) + str(run["verdict"])
            str(series["kind"]) + str(series["title"]) + str(series["how"])
        for change in data["changes"]:
            str(change["case"]) + str(change["series"])
            dict(change["outcomes"])
            dict(change["answers"])
            list(change["changed_in"])
        str(data["implementation"])
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise HistoryError(f"{path}: malformed history document: {exc!r}") from None
    return History(data)


# -- Markdown ----------------------------------------------------------------------------------


def _counts(counts: Mapping[str, int]) -> str:
    """``32 / 10 / 0`` (pass / xfail / unsupported), then the other outcomes that occurred."""
    head = " / ".join(str(counts.get(k, 0)) for k in _ORDER[:3])
    rest = ", ".join(f"{counts[k]} {k}" for k in _ORDER[3:] if counts.get(k))
    return head + (f" ({rest})" if rest else "")


def answered(counts: Mapping[str, int]) -> int:
    """How many cases were answered (neither unsupported nor skipped)."""
    return sum(counts.values()) - counts.get("unsupported", 0) - counts.get("skipped", 0)


def _md(text: str) -> str:
    return md_escape(str(text))


def history_markdown(history: History) -> str:
    """The history as a Markdown page (``docs/history.md``)."""
    d = history.data
    lines = [f"# {_md(history.implementation)}: releases side by side", ""]
    lines += [
        f"Generated by {md_code(str(d.get('command', '')))} on {_md(d.get('generated', ''))}: "
        f"flux-conformance {_md(d.get('suite_version', ''))} (cases "
        f"{_md(d.get('suite_digest', '')[:12])}), edition {_md(d.get('edition', ''))}. "
        "Do not edit; run the command again.",
        "",
        str(d.get("preamble", "")),
        "",
        "Each cell: passed / xfail / unsupported cases, then any other outcome.",
    ]
    for series in history.series():
        runs = series["runs"]
        lines += ["", f"## {_md(series['title'])}", "", str(series["how"]), ""]
        if not runs:
            lines.append("No release of this series was run.")
            continue
        ops = sorted({op for r in runs for op in r["totals"]})
        shown_ops = [op for op in ops if any(answered(r["totals"].get(op, {})) for r in runs)]
        lines.append("| operation | " + " | ".join(_md(r["release"]) for r in runs) + " |")
        lines.append("| --- |" + " --- |" * len(runs))
        for op in shown_ops:
            lines.append(
                f"| {op} | " + " | ".join(_counts(r["totals"].get(op, {})) for r in runs) + " |"
            )
        lines.append(
            "| **verdict** | " + " | ".join(_md(r["problem"] or r["verdict"]) for r in runs) + " |"
        )
        rest = [op for op in ops if op not in shown_ops]
        if rest:
            lines += ["", f"Unsupported in every release of this series: {', '.join(rest)}."]
        changes = [c for c in d["changes"] if c["series"] == series["kind"]]
        lines += ["", f"### Cases that changed ({len(changes)})", ""]
        if not changes:
            lines.append("No case changed its outcome or its answer between these releases.")
            continue
        lines.append("| case | " + " | ".join(_md(r["release"]) for r in runs) + " | changed in |")
        lines.append("| --- |" + " --- |" * (len(runs) + 1))
        for change in changes:
            cells = []
            for r in runs:
                cell = change["outcomes"].get(r["release"], "")
                answer = change["answers"].get(r["release"], "")
                shown_answer = f": {md_code(answer)}" if cell not in ("pass", "") else ""
                cells.append(f"{cell}{shown_answer}")
            lines.append(
                f"| {md_code(change['case'])} | "
                + " | ".join(cells)
                + f" | {', '.join(_md(x) for x in change['changed_in'])} |"
            )
    return "\n".join(lines) + "\n"
