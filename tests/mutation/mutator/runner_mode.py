"""Mutation testing of the runner: its own tests against mutants of its modules (``--runner``).

The reference is judged by the suite's cases; the runner is judged by its tests.  Each mutant
of a runner module (the same operators as for the reference) runs in a fresh interpreter that
serves the mutated module to every import of it, then runs pytest on the tests that exercise
that module (:data:`TESTS`), stopping at the first failure.  A mutant is killed when a test
fails (or the run passes its time budget), and survives when every test passes.  A child
process a test starts (``exec:`` implementations, ``flux-conformance`` run as a command)
imports the original runner: mutants are judged through what runs in the test process.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from .operators import Mutant, enumerate_mutants

__all__ = ["TESTS", "RunnerResult", "main", "runner_mutants"]

ROOT = Path(__file__).resolve().parents[3]
RUNNER = ROOT / "runner"
RUNNER_TESTS = ROOT / "tests" / "runner"

#: Each runner module mutated, with the tests run against its mutants (fast ones: the
#: subprocess transport's own are the slowest kept).  The issue's areas: engine, comparators,
#: expectations, reports, bounds, adapters.
TESTS: dict[str, tuple[str, ...]] = {
    "engine": ("test_verdicts.py", "test_runner_pins.py", "test_classes.py"),
    "bounds": ("test_bounds.py", "test_runner_pins.py"),
    "expectations": ("test_expectations.py", "test_expectations_index.py"),
    "comparators.text": ("test_comparators.py",),
    "comparators.shape": ("test_comparators.py",),
    "comparators.rset": ("test_comparators.py",),
    "report.junit": ("test_runner_pins.py", "test_cli.py"),
    "report.markdown": ("test_runner_pins.py", "test_cli.py"),
    "report.jsonl": ("test_runner_pins.py", "test_cli.py"),
    "adapters.base": ("test_subprocess.py", "test_cli.py"),
    "adapters.inprocess": ("test_cli.py", "test_runner_pins.py"),
}

# Run in the child: serve the mutated module from code compiled from the mutated tree, then
# run pytest.  argv: module short name, mutant id, pytest arguments...
_CHILD = """
import importlib.abc, importlib.util, sys
# operators.py alone, by path: the mutator package would import the runner before the finder.
spec = importlib.util.spec_from_file_location("_operators", sys.argv.pop(1))
operators = importlib.util.module_from_spec(spec)
sys.modules["_operators"] = operators
spec.loader.exec_module(operators)
apply_mutant = operators.apply_mutant
short, mutant = sys.argv[1], sys.argv[2]
name = "flux_conformance.runner." + short
path = sys.argv[3]
tree = apply_mutant(short, open(path, encoding="utf-8").read(), mutant)
code = compile(tree, path, "exec")

class Loader(importlib.abc.Loader):
    def create_module(self, spec):
        return None
    def exec_module(self, module):
        exec(code, module.__dict__)

class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, target_path=None, target=None):
        if fullname != name:
            return None
        is_package = path.endswith("__init__.py")
        spec = importlib.util.spec_from_loader(fullname, Loader(), origin=path,
                                               is_package=is_package)
        spec.has_location = True
        return spec

sys.meta_path.insert(0, Finder())
import pytest
sys.exit(pytest.main(sys.argv[4:]))
"""


@dataclass(frozen=True)
class RunnerResult:
    """What became of one mutant."""

    mutant: Mutant
    killed: bool
    how: str  # "test failed", "timeout", "survived"
    seconds: float


def _path(short: str) -> Path:
    return RUNNER.joinpath(*short.split(".")).with_suffix(".py")


def runner_mutants(modules: Sequence[str]) -> list[Mutant]:
    """Every mutant of the runner ``modules`` (short names: ``engine``, ``report.junit``)."""
    return [m for short in modules for m in enumerate_mutants(short, _path(short).read_text())]


def _sample(mutants: list[Mutant], limit: int | None) -> list[Mutant]:
    if limit is None or len(mutants) <= limit:
        return mutants
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


def _run_one(mutant: Mutant, budget: float) -> RunnerResult:
    tests = [str(RUNNER_TESTS / name) for name in TESTS[mutant.module]]
    argv = [sys.executable, "-c", _CHILD, str(Path(__file__).with_name("operators.py"))]
    argv += [mutant.module, mutant.id, str(_path(mutant.module))]
    argv += [*tests, "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly"]
    argv += ["-k", "not 28000"]  # the 28,000-glob work count is for the index, not mutants
    started = time.monotonic()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    try:
        done = subprocess.run(
            argv, cwd=ROOT, capture_output=True, timeout=budget, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return RunnerResult(mutant, True, "timeout", time.monotonic() - started)
    seconds = time.monotonic() - started
    if done.returncode == 0:
        return RunnerResult(mutant, False, "survived", seconds)
    if done.returncode in (1,):
        return RunnerResult(mutant, True, "test failed", seconds)
    # 2-5: pytest could not collect or run (the mutant broke an import): killed too.
    return RunnerResult(mutant, True, f"pytest exit {done.returncode}", seconds)


def main(argv: Sequence[str]) -> int:
    """``mutate.py --runner [--module M ...] [--max-mutants N] [--jobs N] [--seconds S]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="mutate.py --runner")
    parser.add_argument("--runner", action="store_true")
    parser.add_argument("--module", action="append", choices=sorted(TESTS))
    parser.add_argument("--max-mutants", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per mutant")
    parser.add_argument("--seconds", type=float, default=None, help="start none after this")
    parser.add_argument("--list", action="store_true", help="list the mutants, run none")
    args = parser.parse_args(argv)
    modules = args.module or sorted(TESTS)
    mutants = _sample(runner_mutants(modules), args.max_mutants)
    if args.list:
        for m in mutants:
            print(f"{m.id}\n    {m.source}\n    {m.changed}")
        return 0
    print(f"{len(mutants)} mutants of {len(modules)} runner modules", file=sys.stderr)
    started = time.monotonic()
    results: list[RunnerResult] = []

    def one(mutant: Mutant) -> RunnerResult | None:
        if args.seconds is not None and time.monotonic() - started > args.seconds:
            return None
        result = _run_one(mutant, args.budget)
        print(f"{result.how:12} {result.seconds:6.1f} s  {mutant.id}", file=sys.stderr)
        return result

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = [r for r in pool.map(one, mutants) if r is not None]
    print(report(results, len(mutants)))
    return 0


def report(results: Sequence[RunnerResult], planned: int) -> str:
    """Per-module scores, then every survivor with its line before and after."""
    lines = [f"{'runner module':22} {'mutants':>8} {'killed':>7} {'score':>7}"]
    for module in sorted({r.mutant.module for r in results}):
        mine = [r for r in results if r.mutant.module == module]
        killed = sum(r.killed for r in mine)
        lines.append(f"{module:22} {len(mine):8} {killed:7} {100 * killed / len(mine):6.1f}%")
    killed = sum(r.killed for r in results)
    total = len(results)
    score = 100 * killed / total if total else 0.0
    lines.append(f"{'all':22} {total:8} {killed:7} {score:6.1f}%  ({planned - total} not run)")
    for r in results:
        if not r.killed:
            lines += [
                f"survived: {r.mutant.id}",
                f"    {r.mutant.source}",
                f"    {r.mutant.changed}",
            ]
    return "\n".join(lines)
