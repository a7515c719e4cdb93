"""Comparing implementations: every case against every implementation, as one matrix.

Rows are cases grouped by spec and operation, columns are implementations, each cell one
outcome (pass, unchecked, fail, errored, unsupported, skipped, xfail, xpass), with totals per
operation; ``unchecked`` is a refusal whose category the implementation did not say.
:mod:`runner.report.matrix` renders it as Markdown and as one self-contained HTML page.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.bounds import SHOWN_NAME, shown
from flux_conformance.runner.cases import Case, Suite
from flux_conformance.runner.engine import CaseResult, Outcome, run_cases
from flux_conformance.runner.report import compact_json

__all__ = ["CELLS", "DEPARTS", "Column", "Matrix", "cell_of", "run_matrix"]

#: Cell names, in the order totals are shown.
CELLS = ("pass", "fail", "errored", "unsupported", "skipped", "xfail", "xpass", "unchecked")
#: Cells where an implementation departs from what the case expects.
DEPARTS = frozenset({"fail", "errored", "xfail", "xpass"})


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


def run_matrix(
    suite: Suite,
    cases: Sequence[Case],
    impls: Iterable[str],
    *,
    make_adapter: Callable[[str], Any],
    expectations: Mapping[str, Path],
    progress: Callable[[str], None] | None = None,
    about: str = "",
    workers: int = 1,
    edition: str | None = None,
    started: Mapping[str, Any] | None = None,
) -> Matrix:
    """Run every case against every implementation.

    With ``workers`` above 1 the implementations run side by side in that many processes
    (:mod:`runner.parallel`), each column still in case order.  ``progress`` receives a line
    as each implementation starts and finishes.  ``about`` says what was compared (see
    :meth:`runner.report.Header.describe`); ``edition`` is the edition of the specs the run
    follows (see :func:`runner.engine.run_cases`).  ``started`` holds adapters already started
    (and checked) for some of ``impls``: a serial run goes on with them instead of making new
    ones; every adapter is closed before this returns.
    """
    from flux_conformance.runner.expectations import Expectations
    from flux_conformance.runner.oracle import reference_oracle
    from flux_conformance.runner.parallel import Job

    say = progress or (lambda line: None)
    specs = list(impls)
    adapters, notes, jobs = [], [], []
    for spec in specs:
        adapter = (started or {}).get(spec)
        note = ""
        if adapter is None:
            adapter = make_adapter(spec)
            try:
                adapter.start()
            except AdapterError as exc:
                note = f"did not start: {exc}"
        decide = skip = None
        path = expectations.get(spec)
        if path is not None:
            exp = Expectations.load(path)
            if edition is not None:
                exp = exp.in_edition(edition, suite.editions.names)
            decide, skip = exp.decide, exp.skip_reason
            note = (note + "; " if note else "") + f"expectations {path.name}"
        adapters.append(adapter)
        notes.append(note)
        jobs.append(Job(functools.partial(make_adapter, spec), skip, decide, edition))
    columns: list[tuple[CaseResult, ...]] = []
    try:
        if workers > 1:
            for adapter in adapters:
                adapter.close()  # each worker starts its own
            say(f"running {len(cases)} cases against {', '.join(specs)} ({workers} processes)")
            columns = _side_by_side(
                cases,
                jobs=jobs,
                specs=specs,
                suite=suite,
                oracle=reference_oracle,
                workers=workers,
                say=say,
            )
        else:
            for spec, adapter, job in zip(specs, adapters, jobs, strict=True):
                say(f"running {len(cases)} cases against {spec}")
                began = time.perf_counter()
                results = tuple(
                    run_cases(
                        cases,
                        adapter,
                        suite.operations,
                        oracle=reference_oracle,
                        skip=job.skip,
                        decide=job.decide,
                        edition=edition,
                    )
                )
                adapter.close()
                job.note_gave_up(adapter)
                say(_finished(spec, results, time.perf_counter() - began))
                columns.append(results)
    finally:
        for adapter in adapters:
            adapter.close()
    for index, job in enumerate(jobs):
        for reason in job.gave_up:
            say(f"warning: {shown(reason)}")
            notes[index] = (notes[index] + "; " if notes[index] else "") + reason
    spec_of = {name: op.spec for name, op in suite.operations.items()}
    rules = {case.id: suite.rule(case) for case in cases}
    return Matrix(
        tuple(cases),
        tuple(
            Column(spec, adapter.name, adapter.version, results, note)
            for spec, adapter, results, note in zip(specs, adapters, columns, notes, strict=True)
        ),
        spec_of,
        rules,
        about,
    )


def _side_by_side(
    cases: Sequence[Case],
    *,
    jobs: Sequence[Any],
    specs: Sequence[str],
    suite: Suite,
    oracle: Any,
    workers: int,
    say: Callable[[str], None],
) -> list[tuple[CaseResult, ...]]:
    from flux_conformance.runner.parallel import run_jobs

    began = time.perf_counter()
    chunks: list[dict[int, list[CaseResult]]] = [{} for _ in jobs]
    done = [0] * len(jobs)
    columns: list[tuple[CaseResult, ...]] = [() for _ in jobs]
    for j, start, results in run_jobs(
        cases, jobs, suite.operations, oracle=oracle, workers=workers
    ):
        chunks[j][start] = results
        done[j] += len(results)
        if done[j] == len(cases):
            columns[j] = tuple(r for _, part in sorted(chunks[j].items()) for r in part)
            say(_finished(specs[j], columns[j], time.perf_counter() - began))
    return columns


def _finished(spec: str, results: Sequence[CaseResult], seconds: float) -> str:
    counts = Counter(cell_of(r) for r in results)
    shown = ", ".join(f"{counts[c]} {c}" for c in CELLS if counts[c])
    return f"  {spec}: {shown} ({seconds:.1f} s)"
