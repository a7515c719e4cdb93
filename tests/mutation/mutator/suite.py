"""What the mutants run against: the package mutated, the suite as a harness, and the
baseline (per case: passes unmutated?, time, lines executed) recorded with a line tracer."""

from __future__ import annotations

import ast
import sys
import time
import types
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "Baseline",
    "Harness",
    "OriginalReference",
    "SuiteHarness",
    "Target",
    "module_users",
    "record_coverage",
]


class Harness(Protocol):
    """A suite the mutants run against.  ``execute`` is what the line tracer watches."""

    names: Sequence[str]

    def execute(self, index: int) -> Any:
        """Run case ``index`` against whatever modules are imported now; return its reply."""
        ...

    def passes(self, index: int, reply: Any) -> bool:
        """Whether ``reply`` is what case ``index`` permits."""
        ...


class SuiteHarness:
    """The conformance suite through the in-process reference adapter and the engine's judge.

    The oracle comparators consult is the reference as imported when the harness is made:
    those functions keep their own module globals, so a mutant installed later cannot fool
    the comparison that judges it.
    """

    def __init__(self, cases: Sequence[Any], operations: Mapping[str, Any]) -> None:
        from flux_conformance.reference.errors import FormatError
        from flux_conformance.reference.operations import run

        self.cases = list(cases)
        self.names: Sequence[str] = [c.id for c in self.cases]
        self.operations = operations
        from flux_conformance.runner.adapters.inprocess import InProcessAdapter
        from flux_conformance.runner.comparators import Oracle

        #: The unmutated reference's entry point and error base (kept across the fork).
        self.original_run = run
        self.error_class: type[Exception] = FormatError
        adapter = InProcessAdapter(OriginalReference(run, FormatError))
        self.oracles = {edition: Oracle(adapter, edition) for edition in (None, "seed", "upstream")}

    def execute(self, index: int) -> Any:
        """The reply of the reference imported now (mutated, in a child) to case ``index``."""
        from flux_conformance.runner.adapters.inprocess import (
            InProcessAdapter,
            ReferenceImplementation,
        )

        case = self.cases[index]
        adapter = InProcessAdapter(ReferenceImplementation())
        return adapter.run(case.operation, case.input, edition=case.edition)

    def passes(self, index: int, reply: Any) -> bool:
        """The engine's verdict on ``reply``, judged with the original reference as oracle."""
        from flux_conformance.runner.engine import Outcome, judge

        case = self.cases[index]
        oracle = self.oracles[case.edition]
        result = judge(case, reply, self.operations[case.operation], oracle)
        return result.outcome is Outcome.PASSED


@dataclass
class Baseline:
    """Per case: whether it passes unmutated, its time, and the lines it executed."""

    passing: list[bool]
    seconds: list[float]
    lines: list[dict[str, frozenset[int]]]
    #: Per module: itself and every module that imports it, directly or through others.
    users: dict[str, frozenset[str]] = field(default_factory=dict)


def module_users(target: Target) -> dict[str, frozenset[str]]:
    """For each module of ``target``: itself and the modules that import it, transitively."""
    every = sorted(p.stem for p in target.directory.glob("*.py"))
    imports: dict[str, set[str]] = {}
    for module in every:
        found = imports.setdefault(module, set())
        for node in ast.walk(ast.parse(target.path(module).read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                name = node.module
                if name == target.package:
                    found.update(a.name for a in node.names)
                elif name.startswith(target.package + "."):
                    found.add(name.removeprefix(target.package + "."))
            elif isinstance(node, ast.Import):
                found.update(
                    a.name.removeprefix(target.package + ".")
                    for a in node.names
                    if a.name.startswith(target.package + ".")
                )
    users = {m: {m} for m in every}
    changed = True
    while changed:
        changed = False
        for module, used in imports.items():
            for dependency in used & users.keys():
                before = len(users[dependency])
                users[dependency] |= users[module]
                changed |= len(users[dependency]) != before
    return {m: frozenset(u) for m, u in users.items()}


def record_coverage(harness: Harness, files: Mapping[str, str]) -> Baseline:
    """Run every case once with a line tracer on ``files`` (path -> module name)."""
    passing: list[bool] = []
    seconds: list[float] = []
    covered: list[dict[str, frozenset[int]]] = []
    for index in range(len(harness.names)):
        hits: dict[str, set[int]] = {}

        def local(
            frame: types.FrameType, event: str, arg: Any, hits: dict[str, set[int]] = hits
        ) -> Any:
            if event == "line":
                hits[files[frame.f_code.co_filename]].add(frame.f_lineno)
            return local

        def tracer(
            frame: types.FrameType,
            event: str,
            arg: Any,
            hits: dict[str, set[int]] = hits,
            local: Any = local,
        ) -> Any:
            name = files.get(frame.f_code.co_filename)
            if name is None:
                return None
            hits.setdefault(name, set()).add(frame.f_lineno)
            return local

        sys.settrace(tracer)
        try:
            reply = harness.execute(index)
        finally:
            sys.settrace(None)
        start = time.perf_counter()
        reply = harness.execute(index)
        seconds.append(time.perf_counter() - start)
        passing.append(harness.passes(index, reply))
        covered.append({k: frozenset(v) for k, v in hits.items()})
    return Baseline(passing, seconds, covered)


@dataclass(frozen=True)
class Target:
    """The package whose modules are mutated."""

    package: str
    directory: Path
    modules: tuple[str, ...]
    #: Modules left as they are in the child (the error classes every caller catches).
    keep: tuple[str, ...] = ()
    #: Modules imported in the child before any case runs (the entry points).
    entry: tuple[str, ...] = ()

    def path(self, module: str) -> Path:
        """The source file of ``module``."""
        return self.directory / f"{module}.py"

    def qualified(self, module: str) -> str:
        """``package.module``."""
        return f"{self.package}.{module}"


class OriginalReference:
    """The unmutated reference, through functions captured in the parent before any fork."""

    name = "reference"

    def __init__(self, run: Callable[..., Any], error: type[Exception]) -> None:
        self._run = run
        self._error = error

    def run(self, operation: str, input: Any, /, **options: Any) -> Any:
        try:
            return {"output": self._run(operation, input, edition=options.get("edition"))}
        except self._error as exc:
            return {"error": {"category": getattr(exc, "category", ""), "message": str(exc)}}
