"""Hunting: generated inputs on which a surviving mutant answers differently from the
original reference (hypothesis strategies of runner.tools, compared by runner.tools.diff)."""

from __future__ import annotations

import json
import os
import signal
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from .forked import compiled_modules, install, quiet_child, run_forked
from .kill import MutationRun
from .operators import Mutant, apply_mutant
from .suite import Baseline, OriginalReference, SuiteHarness

__all__ = ["Finding", "HuntResult", "hunt_mutants", "hunt_operations", "render_hunt"]


@dataclass(frozen=True)
class Finding:
    """An input of ``operation`` on which a mutant and the original reference disagree."""

    mutant: Mutant
    operation: str
    input: Any
    mutant_reply: dict[str, Any]
    reference_reply: dict[str, Any]
    reason: str


@dataclass(frozen=True)
class HuntResult:
    """What the hunt for one mutant found (no finding: none within its budget)."""

    mutant: Mutant
    operations: tuple[str, ...]
    finding: Finding | None = None
    evaluated: int = 0
    note: str = ""


class _Hang(Exception):
    """Raised by the per-input alarm: the mutant took too long on one input."""


class _Timed:
    """An implementation whose every answer must come within ``limit`` seconds (SIGALRM)."""

    def __init__(self, impl: Any, limit: float) -> None:
        self._impl = impl
        self._limit = limit
        self.name = getattr(impl, "name", "mutant")
        self.operations = getattr(impl, "operations", None)

    def run(self, operation: str, input: Any, /, **options: Any) -> Any:
        def alarm(signum: int, frame: Any) -> None:
            raise _Hang(f"no answer within {self._limit} s")

        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, self._limit)
        try:
            return self._impl.run(operation, input, **options)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def hunt_operations(mutant: Mutant, harness: SuiteHarness, baseline: Baseline) -> tuple[str, ...]:
    """The operations with an input strategy worth hunting ``mutant`` with.

    Those of the passing cases that execute the mutant's lines; when none does, those of the
    cases that reach its module (or, for import-time code, a module using it).
    """
    from flux_conformance.runner.tools.strategies import STRATEGIES

    passing = [i for i, ok in enumerate(baseline.passing) if ok]
    wanted = set(mutant.lines)
    chosen = (
        [i for i in passing if wanted & baseline.lines[i].get(mutant.module, frozenset())]
        if mutant.runtime
        else []
    )
    if not chosen:
        users = baseline.users.get(mutant.module, frozenset({mutant.module}))
        chosen = [i for i in passing if users & baseline.lines[i].keys()]
    found = dict.fromkeys(harness.cases[i].operation for i in chosen)
    return tuple(op for op in found if op in STRATEGIES)


def _hunt_child(
    run: MutationRun,
    mutant: Mutant,
    source: str,
    compiled: Mapping[str, types.CodeType],
    *,
    operations: Sequence[str],
    seconds: float,
    seed: int,
    out: int,
) -> None:
    """Body of a forked hunting child: report the first disagreement found as JSON on ``out``."""
    harness = run.harness
    assert isinstance(harness, SuiteHarness)
    reply: dict[str, Any] = {"evaluated": 0, "note": ""}
    try:
        quiet_child(run.memory)
        from flux_conformance.runner.adapters.inprocess import (
            InProcessAdapter,
            ReferenceImplementation,
        )
        from flux_conformance.runner.tools.diff import differential
        from flux_conformance.runner.tools.strategies import STRATEGIES

        tree = apply_mutant(mutant.module, source, mutant.id)
        code = compile(tree, str(run.target.path(mutant.module)), "exec")
        try:
            install(
                run.target,
                mutant.module,
                code,
                compiled,
                run.baseline.users.get(mutant.module, frozenset()),
            )
        except BaseException as exc:  # pragma: no cover - the matrix kills these first
            reply["note"] = f"import failed: {type(exc).__name__}"
        else:
            mutated = InProcessAdapter(_Timed(ReferenceImplementation(), run.hunt_input_seconds))
            original = InProcessAdapter(
                OriginalReference(harness.original_run, harness.error_class)
            )
            each = seconds / max(1, len(operations))
            for operation in operations:
                spec = harness.operations[operation]
                # Only inputs a case may hold: the input schema refuses the rest at `check`.
                valid: Callable[[Any], bool] = partial(_schema_valid, spec)
                strategy: Any = STRATEGIES[operation]().filter(valid)
                found = differential(
                    operation,
                    mutated,
                    original,
                    examples=run.hunt_examples,
                    seconds=each,
                    seed=seed,
                    max_found=1,
                    oracle=harness.oracles[None],
                    strategy=strategy,
                )
                reply["evaluated"] += found.evaluated
                if found.disagreements:
                    d = found.disagreements[0]
                    reply["finding"] = {
                        "operation": operation,
                        "input": d.input,
                        "mutant": d.actual.to_json(),
                        "reference": d.expected.to_json(),
                        "reason": d.reason,
                    }
                    break
    except BaseException as exc:  # a bug of this tool (or the mutant broke hypothesis)
        reply["note"] = f"hunt failed: {exc!r}"[:300]
    finally:
        try:
            payload = json.dumps(reply, default=repr).encode()
            view = memoryview(payload)
            while view:
                view = view[os.write(out, view) :]
        finally:
            os._exit(0)


def _schema_valid(spec: Any, value: Any) -> bool:
    return not spec.input_problems(value)


def hunt_mutants(
    run: MutationRun,
    mutants: Sequence[Mutant],
    *,
    seconds: float,
    seed: int = 0,
    progress: Callable[[HuntResult], None] | None = None,
) -> list[HuntResult]:
    """Hunt each of ``mutants`` for ``seconds`` in a forked child, ``run.jobs`` at a time."""
    harness = run.harness
    assert isinstance(harness, SuiteHarness)
    sources, compiled = compiled_modules(run.target, mutants)
    results: dict[str, HuntResult] = {}
    pending: list[tuple[Mutant, tuple[str, ...]]] = []
    for mutant in mutants:
        operations = hunt_operations(mutant, harness, run.baseline)
        if operations:
            pending.append((mutant, operations))
        else:
            results[mutant.id] = HuntResult(mutant, (), note="no operation with a strategy")

    def finish(result: HuntResult) -> None:
        results[result.mutant.id] = result
        if progress:
            progress(result)

    def child(task: tuple[Mutant, tuple[str, ...]], out: int) -> None:
        mutant, operations = task
        _hunt_child(
            run,
            mutant,
            sources[mutant.module],
            compiled,
            operations=operations,
            seconds=seconds,
            seed=seed,
            out=out,
        )

    run_forked(
        pending,
        jobs=run.jobs,
        child=child,
        # Shrinking stops at the hunt's own deadline; the margin covers one slow input.
        budget=lambda task: seconds + 3 * run.hunt_input_seconds + 10,
        done=lambda task, data: finish(_hunt_verdict(task[0], task[1], data)),
        timed_out=lambda task: finish(
            HuntResult(task[0], task[1], note="hunt over its time budget")
        ),
    )
    return [results[m.id] for m in mutants]


def _hunt_verdict(mutant: Mutant, operations: tuple[str, ...], data: bytes) -> HuntResult:
    try:
        reply = json.loads(data)
    except ValueError:
        return HuntResult(mutant, operations, note="the hunting child crashed")
    finding = reply.get("finding")
    return HuntResult(
        mutant,
        operations,
        Finding(
            mutant,
            finding["operation"],
            finding["input"],
            finding["mutant"],
            finding["reference"],
            finding["reason"],
        )
        if finding
        else None,
        reply.get("evaluated", 0),
        reply.get("note", ""),
    )


def render_hunt(results: Sequence[HuntResult]) -> str:
    """The hunt's findings (each a case to write) and the mutants it found nothing for."""
    found = [r for r in results if r.finding]
    out = [f"Hunt: {len(found)} of {len(results)} surviving mutants answer differently:"]
    for r in found:
        f = r.finding
        assert f is not None
        out.append(f"  [{r.mutant.id}]  {f.operation}")
        out.append(f"      - {r.mutant.source}")
        out.append(f"      + {r.mutant.changed}")
        out.append(f"      input:     {json.dumps(f.input, ensure_ascii=False)}")
        out.append(f"      reference: {json.dumps(f.reference_reply, ensure_ascii=False)[:200]}")
        out.append(f"      mutant:    {json.dumps(f.mutant_reply, ensure_ascii=False)[:200]}")
    rest = [r for r in results if not r.finding]
    if rest:
        out.append(f"Nothing found for {len(rest)} mutants (each needs a case or a reason):")
        for r in rest:
            detail = r.note or f"{r.evaluated} inputs of {', '.join(r.operations)}"
            out.append(f"  [{r.mutant.id}]  ({detail})")
    return "\n".join(out)
