"""Comparing implementations: every case against every implementation, as one matrix.

Rows are cases grouped by spec and operation, columns are implementations, each cell one
outcome (pass, fail, errored, unsupported, skipped, xfail, xpass), with totals per operation.
Written as Markdown (by default only the rows where some implementation did not pass) and as
one self-contained HTML page whose filters and cell details work offline.
"""

from __future__ import annotations

import contextlib
import html
import json
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from runner.adapters.base import AdapterError
from runner.cases import Case, Suite
from runner.engine import CaseResult, Outcome, run_cases
from runner.report import compact_json

__all__ = ["CELLS", "Column", "Matrix", "cell_of", "run_matrix", "shipped_expectations"]

#: Cell names, in the order totals are shown.
CELLS = ("pass", "fail", "errored", "unsupported", "skipped", "xfail", "xpass")


def cell_of(result: CaseResult) -> str:
    """The matrix cell for one result."""
    if result.outcome is Outcome.SKIPPED:
        unsupported = result.reply is None or result.reply.kind == "unsupported"
        return "unsupported" if unsupported and "expectations" not in result.reason else "skipped"
    return {
        Outcome.PASSED: "pass",
        Outcome.FAILED: "fail",
        Outcome.ERRORED: "errored",
        Outcome.XFAILED: "xfail",
        Outcome.XPASSED: "xpass",
    }[result.outcome]


def shipped_expectations(impl: str) -> Path | None:
    """The expectations file shipped with a named adapter (``--impl clustershell``), if any."""
    folder = resources.files("runner").joinpath("adapters").joinpath("thirdparty")
    candidate = folder.joinpath("expectations").joinpath(f"{impl}.yaml")
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        if candidate.is_file():
            return Path(str(candidate))
    return None


@dataclass(frozen=True)
class Column:
    """One implementation's results, in case order."""

    spec: str
    name: str
    version: str
    results: tuple[CaseResult, ...]
    note: str = ""

    @property
    def label(self) -> str:
        """Column heading: name and version."""
        return f"{self.name} {self.version}".strip()


@dataclass(frozen=True)
class Matrix:
    """The comparison of several implementations over the same cases."""

    cases: tuple[Case, ...]
    columns: tuple[Column, ...]
    spec_of: Mapping[str, str]

    def totals(self, column: Column) -> dict[str, Counter[str]]:
        """Per operation, the count of each cell name in ``column``."""
        out: dict[str, Counter[str]] = {}
        for result in column.results:
            out.setdefault(result.case.operation, Counter())[cell_of(result)] += 1
        return out

    def groups(self) -> list[tuple[str, str, list[int]]]:
        """(spec, operation, row indexes) in suite order."""
        seen: dict[tuple[str, str], list[int]] = {}
        for index, case in enumerate(self.cases):
            seen.setdefault((self.spec_of[case.operation], case.operation), []).append(index)
        return [(spec, op, rows) for (spec, op), rows in seen.items()]

    # -- Markdown ----------------------------------------------------------------------------

    def to_markdown(self, *, all_rows: bool = False) -> str:
        """The matrix as Markdown: totals, then the rows (all, or those not passing everywhere)."""
        labels = [c.label for c in self.columns]
        lines = ["# Implementation comparison", ""]
        lines += [
            f"- **{c.label}**: `{c.spec}`" + (f" ({c.note})" if c.note else "")
            for c in self.columns
        ]
        lines += ["", "## Totals (passed / cases; then other outcomes)", ""]
        lines.append("| spec | operation | " + " | ".join(labels) + " |")
        lines.append("| --- | --- | " + " | ".join("---" for _ in labels) + " |")
        totals = [self.totals(c) for c in self.columns]
        for spec, op, rows in self.groups():
            cells = []
            for t in totals:
                counts = t.get(op, Counter())
                rest = ", ".join(f"{counts[k]} {k}" for k in CELLS[1:] if counts[k])
                cells.append(f"{counts['pass']}/{len(rows)}" + (f" ({rest})" if rest else ""))
            lines.append(f"| {spec} | {op} | " + " | ".join(cells) + " |")
        for spec, op, rows in self.groups():
            shown = [
                i
                for i in rows
                if all_rows or any(c.results[i].outcome is not Outcome.PASSED for c in self.columns)
            ]
            if not shown:
                continue
            lines += ["", f"## {spec}: {op}", ""]
            lines.append("| case | level | " + " | ".join(labels) + " |")
            lines.append("| --- | --- | " + " | ".join("---" for _ in labels) + " |")
            for i in shown:
                case = self.cases[i]
                cells = [cell_of(c.results[i]) for c in self.columns]
                lines.append(
                    f"| `{case.id}` | {case.level} | "
                    + " | ".join(
                        f"**{x}**" if x in ("fail", "errored", "xpass") else x for x in cells
                    )
                    + " |"
                )
        return "\n".join(lines) + "\n"

    # -- HTML --------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """Everything the HTML page shows, as JSON."""
        return {
            "columns": [{"label": c.label, "spec": c.spec, "note": c.note} for c in self.columns],
            "rows": [
                {
                    "id": case.id,
                    "operation": case.operation,
                    "spec": self.spec_of[case.operation],
                    "level": case.level,
                    "description": case.description,
                    "location": case.location,
                    "input": compact_json(case.input, 20000),
                    "expected": compact_json(case.expected_json(), 20000),
                    "cells": [_cell_json(c.results[i]) for c in self.columns],
                }
                for i, case in enumerate(self.cases)
            ],
        }

    def to_html(self) -> str:
        """One self-contained page: filters by operation, level and outcome; click a cell."""
        data = json.dumps(self.to_json(), ensure_ascii=False).replace("</", "<\\/")
        template = resources.files("runner").joinpath("report").joinpath("matrix.html")
        page = template.read_text(encoding="utf-8")
        title = "flux-conformance: " + ", ".join(c.label for c in self.columns)
        return page.replace("{{TITLE}}", html.escape(title)).replace("{{DATA}}", data)


def _cell_json(result: CaseResult) -> dict[str, str]:
    reply = result.reply
    return {
        "cell": cell_of(result),
        "actual": compact_json(reply.to_json(), 20000) if reply else "",
        "reason": result.reason,
        "diff": result.diff,
        "stderr": reply.stderr if reply else "",
    }


def run_matrix(
    suite: Suite,
    cases: Sequence[Case],
    impls: Iterable[str],
    *,
    make_adapter: Callable[[str], Any],
    expectations: Mapping[str, Path],
    progress: Callable[[str], None] | None = None,
) -> Matrix:
    """Run every case against every implementation (one after another)."""
    from runner.expectations import Expectations

    columns = []
    for spec in impls:
        if progress:
            progress(spec)
        adapter = make_adapter(spec)
        note = ""
        try:
            adapter.start()
        except AdapterError as exc:
            note = f"did not start: {exc}"
        decide = skip = None
        path = expectations.get(spec)
        if path is not None:
            exp = Expectations.load(path)
            decide, skip = exp.decide, exp.skip_reason
            note = (note + "; " if note else "") + f"expectations {path.name}"
        try:
            results = tuple(run_cases(cases, adapter, suite.operations, skip=skip, decide=decide))
        finally:
            adapter.close()
        columns.append(Column(spec, adapter.name, adapter.version, results, note))
    spec_of = {name: op.spec for name, op in suite.operations.items()}
    return Matrix(tuple(cases), tuple(columns), spec_of)
