"""Mutation testing of the runner: its own tests against mutants of its modules (``--runner``).

The reference is judged by the suite's cases; the runner is judged by its tests.  The runner's
tests run once, unmutated, with a line tracer (:mod:`.runner_cover`): which test executes which
runner line.  Then one warm process (pytest, the runner and their libraries imported) forks a
child per mutant: the child drops the runner's modules, serves the mutated module to every
import of it, and runs pytest (``-x``) on the passing tests that execute the mutant's lines.  A
mutant is killed when a test fails, its module no longer imports, or the child passes its time
budget; it survives when every selected test passes, or when no test executes it (reported as
such, and scored as a survivor).  A process a test starts (``exec:`` implementations,
``flux-conformance`` run as a command) imports the original runner: mutants are judged through
what runs in the test process.
"""

from __future__ import annotations

import ast
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
import types
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .forked import quiet_child, run_forked
from .operators import Mutant, apply_mutant, enumerate_mutants
from .runner_cover import (
    PACKAGE,
    Coverage,
    Recorder,
    module_name,
    plugins,
    runner_users,
    select,
    sources_key,
)
from .runner_report import as_json, markdown_table, merge, read_runs, text_report

__all__ = ["TESTS", "RunnerResult", "load_coverage", "main", "run_mutants", "runner_mutants"]

ROOT = Path(__file__).resolve().parents[3]
RUNNER = ROOT / "runner"
RUNNER_TESTS = ROOT / "tests" / "runner"
#: The runner's mutants that behave like the original, each with its reason.
RUNNER_EQUIVALENT_FILE = Path(__file__).resolve().parent.with_name("runner_equivalent.yaml")
#: A child's memory cap: a mutant that allocates without end fails in its child.
MEMORY = 3 << 30
#: Left out of every run: the 28,000-glob work count measures the index, not a rule; the
#: verdict of a two-operation implementation over the whole bundled suite takes 40 s a run,
#: for words other tests of the verdicts check on the mini suite.  A mutant only they would
#: kill is reported as a survivor: leaving them out makes no mutant killed.
LEFT_OUT = ("28000", "test_two_operations_get_a_verdict_and_badge_that_say_so")
DESELECT = " and ".join(f"not {name}" for name in LEFT_OUT)

#: Each runner module mutated, with the test files written for it.  Every file listed here
#: is run once under the line tracer; a mutant runs against the tests among all of them that
#: execute its lines.  The areas: engine, comparators, expectations, reports, bounds, adapters.
TESTS: dict[str, tuple[str, ...]] = {
    "engine": ("test_engine.py", "test_verdicts.py", "test_runner_pins.py", "test_classes.py"),
    "bounds": ("test_bounds.py", "test_runner_pins.py"),
    "expectations": ("test_expectations.py", "test_expectations_index.py"),
    "comparators.text": ("test_comparators.py", "test_comparators_text.py"),
    "comparators.shape": ("test_comparators.py", "test_comparators_shape.py"),
    "comparators.rset": ("test_comparators_rset.py", "test_comparators_constraint.py"),
    "comparators.constraint": ("test_comparators_constraint.py",),
    "comparators.validation": ("test_comparators_validation.py",),
    "comparators.hints": ("test_comparators_hints.py",),
    "report.junit": ("test_report_junit.py", "test_runner_pins.py", "test_cli.py"),
    "report.markdown": ("test_report_markdown.py", "test_runner_pins.py", "test_cli.py"),
    "report.jsonl": ("test_report_jsonl.py", "test_runner_pins.py", "test_cli.py"),
    "report.terminal": ("test_report_terminal.py", "test_cli.py", "test_verdict_words.py"),
    "adapters.base": ("test_adapters_base.py", "test_subprocess.py", "test_cli.py"),
    "adapters.inprocess": ("test_adapters_inprocess.py", "test_cli.py", "test_runner_pins.py"),
    "adapters.subprocess": (
        "test_adapters_subprocess.py",
        "test_subprocess.py",
        "test_serve_strictness.py",
        "test_signals.py",
    ),
    "verdicts": ("test_verdicts.py", "test_verdict_words.py"),
    "baseline": ("test_baseline.py", "test_expectations.py"),
    "comparators.allocation": (
        "test_comparators_allocation.py",
        "test_comparators_allocation_figures.py",
    ),
    "comparators.allocation.request": (
        "test_comparators_allocation.py",
        "test_comparators_allocation_request.py",
    ),
    "comparators.allocation.checks": (
        "test_comparators_allocation.py",
        "test_comparators_allocation_checks.py",
    ),
    "comparators.allocation.times": (
        "test_comparators_allocation.py",
        "test_comparators_allocation_times.py",
    ),
    "comparators.allocation.inputs": (
        "test_comparators_allocation.py",
        "test_comparators_allocation_inputs.py",
    ),
    "comparators.allocation.counts": (
        "test_comparators_allocation.py",
        "test_comparators_allocation_counts.py",
    ),
    "comparators.allocation.division": (
        "test_comparators_allocation_division.py",
        "test_comparators_allocation.py",
    ),
    "comparators.allocation.one_rank": (
        "test_comparators_allocation_one_rank.py",
        "test_comparators_allocation_division.py",
        "test_comparators_allocation.py",
    ),
}


@dataclass(frozen=True)
class RunnerResult:
    """What became of one mutant."""

    mutant: Mutant
    killed: bool
    #: "test failed", "broken import", "timeout", "test process died", "survived",
    #: "no test executes it", "equivalent", or "error: ..." (not counted).
    how: str
    seconds: float
    #: How many tests were selected for it, and the first that failed.
    tests: int = 0
    by: str = ""


def _path(short: str) -> Path:
    base = RUNNER.joinpath(*short.split("."))
    return base / "__init__.py" if base.is_dir() else base.with_suffix(".py")


def runner_mutants(modules: Sequence[str]) -> list[Mutant]:
    """Every mutant of the runner ``modules`` (short names: ``engine``, ``report.junit``)."""
    return [m for short in modules for m in enumerate_mutants(short, _path(short).read_text())]


def _sample(mutants: list[Mutant], limit: int | None) -> list[Mutant]:
    if limit is None or len(mutants) <= limit:
        return mutants
    step = len(mutants) / limit
    return [mutants[int(i * step)] for i in range(limit)]


def test_files() -> list[str]:
    """Every test file of :data:`TESTS`, as paths relative to the repository."""
    names = sorted({name for names in TESTS.values() for name in names})
    return [str((RUNNER_TESTS / name).relative_to(ROOT)) for name in names]


def _pytest_args(files: Sequence[str], basetemp: str, *, first_failure: bool) -> list[str]:
    # --assert=plain: no module is rewritten in the child (the libraries pytest would rewrite
    # are imported by the parent already); a failing assert fails its test all the same.
    args = [*files, "-q", "--assert=plain", "-p", "no:cacheprovider", "-p", "no:randomly"]
    args += ["-p", "no:xdist"]
    args += ["-k", DESELECT, f"--basetemp={basetemp}"]
    return [*args, "-x"] if first_failure else args


def _drop_runner() -> None:
    """Forget every runner module and every test module: the child imports them again.

    A test module imported before the fork (the mutation tool's own tests running in one
    pytest process with the runner's) holds the original runner's objects.
    """
    tests, mine = str(ROOT / "tests") + os.sep, str(Path(__file__).parents[1]) + os.sep
    for name, module in list(sys.modules.items()):
        where = getattr(module, "__file__", None) or ""
        test = where.startswith(tests) and not where.startswith(mine)
        if name == PACKAGE or name.startswith(PACKAGE + ".") or test:
            del sys.modules[name]
    parent = sys.modules.get(PACKAGE.rpartition(".")[0])
    if parent is not None and hasattr(parent, "runner"):
        delattr(parent, "runner")


def _send(fd: int, answer: dict[str, Any]) -> None:
    data = json.dumps(answer).encode()
    while data:
        data = data[os.write(fd, data) :]
    os.close(fd)


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves one module from code compiled from its mutated tree."""

    def __init__(self, name: str, path: Path, code: types.CodeType) -> None:
        self.name, self.path, self.code = name, path, code

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        package = self.path.name == "__init__.py"
        spec = importlib.util.spec_from_loader(
            fullname, self, origin=str(self.path), is_package=package
        )
        if spec is not None:
            spec.has_location = True
            if package:
                spec.submodule_search_locations = [str(self.path.parent)]
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        exec(self.code, module.__dict__)  # the module's mutated code


class _Only:
    """A pytest plugin: keeps the selected tests in the given order (the quickest first, so
    that a failing test is met early), notes the first failure and how many ran."""

    def __init__(self, wanted: Sequence[str]) -> None:
        self.wanted = {name: i for i, name in enumerate(wanted)}
        self.failed: list[str] = []
        self.ran = 0

    def pytest_collection_modifyitems(self, config: Any, items: list[Any]) -> None:
        dropped = [item for item in items if item.nodeid not in self.wanted]
        kept = [item for item in items if item.nodeid in self.wanted]
        items[:] = sorted(kept, key=lambda item: self.wanted[item.nodeid])
        if dropped:
            config.hook.pytest_deselected(items=dropped)

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.failed:
            self.failed.append(report.nodeid)
        if report.when == "call":
            self.ran += 1


@dataclass(frozen=True)
class _Task:
    mutant: Mutant
    tests: tuple[str, ...]
    budget: float


def _mutant_child(task: _Task, fd: int) -> None:
    import pytest

    quiet_child(MEMORY)
    _drop_runner()
    mutant = task.mutant
    path = _path(mutant.module)
    name = f"{PACKAGE}.{mutant.module}"
    code = compile(apply_mutant(mutant.module, path.read_text(), mutant.id), str(path), "exec")
    sys.meta_path.insert(0, _Finder(name, path, code))
    try:
        importlib.import_module(name)
    except BaseException as exc:
        _send(fd, {"import": type(exc).__name__})
        os._exit(0)
    # Two sessions: the tests of the module's own files, then the others, so that a mutant
    # its own tests kill costs the collection of those files only.
    own = {str((RUNNER_TESTS / n).relative_to(ROOT)) for n in TESTS[mutant.module]}
    stages = [
        [t for t in task.tests if t.split("::", 1)[0] in own],
        [t for t in task.tests if t.split("::", 1)[0] not in own],
    ]
    status, failed, ran = 0, [], 0
    for stage in [s for s in stages if s]:
        only = _Only(stage)
        files = sorted({t.split("::", 1)[0] for t in stage})
        basetemp = tempfile.mkdtemp(prefix="runner-mutant-")
        try:
            status = int(
                pytest.main(_pytest_args(files, f"{basetemp}/t", first_failure=True), [only])
            )
        finally:
            shutil.rmtree(basetemp, ignore_errors=True)
        failed, ran = only.failed[:1], ran + only.ran
        if status != 0:
            break
    _send(fd, {"exit": status, "failed": failed, "ran": ran})
    os._exit(0)


def _coverage_child(files: Sequence[str], fd: int) -> None:
    import pytest

    quiet_child(MEMORY)
    _drop_runner()
    recorder = Recorder({str(p): m for p, m in _files().items()}, ROOT, fresh=TESTS)
    basetemp = tempfile.mkdtemp(prefix="runner-coverage-")
    try:
        pytest.main(_pytest_args(files, f"{basetemp}/t", first_failure=False), plugins(recorder))
    finally:
        shutil.rmtree(basetemp, ignore_errors=True)
    _send(fd, json.loads(recorder.coverage.to_json()))
    os._exit(0)


def _libraries_child(files: Sequence[str], fd: int) -> None:
    import pytest

    quiet_child(MEMORY)
    _drop_runner()
    basetemp = tempfile.mkdtemp(prefix="runner-collect-")
    try:
        args = _pytest_args(files, f"{basetemp}/t", first_failure=False)
        pytest.main([*args, "--collect-only"])
    finally:
        shutil.rmtree(basetemp, ignore_errors=True)
    root = str(ROOT) + os.sep
    names = [
        name
        for name, module in sys.modules.items()
        if not (getattr(module, "__file__", None) or "").startswith(root) and name != "__main__"
    ]
    _send(fd, {"modules": sorted(names)})
    os._exit(0)


def _forked_once(child: Callable[[Any, int], None], task: Any, seconds: float) -> bytes:
    """What ``child(task, fd)`` answers from one forked process (empty if it gave nothing)."""
    answers: list[bytes] = []
    run_forked(
        [task],
        jobs=1,
        child=child,
        budget=lambda _: seconds,
        done=lambda _, data: answers.append(data),
        timed_out=lambda _: None,
    )
    return answers[0] if answers else b""


def warm_up(files: Sequence[str]) -> int:
    """Import in this process every library that collecting ``files`` imports (but the
    runner's modules and the tests'): each forked child then finds them imported."""
    answer = _forked_once(_libraries_child, files, 600.0)
    names = json.loads(answer)["modules"] if answer else []
    imported = 0
    for name in names:
        try:
            importlib.import_module(name)
            imported += 1
        except Exception:  # a module that imports only under pytest is left to the child
            continue
    return imported


def _files() -> dict[str, str]:
    """The runner's source files, as the tests import them, by module.

    The sources mutated are the checkout's; the tests may import an installed copy of the same
    package (``tox`` installs it, not the checkout), whose files then name the same modules.
    """
    import flux_conformance.runner as imported

    from .runner_cover import runner_files

    files = runner_files(RUNNER)
    for root in imported.__path__:
        if Path(root).resolve() != RUNNER.resolve():
            files.update(runner_files(Path(root)))
    return files


def _shared_key() -> str:
    """A digest of what every test's map depends on: the runner's sources and the files the
    runner's tests share (conftest, support, the fakes)."""
    tests = ROOT / "tests"
    shared = [tests / "conftest.py", tests / "support.py", RUNNER_TESTS / "conftest.py"]
    paths = [*RUNNER.rglob("*.py"), *shared, *(tests / "fakes").glob("*.py")]
    return sources_key(p for p in paths if p.is_file())


def load_coverage(files: Sequence[str], cache: Path | None) -> Coverage:
    """The per-test line map, from ``cache`` as far as it was built from the same sources.

    A test file changed or added since is traced again alone; a change to the runner or to a
    file the tests share traces every file again.
    """
    key = _shared_key()
    digests = {f: sources_key([ROOT / f]) for f in files}
    coverage = Coverage(key=key)
    if cache is not None and cache.is_file():
        found = Coverage.from_json(cache.read_text())
        if found.key == key:
            coverage = found.without(
                {f for f in found.file_keys if digests.get(f) != found.file_keys[f]}
            )
    stale = [f for f in files if coverage.file_keys.get(f) != digests[f]]
    if not stale:
        return coverage
    answer = _forked_once(_coverage_child, stale, 3600.0)
    if not answer:
        raise SystemExit("mutate.py --runner: the coverage run of the runner's tests failed")
    traced = Coverage(**json.loads(answer))
    if not traced.tests:
        raise SystemExit("mutate.py --runner: the coverage run collected no test")
    traced.file_keys = {f: digests[f] for f in stale}
    coverage.add(traced)
    if cache is not None:
        _write_atomic(cache, coverage.to_json())
    return coverage


def _write_atomic(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)
    os.replace(temporary, path)


def _outcome(task: _Task, data: bytes, seconds: float) -> RunnerResult:
    mutant, count = task.mutant, len(task.tests)
    if not data:
        return RunnerResult(mutant, True, "test process died", seconds, count)
    answer = json.loads(data)
    if "import" in answer:
        return RunnerResult(mutant, True, "broken import", seconds, count, answer["import"])
    status, by = answer["exit"], "".join(answer["failed"])
    if status == 0 and answer["ran"]:
        return RunnerResult(mutant, False, "survived", seconds, count)
    if status == 1:
        return RunnerResult(mutant, True, "test failed", seconds, count, by)
    if status in (2, 3):  # collection failed (an import the mutant broke), or pytest crashed
        return RunnerResult(mutant, True, f"pytest exit {status}", seconds, count, by)
    return RunnerResult(mutant, False, f"error: pytest exit {status}", seconds, count)


def run_mutants(
    mutants: Sequence[Mutant],
    coverage: Coverage,
    *,
    jobs: int,
    budget: float,
    stop: float | None = None,
    log: Any = None,
) -> list[RunnerResult]:
    """Each mutant against the tests that execute it, in a forked child each."""
    warm_up(sorted({t.split("::", 1)[0] for t in coverage.tests}))
    users = runner_users(RUNNER)
    trees = {
        module_name(RUNNER, path): ast.parse(path.read_text())
        for path in sorted(RUNNER.rglob("*.py"))
        if path != RUNNER / "__init__.py"
    }
    results: dict[str, RunnerResult] = {}
    tasks: list[_Task] = []
    for mutant in mutants:
        tests = tuple(
            t
            for t in select(mutant, coverage, users, trees)
            if not any(name in t for name in LEFT_OUT)
        )
        if not tests:
            results[mutant.id] = RunnerResult(mutant, False, "no test executes it", 0.0)
            continue
        # The tests written for the module first, then the others, the quickest first in each:
        # a mutant is most often killed by its own module's tests.
        own = {str((RUNNER_TESTS / name).relative_to(ROOT)) for name in TESTS[mutant.module]}
        tests = tuple(
            sorted(tests, key=lambda t: (t.split("::", 1)[0] not in own, coverage.seconds[t]))
        )
        seconds = sum(coverage.seconds[t] for t in tests)
        tasks.append(_Task(mutant, tests, min(budget, 30.0 + 4 * seconds)))
    started: dict[str, float] = {}

    def child(task: _Task, fd: int) -> None:
        _mutant_child(task, fd)

    def record(result: RunnerResult) -> None:
        results[result.mutant.id] = result
        if log is not None:
            print(
                f"{result.how:18} {result.seconds:6.1f} s {result.tests:4} tests  "
                f"{result.mutant.id}",
                file=log,
                flush=True,
            )

    def budget_of(task: _Task) -> float:
        started[task.mutant.id] = time.monotonic()
        return task.budget

    def done(task: _Task, data: bytes) -> None:
        record(_outcome(task, data, time.monotonic() - started[task.mutant.id]))

    def timed_out(task: _Task) -> None:
        seconds = time.monotonic() - started[task.mutant.id]
        record(RunnerResult(task.mutant, True, "timeout", seconds, len(task.tests)))

    run_forked(
        tasks, jobs=jobs, child=child, budget=budget_of, done=done, timed_out=timed_out, stop=stop
    )
    return [results[m.id] for m in mutants if m.id in results]


def _equivalents(mutants: Sequence[Mutant], modules: Sequence[str]) -> Any:
    """The entries of the ``modules`` run, matched to their mutants (another module's entries
    are neither stale nor checked in a run that leaves that module out)."""
    from .equivalents import load_equivalents, match_equivalents

    entries = [e for e in load_equivalents(RUNNER_EQUIVALENT_FILE) if e.target_module in modules]
    return match_equivalents(mutants, entries)


def main(argv: Sequence[str]) -> int:
    """``mutate.py --runner [--module M ...] [--max-mutants N] [--jobs N] [--seconds S]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="mutate.py --runner")
    parser.add_argument("--runner", action="store_true")
    parser.add_argument("--module", action="append", choices=sorted(TESTS))
    parser.add_argument("--max-mutants", type=int, default=None)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--budget", type=float, default=600.0, help="most seconds per mutant")
    parser.add_argument("--seconds", type=float, default=None, help="start none after this")
    parser.add_argument("--list", action="store_true", help="list the mutants, run none")
    parser.add_argument("--entries", action="store_true", help="the equivalents, run none")
    parser.add_argument("--json", type=Path, help="every mutant's fate, as JSON")
    parser.add_argument("--coverage", type=Path, help="cache of the per-test line map")
    parser.add_argument(
        "--merge", type=Path, action="append", help="a recorded run (--json) to combine, run none"
    )
    parser.add_argument(
        "--survivors", type=Path, help="run again only the survivors of a recorded run (--json)"
    )
    args = parser.parse_args(argv)
    if args.merge:
        return _merge(args.merge, args.json)
    modules = args.module or sorted(TESTS)
    if args.survivors is not None:
        recorded = json.loads(args.survivors.read_text())["mutants"]
        alive = {e["id"] for e in recorded if not e["killed"]}
        modules = sorted({e["module"] for e in recorded if e["id"] in alive} & set(modules))
    every = runner_mutants(modules)
    mutants = _sample(every, args.max_mutants)
    if args.survivors is not None:
        mutants = [m for m in mutants if m.id in alive]
    if args.list:
        for m in mutants:
            print(f"{m.id}\n    {m.source}\n    {m.changed}")
        return 0
    matched = _equivalents(every, modules)
    if args.entries:
        for entry, found in matched.covered:
            print(f"{entry.kind:10} {', '.join(m.id for m in found) or 'STALE'}")
        return 1 if matched.stale or matched.ambiguous or matched.duplicates else 0
    os.chdir(ROOT)
    started = time.monotonic()
    cpu = os.times()
    coverage = load_coverage(test_files(), args.coverage)
    print(
        f"{len(mutants)} mutants of {len(modules)} runner modules; {len(coverage.tests)} tests "
        f"mapped in {time.monotonic() - started:.0f} s",
        file=sys.stderr,
    )
    stop = None if args.seconds is None else started + args.seconds
    results = run_mutants(
        mutants, coverage, jobs=max(1, args.jobs), budget=args.budget, stop=stop, log=sys.stderr
    )
    spent = os.times()
    planned = {m: sum(x.module == m for x in mutants) for m in modules}
    data = as_json(
        results,
        wall=time.monotonic() - started,
        cpu=sum(spent[:4]) - sum(cpu[:4]),
        planned=planned,
        listed=matched.by_mutant,
    )
    text = text_report(data)
    wrong = _wrong(data, matched)
    text += "".join(f"\nERROR: {line}" for line in wrong)
    text += f"\nwall {data['wall_seconds']:.0f} s, CPU {data['cpu_seconds']:.0f} s (with children)"
    print(text)
    if args.json is not None:
        _write_atomic(args.json, json.dumps(data, indent=1) + "\n")
    return 1 if wrong else 0


def _wrong(data: dict[str, Any], matched: Any) -> list[str]:
    """A listed mutant that a test kills, a stale, ambiguous or doubly named entry."""
    wrong = [
        f"listed as {matched.by_mutant[e['id']].kind} but killed: {e['id']}"
        for e in data["mutants"]
        if e["killed"] and e["id"] in matched.by_mutant
    ]
    wrong += [f"stale entry of {RUNNER_EQUIVALENT_FILE.name}: {e}" for e in matched.stale]
    wrong += [f"ambiguous entry: {e}" for e, _ in matched.ambiguous]
    wrong += [f"named twice: {m.id}" for m, _ in matched.duplicates]
    return wrong


def _merge(paths: Sequence[Path], out: Path | None) -> int:
    """Combine recorded runs (a later run's fate of a mutant wins) against the current code."""
    runs = read_runs(paths)
    # Every module of TESTS has its row: one that no run measured is "not run", not absent.
    modules = sorted({*TESTS, *(e["module"] for run in runs for e in run["mutants"])})
    every = runner_mutants(modules)
    planned = {m: sum(x.module == m for x in every) for m in modules}
    matched = _equivalents(every, modules)
    current = {m.id: (m.source, m.changed) for m in every}
    data = merge(runs, planned, matched.by_mutant, current)
    wrong = _wrong(data, matched)
    print(markdown_table(data))
    if data["stale"]:
        print(f"left out: {data['stale']} fates of mutants the current code no longer has")
    print(text_report(data) + "".join(f"\nERROR: {line}" for line in wrong))
    if out is not None:
        _write_atomic(out, json.dumps(data, indent=1) + "\n")
    return 1 if wrong else 0
