"""The model of a comparison: every case against every implementation, as one matrix.

Rows are cases grouped by spec and operation, columns are implementations, each cell one
outcome (pass, unchecked, fail, errored, unsupported, skipped, xfail, xpass), with totals per
operation; ``unchecked`` is a refusal whose category the implementation did not say.
:mod:`runner.tools.compare` fills it by running the implementations;
:mod:`runner.report.matrix` renders it as Markdown and as one self-contained HTML page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from flux_conformance.runner.bounds import SHOWN_NAME, shown
from flux_conformance.runner.cases import Case
from flux_conformance.runner.engine import CaseResult, Outcome
from flux_conformance.runner.report import compact_json

__all__ = ["CELLS", "DEPARTS", "NOT_PASSED", "Column", "Matrix", "cell_of"]

#: Cell names, in the order totals are shown.
CELLS = ("pass", "fail", "errored", "unsupported", "skipped", "xfail", "xpass", "unchecked")
#: Cells where an implementation departs from what the case expects.
DEPARTS = frozenset({"fail", "errored", "xfail", "xpass"})
#: Cells of a case answered but not passed: the departures and the refusals left unchecked
#: (a matrix shows a row for each case with one, as its totals count them).
NOT_PASSED = DEPARTS | {"unchecked"}


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
        Outcome.UNCHECKED: "unchecked",
    }[result.outcome]


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
        """Column heading: name and version (cut, and safe to show: see ``bounds.shown``)."""
        return shown(f"{self.name} {self.version}".strip(), SHOWN_NAME)


@dataclass(frozen=True)
class Matrix:
    """The comparison of several implementations over the same cases."""

    cases: tuple[Case, ...]
    columns: tuple[Column, ...]
    spec_of: Mapping[str, str]
    #: Per case id, the rule it tests (its first requirement, paraphrased).
    rules: Mapping[str, str] = field(default_factory=dict)
    #: What was compared: suite version and digest, edition, filters, date (one line).
    about: str = ""

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


def _cell_json(result: CaseResult) -> dict[str, str]:
    reply = result.reply
    return {
        "cell": cell_of(result),
        "actual": compact_json(reply.to_json(), 20000) if reply else "",
        "reason": result.reason,
        "diff": result.diff,
        "stderr": reply.stderr if reply else "",
    }
