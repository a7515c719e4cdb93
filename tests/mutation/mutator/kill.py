"""The kill matrix: each mutant in a forked child against the cases that reach its lines."""

from __future__ import annotations

import json
import os
import time
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from .forked import compiled_modules, install, quiet_child, run_forked
from .operators import Mutant, apply_mutant
from .suite import Baseline, Harness, Target

__all__ = ["UNREACHED", "MutationRun", "Result", "run_mutants"]

#: The note of a survivor that no case reaches.
UNREACHED = "no case executes it"


@dataclass(frozen=True)
class Result:
    """What became of one mutant."""

    mutant: Mutant
    #: killed, survived, timeout (counts as killed), unreachable (no operation reaches it: see
    #: :func:`classify_unreachable`), or not-run (out of time).
    status: str
    #: Indexes of the cases that failed against the mutant.
    killers: tuple[int, ...] = ()
    #: How many cases ran against it, and why it survived or was killed when no case says.
    ran: int = 0
    note: str = ""

    @property
    def killed(self) -> bool:
        """Whether some case (or the time budget) caught the mutant."""
        return self.status in ("killed", "timeout")


def _child(
    run: MutationRun,
    mutant: Mutant,
    source: str,
    compiled: Mapping[str, types.CodeType],
    *,
    cases: Sequence[int],
    out: int,
) -> None:
    """Body of the forked child: report failing cases as JSON on ``out``, then exit."""
    target, harness = run.target, run.harness
    failed: list[int] = []
    note = ""
    try:
        quiet_child(run.memory)
        try:
            tree = apply_mutant(mutant.module, source, mutant.id)
            code = compile(tree, str(target.path(mutant.module)), "exec")
        except Exception as exc:  # a bug of this tool, not a verdict on the suite
            broken = {"failed": [], "note": f"tool error: {exc!r}", "broken": True}
            os.write(out, json.dumps(broken).encode())
            return
        try:
            install(
                target,
                mutant.module,
                code,
                compiled,
                run.baseline.users.get(mutant.module, frozenset()),
            )
        except BaseException as exc:  # the mutant broke the import: nothing works
            note = f"import failed: {type(exc).__name__}"
            failed = list(cases)
        else:
            for index in cases:
                try:
                    ok = harness.passes(index, harness.execute(index))
                except BaseException:  # MemoryError and the like: the case did not pass
                    ok = False
                if not ok:
                    failed.append(index)
                    if run.first_kill:
                        break
        payload = json.dumps({"failed": failed, "note": note}).encode()
        view = memoryview(payload)
        while view:
            view = view[os.write(out, view) :]
    finally:
        os._exit(0)


@dataclass
class MutationRun:
    """Settings of one run."""

    target: Target
    harness: Harness
    baseline: Baseline
    jobs: int = 2
    first_kill: bool = False
    seconds: float | None = None
    memory: int = 3 << 30
    #: Time allowed per mutant: ``budget_base + budget_factor * (baseline seconds of its cases)``.
    budget_base: float = 5.0
    budget_factor: float = 20.0
    progress: Callable[[Result], None] | None = None
    #: Hunting: inputs generated per operation, and the time one input may take a mutant.
    hunt_examples: int = 5000
    hunt_input_seconds: float = 3.0


def _selected_cases(mutant: Mutant, baseline: Baseline) -> tuple[int, ...]:
    passing = [i for i, ok in enumerate(baseline.passing) if ok]
    if not mutant.runtime:
        # Import-time code reaches a case only through the module's functions or through a
        # module that imports from it (directly or not).
        users = baseline.users.get(mutant.module, frozenset({mutant.module}))
        chosen = [i for i in passing if users & baseline.lines[i].keys()]
    else:
        wanted = set(mutant.lines)
        chosen = [i for i in passing if wanted & baseline.lines[i].get(mutant.module, frozenset())]
    # Cheap cases first: with --first-kill a mutant dies sooner.
    return tuple(sorted(chosen, key=lambda i: baseline.seconds[i]))


def run_mutants(run: MutationRun, mutants: Sequence[Mutant]) -> list[Result]:
    """Run every mutant in a forked child, ``run.jobs`` at a time; results in mutant order."""
    sources, compiled = compiled_modules(run.target, mutants)
    results: dict[str, Result] = {}
    pending: list[tuple[Mutant, tuple[int, ...]]] = []
    for mutant in mutants:
        cases = _selected_cases(mutant, run.baseline)
        if cases:
            pending.append((mutant, cases))
        else:
            results[mutant.id] = Result(mutant, "survived", note=UNREACHED)

    def finish(result: Result) -> None:
        results[result.mutant.id] = result
        if run.progress:
            run.progress(result)

    def child(task: tuple[Mutant, tuple[int, ...]], out: int) -> None:
        mutant, cases = task
        _child(run, mutant, sources[mutant.module], compiled, cases=cases, out=out)

    def budget(task: tuple[Mutant, tuple[int, ...]]) -> float:
        return run.budget_base + run.budget_factor * sum(run.baseline.seconds[i] for i in task[1])

    def timed_out(task: tuple[Mutant, tuple[int, ...]]) -> None:
        mutant, cases = task
        finish(Result(mutant, "timeout", ran=len(cases), note="over its time budget"))

    not_started = run_forked(
        pending,
        jobs=run.jobs,
        child=child,
        budget=budget,
        done=lambda task, data: finish(_verdict(task[0], task[1], data)),
        timed_out=timed_out,
        stop=time.monotonic() + run.seconds if run.seconds is not None else None,
    )
    for mutant, _ in not_started:
        results[mutant.id] = Result(mutant, "not-run", note="out of time (--seconds)")
    return [results[m.id] for m in mutants]


def _verdict(mutant: Mutant, cases: tuple[int, ...], data: bytes) -> Result:
    try:
        reply = json.loads(data)
    except ValueError:
        # The child died before it could answer (a crash in C, the memory cap): caught.
        return Result(mutant, "killed", ran=len(cases), note="the child crashed")
    failed = tuple(reply["failed"])
    ran = len(cases)
    if reply.get("broken"):
        return Result(mutant, "not-run", note=reply["note"])
    if failed:
        return Result(mutant, "killed", failed, ran, reply["note"])
    return Result(mutant, "survived", (), ran, "no case fails")
