"""Comparing implementations: every case against every implementation, as one matrix.

:func:`run_matrix` runs them and fills the model, which lives in the report layer
(:mod:`runner.report.comparison`: cells, columns, the matrix) so that its renderer
(:mod:`runner.report.matrix`) never imports from here; the names are re-exported for callers.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from flux_conformance.runner.adapters.base import AdapterError
from flux_conformance.runner.bounds import shown
from flux_conformance.runner.cases import Case, Suite
from flux_conformance.runner.engine import CaseResult, run_cases
from flux_conformance.runner.report.comparison import (
    CELLS,
    DEPARTS,
    NOT_PASSED,
    Column,
    Matrix,
    cell_of,
)

__all__ = ["CELLS", "DEPARTS", "NOT_PASSED", "Column", "Matrix", "cell_of", "run_matrix"]


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
